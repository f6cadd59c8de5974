//! The lockout guard when the hierarchy was given through a
//! symlink (`--root /sys/fs/cgroup/cpu`, a symlink to `cpu,cpuacct` on
//! most hosts). The guard matched the path as given against mountinfo's
//! mount points (real paths), found no hierarchy, and so protected no
//! group: freezing or killing the operator's own session needed no typed
//! name. Real kernel: a `cgtop-test-<pid>-<n>` group in the v1 freezer
//! hierarchy holding a `sleep` the test started (the stand-in for
//! cgtop), removed on drop. Without root or a v1 freezer hierarchy the
//! test prints `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::GroupPath;
use cgtop::source::safety;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::thread::sleep;
use std::time::{Duration, Instant};

fn v1_mount(controller: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split(' ');
        (post.next()? == "cgroup").then_some(())?;
        let opts = post.nth(1)?;
        let point = pre.split(' ').nth(4)?;
        opts.split(',')
            .any(|o| o == controller)
            .then(|| PathBuf::from(point))
    })
}

struct Box1 {
    dir: PathBuf,
    child: Child,
}

impl Drop for Box1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let end = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(&self.dir).is_err() && self.dir.exists() && Instant::now() < end {
            sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn a_hierarchy_given_through_a_symlink_still_protects_the_session() {
    if !rustix::process::geteuid().is_root() {
        return println!("skipped: not root");
    }
    let Some(mount) = v1_mount("freezer") else {
        return println!("skipped: no v1 freezer hierarchy");
    };
    let name = format!(
        "cgtop-test-{}-{}",
        std::process::id(),
        crate::common::unique_n()
    );
    let dir = mount.join(&name);
    std::fs::create_dir(&dir).unwrap();
    let b = Box1 {
        child: Command::new("sleep").arg("300").spawn().unwrap(),
        dir,
    };
    let pid = b.child.id();
    std::fs::write(b.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("freezer");
    std::os::unix::fs::symlink(&mount, &link).unwrap();
    // through the mount point itself: the stand-in's group is protected
    let direct = safety::discover_for(&mount, pid);
    assert_eq!(direct.own, Some(GroupPath::new(&name)));
    // and the same through the symlink
    let p = safety::discover_for(&link, pid);
    assert_eq!(
        p.own,
        Some(GroupPath::new(&name)),
        "through a symlink the guard protects nothing"
    );
}
