//! The tree pane: one line per visible row, only the rows on screen.

use super::Theme;
use crate::app::{App, SortKey};
use crate::model::time::timeline::Figure;
use crate::model::{GroupRates, GroupSample};
use crate::render::columns::{self, Column, NAME_TITLE, STATE_TITLE};
use crate::render::fit::{self, fit};
use crate::render::identity::Name;
use crate::render::marks::{Held, StateMarks};
use crate::render::severity::{self, Limits, Severity};
use crate::render::spark;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// How close a figure cell is to its limit (`render::severity`); `None`
/// for a column without one (IO, swap, throttling) or a limit that is not
/// known.
fn level(c: Column, g: &GroupSample, r: &GroupRates, limits: &Limits) -> Option<Severity> {
    match c {
        // CPU % of one core, whatever the `%` key shows
        Column::Cpu => severity::cpu(r.cpu_pct, limits.cpu),
        Column::Memory | Column::MemPct => severity::memory(g.hot.memory_current, limits.memory),
        Column::Pids => severity::pids(g.hot.pids_current, limits.pids),
        // hundredths of a percent, as the kernel prints it
        Column::Psi => severity::pressure(g.hot.psi_some_avg10.map(|v| f64::from(v) / 100.0)),
        Column::Throttled | Column::Swap | Column::IoRead | Column::IoWrite => None,
    }
}

/// Whether the sparkline column (`s`) is drawn at this width, and the
/// figure columns beside it (`render::columns::spark_fits`).
pub fn spark_fits(app: &App, width: usize) -> (bool, Vec<Column>) {
    columns::spark_fits(&app.columns, app.spark_column, width)
}

/// A group's CPU % of its last refreshes, up to the moment shown.
fn spark_series(app: &App, g: &GroupSample) -> Vec<Option<f64>> {
    // in the past: the refreshes up to the moment (none left of a moment
    // older than the last minute: blank, not the present's)
    let until = app.past.as_ref().map(|p| p.moment.stamp.at);
    app.timeline
        .series(&g.path, 0)
        .into_iter()
        .filter(|(st, _)| until.is_none_or(|u| st.at <= u))
        .map(|(_, e)| e.get(Figure::Cpu).map(|p| app.cpu_shown(p)))
        .collect()
}

/// The fewest cells of a unit's description worth showing beside its
/// name.
const EXTRA_MIN: usize = 8;

pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let width = usize::from(area.width);
    let (spark_on, cols) = spark_fits(app, width);
    let spark_w = if spark_on { spark::COLUMN_WIDTH + 1 } else { 0 };
    let name_w = width
        .saturating_sub(columns::fixed_width(&cols) + spark_w)
        .max(8);
    // as wide as the widest name, not as the pane: the figures sit beside
    // the names they belong to (the pane itself is sized by `ui::areas`)
    let name_w = name_w.min(app.name_width.max(columns::NAME_MIN) + 1);
    let mut lines = Vec::with_capacity(usize::from(area.height));
    // column header, with the sort mark
    let mark = |k: SortKey| -> &str {
        if app.sort == k {
            if app.sort_desc {
                "▼"
            } else {
                "▲"
            }
        } else {
            ""
        }
    };
    let mut head = format!(
        "{:<name_w$}",
        format!("{NAME_TITLE}{}", mark(SortKey::Name))
    );
    head.push_str(&columns::header_cells(&cols, |c| mark(SortKey::of(c))));
    if spark_on {
        head.push_str(&format!(
            " {:<w$}",
            spark::COLUMN_TITLE,
            w = spark::COLUMN_WIDTH
        ));
    }
    head.push_str(&format!(" {STATE_TITLE:<w$}", w = StateMarks::WIDTH));
    lines.push(Line::styled(fit(&head, width), theme.column_header));

    let rows_h = usize::from(area.height.saturating_sub(1));
    // a whole path keeps its first component below the start group
    let from = app.start.to_string();
    let start = app.scroll.min(app.rows.len());
    let end = (start + rows_h).min(app.rows.len());
    for i in start..end {
        let row = &app.rows[i];
        let Some((g, r)) = app.row_data(i) else {
            continue;
        };
        // a row deeper than the name column leaves out its leftmost
        // guides (`columns::indent_cut`)
        let branch = if row.depth > 0 { 2 } else { 0 };
        let (skip, mut name) =
            columns::indent_cut(row.guides.len(), 2, branch + 1, row.depth, name_w);
        for &g in row.guides.iter().skip(skip) {
            name.push_str(if g { "│ " } else { "  " });
        }
        if row.depth > 0 {
            name.push_str(if row.last_child { "└─" } else { "├─" });
        }
        name.push_str(match (row.has_children, row.collapsed) {
            (true, true) => "▸",
            (true, false) => "▾",
            (false, _) => {
                if row.depth > 0 {
                    "─"
                } else {
                    " "
                }
            }
        });
        // who the group is where known (`w`: the kernel's names)
        // (the flat list: every row by its whole path)
        let shown = Name::of(g, row.depth, app.identities && !app.flat);
        let prefix_len = name.chars().count();
        let mut spans = vec![Span::raw(name)];
        // the flat list's whole paths and the top row's path are cut from
        // the left, keeping the group's own name: `…/newc-18771-1`; an
        // identity drops whole components (`web-1 · 046c7a5b3d2e`)
        let room = name_w.saturating_sub(prefix_len);
        let label = shown.fit(room, (app.flat || row.depth == 0).then_some(from.as_str()));
        let mut used = prefix_len + fit::width(&label);
        spans.push(Span::styled(
            label,
            if row.matched {
                theme.matched
            } else {
                Style::new()
            },
        ));
        // a unit's description in what the column has left (the column is
        // not widened for it)
        if let Some(extra) = shown.extra() {
            let left = name_w.saturating_sub(used + 1);
            if left >= EXTRA_MIN + 3 {
                let text = format!(" · {}", fit(extra, left - 3));
                used += fit::width(&text);
                spans.push(Span::styled(text, theme.dim));
            }
        }
        spans.push(Span::raw(" ".repeat(name_w.saturating_sub(used))));
        // each figure in the style of how close it is to its limit
        let limits = super::limits_of(app, g);
        for &c in &cols {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                format!("{:>w$}", c.cell(g, r, |p| app.cpu_shown(p)), w = c.width()),
                theme.severity(level(c, g, r, &limits)),
            ));
        }
        if spark_on {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(
                spark::cpu_cell(&spark_series(app, g)),
                theme.dim,
            ));
        }
        let st =
            StateMarks::of(g, app.row_throttled(i)).with_event(app.event_marks.contains(&g.path));
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            st.to_string(),
            if st.held == Held::Frozen {
                theme.frozen
            } else {
                Style::new()
            },
        ));
        // to the pane's edge, so that the cursor bar spans the row
        let used = name_w + columns::fixed_width(&cols) + spark_w;
        spans.push(Span::raw(" ".repeat(width.saturating_sub(used))));
        let mut line = Line::from(spans);
        if i == app.cursor {
            if app.pane == crate::app::Pane::Tree {
                // one style across the cursor bar: no cell's own colour
                // (a hot figure, a match) shows through it
                for s in &mut line.spans {
                    s.style = theme.selected;
                }
            } else {
                // with the process list focused, the tree's cursor only
                // marks whose processes they are
                line = line.style(theme.title);
            }
        }
        lines.push(line);
    }
    if app.rows.is_empty() {
        let msg = if app.data.is_none() {
            "reading the cgroup tree…"
        } else if !app.filter.is_empty() {
            "no group matches the filter (Esc clears it)"
        } else {
            "no groups"
        };
        lines.push(Line::styled(msg, theme.dim));
    }
    f.render_widget(Paragraph::new(lines), area);
}
