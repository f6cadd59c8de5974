//! [`App`]: every field of the app's state, its construction and the
//! read-only questions the view asks of it.

use super::keymap::Scope;
use super::text_input::TextInput;
use super::{first_screen, keymap, past, writes};
use super::{
    Data, DetailPage, HostInfo, Level, Mode, Pane, ReadOnly, SortKey, Status, TreeRows, Vanished,
    WritesOff, Zoom,
};
use crate::model::time::events::EventList;
use crate::model::tree::Row;
use crate::model::{GroupPath, GroupRates, GroupSample, MountInfo};
use crate::render::columns::Column;
use crate::source::collector::Inspection;
use crate::source::events::WatchStatus;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Each group's identity label width (`None`: no label) with the
/// identity it was made from (`None`: from the name alone).
pub(crate) type LabelWidths = HashMap<
    GroupPath,
    (
        Option<std::sync::Arc<crate::model::identity::Identity>>,
        Option<usize>,
    ),
>;

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
    /// The group selected when the search opened (after F3's own step to
    /// the next match): where a text that matches nothing puts the cursor
    /// back, so that it is never left on the match of a shorter text.
    pub search_from: Option<GroupPath>,
    /// The group selected when the filter opened: where a filter text
    /// that matches nothing puts the selection back (the same rule as
    /// the search's).
    pub filter_from: Option<GroupPath>,
    /// The keys bound here whose htop or systemd-cgtop meaning was said
    /// once this session (`keymap::HINTS`).
    pub hinted: HashSet<keymap::Key>,
    /// The keys bound here whose own words took the status line the
    /// first time: their hint is said the next time instead (a key that
    /// always says what it did would otherwise never say it).
    pub hint_waits: HashSet<keymap::Key>,
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
    /// Groups the writer found owned by another user (a delegated
    /// subtree) when it refused to move a protected process there: the
    /// next confirmation of such a move asks for the name
    /// (`Danger::MovesIntoDelegated`).
    pub delegated: HashSet<GroupPath>,
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
    /// The groups with an event in the last
    /// [`EVENT_MARK_FOR`](super::EVENT_MARK_FOR): their rows are marked
    /// (set on each refresh and each event).
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
    /// Whether the tree names groups by who they are (a container's
    /// name, a pod, a session's user: `render::identity`) where known,
    /// or by their kernel names only (`w` turns it).
    pub identities: bool,
    /// The identity labels' widths by path (`app::cursor`), kept across
    /// rebuilds of the rows.
    pub(crate) label_widths: LabelWidths,
    /// The timeline tier the detail's sparklines draw while live (`,`
    /// turns it); a past moment of a coarser tier draws that one.
    pub span: usize,
    /// `--pid` and the search for a process (`find`).
    pub finding: super::find::Finding,
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
            search_from: None,
            filter_from: None,
            hinted: HashSet::new(),
            hint_waits: HashSet::new(),
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
                too_small: false,
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
            identities: true,
            label_widths: LabelWidths::default(),
            span: 0,
            finding: super::find::Finding::default(),
            freezing: HashSet::new(),
            delegated: HashSet::new(),
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
            Mode::FindProcess(_) => Scope::FindProcess,
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
            (None, false) if self.first_screen.partial() => Some(WritesOff::FirstLook),
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

    /// The latest moment the app knows of, on the collector's clock: the
    /// last refresh or the last event, whichever is later (the view's
    /// "now" for the age of an event; it reads no clock).
    pub fn now(&self) -> Duration {
        let refresh = self.data.as_ref().map(|d| d.refresh.snapshot.at);
        let event = self.events.iter().next_back().map(|e| e.at);
        refresh.max(event).unwrap_or_default()
    }
}
