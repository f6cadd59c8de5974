//! The cgroup tree of one snapshot, and the rows a tree view shows:
//! siblings ordered under their parent, collapsed subtrees hidden, and a
//! name filter that keeps the ancestors of every match and the subtree of
//! each match (folded until opened).
//!
//! ```text
//! /                      node 0 (the start group)
//! ├─ system.slice        children sorted by the caller's order,
//! │  ├─ cron.service     ties broken by name
//! │  └─ ssh.service
//! └─ user.slice          collapsed: its children are not rows
//! ```

pub mod first_folds;
pub mod limits;
pub mod part;
pub mod path;
pub mod procstat;
pub mod rates;
pub mod root;
pub mod snapshot;
pub mod text;
pub mod union;

use crate::model::tree::path::parent_bytes;
use crate::model::{GroupPath, GroupSample};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub path: GroupPath,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Index of this group's sample in the snapshot it was built from.
    pub sample: usize,
}

/// Parent/child links of the groups of one snapshot. Node 0 is the top:
/// the shallowest group of the snapshot (the mount root or the start group).
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    index: HashMap<GroupPath, usize>,
}

/// One visible row of the tree view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub node: usize,
    pub depth: usize,
    /// For each ancestor level below the top, whether a vertical guide
    /// continues there (the ancestor at that level has later siblings).
    pub guides: Vec<bool>,
    pub last_child: bool,
    pub has_children: bool,
    pub collapsed: bool,
    /// True when the row's own name matches the filter (an ancestor kept
    /// only for context, or a group shown as part of a match's subtree, is
    /// false).
    pub matched: bool,
}

/// How rows are chosen.
#[derive(Debug, Clone, Default)]
pub struct RowOptions<'a> {
    /// Folded groups (without a filter).
    pub collapsed: Option<&'a HashSet<GroupPath>>,
    /// Case-insensitive substring of the group's name.
    pub filter: Option<&'a str>,
    /// With a filter, the folds the operator changed while it is on:
    /// `true` opened, `false` folded. Without an entry, a group with a
    /// match below it is open (the path to every match shows, whatever
    /// `collapsed` says) and a match's subtree is folded: a match shows
    /// its children (a slice, its services) once opened.
    pub filter_folds: Option<&'a HashMap<GroupPath, bool>>,
    /// The samples the tree was built from: with them the filter matches
    /// a group's identity too ([`group_matches`]); without, its name only.
    pub samples: Option<&'a [GroupSample]>,
    /// Groups whose children were not listed yet (the first frame's
    /// first look): shown as folded groups with children.
    pub unlisted: Option<&'a HashSet<GroupPath>>,
}

/// Whether `path`'s name matches the name filter's (and the search's)
/// `needle`, already lowercase: the escaped name as shown contains it,
/// case aside.
pub fn name_matches(path: &GroupPath, needle: &str) -> bool {
    path.name_display().to_lowercase().contains(needle)
        || (needle.contains(' ') && text::escape(path.name()).to_lowercase().contains(needle))
}

/// Whether group `g` matches the filter's (and the search's and the move
/// picker's) `needle`, already lowercase: its name as [`name_matches`]
/// says, or its identity (`model::identity::matches`: a container's name,
/// image, pod, namespace, id prefix).
pub fn group_matches(g: &GroupSample, needle: &str) -> bool {
    name_matches(&g.path, needle)
        || crate::model::identity::of_group(g)
            .is_some_and(|id| crate::model::identity::matches(&id, needle))
}

impl Tree {
    /// Builds the tree from samples sorted by path (parents first). A
    /// group whose parent is missing from the snapshot (it vanished
    /// mid-scan) hangs under its nearest present ancestor.
    pub fn build(groups: &[GroupSample]) -> Self {
        let mut t = Self::default();
        if groups.is_empty() {
            return t;
        }
        let depth: Vec<usize> = groups.iter().map(|g| g.path.depth()).collect();
        let mut order: Vec<usize> = (0..groups.len()).collect();
        // shallow first so that parents exist before their children
        order.sort_by_key(|&i| depth[i]);
        t.nodes.reserve(groups.len());
        t.index.reserve(groups.len());
        for i in order {
            let path = &groups[i].path;
            // the nearest present ancestor, found by slicing the path text
            // (no allocation per ancestor)
            let parent = if t.nodes.is_empty() {
                None
            } else {
                let mut p = path.as_bytes();
                let mut found = None;
                while !p.is_empty() {
                    p = parent_bytes(p);
                    if let Some(&id) = t.index.get(p) {
                        found = Some(id);
                        break;
                    }
                }
                Some(found.unwrap_or(0))
            };
            let id = t.nodes.len();
            t.nodes.push(Node {
                path: path.clone(),
                parent,
                children: Vec::new(),
                sample: i,
            });
            t.index.insert(path.clone(), id);
            if let Some(p) = parent {
                t.nodes[p].children.push(id);
            }
        }
        t
    }

    pub fn get(&self, path: &GroupPath) -> Option<usize> {
        self.index.get(path).copied()
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every node that has children (for "collapse all").
    pub fn branches(&self) -> impl Iterator<Item = &GroupPath> {
        self.nodes
            .iter()
            .filter(|n| !n.children.is_empty())
            .map(|n| &n.path)
    }

    /// The name filter's marks per node (`needle` lowercase): which
    /// nodes match (the escaped name as shown contains the needle, case
    /// aside), which lead to a match (its ancestors), and which are shown
    /// (a match's ancestors, the match and its whole subtree).
    fn filter_marks(
        &self,
        needle: &str,
        samples: Option<&[GroupSample]>,
    ) -> (Vec<bool>, Vec<bool>, Vec<bool>) {
        let matched: Vec<bool> = self
            .nodes
            .iter()
            // the text on screen, escapes and all: what the
            // operator sees is what they can type
            .map(|nd| match samples.and_then(|s| s.get(nd.sample)) {
                Some(g) => group_matches(g, needle),
                None => name_matches(&nd.path, needle),
            })
            .collect();
        let mut leads = vec![false; self.nodes.len()];
        for (i, m) in matched.iter().enumerate() {
            if *m {
                let mut cur = self.nodes[i].parent;
                while let Some(c) = cur {
                    if leads[c] {
                        break;
                    }
                    leads[c] = true;
                    cur = self.nodes[c].parent;
                }
            }
        }
        // nodes come parents first (build adds them by depth)
        let mut in_match: Vec<bool> = Vec::with_capacity(self.nodes.len());
        for (nd, m) in self.nodes.iter().zip(&matched) {
            let below_a_match = nd.parent.is_some_and(|p| in_match[p]);
            in_match.push(*m || below_a_match);
        }
        let shown: Vec<bool> = (0..self.nodes.len())
            .map(|i| leads[i] || in_match[i])
            .collect();
        (matched, leads, shown)
    }

    /// The groups the TUI's `/` filter `filter` keeps, whether folded or
    /// not, as indexes of the snapshot the tree was built from (in
    /// its order): every group whose name (escaped, as shown) contains
    /// it, case aside, or whose identity matches ([`group_matches`]:
    /// `samples` are the ones the tree was built from), their ancestors
    /// and their subtrees. An empty filter keeps all. The name filter of
    /// `--openmetrics` and `serve`.
    pub fn filter_samples(&self, filter: &str, samples: &[GroupSample]) -> Vec<usize> {
        if filter.is_empty() {
            return self.nodes.iter().map(|n| n.sample).collect();
        }
        let (_, _, shown) = self.filter_marks(&filter.to_lowercase(), Some(samples));
        let mut keep: Vec<usize> = self
            .nodes
            .iter()
            .zip(shown)
            .filter(|(_, s)| *s)
            .map(|(n, _)| n.sample)
            .collect();
        keep.sort_unstable();
        keep
    }

    /// The visible rows, depth-first, siblings ordered by `cmp` (then by
    /// name).
    pub fn rows(&self, opts: &RowOptions<'_>, cmp: impl Fn(usize, usize) -> Ordering) -> Vec<Row> {
        let mut out = Vec::new();
        if self.nodes.is_empty() {
            return out;
        }
        let needle = opts.filter.filter(|f| !f.is_empty()).map(str::to_lowercase);
        // with a filter: which nodes match, which lead to a match (kept
        // open, as the path to it), and which are in a match's subtree
        // (shown under it, folded by default)
        let (matched, leads, shown) = match &needle {
            None => (Vec::new(), Vec::new(), Vec::new()),
            Some(n) => self.filter_marks(n, opts.samples),
        };
        let filtering = needle.is_some();
        let sorted_children = |id: usize| -> Vec<usize> {
            let mut ch: Vec<usize> = self.nodes[id]
                .children
                .iter()
                .copied()
                .filter(|&c| !filtering || shown[c])
                .collect();
            ch.sort_by(|&a, &b| {
                cmp(a, b).then_with(|| self.nodes[a].path.name().cmp(self.nodes[b].path.name()))
            });
            ch
        };
        if filtering && !shown[0] {
            return out;
        }
        // iterative depth-first walk: (node, depth, guides, last)
        let mut stack: Vec<(usize, usize, Vec<bool>, bool)> = vec![(0, 0, Vec::new(), true)];
        while let Some((id, depth, guides, last)) = stack.pop() {
            let children = sorted_children(id);
            let path = &self.nodes[id].path;
            let collapsed = if filtering {
                // the path to every match is open, whatever `collapsed`
                // says; a match's subtree is folded until opened, but for
                // the top's (`cgtop system.slice`, filtered by "system"):
                // its children are the context of every row
                !opts
                    .filter_folds
                    .and_then(|f| f.get(path).copied())
                    .unwrap_or(leads[id] || id == 0)
            } else {
                opts.collapsed.is_some_and(|c| c.contains(path))
            };
            let unlisted = opts.unlisted.is_some_and(|u| u.contains(path));
            out.push(Row {
                node: id,
                depth,
                guides: guides.clone(),
                last_child: last,
                has_children: !children.is_empty() || unlisted,
                collapsed: (collapsed && !children.is_empty()) || unlisted,
                matched: filtering && matched[id],
            });
            if collapsed {
                continue;
            }
            let mut child_guides = guides;
            if depth > 0 {
                child_guides.push(!last);
            }
            let n = children.len();
            for (k, c) in children.into_iter().enumerate().rev() {
                stack.push((c, depth + 1, child_guides.clone(), k + 1 == n));
            }
        }
        out
    }

    /// Every group as one list (the flat view, `--flat`), ordered by
    /// `cmp` then by path, each row at depth 0 without children or folds
    /// (the view shows its whole path). With a filter, the groups the
    /// tree's filter keeps (each match, its ancestors and its subtree, as
    /// [`Tree::filter_samples`]), so that turning between the two keeps
    /// the same groups.
    pub fn flat_rows(
        &self,
        filter: Option<&str>,
        samples: Option<&[GroupSample]>,
        cmp: impl Fn(usize, usize) -> Ordering,
    ) -> Vec<Row> {
        let needle = filter.filter(|f| !f.is_empty()).map(str::to_lowercase);
        let (matched, shown) = match &needle {
            None => (Vec::new(), Vec::new()),
            Some(n) => {
                let (m, _, s) = self.filter_marks(n, samples);
                (m, s)
            }
        };
        let filtering = needle.is_some();
        let mut ids: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| !filtering || shown[i])
            .collect();
        ids.sort_by(|&a, &b| cmp(a, b).then_with(|| self.nodes[a].path.cmp(&self.nodes[b].path)));
        ids.into_iter()
            .map(|id| Row {
                node: id,
                depth: 0,
                guides: Vec::new(),
                last_child: true,
                has_children: false,
                collapsed: false,
                matched: filtering && matched[id],
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> (Tree, Vec<GroupSample>) {
        let mut g: Vec<GroupSample> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| GroupSample::new(GroupPath::new(p), i as u64))
            .collect();
        g.sort_by(|a, b| a.path.cmp(&b.path));
        (Tree::build(&g), g)
    }

    fn names(t: &Tree, rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| {
                format!(
                    "{}{}",
                    "  ".repeat(r.depth),
                    t.nodes[r.node].path.name_display()
                )
            })
            .collect()
    }

    const PATHS: &[&str] = &[
        "",
        "system.slice",
        "system.slice/b.service",
        "system.slice/a.service",
        "user.slice",
        "user.slice/user-0.slice",
        "init.scope",
    ];

    #[test]
    fn depth_first_by_name() {
        let (t, _) = tree(PATHS);
        let rows = t.rows(&RowOptions::default(), |_, _| Ordering::Equal);
        // /
        // ├─ init.scope
        // ├─ system.slice
        // │  ├─ a.service
        // │  └─ b.service
        // └─ user.slice
        //    └─ user-0.slice
        assert_eq!(
            names(&t, &rows),
            [
                "/",
                "  init.scope",
                "  system.slice",
                "    a.service",
                "    b.service",
                "  user.slice",
                "    user-0.slice"
            ]
        );
        let a = &rows[3];
        assert_eq!(a.guides, vec![true]); // system.slice has a later sibling
        assert!(!a.last_child);
        let u0 = &rows[6];
        assert_eq!(u0.guides, vec![false]);
        assert!(u0.last_child);
    }

    #[test]
    fn caller_order_keeps_siblings_under_parent() {
        let (t, g) = tree(PATHS);
        // reverse name order via the comparator
        let rows = t.rows(&RowOptions::default(), |a, b| {
            g[t.nodes[b].sample]
                .path
                .name()
                .cmp(g[t.nodes[a].sample].path.name())
        });
        assert_eq!(
            names(&t, &rows),
            [
                "/",
                "  user.slice",
                "    user-0.slice",
                "  system.slice",
                "    b.service",
                "    a.service",
                "  init.scope"
            ]
        );
    }

    #[test]
    fn collapsed_hides_children() {
        let (t, _) = tree(PATHS);
        let collapsed: HashSet<GroupPath> = [GroupPath::new("system.slice")].into();
        let rows = t.rows(
            &RowOptions {
                collapsed: Some(&collapsed),
                filter: None,
                filter_folds: None,
                samples: None,
                unlisted: None,
            },
            |_, _| Ordering::Equal,
        );
        assert_eq!(
            names(&t, &rows),
            [
                "/",
                "  init.scope",
                "  system.slice",
                "  user.slice",
                "    user-0.slice"
            ]
        );
        assert!(rows[2].collapsed);
    }

    #[test]
    fn filter_keeps_ancestors() {
        let (t, _) = tree(PATHS);
        let collapsed: HashSet<GroupPath> = [GroupPath::new("system.slice")].into();
        let rows = t.rows(
            &RowOptions {
                collapsed: Some(&collapsed),
                filter: Some("A.SERV"),
                filter_folds: None,
                samples: None,
                unlisted: None,
            },
            |_, _| Ordering::Equal,
        );
        assert_eq!(names(&t, &rows), ["/", "  system.slice", "    a.service"]);
        assert!(rows[2].matched && !rows[1].matched);
        let rows = t.rows(
            &RowOptions {
                collapsed: None,
                filter: Some("nothing"),
                filter_folds: None,
                samples: None,
                unlisted: None,
            },
            |_, _| Ordering::Equal,
        );
        assert!(rows.is_empty());
    }

    #[test]
    fn a_match_shows_its_subtree_folded_until_opened() {
        let (t, _) = tree(PATHS);
        let rows = |f: &str, folds: &HashMap<GroupPath, bool>| {
            let opts = RowOptions {
                filter: Some(f),
                filter_folds: Some(folds),
                ..RowOptions::default()
            };
            let rows = t.rows(&opts, |_, _| Ordering::Equal);
            rows.iter()
                .map(|r| {
                    let mark = match (r.collapsed, r.matched) {
                        (true, true) => " + *",
                        (true, false) => " +",
                        (false, true) => " *",
                        (false, false) => "",
                    };
                    format!("{}{}", names(&t, std::slice::from_ref(r))[0], mark)
                })
                .collect::<Vec<_>>()
        };
        // "slice": system.slice matches and has no match below: its
        // services are there, folded under it; user.slice matches and
        // leads to user-0.slice, so it is open
        //   /
        //   ├─ system.slice +     *
        //   └─ user.slice         *
        //      └─ user-0.slice    *
        let none = HashMap::new();
        assert_eq!(
            rows("slice", &none),
            [
                "/",
                "  system.slice + *",
                "  user.slice *",
                "    user-0.slice *"
            ]
        );
        // opened: its children, which do not match, show under it
        let open: HashMap<GroupPath, bool> = [(GroupPath::new("system.slice"), true)].into();
        assert_eq!(
            rows("slice", &open),
            [
                "/",
                "  system.slice *",
                "    a.service",
                "    b.service",
                "  user.slice *",
                "    user-0.slice *"
            ]
        );
        // a branch without a match stays hidden (init.scope), and the
        // path to a match can be folded by hand
        let shut: HashMap<GroupPath, bool> = [(GroupPath::new("user.slice"), false)].into();
        assert_eq!(rows("user-0", &shut), ["/", "  user.slice +"]);
    }

    #[test]
    fn a_matching_top_stays_open() {
        // cgtop system.slice, filtered by "system": the top matches and
        // nothing below it does; its children show, folded
        let (t, _) = tree(&["system.slice", "system.slice/a", "system.slice/a/x"]);
        let opts = RowOptions {
            filter: Some("system"),
            ..RowOptions::default()
        };
        let rows = t.rows(&opts, |_, _| Ordering::Equal);
        assert_eq!(names(&t, &rows), ["system.slice", "  a"]);
        assert!(!rows[0].collapsed && rows[1].collapsed);
    }

    /// The rows the `/` filter keeps of a tree of the root and `paths`
    /// (raw names), as shown.
    fn filtered_rows(paths: &[&[u8]]) -> impl Fn(&str) -> Vec<String> {
        let mut g: Vec<GroupSample> = std::iter::once(&b""[..])
            .chain(paths.iter().copied())
            .enumerate()
            .map(|(i, p)| GroupSample::new(GroupPath::parse(p).unwrap(), i as u64))
            .collect();
        g.sort_by(|a, b| a.path.cmp(&b.path));
        let t = Tree::build(&g);
        move |f: &str| {
            let opts = RowOptions {
                filter: Some(f),
                ..RowOptions::default()
            };
            names(&t, &t.rows(&opts, |_, _| Ordering::Equal))
        }
    }

    #[test]
    fn filter_matches_the_escaped_text_on_screen() {
        let rows = filtered_rows(&[b"a\x1bb", b"ab"]);
        // what the row shows, `a\eb`, is what finds it; `ab` finds only ab
        assert_eq!(rows("a\\e"), ["/", "  a\\eb"]);
        assert_eq!(rows("ab"), ["/", "  ab"]);
    }

    #[test]
    fn filter_finds_a_name_with_a_space_as_shown_or_as_typed() {
        let rows = filtered_rows(&[b"my group", b"my-group"]);
        // the row shows the space escaped; what it shows finds it, and
        // so does the space typed
        assert_eq!(rows("my\\u{20}g"), ["/", "  my\\u{20}group"]);
        assert_eq!(rows("my g"), ["/", "  my\\u{20}group"]);
        assert_eq!(rows("my-g"), ["/", "  my-group"]);
    }

    #[test]
    fn orphan_hangs_under_nearest_ancestor() {
        // system.slice vanished between listing and reading
        let (t, _) = tree(&["", "system.slice/a.service"]);
        let rows = t.rows(&RowOptions::default(), |_, _| Ordering::Equal);
        assert_eq!(names(&t, &rows), ["/", "  a.service"]);
    }

    #[test]
    fn subtree_start() {
        let (t, _) = tree(&["system.slice", "system.slice/a.service"]);
        assert_eq!(t.nodes[0].path.as_bytes(), b"system.slice");
        assert_eq!(t.len(), 2);
    }
}
