//! Number formatting: binary units (1 MiB = 1024 KiB), the units the
//! kernel's limits use, and one mark for a figure there is not.

use crate::cgroupfs::Limit;
use std::fmt::Display;

/// A figure cgtop does not have: the controller is off, the file is
/// absent, or there is no rate yet this tick.
pub const MISSING: &str = "-";

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

/// [`bytes_short`], or [`MISSING`].
pub fn bytes_cell(b: Option<u64>) -> String {
    b.map_or_else(|| MISSING.into(), bytes_short)
}

/// A count as it is ("12"), or [`MISSING`].
pub fn count_cell(n: Option<impl Display>) -> String {
    n.map_or_else(|| MISSING.into(), |n| n.to_string())
}

/// A rate column: [`MISSING`] when there is no rate this tick, "0" below
/// half a byte a second.
pub fn rate_short(r: Option<f64>) -> String {
    match r {
        None => MISSING.into(),
        Some(v) if v < 0.5 => "0".into(),
        Some(v) => bytes_short(v.round() as u64),
    }
}

/// A percentage without the sign: "49.9", "100.0", "1200" (no decimal
/// from 999.5 up, so a busy machine's figure keeps its column).
pub fn pct(p: Option<f64>) -> String {
    match p {
        None => MISSING.into(),
        Some(v) if v >= 999.5 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// A byte limit: "max" or the byte size ([`bytes_short`]).
pub fn limit_bytes(l: Option<Limit>) -> String {
    match l {
        None => MISSING.into(),
        Some(Limit::Max) => "max".into(),
        Some(Limit::Value(v)) => bytes_short(v),
    }
}

/// A limit on a count (io.max's riops): "max" or the number.
pub fn limit_count(l: Limit) -> String {
    match l {
        Limit::Max => "max".into(),
        Limit::Value(v) => v.to_string(),
    }
}

/// A limit on bytes a second (io.max's rbps): "max" or "2.00 MiB/s".
pub fn limit_rate(l: Limit) -> String {
    match l {
        Limit::Max => "max".into(),
        Limit::Value(v) => format!("{}/s", bytes_long(v as f64)),
    }
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
    }

    #[test]
    fn a_missing_figure_is_one_dash_everywhere() {
        assert_eq!(bytes_cell(None), MISSING);
        assert_eq!(count_cell(None::<u64>), MISSING);
        assert_eq!(pct(None), MISSING);
        assert_eq!(limit_bytes(None), MISSING);
        assert_eq!(bytes_cell(Some(1536)), "1.5K");
        assert_eq!(count_cell(Some(12u64)), "12");
    }

    #[test]
    fn limits_say_max_or_their_unit() {
        assert_eq!(limit_bytes(Some(Limit::Max)), "max");
        assert_eq!(limit_bytes(Some(Limit::Value(1 << 30))), "1.0G");
        assert_eq!(limit_count(Limit::Max), "max");
        assert_eq!(limit_count(Limit::Value(1000)), "1000");
        assert_eq!(limit_rate(Limit::Max), "max");
        assert_eq!(limit_rate(Limit::Value(2 << 20)), "2.00 MiB/s");
    }

    #[test]
    fn percentages_drop_the_decimal_only_when_wide() {
        assert_eq!(pct(Some(999.4)), "999.4");
        assert_eq!(pct(Some(999.5)), "1000");
        assert_eq!(pct(Some(1200.0)), "1200");
    }
}
