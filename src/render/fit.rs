//! Display widths: a column is counted in terminal cells, not characters.
//! A wide (CJK, fullwidth) character takes two cells, a combining mark
//! none. Names are shown escaped (`model::tree::text`), so no control character
//! is left to measure.
//!
//! The unit of both a width and a cut is the grapheme cluster (what the
//! terminal draws as one: a letter and its accents, an emoji and its skin
//! tone, a flag's two regional indicators), counted as ratatui's buffer
//! gives it cells ([`cluster_width`]): what cgtop pads and cuts to is what
//! the view draws, and no cut splits a cluster.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Display columns of `s`: the sum of its grapheme clusters' cells
/// ([`cluster_width`]), as the cuts below count them and as ratatui's
/// buffer lays the text out. Not unicode-width's width of the whole
/// string, which joins clusters into ligatures: lam and alef side by side
/// count one column there, while each takes its own cell (a name of them
/// was padded short of its cells and pushed the columns after it off the
/// row).
pub fn width(s: &str) -> usize {
    s.graphemes(true).map(cluster_width).sum()
}

/// The cells of one grapheme cluster, as ratatui 0.30 counts them
/// (`CellWidth for str`) where it lays text out cluster by cluster, in a
/// paragraph (every view's rows) and the buffer: a cluster holding a
/// control character is not drawn (none), one byte takes one cell, and
/// any other cluster takes unicode-width's width of the cluster (`👍🏽`
/// and `🇫🇷` two, not four and two ones' sum; `é` as `e` and U+0301 one)
/// and one more for each halfwidth (semi-)voiced sound mark (U+FF9E,
/// U+FF9F), which ratatui counts on top.
pub fn cluster_width(g: &str) -> usize {
    if g.contains(char::is_control) {
        return 0;
    }
    if g.len() == 1 {
        return 1;
    }
    let marks = g
        .chars()
        .filter(|c| matches!(c, '\u{ff9e}' | '\u{ff9f}'))
        .count();
    UnicodeWidthStr::width(g) + marks
}

/// `s`'s grapheme clusters with their cells.
pub fn clusters(s: &str) -> impl DoubleEndedIterator<Item = (&str, usize)> {
    s.graphemes(true).map(|g| (g, cluster_width(g)))
}

/// The bytes of the escape that starts `rest` (a `\\`), as the names'
/// table writes them (`model::tree::text`): `\e`, `\\`, `\ ` and the
/// other one-letter ones, `\xHH`, `\u{HHHH}`; 1 for a backslash that
/// starts none.
fn escape_len(rest: &[u8]) -> usize {
    match rest {
        [b'\\', b'a' | b'b' | b't' | b'n' | b'v' | b'f' | b'r' | b'e' | b'\\' | b' ', ..] => 2,
        [b'\\', b'x', h, l, ..] if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => 4,
        [b'\\', b'u', b'{', tail @ ..] => {
            let hex = tail.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            if hex > 0 && tail.get(hex) == Some(&b'}') {
                3 + hex + 1
            } else {
                1
            }
        }
        _ => 1,
    }
}

/// `s`'s units of a cut, with their cells: its grapheme clusters, but an
/// escape (`\e`, `\\`, `\x9b`, `\u{202e}`) as one. Names reach a cut
/// escaped, and a cut inside an escape left text that reads as another
/// one: `a\\ebc` (a backslash and an `e`) cut from the left read
/// `…\ebc`, an ESC the name does not hold.
fn units(s: &str) -> Vec<(&str, usize)> {
    // each unit's start, end and cells
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    // the end of the escape the last unit gathers
    let mut until = 0;
    for (i, g) in s.grapheme_indices(true) {
        let w = cluster_width(g);
        match spans.last_mut() {
            Some(last) if i < until => {
                last.1 = i + g.len();
                last.2 += w;
            }
            _ => {
                if g == "\\" {
                    until = i + escape_len(&s.as_bytes()[i..]);
                }
                spans.push((i, i + g.len(), w));
            }
        }
    }
    spans.into_iter().map(|(a, b, w)| (&s[a..b], w)).collect()
}

/// `s` padded with spaces to `w` display columns (`format!("{s:<w$}")`
/// counts characters, and a wide name would push the columns after it).
pub fn pad(s: &str, w: usize) -> String {
    let mut t = s.to_owned();
    t.extend(std::iter::repeat_n(' ', w.saturating_sub(width(s))));
    t
}

/// Truncates from the left to `w` display columns, keeping the end of a
/// path (the group's own name) in view; whole grapheme clusters only.
pub fn fit_left(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    if w == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut tail: Vec<&str> = Vec::new();
    for (g, gw) in units(s).into_iter().rev() {
        if used + gw > w {
            break;
        }
        used += gw;
        tail.push(g);
    }
    let mut t = String::from("…");
    t.extend(tail.into_iter().rev());
    t
}

/// Truncates to `w` display columns, ending with '…' when cut; whole
/// grapheme clusters only.
pub fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    if w == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut t = String::new();
    for (g, gw) in units(s) {
        if used + gw > w {
            break;
        }
        used += gw;
        t.push_str(g);
    }
    t.push('…');
    t
}

/// A group path in `w` display columns, as a row of a view that starts
/// at the group `start` (its path as shown; `/` for the whole tree), never
/// cut in the middle of a component where a whole one can go instead.
///
/// A user names everything below their delegated group, so a path's end
/// alone (`…/system.slice/x`) could read as another group of that name:
/// the first component below `start` (the head) says whose subtree the
/// row is in, and every path cut that has a head keeps it, or at least
/// its beginning. In order, the first that fits:
/// - the start and the head whole, where they take at most a third of
///   the room, then whole components from the right
///   (`/start/user/…/system.slice/x`; from the root, the head alone:
///   `/user.slice/…/system.slice/x`);
/// - the start, the same on every row, as `…`, the head whole where it
///   takes at most half the room, then whole components
///   (`…/user/…/system.slice/x`);
/// - the head's beginning (at least 3 cells of it, `…` included) in what
///   whole components leave (`/system.sl…/postgresql.service`);
/// - the head whole in half the room, or its beginning in a third, and
///   the end of the last component (`…/user/…way.service`).
///
/// Two paths whose heads differ in what is shown of them never read the
/// same. The start itself is cut as from the root (it starts with `/`,
/// every row below it with `…/` or the start whole); a group just below
/// it shows as `…/` and its own name (`…/b.service`), never with the
/// start's last component, which could read as another row's head; a
/// group of the first level from the root loses components from the
/// left ([`fit_tail`]).
pub fn fit_path(s: &str, w: usize, start: &str) -> String {
    if fits(s, w) {
        return s.to_owned();
    }
    // the start's own text, where `s` is a group below it
    let base = s
        .strip_prefix(start)
        .filter(|below| start.len() > 1 && below.starts_with('/'))
        .map_or("", |_| start);
    let below = &s[base.len()..];
    let Some((head, rest)) = split_head(below) else {
        if base.is_empty() {
            return fit_tail(s, w);
        }
        // a group just below the start: the start, the same on every
        // row, as `…` and the group's own name, its end where it is too
        // wide (cut from the left at a '/', the start's last component
        // would read as the head of a row further down:
        // `…/user-1000.slice/session-3.scope`)
        return fit_left(&format!("…{below}"), w);
    };
    let name = &head[1..];
    let elided = if base.is_empty() { "" } else { "…" };
    // the start and the head whole in a third, then the head whole in half
    let mut whole = vec![(format!("{base}{head}"), 3), (format!("{elided}{head}"), 2)];
    if base.is_empty() {
        whole.remove(0);
    }
    for (kept, share) in whole {
        if (width(&kept) + 2) * share <= w {
            if let Some(t) = whole_tail(&kept, rest, w) {
                return t;
            }
        }
    }
    // the head's beginning (3 cells at least) in what whole components
    // leave
    if let Some(tail) = shown_tail(rest, w.saturating_sub(width(elided) + 1 + 3)) {
        let room = w - width(elided) - 1 - width(&tail);
        return format!("{elided}/{}{tail}", fit(name, room));
    }
    // narrow: the end of the last component
    let before = width(elided) + 1;
    let room = if before + width(name) <= w / 2 {
        width(name)
    } else {
        (w / 3).saturating_sub(width(elided) + 1).max(2)
    };
    let kept = format!("{elided}/{}", fit(name, room));
    if width(&kept) + 2 > w {
        return fit_tail(s, w);
    }
    with_head(&kept, rest, w - width(&kept) - 2)
}

/// `kept` and the longest tail of `rest` ([`shown_tail`]) within `w`.
fn whole_tail(kept: &str, rest: &str, w: usize) -> Option<String> {
    let room = w.checked_sub(width(kept))?;
    shown_tail(rest, room).map(|t| format!("{kept}{t}"))
}

/// The longest tail of `rest` (a path from a '/') in `room` columns:
/// `rest` itself, or `/…` and the most whole components from the right.
fn shown_tail(rest: &str, room: usize) -> Option<String> {
    if fits(rest, room) {
        return Some(rest.to_owned());
    }
    let i = tail_within(rest, room.checked_sub(width("/…"))?)?;
    Some(format!("/…{}", &rest[i..]))
}

/// Whether `s` takes at most `w` columns, read only as far as that
/// tells.
fn fits(s: &str, w: usize) -> bool {
    let mut used = 0;
    clusters(s).all(|(_, cw)| {
        used += cw;
        used <= w
    })
}

/// Where the longest tail of `s` that starts at a '/' after its first
/// character and takes at most `room` columns begins. Read from the
/// right: a path of ten thousand components costs what its tail does.
fn tail_within(s: &str, room: usize) -> Option<usize> {
    let mut used = 0;
    let mut best = None;
    for (i, g) in s.grapheme_indices(true).rev() {
        used += cluster_width(g);
        if used > room {
            break;
        }
        if g == "/" && i > 0 {
            best = Some(i);
        }
    }
    best
}

/// `below` (a path from its first '/') as its first component (`/h`) and
/// the rest (from the next '/', not empty).
fn split_head(below: &str) -> Option<(&str, &str)> {
    if !below.starts_with('/') {
        return None;
    }
    let j = below[1..].find('/')? + 1;
    let (head, rest) = below.split_at(j);
    (head.len() > 1 && rest.len() > 1).then_some((head, rest))
}

/// `s` cut from the left at a '/' (`…/b.service/x`), keeping as many
/// whole components as fit; a last component wider than `w` keeps its
/// end ([`fit_left`]). For a path with no head to keep (a mount point, a
/// view's start).
pub fn fit_tail(s: &str, w: usize) -> String {
    if fits(s, w) {
        return s.to_owned();
    }
    // each '/' after the first character starts a shorter tail
    match tail_within(s, w.saturating_sub(1)) {
        Some(i) => format!("…{}", &s[i..]),
        None => fit_left(s, w),
    }
}

/// `head/…` and as much of `rest` (which starts with '/') as `room`
/// columns take: whole components from the right, else the end of the
/// last one.
fn with_head(head: &str, rest: &str, room: usize) -> String {
    if let Some(i) = tail_within(rest, room) {
        return format!("{head}/…{}", &rest[i..]);
    }
    let last = rest.rsplit('/').next().unwrap_or(rest);
    let mut used = 0;
    let mut end: Vec<&str> = Vec::new();
    for (g, gw) in units(last).into_iter().rev() {
        if used + gw > room {
            break;
        }
        used += gw;
        end.push(g);
    }
    let mut t = format!("{head}/…");
    t.extend(end.into_iter().rev());
    t
}

/// Pieces of one line (text and a style of the caller's) cut to `w`
/// display columns, ending with '…' where cut: the one rule of every
/// header and status line that does not fit.
pub fn fit_pieces<T: Clone>(pieces: &[(String, T)], w: usize) -> Vec<(String, T)> {
    let total: usize = pieces.iter().map(|(s, _)| width(s)).sum();
    if total <= w {
        return pieces.to_vec();
    }
    let mut out = Vec::new();
    let mut used = 0;
    for (s, style) in pieces {
        let sw = width(s);
        // this piece and the ellipsis still fit: keep it whole
        if used + sw < w {
            out.push((s.clone(), style.clone()));
            used += sw;
            continue;
        }
        // the rest of the room, ellipsis included; trailing blanks go
        let room = w - used;
        let mut head = String::new();
        let mut hw = 0;
        for (g, gw) in units(s) {
            if hw + gw + 1 > room {
                break;
            }
            hw += gw;
            head.push_str(g);
        }
        let cut = format!("{}…", head.trim_end());
        if cut == "…" {
            if let Some((prev, _)) = out.last_mut() {
                let kept = prev.trim_end().len();
                prev.truncate(kept);
            }
        }
        out.push((cut, style.clone()));
        break;
    }
    out
}

/// Words of `s` in lines of at most `w` display columns, each after
/// `indent` (counted in the width); a word longer than a line is cut
/// with [`fit`]. For prose in a pane that does not wrap by itself.
pub fn wrap(s: &str, w: usize, indent: &str) -> Vec<String> {
    let room = w.saturating_sub(width(indent)).max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let word = fit(word, room);
        if !line.is_empty() && width(&line) + 1 + width(&word) > room {
            out.push(format!("{indent}{line}"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        out.push(format!("{indent}{line}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_an_escape() {
        // a backslash and an `e` (`\\e` shown) cut from the left: not
        // `…\ebc`, which reads as an ESC
        assert_eq!(fit_left("a\\\\ebc", 5), "…ebc");
        assert_eq!(fit_left("\\e\\e\\e", 4), "…\\e");
        // from the right: an escape whole or not at all
        assert_eq!(fit("x\\u{202e}evil", 6), "x…");
        assert_eq!(fit("ab\\x9bcd", 5), "ab…");
        assert_eq!(fit("ab\\x9bcd", 7), "ab\\x9b…");
        // systemd's own `\\x2d` (`-`, no escape of ours) stays whole too
        assert_eq!(fit_left("a\\x2dgetty", 8), "…getty");
        assert_eq!(fit("system-serial\\x2dgetty.slice", 17), "system-serial…");
        // a backslash that starts nothing is one cell, as before
        assert_eq!(fit_left("ab\\qrs", 5), "…\\qrs");
    }

    #[test]
    fn widths_are_display_columns() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab");
        // display columns, not characters: a fullwidth letter takes two
        assert_eq!(fit("\u{ff37}\u{ff37}\u{ff37}", 4), "\u{ff37}…");
        assert_eq!(width(&fit("\u{ff37}\u{ff37}\u{ff37}", 5)), 5);
        assert_eq!(fit_left("ab\u{ff37}\u{ff37}", 4), "…\u{ff37}");
        assert_eq!(width(&pad("\u{ff37}", 4)), 4);
    }

    #[test]
    fn a_path_without_a_head_loses_whole_components_from_the_left() {
        assert_eq!(fit_path("/newc-18771-1", 13, "/"), "/newc-18771-1");
        assert_eq!(fit_tail("/a.slice/newc-18771-1", 14), "…/newc-18771-1");
        assert_eq!(fit_tail("/a/b/c/leaf", 8), "…/c/leaf");
        // the last component alone is wider: its end shows
        assert_eq!(fit_tail("/a/abcdefgh", 5), "…efgh");
        assert_eq!(fit_path("/abcdefgh", 5, "/"), "…efgh");
        // the start group keeps its own first component; a group just
        // below it has no head to keep
        assert_eq!(fit_path("/s/t/u", 5, "/s/t/u"), "/s/…u");
        assert_eq!(
            fit_path("/start/newc-18771-1", 15, "/start"),
            "…/newc-18771-1"
        );
    }

    #[test]
    fn a_path_keeps_its_first_component_where_it_has_room() {
        let sys = "/system.slice/sshd.service";
        let users =
            "/user.slice/user-1000.slice/user@1000.service/app.slice/system.slice/sshd.service";
        assert_eq!(fit_path(sys, 40, "/"), sys);
        assert_eq!(
            fit_path(users, 40, "/"),
            "/user.slice/…/system.slice/sshd.service"
        );
        // a last component too wide beside the head keeps its end
        let svc = format!("{}.service", "gateway-".repeat(12));
        let (a, b) = (
            format!("/system.slice/{svc}"),
            format!("/user.slice/x/system.slice/{svc}"),
        );
        let (fa, fb) = (fit_path(&a, 60, "/"), fit_path(&b, 60, "/"));
        assert!(
            fa.starts_with("/system.slice/…") && fa.ends_with(".service"),
            "{fa}"
        );
        assert!(
            fb.starts_with("/user.slice/…") && fb.ends_with(".service"),
            "{fb}"
        );
        assert!(width(&fa) <= 60 && width(&fb) <= 60);
        assert_ne!(fa, fb);
        // a head wider than half the room keeps its beginning
        assert_eq!(
            fit_path("/a-very-long-slice-name/b/leaf", 20, "/"),
            "/a-very-long…/b/leaf"
        );
        assert_eq!(fit_path("/a/b/c/leaf", 8, "/"), "/a/…leaf");
    }

    #[test]
    fn a_path_below_a_start_group_keeps_its_first_component_below_it() {
        let start = "/cgtop-test-9146-1";
        let svc = "payments-gateway-payments-gateway.service";
        let real = format!("{start}/system.slice/{svc}");
        let fake =
            format!("{start}/user/user-1000.slice/user@1000.service/app.slice/system.slice/{svc}");
        // the start and the head whole where they take a third
        assert_eq!(
            fit_path(&fake, 100, start),
            format!("{start}/user/…/app.slice/system.slice/{svc}")
        );
        // else the start is `…`, the same on every row
        assert_eq!(fit_path(&fake, 60, start), format!("…/user/…/{svc}"));
        assert_eq!(fit_path(&real, 60, start), format!("…/system.slice/{svc}"));
        assert_eq!(
            fit_path(&real, 35, start),
            "…/system.slice/…nts-gateway.service"
        );
        assert_eq!(
            fit_path(&fake, 35, start),
            "…/user/…ay-payments-gateway.service"
        );
        // a head too wide for half the room: its beginning in a third
        // the start, and a path outside it, keep their own first component
        assert_eq!(fit_path(start, 10, start), "…st-9146-1");
        assert_eq!(
            fit_path("/system.slice/xyz/sshd.service", 28, start),
            "/system.sl…/xyz/sshd.service"
        );
        // a start that is a prefix of a name but not of the path
        assert_eq!(
            fit_path("/cgtop-test-9146-10/a/b/leaf", 20, start),
            "/cgtop-tes…/a/b/leaf"
        );
    }

    #[test]
    fn look_alikes_below_a_start_never_read_the_same() {
        let svc = "payments-gateway-payments-gateway.service";
        let long = format!("{}.service", "payments-gateway-".repeat(6));
        for start in [
            "/",
            "/s",
            "/cgtop-test-9146-1",
            "/a.slice/b.slice/c.service",
        ] {
            let base = start.trim_end_matches('/');
            for name in [svc, long.as_str()] {
                let real = format!("{base}/system.slice/{name}");
                let fake = format!(
                    "{base}/user/user-1000.slice/user@1000.service/app.slice/system.slice/{name}"
                );
                let other = format!("{base}/user.slice/system.slice/{name}");
                for w in 10..=width(&fake) + 1 {
                    let (r, f, o) = (
                        fit_path(&real, w, start),
                        fit_path(&fake, w, start),
                        fit_path(&other, w, start),
                    );
                    for x in [&r, &f, &o] {
                        assert!(width(x) <= w, "{w}: {x}");
                    }
                    assert_ne!(r, f, "{start} {w}");
                    assert_ne!(r, o, "{start} {w}");
                    // the group's own name: at least its last characters
                    assert!(f.ends_with("ice"), "{start} {w}: {f}");
                }
            }
        }
    }

    #[test]
    fn a_group_just_below_the_start_never_reads_as_a_deeper_one() {
        // the start's last component, kept by a cut from the left, would
        // read as the head of a deeper row of the same name
        let start = "/user.slice/user-1000.slice";
        let child = format!("{start}/session-3.scope");
        let deeper = format!("{start}/user-1000.slice/session-3.scope");
        let mut seen_child = false;
        for w in 10..=width(&deeper) + 1 {
            let (c, d, s) = (
                fit_path(&child, w, start),
                fit_path(&deeper, w, start),
                fit_path(start, w, start),
            );
            for x in [&c, &d, &s] {
                assert!(width(x) <= w, "{w}: {x}");
            }
            assert_ne!(c, d, "{w}");
            assert_ne!(c, s, "{w}");
            assert_ne!(d, s, "{w}");
            seen_child |= c == "…/session-3.scope";
            // the start's own row, cut as from the root: `/us…/…0.slice`
            assert!(s.starts_with("/u"), "{w}: {s}");
        }
        assert!(seen_child);
        assert_eq!(fit_path(&child, 10, start), "…n-3.scope");
    }

    #[test]
    fn a_deep_path_is_cut_from_its_ends() {
        // 40 KB of path: read from its two ends, not tail by tail (a
        // quadratic walk took seconds a row)
        let deep = format!("/s/user{}/leaf.service", "/d".repeat(20_000));
        for w in [8, 20, 36, 96] {
            let f = fit_path(&deep, w, "/s");
            assert!(width(&f) <= w, "{w}: {f}");
            assert!(
                f.starts_with("…/u") || f.starts_with("/s/user/…"),
                "{w}: {f}"
            );
        }
        assert_eq!(
            fit_path(&deep, 36, "/s"),
            "/s/user/…/d/d/d/d/d/d/d/leaf.service"
        );
        assert_eq!(fit_tail(&deep, 20), "…/d/d/d/leaf.service");
    }

    #[test]
    fn pieces_are_cut_with_an_ellipsis() {
        let p =
            |v: &[&str]| -> Vec<(String, u8)> { v.iter().map(|s| ((*s).to_owned(), 0)).collect() };
        let texts =
            |v: Vec<(String, u8)>| v.into_iter().map(|(s, _)| s).collect::<Vec<_>>().concat();
        assert_eq!(texts(fit_pieces(&p(&["ab", "cd"]), 4)), "abcd");
        assert_eq!(texts(fit_pieces(&p(&["ab", "cdef"]), 4)), "abc…");
        assert_eq!(texts(fit_pieces(&p(&["abcd", "ef"]), 4)), "abc…");
        // no blank before the ellipsis
        assert_eq!(texts(fit_pieces(&p(&["ab  ", "PAUSED"]), 5)), "ab…");
        assert!(
            fit_pieces(&p(&["ab", "cd"]), 3)
                .iter()
                .map(|(s, _)| width(s))
                .sum::<usize>()
                <= 3
        );
    }

    #[test]
    fn a_cut_or_padded_name_takes_its_columns_in_cells() {
        // lam then alef: two cells, one column for unicode-width's whole string
        let s = format!("/w.slice/{}", "\u{644}\u{627}".repeat(40));
        let cells = |t: &str| {
            t.chars()
                .map(|c| unicode_width::UnicodeWidthChar::width(c).unwrap_or(0))
                .sum::<usize>()
        };
        for w in [10, 35, 60, 100] {
            let f = fit_path(&s, w, "/");
            assert!(cells(&f) <= w, "{w}: {f}");
            assert_eq!(cells(&pad(&f, w)), w, "{w}: {f}");
            assert!(cells(&fit(&s, w)) <= w);
            assert!(cells(&fit_left(&s, w)) <= w);
        }
    }

    #[test]
    fn a_grapheme_cluster_is_counted_as_the_cells_it_is_drawn_in() {
        // an emoji with its skin tone, a flag: one cluster of two cells
        assert_eq!(width("\u{1f44d}\u{1f3fd}"), 2);
        assert_eq!(width("\u{1f1eb}\u{1f1f7}"), 2);
        assert_eq!(width("\u{1f1eb}\u{1f1f7}\u{1f1e9}\u{1f1ea}"), 4);
        // a letter with its accent, a Hangul syllable of jamo: one cluster
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("\u{1100}\u{1161}\u{11a8}"), 2);
        // lam and alef: two clusters, a cell each (not a ligature's one)
        assert_eq!(width("\u{644}\u{627}"), 2);
        // as ratatui: the halfwidth voiced mark one more, a control none
        assert_eq!(width("\u{ff76}\u{ff9e}"), 3);
        assert_eq!(width("a\r\nb"), 2);
    }

    #[test]
    fn a_cut_never_splits_a_grapheme_cluster() {
        let thumb = "\u{1f44d}\u{1f3fd}";
        let flag = "\u{1f1eb}\u{1f1f7}";
        let accent = "e\u{301}";
        // the skin tone stays with its emoji, the second regional
        // indicator with the first, the accent with its letter
        assert_eq!(fit(&format!("{thumb}{thumb}x"), 3), format!("{thumb}…"));
        assert_eq!(fit(&format!("{flag}{flag}x"), 4), format!("{flag}…"));
        assert_eq!(fit(&format!("{flag}{flag}x"), 2), "…");
        assert_eq!(fit_left(&format!("ab{accent}"), 1), "…");
        assert_eq!(fit_left(&format!("x{flag}{thumb}"), 4), format!("…{thumb}"));
        assert_eq!(
            fit_tail(&format!("/a/{thumb}{thumb}{thumb}"), 5),
            format!("…{thumb}{thumb}")
        );
        assert_eq!(
            fit_path(&format!("/a/{thumb}{thumb}{thumb}"), 8, "/"),
            format!("/a/…{thumb}{thumb}")
        );
        let p = vec![("ab".to_owned(), 0u8), (format!("{thumb}{thumb}"), 1)];
        let cut: String = fit_pieces(&p, 5).into_iter().map(|(s, _)| s).collect();
        assert_eq!(cut, format!("ab{thumb}…"));
        // every cut of every width: whole clusters, within the width
        let s = format!("a{thumb}{accent}\u{65e5}{flag}\u{644}\u{627}{thumb}b");
        let bounds: Vec<usize> = s.grapheme_indices(true).map(|(i, _)| i).collect();
        for w in 0..=width(&s) + 1 {
            for cut in [fit(&s, w), fit_left(&s, w)] {
                assert!(width(&cut) <= w, "{w}: {cut}");
                let body = cut.trim_start_matches('…').trim_end_matches('…');
                let at = s.find(body).unwrap();
                assert!(bounds.contains(&at) || at == s.len(), "{w}: {cut}");
                assert!(
                    bounds.contains(&(at + body.len())) || at + body.len() == s.len(),
                    "{w}: {cut}"
                );
            }
        }
    }

    #[test]
    fn nothing_fits_in_no_columns() {
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit_left("abc", 0), "");
        assert_eq!(fit_left("/a.slice/b.service", 10), "…b.service");
    }
}
