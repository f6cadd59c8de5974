//! The action log (L): every write of the session, scrolled; `e` writes
//! the session's writes as a shell script and its undo beside the log
//! file (`model::files::script`, written by the writer thread, which owns the
//! log: `WriteRequest::ExportScript`).
//!
//! The session's writes, not the whole log file: the key is for "what I
//! just tuned here"; older sessions (and other operators' runs) are
//! `cgtop export-log --since`'s.

use super::{list_step, Transition};
use crate::app::keymap::Action;
use crate::app::writes::WriteRequest;
use crate::app::{App, Effect, Level, Mode};
use crate::model::tree::text::escape;
use crate::source::actionlog::entries_of;
use std::path::PathBuf;

/// Opens the log on its newest entry.
pub fn open(app: &App) -> Transition {
    Transition::Open(Mode::Log {
        scroll: app.log.len().saturating_sub(1),
    })
}

pub fn key(
    scroll: &mut usize,
    app: &mut App,
    action: Option<Action>,
    fx: &mut Vec<Effect>,
) -> Transition {
    match action {
        Some(Action::Close) => return Transition::Close,
        Some(Action::Up | Action::Down) => {
            *scroll = list_step(*scroll, app.log.len(), action).unwrap_or(0);
        }
        Some(Action::ExportScript) => export(app, fx),
        _ => {}
    }
    Transition::Stay
}

/// The session's writes as the log has them, to the writer thread.
fn export(app: &mut App, fx: &mut Vec<Effect>) {
    let entries = entries_of(
        app.log.iter().map(|e| (e.unix_secs, &e.outcome)),
        &app.layout,
    );
    if entries.is_empty() {
        app.set_status(Level::Info, "no write in this session: no script to write");
        return;
    }
    app.set_status(
        Level::Info,
        format!("writing the script of {} write(s)...", entries.len()),
    );
    fx.push(Effect::Write(WriteRequest::ExportScript(entries)));
}

/// Says where the script went, or why it did not.
pub fn script_written(app: &mut App, r: Result<(PathBuf, PathBuf), String>) {
    let shown = |p: &PathBuf| escape(p.as_os_str().as_encoded_bytes()).into_owned();
    match r {
        Ok((apply, undo)) => app.set_status(
            Level::Info,
            format!("script: {} (undo: {})", shown(&apply), shown(&undo)),
        ),
        Err(e) => app.set_status(Level::Error, format!("script not written: {e}")),
    }
}
