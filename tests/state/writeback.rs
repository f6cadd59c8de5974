//! The host's writeback figures through the collector and into the app
//! and `--json` (issue 11, item 4), over a made-up /proc; and the drain
//! of a group's dirty pages: only between neighbouring reads.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::model::host::writeback::Basis;
use cgtop::model::GroupPath;
use common::*;
use std::path::Path;
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// A /proc: 2 GiB free, 2 GiB of file pages; dirty_bytes 256 MiB, the
/// background at its default ratio (10 % of 4 GiB, above the limit:
/// halved); no vmstat, so the limits are computed.
fn fake_proc() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    std::fs::write(
        p.join("meminfo"),
        "MemTotal: 8388608 kB\nMemFree: 2097152 kB\nMemAvailable: 4194304 kB\n\
         Active(file): 1048576 kB\nInactive(file): 1048576 kB\nDirty: 102400 kB\nWriteback: 2048 kB\n",
    )
    .unwrap();
    let vm = p.join("sys/vm");
    std::fs::create_dir_all(&vm).unwrap();
    for (f, v) in [
        ("dirty_ratio", "0"),
        ("dirty_background_ratio", "10"),
        ("dirty_bytes", "268435456"),
        ("dirty_background_bytes", "0"),
        ("dirty_expire_centisecs", "1500"),
        ("dirty_writeback_centisecs", "0"),
    ] {
        std::fs::write(vm.join(f), format!("{v}\n")).unwrap();
    }
    t
}

fn app_with_proc(
    root: &Path,
    proc_dir: Option<&Path>,
) -> (App, cgtop::source::collector::Collector) {
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, 120, 40);
    let mut c = collector(root);
    c.set_proc_dir(proc_dir.map(Path::to_path_buf));
    tick(&mut a, &mut c, 0.0);
    (a, c)
}

#[test]
fn the_collector_reads_the_hosts_writeback_each_refresh() {
    let dir = lab_tree();
    let p = fake_proc();
    let (mut a, mut c) = app_with_proc(dir.path(), Some(p.path()));
    let w = a
        .data
        .as_ref()
        .and_then(|d| d.refresh.machine)
        .and_then(|m| m.writeback)
        .expect("the host's writeback");
    assert_eq!(w.vm.dirty_bytes, Some(256 * MIB));
    assert_eq!(w.vm.dirty_writeback_centisecs, Some(0));
    assert_eq!(w.dirty, Some(100 * MIB));
    let t = w.thresholds().unwrap();
    assert!(!w.thresholds_exact());
    assert_eq!(t.limit, 256 * MIB);
    assert_eq!(t.limit_basis, Basis::Bytes);
    // 10 % of 4 GiB is above 256 MiB: the kernel halves the limit instead
    assert_eq!(t.background, 128 * MIB);
    assert_eq!(t.background_basis, Basis::HalfOfLimit);
    // and the page says so, with periodic flushing off
    select(&mut a, &mut c, "batch");
    tick(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('3'));
    let s = screen(&a, 160, 48);
    assert!(s.contains("up to 256M (dirty_bytes)"), "{s}");
    assert!(s.contains("at 128M (half the limit"), "{s}");
    assert!(s.contains("periodic flushing is off"), "{s}");
}

#[test]
fn no_proc_no_writeback() {
    let dir = lab_tree();
    let (a, _c) = app_with_proc(dir.path(), None);
    assert!(a.data.as_ref().unwrap().refresh.machine.is_none());
}

#[test]
fn json_prints_the_writeback_once_per_refresh() {
    let dir = lab_tree();
    let p = fake_proc();
    let mut c = collector(dir.path());
    c.set_proc_dir(Some(p.path().to_path_buf()));
    let r = refresh(&mut c, 0.0);
    let mut out = Vec::new();
    cgtop::batch::write_json(
        &mut out,
        &r,
        Duration::from_secs(1),
        Duration::ZERO,
        &pure_v2_mount(),
        &host(),
        &[],
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let w = &v["writeback"];
    assert_eq!(w["vm"]["dirty_bytes"], 268_435_456);
    assert_eq!(w["vm"]["dirty_ratio"], 0);
    assert_eq!(w["limit_bytes"], 256 * MIB);
    assert_eq!(w["background_bytes"], 128 * MIB);
    assert_eq!(w["freerun_bytes"], 192 * MIB);
    assert_eq!(w["limit_basis"]["kind"], "bytes");
    assert_eq!(w["background_basis"]["kind"], "half_of_limit");
    assert_eq!(w["thresholds_from_kernel"], false);
    assert_eq!(w["dirtyable_bytes_approx"], 4096 * MIB);
    assert_eq!(w["dirty_bytes"], 100 * MIB);
    assert_eq!(w["writeback_bytes"], 2 * MIB);
    // without a /proc (a replay): null
    let mut c = collector(dir.path());
    let r = refresh(&mut c, 0.0);
    let mut out = Vec::new();
    cgtop::batch::write_json(
        &mut out,
        &r,
        Duration::from_secs(1),
        Duration::ZERO,
        &pure_v2_mount(),
        &host(),
        &[],
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["writeback"].is_null(), "{v}");
}

fn stat(dirty: u64) -> String {
    format!("anon 1\nfile_dirty {dirty}\nfile_writeback 0\n")
}

#[test]
fn the_drain_is_between_neighbouring_reads_only() {
    let dir = lab_tree();
    let b = dir.path().join("batch");
    std::fs::write(b.join("memory.stat"), stat(50 * MIB)).unwrap();
    let (mut a, mut c) = app_with_proc(dir.path(), None);
    select(&mut a, &mut c, "batch");
    tick(&mut a, &mut c, 1.0);
    // one read: no drain yet
    assert_eq!(a.dirty_drain(), None);
    std::fs::write(b.join("memory.stat"), stat(30 * MIB)).unwrap();
    tick(&mut a, &mut c, 3.0);
    // 20 MiB less over 2 s
    let d = a.dirty_drain().unwrap();
    assert!((d + 10.0 * MIB as f64).abs() < 1.0, "{d}");
    // away to another group and back a minute later: the old read is
    // no neighbour of the new one
    send(&mut a, &mut c, ch('j'));
    tick(&mut a, &mut c, 4.0);
    send(&mut a, &mut c, ch('k'));
    assert_eq!(selected(&a), "/batch");
    std::fs::write(b.join("memory.stat"), stat(0)).unwrap();
    tick(&mut a, &mut c, 60.0);
    assert_eq!(a.dirty_drain(), None);
    tick(&mut a, &mut c, 61.0);
    assert_eq!(a.dirty_drain(), Some(0.0));
}
