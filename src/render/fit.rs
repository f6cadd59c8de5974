//! Display widths: a column is counted in terminal cells, not characters.
//! A wide (CJK, fullwidth) character takes two cells, a combining mark
//! none. Names are shown escaped (`model::tree::text`), so no control character
//! is left to measure.

/// Display columns of `s`: the sum of its characters' columns, as the
/// cuts below count them and as the terminal gives each character its
/// cell (unicode-width's width of a whole string counts lam and alef
/// side by side as one column, a ligature: a name of them was padded
/// short of its cells and pushed the columns after it off the row).
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `s` padded with spaces to `w` display columns (`format!("{s:<w$}")`
/// counts characters, and a wide name would push the columns after it).
pub fn pad(s: &str, w: usize) -> String {
    let mut t = s.to_owned();
    t.extend(std::iter::repeat_n(' ', w.saturating_sub(width(s))));
    t
}

/// Truncates from the left to `w` display columns, keeping the end of a
/// path (the group's own name) in view.
pub fn fit_left(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    if w == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut tail: Vec<char> = Vec::new();
    for c in s.chars().rev() {
        if used + char_width(c) > w {
            break;
        }
        used += char_width(c);
        tail.push(c);
    }
    let mut t = String::from("…");
    t.extend(tail.into_iter().rev());
    t
}

/// Truncates to `w` display columns, ending with '…' when cut.
pub fn fit(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    if w == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut t = String::new();
    for c in s.chars() {
        if used + char_width(c) > w {
            break;
        }
        used += char_width(c);
        t.push(c);
    }
    t.push('…');
    t
}

/// A group path in `w` display columns: whole components dropped from
/// the left (`…/b.service/x`), so that no name is cut in its middle; a
/// last component wider than `w` alone keeps its end ([`fit_left`]).
pub fn fit_path(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_owned();
    }
    // each '/' after the first character starts a shorter tail
    for (i, _) in s.match_indices('/').filter(|(i, _)| *i > 0) {
        let tail = &s[i..];
        if width(tail) < w {
            return format!("…{tail}");
        }
    }
    fit_left(s, w)
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
        for c in s.chars() {
            if hw + char_width(c) + 1 > room {
                break;
            }
            hw += char_width(c);
            head.push(c);
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
    fn a_path_loses_whole_components_from_the_left() {
        assert_eq!(fit_path("/newc-18771-1", 13), "/newc-18771-1");
        assert_eq!(fit_path("/a.slice/newc-18771-1", 14), "…/newc-18771-1");
        assert_eq!(fit_path("/a/b/c/leaf", 8), "…/c/leaf");
        // the last component alone is wider: its end shows
        assert_eq!(fit_path("/a/abcdefgh", 5), "…efgh");
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
        let cells = |t: &str| t.chars().map(char_width).sum::<usize>();
        for w in [10, 35, 60, 100] {
            let f = fit_path(&s, w);
            assert!(cells(&f) <= w, "{w}: {f}");
            assert_eq!(cells(&pad(&f, w)), w, "{w}: {f}");
            assert!(cells(&fit(&s, w)) <= w);
            assert!(cells(&fit_left(&s, w)) <= w);
        }
    }

    #[test]
    fn nothing_fits_in_no_columns() {
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit_left("abc", 0), "");
        assert_eq!(fit_left("/a.slice/b.service", 10), "…b.service");
    }
}
