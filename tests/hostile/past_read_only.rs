//! Attacks on time travel (issue 9 item 2): writes are off while the
//! screen shows the past, through every path, not only the keys that
//! open a dialog.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, Effect, Mode, Msg};
use cgtop::model::write::explain::{explain, offer_for};
use cgtop::model::{ControllerChange, Errno, Op, WriteKind, WriteOp, WriteOutcome};
use cgtop::source::collector::Collector;
use cgtop::source::writer;
use common::lab::*;
use common::*;
use std::path::Path;

fn subtree(group: &str, what: &str) -> Op {
    Op::Write(WriteOp {
        group: g(group),
        file: "cgroup.subtree_control".into(),
        contents: format!("+{what}"),
        kind: WriteKind::SubtreeControl(vec![ControllerChange::enable(what)]),
        hier: cgtop::model::host::layout::HierId::V2,
        via: cgtop::model::write::Via::Direct,
        ino: None,
        freezer_ino: None,
    })
}

fn refused(root: &Path, op: Op, errno: Errno) -> WriteOutcome {
    let ctx = writer::gather_context(root, &op, errno);
    let error = explain(&op, errno, &ctx);
    let offer = offer_for(&op, errno, &ctx);
    WriteOutcome::failed(op, error).with_offer(offer)
}

/// A few refreshes of history, then `T`: the past on screen.
fn into_the_past(a: &mut App, c: &mut Collector) {
    for s in 2..6 {
        tick(a, c, f64::from(s));
    }
    send(a, c, ch('T'));
    assert!(a.in_past(), "T shows the past");
}

fn writes(fx: &[Effect]) -> Vec<&Effect> {
    fx.iter()
        .filter(|e| matches!(e, Effect::Write(_)))
        .collect()
}

/// A write sent live fails after `T` was pressed, and its answer offers
/// a fix (enable the controller along the path): the offer opened over
/// the past, and `y` wrote it, although writes are off in the past and
/// the screen says so.
#[test]
fn an_offer_that_arrives_in_the_past_writes_nothing() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "lab/dd");
    into_the_past(&mut a, &mut c);
    let out = refused(d.path(), subtree("lab/dd", "memory"), Errno::NOENT);
    assert!(out.offer.is_some());
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![out],
            unix_secs: 1_700_000_000,
        },
    );
    if matches!(a.mode, Mode::Confirm(_)) {
        let fx = send(&mut a, &mut c, ch('y'));
        assert!(writes(&fx).is_empty(), "written in the past: {fx:?}");
        assert!(
            a.status.as_ref().is_some_and(|s| s.text.contains("past")),
            "{:?}",
            a.status
        );
    }
}

/// The same with the leaf-fix offer (EBUSY: processes in the group).
#[test]
fn a_leaf_fix_offered_in_the_past_writes_nothing() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    into_the_past(&mut a, &mut c);
    let out = refused(d.path(), subtree("batch", "cpu"), Errno::BUSY);
    assert!(out.offer.is_some());
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![out],
            unix_secs: 1_700_000_000,
        },
    );
    if matches!(a.mode, Mode::LeafFix(_)) {
        let fx = send(&mut a, &mut c, key(crossterm::event::KeyCode::Enter));
        assert!(writes(&fx).is_empty(), "written in the past: {fx:?}");
    }
}
