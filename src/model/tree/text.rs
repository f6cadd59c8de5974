//! Text from outside (group names, process names and command lines, file
//! contents, kernel error text, mount paths) made safe to show: every byte
//! that a terminal could act on, or that would make two different names
//! look alike, is written as a visible escape, in the style of `ls -b`.
//!
//! The one formatter for the TUI, `-b`, dialogs and the action log. It is
//! unambiguous: [`unescape`] gives back the exact bytes.
//!
//! | shown | what it stands for |
//! |---|---|
//! | `\a \b \t \n \v \f \r \e` | BEL, BS, TAB, LF, VT, FF, CR, ESC |
//! | `\xHH` | any other C0 control byte, DEL, or a byte that is not UTF-8 (`\x9b`) |
//! | `\u{HHHH}` | a C1 control character (U+0080-U+009F), an invisible formatting or direction character (U+200B, U+202E, U+FEFF, ..., every default-ignorable one, a flag's regional indicators, a skin tone modifier), a blank other than the space (U+00A0, U+3000, U+3164, ...), or a halfwidth sound mark (U+FF9E, U+FF9F) |
//! | `\u{HHHH}` | a mark that takes no cell of its own (U+0301) at the start of a name or after an escape, where it would be drawn over what is not its name's ([`is_mark`]); or after a letter of a script written precomposed, where it would draw what another name's letter draws ([`composes`]) |
//! | `\u{HHHH}` | a look-alike (see below): a character that renders as or like `/`, `\` or `.` (`\u{2215}`), a fullwidth Latin letter or digit, or a Cyrillic or Greek letter that looks like an ASCII one (`p\u{430}ypal`) |
//! | `\ ` | a space at the start or the end (invisible otherwise) |
//! | `\u{20}` | in a kernel group name ([`escape_name`]), every space: a shown name never holds one, every identity label does |
//! | `\\` | a backslash that would otherwise read as one of the escapes above |
//!
//! Where this differs from `ls -b`: a backslash is doubled only where it
//! would otherwise start one of these escapes. systemd writes `-` in unit
//! names as the four characters `\x2d` (`system-serial\x2dgetty.slice`),
//! and `\x2d` is never an escape of ours (`-` is printable), so those names
//! show as systemd and `systemctl` spell them, while a name holding a real
//! ESC byte (`a\eb` on screen) stays distinct from one holding the
//! characters backslash and e (`a\\eb`).
//!
//! The look-alikes, in one sentence: every character that renders as or
//! like `/`, `\` or `.` ([`SLASH_DOT_LIKE`]) and every fullwidth Latin
//! letter or digit is escaped always, and a Cyrillic or Greek letter that
//! looks like an ASCII letter or digit ([`LOOK_ALIKE_LETTERS`], from
//! Unicode's confusables.txt for the Latin letters and digits) is escaped
//! unless its name (the text between two `/`) has no ASCII letter or digit
//! and has a letter of the same script that looks like no ASCII one. So
//! `/a/∕etc` cannot read as `//etc`, nor `pаypal` (Cyrillic `а`) as
//! `paypal`, nor `асе` (all three Cyrillic) as `ace`, while a name wholly
//! in Cyrillic, Greek or CJK (`привет`, `ΑΘΗΝΑ`, `日本`) stays readable.
//! Two names that show without escapes differ in a character that is
//! neither of these, so they never show alike by these tables.

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for a byte shown as `\xHH` (or a named escape) when it stands
/// alone: C0 controls, DEL, and every byte >= 0x80 that is not part of
/// valid UTF-8.
fn is_escaped_byte(b: u8) -> bool {
    b < 0x20 || b == 0x7f || b >= 0x80
}

/// Characters that are valid UTF-8 and printable by the terminal's rules
/// but must not reach it as they are: C1 controls (a terminal may act on
/// U+009B as CSI), and characters that are invisible or reorder the text
/// around them (a right-to-left override makes `evil` read `live`).
///
/// Blanks other than the ASCII space are escaped too: a no-break or
/// ideographic space, a Hangul filler or a braille blank looks exactly
/// like a space (or like nothing), so `a\u{a0}b` would show as `a b`, a
/// different group. So are the invisible selectors and tags that change
/// nothing on screen (U+FE0F, U+E0041), and the rest of Unicode's
/// default-ignorable code points (the Khmer inherent vowels U+17B4 and
/// U+17B5, the shorthand format controls U+1BCA0-U+1BCA3, the unassigned
/// U+FFF0-U+FFF8): a terminal draws them as nothing (`a\u{1bca0}b`
/// showed `ab`, a different group) or as a cell that ratatui does not
/// count (the columns after the name slid).
///
/// And the two emoji parts that join the character before them into one
/// cluster, whose width ratatui and the terminal count differently: the
/// regional indicators of a flag (ratatui draws `🇺🇸` in one wide cell,
/// tmux in two narrow ones, and a dialog drawn over the row left a stray
/// `🇸` beside it) and the skin tone modifiers (ratatui counts `👍🏽` two
/// cells, tmux four, and the next cell drawn over the modifier: a group
/// named `👍🏽` showed as one named `👍`).
///
/// And the halfwidth (semi-)voiced sound marks U+FF9E and U+FF9F, the one
/// pair whose width the terminal library (ratatui counts each one cell
/// more than unicode-width) and the terminal (one cell) disagree on: the
/// columns after a name holding one slid.
pub fn is_escaped_char(c: char) -> bool {
    matches!(
        c,
        '\u{80}'..='\u{a0}'
            | '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{1680}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3000}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ff9e}'
            | '\u{ff9f}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{1f1e6}'..='\u{1f1ff}'
            | '\u{1f3fb}'..='\u{1f3ff}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Characters that render as or like `/`, `\` or `.`, from Unicode's
/// confusables.txt for those three and the overlays that draw one over
/// the character before: a name holding one can read as a path
/// (`/a/\u{2215}etc` as `/a//etc`) or as `..`.
pub const SLASH_DOT_LIKE: &[char] = &[
    // solidus-like
    '\u{337}',
    '\u{338}',
    '\u{1735}',
    '\u{2044}',
    '\u{2215}',
    '\u{2571}',
    '\u{27cb}',
    '\u{29f8}',
    '\u{2cc6}',
    '\u{3033}',
    '\u{ff0f}',
    '\u{1d23a}',
    // reverse-solidus-like
    '\u{20e5}',
    '\u{2216}',
    '\u{2572}',
    '\u{27cd}',
    '\u{29f5}',
    '\u{29f9}',
    '\u{fe68}',
    '\u{ff3c}',
    '\u{31d4}',
    // full-stop-like
    '\u{701}',
    '\u{702}',
    '\u{2024}',
    '\u{2025}',
    '\u{2026}',
    '\u{a4f8}',
    '\u{a60e}',
    '\u{fe52}',
    '\u{ff0e}',
    '\u{10a50}',
    '\u{1d16d}',
];

/// Cyrillic and Greek letters that look like an ASCII letter or digit
/// (Unicode's confusables.txt, the entries whose target is one of
/// `A-Z a-z 0-9`).
pub const LOOK_ALIKE_LETTERS: &[char] = &[
    // Greek
    'Α', 'Β', 'Ε', 'Ζ', 'Η', 'Ι', 'Κ', 'Μ', 'Ν', 'Ο', 'Ρ', 'Τ', 'Υ', 'Χ', 'α', 'γ', 'ι', 'κ', 'ν',
    'ο', 'ρ', 'σ', 'υ', 'χ', 'ϲ', 'ϳ', 'Ϲ', 'Ϳ', // Cyrillic
    'Ѕ', 'І', 'Ј', 'А', 'В', 'Е', 'З', 'К', 'М', 'Н', 'О', 'Р', 'С', 'Т', 'У', 'Х', 'Ь', 'а', 'б',
    'е', 'о', 'р', 'с', 'у', 'х', 'ѕ', 'і', 'ј', 'ѡ', 'Ү', 'ү', 'Һ', 'һ', 'Ӏ', 'ӏ', 'Ԁ', 'ԁ', 'Ԍ',
    'Ԛ', 'ԛ', 'Ԝ', 'ԝ',
];

/// The script of a letter of [`LOOK_ALIKE_LETTERS`]' scripts: 0 Greek,
/// 1 Cyrillic.
fn script(c: char) -> Option<usize> {
    match c {
        '\u{370}'..='\u{3ff}' | '\u{1f00}'..='\u{1fff}' => Some(0),
        '\u{400}'..='\u{52f}'
        | '\u{1c80}'..='\u{1c8f}'
        | '\u{2de0}'..='\u{2dff}'
        | '\u{a640}'..='\u{a69f}' => Some(1),
        _ => None,
    }
}

/// What decides whether a look-alike letter of a name is escaped: whether
/// the name has an ASCII letter or digit, and for each script whether it
/// has a letter of that script that looks like no ASCII one.
#[derive(Debug, Clone, Copy, Default)]
struct NameFacts {
    ascii: bool,
    own: [bool; 2],
}

impl NameFacts {
    fn of(name: &[u8]) -> Self {
        let mut f = Self::default();
        for chunk in name.utf8_chunks() {
            for c in chunk.valid().chars() {
                if c.is_ascii_alphanumeric() {
                    f.ascii = true;
                } else if let Some(k) = script(c) {
                    if c.is_alphabetic() && !LOOK_ALIKE_LETTERS.contains(&c) {
                        f.own[k] = true;
                    }
                }
            }
        }
        f
    }
}

/// Whether `c` is shown as `\u{HHHH}` in a name with these facts: an
/// escaped character ([`is_escaped_char`]) or a look-alike (module doc).
fn escaped_in(c: char, facts: NameFacts) -> bool {
    if c.is_ascii() {
        return false;
    }
    if is_escaped_char(c) || is_confusable_always(c) {
        return true;
    }
    LOOK_ALIKE_LETTERS.contains(&c) && (facts.ascii || script(c).is_none_or(|k| !facts.own[k]))
}

/// A look-alike escaped wherever it is: slash-, backslash- and dot-like
/// characters, and fullwidth Latin letters and digits.
fn is_confusable_always(c: char) -> bool {
    SLASH_DOT_LIKE.contains(&c)
        || matches!(c, '\u{ff10}'..='\u{ff19}' | '\u{ff21}'..='\u{ff3a}' | '\u{ff41}'..='\u{ff5a}')
}

/// A character that takes no cell of its own and is drawn over the one
/// before it (a combining accent, U+0301; a Hangul vowel or final jamo).
/// At the start of a name, or after an escape, what it would join is not
/// its name's: the tree's guide line, a separator, the escape's last
/// character. There it is shown as `\u{HHHH}`, so that the name starts
/// with a cell of its own and nothing before it changes.
pub fn is_mark(c: char) -> bool {
    !c.is_ascii() && unicode_width::UnicodeWidthChar::width(c) == Some(0)
}

/// A letter of a script that Unicode writes with its accents composed
/// (Latin, Greek, Cyrillic, Hangul): a mark after it draws what a
/// precomposed character draws, `e` + U+0301 as `é` (U+00E9), the jamo
/// `ᄀ` `ᅡ` `ᆨ` as the syllable `각`, so two different names would show
/// alike. Such a mark is shown as `\u{HHHH}` (`cafe\u{301}` beside
/// `café`). Scripts that write with marks (Devanagari's vowel signs,
/// Thai's, Hebrew's points) keep theirs.
fn composes(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || c.is_alphabetic()
            && matches!(
                c,
                '\u{c0}'..='\u{24f}'
                    | '\u{1e00}'..='\u{1eff}'
                    | '\u{370}'..='\u{3ff}'
                    | '\u{1f00}'..='\u{1fff}'
                    | '\u{400}'..='\u{52f}'
                    | '\u{1100}'..='\u{11ff}'
                    | '\u{a960}'..='\u{a97f}'
                    | '\u{ac00}'..='\u{d7ff}'
            )
}

/// The facts of the name that byte `at` of `bytes` is in (between two
/// `/`).
fn facts_at(bytes: &[u8], at: usize) -> NameFacts {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |i| i + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(bytes.len(), |i| at + i);
    NameFacts::of(&bytes[start..end])
}

fn named(b: u8) -> Option<char> {
    Some(match b {
        0x07 => 'a',
        0x08 => 'b',
        b'\t' => 't',
        b'\n' => 'n',
        0x0b => 'v',
        0x0c => 'f',
        b'\r' => 'r',
        0x1b => 'e',
        _ => return None,
    })
}

/// True when a backslash at the start of `rest` (after the backslash)
/// would read as one of our escapes, so the backslash itself must be
/// doubled.
fn would_read_as_escape(rest: &[u8]) -> bool {
    match rest {
        [b'a' | b'b' | b't' | b'n' | b'v' | b'f' | b'r' | b'e' | b'\\' | b' ', ..]
        | [b'u', b'{', ..] => true,
        [b'x', h, l, ..] => hex_byte(*h, *l).is_some_and(is_escaped_byte),
        _ => false,
    }
}

/// True when a backslash followed by `bytes[next..]` must be written
/// `\\`: what follows would read as an escape, or is itself escaped (its
/// output starts with a backslash, and `\\` would read as one).
/// `facts`: those of the name the backslash is in (what follows it is in
/// the same name: a `/` is never escaped).
fn backslash_needs_doubling(bytes: &[u8], next: usize, facts: NameFacts) -> bool {
    let rest = &bytes[next..];
    if would_read_as_escape(rest) {
        return true;
    }
    match rest.first() {
        None => false,
        Some(b' ') => next + 1 == bytes.len(),
        Some(&b) if b < 0x80 => is_escaped_byte(b),
        Some(_) => match rest.utf8_chunks().next() {
            Some(chunk) => chunk
                .valid()
                .chars()
                .next()
                .is_none_or(|c| escaped_in(c, facts)),
            None => false,
        },
    }
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn hex_byte(h: u8, l: u8) -> Option<u8> {
    Some(hex_val(h)? << 4 | hex_val(l)?)
}

/// `bytes` with every byte or character that must not reach a terminal as
/// a visible escape (table in the module doc). Borrows when nothing needs
/// escaping, which is nearly always.
pub fn escape(bytes: &[u8]) -> Cow<'_, str> {
    escape_with(bytes, false)
}

/// [`escape`] of a kernel group name (or a path of them): as [`escape`],
/// and every space, wherever it is, shown as `\u{20}`, so that a shown
/// name never holds a space. Every identity label cgtop makes
/// (`web-1 · docker 046c7a5b3d2e`, `session 14 alice`, `user alice`)
/// holds one, so a group whose owner named it like a label
/// (`docker 046c7a5b3d2e`) shows `docker\u{20}046c7a5b3d2e` and never
/// reads as the container's row. systemd writes a space in a unit name
/// as the four characters `\x20`, which are no escape of ours and show as
/// they are, so real names do not change; `\u{` is one, so a name can
/// spell neither. [`unescape`] gives the bytes back.
pub fn escape_name(bytes: &[u8]) -> Cow<'_, str> {
    escape_with(bytes, true)
}

fn escape_with(bytes: &[u8], spaces: bool) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !(needs_escape(s) || spaces && s.as_bytes().contains(&b' ')) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let last = bytes.len().saturating_sub(1);
    let mut at = 0usize;
    let mut facts = facts_at(bytes, 0);
    // whether a mark here is escaped: it would join something that is not
    // its name's own (the start of a name, an escape just written), or
    // draw what a precomposed letter draws (after a letter that
    // [`composes`])
    let mut mark_escaped = true;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        for (i, c) in valid.char_indices() {
            let pos = at + i;
            let was_escaped = mark_escaped;
            mark_escaped = true;
            match c {
                '/' => {
                    out.push('/');
                    facts = facts_at(bytes, pos + 1);
                }
                '\\' if backslash_needs_doubling(bytes, pos + 1, facts) => out.push_str("\\\\"),
                ' ' if spaces => out.push_str("\\u{20}"),
                ' ' if pos == 0 || pos == last => out.push_str("\\ "),
                c if c.is_ascii() && is_escaped_byte(c as u8) => push_byte(&mut out, c as u8),
                c if escaped_in(c, facts) || (was_escaped && is_mark(c)) => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
                c => {
                    out.push(c);
                    mark_escaped = composes(c);
                }
            }
        }
        at += valid.len();
        for &b in chunk.invalid() {
            push_byte(&mut out, b);
            mark_escaped = true;
        }
        at += chunk.invalid().len();
    }
    Cow::Owned(out)
}

/// [`escape`] of text that is already UTF-8 (error messages, file
/// contents read as text).
pub fn escape_str(s: &str) -> Cow<'_, str> {
    escape(s.as_bytes())
}

fn needs_escape(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return true;
    }
    // the facts of the name each character is in, found once per name
    // and only for a name with a character beyond ASCII
    let mut facts: Option<NameFacts> = None;
    // a mark that starts a name, or follows a letter that [`composes`]
    // (a mark after an escape needs that escape)
    let mut mark_escaped = true;
    s.char_indices().any(|(i, c)| match c {
        '/' => {
            facts = None;
            mark_escaped = true;
            false
        }
        c if std::mem::replace(&mut mark_escaped, composes(c)) && is_mark(c) => true,
        '\\' => backslash_needs_doubling(b, i + 1, *facts.get_or_insert_with(|| facts_at(b, i))),
        c if c.is_ascii() => is_escaped_byte(c as u8),
        c => escaped_in(c, *facts.get_or_insert_with(|| facts_at(b, i))),
    })
}

fn push_byte(out: &mut String, b: u8) {
    out.push('\\');
    match named(b) {
        Some(n) => out.push(n),
        None => {
            let _ = write!(out, "x{b:02x}");
        }
    }
}

/// The bytes [`escape`] was given, from what it wrote. Text that
/// [`escape`] cannot have written (a lone `\` before other text, as in
/// systemd's `\x2d`) stands for itself.
pub fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let rest = &b[i + 1..];
        let named_byte = match rest.first() {
            Some(b'a') => Some(0x07),
            Some(b'b') => Some(0x08),
            Some(b't') => Some(b'\t'),
            Some(b'n') => Some(b'\n'),
            Some(b'v') => Some(0x0b),
            Some(b'f') => Some(0x0c),
            Some(b'r') => Some(b'\r'),
            Some(b'e') => Some(0x1b),
            Some(b'\\') => Some(b'\\'),
            Some(b' ') => Some(b' '),
            _ => None,
        };
        if let Some(v) = named_byte {
            out.push(v);
            i += 2;
            continue;
        }
        if let [b'x', h, l, ..] = rest {
            if let Some(v) = hex_byte(*h, *l).filter(|v| is_escaped_byte(*v)) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        if let [b'u', b'{', tail @ ..] = rest {
            if let Some(end) = tail.iter().position(|&c| c == b'}') {
                let hex = std::str::from_utf8(&tail[..end]).unwrap_or("");
                if let Some(c) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                    i += 3 + end + 1;
                    continue;
                }
            }
        }
        out.push(b'\\');
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_borrowed() {
        for s in ["cron.service", "system-serial\\x2dgetty.slice", "ü a", ""] {
            assert!(matches!(escape(s.as_bytes()), Cow::Borrowed(_)), "{s}");
        }
    }

    #[test]
    fn controls_are_visible() {
        assert_eq!(escape(b"a\x1bb"), "a\\eb");
        assert_eq!(escape(b"\x1b]0;pwned\x07"), "\\e]0;pwned\\a");
        assert_eq!(escape(b"x\ny\rz\x08"), "x\\ny\\rz\\b");
        assert_eq!(escape(b"\x01\x7f"), "\\x01\\x7f");
        assert_eq!(escape(b"bad\xff"), "bad\\xff");
        assert_eq!(escape(b"csi\x9b2J"), "csi\\x9b2J");
        assert_eq!(escape("c1\u{9b}2J".as_bytes()), "c1\\u{9b}2J");
        assert_eq!(escape("evil\u{202e}txt".as_bytes()), "evil\\u{202e}txt");
        assert_eq!(escape(b" a "), "\\ a\\ ");
        assert_eq!(escape(b"a b"), "a b");
    }

    #[test]
    fn look_alikes_stay_distinct() {
        assert_ne!(escape(b"a\x1bb"), escape(b"ab"));
        assert_ne!(escape(b"a\x1bb"), escape(b"a\\eb"));
        assert_ne!(escape(b"bad\xff"), escape("bad\u{fffd}".as_bytes()));
        assert_ne!(escape(b"a\\x1b"), escape(b"a\x1b"));
        assert_eq!(escape(b"a\\x1b"), "a\\\\x1b");
        // systemd's own escapes are not ours: left as systemd spells them
        assert_eq!(escape(b"a\\x2db"), "a\\x2db");
    }

    #[test]
    fn slash_like_and_look_alike_characters_are_escaped() {
        // `/a/∕etc` read as `/a//etc`; `pаypal` (Cyrillic а) as `paypal`
        assert_eq!(
            escape("/cgsec3-17741-1/\u{2215}etc".as_bytes()),
            "/cgsec3-17741-1/\\u{2215}etc"
        );
        assert_eq!(escape("a\u{ff0f}b".as_bytes()), "a\\u{ff0f}b");
        assert_eq!(escape("\u{2024}\u{2024}".as_bytes()), "\\u{2024}\\u{2024}");
        assert_eq!(escape("p\u{430}ypal".as_bytes()), "p\\u{430}ypal");
        assert_eq!(escape("\u{ff41}b".as_bytes()), "\\u{ff41}b");
        // wholly look-alikes: Cyrillic асе would read as ace
        assert_eq!(
            escape("\u{430}\u{441}\u{435}".as_bytes()),
            "\\u{430}\\u{441}\\u{435}"
        );
        // a backslash before an escaped look-alike is doubled
        assert_eq!(escape("x\\\u{430}".as_bytes()), "x\\\\\\u{430}");
        // names wholly in another script stay readable, each name on its own
        for s in ["привет", "ΑΘΗΝΑ", "日本語", "/srv/привет/日本", "ü a"] {
            assert!(matches!(escape(s.as_bytes()), Cow::Borrowed(_)), "{s}");
        }
        assert_eq!(escape("/a/привет".as_bytes()), "/a/привет");
        assert_eq!(escape("привет-x".as_bytes()), "п\\u{440}ив\\u{435}т-x");
        // a Greek look-alike in a Cyrillic name: no Greek letter of its own
        assert_eq!(escape("п\u{3bf}ка".as_bytes()), "п\\u{3bf}ка");
    }

    #[test]
    fn a_mark_that_starts_a_name_does_not_join_what_is_before_it() {
        // U+0301 first: it would be drawn over the tree's guide line, the
        // `/` of a path or the space between two arguments
        assert_eq!(escape("\u{301}ab".as_bytes()), "\\u{301}ab");
        assert_eq!(escape("/a/\u{301}b".as_bytes()), "/a/\\u{301}b");
        assert_eq!(escape("\u{1161}x".as_bytes()), "\\u{1161}x");
        // each mark of a run: the first one's escape ends in `}`
        assert_eq!(escape("\u{301}\u{302}".as_bytes()), "\\u{301}\\u{302}");
        // after an escape it would join the escape's last character
        assert_eq!(escape("a\x1b\u{301}".as_bytes()), "a\\e\\u{301}");
        assert_eq!(escape("a\u{200b}\u{301}".as_bytes()), "a\\u{200b}\\u{301}");
        assert_eq!(escape(b"\xff\xcc\x81"), "\\xff\\u{301}");
        // on its own letter of a script written with marks it is the
        // name's own: shown as it is
        for s in [
            "\u{915}\u{94d}",
            "/a/\u{e01}\u{e34}",
            "\u{5e9}\u{5c1}",
            "a\\\u{301}",
        ] {
            assert!(matches!(escape(s.as_bytes()), Cow::Borrowed(_)), "{s:?}");
        }
        for s in ["\u{301}", "a/\u{301}", "\x1b\u{301}\u{301}x", "\\\u{301}"] {
            let e = escape(s.as_bytes());
            assert_eq!(unescape(&e), s.as_bytes(), "{s:?} -> {e:?}");
        }
        // the halfwidth voiced mark: ratatui and the terminal count it
        // differently
        assert_eq!(escape("\u{ff76}\u{ff9e}".as_bytes()), "\u{ff76}\\u{ff9e}");
    }

    /// Every default-ignorable code point draws nothing: a name holding
    /// one would show as the name without it.
    #[test]
    fn default_ignorable_characters_are_escaped() {
        for (c, shown) in [
            ('\u{17b4}', "a\\u{17b4}b"),
            ('\u{17b5}', "a\\u{17b5}b"),
            ('\u{fff0}', "a\\u{fff0}b"),
            ('\u{fff8}', "a\\u{fff8}b"),
            ('\u{1bca0}', "a\\u{1bca0}b"),
            ('\u{1bca3}', "a\\u{1bca3}b"),
        ] {
            let name = format!("a{c}b");
            assert_eq!(escape(name.as_bytes()), shown);
            assert_eq!(unescape(shown), name.as_bytes());
        }
    }

    /// The parts of a flag and a skin tone are escaped: the terminal and
    /// ratatui count their cells differently.
    #[test]
    fn flags_and_skin_tones_are_escaped() {
        assert_eq!(
            escape("x\u{1f1fa}\u{1f1f8}y".as_bytes()),
            "x\\u{1f1fa}\\u{1f1f8}y"
        );
        assert_eq!(
            escape("\u{1f44d}\u{1f3fd}".as_bytes()),
            "\u{1f44d}\\u{1f3fd}"
        );
        assert_ne!(
            escape("\u{1f44d}\u{1f3fd}".as_bytes()),
            escape("\u{1f44d}".as_bytes())
        );
        // an emoji on its own is one cell pair for both: shown as it is
        assert!(matches!(escape("\u{1f44d}".as_bytes()), Cow::Borrowed(_)));
    }

    /// A mark after a letter of a script that composes its accents draws
    /// what a precomposed letter draws: escaped, so that `cafe` + U+0301
    /// and `café` are two names on screen, as are the jamo of a Hangul
    /// syllable and the syllable.
    #[test]
    fn a_decomposed_letter_does_not_show_as_the_precomposed_one() {
        assert_eq!(escape("cafe\u{301}".as_bytes()), "cafe\\u{301}");
        assert_eq!(escape("caf\u{e9}".as_bytes()), "caf\u{e9}");
        assert_eq!(escape("\u{e9}\u{301}".as_bytes()), "\u{e9}\\u{301}");
        // each mark of a run: the first one's escape ends in `}`
        assert_eq!(escape("e\u{323}\u{302}x".as_bytes()), "e\\u{323}\\u{302}x");
        assert_eq!(escape("\u{438}\u{306}".as_bytes()), "\u{438}\\u{306}");
        assert_eq!(escape("\u{3c9}\u{301}".as_bytes()), "\u{3c9}\\u{301}");
        assert_eq!(
            escape("\u{1100}\u{1161}\u{11a8}".as_bytes()),
            "\u{1100}\\u{1161}\\u{11a8}"
        );
        assert_eq!(escape("\u{ac00}\u{11a8}".as_bytes()), "\u{ac00}\\u{11a8}");
        assert_ne!(
            escape("cafe\u{301}".as_bytes()),
            escape("caf\u{e9}".as_bytes())
        );
        for s in ["cafe\u{301}", "/a/e\u{301}\u{302}", "\u{1100}\u{1161}"] {
            let e = escape(s.as_bytes());
            assert_eq!(unescape(&e), s.as_bytes(), "{s:?} -> {e:?}");
            assert_eq!(escape_name(s.as_bytes()), e, "{s:?}");
        }
    }

    /// The characters the look-alike property test draws from.
    fn confusable_alphabet() -> Vec<char> {
        let mut a: Vec<char> = "aAo0l1/\\. xu{}пиΘ日\u{301}\u{1b}".chars().collect();
        a.extend(SLASH_DOT_LIKE.iter().take(12));
        a.extend(['\u{ff0f}', '\u{ff41}', '\u{ff10}']);
        a.extend(LOOK_ALIKE_LETTERS.iter().step_by(5));
        a
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Escape is injective (unescape gives the bytes back), and what
        /// it shows holds no slash- or dot-like character, no fullwidth
        /// letter or digit, and a raw look-alike letter only in a name
        /// with no ASCII letter or digit and a letter of its script that
        /// looks like no ASCII one.
        #[test]
        fn escape_is_injective_and_shows_no_look_alike(
            picks in proptest::collection::vec(0usize..64, 0..24)
        ) {
            let alphabet = confusable_alphabet();
            let s: String = picks.iter().map(|i| alphabet[i % alphabet.len()]).collect();
            let e = escape(s.as_bytes());
            proptest::prop_assert_eq!(unescape(&e), s.as_bytes(), "{:?} -> {:?}", s, e);
            for c in e.chars() {
                proptest::prop_assert!(!is_confusable_always(c), "{:?} -> {:?}", s, e);
            }
            for (name, shown) in s.split('/').zip(e.split('/')) {
                // no name starts with a mark that would join the `/`
                proptest::prop_assert!(!shown.starts_with(is_mark), "{:?} -> {:?}", s, e);
                let facts = NameFacts::of(name.as_bytes());
                for c in shown.chars().filter(|c| LOOK_ALIKE_LETTERS.contains(c)) {
                    let own = script(c).is_some_and(|k| facts.own[k]);
                    proptest::prop_assert!(!facts.ascii && own, "{:?} -> {:?}", s, e);
                }
            }
        }
    }

    /// A kernel group name shown never holds a space, so it can never
    /// read as an identity label, every one of which holds one.
    #[test]
    fn a_group_name_shows_no_space_and_keeps_systemds_spelling() {
        assert_eq!(
            escape_name("web-1 · docker 046c7a5b3d2e".as_bytes()),
            "web-1\\u{20}·\\u{20}docker\\u{20}046c7a5b3d2e"
        );
        assert_eq!(
            escape_name(b"docker 046c7a5b3d2e"),
            "docker\\u{20}046c7a5b3d2e"
        );
        assert_eq!(escape_name(b" a "), "\\u{20}a\\u{20}");
        // systemd's own spelling of a space is shown as systemd wrote it
        assert_eq!(
            escape_name(b"run-media-my\\x20disk.mount"),
            "run-media-my\\x20disk.mount"
        );
        // the escape's own text, and a backslash before a space, stay
        // apart from the space
        assert_eq!(escape_name(b"a\\u{20}b"), "a\\\\u{20}b");
        assert_eq!(escape_name(b"a\\ b"), "a\\\\\\u{20}b");
        // text that is not a group name keeps its spaces
        assert_eq!(escape(b"a b"), "a b");
        assert_eq!(escape_name(b"a-b"), "a-b");
        for name in [
            &b"a b"[..],
            b"a\\u{20}b",
            b"a\\ b",
            b"a\\x20b",
            b" ",
            b"\\ ",
            b"x \\",
            "\u{3000} \u{a0}".as_bytes(),
        ] {
            let e = escape_name(name);
            assert!(!e.contains(' '), "{name:?} -> {e:?}");
            assert_eq!(unescape(&e), name, "{name:?} -> {e:?}");
        }
    }

    #[test]
    fn round_trip_on_awkward_bytes() {
        let cases: &[&[u8]] = &[
            b"",
            b"\\",
            b"\\\\",
            b"a\\",
            b"\\x",
            b"\\x1",
            b"\\x1b",
            b"\\\\x1b",
            b"\\u{41}",
            b"\\u{zz}",
            b" ",
            b"  ",
            b"\\ ",
            b"\xc3",
            b"\xe2\x80\xae",
            b"\x00\x1f\x7f\x80\xff",
            "ü\u{9b}\u{feff}".as_bytes(),
        ];
        for c in cases {
            let e = escape(c);
            assert_eq!(unescape(&e), *c, "{c:?} -> {e:?}");
            assert!(!e.chars().any(|ch| ch.is_control() || is_escaped_char(ch)));
        }
    }

    #[test]
    fn round_trip_on_every_short_string() {
        // every string of length 1-3 over an alphabet of the interesting
        // bytes
        let alphabet: &[u8] = b"\\xu{}1be \x1b\x9b\xff\x00a";
        let mut buf = Vec::new();
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    for len in 1..=3 {
                        buf.clear();
                        buf.extend_from_slice(&[*a, *b, *c][..len]);
                        let e = escape(&buf);
                        assert_eq!(unescape(&e), buf, "{buf:?} -> {e:?}");
                        let n = escape_name(&buf);
                        assert_eq!(unescape(&n), buf, "{buf:?} -> {n:?}");
                        assert!(!n.contains(' '), "{buf:?} -> {n:?}");
                    }
                }
            }
        }
    }
}
