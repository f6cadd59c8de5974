//! When the first screen's fold rule (`model::tree::first_folds`) is
//! applied, and what it may never do.
//!
//! Before them, on a large tree, the first look (`Collected::Partial`: the
//! groups the first screen shows, read alone) may be on screen: its groups
//! whose children are not listed yet show folded until the first refresh.
//!
//! Twice: on the first refresh shown (no rates yet: every large subtree
//! folds whole, so the top level shows at once), and on the next (the
//! first rates, about a refresh later: the way to each large subtree's
//! busiest groups opens). Then never again: from there the folds are the
//! operator's alone, and a large subtree made later shows open.
//!
//! It never folds an ancestor of the selected group (the selection never
//! moves because of it), never changes the fold of a group the operator
//! folded or opened meanwhile, and opens only what it folded itself. `*`
//! (fold or open everything) before the second pass ends it at once.

use super::App;
use crate::model::tree::first_folds::first_folds;
use crate::model::GroupPath;
use std::collections::HashSet;

/// Where the rule stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Stage {
    /// No refresh shown yet.
    #[default]
    First,
    /// The first refresh was folded; the first rates are awaited.
    Rates,
    /// Done: the folds are the operator's.
    Settled,
}

/// The rule's state on [`App`].
#[derive(Debug, Clone, Default)]
pub struct FirstScreen {
    stage: Stage,
    /// Groups whose fold the operator set before the rule settled.
    touched: HashSet<GroupPath>,
    /// Groups the rule folded (its second pass may open them again).
    folded: HashSet<GroupPath>,
    /// While the first look is on screen (before the first refresh): its
    /// groups whose children are not listed yet, shown folded.
    unlisted: HashSet<GroupPath>,
    /// The screen shows the first look, not a refresh yet.
    partial: bool,
}

impl FirstScreen {
    /// The operator folded or opened `path`: the rule leaves it alone.
    pub(crate) fn touched(&mut self, path: &GroupPath) {
        if self.stage != Stage::Settled {
            self.touched.insert(path.clone());
        }
    }

    /// The operator took every fold in hand (`*`): the rule is over.
    pub(crate) fn settle(&mut self) {
        *self = Self {
            stage: Stage::Settled,
            ..Self::default()
        };
    }

    /// Whether the rule is done with.
    pub fn settled(&self) -> bool {
        self.stage == Stage::Settled
    }

    /// Whether the screen shows the first look (no refresh yet).
    pub fn partial(&self) -> bool {
        self.partial
    }

    /// The first look's groups whose children are not listed yet (empty
    /// once a refresh is shown).
    pub fn unlisted(&self) -> &HashSet<GroupPath> {
        &self.unlisted
    }
}

/// The first look went on screen (`Collected::Partial`): its groups whose
/// children are not listed show folded, without being folded: the rule's
/// first pass, on the first refresh, folds what it folds (the large
/// subtrees, the same as here by their cgroup.stat) and leaves open the
/// rest, and a fold the operator changed meanwhile stays theirs.
pub(crate) fn show_partial(app: &mut App, unlisted: Vec<GroupPath>) {
    let rule = &mut app.first_screen;
    if rule.stage != Stage::First {
        return;
    }
    rule.unlisted = unlisted.into_iter().collect();
    rule.partial = true;
}

/// Applies the rule to the refresh just put in `app.data`, before its
/// rows are built: a pass while the rule is not settled, which settles
/// it once the refresh has rates (or is the second one shown).
pub(crate) fn apply(app: &mut App) {
    let Some(d) = &app.data else { return };
    let rows = app.tree_height;
    let rule = &mut app.first_screen;
    // a refresh: every group's children are listed
    rule.unlisted.clear();
    rule.partial = false;
    if rule.stage == Stage::Settled {
        return;
    }
    let tree = &d.tree;
    let rates = &d.refresh.rates;
    let cpu = |node: usize| rates.get(tree.nodes[node].sample)?.cpu_pct;
    let fold = first_folds(tree, rows, cpu);
    // the selection's ancestors stay open: the rule never moves it
    let keep: HashSet<GroupPath> = app
        .selected
        .iter()
        .flat_map(|s| s.ancestors().skip(1))
        .collect();
    for (node, f) in tree.nodes.iter().zip(&fold) {
        if rule.touched.contains(&node.path) {
            continue;
        }
        if *f && !keep.contains(&node.path) {
            if app.collapsed.insert(node.path.clone()) {
                rule.folded.insert(node.path.clone());
            }
        } else if !*f && rule.folded.remove(&node.path) {
            app.collapsed.remove(&node.path);
        }
    }
    let has_rates = rates.iter().any(|r| r.cpu_pct.is_some());
    if has_rates || rule.stage == Stage::Rates {
        rule.settle();
    } else {
        rule.stage = Stage::Rates;
    }
}
