//! Memory events as the event watcher gives them, and what of a set of
//! them the events list kept: for the attacks on the list's rule at its
//! cap (`event_kill_flood`, `event_owners_ancestors`,
//! `event_owners_subordinate`).

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
