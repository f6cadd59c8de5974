//! errno -> words: what went wrong with one op and what to do about it
//! ([`explain`]), and the fix cgtop can carry out ([`offer_for`]), as pure
//! functions of the op, the [`Errno`] and an [`ErrorContext`]: the facts
//! the writer reads from the hierarchy after a failure (process counts,
//! controllers of ancestors, ...). Tests build the context by hand.
//!
//! The admin guide (Documentation/admin-guide/cgroup-v2.rst) is cited by
//! section where a rule explains the errno.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::{CgroupType, Controllers};
use crate::model::tree::text::escape_str;
use crate::model::write::errno::{self, Errno};
use crate::model::write::input::ControllerChange;
use crate::model::write::outcome::{Offer, WriteError};
use crate::model::write::{self, Op, WriteKind, WriteOp};
use crate::model::GroupPath;

/// Where a controller that a group is not offered can come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Not even the root offers it: it is not on this cgroup2 hierarchy
    /// (bound to cgroup v1 on a hybrid host, or not built).
    NotInHierarchy,
    /// Write "+name" to the cgroup.subtree_control of each group, in order:
    /// the first is the nearest ancestor that has it (in its
    /// cgroup.controllers), the last is the group's parent.
    EnableDown(Vec<GroupPath>),
}

/// Facts about the hierarchy that turn an errno into a specific
/// explanation. Filled by the writer after a failure; tests build it by
/// hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorContext {
    /// The group's directory exists (false: it was removed).
    pub group_exists: bool,
    /// The written file exists (false: controller off, or an old kernel).
    pub file_exists: bool,
    /// Processes in the group itself (its cgroup.procs).
    pub nr_procs: Option<usize>,
    /// Child groups of the group.
    pub nr_children: Option<usize>,
    pub subtree_control: Option<Controllers>,
    /// The group's cgroup.controllers: what is on for it.
    pub controllers: Option<Controllers>,
    pub cgroup_type: Option<CgroupType>,
    /// Controllers the op enables that the group is not offered.
    pub missing: Vec<(String, Availability)>,
    /// Controllers the op disables, with the children that still enable
    /// them.
    pub children_enabling: Vec<(String, Vec<GroupPath>)>,
}

/// What can be offered after `op` failed with `errno` in `ctx`. PURE.
pub fn offer_for(op: &Op, errno: Errno, ctx: &ErrorContext) -> Option<Offer> {
    let WriteKind::SubtreeControl(changes) = &op.as_write()?.kind else {
        return None;
    };
    if errno == Errno::BUSY
        && ctx.nr_procs.is_some_and(|n| n > 0)
        && changes.iter().any(|c| c.enable)
    {
        return Some(Offer::LeafFix {
            group: op.group().clone(),
            changes: changes.clone(),
            nr_procs: ctx.nr_procs.unwrap_or(0),
        });
    }
    if errno == Errno::NOENT && !ctx.missing.is_empty() {
        let mut ops = Vec::new();
        for (name, avail) in &ctx.missing {
            let Availability::EnableDown(chain) = avail else {
                return None;
            };
            for g in chain {
                ops.push(write::set_subtree_control(
                    g,
                    &[ControllerChange::enable(name)],
                ));
            }
        }
        ops.push(op.clone());
        return Some(Offer::EnableAlongPath(ops));
    }
    None
}

/// What was attempted, as messages name it: "/a/b/memory.max", "mkdir /a/b".
fn what(op: &Op) -> String {
    match op {
        Op::CreateGroup(p, ..) => format!("mkdir {p}"),
        Op::RemoveGroup(p, _, _) => format!("rmdir {p}"),
        Op::Write(w) if w.group.is_root() => format!("/{}", escape_str(&w.file)),
        Op::Write(w) => format!("{}/{}", w.group, escape_str(&w.file)),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn list(paths: &[GroupPath]) -> String {
    paths
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The controller that owns an interface file ("memory" for memory.max).
fn controller_of(file: &str) -> &str {
    file.split_once('.').map_or(file, |(c, _)| c)
}

/// Explains a failed op: what went wrong and how to fix it, specific to
/// the op and the errno, with facts from `ctx`.
pub fn explain(op: &Op, errno: Errno, ctx: &ErrorContext) -> WriteError {
    let (explanation, fix) = words(op, errno, ctx);
    WriteError {
        errno: Some(errno),
        what: what(op),
        explanation,
        fix,
    }
}

/// A write refused before anything was written: the hierarchy is not
/// cgroup2 (a plain directory given to `--root`).
pub fn not_cgroup2(op: &Op) -> WriteError {
    WriteError::refused(
        what(op),
        "not on a cgroup2 filesystem (a plain directory): cgtop writes only to cgroupfs".into(),
        None,
    )
}

/// An op asked about a group whose path now names another group (the
/// one asked about was removed and one made again under its name): not
/// done, since the operator never saw the new one.
pub fn made_again(op: &Op) -> WriteError {
    match (op, op.held_group()) {
        // a new group is held to its parent
        (Op::CreateGroup(..), Some(parent)) => WriteError::refused(
            what(op),
            format!(
                "{}, where it was to be made, was removed and made again since you were asked; \
                 nothing done",
                parent.display()
            ),
            Some("select the new one and make the group again there".into()),
        ),
        _ => WriteError::refused(
            what(op),
            format!(
                "{} was removed and made again since you were asked; nothing done",
                op.group().display()
            ),
            Some("select it again to act on the new one".into()),
        ),
    }
}

/// A note of a kill whose group, frozen in the v1 freezer hierarchy, is
/// not the group shown there: removed and made again under its name (or
/// made there since the scan), it is another group, and is not thawed.
pub fn v1_thaw_made_again(group: &GroupPath) -> String {
    format!(
        "{} in the v1 freezer hierarchy was removed and made again since you were asked: not \
         thawed there (a process frozen in it dies only once it is thawed)",
        group.display()
    )
}

/// A write refused before anything was written, for `reason` (the file
/// is not a regular one, a symlink, ...: the reader's words).
pub fn refused_before_writing(op: &Op, reason: &dyn std::fmt::Display) -> WriteError {
    WriteError::refused(what(op), format!("{reason}: nothing is written"), None)
}

/// The kernel took `written` of the `len` bytes of one write(2).
pub fn short_write(op: &Op, written: usize, len: usize) -> WriteError {
    WriteError::refused(
        what(op),
        format!("the kernel took only {written} of {len} bytes"),
        Some("read the file back and write the rest again".into()),
    )
}

/// The notes of the SIGKILL fallback for kernels without cgroup.kill:
/// how many processes were `killed` and `skipped` (never signalled); what
/// is still there after it is [`kill_survivors`]' failure.
pub fn kill_fallback_notes(killed: usize, skipped: usize) -> Vec<String> {
    kill_fallback_notes_in(false, killed, skipped)
}

/// [`kill_fallback_notes`], on cgroup v1 (`v1`), which has no cgroup.kill
/// on any kernel.
pub fn kill_fallback_notes_in(v1: bool, killed: usize, skipped: usize) -> Vec<String> {
    let why = if v1 {
        "cgroup v1 has no cgroup.kill"
    } else {
        "this kernel has no cgroup.kill (Linux 5.14 added it)"
    };
    let mut notes = vec![format!(
        "{why}: sent SIGKILL to {} process{} of the subtree one by one",
        killed,
        if killed == 1 { "" } else { "es" }
    )];
    if skipped > 0 {
        notes.push(format!(
            "{} not signalled: PID 1, a kernel thread, cgtop itself, or no longer in the group",
            plural(skipped, "process", "processes")
        ));
    }
    notes
}

/// A kill whose subtree, walked again a second after it, still holds
/// `left` processes that should have died (`None`: the walk could not see
/// the whole subtree, so no death can be vouched for).
pub fn kill_survivors(op: &Op, left: Option<usize>) -> WriteError {
    let explanation = match left {
        Some(n) => format!(
            "{} of the subtree still {} a second after the kill",
            plural(n, "process", "processes"),
            if n == 1 { "runs" } else { "run" }
        ),
        None => "the subtree could not be walked whole after the kill: whether every process \
                 died is not known"
            .to_owned(),
    };
    WriteError::refused(
        what(op),
        explanation,
        Some(
            "look at the group again; a process frozen by an ancestor dies when that one is \
             thawed"
                .into(),
        ),
    )
}

type Words = (String, Option<String>);

fn words(op: &Op, e: Errno, ctx: &ErrorContext) -> Words {
    let g = op.group();
    match e {
        Errno::LOOP | Errno::XDEV => {
            return (
                "a symbolic link, or a path that leaves the hierarchy: cgtop follows no link \
                 inside it, and nothing was written"
                    .into(),
                None,
            )
        }
        Errno::ACCESS | Errno::PERM => {
            let fix = if matches!(
                op.as_write().map(|w| &w.kind),
                Some(WriteKind::MoveProcess { .. })
            ) {
                "run as root, or --read-only; a delegated user also needs write access to the \
                 cgroup.procs of the common ancestor (admin guide 2-5-2)"
            } else {
                "run as root, or --read-only"
            };
            return ("permission denied".into(), Some(fix.into()));
        }
        Errno::ROFS => {
            return (
                "the cgroup filesystem is mounted read-only".into(),
                Some("remount it read-write, or use --read-only".into()),
            )
        }
        Errno::NOENT | Errno::NODEV if !ctx.group_exists => {
            return match op {
                Op::CreateGroup(p, ..) => (
                    format!(
                        "the parent group {} no longer exists",
                        p.parent().unwrap_or_default()
                    ),
                    Some("refresh the tree".into()),
                ),
                _ => (
                    format!("the group {g} no longer exists"),
                    Some("refresh the tree".into()),
                ),
            };
        }
        _ => {}
    }
    match op {
        Op::CreateGroup(p, ..) => create_words(p, e),
        Op::RemoveGroup(p, _, _) => remove_words(p, e, ctx),
        Op::Write(w) => write_words(w, e, ctx),
    }
}

fn create_words(p: &GroupPath, e: Errno) -> Words {
    let parent = p.parent().unwrap_or_default();
    match e {
        Errno::EXIST => (
            format!("{} already exists in {parent}", p.name_display()),
            Some("choose another name".into()),
        ),
        Errno::AGAIN => (
            format!(
                "the kernel refused another group: cgroup.max.descendants or cgroup.max.depth \
                 of {parent} or an ancestor is reached"
            ),
            Some("raise those limits, or remove groups that are no longer used".into()),
        ),
        Errno::NAMETOOLONG => (
            "the name is too long".into(),
            Some("use at most 255 bytes".into()),
        ),
        _ => (errno::strerror(e), None),
    }
}

fn remove_words(p: &GroupPath, e: Errno, ctx: &ErrorContext) -> Words {
    match e {
        // a group with live processes or children cannot go (admin guide 2-2-1)
        Errno::BUSY | Errno::NOTEMPTY => {
            let procs = ctx.nr_procs.unwrap_or(0);
            let kids = ctx.nr_children.unwrap_or(0);
            let has = match (procs, kids) {
                (0, 0) => None,
                (n, 0) => Some(plural(n, "process", "processes")),
                (0, k) => Some(plural(k, "child group", "child groups")),
                (n, k) => Some(format!(
                    "{} and {}",
                    plural(n, "process", "processes"),
                    plural(k, "child group", "child groups")
                )),
            };
            let explanation = match has {
                None => format!("{p} is not empty: processes or child groups remain below it"),
                Some(has) => {
                    format!("{p} still has {has}; only an empty group can be removed")
                }
            };
            (
                explanation,
                Some(
                    "remove the child groups first, and move its processes out or kill them".into(),
                ),
            )
        }
        _ => (errno::strerror(e), None),
    }
}

/// The note of a v1 freeze that still says FREEZING after `ms`.
/// After cgroup2's cgroup.kill of a group frozen in the v1 freezer
/// hierarchy (a hybrid host): a v1-frozen process does not die of SIGKILL
/// until it is thawed, so the group was thawed there; `refrozen`: and
/// frozen again once its processes were gone; `gone`: they were.
pub fn v1_frozen_kill_note(refrozen: bool, gone: bool) -> String {
    let mut s = String::from(
        "the group was frozen in the v1 freezer hierarchy, where a killed process dies only \
         once thawed: thawed there",
    );
    if refrozen {
        s.push_str(", then frozen again");
    }
    if !gone {
        s.push_str(
            "; some process is still there after 1 s (frozen by an ancestor in the v1 freezer \
             hierarchy? it dies when that one is thawed)",
        );
    }
    s
}

pub fn still_freezing(ms: u64) -> String {
    format!(
        "freezer.state still says FREEZING after {ms} ms: a task has not stopped yet (one in \
         an uninterruptible sleep, such as IO); the kernel finishes the freeze when it can"
    )
}

fn write_words(w: &WriteOp, e: Errno, ctx: &ErrorContext) -> Words {
    let specific = match &w.kind {
        WriteKind::SubtreeControl(changes) => subtree_words(w, changes, e, ctx),
        WriteKind::MoveProcess { pid, threads } => move_words(w, *pid, *threads, e, ctx),
        k @ (WriteKind::BlkioThrottle { .. }
        | WriteKind::BlkioWeight(_)
        | WriteKind::CfsQuota(_)
        | WriteKind::CfsPeriod(_)
        | WriteKind::CpuShares(_)
        | WriteKind::V1Memory(..)
        | WriteKind::FreezerState(_)) => v1_words(w, k, e),
        _ => None,
    };
    specific.unwrap_or_else(|| file_words(w, e, ctx))
}

/// The cgroup v1 files, with what this kernel (6.18) answers, measured:
/// see tests/kernel/v1write.rs.
fn v1_words(w: &WriteOp, kind: &WriteKind, e: Errno) -> Option<Words> {
    use crate::model::write::V1MemoryFile;
    let g = &w.group;
    let c = escape_str(&w.contents);
    Some(match (kind, e) {
        // blkg_conf_open_bdev: no such block device, or a partition
        (WriteKind::BlkioThrottle { dev, .. }, Errno::NODEV) => (
            format!("{dev} is not a whole disk this kernel knows: blkio throttles whole disks only, not partitions"),
            Some("pick the disk (PgUp/PgDn), not one of its partitions".into()),
        ),
        (WriteKind::BlkioThrottle { .. }, Errno::INVAL) => (
            format!("the kernel refused \"{c}\": it takes \"MAJ:MIN BYTES\" (or IOs), 0 removing the rule"),
            None,
        ),
        (WriteKind::BlkioWeight(_), Errno::RANGE | Errno::INVAL) => (
            format!("{c} is outside the weights {} takes", escape_str(&w.file)),
            Some("a weight from 1 to 1000 (blkio.bfq.weight), 10 to 1000 (blkio.weight)".into()),
        ),
        (WriteKind::CfsQuota(_), Errno::INVAL) => (
            format!("the kernel refused a quota of {c} us: a quota is at least 1000 us (1 ms), and a child's quota/period cannot exceed its parent's"),
            Some("a quota of 1000 us or more, or -1 (max); raise the parent's quota first".into()),
        ),
        (WriteKind::CfsPeriod(_), Errno::INVAL) => (
            format!("the kernel refused a period of {c} us: the period is between 1000 us (1 ms) and 1000000 us (1 s)"),
            None,
        ),
        (WriteKind::V1Memory(f, _), Errno::BUSY) => (
            format!("{g} uses more memory than {c} bytes and the kernel could not reclaim enough to fit: cgroup v1 refuses the limit rather than OOM-kill (EBUSY)"),
            Some(format!("free memory in {g} first, or set {} at or above its usage", f.file())),
        ),
        (WriteKind::V1Memory(V1MemoryFile::Limit, _), Errno::INVAL) => (
            format!("the kernel refused memory.limit_in_bytes {c}: it must stay at or below memory.memsw.limit_in_bytes"),
            Some("raise memory.memsw.limit_in_bytes first (the form writes both in the right order)".into()),
        ),
        (WriteKind::V1Memory(V1MemoryFile::MemswLimit, _), Errno::INVAL) => (
            format!("the kernel refused memory.memsw.limit_in_bytes {c}: it must stay at or above memory.limit_in_bytes"),
            Some("lower memory.limit_in_bytes first (the form writes both in the right order)".into()),
        ),
        (WriteKind::FreezerState(_), Errno::INVAL) => (
            format!("freezer.state takes FROZEN or THAWED, not \"{c}\""),
            None,
        ),
        _ => return None,
    })
}

/// cgroup.subtree_control (admin guide 2-4).
fn subtree_words(
    w: &WriteOp,
    changes: &[ControllerChange],
    e: Errno,
    ctx: &ErrorContext,
) -> Option<Words> {
    let g = &w.group;
    Some(match e {
        Errno::BUSY => {
            let enables = changes.iter().any(|c| c.enable);
            let procs = ctx.nr_procs.unwrap_or(0);
            if enables && procs > 0 && !g.is_root() {
                return Some((
                    format!(
                        "{g} has {}; a group that hands a domain controller to its children \
                         cannot hold processes itself (no internal process rule, admin guide 2-4-3)",
                        plural(procs, "process", "processes")
                    ),
                    Some(
                        "move them into a leaf child: the leaf fix creates one, moves them, \
                         then enables the controllers"
                            .into(),
                    ),
                ));
            }
            if let Some((name, kids)) = ctx.children_enabling.first() {
                return Some((
                    format!(
                        "{name} is still enabled by the child group{} {}; a controller cannot be \
                         disabled while a child hands it on (top-down rule, admin guide 2-4-2)",
                        if kids.len() == 1 { "" } else { "s" },
                        list(kids)
                    ),
                    Some(format!(
                        "disable {name} in the children's cgroup.subtree_control first"
                    )),
                ));
            }
            (
                format!(
                    "the kernel refused \"{}\" while {g} is busy",
                    escape_str(&w.contents)
                ),
                Some("if the group holds processes, move them into a leaf child first".into()),
            )
        }
        Errno::NOENT => {
            let Some((name, avail)) = ctx.missing.first() else {
                return Some((
                    format!(
                        "a controller in \"{}\" is not offered to {g}",
                        escape_str(&w.contents)
                    ),
                    Some("enable it in the parent's cgroup.subtree_control first".into()),
                ));
            };
            match avail {
                Availability::NotInHierarchy => (
                    format!(
                        "{name} is not available on this cgroup2 hierarchy: even the root does \
                         not list it in cgroup.controllers"
                    ),
                    Some(
                        "on a hybrid host it is bound to a cgroup v1 hierarchy and cannot be \
                         enabled here"
                            .into(),
                    ),
                ),
                Availability::EnableDown(chain) => {
                    let parent = g.parent().unwrap_or_default();
                    let nearest = chain.first().cloned().unwrap_or_default();
                    let steps = chain
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", then ");
                    (
                        format!(
                            "{name} is not offered to {g}: its parent {parent} does not enable it \
                             (top-down rule, admin guide 2-4-2); the nearest ancestor that has \
                             {name} is {nearest}"
                        ),
                        Some(format!(
                            "write +{name} to cgroup.subtree_control of {steps}, then retry"
                        )),
                    )
                }
            }
        }
        Errno::INVAL => (
            format!(
                "the kernel refused \"{}\": a name is not a controller, or a realtime process \
                 outside the root blocks the cpu controller (admin guide 5-1)",
                escape_str(&w.contents)
            ),
            Some("check the names against cgroup.controllers".into()),
        ),
        Errno::OPNOTSUPP => (
            format!(
                "{g} is {} and only threaded controllers (cpu, cpuset, perf_event, pids) can be \
                 enabled in a threaded subtree (admin guide 2-2-2)",
                ctx.cgroup_type
                    .map_or_else(|| "threaded".to_owned(), |t| format!("\"{t}\""))
            ),
            Some("enable domain controllers above the threaded subtree".into()),
        ),
        _ => return None,
    })
}

/// cgroup.procs and cgroup.threads (admin guide 2-2).
fn move_words(w: &WriteOp, pid: u32, threads: bool, e: Errno, ctx: &ErrorContext) -> Option<Words> {
    let g = &w.group;
    Some(match e {
        // cgroup v1 cpuset: a group without CPUs or memory nodes takes no
        // task (cgroup-v1/cpusets.rst 2.1; measured ENOSPC on 6.18)
        Errno::NOSPC if matches!(w.hier, crate::model::host::layout::HierId::V1(_)) => (
            format!(
                "{g} has no CPUs or memory nodes in the v1 cpuset hierarchy (cpuset.cpus or \
                 cpuset.mems is empty, as in every new cpuset group), so it takes no process"
            ),
            Some(format!(
                "write its parent's cpuset.cpus and cpuset.mems to {g}'s, then move process {pid} again"
            )),
        ),
        Errno::SRCH => (
            format!("process {pid} no longer exists"),
            Some("nothing to move: it has exited".into()),
        ),
        Errno::BUSY => (
            format!(
                "{g} hands controllers to its children ({}), so it cannot hold processes itself \
                 (no internal process rule, admin guide 2-4-3)",
                ctx.subtree_control
                    .as_ref()
                    .filter(|c| !c.is_empty())
                    .map_or_else(|| "cgroup.subtree_control".to_owned(), ToString::to_string)
            ),
            Some(format!("move the process into a leaf child of {g} instead")),
        ),
        Errno::OPNOTSUPP if threads => (
            "a thread can only move within its own threaded subtree (admin guide 2-2-2)".into(),
            Some("move the whole process through cgroup.procs instead".into()),
        ),
        Errno::OPNOTSUPP => (
            format!(
                "{g} is {}, which cannot take processes (admin guide 2-2-2)",
                ctx.cgroup_type
                    .map_or_else(|| "not a valid domain".to_owned(), |t| format!("\"{t}\""))
            ),
            Some("choose a domain group, or make this one threaded first".into()),
        ),
        Errno::INVAL => (
            format!("process {pid} cannot be moved: kernel threads and exiting processes stay where they are"),
            None,
        ),
        Errno::NOENT if ctx.file_exists => (
            "the process or the target group is outside this cgroup namespace (admin guide 2-5-2)"
                .into(),
            Some("run cgtop in the namespace that sees both".into()),
        ),
        _ => return None,
    })
}

/// Every other file: limits, weights, freeze, kill, raw writes.
fn file_words(w: &WriteOp, e: Errno, ctx: &ErrorContext) -> Words {
    let g = &w.group;
    match (&w.kind, e) {
        // -------- freeze and kill
        (WriteKind::Freeze(_) | WriteKind::Kill, Errno::NOENT) if g.is_root() => (
            format!("the root group has no {}", w.file),
            Some("freeze or kill a child group instead".into()),
        ),
        (WriteKind::Freeze(_), Errno::NOENT) => (
            "this kernel has no cgroup.freeze (Linux 5.2 added it)".into(),
            Some("use the cgroup v1 freezer, or a newer kernel".into()),
        ),
        (WriteKind::Kill, Errno::OPNOTSUPP) => (
            format!("{g} is threaded, and cgroup.kill works on whole processes only"),
            Some("kill the threaded domain above it".into()),
        ),
        // -------- limits and other files
        (_, Errno::NOENT) if !ctx.file_exists => {
            if g.is_root() {
                (
                    format!(
                        "the root group has no {}: controller files live in child groups",
                        w.file
                    ),
                    None,
                )
            } else if ctx
                .controllers
                .as_ref()
                .is_some_and(|on| on.contains(controller_of(&w.file)))
            {
                // the controller is on, yet the file is missing: a feature
                // this kernel was built without (io.latency needs
                // CONFIG_BLK_CGROUP_IOLATENCY, io.cost CONFIG_BLK_CGROUP_IOCOST)
                (
                    format!(
                        "this kernel has no {}: the {} controller is on for {g}, but the \
                         feature behind this file was not built into the kernel",
                        w.file,
                        controller_of(&w.file)
                    ),
                    None,
                )
            } else {
                let c = controller_of(&w.file);
                (
                    format!(
                        "{} does not exist in {g}: the {c} controller is not enabled for it",
                        w.file
                    ),
                    Some(format!(
                        "enable +{c} in the cgroup.subtree_control of {}",
                        g.parent().unwrap_or_default()
                    )),
                )
            }
        }
        (
            WriteKind::IoMax(_) | WriteKind::IoWeight { .. } | WriteKind::IoLatency { .. },
            Errno::NODEV,
        ) => (
            format!(
                "the device in \"{}\" is not a whole disk the io controller can use (a partition, \
                 or no such device)",
                escape_str(&w.contents)
            ),
            Some("pick the whole disk in the device list".into()),
        ),
        (
            WriteKind::IoMax(_) | WriteKind::IoWeight { .. } | WriteKind::IoLatency { .. },
            Errno::OPNOTSUPP,
        ) => (
            format!(
                "the device in \"{}\" does not support {}",
                escape_str(&w.contents),
                w.file
            ),
            Some("choose another disk".into()),
        ),
        (_, Errno::INVAL) => invalid_words(w),
        (_, Errno::RANGE) => (
            format!(
                "\"{}\" is out of range for {}",
                escape_str(&w.contents),
                w.file
            ),
            Some(range_hint(&w.kind).into()),
        ),
        (_, Errno::INTR) => (
            "the write was interrupted before the kernel finished (lowering a memory limit \
             reclaims memory first, which can take a while)"
                .into(),
            Some("try again".into()),
        ),
        (_, Errno::TOOBIG) => (
            format!("\"{}\" is too long for one write", escape_str(&w.contents)),
            Some("write a shorter value".into()),
        ),
        (_, Errno::AGAIN) => (
            "the kernel asked to try again".into(),
            Some("try again".into()),
        ),
        (_, Errno::BUSY) => (
            format!("the kernel reported {} busy", w.file),
            Some("try again in a moment".into()),
        ),
        _ => (errno::strerror(e), None),
    }
}

fn invalid_words(w: &WriteOp) -> Words {
    let c = escape_str(&w.contents);
    match &w.kind {
        WriteKind::CpuMax(_) => (
            format!(
                "the kernel refused \"{c}\": the quota must be at least 1000 us and at least \
                 cpu.max.burst, and the period 1000 to 1000000 us"
            ),
            Some("lower cpu.max.burst first, or choose a larger quota".into()),
        ),
        WriteKind::CpuMaxBurst(n) => (
            format!("the kernel refused a burst of {n} us: it may not exceed the quota in cpu.max"),
            Some("raise cpu.max first, or choose a smaller burst".into()),
        ),
        WriteKind::IoMax(_) | WriteKind::IoWeight { .. } | WriteKind::IoLatency { .. } => (
            format!(
                "the kernel refused \"{c}\": a key or value is malformed, or the device is a \
                 partition"
            ),
            Some("use a whole disk (not a partition) and values of at least 2".into()),
        ),
        WriteKind::Freeze(_) | WriteKind::Kill => (
            format!("the kernel refused \"{c}\" for {}", w.file),
            Some("only 0 and 1 are accepted".into()),
        ),
        _ => (
            format!(
                "the kernel refused \"{c}\" for {}: the value is malformed or out of range",
                w.file
            ),
            Some(range_hint(&w.kind).into()),
        ),
    }
}

fn range_hint(kind: &WriteKind) -> &'static str {
    match kind {
        WriteKind::CpuWeight(_) | WriteKind::IoWeight { .. } => "weights are 1 to 10000",
        WriteKind::CpuWeightNice(_) => "nice values are -20 to 19",
        WriteKind::IoMax(_) => "limits are at least 2; max removes a limit",
        WriteKind::PidsMax(_) => "max, or 0 to 4194304",
        WriteKind::Memory(..) => "a number of bytes, or max",
        _ => "check the file's format in the admin guide",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::io::DevId;
    use crate::cgroupfs::{CpuMax, Limit};
    use crate::model::write::input::{IoMaxSet, MemoryFile};
    use crate::model::write::*;

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    fn existing() -> ErrorContext {
        ErrorContext {
            group_exists: true,
            file_exists: true,
            ..ErrorContext::default()
        }
    }

    fn say(op: &Op, e: Errno, ctx: &ErrorContext) -> String {
        explain(op, e, ctx).to_string()
    }

    #[test]
    fn missing_file_with_its_controller_on_is_a_kernel_feature() {
        let dev = crate::cgroupfs::io::DevId {
            major: 254,
            minor: 0,
        };
        let op = write::set_io_latency(&g("a"), dev, Some(10_000));
        let on = ErrorContext {
            file_exists: false,
            controllers: Some(Controllers::parse("cpu io memory")),
            ..existing()
        };
        let msg = say(&op, Errno::NOENT, &on);
        assert!(
            msg.contains("this kernel has no io.latency") && msg.contains("not built"),
            "{msg}"
        );
        let off = ErrorContext {
            file_exists: false,
            controllers: Some(Controllers::parse("cpu memory")),
            ..existing()
        };
        let msg = say(&op, Errno::NOENT, &off);
        assert!(msg.contains("the io controller is not enabled"), "{msg}");
    }

    #[test]
    fn subtree_control_busy_with_processes() {
        let op = set_subtree_control(&g("job"), &[ControllerChange::enable("hugetlb")]);
        let ctx = ErrorContext {
            nr_procs: Some(3),
            ..existing()
        };
        assert_eq!(
            say(&op, Errno::BUSY, &ctx),
            "/job/cgroup.subtree_control: /job has 3 processes; a group that hands a domain \
             controller to its children cannot hold processes itself (no internal process rule, \
             admin guide 2-4-3) (move them into a leaf child: the leaf fix creates one, moves \
             them, then enables the controllers) [EBUSY]"
        );
        let one = ErrorContext {
            nr_procs: Some(1),
            ..existing()
        };
        assert!(say(&op, Errno::BUSY, &one).contains("/job has 1 process;"));
    }

    #[test]
    fn subtree_control_busy_disabling() {
        let op = set_subtree_control(&g("a"), &[ControllerChange::disable("memory")]);
        let ctx = ErrorContext {
            children_enabling: vec![("memory".into(), vec![g("a/b"), g("a/c")])],
            ..existing()
        };
        assert_eq!(
            explain(&op, Errno::BUSY, &ctx).explanation,
            "memory is still enabled by the child groups /a/b, /a/c; a controller cannot be \
             disabled while a child hands it on (top-down rule, admin guide 2-4-2)"
        );
        let none = explain(&op, Errno::BUSY, &existing());
        assert_eq!(
            none.explanation,
            "the kernel refused \"-memory\" while /a is busy"
        );
    }

    #[test]
    fn subtree_control_not_offered() {
        let op = set_subtree_control(&g("a/b/c"), &[ControllerChange::enable("memory")]);
        let ctx = ErrorContext {
            missing: vec![(
                "memory".into(),
                Availability::EnableDown(vec![GroupPath::root(), g("a"), g("a/b")]),
            )],
            ..existing()
        };
        assert_eq!(
            say(&op, Errno::NOENT, &ctx),
            "/a/b/c/cgroup.subtree_control: memory is not offered to /a/b/c: its parent /a/b \
             does not enable it (top-down rule, admin guide 2-4-2); the nearest ancestor that \
             has memory is / (write +memory to cgroup.subtree_control of /, then /a, then /a/b, \
             then retry) [ENOENT]"
        );
        let v1 = ErrorContext {
            missing: vec![("memory".into(), Availability::NotInHierarchy)],
            ..existing()
        };
        assert_eq!(
            say(&op, Errno::NOENT, &v1),
            "/a/b/c/cgroup.subtree_control: memory is not available on this cgroup2 hierarchy: \
             even the root does not list it in cgroup.controllers (on a hybrid host it is bound \
             to a cgroup v1 hierarchy and cannot be enabled here) [ENOENT]"
        );
        let gone = ErrorContext::default();
        assert_eq!(
            say(&op, Errno::NOENT, &gone),
            "/a/b/c/cgroup.subtree_control: the group /a/b/c no longer exists (refresh the tree) [ENOENT]"
        );
    }

    #[test]
    fn subtree_control_invalid_and_threaded() {
        let op = set_subtree_control(&g("t"), &[ControllerChange::enable("memory")]);
        assert_eq!(
            explain(&op, Errno::INVAL, &existing()).explanation,
            "the kernel refused \"+memory\": a name is not a controller, or a realtime process \
             outside the root blocks the cpu controller (admin guide 5-1)"
        );
        let ctx = ErrorContext {
            cgroup_type: Some(CgroupType::Threaded),
            ..existing()
        };
        assert_eq!(
            explain(&op, Errno::OPNOTSUPP, &ctx).explanation,
            "/t is \"threaded\" and only threaded controllers (cpu, cpuset, perf_event, pids) \
             can be enabled in a threaded subtree (admin guide 2-2-2)"
        );
    }

    #[test]
    fn move_process_errors() {
        let op = move_process(4242, &g("a"), false);
        assert_eq!(
            say(&op, Errno::SRCH, &existing()),
            "/a/cgroup.procs: process 4242 no longer exists (nothing to move: it has exited) [ESRCH]"
        );
        let ctx = ErrorContext {
            subtree_control: Some(Controllers::parse("cpu memory")),
            ..existing()
        };
        assert_eq!(
            say(&op, Errno::BUSY, &ctx),
            "/a/cgroup.procs: /a hands controllers to its children (cpu memory), so it cannot \
             hold processes itself (no internal process rule, admin guide 2-4-3) (move the \
             process into a leaf child of /a instead) [EBUSY]"
        );
        let ctx = ErrorContext {
            cgroup_type: Some(CgroupType::DomainInvalid),
            ..existing()
        };
        assert_eq!(
            explain(&op, Errno::OPNOTSUPP, &ctx).explanation,
            "/a is \"domain invalid\", which cannot take processes (admin guide 2-2-2)"
        );
        let t = move_process(7, &g("a"), true);
        assert_eq!(
            say(&t, Errno::OPNOTSUPP, &existing()),
            "/a/cgroup.threads: a thread can only move within its own threaded subtree (admin \
             guide 2-2-2) (move the whole process through cgroup.procs instead) [EOPNOTSUPP]"
        );
        assert_eq!(
            explain(&op, Errno::INVAL, &existing()).explanation,
            "process 4242 cannot be moved: kernel threads and exiting processes stay where they are"
        );
        assert_eq!(
            say(&op, Errno::ACCESS, &existing()),
            "/a/cgroup.procs: permission denied (run as root, or --read-only; a delegated user \
             also needs write access to the cgroup.procs of the common ancestor (admin guide \
             2-5-2)) [EACCES]"
        );
        assert_eq!(
            explain(&op, Errno::NOENT, &existing()).explanation,
            "the process or the target group is outside this cgroup namespace (admin guide 2-5-2)"
        );
    }

    #[test]
    fn create_and_remove_errors() {
        let mk = create_group(&g("a/new"));
        assert_eq!(
            say(&mk, Errno::EXIST, &existing()),
            "mkdir /a/new: new already exists in /a (choose another name) [EEXIST]"
        );
        assert_eq!(
            say(&mk, Errno::NOENT, &ErrorContext::default()),
            "mkdir /a/new: the parent group /a no longer exists (refresh the tree) [ENOENT]"
        );
        assert!(say(&mk, Errno::AGAIN, &existing()).contains("cgroup.max.descendants"));
        let rm = remove_group(&g("a/old"));
        let ctx = ErrorContext {
            nr_procs: Some(2),
            nr_children: Some(1),
            ..existing()
        };
        assert_eq!(
            say(&rm, Errno::BUSY, &ctx),
            "rmdir /a/old: /a/old still has 2 processes and 1 child group; only an empty group \
             can be removed (remove the child groups first, and move its processes out or kill \
             them) [EBUSY]"
        );
        assert_eq!(
            explain(&rm, Errno::BUSY, &existing()).explanation,
            "/a/old is not empty: processes or child groups remain below it"
        );
        assert_eq!(
            say(&rm, Errno::PERM, &existing()),
            "rmdir /a/old: permission denied (run as root, or --read-only) [EPERM]"
        );
    }

    #[test]
    fn limit_errors() {
        let a = g("a");
        let mem = set_memory_limit(&a, MemoryFile::Max, Limit::Value(1 << 30));
        assert_eq!(
            say(&mem, Errno::ACCESS, &existing()),
            "/a/memory.max: permission denied (run as root, or --read-only) [EACCES]"
        );
        let off = ErrorContext {
            group_exists: true,
            ..ErrorContext::default()
        };
        assert_eq!(
            say(&mem, Errno::NOENT, &off),
            "/a/memory.max: memory.max does not exist in /a: the memory controller is not \
             enabled for it (enable +memory in the cgroup.subtree_control of /) [ENOENT]"
        );
        assert_eq!(
            say(&mem, Errno::NODEV, &ErrorContext::default()),
            "/a/memory.max: the group /a no longer exists (refresh the tree) [ENODEV]"
        );
        let root_mem = set_memory_limit(&GroupPath::root(), MemoryFile::Max, Limit::Max);
        assert_eq!(
            explain(&root_mem, Errno::NOENT, &off).explanation,
            "the root group has no memory.max: controller files live in child groups"
        );
        let cpu = set_cpu_max(
            &a,
            CpuMax {
                quota: Some(1000),
                period: 100_000,
            },
        );
        assert_eq!(
            explain(&cpu, Errno::INVAL, &existing()).explanation,
            "the kernel refused \"1000 100000\": the quota must be at least 1000 us and at least \
             cpu.max.burst, and the period 1000 to 1000000 us"
        );
        let burst = set_cpu_max_burst(&a, 9);
        assert!(explain(&burst, Errno::INVAL, &existing())
            .explanation
            .contains("may not exceed the quota"));
        assert_eq!(
            say(&set_cpu_weight(&a, 0), Errno::RANGE, &existing()),
            "/a/cpu.weight: \"0\" is out of range for cpu.weight (weights are 1 to 10000) [ERANGE]"
        );
        let io = set_io_max(
            &a,
            IoMaxSet {
                dev: DevId { major: 8, minor: 1 },
                rbps: Some(Limit::Value(10)),
                wbps: None,
                riops: None,
                wiops: None,
            },
        );
        assert_eq!(
            say(&io, Errno::NODEV, &existing()),
            "/a/io.max: the device in \"8:1 rbps=10\" is not a whole disk the io controller can \
             use (a partition, or no such device) (pick the whole disk in the device list) [ENODEV]"
        );
        assert!(explain(&io, Errno::INVAL, &existing())
            .explanation
            .contains("partition"));
        assert!(say(&mem, Errno::INTR, &existing()).contains("try again"));
        assert_eq!(
            say(&raw(&a, "memory.oom.group", "7"), Errno::INVAL, &existing()),
            "/a/memory.oom.group: the kernel refused \"7\" for memory.oom.group: the value is \
             malformed or out of range (check the file's format in the admin guide) [EINVAL]"
        );
        assert_eq!(
            say(&mem, Errno::ROFS, &existing()),
            "/a/memory.max: the cgroup filesystem is mounted read-only (remount it read-write, or \
             use --read-only) [EROFS]"
        );
        // an errno without specific words falls back to the kernel's own
        assert_eq!(
            say(&mem, Errno::NOMEM, &existing()),
            "/a/memory.max: Cannot allocate memory [ENOMEM]"
        );
    }

    #[test]
    fn freeze_and_kill_errors() {
        let off = ErrorContext {
            group_exists: true,
            ..ErrorContext::default()
        };
        assert_eq!(
            say(&freeze(&GroupPath::root(), true), Errno::NOENT, &off),
            "/cgroup.freeze: the root group has no cgroup.freeze (freeze or kill a child group \
             instead) [ENOENT]"
        );
        assert_eq!(
            explain(&freeze(&g("a"), true), Errno::NOENT, &off).explanation,
            "this kernel has no cgroup.freeze (Linux 5.2 added it)"
        );
        assert_eq!(
            explain(&kill(&g("t")), Errno::OPNOTSUPP, &existing()).explanation,
            "/t is threaded, and cgroup.kill works on whole processes only"
        );
    }

    #[test]
    fn kill_fallback_and_refusals() {
        assert_eq!(
            kill_fallback_notes(1, 0),
            vec![
                "this kernel has no cgroup.kill (Linux 5.14 added it): sent SIGKILL to 1 \
                  process of the subtree one by one"
                    .to_owned()
            ]
        );
        assert_eq!(
            kill_fallback_notes(3, 2)[1..],
            [
                "2 processes not signalled: PID 1, a kernel thread, cgtop itself, or no longer \
              in the group"
                    .to_owned()
            ]
        );
        assert!(kill_fallback_notes(0, 0)[0].contains("to 0 processes"));
        assert_eq!(
            kill_survivors(&kill(&g("a")), Some(1)).to_string(),
            "/a/cgroup.kill: 1 process of the subtree still runs a second after the kill (look \
             at the group again; a process frozen by an ancestor dies when that one is thawed)"
        );
        let op = kill(&g("a"));
        assert_eq!(
            short_write(&op, 1, 2).to_string(),
            "/a/cgroup.kill: the kernel took only 1 of 2 bytes (read the file back and write \
             the rest again)"
        );
        // a create is held to its parent: the words name the parent
        assert_eq!(
            made_again(&create_group(&g("a/p/n"))).to_string(),
            "mkdir /a/p/n: /a/p, where it was to be made, was removed and made again since you \
             were asked; nothing done (select the new one and make the group again there)"
        );
        assert_eq!(
            v1_frozen_kill_note(true, true),
            "the group was frozen in the v1 freezer hierarchy, where a killed process dies only \
             once thawed: thawed there, then frozen again"
        );
        assert_eq!(
            not_cgroup2(&create_group(&g("n"))).to_string(),
            "mkdir /n: not on a cgroup2 filesystem (a plain directory): cgtop writes only to \
             cgroupfs"
        );
        assert_eq!(
            refused_before_writing(&op, &"a FIFO, not a regular file: not read").explanation,
            "a FIFO, not a regular file: not read: nothing is written"
        );
    }

    #[test]
    fn offers_follow_the_failure() {
        let enable = set_subtree_control(&g("a"), &[ControllerChange::enable("cpu")]);
        let busy = ErrorContext {
            nr_procs: Some(2),
            ..existing()
        };
        assert_eq!(
            offer_for(&enable, Errno::BUSY, &busy),
            Some(Offer::LeafFix {
                group: g("a"),
                changes: vec![ControllerChange::enable("cpu")],
                nr_procs: 2
            })
        );
        // EBUSY without processes is not the internal-process rule
        let empty = ErrorContext {
            nr_procs: Some(0),
            ..existing()
        };
        assert_eq!(offer_for(&enable, Errno::BUSY, &empty), None);
        let target = set_subtree_control(&g("x/y/a"), &[ControllerChange::enable("cpu")]);
        let missing = ErrorContext {
            missing: vec![(
                "cpu".into(),
                Availability::EnableDown(vec![g("x"), g("x/y")]),
            )],
            ..existing()
        };
        assert_eq!(
            offer_for(&target, Errno::NOENT, &missing),
            Some(Offer::EnableAlongPath(vec![
                set_subtree_control(&g("x"), &[ControllerChange::enable("cpu")]),
                set_subtree_control(&g("x/y"), &[ControllerChange::enable("cpu")]),
                target.clone(),
            ]))
        );
        let nowhere = ErrorContext {
            missing: vec![("cpu".into(), Availability::NotInHierarchy)],
            ..existing()
        };
        assert_eq!(offer_for(&target, Errno::NOENT, &nowhere), None);
        assert_eq!(offer_for(&kill(&g("a")), Errno::BUSY, &busy), None);
    }
}
