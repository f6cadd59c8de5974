//! The events screen (`!`) keeps the newest [`EventList::CAP`] events. A
//! user who owns a delegated subtree makes `populated` changes for free
//! and without end: a process of theirs moving itself between two of
//! their groups (by hand on this host: 310,000 moves in 30 s gave cgtop's
//! watcher 40 events a second from one pair of groups; more pairs, more
//! events). Those must not push the system's OOM kill (the victim's name
//! and pid, which outlive its group) off the list.
//!
//! Driven through the app (the watcher's messages), not the kernel: ten
//! thousand real events take minutes to make.

use crate::common::{app_on, event_at, fixture_or_shared, pure_v2_mount, send};
use cgtop::app::Msg;
use cgtop::model::time::events::{Event, EventKind, EventList, MemoryEvent, OomVictim};
use cgtop::model::GroupPath;

fn is_oom_kill(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            ..
        }
    )
}

#[test]
fn a_users_flood_of_populated_changes_does_not_push_an_oom_kill_off_the_events() {
    let (mut a, mut c) = app_on(&fixture_or_shared(), pure_v2_mount(), 120, 40);
    let svc = "system.slice/postgresql.service";
    let oom = event_at(
        1.0,
        svc,
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            count: 1,
            victim: Some(Box::new(OomVictim {
                task: b"postgres".to_vec(),
                pid: 4242,
                uid: Some(0),
                oom_memcg: Some(GroupPath::new(svc)),
                task_memcg: Some(GroupPath::new(svc)),
            })),
        },
    );
    send(&mut a, &mut c, Msg::Events(vec![oom]));
    // the user's process going back and forth: two events a move
    let user = "user.slice/user-1000.slice/user@1000.service/app.slice";
    let flood: Vec<Event> = (0..EventList::CAP * 2)
        .map(|i| {
            let group = if i % 2 == 0 { "a" } else { "b" };
            event_at(
                2.0 + i as f64 / 1000.0,
                &format!("{user}/{group}"),
                EventKind::Populated(i % 4 < 2),
            )
        })
        .collect();
    send(&mut a, &mut c, Msg::Events(flood));
    assert!(
        a.events.iter().any(is_oom_kill),
        "the OOM kill of {svc} was dropped for the user's populated changes ({} events kept, {} dropped)",
        a.events.len(),
        a.events.dropped
    );
}
