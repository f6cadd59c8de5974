//! Application state and `update(&mut App, Msg) -> Vec<Effect>`: a state
//! machine without I/O. Keys, collector results, resizes and signals come
//! in as [`Msg`]; what must happen outside (tell the collector, quit) goes
//! out as [`Effect`].
//!
//! Must not depend on: `ui`, the terminal, the filesystem.

pub mod dialog;
pub mod first_screen;
pub mod keymap;
pub mod past;
pub mod text_input;
pub mod writes;

use crate::model::time::events::{Event, EventList};
use crate::model::tree::{name_matches, Row, RowOptions, Tree};
use crate::model::write::history::{Dropped, Seen};
use crate::render::columns::{self, Column};
use crate::render::fit;
use crate::render::order::{Order, SortBy};
// the host's facts are the model's; re-exported because App holds them
pub use crate::model::HostInfo;
use crate::model::{GroupPath, GroupRates, GroupSample, MountInfo};
use crate::source::collector::{Collected, Command, Inspection, Refresh};
use crate::source::events::{WatchStatus, Watched};
use crossterm::event::KeyEvent;
use keymap::{Action, Scope};
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use text_input::{Input, TextInput, Typed};

/// The most characters of an interval ("3600.000000"): a number that
/// long is out of range anyway.
pub const INTERVAL_CAP: usize = 16;

/// The most characters of a paste the input thread passes on: more than
/// any text field takes ([`TextInput::LINE`]), so that a cut paste is
/// still refused at the field and said so, and little enough that a
/// pasted file is not copied around.
pub const PASTE_CAP: usize = 4 * TextInput::LINE;

/// How many refreshes a selected group that vanished is waited for (see
/// [`Vanished`]): a unit restarted with a `RestartSec=` of a few seconds
/// comes back within them at the default interval of 1 s.
pub const RETURN_WITHIN: u32 = 5;

/// A selected group that vanished, while the cursor waits on the ancestor
/// it moved to. When the group is there again (the same path: `systemctl
/// restart` removes the group and makes it anew) within [`RETURN_WITHIN`]
/// refreshes and the selection is still that ancestor, the selection goes
/// back to it. Moving the cursor (or anything else that selects another
/// group) forgets it: the operator chose something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vanished {
    /// The group that was selected.
    pub path: GroupPath,
    /// The ancestor the selection moved to.
    pub moved_to: GroupPath,
    /// Refreshes left to wait for it.
    pub refreshes_left: u32,
}

/// SIGHUP's number (the same on every Linux architecture).
const SIGHUP: i32 = 1;

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

/// How long a group's row keeps the event mark (`!` in the state
/// column) after its last event.
pub const EVENT_MARK_FOR: Duration = Duration::from_secs(60);

/// How the screen is shared between the tree and the detail (`z` turns
/// it): both, the tree alone, the detail alone. On 80x24 the detail
/// alone shows the whole overview (pressure, controllers, type) that a
/// shared screen cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zoom {
    #[default]
    Split,
    Tree,
    Detail,
}

impl Zoom {
    #[must_use]
    pub fn next(self) -> Self {
        match self {
            Self::Split => Self::Tree,
            Self::Tree => Self::Detail,
            Self::Detail => Self::Split,
        }
    }

    /// What the status line says after `z`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Split => "tree and detail share the screen",
            Self::Tree => "the tree has the whole screen (z: the detail)",
            Self::Detail => "the detail has the whole screen (z: both again)",
        }
    }
}

/// How many tree rows fit on the screen, as the view lays it out: with
/// the detail beside or below, and with the tree alone. The view's
/// geometry, passed in on resize, so that paging needs no drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeRows {
    pub split: usize,
    pub whole: usize,
    /// Shared, the detail is the short strip (a small screen: `Tab`
    /// opens the detail in full to show the process list).
    pub strip: bool,
    /// The widest the tree pane is, shared and alone (the room `s`
    /// checks the sparkline column against).
    pub split_width: usize,
    pub whole_width: usize,
}

/// The most lines the detail scrolls (the view stops at its last line;
/// this only bounds the count).
pub const DETAIL_SCROLL_MAX: usize = 1000;

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

/// Sortable columns: the name, then each figure column; `<` and `>` walk
/// the name and the columns shown, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Name,
    Cpu,
    Throttled,
    Memory,
    MemPct,
    Swap,
    IoRead,
    IoWrite,
    Pids,
    Psi,
}

impl SortKey {
    /// The key of a figure column.
    pub fn of(c: Column) -> Self {
        match c {
            Column::Cpu => Self::Cpu,
            Column::Throttled => Self::Throttled,
            Column::Memory => Self::Memory,
            Column::MemPct => Self::MemPct,
            Column::Swap => Self::Swap,
            Column::IoRead => Self::IoRead,
            Column::IoWrite => Self::IoWrite,
            Column::Pids => Self::Pids,
            Column::Psi => Self::Psi,
        }
    }

    /// The sort's name as the tree's header writes it.
    pub fn title(self) -> &'static str {
        self.column().map_or(columns::NAME_TITLE, Column::title)
    }

    /// The figure column sorted by (none for the name).
    pub fn column(self) -> Option<Column> {
        Column::ALL.into_iter().find(|c| Self::of(*c) == self)
    }

    /// The key as `render::order` (and `-b`) names it.
    pub fn by(self) -> SortBy {
        self.column().map_or(SortBy::Name, SortBy::Column)
    }

    /// The key of `by`.
    pub fn from_by(by: SortBy) -> Self {
        match by {
            SortBy::Name => Self::Name,
            SortBy::Column(c) => Self::of(c),
        }
    }

    /// The next (or previous) key among the name and the `shown` columns.
    fn step(self, forward: bool, shown: &[Column]) -> Self {
        let keys: Vec<Self> = std::iter::once(Self::Name)
            .chain(Column::in_order(shown).into_iter().map(Self::of))
            .collect();
        let i = keys.iter().position(|k| *k == self).unwrap_or(0);
        let n = keys.len();
        keys[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Tree,
    Processes,
}

/// Detail pane pages (keys 1-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailPage {
    Overview,
    Memory,
    Io,
    Processes,
    Raw,
}

impl DetailPage {
    pub const ALL: [Self; 5] = [
        Self::Overview,
        Self::Memory,
        Self::Io,
        Self::Processes,
        Self::Raw,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Self::Overview => "Overview",
            Self::Memory => "Memory",
            Self::Io => "IO",
            Self::Processes => "Processes",
            Self::Raw => "Raw",
        }
    }
}

/// Modal state on top of the main view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Filter,
    Help,
    /// Typing a new refresh interval in seconds.
    IntervalPrompt(TextInput),
    /// Typing the time to jump to (`@`, see [`past`]).
    Jump(TextInput),
    Controllers(dialog::controllers::ControllersDialog),
    /// The column chooser (F2).
    Columns(dialog::columns::ColumnsDialog),
    /// Typing a search (F3) in `App::search`; `miss` says why the cursor
    /// did not move (no match, or only in folded branches).
    Search {
        miss: Option<&'static str>,
    },
    /// The sort-by menu (F6).
    SortBy(dialog::sort_by::SortByDialog),
    Limits(dialog::limits::LimitsForm),
    Raw(dialog::raw::RawEditor),
    /// Boxed: a confirmation carries its whole request, and the other
    /// modes need not be as large.
    Confirm(Box<dialog::confirm::Confirm>),
    Move(dialog::move_picker::MovePicker),
    NewGroup(dialog::new_group::NamePrompt),
    LeafFix(dialog::leaf_fix::LeafFixDialog),
    /// The action log, scrolled.
    Log {
        scroll: usize,
    },
    /// The events screen (`!`): the cursor on its rows, newest first.
    Events {
        cursor: usize,
    },
    /// A message that stays until a key is pressed (a failed write: what
    /// happened, in words, and the fix).
    Message {
        title: String,
        lines: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub level: Level,
    pub text: String,
}

/// The latest refresh and the tree built from it.
pub struct Data {
    pub refresh: Refresh,
    pub tree: Tree,
}

/// Why cgtop will not write, decided once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnly {
    /// The operator asked for it (`--read-only`).
    Flag,
    /// `--root` is a plain directory (a fixture, a copy), not cgroup2: a
    /// write there would not mean anything.
    PlainDirectory,
    /// Not root, and the start group is not a subtree delegated to us.
    NoPermission,
    /// A recording replayed (`cgtop replay FILE`): there is nothing live
    /// to write to.
    Replay,
}

impl ReadOnly {
    /// A few words for the footer, where the full reason has no room.
    pub fn short(self) -> &'static str {
        match self {
            Self::Flag => "--read-only",
            Self::PlainDirectory => "plain directory",
            Self::NoPermission => "no permission",
            Self::Replay => "replay",
        }
    }
}

/// Why a write key is refused now: the view words it (the status line,
/// the footer), the app only decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritesOff {
    /// Off for the whole session.
    ReadOnly(ReadOnly),
    /// The screen shows a past moment ([`past`]): a write would be
    /// decided on figures that are not the present's.
    Past,
}

impl WritesOff {
    /// A few words for the footer.
    pub fn short(self) -> String {
        match self {
            Self::ReadOnly(why) => format!("read-only ({}): writes off", why.short()),
            Self::Past => "the past: writes off (p: live)".to_owned(),
        }
    }
}

impl std::fmt::Display for WritesOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ReadOnly(why) => write!(f, "read-only ({why}): this key changes the hierarchy"),
            Self::Past => f.write_str("looking at the past: writes are off (p: back to live)"),
        }
    }
}

impl std::fmt::Display for ReadOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Flag => "--read-only",
            Self::PlainDirectory => "--root is a plain directory, not cgroup2",
            Self::NoPermission => {
                "no write permission on the hierarchy (not root, and not a delegated subtree)"
            }
            Self::Replay => "a replayed recording: nothing live to write to",
        })
    }
}

pub struct App {
    pub host: HostInfo,
    pub mount: MountInfo,
    /// Every hierarchy and the controllers each holds: a write goes to
    /// the hierarchy of its controller (`Layout::holder`). Set by the
    /// caller (run_tui); empty means cgroup2 alone.
    pub layout: crate::model::host::layout::Layout,
    /// Whether a unit's change can go through systemd here (systemd is
    /// the init and systemctl is there). Set by the caller (run_tui);
    /// `NotBooted` until then.
    pub systemd: crate::model::write::systemd::Presence,
    pub start: GroupPath,
    pub interval: Duration,
    pub paused: bool,
    /// Why writing is off, if it is.
    pub read_only: Option<ReadOnly>,
    pub data: Option<Data>,
    /// The latest full read of the selected group.
    pub inspection: Option<Inspection>,
    pub rows: Vec<Row>,
    /// The selected group: follows the same group across refreshes.
    pub selected: Option<GroupPath>,
    pub cursor: usize,
    pub scroll: usize,
    pub collapsed: HashSet<GroupPath>,
    /// The first screen's fold rule: applied to the first refreshes,
    /// never against the operator (`first_screen`).
    pub first_screen: first_screen::FirstScreen,
    /// Every group in one list, sorted (F5, `--flat`), instead of the tree.
    pub flat: bool,
    /// The folds changed while a filter is on (`true` opened): a match's
    /// subtree is folded until opened, the path to a match open until
    /// folded (see `model::tree::RowOptions::filter_folds`). Kept by path,
    /// forgotten with the filter.
    pub filter_folds: HashMap<GroupPath, bool>,
    /// A selected group that vanished and may come back.
    pub vanished: Option<Vanished>,
    pub sort: SortKey,
    pub sort_desc: bool,
    /// The figure columns shown, in display order (the chooser, F2, or
    /// `--columns`); the collector reads the extra files of these only.
    pub columns: Vec<Column>,
    pub filter: TextInput,
    /// The search's text (F3): kept after the search closes, so that F3
    /// again goes on to the next match.
    pub search: TextInput,
    /// The keys bound here whose htop or systemd-cgtop meaning was said
    /// once this session (`keymap::HINTS`).
    pub hinted: HashSet<keymap::Key>,
    pub mode: Mode,
    /// Which page of the help is shown (the view wraps it around the
    /// number of pages that fit).
    pub help_page: usize,
    pub pane: Pane,
    pub page: DetailPage,
    pub proc_cursor: usize,
    /// CPU % relative to the whole machine instead of one core.
    pub cpu_machine: bool,
    pub status: Option<Status>,
    /// Rows of the tree pane that fit on screen now (from `tree_rows`
    /// and `zoom`).
    pub tree_height: usize,
    /// Rows of the tree pane for each way of sharing the screen (set on
    /// resize).
    pub tree_rows: TreeRows,
    pub zoom: Zoom,
    /// The widest name cell of the rows (guides and name), set with them.
    pub name_width: usize,
    /// Lines of the detail scrolled off its top (`[` `]`); kept while the
    /// selection moves, so that the same lines of each group can be
    /// compared; back to 0 on another page.
    pub detail_scroll: usize,
    pub size: (u16, u16),
    pub quitting: bool,
    /// The signal that ended cgtop (a hung-up terminal counts as SIGHUP):
    /// the exit status is 128 + it, as a shell reports a killed program.
    pub exit_signal: Option<i32>,
    /// Groups that must not be frozen or killed without typing the name.
    pub protected: crate::model::write::guard::Protected,
    /// Every write of the session, oldest first.
    pub log: Vec<writes::LogEntry>,
    /// The effect of each write that changed a group's figures, pending
    /// or done, by its log entry (`model::write::effect`).
    pub effects: Vec<writes::EffectEntry>,
    /// Where the action log file is, and why there when it fell back;
    /// `None` when no writer runs (tests).
    pub log_place: Option<crate::source::actionlog::LogPlace>,
    /// The settings file the column chooser saves to (`s`): the one
    /// read, or the one the environment names; `None` with --no-config.
    pub config_file: Option<std::path::PathBuf>,
    /// The undo and redo stacks: one entry per action, last on top.
    pub history: crate::model::write::history::History,
    /// Frozen by cgtop, not yet reported frozen by cgroup.events.
    pub freezing: HashSet<GroupPath>,
    /// When each frozen group was first seen frozen (`None`: it already
    /// was at cgtop's first refresh).
    pub frozen_since: std::collections::HashMap<GroupPath, Option<Duration>>,
    pub frozen_seen_any: bool,
    /// For the note on memory limits the kernel rounds to pages.
    pub page_size: u64,
    /// The events the watcher sent, the newest [`EventList::CAP`].
    pub events: EventList,
    /// The watcher's state; `None` when no watcher runs.
    pub event_watch: Option<WatchStatus>,
    /// Refreshes whose group list the watcher has not taken yet: past
    /// [`crate::source::events::WATCHDOG_REFRESHES`] it is said stopped (the tree goes on).
    pub event_watch_unanswered: u32,
    /// The groups with an event in the last [`EVENT_MARK_FOR`]: their
    /// rows are marked (set on each refresh and each event).
    pub event_marks: HashSet<GroupPath>,
    /// Every group's figures over the last hour (`model::time::timeline`): the
    /// sparklines, time travel and the effect of an edit read it.
    pub timeline: crate::model::time::timeline::Timeline,
    /// The UNIX time at the collector's clock zero (`Snapshot::at` is
    /// counted from it), set by `run`; zero in tests.
    pub unix_base: Duration,
    /// The past moment on screen (time travel: `T`, `t`, `@`), with the
    /// live data it replaced.
    pub past: Option<past::Past>,
    /// The inspected group's full reads of the last refreshes, for the
    /// detail pages of a past moment.
    pub kept: past::Kept,
    /// Whether the tree shows its sparkline column (`s`).
    pub spark_column: bool,
    /// The timeline tier the detail's sparklines draw while live (`,`
    /// turns it); a past moment of a coarser tier draws that one.
    pub span: usize,
}

impl App {
    pub fn new(host: HostInfo, mount: MountInfo, start: GroupPath, interval: Duration) -> Self {
        Self {
            host,
            mount,
            layout: crate::model::host::layout::Layout::default(),
            systemd: crate::model::write::systemd::Presence::default(),
            selected: Some(start.clone()),
            start,
            interval,
            paused: false,
            read_only: None,
            data: None,
            inspection: None,
            rows: Vec::new(),
            cursor: 0,
            scroll: 0,
            collapsed: HashSet::new(),
            first_screen: first_screen::FirstScreen::default(),
            flat: false,
            filter_folds: HashMap::new(),
            vanished: None,
            sort: SortKey::Cpu,
            columns: Column::DEFAULT.to_vec(),
            sort_desc: true,
            filter: TextInput::new(TextInput::LINE),
            search: TextInput::new(TextInput::LINE),
            hinted: HashSet::new(),
            mode: Mode::Normal,
            help_page: 0,
            pane: Pane::Tree,
            page: DetailPage::Overview,
            proc_cursor: 0,
            cpu_machine: false,
            status: None,
            tree_height: 20,
            tree_rows: TreeRows {
                split: 20,
                whole: 20,
                strip: false,
                split_width: 80,
                whole_width: 80,
            },
            zoom: Zoom::Split,
            name_width: 0,
            detail_scroll: 0,
            size: (80, 24),
            quitting: false,
            exit_signal: None,
            protected: crate::model::write::guard::Protected::default(),
            log: Vec::new(),
            effects: Vec::new(),
            log_place: None,
            config_file: None,
            history: crate::model::write::history::History::default(),
            timeline: crate::model::time::timeline::Timeline::default(),
            unix_base: Duration::ZERO,
            past: None,
            kept: past::Kept::default(),
            spark_column: false,
            span: 0,
            freezing: HashSet::new(),
            frozen_since: std::collections::HashMap::new(),
            frozen_seen_any: false,
            page_size: 4096,
            events: EventList::default(),
            event_watch: None,
            event_watch_unanswered: 0,
            event_marks: HashSet::new(),
        }
    }

    /// Which keymap scope applies now.
    pub fn scope(&self) -> Scope {
        match &self.mode {
            Mode::Normal => Scope::Main,
            Mode::Filter => Scope::Filter,
            Mode::Help => Scope::Help,
            Mode::IntervalPrompt(_) => Scope::Prompt,
            Mode::Jump(_) => Scope::Jump,
            Mode::Controllers(_) => Scope::Controllers,
            Mode::Columns(_) => Scope::Columns,
            Mode::Search { .. } => Scope::Search,
            Mode::SortBy(_) => Scope::SortBy,
            Mode::Limits(_) => Scope::Limits,
            Mode::Raw(r) if r.input.is_some() => Scope::RawLine,
            Mode::Raw(_) => Scope::RawChoose,
            Mode::Confirm(c) if c.typed.is_some() => Scope::ConfirmTyped,
            Mode::Confirm(c) if c.y_only() => Scope::ConfirmWide,
            Mode::Confirm(_) => Scope::Confirm,
            Mode::Move(_) => Scope::Move,
            Mode::NewGroup(_) => Scope::NewGroup,
            Mode::LeafFix(_) => Scope::LeafFix,
            Mode::Log { .. } => Scope::Log,
            Mode::Events { .. } => Scope::Events,
            Mode::Message { .. } => Scope::Message,
        }
    }

    /// The sample and rates of the group on row `i`.
    pub fn row_data(&self, i: usize) -> Option<(&GroupSample, &GroupRates)> {
        let d = self.data.as_ref()?;
        let row = self.rows.get(i)?;
        let idx = d.tree.nodes.get(row.node)?.sample;
        Some((
            d.refresh.snapshot.groups.get(idx)?,
            d.refresh.rates.get(idx)?,
        ))
    }

    /// Who throttles the group on row `i` (`None`: unknown).
    pub fn row_throttling(&self, i: usize) -> Option<&crate::model::tree::limits::Throttling> {
        let d = self.data.as_ref()?;
        let row = self.rows.get(i)?;
        let idx = d.tree.nodes.get(row.node)?.sample;
        d.refresh.throttling.get(idx)?.as_ref()
    }

    /// Whether the group on row `i` was throttled in the last window.
    pub fn row_throttled(&self, i: usize) -> bool {
        self.row_throttling(i).is_some_and(|t| t.throttled)
    }

    pub fn selected_data(&self) -> Option<(&GroupSample, &GroupRates)> {
        self.row_data(self.cursor)
    }

    /// CPU % as shown: of one core, or of the machine.
    pub fn cpu_shown(&self, pct: f64) -> f64 {
        if self.cpu_machine && self.host.ncpus > 0 {
            pct / self.host.ncpus as f64
        } else {
            pct
        }
    }

    /// The selected group's dirty + writeback page cache, bytes per second
    /// of change between its last two kept full reads (at or before the
    /// moment shown): negative while the flusher drains it. `None` without
    /// two reads within three refreshes of each other, or without the
    /// figures (`model::host::writeback::GroupDirty`).
    pub fn dirty_drain(&self) -> Option<f64> {
        use crate::model::host::writeback::{drain_rate, GroupDirty};
        let sel = self.selected.as_ref()?;
        let upto = self.past.as_ref().map(|p| p.moment.stamp.at);
        let [a, b] = self.kept.last_two(sel, upto)?;
        // two reads far apart (the group was left and chosen again) would
        // average over the gap: only neighbours within three refreshes
        if b.0.saturating_sub(a.0) > self.interval.saturating_mul(3) {
            return None;
        }
        let dirty =
            |f: &Inspection| GroupDirty::from_memory_stat(f.detail.keyed.memory_stat.as_ref()?);
        drain_rate((a.0, dirty(a.1)?), (b.0, dirty(b.1)?))
    }

    /// Why writes are refused now, if they are: read-only for the
    /// session, or the past on screen.
    pub fn writes_off(&self) -> Option<WritesOff> {
        match (self.read_only, self.in_past()) {
            (Some(why), _) => Some(WritesOff::ReadOnly(why)),
            (None, true) => Some(WritesOff::Past),
            (None, false) => None,
        }
    }

    /// The tier the detail's sparklines draw: the one chosen with `,`, or
    /// the coarser tier of the past moment shown.
    pub fn span_tier(&self) -> usize {
        let moment = self.past.as_ref().map_or(0, |p| p.moment.tier);
        self.span.max(moment)
    }

    pub(crate) fn set_status(&mut self, level: Level, text: impl Into<String>) {
        self.status = Some(Status {
            level,
            text: text.into(),
        });
    }

    /// Rebuilds the visible rows and puts the cursor back on the selected
    /// group (or its nearest surviving ancestor, with a message).
    fn rebuild_rows(&mut self) {
        let Some(d) = &self.data else {
            self.rows.clear();
            return;
        };
        let order = Order {
            by: self.sort.by(),
            descending: self.sort_desc,
            flat: self.flat,
        };
        let filter = (!self.filter.is_empty()).then_some(self.filter.as_str());
        self.rows = order.rows(
            &d.tree,
            &d.refresh.snapshot.groups,
            &d.refresh.rates,
            &RowOptions {
                collapsed: Some(&self.collapsed),
                filter,
                filter_folds: Some(&self.filter_folds),
            },
        );
        self.name_width = self.name_width_of_rows();
        self.place_cursor();
    }

    /// The widest name cell of the rows, guides included: the view sizes
    /// the name column to it rather than to the screen.
    fn name_width_of_rows(&self) -> usize {
        let Some(d) = &self.data else { return 0 };
        self.rows
            .iter()
            .map(|r| {
                let label = columns::name_label(&d.tree.nodes[r.node].path, r.depth);
                columns::guides_width(r.guides.len(), r.depth) + fit::width(&label)
            })
            .max()
            .unwrap_or(0)
    }

    /// Finds the selected group among the rows; if it is gone, selects its
    /// nearest ancestor that is still shown and says so.
    fn place_cursor(&mut self) {
        let Some(d) = &self.data else { return };
        let find = |p: &GroupPath| {
            self.rows
                .iter()
                .position(|r| &d.tree.nodes[r.node].path == p)
        };
        if let Some(sel) = self.selected.clone() {
            if let Some(i) = find(&sel) {
                self.cursor = i;
            } else if let Some((i, anc)) = sel
                .ancestors()
                .skip(1)
                .find_map(|a| find(&a).map(|i| (i, a)))
            {
                // a group hidden by a collapse or filter is not "gone"
                let still_there = d.refresh.snapshot.find(&sel).is_some();
                self.cursor = i;
                if !still_there && self.past.is_some() {
                    // not there at the past moment shown: the cursor
                    // stands on the ancestor, the selection keeps its path
                    // (and goes back to it where it is)
                    self.fix_scroll();
                    return;
                }
                if !still_there {
                    // names, not paths: the message must fit one status
                    // line, and the survivor is under the cursor anyway
                    let whom = if sel.parent().as_ref() == Some(&anc) {
                        "its parent"
                    } else {
                        "its nearest ancestor"
                    };
                    self.status = Some(Status {
                        level: Level::Warn,
                        text: format!(
                            "{} is gone; selected {whom} {}",
                            sel.name_display(),
                            anc.name_display()
                        ),
                    });
                    // wait for it to come back; the group first waited
                    // for stays the one wanted when its ancestor goes too
                    let path = match self.vanished.take() {
                        Some(v) if v.moved_to == sel => v.path,
                        _ => sel,
                    };
                    self.vanished = Some(Vanished {
                        path,
                        moved_to: anc.clone(),
                        refreshes_left: RETURN_WITHIN,
                    });
                    self.selected = Some(anc);
                }
            } else {
                self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
            }
        }
        self.sync_selected();
    }

    /// After the cursor moved: remember the group under it.
    fn sync_selected(&mut self) {
        if let Some(d) = &self.data {
            if let Some(r) = self.rows.get(self.cursor) {
                self.selected = Some(d.tree.nodes[r.node].path.clone());
            }
        }
        self.fix_scroll();
    }

    /// The tree's rows for the current zoom; the cursor stays in view.
    fn set_tree_height(&mut self) {
        self.tree_height = match self.zoom {
            Zoom::Tree => self.tree_rows.whole,
            Zoom::Split | Zoom::Detail => self.tree_rows.split,
        };
        self.fix_scroll();
    }

    fn fix_scroll(&mut self) {
        let h = self.tree_height.max(1);
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + h {
            self.scroll = self.cursor + 1 - h;
        }
        let max_scroll = self.rows.len().saturating_sub(h);
        self.scroll = self.scroll.min(max_scroll);
    }

    /// With a filter: puts the cursor on the first match in display order
    /// (nothing when nothing matches).
    fn select_first_match(&mut self) {
        if let Some(i) = self.rows.iter().position(|r| r.matched) {
            self.cursor = i;
            self.sync_selected();
        }
    }

    /// Sorts by `key` (a figure: highest first; the name: A to Z) and
    /// says so.
    pub(crate) fn sort_by(&mut self, key: SortKey) {
        self.sort = key;
        self.sort_desc = key != SortKey::Name;
        self.rebuild_rows();
        let order = if self.sort_desc {
            "highest first"
        } else {
            "A to Z"
        };
        self.set_status(
            Level::Info,
            format!(
                "sorted by {}, {order} ({} reverses)",
                key.title(),
                keymap::keys_text(Scope::Main, Action::SortReverse)
            ),
        );
    }

    /// The search (F3): the cursor goes to the first row from the cursor
    /// (`next`: after it) whose name matches as the filter's does,
    /// wrapping; the rows are not changed. Says in the mode when nothing
    /// matches.
    fn search(&mut self, next: bool) {
        let needle = self.search.as_str().to_lowercase();
        let Some(d) = &self.data else { return };
        let n = self.rows.len();
        let hit = if needle.is_empty() || n == 0 {
            None
        } else {
            let from = self.cursor + usize::from(next);
            (0..n)
                .map(|k| (from + k) % n)
                .find(|&i| name_matches(&d.tree.nodes[self.rows[i].node].path, &needle))
        };
        // a match in a folded branch is not on screen to go to
        let folded = hit.is_none()
            && !needle.is_empty()
            && d.tree
                .nodes
                .iter()
                .any(|nd| name_matches(&nd.path, &needle));
        let miss = match hit {
            Some(i) => {
                self.cursor = i;
                self.sync_selected();
                None
            }
            None if needle.is_empty() => None,
            None if folded => Some("no match among the rows shown; * opens every branch"),
            None => Some("no match"),
        };
        self.mode = Mode::Search { miss };
    }

    /// After the selection may have changed from `before`: drop the old
    /// group's detail and ask for the new one's.
    fn selection_changed(&mut self, before: Option<&GroupPath>, fx: &mut Vec<Effect>) {
        if self.selected.as_ref() != before {
            // the operator chose another group: a vanished one is no
            // longer waited for
            self.vanished = None;
            self.inspection = None;
            self.proc_cursor = 0;
            fx.push(self.inspect_effect());
            // the past's detail is the kept read of that moment, if any
            past::show_inspection(self);
        }
    }

    /// Forgets the filter and the folds changed under it.
    fn clear_filter(&mut self) {
        self.filter.clear();
        self.filter_folds.clear();
    }

    fn inspect_effect(&self) -> Effect {
        Effect::Collector(Command::Inspect(self.selected.clone()))
    }

    /// Moves the cursor and, if the group changed, asks for its detail.
    fn move_cursor(&mut self, to: usize, fx: &mut Vec<Effect>) {
        if self.rows.is_empty() {
            return;
        }
        let before = self.selected.clone();
        self.cursor = to.min(self.rows.len() - 1);
        self.sync_selected();
        self.selection_changed(before.as_ref(), fx);
    }

    fn subtree_branches(&self, node: usize) -> Vec<GroupPath> {
        let Some(d) = &self.data else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let nd = &d.tree.nodes[n];
            if !nd.children.is_empty() {
                out.push(nd.path.clone());
            }
            stack.extend(nd.children.iter().copied());
        }
        out
    }

    fn processes_len(&self) -> usize {
        self.inspection.as_ref().map_or(0, |f| f.processes.len())
    }

    /// The latest moment the app knows of, on the collector's clock: the
    /// last refresh or the last event, whichever is later (the view's
    /// "now" for the age of an event; it reads no clock).
    pub fn now(&self) -> Duration {
        let refresh = self.data.as_ref().map(|d| d.refresh.snapshot.at);
        let event = self.events.iter().next_back().map(|e| e.at);
        refresh.max(event).unwrap_or_default()
    }

    /// The groups with an event in the last [`EVENT_MARK_FOR`].
    fn mark_recent_events(&mut self) {
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
    fn on_events(&mut self, events: Vec<Event>) {
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

/// The one entry point: apply a message, return what must be done.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(ev) => on_key(app, &ev, &mut fx),
        Msg::Paste(text) => on_paste(app, &text, &mut fx),
        Msg::Collected(Collected::Refresh(r)) => on_refresh(app, *r, &mut fx),
        Msg::Collected(Collected::Inspection(f)) if app.in_past() => {
            past::hold_inspection(app, *f);
        }
        Msg::Collected(Collected::Inspection(f)) => {
            if app.selected.as_ref() == Some(&f.path) {
                app.inspection = Some(*f);
            }
        }
        Msg::Resized {
            width,
            height,
            tree_rows,
        } => {
            app.size = (width, height);
            app.tree_rows = tree_rows;
            app.set_tree_height();
        }
        Msg::Mouse(m) if app.mode == Mode::Normal => match m {
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

fn on_refresh(app: &mut App, mut r: Refresh, fx: &mut Vec<Effect>) {
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

/// Puts a refresh on screen: the tree, the rows, the selection.
fn show_refresh(app: &mut App, r: Refresh, fx: &mut Vec<Effect>) {
    let first = app.data.is_none();
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
/// waits on the ancestor it moved to; after [`RETURN_WITHIN`] refreshes,
/// or once the selection is elsewhere, it is forgotten.
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

/// A paste goes to the text field of the screen, if it has one with the
/// focus; anywhere else it is dropped, and said so: pasted text must not
/// act as keys (a pasted "k" is not Kill, a pasted newline not Enter).
fn on_paste(app: &mut App, text: &str, fx: &mut Vec<Effect>) {
    if dialog::on_input(app, Input::Paste(text), fx) {
        return;
    }
    match (app.scope(), &mut app.mode) {
        (Scope::Filter, _) => {
            let (before, text_before) = (app.selected.clone(), app.filter.as_str().to_owned());
            match app.filter.on_input(Input::Paste(text)) {
                Typed::Refused(e) | Typed::Cut(e) => app.set_status(Level::Warn, e.to_string()),
                Typed::Changed | Typed::Moved | Typed::NotText => {}
            }
            app.rebuild_rows();
            if app.filter.as_str() != text_before {
                app.select_first_match();
            }
            app.selection_changed(before.as_ref(), fx);
        }
        (Scope::Search, _) => {
            let (before, text_before) = (app.selected.clone(), app.search.as_str().to_owned());
            if let Typed::Refused(e) | Typed::Cut(e) = app.search.on_input(Input::Paste(text)) {
                app.set_status(Level::Warn, e.to_string());
            }
            if app.search.as_str() != text_before {
                app.search(false);
            }
            app.selection_changed(before.as_ref(), fx);
        }
        (Scope::Jump, Mode::Jump(t)) => {
            if let Typed::Refused(e) | Typed::Cut(e) = t.on_input(Input::Paste(text)) {
                app.set_status(Level::Warn, e.to_string());
            }
        }
        (Scope::Prompt, Mode::IntervalPrompt(t)) => {
            // seconds, as typed: only digits and a point are taken
            let number: String = text
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let _ = t.on_input(Input::Paste(&number));
        }
        _ => app.set_status(Level::Info, "paste ignored: no text field here"),
    }
}

fn on_key(app: &mut App, ev: &KeyEvent, fx: &mut Vec<Effect>) {
    if keymap::global(ev) == Some(Action::Suspend) {
        // the screen (a dialog, the filter, the help) stays as it is and
        // comes back with fg
        fx.push(Effect::Suspend);
        return;
    }
    if dialog::on_input(app, Input::Key(ev), fx) {
        return;
    }
    let scope = app.scope();
    let action = keymap::lookup(scope, ev);
    match scope {
        Scope::Filter => {
            let (before, text_before) = (app.selected.clone(), app.filter.as_str().to_owned());
            // as the text changes and on Enter, the selection goes to the
            // first match in display order (as htop's search does while
            // typing), so that the detail shows a match at once
            let mut to_first = false;
            match action {
                Some(Action::Accept) => {
                    app.mode = Mode::Normal;
                    to_first = true;
                }
                Some(Action::Cancel) => {
                    app.clear_filter();
                    app.mode = Mode::Normal;
                }
                _ => {
                    if let Typed::Refused(e) = app.filter.on_key(ev) {
                        app.set_status(Level::Warn, e.to_string());
                    }
                }
            }
            app.rebuild_rows();
            if to_first || app.filter.as_str() != text_before {
                app.select_first_match();
            }
            app.selection_changed(before.as_ref(), fx);
            return;
        }
        Scope::Search => {
            let (before, text_before) = (app.selected.clone(), app.search.as_str().to_owned());
            match action {
                Some(Action::Accept | Action::Cancel) => app.mode = Mode::Normal,
                Some(Action::SearchNext) => app.search(true),
                _ => {
                    if let Typed::Refused(e) = app.search.on_key(ev) {
                        app.set_status(Level::Warn, e.to_string());
                    }
                    // as the text changes: the first match from the cursor
                    if app.search.as_str() != text_before {
                        app.search(false);
                    }
                }
            }
            app.selection_changed(before.as_ref(), fx);
            return;
        }
        Scope::Prompt => {
            let Mode::IntervalPrompt(text) = &mut app.mode else {
                return;
            };
            match action {
                Some(Action::Accept) => {
                    let t = text.as_str().trim().to_owned();
                    app.mode = Mode::Normal;
                    match parse_interval(&t) {
                        Ok(d) => {
                            app.interval = d;
                            app.set_status(
                                Level::Info,
                                format!("refreshing every {}", fmt_secs(d)),
                            );
                            fx.push(Effect::Collector(Command::SetInterval(d)));
                        }
                        Err(e) => app.set_status(Level::Error, e),
                    }
                }
                Some(Action::Cancel) => app.mode = Mode::Normal,
                _ => {
                    // seconds: digits and a point are the only characters
                    let number =
                        text_input::typed_char(ev).is_none_or(|c| c.is_ascii_digit() || c == '.');
                    if number {
                        // at most 16 characters: the cap cannot be reached
                        // by a number that parses in range
                        let _ = text.on_key(ev);
                    }
                }
            }
            return;
        }
        Scope::Jump => {
            let Mode::Jump(text) = &mut app.mode else {
                return;
            };
            match action {
                Some(Action::Accept) => {
                    let t = text.as_str().to_owned();
                    app.mode = Mode::Normal;
                    past::jump(app, &t, fx);
                }
                Some(Action::Cancel) => app.mode = Mode::Normal,
                _ => {
                    if let Typed::Refused(e) = text.on_key(ev) {
                        app.set_status(Level::Warn, e.to_string());
                    }
                }
            }
            return;
        }
        Scope::Help => {
            match action {
                Some(Action::CloseHelp) => app.mode = Mode::Normal,
                Some(Action::PageDown) => app.help_page += 1,
                Some(Action::PageUp) => app.help_page = app.help_page.saturating_sub(1),
                _ => {}
            }
            return;
        }
        _ => {}
    }
    let Some(action) = action else {
        unbound_key(app, ev);
        return;
    };
    // htop's or systemd-cgtop's meaning of a key bound otherwise here:
    // said once a session, when the key said nothing itself, or after
    // its refusal (it did nothing: the habit is the likely reason)
    let hint = keymap::hint_for(ev).filter(|(k, _)| !app.hinted.contains(k));
    main_action(app, action, fx);
    if let Some((key, words)) = hint {
        let text = match &app.status {
            None => words,
            Some(s) if s.level != Level::Info => format!("{}; {words}", s.text),
            // the key said what it did: the hint waits for another time
            Some(_) => return,
        };
        let level = app.status.as_ref().map_or(Level::Info, |s| s.level);
        app.hinted.insert(key);
        app.set_status(level, text);
    }
}

/// A key the main view does not bind: never silence. A key htop or
/// systemd-cgtop use says what cgtop's key for that is; any other
/// character or function key says it is not a key here.
fn unbound_key(app: &mut App, ev: &KeyEvent) {
    if let Some((_, words)) = keymap::hint_for(ev) {
        app.set_status(Level::Info, words);
        return;
    }
    let key = match ev.code {
        // a character as typed (its SHIFT is in it); a control
        // character is not written to the screen
        crossterm::event::KeyCode::Char(c) if !c.is_control() => keymap::Key {
            code: ev.code,
            mods: ev.modifiers - crossterm::event::KeyModifiers::SHIFT,
        },
        crossterm::event::KeyCode::F(_) => keymap::Key {
            code: ev.code,
            mods: ev.modifiers,
        },
        _ => return,
    };
    let name = crate::model::tree::text::escape_str(&keymap::key_name(&key)).into_owned();
    app.set_status(
        Level::Info,
        format!(
            "{name}: not a key here ({} lists the keys)",
            keymap::keys_text(Scope::Main, Action::Help)
        ),
    );
}

/// The main view's action.
fn main_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    app.status = None;
    // the write keys and the log: their dialogs open (or a write goes
    // out) from app/dialog
    if let Some(t) = dialog::on_main_action(app, action, fx) {
        dialog::apply(app, t);
        return;
    }
    let page = app.tree_height.max(1);
    let in_procs = app.pane == Pane::Processes;
    match action {
        Action::Up if in_procs => app.proc_cursor = app.proc_cursor.saturating_sub(1),
        Action::Down if in_procs => {
            app.proc_cursor = (app.proc_cursor + 1).min(app.processes_len().saturating_sub(1));
        }
        Action::Home if in_procs => app.proc_cursor = 0,
        Action::End if in_procs => app.proc_cursor = app.processes_len().saturating_sub(1),
        Action::Up => app.move_cursor(app.cursor.saturating_sub(1), fx),
        Action::Down => app.move_cursor(app.cursor + 1, fx),
        Action::PageUp => app.move_cursor(app.cursor.saturating_sub(page), fx),
        Action::PageDown => app.move_cursor(app.cursor + page, fx),
        Action::Home => app.move_cursor(0, fx),
        Action::End => app.move_cursor(usize::MAX, fx),
        Action::Expand | Action::Collapse | Action::ExpandSubtree | Action::CollapseSubtree => {
            fold(app, action, fx);
        }
        Action::ToggleFlat => toggle_flat(app, fx),
        Action::ToggleAll if app.flat => app.set_status(Level::Info, NO_FOLDS),
        Action::ToggleAll if !app.filter.is_empty() => {
            // under a filter: open every branch shown when one is folded,
            // else fold everything below the top
            let open = app.rows.iter().any(|r| r.collapsed);
            if let Some(d) = &app.data {
                let top = &d.tree.nodes[0].path;
                for p in d.tree.branches() {
                    app.filter_folds.insert(p.clone(), open || p == top);
                }
            }
            app.rebuild_rows();
        }
        Action::ToggleAll => {
            // every fold in the operator's hands: the first screen's
            // rule must not change one after this
            app.first_screen.settle();
            if app.collapsed.is_empty() {
                // everything below the top level folds; the top stays open
                if let Some(d) = &app.data {
                    app.collapsed = d
                        .tree
                        .branches()
                        .filter(|p| **p != d.tree.nodes[0].path)
                        .cloned()
                        .collect();
                }
            } else {
                app.collapsed.clear();
            }
            app.rebuild_rows();
        }
        Action::StartFilter => app.mode = Mode::Filter,
        Action::StartSearch => {
            let before = app.selected.clone();
            app.mode = Mode::Search { miss: None };
            // the text of the last search: F3 goes on to its next match
            if !app.search.is_empty() {
                app.search(true);
            }
            app.selection_changed(before.as_ref(), fx);
        }
        Action::SortByCpu => app.sort_by(SortKey::Cpu),
        Action::SortByMemory => app.sort_by(SortKey::Memory),
        Action::ClearFilter if !app.filter.is_empty() => {
            app.clear_filter();
            app.rebuild_rows();
        }
        Action::SortPrev | Action::SortNext => {
            app.sort = app.sort.step(action == Action::SortNext, &app.columns);
            // names read best A-Z, figures biggest first
            app.sort_desc = app.sort != SortKey::Name;
            app.rebuild_rows();
        }
        Action::SortReverse => {
            app.sort_desc = !app.sort_desc;
            app.rebuild_rows();
        }
        Action::SwitchFocus => {
            // the strip has no room for the process list: the detail
            // opens in full, and closes again with the focus
            app.pane = match app.pane {
                Pane::Tree => {
                    app.page = DetailPage::Processes;
                    if app.tree_rows.strip && app.zoom == Zoom::Split {
                        app.zoom = Zoom::Detail;
                    }
                    Pane::Processes
                }
                Pane::Processes => {
                    if app.tree_rows.strip && app.zoom == Zoom::Detail {
                        app.zoom = Zoom::Split;
                    }
                    Pane::Tree
                }
            };
            app.set_tree_height();
        }
        Action::Zoom => {
            app.zoom = app.zoom.next();
            app.set_tree_height();
            app.set_status(Level::Info, app.zoom.words());
        }
        Action::OpenDetail => {
            app.zoom = if app.zoom == Zoom::Detail {
                Zoom::Split
            } else {
                Zoom::Detail
            };
            app.set_tree_height();
            app.set_status(Level::Info, app.zoom.words());
        }
        Action::DetailDown => {
            app.detail_scroll = (app.detail_scroll + 3).min(DETAIL_SCROLL_MAX);
        }
        Action::DetailUp => app.detail_scroll = app.detail_scroll.saturating_sub(3),
        Action::DetailPage(n) => {
            app.detail_scroll = 0;
            app.page = DetailPage::ALL[usize::from(n).min(DetailPage::ALL.len() - 1)];
            if app.page != DetailPage::Processes {
                app.pane = Pane::Tree;
            }
        }
        Action::ToggleCpuScale => {
            app.cpu_machine = !app.cpu_machine;
            let n = app.host.ncpus;
            app.set_status(
                Level::Info,
                if app.cpu_machine {
                    format!("CPU % of the whole machine ({n} CPUs = 100 %)")
                } else {
                    "CPU % of one core (100 % = one core busy)".into()
                },
            );
        }
        // in the past: back to the present (and running)
        Action::Pause if app.in_past() => past::leave(app, fx),
        Action::Pause => {
            app.paused = !app.paused;
            fx.push(Effect::Collector(Command::Pause(app.paused)));
        }
        Action::StepBack => past::step_back(app, fx),
        Action::StepForward => past::step_forward(app, fx),
        Action::JumpTo => app.mode = Mode::Jump(past::prompt()),
        Action::ToggleSpark => {
            app.spark_column = !app.spark_column;
            let room = match app.zoom {
                Zoom::Tree => app.tree_rows.whole_width,
                Zoom::Split | Zoom::Detail => app.tree_rows.split_width,
            };
            let fits = columns::spark_fits(&app.columns, true, room).0;
            let (level, words) = match (app.spark_column, fits) {
                (true, true) => (
                    Level::Info,
                    "sparkline column on: CPU % of each refresh (s: off)".to_owned(),
                ),
                (true, false) => (
                    Level::Warn,
                    format!(
                        "sparkline column on, but no room for it in {room} columns: it shows on a wider terminal or with fewer columns (F2)"
                    ),
                ),
                (false, _) => (Level::Info, "sparkline column off".to_owned()),
            };
            app.set_status(level, words);
        }
        Action::HistorySpan => {
            let tiers = app.timeline.specs().len().max(1);
            app.span = (app.span + 1) % tiers;
            let t = app.span_tier();
            let words = crate::render::spark::span_words(
                app.timeline.specs().get(t).map_or(0, |s| s.len),
                app.tier_every(t),
            );
            app.set_status(Level::Info, format!("history: {words}"));
        }
        Action::SetInterval => app.mode = Mode::IntervalPrompt(TextInput::new(INTERVAL_CAP)),
        Action::Help => {
            app.mode = Mode::Help;
            app.help_page = 0;
        }
        Action::Quit => {
            app.quitting = true;
            fx.push(Effect::Quit);
        }
        Action::Suspend => fx.push(Effect::Suspend),
        // an empty filter: nothing to clear
        Action::ClearFilter
        // handled above by dialog::on_main_action
        | Action::Controllers
        | Action::EditLimits
        | Action::EditRaw
        | Action::Freeze
        | Action::Kill
        | Action::MoveProcess
        | Action::NewGroup
        | Action::RemoveGroup
        | Action::Undo
        | Action::Redo
        | Action::ActionLog
        | Action::Events
        | Action::ChooseColumns
        | Action::SortMenu
        | Action::SearchNext
        // the other scopes' actions (filter, prompt, text, dialogs, help)
        | Action::Accept
        | Action::ThroughSystemd
        | Action::Cancel
        | Action::CursorLeft
        | Action::CursorRight
        | Action::WordLeft
        | Action::WordRight
        | Action::LineStart
        | Action::LineEnd
        | Action::DeleteChar
        | Action::DeleteForward
        | Action::DeleteWord
        | Action::DeleteToStart
        | Action::DeleteToEnd
        | Action::Toggle
        | Action::PlanAlongPath
        | Action::PrevField
        | Action::NextField
        | Action::PrevDevice
        | Action::NextDevice
        | Action::ToggleThreads
        | Action::Close
        | Action::MoveItemUp
        | Action::MoveItemDown
        | Action::Save
        | Action::JumpToGroup
        | Action::ClearEvents
        | Action::ExportScript
        | Action::CloseHelp => {}
    }
}

/// The fold keys. Without a filter they change `App::collapsed`; under
/// one, `App::filter_folds`, so that opening a match's subtree does not
/// change the folds the tree has without the filter.
fn fold(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let Some(row) = app.rows.get(app.cursor).cloned() else {
        return;
    };
    let node = row.node;
    let Some(d) = &app.data else { return };
    let path = d.tree.nodes[node].path.clone();
    let parent = d.tree.nodes[node].parent;
    if app.flat && action != Action::Collapse {
        // the flat list has no folds (its Collapse goes to the parent)
        app.set_status(Level::Info, NO_FOLDS);
        return;
    }
    let filtering = !app.filter.is_empty();
    let set = |app: &mut App, p: GroupPath, open: bool| {
        if !filtering {
            app.first_screen.touched(&p);
        }
        if filtering {
            app.filter_folds.insert(p, open);
        } else if open {
            app.collapsed.remove(&p);
        } else {
            app.collapsed.insert(p);
        }
    };
    match action {
        Action::Expand => set(app, path, true),
        Action::Collapse => {
            if row.has_children && !row.collapsed {
                set(app, path, false);
            } else if let Some(p) = parent {
                // like a file manager: on a leaf or folded group, go up
                if let Some(i) = app.rows.iter().position(|r| r.node == p) {
                    app.move_cursor(i, fx);
                }
                return;
            }
        }
        Action::ExpandSubtree | Action::CollapseSubtree => {
            for p in app.subtree_branches(node) {
                set(app, p, action == Action::ExpandSubtree);
            }
        }
        _ => {}
    }
    app.rebuild_rows();
}

/// What a fold key says in the flat list.
const NO_FOLDS: &str = "the flat list has no folds (F5: the tree)";

/// F5: the flat list or the tree, the selection kept. Back in the tree,
/// the way to the selected group opens (a fold or the filter's fold
/// would hide it, and the cursor would move to its ancestor).
fn toggle_flat(app: &mut App, fx: &mut Vec<Effect>) {
    let before = app.selected.clone();
    app.flat = !app.flat;
    if let (false, Some(sel)) = (app.flat, &app.selected) {
        let filtering = !app.filter.is_empty();
        for a in sel.ancestors().skip(1) {
            if filtering {
                app.filter_folds.insert(a, true);
            } else {
                app.collapsed.remove(&a);
            }
        }
    }
    app.rebuild_rows();
    app.selection_changed(before.as_ref(), fx);
    let by = app
        .sort
        .column()
        .map_or("name", crate::render::columns::Column::title);
    app.set_status(
        Level::Info,
        if app.flat {
            format!("flat list: every group by {by} (F5: the tree)")
        } else {
            "the tree (F5: the flat list)".to_owned()
        },
    );
}

/// Parses a refresh interval in seconds ("2", "0.5"); 0.1 s to 1 hour.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("interval: {s:?} is not a number of seconds (e.g. 2 or 0.5)"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err(format!(
            "interval: {v} s is out of range (0.1 to 3600 seconds)"
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}
