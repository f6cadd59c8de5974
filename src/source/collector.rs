//! The collector: scans on a timer in its own thread and sends what it
//! read to the main loop. It is the only place that reads the clock.
//!
//! [`Collector`] does one refresh at a time and is tested on fixture trees
//! without threads; [`spawn`] wraps it in the timer thread.

use super::devices;
use super::hier::{self, Hier, Hiers};
use super::procs::ProcReader;
use super::read::{
    read_controllers_kept, read_cpu_stat_local, read_detail_layout, read_detail_layout_kept,
    read_export, read_export_held, read_export_layout, read_io_cost, read_own_limits,
    read_path_limits_kept, KeptReads,
};
use super::safety;
use super::scan::{KeptPool, ScanConfig, ScanKind, Scanner, SharedPaths};
use crate::cgroupfs::{v1, CpuMax, Limit, MemoryEvents};
use crate::model::host::layout::HierId;
use crate::model::host::{meminfo_bytes, CpuTimes, MachineLoad};
use crate::model::tree::limits::{under_throttling, Throttling};
use crate::model::tree::part::Part;
pub use crate::model::tree::rates::rates_within;
use crate::model::tree::rates::{Baseline, Rated, Rater};
use crate::model::tree::root::{self, RootFacts};
use crate::model::tree::snapshot::{fill_memory_limits, HierKind};
use crate::model::tree::union::{self, Plan};
use crate::model::{
    DeviceInfo, GroupDetail, GroupPath, GroupRates, GroupSample, HotExtras, ProcessInfo, ScanCost,
    Snapshot,
};
use crate::render::severity::{effective_limits, Limits, OwnLimits};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the main loop asks of the collector.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Read this group in full on every refresh (the selection).
    Inspect(Option<GroupPath>),
    SetInterval(Duration),
    /// Read these files beyond the always-read ones for every group (the
    /// columns shown), from a refresh made at once.
    Extras(HotExtras),
    Pause(bool),
    /// Scan now (after a write), re-listing directories.
    RefreshNow,
    /// Find the processes a PID or a command name names, and the group of
    /// each (`source::procs::find_processes`): answered with
    /// [`Collected::Found`].
    FindProcess(String),
    /// Resolve this group's identity afresh and refresh now (a write
    /// confirmation for it opened; `Collector::renew_identity`).
    RenewIdentity(GroupPath),
    Stop,
}

#[derive(Debug, Clone)]
pub struct CollectorConfig {
    /// The directory of the hierarchy's root (mount or `--root`).
    pub root: PathBuf,
    /// Where to start, relative to `root` (`cgtop GROUP`).
    pub start: GroupPath,
    pub scan: ScanConfig,
    /// Read every group in full (JSON mode).
    pub full_detail: bool,
    /// Where block devices are described (normally /sys/dev/block).
    pub sys_dev_block: PathBuf,
}

/// The selected group, read in full.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub path: GroupPath,
    pub detail: GroupDetail,
    /// memory.max and memory.high of the group and each ancestor up to the
    /// start group, nearest first: the effective limit is the smallest.
    pub memory_limits: Vec<(GroupPath, Option<Limit>, Option<Limit>)>,
    /// cpu.max of the group and each ancestor up to the start group,
    /// nearest first: whose quota throttles it (`Refresh::throttling`).
    pub cpu_max_path: Vec<(GroupPath, Option<CpuMax>)>,
    /// memory.events changes since cgtop started (or since the group
    /// appeared).
    pub events_since_start: Option<MemoryEvents>,
    pub processes: Vec<ProcessInfo>,
    /// io.cost.qos and io.cost.model, when the inspected group is the mount root.
    pub io_cost: Vec<(String, String)>,
    /// The mount root's cgroup.controllers: every controller this
    /// hierarchy has (one the inspected group is not offered must come from there).
    pub top_controllers: Option<crate::cgroupfs::Controllers>,
    /// The cgroup.controllers of each ancestor up to the mount root,
    /// nearest first (`None`: not read): where pre-flight finds the level
    /// a controller not offered can be enabled from.
    pub offered_up: Vec<(GroupPath, Option<crate::cgroupfs::Controllers>)>,
    /// Where the subtree may go on past PATH_MAX (a group of it so deep
    /// that a child's path can pass 4,096 bytes, which the scan cannot
    /// open): its processes and groups counted by the descriptor walk the
    /// kill uses (`Hier::walk_subtree`), so that K's confirmation counts
    /// what K kills.
    pub deep_count: Option<hier::SubtreeCount>,
}

/// One refresh: the snapshot, rates parallel to `snapshot.groups`, and the
/// inspection.
#[derive(Debug, Clone)]
pub struct Refresh {
    pub snapshot: Snapshot,
    pub rates: Vec<GroupRates>,
    /// Who throttles each group (parallel to `snapshot.groups`): `None`
    /// when that is unknown.
    pub throttling: Vec<Option<Throttling>>,
    pub inspection: Option<Inspection>,
    pub devices: Arc<Vec<DeviceInfo>>,
    pub kept_fds: usize,
    /// memory.events changes since start per group (JSON mode only).
    pub events_since_start: HashMap<GroupPath, MemoryEvents>,
    /// What the lockout guard protects, read from /proc on this refresh
    /// (the TUI's collector thread only: cgtop, its session or its
    /// terminal may have moved since the last one). Read here, off the
    /// main loop, which must answer keys at once.
    pub protected: Option<crate::model::write::guard::Protected>,
    /// The machine's CPU, memory and pressure (/proc/stat, /proc/meminfo,
    /// /proc/pressure), read once per refresh for the TUI header's meters;
    /// `None` where the collector was not given a /proc to read
    /// ([`Collector::set_proc_dir`]).
    pub machine: Option<MachineLoad>,
    /// Each group's effective limits (parallel to `snapshot.groups`), to
    /// grade its figures (`render::severity`); empty unless asked for
    /// ([`Collector::set_grade_limits`]). Read on each walk of the tree,
    /// so a limit changed by someone else shows within `rewalk_every`
    /// ticks; cgtop's own writes re-walk at once.
    pub limits: Vec<Limits>,
    /// The first refresh's event counters for the watcher started after
    /// it ([`Collector::set_event_seed`]); `None` on any other refresh.
    pub events_seed: Option<Arc<super::events::Seed>>,
}

/// What the collector thread sends.
#[derive(Debug, Clone)]
pub enum Collected {
    Refresh(Box<Refresh>),
    /// The first look, before the first refresh (the TUI, on a large
    /// tree: [`Collector::set_first_look`]).
    Partial(Box<PartialRefresh>),
    /// The inspected group was read alone, right after the selection moved.
    Inspection(Box<Inspection>),
    /// The answer to [`Command::FindProcess`].
    Found(Box<super::procs::Found>),
}

pub struct Collector {
    cfg: CollectorConfig,
    /// The hierarchy, opened once: every read goes beneath it.
    hier: Arc<Hier>,
    scanner: Scanner,
    /// The other hierarchies' scanners (cgroup v1 and hybrid hosts): one
    /// per hierarchy holding a controller whose figures are read, merged
    /// with the primary's by `plan` ([`union::merge`]).
    others: Vec<(HierId, Scanner)>,
    /// Where in `others` the hierarchies listed only begin (devices,
    /// cpuset, `name=systemd` beside cgroup2: no figure is read from
    /// them; `Plan::listed`).
    listed_only_from: usize,
    /// How the scanners' samples make one tree; `None` on pure cgroup2
    /// (and a fixture like it), where the one scanner's samples are the
    /// tree, as before.
    plan: Option<Plan>,
    /// Whether the merge keeps each group's inode in every hierarchy
    /// (what a confirmed write is held to); off where nothing is written
    /// ([`Collector::set_hier_inodes`]).
    hier_inodes: bool,
    /// The extra files read (for the merged tree's memory limits).
    extras: HotExtras,
    /// Where each group's figures came from at the last refresh (with a
    /// plan): a counter whose source changed (a unit given a v1
    /// controller: cgroup2's core cpu.stat, then cpuacct) has no rate
    /// across the change. Sorted by path, as the snapshot: a list, whose
    /// room is filled again each refresh and given back whole
    /// (`model::heap`), not a map's table made anew and freed.
    last_sources: Vec<(GroupPath, crate::model::tree::snapshot::Sources)>,
    /// The rate step, with the last snapshot as its baseline (shared with
    /// a replay: `source::record`).
    rater: Rater,
    procs: ProcReader,
    events_base: HashMap<(GroupPath, u64), MemoryEvents>,
    /// Whether the first refresh reads every group's memory.events as the
    /// baseline of "since start" ([`Collector::set_events_baseline`]).
    events_baseline: bool,
    /// The groups of the first refresh (path, inode): a group that came
    /// later counts its memory.events from zero. `None`: not kept (no
    /// baseline asked for), every group counts from its first sight.
    first_paths: Option<std::collections::HashSet<(GroupPath, u64)>>,
    /// Whether the first refresh reads the event counters for a watcher
    /// started later ([`Collector::set_event_seed`]).
    event_seed: bool,
    devices: Arc<Vec<DeviceInfo>>,
    inspected: Option<GroupPath>,
    /// With `full_detail`, read only the files of the Prometheus exposition
    /// on a pure v2 layout ([`Collector::set_export_reading`]).
    export_reading: bool,
    /// The export reading's descriptors, kept from one refresh to the
    /// next within what the scanners leave of the budget.
    export_kept: KeptReads,
    /// The inspected group's descriptors (and its ancestors' limits and
    /// controllers), kept from one refresh to the next: it is read in
    /// full every refresh. All closed every `rewalk_every` refreshes.
    inspect_kept: KeptReads,
    /// The budget's pool the export reading and the inspection publish
    /// their counts in, so that the scanners count them as kept: the
    /// export reading's slot, after theirs (the inspection's is the next).
    /// Made on first use ([`Collector::kept_pool`]).
    kept_pool: Option<(Arc<KeptPool>, usize)>,
    /// Whether the kernel has cpu.stat.local (Linux 6.6); found out on the
    /// first refresh.
    has_cpu_stat_local: Option<bool>,
    /// Where the kernel's root group's missing figures are read from
    /// (`model::tree::root`); decided on the first refresh.
    kernel_root: Option<KernelRoot>,
    /// Where the machine's meminfo and pressure are (normally /proc);
    /// `None` reads nothing (tests on fixture trees, batch output).
    proc_dir: Option<PathBuf>,
    /// The disks v1 blkio does not count, with their IO counts, at the
    /// last refresh (`root::uncounted_disks`): the interval's IO on them
    /// is in no figure (`root::busy_uncounted`).
    uncounted_disks: Option<Vec<(crate::cgroupfs::io::DevId, u64)>>,
    /// Read every group's limit files ([`Refresh::limits`]), kept here
    /// between walks by group and inode; `None`: not asked for.
    own_limits: Option<HashMap<(GroupPath, u64), OwnLimits>>,
    /// /proc/stat's CPU times at the last refresh, for the machine's CPU.
    cpu_times: Option<CpuTimes>,
    /// Every hierarchy of the layout (the detail reads each controller's
    /// files from its holder); the one handle alone until told otherwise.
    hiers: Arc<Hiers>,
    /// Refreshes made so far.
    refreshes: u64,
    /// The first frame first ([`Collector::defer_start_up`]).
    deferred: bool,
    /// Who each group is ([`Collector::set_identities`]); `None`: not
    /// asked for (tests on fixture trees, replays).
    identities: Option<super::identity::Resolver>,
    /// The CPU time of each step of the last refresh, when asked for
    /// ([`Collector::set_lap_timing`]: the benchmarks' breakdown).
    laps: Option<Laps>,
    /// CPU time spent by the threads that helped this refresh's scan
    /// ([`in_parallel`]), added to its cost.
    helper_cpu: Duration,
    /// Take a first look before the first refresh
    /// ([`Collector::set_first_look`]).
    first_look: bool,
    /// This refresh is a priming read ([`Collector::prime`]).
    priming: bool,
    /// The last refresh was a priming read, and the hierarchies it did
    /// not read are still to be walked ([`Collector::walk_unprimed`]).
    unprimed: bool,
    /// The last refresh was a priming read: the next reads every
    /// hierarchy side by side, as the first does (its reads are the first
    /// of most files; a one-shot run prints it).
    primed: bool,
    /// The last refresh was a priming read, and the level figures are
    /// still to be read ([`Collector::read_levels`]).
    levels_due: bool,
    /// When the TUI's first refresh kept its level figures for the second
    /// ([`Scanner::set_keep_levels`]).
    levels_kept: Option<Instant>,
    /// The next refresh is the last ([`Collector::set_last_refresh`]).
    last: bool,
}

/// Where the kernel's root group's missing figures are read from
/// (`model::tree::root`): only where the view's root is the kernel's own
/// root group on a cgroup file system, never a `--root` subdirectory, a
/// start group or a fixture tree.
#[derive(Default)]
struct KernelRoot {
    /// The v1 memory hierarchy (holding memory) whose root is the
    /// kernel's: its memory.kmem.usage_in_bytes.
    memory: Option<Arc<Hier>>,
    /// The hierarchy holding pids, where its root is the kernel's: the
    /// machine's tasks (/proc/loadavg) where the groups below count theirs
    /// in pids.current.
    tasks: Option<PidsBelow>,
    /// The v1 blkio hierarchy (holding io), whose root is the kernel's:
    /// its blkio.throttle.io_service_bytes_recursive lists every disk
    /// blkio counts (`root::uncounted_disks`). Also where the scan starts
    /// at a group below.
    io: Option<Arc<Hier>>,
}

/// Whether the groups below the kernel's root count their tasks.
enum PidsBelow {
    /// A v1 pids hierarchy: every group below has pids.current.
    Always,
    /// cgroup2: while the root's cgroup.subtree_control has pids (read
    /// each refresh: one small file).
    Enabled(Arc<Hier>),
}

/// The TUI's first frame, before the first refresh: the groups the first
/// screen shows and their level figures ([`Collector::first_look`]).
#[derive(Debug, Clone)]
pub struct PartialRefresh {
    /// As a refresh: no rate, no inspection, no machine figures.
    pub refresh: Refresh,
    /// The groups with children that were not listed: the first screen
    /// shows them folded until the first refresh lists them.
    pub unlisted: Vec<GroupPath>,
}

/// The most descriptors the inspection keeps (the inspected group's ~50
/// files on cgroup2, its ancestors' limits and controllers); on a hybrid
/// or v1 host the v1 hierarchies' files beyond are opened, read and
/// closed as before.
const INSPECTION_KEPT: usize = 128;

/// A first look is taken when the start group has more descendants than
/// this (by its cgroup.stat): below, the first refresh is as quick.
pub const FIRST_LOOK_ABOVE: u64 = 300;

/// A first look lists at most about this many groups: past it, a group
/// that would be open is shown folded until the first refresh.
pub const FIRST_LOOK_GROUPS: usize = 400;

/// The CPU time of each step of one refresh, in the order they ran:
/// `scan` (every hierarchy's listing and reads), `merge` (v1 and hybrid
/// layouts: one tree of them), `devices`, `baseline` (the first
/// refresh's memory.events), `export` (`full_detail`: every group read),
/// `limits`, `rates`, `inspection`, `local` (cpu.stat.local), `keep`
/// (who throttles, the next rates' baseline) and `machine`.
#[derive(Debug, Clone, Default)]
pub struct Laps {
    last: Duration,
    pub steps: Vec<(&'static str, Duration)>,
}

impl Collector {
    /// A collector that opens `cfg.root` now (tests, benches; the program
    /// passes the handle it opened at start to [`Collector::with_hier`]).
    pub fn new(cfg: CollectorConfig) -> Self {
        let hier = Arc::new(Hier::open_lenient(&cfg.root));
        Self::with_hier(cfg, hier)
    }

    /// A collector that reads beneath `hier` (`cfg.root` is not opened).
    pub fn with_hier(cfg: CollectorConfig, hier: Arc<Hier>) -> Self {
        let start = hier::group_rel(&cfg.start).to_path_buf();
        let scanner = Scanner::with_hier(Arc::clone(&hier), start, cfg.scan.clone());
        let devices = Arc::new(devices::list(&cfg.sys_dev_block));
        let hiers = Arc::new(Hiers::single(Arc::clone(&hier)));
        Self {
            hiers,
            cfg,
            hier,
            scanner,
            others: Vec::new(),
            listed_only_from: 0,
            plan: None,
            hier_inodes: true,
            extras: HotExtras::default(),
            last_sources: Vec::new(),
            // CPU figures never exceed the online CPUs (see `rates::credit`)
            rater: Rater::new(Some(online_cpus())),
            procs: ProcReader::default(),
            events_base: HashMap::new(),
            events_baseline: true,
            first_paths: None,
            event_seed: false,
            devices,
            inspected: None,
            export_reading: false,
            export_kept: KeptReads::default(),
            inspect_kept: KeptReads::default(),
            kept_pool: None,
            has_cpu_stat_local: None,
            kernel_root: None,
            proc_dir: None,
            uncounted_disks: None,
            own_limits: None,
            cpu_times: None,
            refreshes: 0,
            deferred: false,
            identities: None,
            laps: None,
            helper_cpu: Duration::ZERO,
            first_look: false,
            priming: false,
            unprimed: false,
            primed: false,
            levels_due: false,
            levels_kept: None,
            last: false,
        }
    }

    /// Time each step of every refresh ([`Collector::laps`]); two
    /// `clock_gettime` a step, nothing when off (the default).
    pub fn set_lap_timing(&mut self, on: bool) {
        self.laps = on.then(Laps::default);
    }

    /// The steps of the last refresh with their CPU time, when timed.
    pub fn laps(&self) -> Option<&Laps> {
        self.laps.as_ref()
    }

    /// Ends the step `name` of the refresh being timed.
    fn lap(&mut self, name: &'static str) {
        if let Some(l) = &mut self.laps {
            let now = thread_cpu_time();
            l.steps.push((name, now.saturating_sub(l.last)));
            l.last = now;
        }
    }

    /// A collector of every hierarchy of `hiers` (a cgroup v1 or hybrid
    /// host): one tree, the union of their groups, each figure from the
    /// hierarchy holding its controller ([`union::merge`]). `hier` is the
    /// primary hierarchy's handle (`run::locate`'s); every other read
    /// (inspection, limits, events) goes there. With no v1 hierarchy, the
    /// same as [`Collector::with_hier`].
    pub fn with_hiers(cfg: CollectorConfig, hier: Arc<Hier>, hiers: &Arc<Hiers>) -> Self {
        let plan = Plan::of(&hiers.layout).filter(|_| !hiers.layout.v1.is_empty());
        let Some(plan) = plan else {
            let mut c = Self::with_hier(cfg, hier);
            c.hiers = Arc::clone(hiers);
            return c;
        };
        let kind = |id: HierId| match id {
            HierId::V2 => ScanKind::V2,
            HierId::V1(_) => ScanKind::V1 {
                procs: id == plan.primary,
            },
        };
        let start = hier::group_rel(&cfg.start).to_path_buf();
        // every hierarchy listed, so that each group says which hold it
        let ids = plan.listed(&hiers.layout);
        // the descriptor budget is the program's: one, shared
        let pool = KeptPool::new(ids.len());
        // and one copy of each group's path, whatever the hierarchies
        let paths = Arc::new(SharedPaths::new());
        let each = cfg.scan.clone();
        let mut c = Self::with_hier(cfg, Arc::clone(&hier));
        c.hiers = Arc::clone(hiers);
        c.scanner = Scanner::of_kind(hier, kind(plan.primary), start.clone(), each.clone());
        c.scanner.share_budget(Arc::clone(&pool), 0);
        c.scanner.share_paths(Arc::clone(&paths));
        for (k, id) in ids.into_iter().enumerate().skip(1) {
            if let Some(h) = hiers.get(id) {
                let mut s = Scanner::of_kind(Arc::clone(h), kind(id), start.clone(), each.clone());
                s.share_budget(Arc::clone(&pool), k);
                s.share_paths(Arc::clone(&paths));
                c.others.push((id, s));
            }
        }
        // `listed` gives the hierarchies read first
        let read = plan.hierarchies();
        c.listed_only_from = c
            .others
            .iter()
            .take_while(|(id, _)| read.contains(id))
            .count();
        c.plan = Some(plan);
        c
    }

    /// Scans every hierarchy: all list first, then `clock`, then all
    /// read; merged into one tree.
    fn scan_all<T>(
        &mut self,
        plan: &Plan,
        clock: impl FnOnce() -> T,
    ) -> (Vec<GroupSample>, ScanCost, T) {
        // the first frame and the first rates do without the hierarchies
        // listed only (no figure of theirs is shown): they are walked from
        // the third refresh on, with the v1 watches, and until then every
        // group may be in them (a walk there would also make the first
        // rates a walked refresh, which reads every group's limits again)
        let first_frame = self.deferred;
        // a priming read reads only the hierarchies rates are computed
        // from; the others are walked after it (`walk_unprimed`)
        let run: Vec<bool> = (self.others.iter().enumerate())
            .map(|(k, (id, _))| {
                let listed_later = first_frame && k >= self.listed_only_from;
                let walked_later = self.priming && !reads_rates(plan, *id);
                !(listed_later || walked_later)
            })
            .collect();
        let not_yet: Vec<HierId> = (self.others.iter().zip(&run))
            .filter(|(_, r)| !**r)
            .map(|((id, _), _)| *id)
            .collect();
        // the first refresh walks every hierarchy and opens every file,
        // side by side (a priming read's walks one hierarchy after
        // another: [`PRIMING_WALKS_SIDE_BY_SIDE`]), then reads them side
        // by side (`in_parallel_each`); the later ones
        // read kept descriptors, a few ms, in this thread; the one after
        // a priming read is the first read of most files, side by side too
        let after_priming = std::mem::take(&mut self.primed);
        let parallel = self.refreshes == 0 || std::mem::take(&mut self.unprimed) || after_priming;
        let ids: Vec<HierId> = std::iter::once(plan.primary)
            .chain(
                (self.others.iter().zip(&run))
                    .filter(|(_, r)| **r)
                    .map(|((id, _), _)| *id),
            )
            .collect();
        let mut scanners: Vec<&mut Scanner> = std::iter::once(&mut self.scanner)
            .chain(
                (self.others.iter_mut().zip(&run))
                    .filter(|(_, r)| **r)
                    .map(|((_, s), _)| s),
            )
            .collect();
        let (costs, helper_cpu) = in_parallel(
            &mut scanners,
            parallel && (!self.priming || PRIMING_WALKS_SIDE_BY_SIDE),
            |s, ()| s.prepare(),
            |_| (),
        );
        self.helper_cpu += helper_cpu;
        let at = clock();
        // each hierarchy's part (the figures its scanner read) is merged
        // as soon as it is read and dropped with it (`union::Merging`):
        // the merged tree and one part at a time, but on the first
        // refresh, whose reads go side by side
        // (the merge's CPU time is told apart in this thread's refreshes:
        // on the first, some merging runs in a helper thread)
        let timing = self.laps.is_some() && !parallel;
        let mut merging = union::Merging::new(plan).expecting(ids.len());
        if !self.hier_inodes {
            merging = merging.without_inodes();
        }
        let mut cost = ScanCost::default();
        let mut merge_cpu = Duration::ZERO;
        let mut add = |k: usize, (g, c): (Part, ScanCost)| {
            if k == 0 {
                cost = c;
            } else {
                cost.files_read += c.files_read;
                cost.files_kept += c.files_kept;
                cost.dirs_listed += c.dirs_listed;
                cost.fd_limited |= c.fd_limited;
                cost.walked |= c.walked;
            }
            let t0 = timing.then(thread_cpu_time);
            merging.add_part(ids[k], g);
            if let Some(t0) = t0 {
                merge_cpu += thread_cpu_time().saturating_sub(t0);
            }
        };
        let last = self.last;
        self.helper_cpu += in_parallel_each(
            &mut scanners,
            parallel,
            |s, cost| {
                let part = s.read_part(cost);
                if last {
                    s.release();
                }
                part
            },
            |k| costs[k],
            &mut add,
        );
        // the merging done between the reads is the merge's step
        if let Some(l) = &mut self.laps {
            let now = thread_cpu_time();
            l.steps
                .push(("scan", now.saturating_sub(l.last).saturating_sub(merge_cpu)));
            l.last = now.saturating_sub(merge_cpu);
        }
        let mut groups = merging.finish();
        for g in &mut groups {
            for &id in &not_yet {
                g.hot.v1.held_in.insert(id);
            }
        }
        if self.extras.memory_max {
            fill_memory_limits(&mut groups);
        }
        self.lap("merge");
        (groups, cost, at)
    }

    /// Drops the rates whose counters came from another hierarchy at the
    /// last refresh (two counters of different origins: their difference
    /// is no rate), and keeps this refresh's sources.
    /// `rates` may be empty (a priming read's): the sources are kept all
    /// the same.
    fn no_rate_across_a_source_change(&mut self, snapshot: &Snapshot, rates: &mut [GroupRates]) {
        // both sorted by path: one pass
        let mut last = self.last_sources.iter().peekable();
        for (i, g) in snapshot.groups.iter().enumerate() {
            let src = g.hot.v1.sources;
            while last.next_if(|(p, _)| *p < g.path).is_some() {}
            let old = last.next_if(|(p, _)| *p == g.path).map(|(_, s)| s);
            if let (Some(old), Some(r)) = (old, rates.get_mut(i)) {
                if old.cpu != src.cpu {
                    r.cpu_pct = None;
                    r.user_pct = None;
                    r.system_pct = None;
                    r.throttled_per_s = None;
                    r.throttled_pct = None;
                }
                if old.io != src.io || old.io_own_only != src.io_own_only {
                    r.io = None;
                    r.io_by_dev.clear();
                }
            }
        }
        self.last_sources.clear();
        (self.last_sources)
            .extend((snapshot.groups.iter()).map(|g| (g.path.clone(), g.hot.v1.sources)));
    }

    /// The machine's load from the /proc given ([`Collector::set_proc_dir`]),
    /// with its CPU busy share since the last refresh.
    fn read_machine(&mut self) -> Option<MachineLoad> {
        let dir = self.proc_dir.as_deref()?;
        let mut m = read_machine_load(dir);
        let now = read_small(&dir.join("stat")).and_then(|t| CpuTimes::parse(&t));
        m.cpu_busy = now.zip(self.cpu_times).and_then(|(n, p)| n.busy_since(&p));
        self.cpu_times = now;
        Some(m)
    }

    /// v1 and hybrid layouts: whether each v1 hierarchy's group
    /// directories are watched for groups made or removed
    /// ([`Scanner::set_watching`]); on by default. A run that reads once
    /// (`-b -n 1`, `--openmetrics`) turns it off: it could not use a watch.
    pub fn set_watching(&mut self, on: bool) {
        self.scanner.set_watching(on);
        for (_, s) in &mut self.others {
            s.set_watching(on);
        }
    }

    /// The next refresh is the run's last (`-b -n N`'s N-th): each
    /// scanner lets go of its entries (their descriptors closed) as soon
    /// as its hierarchy is read, rather than when the collector is
    /// dropped after the refresh, so that seven hierarchies' entries of
    /// 10,000 groups (8 MB) are not held beside the merged tree, its
    /// rates and the output's rows. A refresh after it walks anew.
    pub fn set_last_refresh(&mut self) {
        self.last = true;
    }

    /// Drops the collector after a run's last refresh, before its output
    /// is made: the rates' baseline (1.5 MB at 10,000 groups) given back
    /// without raising the allocator's mmap threshold (`model::heap`), so
    /// that the output's lists are mapped and returned on their own.
    pub fn let_go(mut self) {
        self.rater.let_go();
        crate::model::heap::give_back(std::mem::take(&mut self.last_sources));
    }

    /// The first frame first (the TUI): the first refresh reads the tree
    /// and every level figure (memory, PIDs, limits, state) and nothing a
    /// first frame does not show: the machine's figures (the header's
    /// meters) are read from the second refresh on, and the v1 directory
    /// watches are set by the walk of the third (after the first rates),
    /// which lists every v1 hierarchy again and the hierarchies listed
    /// only for the first time (neither the first frame nor the first
    /// rates wait for them).
    pub fn defer_start_up(&mut self) {
        self.deferred = true;
        self.set_watching(false);
    }

    /// The TUI on a large tree: [`Collector::first_look`] gives a first
    /// frame before the first refresh.
    pub fn set_first_look(&mut self, on: bool) {
        self.first_look = on;
    }

    /// A first look (once, before the first refresh, when asked for with
    /// [`Collector::set_first_look`]): the groups the first screen shows,
    /// read as a refresh reads them (level figures and limits; no rate),
    /// by fresh scanners that list the children of the groups the fold
    /// rule shows open only (`scan::FirstLook`: the start group and each
    /// group of at most [`LARGE`](crate::model::tree::first_folds::LARGE)
    /// descendants, by cgroup2's cgroup.stat; a v1 hierarchy follows the
    /// primary's). `None` when the primary hierarchy has no cgroup.stat
    /// at the start group (pure v1) or the tree is small enough
    /// ([`FIRST_LOOK_ABOVE`]) for the first refresh to be as quick. The
    /// collector's own scanners are left as they are: the first refresh
    /// reads the whole tree after it.
    pub fn first_look(&mut self, clock: Instant) -> Option<PartialRefresh> {
        use super::scan::FirstLook;
        use crate::model::tree::first_folds::LARGE;
        if !self.first_look || self.refreshes > 0 {
            return None;
        }
        self.first_look = false;
        let wall0 = Instant::now();
        let cpu0 = thread_cpu_time();
        let stat = hier::file_rel(&self.cfg.start, crate::cgroupfs::files::STAT);
        let text = self.hier.read_text(&stat).ok()?;
        let below = crate::cgroupfs::CgroupStat::parse(&text).nr_descendants?;
        if below <= FIRST_LOOK_ABOVE {
            return None;
        }
        let mut primary = self.scanner.fresh();
        primary.set_first_look(Some(FirstLook::by_size(LARGE as u64, FIRST_LOOK_GROUPS)));
        let mut costs = vec![primary.prepare()];
        let look = primary.first_look()?;
        let unlisted = look.closed().to_vec();
        let opened = Arc::new(look.opened().clone());
        // the hierarchies read (not those listed only, as the deferred
        // first refresh), each opening what the primary opened
        let n = if self.plan.is_some() {
            self.listed_only_from
        } else {
            0
        };
        let mut others: Vec<(HierId, Scanner)> = self.others[..n]
            .iter()
            .map(|(id, s)| {
                let mut f = s.fresh();
                f.set_first_look(Some(FirstLook::following(Arc::clone(&opened))));
                (*id, f)
            })
            .collect();
        costs.extend(others.iter_mut().map(|(_, s)| s.prepare()));
        let at = clock.elapsed();
        let mut costs = costs.into_iter();
        let (groups, mut cost) = primary.read_prepared(costs.next().unwrap_or_default());
        let groups = match self.plan {
            Some(plan) => {
                let mut parts = vec![(plan.primary, groups)];
                for ((id, s), c) in others.iter_mut().zip(costs) {
                    let (g, c) = s.read_prepared(c);
                    cost.files_read += c.files_read;
                    cost.dirs_listed += c.dirs_listed;
                    parts.push((*id, g));
                }
                let mut groups = union::merge(&plan, parts);
                for g in &mut groups {
                    for (id, _) in &self.others[n..] {
                        g.hot.v1.held_in.insert(*id);
                    }
                }
                if self.extras.memory_max {
                    fill_memory_limits(&mut groups);
                }
                groups
            }
            None => groups,
        };
        let mut groups = groups;
        self.complete_root(&mut groups, &mut cost);
        let groups = self.rebase(groups);
        let limits = if self.own_limits.is_some() {
            let own: Vec<OwnLimits> = groups
                .iter()
                .map(|g| read_own_limits(&self.hiers, hier::group_rel(&g.path)))
                .collect();
            effective_limits(groups.iter().map(|g| &g.path), &own)
        } else {
            Vec::new()
        };
        let unlisted = self.rebase_paths(unlisted);
        let len = groups.len();
        cost.walked = true;
        cost.wall = wall0.elapsed();
        cost.cpu = thread_cpu_time().saturating_sub(cpu0);
        Some(PartialRefresh {
            refresh: Refresh {
                snapshot: Snapshot { at, groups, cost },
                rates: vec![GroupRates::default(); len],
                throttling: vec![None; len],
                inspection: None,
                devices: Arc::clone(&self.devices),
                kept_fds: 0,
                events_since_start: HashMap::new(),
                protected: None,
                machine: None,
                limits,
                // the watcher's baseline is the first whole refresh's
                events_seed: None,
            },
            unlisted,
        })
    }

    /// Paths below the start group, as a snapshot's ([`Self::rebase`]).
    fn rebase_paths(&self, paths: Vec<GroupPath>) -> Vec<GroupPath> {
        if self.cfg.start.is_root() {
            return paths;
        }
        paths
            .into_iter()
            .map(|p| {
                if p.is_root() {
                    self.cfg.start.clone()
                } else {
                    self.cfg.start.concat(&p)
                }
            })
            .collect()
    }

    /// Fill each group's identity ([`GroupSample::identity`]) from the
    /// files `resolver` reads: once per group directory, never per steady
    /// refresh; with [`Collector::defer_start_up`], from the second
    /// refresh on (names fill in after the first frame).
    pub fn set_identities(&mut self, mut resolver: Option<super::identity::Resolver>) {
        if let Some(r) = resolver.as_mut() {
            r.set_hot(self.inspected.clone());
        }
        self.identities = resolver;
    }

    /// The identity resolver, where one is set.
    pub fn identities(&self) -> Option<&super::identity::Resolver> {
        self.identities.as_ref()
    }

    /// Whether the first refresh takes every group's memory.events as the
    /// baseline of its changes since start (the detail's "since cgtop
    /// started", JSON's `memory_events_since_start`); on by default. A run
    /// that shows neither (`-b`'s table, `--json --brief`) turns it off:
    /// one file read a group, before the first output, for nothing.
    pub fn set_events_baseline(&mut self, on: bool) {
        self.events_baseline = on;
    }

    /// Whether each group's inode in every hierarchy but the primary is
    /// kept in the merged tree (`union::Merging::without_inodes`); on by
    /// default. A run that never writes (batch, JSON, record, serve)
    /// turns it off: one allocation a group fewer on a hybrid host.
    pub fn set_hier_inodes(&mut self, on: bool) {
        self.hier_inodes = on;
    }

    /// Whether v1 cpuacct's user/system split is read
    /// ([`Scanner::set_cpu_split`]); on by default. A run that prints CPU
    /// time whole (`-b`'s table) turns it off: two files a group fewer
    /// opened and read, in the priming read and in each refresh.
    pub fn set_cpu_split(&mut self, on: bool) {
        self.scanner.set_cpu_split(on);
        for (_, s) in &mut self.others {
            s.set_cpu_split(on);
        }
    }

    /// Whether v1 blkio's operation counts are read
    /// ([`Scanner::set_io_ops`]); on by default. A run that shows no IO
    /// operations (`-b`'s table) turns it off: one file a group fewer
    /// opened and read in a v1 blkio hierarchy, in the priming read (an
    /// open of a costly file on the way to its stamp) and in each refresh.
    pub fn set_io_ops(&mut self, on: bool) {
        self.scanner.set_io_ops(on);
        for (_, s) in &mut self.others {
            s.set_io_ops(on);
        }
    }

    /// Whether the first refresh reads, for the event watcher started
    /// after it (the TUI's), every group's event counters: memory.events
    /// where memory is cgroup2's (the baseline of "since start" when it
    /// is read anyway), memory.oom_control's oom_kill in a v1 memory
    /// hierarchy; with cgroup.events and the groups listed, in
    /// [`Refresh::events_seed`]. The watcher's baseline is then what
    /// cgtop read first, and a change before its watches are set is an
    /// event, not its baseline. Off by default.
    pub fn set_event_seed(&mut self, on: bool) {
        self.event_seed = on;
    }

    /// Read every group's memory.max, memory.high, pids.max and cpu.max
    /// (on each walk, kept between) for [`Refresh::limits`].
    pub fn set_grade_limits(&mut self, on: bool) {
        self.own_limits = on.then(HashMap::new);
    }

    /// Each group's effective limits; read again on a walk (a group
    /// created, removed or renamed, a write of cgtop's, every
    /// `rewalk_every` ticks) and for a group not seen before.
    fn grade_limits(&mut self, groups: &[GroupSample], walked: bool) -> Vec<Limits> {
        let Some(cache) = self.own_limits.as_mut() else {
            return Vec::new();
        };
        if walked {
            cache.clear();
        }
        // each from the hierarchy holding its controller, as the detail's
        let hiers = &self.hiers;
        if self.refreshes == 0 && cache.is_empty() {
            // the first frame's: every group's, split between threads as
            // the first scan is ([`in_parallel`])
            let (read, cpu) = par_map(groups, |g| read_own_limits(hiers, hier::group_rel(&g.path)));
            self.helper_cpu += cpu;
            for (g, l) in groups.iter().zip(read) {
                cache.insert((g.path.clone(), g.inode), l);
            }
        }
        let own: Vec<OwnLimits> = groups
            .iter()
            .map(|g| {
                *cache
                    .entry((g.path.clone(), g.inode))
                    .or_insert_with(|| read_own_limits(hiers, hier::group_rel(&g.path)))
            })
            .collect();
        // groups gone since are not kept
        if cache.len() > groups.len() {
            let keep: std::collections::HashSet<(&GroupPath, u64)> =
                groups.iter().map(|g| (&g.path, g.inode)).collect();
            cache.retain(|(p, i), _| keep.contains(&(p, *i)));
        }
        effective_limits(groups.iter().map(|g| &g.path), &own)
    }

    /// Read the machine's memory and pressure from `dir` (normally /proc)
    /// on every refresh ([`Refresh::machine`]); `None` stops.
    pub fn set_proc_dir(&mut self, dir: Option<PathBuf>) {
        self.proc_dir = dir;
    }

    /// The CPU ceiling of every CPU figure (the host's online CPUs by
    /// default); `None` shows counters as they are.
    pub fn set_cpu_ceiling(&mut self, ncpus: Option<usize>) {
        self.rater.set_ncpus(ncpus);
    }

    /// The extra files every scan reads (the columns shown).
    pub fn set_extras(&mut self, extras: HotExtras) {
        self.extras = extras;
        let scanned = self.scanned_extras();
        self.scanner.set_extras(scanned);
        for (_, s) in &mut self.others {
            s.set_extras(scanned);
        }
    }

    /// The extras the scanners read: the columns', and, for the export
    /// reading, the swap in use (memory.swap.current; v1's
    /// memory.memsw.usage_in_bytes, less the memory.usage_in_bytes the
    /// scan reads anyway), which the exposition then takes from the scan
    /// instead of reading the same files through descriptors of its own.
    fn scanned_extras(&self) -> HotExtras {
        HotExtras {
            swap: self.extras.swap || self.export_reading,
            ..self.extras
        }
    }

    /// With `full_detail`: read only the files the Prometheus exposition
    /// shows (`source::read::read_export`: 13 a group instead of about 29,
    /// no memory.stat); on a layout with v1 hierarchies, those files from
    /// the hierarchy holding each controller
    /// (`source::read::read_export_layout`: about 30 instead of about 60).
    /// The swap in use is the scan's ([`Collector::set_extras`]'s `swap`,
    /// on while this is): no file is read by both. Their descriptors are
    /// kept from one refresh to the next (a scrape costs preads, as a
    /// steady scan does), within the descriptor budget
    /// the scanners leave ([`Scanner::budget`] less what they keep),
    /// counted in [`Refresh::kept_fds`].
    pub fn set_export_reading(&mut self, on: bool) {
        self.export_reading = on;
        self.set_extras(self.extras);
        if !on {
            self.export_kept.clear();
            if let Some((pool, slot)) = &self.kept_pool {
                pool.publish(*slot, 0);
            }
            return;
        }
        self.kept_pool();
    }

    /// The pool of the descriptor budget and the export reading's slot in
    /// it (the inspection's is the next), made on first use: one budget
    /// for the scanners', the exporter's and the inspection's files, so
    /// that a scanner opens no more while their sum is at the budget.
    fn kept_pool(&mut self) -> (Arc<KeptPool>, usize) {
        if let Some((pool, slot)) = &self.kept_pool {
            return (Arc::clone(pool), *slot);
        }
        let slot = 1 + self.others.len();
        let pool = KeptPool::new(slot + 2);
        // what the scanners keep counts at once, not from their next scan
        self.scanner.share_budget(Arc::clone(&pool), 0);
        pool.publish(0, self.scanner.kept());
        for (k, (_, s)) in self.others.iter_mut().enumerate() {
            s.share_budget(Arc::clone(&pool), k + 1);
            pool.publish(k + 1, s.kept());
        }
        self.kept_pool = Some((Arc::clone(&pool), slot));
        (pool, slot)
    }

    /// How many descriptors may be kept in all: the scanners' budget
    /// (every scanner has the same), which the export reading and the
    /// inspection share.
    fn budget(&self) -> usize {
        self.scanner.budget()
    }

    /// Closes the inspection's kept descriptors, and says so in the pool.
    fn close_inspection_files(&mut self) {
        self.inspect_kept.clear();
        if let Some((pool, slot)) = &self.kept_pool {
            pool.publish(slot + 1, 0);
        }
    }

    pub fn set_inspected(&mut self, group: Option<GroupPath>) {
        // its identity's file is re-checked on every refresh
        if let Some(r) = self.identities.as_mut() {
            r.set_hot(group.clone());
        }
        self.inspected = group;
    }

    /// Resolves `group`'s identity afresh on the next refresh (a write
    /// confirmation for it opened: the owner's command must name the
    /// container as it is now, not as it was when first seen).
    pub fn renew_identity(&mut self, group: GroupPath) {
        if let Some(r) = self.identities.as_mut() {
            r.renew(group);
        }
    }

    /// One refresh now: `at` is the time since `start`, and the cost's
    /// wall and CPU time are measured (tests call `refresh` with a fixed
    /// `at` instead, so that nothing in them reads the clock).
    pub fn refresh_timed(&mut self, start: Instant) -> Refresh {
        let wall0 = Instant::now();
        let cpu0 = thread_cpu_time();
        let mut r = self.refresh_with(|| start.elapsed());
        r.snapshot.cost.wall = wall0.elapsed();
        r.snapshot.cost.cpu =
            thread_cpu_time().saturating_sub(cpu0) + std::mem::take(&mut self.helper_cpu);
        r
    }

    pub fn invalidate(&mut self) {
        self.scanner.invalidate();
        for (_, s) in &mut self.others {
            s.invalidate();
        }
    }

    /// Descriptors kept open by every scanner.
    fn kept_by_scanners(&self) -> usize {
        self.scanner.kept() + self.others.iter().map(|(_, s)| s.kept()).sum::<usize>()
    }

    /// Descriptors kept open: the scanners', the export reading's and the
    /// inspection's.
    fn kept(&self) -> usize {
        self.kept_by_scanners() + self.export_kept.len() + self.inspect_kept.len()
    }

    fn dir_of(path: &GroupPath) -> &Path {
        hier::group_rel(path)
    }

    /// Which of the root's missing figures this collector reads: where the
    /// scan starts at a hierarchy's root on a cgroup file system that is
    /// the kernel's root group (v1: it has cgroup.sane_behavior, which no
    /// other group has; cgroup2: it has no cgroup.type).
    fn decide_kernel_root(&self) -> KernelRoot {
        let at_root = |h: &Hier| {
            (h.is_cgroup1() && h.is_file(Path::new(v1::files::SANE_BEHAVIOR)).is_ok())
                || (h.is_cgroup2()
                    && h.is_file(Path::new(crate::cgroupfs::files::TYPE))
                        .is_err_and(|e| e.is_absent()))
        };
        // which disks blkio counts is the hierarchy's, wherever the scan
        // starts: read at its root
        let io = match self.plan.and_then(|p| p.io) {
            Some(id @ HierId::V1(_)) => self.hiers.get(id).filter(|h| at_root(h)).cloned(),
            _ => None,
        };
        if !self.cfg.start.is_root() {
            return KernelRoot {
                io,
                ..KernelRoot::default()
            };
        }
        let memory = match self.plan.and_then(|p| p.memory) {
            Some(id @ HierId::V1(_)) => self.hiers.get(id).filter(|h| at_root(h)).cloned(),
            _ => None,
        };
        let pids = match self.plan {
            Some(p) => p.pids.and_then(|id| self.hiers.get(id)),
            None => Some(&self.hier),
        };
        let tasks = pids.filter(|h| at_root(h)).map(|h| {
            if h.is_cgroup1() {
                PidsBelow::Always
            } else {
                PidsBelow::Enabled(Arc::clone(h))
            }
        });
        KernelRoot { memory, tasks, io }
    }

    /// Completes the kernel's root group of a scan (before [`Self::rebase`])
    /// with what its files lack beside its children's
    /// (`model::tree::root`): on v1 the kernel memory charged below it
    /// (one file), and the machine's tasks where a group below counts its
    /// own in pids.current (/proc/loadavg).
    fn complete_root(&mut self, groups: &mut [GroupSample], cost: &mut ScanCost) {
        if self.kernel_root.is_none() {
            self.kernel_root = Some(self.decide_kernel_root());
        }
        let Some(k) = &self.kernel_root else {
            return;
        };
        let mut facts = RootFacts::default();
        let root_memory = groups
            .first()
            .is_some_and(|g| g.path.is_root() && g.hot.memory_current.is_some());
        if let Some(h) = k.memory.as_ref().filter(|_| root_memory) {
            cost.files_read += 1;
            facts.kernel_memory = h
                .read_text(Path::new(v1::files::MEMORY_KMEM_USAGE))
                .ok()
                .and_then(|t| v1::parse_u64(&t));
        }
        let counted_below = match &k.tasks {
            Some(PidsBelow::Always) => true,
            Some(PidsBelow::Enabled(h)) => {
                cost.files_read += 1;
                h.read_text(Path::new(crate::cgroupfs::files::SUBTREE_CONTROL))
                    .is_ok_and(|t| crate::cgroupfs::Controllers::parse(&t).contains("pids"))
            }
            None => false,
        };
        let root_uncounted = groups
            .first()
            .is_some_and(|g| g.path.is_root() && g.hot.pids_current.is_none());
        if counted_below && root_uncounted {
            let proc_dir = self.proc_dir.as_deref().unwrap_or(Path::new("/proc"));
            facts.tasks =
                read_small(&proc_dir.join("loadavg")).and_then(|t| root::loadavg_tasks(&t));
        }
        let io = k.io.clone();
        root::complete(groups, facts);
        self.mark_uncounted_io(io.as_deref(), groups, cost);
    }

    /// Marks the groups whose IO is v1's while a disk blkio does not count
    /// did IO (`root::busy_uncounted`): the root's blkio lines (as read
    /// where the scan starts at the root, else one file) against
    /// /proc/diskstats; /sys/block is listed only where a device that did
    /// IO has no line, not on a host whose disks are all counted.
    fn mark_uncounted_io(
        &mut self,
        h: Option<&Hier>,
        groups: &mut [GroupSample],
        cost: &mut ScanCost,
    ) {
        let v1_io = |g: &GroupSample| g.hot.v1.sources.io == Some(HierKind::V1);
        let Some(h) = h.filter(|_| groups.iter().any(v1_io)) else {
            self.uncounted_disks = None;
            return;
        };
        let read_root = || {
            let mut io = crate::cgroupfs::IoStat::default();
            let text = h
                .read_text(Path::new(v1::files::BLKIO_BYTES_RECURSIVE))
                .or_else(|_| h.read_text(Path::new(v1::files::BLKIO_BYTES)))
                .ok()?;
            v1::blkio_into(&text, v1::BlkioKind::Bytes, &mut io);
            Some(io)
        };
        let scanned = groups
            .first()
            .filter(|g| self.cfg.start.is_root() && g.path.is_root() && v1_io(g))
            .and_then(|g| g.hot.io.as_ref());
        let read;
        let root_io = if let Some(io) = scanned {
            io
        } else {
            cost.files_read += 1;
            read = read_root();
            let Some(io) = read.as_ref() else {
                self.uncounted_disks = None;
                return;
            };
            io
        };
        let proc_dir = self.proc_dir.as_deref().unwrap_or(Path::new("/proc"));
        cost.files_read += 1;
        let disks = read_lines(&proc_dir.join("diskstats"), DISKSTATS_CAP);
        let mut whole: Option<std::collections::HashSet<Vec<u8>>> = None;
        let stacking = self.rater.stacking();
        let is_disk = |dev, name: &[u8]| {
            let whole = whole.get_or_insert_with(|| {
                std::fs::read_dir("/sys/block").map_or_else(
                    |_| std::collections::HashSet::new(),
                    |d| {
                        d.filter_map(Result::ok)
                            .take(4096)
                            .map(|e| e.file_name().into_encoded_bytes())
                            .collect()
                    },
                )
            });
            // a device stacked on others (dm, md) is counted on theirs; the
            // stacking is the one the rates count IO once by, read at the
            // walk's pace
            whole.contains(name) && !stacking.is_stacked(dev)
        };
        let now = disks.map(|t| root::uncounted_disks(root_io, &t, is_disk));
        let busy = now
            .as_deref()
            .and_then(|now| root::busy_uncounted(self.uncounted_disks.as_deref(), now));
        self.uncounted_disks = now;
        if let Some(disk) = busy {
            root::mark_io_uncounted(groups, disk);
        }
    }

    /// Paths in a snapshot are relative to the mount root, even when the
    /// scan started lower.
    fn rebase(&self, mut groups: Vec<GroupSample>) -> Vec<GroupSample> {
        if !self.cfg.start.is_root() {
            for g in &mut groups {
                g.path = if g.path.is_root() {
                    self.cfg.start.clone()
                } else {
                    self.cfg.start.concat(&g.path)
                };
            }
        }
        groups
    }

    /// memory.events change since start; the baseline is taken on first
    /// sight (zero for a group that appeared after the first scan).
    fn since_start(&mut self, path: &GroupPath, inode: u64, now: MemoryEvents) -> MemoryEvents {
        let key = (path.clone(), inode);
        let existed_at_start = self.first_paths.as_ref().is_none_or(|f| f.contains(&key));
        let base = *self.events_base.entry(key).or_insert(if existed_at_start {
            now
        } else {
            MemoryEvents::default()
        });
        now.since(&base)
    }

    /// Reads the details from every hierarchy of the layout (hybrid and v1
    /// hosts), not only the one the scanner walks.
    pub fn set_hiers(&mut self, hiers: Arc<Hiers>) {
        self.hiers = hiers;
        // kept by the old handles' addresses
        self.export_kept.clear();
        self.close_inspection_files();
    }

    /// The processes `query` names (a PID, or text in a process's name or
    /// command line) and the group of each in this view.
    pub fn find_processes(&self, query: &str) -> super::procs::Found {
        let map = super::procs::ViewMap::of(&self.hier);
        super::procs::find_processes(self.procs.proc(), map.as_ref(), query)
    }

    /// Reads the inspected group in full. `now_secs` is for process CPU %.
    pub fn read_inspection(
        &mut self,
        path: &GroupPath,
        inode: Option<u64>,
        now_secs: f64,
    ) -> Inspection {
        self.inspect(path, inode, None, now_secs)
    }

    /// [`Collector::read_inspection`], the inodes of the group's ancestors
    /// from `snapshot` where given (this refresh's), else from the last
    /// refresh's: every file read through the inspection's kept
    /// descriptors (`inspect_kept`), within what the scanners and the
    /// export reading leave of the budget, and counted in its pool (the
    /// scanners' next walk keeps that many fewer).
    fn inspect(
        &mut self,
        path: &GroupPath,
        inode: Option<u64>,
        snapshot: Option<&Snapshot>,
        now_secs: f64,
    ) -> Inspection {
        let (pool, slot) = self.kept_pool();
        let inode = inode.or_else(|| self.rater.prev()?.find(path).map(|g| g.inode));
        let inode_of = |a: &GroupPath| match snapshot {
            Some(s) => s.find(a).map(|g| g.inode),
            None => self.rater.prev().and_then(|p| p.find(a)).map(|g| g.inode),
        };
        let kept = &self.inspect_kept;
        let room = (self.budget())
            .saturating_sub(self.kept_by_scanners() + self.export_kept.len())
            .min(INSPECTION_KEPT);
        kept.begin(room);
        kept.group(inode.unwrap_or(0));
        let dir = Self::dir_of(path);
        let detail = read_detail_layout_kept(&self.hiers, dir, true, kept);
        // the group's own limits are its detail's, read once; its
        // ancestors', each through its kept descriptors
        let mut memory_limits = vec![(path.clone(), detail.memory_max, detail.memory_high)];
        let mut cpu_max_path = vec![(path.clone(), detail.cpu_max)];
        if *path != self.cfg.start {
            for a in path.ancestors().skip(1) {
                kept.group(inode_of(&a).unwrap_or(0));
                let ((max, high), cpu_max) =
                    read_path_limits_kept(&self.hiers, Self::dir_of(&a), kept);
                memory_limits.push((a.clone(), max, high));
                cpu_max_path.push((a.clone(), cpu_max));
                if a == self.cfg.start {
                    break;
                }
            }
        }
        let offered_up: Vec<_> = path
            .ancestors()
            .skip(1)
            .map(|a| {
                kept.group(inode_of(&a).unwrap_or(0));
                let c = read_controllers_kept(&self.hier, Self::dir_of(&a), kept);
                (a, c)
            })
            .collect();
        // the mount root offers every controller the hierarchy has: the
        // last of the ancestors' (the group's own where it is the root)
        let top_controllers = match offered_up.last() {
            Some((a, c)) if a.is_root() => c.clone(),
            _ if path.is_root() => detail.controllers.clone(),
            _ => self
                .hier
                .read_text(Path::new(crate::cgroupfs::files::CONTROLLERS))
                .ok()
                .map(|t| crate::cgroupfs::Controllers::parse(&t)),
        };
        // the files of any other group (the selection moved) are closed
        pool.publish(slot + 1, kept.end());
        let events_since_start = match (detail.memory_events, inode) {
            (Some(ev), Some(ino)) => Some(self.since_start(path, ino, ev)),
            _ => None,
        };
        let processes = self.procs.read(&detail.pids, now_secs);
        let io_cost = if path.is_root() {
            read_io_cost(&self.hier, dir)
        } else {
            Vec::new()
        };
        // a group whose path is within one name (NAME_MAX + '/') of
        // PATH_MAX may have children the scan cannot open
        let deep = self.rater.prev().is_some_and(|snap| {
            snap.groups
                .iter()
                .any(|g| g.path.as_bytes().len() + 257 >= 4096 && g.path.is_within(path))
        });
        let deep_count = deep.then(|| self.hier.count_subtree(dir).ok()).flatten();
        Inspection {
            offered_up,
            path: path.clone(),
            detail,
            memory_limits,
            cpu_max_path,
            events_since_start,
            processes,
            io_cost,
            top_controllers,
            deep_count,
        }
    }

    /// Reads cpu.stat.local where it tells something: every group in JSON
    /// mode, else the inspected group and the groups with a throttling group on
    /// their path (the ancestors' cpu.stat, read anyway, says where), and
    /// gives those read on both ends of the window their rate. Nothing on
    /// a kernel without the file (before 6.6).
    /// `inspection`: this refresh's of the inspected group, whose
    /// cpu.stat.local it read: not read a second time.
    fn read_cpu_stat_local(
        &mut self,
        snapshot: &mut Snapshot,
        rates: &mut [GroupRates],
        inspection: Option<&Inspection>,
    ) {
        let hier = &self.hier;
        let start_dir = Self::dir_of(&self.cfg.start);
        let has = *self
            .has_cpu_stat_local
            .get_or_insert_with(|| read_cpu_stat_local(hier, start_dir).is_some());
        if !has {
            return;
        }
        let want = if self.cfg.full_detail {
            vec![true; snapshot.groups.len()]
        } else {
            under_throttling(snapshot, rates)
        };
        for (i, g) in snapshot.groups.iter_mut().enumerate() {
            let is_inspected = self.inspected.as_ref() == Some(&g.path);
            if !(want[i] || is_inspected) {
                continue;
            }
            // read with the group's detail already (every group in
            // --json), or by its inspection: not a second time in the
            // same refresh
            let read_with = match (&g.detail, inspection) {
                (Some(d), _) => Some(&**d),
                (None, Some(f)) if is_inspected => Some(&f.detail),
                (None, _) => None,
            };
            g.hot.throttled_local_usec = match read_with {
                Some(d) => d
                    .keyed
                    .cpu_stat_local
                    .as_ref()
                    .and_then(|k| k.get("throttled_usec")),
                None => read_cpu_stat_local(&self.hier, Self::dir_of(&g.path))
                    .and_then(|l| l.throttled_usec),
            };
            if let Some(r) = rates.get_mut(i) {
                r.throttled_local_pct = self.rater.local_pct(g, snapshot.at);
            }
        }
    }

    /// One refresh at monotonic time `at` (from the collector's start).
    pub fn refresh(&mut self, at: Duration) -> Refresh {
        self.refresh_with(|| at)
    }

    /// The priming read at monotonic time `at`: the baseline of the next
    /// refresh's rates, for a run whose first output must have rates
    /// (`-b`, `--json`). The hierarchies those rates come from are walked
    /// as by a refresh (the directories listed, the hot files opened and
    /// kept; the others by [`Collector::read_levels`] after it), but
    /// only the counters rates are computed from are read
    /// (`Scanner::set_priming`;
    /// with cpu.stat.local, memory.events' "since start" baseline and the
    /// machine's CPU times, which are deltas too); no group's detail, no
    /// limits, no inspection. Who each group is is resolved here, once,
    /// so that the units' descriptions have the interval to come in.
    /// The next refresh reads every file once, most through the
    /// descriptors kept here, and is what is printed.
    pub fn prime(&mut self, at: Duration) {
        self.prime_with(|| at);
    }

    /// [`Collector::prime`] now: gives the time since `start` at which
    /// the counters were read (after the walk), from which the first
    /// interval counts.
    pub fn prime_timed(&mut self, start: Instant) -> Duration {
        self.prime_with(|| start.elapsed())
    }

    fn prime_with(&mut self, clock: impl FnOnce() -> Duration) -> Duration {
        self.set_priming(true);
        let r = self.refresh_with(clock);
        self.set_priming(false);
        self.unprimed = self.plan.is_some();
        self.primed = self.plan.is_some();
        self.levels_due = true;
        // the merged tree nobody sees (4 MB at 10,000 groups), given back
        // without raising the allocator's mmap threshold for the rest of
        // the run (`model::heap`)
        let Refresh { snapshot, .. } = r;
        crate::model::heap::give_back(snapshot.groups);
        snapshot.at
    }

    /// After [`Collector::prime`]: walks the hierarchies the priming read
    /// left alone (as [`Collector::walk_unprimed`]) and reads every figure
    /// no rate is computed from (memory, PIDs, state, cgroup.events: the
    /// first read of most files, the costly one), every hierarchy side by
    /// side ([`Scanner::read_levels`]). The next refresh then reads only
    /// the rate counters, a pread of each kept descriptor, and shows the
    /// levels read here (a group found anew or made again since is read
    /// whole). `batch` calls it within the first interval, so that what
    /// follows the interval is those preads and the output: the levels
    /// are then read less than an interval before they are printed. Once
    /// after a priming read; nothing otherwise.
    pub fn read_levels(&mut self) {
        if !std::mem::take(&mut self.levels_due) {
            return;
        }
        let unprimed = std::mem::take(&mut self.unprimed);
        let plan = self.plan;
        let walk: Vec<bool> = std::iter::once(false)
            .chain(
                self.others
                    .iter()
                    .map(|(id, _)| unprimed && plan.is_some_and(|p| !reads_rates(&p, *id))),
            )
            .collect();
        let mut scanners: Vec<&mut Scanner> = std::iter::once(&mut self.scanner)
            .chain(self.others.iter_mut().map(|(_, s)| s))
            .collect();
        // not the next refresh's cost, as the walks' (its cost is what it
        // reads after the interval)
        let _ = in_parallel(
            &mut scanners,
            true,
            |s, walk| {
                if walk {
                    let _ = s.prepare();
                }
                s.read_levels();
            },
            |k| walk[k],
        );
    }

    /// After [`Collector::prime`]: walks the hierarchies the priming read
    /// left alone (no rate is computed from their files: v1 memory, pids,
    /// freezer, those listed only), listing their directories and opening
    /// their files as their first scan would, so that the printed refresh
    /// only reads ([`Collector::read_levels`] does it too, and reads the
    /// levels; `batch` calls that). Without either, the next refresh
    /// walks them.
    pub fn walk_unprimed(&mut self) {
        let Some(plan) = self.plan.filter(|_| std::mem::take(&mut self.unprimed)) else {
            return;
        };
        let mut scanners: Vec<&mut Scanner> = (self.others.iter_mut())
            .filter(|(id, _)| !reads_rates(&plan, *id))
            .map(|(_, s)| s)
            .collect();
        // what the walks cost is not the next refresh's (its cost is its
        // reads, as after any refresh that found nothing to list)
        let _ = in_parallel(
            &mut scanners,
            PRIMING_WALKS_SIDE_BY_SIDE,
            |s, ()| s.prepare(),
            |_| (),
        );
    }

    fn set_keep_levels(&mut self, on: bool) {
        self.scanner.set_keep_levels(on);
        for (_, s) in &mut self.others {
            s.set_keep_levels(on);
        }
    }

    fn set_priming(&mut self, on: bool) {
        self.priming = on;
        self.scanner.set_priming(on);
        for (_, s) in &mut self.others {
            s.set_priming(on);
        }
    }

    /// One refresh, its time taken by `clock` after the walk, when the
    /// counters are about to be read (see [`Scanner::scan_stamped`]).
    pub fn refresh_with(&mut self, clock: impl FnOnce() -> Duration) -> Refresh {
        if let Some(l) = &mut self.laps {
            l.steps.clear();
            l.last = thread_cpu_time();
        }
        // the TUI's first refresh keeps its levels for the second, the
        // first rates, which then reads the rate counters (where they say
        // the group is the same one) and shows the levels on screen
        let keep_levels = self.deferred && self.refreshes == 0;
        // the age of the levels kept counts from before the scan that
        // reads them: a first scan of seconds (every file opened) leaves
        // none that is shown older than `LEVELS_KEPT_FOR`
        let scan_start = keep_levels.then(Instant::now);
        if keep_levels {
            self.set_keep_levels(true);
        } else if self
            .levels_kept
            .take()
            .is_some_and(|t| t.elapsed() > LEVELS_KEPT_FOR)
        {
            // not the second refresh 200 ms after the first (paused): the
            // levels kept are too old to show
            self.scanner.clear_levels();
            for (_, s) in &mut self.others {
                s.clear_levels();
            }
        }
        let (mut groups, mut cost, at) = if let Some(plan) = self.plan {
            self.scan_all(&plan, clock)
        } else {
            let r = self.scanner.scan_stamped(clock);
            if self.last {
                self.scanner.release();
            }
            self.lap("scan");
            r
        };
        if keep_levels {
            self.set_keep_levels(false);
            self.levels_kept = scan_start;
        }
        if self.refreshes % u64::from(self.cfg.scan.rewalk_every.max(1)) == 0 {
            // the stacked devices (dm, md) anew at the walk's pace: each
            // group's IO sum counts their IO once (`rates::Stacking`), and the
            // root's uncounted-disk check leaves them to the disks below
            self.rater
                .set_stacking(crate::model::tree::rates::Stacking(devices::stacking(
                    Path::new("/sys/block"),
                )));
        }
        self.complete_root(&mut groups, &mut cost);
        if cost.walked {
            self.devices = Arc::new(devices::list(&self.cfg.sys_dev_block));
            self.lap("devices");
        }
        let mut groups = self.rebase(groups);
        if let Some(r) = self.identities.as_mut() {
            // the first frame first: names fill in from the second refresh
            if !(self.deferred && self.refreshes == 0) {
                // who owns each new group's directory, or one above it:
                // a delegated user's groups are not named from the
                // system's files, nor vouched for (no runtime command)
                // asked in every hierarchy that holds the group (on a v1
                // or hybrid host a group may be in a v1 hierarchy alone,
                // delegated there); one not known to be root's is not
                // named from them either
                let mut each: Vec<(Option<HierId>, Arc<Hier>)> = Vec::new();
                if self.hiers.layout.v1.is_empty() {
                    each.push((None, Arc::clone(&self.hier)));
                } else {
                    if let Some(h) = self.hiers.get(HierId::V2) {
                        each.push((Some(HierId::V2), Arc::clone(h)));
                    }
                    for (id, _, h) in self.hiers.v1() {
                        each.push((Some(id), Arc::clone(h)));
                    }
                }
                let above: Vec<std::cell::OnceCell<u32>> =
                    each.iter().map(|_| std::cell::OnceCell::new()).collect();
                let memo = std::cell::RefCell::new(vec![HashMap::new(); each.len()]);
                r.attach_owned(&mut groups, cost.walked, &|g| {
                    let mut memo = memo.borrow_mut();
                    let asked = each.iter().zip(&above).zip(memo.iter_mut()).filter_map(
                        |(((id, h), above), memo)| {
                            // the merge says which hierarchies hold it
                            if let Some(id) = id {
                                if !g.hot.v1.held_in.is_empty() && !g.hot.v1.held_in.contains(*id) {
                                    return None;
                                }
                            }
                            let above = *above.get_or_init(|| safety::above_view_owner(h));
                            Some(safety::delegated_owner(h, &g.path, above, memo))
                        },
                    );
                    safety::owner_across(asked)
                });
            }
        }
        let mut events_seed = None;
        if self.refreshes == 0 {
            // baseline of memory.events for "changes since start": the
            // groups there at start, where anything asks for it (not a
            // `-b` run, which reads no memory.events: a copy of every
            // path for nothing, 1.5 MB at 10,000 groups)
            if self.events_baseline || self.cfg.full_detail {
                self.first_paths = Some(groups.iter().map(|g| (g.path.clone(), g.inode)).collect());
            }
            // memory.events is cgroup2's: where memory is a v1 controller
            // (a hybrid host) no group has one, and each open would fail
            let layout = &self.hiers.layout;
            let here =
                layout.primary() == Some(HierId::V2) && layout.holder("memory") == Some(HierId::V2);
            let baseline = if self.events_baseline && here {
                &groups[..]
            } else {
                &[]
            };
            for g in baseline {
                if let Ok(t) = self.hier.read_text(&hier::file_rel(
                    &g.path,
                    crate::cgroupfs::files::MEMORY_EVENTS,
                )) {
                    self.events_base
                        .insert((g.path.clone(), g.inode), MemoryEvents::parse(&t));
                }
            }
            self.lap("baseline");
            if self.event_seed {
                events_seed = Some(Arc::new(self.read_seed(&groups, at)));
                self.lap("seed");
            }
        }
        let mut events_since_start = HashMap::new();
        if self.cfg.full_detail && !self.priming {
            // the scanners first: the export reading keeps what they leave
            let export_kept = std::mem::take(&mut self.export_kept);
            let kept = Some(&export_kept);
            if self.export_reading {
                let room = self.budget().saturating_sub(self.kept_by_scanners());
                export_kept.begin(room);
            }
            for g in &mut groups {
                let dir = Self::dir_of(&g.path);
                if self.export_reading {
                    export_kept.group(g.inode);
                }
                let d = if self.export_reading && self.hiers.layout.v1.is_empty() {
                    read_export(&self.hier, dir, kept)
                } else if self.export_reading && self.plan.is_some() {
                    // the scan listed every hierarchy: where the group is
                    read_export_held(&self.hiers, dir, g.hot.v1.held_in, kept)
                } else if self.export_reading {
                    read_export_layout(&self.hiers, dir, kept)
                } else {
                    read_detail_layout(&self.hiers, dir, false)
                };
                if let Some(ev) = d.memory_events {
                    let s = self.since_start(&g.path, g.inode, ev);
                    events_since_start.insert(g.path.clone(), s);
                }
                g.detail = Some(Box::new(d));
            }
            if self.export_reading {
                // the files of groups gone are closed
                let n = export_kept.end();
                if let Some((pool, slot)) = &self.kept_pool {
                    pool.publish(*slot, n);
                }
            }
            self.export_kept = export_kept;
            self.lap("export");
        }
        let limits = if self.priming {
            Vec::new()
        } else {
            self.grade_limits(&groups, cost.walked)
        };
        self.lap("limits");
        let mut snapshot = Snapshot { at, groups, cost };
        // a priming read's rates would all be none, and nobody sees them
        let mut step = if self.priming {
            Rated::none()
        } else {
            self.rater.rates(&snapshot)
        };
        if self.plan.is_some() {
            self.no_rate_across_a_source_change(&snapshot, &mut step.rates);
        }
        self.lap("rates");
        let every = u64::from(self.cfg.scan.rewalk_every.max(1));
        if self.refreshes % every == 0 || self.inspected.is_none() {
            // at the pace of the periodic walk, the inspected files are
            // opened anew: a permission changed since shows in the raw
            // editor (a kept file's bits are those of its open); and none
            // is held once no group is inspected (the detail closed)
            self.close_inspection_files();
        }
        let inspection = self.inspected.clone().filter(|_| !self.priming).map(|p| {
            let inode = snapshot.find(&p).map(|g| g.inode);
            self.inspect(&p, inode, Some(&snapshot), at.as_secs_f64())
        });
        self.lap("inspection");
        self.read_cpu_stat_local(&mut snapshot, &mut step.rates, inspection.as_ref());
        self.lap("local");
        // the baseline of the next rates; who throttles (a priming read
        // gives the baseline alone: its refresh has no rate list)
        let (rates, throttling) = if self.priming {
            self.rater.keep_counters(&snapshot);
            (Vec::new(), Vec::new())
        } else {
            self.rater.keep(&snapshot, step)
        };
        self.lap("keep");
        let n = self.refreshes;
        self.refreshes += 1;
        let machine = if self.deferred && n == 0 {
            None
        } else {
            self.read_machine()
        };
        self.lap("machine");
        if self.deferred && n == 1 {
            // the first rates are out: the next walk sets the watches
            self.deferred = false;
            self.set_watching(true);
        }
        Refresh {
            snapshot,
            rates,
            throttling,
            inspection,
            devices: Arc::clone(&self.devices),
            kept_fds: self.kept(),
            events_since_start,
            protected: None,
            machine,
            limits,
            events_seed,
        }
    }

    /// What the first refresh read of the event counters, for the
    /// watcher ([`Collector::set_event_seed`]): cgroup.events from the
    /// groups' figures; memory.events (cgroup2's memory controller) as
    /// the "since start" baseline read it, else read now; v1's oom_kill
    /// read now. Paths are the view's, as the watcher's.
    fn read_seed(&self, groups: &[GroupSample], at: Duration) -> super::events::Seed {
        let layout = &self.hiers.layout;
        let mut seed = super::events::Seed {
            at,
            listed: groups.iter().map(|g| g.path.clone()).collect(),
            cgroup: groups
                .iter()
                .filter_map(|g| Some((g.path.clone(), g.hot.events?)))
                .collect(),
            ..Default::default()
        };
        if layout.primary() == Some(HierId::V2) && layout.holder("memory") == Some(HierId::V2) {
            for g in groups {
                let ev = self
                    .events_base
                    .get(&(g.path.clone(), g.inode))
                    .copied()
                    .or_else(|| {
                        self.hier
                            .read_text(&hier::file_rel(
                                &g.path,
                                crate::cgroupfs::files::MEMORY_EVENTS,
                            ))
                            .ok()
                            .map(|t| MemoryEvents::parse(&t))
                    });
                if let Some(ev) = ev {
                    seed.memory.push((g.path.clone(), ev));
                }
            }
        }
        if let Some((HierId::V1(_), h)) = self.hiers.holder("memory") {
            for g in groups {
                let kills = h
                    .read_text(&hier::file_rel(
                        &g.path,
                        crate::cgroupfs::v1_limits::files::MEMORY_OOM_CONTROL,
                    ))
                    .ok()
                    .and_then(|t| crate::cgroupfs::v1_limits::OomControl::parse(&t).ok())
                    .and_then(|o| o.oom_kill);
                if let Some(k) = kills {
                    seed.v1_kills.push((g.path.clone(), k));
                }
            }
        }
        seed
    }
}

/// Whether a priming read reads hierarchy `id` ([`Collector::prime`]):
/// the primary (every group's inode, which a rate's two samples must
/// share), cgroup2 (the figures a v1 holder lacks come from it), and the
/// holders of the counters rates are computed from (CPU time, throttling,
/// IO).
fn reads_rates(plan: &Plan, id: HierId) -> bool {
    id == plan.primary
        || id == HierId::V2
        || [plan.cpu_usage, plan.cpu_throttle, plan.io].contains(&Some(id))
}

/// Runs `work` on every scanner, with `input(k)` for the k-th, and gives
/// the results in the scanners' order, whatever order they ran in (the
/// merge that follows sees the same as one after the other). With
/// `parallel`, up to [`SCAN_THREADS`] threads (this one and helpers, no
/// more than the CPUs) take the next scanner as each is done: the first
/// refresh's reads are system calls in the scanners' own hierarchies, and
/// on 2 CPUs two hierarchies are read at once. Also gives the CPU time
/// the helper threads spent (this thread's is the caller's to count).
fn in_parallel<I, T: Send>(
    scanners: &mut [&mut Scanner],
    parallel: bool,
    work: impl Fn(&mut Scanner, I) -> T + Sync,
    input: impl Fn(usize) -> I + Sync,
) -> (Vec<T>, Duration) {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(SCAN_THREADS)
        .min(scanners.len());
    if !parallel || threads < 2 {
        let out = (scanners.iter_mut().enumerate())
            .map(|(k, s)| work(s, input(k)))
            .collect();
        return (out, Duration::ZERO);
    }
    let queue = std::sync::Mutex::new(scanners.iter_mut().enumerate());
    let next = || queue.lock().ok().and_then(|mut q| q.next());
    let run = || {
        let mut done = Vec::new();
        while let Some((k, s)) = next() {
            done.push((k, work(s, input(k))));
        }
        done
    };
    let (mut all, helper_cpu) = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || {
                        let cpu0 = thread_cpu_time();
                        let done = run();
                        (done, thread_cpu_time().saturating_sub(cpu0))
                    })
                    .ok()
            })
            .collect();
        let mut all = run();
        let mut cpu = Duration::ZERO;
        for h in helpers {
            // a helper that panicked: its scanners' panic goes on here
            let (done, c) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            all.extend(done);
            cpu += c;
        }
        (all, cpu)
    });
    all.sort_by_key(|(k, _)| *k);
    (all.into_iter().map(|(_, t)| t).collect(), helper_cpu)
}

/// [`in_parallel`], each result handed to `done` in the scanners' order
/// as soon as it and those before it are there, rather than all at the
/// end: what `done` consumes (a hierarchy's samples, merged) is not held
/// until the last scanner is done. `done` runs in whichever thread
/// finished the result that completed the run, one call at a time. Gives
/// the CPU time the helper threads spent.
fn in_parallel_each<I, T: Send>(
    scanners: &mut [&mut Scanner],
    parallel: bool,
    work: impl Fn(&mut Scanner, I) -> T + Sync,
    input: impl Fn(usize) -> I + Sync,
    done: impl FnMut(usize, T) + Send,
) -> Duration {
    use std::sync::{Mutex, PoisonError};
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(SCAN_THREADS)
        .min(scanners.len());
    let mut done = done;
    if !parallel || threads < 2 {
        for (k, s) in scanners.iter_mut().enumerate() {
            done(k, work(s, input(k)));
        }
        return Duration::ZERO;
    }
    let n = scanners.len();
    let queue = Mutex::new(scanners.iter_mut().enumerate());
    let next = || queue.lock().ok().and_then(|mut q| q.next());
    // the next result to hand over, the results there before their turn
    let ready = Mutex::new((
        0usize,
        (0..n).map(|_| None).collect::<Vec<Option<T>>>(),
        done,
    ));
    let run = || {
        while let Some((k, s)) = next() {
            let t = work(s, input(k));
            let mut r = ready.lock().unwrap_or_else(PoisonError::into_inner);
            let (at, slots, done) = &mut *r;
            slots[k] = Some(t);
            while let Some(t) = slots.get_mut(*at).and_then(Option::take) {
                done(*at, t);
                *at += 1;
            }
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || {
                        let cpu0 = thread_cpu_time();
                        run();
                        thread_cpu_time().saturating_sub(cpu0)
                    })
                    .ok()
            })
            .collect();
        run();
        let mut cpu = Duration::ZERO;
        for h in helpers {
            // a helper that panicked: its scanners' panic goes on here
            cpu += h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        cpu
    })
}

/// `f` of every item, in the items' order, the items split in even runs
/// between up to [`SCAN_THREADS`] threads (no more than the CPUs; one
/// for fewer than 64 items); and the CPU time of the helper threads.
fn par_map<A: Sync, T: Send>(items: &[A], f: impl Fn(&A) -> T + Sync) -> (Vec<T>, Duration) {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(SCAN_THREADS)
        .min(items.len() / 64)
        .max(1);
    if threads < 2 {
        return (items.iter().map(f).collect(), Duration::ZERO);
    }
    let per = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let f = &f;
        let mut runs = items.chunks(per);
        let first = runs.next().unwrap_or(&[]);
        let helpers: Vec<_> = runs
            .map(|run| {
                let h = std::thread::Builder::new().spawn_scoped(scope, move || {
                    let cpu0 = thread_cpu_time();
                    let out = run.iter().map(f).collect::<Vec<T>>();
                    (out, thread_cpu_time().saturating_sub(cpu0))
                });
                (run, h)
            })
            .collect();
        let mut out: Vec<T> = first.iter().map(f).collect();
        let mut cpu = Duration::ZERO;
        for (run, h) in helpers {
            match h {
                Ok(h) => {
                    let (part, c) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    out.extend(part);
                    cpu += c;
                }
                // no thread to be had: this one does it
                Err(_) => out.extend(run.iter().map(f)),
            }
        }
        (out, cpu)
    })
}

/// The most threads that scan the hierarchies at once on the first
/// refresh ([`in_parallel`]).
const SCAN_THREADS: usize = 4;

/// Whether a priming read's walks of several hierarchies (listing every
/// directory, opening the rate counters: [`Scanner::prepare`]) go side
/// by side, as the first refresh's walks and every first read do. They
/// do not: measured on the hybrid host (2 CPUs, 1,001 groups in each of
/// 7 hierarchies, `cgtop -b -n 1 -d 0.1` run at real-time priority so
/// that other load did not count), the priming walk of the 4 hierarchies
/// the rates come from took 57-68 ms on 2 threads, each walk 3-4 times
/// its own CPU time, and 35-36 ms one after another on one thread, at
/// the same CPU time: two such walks at once wait on each other in the
/// kernel (directory listing and file opens on kernfs). The reads that
/// follow, a pread of each kept descriptor, do gain from 2 threads: the
/// printed refresh's 17-18 ms against 30 ms on one. The TUI's first
/// refresh (every hierarchy, every file) gains too: its first rates came
/// 265-331 ms after the start with its walks side by side, 331-396 ms
/// with them one after another (`cargo bench --bench startup`, 2 runs of
/// 5 rounds each, real-time priority).
const PRIMING_WALKS_SIDE_BY_SIDE: bool = false;

/// How much of /proc/diskstats is read: a line a block device, about 100
/// bytes, and loop devices (major 7) come before the disks, so 64 KiB
/// ended before `sda` on a host with some 1,000 loop devices (a CI runner,
/// snaps); 4 MiB is some 40,000 devices.
const DISKSTATS_CAP: u64 = 4 << 20;

/// The whole lines of a /proc text of at most `cap` bytes (a line cut at
/// the cap is left out, never read as a shorter number); `None` when
/// absent or unreadable.
fn read_lines(path: &Path, cap: u64) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut b = Vec::new();
    f.take(cap + 1).read_to_end(&mut b).ok()?;
    if b.len() as u64 > cap {
        let end = b.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
        b.truncate(end);
    }
    String::from_utf8(b).ok()
}

/// A /proc text of at most 64 KiB; `None` when absent or unreadable.
pub(crate) fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut s = String::new();
    f.take(64 << 10).read_to_string(&mut s).ok()?;
    Some(s)
}

/// The machine's memory, pressure and writeback from a /proc directory:
/// meminfo, pressure/{cpu,memory,io}, sys/vm/dirty_* and vmstat. A file
/// that is absent or unreadable is `None`; at most 64 KiB of each is read
/// (vmstat, the largest, is a few KiB).
pub fn read_machine_load(proc_dir: &Path) -> MachineLoad {
    let text = |rel: &str| read_small(&proc_dir.join(rel));
    let meminfo = text("meminfo").unwrap_or_default();
    let psi = |rel: &str| text(rel).and_then(|t| crate::cgroupfs::Pressure::parse(&t).ok());
    MachineLoad {
        mem_total: meminfo_bytes(&meminfo, "MemTotal"),
        mem_available: meminfo_bytes(&meminfo, "MemAvailable"),
        cpu_busy: None,
        cpu_pressure: psi("pressure/cpu"),
        memory_pressure: psi("pressure/memory"),
        io_pressure: psi("pressure/io"),
        writeback: Some(super::writeback::read_host_writeback(proc_dir, &meminfo)),
    }
}

/// Rates for every group of `cur`, matching `prev` by path (both sorted).
pub fn rates_between(prev: &Snapshot, cur: &Snapshot) -> Vec<GroupRates> {
    rates_within(&Baseline::of(prev), cur, None).0
}

/// How many CPUs the machine has online (/sys/devices/system/cpu/online,
/// e.g. "0-3,6"): the root group's cpu.stat counts all of them, whatever
/// this process's affinity or cpu.max allow it, so this and not
/// `available_parallelism` bounds a CPU figure.
pub fn online_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| count_cpu_list(&t))
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .map(std::num::NonZero::get)
        })
        .unwrap_or(1)
}

/// The number of CPUs in a kernel CPU list ("0-3,6" is 5); `None` for
/// text that is not one.
fn count_cpu_list(text: &str) -> Option<usize> {
    let mut n = 0usize;
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        n += b.checked_sub(a)? + 1;
    }
    (n > 0).then_some(n)
}

/// The collector's time origin, for a collector run outside [`spawn`]
/// (batch mode).
pub fn clock_start() -> Instant {
    Instant::now()
}

/// Thread CPU time (user + system) of the calling thread.
pub fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Runs the collector in a thread: a refresh every `interval` (or at
/// once on `RefreshNow`), an inspection at once when the selection moves.
/// Ends when told to stop or when the receiver of `tx` is gone.
pub fn spawn<M: From<Collected> + Send + 'static>(
    cfg: CollectorConfig,
    interval: Duration,
    tx: Sender<M>,
    rx: Receiver<Command>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_with(Collector::new(cfg), interval, tx, rx)
}

/// [`spawn`] with a collector made by the caller.
pub fn spawn_with<M: From<Collected> + Send + 'static>(
    c: Collector,
    interval: Duration,
    tx: Sender<M>,
    rx: Receiver<Command>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_from(c, Instant::now(), interval, tx, rx)
}

/// The second refresh comes this soon after the first, whatever the
/// interval (then every interval): CPU and IO are rates, which need two
/// readings, and the first screen should not show `-` for a whole interval.
pub const FIRST_INTERVAL: Duration = Duration::from_millis(200);

/// When the refresh after one that began at `began` and read its rate
/// counters at `stamped` (after its walk: its snapshot's `at`) is due.
/// After the first, [`FIRST_INTERVAL`] (the interval where shorter) after
/// it began, as the first rates are what a new screen waits for; but at
/// least half that after the stamp, so that a long first walk (a large
/// hybrid host, a loaded one) does not leave the first rates a change
/// over a few milliseconds. The rates divide by the time between the two
/// reads, whatever it is: a shorter window is noisier, never wrong.
/// (Counted whole from the stamp, the first rates came ~100 ms later on
/// this host's 1,000 groups a hierarchy: 290 -> 400 ms, BENCHMARKS.)
/// After any other, the interval after it began.
#[must_use]
pub fn next_due(first: bool, began: Instant, stamped: Instant, interval: Duration) -> Instant {
    if first {
        let first = interval.min(FIRST_INTERVAL);
        (began + first).max(stamped + first / 2)
    } else {
        began + interval
    }
}

/// The TUI's first refresh's levels are shown by the second (which then
/// reads only the rate counters) if it comes within this time; a later
/// one (paused, a slow host) reads every file.
const LEVELS_KEPT_FOR: Duration = Duration::from_secs(1);

/// [`spawn_with`] on the clock started at `start` (shared with the event
/// watcher, whose events are stamped on the same clock). The first
/// refresh is made at once and sent as soon as it is read; the second
/// follows [`FIRST_INTERVAL`] after the first began, and at least half
/// that after it read its rate counters ([`next_due`]); the lockout guard's /proc reading, which the caller
/// made at start, comes with the third and later ones.
pub fn spawn_from<M: From<Collected> + Send + 'static>(
    mut c: Collector,
    start: Instant,
    interval: Duration,
    tx: Sender<M>,
    rx: Receiver<Command>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || {
            let mut interval = interval;
            let mut paused = false;
            let mut next = Instant::now();
            let mut made = 0u64;
            // the first frame: what the first screen shows, read first
            if let Some(p) = c.first_look(start) {
                if tx.send(M::from(Collected::Partial(Box::new(p)))).is_err() {
                    return;
                }
            }
            loop {
                if !paused && Instant::now() >= next {
                    let began = Instant::now();
                    let mut r = c.refresh_timed(start);
                    // the lockout guard's /proc reading from the third on:
                    // the caller made one at start, and the first rates do
                    // not wait for another
                    if made >= 2 {
                        r.protected = Some(super::safety::discover(c.hier.path()));
                    }
                    let stamped = start + r.snapshot.at;
                    if tx.send(M::from(Collected::Refresh(Box::new(r)))).is_err() {
                        return;
                    }
                    next = next_due(made == 0, began, stamped, interval);
                    made += 1;
                }
                let wait = if paused {
                    Duration::from_secs(3600)
                } else {
                    next.saturating_duration_since(Instant::now())
                };
                let mut cmd = match rx.recv_timeout(wait) {
                    Ok(cmd) => cmd,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                };
                // coalesce a burst of commands (arrow key held down)
                let mut inspect_changed = false;
                loop {
                    match cmd {
                        Command::Stop => return,
                        Command::Inspect(f) => {
                            c.set_inspected(f);
                            inspect_changed = true;
                        }
                        Command::SetInterval(d) => {
                            next = next.checked_sub(interval).unwrap_or(next) + d;
                            interval = d;
                        }
                        Command::Pause(p) => paused = p,
                        Command::Extras(x) => {
                            c.set_extras(x);
                            next = Instant::now();
                        }
                        Command::RefreshNow => {
                            c.invalidate();
                            next = Instant::now();
                        }
                        Command::RenewIdentity(g) => {
                            c.renew_identity(g);
                            next = Instant::now();
                        }
                        Command::FindProcess(q) => {
                            let f = c.find_processes(&q);
                            if tx.send(M::from(Collected::Found(Box::new(f)))).is_err() {
                                return;
                            }
                        }
                    }
                    match rx.try_recv() {
                        Ok(more) => cmd = more,
                        Err(_) => break,
                    }
                }
                if inspect_changed && next > Instant::now() {
                    if let Some(p) = c.inspected.clone() {
                        let f = c.read_inspection(&p, None, start.elapsed().as_secs_f64());
                        if tx
                            .send(M::from(Collected::Inspection(Box::new(f))))
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        })
}

#[cfg(test)]
mod tests {
    /// A host with 2,000 loop devices: its disk's line, after theirs, is
    /// read, and a line cut at the cap is left out whole.
    #[test]
    fn diskstats_is_read_past_the_loop_devices_and_whole_lines_only() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("diskstats");
        let mut text = String::new();
        for i in 0..2000 {
            text.push_str(&format!(
                "   7 {i:7} loop{i} 1234 0 5678 90 0 0 0 0 0 40 90 0 0 0 0 0 0\n"
            ));
        }
        text.push_str("   8       0 sda 4242 0 5678 90 4343 0 0 0 0 40 90 0 0 0 0 0 0\n");
        std::fs::write(&p, &text).unwrap();
        let read = super::read_lines(&p, super::DISKSTATS_CAP).unwrap();
        assert!(read.ends_with(" sda 4242 0 5678 90 4343 0 0 0 0 40 90 0 0 0 0 0 0\n"));
        // cut inside sda's reads count: no line of sda at all
        let cap = (text.len() - 60) as u64;
        let read = super::read_lines(&p, cap).unwrap();
        assert!(!read.contains("sda"), "{}", &read[read.len() - 80..]);
        assert!(read.ends_with('\n'));
    }

    use super::{count_cpu_list, Collector, CollectorConfig};
    use crate::model::GroupPath;
    use crate::source::scan::ScanConfig;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    fn collector(root: &Path, max_kept: usize) -> Collector {
        let mut c = Collector::new(CollectorConfig {
            root: root.to_path_buf(),
            start: GroupPath::root(),
            scan: ScanConfig {
                max_kept,
                ..ScanConfig::default()
            },
            full_detail: false,
            sys_dev_block: fixture("sys-dev-block"),
        });
        c.set_watching(false);
        c
    }

    #[test]
    fn the_scanners_leave_the_inspections_descriptors_their_room() {
        // the inspected group's kept files are held while the scanners
        // walk: a walk that finds more hot files than the budget leaves
        // keeps no more than the budget less the inspection's, so the sum
        // never passes the budget into the reserve
        const GROUP: &str = "system.slice/system-getty.slice/getty@tty1.service";
        let t = tempfile::tempdir().unwrap();
        crate::source::testing::copy_tree(&fixture("pure-v2-systemd"), t.path());
        let mut plain = collector(t.path(), ScanConfig::default().max_kept);
        plain.refresh(Duration::ZERO);
        plain.refresh(Duration::from_secs(1));
        let budget = plain.kept_by_scanners() + 64;
        let mut c = collector(t.path(), budget);
        c.set_inspected(Some(GroupPath::new(GROUP)));
        c.refresh(Duration::ZERO);
        c.refresh(Duration::from_secs(1));
        let held = c.inspect_kept.len();
        assert!(held > 0, "the inspection keeps its files");
        // groups made since, with more hot files than the budget leaves
        for i in 0..40 {
            crate::source::testing::copy_tree(
                &t.path().join(GROUP),
                &t.path().join(format!("system.slice/extra-{i}.service")),
            );
        }
        c.invalidate();
        let r = c.refresh(Duration::from_secs(2));
        assert!(r.snapshot.cost.fd_limited, "the budget is reached");
        assert!(
            c.kept_by_scanners() + held <= budget,
            "{} kept by the scanners beside the inspection's {held}, budget {budget}",
            c.kept_by_scanners()
        );
        assert!(r.kept_fds <= budget, "{} kept in all", r.kept_fds);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,6"), Some(5));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
    }
}
