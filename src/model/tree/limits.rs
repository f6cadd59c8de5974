//! Effective limits: a group is held by the tightest limit on its path
//! (admin guide 5-2-1: memory.max and memory.high are hierarchical), and
//! throttled by the cpu.max of any group on it.

use crate::cgroupfs::{CpuMax, Limit};
use crate::model::{GroupPath, GroupRates, GroupSample, Snapshot};

/// Which file sets the effective limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveLimit {
    pub bytes: u64,
    pub set_by: GroupPath,
    pub file: &'static str,
}

/// The smallest finite memory.max (or, if tighter, memory.high) along
/// `path_limits` (the group first, then its ancestors). `None` when
/// nothing on the path is limited. On a tie the nearest group wins, and
/// memory.max wins over memory.high (it is the hard one).
pub fn effective_memory(
    path_limits: &[(GroupPath, Option<Limit>, Option<Limit>)],
) -> Option<EffectiveLimit> {
    let mut best: Option<EffectiveLimit> = None;
    for (path, max, high) in path_limits {
        for (l, file) in [
            (max, crate::cgroupfs::files::MEMORY_MAX),
            (high, crate::cgroupfs::files::MEMORY_HIGH),
        ] {
            if let Some(Limit::Value(v)) = l {
                if best.as_ref().is_none_or(|b| *v < b.bytes) {
                    best = Some(EffectiveLimit {
                        bytes: *v,
                        set_by: path.clone(),
                        file,
                    });
                }
            }
        }
    }
    best
}

/// How [`Throttling`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleSource {
    /// cpu.stat.local's `throttled_usec` (Linux 6.6 and later): the time
    /// this group itself was throttled, by any cpu.max on its path.
    CpuStatLocal,
    /// cpu.stat of the group and its ancestors, where that is exact: the
    /// group's own cpu.max throttled it, or nothing on its path throttled.
    CpuStat,
    /// Inferred from an ancestor's cpu.stat (no cpu.stat.local): the
    /// ancestor was throttled in the window, and this group used CPU in it
    /// (throttled) or none (not throttled).
    Inferred,
}

/// Whether a group was throttled in the last window, and by whose cpu.max.
#[derive(Debug, Clone, PartialEq)]
pub struct Throttling {
    pub throttled: bool,
    /// The group whose cpu.max throttled: this one, or the nearest ancestor
    /// (up to the start group) whose own throttling counters moved in the
    /// window. `None` when cpu.stat.local says throttled but no counter on
    /// the visible path moved (the throttler is above the start group).
    pub by: Option<GroupPath>,
    /// Throttled time in the window, in percent of one CPU (as CPU %: the
    /// kernel sums it over CPUs): this group's own from cpu.stat.local or
    /// its own cpu.stat, else the throttling ancestor's (for a group that
    /// had work all the window, about its own).
    pub pct: Option<f64>,
    pub source: ThrottleSource,
}

/// Whether a group's own cpu.max throttled it in the window: cpu.stat's
/// nr_throttled or throttled_usec moved (both count only the group's own
/// cpu.max, so a mover has a quota).
fn throttles(r: &GroupRates) -> bool {
    r.throttled_per_s.is_some_and(|t| t > 0.0) || r.throttled_pct.is_some_and(|t| t > 0.0)
}

/// Where `g`'s parent is in `groups` (sorted by path): a binary search on
/// the path's bytes, without making the parent's path (an allocation a
/// group, twice a refresh: who throttles, and where cpu.stat.local is
/// read).
fn parent_index(groups: &[GroupSample], g: &GroupSample) -> Option<usize> {
    let p = g.path.as_bytes();
    if p.is_empty() {
        return None;
    }
    let parent = crate::model::tree::path::parent_bytes(p);
    groups
        .binary_search_by(|x| x.path.as_bytes().cmp(parent))
        .ok()
}

/// Each group's parent's index ([`parent_index`]), for every group of a
/// list sorted by path at once: the group before is most often the parent
/// or a sibling, which two compares tell; a binary search otherwise.
pub(crate) fn parent_indices(groups: &[GroupSample]) -> Vec<Option<usize>> {
    let mut out: Vec<Option<usize>> = Vec::with_capacity(groups.len());
    // the group before: its path, and its parent's (`None` for the root)
    let mut before: Option<(&[u8], Option<&[u8]>)> = None;
    for (i, g) in groups.iter().enumerate() {
        let p = g.path.as_bytes();
        let parent = (!p.is_empty()).then(|| crate::model::tree::path::parent_bytes(p));
        let found = match (parent, before) {
            (None, _) => None,
            (Some(parent), Some((b, _))) if b == parent => Some(i - 1),
            (Some(parent), Some((_, Some(bp)))) if bp == parent => out[i - 1],
            _ => parent_index(groups, g),
        };
        out.push(found);
        before = Some((p, parent));
    }
    out
}

/// For each group of `snapshot` (rates parallel to it), the index of the
/// nearest group on its path, itself first, whose own cpu.max throttled
/// in the window. Parents come before children in a snapshot.
fn nearest_throttler(
    snapshot: &Snapshot,
    rates: &[GroupRates],
    parents: &[Option<usize>],
) -> Vec<Option<usize>> {
    let mut out: Vec<Option<usize>> = Vec::with_capacity(snapshot.groups.len());
    for (i, _) in snapshot.groups.iter().enumerate() {
        let own = rates.get(i).is_some_and(throttles).then_some(i);
        let inherited = || {
            let j = parents.get(i).copied().flatten()?;
            out.get(j).copied().flatten()
        };
        let n = own.or_else(inherited);
        out.push(n);
    }
    out
}

/// The groups whose cpu.stat.local is worth reading this refresh: those
/// with a throttling group on their path (the collector reads it only
/// there, and for the inspected group).
pub fn under_throttling(snapshot: &Snapshot, rates: &[GroupRates]) -> Vec<bool> {
    // most refreshes of most hosts: no group throttled, no path to look up
    if !rates.iter().any(throttles) {
        return vec![false; snapshot.groups.len()];
    }
    nearest_throttler(snapshot, rates, &parent_indices(&snapshot.groups))
        .into_iter()
        .map(|n| n.is_some())
        .collect()
}

/// Who throttles each group of `snapshot` (rates parallel to it), like
/// [`effective_memory`] for cpu.max. cpu.stat's `nr_throttled` and
/// `throttled_usec` count only a group's own cpu.max, so a service under
/// a throttled slice shows 0 there while it starves:
///
/// - where the group has a cpu.stat.local rate (Linux 6.6), it is
///   throttled when that moved, by the nearest throttling group;
/// - else by its own cpu.max when its own counters moved;
/// - else by the nearest ancestor whose counters moved, when the group
///   used CPU in the window (an idle group under a throttled slice is not
///   held back by it).
///
/// `None` (unknown) for a group without a CPU rate (first sight, or
/// recreated) or with no throttling counters on its visible path (the cpu
/// controller off, or on cgroup v1).
pub fn throttling(snapshot: &Snapshot, rates: &[GroupRates]) -> Vec<Option<Throttling>> {
    throttling_by(snapshot, rates, &parent_indices(&snapshot.groups))
}

/// [`throttling`], with each group's parent's index given
/// ([`parent_indices`] of the snapshot's groups): the rates' step keeps
/// them while the groups stay the same.
pub(crate) fn throttling_by(
    snapshot: &Snapshot,
    rates: &[GroupRates],
    parents: &[Option<usize>],
) -> Vec<Option<Throttling>> {
    let nearest = nearest_throttler(snapshot, rates, parents);
    let counted: Vec<bool> = {
        // some group on the path has the throttling counters at all
        let mut out: Vec<bool> = Vec::with_capacity(snapshot.groups.len());
        for (i, _) in snapshot.groups.iter().enumerate() {
            let own = rates.get(i).is_some_and(|r| r.throttled_per_s.is_some());
            let parent = || {
                let j = parents.get(i).copied().flatten()?;
                out.get(j).copied()
            };
            let c = own || parent().unwrap_or(false);
            out.push(c);
        }
        out
    };
    snapshot
        .groups
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let r = rates.get(i)?;
            let by_idx = nearest[i];
            let by = by_idx.map(|j| snapshot.groups[j].path.clone());
            if let Some(local) = r.throttled_local_pct {
                return Some(Throttling {
                    throttled: local > 0.0,
                    by: by.filter(|_| local > 0.0),
                    pct: Some(local),
                    source: ThrottleSource::CpuStatLocal,
                });
            }
            r.cpu_pct?;
            if !counted[i] {
                return None;
            }
            Some(match by_idx {
                Some(j) if j == i => Throttling {
                    throttled: true,
                    by,
                    pct: r.throttled_pct,
                    source: ThrottleSource::CpuStat,
                },
                Some(j) if r.cpu_pct.is_some_and(|c| c > 0.0) => Throttling {
                    throttled: true,
                    by,
                    pct: rates.get(j).and_then(|a| a.throttled_pct),
                    source: ThrottleSource::Inferred,
                },
                Some(_) => Throttling {
                    throttled: false,
                    by: None,
                    pct: None,
                    source: ThrottleSource::Inferred,
                },
                None => Throttling {
                    throttled: false,
                    by: None,
                    pct: r.throttled_pct,
                    source: ThrottleSource::CpuStat,
                },
            })
        })
        .collect()
}

/// The cpu.max of `by` among a path's (the inspected group's and its ancestors').
pub fn cpu_max_of(path_cpu_max: &[(GroupPath, Option<CpuMax>)], by: &GroupPath) -> Option<CpuMax> {
    path_cpu_max
        .iter()
        .find(|(p, _)| p == by)
        .and_then(|(_, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tightest_on_path_wins() {
        let p = |s: &str| GroupPath::new(s);
        let lim = vec![
            (p("a/b"), Some(Limit::Max), Some(Limit::Max)),
            (p("a"), Some(Limit::Value(64 << 20)), Some(Limit::Max)),
            (p(""), None, None),
        ];
        let e = effective_memory(&lim).unwrap();
        assert_eq!(
            (e.bytes, e.set_by.as_bytes(), e.file),
            (64 << 20, &b"a"[..], "memory.max")
        );
        let lim2 = vec![
            (
                p("a/b"),
                Some(Limit::Value(64 << 20)),
                Some(Limit::Value(32 << 20)),
            ),
            (p("a"), Some(Limit::Value(64 << 20)), None),
        ];
        let e = effective_memory(&lim2).unwrap();
        assert_eq!(
            (e.bytes, e.set_by.as_bytes(), e.file),
            (32 << 20, &b"a/b"[..], "memory.high")
        );
        assert_eq!(effective_memory(&[(p(""), None, None)]), None);
    }
}

#[cfg(test)]
mod throttle_tests {
    use super::*;
    use crate::model::GroupSample;
    use std::time::Duration;

    /// A snapshot of `groups` (sorted here) with rates built by `rate`.
    fn tree(groups: &[(&str, GroupRates)]) -> (Snapshot, Vec<GroupRates>) {
        let mut g: Vec<(&str, GroupRates)> = groups.to_vec();
        g.sort_by(|a, b| GroupPath::new(a.0).cmp(&GroupPath::new(b.0)));
        let snapshot = Snapshot {
            at: Duration::from_secs(2),
            groups: g
                .iter()
                .map(|(p, _)| GroupSample::new(GroupPath::new(p), 1))
                .collect(),
            cost: crate::model::ScanCost::default(),
        };
        (snapshot, g.into_iter().map(|(_, r)| r).collect())
    }

    /// Rates of a group with the cpu controller: CPU %, and its own
    /// throttling (periods/s, % of the window).
    fn cpu(pct: f64, thr_per_s: f64, thr_pct: f64) -> GroupRates {
        GroupRates {
            cpu_pct: Some(pct),
            throttled_per_s: Some(thr_per_s),
            throttled_pct: Some(thr_pct),
            ..GroupRates::default()
        }
    }

    fn local(mut r: GroupRates, pct: f64) -> GroupRates {
        r.throttled_local_pct = Some(pct);
        r
    }

    fn of<'a>(s: &Snapshot, t: &'a [Option<Throttling>], p: &str) -> Option<&'a Throttling> {
        let i = s
            .groups
            .iter()
            .position(|g| g.path.as_bytes() == p.as_bytes())
            .unwrap();
        t[i].as_ref()
    }

    /// The case of the issue: a slice at cpu.max 20 %, a busy service and
    /// an idle one below it, on a kernel without cpu.stat.local. The
    /// services' own cpu.stat say 0.
    #[test]
    fn a_service_under_a_throttled_slice_is_throttled_by_the_slice() {
        let root = GroupRates {
            cpu_pct: Some(25.0),
            ..GroupRates::default()
        };
        let (s, r) = tree(&[
            ("", root),
            ("a.slice", cpu(20.0, 10.0, 80.0)),
            ("a.slice/busy.service", cpu(20.0, 0.0, 0.0)),
            ("a.slice/idle.service", cpu(0.0, 0.0, 0.0)),
            ("b.slice", cpu(5.0, 0.0, 0.0)),
        ]);
        let t = throttling(&s, &r);
        let busy = of(&s, &t, "a.slice/busy.service").unwrap();
        assert!(busy.throttled);
        assert_eq!(busy.by, Some(GroupPath::new("a.slice")));
        assert_eq!(busy.pct, Some(80.0));
        assert_eq!(busy.source, ThrottleSource::Inferred);
        let slice = of(&s, &t, "a.slice").unwrap();
        assert!(slice.throttled);
        assert_eq!(slice.by, Some(GroupPath::new("a.slice")));
        assert_eq!(slice.source, ThrottleSource::CpuStat);
        // an idle group under the throttled slice is not held back by it
        let idle = of(&s, &t, "a.slice/idle.service").unwrap();
        assert!(!idle.throttled);
        assert_eq!(idle.by, None);
        let other = of(&s, &t, "b.slice").unwrap();
        assert!(!other.throttled);
        assert_eq!(other.source, ThrottleSource::CpuStat);
        // the root has no throttling counters at all: unknown
        assert_eq!(of(&s, &t, ""), None);
        assert_eq!(
            under_throttling(&s, &r),
            [false, true, true, true, false],
            "cpu.stat.local is worth reading under a.slice only"
        );
    }

    /// cpu.stat.local (Linux 6.6) says it exactly, for each group.
    #[test]
    fn cpu_stat_local_decides_where_the_kernel_has_it() {
        let (s, r) = tree(&[
            ("a.slice", local(cpu(20.0, 10.0, 80.0), 80.0)),
            ("a.slice/busy.service", local(cpu(20.0, 0.0, 0.0), 38.0)),
            // used CPU, but never runnable while the slice was throttled
            ("a.slice/bursty.service", local(cpu(3.0, 0.0, 0.0), 0.0)),
            // throttled by a cpu.max above the start group
            ("c.slice", local(cpu(10.0, 0.0, 0.0), 12.0)),
        ]);
        let t = throttling(&s, &r);
        let busy = of(&s, &t, "a.slice/busy.service").unwrap();
        assert_eq!(
            (busy.throttled, busy.by.clone(), busy.pct, busy.source),
            (
                true,
                Some(GroupPath::new("a.slice")),
                Some(38.0),
                ThrottleSource::CpuStatLocal
            )
        );
        let bursty = of(&s, &t, "a.slice/bursty.service").unwrap();
        assert!(!bursty.throttled);
        assert_eq!(bursty.by, None);
        let c = of(&s, &t, "c.slice").unwrap();
        assert!(c.throttled);
        assert_eq!(c.by, None);
    }

    /// Nested quotas: the nearest throttling group on the path is named.
    #[test]
    fn the_nearest_throttling_group_wins() {
        let (s, r) = tree(&[
            ("a", cpu(50.0, 10.0, 50.0)),
            ("a/b", cpu(30.0, 10.0, 70.0)),
            ("a/b/c", cpu(30.0, 0.0, 0.0)),
            ("a/d", cpu(20.0, 0.0, 0.0)),
        ]);
        let t = throttling(&s, &r);
        assert_eq!(of(&s, &t, "a/b/c").unwrap().by, Some(GroupPath::new("a/b")));
        assert_eq!(of(&s, &t, "a/b/c").unwrap().pct, Some(70.0));
        assert_eq!(of(&s, &t, "a/d").unwrap().by, Some(GroupPath::new("a")));
    }

    /// No rate yet, or no throttling counters anywhere on the path (the cpu
    /// controller off, or on cgroup v1): unknown, not "not throttled".
    #[test]
    fn unknown_without_rates_or_counters() {
        let no_ctl = GroupRates {
            cpu_pct: Some(50.0),
            ..GroupRates::default()
        };
        let (s, r) = tree(&[
            ("a", no_ctl.clone()),
            ("a/b", no_ctl),
            ("c", cpu(20.0, 10.0, 80.0)),
            ("c/new", GroupRates::default()),
        ]);
        let t = throttling(&s, &r);
        assert_eq!(of(&s, &t, "a"), None);
        assert_eq!(of(&s, &t, "a/b"), None);
        assert_eq!(of(&s, &t, "c/new"), None);
        assert!(of(&s, &t, "c").unwrap().throttled);
    }

    #[test]
    fn cpu_max_of_the_throttling_group() {
        let m = CpuMax::parse("20000 100000").unwrap();
        let path = vec![
            (
                GroupPath::new("a/b"),
                Some(CpuMax::parse("max 100000").unwrap()),
            ),
            (GroupPath::new("a"), Some(m)),
        ];
        assert_eq!(cpu_max_of(&path, &GroupPath::new("a")), Some(m));
        assert_eq!(cpu_max_of(&path, &GroupPath::new("x")), None);
    }
}
