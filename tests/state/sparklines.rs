//! Sparklines on one scale rule (`render::spark`), and the header's
//! meters in the past: a group's CPU that ran at 30-40 % of a core and
//! then under a new 10 % quota reads as that drop in the detail's live
//! history, in the tree's sparkline column and in the past view alike, a
//! quota being a mark in the words and never the top; and a past moment
//! shows every meter's figure of that moment, or "-" in every one.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, ReadOnly};
use cgtop::render::spark::BLOCKS;
use common::*;
use std::path::Path;
use std::time::Duration;

const DBUS: &str = "system.slice/dbus.service";

/// The CPU µs dbus.service burns in each second of the twelve: 30-40 %
/// of a core, then its cpu.max goes to 10 % (after the sixth) and it
/// runs at the quota.
const BURN: [u64; 12] = [
    310_000, 380_000, 406_000, 350_000, 330_000, 390_000, 100_000, 98_000, 100_000, 101_000,
    99_000, 100_000,
];

/// Twelve refreshes of dbus.service's CPU as [`BURN`] says, its cpu.max
/// set to "10000 100000" after the sixth (read by the inspection, as the
/// limits form's write would leave it), the sparkline column on.
fn drop_under_a_quota(
    w: u16,
    h: u16,
) -> (tempfile::TempDir, App, cgtop::source::collector::Collector) {
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), w, h);
    a.unix_base = Duration::from_secs(1_700_000_000);
    select(&mut a, &mut c, DBUS);
    send(&mut a, &mut c, ch('s'));
    for (i, usec) in BURN.into_iter().enumerate() {
        if i == 6 {
            std::fs::write(t.path().join(DBUS).join("cpu.max"), "10000 100000\n").unwrap();
        }
        burn_cpu(t.path(), DBUS, usec);
        tick(&mut a, &mut c, (i + 1) as f64);
    }
    read_inspection(&mut a, &mut c, 12.0);
    (t, a, c)
}

/// The sparkline cells of a text (the block characters, in order).
fn cells(s: &str) -> String {
    s.chars().filter(|c| BLOCKS.contains(c)).collect()
}

/// The detail's CPU history line (the detail pane is right of the
/// tree's, after the last `│` of a screen line).
fn detail_cpu(s: &str) -> String {
    s.lines()
        .map(|l| l.trim().trim_start_matches('|'))
        .map(|l| l.rsplit_once('│').map_or(l, |(_, d)| d))
        .find(|d| d.starts_with("CPU") && d.contains(" min "))
        .unwrap_or_else(|| panic!("a CPU sparkline:\n{s}"))
        .to_owned()
}

/// The tree's dbus.service row (before the detail pane).
fn tree_row(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("dbus.service"))
        .and_then(|l| l.rsplit_once('│').map(|(t, _)| t))
        .unwrap_or_else(|| panic!("the dbus row:\n{s}"))
        .to_owned()
}

#[test]
fn a_drop_under_a_new_quota_reads_the_same_live_in_the_detail_and_the_tree() {
    let (_t, a, _c) = drop_under_a_quota(160, 40);
    let s = screen(&a, 160, 40);
    let line = detail_cpu(&s);
    // the scale is stated, the quota is a mark (the block it reaches)
    assert!(
        line.contains("0..100% max 40.6% min 9.8% limit 10% ▁"),
        "the scale and the quota's mark: {line}"
    );
    let detail = cells(line.split(" 0..").next().unwrap());
    let row = cells(&tree_row(&s));
    assert_eq!(row.chars().count(), 10, "{s}");
    // the same figures, the same way: the column is the detail's last ten
    let last: String = detail.chars().skip(detail.chars().count() - 10).collect();
    assert_eq!(row, last, "tree {row} detail {detail}");
    // the drop shows; nothing above or at the quota is a full block
    assert!(!detail.contains('█'), "{detail}");
    assert!(detail.ends_with("▁▁▁▁▁▁"), "{detail}");
    assert!(detail.contains('▄') || detail.contains('▃'), "{detail}");
    insta::assert_snapshot!(s);
}

#[test]
fn the_past_view_draws_the_drop_as_the_live_one_did() {
    let (_t, mut a, mut c) = drop_under_a_quota(160, 40);
    let live = cells(
        detail_cpu(&screen(&a, 160, 40))
            .split(" 0..")
            .next()
            .unwrap(),
    );
    // back to 9 s: three refreshes after the quota
    for _ in 0..3 {
        send(&mut a, &mut c, ch('T'));
    }
    let s = screen(&a, 160, 40);
    let past = cells(detail_cpu(&s).split(" 0..").next().unwrap());
    assert_eq!(past, live, "the same span, the same cells");
    // the tree's column ends at the moment shown: the detail's cells up to it
    let row = cells(&tree_row(&s));
    let upto: String = live.chars().take(live.chars().count() - 3).collect();
    let want: String = upto
        .chars()
        .skip(upto.chars().count().saturating_sub(10))
        .collect();
    assert_eq!(row, want, "tree {row} detail {live}");
    insta::assert_snapshot!(s);
}

#[test]
fn in_the_past_a_long_history_ends_at_the_moment_shown() {
    // 58 refreshes, more than the detail's line holds at 160 columns:
    // 48 at 30-40 %, 10 under the quota
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 160, 40);
    select(&mut a, &mut c, DBUS);
    send(&mut a, &mut c, ch('s'));
    for i in 0..58u32 {
        let usec = if i < 48 {
            300_000 + u64::from(i % 4) * 30_000
        } else {
            100_000
        };
        burn_cpu(t.path(), DBUS, usec);
        tick(&mut a, &mut c, f64::from(i + 1));
    }
    let live = cells(
        detail_cpu(&screen(&a, 160, 40))
            .split(" 0..")
            .next()
            .unwrap(),
    );
    assert!(
        live.chars().count() < 30,
        "the line holds less than the history: {live}"
    );
    // back 30: before the quota, older than the live line's first cell
    for _ in 0..30 {
        send(&mut a, &mut c, ch('T'));
    }
    let s = screen(&a, 160, 40);
    let past = cells(detail_cpu(&s).split(" 0..").next().unwrap());
    let row = cells(&tree_row(&s));
    // the line ends at the moment, as the tree's column does, and is full
    assert_eq!(row.chars().count(), 10, "{s}");
    assert_eq!(past.chars().count(), live.chars().count(), "{s}");
    let last: String = past.chars().skip(past.chars().count() - 10).collect();
    assert_eq!(row, last, "tree {row} detail {past}");
    assert!(
        !past.contains('▁'),
        "no refresh under the quota yet: {past}"
    );
    let caret = format!("│{}^ ", " ".repeat(7 + past.chars().count() - 1));
    assert!(s.contains(&caret), "the caret under the last cell:\n{s}");
}

/// A /proc of the test's making whose memory in use is `used_kb` of
/// 16000000 kB, memory pressure `mem_psi` %, and `busy` of `5 * busy`
/// CPU ticks busy (20 %).
fn write_proc(d: &Path, used_kb: u64, mem_psi: f64, busy: u64) {
    std::fs::write(
        d.join("meminfo"),
        format!(
            "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    {} kB\n",
            16_000_000 - used_kb
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("stat"),
        format!("cpu  {busy} 0 0 {} 0 0 0 0 0 0\n", 4 * busy),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("pressure")).unwrap();
    for (res, v) in [("cpu", 1.0), ("memory", mem_psi), ("io", 2.0)] {
        std::fs::write(
            d.join("pressure").join(res),
            format!("some avg10={v:.2} avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
        )
        .unwrap();
    }
}

/// The header's meters line.
fn meters(a: &App) -> String {
    let s = screen(a, 120, 40);
    s.lines()
        .map(|l| l.trim().trim_matches('|').trim_end())
        .find(|l| l.starts_with("CPU["))
        .unwrap_or_else(|| panic!("the meters line:\n{s}"))
        .to_owned()
}

#[test]
fn a_past_moment_shows_its_own_meters_every_one() {
    let t = copy_fixture("pure-v2-systemd");
    let p = tempfile::tempdir().unwrap();
    write_proc(p.path(), 4_000_000, 5.0, 0);
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    c.set_proc_dir(Some(p.path().to_path_buf()));
    // 1 s: 4 GB, 5 %; 2 s: 8 GB, 30 %; 3 s: 12 GB, 60 %
    for (s, (kb, psi)) in [(4_000_000, 5.0), (8_000_000, 30.0), (12_000_000, 60.0)]
        .into_iter()
        .enumerate()
    {
        write_proc(p.path(), kb, psi, 100 * (s as u64 + 1));
        tick(&mut a, &mut c, (s + 1) as f64);
    }
    let live = meters(&a);
    assert!(
        live.contains("11.4G/15.3G") && live.contains("mem 60.0%"),
        "{live}"
    );
    send(&mut a, &mut c, ch('T'));
    let past = meters(&a);
    assert!(
        past.contains("7.6G/15.3G") && past.contains("mem 30.0%"),
        "the moment's MEM and PSI, not the present's nor '-': {past}"
    );
    assert!(!past.contains("CPU[ ") || !past.contains(" -]"), "{past}");
    assert!(
        !past.contains('-'),
        "every meter has the moment's figure: {past}"
    );
    insta::assert_snapshot!(past);
}

#[test]
fn without_the_moments_machine_figures_every_meter_is_a_dash() {
    // no /proc: live, the CPU meter is the root group's (MEM and PSI
    // have no figure); in the past, and in a replay, no meter has one
    let t = copy_fixture("pure-v2-systemd");
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    for s in 1..=3u32 {
        burn_cpu(t.path(), "", 500_000);
        tick(&mut a, &mut c, f64::from(s));
    }
    let live = meters(&a);
    assert!(live.contains("25.0%"), "the root group's CPU live: {live}");
    send(&mut a, &mut c, ch('T'));
    let past = meters(&a);
    assert!(past.starts_with("CPU[") && !past.contains('%'), "{past}");
    assert_eq!(past.matches("-]").count(), 2, "CPU and MEM: {past}");
    assert!(past.ends_with("PSI cpu -  mem -  io -"), "{past}");
    // a replay is the past too: the recording keeps no machine figure
    send(&mut a, &mut c, ch('p'));
    a.read_only = Some(ReadOnly::Replay);
    let replay = meters(&a);
    assert_eq!(replay, past, "a replay's meters as the past's");
}

/// The tree's column states its scale when it is turned on, as the
/// detail's words do: 0..100 % of what CPU% shows, or the row's max.
#[test]
fn the_sparkline_column_states_its_scale() {
    let (_t, a, _c) = drop_under_a_quota(160, 40);
    let words = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(words.contains("0..100% or 0..its max"), "{words}");
}

/// What `s` said about the room at one width is not left standing at
/// another: after `s` at 60 columns and a resize to 120 the column was
/// drawn under "no room for it in 60 columns", and the other way the
/// status said "on" over a tree without the column.
#[test]
fn the_sparkline_status_follows_a_resize() {
    let t = copy_fixture("pure-v2-systemd");
    let text = |a: &App| {
        a.status
            .as_ref()
            .map(|s| s.text.clone())
            .unwrap_or_default()
    };
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 60, 24);
    send(&mut a, &mut c, ch('s'));
    assert!(text(&a).contains("no room"), "{}", text(&a));
    resize(&mut a, 120, 40);
    assert!(
        screen(&a, 120, 40).contains("CPU HIST"),
        "the column is drawn at 120"
    );
    assert!(!text(&a).contains("no room"), "stale: {}", text(&a));
    resize(&mut a, 60, 24);
    assert!(!screen(&a, 60, 24).contains("CPU HIST"));
    assert!(text(&a).contains("no room"), "{}", text(&a));
}
