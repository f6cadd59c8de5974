//! The writes that have no dialog of their own (f, K, Del, u, U): each goes
//! through the confirmation policy, which may open a question.

use super::{confirm, inspected_detail, writable, Transition};
use crate::app::{App, Effect, Level, Mode};
use crate::cgroupfs::v1_limits::FreezerState;
use crate::model::host::layout::HierId;
use crate::model::tree::union;
use crate::model::write;
use crate::model::write::history::{Direction, Dropped, Taken};
use crate::model::GroupPath;

/// The v1 hierarchy that holds `controller` on this host, where one does.
pub(crate) fn v1_holder(app: &App, controller: &str) -> Option<HierId> {
    app.layout
        .holder(controller)
        .filter(|h| matches!(h, HierId::V1(_)))
}

/// The hierarchies that hold `group` in the last refresh
/// ([`union::holding`]): where a move into it, a group made below it or its
/// removal is written, and all that a confirmation names.
pub(crate) fn holding(app: &App, group: &GroupPath) -> Vec<HierId> {
    match &app.data {
        Some(d) => union::holding(&app.layout, &d.refresh.snapshot, group),
        None => app.layout.write_order(),
    }
}

pub fn freeze_toggle(app: &mut App, fx: &mut Vec<Effect>) -> Transition {
    if !writable(app) {
        return Transition::Stay;
    }
    let Some((g, _)) = app.selected_data() else {
        return Transition::Stay;
    };
    let group = g.path.clone();
    // a group in cgroup2 freezes there (cgroup.freeze is in every
    // non-root cgroup2 group, as systemd freezes units on a hybrid host);
    // one only in v1 hierarchies through the v1 freezer's freezer.state
    if g.cgroup_type.is_none() && !group.is_root() {
        if let Some(h) = v1_holder(app, "freezer") {
            return freeze_v1(app, &group, h, fx);
        }
    }
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

/// `f` on cgroup v1: FROZEN or THAWED to freezer.state, from the state
/// the inspected detail read (FREEZING counts as frozen: the freeze was
/// asked for, and `f` again thaws).
fn freeze_v1(app: &mut App, group: &GroupPath, h: HierId, fx: &mut Vec<Effect>) -> Transition {
    let Some(d) = inspected_detail(app) else {
        app.set_status(
            Level::Warn,
            "still reading this group; try again in a moment",
        );
        return Transition::Stay;
    };
    let Some(fz) = d.freezer else {
        app.set_status(
            Level::Warn,
            format!(
                "{} is not in the v1 freezer hierarchy: there is nothing to freeze it with",
                group.name_display()
            ),
        );
        return Transition::Stay;
    };
    let frozen = fz.state != FreezerState::Thawed || app.freezing.contains(group);
    let own = fz.self_freezing;
    // freezer.self_freezing 0 while frozen: an ancestor froze it, and
    // THAWED here changes nothing (cgroup-v1/freezer-subsystem.rst)
    if frozen && own == Some(false) && !app.freezing.contains(group) {
        app.set_status(
            Level::Warn,
            format!(
                "{} is frozen because an ancestor is (freezer.parent_freezing): a thaw here changes nothing",
                group.name_display()
            ),
        );
        return Transition::Stay;
    }
    confirm::request(app, vec![write::set_freezer(group, h, !frozen)], fx)
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
    let group = g.path.clone();
    // not in cgroup2 (a v1-only host, or a group only in v1 hierarchies):
    // v1 has no cgroup.kill; the writer signals each process of the
    // group in the v1 freezer hierarchy (frozen first), else in the
    // primary hierarchy
    if g.cgroup_type.is_none() && !group.is_root() && !app.layout.v1.is_empty() {
        let in_freezer = inspected_detail(app)
            .and_then(|d| d.hierarchies.as_ref())
            .is_some_and(|s| s.freezer.is_some());
        let h = v1_holder(app, "freezer")
            .filter(|_| in_freezer)
            .or(app.layout.primary())
            .unwrap_or(HierId::V2);
        return confirm::request(app, vec![write::kill(&group).on(h)], fx);
    }
    if g.cgroup_type.is_none() {
        app.set_status(
            Level::Warn,
            "the root group cannot be killed (it has no cgroup.kill)",
        );
        return Transition::Stay;
    }
    confirm::request(app, vec![write::kill(&group)], fx)
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
    let ops = if app.layout.v1.is_empty() {
        vec![write::remove_group(&group)]
    } else {
        write::remove_group_in(&group, &holding(app, &group))
    };
    confirm::request(app, ops, fx)
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
    let mut t = confirm::ask(app, r.entry.ops(dir), fx);
    match &mut t {
        Transition::Open(Mode::Confirm(c)) => c.for_replay(r),
        // the write went out
        Transition::Close if fx.len() > written => app.history.sent(r),
        // refused by pre-flight, or another dialog first: nothing was
        // written, the entry stays
        _ => app.history.put_back(r),
    }
    t
}
