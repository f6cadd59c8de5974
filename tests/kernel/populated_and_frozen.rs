//! A group's populated and frozen (cgroup.events) against this machine's
//! real cgroup2 hierarchy, as root: the collector reads each group's
//! cgroup.events again only after the kernel notified a change of it
//! (IN_MODIFY), and the figures follow the kernel's file when a process
//! comes and goes and when the group is frozen and thawed.
//!
//! Everything happens under `cgtop-test-<pid>-<n>` (`Sandbox`) and is
//! removed afterwards, also when a test fails. Skipped, with the reason,
//! when not root or without a writable cgroup2.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, Refresh};
use common::sandbox::Sandbox;
use std::time::{Duration, Instant};

/// Refreshes until `g`'s (populated, frozen) is `want` (the kernel
/// notifies from a work queue, a moment after the file changed); panics
/// after 5 s. Returns the refresh that showed it.
fn until(c: &mut Collector, n: &mut u64, g: &GroupPath, want: (bool, bool)) -> Refresh {
    let t0 = Instant::now();
    loop {
        *n += 1;
        let r = c.refresh(Duration::from_secs(*n));
        let ev = (r.snapshot.groups.iter())
            .find(|x| &x.path == g)
            .and_then(|x| x.hot.events);
        let now = ev.map(|e| (e.populated, e.frozen));
        if now == Some((Some(want.0), Some(want.1))) {
            return r;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{g} never showed {want:?}: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn populated_and_frozen_follow_the_kernel_with_cgroup_events_read_only_after_a_change() {
    let Some(mut t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("app");
    let app = t.path("app");
    let mut c = t.collector();
    let mut n = 0;
    // the first read; the second sets the watches (and reads); then steady
    until(&mut c, &mut n, &app, (false, false));
    let watched = c.refresh(Duration::from_secs(100)).snapshot.cost.files_read;
    let steady = c.refresh(Duration::from_secs(101)).snapshot.cost.files_read;
    n = 101;
    // the sandbox's top and app: neither cgroup.events read again
    assert_eq!(steady + 2, watched, "cgroup.events not read when unchanged");
    t.spawn_in("app", "exec sleep 60");
    until(&mut c, &mut n, &app, (true, false));
    std::fs::write(t.dir("app").join("cgroup.freeze"), "1").unwrap();
    t.wait_events("app", "frozen 1");
    until(&mut c, &mut n, &app, (true, true));
    std::fs::write(t.dir("app").join("cgroup.freeze"), "0").unwrap();
    until(&mut c, &mut n, &app, (true, false));
    t.kill_all();
    until(&mut c, &mut n, &app, (false, false));
    // settled: read only after a change again
    let settled = c
        .refresh(Duration::from_secs(n + 1))
        .snapshot
        .cost
        .files_read;
    assert_eq!(settled, steady);
}
