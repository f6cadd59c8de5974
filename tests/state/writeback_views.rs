//! The IO page's writeback story (issue 11, item 4), one screen per case
//! the page tells apart: a v1 blkio throttle limit; io.max on v2 with
//! memory on v2 (cgroup writeback, the dirty pages draining); io.max on v2
//! with memory on v1; no limit. Drawn from the lab tree with a made-up
//! /proc (fixed settings and memory figures, so nothing of the test host
//! shows), and the group's memory.stat moved by known amounts between
//! refreshes.
//!
//! Until the v1 reads land, a v1 blkio limit stands in as the group's
//! `io_max` (which the v1 detail fills from blkio.throttle.*) on a host
//! whose mount says blkio is v1: the page decides by `MountMode::on_v1`.
//!
//! To change a snapshot: `INSTA_UPDATE=always cargo test --test
//! writeback_snapshots`, then read the .snap diff like code.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::model::{MountInfo, MountMode};
use cgtop::source::collector::Collector;
use common::*;
use std::path::Path;

const MIB: u64 = 1 << 20;

/// A /proc with a host's memory and writeback settings: 1 GiB free,
/// 3 GiB of file pages, 300 MiB dirty; dirty_ratio 20, background 10;
/// with the kernel's own thresholds in vmstat where `vmstat` is true.
fn fake_proc(vmstat: bool) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    std::fs::write(
        p.join("meminfo"),
        "MemTotal:        8388608 kB\nMemFree:         1048576 kB\n\
         MemAvailable:    4194304 kB\nActive(file):    1048576 kB\n\
         Inactive(file):  2097152 kB\nDirty:            307200 kB\n\
         Writeback:         10240 kB\n",
    )
    .unwrap();
    let vm = p.join("sys/vm");
    std::fs::create_dir_all(&vm).unwrap();
    for (f, v) in [
        ("dirty_ratio", "20"),
        ("dirty_background_ratio", "10"),
        ("dirty_bytes", "0"),
        ("dirty_background_bytes", "0"),
        ("dirty_expire_centisecs", "3000"),
        ("dirty_writeback_centisecs", "500"),
    ] {
        std::fs::write(vm.join(f), format!("{v}\n")).unwrap();
    }
    if vmstat {
        std::fs::write(
            p.join("vmstat"),
            "nr_dirty 76800\nnr_writeback 2560\nnr_dirty_threshold 207000\n\
             nr_dirty_background_threshold 103500\n",
        )
        .unwrap();
    }
    t
}

fn hybrid_with(v1: &[&str]) -> MountInfo {
    MountInfo {
        root: "/sys/fs/cgroup/unified".into(),
        mode: MountMode::Hybrid {
            v1_controllers: v1.iter().map(|s| (*s).to_owned()).collect(),
        },
    }
}

fn put(root: &Path, group: &str, file: &str, text: &str) {
    std::fs::write(root.join(group).join(file), text).unwrap();
}

/// `batch` of the lab tree with `io_max` and `memory_stat` as given,
/// selected, on the IO page, after refreshes at 1 s and 2 s between
/// which its dirty + writeback pages went from `first` to the stat text.
fn io_page(
    mount: MountInfo,
    io_max: &str,
    first: &str,
    then: &str,
    vmstat: bool,
) -> (App, Collector, tempfile::TempDir, tempfile::TempDir) {
    let dir = lab_tree();
    let proc_dir = fake_proc(vmstat);
    put(dir.path(), "batch", "io.max", io_max);
    put(dir.path(), "batch", "memory.stat", first);
    let mut a = App::new(
        host(),
        mount,
        cgtop::model::GroupPath::root(),
        std::time::Duration::from_secs(1),
    );
    resize(&mut a, 160, 48);
    let mut c = collector(dir.path());
    c.set_proc_dir(Some(proc_dir.path().to_path_buf()));
    tick(&mut a, &mut c, 0.0);
    select(&mut a, &mut c, "batch");
    tick(&mut a, &mut c, 1.0);
    put(dir.path(), "batch", "memory.stat", then);
    tick(&mut a, &mut c, 2.0);
    send(&mut a, &mut c, ch('3'));
    (a, c, dir, proc_dir)
}

fn v2_stat(dirty: u64, writeback: u64) -> String {
    format!(
        "anon 1048576\nfile {}\nfile_dirty {dirty}\nfile_writeback {writeback}\n",
        200 * MIB
    )
}

/// v1's memory.stat: the group's own keys and the subtree's `total_`.
fn v1_stat(dirty: u64, writeback: u64) -> String {
    format!(
        "cache {}\nrss 1048576\ndirty {dirty}\nwriteback {writeback}\n\
         total_cache {}\ntotal_rss 1048576\ntotal_dirty {dirty}\ntotal_writeback {writeback}\n",
        200 * MIB,
        200 * MIB
    )
}

const WBPS_10M: &str = "254:0 rbps=max wbps=10485760 riops=max wiops=max\n";

#[test]
fn v1_blkio_limit_buffered_writes_not_held_160x48() {
    // the seeds' `echo "254:0 1048576" > blkio.throttle.write_bps_device`
    let (a, _c, _d, _p) = io_page(
        hybrid_with(&["cpu", "cpuacct", "memory", "blkio", "pids"]),
        "254:0 rbps=max wbps=1048576 riops=max wiops=max\n",
        &v1_stat(500 * MIB, 8 * MIB),
        &v1_stat(700 * MIB, 8 * MIB),
        true,
    );
    let s = screen(&a, 160, 48);
    assert!(
        s.contains("blkio holds only the IO this group's tasks"),
        "{s}"
    );
    assert!(s.contains("buffered writes are NOT held"), "{s}");
    assert!(s.contains("root group, not here"), "{s}");
    assert!(
        s.contains("dirty 700M, writeback 8.0M, growing 200M/s (write limit 1.0M/s)"),
        "{s}"
    );
    insta::assert_snapshot!(s);
}

#[test]
fn v2_io_max_with_memory_drains_at_the_limit_160x48() {
    let (a, _c, _d, _p) = io_page(
        pure_v2_mount(),
        WBPS_10M,
        &v2_stat(36 * MIB, 4 * MIB),
        &v2_stat(26 * MIB, 4 * MIB),
        true,
    );
    let s = screen(&a, 160, 48);
    assert!(s.contains("buffered writes ARE held here"), "{s}");
    assert!(s.contains("draining 10.0M/s (write limit 10.0M/s)"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn v2_io_max_with_memory_on_v1_160x48() {
    let (a, _c, _d, _p) = io_page(
        hybrid_with(&["cpu", "cpuacct", "memory", "pids"]),
        WBPS_10M,
        &v2_stat(36 * MIB, 4 * MIB),
        &v2_stat(36 * MIB, 4 * MIB),
        false,
    );
    let s = screen(&a, 160, 48);
    assert!(
        s.contains("io.max holds only the IO this group's tasks"),
        "{s}"
    );
    assert!(s.contains("steady"), "{s}");
    // no vmstat: the limits are computed, and said to be
    assert!(s.contains("a little lower"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn no_limit_only_the_host_160x48() {
    let (a, _c, _d, _p) = io_page(pure_v2_mount(), "", &v2_stat(0, 0), &v2_stat(0, 0), true);
    let s = screen(&a, 160, 48);
    assert!(!s.contains("holds only the IO"), "{s}");
    assert!(!s.contains("ARE held"), "{s}");
    assert!(s.contains("a writer may dirty up to"), "{s}");
    insta::assert_snapshot!(s);
}
