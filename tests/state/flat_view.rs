//! The flat list (F5, htop's tree/list toggle): every group in one list,
//! sorted by the chosen column with the usual keys (`<`, `>`, `r`), each
//! row with its whole path (cut from the left when narrow), the selection
//! kept across the toggle both ways. On copies of the pure-v2-systemd
//! fixture (drawn at the top of tests/state/app.rs), its CPU moved by
//! known amounts.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, SortKey};
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use common::*;
use crossterm::event::KeyCode;

const PG: &str = "system.slice/system-postgresql.slice/postgresql@15-main.service";
const JOURNALD: &str = "system.slice/systemd-journald.service";
const SESSION: &str = "user.slice/user-0.slice/session-1.scope";

fn f5() -> cgtop::app::Msg {
    key(KeyCode::F(5))
}

/// The systemd tree after one busy second: PG 35 %, session-1 8 %,
/// journald 5 % (of one core), the rest idle.
fn busy(w: u16, h: u16) -> (App, Collector, tempfile::TempDir) {
    let dir = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), w, h);
    burn_cpu(dir.path(), PG, 350_000);
    burn_cpu(dir.path(), SESSION, 80_000);
    burn_cpu(dir.path(), JOURNALD, 50_000);
    tick(&mut a, &mut c, 1.0);
    (a, c, dir)
}

fn cpu_of_rows(a: &App) -> Vec<f64> {
    (0..a.rows.len())
        .map(|i| a.row_data(i).unwrap().1.cpu_pct.unwrap_or(-1.0))
        .collect()
}

#[test]
fn f5_lists_every_group_by_cpu_and_keeps_the_selection_both_ways() {
    let (mut a, mut c, _dir) = busy(120, 40);
    select(&mut a, &mut c, PG);
    let fx = send(&mut a, &mut c, f5());
    assert!(a.flat);
    assert!(fx.is_empty(), "the same selection, nothing asked: {fx:?}");
    // every group, one row each, none indented or folded
    assert_eq!(a.rows.len(), 31);
    assert!(a
        .rows
        .iter()
        .all(|r| r.depth == 0 && !r.collapsed && !r.has_children));
    // highest CPU first; the busiest leaf right after its ancestors
    let cpu = cpu_of_rows(&a);
    assert!(cpu.windows(2).all(|w| w[0] >= w[1]), "{cpu:?}");
    let paths = visible_paths(&a);
    assert_eq!(
        paths[..5]
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "/",
            "/system.slice",
            "/system.slice/system-postgresql.slice",
            &format!("/{PG}"),
            "/user.slice",
        ]
    );
    // the cursor is on the selected group, wherever it is now
    assert_eq!(selected(&a), format!("/{PG}"));
    assert_eq!(paths[a.cursor], GroupPath::new(PG));
    // and back: the tree, the same group selected
    let fx = send(&mut a, &mut c, f5());
    assert!(!a.flat && fx.is_empty());
    assert_eq!(selected(&a), format!("/{PG}"));
    assert_eq!(visible_paths(&a)[a.cursor], GroupPath::new(PG));
    assert!(a.rows.iter().any(|r| r.depth > 0), "the tree again");
}

#[test]
fn back_in_the_tree_the_way_to_the_selection_opens() {
    let (mut a, mut c, _dir) = busy(120, 40);
    // system.slice folded in the tree:
    //   /
    //   ├─ system.slice +
    select(&mut a, &mut c, "system.slice");
    send(&mut a, &mut c, ch('h'));
    assert!(a.rows[a.cursor].collapsed);
    // in the flat list, PG (under the fold) is selected
    send(&mut a, &mut c, f5());
    let pg = visible_paths(&a)
        .iter()
        .position(|p| *p == GroupPath::new(PG))
        .unwrap();
    send(&mut a, &mut c, ch('g'));
    for _ in 0..pg {
        send(&mut a, &mut c, ch('j'));
    }
    assert_eq!(selected(&a), format!("/{PG}"));
    // back in the tree the fold opened to show it: the selection stays
    send(&mut a, &mut c, f5());
    assert_eq!(selected(&a), format!("/{PG}"));
    assert_eq!(visible_paths(&a)[a.cursor], GroupPath::new(PG));
    assert!(!a.collapsed.contains(&GroupPath::new("system.slice")));
}

#[test]
fn the_sort_keys_sort_the_flat_list() {
    let (mut a, mut c, _dir) = busy(120, 40);
    send(&mut a, &mut c, f5());
    // `<` from CPU: the name, A to Z: the whole path's order
    send(&mut a, &mut c, ch('<'));
    assert_eq!(a.sort, SortKey::Name);
    let paths = visible_paths(&a);
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    // `r`: Z to A
    send(&mut a, &mut c, ch('r'));
    sorted.reverse();
    assert_eq!(visible_paths(&a), sorted);
    // `>` twice: CPU then MEM, highest first
    send(&mut a, &mut c, ch('>'));
    send(&mut a, &mut c, ch('>'));
    assert_eq!(a.sort, SortKey::Memory);
    let mem: Vec<u64> = (0..a.rows.len())
        .filter_map(|i| a.row_data(i).unwrap().0.hot.memory_current)
        .collect();
    assert!(mem.windows(2).all(|w| w[0] >= w[1]), "{mem:?}");
}

#[test]
fn fold_keys_in_the_flat_list_fold_nothing_and_say_so() {
    let (mut a, mut c, _dir) = busy(120, 40);
    send(&mut a, &mut c, f5());
    select(&mut a, &mut c, "system.slice");
    for k in [ch('l'), ch('*'), ch('}'), ch('{')] {
        send(&mut a, &mut c, k);
        assert_eq!(a.rows.len(), 31);
        assert!(a.collapsed.is_empty());
        let s = a.status.clone().unwrap().text;
        assert!(s.contains("flat list has no folds"), "{s}");
    }
    // left goes to the parent group, wherever its row is
    send(&mut a, &mut c, ch('h'));
    assert_eq!(selected(&a), "/");
}

#[test]
fn the_filter_keeps_the_same_groups_flat() {
    let (mut a, mut c, _dir) = busy(120, 40);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "postgres");
    send(&mut a, &mut c, key(KeyCode::Enter));
    // the tree shows the match (folded subtree aside) and its ancestors
    send(&mut a, &mut c, f5());
    let mut flat: Vec<String> = visible_paths(&a).iter().map(ToString::to_string).collect();
    flat.sort();
    assert_eq!(
        flat,
        [
            "/",
            "/system.slice",
            "/system.slice/system-postgresql.slice",
            &format!("/{PG}"),
        ]
    );
    let matched: Vec<bool> = a.rows.iter().map(|r| r.matched).collect();
    assert_eq!(matched.iter().filter(|m| **m).count(), 2);
}

#[test]
fn flat_list_80x24_cuts_paths_from_the_left() {
    let (mut a, mut c, _dir) = busy(80, 24);
    select(&mut a, &mut c, PG);
    send(&mut a, &mut c, f5());
    let s = screen(&a, 80, 24);
    assert!(s.contains("…/postgresql@15-main.service"), "{s}");
    insta::assert_snapshot!(s);
}
