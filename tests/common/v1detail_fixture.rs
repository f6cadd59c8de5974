//! The hybrid fixture layout of helper v1detail's tests: a tempdir laid
//! out like /sys/fs/cgroup (`unified`, `cpu,cpuacct`, `memory`, `blkio`,
//! `pids`, `freezer`, `systemd`), texts captured from this host's v1
//! files (tests/fixtures/v1/v1detail/).
#![allow(dead_code)]
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::source::hier::Hiers;
use cgtop::source::mount;
use std::path::Path;

/// A captured text of tests/fixtures/v1/v1detail/.
fn captured(name: &str) -> String {
    std::fs::read_to_string(super::fixture("v1/v1detail").join(name)).expect("fixture")
}

pub fn put(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(name), text).expect("write");
}

pub const WEB: &str = "demo.slice/web.service";
pub const WORKER: &str = "demo.slice/worker.service";

/// The hybrid fixture layout: `unified` is this host's cgroup2 capture
/// (tests/fixtures/hybrid-host); web.service is in every v1 hierarchy
/// with limits set, worker.service only in `cpu,cpuacct` and `systemd`
/// (systemd makes a unit's group only where its controllers are).
pub fn layout_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    let base = t.path();
    let unified = super::copy_fixture("hybrid-host");
    copy(unified.path(), &base.join("unified"));
    for h in [
        "cpu,cpuacct",
        "memory",
        "blkio",
        "pids",
        "freezer",
        "systemd",
    ] {
        put(&base.join(h), "cgroup.procs", "1\n");
        put(&base.join(h).join("demo.slice"), "cgroup.procs", "");
    }
    let cpu = base.join("cpu,cpuacct");
    for g in [WEB, WORKER] {
        put(&cpu.join(g), "cgroup.procs", "");
        put(
            &cpu.join(g),
            "cpu.cfs_period_us",
            &captured("cpu.cfs_period_us"),
        );
        put(&cpu.join(g), "cpu.shares", &captured("cpu.shares.default"));
        put(
            &cpu.join(g),
            "cpu.cfs_quota_us",
            &captured("cpu.cfs_quota_us.unlimited"),
        );
        put(&base.join("systemd").join(g), "cgroup.procs", "4190101\n");
    }
    let web = cpu.join(WEB);
    put(&web, "cpu.cfs_quota_us", &captured("cpu.cfs_quota_us.half"));
    put(&web, "cpu.shares", &captured("cpu.shares.half"));
    let mem = base.join("memory").join(WEB);
    put(&mem, "cgroup.procs", "4190101\n");
    put(
        &mem,
        "memory.limit_in_bytes",
        &captured("memory.limit_in_bytes.64m"),
    );
    put(
        &mem,
        "memory.soft_limit_in_bytes",
        &captured("memory.soft_limit_in_bytes.32m"),
    );
    put(
        &mem,
        "memory.memsw.limit_in_bytes",
        &captured("memory.limit_in_bytes.unlimited"),
    );
    put(&mem, "memory.usage_in_bytes", "22405120\n");
    put(&mem, "memory.memsw.usage_in_bytes", "23453696\n");
    put(&mem, "memory.max_usage_in_bytes", "30000000\n");
    put(&mem, "memory.failcnt", "3\n");
    put(
        &mem,
        "memory.oom_control",
        "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
    );
    put(&mem, "memory.stat", &captured("memory.stat"));
    let blk = base.join("blkio").join(WEB);
    put(&blk, "cgroup.procs", "");
    put(
        &blk,
        "blkio.throttle.read_bps_device",
        &captured("blkio.throttle.read_bps_device"),
    );
    put(
        &blk,
        "blkio.throttle.write_bps_device",
        &captured("blkio.throttle.write_bps_device"),
    );
    put(
        &blk,
        "blkio.throttle.read_iops_device",
        &captured("blkio.throttle.read_iops_device"),
    );
    put(
        &blk,
        "blkio.throttle.write_iops_device",
        &captured("blkio.throttle.write_iops_device.empty"),
    );
    put(&blk, "blkio.bfq.weight", &captured("blkio.bfq.weight.200"));
    put(
        &blk,
        "blkio.bfq.weight_device",
        &captured("blkio.bfq.weight_device.200"),
    );
    let pids = base.join("pids").join(WEB);
    put(&pids, "cgroup.procs", "");
    put(&pids, "pids.max", &captured("pids.max.42"));
    put(&pids, "pids.current", "1\n");
    let frz = base.join("freezer").join(WEB);
    put(&frz, "cgroup.procs", "");
    put(&frz, "freezer.state", "FREEZING\n");
    put(&frz, "freezer.self_freezing", "1\n");
    put(&frz, "freezer.parent_freezing", "0\n");
    t
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dst = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).expect("copy");
        }
    }
}

/// The layout's hierarchies, as `--root DIR` finds them.
pub fn hiers_of(dir: &Path) -> Hiers {
    let (_, _, layout) = mount::check_root(dir).expect("a layout dir");
    assert!(!layout.v1.is_empty(), "{layout:?}");
    Hiers::open(layout)
}
