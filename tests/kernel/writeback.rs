//! The host's writeback settings read from this machine's /proc, checked
//! against `sysctl -n`, and the limits computed from them against the
//! kernel's own figures in /proc/vmstat. Reads only; no root needed.
//! Skipped (with a line saying so) where /proc/sys/vm or `sysctl` is not
//! there.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1::V1Sandbox;
use cgtop::source::writeback::{read_host_writeback, read_vm_dirty};
use std::path::Path;
use std::process::Command;

fn sysctl(name: &str) -> Option<u64> {
    let out = Command::new("sysctl").args(["-n", name]).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
}

fn have_proc_vm() -> bool {
    if Path::new("/proc/sys/vm/dirty_ratio").exists() && sysctl("vm.dirty_ratio").is_some() {
        return true;
    }
    eprintln!("SKIPPED: no /proc/sys/vm/dirty_ratio or no sysctl on this host");
    false
}

#[test]
fn the_six_settings_are_what_sysctl_says() {
    if !have_proc_vm() {
        return;
    }
    let vm = read_vm_dirty(Path::new("/proc"));
    for (name, got) in [
        ("vm.dirty_ratio", vm.dirty_ratio),
        ("vm.dirty_background_ratio", vm.dirty_background_ratio),
        ("vm.dirty_bytes", vm.dirty_bytes),
        ("vm.dirty_background_bytes", vm.dirty_background_bytes),
        ("vm.dirty_expire_centisecs", vm.dirty_expire_centisecs),
        ("vm.dirty_writeback_centisecs", vm.dirty_writeback_centisecs),
    ] {
        assert_eq!(got, sysctl(name), "{name}");
        assert!(got.is_some(), "{name} unread");
    }
}

#[test]
fn computed_limits_are_near_the_kernels_own() {
    if !have_proc_vm() {
        return;
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let h = read_host_writeback(Path::new("/proc"), &meminfo);
    let (Some(kl), Some(kb)) = (h.kernel_limit_pages, h.kernel_background_pages) else {
        eprintln!("SKIPPED: this kernel prints no nr_dirty_threshold in /proc/vmstat");
        return;
    };
    let c = h.computed().expect("limits from the settings");
    let kernel = [kl * h.page_size, kb * h.page_size];
    // meminfo and vmstat are read a moment apart and the approximation
    // leaves the kernel's reserve in: near, not equal (a 5 % band)
    for (name, mine, theirs) in [
        ("limit", c.limit, kernel[0]),
        ("background", c.background, kernel[1]),
    ] {
        let diff = mine.abs_diff(theirs) as f64;
        assert!(
            diff <= theirs as f64 * 0.05,
            "{name}: computed {mine}, kernel {theirs}"
        );
    }
    // what is shown is the kernel's figure
    let t = h.thresholds().unwrap();
    assert_eq!((t.limit, t.background), (kernel[0], kernel[1]));
    assert!(h.thresholds_exact());
}

#[test]
fn json_carries_this_hosts_settings() {
    if !have_proc_vm() {
        return;
    }
    if !Path::new("/sys/fs/cgroup").exists() {
        eprintln!("SKIPPED: no /sys/fs/cgroup");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", "1", "--brief"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let w = &v["writeback"]["vm"];
    assert_eq!(w["dirty_ratio"].as_u64(), sysctl("vm.dirty_ratio"));
    assert_eq!(w["dirty_bytes"].as_u64(), sysctl("vm.dirty_bytes"));
    assert_eq!(
        w["dirty_expire_centisecs"].as_u64(),
        sysctl("vm.dirty_expire_centisecs")
    );
    assert!(v["writeback"]["limit_bytes"].as_u64().unwrap() > 0);
}

/// The v1 memory.stat captured on this host after a buffered write
/// (tests/fixtures/v1/writeback/README.md): the subtree's `total_dirty`.
#[test]
fn a_real_v1_memory_stat_gives_the_groups_dirty_pages() {
    use cgtop::cgroupfs::Keyed;
    use cgtop::model::host::writeback::GroupDirty;
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1/writeback/memory.stat"),
    )
    .unwrap();
    let d = GroupDirty::from_memory_stat(&Keyed::parse(&text)).unwrap();
    assert_eq!((d.dirty, d.writeback, d.subtree), (67_117_056, 0, true));
}

/// The seeds' story on this host's real v1 hierarchies, as the IO page
/// tells it: with `blkio.throttle.write_bps_device` at 1 MiB/s, a
/// buffered 16 MiB write returns at once (its pages are dirty in the
/// group's v1 memory.stat, and the flusher writes them later), while a
/// 2 MiB direct write is held to about 2 s, in a group of the v1 sandbox
/// (`common::sandbox_v1`). Root and the v1 memory and blkio hierarchies
/// are needed; skipped otherwise.
#[test]
fn v1_blkio_holds_direct_writes_not_buffered_ones() {
    use cgtop::cgroupfs::Keyed;
    use cgtop::model::host::writeback::GroupDirty;
    use std::os::unix::fs::MetadataExt;
    use std::time::Instant;
    let Some(sb) = V1Sandbox::or_skip("writeback", &["memory", "blkio"]) else {
        return;
    };
    let g = sb.path("");
    let (mem, blkio) = (sb.dir_of("memory", &g), sb.dir_of("blkio", &g));
    if !mem.join("memory.stat").exists() {
        return println!("skipped: no memory.stat in the v1 memory hierarchy");
    }
    // the two files written, on /var/tmp's disk (not a tmpfs), removed on drop
    let scratch = tempfile::Builder::new()
        .prefix(&format!("{}-", sb.rel))
        .tempdir_in("/var/tmp")
        .unwrap();
    let files = [
        scratch.path().join("buffered"),
        scratch.path().join("direct"),
    ];
    let dev = std::fs::metadata(scratch.path()).unwrap().dev();
    let rule = format!(
        "{}:{} 1048576",
        rustix::fs::major(dev),
        rustix::fs::minor(dev)
    );
    if std::fs::write(blkio.join("blkio.throttle.write_bps_device"), &rule).is_err() {
        return println!("skipped: /var/tmp is not on a whole disk blkio can throttle ({rule})");
    }
    let run_in = |dd: &str| {
        let script = format!(
            "echo $$ > {}/cgroup.procs && echo $$ > {}/cgroup.procs && exec {dd}",
            mem.display(),
            blkio.display()
        );
        let t = Instant::now();
        let st = Command::new("sh").args(["-c", &script]).status().unwrap();
        assert!(st.success(), "{dd}");
        t.elapsed().as_secs_f64()
    };
    let buffered = run_in(&format!(
        "dd if=/dev/zero of={} bs=1M count=16 status=none",
        files[0].display()
    ));
    let stat = std::fs::read_to_string(mem.join("memory.stat")).unwrap();
    let dirty = GroupDirty::from_memory_stat(&Keyed::parse(&stat)).expect("v1 dirty keys");
    assert!(dirty.subtree);
    // held to 1 MiB/s it would take 16 s
    assert!(buffered < 8.0, "buffered took {buffered:.2} s");
    let direct = run_in(&format!(
        "dd if=/dev/zero of={} bs=256K count=8 oflag=direct status=none",
        files[1].display()
    ));
    assert!(direct >= 1.0, "direct took {direct:.2} s");
    eprintln!(
        "buffered 16 MiB: {buffered:.2} s, {} dirty in the group after; direct 2 MiB: {direct:.2} s",
        dirty.total()
    );
}
