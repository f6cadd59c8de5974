//! The move picker (m, in the process list): the selected process (or
//! one thread) into a group chosen by typing part of its path. Groups
//! that cannot take it are not offered (`model::write::preflight`: a group that
//! hands domain controllers to its children, one of invalid type, and for
//! a thread any group outside its threaded domain). PID 1 is offered, and
//! its move asks for the target's name (the guard's `Danger::MovesInit`).

use super::{confirm, list_step, type_into, writable, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::{App, Effect, Level, Mode, Pane};
use crate::model::write;
use crate::model::write::preflight::{self, Verdict};
use crate::model::GroupPath;
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovePicker {
    pub pid: u32,
    pub what: String,
    pub filter: TextInput,
    pub matches: Vec<GroupPath>,
    pub cursor: usize,
    /// Write to cgroup.threads (one thread) instead of cgroup.procs.
    pub threads: bool,
    /// Groups that cannot take the process (or the thread): left out of
    /// `matches`. Decided when the picker opens and when ^T switches.
    pub refused: HashSet<GroupPath>,
}

impl MovePicker {
    /// Opens the picker for the process under the cursor.
    pub fn open(app: &mut App) -> Transition {
        if !writable(app) {
            return Transition::Stay;
        }
        if app.pane != Pane::Processes {
            app.set_status(
                Level::Info,
                "select a process first: Tab moves to the process list",
            );
            return Transition::Stay;
        }
        let Some(p) = app
            .inspection
            .as_ref()
            .and_then(|f| f.processes.get(app.proc_cursor))
        else {
            app.set_status(Level::Warn, "no process selected");
            return Transition::Stay;
        };
        let (pid, what) = (p.pid, p.cmdline.clone());
        let mut m = Self {
            pid,
            what,
            filter: TextInput::new(TextInput::LINE),
            matches: Vec::new(),
            cursor: 0,
            threads: false,
            refused: HashSet::new(),
        };
        m.refused = refused_targets(app, pid, false);
        m.refilter(app);
        Transition::Open(Mode::Move(m))
    }

    pub fn key(
        &mut self,
        app: &mut App,
        action: Option<Action>,
        ev: Input<'_>,
        fx: &mut Vec<Effect>,
    ) -> Transition {
        match action {
            Some(Action::Cancel) => return Transition::Close,
            Some(Action::Up | Action::Down) => {
                self.cursor = list_step(self.cursor, self.matches.len(), action).unwrap_or(0);
            }
            Some(Action::ToggleThreads) => {
                self.threads = !self.threads;
                self.refused = refused_targets(app, self.pid, self.threads);
                self.refilter(app);
            }
            Some(Action::Accept) => {
                if let Some(target) = self.matches.get(self.cursor).cloned() {
                    // on a host with v1 hierarchies: in each of them
                    // that holds the target (the confirmation lists them),
                    // so that every controller takes the process
                    let ops = if app.layout.v1.is_empty() {
                        vec![write::move_process(self.pid, &target, self.threads)]
                    } else {
                        super::direct::holding(app, &target)
                            .into_iter()
                            .map(|h| write::move_process_in(self.pid, &target, self.threads, h))
                            .collect()
                    };
                    return confirm::request(app, ops, fx);
                }
            }
            _ => {
                if type_into(app, &mut self.filter, ev) {
                    // a new list: its best match is the first, not whatever
                    // now sits where the cursor was
                    self.cursor = 0;
                    self.refilter(app);
                }
            }
        }
        Transition::Stay
    }

    fn refilter(&mut self, app: &App) {
        let needle = self.filter.as_str().to_lowercase();
        self.matches = app
            .data
            .as_ref()
            .map(|d| {
                d.refresh
                    .snapshot
                    .groups
                    .iter()
                    .filter(|g| !self.refused.contains(&g.path))
                    // the whole path (as shown, or with a space typed
                    // where it shows `\u{20}`), or the group's identity
                    // (a container's name, image, pod, id prefix)
                    .filter(|g| {
                        g.path.to_string().to_lowercase().contains(&needle)
                            || (needle.contains(' ')
                                && g.path.data().to_string().to_lowercase().contains(&needle))
                            || crate::model::identity::of_group(g)
                                .is_some_and(|i| crate::model::identity::matches(&i, &needle))
                    })
                    .map(|g| g.path.clone())
                    .collect()
            })
            .unwrap_or_default();
        self.cursor = self.cursor.min(self.matches.len().saturating_sub(1));
    }
}

/// The groups pre-flight is certain would refuse `pid` (one thread with
/// `threads`): from the last refresh, with the inspected group's own
/// cgroup.subtree_control where it is the target.
fn refused_targets(app: &App, pid: u32, threads: bool) -> HashSet<GroupPath> {
    let Some(d) = &app.data else {
        return HashSet::new();
    };
    let snap = &d.refresh.snapshot;
    let evidence = preflight::child_evidence(snap);
    let inspected = app.inspection.as_ref();
    let source = inspected
        .filter(|_| threads)
        .and_then(|f| preflight::domain_of(snap, &f.path));
    snap.groups
        .iter()
        .filter(|g| {
            let detail = inspected.filter(|f| f.path == g.path).map(|f| &f.detail);
            preflight::move_facts(snap, &evidence, &g.path, detail).is_some_and(|facts| {
                let op = write::move_process(pid, &g.path, threads);
                matches!(
                    preflight::check(&op, &facts, source.as_ref()),
                    Verdict::Refuse { .. }
                )
            })
        })
        .map(|g| g.path.clone())
        .collect()
}
