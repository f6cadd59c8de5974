//! The first screen's folds: which branches start folded so that a host
//! with thousands of groups shows its top level and its busiest groups
//! without scrolling (README "What you see", ARCHITECTURE "The first
//! screen"). Pure: the tree and each group's CPU % in, a fold per node out;
//! the app decides when to apply it and never against the operator.
//!
//! ```text
//! /                         the top is always open
//! ├─ busy.slice             small subtrees open, as they always were
//! │  └─ job.service
//! ├─ farm.slice  ▾          a large subtree (more than LARGE groups) is
//! │  ├─ rack-3  ▾           folded, but for the way to its busiest
//! │  │  ├─ node-42   98%    groups (by their own CPU: the group's minus
//! │  │  └─ node-01 …        its children's), through groups of at most
//! │  └─ rack-0  ▸           LARGE children, as far as the pane holds
//! └─ idle.slice ▸           (a large subtree with nothing busy: folded)
//! ```

use super::Tree;

/// A subtree of more groups than this (below its top) is large: it starts
/// folded. An ordinary host's slices (tens of services, a desktop's
/// hundred app scopes in all) stay open as they always were; a container
/// host's or a build farm's thousand groups fold.
pub const LARGE: usize = 100;

/// How many of a large subtree's busiest groups the way is opened to.
pub const BUSIEST: usize = 3;

/// A group is busy from this much CPU of its own (% of one core): less is
/// noise, and opening the way to it would only cost rows.
pub const BUSY_PCT: f64 = 1.0;

/// Which nodes of `tree` start folded (`true`), given each node's CPU %
/// (`cpu(node)`; `None` before the first rates: nothing is busy, every
/// large subtree folds whole).
///
/// A node folds when it has children and lies in a large subtree (a node
/// other than the top with more than [`LARGE`] groups below it, the
/// outermost one counting), except on the way from that subtree's top to
/// one of its [`BUSIEST`] busiest groups (own CPU at least [`BUSY_PCT`]):
/// those ancestors are open, from the top down, as long as each has at
/// most [`LARGE`] children (opening a wider one would fill screens with
/// idle rows; its row carries its subtree's CPU all the same) and its
/// children fit in the `rows` of the tree pane left over by the folded
/// screen, the busiest group's way first: the top level stays on the
/// first screen, and a way stops at the first group whose idle children
/// would push it off (its row carries its subtree's CPU, sorted first).
pub fn first_folds(tree: &Tree, rows: usize, cpu: impl Fn(usize) -> Option<f64>) -> Vec<bool> {
    let n = tree.nodes.len();
    // groups below each node: nodes come parents first (`Tree::build`
    // adds them by depth), so children are summed before their parents
    let mut below = vec![0usize; n];
    for i in (1..n).rev() {
        if let Some(p) = tree.nodes[i].parent {
            below[p] += below[i] + 1;
        }
    }
    // the outermost large subtree each node is in
    let mut large_top: Vec<Option<usize>> = vec![None; n];
    for i in 1..n {
        let from_parent = tree.nodes[i].parent.and_then(|p| large_top[p]);
        large_top[i] = from_parent.or((below[i] > LARGE).then_some(i));
    }
    let mut fold: Vec<bool> = (0..n)
        .map(|i| large_top[i].is_some() && !tree.nodes[i].children.is_empty())
        .collect();
    // the rows of the screen folded so: a node shows when its parent
    // shows open (parents come first); the room is what the pane has
    // left, which the ways may fill
    let mut shown = vec![false; n];
    for i in 0..n {
        shown[i] = tree.nodes[i].parent.is_none_or(|p| shown[p] && !fold[p]);
    }
    let mut room = rows.saturating_sub(shown.iter().filter(|&&s| s).count());
    // each node's own CPU: its figure less its children's (cpu.stat is
    // hierarchical); a missing figure counts as none
    let own = |i: usize| {
        let kids: f64 = tree.nodes[i]
            .children
            .iter()
            .map(|&c| cpu(c).unwrap_or(0.0))
            .sum();
        (cpu(i).unwrap_or(0.0) - kids).max(0.0)
    };
    let mut busy: Vec<(usize, f64)> = (1..n)
        .filter(|&i| large_top[i].is_some())
        .map(|i| (i, own(i)))
        .filter(|&(_, c)| c >= BUSY_PCT)
        .collect();
    // busiest first, ties by position in the tree (the same every time)
    busy.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut taken = std::collections::HashMap::<usize, usize>::new();
    for (i, _) in busy {
        let Some(top) = large_top[i] else { continue };
        let count = taken.entry(top).or_insert(0);
        if *count >= BUSIEST {
            continue;
        }
        *count += 1;
        // the way down: the ancestors of `i` from `top`, `i` left as it is
        let mut way = Vec::new();
        let mut cur = tree.nodes[i].parent;
        while let Some(a) = cur {
            way.push(a);
            if a == top {
                break;
            }
            cur = tree.nodes[a].parent;
        }
        for &a in way.iter().rev() {
            let wide = tree.nodes[a].children.len();
            if wide > LARGE {
                break;
            }
            // opened already, by a busier group's way
            if !fold[a] {
                continue;
            }
            if wide > room {
                break;
            }
            room -= wide;
            fold[a] = false;
        }
    }
    fold
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GroupPath, GroupSample};

    /// A pane taller than any tree here: the ways are not cut for room.
    const ROOMY: usize = 10_000;

    fn tree(paths: &[String]) -> Tree {
        let mut g: Vec<GroupSample> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| GroupSample::new(GroupPath::new(p), i as u64))
            .collect();
        g.sort_by(|a, b| a.path.cmp(&b.path));
        Tree::build(&g)
    }

    fn folded(t: &Tree, f: &[bool]) -> Vec<String> {
        (0..t.nodes.len())
            .filter(|&i| f[i])
            .map(|i| t.nodes[i].path.to_string())
            .collect()
    }

    /// / with small.slice (3 services) and farm (10 racks of 20 nodes).
    fn farm() -> Tree {
        let mut p = vec![String::new(), "small.slice".into()];
        for s in 0..3 {
            p.push(format!("small.slice/s{s}"));
        }
        p.push("farm".into());
        for r in 0..10 {
            p.push(format!("farm/rack-{r}"));
            for k in 0..20 {
                p.push(format!("farm/rack-{r}/node-{k:02}"));
            }
        }
        tree(&p)
    }

    #[test]
    fn before_rates_a_large_subtree_folds_whole_and_a_small_one_stays_open() {
        let t = farm();
        let f = first_folds(&t, ROOMY, |_| None);
        let mut want = vec!["/farm".to_owned()];
        want.extend((0..10).map(|r| format!("/farm/rack-{r}")));
        assert_eq!(folded(&t, &f), want);
    }

    #[test]
    fn the_way_to_the_busiest_groups_opens() {
        let t = farm();
        let node = |p: &str| t.get(&GroupPath::new(p)).unwrap();
        let hot = node("farm/rack-3/node-07");
        let warm = node("farm/rack-3/node-11");
        let rack3 = node("farm/rack-3");
        let farm = node("farm");
        let f = first_folds(&t, ROOMY, |i| {
            Some(match i {
                _ if i == hot => 90.0,
                _ if i == warm => 5.0,
                _ if i == rack3 || i == farm || i == 0 => 95.0,
                _ => 0.0,
            })
        });
        // farm and rack-3 open; the other racks stay folded
        assert!(!f[farm] && !f[rack3]);
        let mut want: Vec<String> = (0..10)
            .filter(|&r| r != 3)
            .map(|r| format!("/farm/rack-{r}"))
            .collect();
        want.sort();
        assert_eq!(folded(&t, &f), want);
    }

    #[test]
    fn below_one_percent_nothing_is_busy() {
        let t = farm();
        let f = first_folds(&t, ROOMY, |_| Some(0.5));
        assert!(f[t.get(&GroupPath::new("farm")).unwrap()]);
    }

    #[test]
    fn a_group_wider_than_large_is_not_opened_on_the_way() {
        // wide: 150 children, one of them busy
        let mut p = vec![String::new(), "wide".into()];
        p.extend((0..150).map(|k| format!("wide/c{k:03}")));
        p.push("wide/c042/sub".into());
        let t = tree(&p);
        let busy = t.get(&GroupPath::new("wide/c042/sub")).unwrap();
        let f = first_folds(&t, ROOMY, |i| (i == busy).then_some(50.0));
        assert!(f[t.get(&GroupPath::new("wide")).unwrap()]);
        // and nothing under it was opened on the way either
        assert!(f[t.get(&GroupPath::new("wide/c042")).unwrap()]);
    }

    #[test]
    fn the_top_is_never_folded() {
        let mut p = vec![String::new()];
        p.extend((0..300).map(|k| format!("c{k}")));
        let t = tree(&p);
        assert!(!first_folds(&t, ROOMY, |_| None)[0]);
        assert!(first_folds(&Tree::default(), ROOMY, |_| None).is_empty());
    }

    /// farm/rack-3/node-07 busy: folded, the screen is /, small.slice and
    /// its 3 services, farm: 6 rows.
    fn busy_farm() -> (Tree, impl Fn(usize) -> Option<f64>) {
        let t = farm();
        let hot = t.get(&GroupPath::new("farm/rack-3/node-07")).unwrap();
        let rack3 = t.get(&GroupPath::new("farm/rack-3")).unwrap();
        let farm = t.get(&GroupPath::new("farm")).unwrap();
        let cpu = move |i: usize| {
            Some(if i == hot || i == rack3 || i == farm || i == 0 {
                90.0
            } else {
                0.0
            })
        };
        (t, cpu)
    }

    #[test]
    fn a_way_opens_only_as_far_as_the_pane_holds_it() {
        let (t, cpu) = busy_farm();
        let open = |rows: usize| {
            let f = first_folds(&t, rows, &cpu);
            ["farm", "farm/rack-3"].map(|p| !f[t.get(&GroupPath::new(p)).unwrap()])
        };
        // 6 rows folded; the farm's 10 racks need 16, rack-3's 20 nodes 36
        assert_eq!(open(15), [false, false], "no room for the racks");
        assert_eq!(open(16), [true, false], "room for the racks only");
        assert_eq!(open(35), [true, false]);
        assert_eq!(open(36), [true, true], "room for both");
    }
}
