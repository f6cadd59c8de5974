//! Number formatting: binary units (1 MiB = 1024 KiB), the units the
//! kernel's limits use, and one mark for a figure there is not.

use crate::cgroupfs::io::IoMaxDev;
use crate::cgroupfs::Limit;
use std::fmt::Display;

/// A figure cgtop does not have: the controller is off, the file is
/// absent, or there is no rate yet this tick.
pub const MISSING: &str = "-";

/// The binary units after bytes, to the largest a `u64` reaches.
const BINARY: [&str; 6] = ["K", "M", "G", "T", "P", "E"];

/// `b` bytes in the largest binary unit (index into [`BINARY`], `None`
/// for plain bytes) in which the figure is under 1000, as htop shows
/// sizes: 1000 bytes is 0.98K, 1048575 is 1.00M (never "1024K").
/// `bytes_at` and `round_at` are the figures at which the text would
/// print 1000 bytes, and 1000 of a unit (999.5 with no decimal shown,
/// 999.995 with two).
fn binary_unit(b: f64, bytes_at: f64, round_at: f64) -> (f64, Option<usize>) {
    if b < bytes_at {
        return (b, None);
    }
    let mut v = b / 1024.0;
    let mut u = 0;
    while v >= round_at && u < BINARY.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    (v, Some(u))
}

/// "512", "4.0K", "1.5M", "10.5M", "512M", "2.0G": compact, for table
/// columns and rates. At most four characters before the unit, and under
/// 1000 of it: bytes from 0 to 999, then one decimal below 100 of a unit
/// ("1.0K" for 1000 to 1023 bytes, "1.0M" for 1 MiB and the KiB just
/// under it), then whole. So a cell is at most five characters ("99.9K",
/// "16.0E" for the largest `u64`).
pub fn bytes_short(b: u64) -> String {
    let (v, u) = binary_unit(b as f64, 999.5, 999.5);
    match u {
        None => format!("{b}"),
        Some(u) if v >= 99.95 => format!("{v:.0}{}", BINARY[u]),
        Some(u) => format!("{v:.1}{}", BINARY[u]),
    }
}

/// "4.00 KiB", "2.00 MiB", "0.98 KiB": for the detail pane. As
/// [`bytes_short`], the figure stays under 1000 of its unit.
pub fn bytes_long(b: f64) -> String {
    if !b.is_finite() || b < 0.0 {
        return format!("{b:.0} B");
    }
    match binary_unit(b, 999.5, 999.995) {
        (v, None) => format!("{v:.0} B"),
        (v, Some(u)) => format!("{v:.2} {}iB", BINARY[u]),
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

/// A count in at most five characters (the PIDS column): as it is
/// below 100000, then in thousands with a decimal unit ("100K", "4.2M",
/// "18E"); [`MISSING`] without one. A hostile or wrapped pids.current
/// (18446744073709551615) must not push the cells after it out of place.
pub fn count_short(n: Option<u64>) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    let Some(n) = n else {
        return MISSING.into();
    };
    if n < 100_000 {
        return n.to_string();
    }
    let mut v = n as f64 / 1000.0;
    let mut u = 0;
    while v >= 999.5 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if v >= 9.95 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
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
/// from 999.5 up, so a busy machine's figure keeps its column), and past
/// 99999 in thousands with a unit as [`count_short`] ("1.8T"): a user's
/// own cpu.max of the largest quota over the smallest period is not 13
/// digits on the operator's screen.
pub fn pct(p: Option<f64>) -> String {
    match p {
        None => MISSING.into(),
        Some(v) if v >= 99_999.5 => count_short(Some(v.round() as u64)),
        Some(v) if v >= 999.5 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// A number of CPUs (a cpu.max quota over its period): "0.50", "12.5",
/// "1200", then in thousands with a unit as [`count_short`] ("18G"): a
/// user's largest quota over the smallest period is not 14 digits. Below
/// 0.005 with three decimals ("0.001", the smallest quota over the
/// longest period), so that a quota is never shown as "0.00", which
/// reads as none.
pub fn cpus_short(c: f64) -> String {
    match c {
        c if c > 0.0 && c < 0.005 => format!("{c:.3}"),
        c if c < 9.995 => format!("{c:.2}"),
        c if c < 99.95 => format!("{c:.1}"),
        c => count_short(Some(c.round() as u64)),
    }
}

/// Milliseconds from microseconds (io.latency's target): "10.0",
/// "250.0", then whole and past 99999 with a unit as [`count_short`]
/// ("18P" for the largest `u64` of microseconds).
pub fn ms_short(usec: u64) -> String {
    let ms = usec as f64 / 1000.0;
    if ms < 999.95 {
        format!("{ms:.1}")
    } else {
        count_short(Some(ms.round() as u64))
    }
}

/// A percentage with its sign, for words rather than columns: "100%",
/// "40.6%", "1200%" (the decimal dropped when it is 0, or the figure is
/// 999.5 or more, as [`pct`]).
pub fn pct_sign(v: f64) -> String {
    let t = pct(Some(v));
    format!("{}%", t.strip_suffix(".0").unwrap_or(&t))
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

/// A size as an operator types it (`model::write::input` reads it back):
/// "1.5G", "512M", "4K", "100". The largest binary unit in which the
/// figure has at most two decimals and at most four digits before the
/// point, so that the text parses back to exactly these bytes. `None`
/// when there is no such short text (1000000000 bytes is 953.67431640625M).
pub fn size_exact(b: u64) -> Option<String> {
    const UNITS: [(&str, u32); 4] = [("T", 40), ("G", 30), ("M", 20), ("K", 10)];
    if b < 1024 {
        return Some(b.to_string());
    }
    for (unit, shift) in UNITS {
        let mult = 1u128 << shift;
        let hundredths = u128::from(b) * 100;
        if u128::from(b) < mult || hundredths % mult != 0 {
            continue;
        }
        let v = hundredths / mult;
        let (int, frac) = (v / 100, v % 100);
        if int >= 10_000 {
            return None;
        }
        return Some(match frac {
            0 => format!("{int}{unit}"),
            f if f % 10 == 0 => format!("{int}.{}{unit}", f / 10),
            f => format!("{int}.{f:02}{unit}"),
        });
    }
    None
}

/// A size as an operator types it: [`size_exact`], or, where there is no
/// short exact text, the compact figure after a `~` that says it is
/// rounded ("~954M"; the raw page has the bytes).
pub fn size_typed(b: u64) -> String {
    size_exact(b).unwrap_or_else(|| format!("~{}", bytes_short(b)))
}

/// A byte limit as an operator types it: "max" or [`size_typed`].
pub fn limit_typed(l: Limit) -> String {
    match l {
        Limit::Max => "max".into(),
        Limit::Value(v) => size_typed(v),
    }
}

/// A duration in microseconds as an operator types it, exact: "10ms",
/// "1s", "500us" (the unit kept whole).
pub fn usec_typed(us: u64) -> String {
    if us > 0 && us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us > 0 && us % 1_000 == 0 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// One device's io.max limits as the limits form takes them, the keys
/// without a limit left out: "rbps=2M wiops=100" ("" when none is set).
pub fn io_max_typed(m: &IoMaxDev) -> String {
    [
        ("rbps", m.rbps, true),
        ("wbps", m.wbps, true),
        ("riops", m.riops, false),
        ("wiops", m.wiops, false),
    ]
    .into_iter()
    .filter(|(_, l, _)| *l != Limit::Max)
    .map(|(k, l, bytes)| {
        let v = if bytes {
            limit_typed(l)
        } else {
            limit_count(l)
        };
        format!("{k}={v}")
    })
    .collect::<Vec<_>>()
    .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::input::{parse_io_latency, parse_memory, MemoryFile};
    use proptest::prelude::*;

    #[test]
    fn a_count_fits_five_characters() {
        for (n, t) in [
            (Some(0), "0"),
            (Some(99_999), "99999"),
            (Some(100_000), "100K"),
            (Some(999_499), "999K"),
            (Some(999_500), "1.0M"),
            (Some(4_194_304), "4.2M"),
            (Some(u64::MAX), "18E"),
            (None, MISSING),
        ] {
            assert_eq!(count_short(n), t, "{n:?}");
        }
    }

    #[test]
    fn sizes_show_as_typed_and_read_back_exactly() {
        for (b, t) in [
            (0, "0"),
            (1023, "1023"),
            (1024, "1K"),
            (1536, "1.5K"),
            (1_610_612_736, "1.5G"),
            (536_870_912, "512M"),
            (1_342_177_280, "1.25G"),
            (3 << 40, "3T"),
            // four digits before the point at most
            (9999 << 20, "9999M"),
            (10_000 << 20, "9.77G"),
        ] {
            // 10000M is 9.765625G: no short exact text
            if b == 10_000 << 20 {
                assert_eq!(size_exact(b), None);
                assert_eq!(size_typed(b), "~9.8G");
                continue;
            }
            assert_eq!(size_exact(b).as_deref(), Some(t), "{b}");
            assert_eq!(parse_memory(MemoryFile::Max, t), Ok(Limit::Value(b)), "{t}");
        }
        // page-aligned but not short: said to be rounded
        assert_eq!(size_typed(1_000_000_000), "~954M");
        assert_eq!(size_typed(6_871_945_216), "~6.4G");
        assert_eq!(limit_typed(Limit::Max), "max");
    }

    #[test]
    fn durations_keep_a_whole_unit() {
        for (us, t) in [
            (10_000, "10ms"),
            (500, "500us"),
            (2_000_000, "2s"),
            (1_500, "1500us"),
        ] {
            assert_eq!(usec_typed(us), t);
            assert_eq!(parse_io_latency(t), Ok(Some(us)), "{t}");
        }
    }

    #[test]
    fn io_max_shows_only_the_keys_with_a_limit() {
        let mut m = IoMaxDev::unlimited(crate::cgroupfs::io::DevId {
            major: 254,
            minor: 0,
        });
        assert_eq!(io_max_typed(&m), "");
        m.wbps = Limit::Value(2 << 20);
        m.riops = Limit::Value(100);
        assert_eq!(io_max_typed(&m), "wbps=2M riops=100");
    }

    proptest! {
        /// Whatever the figure, a short text reads back as the same bytes,
        /// and one that is not exact says so.
        #[test]
        fn a_shown_size_is_exact_or_marked(b in any::<u64>()) {
            match size_exact(b) {
                Some(t) => prop_assert_eq!(parse_memory(MemoryFile::Max, &t), Ok(Limit::Value(b))),
                None => prop_assert!(size_typed(b).starts_with('~')),
            }
        }

        #[test]
        fn a_shown_aligned_size_reads_back(n in 0u64..(1 << 24), shift in 0u32..30) {
            let b = n << shift;
            if let Some(t) = size_exact(b) {
                prop_assert_eq!(parse_memory(MemoryFile::Max, &t), Ok(Limit::Value(b)));
            }
        }
    }

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
    fn a_size_keeps_under_a_thousand_of_its_unit() {
        const K: u64 = 1024;
        for (b, short, long) in [
            (0, "0", "0 B"),
            (999, "999", "999 B"),
            (1000, "1.0K", "0.98 KiB"),
            (1023, "1.0K", "1.00 KiB"),
            (1024, "1.0K", "1.00 KiB"),
            (1535, "1.5K", "1.50 KiB"),
            (102_348, "99.9K", "99.95 KiB"),
            (102_349, "100K", "99.95 KiB"),
            (999 * K, "999K", "999.00 KiB"),
            (1_023_487, "999K", "999.50 KiB"),
            (1_023_488, "1.0M", "999.50 KiB"),
            (1_048_575, "1.0M", "1.00 MiB"),
            (1_048_576, "1.0M", "1.00 MiB"),
            (1_572_864, "1.5M", "1.50 MiB"),
            (11_010_048, "10.5M", "10.50 MiB"),
            ((1 << 30) - 1, "1.0G", "1.00 GiB"),
            (1 << 60, "1.0E", "1.00 EiB"),
            (u64::MAX, "16.0E", "16.00 EiB"),
        ] {
            assert_eq!(bytes_short(b), short, "{b}");
            assert_eq!(bytes_long(b as f64), long, "{b}");
            // a rate is the same text
            assert_eq!(rate_short(Some(b as f64)), short, "{b}/s");
        }
    }

    #[test]
    fn a_compact_figure_is_at_most_four_characters_and_a_unit() {
        // every power of two, and one either side: never "1024K", never
        // a sixth character
        for shift in 0..64 {
            for b in [(1u64 << shift) - 1, 1 << shift, (1 << shift) + 1] {
                let t = bytes_short(b);
                let (fig, unit) =
                    t.split_at(t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len()));
                assert!(fig.len() <= 4 && unit.len() <= 1, "{b}: {t}");
                assert!(fig.parse::<f64>().unwrap() < 1000.0, "{b}: {t}");
            }
        }
        assert_eq!(rate_short(Some(1_048_576.0)), "1.0M", "1 MiB/s");
        assert_eq!(rate_short(Some(1_048_575.4)), "1.0M");
        assert_eq!(limit_rate(Limit::Value(1_048_575)), "1.00 MiB/s");
    }

    #[test]
    fn a_percentage_in_words_has_its_sign() {
        assert_eq!(pct_sign(100.0), "100%");
        assert_eq!(pct_sign(40.64), "40.6%");
        assert_eq!(pct_sign(10.0), "10%");
        assert_eq!(pct_sign(1200.4), "1200%");
        assert_eq!(pct_sign(99_999.0), "99999%");
        // cpu.max 17592186044415 1000 (v1's largest quota, smallest period)
        assert_eq!(pct_sign(1_759_218_604_441.5), "1.8T%");
        // the same quota in CPUs, and io.latency's largest target
        assert_eq!(cpus_short(17_592_186_044.415), "18G");
        assert_eq!(cpus_short(0.5), "0.50");
        // cpu.max "1000 1000000": the smallest quota, not "0.00"
        assert_eq!(cpus_short(0.001), "0.001");
        assert_eq!(cpus_short(0.0), "0.00");
        assert_eq!(cpus_short(12.5), "12.5");
        assert_eq!(ms_short(10_000), "10.0");
        assert_eq!(ms_short(u64::MAX), "18P");
        assert_eq!(pct_sign(f64::INFINITY), "18E%");
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
