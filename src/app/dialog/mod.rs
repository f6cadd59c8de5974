//! The write dialogs: each in its own module, owning its state, its
//! `open` and its key handler. A handler gets the keymap's action for the
//! key (the dialog's own scope) and returns one [`Transition`]; the
//! dispatcher here is the only code that changes `app.mode` for a key in
//! a dialog. Nothing here performs I/O: ops are built with `model::write`,
//! input is parsed with `model::write::input`, and the writer thread does the
//! rest.
//!
//! Flow of every write: action key -> dialog (or straight to)
//! [`confirm::request`] -> a confirmation where the policy asks for one ->
//! `Effect::Write` -> writer thread -> `Msg::WriteFinished` ->
//! `app::writes::on_write_finished`.

pub mod columns;
pub mod confirm;
pub mod controllers;
pub mod direct;
pub mod events;
pub mod leaf_fix;
pub mod limits;
pub mod log;
pub mod move_picker;
pub mod new_group;
pub mod raw;
pub mod sort_by;

use super::keymap;
use super::text_input::{Input, TextInput, Typed};
use super::{App, Effect, Level, Mode};
use crate::model::write::history::Direction;
use crate::model::GroupPath;

/// What a key (or an opener) does to the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The screen stays as it is (the dialog keeps its new state).
    Stay,
    /// Back to the main view.
    Close,
    /// Another screen replaces this one (a confirmation, a dialog opened
    /// from the main view).
    Open(Mode),
}

/// Makes a transition the current screen.
pub fn apply(app: &mut App, t: Transition) {
    match t {
        Transition::Stay => {}
        Transition::Close => app.mode = Mode::Normal,
        Transition::Open(m) => app.mode = m,
    }
}

/// The main view's actions that open a dialog or write: what they do to
/// the screen; `None` for every other action.
pub fn on_main_action(
    app: &mut App,
    action: keymap::Action,
    fx: &mut Vec<Effect>,
) -> Option<Transition> {
    use keymap::Action as A;
    Some(match action {
        A::Controllers => controllers::ControllersDialog::open(app),
        A::EditLimits => limits::LimitsForm::open(app),
        A::EditRaw => raw::RawEditor::open(app),
        A::MoveProcess => move_picker::MovePicker::open(app),
        A::NewGroup => new_group::NamePrompt::open(app),
        A::ActionLog => log::open(app),
        A::Events => events::open(app),
        A::ChooseColumns => columns::ColumnsDialog::open(app),
        A::SortMenu => sort_by::SortByDialog::open(app),
        A::Freeze => direct::freeze_toggle(app, fx),
        A::Kill => direct::kill_group(app, fx),
        A::RemoveGroup => direct::remove_group(app, fx),
        A::Undo => direct::replay(app, Direction::Undo, fx),
        A::Redo => direct::replay(app, Direction::Redo, fx),
        _ => return None,
    })
}

/// Handles a key or a paste while a dialog is open. Returns true when
/// it was one. A paste is never an action: it reaches the dialog's text
/// field if one has the focus, and is dropped otherwise.
pub fn on_input(app: &mut App, ev: Input<'_>, fx: &mut Vec<Effect>) -> bool {
    let action = match ev {
        Input::Key(k) => keymap::lookup(app.scope(), k),
        Input::Paste(_) => None,
    };
    let mode = std::mem::replace(&mut app.mode, Mode::Normal);
    let (back, t) = match mode {
        Mode::Controllers(mut d) => {
            let t = d.key(app, action, fx);
            (Mode::Controllers(d), t)
        }
        Mode::Columns(mut d) => {
            let t = d.key(app, action, fx);
            (Mode::Columns(d), t)
        }
        Mode::SortBy(mut d) => {
            let t = d.key(app, action);
            (Mode::SortBy(d), t)
        }
        Mode::Limits(mut f) => {
            let t = f.key(app, action, ev, fx);
            (Mode::Limits(f), t)
        }
        Mode::Raw(mut r) => {
            let t = r.key(app, action, ev, fx);
            (Mode::Raw(r), t)
        }
        Mode::Confirm(mut c) => {
            let t = c.key(app, action, ev, fx);
            (Mode::Confirm(c), t)
        }
        Mode::Move(mut m) => {
            let t = m.key(app, action, ev, fx);
            (Mode::Move(m), t)
        }
        Mode::NewGroup(mut p) => {
            let t = p.key(app, action, ev, fx);
            (Mode::NewGroup(p), t)
        }
        Mode::LeafFix(mut l) => {
            let t = l.key(app, action, ev, fx);
            (Mode::LeafFix(l), t)
        }
        Mode::Log { mut scroll } => {
            let t = log::key(&mut scroll, app, action, fx);
            (Mode::Log { scroll }, t)
        }
        Mode::Events { mut cursor } => {
            let t = events::key(&mut cursor, app, action, fx);
            (Mode::Events { cursor }, t)
        }
        // any key closes a message (its one row)
        Mode::Message { title, lines } => {
            let t = if action == Some(keymap::Action::Close) {
                Transition::Close
            } else {
                Transition::Stay
            };
            (Mode::Message { title, lines }, t)
        }
        other => {
            app.mode = other;
            return false;
        }
    };
    app.mode = back;
    apply(app, t);
    true
}

/// Passes a key or a paste to a text input; text refused at the cap
/// says so on the status line, which stays under the dialog. Returns
/// whether the text changed.
fn type_into(app: &mut App, input: &mut TextInput, ev: Input<'_>) -> bool {
    match input.on_input(ev) {
        // what the status said was about the text before this edit (an
        // error on Enter, a refusal at the cap): it no longer holds
        Typed::Changed => {
            app.status = None;
            true
        }
        Typed::Refused(e) => {
            app.set_status(Level::Warn, e.to_string());
            false
        }
        Typed::Cut(e) => {
            app.set_status(Level::Warn, e.to_string());
            true
        }
        Typed::Moved | Typed::NotText => false,
    }
}

/// Up and Down on a list of `len` rows, the cursor at `cursor`: the new
/// cursor (it stops at either end), or `None` for any other action. Every
/// dialog with a list moves through it this way.
fn list_step(cursor: usize, len: usize, action: Option<keymap::Action>) -> Option<usize> {
    match action {
        Some(keymap::Action::Up) => Some(cursor.saturating_sub(1)),
        Some(keymap::Action::Down) => Some((cursor + 1).min(len.saturating_sub(1))),
        _ => None,
    }
}

/// Refuses when writing is off (read-only, or the past on screen); says
/// why.
fn writable(app: &mut App) -> bool {
    if let Some(why) = app.writes_off() {
        app.set_status(Level::Warn, why.to_string());
        return false;
    }
    true
}

fn inspected_detail(app: &App) -> Option<&crate::model::GroupDetail> {
    let sel = app.selected.as_ref()?;
    app.inspection
        .as_ref()
        .filter(|f| &f.path == sel)
        .map(|f| &f.detail)
}

fn raw_line(app: &App, file: &str) -> Option<String> {
    let d = inspected_detail(app)?;
    let (_, v) = d.raw.iter().find(|(n, _)| n == file)?;
    Some(
        v.as_ref()
            .map_or_else(|e| format!("({e})"), |t| t.replace('\n', " | ")),
    )
}

fn not_ready(app: &mut App) -> Option<GroupPath> {
    let sel = app.selected.clone()?;
    if inspected_detail(app).is_none() {
        app.set_status(
            Level::Warn,
            "still reading this group; try again in a moment",
        );
        return None;
    }
    Some(sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::writes::WriteRequest;
    use crate::app::HostInfo;
    use crate::model::write;
    use crate::model::write::history::{Entry, Replay, Step};
    use crate::model::{MountInfo, MountMode};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use std::time::Duration;

    fn app(mode: Mode) -> App {
        let mount = MountInfo {
            root: "/sys/fs/cgroup".into(),
            mode: MountMode::PureV2,
        };
        let mut a = App::new(
            HostInfo::default(),
            mount,
            GroupPath::root(),
            Duration::from_secs(1),
        );
        a.mode = mode;
        a
    }

    fn press(a: &mut App, code: KeyCode) -> Vec<Effect> {
        let mut fx = Vec::new();
        assert!(on_input(
            a,
            Input::Key(&KeyEvent::new(code, KeyModifiers::NONE)),
            &mut fx
        ));
        fx
    }

    fn question(replay: Option<Replay>) -> Mode {
        let g = GroupPath::new("lab");
        Mode::Confirm(Box::new(confirm::Confirm {
            question: confirm::Question::Write,
            reasons: Vec::new(),
            request: WriteRequest::Ops(vec![write::freeze(&g, true)]),
            typed: None,
            dangers: Vec::new(),
            replay,
            layout: crate::model::host::layout::Layout::default(),
            systemd: None,
        }))
    }

    #[test]
    fn up_and_down_stop_at_the_ends_of_a_list() {
        use keymap::Action::{Accept, Down, Up};
        assert_eq!(list_step(0, 3, Some(Up)), Some(0));
        assert_eq!(list_step(1, 3, Some(Down)), Some(2));
        assert_eq!(list_step(2, 3, Some(Down)), Some(2));
        assert_eq!(list_step(0, 0, Some(Down)), Some(0));
        assert_eq!(list_step(1, 3, Some(Accept)), None);
        assert_eq!(list_step(1, 3, None), None);
    }

    #[test]
    fn the_main_view_is_not_a_dialog() {
        let mut a = app(Mode::Normal);
        let mut fx = Vec::new();
        let q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        assert!(!on_input(&mut a, Input::Key(&q), &mut fx));
        assert_eq!((a.mode, fx), (Mode::Normal, Vec::new()));
    }

    #[test]
    fn any_key_closes_a_message() {
        for code in [KeyCode::Char('x'), KeyCode::Esc, KeyCode::F(5)] {
            let mut a = app(Mode::Message {
                title: "t".into(),
                lines: Vec::new(),
            });
            press(&mut a, code);
            assert_eq!(a.mode, Mode::Normal, "{code:?}");
        }
    }

    #[test]
    fn a_stay_keeps_the_dialog_with_its_new_state() {
        let mut a = app(Mode::Log { scroll: 1 });
        a.log = Vec::new();
        press(&mut a, KeyCode::Up);
        assert_eq!(a.mode, Mode::Log { scroll: 0 });
        // a key the log does not know leaves it as it is
        press(&mut a, KeyCode::Char('x'));
        assert_eq!(a.mode, Mode::Log { scroll: 0 });
        press(&mut a, KeyCode::Char('q'));
        assert_eq!(a.mode, Mode::Normal);
    }

    #[test]
    fn a_confirmation_writes_on_yes_and_gives_back_its_undo_on_no() {
        let mut a = app(question(None));
        let fx = press(&mut a, KeyCode::Char('y'));
        assert_eq!(a.mode, Mode::Normal);
        assert!(matches!(
            fx.as_slice(),
            [Effect::Write(WriteRequest::Ops(_))]
        ));
        let lab = GroupPath::new("lab");
        let entry = Entry {
            steps: vec![Step {
                did: write::freeze(&lab, false),
                back: write::freeze(&lab, true),
            }],
        };
        let replay = |dir| Replay {
            dir,
            entry: entry.clone(),
        };
        for dir in [Direction::Undo, Direction::Redo] {
            let mut a = app(question(Some(replay(dir))));
            assert!(press(&mut a, KeyCode::Char('n')).is_empty());
            assert_eq!(a.mode, Mode::Normal);
            assert_eq!(a.history.stack(dir), std::slice::from_ref(&entry));
            assert!(a.history.in_flight.is_empty());
            // yes: on its way to the writer, off the stack
            let mut a = app(question(Some(replay(dir))));
            assert_eq!(press(&mut a, KeyCode::Char('y')).len(), 1);
            assert!(a.history.stack(dir).is_empty());
            assert_eq!(a.history.in_flight, [replay(dir)]);
        }
    }

    #[test]
    fn apply_makes_the_transition_the_screen() {
        let mut a = app(Mode::Help);
        apply(&mut a, Transition::Stay);
        assert_eq!(a.mode, Mode::Help);
        apply(&mut a, Transition::Open(Mode::Log { scroll: 0 }));
        assert_eq!(a.mode, Mode::Log { scroll: 0 });
        apply(&mut a, Transition::Close);
        assert_eq!(a.mode, Mode::Normal);
    }
}
