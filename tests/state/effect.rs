//! The effect of an edit (issue 9, item 4) through `app::update` on the
//! lab tree (`common::lab_tree`): figures move in the fixture between
//! refreshes, a write's answer arrives as `Msg::WriteFinished`, and the
//! status line, the log screen and the request to the log file say the
//! figures before and after.
//!
//! ```text
//! /
//! ├─ batch      cpu io memory pids; cpu.max "max 100000"   <- edited here
//! ├─ lab
//! │  └─ dd
//! ```
//!
//! The refreshes are one second apart (the app's interval is 1 s: five
//! refreshes each side). The write's answer comes after the refresh at
//! t = 5; the refresh at t = 6 straddles it; the after window is t = 7..=11.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::writes::{effect_words, WriteRequest};
use cgtop::app::{App, Effect, Level, Msg};
use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::{self, Op};
use cgtop::model::{WriteError, WriteOutcome};
use cgtop::source::actionlog::ActionLog;
use cgtop::source::collector::Collector;
use common::lab::{g, lab, on, writes};
use common::{bump, burn_cpu, ch, remove_group, screen, send, tick};
use std::path::Path;
use std::time::SystemTime;

const WRITTEN: u64 = 1_714_564_800;

/// The writer's answer: `op` went through.
fn answer(a: &mut App, c: &mut Collector, op: &Op) -> Vec<Effect> {
    send(
        a,
        c,
        Msg::WriteFinished {
            outcomes: vec![WriteOutcome::done(
                op.clone(),
                Some("max 100000\n".into()),
                None,
            )],
            unix_secs: WRITTEN,
        },
    )
}

fn status(a: &App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

fn cpu_max(pct: u64) -> Op {
    write::set_cpu_max(
        &g("batch"),
        CpuMax {
            quota: Some(pct * 1000),
            period: 100_000,
        },
    )
}

/// Refreshes at `from..=to` s, batch using `cpu_usec` and throttled
/// `thr_usec` in each second before it.
fn busy(
    a: &mut App,
    c: &mut Collector,
    root: &Path,
    from: u64,
    to: u64,
    cpu_usec: u64,
    thr_usec: u64,
) -> Vec<Effect> {
    let mut fx = Vec::new();
    for t in from..=to {
        burn_cpu(root, "batch", cpu_usec);
        bump(root, "batch", "cpu.stat", &[("throttled_usec", thr_usec)]);
        fx = tick(a, c, t as f64);
    }
    fx
}

#[test]
fn a_cpu_max_edit_shows_cpu_and_throttled_before_and_after() {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    on(&mut a, &mut c, "batch");
    // five seconds at 98 % of a core, never throttled
    busy(&mut a, &mut c, root, 1, 5, 980_000, 0);
    answer(&mut a, &mut c, &cpu_max(30));
    assert!(
        !status(&a).contains("->"),
        "no figures before the after window: {}",
        status(&a)
    );
    // the refresh that straddles the write, then four of the after window
    busy(&mut a, &mut c, root, 6, 6, 600_000, 300_000);
    busy(&mut a, &mut c, root, 7, 10, 300_000, 700_000);
    assert!(!status(&a).contains("->"), "{}", status(&a));
    let fx = busy(&mut a, &mut c, root, 11, 11, 300_000, 700_000);
    let figures = "CPU 98.0% -> 30.0%, throttled 0.0% -> 70.0% (5 s each side)";
    let want = format!("cpu.max 30%: {figures}");
    assert_eq!(status(&a), format!("batch: {want}"));
    assert_eq!(a.status.as_ref().map(|s| s.level), Some(Level::Info));
    // the log screen shows it under the write
    send(&mut a, &mut c, ch('L'));
    let s = screen(&a, 160, 40);
    assert!(s.contains(&format!("effect: {figures}")), "{s}");
    // and the log file gets a record naming the write
    let logged: Vec<_> = writes(&fx)
        .into_iter()
        .filter_map(|w| match w {
            WriteRequest::LogEffect(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(logged.len(), 1, "{fx:?}");
    assert_eq!(logged[0].group, g("batch"));
    assert_eq!(logged[0].files, vec!["cpu.max".to_owned()]);
    assert_eq!(logged[0].written_unix_secs, WRITTEN);
    assert_eq!(logged[0].words, want);
    // once: later refreshes log nothing more
    let fx = busy(&mut a, &mut c, root, 12, 12, 300_000, 700_000);
    assert!(
        !writes(&fx)
            .iter()
            .any(|w| matches!(w, WriteRequest::LogEffect(_))),
        "{fx:?}"
    );
}

#[test]
fn the_log_screen_says_an_effect_is_being_measured() {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    on(&mut a, &mut c, "batch");
    busy(&mut a, &mut c, root, 1, 5, 980_000, 0);
    answer(&mut a, &mut c, &cpu_max(30));
    let i = a.log.len() - 1;
    assert_eq!(effect_words(&a, i).as_deref(), Some("in 6 refreshes"));
    busy(&mut a, &mut c, root, 6, 10, 300_000, 0);
    assert_eq!(
        effect_words(&a, i).as_deref(),
        Some("after the next refresh")
    );
    // paused meanwhile: it waits, and says so
    send(&mut a, &mut c, ch('p'));
    assert_eq!(
        effect_words(&a, i).as_deref(),
        Some("waits, refreshes are paused")
    );
}

/// memory.high 1G on batch (1.5G, some avg10 3.5 %) after refreshes at
/// 1..=5 s; from the write on, batch stalls 20 % of each second at 1G.
/// `late`: the operator selected batch only after the last refresh before
/// the write (its inspection came alone, as when the cursor moves).
fn memory_high(late: bool) -> String {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    let set = |mem: u64, total: u64| {
        std::fs::write(root.join("batch/memory.current"), format!("{mem}\n")).unwrap();
        std::fs::write(
            root.join("batch/memory.pressure"),
            format!(
                "some avg10=3.50 avg60=1.00 avg300=0.20 total={total}\n\
                 full avg10=1.00 avg60=0.50 avg300=0.10 total={}\n",
                total / 2
            ),
        )
        .unwrap();
    };
    set(3 << 29, 0);
    on(&mut a, &mut c, if late { "lab" } else { "batch" });
    for t in 1..=5 {
        tick(&mut a, &mut c, f64::from(t));
    }
    if late {
        on(&mut a, &mut c, "batch");
    }
    let op = write::set_memory_limit(&g("batch"), MemoryFile::High, Limit::Value(1 << 30));
    answer(&mut a, &mut c, &op);
    let mut total = 0;
    for t in 6..=11 {
        total += 200_000;
        set(1 << 30, total);
        tick(&mut a, &mut c, f64::from(t));
    }
    status(&a)
}

#[test]
fn a_memory_high_edit_shows_memory_and_its_pressure() {
    let want = "batch: memory.high 1G: memory 1.5G -> 1.0G, memory pressure 3.5% -> 20.0% \
                (5 s each side)";
    assert_eq!(memory_high(false), want);
    // selected just before the edit: its own inspection gives the before
    assert_eq!(memory_high(true), want);
}

#[test]
fn a_group_gone_after_the_write_is_said_so() {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    on(&mut a, &mut c, "lab/dd");
    for t in 1..=5 {
        tick(&mut a, &mut c, f64::from(t));
    }
    let op = write::set_pids_max(&g("lab/dd"), Limit::Value(50));
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![WriteOutcome::done(op, None, None)],
            unix_secs: WRITTEN,
        },
    );
    remove_group(root, "lab/dd");
    a.status = None;
    let fx = tick(&mut a, &mut c, 6.0);
    let i = a.log.len() - 1;
    assert_eq!(
        effect_words(&a, i).as_deref(),
        Some("the group is gone; no figures after the write")
    );
    assert!(
        writes(&fx)
            .iter()
            .any(|w| matches!(w, WriteRequest::LogEffect(r) if r.words.contains("gone"))),
        "{fx:?}"
    );
}

#[test]
fn a_failed_write_has_no_effect_and_a_paused_one_is_not_measured() {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    on(&mut a, &mut c, "batch");
    busy(&mut a, &mut c, root, 1, 5, 980_000, 0);
    let failed = WriteOutcome::failed(
        cpu_max(30),
        WriteError::refused("/batch/cpu.max".into(), "no".into(), None),
    );
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![failed],
            unix_secs: WRITTEN,
        },
    );
    send(&mut a, &mut c, common::key(crossterm::event::KeyCode::Esc));
    let fx = busy(&mut a, &mut c, root, 6, 12, 300_000, 0);
    assert_eq!(effect_words(&a, a.log.len() - 1), None);
    assert!(!writes(&fx)
        .iter()
        .any(|w| matches!(w, WriteRequest::LogEffect(_))));

    // paused: no refresh will come, and the status line says so at once
    send(&mut a, &mut c, ch('p'));
    assert!(a.paused);
    let fx = answer(&mut a, &mut c, &cpu_max(40));
    assert!(
        status(&a).ends_with("; effect not measured, refreshes are paused"),
        "{}",
        status(&a)
    );
    assert_eq!(
        effect_words(&a, a.log.len() - 1).as_deref(),
        Some("not measured, refreshes are paused")
    );
    assert!(writes(&fx)
        .iter()
        .any(|w| matches!(w, WriteRequest::LogEffect(r) if r.words.contains("paused"))));
}

#[test]
fn the_effect_record_is_appended_to_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cgtop/actions.log");
    std::fs::create_dir(dir.path().join("cgtop")).unwrap();
    let log = ActionLog::at(path.clone());
    let r = cgtop::model::write::effect::Record {
        group: g("batch"),
        files: vec!["cpu.max".into()],
        written_unix_secs: WRITTEN,
        words: "cpu.max 30%: CPU 98.0% -> 30.0% (5 s each side)".into(),
    };
    let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(WRITTEN + 7);
    log.append_effect(&r, at).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "2024-05-01T12:00:07Z /batch cpu.max effect 2024-05-01T12:00:00Z \
         \"cpu.max 30%: CPU 98.0% -> 30.0% (5 s each side)\"\n"
    );
    // a symlink planted in place of the file is refused, not followed
    std::fs::remove_file(&path).unwrap();
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "").unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    assert!(log.append_effect(&r, at).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

#[test]
fn a_move_shows_both_groups() {
    let (mut a, mut c, dir) = lab();
    let root = dir.path();
    std::fs::write(root.join("batch/pids.current"), "2\n").unwrap();
    on(&mut a, &mut c, "batch");
    for t in 1..=5 {
        tick(&mut a, &mut c, f64::from(t));
    }
    let dd_procs = std::fs::read_to_string(root.join("lab/dd/cgroup.procs")).unwrap();
    assert_eq!(dd_procs.lines().count(), 1, "{dd_procs:?}");
    // dd's one process goes to batch
    let op = write::move_process(4242, &g("batch"), false);
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![WriteOutcome::done(op, Some("lab/dd".into()), None)],
            unix_secs: WRITTEN,
        },
    );
    std::fs::write(root.join("batch/pids.current"), "3\n").unwrap();
    std::fs::write(root.join("lab/dd/cgroup.procs"), "").unwrap();
    let mut logged = Vec::new();
    for t in 6..=11 {
        let fx = tick(&mut a, &mut c, f64::from(t));
        logged.extend(writes(&fx).into_iter().filter_map(|w| match w {
            WriteRequest::LogEffect(r) => Some(r.clone()),
            _ => None,
        }));
    }
    let words = effect_words(&a, a.log.len() - 1).unwrap();
    assert!(words.starts_with("batch: CPU "), "{words}");
    assert!(
        words.contains("PIDs 2 -> 3 (5 s each side); dd: CPU "),
        "{words}"
    );
    assert!(words.ends_with("PIDs 1 -> 0 (5 s each side)"), "{words}");
    let groups: Vec<_> = logged.iter().map(|r| r.group.clone()).collect();
    assert_eq!(groups, vec![g("batch"), g("lab/dd")]);
    assert!(logged
        .iter()
        .all(|r| r.words.starts_with("move process 4242: ")));
}
