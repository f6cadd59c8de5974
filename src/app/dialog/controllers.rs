//! The controllers dialog (c): which controllers a group hands to its
//! children (cgroup.subtree_control). All changes go in one write.

use super::{confirm, inspected_detail, list_step, not_ready, writable, Transition};
use crate::app::keymap::{self, Action, Scope};
use crate::app::{App, Effect, Level, Mode};
use crate::model::write;
use crate::model::write::input::ControllerChange;
use crate::model::GroupPath;

/// One controller in the controllers dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtlItem {
    pub name: String,
    /// In the group's cgroup.controllers.
    pub offered: bool,
    /// In the group's cgroup.subtree_control now.
    pub enabled: bool,
    /// What the operator wants.
    pub want: bool,
}

/// The dialog's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllersDialog {
    pub group: GroupPath,
    pub items: Vec<CtlItem>,
    pub cursor: usize,
}

impl ControllersDialog {
    /// What Enter writes: each controller whose wanted state differs
    /// from its state now, in the dialog's order.
    pub fn changes(&self) -> Vec<ControllerChange> {
        self.items
            .iter()
            .filter(|i| i.want != i.enabled)
            .map(|i| {
                if i.want {
                    ControllerChange::enable(&i.name)
                } else {
                    ControllerChange::disable(&i.name)
                }
            })
            .collect()
    }

    /// Opens the dialog on the selected group.
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
        let offered = d.controllers.clone().unwrap_or_default();
        let enabled = d.subtree_control.clone().unwrap_or_default();
        let top = app
            .inspection
            .as_ref()
            .and_then(|f| f.top_controllers.clone())
            .unwrap_or_default();
        let mut items: Vec<CtlItem> = offered
            .iter()
            .map(|n| CtlItem {
                name: n.into(),
                offered: true,
                enabled: enabled.contains(n),
                want: enabled.contains(n),
            })
            .collect();
        for n in top.iter().filter(|n| !offered.contains(n)) {
            items.push(CtlItem {
                name: n.into(),
                offered: false,
                enabled: false,
                want: false,
            });
        }
        if items.is_empty() {
            app.set_status(Level::Warn, format!("{group} is offered no controllers (cgroup.controllers is empty) and the hierarchy has none"));
            return Transition::Stay;
        }
        Transition::Open(Mode::Controllers(Self {
            group,
            items,
            cursor: 0,
        }))
    }

    /// The plan to enable the controller under the cursor along the
    /// path, asked for by the operator: pre-flight finds the level it can
    /// be enabled from, then the whole plan is judged before it is asked
    /// (`confirm::along_path`).
    fn plan(&self, app: &mut App) -> Transition {
        let Some(item) = self.items.get(self.cursor) else {
            return Transition::Stay;
        };
        if item.offered {
            app.set_status(
                Level::Info,
                format!(
                    "{}: offered to {} already: Space marks it",
                    item.name, self.group
                ),
            );
            return Transition::Stay;
        }
        let op = write::set_subtree_control(&self.group, &[ControllerChange::enable(&item.name)]);
        if let Some(ops) = confirm::plan_along_path(app, &op) {
            return Transition::Open(confirm::along_path(app, ops));
        }
        app.set_status(
            Level::Warn,
            format!(
                "{}: no plan: an ancestor's cgroup.controllers was not read, or the \
                 hierarchy does not have it",
                item.name
            ),
        );
        Transition::Stay
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
            // a controller the parent does not hand down cannot be
            // marked: writing it here is ENOENT (top-down rule, admin
            // guide 2-4-2); the plan along the path is asked for apart
            Some(Action::Toggle) => {
                match self.items.get_mut(self.cursor) {
                    Some(i) if !i.offered => {
                        let text = format!("{}: {NOT_AVAILABLE}; {}", i.name, plan_words());
                        app.set_status(Level::Warn, text);
                    }
                    Some(i) => i.want = !i.want,
                    None => {}
                }
                Transition::Stay
            }
            Some(Action::PlanAlongPath) => self.plan(app),
            Some(Action::Accept) => {
                let changes = self.changes();
                if changes.is_empty() {
                    app.set_status(Level::Info, "nothing changed");
                    return Transition::Close;
                }
                confirm::request(
                    app,
                    vec![write::set_subtree_control(&self.group, &changes)],
                    fx,
                )
            }
            _ => Transition::Stay,
        }
    }
}

/// How the dialog says a controller the parent does not hand down.
pub const NOT_AVAILABLE: &str = "not available here: the parent does not enable it";

/// How to ask for the plan along the path: the key(s) of the keymap.
pub fn plan_words() -> String {
    format!(
        "{}: the plan to enable it along the path",
        keymap::keys_text(Scope::Controllers, Action::PlanAlongPath)
    )
}
