//! Confirmations and the policy that asks for them ([`request`]): every
//! write goes through it, straight to the writer or through a question:
//! destructive ops, raw writes, systemd units (with the systemctl
//! equivalent), and a typed group name where the guard says so. Before
//! any of that, pre-flight (`model::write::preflight`) judges each op against
//! what the app knows of its group: a write the kernel is certain to
//! refuse is not written (the kernel's reason and fix, or the leaf fix at
//! once), and one that hurts is said in the question (an OOM kill asks for
//! the group's name).

use super::leaf_fix::LeafFixDialog;
use super::{type_into, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::writes::{self, WriteRequest};
use crate::app::{App, Effect, Level, Mode};
use crate::cgroupfs::files;
use crate::model::host::layout::HierId;
use crate::model::write::guard::{typed_name_matches, Danger};
use crate::model::write::history::Replay;
use crate::model::write::owner::{owner_way, OwnerWay};
use crate::model::write::preflight::{self, Facts, Verdict, Warning};
use crate::model::write::systemd::Presence;
use crate::model::write::{self, Op, WriteKind};
use crate::model::{GroupPath, Offer};

/// What the question is about: the view words its title and opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// A write the policy asks about (destructive, raw, systemd, guarded).
    Write,
    /// The offer after ENOENT: the parent does not hand the controller
    /// down, and the ops enable it along the path.
    EnableAlongPath,
}

/// Why a write is asked about, or what the question says beside the list
/// of ops: typed values, worded by the view (`ui/dialogs.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The op cannot be taken back as it is (`Op::confirm_reason` words
    /// its consequence).
    Destructive(Op),
    /// A raw write: these bytes to this file.
    Raw {
        group: GroupPath,
        file: String,
        contents: String,
    },
    /// A kill: how many processes in how many groups (the subtree, from
    /// the snapshot).
    WillDie { procs: u64, groups: u64 },
    /// PID 1 is in the subtree: the kernel does not deliver cgroup.kill's
    /// SIGKILL to init, so it stays (and is not counted among those that
    /// die).
    InitStays,
    /// The kernel has no cgroup.kill: cgtop sends SIGKILL itself.
    NoCgroupKill,
    /// The kill is in a cgroup v1 hierarchy, which has no cgroup.kill on
    /// any kernel: the same SIGKILL to each process.
    NoCgroupKillV1,
    /// A systemd unit, which may re-apply its own settings.
    SystemdMayRevert { unit: String },
    /// The systemctl command that does the same the unit's way.
    SystemdWay { command: String },
    /// The change can be made through systemd instead (the keymap's
    /// `ThroughSystemd`, s), which a daemon-reload keeps; or, when the
    /// presence is not `Ready`, why it cannot be here.
    SystemdOffer(Presence),
    /// The ops go through systemd already: the undo or redo of a change
    /// made that way.
    ViaSystemd,
    /// A container runtime or the kubelet owns the group: who, its own
    /// way to make the change, and what a direct write leaves it
    /// believing (`model::write::owner`).
    Owner(OwnerWay),
    /// What the write will do to the group's processes, known before it
    /// is made (`model::write::preflight`).
    Preflight(Warning),
    /// A step of the plan writes a group above the one it is for (an
    /// ancestor, or the hierarchy's root): every group below `group` is
    /// affected, not only the selected group's subtree. Such a question
    /// goes ahead only on y, never on a bare Enter.
    BeyondGroup {
        group: GroupPath,
        selected: GroupPath,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    pub question: Question,
    /// What is said beside the ops, in order.
    pub reasons: Vec<Reason>,
    pub request: WriteRequest,
    /// The group whose name must be typed, and what was typed so far.
    pub typed: Option<(GroupPath, TextInput)>,
    /// Why the name must be typed (the view words them).
    pub dangers: Vec<Danger>,
    /// The undo or redo entry this asks to write (u, U): back on its
    /// stack when the question is cancelled, so that the next u does not
    /// silently write the entry below it instead.
    pub replay: Option<Replay>,
    /// The hierarchies, so that each op says where it writes on a host
    /// with more than one (`Op::describe_in`).
    pub layout: crate::model::host::layout::Layout,
    /// What the `ThroughSystemd` key (s) sends: the same request with
    /// every op made through systemd (`Via::Systemd`); `None` when it is
    /// not offered (not a unit, an op systemd has no property for, no
    /// systemd here, an undo or redo).
    pub systemd: Option<WriteRequest>,
}

impl Confirm {
    /// The ops the question lists (none for the leaf fix, which has its
    /// own dialog).
    pub fn ops(&self) -> &[Op] {
        match &self.request {
            WriteRequest::Ops(ops) | WriteRequest::Typed { ops, .. } => ops,
            WriteRequest::LeafFix { .. }
            | WriteRequest::LogEffect(_)
            | WriteRequest::ExportScript(_) => &[],
        }
    }

    /// The offer to enable a controller along the path: each step on a
    /// group above the last step's (the selected group) is said as such.
    pub fn enable_along_path(ops: Vec<Op>) -> Self {
        let reasons = match ops.last() {
            Some(last) => {
                let selected = last.group();
                let mut r: Vec<Reason> = Vec::new();
                for o in &ops {
                    let g = o.group();
                    let said = r
                        .iter()
                        .any(|x| matches!(x, Reason::BeyondGroup { group, .. } if group == g));
                    if !g.is_within(selected) && !said {
                        r.push(Reason::BeyondGroup {
                            group: g.clone(),
                            selected: selected.clone(),
                        });
                    }
                }
                r
            }
            None => Vec::new(),
        };
        Self {
            question: Question::EnableAlongPath,
            reasons,
            request: WriteRequest::Ops(ops),
            typed: None,
            dangers: Vec::new(),
            replay: None,
            layout: crate::model::host::layout::Layout::default(),
            systemd: None,
        }
    }

    /// Whether only y answers: the question writes beyond the selected
    /// group (the root or an ancestor), where a bare Enter, pressed out
    /// of habit, must not go ahead.
    pub fn y_only(&self) -> bool {
        self.reasons
            .iter()
            .any(|r| matches!(r, Reason::BeyondGroup { .. }))
    }

    /// An undo or redo replays the ops of its entry as they were made
    /// (the history matches the writer's answer by its ops): the systemd
    /// offer is withdrawn; a change made through systemd is undone
    /// through systemd anyway.
    pub fn for_replay(&mut self, r: Replay) {
        self.replay = Some(r);
        self.systemd = None;
        self.reasons
            .retain(|x| !matches!(x, Reason::SystemdOffer(_)));
    }

    pub fn key(
        &mut self,
        app: &mut App,
        action: Option<Action>,
        ev: Input<'_>,
        fx: &mut Vec<Effect>,
    ) -> Transition {
        match action {
            Some(Action::Cancel) => {
                // what a cancelled question leaves behind: its undo or
                // redo entry goes back
                if let Some(r) = self.replay.take() {
                    app.history.put_back(r);
                }
                Transition::Close
            }
            // an answer can reach the past (an offer made after `T`, a
            // question asked live): nothing goes out while it is shown
            Some(Action::Accept | Action::ThroughSystemd) if !super::writable(app) => {
                Transition::Stay
            }
            Some(a @ (Action::Accept | Action::ThroughSystemd)) => {
                let request = match (a, &self.systemd) {
                    (Action::Accept, _) => self.request.clone(),
                    (_, Some(r)) => r.clone(),
                    // not offered: the question says why
                    (_, None) => return Transition::Stay,
                };
                let ok = self
                    .typed
                    .as_ref()
                    .is_none_or(|(target, typed)| typed_name_matches(target, typed.as_str()));
                if ok {
                    fx.push(Effect::Write(request));
                    if let Some(r) = self.replay.take() {
                        app.history.sent(r);
                    }
                    Transition::Close
                } else {
                    Transition::Stay
                }
            }
            _ => {
                if let Some((_, typed)) = &mut self.typed {
                    type_into(app, typed, ev);
                }
                Transition::Stay
            }
        }
    }
}

/// The confirmation policy: sends `ops` to the writer (and closes the
/// screen it came from), or opens a confirmation that holds them; or,
/// when pre-flight is certain the kernel refuses one of them, writes
/// nothing and says why with the fix (opening the leaf fix where that is
/// the fix).
pub fn request(app: &mut App, ops: Vec<Op>, fx: &mut Vec<Effect>) -> Transition {
    let ops = held_to_shown(app, ops);
    ask(app, ops, fx)
}

/// Each op held to the group it is asked about, as the last refresh
/// showed it: the inode of its directory ([`Op::of_group`]), which the
/// writer checks, so that an answer given after the group was removed
/// and made again under its name never reaches the new one; a new group
/// (mkdir) is held to its parent's ([`Op::held_group`]), and the thaw
/// and refreeze around a kill to the group's directory in the v1 freezer
/// hierarchy ([`Op::thawed_in`]). In the hierarchy the op writes: on a v1
/// or hybrid host each v1 hierarchy's directory has its own inode, which
/// the snapshot keeps ([`crate::model::GroupSample::inode_in`]); in a
/// hierarchy the last scan listed without the group, to no directory
/// ([`crate::model::write::NOT_THERE`]: one made there since is not the
/// group asked about); in one not listed yet (the listed-only hierarchies
/// of the first refreshes), by path. An op that already names one (an
/// undo, a redo) keeps its own.
pub fn held_to_shown(app: &App, ops: Vec<Op>) -> Vec<Op> {
    // a kill elsewhere thaws the group in the v1 freezer's hierarchy
    let freezer = app
        .layout
        .holder("freezer")
        .filter(|h| matches!(h, HierId::V1(_)));
    ops.into_iter()
        .map(|op| {
            if op.ino().is_some() {
                return op;
            }
            let Some(group) = op.held_group() else {
                return op;
            };
            let ino = shown_inode(app, &group, op.hier());
            let thaw = freezer
                .filter(|&f| f != op.hier())
                .and_then(|f| shown_inode(app, &group, f));
            op.of_group(ino).thawed_in(thaw)
        })
        .collect()
}

/// The inode of `group`'s directory in hierarchy `h` as the last refresh
/// showed it, what an op there is held to (see [`held_to_shown`]):
/// [`crate::model::write::NOT_THERE`] where the scan listed `h` without
/// the group; `None` (by path) where the group is not shown or `h` was
/// not listed yet.
pub fn shown_inode(app: &App, group: &GroupPath, h: HierId) -> Option<u64> {
    let d = app.data.as_ref()?;
    let primary = app.layout.primary()?;
    let g = d.refresh.snapshot.find(group)?;
    let held = g.hot.v1.held_in;
    if held.is_empty() || held.contains(h) {
        g.inode_in(h, primary)
    } else {
        Some(crate::model::write::NOT_THERE)
    }
}

/// [`request`] of ops as they are (an undo or redo replays its entry's
/// ops, each held to the group it wrote to or by path as it was).
pub fn ask(app: &mut App, ops: Vec<Op>, fx: &mut Vec<Effect>) -> Transition {
    let Some(first) = ops.first() else {
        return Transition::Stay;
    };
    let mut reasons = Vec::new();
    let mut needs = false;
    let mut kills: Option<GroupPath> = None;
    for op in &ops {
        match preflight_of(app, op) {
            Verdict::Clear => {}
            v @ Verdict::Refuse { .. } => return refuse(app, op, &v),
            Verdict::Warn(warnings) => {
                for w in warnings {
                    if w.kills() && kills.is_none() {
                        kills = Some(op.group().clone());
                    }
                    reasons.push(Reason::Preflight(w));
                    needs = true;
                }
            }
        }
    }
    for op in &ops {
        // one reason for the same act in several hierarchies
        let said = reasons.iter().any(
            |r| matches!(r, Reason::Destructive(o) if o.confirm_reason() == op.confirm_reason()),
        );
        if op.confirm_reason().is_some() && !said {
            reasons.push(Reason::Destructive(op.clone()));
            needs = true;
        }
        if let Some(w) = op.as_write() {
            if matches!(w.kind, WriteKind::Raw) {
                reasons.push(Reason::Raw {
                    group: w.group.clone(),
                    file: w.file.clone(),
                    contents: w.contents.clone(),
                });
                needs = true;
            }
        }
    }
    let op = first.clone();
    if let Some(w) = op.as_write() {
        if matches!(w.kind, WriteKind::Kill) {
            let (mut procs, groups) = subtree_counts(app, &w.group);
            let init_inside = app
                .protected
                .init
                .as_ref()
                .is_some_and(|g| g.is_within(&w.group));
            if init_inside {
                procs = procs.saturating_sub(1);
            }
            reasons.push(Reason::WillDie { procs, groups });
            if init_inside {
                reasons.push(Reason::InitStays);
            }
            let has_kill = app
                .inspection
                .as_ref()
                .filter(|f| f.path == w.group)
                // cgroup.kill is write-only: in the writable list, not the raw one
                .is_none_or(|f| f.detail.writable.iter().any(|n| n == files::KILL));
            if matches!(op.hier(), crate::model::host::layout::HierId::V1(_)) {
                reasons.push(Reason::NoCgroupKillV1);
            } else if !has_kill {
                reasons.push(Reason::NoCgroupKill);
            }
        }
    }
    // a container runtime or the kubelet owns the group: its own way
    // first, then systemd's (a container's scope is a unit too)
    let owned = identity_of(app, op.group())
        .and_then(|id| owner_way(&op, &id, device_name_for(app, &op).as_deref()));
    // systemd owns .service/.scope/.slice groups and may rewrite them;
    // a container's scope is the runtime's to change (its own way is
    // said instead: systemd's would only be lost another way)
    let mut through: Option<Vec<Op>> = None;
    let unit = write::systemd_unit(op.group()).filter(|_| owned.is_none());
    if let Some(way) = owned {
        reasons.push(Reason::Owner(way));
        needs = true;
        // the name may have changed since the group was first seen (a
        // `docker rename`): resolved afresh, the question follows
        // (`renew_owner`)
        fx.push(Effect::Collector(
            crate::source::collector::Command::RenewIdentity(op.group().clone()),
        ));
    }
    if let Some(unit) = unit {
        needs = true;
        let via = ops.iter().any(Op::via_systemd);
        // systemd re-applies a unit's settings; it does not bring back
        // killed processes or move a process out again
        let settles = !matches!(
            op.as_write().map(|w| &w.kind),
            Some(WriteKind::Kill | WriteKind::MoveProcess { .. })
        );
        // below the hierarchy's root a unit's name is anyone's
        if settles && !via && app.systemd != Presence::BelowRoot {
            reasons.push(Reason::SystemdMayRevert {
                unit: unit.to_string(),
            });
        }
        let dev = device_name_for(app, &op);
        // below the hierarchy's root the path names no unit of systemd's
        let eq = write::systemd_equivalent(&op, dev.as_deref())
            .filter(|_| app.systemd != Presence::BelowRoot);
        if let Some(eq) = eq {
            reasons.push(Reason::SystemdWay {
                command: eq.command_line(),
            });
        }
        // every op through systemd, or none: one request, one way
        let all: Option<Vec<Op>> = ops
            .iter()
            .map(|o| {
                let d = device_name_for(app, o);
                o.clone().through_systemd(d.as_deref())
            })
            .collect();
        if via {
            reasons.push(Reason::ViaSystemd);
        } else if app.systemd == Presence::BelowRoot {
            // said for every op, freeze and kill too: no unit is named
            reasons.push(Reason::SystemdOffer(Presence::BelowRoot));
        } else if let Some(all) = all {
            reasons.push(Reason::SystemdOffer(app.systemd));
            through = (app.systemd == Presence::Ready).then_some(all);
        }
    }
    // the guard judges each op by its effect (a raw "0x1" to
    // cgroup.freeze freezes), against the protection of now
    let mut guarded = ops.iter().find_map(|o| {
        let g = o.group();
        let delegated =
            app.delegated.contains(g) || g.ancestors().any(|a| app.delegated.contains(&a));
        let d = app
            .protected
            .op_dangers(o, target_frozen(app, g), delegated);
        (!d.is_empty()).then(|| (o.group().clone(), d))
    });
    // a write that OOM-kills asks for the group's name like a kill does
    if let Some(group) = kills {
        match &mut guarded {
            Some((name, dangers)) if *name == group => dangers.push(Danger::OomKill),
            Some(_) => {}
            None => guarded = Some((group, vec![Danger::OomKill])),
        }
    }
    let (request, typed, dangers) = match guarded {
        Some((name, dangers)) => {
            needs = true;
            (
                WriteRequest::Typed {
                    ops,
                    name: name.clone(),
                },
                Some((name, TextInput::new(TextInput::NAME))),
                dangers,
            )
        }
        None => (WriteRequest::Ops(ops), None, Vec::new()),
    };
    // the same request, its ops through systemd
    let systemd = through.map(|ops| match &request {
        WriteRequest::Typed { name, .. } => WriteRequest::Typed {
            ops,
            name: name.clone(),
        },
        _ => WriteRequest::Ops(ops),
    });
    if needs {
        Transition::Open(Mode::Confirm(Box::new(Confirm {
            question: Question::Write,
            reasons,
            request,
            typed,
            dangers,
            replay: None,
            layout: app.layout.clone(),
            systemd,
        })))
    } else {
        fx.push(Effect::Write(request));
        Transition::Close
    }
}

/// Pre-flight of one op, from the last refresh: the target's facts (its
/// full detail when it is the inspected group) and, for a thread, the
/// threaded domain of the group it comes from (the inspected group, whose
/// process list it was picked from).
fn preflight_of(app: &App, op: &Op) -> Verdict {
    let Some(facts) = facts_of(app, op.group()) else {
        return Verdict::Clear;
    };
    let source = match op.as_write().map(|w| &w.kind) {
        Some(WriteKind::MoveProcess { pid, threads: true }) => app
            .inspection
            .as_ref()
            .filter(|f| f.processes.iter().any(|p| p.pid == *pid))
            .and_then(|f| {
                let snap = &app.data.as_ref()?.refresh.snapshot;
                preflight::domain_of(snap, &f.path)
            }),
        _ => None,
    };
    preflight::check(op, &facts, source.as_ref())
}

/// What the last refresh tells of `path` for pre-flight: the snapshot's
/// facts, the inspected group's full detail and its ancestors'
/// cgroup.controllers, and for an ancestor of the inspected group its own
/// cgroup.controllers from there (what a plan along the path needs).
fn facts_of(app: &App, path: &GroupPath) -> Option<Facts> {
    let d = app.data.as_ref()?;
    let snap = &d.refresh.snapshot;
    let evidence = preflight::child_evidence(snap);
    let detail = app
        .inspection
        .as_ref()
        .filter(|f| &f.path == path)
        .map(|f| &f.detail);
    let cpu = snap
        .groups
        .binary_search_by(|g| g.path.cmp(path))
        .ok()
        .and_then(|i| d.refresh.rates.get(i))
        .and_then(|r| r.cpu_pct);
    let mut facts = preflight::facts(snap, &evidence, path, detail, cpu, app.host.swap_total)?;
    if let Some(f) = &app.inspection {
        if &f.path == path {
            facts.offered_up = f
                .offered_up
                .iter()
                .map(|(a, c)| (a.clone(), c.as_ref().map(|c| c.0.clone())))
                .collect();
        } else if let Some((_, c)) = f.offered_up.iter().find(|(a, _)| a == path) {
            facts.offered = c.as_ref().map(|c| c.0.clone());
        }
    }
    Some(facts)
}

/// The plan for `op` (enabling a controller its group is not offered):
/// pre-flight's ENOENT offer, the writes along the path; `None` where
/// there is none (an ancestor not read, or not in this hierarchy).
pub fn plan_along_path(app: &App, op: &Op) -> Option<Vec<Op>> {
    match preflight_of(app, op).offer(op) {
        Some(Offer::EnableAlongPath(ops)) => Some(ops),
        _ => None,
    }
}

/// The plan to enable a controller along the path (`ops`, from the
/// nearest ancestor that has it down to the group), judged as a whole
/// before anything is written (`preflight::check_plan`): a plan one of
/// whose steps the kernel would refuse is not offered; a box says which
/// step, why, and what to do, and nothing is written. Otherwise the
/// question, which names every step above the selected group.
pub fn along_path(app: &mut App, ops: Vec<Op>) -> Mode {
    let ops = held_to_shown(app, ops);
    let steps: Vec<(Op, Option<Facts>)> = ops
        .iter()
        .map(|o| (o.clone(), facts_of(app, o.group())))
        .collect();
    let ask = |ops: Vec<Op>, app: &App| {
        // each step names its hierarchy as the refusal box does
        let mut c = Confirm::enable_along_path(ops);
        c.layout = app.layout.clone();
        Mode::Confirm(Box::new(c))
    };
    let Some((i, v)) = preflight::check_plan(&steps) else {
        return ask(ops, app);
    };
    let (Some(op), Some(e)) = (ops.get(i), ops.get(i).and_then(|o| v.refusal(o))) else {
        return ask(ops, app);
    };
    let n = ops.len();
    app.set_status(
        Level::Error,
        format!(
            "enable along the path: step {} of {n} ({}) would be refused; nothing written",
            i + 1,
            e.what
        ),
    );
    let mut lines = vec![
        format!(
            "Step {} of {n} would be refused, so no step is written:",
            i + 1
        ),
        format!("• {}", op.describe_in(&app.layout)),
        String::new(),
        e.explanation.clone(),
    ];
    if let Some(fix) = &e.fix {
        lines.push(String::new());
        lines.push(format!("Fix: {fix}"));
    }
    if let Some(Offer::LeafFix { group, .. }) = v.offer(op) {
        lines.push(String::new());
        lines.push(format!(
            "The leaf fix for {group} (a new child, its processes moved there) is a separate \
             step: once {group} holds no process of its own, ask for this plan again."
        ));
    }
    Mode::Message {
        title: "enable along the path: not offered".into(),
        lines,
    }
}

/// A write pre-flight refused: nothing is written. Where cgtop can carry
/// out the fix (the leaf fix), it is offered at once, the reason on the
/// status line; otherwise a box says why and what to do, as after a
/// refusal by the kernel, in the same words.
fn refuse(app: &mut App, op: &Op, v: &Verdict) -> Transition {
    let Some(e) = v.refusal(op) else {
        return Transition::Stay;
    };
    if let Some(Offer::LeafFix {
        group,
        changes,
        nr_procs,
    }) = v.offer(op)
    {
        app.set_status(Level::Warn, e.to_string());
        return Transition::Open(Mode::LeafFix(LeafFixDialog::offer(
            group, changes, nr_procs,
        )));
    }
    app.set_status(Level::Error, format!("{}: not written", e.what));
    Transition::Open(writes::error_box(
        "not written: the kernel would refuse it".into(),
        &e,
    ))
}

/// Whether `group` is frozen as far as the app knows: it or an ancestor
/// is reported frozen by cgroup.events, was just frozen by cgtop, or sets
/// cgroup.freeze itself (the inspected detail). The writer checks the
/// hierarchy itself again before a move.
fn target_frozen(app: &App, group: &GroupPath) -> bool {
    let snap = app.data.as_ref().map(|d| &d.refresh.snapshot);
    let own = app
        .inspection
        .as_ref()
        .filter(|f| &f.path == group)
        .and_then(|f| f.detail.freeze)
        .unwrap_or(false);
    own || group.ancestors().any(|a| {
        app.freezing.contains(&a)
            || snap
                .and_then(|s| s.find(&a))
                .is_some_and(|g| g.hot.events.is_some_and(|e| e.is_frozen()))
    })
}

/// Who the group is: what the identity readers found (the snapshot's
/// sample), else what its name alone says.
/// After a refresh: an open question that names a group's owner names it
/// by the identity of now (the collector resolved it afresh when the
/// question opened), so that `docker update ... web-1` is not said of a
/// container renamed since.
pub fn renew_owner(app: &mut App) {
    let Mode::Confirm(c) = &app.mode else {
        return;
    };
    let Some(i) = c.reasons.iter().position(|r| matches!(r, Reason::Owner(_))) else {
        return;
    };
    let Some(op) = c.ops().first().cloned() else {
        return;
    };
    let way = identity_of(app, op.group())
        .and_then(|id| owner_way(&op, &id, device_name_for(app, &op).as_deref()));
    if let (Mode::Confirm(c), Some(way)) = (&mut app.mode, way) {
        c.reasons[i] = Reason::Owner(way);
    }
}

fn identity_of(app: &App, group: &GroupPath) -> Option<crate::model::identity::Identity> {
    let sample = app
        .data
        .as_ref()
        .and_then(|d| d.refresh.snapshot.find(group))
        .and_then(|g| g.identity.as_deref().cloned());
    sample.or_else(|| crate::model::identity::Identity::of_name(group))
}

fn device_name_for(app: &App, op: &Op) -> Option<String> {
    let w = op.as_write()?;
    let dev = match &w.kind {
        WriteKind::IoMax(set) => set.dev,
        WriteKind::IoLatency { dev, .. } => *dev,
        WriteKind::IoWeight { dev: Some(d), .. } => *d,
        _ => return None,
    };
    let d = app.data.as_ref()?;
    d.refresh
        .devices
        .iter()
        .find(|x| x.dev == dev)
        .map(|x| x.name.clone())
}

/// Processes and groups in the subtree of `group`: from the snapshot, or
/// where the subtree goes on past PATH_MAX (which the scan cannot open),
/// from the inspection's descriptor walk, the one the kill uses.
fn subtree_counts(app: &App, group: &GroupPath) -> (u64, u64) {
    if let Some(c) = app
        .inspection
        .as_ref()
        .filter(|f| f.path == *group)
        .and_then(|f| f.deep_count)
    {
        return (c.procs, c.groups);
    }
    let Some(d) = &app.data else { return (0, 0) };
    let mut procs = 0;
    let mut groups = 0;
    for g in d
        .refresh
        .snapshot
        .groups
        .iter()
        .filter(|g| g.path.is_within(group))
    {
        groups += 1;
        procs += g.hot.nr_procs.unwrap_or(0);
    }
    if procs == 0 {
        // with the pids controller on, pids.current counts the subtree
        procs = d
            .refresh
            .snapshot
            .find(group)
            .and_then(|g| g.hot.pids_current)
            .unwrap_or(0);
    }
    (procs, groups)
}
