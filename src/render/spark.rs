//! Sparklines: a series of figures as a line of block characters
//! (U+2581 `▁` to U+2588 `█`), the newest at the right, and the words
//! that go with one (its scale, min, a limit's mark, the span it covers).
//! PURE: the detail pane's history (live, in the past, in a replay) and
//! the tree's sparkline column draw every history with them.
//!
//! One scale rule, here and nowhere else ([`Scale::of`]): the full block
//! stands for the larger of the highest figure shown and the figure's
//! floor: 100 for a percentage (CPU: one core, or the machine with
//! `CPU%: of N CPUs`; PSI: stalled the whole time), 0 for bytes and
//! rates. The line says its scale (`0..100%`, `0..max 240%`). A limit is
//! never the scale: it is a mark in the words (`limit 10% ▁`, the block
//! the limit reaches, `↑` when it is above the scale), so a series that
//! ran at 40 % and then under a new 10 % quota reads as the drop it was,
//! the same in every view, and a figure above a limit is drawn at its
//! own height, not as a full block.

use std::time::Duration;

/// The eight heights, lowest first.
pub const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The tree's sparkline column (`s`): its title and cells.
pub const COLUMN_TITLE: &str = "CPU HIST";
pub const COLUMN_WIDTH: usize = 10;

/// A cell with no figure (the group was not there, or had no figure).
pub const GAP: char = ' ';

/// The floor of a percentage's scale (CPU %, PSI %): a full block is at
/// least 100 %, so an idle group reads idle.
pub const PCT_FLOOR: f64 = 100.0;

/// The floor of a byte or rate scale: none, the peak shown is the top.
pub const BYTES_FLOOR: f64 = 0.0;

/// The mark of a limit above the scale's top.
pub const ABOVE: char = '↑';

/// A sparkline's scale: what the full block stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The figure of the full block.
    pub top: f64,
    /// Whether the top is the highest figure shown (above the floor).
    pub peak: bool,
}

impl Scale {
    /// THE scale rule: the last `width` figures of `series` (what a line
    /// of that width shows) against the larger of their highest and
    /// `floor` ([`PCT_FLOOR`], [`BYTES_FLOOR`]). No limit goes in.
    #[must_use]
    pub fn of(series: &[Option<f64>], width: usize, floor: f64) -> Self {
        let hi = min_max(series, width).map_or(0.0, |(_, hi)| hi);
        // without a floor the top is the peak, even a peak of 0
        if hi > floor || floor <= 0.0 {
            Self {
                top: hi,
                peak: true,
            }
        } else {
            Self {
                top: floor,
                peak: false,
            }
        }
    }

    /// The scale as the line says it, each figure as `say` puts it:
    /// "0..100%", "0..max 40.6%".
    #[must_use]
    pub fn words(&self, say: &dyn Fn(f64) -> String) -> String {
        if self.peak {
            format!("0..max {}", say(self.top))
        } else {
            format!("0..{}", say(self.top))
        }
    }

    /// A limit's mark: the block a figure at the limit is drawn as, or
    /// [`ABOVE`] when the limit is above the scale's top.
    #[must_use]
    pub fn mark(&self, limit: f64) -> char {
        if limit > self.top {
            ABOVE
        } else {
            BLOCKS[level(limit, self.top)]
        }
    }
}

/// The last `width` figures of `series` (oldest first) as a sparkline of
/// exactly `width` cells: the newest at the right, blank cells at the
/// left while the series is shorter, [`GAP`] for `None`. Every figure is
/// at least the lowest block, so a zero reads as "there, idle" and a gap
/// as "not there"; a figure above `scale.top` (there is none with
/// [`Scale::of`]) is a full block.
#[must_use]
pub fn line(series: &[Option<f64>], width: usize, scale: Scale) -> String {
    let shown = &series[series.len().saturating_sub(width)..];
    let mut out = GAP.to_string().repeat(width - shown.len());
    for v in shown {
        out.push(match v {
            Some(v) if v.is_finite() => BLOCKS[level(*v, scale.top)],
            _ => GAP,
        });
    }
    out
}

/// The tree's sparkline cell of a group's CPU %: its last
/// [`COLUMN_WIDTH`] refreshes, on the one scale rule ([`Scale::of`],
/// [`PCT_FLOOR`]) as the detail draws them.
#[must_use]
pub fn cpu_cell(series: &[Option<f64>]) -> String {
    line(
        series,
        COLUMN_WIDTH,
        Scale::of(series, COLUMN_WIDTH, PCT_FLOOR),
    )
}

/// Which block a figure takes on a scale to `top`: each block an eighth
/// of it, the lowest from just above zero (and at zero).
fn level(v: f64, top: f64) -> usize {
    if top.is_nan() || top <= 0.0 || v <= 0.0 {
        return 0;
    }
    let f = (v / top).min(1.0);
    // 0 < f <= 1 -> 0..=7
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

    fn peak(series: &[Option<f64>], w: usize) -> Scale {
        Scale::of(series, w, BYTES_FLOOR)
    }

    #[test]
    fn a_line_is_as_wide_as_asked_with_the_newest_at_the_right() {
        let s = [Some(0.0), Some(50.0), Some(100.0)];
        assert_eq!(line(&s, 3, peak(&s, 3)), "▁▄█");
        assert_eq!(
            line(&s, 5, peak(&s, 5)),
            "  ▁▄█",
            "short: blank at the left"
        );
        assert_eq!(line(&s, 2, peak(&s, 2)), "▄█", "long: the oldest dropped");
        assert_eq!(line(&s, 0, peak(&s, 0)), "");
    }

    #[test]
    fn a_gap_is_blank_and_zero_is_the_lowest_block() {
        let s = [Some(10.0), None, Some(0.0), Some(f64::NAN)];
        assert_eq!(line(&s, 4, peak(&s, 4)), "█ ▁ ");
        assert_eq!(line(&[None, None], 2, peak(&[None, None], 2)), "  ");
        let zeros = [Some(0.0), Some(0.0)];
        assert_eq!(line(&zeros, 2, peak(&zeros, 2)), "▁▁");
        // a tiny figure is still above zero: the lowest block, not a gap
        let tiny = [Some(1e-9)];
        assert_eq!(line(&tiny, 1, Scale::of(&tiny, 1, PCT_FLOOR)), "▁");
    }

    #[test]
    fn the_top_is_the_peak_shown_or_the_floor() {
        // a percentage under 100: the floor, said as a fixed scale
        let s = [Some(40.6), Some(35.0), Some(10.0), Some(9.0)];
        let sc = Scale::of(&s, 4, PCT_FLOOR);
        assert_eq!(
            sc,
            Scale {
                top: 100.0,
                peak: false
            }
        );
        let pct = crate::render::units::pct_sign;
        assert_eq!(sc.words(&pct), "0..100%");
        // above the floor: the peak of what is shown, not of what is not
        let s = [Some(400.0), Some(50.0), Some(240.0)];
        assert_eq!(
            Scale::of(&s, 2, PCT_FLOOR),
            Scale {
                top: 240.0,
                peak: true
            }
        );
        assert_eq!(Scale::of(&s, 2, PCT_FLOOR).words(&pct), "0..max 240%");
        assert_eq!(Scale::of(&s[..2], 1, 10.0).words(&pct), "0..max 50%");
        let odd = [Some(40.64)];
        assert_eq!(Scale::of(&odd, 1, 0.0).words(&pct), "0..max 40.6%");
        // bytes: the peak, whatever it is; nothing shown: a top of 0
        let b = [Some(1.5), Some(3.0)];
        assert_eq!(
            Scale::of(&b, 2, BYTES_FLOOR),
            Scale {
                top: 3.0,
                peak: true
            }
        );
        assert_eq!(
            Scale::of(&[None], 1, BYTES_FLOOR),
            Scale {
                top: 0.0,
                peak: true
            }
        );
        let idle = [Some(0.0), Some(0.0)];
        assert_eq!(
            Scale::of(&idle, 2, BYTES_FLOOR),
            Scale {
                top: 0.0,
                peak: true
            }
        );
        assert_eq!(
            Scale::of(&idle, 2, PCT_FLOOR),
            Scale {
                top: 100.0,
                peak: false
            }
        );
        assert_eq!(
            Scale::of(&[Some(f64::INFINITY), Some(2.0)], 2, 0.0),
            Scale {
                top: 2.0,
                peak: true
            }
        );
    }

    #[test]
    fn each_block_is_an_eighth_of_the_top() {
        let sc = Scale {
            top: 100.0,
            peak: false,
        };
        let s: Vec<Option<f64>> = [0.0, 12.5, 12.6, 25.0, 50.0, 87.5, 87.6, 100.0]
            .into_iter()
            .map(Some)
            .collect();
        assert_eq!(line(&s, 8, sc), "▁▁▂▂▄▇██");
        // beyond the top (a scale made by hand): capped
        assert_eq!(line(&[Some(400.0)], 1, sc), "█");
        let zero = Scale {
            top: 0.0,
            peak: false,
        };
        assert_eq!(line(&[Some(5.0)], 1, zero), "▁");
    }

    #[test]
    fn a_limit_is_a_mark_not_the_top() {
        // 30-40 % of a core, then under a new 10 % quota: the drop shows,
        // and nothing under or over the quota is a full block
        let s = [Some(38.0), Some(31.0), Some(40.6), Some(10.0), Some(9.9)];
        let sc = Scale::of(&s, 5, PCT_FLOOR);
        assert_eq!(line(&s, 5, sc), "▄▃▄▁▁");
        assert_eq!(sc.mark(10.0), '▁', "the block a figure at the limit takes");
        // a limit above every figure: above the scale, said so
        let mem = [Some(100.0), Some(200.0)];
        let sc = Scale::of(&mem, 2, BYTES_FLOOR);
        assert_eq!(line(&mem, 2, sc), "▄█");
        assert_eq!(sc.mark(1000.0), ABOVE);
        assert_eq!(sc.mark(100.0), '▄');
        // a figure above its limit is drawn at its own height
        let over = [Some(10.0), Some(30.0), Some(90.0)];
        let sc = Scale::of(&over, 3, PCT_FLOOR);
        assert_eq!(line(&over, 3, sc), "▁▃█");
        assert_eq!(sc.mark(20.0), '▂');
    }

    #[test]
    fn the_column_is_drawn_on_the_same_rule_as_the_detail() {
        let idle = [Some(1.0), Some(2.0), Some(1.0)];
        assert_eq!(cpu_cell(&idle), "       ▁▁▁", "an idle group reads idle");
        let busy = [Some(100.0), Some(400.0), Some(200.0)];
        assert_eq!(cpu_cell(&busy), "       ▂█▄");
        assert_eq!(cpu_cell(&[]).chars().count(), COLUMN_WIDTH);
        // the column's cells are the detail's last cells, whatever the
        // series: the same scale of the same figures
        let s: Vec<Option<f64>> = [38.0, 31.0, 40.6, 35.0, 33.0, 10.0, 9.9, 10.1, 9.0, 10.0]
            .into_iter()
            .map(Some)
            .collect();
        let detail = line(&s, 10, Scale::of(&s, 10, PCT_FLOOR));
        assert_eq!(cpu_cell(&s), detail);
        assert_eq!(cpu_cell(&s), "▄▃▄▃▃▁▁▁▁▁");
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
