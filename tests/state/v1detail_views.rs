//! Issue 11, item 2 (the detail part): the detail pages of a group on a
//! hybrid layout show the v1 figures where they are (CFS quota as "50%",
//! shares, memory limit / soft limit / memsw, failcnt and OOM kills,
//! FREEZING, v1 memory.stat, blkio throttle limits and weight, every
//! hierarchy's raw files), and say "not in the v1 memory hierarchy" for a
//! group that is not there. Keys through `app::update`, screens drawn with
//! the real view, over the fixture layout of `v1detail_fixture`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::v1detail_fixture;

use cgtop::app::App;
use cgtop::source::collector::Collector;
use common::*;
use std::sync::Arc;
use v1detail_fixture::{hiers_of, layout_tree, WEB, WORKER};

/// The app on the layout's cgroup2 part (this host's capture), reading
/// each group's detail from every hierarchy, with `path` inspected.
fn on_layout(path: &str, w: u16, h: u16) -> (App, Collector, tempfile::TempDir) {
    let t = layout_tree();
    let (mut a, mut c) = app_on(&t.path().join("unified"), hybrid_mount(), w, h);
    c.set_hiers(Arc::new(hiers_of(t.path())));
    select(&mut a, &mut c, path);
    tick(&mut a, &mut c, 1.0);
    read_inspection(&mut a, &mut c, 1.0);
    (a, c, t)
}

#[test]
fn overview_of_a_group_in_every_v1_hierarchy() {
    let (a, _c, _t) = on_layout(WEB, 120, 40);
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("quota=50% of a CPU (50000 / 100000 us)  shares=512"),
        "{s}"
    );
    assert!(s.contains("limit=64.0M  soft=32.0M"), "{s}");
    assert!(s.contains("failcnt 3  OOM kills 2"), "{s}");
    assert!(s.contains("FREEZING (freezer.state)"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn overview_of_a_group_not_in_the_v1_memory_hierarchy() {
    let (a, _c, _t) = on_layout(WORKER, 120, 40);
    let s = screen(&a, 120, 40);
    assert!(s.contains("not in the v1 memory hierarchy"), "{s}");
    assert!(
        s.contains("quota=max (period 100000 us)  shares=1024"),
        "{s}"
    );
    insta::assert_snapshot!(s);
}

#[test]
fn memory_page_with_v1_memory_stat() {
    let (mut a, mut c, _t) = on_layout(WEB, 120, 40);
    send(&mut a, &mut c, ch('2'));
    let s = screen(&a, 120, 40);
    assert!(s.contains("memory.oom_control  oom_kill 2"), "{s}");
    assert!(s.contains("dirty"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn memory_page_of_a_group_not_in_the_v1_memory_hierarchy() {
    let (mut a, mut c, _t) = on_layout(WORKER, 120, 40);
    send(&mut a, &mut c, ch('2'));
    let s = screen(&a, 120, 40);
    assert!(s.contains("not in the v1 memory hierarchy"), "{s}");
}

#[test]
fn io_page_with_blkio_throttle_limits_and_weight() {
    let (mut a, mut c, _t) = on_layout(WEB, 120, 40);
    send(&mut a, &mut c, ch('3'));
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("blkio.throttle  rbps 1.00 MiB/s  wbps 2.00 MiB/s  riops 100  wiops max"),
        "{s}"
    );
    assert!(s.contains("blkio weight default 200"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn raw_page_lists_every_hierarchy_under_its_name() {
    let (mut a, mut c, _t) = on_layout(WEB, 100, 160);
    send(&mut a, &mut c, ch('5'));
    // the detail alone (`z` twice): every file on one screen
    send(&mut a, &mut c, ch('z'));
    send(&mut a, &mut c, ch('z'));
    let s = screen(&a, 100, 160);
    assert!(!s.contains("more: ]"), "{s}");
    assert!(s.contains("-- v1 memory --"), "{s}");
    assert!(s.contains("memory.limit_in_bytes: 67108864"), "{s}");
    insta::assert_snapshot!(s);
}
