//! A walk's listing taken as the scanner's entries: the descriptors of
//! groups that are still the same directory kept, the files now wanted
//! opened (within the budget), those no longer wanted closed, new groups'
//! cgroup.type read.

use super::budget::{count_kept, is_fd_shortage};
use super::changes::Watch;
use super::hot::{bit_of, Hot, TYPE_BIT};
use super::listing::{one_per_path, GroupAt, Listed};
use super::{Entry, Handle, Handles, ScanKind, Scanner};
use crate::cgroupfs::{files, CgroupType};
use crate::model::tree::path::parent_bytes;
use crate::model::GroupPath;

impl Scanner {
    /// Takes `found` (every group, from a walk) as the new list, keeping
    /// the descriptors of groups that are still the same directory (same
    /// inode). `reread_types` reads cgroup.type of every group; otherwise
    /// only of new ones: a walk after a group came or went (on a busy host,
    /// nearly every refresh) then costs no file read for known groups.
    pub(super) fn reconcile(&mut self, mut found: Vec<Listed>, reread_types: bool) {
        // recomputed below: a file left to open/read/close for want of
        // descriptors sets it again
        self.fd_limited = std::mem::take(&mut self.preopen_limited);
        // (in place: a stable sort's room of half the list, freed, would
        // raise the allocator's mmap threshold: `model::heap`; a path
        // listed twice is ordered by inode, `one_per_path` keeps the
        // highest either way)
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        one_per_path(&mut found, |f| (&f.0, f.1));
        // v1: how many subdirectories each directory had when listed (its
        // link count less 2), for the next scans' change check; with a
        // depth limit the last level's are not listed: taken from fstat
        // (each parent's count in a list sorted by parent, not a map: a
        // list's room is given back whole, `model::heap`)
        let subdirs: Vec<(&[u8], u64)> = if self.is_v1() {
            let mut m: Vec<(&[u8], u64)> = (found.iter().skip(1))
                .map(|(p, ..)| (parent_bytes(p.as_bytes()), 1))
                .collect();
            m.sort_unstable_by(|a, b| a.0.cmp(b.0));
            m.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    kept.1 += later.1;
                }
                same
            });
            m
        } else {
            Vec::new()
        };
        let below = |p: &[u8]| {
            (subdirs.binary_search_by(|(q, _)| (*q).cmp(p)).ok())
                .and_then(|i| subdirs.get(i))
                .map_or(0, |(_, n)| *n)
        };
        let expect_links: Vec<Option<u64>> = found
            .iter()
            .map(|(p, ..)| {
                (self.is_v1() && self.cfg.max_depth.is_none()).then(|| 2 + below(p.as_bytes()))
            })
            .collect();
        crate::model::heap::give_back(subdirs);
        // v1: whether the next group is below each one (its directory is
        // held for the watches below it: [`super::DirsBelow`])
        let has_child: Vec<bool> = if self.is_v1() {
            (found.iter().zip(found.iter().skip(1)))
                .map(|(a, b)| super::is_below(b.0.as_rel_path(), a.0.as_rel_path()))
                .chain([false])
                .collect()
        } else {
            Vec::new()
        };
        let mut dirs = super::DirsBelow::default();
        let table = self.table;
        // the walk's openings by inode (in the walk's order for one inode:
        // a directory listed twice holds its later opening)
        let mut preopened = std::mem::take(&mut self.preopened);
        preopened.sort_unstable_by_key(|(inode, at, _)| (*inode, *at));
        // both lists are sorted by path: match them in one pass. Each
        // list's room is given back whole at the end (`model::heap`)
        let mut old_entries = std::mem::take(&mut self.entries);
        let mut old = old_entries.drain(..).peekable();
        let mut expect_links = expect_links;
        let mut entries = Vec::with_capacity(found.len());
        for (i, ((path, inode, present), links)) in
            (found.drain(..).zip(expect_links.drain(..))).enumerate()
        {
            while let Some(gone) = old.next_if(|e| e.path < path) {
                self.kept -= count_kept(&gone);
                self.forget_events(gone.events);
            }
            let (mut entry, new) = match old.next_if(|e| e.path == path) {
                Some(e) if e.inode == inode => (e, false),
                prev => {
                    if let Some(e) = prev {
                        self.kept -= count_kept(&e);
                        self.forget_events(e.events);
                    }
                    let path = match &self.paths {
                        Some(shared) => shared.intern(path),
                        None => path,
                    };
                    let e = Entry {
                        path,
                        inode,
                        cgroup_type: None,
                        handles: Handles::default(),
                        watch: Watch::None,
                        events: super::EventsWatch::Unread,
                    };
                    (e, true)
                }
            };
            let (mask, lazy_procs) = self.wanted(present);
            let has = |bit: usize| mask & (1 << bit) != 0;
            // the files the walk opened from the group's directory
            let mut pre = if new {
                take_preopened(&mut preopened, inode).filter(|p| p.path == entry.path)
            } else {
                None
            };
            // reconcile: a controller enabled or disabled in the parent adds
            // or removes files of a group that stays
            // a new entry's handles, made in the table's order and held
            // in a list of their length (an entry that stays changes its
            // own in place)
            let mut made =
                new.then(|| Vec::with_capacity((mask & !(1 << TYPE_BIT)).count_ones() as usize));
            for (k, (kind, name)) in table.iter().enumerate() {
                let lazy = lazy_procs && *kind == Hot::Procs;
                // cgroup.events' state holds for the descriptor it was
                // read through: another (or none) starts it again
                let mut same = false;
                let h = match (has(k), entry.handles.take(k)) {
                    (true, Handle::Kept(_)) if lazy => {
                        self.kept -= 1;
                        Handle::Reopen(None)
                    }
                    (true, Handle::Absent) if lazy => Handle::Reopen(None),
                    (true, h) if lazy => h,
                    // a reopened file gets a kept descriptor once the
                    // budget has room again (groups went away)
                    (true, Handle::Absent | Handle::Reopen(_)) => {
                        let opened = pre.as_mut().map_or(Handle::Absent, |p| p.handles.take(k));
                        if let Handle::Absent = opened {
                            let file = super::group_dir(&self.root, &entry.path).join(name);
                            self.open_handle(&file)
                        } else {
                            opened
                        }
                    }
                    (false, Handle::Kept(_)) => {
                        self.kept -= 1;
                        Handle::Absent
                    }
                    (false, Handle::Reopen(_)) => Handle::Absent,
                    (_, h) => {
                        same = true;
                        h
                    }
                };
                if *kind == Hot::Events && !same {
                    self.forget_events(std::mem::take(&mut entry.events));
                }
                match made.as_mut() {
                    Some(v) => push_handle(v, k, h),
                    None => entry.handles.set(k, h),
                }
            }
            if let Some(v) = made {
                entry.handles = Handles::of(v);
            }
            if self.is_v1() {
                let below = has_child.get(i).copied().unwrap_or(false);
                self.watch(&mut entry, links, &mut dirs, below);
            }
            if let Some(p) = pre.as_ref().filter(|p| p.type_read) {
                entry.cgroup_type = p.cgroup_type;
            } else if new || reread_types {
                entry.cgroup_type = if has(TYPE_BIT) {
                    self.hier
                        .read_text(&super::group_dir(&self.root, &entry.path).join(files::TYPE))
                        .ok()
                        .and_then(|t| CgroupType::parse(&t).ok())
                } else {
                    None
                };
            }
            if let Some(p) = pre {
                self.kept -= p.kept();
            }
            entries.push(entry);
        }
        for e in old {
            self.kept -= count_kept(&e);
            self.forget_events(e.events);
        }
        // opened for a group the listing gave twice, or that is not kept
        for p in preopened.iter_mut().filter_map(|(_, _, p)| p.take()) {
            self.kept -= p.kept();
        }
        crate::model::heap::give_back(preopened);
        crate::model::heap::give_back(old_entries);
        crate::model::heap::give_back(found);
        crate::model::heap::give_back(expect_links);
        self.entries = entries;
        if let Some(shared) = &self.paths {
            shared.prune();
        }
        self.by_links = (self.entries.iter())
            .filter(|e| matches!(e.watch, Watch::Links(..)))
            .count();
        self.by_notify = (self.entries.iter())
            .filter(|e| matches!(e.watch, Watch::Notify))
            .count();
        self.by_events = (self.entries.iter())
            .filter(|e| matches!(e.events, super::EventsWatch::Watched { .. }))
            .count();
    }
}

/// A new group's files, opened by the first walk from its directory
/// while it was listed (`Scanner::preopen`), taken by `reconcile`.
#[derive(Debug)]
pub(super) struct Preopened {
    pub(super) path: GroupPath,
    /// By the table's index: the handle `open_handle` would have made
    /// (none is `Absent`: a file not there has none). Only those there:
    /// a slot for each of the table's files was 240 bytes a group, held
    /// for every group of the hierarchy until the walk's end.
    pub(super) handles: Handles,
    /// Whether cgroup.type was looked at, and what it said.
    pub(super) type_read: bool,
    pub(super) cgroup_type: Option<CgroupType>,
}

impl Preopened {
    /// The kept descriptors still held (counted in `Scanner::kept`).
    pub(super) fn kept(&self) -> usize {
        (self.handles.iter())
            .filter(|(_, h)| matches!(h, Handle::Kept(_)))
            .count()
    }
}

impl Scanner {
    /// Which files a group whose directory holds `present` (the walk's
    /// bits) gets a handle for, as bits (cgroup.type's too), and whether
    /// its cgroup.procs is lazy: read only where pids.current is not.
    pub(super) fn wanted(&self, present: u16) -> (u16, bool) {
        let table = self.table;
        let extras = self.extras;
        let procs = !matches!(self.kind, ScanKind::V1 { procs: false });
        let recursive_bits = (
            bit_of(table, Hot::BlkioBytesRecursive),
            bit_of(table, Hot::BlkioIosRecursive),
        );
        let usage_user_bit = bit_of(table, Hot::CpuacctUser);
        let split = self.cpu_split;
        let io_ops = self.io_ops;
        // a file of a column not shown is left as if absent: no
        // descriptor, no read
        let has = |bit: usize| {
            present & (1 << bit) != 0
                && table.get(bit).is_none_or(|(h, _)| {
                    h.wanted(extras)
                        && (procs || *h != Hot::Procs)
                        // the user/system split where an output shows it
                        && (split
                            || !matches!(h, Hot::CpuacctUser | Hot::CpuacctSys | Hot::CpuacctStat))
                        // the operation counts where an output shows them
                        && (io_ops || !matches!(h, Hot::BlkioIosRecursive | Hot::BlkioIos))
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
        let mut mask = 0u16;
        for bit in (0..table.len()).chain([TYPE_BIT]) {
            if has(bit) {
                mask |= 1 << bit;
            }
        }
        // cgroup.procs is read only where pids.current is absent: do not
        // hold a descriptor (nor, on kernfs, its page once read) for it
        // otherwise, but keep it reachable should pids.current not parse
        let lazy_procs = bit_of(table, Hot::PidsCurrent).is_some_and(has);
        (mask, lazy_procs)
    }

    /// The first walk, at a group's directory while it is listed: opens
    /// the files `reconcile` would open for it, by name from the
    /// directory (no path resolved from the root again, and on kernfs no
    /// `fstat`: `GroupDir::open_read`), within the descriptor budget as
    /// `open_handle`, and reads its cgroup.type the same way.
    pub(super) fn preopen(
        &mut self,
        path: &GroupPath,
        inode: u64,
        present: u16,
        dir: &GroupAt<'_>,
    ) {
        let (mask, lazy_procs) = self.wanted(present);
        let mut p = Preopened {
            path: path.clone(),
            handles: Handles::default(),
            type_read: false,
            cgroup_type: None,
        };
        let mut made = Vec::with_capacity((mask & !(1 << TYPE_BIT)).count_ones() as usize);
        for (k, (kind, name)) in self.table.iter().enumerate() {
            if mask & (1 << k) == 0 || (lazy_procs && *kind == Hot::Procs) {
                continue;
            }
            // a priming read's walk opens the rate counters only: the
            // other files are opened after its stamp, when first read
            // (`Scanner::read_levels`, within the interval), not on the
            // way to it
            if self.priming && !kind.counts_for_rates() {
                push_handle(&mut made, k, Handle::Reopen(None));
                if let Ok(k) = u8::try_from(k) {
                    self.deferred_opens.push((inode, k));
                }
                continue;
            }
            let h = if self.room() {
                match dir.open_read(name) {
                    Ok(f) => {
                        self.kept += 1;
                        // scanners of other hierarchies may be opening
                        // theirs at the same time (the first refresh)
                        self.publish();
                        Handle::Kept(f)
                    }
                    Err(e) => {
                        self.preopen_limited |= is_fd_shortage(&e);
                        // reopened each time: the error shows on the group
                        Handle::Reopen(None)
                    }
                }
            } else {
                self.preopen_limited = true;
                Handle::Reopen(None)
            };
            push_handle(&mut made, k, h);
        }
        p.handles = Handles::of(made);
        if mask & (1 << TYPE_BIT) != 0 {
            p.type_read = true;
            // nor is cgroup.type read on the way to a priming read's
            // stamp (an open, a read and a close a group): it is read
            // with the deferred opens, within the interval
            // (nor has a leaf the priming walk did not open a directory
            // to read it from)
            match (self.priming, dir.own()) {
                (false, Some(dir)) => {
                    p.cgroup_type = dir
                        .read_text(files::TYPE)
                        .ok()
                        .and_then(|t| CgroupType::parse(&t).ok());
                }
                _ => {
                    if let Ok(k) = u8::try_from(TYPE_BIT) {
                        self.deferred_opens.push((inode, k));
                    }
                }
            }
        }
        // a list, not a map by inode: its room grows in place and is
        // given back whole (`model::heap`), where a map's tables were
        // freed at each growth and at the end (at 10,000 groups, 0.9 MB)
        let at = u32::try_from(self.preopened.len()).unwrap_or(u32::MAX);
        self.preopened.push((inode, at, Some(p)));
    }
}

/// The walk's opening of directory `inode` (`preopened` sorted by inode,
/// then by when it was made), taken: the latest, as a directory the
/// listing gave twice holds its later one. The earlier ones stay, to be
/// let go with the ones no entry took.
fn take_preopened(
    preopened: &mut [(u64, u32, Option<Preopened>)],
    inode: u64,
) -> Option<Preopened> {
    let end = preopened.partition_point(|(i, ..)| *i <= inode);
    match preopened.get_mut(end.checked_sub(1)?) {
        Some((i, _, p)) if *i == inode => p.take(),
        _ => None,
    }
}

/// Adds file `k`'s handle `h` to `v` (made in the table's order, as
/// [`Handles::of`] takes it); `Absent` is not kept.
fn push_handle(v: &mut Vec<(u8, Handle)>, k: usize, h: Handle) {
    if !matches!(h, Handle::Absent) {
        // the table has at most MAX_FILES (15) files
        v.push((u8::try_from(k).unwrap_or(u8::MAX), h));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use super::*;
    use std::fs;

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
        let _ = s.list_subtree(start, &mut found, &mut ScanCost::default());
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
}
