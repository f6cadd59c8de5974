//! Performs one [`Op`] against the hierarchy under a root directory: reads
//! the old value, writes the whole contents in ONE write(2) (cgroupfs
//! parses each write on its own, so a split write would be two commands),
//! reads the file back, and on a failure reads the facts that explain it
//! ([`gather_context_in`]: process counts, controllers of ancestors, ...).
//! The words, the fix and the offer are made from those facts by the pure
//! [`crate::model::write::explain`]; the values it returns live in
//! [`crate::model::write::outcome`] (re-exported here, where callers look for
//! what the writer returns).
//!
//! The writer targets cgroupfs semantics: files are opened for writing
//! without truncation or creation, as the kernel expects. A plain directory
//! given with `--root` is not rewritten faithfully (a shorter value leaves
//! the tail of the old one).
//!
//! Must not depend on: `app`, `ui`, the terminal.

use super::hier::{self, FsError, Hier, Hiers};
use super::systemctl::Systemctl;
use crate::cgroupfs::{self, files, CgroupType, Controllers};
use crate::model::host::layout::HierId;
use crate::model::write::errno::{self, Errno};
use crate::model::write::explain::{self, explain, offer_for, Availability};
use crate::model::write::guard;
use crate::model::write::guard::ProcLine;
use crate::model::write::input::ControllerChange;
use crate::model::write::killable::may_signal_listed;
use crate::model::write::systemd as model_systemd;
use crate::model::write::{self, v1_files, Op, WriteKind, WriteOp};
use crate::model::GroupPath;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::model::write::explain::ErrorContext;
use crate::model::write::outcome::{WriteError, WriteOutcome};

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
    Errno(Errno),
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
    write_file(h.open_write(rel)?, contents)
}

/// [`write_once`] of the file `name` of the group directory `dir`,
/// already open and checked to be the group asked about.
fn write_once_in(
    h: &Hier,
    dir: BorrowedFd<'_>,
    name: &str,
    contents: &str,
) -> Result<(), WriteFail> {
    write_file(h.open_write_in(dir, name)?, contents)
}

fn write_file(mut f: std::fs::File, contents: &str) -> Result<(), WriteFail> {
    let n = f
        .write(contents.as_bytes())
        .map_err(|e| WriteFail::Errno(errno::of_io(&e)))?;
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
    match e {
        FsError::NotCgroup2 => explain::not_cgroup2(op),
        other => explain::refused_before_writing(op, &other),
    }
}

/// Performs one op against the hierarchy at `root`, opened now (tests;
/// the program passes the handle it opened at start to [`perform_in`]).
pub fn perform(root: &Path, op: &Op) -> WriteOutcome {
    match Hier::open(root) {
        Ok(h) => perform_in(&h, op),
        Err(e) => WriteOutcome::failed(
            op.clone(),
            explain(op, errno::of_io(&e), &ErrorContext::default()),
        ),
    }
}

/// Performs one op through the handle of the hierarchy it names
/// ([`Op::hier`]): cgroup2 or one v1 hierarchy of `hiers`.
pub fn perform_on(hiers: &Hiers, op: &Op) -> WriteOutcome {
    match hiers.get(op.hier()) {
        Some(h) => {
            let (outcome, held) = perform_holding(h, op);
            after_kill(hiers, op, outcome, held.as_ref().map(AsFd::as_fd))
        }
        None => WriteOutcome::failed(op.clone(), refusal(op, FsError::NotCgroup2)),
    }
}

/// What follows a kill in another hierarchy than the v1 freezer's
/// (cgroup2's cgroup.kill on a hybrid host, or the fallback in the
/// primary v1 hierarchy): a process frozen in the v1 freezer does not
/// die of SIGKILL until it is thawed, so a group frozen there is thawed,
/// and frozen again (where its own freezer.state froze it) once the
/// processes the killed hierarchy lists are gone (at most a second),
/// with a note: the group's directory there is opened once, held to the
/// inode the operator was shown ([`WriteOp::freezer_ino`]; another group
/// made under its name is not thawed, and said so), and both writes go
/// into it. Then the kill is checked in the hierarchy it went through
/// ([`checked_kill`]): a process still there makes it a failure. Both
/// read the group killed through `killed`, its directory as the kill
/// held it ([`perform_holding`]), not by path: a group made under its
/// name since is another (`None`: the kill's directory did not open,
/// and the group is read by path).
pub fn after_kill(
    hiers: &Hiers,
    op: &Op,
    outcome: WriteOutcome,
    killed: Option<BorrowedFd<'_>>,
) -> WriteOutcome {
    let Some(w) = op.as_write() else {
        return outcome;
    };
    if !matches!(w.kind, WriteKind::Kill) || outcome.result.is_err() {
        return outcome;
    }
    let Some(h) = hiers.get(op.hier()) else {
        return outcome;
    };
    let by_path;
    let killed = match killed {
        Some(d) => d,
        None => match h.open_dir(hier::group_rel(&w.group)) {
            Ok(fd) => {
                by_path = fd;
                by_path.as_fd()
            }
            // gone: nothing of it is left to check
            Err(e) if e.is_gone() || e.is_absent() => return outcome,
            Err(_) => {
                return WriteOutcome {
                    result: Err(explain::kill_survivors(op, None)),
                    ..outcome
                }
            }
        },
    };
    let outcome = thaw_after_kill(hiers, h, w, outcome, killed);
    checked_kill(h, op, killed, outcome)
}

/// The thaw of [`after_kill`], in the v1 freezer hierarchy, of the
/// group killed through `killed` in hierarchy `h`.
fn thaw_after_kill(
    hiers: &Hiers,
    h: &Hier,
    w: &WriteOp,
    outcome: WriteOutcome,
    killed: BorrowedFd<'_>,
) -> WriteOutcome {
    use crate::cgroupfs::v1_limits::files::FREEZER_SELF;
    use v1_files::FREEZER_STATE;
    // the fallback in the freezer's own hierarchy handles it itself
    let Some((fid @ HierId::V1(_), f)) = hiers.holder("freezer") else {
        return outcome;
    };
    if fid == w.hier {
        return outcome;
    }
    // not there: nothing frozen to thaw
    let Ok(dir) = f.open_dir(hier::group_rel(&w.group)) else {
        return outcome;
    };
    let frozen = |d: &OwnedFd| {
        hier::read_text_in(d.as_fd(), FREEZER_STATE)
            .is_ok_and(|t| matches!(t.trim(), "FROZEN" | "FREEZING"))
    };
    if !frozen(&dir) {
        return outcome;
    }
    let mut notes = outcome.notes.clone();
    let shown = w
        .freezer_ino
        .is_none_or(|want| rustix::fs::fstat(&dir).is_ok_and(|st| st.st_ino == want));
    if !shown {
        notes.push(explain::v1_thaw_made_again(&w.group));
        return outcome.with_notes(notes);
    }
    let own = hier::read_text_in(dir.as_fd(), FREEZER_SELF).is_ok_and(|t| t.trim() == "1");
    if write_once_in(f, dir.as_fd(), FREEZER_STATE, "THAWED").is_err() {
        return outcome;
    }
    let gone = survivors(h, killed, std::time::Duration::from_secs(1)) == Some(0);
    let refrozen = own && write_once_in(f, dir.as_fd(), FREEZER_STATE, "FROZEN").is_ok();
    notes.push(explain::v1_frozen_kill_note(refrozen, gone));
    outcome.with_notes(notes)
}

/// Performs one op beneath the hierarchy handle `h`, which must be the
/// kind of hierarchy the op names: cgroup2 for a cgroup2 op, a v1
/// hierarchy for a v1 op (the handle's writes stay on its own cgroupfs).
/// Nothing is ever written to a directory that is not cgroupfs.
///
/// The outcome records where the group really is in its hierarchy
/// ([`Hier::real_group`]: under `--root`, not the view's path), which the
/// action log keeps and a script replays.
pub fn perform_in(h: &Hier, op: &Op) -> WriteOutcome {
    perform_holding(h, op).0
}

/// [`perform_in`], and the directory the op was held to ([`asked_dir`]),
/// still open: for a kill (held or by path), the group killed, whose
/// subtree [`after_kill`] reads through it.
pub fn perform_holding(h: &Hier, op: &Op) -> (WriteOutcome, Option<OwnedFd>) {
    let (outcome, held) = perform_here(h, op);
    (outcome.at(h.real_group(op.group())), held)
}

fn perform_here(h: &Hier, op: &Op) -> (WriteOutcome, Option<OwnedFd>) {
    let done = |o: WriteOutcome| (o, None);
    let outcome = |result| WriteOutcome::from_result(op.clone(), result);
    let right_kind = match op.hier() {
        HierId::V2 => h.is_cgroup2(),
        HierId::V1(_) => h.is_cgroup1(),
    };
    if !right_kind {
        return done(outcome(Err(refusal(op, FsError::NotCgroup2))));
    }
    if let Some(note) = absent_in_v1(h, op) {
        return done(WriteOutcome::passed_over(op.clone(), note));
    }
    // an op asked about one group goes to that group's directory or
    // nowhere: one made again under its name is another group
    let held = match asked_dir(h, op) {
        Ok(held) => held,
        Err(e) => return done(outcome(Err(e))),
    };
    // a kill by path holds the group it kills too, for the check of what
    // survived
    let held = match held {
        None if op
            .as_write()
            .is_some_and(|w| matches!(w.kind, WriteKind::Kill)) =>
        {
            h.open_dir(hier::group_rel(op.group())).ok()
        }
        held => held,
    };
    let dir_op = |r: Result<(), FsError>| {
        r.map_err(|e| match e {
            FsError::Errno(errno) => explain(op, errno, &gather_context_in(h, op, errno)),
            other => refusal(op, other),
        })
    };
    let o = match op {
        // into the parent asked about, when held: a parent made again
        // since takes no child
        Op::CreateGroup(p, ..) => outcome(dir_op(match &held {
            Some(parent) => h.mkdir_in(parent.as_fd(), std::ffi::OsStr::from_bytes(p.name())),
            None => h.mkdir(hier::group_rel(p)),
        })),
        Op::RemoveGroup(p, _, _) => outcome(dir_op(h.rmdir(hier::group_rel(p)))),
        Op::Write(w) => perform_write(h, op, w, held.as_ref().map(AsFd::as_fd)),
    };
    (o, held)
}

/// The directory of the group an op was asked about ([`Op::ino`]; for a
/// mkdir, the parent's: [`Op::held_group`]), open
/// beneath the root (no symlink followed), when it is still that group:
/// `Err` (nothing done) when the path now names a directory of another
/// inode, the group removed and made again since the question, or
/// when there is no directory to open (gone: said as the kernel's error,
/// never a write by path that a group made meanwhile would take).
/// `None` for an op by path.
fn asked_dir(h: &Hier, op: &Op) -> Result<Option<OwnedFd>, WriteError> {
    let Some(want) = op.ino() else {
        return Ok(None);
    };
    let failed = |e: FsError| match e {
        FsError::Errno(errno) => explain(op, errno, &gather_context_in(h, op, errno)),
        other => refusal(op, other),
    };
    let Some(group) = op.held_group() else {
        return Ok(None);
    };
    let fd = h.open_dir(hier::group_rel(&group)).map_err(failed)?;
    match rustix::fs::fstat(&fd) {
        Ok(st) if st.st_ino == want => Ok(Some(fd)),
        Ok(_) => Err(explain::made_again(op)),
        Err(e) => Err(failed(FsError::Errno(e))),
    }
}

/// A write: to the file in the group's directory `held` (the group asked
/// about, see [`asked_dir`]) when there is one, so that a swap of the
/// group after the check makes the write fail on the removed directory
/// rather than go to the new one; else by path.
fn perform_write(h: &Hier, op: &Op, w: &WriteOp, held: Option<BorrowedFd<'_>>) -> WriteOutcome {
    if matches!(w.via, write::Via::Systemd { .. }) {
        return perform_systemd_in(h, op, &Systemctl::system());
    }
    let dir = hier::group_rel(&w.group);
    let path = dir.join(&w.file);
    if let (WriteKind::Kill, false, Some(d)) = (&w.kind, w.group.is_root(), held) {
        let no_kill_file =
            rustix::fs::statat(d, w.file.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .is_err_and(|e| e == Errno::NOENT);
        if no_kill_file {
            return kill_by_signal(h, op, d);
        }
    }
    let old = match w.kind {
        // a move's old value is where the process was: its undo goes back
        WriteKind::MoveProcess { pid, threads } => group_of_task(h, pid, threads),
        _ => op.undo_source().and_then(|f| read(h, &dir.join(f))),
    };
    let mut offer = None;
    let written = match held {
        Some(d) => write_once_in(h, d, &w.file, &w.contents),
        None => write_once(h, &path, &w.contents),
    };
    let result = written.map_err(|fail| match fail {
        WriteFail::Errno(errno) => {
            let ctx = gather_context_in(h, op, errno);
            offer = offer_for(op, errno, &ctx);
            explain(op, errno, &ctx)
        }
        WriteFail::Short { written, len } => explain::short_write(op, written, len),
        WriteFail::Refused(e) => refusal(op, e),
    });
    let mut notes = Vec::new();
    if result.is_ok() && matches!(w.kind, WriteKind::FreezerState(true)) {
        // v1 shows FREEZING until every task has stopped
        // (cgroup-v1/freezer-subsystem.rst): wait a little for FROZEN
        for _ in 0..FREEZING_POLLS {
            if read(h, &path).is_none_or(|t| t.trim() != "FREEZING") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if read(h, &path).is_some_and(|t| t.trim() == "FREEZING") {
            notes.push(explain::still_freezing(FREEZING_POLLS * 50));
        }
    }
    let new_readback = if op.reads_back() {
        read(h, &path)
    } else {
        None
    };
    WriteOutcome::from_result(op.clone(), result)
        .with_values(old, new_readback)
        .with_offer(offer)
        .with_notes(notes)
}

/// A write through systemd (`Via::Systemd`): the old value read as for
/// a direct write (for undo), then `systemctl set-property --runtime UNIT
/// PROP=VALUE...` (systemd writes the cgroup file itself before it
/// answers), then the same read-back of the file, so a value systemd
/// rounded or did not write shows as for any write.
pub fn perform_systemd_in(h: &Hier, op: &Op, sd: &Systemctl) -> WriteOutcome {
    let Some(w) = op.as_write() else {
        return WriteOutcome::from_result(op.clone(), Ok(()));
    };
    let dir = hier::group_rel(&w.group);
    let path = dir.join(&w.file);
    let old = op.undo_source().and_then(|f| read(h, &dir.join(f)));
    // only the unit's own group, as systemd has it, is changed through
    // systemd: the group's place in the hierarchy (not the view's path)
    // names the unit, and systemd must say that group is the unit's
    let real = h.real_group(&w.group);
    let owned = model_systemd::unit_of(real.as_ref(), |unit| sd.control_group(unit))
        .map_err(|why| model_systemd::not_the_unit_error(op, &why));
    let result = match (owned, op.systemctl_args()) {
        (Err(e), _) => Err(e),
        (Ok(_), Some(args)) => sd
            .run(&args)
            .map_err(|f| model_systemd::failure_error(op, &f)),
        // never a direct write in its place: the operator chose systemd
        (Ok(_), None) => Err(model_systemd::failure_error(
            op,
            &model_systemd::SystemctlFailure::Exit {
                code: None,
                stderr: String::new(),
            },
        )),
    };
    let new_readback = if op.reads_back() {
        read(h, &path)
    } else {
        None
    };
    WriteOutcome::from_result(op.clone(), result).with_values(old, new_readback)
}

/// A move, mkdir or rmdir in a v1 hierarchy where the group (for a
/// mkdir, its parent) is not: nothing to do there, said in a note. cgtop
/// makes, removes and moves in every hierarchy of the host, and systemd
/// makes a unit's group only in the hierarchies of its controllers.
fn absent_in_v1(h: &Hier, op: &Op) -> Option<String> {
    if !matches!(op.hier(), HierId::V1(_)) {
        return None;
    }
    let (dir, what) = match op {
        Op::Write(w) if matches!(w.kind, WriteKind::MoveProcess { .. }) => {
            (w.group.clone(), "not moved there")
        }
        Op::CreateGroup(p, ..) => (p.parent()?, "not made there"),
        Op::RemoveGroup(p, _, _) => (p.clone(), "nothing to remove there"),
        Op::Write(_) => return None,
    };
    if h.dir_ino(hier::group_rel(&dir)).is_ok() {
        return None;
    }
    let name = mapping_of(h).map_or_else(|| "v1".to_owned(), |(l, ..)| format!("v1 {}", l.0));
    Some(format!("{dir} is not in the {name} hierarchy: {what}"))
}

/// How many times (50 ms apart) a v1 freeze is read back while it says
/// FREEZING.
const FREEZING_POLLS: u64 = 20;

/// The line of /proc/PID/cgroup for the hierarchy `h` is on, with the
/// mapping of its paths to the handle's view (see
/// [`guard::hier_mapping`]).
fn mapping_of(h: &Hier) -> Option<(ProcLine, GroupPath, GroupPath)> {
    let mounts = super::mount::read_mountinfo().ok()?;
    guard::hier_mapping(&mounts, &h.real_path()?)
}

/// The group that process (or, with `threads`, thread) `pid` is in now,
/// relative to the directory `h` views, as the text of its path ("" for
/// the view's root); pid 0 is the writer itself, as the kernel reads it.
/// `None` when it cannot be known: gone, outside the view, not UTF-8.
fn group_of_task(h: &Hier, pid: u32, threads: bool) -> Option<String> {
    let file = match (pid, threads) {
        (0, false) => "/proc/self/cgroup".to_owned(),
        (0, true) => "/proc/thread-self/cgroup".to_owned(),
        (p, _) => format!("/proc/{p}/cgroup"),
    };
    let text = std::fs::read_to_string(file).ok()?;
    let (line, fs_root, view_rel) = mapping_of(h)?;
    // a group shown as deleted gives no way back (see v2_path_live)
    let group = guard::map_to_view(line.live_path(&text)?, &fs_root, &view_rel)?;
    String::from_utf8(group.as_bytes().to_vec()).ok()
}

/// Every pid in the group and below, from each cgroup.procs, read through
/// the descriptor walk ([`Hier::walk_subtree`]: no path length limit, so
/// groups nested past PATH_MAX count too), and whether the walk saw the
/// whole subtree.
fn subtree_pids(h: &Hier, group: BorrowedFd<'_>) -> (Vec<u32>, bool) {
    let mut out = Vec::new();
    let complete = h
        .walk_subtree_in(group, |dir| {
            out.extend(hier::procs_in(dir).unwrap_or_default());
        })
        .unwrap_or(false);
    (out, complete)
}

/// The processes of the subtree of the group directory `group` (open:
/// the group killed, whatever its path names by now) that a kill should have ended and that
/// are still there: every pid its cgroup.procs files list but PID 1,
/// kernel threads and cgtop ([`may_signal_listed`]), after waiting up to
/// `wait` for the killed ones to go; `None` when the walk could not see
/// the whole subtree (then nothing can be said to be dead).
pub fn survivors(h: &Hier, group: BorrowedFd<'_>, wait: std::time::Duration) -> Option<usize> {
    let end = std::time::Instant::now() + wait;
    loop {
        let (pids, complete) = subtree_pids(h, group);
        let left = pids
            .into_iter()
            .filter(|&p| {
                let stat = std::fs::read(format!("/proc/{p}/stat")).unwrap_or_default();
                // an exited process has no stat: gone
                !stat.is_empty() && may_signal_listed(p, std::process::id(), &stat, true).is_ok()
            })
            .count();
        if left == 0 || std::time::Instant::now() > end {
            return complete.then_some(left);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The outcome of a kill that reported success, checked: a process of
/// the subtree still there after a second, or a subtree the walk could not
/// see whole, makes it a failure that says so (a kill never reports a
/// success it did not see).
fn checked_kill(h: &Hier, op: &Op, group: BorrowedFd<'_>, outcome: WriteOutcome) -> WriteOutcome {
    if outcome.result.is_err() {
        return outcome;
    }
    match survivors(h, group, std::time::Duration::from_secs(1)) {
        Some(0) => outcome,
        left => WriteOutcome {
            result: Err(explain::kill_survivors(op, left)),
            ..outcome
        },
    }
}

/// SIGKILL to the pids `listed` in the group whose directory is `dir`,
/// in batches: each pid is held by a pidfd first, then the group's
/// cgroup.procs is read again and only a pid it still lists is signalled
/// (a pid reused after the first read is not the process held), and only
/// if [`may_signal_listed`] allows it (never PID 1, a kernel thread or
/// cgtop).
fn kill_listed(
    dir: std::os::fd::BorrowedFd<'_>,
    listed: &[u32],
    killed: &mut std::collections::BTreeSet<u32>,
    skipped: &mut std::collections::BTreeSet<u32>,
) -> Result<(), Errno> {
    use rustix::process::{kill_process, pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    // descriptors held at once
    const BATCH: usize = 256;
    for batch in listed.chunks(BATCH) {
        let mut held = Vec::with_capacity(batch.len());
        for &pid in batch {
            let Some(p) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
                skipped.insert(pid);
                continue;
            };
            match pidfd_open(p, PidfdFlags::empty()) {
                Ok(fd) => held.push((pid, p, Some(fd))),
                Err(Errno::SRCH) => {}
                Err(_) => held.push((pid, p, None)),
            }
        }
        let now: std::collections::BTreeSet<u32> = hier::procs_in(dir)
            .unwrap_or_default()
            .into_iter()
            .collect();
        for (pid, p, pidfd) in held {
            // bytes: a name that is not UTF-8 must not make the process unreadable
            let stat = std::fs::read(format!("/proc/{pid}/stat")).unwrap_or_default();
            if may_signal_listed(pid, std::process::id(), &stat, now.contains(&pid)).is_err() {
                skipped.insert(pid);
                continue;
            }
            let r = match &pidfd {
                Some(fd) => pidfd_send_signal(fd, Signal::KILL),
                None => kill_process(p, Signal::KILL),
            };
            match r {
                Ok(()) => {
                    killed.insert(pid);
                }
                Err(Errno::SRCH) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// cgroup.kill for kernels before 5.14 and for cgroup v1 (which has none):
/// SIGKILL to each pid of the subtree, found by the descriptor walk
/// ([`Hier::walk_subtree`]: groups nested past PATH_MAX too). Runs only on
/// cgroupfs (the caller found no cgroup.kill there); each pid is held and
/// checked first ([`kill_listed`]: never PID 1, a kernel thread or cgtop,
/// and only while the group that listed it still lists it). The subtree is
/// frozen first where cgroup.freeze (or v1's freezer.state) exists, so
/// that nothing forks between listing and killing (a fatal signal still
/// reaches a frozen process, admin guide 4-3 cgroup.freeze; a v1-frozen
/// one dies only when thawed), and thawed after (not when cgtop itself is
/// in the subtree: frozen, it could not go on). A group that was frozen
/// before is frozen again after; on v1 it is thawed first until the
/// killed processes are gone (at most a second), else they would stay,
/// killed and frozen, for good. Whether they died is [`after_kill`]'s
/// check, made once the v1 freezer's hierarchy has thawed them too.
/// Everything goes through `group`, the group's directory as the op held
/// it (the group asked about, or the one its path named at the start),
/// never by path again.
fn kill_by_signal(h: &Hier, op: &Op, group: BorrowedFd<'_>) -> WriteOutcome {
    if !h.holds_dir(group) {
        return WriteOutcome::failed(op.clone(), refusal(op, FsError::NotCgroup2));
    }
    let (freeze_file, freeze, thaw) = if h.is_cgroup1() {
        (v1_files::FREEZER_STATE, "FROZEN", "THAWED")
    } else {
        (files::FREEZE, "1", "0")
    };
    let was_frozen = hier::read_text_in(group, freeze_file).ok();
    // never freeze a subtree that holds cgtop (its name was typed): the
    // writer would stop there with nothing left to thaw it, and nothing
    // killed
    let holds_self = subtree_pids(h, group).0.contains(&std::process::id());
    let froze =
        !holds_self && was_frozen.is_some() && write_once_in(h, group, freeze_file, freeze).is_ok();
    let mut killed = std::collections::BTreeSet::new();
    let mut skipped = std::collections::BTreeSet::new();
    let mut failure: Option<Errno> = None;
    for pass in 0..5 {
        if pass > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let mut any = false;
        let walked = h.walk_subtree_in(group, |d| {
            if failure.is_some() {
                return;
            }
            let mut listed = hier::procs_in(d).unwrap_or_default();
            listed.retain(|p| !killed.contains(p) && !skipped.contains(p));
            any |= !listed.is_empty();
            if let Err(e) = kill_listed(d, &listed, &mut killed, &mut skipped) {
                failure = Some(e);
            }
        });
        if walked.is_err() || !any || failure.is_some() {
            break;
        }
    }
    if froze {
        let refreeze = was_frozen.as_deref().map(str::trim) == Some(freeze);
        if refreeze && h.is_cgroup1() && !killed.is_empty() {
            // a v1-frozen process does not die of SIGKILL until it is
            // thawed: thaw, let the killed ones go, then freeze again
            // what was frozen
            let _ = write_once_in(h, group, freeze_file, thaw);
            let _ = survivors(h, group, std::time::Duration::from_secs(1));
        }
        let back = if refreeze { freeze } else { thaw };
        let _ = write_once_in(h, group, freeze_file, back);
    }
    let notes = explain::kill_fallback_notes_in(h.is_cgroup1(), killed.len(), skipped.len());
    let result = match failure {
        None => Ok(()),
        Some(errno) => Err(explain(op, errno, &gather_context_in(h, op, errno))),
    };
    WriteOutcome::from_result(op.clone(), result).with_notes(notes)
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
    let exists =
        created.errno() == Some(Errno::EXIST) && h.dir_ino(hier::group_rel(&leaf_path)).is_ok();
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
            if o.errno() == Some(Errno::SRCH) {
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

/// Reads the context for `op` after it failed with `errno`, from the tree
/// at `root` (opened now).
pub fn gather_context(root: &Path, op: &Op, errno: Errno) -> ErrorContext {
    gather_context_in(&Hier::open_lenient(root), op, errno)
}

/// [`gather_context`] beneath the hierarchy handle `h`.
pub fn gather_context_in(h: &Hier, op: &Op, errno: Errno) -> ErrorContext {
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
    if errno == Errno::NOENT {
        let offered = read(h, &dir.join(files::CONTROLLERS)).map(|t| Controllers::parse(&t));
        for c in changes.iter().filter(|c| c.enable) {
            if offered.as_ref().is_some_and(|o| o.contains(&c.name)) {
                continue;
            }
            ctx.missing
                .push((c.name.clone(), availability(h, group, &c.name)));
        }
    }
    if errno == Errno::BUSY {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CgroupType, Limit};
    use crate::model::write::input::MemoryFile;
    use crate::model::write::*;

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

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
        let ctx = gather_context(t.path(), &op, Errno::NOENT);
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
        let e = explain(&op, Errno::NOENT, &ctx);
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
        let ctx = gather_context(t.path(), &op, Errno::BUSY);
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
    fn the_hosts_kthreadd_is_never_signalled() {
        // the decision is model::write::killable's; here it meets this host's
        // own texts: kthreadd is a kernel thread
        let kthreadd = std::fs::read("/proc/2/stat").unwrap_or_default();
        if kthreadd.windows(10).any(|w| w == b"(kthreadd)") {
            let cg = std::fs::read_to_string("/proc/2/cgroup").unwrap_or_default();
            let want = cg
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/");
            assert_eq!(
                crate::model::write::killable::may_signal(2, 7, &kthreadd, &cg, want),
                Err(crate::model::write::killable::NotSignalled::KernelThread)
            );
        }
    }

    /// A group of the test's own on this kernel's cgroup2
    /// (`cgtop-test-<pid>-unit-<what>`, made here, removed by the test):
    /// the mount's root, the group's name and its directory; `None`, said
    /// skipped, where not root, no cgroup2, or it cannot be made.
    fn real_group(what: &str) -> Option<(std::path::PathBuf, String, std::path::PathBuf)> {
        if !rustix::process::geteuid().is_root() {
            println!("skipped: not root");
            return None;
        }
        let Ok(m) = super::super::mount::discover() else {
            println!("skipped: no cgroup2");
            return None;
        };
        let rel = format!("cgtop-test-{}-unit-{what}", std::process::id());
        let dir = m.root.join(&rel);
        if std::fs::create_dir(&dir).is_err() {
            println!("skipped: cannot create a cgroup");
            return None;
        }
        Some((m.root, rel, dir))
    }

    #[test]
    fn kill_fallback_on_the_real_cgroup2() {
        use std::os::unix::process::ExitStatusExt;
        // the fallback itself, on this kernel's cgroup2 (which has
        // cgroup.kill, so perform would not take it): the group's process
        // is killed, and nothing else
        let Some((root, rel, dir)) = real_group("kill") else {
            return;
        };
        let mut inside = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let mut outside = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        std::fs::write(dir.join("cgroup.procs"), inside.id().to_string()).unwrap();
        let h = Hier::open(&root).unwrap();
        let held = h.open_dir(Path::new(&rel)).unwrap();
        let o = kill_by_signal(&h, &kill(&g(&rel)), held.as_fd());
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
    fn an_op_held_to_a_group_writes_only_to_that_group() {
        // on this kernel's cgroup2: an op asked about one group (its
        // directory's inode) writes there, and is refused once the path
        // names a group made again under that name
        let Some((root, rel, dir)) = real_group("held") else {
            return;
        };
        let ino = |d: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap());
        let frozen = |d: &Path| std::fs::read_to_string(d.join("cgroup.freeze")).unwrap();
        let h = Hier::open(&root).unwrap();
        let asked = ino(&dir);
        // the group asked about: written
        let held = perform_in(&h, &freeze(&g(&rel), true).of_group(Some(asked)));
        let held_frozen = frozen(&dir);
        let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
        // the same name, another group
        std::fs::remove_dir(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let again = perform_in(&h, &freeze(&g(&rel), true).of_group(Some(asked)));
        let again_frozen = frozen(&dir);
        let remove = perform_in(&h, &remove_group(&g(&rel)).of_group(Some(asked)));
        let still_there = dir.is_dir();
        let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
        let _ = std::fs::remove_dir(&dir);
        assert_eq!(held.result, Ok(()));
        assert_eq!(held_frozen.trim(), "1");
        let e = again.result.unwrap_err();
        assert!(
            e.explanation
                .contains("removed and made again since you were asked; nothing done"),
            "{e}"
        );
        assert_eq!(
            e.fix.as_deref(),
            Some("select it again to act on the new one")
        );
        assert_eq!(again_frozen.trim(), "0", "the new group was frozen");
        assert!(remove.result.is_err());
        assert!(still_there, "the new group was removed");
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
