//! The action log (L): every write of the session, scrolled.

use super::{list_step, Transition};
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
        Some(Action::Up | Action::Down) => {
            *scroll = list_step(*scroll, app.log.len(), action).unwrap_or(0);
        }
        _ => {}
    }
    Transition::Stay
}
