//! The move picker (m, in the process list): the selected process (or
//! one thread) into a group chosen by typing part of its path.

use super::{confirm, type_into, writable, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::{App, Effect, Level, Mode, Pane};
use crate::model::write;
use crate::model::GroupPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovePicker {
    pub pid: u32,
    pub what: String,
    pub filter: TextInput,
    pub matches: Vec<GroupPath>,
    pub cursor: usize,
    /// Write to cgroup.threads (one thread) instead of cgroup.procs.
    pub threads: bool,
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
        };
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
            Some(Action::Up) => self.cursor = self.cursor.saturating_sub(1),
            Some(Action::Down) => {
                self.cursor = (self.cursor + 1).min(self.matches.len().saturating_sub(1));
            }
            Some(Action::ToggleThreads) => self.threads = !self.threads,
            Some(Action::Accept) => {
                if let Some(target) = self.matches.get(self.cursor).cloned() {
                    return confirm::request(
                        app,
                        vec![write::move_process(self.pid, &target, self.threads)],
                        fx,
                    );
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
                    .filter(|g| g.path.to_string().to_lowercase().contains(&needle))
                    .map(|g| g.path.clone())
                    .collect()
            })
            .unwrap_or_default();
        self.cursor = self.cursor.min(self.matches.len().saturating_sub(1));
    }
}
