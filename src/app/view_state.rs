//! The view's state types: what the app is showing and how (zoom, sort,
//! pane, detail page, mode, status line), the data on screen, why writes
//! are off, and the vanished group waited for.

use super::dialog;
use super::text_input::TextInput;
use crate::model::tree::Tree;
use crate::model::GroupPath;
use crate::render::columns::{self, Column};
use crate::render::order::SortBy;
use crate::source::collector::Refresh;
use std::time::Duration;

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
    /// The screen is below the minimum layout: one line says so, and no
    /// key but quit and suspend is taken (it would act on a view the user
    /// cannot see: a kill's confirmation, a move of the selection).
    pub too_small: bool,
}

/// The most lines the detail scrolls (the view stops at its last line;
/// this only bounds the count).
pub const DETAIL_SCROLL_MAX: usize = 1000;

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
    pub(super) fn step(self, forward: bool, shown: &[Column]) -> Self {
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
    /// Typing the time to jump to (`@`, see [`past`](super::past)).
    Jump(TextInput),
    Controllers(dialog::controllers::ControllersDialog),
    /// The column chooser (F2).
    Columns(dialog::columns::ColumnsDialog),
    /// Typing a search (F3) in `App::search`; `miss` says why the cursor
    /// did not move (no match, or only in folded branches).
    Search {
        miss: Option<&'static str>,
    },
    /// Finding a process by PID or command name (`#`).
    FindProcess(super::find::FindProcess),
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
    /// The screen shows a past moment ([`past`](super::past)): a write
    /// would be decided on figures that are not the present's.
    Past,
    /// The first look is on screen (`first_screen`): a write would be
    /// decided on a tree whose large subtrees are not listed yet.
    FirstLook,
}

impl WritesOff {
    /// A few words for the footer.
    pub fn short(self) -> String {
        match self {
            Self::ReadOnly(why) => format!("read-only ({}): writes off", why.short()),
            Self::Past => "the past: writes off (p: live)".to_owned(),
            Self::FirstLook => "reading the tree: writes off".to_owned(),
        }
    }
}

impl std::fmt::Display for WritesOff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ReadOnly(why) => write!(f, "read-only ({why}): this key changes the hierarchy"),
            Self::Past => f.write_str("looking at the past: writes are off (p: back to live)"),
            Self::FirstLook => {
                f.write_str("the tree is still being read: writes are off until it is")
            }
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
