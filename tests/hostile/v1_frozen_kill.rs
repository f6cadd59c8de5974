//! The kill fallback on cgroup v1 (no cgroup.kill) of a group
//! frozen through freezer.state. A v1-frozen process does not die of
//! SIGKILL until it is thawed, and the fallback froze the group again
//! after signalling: the processes stayed, killed and frozen, while the
//! outcome said they were killed. Real kernel: a `cgtop-test-<pid>-<n>`
//! group in the v1 freezer hierarchy with a `sleep` the test started;
//! thawed, the child killed and the group removed on drop. Without root
//! or a v1 freezer hierarchy the test prints `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::write;
use cgtop::model::GroupPath;
use cgtop::source::hier::Hiers;
use cgtop::source::writer;
use std::os::unix::process::ExitStatusExt;
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
    name: String,
    child: Option<Child>,
}

impl Drop for Box1 {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("freezer.state"), "THAWED");
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
        let end = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(&self.dir).is_err() && self.dir.exists() && Instant::now() < end {
            sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn killing_a_frozen_v1_group_kills_its_processes_and_keeps_it_frozen() {
    if !rustix::process::geteuid().is_root() {
        return println!("skipped: not root");
    }
    let Some(mount) = v1_mount("freezer") else {
        return println!("skipped: no v1 freezer hierarchy");
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let name = format!(
        "cgtop-test-{}-{}",
        std::process::id(),
        crate::common::unique_n()
    );
    let dir = mount.join(&name);
    std::fs::create_dir(&dir).unwrap();
    let mut b = Box1 {
        dir,
        name,
        child: None,
    };
    let c = Command::new("sleep").arg("300").spawn().unwrap();
    let pid = c.id();
    b.child = Some(c);
    std::fs::write(b.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    std::fs::write(b.dir.join("freezer.state"), "FROZEN").unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(b.dir.join("freezer.state"))
        .unwrap()
        .trim()
        != "FROZEN"
    {
        assert!(Instant::now() < end, "the group never froze");
        sleep(Duration::from_millis(10));
    }
    let hiers = Hiers::open(layout);
    let h = hiers.layout.holder("freezer").unwrap();
    let o = writer::perform_on(&hiers, &write::kill(&GroupPath::new(&b.name)).on(h));
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
        "the killed process stays alive, frozen"
    );
    // frozen before, frozen after
    assert_eq!(
        std::fs::read_to_string(b.dir.join("freezer.state"))
            .unwrap()
            .trim(),
        "FROZEN"
    );
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
    if !rustix::process::geteuid().is_root() {
        return println!("skipped: not root");
    }
    let Some(mount) = v1_mount("freezer") else {
        return println!("skipped: no v1 freezer hierarchy");
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let name = format!(
        "cgtop-test-{}-{}",
        std::process::id(),
        crate::common::unique_n()
    );
    let dir = mount.join(&name);
    std::fs::create_dir(&dir).unwrap();
    let mut b = Box1 {
        dir,
        name,
        child: None,
    };
    let c = Command::new("sleep").arg("300").spawn().unwrap();
    let pid = c.id();
    b.child = Some(c);
    std::fs::write(b.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    let state = b.dir.join("freezer.state");
    let mut watchdog = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 30; echo THAWED > '{}'", state.display()))
        .spawn()
        .unwrap();
    let (group, tasks) = (GroupPath::new(&b.name), b.dir.join("tasks"));
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
    let child = b.child.as_mut().unwrap();
    let end = Instant::now() + Duration::from_secs(3);
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < end,
            "the group's other process was not killed"
        );
        sleep(Duration::from_millis(20));
    }
    assert_eq!(std::fs::read_to_string(&state).unwrap().trim(), "THAWED");
}
