//! The events list kept an OOM kill over any other event: at its cap it
//! dropped the oldest `populated`/`frozen` change or counter of the owner
//! holding the most of those, and an OOM kill only once every kept event
//! was one. A user makes OOM kills in their own group for free (a tiny
//! memory limit and a loop that allocates: 124 kills in 10 s from one
//! shell loop on this 2-CPU host, v1 memory), each with its `max` and
//! `oom` counters. Their counters went first; but their kills were never
//! given up while anyone else held a counter, so once a user's kills
//! filled the list, every other owner's counters and state changes
//! (root's services hitting memory.high, refused forks, freezes) were
//! what was dropped: a flood that replaced other owners' events.
//! Root's events must stay while the flood's own (its kills included)
//! can make room, as they do against a flood of counters
//! (`event_owners.rs`).

use crate::memory_events::{kept, memory_event as event};
use cgtop::model::account::Account;
use cgtop::model::time::events::{EventList, MemoryEvent};

/// The delegated user.
const USER: u32 = 64_127;

/// How many events of root's groups are kept before the flood.
const ROOTS: usize = 50;

#[test]
fn a_users_flood_of_oom_kills_replaces_only_its_own_events() {
    let mut list = EventList::default();
    let mut roots = Vec::new();
    for i in 0..ROOTS {
        let e = event(i as u64, "system.slice/db.service", 0, MemoryEvent::High);
        roots.push(e.clone());
        list.push(e);
    }
    // each of the user's OOM kills, as memory.events gives it: max, oom,
    // oom_kill
    let mut ms = 1_000;
    for _ in 0..EventList::CAP + ROOTS {
        for what in [MemoryEvent::Max, MemoryEvent::Oom, MemoryEvent::OomKill] {
            list.push(event(ms, "user.slice/u/hog", USER, what));
            ms += 1;
        }
    }
    assert_eq!(list.len(), EventList::CAP);
    let kept = kept(&list, &roots);
    let users = list
        .iter()
        .filter(|e| e.owner == Some(Account::Uid(USER)))
        .count();
    assert_eq!(
        kept, ROOTS,
        "root's events pushed off by one user's OOM kills ({users} of the user's kept, {} dropped)",
        list.dropped
    );
}
