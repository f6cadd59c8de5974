//! The one keymap table: every key of every screen (the main view, the
//! filter and prompt, each dialog, the help, the editing keys of any text
//! input) is a row with its scope. Dispatch, the footer and each dialog's
//! bottom border, the help screen and README's key tables are all drawn
//! from [`KEYMAP`], so none of them drifts from the real keys. Typed
//! characters going into a text input are not rows.
//!
//! The settings file's `[keys.SCOPE]` tables rebind rows ([`build`]:
//! `freeze = "F"` gives the main view's Freeze row the key F instead of
//! f); the result is checked as the built-in table is (a key bound twice
//! in one scope is an error naming both actions) and [`install`]ed once
//! at start on the thread that runs the view: from then on dispatch, the
//! footers, the help screen and the dialogs' key hints all read it
//! ([`active`]). README's tables are the built-in ones.

use super::text_input::Edit;
use crate::model::files::config::{ConfigError, Rebind};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Which bindings apply: each mode has its own table slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The main view (tree or process list focused).
    Main,
    /// Typing a filter.
    Filter,
    /// The help screen.
    Help,
    /// Typing a number (refresh interval).
    Prompt,
    /// Typing the time to jump to (@).
    Jump,
    /// Editing keys of every text input (the filter, the prompt, every
    /// dialog field): looked up after the screen's own scope. Typed
    /// characters go into the text and are not rows.
    Text,
    /// The controllers dialog (c).
    Controllers,
    /// The column chooser (F2).
    Columns,
    /// Typing a search (F3): the cursor jumps to a match, nothing hidden.
    Search,
    /// Typing a PID or a command name (#): to the group holding it.
    FindProcess,
    /// The sort-by menu (F6).
    SortBy,
    /// The limits form (e).
    Limits,
    /// The raw editor (E), choosing a file.
    RawChoose,
    /// The raw editor, typing the line to write.
    RawLine,
    /// A yes/no confirmation.
    Confirm,
    /// A confirmation that needs a group's name typed.
    ConfirmTyped,
    /// A confirmation of a write beyond the selected group (the root or
    /// an ancestor): only y goes ahead, never a bare Enter.
    ConfirmWide,
    /// The move picker (m).
    Move,
    /// The new group prompt (n).
    NewGroup,
    /// The leaf fix offer (after EBUSY).
    LeafFix,
    /// The action log (L).
    Log,
    /// The events screen (!).
    Events,
    /// A message (a failed write).
    Message,
}

impl Scope {
    /// Every scope, in the order the help and README list them.
    pub const ALL: [Self; 23] = [
        Self::Main,
        Self::Filter,
        Self::Search,
        Self::FindProcess,
        Self::Prompt,
        Self::Jump,
        Self::Text,
        Self::Controllers,
        Self::Columns,
        Self::SortBy,
        Self::Limits,
        Self::RawChoose,
        Self::RawLine,
        Self::Confirm,
        Self::ConfirmTyped,
        Self::ConfirmWide,
        Self::Move,
        Self::NewGroup,
        Self::LeafFix,
        Self::Log,
        Self::Events,
        Self::Message,
        Self::Help,
    ];

    /// The heading of the scope in the help and README.
    pub fn title(self) -> &'static str {
        match self {
            Self::Main => "Main view (tree and process list)",
            Self::Filter => "Filter (/)",
            Self::Prompt => "Refresh interval prompt (d)",
            Self::Jump => "Jump to a time (@)",
            Self::Text => "Editing any text (type to edit)",
            Self::Controllers => "Controllers dialog (c)",
            Self::Columns => "Column chooser (F2)",
            Self::Search => "Search (F3)",
            Self::FindProcess => "Find a process (#)",
            Self::SortBy => "Sort by (F6)",
            Self::Limits => "Limits form (e)",
            Self::RawChoose => "Raw editor (E): choosing a file",
            Self::RawLine => "Raw editor (E): typing the line",
            Self::Confirm => "Confirmation",
            Self::ConfirmTyped => "Confirmation with the group's name typed",
            Self::ConfirmWide => {
                "Confirmation of a write above the group (the root or an ancestor)"
            }
            Self::Move => "Move a process (m)",
            Self::NewGroup => "New group (n)",
            Self::LeafFix => "Leaf fix (offered after EBUSY)",
            Self::Log => "Action log (L)",
            Self::Events => "Events (!)",
            Self::Message => "Message (a refused write)",
            Self::Help => "Help (?)",
        }
    }

    /// Whether the screen has a text input: the [`Scope::Text`] keys and
    /// typed characters reach it.
    pub fn has_text(self) -> bool {
        matches!(
            self,
            Self::Filter
                | Self::Search
                | Self::FindProcess
                | Self::Prompt
                | Self::Jump
                | Self::Limits
                | Self::RawLine
                | Self::ConfirmTyped
                | Self::Move
                | Self::NewGroup
                | Self::LeafFix
        )
    }

    /// The actions the scope's handler acts on: each must have a key in
    /// the scope (a test checks it).
    pub fn actions(self) -> &'static [Action] {
        use Action as A;
        match self {
            // the main view's list is long: every action the main view
            // handles is one that has a row there (tests/state/app.rs)
            Self::Main => &[],
            Self::Filter
            | Self::FindProcess
            | Self::Prompt
            | Self::Jump
            | Self::RawLine
            | Self::NewGroup
            | Self::LeafFix
            | Self::ConfirmWide => &[A::Accept, A::Cancel],
            Self::Text => &[
                A::CursorLeft,
                A::CursorRight,
                A::WordLeft,
                A::WordRight,
                A::LineStart,
                A::LineEnd,
                A::DeleteChar,
                A::DeleteForward,
                A::DeleteWord,
                A::DeleteToStart,
                A::DeleteToEnd,
            ],
            // a write to a systemd unit may go through systemd instead
            Self::Confirm | Self::ConfirmTyped => &[A::Accept, A::ThroughSystemd, A::Cancel],
            Self::Controllers => &[
                A::Up,
                A::Down,
                A::Toggle,
                A::PlanAlongPath,
                A::Accept,
                A::Cancel,
            ],
            Self::Columns => &[
                A::Up,
                A::Down,
                A::Toggle,
                A::MoveItemUp,
                A::MoveItemDown,
                A::Accept,
                A::Save,
                A::Cancel,
            ],
            Self::Limits => &[
                A::PrevField,
                A::NextField,
                A::PrevDevice,
                A::NextDevice,
                A::Accept,
                A::Cancel,
            ],
            Self::RawChoose | Self::SortBy => &[A::Up, A::Down, A::Accept, A::Cancel],
            Self::Search => &[A::SearchNext, A::Accept, A::Cancel],
            Self::Move => &[A::Up, A::Down, A::ToggleThreads, A::Accept, A::Cancel],
            Self::Log => &[A::Up, A::Down, A::ExportScript, A::Close],
            Self::Events => &[
                A::Up,
                A::Down,
                A::PageUp,
                A::PageDown,
                A::Home,
                A::End,
                A::JumpToGroup,
                A::ClearEvents,
                A::Close,
            ],
            Self::Message => &[A::Close],
            Self::Help => &[A::CloseHelp, A::PageDown, A::PageUp],
        }
    }
}

/// Declares [`Action`] and [`Action::all`] from one list, so that no
/// action can exist without being in `all()`: the keymap test then checks
/// that each has a key (a variant with a field lists its values after
/// `in`).
macro_rules! actions {
    ($($(#[$m:meta])* $v:ident $(($t:ty) in $vals:expr)?,)*) => {
        /// Everything a key can ask for.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $($(#[$m])* $v $(($t))?,)*
        }

        impl Action {
            /// Every action, each detail page once, in declaration order.
            // one push per declared action is what the macro writes
            #[allow(clippy::vec_init_then_push)]
            pub fn all() -> Vec<Action> {
                let mut all = Vec::new();
                $(actions!(@push all $v $($vals)?);)*
                all
            }
        }
    };
    (@push $all:ident $v:ident) => {
        $all.push(Action::$v);
    };
    (@push $all:ident $v:ident $vals:expr) => {
        $all.extend(($vals).map(Action::$v));
    };
}

actions! {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Expand,
    Collapse,
    ExpandSubtree,
    CollapseSubtree,
    ToggleAll,
    /// The flat list of every group or the tree (htop's F5).
    ToggleFlat,
    StartFilter,
    ClearFilter,
    /// Search by name (F3): the cursor goes to a match, nothing is hidden.
    StartSearch,
    /// In the search: the next match.
    SearchNext,
    /// A process by PID or command name: to the group that holds it.
    FindProcess,
    SortPrev,
    SortNext,
    SortReverse,
    /// The sort-by menu (F6).
    SortMenu,
    /// htop's P and M.
    SortByCpu,
    SortByMemory,
    SwitchFocus,
    DetailPage(u8) in 0..super::DetailPage::ALL.len() as u8,
    DetailDown,
    DetailUp,
    Zoom,
    OpenDetail,
    ToggleCpuScale,
    Pause,
    StepBack,
    StepForward,
    JumpTo,
    ToggleSpark,
    /// Who each group is (a container's name, a pod, a session's user)
    /// or the kernel's names.
    ToggleIdentities,
    HistorySpan,
    SetInterval,
    ChooseColumns,
    Help,
    Quit,
    Suspend,
    /// Every cell drawn anew, the terminal set up again (htop's ^L).
    RedrawScreen,
    // in the filter, prompt and dialog scopes
    Accept,
    Cancel,
    // text inputs
    CursorLeft,
    CursorRight,
    WordLeft,
    WordRight,
    LineStart,
    LineEnd,
    DeleteChar,
    DeleteForward,
    DeleteWord,
    DeleteToStart,
    DeleteToEnd,
    // dialogs
    Toggle,
    /// In the controllers dialog: the plan to enable a controller the
    /// parent does not hand down, along the path.
    PlanAlongPath,
    PrevField,
    NextField,
    PrevDevice,
    NextDevice,
    ToggleThreads,
    Close,
    // the column chooser
    MoveItemUp,
    MoveItemDown,
    Save,
    // help scope
    CloseHelp,
    // the events screen
    Events,
    JumpToGroup,
    ClearEvents,
    // the action log screen
    ExportScript,
    // writes
    Controllers,
    EditLimits,
    EditRaw,
    Freeze,
    Kill,
    MoveProcess,
    NewGroup,
    RemoveGroup,
    Undo,
    Redo,
    ActionLog,
    /// In a confirmation: make a unit's change through systemd.
    ThroughSystemd,
}

impl Action {
    /// Whether the action changes the hierarchy (off in read-only mode).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Controllers
                | Self::EditLimits
                | Self::EditRaw
                | Self::Freeze
                | Self::Kill
                | Self::MoveProcess
                | Self::NewGroup
                | Self::RemoveGroup
                | Self::Undo
                | Self::Redo
                | Self::ThroughSystemd
        )
    }
}

impl Action {
    /// The text edit the action asks for, in a text input.
    pub fn edit(self) -> Option<Edit> {
        Some(match self {
            Self::CursorLeft => Edit::Left,
            Self::CursorRight => Edit::Right,
            Self::WordLeft => Edit::WordLeft,
            Self::WordRight => Edit::WordRight,
            Self::LineStart => Edit::Home,
            Self::LineEnd => Edit::End,
            Self::DeleteChar => Edit::Backspace,
            Self::DeleteForward => Edit::Delete,
            Self::DeleteWord => Edit::DeleteWord,
            Self::DeleteToStart => Edit::DeleteToStart,
            Self::DeleteToEnd => Edit::DeleteToEnd,
            _ => return None,
        })
    }
}

/// A key as the table spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::NONE,
    }
}
const fn code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}
const fn shift(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::SHIFT,
    }
}
const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}
const fn ctrl_code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::CONTROL,
    }
}
const fn alt(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::ALT,
    }
}
/// Any key at all (a message closes on any key): `KeyCode::Null` is
/// never reported by crossterm for a real key.
const ANY: Key = code(KeyCode::Null);

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [Key],
    pub action: Action,
    /// What the help screen says.
    pub help: &'static str,
    /// Short label for the footer; `None` keeps it out of the footer.
    pub footer: Option<&'static str>,
}

const fn b(
    scope: Scope,
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    footer: Option<&'static str>,
) -> Binding {
    Binding {
        scope,
        keys,
        action,
        help,
        footer,
    }
}

use Scope::{
    Columns, Confirm, ConfirmTyped, ConfirmWide, Controllers, Events, Filter, FindProcess,
    Help as HelpScope, Jump, LeafFix, Limits, Log, Main, Message, Move, NewGroup, Prompt,
    RawChoose, RawLine, Search, SortBy, Text,
};

// One line per binding, so the table reads as a table.
#[rustfmt::skip]
pub const KEYMAP: &[Binding] = &[
    b(Main, &[code(KeyCode::Up), k('k')], Action::Up, "move up", None),
    b(Main, &[code(KeyCode::Down), k('j')], Action::Down, "move down", None),
    b(Main, &[code(KeyCode::PageUp), ctrl('b')], Action::PageUp, "page up", None),
    b(Main, &[code(KeyCode::PageDown), ctrl('f')], Action::PageDown, "page down", None),
    b(Main, &[code(KeyCode::Home), k('g')], Action::Home, "first row", None),
    b(Main, &[code(KeyCode::End), k('G'), shift(KeyCode::Char('G'))], Action::End, "last row", None),
    b(Main, &[code(KeyCode::Right), k('l'), k('+')], Action::Expand, "expand the group", None),
    b(Main, &[code(KeyCode::Left), k('h'), k('-')], Action::Collapse, "collapse, or go to the parent", None),
    b(Main, &[shift(KeyCode::Right), k('}')], Action::ExpandSubtree, "expand the whole subtree", None),
    b(Main, &[shift(KeyCode::Left), k('{')], Action::CollapseSubtree, "collapse the whole subtree", None),
    b(Main, &[k('*')], Action::ToggleAll, "expand or collapse everything", None),
    b(Main, &[code(KeyCode::F(5))], Action::ToggleFlat, "flat list / tree (turns)", None),
    b(Main, &[k('/'), code(KeyCode::F(4))], Action::StartFilter, "filter by name (keeps parents)", Some("filter")),
    b(Main, &[code(KeyCode::F(3))], Action::StartSearch, "search: next match (F3 again)", None),
    b(Main, &[k('#')], Action::FindProcess, "find a process: PID or name", None),
    b(Main, &[code(KeyCode::Esc)], Action::ClearFilter, "clear the filter", None),
    b(Main, &[k('<'), shift(KeyCode::Char('<'))], Action::SortPrev, "sort by the previous column", None),
    b(Main, &[k('>'), shift(KeyCode::Char('>'))], Action::SortNext, "sort by the next column", Some("sort")),
    b(Main, &[k('r')], Action::SortReverse, "reverse the sort order", None),
    b(Main, &[code(KeyCode::F(6))], Action::SortMenu, "sort by: a menu of the columns", None),
    b(Main, &[k('P'), shift(KeyCode::Char('P'))], Action::SortByCpu, "sort by CPU%, highest first", None),
    b(Main, &[k('M'), shift(KeyCode::Char('M'))], Action::SortByMemory, "sort by memory, highest first", None),
    b(Main, &[code(KeyCode::Tab)], Action::SwitchFocus, "focus: tree / process list", None),
    b(Main, &[k('1')], Action::DetailPage(0), "detail: overview", None),
    b(Main, &[k('2')], Action::DetailPage(1), "detail: memory", None),
    b(Main, &[k('3')], Action::DetailPage(2), "detail: IO", None),
    b(Main, &[k('4')], Action::DetailPage(3), "detail: processes", None),
    b(Main, &[k('5')], Action::DetailPage(4), "detail: raw interface files", None),
    b(Main, &[k(']'), shift(KeyCode::Down)], Action::DetailDown, "scroll the detail down", None),
    b(Main, &[k('['), shift(KeyCode::Up)], Action::DetailUp, "scroll the detail up", None),
    b(Main, &[k('z')], Action::Zoom, "tree, detail or both (turns)", Some("zoom")),
    b(Main, &[code(KeyCode::Enter)], Action::OpenDetail, "the detail in full, or back", None),
    b(Main, &[k('%')], Action::ToggleCpuScale, "CPU %: of one core / machine", None),
    b(Main, &[k('p')], Action::Pause, "pause/resume; past: to live", None),
    b(Main, &[k('T'), shift(KeyCode::Char('T'))], Action::StepBack, "a moment back in time (htop's T, sort by time: P)", None),
    b(Main, &[k('t')], Action::StepForward, "a moment forward in time", None),
    b(Main, &[k('@'), shift(KeyCode::Char('@'))], Action::JumpTo, "jump to a time (-5m, 14:03)", None),
    b(Main, &[k('s')], Action::ToggleSpark, "a CPU sparkline column", None),
    b(Main, &[k('w')], Action::ToggleIdentities, "who groups are / kernel names", None),
    b(Main, &[k(',')], Action::HistorySpan, "sparkline span (turns)", None),
    b(Main, &[k('d')], Action::SetInterval, "set the refresh interval", None),
    b(Main, &[code(KeyCode::F(2)), k('C')], Action::ChooseColumns, "choose the tree's columns", None),
    b(Main, &[k('c')], Action::Controllers, "controllers for children", Some("ctl")),
    b(Main, &[k('e')], Action::EditLimits, "edit cpu/memory/io/pids limits", Some("limits")),
    b(Main, &[k('E')], Action::EditRaw, "write any other interface file", None),
    b(Main, &[k('f')], Action::Freeze, "freeze or thaw the group", Some("freeze")),
    b(Main, &[k('K'), code(KeyCode::F(9))], Action::Kill, "kill the group's processes", Some("kill")),
    b(Main, &[k('m')], Action::MoveProcess, "move a process to a group", None),
    b(Main, &[k('n')], Action::NewGroup, "create a child group", None),
    b(Main, &[code(KeyCode::Delete)], Action::RemoveGroup, "remove the (empty) group", None),
    b(Main, &[k('u')], Action::Undo, "undo (again: the one before)", Some("undo")),
    b(Main, &[k('U'), ctrl('r')], Action::Redo, "redo what u undid", None),
    b(Main, &[k('L')], Action::ActionLog, "this session's write log", None),
    b(Main, &[k('!')], Action::Events, "events: OOM, freezes, limits", None),
    b(Main, &[k('?'), code(KeyCode::F(1))], Action::Help, "this help", Some("help")),
    b(Main, &[k('q'), code(KeyCode::F(10)), ctrl('c')], Action::Quit, "quit", Some("quit")),
    b(Main, &[ctrl('z')], Action::Suspend, "suspend (fg brings it back)", None),
    b(Main, &[ctrl('l')], Action::RedrawScreen, "draw the screen anew", None),
    b(Filter, &[code(KeyCode::Enter)], Action::Accept, "keep the filter", Some("keep")),
    b(Filter, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "clear the filter", Some("clear")),
    b(Search, &[code(KeyCode::F(3))], Action::SearchNext, "the next match (after the last: the first)", Some("next")),
    b(Search, &[code(KeyCode::Enter)], Action::Accept, "stay on this group", Some("stay")),
    b(Search, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close the search (the cursor stays)", Some("close")),
    b(FindProcess, &[code(KeyCode::Enter)], Action::Accept, "to the group holding it (a name: Enter again for the next match)", Some("find/next")),
    b(FindProcess, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close (the selection stays)", Some("close")),
    b(Prompt, &[code(KeyCode::Enter)], Action::Accept, "apply", Some("apply")),
    b(Prompt, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(Jump, &[code(KeyCode::Enter)], Action::Accept, "show the moment nearest that time", Some("go")),
    b(Jump, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(Text, &[code(KeyCode::Left)], Action::CursorLeft, "cursor left", None),
    b(Text, &[code(KeyCode::Right)], Action::CursorRight, "cursor right", None),
    b(Text, &[ctrl_code(KeyCode::Left), alt('b')], Action::WordLeft, "a word left", None),
    b(Text, &[ctrl_code(KeyCode::Right), alt('f')], Action::WordRight, "a word right", None),
    b(Text, &[code(KeyCode::Home), ctrl('a')], Action::LineStart, "to the start", None),
    b(Text, &[code(KeyCode::End), ctrl('e')], Action::LineEnd, "to the end", None),
    b(Text, &[code(KeyCode::Backspace)], Action::DeleteChar, "delete the character before the cursor", None),
    b(Text, &[code(KeyCode::Delete)], Action::DeleteForward, "delete the character under the cursor", None),
    b(Text, &[ctrl('w')], Action::DeleteWord, "delete the word before the cursor", None),
    b(Text, &[ctrl('u')], Action::DeleteToStart, "delete everything before the cursor", None),
    b(Text, &[ctrl('k')], Action::DeleteToEnd, "delete from the cursor to the end", None),
    b(Controllers, &[code(KeyCode::Up)], Action::Up, "previous controller", Some("move")),
    b(Controllers, &[code(KeyCode::Down)], Action::Down, "next controller", Some("move")),
    b(Controllers, &[k(' '), k('x')], Action::Toggle, "mark or unmark the controller", Some("toggle")),
    b(Controllers, &[k('p')], Action::PlanAlongPath, "a controller the parent does not enable: the plan to enable it along the path (a question; nothing written without y)", Some("path plan")),
    b(Controllers, &[code(KeyCode::Enter)], Action::Accept, "write every change in one write", Some("apply")),
    b(Controllers, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close without writing", Some("cancel")),
    b(Columns, &[code(KeyCode::Up)], Action::Up, "previous column", Some("move")),
    b(Columns, &[code(KeyCode::Down)], Action::Down, "next column", Some("move")),
    b(Columns, &[k(' '), k('x')], Action::Toggle, "show or hide the column", Some("toggle")),
    b(Columns, &[k('[')], Action::MoveItemUp, "move the column left (up the list)", Some("order")),
    b(Columns, &[k(']')], Action::MoveItemDown, "move the column right (down the list)", Some("order")),
    b(Columns, &[code(KeyCode::Enter)], Action::Accept, "show the marked columns, in the list's order", Some("apply")),
    b(Columns, &[k('s')], Action::Save, "show them and save them as `columns` in the settings file", Some("save")),
    b(Columns, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close without a change", Some("cancel")),
    b(SortBy, &[code(KeyCode::Up), k('k')], Action::Up, "previous", Some("move")),
    b(SortBy, &[code(KeyCode::Down), k('j')], Action::Down, "next", Some("move")),
    b(SortBy, &[code(KeyCode::Enter)], Action::Accept, "sort by it (a figure: highest first; the name: A to Z)", Some("sort")),
    b(SortBy, &[code(KeyCode::Esc), k('q'), ctrl('c')], Action::Cancel, "close without a change", Some("cancel")),
    b(Limits, &[code(KeyCode::Up), code(KeyCode::BackTab)], Action::PrevField, "previous field", Some("field")),
    b(Limits, &[code(KeyCode::Down), code(KeyCode::Tab)], Action::NextField, "next field", Some("field")),
    b(Limits, &[code(KeyCode::PageUp)], Action::PrevDevice, "previous device for io.max, io.latency and blkio.throttle (in any field; Left/Right move the cursor)", Some("device")),
    b(Limits, &[code(KeyCode::PageDown)], Action::NextDevice, "next device for io.max, io.latency and blkio.throttle (in any field)", Some("device")),
    b(Limits, &[code(KeyCode::Enter)], Action::Accept, "write the field's value and read it back", Some("write")),
    b(Limits, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close the form", Some("close")),
    b(RawChoose, &[code(KeyCode::Up)], Action::Up, "previous file", Some("file")),
    b(RawChoose, &[code(KeyCode::Down)], Action::Down, "next file", Some("file")),
    b(RawChoose, &[code(KeyCode::Enter)], Action::Accept, "choose the file, then type the line", Some("choose")),
    b(RawChoose, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "close", Some("close")),
    b(RawLine, &[code(KeyCode::Enter)], Action::Accept, "write the line (after a confirmation)", Some("write")),
    b(RawLine, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "back to the files", Some("back")),
    b(Confirm, &[k('y'), k('Y'), code(KeyCode::Enter)], Action::Accept, "go ahead", Some("go ahead")),
    b(Confirm, &[k('s'), k('S')], Action::ThroughSystemd, "a systemd unit: make the change through systemd (systemctl set-property --runtime), which a daemon-reload keeps", None),
    b(Confirm, &[k('n'), k('N'), code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(ConfirmWide, &[k('y'), k('Y')], Action::Accept, "go ahead (Enter does not: the write reaches beyond the group)", Some("go ahead")),
    b(ConfirmWide, &[k('n'), k('N'), code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(ConfirmTyped, &[code(KeyCode::Enter)], Action::Accept, "go ahead once the name typed matches", Some("go ahead")),
    b(ConfirmTyped, &[ctrl('s')], Action::ThroughSystemd, "a systemd unit: the same through systemd, once the name typed matches", None),
    b(ConfirmTyped, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(Move, &[code(KeyCode::Up)], Action::Up, "previous group", Some("choose")),
    b(Move, &[code(KeyCode::Down)], Action::Down, "next group", Some("choose")),
    b(Move, &[ctrl('t')], Action::ToggleThreads, "the whole process (cgroup.procs) or this thread (cgroup.threads)", Some("procs/threads")),
    b(Move, &[code(KeyCode::Enter)], Action::Accept, "move into the group", Some("move")),
    b(Move, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(NewGroup, &[code(KeyCode::Enter)], Action::Accept, "create the group", Some("create")),
    b(NewGroup, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "cancel", Some("cancel")),
    b(LeafFix, &[code(KeyCode::Enter)], Action::Accept, "create the leaf, move the processes, enable", Some("fix")),
    b(LeafFix, &[code(KeyCode::Esc), ctrl('c')], Action::Cancel, "leave it", Some("leave it")),
    b(Log, &[code(KeyCode::Up), k('k')], Action::Up, "scroll up", Some("scroll")),
    b(Log, &[code(KeyCode::Down), k('j')], Action::Down, "scroll down", Some("scroll")),
    b(Log, &[k('e')], Action::ExportScript, "write this session's writes as a shell script and its undo, beside the action log", Some("script")),
    b(Log, &[code(KeyCode::Esc), k('q'), k('L'), code(KeyCode::Enter)], Action::Close, "close the log", Some("close")),
    b(Events, &[code(KeyCode::Up), k('k')], Action::Up, "previous event (newer)", Some("move")),
    b(Events, &[code(KeyCode::Down), k('j')], Action::Down, "next event (older)", Some("move")),
    b(Events, &[code(KeyCode::PageUp), ctrl('b')], Action::PageUp, "a page up", None),
    b(Events, &[code(KeyCode::PageDown), ctrl('f')], Action::PageDown, "a page down", None),
    b(Events, &[code(KeyCode::Home), k('g')], Action::Home, "the newest event", None),
    b(Events, &[code(KeyCode::End), k('G'), shift(KeyCode::Char('G'))], Action::End, "the oldest event", None),
    b(Events, &[code(KeyCode::Enter)], Action::JumpToGroup, "select the event's group in the tree (or say it is gone)", Some("go to group")),
    b(Events, &[k('c')], Action::ClearEvents, "clear the list", Some("clear")),
    b(Events, &[code(KeyCode::Esc), k('q'), k('!')], Action::Close, "close the events", Some("close")),
    b(Message, &[ANY], Action::Close, "close the message", Some("closes")),
    b(HelpScope, &[code(KeyCode::Esc), k('q'), k('?'), code(KeyCode::F(1)), code(KeyCode::Enter)], Action::CloseHelp, "close the help", Some("close")),
    b(HelpScope, &[k(' '), code(KeyCode::PageDown), code(KeyCode::Down), k('j')], Action::PageDown, "next page of the help", Some("next page")),
    b(HelpScope, &[code(KeyCode::PageUp), code(KeyCode::Up), k('k')], Action::PageUp, "previous page of the help", None),
];

/// What a key means to someone who comes from htop or systemd-cgtop,
/// where cgtop binds it otherwise or not at all: said on the status line
/// in words, never an action. `here` is the main view's action the key
/// has in the built-in table (`None`: unbound); the hint is said every
/// time for an unbound key, once a session for a bound one (at its next
/// press where the key's own words took the line: `App::hint_waits`),
/// and not at all once the settings file rebinds the key. Each `{}` in
/// `words` is the keys of the next action of `to`, from the table in
/// force.
#[derive(Debug, Clone, Copy)]
pub struct Hint {
    pub key: Key,
    pub here: Option<Action>,
    pub words: &'static str,
    pub to: &'static [Action],
}

const fn hint(key: Key, here: Option<Action>, words: &'static str, to: &'static [Action]) -> Hint {
    Hint {
        key,
        here,
        words,
        to,
    }
}

// One line per key, as the keymap.
#[rustfmt::skip]
pub const HINTS: &[Hint] = &[
    // htop's keys
    hint(code(KeyCode::F(7)), None, "htop's nice: a group's CPU share is cpu.weight, in the limits form ({})", &[Action::EditLimits]),
    hint(code(KeyCode::F(8)), None, "htop's nice: a group's CPU share is cpu.weight, in the limits form ({})", &[Action::EditLimits]),
    hint(k('I'), None, "htop's invert sort is {} here", &[Action::SortReverse]),
    hint(k('N'), None, "htop's sort by PID: sort here with {}, {} or the menu {}", &[Action::SortPrev, Action::SortNext, Action::SortMenu]),
    hint(k('H'), None, "htop's hide threads: cgtop lists processes, not threads (detail {})", &[Action::DetailPage(3)]),
    hint(k('F'), None, "htop's follow: the selection follows its group by itself", &[]),
    hint(k('Z'), None, "htop's pause is {} here", &[Action::Pause]),
    hint(k('a'), None, "htop's CPU affinity: cpuset.cpus, written with {}", &[Action::EditRaw]),
    hint(k('\\'), None, "htop's filter is {} here", &[Action::StartFilter]),
    hint(k('S'), None, "htop's setup: the columns are {}; the rest is the settings file", &[Action::ChooseColumns]),
    hint(k('x'), None, "htop's file locks: none here; a group's processes are detail {}", &[Action::DetailPage(3)]),
    hint(k('0'), None, "htop's PID search is {} here (a PID or a name)", &[Action::FindProcess]),
    hint(k('6'), None, "htop's PID search is {} here (a PID or a name)", &[Action::FindProcess]),
    hint(k('7'), None, "htop's PID search is {} here (a PID or a name)", &[Action::FindProcess]),
    hint(k('8'), None, "htop's PID search is {} here (a PID or a name)", &[Action::FindProcess]),
    hint(k('9'), None, "htop's PID search is {} here (a PID or a name)", &[Action::FindProcess]),
    hint(k('.'), None, "htop's sort column: the menu is {}; {} and {} step", &[Action::SortMenu, Action::SortPrev, Action::SortNext]),
    hint(k('O'), None, "htop's hide containers: {} shows whose groups they are; filter with {}", &[Action::ToggleIdentities, Action::StartFilter]),
    hint(k('^'), None, "htop's start of the line: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(k('$'), None, "htop's end of the line: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(ctrl('a'), None, "htop's start of the line: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(ctrl('e'), None, "htop's end of the line: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(alt('k'), None, "htop's up is {} here", &[Action::Up]),
    hint(alt('j'), None, "htop's down is {} here", &[Action::Down]),
    hint(alt('h'), None, "htop's scroll left: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(alt('l'), None, "htop's scroll right: a long path is whole in the detail ({})", &[Action::OpenDetail]),
    hint(code(KeyCode::BackTab), None, "htop's screen tabs: {} turns tree / process list here", &[Action::SwitchFocus]),
    hint(shift(KeyCode::F(3)), None, "htop's search backwards: {} goes round (after the last, the first)", &[Action::StartSearch]),
    hint(shift(KeyCode::F(7)), None, "htop's autogroup nice: a group's CPU share is cpu.weight, in {}", &[Action::EditLimits]),
    hint(shift(KeyCode::F(8)), None, "htop's autogroup nice: a group's CPU share is cpu.weight, in {}", &[Action::EditLimits]),
    hint(k('K'), Some(Action::Kill), "kill here, after a confirmation (htop's K hides kernel threads)", &[]),
    hint(k('k'), Some(Action::Up), "up here (vi keys); kill is {}, after a confirmation", &[Action::Kill]),
    hint(k('u'), Some(Action::Undo), "undo here; htop's user filter: {} filters by group name", &[Action::StartFilter]),
    hint(k('U'), Some(Action::Redo), "redo here (htop's untag all: cgtop has no tags)", &[]),
    hint(k('e'), Some(Action::EditLimits), "edit limits here (htop's environment: none)", &[]),
    hint(k('l'), Some(Action::Expand), "expand here (vi keys; htop's open files: none)", &[]),
    hint(k('s'), Some(Action::ToggleSpark), "sparkline column here (htop's strace: none)", &[]),
    hint(k('h'), Some(Action::Collapse), "collapse here (vi keys); help is {}", &[Action::Help]),
    hint(k('w'), Some(Action::ToggleIdentities), "who groups are here (htop's wrap of commands: none)", &[]),
    hint(k('#'), Some(Action::FindProcess), "find a process here (htop's # hides the meters: none)", &[]),
    hint(k('['), Some(Action::DetailUp), "scrolls the detail here; htop's nice is cpu.weight in {}", &[Action::EditLimits]),
    hint(k(']'), Some(Action::DetailDown), "scrolls the detail here; htop's nice is cpu.weight in {}", &[Action::EditLimits]),
    hint(k('{'), Some(Action::CollapseSubtree), "folds the subtree here; htop's autogroup nice is cpu.weight in {}", &[Action::EditLimits]),
    hint(k('}'), Some(Action::ExpandSubtree), "opens the subtree here; htop's autogroup nice is cpu.weight in {}", &[Action::EditLimits]),
    hint(code(KeyCode::Left), Some(Action::Collapse), "collapse here (htop scrolls sideways; a long path shows whole with {})", &[Action::OpenDetail]),
    hint(code(KeyCode::Right), Some(Action::Expand), "expand here (htop scrolls sideways; a long path shows whole with {})", &[Action::OpenDetail]),
    hint(k('1'), Some(Action::DetailPage(0)), "a detail page here; htop's PID search is {} (a PID or a name)", &[Action::FindProcess]),
    hint(k('2'), Some(Action::DetailPage(1)), "a detail page here; htop's PID search is {} (a PID or a name)", &[Action::FindProcess]),
    hint(k('3'), Some(Action::DetailPage(2)), "a detail page here; htop's PID search is {} (a PID or a name)", &[Action::FindProcess]),
    hint(k('4'), Some(Action::DetailPage(3)), "a detail page here; htop's PID search is {} (a PID or a name)", &[Action::FindProcess]),
    hint(k('5'), Some(Action::DetailPage(4)), "a detail page here; htop's PID search is {} (a PID or a name)", &[Action::FindProcess]),
    // systemd-cgtop's keys (and htop's that are the same letter)
    hint(k('c'), Some(Action::Controllers), "controllers here; sort by CPU is {} or {}", &[Action::SortByCpu, Action::SortNext]),
    hint(k('m'), Some(Action::MoveProcess), "move a process here; sort by memory is {}", &[Action::SortByMemory]),
    hint(k('p'), Some(Action::Pause), "pause here; sort by path (the name) is in {}", &[Action::SortMenu]),
    hint(k('t'), Some(Action::StepForward), "forward in time here ({} back); htop's tree {}, sort by tasks {}", &[Action::StepBack, Action::ToggleFlat, Action::SortMenu]),
    hint(k('T'), Some(Action::StepBack), "time travel back here ({} forward); htop's sort by time is {} (CPU%)", &[Action::StepForward, Action::SortByCpu]),
    hint(k('i'), None, "sort by IO is in {} (READ/s, WRITE/s); io.weight and io.max are in {}", &[Action::SortMenu, Action::EditLimits]),
    hint(k('r'), Some(Action::SortReverse), "reverse sort here (systemd-cgtop's r: figures here count the subtree)", &[]),
    hint(k('+'), Some(Action::Expand), "expand here; the refresh interval is {}", &[Action::SetInterval]),
    hint(k('-'), Some(Action::Collapse), "collapse here; the refresh interval is {}", &[Action::SetInterval]),
    hint(k('P'), Some(Action::SortByCpu), "sort by CPU% here, as htop (systemd-cgtop's P, processes or tasks: none)", &[]),
    hint(k('%'), Some(Action::ToggleCpuScale), "CPU % of one core or of the whole machine here", &[]),
    hint(k(' '), None, "no tags (htop), no refresh now (systemd-cgtop): interval {}, pause {}", &[Action::SetInterval, Action::Pause]),
];

/// The hint of `ev` on the main view (see [`Hint`]), in words: `None`
/// for a key without one, or a bound key whose action is not the
/// built-in one any more (the settings file rebound it).
pub fn hint_for(ev: &KeyEvent) -> Option<(Key, String)> {
    let h = HINTS.iter().find(|h| matches(&h.key, ev))?;
    if lookup(Scope::Main, ev) != h.here {
        return None;
    }
    Some((h.key, hint_words(h)))
}

/// A hint's line: the key, then its words with each `{}` made the keys
/// of its action.
pub fn hint_words(h: &Hint) -> String {
    let mut words = String::new();
    let mut to = h.to.iter();
    let mut parts = h.words.split("{}");
    words.push_str(parts.next().unwrap_or(""));
    for part in parts {
        let keys = to
            .next()
            .map(|a| keys_of(Scope::Main, *a).join(" or "))
            .unwrap_or_default();
        words.push_str(if keys.is_empty() { "(unbound)" } else { &keys });
        words.push_str(part);
    }
    format!("{}: {words}", key_name(&h.key))
}

/// Normalises a key event: SHIFT on a character is already in the
/// character (crossterm reports 'G' with or without SHIFT).
fn matches(key: &Key, ev: &KeyEvent) -> bool {
    if *key == ANY {
        return true;
    }
    let mods = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::SHIFT | KeyModifiers::ALT);
    if key.code != ev.code {
        return false;
    }
    match ev.code {
        // Shift-Tab comes as BackTab, with or without SHIFT
        KeyCode::Char(_) | KeyCode::BackTab => {
            key.mods == (mods - KeyModifiers::SHIFT) || key.mods == mods
        }
        _ => key.mods == mods,
    }
}

/// The action bound to `ev` in `scope`.
/// Actions whose key works on every screen, dialogs included, though
/// their row is listed under the main view: Ctrl-Z suspends from anywhere,
/// as a terminal's own SIGTSTP would (htop too).
pub const GLOBAL: &[Action] = &[Action::Suspend];

/// The global action (see [`GLOBAL`]) bound to `ev`, if any.
pub fn global(ev: &KeyEvent) -> Option<Action> {
    active()
        .iter()
        .filter(|b| GLOBAL.contains(&b.action))
        .find(|b| b.keys.iter().any(|k| matches(k, ev)))
        .map(|b| b.action)
}

pub fn lookup(scope: Scope, ev: &KeyEvent) -> Option<Action> {
    active()
        .iter()
        .filter(|b| b.scope == scope)
        .find(|b| b.keys.iter().any(|k| matches(k, ev)))
        .map(|b| b.action)
}

/// How a key is written in the help and the footer.
pub fn key_name(key: &Key) -> String {
    let base = match key.code {
        KeyCode::Char(' ') => "Space".to_owned(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Up => "Up".into(),
        KeyCode::Down => "Down".into(),
        KeyCode::Left => "Left".into(),
        KeyCode::Right => "Right".into(),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        KeyCode::Home => "Home".into(),
        KeyCode::End => "End".into(),
        KeyCode::Tab => "Tab".into(),
        KeyCode::Enter => "Enter".into(),
        KeyCode::Esc => "Esc".into(),
        KeyCode::Backspace => "Bksp".into(),
        KeyCode::Delete => "Del".into(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::BackTab => "S-Tab".into(),
        KeyCode::Null => "any key".into(),
        other => format!("{other:?}"),
    };
    if key.mods.contains(KeyModifiers::CONTROL) && matches!(key.code, KeyCode::Char(_)) {
        format!("^{}", base.to_uppercase())
    } else if key.mods.contains(KeyModifiers::CONTROL) {
        format!("C-{base}")
    } else if key.mods.contains(KeyModifiers::ALT) {
        format!("M-{base}")
    } else if key.mods.contains(KeyModifiers::SHIFT) && !matches!(key.code, KeyCode::Char(_)) {
        format!("S-{base}")
    } else {
        base
    }
}

/// Bindings of one scope, for the help screen, without duplicate keys
/// that only differ by an implied SHIFT.
pub fn bindings(scope: Scope) -> impl Iterator<Item = &'static Binding> {
    active().iter().filter(move |b| b.scope == scope)
}

/// The help lines of one scope: each binding's keys (a key that differs
/// only by an implied SHIFT once) and its text; the run of detail-page
/// bindings is one line.
pub fn help_lines(scope: Scope) -> Vec<(String, String)> {
    help_rows(scope)
        .into_iter()
        .map(|(keys, help, _)| (keys, help))
        .collect()
}

/// A run of detail-page rows: their keys, texts and setting names.
type Pages<'a> = (Vec<String>, Vec<&'a str>, Vec<String>);

/// [`help_lines`] with the settings-file names of each line's actions.
fn help_rows(scope: Scope) -> Vec<(String, String, Vec<String>)> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    if scope == Scope::Text {
        // typed characters are not rows: every other key would be one
        out.push((
            "(characters)".into(),
            "typed into the text at the cursor".into(),
            Vec::new(),
        ));
    }
    let flush = |pages: Pages<'_>, out: &mut Vec<(String, String, Vec<String>)>| {
        let (k, h, n) = pages;
        out.push((k.join(" "), format!("detail: {}", h.join(", ")), n));
    };
    let mut pages: Option<Pages<'_>> = None;
    for b in bindings(scope) {
        let keys = key_names(b);
        if matches!(b.action, Action::DetailPage(_)) {
            let (k, h, n) = pages.get_or_insert_with(Default::default);
            k.extend(keys);
            h.push(b.help.trim_start_matches("detail: "));
            n.push(action_name(b.action));
            continue;
        }
        if let Some(p) = pages.take() {
            flush(p, &mut out);
        }
        out.push((
            keys.join(" "),
            b.help.to_owned(),
            vec![action_name(b.action)],
        ));
    }
    if let Some(p) = pages.take() {
        flush(p, &mut out);
    }
    out
}

/// The keys bound to `action` in `scope`, as the help writes them
/// ("U/^R"), for a screen that names them in its text.
pub fn keys_text(scope: Scope, action: Action) -> String {
    bindings(scope)
        .filter(|b| b.action == action)
        .flat_map(key_names)
        .collect::<Vec<_>>()
        .join("/")
}

/// The names of a binding's keys, each once.
fn key_names(b: &Binding) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for k in b.keys {
        let name = key_name(k);
        if !keys.contains(&name) {
            keys.push(name);
        }
    }
    keys
}

/// The keys of `scope` that change the hierarchy, each once, in table
/// order: what read-only mode turns off.
pub fn write_keys(scope: Scope) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for b in bindings(scope).filter(|b| b.action.writes()) {
        for k in key_names(b) {
            if !out.contains(&k) {
                out.push(k);
            }
        }
    }
    out
}

/// A dialog's keys for its bottom border: each row with a footer label,
/// all its keys; rows with the same label share it ("Up/Down move").
pub fn footer_text(scope: Scope) -> String {
    let mut items: Vec<(Vec<String>, &str)> = Vec::new();
    for b in bindings(scope) {
        let Some(label) = b.footer else { continue };
        // a letter bound in both cases shows once, in lower case: the
        // border has no room to spare ("y/Enter", not "y/Y/Enter")
        let mut names = key_names(b);
        let both = |n: &String| {
            n.chars().count() == 1
                && n.chars().all(|c| c.is_ascii_uppercase())
                && names.contains(&n.to_ascii_lowercase())
        };
        let shown: Vec<String> = names.iter().filter(|n| !both(n)).cloned().collect();
        names = shown;
        match items.iter_mut().find(|(_, l)| *l == label) {
            Some((keys, _)) => keys.extend(names),
            None => items.push((names, label)),
        }
    }
    // typing is said by the dialog itself ("type a new value") and the
    // help; the border names it only where the text is not the obvious
    // thing to type, and keeps its room for the keys
    let typing = match scope {
        Scope::Move => Some("type to filter".to_owned()),
        Scope::ConfirmTyped => Some("type the name".to_owned()),
        _ => None,
    };
    typing
        .into_iter()
        .chain(
            items
                .into_iter()
                .map(|(keys, label)| format!("{} {label}", keys.join("/"))),
        )
        .collect::<Vec<_>>()
        .join("  ")
}

/// The names of the keys bound to `action` in `scope` ("PgUp"), for a
/// dialog that states a key's rule in its own text.
pub fn keys_of(scope: Scope, action: Action) -> Vec<String> {
    bindings(scope)
        .filter(|b| b.action == action)
        .flat_map(key_names)
        .collect()
}

/// README's key tables: one per scope, from the built-in table (a test
/// compares them with README.md), with the names the settings file's
/// `[keys.SCOPE]` tables use.
pub fn markdown() -> String {
    let mut out = String::new();
    for scope in Scope::ALL {
        out.push_str(&format!(
            "**{}** (`[keys.{}]`)\n\n| keys | what | setting |\n|---|---|---|\n",
            scope.title(),
            scope_name(scope)
        ));
        for (keys, help, names) in help_rows(scope) {
            // a `|` key would end the cell
            let keys = keys.replace('|', "\\|");
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            out.push_str(&format!("| {keys} | {help} | {} |\n", names.join(" ")));
        }
        out.push('\n');
    }
    out.push_str(
        "**Keys from htop and systemd-cgtop**: what the main view says when one is pressed \
         (a key cgtop binds otherwise: once a session, after what the key did, or at its next \
         press where the key said what it did; an unbound key: \
         every time; any other unbound key: that it is not a key here)\n\n\
         | key | what cgtop says |\n|---|---|\n",
    );
    for h in HINTS {
        let (key, words) = hint_words(h)
            .split_once(": ")
            .map(|(k, w)| (k.replace('|', "\\|"), w.replace('|', "\\|")))
            .unwrap_or_default();
        out.push_str(&format!("| {key} | {words} |\n"));
    }
    out.push('\n');
    out
}

thread_local! {
    /// The table in force on this thread: [`KEYMAP`] until [`install`].
    static ACTIVE: std::cell::Cell<&'static [Binding]> = const { std::cell::Cell::new(KEYMAP) };
}

/// The table dispatch, the footers and the help read: the built-in
/// [`KEYMAP`], or the one [`install`] put in force on this thread.
pub fn active() -> &'static [Binding] {
    ACTIVE.with(std::cell::Cell::get)
}

/// Puts `table` (from [`build`]) in force on this thread: once, at
/// start, before the view runs (a state test: before its keys). The
/// table lives as long as the program, so it is leaked, once.
pub fn install(table: Vec<Binding>) {
    let table: &'static [Binding] = Box::leak(table.into_boxed_slice());
    ACTIVE.with(|a| a.set(table));
}

/// The name of a scope in the settings file (`[keys.main]`).
pub fn scope_name(scope: Scope) -> String {
    snake(&format!("{scope:?}"))
}

/// The name of an action in the settings file (`freeze`,
/// `detail_page_1`).
pub fn action_name(action: Action) -> String {
    match action {
        Action::DetailPage(n) => format!("detail_page_{}", u16::from(n) + 1),
        a => snake(&format!("{a:?}")),
    }
}

/// `SortPrev` -> `sort_prev`.
fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The keys a settings file may name besides one character, and what
/// each is.
const KEY_NAMES: [(&str, KeyCode); 20] = [
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pgup", KeyCode::PageUp),
    ("pageup", KeyCode::PageUp),
    ("pgdn", KeyCode::PageDown),
    ("pagedown", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("enter", KeyCode::Enter),
    ("return", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("escape", KeyCode::Esc),
    ("backspace", KeyCode::Backspace),
    ("bksp", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("del", KeyCode::Delete),
];

/// A key as the settings file writes it: one character (`F`, `!`),
/// `space`, a key's name (`enter`, `pgdn`, `f2`: any case), or one of
/// these after `ctrl-`, `alt-` or `shift-` (`ctrl-k`; the help's own
/// spellings `^K`, `C-Left`, `M-b`, `S-Up` too).
pub fn parse_key(text: &str) -> Result<Key, String> {
    let bad = || {
        format!(
            "no key {text:?}: write one character (\"F\"), a name (\"enter\", \"pgdn\", \"f2\", \"space\") or ctrl-, alt-, shift- before one (\"ctrl-k\")"
        )
    };
    let (mods, rest) = if let Some(r) = text.strip_prefix('^').filter(|r| r.chars().count() == 1) {
        (KeyModifiers::CONTROL, r)
    } else {
        let lower = text.to_ascii_lowercase();
        let pre = [
            ("ctrl-", KeyModifiers::CONTROL),
            ("c-", KeyModifiers::CONTROL),
            ("alt-", KeyModifiers::ALT),
            ("m-", KeyModifiers::ALT),
            ("shift-", KeyModifiers::SHIFT),
            ("s-", KeyModifiers::SHIFT),
        ];
        match pre
            .iter()
            .find(|(p, _)| lower.starts_with(p) && text.len() > p.len())
        {
            Some((p, m)) => (*m, &text[p.len()..]),
            None => (KeyModifiers::NONE, text),
        }
    };
    let lower = rest.to_ascii_lowercase();
    let mut chars = rest.chars();
    let kc = match (chars.next(), chars.next()) {
        (Some(c), None) if !c.is_control() => KeyCode::Char(c),
        _ if lower == "space" => KeyCode::Char(' '),
        _ => {
            if let Some((_, c)) = KEY_NAMES.iter().find(|(n, _)| *n == lower) {
                *c
            } else if let Some(n) = lower
                .strip_prefix('f')
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|n| (1..=12).contains(n))
            {
                KeyCode::F(n)
            } else {
                return Err(bad());
            }
        }
    };
    Ok(match (kc, mods) {
        // a control letter comes as the lower-case letter with CONTROL
        (KeyCode::Char(c), KeyModifiers::CONTROL) => ctrl(c.to_ascii_lowercase()),
        // a shifted character is the character itself ("shift-g" is G)
        (KeyCode::Char(c), KeyModifiers::SHIFT) => k(c.to_ascii_uppercase()),
        // Shift-Tab comes as BackTab
        (KeyCode::BackTab, _) | (KeyCode::Tab, KeyModifiers::SHIFT) => code(KeyCode::BackTab),
        (kc, mods) => Key { code: kc, mods },
    })
}

/// Whether `a` and `b` are one key to [`lookup`]: the same, or a
/// character with and without an implied SHIFT.
fn same_key(a: &Key, b: &Key) -> bool {
    let ev = KeyEvent::new(b.code, b.mods);
    *a != ANY && *b != ANY && (matches(a, &ev) || matches(b, &KeyEvent::new(a.code, a.mods)))
}

/// The built-in table with the settings file's `[keys]` in force: each
/// line gives its row its keys instead of the built-in ones. An unknown
/// scope, action (one the scope has no row for) or key name is an error
/// of that line, and so is the table it makes where a key is bound twice
/// in a scope (naming both actions), where a screen with a text field
/// would lose a character to a key, or where a key would shadow Ctrl-Z's
/// suspend.
pub fn build(rebinds: &[Rebind]) -> Result<Vec<Binding>, ConfigError> {
    let mut table: Vec<Binding> = KEYMAP.to_vec();
    // which line rebound each row, for the error of a conflict
    let mut line_of: Vec<Option<&Rebind>> = vec![None; table.len()];
    for r in rebinds {
        let Some(scope) = Scope::ALL.into_iter().find(|s| scope_name(*s) == r.scope) else {
            let names: Vec<String> = Scope::ALL.into_iter().map(scope_name).collect();
            return Err(r.error(format!(
                "no screen {:?}; the screens are {}",
                r.scope,
                names.join(", ")
            )));
        };
        let Some(row) = table
            .iter()
            .position(|b| b.scope == scope && action_name(b.action) == r.action)
        else {
            let names: Vec<String> = table
                .iter()
                .filter(|b| b.scope == scope)
                .map(|b| action_name(b.action))
                .collect();
            return Err(r.error(format!(
                "no action {:?} in {}; its actions are {}",
                r.action,
                r.scope,
                names.join(", ")
            )));
        };
        if r.keys.is_empty() {
            return Err(r.error("no key: give one (\"F\") or a list ([\"F\", \"f5\"])"));
        }
        let mut keys: Vec<Key> = Vec::new();
        for t in &r.keys {
            let key = parse_key(t).map_err(|e| r.error(e))?;
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        table[row].keys = Box::leak(keys.into_boxed_slice());
        line_of[row] = Some(r);
    }
    // the first conflict, blamed on the later line of the two rows
    let blame = |i: usize, j: usize, what: String| -> ConfigError {
        let r = match (line_of[i], line_of[j]) {
            (Some(a), Some(b)) => Some(if a.line >= b.line { a } else { b }),
            (a, b) => a.or(b),
        };
        match r {
            Some(r) => r.error(what),
            None => ConfigError {
                line: None,
                key: None,
                what,
            },
        }
    };
    let suspend: Vec<usize> = (0..table.len())
        .filter(|&i| GLOBAL.contains(&table[i].action))
        .collect();
    for i in 0..table.len() {
        let a = &table[i];
        // a screen with a text field: a plain character is typed
        if a.scope.has_text() || a.scope == Scope::Text {
            if let Some(key) = a.keys.iter().find(|k| {
                matches!(k.code, KeyCode::Char(_))
                    && !k.mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            }) {
                return Err(blame(
                    i,
                    i,
                    format!(
                        "{} in {} would not be typed into the text: a key here needs ctrl- or alt-, or is not a character",
                        key_name(key),
                        scope_name(a.scope)
                    ),
                ));
            }
        }
        for (j, b) in table.iter().enumerate().skip(i + 1) {
            let clash = b.scope == a.scope
                || (a.scope == Scope::Text && b.scope.has_text())
                || (b.scope == Scope::Text && a.scope.has_text())
                || suspend.contains(&i)
                || suspend.contains(&j);
            if !clash {
                continue;
            }
            if let Some(key) = a
                .keys
                .iter()
                .find(|x| b.keys.iter().any(|y| same_key(x, y)))
            {
                let scope = if suspend.contains(&i) || a.scope == Scope::Text {
                    b.scope
                } else {
                    a.scope
                };
                return Err(blame(
                    i,
                    j,
                    format!(
                        "{} is bound to both {} and {} in {}",
                        key_name(key),
                        action_name(a.action),
                        action_name(b.action),
                        scope_name(scope)
                    ),
                ));
            }
        }
    }
    // the key that goes ahead in a confirmation must not be a key of the
    // main screen's action it confirms: pressed twice, it would kill,
    // freeze or remove without a look at the dialog
    for (i, c) in table.iter().enumerate() {
        if !CONFIRMING.contains(&(c.scope, c.action)) {
            continue;
        }
        for (j, m) in table.iter().enumerate() {
            if m.scope != Scope::Main || !CONFIRMED.contains(&m.action) {
                continue;
            }
            if let Some(key) = c
                .keys
                .iter()
                .find(|x| m.keys.iter().any(|y| same_key(x, y)))
            {
                return Err(blame(
                    i,
                    j,
                    format!(
                        "{} goes ahead ({}) in {} and is {} in main: pressed twice it would {} \
                         without reading the confirmation",
                        key_name(key),
                        action_name(c.action),
                        scope_name(c.scope),
                        action_name(m.action),
                        action_name(m.action),
                    ),
                ));
            }
        }
    }
    Ok(table)
}

/// The rows that go ahead in a confirmation.
const CONFIRMING: [(Scope, Action); 4] = [
    (Scope::Confirm, Action::Accept),
    (Scope::Confirm, Action::ThroughSystemd),
    (Scope::ConfirmTyped, Action::Accept),
    (Scope::ConfirmTyped, Action::ThroughSystemd),
];

/// The main screen's actions whose write asks for a confirmation
/// (`Op::confirm_reason`: a kill, a freeze, a removal) or may (an undo or
/// redo of one).
const CONFIRMED: [Action; 5] = [
    Action::Kill,
    Action::Freeze,
    Action::RemoveGroup,
    Action::Undo,
    Action::Redo,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn no_key_bound_twice_in_a_scope() {
        let mut seen: HashSet<(Scope, KeyCode, KeyModifiers)> = HashSet::new();
        for b in KEYMAP {
            for key in b.keys {
                assert!(
                    seen.insert((b.scope, key.code, key.mods)),
                    "{:?} bound twice in {:?}",
                    key,
                    b.scope
                );
            }
        }
    }

    #[test]
    fn every_binding_is_reachable_by_its_own_keys() {
        for b in KEYMAP {
            for key in b.keys {
                let ev = KeyEvent::new(key.code, key.mods);
                assert_eq!(
                    lookup(b.scope, &ev),
                    Some(b.action),
                    "{key:?} in {:?}",
                    b.scope
                );
            }
        }
    }

    #[test]
    fn shifted_letters_and_ctrl_c() {
        let ev = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(lookup(Scope::Main, &ev), Some(Action::End));
        let ev = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(lookup(Scope::Main, &ev), Some(Action::Quit));
        let ev = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
        assert_eq!(lookup(Scope::Main, &ev), None);
    }

    /// Every action a scope's handler acts on has a key in that scope, and
    /// every scope has at least one row.
    #[test]
    fn every_action_of_every_scope_has_a_key() {
        for scope in Scope::ALL {
            assert!(bindings(scope).next().is_some(), "{scope:?} has no keys");
            for action in scope.actions() {
                assert!(
                    bindings(scope).any(|b| b.action == *action),
                    "{action:?} has no key in {scope:?}"
                );
            }
        }
    }

    /// A screen with a text input leaves every plain character to the
    /// text: a row on one would make that letter impossible to type.
    #[test]
    fn text_scopes_leave_typed_characters_to_the_text() {
        for scope in Scope::ALL.into_iter().filter(|s| s.has_text()) {
            for b in bindings(scope).chain(bindings(Scope::Text)) {
                for key in b.keys {
                    let plain = matches!(key.code, KeyCode::Char(_))
                        && !key
                            .mods
                            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                    assert!(!plain, "{key:?} in {scope:?} would not be typed");
                }
            }
        }
    }

    #[test]
    fn footers_list_every_labelled_key() {
        assert_eq!(
            footer_text(Scope::Controllers),
            "Up/Down move  Space/x toggle  p path plan  Enter apply  Esc/^C cancel"
        );
        assert_eq!(
            footer_text(Scope::Log),
            "Up/k/Down/j scroll  e script  Esc/q/L/Enter close"
        );
        assert_eq!(footer_text(Scope::Message), "any key closes");
        assert_eq!(
            footer_text(Scope::Confirm),
            "y/Enter go ahead  n/Esc/^C cancel"
        );
        assert_eq!(
            footer_text(Scope::Limits),
            "Up/S-Tab/Down/Tab field  PgUp/PgDn device  Enter write  Esc/^C close"
        );
    }

    /// Each hint stands beside the table: its key has the action it
    /// says (or none), each `{}` has an action with a key on the main
    /// view, and no key has two hints.
    #[test]
    fn hints_agree_with_the_table() {
        let mut seen: HashSet<Key> = HashSet::new();
        for h in HINTS {
            assert!(seen.insert(h.key), "{:?} has two hints", h.key);
            let ev = KeyEvent::new(h.key.code, h.key.mods);
            assert_eq!(lookup(Scope::Main, &ev), h.here, "{:?}", h.key);
            assert_eq!(h.words.matches("{}").count(), h.to.len(), "{:?}", h.key);
            for a in h.to {
                assert!(!keys_text(Scope::Main, *a).is_empty(), "{a:?} has no key");
            }
            let (_, words) = hint_for(&ev).expect("a hint");
            assert!(
                !words.contains("{}") && !words.contains("(unbound)"),
                "{words}"
            );
        }
    }

    #[test]
    fn key_names() {
        assert_eq!(key_name(&ctrl('c')), "^C");
        assert_eq!(key_name(&code(KeyCode::F(10))), "F10");
        assert_eq!(key_name(&shift(KeyCode::Right)), "S-Right");
        assert_eq!(key_name(&ctrl_code(KeyCode::Left)), "C-Left");
        assert_eq!(key_name(&alt('b')), "M-b");
        assert_eq!(key_name(&ANY), "any key");
    }
}
