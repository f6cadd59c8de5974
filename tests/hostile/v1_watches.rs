//! The v1 scanner's inotify watches. A delegated user of a v1
//! subtree can make directories without limit (v1 has no
//! cgroup.max.descendants), and cgtop, as root, added one inotify watch
//! per group: watches are counted per user against
//! fs.inotify.max_user_watches, so a user's directories spent root's
//! watches, which PID 1 (systemd) and every other root daemon share. The
//! scanner now adds at most `MAX_WATCHES`; the groups beyond are watched
//! by their link count within the descriptor budget, or seen by the
//! periodic walk. A fixture tree laid out like a v1 hierarchy (inotify
//! works on any directory). This file holds one test: it counts the
//! watches of the whole process (/proc/self/fdinfo).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::source::hier::Hier;
use cgtop::source::scan::{ScanConfig, ScanKind, Scanner, MAX_WATCHES};
use std::path::PathBuf;
use std::sync::Arc;

/// Every inotify watch this process holds: the `inotify wd:` lines of
/// /proc/self/fdinfo/*.
fn watches() -> usize {
    std::fs::read_dir("/proc/self/fdinfo")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|t| t.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

#[test]
fn a_user_making_many_groups_does_not_spend_roots_inotify_watches() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    std::fs::write(r.join("cgroup.procs"), "").unwrap();
    std::fs::write(r.join("cpuacct.usage"), "1000\n").unwrap();
    let n = MAX_WATCHES + 500;
    for i in 0..n {
        let d = r.join(format!("u{i}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("cpuacct.usage"), "1000\n").unwrap();
    }
    let before = watches();
    let mut s = Scanner::of_kind(
        Arc::new(Hier::open(r).unwrap()),
        ScanKind::V1 { procs: true },
        PathBuf::new(),
        ScanConfig {
            rewalk_every: 0,
            ..ScanConfig::default()
        },
    );
    let (g, _) = s.scan();
    assert_eq!(g.len(), n + 1);
    let added = watches() - before;
    assert!(added > 0, "inotify is used");
    assert!(added <= MAX_WATCHES, "{added} watches for {} groups", n + 1);
    // a group made under a watched or an unwatched one is still seen
    std::fs::create_dir(r.join("u0/new")).unwrap();
    std::fs::create_dir(r.join(format!("u{}/new", n - 1))).unwrap();
    let mut seen = 0;
    for _ in 0..3 {
        seen = s.scan().0.len();
    }
    assert_eq!(seen, n + 3);
}
