//! Rates between two samples of the same group: pure functions of the two
//! samples and the elapsed time. A counter that went backwards, or a group
//! that was recreated (new inode), gives no rate for that tick rather than
//! an absurd one.

use super::GroupSample;
use crate::cgroupfs::io::{IoStat, IoStatDev, IoStatDevice};
use std::collections::HashMap;
use std::time::Duration;

/// Byte and operation rates, per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct IoRates {
    pub rbps: f64,
    pub wbps: f64,
    pub riops: f64,
    pub wiops: f64,
}

/// Rates of one group over one interval. `None` means "no rate this tick".
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GroupRates {
    /// CPU time per wall time, in percent of one CPU (100 = one core busy).
    pub cpu_pct: Option<f64>,
    pub user_pct: Option<f64>,
    pub system_pct: Option<f64>,
    /// Periods throttled per second (cpu.stat nr_throttled).
    pub throttled_per_s: Option<f64>,
    /// Throttled time per wall time, in percent.
    pub throttled_pct: Option<f64>,
    /// cpu.stat.local's throttled_usec per wall time, in percent: this
    /// group's time throttled by any cpu.max on its path. Only where the
    /// collector read the file on both ends of the window.
    pub throttled_local_pct: Option<f64>,
    /// Sum over devices.
    pub io: Option<IoRates>,
    pub io_by_dev: Vec<(IoStatDevice, IoRates)>,
}

fn delta(a: u64, b: u64) -> Option<u64> {
    b.checked_sub(a)
}

/// Percent of one CPU from a microsecond counter.
fn pct(a: u64, b: u64, secs: f64) -> Option<f64> {
    delta(a, b).map(|d| d as f64 / (secs * 1e6) * 100.0)
}

fn per_s(a: u64, b: u64, secs: f64) -> Option<f64> {
    delta(a, b).map(|d| d as f64 / secs)
}

/// A rate of a counter that both samples have.
fn per_s_opt(a: Option<u64>, b: Option<u64>, secs: f64) -> Option<f64> {
    per_s(a?, b?, secs)
}

fn io_rates(a: &IoStatDev, b: &IoStatDev, secs: f64) -> Option<IoRates> {
    Some(IoRates {
        rbps: per_s_opt(a.rbytes, b.rbytes, secs)?,
        wbps: per_s_opt(a.wbytes, b.wbytes, secs)?,
        riops: per_s_opt(a.rios, b.rios, secs)?,
        wiops: per_s_opt(a.wios, b.wios, secs)?,
    })
}

/// Rates from `prev` to `cur`, `elapsed` apart. Returns all-`None` rates
/// when the samples are not of the same incarnation of the group or the
/// interval is empty.
pub fn compute(prev: &GroupSample, cur: &GroupSample, elapsed: Duration) -> GroupRates {
    let secs = elapsed.as_secs_f64();
    if prev.inode != cur.inode || prev.path != cur.path || secs <= 0.0 {
        return GroupRates::default();
    }
    let mut r = GroupRates::default();
    if let (Some(a), Some(b)) = (&prev.hot.cpu, &cur.hot.cpu) {
        r.cpu_pct = pct(a.usage_usec, b.usage_usec, secs);
        if let (Some(x), Some(y)) = (a.user_usec, b.user_usec) {
            r.user_pct = pct(x, y, secs);
        }
        if let (Some(x), Some(y)) = (a.system_usec, b.system_usec) {
            r.system_pct = pct(x, y, secs);
        }
        if let (Some(x), Some(y)) = (a.nr_throttled, b.nr_throttled) {
            r.throttled_per_s = per_s(x, y, secs);
        }
        if let (Some(x), Some(y)) = (a.throttled_usec, b.throttled_usec) {
            r.throttled_pct = pct(x, y, secs);
        }
    }
    if let (Some(x), Some(y)) = (prev.hot.throttled_local_usec, cur.hot.throttled_local_usec) {
        r.throttled_local_pct = pct(x, y, secs);
    }
    if let (Some(a), Some(b)) = (&prev.hot.io, &cur.hot.io) {
        // Per device; a device that appeared since counts from zero, which
        // is right: io.stat lists a device once the group has done IO on it.
        let zero = IoStatDev::ZERO;
        let mut total = IoRates::default();
        let mut ok = true;
        // an index where io.stat lists many devices (a hostile text):
        // no quadratic search
        let index = |s: &'_ IoStat| -> Option<HashMap<IoStatDevice, usize>> {
            (s.0.len() > 32).then(|| s.0.iter().enumerate().map(|(i, (d, _))| (*d, i)).collect())
        };
        let (ia, ib) = (index(a), index(b));
        let find =
            |s: &'_ IoStat, i: &Option<HashMap<IoStatDevice, usize>>, dev: IoStatDevice| match i {
                Some(i) => i.get(&dev).map(|&n| s.0[n].1),
                None => s.get(dev).copied(),
            };
        for (dev, now) in &b.0 {
            let before = find(a, &ia, *dev).unwrap_or(zero);
            let before = &before;
            if let Some(x) = io_rates(before, now, secs) {
                total.rbps += x.rbps;
                total.wbps += x.wbps;
                total.riops += x.riops;
                total.wiops += x.wiops;
                r.io_by_dev.push((*dev, x));
            } else {
                ok = false;
            }
        }
        // a device that vanished from io.stat is a reset as well
        ok &= a.0.iter().all(|(d, _)| find(b, &ib, *d).is_some());
        if ok {
            r.io = Some(total);
        } else {
            r.io_by_dev.clear();
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::CpuStat;
    use crate::model::GroupPath;

    fn sample(inode: u64, usage: u64, io: &str) -> GroupSample {
        let mut s = GroupSample::new(GroupPath::new("a"), inode);
        s.hot.cpu = Some(CpuStat {
            usage_usec: usage,
            user_usec: Some(usage / 2),
            system_usec: Some(usage / 2),
            nr_periods: Some(usage / 100),
            nr_throttled: Some(usage / 1000),
            throttled_usec: Some(usage / 10),
        });
        s.hot.io = Some(IoStat::parse(io));
        s
    }

    #[test]
    fn half_a_cpu() {
        // cpu.max "50000 100000": 1 s of CPU in 2 s of wall time = 50 %
        let a = sample(1, 1_000_000, "254:0 rbytes=0 wbytes=0 rios=0 wios=0");
        let b = sample(1, 2_000_000, "254:0 rbytes=0 wbytes=4194304 rios=0 wios=32");
        let r = compute(&a, &b, Duration::from_secs(2));
        assert!((r.cpu_pct.unwrap() - 50.0).abs() < 1e-9);
        assert!((r.user_pct.unwrap() - 25.0).abs() < 1e-9);
        let io = r.io.unwrap();
        assert!((io.wbps - 2_097_152.0).abs() < 1e-6);
        assert!((io.wiops - 16.0).abs() < 1e-9);
        assert_eq!(r.io_by_dev.len(), 1);
    }

    #[test]
    fn backwards_counter_gives_no_rate() {
        let a = sample(1, 2_000_000, "254:0 rbytes=100 wbytes=0 rios=1 wios=0");
        let b = sample(1, 1_000_000, "254:0 rbytes=50 wbytes=0 rios=1 wios=0");
        let r = compute(&a, &b, Duration::from_secs(1));
        assert_eq!(r.cpu_pct, None);
        assert_eq!(r.io, None);
    }

    #[test]
    fn recreated_group_gives_no_rate() {
        let a = sample(1, 1_000, "");
        let b = sample(2, 5_000_000, "");
        assert_eq!(
            compute(&a, &b, Duration::from_secs(1)),
            GroupRates::default()
        );
    }

    #[test]
    fn zero_interval_gives_no_rate() {
        let a = sample(1, 1_000, "");
        assert_eq!(compute(&a, &a, Duration::ZERO), GroupRates::default());
    }

    #[test]
    fn new_device_counts_from_zero_vanished_device_resets() {
        let a = sample(1, 0, "");
        let b = sample(1, 0, "8:0 rbytes=1000 wbytes=0 rios=1 wios=0");
        let r = compute(&a, &b, Duration::from_secs(1));
        assert!((r.io.unwrap().rbps - 1000.0).abs() < 1e-9);
        let r = compute(&b, &a, Duration::from_secs(1));
        assert_eq!(r.io, None);
    }
}

#[cfg(test)]
mod local_tests {
    use super::*;
    use crate::model::GroupPath;

    #[test]
    fn cpu_stat_local_rate_only_with_both_ends() {
        let mut a = GroupSample::new(GroupPath::new("a"), 1);
        let mut b = a.clone();
        a.hot.throttled_local_usec = Some(100_000);
        b.hot.throttled_local_usec = Some(900_000);
        let r = compute(&a, &b, Duration::from_secs(2));
        assert!((r.throttled_local_pct.unwrap() - 40.0).abs() < 1e-9);
        a.hot.throttled_local_usec = None;
        assert_eq!(
            compute(&a, &b, Duration::from_secs(2)).throttled_local_pct,
            None
        );
    }
}
