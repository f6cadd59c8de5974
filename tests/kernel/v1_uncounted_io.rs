//! v1 blkio on this host's real kernel counts no IO on a disk no throttle
//! rule was set on since boot (Linux 6.10+ sets blk-throttle up on a
//! disk only with its first rule: `model::tree::root::uncounted_disk`).
//! The test attaches a loop device of its own whose number is in no line
//! of the root's blkio.throttle.io_service_bytes_recursive, reads 8 MiB
//! from it with O_DIRECT in `cgtop-test-<pid>-<n>-uncountedio` between
//! two refreshes, and checks that the kernel did not count it (no line
//! for the disk) and that cgtop says so: the group's READ/s is unknown,
//! not 0. It writes no rule (one would count the disk until reboot, and
//! the next run could not use it).
//!
//! Skipped (with a line saying so) where not root, without a v1 blkio
//! hierarchy or losetup, or where every free loop device is counted
//! already (a rule was set on each since boot). The loop device is
//! detached and the group removed on drop, also after a failed assertion.

use crate::common::sandbox_v1::V1Sandbox;
use crate::common::{collector_for, options};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A loop device the test attached: detached on drop.
struct Loop {
    dev: String,
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// The MAJ:MIN lines of the root's blkio.throttle.io_service_bytes_recursive.
fn counted(root: &Path) -> String {
    std::fs::read_to_string(root.join("blkio.throttle.io_service_bytes_recursive"))
        .unwrap_or_default()
}

/// Attaches `image` to a free loop device that blkio does not count.
fn uncounted_loop(root: &Path, image: &Path) -> Option<(Loop, String)> {
    for n in 0..64 {
        let sys = format!("/sys/block/loop{n}");
        let Ok(mm) = std::fs::read_to_string(format!("{sys}/dev")) else {
            continue;
        };
        let mm = mm.trim().to_owned();
        let listed = counted(root)
            .lines()
            .any(|l| l.starts_with(&format!("{mm} ")));
        if listed || Path::new(&format!("{sys}/loop/backing_file")).exists() {
            continue;
        }
        let dev = format!("/dev/loop{n}");
        let ok = Command::new("losetup")
            .arg(&dev)
            .arg(image)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some((Loop { dev }, mm));
        }
    }
    None
}

#[test]
fn io_on_a_disk_v1_blkio_does_not_count_is_unknown_not_zero() {
    let Some(mut sb) = V1Sandbox::or_skip("uncountedio", &["blkio"]) else {
        return;
    };
    let root = sb.hier("blkio").mount.clone();
    let image = tempfile::Builder::new()
        .prefix(&format!("{}-disk", sb.rel))
        .tempfile()
        .unwrap();
    image.as_file().set_len(8 << 20).unwrap();
    let Some((lo, mm)) = uncounted_loop(&root, image.path()) else {
        println!("skipped: no free loop device that blkio does not count already (or no losetup)");
        return;
    };
    let g = sb.path("");

    let (_, mut c) = collector_for(&options(), false);
    let start = Instant::now();
    c.refresh_timed(start);
    let pid = sb.spawn_in(
        &g,
        &[
            "dd",
            &format!("if={}", lo.dev),
            "of=/dev/null",
            "bs=1M",
            "count=8",
            "iflag=direct",
        ],
    );
    let status = sb.wait_child(pid, Duration::from_secs(60));
    assert!(status.is_some_and(|s| s.success()), "dd: {status:?}");
    let r = c.refresh_timed(start);

    // the kernel's side: the disk read 8 MiB and blkio counted none of it
    let listed = counted(&root)
        .lines()
        .any(|l| l.starts_with(&format!("{mm} ")));
    assert!(
        !listed,
        "{mm} counted: the kernel sets blk-throttle up without a rule"
    );
    let i = r
        .snapshot
        .groups
        .iter()
        .position(|x| x.path == g)
        .expect("the test's group");
    let mine = &r.snapshot.groups[i];
    println!(
        "{mm}: the group's blkio {:?}, rates {:?}, uncounted {:?}",
        mine.hot.io, r.rates[i].io, mine.hot.v1.sources.io_uncounted
    );
    assert!(
        mine.hot.v1.sources.io_uncounted.is_some(),
        "the group's IO figures not marked as missing a disk"
    );
    assert_eq!(
        r.rates[i].io, None,
        "READ/s after 8 MiB read on a disk blkio does not count"
    );
    drop(sb);
    drop(lo);
}
