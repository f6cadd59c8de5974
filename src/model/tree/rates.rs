//! Rates between two samples of the same group: pure functions of the two
//! samples and the elapsed time. A counter that went backwards, or a group
//! that was recreated (new inode), gives no rate for that tick rather than
//! an absurd one.
//!
//! CPU figures have a ceiling: no window shows more CPU time than the
//! machine's CPUs can give in it (see [`credit`] for why a counter can
//! overshoot, and where the excess goes).

use crate::cgroupfs::io::{DevId, IoStat, IoStatDev, IoStatDevice};
use crate::cgroupfs::CpuStat;
use crate::model::{GroupPath, GroupSample, Snapshot};
use std::collections::HashMap;
use std::time::Duration;

/// One group as a rate's baseline: its path and inode (the same group
/// incarnation) and the counters rates are computed from: cpu.stat,
/// io.stat, cpu.stat.local: 168 bytes where a whole [`GroupSample`] is
/// 408 (io.stat's list aside); the rater keeps one for every group
/// between refreshes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub path: GroupPath,
    pub inode: u64,
    pub cpu: Option<CpuStat>,
    pub io: Option<IoStat>,
    pub throttled_local_usec: Option<u64>,
}

impl Kept {
    /// Now `g`'s counters (its path's), with `base` as the cpu.stat the
    /// next window counts from where the ceiling held some back
    /// ([`credit`]); io.stat's list reused.
    fn update(&mut self, g: &GroupSample, base: Option<CpuStat>) {
        // the same bytes; shared again where a walk made the sample's
        // anew, so that the next compares are a pointer's
        if !self.path.same_copy(&g.path) {
            self.path.clone_from(&g.path);
        }
        self.inode = g.inode;
        self.cpu = base.or(g.hot.cpu);
        self.throttled_local_usec = g.hot.throttled_local_usec;
        match (&mut self.io, &g.hot.io) {
            (Some(kept), Some(now)) => kept.0.clone_from(&now.0),
            (kept, now) => kept.clone_from(now),
        }
    }

    /// Now `g`'s, whose counters are the same as these ([`at_rest`])
    /// but cpu.stat.local, which the collector reads after the rates.
    fn rest(&mut self, g: &GroupSample) {
        if !self.path.same_copy(&g.path) {
            self.path.clone_from(&g.path);
        }
        self.throttled_local_usec = g.hot.throttled_local_usec;
    }

    /// `g`'s counters, copied.
    pub fn of(g: &GroupSample) -> Self {
        Self {
            path: g.path.clone(),
            inode: g.inode,
            cpu: g.hot.cpu,
            io: g.hot.io.clone(),
            throttled_local_usec: g.hot.throttled_local_usec,
        }
    }
}

/// The last refresh's counters, the baseline of the next rates: every
/// group's [`Kept`], sorted by path as the snapshot was.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    pub at: Duration,
    pub groups: Vec<Kept>,
}

impl Baseline {
    /// `snap`'s counters, copied.
    pub fn of(snap: &Snapshot) -> Self {
        Self {
            at: snap.at,
            groups: snap.groups.iter().map(Kept::of).collect(),
        }
    }

    /// The group at `path`.
    pub fn find(&self, path: &GroupPath) -> Option<&Kept> {
        self.groups
            .binary_search_by(|g| g.path.cmp(path))
            .ok()
            .map(|i| &self.groups[i])
    }
}

/// Byte and operation rates, per second. Each figure stands alone: one
/// is `None` where its counter is missing at either end of the window,
/// and the others keep theirs. v1 blkio holds the bytes and the
/// operations in two files (io_service_bytes, io_serviced): READ/s and
/// WRITE/s need only the first, whether the second was not read (`-b`'s
/// table), is absent or cannot be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct IoRates {
    pub rbps: Option<f64>,
    pub wbps: Option<f64>,
    pub riops: Option<f64>,
    pub wiops: Option<f64>,
}

impl IoRates {
    /// 0 for each figure whose counter `d` has: a device at rest.
    fn at_rest(d: &IoStatDev) -> Self {
        let zero = |c: Option<u64>| c.and(Some(0.0));
        Self {
            rbps: zero(d.rbytes),
            wbps: zero(d.wbytes),
            riops: zero(d.rios),
            wiops: zero(d.wios),
        }
    }

    /// Every figure 0: the sum over no device.
    const ZERO: Self = Self {
        rbps: Some(0.0),
        wbps: Some(0.0),
        riops: Some(0.0),
        wiops: Some(0.0),
    };

    /// Adds `x` figure by figure: a figure is known only where both are.
    fn add(&mut self, x: &Self) {
        let sum = |a: &mut Option<f64>, b: Option<f64>| *a = a.zip(b).map(|(a, b)| a + b);
        sum(&mut self.rbps, x.rbps);
        sum(&mut self.wbps, x.wbps);
        sum(&mut self.riops, x.riops);
        sum(&mut self.wiops, x.wiops);
    }
}

/// The block devices stacked on others (device-mapper, md), each with
/// the devices right below it, sorted by number
/// (`source::devices::stacking`). The kernel charges a group's IO through
/// such a device twice: on the device's own io.stat line and again on the
/// lines of the devices below (the bio's clone keeps its group), as
/// measured in a guest (tests/fixtures/io-stacked/README.md: 16 MiB
/// written to dm-0 over loop0 shows 16 MiB on 253:0 and 16 MiB on 7:0).
/// A group's sum counts such a line only where none of the devices right
/// below it has a line in the same io.stat: there the kernel did not
/// charge the IO below to this group, and the device's own line is all
/// there is of it. Each device's line stays in `io_by_dev` as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stacking(pub Vec<(DevId, Vec<DevId>)>);

impl Stacking {
    /// Whether `dev` is stacked on other devices (dm, md).
    pub fn is_stacked(&self, dev: DevId) -> bool {
        self.0.binary_search_by_key(&dev, |(d, _)| *d).is_ok()
    }

    /// Whether `dev`'s line is counted again on a line below it: `dev` is
    /// stacked and `listed` says a device right below it has a line.
    fn counted_below(&self, dev: IoStatDevice, listed: impl Fn(IoStatDevice) -> bool) -> bool {
        let IoStatDevice::Dev(dev) = dev else {
            return false;
        };
        self.0
            .binary_search_by_key(&dev, |(d, _)| *d)
            .is_ok_and(|i| self.0[i].1.iter().any(|&b| listed(IoStatDevice::Dev(b))))
    }
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
    /// Sum over devices, each IO once: a stacked device's line is left
    /// out where the devices below it count the same IO ([`Stacking`]).
    pub io: Option<IoRates>,
    pub io_by_dev: Vec<(IoStatDevice, IoRates)>,
}

fn delta(a: u64, b: u64) -> Option<u64> {
    b.checked_sub(a)
}

fn per_s(a: u64, b: u64, secs: f64) -> Option<f64> {
    delta(a, b).map(|d| d as f64 / secs)
}

/// A rate of a counter that both samples have.
fn per_s_opt(a: Option<u64>, b: Option<u64>, secs: f64) -> Option<f64> {
    per_s(a?, b?, secs)
}

/// A device's rates from `a` to `b`: each figure where both ends have its
/// counter. `None` where a counter both ends have went backwards: the
/// device's counters were reset (v1's blkio.reset_stats zeroes them
/// all), and none of its figures can be trusted for this window.
fn io_rates(a: &IoStatDev, b: &IoStatDev, secs: f64) -> Option<IoRates> {
    let pairs = [
        (a.rbytes, b.rbytes),
        (a.wbytes, b.wbytes),
        (a.rios, b.rios),
        (a.wios, b.wios),
    ];
    if (pairs.iter()).any(|p| matches!(p, (Some(x), Some(y)) if y < x)) {
        return None;
    }
    let [r, w, ri, wi] = pairs.map(|(x, y)| per_s_opt(x, y, secs));
    Some(IoRates {
        rbps: r,
        wbps: w,
        riops: ri,
        wiops: wi,
    })
}

/// How much of a CPU-time counter's change one window may show, and the
/// counter value the next window counts from: `Some((shown, baseline))`,
/// `None` when the counter went backwards.
///
/// Why a counter can overshoot: with tick-based CPU accounting
/// (CONFIG_TICK_CPU_ACCOUNTING, the common default) the root group's
/// cpu.stat on cgroup v2 is the sum of every CPU's /proc/stat times, which
/// grow by one whole tick (4 ms at HZ=250) at a time. A window then holds
/// up to one tick more per CPU than it lasted: 2 x 4 ms in 0.2 s on 2 busy
/// CPUs read 203 %. The kernel, not the clock, is off; but no machine gives
/// more than `cap_usec` (ncpus x the window) of CPU time in a window, so a
/// figure above it is shown at the ceiling, and the excess is counted into
/// the next window (a lower baseline), so that the long-run average stays
/// true. The carried excess is at most one window's ceiling: a counter that
/// keeps running fast (a wrong CPU count) cannot pile up a debt forever.
pub fn credit(prev: u64, cur: u64, cap_usec: u64) -> Option<(u64, u64)> {
    let d = delta(prev, cur)?;
    if d <= cap_usec {
        return Some((d, cur));
    }
    let carried = (d - cap_usec).min(cap_usec);
    Some((cap_usec, cur - carried))
}

/// Percent over `secs` of a microsecond counter, with [`credit`]'s
/// ceiling when there is one; updates `baseline` to where the next window
/// counts from.
fn capped_pct(prev: u64, cur: u64, secs: f64, cap: Option<u64>, baseline: &mut u64) -> Option<f64> {
    let shown = match cap {
        Some(cap) => {
            let (shown, next) = credit(prev, cur, cap)?;
            *baseline = next;
            shown
        }
        None => delta(prev, cur)?,
    };
    Some(shown as f64 / (secs * 1e6) * 100.0)
}

/// v1's user and system shares of `total` (cpuacct.usage's, the exact
/// run time): cpuacct.usage_user / usage_sys (and cpuacct.stat) are the
/// scheduler tick's samples (`cpustat[CPUTIME_USER]` and `_SYSTEM`, a
/// whole tick, 4 ms at HZ=250, to whatever ran when it fired), so over
/// a refresh their sum is off the exact total by ticks: a group that ran
/// 1 ms and was caught by a tick read user 0.4 % under a total of 0.1 %.
/// Split as the kernel splits cgroup2's cpu.stat (`cputime_adjust`: the
/// ticks' ratio of the exact time), so user + system is the total; no
/// tick in the window (`user + system` 0 under a total above 0) leaves
/// the split unknown. See ARCHITECTURE.md, "Choices where the issue was
/// silent".
fn split_by_ticks(
    total: Option<f64>,
    user: Option<f64>,
    system: Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let (Some(t), Some(u), Some(s)) = (total, user, system) else {
        return (user, system);
    };
    let ticks = u + s;
    if t <= 0.0 {
        (Some(0.0), Some(0.0))
    } else if ticks > 0.0 {
        (Some(t * u / ticks), Some(t * s / ticks))
    } else {
        (None, None)
    }
}

/// Rates for every group of `cur` against `prev`, matched by path (both
/// sorted), with a ceiling of `ncpus` CPUs on CPU figures; also the
/// cpu.stat each group's next window counts from (`None`: its own).
/// Every io.stat line counts in the IO sum: no [`Stacking`] (the
/// [`Rater`]'s rates leave a stacked device's line out).
pub fn rates_within(
    prev: &Baseline,
    cur: &Snapshot,
    ncpus: Option<usize>,
) -> (Vec<GroupRates>, Vec<Option<CpuStat>>) {
    let Rated { rates, held, .. } = rates_held(prev, cur, ncpus, &Stacking::default());
    let mut bases = vec![None; rates.len()];
    for (i, b) in held {
        bases[i] = Some(b);
    }
    (rates, bases)
}

/// [`rates_within`], with the cpu.stat the next windows count from only
/// where it is not the group's own (a window over the ceiling held some
/// back: [`credit`]), by index: one rarely, where a list of every group's
/// would be copied on every refresh; and the groups not at rest.
fn rates_held(prev: &Baseline, cur: &Snapshot, ncpus: Option<usize>, stacking: &Stacking) -> Rated {
    let elapsed = cur.at.saturating_sub(prev.at);
    let mut j = 0;
    let mut rates = Vec::with_capacity(cur.groups.len());
    let mut held = Vec::new();
    let mut moved = Vec::new();
    let secs = elapsed.as_secs_f64();
    for (i, g) in cur.groups.iter().enumerate() {
        while j < prev.groups.len() && prev.groups[j].path < g.path {
            j += 1;
        }
        // filled where it lies: a group's rates are not built aside and
        // copied in (160 bytes, 10,000 times a refresh)
        rates.push(GroupRates::default());
        let r = &mut rates[i];
        match prev.groups.get(j) {
            Some(p) if p.path == g.path => {
                // the next group's baseline is the next one (paths are
                // unique): compared by pointer, not read
                j += 1;
                let same = p.inode == g.inode && secs > 0.0;
                if same && at_rest(p, g, r) {
                    continue;
                }
                moved.push(i);
                if !same {
                    continue;
                }
                let (x, next) = by_rule(p, g, secs, ncpus, stacking);
                *r = x;
                if let Some(next) = next.filter(|n| Some(n) != g.hot.cpu.as_ref()) {
                    held.push((i, next));
                }
            }
            _ => moved.push(i),
        }
    }
    Rated { rates, held, moved }
}

/// The rate step of every refresh, live (`source::collector`) or
/// replayed from a recording (`source::record`): one code, so that a
/// recording replays to the figures the live run showed. It keeps the
/// last snapshot's hot part as the baseline, with the CPU counters less
/// what a window over the ceiling could not show (see [`credit`]).
#[derive(Debug, Clone, Default)]
pub struct Rater {
    prev: Option<Baseline>,
    ncpus: Option<usize>,
    /// Each baseline group's parent's index (`limits::parent_indices`),
    /// for who throttles: found again only when the groups are not the
    /// same as the last refresh's.
    parents: Vec<Option<usize>>,
    /// The stacked devices, whose IO the devices below count again.
    stacking: Stacking,
}

/// The rates of one snapshot, before [`Rater::keep`].
#[derive(Debug, Clone)]
pub struct Rated {
    /// Parallel to the snapshot's groups.
    pub rates: Vec<GroupRates>,
    /// The cpu.stat the next window counts from, by group index, where
    /// it is not the group's own ([`credit`]).
    held: Vec<(usize, CpuStat)>,
    /// The groups whose baseline changes, by index: all but those
    /// [`at_rest`] (whose only change can be cpu.stat.local, read after
    /// the rates).
    moved: Vec<usize>,
}

impl Rated {
    /// No rate at all, for a read whose rates nobody sees (a priming
    /// read: [`Rater::keep_counters`] keeps its counters).
    pub fn none() -> Self {
        Self {
            rates: Vec::new(),
            held: Vec::new(),
            moved: Vec::new(),
        }
    }
}

impl Rater {
    /// `ncpus`: the ceiling of CPU figures (`None`: counters as they are).
    pub fn new(ncpus: Option<usize>) -> Self {
        Self {
            prev: None,
            ncpus,
            parents: Vec::new(),
            stacking: Stacking::default(),
        }
    }

    pub fn set_ncpus(&mut self, ncpus: Option<usize>) {
        self.ncpus = ncpus;
    }

    /// The host's stacked devices, for each group's IO sum ([`Stacking`]).
    pub fn set_stacking(&mut self, stacking: Stacking) {
        self.stacking = stacking;
    }

    /// The host's stacked devices as last set.
    pub fn stacking(&self) -> &Stacking {
        &self.stacking
    }

    /// The baseline: the last snapshot's paths, inodes and the counters
    /// rates are computed from (cpu.stat, io.stat, cpu.stat.local).
    pub fn prev(&self) -> Option<&Baseline> {
        self.prev.as_ref()
    }

    /// Rates of `cur` against the baseline; all `None` on the first.
    pub fn rates(&self, cur: &Snapshot) -> Rated {
        match &self.prev {
            Some(prev) => rates_held(prev, cur, self.ncpus, &self.stacking),
            None => Rated {
                rates: vec![GroupRates::default(); cur.groups.len()],
                held: Vec::new(),
                moved: (0..cur.groups.len()).collect(),
            },
        }
    }

    /// cpu.stat.local's throttled % of `g`, read after [`Self::rates`]
    /// (the collector reads that file only where the rates say it
    /// matters): against the baseline, with the same ceiling.
    pub fn local_pct(&self, g: &GroupSample, at: Duration) -> Option<f64> {
        let prev = self.prev.as_ref()?;
        let p = prev.find(&g.path)?;
        compute_within(p, g, at.saturating_sub(prev.at), self.ncpus)
            .0
            .throttled_local_pct
    }

    /// Who throttles each group, then `snapshot` becomes the baseline of
    /// the next rates. Returns the rates and who throttles.
    pub fn keep(
        &mut self,
        snapshot: &Snapshot,
        rated: Rated,
    ) -> (
        Vec<GroupRates>,
        Vec<Option<crate::model::tree::limits::Throttling>>,
    ) {
        let same_groups = self.same_groups(snapshot);
        if !same_groups || self.parents.len() != snapshot.groups.len() {
            // the same groups have the same parents: found once a change
            self.parents = crate::model::tree::limits::parent_indices(&snapshot.groups);
        }
        let throttling =
            crate::model::tree::limits::throttling_by(snapshot, &rated.rates, &self.parents);
        self.set_baseline(snapshot, same_groups, rated.held, Some(rated.moved));
        (rated.rates, throttling)
    }

    /// `snapshot` becomes the baseline of the next rates, its counters as
    /// read, with no rate computed against the last: what a priming read
    /// (`Collector::prime`) keeps, which prints nothing (no rate list and
    /// no throttling list of every group made for it: 2 MB at 10,000
    /// groups, at a one-shot run's peak).
    pub fn keep_counters(&mut self, snapshot: &Snapshot) {
        let same_groups = self.same_groups(snapshot);
        self.set_baseline(snapshot, same_groups, Vec::new(), None);
    }

    /// Forgets the baseline, its list's room given back without raising
    /// the allocator's mmap threshold (`model::heap`).
    pub fn let_go(&mut self) {
        if let Some(p) = self.prev.take() {
            crate::model::heap::give_back(p.groups);
        }
        crate::model::heap::give_back(std::mem::take(&mut self.parents));
    }

    /// Whether the baseline's groups are `snapshot`'s, path for path.
    fn same_groups(&self, snapshot: &Snapshot) -> bool {
        self.prev.as_ref().is_some_and(|p| {
            p.groups.len() == snapshot.groups.len()
                && p.groups
                    .iter()
                    .zip(&snapshot.groups)
                    .all(|(o, g)| o.path == g.path)
        })
    }

    /// The baseline of the next rates: `snapshot`'s counters, with
    /// `held` (by group index) as the cpu.stat each window counts from
    /// where the ceiling held some back ([`credit`]); only the groups in
    /// `moved` (by index; `None`: every group) are updated where
    /// `same_groups`, the others' counters did not move.
    fn set_baseline(
        &mut self,
        snapshot: &Snapshot,
        same_groups: bool,
        held: Vec<(usize, CpuStat)>,
        moved: Option<Vec<usize>>,
    ) {
        // the last baseline's samples are reused where the path is the
        // same (both lists are sorted by path): in the steady state no
        // path and no io.stat list is allocated again. A baseline holds
        // what a rate is computed from (`compute_within`) and nothing
        // more: the path, the inode, cpu.stat, io.stat, cpu.stat.local
        // ([`Kept`], not a whole sample).
        let prev = self.prev.take().map(|p| p.groups).unwrap_or_default();
        let mut held = held.into_iter().peekable();
        let mut base_of = |i: usize| held.next_if(|(k, _)| *k == i).map(|(_, b)| b);
        let mut moved = moved.map(|m| m.into_iter().peekable());
        let groups = if same_groups {
            // the same groups as the baseline (every refresh but one
            // after a group came or went): updated where they are, not
            // moved into a second list while both are alive (1.5 MB at
            // the peak of a one-shot run at 10,000 groups)
            let mut prev = prev;
            for (i, (k, g)) in prev.iter_mut().zip(&snapshot.groups).enumerate() {
                if moved.as_mut().is_none_or(|m| m.next_if_eq(&i).is_some()) {
                    k.update(g, base_of(i));
                } else {
                    k.rest(g);
                }
            }
            prev
        } else {
            let mut old = prev.into_iter().peekable();
            let mut groups = Vec::with_capacity(snapshot.groups.len());
            for (i, g) in snapshot.groups.iter().enumerate() {
                while old.next_if(|o| o.path < g.path).is_some() {}
                let mut k = old.next_if(|o| o.path == g.path).unwrap_or_else(|| Kept {
                    path: g.path.clone(),
                    ..Kept::default()
                });
                k.update(g, base_of(i));
                groups.push(k);
            }
            groups
        };
        self.prev = Some(Baseline {
            at: snapshot.at,
            groups,
        });
    }

    /// The whole step for a snapshot nothing more is read for (a
    /// replay): rates, who throttles, and the new baseline.
    pub fn step(
        &mut self,
        snapshot: &Snapshot,
    ) -> (
        Vec<GroupRates>,
        Vec<Option<crate::model::tree::limits::Throttling>>,
    ) {
        let rated = self.rates(snapshot);
        self.keep(snapshot, rated)
    }
}

/// The rates of a group none of whose counters moved (most groups of a
/// big host, most refreshes): what the rule below gives for the same
/// counters on both ends, without its arithmetic and lookups: 0 for every
/// figure both ends have, each IO figure of the sum only where every
/// listed device has its counter, filled into `r` (all `None` before).
/// False, and `r` untouched, where the counters differ, or io.stat lists
/// a device twice or more than 4 devices (the rule below then says what
/// the rates are).
fn at_rest(prev: &Kept, cur: &GroupSample, r: &mut GroupRates) -> bool {
    let h = &cur.hot;
    if prev.cpu != h.cpu || prev.throttled_local_usec != h.throttled_local_usec || prev.io != h.io {
        return false;
    }
    // a device listed twice counts from its first listing (below): not
    // at rest
    let devs = h.io.as_ref().map_or(&[][..], |io| &io.0[..]);
    if devs.len() > 4
        || (devs.iter().enumerate()).any(|(i, (d, _))| devs[..i].iter().any(|(e, _)| e == d))
    {
        return false;
    }
    let zero = Some(0.0);
    if let Some(c) = &h.cpu {
        r.cpu_pct = zero;
        r.user_pct = c.user_usec.and(zero);
        r.system_pct = c.system_usec.and(zero);
        r.throttled_per_s = c.nr_throttled.and(zero);
        r.throttled_pct = c.throttled_usec.and(zero);
    }
    r.throttled_local_pct = h.throttled_local_usec.and(zero);
    if h.io.is_some() {
        // each figure 0 where every device has its counter (v1 blkio's
        // bytes without its operation counts: READ/s and WRITE/s 0)
        let mut total = IoRates::ZERO;
        for (_, s) in devs {
            total.add(&IoRates::at_rest(s));
        }
        // v1 blkio does not count a disk that did IO
        // (`model::tree::root`): the sum would miss it, and is unknown;
        // each counted device keeps its figure
        r.io = h.v1.sources.io_uncounted.is_none().then_some(total);
        if !devs.is_empty() {
            r.io_by_dev = devs
                .iter()
                .map(|(d, s)| (*d, IoRates::at_rest(s)))
                .collect();
        }
    }
    true
}

/// Rates from `prev` to `cur`, `elapsed` apart. Returns all-`None` rates
/// when the samples are not of the same incarnation of the group or the
/// interval is empty.
pub fn compute(prev: &GroupSample, cur: &GroupSample, elapsed: Duration) -> GroupRates {
    compute_within(&Kept::of(prev), cur, elapsed, None).0
}

/// [`compute`] with a ceiling of `ncpus` CPUs on every CPU figure (see
/// [`credit`]). Also returns cpu.stat as the next window must count from
/// it: `cur`'s counters less what this window could not show (`None`
/// when there was no rate; keep `cur`'s then).
pub fn compute_within(
    prev: &Kept,
    cur: &GroupSample,
    elapsed: Duration,
    ncpus: Option<usize>,
) -> (GroupRates, Option<CpuStat>) {
    let secs = elapsed.as_secs_f64();
    if prev.inode != cur.inode || prev.path != cur.path || secs <= 0.0 {
        return (GroupRates::default(), None);
    }
    let mut r = GroupRates::default();
    if at_rest(prev, cur, &mut r) {
        // the next window counts from the same counters
        return (r, cur.hot.cpu);
    }
    by_rule(prev, cur, secs, ncpus, &Stacking::default())
}

/// [`compute_within`]'s arithmetic, for the same group over `secs` > 0.
fn by_rule(
    prev: &Kept,
    cur: &GroupSample,
    secs: f64,
    ncpus: Option<usize>,
    stacking: &Stacking,
) -> (GroupRates, Option<CpuStat>) {
    let mut r = GroupRates::default();
    let mut next = None;
    if let (Some(a), Some(b)) = (&prev.cpu, &cur.hot.cpu) {
        // the most CPU time the window can hold, in microseconds
        let cap = ncpus.map(|n| (n as f64 * secs * 1e6) as u64);
        let mut base = *b;
        r.cpu_pct = capped_pct(a.usage_usec, b.usage_usec, secs, cap, &mut base.usage_usec);
        if let (Some(x), Some(y)) = (a.user_usec, b.user_usec) {
            let mut t = y;
            r.user_pct = capped_pct(x, y, secs, cap, &mut t);
            base.user_usec = Some(t);
        }
        if let (Some(x), Some(y)) = (a.system_usec, b.system_usec) {
            let mut t = y;
            r.system_pct = capped_pct(x, y, secs, cap, &mut t);
            base.system_usec = Some(t);
        }
        if cur.hot.v1.sources.cpu == Some(super::snapshot::HierKind::V1) {
            (r.user_pct, r.system_pct) = split_by_ticks(r.cpu_pct, r.user_pct, r.system_pct);
        }
        if let (Some(x), Some(y)) = (a.nr_throttled, b.nr_throttled) {
            r.throttled_per_s = per_s(x, y, secs);
        }
        if let (Some(x), Some(y)) = (a.throttled_usec, b.throttled_usec) {
            // throttled time is summed over the CPUs' run queues: the same
            // ceiling holds
            let mut t = y;
            r.throttled_pct = capped_pct(x, y, secs, cap, &mut t);
            base.throttled_usec = Some(t);
        }
        next = Some(base);
    }
    if let (Some(x), Some(y)) = (prev.throttled_local_usec, cur.hot.throttled_local_usec) {
        // not carried over (cpu.stat.local is read only where needed, so
        // there is no kept baseline): capped like the other CPU figures
        let ceiling = ncpus.map_or(f64::INFINITY, |n| n as f64 * 100.0);
        r.throttled_local_pct = delta(x, y).map(|d| (d as f64 / (secs * 1e6) * 100.0).min(ceiling));
    }
    if let (Some(a), Some(b)) = (&prev.io, &cur.hot.io) {
        // Per device; a device that appeared since counts from zero, which
        // is right: io.stat lists a device once the group has done IO on it.
        let zero = IoStatDev::ZERO;
        let mut total = IoRates::ZERO;
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
        // one slot a listed device (most groups list one or two): a
        // first push would make room for 4 (1.3 MB at 10,000 groups)
        r.io_by_dev.reserve_exact(b.0.len());
        for (dev, now) in &b.0 {
            let before = find(a, &ia, *dev).unwrap_or(zero);
            let before = &before;
            if let Some(x) = io_rates(before, now, secs) {
                // each IO once: not a stacked device's whose IO the
                // devices below count again
                if !stacking.counted_below(*dev, |d| find(b, &ib, d).is_some()) {
                    total.add(&x);
                }
                r.io_by_dev.push((*dev, x));
            } else {
                ok = false;
            }
        }
        // a device that vanished from io.stat is a reset as well
        ok &= a.0.iter().all(|(d, _)| find(b, &ib, *d).is_some());
        if ok {
            // the sum is unknown where a disk is not counted (above)
            r.io = cur.hot.v1.sources.io_uncounted.is_none().then_some(total);
        } else {
            r.io_by_dev.clear();
        }
    }
    (r, next)
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

    /// The stacking of the guest the io-stacked fixtures come from
    /// (tests/fixtures/io-stacked/README.md): dm-0 (253:0) on loop0
    /// (7:0), md127 (9:127), a raid1, on loop3 (7:3) and loop4 (7:4).
    fn guest_stacking() -> Stacking {
        let id = |major, minor| DevId { major, minor };
        Stacking(vec![
            (id(9, 127), vec![id(7, 3), id(7, 4)]),
            (id(253, 0), vec![id(7, 0)]),
        ])
    }

    /// A text of tests/fixtures/io-stacked, built in (this layer reads no
    /// file).
    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../../../tests/fixtures/io-stacked/", $name))
        };
    }

    /// A new group's io.stat (empty) and, 2 s later, the guest's text
    /// after one dd into a stacked device: the rates with the guest's
    /// stacking (through the rater, as the collector sets it) and
    /// without it.
    fn stacked_window(text: &str) -> (IoRates, IoRates, usize) {
        let snap = |at, io: &str| Snapshot {
            at: Duration::from_secs(at),
            groups: vec![sample(1, 0, io)],
            cost: crate::model::ScanCost::default(),
        };
        let (a, b) = (snap(10, ""), snap(12, text));
        let mut rater = Rater::new(None);
        rater.keep_counters(&a);
        rater.set_stacking(guest_stacking());
        let with = rater.rates(&b).rates.remove(0);
        let mut plain = Rater::new(None);
        plain.keep_counters(&a);
        let without = plain.rates(&b).rates.remove(0);
        assert_eq!(
            with.io_by_dev, without.io_by_dev,
            "each device's line is kept"
        );
        (with.io.unwrap(), without.io.unwrap(), with.io_by_dev.len())
    }

    const MIB: f64 = 1_048_576.0;

    /// 16 MiB written with O_DIRECT into dm-0 in 2 s: the kernel lists
    /// 16 MiB on 253:0 and on 7:0 below it; the group wrote 8 MiB/s, not
    /// 16. The same for a read and for a buffered write (its writeback).
    #[test]
    fn io_through_device_mapper_is_counted_once() {
        for (fixture, text, r, w) in [
            (
                "dm direct write",
                fixture!("v2-dm-direct-write.io.stat"),
                0.0,
                8.0,
            ),
            (
                "dm direct read",
                fixture!("v2-dm-direct-read.io.stat"),
                4.0,
                0.0,
            ),
            (
                "dm buffered write",
                fixture!("v2-dm-buffered-write.io.stat"),
                0.0,
                8.0,
            ),
        ] {
            let (with, without, devs) = stacked_window(text);
            assert_eq!(devs, 2, "{fixture}");
            assert_eq!(
                (with.rbps, with.wbps),
                (Some(r * MIB), Some(w * MIB)),
                "{fixture}"
            );
            // what the plain sum gave: twice
            assert_eq!(
                (without.rbps, without.wbps),
                (Some(2.0 * r * MIB), Some(2.0 * w * MIB))
            );
        }
    }

    /// md's raid1: a write goes to both legs (7:3, 7:4: 16 MiB each, the
    /// disks' real work), a read to one; md127's own line is left out.
    #[test]
    fn io_through_md_raid1_counts_what_its_legs_did() {
        let (w, _, _) = stacked_window(fixture!("v2-md-raid1-direct-write.io.stat"));
        assert_eq!(w.wbps, Some(16.0 * MIB));
        assert_eq!(w.rbps, Some(12288.0 / 2.0));
        let (r, without, _) = stacked_window(fixture!("v2-md-raid1-direct-read.io.stat"));
        assert_eq!((r.rbps, without.rbps), (Some(4.0 * MIB), Some(8.0 * MIB)));
    }

    /// v1's blkio.throttle.io_service_bytes_recursive lists dm-0 and the
    /// loop device below it with the same 16 MiB (the guest's text of a
    /// group with a rule on each: tests/fixtures/io-stacked): the same
    /// sum, the same rule.
    #[test]
    fn v1_blkio_through_device_mapper_is_counted_once() {
        use crate::cgroupfs::v1::{blkio_into, BlkioKind};
        // (fixture, WRITE/s with the stacking, without), in MiB/s over 2 s
        for (fixture, text, w, plain_w) in [
            (
                "dm",
                fixture!("v1-dm-direct-write.blkio.throttle.io_service_bytes"),
                8.0,
                16.0,
            ),
            // md127's 16 MiB left out, each leg's kept
            (
                "md raid1",
                fixture!("v1-md-raid1-direct-write.blkio.throttle.io_service_bytes"),
                16.0,
                24.0,
            ),
        ] {
            let mut io = IoStat::default();
            blkio_into(text, BlkioKind::Bytes, &mut io);
            let lines = io.0.len();
            let a = sample(1, 0, "");
            let mut b = sample(1, 0, "");
            b.hot.io = Some(io);
            let (r, _) = by_rule(&Kept::of(&a), &b, 2.0, None, &guest_stacking());
            let (plain, _) = by_rule(&Kept::of(&a), &b, 2.0, None, &Stacking::default());
            assert_eq!(r.io.unwrap().wbps, Some(w * MIB), "{fixture}");
            assert_eq!(plain.io.unwrap().wbps, Some(plain_w * MIB), "{fixture}");
            assert_eq!(
                r.io_by_dev.len(),
                lines,
                "{fixture}: each device's line kept"
            );
        }
    }

    /// The uncounted-disk check asks the same stacking whether a device is
    /// stacked: dm-0 (253:0) on loop0 (7:0) is; loop0 and a device the
    /// stacking does not name are not.
    #[test]
    fn a_device_is_stacked_where_the_stacking_lists_it() {
        let dev = |major, minor| DevId { major, minor };
        let s = Stacking(vec![
            (dev(9, 127), vec![dev(7, 3)]),
            (dev(253, 0), vec![dev(7, 0)]),
        ]);
        assert!(s.is_stacked(dev(253, 0)));
        assert!(s.is_stacked(dev(9, 127)));
        assert!(!s.is_stacked(dev(7, 0)));
        assert!(!s.is_stacked(dev(8, 0)));
        assert!(!Stacking::default().is_stacked(dev(253, 0)));
    }

    /// Where no device below a stacked one has a line (the kernel did not
    /// charge the IO below to this group), the stacked device's line is
    /// all there is of its IO: counted. A device the stacking does not
    /// name counts as before.
    #[test]
    fn a_stacked_device_without_lines_below_counts() {
        let text = "253:0 rbytes=0 wbytes=4194304 rios=0 wios=4\n\
                    254:0 rbytes=2097152 wbytes=0 rios=2 wios=0\n";
        let a = sample(1, 0, "");
        let b = sample(1, 0, text);
        let s = guest_stacking();
        let (r, _) = by_rule(&Kept::of(&a), &b, 2.0, None, &s);
        let io = r.io.unwrap();
        assert_eq!((io.rbps, io.wbps), (Some(MIB), Some(2.0 * MIB)));
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
        assert!((io.wbps.unwrap() - 2_097_152.0).abs() < 1e-6);
        assert!((io.wiops.unwrap() - 16.0).abs() < 1e-9);
        assert_eq!(r.io_by_dev.len(), 1);
    }

    /// v1's user and system are ticks, cpuacct.usage the exact time
    /// (`split_by_ticks`): over 1 s a group ran 1 ms and one 4 ms tick
    /// caught it in user mode; another ran 2 ms and no tick caught it; a
    /// third ran 1 s, ticks 600 ms user and 500 ms system. cgroup2's
    /// cpu.stat, split by the kernel already, is as read.
    #[test]
    fn v1_user_and_system_are_the_ticks_share_of_the_exact_time() {
        use super::super::snapshot::HierKind;
        let v1 = |usage: u64, user: u64, system: u64| {
            let mut s = sample(1, usage, "");
            s.hot.io = None;
            let c = s.hot.cpu.as_mut().unwrap();
            (c.user_usec, c.system_usec) = (Some(user), Some(system));
            s.hot.v1.sources.cpu = Some(HierKind::V1);
            s
        };
        let rates = |b: &GroupSample| compute(&v1(0, 0, 0), b, Duration::from_secs(1));
        let near = |x: Option<f64>, want: f64| (x.unwrap() - want).abs() < 1e-9;
        let r = rates(&v1(1_000, 4_000, 0));
        assert!(near(r.cpu_pct, 0.1) && near(r.user_pct, 0.1) && near(r.system_pct, 0.0));
        let r = rates(&v1(2_000, 0, 0));
        assert!(near(r.cpu_pct, 0.2));
        assert_eq!((r.user_pct, r.system_pct), (None, None));
        let r = rates(&v1(1_000_000, 600_000, 500_000));
        assert!(near(r.user_pct, 100.0 * 6.0 / 11.0) && near(r.system_pct, 100.0 * 5.0 / 11.0));
        let mut v2 = v1(1_000, 4_000, 0);
        v2.hot.v1.sources.cpu = Some(HierKind::V2);
        let r = compute(&v1(0, 0, 0), &v2, Duration::from_secs(1));
        assert!(near(r.user_pct, 0.4));
    }

    /// A v1 group while a disk v1 blkio does not count did IO
    /// (`model::tree::root::busy_uncounted`): the sum over its devices is
    /// unknown, not the counted devices' figure; each counted device keeps
    /// its own. The same whether the counters moved or not (`at_rest`).
    #[test]
    fn io_is_unknown_while_a_disk_v1_does_not_count_did_io() {
        let vda = crate::cgroupfs::io::DevId {
            major: 254,
            minor: 0,
        };
        for moved in [
            "254:0 rbytes=4096 wbytes=0 rios=1 wios=0",
            "254:0 rbytes=0 wbytes=0 rios=0 wios=0",
        ] {
            let a = sample(1, 1_000, "254:0 rbytes=0 wbytes=0 rios=0 wios=0");
            let mut b = sample(1, 1_000, moved);
            b.hot.v1.sources.io_uncounted = Some(vda);
            let r = compute(&a, &b, Duration::from_secs(1));
            assert_eq!(r.io, None, "{moved}");
            assert_eq!(r.io_by_dev.len(), 1, "{moved}");
            b.hot.v1.sources.io_uncounted = None;
            assert!(compute(&a, &b, Duration::from_secs(1)).io.is_some());
        }
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

    /// The root of a 2-CPU host under full load at `-d 0.2`, as the kernel
    /// counts it (whole 4 ms ticks): windows of 102, 98, 101, 99 ticks.
    /// Shown raw, the first read 204 %; with the ceiling none is above
    /// 200 %, and what a window could not show comes in the next one, so
    /// the total stays the kernel's.
    #[test]
    fn cpu_never_above_the_machine_and_the_excess_carries_over() {
        let window = Duration::from_millis(200);
        let ticks = [102u64, 98, 101, 99];
        let mut counter = 10_000_000u64;
        let mut before = sample(1, counter, "");
        let mut kept = Kept::of(&before);
        let mut shown_total = 0.0;
        let mut raw_max = 0.0f64;
        for t in ticks {
            counter += t * 4_000;
            let cur = sample(1, counter, "");
            let raw = compute(&before, &cur, window).cpu_pct.unwrap();
            assert!((raw - (t * 4_000) as f64 / 2_000.0).abs() < 1e-9);
            raw_max = raw_max.max(raw);
            before = cur.clone();
            let (r, next) = compute_within(&kept, &cur, window, Some(2));
            let pct = r.cpu_pct.unwrap();
            assert!(pct <= 200.0 + 1e-9, "{pct} % on 2 CPUs");
            for p in [r.user_pct, r.system_pct, r.throttled_pct] {
                assert!(p.unwrap() <= 200.0 + 1e-9);
            }
            shown_total += pct;
            kept = Kept::of(&cur);
            kept.cpu = next;
        }
        assert!((raw_max - 204.0).abs() < 1e-9, "the counters do overshoot");
        // 400 ticks of 4 ms in 4 windows of 0.2 s: 200 % on average
        assert!((shown_total / 4.0 - 200.0).abs() < 1e-9, "{shown_total}");
        // nothing left over: the last window was under the ceiling
        assert_eq!(kept.cpu.unwrap().usage_usec, counter);
    }

    #[test]
    fn credit_carries_at_most_one_window() {
        assert_eq!(credit(0, 150, 200), Some((150, 150)));
        assert_eq!(credit(0, 250, 200), Some((200, 200)));
        // a counter far too fast (a wrong CPU count) owes one window at most
        assert_eq!(credit(0, 1_000, 200), Some((200, 800)));
        assert_eq!(credit(5, 4, 200), None);
    }

    #[test]
    fn zero_interval_gives_no_rate() {
        let a = sample(1, 1_000, "");
        assert_eq!(compute(&a, &a, Duration::ZERO), GroupRates::default());
    }

    /// v1 blkio's bytes and operation counts are two files: a rate of
    /// each needs its own file only. The texts captured from a real v1
    /// group (tests/fixtures/v1/v1scan), the later one with 2 MiB more
    /// read and 6 MiB more written, 2 s apart.
    #[test]
    fn v1_io_bytes_and_operations_are_rated_apart() {
        use crate::cgroupfs::v1::{blkio_into, BlkioKind};
        let bytes = include_str!(
            "../../../tests/fixtures/v1/v1scan/blkio.throttle.io_service_bytes_recursive"
        );
        let ops =
            include_str!("../../../tests/fixtures/v1/v1scan/blkio.throttle.io_serviced_recursive");
        let moved = |text: &str, read: u64, write: u64| -> String {
            let line = |l: &str| {
                let f: Vec<&str> = l.split_whitespace().collect();
                match f[..] {
                    [dev, "Read", n] => format!("{dev} Read {}", n.parse::<u64>().unwrap() + read),
                    [dev, "Write", n] => {
                        format!("{dev} Write {}", n.parse::<u64>().unwrap() + write)
                    }
                    _ => l.to_owned(),
                }
            };
            text.lines().map(line).collect::<Vec<_>>().join("\n")
        };
        let group = |files: &[(&str, BlkioKind)]| {
            let mut s = GroupSample::new(GroupPath::new("a"), 1);
            let mut io = IoStat::default();
            for (text, kind) in files {
                blkio_into(text, *kind, &mut io);
            }
            s.hot.io = Some(io);
            s
        };
        let secs = Duration::from_secs(2);
        let later_bytes = moved(bytes, 2 << 20, 6 << 20);
        let later_ops = moved(ops, 16, 48);
        // io_service_bytes only (io_serviced not read, absent, unreadable)
        let a = group(&[(bytes, BlkioKind::Bytes)]);
        let b = group(&[(&later_bytes, BlkioKind::Bytes)]);
        for (to, want) in [(&b, (1 << 20, 3 << 20)), (&a, (0, 0))] {
            let r = compute(&a, to, secs);
            let want = (Some(f64::from(want.0)), Some(f64::from(want.1)));
            let io = r.io.expect("bytes rates");
            assert_eq!((io.rbps, io.wbps), want);
            assert_eq!((io.riops, io.wiops), (None, None));
            assert_eq!(r.io_by_dev.len(), 1);
            assert_eq!((r.io_by_dev[0].1.rbps, r.io_by_dev[0].1.wbps), want);
        }
        // io_serviced only: the operations, no bytes
        let a = group(&[(ops, BlkioKind::Ios)]);
        let b = group(&[(&later_ops, BlkioKind::Ios)]);
        let io = compute(&a, &b, secs).io.expect("operation rates");
        assert_eq!((io.riops, io.wiops), (Some(8.0), Some(24.0)));
        assert_eq!((io.rbps, io.wbps), (None, None));
        // both: all four, as ever
        let a = group(&[(bytes, BlkioKind::Bytes), (ops, BlkioKind::Ios)]);
        let b = group(&[
            (&later_bytes, BlkioKind::Bytes),
            (&later_ops, BlkioKind::Ios),
        ]);
        let io = compute(&a, &b, secs).io.unwrap();
        assert_eq!(
            [io.rbps, io.wbps, io.riops, io.wiops],
            [Some(1_048_576.0), Some(3_145_728.0), Some(8.0), Some(24.0)]
        );
        // operation counts there at one end only: no operation rate, the
        // bytes' stays
        let io = compute(&a, &group(&[(&later_bytes, BlkioKind::Bytes)]), secs)
            .io
            .unwrap();
        assert_eq!((io.wbps, io.wiops), (Some(3_145_728.0), None));
        // a counter that went back (blkio.reset_stats): none of the
        // device's figures
        let reset = group(&[(
            &moved(bytes, 0, 0).replace("Read 20971520", "Read 0"),
            BlkioKind::Bytes,
        )]);
        let r = compute(&b, &reset, secs);
        assert_eq!((r.io, r.io_by_dev.len()), (None, 0));
    }

    #[test]
    fn new_device_counts_from_zero_vanished_device_resets() {
        let a = sample(1, 0, "");
        let b = sample(1, 0, "8:0 rbytes=1000 wbytes=0 rios=1 wios=0");
        let r = compute(&a, &b, Duration::from_secs(1));
        assert!((r.io.unwrap().rbps.unwrap() - 1000.0).abs() < 1e-9);
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

/// The rate step against the rule it replaced: every baseline a whole
/// copy of the last snapshot's counters (less what the ceiling held
/// back), each group's baseline found by path, its rates by the rule's
/// arithmetic (no rest shortcut), its parents found anew each refresh.
#[cfg(test)]
mod bookkeeping_tests {
    use super::*;
    use crate::cgroupfs::io::DevId;
    use crate::model::tree::limits::{throttling, Throttling};
    use proptest::prelude::*;

    /// The old bookkeeping: a copy of every group's counters.
    #[derive(Default)]
    struct OldRater {
        prev: Option<(Duration, Vec<Kept>)>,
    }

    impl OldRater {
        /// The window from the baseline of `g`'s path, if a rate is due.
        fn from(&self, g: &GroupSample, at: Duration) -> Option<(&Kept, f64)> {
            let (then, groups) = self.prev.as_ref()?;
            let p = groups.iter().find(|k| k.path == g.path)?;
            let secs = at.saturating_sub(*then).as_secs_f64();
            (p.inode == g.inode && secs > 0.0).then_some((p, secs))
        }

        fn rates(
            &self,
            snap: &Snapshot,
            ncpus: Option<usize>,
        ) -> (Vec<GroupRates>, Vec<Option<CpuStat>>) {
            (snap.groups.iter())
                .map(|g| match self.from(g, snap.at) {
                    Some((p, secs)) => by_rule(p, g, secs, ncpus, &Stacking::default()),
                    None => (GroupRates::default(), None),
                })
                .unzip()
        }

        fn local_pct(&self, g: &GroupSample, at: Duration, ncpus: Option<usize>) -> Option<f64> {
            let (p, secs) = self.from(g, at)?;
            by_rule(p, g, secs, ncpus, &Stacking::default())
                .0
                .throttled_local_pct
        }

        fn keep(
            &mut self,
            snap: &Snapshot,
            rates: Vec<GroupRates>,
            next: Vec<Option<CpuStat>>,
        ) -> (Vec<GroupRates>, Vec<Option<Throttling>>) {
            let throttling = throttling(snap, &rates);
            let kept = (snap.groups.iter().zip(next))
                .map(|(g, n)| Kept {
                    cpu: n.or(g.hot.cpu),
                    ..Kept::of(g)
                })
                .collect();
            self.prev = Some((snap.at, kept));
            (rates, throttling)
        }
    }

    const PATHS: [&str; 8] = ["", "a", "a/b", "a/b/c", "a/d", "e", "e/f", "e/f/g"];

    fn small() -> impl Strategy<Value = u64> {
        // few values: counters often stay, sometimes go back (a reset)
        prop::sample::select(vec![0u64, 7, 1_000, 250_000, 900_000, 5_000_000])
    }

    fn opt() -> impl Strategy<Value = Option<u64>> {
        prop::option::weighted(0.85, small())
    }

    fn cpu() -> impl Strategy<Value = Option<CpuStat>> {
        prop::option::weighted(
            0.9,
            (small(), opt(), opt(), opt(), opt(), opt()).prop_map(|(u, us, sy, np, nt, tu)| {
                CpuStat {
                    usage_usec: u,
                    user_usec: us,
                    system_usec: sy,
                    nr_periods: np,
                    nr_throttled: nt,
                    throttled_usec: tu,
                }
            }),
        )
    }

    fn io() -> impl Strategy<Value = Option<IoStat>> {
        let dev = prop::sample::select(vec![
            IoStatDevice::Dev(DevId { major: 8, minor: 0 }),
            IoStatDevice::Dev(DevId {
                major: 8,
                minor: 16,
            }),
            IoStatDevice::Dev(DevId {
                major: 254,
                minor: 0,
            }),
            IoStatDevice::Unknown,
        ]);
        let counters = (opt(), opt(), opt(), opt(), opt(), opt()).prop_map(
            |(rbytes, wbytes, rios, wios, dbytes, dios)| IoStatDev {
                rbytes,
                wbytes,
                rios,
                wios,
                dbytes,
                dios,
            },
        );
        prop::option::weighted(
            0.8,
            prop::collection::vec((dev, counters), 0..6).prop_map(IoStat),
        )
    }

    /// One group's counters: the same as the last refresh's (at rest),
    /// or new ones.
    #[derive(Debug, Clone)]
    struct Change {
        present: bool,
        remade: bool,
        same: bool,
        cpu: Option<CpuStat>,
        io: Option<IoStat>,
        local: Option<u64>,
        /// cpu.stat.local read after the rates, as the collector does
        late: bool,
        late_local: Option<u64>,
    }

    fn change() -> impl Strategy<Value = Change> {
        (
            prop::bool::weighted(0.85),
            prop::bool::weighted(0.08),
            prop::bool::weighted(0.6),
            cpu(),
            io(),
            opt(),
            prop::bool::weighted(0.2),
            opt(),
        )
            .prop_map(
                |(present, remade, same, cpu, io, local, late, late_local)| Change {
                    present,
                    remade,
                    same,
                    cpu,
                    io,
                    local,
                    late,
                    late_local,
                },
            )
    }

    /// Refreshes of the groups of [`PATHS`]: each step's elapsed ms
    /// (0: no rate) and each path's change.
    fn steps() -> impl Strategy<Value = Vec<(u64, Vec<Change>)>> {
        let elapsed = prop::sample::select(vec![0u64, 1, 200, 1_000]);
        prop::collection::vec(
            (elapsed, prop::collection::vec(change(), PATHS.len())),
            1..12,
        )
    }

    fn shown(x: &(Vec<GroupRates>, Vec<Option<Throttling>>)) -> String {
        // Debug tells 0.0 from -0.0: the bytes a view would print
        format!("{x:?}")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]
        #[test]
        fn the_rates_are_the_old_rules(
            steps in steps(),
            ncpus in prop::sample::select(vec![None, Some(1usize), Some(2)]),
        ) {
            let mut new = Rater::new(ncpus);
            let mut old = OldRater::default();
            let mut at = Duration::from_secs(1);
            let mut last: Vec<Option<GroupSample>> = vec![None; PATHS.len()];
            for (ms, changes) in steps {
                at += Duration::from_millis(ms);
                let mut groups = Vec::new();
                let mut late = Vec::new();
                for (i, c) in changes.into_iter().enumerate() {
                    if !c.present {
                        last[i] = None;
                        continue;
                    }
                    if c.late {
                        late.push((GroupPath::new(PATHS[i]), c.late_local));
                    }
                    let g = match (&last[i], c.same) {
                        (Some(g), true) if !c.remade => g.clone(),
                        (before, _) => {
                            let inode = before.as_ref().map_or(1, |g| g.inode)
                                + u64::from(c.remade);
                            // a fresh copy of the path, as a walk makes
                            let mut g = GroupSample::new(GroupPath::new(PATHS[i]), inode);
                            g.hot.cpu = c.cpu;
                            g.hot.io = c.io;
                            g.hot.throttled_local_usec = c.local;
                            g
                        }
                    };
                    groups.push(g);
                }
                groups.sort_by(|a, b| a.path.cmp(&b.path));
                let mut snap = Snapshot { at, groups, cost: crate::model::ScanCost::default() };
                let (mut old_rates, next) = old.rates(&snap, ncpus);
                let mut rated = new.rates(&snap);
                // cpu.stat.local read after the rates, where the
                // collector reads it, and its rate then
                for (path, l) in &late {
                    let i = snap.groups.iter().position(|g| g.path == *path).unwrap();
                    snap.groups[i].hot.throttled_local_usec = *l;
                    let g = &snap.groups[i];
                    old_rates[i].throttled_local_pct = old.local_pct(g, at, ncpus);
                    rated.rates[i].throttled_local_pct = new.local_pct(g, at);
                }
                for g in &snap.groups {
                    let i = PATHS.iter().position(|p| GroupPath::new(p) == g.path).unwrap();
                    last[i] = Some(g.clone());
                }
                let want = old.keep(&snap, old_rates, next);
                let got = new.keep(&snap, rated);
                prop_assert_eq!(shown(&got), shown(&want));
            }
        }
    }
}
