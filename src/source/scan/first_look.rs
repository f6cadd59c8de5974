//! A first look: a walk that lists the children of the groups the first
//! screen shows open, and no others, so that the TUI's first frame reads
//! the few groups it shows instead of every group of the host.
//!
//! The first screen's fold rule (`model::tree::first_folds`, before any
//! rate) folds every subtree of more than `LARGE` groups below its top;
//! cgroup2's `cgroup.stat` counts a subtree's groups (`nr_descendants`)
//! without walking it. So the primary hierarchy (cgroup2) opens the start
//! group and each group of at most that many descendants
//! ([`FirstLook::by_size`]); a v1 hierarchy, which has no cgroup.stat,
//! opens the groups the primary's walk opened ([`FirstLook::following`]),
//! so that the merge sees the same groups in each.

use super::changes::read_descendants;
use crate::cgroupfs::files;
use crate::model::GroupPath;
use crate::source::hier::Hier;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Rule {
    /// The start group, and each group whose cgroup.stat counts at most
    /// `descendants` below it, while fewer than `groups` are listed.
    BySize { descendants: u64, groups: usize },
    /// These groups (paths below the start group).
    Following(Arc<HashSet<GroupPath>>),
}

/// Which groups a walk lists the children of, and what it did
/// (`Scanner::set_first_look`).
#[derive(Debug, Clone)]
pub struct FirstLook {
    rule: Rule,
    /// The groups whose children were listed.
    opened: HashSet<GroupPath>,
    /// The groups with children that were not listed.
    closed: Vec<GroupPath>,
}

impl FirstLook {
    /// Opens the start group and each group of at most `descendants`
    /// descendants (by its cgroup.stat; a group without one stays closed),
    /// until `groups` groups are listed.
    pub fn by_size(descendants: u64, groups: usize) -> Self {
        Self::of(Rule::BySize {
            descendants,
            groups,
        })
    }

    /// Opens what another hierarchy's first look opened.
    pub fn following(opened: Arc<HashSet<GroupPath>>) -> Self {
        Self::of(Rule::Following(opened))
    }

    fn of(rule: Rule) -> Self {
        Self {
            rule,
            opened: HashSet::new(),
            closed: Vec::new(),
        }
    }

    /// The groups whose children were listed (below the start group).
    pub fn opened(&self) -> &HashSet<GroupPath> {
        &self.opened
    }

    /// The groups with children that were not listed (below the start
    /// group).
    pub fn closed(&self) -> &[GroupPath] {
        &self.closed
    }

    /// Whether the walk lists the children of `path` (in directory `dir`,
    /// `depth` below the start group; `listed` groups listed or queued so
    /// far), which has some.
    pub(super) fn opens(
        &mut self,
        hier: &Hier,
        path: &GroupPath,
        dir: &Path,
        depth: usize,
        listed: usize,
    ) -> bool {
        let open = match &self.rule {
            Rule::BySize {
                descendants,
                groups,
            } => {
                depth == 0
                    || (listed < *groups
                        && read_descendants(hier, &dir.join(files::STAT), &mut [0u8; 512])
                            .is_some_and(|n| n <= *descendants))
            }
            Rule::Following(set) => set.contains(path),
        };
        if open {
            self.opened.insert(path.clone());
        } else {
            self.closed.push(path.clone());
        }
        open
    }
}
