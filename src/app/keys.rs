//! Keys and pastes: a key goes to the open dialog, the text field, or
//! the main view's action (folds, F5's flat list, moves, sorts, screens).

use super::keymap::{Action, Scope};
use super::text_input::{Input, TextInput, Typed};
use super::{dialog, keymap, past, text_input};
use super::{
    fmt_secs, parse_interval, App, DetailPage, Effect, Level, Mode, Pane, SortKey, Zoom,
    DETAIL_SCROLL_MAX, INTERVAL_CAP,
};
use crate::model::GroupPath;
use crate::render::columns;
use crate::source::collector::Command;
use crossterm::event::KeyEvent;

/// A paste goes to the text field of the screen, if it has one with the
/// focus; anywhere else it is dropped, and said so: pasted text must not
/// act as keys (a pasted "k" is not Kill, a pasted newline not Enter).
pub(super) fn on_paste(app: &mut App, text: &str, fx: &mut Vec<Effect>) {
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
        (Scope::FindProcess, _) => super::find::on_key(app, None, Input::Paste(text), fx),
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

pub(super) fn on_key(app: &mut App, ev: &KeyEvent, fx: &mut Vec<Effect>) {
    if keymap::global(ev) == Some(Action::Suspend) {
        // the screen (a dialog, the filter, the help) stays as it is and
        // comes back with fg
        fx.push(Effect::Suspend);
        return;
    }
    if app.tree_rows.too_small {
        // only "terminal too small (q quits)" is on screen: q quits,
        // whatever was open; any other key waits for a usable size
        if keymap::lookup(Scope::Main, ev) == Some(Action::Quit) {
            app.quitting = true;
            fx.push(Effect::Quit);
        }
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
        Scope::FindProcess => {
            super::find::on_key(app, action, Input::Key(ev), fx);
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
    // a write with no row to act on (a filter that matches nothing) does
    // nothing: say why, not the key's habit from htop, which would read
    // as if it had asked
    if action.writes() && !matches!(action, Action::Undo | Action::Redo) && app.rows.is_empty() {
        let why = if app.filter.is_empty() {
            "no group shown to act on yet"
        } else {
            "no group shown to act on: the filter matches none (Esc clears it)"
        };
        app.set_status(Level::Warn, why.to_owned());
        return;
    }
    main_action(app, action, fx);
    if let Some((key, words)) = hint {
        let text = match &app.status {
            Some(s) if s.level != Level::Info => format!("{}; {words}", s.text),
            // the key said what it did: the hint waits for the next
            // press (the habit again), and follows the key's words then,
            // or takes the line alone where both do not fit on it
            Some(_) if app.hint_waits.insert(key) => return,
            Some(s)
                if crate::render::fit::width(&s.text) + 2 + crate::render::fit::width(&words)
                    <= usize::from(app.size.0) =>
            {
                format!("{}; {words}", s.text)
            }
            // the key said nothing, or said it the time before
            _ => words,
        };
        let level = app.status.as_ref().map_or(Level::Info, |s| s.level);
        app.hinted.insert(key);
        app.set_status(level, text);
    }
}

/// A write on the selected group (kill, freeze, limits, ...) pressed
/// while the cursor stands where the view moved it when the selected
/// group vanished (its ancestor, a bigger subtree): the operator aimed at
/// the group that went. Refused once, and said; the next press acts on
/// the ancestor (the vanished group is no longer waited for: the
/// selection must not jump back under a dialog about the ancestor).
fn refused_after_vanish(app: &mut App, action: Action) -> bool {
    if !action.writes() || matches!(action, Action::Undo | Action::Redo) {
        return false;
    }
    let Some(v) = app.vanished.take() else {
        return false;
    };
    if app.selected.as_ref() != Some(&v.moved_to) {
        return false;
    }
    app.set_status(
        Level::Warn,
        format!(
            "{} is gone, nothing done; {} again acts on {}",
            v.path.name_display(),
            keymap::keys_text(Scope::Main, action),
            v.moved_to.name_display()
        ),
    );
    true
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
    if refused_after_vanish(app, action) {
        return;
    }
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
        Action::StartFilter => {
            app.filter_from = app.selected.clone();
            app.mode = Mode::Filter;
        }
        Action::FindProcess => app.start_find(),
        Action::StartSearch => {
            let before = app.selected.clone();
            app.mode = Mode::Search { miss: None };
            // the text of the last search: F3 goes on to its next match
            // (from here: a miss puts the cursor back here)
            app.search_from = app.selected.clone();
            if !app.search.is_empty() {
                app.search(true);
            }
            app.search_from = app.selected.clone();
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
            // the strip shows no page: say where it went, and the key
            // that shows it
            if app.tree_rows.strip && app.zoom == Zoom::Split {
                let open = keymap::keys_text(Scope::Main, Action::OpenDetail);
                app.set_status(
                    Level::Info,
                    format!("detail: {} ({open} shows it)", app.page.title()),
                );
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
            let (level, words) = spark_words(app);
            app.set_status(level, words);
        }
        Action::ToggleIdentities => {
            app.identities = !app.identities;
            // the name column's width follows the names shown
            app.rebuild_rows();
            let words = if app.identities {
                "names: who each group is, where known (w: the kernel's names)"
            } else {
                "names: the kernel's (w: who each group is)"
            };
            app.set_status(Level::Info, words);
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
        Action::RedrawScreen => fx.push(Effect::Redraw),
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

/// What `s` says of the sparkline column at the terminal's width now:
/// on, on without room (and the width), or off. A resize says it again
/// where it stood (`app::update`'s `Msg::Resized`).
pub(super) fn spark_words(app: &App) -> (Level, String) {
    let room = match app.zoom {
        Zoom::Tree => app.tree_rows.whole_width,
        Zoom::Split | Zoom::Detail => app.tree_rows.split_width,
    };
    let fits = columns::spark_fits(&app.columns, true, room).0;
    match (app.spark_column, fits) {
        (true, true) => (
            Level::Info,
            // the scale, as the detail's words state theirs
            format!(
                "sparkline column on: CPU %, last {} refreshes, 0..{}% or 0..its max (s: off)",
                crate::render::spark::COLUMN_WIDTH,
                crate::render::spark::PCT_FLOOR
            ),
        ),
        (true, false) => (
            Level::Warn,
            format!(
                "sparkline column on, but no room for it in {room} columns: it shows on a wider terminal or with fewer columns (F2)"
            ),
        ),
        (false, _) => (Level::Info, "sparkline column off".to_owned()),
    }
}
