//! The event watcher (issue 9, item 3): a thread that sees
//! `cgroup.events`, `memory.events`, `memory.swap.events` and
//! `pids.events` change within milliseconds, through inotify, and reads
//! the file at once, so an event is kept when its group is removed right
//! after (the usual OOM-then-cleanup). Where /dev/kmsg is readable, the
//! kernel's `oom-kill:` line gives an OOM kill its victim.
//!
//! One `poll(2)` loop on three descriptors: the inotify instance (one fd
//! for every watch: watches are not descriptors), /dev/kmsg, and an
//! eventfd that wakes it for a command (the refresh's group list, stop).
//! Per group it keeps its watch descriptors and the last reading of each
//! file (about 300 bytes a group, no file descriptor).
//!
//! - Each group's directory is watched for IN_CREATE and IN_DELETE of
//!   subdirectories, so a group made between refreshes is watched at
//!   once (and a group removed drops its watches: kernfs sends no
//!   IN_DELETE_SELF on rmdir).
//! - Each event file is watched for IN_MODIFY (kernfs's notify, which
//!   poll(POLLPRI) also gets); on it the file is read through
//!   [`Hier`] (beneath the root, no symlink, regular files only, capped)
//!   and diffed with its last reading (`model::events::diff`).
//! - A watch is set on the inode opened beneath the root (`O_PATH`, then
//!   inotify_add_watch on /proc/self/fd/N), never on a path resolved
//!   again: a symlink or FIFO by an event file's name is not watched.
//! - Short of watches (the user's max_user_watches, ENOSPC, or the
//!   budget a test gives), cgroup.events and memory.events of every group
//!   come first; the groups left with an unwatched file are counted
//!   ([`WatchStatus::unwatched`]).
//!
//! Must not depend on: app, ui, the terminal.

use super::hier::{self, Hier};
use super::scan::list_groups;
use crate::model::events::{
    diff, join_oom, parse_record, Event, EventFile, EventKind, Mapping, MemoryEvent, OomLine,
    Reading,
};
use crate::model::{Errno, GroupPath};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::inotify::{self, ReadFlags, WatchFlags};
use std::collections::{HashMap, HashSet, VecDeque};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the watcher is set up.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The view's start group: groups from it down are watched.
    pub start: GroupPath,
    /// Levels below it (`--depth`).
    pub max_depth: Option<usize>,
    /// The most inotify watches to set (`None`: as many as the kernel
    /// gives; the program gives [`watch_budget`]). Tests give a small one
    /// to see what ENOSPC does.
    pub max_watches: Option<usize>,
    /// /dev/kmsg, or `None` to read no kernel log.
    pub kmsg: Option<PathBuf>,
    /// kmsg's paths to the view's (`guard::view_mapping`).
    pub mapping: Mapping,
    /// The collector's clock: events are stamped on it.
    pub clock: Instant,
    /// The UNIX time at `clock`.
    pub clock_unix: Duration,
}

/// What the watcher is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchCommand {
    /// The groups a refresh listed: watch any not watched yet, forget
    /// those whose directory is gone.
    Groups(Vec<GroupPath>),
    Stop,
}

/// Whether the kernel's log is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KmsgState {
    /// Not asked for.
    #[default]
    Off,
    Reading,
    /// Cannot be opened: EPERM/EACCES (dmesg_restrict without
    /// CAP_SYSLOG), ENOENT, ...
    Unreadable(Errno),
}

/// The watcher's state for the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WatchStatus {
    /// Groups with an event file (or the directory) not watched: short
    /// of inotify watches.
    pub unwatched: usize,
    /// Watches set.
    pub watches: usize,
    pub kmsg: KmsgState,
    /// Times the kernel's log overran the reader (records lost, EPIPE).
    pub kmsg_overruns: u64,
    /// Times the inotify queue overflowed (every file was read again).
    pub overflows: u64,
}

/// What the watcher sends.
#[derive(Debug, Clone)]
pub enum Watched {
    Events(Vec<Event>),
    Status(WatchStatus),
}

/// The way to talk to a running watcher.
#[derive(Debug, Clone)]
pub struct WatchHandle {
    tx: Sender<WatchCommand>,
    wake: Arc<OwnedFd>,
}

impl WatchHandle {
    pub fn send(&self, cmd: WatchCommand) {
        if self.tx.send(cmd).is_ok() {
            let _ = rustix::io::write(&*self.wake, &1u64.to_ne_bytes());
        }
    }
}

/// How long an OOM kill waits for the kernel's line before it goes out
/// without its victim: the line is printed before the counter moves,
/// but the two reach the watcher in either order.
const JOIN_WAIT: Duration = Duration::from_millis(50);
/// How long a kernel OOM line is kept for a join.
const LINE_KEEP: Duration = Duration::from_secs(5);
/// Lines kept at most.
const LINES_MAX: usize = 64;
/// A resync retries the files left unwatched this often (in refreshes),
/// and at once after watches were freed.
const RETRY_EVERY: u32 = 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Dir,
    File(EventFile),
}

#[derive(Debug, Default)]
struct FileWatch {
    wd: Option<i32>,
    /// The file is there (a watch is wanted).
    exists: bool,
    /// Made after watching began: its first reading is diffed against
    /// zeros.
    fresh: bool,
    /// The watched file's inode: a file made anew (a controller switched
    /// off and on above the group) is another, and the old watch is on a
    /// dead one.
    ino: u64,
    last: Option<Reading>,
}

#[derive(Debug, Default)]
struct Group {
    ino: u64,
    dir_wd: Option<i32>,
    files: [FileWatch; 4],
}

impl Group {
    /// A file that is there, or the directory, has no watch.
    fn unwatched(&self) -> bool {
        self.dir_wd.is_none() || self.files.iter().any(|f| f.exists && f.wd.is_none())
    }

    /// Something has no watch, whether or not it is there.
    fn incomplete(&self) -> bool {
        self.dir_wd.is_none() || self.files.iter().any(|f| f.wd.is_none())
    }
}

/// The watcher's state, driven by the thread's loop (and by tests).
pub struct Watcher {
    hier: Arc<Hier>,
    cfg: WatchConfig,
    inotify: OwnedFd,
    groups: HashMap<GroupPath, Group>,
    wds: HashMap<i32, (GroupPath, Slot)>,
    /// Watches were removed since the last retry.
    freed: bool,
    resyncs: u32,
    proc_fd: bool,
    out: Vec<Event>,
    pending: Vec<(Event, Instant)>,
    /// The kernel's recent OOM lines, with the groups each was joined
    /// to: one kill is one line, counted in its group and each ancestor's
    /// memory.events, so a line joins one event per group.
    lines: VecDeque<(OomLine, Instant, Vec<GroupPath>)>,
    /// /dev/kmsg, opened at its end.
    kmsg: Option<OwnedFd>,
    status: WatchStatus,
}

fn file_index(f: EventFile) -> usize {
    EventFile::ALL.iter().position(|x| *x == f).unwrap_or(0)
}

impl Watcher {
    /// A watcher of the groups from `cfg.start` down, walked now.
    pub fn new(hier: Arc<Hier>, cfg: WatchConfig) -> std::io::Result<Self> {
        let inotify =
            inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)?;
        let mut w = Self {
            hier,
            cfg,
            inotify,
            groups: HashMap::new(),
            wds: HashMap::new(),
            freed: false,
            resyncs: 0,
            proc_fd: std::path::Path::new("/proc/self/fd").is_dir(),
            out: Vec::new(),
            pending: Vec::new(),
            lines: VecDeque::new(),
            kmsg: None,
            status: WatchStatus::default(),
        };
        if let Some(p) = w.cfg.kmsg.clone() {
            match open_kmsg(&p) {
                Ok(fd) => {
                    w.kmsg = Some(fd);
                    w.status.kmsg = KmsgState::Reading;
                }
                Err(e) => w.status.kmsg = KmsgState::Unreadable(e),
            }
        }
        let start = w.cfg.start.clone();
        w.add_tree(&start, false);
        w.update_status();
        Ok(w)
    }

    pub fn status(&self) -> WatchStatus {
        self.status
    }

    /// Whether `path`'s directory is watched (tests).
    pub fn is_watched(&self, path: &GroupPath) -> bool {
        self.groups.get(path).is_some_and(|g| g.dir_wd.is_some())
    }

    /// The event files of `path` that are watched (tests).
    pub fn watched_files(&self, path: &GroupPath) -> Vec<EventFile> {
        self.groups.get(path).map_or_else(Vec::new, |g| {
            EventFile::ALL
                .into_iter()
                .zip(&g.files)
                .filter(|(_, w)| w.wd.is_some())
                .map(|(f, _)| f)
                .collect()
        })
    }

    /// The groups known (watched or not).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    fn depth_of(&self, path: &GroupPath) -> usize {
        path.depth().saturating_sub(self.cfg.start.depth())
    }

    fn now(&self) -> (Duration, f64) {
        let at = self.cfg.clock.elapsed();
        (at, (self.cfg.clock_unix + at).as_secs_f64())
    }

    /// Sets a watch on `rel` (a directory or a regular file), the inode
    /// opened beneath the root. `Err(true)`: no watch to be had (the
    /// budget, ENOSPC); `Err(false)`: not there, or not of that kind.
    fn add_watch(&mut self, rel: &std::path::Path, dir: bool) -> Result<(i32, u64), bool> {
        if self.cfg.max_watches.is_some_and(|m| self.wds.len() >= m) {
            return Err(true);
        }
        let Ok((fd, ino)) = self.hier.open_watchable(rel, dir) else {
            return Err(false);
        };
        let mask = if dir {
            WatchFlags::CREATE | WatchFlags::DELETE | WatchFlags::MOVE | WatchFlags::ONLYDIR
        } else {
            WatchFlags::MODIFY
        };
        let r = if self.proc_fd {
            // the very inode opened beneath the root: the magic link is
            // followed to it, and no path is resolved again
            inotify::add_watch(
                &self.inotify,
                format!("/proc/self/fd/{}", fd.as_raw_fd()),
                mask,
            )
        } else {
            // no /proc: the path, its last component not followed (an
            // earlier one was checked by the open just made)
            inotify::add_watch(
                &self.inotify,
                self.hier.path().join(rel),
                mask | WatchFlags::DONT_FOLLOW,
            )
        };
        match r {
            Ok(wd) => Ok((wd, ino)),
            Err(Errno::NOSPC) => Err(true),
            Err(_) => Err(false),
        }
    }

    /// Watches `start` and every group below it; `new`: made after
    /// watching began (its counters are diffed against zeros).
    fn add_tree(&mut self, start: &GroupPath, new: bool) {
        let depth = self.depth_of(start);
        if self.cfg.max_depth.is_some_and(|m| depth > m) {
            return;
        }
        let found = list_groups(&self.hier, start, depth, self.cfg.max_depth);
        // directories, cgroup.events and memory.events of every group
        // first, the rarer files after: what a short budget keeps
        for (path, ino) in &found {
            self.add_group(
                path,
                *ino,
                new,
                &[EventFile::Cgroup, EventFile::Memory],
                true,
            );
        }
        for (path, ino) in &found {
            self.add_group(path, *ino, new, &[EventFile::Swap, EventFile::Pids], false);
        }
    }

    fn add_group(&mut self, path: &GroupPath, ino: u64, new: bool, which: &[EventFile], dir: bool) {
        let rel = hier::group_rel(path).to_path_buf();
        if let Some(g) = self.groups.get(path) {
            if g.ino != ino {
                // made again under its name since: a new group
                self.remove_tree(path);
            }
        }
        self.groups.entry(path.clone()).or_insert_with(|| Group {
            ino,
            ..Group::default()
        });
        if dir && self.groups.get(path).is_some_and(|g| g.dir_wd.is_none()) {
            if let Ok((wd, _)) = self.add_watch(&rel, true) {
                self.wds.insert(wd, (path.clone(), Slot::Dir));
                if let Some(g) = self.groups.get_mut(path) {
                    g.dir_wd = Some(wd);
                }
            }
        }
        for f in which {
            self.add_file(path, *f, new);
        }
    }

    fn add_file(&mut self, path: &GroupPath, f: EventFile, new: bool) {
        let i = file_index(f);
        if self
            .groups
            .get(path)
            .is_none_or(|g| g.files[i].wd.is_some())
        {
            return;
        }
        let rel = hier::file_rel(path, f.name());
        let r = self.add_watch(&rel, false);
        let Some(g) = self.groups.get_mut(path) else {
            return;
        };
        match r {
            Ok((wd, ino)) => {
                g.files[i].wd = Some(wd);
                g.files[i].exists = true;
                g.files[i].fresh = new;
                g.files[i].ino = ino;
                self.wds.insert(wd, (path.clone(), Slot::File(f)));
                // the baseline, read after the watch is set so that no
                // change falls between
                if let Some(cur) = self.read(path, f) {
                    self.apply(path, f, cur);
                }
            }
            // no watch to be had: the file is there, unwatched
            Err(true) => g.files[i].exists = self.hier.is_file(&rel).is_ok(),
            Err(false) => g.files[i].exists = false,
        }
    }

    /// Reads an event file of a group; `None` when it cannot be read or
    /// holds no known key (a torn read).
    fn read(&self, path: &GroupPath, f: EventFile) -> Option<Reading> {
        let text = self.hier.read_text(&hier::file_rel(path, f.name())).ok()?;
        let r = Reading::parse(f, &text);
        (!r.is_empty()).then_some(r)
    }

    /// Diffs `cur` with the last reading (zeros for a file made after
    /// watching began), keeps it, and makes the events.
    fn apply(&mut self, path: &GroupPath, f: EventFile, cur: Reading) {
        let i = file_index(f);
        let Some(g) = self.groups.get_mut(path) else {
            return;
        };
        let w = &g.files[i];
        let prev = w.last.or_else(|| w.fresh.then(|| cur.zeroed()));
        let cur = prev.map_or(cur, |p| cur.over(&p));
        g.files[i].last = Some(cur);
        let kinds = diff(f, prev.as_ref(), &cur);
        if kinds.is_empty() {
            return;
        }
        let (at, unix_s) = self.now();
        for kind in kinds {
            let mut ev = Event {
                at,
                unix_s,
                path: path.clone(),
                kind,
            };
            if matches!(
                ev.kind,
                EventKind::Memory {
                    what: MemoryEvent::OomKill,
                    ..
                }
            ) {
                let mapping = &self.cfg.mapping;
                let joined = self.lines.iter_mut().rev().any(|(l, _, used)| {
                    let j = !used.contains(&ev.path) && join_oom(&mut ev, l, mapping);
                    if j {
                        used.push(ev.path.clone());
                    }
                    j
                });
                if !joined && self.lines_expected() {
                    self.pending.push((ev, Instant::now()));
                    continue;
                }
            }
            self.out.push(ev);
        }
    }

    /// Whether a kernel line may still come to join an OOM kill.
    fn lines_expected(&self) -> bool {
        self.status.kmsg == KmsgState::Reading && self.cfg.mapping.is_some()
    }

    /// Forgets `path` and every group below it, removing their watches.
    fn remove_tree(&mut self, path: &GroupPath) {
        let gone: Vec<GroupPath> = self
            .groups
            .keys()
            .filter(|p| p.is_within(path))
            .cloned()
            .collect();
        for p in gone {
            if let Some(g) = self.groups.remove(&p) {
                for wd in g
                    .dir_wd
                    .into_iter()
                    .chain(g.files.iter().filter_map(|f| f.wd))
                {
                    self.wds.remove(&wd);
                    // the kernel may have dropped it already: no matter
                    let _ = inotify::remove_watch(&self.inotify, wd);
                    self.freed = true;
                }
            }
        }
    }

    /// The refresh's group list: watch what is not watched, forget what
    /// is gone (a group the list lacks is forgotten only when its
    /// directory is gone or another: one made after the refresh's walk
    /// is kept).
    pub fn resync(&mut self, listed: &[GroupPath]) {
        self.resyncs = self.resyncs.wrapping_add(1);
        let set: HashSet<&GroupPath> = listed.iter().collect();
        let missing: Vec<GroupPath> = self
            .groups
            .iter()
            .filter(|(p, _)| !set.contains(p))
            .filter(|(p, g)| self.hier.dir_ino(hier::group_rel(p)).ok() != Some(g.ino))
            .map(|(p, _)| p.clone())
            .collect();
        for p in missing {
            self.remove_tree(&p);
        }
        let retry = self.freed || self.resyncs % RETRY_EVERY == 0;
        for p in listed {
            if !p.is_within(&self.cfg.start) {
                continue;
            }
            // a known group again only on a retry: its unwatched files,
            // and files made since (a controller switched on above it
            // makes them without an inotify event), or made anew
            let known = self.groups.contains_key(p);
            if known && !retry {
                continue;
            }
            if known {
                self.revalidate(p);
            }
            if known && !self.groups.get(p).is_some_and(Group::incomplete) {
                continue;
            }
            if let Ok(ino) = self.hier.dir_ino(hier::group_rel(p)) {
                self.add_group(p, ino, false, &EventFile::ALL, true);
            }
        }
        if retry {
            self.freed = false;
        }
        self.update_status();
    }

    /// Drops the watches of `path`'s files that are gone or another
    /// file now (its inode changed): they watch a dead inode.
    fn revalidate(&mut self, path: &GroupPath) {
        for f in EventFile::ALL {
            let i = file_index(f);
            let Some((wd, ino)) = self
                .groups
                .get(path)
                .and_then(|g| Some((g.files[i].wd?, g.files[i].ino)))
            else {
                continue;
            };
            let now = self
                .hier
                .open_watchable(&hier::file_rel(path, f.name()), false)
                .map(|(_, ino)| ino);
            if now == Ok(ino) {
                continue;
            }
            self.wds.remove(&wd);
            let _ = inotify::remove_watch(&self.inotify, wd);
            if let Some(g) = self.groups.get_mut(path) {
                g.files[i] = FileWatch::default();
            }
        }
    }

    fn update_status(&mut self) {
        self.status.unwatched = self.groups.values().filter(|g| g.unwatched()).count();
        self.status.watches = self.wds.len();
    }

    /// Reads every watched file again (after the inotify queue
    /// overflowed: changes were lost).
    fn reread_all(&mut self) {
        let files: Vec<(GroupPath, EventFile)> = self
            .groups
            .iter()
            .flat_map(|(p, g)| {
                EventFile::ALL
                    .into_iter()
                    .zip(&g.files)
                    .filter(|(_, w)| w.wd.is_some())
                    .map(|(f, _)| (p.clone(), f))
            })
            .collect();
        for (p, f) in files {
            if let Some(cur) = self.read(&p, f) {
                self.apply(&p, f, cur);
            }
        }
    }

    /// Handles what the inotify queue holds, in the queue's order: a
    /// file's change is read before a later rmdir of its group is
    /// handled.
    pub fn on_inotify(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        loop {
            let mut todo: Vec<(i32, ReadFlags, Option<Vec<u8>>)> = Vec::new();
            {
                let mut reader = inotify::Reader::new(&self.inotify, &mut buf);
                loop {
                    match reader.next() {
                        Ok(e) => todo.push((
                            e.wd(),
                            e.events(),
                            e.file_name().map(|n| n.to_bytes().to_vec()),
                        )),
                        Err(Errno::INTR) => continue,
                        Err(_) => break,
                    }
                    // what one read(2) gave: handled before reading more
                    if reader.is_buffer_empty() {
                        break;
                    }
                }
            }
            if todo.is_empty() {
                break;
            }
            for (wd, mask, name) in todo {
                self.on_event(wd, mask, name.as_deref());
            }
        }
        self.update_status();
    }

    fn on_event(&mut self, wd: i32, mask: ReadFlags, name: Option<&[u8]>) {
        if mask.contains(ReadFlags::QUEUE_OVERFLOW) {
            self.status.overflows += 1;
            self.reread_all();
            return;
        }
        let Some((path, slot)) = self.wds.get(&wd).cloned() else {
            return;
        };
        if mask.contains(ReadFlags::IGNORED) {
            // the kernel dropped the watch (its inode is gone)
            self.wds.remove(&wd);
            if let Some(g) = self.groups.get_mut(&path) {
                match slot {
                    Slot::Dir => g.dir_wd = None,
                    // the file went (a controller switched off above
                    // the group): not there, so not "unwatched"
                    Slot::File(f) => g.files[file_index(f)] = FileWatch::default(),
                }
            }
            if slot == Slot::Dir {
                self.remove_tree(&path);
            }
            return;
        }
        match slot {
            Slot::File(f) if mask.contains(ReadFlags::MODIFY) => {
                if let Some(cur) = self.read(&path, f) {
                    self.apply(&path, f, cur);
                }
            }
            Slot::Dir => {
                let Some(name) = name else { return };
                if !mask.contains(ReadFlags::ISDIR) {
                    // an event file made in a group that stays (a
                    // controller switched on above it): watched at once
                    if mask.contains(ReadFlags::CREATE) {
                        if let Some(f) = EventFile::of_name(name) {
                            self.add_file(&path, f, true);
                        }
                    }
                    return;
                }
                let Ok(child) = path.join(name) else { return };
                if mask.contains(ReadFlags::CREATE) {
                    self.add_tree(&child, true);
                } else if mask.contains(ReadFlags::MOVED_TO) {
                    // a group renamed (cgroup2 renames within a parent):
                    // its counters are not new
                    self.add_tree(&child, false);
                } else if mask.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                    self.remove_tree(&child);
                }
            }
            Slot::File(_) => {}
        }
    }

    /// A record from /dev/kmsg.
    pub fn on_kmsg_record(&mut self, bytes: &[u8]) {
        // the kernel's own records only: user space cannot write one
        // with facility 0, so a forged OOM line is not believed
        let Some(rec) = parse_record(bytes).filter(|r| r.facility == 0) else {
            return;
        };
        let Some(line) = OomLine::parse(&rec.message) else {
            return;
        };
        let mapping = self.cfg.mapping.clone();
        let mut used = Vec::new();
        let mut i = 0;
        while i < self.pending.len() {
            let path = self.pending[i].0.path.clone();
            if !used.contains(&path) && join_oom(&mut self.pending[i].0, &line, &mapping) {
                let (ev, _) = self.pending.remove(i);
                self.out.push(ev);
                used.push(path);
            } else {
                i += 1;
            }
        }
        if self.lines.len() == LINES_MAX {
            self.lines.pop_front();
        }
        self.lines.push_back((line, Instant::now(), used));
    }

    /// The events ready to go: OOM kills that waited [`JOIN_WAIT`] for
    /// their line go without it. Oldest first.
    pub fn take_ready(&mut self) -> Vec<Event> {
        let now = Instant::now();
        let (late, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(_, t)| now.duration_since(*t) >= JOIN_WAIT || !self.lines_expected());
        self.pending = keep;
        self.out.extend(late.into_iter().map(|(e, _)| e));
        self.lines
            .retain(|(_, t, _)| now.duration_since(*t) < LINE_KEEP);
        let mut out = std::mem::take(&mut self.out);
        out.sort_by_key(|e| e.at);
        out
    }

    /// How long the loop may sleep: until the oldest waiting OOM kill is
    /// due.
    fn next_due(&self) -> Option<Duration> {
        let now = Instant::now();
        self.pending
            .iter()
            .map(|(_, t)| JOIN_WAIT.saturating_sub(now.duration_since(*t)))
            .min()
    }
}

/// The event watcher's share of the user's inotify watches: a quarter of
/// `max_user_watches` (the file's text). cgtop runs as root, and root's
/// watches are systemd's and every root daemon's too: groups a delegated
/// user makes by the thousand must not spend them all (past the share,
/// the groups left are counted as not watched and read at each refresh,
/// as after ENOSPC). `None` when the text is no number.
pub fn watch_budget(max_user_watches: &str) -> Option<usize> {
    max_user_watches
        .trim()
        .parse::<usize>()
        .ok()
        .map(|m| (m / 4).max(1))
}

/// [`watch_budget`] of this host (`/proc/sys/fs/inotify/max_user_watches`).
pub fn host_watch_budget() -> Option<usize> {
    watch_budget(&std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches").ok()?)
}

/// Opens /dev/kmsg at its end (only records from now on).
fn open_kmsg(path: &std::path::Path) -> Result<OwnedFd, Errno> {
    use rustix::fs::{Mode, OFlags, SeekFrom};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::seek(&fd, SeekFrom::End(0))?;
    Ok(fd)
}

impl Watcher {
    /// Reads the kernel log's new records, one a read(2). A log that
    /// cannot be read any more (or reads EOF, which /dev/kmsg never
    /// does: not a log) is closed.
    pub fn on_kmsg(&mut self) {
        let Some(fd) = self.kmsg.take() else { return };
        let mut buf = vec![0u8; 8192];
        let keep = loop {
            match rustix::io::read(&fd, &mut buf) {
                Ok(0) => break false,
                Ok(n) => self.on_kmsg_record(&buf[..n]),
                Err(Errno::AGAIN) => break true,
                Err(Errno::INTR) => {}
                // overrun: records were lost; the next read resumes at
                // the oldest one still there
                Err(Errno::PIPE) => self.status.kmsg_overruns += 1,
                Err(e) => {
                    self.status.kmsg = KmsgState::Unreadable(e);
                    break false;
                }
            }
        };
        if keep {
            self.kmsg = Some(fd);
        } else if self.status.kmsg == KmsgState::Reading {
            self.status.kmsg = KmsgState::Unreadable(Errno::IO);
        }
    }
}

/// Starts the watcher thread; events and status changes go to `tx`.
pub fn spawn<M: From<Watched> + Send + 'static>(
    hier: Arc<Hier>,
    cfg: WatchConfig,
    tx: Sender<M>,
) -> std::io::Result<WatchHandle> {
    let wake = Arc::new(rustix::event::eventfd(
        0,
        rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
    )?);
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let handle = WatchHandle {
        tx: cmd_tx,
        wake: Arc::clone(&wake),
    };
    std::thread::Builder::new()
        .name("events".into())
        .spawn(move || run(hier, cfg, &tx, &cmd_rx, &wake))?;
    Ok(handle)
}

fn run<M: From<Watched>>(
    hier: Arc<Hier>,
    cfg: WatchConfig,
    tx: &Sender<M>,
    rx: &Receiver<WatchCommand>,
    wake: &OwnedFd,
) {
    let Ok(mut w) = Watcher::new(hier, cfg) else {
        return;
    };
    let mut sent = None;
    loop {
        let ready = w.take_ready();
        if !ready.is_empty() && tx.send(M::from(Watched::Events(ready))).is_err() {
            return;
        }
        if sent != Some(w.status) {
            sent = Some(w.status);
            if tx.send(M::from(Watched::Status(w.status))).is_err() {
                return;
            }
        }
        let timeout = w.next_due().map(|d| rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(d.subsec_nanos()).max(1_000_000),
        });
        let (ino_ready, kmsg_ready, wake_ready) = {
            let mut fds = vec![
                PollFd::new(&w.inotify, PollFlags::IN),
                PollFd::new(wake, PollFlags::IN),
            ];
            if let Some(k) = &w.kmsg {
                fds.push(PollFd::new(k, PollFlags::IN));
            }
            match poll(&mut fds, timeout.as_ref()) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(_) => return,
            }
            let r = |i: usize| fds.get(i).is_some_and(|f| !f.revents().is_empty());
            (r(0), r(2), r(1))
        };
        if wake_ready {
            let mut b = [0u8; 8];
            let _ = rustix::io::read(wake, &mut b);
            while let Ok(cmd) = rx.try_recv() {
                match cmd {
                    WatchCommand::Stop => return,
                    WatchCommand::Groups(list) => w.resync(&list),
                }
            }
        }
        if ino_ready {
            w.on_inotify();
        }
        if kmsg_ready {
            w.on_kmsg();
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::watch_budget;

    #[test]
    fn a_quarter_of_the_users_watches() {
        assert_eq!(watch_budget("192536\n"), Some(48_134));
        assert_eq!(watch_budget("3"), Some(1));
        assert_eq!(watch_budget("lots"), None);
    }
}
