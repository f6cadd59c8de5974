//! What performing one write came to, as values: [`WriteOutcome`] (the op,
//! the value before, the read-back, success or a [`WriteError`], notes)
//! and the [`Offer`] of a fix cgtop can carry out after a failure. The
//! writer (`source::writer`) fills them; the app, the view and the action
//! log read them. Words for a failure come from [`crate::model::write::explain`].
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::write::errno::{self, Errno};
use crate::model::write::input::ControllerChange;
use crate::model::write::{Op, WriteKind};
use crate::model::GroupPath;
use std::fmt;

/// Why a write failed, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteError {
    /// The errno the kernel returned; `None` when cgtop refused before
    /// writing, or for a short write.
    pub errno: Option<Errno>,
    /// What was attempted: "/a/b/memory.max", "mkdir /a/b".
    pub what: String,
    /// What went wrong, in words.
    pub explanation: String,
    /// What to do about it, when there is something to do.
    pub fix: Option<String>,
}

impl WriteError {
    /// A failure without an errno: cgtop refused, or the kernel took part
    /// of the text.
    pub fn refused(what: String, explanation: String, fix: Option<String>) -> Self {
        Self {
            errno: None,
            what,
            explanation,
            fix,
        }
    }

    /// The errno's symbolic name ("EBUSY"), or "" without one.
    pub fn errno_name(&self) -> &'static str {
        self.errno.map_or("", errno::name)
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
    /// The group's path in its hierarchy as the kernel names it (from the
    /// hierarchy's root, whatever directory `--root` viewed), read by the
    /// writer from where its handle really is; `None` when it could not
    /// tell. The action log records it, and a script replays a write only
    /// there (`model::files::script`).
    pub real: Option<GroupPath>,
    /// Nothing was done: the group (for a mkdir, its parent) is not in
    /// this hierarchy, so a move, mkdir or rmdir there was passed over
    /// (the notes say so). Not an error, and never replayed.
    pub skipped: bool,
    /// The dangers the writer's last check found (`source::safety`) when it
    /// refused the op for want of the group's name typed: facts the app
    /// could not see (a delegated owner), so that asking again asks for
    /// the name. Empty otherwise.
    pub guard_refused: Vec<super::guard::Danger>,
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

impl WriteOutcome {
    /// `op` went through; `old` is what undo needs, `new_readback` the
    /// file read back after the write.
    pub fn done(op: Op, old: Option<String>, new_readback: Option<String>) -> Self {
        Self::from_result(op, Ok(())).with_values(old, new_readback)
    }

    /// `op` failed with `error`; nothing was read.
    pub fn failed(op: Op, error: WriteError) -> Self {
        Self::from_result(op, Err(error))
    }

    /// `op` came to `result`; nothing was read, no note, no offer.
    pub fn from_result(op: Op, result: Result<(), WriteError>) -> Self {
        Self {
            op,
            old: None,
            new_readback: None,
            result,
            notes: Vec::new(),
            offer: None,
            real: None,
            skipped: false,
            guard_refused: Vec::new(),
        }
    }

    /// Refused by the writer's check for `dangers` (see
    /// [`Self::guard_refused`]).
    #[must_use]
    pub fn guarded_for(self, dangers: Vec<super::guard::Danger>) -> Self {
        Self {
            guard_refused: dangers,
            ..self
        }
    }

    /// Where the group really is in its hierarchy (see [`Self::real`]).
    #[must_use]
    pub fn at(self, real: Option<GroupPath>) -> Self {
        Self { real, ..self }
    }

    /// The op was passed over, for the reason `note` (see
    /// [`Self::skipped`]).
    #[must_use]
    pub fn passed_over(op: Op, note: String) -> Self {
        Self {
            skipped: true,
            notes: vec![note],
            ..Self::from_result(op, Ok(()))
        }
    }

    /// The value before the write and the read-back after it.
    #[must_use]
    pub fn with_values(self, old: Option<String>, new_readback: Option<String>) -> Self {
        Self {
            old,
            new_readback,
            ..self
        }
    }

    #[must_use]
    pub fn with_notes(self, notes: Vec<String>) -> Self {
        Self { notes, ..self }
    }

    #[must_use]
    pub fn with_offer(self, offer: Option<Offer>) -> Self {
        Self { offer, ..self }
    }

    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    pub fn errno(&self) -> Option<Errno> {
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

    /// A move's old value as a group: the group the process left (the
    /// log writes it as a path, escaped like every other path, once).
    /// `None` for any other write, or an old value that is no group path.
    pub fn old_group(&self) -> Option<GroupPath> {
        let old = self.old.as_deref()?;
        match self.op.as_write().map(|w| &w.kind) {
            Some(WriteKind::MoveProcess { .. }) => GroupPath::parse(old.as_bytes()).ok(),
            _ => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::Limit;
    use crate::model::write::explain::{explain, ErrorContext};
    use crate::model::write::input::MemoryFile;
    use crate::model::write::{kill, set_memory_limit};

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    #[test]
    fn a_moves_old_value_shows_as_the_group_it_left() {
        let mv = crate::model::write::move_process(7, &g("a/b"), false);
        let o = WriteOutcome::done(mv.clone(), Some("a".into()), None);
        assert_eq!(o.old_group(), Some(g("a")));
        let o = WriteOutcome::done(mv, Some(String::new()), None);
        assert_eq!(o.old_group(), Some(GroupPath::root()));
        let o = WriteOutcome::done(kill(&g("a")), Some("0\n".into()), None);
        assert_eq!(o.old_group(), None);
    }

    fn existing() -> ErrorContext {
        ErrorContext {
            group_exists: true,
            file_exists: true,
            ..ErrorContext::default()
        }
    }

    #[test]
    fn outcome_helpers() {
        let op = set_memory_limit(&g("a"), MemoryFile::Max, Limit::Value(1000));
        let o = WriteOutcome::done(op.clone(), Some("max\n".into()), Some("0\n".into()));
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
        let failed = WriteOutcome::failed(op.clone(), explain(&op, Errno::ACCESS, &existing()))
            .with_values(o.old.clone(), o.new_readback.clone());
        assert_eq!(failed.undo(), None);
        assert_eq!(failed.stored_differs(), None);
        assert_eq!(failed.errno(), Some(Errno::ACCESS));
        assert_eq!(
            failed.summary(),
            "/a/memory.max: permission denied (run as root, or --read-only) [EACCES]"
        );
    }

    // --- against a plain directory laid out like a hierarchy ----------------

    #[test]
    fn constructors_fill_what_they_name() {
        let op = kill(&g("a"));
        let e = WriteError::refused("/a/cgroup.kill".into(), "no".into(), None);
        let failed = WriteOutcome::failed(op.clone(), e.clone())
            .with_values(Some("0\n".into()), None)
            .with_notes(vec!["n".into()])
            .with_offer(Some(Offer::EnableAlongPath(vec![op.clone()])));
        assert_eq!(
            failed,
            WriteOutcome {
                op: op.clone(),
                old: Some("0\n".into()),
                new_readback: None,
                result: Err(e.clone()),
                notes: vec!["n".into()],
                offer: Some(Offer::EnableAlongPath(vec![op.clone()])),
                real: None,
                skipped: false,
                guard_refused: Vec::new(),
            }
        );
        assert_eq!(failed.errno(), None);
        assert_eq!(e.errno_name(), "");
        assert_eq!(e.to_string(), "/a/cgroup.kill: no");
        let done = WriteOutcome::done(op.clone(), None, Some("x".into()));
        assert!(done.is_ok());
        assert_eq!(
            done,
            WriteOutcome::from_result(op, Ok(())).with_values(None, Some("x".into()))
        );
    }
}
