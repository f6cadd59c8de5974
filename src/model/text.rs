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
//! | `\u{HHHH}` | a C1 control character (U+0080-U+009F), an invisible formatting or direction character (U+200B, U+202E, U+FEFF, ...), or a blank other than the space (U+00A0, U+3000, U+3164, ...) |
//! | `\ ` | a space at the start or the end (invisible otherwise) |
//! | `\\` | a backslash that would otherwise read as one of the escapes above |
//!
//! Where this differs from `ls -b`: a backslash is doubled only where it
//! would otherwise start one of these escapes. systemd writes `-` in unit
//! names as the four characters `\x2d` (`system-serial\x2dgetty.slice`),
//! and `\x2d` is never an escape of ours (`-` is printable), so those names
//! show as systemd and `systemctl` spell them, while a name holding a real
//! ESC byte (`a\eb` on screen) stays distinct from one holding the
//! characters backslash and e (`a\\eb`).

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
/// nothing on screen (U+FE0F, U+E0041).
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
            | '\u{180b}'..='\u{180f}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3000}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
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
fn backslash_needs_doubling(bytes: &[u8], next: usize) -> bool {
    let rest = &bytes[next..];
    if would_read_as_escape(rest) {
        return true;
    }
    match rest.first() {
        None => false,
        Some(b' ') => next + 1 == bytes.len(),
        Some(&b) if b < 0x80 => is_escaped_byte(b),
        Some(_) => match rest.utf8_chunks().next() {
            Some(chunk) => chunk.valid().chars().next().is_none_or(is_escaped_char),
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
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !needs_escape(s) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let last = bytes.len().saturating_sub(1);
    let mut at = 0usize;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        for (i, c) in valid.char_indices() {
            let pos = at + i;
            match c {
                '\\' if backslash_needs_doubling(bytes, pos + 1) => out.push_str("\\\\"),
                ' ' if pos == 0 || pos == last => out.push_str("\\ "),
                c if c.is_ascii() && is_escaped_byte(c as u8) => push_byte(&mut out, c as u8),
                c if is_escaped_char(c) => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        at += valid.len();
        for &b in chunk.invalid() {
            push_byte(&mut out, b);
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
    s.char_indices().any(|(i, c)| match c {
        '\\' => backslash_needs_doubling(b, i + 1),
        c if c.is_ascii() => is_escaped_byte(c as u8),
        c => is_escaped_char(c),
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
                    }
                }
            }
        }
    }
}
