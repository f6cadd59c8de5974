//! The events in the app: the header counts the unseen, the rows of
//! groups with an event in the last minute carry `!`, and the events
//! screen (`!`) lists them newest first, jumps to a group (or says it is
//! gone), clears, and marks everything seen when opened. On the
//! pure-v2-systemd fixture:
//!
//! ```text
//! /
//! ├─ system.slice
//! │  ├─ dbus.service
//! │  └─ ...
//! └─ user.slice
//!    └─ user-0.slice
//!       └─ session-1.scope
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{self, Mode, Msg};
use cgtop::model::account::{Account, NoAccounts};
use cgtop::model::time::events::{Event, EventKind, EventList, MemoryEvent, OomVictim};
use cgtop::model::GroupPath;
use cgtop::source::events::{KmsgState, WatchStatus};
use common::*;
use crossterm::event::KeyCode;
use std::time::Duration;

fn oom(secs: f64, path: &str) -> Event {
    event_at(
        secs,
        path,
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            count: 1,
            victim: Some(Box::new(OomVictim {
                task: b"python3".to_vec(),
                pid: 4242,
                uid: Some(1000),
                oom_memcg: Some(GroupPath::new("user.slice")),
                task_memcg: Some(GroupPath::new(path)),
            })),
        },
    )
}

fn some_events() -> Vec<Event> {
    vec![
        event_at(0.2, "system.slice/dbus.service", EventKind::Frozen(true)),
        event_at(0.4, "system.slice", EventKind::PidsMax { count: 3 }),
        oom(0.6, "user.slice/user-0.slice/session-1.scope"),
    ]
}

/// The row of `name` on the screen.
fn row<'a>(s: &'a str, name: &str) -> &'a str {
    s.lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("no row {name}:\n{s}"))
}

#[test]
fn the_header_counts_unseen_events_and_opening_the_screen_sees_them() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    assert!(!screen(&a, 80, 24).contains("new event"));
    send(&mut a, &mut c, Msg::Events(some_events()));
    assert_eq!(a.events.unseen, 3);
    assert!(
        screen(&a, 80, 24).contains("3 new events (!)"),
        "{}",
        screen(&a, 80, 24)
    );
    send(&mut a, &mut c, ch('!'));
    assert_eq!(a.mode, Mode::Events { cursor: 0 });
    assert_eq!(a.events.unseen, 0);
    // one that comes while the screen is open is seen too
    send(
        &mut a,
        &mut c,
        Msg::Events(vec![event_at(0.8, "init.scope", EventKind::Frozen(false))]),
    );
    assert_eq!(a.events.unseen, 0);
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    assert!(!screen(&a, 80, 24).contains("new event"));
    send(
        &mut a,
        &mut c,
        Msg::Events(vec![event_at(0.9, "init.scope", EventKind::Frozen(true))]),
    );
    assert!(screen(&a, 80, 24).contains("1 new event (!)"));
}

#[test]
fn rows_with_an_event_in_the_last_minute_are_marked() {
    let t = copy_fixture("pure-v2-systemd");
    // tall enough for every row
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 60);
    send(&mut a, &mut c, Msg::Events(some_events()));
    let s = screen(&a, 80, 60);
    // the state column's fourth cell
    assert!(row(&s, "├──dbus.service").contains(" P  !"), "{s}");
    assert!(row(&s, "├─▾system.slice").contains(" P  !"), "{s}");
    assert!(!row(&s, "├──init.scope").contains('!'), "{s}");
    // 59 s later still; 61 s after the last, no more
    tick(&mut a, &mut c, 59.0);
    assert!(a.event_marks.contains(&GroupPath::new("system.slice")));
    tick(&mut a, &mut c, 61.7);
    assert!(a.event_marks.is_empty(), "{:?}", a.event_marks);
    assert!(!row(&screen(&a, 80, 60), "├──dbus.service").contains('!'));
}

#[test]
fn enter_selects_the_events_group_and_says_when_it_is_gone() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    // user.slice folded: the jump opens the path to its group
    select(&mut a, &mut c, "user.slice");
    send(&mut a, &mut c, key(KeyCode::Left));
    assert!(a.collapsed.contains(&GroupPath::new("user.slice")));
    let mut evs = some_events();
    evs.push(oom(0.7, "gone.scope"));
    send(&mut a, &mut c, Msg::Events(evs));
    send(&mut a, &mut c, ch('!'));
    // newest first: gone.scope, then session-1.scope
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Events { cursor: 0 });
    let status = a.status.clone().unwrap().text;
    assert_eq!(status, "/gone.scope is gone: removed since the event");
    send(&mut a, &mut c, ch('j'));
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(selected(&a), "/user.slice/user-0.slice/session-1.scope");
    assert!(!a.collapsed.contains(&GroupPath::new("user.slice")));
    assert_eq!(
        a.rows[a.cursor].node,
        a.data
            .as_ref()
            .unwrap()
            .tree
            .nodes
            .iter()
            .position(|n| n.path == GroupPath::new("user.slice/user-0.slice/session-1.scope"))
            .unwrap()
    );
    // its detail is asked for
    assert!(fx.iter().any(|e| matches!(
        e,
        app::Effect::Collector(cgtop::source::collector::Command::Inspect(Some(p)))
            if *p == GroupPath::new("user.slice/user-0.slice/session-1.scope")
    )));
}

#[test]
fn a_filter_that_hides_the_group_is_dropped_by_the_jump() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "journald");
    send(&mut a, &mut c, key(KeyCode::Enter));
    send(&mut a, &mut c, Msg::Events(some_events()));
    send(&mut a, &mut c, ch('!'));
    send(&mut a, &mut c, key(KeyCode::End));
    assert_eq!(a.mode, Mode::Events { cursor: 2 });
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(selected(&a), "/system.slice/dbus.service");
    assert!(a.filter.is_empty());
}

#[test]
fn c_clears_the_list_and_keys_move_within_it() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    send(&mut a, &mut c, Msg::Events(some_events()));
    send(&mut a, &mut c, ch('!'));
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('j'));
    assert_eq!(a.mode, Mode::Events { cursor: 2 });
    send(&mut a, &mut c, ch('g'));
    assert_eq!(a.mode, Mode::Events { cursor: 0 });
    send(&mut a, &mut c, ch('c'));
    assert!(a.events.is_empty() && a.event_marks.is_empty());
    assert!(screen(&a, 80, 24).contains("no events yet"));
    send(&mut a, &mut c, ch('!'));
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn the_screen_says_what_it_cannot_see() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    send(
        &mut a,
        &mut c,
        Msg::EventWatch(WatchStatus {
            unwatched: 12,
            kmsg: KmsgState::Unreadable(rustix::io::Errno::PERM),
            ..WatchStatus::default()
        }),
    );
    assert!(screen(&a, 80, 24).contains("events: 12 groups not watched"));
    let many: Vec<Event> = (0..EventList::CAP + 3)
        .map(|i| {
            event_at(
                i as f64 / 1000.0,
                "init.scope",
                EventKind::Frozen(i % 2 == 0),
            )
        })
        .collect();
    send(&mut a, &mut c, Msg::Events(many));
    send(&mut a, &mut c, ch('!'));
    let s = screen(&a, 80, 24);
    assert!(s.contains("kernel log not readable (EPERM)"), "{s}");
    assert!(s.contains("12 groups not watched"), "{s}");
    assert!(
        s.contains("events: 10000, 10000 kept (3 dropped, the busiest owner's first)"),
        "{s}"
    );
}

/// With no readable /etc/passwd the list counts each uid as its own
/// owner (the safe fallback); the events screen says so, and why.
#[test]
fn the_events_screen_says_owners_are_counted_by_uid_without_passwd() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 30);
    send(&mut a, &mut c, Msg::Events(some_events()));
    send(&mut a, &mut c, ch('!'));
    let s = screen(&a, 120, 30);
    assert!(!s.contains("owners counted by uid"), "{s}");
    send(
        &mut a,
        &mut c,
        Msg::EventWatch(WatchStatus {
            no_accounts: Some(NoAccounts {
                file: "/etc/passwd".into(),
                why: "a FIFO, not a regular file: not read".into(),
            }),
            ..WatchStatus::default()
        }),
    );
    let s = screen(&a, 120, 30);
    assert!(
        s.contains(
            "events: owners counted by uid, not account: /etc/passwd not read (a FIFO, not a regular file: not read)"
        ),
        "{s}"
    );
}

/// An event of the group's owner `uid`'s account (the watcher reads the
/// uid from the group's directory).
fn owned_by(uid: u32, mut e: Event) -> Event {
    e.owner = Some(Account::Uid(uid));
    e
}

/// A delegated user (uid 1000) makes limit hits in their own groups as
/// fast as they like (a tiny memory.high, pids.max 1 and a fork loop: one
/// event per group per change, many groups), twice the cap of them. The
/// system's OOM kill and its own limit hit, root's, stay: at the cap the
/// owner holding the most events gives up its oldest.
#[test]
fn one_owners_flood_of_limit_hits_pushes_off_only_their_own_events() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    let system = vec![
        owned_by(0, oom(0.5, "system.slice/dbus.service")),
        owned_by(
            0,
            event_at(
                0.6,
                "system.slice",
                EventKind::Memory {
                    what: MemoryEvent::Max,
                    count: 1,
                    victim: None,
                },
            ),
        ),
    ];
    send(&mut a, &mut c, Msg::Events(system.clone()));
    let user = "user.slice/user-1000.slice/user@1000.service/app.slice";
    let flood: Vec<Event> = (0..EventList::CAP * 2)
        .map(|i| {
            let kind = if i % 2 == 0 {
                EventKind::Memory {
                    what: MemoryEvent::High,
                    count: 1,
                    victim: None,
                }
            } else {
                EventKind::PidsMax { count: 1 }
            };
            owned_by(
                1000,
                event_at(
                    1.0 + i as f64 / 1000.0,
                    &format!("{user}/g{}", i % 500),
                    kind,
                ),
            )
        })
        .collect();
    send(&mut a, &mut c, Msg::Events(flood));
    let kept_system: Vec<&Event> = a
        .events
        .iter()
        .filter(|e| e.owner == Some(Account::Uid(0)))
        .collect();
    assert_eq!(
        kept_system,
        system.iter().collect::<Vec<_>>(),
        "root's events were dropped for the user's ({} kept, {} dropped)",
        a.events.len(),
        a.events.dropped
    );
    // the user keeps their newest, up to the cap
    assert_eq!(a.events.len(), EventList::CAP);
    assert_eq!(a.events.dropped, EventList::CAP as u64 + 2);
    let newest = a.events.iter().next_back().unwrap();
    assert_eq!(newest.owner, Some(Account::Uid(1000)));
}

/// A group path too long for its column keeps its first component and
/// loses whole components after it, keeping the group's own name where
/// there is room for both (the `from:` line), else the name's end (the
/// list).
#[test]
fn a_long_group_path_in_the_events_keeps_its_own_name() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    let deep = "user.slice/user-0.slice/user@0.service/app.slice/a-long-app-name-here.scope";
    send(
        &mut a,
        &mut c,
        Msg::Events(vec![event_at(0.2, deep, EventKind::Frozen(true))]),
    );
    tick(&mut a, &mut c, 75.0);
    send(&mut a, &mut c, ch('!'));
    let s = screen(&a, 80, 24);
    let listed = row(&s, "frozen");
    assert!(listed.contains(" /user.slice/…name-here.scope "), "{s}");
    let from = row(&s, "from:");
    assert!(from.contains(" of /user.slice/…/"), "{s}");
    assert!(from.contains("/a-long-app-name-here.scope"), "{s}");
}

#[test]
fn events_screen_80x24() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    send(&mut a, &mut c, Msg::Events(some_events()));
    tick(&mut a, &mut c, 75.0);
    send(&mut a, &mut c, ch('!'));
    send(&mut a, &mut c, ch('j'));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

/// The events watcher of a view on the fixture (a real thread, on the
/// fixture's copy), its messages going to the app as the main loop's.
fn watcher_of(
    root: &std::path::Path,
) -> (
    cgtop::source::events::WatchHandle,
    std::sync::mpsc::Receiver<Msg>,
) {
    use cgtop::source::events::{spawn, WatchConfig};
    let hier = std::sync::Arc::new(cgtop::source::hier::Hier::open(root).unwrap());
    let cfg = WatchConfig {
        clock_unix: Duration::ZERO,
        ..crate::common::watch_config(GroupPath::root())
    };
    let (tx, rx) = std::sync::mpsc::channel();
    (spawn(hier, cfg, tx).unwrap(), rx)
}

/// One refresh as the TUI makes it: the group list goes to the watcher
/// on its way, the watcher's answer (if any comes within `wait`) and the
/// refresh reach the app.
fn watched_tick(
    a: &mut app::App,
    c: &mut cgtop::source::collector::Collector,
    (h, rx): &(
        cgtop::source::events::WatchHandle,
        std::sync::mpsc::Receiver<Msg>,
    ),
    secs: f64,
    wait: Duration,
) {
    use cgtop::source::collector::Collected;
    let r = refresh(c, secs);
    let paths = r.snapshot.groups.iter().map(|g| g.path.clone()).collect();
    h.send(cgtop::source::events::WatchCommand::Groups(paths));
    send(a, c, Msg::Collected(Collected::Refresh(Box::new(r))));
    let t0 = std::time::Instant::now();
    while let Ok(m) = rx.recv_timeout(wait.saturating_sub(t0.elapsed())) {
        let alive = matches!(m, Msg::EventWatchAlive);
        send(a, c, m);
        if alive {
            break;
        }
    }
}

/// Whether the app's last refresh lists `name` at the root.
fn listed(a: &app::App, name: &str) -> bool {
    a.data.as_ref().is_some_and(|d| {
        d.refresh
            .snapshot
            .groups
            .iter()
            .any(|g| g.path == GroupPath::new(name))
    })
}

/// A watcher whose thread ended takes no more group lists: after
/// `WATCHDOG_REFRESHES` refreshes without its answer the header and the
/// events screen say "events: stopped", while the tree goes on following
/// the groups (one made after the watcher ended is listed). A live
/// watcher over as many refreshes is never said stopped.
#[test]
fn a_watcher_that_stops_answering_is_said_stopped_and_the_tree_goes_on() {
    use cgtop::source::events::{WatchCommand, WATCHDOG_REFRESHES};
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    let w = watcher_of(t.path());
    let first = w.1.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(matches!(first, Msg::EventWatch(_)), "{first:?}");
    send(&mut a, &mut c, first);
    let refreshes = WATCHDOG_REFRESHES + 2;
    for i in 1..=refreshes {
        watched_tick(&mut a, &mut c, &w, f64::from(i), Duration::from_secs(5));
    }
    assert_eq!(a.event_watch.as_ref().and_then(|s| s.stopped), None);
    assert!(!screen(&a, 120, 40).contains("events: stopped"));

    w.0.send(WatchCommand::Stop);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!listed(&a, "made-after-the-watcher"));
    let d = t.path().join("made-after-the-watcher");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("cgroup.procs"), "").unwrap();
    // as the kernel counts it: the collector re-lists on that, not on
    // the watcher's word
    count_descendants(t.path(), "made-after-the-watcher", 1);
    for i in 1..=refreshes {
        let at = f64::from(refreshes + i);
        watched_tick(&mut a, &mut c, &w, at, Duration::from_millis(50));
        let s = screen(&a, 120, 40);
        assert_eq!(
            s.contains("events: stopped"),
            i > WATCHDOG_REFRESHES,
            "after {i} refreshes without an answer:\n{s}"
        );
    }
    // said once, when the count first passed the watchdog's
    let said = format!(
        "events: stopped (no answer for {} refreshes)",
        WATCHDOG_REFRESHES + 1
    );
    let s = screen(&a, 120, 40);
    assert!(s.contains(&said), "{s}");
    assert!(
        listed(&a, "made-after-the-watcher"),
        "the tree stopped with the watcher"
    );
    send(&mut a, &mut c, ch('!'));
    let s = screen(&a, 120, 40);
    assert!(
        s.contains(&format!("{said}; the tree is still read")),
        "{s}"
    );
}

/// A watcher that ended on its own says why, and the view says it at
/// once, without waiting for the watchdog.
#[test]
fn a_watcher_that_says_it_ended_is_said_stopped_at_once() {
    use cgtop::source::events::Stopped;
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    send(
        &mut a,
        &mut c,
        Msg::EventWatch(WatchStatus {
            stopped: Some(Stopped::Poll(rustix::io::Errno::NOMEM)),
            ..WatchStatus::default()
        }),
    );
    tick(&mut a, &mut c, 1.0);
    let s = screen(&a, 120, 40);
    assert!(s.contains("events: stopped (poll failed: ENOMEM)"), "{s}");
}

/// An event the watcher found in its first reading (a change between
/// the first refresh and its watch) says its span on the events screen:
/// when it happened is not known closer than that.
#[test]
fn an_event_found_before_the_watch_says_its_span() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 200, 40);
    let mut e = oom(2.5, "system.slice/dbus.service");
    e.since = Some(Duration::from_millis(100));
    send(&mut a, &mut c, Msg::Events(vec![e]));
    send(&mut a, &mut c, ch('!'));
    let s = screen(&a, 200, 40);
    assert!(
        s.contains("between 20:46:40 and 20:46:42 UTC, before its watch was set"),
        "{s}"
    );
}
