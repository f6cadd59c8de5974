//! cpu controller files: cpu.stat, cpu.max, cpu.weight (admin guide 5-1).

use super::{flat, ParseError};
use std::fmt;

/// cpu.stat. `usage/user/system` exist on every group (even without the cpu
/// controller); the throttling fields only when cpu is enabled. Only
/// `usage_usec` is required; any other key the file lacks is `None`. The
/// keys without a field here (`nr_bursts`, `burst_usec`, `nice_usec`,
/// `core_sched.force_idle_usec`, ...) are kept by [`super::Keyed`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CpuStat {
    pub usage_usec: u64,
    pub user_usec: Option<u64>,
    pub system_usec: Option<u64>,
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_usec: Option<u64>,
}

impl CpuStat {
    /// In the kernel's order, which [`flat::values`] tries first.
    const KEYS: [&'static str; 6] = [
        "usage_usec",
        "user_usec",
        "system_usec",
        "nr_periods",
        "nr_throttled",
        "throttled_usec",
    ];

    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let [usage, user_usec, system_usec, nr_periods, nr_throttled, throttled_usec] =
            flat::values(s, &Self::KEYS);
        Ok(Self {
            usage_usec: usage.ok_or_else(|| ParseError::new("cpu.stat", "no usage_usec line"))?,
            user_usec,
            system_usec,
            nr_periods,
            nr_throttled,
            throttled_usec,
        })
    }
}

/// cpu.stat.local (Linux 6.6, commit 677ea015f231 "sched: add throttled
/// time stat for throttled children"): `throttled_usec` is the time this
/// group's runqueues were throttled, by its own cpu.max or any ancestor's,
/// while it had something to run, summed over CPUs (cpu.stat's counts only
/// its own cpu.max). The file is empty where the group has no cpu
/// controller (cgroup v1 holds it, or the parent does not hand it down).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CpuStatLocal {
    pub throttled_usec: Option<u64>,
}

impl CpuStatLocal {
    /// Never fails: an empty file, or one without the key, is `None`.
    pub fn parse(s: &str) -> Self {
        Self {
            throttled_usec: flat::values(s, &["throttled_usec"])[0],
        }
    }
}

/// cpu.max: "$MAX $PERIOD", where $MAX is "max" for no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CpuMax {
    /// Microseconds the group may run per period; `None` is "max".
    pub quota: Option<u64>,
    /// The period in microseconds.
    pub period: u64,
}

impl CpuMax {
    /// The kernel default: no quota, 100 ms period.
    pub const DEFAULT_PERIOD: u64 = 100_000;

    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let mut it = s.split_ascii_whitespace();
        let (Some(q), Some(p), None) = (it.next(), it.next(), it.next()) else {
            return Err(ParseError::new(
                "cpu.max",
                format!("expected \"QUOTA PERIOD\", got {:?}", s.trim()),
            ));
        };
        let quota = if q == "max" {
            None
        } else {
            Some(
                q.parse()
                    .map_err(|_| ParseError::new("cpu.max", format!("bad quota {q:?}")))?,
            )
        };
        let period = p
            .parse()
            .map_err(|_| ParseError::new("cpu.max", format!("bad period {p:?}")))?;
        Ok(Self { quota, period })
    }

    /// The limit in CPUs (1.0 = one core), `None` when unlimited.
    pub fn cpus(&self) -> Option<f64> {
        match self.quota {
            Some(q) if self.period > 0 => Some(q as f64 / self.period as f64),
            _ => None,
        }
    }
}

impl fmt::Display for CpuMax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.quota {
            None => write!(f, "max {}", self.period),
            Some(q) => write!(f, "{q} {}", self.period),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT_HYBRID: &str = "usage_usec 34100000\nuser_usec 12692000\nsystem_usec 21408000\n";
    const WITH_CPU: &str = "usage_usec 1164239\nuser_usec 1160000\nsystem_usec 4239\nnr_periods 23\nnr_throttled 22\nthrottled_usec 1053424\nnr_bursts 0\nburst_usec 0\n";

    #[test]
    fn cpu_stat_without_controller() {
        let s = CpuStat::parse(ROOT_HYBRID).unwrap();
        assert_eq!(s.usage_usec, 34_100_000);
        assert_eq!(s.nr_throttled, None);
    }

    #[test]
    fn cpu_stat_with_controller() {
        let s = CpuStat::parse(WITH_CPU).unwrap();
        assert_eq!(s.nr_throttled, Some(22));
        assert_eq!(s.throttled_usec, Some(1_053_424));
    }

    #[test]
    fn cpu_stat_malformed() {
        assert!(CpuStat::parse("").is_err());
        assert!(CpuStat::parse("usage_usec\n").is_err());
        // a torn last line loses only that line
        let s = CpuStat::parse("usage_usec 5\nuser_usec 3\nsystem_us").unwrap();
        assert_eq!(
            (s.usage_usec, s.user_usec, s.system_usec),
            (5, Some(3), None)
        );
    }

    #[test]
    fn cpu_stat_local() {
        // a Linux 6.10 capture, and the empty file of a hybrid host
        let l = CpuStatLocal::parse("throttled_usec 0\n");
        assert_eq!(l.throttled_usec, Some(0));
        let l = CpuStatLocal::parse("throttled_usec 781234\n");
        assert_eq!(l.throttled_usec, Some(781_234));
        assert_eq!(CpuStatLocal::parse("").throttled_usec, None);
        assert_eq!(
            CpuStatLocal::parse("throttled_usec x\n").throttled_usec,
            None
        );
    }

    #[test]
    fn cpu_max_round_trip() {
        for t in [
            "max 100000",
            "50000 100000",
            "150000 100000",
            "1000 1000000",
        ] {
            assert_eq!(CpuMax::parse(t).unwrap().to_string(), t);
        }
        let half = CpuMax::parse("50000 100000\n").unwrap();
        assert_eq!(half.cpus(), Some(0.5));
        assert_eq!(CpuMax::parse("max 100000").unwrap().cpus(), None);
        assert!(CpuMax::parse("50000").is_err());
        assert!(CpuMax::parse("-5 100000").is_err());
        assert!(CpuMax::parse("5 100000 7").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn cpu_max_prints_and_parses_back(
            quota in proptest::option::of(proptest::prelude::any::<u64>()),
            period in proptest::prelude::any::<u64>(),
        ) {
            let m = CpuMax { quota, period };
            proptest::prop_assert_eq!(CpuMax::parse(&format!("{m}\n")), Ok(m));
        }
    }
}
