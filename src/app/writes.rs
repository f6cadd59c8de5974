//! Writes as the app sees them: the request handed to the writer thread,
//! and what comes back ([`on_write_finished`]): the action log, the undo
//! stack, the status line, the freeze marks, and the offers (leaf fix,
//! enable along the path) or a message when the kernel refused; and the
//! effect of each write ([`register_effects`], [`measure_effects`]).

use super::dialog::leaf_fix::LeafFixDialog;
use super::dialog::limits;
use super::{App, Effect, Level, Mode};
use crate::model::host::layout::Layout;
use crate::model::write::effect::{self, NotMeasured, Now, Pending, Record};
use crate::model::write::history::{Direction, Dropped, Recorded};
use crate::model::write::input::ControllerChange;
use crate::model::write::{self, Op, WriteKind};
use crate::model::GroupPath;
use crate::model::{Offer, WriteError, WriteOutcome};
use crate::render::effect as render;

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
    /// Append the effect of an earlier write to the action log file (the
    /// writer thread owns the file). Nothing is written to the hierarchy
    /// and no `WriteFinished` comes back.
    LogEffect(Record),
    /// Write this session's writes as a shell script and its undo beside
    /// the action log (the log screen's `e`); `Msg::ScriptWritten` comes
    /// back. Nothing is written to the hierarchy.
    ExportScript(Vec<crate::model::files::script::Entry>),
}

/// The effect of a write to one group, by the action log entry it
/// follows (`App::log[log_index]`, the last op of that write on the group).
#[derive(Debug, Clone, PartialEq)]
pub struct EffectEntry {
    pub log_index: usize,
    pub state: EffectState,
}

/// Being measured, or what came of it.
#[derive(Debug, Clone, PartialEq)]
pub enum EffectState {
    Pending(Pending),
    Done(effect::Effect),
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
        if o.guard_refused
            .iter()
            .any(|d| matches!(d, crate::model::write::guard::Danger::MovesIntoDelegated(_)))
        {
            app.delegated.insert(o.op.group().clone());
        }
        if let (Ok(()), Some(w)) = (&o.result, o.op.as_write()) {
            match w.kind {
                WriteKind::Freeze(true) => {
                    app.freezing.insert(w.group.clone());
                }
                WriteKind::Freeze(false) | WriteKind::FreezerState(false) => {
                    app.freezing.remove(&w.group);
                }
                // v1: "freezing" while freezer.state still says FREEZING
                WriteKind::FreezerState(true) => {
                    if o.new_readback.as_deref().map(str::trim) == Some("FREEZING") {
                        app.freezing.insert(w.group.clone());
                    } else {
                        app.freezing.remove(&w.group);
                    }
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
    // every op done: one sentence per action, naming the hierarchies it
    // was made in (a move into a group in 7 hierarchies is 7 outcomes)
    if outcomes.len() > 1 && outcomes.iter().all(|o| o.result.is_ok()) {
        status = Some(done_words(&app.layout, outcomes));
    }
    if let Some((level, text)) = status {
        let text = history_words(&app.layout, &recorded, text, outcomes);
        let text = match Dropped::summary(&dropped) {
            Some(d) => format!("{text}; {d}"),
            None => text,
        };
        app.set_status(level, text);
    }
    register_effects(app, outcomes, unix_secs, fx);
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
        // judged as a whole before it is asked: a plan with a step the
        // kernel would refuse is not offered
        Some(Offer::EnableAlongPath(ops)) => {
            next = Some(super::dialog::confirm::along_path(app, ops));
        }
        None => {}
    }
    if let Some(mode) = next {
        app.mode = mode;
    }
}

/// The status line after a request whose ops all succeeded: "done: "
/// and one sentence per action with the hierarchies it was made in, then
/// what the kernel stored instead and the notes, each once.
fn done_words(layout: &Layout, outcomes: &[WriteOutcome]) -> (Level, String) {
    let mut s = format!(
        "done: {}",
        write::sentences(outcomes.iter().map(|o| &o.op), layout).join("; ")
    );
    let mut extras: Vec<String> = Vec::new();
    let mut differs = false;
    for o in outcomes {
        let stored = o.stored_differs();
        differs |= stored.is_some();
        for e in stored.into_iter().chain(o.notes.iter().cloned()) {
            if !extras.contains(&e) {
                extras.push(e);
            }
        }
    }
    for e in extras {
        s.push_str("; ");
        s.push_str(&e);
    }
    (if differs { Level::Warn } else { Level::Info }, s)
}

/// The status line for an undo or redo: "undone: set pids.max of /lab to
/// 5 (wrote 100 to pids.max)", "redone: ...", or the failure and what
/// became of the entry; an ordinary write keeps `text`.
fn history_words(
    layout: &Layout,
    recorded: &Recorded,
    text: String,
    outcomes: &[WriteOutcome],
) -> String {
    match recorded {
        Recorded::Write => text,
        Recorded::Replayed(r) => {
            let mut s = format!("{}: {}", r.dir.done_word(), r.entry.describe_in(layout));
            if r.dir == Direction::Undo {
                s.push_str(&format!(" ({})", r.entry.undone_words()));
            }
            // what the kernel stored instead, notes: as after any write,
            // each once
            let mut said: Vec<String> = Vec::new();
            for extra in outcomes
                .iter()
                .flat_map(|o| o.stored_differs().into_iter().chain(o.notes.clone()))
            {
                if !said.contains(&extra) {
                    s.push_str("; ");
                    s.push_str(&extra);
                    said.push(extra);
                }
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

/// What the app knows about `group` at the latest refresh, for its
/// effect; `None` before the first refresh. The pressure files are the
/// refresh's own inspection of the group (the after window's totals must
/// be read at the refreshes that bound it); at the write (`at_write`), an
/// inspection read since, when the operator just selected the group, will
/// do as well: its avg10 is the kernel's average of the last 10 s anyway.
fn now_for<'a>(app: &'a App, group: &'a GroupPath, at_write: bool) -> Option<Now<'a>> {
    let d = app.data.as_ref()?;
    let snap = &d.refresh.snapshot;
    let since = app.inspection.as_ref().filter(|_| at_write);
    let inspected = d
        .refresh
        .inspection
        .as_ref()
        .filter(|i| &i.path == group)
        .or(since.filter(|i| &i.path == group))
        .map(|i| &i.detail);
    Some(Now {
        timeline: &app.timeline,
        at: snap.at,
        present: snap.find(group).is_some(),
        inode: snap.find(group).map(|g| g.inode),
        children: snap
            .groups
            .iter()
            .filter(|g| g.path.parent().as_ref() == Some(group))
            .map(|g| &g.path)
            .collect(),
        memory_pressure: inspected.and_then(|i| i.memory_pressure.as_ref()),
        io_pressure: inspected.and_then(|i| i.io_pressure.as_ref()),
    })
}

/// A pending effect for each group that a write changed with success (the
/// ops of one answer on one group are one effect: the limits form writes
/// several files at once). A failed op has none. Paused, or before the
/// first refresh, the effect is not measured, and the status line says so.
fn register_effects(
    app: &mut App,
    outcomes: &[WriteOutcome],
    unix_secs: u64,
    fx: &mut Vec<Effect>,
) {
    let first_log = app.log.len() - outcomes.len();
    let mut groups: Vec<(GroupPath, Vec<crate::model::write::Op>, usize)> = Vec::new();
    for (i, o) in outcomes.iter().enumerate() {
        if o.result.is_err() || !Pending::has_figures(std::slice::from_ref(&o.op)) {
            continue;
        }
        // a move changes the group the process left as well as its target
        let left = o.old_group().filter(|src| src != o.op.group());
        for g in std::iter::once(o.op.group().clone()).chain(left) {
            match groups.iter_mut().find(|(p, ..)| *p == g) {
                Some((_, ops, at)) => {
                    ops.push(o.op.clone());
                    *at = first_log + i;
                }
                None => groups.push((g, vec![o.op.clone()], first_log + i)),
            }
        }
    }
    let each_side = effect::each_side(app.interval);
    for (group, ops, log_index) in groups {
        let why = if app.paused {
            Some(NotMeasured::Paused)
        } else if app.data.is_none() {
            Some(NotMeasured::NoRefresh)
        } else {
            None
        };
        let state = if let Some(why) = why {
            let e = Pending::not_measured(group, ops, unix_secs, why);
            // said at once, after the write's own words
            if let Some(s) = &mut app.status {
                s.text.push_str("; effect ");
                s.text.push_str(render::not_measured(why));
            }
            finished(&e, fx);
            EffectState::Done(e)
        } else {
            let Some(p) = now_for(app, &group, true)
                .and_then(|now| Pending::start(group.clone(), ops, unix_secs, each_side, &now))
            else {
                continue;
            };
            EffectState::Pending(p)
        };
        app.effects.push(EffectEntry { log_index, state });
    }
}

/// At each refresh: the pending effects whose after window is in (or
/// whose group is gone) are done: their line goes to the status line, the
/// log screen and, through the writer thread, the log file.
///
/// The status line takes the line when it shows nothing or information,
/// never over a warning or an error (those stay until the next key, as
/// ever; the log screen has the effect).
pub fn measure_effects(app: &mut App, fx: &mut Vec<Effect>) {
    if !app
        .effects
        .iter()
        .any(|e| matches!(e.state, EffectState::Pending(_)))
    {
        return;
    }
    let mut effects = std::mem::take(&mut app.effects);
    for entry in &mut effects {
        let EffectState::Pending(p) = &mut entry.state else {
            continue;
        };
        let group = p.group.clone();
        let Some(done) = now_for(app, &group, false).and_then(|now| p.on_refresh(&now)) else {
            continue;
        };
        let line = render::line(&done);
        if app.status.as_ref().is_none_or(|s| s.level == Level::Info) {
            app.set_status(Level::Info, format!("{}: {line}", group.name_display()));
        }
        finished(&done, fx);
        entry.state = EffectState::Done(done);
    }
    app.effects = effects;
}

/// The log file's record of a finished effect, for the writer thread.
fn finished(e: &effect::Effect, fx: &mut Vec<Effect>) {
    fx.push(Effect::Write(WriteRequest::LogEffect(Record::of(
        e,
        render::line(e),
    ))));
}

/// The words the log screen shows under a write, after "effect:" (the
/// entry above says what was written): the figures, or that they are
/// being measured. A write with effects on two groups (a move: the
/// target and the group the process left) names each.
pub fn effect_words(app: &App, log_index: usize) -> Option<String> {
    let all: Vec<(&GroupPath, String)> = app
        .effects
        .iter()
        .filter(|e| e.log_index == log_index)
        .map(|e| match &e.state {
            EffectState::Done(done) => (&done.group, render::outcome_words(&done.outcome)),
            EffectState::Pending(p) => (&p.group, render::waiting(p.refreshes_left(), app.paused)),
        })
        .collect();
    match all.as_slice() {
        [] => None,
        [(_, words)] => Some(words.clone()),
        many => Some(
            many.iter()
                .map(|(g, w)| format!("{}: {w}", g.name_display()))
                .collect::<Vec<_>>()
                .join("; "),
        ),
    }
}
