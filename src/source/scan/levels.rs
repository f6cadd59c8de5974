//! The level figures a scan keeps for the next one (`Scanner::read_levels`,
//! `Scanner::set_keep_levels`), by directory inode: held as a part (the
//! figures read only, `model::tree::part`), not a whole `HotStats` (380
//! bytes) a group, since they wait for the next scan for every group of
//! the hierarchy.

use crate::model::tree::part::Part;
use crate::model::{GroupPath, HotStats};
use std::collections::HashMap;

#[derive(Debug, Default)]
pub(super) struct Levels {
    part: Part,
    /// Each inode's group in `part`.
    at: HashMap<u64, usize>,
}

impl Levels {
    /// Keeps the figures of `hot` (taken out of it) as the levels of the
    /// group at `path`, directory `inode`.
    pub(super) fn insert(&mut self, inode: u64, path: GroupPath, hot: &mut HotStats) {
        self.at.insert(inode, self.part.len());
        self.part.push(path, inode, None, hot);
    }

    /// The levels kept of directory `inode`, forgotten here: `Some` where
    /// they are of the group at `path` (another group by another name may
    /// have its inode number since).
    pub(super) fn take(&mut self, inode: u64, path: &GroupPath) -> Option<HotStats> {
        let i = self.at.remove(&inode)?;
        let g = self.part.groups().get(i)?;
        if g.path != *path {
            return None;
        }
        let mut hot = HotStats::default();
        self.part.take_into(i, &mut hot);
        Some(hot)
    }

    /// Adds the levels of `other` (those of other groups).
    pub(super) fn append(&mut self, other: Levels) {
        if self.at.is_empty() && self.part.is_empty() {
            // none yet: `other` whole, its index not built again (a
            // table freed at 10,000 groups would raise the allocator's
            // mmap threshold: `model::heap`)
            let old = std::mem::replace(self, other);
            old.part.give_back();
            return;
        }
        let base = self.part.len();
        self.part.append(other.part);
        self.at
            .extend(other.at.into_iter().map(|(k, i)| (k, i + base)));
    }

    /// No levels kept (the steady refresh's case: nothing to look up).
    pub(super) fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    pub(super) fn clear(&mut self) {
        std::mem::take(self).part.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(memory: u64) -> HotStats {
        HotStats {
            memory_current: Some(memory),
            pids_current: Some(2),
            ..HotStats::default()
        }
    }

    #[test]
    fn levels_are_taken_once_by_inode_and_path() {
        let mut l = Levels::default();
        l.insert(10, GroupPath::new("a"), &mut level(1));
        l.insert(11, GroupPath::new("b"), &mut level(2));
        let mut more = Levels::default();
        more.insert(12, GroupPath::new("c"), &mut level(3));
        l.append(more);
        assert_eq!(l.take(11, &GroupPath::new("b")), Some(level(2)));
        assert_eq!(l.take(11, &GroupPath::new("b")), None, "once");
        assert_eq!(l.take(12, &GroupPath::new("c")), Some(level(3)));
        // the inode of another group now: not its levels, and forgotten
        assert_eq!(l.take(10, &GroupPath::new("x")), None);
        assert_eq!(l.take(10, &GroupPath::new("a")), None);
        assert!(l.at.is_empty());
        l.insert(13, GroupPath::new("d"), &mut level(4));
        l.clear();
        assert_eq!(l.take(13, &GroupPath::new("d")), None);
    }
}
