//! One copy of each group path for all the scanners of a layout: on a v1
//! or hybrid host every hierarchy lists the same groups, and each scanner
//! made its own copy of each path (seven copies of every path at 10,000
//! groups in each of seven hierarchies). The scanners of a collector share
//! one [`SharedPaths`]; a walk's new entry takes the copy another
//! hierarchy's scanner already holds, so that the merge finds the same
//! path by pointer (`GroupPath`'s equality looks at the pointer first).

use crate::model::GroupPath;
use std::collections::HashSet;
use std::sync::Mutex;

/// The paths the scanners of one collector hold, one copy of each.
#[derive(Debug, Default)]
pub struct SharedPaths(Mutex<HashSet<GroupPath>>);

impl SharedPaths {
    pub fn new() -> Self {
        Self::default()
    }

    /// The copy of `path` already held, else `path`, held from now on.
    pub(super) fn intern(&self, path: GroupPath) -> GroupPath {
        // a scanner that panicked while holding the lock left the set as
        // it was: whole paths, at worst one missing
        let mut set = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(p) = set.get(&path) {
            return p.clone();
        }
        set.insert(path.clone());
        path
    }

    /// Forgets the paths nobody else holds (groups gone from every
    /// hierarchy, and from every sample and snapshot): after a walk.
    pub(super) fn prune(&self) {
        let mut set = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        set.retain(GroupPath::is_shared);
    }

    /// How many paths are held.
    pub fn len(&self) -> usize {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::{ScanConfig, Scanner};
    use super::*;
    use std::sync::Arc;

    /// Two hierarchies' scanners (two fixture trees) sharing one set of
    /// paths, as a collector's are.
    fn two(a: &std::path::Path, b: &std::path::Path) -> (Scanner, Scanner, Arc<SharedPaths>) {
        let paths = Arc::new(SharedPaths::new());
        let cfg = ScanConfig {
            rewalk_every: 0,
            ..ScanConfig::default()
        };
        let mut s = Scanner::new(a.to_path_buf(), cfg.clone());
        let mut t = Scanner::new(b.to_path_buf(), cfg);
        s.share_paths(Arc::clone(&paths));
        t.share_paths(Arc::clone(&paths));
        (s, t, paths)
    }

    #[test]
    fn hierarchies_share_a_path_and_keep_their_own_figures() {
        // the same groups in both but b.slice, in the second alone
        let (x, y) = (tree(), tree());
        mk(y.path(), "b.slice", &[("memory.current", "7\n")]);
        std::fs::write(y.path().join("a.slice/memory.current"), "8192\n").unwrap();
        let (mut s, mut t, paths) = two(x.path(), y.path());
        let (gs, _) = s.scan();
        let (gt, _) = t.scan();
        let names = |g: &[crate::model::GroupSample]| -> Vec<String> {
            g.iter().map(|x| as_text(&x.path).to_owned()).collect()
        };
        assert_eq!(names(&gs), ["", "a.slice", "a.slice/b c:ü"]);
        assert_eq!(names(&gt), ["", "a.slice", "a.slice/b c:ü", "b.slice"]);
        for (p, q) in gs.iter().zip(&gt) {
            assert!(p.path.same_copy(&q.path), "{}: one copy", as_text(&p.path));
        }
        assert_eq!(paths.len(), 4, "every path once");
        // each hierarchy's own figures
        assert_eq!(gs[1].hot.memory_current, Some(4096));
        assert_eq!(gt[1].hot.memory_current, Some(8192));
        assert_eq!(gt[3].hot.memory_current, Some(7));
        drop((gs, gt));

        // a group removed from the first hierarchy only: the second keeps
        // it, its path and its figures
        std::fs::remove_dir_all(x.path().join("a.slice/b c:ü")).unwrap();
        s.invalidate();
        let (gs, _) = s.scan();
        let (gt, _) = t.scan();
        assert_eq!(names(&gs), ["", "a.slice"]);
        assert_eq!(names(&gt), ["", "a.slice", "a.slice/b c:ü", "b.slice"]);
        let child = &gt[2];
        assert_eq!(child.hot.nr_procs, Some(2));
        assert_eq!(paths.len(), 4, "still held by the second");
        // and from the second too: forgotten at its next walk
        std::fs::remove_dir_all(y.path().join("a.slice/b c:ü")).unwrap();
        drop((gs, gt));
        t.invalidate();
        let (gt, _) = t.scan();
        assert_eq!(names(&gt), ["", "a.slice", "b.slice"]);
        assert_eq!(paths.len(), 3, "a path nobody holds is forgotten");
    }

    #[test]
    fn one_copy_of_a_path_and_forgotten_when_nobody_holds_it() {
        let paths = SharedPaths::new();
        let a = paths.intern(GroupPath::new("a.slice/x.service"));
        let b = paths.intern(GroupPath::new("a.slice/x.service"));
        assert!(a.same_copy(&b));
        assert_eq!(paths.len(), 1);
        paths.prune();
        assert_eq!(paths.len(), 1, "still held");
        drop((a, b));
        paths.prune();
        assert!(paths.is_empty());
    }
}
