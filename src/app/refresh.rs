//! A collector refresh: the watchdog, the timeline, a past moment held,
//! the refresh put on screen, the vanished group welcomed back, and the
//! watcher's events.

use super::{find, first_screen, past, writes};
use super::{App, Data, Effect, Level, Mode, Vanished, EVENT_MARK_FOR};
use crate::model::time::events::Event;
use crate::model::tree::Tree;
use crate::model::write::history::{Dropped, Seen};
use crate::model::GroupPath;
use crate::source::collector::{PartialRefresh, Refresh};

pub(super) fn on_refresh(app: &mut App, mut r: Refresh, fx: &mut Vec<Effect>) {
    // the watchdog: a watcher that takes no group list for this many
    // refreshes is stalled (its events are not coming); the tree is the
    // collector's and goes on either way
    if let Some(w) = app.event_watch.as_mut() {
        app.event_watch_unanswered = app.event_watch_unanswered.saturating_add(1);
        if app.event_watch_unanswered > crate::source::events::WATCHDOG_REFRESHES
            && w.stopped.is_none()
        {
            w.stopped = Some(crate::source::events::Stopped::Silent(
                app.event_watch_unanswered,
            ));
        }
    }
    if let Some(p) = r.protected.take() {
        app.protected = p;
    }
    remember(app, &r);
    if let Some(f) = &r.inspection {
        app.kept.keep(r.snapshot.at, f);
    }
    if let Some(m) = r.machine {
        app.kept.keep_machine(r.snapshot.at, m);
    }
    if app.in_past() {
        // into the timeline, not onto the screen: shown on return
        past::hold(app, r);
        return;
    }
    show_refresh(app, r, fx);
}

/// Puts the first look on screen (before the first refresh, which
/// replaces it): the tree of the groups the first screen shows, its rows
/// and the cursor. Nothing of it is kept (no timeline, no undo history
/// checked against it, no inspection asked for); after a refresh it is
/// too late and is dropped.
pub(super) fn on_partial(app: &mut App, p: PartialRefresh) {
    if app.data.is_some() || app.in_past() {
        return;
    }
    let tree = Tree::build(&p.refresh.snapshot.groups);
    app.data = Some(Data {
        refresh: p.refresh,
        tree,
    });
    first_screen::show_partial(app, p.unlisted);
    app.rebuild_rows();
}

/// Puts a refresh on screen: the tree, the rows, the selection.
pub(super) fn show_refresh(app: &mut App, r: Refresh, fx: &mut Vec<Effect>) {
    let first = app.data.is_none() || app.first_screen.partial();
    let tree = Tree::build(&r.snapshot.groups);
    if let Some(f) = &r.inspection {
        if app.selected.as_ref() == Some(&f.path) {
            app.inspection = Some(f.clone());
        }
    }
    app.data = Some(Data { refresh: r, tree });
    app.mark_recent_events();
    writes::track_freeze(app);
    let before = app.selected.clone();
    welcome_back(app);
    first_screen::apply(app);
    let status_before = app.status.clone();
    app.rebuild_rows();
    // undo and redo entries whose group this refresh shows gone
    let dropped = app.history.observe(seen(app.data.as_ref(), &app.start));
    if let Some(text) = Dropped::summary(&dropped) {
        // beside "X is gone; selected its parent" from this same refresh
        let text = match &app.status {
            Some(s) if app.status != status_before => format!("{}; {text}", s.text),
            _ => text,
        };
        app.set_status(Level::Warn, text);
    }
    if first || app.selected != before {
        app.inspection = app
            .inspection
            .take()
            .filter(|f| Some(&f.path) == app.selected.as_ref());
        fx.push(app.inspect_effect());
    }
    app.proc_cursor = app.proc_cursor.min(app.processes_len().saturating_sub(1));
    find::highlight(app);
    find::after_refresh(app);
    super::dialog::confirm::renew_owner(app);
    writes::measure_effects(app, fx);
}

impl App {
    /// Adds a refresh to the history only, without showing it: a replay
    /// loads every refresh of a recording but the last this way.
    pub fn load_history(&mut self, r: &Refresh) {
        remember(self, r);
    }
}

/// Adds a refresh's figures to the timeline.
fn remember(app: &mut App, r: &Refresh) {
    use crate::model::time::timeline::{Entry, Stamp};
    let at = r.snapshot.at;
    let stamp = Stamp {
        at,
        unix_s: (app.unix_base + at).as_secs_f64(),
    };
    let none = crate::model::GroupRates::default();
    let groups = r
        .snapshot
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| (&g.path, Entry::of(g, r.rates.get(i).unwrap_or(&none))));
    app.timeline.push(stamp, groups);
}

/// A selected group that vanished is selected again when it is back (a
/// unit restarted: the same path, a new group) while the cursor still
/// waits on the ancestor it moved to; after
/// [`RETURN_WITHIN`](super::RETURN_WITHIN) refreshes, or once the
/// selection is elsewhere, it is forgotten.
fn welcome_back(app: &mut App) {
    let Some(v) = app.vanished.take() else { return };
    if app.selected.as_ref() != Some(&v.moved_to) {
        return;
    }
    let back = app
        .data
        .as_ref()
        .is_some_and(|d| d.refresh.snapshot.find(&v.path).is_some());
    if back {
        app.set_status(
            Level::Info,
            format!("{} is back; selected it again", v.path.name_display()),
        );
        app.selected = Some(v.path);
    } else if v.refreshes_left > 1 {
        app.vanished = Some(Vanished {
            refreshes_left: v.refreshes_left - 1,
            ..v
        });
    }
}

impl App {
    /// The groups with an event in the last [`EVENT_MARK_FOR`].
    pub(super) fn mark_recent_events(&mut self) {
        let since = self.now().saturating_sub(EVENT_MARK_FOR);
        self.event_marks = self
            .events
            .iter()
            .rev()
            .take_while(|e| e.at >= since)
            .map(|e| e.path.clone())
            .collect();
    }

    /// Keeps the events the watcher sent; on the events screen they are
    /// seen as they come.
    pub(super) fn on_events(&mut self, events: Vec<Event>) {
        for e in events {
            self.events.push(e);
        }
        if matches!(self.mode, Mode::Events { .. }) {
            self.events.mark_seen();
        }
        self.mark_recent_events();
    }
}

/// Where groups are, for the undo history: the latest snapshot (a free
/// function, so that the history can be changed while it is read).
pub(crate) fn seen<'a>(data: Option<&'a Data>, start: &'a GroupPath) -> Seen<'a> {
    Seen {
        snapshot: data.map(|d| &d.refresh.snapshot),
        start,
    }
}
