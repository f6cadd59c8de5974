//! A replay says what the live run said about where a group's figures
//! came from: each controller's hierarchy (v1 or cgroup2), v1's
//! freezer.state, the kernel root's MEM (usage + kernel memory) and PIDS
//! (every task of the machine), and a disk v1 blkio does not count (READ/s
//! and WRITE/s `-`, with the fix). The same `-b` text, JSON and detail
//! pane from the recording as from the refresh it was made of; and a
//! recording made before these marks were recorded still replays.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::v1detail_fixture::{hiers_of, layout_tree, put, WEB};

use cgtop::app::{App, Msg};
use cgtop::batch;
use cgtop::cgroupfs::io::DevId;
use cgtop::model::time::record::Header;
use cgtop::model::tree::rates::Rater;
use cgtop::model::tree::root::{self, RootFacts};
use cgtop::model::GroupPath;
use cgtop::options::Output;
use cgtop::render::columns::Column;
use cgtop::render::order::Order;
use cgtop::source::collector::{Collected, Refresh};
use cgtop::source::record::{refresh_of, AtCap, RecordConfig, Recorder, Replay};
use common::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const VDA: DevId = DevId {
    major: 254,
    minor: 0,
};

fn header() -> Header {
    Header {
        host: host(),
        mount: hybrid_mount(),
        start: GroupPath::root(),
        interval: Duration::from_secs(1),
        start_unix: Duration::from_secs(1_790_000_000),
    }
}

/// v1 blkio's recursive byte and operation counts of a group that read
/// `read` bytes from vda in `read / 4096` operations.
fn blkio_counts(dir: &Path, read: u64) {
    let ops = read / 4096;
    for (file, n) in [
        ("blkio.throttle.io_service_bytes_recursive", read),
        ("blkio.throttle.io_serviced_recursive", ops),
    ] {
        put(
            dir,
            file,
            &format!(
                "254:0 Read {n}\n254:0 Write 0\n254:0 Sync {n}\n254:0 Async 0\n254:0 Discard 0\n254:0 Total {n}\nTotal {n}\n"
            ),
        );
    }
}

/// Two refreshes of the hybrid layout as the collector makes them on the
/// kernel's own root (a fixture tree is never completed, so the marks are
/// put on here by the functions the collector calls: `root::complete`,
/// and `root::mark_io_uncounted` on the second, vda having done IO that
/// v1 blkio did not count), each through the rate step the live run
/// takes (`refresh_of`, as `Collector::refresh` does after marking).
fn live_refreshes() -> (tempfile::TempDir, Vec<Refresh>) {
    let t = layout_tree();
    let blkio = t.path().join("blkio");
    blkio_counts(&blkio, 64 << 20);
    blkio_counts(&blkio.join(WEB), 8 << 20);
    put(
        &t.path().join("memory"),
        "memory.usage_in_bytes",
        "13000000000\n",
    );
    let mut c = collector_of_layout(&t.path().join("unified"), &Arc::new(hiers_of(t.path())));
    c.set_grade_limits(true);
    c.set_cpu_ceiling(Some(host().ncpus));
    let mut rater = Rater::new(Some(host().ncpus));
    let mut out = Vec::new();
    for k in 1..=2u32 {
        if k == 2 {
            blkio_counts(&blkio, 72 << 20);
            blkio_counts(&blkio.join(WEB), 12 << 20);
        }
        let r = refresh(&mut c, f64::from(k));
        let mut s = r.snapshot;
        assert!(s.groups[0].path.is_root());
        root::complete(
            &mut s.groups,
            RootFacts {
                kernel_memory: Some(400 << 20),
                tasks: Some(420),
            },
        );
        if k == 2 {
            root::mark_io_uncounted(&mut s.groups, VDA);
        }
        let mut live = refresh_of(&mut rater, s, None, (*r.devices).clone());
        live.limits = r.limits;
        out.push(live);
    }
    (t, out)
}

fn record(file: &Path, refreshes: &[Refresh]) {
    let cfg = RecordConfig {
        path: file.to_path_buf(),
        append: false,
        max_size: None,
        at_cap: AtCap::Rotate,
        frame_every: cgtop::source::record::FRAME_SECS,
    };
    let mut rec = Recorder::create(cfg, header()).unwrap();
    for r in refreshes {
        rec.write(r, &[]).unwrap();
    }
    rec.finish().unwrap();
}

/// The second refresh of the recording, as `cgtop replay` gives it.
fn replayed(file: &Path) -> Refresh {
    let mut all: Vec<_> = Replay::open(file).unwrap().collect();
    assert_eq!(all.len(), 2);
    assert!(!all[1].first);
    all.remove(1).refresh
}

fn printed(r: &Refresh, output: Output) -> String {
    let mut out = Vec::new();
    batch::print_refresh(
        &mut out,
        output,
        r,
        Duration::from_secs(1),
        &header(),
        1,
        (&Column::DEFAULT, &Order::default()),
        &[],
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

/// The screen with `path` selected after `refreshes`, at 120 x 40.
fn detail(refreshes: &[Refresh], path: &str) -> String {
    let h = header();
    let mut a = App::new(h.host, h.mount, h.start, h.interval);
    resize(&mut a, 120, 40);
    let mut c = collector(&fixture("hybrid-host"));
    for r in refreshes {
        send(
            &mut a,
            &mut c,
            Msg::Collected(Collected::Refresh(Box::new(r.clone()))),
        );
    }
    select(&mut a, &mut c, path);
    screen(&a, 120, 40)
}

#[test]
fn a_replay_prints_the_marks_the_live_run_printed() {
    let (_t, live) = live_refreshes();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec");
    record(&file, &live);
    let back = replayed(&file);

    // what the live run said, in each output
    let json = printed(&live[1], Output::Json);
    for said in [
        r#""io_uncounted":{"major":254,"minor":0}"#,
        r#""root_kernel_memory":true"#,
        r#""root_machine_tasks":true"#,
        r#""memory":"v1""#,
        r#""freezer_state":"freezing""#,
    ] {
        assert!(json.contains(said), "{said} in {json}");
    }
    let text = printed(&live[1], Output::Text);
    assert_eq!(printed(&back, Output::Json), json);
    assert_eq!(printed(&back, Output::Text), text);

    let screen = detail(&live, "/");
    assert!(screen.contains("420 tasks on the machine"), "{screen}");
    assert!(screen.contains("kernel memory charged below"), "{screen}");
    assert!(screen.contains("only after a throttle rule"), "{screen}");
    assert_eq!(detail(&[live[0].clone(), back.clone()], "/"), screen);
    assert_eq!(detail(&[live[0].clone(), back], WEB), detail(&live, WEB));
}

/// A recording made before the marks were recorded (by the code of
/// commit 8496e7e, from [`live_refreshes`]: tests/fixtures/README.md)
/// replays as it did then: its samples end before the marks, and its
/// groups have none (the uncounted disk's IO a figure, as it printed).
#[test]
fn a_recording_made_before_the_marks_replays_as_it_did() {
    let dir = fixture("recordings");
    let back = replayed(&dir.join("hybrid-before-marks.rec"));
    for (output, file) in [
        (Output::Text, "hybrid-before-marks.b.txt"),
        (Output::Json, "hybrid-before-marks.json"),
    ] {
        let then = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(printed(&back, output), then, "{file}");
    }
    assert!(back
        .snapshot
        .groups
        .iter()
        .all(|g| g.hot.v1 == cgtop::model::tree::snapshot::V1Hot::default()));
}

/// A past moment (`T`) says what its figures count as the present does:
/// the root's PIDS every task of the machine, its MEM with the kernel
/// memory charged below (the timeline keeps figures, not marks: the
/// moment takes the run's, as it takes each group's type).
#[test]
fn a_past_moment_says_what_the_roots_figures_count() {
    let (_t, live) = live_refreshes();
    let h = header();
    let mut a = App::new(h.host, h.mount, h.start, h.interval);
    resize(&mut a, 120, 40);
    let mut c = collector(&fixture("hybrid-host"));
    for r in &live {
        send(
            &mut a,
            &mut c,
            Msg::Collected(Collected::Refresh(Box::new(r.clone()))),
        );
    }
    select(&mut a, &mut c, "/");
    send(&mut a, &mut c, ch('T'));
    assert!(a.past.is_some(), "in the past");
    let s = screen(&a, 120, 40);
    assert!(s.contains("420 tasks on the machine"), "{s}");
    assert!(s.contains("kernel memory charged below"), "{s}");
    // the uncounted disk was of the present's interval only
    assert!(!s.contains("only after a throttle rule"), "{s}");
}
