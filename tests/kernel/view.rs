//! The read path against this machine's real cgroup2 hierarchy, as root:
//! groups created here appear, a busy process shows about 100 % of a
//! core, a frozen group shows the frozen mark, and a group removed between
//! refreshes drops out (the selection moves to its parent).
//!
//! Everything happens under `cgtop-test-<pid>-<n>` directly below the
//! cgroup2 root and is removed afterwards, also when a test fails.
//! Skipped, with the reason, when not root or without a writable cgroup2.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{self, App, HostInfo, Msg};
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collected, Refresh};
use common::sandbox::Sandbox;
use common::wait_until;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

fn find<'a>(r: &'a Refresh, p: &GroupPath) -> Option<(usize, &'a cgtop::model::GroupSample)> {
    r.snapshot
        .groups
        .iter()
        .enumerate()
        .find(|(_, g)| &g.path == p)
}

#[test]
fn created_groups_appear() {
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("a.slice/b c.service");
    let mut c = t.collector();
    let r = c.refresh(Duration::ZERO);
    assert!(find(&r, &t.path("a.slice")).is_some());
    assert!(
        find(&r, &t.path("a.slice/b c.service")).is_some(),
        "names with spaces are read"
    );
    // a group created after the first scan is picked up on the next one
    t.mkdir("late");
    let r = c.refresh(Duration::from_secs(1));
    assert!(
        find(&r, &t.path("late")).is_some(),
        "nr_descendants moved, so the tree was re-listed"
    );
}

/// CPU time of a process from /proc/PID/stat (utime + stime), in seconds.
fn proc_cpu_secs(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
    // fields after the comm: state is [0], utime [11], stime [12]
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

#[test]
fn busy_process_shows_a_full_core() {
    let _busy = crate::common::one_busy_loop_at_a_time();
    let Some(mut t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("busy");
    let pid = t.spawn_in("busy", "while :; do :; done");
    let mut c = t.collector();
    sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    let p0 = proc_cpu_secs(pid);
    c.refresh(Duration::ZERO);
    sleep(Duration::from_secs(1));
    let r = c.refresh(t0.elapsed());
    let p1 = proc_cpu_secs(pid);
    let wall = t0.elapsed().as_secs_f64();
    let (i, _) = find(&r, &t.path("busy")).unwrap();
    let cpu = r.rates[i].cpu_pct.expect("a rate on the second refresh");
    // what the process itself was charged over the same window
    let truth = (p1 - p0) / wall * 100.0;
    println!("busy loop: cgtop {cpu:.1} % of a core, /proc says {truth:.1} %");
    // on a loaded machine the loop gets what the scheduler gives it; what
    // must hold is that cgtop reports what the kernel charged
    assert!(cpu > 10.0, "the busy loop ran, got {cpu:.1} %");
    assert!(
        cpu <= 105.0,
        "one process cannot use more than one core: {cpu:.1} %"
    );
    assert!(
        (cpu - truth).abs() < 12.0,
        "cgtop {cpu:.1} % vs the process's own {truth:.1} %"
    );
}

#[test]
fn frozen_group_shows_the_mark() {
    let Some(mut t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("ice");
    t.spawn_in("ice", "exec sleep 1000");
    std::fs::write(t.dir("ice").join("cgroup.freeze"), "1").unwrap();
    // the kernel freezes the group
    t.wait_events("ice", "frozen 1");
    let mut c = t.collector();
    let r = c.refresh(Duration::ZERO);
    let (_, g) = find(&r, &t.path("ice")).unwrap();
    let ev = g.hot.events.unwrap();
    assert!(ev.is_frozen() && ev.is_populated());
    // and the batch output of the real binary shows F in the state column
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args([&t.rel, "-b", "-n", "1", "-d", "0.2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("ice "))
        .expect("ice row");
    // (the fourth cell, `!`, marks a group with an event line above)
    assert!(
        line.ends_with("PF  "),
        "populated and frozen marks: {line:?}"
    );
}

#[test]
fn group_removed_between_refreshes_is_routine() {
    let Some(mut t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("parent/child");
    t.spawn_in("parent/child", "exec sleep 1000");
    let mut c = t.collector();
    let r1 = c.refresh(Duration::ZERO);
    let child = t.path("parent/child");
    assert!(find(&r1, &child).is_some());
    let mount = cgtop::source::mount::discover().unwrap();
    let mut app = App::new(
        HostInfo::default(),
        mount,
        GroupPath::new(&t.rel),
        Duration::from_secs(1),
    );
    app::update(&mut app, Msg::Collected(Collected::Refresh(Box::new(r1))));
    app.selected = Some(child.clone());
    // the group goes away between two refreshes
    t.kill_all();
    wait_until(
        "could not remove the child group",
        Duration::from_secs(5),
        || std::fs::remove_dir(t.dir("parent/child")).is_ok(),
    );
    let r2 = c.refresh(Duration::from_secs(1));
    assert!(
        find(&r2, &child).is_none(),
        "a removed group drops out of the snapshot"
    );
    assert!(find(&r2, &t.path("parent")).is_some());
    app::update(&mut app, Msg::Collected(Collected::Refresh(Box::new(r2))));
    assert_eq!(
        app.selected,
        Some(t.path("parent")),
        "selection moves to the parent"
    );
    let status = app
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        status.contains("is gone"),
        "the operator is told: {status:?}"
    );
}

/// The sandbox reads mountinfo itself (what the tests may touch must not
/// rest on the code under test); it must find the mount cgtop reads, or
/// the binary started with the sandbox's group would look elsewhere.
#[test]
fn the_sandbox_is_in_the_mount_cgtop_reads() {
    let Some(t) = Sandbox::or_skip() else { return };
    let mount = cgtop::source::mount::discover().unwrap();
    assert_eq!(t.root, mount.root);
}

#[test]
fn the_sandbox_finds_the_first_cgroup2_mount() {
    use common::sandbox::cgroup2_mount;
    let hybrid = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
90 41 0:38 / /mnt/bind\\040two rw,relatime - cgroup2 cgroup2 rw
";
    assert_eq!(
        cgroup2_mount(hybrid).as_deref(),
        Some(std::path::Path::new("/sys/fs/cgroup/unified"))
    );
    let escaped = "29 23 0:26 / /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw,nsdelegate\n";
    assert_eq!(
        cgroup2_mount(escaped).as_deref(),
        Some(std::path::Path::new("/sys/fs/my cg"))
    );
    // a cgroup2 source name on another file system is not a mount of it
    let other = "29 23 0:26 / /mnt/x rw - tmpfs cgroup2 rw\n";
    assert_eq!(cgroup2_mount(other), None);
}

#[test]
fn the_sandbox_refuses_paths_outside_it() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let Some(t) = Sandbox::or_skip() else { return };
    let sibling = GroupPath::new(&format!("{}x", t.rel));
    for bad in [GroupPath::root(), GroupPath::new("init.scope"), sibling] {
        let r = catch_unwind(AssertUnwindSafe(|| t.group_dir(&bad)));
        assert!(r.is_err(), "{bad} was let through");
    }
    assert!(catch_unwind(AssertUnwindSafe(|| t.dir("../x"))).is_err());
    assert_eq!(t.dir("a"), t.root.join(&t.rel).join("a"));
}
