//! Writes as the app sees them: the request handed to the writer thread,
//! and what comes back ([`on_write_finished`]): the action log, the undo
//! stack, the status line, the freeze marks, and the offers (leaf fix,
//! enable along the path) or a message when the kernel refused.

use super::dialog::confirm::Confirm;
use super::dialog::leaf_fix::LeafFixDialog;
use super::dialog::limits;
use super::{App, Effect, Level, Mode};
use crate::model::history::{Direction, Dropped, Recorded};
use crate::model::input::ControllerChange;
use crate::model::write::{Op, WriteKind};
use crate::model::GroupPath;
use crate::model::{Offer, WriteError, WriteOutcome};

/// What the writer thread is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRequest {
    /// Perform in order; stop at the first failure.
    Ops(Vec<Op>),
    /// Like `Ops`, after the operator typed the name of `name`: the writer,
    /// which checks every op again just before performing it, lets a
    /// guarded op through only on that group.
    Typed { ops: Vec<Op>, name: GroupPath },
    /// The no-internal-process fix: create `group/leaf`, move the group's
    /// processes there, then apply `changes`.
    LeafFix {
        group: GroupPath,
        leaf: String,
        changes: Vec<ControllerChange>,
    },
}

/// One line of the action log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub unix_secs: u64,
    pub outcome: WriteOutcome,
}

/// Applies the writer's outcomes: log, undo and redo stacks, status,
/// offers.
pub fn on_write_finished(
    app: &mut App,
    outcomes: &[WriteOutcome],
    unix_secs: u64,
    fx: &mut Vec<Effect>,
) {
    let mut status: Option<(Level, String)> = None;
    let mut offer: Option<Offer> = None;
    let (recorded, dropped) = app
        .history
        .finished(outcomes, super::seen(app.data.as_ref(), &app.start));
    for o in outcomes {
        if let (Ok(()), Some(w)) = (&o.result, o.op.as_write()) {
            match w.kind {
                WriteKind::Freeze(true) => {
                    app.freezing.insert(w.group.clone());
                }
                WriteKind::Freeze(false) => {
                    app.freezing.remove(&w.group);
                }
                _ => {}
            }
        }
        if status.as_ref().is_none_or(|(l, _)| *l != Level::Error) {
            status = Some(match (&o.result, o.stored_differs()) {
                // every failure opens a dialog with the whole story
                // (what, why, the fix); the status line keeps a short
                // record that a long explanation would have cut
                (Err(e), _) if e.errno.is_some() => (
                    Level::Error,
                    format!("{}: {} was refused", e.errno_name(), e.what),
                ),
                (Err(_), _) => (Level::Error, o.summary()),
                (Ok(()), Some(_)) => (Level::Warn, o.summary()),
                (Ok(()), None) => (Level::Info, o.summary()),
            });
        }
        if offer.is_none() {
            offer.clone_from(&o.offer);
        }
        app.log.push(LogEntry {
            unix_secs,
            outcome: o.clone(),
        });
    }
    if let Some((level, text)) = status {
        let text = history_words(&recorded, text, outcomes);
        let text = match Dropped::summary(&dropped) {
            Some(d) => format!("{text}; {d}"),
            None => text,
        };
        app.set_status(level, text);
    }
    let page_size = app.page_size;
    if let Mode::Limits(form) = &mut app.mode {
        limits::show_readback(form, outcomes, page_size);
    }
    // what the screen becomes: one decision, made at the end
    let mut next = None;
    let failure = outcomes.iter().find_map(|o| o.result.as_ref().err());
    if let (Some(e), None) = (failure, &offer) {
        let title = if e.errno.is_some() {
            format!("{}: the kernel refused", e.errno_name())
        } else {
            "the write did not complete".into()
        };
        next = Some(error_box(title, e));
    }
    fx.push(Effect::Collector(
        crate::source::collector::Command::RefreshNow,
    ));
    // a dialog still open (the limits form) stays; offers replace it
    match offer {
        Some(Offer::LeafFix {
            group,
            changes,
            nr_procs,
        }) => {
            next = Some(Mode::LeafFix(LeafFixDialog::offer(
                group, changes, nr_procs,
            )));
        }
        Some(Offer::EnableAlongPath(ops)) => {
            next = Some(Mode::Confirm(Box::new(Confirm::enable_along_path(ops))));
        }
        None => {}
    }
    if let Some(mode) = next {
        app.mode = mode;
    }
}

/// The status line for an undo or redo: "undone: set pids.max of /lab to
/// 5 (wrote 100 to pids.max)", "redone: ...", or the failure and what
/// became of the entry; an ordinary write keeps `text`.
fn history_words(recorded: &Recorded, text: String, outcomes: &[WriteOutcome]) -> String {
    match recorded {
        Recorded::Write => text,
        Recorded::Replayed(r) => {
            let mut s = format!("{}: {}", r.dir.done_word(), r.entry.describe());
            if r.dir == Direction::Undo {
                s.push_str(&format!(" ({})", r.entry.undone_words()));
            }
            // what the kernel stored instead, notes: as after any write
            for extra in outcomes
                .iter()
                .flat_map(|o| o.stored_differs().into_iter().chain(o.notes.clone()))
            {
                s.push_str("; ");
                s.push_str(&extra);
            }
            s
        }
        Recorded::Failed { dir, gone: None } => format!(
            "{} failed, {text}; still on the {} stack",
            dir.word(),
            dir.word()
        ),
        Recorded::Failed {
            dir,
            gone: Some(why),
        } => format!("{} failed, {text}; dropped it: {why}", dir.word()),
    }
}

/// The box that says why a write failed or was not made, and the fix.
pub fn error_box(title: String, e: &WriteError) -> Mode {
    let mut lines = vec![e.what.clone(), String::new(), e.explanation.clone()];
    if let Some(fix) = &e.fix {
        lines.push(String::new());
        lines.push(format!("Fix: {fix}"));
    }
    Mode::Message { title, lines }
}

/// The freeze marks: "freezing" until cgroup.events says frozen, and when
/// each group was first seen frozen (cgtop's clock).
pub fn track_freeze(app: &mut App) {
    let Some(d) = &app.data else { return };
    let at = d.refresh.snapshot.at;
    let mut frozen_now = Vec::new();
    for g in &d.refresh.snapshot.groups {
        if g.hot.events.is_some_and(|e| e.is_frozen()) {
            frozen_now.push(g.path.clone());
        }
    }
    app.freezing.retain(|p| !frozen_now.contains(p));
    app.frozen_since.retain(|p, _| frozen_now.contains(p));
    let first = app.frozen_seen_any;
    for p in frozen_now {
        // a group already frozen at cgtop's first refresh: since unknown
        app.frozen_since
            .entry(p)
            .or_insert(if first { Some(at) } else { None });
    }
    app.frozen_seen_any = true;
}
