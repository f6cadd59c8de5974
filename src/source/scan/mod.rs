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
//!
//! The parts, one idea each:
//!
//! - `mod.rs`: `Scanner`, its settings and its entries (a group's
//!   handles), a scan's two halves (`prepare`: walk if needed;
//!   `read_prepared`: read, and list again at once a group made again).
//! - `hot`: which files are read for each kind of hierarchy and what each
//!   one's text sets.
//! - `changes`: whether groups came or went without listing (cgroup.stat;
//!   v1's inotify watches and link counts).
//! - `listing`: the walk, full or partial, and its guards against churn.
//! - `reconcile`: a listing taken as the entries, their descriptors kept,
//!   opened or closed.
//! - `reads`: one reading pass through kept or reopened descriptors, and
//!   the groups found gone.
//! - `budget`: how many descriptors may be kept (decided at start-up,
//!   shared by a layout's scanners).
//! - `paths`: one copy of each group path for a layout's scanners.
//! - `first_look`: which groups a first look's walk opens (the TUI's
//!   first frame on a large tree: `Collector::first_look`).

use super::hier::{self, Hier};
use crate::cgroupfs::CgroupType;
use crate::model::tree::part::Part;
use crate::model::tree::snapshot::fill_memory_limits;
use crate::model::{GroupPath, GroupSample, HotExtras, ScanCost};
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod budget;
mod changes;
mod first_look;
mod hot;
mod levels;
mod listing;
mod paths;
mod reads;
mod reconcile;
mod samples;
#[cfg(test)]
mod testing;

pub use budget::{
    budget_within, fd_budget, kept_budget_for_memory, raise_nofile_limit, swap_total, KeptPool,
    FD_RESERVE, KEPT_RAM_SHARE, KERNEL_BYTES_PER_KEPT,
};
pub use changes::MAX_WATCHES;
pub use first_look::FirstLook;
pub use hot::ScanKind;
pub use listing::list_groups;
pub use paths::SharedPaths;

use budget::nofile_soft_limit;
use changes::{watch_cap, Watch};
use hot::Table;
use listing::one_per_path;
use reads::drop_orphans;
use samples::{Keyed, Samples};

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

/// An entry's handles by the table's index, the `Absent` ones not
/// stored: a group of a v1 hierarchy has 1-3 of the table's 15 files,
/// a cgroup2 group 3-5 of 11 (a slot for each was 240 of an entry's 320
/// bytes, seven scanners of 10,000 entries at 10,000 groups). One handle,
/// the most common case (five of the six v1 hierarchies' groups, a
/// priming read's), is held in the entry itself, and two or more in a
/// list of their exact length: 24 bytes in the entry either way, where a
/// `Vec` was 24 and an allocation of 32 a group for the one handle.
#[derive(Debug, Default)]
enum Handles {
    #[default]
    None,
    One(u8, Handle),
    /// Two or more, sorted by index.
    Many(Box<[(u8, Handle)]>),
}

impl Handles {
    /// Every handle with its index, in the index's order.
    fn each(&self) -> impl Iterator<Item = (u8, &Handle)> {
        let (one, many) = match self {
            Self::None => (None, &[][..]),
            Self::One(k, h) => (Some((*k, h)), &[][..]),
            Self::Many(v) => (None, &v[..]),
        };
        one.into_iter().chain(many.iter().map(|(k, h)| (*k, h)))
    }

    /// [`Handles::each`], to change the handles.
    fn each_mut(&mut self) -> impl Iterator<Item = (u8, &mut Handle)> {
        let (one, many) = match self {
            Self::None => (None, &mut [][..]),
            Self::One(k, h) => (Some((*k, h)), &mut [][..]),
            Self::Many(v) => (None, &mut v[..]),
        };
        one.into_iter().chain(many.iter_mut().map(|(k, h)| (*k, h)))
    }

    /// The `j`-th handle (in the index's order) and its index.
    fn nth_mut(&mut self, j: usize) -> Option<(u8, &mut Handle)> {
        match self {
            Self::None => None,
            Self::One(k, h) => (j == 0).then_some((*k, h)),
            Self::Many(v) => v.get_mut(j).map(|(k, h)| (*k, h)),
        }
    }

    /// Where file `k`'s handle is (`Err`: where it would go).
    fn at(&self, k: usize) -> Result<usize, usize> {
        match self {
            Self::None => Err(0),
            Self::One(i, _) => match usize::from(*i).cmp(&k) {
                std::cmp::Ordering::Equal => Ok(0),
                std::cmp::Ordering::Less => Err(1),
                std::cmp::Ordering::Greater => Err(0),
            },
            Self::Many(v) => v.binary_search_by_key(&k, |(i, _)| usize::from(*i)),
        }
    }

    /// Whether file `k` has a kept descriptor.
    fn is_kept(&self, k: usize) -> bool {
        self.at(k).is_ok_and(|j| {
            self.each()
                .nth(j)
                .is_some_and(|(_, h)| matches!(h, Handle::Kept(_)))
        })
    }

    /// File `k`'s handle, taken out (`Absent` for none).
    fn take(&mut self, k: usize) -> Handle {
        match self.at(k) {
            Ok(j) => self.nth_mut(j).map_or(Handle::Absent, |(_, h)| {
                std::mem::replace(h, Handle::Absent)
            }),
            Err(_) => Handle::Absent,
        }
    }

    /// Sets file `k`'s handle (`Absent` removes it).
    fn set(&mut self, k: usize, h: Handle) {
        let at = self.at(k);
        if let (Ok(j), Handle::Absent) = (at, &h) {
            let mut v = self.drain();
            v.remove(j);
            *self = Self::of(v);
            return;
        }
        match at {
            Ok(j) => {
                if let Some((_, old)) = self.nth_mut(j) {
                    *old = h;
                }
            }
            Err(_) if matches!(h, Handle::Absent) => {}
            Err(j) => {
                // the table has at most MAX_FILES (15) files
                let k = u8::try_from(k).unwrap_or(u8::MAX);
                if let Self::None = self {
                    *self = Self::One(k, h);
                    return;
                }
                let mut v = self.drain();
                v.insert(j, (k, h));
                *self = Self::of(v);
            }
        }
    }

    /// Every handle, taken out: none is left.
    fn drain(&mut self) -> Vec<(u8, Handle)> {
        match std::mem::take(self) {
            Self::None => Vec::new(),
            Self::One(k, h) => vec![(k, h)],
            Self::Many(v) => v.into_vec(),
        }
    }

    /// The handles of `v` (sorted by index).
    fn of(mut v: Vec<(u8, Handle)>) -> Self {
        match v.len() {
            0 => Self::None,
            1 => v.pop().map_or(Self::None, |(k, h)| Self::One(k, h)),
            _ => Self::Many(v.into_boxed_slice()),
        }
    }

    /// Every file's handle that is not `Absent`, by index.
    fn iter(&self) -> impl Iterator<Item = (usize, &Handle)> {
        self.each().map(|(k, h)| (usize::from(k), h))
    }
}

#[derive(Debug)]
struct Entry {
    /// Relative to the start group; its directory is [`group_dir`]'s.
    path: GroupPath,
    inode: u64,
    cgroup_type: Option<CgroupType>,
    handles: Handles,
    /// v1 only: how a group made or removed below is noticed (cgroup2
    /// has cgroup.stat's nr_descendants instead).
    watch: Watch,
    /// cgroup2: whether cgroup.events is read on every refresh or only
    /// after inotify says it changed ([`EventsWatch`]).
    events: EventsWatch,
}

/// cgroup2's cgroup.events through its kept descriptor: the kernel
/// notifies (IN_MODIFY) when `populated` or `frozen` changes, so a
/// watched file is read again only after an event names its watch; one
/// read of the scanner's inotify descriptor a refresh instead of a pread
/// a group. The watch is set at a group's second read (a run that reads
/// once sets none) and only while the scanner watches
/// ([`Scanner::set_watching`]), within the same cap as v1's directory
/// watches ([`watch_cap`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum EventsWatch {
    /// Not read through the current descriptor yet.
    #[default]
    Unread,
    /// Read once, not watched: read again, and watched then.
    Read,
    /// Read on every refresh: its watch was refused (not for want of
    /// watches, [`changes::NoWatch::Refused`]), and is not asked for
    /// again through this descriptor.
    Unwatchable,
    /// Watched (`wd`); `last` is what the last read gave.
    Watched {
        wd: i32,
        last: Option<crate::cgroupfs::CgroupEvents>,
    },
}

/// The read buffer's size: every hot file fits (cgroup.procs of a
/// group with thousands of processes grows it for that read only).
const SCRATCH: usize = 64 * 1024;

/// The directory of the group at `path` (relative to the start group
/// `root`), relative to the hierarchy's root: `path` itself where the scan
/// starts at the root, as it does but for `cgtop GROUP` (no allocation),
/// else below `root`. Not kept in each entry: that was a second copy of
/// every path (1.3 MB at 10,000 groups, in each hierarchy's scanner).
fn group_dir<'a>(root: &Path, path: &'a GroupPath) -> std::borrow::Cow<'a, Path> {
    let rel = path.as_rel_path();
    if root.as_os_str().is_empty() {
        std::borrow::Cow::Borrowed(rel)
    } else if rel.as_os_str().is_empty() {
        std::borrow::Cow::Owned(root.to_path_buf())
    } else {
        std::borrow::Cow::Owned(root.join(rel))
    }
}

/// The open directories of a group's ancestors while groups are taken
/// in order (a parent before its children), so that a group's
/// directory and files are opened from the nearest one by the rest of
/// their path instead of by the whole path from the hierarchy's root,
/// which costs as the square of a chain's depth. At most
/// [`listing::HELD_DIRS`] are held (the deepest).
#[derive(Default)]
pub struct DirsBelow {
    held: Vec<(PathBuf, hier::GroupDir)>,
}

/// A group's directory as [`DirsBelow::open`] gives it: the one held, or
/// its own (closed when dropped).
pub enum Reached<'a> {
    Held(&'a hier::GroupDir),
    Own(hier::GroupDir),
}

impl std::ops::Deref for Reached<'_> {
    type Target = hier::GroupDir;
    fn deref(&self) -> &hier::GroupDir {
        match self {
            Self::Held(d) => d,
            Self::Own(d) => d,
        }
    }
}

impl DirsBelow {
    /// The directory `dir` (relative to the hierarchy's root), opened
    /// from the nearest held ancestor by the rest of its path, or by the
    /// whole path where none is held; held itself when groups below it
    /// follow (`has_child`), within [`listing::HELD_DIRS`]. For a caller
    /// that takes groups parent first and opens each one's files from
    /// its directory (the event watcher). A directory nested past
    /// PATH_MAX is not opened, as the walk does not list below it:
    /// nothing else could reach it by its path.
    pub fn open(
        &mut self,
        hier: &Hier,
        dir: &Path,
        has_child: bool,
    ) -> Result<Reached<'_>, hier::FsError> {
        if dir.as_os_str().len() >= listing::PATH_MAX {
            return Err(hier::FsError::Errno(crate::model::Errno::NAMETOOLONG));
        }
        let (from, rel) = self.reach(hier, dir, has_child);
        match from.and_then(|i| self.held.get(i)).map(|(_, d)| d) {
            Some(d) if rel.as_os_str().is_empty() => Ok(Reached::Held(d)),
            Some(d) => hier.open_dir_below(d, &rel).map(Reached::Own),
            None => hier.open_group_dir(dir).map(Reached::Own),
        }
    }

    /// Where `dir`'s files are opened from: the held directory (its
    /// index) and the path below it, or (`None`) the path from the root.
    /// `dir` itself is opened and held when groups below it follow.
    fn reach(&mut self, hier: &Hier, dir: &Path, has_child: bool) -> (Option<usize>, PathBuf) {
        while self
            .held
            .last()
            .is_some_and(|(p, _)| below_dir(dir, p).is_none())
        {
            self.held.pop();
        }
        let below = |held: &[(PathBuf, hier::GroupDir)]| {
            let (p, _) = held.last()?;
            below_dir(dir, p).map(|r| PathBuf::from(OsStr::from_bytes(r)))
        };
        if has_child {
            if self.held.len() >= listing::HELD_DIRS {
                // the shallowest gives way (a chain: its groups are done)
                self.held.remove(0);
            }
            let opened = match (self.held.last(), below(&self.held)) {
                (Some((_, d)), Some(rel)) if !rel.as_os_str().is_empty() => {
                    hier.open_dir_below(d, &rel)
                }
                _ => hier.open_group_dir(dir),
            };
            if let Ok(d) = opened {
                self.held.push((dir.to_path_buf(), d));
                return (Some(self.held.len() - 1), PathBuf::new());
            }
        }
        match below(&self.held) {
            // the held one itself (taken again: another of its files)
            // or one below it
            Some(rel) => (Some(self.held.len() - 1), rel),
            None => (None, dir.to_path_buf()),
        }
    }

    fn get(&self, i: usize) -> Option<&hier::GroupDir> {
        self.held.get(i).map(|(_, d)| d)
    }

    /// File `name` of the group directory `dir` read as text, from the
    /// nearest held ancestor's directory by the rest of its path (or by
    /// the whole path where none is held); `dir` is held when groups
    /// below it follow (`has_child`), as [`DirsBelow::open`] does. For a
    /// caller that takes groups parent first and reads a file or two of
    /// each (the event watcher's reads of changed files).
    pub fn read_text(
        &mut self,
        hier: &Hier,
        dir: &Path,
        has_child: bool,
        name: &str,
    ) -> Result<String, hier::FsError> {
        if dir.as_os_str().len() >= listing::PATH_MAX {
            return Err(hier::FsError::Errno(crate::model::Errno::NAMETOOLONG));
        }
        let (from, rel) = self.reach(hier, dir, has_child);
        match from.and_then(|i| self.get(i)) {
            Some(d) => d.read_text_below(&rel.join(name)),
            None => hier.read_text(&dir.join(name)),
        }
    }
}

/// The order of a walk, parent first and each subtree together: paths
/// (relative to the hierarchy's root) compared as bytes with `/` below
/// every other byte (plain byte order puts `a-b` between `a` and `a/c`).
/// The common start is compared in blocks first: the paths of a deep
/// chain share thousands of bytes.
pub fn walk_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let mut i = 0;
    while i + 64 <= a.len().min(b.len()) && a[i..i + 64] == b[i..i + 64] {
        i += 64;
    }
    let key = |c: &u8| if *c == b'/' { 0 } else { *c };
    a[i..].iter().map(key).cmp(b[i..].iter().map(key))
}

/// Whether `dir` is strictly below `top` (both relative to the
/// hierarchy's root), compared as bytes ([`below_dir`]): whether a group
/// taken after `top` is one of its descendants ([`DirsBelow::open`]'s
/// `has_child`).
pub fn is_below(dir: &Path, top: &Path) -> bool {
    below_dir(dir, top).is_some_and(|r| !r.is_empty())
}

/// `dir`'s path below `top` (empty: `top` itself), or `None` when `dir`
/// is not in it; compared as bytes (`Path::starts_with` parses both
/// paths' components: a 2,000-deep chain's square again).
fn below_dir<'a>(dir: &'a Path, top: &Path) -> Option<&'a [u8]> {
    let (d, t) = (dir.as_os_str().as_bytes(), top.as_os_str().as_bytes());
    if t.is_empty() {
        return Some(d);
    }
    match d.strip_prefix(t)? {
        [] => Some(&[]),
        [b'/', rest @ ..] => Some(rest),
        _ => None,
    }
}

/// A group's cgroup.type from its open file (read as `GroupDir::read_text`
/// reads it: capped); `None` where it cannot be read or says nothing known.
fn read_type(f: &File) -> Option<CgroupType> {
    let mut buf = Vec::new();
    let n = hier::read_capped(
        f,
        &mut buf,
        hier::cap_for(crate::cgroupfs::files::TYPE),
        true,
    )
    .ok()?;
    buf.truncate(n);
    CgroupType::parse(std::str::from_utf8(&buf).ok()?).ok()
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
    /// cgroup2: entries whose cgroup.events is watched
    /// ([`EventsWatch::Watched`]), within `max_notify`.
    by_events: usize,
    /// cgroup2: the watches of cgroup.events asked for, all told
    /// (inotify_add_watch calls).
    events_tried: u64,
    /// The budget shared with other hierarchies' scanners, and this
    /// one's slot in it.
    pool: Option<(Arc<KeptPool>, usize)>,
    /// The group paths shared with other hierarchies' scanners
    /// ([`Scanner::share_paths`]).
    paths: Option<Arc<SharedPaths>>,
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
    /// The first walk's new groups' files, opened from their directories
    /// as they were listed, by directory inode, until `reconcile` takes
    /// them.
    /// (each with the order it was made in, for a directory listed twice)
    preopened: Vec<(u64, u32, Option<reconcile::Preopened>)>,
    /// A file the first walk opened was left to open/read/close for want
    /// of descriptors (`fd_limited` from `reconcile` on).
    preopen_limited: bool,
    /// A first look: the walk lists the children of the groups its rule
    /// opens only ([`Scanner::set_first_look`]).
    look: Option<FirstLook>,
    /// Read only the counters rates are computed from
    /// ([`Scanner::set_priming`]).
    priming: bool,
    /// Read only the files no rate is computed from
    /// ([`Scanner::read_levels`]).
    levels_only: bool,
    /// The level figures [`Scanner::read_levels`] read, by directory
    /// inode: the next scan reads only the rate counters of these groups
    /// and takes the rest from here, once.
    levels: levels::Levels,
    /// The files a priming walk left unopened, by directory inode and
    /// table index ([`Scanner::open_deferred`]).
    deferred_opens: Vec<(u64, u8)>,
    /// Entries (by directory inode) whose directory [`Scanner::open_deferred`]
    /// found another group's: the next pass takes them as made again.
    stale_dirs: Vec<u64>,
    /// Keep the level figures of the next scan for the one after it
    /// ([`Scanner::set_keep_levels`]).
    keep_levels: bool,
    /// Read v1 cpuacct's user/system split ([`Scanner::set_cpu_split`]).
    cpu_split: bool,
    /// Read v1 blkio's operation counts ([`Scanner::set_io_ops`]).
    io_ops: bool,
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
            by_events: 0,
            events_tried: 0,
            pool: None,
            paths: None,
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
            buf: vec![0; SCRATCH],
            extras: HotExtras::default(),
            preopened: Vec::new(),
            preopen_limited: false,
            look: None,
            priming: false,
            levels_only: false,
            levels: levels::Levels::default(),
            keep_levels: false,
            deferred_opens: Vec::new(),
            stale_dirs: Vec::new(),
            cpu_split: true,
            io_ops: true,
        }
    }

    /// A scanner of the same hierarchy, start group, settings and extra
    /// files, with no entry, no descriptor and no watch: for a first look
    /// ([`Scanner::set_first_look`]) beside this one.
    #[must_use]
    pub fn fresh(&self) -> Self {
        let mut s = Self::of_kind(
            Arc::clone(&self.hier),
            self.kind,
            self.root.clone(),
            self.cfg.clone(),
        );
        s.extras = self.extras;
        s.cpu_split = self.cpu_split;
        s.io_ops = self.io_ops;
        s.paths.clone_from(&self.paths);
        s.watching = false;
        s
    }

    /// Makes the walks list the children of the groups `look` opens only
    /// (the TUI's first frame: `Collector::first_look`); `None`: every
    /// group's, as always.
    pub fn set_first_look(&mut self, look: Option<FirstLook>) {
        self.look = look;
    }

    /// What the first look's walk opened and left closed.
    pub fn first_look(&self) -> Option<&FirstLook> {
        self.look.as_ref()
    }

    /// Whether the scans read only the files rates are computed from
    /// (cpu.stat, io.stat; v1's cpuacct.*, cpu.stat and blkio counters):
    /// the priming read of a run whose first output needs rates (`-b`,
    /// `--json`), which is only their baseline. The walk is the same
    /// (every directory listed, every wanted file opened and kept within
    /// the budget), so the next scan reads every file once, through the
    /// descriptors this one opened: a file no rate uses is read once in
    /// all, not twice. The samples of a priming scan have only those
    /// counters.
    pub fn set_priming(&mut self, on: bool) {
        self.priming = on;
    }

    /// Reads every file no rate is computed from (memory, PIDs, state,
    /// cgroup.events, the columns' extras), through the descriptors the
    /// last walk kept, and keeps those figures for the next scan, which
    /// then reads only the rate counters of those groups and takes the
    /// rest from here (a group it finds anew, or under another inode, it
    /// reads whole). A one-shot run reads them within its interval, after
    /// the priming read, so that what comes after the interval is a pread
    /// of each rate counter; the figures are then up to an interval old.
    /// Walks nothing (a group gone is dropped, one made again under its
    /// name listed, as by any scan's reads).
    pub fn read_levels(&mut self) {
        self.levels_only = true;
        // the levels are kept by the pass (those of groups with a counter)
        let (part, _) = self.read_part(ScanCost::default());
        part.give_back();
        self.levels_only = false;
    }

    /// Opens, and keeps within the budget, the files a priming walk left
    /// unopened (`preopen`): before the first read that reads them. A
    /// group removed and made again under its name since the walk is
    /// another group, whose files must not be read as the entry's. On
    /// kernfs a kept rate counter proves it later at no cost: a kept file
    /// of a removed group reads ENODEV, and the read that would show these
    /// files' figures finds the group made again, drops them and lists it
    /// anew. Elsewhere (no counter kept, a `--root` tree off kernfs) the
    /// group's directory is opened once and its inode compared with the
    /// entry's; one that differs is taken by the pass that follows as made
    /// again (`stale_dirs`), and the files are opened by name from that
    /// directory, so they are its own.
    fn open_deferred(&mut self) {
        let mut deferred = std::mem::take(&mut self.deferred_opens);
        if deferred.is_empty() {
            return;
        }
        deferred.sort_unstable();
        let table = self.table;
        let kernfs = self.hier.is_kernfs();
        let mut entries = std::mem::take(&mut self.entries);
        // opened from the nearest ancestor's directory ([`DirsBelow`]),
        // not by the whole path from the root (a deep chain's cost)
        let mut dirs = DirsBelow::default();
        for i in 0..entries.len() {
            let next = entries.get(i + 1).map(|n| n.path.clone());
            let e = &mut entries[i];
            let ino = e.inode;
            let wanted = |k: u8, h: &Handle| {
                matches!(h, Handle::Reopen(None)) && deferred.binary_search(&(ino, k)).is_ok()
            };
            // cgroup.type, left unread by the priming walk (`preopen`)
            let type_due = u8::try_from(hot::TYPE_BIT)
                .is_ok_and(|k| deferred.binary_search(&(ino, k)).is_ok());
            if !type_due && !e.handles.each().any(|(k, h)| wanted(k, h)) {
                continue;
            }
            let proved_later = kernfs
                && e.handles.each().any(|(k, h)| {
                    matches!(h, Handle::Kept(_))
                        && table
                            .get(usize::from(k))
                            .is_some_and(|(kind, _)| kind.counts_for_rates())
                });
            let path = group_dir(&self.root, &e.path).into_owned();
            let has_child = next.as_ref().is_some_and(|n| {
                let n = group_dir(&self.root, n);
                below_dir(&n, &path).is_some_and(|r| !r.is_empty())
            });
            let (from, rel) = dirs.reach(&self.hier, &path, has_child);
            let held = from.and_then(|d| dirs.get(d));
            // the group's own directory, where it is to be checked and
            // is not the one held
            let own = if proved_later || (held.is_some() && rel.as_os_str().is_empty()) {
                None
            } else {
                let opened = match held {
                    Some(d) => self.hier.open_dir_below(d, &rel),
                    None => self.hier.open_group_dir(&path),
                };
                // gone: the pass finds it so
                let Ok(dir) = opened else {
                    continue;
                };
                Some(dir)
            };
            let dir = if proved_later {
                None
            } else {
                own.as_ref().or(held)
            };
            if let Some(dir) = dir {
                match dir.ino() {
                    Ok(now) if now == ino => {}
                    Ok(_) => {
                        self.stale_dirs.push(ino);
                        continue;
                    }
                    Err(_) => continue,
                }
            }
            if type_due {
                let name = crate::cgroupfs::files::TYPE;
                let f = match (dir, held) {
                    (Some(dir), _) => dir.open_read(name),
                    (None, Some(d)) => d.open_read_below(&rel.join(name)),
                    (None, None) => self.hier.open_read_kernfs(&path.join(name)),
                };
                e.cgroup_type = f.ok().and_then(|f| read_type(&f));
            }
            for (k, h) in e.handles.each_mut() {
                let Some((_, name)) = table.get(usize::from(k)) else {
                    continue;
                };
                if wanted(k, h) && self.room() {
                    let f = match (dir, held) {
                        (Some(dir), _) => dir.open_read(name),
                        (None, Some(d)) => d.open_read_below(&rel.join(name)),
                        (None, None) => self.hier.open_read_kernfs(&path.join(name)),
                    };
                    if let Ok(f) = f {
                        self.kept += 1;
                        // the scanners of other hierarchies open theirs
                        // at the same time (`Collector::read_levels`): each
                        // sees this one's count as it grows, as `preopen`
                        self.publish();
                        *h = Handle::Kept(f);
                    }
                }
            }
        }
        self.entries = entries;
        crate::model::heap::give_back(deferred);
    }

    /// Whether the scans keep their level figures for the next scan, as
    /// [`Scanner::read_levels`] does: the TUI's first refresh, whose
    /// levels are on screen when the second (the first rates, 200 ms
    /// later) reads only the rate counters of the groups they prove.
    pub fn set_keep_levels(&mut self, on: bool) {
        self.keep_levels = on;
    }

    /// Whether a v1 cpuacct hierarchy's user/system split is read
    /// (cpuacct.usage_user and cpuacct.usage_sys, else cpuacct.stat); on
    /// by default. Off for an output that shows CPU time whole (`-b`'s
    /// table: CPU% is cpuacct.usage's), which then opens and reads two
    /// files a group fewer; cgroup2's cpu.stat holds the split in the
    /// same text and is read as ever. A change re-lists every directory
    /// once, as [`Scanner::set_extras`] does.
    pub fn set_cpu_split(&mut self, on: bool) {
        if on != self.cpu_split {
            self.cpu_split = on;
            self.need_walk = true;
            self.need_full = true;
        }
    }

    /// Whether a v1 blkio hierarchy's operation counts are read
    /// (blkio.throttle.io_serviced_recursive, else io_serviced); on by
    /// default. Off for an output that shows no IO operations (`-b`'s
    /// table: READ/s and WRITE/s are bytes, from io_service_bytes),
    /// which then opens and reads one file a group fewer; cgroup2's
    /// io.stat holds both in the same text and is read as ever. A change
    /// re-lists every directory once, as [`Scanner::set_extras`] does.
    pub fn set_io_ops(&mut self, on: bool) {
        if on != self.io_ops {
            self.io_ops = on;
            self.need_walk = true;
            self.need_full = true;
        }
    }

    /// Shares the descriptor budget with other scanners: slot `me` of
    /// `pool`.
    pub fn share_budget(&mut self, pool: Arc<KeptPool>, me: usize) {
        self.pool = Some((pool, me));
    }

    /// Shares one copy of each group path with other hierarchies'
    /// scanners (a v1 or hybrid layout's): an entry made by a walk takes
    /// the copy another scanner holds, so that a group's path is held once
    /// whatever the number of hierarchies, and the merge finds it by
    /// pointer.
    pub fn share_paths(&mut self, paths: Arc<SharedPaths>) {
        self.paths = Some(paths);
    }

    /// Reads these extra files from the next scan on (the columns shown
    /// changed). A change re-lists every directory once, which opens the
    /// files now wanted and closes those no longer wanted.
    pub fn set_extras(&mut self, extras: HotExtras) {
        if extras != self.extras {
            self.extras = extras;
            self.levels.clear();
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
        self.levels.clear();
    }

    /// Forgets the level figures kept for the next scan (too old, or
    /// read with other files wanted): it reads every file.
    pub fn clear_levels(&mut self) {
        self.levels.clear();
    }

    /// Lets go of every entry (its descriptors closed, its watch gone),
    /// the levels kept and the files preopened: after the last read of a
    /// run (`Collector::set_last_refresh`). The next scan walks anew, as
    /// the first.
    pub fn release(&mut self) {
        crate::model::heap::give_back(std::mem::take(&mut self.entries));
        crate::model::heap::give_back(std::mem::take(&mut self.preopened));
        self.levels.clear();
        self.deferred_opens = Vec::new();
        self.notify = None;
        self.notify_tried = false;
        (self.kept, self.by_links, self.by_notify, self.by_events) = (0, 0, 0, 0);
        self.need_walk = true;
        self.need_full = true;
        self.reread_types = true;
        self.publish();
    }

    /// Number of descriptors currently kept open.
    pub fn kept(&self) -> usize {
        self.kept
    }

    /// How many descriptors may be kept in all (this scanner's, and those
    /// of whatever shares its pool): `ScanConfig::max_kept`, less where
    /// RLIMIT_NOFILE's soft limit leaves less above [`FD_RESERVE`].
    pub fn budget(&self) -> usize {
        self.budget
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
    pub fn read_prepared(&mut self, cost: ScanCost) -> (Vec<GroupSample>, ScanCost) {
        let (mut out, cost) = self.read_into::<Vec<GroupSample>>(cost);
        if self.extras.memory_max {
            fill_memory_limits(&mut out);
        }
        (out, cost)
    }

    /// [`Scanner::read_prepared`] for a merge of several hierarchies
    /// (`union::Merging::add_part`): the figures read of each group only,
    /// not a whole sample (400 bytes) a group; no memory limit filled in
    /// (the merged list's is).
    pub fn read_part(&mut self, cost: ScanCost) -> (Part, ScanCost) {
        let (out, cost) = self.read_into::<samples::PartOut>(cost);
        (out.part, cost)
    }

    fn read_into<S: Samples>(&mut self, mut cost: ScanCost) -> (S, ScanCost) {
        if !self.priming {
            self.open_deferred();
        }
        let mut pass = self.read_pass::<S>(|_| true, &mut cost);
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
            pass.out.groups().retain(|g| {
                let (path, inode) = g.key();
                current.get(path.as_bytes()) == Some(&inode)
            });
            let read: std::collections::HashSet<(GroupPath, u64)> = (pass.out.groups().iter())
                .map(|g| {
                    let (path, inode) = g.key();
                    (path.clone(), inode)
                })
                .collect();
            // the groups the walk found anew: read once, in this refresh
            // (a further failure is left to the next refresh's walk)
            let more =
                self.read_pass::<S>(|e| !read.contains(&(e.path.clone(), e.inode)), &mut cost);
            any_gone |= more.gone;
            pass.out.append(more.out);
            (pass.out.groups()).sort_by(|a, b| a.key().0.cmp(b.key().0));
        }
        let mut out = pass.out;
        // entries hold one of each path (reconcile): this costs a compare
        // a group, and keeps a snapshot free of duplicates whatever the
        // walk did
        one_per_path(out.groups(), Keyed::key);
        if any_gone {
            drop_orphans(out.groups());
        }
        cost.fd_limited |= self.fd_limited;
        self.publish();
        (out, cost)
    }

    fn is_v1(&self) -> bool {
        matches!(self.kind, ScanKind::V1 { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::scan::testing::*;
    use std::fs;

    fn indexes(h: &Handles) -> Vec<(usize, Option<u64>)> {
        h.iter()
            .map(|(k, h)| match h {
                Handle::Reopen(ino) => (k, *ino),
                _ => (k, None),
            })
            .collect()
    }

    #[test]
    fn handles_hold_one_inline_and_stay_sorted_as_they_grow_and_shrink() {
        // no bigger in the entry than the list it replaces
        assert!(std::mem::size_of::<Handles>() <= std::mem::size_of::<Vec<(u8, Handle)>>());
        let mut h = Handles::default();
        h.set(7, Handle::Reopen(Some(70)));
        assert!(matches!(h, Handles::One(7, _)), "one is held inline");
        assert_eq!(indexes(&h), vec![(7, Some(70))]);
        // a second before it, a third after: sorted by index
        h.set(2, Handle::Reopen(Some(20)));
        h.set(9, Handle::Reopen(Some(90)));
        assert!(matches!(&h, Handles::Many(v) if v.len() == 3));
        assert_eq!(
            indexes(&h),
            vec![(2, Some(20)), (7, Some(70)), (9, Some(90))]
        );
        // replaced in place, looked up by index
        h.set(7, Handle::Reopen(Some(71)));
        assert!(!h.is_kept(7) && h.at(9) == Ok(2) && h.at(3) == Err(1));
        assert!(matches!(h.take(2), Handle::Reopen(Some(20))));
        assert!(matches!(h.take(4), Handle::Absent));
        // `Absent` removes, back to one inline
        h.set(2, Handle::Absent);
        h.set(9, Handle::Absent);
        assert!(matches!(h, Handles::One(7, _)));
        assert_eq!(indexes(&h), vec![(7, Some(71))]);
        h.set(7, Handle::Absent);
        assert!(matches!(h, Handles::None) && indexes(&h).is_empty());
        // a second after the one held inline, and before it
        let mut one = Handles::default();
        one.set(5, Handle::Reopen(None));
        one.set(1, Handle::Absent);
        one.set(6, Handle::Reopen(Some(60)));
        assert_eq!(indexes(&one), vec![(5, None), (6, Some(60))]);
        let mut one = Handles::of(vec![(4, Handle::Reopen(Some(40)))]);
        one.set(3, Handle::Reopen(None));
        assert_eq!(indexes(&one), vec![(3, None), (4, Some(40))]);
        // the j-th, to change in place
        if let Some((k, h)) = one.nth_mut(1) {
            assert_eq!(k, 4);
            *h = Handle::Reopen(Some(41));
        }
        assert!(one.nth_mut(2).is_none());
        assert_eq!(indexes(&one), vec![(3, None), (4, Some(41))]);
        let kept = Handles::of(vec![(1, Handle::Kept(File::open("/dev/null").unwrap()))]);
        assert!(kept.is_kept(1) && !kept.is_kept(0));
    }

    /// A hot file larger than the read buffer (a cgroup.procs of 20,000
    /// processes) grows it for that pass only.
    #[test]
    fn a_grown_read_buffer_is_shrunk_after_the_pass() {
        let t = tree();
        let pids = (1..=20_000).fold(String::new(), |mut s, p| {
            s.push_str(&p.to_string());
            s.push('\n');
            s
        });
        mk(t.path(), "big.slice", &[("cgroup.procs", &pids)]);
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (g, _) = s.scan();
        let big = g.iter().find(|x| as_text(&x.path) == "big.slice").unwrap();
        assert_eq!(big.hot.nr_procs, Some(20_000), "read whole");
        assert!(pids.len() > SCRATCH);
        assert!(
            s.buf.capacity() <= SCRATCH,
            "{} bytes kept after the pass",
            s.buf.capacity()
        );
    }

    /// A tree of the root and `a.slice`, whose memory.current is `mem`.
    fn primed_tree(mem: u64) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        mk(
            t.path(),
            "",
            &[
                ("cgroup.procs", ""),
                ("cgroup.stat", "nr_descendants 1\nnr_dying_descendants 0\n"),
                ("cpu.stat", "usage_usec 100\n"),
            ],
        );
        mk_a(t.path(), "a.slice", mem);
        t
    }

    fn mk_a(root: &Path, rel: &str, mem: u64) {
        let mem = format!("{mem}\n");
        mk(
            root,
            rel,
            &[
                ("cgroup.procs", ""),
                ("cpu.stat", "usage_usec 50\n"),
                ("memory.current", &mem),
            ],
        );
    }

    /// `a.slice` removed and made again under its name (made aside and
    /// renamed, so that no inode number is reused); its new inode.
    fn make_again(root: &Path, mem: u64) -> u64 {
        use std::os::unix::fs::MetadataExt;
        mk_a(root, "a.new", mem);
        fs::remove_dir_all(root.join("a.slice")).unwrap();
        fs::rename(root.join("a.new"), root.join("a.slice")).unwrap();
        fs::metadata(root.join("a.slice")).unwrap().ino()
    }

    /// The one-shot run's order: a priming scan (rate counters only, the
    /// other files' opens deferred), the levels within the interval, the
    /// final scan.
    fn one_shot(s: &mut Scanner, between: impl FnOnce()) -> Vec<GroupSample> {
        s.set_priming(true);
        s.scan();
        s.set_priming(false);
        between();
        s.read_levels();
        s.scan().0
    }

    #[test]
    fn a_group_made_again_before_the_deferred_opens_keeps_none_of_its_files_on_the_old_entry() {
        let t = primed_tree(4096);
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let mut new_ino = 0;
        let g = one_shot(&mut s, || new_ino = make_again(t.path(), 999));
        let a: Vec<_> = g
            .iter()
            .filter(|x| as_text(&x.path) == "a.slice")
            .map(|x| (x.inode, x.hot.memory_current))
            .collect();
        // the new group's figure under the new group's inode: not under
        // the old entry's (whose counters a tmpfs descriptor still reads)
        assert_eq!(a, [(new_ino, Some(999))]);
    }

    #[test]
    fn the_levels_read_are_kept_when_another_group_is_found_made_again() {
        // `b.slice` made again before the levels are read: the pass lists
        // it again and reads it in a second pass; `a.slice`'s levels, read
        // in the first, are still the final scan's (its memory.current
        // changed after: the level read within the interval is shown, the
        // file is not read again)
        let t = primed_tree(4096);
        mk_a(t.path(), "b.slice", 1);
        fs::write(
            t.path().join("cgroup.stat"),
            "nr_descendants 2\nnr_dying_descendants 0\n",
        )
        .unwrap();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.set_priming(true);
        s.scan();
        s.set_priming(false);
        mk_a(t.path(), "b.new", 2);
        fs::remove_dir_all(t.path().join("b.slice")).unwrap();
        fs::rename(t.path().join("b.new"), t.path().join("b.slice")).unwrap();
        s.read_levels();
        fs::write(t.path().join("a.slice/memory.current"), "12345\n").unwrap();
        let (g, _) = s.scan();
        let mem = |n: &str| {
            g.iter()
                .find(|x| as_text(&x.path) == n)
                .and_then(|x| x.hot.memory_current)
        };
        assert_eq!((mem("a.slice"), mem("b.slice")), (Some(4096), Some(2)));
    }

    /// A part (`read_part`, for a merge) holds what the samples of a
    /// scan hold (`read_prepared`), group by group: as read, and when a
    /// group was made again (its old files gone, the walk at once).
    #[test]
    fn a_part_reads_what_the_samples_read() {
        let t = tree();
        let r = t.path();
        let cfg = ScanConfig {
            max_kept: 0,
            rewalk_every: 0,
            ..ScanConfig::default()
        };
        let mut whole = Scanner::new(r.to_path_buf(), cfg.clone());
        let mut part = Scanner::new(r.to_path_buf(), cfg);
        let both = |whole: &mut Scanner, part: &mut Scanner| {
            let (want, wc) = whole.scan();
            let cost = part.prepare();
            let (p, pc) = part.read_part(cost);
            let mut got = Vec::new();
            p.for_each(|g| got.push(g.clone()));
            assert_eq!(got, want);
            assert_eq!((pc.walked, pc.files_read), (wc.walked, wc.files_read));
            got
        };
        let first = both(&mut whole, &mut part);
        assert_eq!(first.len(), 3);
        assert_eq!(first[1].hot.memory_current, Some(4096));
        both(&mut whole, &mut part);
        // a.slice made again with other files: its old ones are gone
        mk(
            r,
            "a.new",
            &[("cgroup.procs", ""), ("memory.current", "0\n")],
        );
        mk(r, "a.new/b c:ü", &[("cgroup.procs", "")]);
        fs::remove_dir_all(r.join("a.slice")).unwrap();
        fs::rename(r.join("a.new"), r.join("a.slice")).unwrap();
        let again = both(&mut whole, &mut part);
        assert_eq!(again.len(), 3);
        assert_eq!(again[1].hot.memory_current, Some(0));
    }

    /// After a run's last read the scanner holds no entry and no
    /// descriptor; a scan after it walks anew and reads the same groups.
    #[test]
    fn a_released_scanner_holds_nothing_and_walks_anew() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (before, _) = s.scan();
        assert!(s.kept() > 0);
        s.release();
        assert_eq!(s.kept(), 0);
        assert!(s.entries.is_empty());
        let (after, cost) = s.scan();
        assert!(cost.walked);
        let paths = |g: &[GroupSample]| -> Vec<String> {
            g.iter().map(|x| as_text(&x.path).to_owned()).collect()
        };
        assert_eq!(paths(&after), paths(&before));
        assert_eq!(after[1].hot.memory_current, Some(4096));
    }

    /// A chain of groups 500 deep (each directory opened from its
    /// parent's, the files a priming walk left from the nearest open
    /// ancestor's): every group found, and its figures those a scanner
    /// reading each file by its whole path found, primed or not.
    #[test]
    fn a_chain_500_deep_is_read_whole_primed_or_not() {
        const DEPTH: u64 = 500;
        let t = tempfile::tempdir().unwrap();
        let mut rel = String::new();
        for n in 0..=DEPTH {
            mk_group(t.path(), &rel, n);
            rel.push_str(if n == 0 { "g" } else { "/g" });
        }
        let depth = |p: &str| {
            if p.is_empty() {
                0
            } else {
                p.split('/').count() as u64
            }
        };
        let mems = |g: &[GroupSample]| {
            let mut v: Vec<(u64, Option<u64>)> = g
                .iter()
                .map(|x| (depth(as_text(&x.path)), x.hot.memory_current))
                .collect();
            v.sort_unstable();
            v
        };
        let want: Vec<(u64, Option<u64>)> = (0..=DEPTH).map(|n| (n, Some(n))).collect();
        let mut plain = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        assert_eq!(mems(&plain.scan().0), want);
        let mut primed = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        primed.set_priming(true);
        primed.scan();
        primed.set_priming(false);
        primed.read_levels();
        let (g, _) = primed.scan();
        assert_eq!(mems(&g), want);
        let events = g.iter().filter(|x| x.hot.events.is_some()).count();
        assert_eq!(
            events as u64,
            DEPTH + 1,
            "cgroup.events read in every group"
        );
        assert_eq!(primed.kept, plain.kept, "the same files kept open");
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
}
