//! Issue 11, item 2 (the detail part): the inspected group read in full on
//! a hybrid layout, each controller's files from the v1 hierarchy holding
//! it. A fixture layout (a tempdir laid out like /sys/fs/cgroup: `unified`,
//! `cpu,cpuacct`, `memory`, `blkio`, `pids`, `freezer`, `systemd`, with
//! texts captured from this host's v1 files) and, as root on a hybrid
//! host, the real kernel.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::sandbox_v1::V1Sandbox;
use crate::common::v1detail_fixture;

use cgtop::cgroupfs::io::DevId;
use cgtop::cgroupfs::v1_limits::{FreezerState, OomControl};
use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::GroupDetail;
use cgtop::source::hier::Hiers;
use cgtop::source::mount;
use cgtop::source::read::{read_detail_layout, read_detail_paged};
use std::path::Path;
use v1detail_fixture::{hiers_of, layout_tree, put, WEB, WORKER};

fn read(dir: &Path, group: &str) -> GroupDetail {
    read_detail_paged(&hiers_of(dir), Path::new(group), true, 4096)
}

const VDA: DevId = DevId {
    major: 254,
    minor: 0,
};

#[test]
fn v1_limits_fill_the_v2_fields_of_the_same_meaning() {
    let t = layout_tree();
    let d = read(t.path(), WEB);
    assert_eq!(
        d.cpu_max,
        Some(CpuMax {
            quota: Some(50_000),
            period: 100_000
        })
    );
    assert_eq!(d.memory_max, Some(Limit::Value(64 << 20)));
    assert_eq!(d.memory_peak, Some(30_000_000));
    assert_eq!(d.swap_current, Some(23_453_696 - 22_405_120));
    let io = d.io_max.expect("io_max from blkio.throttle");
    let m = io.get(VDA).expect("vda");
    assert_eq!(
        (m.rbps, m.wbps, m.riops, m.wiops),
        (
            Limit::Value(1 << 20),
            Limit::Value(2 << 20),
            Limit::Value(100),
            Limit::Max
        )
    );
    assert_eq!(d.pids_max, Some(Limit::Value(42)));
    // cgroup2's cgroup.freeze (what cgtop's freeze writes on a hybrid
    // host) stays `freeze`; v1's state is `freezer`
    assert_eq!(d.freeze, Some(false));
    // v1 memory.stat's subtree (total_) figures as v2's memory.stat
    let st = d.memory_stat.expect("memory.stat");
    assert_eq!(st.file_dirty, Some(20_971_520));
    assert_eq!(st.file, Some(20_996_096));
    assert_eq!(
        d.keyed
            .memory_stat
            .as_ref()
            .and_then(|k| k.get("total_rss")),
        Some(229_376)
    );
}

#[test]
fn v1_only_figures_get_their_own_fields_and_their_sources() {
    let t = layout_tree();
    let d = read(t.path(), WEB);
    assert_eq!(d.cpu_shares, Some(512));
    assert_eq!(d.memory_soft_limit, Some(Limit::Value(32 << 20)));
    // the sentinel read as "no limit"
    assert_eq!(d.memsw_limit, Some(Limit::Max));
    assert_eq!(d.memsw_usage, Some(23_453_696));
    assert_eq!(d.memory_failcnt, Some(3));
    assert_eq!(
        d.oom_control,
        Some(OomControl {
            oom_kill_disable: false,
            under_oom: false,
            oom_kill: Some(2)
        })
    );
    assert_eq!(d.memory_stat_v1.and_then(|m| m.dirty), Some(20_971_520));
    assert_eq!(
        d.freezer
            .map(|f| (f.state, f.self_freezing, f.parent_freezing)),
        Some((FreezerState::Freezing, Some(true), Some(false)))
    );
    let w = d.blkio_weight.as_ref().expect("bfq weight");
    assert_eq!(w.default, Some(200));
    let s = d.hierarchies.as_ref().expect("sources on a hybrid layout");
    assert_eq!(s.cpu.as_deref(), Some("v1:cpu,cpuacct"));
    assert_eq!(s.cpuacct.as_deref(), Some("v1:cpu,cpuacct"));
    assert_eq!(s.memory.as_deref(), Some("v1:memory"));
    assert_eq!(s.io.as_deref(), Some("v1:blkio"));
    assert_eq!(s.pids.as_deref(), Some("v1:pids"));
    assert_eq!(s.freezer.as_deref(), Some("v1:freezer"));
    assert_eq!(s.procs.as_deref(), Some("v2"));
    // and in JSON, under the names README documents
    let j = serde_json::to_value(&d).unwrap();
    assert_eq!(j["cpu_shares"], 512);
    assert_eq!(j["memory_soft_limit"]["value"], 32 << 20);
    assert_eq!(j["memsw_limit"], "max");
    assert_eq!(j["oom_control"]["oom_kill"], 2);
    assert_eq!(j["freezer"]["state"], "freezing");
    // the scan's JSON keys (`sources`, `freezer_state`) are not the detail's
    assert!(j.get("sources").is_none() && j.get("freezer_state").is_none());
    assert_eq!(j["blkio_weight"]["default"], 200);
    assert_eq!(j["hierarchies"]["memory"], "v1:memory");
    assert_eq!(j["memory_failcnt"], 3);
}

#[test]
fn a_group_missing_from_a_v1_hierarchy_has_none_of_its_figures() {
    let t = layout_tree();
    let d = read(t.path(), WORKER);
    let s = d.hierarchies.as_ref().unwrap();
    assert_eq!(s.memory, None);
    assert_eq!(s.io, None);
    assert_eq!(s.cpu.as_deref(), Some("v1:cpu,cpuacct"));
    assert_eq!(d.memory_max, None);
    assert_eq!(d.io_max, None);
    assert_eq!(d.oom_control, None);
    // cfs_quota_us -1: a cpu.max of "max"
    assert_eq!(
        d.cpu_max,
        Some(CpuMax {
            quota: None,
            period: 100_000
        })
    );
    assert_eq!(d.cpu_shares, Some(1024));
    let j = serde_json::to_value(&d).unwrap();
    assert!(j.get("memsw_limit").is_none(), "{j}");
}

#[test]
fn the_raw_page_lists_the_files_of_every_hierarchy_with_its_name() {
    let t = layout_tree();
    let d = read(t.path(), WEB);
    let names: Vec<&str> = d.raw.iter().map(|(n, _)| n.as_str()).collect();
    // the primary's under their own names (the raw editor writes them)
    assert!(names.contains(&"cgroup.procs"), "{names:?}");
    assert!(names.contains(&"cpu.stat"), "{names:?}");
    for n in [
        "memory:memory.limit_in_bytes",
        "cpu,cpuacct:cpu.cfs_quota_us",
        "blkio:blkio.throttle.read_bps_device",
        "pids:pids.max",
        "freezer:freezer.state",
        "name=systemd:cgroup.procs",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let limit = d
        .raw
        .iter()
        .find(|(n, _)| n == "memory:memory.limit_in_bytes")
        .unwrap();
    assert_eq!(limit.1.as_deref(), Ok("67108864"));
    // the raw editor offers each v1 hierarchy's writable files by the same
    // `label:file` names, but never the two that make the kernel act on
    // a path or a program of the writer's choosing
    for n in [
        "memory:memory.limit_in_bytes",
        "cpu,cpuacct:cpu.cfs_quota_us",
    ] {
        assert!(d.writable.iter().any(|w| w == n), "{n} in {:?}", d.writable);
    }
    assert!(
        d.writable
            .iter()
            .all(|n| !n.ends_with(":cgroup.event_control") && !n.ends_with(":release_agent")),
        "{:?}",
        d.writable
    );
}

#[test]
fn the_no_limit_number_depends_on_the_page_size() {
    let t = layout_tree();
    let mem = t.path().join("memory").join(WEB);
    // a 64 KiB-page kernel's "no limit"
    put(&mem, "memory.limit_in_bytes", "9223372036854710272\n");
    let hiers = hiers_of(t.path());
    let large_pages = read_detail_paged(&hiers, Path::new(WEB), false, 65536);
    assert_eq!(large_pages.memory_max, Some(Limit::Max));
    let small_pages = read_detail_paged(&hiers, Path::new(WEB), false, 4096);
    assert_eq!(
        small_pages.memory_max,
        Some(Limit::Value(9_223_372_036_854_710_272))
    );
}

#[test]
fn a_v1_only_layout_reads_processes_and_freeze_from_v1() {
    let t = layout_tree();
    std::fs::remove_dir_all(t.path().join("unified")).unwrap();
    let d = read(t.path(), WEB);
    let s = d.hierarchies.as_ref().unwrap();
    assert_eq!(s.procs.as_deref(), Some("v1:name=systemd"));
    assert_eq!(d.pids, vec![4_190_101]);
    // no cgroup.freeze: freezer.self_freezing says it
    assert_eq!(d.freeze, Some(true));
    assert_eq!(d.memory_max, Some(Limit::Value(64 << 20)));
    // the primary's raw files are name=systemd's, under their own names
    assert!(d.raw.iter().any(|(n, _)| n == "cgroup.procs"));
    assert!(!d.raw.iter().any(|(n, _)| n.starts_with("name=systemd:")));
}

#[test]
fn a_group_only_in_a_v1_hierarchy_lists_its_processes_from_there() {
    let t = layout_tree();
    let only = "cgtop-only-in-memory";
    put(&t.path().join("memory").join(only), "cgroup.procs", "77\n");
    let d = read(t.path(), only);
    assert_eq!(d.pids, vec![77]);
    let s = d.hierarchies.as_ref().unwrap();
    assert_eq!(s.procs.as_deref(), Some("v1:memory"));
    assert_eq!(s.cpu, None);
}

#[test]
fn a_pure_v2_tree_reads_as_before() {
    let dir = common::fixture("pure-v2-systemd");
    let hier = std::sync::Arc::new(cgtop::source::hier::Hier::open(&dir).unwrap());
    let hiers = Hiers::single(std::sync::Arc::clone(&hier));
    let p = Path::new("system.slice");
    let before = cgtop::source::read::read_detail(&hier, p, true);
    let after = read_detail_layout(&hiers, p, true);
    assert_eq!(before, after);
    assert!(after.hierarchies.is_none());
}

#[test]
fn the_collector_inspects_through_every_hierarchy() {
    let t = layout_tree();
    let unified = t.path().join("unified");
    let mut c = common::collector(&unified);
    c.set_hiers(std::sync::Arc::new(hiers_of(t.path())));
    let p = cgtop::model::GroupPath::parse(WEB.as_bytes()).unwrap();
    let f = c.read_inspection(&p, None, 1.0);
    assert_eq!(f.detail.memory_max, Some(Limit::Value(64 << 20)));
    // the effective limit walks memory.limit_in_bytes on v1
    let eff = cgtop::model::tree::limits::effective_memory(&f.memory_limits).expect("a limit");
    assert_eq!(eff.bytes, 64 << 20);
    // whose quota: cfs on v1
    assert_eq!(
        f.cpu_max_path.first().and_then(|(_, m)| *m),
        Some(CpuMax {
            quota: Some(50_000),
            period: 100_000
        })
    );
}

// ---------------------------------------------------------------- real kernel

/// The first whole disk of the host, "MAJ:MIN" (a throttle limit needs a
/// real device).
fn a_disk() -> Option<DevId> {
    for e in std::fs::read_dir("/sys/block").ok()? {
        let e = e.ok()?;
        let name = e.file_name().into_string().ok()?;
        if name.starts_with("loop") || name.starts_with("ram") {
            continue;
        }
        let dev = std::fs::read_to_string(e.path().join("dev")).ok()?;
        if let Some(d) = DevId::parse(dev.trim()) {
            return Some(d);
        }
    }
    None
}

#[test]
fn real_kernel_v1_files_read_back_through_the_detail() {
    // a group of the v1 sandbox in the v1 hierarchies of this hybrid host
    // (and in cgroup2, as systemd makes a unit)
    let Some(sb) = V1Sandbox::or_skip("v1detail", &["cpu", "memory", "blkio", "pids", "freezer"])
    else {
        return;
    };
    if !sb.hiers.iter().any(|h| h.v2) {
        return println!("skipped: not a hybrid host (no cgroup2 beside the v1 hierarchies)");
    }
    let g = sb.path("");
    sb.write("cpu", &g, "cpu.cfs_quota_us", "50000");
    sb.write("cpu", &g, "cpu.shares", "512");
    sb.write("memory", &g, "memory.limit_in_bytes", "64M");
    sb.write("memory", &g, "memory.soft_limit_in_bytes", "32M");
    sb.write("pids", &g, "pids.max", "42");
    sb.write("freezer", &g, "freezer.state", "FROZEN");
    let disk = a_disk();
    if let Some(d) = disk {
        sb.write(
            "blkio",
            &g,
            "blkio.throttle.read_bps_device",
            &format!("{d} 1048576"),
        );
    }
    let layout = mount::discover_layout().expect("layout");
    let hiers = Hiers::open(layout);
    let d = read_detail_layout(&hiers, Path::new(&sb.rel), true);
    assert_eq!(d.cpu_max.and_then(|m| m.cpus()), Some(0.5));
    assert_eq!(d.cpu_shares, Some(512));
    assert_eq!(d.memory_max, Some(Limit::Value(64 << 20)));
    assert_eq!(d.memory_soft_limit, Some(Limit::Value(32 << 20)));
    assert_eq!(d.pids_max, Some(Limit::Value(42)));
    assert_eq!(d.freezer.map(|f| f.state), Some(FreezerState::Frozen));
    assert!(d.oom_control.is_some());
    assert!(d.memory_stat_v1.is_some());
    if let Some(dev) = disk {
        let m = d.io_max.as_ref().and_then(|m| m.get(dev)).expect("limit");
        assert_eq!(m.rbps, Limit::Value(1 << 20));
    }
    // memsw exists only with swap accounting
    let memsw = sb
        .dir_of("memory", &g)
        .join("memory.memsw.limit_in_bytes")
        .exists();
    assert_eq!(d.memsw_limit.is_some(), memsw);
    if memsw {
        assert_eq!(d.memsw_limit, Some(Limit::Max));
    }
    let names: Vec<&str> = d.raw.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"memory:memory.limit_in_bytes"), "{names:?}");
    assert!(names.contains(&"freezer:freezer.state"), "{names:?}");
    let s = d.hierarchies.unwrap();
    assert_eq!(s.memory.as_deref(), Some("v1:memory"));
    assert_eq!(s.cpu.as_deref(), Some("v1:cpu"));
}
