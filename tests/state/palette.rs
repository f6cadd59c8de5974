//! Readability (issue 12, item 7): the styles the screen is drawn in, read
//! from the ratatui `Buffer` cell by cell (the text snapshots do not see
//! colour): the cursor bar is one style, figures near their limit are
//! warm or hot, the header's meters come from a /proc the test makes, and
//! NO_COLOR draws no colour at all.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use cgtop::ui::Theme;
use common::*;
use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Style};
use std::path::Path;
use std::time::Duration;

const JOURNALD: &str = "system.slice/systemd-journald.service";
const LOGIND: &str = "system.slice/systemd-logind.service";

fn draw(app: &App, w: u16, h: u16, theme: &Theme) -> Buffer {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| cgtop::ui::render(f, app, theme)).unwrap();
    t.backend().buffer().clone()
}

fn row_text(b: &Buffer, y: u16) -> String {
    (0..b.area.width).map(|x| b[(x, y)].symbol()).collect()
}

/// The first line holding `needle`.
fn row_of(b: &Buffer, needle: &str) -> u16 {
    (0..b.area.height)
        .find(|&y| row_text(b, y).contains(needle))
        .unwrap_or_else(|| panic!("no line holds {needle:?}"))
}

/// The style of each cell of `needle` on line `y` (the first place it is).
fn styles_of(b: &Buffer, y: u16, needle: &str) -> Vec<Style> {
    let text = row_text(b, y);
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not on line {y}: {text:?}"));
    // cells, not bytes: the tree's guides are several bytes each
    let x0 = text[..at].chars().count() as u16;
    (x0..x0 + needle.chars().count() as u16)
        .map(|x| b[(x, y)].style())
        .collect()
}

/// Only what a cell draws in: colours (none is the terminal's own) and
/// attributes.
fn look(s: Style) -> (Color, Color, ratatui::style::Modifier) {
    (
        s.fg.unwrap_or(Color::Reset),
        s.bg.unwrap_or(Color::Reset),
        s.add_modifier,
    )
}

fn write(root: &Path, group: &str, file: &str, text: &str) {
    std::fs::write(root.join(group).join(file), text).unwrap();
}

fn read_u64(root: &Path, group: &str, file: &str) -> u64 {
    std::fs::read_to_string(root.join(group).join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The app on a copy of the systemd fixture whose collector reads every
/// group's limits (as the TUI's does) and, where given, a /proc.
fn app_grading(root: &Path, proc_dir: Option<&Path>, w: u16, h: u16) -> (App, Collector) {
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, w, h);
    let mut c = collector(root);
    c.set_grade_limits(true);
    c.set_proc_dir(proc_dir.map(Path::to_path_buf));
    tick(&mut a, &mut c, 0.0);
    (a, c)
}

/// journald at 95 % of its memory.max and at its pids.max (hot), init.scope
/// at 80 % of its memory.max (warm); nothing else limited.
fn limited_tree() -> tempfile::TempDir {
    let t = copy_fixture("pure-v2-systemd");
    let root = t.path();
    let j = read_u64(root, JOURNALD, "memory.current");
    write(root, JOURNALD, "memory.max", &format!("{}\n", j * 100 / 95));
    write(root, JOURNALD, "pids.max", "1\n");
    let i = read_u64(root, "init.scope", "memory.current");
    write(
        root,
        "init.scope",
        "memory.max",
        &format!("{}\n", i * 100 / 80),
    );
    t
}

/// The cursor bar is one style from edge to edge, whatever the cells on it
/// are styled as elsewhere (a filter match, a hot figure): on main the
/// matched name was yellow on the cyan bar.
#[test]
fn the_cursor_bar_is_one_style_across_the_row() {
    let t = limited_tree();
    let (mut a, mut c) = app_grading(t.path(), None, 80, 24);
    select(&mut a, &mut c, JOURNALD);
    read_inspection(&mut a, &mut c, 0.5);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "journald");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(selected(&a), format!("/{JOURNALD}"));
    for theme in [Theme::color(), Theme::mono()] {
        let b = draw(&a, 80, 24, &theme);
        let y = row_of(&b, "──systemd-journald.service");
        let first = look(b[(0, y)].style());
        for x in 0..80 {
            assert_eq!(
                look(b[(x, y)].style()),
                first,
                "cell {x} of the cursor row differs: {:?}",
                row_text(&b, y)
            );
        }
        assert_eq!(first, look(theme.selected));
    }
    // and that one style is reverse video: the terminal's own pair
    // swapped, readable on a dark and a light background alike
    let sel = Theme::color().selected;
    assert!(sel
        .add_modifier
        .contains(ratatui::style::Modifier::REVERSED));
    assert_eq!((sel.fg, sel.bg), (None, None));
}

/// Tree rows away from the cursor: a figure at 90 % of its limit or more
/// is hot, at 75 % warm; a figure without a limit is plain.
#[test]
fn figures_near_their_limit_are_warm_or_hot_in_the_tree() {
    let t = limited_tree();
    let (mut a, mut c) = app_grading(t.path(), None, 120, 40);
    // the tree alone, every group on screen; the cursor on "/"
    send(&mut a, &mut c, ch('z'));
    assert_eq!(a.cursor, 0);
    let theme = Theme::color();
    let b = draw(&a, 120, 40, &theme);
    let j = row_of(&b, "──systemd-journald.service");
    let line = row_text(&b, j);
    // MEM 7.6M of a memory.max 95/100 of it: hot; PIDS 1 of 1: hot
    for s in styles_of(&b, j, "7.6M") {
        assert_eq!(look(s), look(theme.hot), "{line}");
    }
    let pids_x = line.trim_end().chars().count() as u16 - "1 P".len() as u16;
    assert_eq!(b[(pids_x, j)].symbol(), "1", "{line}");
    assert_eq!(look(b[(pids_x, j)].style()), look(theme.hot), "{line}");
    let i = row_of(&b, "──init.scope");
    for s in styles_of(&b, i, "3.2M") {
        assert_eq!(look(s), look(theme.warm), "{}", row_text(&b, i));
    }
    // no limit on the path: no colour
    let l = row_of(&b, "──systemd-logind.service");
    for s in styles_of(&b, l, "1.7M") {
        assert_eq!(look(s), look(Style::new()), "{}", row_text(&b, l));
    }
}

/// The overview grades the selected group's memory against its effective
/// limit (read with the inspection, as on main).
#[test]
fn the_overview_grades_memory_against_the_effective_limit() {
    let t = limited_tree();
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, JOURNALD);
    read_inspection(&mut a, &mut c, 0.5);
    let theme = Theme::color();
    let b = draw(&a, 120, 40, &theme);
    let y = row_of(&b, "MEM    [");
    for s in styles_of(&b, y, "7.6M") {
        assert_eq!(look(s), look(theme.hot), "{}", row_text(&b, y));
    }
    // the bar's fill too
    for s in styles_of(&b, y, "#########") {
        assert_eq!(look(s), look(theme.hot), "{}", row_text(&b, y));
    }
    // a group without a limit: its figure is plain
    select(&mut a, &mut c, LOGIND);
    read_inspection(&mut a, &mut c, 0.6);
    let b = draw(&a, 120, 40, &theme);
    let y = row_of(&b, "MEM    ");
    for s in styles_of(&b, y, "1.7M") {
        assert_eq!(look(s), look(Style::new()), "{}", row_text(&b, y));
    }
}

/// A /proc of the test's making: 12 of 16 GB in use (75 %: warm), memory
/// pressure 45 % (hot), cpu 1.5 % (normal), no io.pressure (an old kernel
/// or PSI off: "-").
fn fake_proc() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("meminfo"),
        "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n",
    )
    .unwrap();
    // the first sample of the machine's CPU times (the second is the test's)
    std::fs::write(d.path().join("stat"), "cpu  100 0 100 700 100 0 0 0 0 0\n").unwrap();
    std::fs::create_dir(d.path().join("pressure")).unwrap();
    std::fs::write(
        d.path().join("pressure/cpu"),
        "some avg10=1.50 avg60=1.00 avg300=0.50 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("pressure/memory"),
        "some avg10=45.00 avg60=20.00 avg300=5.00 total=99999\nfull avg10=30.00 avg60=10.00 avg300=2.00 total=5555\n",
    )
    .unwrap();
    d
}

/// The header's second line: the machine's CPU (the root group over the
/// host's 2 CPUs), memory (MemTotal - MemAvailable of MemTotal) and PSI
/// some avg10, each in its severity's style; at 80x24 the header costs
/// one tree row and no more.
#[test]
fn the_header_meters_read_the_machine() {
    let t = copy_fixture("pure-v2-systemd");
    let p = fake_proc();
    let (mut a, mut c) = app_grading(t.path(), Some(p.path()), 80, 24);
    // without /proc/stat the CPU meter is the root group's: one second in
    // which it used 0.5 s of CPU is 25 % of 2 CPUs
    std::fs::remove_file(p.path().join("stat")).unwrap();
    burn_cpu(t.path(), "", 500_000);
    tick(&mut a, &mut c, 1.0);
    let theme = Theme::color();
    let b = draw(&a, 80, 24, &theme);
    let line = row_text(&b, 1);
    assert_eq!(
        line.trim_end(),
        "CPU[||||      25.0%] MEM[||||11.4G/15.3G] PSI cpu 1.5%  mem 45.0%  io -"
    );
    // with /proc/stat, its busy time between two refreshes: 540 of 560
    // ticks (96.4 %, hot)
    std::fs::write(p.path().join("stat"), "cpu  100 0 100 700 100 0 0 0 0 0\n").unwrap();
    tick(&mut a, &mut c, 2.0);
    std::fs::write(p.path().join("stat"), "cpu  640 0 100 720 100 0 0 0 0 0\n").unwrap();
    tick(&mut a, &mut c, 3.0);
    let hot = draw(&a, 80, 24, &theme);
    let cpu_line = row_text(&hot, 1);
    assert!(cpu_line.starts_with("CPU[||||||||||96.4%]"), "{cpu_line}");
    for s in &styles_of(&hot, 1, "CPU[||||||||||96.4%")[4..] {
        assert_eq!(look(*s), look(theme.hot), "{cpu_line}");
    }
    for s in styles_of(&b, 1, "45.0%") {
        assert_eq!(look(s), look(theme.hot), "{line}");
    }
    for s in styles_of(&b, 1, "1.5%") {
        assert_eq!(look(s), look(Style::new()), "{line}");
    }
    // memory at 75 %: the fill and the figure are warm (the figure
    // stands over the bar's end, in the fill's style where the bar
    // reaches under it)
    for s in styles_of(&b, 1, "||||11.4G/15.3G") {
        assert_eq!(look(s), look(theme.warm), "{line}");
    }
    // the CPU fill is the plain bar colour (25 % is normal)
    for s in &styles_of(&b, 1, "CPU[||||")[4..] {
        assert_eq!(look(*s), look(theme.bar), "{line}");
    }
    // three header lines: the tree alone has 24 - 3 - status - footer -
    // its title = 18 rows
    assert_eq!(cgtop::ui::tree_rows_for(80, 24).whole, 18);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

/// NO_COLOR: not one cell in a colour, on screens with every kind of
/// styled thing (meters, hot and warm figures, a match, the cursor bar,
/// the footer keys, the overview), and the meters still read, in plain
/// characters.
#[test]
fn no_color_draws_no_colour_and_the_meters_still_read() {
    let t = limited_tree();
    let p = fake_proc();
    let (mut a, mut c) = app_grading(t.path(), Some(p.path()), 80, 24);
    burn_cpu(t.path(), "", 500_000);
    tick(&mut a, &mut c, 1.0);
    select(&mut a, &mut c, JOURNALD);
    read_inspection(&mut a, &mut c, 1.0);
    let mono = Theme::from_no_color(Some("1"));
    let mut screens = vec![draw(&a, 80, 24, &mono), draw(&a, 160, 45, &mono)];
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "scope");
    screens.push(draw(&a, 120, 40, &mono));
    for b in &screens {
        for cell in &b.content {
            assert_eq!(
                (cell.fg, cell.bg, cell.underline_color),
                (Color::Reset, Color::Reset, Color::Reset),
                "a colour under NO_COLOR at {:?}",
                cell.symbol()
            );
        }
        let meters = row_text(b, 1);
        assert!(meters.starts_with("CPU[||||"), "{meters}");
        assert!(meters.contains("MEM[||||"), "{meters}");
        assert!(meters.contains("mem 45.0%"), "{meters}");
    }
    // and the same screen in colour has colour: the test can tell
    let b = draw(&a, 80, 24, &Theme::color());
    assert!(b.content.iter().any(|c| c.bg != Color::Reset));
}
