//! The event watcher on this machine's cgroup2 (root only; the sandbox
//! `cgtop-test-<pid>-<n>` is thawed and removed on drop, also when an
//! assertion fails): a freeze and a thaw written to cgroup.freeze each
//! come as an event within 200 ms, through kernfs's own notification.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use cgtop::model::events::EventKind;
use cgtop::source::events::{spawn, WatchCommand, WatchConfig, Watched};
use cgtop::source::hier::Hier;
use common::sandbox::Sandbox;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_freeze_and_a_thaw_each_come_within_200_ms() {
    let Some(sb) = Sandbox::or_skip() else { return };
    sb.mkdir("ice");
    let g = sb.path("ice");
    if !sb.dir("ice").join("cgroup.freeze").exists() {
        println!("skipped: no cgroup.freeze (kernel before 5.2)");
        return;
    }
    let hier = Arc::new(Hier::open(&sb.root).unwrap());
    let (tx, rx) = mpsc::channel();
    let cfg = WatchConfig {
        start: sb.top.clone(),
        max_depth: None,
        max_watches: None,
        kmsg: None,
        mapping: None,
        clock: Instant::now(),
        clock_unix: Duration::ZERO,
    };
    let h = spawn(hier, cfg, tx).unwrap();
    match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(Watched::Status(s)) => assert_eq!(s.unwatched, 0, "{s:?}"),
        other => panic!("no status: {other:?}"),
    }
    for frozen in [true, false] {
        let t0 = Instant::now();
        std::fs::write(
            sb.dir("ice").join("cgroup.freeze"),
            if frozen { "1" } else { "0" },
        )
        .unwrap();
        let mut seen = None;
        while t0.elapsed() < Duration::from_secs(2) && seen.is_none() {
            if let Ok(Watched::Events(evs)) = rx.recv_timeout(Duration::from_millis(50)) {
                seen = evs
                    .into_iter()
                    .find(|e| e.path == g && e.kind == EventKind::Frozen(frozen))
                    .map(|_| t0.elapsed());
            }
        }
        let took = seen.unwrap_or_else(|| panic!("no frozen={frozen} event for {g}"));
        println!("frozen={frozen}: event after {took:?}");
        assert!(took < Duration::from_millis(200), "{took:?}");
    }
    h.send(WatchCommand::Stop);
}
