//! Issue 12, item 6 (a screen that uses its space): on 80x24 the detail
//! scrolls (`[` `]`) and `z` gives the tree or the detail the whole
//! screen. Keys through `app::update`, screens drawn with the real view.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, MouseAction, Msg, Zoom};
use cgtop::source::collector::Collector;
use common::*;

/// The systemd fixture at 80x24 with the detail of `path` read.
fn small(path: &str) -> (App, Collector) {
    let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24);
    select(&mut a, &mut c, path);
    read_inspection(&mut a, &mut c, 1.0);
    (a, c)
}

#[test]
fn on_80x24_the_detail_alone_shows_the_whole_overview() {
    let (mut a, mut c) = small("system.slice");
    let split = screen(&a, 80, 24);
    // shared, the overview is cut before the controllers
    assert!(!split.contains("controllers:"), "{split}");
    assert!(split.contains("more: ]"), "{split}");

    send(&mut a, &mut c, ch('z'));
    assert_eq!(a.zoom, Zoom::Tree);
    let tree = screen(&a, 80, 24);
    assert!(!tree.contains("1 Overview"), "{tree}");
    // the tree has every row but the header (3 lines: host, meters,
    // refresh), status, footer and its title
    assert_eq!(a.tree_height, 24 - 6);

    send(&mut a, &mut c, ch('z'));
    assert_eq!(a.zoom, Zoom::Detail);
    let detail = screen(&a, 80, 24);
    assert!(detail.contains("controllers:"), "{detail}");
    assert!(detail.contains("PSI"), "{detail}");
    assert!(!detail.contains("GROUP"), "the tree is hidden:\n{detail}");
    // j still moves the selection: the detail follows it
    send(&mut a, &mut c, ch('j'));
    assert_ne!(selected(&a), "system.slice");

    send(&mut a, &mut c, ch('z'));
    let split_rows = cgtop::ui::tree_rows_for(80, 24).split;
    assert_eq!((a.zoom, a.tree_height), (Zoom::Split, split_rows));
}

#[test]
fn the_detail_scrolls_and_stops_at_its_last_line() {
    let (mut a, mut c) = small("system.slice");
    let before = screen(&a, 80, 24);
    assert!(!before.contains("controllers:"), "{before}");
    for _ in 0..100 {
        send(&mut a, &mut c, ch(']'));
    }
    let after = screen(&a, 80, 24);
    assert!(after.contains("controllers:"), "{after}");
    assert!(after.contains("above: ["), "{after}");
    // back up to the top: as first drawn
    for _ in 0..400 {
        send(&mut a, &mut c, ch('['));
    }
    assert_eq!(a.detail_scroll, 0);
    assert_eq!(screen(&a, 80, 24), before);
    // another page starts at its top
    send(&mut a, &mut c, ch(']'));
    send(&mut a, &mut c, ch('2'));
    assert_eq!(a.detail_scroll, 0);
}

/// A click is a tree row only where the tree is drawn.
#[test]
fn a_click_on_the_detail_alone_selects_nothing() {
    let (mut a, mut c) = small("system.slice");
    // line 20 of 80x24: below the shared tree, a row of the tree alone
    assert_eq!(cgtop::ui::tree_row_at(&a, 5, 20), None);
    send(&mut a, &mut c, ch('z'));
    assert_eq!(cgtop::ui::tree_row_at(&a, 5, 20), Some(16));
    send(&mut a, &mut c, ch('z'));
    assert_eq!(cgtop::ui::tree_row_at(&a, 5, 3), None);
    let cursor = a.cursor;
    send(&mut a, &mut c, Msg::Mouse(MouseAction::ClickRow(0)));
    assert_eq!(a.cursor, cursor);
}

/// 200x50: the name column is as wide as the widest name (not ~70 blank
/// columns), and the detail gets the room the tree does not need.
#[test]
fn on_a_wide_screen_names_and_figures_sit_together() {
    let (a, _c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 200, 50);
    let shown = screen(&a, 200, 50);
    let head = shown
        .lines()
        .find(|l| l.contains("GROUP"))
        .expect("a column header");
    let cpu = head.find("CPU%").expect("a CPU% column");
    assert!(a.name_width > 10, "{}", a.name_width);
    assert!(
        cpu <= a.name_width.max(24) + 8,
        "CPU% at column {cpu} for names {} wide:\n{shown}",
        a.name_width
    );
    // the detail's left border: left of where a fixed 58% share put it
    let border = shown
        .lines()
        .nth(5)
        .and_then(|l| l.chars().position(|c| c == '│'))
        .expect("the detail's border");
    assert!(border < 116, "detail at column {border}:\n{shown}");
}

/// On 80x24 a long log line is cut at the box's edge: its result comes
/// right after the time, so the cut never takes it.
#[test]
fn a_long_log_line_keeps_its_result_at_80x24() {
    use cgtop::app::writes::LogEntry;
    use cgtop::model::WriteOutcome;
    let (mut a, mut c) = small("system.slice");
    let long = cgtop::model::GroupPath::new(
        "system.slice/system-postgresql.slice/postgresql@15-main.service",
    );
    let op = cgtop::model::write::set_pids_max(&long, cgtop::cgroupfs::Limit::Value(100));
    a.log = vec![LogEntry {
        unix_secs: 1_700_000_000,
        outcome: WriteOutcome::done(op, Some("max\n".into()), Some("100\n".into())),
    }];
    send(&mut a, &mut c, ch('L'));
    let shown = screen(&a, 80, 24);
    let line = shown
        .lines()
        .find(|l| l.contains("postgresql"))
        .unwrap_or_else(|| panic!("no log line:\n{shown}"));
    assert!(line.contains("22:13:20Z ok /system.slice"), "{line}");
}
