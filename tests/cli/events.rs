//! Events in batch and JSON output: each printed refresh carries the
//! events the watcher saw since the previous one (JSON's `events` array,
//! `-b`'s `event ...` lines and `!` in the state column), from a
//! fixture tree whose memory.events and cgroup.events change between
//! two refreshes.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::batch::{run_collector_with, BatchEvents};
use cgtop::model::GroupPath;
use cgtop::options::{Options, Output};
use cgtop::source::events::WatchConfig;
use cgtop::source::hier::Hier;
use common::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const GROUP: &str = "system.slice/dbus.service";

fn options(output: Output, brief: bool) -> Options {
    Options {
        interval: Duration::from_millis(1),
        output,
        iterations: Some(3),
        brief,
        ..crate::common::options()
    }
}

/// Runs three refreshes; before the second, dbus.service is OOM-killed
/// once and frozen.
fn run(root: &Path, output: Output, brief: bool) -> String {
    let events = BatchEvents {
        hier: Arc::new(Hier::open(root).unwrap()),
        cfg: WatchConfig {
            clock_unix: Duration::ZERO,
            ..crate::common::watch_config(GroupPath::root())
        },
    };
    let mut out = Vec::new();
    let mut waits = 0;
    let wait = |_: Duration| {
        waits += 1;
        if waits == 2 {
            let d = root.join(GROUP);
            std::fs::write(
                d.join("memory.events"),
                "low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\noom_group_kill 0\n",
            )
            .unwrap();
            std::fs::write(d.join("cgroup.events"), "populated 1\nfrozen 1\n").unwrap();
        }
        // time for the watcher to see it (it needs milliseconds)
        std::thread::sleep(Duration::from_millis(300));
        true
    };
    let c = collector(root);
    let opts = options(output, brief);
    let m = pure_v2_mount();
    run_collector_with(&mut out, c, &m, &host(), &opts, wait, Some(events)).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn json_refreshes_carry_the_events_since_the_previous_one() {
    for brief in [false, true] {
        let t = copy_fixture("pure-v2-systemd");
        let out = run(t.path(), Output::Json, brief);
        let docs: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0]["events"], serde_json::json!([]), "brief={brief}");
        let evs = docs[1]["events"].as_array().unwrap();
        let kinds: Vec<&str> = evs.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k != "frozen")
                .copied()
                .collect::<Vec<_>>(),
            ["memory_max", "memory_oom", "memory_oom_kill"],
            "brief={brief}: {evs:?}"
        );
        let oom = evs.iter().find(|e| e["kind"] == "memory_oom_kill").unwrap();
        assert_eq!(oom["path"], "/system.slice/dbus.service");
        assert_eq!(oom["count"], 1);
        let t = oom["time_s"].as_f64().unwrap();
        assert!(
            (oom["unix_time_s"].as_f64().unwrap() - docs[1]["unix_time_s"].as_f64().unwrap()).abs()
                < 5.0
        );
        assert!(t > 0.0 && t <= docs[1]["time_s"].as_f64().unwrap());
        let frozen = evs.iter().find(|e| e["kind"] == "frozen").unwrap();
        assert_eq!(frozen["frozen"], true);
        assert!(frozen.get("count").is_none());
        // not printed twice
        assert_eq!(docs[2]["events"], serde_json::json!([]));
    }
}

#[test]
fn batch_text_prints_an_event_line_each_and_marks_the_group() {
    let t = copy_fixture("pure-v2-systemd");
    let out = run(t.path(), Output::Text, false);
    let refreshes: Vec<&str> = out.split("cgtop - refresh ").skip(1).collect();
    assert_eq!(refreshes.len(), 3);
    assert!(!refreshes[0].contains("\nevent "));
    let lines: Vec<&str> = refreshes[1]
        .lines()
        .filter(|l| l.starts_with("event "))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with(" /system.slice/dbus.service memory_oom_kill count=1")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with(" /system.slice/dbus.service frozen frozen=1")),
        "{lines:?}"
    );
    // the lines come before the table
    let head = refreshes[1].find("GROUP").unwrap();
    assert!(refreshes[1].find("\nevent ").unwrap() < head);
    let row = refreshes[1]
        .lines()
        .find(|l| l.trim_start().starts_with("dbus.service "))
        .unwrap();
    assert!(row.ends_with("PF !"), "{row:?}");
    assert!(!refreshes[2].contains("\nevent "));
}
