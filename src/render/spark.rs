//! Sparklines: a series of figures as a line of block characters
//! (U+2581 `▁` to U+2588 `█`), the newest at the right, and the words
//! that go with one (its min, max and the span it covers). PURE: the
//! detail pane and the tree's sparkline column draw history with them.

use std::time::Duration;

/// The eight heights, lowest first.
pub const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The tree's sparkline column (`s`): its title and cells.
pub const COLUMN_TITLE: &str = "CPU HIST";
pub const COLUMN_WIDTH: usize = 10;

/// A cell with no figure (the group was not there, or had no figure).
pub const GAP: char = ' ';

/// A sparkline's scale: what the full block stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From 0 to the highest figure of the series shown (a series of
    /// zeros is all lowest blocks).
    Max,
    /// From 0 to this ceiling (memory against its limit, CPU against a
    /// quota); a figure above it is a full block.
    Ceiling(f64),
}

/// The last `width` figures of `series` (oldest first) as a sparkline of
/// exactly `width` cells: the newest at the right, blank cells at the
/// left while the series is shorter, [`GAP`] for `None`. Every figure is
/// at least the lowest block, so a zero reads as "there, idle" and a gap
/// as "not there".
#[must_use]
pub fn line(series: &[Option<f64>], width: usize, scale: Scale) -> String {
    let shown = &series[series.len().saturating_sub(width)..];
    let top = match scale {
        Scale::Ceiling(c) => c,
        Scale::Max => shown
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
    };
    let mut out = GAP.to_string().repeat(width - shown.len());
    for v in shown {
        out.push(match v {
            Some(v) if v.is_finite() => BLOCKS[level(*v, top)],
            _ => GAP,
        });
    }
    out
}

/// The tree's sparkline cell of a group's CPU %: its last
/// [`COLUMN_WIDTH`] refreshes, scaled to one core busy or to its own
/// peak above that, so that an idle group reads idle.
#[must_use]
pub fn cpu_cell(series: &[Option<f64>]) -> String {
    let peak = min_max(series, COLUMN_WIDTH).map_or(0.0, |(_, hi)| hi);
    line(series, COLUMN_WIDTH, Scale::Ceiling(peak.max(100.0)))
}

/// Which block a figure takes on a scale to `top`.
fn level(v: f64, top: f64) -> usize {
    if top.is_nan() || top <= 0.0 || v <= 0.0 {
        return 0;
    }
    let f = (v / top).min(1.0);
    // 0 < f <= 1 -> 0..=7: the full block only at the top
    ((f * BLOCKS.len() as f64).ceil() as usize).clamp(1, BLOCKS.len()) - 1
}

/// The lowest and highest figure of the last `width` of a series (what a
/// sparkline of that width shows), `None` when it has none.
#[must_use]
pub fn min_max(series: &[Option<f64>], width: usize) -> Option<(f64, f64)> {
    let shown = &series[series.len().saturating_sub(width)..];
    shown
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A duration as the span words say it: "45 s", "10 min", "1 h",
/// "1h30m", "2m10s".
#[must_use]
pub fn duration_words(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..=119 if d.as_secs_f64() < 10.0 && d.subsec_millis() != 0 => {
            format!("{:.1} s", d.as_secs_f64())
        }
        0..=119 => format!("{s} s"),
        _ if s % 3600 == 0 => format!("{} h", s / 3600),
        _ if s >= 3600 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ if s % 60 == 0 => format!("{} min", s / 60),
        _ => format!("{}m{:02}s", s / 60, s % 60),
    }
}

/// The span a sparkline covers: "last 60 s, every 1 s". `samples` is how
/// many cells it has, `every` the time between two of them.
#[must_use]
pub fn span_words(samples: usize, every: Duration) -> String {
    let n = u32::try_from(samples).unwrap_or(u32::MAX);
    format!(
        "last {}, every {}",
        duration_words(every * n),
        every_words(every)
    )
}

/// The time between samples: "1 s", "10 s", "1 min".
#[must_use]
pub fn every_words(every: Duration) -> String {
    let s = every.as_secs();
    if s >= 60 && s % 60 == 0 && every.subsec_nanos() == 0 {
        format!("{} min", s / 60)
    } else {
        duration_words(every)
    }
}

/// A past moment's age: "2m10s ago", "now".
#[must_use]
pub fn age_words(age: Duration) -> String {
    // whole seconds: the refreshes' stamps are not on the second
    let secs = Duration::from_secs(age.as_secs_f64().round() as u64);
    if secs.is_zero() {
        "now".to_owned()
    } else {
        format!("{} ago", duration_words(secs))
    }
}

/// UNIX seconds as the time of day in UTC, "14:03:20".
#[must_use]
pub fn clock_utc(unix_s: f64) -> String {
    let s = if unix_s.is_finite() && unix_s > 0.0 {
        unix_s.floor() as u64
    } else {
        0
    };
    let day = s % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, (day % 3600) / 60, day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_as_wide_as_asked_with_the_newest_at_the_right() {
        let s = [Some(0.0), Some(50.0), Some(100.0)];
        assert_eq!(line(&s, 3, Scale::Max), "▁▄█");
        assert_eq!(line(&s, 5, Scale::Max), "  ▁▄█", "short: blank at the left");
        assert_eq!(line(&s, 2, Scale::Max), "▄█", "long: the oldest dropped");
        assert_eq!(line(&s, 0, Scale::Max), "");
    }

    #[test]
    fn a_gap_is_blank_and_zero_is_the_lowest_block() {
        let s = [Some(10.0), None, Some(0.0), Some(f64::NAN)];
        assert_eq!(line(&s, 4, Scale::Max), "█ ▁ ");
        assert_eq!(line(&[None, None], 2, Scale::Max), "  ");
        assert_eq!(line(&[Some(0.0), Some(0.0)], 2, Scale::Max), "▁▁");
    }

    #[test]
    fn a_ceiling_scales_against_it_and_caps_above_it() {
        let s = [Some(25.0), Some(50.0), Some(100.0), Some(400.0)];
        assert_eq!(line(&s, 4, Scale::Ceiling(100.0)), "▂▄██");
        assert_eq!(
            line(&s, 4, Scale::Ceiling(800.0)),
            "▁▁▁▄",
            "an eighth: the lowest"
        );
        // a tiny figure is still above zero: the lowest block, not a gap
        assert_eq!(line(&[Some(1e-9)], 1, Scale::Ceiling(1.0)), "▁");
        assert_eq!(line(&[Some(5.0)], 1, Scale::Ceiling(0.0)), "▁");
    }

    #[test]
    fn the_column_scales_to_one_core_or_the_peak_above_it() {
        let idle = [Some(1.0), Some(2.0), Some(1.0)];
        assert_eq!(cpu_cell(&idle), "       ▁▁▁", "an idle group reads idle");
        let busy = [Some(100.0), Some(400.0), Some(200.0)];
        assert_eq!(cpu_cell(&busy), "       ▂█▄");
        assert_eq!(cpu_cell(&[]).chars().count(), COLUMN_WIDTH);
    }

    #[test]
    fn min_max_looks_at_what_is_shown() {
        let s = [Some(900.0), Some(3.0), None, Some(7.0)];
        assert_eq!(min_max(&s, 4), Some((3.0, 900.0)));
        assert_eq!(min_max(&s, 3), Some((3.0, 7.0)));
        assert_eq!(min_max(&[None], 1), None);
    }

    #[test]
    fn spans_and_ages_read_as_an_operator_says_them() {
        let sec = Duration::from_secs;
        assert_eq!(span_words(60, sec(1)), "last 60 s, every 1 s");
        assert_eq!(span_words(60, sec(10)), "last 10 min, every 10 s");
        assert_eq!(span_words(60, sec(60)), "last 1 h, every 1 min");
        assert_eq!(span_words(40, sec(2)), "last 80 s, every 2 s");
        assert_eq!(
            span_words(60, Duration::from_millis(500)),
            "last 30 s, every 0.5 s"
        );
        assert_eq!(age_words(sec(130)), "2m10s ago");
        assert_eq!(age_words(sec(5400)), "1h30m ago");
        assert_eq!(age_words(Duration::ZERO), "now");
        assert_eq!(age_words(Duration::from_millis(4_020)), "4 s ago");
        assert_eq!(clock_utc(1_700_000_000.0), "22:13:20");
        assert_eq!(clock_utc(f64::NAN), "00:00:00");
    }
}
