//! A write asked about a shown group is held to that group: the op the
//! app builds from the selection carries the inode of the group's
//! directory as the last refresh read it (`Op::ino`), which the writer
//! checks before it writes (`source::writer`), so that an answer given
//! after the group was removed and made again under its name never
//! reaches the new group. The undo of such a write is held to the same
//! group. The layout is the one the program sets for one cgroup2 tree
//! (`Hiers::single`).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::cgroupfs::Limit;
use cgtop::model::host::layout::Layout;
use cgtop::model::write::{self, history::Entry};
use cgtop::model::{MemoryFile, Op, WriteOutcome};
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;

/// The lab app, its layout the program's for one cgroup2 tree.
fn lab_held() -> (App, cgtop::source::collector::Collector, tempfile::TempDir) {
    let (mut a, c, d) = lab();
    a.layout = Layout {
        v2: Some(d.path().to_path_buf()),
        v1: Vec::new(),
    };
    (a, c, d)
}

fn ino(d: &Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap())
}

#[test]
fn freeze_kill_and_remove_carry_the_inode_of_the_selected_group() {
    let (mut a, mut c, d) = lab_held();
    let batch = ino(&d.path().join("batch"));
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('f'));
    assert_eq!(
        confirm(&a).ops(),
        [write::freeze(&g("batch"), true).of_group(Some(batch))]
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('K'));
    assert_eq!(
        confirm(&a).ops(),
        [write::kill(&g("batch")).of_group(Some(batch))]
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    // an empty group, to be removed
    let dd = d.path().join("lab/dd");
    let events = dd.join("cgroup.events");
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::write(events, "populated 0\nfrozen 0\n").unwrap();
    std::fs::write(dd.join("cgroup.procs"), "").unwrap();
    tick(&mut a, &mut c, 1.0);
    on(&mut a, &mut c, "lab/dd");
    send(&mut a, &mut c, key(KeyCode::Delete));
    assert_eq!(
        confirm(&a).ops(),
        [write::remove_group(&g("lab/dd")).of_group(Some(ino(&dd)))]
    );
}

#[test]
fn the_undo_of_a_held_write_is_held_to_the_same_group() {
    let set = write::set_memory_limit(&g("batch"), MemoryFile::Max, Limit::Value(1 << 30))
        .of_group(Some(42));
    let mut done = WriteOutcome::from_result(set, Ok(()));
    done.old = Some("max\n".into());
    let entry = Entry::from_outcomes(&[done]).unwrap();
    let back: Vec<Op> = entry.undo_ops();
    assert_eq!(
        back,
        [write::set_memory_limit(&g("batch"), MemoryFile::Max, Limit::Max).of_group(Some(42))]
    );
}
