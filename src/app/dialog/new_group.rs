//! The new group prompt (n): a child of the selected group, its name
//! checked on every key (one component, not an interface file's prefix,
//! not taken).

use super::{confirm, inspected_detail, type_into, writable, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::{App, Effect, Mode};
use crate::model::host::layout::HierId;
use crate::model::write;
use crate::model::write::input;
use crate::model::GroupPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePrompt {
    pub parent: GroupPath,
    pub input: TextInput,
    pub check: Result<String, String>,
    /// The hierarchies the new group is made in (those that held the
    /// parent), each with the inode of the parent's directory there when
    /// the prompt opened ([`confirm::shown_inode`]): the mkdir is held to
    /// the parent the operator chose, not to one made again under its
    /// name while the name was typed.
    pub held: Vec<(HierId, Option<u64>)>,
}

impl NamePrompt {
    /// Opens the prompt for a child of the selected group.
    pub fn open(app: &mut App) -> Transition {
        if !writable(app) {
            return Transition::Stay;
        }
        let Some(parent) = app.selected.clone() else {
            return Transition::Stay;
        };
        // in every hierarchy that holds the parent, so that each
        // controller can take the group (systemd's units are at the same
        // path in each); the confirmation lists them
        let hs = if app.layout.v1.is_empty() {
            vec![HierId::V2]
        } else {
            super::direct::holding(app, &parent)
        };
        let held = hs
            .into_iter()
            .map(|h| (h, confirm::shown_inode(app, &parent, h)))
            .collect();
        let mut p = Self {
            parent,
            input: TextInput::new(TextInput::NAME),
            check: Err(String::new()),
            held,
        };
        p.check_name(app);
        Transition::Open(Mode::NewGroup(p))
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
            Some(Action::Accept) => {
                // the check refused every name that is not one component
                if let Ok(Ok(path)) = self.check.as_ref().map(|name| self.parent.join(name)) {
                    let hs: Vec<HierId> = self.held.iter().map(|&(h, _)| h).collect();
                    let ops = write::create_group_in(&path, &hs)
                        .into_iter()
                        .zip(&self.held)
                        .map(|(op, &(_, ino))| op.of_group(ino))
                        .collect();
                    return confirm::request(app, ops, fx);
                }
            }
            _ => {
                type_into(app, &mut self.input, ev);
            }
        }
        self.check_name(app);
        Transition::Stay
    }

    fn check_name(&mut self, app: &App) {
        let existing = siblings(app, &self.parent);
        let refs: Vec<&str> = existing.iter().map(String::as_str).collect();
        self.check = input::parse_group_name(self.input.as_str(), &refs).map_err(|e| e.to_string());
    }
}

fn siblings(app: &App, parent: &GroupPath) -> Vec<String> {
    let Some(d) = &app.data else {
        return Vec::new();
    };
    let Some(n) = d.tree.get(parent) else {
        return Vec::new();
    };
    let mut names: Vec<String> = d.tree.nodes[n]
        .children
        .iter()
        // a typed name is text: only a name that is text can equal it
        .filter_map(|&c| std::str::from_utf8(d.tree.nodes[c].path.name()).ok())
        .map(str::to_owned)
        .collect();
    // interface files are names too
    if let Some(dd) = inspected_detail(app) {
        names.extend(dd.raw.iter().map(|(n, _)| n.clone()));
    }
    names
}
