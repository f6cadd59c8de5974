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

/// The directory of a group under `root`.
pub fn group_dir(root: &Path, group: &GroupPath) -> PathBuf {
    if group.is_root() {
        root.to_path_buf()
    } else {
        root.join(group.as_rel_path())
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Why a single write did not go through.
enum WriteFail {
    Errno(i32),
    Short { written: usize, len: usize },
}

/// One write(2) of the whole text, to an existing file, without truncating.
fn write_once(path: &Path, contents: &str) -> Result<(), WriteFail> {
    let errno = |e: std::io::Error| WriteFail::Errno(e.raw_os_error().unwrap_or(0));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(errno)?;
    let n = f.write(contents.as_bytes()).map_err(errno)?;
    if n == contents.len() {
        Ok(())
    } else {
        Err(WriteFail::Short {
            written: n,
            len: contents.len(),
        })
    }
}

/// Performs one op against the hierarchy at `root`.
pub fn perform(root: &Path, op: &Op) -> WriteOutcome {
    let outcome = |result, notes| WriteOutcome {
        op: op.clone(),
        old: None,
        new_readback: None,
        result,
        notes,
        offer: None,
    };
    match op {
        Op::CreateGroup(p) => {
            let r = std::fs::create_dir(group_dir(root, p)).map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(0);
                explain(op, errno, &gather_context(root, op, errno))
            });
            outcome(r, Vec::new())
        }
        Op::RemoveGroup(p) => {
            let r = std::fs::remove_dir(group_dir(root, p)).map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(0);
                explain(op, errno, &gather_context(root, op, errno))
            });
            outcome(r, Vec::new())
        }
        Op::Write(w) => perform_write(root, op, w),
    }
}

fn perform_write(root: &Path, op: &Op, w: &WriteOp) -> WriteOutcome {
    let dir = group_dir(root, &w.group);
    let path = dir.join(&w.file);
    if matches!(w.kind, WriteKind::Kill) && !w.group.is_root() && dir.is_dir() && !path.exists() {
        return kill_by_signal(root, op, &dir);
    }
    let old = op.undo_source().and_then(|f| read(&dir.join(f)));
    let mut offer = None;
    let result = write_once(&path, &w.contents).map_err(|fail| match fail {
        WriteFail::Errno(errno) => {
            let ctx = gather_context(root, op, errno);
            offer = offer_for(op, errno, &ctx);
            explain(op, errno, &ctx)
        }
        WriteFail::Short { written, len } => WriteError {
            errno: None,
            what: what(op),
            explanation: format!("the kernel took only {written} of {len} bytes"),
            fix: Some("read the file back and write the rest again".into()),
        },
    });
    let new_readback = if op.reads_back() { read(&path) } else { None };
    WriteOutcome {
        op: op.clone(),
        old,
        new_readback,
        result,
        notes: Vec::new(),
        offer,
    }
}

/// Every pid in the group and below, from cgroup.procs.
fn subtree_pids(dir: &Path) -> Vec<u32> {
    let mut out = read(&dir.join(files::PROCS))
        .map(|t| cgroupfs::parse_pids(&t))
        .unwrap_or_default();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(subtree_pids(&e.path()));
            }
        }
    }
    out
}

/// cgroup.kill for kernels before 5.14: SIGKILL to each pid of the
/// subtree. The subtree is frozen first where cgroup.freeze exists, so that
/// nothing forks between listing and killing (a fatal signal still reaches
/// a frozen process, admin guide 4-3 cgroup.freeze), and thawed after.
fn kill_by_signal(root: &Path, op: &Op, dir: &Path) -> WriteOutcome {
    use rustix::process::{kill_process, Pid, Signal};
    let freeze_path = dir.join(files::FREEZE);
    let was_frozen = read(&freeze_path);
    let froze = was_frozen.is_some() && write_once(&freeze_path, "1").is_ok();
    let mut killed = std::collections::BTreeSet::new();
    let mut failure: Option<i32> = None;
    let mut left = Vec::new();
    for pass in 0..5 {
        left = subtree_pids(dir);
        left.retain(|p| !killed.contains(p));
        if left.is_empty() {
            break;
        }
        if pass > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for &pid in &left {
            let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                continue;
            };
            match kill_process(p, Signal::KILL) {
                Ok(()) => {
                    killed.insert(pid);
                }
                Err(Errno::SRCH) => {}
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
        let _ = write_once(&freeze_path, back);
    }
    let mut notes = vec![format!(
        "this kernel has no cgroup.kill (Linux 5.14 added it): sent SIGKILL to {} process{} \
         of the subtree one by one",
        killed.len(),
        if killed.len() == 1 { "" } else { "es" }
    )];
    left.retain(|p| !killed.contains(p));
    if !left.is_empty() {
        notes.push(format!(
            "{} process{} appeared while killing and may still run",
            left.len(),
            if left.len() == 1 { "" } else { "es" }
        ));
    }
    let result = match failure {
        None => Ok(()),
        Some(errno) => Err(explain(op, errno, &gather_context(root, op, errno))),
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
    // the dialog checked the name: nothing is done with one that is not a
    // single name (it would be the group itself, or lead out of it)
    let Ok(leaf_path) = group.join(leaf) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let created = perform(root, &write::create_group(&leaf_path));
    let exists = created.errno() == Some(Errno::EXIST.raw_os_error())
        && group_dir(root, &leaf_path).is_dir();
    let usable = created.is_ok() || exists;
    out.push(created);
    if !usable {
        return out;
    }
    let dir = group_dir(root, group);
    // a process may fork while the others move: look again a few times
    for _ in 0..3 {
        let pids = read(&dir.join(files::PROCS))
            .map(|t| cgroupfs::parse_pids(&t))
            .unwrap_or_default();
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            let mut o = perform(root, &write::move_process(pid, &leaf_path, false));
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
        out.push(perform(root, &write::set_subtree_control(group, changes)));
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

/// Reads the context for `op` after it failed with `errno`.
pub fn gather_context(root: &Path, op: &Op, errno: i32) -> ErrorContext {
    let group = op.group();
    let dir = group_dir(root, group);
    let children: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    let mut ctx = ErrorContext {
        group_exists: dir.is_dir(),
        file_exists: op.as_write().is_some_and(|w| dir.join(&w.file).exists()),
        nr_procs: read(&dir.join(files::PROCS)).map(|t| cgroupfs::parse_pids(&t).len()),
        nr_children: dir.is_dir().then_some(children.len()),
        subtree_control: read(&dir.join(files::SUBTREE_CONTROL)).map(|t| Controllers::parse(&t)),
        controllers: read(&dir.join(files::CONTROLLERS)).map(|t| Controllers::parse(&t)),
        cgroup_type: read(&dir.join(files::TYPE)).and_then(|t| CgroupType::parse(&t).ok()),
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
        let offered = read(&dir.join(files::CONTROLLERS)).map(|t| Controllers::parse(&t));
        for c in changes.iter().filter(|c| c.enable) {
            if offered.as_ref().is_some_and(|o| o.contains(&c.name)) {
                continue;
            }
            ctx.missing
                .push((c.name.clone(), availability(root, group, &c.name)));
        }
    }
    if errno == Errno::BUSY.raw_os_error() {
        for c in changes.iter().filter(|c| !c.enable) {
            let using: Vec<GroupPath> = children
                .iter()
                .filter(|child| {
                    read(&child.join(files::SUBTREE_CONTROL))
                        .is_some_and(|t| Controllers::parse(&t).contains(&c.name))
                })
                .filter_map(|child| group.join(child.file_name()?.as_bytes()).ok())
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
fn availability(root: &Path, group: &GroupPath, name: &str) -> Availability {
    let Some(parent) = group.parent() else {
        return Availability::NotInHierarchy;
    };
    let mut chain = Vec::new();
    for a in parent.ancestors() {
        chain.push(a.clone());
        let has = read(&group_dir(root, &a).join(files::CONTROLLERS))
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
    fn perform_reads_old_writes_and_reads_back() {
        let t = tree(&[("a/memory.max", "max\n"), ("a/cgroup.procs", "")]);
        let op = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Value(1 << 30));
        let o = perform(t.path(), &op);
        assert_eq!(o.result, Ok(()));
        assert_eq!(o.old.as_deref(), Some("max\n"));
        assert_eq!(o.new_readback.as_deref(), Some("1073741824"));
        assert_eq!(o.stored_differs(), None);
        assert_eq!(
            o.undo(),
            Some(set_memory_limit(&g("a"), MemoryFile::Max, Limit::Max))
        );
    }

    #[test]
    fn perform_missing_file_and_group() {
        let t = tree(&[("a/cgroup.procs", ""), ("cgroup.controllers", "memory\n")]);
        let op = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Max);
        let o = perform(t.path(), &op);
        let e = o.result.unwrap_err();
        assert_eq!(
            e.to_string(),
            "/a/memory.max: memory.max does not exist in /a: the memory controller is not \
             enabled for it (enable +memory in the cgroup.subtree_control of /) [ENOENT]"
        );
        let gone = perform(t.path(), &set_cpu_weight(&g("zz"), 5));
        assert_eq!(
            gone.result.unwrap_err().explanation,
            "the group /zz no longer exists"
        );
    }

    #[test]
    fn perform_mkdir_rmdir() {
        let t = tree(&[("cgroup.procs", "")]);
        let mk = perform(t.path(), &create_group(&g("new")));
        assert_eq!(mk.result, Ok(()));
        assert_eq!(mk.undo(), Some(remove_group(&g("new"))));
        let again = perform(t.path(), &create_group(&g("new")));
        assert_eq!(
            again.result.unwrap_err().to_string(),
            "mkdir /new: new already exists in / (choose another name) [EEXIST]"
        );
        let rm = perform(t.path(), &remove_group(&g("new")));
        assert_eq!(rm.result, Ok(()));
        assert!(!t.path().join("new").exists());
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
    fn kill_falls_back_to_signals_without_cgroup_kill() {
        use std::os::unix::process::ExitStatusExt;
        // a plain directory has no cgroup.kill: the writer signals each pid
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        let t = tree(&[
            ("job/cgroup.procs", ""),
            ("job/sub/cgroup.procs", &format!("{pid}\n")),
        ]);
        let o = perform(t.path(), &kill(&g("job")));
        assert_eq!(o.result, Ok(()));
        assert_eq!(
            o.notes,
            vec![
                "this kernel has no cgroup.kill (Linux 5.14 added it): sent SIGKILL to 1 process \
                 of the subtree one by one"
                    .to_owned()
            ]
        );
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(9));
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
        assert_eq!(
            o.result.unwrap_err().explanation,
            "the root group has no cgroup.kill"
        );
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
        // mkdir, then the move fails: the new leaf of a plain directory has
        // no cgroup.procs, and the fix stops at the first failed move
        assert_eq!(outs[0].op, create_group(&g("job/leaf")));
        assert_eq!(outs[0].result, Ok(()));
        assert_eq!(outs[1].op, move_process(4_000_000, &g("job/leaf"), false));
        assert_eq!(outs.len(), 2);
        assert!(outs[1].result.is_err());
    }
}
