//! `tests/fixtures/capture-kernel-texts.sh` on this machine's kernel: the
//! script that made the committed captures of tests/fixtures/kernel-texts
//! still runs here, and cgtop's `--json` says every value it states of this
//! kernel's texts (values it wrote, figures it knew another way, the texts
//! as awk reads them). Root only; the script removes its groups
//! (`cgtop-test-<pid>-capture`) also when it fails.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::kernel_texts::check_capture;
use common::sandbox::cgroup2_mount;
use std::path::Path;
use std::process::Command;

#[test]
fn this_kernels_texts_match_json() {
    let uid = rustix::process::geteuid();
    if !uid.is_root() {
        println!(
            "skipped: not root (uid {}): the capture makes groups; run the kernel tests as root",
            uid.as_raw()
        );
        return;
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    if cgroup2_mount(&mountinfo).is_none() {
        println!("skipped: no cgroup2 mount (mount -t cgroup2 none /sys/fs/cgroup/unified)");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("sh")
        .arg(manifest.join("tests/fixtures/capture-kernel-texts.sh"))
        .arg(out.path())
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "the capture failed: {stderr}");
    print!("{stderr}");
    let counts = check_capture(out.path());
    println!("{counts:?} statements checked");
    assert!(counts.get("set").copied().unwrap_or(0) >= 1, "{counts:?}");
    assert!(counts.get("seen").copied().unwrap_or(0) >= 1, "{counts:?}");
    assert!(counts.get("read").copied().unwrap_or(0) >= 50, "{counts:?}");
}
