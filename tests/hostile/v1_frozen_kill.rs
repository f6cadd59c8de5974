//! The kill fallback on cgroup v1 (no cgroup.kill) of a group
//! frozen through freezer.state. A v1-frozen process does not die of
//! SIGKILL until it is thawed, and the fallback froze the group again
//! after signalling: the processes stayed, killed and frozen, while the
//! outcome said they were killed. Real kernel: a group of the v1 sandbox
//! (`common::sandbox_v1`) in the freezer hierarchy with a `sleep` the
//! test started; thawed, the child killed and the group removed on drop.
//! Without root or a v1 freezer hierarchy the test prints
//! `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1::V1Sandbox;
use cgtop::model::write;
use cgtop::source::hier::Hiers;
use cgtop::source::writer;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn killing_a_frozen_v1_group_kills_its_processes_and_keeps_it_frozen() {
    let Some(mut sb) = V1Sandbox::or_skip("frozen-kill", &["freezer"]) else {
        return;
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let g = sb.path("");
    let pid = sb.spawn_in(&g, &["sleep", "300"]);
    sb.freeze(&g);
    let hiers = Hiers::open(layout);
    let h = hiers.layout.holder("freezer").unwrap();
    let o = writer::perform_on(&hiers, &write::kill(&g).on(h));
    assert!(o.is_ok(), "{}", o.summary());
    let status = sb.wait_child(pid, Duration::from_secs(10));
    assert_eq!(
        status.and_then(|s| s.signal()),
        Some(9),
        "the killed process stays alive, frozen"
    );
    // frozen before, frozen after
    assert_eq!(sb.read("freezer", &g, "freezer.state").trim(), "FROZEN");
}

/// The thread id of the caller.
fn gettid() -> u32 {
    rustix::thread::gettid().as_raw_nonzero().get() as u32
}

#[test]
fn killing_a_v1_group_that_holds_cgtop_does_not_freeze_cgtop() {
    // the operator typed the name of the group that holds cgtop: the
    // fallback froze the group first, and so the writer itself, with
    // nothing left to thaw it (here a watchdog thaws it after 30 s; the
    // bound, 10 s, is far below it and far above a loaded machine's
    // write: the 3 s and 2 s they were measured the machine as much)
    let Some(mut sb) = V1Sandbox::or_skip("holds-cgtop", &["freezer"]) else {
        return;
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let g = sb.path("");
    let pid = sb.spawn_in(&g, &["sleep", "300"]);
    let dir = sb.dir_of("freezer", &g);
    let state = dir.join("freezer.state");
    let mut watchdog = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 30; echo THAWED > '{}'", state.display()))
        .spawn()
        .unwrap();
    let (group, tasks) = (g.clone(), dir.join("tasks"));
    // the writer: a thread of this process, in the group (v1 moves one
    // thread through `tasks`); it leaves the group when it ends
    let took = std::thread::spawn(move || {
        std::fs::write(&tasks, gettid().to_string()).unwrap();
        let hiers = Hiers::open(layout);
        let h = hiers.layout.holder("freezer").unwrap();
        let t = Instant::now();
        let o = writer::perform_on(&hiers, &write::kill(&group).on(h));
        (t.elapsed(), o.is_ok())
    })
    .join()
    .unwrap();
    let _ = watchdog.kill();
    let _ = watchdog.wait();
    assert!(took.1);
    assert!(
        took.0 < Duration::from_secs(10),
        "the writer froze itself for {:?}",
        took.0
    );
    assert!(
        sb.wait_child(pid, Duration::from_secs(10)).is_some(),
        "the group's other process was not killed"
    );
    assert_eq!(std::fs::read_to_string(&state).unwrap().trim(), "THAWED");
}
