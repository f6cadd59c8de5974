//! io controller files: io.stat, io.max, io.weight, io.latency
//! (admin guide 5-3). Lines are keyed by "MAJ:MIN" device numbers.

use super::{Limit, ParseError};
use std::fmt;

/// A block device number, as the kernel prints it in io.* files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct DevId {
    pub major: u32,
    pub minor: u32,
}

impl DevId {
    pub fn parse(s: &str) -> Option<Self> {
        let (a, b) = s.split_once(':')?;
        Some(Self {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

impl fmt::Display for DevId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// One device's line of io.stat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IoStatDev {
    pub rbytes: u64,
    pub wbytes: u64,
    pub rios: u64,
    pub wios: u64,
    pub dbytes: u64,
    pub dios: u64,
}

/// io.stat: one entry per device. Lines with an unreadable device key
/// (e.g. "(unknown)") or no counters are skipped; a torn key=value pair
/// only loses that pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IoStat(pub Vec<(DevId, IoStatDev)>);

impl IoStat {
    pub fn parse(s: &str) -> Self {
        let mut out = Vec::new();
        for line in s.lines() {
            let mut it = line.split_ascii_whitespace();
            let Some(dev) = it.next().and_then(DevId::parse) else {
                continue;
            };
            let mut d = IoStatDev::default();
            let mut any = false;
            for kv in it {
                let Some((k, v)) = kv.split_once('=') else {
                    continue;
                };
                let Ok(v) = v.parse::<u64>() else { continue };
                let slot = match k {
                    "rbytes" => &mut d.rbytes,
                    "wbytes" => &mut d.wbytes,
                    "rios" => &mut d.rios,
                    "wios" => &mut d.wios,
                    "dbytes" => &mut d.dbytes,
                    "dios" => &mut d.dios,
                    _ => continue,
                };
                *slot = v;
                any = true;
            }
            if any {
                out.push((dev, d));
            }
        }
        Self(out)
    }

    /// Sum over all devices.
    pub fn total(&self) -> IoStatDev {
        self.0.iter().fold(IoStatDev::default(), |mut acc, (_, d)| {
            acc.rbytes += d.rbytes;
            acc.wbytes += d.wbytes;
            acc.rios += d.rios;
            acc.wios += d.wios;
            acc.dbytes += d.dbytes;
            acc.dios += d.dios;
            acc
        })
    }

    pub fn get(&self, dev: DevId) -> Option<&IoStatDev> {
        self.0.iter().find(|(d, _)| *d == dev).map(|(_, s)| s)
    }
}

/// One device's io.max line: each key "max" or a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IoMaxDev {
    pub dev: DevId,
    pub rbps: Limit,
    pub wbps: Limit,
    pub riops: Limit,
    pub wiops: Limit,
}

impl IoMaxDev {
    pub fn unlimited(dev: DevId) -> Self {
        Self {
            dev,
            rbps: Limit::Max,
            wbps: Limit::Max,
            riops: Limit::Max,
            wiops: Limit::Max,
        }
    }
}

impl fmt::Display for IoMaxDev {
    /// The kernel's read format, which it also accepts as input.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rbps={} wbps={} riops={} wiops={}",
            self.dev, self.rbps, self.wbps, self.riops, self.wiops
        )
    }
}

/// io.max: only devices with at least one limit are listed by the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IoMax(pub Vec<IoMaxDev>);

impl IoMax {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut out = Vec::new();
        for line in s.lines().filter(|l| !l.trim().is_empty()) {
            let mut it = line.split_ascii_whitespace();
            let dev = it
                .next()
                .and_then(DevId::parse)
                .ok_or_else(|| ParseError::new("io.max", format!("bad device in {line:?}")))?;
            let mut m = IoMaxDev::unlimited(dev);
            for kv in it {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| ParseError::new("io.max", format!("bad pair {kv:?}")))?;
                let v = Limit::parse("io.max", v)?;
                match k {
                    "rbps" => m.rbps = v,
                    "wbps" => m.wbps = v,
                    "riops" => m.riops = v,
                    "wiops" => m.wiops = v,
                    _ => {}
                }
            }
            out.push(m);
        }
        Ok(Self(out))
    }

    pub fn get(&self, dev: DevId) -> Option<&IoMaxDev> {
        self.0.iter().find(|m| m.dev == dev)
    }
}

/// io.weight: "default N" then "MAJ:MIN N" overrides (admin guide 5-3-1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IoWeight {
    pub default: u32,
    pub overrides: Vec<(DevId, u32)>,
}

impl IoWeight {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut default = None;
        let mut overrides = Vec::new();
        for line in s.lines().filter(|l| !l.trim().is_empty()) {
            let (k, v) = line
                .trim()
                .split_once(' ')
                .ok_or_else(|| ParseError::new("io.weight", format!("bad line {line:?}")))?;
            let v: u32 = v
                .trim()
                .parse()
                .map_err(|_| ParseError::new("io.weight", format!("bad weight in {line:?}")))?;
            if k == "default" {
                default = Some(v);
            } else if let Some(dev) = DevId::parse(k) {
                overrides.push((dev, v));
            }
        }
        Ok(Self {
            default: default.ok_or_else(|| ParseError::new("io.weight", "no default line"))?,
            overrides,
        })
    }
}

impl fmt::Display for IoWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "default {}", self.default)?;
        for (d, w) in &self.overrides {
            write!(f, "\n{d} {w}")?;
        }
        Ok(())
    }
}

/// io.latency: "MAJ:MIN target=USEC" per device (admin guide 5-3-3).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IoLatency(pub Vec<(DevId, u64)>);

impl IoLatency {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut out = Vec::new();
        for line in s.lines().filter(|l| !l.trim().is_empty()) {
            let mut it = line.split_ascii_whitespace();
            let dev = it
                .next()
                .and_then(DevId::parse)
                .ok_or_else(|| ParseError::new("io.latency", format!("bad device in {line:?}")))?;
            let target = it
                .find_map(|kv| kv.strip_prefix("target="))
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| ParseError::new("io.latency", format!("no target in {line:?}")))?;
            out.push((dev, target));
        }
        Ok(Self(out))
    }

    pub fn get(&self, dev: DevId) -> Option<u64> {
        self.0.iter().find(|(d, _)| *d == dev).map(|(_, t)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str =
        "7:7 \n7:6 \n254:0 rbytes=1102848 wbytes=4096 rios=57 wios=1 dbytes=0 dios=0\n";

    #[test]
    fn io_stat_real_text() {
        let s = IoStat::parse(FIXTURE);
        assert_eq!(s.0.len(), 1);
        let d = s
            .get(DevId {
                major: 254,
                minor: 0,
            })
            .unwrap();
        assert_eq!(
            (d.rbytes, d.wbytes, d.rios, d.wios),
            (1_102_848, 4096, 57, 1)
        );
    }

    #[test]
    fn io_stat_malformed() {
        let s = IoStat::parse("(unknown) rbytes=5\n8:0 rbytes=10 wbytes=2\n8:16 rbytes=7 wbyt");
        assert_eq!(s.0.len(), 2);
        assert_eq!(s.total().rbytes, 17);
        assert_eq!(s.total().wbytes, 2);
        // io.latency adds extra keys: they are ignored
        let s = IoStat::parse(
            "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0 depth=1 avg_lat=100 win=500\n",
        );
        assert_eq!(s.total().wios, 4);
    }

    #[test]
    fn io_max_round_trip() {
        let t = "8:16 rbps=2097152 wbps=max riops=max wiops=120";
        let m = IoMax::parse(t).unwrap();
        assert_eq!(m.0[0].to_string(), t);
        assert_eq!(m.0[0].rbps, Limit::Value(2_097_152));
        assert!(IoMax::parse("").unwrap().0.is_empty());
        assert!(IoMax::parse("8:16 rbps=lots").is_err());
        assert!(IoMax::parse("sda rbps=1").is_err());
    }

    #[test]
    fn io_weight_round_trip() {
        let t = "default 100\n8:16 200\n8:0 50";
        let w = IoWeight::parse(t).unwrap();
        assert_eq!(w.default, 100);
        assert_eq!(w.overrides.len(), 2);
        assert_eq!(w.to_string(), t);
        assert!(IoWeight::parse("8:0 50").is_err());
    }

    #[test]
    fn io_latency() {
        let l = IoLatency::parse("254:0 target=10000\n").unwrap();
        assert_eq!(
            l.get(DevId {
                major: 254,
                minor: 0
            }),
            Some(10_000)
        );
        assert!(IoLatency::parse("254:0 foo=1").is_err());
    }
}
