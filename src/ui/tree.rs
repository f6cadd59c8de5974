//! The tree pane: one line per visible row, only the rows on screen.

use super::format::{bytes_short, fit, pct, rate_short};
use super::Theme;
use crate::app::{App, SortKey};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Numeric columns in groups, in the order they are dropped when space
/// runs out (last dropped first): the name and CPU always stay. READ/s and
/// WRITE/s go together: a WRITE/s column alone would read as if reads were
/// not measured.
const COLUMNS: [&[(SortKey, usize)]; 4] = [
    &[(SortKey::Cpu, 6)],
    &[(SortKey::Memory, 7)],
    &[(SortKey::Pids, 5)],
    &[(SortKey::IoRead, 8), (SortKey::IoWrite, 8)],
];
const STATE_W: usize = 3;
const NAME_MIN: usize = 24;

/// The numeric columns that fit in `width`, in display order.
pub fn columns_for(width: usize) -> Vec<(SortKey, usize)> {
    let mut n = COLUMNS.len();
    while n > 1 {
        let used: usize = COLUMNS[..n]
            .iter()
            .flat_map(|g| g.iter())
            .map(|(_, w)| w + 1)
            .sum::<usize>()
            + STATE_W
            + 1;
        if width >= used + NAME_MIN {
            break;
        }
        n -= 1;
    }
    let mut cols: Vec<(SortKey, usize)> = COLUMNS[..n]
        .iter()
        .flat_map(|g| g.iter())
        .copied()
        .collect();
    // display order: CPU, MEM, READ, WRITE, PIDS
    let order = |k: SortKey| SortKey::ALL.iter().position(|x| *x == k).unwrap_or(0);
    cols.sort_by_key(|(k, _)| order(*k));
    cols
}

pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, theme: &Theme) {
    let width = usize::from(area.width);
    let cols = columns_for(width);
    let fixed: usize = cols.iter().map(|(_, w)| w + 1).sum::<usize>() + STATE_W + 1;
    let name_w = width.saturating_sub(fixed).max(8);
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
        format!("{}{}", SortKey::Name.title(), mark(SortKey::Name))
    );
    for (k, w) in &cols {
        head.push(' ');
        head.push_str(&format!(
            "{:>w$}",
            format!("{}{}", mark(*k), k.title()),
            w = *w
        ));
    }
    head.push_str(&format!(" {:<STATE_W$}", "ST"));
    lines.push(Line::styled(fit(&head, width), theme.column_header));

    let rows_h = usize::from(area.height.saturating_sub(1));
    let start = app.scroll.min(app.rows.len());
    let end = (start + rows_h).min(app.rows.len());
    for i in start..end {
        let row = &app.rows[i];
        let Some((g, r)) = app.row_data(i) else {
            continue;
        };
        let mut name = String::new();
        for &g in &row.guides {
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
        let label = if row.depth == 0 {
            g.path.to_string()
        } else {
            g.path.name_display().into_owned()
        };
        let prefix_len = name.chars().count();
        let mut spans = vec![Span::raw(name)];
        let label = fit(&label, name_w.saturating_sub(prefix_len));
        let pad = name_w.saturating_sub(prefix_len + super::format::width(&label));
        spans.push(Span::styled(
            label,
            if row.matched {
                theme.matched
            } else {
                Style::new()
            },
        ));
        let mut rest = " ".repeat(pad);
        for (k, w) in &cols {
            let v = match k {
                SortKey::Cpu => pct(r.cpu_pct.map(|p| app.cpu_shown(p))),
                SortKey::Memory => g.hot.memory_current.map_or_else(|| "-".into(), bytes_short),
                SortKey::IoRead => rate_short(r.io.map(|x| x.rbps)),
                SortKey::IoWrite => rate_short(r.io.map(|x| x.wbps)),
                SortKey::Pids => g.pids().map_or_else(|| "-".into(), |p| p.to_string()),
                SortKey::Name => String::new(),
            };
            rest.push_str(&format!(" {v:>w$}", w = *w));
        }
        let ev = g.hot.events.unwrap_or_default();
        let st = super::format::state_marks(g, app.row_throttled(i));
        rest.push(' ');
        spans.push(Span::raw(rest));
        spans.push(Span::styled(
            st,
            if ev.is_frozen() {
                theme.frozen
            } else {
                Style::new()
            },
        ));
        let mut line = Line::from(spans);
        if i == app.cursor {
            // with the process list focused, the tree's cursor only marks
            // whose processes they are
            line = line.style(if app.pane == crate::app::Pane::Tree {
                theme.selected
            } else {
                theme.title
            });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_drop_in_order() {
        let all: Vec<SortKey> = columns_for(120).iter().map(|c| c.0).collect();
        assert_eq!(
            all,
            [
                SortKey::Cpu,
                SortKey::Memory,
                SortKey::IoRead,
                SortKey::IoWrite,
                SortKey::Pids
            ]
        );
        // READ/s and WRITE/s go together: one without the other misleads
        let narrow: Vec<SortKey> = columns_for(60).iter().map(|c| c.0).collect();
        assert_eq!(narrow, [SortKey::Cpu, SortKey::Memory, SortKey::Pids]);
        let tiny: Vec<SortKey> = columns_for(20).iter().map(|c| c.0).collect();
        assert_eq!(tiny, [SortKey::Cpu]);
    }
}
