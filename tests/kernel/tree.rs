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

use crate::common;

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
    let names: Vec<String> = r
        .snapshot
        .groups
        .iter()
        .map(|g| g.path.to_string())
        .collect();
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

#[test]
fn json_lists_a_restarted_group_in_the_line_where_it_exists_again() {
    use cgtop::model::{HostInfo, MountInfo, MountMode};
    use cgtop::options::{Options, Output};
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("app.slice/api.service");
    let mut c = collector(&t, 65_536);
    c.set_cpu_ceiling(None);
    let opts = Options {
        start: t.top.clone(),
        interval: Duration::ZERO,
        output: Output::Json,
        iterations: Some(2),
        ..crate::common::options()
    };
    let mount = MountInfo {
        root: t.root.clone(),
        mode: MountMode::PureV2,
    };
    let host = HostInfo {
        hostname: "testhost".into(),
        kernel: "test".into(),
        ncpus: 1,
        swap_total: None,
    };
    let mut out = Vec::new();
    let mut waits = 0;
    // the second printed line is read right after `systemctl restart`
    let wait = |_: Duration| {
        waits += 1;
        if waits == 2 {
            std::fs::remove_dir(t.dir("app.slice/api.service")).unwrap();
            t.mkdir("app.slice/api.service");
        }
        true
    };
    cgtop::batch::run_collector(&mut out, c, &mount, &host, &opts, wait).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let api = t.path("app.slice/api.service").to_string();
    let find = |doc: &serde_json::Value| {
        doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["path"] == api.as_str())
            .cloned()
    };
    let before = find(&lines[0]).expect("listed before the restart");
    let after =
        find(&lines[1]).unwrap_or_else(|| panic!("{api} missing after the restart: {}", lines[1]));
    assert_ne!(before["inode"], after["inode"], "the new group");
    assert!(after["rates"]["cpu_pct"].is_null(), "no rate yet: {after}");
}

/// Churn as in the VM scale tier's: groups `cN` (each with a child `sub`)
/// removed and made again under their names in a tight loop, by another
/// thread, for at most `secs`, while `look` runs again and again; stops
/// at the first time `look` says something is wrong. Returns what it said.
fn under_churn(t: &Sandbox, secs: f64, mut look: impl FnMut() -> Option<String>) -> Option<String> {
    use std::sync::atomic::{AtomicBool, Ordering};
    const N: usize = 60;
    for k in 0..N {
        t.mkdir(&format!("churn/c{k}/sub"));
    }
    let stop = AtomicBool::new(false);
    let dirs: Vec<(PathBuf, PathBuf)> = (0..N)
        .map(|k| {
            let c = t.dir(&format!("churn/c{k}"));
            (c.join("sub"), c)
        })
        .collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut k = 0usize;
            while !stop.load(Ordering::Relaxed) {
                // a step of 7 over 60 names: a removed name's neighbours
                // in the listing are not the last ones touched
                k = (k + 7) % N;
                let (sub, c) = &dirs[k];
                let _ = std::fs::remove_dir(sub);
                let _ = std::fs::remove_dir(c);
                let _ = std::fs::create_dir(c);
                let _ = std::fs::create_dir(sub);
            }
        });
        let end = std::time::Instant::now() + Duration::from_secs_f64(secs);
        let mut found = None;
        while found.is_none() && std::time::Instant::now() < end {
            found = look();
        }
        stop.store(true, Ordering::Relaxed);
        found
    })
}

/// The first path listed twice in `paths`, if any.
fn twice<'a>(paths: impl Iterator<Item = &'a [u8]>) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if !seen.insert(p) {
            return Some(String::from_utf8_lossy(p).into_owned());
        }
    }
    None
}

/// What the VM scale tier saw once ("c64 listed twice", "c64/sub listed
/// twice" in one refresh of `cgtop --json`): under churn a refresh must
/// still list each group once.
#[test]
fn a_refresh_under_churn_lists_each_group_once() {
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("churn");
    let mut c = collector(&t, 65_536);
    let mut refreshes = 0u64;
    let dup = under_churn(&t, 3.0, || {
        refreshes += 1;
        let r = c.refresh(Duration::from_secs(refreshes));
        twice(r.snapshot.groups.iter().map(|g| g.path.as_bytes()))
            .map(|p| format!("refresh {refreshes}: {p} listed twice"))
    });
    assert_eq!(dup, None, "after {refreshes} refreshes under churn");
}

/// A one-shot run's priming read walks to its stamp opening the rate
/// counters only: cgroup.type is read after it, with the levels, through
/// the real kernfs (the group's kept cpu.stat proves it the same group,
/// so its type is opened by name rather than through its directory).
#[test]
fn a_one_shot_run_reads_cgroup_type_after_the_priming_stamp() {
    use cgtop::cgroupfs::CgroupType;
    let Some(t) = Sandbox::or_skip() else { return };
    t.mkdir("app/worker");
    t.mkdir("db");
    let mut c = t.collector();
    c.prime(Duration::ZERO);
    // made threaded after the stamp: `app` becomes its domain
    std::fs::write(t.dir("app/worker").join("cgroup.type"), "threaded").unwrap();
    c.read_levels();
    let r = c.refresh(Duration::from_millis(100));
    let type_of = |sub: &str| find(&r, &t.path(sub)).and_then(|(_, g)| g.cgroup_type);
    assert_eq!(type_of("app/worker"), Some(CgroupType::Threaded));
    assert_eq!(type_of("app"), Some(CgroupType::DomainThreaded));
    assert_eq!(type_of("db"), Some(CgroupType::Domain));
}
