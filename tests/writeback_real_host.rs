//! The host's writeback settings read from this machine's /proc, checked
//! against `sysctl -n`, and the limits computed from them against the
//! kernel's own figures in /proc/vmstat. Reads only; no root needed.
//! Skipped (with a line saying so) where /proc/sys/vm or `sysctl` is not
//! there.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

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
