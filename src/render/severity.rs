//! How close a figure is to its limit, as a level the view gives a style
//! (`ui::Theme::severity`); `-b` and `--json` could word or mark it the
//! same way. A figure whose limit is unknown has no level (`None`): it is
//! shown plain, never "fine".
//!
//! The thresholds, written down once:
//!
//! - against a limit (memory.current of the effective memory.max or
//!   memory.high, pids.current of pids.max, CPU % of the cpu.max quota):
//!   [`WARM_SHARE`] (75 %) and up is warm, [`HOT_SHARE`] (90 %) and up is
//!   hot. At 90 % of memory.max the group reclaims hard and an OOM kill is
//!   near; at 90 % of a quota it is about to be throttled.
//! - pressure (PSI "some" avg10, percent of the last 10 s in which some
//!   task stalled): [`PRESSURE_WARM`] (10 %) and up is warm,
//!   [`PRESSURE_HOT`] (40 %) and up is hot. A few percent is normal on a
//!   busy host; a tenth of the time stalled is felt as latency, and 40 %
//!   is a group that mostly waits.

use crate::cgroupfs::{CpuMax, Limit};
use crate::model::GroupDetail;

/// A figure's level, from calm to alarming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Normal,
    Warm,
    Hot,
}

/// Share of a limit from which a figure is warm.
pub const WARM_SHARE: f64 = 0.75;
/// Share of a limit from which a figure is hot.
pub const HOT_SHARE: f64 = 0.90;
/// PSI some avg10 (percent) from which pressure is warm.
pub const PRESSURE_WARM: f64 = 10.0;
/// PSI some avg10 (percent) from which pressure is hot.
pub const PRESSURE_HOT: f64 = 40.0;

/// `used` against `limit`: `None` where either is unknown, the limit is
/// not positive, or a figure is not a number.
pub fn of_share(used: f64, limit: f64) -> Option<Severity> {
    if !(used.is_finite() && limit.is_finite()) || limit <= 0.0 {
        return None;
    }
    let share = used / limit;
    Some(if share >= HOT_SHARE {
        Severity::Hot
    } else if share >= WARM_SHARE {
        Severity::Warm
    } else {
        Severity::Normal
    })
}

/// memory.current against the effective limit in bytes (see
/// `model::tree::limits::effective_memory`); `None` without either.
pub fn memory(current: Option<u64>, limit: Option<u64>) -> Option<Severity> {
    of_share(current? as f64, limit? as f64)
}

/// pids.current against pids.max; `None` where pids.max is "max" or
/// unknown.
pub fn pids(current: Option<u64>, max: Option<Limit>) -> Option<Severity> {
    match max? {
        Limit::Max => None,
        // pids.max 0 forbids any fork: a group at it is at its limit
        Limit::Value(0) => current.map(|_| Severity::Hot),
        Limit::Value(m) => of_share(current? as f64, m as f64),
    }
}

/// CPU % of one core against a cpu.max quota; `None` where there is no
/// quota ("max") or no figure.
pub fn cpu(pct_of_one_core: Option<f64>, max: Option<CpuMax>) -> Option<Severity> {
    let cpus = max?.cpus()?;
    of_share(pct_of_one_core?, cpus * 100.0)
}

/// PSI some avg10, in percent, by [`PRESSURE_WARM`] and [`PRESSURE_HOT`].
pub fn pressure(some_avg10: Option<f64>) -> Option<Severity> {
    let p = some_avg10.filter(|p| p.is_finite())?;
    Some(if p >= PRESSURE_HOT {
        Severity::Hot
    } else if p >= PRESSURE_WARM {
        Severity::Warm
    } else {
        Severity::Normal
    })
}

/// The tightest cpu.max quota (in CPUs) among those on a path: the one
/// that throttles first. `None` when no group on the path has a quota.
pub fn tightest_cpu_max(path: impl IntoIterator<Item = Option<CpuMax>>) -> Option<CpuMax> {
    path.into_iter()
        .flatten()
        .filter(|m| m.cpus().is_some())
        .min_by(|a, b| {
            let (x, y) = (a.cpus().unwrap_or(f64::MAX), b.cpus().unwrap_or(f64::MAX));
            x.total_cmp(&y)
        })
}

/// The limits a group's figures are graded against, as far as they are
/// known: `None` grades nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// The effective memory limit in bytes (memory.max or memory.high).
    pub memory: Option<u64>,
    /// The cpu.max that throttles first.
    pub cpu: Option<CpuMax>,
    pub pids: Option<Limit>,
}

impl Limits {
    /// From a group's own files alone (its detail, where the snapshot has
    /// one): the smaller of its memory.max and memory.high, its cpu.max,
    /// its pids.max. An ancestor's tighter limit is not seen here; the
    /// inspected group's path is (`model::tree::limits::effective_memory`).
    pub fn of_detail(d: &GroupDetail) -> Self {
        let bytes = |l: Option<Limit>| match l {
            Some(Limit::Value(v)) => Some(v),
            _ => None,
        };
        let memory = match (bytes(d.memory_max), bytes(d.memory_high)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Self {
            memory,
            cpu: d.cpu_max,
            pids: d.pids_max,
        }
    }
}

/// A group's own limit files, as the collector reads them for every group
/// (on each walk of the tree, not every tick: limits change rarely).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OwnLimits {
    pub memory_max: Option<Limit>,
    pub memory_high: Option<Limit>,
    pub pids_max: Option<Limit>,
    pub cpu_max: Option<CpuMax>,
}

impl OwnLimits {
    fn limits(&self) -> Limits {
        Limits::of_detail(&GroupDetail {
            memory_max: self.memory_max,
            memory_high: self.memory_high,
            pids_max: self.pids_max,
            cpu_max: self.cpu_max,
            ..GroupDetail::default()
        })
    }
}

/// The tightest of two limits of one kind: `Max` only when both are.
fn tighter_limit(a: Option<Limit>, b: Option<Limit>) -> Option<Limit> {
    match (a, b) {
        (Some(Limit::Value(x)), Some(Limit::Value(y))) => Some(Limit::Value(x.min(y))),
        (Some(Limit::Value(x)), _) | (_, Some(Limit::Value(x))) => Some(Limit::Value(x)),
        (a, b) => a.or(b),
    }
}

/// Each group's effective limits (`paths` sorted, parents before
/// children, as a snapshot's groups are; `own` parallel to them): the
/// tightest memory.max or memory.high, cpu.max and pids.max of the group
/// and its ancestors within the list, as the kernel applies them
/// (admin guide: all three are hierarchical). A group whose parent is not
/// in the list counts from itself.
pub fn effective_limits<'a>(
    paths: impl IntoIterator<Item = &'a crate::model::GroupPath>,
    own: &[OwnLimits],
) -> Vec<Limits> {
    let paths: Vec<&crate::model::GroupPath> = paths.into_iter().collect();
    let mut out: Vec<Limits> = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let mine = own.get(i).map(OwnLimits::limits).unwrap_or_default();
        let parent = path
            .parent()
            .and_then(|p| paths[..i].binary_search_by(|x| (*x).cmp(&p)).ok())
            .and_then(|j| out.get(j).copied());
        let eff = match parent {
            None => mine,
            Some(up) => Limits {
                memory: match (mine.memory, up.memory) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                },
                cpu: tightest_cpu_max([mine.cpu, up.cpu]).or(mine.cpu),
                pids: tighter_limit(mine.pids, up.pids),
            },
        };
        out.push(eff);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_grade_at_75_and_90_percent() {
        assert_eq!(of_share(0.0, 100.0), Some(Severity::Normal));
        assert_eq!(of_share(74.9, 100.0), Some(Severity::Normal));
        assert_eq!(of_share(75.0, 100.0), Some(Severity::Warm));
        assert_eq!(of_share(89.9, 100.0), Some(Severity::Warm));
        assert_eq!(of_share(90.0, 100.0), Some(Severity::Hot));
        // over the limit (memory.high is soft, CPU bursts) is hot too
        assert_eq!(of_share(150.0, 100.0), Some(Severity::Hot));
    }

    #[test]
    fn no_limit_no_level() {
        assert_eq!(of_share(5.0, 0.0), None);
        assert_eq!(of_share(f64::NAN, 10.0), None);
        assert_eq!(of_share(5.0, f64::INFINITY), None);
        assert_eq!(memory(Some(1 << 30), None), None);
        assert_eq!(memory(None, Some(1 << 30)), None);
        assert_eq!(pids(Some(10), Some(Limit::Max)), None);
        assert_eq!(pids(Some(10), None), None);
        let unlimited = CpuMax {
            quota: None,
            period: 100_000,
        };
        assert_eq!(cpu(Some(400.0), Some(unlimited)), None);
        assert_eq!(cpu(Some(400.0), None), None);
        assert_eq!(pressure(None), None);
        assert_eq!(pressure(Some(f64::NAN)), None);
    }

    #[test]
    fn memory_and_pids_against_their_limits() {
        let mib = 1u64 << 20;
        assert_eq!(memory(Some(95 * mib), Some(100 * mib)), Some(Severity::Hot));
        assert_eq!(
            memory(Some(80 * mib), Some(100 * mib)),
            Some(Severity::Warm)
        );
        assert_eq!(
            memory(Some(10 * mib), Some(100 * mib)),
            Some(Severity::Normal)
        );
        assert_eq!(pids(Some(9), Some(Limit::Value(10))), Some(Severity::Hot));
        assert_eq!(pids(Some(8), Some(Limit::Value(10))), Some(Severity::Warm));
        assert_eq!(
            pids(Some(1), Some(Limit::Value(10))),
            Some(Severity::Normal)
        );
        assert_eq!(pids(Some(0), Some(Limit::Value(0))), Some(Severity::Hot));
    }

    #[test]
    fn cpu_against_the_quota_in_cpus() {
        // 50 ms per 100 ms: half a CPU, so 45 % of one core is 90 % of it
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(cpu(Some(45.0), Some(half)), Some(Severity::Hot));
        assert_eq!(cpu(Some(40.0), Some(half)), Some(Severity::Warm));
        assert_eq!(cpu(Some(10.0), Some(half)), Some(Severity::Normal));
        // two CPUs: 150 % of one core is 75 % of the quota
        let two = CpuMax {
            quota: Some(200_000),
            period: 100_000,
        };
        assert_eq!(cpu(Some(150.0), Some(two)), Some(Severity::Warm));
        assert_eq!(cpu(None, Some(two)), None);
    }

    #[test]
    fn pressure_grades_at_10_and_40_percent() {
        assert_eq!(pressure(Some(0.0)), Some(Severity::Normal));
        assert_eq!(pressure(Some(9.99)), Some(Severity::Normal));
        assert_eq!(pressure(Some(10.0)), Some(Severity::Warm));
        assert_eq!(pressure(Some(39.9)), Some(Severity::Warm));
        assert_eq!(pressure(Some(40.0)), Some(Severity::Hot));
        assert_eq!(pressure(Some(100.0)), Some(Severity::Hot));
    }

    #[test]
    fn a_groups_own_limits() {
        let d = GroupDetail {
            memory_max: Some(Limit::Value(100)),
            memory_high: Some(Limit::Value(80)),
            pids_max: Some(Limit::Max),
            ..GroupDetail::default()
        };
        let l = Limits::of_detail(&d);
        assert_eq!(l.memory, Some(80));
        assert_eq!(l.pids, Some(Limit::Max));
        assert_eq!(l.cpu, None);
        let only_max = GroupDetail {
            memory_max: Some(Limit::Value(100)),
            memory_high: Some(Limit::Max),
            ..GroupDetail::default()
        };
        assert_eq!(Limits::of_detail(&only_max).memory, Some(100));
        assert_eq!(
            Limits::of_detail(&GroupDetail::default()),
            Limits::default()
        );
    }

    #[test]
    fn a_parents_tighter_limit_holds_its_children() {
        use crate::model::GroupPath;
        let p = GroupPath::new;
        // a.slice: memory.max 100, cpu.max 50 %; a.slice/b: memory.max
        // 200 (looser), pids.max 10; c: nothing
        let paths = [p("a.slice"), p("a.slice/b"), p("c")];
        let own = [
            OwnLimits {
                memory_max: Some(Limit::Value(100)),
                cpu_max: Some(CpuMax {
                    quota: Some(50_000),
                    period: 100_000,
                }),
                pids_max: Some(Limit::Max),
                ..OwnLimits::default()
            },
            OwnLimits {
                memory_max: Some(Limit::Value(200)),
                pids_max: Some(Limit::Value(10)),
                ..OwnLimits::default()
            },
            OwnLimits::default(),
        ];
        let eff = effective_limits(&paths, &own);
        assert_eq!(eff[0].memory, Some(100));
        assert_eq!(eff[1].memory, Some(100));
        assert_eq!(eff[1].cpu.and_then(|m| m.quota), Some(50_000));
        assert_eq!(eff[1].pids, Some(Limit::Value(10)));
        assert_eq!(eff[0].pids, Some(Limit::Max));
        assert_eq!(eff[2], Limits::default());
    }

    #[test]
    fn the_tightest_quota_on_a_path_wins() {
        let m = |q: Option<u64>, p: u64| CpuMax {
            quota: q,
            period: p,
        };
        let path = [
            Some(m(None, 100_000)),
            None,
            Some(m(Some(200_000), 100_000)),
            Some(m(Some(30_000), 100_000)),
        ];
        assert_eq!(tightest_cpu_max(path), Some(m(Some(30_000), 100_000)));
        assert_eq!(tightest_cpu_max([Some(m(None, 100_000)), None]), None);
    }
}
