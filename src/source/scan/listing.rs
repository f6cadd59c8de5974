//! The walk: listing group directories (which hot files each holds, its
//! children), the full walk and the partial one that lists only the
//! subtrees whose nr_descendants moved, and the guards against a name
//! listed twice under churn.

use super::changes::read_descendants;
use super::hot::{file_bit, Table, HOT, TYPE_BIT};
use super::{Entry, FirstLook, Handle, Scanner};
use crate::cgroupfs::files;
use crate::model::tree::path::parent_bytes;
use crate::model::{Errno, GroupPath, ScanCost};
use crate::source::hier::{self, FsError, GroupDir, Hier};
use rustix::fs::FileType;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// A group a walk found: path, inode, and which of HOT and cgroup.type
/// it holds (bits, see [`file_bit`]). Not its directory's path, which
/// `group_dir` makes where a file is opened by path: the walk's own was
/// a copy of every path held until the walk's end.
pub(super) type Listed = (GroupPath, u64, u16);

/// Lists `start` and every directory below it (to `max_depth` levels
/// below the start group) into `found`, unsorted: the one walker of the
/// tree, for the scanner and the event watcher (`source::events`).
/// Whether a directory could not be opened for want of descriptors
/// ([`Short`]).
pub(super) fn walk_from(
    hier: &Hier,
    table: Table,
    start: WalkStart,
    max_depth: Option<usize>,
    found: &mut Vec<Listed>,
    cost: &mut ScanCost,
) -> Short {
    walk_opening(
        hier,
        table,
        start,
        max_depth,
        found,
        cost,
        &mut |_, _, _, _| {},
        None,
        false,
    )
}

/// [`walk_from`], calling `at_dir` with each group listed (path, inode,
/// files present) and its directory while it is open: the first walk
/// opens the group's files from there (`Scanner::preopen`). With `look`
/// (a first look), only the groups its rule opens have their children
/// listed. With `leaves` (a priming walk), a group whose directory
/// [`leaf_rule`] says has no child is not opened nor listed: see
/// [`leaf_of`]. Whether a directory could not be opened for want of
/// descriptors ([`Short`]): that group and its subtree are not in
/// `found`.
#[allow(clippy::too_many_arguments)]
pub(super) fn walk_opening(
    hier: &Hier,
    table: Table,
    start: WalkStart,
    max_depth: Option<usize>,
    found: &mut Vec<Listed>,
    cost: &mut ScanCost,
    at_dir: &mut dyn FnMut(&GroupPath, u64, u16, &GroupAt<'_>),
    mut look: Option<&mut FirstLook>,
    leaves: bool,
) -> Short {
    let mut short = Short(false);
    let leaves =
        leaves && look.is_none() && hier.is_kernfs() && hier.fs_type().is_some_and(leaf_rule);
    // each group with the open directory of its parent (and its name
    // there) while the parent's children wait on the stack: opened from
    // it by one name, not by the whole path from the root
    let held = std::cell::Cell::new(0usize);
    let mut stack: Vec<(WalkStart, Option<FromParent<'_>>)> = vec![(start, None)];
    while let Some(((path, dir, ino, depth), parent)) = stack.pop() {
        if let Some((held_dir, name)) = parent.as_ref().filter(|_| leaves) {
            match leaf_of(held_dir, name, ino, &dir) {
                Leaf::Gone => continue,
                Leaf::Yes(present) => {
                    at_dir(&path, ino, present, &GroupAt::Below(&held_dir.dir, name));
                    found.push((path, ino, present));
                    continue;
                }
                Leaf::List => {}
            }
        }
        let from = parent.as_ref().map(|(d, name)| (&d.dir, name.as_os_str()));
        let Some((open, present, children)) =
            list_dir_open(hier, table, &dir, from, cost, &mut short)
        else {
            continue;
        };
        if let (Some((held_dir, _)), Some(_)) = (&parent, &open) {
            // its siblings' files are these ([`leaf_rule`])
            if held_dir.files.get().is_none() {
                held_dir.files.set(Some(present));
            }
        }
        drop(parent);
        if let Some(open) = &open {
            at_dir(&path, ino, present, &GroupAt::Own(open));
        }
        let deeper = max_depth.is_none_or(|m| depth < m);
        let opened = match look.as_deref_mut() {
            Some(l) if deeper && !children.is_empty() => {
                let listed = found.len() + stack.len() + 1;
                l.opens(hier, &path, &dir, depth, listed)
            }
            _ => true,
        };
        if deeper && opened {
            // kept while its children wait, within [`HELD_DIRS`]; past
            // that (a hostile comb of groups) they are opened from the root
            let kept = open
                .filter(|_| !children.is_empty() && held.get() < HELD_DIRS)
                .map(|dir| Rc::new(HeldDir::new(dir, &held)));
            for (name, child_dir, child_ino) in children {
                // a name no directory can have (a --root tree is
                // only a tree of paths): never a group
                let Ok(child) = path.join(name.as_bytes()) else {
                    continue;
                };
                let from = kept.as_ref().map(|d| (Rc::clone(d), name));
                stack.push(((child, child_dir, child_ino, depth + 1), from));
            }
        }
        found.push((path, ino, present));
    }
    short
}

/// Whether a walk could not open a directory for want of descriptors
/// (EMFILE, ENFILE): the listing lacks that group and everything below
/// it, so it must not be taken for the tree (`Scanner::walk` lets go of
/// its kept descriptors and lists again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(super) struct Short(pub bool);

/// Directories a walk keeps open at most for their children to be
/// opened from (each one's while its children wait on the walk's stack:
/// the ancestors of the group listed that have children left, one or
/// two in a chain however deep). Taken from the descriptors the scanners
/// leave to the rest of the program ([`super::budget::FD_RESERVE`]):
/// 16 for each hierarchy's walk at once, beside the one the walk lists.
pub(super) const HELD_DIRS: usize = 16;

/// A group's parent's open directory and the group's name in it.
type FromParent<'c> = (Rc<HeldDir<'c>>, OsString);

/// A directory a walk keeps open while its children are opened from it,
/// counted in the walk's `held` until closed.
pub(super) struct HeldDir<'c> {
    dir: GroupDir,
    held: &'c std::cell::Cell<usize>,
    /// The files the first of its children listed holds (bits, see
    /// [`file_bit`]): every child's, where [`leaf_rule`] holds.
    files: std::cell::Cell<Option<u16>>,
}

impl<'c> HeldDir<'c> {
    fn new(dir: GroupDir, held: &'c std::cell::Cell<usize>) -> Self {
        held.set(held.get() + 1);
        HeldDir {
            dir,
            held,
            files: std::cell::Cell::new(None),
        }
    }
}

/// Where a group's files are opened from: its own open directory, or
/// its parent's and its name there (a leaf a priming walk did not open:
/// `name/cpu.stat` resolved beneath the parent by the same rules).
pub(super) enum GroupAt<'a> {
    Own(&'a GroupDir),
    Below(&'a GroupDir, &'a OsStr),
}

impl GroupAt<'_> {
    /// The group's file `name`, open for reading ([`GroupDir::open_read`]).
    pub(super) fn open_read(&self, name: &str) -> Result<std::fs::File, FsError> {
        match self {
            GroupAt::Own(d) => d.open_read(name),
            GroupAt::Below(d, child) => d.open_read_below(&Path::new(child).join(name)),
        }
    }

    /// The group's own open directory, where it has one.
    pub(super) fn own(&self) -> Option<&GroupDir> {
        match self {
            GroupAt::Own(d) => Some(d),
            GroupAt::Below(..) => None,
        }
    }
}

/// Whether, on a filesystem of type `magic` (statfs f_type), a group
/// directory's link count of 2 says it has no child group, and its files
/// are those of its siblings, so that a walk may take a leaf's files
/// from a sibling's listing instead of listing it. cgroup v1 (kernfs)
/// counts a directory's links as 2 + its subdirectories
/// (`kn->dir.subdirs + 2`) and gives every group below a hierarchy's
/// root the same interface files (the hierarchy's controllers). cgroup2
/// counts links so too, but siblings' files can differ: below the root a
/// threaded child has no domain controller's files where a domain
/// sibling has them (the root may hold both), and `cgroup.pressure` 0
/// hides one group's pressure files; a sibling's listing could leave a
/// group's memory figures unread, so cgroup2 is listed. tmpfs counts
/// links as kernfs does, but a `--root` tree there holds whatever files
/// it was given: listed. Others (btrfs counts 1 for every directory) are
/// listed.
pub(super) fn leaf_rule(magic: i64) -> bool {
    magic == hier::CGROUP_SUPER_MAGIC
}

/// What a priming walk does with a child group ([`leaf_of`]).
#[derive(Debug, PartialEq, Eq)]
enum Leaf {
    /// No child group: not listed, its files are its siblings'.
    Yes(u16),
    /// Listed, as every group was before.
    List,
    /// Not there any more.
    Gone,
}

/// Whether the child `name` of `parent` (listed with inode `ino`) is a
/// leaf: a directory with 2 links, still the one listed (a group removed
/// and made again under its name since is listed), where a sibling was
/// listed already for the files. One `statx` where an open, a
/// getdents64 and a close were. A child group made under it after this
/// is not seen, as one made after its listing was not.
fn leaf_of(parent: &HeldDir<'_>, name: &OsStr, ino: u64, dir: &Path) -> Leaf {
    let Some(files) = parent.files.get() else {
        return Leaf::List;
    };
    if dir.as_os_str().len() >= PATH_MAX {
        return Leaf::List;
    }
    match parent.dir.child_dir_links(name) {
        Ok(Some((now, 2))) if now == ino => Leaf::Yes(files),
        Err(e) if e.is_absent() => Leaf::Gone,
        _ => Leaf::List,
    }
}

impl Drop for HeldDir<'_> {
    fn drop(&mut self) {
        self.held.set(self.held.get() - 1);
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
    // the event watcher's listing: a directory it cannot open, for want
    // of descriptors or otherwise, is left out as before (its watches
    // have a budget of their own)
    let _ = walk_from(
        hier,
        &HOT,
        (start.clone(), dir, ino, depth),
        max_depth,
        &mut found,
        &mut ScanCost::default(),
    );
    found.into_iter().map(|(p, ino, _)| (p, ino)).collect()
}

/// Where a walk starts: path, directory, inode, depth below the start group.
pub(super) type WalkStart = (GroupPath, PathBuf, u64, usize);

/// Lists one group's directory: which of the files the scanner looks for
/// are there (bits, see [`file_bit`]) and its child directories (name,
/// path, inode). `None` when it cannot be listed (gone, or no
/// descriptor to open it with: `short` says which).
#[allow(clippy::type_complexity)]
pub(super) fn list_dir(
    hier: &Hier,
    table: Table,
    dir: &Path,
    cost: &mut ScanCost,
    short: &mut Short,
) -> Option<(u16, Vec<(OsString, PathBuf, u64)>)> {
    list_dir_open(hier, table, dir, None, cost, short)
        .map(|(_, present, children)| (present, children))
}

/// The length at which a path is refused by the kernel (PATH_MAX counts
/// the terminating NUL): ENAMETOOLONG.
pub(super) const PATH_MAX: usize = 4096;

/// [`list_dir`], with the directory still open (`None` for a directory
/// nested past PATH_MAX, which cannot be opened). With `parent` (its
/// open directory and the name there), opened from it by that name
/// ([`Hier::open_dir_below`]); otherwise by its path from the root.
#[allow(clippy::type_complexity)]
fn list_dir_open(
    hier: &Hier,
    table: Table,
    dir: &Path,
    parent: Option<(&GroupDir, &OsStr)>,
    cost: &mut ScanCost,
    short: &mut Short,
) -> Option<(Option<GroupDir>, u16, Vec<(OsString, PathBuf, u64)>)> {
    let opened = match parent {
        // a group past PATH_MAX could be opened from its parent, but
        // nothing else (the reads by path, the inspection, the writer)
        // could reach it: shown as before, as one that cannot be opened
        _ if dir.as_os_str().len() >= PATH_MAX => Err(FsError::Errno(Errno::NAMETOOLONG)),
        Some((p, name)) => hier.open_dir_below(p, Path::new(name)),
        None => hier.open_group_dir(dir),
    };
    let open = match opened {
        Ok(d) => d,
        // nested past PATH_MAX: its parent lists it, but nothing in or
        // below it can be opened. Kept as a group whose hot files all
        // fail, so that its row says why (and that groups below it are
        // not shown) instead of vanishing
        Err(FsError::Errno(Errno::NAMETOOLONG)) => {
            return Some((None, (1u16 << table.len()) - 1, Vec::new()));
        }
        // not gone: the process is out of descriptors
        Err(e) if super::budget::is_fd_shortage(&e) => {
            short.0 = true;
            return None;
        }
        Err(_) => return None,
    };
    let mut present = 0u16;
    let mut children = Vec::new();
    open.entries(|name, kind, ino| {
        if kind == FileType::Directory {
            let name = OsStr::from_bytes(name);
            let path = dir.join(name);
            // the name's bytes as they are: a lossy copy would make
            // `bad\xff` and `bad\u{FFFD}` one group (issue 7, 4)
            children.push((name.to_owned(), path, ino));
        } else if let Some(bit) = file_bit(table, name) {
            // a symlink or FIFO by a hot file's name is looked at too: its
            // open fails and the group shows why
            present |= 1 << bit;
        }
    })
    .ok()?;
    cost.dirs_listed += 1;
    once_each(&mut children);
    Some((Some(open), present, children))
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
pub(super) fn once_each(children: &mut Vec<(OsString, PathBuf, u64)>) {
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
pub(super) fn one_per_path<T>(items: &mut Vec<T>, key: impl Fn(&T) -> (&GroupPath, u64)) {
    items.dedup_by(|later, kept| {
        let ((lp, li), (kp, ki)) = (key(later), key(kept));
        let same = lp == kp;
        if same && li > ki {
            std::mem::swap(later, kept);
        }
        same
    });
}

/// What a walk would find for a group known not to have changed: its files
/// as the last walk saw them.
pub(super) fn found_of(e: &Entry) -> Listed {
    let mut present = 0u16;
    for (k, h) in e.handles.iter() {
        if !matches!(h, Handle::Absent) {
            present |= 1 << k;
        }
    }
    if e.cgroup_type.is_some() {
        present |= 1 << TYPE_BIT;
    }
    (e.path.clone(), e.inode, present)
}

impl Scanner {
    /// Lists the directories again: only the subtrees whose
    /// nr_descendants moved, or (`periodic`, after our own write, after a
    /// file came or went) everything.
    pub(super) fn walk(&mut self, periodic: bool, cost: &mut ScanCost) {
        // a walk for a group that came or went lists only the subtrees
        // whose nr_descendants moved and keeps the known groups'
        // cgroup.type; the periodic one and one after our own write
        // (invalidate) list everything and read the types again
        // v1 has no cgroup.stat to tell which subtree moved: all of it
        let full =
            self.need_full || periodic || self.reread_types || self.is_v1() || self.look.is_some();
        let found = if full { None } else { self.list_changed(cost) };
        let found = found.unwrap_or_else(|| {
            let (all, short) = self.list_all(cost);
            if !short.0 {
                return all;
            }
            // the descriptors ran out while the walk opened directories:
            // fewer were free than RLIMIT_NOFILE less the reserve said
            // (a parent's left open, a test's neighbours in one process),
            // and the kept files (the first walk's among them) took the
            // rest. A listing without a group and its subtree is not the
            // tree: the kept files are let go, the budget becomes what
            // was kept when they ran out less the walk's own, and the
            // tree is listed again
            self.give_back_kept();
            // still short (the rest of the program holds them all): the
            // groups that could be listed, the refresh said to be
            // descriptor-limited (`give_back_kept`)
            self.list_all(cost).0
        });
        self.reconcile(found, periodic || self.reread_types);
        cost.walked = true;
        self.need_walk = false;
        self.need_full = false;
        self.reread_types = false;
    }

    /// Every group from the start group down (`walk`'s full walk), and
    /// whether a directory could not be opened for want of descriptors.
    fn list_all(&mut self, cost: &mut ScanCost) -> (Vec<Listed>, Short) {
        let root_ino = self.hier.dir_ino(&self.root).unwrap_or(0);
        let mut all = Vec::new();
        let start = (GroupPath::root(), self.root.clone(), root_ino, 0);
        let short = if self.entries.is_empty() {
            // the first walk: every group is new, and its files are
            // opened from its directory while it is listed
            let hier = Arc::clone(&self.hier);
            let (table, depth, priming) = (self.table, self.cfg.max_depth, self.priming);
            let mut look = self.look.take();
            let short = walk_opening(
                &hier,
                table,
                start,
                depth,
                &mut all,
                cost,
                &mut |p, ino, bits, dir| {
                    self.preopen(p, ino, bits, dir);
                },
                look.as_mut(),
                priming,
            );
            self.look = look;
            short
        } else if let Some(mut look) = self.look.take() {
            // a first look's walk again (a group made again under
            // churn): by the same rule
            let short = walk_opening(
                &Arc::clone(&self.hier),
                self.table,
                start,
                self.cfg.max_depth,
                &mut all,
                cost,
                &mut |_, _, _, _| {},
                Some(&mut look),
                false,
            );
            self.look = Some(look);
            short
        } else {
            self.list_subtree(start, &mut all, cost)
        };
        (all, short)
    }

    /// Closes every kept hot file (each is reopened at its reads, or kept
    /// again by `reconcile` within the budget) and the first walk's
    /// openings, after a walk ran out of descriptors, and lowers the
    /// budget to what was kept then, less [`FD_RESERVE`](super::FD_RESERVE):
    /// the descriptors really free, so that the next walk does not run
    /// out again.
    fn give_back_kept(&mut self) {
        let others = self.pool.as_ref().map_or(0, |(p, me)| p.others(*me));
        let had = self.kept + others;
        let reserve = usize::try_from(super::FD_RESERVE).unwrap_or(usize::MAX);
        self.budget = self.budget.min(had.saturating_sub(reserve));
        for e in &mut self.entries {
            for (_, h) in e.handles.each_mut() {
                if matches!(h, Handle::Kept(_)) {
                    *h = Handle::Reopen(None);
                    self.kept -= 1;
                }
            }
        }
        for (_, _, p) in self.preopened.drain(..) {
            if let Some(p) = p {
                self.kept -= p.kept();
            }
        }
        // the first walk's deferred opens were of groups listed again
        self.deferred_opens.clear();
        // taken by `reconcile` as the refresh's `fd_limited`
        self.preopen_limited = true;
        self.publish();
    }

    /// Lists `start` and every directory below it (to `max_depth`) into
    /// `found`, unsorted; whether a directory could not be opened for
    /// want of descriptors.
    pub(super) fn list_subtree(
        &self,
        start: WalkStart,
        found: &mut Vec<Listed>,
        cost: &mut ScanCost,
    ) -> Short {
        walk_from(
            &self.hier,
            self.table,
            start,
            self.cfg.max_depth,
            found,
            cost,
        )
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
    pub(super) fn list_changed(&self, cost: &mut ScanCost) -> Option<Vec<Listed>> {
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
        // a directory not opened for want of descriptors: the full walk
        // (`walk`) deals with it
        let mut short = Short(false);
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
            let dir = super::group_dir(&self.root, &e.path);
            let now = read_descendants(&self.hier, &dir.join(files::STAT), &mut buf)?;
            let moved = now != below[i];
            if !moved && !relist {
                // unchanged below: the last walk's groups stand
                carry(i, &mut found);
                continue;
            }
            let (present, listed) =
                list_dir(&self.hier, self.table, &dir, &mut listed_dirs, &mut short)?;
            found.push((e.path.clone(), e.inode, present));
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
                    _ => {
                        short =
                            self.list_subtree((path, dir, ino, 0), &mut found, &mut listed_dirs);
                        if short.0 {
                            return None;
                        }
                    }
                }
            }
        }
        cost.dirs_listed += listed_dirs.dirs_listed;
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use super::*;
    use std::fs;

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
    fn only_kernfs_says_by_a_link_count_of_2_that_a_group_has_no_child() {
        // statfs f_types (include/uapi/linux/magic.h)
        const TMPFS: i64 = 0x0102_1994;
        const BTRFS: i64 = 0x9123_683e;
        const EXT4: i64 = 0xef53;
        const SYSFS: i64 = 0x6265_6572;
        assert!(leaf_rule(hier::CGROUP_SUPER_MAGIC));
        // cgroup2 siblings' files can differ (thread mode, cgroup.pressure)
        assert!(!leaf_rule(hier::CGROUP2_SUPER_MAGIC));
        // tmpfs counts subdirectories, but its trees' files are not set
        // by the parent; btrfs counts 1 for every directory
        for other in [TMPFS, BTRFS, EXT4, SYSFS] {
            assert!(!leaf_rule(other), "{other:#x}");
        }
    }

    /// A group `cgtop-test-<pid>-<n>` in this host's cgroup2, removed
    /// (with what is below it) on drop.
    struct Cgroup2Group(PathBuf);

    impl Cgroup2Group {
        fn or_skip() -> Option<Self> {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(7100);
            let base = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
                .into_iter()
                .map(Path::new)
                .find(|b| Hier::open(b).is_ok_and(|h| h.is_cgroup2()));
            let (Some(base), true) = (base, rustix::process::geteuid().is_root()) else {
                eprintln!("skipped: needs root and a cgroup2 mount");
                return None;
            };
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = base.join(format!("cgtop-test-{}-{n}", std::process::id()));
            fs::create_dir(&dir).unwrap();
            Some(Self(dir))
        }
    }

    impl Drop for Cgroup2Group {
        fn drop(&mut self) {
            // deepest first: cgroupfs removes only empty groups
            let mut dirs: Vec<PathBuf> = walkdirs(&self.0);
            dirs.sort_by_key(|d| std::cmp::Reverse(d.as_os_str().len()));
            for d in dirs {
                let _ = fs::remove_dir(d);
            }
        }
    }

    fn walkdirs(top: &Path) -> Vec<PathBuf> {
        let mut out = vec![top.to_path_buf()];
        let mut i = 0;
        while let Some(d) = out.get(i).cloned() {
            i += 1;
            for e in fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    out.push(e.path());
                }
            }
        }
        out
    }

    #[test]
    fn a_child_is_a_leaf_only_while_it_is_the_group_listed_and_has_no_child() {
        let Some(g) = Cgroup2Group::or_skip() else {
            return;
        };
        for c in ["a", "b", "c", "d"] {
            fs::create_dir(g.0.join(c)).unwrap();
        }
        let hier = Hier::open(&g.0).unwrap();
        let dir = hier.open_group_dir(Path::new("")).unwrap();
        let mut listed = std::collections::HashMap::new();
        dir.entries(|name, kind, ino| {
            if kind == FileType::Directory {
                listed.insert(OsStr::from_bytes(name).to_owned(), ino);
            }
        })
        .unwrap();
        let held = std::cell::Cell::new(0);
        let parent = HeldDir::new(dir, &held);
        let leaf = |name: &str| {
            leaf_of(
                &parent,
                OsStr::new(name),
                listed[OsStr::new(name)],
                Path::new(name),
            )
        };
        // no sibling listed yet to take the files from: listed
        assert_eq!(leaf("a"), Leaf::List);
        parent.files.set(Some(0b101));
        assert_eq!(leaf("a"), Leaf::Yes(0b101));
        // a group made under b after its parent's listing: b is listed
        fs::create_dir(g.0.join("b/x")).unwrap();
        assert_eq!(leaf("b"), Leaf::List);
        // c removed and made again under its name: another group, listed
        fs::remove_dir(g.0.join("c")).unwrap();
        fs::create_dir(g.0.join("c")).unwrap();
        assert_eq!(leaf("c"), Leaf::List);
        // d removed: gone, as its listing would have found
        fs::remove_dir(g.0.join("d")).unwrap();
        assert_eq!(leaf("d"), Leaf::Gone);
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
}
