//! Application state and `update(&mut App, Msg) -> Vec<Effect>`: a state
//! machine without I/O. Keys, collector results, resizes and signals come
//! in as [`Msg`]; what must happen outside (tell the collector, quit) goes
//! out as [`Effect`].
//!
//! Where each idea lives: `msg` (what comes in and goes out: `Msg`,
//! `Effect`, `MouseAction`), `view_state` (the view's state types: `Zoom`,
//! `SortKey`, `Pane`, `DetailPage`, `Mode`, `Status`, `Data`, `ReadOnly`,
//! `WritesOff`, `TreeRows`, `Vanished`), `state` (the `App` struct and
//! its queries), `cursor` (the rows, the cursor and the selection),
//! `refresh` (a collector refresh and the watcher's events), `find`
//! (`--pid` and the search for a process), `keys` (keys
//! and pastes on the main view), `interval` (the refresh interval's
//! text); `update`, the one entry point, is here. The keymap table, the
//! dialogs, time travel, the writes and the text input have their own
//! modules.
//!
//! Must not depend on: `ui`, the terminal, the filesystem.

pub mod dialog;
pub mod find;
pub mod first_screen;
pub mod keymap;
pub mod past;
pub mod text_input;
pub mod writes;

mod cursor;
mod interval;
mod keys;
mod msg;
mod refresh;
mod state;
mod view_state;

pub use interval::{fmt_secs, parse_interval, INTERVAL_CAP};
pub use msg::{Effect, MouseAction, Msg, PASTE_CAP};
pub(crate) use refresh::seen;
pub use state::App;
pub use view_state::{
    Data, DetailPage, Level, Mode, Pane, ReadOnly, SortKey, Status, TreeRows, Vanished, WritesOff,
    Zoom, DETAIL_SCROLL_MAX, EVENT_MARK_FOR, RETURN_WITHIN,
};

// the host's facts are the model's; re-exported because App holds them
pub use crate::model::HostInfo;
use crate::source::collector::Collected;

/// SIGHUP's number (the same on every Linux architecture).
const SIGHUP: i32 = 1;

/// The one entry point: apply a message, return what must be done.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(ev) => keys::on_key(app, &ev, &mut fx),
        Msg::Paste(text) => keys::on_paste(app, &text, &mut fx),
        Msg::Collected(Collected::Refresh(r)) => refresh::on_refresh(app, *r, &mut fx),
        Msg::Collected(Collected::Partial(p)) => refresh::on_partial(app, *p),
        Msg::Collected(Collected::Inspection(f)) if app.in_past() => {
            past::hold_inspection(app, *f);
        }
        Msg::Collected(Collected::Inspection(f)) => {
            if app.selected.as_ref() == Some(&f.path) {
                app.inspection = Some(*f);
                find::highlight(app);
            }
        }
        Msg::Collected(Collected::Found(f)) => find::on_found(app, *f, &mut fx),
        Msg::Resized {
            width,
            height,
            tree_rows,
        } => {
            // what `s` said of the room (and what the status line says
            // after it), said again for the new width
            let before = keys::spark_words(app).1;
            let after_it = app
                .status
                .as_ref()
                .and_then(|s| s.text.strip_prefix(&before))
                .map(str::to_owned);
            app.size = (width, height);
            app.tree_rows = tree_rows;
            app.set_tree_height();
            if let Some(rest) = after_it {
                let (level, words) = keys::spark_words(app);
                app.set_status(level, words + &rest);
            }
        }
        Msg::Mouse(m) if app.mode == Mode::Normal && !app.tree_rows.too_small => match m {
            MouseAction::ScrollUp => app.move_cursor(app.cursor.saturating_sub(3), &mut fx),
            MouseAction::ScrollDown => app.move_cursor(app.cursor + 3, &mut fx),
            // a click below the last row selects nothing
            MouseAction::ClickRow(n)
                if app.zoom != Zoom::Detail
                    && n < app.tree_height
                    && app.scroll + n < app.rows.len() =>
            {
                app.pane = Pane::Tree;
                app.move_cursor(app.scroll + n, &mut fx);
            }
            MouseAction::ClickRow(_) | MouseAction::ClickAt { .. } => {}
        },
        Msg::Mouse(_) => {}
        Msg::Signalled(sig) => {
            app.quitting = true;
            app.exit_signal = Some(sig);
            fx.push(Effect::Quit);
        }
        Msg::InputClosed => {
            // the tty hung up, whether or not SIGHUP reached cgtop (it goes
            // to the session leader only): the same end
            app.quitting = true;
            app.exit_signal.get_or_insert(SIGHUP);
            fx.push(Effect::Quit);
        }
        Msg::SuspendRequested => fx.push(Effect::Suspend),
        Msg::Continued => fx.push(Effect::Redraw),
        Msg::WriteFinished {
            outcomes,
            unix_secs,
        } => {
            writes::on_write_finished(app, &outcomes, unix_secs, &mut fx);
        }
        Msg::Events(events) => app.on_events(events),
        Msg::ColumnsSaved(res) => {
            let (level, text) = match res {
                Ok(path) => (
                    Level::Info,
                    format!(
                        "columns saved to {}",
                        crate::model::tree::text::escape(path.as_os_str().as_encoded_bytes())
                    ),
                ),
                Err(e) => (Level::Error, format!("columns not saved: {e}")),
            };
            app.set_status(level, text);
        }
        Msg::EventWatch(s) => app.event_watch = Some(s),
        Msg::EventWatchAlive => {
            app.event_watch_unanswered = 0;
            if let Some(w) = app.event_watch.as_mut() {
                if matches!(w.stopped, Some(crate::source::events::Stopped::Silent(_))) {
                    w.stopped = None;
                }
            }
        }
        Msg::ScriptWritten(r) => dialog::log::script_written(app, r),
    }
    fx
}
