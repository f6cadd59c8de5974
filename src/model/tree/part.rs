//! One hierarchy's samples as the merge takes them ([`Part`]): each
//! group's path, inode and cgroup.type, and only the figures that
//! hierarchy's scan read. A cgroup v1 hierarchy gives 1-4 of a group's
//! hot figures (cpuacct its CPU time, memory its usage, pids its count)
//! where a whole `GroupSample` has room for all of them (400 bytes): at
//! 10,000 groups in each of seven hierarchies, the samples read for the
//! merge (`union::Merging`) were most of a one-shot run's peak memory. A
//! part holds 32 bytes a group and 16 a figure read.
//! PURE.

use crate::cgroupfs::v1::{CpuThrottle, FreezerState};
use crate::cgroupfs::{CgroupEvents, CgroupType, CpuStat, IoStat, Limit};
use crate::model::tree::snapshot::{HotStats, Unreadable};
use crate::model::{GroupPath, GroupSample};

/// One figure of a group's hot figures ([`HotStats`]): a field that was
/// there (`Some`), or a part of one. A group's figures are kept in the
/// order [`Part::push`] gives them: a struct's marker (`Cpu`, `Throttle`)
/// before its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Figure {
    /// `cpu` is there, with this usage_usec; its other fields follow.
    Cpu(u64),
    CpuUser(u64),
    CpuSystem(u64),
    CpuPeriods(u64),
    CpuThrottled(u64),
    CpuThrottledUsec(u64),
    /// v1 cpu.stat's throttling (`v1.cpu_throttle`) is there; its fields
    /// follow.
    Throttle,
    ThrottlePeriods(u64),
    ThrottleCount(u64),
    ThrottleUsec(u64),
    Memory(u64),
    MemoryMax(u64),
    /// memory.max says "max" (v1: the page counter's "no limit").
    MemoryMaxNone,
    MemoryLimit(u64),
    Swap(u64),
    Memsw(u64),
    /// `io`: the part's list at this index.
    Io(u32),
    /// v1's IO figures are the group's own (`v1.sources.io_own_only`).
    IoOwnOnly,
    Pids(u64),
    Procs(u64),
    Events(CgroupEvents),
    PsiSome(u32),
    PsiFull(u32),
    ThrottledLocal(u64),
    Freezer(FreezerState),
    /// One of `unreadable`: the part's at this index.
    Unreadable(u32),
}

/// A group of a [`Part`]: its path, inode and cgroup.type, and where its
/// figures are. Sorted, deduplicated or left out as a sample would be
/// ([`Part::groups_mut`]): its figures go with it.
#[derive(Debug)]
pub struct PartGroup {
    pub path: GroupPath,
    pub inode: u64,
    /// The part's `figures[start..start + len]`.
    start: u32,
    len: u16,
    pub cgroup_type: Option<CgroupType>,
}

/// The samples one hierarchy's scan read, holding only the figures read
/// (see the module's comment): made by [`Part::push`], group by group,
/// and taken back as samples by [`Part::for_each`] (the merge) or
/// [`Part::take_into`]. Every figure of [`HotStats`] is kept but those the
/// merge makes: `v1.held_in`, `v1.inodes` and `v1.sources` (bar
/// `io_own_only`).
#[derive(Debug, Default)]
pub struct Part {
    groups: Vec<PartGroup>,
    figures: Vec<Figure>,
    io: Vec<IoStat>,
    unreadable: Vec<Unreadable>,
}

/// An index of a part's lists: they hold far fewer than 2^32 items (a
/// few figures a group).
fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Part {
    /// A part with room for `groups` groups (and a figure each).
    pub fn with_capacity(groups: usize) -> Self {
        Self {
            groups: Vec::with_capacity(groups),
            figures: Vec::with_capacity(groups),
            io: Vec::new(),
            unreadable: Vec::new(),
        }
    }

    /// Adds a group with the figures of `hot`, which are taken out of it
    /// (its IO list and unreadable files moved; the rest copied): `hot`
    /// is left to be filled anew.
    pub fn push(
        &mut self,
        path: GroupPath,
        inode: u64,
        cgroup_type: Option<CgroupType>,
        hot: &mut HotStats,
    ) {
        let start = self.figures.len();
        let f = &mut self.figures;
        if let Some(c) = hot.cpu {
            f.push(Figure::Cpu(c.usage_usec));
            opt(f, c.user_usec, Figure::CpuUser);
            opt(f, c.system_usec, Figure::CpuSystem);
            opt(f, c.nr_periods, Figure::CpuPeriods);
            opt(f, c.nr_throttled, Figure::CpuThrottled);
            opt(f, c.throttled_usec, Figure::CpuThrottledUsec);
        }
        if let Some(t) = hot.v1.cpu_throttle {
            f.push(Figure::Throttle);
            opt(f, t.nr_periods, Figure::ThrottlePeriods);
            opt(f, t.nr_throttled, Figure::ThrottleCount);
            opt(f, t.throttled_usec, Figure::ThrottleUsec);
        }
        opt(f, hot.memory_current, Figure::Memory);
        match hot.memory_max {
            Some(Limit::Value(v)) => f.push(Figure::MemoryMax(v)),
            Some(Limit::Max) => f.push(Figure::MemoryMaxNone),
            None => {}
        }
        opt(f, hot.memory_limit, Figure::MemoryLimit);
        opt(f, hot.swap_current, Figure::Swap);
        opt(f, hot.v1.memsw_usage, Figure::Memsw);
        opt(f, hot.pids_current, Figure::Pids);
        opt(f, hot.nr_procs, Figure::Procs);
        opt(f, hot.throttled_local_usec, Figure::ThrottledLocal);
        if let Some(io) = hot.io.take() {
            f.push(Figure::Io(index(self.io.len())));
            self.io.push(io);
        }
        if hot.v1.sources.io_own_only {
            f.push(Figure::IoOwnOnly);
        }
        if let Some(e) = hot.events {
            f.push(Figure::Events(e));
        }
        if let Some(v) = hot.psi_some_avg10 {
            f.push(Figure::PsiSome(v));
        }
        if let Some(v) = hot.psi_full_avg10 {
            f.push(Figure::PsiFull(v));
        }
        if let Some(s) = hot.v1.freezer_state {
            f.push(Figure::Freezer(s));
        }
        for u in hot.unreadable.drain(..) {
            f.push(Figure::Unreadable(index(self.unreadable.len())));
            self.unreadable.push(u);
        }
        let len = u16::try_from(f.len() - start).unwrap_or(u16::MAX);
        self.groups.push(PartGroup {
            path,
            inode,
            start: index(start),
            len,
            cgroup_type,
        });
    }

    /// The groups, in the order they were added (or sorted since).
    pub fn groups(&self) -> &[PartGroup] {
        &self.groups
    }

    /// The groups, to sort, deduplicate or leave some out of, as a list
    /// of samples would be: each keeps its figures.
    pub fn groups_mut(&mut self) -> &mut Vec<PartGroup> {
        &mut self.groups
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Adds the groups of `other` after these.
    pub fn append(&mut self, mut other: Part) {
        if self.groups.is_empty() && self.figures.is_empty() {
            // nothing to renumber: `other` whole, its lists not copied
            std::mem::swap(self, &mut other);
            other.give_back();
            return;
        }
        let (figures, io, unreadable) = (
            index(self.figures.len()),
            index(self.io.len()),
            index(self.unreadable.len()),
        );
        self.figures
            .extend(other.figures.drain(..).map(|f| match f {
                Figure::Io(i) => Figure::Io(i + io),
                Figure::Unreadable(i) => Figure::Unreadable(i + unreadable),
                f => f,
            }));
        self.io.append(&mut other.io);
        self.unreadable.append(&mut other.unreadable);
        self.groups
            .extend(other.groups.drain(..).map(|g| PartGroup {
                start: g.start + figures,
                ..g
            }));
        other.give_back();
    }

    /// Sets in `hot` the figures of the group at `i` of [`Part::groups`]
    /// (their fields; the others are left as they are), moving its IO
    /// list and unreadable files out of the part: once a group.
    pub fn take_into(&mut self, i: usize, hot: &mut HotStats) {
        if let Some(g) = self.groups.get(i) {
            let figures = g.figures(&self.figures);
            fill(hot, figures, &mut self.io, &mut self.unreadable);
        }
    }

    /// Each group's sample in turn, in the groups' order, made in one
    /// `GroupSample` (its hot figures the group's alone; no `detail`,
    /// no `identity`), which `f` may take figures out of.
    pub fn for_each(self, mut f: impl FnMut(&mut GroupSample)) {
        let Self {
            mut groups,
            figures,
            mut io,
            mut unreadable,
        } = self;
        let mut s = GroupSample::new(GroupPath::root(), 0);
        for g in groups.drain(..) {
            s.hot = HotStats::default();
            fill(&mut s.hot, g.figures(&figures), &mut io, &mut unreadable);
            s.path = g.path;
            s.inode = g.inode;
            s.cgroup_type = g.cgroup_type;
            f(&mut s);
        }
        Self {
            groups,
            figures,
            io,
            unreadable,
        }
        .give_back();
    }

    /// Drops the part, its lists' room given back without raising the
    /// allocator's mmap threshold (`model::heap`): a part is merged, or
    /// kept as levels, before a run's peak.
    pub fn give_back(self) {
        let Self {
            groups,
            figures,
            io,
            unreadable,
        } = self;
        crate::model::heap::give_back(groups);
        crate::model::heap::give_back(figures);
        crate::model::heap::give_back(io);
        crate::model::heap::give_back(unreadable);
    }
}

impl PartGroup {
    /// Its figures, of its part's `figures`.
    fn figures<'a>(&self, figures: &'a [Figure]) -> &'a [Figure] {
        let start = self.start as usize;
        figures
            .get(start..start + usize::from(self.len))
            .unwrap_or(&[])
    }
}

impl From<Vec<GroupSample>> for Part {
    fn from(samples: Vec<GroupSample>) -> Self {
        let mut part = Self::with_capacity(samples.len());
        for mut s in samples {
            part.push(s.path, s.inode, s.cgroup_type, &mut s.hot);
        }
        part
    }
}

/// Adds `make(v)` to `f` where `v` is there.
fn opt(f: &mut Vec<Figure>, v: Option<u64>, make: fn(u64) -> Figure) {
    if let Some(v) = v {
        f.push(make(v));
    }
}

/// Sets `figures` in `hot`, taking an IO list or an unreadable file out
/// of the part's.
fn fill(hot: &mut HotStats, figures: &[Figure], io: &mut [IoStat], unreadable: &mut [Unreadable]) {
    for &f in figures {
        set(hot, f, io, unreadable);
    }
}

/// Sets figure `f` in `hot`, as [`fill`].
fn set(hot: &mut HotStats, f: Figure, io: &mut [IoStat], unreadable: &mut [Unreadable]) {
    let at = |i: u32| i as usize;
    match f {
        Figure::Cpu(u) => {
            hot.cpu = Some(CpuStat {
                usage_usec: u,
                ..CpuStat::default()
            });
        }
        Figure::CpuUser(v) => {
            if let Some(c) = hot.cpu.as_mut() {
                c.user_usec = Some(v);
            }
        }
        Figure::CpuSystem(v) => {
            if let Some(c) = hot.cpu.as_mut() {
                c.system_usec = Some(v);
            }
        }
        Figure::CpuPeriods(v) => {
            if let Some(c) = hot.cpu.as_mut() {
                c.nr_periods = Some(v);
            }
        }
        Figure::CpuThrottled(v) => {
            if let Some(c) = hot.cpu.as_mut() {
                c.nr_throttled = Some(v);
            }
        }
        Figure::CpuThrottledUsec(v) => {
            if let Some(c) = hot.cpu.as_mut() {
                c.throttled_usec = Some(v);
            }
        }
        Figure::Throttle => hot.v1.cpu_throttle = Some(CpuThrottle::default()),
        Figure::ThrottlePeriods(v) => {
            if let Some(t) = hot.v1.cpu_throttle.as_mut() {
                t.nr_periods = Some(v);
            }
        }
        Figure::ThrottleCount(v) => {
            if let Some(t) = hot.v1.cpu_throttle.as_mut() {
                t.nr_throttled = Some(v);
            }
        }
        Figure::ThrottleUsec(v) => {
            if let Some(t) = hot.v1.cpu_throttle.as_mut() {
                t.throttled_usec = Some(v);
            }
        }
        Figure::Memory(v) => hot.memory_current = Some(v),
        Figure::MemoryMax(v) => hot.memory_max = Some(Limit::Value(v)),
        Figure::MemoryMaxNone => hot.memory_max = Some(Limit::Max),
        Figure::MemoryLimit(v) => hot.memory_limit = Some(v),
        Figure::Swap(v) => hot.swap_current = Some(v),
        Figure::Memsw(v) => hot.v1.memsw_usage = Some(v),
        Figure::Io(i) => hot.io = io.get_mut(at(i)).map(std::mem::take),
        Figure::IoOwnOnly => hot.v1.sources.io_own_only = true,
        Figure::Pids(v) => hot.pids_current = Some(v),
        Figure::Procs(v) => hot.nr_procs = Some(v),
        Figure::Events(e) => hot.events = Some(e),
        Figure::PsiSome(v) => hot.psi_some_avg10 = Some(v),
        Figure::PsiFull(v) => hot.psi_full_avg10 = Some(v),
        Figure::ThrottledLocal(v) => hot.throttled_local_usec = Some(v),
        Figure::Freezer(s) => hot.v1.freezer_state = Some(s),
        Figure::Unreadable(i) => {
            if let Some(u) = unreadable.get_mut(at(i)) {
                hot.unreadable.push(Unreadable {
                    file: std::mem::take(&mut u.file),
                    error: std::mem::take(&mut u.error),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::io::{IoStatDev, IoStatDevice};
    use crate::model::tree::snapshot::V1Hot;

    /// Every figure a scanner may read, each there.
    fn full(k: u64) -> HotStats {
        HotStats {
            cpu: Some(CpuStat {
                usage_usec: k,
                user_usec: Some(k + 1),
                system_usec: Some(k + 2),
                nr_periods: Some(k + 3),
                nr_throttled: Some(k + 4),
                throttled_usec: Some(k + 5),
            }),
            memory_current: Some(k + 6),
            io: Some(IoStat(vec![(
                IoStatDevice::Unknown,
                IoStatDev {
                    rbytes: Some(k + 7),
                    ..IoStatDev::default()
                },
            )])),
            pids_current: Some(k + 8),
            nr_procs: Some(k + 9),
            events: Some(CgroupEvents {
                populated: Some(true),
                frozen: None,
            }),
            memory_max: Some(Limit::Value(k + 10)),
            memory_limit: Some(k + 11),
            swap_current: Some(k + 12),
            psi_some_avg10: Some(13),
            psi_full_avg10: Some(14),
            throttled_local_usec: Some(k + 15),
            unreadable: vec![
                Unreadable {
                    file: format!("f{k}"),
                    error: "EACCES".to_owned(),
                },
                Unreadable {
                    file: "g".to_owned(),
                    error: "a FIFO".to_owned(),
                },
            ],
            v1: V1Hot {
                freezer_state: Some(FreezerState::Freezing),
                cpu_throttle: Some(CpuThrottle {
                    nr_periods: Some(k + 16),
                    nr_throttled: None,
                    throttled_usec: Some(k + 17),
                }),
                memsw_usage: Some(k + 18),
                sources: crate::model::tree::snapshot::Sources {
                    io_own_only: true,
                    ..Default::default()
                },
                ..V1Hot::default()
            },
        }
    }

    /// What a v1 hierarchy reads of a group: one controller's figure, a
    /// struct with none of its optional fields, "max".
    fn sparse(k: u64) -> HotStats {
        let mut h = HotStats {
            memory_current: Some(k),
            memory_max: Some(Limit::Max),
            cpu: Some(CpuStat {
                usage_usec: k,
                ..CpuStat::default()
            }),
            ..HotStats::default()
        };
        h.v1.cpu_throttle = Some(CpuThrottle::default());
        h
    }

    fn samples(part: Part) -> Vec<GroupSample> {
        let mut out = Vec::new();
        part.for_each(|s| out.push(s.clone()));
        out
    }

    #[test]
    fn every_figure_comes_back_as_it_went_in() {
        let hots = [full(100), sparse(200), HotStats::default(), full(300)];
        let mut part = Part::default();
        for (k, h) in hots.iter().enumerate() {
            let mut h = h.clone();
            let t = (k == 1).then_some(CgroupType::Threaded);
            part.push(GroupPath::new(&format!("g{k}")), k as u64, t, &mut h);
            assert!(h.io.is_none() && h.unreadable.is_empty(), "moved out");
        }
        assert_eq!(part.len(), 4);
        let back = samples(part);
        for (k, (s, h)) in back.iter().zip(&hots).enumerate() {
            assert_eq!(s.path, GroupPath::new(&format!("g{k}")));
            assert_eq!(s.inode, k as u64);
            assert_eq!(s.cgroup_type, (k == 1).then_some(CgroupType::Threaded));
            assert_eq!(&s.hot, h, "group {k}");
            assert!(s.detail.is_none() && s.identity.is_none());
        }
    }

    #[test]
    fn a_group_keeps_its_figures_when_sorted_left_out_or_appended() {
        let mut a = Part::default();
        a.push(GroupPath::new("z"), 1, None, &mut full(10));
        a.push(GroupPath::new("b"), 2, None, &mut sparse(20));
        a.push(GroupPath::new("gone"), 3, None, &mut full(30));
        let mut more = Part::default();
        more.push(GroupPath::new("a"), 4, None, &mut full(40));
        more.push(GroupPath::new("c"), 5, None, &mut sparse(50));
        a.groups_mut().retain(|g| g.inode != 3);
        a.append(more);
        a.groups_mut().sort_by(|x, y| x.path.cmp(&y.path));
        let back = samples(a);
        let got: Vec<(&[u8], &HotStats)> =
            back.iter().map(|s| (s.path.as_bytes(), &s.hot)).collect();
        let (f10, s20, f40, s50) = (full(10), sparse(20), full(40), sparse(50));
        let want: Vec<(&[u8], &HotStats)> =
            vec![(b"a", &f40), (b"b", &s20), (b"c", &s50), (b"z", &f10)];
        assert_eq!(got, want);
    }

    #[test]
    fn take_into_sets_one_groups_figures_over_others() {
        let mut part = Part::default();
        part.push(GroupPath::new("a"), 1, None, &mut sparse(7));
        let mut hot = HotStats {
            pids_current: Some(3),
            ..HotStats::default()
        };
        part.take_into(0, &mut hot);
        assert_eq!(hot.memory_current, Some(7));
        assert_eq!(hot.pids_current, Some(3), "left as it was");
        // no such group: nothing
        part.take_into(1, &mut hot);
        assert_eq!(hot.memory_current, Some(7));
    }

    #[test]
    fn a_group_and_a_figure_are_small() {
        // what the part is for: a v1 hierarchy's group with one figure in
        // 48 bytes, where a sample is 400
        assert_eq!(std::mem::size_of::<Figure>(), 16);
        assert_eq!(std::mem::size_of::<PartGroup>(), 32);
        assert!(std::mem::size_of::<GroupSample>() > 300);
    }
}
