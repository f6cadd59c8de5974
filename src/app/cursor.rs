//! The rows and the cursor: rebuilding the rows, keeping the cursor on
//! the selected group, scrolling, sorting, the search, the filter, and
//! asking for the selected group's detail.

use super::keymap::{Action, Scope};
use super::state::LabelWidths;
use super::{keymap, past};
use super::{App, Effect, Level, Mode, SortKey, Status, Vanished, Zoom, RETURN_WITHIN};
use crate::model::identity::Identity;
use crate::model::tree::{group_matches, RowOptions};
use crate::model::GroupPath;
use crate::model::GroupSample;
use crate::render::columns;
use crate::render::fit;
use crate::render::identity::label_of;
use crate::render::order::Order;
use crate::source::collector::Command;
use std::sync::Arc;

/// The width of `g`'s identity label (`None`: it has none and shows its
/// kernel name), from `cache` while its identity is the same one: a label
/// costs about 0.7 µs to make (10,000 rows: 7 ms a rebuild, most of what
/// building the tree and its rows costs), a look-up a tenth of that.
fn label_width(cache: &mut LabelWidths, g: &GroupSample) -> Option<usize> {
    let same = |a: &Option<Arc<Identity>>| match (a, &g.identity) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    if let Some((who, w)) = cache.get(&g.path) {
        if same(who) {
            return *w;
        }
    }
    let w = label_of(g).map(|l| l.width());
    cache.insert(g.path.clone(), (g.identity.clone(), w));
    w
}

impl App {
    /// Rebuilds the visible rows and puts the cursor back on the selected
    /// group (or its nearest surviving ancestor, with a message).
    pub(super) fn rebuild_rows(&mut self) {
        let Some(d) = &self.data else {
            self.rows.clear();
            return;
        };
        let order = Order {
            by: self.sort.by(),
            descending: self.sort_desc,
            flat: self.flat,
            identities: self.identities,
        };
        let filter = (!self.filter.is_empty()).then_some(self.filter.as_str());
        self.rows = order.rows(
            &d.tree,
            &d.refresh.snapshot.groups,
            &d.refresh.rates,
            &RowOptions {
                collapsed: Some(&self.collapsed),
                filter,
                filter_folds: Some(&self.filter_folds),
                samples: Some(&d.refresh.snapshot.groups),
                unlisted: Some(self.first_screen.unlisted()).filter(|u| !u.is_empty()),
            },
        );
        self.name_width = self.name_width_of_rows();
        self.place_cursor();
    }

    /// The widest name cell of the rows, guides included: the view sizes
    /// the name column to it rather than to the screen.
    pub(super) fn name_width_of_rows(&mut self) -> usize {
        let Some(d) = &self.data else { return 0 };
        let groups = &d.refresh.snapshot.groups;
        let cache = &mut self.label_widths;
        if cache.len() > 2 * groups.len() + 1024 {
            // groups came and went: forget the gone
            cache.clear();
        }
        self.rows
            .iter()
            .map(|r| {
                let node = &d.tree.nodes[r.node];
                let label = groups
                    .get(node.sample)
                    .filter(|_| self.identities)
                    .and_then(|g| label_width(cache, g));
                let name =
                    label.unwrap_or_else(|| fit::width(&columns::name_label(&node.path, r.depth)));
                columns::guides_width(r.guides.len(), r.depth) + name
            })
            .max()
            .unwrap_or(0)
    }

    /// Finds the selected group among the rows; if it is gone, selects its
    /// nearest ancestor that is still shown and says so.
    pub(super) fn place_cursor(&mut self) {
        let Some(d) = &self.data else { return };
        let find = |p: &GroupPath| {
            self.rows
                .iter()
                .position(|r| &d.tree.nodes[r.node].path == p)
        };
        if let Some(sel) = self.selected.clone() {
            if let Some(i) = find(&sel) {
                self.cursor = i;
            } else if let Some((i, anc)) = sel
                .ancestors()
                .skip(1)
                .find_map(|a| find(&a).map(|i| (i, a)))
            {
                // a group hidden by a collapse or filter is not "gone"
                let still_there = d.refresh.snapshot.find(&sel).is_some();
                self.cursor = i;
                if !still_there && self.past.is_some() {
                    // not there at the past moment shown: the cursor
                    // stands on the ancestor, the selection keeps its path
                    // (and goes back to it where it is)
                    self.fix_scroll();
                    return;
                }
                if !still_there {
                    // names, not paths: the message must fit one status
                    // line, and the survivor is under the cursor anyway
                    let whom = if sel.parent().as_ref() == Some(&anc) {
                        "its parent"
                    } else {
                        "its nearest ancestor"
                    };
                    self.status = Some(Status {
                        level: Level::Warn,
                        text: format!(
                            "{} is gone; selected {whom} {}",
                            sel.name_display(),
                            anc.name_display()
                        ),
                    });
                    // wait for it to come back; the group first waited
                    // for stays the one wanted when its ancestor goes too
                    let path = match self.vanished.take() {
                        Some(v) if v.moved_to == sel => v.path,
                        _ => sel,
                    };
                    self.vanished = Some(Vanished {
                        path,
                        moved_to: anc.clone(),
                        refreshes_left: RETURN_WITHIN,
                    });
                    self.selected = Some(anc);
                }
            } else {
                self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
            }
        }
        self.sync_selected();
    }

    /// After the cursor moved: remember the group under it.
    pub(super) fn sync_selected(&mut self) {
        if let Some(d) = &self.data {
            if let Some(r) = self.rows.get(self.cursor) {
                self.selected = Some(d.tree.nodes[r.node].path.clone());
            }
        }
        self.fix_scroll();
    }

    /// The tree's rows for the current zoom; the cursor stays in view.
    pub(super) fn set_tree_height(&mut self) {
        self.tree_height = match self.zoom {
            Zoom::Tree => self.tree_rows.whole,
            Zoom::Split | Zoom::Detail => self.tree_rows.split,
        };
        self.fix_scroll();
    }

    pub(super) fn fix_scroll(&mut self) {
        let h = self.tree_height.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        let max_scroll = self.rows.len().saturating_sub(h);
        self.scroll = self.scroll.min(max_scroll);
    }

    /// With a filter: puts the cursor on the first match in display order.
    /// When the text matches nothing, the selection goes back to the group
    /// selected when the filter opened: each letter typed went to the
    /// first match of the text so far, and a group named like the start of
    /// it must not keep the selection for Esc to show and K to act on.
    pub(super) fn select_first_match(&mut self) {
        if let Some(i) = self.rows.iter().position(|r| r.matched) {
            self.cursor = i;
            self.sync_selected();
        } else if !self.filter.is_empty() {
            if let Some(from) = &self.filter_from {
                self.selected = Some(from.clone());
            }
        }
    }

    /// Sorts by `key` (a figure: highest first; the name: A to Z) and
    /// says so.
    pub(crate) fn sort_by(&mut self, key: SortKey) {
        self.sort = key;
        self.sort_desc = key != SortKey::Name;
        self.rebuild_rows();
        let order = if self.sort_desc {
            "highest first"
        } else {
            "A to Z"
        };
        self.set_status(
            Level::Info,
            format!(
                "sorted by {}, {order} ({} reverses)",
                key.title(),
                keymap::keys_text(Scope::Main, Action::SortReverse)
            ),
        );
    }

    /// The search (F3): the cursor goes to the first row from the cursor
    /// (`next`: after it) whose name matches as the filter's does,
    /// wrapping; the rows are not changed. Says in the mode when nothing
    /// matches.
    pub(super) fn search(&mut self, next: bool) {
        let needle = self.search.as_str().to_lowercase();
        let Some(d) = &self.data else { return };
        let groups = &d.refresh.snapshot.groups;
        // the name, or the identity (a container's name, image, id prefix)
        let matches = |node: usize| {
            groups
                .get(d.tree.nodes[node].sample)
                .is_some_and(|g| group_matches(g, &needle))
        };
        let n = self.rows.len();
        let hit = if needle.is_empty() || n == 0 {
            None
        } else {
            let from = self.cursor + usize::from(next);
            (0..n)
                .map(|k| (from + k) % n)
                .find(|&i| matches(self.rows[i].node))
        };
        // a match in a folded branch is not on screen to go to
        let folded = hit.is_none() && !needle.is_empty() && (0..d.tree.len()).any(matches);
        // the whole text matches nothing: the cursor goes back where the
        // search started (each letter typed went to the first match of
        // the text so far: a group named like the start of it must not
        // keep the cursor, for Enter to stay on and K to act on)
        let back = match (hit, &self.search_from) {
            (None, Some(start)) if !needle.is_empty() => self
                .rows
                .iter()
                .position(|r| &d.tree.nodes[r.node].path == start),
            _ => None,
        };
        let miss = match hit.or(back) {
            None if needle.is_empty() => None,
            to => {
                if let Some(i) = to {
                    self.cursor = i;
                    self.sync_selected();
                }
                match hit {
                    Some(_) => None,
                    None if folded => Some("no match among the rows shown; * opens every branch"),
                    None => Some("no match"),
                }
            }
        };
        self.mode = Mode::Search { miss };
    }

    /// After the selection may have changed from `before`: drop the old
    /// group's detail and ask for the new one's.
    pub(super) fn selection_changed(&mut self, before: Option<&GroupPath>, fx: &mut Vec<Effect>) {
        if self.selected.as_ref() != before {
            // the operator chose another group: a vanished one is no
            // longer waited for
            self.vanished = None;
            self.inspection = None;
            self.proc_cursor = 0;
            fx.push(self.inspect_effect());
            // the past's detail is the kept read of that moment, if any
            past::show_inspection(self);
        }
    }

    /// Forgets the filter and the folds changed under it.
    pub(super) fn clear_filter(&mut self) {
        self.filter.clear();
        self.filter_folds.clear();
    }

    pub(super) fn inspect_effect(&self) -> Effect {
        Effect::Collector(Command::Inspect(self.selected.clone()))
    }

    /// Moves the cursor and, if the group changed, asks for its detail.
    pub(super) fn move_cursor(&mut self, to: usize, fx: &mut Vec<Effect>) {
        if self.rows.is_empty() {
            return;
        }
        let before = self.selected.clone();
        self.cursor = to.min(self.rows.len() - 1);
        self.sync_selected();
        self.selection_changed(before.as_ref(), fx);
    }

    pub(super) fn subtree_branches(&self, node: usize) -> Vec<GroupPath> {
        let Some(d) = &self.data else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let nd = &d.tree.nodes[n];
            if !nd.children.is_empty() {
                out.push(nd.path.clone());
            }
            stack.extend(nd.children.iter().copied());
        }
        out
    }

    pub(super) fn processes_len(&self) -> usize {
        self.inspection.as_ref().map_or(0, |f| f.processes.len())
    }
}
