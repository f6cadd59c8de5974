//! A group removed and made again under its name (`systemctl restart`:
//! rmdir + mkdir, so the parent's nr_descendants does not move) against
//! this machine's real cgroup2 hierarchy, as root: the collector lists the
//! new group in the very refresh where it exists again, as a new group
//! (another inode, no rate yet), with kept descriptors (which read ENODEV
//! once their group is gone) and with files reopened every refresh (which
//! open the new group's files by name).
//!
//! Everything happens under `cgtop-test-<pid>-<n>` directly below the
//! cgroup2 root and is removed afterwards, also when a test fails.
//! Skipped, with the reason, when not root or without a writable cgroup2.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, CollectorConfig, Refresh};
use cgtop::source::scan::ScanConfig;
use common::sandbox::Sandbox;
use std::path::PathBuf;
use std::time::Duration;

fn find<'a>(r: &'a Refresh, p: &GroupPath) -> Option<(usize, &'a cgtop::model::GroupSample)> {
    r.snapshot
        .groups
        .iter()
        .enumerate()
        .find(|(_, g)| &g.path == p)
}

fn collector(t: &Sandbox, max_kept: usize) -> Collector {
    Collector::new(CollectorConfig {
        root: t.root.clone(),
        start: t.top.clone(),
        scan: ScanConfig {
            max_kept,
            // no safety-net walk: what lists the new group is the failed
            // read, not a walk that happened to fall on this refresh
            rewalk_every: 0,
            ..ScanConfig::default()
        },
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    })
}

fn restart_in_the_same_refresh(max_kept: usize) {
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("app.slice/api.service");
    t.mkdir("app.slice/db.service");
    let api = t.path("app.slice/api.service");
    let mut c = collector(&t, max_kept);
    c.refresh(Duration::ZERO);
    let r = c.refresh(Duration::from_secs(1));
    let (_, old) = find(&r, &api).expect("listed");
    let old_inode = old.inode;
    // systemctl restart api.service: the same name, a new group
    std::fs::remove_dir(t.dir("app.slice/api.service")).unwrap();
    t.mkdir("app.slice/api.service");
    let r = c.refresh(Duration::from_secs(2));
    let names: Vec<String> = r.snapshot.groups.iter().map(|g| g.path.to_string()).collect();
    let (i, new) = find(&r, &api)
        .unwrap_or_else(|| panic!("the made-again group is missing from the refresh: {names:?}"));
    assert_ne!(new.inode, old_inode, "listed as the new group");
    assert_eq!(r.snapshot.groups.len(), 4, "{names:?}");
    assert_eq!(r.rates[i].cpu_pct, None, "a new group has no rate yet");
    assert!(find(&r, &t.path("app.slice/db.service")).is_some());
    // then it is a group like any other: a rate, and no more walks
    let r = c.refresh(Duration::from_secs(3));
    let (i, g) = find(&r, &api).expect("still listed");
    assert_ne!(g.inode, old_inode);
    assert!(r.rates[i].cpu_pct.is_some(), "the rate starts over");
    assert!(!r.snapshot.cost.walked, "the steady state lists nothing");
}

#[test]
fn a_restarted_group_is_listed_in_the_same_refresh_with_kept_files() {
    restart_in_the_same_refresh(65_536);
}

#[test]
fn a_restarted_group_is_listed_in_the_same_refresh_with_reopened_files() {
    restart_in_the_same_refresh(0);
}
