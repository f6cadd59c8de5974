//! On cgroup2 every field of memory.events is hierarchical
//! (cgroup-v2.rst, "memory.events": "the file modified event can be
//! generated due to an event down the hierarchy"): one memory.high hit
//! in a user's group raises `high` in that group and in each ancestor
//! but the root, and the watcher, which watches memory.events of every
//! group, gives one event for each. A user's own groups are theirs; the
//! ancestors above the delegation (user.slice, user-1000.slice) are
//! root's. A user makes such events for free (a tiny memory.high on
//! their own group and a loop that allocates), so a flood of them is
//! also a flood of events owned by root: root's source grows with the
//! user's, and its oldest events, root's own services' real ones, are
//! what the list dropped. The events list is fair by owner so that a
//! flood replaces only its own events (`event_owners.rs`): the echoes
//! must count as the flood's. What the watcher reads, for events made
//! below a delegation, is built as the kernel's hierarchical counters
//! make it (this host's cgroup2 has no memory controller), and goes
//! through what the watcher does with each batch it sends
//! (`attribute_echoes`).

use crate::memory_events::{kept, memory_event};
use cgtop::model::account::Account;
use cgtop::model::time::events::{attribute_echoes, Event, EventList, MemoryEvent};

/// The delegated user.
const USER: u32 = 1000;

/// How many events of root's own services are kept before the flood.
const ROOTS: usize = 50;

/// The user's group and its ancestors below the root, with their
/// owners: systemd's delegation of user@1000.service.
const CHAIN: [(&str, u32); 5] = [
    (
        "user.slice/user-1000.slice/user@1000.service/app.slice/hog.service",
        USER,
    ),
    (
        "user.slice/user-1000.slice/user@1000.service/app.slice",
        USER,
    ),
    ("user.slice/user-1000.slice/user@1000.service", USER),
    ("user.slice/user-1000.slice", 0),
    ("user.slice", 0),
];

fn high(ms: u64, path: &str, owner: u32) -> Event {
    memory_event(ms, path, owner, MemoryEvent::High)
}

#[test]
fn a_users_event_flood_echoed_in_root_owned_ancestors_replaces_only_its_own_events() {
    let mut list = EventList::default();
    let mut roots = Vec::new();
    // root's service hits its memory.high: the service's event and
    // system.slice's
    for i in 0..ROOTS as u64 {
        let mut batch = vec![
            high(i, "system.slice/db.service", 0),
            high(i, "system.slice", 0),
        ];
        attribute_echoes(&mut batch);
        for e in batch {
            roots.push(e.clone());
            list.push(e);
        }
    }
    // the user's flood, each hit as the watcher reads it: one event in
    // the group and one in each ancestor, each owned by its group's owner,
    // in one batch
    let hits = EventList::CAP * 3 / CHAIN.len();
    for ms in 1_000..1_000 + hits as u64 {
        let mut batch: Vec<Event> = CHAIN.iter().map(|&(p, owner)| high(ms, p, owner)).collect();
        attribute_echoes(&mut batch);
        for e in batch {
            list.push(e);
        }
    }
    assert_eq!(list.len(), EventList::CAP);
    let kept = kept(&list, &roots);
    let roots_now = list
        .iter()
        .filter(|e| e.owner == Some(Account::Uid(0)))
        .count();
    assert_eq!(
        kept,
        roots.len(),
        "root's services' events pushed off by one user's flood ({roots_now} events owned by \
         root kept; {} dropped)",
        list.dropped
    );
}
