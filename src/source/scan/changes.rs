//! Whether groups came or went since the last walk, without listing:
//! cgroup2's `cgroup.stat` nr_descendants (one read of the start
//! group's), and v1's inotify watch on every group directory, or its
//! link count where no watch is to be had. Also cgroup2's watch of each
//! group's cgroup.events ([`EventsWatch`]): read again only after it
//! changed.

use super::{DirsBelow, Entry, EventsWatch, Reached, Scanner};
use crate::cgroupfs::{files, CgroupStat};
use crate::model::{Errno, ScanCost};
use crate::source::hier::{self, GroupDir, Hier};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::Path;
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
pub(super) fn watch_cap() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .map_or(MAX_WATCHES, |m| (m / 64).min(MAX_WATCHES))
}

/// How a v1 scanner notices that a group was made or removed below a
/// directory: v1 has no cgroup.stat.
#[derive(Debug)]
pub(super) enum Watch {
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

/// A directory's link count (st_nlink is u32 on some architectures).
#[allow(clippy::useless_conversion)]
pub(super) fn links_of(st: &rustix::fs::Stat) -> u64 {
    u64::from(st.st_nlink)
}

/// nr_descendants from a group's cgroup.stat (opened, read, closed).
pub(super) fn read_descendants(hier: &Hier, stat: &Path, buf: &mut [u8]) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let f = hier.open_read(stat).ok()?;
    let n = f.read_at(buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    CgroupStat::parse(text).nr_descendants
}

/// Why [`watch_events`] set no watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoWatch {
    /// No watch is to be had now, for any file: the user's inotify
    /// watches are spent (ENOSPC: fs.inotify.max_user_watches, which
    /// every program of the user shares, cgtop's own event watcher
    /// included), the kernel's memory (ENOMEM), or no inotify instance.
    /// Others may be freed later.
    Spent,
    /// This file cannot be watched (any other error).
    Refused,
}

/// cgroup2: watches the cgroup.events kept open as `file` for IN_MODIFY
/// (the inode of the descriptor, through its /proc/self/fd link, as
/// v1's directory watches), making the scanner's inotify instance
/// (`notify`) at the first: the watch, or why there is none.
pub(super) fn watch_events(
    notify: &mut Option<OwnedFd>,
    tried: &mut bool,
    file: &File,
) -> Result<i32, NoWatch> {
    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    use std::os::fd::AsRawFd;
    if !*tried {
        *tried = true;
        *notify = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok();
    }
    let notify = notify.as_ref().ok_or(NoWatch::Spent)?;
    inotify::add_watch(
        notify,
        format!("/proc/self/fd/{}", file.as_raw_fd()),
        WatchFlags::MODIFY,
    )
    .map_err(|e| match e {
        Errno::NOSPC | Errno::NOMEM => NoWatch::Spent,
        _ => NoWatch::Refused,
    })
}

impl Scanner {
    /// Reads the start group's cgroup.stat; true when nr_descendants moved
    /// (v1: [`Scanner::links_changed`]).
    pub(super) fn descendants_changed(&mut self, cost: &mut ScanCost) -> bool {
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

    /// v1: whether a group was made or removed below a listed directory:
    /// the inotify descriptor holds an event (drained here), or a
    /// directory watched by its link count has another one. cgroup2 reads
    /// one cgroup.stat instead.
    pub(super) fn links_changed(&mut self) -> bool {
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

    /// v1: watches the entry's directory for groups made or removed in
    /// it (inotify, or else its directory kept open, within the budget,
    /// with the link count it should have: `links`, from the walk;
    /// `None`: what fstat says now). The directory is opened from its
    /// nearest ancestor's (`dirs`, groups taken parent first; `has_child`:
    /// the next one is below it), not by its whole path from the root.
    pub(super) fn watch(
        &mut self,
        entry: &mut Entry,
        links: Option<u64>,
        dirs: &mut DirsBelow,
        has_child: bool,
    ) {
        if !self.watching {
            return;
        }
        if matches!(entry.watch, Watch::None) {
            let hier = Arc::clone(&self.hier);
            let dir = super::group_dir(&self.root, &entry.path).into_owned();
            // gone since the walk (or past PATH_MAX), or one the user
            // may not list (O_PATH will do): by its path, as before
            let gd = dirs.open(&hier, &dir, has_child).ok();
            // counted high during a walk (entries gone are counted until
            // its end): never more than the cap
            if self.by_notify < self.max_notify && self.add_notify(&dir, gd.as_deref()) {
                self.by_notify += 1;
                entry.watch = Watch::Notify;
                return;
            }
            if !self.room() {
                // caught by the periodic walk only
                self.fd_limited = true;
                return;
            }
            let fd = match gd {
                Some(Reached::Own(d)) => Ok(d.into_fd()),
                Some(Reached::Held(d)) => d.try_clone_fd(),
                None => self.hier.open_dir(&dir),
            };
            let Ok(fd) = fd else {
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

    /// cgroup2: drops the watch of a cgroup.events no longer read through
    /// its descriptor (the entry gone, or the descriptor another).
    pub(super) fn forget_events(&self, w: EventsWatch) {
        if let (EventsWatch::Watched { wd, .. }, Some(notify)) = (w, &self.notify) {
            // the kernel has dropped it already where the file is gone
            let _ = rustix::fs::inotify::remove_watch(notify, wd);
        }
    }

    /// cgroup2: the watches of cgroup.events that changed since the last
    /// call (one read of the inotify descriptor, EAGAIN when none did);
    /// `None`: read every watched file again (the queue overflowed, or
    /// the descriptor failed).
    pub(super) fn events_changed(&mut self) -> Option<Vec<i32>> {
        use rustix::fs::inotify::{ReadFlags, Reader};
        use std::mem::MaybeUninit;
        let mut changed = Vec::new();
        if self.by_events == 0 {
            return Some(changed);
        }
        let Some(notify) = &self.notify else {
            return Some(changed);
        };
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = Reader::new(notify, &mut buf);
        loop {
            match reader.next() {
                Ok(e) if e.events().contains(ReadFlags::QUEUE_OVERFLOW) => return None,
                Ok(e) => changed.push(e.wd()),
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => break,
                Err(_) => return None,
            }
        }
        changed.sort_unstable();
        changed.dedup();
        Some(changed)
    }

    /// Watches a group's directory `dir` for subdirectories made,
    /// removed or renamed: the very inode opened beneath the root (an
    /// O_PATH descriptor, from the directory itself where it is open:
    /// `open`; else by `dir`'s path), through its /proc/self/fd link,
    /// never a path resolved again. False where no watch is to be had.
    pub(super) fn add_notify(&mut self, dir: &Path, open: Option<&GroupDir>) -> bool {
        use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
        use std::os::fd::AsRawFd;
        if !self.notify_tried {
            self.notify_tried = true;
            self.notify = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok();
        }
        let Some(notify) = &self.notify else {
            return false;
        };
        let opened = match open {
            Some(d) => self.hier.open_watchable_below(d, Path::new("."), true),
            None => self.hier.open_watchable(dir, true),
        };
        let Ok((fd, ..)) = opened else {
            return false;
        };
        inotify::add_watch(
            notify,
            format!("/proc/self/fd/{}", fd.as_raw_fd()),
            WatchFlags::CREATE | WatchFlags::DELETE | WatchFlags::MOVE | WatchFlags::ONLYDIR,
        )
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use std::fs;

    /// A v1 scanner of the tree at `r`, walking only when it sees a
    /// change; `by_links`: as with no inotify watch to be had (the
    /// directories' link counts instead).
    fn v1_scanner(r: &std::path::Path, by_links: bool) -> Scanner {
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
        s.notify_tried = by_links;
        s
    }

    #[test]
    fn a_v1_scanner_not_watching_sets_no_watch_until_told() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk(r, "", &[("cgroup.procs", ""), ("cpuacct.usage", "1000\n")]);
        mk(r, "a", &[("cpuacct.usage", "2000\n")]);
        let mut s = v1_scanner(r, false);
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

    /// A v1 scanner watches each group's directory opened from its
    /// nearest ancestor's ([`DirsBelow`]): on a chain 40 deep (past the
    /// 16 directories held) with side groups, by inotify and by link
    /// counts, every directory is watched as in a shallow tree, and a
    /// group made at the bottom or beside the chain halfway is listed in
    /// the next scan.
    #[test]
    fn a_v1_scanner_watches_every_directory_of_a_deep_chain() {
        for by_links in [false, true] {
            let t = tempfile::tempdir().unwrap();
            let r = t.path();
            mk(r, "", &[("cgroup.procs", ""), ("cpuacct.usage", "1\n")]);
            let mut at = String::new();
            let mut n = 1;
            for i in 0..40 {
                at = if at.is_empty() {
                    "c".into()
                } else {
                    format!("{at}/c")
                };
                mk(r, &at, &[("cpuacct.usage", "1\n")]);
                n += 1;
                if i % 5 == 0 {
                    mk(r, &format!("{at}/s/t"), &[("cpuacct.usage", "1\n")]);
                    mk(r, &format!("{at}/s"), &[("cpuacct.usage", "1\n")]);
                    n += 2;
                }
            }
            let mut s = v1_scanner(r, by_links);
            let (g, cost) = s.scan();
            assert!(cost.walked);
            assert_eq!(g.len(), n);
            let (notify, links) = if by_links { (0, n) } else { (n, 0) };
            assert_eq!(
                (s.by_notify, s.by_links),
                (notify, links),
                "by_links {by_links}"
            );
            // the counters' files, the root's cgroup.procs, a kept
            // directory a group where no watch is to be had
            assert_eq!(s.kept(), n + 1 + links);
            assert!(!s.scan().1.walked, "steady (by_links {by_links})");
            mk(r, &format!("{at}/new"), &[("cpuacct.usage", "0\n")]);
            let (g, cost) = s.scan();
            assert!(cost.walked, "made at the bottom (by_links {by_links})");
            assert_eq!(g.len(), n + 1);
            let half = "c/".repeat(19) + "c";
            mk(r, &format!("{half}/beside"), &[("cpuacct.usage", "0\n")]);
            let (g, cost) = s.scan();
            assert!(cost.walked, "made halfway (by_links {by_links})");
            assert_eq!(g.len(), n + 2);
        }
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
            let mut s = v1_scanner(r, by_links);
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
}
