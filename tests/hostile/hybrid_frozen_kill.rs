//! K on a hybrid host (this one) of a group frozen through the
//! v1 freezer. cgtop freezes through v1's freezer.state where v1 holds
//! the freezer, and kills through cgroup2's cgroup.kill where the group
//! is in cgroup2: a v1-frozen process does not die of SIGKILL until it is
//! thawed, so the processes stayed, killed and frozen, while the outcome
//! said done. The same when the v1 fallback signals in another v1
//! hierarchy than the freezer's (a v1-only host, name=systemd). Real kernel: `cgtop-test-<pid>-<n>` in cgroup2 and in the
//! v1 freezer hierarchy, a `sleep` the test started in both; thawed,
//! killed and removed on drop. Without root, cgroup2 or a v1 freezer the
//! test prints `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox;

use cgtop::model::host::layout::HierId;
use cgtop::model::write;
use cgtop::model::GroupPath;
use cgtop::source::hier::Hiers;
use cgtop::source::{safety, writer};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Child;
use std::thread::sleep;
use std::time::{Duration, Instant};

struct Box2 {
    dirs: Vec<PathBuf>,
    freezer: PathBuf,
    child: Option<Child>,
}

impl Drop for Box2 {
    fn drop(&mut self) {
        let _ = std::fs::write(self.freezer.join("freezer.state"), "THAWED");
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
        let end = Instant::now() + Duration::from_secs(10);
        for d in &self.dirs {
            while std::fs::remove_dir(d).is_err() && d.exists() && Instant::now() < end {
                sleep(Duration::from_millis(20));
            }
        }
    }
}

/// `via`: the hierarchy K goes through (None: cgroup2's cgroup.kill;
/// Some(name): the fallback in that v1 hierarchy, as on a v1-only host
/// where the group's freezer is not where K signals).
fn hybrid_frozen_kill(checked: bool, via: Option<&str>) {
    if !rustix::process::geteuid().is_root() {
        return println!("skipped: not root");
    }
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let (Some(v2), Some(HierId::V1(i))) = (layout.v2.clone(), layout.holder("freezer")) else {
        return println!("skipped: not a hybrid host with a v1 freezer");
    };
    let other = match via {
        None => None,
        Some(n) => match layout.v1.iter().position(|m| m.label() == n) {
            Some(k) => Some(k),
            None => return println!("skipped: no v1 {n} hierarchy"),
        },
    };
    let name = format!(
        "cgtop-test-{}-{}",
        std::process::id(),
        crate::common::unique_n()
    );
    let freezer = layout.v1[i].dir.join(&name);
    let killed_in = match other {
        None => v2.join(&name),
        Some(k) => layout.v1[k].dir.join(&name),
    };
    let mut b = Box2 {
        dirs: Vec::new(),
        freezer: freezer.clone(),
        child: None,
    };
    for d in [killed_in, freezer.clone()] {
        std::fs::create_dir(&d).unwrap();
        b.dirs.push(d);
    }
    // in a session of its own, as every workload the guard checks
    let c = sandbox::spawn_detached(&["sleep", "300"], |_| ());
    let pid = c.id().to_string();
    b.child = Some(c);
    for d in &b.dirs {
        std::fs::write(d.join("cgroup.procs"), &pid).unwrap();
    }
    std::fs::write(freezer.join("freezer.state"), "FROZEN").unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(freezer.join("freezer.state"))
        .unwrap()
        .trim()
        != "FROZEN"
    {
        assert!(Instant::now() < end, "never froze");
        sleep(Duration::from_millis(10));
    }
    let hiers = Hiers::open(layout);
    // K of a group that is in cgroup2: its cgroup.kill
    let op = match other {
        None => write::kill(&GroupPath::new(&name)),
        Some(k) => write::kill(&GroupPath::new(&name)).on(HierId::V1(k)),
    };
    let o = if checked {
        safety::perform_checked_on(&hiers, &op, None, std::process::id())
    } else {
        writer::perform_on(&hiers, &op)
    };
    assert!(o.is_ok(), "{}", o.summary());
    let child = b.child.as_mut().unwrap();
    let end = Instant::now() + Duration::from_secs(3);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > end {
            break None;
        }
        sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status.and_then(|s| s.signal()),
        Some(9),
        "killed through cgroup.kill, it stays alive, frozen in v1"
    );
    assert_eq!(
        std::fs::read_to_string(freezer.join("freezer.state"))
            .unwrap()
            .trim(),
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
