//! PURE: an event in words, the same in the TUI's events screen and
//! `-b`'s event lines: what happened ([`what`]), the clock time
//! ([`clock_utc`]) and the age ([`age`]), and `-b`'s one line
//! ([`batch_line`]). Every name from outside (task, paths) is escaped
//! through `model::tree::text`.

use crate::model::time::events::{Event, EventKind, MemoryEvent, OomVictim, SwapEvent};
use crate::model::tree::text::escape;
use std::time::Duration;

/// The victim of an OOM kill, in words: "python3 (pid 4242, uid 1000),
/// memory.max of /a hit".
fn victim_words(v: &OomVictim, v1_memory: bool) -> String {
    let uid = v.uid.map_or(String::new(), |u| format!(", uid {u}"));
    let mut s = format!("{} (pid {}{uid})", escape(&v.task), v.pid);
    // v1's limit is memory.limit_in_bytes (or memsw's): no memory.max there
    let limit = if v1_memory {
        "the memory limit"
    } else {
        "memory.max"
    };
    match &v.oom_memcg {
        Some(g) => s.push_str(&format!(", {limit} of {} hit", g.display())),
        None => s.push_str(", the machine out of memory"),
    }
    s
}

fn times(n: u64) -> String {
    if n == 1 {
        String::new()
    } else {
        format!(" ({n} times)")
    }
}

/// What happened, in words (`v1_memory`: the memory controller is on a
/// cgroup v1 hierarchy, see [`source`]).
pub fn what(kind: &EventKind, v1_memory: bool) -> String {
    match kind {
        EventKind::Populated(true) => "populated: processes came".into(),
        EventKind::Populated(false) => "empty: its last process left".into(),
        EventKind::Frozen(true) => "frozen".into(),
        EventKind::Frozen(false) => "thawed".into(),
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            count,
            victim,
        } => match victim {
            Some(v) => format!("OOM kill: {}{}", victim_words(v, v1_memory), times(*count)),
            None => format!("OOM kill{}", times(*count)),
        },
        EventKind::Memory { what, count, .. } => {
            let w = match what {
                MemoryEvent::Low => "reclaimed below memory.low",
                MemoryEvent::High => "over memory.high: throttled",
                MemoryEvent::Max => "at memory.max",
                MemoryEvent::Oom => "out of memory (OOM killer invoked)",
                MemoryEvent::OomGroupKill => "OOM kill of the whole group",
                MemoryEvent::OomKill => "OOM kill",
            };
            format!("{w}{}", times(*count))
        }
        EventKind::Swap { what, count } => {
            let w = match what {
                SwapEvent::High => "over memory.swap.high",
                SwapEvent::Max => "at memory.swap.max",
                SwapEvent::Fail => "swap-out failed",
            };
            format!("{w}{}", times(*count))
        }
        EventKind::PidsMax { count } => format!("fork refused at pids.max{}", times(*count)),
    }
}

/// Where the event came from, for the detail column: the file and key.
/// `v1_memory`: the memory controller is on a cgroup v1 hierarchy, whose
/// OOM kills are counted in memory.oom_control (v1 has no memory.events).
pub fn source(kind: &EventKind, v1_memory: bool) -> String {
    match kind {
        EventKind::Populated(v) => format!("cgroup.events populated {}", u8::from(*v)),
        EventKind::Frozen(v) => format!("cgroup.events frozen {}", u8::from(*v)),
        EventKind::Memory {
            what,
            count,
            victim,
        } => {
            let mut s = if v1_memory && kind.is_oom_kill() {
                format!("memory.oom_control oom_kill +{count}")
            } else {
                format!("memory.events {} +{count}", what.key())
            };
            if let Some(t) = victim.as_ref().and_then(|v| v.task_memcg.as_ref()) {
                s.push_str(&format!(", task in {}", t.display()));
            }
            s
        }
        EventKind::Swap { what, count } => format!("memory.swap.events {} +{count}", what.key()),
        EventKind::PidsMax { count } => format!("pids.events max +{count}"),
    }
}

/// A UNIX time as the UTC clock: "13:04:59".
pub fn clock_utc(unix_s: f64) -> String {
    let s = if unix_s.is_finite() && unix_s > 0.0 {
        unix_s as u64
    } else {
        0
    };
    let d = s % 86_400;
    format!("{:02}:{:02}:{:02}", d / 3600, d % 3600 / 60, d % 60)
}

/// When an event found in a first reading happened, where that is a
/// span ([`Event::since`]): "between 13:04:58 and 13:04:59 UTC, before
/// its watch was set"; `None` for one seen as it happened.
pub fn window(e: &Event) -> Option<String> {
    let since = e.since?;
    let from = e.unix_s - e.at.saturating_sub(since).as_secs_f64();
    Some(format!(
        "between {} and {} UTC, before its watch was set",
        clock_utc(from),
        clock_utc(e.unix_s)
    ))
}

/// How long ago, short: "4s", "12m", "3h", "2d".
pub fn age(ago: Duration) -> String {
    let s = ago.as_secs();
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m", s / 60),
        6000..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// An escaped name as one token without a space: each space `\x20`
/// (the escape writes one at an end as `\ `).
fn token(escaped: &str) -> String {
    escaped.replace("\\ ", "\\x20").replace(' ', "\\x20")
}

/// `-b`'s line for an event (README, "Batch"): `event TIME_S PATH KIND
/// [key=value ...]`, every outside name escaped and without a space, so
/// a line splits on spaces.
pub fn batch_line(e: &Event) -> String {
    let mut s = format!(
        "event {:.3} {} {}",
        e.at.as_secs_f64(),
        token(&e.path.to_string()),
        e.kind.name()
    );
    match &e.kind {
        EventKind::Populated(v) => s.push_str(&format!(" populated={}", u8::from(*v))),
        EventKind::Frozen(v) => s.push_str(&format!(" frozen={}", u8::from(*v))),
        EventKind::Memory { count, victim, .. } => {
            s.push_str(&format!(" count={count}"));
            if let Some(v) = victim {
                s.push_str(&format!(" task={} pid={}", token(&escape(&v.task)), v.pid));
                if let Some(u) = v.uid {
                    s.push_str(&format!(" uid={u}"));
                }
                if let Some(g) = &v.oom_memcg {
                    s.push_str(&format!(" oom_memcg={}", token(&g.to_string())));
                }
                if let Some(g) = &v.task_memcg {
                    s.push_str(&format!(" task_memcg={}", token(&g.to_string())));
                }
            }
        }
        EventKind::Swap { count, .. } | EventKind::PidsMax { count } => {
            s.push_str(&format!(" count={count}"));
        }
    }
    // found in the watcher's first reading: somewhere from then on
    if let Some(since) = e.since {
        s.push_str(&format!(" since={:.3}", since.as_secs_f64()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::GroupPath;

    fn oom(task: &[u8]) -> EventKind {
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            count: 1,
            victim: Some(Box::new(OomVictim {
                task: task.to_vec(),
                pid: 4242,
                uid: Some(1000),
                oom_memcg: Some(GroupPath::new("a")),
                task_memcg: Some(GroupPath::new("a/b")),
            })),
        }
    }

    #[test]
    fn an_oom_kill_in_words() {
        assert_eq!(
            what(&oom(b"python"), false),
            "OOM kill: python (pid 4242, uid 1000), memory.max of /a hit"
        );
        // a hostile name reaches no terminal as it is
        assert_eq!(
            what(&oom(b"\x1b]0;x\x07"), false),
            "OOM kill: \\e]0;x\\a (pid 4242, uid 1000), memory.max of /a hit"
        );
        assert_eq!(what(&EventKind::Frozen(false), false), "thawed");
        assert_eq!(
            what(&oom(b"dd"), true),
            "OOM kill: dd (pid 4242, uid 1000), the memory limit of /a hit"
        );
        assert_eq!(
            what(&EventKind::PidsMax { count: 3 }, false),
            "fork refused at pids.max (3 times)"
        );
    }

    #[test]
    fn an_oom_kill_names_the_file_that_counted_it() {
        assert_eq!(
            source(&oom(b"dd"), false),
            "memory.events oom_kill +1, task in /a/b"
        );
        // cgroup v1 has no memory.events: the kill is memory.oom_control's
        assert_eq!(
            source(&oom(b"dd"), true),
            "memory.oom_control oom_kill +1, task in /a/b"
        );
        assert_eq!(
            source(&EventKind::PidsMax { count: 2 }, true),
            "pids.events max +2"
        );
    }

    #[test]
    fn batch_lines_split_on_spaces() {
        let e = Event {
            at: Duration::from_millis(12_345),
            unix_s: 0.0,
            since: None,
            owner: None,
            path: GroupPath::new("a/b c"),
            kind: oom(b" my task"),
        };
        assert_eq!(
            batch_line(&e),
            "event 12.345 /a/b\\u{20}c memory_oom_kill count=1 task=\\x20my\\x20task pid=4242 uid=1000 oom_memcg=/a task_memcg=/a/b"
        );
        let e = Event {
            since: Some(Duration::from_millis(250)),
            owner: None,
            kind: EventKind::Frozen(true),
            ..e
        };
        assert_eq!(
            batch_line(&e),
            "event 12.345 /a/b\\u{20}c frozen frozen=1 since=0.250"
        );
    }

    #[test]
    fn a_change_found_in_a_first_reading_says_its_window() {
        let mut e = Event {
            at: Duration::from_millis(2_500),
            unix_s: 1_764_190_002.5,
            since: None,
            owner: None,
            path: GroupPath::new("a"),
            kind: oom(b"dd"),
        };
        assert_eq!(window(&e), None);
        e.since = Some(Duration::from_millis(100));
        assert_eq!(
            window(&e).as_deref(),
            Some("between 20:46:40 and 20:46:42 UTC, before its watch was set")
        );
    }

    #[test]
    fn clock_and_age() {
        assert_eq!(clock_utc(1_764_190_000.5), "20:46:40");
        assert_eq!(clock_utc(f64::NAN), "00:00:00");
        assert_eq!(age(Duration::from_secs(5)), "5s");
        assert_eq!(age(Duration::from_secs(600)), "10m");
        assert_eq!(age(Duration::from_secs(7200)), "2h");
    }
}
