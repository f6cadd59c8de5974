//! The column chooser (F2, C): which figure columns the tree shows and
//! in what order, as htop's F2 setup does. Not a write: Enter applies the
//! marks to the view (and asks the collector for the files of the columns
//! now shown); `[`/`]` move the column under the cursor (htop's keys in
//! its setup); `s` applies and asks for the list to be saved as the
//! settings file's `columns` (an [`Effect::SaveColumns`]: the app does no
//! I/O). htop saves its setup on leaving it; here saving is asked for, so
//! a quick look at other columns does not change the next start.

use super::{list_step, Transition};
use crate::app::keymap::Action;
use crate::app::{App, Effect, Level, Mode};
use crate::render::columns::Column;
use crate::source::collector::Command;

/// The dialog's state: every column with its mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnsDialog {
    /// Every column in display order, and whether it is to be shown.
    pub items: Vec<(Column, bool)>,
    pub cursor: usize,
}

impl ColumnsDialog {
    /// Opens the chooser: the columns shown now, marked, in their order,
    /// then the others.
    pub fn open(app: &App) -> Transition {
        let items = app
            .columns
            .iter()
            .map(|c| (*c, true))
            .chain(
                Column::ALL
                    .into_iter()
                    .filter(|c| !app.columns.contains(c))
                    .map(|c| (c, false)),
            )
            .collect();
        Transition::Open(Mode::Columns(Self { items, cursor: 0 }))
    }

    /// The marked columns, in the list's order.
    pub fn chosen(&self) -> Vec<Column> {
        self.items
            .iter()
            .filter(|(_, on)| *on)
            .map(|(c, _)| *c)
            .collect()
    }

    pub fn key(
        &mut self,
        app: &mut App,
        action: Option<Action>,
        fx: &mut Vec<Effect>,
    ) -> Transition {
        if let Some(c) = list_step(self.cursor, self.items.len(), action) {
            self.cursor = c;
            return Transition::Stay;
        }
        match action {
            Some(Action::Cancel) => Transition::Close,
            Some(Action::Toggle) => {
                if let Some((_, on)) = self.items.get_mut(self.cursor) {
                    *on = !*on;
                }
                Transition::Stay
            }
            Some(a @ (Action::MoveItemUp | Action::MoveItemDown)) => {
                let to = if a == Action::MoveItemUp {
                    self.cursor.checked_sub(1)
                } else {
                    Some(self.cursor + 1).filter(|t| *t < self.items.len())
                };
                if let Some(to) = to {
                    self.items.swap(self.cursor, to);
                    self.cursor = to;
                }
                Transition::Stay
            }
            Some(Action::Accept) => {
                set_columns(app, &self.chosen(), fx);
                Transition::Close
            }
            Some(Action::Save) => {
                let Some(path) = app.config_file.clone() else {
                    app.set_status(
                        Level::Warn,
                        "not saved: no settings file (--no-config, or neither XDG_CONFIG_HOME nor HOME is set)",
                    );
                    return Transition::Stay;
                };
                let chosen = self.chosen();
                set_columns(app, &chosen, fx);
                fx.push(Effect::SaveColumns {
                    path,
                    columns: chosen,
                });
                Transition::Close
            }
            _ => Transition::Stay,
        }
    }
}

/// Shows `cols` (in display order): the collector is told when the extra
/// files to read change, and a sort by a column no longer shown goes back
/// to CPU (or the name).
pub fn set_columns(app: &mut App, cols: &[Column], fx: &mut Vec<Effect>) {
    let cols = Column::in_order(cols);
    let before = Column::extras(&app.columns);
    let after = Column::extras(&cols);
    if before != after {
        fx.push(Effect::Collector(Command::Extras(after)));
    }
    if cols.is_empty() {
        app.set_status(Level::Info, "no figure columns: only the names");
    }
    app.columns = cols;
    if app.sort.column().is_some_and(|c| !app.columns.contains(&c)) {
        let cpu = app.columns.contains(&Column::Cpu);
        app.sort = if cpu {
            crate::app::SortKey::Cpu
        } else {
            crate::app::SortKey::Name
        };
        app.sort_desc = cpu;
    }
    app.rebuild_rows();
}
