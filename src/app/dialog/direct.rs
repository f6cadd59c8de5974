//! The writes that have no dialog of their own (f, K, Del, u, U): each goes
//! through the confirmation policy, which may open a question.

use super::{confirm, inspected_detail, writable, Transition};
use crate::app::{App, Effect, Level, Mode};
use crate::model::history::{Direction, Dropped, Taken};
use crate::model::write;
use crate::model::GroupPath;

pub fn freeze_toggle(app: &mut App, fx: &mut Vec<Effect>) -> Transition {
    if !writable(app) {
        return Transition::Stay;
    }
    let Some((g, _)) = app.selected_data() else {
        return Transition::Stay;
    };
    let group = g.path.clone();
    if group.is_root() || g.cgroup_type.is_none() {
        app.set_status(
            Level::Warn,
            "the root group cannot be frozen (it has no cgroup.freeze)",
        );
        return Transition::Stay;
    }
    let effective = g.hot.events.is_some_and(|e| e.is_frozen());
    // cgroup.freeze is the group's own setting; cgroup.events "frozen"
    // is also 1 when an ancestor is frozen (admin guide 4-3
    // cgroup.freeze), and then writing 0 here changes nothing
    let own = inspected_detail(app).and_then(|d| d.freeze);
    let asked = app.freezing.contains(&group);
    if effective && own == Some(false) && !asked {
        let by = frozen_ancestor(app, &group);
        let text = match by {
            Some(a) => format!(
                "{} is frozen because {a} is: a thaw here changes nothing; thaw {a}",
                group.name_display()
            ),
            None => format!(
                "{} is frozen by an ancestor: a thaw here changes nothing",
                group.name_display()
            ),
        };
        app.set_status(Level::Warn, text);
        return Transition::Stay;
    }
    let frozen = asked || own.unwrap_or(effective);
    confirm::request(app, vec![write::freeze(&group, !frozen)], fx)
}

/// The ancestor that freezes `group`: the top of the run of frozen
/// ancestors (its own parent is not frozen, so its own cgroup.freeze is).
fn frozen_ancestor(app: &App, group: &GroupPath) -> Option<GroupPath> {
    let snap = &app.data.as_ref()?.refresh.snapshot;
    group
        .ancestors()
        .skip(1)
        .take_while(|a| {
            snap.find(a)
                .is_some_and(|g| g.hot.events.is_some_and(|e| e.is_frozen()))
        })
        .last()
}

pub fn kill_group(app: &mut App, fx: &mut Vec<Effect>) -> Transition {
    if !writable(app) {
        return Transition::Stay;
    }
    let Some((g, _)) = app.selected_data() else {
        return Transition::Stay;
    };
    if g.cgroup_type.is_none() {
        app.set_status(
            Level::Warn,
            "the root group cannot be killed (it has no cgroup.kill)",
        );
        return Transition::Stay;
    }
    confirm::request(app, vec![write::kill(&g.path.clone())], fx)
}

pub fn remove_group(app: &mut App, fx: &mut Vec<Effect>) -> Transition {
    if !writable(app) {
        return Transition::Stay;
    }
    let Some(group) = app.selected.clone() else {
        return Transition::Stay;
    };
    if group.is_root() || group == app.start {
        app.set_status(
            Level::Warn,
            "cgtop does not remove the group it was started at, nor the root",
        );
        return Transition::Stay;
    }
    confirm::request(app, vec![write::remove_group(&group)], fx)
}

/// Writes the top entry of the undo (or redo) stack, through the policy:
/// a question holds the entry and puts it back when cancelled. An entry
/// whose group is gone is dropped and said so, and nothing is written.
pub fn replay(app: &mut App, dir: Direction, fx: &mut Vec<Effect>) -> Transition {
    if !writable(app) {
        return Transition::Stay;
    }
    let r = match app
        .history
        .take(dir, crate::app::seen(app.data.as_ref(), &app.start))
    {
        Taken::Empty => {
            app.set_status(
                Level::Info,
                match dir {
                    Direction::Undo => "nothing to undo (kill and remove cannot be undone)",
                    Direction::Redo => {
                        "nothing to redo (what u undoes waits here until a new write)"
                    }
                },
            );
            return Transition::Stay;
        }
        Taken::Dropped(d) => {
            let text = Dropped::summary(std::slice::from_ref(&d)).unwrap_or_default();
            app.set_status(Level::Warn, format!("{text}; nothing written"));
            return Transition::Stay;
        }
        Taken::Entry(r) => r,
    };
    let written = fx.len();
    let mut t = confirm::request(app, r.entry.ops(dir), fx);
    match &mut t {
        Transition::Open(Mode::Confirm(c)) => c.replay = Some(r),
        // the write went out
        Transition::Close if fx.len() > written => app.history.sent(r),
        // refused by pre-flight, or another dialog first: nothing was
        // written, the entry stays
        _ => app.history.put_back(r),
    }
    t
}
