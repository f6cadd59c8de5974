//! The events screen (`!`): what the event watcher saw, newest first;
//! Enter selects an event's group in the tree (or says it is gone), `c`
//! clears the list. Opening it marks every event seen.

use super::{list_step, Transition};
use crate::app::keymap::Action;
use crate::app::{App, Effect, Level, Mode};
use crate::model::GroupPath;

/// Opens the screen on the newest event; every event is seen from now.
pub fn open(app: &mut App) -> Transition {
    app.events.mark_seen();
    Transition::Open(Mode::Events { cursor: 0 })
}

/// The event on row `row` of the screen (newest first).
pub fn event_at(app: &App, row: usize) -> Option<&crate::model::time::events::Event> {
    let i = app.events.len().checked_sub(row + 1)?;
    app.events.get(i)
}

/// Rows a page moves: the screen's height less its frame and header.
fn page(app: &App) -> usize {
    usize::from(app.size.1.saturating_sub(8)).max(1)
}

pub fn key(
    cursor: &mut usize,
    app: &mut App,
    action: Option<Action>,
    fx: &mut Vec<Effect>,
) -> Transition {
    let len = app.events.len();
    let last = len.saturating_sub(1);
    match action {
        Some(Action::Close) => return Transition::Close,
        Some(Action::Up | Action::Down) => *cursor = list_step(*cursor, len, action).unwrap_or(0),
        Some(Action::PageUp) => *cursor = cursor.saturating_sub(page(app)),
        Some(Action::PageDown) => *cursor = (*cursor + page(app)).min(last),
        Some(Action::Home) => *cursor = 0,
        Some(Action::End) => *cursor = last,
        Some(Action::ClearEvents) => {
            app.events.clear();
            app.event_marks.clear();
            *cursor = 0;
        }
        Some(Action::JumpToGroup) => {
            if let Some(path) = event_at(app, *cursor).map(|e| e.path.clone()) {
                return jump_to(app, &path, fx);
            }
        }
        _ => {}
    }
    Transition::Stay
}

/// Selects `path` in the tree, opening its ancestors and dropping a
/// filter that hides it; says so when the group is gone.
fn jump_to(app: &mut App, path: &GroupPath, fx: &mut Vec<Effect>) -> Transition {
    let there = app
        .data
        .as_ref()
        .is_some_and(|d| d.refresh.snapshot.find(path).is_some());
    if !there {
        app.set_status(
            Level::Warn,
            format!("{} is gone: removed since the event", path.display()),
        );
        return Transition::Stay;
    }
    for a in path.ancestors().skip(1) {
        app.collapsed.remove(&a);
    }
    let before = app.selected.clone();
    app.selected = Some(path.clone());
    app.vanished = None;
    app.rebuild_rows();
    let shown = app
        .data
        .as_ref()
        .is_some_and(|d| app.rows.iter().any(|r| d.tree.nodes[r.node].path == *path));
    if !shown {
        // the filter hides it: the operator asked for this group
        app.clear_filter();
        app.selected = Some(path.clone());
        app.rebuild_rows();
    }
    app.selection_changed(before.as_ref(), fx);
    app.set_status(Level::Info, format!("selected {}", path.display()));
    Transition::Close
}
