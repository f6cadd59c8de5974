//! The events screen (`!`), drawn over the whole screen: one row per
//! event, newest first (time UTC, age, group, what happened), and the
//! selected event's detail (the file and key it came from) at the foot.
//! The words are `render::events`'; the keys on the bottom border come
//! from the keymap.

use super::Theme;
use crate::app::dialog::events::event_at;
use crate::app::keymap::{self, Scope};
use crate::app::App;
use crate::model::time::events::EventList;
use crate::model::write::errno;
use crate::render::events::{age, clock_utc, source, what, window};
use crate::render::fit::{fit, fit_path, pad, width};
use crate::source::events::KmsgState;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

pub fn render(f: &mut Frame<'_>, area: Rect, app: &App, cursor: usize, theme: &Theme) {
    f.render_widget(Clear, area);
    let inner = usize::from(area.width.saturating_sub(2)).max(1);
    // a cut path keeps its first component below the start group
    let from = app.start.to_string();
    let n = app.events.len();
    let title = if app.events.dropped > 0 {
        format!(
            " events: {n}, {} kept ({} dropped, the busiest owner's first) ",
            EventList::CAP,
            app.events.dropped
        )
    } else {
        format!(" events: {n} (the newest {} are kept) ", EventList::CAP)
    };
    let mut lines: Vec<Line<'_>> = Vec::new();
    if let Some(w) = &app.event_watch {
        if let Some(why) = w.stopped {
            lines.push(Line::styled(
                fit(
                    &format!("events: stopped ({why}); the tree is still read at every refresh"),
                    inner,
                ),
                theme.warn,
            ));
        }
        if w.v1_oom.over_cap > 0 || w.v1_oom.failed > 0 {
            let err = w.v1_oom.last_error.map_or("", errno::name);
            lines.push(Line::styled(
                fit(
                    &format!(
                        "v1 memory: OOM kills not watched in {} groups (past the cap of {}: {} of root's{}, {} in users' subtrees), {} registrations failed {err}",
                        w.v1_oom.over_cap,
                        crate::source::events::V1_OOM_MAX,
                        w.v1_oom.over_root,
                        root_names(&w.v1_oom),
                        w.v1_oom.over_user,
                        w.v1_oom.failed,
                    ),
                    inner,
                ),
                theme.warn,
            ));
        }
        if let KmsgState::Unreadable(e) = w.kmsg {
            lines.push(Line::styled(
                fit(
                    &format!(
                        "kernel log not readable ({}): an OOM kill comes without its task",
                        errno::name(e)
                    ),
                    inner,
                ),
                theme.dim,
            ));
        }
        if let Some(why) = &w.no_accounts {
            lines.push(Line::styled(
                fit(&format!("events: {why}"), inner),
                theme.warn,
            ));
        }
        if w.unwatched > 0 {
            lines.push(Line::styled(
                fit(
                    &format!(
                        "{} groups not watched: out of inotify watches (fs.inotify.max_user_watches)",
                        w.unwatched
                    ),
                    inner,
                ),
                theme.warn,
            ));
        }
    }
    // the foot: the selected event in full, and where it came from
    let rows_h = usize::from(area.height.saturating_sub(2))
        .saturating_sub(lines.len() + 3)
        .max(1);
    let start = cursor.saturating_sub(rows_h - 1);
    // newest first, in one walk (not a look-up a row)
    let shown: Vec<_> = app
        .events
        .iter()
        .rev()
        .enumerate()
        .skip(start)
        .take(rows_h)
        .collect();
    // the group column as wide as the paths on screen, within a third,
    // or half where a group's own name (`…/` before it) needs it
    let own = shown
        .iter()
        .map(|(_, e)| 2 + width(&e.path.name_display()))
        .max()
        .unwrap_or(0)
        .min(inner / 2);
    let group_w = shown
        .iter()
        .map(|(_, e)| width(&e.path.to_string()))
        .max()
        .unwrap_or(5)
        .clamp(5, (inner / 3).max(own).max(5));
    let head = format!("{:<8} {:>4} {} WHAT", "UTC", "AGE", pad("GROUP", group_w));
    lines.push(Line::styled(fit(&head, inner), theme.column_header));
    let now = app.now();
    // the memory controller on a v1 hierarchy: its kills are counted in
    // memory.oom_control against memory.limit_in_bytes
    let v1_memory = app.event_watch.as_ref().is_some_and(|w| w.v1_oom.on);
    if n == 0 {
        // one line a hierarchy: a narrow terminal must not cut the v1 one
        let watched = app
            .event_watch
            .as_ref()
            .map_or_else(Vec::new, watched_words);
        let head = if watched.is_empty() {
            "no events yet"
        } else {
            "no events yet; watched:"
        };
        lines.push(Line::styled(fit(head, inner), theme.dim));
        for w in watched {
            lines.push(Line::styled(fit(&format!("  {w}"), inner), theme.dim));
        }
    }
    for (i, e) in shown {
        let text = format!(
            "{:<8} {:>4} {} {}",
            clock_utc(e.unix_s),
            age(now.saturating_sub(e.at)),
            // whole components dropped from the left: the group's own
            // name stays (`…/session-1.scope`)
            pad(&fit_path(&e.path.to_string(), group_w, &from), group_w),
            what(&e.kind, v1_memory)
        );
        let text = fit(&text, inner);
        lines.push(if i == cursor {
            let padding = inner.saturating_sub(width(&text));
            Line::styled(format!("{text}{}", " ".repeat(padding)), theme.selected)
        } else if e.kind.is_oom_kill() {
            Line::styled(text, theme.error)
        } else {
            Line::raw(text)
        });
    }
    let used = lines.len();
    let foot_at = usize::from(area.height.saturating_sub(2)).saturating_sub(2);
    for _ in used..foot_at {
        lines.push(Line::raw(""));
    }
    if let Some(e) = event_at(app, cursor) {
        lines.push(Line::from(vec![
            Span::styled("what: ", theme.title),
            Span::raw(fit(&what(&e.kind, v1_memory), inner.saturating_sub(6))),
        ]));
        lines.push(Line::from(vec![
            Span::styled("from: ", theme.title),
            Span::raw({
                // the path shortened from the left, keeping its own
                // name; the window of an event found late after it
                let of = format!("{} of ", source(&e.kind, v1_memory));
                let tail = window(e).map(|w| format!(", {w}")).unwrap_or_default();
                let room = inner.saturating_sub(6);
                let path = fit_path(
                    &e.path.to_string(),
                    room.saturating_sub(width(&of) + width(&tail)),
                    &from,
                );
                fit(&format!("{of}{path}{tail}"), room)
            }),
        ]));
    }
    let keys = keymap::footer_text(Scope::Events);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme.title))
        .title_bottom(Line::styled(format!(" {keys} "), theme.dim));
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// What the watcher watches, on which hierarchy, in words: one entry a
/// hierarchy.
/// Root's first groups past the v1 OOM cap, by path: ` (/a, /b, ...)`.
fn root_names(s: &crate::source::events::V1OomStatus) -> String {
    if s.over_root_first.is_empty() {
        return String::new();
    }
    let names: Vec<String> = s
        .over_root_first
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let more = if s.over_root > names.len() {
        ", ..."
    } else {
        ""
    };
    format!(" ({}{more})", names.join(", "))
}

pub fn watched_words(w: &crate::source::events::WatchStatus) -> Vec<String> {
    let mut parts = Vec::new();
    if w.cgroup2 && w.v1_oom.on {
        // hybrid: memory is a v1 controller here, so cgroup2's groups have
        // no memory.events to watch (nor pids.events where pids is on v1)
        parts.push(
            "cgroup2: cgroup.events of each group; memory, pids events where it has them"
                .to_owned(),
        );
    } else if w.cgroup2 {
        parts.push(
            "cgroup2: cgroup.events, memory.events, memory.swap.events and pids.events of every group"
                .to_owned(),
        );
    } else {
        parts.push("groups made and removed".to_owned());
    }
    if w.v1_oom.on {
        parts.push(format!(
            "v1 memory: OOM kills of {} groups (memory.oom_control)",
            w.v1_oom.registered
        ));
    }
    parts
}
