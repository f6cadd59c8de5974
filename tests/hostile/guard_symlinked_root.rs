//! The lockout guard when the hierarchy was given through a
//! symlink (`--root /sys/fs/cgroup/cpu`, a symlink to `cpu,cpuacct` on
//! most hosts). The guard matched the path as given against mountinfo's
//! mount points (real paths), found no hierarchy, and so protected no
//! group: freezing or killing the operator's own session needed no typed
//! name. Real kernel: a group of the v1 sandbox (`common::sandbox_v1`)
//! in the freezer hierarchy holding a `sleep` the test started (the
//! stand-in for cgtop), removed on drop. Without root or a v1 freezer
//! hierarchy the test prints `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1::V1Sandbox;
use cgtop::source::safety;

#[test]
fn a_hierarchy_given_through_a_symlink_still_protects_the_session() {
    let Some(mut sb) = V1Sandbox::or_skip("symlinked-root", &["freezer"]) else {
        return;
    };
    let mount = sb.hier("freezer").mount.clone();
    let g = sb.path("");
    let pid = sb.spawn_in(&g, &["sleep", "300"]);
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("freezer");
    std::os::unix::fs::symlink(&mount, &link).unwrap();
    // through the mount point itself: the stand-in's group is protected
    let direct = safety::discover_for(&mount, pid);
    assert_eq!(direct.own, Some(g.clone()));
    // and the same through the symlink
    let p = safety::discover_for(&link, pid);
    assert_eq!(
        p.own,
        Some(g),
        "through a symlink the guard protects nothing"
    );
}
