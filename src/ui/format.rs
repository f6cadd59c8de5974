//! Number formatting for the view: binary units (1 MiB = 1024 KiB), the
//! same units the kernel's limits use.

/// "512", "4.0K", "1.5M", "2.0G": compact, for table columns.
pub fn bytes_short(b: u64) -> String {
    const UNITS: [&str; 6] = ["", "K", "M", "G", "T", "P"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b}")
    } else if v >= 100.0 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

/// "4.00 KiB", "2.00 MiB": for the detail pane.
pub fn bytes_long(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// A rate column: "-" when there is no rate this tick.
pub fn rate_short(r: Option<f64>) -> String {
    match r {
        None => "-".into(),
        Some(v) if v < 0.5 => "0".into(),
        Some(v) => bytes_short(v.round() as u64),
    }
}

pub fn pct(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(v) if v >= 999.5 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// A limit: "max" or the byte size.
pub fn limit_bytes(l: Option<crate::cgroupfs::Limit>) -> String {
    match l {
        None => "-".into(),
        Some(crate::cgroupfs::Limit::Max) => "max".into(),
        Some(crate::cgroupfs::Limit::Value(v)) => bytes_short(v),
    }
}

/// The state column: P populated, F frozen or t throttled (by its own or
/// an ancestor's cpu.max: `model::limits::throttling`; a frozen group runs
/// nothing, so cannot be throttled), T threaded (blank when not).
pub fn state_marks(g: &crate::model::GroupSample, throttled: bool) -> String {
    let ev = g.hot.events.unwrap_or_default();
    let threaded = g
        .cgroup_type
        .is_some_and(crate::cgroupfs::CgroupType::is_threaded);
    let held = if ev.is_frozen() {
        'F'
    } else if throttled {
        't'
    } else {
        ' '
    };
    [
        if ev.is_populated() { 'P' } else { ' ' },
        held,
        if threaded { 'T' } else { ' ' },
    ]
    .iter()
    .collect()
}

/// Display columns of `s`: a wide (CJK, fullwidth) character takes two,
/// a combining mark none. Names are shown escaped, so no control
/// character is left to measure.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_binary() {
        assert_eq!(bytes_short(512), "512");
        assert_eq!(bytes_short(4096), "4.0K");
        assert_eq!(bytes_short(2 * 1024 * 1024), "2.0M");
        assert_eq!(bytes_short(512 * 1024 * 1024), "512M");
        assert_eq!(bytes_long(2_097_152.0), "2.00 MiB");
        assert_eq!(rate_short(None), "-");
        assert_eq!(rate_short(Some(0.2)), "0");
        assert_eq!(pct(Some(49.96)), "50.0");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab");
        // display columns, not characters: a fullwidth letter takes two
        assert_eq!(fit("\u{ff37}\u{ff37}\u{ff37}", 4), "\u{ff37}…");
        assert_eq!(width(&fit("\u{ff37}\u{ff37}\u{ff37}", 5)), 5);
        assert_eq!(fit_left("ab\u{ff37}\u{ff37}", 4), "…\u{ff37}");
        assert_eq!(width(&pad("\u{ff37}", 4)), 4);
    }
}
