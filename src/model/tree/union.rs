//! One tree from every hierarchy: the union of the group paths each
//! hierarchy's scanner found, each figure taken from the hierarchy that
//! holds its controller ([`Layout::holder`]), falling back to cgroup2's
//! where that hierarchy lacks the group (hybrid: systemd makes a unit in a
//! v1 hierarchy only for the controllers the unit enables) or the figure.
//! PURE.

use crate::cgroupfs::v1::FreezerState;
use crate::cgroupfs::CgroupEvents;
use crate::model::host::layout::{HierId, HierInodesMut, Layout};
use crate::model::tree::part::Part;
use crate::model::tree::snapshot::{HierKind, Snapshot, Sources};
use crate::model::{GroupPath, GroupSample};

/// Which hierarchy each figure is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The tree's backbone: cgroup.procs, cgroup.type, cgroup.events,
    /// pressure, the inode.
    pub primary: HierId,
    /// CPU time: v1 cpuacct, else cgroup2's cpu.stat.
    pub cpu_usage: Option<HierId>,
    /// Throttling: v1 cpu's cpu.stat, else cgroup2's.
    pub cpu_throttle: Option<HierId>,
    pub memory: Option<HierId>,
    pub io: Option<HierId>,
    pub pids: Option<HierId>,
    pub freezer: Option<HierId>,
}

impl Plan {
    /// The plan of a layout; `None` without a hierarchy.
    pub fn of(layout: &Layout) -> Option<Self> {
        Some(Self {
            primary: layout.primary()?,
            cpu_usage: layout.holder("cpuacct"),
            cpu_throttle: layout.holder("cpu"),
            memory: layout.holder("memory"),
            io: layout.holder("io"),
            pids: layout.holder("pids"),
            freezer: layout.holder("freezer"),
        })
    }

    /// The hierarchies whose files a scanner reads: the primary and each
    /// holder, each once, the primary first.
    pub fn hierarchies(&self) -> Vec<HierId> {
        let mut out = vec![self.primary];
        for h in [
            self.cpu_usage,
            self.cpu_throttle,
            self.memory,
            self.io,
            self.pids,
            self.freezer,
        ]
        .into_iter()
        .flatten()
        {
            if !out.contains(&h) {
                out.push(h);
            }
        }
        out
    }
}

impl Plan {
    /// The hierarchies a collector lists: those whose files it reads
    /// ([`Self::hierarchies`]), then every other hierarchy of `layout`
    /// (devices, cpuset, `name=systemd` beside cgroup2, ...), whose
    /// directories are listed though no figure is read from them, so that
    /// the merge knows which hierarchies hold each group ([`holding`]).
    pub fn listed(&self, layout: &Layout) -> Vec<HierId> {
        let mut out = self.hierarchies();
        for h in layout.write_order() {
            if !out.contains(&h) {
                out.push(h);
            }
        }
        out
    }
}

fn kind(id: HierId) -> HierKind {
    match id {
        HierId::V2 => HierKind::V2,
        HierId::V1(_) => HierKind::V1,
    }
}

/// The merge, one hierarchy's samples at a time ([`Merging::add_part`]:
/// a [`Part`], the figures its scanner read of each group), in the order
/// the parts are given (the primary first, as the collector gives them).
/// Each part is consumed as it is added: a figure its hierarchy holds
/// moves into the group's merged sample, the rest is dropped with the
/// part, so that the collector holds the merged tree and a few parts at a
/// time, not every hierarchy's samples (seven hierarchies of 10,000
/// groups were 28 MB of samples held together; a part is a tenth of
/// that). The result is [`merge`]'s; the hierarchies of the parts are
/// distinct.
pub struct Merging<'p> {
    plan: &'p Plan,
    /// The hierarchies read but the primary: room for a group's inodes.
    others: usize,
    /// Whether each group's inode in the hierarchies but the primary is
    /// kept ([`Merging::without_inodes`]).
    inodes: bool,
    /// Sorted by path: each path found so far, its figures so far.
    acc: Vec<Acc>,
}

/// One path's merged sample while the parts come, and where its figures
/// came from so far (a holder's figure replaces cgroup2's, whichever
/// comes first).
struct Acc {
    g: GroupSample,
    /// Whether the inode and cgroup.type are the primary's (else the
    /// first part's that had the path).
    base_primary: bool,
    /// The kind of hierarchy each figure came from so far (a `HierId`
    /// is 16 bytes: 64 of 470 a group).
    cpu: Option<HierKind>,
    memory: Option<HierKind>,
    io: Option<HierKind>,
    pids: Option<HierKind>,
    /// The group's inode in each hierarchy but the primary.
    inodes: HierInodesMut,
}

impl<'p> Merging<'p> {
    pub fn new(plan: &'p Plan) -> Self {
        Self {
            plan,
            others: plan.hierarchies().len().saturating_sub(1),
            inodes: true,
            acc: Vec::new(),
        }
    }

    /// The merge of `parts` parts in all (the primary's and each other
    /// hierarchy's read or listed): room for a group's inode in each made
    /// at once, not grown as the parts come.
    #[must_use]
    pub fn expecting(mut self, parts: usize) -> Self {
        self.others = parts.saturating_sub(1);
        self
    }

    /// Keeps no group's inode in the hierarchies but the primary
    /// (`v1.inodes`): they hold a confirmed write to the group shown, and
    /// a run that never writes (batch, JSON, record, serve) needs none
    /// (at 10,101 groups in 7 hierarchies, 0.8 MB of a one-shot run's
    /// peak).
    #[must_use]
    pub fn without_inodes(mut self) -> Self {
        self.inodes = false;
        self
    }

    /// Adds hierarchy `id`'s samples (sorted by path, as a scanner gives
    /// them), consuming them.
    pub fn add(&mut self, id: HierId, part: Vec<GroupSample>) {
        self.add_part(id, Part::from(part));
    }

    /// [`Merging::add`] of a part: the figures a scanner read of each
    /// group, without the room of a whole sample for each
    /// (`Scanner::read_part`).
    pub fn add_part(&mut self, id: HierId, part: Part) {
        let plan = self.plan;
        let room = self.inodes.then_some(self.others);
        if self.acc.is_empty() {
            self.acc.reserve_exact(part.len());
            part.for_each(|s| self.acc.push(Acc::first(plan, room, id, s)));
            return;
        }
        // both sorted: one pass; a path new to the tree is added after.
        // The scanners share one copy of each path
        // (`source::scan::SharedPaths`): `GroupPath` finds the same copy
        // equal (and not less) by its pointer, without reading the bytes
        let acc = &mut self.acc;
        let mut new = Vec::new();
        let mut i = 0;
        // each group's sample is made in one place in turn: the figures
        // taken move out of it, it is never copied whole
        part.for_each(|s| {
            while i < acc.len() && acc[i].g.path < s.path {
                i += 1;
            }
            match acc.get_mut(i) {
                Some(a) if a.g.path == s.path => a.take(plan, room, id, s),
                _ => new.push(Acc::first(plan, room, id, s)),
            }
        });
        if !new.is_empty() {
            self.acc.extend(new);
            // two sorted runs, no path in both: a stable sort merges them
            self.acc.sort_by(|a, b| a.g.path.cmp(&b.g.path));
        }
    }

    /// The merged samples, sorted by path, with [`Sources`] saying where
    /// each figure came from.
    pub fn finish(self) -> Vec<GroupSample> {
        // made in place, in the room of the larger `Acc`s: the snapshot
        // keeps only what it needs
        let mut out: Vec<GroupSample> = self.acc.into_iter().map(Acc::finish).collect();
        out.shrink_to_fit();
        out
    }
}

impl Acc {
    /// A path first found in hierarchy `id`.
    fn first(plan: &Plan, room: Option<usize>, id: HierId, s: &mut GroupSample) -> Self {
        let mut g = GroupSample::new(s.path.clone(), s.inode);
        g.cgroup_type = s.cgroup_type;
        let mut a = Self {
            g,
            base_primary: id == plan.primary,
            cpu: None,
            memory: None,
            io: None,
            pids: None,
            inodes: HierInodesMut::default(),
        };
        a.take(plan, room, id, s);
        a
    }

    /// Takes from `s` (hierarchy `id`'s sample of this path) the figures
    /// `plan` reads from `id`: those of the controllers it holds, and
    /// cgroup2's where no holder gave one yet; and the group's inode there
    /// (`room`: how many hierarchies' the group may have).
    fn take(&mut self, plan: &Plan, room: Option<usize>, id: HierId, s: &mut GroupSample) {
        let (inode, cgroup_type) = (s.inode, s.cgroup_type);
        let hot = &mut s.hot;
        let g = &mut self.g;
        if id == plan.primary {
            if !self.base_primary {
                g.inode = inode;
                g.cgroup_type = cgroup_type;
                self.base_primary = true;
            }
            g.hot.nr_procs = hot.nr_procs;
            g.hot.events = hot.events;
            g.hot.psi_some_avg10 = hot.psi_some_avg10;
            g.hot.psi_full_avg10 = hot.psi_full_avg10;
        }
        // a holder's figure, else (a holder that lacks the group or the
        // file) cgroup2's
        let wanted = |holder: Option<HierId>, from: Option<HierKind>, has: bool| {
            has && (holder == Some(id)
                || (id == HierId::V2 && holder != Some(HierId::V2) && from.is_none()))
        };
        if wanted(plan.cpu_usage, self.cpu, hot.cpu.is_some()) {
            g.hot.cpu = hot.cpu;
            self.cpu = Some(kind(id));
        }
        if plan.cpu_throttle == Some(id) && matches!(id, HierId::V1(_)) {
            g.hot.v1.cpu_throttle = hot.v1.cpu_throttle;
        }
        if let Some(v) = hot
            .memory_current
            .filter(|_| wanted(plan.memory, self.memory, true))
        {
            g.hot.memory_current = Some(v);
            g.hot.memory_max = hot.memory_max;
            g.hot.swap_current = match hot.v1.memsw_usage {
                // v1: memory + swap, less memory
                Some(memsw) => Some(memsw.saturating_sub(v)),
                None => hot.swap_current,
            };
            self.memory = Some(kind(id));
        }
        if wanted(plan.io, self.io, hot.io.is_some()) {
            g.hot.io = hot.io.take();
            g.hot.v1.sources.io_own_only = hot.v1.sources.io_own_only;
            self.io = Some(kind(id));
        }
        if wanted(plan.pids, self.pids, hot.pids_current.is_some()) {
            g.hot.pids_current = hot.pids_current;
            self.pids = Some(kind(id));
        }
        if plan.freezer == Some(id) && matches!(id, HierId::V1(_)) {
            g.hot.v1.freezer_state = hot.v1.freezer_state;
        }
        if !hot.unreadable.is_empty() {
            g.hot.unreadable.append(&mut hot.unreadable);
        }
        g.hot.v1.held_in.insert(id);
        if let Some(room) = room.filter(|_| id != plan.primary) {
            self.inodes.insert(id, inode, room);
        }
    }

    fn finish(self) -> GroupSample {
        let mut g = self.g;
        g.hot.v1.inodes = self.inodes.finish();
        let mut src = Sources {
            cpu: self.cpu,
            memory: self.memory,
            io: self.io,
            pids: self.pids,
            freezer: None,
            io_own_only: self.io.is_some() && g.hot.v1.sources.io_own_only,
            // the kernel's root, completed after the merge
            // (`model::tree::root`)
            root_kernel_memory: false,
            root_machine_tasks: false,
            // marked after the merge, from the root's blkio lines
            io_uncounted: None,
        };
        // throttling from cpu's cpu.stat, where CPU time came from anywhere
        if let (Some(cpu), Some(t)) = (g.hot.cpu.as_mut(), g.hot.v1.cpu_throttle.take()) {
            cpu.nr_periods = t.nr_periods;
            cpu.nr_throttled = t.nr_throttled;
            cpu.throttled_usec = t.throttled_usec;
        }
        // frozen: v1's freezer.state where v1 holds the freezer, or
        // cgroup2's own freezer (cgroup.freeze, which hybrid hosts have too)
        if let Some(state) = g.hot.v1.freezer_state {
            src.freezer = Some(HierKind::V1);
            let mut ev = g.hot.events.unwrap_or(CgroupEvents {
                populated: None,
                frozen: None,
            });
            ev.frozen = Some(state == FreezerState::Frozen || ev.frozen == Some(true));
            g.hot.events = Some(ev);
        } else if g.hot.events.is_some_and(|e| e.frozen.is_some()) {
            src.freezer = Some(HierKind::V2);
        }
        g.hot.v1.sources = src;
        g
    }
}

/// Merges the samples each hierarchy's scanner read (`parts`: each sorted
/// by path, as a scanner gives them, each of another hierarchy) into one
/// list sorted by path: every path found in any of them, its figures
/// picked by `plan`, and [`Sources`] saying where each came from
/// ([`Merging`], all parts at once).
pub fn merge(plan: &Plan, parts: Vec<(HierId, Vec<GroupSample>)>) -> Vec<GroupSample> {
    let mut m = Merging::new(plan).expecting(parts.len());
    for (id, part) in parts {
        m.add(id, part);
    }
    m.finish()
}

/// The hierarchies that hold `group`, in the order cgtop writes them
/// ([`Layout::write_order`]): where a move, a mkdir below it or its rmdir
/// is made, and what a confirmation, the status line and the log name.
/// cgroup2 alone on a pure cgroup2 layout. On a v1 or hybrid layout, those
/// whose scanner listed the group in `snap` (every hierarchy is listed:
/// [`Plan::listed`]); a group the snapshot does not have (made since,
/// or no refresh yet) is not known to be anywhere, so every hierarchy is
/// named and the writer passes over those without it.
pub fn holding(layout: &Layout, snap: &Snapshot, group: &GroupPath) -> Vec<HierId> {
    let order = layout.write_order();
    if layout.v1.is_empty() {
        return order;
    }
    match snap.find(group).map(|g| g.hot.v1.held_in) {
        Some(set) if !set.is_empty() => order.into_iter().filter(|&h| set.contains(h)).collect(),
        _ => order,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod reference {
        use super::super::*;

        /// The samples of one path, one slot per part.
        struct Row<'a> {
            ids: &'a [HierId],
            samples: Vec<Option<GroupSample>>,
        }

        impl Row<'_> {
            fn of(&self, id: Option<HierId>) -> Option<&GroupSample> {
                let id = id?;
                let i = self.ids.iter().position(|&x| x == id)?;
                self.samples[i].as_ref()
            }

            /// A figure from its holder, else (a holder that lacks the group or
            /// the file) from cgroup2, with where it came from.
            fn pick<T>(
                &self,
                holder: Option<HierId>,
                f: impl Fn(&GroupSample) -> Option<T>,
            ) -> Option<(T, HierId)> {
                let from = |id: Option<HierId>| {
                    let id = id?;
                    self.of(Some(id)).and_then(&f).map(|v| (v, id))
                };
                from(holder).or_else(|| {
                    if holder == Some(HierId::V2) {
                        None
                    } else {
                        from(Some(HierId::V2))
                    }
                })
            }
        }

        /// The merge as it was (every part held until the end, a row of
        /// every part's sample per path): the reference [`Merging`] must
        /// equal.
        /// Merges the samples each hierarchy's scanner read (`parts`: each sorted
        /// by path, as a scanner gives them) into one list sorted by path: every
        /// path found in any of them, its figures picked by `plan`, and
        /// [`Sources`] saying where each came from.
        pub(super) fn merge_by_rows(
            plan: &Plan,
            parts: Vec<(HierId, Vec<GroupSample>)>,
        ) -> Vec<GroupSample> {
            let ids: Vec<HierId> = parts.iter().map(|(id, _)| *id).collect();
            let cap = parts.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
            let mut iters: Vec<std::vec::IntoIter<GroupSample>> =
                parts.into_iter().map(|(_, v)| v.into_iter()).collect();
            let mut out = Vec::with_capacity(cap);
            loop {
                // the part whose next path is the least (the first of equals)
                let least = (0..iters.len())
                    .filter(|&k| head(&iters[k]).is_some())
                    .min_by(|&a, &b| head(&iters[a]).cmp(&head(&iters[b])));
                let Some(first) = least.and_then(|l| iters[l].next()) else {
                    break;
                };
                let samples: Vec<Option<GroupSample>> = iters
                    .iter_mut()
                    .enumerate()
                    .map(|(k, it)| {
                        if Some(k) == least {
                            None
                        } else if head(it) == Some(&first.path) {
                            it.next()
                        } else {
                            None
                        }
                    })
                    .collect();
                let mut row = Row { ids: &ids, samples };
                if let Some(l) = least {
                    row.samples[l] = Some(first);
                }
                out.push(merge_row(plan, row));
            }
            out
        }

        /// The path a part's next sample has.
        fn head(it: &std::vec::IntoIter<GroupSample>) -> Option<&crate::model::GroupPath> {
            it.as_slice().first().map(|g| &g.path)
        }

        fn merge_row(plan: &Plan, mut row: Row<'_>) -> GroupSample {
            // the backbone: the primary's sample, else the first that has the path
            let base = row
                .ids
                .iter()
                .position(|&x| x == plan.primary)
                .filter(|&i| row.samples[i].is_some())
                .or_else(|| row.samples.iter().position(Option::is_some));
            let (path, inode, cgroup_type) = match base.and_then(|i| row.samples[i].as_mut()) {
                Some(b) => (std::mem::take(&mut b.path), b.inode, b.cgroup_type),
                None => (crate::model::GroupPath::root(), 0, None),
            };
            let row = &row;
            let mut g = GroupSample::new(path, inode);
            g.cgroup_type = cgroup_type;
            let primary = row.of(Some(plan.primary));
            let mut src = Sources::default();
            // CPU time from cpuacct (or cgroup2), throttling from cpu's cpu.stat
            if let Some((mut cpu, from)) = row.pick(plan.cpu_usage, |s| s.hot.cpu) {
                src.cpu = Some(kind(from));
                if let Some(HierId::V1(_)) = plan.cpu_throttle {
                    if let Some(t) = row
                        .of(plan.cpu_throttle)
                        .and_then(|s| s.hot.v1.cpu_throttle)
                    {
                        cpu.nr_periods = t.nr_periods;
                        cpu.nr_throttled = t.nr_throttled;
                        cpu.throttled_usec = t.throttled_usec;
                    }
                }
                g.hot.cpu = Some(cpu);
            }
            if let Some((v, from)) = row.pick(plan.memory, |s| s.hot.memory_current) {
                src.memory = Some(kind(from));
                g.hot.memory_current = Some(v);
                let s = row.of(Some(from));
                g.hot.memory_max = s.and_then(|s| s.hot.memory_max);
                g.hot.swap_current = s.and_then(|s| match s.hot.v1.memsw_usage {
                    // v1: memory + swap, less memory
                    Some(memsw) => Some(memsw.saturating_sub(v)),
                    None => s.hot.swap_current,
                });
            }
            if let Some((io, from)) = row.pick(plan.io, |s| s.hot.io.clone()) {
                src.io = Some(kind(from));
                src.io_own_only = row
                    .of(Some(from))
                    .is_some_and(|s| s.hot.v1.sources.io_own_only);
                g.hot.io = Some(io);
            }
            if let Some((v, from)) = row.pick(plan.pids, |s| s.hot.pids_current) {
                src.pids = Some(kind(from));
                g.hot.pids_current = Some(v);
            }
            if let Some(p) = primary {
                g.hot.nr_procs = p.hot.nr_procs;
                g.hot.events = p.hot.events;
                g.hot.psi_some_avg10 = p.hot.psi_some_avg10;
                g.hot.psi_full_avg10 = p.hot.psi_full_avg10;
            }
            // frozen: v1's freezer.state where v1 holds the freezer, or cgroup2's
            // own freezer (cgroup.freeze, which hybrid hosts have too)
            let state = match plan.freezer {
                Some(id @ HierId::V1(_)) => row.of(Some(id)).and_then(|s| s.hot.v1.freezer_state),
                _ => None,
            };
            if let Some(state) = state {
                src.freezer = Some(HierKind::V1);
                g.hot.v1.freezer_state = Some(state);
                let mut ev = g.hot.events.unwrap_or(CgroupEvents {
                    populated: None,
                    frozen: None,
                });
                ev.frozen = Some(state == FreezerState::Frozen || ev.frozen == Some(true));
                g.hot.events = Some(ev);
            } else if g.hot.events.is_some_and(|e| e.frozen.is_some()) {
                src.freezer = Some(HierKind::V2);
            }
            for s in row.samples.iter().flatten() {
                g.hot.unreadable.extend(s.hot.unreadable.iter().cloned());
            }
            g.hot.v1.sources = src;
            g.hot.v1.held_in = row
                .ids
                .iter()
                .zip(&row.samples)
                .filter(|(_, s)| s.is_some())
                .map(|(&id, _)| id)
                .collect();
            let mut inodes = crate::model::host::layout::HierInodesMut::default();
            for (&id, s) in row.ids.iter().zip(&row.samples) {
                if let Some(s) = s.as_ref().filter(|_| id != plan.primary) {
                    inodes.insert(id, s.inode, 0);
                }
            }
            g.hot.v1.inodes = inodes.finish();
            g
        }

        pub(super) use merge_by_rows as merge;
    }
    use crate::cgroupfs::v1::CpuThrottle;
    use crate::cgroupfs::{CpuStat, IoStat, Limit};
    use crate::model::GroupPath;

    /// This host: cgroup2 primary, cpu 0, cpuacct 1, memory 2, blkio 3,
    /// pids 4, freezer 5.
    fn hybrid() -> Plan {
        Plan {
            primary: HierId::V2,
            cpu_usage: Some(HierId::V1(1)),
            cpu_throttle: Some(HierId::V1(0)),
            memory: Some(HierId::V1(2)),
            io: Some(HierId::V1(3)),
            pids: Some(HierId::V1(4)),
            freezer: Some(HierId::V1(5)),
        }
    }

    fn g(path: &str, ino: u64, f: impl FnOnce(&mut GroupSample)) -> GroupSample {
        let mut s = GroupSample::new(GroupPath::new(path), ino);
        f(&mut s);
        s
    }

    fn cpu(usage: u64) -> CpuStat {
        CpuStat {
            usage_usec: usage,
            ..CpuStat::default()
        }
    }

    fn paths(v: &[GroupSample]) -> Vec<&[u8]> {
        v.iter().map(|g| g.path.as_bytes()).collect()
    }

    /// Random parts of a random plan, from `seed`: up to 7 hierarchies
    /// (cgroup2 among them or not), each with some of 12 paths, each
    /// figure there or not.
    /// xorshift: the same parts for the same seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        /// `Some` two times in three.
        fn maybe(&mut self, n: u64) -> Option<u64> {
            (self.next(3) != 0).then(|| self.next(n))
        }
    }

    fn random_parts(seed: u64) -> (Plan, Vec<(HierId, Vec<GroupSample>)>) {
        use crate::cgroupfs::io::{IoStatDev, IoStatDevice};
        use crate::cgroupfs::CgroupType;
        let mut r = Rng(seed | 1);
        let all = [
            HierId::V2,
            HierId::V1(0),
            HierId::V1(1),
            HierId::V1(2),
            HierId::V1(3),
            HierId::V1(4),
            HierId::V1(5),
        ];
        let mut ids: Vec<HierId> = all.iter().copied().filter(|_| r.next(4) != 0).collect();
        if ids.is_empty() {
            ids.push(HierId::V2);
        }
        // the primary first, as the collector gives them (or not)
        let primary = ids[r.next(ids.len() as u64) as usize];
        if r.next(4) != 0 {
            ids.retain(|&h| h != primary);
            ids.insert(0, primary);
        }
        let pick = |r: &mut Rng| all.get(r.next(all.len() as u64 + 1) as usize).copied();
        let plan = Plan {
            primary,
            cpu_usage: pick(&mut r),
            cpu_throttle: pick(&mut r),
            memory: pick(&mut r),
            io: pick(&mut r),
            pids: pick(&mut r),
            freezer: pick(&mut r),
        };
        let names = [
            "", "a", "a/b", "a/b/c", "a/c", "b", "b/x", "c", "c/d", "d", "e", "f",
        ];
        let parts = ids
            .iter()
            .map(|&id| {
                let samples = names
                    .iter()
                    .filter_map(|&path| {
                        if r.next(3) == 0 {
                            return None;
                        }
                        let mut s = GroupSample::new(GroupPath::new(path), r.next(1000));
                        s.cgroup_type =
                            [None, Some(CgroupType::Domain), Some(CgroupType::Threaded)]
                                [r.next(3) as usize];
                        let h = &mut s.hot;
                        h.cpu = r.maybe(1_000).map(|u| CpuStat {
                            usage_usec: u,
                            user_usec: Some(u / 2),
                            nr_periods: Some(u % 7),
                            ..CpuStat::default()
                        });
                        h.v1.cpu_throttle = r.maybe(50).map(|t| CpuThrottle {
                            nr_periods: Some(t),
                            nr_throttled: None,
                            throttled_usec: Some(t * 3),
                        });
                        h.memory_current = r.maybe(1_000);
                        h.memory_max = r.maybe(2_000).map(Limit::Value);
                        h.swap_current = r.maybe(100);
                        h.v1.memsw_usage = r.maybe(1_500);
                        h.io = r.maybe(100).map(|v| {
                            IoStat(vec![(
                                IoStatDevice::Unknown,
                                IoStatDev {
                                    rbytes: Some(v),
                                    ..IoStatDev::default()
                                },
                            )])
                        });
                        h.v1.sources.io_own_only = r.next(2) == 0;
                        h.pids_current = r.maybe(50);
                        h.nr_procs = r.maybe(50);
                        h.events = r.maybe(4).map(|e| CgroupEvents {
                            populated: Some(e & 1 == 1),
                            frozen: (e & 2 == 2).then_some(r.next(2) == 0),
                        });
                        h.psi_some_avg10 = r.maybe(100).map(|v| v as u32);
                        h.v1.freezer_state = [
                            None,
                            Some(FreezerState::Thawed),
                            Some(FreezerState::Freezing),
                            Some(FreezerState::Frozen),
                        ][r.next(4) as usize];
                        if r.next(5) == 0 {
                            h.unreadable.push(crate::model::tree::snapshot::Unreadable {
                                file: format!("f{}", r.next(9)),
                                error: "EACCES".to_owned(),
                            });
                        }
                        Some(s)
                    })
                    .collect();
                (id, samples)
            })
            .collect();
        (plan, parts)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// Folding the parts one at a time, each consumed as it comes,
        /// gives what holding every part and merging them row by row gave.
        #[test]
        fn one_part_at_a_time_merges_as_all_at_once(seed in proptest::prelude::any::<u64>()) {
            let (plan, parts) = random_parts(seed);
            let want = reference::merge(&plan, parts.clone());
            proptest::prop_assert_eq!(merge(&plan, parts), want);
        }
    }

    #[test]
    fn the_union_of_paths_in_order() {
        let parts = vec![
            (
                HierId::V2,
                vec![g("", 1, |_| ()), g("a", 2, |_| ()), g("c", 3, |_| ())],
            ),
            (
                HierId::V1(2),
                vec![g("", 10, |_| ()), g("b", 11, |_| ()), g("c", 12, |_| ())],
            ),
            (HierId::V1(4), vec![g("", 20, |_| ()), g("b/x", 21, |_| ())]),
        ];
        let m = merge(&hybrid(), parts);
        assert_eq!(paths(&m), [&b""[..], b"a", b"b", b"b/x", b"c"]);
        // the inode is the primary's where it has the group
        assert_eq!(m[4].inode, 3);
        assert_eq!(m[2].inode, 11, "else the first hierarchy that has it");
        // each hierarchy's own inode, what a write there is held to
        let inode_in = |k: usize, h| m[k].inode_in(h, HierId::V2);
        assert_eq!(inode_in(4, HierId::V2), Some(3));
        assert_eq!(inode_in(4, HierId::V1(2)), Some(12));
        assert_eq!(inode_in(4, HierId::V1(4)), None, "not there");
        assert_eq!(inode_in(2, HierId::V1(2)), Some(11));
        assert_eq!(inode_in(2, HierId::V2), None, "not in cgroup2");
        assert_eq!(inode_in(3, HierId::V1(4)), Some(21));
        assert_eq!(inode_in(0, HierId::V1(4)), Some(20));
    }

    #[test]
    fn a_merge_without_inodes_keeps_the_figures_and_no_hierarchys_inode() {
        let parts = || {
            vec![
                (HierId::V2, vec![g("", 1, |_| ()), g("c", 3, |_| ())]),
                (HierId::V1(2), vec![g("", 10, |_| ()), g("c", 12, |_| ())]),
            ]
        };
        let full = merge(&hybrid(), parts());
        let plan = hybrid();
        let mut m = Merging::new(&plan).expecting(2).without_inodes();
        for (id, part) in parts() {
            m.add(id, part);
        }
        let bare = m.finish();
        assert_eq!(bare[1].inode_in(HierId::V1(2), HierId::V2), None);
        assert_eq!(full[1].inode_in(HierId::V1(2), HierId::V2), Some(12));
        // the primary's inode stays the sample's own
        assert_eq!(bare[1].inode_in(HierId::V2, HierId::V2), Some(3));
        let mut without = full.clone();
        for g in &mut without {
            g.hot.v1.inodes = crate::model::host::layout::HierInodes::default();
        }
        assert_eq!(bare, without, "nothing else differs");
    }

    #[test]
    fn each_figure_from_its_holder_and_its_source_said() {
        let v2 = g("a", 1, |s| {
            s.hot.cpu = Some(cpu(5));
            s.hot.nr_procs = Some(2);
            s.hot.events = Some(CgroupEvents {
                populated: Some(true),
                frozen: Some(false),
            });
        });
        let throttle = g("a", 7, |s| {
            s.hot.v1.cpu_throttle = Some(CpuThrottle {
                nr_periods: Some(10),
                nr_throttled: Some(4),
                throttled_usec: Some(900),
            });
        });
        let acct = g("a", 8, |s| s.hot.cpu = Some(cpu(1_000)));
        let mem = g("a", 9, |s| {
            s.hot.memory_current = Some(100);
            s.hot.memory_max = Some(Limit::Max);
            s.hot.v1.memsw_usage = Some(130);
        });
        let io = g("a", 10, |s| {
            s.hot.io = Some(IoStat::default());
            s.hot.v1.sources.io_own_only = true;
        });
        let pids = g("a", 11, |s| s.hot.pids_current = Some(3));
        let frz = g("a", 12, |s| {
            s.hot.v1.freezer_state = Some(FreezerState::Freezing);
        });
        let parts = vec![
            (HierId::V2, vec![v2]),
            (HierId::V1(0), vec![throttle]),
            (HierId::V1(1), vec![acct]),
            (HierId::V1(2), vec![mem]),
            (HierId::V1(3), vec![io]),
            (HierId::V1(4), vec![pids]),
            (HierId::V1(5), vec![frz]),
        ];
        let m = merge(&hybrid(), parts);
        let h = &m[0].hot;
        let c = h.cpu.unwrap();
        assert_eq!(c.usage_usec, 1_000, "cpuacct, not cgroup2's core cpu.stat");
        assert_eq!(
            (c.nr_periods, c.nr_throttled, c.throttled_usec),
            (Some(10), Some(4), Some(900))
        );
        assert_eq!(h.memory_current, Some(100));
        assert_eq!(h.swap_current, Some(30), "memsw - usage");
        assert_eq!(h.memory_max, Some(Limit::Max));
        assert_eq!(h.pids_current, Some(3));
        assert_eq!(h.nr_procs, Some(2), "the primary's cgroup.procs");
        assert_eq!(h.v1.freezer_state, Some(FreezerState::Freezing));
        assert_eq!(
            h.events.unwrap().frozen,
            Some(false),
            "freezing is not frozen yet"
        );
        assert_eq!(m[0].inode, 1);
        let s = h.v1.sources;
        assert_eq!(
            [s.cpu, s.memory, s.io, s.pids, s.freezer],
            [Some(HierKind::V1); 5]
        );
        assert!(s.io_own_only);
        let json = serde_json::to_value(h).unwrap();
        assert_eq!(json["sources"]["cpu"], "v1");
        assert_eq!(json["sources"]["io_own_only"], true);
        assert_eq!(json["freezer_state"], "freezing");
        assert!(json.get("cpu_throttle").is_none() && json.get("memsw_usage").is_none());
    }

    /// Each hierarchy's figures as a scanner reads them into a part
    /// (`Part::push`, one controller's files a hierarchy): a figure of
    /// each controller lands in the merged sample, from its holder.
    #[test]
    fn a_figure_of_each_controller_lands_from_its_part() {
        use crate::model::tree::part::Part;
        use crate::model::HotStats;
        let part = |f: fn(&mut HotStats)| {
            let mut p = Part::default();
            for (path, ino) in [("", 1), ("a", 2)] {
                let mut h = HotStats::default();
                f(&mut h);
                p.push(GroupPath::new(path), ino, None, &mut h);
            }
            p
        };
        let plan = hybrid();
        let mut m = Merging::new(&plan);
        m.add_part(
            HierId::V2,
            part(|h| {
                h.cpu = Some(cpu(5));
                h.nr_procs = Some(2);
                h.memory_current = Some(1);
            }),
        );
        m.add_part(
            HierId::V1(0),
            part(|h| {
                h.v1.cpu_throttle = Some(CpuThrottle {
                    nr_periods: Some(10),
                    nr_throttled: Some(4),
                    throttled_usec: None,
                });
            }),
        );
        m.add_part(HierId::V1(1), part(|h| h.cpu = Some(cpu(1_000))));
        m.add_part(
            HierId::V1(2),
            part(|h| {
                h.memory_current = Some(100);
                h.v1.memsw_usage = Some(150);
            }),
        );
        m.add_part(
            HierId::V1(3),
            part(|h| {
                use crate::cgroupfs::io::{IoStatDev, IoStatDevice};
                h.io = Some(IoStat(vec![(
                    IoStatDevice::Unknown,
                    IoStatDev {
                        wbytes: Some(4096),
                        ..IoStatDev::default()
                    },
                )]));
            }),
        );
        m.add_part(HierId::V1(4), part(|h| h.pids_current = Some(3)));
        m.add_part(
            HierId::V1(5),
            part(|h| h.v1.freezer_state = Some(FreezerState::Frozen)),
        );
        let merged = m.finish();
        assert_eq!(paths(&merged), [&b""[..], b"a"]);
        for g in &merged {
            let h = &g.hot;
            let c = h.cpu.unwrap();
            assert_eq!(c.usage_usec, 1_000, "cpuacct's");
            assert_eq!((c.nr_periods, c.nr_throttled), (Some(10), Some(4)), "cpu's");
            assert_eq!(h.memory_current, Some(100), "memory's");
            assert_eq!(h.swap_current, Some(50), "memory's memsw less its usage");
            let io = h.io.as_ref().unwrap();
            assert_eq!(io.0[0].1.wbytes, Some(4096), "blkio's");
            assert_eq!(h.pids_current, Some(3), "pids'");
            assert_eq!(h.events.unwrap().frozen, Some(true), "freezer's");
            assert_eq!(h.nr_procs, Some(2), "cgroup2's");
            assert!((0..6).all(|i| h.v1.held_in.contains(HierId::V1(i))));
            let s = h.v1.sources;
            assert_eq!(
                [s.cpu, s.memory, s.io, s.pids, s.freezer],
                [Some(HierKind::V1); 5]
            );
        }
    }

    #[test]
    fn a_group_v1_lacks_falls_back_to_cgroup2() {
        // systemd made the unit in cgroup2 only (no controller of v1
        // enabled for it): cgroup2's core cpu.stat stands in for cpuacct
        let parts = vec![
            (
                HierId::V2,
                vec![
                    g("", 1, |s| s.hot.cpu = Some(cpu(9))),
                    g("u", 2, |s| s.hot.cpu = Some(cpu(5))),
                ],
            ),
            (HierId::V1(1), vec![g("", 3, |s| s.hot.cpu = Some(cpu(90)))]),
            (
                HierId::V1(0),
                vec![g("", 4, |s| {
                    s.hot.v1.cpu_throttle = Some(CpuThrottle::default());
                })],
            ),
        ];
        let m = merge(&hybrid(), parts);
        assert_eq!(m[0].hot.cpu.unwrap().usage_usec, 90);
        assert_eq!(m[0].hot.v1.sources.cpu, Some(HierKind::V1));
        assert_eq!(m[1].hot.cpu.unwrap().usage_usec, 5);
        assert_eq!(m[1].hot.v1.sources.cpu, Some(HierKind::V2));
        assert_eq!(m[1].hot.memory_current, None);
        assert_eq!(m[1].hot.v1.sources.memory, None);
        // a frozen v1 group is frozen whatever cgroup2 says
        let parts = vec![
            (HierId::V2, vec![g("", 1, |_| ())]),
            (
                HierId::V1(5),
                vec![g("", 2, |s| {
                    s.hot.v1.freezer_state = Some(FreezerState::Frozen);
                })],
            ),
        ];
        let m = merge(&hybrid(), parts);
        assert_eq!(m[0].hot.events.unwrap().frozen, Some(true));
    }

    #[test]
    fn plan_of_this_hosts_layout() {
        use crate::model::host::mountinfo::parse;
        let text = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
";
        let l = Layout::from_mounts(&parse(text.as_bytes()));
        let p = Plan::of(&l).unwrap();
        assert_eq!(p.cpu_usage, Some(HierId::V1(1)));
        assert_eq!(p.io, Some(HierId::V2));
        // cpuset holds nothing cgtop reads on every refresh: not scanned
        assert_eq!(
            p.hierarchies(),
            [HierId::V2, HierId::V1(1), HierId::V1(0), HierId::V1(3)]
        );
    }

    /// This host's kind of layout: cgroup2 beside v1 cpu,cpuacct, memory,
    /// devices, cpuset and name=systemd.
    fn hybrid_layout() -> Layout {
        use crate::model::host::mountinfo::parse;
        let text = "30 29 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
31 29 0:27 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd
32 29 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
33 29 0:29 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
34 29 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
35 29 0:31 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices
";
        Layout::from_mounts(&parse(text.as_bytes()))
    }

    #[test]
    fn every_hierarchy_is_listed_and_each_group_says_which_hold_it() {
        let l = hybrid_layout();
        let p = Plan::of(&l).unwrap();
        // systemd (0), cpu,cpuacct (1), cpuset (2), memory (3), devices (4)
        let listed = p.listed(&l);
        assert_eq!(listed.len(), 6, "{listed:?}");
        assert_eq!(&listed[..3], &p.hierarchies()[..]);
        // /a is in cgroup2, cpu,cpuacct and memory; not in systemd,
        // cpuset, devices
        let parts = listed
            .iter()
            .map(|&id| {
                let mut v = vec![g("", 1, |_| ())];
                if matches!(id, HierId::V2 | HierId::V1(1 | 3)) {
                    v.push(g("a", 2, |_| ()));
                }
                (id, v)
            })
            .collect();
        let snap = Snapshot {
            at: std::time::Duration::ZERO,
            groups: merge(&p, parts),
            cost: crate::model::tree::snapshot::ScanCost::default(),
        };
        assert_eq!(
            holding(&l, &snap, &GroupPath::new("a")),
            [HierId::V2, HierId::V1(1), HierId::V1(3)]
        );
        // the root is in every one, cpuset last
        let all = holding(&l, &snap, &GroupPath::root());
        assert_eq!(all.len(), 6);
        assert_eq!(all.first(), Some(&HierId::V2));
        assert_eq!(all.last(), Some(&HierId::V1(2)));
        // a group the snapshot does not have yet: every hierarchy
        assert_eq!(holding(&l, &snap, &GroupPath::new("new")), all);
        // pure cgroup2: cgroup2 alone
        let v2 = Layout {
            v2: l.v2.clone(),
            v1: Vec::new(),
        };
        assert_eq!(holding(&v2, &snap, &GroupPath::new("a")), [HierId::V2]);
    }
}
