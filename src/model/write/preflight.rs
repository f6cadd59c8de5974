//! PURE: what cgtop can tell about a write before it is made, from what
//! it already knows about the target group ([`Facts`], built from the
//! snapshot by [`facts`]): a write the kernel is certain to refuse is
//! refused here with the errno and the facts it would have
//! ([`Verdict::Refuse`], worded by [`crate::model::write::explain`], so the reason and
//! the fix are the same words before and after); a write the kernel takes
//! but that hurts (reclaim, an OOM kill, forks that fail, a starved
//! group) is a [`Warning`] for the confirmation, and one that kills asks
//! for the group's name.
//!
//! Certainty matters more than coverage: a rule refuses only when the
//! kernel's own check (kernel/cgroup/cgroup.c, cited per rule) must fail
//! on the facts known; where a fact is missing the write goes ahead and
//! the kernel decides. The root is exempt from the no internal process
//! rule (admin guide 2-4-3), and the real root has no cgroup.type, so a
//! group whose type is unknown is never refused.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::{files, CgroupType, Controllers, CpuMax, Limit};
use crate::model::tree::snapshot::{GroupDetail, Snapshot};
use crate::model::write::errno::Errno;
use crate::model::write::explain::{self, Availability, ErrorContext};
use crate::model::write::input::{ControllerChange, MemoryFile};
use crate::model::write::outcome::{Offer, WriteError};
use crate::model::write::{Op, WriteKind, WriteOp};
use crate::model::GroupPath;
use std::collections::HashMap;

/// The threaded controllers of cgroup v2 (admin guide 2-2-2 "Threads",
/// `cgrp_dfl_threaded_ss_mask`); every other controller is a domain one.
pub const THREADED_CONTROLLERS: [&str; 4] = ["cpu", "cpuset", "perf_event", "pids"];

/// Whether `name` is a domain controller.
pub fn is_domain_controller(name: &str) -> bool {
    !THREADED_CONTROLLERS.contains(&name)
}

/// A cpu.max quota below this share of one CPU (per mille) is tiny: the
/// group runs at most 1 ms in every 20 ms, and a shell in it stalls.
pub const TINY_CPU_PERMILLE: u64 = 50;

/// What cgtop knows about one group before writing to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub path: GroupPath,
    /// cgroup.type; `None` at the root (which has no such file) or when
    /// it was not read.
    pub cgroup_type: Option<CgroupType>,
    /// Controllers in its cgroup.subtree_control: all of them when the
    /// file was read (`handed_exact`), else those its children's files
    /// show (a child has memory.current only when the parent hands memory
    /// or io down, io.stat only with io, pids.current only with pids).
    pub handed: Vec<String>,
    pub handed_exact: bool,
    /// A child that is not threaded has live processes
    /// (`nr_populated_domain_children` in the kernel).
    pub populated_domain_child: bool,
    /// Child groups in the snapshot.
    pub children: u64,
    /// Processes of the group itself (its cgroup.procs), when known.
    pub own_procs: Option<u64>,
    /// cgroup.events `populated`: live processes in the subtree.
    pub populated: Option<bool>,
    /// Processes in the subtree, as far as the snapshot counts them.
    pub subtree_procs: u64,
    /// The threaded domain the group belongs to (itself unless threaded);
    /// `None` when a type on the way is unknown.
    pub domain: Option<GroupPath>,
    pub memory: MemoryFacts,
    pub pids_current: Option<u64>,
    /// CPU use over the last interval, % of one CPU.
    pub cpu_pct: Option<f64>,
    /// Its cgroup.controllers: what its parent hands it, when read.
    pub offered: Option<Vec<String>>,
    /// The cgroup.controllers of each ancestor, nearest first, as far as
    /// read (`None`: not read): where a controller not offered can be
    /// enabled from.
    pub offered_up: Vec<(GroupPath, Option<Vec<String>>)>,
}

/// The group's memory as far as reclaim is concerned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryFacts {
    /// memory.current (the whole subtree).
    pub current: Option<u64>,
    /// What reclaim can free without swap: the file LRU pages and
    /// reclaimable slab (memory.stat `active_file`, `inactive_file`,
    /// `slab_reclaimable`).
    pub reclaimable: Option<u64>,
    /// What only swap can take: the anon LRU pages, shmem included
    /// (`active_anon`, `inactive_anon`).
    pub swappable: Option<u64>,
    /// Room left in swap for this group: the least of memory.swap.max
    /// less memory.swap.current and the host's swap; `None` when unknown.
    pub swap_room: Option<u64>,
    /// memory.oom.group is 1: an OOM kill takes every process at once.
    pub oom_group: bool,
}

/// What one refresh shows of every group's children, in one pass: the
/// controllers their files prove the parent hands down, and whether a
/// non-threaded child is populated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEvidence {
    pub handed: Vec<String>,
    pub populated_domain_child: bool,
    pub children: u64,
}

/// [`ChildEvidence`] of every group that has children in one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence(HashMap<GroupPath, ChildEvidence>);

impl Evidence {
    /// What the children of `path` show (nothing: no children).
    pub fn of(&self, path: &GroupPath) -> ChildEvidence {
        self.0.get(path).cloned().unwrap_or_default()
    }
}

/// [`ChildEvidence`] of every group that has children in `snap`.
pub fn child_evidence(snap: &Snapshot) -> Evidence {
    let mut out: HashMap<GroupPath, ChildEvidence> = HashMap::new();
    for g in &snap.groups {
        let Some(parent) = g.path.parent() else {
            continue;
        };
        let e = out.entry(parent).or_default();
        e.children += 1;
        // an interface file exists in a child only when the parent hands
        // its controller down (admin guide 2-4-1); memory is also on where
        // io is (io depends on memory), and both are domain controllers
        let shown = [
            ("memory", g.hot.memory_current.is_some()),
            ("io", g.hot.io.is_some()),
            ("pids", g.hot.pids_current.is_some()),
        ];
        for (name, on) in shown {
            if on && !e.handed.iter().any(|h| h == name) {
                e.handed.push(name.to_owned());
            }
        }
        let threaded = g.cgroup_type == Some(CgroupType::Threaded);
        if !threaded && g.hot.events.and_then(|e| e.populated) == Some(true) {
            e.populated_domain_child = true;
        }
    }
    Evidence(out)
}

/// The threaded domain of `path`: itself unless it is threaded, else the
/// nearest ancestor that is not (admin guide 2-2-2). `None` when a type
/// on the way is unknown.
pub fn domain_of(snap: &Snapshot, path: &GroupPath) -> Option<GroupPath> {
    for a in path.ancestors() {
        let g = snap.find(&a)?;
        match g.cgroup_type {
            Some(CgroupType::Threaded) => {}
            Some(_) => return Some(a),
            // the root has no cgroup.type and is always a domain
            None if a.is_root() => return Some(a),
            None => return None,
        }
    }
    None
}

/// The facts about `path` from the snapshot, with its full `detail` when
/// it is the inspected group, the children's `evidence` (from
/// [`child_evidence`]), its CPU use, and the host's swap in bytes
/// (`None` when unknown). `None` when the group is not in the snapshot.
pub fn facts(
    snap: &Snapshot,
    evidence: &Evidence,
    path: &GroupPath,
    detail: Option<&GroupDetail>,
    cpu_pct: Option<f64>,
    host_swap: Option<u64>,
) -> Option<Facts> {
    let g = snap.find(path)?;
    let base = move_facts(snap, evidence, path, detail)?;
    let own_procs = detail
        .map(|d| d.pids.len() as u64)
        .or(g.hot.nr_procs)
        // pids.current counts the subtree: with no children it is the
        // group's own
        .or(g.hot.pids_current.filter(|_| base.children == 0));
    Some(Facts {
        own_procs,
        populated: g.hot.events.and_then(|e| e.populated),
        subtree_procs: subtree_procs(snap, path),
        memory: memory_facts(g.hot.memory_current, detail, host_swap),
        pids_current: g.hot.pids_current,
        cpu_pct,
        ..base
    })
}

/// The facts a move needs (type, what is handed down, populated domain
/// children, the threaded domain), cheap enough for every group of the
/// move picker: no walk of the subtree.
pub fn move_facts(
    snap: &Snapshot,
    evidence: &Evidence,
    path: &GroupPath,
    detail: Option<&GroupDetail>,
) -> Option<Facts> {
    let g = snap.find(path)?;
    let ev = evidence.of(path);
    let (handed, handed_exact) = match detail.and_then(|d| d.subtree_control.as_ref()) {
        Some(c) => (c.0.clone(), true),
        None => (ev.handed, false),
    };
    Some(Facts {
        path: path.clone(),
        cgroup_type: g.cgroup_type,
        handed,
        handed_exact,
        populated_domain_child: ev.populated_domain_child,
        children: ev.children,
        domain: domain_of(snap, path),
        offered: detail
            .and_then(|d| d.controllers.as_ref())
            .map(|c| c.0.clone()),
        ..Facts::default()
    })
}

/// Processes in the subtree of `group`: the sum of cgroup.procs counts,
/// or pids.current where those are not read.
fn subtree_procs(snap: &Snapshot, group: &GroupPath) -> u64 {
    let sum: u64 = snap
        .groups
        .iter()
        .filter(|g| g.path.is_within(group))
        .filter_map(|g| g.hot.nr_procs)
        .sum();
    if sum > 0 {
        return sum;
    }
    snap.find(group)
        .and_then(|g| g.hot.pids_current)
        .unwrap_or(0)
}

fn memory_facts(
    current: Option<u64>,
    d: Option<&GroupDetail>,
    host_swap: Option<u64>,
) -> MemoryFacts {
    let stat = d.and_then(|d| d.keyed.memory_stat.as_ref());
    let sum = |keys: &[&str]| -> Option<u64> {
        let s = stat?;
        keys.iter().map(|k| s.get(k)).sum()
    };
    let by_limit = match d.and_then(|d| d.swap_max) {
        Some(Limit::Value(v)) => {
            Some(v.saturating_sub(d.and_then(|d| d.swap_current).unwrap_or(0)))
        }
        _ => None,
    };
    let swap_room = match (by_limit, host_swap) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(a), None) => Some(a),
        (None, b) => b,
    };
    let oom_group = d
        .and_then(|d| d.raw.iter().find(|(n, _)| n == files::MEMORY_OOM_GROUP))
        .and_then(|(_, v)| v.as_ref().ok())
        .is_some_and(|v| v.trim() == "1");
    MemoryFacts {
        current,
        reclaimable: sum(&["active_file", "inactive_file", "slab_reclaimable"]),
        swappable: sum(&["active_anon", "inactive_anon"]),
        swap_room,
        oom_group,
    }
}

/// What a write the kernel will take does, when it hurts. A value: the
/// view words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// memory.max below what the group uses: the kernel reclaims the
    /// difference at once (file cache, and swap where there is room), and
    /// the processes stall while it does.
    Reclaim { limit: u64, current: u64 },
    /// memory.max below what the group uses, and reclaim cannot get it
    /// there (`unreclaimable`: what neither dropping file cache nor the
    /// swap room known can free; `None` when memory.stat was not read):
    /// the kernel OOM-kills processes of the subtree, biggest first, until
    /// it fits (all at once with memory.oom.group).
    OomKill {
        limit: u64,
        current: u64,
        unreclaimable: Option<u64>,
        procs: u64,
        oom_group: bool,
    },
    /// memory.high below use: heavy reclaim, and the processes are
    /// throttled while the group stays above it (nothing is killed).
    Throttle { limit: u64, current: u64 },
    /// pids.max at or below pids.current: every fork and clone in the
    /// subtree fails until tasks exit; running ones keep running.
    ForksFail { limit: u64, current: u64 },
    /// cpu.max of a tiny share of one CPU (below [`TINY_CPU_PERMILLE`]):
    /// the group runs `quota` µs per `period` µs; `used_pct` is what it
    /// used in the last interval (% of one CPU, rounded).
    CpuStarved {
        quota: u64,
        period: u64,
        used_pct: Option<u64>,
    },
}

impl Warning {
    /// Whether the write kills processes: the confirmation then asks for
    /// the group's name to be typed.
    pub fn kills(&self) -> bool {
        matches!(self, Self::OomKill { .. })
    }
}

/// What pre-flight makes of an op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing known against it.
    Clear,
    /// The kernel will refuse it with `errno`; `context` holds the facts
    /// [`explain::explain`] and [`explain::offer_for`] need for the
    /// words, the fix and the offer.
    Refuse {
        errno: Errno,
        context: Box<ErrorContext>,
    },
    /// The kernel will take it; these are what it does.
    Warn(Vec<Warning>),
}

impl Verdict {
    /// The words of a refusal: the kernel's explanation and fix, marked as
    /// found before writing (no errno: nothing was written).
    pub fn refusal(&self, op: &Op) -> Option<WriteError> {
        let Self::Refuse { errno, context } = self else {
            return None;
        };
        let e = explain::explain(op, *errno, context);
        Some(WriteError::refused(
            e.what,
            format!(
                "not written: the kernel would refuse it ({}): {}",
                crate::model::write::errno::name(*errno),
                e.explanation
            ),
            e.fix,
        ))
    }

    /// The fix cgtop can carry out instead of a refused write (the leaf
    /// fix for the no internal process rule).
    pub fn offer(&self, op: &Op) -> Option<Offer> {
        let Self::Refuse { errno, context } = self else {
            return None;
        };
        explain::offer_for(op, *errno, context)
    }
}

fn refuse(errno: Errno, context: ErrorContext) -> Verdict {
    Verdict::Refuse {
        errno,
        context: Box::new(ErrorContext {
            group_exists: true,
            file_exists: true,
            ..context
        }),
    }
}

/// Judges `op` against `target` (the facts of `op.group()`); `source` is
/// the threaded domain of the group a moved thread comes from, when known.
pub fn check(op: &Op, target: &Facts, source: Option<&GroupPath>) -> Verdict {
    // the facts are cgroup2's; a cgroup v1 hierarchy has none of its
    // rules (no internal process rule, no subtree_control): the kernel's
    // answer, in words, is the check there
    if matches!(op.hier(), crate::model::host::layout::HierId::V1(_)) {
        return Verdict::Clear;
    }
    match op {
        Op::CreateGroup(..) => Verdict::Clear,
        Op::RemoveGroup(_, _, _) => check_remove(target),
        Op::Write(w) => match &w.kind {
            WriteKind::MoveProcess { threads, .. } => check_move(target, *threads, source),
            WriteKind::SubtreeControl(changes) => check_enable(target, changes),
            _ => warn(limit_of(w), target),
        },
    }
}

/// Judges a plan of ops written one after the other (enabling a
/// controller along the path, from an ancestor down to the group) before
/// any is written: each step against the facts of its group (`None`: not
/// known, not judged) as they will be once the steps before it are made
/// (a controller the step before enables in a group's parent is offered
/// to the group). The first step the kernel would refuse, by its index,
/// with the verdict; `None` when none is known to fail. A plan with a
/// refused step is not offered at all: its first steps would be written
/// and then the plan stop half-way.
pub fn check_plan(steps: &[(Op, Option<Facts>)]) -> Option<(usize, Verdict)> {
    let mut enabled: Vec<(&GroupPath, &str)> = Vec::new();
    for (i, (op, facts)) in steps.iter().enumerate() {
        if let Some(f) = facts {
            let mut f = f.clone();
            if let (Some(offered), Some(parent)) = (&mut f.offered, f.path.parent()) {
                for (_, name) in enabled.iter().filter(|(g, _)| **g == parent) {
                    if !offered.iter().any(|o| o == name) {
                        offered.push((*name).to_owned());
                    }
                }
            }
            let v = check(op, &f, None);
            if matches!(v, Verdict::Refuse { .. }) {
                return Some((i, v));
            }
        }
        if let Some(WriteKind::SubtreeControl(changes)) = op.as_write().map(|w| &w.kind) {
            enabled.extend(
                changes
                    .iter()
                    .filter(|c| c.enable)
                    .map(|c| (op.group(), c.name.as_str())),
            );
        }
    }
    None
}

/// rmdir: a group with live processes or child groups is busy
/// (`cgroup_destroy_locked`; admin guide 2-2-1: a group with only zombies
/// is empty).
fn check_remove(t: &Facts) -> Verdict {
    let procs = t.own_procs.filter(|&n| n > 0);
    if t.children > 0 || t.populated == Some(true) || procs.is_some() {
        return refuse(
            Errno::BUSY,
            ErrorContext {
                nr_procs: procs.and_then(|n| usize::try_from(n).ok()),
                nr_children: usize::try_from(t.children).ok(),
                ..ErrorContext::default()
            },
        );
    }
    Verdict::Clear
}

/// A move into `t` (`cgroup_migrate_vet_dst`, `cgroup_attach_permissions`).
fn check_move(t: &Facts, threads: bool, source: Option<&GroupPath>) -> Verdict {
    let ty = t.cgroup_type;
    // the target must be a valid domain or in one (admin guide 2-2-2)
    if ty == Some(CgroupType::DomainInvalid) {
        return refuse(
            Errno::OPNOTSUPP,
            ErrorContext {
                cgroup_type: ty,
                ..ErrorContext::default()
            },
        );
    }
    // the no internal process rule, unless the target is (or can become)
    // a thread root or is threaded; the root (no cgroup.type) is exempt
    if matches!(ty, Some(CgroupType::Domain | CgroupType::DomainThreaded)) {
        let domain = t.handed.iter().any(|c| is_domain_controller(c));
        let any = !t.handed.is_empty();
        if domain || (any && t.populated_domain_child) {
            return refuse(
                Errno::BUSY,
                ErrorContext {
                    subtree_control: Some(Controllers(t.handed.clone())),
                    ..ErrorContext::default()
                },
            );
        }
    }
    // a thread moves only within its threaded domain
    if threads {
        if let (Some(from), Some(to)) = (source, &t.domain) {
            if from != to {
                return refuse(Errno::OPNOTSUPP, ErrorContext::default());
            }
        }
    }
    Verdict::Clear
}

/// Enabling controllers in `t`'s cgroup.subtree_control
/// (`cgroup_vet_subtree_control_enable`).
fn check_enable(t: &Facts, changes: &[ControllerChange]) -> Verdict {
    let enables: Vec<&str> = changes
        .iter()
        .filter(|c| c.enable)
        .map(|c| c.name.as_str())
        .collect();
    // first, as the kernel does (cgroup_subtree_control_write): a
    // controller the parent does not hand down cannot be enabled here,
    // ENOENT (top-down rule, admin guide 2-4-2), whatever else holds
    if let Some(offered) = &t.offered {
        let missing: Vec<(String, Availability)> = enables
            .iter()
            .filter(|c| !offered.iter().any(|o| o == *c))
            .filter_map(|c| Some(((*c).to_owned(), availability(t, c)?)))
            .collect();
        if enables.iter().any(|c| !offered.iter().any(|o| o == *c)) {
            return refuse(
                Errno::NOENT,
                ErrorContext {
                    missing,
                    controllers: Some(Controllers(offered.clone())),
                    ..ErrorContext::default()
                },
            );
        }
    }
    // the root is mixable: nothing applies (admin guide 2-4-3); a type not
    // read is not judged
    let Some(ty) = t.cgroup_type.filter(|_| !enables.is_empty()) else {
        return Verdict::Clear;
    };
    let domain = enables.iter().any(|c| is_domain_controller(c));
    let threaded_inside = matches!(ty, CgroupType::Threaded | CgroupType::DomainThreaded);
    if ty == CgroupType::DomainInvalid || (domain && threaded_inside) {
        // only threaded controllers in a threaded subtree (admin guide 2-2-2)
        return refuse(
            Errno::OPNOTSUPP,
            ErrorContext {
                cgroup_type: Some(ty),
                ..ErrorContext::default()
            },
        );
    }
    if !domain {
        // threaded controllers are fine where the group is or can become
        // a thread root
        let can_be_thread_root =
            !t.populated_domain_child && !t.handed.iter().any(|c| is_domain_controller(c));
        if threaded_inside || can_be_thread_root {
            return Verdict::Clear;
        }
    }
    match t.own_procs {
        // a group with processes of its own cannot hand them on (2-4-3)
        Some(n) if n > 0 => refuse(
            Errno::BUSY,
            ErrorContext {
                nr_procs: usize::try_from(n).ok(),
                subtree_control: Some(Controllers(t.handed.clone())),
                ..ErrorContext::default()
            },
        ),
        _ => Verdict::Clear,
    }
}

/// Where `name` can be enabled from for `t` to be offered it: the chain
/// from the nearest ancestor that has it in its cgroup.controllers down to
/// the parent, as the writer finds it after the kernel's ENOENT; not in
/// this hierarchy where the topmost ancestor (the root, which offers every
/// controller the hierarchy has) lacks it; `None` where an ancestor on
/// the way was not read.
fn availability(t: &Facts, name: &str) -> Option<Availability> {
    let mut chain = Vec::new();
    let mut last = None;
    for (a, offered) in &t.offered_up {
        chain.push(a.clone());
        last = Some(a);
        if offered.as_ref()?.iter().any(|c| c == name) {
            chain.reverse();
            return Some(Availability::EnableDown(chain));
        }
    }
    last.filter(|a| a.is_root())
        .map(|_| Availability::NotInHierarchy)
}

/// A limit a write sets, as far as pre-flight judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitWrite {
    Memory(MemoryFile, u64),
    Pids(u64),
    Cpu(CpuMax),
}

/// The limit `w` sets, from its typed kind or, for a raw write, from its
/// text as the kernel's own file would hold it.
fn limit_of(w: &WriteOp) -> Option<LimitWrite> {
    let value = |l: &Limit| match l {
        Limit::Value(v) => Some(*v),
        Limit::Max => None,
    };
    match &w.kind {
        WriteKind::Memory(f, l) => Some(LimitWrite::Memory(*f, value(l)?)),
        WriteKind::PidsMax(l) => Some(LimitWrite::Pids(value(l)?)),
        WriteKind::CpuMax(c) => Some(LimitWrite::Cpu(*c)),
        WriteKind::Raw => {
            let text = w.contents.trim();
            match w.file.as_str() {
                files::MEMORY_MAX => Some(LimitWrite::Memory(
                    MemoryFile::Max,
                    value(&Limit::parse("memory.max", text).ok()?)?,
                )),
                files::MEMORY_HIGH => Some(LimitWrite::Memory(
                    MemoryFile::High,
                    value(&Limit::parse("memory.high", text).ok()?)?,
                )),
                files::PIDS_MAX => Some(LimitWrite::Pids(value(
                    &Limit::parse("pids.max", text).ok()?,
                )?)),
                files::CPU_MAX => Some(LimitWrite::Cpu(CpuMax::parse(text).ok()?)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn warn(limit: Option<LimitWrite>, t: &Facts) -> Verdict {
    let w = match limit {
        Some(LimitWrite::Memory(MemoryFile::Max, limit)) => memory_max(limit, t),
        Some(LimitWrite::Memory(MemoryFile::High, limit)) => t
            .memory
            .current
            .filter(|&c| c > limit)
            .map(|current| Warning::Throttle { limit, current }),
        // pids.max: a fork fails when it would go over (admin guide 5-6)
        Some(LimitWrite::Pids(limit)) => t
            .pids_current
            .filter(|&c| c >= limit)
            .map(|current| Warning::ForksFail { limit, current }),
        Some(LimitWrite::Cpu(CpuMax {
            quota: Some(quota),
            period,
        })) if period > 0 && quota * 1000 < period * TINY_CPU_PERMILLE => {
            // an empty group is not starved of anything yet
            (t.populated != Some(false)).then(|| Warning::CpuStarved {
                quota,
                period,
                used_pct: t.cpu_pct.map(|p| p.max(0.0).round() as u64),
            })
        }
        _ => None,
    };
    match w {
        Some(w) => Verdict::Warn(vec![w]),
        None => Verdict::Clear,
    }
}

/// memory.max below use (admin guide 5-2-2 memory.max: "If a cgroup's
/// memory usage reaches this limit and can't be reduced, the OOM killer is
/// invoked"; `memory_max_write` reclaims, then OOM-kills until it fits).
fn memory_max(limit: u64, t: &Facts) -> Option<Warning> {
    let current = t.memory.current.filter(|&c| c > limit)?;
    let need = current - limit;
    let m = &t.memory;
    let unreclaimable = m.reclaimable.map(|r| {
        let swap = m.swappable.unwrap_or(0).min(m.swap_room.unwrap_or(0));
        need.saturating_sub(r.saturating_add(swap))
    });
    match unreclaimable {
        Some(0) => Some(Warning::Reclaim { limit, current }),
        left => Some(Warning::OomKill {
            limit,
            current,
            unreclaimable: left,
            procs: t.subtree_procs,
            oom_group: m.oom_group,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CgroupEvents, Keyed};
    use crate::model::tree::snapshot::GroupSample;
    use crate::model::write::{
        create_group, move_process, raw, remove_group, set_cpu_max, set_memory_limit, set_pids_max,
        set_subtree_control,
    };
    use std::time::Duration;

    fn g(p: &str) -> GroupPath {
        GroupPath::new(p)
    }

    fn domain(p: &str) -> Facts {
        Facts {
            path: g(p),
            cgroup_type: Some(CgroupType::Domain),
            domain: Some(g(p)),
            ..Facts::default()
        }
    }

    fn busy(v: &Verdict) -> Option<Errno> {
        match v {
            Verdict::Refuse { errno, .. } => Some(*errno),
            _ => None,
        }
    }

    #[test]
    fn a_move_into_a_group_that_hands_domain_controllers_down_is_refused() {
        let op = move_process(42, &g("lab"), false);
        let mut lab = domain("lab");
        lab.handed = vec!["io".into()];
        let v = check(&op, &lab, None);
        assert_eq!(busy(&v), Some(Errno::BUSY));
        // the words are explain's, before and after
        let e = v.refusal(&op).unwrap();
        assert_eq!(
            e.to_string(),
            "/lab/cgroup.procs: not written: the kernel would refuse it (EBUSY): /lab hands \
             controllers to its children (io), so it cannot hold processes itself (no internal \
             process rule, admin guide 2-4-3) (move the process into a leaf child of /lab instead)"
        );
        // only threaded controllers: the group can become a thread root
        lab.handed = vec!["cpu".into(), "pids".into()];
        assert_eq!(check(&op, &lab, None), Verdict::Clear);
        // ... unless a domain child is populated
        lab.populated_domain_child = true;
        assert_eq!(busy(&check(&op, &lab, None)), Some(Errno::BUSY));
        // nothing handed down: processes may live beside children
        lab.handed.clear();
        assert_eq!(check(&op, &lab, None), Verdict::Clear);
    }

    #[test]
    fn the_root_threaded_groups_and_unknown_types_take_processes() {
        let op = move_process(42, &GroupPath::root(), false);
        let root = Facts {
            handed: vec!["memory".into(), "io".into()],
            ..Facts::default()
        };
        assert_eq!(check(&op, &root, None), Verdict::Clear);
        let mut t = domain("a/t");
        t.cgroup_type = Some(CgroupType::Threaded);
        t.handed = vec!["cpu".into()];
        assert_eq!(
            check(&move_process(1, &g("a/t"), false), &t, None),
            Verdict::Clear
        );
        let invalid = Facts {
            cgroup_type: Some(CgroupType::DomainInvalid),
            ..domain("a/t/x")
        };
        let v = check(&move_process(7, &g("a/t/x"), false), &invalid, None);
        assert_eq!(busy(&v), Some(Errno::OPNOTSUPP));
    }

    #[test]
    fn a_thread_moves_only_inside_its_threaded_domain() {
        let op = move_process(7, &g("b"), true);
        let b = domain("b");
        assert_eq!(busy(&check(&op, &b, Some(&g("a")))), Some(Errno::OPNOTSUPP));
        assert_eq!(check(&op, &b, Some(&g("b"))), Verdict::Clear);
        // unknown source: the kernel decides
        assert_eq!(check(&op, &b, None), Verdict::Clear);
    }

    #[test]
    fn removing_a_group_with_children_or_processes_is_refused() {
        let op = remove_group(&g("lab"));
        let mut lab = domain("lab");
        assert_eq!(check(&op, &lab, None), Verdict::Clear);
        lab.children = 1;
        let v = check(&op, &lab, None);
        assert_eq!(
            v.refusal(&op).unwrap().explanation,
            "not written: the kernel would refuse it (EBUSY): /lab still has 1 child group; only \
             an empty group can be removed"
        );
        let populated = Facts {
            populated: Some(true),
            ..domain("x")
        };
        assert_eq!(
            busy(&check(&remove_group(&g("x")), &populated, None)),
            Some(Errno::BUSY)
        );
        assert_eq!(
            check(&create_group(&g("x/y")), &populated, None),
            Verdict::Clear
        );
    }

    /// This hybrid host: cgroup2 holds only hugetlb, which the root does
    /// not hand down, so a group's cgroup.controllers is empty. Enabling
    /// +hugetlb in a group with processes is ENOENT before any EBUSY (the
    /// kernel's order): no leaf fix, the words say the parent does not
    /// enable it, and the offer is the write at the right level (the
    /// root's subtree_control, then the group's), first-level and nested.
    #[test]
    fn enabling_a_controller_the_parent_does_not_hand_down_is_enoent_not_the_leaf_fix() {
        let plus = [ControllerChange::enable("hugetlb")];
        let hug = || Some(vec!["hugetlb".to_owned()]);
        let mut job = domain("job");
        job.own_procs = Some(3);
        job.offered = Some(Vec::new());
        job.offered_up = vec![(GroupPath::root(), hug())];
        let op = set_subtree_control(&g("job"), &plus);
        let v = check(&op, &job, None);
        assert_eq!(busy(&v), Some(Errno::NOENT));
        assert_eq!(
            v.refusal(&op).unwrap().explanation,
            "not written: the kernel would refuse it (ENOENT): hugetlb is not offered to /job: \
             its parent / does not enable it (top-down rule, admin guide 2-4-2); the nearest \
             ancestor that has hugetlb is /"
        );
        assert_eq!(
            v.offer(&op),
            Some(Offer::EnableAlongPath(vec![
                set_subtree_control(&GroupPath::root(), &plus),
                op.clone()
            ]))
        );
        // nested: /a offers it, /a/b does not hand it down
        let mut deep = domain("a/b/c");
        deep.offered = Some(Vec::new());
        deep.offered_up = vec![
            (g("a/b"), Some(Vec::new())),
            (g("a"), hug()),
            (GroupPath::root(), hug()),
        ];
        let op = set_subtree_control(&g("a/b/c"), &plus);
        assert_eq!(
            check(&op, &deep, None).offer(&op),
            Some(Offer::EnableAlongPath(vec![
                set_subtree_control(&g("a"), &plus),
                set_subtree_control(&g("a/b"), &plus),
                op.clone()
            ]))
        );
        // an ancestor not read: refused all the same, no chain guessed
        deep.offered_up[0].1 = None;
        let v = check(&op, &deep, None);
        assert_eq!(busy(&v), Some(Errno::NOENT));
        assert_eq!(v.offer(&op), None);
        // offered: judged as before (the leaf fix for a group with processes)
        job.offered = hug();
        let op = set_subtree_control(&g("job"), &plus);
        assert_eq!(busy(&check(&op, &job, None)), Some(Errno::BUSY));
    }

    /// The plan to enable hugetlb along the path on this hybrid host
    /// (the root has it, nobody hands it down): / then /t then /t/a. Each
    /// step is judged as it will be after the steps before it (/t is
    /// offered hugetlb once / enables it). /t/a holding a process makes
    /// its step EBUSY (2-4-3), so the plan is refused at step 3, before
    /// any write; /t/a without processes: no step fails.
    #[test]
    fn a_plan_is_judged_step_by_step_before_any_write() {
        let plus = [ControllerChange::enable("hugetlb")];
        let root = Facts {
            path: GroupPath::root(),
            offered: Some(vec!["hugetlb".to_owned()]),
            ..Facts::default()
        };
        let mut t = domain("t");
        t.own_procs = Some(0);
        t.offered = Some(Vec::new());
        let mut a = domain("t/a");
        a.own_procs = Some(1);
        a.offered = Some(Vec::new());
        let plan = |t: &Facts, a: &Facts| {
            vec![
                (
                    set_subtree_control(&GroupPath::root(), &plus),
                    Some(root.clone()),
                ),
                (set_subtree_control(&g("t"), &plus), Some(t.clone())),
                (set_subtree_control(&g("t/a"), &plus), Some(a.clone())),
            ]
        };
        let steps = plan(&t, &a);
        let (i, v) = check_plan(&steps).unwrap();
        assert_eq!((i, busy(&v)), (2, Some(Errno::BUSY)));
        assert!(matches!(v.offer(&steps[2].0), Some(Offer::LeafFix { .. })));
        // no process of its own: every step goes
        a.own_procs = Some(0);
        assert_eq!(check_plan(&plan(&t, &a)), None);
        // a middle group with a process fails at its own step
        t.own_procs = Some(2);
        assert_eq!(check_plan(&plan(&t, &a)).map(|(i, _)| i), Some(1));
        // a step whose facts are unknown is left to the kernel
        let mut steps = plan(&t, &a);
        steps[1].1 = None;
        assert_eq!(check_plan(&steps), None);
    }

    #[test]
    fn enabling_a_domain_controller_in_a_group_with_processes_offers_the_leaf_fix() {
        let op = set_subtree_control(&g("job"), &[ControllerChange::enable("memory")]);
        let mut job = domain("job");
        job.own_procs = Some(3);
        let v = check(&op, &job, None);
        assert_eq!(busy(&v), Some(Errno::BUSY));
        assert_eq!(
            v.offer(&op),
            Some(Offer::LeafFix {
                group: g("job"),
                changes: vec![ControllerChange::enable("memory")],
                nr_procs: 3
            })
        );
        // a thread root takes threaded controllers with processes
        let cpu = set_subtree_control(&g("job"), &[ControllerChange::enable("cpu")]);
        assert_eq!(check(&cpu, &job, None), Verdict::Clear);
        job.populated_domain_child = true;
        assert_eq!(busy(&check(&cpu, &job, None)), Some(Errno::BUSY));
        // no processes, or only disabling: nothing to say
        job.own_procs = Some(0);
        assert_eq!(check(&op, &job, None), Verdict::Clear);
        job.own_procs = Some(2);
        let off = set_subtree_control(&g("job"), &[ControllerChange::disable("memory")]);
        assert_eq!(check(&off, &job, None), Verdict::Clear);
        // the root is exempt
        let root = Facts {
            own_procs: Some(90),
            ..Facts::default()
        };
        assert_eq!(check(&op, &root, None), Verdict::Clear);
        // a domain controller inside a threaded subtree
        let t = Facts {
            cgroup_type: Some(CgroupType::Threaded),
            ..domain("job")
        };
        assert_eq!(busy(&check(&op, &t, None)), Some(Errno::OPNOTSUPP));
    }

    fn mem(current: u64, reclaimable: u64, swappable: u64, swap_room: Option<u64>) -> Facts {
        Facts {
            memory: MemoryFacts {
                current: Some(current),
                reclaimable: Some(reclaimable),
                swappable: Some(swappable),
                swap_room,
                oom_group: false,
            },
            subtree_procs: 2,
            ..domain("a")
        }
    }

    const MIB: u64 = 1 << 20;

    #[test]
    fn memory_max_below_use_reclaims_or_kills() {
        let max = |l| set_memory_limit(&g("a"), MemoryFile::Max, Limit::Value(l));
        // 84 MiB of anon, no swap: 10M kills
        let f = mem(84 * MIB, 0, 84 * MIB, Some(0));
        let v = check(&max(10 * MIB), &f, None);
        assert_eq!(
            v,
            Verdict::Warn(vec![Warning::OomKill {
                limit: 10 * MIB,
                current: 84 * MIB,
                unreclaimable: Some(74 * MIB),
                procs: 2,
                oom_group: false
            }])
        );
        assert!(matches!(&v, Verdict::Warn(w) if w[0].kills()));
        // file cache can go: reclaim only
        let cache = mem(84 * MIB, 80 * MIB, 4 * MIB, Some(0));
        assert_eq!(
            check(&max(10 * MIB), &cache, None),
            Verdict::Warn(vec![Warning::Reclaim {
                limit: 10 * MIB,
                current: 84 * MIB
            }])
        );
        // swap room takes the anon part
        let swap = mem(84 * MIB, 0, 84 * MIB, Some(1 << 30));
        assert!(matches!(
            check(&max(10 * MIB), &swap, None),
            Verdict::Warn(w) if !w[0].kills()
        ));
        // swap room unknown: it may kill, so it asks for the name
        let unknown = mem(84 * MIB, 0, 84 * MIB, None);
        assert!(matches!(check(&max(10 * MIB), &unknown, None), Verdict::Warn(w) if w[0].kills()));
        // above use, or max: nothing
        assert_eq!(check(&max(100 * MIB), &f, None), Verdict::Clear);
        let unlimited = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Max);
        assert_eq!(check(&unlimited, &f, None), Verdict::Clear);
        // the same through the raw editor
        assert!(matches!(
            check(&raw(&g("a"), "memory.max", "10485760"), &f, None),
            Verdict::Warn(w) if w[0].kills()
        ));
    }

    #[test]
    fn memory_high_pids_max_and_a_tiny_cpu_max_warn() {
        let f = Facts {
            pids_current: Some(12),
            cpu_pct: Some(79.6),
            ..mem(84 * MIB, 0, 84 * MIB, Some(0))
        };
        let high = set_memory_limit(&g("a"), MemoryFile::High, Limit::Value(10 * MIB));
        assert_eq!(
            check(&high, &f, None),
            Verdict::Warn(vec![Warning::Throttle {
                limit: 10 * MIB,
                current: 84 * MIB
            }])
        );
        let low = set_memory_limit(&g("a"), MemoryFile::Low, Limit::Value(MIB));
        assert_eq!(check(&low, &f, None), Verdict::Clear);
        assert_eq!(
            check(&set_pids_max(&g("a"), Limit::Value(12)), &f, None),
            Verdict::Warn(vec![Warning::ForksFail {
                limit: 12,
                current: 12
            }])
        );
        assert_eq!(
            check(&set_pids_max(&g("a"), Limit::Value(13)), &f, None),
            Verdict::Clear
        );
        let cpu = |quota| {
            set_cpu_max(
                &g("a"),
                CpuMax {
                    quota: Some(quota),
                    period: 100_000,
                },
            )
        };
        assert_eq!(
            check(&cpu(1000), &f, None),
            Verdict::Warn(vec![Warning::CpuStarved {
                quota: 1000,
                period: 100_000,
                used_pct: Some(80)
            }])
        );
        assert_eq!(check(&cpu(5000), &f, None), Verdict::Clear);
        let empty = Facts {
            populated: Some(false),
            ..f
        };
        assert_eq!(check(&cpu(1000), &empty, None), Verdict::Clear);
    }

    fn sample(p: &str, ty: Option<CgroupType>, populated: bool) -> GroupSample {
        let mut s = GroupSample::new(g(p), 1);
        s.cgroup_type = ty;
        s.hot.events = Some(CgroupEvents {
            populated: Some(populated),
            frozen: Some(false),
        });
        s
    }

    #[test]
    fn facts_come_from_the_snapshot_and_the_childrens_files() {
        let mut leaf = sample("lab/dd", Some(CgroupType::Domain), true);
        leaf.hot.io = Some(crate::cgroupfs::IoStat::default());
        leaf.hot.nr_procs = Some(1);
        let mut t = sample("lab/t", Some(CgroupType::Threaded), true);
        t.hot.pids_current = Some(3);
        let snap = Snapshot {
            at: Duration::ZERO,
            groups: vec![
                sample("", None, true),
                sample("lab", Some(CgroupType::Domain), true),
                leaf,
                t,
            ],
            cost: crate::model::ScanCost::default(),
        };
        let ev = child_evidence(&snap);
        let lab = facts(&snap, &ev, &g("lab"), None, None, None).unwrap();
        assert_eq!(lab.handed, ["io", "pids"]);
        assert!(!lab.handed_exact);
        assert!(lab.populated_domain_child);
        assert_eq!((lab.children, lab.subtree_procs), (2, 1));
        assert_eq!(domain_of(&snap, &g("lab/t")), Some(g("lab")));
        assert_eq!(domain_of(&snap, &g("lab/dd")), Some(g("lab/dd")));
        // the inspected group's own subtree_control is exact
        let mut d = GroupDetail {
            subtree_control: Some(Controllers::parse("cpu")),
            pids: vec![5, 6],
            swap_max: Some(Limit::Value(8 * MIB)),
            swap_current: Some(3 * MIB),
            ..GroupDetail::default()
        };
        d.keyed.memory_stat = Some(Keyed::parse(
            "active_anon 10\ninactive_anon 20\nactive_file 1\ninactive_file 2\nslab_reclaimable 3\n",
        ));
        let lab = facts(&snap, &ev, &g("lab"), Some(&d), None, Some(2 * MIB)).unwrap();
        assert_eq!(
            (lab.handed, lab.handed_exact, lab.own_procs),
            (vec!["cpu".to_owned()], true, Some(2))
        );
        assert_eq!(
            (
                lab.memory.reclaimable,
                lab.memory.swappable,
                lab.memory.swap_room
            ),
            (Some(6), Some(30), Some(2 * MIB))
        );
        assert_eq!(facts(&snap, &ev, &g("nope"), None, None, None), None);
    }
}
