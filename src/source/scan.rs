//! The scanner: lists the groups and reads the cheap per-group counters on
//! every refresh, as cheaply as the kernel allows.
//!
//! Cost model (measured, see BENCHMARKS.md): re-reading a kept descriptor
//! with `pread(fd, buf, n, 0)` costs a fifth to a tenth of open/read/close,
//! and kernfs regenerates the text at offset 0. So the scanner keeps the hot
//! files open, up to a budget: each kept file pins about 5 KB of kernel
//! memory once read (its seq_file's page-sized buffer, struct file, ...),
//! so the budget is the smallest of `--max-kept-fds`, 1/256 of RAM's worth,
//! and RLIMIT_NOFILE less a reserve, decided once at start-up
//! ([`fd_budget`], which raises the limit) and passed in as
//! [`ScanConfig::max_kept`]; the rest are read with open/read/close.
//! It re-lists directories only when something may have changed:
//!
//! - the start group's `cgroup.stat` `nr_descendants` changed (one read), or
//! - a group vanished this tick (ENOENT/ENODEV on one of its files): on
//!   the next refresh, or at once, in the same refresh, when its
//!   directory is there again under another inode (rmdir + mkdir under
//!   the same name, as `systemctl restart` does, which moves no count: a
//!   kept descriptor of the old group reads ENODEV, a reopened file has
//!   another inode), so that the new group is never missing for a
//!   refresh, or
//! - every `rewalk_every` ticks as a safety net: a renamed group, a
//!   cgroup.type changed by another tool, or a tree without a kernel behind
//!   it (a fixture), where a create and a remove in the same interval leave
//!   nr_descendants unchanged and nothing fails.
//!
//! After a group came or went only the directories whose own
//! nr_descendants differs from the number of groups listed below them are
//! listed again, top down (`Scanner::list_changed`): on a busy host a
//! few, where a full walk costs 5-13 steady scans. The safety net and a
//! walk after cgtop's own write list everything.

use super::hier::{self, FsError, Hier};
use crate::cgroupfs::v1;
use crate::cgroupfs::{
    self, files, CgroupEvents, CgroupStat, CgroupType, CpuStat, IoStat, Limit, Pressure,
};
use crate::model::tree::path::parent_bytes;
use crate::model::tree::snapshot::fill_memory_limits;
use crate::model::{Errno, GroupPath, GroupSample, HotExtras, HotStats, ScanCost, Unreadable};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most inotify watches one scanner adds (one per group directory
/// of a v1 hierarchy), and at most 1/64 of fs.inotify.max_user_watches
/// ([`watch_cap`]). Watches are counted per user against that limit
/// (8,192 on kernels before 5.11; since, a share of RAM), and cgtop runs
/// as root: a delegated user making directories without limit (v1 has no
/// cgroup.max.descendants) would spend the watches PID 1 and every root
/// daemon share. The groups beyond are watched by their link count
/// (within the descriptor budget), or seen by the periodic walk.
pub const MAX_WATCHES: usize = 2048;

/// This scanner's cap of inotify watches: [`MAX_WATCHES`], less where
/// 1/64 of fs.inotify.max_user_watches is less.
fn watch_cap() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .map_or(MAX_WATCHES, |m| (m / 64).min(MAX_WATCHES))
}

/// Scanner settings.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// Deepest level listed below the start group (`--depth`).
    pub max_depth: Option<usize>,
    /// How many descriptors may be kept open at once: the budget the
    /// program decided at start-up ([`fd_budget`]). The scanner also stays
    /// [`FD_RESERVE`] below RLIMIT_NOFILE's soft limit as it finds it (it
    /// never changes the limit).
    pub max_kept: usize,
    /// Re-list directories at least this often (in refreshes).
    pub rewalk_every: u32,
}

impl Default for ScanConfig {
    fn default() -> Self {
        Self {
            max_depth: None,
            max_kept: 65_536,
            // adds and removes are seen within 1-2 refreshes without it
            // (nr_descendants, ENODEV); a full walk costs 5-7 steady scans
            // (BENCHMARKS.md), so every 30th keeps it under 0.25 of one
            rewalk_every: 30,
        }
    }
}

/// The files read for every group on every refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hot {
    CpuStat,
    MemoryCurrent,
    IoStat,
    PidsCurrent,
    Events,
    Procs,
    // read only while a column shows them (`HotExtras`)
    MemoryMax,
    SwapCurrent,
    CpuPressure,
    MemoryPressure,
    IoPressure,
    // cgroup v1's counters (`cgroupfs::v1`)
    CpuacctUsage,
    CpuacctUser,
    CpuacctSys,
    /// cpuacct.stat: the user/system split where the two above are absent.
    CpuacctStat,
    /// v1 cpu.stat: throttling only.
    V1CpuStat,
    MemoryUsage,
    /// memory.limit_in_bytes (for MEM%, with `memory_max`).
    MemoryLimit,
    /// memory.memsw.usage_in_bytes (for SWAP, with `swap`).
    MemswUsage,
    BlkioBytesRecursive,
    BlkioIosRecursive,
    /// The group's own IO: read only where the `_recursive` files are not.
    BlkioBytes,
    BlkioIos,
    FreezerState,
}

impl Hot {
    /// Whether the scanner reads this file with these extras asked for.
    fn wanted(self, x: HotExtras) -> bool {
        match self {
            Self::MemoryMax | Self::MemoryLimit => x.memory_max,
            Self::SwapCurrent | Self::MemswUsage => x.swap,
            Self::CpuPressure | Self::MemoryPressure | Self::IoPressure => x.pressure,
            _ => true,
        }
    }
}

const HOT: [(Hot, &str); 11] = [
    (Hot::CpuStat, files::CPU_STAT),
    (Hot::MemoryCurrent, files::MEMORY_CURRENT),
    (Hot::IoStat, files::IO_STAT),
    (Hot::PidsCurrent, files::PIDS_CURRENT),
    (Hot::Events, files::EVENTS),
    (Hot::Procs, files::PROCS),
    (Hot::MemoryMax, files::MEMORY_MAX),
    (Hot::SwapCurrent, files::MEMORY_SWAP_CURRENT),
    (Hot::CpuPressure, files::CPU_PRESSURE),
    (Hot::MemoryPressure, files::MEMORY_PRESSURE),
    (Hot::IoPressure, files::IO_PRESSURE),
];

/// The files read for every group of a cgroup v1 hierarchy: those of its
/// controllers are there (a directory's files say which), the rest absent.
/// cgroup.procs only in the primary hierarchy ([`ScanKind::V1`]).
const HOT_V1: [(Hot, &str); 15] = [
    (Hot::CpuacctUsage, v1::files::CPUACCT_USAGE),
    (Hot::CpuacctUser, v1::files::CPUACCT_USAGE_USER),
    (Hot::CpuacctSys, v1::files::CPUACCT_USAGE_SYS),
    (Hot::CpuacctStat, v1::files::CPUACCT_STAT),
    (Hot::V1CpuStat, v1::files::CPU_STAT),
    (Hot::MemoryUsage, v1::files::MEMORY_USAGE),
    (Hot::BlkioBytesRecursive, v1::files::BLKIO_BYTES_RECURSIVE),
    (Hot::BlkioIosRecursive, v1::files::BLKIO_IOS_RECURSIVE),
    (Hot::BlkioBytes, v1::files::BLKIO_BYTES),
    (Hot::BlkioIos, v1::files::BLKIO_IOS),
    (Hot::PidsCurrent, v1::files::PIDS_CURRENT),
    (Hot::FreezerState, v1::files::FREEZER_STATE),
    (Hot::Procs, files::PROCS),
    (Hot::MemoryLimit, v1::files::MEMORY_LIMIT),
    (Hot::MemswUsage, v1::files::MEMSW_USAGE),
];

/// The most files of a table: the handles of an entry.
const MAX_FILES: usize = 15;

/// Bits of the walk's "which files are here" mask: the table's indexes,
/// and cgroup.type.
const TYPE_BIT: usize = MAX_FILES;

type Table = &'static [(Hot, &'static str)];

/// Which kind of hierarchy a scanner reads, and so which files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// cgroup2 (or a fixture laid out like it): [`HOT`].
    V2,
    /// A cgroup v1 hierarchy: [`HOT_V1`]; `procs`: read cgroup.procs
    /// (the primary hierarchy only: the same processes are in every one).
    V1 { procs: bool },
}

impl ScanKind {
    fn table(self) -> Table {
        match self {
            Self::V2 => &HOT,
            Self::V1 { .. } => &HOT_V1,
        }
    }
}

/// The walk's bit for a directory entry, for the files it looks for.
fn file_bit(table: Table, name: &[u8]) -> Option<usize> {
    if name == files::TYPE.as_bytes() {
        return Some(TYPE_BIT);
    }
    table.iter().position(|(_, n)| n.as_bytes() == name)
}

/// The bit of a file kind in a table.
fn bit_of(table: Table, kind: Hot) -> Option<usize> {
    table.iter().position(|(k, _)| *k == kind)
}

#[derive(Debug)]
enum Handle {
    /// The file does not exist (controller off, or the root's missing files).
    Absent,
    /// Kept open, re-read at offset 0.
    Kept(File),
    /// Opened, read and closed each time (over the descriptor budget),
    /// with the file's inode when it was last read: a file by the same
    /// name with another inode belongs to a group made again (a kept
    /// descriptor of a removed group reads ENODEV instead).
    Reopen(Option<u64>),
}

#[derive(Debug)]
struct Entry {
    path: GroupPath,
    /// The group's directory, relative to the hierarchy's root.
    dir: PathBuf,
    inode: u64,
    cgroup_type: Option<CgroupType>,
    handles: [Handle; MAX_FILES],
    /// v1 only: how a group made or removed below is noticed (cgroup2
    /// has cgroup.stat's nr_descendants instead).
    watch: Watch,
}

/// How a v1 scanner notices that a group was made or removed below a
/// directory: v1 has no cgroup.stat.
#[derive(Debug)]
enum Watch {
    None,
    /// An inotify watch for subdirectories made, removed or renamed (mkdir
    /// and rmdir go through the VFS, which notifies): one read of the
    /// scanner's inotify descriptor per refresh, whatever the number of
    /// groups, and no descriptor per group.
    Notify,
    /// Where no watch is to be had (max_user_watches, no /proc): the
    /// directory kept open and the link count it had when listed (kernfs
    /// keeps a directory's st_nlink at 2 + its subdirectories), compared
    /// with one fstat per refresh.
    Links(OwnedFd, u64),
}

/// What one reading pass over the entries found.
struct ReadPass {
    /// The samples, sorted by path.
    out: Vec<GroupSample>,
    /// Some group was gone (its entry is removed).
    gone: bool,
    /// Some gone group's directory is there again under another inode.
    recreated: bool,
}

/// Outcome of reading one file.
enum Read1 {
    Text(usize),
    Absent,
    /// The group is gone (ENOENT/ENODEV).
    Gone,
    /// There, but not read: a FIFO, a symlink, over the cap, EACCES.
    Error(FsError),
}

/// Descriptors the scanner leaves to the rest of the program: the inspection
/// read, /proc, the writer, the terminal, the devices list. Without a
/// reserve, a tree with more hot files than RLIMIT_NOFILE allows would take
/// every descriptor, and then every other open (the reopened hot files
/// included) would fail with EMFILE.
pub const FD_RESERVE: u64 = 256;

/// Kernel memory that one kept, read descriptor of a kernfs file pins: the
/// seq_file buffer (a page, kmalloc-cg-4k, allocated on the first read and
/// kept until close) plus struct file, seq_file and kernfs_open_file.
/// Measured at 4.9 KB on Linux 6.18 (BENCHMARKS.md, "Kernel memory").
pub const KERNEL_BYTES_PER_KEPT: u64 = 5 * 1024;

/// The kept descriptors may pin at most this fraction of RAM (1/256, about
/// 0.4 %): 96 MB on a 24 GB host, which keeps the 5 hot files of 3,800
/// groups; a 64 GB host keeps all of 10,000 groups. The memory is charged
/// to cgtop's own memory cgroup.
pub const KEPT_RAM_SHARE: u64 = 256;

/// The descriptor budget RAM allows (at least 1,024): see
/// [`KEPT_RAM_SHARE`].
pub fn kept_budget_for_memory(mem_total_bytes: u64) -> usize {
    let n = (mem_total_bytes / KEPT_RAM_SHARE / KERNEL_BYTES_PER_KEPT).max(1024);
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// MemTotal from /proc/meminfo, in bytes.
fn mem_total() -> Option<u64> {
    meminfo_bytes("MemTotal:")
}

/// SwapTotal from /proc/meminfo, in bytes (0: no swap on the host).
pub fn swap_total() -> Option<u64> {
    meminfo_bytes("SwapTotal:")
}

/// One "Key:   N kB" line of /proc/meminfo, in bytes.
fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    crate::model::host::meminfo_bytes(&text, key.trim_end_matches(':'))
}

/// The descriptor budget, decided once at start-up: the least of
/// `max_kept` (`--max-kept-fds`), what RAM allows
/// ([`kept_budget_for_memory`]) and RLIMIT_NOFILE's soft limit less
/// [`FD_RESERVE`], after raising that limit toward the hard one as far as
/// the budget needs. The one place that raises it; the scanner is given
/// the result as [`ScanConfig::max_kept`].
pub fn fd_budget(max_kept: usize) -> usize {
    let by_memory = mem_total().map_or(usize::MAX, kept_budget_for_memory);
    let max = max_kept.min(by_memory);
    let soft = raise_nofile_limit(max as u64 + FD_RESERVE);
    budget_within(max, soft)
}

/// `max` kept descriptors, no more than `soft_limit` less [`FD_RESERVE`].
pub fn budget_within(max: usize, soft_limit: u64) -> usize {
    max.min(usize::try_from(soft_limit.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX))
}

/// RLIMIT_NOFILE's soft limit now (unlimited: `u64::MAX`).
fn nofile_soft_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// Raises RLIMIT_NOFILE's soft limit toward the hard one, no further than
/// `want`, and returns the soft limit in force afterwards.
pub fn raise_nofile_limit(want: u64) -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    let soft = lim.current.unwrap_or(u64::MAX);
    if soft >= want {
        return soft;
    }
    let to = lim.maximum.map_or(want, |hard| hard.min(want));
    if to > soft
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(to),
                maximum: lim.maximum,
            },
        )
        .is_ok()
    {
        return to;
    }
    soft
}

/// One descriptor budget shared by the scanners of several hierarchies
/// (a v1 or hybrid layout): each publishes how many it keeps, and opens
/// more only while the sum is under the budget, so that a hierarchy with
/// many files to keep (cpuacct's three a group) is not held to an even
/// share while another (name=systemd's one) leaves its share unused.
#[derive(Debug, Default)]
pub struct KeptPool {
    slots: Vec<std::sync::atomic::AtomicUsize>,
}

impl KeptPool {
    /// A pool of `n` scanners.
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            slots: (0..n)
                .map(|_| std::sync::atomic::AtomicUsize::new(0))
                .collect(),
        })
    }

    /// Kept by every scanner but `me`.
    fn others(&self, me: usize) -> usize {
        use std::sync::atomic::Ordering;
        (self.slots.iter().enumerate())
            .filter(|(i, _)| *i != me)
            .map(|(_, s)| s.load(Ordering::Relaxed))
            .sum()
    }

    fn publish(&self, me: usize, kept: usize) {
        if let Some(s) = self.slots.get(me) {
            s.store(kept, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

pub struct Scanner {
    hier: Arc<Hier>,
    /// v1: the inotify instance of every group directory's watch
    /// ([`Watch::Notify`]); `None` until the first walk, or where none
    /// could be made.
    notify: Option<OwnedFd>,
    notify_tried: bool,
    /// v1: whether group directories are watched at all
    /// ([`Scanner::set_watching`]).
    watching: bool,
    /// Entries watched through their link count ([`Watch::Links`]).
    by_links: usize,
    /// Entries watched by inotify ([`Watch::Notify`]), and the most
    /// there may be ([`watch_cap`]).
    by_notify: usize,
    max_notify: usize,
    /// The budget shared with other hierarchies' scanners, and this
    /// one's slot in it.
    pool: Option<(Arc<KeptPool>, usize)>,
    kind: ScanKind,
    table: Table,
    /// The start group's directory, relative to the hierarchy's root.
    root: PathBuf,
    cfg: ScanConfig,
    entries: Vec<Entry>,
    kept: usize,
    /// How many descriptors may be kept: `max_kept`, less when the
    /// descriptor limit is lower.
    budget: usize,
    ticks: u64,
    /// Something may have changed below: re-list the directories whose
    /// nr_descendants no longer matches what was listed.
    need_walk: bool,
    /// Re-list every directory: a file came or went in a group that stayed
    /// (a controller switched in its parent), or our own write.
    need_full: bool,
    /// The next walk reads every group's cgroup.type again.
    reread_types: bool,
    root_stat: Option<File>,
    last_descendants: Option<u64>,
    fd_limited: bool,
    buf: Vec<u8>,
    /// The files read beyond the always-read ones (the columns shown).
    extras: HotExtras,
}

fn count_kept(e: &Entry) -> usize {
    e.handles
        .iter()
        .filter(|h| matches!(h, Handle::Kept(_)))
        .count()
        + usize::from(matches!(e.watch, Watch::Links(..)))
}

/// Out of descriptors (EMFILE, ENFILE).
fn is_fd_shortage(e: &FsError) -> bool {
    matches!(e.errno(), Some(Errno::MFILE | Errno::NFILE))
}

impl Scanner {
    /// Creates a scanner of the tree at `root`, opened now (tests and
    /// benches; the collector passes its handle to
    /// [`Scanner::with_hier`]).
    // takes the PathBuf its callers (tests, benches) always had
    #[allow(clippy::needless_pass_by_value)]
    pub fn new(root: PathBuf, cfg: ScanConfig) -> Self {
        Self::with_hier(Arc::new(Hier::open_lenient(&root)), PathBuf::new(), cfg)
    }

    /// Creates a scanner of the groups from `start` (relative to the
    /// hierarchy's root) down, keeping at most `cfg.max_kept` descriptors
    /// (the budget from [`fd_budget`]), and [`FD_RESERVE`] below the
    /// descriptor limit in force.
    pub fn with_hier(hier: Arc<Hier>, start: PathBuf, cfg: ScanConfig) -> Self {
        Self::of_kind(hier, ScanKind::V2, start, cfg)
    }

    /// [`Scanner::with_hier`] for a hierarchy of this kind (a cgroup v1
    /// hierarchy reads its own files: [`ScanKind::V1`]).
    pub fn of_kind(hier: Arc<Hier>, kind: ScanKind, start: PathBuf, cfg: ScanConfig) -> Self {
        let budget = budget_within(cfg.max_kept, nofile_soft_limit());
        Self {
            hier,
            notify: None,
            notify_tried: false,
            watching: true,
            by_links: 0,
            by_notify: 0,
            max_notify: watch_cap(),
            pool: None,
            kind,
            table: kind.table(),
            root: start,
            cfg,
            entries: Vec::new(),
            kept: 0,
            budget,
            ticks: 0,
            need_walk: true,
            need_full: true,
            reread_types: true,
            root_stat: None,
            last_descendants: None,
            fd_limited: false,
            buf: vec![0; 64 * 1024],
            extras: HotExtras::default(),
        }
    }

    /// Shares the descriptor budget with other scanners: slot `me` of
    /// `pool`.
    pub fn share_budget(&mut self, pool: Arc<KeptPool>, me: usize) {
        self.pool = Some((pool, me));
    }

    /// Room for one more kept descriptor.
    fn room(&self) -> bool {
        let others = self.pool.as_ref().map_or(0, |(p, me)| p.others(*me));
        self.kept + others < self.budget
    }

    fn publish(&self) {
        if let Some((p, me)) = &self.pool {
            p.publish(*me, self.kept);
        }
    }

    /// Reads these extra files from the next scan on (the columns shown
    /// changed). A change re-lists every directory once, which opens the
    /// files now wanted and closes those no longer wanted.
    pub fn set_extras(&mut self, extras: HotExtras) {
        if extras != self.extras {
            self.extras = extras;
            self.need_walk = true;
            self.need_full = true;
        }
    }

    /// v1: whether the group directories are watched for groups made or
    /// removed below them ([`Watch`]); on by default. Off, no watch is set
    /// (no inotify instance, no directory kept open) and a change is seen
    /// by the periodic walk only: for a run that reads once, and for the
    /// first frame, which need not wait for a thousand inotify_add_watch.
    /// Turned on, the next scan lists every directory again and watches
    /// each (what changed meanwhile is listed then).
    pub fn set_watching(&mut self, on: bool) {
        if on && !self.watching && self.is_v1() {
            self.need_walk = true;
        }
        self.watching = on;
    }

    /// The start group's directory, relative to the hierarchy's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Asks for a re-listing on the next scan (after a write that created
    /// or removed a group).
    pub fn invalidate(&mut self) {
        self.need_walk = true;
        self.need_full = true;
        self.reread_types = true;
    }

    /// Number of descriptors currently kept open.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// Reads every group's hot counters. Returns the samples sorted by
    /// path and what it cost (wall and CPU time are filled by the caller,
    /// which owns the clock).
    pub fn scan(&mut self) -> (Vec<GroupSample>, ScanCost) {
        let (groups, cost, ()) = self.scan_stamped(|| ());
        (groups, cost)
    }

    /// [`Scanner::scan`], calling `clock` after any walk and just before
    /// the counters are read, and returning what it gave. A rate divides a
    /// counter's change by the time between two reads of it; a walk (a
    /// group came or went: every refresh on a busy host, 0.3 s at 10,000
    /// groups) before the reads must not count in that time.
    pub fn scan_stamped<T>(
        &mut self,
        clock: impl FnOnce() -> T,
    ) -> (Vec<GroupSample>, ScanCost, T) {
        let cost = self.prepare();
        let at = clock();
        let (out, cost) = self.read_prepared(cost);
        (out, cost, at)
    }

    /// A scan's first half: lists the directories again where something
    /// may have changed. Several scanners (one per hierarchy) all walk
    /// before the clock is read and the counters of each are
    /// ([`Scanner::read_prepared`]).
    pub fn prepare(&mut self) -> ScanCost {
        let mut cost = ScanCost::default();
        if self.descendants_changed(&mut cost) {
            self.need_walk = true;
        }
        let periodic =
            self.cfg.rewalk_every > 0 && self.ticks % u64::from(self.cfg.rewalk_every) == 0;
        if self.need_walk || periodic {
            self.walk(periodic, &mut cost);
        }
        self.ticks += 1;
        self.publish();
        cost
    }

    /// A scan's second half, after [`Scanner::prepare`]: reads the
    /// counters.
    pub fn read_prepared(&mut self, mut cost: ScanCost) -> (Vec<GroupSample>, ScanCost) {
        let mut pass = self.read_pass(|_| true, &mut cost);
        let mut any_gone = pass.gone;
        if pass.recreated {
            // a group was removed and made again under its name since the
            // last refresh (`systemctl restart`: rmdir + mkdir, so no
            // nr_descendants moved, and the old directory's files read
            // ENODEV): list again now, so that the new group is in this
            // refresh rather than missing from it. Only on a failed read:
            // the steady state lists nothing more. This walk comes after
            // the stamp, but what is read after it is new groups only,
            // which have no rate in this refresh anyway
            self.walk(false, &mut cost);
            // a sample read from a directory the walk found replaced
            // (a child read through reopened files under its old inode)
            // is not the group now listed there
            let current: std::collections::HashMap<&[u8], u64> = self
                .entries
                .iter()
                .map(|e| (e.path.as_bytes(), e.inode))
                .collect();
            pass.out
                .retain(|g| current.get(g.path.as_bytes()) == Some(&g.inode));
            let read: std::collections::HashSet<(GroupPath, u64)> =
                pass.out.iter().map(|g| (g.path.clone(), g.inode)).collect();
            // the groups the walk found anew: read once, in this refresh
            // (a further failure is left to the next refresh's walk)
            let more = self.read_pass(|e| !read.contains(&(e.path.clone(), e.inode)), &mut cost);
            any_gone |= more.gone;
            pass.out.extend(more.out);
            pass.out.sort_by(|a, b| a.path.cmp(&b.path));
        }
        let mut out = pass.out;
        // entries hold one of each path (reconcile): this costs a compare
        // a group, and keeps a snapshot free of duplicates whatever the
        // walk did
        one_per_path(&mut out, |g| (&g.path, g.inode));
        if any_gone {
            drop_orphans(&mut out);
        }
        if self.extras.memory_max {
            fill_memory_limits(&mut out);
        }
        cost.fd_limited |= self.fd_limited;
        self.publish();
        (out, cost)
    }

    /// Lists the directories again: only the subtrees whose
    /// nr_descendants moved, or (`periodic`, after our own write, after a
    /// file came or went) everything.
    fn walk(&mut self, periodic: bool, cost: &mut ScanCost) {
        // a walk for a group that came or went lists only the subtrees
        // whose nr_descendants moved and keeps the known groups'
        // cgroup.type; the periodic one and one after our own write
        // (invalidate) list everything and read the types again
        // v1 has no cgroup.stat to tell which subtree moved: all of it
        let full = self.need_full || periodic || self.reread_types || self.is_v1();
        let found = if full { None } else { self.list_changed(cost) };
        let found = found.unwrap_or_else(|| {
            let root_ino = self.hier.dir_ino(&self.root).unwrap_or(0);
            let mut all = Vec::new();
            let start = (GroupPath::root(), self.root.clone(), root_ino, 0);
            self.list_subtree(start, &mut all, cost);
            all
        });
        self.reconcile(found, periodic || self.reread_types);
        cost.walked = true;
        self.need_walk = false;
        self.need_full = false;
        self.reread_types = false;
    }

    /// Reads the hot files of the entries `want` picks. Entries whose
    /// group is gone are removed (and the next refresh walks); a file gone
    /// from a group that stays loses its handle (and the next walk is a
    /// full one).
    fn read_pass(&mut self, want: impl Fn(&Entry) -> bool, cost: &mut ScanCost) -> ReadPass {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut gone = Vec::new();
        let mut recreated = false;
        let mut dropped_kept = 0;
        let mut changed = false;
        let mut buf = std::mem::take(&mut self.buf);
        let hier = Arc::clone(&self.hier);
        let table = self.table;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if !want(e) {
                continue;
            }
            let mut hot = HotStats::default();
            let mut vanished = false;
            for (k, (kind, name)) in table.iter().enumerate() {
                if *kind == Hot::Procs && hot.pids_current.is_some() {
                    continue;
                }
                let r = read_handle(
                    &hier,
                    &mut e.handles[k],
                    &e.dir,
                    name,
                    &mut buf,
                    *kind == Hot::Procs,
                    cost,
                );
                match r {
                    Read1::Gone => {
                        // a file goes away with its group, or alone when a
                        // controller is disabled in the parent: tell them
                        // apart by the directory (same inode = same group;
                        // another inode = the group made again)
                        match hier.dir_ino(&e.dir) {
                            Ok(ino) if ino == e.inode => {
                                if matches!(e.handles[k], Handle::Kept(_)) {
                                    dropped_kept += 1;
                                }
                                e.handles[k] = Handle::Absent;
                                changed = true;
                            }
                            now => {
                                recreated |= now.is_ok();
                                vanished = true;
                                break;
                            }
                        }
                    }
                    Read1::Absent => {}
                    Read1::Error(err) => hot.unreadable.push(Unreadable {
                        file: (*name).to_owned(),
                        error: err.to_string(),
                    }),
                    Read1::Text(n) => {
                        let Ok(text) = std::str::from_utf8(&buf[..n]) else {
                            continue;
                        };
                        apply(&mut hot, *kind, text);
                    }
                }
            }
            if vanished {
                gone.push(i);
                continue;
            }
            out.push(GroupSample {
                path: e.path.clone(),
                inode: e.inode,
                cgroup_type: e.cgroup_type,
                hot,
                detail: None,
            });
        }
        self.buf = buf;
        self.kept -= dropped_kept;
        if changed {
            self.need_walk = true;
            self.need_full = true;
        }
        for &i in gone.iter().rev() {
            let e = self.entries.remove(i);
            self.kept -= count_kept(&e);
        }
        if !gone.is_empty() {
            self.need_walk = true;
        }
        ReadPass {
            out,
            gone: !gone.is_empty(),
            recreated,
        }
    }

    fn is_v1(&self) -> bool {
        matches!(self.kind, ScanKind::V1 { .. })
    }

    /// v1: whether a group was made or removed below a listed directory:
    /// the inotify descriptor holds an event (drained here), or a
    /// directory watched by its link count has another one. cgroup2 reads
    /// one cgroup.stat instead.
    fn links_changed(&mut self) -> bool {
        let mut changed = false;
        if let Some(fd) = &self.notify {
            loop {
                match rustix::io::read(fd, &mut self.buf[..]) {
                    Ok(n) if n > 0 => changed = true,
                    Err(Errno::AGAIN) => break,
                    // EOF cannot be; any other error: look
                    _ => {
                        changed = true;
                        break;
                    }
                }
            }
        }
        changed
            || (self.by_links > 0
                && self.entries.iter().any(|e| match &e.watch {
                    Watch::Links(fd, n) => {
                        rustix::fs::fstat(fd).map_or(true, |st| links_of(&st) != *n)
                    }
                    _ => false,
                }))
    }

    /// Reads the start group's cgroup.stat; true when nr_descendants moved
    /// (v1: [`Scanner::links_changed`]).
    fn descendants_changed(&mut self, cost: &mut ScanCost) -> bool {
        if self.is_v1() {
            return self.links_changed();
        }
        if self.root_stat.is_none() {
            self.root_stat = self.hier.open_read(&self.root.join(files::STAT)).ok();
        }
        let Some(f) = &self.root_stat else {
            return false;
        };
        let Ok(n) = hier::read_capped(f, &mut self.buf, hier::CAP_STAT, false) else {
            self.root_stat = None;
            self.need_full = true;
            return true;
        };
        cost.files_read += 1;
        cost.files_kept += 1;
        let text = std::str::from_utf8(&self.buf[..n]).unwrap_or("");
        let now = CgroupStat::parse(text).nr_descendants;
        let changed = self.last_descendants.is_some_and(|l| Some(l) != now);
        self.last_descendants = now;
        changed
    }

    /// Lists `start` and every directory below it (to `max_depth`) into
    /// `found`, unsorted.
    fn list_subtree(&self, start: WalkStart, found: &mut Vec<Listed>, cost: &mut ScanCost) {
        walk_from(
            &self.hier,
            self.table,
            start,
            self.cfg.max_depth,
            found,
            cost,
        );
    }

    /// The groups as a walk would find them, listing only the directories
    /// whose `cgroup.stat` nr_descendants differs from the number of
    /// groups listed below them, and the new subtrees found there. A
    /// subtree whose count matches is taken from the last walk. `None`
    /// when a full walk is needed (a depth limit, no walk yet, a count
    /// that cannot be read).
    ///
    /// On a busy host groups come and go in a few places (a slice of
    /// containers, a user's session): this lists those few directories
    /// instead of all of them (a full walk costs 7-13 steady scans).
    fn list_changed(&self, cost: &mut ScanCost) -> Option<Vec<Listed>> {
        if self.cfg.max_depth.is_some() || self.entries.first()?.path != GroupPath::root() {
            return None;
        }
        // the children of every group, and how many groups were listed
        // below each: entries are sorted, so a parent comes before its
        // children and each child's parent is already indexed
        let n = self.entries.len();
        let index: std::collections::HashMap<&[u8], usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_bytes(), i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut parent_of = vec![usize::MAX; n];
        for (i, e) in self.entries.iter().enumerate().skip(1) {
            let pi = *index.get(parent_bytes(e.path.as_bytes()))?;
            children[pi].push(i);
            parent_of[i] = pi;
        }
        let mut below = vec![0u64; n];
        for i in (1..n).rev() {
            below[parent_of[i]] += below[i] + 1;
        }
        let mut buf = [0u8; 512];
        let mut found = Vec::with_capacity(n);
        // directories listed here, added to the cost only if no full walk
        // follows
        let mut listed_dirs = ScanCost::default();
        let carry = |from: usize, found: &mut Vec<Listed>| {
            let mut keep = vec![from];
            while let Some(k) = keep.pop() {
                found.push(found_of(&self.entries[k]));
                keep.extend(&children[k]);
            }
        };
        // (entry, list it whatever its count): the children of a directory
        // listed again are listed too, for their own files: a controller
        // switched on in its subtree_control (systemd does it as it starts
        // a unit there) adds files to every child, not only to the new one
        let mut stack = vec![(0usize, false)];
        while let Some((i, relist)) = stack.pop() {
            let e = &self.entries[i];
            let now = read_descendants(&self.hier, &e.dir.join(files::STAT), &mut buf)?;
            let moved = now != below[i];
            if !moved && !relist {
                // unchanged below: the last walk's groups stand
                carry(i, &mut found);
                continue;
            }
            let (present, listed) = list_dir(&self.hier, self.table, &e.dir, &mut listed_dirs)?;
            found.push((e.path.clone(), e.dir.clone(), e.inode, present));
            let known = |name: &OsStr, ino: u64| {
                e.path.join(name.as_bytes()).is_ok_and(|p| {
                    index
                        .get(p.as_bytes())
                        .is_some_and(|&k| self.entries[k].inode == ino)
                })
            };
            let same_children = listed.len() == children[i].len()
                && listed.iter().all(|(name, _, ino)| known(name, *ino));
            if !moved && same_children {
                // the same groups below: only this one's files were in
                // question
                for &c in &children[i] {
                    carry(c, &mut found);
                }
                continue;
            }
            for (name, dir, ino) in listed {
                let Ok(path) = e.path.join(name.as_bytes()) else {
                    continue;
                };
                match index.get(path.as_bytes()) {
                    Some(&k) if self.entries[k].inode == ino => stack.push((k, true)),
                    // new, or removed and made again under the same name
                    _ => self.list_subtree((path, dir, ino, 0), &mut found, &mut listed_dirs),
                }
            }
        }
        cost.dirs_listed += listed_dirs.dirs_listed;
        Some(found)
    }

    /// Takes `found` (every group, from a walk) as the new list, keeping
    /// the descriptors of groups that are still the same directory (same
    /// inode). `reread_types` reads cgroup.type of every group; otherwise
    /// only of new ones: a walk after a group came or went (on a busy host,
    /// nearly every refresh) then costs no file read for known groups.
    fn reconcile(&mut self, mut found: Vec<Listed>, reread_types: bool) {
        // recomputed below: a file left to open/read/close for want of
        // descriptors sets it again
        self.fd_limited = false;
        found.sort_by(|a, b| a.0.cmp(&b.0));
        one_per_path(&mut found, |f| (&f.0, f.2));
        // v1: how many subdirectories each directory had when listed (its
        // link count less 2), for the next scans' change check; with a
        // depth limit the last level's are not listed: taken from fstat
        let subdirs: std::collections::HashMap<&[u8], u64> = if self.is_v1() {
            let mut m = std::collections::HashMap::with_capacity(found.len());
            for (p, ..) in found.iter().skip(1) {
                *m.entry(parent_bytes(p.as_bytes())).or_insert(0) += 1;
            }
            m
        } else {
            std::collections::HashMap::new()
        };
        let expect_links: Vec<Option<u64>> = found
            .iter()
            .map(|(p, ..)| {
                (self.is_v1() && self.cfg.max_depth.is_none())
                    .then(|| 2 + subdirs.get(p.as_bytes()).copied().unwrap_or(0))
            })
            .collect();
        drop(subdirs);
        let table = self.table;
        let procs = !matches!(self.kind, ScanKind::V1 { procs: false });
        let pids_bit = bit_of(table, Hot::PidsCurrent);
        let recursive_bits = (
            bit_of(table, Hot::BlkioBytesRecursive),
            bit_of(table, Hot::BlkioIosRecursive),
        );
        let usage_user_bit = bit_of(table, Hot::CpuacctUser);
        // both lists are sorted by path: match them in one pass
        let mut old = std::mem::take(&mut self.entries).into_iter().peekable();
        let mut entries = Vec::with_capacity(found.len());
        for ((path, dir, inode, present), links) in found.into_iter().zip(expect_links) {
            while let Some(gone) = old.next_if(|e| e.path < path) {
                self.kept -= count_kept(&gone);
            }
            let (mut entry, new) = match old.next_if(|e| e.path == path) {
                Some(e) if e.inode == inode => (e, false),
                prev => {
                    if let Some(e) = prev {
                        self.kept -= count_kept(&e);
                    }
                    let e = Entry {
                        path,
                        dir,
                        inode,
                        cgroup_type: None,
                        handles: std::array::from_fn(|_| Handle::Absent),
                        watch: Watch::None,
                    };
                    (e, true)
                }
            };
            let extras = self.extras;
            // a file of a column not shown is left as if absent: no
            // descriptor, no read
            let has = |bit: usize| {
                present & (1 << bit) != 0
                    && table.get(bit).is_none_or(|(h, _)| {
                        h.wanted(extras)
                            && (procs || *h != Hot::Procs)
                            // the group's own blkio counters only where
                            // the subtree's are not (before Linux 4.11)
                            && match h {
                                Hot::BlkioBytes => {
                                    recursive_bits.0.is_none_or(|b| present & (1 << b) == 0)
                                }
                                Hot::BlkioIos => {
                                    recursive_bits.1.is_none_or(|b| present & (1 << b) == 0)
                                }
                                // cpuacct.stat's ticks only where the ns
                                // split is not (before Linux 4.7)
                                Hot::CpuacctStat => {
                                    usage_user_bit.is_none_or(|b| present & (1 << b) == 0)
                                }
                                _ => true,
                            }
                    })
            };
            // cgroup.procs is read only where pids.current is absent: do not
            // hold a descriptor (nor, on kernfs, its page once read) for it
            // otherwise, but keep it reachable should pids.current not parse
            let lazy_procs = pids_bit.is_some_and(has);
            // reconcile: a controller enabled or disabled in the parent adds
            // or removes files of a group that stays
            for (k, (kind, name)) in table.iter().enumerate() {
                let lazy = lazy_procs && *kind == Hot::Procs;
                let h = &mut entry.handles[k];
                match (has(k), &*h) {
                    (true, Handle::Kept(_)) if lazy => {
                        self.kept -= 1;
                        *h = Handle::Reopen(None);
                    }
                    (true, Handle::Absent) if lazy => *h = Handle::Reopen(None),
                    (true, _) if lazy => {}
                    // a reopened file gets a kept descriptor once the
                    // budget has room again (groups went away)
                    (true, Handle::Absent | Handle::Reopen(_)) => {
                        *h = self.open_handle(&entry.dir.join(name));
                    }
                    (false, Handle::Kept(_)) => {
                        self.kept -= 1;
                        *h = Handle::Absent;
                    }
                    (false, Handle::Reopen(_)) => *h = Handle::Absent,
                    _ => {}
                }
            }
            if self.is_v1() {
                self.watch(&mut entry, links);
            }
            if new || reread_types {
                entry.cgroup_type = if has(TYPE_BIT) {
                    self.hier
                        .read_text(&entry.dir.join(files::TYPE))
                        .ok()
                        .and_then(|t| CgroupType::parse(&t).ok())
                } else {
                    None
                };
            }
            entries.push(entry);
        }
        for e in old {
            self.kept -= count_kept(&e);
        }
        self.entries = entries;
        self.by_links = (self.entries.iter())
            .filter(|e| matches!(e.watch, Watch::Links(..)))
            .count();
        self.by_notify = (self.entries.iter())
            .filter(|e| matches!(e.watch, Watch::Notify))
            .count();
    }

    /// v1: keeps the entry's directory open (within the budget) with the
    /// link count it should have (`links`, from the walk; `None`: what
    /// fstat says now).
    fn watch(&mut self, entry: &mut Entry, links: Option<u64>) {
        if !self.watching {
            return;
        }
        if matches!(entry.watch, Watch::None) {
            // counted high during a walk (entries gone are counted until
            // its end): never more than the cap
            if self.by_notify < self.max_notify && self.add_notify(&entry.dir) {
                self.by_notify += 1;
                entry.watch = Watch::Notify;
                return;
            }
            if !self.room() {
                // caught by the periodic walk only
                self.fd_limited = true;
                return;
            }
            let Ok(fd) = self.hier.open_dir(&entry.dir) else {
                return;
            };
            self.kept += 1;
            self.by_links += 1;
            entry.watch = Watch::Links(fd, 0);
        }
        if let Watch::Links(fd, n) = &mut entry.watch {
            *n = match links {
                Some(l) => l,
                None => rustix::fs::fstat(&*fd).map_or(0, |st| links_of(&st)),
            };
        }
    }

    /// Watches a directory for subdirectories made, removed or renamed:
    /// the very inode opened beneath the root (an O_PATH descriptor,
    /// through its /proc/self/fd link), never a path resolved again.
    /// False where no watch is to be had.
    fn add_notify(&mut self, dir: &Path) -> bool {
        use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
        use std::os::fd::AsRawFd;
        if !self.notify_tried {
            self.notify_tried = true;
            self.notify = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok();
        }
        let Some(notify) = &self.notify else {
            return false;
        };
        let Ok((fd, _)) = self.hier.open_watchable(dir, true) else {
            return false;
        };
        inotify::add_watch(
            notify,
            format!("/proc/self/fd/{}", fd.as_raw_fd()),
            WatchFlags::CREATE | WatchFlags::DELETE | WatchFlags::MOVE | WatchFlags::ONLYDIR,
        )
        .is_ok()
    }

    fn open_handle(&mut self, file: &Path) -> Handle {
        if !self.room() {
            self.fd_limited = true;
            return Handle::Reopen(None);
        }
        // opened the safe way once (beneath the root, no symlink, a
        // regular file), then read with pread as long as it is kept
        match self.hier.open_read(file) {
            Ok(f) => {
                self.kept += 1;
                Handle::Kept(f)
            }
            Err(e) if is_fd_shortage(&e) => {
                self.fd_limited = true;
                Handle::Reopen(None)
            }
            // reopened each time: the error shows on the group
            Err(_) => Handle::Reopen(None),
        }
    }
}

/// A directory's link count (st_nlink is u32 on some architectures).
#[allow(clippy::useless_conversion)]
fn links_of(st: &rustix::fs::Stat) -> u64 {
    u64::from(st.st_nlink)
}

/// A group a walk found: path, directory, inode, and which of HOT and
/// cgroup.type it holds (bits, see [`file_bit`]).
type Listed = (GroupPath, PathBuf, u64, u16);

/// Lists `start` and every directory below it (to `max_depth` levels
/// below the start group) into `found`, unsorted: the one walker of the
/// tree, for the scanner and the event watcher (`source::events`).
fn walk_from(
    hier: &Hier,
    table: Table,
    start: WalkStart,
    max_depth: Option<usize>,
    found: &mut Vec<Listed>,
    cost: &mut ScanCost,
) {
    let mut stack = vec![start];
    while let Some((path, dir, ino, depth)) = stack.pop() {
        let Some((present, children)) = list_dir(hier, table, &dir, cost) else {
            continue;
        };
        if max_depth.is_none_or(|m| depth < m) {
            for (name, child_dir, child_ino) in children {
                // a name no directory can have (a --root tree is
                // only a tree of paths): never a group
                let Ok(child) = path.join(name.as_bytes()) else {
                    continue;
                };
                stack.push((child, child_dir, child_ino, depth + 1));
            }
        }
        found.push((path, dir, ino, present));
    }
}

/// The groups from `start` down, `depth` levels below the view's start
/// group already, to `max_depth` (the event watcher's initial set and a
/// new subtree it is told of), each with its directory's inode; the
/// scanner's own walk.
pub fn list_groups(
    hier: &Hier,
    start: &GroupPath,
    depth: usize,
    max_depth: Option<usize>,
) -> Vec<(GroupPath, u64)> {
    let dir = hier::group_rel(start).to_path_buf();
    let Ok(ino) = hier.dir_ino(&dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    walk_from(
        hier,
        &HOT,
        (start.clone(), dir, ino, depth),
        max_depth,
        &mut found,
        &mut ScanCost::default(),
    );
    found.into_iter().map(|(p, _, ino, _)| (p, ino)).collect()
}

/// Where a walk starts: path, directory, inode, depth below the start group.
type WalkStart = (GroupPath, PathBuf, u64, usize);

/// Lists one group's directory: which of the files the scanner looks for
/// are there (bits, see [`file_bit`]) and its child directories (name,
/// path, inode). `None` when it cannot be listed (gone).
#[allow(clippy::type_complexity)]
fn list_dir(
    hier: &Hier,
    table: Table,
    dir: &Path,
    cost: &mut ScanCost,
) -> Option<(u16, Vec<(OsString, PathBuf, u64)>)> {
    let entries = match hier.list(dir) {
        Ok(e) => e,
        // nested past PATH_MAX: its parent lists it, but nothing in or
        // below it can be opened. Kept as a group whose hot files all
        // fail, so that its row says why (and that groups below it are
        // not shown) instead of vanishing
        Err(FsError::Errno(Errno::NAMETOOLONG)) => {
            return Some(((1u16 << table.len()) - 1, Vec::new()));
        }
        Err(_) => return None,
    };
    cost.dirs_listed += 1;
    let mut present = 0u16;
    let mut children = Vec::new();
    for de in entries {
        if de.is_dir {
            let path = dir.join(&de.name);
            // the name's bytes as they are: a lossy copy would make
            // `bad\xff` and `bad\u{FFFD}` one group (issue 7, 4)
            children.push((de.name, path, de.ino));
        } else if let Some(bit) = file_bit(table, de.name.as_bytes()) {
            // a symlink or FIFO by a hot file's name is looked at too: its
            // open fails and the group shows why
            present |= 1 << bit;
        }
    }
    once_each(&mut children);
    Some((present, children))
}

/// Keeps one child of each name, the one listed last. kernfs's readdir
/// resumes each getdents(2) call at the name hash it stopped at; when the
/// entry there was removed in between (a group's rmdir under churn), the
/// lookup of that hash can land on the entry before it, already given,
/// and give it again (`kernfs_dir_pos`, seen in the VM: "c64 listed
/// twice", with its `sub`). rustix's `Dir` reads 768 bytes at first, so a
/// directory of a few dozen groups takes several calls. A name given
/// twice would be walked twice: both its group and its subtree would be
/// listed twice in one refresh.
fn once_each(children: &mut Vec<(OsString, PathBuf, u64)>) {
    if children.len() < 2 {
        return;
    }
    // stable: of equal names, the one listed last comes last
    children.sort_by(|a, b| a.0.cmp(&b.0));
    children.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
}

/// Keeps one of each path in `found` (sorted by path), the newest
/// directory (the highest inode: kernfs numbers its nodes upward). The
/// walker lists each name once ([`once_each`]): a guard, so that no
/// refresh ever holds a path twice (a duplicate confuses the tree, the
/// history and any action on that row).
fn one_per_path<T>(items: &mut Vec<T>, key: impl Fn(&T) -> (&GroupPath, u64)) {
    items.dedup_by(|later, kept| {
        let ((lp, li), (kp, ki)) = (key(later), key(kept));
        let same = lp == kp;
        if same && li > ki {
            std::mem::swap(later, kept);
        }
        same
    });
}

/// nr_descendants from a group's cgroup.stat (opened, read, closed).
fn read_descendants(hier: &Hier, stat: &Path, buf: &mut [u8]) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let f = hier.open_read(stat).ok()?;
    let n = f.read_at(buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    CgroupStat::parse(text).nr_descendants
}

/// What a walk would find for a group known not to have changed: its files
/// as the last walk saw them.
fn found_of(e: &Entry) -> Listed {
    let mut present = 0u16;
    for (k, h) in e.handles.iter().enumerate() {
        if !matches!(h, Handle::Absent) {
            present |= 1 << k;
        }
    }
    if e.cgroup_type.is_some() {
        present |= 1 << TYPE_BIT;
    }
    (e.path.clone(), e.dir.clone(), e.inode, present)
}

/// Leaves out the samples whose parent is not among them (nor the parent's
/// descendants): when a group is removed and created again under the same
/// name while the walk lists it, its children are listed from the new
/// directory and the group itself, with the old inode, reads as gone. The
/// walk a vanished group triggers lists both again: in the same scan when
/// its directory is there again, else on the next one; what is left
/// without its parent after that (a group gone in the second reading
/// pass) waits for the next.
/// `out` is sorted by path, so a parent comes before its children.
fn drop_orphans(out: &mut Vec<GroupSample>) {
    let keep: Vec<bool> = {
        let mut present: std::collections::HashSet<&[u8]> =
            std::collections::HashSet::with_capacity(out.len());
        out.iter()
            .enumerate()
            .map(|(k, g)| {
                let p = g.path.as_bytes();
                // the first is the start group
                let ok = k == 0 || present.contains(parent_bytes(p));
                if ok {
                    present.insert(p);
                }
                ok
            })
            .collect()
    };
    let mut keep = keep.into_iter();
    out.retain(|_| keep.next().unwrap_or(true));
}

/// Reads one hot file into `buf`. `multi` files (cgroup.procs) may need
/// several reads: seq_file returns at most a page of records per call.
fn read_handle(
    hier: &Hier,
    h: &mut Handle,
    dir: &Path,
    name: &str,
    buf: &mut Vec<u8>,
    multi: bool,
    cost: &mut ScanCost,
) -> Read1 {
    let res = match h {
        Handle::Absent => return Read1::Absent,
        Handle::Kept(f) => {
            cost.files_kept += 1;
            read_all_at(f, buf, name, multi)
        }
        // open (openat2 + fstat), then the same reads as a kept file
        // (pread at 0 and on, stopping after a short read of a
        // single-record file): reading to EOF would cost one more read
        // for every file
        Handle::Reopen(seen) => match hier.open_read_ino(&dir.join(name)) {
            // another file by that name since the last read: its group (or
            // the file alone, which the caller tells by the directory) was
            // made again, and the figures are not the old group's
            Ok((_, ino)) if seen.is_some_and(|s| s != ino) => {
                *seen = Some(ino);
                return Read1::Gone;
            }
            Ok((f, ino)) => {
                *seen = Some(ino);
                read_all_at(&f, buf, name, multi)
            }
            Err(e) => {
                if is_fd_shortage(&e) {
                    // out of descriptors despite the reserve: the figure
                    // is missing this tick, and the header says why
                    cost.fd_limited = true;
                    return Read1::Absent;
                }
                Err(e)
            }
        },
    };
    cost.files_read += 1;
    match res {
        Ok(n) => Read1::Text(n),
        Err(e) if e.is_gone() => Read1::Gone,
        // a FIFO, a symlink, over the cap, EACCES, EIO: there, but not read
        Err(e) => Read1::Error(e),
    }
}

/// pread from offset 0, at most the file's cap ([`hier::cap_for`]).
/// Single-record files (cpu.stat, io.stat, ...) are complete after one
/// read that did not fill the buffer.
fn read_all_at(f: &File, buf: &mut Vec<u8>, name: &str, multi: bool) -> Result<usize, FsError> {
    hier::read_capped(f, buf, hier::cap_for(name), multi)
}

fn apply(hot: &mut HotStats, kind: Hot, text: &str) {
    match kind {
        Hot::CpuStat => hot.cpu = CpuStat::parse(text).ok(),
        Hot::MemoryCurrent => hot.memory_current = cgroupfs::parse_u64("memory.current", text).ok(),
        Hot::IoStat => hot.io = Some(IoStat::parse(text)),
        Hot::PidsCurrent => hot.pids_current = cgroupfs::parse_u64("pids.current", text).ok(),
        Hot::Events => hot.events = Some(CgroupEvents::parse(text)),
        Hot::Procs => hot.nr_procs = Some(text.split_ascii_whitespace().count() as u64),
        Hot::MemoryMax => hot.memory_max = Limit::parse("memory.max", text).ok(),
        Hot::SwapCurrent => {
            hot.swap_current = cgroupfs::parse_u64("memory.swap.current", text).ok();
        }
        Hot::CpuacctUsage => {
            let usage = v1::parse_u64(text).map(v1::ns_to_usec);
            if let Some(u) = usage {
                hot.cpu.get_or_insert_with(CpuStat::default).usage_usec = u;
            }
        }
        Hot::CpuacctUser | Hot::CpuacctSys => {
            // after cpuacct.usage (the table's order): no usage, no CpuStat
            if let (Some(c), Some(v)) = (hot.cpu.as_mut(), v1::parse_u64(text)) {
                let slot = if kind == Hot::CpuacctUser {
                    &mut c.user_usec
                } else {
                    &mut c.system_usec
                };
                *slot = Some(v1::ns_to_usec(v));
            }
        }
        Hot::CpuacctStat => {
            // after cpuacct.usage, as the two above
            if let Some(c) = hot.cpu.as_mut() {
                (c.user_usec, c.system_usec) = v1::parse_cpuacct_stat(text);
            }
        }
        Hot::V1CpuStat => hot.v1.cpu_throttle = Some(v1::CpuThrottle::parse(text)),
        Hot::MemoryUsage => hot.memory_current = v1::parse_u64(text),
        Hot::MemoryLimit => hot.memory_max = v1::parse_memory_limit(text),
        Hot::MemswUsage => hot.v1.memsw_usage = v1::parse_u64(text),
        Hot::BlkioBytesRecursive | Hot::BlkioIosRecursive | Hot::BlkioBytes | Hot::BlkioIos => {
            let k = if matches!(kind, Hot::BlkioBytesRecursive | Hot::BlkioBytes) {
                v1::BlkioKind::Bytes
            } else {
                v1::BlkioKind::Ios
            };
            v1::blkio_into(text, k, hot.io.get_or_insert_with(IoStat::default));
            hot.v1.sources.io_own_only |= matches!(kind, Hot::BlkioBytes | Hot::BlkioIos);
        }
        Hot::FreezerState => hot.v1.freezer_state = v1::FreezerState::parse(text).ok(),
        Hot::CpuPressure | Hot::MemoryPressure | Hot::IoPressure => {
            if let Ok(p) = Pressure::parse(text) {
                // hundredths: the kernel prints two decimals
                let centi = (p.some.avg10 * 100.0).round().clamp(0.0, 10_000.0) as u32;
                hot.psi_some_avg10 = Some(hot.psi_some_avg10.map_or(centi, |c| c.max(centi)));
                if let Some(full) = p.full {
                    let centi = (full.avg10 * 100.0).round().clamp(0.0, 10_000.0) as u32;
                    hot.psi_full_avg10 = Some(hot.psi_full_avg10.map_or(centi, |c| c.max(centi)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A test tree's path as text (its names are UTF-8).
    fn as_text(p: &GroupPath) -> &str {
        std::str::from_utf8(p.as_bytes()).unwrap()
    }

    fn mk(root: &Path, rel: &str, files: &[(&str, &str)]) {
        let d = root.join(rel);
        fs::create_dir_all(&d).unwrap();
        for (n, c) in files {
            fs::write(d.join(n), c).unwrap();
        }
    }

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk(
            r,
            "",
            &[
                ("cgroup.procs", "1\n"),
                ("cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n"),
                ("cpu.stat", "usage_usec 100\nuser_usec 60\nsystem_usec 40\n"),
            ],
        );
        mk(
            r,
            "a.slice",
            &[
                ("cgroup.procs", ""),
                ("cgroup.type", "domain\n"),
                ("cgroup.events", "populated 1\nfrozen 0\n"),
                ("cpu.stat", "usage_usec 50\nuser_usec 25\nsystem_usec 25\n"),
                ("memory.current", "4096\n"),
                ("pids.current", "3\n"),
            ],
        );
        mk(
            r,
            "a.slice/b c:ü",
            &[
                ("cgroup.procs", "5\n6\n"),
                ("cgroup.type", "threaded\n"),
                (
                    "io.stat",
                    "8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n",
                ),
            ],
        );
        t
    }

    #[test]
    fn extra_files_are_opened_only_while_asked_for() {
        let t = tree();
        let a = t.path().join("a.slice");
        fs::write(a.join("memory.max"), "8192\n").unwrap();
        fs::write(a.join("memory.swap.current"), "512\n").unwrap();
        fs::write(
            a.join("cpu.pressure"),
            "some avg10=1.25 avg60=0 avg300=0 total=9\n",
        )
        .unwrap();
        fs::write(
            a.join("io.pressure"),
            "some avg10=3.50 avg60=0 avg300=0 total=9\nfull avg10=9.00 avg60=0 avg300=0 total=9\n",
        )
        .unwrap();
        let child = a.join("b c:ü");
        fs::write(child.join("memory.current"), "2048\n").unwrap();
        fs::write(child.join("memory.max"), "max\n").unwrap();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (g, plain) = s.scan();
        let kept = s.kept();
        assert_eq!(g[1].hot.memory_max, None, "not asked for: not read");
        s.set_extras(HotExtras {
            memory_max: true,
            swap: true,
            pressure: true,
        });
        let (g, cost) = s.scan();
        assert!(cost.walked, "a change of extras lists the files again");
        // a.slice: memory.max, swap and two pressure files; b: memory.max
        assert_eq!(s.kept(), kept + 5);
        assert_eq!(cost.files_read, plain.files_read + 5);
        assert_eq!(g[1].hot.memory_max, Some(Limit::Value(8192)));
        assert_eq!(g[1].hot.swap_current, Some(512));
        // the highest some avg10 (not io's full line), in hundredths
        assert_eq!(g[1].hot.psi_some_avg10, Some(350));
        assert_eq!(
            g[1].hot.psi_full_avg10,
            Some(900),
            "io.pressure's full line; cpu has none"
        );
        // the child's "max" leaves its parent's limit in force
        assert_eq!(
            (g[1].hot.memory_limit, g[2].hot.memory_limit),
            (Some(8192), Some(8192))
        );
        s.set_extras(HotExtras::default());
        let (g, cost) = s.scan();
        assert_eq!((s.kept(), cost.files_read), (kept, plain.files_read));
        assert_eq!(g[1].hot.psi_some_avg10, None);
    }

    #[test]
    fn reads_hot_files_and_odd_names() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (g, cost) = s.scan();
        let names: Vec<&str> = g.iter().map(|x| as_text(&x.path)).collect();
        assert_eq!(names, ["", "a.slice", "a.slice/b c:ü"]);
        assert_eq!(g[0].hot.cpu.unwrap().usage_usec, 100);
        assert_eq!(g[0].hot.nr_procs, Some(1));
        assert_eq!(g[1].hot.memory_current, Some(4096));
        assert_eq!(g[1].pids(), Some(3));
        assert_eq!(
            g[1].hot.nr_procs, None,
            "procs is not read where pids.current exists"
        );
        assert!(g[1].hot.events.unwrap().is_populated());
        assert_eq!(g[2].hot.io.as_ref().unwrap().total().wbytes, Some(20));
        assert_eq!(g[2].pids(), Some(2));
        assert_eq!(g[2].cgroup_type, Some(CgroupType::Threaded));
        assert!(cost.walked);
        assert_eq!(
            s.kept(),
            8,
            "every hot file that exists is kept open, but cgroup.procs where pids.current is"
        );
        assert_eq!(
            cost.files_kept, 9,
            "start cgroup.stat + 8 hot reads (procs skipped where pids.current is)"
        );
    }

    /// Writes every directory's cgroup.stat with its true nr_descendants,
    /// as the kernel keeps it; returns the root's.
    fn fix_counts(dir: &Path) -> u64 {
        let mut n = 0;
        for e in fs::read_dir(dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                n += 1 + fix_counts(&e.path());
            }
        }
        let text = format!("nr_descendants {n}\nnr_dying_descendants 0\n");
        fs::write(dir.join("cgroup.stat"), text).unwrap();
        n
    }

    fn group_files(n: u64) -> Vec<(&'static str, String)> {
        vec![
            ("cgroup.procs", String::new()),
            ("cgroup.events", "populated 0\nfrozen 0\n".into()),
            ("memory.current", format!("{n}\n")),
        ]
    }

    fn mk_group(root: &Path, rel: &str, n: u64) {
        let d = root.join(rel);
        fs::create_dir_all(&d).unwrap();
        for (f, c) in group_files(n) {
            fs::write(d.join(f), c).unwrap();
        }
    }

    /// (path, inode, memory.current) of every group, as a fresh scanner
    /// (a full walk) or `s` sees them, and the directories listed.
    fn seen(s: &mut Scanner) -> (Vec<(String, u64, Option<u64>)>, u64) {
        let (g, cost) = s.scan();
        let v = g
            .iter()
            .map(|x| (x.path.to_string(), x.inode, x.hot.memory_current))
            .collect();
        (v, cost.dirs_listed)
    }

    #[test]
    fn a_walk_after_a_change_lists_only_the_changed_subtree() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for a in 0..5 {
            for b in 0..4 {
                mk_group(r, &format!("s{a}.slice/u{b}.service"), a * 10 + b);
            }
        }
        fix_counts(r);
        let mut s = Scanner::new(r.to_path_buf(), ScanConfig::default());
        let (_, cost) = s.scan();
        assert_eq!(cost.dirs_listed, 26, "the first walk lists all");
        // a group comes under s3.slice: the root and s3.slice are listed,
        // their children for their own files (5 slices, s3's 4 services),
        // and the new group; not the other slices' services
        mk_group(r, "s3.slice/new.service", 99);
        fix_counts(r);
        let (g, cost) = s.scan();
        assert!(cost.walked);
        assert_eq!(cost.dirs_listed, 1 + 5 + 4 + 1);
        assert_eq!(g.len(), 27);
        assert!(g.iter().any(
            |x| as_text(&x.path) == "s3.slice/new.service" && x.hot.memory_current == Some(99)
        ));
        // nothing changed: no walk
        let (_, cost) = s.scan();
        assert!(!cost.walked);
        // one goes from s1.slice: the root, the slices, s1's other 3
        fs::remove_dir_all(r.join("s1.slice/u2.service")).unwrap();
        fix_counts(r);
        let (g, cost) = s.scan();
        assert_eq!(cost.dirs_listed, 1 + 5 + 3);
        assert_eq!(g.len(), 26);
        assert!(g.iter().all(|x| as_text(&x.path) != "s1.slice/u2.service"));
        // our own write: everything is listed again
        s.invalidate();
        let (_, cost) = s.scan();
        assert_eq!(cost.dirs_listed, 26);
        // a depth limit: no partial walk (the counts include what is not
        // listed)
        let mut d = Scanner::new(
            r.to_path_buf(),
            ScanConfig {
                max_depth: Some(1),
                ..ScanConfig::default()
            },
        );
        d.scan();
        mk_group(r, "s0.slice/late.service", 1);
        fix_counts(r);
        let (g, cost) = d.scan();
        assert_eq!(cost.dirs_listed, 6);
        assert_eq!(g.len(), 6);
    }

    #[test]
    fn a_partial_walk_sees_files_that_came_to_the_siblings_too() {
        // systemd starts a unit that wants pids: it switches pids on in
        // the slice's subtree_control (pids.current appears in every child)
        // and makes the unit's group. The siblings' counts do not move,
        // but their new files must be read.
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for a in ["a", "b"] {
            mk_group(r, &format!("app.slice/{a}.service"), 1);
        }
        fix_counts(r);
        let mut s = Scanner::new(r.to_path_buf(), ScanConfig::default());
        s.scan();
        mk_group(r, "app.slice/c.service", 1);
        for a in ["a", "b", "c"] {
            fs::write(r.join(format!("app.slice/{a}.service/pids.current")), "2\n").unwrap();
        }
        fix_counts(r);
        let (g, _) = s.scan();
        let pids: Vec<(&str, Option<u64>)> = g
            .iter()
            .skip(2)
            .map(|x| (as_text(&x.path), x.hot.pids_current))
            .collect();
        assert_eq!(
            pids,
            [
                ("app.slice/a.service", Some(2)),
                ("app.slice/b.service", Some(2)),
                ("app.slice/c.service", Some(2))
            ]
        );
    }

    #[test]
    fn a_partial_walk_sees_a_group_made_again_under_its_name() {
        // `systemctl restart` under a slice whose count does not move,
        // while a group comes elsewhere; reopened files (over the budget)
        // would go on reading the new group as the old one
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk_group(r, "s.slice/web.service", 1);
        mk_group(r, "s.slice/db.service", 2);
        fix_counts(r);
        let cfg = ScanConfig {
            max_kept: 0,
            rewalk_every: 0,
            ..ScanConfig::default()
        };
        let mut s = Scanner::new(r.to_path_buf(), cfg.clone());
        s.scan();
        // made aside and renamed, so that no inode number is reused
        mk_group(r, "s.slice/web.new", 3);
        fs::remove_dir_all(r.join("s.slice/web.service")).unwrap();
        fs::rename(r.join("s.slice/web.new"), r.join("s.slice/web.service")).unwrap();
        mk_group(r, "other.slice", 4);
        fix_counts(r);
        let (got, _) = seen(&mut s);
        let (want, _) = seen(&mut Scanner::new(r.to_path_buf(), cfg));
        assert_eq!(got, want);
    }

    #[test]
    fn a_partial_walk_finds_what_a_full_one_finds() {
        // random groups come and go (one kind of change per step, so that
        // the counts move, as they do on a kernel), and the scanner must
        // see the same tree as a fresh one, with kept descriptors (which a
        // removed tmpfs file keeps reading) and with reopened files (which
        // fail: the "vanished" path)
        for max_kept in [65_536, 0] {
            let t = tempfile::tempdir().unwrap();
            let r = t.path();
            let mut live: Vec<String> = Vec::new();
            let mut next = 0u64;
            let mut rng = 0x2545_f491_4f6c_dd1d_u64;
            let mut rand = |n: usize| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                usize::try_from(rng % n as u64).unwrap()
            };
            // slices with services, as on a host; groups come and go below
            for k in 0..30 {
                let p = format!("s{}.slice/g{k}", k % 5);
                mk_group(r, &p, k);
                live.push(p);
            }
            fix_counts(r);
            let cfg = ScanConfig {
                max_kept,
                rewalk_every: 0,
                ..ScanConfig::default()
            };
            let mut s = Scanner::new(r.to_path_buf(), cfg.clone());
            s.scan();
            let (mut listed, mut all) = (0, 0);
            for step in 0..80 {
                let adds = rand(3) > 0;
                for _ in 0..=rand(3) {
                    if adds || live.len() < 5 {
                        // under a slice or a random group
                        let parent = if rand(4) == 0 {
                            format!("s{}.slice/", rand(5))
                        } else {
                            format!("{}/", live[rand(live.len())])
                        };
                        let p = format!("{parent}n{next}");
                        next += 1;
                        mk_group(r, &p, next);
                        live.push(p);
                    } else {
                        // a leaf: cgroupfs removes only empty groups
                        let leaves: Vec<usize> = (0..live.len())
                            .filter(|&i| {
                                let pre = format!("{}/", live[i]);
                                !live.iter().any(|o| o.starts_with(&pre))
                            })
                            .collect();
                        let i = leaves[rand(leaves.len())];
                        fs::remove_dir_all(r.join(&live[i])).unwrap();
                        live.swap_remove(i);
                    }
                }
                fix_counts(r);
                let (got, n) = seen(&mut s);
                let (want, n_all) = seen(&mut Scanner::new(r.to_path_buf(), cfg.clone()));
                assert_eq!(got, want, "step {step} (max_kept {max_kept})");
                listed += n;
                all += n_all;
                let (_, cost) = s.scan();
                assert!(!cost.walked, "step {step}: a walk with nothing changed");
            }
            // and it did list less than full walks would have
            assert!(
                listed * 2 < all,
                "{listed} directories listed, {all} in full walks"
            );
        }
    }

    #[test]
    fn vanished_group_drops_out_and_rewalks() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        fs::remove_dir_all(t.path().join("a.slice/b c:ü")).unwrap();
        // the kept descriptors of a removed tmpfs file still read; a
        // cgroupfs file would give ENODEV. Either way the next walk drops it.
        s.invalidate();
        let (g, _) = s.scan();
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn reopen_when_budget_is_zero() {
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_kept: 0,
                ..ScanConfig::default()
            },
        );
        let (g, cost) = s.scan();
        assert_eq!(g.len(), 3);
        assert_eq!(s.kept(), 0);
        assert_eq!(cost.files_kept, 1); // only the start group's cgroup.stat
                                        // a file that goes away alone (controller disabled in the parent)
                                        // leaves the group in place, without that figure
        fs::remove_file(t.path().join("a.slice/memory.current")).unwrap();
        let (g, _) = s.scan();
        assert_eq!(g.len(), 3);
        assert_eq!(g[1].hot.memory_current, None);
        // a group whose directory went away drops out
        fs::remove_dir_all(t.path().join("a.slice/b c:ü")).unwrap();
        let (g, _) = s.scan();
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn no_group_without_its_parent_when_the_parent_is_replaced() {
        // The walk lists a directory by path: when a group is removed and
        // created again under the same name during the walk, its children
        // come from the new directory while the group itself keeps the old
        // inode, which then reads as gone. Seen in the VM under churn as a
        // child listed without its parent. Reopened files reproduce it.
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_kept: 0,
                rewalk_every: 0,
                ..ScanConfig::default()
            },
        );
        s.scan();
        // a new a.slice (made aside, so that no inode number is reused)
        // without the old one's hot files; its child has the same files
        mk(t.path(), "a.new", &[("cgroup.procs", "")]);
        mk(
            t.path(),
            "a.new/b c:ü",
            &[("cgroup.procs", "7\n"), ("io.stat", "")],
        );
        fs::remove_dir_all(t.path().join("a.slice")).unwrap();
        fs::rename(t.path().join("a.new"), t.path().join("a.slice")).unwrap();
        // the old a.slice reads as gone, its directory is there again:
        // the same scan lists both again, from the new directories (the
        // child, read by name under its old inode, is read again as the
        // new group), never the child without its parent
        let (g, cost) = s.scan();
        assert!(cost.walked);
        let names: Vec<&str> = g.iter().map(|x| as_text(&x.path)).collect();
        assert_eq!(names, ["", "a.slice", "a.slice/b c:ü"]);
        let ino = |rel: &str| {
            use std::os::unix::fs::MetadataExt;
            fs::metadata(t.path().join(rel)).unwrap().ino()
        };
        assert_eq!(g[1].inode, ino("a.slice"));
        assert_eq!(g[2].inode, ino("a.slice/b c:ü"));
        assert_eq!(g[2].hot.nr_procs, Some(1));
        // and the next one has nothing to list
        let (g, cost) = s.scan();
        assert!(!cost.walked);
        assert_eq!(g.len(), 3);
    }

    #[test]
    fn a_name_listed_twice_is_kept_once_the_last_listed() {
        let entry = |n: &str, ino| (OsString::from(n), PathBuf::from(n), ino);
        // kernfs under churn: the getdents call after c64 gave c64 again
        let mut children = vec![
            entry("c65", 5),
            entry("c63", 3),
            entry("c64", 4),
            entry("c64", 9),
            entry("c66", 6),
        ];
        once_each(&mut children);
        let got: Vec<(&str, u64)> = children
            .iter()
            .map(|(n, _, i)| (n.to_str().unwrap(), *i))
            .collect();
        assert_eq!(got, [("c63", 3), ("c64", 9), ("c65", 5), ("c66", 6)]);
    }

    #[test]
    fn a_group_walked_twice_is_in_the_scan_once() {
        // what a walk makes of a listing that gives `c64` twice (the VM
        // scale tier's churn: "c64 listed twice", "c64/sub listed twice"):
        // c64 and its subtree found twice. The scan holds each path once
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk_group(r, "", 0);
        mk_group(r, "churn/c63", 1);
        mk_group(r, "churn/c64/sub", 3);
        mk_group(r, "churn/c64", 2);
        mk_group(r, "churn/c65", 4);
        fix_counts(r);
        let mut s = Scanner::new(
            r.to_path_buf(),
            ScanConfig {
                rewalk_every: 0,
                ..ScanConfig::default()
            },
        );
        let (before, _) = seen(&mut s);
        let root_ino = s.hier.dir_ino(&s.root).unwrap();
        let mut found = Vec::new();
        let start = (GroupPath::root(), s.root.clone(), root_ino, 0);
        s.list_subtree(start, &mut found, &mut ScanCost::default());
        let again: Vec<Listed> = (found.iter())
            .filter(|f| as_text(&f.0).starts_with("churn/c64"))
            .cloned()
            .collect();
        assert_eq!(again.len(), 2);
        found.extend(again);
        s.reconcile(found, false);
        let (g, _) = s.read_prepared(ScanCost::default());
        let after: Vec<(String, u64, Option<u64>)> = g
            .iter()
            .map(|x| (x.path.to_string(), x.inode, x.hot.memory_current))
            .collect();
        assert_eq!(after, before, "each group once");
        // and the next scans too
        assert_eq!(seen(&mut s).0, before);
    }

    #[test]
    fn a_group_made_again_is_listed_in_the_same_scan() {
        // systemctl restart: rmdir + mkdir under the same name between two
        // scans, so no nr_descendants moves. The new group has a file the
        // old one had not, and lacks one it had (a reopened file that
        // fails, as a kept descriptor of a removed kernfs group does with
        // ENODEV); and with the same files (a reopened file by the same
        // name with another inode). Either way the scan that follows lists
        // the new group, under its new inode.
        for same_files in [false, true] {
            let t = tree();
            let r = t.path();
            let mut s = Scanner::new(
                r.to_path_buf(),
                ScanConfig {
                    max_kept: 0,
                    rewalk_every: 0,
                    ..ScanConfig::default()
                },
            );
            s.scan();
            let (g, cost) = s.scan();
            assert!(!cost.walked);
            let old = g[1].inode;
            let files: &[(&str, &str)] = if same_files {
                &[
                    ("cgroup.procs", ""),
                    ("cgroup.events", "populated 0\nfrozen 0\n"),
                    ("cpu.stat", "usage_usec 0\n"),
                    ("memory.current", "0\n"),
                    ("pids.current", "0\n"),
                ]
            } else {
                &[("cgroup.procs", ""), ("memory.current", "0\n")]
            };
            mk(r, "a.new", files);
            mk(r, "a.new/b c:ü", &[("cgroup.procs", "")]);
            fs::remove_dir_all(r.join("a.slice")).unwrap();
            fs::rename(r.join("a.new"), r.join("a.slice")).unwrap();
            let (g, cost) = s.scan();
            let names: Vec<&str> = g.iter().map(|x| as_text(&x.path)).collect();
            assert_eq!(
                names,
                ["", "a.slice", "a.slice/b c:ü"],
                "same files: {same_files}"
            );
            assert_ne!(g[1].inode, old, "the new group, not the old one");
            assert_eq!(g[1].hot.memory_current, Some(0));
            assert!(cost.walked, "listed again at once");
        }
    }

    #[test]
    fn the_stamp_falls_between_the_walk_and_the_reads() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        s.invalidate();
        // what the clock does is seen by the reads but not by the walk
        let (g, cost, stamp) = s.scan_stamped(|| {
            mk(t.path(), "late.slice", &[("cgroup.procs", "")]);
            fs::write(t.path().join("a.slice/memory.current"), "8192\n").unwrap();
            42
        });
        assert!(cost.walked);
        assert_eq!(stamp, 42);
        assert!(g.iter().all(|x| as_text(&x.path) != "late.slice"));
        let a = g.iter().find(|x| as_text(&x.path) == "a.slice").unwrap();
        assert_eq!(a.hot.memory_current, Some(8192));
    }

    #[test]
    fn small_budget_reopens_the_rest_and_says_so() {
        // kept: root procs + cpu.stat (2), a.slice events, cpu.stat,
        // memory.current, pids.current (4); "b c:ü" (procs, io.stat) is over
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_kept: 6,
                ..ScanConfig::default()
            },
        );
        let (g, cost) = s.scan();
        assert_eq!(s.kept(), 6);
        assert!(cost.fd_limited, "files over the budget are reopened");
        // every figure is still there, read with open/read/close
        assert_eq!(g[1].hot.memory_current, Some(4096));
        assert_eq!(g[2].hot.io.as_ref().unwrap().total().wbytes, Some(20));
        assert_eq!(g[2].pids(), Some(2));
        // a controller goes away from a.slice: the next walk gives the
        // reopened files the freed descriptors, and the flag clears
        fs::remove_file(t.path().join("a.slice/memory.current")).unwrap();
        fs::remove_file(t.path().join("a.slice/cpu.stat")).unwrap();
        s.invalidate();
        let (g, cost) = s.scan();
        assert_eq!(g.len(), 3);
        assert!(!cost.fd_limited);
        assert_eq!(s.kept(), 6);
        assert_eq!(g[2].pids(), Some(2));
    }

    #[test]
    fn memory_budget_is_a_share_of_ram() {
        const GIB: u64 = 1 << 30;
        assert_eq!(kept_budget_for_memory(24 * GIB), 19_660);
        assert_eq!(kept_budget_for_memory(64 * GIB), 52_428);
        assert_eq!(kept_budget_for_memory(GIB / 2), 1_024, "never below 1,024");
    }

    #[test]
    fn the_budget_stays_below_the_limit() {
        assert_eq!(budget_within(65_536, 1_024), 1_024 - 256);
        assert_eq!(budget_within(100, 1_024), 100);
        assert_eq!(
            budget_within(65_536, 100),
            0,
            "a limit below the reserve keeps none"
        );
        assert_eq!(budget_within(65_536, u64::MAX), 65_536, "unlimited");
    }

    #[test]
    fn a_scanner_never_changes_the_descriptor_limit() {
        use rustix::process::{getrlimit, Resource};
        let before = getrlimit(Resource::Nofile);
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        let after = getrlimit(Resource::Nofile);
        assert_eq!(
            (before.current, before.maximum),
            (after.current, after.maximum)
        );
        assert!(s.budget as u64 <= nofile_soft_limit().saturating_sub(FD_RESERVE));
    }

    #[test]
    fn procs_is_the_fallback_for_an_unreadable_pids_current() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        fs::write(t.path().join("a.slice/pids.current"), "garbage\n").unwrap();
        fs::write(t.path().join("a.slice/cgroup.procs"), "7\n8\n9\n").unwrap();
        let (g, _) = s.scan();
        assert_eq!(g[1].pids(), Some(3), "read through the lazy handle");
    }

    #[test]
    fn cgroup_type_is_read_for_new_groups_and_after_invalidate() {
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                rewalk_every: 0,
                ..ScanConfig::default()
            },
        );
        s.scan();
        fs::write(t.path().join("a.slice/cgroup.type"), "domain threaded\n").unwrap();
        // a group appears: the walk it causes reads only the new group's type
        mk(t.path(), "a.slice/new", &[("cgroup.type", "threaded\n")]);
        fs::write(
            t.path().join("cgroup.stat"),
            "nr_descendants 3\nnr_dying_descendants 0\n",
        )
        .unwrap();
        let (g, cost) = s.scan();
        assert!(cost.walked);
        assert_eq!(g.len(), 4);
        assert_eq!(g[1].cgroup_type, Some(CgroupType::Domain));
        assert_eq!(g[3].cgroup_type, Some(CgroupType::Threaded));
        // after our own write (invalidate) every type is read again
        s.invalidate();
        let (g, _) = s.scan();
        assert_eq!(g[1].cgroup_type, Some(CgroupType::DomainThreaded));
    }

    #[test]
    fn depth_limit_and_new_inode() {
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_depth: Some(1),
                ..ScanConfig::default()
            },
        );
        let (g, _) = s.scan();
        assert_eq!(g.len(), 2);
        let ino = g[1].inode;
        fs::remove_dir_all(t.path().join("a.slice")).unwrap();
        mk(t.path(), "a.slice", &[("cgroup.procs", "")]);
        s.invalidate();
        let (g, _) = s.scan();
        assert_ne!(g[1].inode, ino, "a recreated group is a new incarnation");
    }

    #[test]
    fn a_v1_scanner_sees_groups_come_and_go_without_cgroup_stat() {
        // by inotify, and (no watch to be had) by the directories' link
        // counts: a group made or removed two levels down is listed in the
        // next scan; a steady tree is not listed again
        for by_links in [false, true] {
            let t = tempfile::tempdir().unwrap();
            let r = t.path();
            mk(r, "", &[("cgroup.procs", ""), ("cpuacct.usage", "1000\n")]);
            mk(
                r,
                "a",
                &[
                    ("cpuacct.usage", "2000\n"),
                    ("memory.usage_in_bytes", "7\n"),
                ],
            );
            mk(r, "a/b", &[("cpuacct.usage", "3000\n")]);
            let cfg = ScanConfig {
                rewalk_every: 0,
                ..ScanConfig::default()
            };
            let mut s = Scanner::of_kind(
                Arc::new(Hier::open(r).unwrap()),
                ScanKind::V1 { procs: true },
                PathBuf::new(),
                cfg,
            );
            if by_links {
                s.notify_tried = true;
            }
            let (g, cost) = s.scan();
            assert!(cost.walked);
            assert_eq!(g.len(), 3);
            assert_eq!(g[1].hot.cpu.unwrap().usage_usec, 2, "ns -> µs");
            assert_eq!(g[1].hot.memory_current, Some(7));
            assert_eq!(s.by_links, if by_links { 3 } else { 0 });
            let (_, cost) = s.scan();
            assert!(!cost.walked, "steady (by_links {by_links})");
            mk(r, "a/b/new", &[("cpuacct.usage", "0\n")]);
            let (g, cost) = s.scan();
            assert!(cost.walked);
            assert_eq!(
                g.len(),
                4,
                "a new group in the next scan (by_links {by_links})"
            );
            let (_, cost) = s.scan();
            assert!(!cost.walked);
            fs::remove_dir_all(r.join("a/b/new")).unwrap();
            let (g, _) = s.scan();
            assert_eq!(g.len(), 3, "a removed one too (by_links {by_links})");
            // the removed directory's watch goes with an IN_IGNORED of
            // its own, which may cost one more listing
            let walks = (0..3).filter(|_| s.scan().1.walked).count();
            assert!(
                walks <= 1,
                "and steady again (by_links {by_links}): {walks}"
            );
            // no descriptor per group with inotify
            // three cpuacct.usage, memory.usage_in_bytes, the root's cgroup.procs
            let files = 5;
            assert_eq!(s.kept(), files + if by_links { 3 } else { 0 });
        }
    }

    #[test]
    fn a_v1_scanner_not_watching_sets_no_watch_until_told() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk(r, "", &[("cgroup.procs", ""), ("cpuacct.usage", "1000\n")]);
        mk(r, "a", &[("cpuacct.usage", "2000\n")]);
        let cfg = ScanConfig {
            rewalk_every: 0,
            ..ScanConfig::default()
        };
        let mut s = Scanner::of_kind(
            Arc::new(Hier::open(r).unwrap()),
            ScanKind::V1 { procs: true },
            PathBuf::new(),
            cfg,
        );
        s.set_watching(false);
        let (g, cost) = s.scan();
        assert!(cost.walked);
        assert_eq!(g.len(), 2);
        assert!(s.notify.is_none(), "no inotify instance");
        assert_eq!((s.by_notify, s.by_links), (0, 0), "no watch of any kind");
        assert_eq!(s.kept(), 3, "the counters' files only");
        // unwatched, a group made is not noticed (the periodic walk would)
        mk(r, "a/new", &[("cpuacct.usage", "0\n")]);
        let (g, cost) = s.scan();
        assert!(!cost.walked);
        assert_eq!(g.len(), 2);
        // watching from now on: listed again, every directory watched
        s.set_watching(true);
        let (g, cost) = s.scan();
        assert!(cost.walked);
        assert_eq!(g.len(), 3, "what came meanwhile is listed");
        assert_eq!(s.by_notify, 3);
        mk(r, "a/new/more", &[("cpuacct.usage", "0\n")]);
        assert_eq!(s.scan().0.len(), 4, "and a change is seen at once");
    }

    #[test]
    fn long_procs_file_is_read_whole() {
        let t = tempfile::tempdir().unwrap();
        let pids: String = (1..30_000).fold(String::new(), |mut s, p| {
            s.push_str(&p.to_string());
            s.push('\n');
            s
        });
        mk(t.path(), "", &[("cgroup.procs", &pids)]);
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (g, _) = s.scan();
        assert_eq!(g[0].hot.nr_procs, Some(29_999));
    }
}
