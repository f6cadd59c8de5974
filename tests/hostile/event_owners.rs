//! A delegated user's events are theirs, on this host's cgroup2: a group
//! chowned to a uid no account has (the directory and the files a
//! delegate writes, as systemd's `Delegate=` does), where that user, not
//! root, makes two groups and moves its own process between them without
//! end (each move a `populated` change in both). Every event the watcher
//! sees there carries that owner; root's group's event carries root's.
//! Those real events, replayed past the events list's cap, push off only
//! their owner's own: root's stays.

use crate::common::have;
use crate::common::sandbox::Sandbox;
use crate::delegated_watch::{delegated, events_until, received, roots_populated, started_watcher};
use crate::memory_events::{flooded, kept};
use cgtop::model::time::events::Event;
use cgtop::source::accounts::Accounts;
use cgtop::source::events::WatchCommand;
use std::time::Duration;

/// A uid no account on a test machine has: the delegated group's owner.
const OWNER: u32 = 64_127;

/// How many times the owner's process moves between its two groups.
const MOVES: u32 = 2_000;

#[test]
fn a_delegated_users_real_events_are_theirs_and_replace_only_their_own() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    if !have("setpriv") {
        println!("skipped: setpriv is not installed (the owner's process)");
        return;
    }
    sb.mkdir("sys");
    let user = delegated(&mut sb, "user", OWNER);
    let (h, rx) = started_watcher(&sb, Duration::from_secs(5));
    // root's: a process of root's starts in sys
    sb.spawn_in("sys", "exec sleep 60");
    // the owner's: a shell of theirs, put in `user` by root (as a login
    // is), makes two groups there and moves itself between them
    let script = format!(
        "until grep -q '^0::.*/user$' /proc/self/cgroup; do sleep 0.02; done; \
         cd '{}' && mkdir a b && i=0 && while [ $i -lt {MOVES} ]; do \
         echo $$ > a/cgroup.procs; echo $$ > b/cgroup.procs; i=$((i+1)); done",
        user.display()
    );
    let pid = sb.spawn_as(OWNER, &["sh", "-c", &script]);
    std::fs::write(user.join("cgroup.procs"), pid.to_string()).unwrap();
    let (sys, theirs) = (sb.path("sys"), sb.path("user"));
    let got = events_until(
        Duration::from_secs(20),
        || received(&rx),
        |got| {
            got.iter().any(|e| e.path == sys)
                && got.iter().filter(|e| e.path.is_within(&theirs)).count() >= 4
        },
    );
    h.send(WatchCommand::Stop);
    sb.kill_all();
    let root_event = roots_populated(&got, &sys);
    // the owner's account, as the host's files say (here: unnamed)
    let account = Accounts::read().of(OWNER);
    let their_events: Vec<Event> = got
        .iter()
        .filter(|e| e.path.is_within(&theirs))
        .cloned()
        .collect();
    assert!(
        their_events.len() >= 4,
        "the owner's moves made {} events: {got:?}",
        their_events.len()
    );
    for e in &their_events {
        assert_eq!(
            e.owner,
            Some(account),
            "an event of the owner's groups: {e:?}"
        );
    }
    println!(
        "{} events of the owner's groups, {} in all",
        their_events.len(),
        got.len()
    );
    // the owner's events, again and again, past the cap
    let (list, roots) = flooded(&root_event, 1, &their_events);
    assert_eq!(
        kept(&list, &roots),
        1,
        "root's event was pushed off by the owner's ({} dropped)",
        list.dropped
    );
}

/// With /etc/passwd unreadable (here a user's file mounted over it, in
/// a mount namespace of the test's own: the host's is not touched)
/// every uid counts as its own owner, and the events screen says so
/// from the start, before any event has come (a fixture tree, where
/// none comes), as `cgtop serve` logs it at its start.
#[test]
fn the_events_screen_says_from_the_start_that_owners_are_counted_by_uid() {
    use crate::common::tmux::Tmux;
    if !rustix::process::geteuid().is_root() {
        println!("skipped: not root (a mount namespace over /etc/passwd)");
        return;
    }
    if !have("unshare") || !have("tmux") {
        println!("skipped: unshare or tmux is not installed");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let users = t.path().join("users");
    std::fs::write(&users, "root:x:0:0::/root:/bin/sh\n").unwrap();
    std::os::unix::fs::chown(&users, Some(65534), Some(65534)).unwrap();
    let root = crate::common::fixture("memory-limited");
    let term = Tmux::run(
        &format!(
            "unshare -m --propagation private sh -c \"mount --bind '{}' /etc/passwd && exec '{}' --no-config -d 0.5 --root '{}'\"",
            users.display(),
            env!("CARGO_BIN_EXE_cgtop"),
            root.display()
        ),
        200,
        30,
    );
    // the first frame, then the events screen
    term.wait_for("CPU%");
    term.send(&["!"]);
    let screen = term.wait_until("the owners line", Duration::from_secs(10), |s| {
        s.contains("owners counted by uid, not account: /etc/passwd not read")
    });
    assert!(screen.contains("owned by uid 65534, not root"), "{screen}");
    term.send(&["q"]);
}
