//! The inspected group is read in full on every refresh, through
//! descriptors kept from one refresh to the next (pread, no open a file):
//! what another process writes to its files, or to its ancestors' limits,
//! shows in the next refresh all the same, and a group removed and made
//! again under its name is read from its new files.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use cgtop::cgroupfs::Limit;
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, Inspection};
use std::fs;
use std::path::Path;

const GROUP: &str = "system.slice/system-getty.slice/getty@tty1.service";
const PARENT: &str = "system.slice/system-getty.slice";

fn inspected(c: &mut Collector, secs: f64) -> Inspection {
    common::refresh(c, secs).inspection.expect("an inspection")
}

/// Written in place, as a process writing the kernel's file does.
fn write(root: &Path, group: &str, file: &str, text: &str) {
    fs::write(root.join(group).join(file), text).unwrap();
}

fn raw<'a>(f: &'a Inspection, file: &str) -> &'a str {
    let (_, v) = f.detail.raw.iter().find(|(n, _)| n == file).unwrap();
    v.as_deref().unwrap()
}

#[test]
fn the_inspected_groups_files_stay_open_between_refreshes() {
    let t = common::copy_fixture("pure-v2-systemd");
    let files = fs::read_dir(t.path().join(GROUP)).unwrap().count();
    let mut plain = common::collector(t.path());
    common::refresh(&mut plain, 0.0);
    let scanners = common::refresh(&mut plain, 1.0).kept_fds;
    let mut c = common::collector(t.path());
    c.set_inspected(Some(GroupPath::new(GROUP)));
    common::refresh(&mut c, 0.0);
    let r = common::refresh(&mut c, 1.0);
    // every file of the group but cgroup.kill (never read), and its
    // ancestors' limits and controllers
    assert!(
        r.kept_fds >= scanners + files - 1,
        "{} kept with the inspection, {scanners} without, {files} files in the group",
        r.kept_fds
    );
}

#[test]
fn a_limit_written_by_another_process_shows_in_the_next_refresh() {
    let t = common::copy_fixture("pure-v2-systemd");
    let r = t.path();
    let mut c = common::collector(r);
    c.set_inspected(Some(GroupPath::new(GROUP)));
    let f = inspected(&mut c, 0.0);
    assert_eq!(f.detail.memory_max, Some(Limit::Max));
    let f = inspected(&mut c, 1.0);
    assert_eq!(f.memory_limits[1].1, Some(Limit::Max), "the parent's");
    // the group's own limit, its parent's, and a file of its raw page
    write(r, GROUP, "memory.max", "1048576\n");
    write(r, PARENT, "memory.max", "2097152\n");
    write(r, GROUP, "cgroup.max.depth", "3\n");
    let f = inspected(&mut c, 2.0);
    assert_eq!(f.detail.memory_max, Some(Limit::Value(1_048_576)));
    assert_eq!(f.memory_limits[0].0, GroupPath::new(GROUP));
    assert_eq!(f.memory_limits[0].1, Some(Limit::Value(1_048_576)));
    assert_eq!(f.memory_limits[1].0, GroupPath::new(PARENT));
    assert_eq!(f.memory_limits[1].1, Some(Limit::Value(2_097_152)));
    assert_eq!(raw(&f, "memory.max"), "1048576");
    assert_eq!(raw(&f, "cgroup.max.depth"), "3");
    // and back: a shorter text is read whole, nothing of the longer left
    write(r, GROUP, "memory.max", "max\n");
    let f = inspected(&mut c, 3.0);
    assert_eq!(f.detail.memory_max, Some(Limit::Max));
    assert_eq!(raw(&f, "memory.max"), "max");
}

#[test]
fn a_group_made_again_under_its_name_is_read_from_its_new_files() {
    let t = common::copy_fixture("pure-v2-systemd");
    let r = t.path();
    let mut c = common::collector(r);
    c.set_inspected(Some(GroupPath::new(GROUP)));
    inspected(&mut c, 0.0);
    inspected(&mut c, 1.0);
    // removed and made again between two refreshes (tmpfs: the old files
    // still read their old text through a kept descriptor)
    let dir = r.join(GROUP);
    let saved = tempfile::tempdir().unwrap();
    for e in fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            fs::copy(e.path(), saved.path().join(e.file_name())).unwrap();
        }
    }
    fs::remove_dir_all(&dir).unwrap();
    fs::create_dir(&dir).unwrap();
    for e in fs::read_dir(saved.path()).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    write(r, GROUP, "memory.max", "4096\n");
    // the walk that finds it made again (on kernfs the scanner's kept
    // files read ENODEV; tmpfs has no such error: a walk is asked for)
    c.invalidate();
    let f = inspected(&mut c, 2.0);
    assert_eq!(f.detail.memory_max, Some(Limit::Value(4096)));
    assert_eq!(raw(&f, "memory.max"), "4096");
}

#[test]
fn the_inspections_descriptors_are_closed_when_no_group_is_inspected() {
    let t = common::copy_fixture("pure-v2-systemd");
    let mut c = common::collector(t.path());
    c.set_inspected(Some(GroupPath::new(GROUP)));
    common::refresh(&mut c, 0.0);
    let inspecting = common::refresh(&mut c, 1.0).kept_fds;
    // the detail closed: its files are not held until the periodic walk
    c.set_inspected(None);
    let closed = common::refresh(&mut c, 2.0).kept_fds;
    let mut plain = common::collector(t.path());
    common::refresh(&mut plain, 0.0);
    common::refresh(&mut plain, 1.0);
    let scanners = common::refresh(&mut plain, 2.0).kept_fds;
    assert!(inspecting > scanners, "{inspecting} kept while inspecting");
    assert_eq!(closed, scanners, "the scanners' alone once closed");
}
