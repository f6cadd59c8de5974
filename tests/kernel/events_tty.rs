//! The events end to end: the real binary in tmux on this machine's
//! cgroup2 (root only), refreshing every 30 s, a group frozen from
//! outside cgtop and then removed: the header counts the event at once
//! (not at the next refresh), `!` lists it with its detail after the
//! group is gone, and opening the screen marks it seen. Groups live
//! under `cgtop-test-<pid>-<n>` and are removed.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::sandbox::Sandbox;
use common::sandbox_v1;
use common::tmux::Tmux;
use std::time::Duration;

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
    // the watcher starts after the first rates (off the first frame's
    // path): the events screen says what it watches once it is up
    term.send(&["!"]);
    term.wait_for("watched:");
    term.send(&["Escape"]);
    // the screen closed before the freeze: an event that comes while it
    // is open is seen at once, and the header would never count it
    term.wait_until("the events screen closed", Duration::from_secs(10), |s| {
        !s.contains("no events yet")
    });
    std::fs::write(t.dir("brief").join("cgroup.freeze"), "1").unwrap();
    t.wait_events("brief", "frozen 1");
    term.wait_for("1 new event (!)");
    std::fs::remove_dir(t.dir("brief")).unwrap();
    term.send(&["!"]);
    // the whole screen drawn, not a capture in the middle of a redraw
    let s = term.wait_until("the event and its detail", Duration::from_secs(10), |s| {
        s.contains("events: 1 ") && s.contains("from: ")
    });
    let row = s
        .lines()
        .find(|l| l.contains("/brief"))
        .unwrap_or_else(|| panic!("no row for the group:\n{s}"));
    assert!(row.contains("frozen"), "{row}");
    assert!(s.contains("what: frozen"), "{s}");
    assert!(s.contains("from: cgroup.events frozen 1 of /"), "{s}");
    // seen: the header's count is gone once the screen was open
    term.send(&["Escape"]);
    let s = term.wait_until("the header's count gone", Duration::from_secs(5), |s| {
        !s.contains("new event")
    });
    assert!(!s.contains("new event"), "{s}");
    term.send(&["q"]);
}

/// On a host whose memory controller is on a cgroup v1 hierarchy, the
/// events screen says that v1 memory's OOM kills are watched (through
/// memory.oom_control), and a kill in a group limited there (320M, a
/// 400 MiB allocator) is listed with the task's name and pid from
/// /dev/kmsg, as v1's memory limit hit (v1 has no memory.max).
#[test]
fn a_v1_oom_kill_is_on_the_events_screen_with_its_task_and_pid() {
    let Some((mut sb, g)) = sandbox_v1::oom_group_or_skip("oomtty") else {
        return;
    };
    let Some(term) = Tmux::shell_or_skip(120, 30) else {
        return;
    };
    let kmsg = std::fs::File::open("/dev/kmsg").is_ok();
    let bin = env!("CARGO_BIN_EXE_cgtop");
    term.send(&[&format!("{bin} -d 1 {}", sb.rel), "Enter"]);
    term.wait_for("──hog");
    term.send(&["!"]);
    let s = term.wait_for("(memory.oom_control)");
    let said: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.contains("no events yet"))
        .take(3)
        .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect();
    println!("before the kill: {said:?}");
    assert!(
        said.iter()
            .any(|l| l.starts_with("v1 memory: OOM kills of ")
                && l.ends_with(" groups (memory.oom_control)")),
        "{s}"
    );
    term.send(&["Escape"]);
    let pid = sb.spawn_in(&g, &["python3", "-c", "b = b'x' * (400 << 20)"]);
    let status = sb.wait_child(pid, Duration::from_secs(30));
    assert!(status.is_some(), "the allocator was not killed in 30 s");
    term.wait_until("an event counted", Duration::from_secs(10), |s| {
        s.contains("new event")
    });
    term.send(&["!"]);
    let s = term.wait_until(
        "the OOM kill and the selected event's detail",
        Duration::from_secs(10),
        |s| s.contains("OOM kill") && s.contains("from: "),
    );
    let row = s
        .lines()
        .find(|l| l.contains("OOM kill"))
        .unwrap_or_else(|| panic!("no OOM kill row:\n{s}"));
    assert!(row.contains("/hog"), "{row}");
    if kmsg {
        assert!(row.contains(&format!("python3 (pid {pid}")), "{s}");
        assert!(
            row.contains("the memory limit of"),
            "v1 has no memory.max: {row}"
        );
    } else {
        println!("/dev/kmsg not readable: the row's task and pid not checked");
    }
    let sel = s
        .lines()
        .find(|l| l.contains("from: "))
        .unwrap_or_else(|| panic!("no detail of the selected event:\n{s}"));
    println!("the kill on the screen: {}\n{}", row.trim(), sel.trim());
    term.send(&["q"]);
}
