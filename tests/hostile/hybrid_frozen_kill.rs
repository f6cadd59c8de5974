//! K on a hybrid host (this one) of a group frozen through the
//! v1 freezer. cgtop freezes through v1's freezer.state where v1 holds
//! the freezer, and kills through cgroup2's cgroup.kill where the group
//! is in cgroup2: a v1-frozen process does not die of SIGKILL until it is
//! thawed, so the processes stayed, killed and frozen, while the outcome
//! said done. The same when the v1 fallback signals in another v1
//! hierarchy than the freezer's (a v1-only host, name=systemd). Real
//! kernel: a group of the v1 sandbox (`common::sandbox_v1`) in cgroup2
//! and the v1 freezer hierarchy (and name=systemd's), a `sleep` the test
//! started in each; thawed, killed and removed on drop. Without root,
//! cgroup2 or a v1 freezer the test prints `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1::V1Sandbox;

use cgtop::model::host::layout::HierId;
use cgtop::model::write;
use cgtop::source::hier::Hiers;
use cgtop::source::{safety, writer};
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

/// `via`: the hierarchy K goes through (None: cgroup2's cgroup.kill;
/// Some(name): the fallback in that v1 hierarchy, as on a v1-only host
/// where the group's freezer is not where K signals).
fn hybrid_frozen_kill(checked: bool, via: Option<&str>) {
    let mut controllers = vec!["freezer"];
    controllers.extend(via);
    let Some(mut sb) = V1Sandbox::or_skip("hybrid-kill", &controllers) else {
        return;
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let (Some(_), Some(HierId::V1(_))) = (&layout.v2, layout.holder("freezer")) else {
        return println!("skipped: not a hybrid host with a v1 freezer");
    };
    let other = via.map(|n| {
        layout
            .v1
            .iter()
            .position(|m| m.label() == n)
            .expect("the sandbox's hierarchy is in the layout")
    });
    let g = sb.path("");
    // in a session of its own, as every workload the guard checks, and
    // in the group in every hierarchy of the sandbox
    let pid = sb.spawn_in(&g, &["sleep", "300"]);
    sb.freeze(&g);
    let hiers = Hiers::open(layout);
    // K of a group that is in cgroup2: its cgroup.kill
    let op = match other {
        None => write::kill(&g),
        Some(k) => write::kill(&g).on(HierId::V1(k)),
    };
    let o = if checked {
        safety::perform_checked_on(&hiers, &op, None, std::process::id())
    } else {
        writer::perform_on(&hiers, &op)
    };
    assert!(o.is_ok(), "{}", o.summary());
    let status = sb.wait_child(pid, Duration::from_secs(3));
    assert_eq!(
        status.and_then(|s| s.signal()),
        Some(9),
        "killed through cgroup.kill, it stays alive, frozen in v1"
    );
    assert_eq!(
        sb.read("freezer", &g, "freezer.state").trim(),
        "FROZEN",
        "frozen before, frozen after"
    );
}

#[test]
fn a_v1_frozen_group_killed_through_cgroup_kill_dies() {
    hybrid_frozen_kill(false, None);
}

#[test]
fn the_same_through_the_guarded_writer() {
    hybrid_frozen_kill(true, None);
}

#[test]
fn a_v1_frozen_group_killed_through_the_fallback_in_another_hierarchy_dies() {
    // K on a v1-only host signals in the primary (name=systemd) when the
    // group's freezer hierarchy was not inspected
    hybrid_frozen_kill(false, Some("name=systemd"));
}
