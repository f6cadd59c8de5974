//! The leaf fix, offered when enabling a controller failed with EBUSY
//! (the no-internal-process rule): create a leaf child, move the group's
//! processes into it, then enable.

use super::{type_into, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::writes::WriteRequest;
use crate::app::{App, Effect};
use crate::model::write::input::{self, ControllerChange};
use crate::model::GroupPath;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafFixDialog {
    pub group: GroupPath,
    pub leaf: TextInput,
    pub changes: Vec<ControllerChange>,
    pub nr_procs: usize,
    /// The leaf name as it will be used, or why it cannot be: checked on
    /// every key like a new group's name (".." would be the parent).
    pub check: Result<String, String>,
}

impl LeafFixDialog {
    /// The offer, with "leaf" as the name to start from.
    pub fn offer(group: GroupPath, changes: Vec<ControllerChange>, nr_procs: usize) -> Self {
        let mut l = Self {
            group,
            leaf: TextInput::with_text(TextInput::NAME, "leaf"),
            changes,
            nr_procs,
            check: Err(String::new()),
        };
        l.recheck();
        l
    }

    fn recheck(&mut self) {
        // an existing child is fine: the writer moves the processes into it
        self.check = input::parse_group_name(self.leaf.as_str(), &[]).map_err(|e| e.to_string());
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
            // offered after `T` was pressed: nothing goes out in the past
            Some(Action::Accept) if !super::writable(app) => return Transition::Stay,
            Some(Action::Accept) => {
                // the writer makes group/leaf and moves every process there:
                // "." or ".." would be the group itself or its parent
                if let Ok(leaf) = &self.check {
                    fx.push(Effect::Write(WriteRequest::LeafFix {
                        group: self.group.clone(),
                        leaf: leaf.clone(),
                        changes: self.changes.clone(),
                    }));
                    return Transition::Close;
                }
            }
            _ => {
                type_into(app, &mut self.leaf, ev);
            }
        }
        self.recheck();
        Transition::Stay
    }
}
