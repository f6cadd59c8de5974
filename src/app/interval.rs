//! The refresh interval's text: parsed from the command line, settings
//! or the interval prompt, and shown.

use std::time::Duration;

/// The most characters of an interval ("3600.000000"): a number that
/// long is out of range anyway.
pub const INTERVAL_CAP: usize = 16;

/// Parses a refresh interval in seconds ("2", "0.5"); 0.1 s to 1 hour.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("interval: {s:?} is not a number of seconds (e.g. 2 or 0.5)"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err(format!(
            "interval: {v} s is out of range (0.1 to 3600 seconds)"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}
