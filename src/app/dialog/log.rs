//! The action log (L): every write of the session, scrolled.

use super::Transition;
use crate::app::keymap::Action;
use crate::app::{App, Mode};

/// Opens the log on its newest entry.
pub fn open(app: &App) -> Transition {
    Transition::Open(Mode::Log {
        scroll: app.log.len().saturating_sub(1),
    })
}

pub fn key(scroll: &mut usize, app: &App, action: Option<Action>) -> Transition {
    match action {
        Some(Action::Close) => return Transition::Close,
        Some(Action::Up) => *scroll = scroll.saturating_sub(1),
        Some(Action::Down) => *scroll = (*scroll + 1).min(app.log.len().saturating_sub(1)),
        _ => {}
    }
    Transition::Stay
}
