//! The overview of a group on a v1-only host: v1 has no cgroup.type, so a
//! group there has none, and it is not "root" (only the root is).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::v1detail_fixture;

use cgtop::app::App;
use cgtop::model::{GroupSample, MountInfo, MountMode};
use cgtop::source::collector::Collector;
use common::*;
use std::path::Path;
use std::sync::Arc;
use v1detail_fixture::{hiers_of, layout_tree, WEB};

/// The v1 controllers of the fixture layout's hierarchies.
const V1: [&str; 6] = ["blkio", "cpu", "cpuacct", "freezer", "memory", "pids"];

/// The app on the layout, its primary hierarchy `primary` (`unified` on
/// a hybrid host, `systemd` on a v1-only one) and every hierarchy of the
/// layout read.
fn app_on_layout(t: &Path, primary: &str, mode: MountMode) -> (App, Collector) {
    let root = t.join(primary);
    let (a, mut c) = app_on(
        &root,
        MountInfo {
            root: root.clone(),
            mode,
        },
        120,
        40,
    );
    c.set_hiers(Arc::new(hiers_of(t)));
    (a, c)
}

/// The screen after a refresh whose root `mark` changed as the collector
/// does on the kernel's root (a fixture tree is never the kernel's root),
/// the root selected.
fn root_marked(mark: impl FnOnce(&mut GroupSample)) -> String {
    let (_t, a, _c) = app_root_marked(mark);
    screen(&a, 120, 40)
}

/// The app and collector of [`root_marked`], with the layout they read.
fn app_root_marked(mark: impl FnOnce(&mut GroupSample)) -> (tempfile::TempDir, App, Collector) {
    let t = layout_tree();
    let mode = MountMode::Hybrid {
        v1_controllers: V1.map(String::from).to_vec(),
    };
    let (mut a, mut c) = app_on_layout(t.path(), "unified", mode);
    select(&mut a, &mut c, "/");
    let mut r = refresh(&mut c, 1.0);
    let g = &mut r.snapshot.groups[0];
    assert!(g.path.is_root());
    mark(g);
    send(
        &mut a,
        &mut c,
        cgtop::app::Msg::Collected(cgtop::source::collector::Collected::Refresh(Box::new(r))),
    );
    (t, a, c)
}

#[test]
fn a_v1_group_has_no_type_and_is_not_called_root() {
    let t = layout_tree();
    std::fs::remove_dir_all(t.path().join("unified")).unwrap();
    let mode = MountMode::V1 {
        v1_controllers: V1.map(String::from).to_vec(),
    };
    let (mut a, mut c) = app_on_layout(t.path(), "systemd", mode);
    select(&mut a, &mut c, WEB);
    tick(&mut a, &mut c, 1.0);
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 120, 40);
    assert!(!s.contains("type root"), "{s}");
    assert!(s.contains("type -"), "{s}");
    // the root still is the root
    select(&mut a, &mut c, "/");
    tick(&mut a, &mut c, 2.0);
    assert!(screen(&a, 120, 40).contains("type root"));
}

/// The kernel's root on a hybrid host (`model::tree::root`): its MEM and
/// PIDS are completed, and the detail says what they count. A fixture
/// tree is never completed (not the kernel's root), so the refresh's root
/// is completed here as the collector does on the real one.
#[test]
fn the_root_says_what_its_memory_and_tasks_count() {
    let s = root_marked(|g| {
        g.hot.memory_current = Some(13_400 << 20);
        g.hot.v1.sources.root_kernel_memory = true;
        g.hot.pids_current = Some(420);
        g.hot.nr_procs = Some(2);
        g.hot.v1.sources.root_machine_tasks = true;
    });
    assert!(
        s.contains("420 tasks on the machine (2 processes in the root group itself)"),
        "{s}"
    );
    assert!(s.contains("kernel memory charged below"), "{s}");
}

/// A disk v1 blkio does not count did IO in the interval
/// (`model::tree::root::busy_uncounted`): the detail says why READ/s and
/// WRITE/s are unknown, in plain words, and how to start the count. The
/// mark is put on the refresh here as the collector does on the real
/// kernel (a fixture tree has no /proc/diskstats of its own).
#[test]
fn the_detail_says_why_io_is_unknown_on_a_disk_v1_does_not_count() {
    let (_t, mut a, mut c) = app_root_marked(|g| {
        g.hot.v1.sources.io_uncounted = Some(cgtop::cgroupfs::io::DevId {
            major: 254,
            minor: 0,
        });
    });
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("v1 blkio counts disk vda (254:0)'s IO only after a throttle rule is set on it"),
        "{s}"
    );
    assert!(
        s.contains("echo '254:0 0' > blkio.throttle.read_bps_device (0: no limit)"),
        "{s}"
    );
    // a device's name is outside text: shown escaped; a disk the device
    // list does not name is given by its number alone
    for (name, said) in [
        ("v\u{1b}[2Jda", "disk v\\e[2Jda (254:0)'s IO"),
        ("", "disk 8:0's IO"),
    ] {
        let mut r = refresh(&mut c, 2.0);
        let disk = if name.is_empty() {
            cgtop::cgroupfs::io::DevId { major: 8, minor: 0 }
        } else {
            cgtop::cgroupfs::io::DevId {
                major: 254,
                minor: 0,
            }
        };
        r.snapshot.groups[0].hot.v1.sources.io_uncounted = Some(disk);
        r.devices = Arc::new(vec![cgtop::model::DeviceInfo {
            dev: cgtop::cgroupfs::io::DevId {
                major: 254,
                minor: 0,
            },
            name: name.into(),
            partition: false,
            parent: None,
        }]);
        send(
            &mut a,
            &mut c,
            cgtop::app::Msg::Collected(cgtop::source::collector::Collected::Refresh(Box::new(r))),
        );
        let s = screen(&a, 120, 40);
        assert!(s.contains(said), "{said} in {s}");
        assert!(!s.contains('\u{1b}'), "{s}");
    }
}
