//! A file mounted over a group's file on the real cgroupfs: the scan
//! opens a group's files by name from its directory and, on kernfs
//! reached without crossing a mount, skips the `fstat` that refuses a
//! FIFO, socket or device (kernfs has none). A FIFO bound over cpu.stat
//! crosses a mount: it is still looked at and refused ("a FIFO"), on the
//! first refresh (the files the first walk opens) and after, never read
//! and never waited on.
//!
//! Under `cgtop-test-<pid>-<n>` below the cgroup2 root, unmounted and
//! removed afterwards, also when a test fails. Skipped, with the reason,
//! when not root, without a writable cgroup2, or where mount is refused.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::sandbox::Sandbox;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Unmounts on drop (before the sandbox's rmdir, which a mount would stop).
struct Bound(PathBuf);

impl Drop for Bound {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_fifo_mounted_over_a_hot_file_is_refused_from_the_first_refresh() {
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("over");
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let target = t.dir("over").join("cpu.stat");
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(&fifo)
        .arg(&target)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        println!("skipped: mount --bind refused here");
        return;
    }
    let _bound = Bound(target);
    let mut c = t.collector();
    let group = t.path("over");
    for n in 0..2 {
        let began = Instant::now();
        let r = c.refresh(Duration::from_secs(n));
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "refresh {n} waited"
        );
        let g = r.snapshot.find(&group).expect("the group is listed");
        let why: Vec<(&str, &str)> = (g.hot.unreadable.iter())
            .map(|u| (u.file.as_str(), u.error.as_str()))
            .collect();
        assert!(
            why.iter()
                .any(|(f, e)| *f == "cpu.stat" && e.contains("a FIFO")),
            "refresh {n}: {why:?}"
        );
        assert!(
            g.hot.cpu.is_none(),
            "refresh {n}: nothing read from the FIFO"
        );
        // the other groups' files are read as ever
        let top = r.snapshot.find(&t.top).expect("the top");
        assert!(top.hot.cpu.is_some(), "refresh {n}");
    }
}
