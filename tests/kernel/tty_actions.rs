//! The actions end to end: the real binary in tmux on this machine's real
//! cgroup2 hierarchy, driven by keys. Select a group, press `f`, confirm,
//! and the kernel reports it frozen; press `u` and it is thawed again.
//! Needs root, a writable cgroup2 and tmux; otherwise prints why it was
//! skipped. Groups live under `cgtop-test-<pid>-<n>` and are removed.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::sandbox::Sandbox;
use common::tmux::Tmux;
use std::thread::sleep;
use std::time::Duration;

fn events(t: &Sandbox, sub: &str) -> String {
    std::fs::read_to_string(t.dir(sub).join("cgroup.events")).unwrap_or_default()
}

#[test]
fn freeze_by_key_then_undo_thaws() {
    let _busy = crate::common::one_busy_loop_at_a_time();
    let Some(mut t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("work");
    t.spawn_in("work", "while :; do :; done");
    let Some(term) = Tmux::shell_or_skip(110, 40) else {
        return;
    };
    let bin = env!("CARGO_BIN_EXE_cgtop");
    term.send(&[&format!("{bin} -d 0.5 {}", t.rel), "Enter"]);
    // (not just "work": the binary's own path may contain it)
    term.wait_for("2 groups");
    // the start group is the first row; `work` is the second
    term.send(&["j"]);
    term.wait_for(&format!("/{}/work", t.rel));
    term.send(&["f"]);
    let s = term.wait_for("freeze /");
    assert!(s.contains("y/Enter go ahead"), "freezing asks first:\n{s}");
    assert!(
        events(&t, "work").contains("frozen 0"),
        "nothing is written before the confirmation"
    );
    term.send(&["y"]);
    t.wait_events("work", "frozen 1");
    let s = term.wait_for("frozen for");
    assert!(
        s.contains("done: freeze"),
        "the status line says what was done:\n{s}"
    );
    // the F mark in the tree, and `!`: the freeze came as an event too
    // (cgroup.events frozen 1). The event watcher's thread delivers it on
    // its own: it may come a frame after the status line, never later
    // than a few refreshes
    let row = |s: &str| {
        s.lines()
            .find(|l| l.contains("work") && !l.contains('/'))
            .unwrap_or_default()
            .trim_end()
            .to_owned()
    };
    term.wait_until(
        "populated and frozen marks, and the event mark (PF !) on work's row",
        Duration::from_secs(3),
        |s| row(s).ends_with("PF !"),
    );
    // undo: thaw, no confirmation needed
    term.send(&["u"]);
    t.wait_events("work", "frozen 0");
    term.wait_for("undone: freeze");
    // the action log lists both writes
    term.send(&["L"]);
    // the box's first line says where the file is (or why it is not)
    let s = term.wait_for("┌ action log");
    assert!(
        s.contains("log: /") || s.contains("not logged to a file"),
        "where the log is:\n{s}"
    );
    // the log's lines ("... cgroup.freeze 0 -> 1 ok"), not the detail
    // pane beside the box, which may name the file too
    assert_eq!(
        s.lines()
            .filter(|l| l.contains("cgroup.freeze") && l.contains(" -> "))
            .count(),
        2,
        "two writes in the log:\n{s}"
    );
    term.send(&["Escape"]);
    sleep(Duration::from_millis(300));
    term.send(&["q"]);
}
