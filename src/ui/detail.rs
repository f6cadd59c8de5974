//! The detail pane: the selected group, one page at a time.

use super::Theme;
use crate::app::{App, DetailPage, Pane};
use crate::cgroupfs::v1_limits::{self, FreezerState, MemoryStatV1};
use crate::cgroupfs::{CpuMax, IoStatDevice, Pressure};
use crate::model::tree::limits::{cpu_max_of, effective_memory, ThrottleSource, Throttling};
use crate::model::tree::text::{escape, escape_str};
use crate::model::{GroupDetail, GroupPath};
use crate::render::fit::{fit, fit_left};
use crate::render::severity;
use crate::render::units::{
    bytes_cell, bytes_long, bytes_short, count_cell, limit_bytes, limit_count, limit_rate, pct,
    pct_sign, MISSING,
};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

/// `beside` is true when the pane sits right of the tree (wide screens):
/// then a left border separates it from the tree's last column.
pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme, beside: bool) {
    let mut tabs = vec![Span::raw(" ")];
    for (i, p) in DetailPage::ALL.iter().enumerate() {
        let label = format!("{} {} ", i + 1, p.title());
        tabs.push(if *p == app.page {
            Span::styled(label, theme.key)
        } else {
            Span::styled(label, theme.dim)
        });
    }
    let block = Block::default()
        .borders(if beside {
            Borders::TOP | Borders::LEFT
        } else {
            Borders::TOP
        })
        .title(Line::from(tabs));
    let inner = block.inner(area);
    let inner_w = usize::from(inner.width);
    let lines = match app.page {
        DetailPage::Overview => overview(app, theme, inner_w),
        // a past moment has the full read only where it was kept
        _ if app.in_past() && app.inspection.is_none() => vec![Line::styled(
            "not kept for the past: the detail pages keep the inspected group's last 60 refreshes (1: overview)",
            theme.dim,
        )],
        DetailPage::Memory => memory(app, theme),
        DetailPage::Io => {
            let mut lines = io(app, theme);
            lines.extend(writeback(app, theme, inner_w));
            lines
        }
        // the process list follows its own cursor
        DetailPage::Processes => {
            return f.render_widget(
                Paragraph::new(processes(app, theme, inner_w)).block(block),
                area,
            );
        }
        DetailPage::Raw => raw(app, theme, inner_w),
    };
    // `[` `]` scroll; never past the last line
    let height = usize::from(inner.height);
    let top = app
        .detail_scroll
        .min(lines.len().saturating_sub(height.max(1)));
    let below = lines.len().saturating_sub(top + height);
    // said on the top border, right: the pane's last line is content
    let more = if below > 0 {
        Some(format!(" {below} more: ] "))
    } else if top > 0 {
        Some(format!(" {top} above: [ "))
    } else {
        None
    };
    let block = match more {
        Some(m) => block.title(Line::styled(m, theme.dim).right_aligned()),
        None => block,
    };
    let top = u16::try_from(top).unwrap_or(u16::MAX);
    f.render_widget(Paragraph::new(lines).block(block).scroll((top, 0)), area);
}

fn label(s: &str, theme: &Theme) -> Span<'static> {
    Span::styled(format!("{s:<7}"), theme.title)
}

/// IOPS as a whole number; "-" where not known (a past moment, v1
/// blkio's io_serviced unreadable).
fn iops(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or_else(|| MISSING.to_owned(), |v| format!("{v:.0}"))
}

/// Bytes a second in full; "-" where not known.
fn bytes_rate(v: Option<f64>) -> String {
    v.map_or_else(|| MISSING.to_owned(), bytes_long)
}

/// The room for the words after a sparkline (with the space before
/// them): its scale, max, min and limit, as the figure
/// is said ("0..100% max 40.6% min 9.8% limit 10% ▁", "0..max 240%
/// min 9.8%").
const SPARK_WORDS: usize = 42;

/// The overview's history (issue 9, item 1): a sparkline per figure of
/// the group over the span of one timeline tier (`,` turns it; a past
/// moment of a coarser tier shows that tier), each with its min and max,
/// and the moment shown marked while in the past.
fn history(
    out: &mut Vec<Line<'static>>,
    app: &App,
    theme: &Theme,
    width: usize,
    path: &GroupPath,
    limits: &severity::Limits,
) {
    use crate::model::time::timeline::Figure;
    use crate::render::spark::{self, Scale};
    use crate::render::units::{pct_sign, rate_short};
    let tier = app.span_tier();
    let series = app.timeline.series(path, tier);
    let ring = app.timeline.specs().get(tier).map_or(0, |s| s.len);
    let w = width.saturating_sub(7 + SPARK_WORDS).min(ring);
    // one sample is no line: the block waits for a second
    let present = series.iter().filter(|(_, e)| e.is_present()).count();
    if present < 2 || w < 8 {
        return;
    }
    // the newest `w` samples; in the past, those that end at the moment
    // shown where it is older than them (as the tree's column ends at
    // it), so the moment and what led to it are on the line
    let upto = app.past.as_ref().map_or(0, |p| {
        series.partition_point(|(st, _)| st.at <= p.moment.stamp.at)
    });
    let end = if upto == 0 || upto + w > series.len() {
        series.len()
    } else {
        upto.max(w)
    };
    let shown = &series[end - w.min(end)..end];
    // the sample of the moment shown (none when the span does not hold it)
    let every = app.tier_every(tier);
    let marked = app.past.as_ref().and_then(|p| {
        shown
            .iter()
            .enumerate()
            .map(|(i, (st, _))| (i, st.at.abs_diff(p.moment.stamp.at)))
            .filter(|(_, d)| *d <= every)
            .min_by_key(|(_, d)| *d)
            .map(|(i, _)| i + w - shown.len())
    });
    out.push(Line::styled(
        format!(
            "history: {}{}",
            spark::span_words(shown.len(), every),
            if tier > 0 { ", mean/peak" } else { "" }
        ),
        theme.title,
    ));
    let figs = |f: Figure| -> Vec<Option<f64>> { shown.iter().map(|(_, e)| e.get(f)).collect() };
    // every line on the one scale rule (`render::spark`), its words its
    // scale, its max and min and a limit's mark
    let line = |name: &str,
                vals: &[Option<f64>],
                floor: f64,
                say: &dyn Fn(f64) -> String,
                limit: Option<f64>| {
        let scale = Scale::of(vals, w, floor);
        let text = spark::line(vals, w, scale);
        let words = spark::min_max(vals, w).map_or_else(
            || "no figure".to_owned(),
            |(lo, hi)| {
                let mark = limit.map_or_else(String::new, |l| {
                    format!(" limit {} {}", say(l), scale.mark(l))
                });
                // the peak is said once: as the top, or after it
                let max = if scale.peak {
                    String::new()
                } else {
                    format!(" max {}", say(hi))
                };
                format!("{}{max} min {}{mark}", scale.words(say), say(lo))
            },
        );
        let mut spans = vec![label(name, theme)];
        match marked {
            Some(i) => {
                let before: String = text.chars().take(i).collect();
                let at: String = text.chars().skip(i).take(1).collect();
                let after: String = text.chars().skip(i + 1).collect();
                spans.push(Span::raw(before));
                spans.push(Span::styled(
                    if at == " " { "|".into() } else { at },
                    theme.selected,
                ));
                spans.push(Span::raw(after));
            }
            None => spans.push(Span::raw(text)),
        }
        spans.push(Span::styled(format!(" {words}"), theme.dim));
        Line::from(spans)
    };
    let cpu: Vec<Option<f64>> = figs(Figure::Cpu)
        .into_iter()
        .map(|v| v.map(|p| app.cpu_shown(p)))
        .collect();
    let quota = limits
        .cpu
        .and_then(|m| m.cpus())
        .map(|c| app.cpu_shown(c * 100.0));
    let pct_of = pct_sign;
    // a figure the group never had (a controller off, or on v1) has no
    // line: the figures above say why
    let some = |v: &[Option<f64>]| v.iter().any(Option::is_some);
    if some(&cpu) {
        out.push(line("CPU", &cpu, spark::PCT_FLOOR, &pct_of, quota));
    }
    let mem = figs(Figure::Memory);
    if some(&mem) {
        let say = |v: f64| bytes_short(v as u64);
        let limit = limits.memory.map(|l| l as f64);
        out.push(line("MEM", &mem, spark::BYTES_FLOOR, &say, limit));
    }
    let io: Vec<Option<f64>> = shown
        .iter()
        .map(
            |(_, e)| match (e.get(Figure::IoRead), e.get(Figure::IoWrite)) {
                (None, None) => None,
                (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
            },
        )
        .collect();
    if some(&io) {
        let say = |v: f64| format!("{}/s", rate_short(Some(v)));
        out.push(line("IO r+w", &io, spark::BYTES_FLOOR, &say, None));
    }
    for (name, f) in [("PSI s", Figure::PsiSome), ("PSI f", Figure::PsiFull)] {
        let v = figs(f);
        if some(&v) {
            out.push(line(name, &v, spark::PCT_FLOOR, &pct_of, None));
        }
    }
    // in the past: a caret under the moment shown (its cell is marked too)
    if let (Some(i), Some(p)) = (marked, &app.past) {
        let under = format!(
            "{}^ {}",
            " ".repeat(7 + i),
            spark::clock_utc(p.moment.stamp.unix_s)
        );
        out.push(Line::styled(fit_left(&under, width), theme.title));
    }
}

fn cpu_max_text(m: Option<CpuMax>) -> String {
    match m {
        None => MISSING.into(),
        Some(m) => match m.cpus() {
            None => format!("max (period {} us)", m.period),
            Some(c) => format!(
                "{} of a CPU ({} / {} us)",
                pct_sign(c * 100.0),
                m.quota.unwrap_or(0),
                m.period
            ),
        },
    }
}

/// "throttled 78% of the last window by /a.slice's cpu.max 20%": who
/// throttles the group (`model::tree::limits::throttling`), with the quota where
/// the inspection read it. `~` and "(inferred)" where no cpu.stat.local says
/// it: the share is then the throttling group's own.
fn throttled_text(t: &Throttling, path: &GroupPath, cpu_max: Option<CpuMax>) -> String {
    let quota = cpu_max
        .and_then(|m| m.cpus())
        .map_or_else(String::new, |c| format!(" {}", pct_sign(c * 100.0)));
    let whose = match &t.by {
        Some(b) if b == path => format!("its own cpu.max{quota}"),
        Some(b) => format!("{b}'s cpu.max{quota}"),
        None => "an ancestor's cpu.max".to_owned(),
    };
    let inferred = t.source == ThrottleSource::Inferred;
    let share = t.pct.map_or_else(String::new, |p| {
        format!(
            " {}{p:.0}% of the last window",
            if inferred { "~" } else { "" }
        )
    });
    format!(
        "throttled{share} by {whose}{}",
        if inferred { " (inferred)" } else { "" }
    )
}

/// The PSI table's columns: the header and the rows share these widths.
fn psi_row(name: &str, cells: [&str; 4]) -> String {
    format!(
        "{name:<10}{:>11}{:>7}{:>13}{:>7}",
        cells[0], cells[1], cells[2], cells[3]
    )
}

fn psi(name: &str, p: Option<&Pressure>) -> String {
    let v = |x: f64| format!("{x:.2}");
    match p {
        None => psi_row(name, [MISSING; 4]),
        Some(p) => {
            let (f10, f60) = p.full.map_or((MISSING.into(), MISSING.into()), |f| {
                (v(f.avg10), v(f.avg60))
            });
            psi_row(name, [&v(p.some.avg10), &v(p.some.avg60), &f10, &f60])
        }
    }
}

/// Whether cgroup v1 holds this controller (hybrid host): then the v2
/// group has no files for it, and that is not "off for this group".
fn on_v1(app: &App, controller: &str) -> bool {
    app.mount.mode.on_v1(controller)
}

/// Where the inspected group's figures of a controller that cgroup v1
/// holds here come from: `Some(true)` its v1 hierarchy has the group,
/// `Some(false)` it does not (systemd makes a unit's group only in the
/// hierarchies of its controllers), `None` the controller is not on v1
/// (or the group's full read is not in yet).
fn in_v1(app: &App, det: Option<&GroupDetail>, controller: &str) -> Option<bool> {
    if !on_v1(app, controller) {
        return None;
    }
    let s = det?.hierarchies.as_ref()?;
    let slot = match controller {
        "cpu" => &s.cpu,
        "memory" => &s.memory,
        "io" | "blkio" => &s.io,
        "pids" => &s.pids,
        "freezer" => &s.freezer,
        _ => return None,
    };
    Some(slot.is_some())
}

/// The v1 words for a controller's figures that are not there.
fn not_in_v1(controller: &str) -> String {
    format!("not in the v1 {controller} hierarchy")
}

fn overview(app: &App, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let Some((g, r)) = app.selected_data() else {
        return vec![Line::styled("no group selected", theme.dim)];
    };
    let d = app.inspection.as_ref().filter(|f| f.path == g.path);
    let det = d.map(|f| &f.detail);
    let ev = g.hot.events.unwrap_or_default();
    let mut marks = Vec::new();
    if ev.is_populated() {
        marks.push("populated");
    }
    let frozen_text;
    if ev.is_frozen() {
        let now = app.data.as_ref().map(|d| d.refresh.snapshot.at);
        frozen_text = match (app.frozen_since.get(&g.path), now) {
            (Some(Some(since)), Some(now)) => format!(
                "frozen for {:.0} s",
                now.saturating_sub(*since).as_secs_f64()
            ),
            _ => "frozen (since before cgtop started)".to_owned(),
        };
        marks.push(&frozen_text);
    } else if app.freezing.contains(&g.path) {
        marks.push("freezing…");
    }
    // v1's freezer.state, where the scan has no cgroup.events to say it:
    // FREEZING is its own state there (a task the kernel could not stop
    // yet keeps it so), shown as the kernel says it
    let v1_freezer = det.and_then(|d| d.freezer).map(|f| f.state);
    if !ev.is_frozen() {
        match v1_freezer {
            Some(FreezerState::Frozen) => marks.push("frozen (freezer.state FROZEN)"),
            Some(FreezerState::Freezing) => marks.push("FREEZING (freezer.state)"),
            _ => {}
        }
    }
    // no cgroup.type: the root, or a group of a v1 hierarchy (v1 has none)
    let ty = match g.cgroup_type {
        Some(t) => t.as_str(),
        None if g.path.is_root() => "root",
        None => "-",
    };
    // the figures come first: on a small screen the pane shows only the
    // top lines, and the structure below them changes rarely
    let mut out = vec![
        Line::from(vec![Span::styled(
            fit_left(&g.path.to_string(), width),
            theme.title,
        )]),
        // the root has no cgroup.events: say nothing rather than "empty"
        Line::raw(match (marks.is_empty(), g.cgroup_type.is_none()) {
            (true, true) => format!("type {ty}"),
            (true, false) => format!("type {ty}   empty"),
            (false, _) => format!("type {ty}   {}", marks.join(", ")),
        }),
    ];
    // who the group is, in one line near the top; the rest of the block
    // after the figures
    let who = crate::model::identity::of_group(g)
        .and_then(|i| crate::render::identity::detail(&i, &g.path.name_display()));
    if let Some((head, _)) = &who {
        out.push(Line::from(vec![
            label("WHO", theme),
            Span::raw(fit(head, width.saturating_sub(7))),
        ]));
    }
    // files that are there but were not read (a FIFO, a symlink, over
    // the cap): an error on this group, not a silent "-"; a file both the
    // scan (a column shown) and the detail read says so once
    let hot = &g.hot.unreadable;
    let detail_only = det
        .into_iter()
        .flat_map(|d| &d.unreadable)
        .filter(|u| !hot.iter().any(|h| h.file == u.file));
    for u in hot.iter().chain(detail_only) {
        out.push(Line::styled(
            fit_left(&format!("{}: {}", u.file, u.error), width),
            theme.error,
        ));
    }
    // CPU, the figure in the style of how near it is to the quota
    let limits = super::limits_of(app, g);
    let cpu_fig = Span::styled(
        format!("{}%", pct(r.cpu_pct.map(|p| app.cpu_shown(p)))),
        theme.severity(severity::cpu(r.cpu_pct, limits.cpu)),
    );
    // a past moment keeps the total only
    let mut cpu = if app.in_past() {
        String::new()
    } else {
        format!(
            "  user {}%  sys {}%",
            pct(r.user_pct.map(|p| app.cpu_shown(p))),
            pct(r.system_pct.map(|p| app.cpu_shown(p)))
        )
    };
    // throttling means something only under a quota (or when it happened)
    let has_quota = det
        .and_then(|d| d.cpu_max)
        .is_some_and(|m| m.quota.is_some());
    if let Some(t) = r.throttled_per_s.filter(|t| has_quota || *t > 0.0) {
        cpu.push_str(&format!("  throttled {t:.1}/s {}%", pct(r.throttled_pct)));
    }
    out.push(Line::from(vec![
        label("CPU", theme),
        cpu_fig,
        Span::raw(cpu),
    ]));
    if let Some(det) = det {
        if let Some(shares) = det.cpu_shares {
            // v1: cpu.cfs_quota_us / cpu.cfs_period_us, and cpu.shares
            out.push(Line::raw(format!(
                "       quota={}  shares={shares}",
                cpu_max_text(det.cpu_max),
            )));
        } else if det.cpu_max.is_some() || det.cpu_weight.is_some() {
            out.push(Line::raw(format!(
                "       quota={}  weight={}",
                cpu_max_text(det.cpu_max),
                count_cell(det.cpu_weight)
            )));
        } else if in_v1(app, Some(det), "cpu") == Some(false) {
            out.push(Line::styled(
                format!("       quota -  ({})", not_in_v1("cpu")),
                theme.dim,
            ));
        }
    }
    // throttling by the group's own cpu.max is on the CPU line already
    if let Some(t) = app
        .row_throttling(app.cursor)
        .filter(|t| t.throttled && t.by.as_ref() != Some(&g.path))
    {
        let quota =
            t.by.as_ref()
                .zip(d)
                .and_then(|(b, f)| cpu_max_of(&f.cpu_max_path, b));
        out.push(Line::raw(format!(
            "       {}",
            throttled_text(t, &g.path, quota)
        )));
    }
    // Memory, against the effective limit
    // on v1, the inspected group's memory.usage_in_bytes where the scan
    // has no figure of its own
    let cur = g.hot.memory_current.or(det.and_then(|d| d.memory_usage));
    let eff = d.and_then(|f| effective_memory(&f.memory_limits));
    let mem = match (cur, &eff) {
        (Some(c), Some(e)) => {
            let frac = (c as f64 / e.bytes.max(1) as f64).min(1.0);
            let bar_w = 10;
            let filled = (frac * bar_w as f64).round() as usize;
            // on v1 the walk read memory.limit_in_bytes
            let file = if in_v1(app, det, "memory").is_some() {
                v1_limits::files::MEMORY_LIMIT
            } else {
                e.file
            };
            let whose = if e.set_by == g.path {
                format!("{file} here")
            } else {
                format!("{file} of {}", e.set_by.name_display())
            };
            let level = severity::memory(Some(c), Some(e.bytes));
            vec![
                Span::raw("["),
                Span::styled("#".repeat(filled), theme.fill(level)),
                Span::raw(format!("{}] ", ".".repeat(bar_w - filled))),
                Span::styled(bytes_short(c), theme.severity(level)),
                Span::raw(format!(" / {} ({whose})", bytes_short(e.bytes))),
            ]
        }
        (Some(c), None) => vec![Span::raw(format!(
            "{}  no limit on the path",
            bytes_short(c)
        ))],
        (None, _) if g.cgroup_type.is_none() => {
            vec![Span::raw("- (not reported for the root group)")]
        }
        (None, _) if in_v1(app, det, "memory") == Some(false) => {
            vec![Span::raw(format!("- ({})", not_in_v1("memory")))]
        }
        (None, _) if on_v1(app, "memory") => {
            vec![Span::raw(
                "- (memory is a cgroup v1 controller on this host)",
            )]
        }
        (None, _) => vec![Span::raw("- (memory controller off for this group)")],
    };
    let mut l = vec![label("MEM", theme)];
    l.extend(mem);
    out.push(Line::from(l));
    if g.hot.v1.sources.root_kernel_memory {
        // the kernel's root on v1 (`model::tree::root`)
        out.push(Line::raw(
            "       the machine's file and anonymous pages + kernel memory charged below",
        ));
    }
    if let Some(det) = det.filter(|d| in_v1(app, Some(d), "memory") == Some(true)) {
        v1_memory_lines(&mut out, det, theme);
    } else if let Some(det) = det {
        if det.memory_max.is_some() {
            out.push(Line::raw(format!(
                "       min={}  low={}  high={}  max={}",
                limit_bytes(det.memory_min),
                limit_bytes(det.memory_low),
                limit_bytes(det.memory_high),
                limit_bytes(det.memory_max)
            )));
        }
        if det.swap_current.is_some() || det.swap_max.is_some() {
            out.push(Line::raw(format!(
                "       swap {} / {}",
                bytes_cell(det.swap_current),
                limit_bytes(det.swap_max)
            )));
        }
    }
    // IO total
    if let Some(io) = r.io {
        out.push(Line::from(vec![
            label("IO", theme),
            Span::raw(format!(
                "read {}/s {} IOPS  write {}/s {} IOPS",
                bytes_rate(io.rbps),
                iops(io.riops),
                bytes_rate(io.wbps),
                iops(io.wiops)
            )),
        ]));
    }
    if let Some(d) = g.hot.v1.sources.io_uncounted {
        // v1 blkio counts no IO on a disk no rule was set on
        // (`model::tree::root::busy_uncounted`); named as the IO page
        // names it, the number kept for the fix
        let disk = app
            .data
            .as_ref()
            .and_then(|x| x.refresh.devices.iter().find(|x| x.dev == d))
            .map_or_else(
                || d.to_string(),
                |x| format!("{} ({d})", escape_str(&x.name)),
            );
        out.push(Line::from(vec![
            label("IO", theme),
            Span::raw(format!(
                "- (v1 blkio counts disk {disk}'s IO only after a throttle rule is set on it, Linux 6.10+)"
            )),
        ]));
        out.push(Line::raw(format!(
            "       to count it: echo '{d} 0' > blkio.throttle.read_bps_device (0: no limit)"
        )));
    }
    // PIDs
    let pids_max = det.and_then(|det| det.pids_max);
    let pids_level = severity::pids(g.hot.pids_current, limits.pids);
    let pids = match (g.hot.pids_current, g.hot.nr_procs) {
        // the kernel's root: no pids.current (`model::tree::root`)
        (Some(c), n) if g.hot.v1.sources.root_machine_tasks => match n {
            Some(n) => format!("{c} tasks on the machine ({n} processes in the root group itself)"),
            None => format!("{c} tasks on the machine"),
        },
        (Some(c), _) => match pids_max {
            Some(max) => format!("{c} in subtree  max={max}"),
            None => format!("{c} in subtree"),
        },
        (None, Some(n)) => {
            let what = if n == 1 { "process" } else { "processes" };
            if g.cgroup_type.is_none() {
                format!("{n} {what} in the root group itself")
            } else if in_v1(app, det, "pids") == Some(false) {
                format!("{n} {what} here ({})", not_in_v1("pids"))
            } else if on_v1(app, "pids") {
                match pids_max {
                    Some(max) => format!("{n} {what} here  max={max}"),
                    None => {
                        format!("{n} {what} here (pids is a cgroup v1 controller on this host)")
                    }
                }
            } else {
                format!("{n} {what} here (pids controller off)")
            }
        }
        (None, None) => MISSING.into(),
    };
    out.push(Line::from(vec![
        label("PIDS", theme),
        Span::styled(pids, theme.severity(pids_level)),
    ]));
    let Some(det) = det else {
        history(&mut out, app, theme, width, &g.path, &limits);
        identity_lines(&mut out, who.as_ref(), theme, width);
        return out;
    };
    // Pressure
    if det.cpu_pressure.is_some() || det.memory_pressure.is_some() || det.io_pressure.is_some() {
        out.push(Line::styled(
            psi_row("PSI", ["some avg10", "avg60", "full avg10", "avg60"]),
            theme.title,
        ));
        // each row in the style of its some avg10 (`render::severity`)
        for (name, p) in [
            ("  cpu", det.cpu_pressure.as_ref()),
            ("  memory", det.memory_pressure.as_ref()),
            ("  io", det.io_pressure.as_ref()),
        ] {
            let level = severity::pressure(p.map(|p| p.some.avg10));
            out.push(Line::styled(psi(name, p), theme.severity(level)));
        }
    }
    // the figures' history, then the structure (which changes rarely)
    history(&mut out, app, theme, width, &g.path, &limits);
    identity_lines(&mut out, who.as_ref(), theme, width);
    // Structure
    let list = |ctl: Option<&crate::cgroupfs::Controllers>| {
        ctl.map_or(MISSING.into(), |names| {
            if names.is_empty() {
                "(none)".into()
            } else {
                escape_str(&names.to_string()).into_owned()
            }
        })
    };
    out.push(Line::raw(format!(
        "controllers: {}",
        list(det.controllers.as_ref())
    )));
    out.push(Line::raw(format!(
        "for children: {}",
        list(det.subtree_control.as_ref())
    )));
    if let Some(s) = det.stat {
        out.push(Line::raw(format!(
            "descendants {}  dying {}",
            count_cell(s.nr_descendants),
            count_cell(s.nr_dying_descendants)
        )));
    }
    out
}

/// The overview's identity block (`render::identity::detail`): what the
/// group is, its id, image, pod, labels, a unit's description, a
/// session's user, and the file it came from or why it was not read;
/// each line cut at the pane's edge.
fn identity_lines(
    out: &mut Vec<Line<'static>>,
    who: Option<&(String, Vec<(&'static str, String)>)>,
    theme: &Theme,
    width: usize,
) {
    let Some((_, lines)) = who else { return };
    for (what, text) in lines {
        let room = width.saturating_sub(7 + what.len() + 1);
        let style = if *what == "not read" {
            theme.error
        } else {
            ratatui::style::Style::new()
        };
        out.push(Line::from(vec![
            Span::raw("       "),
            Span::styled(format!("{what} "), theme.dim),
            Span::styled(
                if *what == "source" {
                    fit_left(text, room)
                } else {
                    fit(text, room)
                },
                style,
            ),
        ]));
    }
}

/// The overview's v1 memory limits: memory.limit_in_bytes, the soft
/// limit, memsw (memory + swap, where swap accounting is on), failcnt and
/// memory.oom_control.
fn v1_memory_lines(out: &mut Vec<Line<'static>>, det: &GroupDetail, theme: &Theme) {
    out.push(Line::raw(format!(
        "       limit={}  soft={}",
        limit_bytes(det.memory_max),
        limit_bytes(det.memory_soft_limit),
    )));
    if det.memsw_limit.is_some() || det.memsw_usage.is_some() {
        out.push(Line::raw(format!(
            "       memsw {} / {}  swap {}",
            bytes_cell(det.memsw_usage),
            limit_bytes(det.memsw_limit),
            bytes_cell(det.swap_current),
        )));
    }
    let kills = det.oom_control.and_then(|o| o.oom_kill);
    let mut l = format!(
        "       failcnt {}  OOM kills {}",
        count_cell(det.memory_failcnt),
        count_cell(kills)
    );
    if let Some(o) = det.oom_control {
        if o.oom_kill_disable {
            l.push_str("  OOM killer off");
        }
        if o.under_oom {
            l.push_str("  UNDER OOM");
        }
    }
    let hot = det.oom_control.is_some_and(|o| o.under_oom) || kills.is_some_and(|k| k > 0);
    out.push(if hot {
        Line::styled(l, theme.warn)
    } else {
        Line::raw(l)
    });
}

/// The memory page on v1: memory.oom_control and failcnt first (what a
/// small screen must not cut off), then v1 memory.stat, the group's own
/// pages beside its subtree's (`total_*`).
fn v1_memory_page(
    f: &crate::source::collector::Inspection,
    v: &MemoryStatV1,
) -> Vec<Line<'static>> {
    let d = &f.detail;
    let mut out = Vec::new();
    if let Some(o) = d.oom_control {
        out.push(Line::raw(format!(
            "memory.oom_control  oom_kill {}  under_oom {}  oom_kill_disable {}",
            count_cell(o.oom_kill),
            u8::from(o.under_oom),
            u8::from(o.oom_kill_disable)
        )));
    }
    out.push(Line::raw(format!(
        "failcnt {}  limit {}  soft {}  memsw {}",
        count_cell(d.memory_failcnt),
        limit_bytes(d.memory_max),
        limit_bytes(d.memory_soft_limit),
        limit_bytes(d.memsw_limit)
    )));
    out.push(Line::raw(format!(
        "{:<17}{:>10} {:>10}",
        "memory.stat (v1)", "own", "subtree"
    )));
    for (name, own, total) in [
        ("cache", v.cache, v.total_cache),
        ("rss", v.rss, v.total_rss),
        ("shmem", v.shmem, v.total_shmem),
        ("mapped_file", v.mapped_file, v.total_mapped_file),
        ("dirty", v.dirty, v.total_dirty),
        ("writeback", v.writeback, v.total_writeback),
        ("swap", v.swap, v.total_swap),
    ] {
        out.push(Line::raw(format!(
            "  {name:<15}{:>10} {:>10}",
            bytes_cell(own),
            bytes_cell(total)
        )));
    }
    if let Some(peak) = d.memory_peak {
        out.push(Line::raw(format!(
            "  {:<15}{:>10}",
            "max usage",
            bytes_short(peak)
        )));
    }
    out
}

fn memory(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let Some(f) = app.inspection.as_ref() else {
        return vec![Line::styled("reading…", theme.dim)];
    };
    let d = &f.detail;
    match in_v1(app, Some(d), "memory") {
        Some(false) => return vec![Line::styled(not_in_v1("memory"), theme.dim)],
        Some(true) => {
            if let Some(v) = &d.memory_stat_v1 {
                let mut out = v1_memory_page(f, v);
                if let Some(first) = out.first_mut() {
                    if d.oom_control
                        .is_some_and(|o| o.under_oom || o.oom_kill.is_some_and(|k| k > 0))
                    {
                        *first = first.clone().style(theme.warn);
                    }
                }
                if let Some(l) = out.get_mut(2) {
                    *l = l.clone().style(theme.title);
                }
                return out;
            }
        }
        None => {}
    }
    let mut out = Vec::new();
    let Some(st) = d.memory_stat else {
        return vec![Line::styled(
            if on_v1(app, "memory") {
                "memory is a cgroup v1 controller on this host (no memory.stat in v2)"
            } else {
                "memory controller is off for this group (no memory.stat)"
            },
            theme.dim,
        )];
    };
    // events first: an OOM kill is what a small screen must not cut off
    if let Some(ev) = d.memory_events {
        let since = f.events_since_start.unwrap_or_default();
        out.push(Line::styled(
            format!("{:<17}{:>7}   since start", "memory.events", "count"),
            theme.title,
        ));
        for (name, v, s) in [
            ("low", ev.low, since.low),
            ("high", ev.high, since.high),
            ("max", ev.max, since.max),
            ("oom", ev.oom, since.oom),
            ("oom_kill", ev.oom_kill, since.oom_kill),
        ] {
            // a key this kernel does not print shows "-", not 0
            let v = count_cell(v);
            let line = format!(
                "  {name:<15}{v:>7}   {}",
                match s {
                    Some(s) if s > 0 => format!("+{s}"),
                    Some(_) => "0".into(),
                    None => MISSING.into(),
                }
            );
            out.push(if s.is_some_and(|s| s > 0) {
                Line::styled(line, theme.warn)
            } else {
                Line::raw(line)
            });
        }
    }
    out.push(Line::styled("memory.stat", theme.title));
    for (name, v) in [
        ("anon", st.anon),
        ("file", st.file),
        ("kernel", st.kernel),
        ("shmem", st.shmem),
        ("sock", st.sock),
        ("file_dirty", st.file_dirty),
        ("file_writeback", st.file_writeback),
    ] {
        out.push(Line::raw(format!("  {name:<15}{:>10}", bytes_cell(v))));
    }
    if let Some(peak) = d.memory_peak {
        out.push(Line::raw(format!(
            "  {:<15}{:>10}",
            "peak",
            bytes_short(peak)
        )));
    }
    out
}

fn io(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let Some((g, r)) = app.selected_data() else {
        return Vec::new();
    };
    let f = app.inspection.as_ref().filter(|f| f.path == g.path);
    let devices = app
        .data
        .as_ref()
        .map(|d| d.refresh.devices.clone())
        .unwrap_or_default();
    let name_of = |dev| {
        devices
            .iter()
            .find(|d| d.dev == dev)
            .map_or_else(|| "?".to_owned(), |d| escape_str(&d.name).into_owned())
    };
    // io.stat's "(unknown)" device: no number, no name, its own row
    let stat_name = |dev: IoStatDevice| dev.dev().map_or_else(|| dev.to_string(), name_of);
    let mut out = vec![Line::styled(
        format!(
            "{:<10}{:>8} {:>11} {:>6} {:>11} {:>6}",
            "device", "MAJ:MIN", "read/s", "IOPS", "write/s", "IOPS"
        ),
        theme.title,
    )];
    let mut devs: Vec<_> = g
        .hot
        .io
        .as_ref()
        .map(|s| s.0.iter().map(|(d, _)| *d).collect())
        .unwrap_or_default();
    // a limit or target set on a disk the group has not used yet has no
    // io.stat line (the kernel lists a device there only after IO): it
    // gets its row all the same, so a write shows at once
    let limited = f.into_iter().flat_map(|f| {
        let max = f
            .detail
            .io_max
            .iter()
            .flat_map(|m| m.0.iter().map(|x| x.dev));
        let latency = f
            .detail
            .io_latency
            .iter()
            .flat_map(|l| l.0.iter().map(|x| x.0));
        max.chain(latency)
    });
    for dev in limited {
        if !devs.contains(&dev.into()) {
            devs.push(dev.into());
        }
    }
    let io_v1 = in_v1(app, f.map(|f| &f.detail), "blkio") == Some(true);
    if devs.is_empty() && in_v1(app, f.map(|f| &f.detail), "blkio") == Some(false) {
        out.push(Line::styled(not_in_v1("blkio"), theme.dim));
    } else if devs.is_empty() {
        out.push(Line::styled(
            match (g.hot.io.is_none(), on_v1(app, "blkio")) {
                (true, true) => "io is cgroup v1's blkio on this host (no io.stat in v2)",
                (true, false) => "io controller is off for this group (no io.stat)",
                (false, _) => "no IO yet",
            },
            theme.dim,
        ));
    }
    for dev in devs {
        let rt = r.io_by_dev.iter().find(|(d, _)| *d == dev).map(|(_, x)| *x);
        out.push(Line::raw(format!(
            "{:<10}{:>8} {:>11} {:>6} {:>11} {:>6}",
            fit(&stat_name(dev), 10),
            count_cell(dev.dev()),
            bytes_rate(rt.and_then(|x| x.rbps)),
            iops(rt.and_then(|x| x.riops)),
            bytes_rate(rt.and_then(|x| x.wbps)),
            iops(rt.and_then(|x| x.wiops)),
        )));
        if let (Some(f), Some(dev)) = (f, dev.dev()) {
            if let Some(m) = f.detail.io_max.as_ref().and_then(|m| m.get(dev)) {
                // on v1 the same four limits are blkio.throttle's files
                let file = if io_v1 { "blkio.throttle" } else { "io.max" };
                out.push(Line::styled(
                    format!(
                        "  {file}  rbps {}  wbps {}  riops {}  wiops {}",
                        limit_rate(m.rbps),
                        limit_rate(m.wbps),
                        limit_count(m.riops),
                        limit_count(m.wiops)
                    ),
                    theme.warn,
                ));
            }
            if let Some(t) = f.detail.io_latency.as_ref().and_then(|l| l.get(dev)) {
                out.push(Line::styled(
                    format!(
                        "  io.latency target {} ms",
                        crate::render::units::ms_short(t)
                    ),
                    theme.warn,
                ));
            }
        }
    }
    if let Some(f) = f {
        if let Some(w) = &f.detail.io_weight {
            let mut s = format!("io.weight default {}", w.default);
            for (d, v) in &w.overrides {
                s.push_str(&format!(", {} {v}", name_of(*d)));
            }
            out.push(Line::raw(s));
        }
        if let Some(w) = &f.detail.blkio_weight {
            let mut s = format!("blkio weight default {}", count_cell(w.default));
            for (d, v) in &w.devices {
                s.push_str(&format!(", {} {v}", name_of(*d)));
            }
            out.push(Line::raw(s));
        }
        for (name, text) in &f.io_cost {
            out.push(Line::raw(format!(
                "{}: {}",
                escape_str(name),
                escape_str(&text.replace('\n', " | "))
            )));
        }
    }
    out
}

/// The IO page's writeback part (issue 11, item 4): what the group's IO
/// limit does to buffered writes (`model::host::writeback::Story`), the group's
/// dirty and writeback pages draining, and the host's dirty limits, so an
/// operator sees why a write finished at memory speed while the disk
/// keeps writing at the limit. Nothing before the first full read.
fn writeback(app: &App, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    use crate::cgroupfs::Limit;
    use crate::model::host::writeback::{GroupDirty, Story};
    use crate::render::fit::wrap;
    use crate::render::writeback::{group_line, host_paragraphs, story_words};
    let Some((g, _)) = app.selected_data() else {
        return Vec::new();
    };
    let Some(f) = app.inspection.as_ref().filter(|f| f.path == g.path) else {
        return Vec::new();
    };
    let io_max = f.detail.io_max.iter().flat_map(|m| &m.0);
    let limited = io_max.clone().any(|m| {
        [m.rbps, m.wbps, m.riops, m.wiops]
            .iter()
            .any(|l| *l != Limit::Max)
    });
    let wbps = io_max
        .filter_map(|m| match m.wbps {
            Limit::Value(v) => Some(v),
            Limit::Max => None,
        })
        .min();
    let mode = &app.mount.mode;
    let story = Story::of(mode.on_v1("io"), mode.on_v1("memory"), limited);
    let dirty = f
        .detail
        .keyed
        .memory_stat
        .as_ref()
        .and_then(GroupDirty::from_memory_stat);
    let mut out = vec![Line::raw(""), Line::styled("writeback", theme.title)];
    if let Some(words) = story_words(story) {
        let style = if story.buffered_throttled() {
            theme.title
        } else {
            theme.warn
        };
        out.extend(
            wrap(words, width, "")
                .into_iter()
                .map(|l| Line::styled(l, style)),
        );
    }
    let group = group_line(dirty, app.dirty_drain(), wbps);
    out.extend(wrap(&group, width, "").into_iter().map(Line::raw));
    let host = app
        .data
        .as_ref()
        .and_then(|d| d.refresh.machine)
        .and_then(|m| m.writeback);
    if let Some(h) = host {
        out.push(Line::styled("host (vm.dirty_*):", theme.title));
        for p in host_paragraphs(&h) {
            out.extend(wrap(&p, width, "  ").into_iter().map(Line::raw));
        }
    }
    out
}

fn processes(app: &App, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let Some(f) = app.inspection.as_ref() else {
        return vec![Line::styled("reading…", theme.dim)];
    };
    // a container's processes: which container (escaped in the model)
    let mut out: Vec<Line<'static>> = crate::app::find::container_of(app, &f.path)
        .map(|c| Line::styled(fit(&format!("in {c}"), width), theme.title))
        .into_iter()
        .collect();
    out.push(Line::styled(
        fit(
            &format!(
                "{:>7} {:<9} S {:>5} {:>7} COMMAND",
                "PID", "USER", "CPU%", "RSS"
            ),
            width,
        ),
        theme.title,
    ));
    if f.processes.is_empty() {
        out.push(Line::styled("no processes in this group itself", theme.dim));
    }
    for (i, p) in f.processes.iter().enumerate() {
        let text = format!(
            "{:>7} {:<9} {} {:>5} {:>7} {}",
            p.pid,
            fit(&escape(&p.user), 9),
            escape_str(p.state.encode_utf8(&mut [0; 4])),
            pct(p.cpu_pct),
            bytes_short(p.rss_bytes),
            // escaped when read (ProcessInfo::cmdline)
            p.cmdline
        );
        let line = Line::raw(fit(&text, width));
        out.push(if app.pane == Pane::Processes && i == app.proc_cursor {
            line.style(theme.selected)
        } else {
            line
        });
    }
    out
}

fn raw(app: &App, theme: &Theme, width: usize) -> Vec<Line<'static>> {
    let Some(f) = app.inspection.as_ref() else {
        return vec![Line::styled("reading…", theme.dim)];
    };
    let mut out = Vec::new();
    // names, contents and error text as they are, made visible: a file
    // of a --root tree can hold anything
    let mut heading: Option<&str> = None;
    for (i, (name, v)) in f.detail.raw.iter().enumerate() {
        // a v1 hierarchy's files come as `label:file` (`source::read`),
        // after the primary's: each hierarchy under a heading of its name
        let v1 = i >= f.detail.raw_primary;
        let name = match name.split_once(':').filter(|_| v1) {
            Some((h, file)) => {
                if heading != Some(h) {
                    heading = Some(h);
                    out.push(Line::styled(
                        format!("-- v1 {} --", escape_str(h)),
                        theme.title,
                    ));
                }
                file
            }
            None => name.as_str(),
        };
        let name = escape_str(name);
        match v {
            Ok(text) if text.contains('\n') => {
                out.push(Line::styled(format!("{name}:"), theme.title));
                for l in text.lines() {
                    out.push(Line::raw(fit(&format!("  {}", escape_str(l)), width)));
                }
            }
            Ok(text) => out.push(Line::from(vec![
                Span::styled(format!("{name}: "), theme.title),
                Span::raw(fit(
                    &escape_str(text),
                    width.saturating_sub(name.chars().count() + 2),
                )),
            ])),
            Err(e) => out.push(Line::from(vec![
                Span::styled(format!("{name}: "), theme.title),
                Span::styled(escape_str(e).into_owned(), theme.dim),
            ])),
        }
    }
    out
}
