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
use crate::delegated_watch::{delegated, started_watcher};
use cgtop::model::account::Account;
use cgtop::model::time::events::{Event, EventKind, EventList};
use cgtop::source::accounts::Accounts;
use cgtop::source::events::{WatchCommand, Watched};
use std::time::{Duration, Instant};

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
    let id = OWNER.to_string();
    let pid = sb.spawn(&[
        "setpriv",
        "--reuid",
        &id,
        "--regid",
        &id,
        "--clear-groups",
        "sh",
        "-c",
        &script,
    ]);
    std::fs::write(user.join("cgroup.procs"), pid.to_string()).unwrap();
    let (sys, theirs) = (sb.path("sys"), sb.path("user"));
    let mut got: Vec<Event> = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    let done = |got: &[Event]| {
        got.iter().any(|e| e.path == sys)
            && got.iter().filter(|e| e.path.is_within(&theirs)).count() >= 4
    };
    while !done(&got) && Instant::now() < until {
        if let Ok(Watched::Events(e)) = rx.recv_timeout(Duration::from_millis(200)) {
            got.extend(e);
        }
    }
    h.send(WatchCommand::Stop);
    sb.kill_all();
    let root_event = got
        .iter()
        .find(|e| e.path == sys && e.kind == EventKind::Populated(true))
        .unwrap_or_else(|| panic!("no populated event of {sys}: {got:?}"))
        .clone();
    assert_eq!(root_event.owner, Some(Account::Uid(0)), "{root_event:?}");
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
    let mut list = EventList::default();
    list.push(root_event.clone());
    for i in 0..EventList::CAP * 2 {
        let mut e = their_events[i % their_events.len()].clone();
        e.at += Duration::from_millis(i as u64);
        list.push(e);
    }
    assert_eq!(list.len(), EventList::CAP);
    assert!(
        list.iter().any(|e| *e == root_event),
        "root's event was pushed off by the owner's ({} dropped)",
        list.dropped
    );
}
