//! Issue 12, item 6 (a screen that uses its space): on 80x24 the detail
//! scrolls (`[` `]`) and `z` gives the tree or the detail the whole
//! screen. Keys through `app::update`, screens drawn with the real view.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, MouseAction, Msg, Pane, Zoom};
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use common::*;
use crossterm::event::KeyCode;

/// The systemd fixture at 80x24 with the detail of `path` read.
fn small(path: &str) -> (App, Collector) {
    sized(path, 80, 24)
}

/// The systemd fixture at `w`x`h` with the detail of `path` read.
fn sized(path: &str, w: u16, h: u16) -> (App, Collector) {
    let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), w, h);
    select(&mut a, &mut c, path);
    read_inspection(&mut a, &mut c, 1.0);
    (a, c)
}

#[test]
fn on_80x24_the_detail_alone_shows_the_whole_overview() {
    let (mut a, mut c) = small("system.slice");
    let split = screen(&a, 80, 24);
    // shared, the detail is the strip: no overview
    assert!(!split.contains("controllers:"), "{split}");
    assert!(split.contains("Enter: detail"), "{split}");

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
    // tall enough for the detail pane below the tree, short enough to cut it
    let (w, h) = (100, 36);
    let (mut a, mut c) = sized("system.slice", w, h);
    assert!(!cgtop::ui::uses_strip(w, h));
    let before = screen(&a, w, h);
    assert!(before.contains("more: ]"), "{before}");
    for _ in 0..100 {
        send(&mut a, &mut c, ch(']'));
    }
    let after = screen(&a, w, h);
    assert!(!after.contains("more: ]"), "{after}");
    assert!(after.contains("above: ["), "{after}");
    // back up to the top: as first drawn
    for _ in 0..400 {
        send(&mut a, &mut c, ch('['));
    }
    assert_eq!(a.detail_scroll, 0);
    assert_eq!(screen(&a, w, h), before);
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

/// The lines of a screen drawn by `common::screen`, without its frame
/// (`' |'` before, `'|'` after each line).
fn plain_lines(shown: &str) -> Vec<String> {
    shown
        .lines()
        .map(|l| {
            let inner: String = l.chars().skip(2).collect();
            inner.strip_suffix('|').unwrap_or(&inner).to_owned()
        })
        .collect()
}

/// 80x24: the tree keeps at least 15 rows; the detail is a strip of the
/// selected group's figures that Enter, z and Tab open in full, and
/// 120x40 and 200x50 keep the detail pane.
#[test]
fn on_80x24_the_tree_has_15_rows_and_the_detail_is_a_strip() {
    let rows = cgtop::ui::tree_rows_for(80, 24);
    assert!(rows.split >= 15, "{rows:?}");
    assert!(rows.strip);
    assert!(!cgtop::ui::tree_rows_for(120, 40).strip);
    assert!(!cgtop::ui::tree_rows_for(200, 50).strip);
    let (mut a, mut c) = small("system.slice");
    assert_eq!(a.tree_height, rows.split);
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    // the strip names the group and gives its figures against limits
    let rule = lines
        .iter()
        .position(|l| l.contains("Enter: detail"))
        .unwrap_or_else(|| panic!("no strip:\n{shown}"));
    assert!(lines[rule].contains("/system.slice"), "{shown}");
    assert!(lines[rule + 1].starts_with("CPU "), "{shown}");
    assert!(lines[rule + 1].contains("MEM "), "{shown}");
    assert!(lines[rule + 2].starts_with("IO "), "{shown}");
    // Enter: the detail in full, Enter again: back, with the selection
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.zoom, Zoom::Detail);
    let full = screen(&a, 80, 24);
    assert!(full.contains("controllers:"), "{full}");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        (a.zoom, selected(&a).as_str()),
        (Zoom::Split, "/system.slice")
    );
    // Tab: the process list needs the detail in full; Tab back: the strip
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!((a.zoom, a.pane), (Zoom::Detail, Pane::Processes));
    assert!(screen(&a, 80, 24).contains("4 Processes"));
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!((a.zoom, a.pane), (Zoom::Split, Pane::Tree));
    // a large screen keeps its layout: Tab does not hide the tree
    let (mut a, mut c) = sized("system.slice", 200, 50);
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!((a.zoom, a.pane), (Zoom::Split, Pane::Processes));
}

/// A header line that does not fit ends in `…`, and the group the tree
/// starts at loses whole components from the left.
#[test]
fn a_cut_header_ends_in_an_ellipsis_and_keeps_the_groups_name() {
    let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24);
    a.start =
        GroupPath::new("system.slice/system-serial\\x2dgetty.slice/serial-getty@ttyS0.service");
    a.host.hostname = "a-host-name-long-enough-to-crowd-the-line".into();
    a.paused = true;
    a.cpu_machine = true;
    a.read_only = Some(cgtop::app::ReadOnly::Flag);
    tick(&mut a, &mut c, 2.0);
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    assert!(
        lines[0].contains("from …/serial-getty@ttyS0.service"),
        "{shown}"
    );
    // the third line: its figures and PAUSED do not fit: cut, with `…`
    assert!(lines[2].trim_end().ends_with('…'), "{shown}");
    assert!(!lines[2].contains("PAUS "), "{shown}");
}

/// The strip's rule names the selected group whole where its name is
/// too long beside the path and `Enter: detail`: the hint gives way,
/// not the middle of the name.
#[test]
fn a_long_name_in_the_strip_shows_whole() {
    let dir = copy_fixture("pure-v2-systemd");
    let long = "user-session-with-a-rather-long-name-for-testing-cuts.service";
    group_like(
        dir.path(),
        &format!("system.slice/{long}"),
        "system.slice/dbus.service",
    );
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 80, 24);
    tick(&mut a, &mut c, 1.0);
    select(&mut a, &mut c, &format!("system.slice/{long}"));
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    let rule = lines
        .iter()
        .find(|l| l.starts_with("─ "))
        .unwrap_or_else(|| panic!("no strip:\n{shown}"));
    assert!(rule.contains(&format!("/{long} ")), "{shown}");
}

/// A last component wider than half the line still shows whole: the
/// host and the mount give way to it, rather than the name being cut in
/// its middle (`…per-service-with-long-name.slice`).
#[test]
fn a_long_group_name_in_the_header_takes_the_room_it_needs() {
    let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24);
    a.start = GroupPath::new("system.slice/newc-18771-1/deeper-service-with-long-name.slice");
    tick(&mut a, &mut c, 2.0);
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    assert!(
        lines[0].contains("from …/deeper-service-with-long-name.slice"),
        "{shown}"
    );
    assert!(lines[0].starts_with("cgtop "), "{shown}");
}

/// A mount path that does not fit beside the start group loses whole
/// components from the left (`…/unified`), as a group's path does: it is
/// never cut in the middle of a component (`/sys/fs/cgroup/uni…`).
#[test]
fn a_cut_mount_path_in_the_header_keeps_its_last_component() {
    let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24);
    a.mount.root = std::path::PathBuf::from("/sys/fs/cgroup/unified");
    a.start = GroupPath::new("cgtop-test-25108-1");
    a.host.hostname = "vm".into();
    a.host.kernel = "6.18.44-fc-v857".into();
    tick(&mut a, &mut c, 2.0);
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    assert!(
        lines[0].contains("cgroup2 …/unified (pure v2)  from /cgtop-test-25108-1"),
        "{shown}"
    );
}

/// A long information in the status line is cut to its line with `…`;
/// the footer stays.
#[test]
fn a_long_status_is_cut_and_the_footer_stays() {
    let (mut a, mut c) = small("system.slice");
    send(&mut a, &mut c, ch('z'));
    a.status = Some(cgtop::app::Status {
        level: cgtop::app::Level::Info,
        text: "word ".repeat(40),
    });
    let shown = screen(&a, 80, 24);
    let lines = plain_lines(&shown);
    assert!(lines[22].trim_end().ends_with('…'), "{shown}");
    assert!(lines[23].contains("quit"), "{shown}");
}

/// 80x24: the help takes at most 3 pages, and every key of the main
/// view's table is on one of them.
#[test]
fn the_help_fits_in_three_pages_at_80x24() {
    let (mut a, mut c) = small("system.slice");
    send(&mut a, &mut c, ch('?'));
    let first = screen(&a, 80, 24);
    let pages: usize = first
        .lines()
        .next()
        .and_then(|l| l.split("help 1/").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no page count:\n{first}"));
    assert!(pages <= 3, "{pages} pages:\n{first}");
    let mut all = String::new();
    for _ in 0..pages {
        all.push_str(&screen(&a, 80, 24));
        send(&mut a, &mut c, ch(' '));
    }
    for (keys, text) in cgtop::ui::help_lines(cgtop::app::keymap::Scope::Main) {
        let first_words: String = text
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(all.contains(&keys), "{keys} missing:\n{all}");
        assert!(all.contains(&first_words), "{text} missing:\n{all}");
    }
}

/// The column chooser says which ticked column has no room at this
/// width; `s` with no room says so.
#[test]
fn a_ticked_column_without_room_is_said() {
    let (mut a, mut c) = small("system.slice");
    a.columns = cgtop::render::columns::Column::ALL.to_vec();
    send(&mut a, &mut c, key(KeyCode::F(2)));
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("No room in 80 columns for"), "{shown}");
    // and the command line for them all is whole in the box, not cut
    // after `--columns` by its bottom edge
    let all: Vec<&str> = cgtop::render::columns::Column::ALL
        .iter()
        .map(|c| c.name())
        .collect();
    assert!(
        shown.contains(&format!("--columns {}", all.join(","))),
        "{shown}"
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('s'));
    let status = a.status.clone().expect("a status").text;
    assert!(status.contains("no room"), "{status}");
    // with the default columns there is room: nothing said
    let (mut a, mut c) = sized("system.slice", 200, 50);
    send(&mut a, &mut c, ch('s'));
    let status = a.status.clone().expect("a status").text;
    assert!(!status.contains("no room"), "{status}");
    send(&mut a, &mut c, key(KeyCode::F(2)));
    assert!(!screen(&a, 200, 50).contains("No room"));
}

/// Below the smallest layout one line says so; growing back shows the
/// view with the same selection.
#[test]
fn a_too_small_terminal_says_so_and_comes_back() {
    let (mut a, mut c) = small("system.slice/dbus.service");
    resize(&mut a, 40, 10);
    tick(&mut a, &mut c, 2.0);
    let shown = screen(&a, 40, 10);
    let lines = plain_lines(&shown);
    assert!(lines[0].contains("40x10"), "{shown}");
    assert!(lines[1..].iter().all(|l| l.trim().is_empty()), "{shown}");
    resize(&mut a, 80, 24);
    assert_eq!(selected(&a), "/system.slice/dbus.service");
    let back = screen(&a, 80, 24);
    assert!(
        back.lines()
            .any(|l| l.starts_with('>') && l.contains("dbus.service")),
        "{back}"
    );
}

/// 80x24: a detail page key (1-5) under the strip says which page it
/// chose and the key that shows it, rather than changing nothing visible.
#[test]
fn a_detail_page_key_under_the_strip_says_where_it_went() {
    let (mut a, mut c) = small("system.slice");
    send(&mut a, &mut c, ch('2'));
    let status = a.status.clone().expect("a status").text;
    assert!(
        status.contains("detail: Memory (Enter shows it)"),
        "{status}"
    );
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(screen(&a, 80, 24).contains("2 Memory"));
}

/// Without the pids controller (a hybrid host's cgroup2) the strip counts
/// the group's processes as the tree's PIDS column does, not `-`.
#[test]
fn the_strip_counts_processes_without_the_pids_controller() {
    let t = copy_fixture("pure-v2-systemd");
    let g = t.path().join("system.slice/rivm-cmd.service");
    std::fs::remove_file(g.join("pids.current")).unwrap();
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    select(&mut a, &mut c, "system.slice/rivm-cmd.service");
    let shown = screen(&a, 80, 24);
    let strip = plain_lines(&shown)
        .into_iter()
        .find(|l| l.starts_with("CPU ") && l.contains("PIDS"))
        .unwrap_or_else(|| panic!("no strip:\n{shown}"));
    assert!(strip.contains("PIDS 3"), "{shown}");
}

/// Below the minimum layout one line says so; keys pressed blind do
/// nothing (no move, no kill's confirmation) but q; the view comes back
/// with its selection when the terminal grows.
#[test]
fn a_terminal_too_small_takes_no_key_but_quit_and_comes_back() {
    let (mut a, mut c) = small("system.slice");
    resize(&mut a, 50, 10);
    let shown = screen(&a, 50, 10);
    assert!(shown.contains("cgtop needs 60x12, not 50x10"), "{shown}");
    // what it needs comes first: a very narrow terminal still reads it
    resize(&mut a, 30, 8);
    let shown = screen(&a, 30, 8);
    assert!(shown.contains("cgtop needs 60x12"), "{shown}");
    resize(&mut a, 50, 10);
    for k in [ch('j'), ch('K'), ch('/'), key(KeyCode::Enter)] {
        let fx = send(&mut a, &mut c, k);
        assert!(fx.is_empty(), "{fx:?}");
    }
    assert_eq!(selected(&a), "/system.slice");
    assert_eq!(a.mode, cgtop::app::Mode::Normal);
    tick(&mut a, &mut c, 2.0);
    resize(&mut a, 80, 24);
    assert_eq!(selected(&a), "/system.slice");
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("─ /system.slice ─"), "{shown}");
    resize(&mut a, 50, 10);
    let fx = send(&mut a, &mut c, ch('q'));
    assert!(fx.contains(&cgtop::app::Effect::Quit), "{fx:?}");
}
