//! The view: draws `&App` into a frame. No I/O, no mutation, no sorting
//! or rate maths; everything it shows was computed by `app` or `model`.
//!
//! ```text
//! +------------------------------------------------------------------+
//! | header: host, kernel, mount and mode                             |  3 lines
//! |   meters: CPU[|||  12%] MEM[|||| 3.1G/15G] PSI cpu mem io        |
//! |   groups, interval, own cost                                     |
//! +-------------------------------------+----------------------------+
//! | tree pane: column header + rows     | detail pane (wide screens: |
//! |                                     | right of the tree)         |
//! +-------------------------------------+                            |
//! | detail pane (tall screens: below)   |                            |
//! |   or the detail strip (small: 3 lines, Enter opens the detail)   |
//! +-------------------------------------+----------------------------+
//! | status line: message, filter or prompt being typed               |  1 line
//! | footer: keys of the current mode, from the keymap table          |  1 line
//! +------------------------------------------------------------------+
//! ```
//! The help screen is drawn over everything.
//!
//! Breakpoints (the tree and the detail sharing the screen, `z` off):
//! - [`WIDE`] columns (140) and more: the detail sits right of the tree.
//! - narrower, where the detail below would leave the tree at least
//!   [`TREE_ROWS_MIN`] rows (15; 36 lines and more): the detail below the
//!   tree, 48 % of the body.
//! - narrower and shorter (80x24): the detail is a [`STRIP_LINES`]-line
//!   strip below the tree (the selected group's figures and limits), so
//!   that the tree keeps 15 rows at 80x24; `Enter`, `z` or `Tab` open the
//!   detail in full.
//! - below [`MIN_WIDTH`]x[`MIN_HEIGHT`] (60x12): one line says the
//!   terminal is too small; cgtop keeps running (taking no key but quit),
//!   and the view comes back with its selection when the terminal grows.
//!
//! Every header and status line that does not fit is cut by
//! `render::fit` (`fit_pieces`, `fit_path`): it ends in `…`, and a group
//! path keeps its first component below the start group and loses whole
//! components after it (`…/user/…/newc-18771-1`).

pub mod detail;
pub mod dialogs;
pub mod events;
pub mod strip;
pub mod theme;
pub mod tree;

use crate::app::keymap::{self, Scope};
use crate::app::{fmt_secs, App, Level, Mode, TreeRows, Zoom};
use crate::model::tree::limits::effective_memory;
use crate::model::tree::text::{escape, escape_str};
use crate::model::GroupSample;
use crate::render::columns::{self, Column};
use crate::render::fit::{self, fit, fit_pieces};
use crate::render::meter::Meter;
use crate::render::severity::{self, tightest_cpu_max, Limits};
use crate::render::units::{bytes_short, MISSING};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;
pub use theme::Theme;

/// At this width and above the detail pane sits right of the tree.
pub const WIDE: u16 = 140;
/// The fewest tree rows the detail below the tree may leave; where it
/// would leave fewer, the detail is a strip.
pub const TREE_ROWS_MIN: u16 = 15;
/// The detail strip: a rule naming the group, then two lines of figures.
pub const STRIP_LINES: u16 = 3;
/// The smallest terminal the view is laid out on; a smaller one gets one
/// line that says so.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 12;
/// The header: the host and mount, the machine's meters, the refresh.
const HEADER_LINES: u16 = 3;
/// A header meter's inside is never wider than this (wide screens).
const METER_MAX: usize = 40;

/// The areas of one screen.
struct Areas {
    header: Rect,
    tree: Rect,
    detail: Rect,
    status: Rect,
    footer: Rect,
    /// The detail is the short strip, not the pane.
    strip: bool,
}

/// Whether the screen is below the smallest layout.
pub fn too_small(width: u16, height: u16) -> bool {
    width < MIN_WIDTH || height < MIN_HEIGHT
}

/// Whether the tree and detail sharing a screen of this size share it as
/// tree and strip (narrow and short: 80x24).
pub fn uses_strip(width: u16, height: u16) -> bool {
    let body = height.saturating_sub(HEADER_LINES + 2);
    // the tree's share of the detail-below layout, less its column header
    width < WIDE && (body * 52 / 100).saturating_sub(1) < TREE_ROWS_MIN
}

/// The tree pane's width for names `name_width` wide with the figure
/// columns shown: what a wide screen gives it, up to [`TREE_SHARE`]
/// percent.
fn tree_need(name_width: usize, cols: &[Column], spark: bool) -> u16 {
    let spark_w = if spark {
        crate::render::spark::COLUMN_WIDTH + 1
    } else {
        0
    };
    let need = name_width.max(columns::NAME_MIN) + 1 + columns::fixed_width(cols) + spark_w;
    u16::try_from(need).unwrap_or(u16::MAX)
}

/// The most of a wide screen the tree takes; the detail has the rest.
const TREE_SHARE: u16 = 58;
/// The least: the detail's lines are no wider than this leaves.
const TREE_SHARE_MIN: u16 = 40;

fn areas(area: Rect, zoom: Zoom, name_width: usize, cols: &[Column], spark: bool) -> Areas {
    let [header, body, status, footer] = Layout::vertical([
        Constraint::Length(HEADER_LINES),
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let none = Rect::new(body.x, body.y, 0, 0);
    let strip = zoom == Zoom::Split && uses_strip(area.width, area.height);
    let (tree, detail) = match zoom {
        Zoom::Tree => (body, none),
        Zoom::Detail => (none, body),
        Zoom::Split if area.width >= WIDE => {
            // the tree as wide as its names and figures need, within its
            // share; the detail takes what is left
            let w = tree_need(name_width, cols, spark).clamp(
                area.width * TREE_SHARE_MIN / 100,
                area.width * TREE_SHARE / 100,
            );
            let [t, d] =
                Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(body);
            (t, d)
        }
        Zoom::Split if strip => {
            let [t, d] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(STRIP_LINES)]).areas(body);
            (t, d)
        }
        Zoom::Split => {
            let [t, d] = Layout::vertical([Constraint::Percentage(52), Constraint::Percentage(48)])
                .areas(body);
            (t, d)
        }
    };
    Areas {
        header,
        tree,
        detail,
        status,
        footer,
        strip,
    }
}

/// Which visible tree row (counted from the first row on screen) is at
/// column `x`, line `y` of the app's screen as it is drawn now, if any
/// (for mouse clicks).
pub fn tree_row_at(app: &App, x: u16, y: u16) -> Option<usize> {
    let (width, height) = app.size;
    let t = areas(
        Rect::new(0, 0, width, height),
        app.zoom,
        app.name_width,
        &app.columns,
        app.spark_column,
    )
    .tree;
    // the first line of the pane is the column header
    let inside = x >= t.x && x < t.x + t.width && y > t.y && y < t.y + t.height;
    inside.then(|| usize::from(y - t.y - 1))
}

/// The limits a group's figures are graded against (`render::severity`):
/// the inspected group's effective ones (its path's tightest memory and
/// cpu.max, read with the inspection on every refresh), else those the
/// collector read for every group on its last walk (`Refresh::limits`),
/// else those of its own detail where the snapshot has it, else none.
pub(crate) fn limits_of(app: &App, g: &GroupSample) -> Limits {
    let walked = || {
        let r = &app.data.as_ref()?.refresh;
        let i = r
            .snapshot
            .groups
            .binary_search_by(|x| x.path.cmp(&g.path))
            .ok()?;
        r.limits.get(i).copied()
    };
    match app.inspection.as_ref().filter(|f| f.path == g.path) {
        Some(f) => Limits {
            memory: effective_memory(&f.memory_limits).map(|e| e.bytes),
            cpu: tightest_cpu_max(f.cpu_max_path.iter().map(|(_, m)| *m)),
            pids: walked().and_then(|l| l.pids).or(f.detail.pids_max),
        },
        None => walked()
            .or_else(|| g.detail.as_deref().map(Limits::of_detail))
            .unwrap_or_default(),
    }
}

/// How many tree rows fit on a screen of this size (the app pages by it),
/// shared with the detail and alone.
pub fn tree_rows_for(width: u16, height: u16) -> TreeRows {
    let rows = |zoom| {
        // the tree's width does not change its height
        let a = areas(Rect::new(0, 0, width, height), zoom, 0, &[], false);
        usize::from(a.tree.height.saturating_sub(1))
    };
    // the widest the tree pane gets: a wide screen's tree takes at most
    // its share (what `s` and the column chooser check their room in)
    let widest = if width >= WIDE {
        width * TREE_SHARE / 100
    } else {
        width
    };
    TreeRows {
        split: rows(Zoom::Split),
        whole: rows(Zoom::Tree),
        strip: uses_strip(width, height),
        split_width: usize::from(widest),
        whole_width: usize::from(width),
        too_small: too_small(width, height),
    }
}

pub fn render(f: &mut Frame<'_>, app: &App, theme: &Theme) {
    let (w, h) = (f.area().width, f.area().height);
    if too_small(w, h) {
        // what it needs first: a very narrow terminal still reads it
        let text = format!("cgtop needs {MIN_WIDTH}x{MIN_HEIGHT}, not {w}x{h} (q quits)");
        let line = Line::styled(fit(&text, usize::from(w)), theme.warn);
        f.render_widget(Paragraph::new(line), f.area());
        return;
    }
    let a = areas(
        f.area(),
        app.zoom,
        app.name_width,
        &app.columns,
        app.spark_column,
    );
    header(f, a.header, app, theme);
    if a.tree.height > 0 {
        tree::render(f, a.tree, app, theme);
    }
    if a.strip {
        strip::render(f, a.detail, app, theme);
    } else if a.detail.height > 0 {
        detail::render(f, a.detail, app, theme, a.detail.x > a.tree.x);
    }
    // a warning or error longer than the line borrows the footer's line
    // (an information is cut to one)
    let long = app.status.as_ref().is_some_and(|s| {
        s.level != Level::Info && fit::width(&s.text) > usize::from(a.status.width)
    }) && matches!(app.mode, Mode::Normal);
    if long {
        status(
            f,
            Rect {
                height: 2,
                ..a.status
            },
            app,
            theme,
        );
    } else {
        status(f, a.status, app, theme);
        footer(f, a.footer, app, theme);
    }
    if app.mode == Mode::Help {
        help(f, f.area(), app, theme);
    }
    if let Mode::Events { cursor } = app.mode {
        events::render(f, f.area(), app, cursor, theme);
    }
    dialogs::render(f, f.area(), app, theme);
}

fn header(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let host = format!(
        "{}  {}  ",
        escape_str(&app.host.hostname),
        escape_str(&app.host.kernel)
    );
    let from_path = if app.start.is_root() {
        String::new()
    } else {
        app.start.to_string()
    };
    let width = usize::from(area.width);
    let root = escape(app.mount.root.as_os_str().as_bytes());
    let fs = crate::render::mount::root_kind(&app.mount.mode);
    let mount = |mode: &str| format!("{fs} {root} ({mode})");
    // a hybrid host's list of v1 controllers is long: the longest form
    // that fits, rather than cut the line
    let from_w = if from_path.is_empty() {
        0
    } else {
        "  from ".len() + fit::width(&from_path)
    };
    let used = "cgtop ".len() + fit::width(&host) + from_w;
    let forms = crate::render::mount::mode_forms(&app.mount.mode);
    let mode = forms
        .iter()
        .find(|m| used + fit::width(&mount(m)) <= width)
        .or(forms.last())
        .cloned()
        .unwrap_or_default();
    // the group the tree starts at: what is left of the line, at least
    // half of it, whole components dropped from the left
    // (`…/newc-18771-1`); the host and mount are cut before it
    let from = if from_path.is_empty() {
        String::new()
    } else {
        let before = "cgtop ".len() + fit::width(&host) + fit::width(&mount(&mode));
        // the group's own name whole (`…/` before it) where the line
        // can hold it at all, however long
        let last = from_path.rsplit('/').next().unwrap_or_default();
        let own =
            (fit::width("  from …/") + fit::width(last)).min(width.saturating_sub("cgtop ".len()));
        let from_room = width
            .saturating_sub(before)
            .max(width / 2)
            .max(own)
            .saturating_sub("  from ".len());
        // the operator's own choice, one path for the whole view: no
        // look-alike to tell apart, so its end is what is kept
        format!("  from {}", fit::fit_tail(&from_path, from_room))
    };
    // a mount path that does not fit loses whole components from the
    // left (`…/unified`), as a group's path does, before the line is cut
    let mount_room = width
        .saturating_sub(fit::width(&from))
        .saturating_sub("cgtop ".len() + fit::width(&host));
    let mut mount_text = mount(&mode);
    if fit::width(&mount_text) > mount_room {
        let around = fit::width(&format!("{fs}  ({mode})"));
        let shorter = fit::fit_tail(&root, mount_room.saturating_sub(around));
        if shorter.starts_with("…/") {
            mount_text = format!("{fs} {shorter} ({mode})");
        }
    }
    let mut l1 = fitted(
        vec![
            Span::styled("cgtop ", theme.title),
            Span::raw(host),
            Span::styled(mount_text, theme.header),
        ],
        width.saturating_sub(fit::width(&from)),
    );
    if !from.is_empty() {
        l1.spans.push(Span::raw(from));
    }
    let mut l2 = Vec::new();
    // first on the line, where 80 columns still show it
    let unseen = app.events.unseen;
    if unseen > 0 {
        let s = if unseen == 1 { "" } else { "s" };
        l2.push(Span::styled(
            format!("{unseen} new event{s} (!)  "),
            theme.warn,
        ));
    }
    if let Some(why) = app.event_watch.as_ref().and_then(|w| w.stopped) {
        l2.push(Span::styled(
            format!("events: stopped ({why})  "),
            theme.warn,
        ));
    } else if let Some(n) = app
        .event_watch
        .as_ref()
        .map(|w| w.unwatched)
        .filter(|n| *n > 0)
    {
        l2.push(Span::styled(
            format!("events: {n} groups not watched  "),
            theme.warn,
        ));
    }
    if let Some(p) = &app.past {
        l2.extend(past_header(app, p, theme));
    } else if let Some(d) = &app.data {
        let c = &d.refresh.snapshot.cost;
        l2.push(Span::raw(format!(
            "{} groups  every {}  cost {:.1} ms cpu, {} files ({} via kept fds)",
            d.refresh.snapshot.groups.len(),
            fmt_secs(app.interval),
            c.cpu.as_secs_f64() * 1e3,
            c.files_read,
            c.files_kept,
        )));
        if c.fd_limited {
            l2.push(Span::styled("  fds short: reopening files", theme.warn));
        }
    } else {
        l2.push(Span::raw(format!(
            "reading…  every {}",
            fmt_secs(app.interval)
        )));
    }
    if app.paused {
        l2.push(Span::styled("  PAUSED", theme.warn));
    }
    if app.read_only.is_some() {
        l2.push(Span::styled("  read-only", theme.warn));
    } else if app.in_past() {
        l2.push(Span::styled("  writes off (p: live)", theme.warn));
    }
    let cpu = if app.cpu_machine {
        format!("  CPU%: of {} CPUs", app.host.ncpus)
    } else {
        String::new()
    };
    l2.push(Span::styled(cpu, theme.dim));
    let meters = meters(app, theme, width);
    f.render_widget(Paragraph::new(vec![l1, meters, fitted(l2, width)]), area);
}

/// One line of spans in `width` columns: cut with `…` where it does not
/// fit (`render::fit::fit_pieces`, the rule of every header and status
/// line).
fn fitted(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let pieces: Vec<(String, ratatui::style::Style)> = spans
        .into_iter()
        .map(|s| (s.content.into_owned(), s.style))
        .collect();
    Line::from(
        fit_pieces(&pieces, width)
            .into_iter()
            .map(|(t, st)| Span::styled(t, st))
            .collect::<Vec<_>>(),
    )
}

/// The header's second line while the past is shown: the moment's clock
/// time (UTC) and age against the newest refresh, the groups then, and
/// what one sample of its tier is.
fn past_header(app: &App, p: &crate::app::past::Past, theme: &Theme) -> Vec<Span<'static>> {
    use crate::render::spark::{age_words, clock_utc, every_words};
    let m = p.moment;
    let age = app
        .timeline
        .latest()
        .map_or(Duration::ZERO, |l| l.stamp.at.saturating_sub(m.stamp.at));
    let groups = app
        .data
        .as_ref()
        .map_or(0, |d| d.refresh.snapshot.groups.len());
    let sample = if m.tier == 0 {
        "one refresh".to_owned()
    } else {
        // rates are the span's mean, levels its peak (model::time::timeline)
        format!("{} mean/peak", every_words(app.tier_every(m.tier)))
    };
    vec![
        Span::styled(
            format!("PAST {} UTC, {}", clock_utc(m.stamp.unix_s), age_words(age)),
            theme.warn,
        ),
        Span::raw(format!(
            "  {groups} group{}  {sample}",
            if groups == 1 { "" } else { "s" }
        )),
    ]
}

/// The machine's meters, htop's way: `CPU[||||   12.5%]` (busy time of
/// /proc/stat since the last refresh; where it was not read, the root
/// group's CPU over all CPUs, "-" when the tree starts below the root),
/// `MEM[|||||   3.1G/15.5G]` (MemTotal - MemAvailable of MemTotal: the
/// root group has no memory.current), and the machine's pressure, PSI
/// some avg10 of cpu, memory and io, each figure in its severity's style.
/// In the past, the moment's refresh's figures where they are kept
/// (`app::past::Kept`), else "-" in every meter; in a replay "-" (a
/// recording keeps no machine figures).
fn meters(app: &App, theme: &Theme, width: usize) -> Line<'static> {
    let data = app.data.as_ref().map(|d| &d.refresh);
    let machine = data.and_then(|r| r.machine);
    // the root group's CPU, where the tree has it, over the machine's CPUs
    let ncpus = app.host.ncpus.max(1) as f64;
    // (live only: in the past and in a replay a meter shows the moment's
    // machine figure or "-", every meter alike, not CPU alone)
    let live = !app.in_past() && app.read_only != Some(crate::app::ReadOnly::Replay);
    let root_cpu = data.filter(|_| live).and_then(|r| {
        r.snapshot.groups.first().filter(|g| g.path.is_root())?;
        r.rates.first()?.cpu_pct
    });
    // /proc/stat where the collector read it; else the root group's
    let cpu_share = machine
        .and_then(|m| m.cpu_busy)
        .or(root_cpu.map(|p| p / (ncpus * 100.0)));
    let cpu_text = cpu_share.map_or_else(|| MISSING.to_owned(), |s| format!("{:.1}%", s * 100.0));
    let mem_used = machine.and_then(|m| m.mem_used());
    let mem_total = machine.and_then(|m| m.mem_total);
    let mem_share = mem_used
        .zip(mem_total)
        .and_then(|(u, t)| (t > 0).then(|| u as f64 / t as f64));
    let mem_text = match (mem_used, mem_total) {
        (Some(u), Some(t)) => format!("{}/{}", bytes_short(u), bytes_short(t)),
        _ => MISSING.to_owned(),
    };
    let psi: Vec<(&str, Option<f64>)> = vec![
        (
            "cpu",
            machine.and_then(|m| m.cpu_pressure).map(|p| p.some.avg10),
        ),
        (
            "mem",
            machine
                .and_then(|m| m.memory_pressure)
                .map(|p| p.some.avg10),
        ),
        (
            "io",
            machine.and_then(|m| m.io_pressure).map(|p| p.some.avg10),
        ),
    ];
    let psi_text = |v: Option<f64>| v.map_or_else(|| MISSING.to_owned(), |v| format!("{v:.1}%"));
    // room for the widest figures ("100.0%"), so that the meters do not
    // change width as the figures do
    let psi_w: usize = " PSI".len()
        + psi
            .iter()
            .map(|(n, _)| "  ".len() + n.len() + " 100.0%".len())
            .sum::<usize>();
    // the PSI figures when there is room for them beside two usable meters
    let show_psi = width >= psi_w + 2 * 16;
    let for_meters = width.saturating_sub(if show_psi { psi_w } else { 0 });
    // each meter: label (3), brackets (2), a space between
    let inner = (for_meters.saturating_sub(1) / 2)
        .saturating_sub(5)
        .min(METER_MAX);
    let mut spans = Vec::new();
    let meter = |spans: &mut Vec<Span<'static>>, name: &'static str, share, text: &str| {
        let m = Meter::new(share, text, inner);
        let level = share.and_then(|s| severity::of_share(s, 1.0));
        spans.push(Span::styled(name, theme.title));
        spans.push(Span::raw("["));
        spans.push(Span::styled(m.fill, theme.fill(level)));
        spans.push(Span::raw(m.gap));
        // the part of the figure the bar reaches under is in its style
        let under: String = m.text.chars().take(m.covered).collect();
        let rest: String = m.text.chars().skip(m.covered).collect();
        spans.push(Span::styled(under, theme.fill(level)));
        spans.push(Span::styled(rest, theme.severity(level)));
        spans.push(Span::raw("]"));
    };
    meter(&mut spans, "CPU", cpu_share, &cpu_text);
    spans.push(Span::raw(" "));
    meter(&mut spans, "MEM", mem_share, &mem_text);
    if show_psi {
        spans.push(Span::styled(" PSI", theme.title));
        for (i, (name, v)) in psi.into_iter().enumerate() {
            let sep = if i == 0 { " " } else { "  " };
            spans.push(Span::raw(format!("{sep}{name} ")));
            spans.push(Span::styled(
                psi_text(v),
                theme.severity(severity::pressure(v)),
            ));
        }
    }
    Line::from(spans)
}

fn status(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let typing = |label: &'static str, t| {
        let room = usize::from(area.width).saturating_sub(label.len());
        let mut spans = vec![Span::styled(label, theme.title)];
        spans.extend(dialogs::input_spans(t, room, theme));
        Line::from(spans)
    };
    // a note after the typed text (a search's miss, a found process's
    // command) takes what room is left and is cut with `…`
    let noted = |line: Line<'static>, note: Option<String>| match note {
        Some(note) => {
            let mut spans = line.spans;
            spans.push(Span::styled(format!("  {note}"), theme.warn));
            fitted(spans, usize::from(area.width))
        }
        None => line,
    };
    let line = match &app.mode {
        Mode::Filter if app.filter.is_empty() => {
            // `/` is htop's search: what searches without filtering here
            let mut line = typing("filter: ", &app.filter);
            line.spans.push(Span::styled(
                format!(
                    "  (search, no filter: {})",
                    keymap::keys_text(Scope::Main, keymap::Action::StartSearch)
                ),
                theme.dim,
            ));
            fitted(line.spans, usize::from(area.width))
        }
        Mode::Filter => typing("filter: ", &app.filter),
        Mode::Search { miss } => noted(typing("search: ", &app.search), miss.map(str::to_owned)),
        Mode::FindProcess(p) => noted(
            typing("find process (PID or name): ", &p.text),
            p.note.clone(),
        ),
        Mode::IntervalPrompt(t) => typing("refresh every (seconds): ", t),
        Mode::Jump(t) => typing("jump to (-90s, -5m, 14:03:20 UTC): ", t),
        _ => match &app.status {
            Some(s) => {
                let style = match s.level {
                    Level::Info => theme.header,
                    Level::Warn => theme.warn,
                    Level::Error => theme.error,
                };
                // as many lines as the area has (two for a long warning),
                // the last cut with `…`
                let w = usize::from(area.width);
                let mut words = fit::wrap(&s.text, w, "");
                let n = usize::from(area.height).max(1);
                if words.len() > n {
                    let rest = words.split_off(n - 1).join(" ");
                    words.push(fit(&rest, w));
                }
                let lines: Vec<Line<'_>> = if n == 1 {
                    vec![Line::styled(fit(&s.text, w), style)]
                } else {
                    words.into_iter().map(|l| Line::styled(l, style)).collect()
                };
                return f.render_widget(Paragraph::new(lines), area);
            }
            None if !app.filter.is_empty() => fitted(
                vec![
                    Span::styled("filter: ", theme.dim),
                    Span::raw(app.filter.to_string()),
                ],
                usize::from(area.width),
            ),
            None => Line::raw(""),
        },
    };
    f.render_widget(Paragraph::new(line), area);
}

/// The keys of the current mode that have a footer label, and whether
/// each writes to the hierarchy.
pub fn footer_items(scope: Scope) -> Vec<(String, &'static str, bool)> {
    keymap::bindings(scope)
        .filter_map(|b| {
            b.footer
                .map(|label| (keymap::key_name(&b.keys[0]), label, b.action.writes()))
        })
        .collect()
}

fn footer(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let scope = app.scope();
    // a dialog shows its keys on its own bottom border
    if !matches!(
        scope,
        Scope::Main
            | Scope::Filter
            | Scope::Search
            | Scope::FindProcess
            | Scope::Prompt
            | Scope::Jump
            | Scope::Help
    ) {
        return;
    }
    let mut spans = Vec::new();
    for (key, label, writes) in footer_items(scope) {
        // read-only: a key that would only be refused is not offered
        if writes && app.writes_off().is_some() {
            continue;
        }
        spans.push(Span::styled(key, theme.key));
        spans.push(Span::raw(format!(" {label} ")));
    }
    if let (Some(why), Scope::Main) = (app.writes_off(), scope) {
        spans.push(Span::styled(format!(" {}", why.short()), theme.warn));
    }
    f.render_widget(Paragraph::new(fitted(spans, usize::from(area.width))), area);
}

/// The help lines of one scope, drawn from the keymap.
pub fn help_lines(scope: Scope) -> Vec<(String, String)> {
    keymap::help_lines(scope)
}

/// The help's key column is at most this wide in a narrow column (80x24):
/// a longer key list (few) pushes its own first line to the right, not
/// every text.
const HELP_KEYS_MAX: usize = 6;
/// The help's columns are side by side where each is at least this wide.
const HELP_COLUMN_MIN: usize = 36;

/// `items` on lines of at most `w` columns (the first line whole, the
/// others after `indent`), two spaces between items, one between the
/// words of an item; a line breaks between words.
fn pack(items: &[String], w: usize, indent: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for item in items {
        for (j, word) in item.split_whitespace().enumerate() {
            let room = if out.is_empty() {
                w
            } else {
                w.saturating_sub(fit::width(indent)).max(1)
            };
            let sep = if line.is_empty() {
                ""
            } else if j == 0 {
                "  "
            } else {
                " "
            };
            let word = fit(word, room);
            if !line.is_empty() && fit::width(&line) + sep.len() + fit::width(&word) > room {
                out.push(std::mem::take(&mut line));
                line.push_str(&word);
            } else {
                line.push_str(sep);
                line.push_str(&word);
            }
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    out.into_iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { l } else { format!("{indent}{l}") })
        .collect()
}

/// One help entry in `w` columns: its keys right-aligned in `kw`, its
/// text wrapped beside them.
fn help_entry(keys: &str, text: &str, kw: usize, w: usize, theme: &Theme) -> Vec<Line<'static>> {
    let keys = fit(keys, w / 2);
    let kw_here = kw.max(fit::width(&keys));
    let room = w.saturating_sub(kw_here + 2).max(8);
    let first_room = room;
    let rest_room = w.saturating_sub(kw + 2).max(8);
    // the first line beside the keys, the rest under the text column
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    let mut lines = pack(&[words.join(" ")], first_room, "");
    if lines.len() > 1 {
        let first = lines.remove(0);
        let rest = text
            .split_whitespace()
            .skip(first.split_whitespace().count())
            .collect::<Vec<_>>()
            .join(" ");
        lines = std::iter::once(first)
            .chain(pack(&[rest], rest_room, ""))
            .collect();
    }
    let mut lines = lines.into_iter();
    let first = lines.next().unwrap_or_default();
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!("{}{keys}", " ".repeat(kw.saturating_sub(fit::width(&keys)))),
            theme.title,
        ),
        Span::raw(format!("  {first}")),
    ])];
    let indent = " ".repeat(kw + 2);
    out.extend(lines.map(|l| Line::raw(format!("{indent}{l}"))));
    out
}

/// The help's pages: the intro across the first page, then every screen's
/// keys (the main view's first: the screen the help was opened from) in
/// one or two columns, an entry never split between columns.
fn help_pages(app: &App, theme: &Theme, width: usize, height: usize) -> Vec<Vec<Line<'static>>> {
    let two = width >= 2 * HELP_COLUMN_MIN + 2;
    let col_w = if two { (width - 2) / 2 } else { width };
    let mut intro: Vec<Line<'static>> = Vec::new();
    let mut say = |text: String, style| {
        for l in fit::wrap(&text, width, "") {
            intro.push(Line::styled(l, style));
        }
    };
    say(
        "CPU% is of one core (100 = one core busy); sizes in binary units (K = KiB).".to_owned(),
        theme.title,
    );
    say(
        "State: P populated, F frozen, t throttled (cpu.max), T threaded, ! an event.".to_owned(),
        ratatui::style::Style::new(),
    );
    say(
        format!(
            "Colours: warm >= {:.0} % of a limit or PSI {:.0} %, hot >= {:.0} % or PSI {:.0} %.",
            severity::WARM_SHARE * 100.0,
            severity::PRESSURE_WARM,
            severity::HOT_SHARE * 100.0,
            severity::PRESSURE_HOT,
        ),
        ratatui::style::Style::new(),
    );
    if let Some(why) = app.read_only {
        say(
            format!(
                "Read-only ({why}): {} change nothing.",
                keymap::write_keys(Scope::Main).join(" ")
            ),
            theme.warn,
        );
    }
    // every screen's keys, from the one table, a heading per screen; a
    // heading stays with the entry after it
    let mut items: Vec<Vec<Line<'static>>> = Vec::new();
    // the help's own keys are on its title
    for scope in Scope::ALL.into_iter().filter(|s| *s != Scope::Help) {
        // another screen's keys: its heading and one run of "keys what"
        // (the words of its own border, else the help's), as that
        // screen's border shows them; the main view's, a line each
        if scope != Scope::Main {
            let mut run: Vec<String> = keymap::footer_text(scope)
                .split("  ")
                .map(str::to_owned)
                .collect();
            // a screen whose rows have no border words (editing text)
            if run.iter().all(String::is_empty) {
                run = help_lines(scope)
                    .into_iter()
                    .map(|(k, t)| format!("{k} {t}"))
                    .collect();
            }
            // the heading first on its line, the keys after it
            let title = format!("{}:", scope.title());
            run.insert(0, title.clone());
            // a line each: a screen's keys may go on in the next column
            for (i, l) in pack(&run, col_w, "  ").into_iter().enumerate() {
                match l.strip_prefix(title.as_str()) {
                    Some(rest) if i == 0 => items.push(vec![Line::from(vec![
                        Span::styled(title.clone(), theme.header),
                        Span::raw(rest.to_owned()),
                    ])]),
                    _ => items.push(vec![Line::raw(l)]),
                }
            }
            continue;
        }
        let entries = help_lines(scope);
        // the keys right-aligned within the section: one long key list
        // (closing the help) must not push every text to the right
        let kw = entries
            .iter()
            .map(|(k, _)| fit::width(k))
            .max()
            .unwrap_or(0)
            .min(if col_w >= 2 * HELP_COLUMN_MIN {
                usize::MAX
            } else {
                HELP_KEYS_MAX
            });
        for (i, (keys, text)) in entries.iter().enumerate() {
            let mut item = Vec::new();
            if i == 0 && scope != Scope::Main {
                item.push(Line::styled(fit(scope.title(), col_w), theme.header));
            }
            item.extend(help_entry(keys, text, kw, col_w, theme));
            items.push(item);
        }
    }
    // flow the entries down the columns, page after page
    let mut pages = Vec::new();
    let mut page_intro = Some(intro);
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() || page_intro.is_some() {
        let mut lines = page_intro.take().unwrap_or_default();
        let rows = height.saturating_sub(lines.len()).max(1);
        let mut cols: Vec<Vec<Line<'static>>> = Vec::new();
        for _ in 0..if two { 2 } else { 1 } {
            let mut col: Vec<Line<'static>> = Vec::new();
            while let Some(item) = items.peek() {
                // an entry taller than a column goes alone (cut)
                if !col.is_empty() && col.len() + item.len() > rows {
                    break;
                }
                col.extend(items.next().unwrap_or_default());
            }
            col.truncate(rows);
            cols.push(col);
        }
        let left = cols.first().cloned().unwrap_or_default();
        let right = cols.get(1).cloned().unwrap_or_default();
        for i in 0..left.len().max(right.len()) {
            let mut spans: Vec<Span<'static>> = Vec::new();
            if let Some(l) = left.get(i) {
                spans.extend(l.spans.iter().cloned());
            }
            if let Some(r) = right.get(i) {
                let used: usize = spans.iter().map(|s| fit::width(&s.content)).sum();
                spans.push(Span::raw(" ".repeat(col_w + 2 - used.min(col_w))));
                spans.extend(r.spans.iter().cloned());
            }
            lines.push(Line::from(spans));
        }
        pages.push(lines);
    }
    pages
}

/// The help box is at most this wide (two columns of keys).
const HELP_WIDTH_MAX: u16 = 120;

fn help(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let w = area.width.min(HELP_WIDTH_MAX);
    let h = area.height;
    let r = Rect::new(area.x + (area.width - w) / 2, area.y, w, h);
    // the help is modal and full height: clear the whole screen, so that
    // no stray column of the main view shows beside the box
    f.render_widget(Clear, area);
    // pages rather than a cut: Space turns the page (and wraps around)
    // a top border only: its title names the page and the keys; the
    // sides and the bottom would cost a column of keys a line
    let mut pages = help_pages(app, theme, usize::from(w), usize::from(h.saturating_sub(1)));
    let n = pages.len().max(1);
    let page = app.help_page % n;
    // the help's own keys, from the keymap
    let keys = keymap::footer_text(Scope::Help);
    let title = if n > 1 {
        format!(" cgtop help {}/{n}  {keys} ", page + 1)
    } else {
        format!(" cgtop help  {keys} ")
    };
    let title = fit(&title, usize::from(w));
    let shown = if page < pages.len() {
        pages.swap_remove(page)
    } else {
        Vec::new()
    };
    let block = Block::default().borders(Borders::TOP).title(title);
    f.render_widget(Paragraph::new(shown).block(block), r);
}
