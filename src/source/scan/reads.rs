//! One reading pass: every entry's hot files read through its kept
//! descriptors (pread at 0) or opened, read and closed; a group found
//! gone (ENOENT/ENODEV, or another inode under its name) removed, and
//! the samples left without their parent dropped.

use super::budget::{count_kept, is_fd_shortage};
use super::changes::{watch_events, NoWatch};
use super::hot::{apply, Hot, Table};
use super::levels::Levels;
use super::samples::{Keyed, Samples};
use super::{Entry, EventsWatch, Handle, Scanner};
use crate::model::tree::path::parent_bytes;
use crate::model::{HotStats, ScanCost, Unreadable};
use crate::source::hier::{self, FsError, Hier};
use std::borrow::Cow;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// What one reading pass over the entries found.
pub(super) struct ReadPass<S> {
    /// The samples, sorted by path.
    pub(super) out: S,
    /// Some group was gone (its entry is removed).
    pub(super) gone: bool,
    /// Some gone group's directory is there again under another inode.
    pub(super) recreated: bool,
}

/// Outcome of reading one file.
pub(super) enum Read1 {
    Text(usize),
    Absent,
    /// The group is gone (ENOENT/ENODEV).
    Gone,
    /// There, but not read: a FIFO, a symlink, over the cap, EACCES.
    Error(FsError),
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
pub(super) fn drop_orphans<T: Keyed>(out: &mut Vec<T>) {
    let keep: Vec<bool> = {
        let mut present: std::collections::HashSet<&[u8]> =
            std::collections::HashSet::with_capacity(out.len());
        out.iter()
            .enumerate()
            .map(|(k, g)| {
                let p = g.key().0.as_bytes();
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
pub(super) fn read_handle<'a>(
    hier: &Hier,
    h: &mut Handle,
    dir: impl FnOnce() -> Cow<'a, Path>,
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
        Handle::Reopen(seen) => match hier.open_read_ino(&dir().join(name)) {
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
pub(super) fn read_all_at(
    f: &File,
    buf: &mut Vec<u8>,
    name: &str,
    multi: bool,
) -> Result<usize, FsError> {
    hier::read_capped(f, buf, hier::cap_for(name), multi)
}

/// The figures of `hot` no rate is computed from (what
/// [`Scanner::read_levels`] reads): the counters, which the next read
/// reads again (and v1's blkio counters add up into), are left out.
fn levels_of(hot: &HotStats, table: Table) -> HotStats {
    let mut h = hot.clone();
    h.cpu = None;
    h.io = None;
    h.v1.cpu_throttle = None;
    h.v1.sources.io_own_only = false;
    h.unreadable.retain(|u| {
        !table
            .iter()
            .any(|(kind, name)| *name == u.file && kind.counts_for_rates())
    });
    h
}

impl Scanner {
    /// Reads the hot files of the entries `want` picks. Entries whose
    /// group is gone are removed (and the next refresh walks); a file gone
    /// from a group that stays loses its handle (and the next walk is a
    /// full one).
    pub(super) fn read_pass<S: Samples>(
        &mut self,
        want: impl Fn(&Entry) -> bool,
        cost: &mut ScanCost,
    ) -> ReadPass<S> {
        let mut out = S::with_room(self.entries.len());
        let mut gone = Vec::new();
        let mut recreated = false;
        let mut dropped_kept = 0;
        let mut changed = false;
        let mut buf = std::mem::take(&mut self.buf);
        let hier = Arc::clone(&self.hier);
        let table = self.table;
        let priming = self.priming;
        let levels_only = self.levels_only;
        // what `read_levels` read: those groups' counters only, now
        let mut levels = std::mem::take(&mut self.levels);
        let mut keep = (self.keep_levels || levels_only).then(Levels::default);
        // cgroup2's cgroup.events: which watched ones changed (`None`:
        // all may have); watches are set within the cap while watching
        let events_moved = if self.is_v1() {
            Some(Vec::new())
        } else {
            self.events_changed()
        };
        let may_watch = self.watching && !self.is_v1();
        let mut notify = self.notify.take();
        let mut notify_tried = self.notify_tried;
        let mut by_events = self.by_events;
        let mut events_tried = self.events_tried;
        // no watch to be had (the user's inotify watches spent, by cgtop's
        // own event watcher among others): none asked for in the rest of
        // this pass. Asked of every unwatched group on every refresh,
        // each a failed inotify_add_watch through /proc/self/fd, that
        // was 10,000 system calls a refresh at 10,000 groups; the next
        // pass asks once, and goes on while watches are given
        let mut spent = false;
        let mut stale = std::mem::take(&mut self.stale_dirs);
        stale.sort_unstable();
        // the levels of the groups this pass does not read (the second
        // pass after a walk reads the new ones only): kept for the next
        let mut carried = Levels::default();
        for (i, e) in self.entries.iter_mut().enumerate() {
            if !want(e) {
                if let Some(mut l) = levels.take(e.inode, &e.path) {
                    carried.insert(e.inode, e.path.clone(), &mut l);
                }
                continue;
            }
            if stale.binary_search(&e.inode).is_ok() {
                // its directory is another group's since the walk
                // (`open_deferred`): made again, to be listed now
                recreated = true;
                gone.push(i);
                continue;
            }
            // the levels of this group as `read_levels` read them (the
            // same directory: a group made again has another inode), where
            // a rate counter read now says it is still there (kernfs: a
            // kept file of a group removed reads ENODEV); a group with none
            // here (v1 memory, pids, freezer) is read whole, re-reads of
            // warm descriptors
            let rates_of = |k: u8| {
                table
                    .get(usize::from(k))
                    .map(|(kind, _)| kind.counts_for_rates())
            };
            // (the steady refresh has no levels to take nor keep: no
            // lookup, no hashing of every inode)
            let counted = (!levels.is_empty() || keep.is_some())
                && e.handles.each().any(|(k, _)| rates_of(k) == Some(true));
            // levels worth keeping for the next read: a group with both
            let leveled = counted
                && keep.is_some()
                && e.handles.each().any(|(k, _)| rates_of(k) == Some(false));
            let level = if levels.is_empty() {
                None
            } else {
                levels.take(e.inode, &e.path).filter(|_| counted)
            };
            let mut rates_only = priming || level.is_some();
            // the level is shown where a counter read now says the group
            // is the one it was read from; not with no counter read (no
            // descriptor, a read error)
            let mut unproved = level.is_some();
            let hot = out.begin(
                e.path.clone(),
                e.inode,
                e.cgroup_type,
                level.unwrap_or_default(),
            );
            let mut vanished = false;
            // the handles in the table's order (an absent file has none:
            // nothing to look up for it); the group's directory is made
            // only where a file is opened by path or found gone, not for
            // every kept descriptor read
            let root = &self.root;
            let mut j = 0;
            loop {
                let Some((k, h)) = e.handles.nth_mut(j) else {
                    if unproved {
                        // no proof: every file read now, the counters again
                        unproved = false;
                        rates_only = priming;
                        *hot = HotStats::default();
                        j = 0;
                        continue;
                    }
                    break;
                };
                j += 1;
                let k = usize::from(k);
                let Some((kind, name)) = table.get(k) else {
                    continue;
                };
                if *kind == Hot::Procs && hot.pids_current.is_some() {
                    continue;
                }
                // the baseline of the rates, nothing more: every other
                // file is read once, by the next scan
                if rates_only && !kind.counts_for_rates() {
                    continue;
                }
                // the levels alone, within the interval: the counters are
                // read at its end
                if levels_only && kind.counts_for_rates() {
                    continue;
                }
                let events = *kind == Hot::Events;
                if events {
                    match (e.events, &events_moved) {
                        // watched, and no event since the last read
                        (
                            EventsWatch::Watched {
                                wd,
                                last: Some(last),
                            },
                            Some(c),
                        ) if c.binary_search(&wd).is_err() => {
                            hot.events = Some(last);
                            continue;
                        }
                        // read once: watched from now on (set before this
                        // read, so that no change after it goes unseen)
                        (EventsWatch::Read, _)
                            if may_watch && !spent && by_events < self.max_notify =>
                        {
                            if let Handle::Kept(f) = h {
                                events_tried += 1;
                                match watch_events(&mut notify, &mut notify_tried, f) {
                                    Ok(wd) => {
                                        by_events += 1;
                                        e.events = EventsWatch::Watched { wd, last: None };
                                    }
                                    Err(NoWatch::Spent) => spent = true,
                                    // read on every refresh, never asked again
                                    Err(NoWatch::Refused) => e.events = EventsWatch::Unwatchable,
                                }
                            }
                        }
                        _ => {}
                    }
                }
                let path = &e.path;
                let dir = || super::group_dir(root, path);
                let r = read_handle(&hier, h, dir, name, &mut buf, *kind == Hot::Procs, cost);
                if events {
                    // what the next refresh does with this file
                    e.events = match (e.events, &r) {
                        (EventsWatch::Watched { wd, .. }, Read1::Text(_)) => {
                            EventsWatch::Watched { wd, last: None }
                        }
                        (EventsWatch::Unread, Read1::Text(_)) if matches!(h, Handle::Kept(_)) => {
                            EventsWatch::Read
                        }
                        (w, Read1::Text(_)) => w,
                        // not read: read again (the watch, if any, stays
                        // until the entry or its descriptor goes)
                        (EventsWatch::Watched { wd, .. }, _) => {
                            EventsWatch::Watched { wd, last: None }
                        }
                        (w, _) => w,
                    };
                }
                match r {
                    Read1::Gone => {
                        // a file goes away with its group, or alone when a
                        // controller is disabled in the parent: tell them
                        // apart by the directory (same inode = same group;
                        // another inode = the group made again)
                        match hier.dir_ino(&super::group_dir(root, &e.path)) {
                            Ok(ino) if ino == e.inode => {
                                if e.handles.is_kept(k) {
                                    dropped_kept += 1;
                                }
                                if events {
                                    if let (EventsWatch::Watched { wd, .. }, Some(n)) =
                                        (e.events, &notify)
                                    {
                                        let _ = rustix::fs::inotify::remove_watch(n, wd);
                                        by_events -= 1;
                                    }
                                    e.events = EventsWatch::Unread;
                                }
                                e.handles.set(k, Handle::Absent);
                                // the next handle moved into this place
                                j -= 1;
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
                        if kind.counts_for_rates() {
                            unproved = false;
                        }
                        let Ok(text) = std::str::from_utf8(&buf[..n]) else {
                            continue;
                        };
                        apply(hot, *kind, text);
                        if let EventsWatch::Watched { last, .. } = &mut e.events {
                            if events {
                                *last = hot.events;
                            }
                        }
                    }
                }
            }
            if vanished {
                out.cancel();
                gone.push(i);
                continue;
            }
            // io.stat's list grows by doubling (4 devices' room for one):
            // exact, since the sample is kept (the rates' baseline, the
            // snapshot), 10,000 of them at 10,000 groups
            if let Some(io) = hot.io.as_mut() {
                io.0.shrink_to_fit();
            }
            if let Some(k) = keep.as_mut().filter(|_| leveled) {
                k.insert(e.inode, e.path.clone(), &mut levels_of(hot, table));
            }
            out.commit();
        }
        // a file that grew the buffer (a big cgroup.procs, or one over
        // its cap: 8 MiB read, 16 MiB of room) does not keep it grown
        // for the life of the scanner
        if buf.len() > super::SCRATCH {
            buf.truncate(super::SCRATCH);
            buf.shrink_to_fit();
        }
        self.buf = buf;
        // (a pass of the groups a walk after the first found: added)
        if let Some(k) = keep {
            self.levels.append(k);
        }
        self.levels.append(carried);
        // the levels `read_levels` kept, all taken or not wanted now
        levels.clear();
        self.notify = notify;
        self.notify_tried = notify_tried;
        self.by_events = by_events;
        self.events_tried = events_tried;
        self.kept -= dropped_kept;
        if changed {
            self.need_walk = true;
            self.need_full = true;
        }
        for &i in gone.iter().rev() {
            let e = self.entries.remove(i);
            self.kept -= count_kept(&e);
            if matches!(e.events, EventsWatch::Watched { .. }) {
                self.forget_events(e.events);
                self.by_events -= 1;
            }
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use std::fs;

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
    fn kept_levels_are_read_again_when_no_counter_reads() {
        // the levels the first refresh kept are shown by the next where a
        // rate counter read now says the group is the same one; a counter
        // that does not read (here over its cap: a read error, as EACCES
        // or EIO; or no descriptor to read it with) proves nothing, and
        // the levels are read again
        for counter_reads in [true, false] {
            let t = tree();
            let a = t.path().join("a.slice");
            let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
            s.set_keep_levels(true);
            s.scan();
            s.set_keep_levels(false);
            fs::write(a.join("memory.current"), "8192\n").unwrap();
            if !counter_reads {
                let over = "x".repeat(crate::source::hier::CAP_FILE + 1);
                fs::write(a.join("cpu.stat"), over).unwrap();
            }
            let (g, _) = s.scan();
            let a = g.iter().find(|x| as_text(&x.path) == "a.slice").unwrap();
            let (want, why) = if counter_reads {
                (4096, "the kept level")
            } else {
                (8192, "read again")
            };
            assert_eq!(a.hot.memory_current, Some(want), "{why}");
            if !counter_reads {
                assert!(
                    a.hot.unreadable.iter().any(|u| u.file == "cpu.stat"),
                    "{:?}",
                    a.hot.unreadable
                );
            }
        }
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

    /// (populated, frozen) of a.slice, the fixture's one group with a
    /// cgroup.events.
    fn events_of(g: &[crate::model::GroupSample]) -> (Option<bool>, Option<bool>) {
        let e = (g.iter())
            .find(|x| as_text(&x.path) == "a.slice")
            .and_then(|x| x.hot.events)
            .unwrap();
        (e.populated, e.frozen)
    }

    /// A start group and three children, each with a cgroup.events.
    fn four_groups() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (i, rel) in ["", "a", "b", "c"].into_iter().enumerate() {
            mk_group(t.path(), rel, i as u64);
        }
        fix_counts(t.path());
        t
    }

    #[test]
    fn no_events_watch_to_be_had_is_asked_for_once_a_refresh() {
        // no watch to be had for any file: the user's inotify instances
        // spent (fs.inotify.max_user_instances; ENOSPC, its watches spent
        // by cgtop's own event watcher, is the same): every cgroup.events
        // is read on every refresh, and a watch is asked for once a
        // refresh, not once a group
        let t = four_groups();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (_, first) = s.scan();
        s.notify = None;
        s.notify_tried = true;
        for _ in 0..3 {
            let (_, c) = s.scan();
            assert_eq!(c.files_read, first.files_read, "every file read");
        }
        assert_eq!(s.events_tried, 3, "one ask a refresh");
        fs::write(t.path().join("b/cgroup.events"), "populated 1\nfrozen 1\n").unwrap();
        let (g, _) = s.scan();
        let b = g.iter().find(|x| as_text(&x.path) == "b").unwrap();
        assert_eq!(b.hot.events.unwrap().frozen, Some(true), "read again");
        // watches to be had again: every group watched in one pass, then
        // not read until it changes
        s.notify_tried = false;
        s.scan();
        assert_eq!((s.events_tried, s.by_events), (4 + 4, 4));
        let (_, steady) = s.scan();
        assert_eq!(steady.files_read + 4, first.files_read);
    }

    #[test]
    fn a_refused_events_watch_is_not_asked_for_again() {
        // a watch refused for one file (here: EINVAL, the instance is not
        // an inotify one) is asked for once, and the file read on every
        // refresh
        let t = four_groups();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (_, first) = s.scan();
        s.notify = Some(std::os::fd::OwnedFd::from(
            fs::File::open("/dev/null").unwrap(),
        ));
        s.notify_tried = true;
        for _ in 0..3 {
            let (_, c) = s.scan();
            assert_eq!(c.files_read, first.files_read, "every file read");
        }
        assert_eq!(s.events_tried, 4, "once a group");
        fs::write(t.path().join("c/cgroup.events"), "populated 1\nfrozen 0\n").unwrap();
        let (g, _) = s.scan();
        let c = g.iter().find(|x| as_text(&x.path) == "c").unwrap();
        assert_eq!(c.hot.events.unwrap().populated, Some(true), "read again");
    }

    #[test]
    fn cgroup_events_is_read_again_only_after_it_changed() {
        let t = tree();
        let file = t.path().join("a.slice/cgroup.events");
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        // the second read sets the watch, and reads
        let (g, watched) = s.scan();
        assert_eq!(events_of(&g), (Some(true), Some(false)));
        let (g, steady) = s.scan();
        assert_eq!(steady.files_read + 1, watched.files_read, "not read again");
        assert_eq!(events_of(&g), (Some(true), Some(false)), "the last reading");
        // as the kernel's notify after a freeze: IN_MODIFY
        fs::write(&file, "populated 1\nfrozen 1\n").unwrap();
        let (g, after) = s.scan();
        assert_eq!(events_of(&g), (Some(true), Some(true)));
        assert_eq!(after.files_read, watched.files_read, "read once more");
        fs::write(&file, "populated 0\nfrozen 0\n").unwrap();
        let (g, _) = s.scan();
        assert_eq!(events_of(&g), (Some(false), Some(false)));
        let (g, again) = s.scan();
        assert_eq!(again.files_read, steady.files_read);
        assert_eq!(events_of(&g), (Some(false), Some(false)));
        // removed and made again under its name between two refreshes,
        // its file written before any read (no event on the new inode):
        // the walk (which ENODEV starts on cgroupfs; tmpfs reads the old
        // file on) finds the new group, whose file is read
        fs::remove_dir_all(t.path().join("a.slice")).unwrap();
        mk(
            t.path(),
            "a.slice",
            &[("cgroup.events", "populated 1\nfrozen 1\n")],
        );
        s.invalidate();
        let (g, _) = s.scan();
        assert_eq!(events_of(&g), (Some(true), Some(true)));
    }
}
