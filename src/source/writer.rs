//! Performs one [`Op`] against the hierarchy under a root directory: reads
//! the old value, writes the whole contents in ONE write(2) (cgroupfs
//! parses each write on its own, so a split write would be two commands),
//! reads the file back, and explains a failure in plain words with a fix.
//!
//! The errno -> words mapping, [`explain`], is a pure function of the op,
//! the errno and an [`ErrorContext`]; the context (process counts,
//! controllers of ancestors, ...) is read from the hierarchy only after a
//! write failed.
//!
//! The writer targets cgroupfs semantics: files are opened for writing
//! without truncation or creation, as the kernel expects. A plain directory
//! given with `--root` is not rewritten faithfully (a shorter value leaves
//! the tail of the old one).
//!
//! Must not depend on: `app`, `ui`, the terminal.

use super::hier::{self, FsError, Hier};
use crate::cgroupfs::{self, files, CgroupType, Controllers};
use crate::model::input::ControllerChange;
use crate::model::text::escape_str;
use crate::model::write::{self, Op, WriteKind, WriteOp};
use crate::model::GroupPath;
use rustix::io::Errno;
use std::fmt;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a write failed, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError {
    /// The errno the kernel returned; `None` for a short write.
    pub errno: Option<i32>,
    /// What was attempted: "/a/b/memory.max", "mkdir /a/b".
    pub what: String,
    /// What went wrong, in words.
    pub explanation: String,
    /// What to do about it, when there is something to do.
    pub fix: Option<String>,
}

impl WriteError {
    /// The errno's symbolic name ("EBUSY"), or "" without one.
    pub fn errno_name(&self) -> &'static str {
        self.errno.map_or("", errno_name)
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.explanation)?;
        if let Some(fix) = &self.fix {
            write!(f, " ({fix})")?;
        }
        if self.errno.is_some() {
            write!(f, " [{}]", self.errno_name())?;
        }
        Ok(())
    }
}

impl std::error::Error for WriteError {}

/// What happened when one op was performed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    pub op: Op,
    /// The value undo needs ([`Op::undo_source`]), read before the write.
    pub old: Option<String>,
    /// The file read back after the write (also after a failure: it shows
    /// what is in force).
    pub new_readback: Option<String>,
    pub result: Result<(), WriteError>,
    /// Facts worth telling beyond success or failure ("this kernel has no
    /// cgroup.kill: ...", "process 7 exited before it could be moved").
    pub notes: Vec<String>,
    /// A fix cgtop can carry out for the operator after this failure.
    pub offer: Option<Offer>,
}

/// A fix that follows from a failure, offered to the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// EBUSY from the no internal process rule (admin guide 2-4-3): move
    /// the group's processes into a new leaf child, then enable.
    LeafFix {
        group: GroupPath,
        changes: Vec<ControllerChange>,
        nr_procs: usize,
    },
    /// ENOENT: the parent does not hand the controller down; enable it
    /// along the path from the nearest ancestor that has it, then retry.
    EnableAlongPath(Vec<Op>),
}

/// What can be offered after `op` failed with `errno` in `ctx`. PURE.
pub fn offer_for(op: &Op, errno: i32, ctx: &ErrorContext) -> Option<Offer> {
    let WriteKind::SubtreeControl(changes) = &op.as_write()?.kind else {
        return None;
    };
    if errno == Errno::BUSY.raw_os_error()
        && ctx.nr_procs.is_some_and(|n| n > 0)
        && changes.iter().any(|c| c.enable)
    {
        return Some(Offer::LeafFix {
            group: op.group().clone(),
            changes: changes.clone(),
            nr_procs: ctx.nr_procs.unwrap_or(0),
        });
    }
    if errno == Errno::NOENT.raw_os_error() && !ctx.missing.is_empty() {
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

impl WriteOutcome {
    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    pub fn errno(&self) -> Option<i32> {
        self.result.as_ref().err().and_then(|e| e.errno)
    }

    /// A sentence when the kernel stored something other than what was
    /// written (page rounding, clamping).
    pub fn stored_differs(&self) -> Option<String> {
        if self.result.is_err() {
            return None;
        }
        let w = self.op.as_write()?;
        w.check_readback(self.new_readback.as_deref()?)
    }

    /// The op that puts back what this one replaced; only after success.
    pub fn undo(&self) -> Option<Op> {
        self.result.as_ref().ok()?;
        self.op.undo(self.old.as_deref())
    }

    /// One line for the status bar.
    pub fn summary(&self) -> String {
        if let Err(e) = &self.result {
            return e.to_string();
        }
        let mut s = format!("done: {}", self.op.describe());
        for extra in self.stored_differs().iter().chain(&self.notes) {
            s.push_str("; ");
            s.push_str(extra);
        }
        s
    }
}

// ---------------------------------------------------------------------------
// Performing.

/// The directory of a group under `root` (for messages; every open goes
/// through the hierarchy handle, [`Hier`]).
pub fn group_dir(root: &Path, group: &GroupPath) -> PathBuf {
    if group.is_root() {
        root.to_path_buf()
    } else {
        root.join(group.as_rel_path())
    }
}

fn read(h: &Hier, rel: &Path) -> Option<String> {
    h.read_text(rel).ok()
}

/// Why a single write did not go through.
enum WriteFail {
    Errno(i32),
    Short {
        written: usize,
        len: usize,
    },
    /// Refused before anything was written: not a regular file, not on
    /// cgroup2.
    Refused(FsError),
}

impl From<FsError> for WriteFail {
    fn from(e: FsError) -> Self {
        match e {
            FsError::Errno(n) => Self::Errno(n),
            other => Self::Refused(other),
        }
    }
}

/// One write(2) of the whole text, to an existing regular file on cgroup2
/// below the root, opened without following any symlink and without
/// O_CREAT or truncation.
fn write_once(h: &Hier, rel: &Path, contents: &str) -> Result<(), WriteFail> {
    let mut f = h.open_write(rel)?;
    let n = f
        .write(contents.as_bytes())
        .map_err(|e| WriteFail::Errno(e.raw_os_error().unwrap_or(0)))?;
    if n == contents.len() {
        Ok(())
    } else {
        Err(WriteFail::Short {
            written: n,
            len: contents.len(),
        })
    }
}

/// The error for a write refused before it was made.
fn refusal(op: &Op, e: FsError) -> WriteError {
    WriteError {
        errno: None,
        what: what(op),
        explanation: match e {
            FsError::NotCgroup2 => {
                "not on a cgroup2 filesystem (a plain directory): cgtop writes only to cgroupfs"
                    .into()
            }
            other => format!("{other}: nothing is written"),
        },
        fix: None,
    }
}

/// Performs one op against the hierarchy at `root`, opened now (tests;
/// the program passes the handle it opened at start to [`perform_in`]).
pub fn perform(root: &Path, op: &Op) -> WriteOutcome {
    match Hier::open(root) {
        Ok(h) => perform_in(&h, op),
        Err(e) => {
            let errno = e.raw_os_error().unwrap_or(0);
            WriteOutcome {
                op: op.clone(),
                old: None,
                new_readback: None,
                result: Err(explain(op, errno, &ErrorContext::default())),
                notes: Vec::new(),
                offer: None,
            }
        }
    }
}

/// Performs one op beneath the hierarchy handle `h`. Nothing is ever
/// written to a hierarchy that is not cgroup2.
pub fn perform_in(h: &Hier, op: &Op) -> WriteOutcome {
    let outcome = |result, notes| WriteOutcome {
        op: op.clone(),
        old: None,
        new_readback: None,
        result,
        notes,
        offer: None,
    };
    if !h.is_cgroup2() {
        return outcome(Err(refusal(op, FsError::NotCgroup2)), Vec::new());
    }
    let dir_op = |r: Result<(), FsError>| {
        r.map_err(|e| match e {
            FsError::Errno(errno) => explain(op, errno, &gather_context_in(h, op, errno)),
            other => refusal(op, other),
        })
    };
    match op {
        Op::CreateGroup(p) => outcome(dir_op(h.mkdir(hier::group_rel(p))), Vec::new()),
        Op::RemoveGroup(p) => outcome(dir_op(h.rmdir(hier::group_rel(p))), Vec::new()),
        Op::Write(w) => perform_write(h, op, w),
    }
}

fn perform_write(h: &Hier, op: &Op, w: &WriteOp) -> WriteOutcome {
    let dir = hier::group_rel(&w.group);
    let path = dir.join(&w.file);
    if matches!(w.kind, WriteKind::Kill)
        && !w.group.is_root()
        && h.dir_ino(dir).is_ok()
        && h.is_file(&path).is_err_and(|e| e.is_absent())
    {
        return kill_by_signal(h, op, &w.group);
    }
    let old = op.undo_source().and_then(|f| read(h, &dir.join(f)));
    let mut offer = None;
    let result = write_once(h, &path, &w.contents).map_err(|fail| match fail {
        WriteFail::Errno(errno) => {
            let ctx = gather_context_in(h, op, errno);
            offer = offer_for(op, errno, &ctx);
            explain(op, errno, &ctx)
        }
        WriteFail::Short { written, len } => WriteError {
            errno: None,
            what: what(op),
            explanation: format!("the kernel took only {written} of {len} bytes"),
            fix: Some("read the file back and write the rest again".into()),
        },
        WriteFail::Refused(e) => refusal(op, e),
    });
    let new_readback = if op.reads_back() {
        read(h, &path)
    } else {
        None
    };
    WriteOutcome {
        op: op.clone(),
        old,
        new_readback,
        result,
        notes: Vec::new(),
        offer,
    }
}

/// Every pid in the group and below, from cgroup.procs, with the group
/// that listed it.
fn subtree_pids(h: &Hier, group: &GroupPath, out: &mut Vec<(u32, GroupPath)>) {
    let dir = hier::group_rel(group);
    if let Some(t) = read(h, &dir.join(files::PROCS)) {
        out.extend(
            cgroupfs::parse_pids(&t)
                .into_iter()
                .map(|p| (p, group.clone())),
        );
    }
    if let Ok(entries) = h.list(dir) {
        for e in entries.into_iter().filter(|e| e.is_dir) {
            if let Ok(child) = group.join(e.name.as_bytes()) {
                subtree_pids(h, &child, out);
            }
        }
    }
}

/// PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// Why a pid listed in a group is not signalled by the SIGKILL fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotSignalled {
    /// PID 1: never.
    Init,
    /// cgtop itself.
    Itself,
    /// A kernel thread (PF_KTHREAD).
    KernelThread,
    /// /proc/PID/cgroup does not name this group (moved, exited, or the
    /// list was not the kernel's).
    NotInGroup,
}

/// Whether the SIGKILL fallback may signal `pid`, listed in the group
/// whose /proc/PID/cgroup path is `want` ("/a/b"), from the texts of its
/// /proc/PID/stat and /proc/PID/cgroup. PURE.
pub fn may_signal(
    pid: u32,
    self_pid: u32,
    stat: &str,
    cgroup: &str,
    want: &str,
) -> Result<(), NotSignalled> {
    if pid <= 1 {
        return Err(NotSignalled::Init);
    }
    if pid == self_pid {
        return Err(NotSignalled::Itself);
    }
    // fields after "(comm) ": state ppid pgrp session tty_nr tpgid flags
    let flags = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.split_ascii_whitespace().nth(6))
        .and_then(|f| f.parse::<u64>().ok());
    match flags {
        Some(f) if f & PF_KTHREAD == 0 => {}
        Some(_) => return Err(NotSignalled::KernelThread),
        None => return Err(NotSignalled::NotInGroup),
    }
    let here = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .is_some_and(|p| p == want);
    if here {
        Ok(())
    } else {
        Err(NotSignalled::NotInGroup)
    }
}

/// The path /proc/PID/cgroup shows for `group` ("/a/b"): the hierarchy
/// root's place in the cgroup2 mount (read from the root's descriptor, so
/// a `--root` inside the mount counts) plus the group.
fn proc_cgroup_path(h: &Hier, group: &GroupPath) -> Option<String> {
    let real = h.real_path()?;
    let mount = super::mount::discover().ok()?.root;
    let below = real.strip_prefix(&mount).ok()?;
    let mut p = String::from("/");
    let below = below.to_str()?;
    p.push_str(below);
    if !group.is_root() {
        if !below.is_empty() {
            p.push('/');
        }
        // /proc/PID/cgroup is compared as text: a group whose name is not
        // UTF-8 gets no per-process fallback (a kernel without cgroup.kill,
        // before 5.14), rather than a lossy name that may be another group
        p.push_str(std::str::from_utf8(group.as_bytes()).ok()?);
    }
    Some(p)
}

/// Sends SIGKILL to `pid` if [`may_signal`] allows it. The process is
/// held by a pidfd before it is checked, so a pid reused after the check
/// is not the one signalled.
fn kill_checked(pid: u32, want: &str) -> Result<bool, Errno> {
    use rustix::process::{kill_process, pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return Ok(false);
    };
    let pidfd = match pidfd_open(p, PidfdFlags::empty()) {
        Ok(fd) => Some(fd),
        Err(Errno::SRCH) => return Ok(false),
        Err(_) => None,
    };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    if may_signal(pid, std::process::id(), &stat, &cgroup, want).is_err() {
        return Ok(false);
    }
    let r = match &pidfd {
        Some(fd) => pidfd_send_signal(fd, Signal::KILL),
        None => kill_process(p, Signal::KILL),
    };
    match r {
        Ok(()) => Ok(true),
        Err(Errno::SRCH) => Ok(false),
        Err(e) => Err(e),
    }
}

/// cgroup.kill for kernels before 5.14: SIGKILL to each pid of the
/// subtree. Runs only on cgroup2 (the caller found no cgroup.kill there);
/// each pid is checked first ([`may_signal`]: never PID 1, a kernel
/// thread or cgtop, and only where /proc/PID/cgroup names the group that
/// listed it). The subtree is frozen first where cgroup.freeze exists, so
/// that nothing forks between listing and killing (a fatal signal still
/// reaches a frozen process, admin guide 4-3 cgroup.freeze), and thawed
/// after.
fn kill_by_signal(h: &Hier, op: &Op, group: &GroupPath) -> WriteOutcome {
    let refused = |e| WriteOutcome {
        op: op.clone(),
        old: None,
        new_readback: None,
        result: Err(refusal(op, e)),
        notes: Vec::new(),
        offer: None,
    };
    let dir = hier::group_rel(group);
    if !h.is_cgroup2() || !h.dir_is_cgroup2(dir) {
        return refused(FsError::NotCgroup2);
    }
    let freeze_path = dir.join(files::FREEZE);
    let was_frozen = read(h, &freeze_path);
    let froze = was_frozen.is_some() && write_once(h, &freeze_path, "1").is_ok();
    let mut killed = std::collections::BTreeSet::new();
    let mut skipped = std::collections::BTreeSet::new();
    let mut failure: Option<i32> = None;
    let mut left = Vec::new();
    for pass in 0..5 {
        left.clear();
        subtree_pids(h, group, &mut left);
        left.retain(|(p, _)| !killed.contains(p) && !skipped.contains(p));
        if left.is_empty() {
            break;
        }
        if pass > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for (pid, g) in &left {
            let Some(want) = proc_cgroup_path(h, g) else {
                skipped.insert(*pid);
                continue;
            };
            match kill_checked(*pid, &want) {
                Ok(true) => {
                    killed.insert(*pid);
                }
                Ok(false) => {
                    skipped.insert(*pid);
                }
                Err(e) => failure = failure.or(Some(e.raw_os_error())),
            }
        }
        if failure.is_some() {
            break;
        }
    }
    if froze {
        let back = if was_frozen.as_deref().map(str::trim) == Some("1") {
            "1"
        } else {
            "0"
        };
        let _ = write_once(h, &freeze_path, back);
    }
    let mut notes = vec![format!(
        "this kernel has no cgroup.kill (Linux 5.14 added it): sent SIGKILL to {} process{} \
         of the subtree one by one",
        killed.len(),
        if killed.len() == 1 { "" } else { "es" }
    )];
    if !skipped.is_empty() {
        notes.push(format!(
            "{} not signalled: PID 1, a kernel thread, cgtop itself, or no longer in the group",
            plural(skipped.len(), "process", "processes")
        ));
    }
    left.retain(|(p, _)| !killed.contains(p) && !skipped.contains(p));
    if !left.is_empty() {
        notes.push(format!(
            "{} process{} appeared while killing and may still run",
            left.len(),
            if left.len() == 1 { "" } else { "es" }
        ));
    }
    let result = match failure {
        None => Ok(()),
        Some(errno) => Err(explain(op, errno, &gather_context_in(h, op, errno))),
    };
    WriteOutcome {
        op: op.clone(),
        old: None,
        new_readback: None,
        result,
        notes,
        offer: None,
    }
}

/// The "leaf fix" for the no internal process rule (admin guide 2-4-3):
/// create `group/leaf` (an existing one is used as it is), move every
/// process of `group` into it, one write per pid, then apply `changes` to
/// `group`'s subtree_control (skipped when `changes` is empty: only the
/// processes are moved). A process that exits before it is moved is
/// fine (noted, not an error). Returns every outcome, in order; stops
/// early when the leaf cannot be made or a move fails.
pub fn leaf_fix(
    root: &Path,
    group: &GroupPath,
    leaf: &str,
    changes: &[ControllerChange],
) -> Vec<WriteOutcome> {
    match Hier::open(root) {
        Ok(h) => leaf_fix_in(&h, group, leaf, changes),
        Err(_) => match group.join(leaf) {
            Ok(p) => vec![perform(root, &write::create_group(&p))],
            Err(_) => Vec::new(),
        },
    }
}

/// [`leaf_fix`] beneath the hierarchy handle `h`.
pub fn leaf_fix_in(
    h: &Hier,
    group: &GroupPath,
    leaf: &str,
    changes: &[ControllerChange],
) -> Vec<WriteOutcome> {
    // the dialog checked the name: nothing is done with one that is not a
    // single name (it would be the group itself, or lead out of it)
    let Ok(leaf_path) = group.join(leaf) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let created = perform_in(h, &write::create_group(&leaf_path));
    let exists = created.errno() == Some(Errno::EXIST.raw_os_error())
        && h.dir_ino(hier::group_rel(&leaf_path)).is_ok();
    let usable = created.is_ok() || exists;
    out.push(created);
    if !usable {
        return out;
    }
    let dir = hier::group_rel(group);
    // a process may fork while the others move: look again a few times
    for _ in 0..3 {
        let pids = read(h, &dir.join(files::PROCS))
            .map(|t| cgroupfs::parse_pids(&t))
            .unwrap_or_default();
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            let mut o = perform_in(h, &write::move_process(pid, &leaf_path, false));
            if o.errno() == Some(Errno::SRCH.raw_os_error()) {
                o.result = Ok(());
                o.notes
                    .push(format!("process {pid} exited before it could be moved"));
            }
            let failed = o.result.is_err();
            out.push(o);
            if failed {
                return out;
            }
        }
    }
    if !changes.is_empty() {
        out.push(perform_in(h, &write::set_subtree_control(group, changes)));
    }
    out
}

// ---------------------------------------------------------------------------
// Context for the explanation, read after a failure.

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

/// Reads the context for `op` after it failed with `errno`, from the tree
/// at `root` (opened now).
pub fn gather_context(root: &Path, op: &Op, errno: i32) -> ErrorContext {
    gather_context_in(&Hier::open_lenient(root), op, errno)
}

/// [`gather_context`] beneath the hierarchy handle `h`.
pub fn gather_context_in(h: &Hier, op: &Op, errno: i32) -> ErrorContext {
    let group = op.group();
    let dir = hier::group_rel(group);
    // names as bytes: a lossy copy would name another group
    let children: Vec<std::ffi::OsString> = h
        .list(dir)
        .map(|l| l.into_iter().filter(|e| e.is_dir).map(|e| e.name).collect())
        .unwrap_or_default();
    let exists = h.dir_ino(dir).is_ok();
    let mut ctx = ErrorContext {
        group_exists: exists,
        file_exists: op
            .as_write()
            .is_some_and(|w| h.is_file(&dir.join(&w.file)).is_ok()),
        nr_procs: read(h, &dir.join(files::PROCS)).map(|t| cgroupfs::parse_pids(&t).len()),
        nr_children: exists.then_some(children.len()),
        subtree_control: read(h, &dir.join(files::SUBTREE_CONTROL)).map(|t| Controllers::parse(&t)),
        controllers: read(h, &dir.join(files::CONTROLLERS)).map(|t| Controllers::parse(&t)),
        cgroup_type: read(h, &dir.join(files::TYPE)).and_then(|t| CgroupType::parse(&t).ok()),
        missing: Vec::new(),
        children_enabling: Vec::new(),
    };
    let Some(WriteOp {
        kind: WriteKind::SubtreeControl(changes),
        ..
    }) = op.as_write()
    else {
        return ctx;
    };
    if errno == Errno::NOENT.raw_os_error() {
        let offered = read(h, &dir.join(files::CONTROLLERS)).map(|t| Controllers::parse(&t));
        for c in changes.iter().filter(|c| c.enable) {
            if offered.as_ref().is_some_and(|o| o.contains(&c.name)) {
                continue;
            }
            ctx.missing
                .push((c.name.clone(), availability(h, group, &c.name)));
        }
    }
    if errno == Errno::BUSY.raw_os_error() {
        for c in changes.iter().filter(|c| !c.enable) {
            let using: Vec<GroupPath> = children
                .iter()
                .filter_map(|name| group.join(name.as_bytes()).ok())
                .filter(|child| {
                    read(h, &hier::file_rel(child, files::SUBTREE_CONTROL))
                        .is_some_and(|t| Controllers::parse(&t).contains(&c.name))
                })
                .collect();
            if !using.is_empty() {
                ctx.children_enabling.push((c.name.clone(), using));
            }
        }
    }
    ctx
}

/// Where `name` must be enabled for `group` to be offered it: walk up from
/// the parent to the nearest ancestor that has it.
fn availability(h: &Hier, group: &GroupPath, name: &str) -> Availability {
    let Some(parent) = group.parent() else {
        return Availability::NotInHierarchy;
    };
    let mut chain = Vec::new();
    for a in parent.ancestors() {
        chain.push(a.clone());
        let has = read(h, &hier::file_rel(&a, files::CONTROLLERS))
            .is_some_and(|t| Controllers::parse(&t).contains(name));
        if has {
            chain.reverse();
            return Availability::EnableDown(chain);
        }
    }
    Availability::NotInHierarchy
}

// ---------------------------------------------------------------------------
// errno -> words. PURE.

/// The errno as rustix's type; `None` outside the kernel's range
/// (rustix panics on those).
fn to_errno(raw: i32) -> Option<Errno> {
    (1..4096)
        .contains(&raw)
        .then(|| Errno::from_raw_os_error(raw))
}

/// The symbolic name of the errnos cgroupfs returns.
pub fn errno_name(errno: i32) -> &'static str {
    let Some(e) = to_errno(errno) else {
        return "errno";
    };
    match e {
        Errno::PERM => "EPERM",
        Errno::NOENT => "ENOENT",
        Errno::SRCH => "ESRCH",
        Errno::INTR => "EINTR",
        Errno::TOOBIG => "E2BIG",
        Errno::AGAIN => "EAGAIN",
        Errno::NOMEM => "ENOMEM",
        Errno::ACCESS => "EACCES",
        Errno::BUSY => "EBUSY",
        Errno::EXIST => "EEXIST",
        Errno::NODEV => "ENODEV",
        Errno::NOTDIR => "ENOTDIR",
        Errno::INVAL => "EINVAL",
        Errno::NOSPC => "ENOSPC",
        Errno::ROFS => "EROFS",
        Errno::RANGE => "ERANGE",
        Errno::NAMETOOLONG => "ENAMETOOLONG",
        Errno::NOTEMPTY => "ENOTEMPTY",
        Errno::OPNOTSUPP => "EOPNOTSUPP",
        Errno::DEADLK => "EDEADLK",
        Errno::LOOP => "ELOOP",
        Errno::XDEV => "EXDEV",
        Errno::NXIO => "ENXIO",
        _ => "errno",
    }
}

/// "/a/b/memory.max", "mkdir /a/b".
fn what(op: &Op) -> String {
    match op {
        Op::CreateGroup(p) => format!("mkdir {p}"),
        Op::RemoveGroup(p) => format!("rmdir {p}"),
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

/// The kernel's own words for an errno, without the " (os error N)" tail.
fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// Explains a failed op: what went wrong and how to fix it, specific to
/// the op and the errno, with facts from `ctx`.
pub fn explain(op: &Op, errno: i32, ctx: &ErrorContext) -> WriteError {
    let (explanation, fix) = words(op, errno, ctx);
    WriteError {
        errno: Some(errno),
        what: what(op),
        explanation,
        fix,
    }
}

type Words = (String, Option<String>);

fn words(op: &Op, errno: i32, ctx: &ErrorContext) -> Words {
    let Some(e) = to_errno(errno) else {
        return (format!("unknown error {errno}"), None);
    };
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
                Op::CreateGroup(p) => (
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
        Op::CreateGroup(p) => create_words(p, e, errno),
        Op::RemoveGroup(p) => remove_words(p, e, errno, ctx),
        Op::Write(w) => write_words(w, e, errno, ctx),
    }
}

fn create_words(p: &GroupPath, e: Errno, errno: i32) -> Words {
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
        _ => (strerror(errno), None),
    }
}

fn remove_words(p: &GroupPath, e: Errno, errno: i32, ctx: &ErrorContext) -> Words {
    match e {
        // a group with live processes or children cannot go (admin guide 2-2-1)
        Errno::BUSY | Errno::NOTEMPTY => {
            let procs = ctx.nr_procs.unwrap_or(0);
            let kids = ctx.nr_children.unwrap_or(0);
            let explanation = if procs == 0 && kids == 0 {
                format!("{p} is not empty: processes or child groups remain below it")
            } else {
                format!(
                    "{p} still has {} and {}; only an empty group can be removed",
                    plural(procs, "process", "processes"),
                    plural(kids, "child group", "child groups")
                )
            };
            (
                explanation,
                Some(
                    "remove the child groups first, and move its processes out or kill them".into(),
                ),
            )
        }
        _ => (strerror(errno), None),
    }
}

fn write_words(w: &WriteOp, e: Errno, errno: i32, ctx: &ErrorContext) -> Words {
    let specific = match &w.kind {
        WriteKind::SubtreeControl(changes) => subtree_words(w, changes, e, ctx),
        WriteKind::MoveProcess { pid, threads } => move_words(w, *pid, *threads, e, ctx),
        _ => None,
    };
    specific.unwrap_or_else(|| file_words(w, e, errno, ctx))
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
fn file_words(w: &WriteOp, e: Errno, errno: i32, ctx: &ErrorContext) -> Words {
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
        _ => (strerror(errno), None),
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
    use crate::model::input::{IoMaxSet, MemoryFile};
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
        explain(op, e.raw_os_error(), ctx).to_string()
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
    fn errno_names() {
        assert_eq!(errno_name(Errno::BUSY.raw_os_error()), "EBUSY");
        assert_eq!(errno_name(Errno::OPNOTSUPP.raw_os_error()), "EOPNOTSUPP");
        assert_eq!(errno_name(Errno::TOOBIG.raw_os_error()), "E2BIG");
        assert_eq!(errno_name(9999), "errno");
        assert_eq!(errno_name(0), "errno");
        let e = explain(&kill(&g("a")), 0, &existing());
        assert_eq!(e.explanation, "unknown error 0");
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
            explain(&op, Errno::BUSY.raw_os_error(), &ctx).explanation,
            "memory is still enabled by the child groups /a/b, /a/c; a controller cannot be \
             disabled while a child hands it on (top-down rule, admin guide 2-4-2)"
        );
        let none = explain(&op, Errno::BUSY.raw_os_error(), &existing());
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
            explain(&op, Errno::INVAL.raw_os_error(), &existing()).explanation,
            "the kernel refused \"+memory\": a name is not a controller, or a realtime process \
             outside the root blocks the cpu controller (admin guide 5-1)"
        );
        let ctx = ErrorContext {
            cgroup_type: Some(CgroupType::Threaded),
            ..existing()
        };
        assert_eq!(
            explain(&op, Errno::OPNOTSUPP.raw_os_error(), &ctx).explanation,
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
            explain(&op, Errno::OPNOTSUPP.raw_os_error(), &ctx).explanation,
            "/a is \"domain invalid\", which cannot take processes (admin guide 2-2-2)"
        );
        let t = move_process(7, &g("a"), true);
        assert_eq!(
            say(&t, Errno::OPNOTSUPP, &existing()),
            "/a/cgroup.threads: a thread can only move within its own threaded subtree (admin \
             guide 2-2-2) (move the whole process through cgroup.procs instead) [EOPNOTSUPP]"
        );
        assert_eq!(
            explain(&op, Errno::INVAL.raw_os_error(), &existing()).explanation,
            "process 4242 cannot be moved: kernel threads and exiting processes stay where they are"
        );
        assert_eq!(
            say(&op, Errno::ACCESS, &existing()),
            "/a/cgroup.procs: permission denied (run as root, or --read-only; a delegated user \
             also needs write access to the cgroup.procs of the common ancestor (admin guide \
             2-5-2)) [EACCES]"
        );
        assert_eq!(
            explain(&op, Errno::NOENT.raw_os_error(), &existing()).explanation,
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
            explain(&rm, Errno::BUSY.raw_os_error(), &existing()).explanation,
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
            explain(&root_mem, Errno::NOENT.raw_os_error(), &off).explanation,
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
            explain(&cpu, Errno::INVAL.raw_os_error(), &existing()).explanation,
            "the kernel refused \"1000 100000\": the quota must be at least 1000 us and at least \
             cpu.max.burst, and the period 1000 to 1000000 us"
        );
        let burst = set_cpu_max_burst(&a, 9);
        assert!(explain(&burst, Errno::INVAL.raw_os_error(), &existing())
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
        assert!(explain(&io, Errno::INVAL.raw_os_error(), &existing())
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
            explain(&freeze(&g("a"), true), Errno::NOENT.raw_os_error(), &off).explanation,
            "this kernel has no cgroup.freeze (Linux 5.2 added it)"
        );
        assert_eq!(
            explain(&kill(&g("t")), Errno::OPNOTSUPP.raw_os_error(), &existing()).explanation,
            "/t is threaded, and cgroup.kill works on whole processes only"
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
            offer_for(&enable, Errno::BUSY.raw_os_error(), &busy),
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
        assert_eq!(offer_for(&enable, Errno::BUSY.raw_os_error(), &empty), None);
        let target = set_subtree_control(&g("x/y/a"), &[ControllerChange::enable("cpu")]);
        let missing = ErrorContext {
            missing: vec![(
                "cpu".into(),
                Availability::EnableDown(vec![g("x"), g("x/y")]),
            )],
            ..existing()
        };
        assert_eq!(
            offer_for(&target, Errno::NOENT.raw_os_error(), &missing),
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
        assert_eq!(
            offer_for(&target, Errno::NOENT.raw_os_error(), &nowhere),
            None
        );
        assert_eq!(
            offer_for(&kill(&g("a")), Errno::BUSY.raw_os_error(), &busy),
            None
        );
    }

    #[test]
    fn outcome_helpers() {
        let op = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Value(1000));
        let o = WriteOutcome {
            op: op.clone(),
            old: Some("max\n".into()),
            new_readback: Some("0\n".into()),
            result: Ok(()),
            notes: vec![],
            offer: None,
        };
        assert_eq!(
            o.stored_differs().as_deref(),
            Some("the kernel stored 0 in memory.max, not 1000 (it keeps whole pages)")
        );
        assert_eq!(
            o.undo(),
            Some(set_memory_limit(&g("a"), MemoryFile::Max, Limit::Max))
        );
        assert_eq!(
            o.summary(),
            "done: set memory.max of /a to 1000; the kernel stored 0 in memory.max, not 1000 \
             (it keeps whole pages)"
        );
        let failed = WriteOutcome {
            result: Err(explain(&op, Errno::ACCESS.raw_os_error(), &existing())),
            ..o
        };
        assert_eq!(failed.undo(), None);
        assert_eq!(failed.stored_differs(), None);
        assert_eq!(failed.errno(), Some(Errno::ACCESS.raw_os_error()));
        assert_eq!(
            failed.summary(),
            "/a/memory.max: permission denied (run as root, or --read-only) [EACCES]"
        );
    }

    // --- against a plain directory laid out like a hierarchy ----------------

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = t.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        t
    }

    #[test]
    fn a_plain_directory_is_never_written() {
        // a --root tree is not cgroupfs: no write, mkdir or rmdir reaches it
        let t = tree(&[("a/memory.max", "max\n"), ("a/cgroup.procs", "")]);
        let op = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Value(1 << 30));
        let o = perform(t.path(), &op);
        let e = o.result.unwrap_err();
        assert_eq!(e.errno, None);
        assert!(e.explanation.contains("not on a cgroup2 filesystem"), "{e}");
        assert_eq!(
            std::fs::read_to_string(t.path().join("a/memory.max")).unwrap(),
            "max\n"
        );
        assert!(perform(t.path(), &create_group(&g("new"))).result.is_err());
        assert!(!t.path().join("new").exists());
        assert!(perform(t.path(), &remove_group(&g("a"))).result.is_err());
        assert!(t.path().join("a").is_dir());
    }

    #[test]
    fn a_symlinked_file_is_never_written_through() {
        // issue 7: `cgroup.freeze` planted as a symlink to a victim file;
        // `f` `y` turned "root:x:0:0" into "1oot:x:0:0"
        let t = tree(&[("a/cgroup.procs", ""), ("victim", "root:x:0:0\n")]);
        std::os::unix::fs::symlink(t.path().join("victim"), t.path().join("a/cgroup.freeze"))
            .unwrap();
        let o = perform(t.path(), &freeze(&g("a"), true));
        assert!(o.result.is_err());
        assert_eq!(
            std::fs::read_to_string(t.path().join("victim")).unwrap(),
            "root:x:0:0\n"
        );
    }

    #[test]
    fn context_finds_the_nearest_ancestor_with_a_controller() {
        // /            controllers: cpu memory     subtree_control: memory
        // └─ a         controllers: memory         subtree_control: (none)
        //    └─ b      controllers: (none)
        //       └─ c   <- "+memory" fails: b is not offered memory
        let t = tree(&[
            ("cgroup.controllers", "cpu memory\n"),
            ("a/cgroup.controllers", "memory\n"),
            ("a/b/cgroup.controllers", "\n"),
            ("a/b/c/cgroup.controllers", "\n"),
            ("a/b/c/cgroup.procs", ""),
        ]);
        let op = set_subtree_control(
            &g("a/b/c"),
            &[
                ControllerChange::enable("memory"),
                ControllerChange::enable("cpu"),
                ControllerChange::enable("rdma"),
            ],
        );
        let ctx = gather_context(t.path(), &op, Errno::NOENT.raw_os_error());
        assert_eq!(
            ctx.missing,
            vec![
                (
                    "memory".into(),
                    Availability::EnableDown(vec![g("a"), g("a/b")])
                ),
                (
                    "cpu".into(),
                    Availability::EnableDown(vec![GroupPath::root(), g("a"), g("a/b")])
                ),
                ("rdma".into(), Availability::NotInHierarchy),
            ]
        );
        let e = explain(&op, Errno::NOENT.raw_os_error(), &ctx);
        assert_eq!(
            e.fix.as_deref(),
            Some("write +memory to cgroup.subtree_control of /a, then /a/b, then retry")
        );
    }

    #[test]
    fn context_counts_and_children_enabling() {
        let t = tree(&[
            ("a/cgroup.procs", "10\n11\n"),
            ("a/cgroup.subtree_control", "memory pids\n"),
            ("a/cgroup.type", "domain\n"),
            ("a/x/cgroup.subtree_control", "memory\n"),
            ("a/y/cgroup.subtree_control", "pids\n"),
        ]);
        let op = set_subtree_control(&g("a"), &[ControllerChange::disable("memory")]);
        let ctx = gather_context(t.path(), &op, Errno::BUSY.raw_os_error());
        assert_eq!(ctx.nr_procs, Some(2));
        assert_eq!(ctx.nr_children, Some(2));
        assert_eq!(ctx.cgroup_type, Some(CgroupType::Domain));
        assert_eq!(ctx.subtree_control, Some(Controllers::parse("memory pids")));
        assert_eq!(
            ctx.children_enabling,
            vec![("memory".into(), vec![g("a/x")])]
        );
    }

    #[test]
    fn kill_never_signals_what_a_plain_cgroup_procs_lists() {
        // issue 7: without cgroup.kill, K read pids from a plain directory's
        // cgroup.procs and sent SIGKILL to each (a list naming 1 too)
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let t = tree(&[
            ("job/cgroup.procs", "1\n"),
            ("job/sub/cgroup.procs", &format!("{pid}\n")),
        ]);
        let o = perform(t.path(), &kill(&g("job")));
        let alive = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(alive, "a pid listed in a plain directory was signalled");
        assert!(o.result.is_err());
    }

    #[test]
    fn who_the_kill_fallback_may_signal() {
        let stat = |flags: u64| format!("42 (a b) S 1 42 42 0 -1 {flags} 0 0 0 0");
        let here = "1:name=systemd:/\n0::/job/sub\n";
        assert_eq!(
            may_signal(42, 7, &stat(0x40_0100), here, "/job/sub"),
            Ok(())
        );
        assert_eq!(
            may_signal(1, 7, &stat(0), here, "/job/sub"),
            Err(NotSignalled::Init)
        );
        assert_eq!(
            may_signal(42, 42, &stat(0), here, "/job/sub"),
            Err(NotSignalled::Itself)
        );
        assert_eq!(
            may_signal(42, 7, &stat(0x20_8040), here, "/job/sub"),
            Err(NotSignalled::KernelThread)
        );
        assert_eq!(
            may_signal(42, 7, &stat(0), "0::/job/other\n", "/job/sub"),
            Err(NotSignalled::NotInGroup)
        );
        assert_eq!(
            may_signal(42, 7, "", here, "/job/sub"),
            Err(NotSignalled::NotInGroup),
            "no /proc entry: exited"
        );
        // the host's kthreadd is a kernel thread
        let kthreadd = std::fs::read_to_string("/proc/2/stat").unwrap_or_default();
        if kthreadd.contains("(kthreadd)") {
            let cg = std::fs::read_to_string("/proc/2/cgroup").unwrap_or_default();
            let want = cg
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/");
            assert_eq!(
                may_signal(2, 7, &kthreadd, &cg, want),
                Err(NotSignalled::KernelThread)
            );
        }
    }

    #[test]
    fn kill_fallback_on_the_real_cgroup2() {
        use std::os::unix::process::ExitStatusExt;
        // the fallback itself, on this kernel's cgroup2 (which has
        // cgroup.kill, so perform would not take it): the group's process
        // is killed, and nothing else
        if !rustix::process::geteuid().is_root() {
            println!("skipped: not root");
            return;
        }
        let Ok(m) = super::super::mount::discover() else {
            println!("skipped: no cgroup2");
            return;
        };
        let rel = format!("cgtop-test-{}-unit-kill", std::process::id());
        let dir = m.root.join(&rel);
        if std::fs::create_dir(&dir).is_err() {
            println!("skipped: cannot create a cgroup");
            return;
        }
        let mut inside = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let mut outside = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        std::fs::write(dir.join("cgroup.procs"), inside.id().to_string()).unwrap();
        let h = Hier::open(&m.root).unwrap();
        let o = kill_by_signal(&h, &kill(&g(&rel)), &g(&rel));
        let st = inside.wait().unwrap();
        let outside_alive = outside.try_wait().unwrap().is_none();
        let _ = outside.kill();
        let _ = outside.wait();
        for _ in 0..50 {
            if std::fs::remove_dir(&dir).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(o.result, Ok(()), "{:?}", o.notes);
        assert_eq!(st.signal(), Some(9));
        assert!(outside_alive);
    }

    #[test]
    fn kill_of_the_root_is_refused_by_the_kernel_not_faked() {
        // the fallback never runs for the root: it would signal everything
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let t = tree(&[("cgroup.procs", &format!("{}\n", child.id()))]);
        let o = perform(t.path(), &kill(&GroupPath::root()));
        let alive = child.try_wait().unwrap().is_none();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(alive, "the root's processes were signalled");
        assert!(o.result.is_err());
    }

    #[test]
    fn leaf_fix_on_a_plain_directory() {
        let t = tree(&[
            ("job/cgroup.procs", "4000000\n"),
            ("job/cgroup.subtree_control", ""),
        ]);
        let outs = leaf_fix(
            t.path(),
            &g("job"),
            "leaf",
            &[ControllerChange::enable("hugetlb")],
        );
        // the mkdir is refused (not cgroup2), and the fix stops there
        assert_eq!(outs[0].op, create_group(&g("job/leaf")));
        assert!(outs[0].result.is_err());
        assert_eq!(outs.len(), 1);
        assert!(!t.path().join("job/leaf").exists());
    }
}
