//! History on screen and time travel (issue 9, items 1 and 2), driven
//! through `app::update` with keys and refreshes of a fixture tree whose
//! counters the tests move between refreshes: a CPU spike that is over
//! live is seen again by stepping back (`T`), by a jump (`@`), and the
//! whole screen (tree, detail, header) shows that moment with writes off.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, Effect, Level, Mode};
use cgtop::source::collector::Command;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;

const DBUS: &str = "system.slice/dbus.service";
const RIVM: &str = "system.slice/rivm-cmd.service";

/// The UNIX time of the collector's clock zero in these tests:
/// 2023-11-14 22:13:20 UTC.
const BASE: u64 = 1_700_000_000;

fn set_memory(root: &Path, group: &str, bytes: u64) {
    std::fs::write(
        root.join(group).join("memory.current"),
        format!("{bytes}\n"),
    )
    .expect("write memory.current");
}

/// The CPU % of the selected group as the app holds it for its row.
fn cpu(app: &App) -> f64 {
    app.selected_data()
        .and_then(|(_, r)| r.cpu_pct)
        .expect("a CPU figure")
}

fn status(app: &App) -> String {
    app.status
        .as_ref()
        .map_or(String::new(), |s| s.text.clone())
}

/// Refreshes at 1..=7 s: dbus.service burns 90 % of a core in the window
/// ending at 3 s and 50 % in the one ending at 5 s, nothing otherwise; its
/// memory grows from 100M to 700M and falls back. The app starts at 0 s
/// (`app_on`) and dbus.service is selected.
fn seven_seconds(w: u16, h: u16) -> (tempfile::TempDir, App, cgtop::source::collector::Collector) {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), w, h);
    a.unix_base = Duration::from_secs(BASE);
    select(&mut a, &mut c, DBUS);
    for s in 1..=7u64 {
        match s {
            3 => burn_cpu(t.path(), DBUS, 900_000),
            5 => burn_cpu(t.path(), DBUS, 500_000),
            _ => {}
        }
        let mib = [100, 200, 300, 700, 400, 300, 200][(s - 1) as usize];
        set_memory(t.path(), DBUS, mib << 20);
        tick(&mut a, &mut c, s as f64);
    }
    read_inspection(&mut a, &mut c, 7.0);
    (t, a, c)
}

#[test]
fn stepping_back_shows_a_past_spike_that_is_gone_live() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    assert!(cpu(&a) < 1.0, "live, dbus is idle: {}", cpu(&a));
    // T: 6, 5 (50 %), 4, 3 (90 %)
    send(&mut a, &mut c, ch('T'));
    assert!(cpu(&a) < 1.0);
    send(&mut a, &mut c, ch('T'));
    assert!((cpu(&a) - 50.0).abs() < 0.5, "at 5 s: {}", cpu(&a));
    send(&mut a, &mut c, ch('T'));
    send(&mut a, &mut c, ch('T'));
    assert!((cpu(&a) - 90.0).abs() < 0.5, "at 3 s: {}", cpu(&a));
    // the row's cell says it, and the header says when
    let s = screen(&a, 120, 40);
    let row = s
        .lines()
        .find(|l| l.contains("dbus.service"))
        .expect("the dbus row");
    assert!(row.contains("90.0"), "{row}");
    assert!(
        s.contains("PAST 22:13:23 UTC, 4 s ago"),
        "the header says the moment and its age:\n{s}"
    );
    // t steps forward again: 4 s (idle)
    send(&mut a, &mut c, ch('t'));
    assert!(cpu(&a) < 1.0);
}

#[test]
fn writes_are_refused_in_the_past_with_the_reason() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    send(&mut a, &mut c, ch('T'));
    for k in ['e', 'E', 'c', 'f', 'K', 'm', 'n', 'u', 'U'] {
        a.status = None;
        // a key htop or systemd-cgtop use otherwise: its hint after the
        // refusal, the first time
        let ev =
            crossterm::event::KeyEvent::new(KeyCode::Char(k), crossterm::event::KeyModifiers::NONE);
        let hint = cgtop::app::keymap::hint_for(&ev)
            .map(|(_, w)| format!("; {w}"))
            .unwrap_or_default();
        let fx = send(&mut a, &mut c, ch(k));
        assert_eq!(a.mode, Mode::Normal, "{k} opened nothing");
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::Write(_))),
            "{k} wrote nothing"
        );
        assert_eq!(
            status(&a),
            format!("looking at the past: writes are off (p: back to live){hint}"),
            "{k}"
        );
        assert_eq!(a.status.as_ref().map(|s| s.level), Some(Level::Warn));
    }
    send(&mut a, &mut c, key(KeyCode::Delete));
    assert_eq!(
        status(&a),
        "looking at the past: writes are off (p: back to live)"
    );
    // the footer says so, and offers no write key
    let s = screen(&a, 120, 40);
    let footer = s.lines().last().unwrap();
    assert!(
        footer.contains("the past: writes off (p: live)"),
        "{footer}"
    );
    assert!(!footer.contains("freeze"), "{footer}");
    // live again: f asks its question as before
    send(&mut a, &mut c, ch('p'));
    send(&mut a, &mut c, ch('f'));
    assert!(matches!(a.mode, Mode::Confirm(_)), "{:?}", a.status);
}

#[test]
fn refreshes_in_the_past_are_kept_and_shown_on_return() {
    let (t, mut a, mut c) = seven_seconds(120, 40);
    for _ in 0..4 {
        send(&mut a, &mut c, ch('T'));
    }
    assert!((cpu(&a) - 90.0).abs() < 0.5);
    // the collector still runs: a new spike at 8 s is not shown...
    burn_cpu(t.path(), DBUS, 300_000);
    tick(&mut a, &mut c, 8.0);
    assert!((cpu(&a) - 90.0).abs() < 0.5, "still 3 s: {}", cpu(&a));
    let s = screen(&a, 120, 40);
    assert!(s.contains("PAST 22:13:23 UTC, 5 s ago"), "{s}");
    // ...but kept: p comes back to it
    let fx = send(&mut a, &mut c, ch('p'));
    assert!((cpu(&a) - 30.0).abs() < 0.5, "live at 8 s: {}", cpu(&a));
    assert_eq!(status(&a), "live again");
    assert!(
        !fx.contains(&Effect::Collector(Command::Pause(false))),
        "was not paused"
    );
    assert!(!screen(&a, 120, 40).contains("PAST"));
    // and the timeline has the moment seen in the past
    send(&mut a, &mut c, ch('T'));
    assert!(cpu(&a) < 1.0, "7 s: {}", cpu(&a));
}

#[test]
fn p_pauses_live_and_from_the_past_resumes() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    let fx = send(&mut a, &mut c, ch('p'));
    assert!(fx.contains(&Effect::Collector(Command::Pause(true))));
    assert!(a.paused);
    send(&mut a, &mut c, ch('T'));
    assert!((cpu(&a) - 0.0).abs() < 1.0);
    let fx = send(&mut a, &mut c, ch('p'));
    assert!(fx.contains(&Effect::Collector(Command::Pause(false))));
    assert!(!a.paused);
    assert!(!screen(&a, 120, 40).contains("PAST"));
    // stepping forward onto the newest moment is live again, too
    send(&mut a, &mut c, ch('T'));
    send(&mut a, &mut c, ch('t'));
    assert!(!screen(&a, 120, 40).contains("PAST"));
    assert_eq!(status(&a), "live again");
}

#[test]
fn a_jump_goes_to_the_moment_nearest_the_time_typed() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    // four seconds before the newest (7 s): 3 s, the 90 % spike
    send(&mut a, &mut c, ch('@'));
    assert!(screen(&a, 120, 40).contains("jump to (-90s, -5m, 14:03:20 UTC):"));
    type_text(&mut a, &mut c, "-4s");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Normal);
    assert!((cpu(&a) - 90.0).abs() < 0.5, "{}", cpu(&a));
    // a clock time (UTC): 22:13:25 is 5 s
    send(&mut a, &mut c, ch('@'));
    type_text(&mut a, &mut c, "22:13:25");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!((cpu(&a) - 50.0).abs() < 0.5, "{}", cpu(&a));
    // further back than kept: the oldest moment, and said so
    send(&mut a, &mut c, ch('@'));
    type_text(&mut a, &mut c, "-2h");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(status(&a).contains("oldest moment"), "{}", status(&a));
    // nonsense is refused with the forms it takes
    send(&mut a, &mut c, ch('@'));
    type_text(&mut a, &mut c, "yesterday");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(status(&a).contains("is not a time"), "{}", status(&a));
    // Esc leaves the prompt without moving
    send(&mut a, &mut c, ch('@'));
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn a_group_removed_since_is_in_the_tree_of_the_past() {
    let (t, mut a, mut c) = seven_seconds(120, 40);
    remove_group(t.path(), RIVM);
    tick(&mut a, &mut c, 8.0);
    let rivm = cgtop::model::GroupPath::new(RIVM);
    assert!(!visible_paths(&a).contains(&rivm), "gone live");
    send(&mut a, &mut c, ch('T'));
    assert!(visible_paths(&a).contains(&rivm), "there at 7 s");
    // selected in the past, it keeps its path when the present lacks it
    select(&mut a, &mut c, RIVM);
    send(&mut a, &mut c, ch('p'));
    assert!(!visible_paths(&a).contains(&rivm));
    assert!(
        status(&a).contains("rivm-cmd.service is gone"),
        "{}",
        status(&a)
    );
}

#[test]
fn a_group_absent_at_the_moment_keeps_the_selection_on_its_path() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    tick(&mut a, &mut c, 1.0);
    // a new group, made after 1 s
    let new = "system.slice/late.service";
    std::fs::create_dir(t.path().join(new)).unwrap();
    for f in [
        "cpu.stat",
        "memory.current",
        "cgroup.events",
        "cgroup.procs",
    ] {
        std::fs::copy(t.path().join(DBUS).join(f), t.path().join(new).join(f)).unwrap();
    }
    count_descendants(t.path(), new, 1);
    tick(&mut a, &mut c, 2.0);
    select(&mut a, &mut c, new);
    send(&mut a, &mut c, ch('T'));
    // at 1 s it was not there: the cursor is on its parent, the selection
    // still names it, and nothing says it is gone
    assert_eq!(selected(&a), format!("/{new}"));
    let cursor_row = visible_paths(&a)[a.cursor].clone();
    assert_eq!(cursor_row.to_string(), "/system.slice");
    assert!(!status(&a).contains("gone"), "{}", status(&a));
    send(&mut a, &mut c, ch('t'));
    assert_eq!(visible_paths(&a)[a.cursor].to_string(), format!("/{new}"));
}

#[test]
fn the_detail_draws_history_with_scale_min_and_span() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    let s = screen(&a, 120, 40);
    assert!(s.contains("history: last 8 s, every 1 s"), "{s}");
    // CPU on 0..100 % (its 90 % is under a core), memory on its peak
    let cpu_line = s
        .lines()
        .find(|l| l.contains("0..100% max 90% min 0%"))
        .unwrap_or_else(|| panic!("a CPU sparkline with its range:\n{s}"));
    assert!(
        cpu_line.contains('█') && cpu_line.contains('▁'),
        "{cpu_line}"
    );
    assert!(s.contains("0..max 700M min 2.4M"), "memory's range:\n{s}");
    // `,` turns the span to the 10 s tier
    send(&mut a, &mut c, ch(','));
    assert_eq!(status(&a), "history: last 10 min, every 10 s");
}

#[test]
fn the_sparkline_column_is_toggled_by_s_and_costs_no_figure_column() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    assert!(!screen(&a, 120, 40).contains("CPU HIST"));
    send(&mut a, &mut c, ch('s'));
    let s = screen(&a, 120, 40);
    assert!(s.contains("CPU HIST"), "{s}");
    let row = s.lines().find(|l| l.contains("dbus.service")).unwrap();
    assert!(row.contains('█'), "the 90 % spike: {row}");
    // 80 columns: the five default figures and the column still fit
    resize(&mut a, 80, 24);
    let s = screen(&a, 80, 24);
    assert!(s.contains("CPU HIST") && s.contains("PIDS"), "{s}");
    // too narrow for both: the figures stay, the sparklines go
    resize(&mut a, 70, 24);
    let s = screen(&a, 70, 24);
    assert!(!s.contains("CPU HIST"), "{s}");
    send(&mut a, &mut c, ch('s'));
    // (then htop's s, said at the key's second press)
    assert_eq!(
        status(&a),
        "sparkline column off; s: sparkline column here (htop's strace: none)"
    );
}

#[test]
fn the_past_on_screen_at_80x24() {
    let (_t, mut a, mut c) = seven_seconds(80, 24);
    for _ in 0..4 {
        send(&mut a, &mut c, ch('T'));
    }
    // the detail alone: the overview with its sparklines and the marker
    send(&mut a, &mut c, ch('z'));
    send(&mut a, &mut c, ch('z'));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn the_past_on_screen_wide() {
    let (_t, mut a, mut c) = seven_seconds(160, 40);
    send(&mut a, &mut c, ch('s'));
    for _ in 0..2 {
        send(&mut a, &mut c, ch('T'));
    }
    insta::assert_snapshot!(screen(&a, 160, 40));
}

#[test]
fn the_detail_pages_say_what_is_not_kept_for_the_past() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    send(&mut a, &mut c, ch('T'));
    send(&mut a, &mut c, ch('4'));
    // the inspected group's full read of 6 s was kept
    assert!(a.inspection.is_some());
    // another group's was not
    select(&mut a, &mut c, "init.scope");
    let s = screen(&a, 120, 40);
    assert!(s.contains("not kept for the past"), "{s}");
}

#[test]
fn older_than_a_minute_the_moments_are_ten_second_samples_and_say_so() {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    a.unix_base = Duration::from_secs(BASE);
    select(&mut a, &mut c, DBUS);
    // 90 refreshes a second apart; dbus busy (50 %) from 10 to 19 s only
    for s in 1..=90u64 {
        if (10..20).contains(&s) {
            burn_cpu(t.path(), DBUS, 500_000);
        }
        tick(&mut a, &mut c, s as f64);
    }
    // 75 s back: before the last minute of refreshes, so the 10 s tier
    send(&mut a, &mut c, ch('@'));
    type_text(&mut a, &mut c, "-75s");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let s = screen(&a, 120, 40);
    // the 10 s samples are stamped with the last refresh of their span:
    // 9, 19 and 29 s; 15 s is nearest 19 s
    assert!(s.contains("PAST 22:13:39 UTC, 71 s ago"), "{s}");
    assert!(s.contains("10 s mean/peak"), "{s}");
    assert!(s.contains("every 10 s, mean/peak"), "{s}");
    // the sample of 10..19 s is the mean of its refreshes: 50 %
    assert!((cpu(&a) - 50.0).abs() < 0.5, "{}", cpu(&a));
    // T from here steps through 10 s samples
    send(&mut a, &mut c, ch('T'));
    assert!(screen(&a, 120, 40).contains("PAST 22:13:29 UTC, 81 s ago"));
    assert!(cpu(&a) < 1.0, "{}", cpu(&a));
}

#[test]
fn a_paste_goes_into_the_jump_prompt() {
    let (_t, mut a, mut c) = seven_seconds(120, 40);
    send(&mut a, &mut c, ch('@'));
    send(&mut a, &mut c, cgtop::app::Msg::Paste("-4s".into()));
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!((cpu(&a) - 90.0).abs() < 0.5, "{}", cpu(&a));
}

#[test]
fn a_live_read_in_the_past_waits_for_the_return() {
    let (t, mut a, mut c) = seven_seconds(120, 40);
    send(&mut a, &mut c, ch('T'));
    let raw = |a: &App| -> String {
        let f = a.inspection.as_ref().expect("a full read");
        let (_, v) = f
            .detail
            .raw
            .iter()
            .find(|(n, _)| n == "memory.current")
            .expect("memory.current among the raw files");
        v.clone().expect("read")
    };
    // the full read kept with the refresh of 6 s (memory at 300M then)
    assert_eq!(raw(&a).trim(), (300u64 << 20).to_string());
    // the collector reads the group again meanwhile: it waits
    set_memory(t.path(), DBUS, 999 << 20);
    read_inspection(&mut a, &mut c, 9.0);
    assert_eq!(
        raw(&a).trim(),
        (300u64 << 20).to_string(),
        "the past's read stays"
    );
    send(&mut a, &mut c, ch('p'));
    assert_eq!(
        raw(&a).trim(),
        (999u64 << 20).to_string(),
        "the live read is back"
    );
}
