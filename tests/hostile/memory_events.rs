//! Memory events as the event watcher gives them, a flood of events
//! replayed past the events list's cap, and what of a set of them the
//! list kept: for the attacks on the list's rule at its cap
//! (`event_kill_flood`, `event_owners*`).

use cgtop::model::account::Account;
use cgtop::model::time::events::{Event, EventKind, EventList, MemoryEvent};
use cgtop::model::GroupPath;
use std::time::Duration;

/// One `what` counted in `path`'s memory.events at `ms`, its group owned
/// by `owner` (a named uid's account).
pub fn memory_event(ms: u64, path: &str, owner: u32, what: MemoryEvent) -> Event {
    Event {
        at: Duration::from_millis(ms),
        unix_s: 1_700_000_000.0 + ms as f64 / 1000.0,
        since: None,
        path: GroupPath::new(path),
        kind: EventKind::Memory {
            what,
            count: 1,
            victim: None,
        },
        owner: Some(Account::Uid(owner)),
    }
}

/// How many of `events` the list still holds.
pub fn kept(list: &EventList, events: &[Event]) -> usize {
    events
        .iter()
        .filter(|r| list.iter().any(|e| e == *r))
        .count()
}

/// An events list that holds `roots` copies of root's event, 1 ms apart,
/// and then, from a second later, the flood's events again and again, twice
/// the list's cap; and root's events as pushed. The list is full.
pub fn flooded(root_event: &Event, roots: usize, flood: &[Event]) -> (EventList, Vec<Event>) {
    assert!(!flood.is_empty(), "no events to flood the list with");
    let mut list = EventList::default();
    let mut pushed = Vec::new();
    for i in 0..roots {
        let mut e = root_event.clone();
        e.at += Duration::from_millis(i as u64);
        pushed.push(e.clone());
        list.push(e);
    }
    for i in 0..EventList::CAP * 2 {
        let mut e = flood[i % flood.len()].clone();
        e.at += Duration::from_secs(1) + Duration::from_millis(i as u64);
        list.push(e);
    }
    assert_eq!(list.len(), EventList::CAP);
    (list, pushed)
}
