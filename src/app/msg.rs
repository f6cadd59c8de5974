//! What comes in and goes out of `update`: [`Msg`] (keys, pastes,
//! collector results, resizes, signals, mouse actions) and [`Effect`].

use super::text_input::TextInput;
use super::writes;
use super::TreeRows;
use crate::model::time::events::Event;
use crate::render::columns::Column;
use crate::source::collector::{Collected, Command};
use crate::source::events::{WatchStatus, Watched};
use crossterm::event::KeyEvent;

/// The most characters of a paste the input thread passes on: more than
/// any text field takes ([`TextInput::LINE`]), so that a cut paste is
/// still refused at the field and said so, and little enough that a
/// pasted file is not copied around.
pub const PASTE_CAP: usize = 4 * TextInput::LINE;

/// Everything that can happen to the app.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    /// Text pasted in one piece (the terminal's bracketed paste), at most
    /// [`PASTE_CAP`] characters. Only a text field takes it: it never
    /// presses a key.
    Paste(String),
    Collected(Collected),
    /// The terminal changed size; `tree_rows` is how many tree rows the
    /// view fits in it (the view's geometry, computed by the caller).
    Resized {
        width: u16,
        height: u16,
        tree_rows: TreeRows,
    },
    /// A mouse action (only with `--mouse`).
    Mouse(MouseAction),
    /// SIGTERM, SIGHUP, SIGQUIT or SIGINT arrived.
    Signalled(i32),
    /// SIGTSTP arrived (`kill -TSTP`): stop as Ctrl-Z does.
    SuspendRequested,
    /// SIGCONT arrived: cgtop was stopped and is running again.
    Continued,
    /// The terminal is gone (EOF or error on input, hung-up tty).
    InputClosed,
    /// The writer performed a request; `unix_secs` is when (for the log).
    WriteFinished {
        outcomes: Vec<crate::model::WriteOutcome>,
        unix_secs: u64,
    },
    /// The event watcher saw these, oldest first (`source::events`).
    Events(Vec<Event>),
    /// The column chooser's save: the file written, or the error's words
    /// (already escaped).
    ColumnsSaved(Result<std::path::PathBuf, String>),
    /// The event watcher's state changed (watches short, kernel log).
    EventWatch(WatchStatus),
    /// The event watcher took a refresh's group list (the watchdog).
    EventWatchAlive,
    /// The session's script was written (the apply and undo paths), or
    /// why not.
    ScriptWritten(Result<(std::path::PathBuf, std::path::PathBuf), String>),
}

impl From<Collected> for Msg {
    fn from(c: Collected) -> Self {
        Self::Collected(c)
    }
}

impl From<Watched> for Msg {
    fn from(w: Watched) -> Self {
        match w {
            Watched::Events(e) => Self::Events(e),
            Watched::Status(s) => Self::EventWatch(s),
            Watched::Alive => Self::EventWatchAlive,
        }
    }
}

/// What the mouse can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MouseAction {
    ScrollUp,
    ScrollDown,
    /// A click on the n-th tree row on screen.
    ClickRow(usize),
    /// A click at this column and line, before the view's geometry said
    /// which row it is (the event loop turns it into `ClickRow`, or drops
    /// it: the app ignores it).
    ClickAt {
        x: u16,
        y: u16,
    },
}

/// What `update` asks the outside world to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Collector(Command),
    /// Hand a write to the writer thread.
    Write(writes::WriteRequest),
    /// Give the terminal back and stop until continued (Ctrl-Z, SIGTSTP).
    Suspend,
    /// Set the terminal up again and draw every cell anew (after SIGCONT:
    /// the shell used the screen and the tty modes meanwhile).
    Redraw,
    /// Write `columns` (in order) as the settings file's `columns`
    /// (the column chooser's save); the outcome comes back as
    /// [`Msg::ColumnsSaved`].
    SaveColumns {
        path: std::path::PathBuf,
        columns: Vec<Column>,
    },
    Quit,
}
