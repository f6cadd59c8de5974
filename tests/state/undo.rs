//! Undo (u) and redo (U, Ctrl-R) as state transitions: keys fed to
//! `app::update` on `common::lab_tree`, each write carried out by a
//! stand-in for the writer thread on the fixture directory ([`perform`]:
//! it reads the old value from the file, as `source::writer` does, writes
//! the new text, and answers with `Msg::WriteFinished`), so that every
//! undo is built from what the file held before, as on a real host.
//!
//! ```text
//! /
//! ├─ batch      cpu io memory pids; pids.max 1140, cpu.max "max 100000",
//! │             io.weight "default 100"
//! ├─ lab        hands only io down
//! │  └─ dd
//! └─ ...
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::writes::WriteRequest;
use cgtop::app::{App, Effect, Level, Mode, Msg};
use cgtop::cgroupfs::{Controllers, CpuMax, Limit};
use cgtop::model::write::{self, create_group, set_cpu_max, set_io_weight, set_pids_max};
use cgtop::model::{ControllerChange, Errno, GroupPath, Op, WriteError, WriteKind, WriteOutcome};
use cgtop::source::collector::Collector;
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;

/// The lab tree at 120x40 after one refresh, writable, `path` selected
/// and read in full.
fn lab_on(path: &str) -> (App, Collector, tempfile::TempDir) {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, path);
    read_inspection(&mut a, &mut c, 1.0);
    (a, c, dir)
}

/// The ops of the one write among `fx` (none: empty).
fn written(fx: &[Effect]) -> Vec<Op> {
    let mut out = Vec::new();
    for e in fx {
        if let Effect::Write(WriteRequest::Ops(ops) | WriteRequest::Typed { ops, .. }) = e {
            out.extend(ops.iter().cloned());
        }
    }
    out
}

fn status(a: &App) -> (Level, String) {
    let s = a.status.as_ref().expect("a status line");
    (s.level, s.text.clone())
}

/// Makes `group` in the fixture as mkdir would (and as the scanner sees:
/// the ancestors count one more descendant).
fn make_dir(root: &Path, group: &str) {
    let dir = root.join(group);
    std::fs::create_dir(&dir).expect("mkdir");
    for (f, v) in [
        ("cgroup.procs", ""),
        ("cgroup.controllers", "io\n"),
        ("cgroup.subtree_control", ""),
    ] {
        std::fs::write(dir.join(f), v).expect("write");
    }
    count_descendants(root, group, 1);
}

/// The writer's part, on the fixture: each op in order, the old value
/// read first (what undo needs), the new text written, the file read
/// back. A subtree_control change is applied to the list, as the kernel
/// does.
fn perform(root: &Path, ops: &[Op]) -> Vec<WriteOutcome> {
    ops.iter()
        .map(|op| match op {
            Op::CreateGroup(p, ..) => {
                make_dir(root, rel(p));
                WriteOutcome::done(op.clone(), None, None)
            }
            Op::RemoveGroup(p, _, _) => {
                remove_group(root, rel(p));
                WriteOutcome::done(op.clone(), None, None)
            }
            Op::Write(w) => {
                let dir = root.join(w.group.as_rel_path());
                let old = op
                    .undo_source()
                    .map(|f| std::fs::read_to_string(dir.join(f)).expect("old value"));
                let file = dir.join(&w.file);
                let new = match &w.kind {
                    WriteKind::SubtreeControl(changes) => {
                        let mut on: Vec<String> =
                            Controllers::parse(old.as_deref().unwrap_or("")).0;
                        for ch in changes {
                            on.retain(|n| *n != ch.name);
                            if ch.enable {
                                on.push(ch.name.clone());
                            }
                        }
                        format!("{}\n", on.join(" "))
                    }
                    _ => format!("{}\n", w.contents),
                };
                std::fs::write(&file, &new).expect("write");
                WriteOutcome::done(op.clone(), old, Some(new))
            }
        })
        .collect()
}

/// The writer's answer to `ops` arrives.
fn finish(a: &mut App, c: &mut Collector, outcomes: Vec<WriteOutcome>) -> Vec<Effect> {
    send(
        a,
        c,
        Msg::WriteFinished {
            outcomes,
            unix_secs: 1_700_000_000,
        },
    )
}

/// Performs the write among `fx` on the fixture and delivers the answer;
/// returns the ops written.
fn carry_out(a: &mut App, c: &mut Collector, root: &Path, fx: &[Effect]) -> Vec<Op> {
    let ops = written(fx);
    assert!(!ops.is_empty(), "no write among {fx:?}");
    let out = perform(root, &ops);
    finish(a, c, out);
    ops
}

/// A key, and the write it sends carried out.
fn press_and_write(a: &mut App, c: &mut Collector, root: &Path, k: Msg) -> Vec<Op> {
    let fx = send(a, c, k);
    carry_out(a, c, root, &fx)
}

/// In the limits form (opened here): `text` into the field of `file`,
/// Enter, the write carried out, the form closed.
fn set_limit(a: &mut App, c: &mut Collector, root: &Path, file: &str, text: &str) -> Vec<Op> {
    send(a, c, ch('e'));
    for _ in 0..20 {
        let Mode::Limits(f) = &a.mode else {
            panic!("{:?}", a.mode)
        };
        if f.fields[f.cursor].kind.file() == file {
            break;
        }
        send(a, c, key(KeyCode::Down));
    }
    type_text(a, c, text);
    let ops = press_and_write(a, c, root, key(KeyCode::Enter));
    send(a, c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    ops
}

fn read(root: &Path, group: &str, file: &str) -> String {
    std::fs::read_to_string(root.join(group).join(file)).unwrap()
}

fn cpu(quota: Option<u64>) -> CpuMax {
    CpuMax {
        quota,
        period: 100_000,
    }
}

#[test]
fn u_walks_back_through_the_session_with_the_old_value_of_each_write() {
    let (mut a, mut c, d) = lab_on("batch");
    let root = d.path();
    let batch = g("batch");
    assert_eq!(read(root, "batch", "pids.max"), "1140\n");
    assert_eq!(read(root, "batch", "cpu.max"), "max 100000\n");
    assert_eq!(read(root, "batch", "io.weight"), "default 100\n");

    // the issue's session: pids.max, cpu.max, io.weight
    let pids = set_limit(&mut a, &mut c, root, "pids.max", "100");
    assert_eq!(pids, [set_pids_max(&batch, Limit::Value(100))]);
    set_limit(&mut a, &mut c, root, "cpu.max", "50%");
    set_limit(&mut a, &mut c, root, "io.weight", "200");
    assert_eq!(read(root, "batch", "io.weight"), "default 200\n");
    assert_eq!(
        status(&a),
        (
            Level::Info,
            "done: set io.weight of /batch to default 200".into()
        )
    );

    // u three times: io.weight, then cpu.max, then pids.max, each back to
    // what it was, and the status says undone
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(back, [set_io_weight(&batch, None, 100)]);
    assert_eq!(
        status(&a),
        (
            Level::Info,
            "undone: set io.weight of /batch to default 200 (wrote default 100 to io.weight)"
                .into()
        )
    );
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(
        back,
        [set_cpu_max(&batch, cpu(None))],
        "not io.weight again"
    );
    assert_eq!(
        status(&a).1,
        "undone: set cpu.max of /batch to 50000 100000 (wrote max 100000 to cpu.max)"
    );
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(back, [set_pids_max(&batch, Limit::Value(1140))]);
    assert_eq!(
        status(&a).1,
        "undone: set pids.max of /batch to 100 (wrote 1140 to pids.max)"
    );
    // the files are as before the session
    assert_eq!(read(root, "batch", "pids.max"), "1140\n");
    assert_eq!(read(root, "batch", "cpu.max"), "max 100000\n");
    assert_eq!(read(root, "batch", "io.weight"), "default 100\n");
    // and there is nothing before it
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    assert_eq!(
        status(&a),
        (
            Level::Info,
            "nothing to undo (kill and remove cannot be undone)".into()
        )
    );
}

#[test]
fn redo_writes_again_what_u_undid_and_a_new_write_clears_it() {
    let (mut a, mut c, d) = lab_on("batch");
    let root = d.path();
    let batch = g("batch");
    set_limit(&mut a, &mut c, root, "pids.max", "100");
    set_limit(&mut a, &mut c, root, "cpu.max", "50%");
    press_and_write(&mut a, &mut c, root, ch('u'));
    press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(read(root, "batch", "pids.max"), "1140\n");

    // U redoes the last undone first: pids.max, then cpu.max (Ctrl-R too)
    let again = press_and_write(&mut a, &mut c, root, ch('U'));
    assert_eq!(again, [set_pids_max(&batch, Limit::Value(100))]);
    assert_eq!(
        status(&a),
        (Level::Info, "redone: set pids.max of /batch to 100".into())
    );
    let again = press_and_write(&mut a, &mut c, root, ctrl('r'));
    assert_eq!(again, [set_cpu_max(&batch, cpu(Some(50_000)))]);
    assert_eq!(
        status(&a).1,
        "redone: set cpu.max of /batch to 50000 100000"
    );
    assert!(send(&mut a, &mut c, ch('U')).is_empty());
    assert_eq!(
        status(&a).1,
        "nothing to redo (what u undoes waits here until a new write)"
    );

    // the redone writes are undone again, with the values read this time
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(back, [set_cpu_max(&batch, cpu(None))]);

    // a new ordinary write: the redo stack is gone, as in an editor
    set_limit(&mut a, &mut c, root, "io.weight", "300");
    assert!(send(&mut a, &mut c, ch('U')).is_empty());
    assert_eq!(
        status(&a).1,
        "nothing to redo (what u undoes waits here until a new write)"
    );
    // and u walks back through it, then the pids.max redone above
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(back, [set_io_weight(&batch, None, 100)]);
    let back = press_and_write(&mut a, &mut c, root, ch('u'));
    assert_eq!(back, [set_pids_max(&batch, Limit::Value(1140))]);
}

/// `n`, `name`, Enter on the selected group: the mkdir carried out.
fn create(a: &mut App, c: &mut Collector, root: &Path, name: &str) {
    send(a, c, ch('n'));
    type_text(a, c, name);
    press_and_write(a, c, root, key(KeyCode::Enter));
}

#[test]
fn a_group_made_then_removed_with_del_offers_no_rmdir() {
    let (mut a, mut c, d) = lab_on("lab");
    let root = d.path();
    set_limit(&mut a, &mut c, root, "pids.max", "50");
    create(&mut a, &mut c, root, "web");
    tick(&mut a, &mut c, 2.0);
    select(&mut a, &mut c, "lab/web");
    // Del asks first; y removes it
    assert!(send(&mut a, &mut c, key(KeyCode::Delete)).is_empty());
    let ops = press_and_write(&mut a, &mut c, root, ch('y'));
    assert_eq!(ops, [write::remove_group(&g("lab/web"))]);
    let (level, text) = status(&a);
    assert_eq!(level, Level::Info);
    assert_eq!(
        text,
        "done: remove the group /lab/web; dropped the undo of \"create the group /lab/web\": \
         /lab/web was removed"
    );
    tick(&mut a, &mut c, 3.0);
    // u: not an rmdir of the vanished group, but the write before it
    let fx = send(&mut a, &mut c, ch('u'));
    assert_eq!(a.mode, Mode::Normal, "no question about removing /lab/web");
    assert_eq!(written(&fx), [set_pids_max(&g("lab"), Limit::Value(1140))]);
}

#[test]
fn a_group_removed_outside_cgtop_drops_its_entries_at_the_next_refresh() {
    let (mut a, mut c, d) = lab_on("lab");
    let root = d.path();
    set_limit(&mut a, &mut c, root, "pids.max", "50");
    create(&mut a, &mut c, root, "web");
    // a refresh scanned before the mkdir (the fixture stands for it: the
    // directory is taken away for one scan) does not drop the entry
    remove_group(root, "lab/web");
    tick(&mut a, &mut c, 2.0);
    assert_eq!(status(&a).1, "done: create the group /lab/web");
    make_dir(root, "lab/web");
    tick(&mut a, &mut c, 3.0);
    // someone else removes it: the next refresh drops its undo
    remove_group(root, "lab/web");
    tick(&mut a, &mut c, 4.0);
    assert_eq!(
        status(&a),
        (
            Level::Warn,
            "dropped the undo of \"create the group /lab/web\": /lab/web is gone".into()
        )
    );
    // u: the write before it, no rmdir of a group that is not there
    let fx = send(&mut a, &mut c, ch('u'));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(written(&fx), [set_pids_max(&g("lab"), Limit::Value(1140))]);
}

#[test]
fn a_failed_undo_keeps_its_entry_and_says_why() {
    let (mut a, mut c, d) = lab_on("batch");
    let root = d.path();
    let batch = g("batch");
    set_limit(&mut a, &mut c, root, "pids.max", "100");
    let fx = send(&mut a, &mut c, ch('u'));
    let back = set_pids_max(&batch, Limit::Value(1140));
    assert_eq!(written(&fx), std::slice::from_ref(&back));
    let refused = WriteOutcome::failed(
        back.clone(),
        WriteError {
            errno: Some(Errno::ACCESS),
            what: "/batch/pids.max".into(),
            explanation: "permission denied".into(),
            fix: None,
        },
    );
    finish(&mut a, &mut c, vec![refused]);
    assert_eq!(
        status(&a),
        (
            Level::Error,
            "undo failed, EACCES: /batch/pids.max was refused; still on the undo stack".into()
        )
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    // the same undo again, nothing redoable yet
    let fx = send(&mut a, &mut c, ch('u'));
    assert_eq!(written(&fx), [back]);
}

#[test]
fn one_request_of_several_ops_is_one_entry() {
    let (mut a, mut c, d) = lab_on("lab");
    let root = d.path();
    let lab = g("lab");
    // enabling along a path: two subtree_control writes in one request
    let ops = vec![
        write::set_subtree_control(&GroupPath::root(), &[ControllerChange::enable("rdma")]),
        write::set_subtree_control(&lab, &[ControllerChange::enable("rdma")]),
    ];
    let out = perform(root, &ops);
    finish(&mut a, &mut c, out);
    // one u takes both back, the deeper one first; it disables, so asks
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    let Mode::Confirm(q) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    // the question says which action it takes back, then each write
    assert_eq!(
        cgtop::ui::dialogs::confirm_lines(q)[..3],
        [
            "This undoes: change the controllers / hands to its children: +rdma; \
             change the controllers /lab hands to its children: +rdma",
            "• change the controllers /lab hands to its children: -rdma",
            "• change the controllers / hands to its children: -rdma",
        ]
    );
    let off = |g: &GroupPath| write::set_subtree_control(g, &[ControllerChange::disable("rdma")]);
    assert_eq!(
        q.request,
        WriteRequest::Ops(vec![off(&lab), off(&GroupPath::root())])
    );
    let ops = press_and_write(&mut a, &mut c, root, ch('y'));
    assert_eq!(ops.len(), 2);
    assert!(status(&a)
        .1
        .starts_with("undone: change the controllers / hands"));
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    assert_eq!(a.mode, Mode::Normal, "the two were one entry");
}

#[test]
fn the_leaf_fix_is_undone_by_its_controllers_and_keeps_the_leaf() {
    let (mut a, mut c, d) = lab_on("lab");
    let lab = g("lab");
    let leaf = g("lab/leaf");
    // what the writer reports for the leaf fix: mkdir, each process
    // moved, the controller enabled
    let enable = write::set_subtree_control(&lab, &[ControllerChange::enable("memory")]);
    let out = vec![
        WriteOutcome::done(create_group(&leaf), None, None),
        WriteOutcome::done(
            cgtop::model::write::move_process(4_190_301, &leaf, false),
            None,
            None,
        ),
        WriteOutcome::done(enable, Some("io\n".into()), Some("io memory\n".into())),
    ];
    finish(&mut a, &mut c, out);
    send(&mut a, &mut c, ch('u'));
    let Mode::Confirm(q) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    // rmdir of the leaf would fail with EBUSY: its processes live there
    assert_eq!(
        q.request,
        WriteRequest::Ops(vec![write::set_subtree_control(
            &lab,
            &[ControllerChange::disable("memory")]
        )])
    );
    // one action, one entry: after it, no rmdir of the leaf is offered
    press_and_write(&mut a, &mut c, d.path(), ch('y'));
    assert_eq!(
        status(&a).1,
        "undone: change the controllers /lab hands to its children: +memory \
         (wrote -memory to cgroup.subtree_control)"
    );
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
}
