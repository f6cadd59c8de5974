//! The sort-by menu (F6, as htop's): the name and the figure columns
//! shown, one to choose. The column chooser's list (`list_step`, its
//! rows and popup in the view); not a write.

use super::{list_step, Transition};
use crate::app::keymap::Action;
use crate::app::{App, Mode, SortKey};
use crate::render::columns::Column;

/// The menu's state: what can be sorted by, in the tree's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortByDialog {
    pub items: Vec<SortKey>,
    pub cursor: usize,
}

impl SortByDialog {
    /// Opens the menu on the sort in force.
    pub fn open(app: &App) -> Transition {
        let items: Vec<SortKey> = std::iter::once(SortKey::Name)
            .chain(Column::in_order(&app.columns).into_iter().map(SortKey::of))
            .collect();
        let cursor = items.iter().position(|k| *k == app.sort).unwrap_or(0);
        Transition::Open(Mode::SortBy(Self { items, cursor }))
    }

    pub fn key(&mut self, app: &mut App, action: Option<Action>) -> Transition {
        if let Some(c) = list_step(self.cursor, self.items.len(), action) {
            self.cursor = c;
            return Transition::Stay;
        }
        match action {
            Some(Action::Cancel) => Transition::Close,
            Some(Action::Accept) => {
                if let Some(k) = self.items.get(self.cursor) {
                    app.sort_by(*k);
                }
                Transition::Close
            }
            _ => Transition::Stay,
        }
    }
}
