//! Starting from a process (htop users do): `cgtop --pid PID` opens on
//! the group that holds it, and the find-a-process key (`#`) takes a PID
//! or a command name and goes to the group that holds it; a name searches
//! every process (its /proc/PID/comm and command line, read by the
//! collector: `source::procs::find_processes`) and Enter goes on to the
//! next match. Either way the group's path is unfolded, the detail shows
//! its process page with the process highlighted, and where the group is
//! a container (its identity) the status line says which.
//!
//! Must not depend on: `ui`, the terminal, the filesystem.

use super::keymap::Action;
use super::text_input::{Input, TextInput, Typed};
use super::{App, DetailPage, Effect, Level, Mode, Pane, Zoom};
use crate::model::identity::Identity;
use crate::model::tree::text::escape_str;
use crate::model::GroupPath;
use crate::source::collector::Command;
use crate::source::procs::{Found, ProcessPlace};

/// The find-a-process prompt: what is typed, and what the last answer
/// said (a match "2 of 5: ...", or why nothing matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindProcess {
    pub text: TextInput,
    pub note: Option<String>,
}

/// What the app keeps of the process search and of `--pid`.
#[derive(Debug, Clone, Default)]
pub struct Finding {
    /// The last answer, and which of its matches is shown.
    pub found: Option<(Found, usize)>,
    /// A search sent to the collector and not answered yet.
    pub asked: Option<String>,
    /// The process to highlight on the process page (the cursor goes
    /// to it when the group's process list comes).
    pub highlight: Option<u32>,
    /// `--pid`'s process, until the group it is in was shown and said.
    pub start: Option<ProcessPlace>,
    /// Refreshes since `start`'s group was first shown.
    pub start_refreshes: u8,
}

impl App {
    /// Opens the prompt, holding the last search's text (Enter then goes
    /// on to its next match).
    pub(super) fn start_find(&mut self) {
        let last = self
            .finding
            .found
            .as_ref()
            .map_or("", |(f, _)| f.query.as_str());
        self.mode = Mode::FindProcess(FindProcess {
            text: TextInput::with_text(TextInput::LINE, last),
            note: None,
        });
    }

    /// `--pid`: the group that holds the process is selected before the
    /// first refresh (the first screen's fold rule keeps the path to the
    /// selection open), its process page shown, the process highlighted.
    pub fn start_at_process(&mut self, place: ProcessPlace) {
        self.selected = Some(place.group.clone());
        self.finding.highlight = Some(place.pid);
        self.page = DetailPage::Processes;
        self.pane = Pane::Processes;
        self.finding.start = Some(place);
    }
}

/// A key in the prompt: Enter searches (or, the text unchanged, goes to
/// the next match), Esc closes it (the selection stays).
pub(super) fn on_key(app: &mut App, action: Option<Action>, ev: Input<'_>, fx: &mut Vec<Effect>) {
    let Mode::FindProcess(p) = &mut app.mode else {
        return;
    };
    match action {
        Some(Action::Cancel) => {
            app.mode = Mode::Normal;
            app.finding.asked = None;
        }
        Some(Action::Accept) => {
            let text = p.text.as_str().trim().to_owned();
            if text.is_empty() {
                p.note = Some("type a PID or a command name".into());
                return;
            }
            let same = app
                .finding
                .found
                .as_ref()
                .is_some_and(|(f, _)| f.query.trim() == text && !f.matches.is_empty());
            if same {
                if let Some((f, at)) = &mut app.finding.found {
                    *at = (*at + 1) % f.matches.len();
                }
                show_match(app, fx);
            } else {
                p.note = Some("looking…".into());
                app.finding.asked = Some(text.clone());
                fx.push(Effect::Collector(Command::FindProcess(text)));
            }
        }
        _ => {
            if let Typed::Refused(e) | Typed::Cut(e) = p.text.on_input(ev) {
                p.note = Some(e.to_string());
            }
        }
    }
}

/// The collector's answer to a search: the first match shown, or why
/// there is none, in plain words. An answer to a search no longer asked
/// for (the prompt closed, another text sent) is dropped.
pub(super) fn on_found(app: &mut App, found: Found, fx: &mut Vec<Effect>) {
    if app.finding.asked.as_deref() != Some(found.query.as_str()) {
        return;
    }
    app.finding.asked = None;
    let q = escape_str(found.query.trim()).into_owned();
    let miss = match (&found.refusal, found.matches.is_empty()) {
        (Some(why), _) => Some(format!("PID {q}: {why}")),
        (None, true) => Some(format!(
            "no process has \"{q}\" in its name or command line (in this view)"
        )),
        (None, false) => None,
    };
    app.finding.found = Some((found, 0));
    match miss {
        Some(m) => {
            if let Mode::FindProcess(p) = &mut app.mode {
                p.note = Some(m);
            } else {
                app.set_status(Level::Warn, m);
            }
        }
        None => show_match(app, fx),
    }
}

/// Goes to the match the search stands on, and says which it is.
fn show_match(app: &mut App, fx: &mut Vec<Effect>) {
    let Some((f, at)) = &app.finding.found else {
        return;
    };
    let Some(place) = f.matches.get(*at).cloned() else {
        return;
    };
    let n = f.matches.len();
    let at = *at;
    go_to(app, &place, fx);
    let words = format!(
        "{} of {n}: PID {} {} in {}",
        at + 1,
        place.pid,
        place.command,
        where_words(app, &place.group)
    );
    match &mut app.mode {
        Mode::FindProcess(p) => {
            p.note = Some(if n > 1 {
                format!("{words} (Enter: the next)")
            } else {
                words
            });
        }
        _ => app.set_status(Level::Info, words),
    }
}

/// The group, after the container or pod it is, if it is one (first:
/// a long path is what a narrow status line cuts): "docker container
/// web-1 (046c7a5b3d2e), /system.slice/docker-….scope".
fn where_words(app: &App, group: &GroupPath) -> String {
    match container_of(app, group) {
        Some(c) => format!("{c}, {group}"),
        None => group.to_string(),
    }
}

/// The container or pod the group is or is in, in words: the nearest of
/// the group and its ancestors whose identity (the readers', else its
/// name's) says a runtime owns it (crun runs a podman container's
/// process in `libpod-<id>.scope/container`).
pub fn container_of(app: &App, group: &GroupPath) -> Option<String> {
    owning_identity(app, group).map(|(id, _)| crate::model::write::owner::shown(&id))
}

/// The identity of [`container_of`], and whether the readers gave it
/// (the name's alone has no container name: docker's id only).
fn owning_identity(app: &App, group: &GroupPath) -> Option<(Identity, bool)> {
    group.ancestors().find_map(|g| {
        let sample = app
            .data
            .as_ref()
            .and_then(|d| d.refresh.snapshot.find(&g))
            .and_then(|s| s.identity.as_deref().cloned());
        let read = sample.is_some();
        let id = sample.or_else(|| Identity::of_name(&g))?;
        crate::model::write::owner::Owner::of(&id)?;
        Some((id, read))
    })
}

/// Selects `place`'s group: its ancestors unfolded (a filter that hides
/// it cleared), the process page shown, the process highlighted.
fn go_to(app: &mut App, place: &ProcessPlace, fx: &mut Vec<Effect>) {
    let before = app.selected.clone();
    for a in place.group.ancestors().skip(1) {
        app.first_screen.touched(&a);
        app.collapsed.remove(&a);
    }
    let shown_now = |app: &App| {
        app.data.as_ref().is_some_and(|d| {
            app.rows
                .iter()
                .any(|r| d.tree.nodes[r.node].path == place.group)
        })
    };
    app.selected = Some(place.group.clone());
    app.rebuild_rows();
    if !shown_now(app) && !app.filter.is_empty() {
        app.clear_filter();
        app.selected = Some(place.group.clone());
        app.rebuild_rows();
    }
    app.selection_changed(before.as_ref(), fx);
    app.finding.highlight = Some(place.pid);
    if app.page != DetailPage::Processes {
        app.page = DetailPage::Processes;
        app.detail_scroll = 0;
    }
    if app.pane != Pane::Processes {
        app.pane = Pane::Processes;
        // the strip has no room for the process list (as Tab does)
        if app.tree_rows.strip && app.zoom == Zoom::Split {
            app.zoom = Zoom::Detail;
        }
        app.set_tree_height();
    }
    highlight(app);
}

/// The process list of the selected group came: the cursor goes to the
/// process searched for, once.
pub(super) fn highlight(app: &mut App) {
    let Some(pid) = app.finding.highlight else {
        return;
    };
    let Some(i) = app
        .inspection
        .as_ref()
        .filter(|f| Some(&f.path) == app.selected.as_ref())
        .and_then(|f| f.processes.iter().position(|p| p.pid == pid))
    else {
        return;
    };
    app.proc_cursor = i;
    app.finding.highlight = None;
}

/// After a refresh: `--pid`'s landing is said once its group is shown
/// (with the container it is in, from the identity of that refresh);
/// said again when the readers' identity comes (after the first frame:
/// the container's name), at most [`START_REFRESHES`] refreshes later.
pub(super) fn after_refresh(app: &mut App) {
    let Some(place) = app.finding.start.clone() else {
        return;
    };
    if app.selected.as_ref() != Some(&place.group) {
        return;
    }
    let first = app.finding.start_refreshes == 0;
    app.finding.start_refreshes = app.finding.start_refreshes.saturating_add(1);
    // the strip has no room for the process list: the detail opens in
    // full, as Tab does (Tab again: the tree)
    if first && app.pane == Pane::Processes && app.tree_rows.strip && app.zoom == Zoom::Split {
        app.zoom = Zoom::Detail;
        app.set_tree_height();
    }
    // a group named by no runtime's pattern (`ctr`'s /default/NAME) is
    // known only from the readers: waited for as well
    let read = owning_identity(app, &place.group).is_some_and(|(_, read)| read);
    if first || read {
        let text = format!(
            "PID {} {}: in {}",
            place.pid,
            place.command,
            where_words(app, &place.group)
        );
        app.set_status(Level::Info, text);
    }
    if read || app.finding.start_refreshes >= START_REFRESHES {
        app.finding.start = None;
        app.finding.start_refreshes = 0;
    }
}

/// How many refreshes `--pid`'s status waits for the readers' identity.
const START_REFRESHES: u8 = 5;
