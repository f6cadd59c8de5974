//! The raw editor (E): one line written to any other writable interface
//! file of the group. First a file is chosen, then the line typed.

use super::{confirm, inspected_detail, list_step, not_ready, type_into, writable, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::{App, Effect, Level, Mode};
use crate::cgroupfs::files;
use crate::cgroupfs::v1_limits::files as v1_files;
use crate::model::host::layout::{HierId, Layout};
use crate::model::write::input;
use crate::model::write::{self, Op};
use crate::model::GroupPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEditor {
    pub group: GroupPath,
    /// Writable files with their current text (first line).
    pub files: Vec<(String, String)>,
    pub cursor: usize,
    /// The line being typed, once a file was chosen.
    pub input: Option<TextInput>,
}

impl RawEditor {
    /// Opens the editor on the selected group.
    pub fn open(app: &mut App) -> Transition {
        if !writable(app) {
            return Transition::Stay;
        }
        let Some(group) = not_ready(app) else {
            return Transition::Stay;
        };
        let Some(d) = inspected_detail(app) else {
            return Transition::Stay;
        };
        let files: Vec<(String, String)> = d
            .writable
            .iter()
            .filter(|n| n.as_str() != files::KILL)
            .map(|n| {
                let cur = d
                    .raw
                    .iter()
                    .find(|(r, _)| r == n)
                    .and_then(|(_, v)| v.as_ref().ok())
                    .map(|t| t.replace('\n', " | "))
                    .unwrap_or_default();
                (n.clone(), cur)
            })
            .collect();
        if files.is_empty() {
            app.set_status(
                Level::Warn,
                format!("{group} has no writable files for you"),
            );
            return Transition::Stay;
        }
        Transition::Open(Mode::Raw(Self {
            group,
            files,
            cursor: 0,
            input: None,
        }))
    }

    pub fn key(
        &mut self,
        app: &mut App,
        action: Option<Action>,
        ev: Input<'_>,
        fx: &mut Vec<Effect>,
    ) -> Transition {
        let Some(line) = &mut self.input else {
            // choosing the file
            match action {
                Some(Action::Cancel) => return Transition::Close,
                Some(Action::Up | Action::Down) => {
                    self.cursor = list_step(self.cursor, self.files.len(), action).unwrap_or(0);
                }
                Some(Action::Accept) => self.input = Some(TextInput::new(TextInput::LINE)),
                _ => {}
            }
            return Transition::Stay;
        };
        match action {
            // back to the list of files
            Some(Action::Cancel) => self.input = None,
            Some(Action::Accept) => {
                let text = line.as_str().trim().to_owned();
                if text.is_empty() {
                    app.set_status(Level::Error, "type the line to write");
                    return Transition::Stay;
                }
                let name = &self.files[self.cursor].0;
                let (h, file) = hier_of(&app.layout, name);
                let op = raw_op(&self.group, h, file, &text);
                return match confirm::request(app, vec![op], fx) {
                    Transition::Stay => Transition::Close,
                    t => t,
                };
            }
            _ => {
                type_into(app, line, ev);
            }
        }
        Transition::Stay
    }
}

/// The hierarchy and file of a name in the editor's list: a v1
/// hierarchy's files are listed as the raw page names them,
/// `label:file` (`memory:memory.swappiness`); the others are the
/// primary hierarchy's.
fn hier_of<'a>(layout: &Layout, name: &'a str) -> (HierId, &'a str) {
    let primary = layout.primary().unwrap_or(HierId::V2);
    let Some((label, file)) = name.split_once(':') else {
        return (primary, name);
    };
    match layout.v1.iter().position(|m| m.label() == label) {
        Some(i) => (HierId::V1(i), file),
        None => (primary, name),
    }
}

/// A line typed in the raw editor as an op. The files that have a typed
/// op get it, so that they keep its guards and its undo: a raw "1" to
/// cgroup.freeze still needs a protected group's name typed, and a raw
/// subtree_control change is undone with +/- (its old text, "cpu io",
/// is not something the kernel accepts back). Anything else is written
/// as typed.
fn raw_op(group: &GroupPath, h: HierId, file: &str, line: &str) -> Op {
    if let HierId::V1(_) = h {
        // a v1 hierarchy: a move keeps its guard and its undo (the group
        // the process left, in that hierarchy); freezer.state's guard
        // reads the raw text (`WriteOp::effect`)
        return match file {
            files::PROCS | v1_files::TASKS => match input::parse_pid(line) {
                Ok(pid) => write::move_process_in(pid, group, file == v1_files::TASKS, h),
                Err(_) => write::raw(group, file, line).on(h),
            },
            _ => write::raw(group, file, line).on(h),
        };
    }
    match file {
        files::FREEZE if matches!(line, "0" | "1") => write::freeze(group, line == "1"),
        files::SUBTREE_CONTROL => match input::parse_controller_changes(line) {
            Ok(changes) => write::set_subtree_control(group, &changes),
            Err(_) => write::raw(group, file, line),
        },
        files::PROCS | files::THREADS => match input::parse_pid(line) {
            Ok(pid) => write::move_process(pid, group, file == files::THREADS),
            Err(_) => write::raw(group, file, line),
        },
        _ => write::raw(group, file, line),
    }
}
