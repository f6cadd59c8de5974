//! Display widths: a column is counted in terminal cells, not characters.
//! A wide (CJK, fullwidth) character takes two cells, a combining mark
//! none. Names are shown escaped (`model::tree::text`), so no control character
//! is left to measure.

/// Display columns of `s`.
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
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
    fn nothing_fits_in_no_columns() {
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit_left("abc", 0), "");
        assert_eq!(fit_left("/a.slice/b.service", 10), "…b.service");
    }
}
