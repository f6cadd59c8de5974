//! Which writes must not happen unless the operator types the group's
//! name: any write that freezes, kills, or moves into a frozen group one of
//! the processes the operator depends on. Those are cgtop itself, the
//! processes it descends from (shell, sudo, sshd, the tmux server), the
//! session of its terminal (the session leader, every process on that
//! tty, and, under tmux or screen, the clients that hold the operator's
//! real terminal with their own sessions and ancestors: the SSH session
//! scope), and PID 1. Freezing cgtop stops it with nothing left to thaw
//! it; freezing or killing the terminal's session locks the operator out.
//!
//! The guard judges the effect of a write ([`crate::model::WriteEffect`]:
//! the kernel's parse of the bytes), and the protection is computed fresh
//! before each write: the app refreshes it with every snapshot and write,
//! and [`perform_checked`] computes it again in the writer immediately
//! before performing, so a process that moved since the question was asked
//! (cgtop itself, after `m`) cannot slip past it.
//!
//! This module reads `/proc` ([`discover_for`]) and checks again before a
//! write; the decisions ([`crate::model::write::guard`]: the roles, the dangers,
//! the mapping of `/proc/PID/cgroup` paths through the mount to the view)
//! are pure and take the subject's pid and the process table as
//! parameters.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use super::hier::{self, FsError, Hier, Hiers};
use super::writer;
use crate::cgroupfs::files;
use crate::model::write::errno::Errno;
use crate::model::write::guard::{hier_mapping, map_to_view, roles, Harm, ProcEntry, Protected};
use crate::model::write::outcome::{WriteError, WriteOutcome};
use crate::model::write::{Op, WriteEffect};
use crate::model::GroupPath;
use std::os::fd::AsFd;
use std::path::Path;

/// Reads the protection of this process: see [`discover_for`].
pub fn discover(view_root: &Path) -> Protected {
    discover_for(view_root, std::process::id())
}

/// Reads from `/proc` what protects process `subject` (cgtop itself, or
/// a stand-in in tests), mapped to `view_root` (the directory cgtop
/// reads or writes: cgroup2, or a v1 hierarchy, whose line of
/// /proc/PID/cgroup is then the one read, `N:memory:/path`). Anything
/// unreadable is left out; the root is always protected.
pub fn discover_for(view_root: &Path, subject: u32) -> Protected {
    let mounts = super::mount::read_mountinfo().unwrap_or_default();
    // mount points are real paths: a root given through a symlink
    // (/sys/fs/cgroup/cpu -> cpu,cpuacct) is matched by where it leads,
    // else no group would be protected at all
    let real = std::fs::canonicalize(view_root);
    let mapping = hier_mapping(&mounts, real.as_deref().unwrap_or(view_root));
    let table = read_table();
    let tids = read_tids(subject);
    let roles = roles(subject, &tids, &table);
    let group_of = |pid: u32| {
        let (line, fs_root, view_rel) = mapping.as_ref()?;
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let p = line.path(&text)?;
        map_to_view(p.strip_suffix(" (deleted)").unwrap_or(p), fs_root, view_rel)
    };
    Protected::from_roles(subject, roles, group_of)
}

/// Every process in `/proc`.
fn read_table() -> Vec<ProcEntry> {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            e.file_name()
                .as_encoded_bytes()
                .iter()
                .all(u8::is_ascii_digit)
        })
        .filter_map(|e| {
            let uid = e.metadata().ok()?.uid();
            let stat = std::fs::read(e.path().join("stat")).ok()?;
            ProcEntry::parse(&stat, uid)
        })
        .collect()
}

/// The thread ids of process `pid`.
fn read_tids(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `group` is frozen now, read from the hierarchy: its own or an
/// ancestor's cgroup.freeze says 1, or its cgroup.events says frozen; on
/// a v1 freezer hierarchy its freezer.state (which an ancestor's freeze
/// sets too) is FROZEN or FREEZING.
pub fn frozen_on_disk(h: &Hier, group: &GroupPath) -> bool {
    let read = |g: &GroupPath, f: &str| h.read_text(&hier::file_rel(g, f));
    let v1 = read(group, crate::model::write::v1_files::FREEZER_STATE)
        .is_ok_and(|t| matches!(t.trim(), "FROZEN" | "FREEZING"));
    let events_frozen =
        read(group, files::EVENTS).is_ok_and(|t| t.lines().any(|l| l.trim() == "frozen 1"));
    v1 || events_frozen
        || group
            .ancestors()
            .any(|g| read(&g, files::FREEZE).is_ok_and(|t| t.trim() == "1"))
}

/// Whether `group` belongs to another user as far as `h` shows: it or an
/// ancestor up to the viewed root is owned by a uid other than root's (a
/// delegated subtree, whose owner may freeze, kill or limit what is moved
/// there). A directory that cannot be read is taken as delegated: the
/// operator then types the name, never the other way round. A view
/// rooted below a group another user owns (`--root` inside their
/// subtree) is delegated whole: the directories above the view's root,
/// on its filesystem, count too.
pub fn delegated_on_disk(h: &Hier, group: &GroupPath) -> bool {
    let memo = &mut std::collections::HashMap::new();
    delegated_owner(h, group, above_view_owner(h), memo) != Owned::By(0)
}

/// The uid of the nearest directory above the view's root, up to its
/// filesystem's mount, that root does not own; 0 where root owns them
/// all.
pub fn above_view_owner(h: &Hier) -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    let Some(real) = h.real_path() else {
        return 0;
    };
    let Ok(dev) = std::fs::metadata(&real).map(|m| m.dev()) else {
        return 0;
    };
    real.ancestors()
        .skip(1)
        .map_while(|p| std::fs::symlink_metadata(p).ok().filter(|m| m.dev() == dev))
        .map(|m| m.uid())
        .find(|&u| u != 0)
        .unwrap_or(0)
}

/// Who owns a group's directory in one hierarchy, by the rule of
/// [`delegated_on_disk`] ([`delegated_owner`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    /// The uid of the first of the group's directory and those above it
    /// that root does not own; 0 where root owns them all.
    By(u32),
    /// The hierarchy has no such group.
    Absent,
    /// A directory on the way could not be asked (a path too long to
    /// open, out of descriptors, a directory gone under its child): not
    /// known to be root's.
    Unreadable,
}

/// Who owns `group` in `h` by the rule of [`delegated_on_disk`], for the
/// identity resolver: [`Owned::By`] the uid of the first of the group's
/// directory and those above it (the view's root, then `above`: what
/// [`above_view_owner`] says) that root does not own, `By(0)` where root
/// owns them all. `memo` keeps the answer of each directory asked (one
/// `fstat` each).
pub fn delegated_owner<S: std::hash::BuildHasher>(
    h: &Hier,
    group: &GroupPath,
    above: u32,
    memo: &mut std::collections::HashMap<GroupPath, Owned, S>,
) -> Owned {
    if let Some(v) = memo.get(group) {
        return *v;
    }
    let v = match h.owner_of(hier::group_rel(group)) {
        Err(FsError::Errno(Errno::NOENT)) => Owned::Absent,
        Err(_) => Owned::Unreadable,
        Ok(u) if u != 0 => Owned::By(u),
        Ok(_) => match group.parent() {
            Some(p) => match delegated_owner(h, &p, above, memo) {
                // gone above a group that is there: a race, not root's
                // for sure
                Owned::Absent => Owned::Unreadable,
                o => o,
            },
            None => Owned::By(above),
        },
    };
    memo.insert(group.clone(), v);
    v
}

/// One owner of a group from what each hierarchy holding it says
/// ([`delegated_owner`] in each): another user's uid where any says so (a
/// subtree delegated in one v1 hierarchy is theirs there, whatever the
/// others say), `Some(0)` where at least one holds it and every one that
/// does says root, `None` where none holds it or one could not be asked:
/// not known to be root's, so not named from the system's files.
pub fn owner_across(each: impl IntoIterator<Item = Owned>) -> Option<u32> {
    let mut root = false;
    for o in each {
        match o {
            Owned::By(0) => root = true,
            Owned::By(u) => return Some(u),
            Owned::Absent => {}
            Owned::Unreadable => return None,
        }
    }
    root.then_some(0)
}

/// Performs `op` after checking it once more against protection computed
/// now for process `subject` (cgtop: `std::process::id()`): an op that
/// needs the target's name typed is refused unless `typed` names its
/// group, whatever was asked before.
pub fn perform_checked(h: &Hier, op: &Op, typed: Option<&GroupPath>, subject: u32) -> WriteOutcome {
    checked_holding(h, op, typed, subject).0
}

/// [`perform_checked`], and the directory the op was held to
/// ([`writer::perform_holding`]): a kill's, which [`writer::after_kill`]
/// reads.
fn checked_holding(
    h: &Hier,
    op: &Op,
    typed: Option<&GroupPath>,
    subject: u32,
) -> (WriteOutcome, Option<std::os::fd::OwnedFd>) {
    let p = discover_for(h.path(), subject);
    let moves = matches!(op.effect(), WriteEffect::Move { .. });
    let frozen = moves && frozen_on_disk(h, op.group());
    let delegated = moves && delegated_on_disk(h, op.group());
    let dangers = op_dangers_by_leader(&p, op, frozen, delegated);
    if dangers.is_empty() || typed == Some(op.group()) {
        return writer::perform_holding(h, op);
    }
    let why = dangers
        .iter()
        .map(|d| d.sentence(Harm::of(op)))
        .collect::<Vec<_>>()
        .join("; it ");
    (
        refused(
            op,
            format!(
                "refused: checked again just before writing, {} {why}, and its name was not typed",
                op.group()
            ),
            again(op),
        )
        .guarded_for(dangers),
        None,
    )
}

/// [`Protected::op_dangers`], for a write to cgroup.procs (or v1's) of a
/// thread's id also as the move of its process: the kernel moves the
/// thread's whole thread group, so a thread id of a protected process (a
/// multi-threaded PID 1, a parent) is that process.
fn op_dangers_by_leader(
    p: &crate::model::write::guard::Protected,
    op: &Op,
    frozen: bool,
    delegated: bool,
) -> Vec<crate::model::write::guard::Danger> {
    use crate::model::write::Mover;
    let mut out = p.op_dangers(op, frozen, delegated);
    if let WriteEffect::Move {
        who: Mover::Pid(tid),
        threads: false,
    } = op.effect()
    {
        if let Some(leader) = tgid_of(tid).filter(|&l| l != tid) {
            let whole = crate::model::write::move_process(leader, op.group(), false);
            out.extend(p.op_dangers(&whole, frozen, delegated));
            out.sort();
            out.dedup();
        }
    }
    out
}

/// The thread group (process) of thread `tid`: the `Tgid:` line of
/// /proc/TID/status.
fn tgid_of(tid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

/// The way out of a refusal by the writer's check. The app judges with
/// the primary hierarchy's protection; in a v1 hierarchy a process may sit
/// in a group it does not see there, and asking again would not ask for
/// the name.
fn again(op: &Op) -> &'static str {
    match op.hier() {
        crate::model::host::layout::HierId::V2 => {
            "ask again: cgtop now asks for the group's name to be typed"
        }
        crate::model::host::layout::HierId::V1(_) => {
            "in this v1 hierarchy the group holds such a process (its line of /proc/PID/cgroup \
             says so): move that process out of the group there first"
        }
    }
}

/// [`perform_checked`] through the handle of the op's hierarchy: the
/// protection is read on that hierarchy's line of /proc/PID/cgroup, and a
/// move is judged against that hierarchy's freezer.
pub fn perform_checked_on(
    hiers: &Hiers,
    op: &Op,
    typed: Option<&GroupPath>,
    subject: u32,
) -> WriteOutcome {
    match hiers.get(op.hier()) {
        Some(h) => perform_checked_in(hiers, h, op, typed, subject),
        None => writer::perform_on(hiers, op),
    }
}

fn perform_checked_in(
    hiers: &Hiers,
    h: &Hier,
    op: &Op,
    typed: Option<&GroupPath>,
    subject: u32,
) -> WriteOutcome {
    // a move into a v1 hierarchy stops the process where the group is
    // frozen in the v1 freezer hierarchy, whichever hierarchy it moves in
    let v1_frozen = matches!(op.effect(), WriteEffect::Move { .. })
        && hiers
            .holder("freezer")
            .filter(|(id, _)| matches!(id, crate::model::host::layout::HierId::V1(_)))
            .is_some_and(|(_, f)| frozen_on_disk(f, op.group()));
    if v1_frozen && typed != Some(op.group()) {
        let p = discover_for(h.path(), subject);
        let dangers = op_dangers_by_leader(&p, op, true, delegated_on_disk(h, op.group()));
        if !dangers.is_empty() {
            let why = dangers
                .iter()
                .map(|d| d.sentence(Harm::of(op)))
                .collect::<Vec<_>>()
                .join("; it ");
            return refused(
                op,
                format!(
                    "refused: checked again just before writing, {} {why}, and its name was not typed",
                    op.group()
                ),
                again(op),
            )
            .guarded_for(dangers);
        }
    }
    let (outcome, held) = checked_holding(h, op, typed, subject);
    writer::after_kill(hiers, op, outcome, held.as_ref().map(AsFd::as_fd))
}

fn refused(op: &Op, explanation: String, fix: &str) -> WriteOutcome {
    WriteOutcome::failed(
        op.clone(),
        WriteError::refused(op.describe(), explanation, Some(fix.into())),
    )
}

/// [`writer::leaf_fix_in`] after the guard's check: the fix moves every
/// process of `group` itself into `group/leaf`, so when that leaf is
/// there already and frozen (or below a frozen group), and `group` holds
/// cgtop, the operator's session or terminal, or PID 1, it is refused (the
/// dialog has no typed name to give; thawing the leaf first is the way).
pub fn leaf_fix_checked(
    h: &Hier,
    group: &GroupPath,
    leaf: &str,
    changes: &[crate::model::ControllerChange],
    subject: u32,
) -> Vec<WriteOutcome> {
    let Ok(leaf_path) = group.join(leaf) else {
        return Vec::new();
    };
    if h.dir_ino(hier::group_rel(&leaf_path)).is_ok() && frozen_on_disk(h, &leaf_path) {
        let p = discover_for(h.path(), subject);
        let held = p.own.as_ref() == Some(group)
            || p.session.contains(group)
            || p.terminal.contains(group)
            || p.init.as_ref() == Some(group);
        if held {
            return vec![refused(
                &crate::model::write::create_group(&leaf_path),
                format!(
                    "refused: {leaf_path} is frozen, and {group} holds cgtop, your session or \
                     terminal, or PID 1: moving its processes there would stop them"
                ),
                "thaw the leaf first (f on it), or choose another leaf name",
            )];
        }
    }
    writer::leaf_fix_in(h, group, leaf, changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::guard::{Danger, Role};

    #[test]
    fn discover_on_this_machine() {
        // whatever this machine is, the result is consistent: cgtop's own
        // group (if known) is protected, and the root always is
        let view = crate::source::mount::discover().map(|m| m.root);
        let Ok(view) = view else {
            println!("skipped: no cgroup2 mount");
            return;
        };
        let p = discover(&view);
        let set = p.groups();
        assert!(set.contains(&GroupPath::root()));
        if let Some(own) = &p.own {
            assert!(set.contains(own));
            assert!(p.dangers(own).contains(&Danger::ContainsCgtop));
        }
        // outside any cgroup2 mount: no group is known
        let outside = discover(Path::new("/nonexistent"));
        assert_eq!(outside.groups(), vec![GroupPath::root()]);
        assert_eq!(
            outside.processes.get(&std::process::id()),
            Some(&Role::Cgtop)
        );
    }
}
