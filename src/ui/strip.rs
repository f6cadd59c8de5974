//! The detail strip: on a screen too short for the detail pane below the
//! tree (80x24, see the breakpoints in `ui`), three lines name the
//! selected group and give its key figures against their limits; `Enter`,
//! `z` or `Tab` open the detail in full.

use super::Theme;
use crate::app::keymap::{self, Action, Scope};
use crate::app::App;
use crate::cgroupfs::Limit;
use crate::render::fit::{self, fit_path, fit_pieces};
use crate::render::marks::StateMarks;
use crate::render::severity;
use crate::render::units::{bytes_short, count_short, cpus_short, pct, rate_short, MISSING};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let width = usize::from(area.width);
    let data = app.row_data(app.cursor);
    // the rule: the group's path (its end kept) and the key that opens
    // the detail, from the keymap
    let open = format!(
        " {}: detail ",
        keymap::keys_text(Scope::Main, Action::OpenDetail)
    );
    let path = data.map_or_else(String::new, |(g, _)| g.path.to_string());
    let start = app.start.to_string();
    let shown = fit_path(&path, width.saturating_sub(fit::width(&open) + 4), &start);
    // the group's own name whole before the key's hint: a long name cut
    // in its middle reads as another group's (the footer and the help
    // name Enter too)
    let own = path.rsplit('/').next().unwrap_or_default();
    let whole = |p: &str| p == path || p.ends_with(&format!("/{own}"));
    let (shown, open) = if whole(&shown) {
        (shown, open)
    } else {
        let wide = fit_path(&path, width.saturating_sub(4), &start);
        if whole(&wide) {
            (wide, String::new())
        } else {
            (shown, open)
        }
    };
    let name = format!(" {shown} ");
    let fill = width.saturating_sub(1 + fit::width(&name) + fit::width(&open));
    let rule = Line::from(vec![
        Span::styled("─", theme.dim),
        Span::styled(name, theme.title),
        Span::styled("─".repeat(fill), theme.dim),
        Span::styled(open, theme.dim),
    ]);
    let Some((g, r)) = data else {
        f.render_widget(Paragraph::new(rule), area);
        return;
    };
    let limits = super::limits_of(app, g);
    let label = |s: &'static str| (s.to_owned(), theme.title);
    let plain = |s: String| (s, Style::new());
    // CPU against the cpu.max that throttles first
    let cpu = r.cpu_pct.map(|p| app.cpu_shown(p));
    let quota = limits.cpu.and_then(|m| m.cpus());
    let mut l1 = vec![
        label("CPU "),
        (
            format!("{}%", pct(cpu)),
            theme.severity(severity::cpu(r.cpu_pct, limits.cpu)),
        ),
        plain(match quota {
            Some(c) => format!(" of {} CPUs  ", cpus_short(c)),
            None => " no quota  ".to_owned(),
        }),
        label("MEM "),
        (
            g.hot
                .memory_current
                .map_or_else(|| MISSING.to_owned(), bytes_short),
            theme.severity(severity::memory(g.hot.memory_current, limits.memory)),
        ),
        plain(match limits.memory {
            Some(m) => format!(" of {}  ", bytes_short(m)),
            None => " no limit  ".to_owned(),
        }),
        // as the tree's PIDS column: pids.current, else cgroup.procs
        // (a hybrid host's cgroup2 has no pids controller)
        label("PIDS "),
        (
            g.pids()
                .map_or_else(|| MISSING.to_owned(), |n| n.to_string()),
            theme.severity(severity::pids(g.hot.pids_current, limits.pids)),
        ),
    ];
    if let Some(Limit::Value(m)) = limits.pids {
        l1.push(plain(format!(" of {}", count_short(Some(m)))));
    }
    let io = r.io.as_ref();
    let st = StateMarks::of(g, app.row_throttled(app.cursor))
        .with_event(app.event_marks.contains(&g.path));
    let marks = st.to_string();
    let marks = marks.trim();
    let mut l2 = vec![
        label("IO "),
        plain(format!(
            "read {}/s write {}/s  ",
            rate_short(io.and_then(|i| i.rbps)),
            rate_short(io.and_then(|i| i.wbps)),
        )),
        label("PSI"),
    ];
    // pressure (some avg10): each file's where the group's full read has
    // it, else the highest of the three from the walk
    let psi_pct = |v: Option<f64>| {
        (
            v.map_or_else(|| MISSING.to_owned(), |v| format!("{v:.1}%")),
            theme.severity(severity::pressure(v)),
        )
    };
    if let Some(f) = app.inspection.as_ref().filter(|f| f.path == g.path) {
        let d = &f.detail;
        for (name, p) in [
            ("cpu", d.cpu_pressure),
            ("mem", d.memory_pressure),
            ("io", d.io_pressure),
        ] {
            l2.push(plain(format!(" {name} ")));
            l2.push(psi_pct(p.map(|p| p.some.avg10)));
        }
    } else {
        l2.push(plain(" ".to_owned()));
        l2.push(psi_pct(g.hot.psi_some_avg10.map(|v| f64::from(v) / 100.0)));
    }
    if !marks.is_empty() {
        l2.push(plain(format!("  state {marks}")));
    }
    let line = |pieces: Vec<(String, Style)>| {
        Line::from(
            fit_pieces(&pieces, width)
                .into_iter()
                .map(|(t, s)| Span::styled(t, s))
                .collect::<Vec<_>>(),
        )
    };
    f.render_widget(Paragraph::new(vec![rule, line(l1), line(l2)]), area);
}
