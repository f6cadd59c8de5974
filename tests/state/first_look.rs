//! The first look: on a large tree the TUI's first frame comes from the
//! groups the first screen shows, read alone (`Collector::first_look`),
//! before the first refresh, which then fills the view in. The look lists
//! the children of the start group and of each group of at most LARGE
//! descendants (by cgroup.stat), shows the rest folded, and the first
//! refresh keeps what the operator did meanwhile (selection, folds),
//! under churn too. On a tmpfs tree made here, with cgroup.stat counts:
//!
//! ```text
//! /
//! ├─ farm            10 racks x 35 nodes: 360 groups, large
//! │  ├─ rack-0 … rack-9
//! │  │  └─ node-00 … node-34
//! ├─ idle.slice      3 services
//! └─ web.slice       2 services
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{self, App};
use cgtop::model::GroupPath;
use cgtop::source::collector::{
    self, Collected, Collector, CollectorConfig, Command, PartialRefresh,
};
use cgtop::source::scan::ScanConfig;
use common::*;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Makes a group (and each missing ancestor) as the collector reads it,
/// with a memory.current.
fn group(root: &Path, rel: &str) {
    crate::first_screen::group_with(root, rel, &[("memory.current", "4096\n")]);
}

/// Writes every directory's cgroup.stat with its real count of
/// descendants, as the kernel keeps it.
fn count_all(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            n += 1 + count_all(&e.path());
        }
    }
    std::fs::write(
        dir.join("cgroup.stat"),
        format!("nr_descendants {n}\nnr_dying_descendants 0\n"),
    )
    .unwrap();
    n
}

fn farm(nodes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    group(root, "");
    for r in 0..10 {
        for n in 0..nodes {
            group(root, &format!("farm/rack-{r}/node-{n:02}"));
        }
    }
    for s in ["a", "b", "c"] {
        group(root, &format!("idle.slice/{s}.service"));
    }
    for s in ["a", "b"] {
        group(root, &format!("web.slice/{s}.service"));
    }
    count_all(root);
    dir
}

fn config(root: &Path) -> CollectorConfig {
    CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig {
            max_kept: 0,
            rewalk_every: 1,
            ..ScanConfig::default()
        },
        full_detail: false,
        sys_dev_block: fixture("sys-dev-block"),
    }
}

/// The app at 80x24 over a collector that takes a first look, as the
/// TUI sets it up; no refresh yet.
fn app(root: &Path) -> (App, Collector) {
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, 80, 24);
    let mut c = Collector::new(config(root));
    c.set_grade_limits(true);
    c.defer_start_up();
    c.set_first_look(true);
    (a, c)
}

/// The first look, delivered to the app.
fn look(a: &mut App, c: &mut Collector) -> Option<Vec<String>> {
    let p = c.first_look(Instant::now())?;
    let unlisted = p.unlisted.iter().map(ToString::to_string).collect();
    send(a, c, Msg::Collected(Collected::Partial(Box::new(p))));
    Some(unlisted)
}

use cgtop::app::Msg;

const FIRST_SCREEN: [&str; 9] = [
    "/",
    "  farm +",
    "  idle.slice",
    "    a.service",
    "    b.service",
    "    c.service",
    "  web.slice",
    "    a.service",
    "    b.service",
];

#[test]
fn the_first_look_reads_what_the_first_screen_shows_and_the_refresh_shows_the_same() {
    let dir = farm(35);
    let (mut a, mut c) = app(dir.path());
    let unlisted = look(&mut a, &mut c).expect("a first look on 369 groups");
    assert_eq!(
        unlisted,
        ["/farm"],
        "the large subtree's children are not listed"
    );
    let d = a.data.as_ref().unwrap();
    let g = &d.refresh.snapshot.groups;
    assert_eq!(g.len(), 9, "the groups shown, not the 369");
    assert!(
        g.iter().all(|g| g.hot.memory_current == Some(4096)),
        "levels"
    );
    assert_eq!(d.refresh.limits.len(), 9, "their limits");
    assert_eq!(outline(&a), FIRST_SCREEN, "the farm shows folded");
    assert!(
        a.collapsed.is_empty(),
        "shown folded, not folded: the rule folds"
    );
    // the first refresh: the same screen, every group read
    tick(&mut a, &mut c, 0.0);
    assert_eq!(a.data.as_ref().unwrap().refresh.snapshot.groups.len(), 369);
    assert_eq!(outline(&a), FIRST_SCREEN);
    assert!(folded(&a, "farm"), "folded by the rule now");
    // the rule goes on as without the look: the first rates settle it
    tick(&mut a, &mut c, 1.0);
    assert!(a.first_screen.settled());
}

fn folded(a: &App, p: &str) -> bool {
    a.collapsed.contains(&GroupPath::new(p))
}

#[test]
fn what_the_operator_did_on_the_first_look_holds_after_the_first_refresh() {
    let dir = farm(35);
    let (mut a, mut c) = app(dir.path());
    look(&mut a, &mut c).unwrap();
    // the farm opened (its children are not listed yet), idle.slice
    // folded, web.slice/b.service selected
    select(&mut a, &mut c, "farm");
    send(&mut a, &mut c, ch('l'));
    select(&mut a, &mut c, "idle.slice");
    send(&mut a, &mut c, ch('h'));
    select(&mut a, &mut c, "web.slice/b.service");
    tick(&mut a, &mut c, 0.0);
    assert_eq!(selected(&a), "/web.slice/b.service");
    assert_eq!(
        visible_paths(&a)[a.cursor],
        GroupPath::new("web.slice/b.service")
    );
    assert!(!folded(&a, "farm"), "opened by hand: its racks show");
    assert!(folded(&a, "idle.slice"));
    let rows = outline(&a);
    assert_eq!(rows.len(), 1 + 1 + 10 + 1 + 1 + 2, "{rows:?}");
    assert!(a.status.is_none(), "nothing said: {:?}", a.status);
}

#[test]
fn groups_gone_or_made_before_the_first_refresh_neither_panic_nor_move_the_selection_silently() {
    let dir = farm(35);
    let root = dir.path();
    let (mut a, mut c) = app(root);
    look(&mut a, &mut c).unwrap();
    select(&mut a, &mut c, "web.slice/a.service");
    remove_group(root, "web.slice/a.service");
    remove_group(root, "farm/rack-3");
    group(root, "new.slice/x.service");
    count_descendants(root, "new.slice/x.service", 2);
    tick(&mut a, &mut c, 0.0);
    assert_eq!(selected(&a), "/web.slice");
    let said = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(said.contains("is gone"), "{said:?}");
    assert!(visible_paths(&a).contains(&GroupPath::new("new.slice/x.service")));
    assert_eq!(visible_paths(&a)[a.cursor], GroupPath::new("web.slice"));
}

#[test]
fn no_first_look_on_a_small_tree_or_without_cgroup_stat_or_once_refreshed() {
    // 10 racks x 25 nodes: 265 groups, the first refresh is as quick
    let dir = farm(25);
    let (mut a, mut c) = app(dir.path());
    assert!(look(&mut a, &mut c).is_none());
    // no cgroup.stat at the start group (a v1 primary hierarchy)
    let dir = farm(35);
    std::fs::remove_file(dir.path().join("cgroup.stat")).unwrap();
    let (mut a, mut c) = app(dir.path());
    assert!(look(&mut a, &mut c).is_none());
    // asked for, but after a refresh: too late
    let dir = farm(35);
    let (mut a, mut c) = app(dir.path());
    tick(&mut a, &mut c, 0.0);
    assert!(look(&mut a, &mut c).is_none());
}

#[test]
fn a_first_look_that_comes_after_a_refresh_changes_nothing() {
    let dir = farm(35);
    let (mut a, mut c) = app(dir.path());
    let p: PartialRefresh = c.first_look(Instant::now()).unwrap();
    tick(&mut a, &mut c, 0.0);
    let before = outline(&a);
    app::update(&mut a, Msg::Collected(Collected::Partial(Box::new(p))));
    assert_eq!(outline(&a), before);
    assert_eq!(a.data.as_ref().unwrap().refresh.snapshot.groups.len(), 369);
}

#[test]
fn the_collector_thread_sends_the_first_look_then_the_first_refresh() {
    let dir = farm(35);
    let mut c = Collector::new(config(dir.path()));
    c.defer_start_up();
    c.set_first_look(true);
    let (tx, rx) = mpsc::channel::<Collected>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
    collector::spawn_from(c, Instant::now(), Duration::from_secs(60), tx, cmd_rx).unwrap();
    let first = rx.recv_timeout(Duration::from_secs(20)).expect("a message");
    let Collected::Partial(p) = first else {
        panic!("the first look first");
    };
    assert_eq!(p.refresh.snapshot.groups.len(), 9);
    let second = rx.recv_timeout(Duration::from_secs(20)).expect("a message");
    let Collected::Refresh(r) = second else {
        panic!("then the first refresh");
    };
    assert_eq!(r.snapshot.groups.len(), 369);
    let _ = cmd_tx.send(Command::Stop);
}

#[test]
fn writes_wait_for_the_first_refresh() {
    let dir = farm(35);
    let (mut a, mut c) = app(dir.path());
    look(&mut a, &mut c).unwrap();
    // a freeze decided on a tree whose farm is not listed: refused
    select(&mut a, &mut c, "web.slice");
    send(&mut a, &mut c, ch('f'));
    assert_eq!(a.mode, cgtop::app::Mode::Normal);
    let said = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(said.contains("writes are off until"), "{said:?}");
    tick(&mut a, &mut c, 0.0);
    assert!(a.writes_off().is_none());
    a.status = None;
    send(&mut a, &mut c, ch('f'));
    let said = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(!said.contains("writes are off"), "{said:?}");
    assert!(
        a.mode != cgtop::app::Mode::Normal || !said.is_empty(),
        "{said:?}"
    );
}

#[test]
fn a_group_argument_and_depth_give_the_look_and_the_refresh_the_same_rows() {
    // `cgtop farm --depth 1`: the farm and its racks, the nodes below
    // the depth listed by neither
    let dir = farm(35);
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::new("farm"),
        Duration::from_secs(1),
    );
    resize(&mut a, 80, 24);
    let mut cfg = config(dir.path());
    cfg.start = GroupPath::new("farm");
    cfg.scan.max_depth = Some(1);
    let mut c = Collector::new(cfg);
    c.defer_start_up();
    c.set_first_look(true);
    let unlisted = look(&mut a, &mut c).expect("360 groups below the farm");
    assert!(
        unlisted.is_empty(),
        "below the depth is not unlisted: {unlisted:?}"
    );
    let shown = outline(&a);
    assert_eq!(shown.len(), 11, "{shown:?}");
    assert_eq!(a.data.as_ref().unwrap().refresh.snapshot.groups.len(), 11);
    tick(&mut a, &mut c, 0.0);
    assert_eq!(outline(&a), shown);
}
