//! Pressure stall information: cpu.pressure, memory.pressure, io.pressure
//! (admin guide "PSI - Pressure Stall Information" and
//! Documentation/accounting/psi.rst).

use super::ParseError;

/// One "some" or "full" line: averages in percent, total in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_usec: u64,
}

/// A pressure file. `full` is absent for cpu on older kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Pressure {
    pub some: PressureLine,
    pub full: Option<PressureLine>,
}

impl Pressure {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut some = None;
        let mut full = None;
        for line in s.lines() {
            let mut it = line.split_ascii_whitespace();
            let slot = match it.next() {
                Some("some") => &mut some,
                Some("full") => &mut full,
                _ => continue,
            };
            let mut p = PressureLine::default();
            let mut ok = 0;
            for kv in it {
                let Some((k, v)) = kv.split_once('=') else {
                    continue;
                };
                match k {
                    "avg10" => p.avg10 = percent(v).ok_or_else(|| bad(line))?,
                    "avg60" => p.avg60 = percent(v).ok_or_else(|| bad(line))?,
                    "avg300" => p.avg300 = percent(v).ok_or_else(|| bad(line))?,
                    "total" => p.total_usec = v.parse().map_err(|_| bad(line))?,
                    _ => continue,
                }
                ok += 1;
            }
            if ok == 4 {
                *slot = Some(p);
            }
        }
        let some = some.ok_or_else(|| ParseError::new("pressure", "no \"some\" line"))?;
        Ok(Self { some, full })
    }
}

/// An average as the kernel prints it: a share of time in percent, so
/// 0 to 100. `f64::from_str` also takes "NaN", "inf", "-1" and "1e308",
/// which no kernel writes and which would show as such (or overflow a
/// cell): refused like any other malformed figure.
fn percent(v: &str) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && (0.0..=100.0).contains(p))
}

fn bad(line: &str) -> ParseError {
    ParseError::new("pressure", format!("bad line {line:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_both_lines() {
        let p = Pressure::parse(
            "some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\nfull avg10=0.75 avg60=0.10 avg300=0.00 total=6543\n",
        )
        .unwrap();
        assert!((p.some.avg10 - 1.5).abs() < 1e-9);
        assert_eq!(p.some.total_usec, 123_456);
        assert_eq!(p.full.unwrap().total_usec, 6543);
    }

    #[test]
    fn malformed() {
        assert!(Pressure::parse("").is_err());
        assert!(Pressure::parse("some avg10=x avg60=0 avg300=0 total=1").is_err());
        // f64 parsing takes these; no kernel writes them
        for v in ["NaN", "inf", "-inf", "-1", "100.01", "1e308"] {
            let t = format!("some avg10={v} avg60=0 avg300=0 total=1");
            assert!(Pressure::parse(&t).is_err(), "{v}");
        }
        assert!(Pressure::parse("some avg10=100.00 avg60=0 avg300=0 total=1").is_ok());
        // torn full line: some is kept, full dropped
        let p = Pressure::parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.0")
            .unwrap();
        assert!(p.full.is_none());
    }
}
