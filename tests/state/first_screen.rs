//! The first screen on a host with a large subtree: it starts folded so
//! that the top level shows, and the first rates open the way to its
//! busiest groups; the rule runs on the first two refreshes only, never
//! folds above the selection, never changes a fold the operator made, and
//! under churn (groups made and removed every refresh) neither it nor the
//! flat list loses the selection silently. On a tmpfs tree made here:
//!
//! ```text
//! /
//! ├─ farm            10 racks x 20 nodes: 210 groups, large
//! │  ├─ rack-0 … rack-9
//! │  │  └─ node-00 … node-19
//! ├─ idle.slice      3 services
//! └─ web.slice       2 services
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, CollectorConfig};
use cgtop::source::scan::ScanConfig;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;

const HOT: &str = "farm/rack-3/node-07";
const WEB: &str = "web.slice/a.service";

/// Makes a group as the collector reads it (and each missing ancestor):
/// its directory, an empty cgroup.procs and a cpu.stat at zero.
fn group(root: &Path, rel: &str) {
    group_with(root, rel, &[]);
}

/// [`group`], each new directory also given the files of `more`.
pub(crate) fn group_with(root: &Path, rel: &str, more: &[(&str, &str)]) {
    let mut d = root.to_path_buf();
    for part in std::iter::once("").chain(rel.split('/').filter(|p| !p.is_empty())) {
        d.push(part);
        std::fs::create_dir_all(&d).unwrap();
        if !d.join("cpu.stat").exists() {
            std::fs::write(d.join("cgroup.procs"), "").unwrap();
            std::fs::write(
                d.join("cpu.stat"),
                "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
            )
            .unwrap();
            for (name, text) in more {
                std::fs::write(d.join(name), text).unwrap();
            }
        }
    }
}

fn farm() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    group(root, "");
    for r in 0..10 {
        for n in 0..20 {
            group(root, &format!("farm/rack-{r}/node-{n:02}"));
        }
    }
    for s in ["a", "b", "c"] {
        group(root, &format!("idle.slice/{s}.service"));
    }
    for s in ["a", "b"] {
        group(root, &format!("web.slice/{s}.service"));
    }
    dir
}

/// The app at `w` x `h` over a collector that lists the tree anew each
/// refresh and keeps no descriptor (on tmpfs a kept descriptor of a
/// removed file goes on reading it); no refresh yet.
fn app(root: &Path, w: u16, h: u16) -> (App, Collector) {
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, w, h);
    let c = Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig {
            max_kept: 0,
            rewalk_every: 1,
            ..ScanConfig::default()
        },
        full_detail: false,
        sys_dev_block: fixture("sys-dev-block"),
    });
    (a, c)
}

fn folded(a: &App, p: &str) -> bool {
    a.collapsed.contains(&GroupPath::new(p))
}

#[test]
fn a_large_subtree_starts_folded_and_the_top_level_shows() {
    let dir = farm();
    let (mut a, mut c) = app(dir.path(), 80, 24);
    tick(&mut a, &mut c, 0.0);
    // no rates yet: the farm folds whole, the small slices stay open
    //   /
    //   ├─ farm +
    //   ├─ idle.slice
    //   │  ├─ a.service …
    //   └─ web.slice …
    assert_eq!(
        outline(&a),
        [
            "/",
            "  farm +",
            "  idle.slice",
            "    a.service",
            "    b.service",
            "    c.service",
            "  web.slice",
            "    a.service",
            "    b.service",
        ]
    );
    assert!(a.rows.len() <= a.tree_height, "one screen at 80x24");
    // every rack is folded too: opening the farm shows ten rows
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('l'));
    assert_eq!(a.rows.len(), 9 + 10);
}

#[test]
fn the_first_rates_open_the_way_to_the_busiest_groups() {
    let dir = farm();
    let root = dir.path();
    // 200x50: room for the way (the farm's 10 racks, rack-3's 20 nodes)
    // below the 9 rows of the folded screen
    let (mut a, mut c) = app(root, 200, 50);
    tick(&mut a, &mut c, 0.0);
    burn_cpu(root, HOT, 600_000);
    burn_cpu(root, WEB, 200_000);
    tick(&mut a, &mut c, 1.0);
    assert!(a.rows.len() <= a.tree_height, "one screen at 200x50");
    // CPU first: the farm (60 %) above web.slice (20 %); in the farm the
    // way to node-07 is open, the other racks stay folded
    let o = outline(&a);
    assert_eq!(
        o[..6],
        [
            "/",
            "  farm",
            "    rack-3",
            "      node-07",
            "      node-00",
            "      node-01"
        ]
    );
    assert!(!folded(&a, "farm") && !folded(&a, "farm/rack-3"));
    assert!((0..10)
        .filter(|&r| r != 3)
        .all(|r| folded(&a, &format!("farm/rack-{r}"))));
    assert!(a.first_screen.settled());
    // settled: a later refresh changes no fold
    let before = a.collapsed.clone();
    burn_cpu(root, "farm/rack-5/node-01", 900_000);
    tick(&mut a, &mut c, 2.0);
    assert_eq!(a.collapsed, before);
}

#[test]
fn at_80x24_the_way_opens_no_further_than_keeps_the_top_level_shown() {
    let dir = farm();
    let root = dir.path();
    let (mut a, mut c) = app(root, 80, 24);
    tick(&mut a, &mut c, 0.0);
    burn_cpu(root, HOT, 600_000);
    burn_cpu(root, WEB, 200_000);
    tick(&mut a, &mut c, 1.0);
    // 15 rows: the folded screen's 9 leave 6, fewer than the farm's 10
    // racks: the farm stays folded, first with its 60 %, and every group
    // of the top level and the busy web.slice's service show
    //   /
    //   ├─ farm +          60 %
    //   ├─ web.slice       20 %
    //   │  ├─ a.service    20 %
    //   │  └─ b.service
    //   └─ idle.slice …
    assert!(a.rows.len() <= a.tree_height, "one screen at 80x24");
    assert_eq!(
        outline(&a),
        [
            "/",
            "  farm +",
            "  web.slice",
            "    a.service",
            "    b.service",
            "  idle.slice",
            "    a.service",
            "    b.service",
            "    c.service",
        ]
    );
    assert!(a.first_screen.settled());
}

#[test]
fn the_rule_leaves_the_operators_folds_alone() {
    let dir = farm();
    let root = dir.path();
    let (mut a, mut c) = app(root, 80, 24);
    tick(&mut a, &mut c, 0.0);
    // before the rates: the farm opened, rack-3 opened and folded again
    // by hand, web.slice folded by hand
    select(&mut a, &mut c, "farm");
    send(&mut a, &mut c, ch('l'));
    select(&mut a, &mut c, "farm/rack-3");
    send(&mut a, &mut c, ch('l'));
    send(&mut a, &mut c, ch('h'));
    select(&mut a, &mut c, "web.slice");
    send(&mut a, &mut c, ch('h'));
    burn_cpu(root, HOT, 900_000);
    tick(&mut a, &mut c, 1.0);
    // rack-3 holds the busiest group, but the operator folded it
    assert!(folded(&a, "farm/rack-3"));
    assert!(folded(&a, "web.slice"));
    assert!(!folded(&a, "farm"));
    assert_eq!(selected(&a), "/web.slice");
    assert_eq!(visible_paths(&a)[a.cursor], GroupPath::new("web.slice"));
}

#[test]
fn the_rule_never_folds_above_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    group(root, "");
    for n in 0..50 {
        group(root, &format!("grow/g-{n:03}"));
    }
    let (mut a, mut c) = app(root, 80, 24);
    tick(&mut a, &mut c, 0.0);
    // grow is small: open, and a group in it is selected
    select(&mut a, &mut c, "grow/g-010");
    // before the rates it grows past 100 groups: the rule would fold it
    for n in 50..150 {
        group(root, &format!("grow/g-{n:03}"));
    }
    tick(&mut a, &mut c, 1.0);
    assert!(!folded(&a, "grow"), "the selection's parent stays open");
    assert_eq!(selected(&a), "/grow/g-010");
    assert_eq!(visible_paths(&a)[a.cursor], GroupPath::new("grow/g-010"));
    assert!(a.status.is_none(), "nothing said: {:?}", a.status);
}

#[test]
fn star_before_the_rates_ends_the_rule() {
    let dir = farm();
    let root = dir.path();
    let (mut a, mut c) = app(root, 80, 24);
    tick(&mut a, &mut c, 0.0);
    // `*` with folds: everything opens, and stays so
    send(&mut a, &mut c, ch('*'));
    assert!(a.collapsed.is_empty());
    burn_cpu(root, HOT, 900_000);
    tick(&mut a, &mut c, 1.0);
    assert!(a.collapsed.is_empty());
}

/// What must hold after every refresh under churn: the cursor is on a
/// row, that row is the selected group, and a selection that changed
/// from `before` did so because `before` is gone (or came back), said on
/// the status line.
fn check_selection(a: &App, before: &GroupPath, step: usize) {
    assert!(a.cursor < a.rows.len(), "step {step}: cursor past the rows");
    let sel = a.selected.clone().unwrap();
    assert_eq!(
        visible_paths(a)[a.cursor],
        sel,
        "step {step}: the cursor is on the selected group"
    );
    if sel != *before {
        let snap = &a.data.as_ref().unwrap().refresh.snapshot;
        let said = a
            .status
            .as_ref()
            .map(|s| s.text.clone())
            .unwrap_or_default();
        assert!(
            (snap.find(before).is_none() && said.contains("is gone")) || said.contains("is back"),
            "step {step}: the selection moved from {before} to {sel} silently ({said:?})"
        );
    }
}

/// 200 groups made and removed between refreshes (200 groups/s at the
/// default interval) in a large subtree, the selection among them, the
/// tree and the flat list turned in between, for 60 refreshes.
#[test]
fn under_churn_the_selection_is_never_lost_silently() {
    const N: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    group(root, "");
    group(root, "steady.slice/a.service");
    for k in 0..N {
        group(root, &format!("churn/c{k:03}"));
    }
    let (mut a, mut c) = app(root, 80, 24);
    let mut live = vec![true; N];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: usize| {
        // a fixed sequence (xorshift): the same churn every run
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % m as u64).unwrap()
    };
    for step in 0..60 {
        // 100 removed, 100 made: 200 groups a refresh
        for _ in 0..100 {
            let k = next(N);
            let p = root.join(format!("churn/c{k:03}"));
            if live[k] {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                group(root, &format!("churn/c{k:03}"));
            }
            live[k] = !live[k];
        }
        burn_cpu(root, "steady.slice/a.service", 10_000);
        let before = a.selected.clone().unwrap();
        tick(&mut a, &mut c, step as f64);
        check_selection(&a, &before, step);
        // the operator: the flat list now and then, the cursor moved onto
        // a churning group, the churn subtree opened
        let before = a.selected.clone().unwrap();
        match step % 4 {
            0 => {
                send(&mut a, &mut c, key(KeyCode::F(5)));
                assert_eq!(
                    a.selected.clone().unwrap(),
                    before,
                    "step {step}: F5 keeps it"
                );
            }
            1 => {
                let to = next(a.rows.len());
                send(&mut a, &mut c, ch('g'));
                for _ in 0..to {
                    send(&mut a, &mut c, ch('j'));
                }
            }
            2 if !a.flat => {
                select(&mut a, &mut c, "churn");
                send(&mut a, &mut c, ch('l'));
                send(&mut a, &mut c, ch('j'));
            }
            _ => {
                send(&mut a, &mut c, ch('G'));
            }
        }
    }
}
