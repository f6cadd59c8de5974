//! The events end to end: the real binary in tmux on this machine's
//! cgroup2 (root only), refreshing every 30 s, a group frozen from
//! outside cgtop and then removed: the header counts the event at once
//! (not at the next refresh), `!` lists it with its detail after the
//! group is gone, and opening the screen marks it seen. Groups live
//! under `cgtop-test-<pid>-<n>` and are removed.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::sandbox::Sandbox;
use common::tmux::Tmux;

#[test]
fn a_freeze_from_outside_is_listed_and_kept_after_its_group_goes() {
    let Some(t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("brief");
    if !t.dir("brief").join("cgroup.freeze").exists() {
        println!("skipped: no cgroup.freeze (kernel before 5.2)");
        return;
    }
    let Some(term) = Tmux::shell_or_skip(100, 30) else {
        return;
    };
    let bin = env!("CARGO_BIN_EXE_cgtop");
    // a long interval: what is seen comes from the watcher, not a refresh
    term.send(&[&format!("{bin} -d 30 {}", t.rel), "Enter"]);
    term.wait_for("2 groups");
    std::fs::write(t.dir("brief").join("cgroup.freeze"), "1").unwrap();
    t.wait_events("brief", "frozen 1");
    term.wait_for("1 new event (!)");
    std::fs::remove_dir(t.dir("brief")).unwrap();
    term.send(&["!"]);
    let s = term.wait_for("events: 1 ");
    let row = s
        .lines()
        .find(|l| l.contains("/brief"))
        .unwrap_or_else(|| panic!("no row for the group:\n{s}"));
    assert!(row.contains("frozen"), "{row}");
    assert!(s.contains("what: frozen"), "{s}");
    assert!(s.contains("from: cgroup.events frozen 1 of /"), "{s}");
    // seen: the header's count is gone once the screen was open
    term.send(&["Escape"]);
    let s = term.wait_until(
        "the header's count gone",
        std::time::Duration::from_secs(5),
        |s| !s.contains("new event"),
    );
    assert!(!s.contains("new event"), "{s}");
    term.send(&["q"]);
}
