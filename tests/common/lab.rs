//! The write tests' shared steps on the lab tree (`common::lab_tree`):
//! a writable app on it, selecting and inspecting a group, the open
//! confirmation, the write requests among effects, and the limits form's
//! field moves. One copy for tests/state/actions.rs, preflight_state.rs,
//! limits_form_state.rs and undo_state.rs.

use super::{app_on, key, lab_tree, pure_v2_mount, read_inspection, select, send, type_text};
use cgtop::app::dialog::confirm::Confirm;
use cgtop::app::dialog::limits::{Field, FieldKind, LimitsForm};
use cgtop::app::writes::WriteRequest;
use cgtop::app::{App, Effect, Mode};
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use crossterm::event::KeyCode;

/// The lab tree at 120x40 after one refresh, writable.
pub fn lab() -> (App, Collector, tempfile::TempDir) {
    let dir = lab_tree();
    let (mut a, c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    (a, c, dir)
}

/// Selects `path` and reads it in full, as the collector does right after
/// the selection moved (the dialogs need the group's files).
pub fn on(a: &mut App, c: &mut Collector, path: &str) {
    select(a, c, path);
    read_inspection(a, c, 1.0);
}

pub fn g(path: &str) -> GroupPath {
    GroupPath::new(path)
}

/// The open confirmation (a test failure when there is none).
pub fn confirm(a: &App) -> &Confirm {
    match &a.mode {
        Mode::Confirm(c) => c,
        m => panic!("not a confirmation: {m:?}"),
    }
}

/// The writes among some effects.
pub fn writes(fx: &[Effect]) -> Vec<&WriteRequest> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Write(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// The open limits form.
pub fn form(a: &App) -> &LimitsForm {
    match &a.mode {
        Mode::Limits(f) => f,
        m => panic!("not the limits form: {m:?}"),
    }
}

/// The limits form's field under the cursor.
pub fn field(a: &App) -> &Field {
    let f = form(a);
    &f.fields[f.cursor]
}

/// Moves the form's cursor onto the field of `file`.
pub fn goto(a: &mut App, c: &mut Collector, file: &str) {
    let want = FieldKind::ALL
        .iter()
        .position(|k| k.file() == file)
        .unwrap_or_else(|| panic!("{file} is no field"));
    while form(a).cursor < want {
        send(a, c, key(KeyCode::Down));
    }
    while form(a).cursor > want {
        send(a, c, key(KeyCode::Up));
    }
    assert_eq!(field(a).kind.file(), file);
}

/// Empties the field under the cursor.
pub fn clear_input(a: &mut App, c: &mut Collector) {
    while !field(a).input.is_empty() {
        send(a, c, key(KeyCode::Backspace));
    }
}

/// In the open limits form: the field of `file`, `text` typed, Enter.
pub fn enter_limit(a: &mut App, c: &mut Collector, file: &str, text: &str) -> Vec<Effect> {
    goto(a, c, file);
    clear_input(a, c);
    type_text(a, c, text);
    send(a, c, key(KeyCode::Enter))
}
