//! The priming walk of a one-shot run on this host's real cgroupfs: a
//! group whose directory has a link count of 2 (no child group) is not
//! opened nor listed, its files taken from a sibling's listing and its
//! counters opened beneath its parent by `name/file`, in a v1 hierarchy
//! (every group's files the same). The walk must find and read what the
//! plain walk finds, in a v1 rate hierarchy (cpuacct), with groups that
//! have children among leaves; in cgroup2, where siblings' files can
//! differ (thread mode, cgroup.pressure), it lists every group.
//!
//! Skipped (with a line saying so) where not root or the hierarchy is not
//! mounted. Every group is removed on drop, also after a failed assertion.

use cgtop::source::hier::Hier;
use cgtop::source::scan::{ScanConfig, ScanKind, Scanner};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A tree `cgtop-test-<pid>-<n>` in one hierarchy, removed on drop.
struct Tree(PathBuf);

impl Tree {
    fn or_skip(hier_dir: &str) -> Option<Self> {
        let base = Path::new(hier_dir);
        if !rustix::process::geteuid().is_root() || !base.join("cgroup.procs").exists() {
            eprintln!("skipped: needs root and {hier_dir} mounted");
            return None;
        }
        let dir = base.join(format!(
            "cgtop-test-{}-{}",
            std::process::id(),
            crate::common::unique_n()
        ));
        fs::create_dir(&dir).unwrap();
        let t = Tree(dir);
        // slices of leaves, some services with a group below, a chain
        for s in 0..3 {
            for u in 0..6 {
                t.mk(&format!("s{s}.slice/u{u}.service"));
            }
            t.mk(&format!("s{s}.slice/u{s}.service/sub"));
        }
        t.mk("deep/a/b/c");
        t.mk("lone");
        Some(t)
    }

    fn mk(&self, rel: &str) {
        fs::create_dir_all(self.0.join(rel)).unwrap();
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let mut dirs = vec![self.0.clone()];
        let mut i = 0;
        while let Some(d) = dirs.get(i).cloned() {
            i += 1;
            for e in fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(e.path());
                }
            }
        }
        // deepest first: cgroupfs removes only empty groups
        for d in dirs.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
}

/// Each group's path, inode, type and counters as a one-shot run's scans
/// see them (`primed`: a priming scan, then the printed one), and the
/// directories the first scan listed.
fn seen(root: &Path, kind: ScanKind, primed: bool) -> (Vec<String>, u64) {
    let hier = Arc::new(Hier::open(root).unwrap());
    let mut s = Scanner::of_kind(hier, kind, PathBuf::new(), ScanConfig::default());
    s.set_priming(primed);
    let (_, first) = s.scan();
    s.set_priming(false);
    if primed {
        s.read_levels();
    }
    let (g, _) = s.scan();
    let mut rows: Vec<String> = g
        .iter()
        .map(|x| {
            // whether each counter is read (idle groups' CPU may move: a
            // kernel thread charged now and then), the rest as read
            format!(
                "{} {} {:?} cpu={} io={:?} pids={:?} mem={:?} events={:?} nr_procs={:?} unreadable={:?}",
                x.path,
                x.inode,
                x.cgroup_type,
                x.hot.cpu.is_some(),
                x.hot.io,
                x.hot.pids_current,
                x.hot.memory_current,
                x.hot.events,
                x.hot.nr_procs,
                x.hot.unreadable,
            )
        })
        .collect();
    rows.sort();
    (rows, first.dirs_listed)
}

/// `leaves`: whether the hierarchy's leaves are taken by their link count.
fn walked_alike(hier_dir: &str, kind: ScanKind, leaves: bool) {
    let Some(t) = Tree::or_skip(hier_dir) else {
        return;
    };
    let (plain, listed_plain) = seen(&t.0, kind, false);
    let (primed, listed_primed) = seen(&t.0, kind, true);
    assert_eq!(primed, plain);
    // 1 + 3 slices + 18 services + 3 subs + deep/a/b/c + lone = 30 groups
    assert_eq!(plain.len(), 30);
    assert_eq!(listed_plain, 30);
    // listed: the top, the first child of each parent (for its
    // siblings' files) and every group with a child: top, s0-s2, u0-u2
    // (children), deep/a/b (children), and one leaf below each slice
    // where a group with children is not the first listed
    if leaves {
        assert!(
            listed_primed < 20,
            "{listed_primed} directories listed by the priming walk of 30 groups"
        );
    } else {
        assert_eq!(listed_primed, 30);
    }
}

#[test]
fn a_priming_walk_reads_cgroup2_as_a_full_walk_does_listing_every_directory() {
    walked_alike("/sys/fs/cgroup/unified", ScanKind::V2, false);
}

#[test]
fn a_priming_walk_reads_v1_cpuacct_as_a_full_walk_does_listing_fewer_directories() {
    walked_alike(
        "/sys/fs/cgroup/cpuacct",
        ScanKind::V1 { procs: false },
        true,
    );
}
