//! The write actions: each dialog is state in [`super::Mode`], its keys are
//! handled here, and what it asks for leaves as an `Effect::Write`. Nothing
//! here performs I/O: ops are built with `model::write`, input is parsed
//! with `model::input`, and the writer thread does the rest.
//!
//! Flow of every write: action key -> dialog (or straight to) `request` ->
//! confirm when destructive, on a protected group (typed name), on a
//! systemd unit (note and systemctl equivalent) or for a raw write ->
//! `Effect::Write` -> writer thread -> `Msg::WriteFinished` -> status line,
//! action log, undo stack, offers (leaf fix, enable along the path).

use super::text_input::{TextInput, Typed};
use super::{App, Effect, Level, Mode};
use crate::cgroupfs::files;
use crate::cgroupfs::io::DevId;
use crate::model::input::{self, ControllerChange, MemoryFile};
use crate::model::text::escape_str;
use crate::model::write::{self, Op, WriteKind};
use crate::model::{DeviceInfo, GroupPath, MountMode};
use crate::source::devices::throttle_check;
use crate::source::safety::{typed_name_matches, Danger};
use crate::source::writer::{Offer, WriteOutcome};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What the writer thread is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRequest {
    /// Perform in order; stop at the first failure.
    Ops(Vec<Op>),
    /// Like `Ops`, after the operator typed the name of `name`: the writer,
    /// which checks every op again just before performing it, lets a
    /// guarded op through only on that group.
    Typed { ops: Vec<Op>, name: GroupPath },
    /// The no-internal-process fix: create `group/leaf`, move the group's
    /// processes there, then apply `changes`.
    LeafFix {
        group: GroupPath,
        leaf: String,
        changes: Vec<ControllerChange>,
    },
}

/// One controller in the controllers dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtlItem {
    pub name: String,
    /// In the group's cgroup.controllers.
    pub offered: bool,
    /// In the group's cgroup.subtree_control now.
    pub enabled: bool,
    /// What the operator wants.
    pub want: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllersDialog {
    pub group: GroupPath,
    pub items: Vec<CtlItem>,
    pub cursor: usize,
}

impl ControllersDialog {
    /// What Enter writes: each controller whose wanted state differs
    /// from its state now, in the dialog's order.
    pub fn changes(&self) -> Vec<ControllerChange> {
        self.items
            .iter()
            .filter(|i| i.want != i.enabled)
            .map(|i| {
                if i.want {
                    ControllerChange::enable(&i.name)
                } else {
                    ControllerChange::disable(&i.name)
                }
            })
            .collect()
    }
}

/// The fields of the limits form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    CpuMax,
    CpuMaxBurst,
    CpuWeight,
    CpuWeightNice,
    Memory(MemoryFile),
    PidsMax,
    IoMax,
    IoWeight,
    IoLatency,
}

impl FieldKind {
    pub const ALL: [Self; 13] = [
        Self::CpuMax,
        Self::CpuMaxBurst,
        Self::CpuWeight,
        Self::CpuWeightNice,
        Self::Memory(MemoryFile::Min),
        Self::Memory(MemoryFile::Low),
        Self::Memory(MemoryFile::High),
        Self::Memory(MemoryFile::Max),
        Self::Memory(MemoryFile::SwapMax),
        Self::PidsMax,
        Self::IoMax,
        Self::IoWeight,
        Self::IoLatency,
    ];

    pub fn file(self) -> &'static str {
        match self {
            Self::CpuMax => files::CPU_MAX,
            Self::CpuMaxBurst => files::CPU_MAX_BURST,
            Self::CpuWeight => files::CPU_WEIGHT,
            Self::CpuWeightNice => files::CPU_WEIGHT_NICE,
            Self::Memory(m) => m.file(),
            Self::PidsMax => files::PIDS_MAX,
            Self::IoMax => files::IO_MAX,
            Self::IoWeight => files::IO_WEIGHT,
            Self::IoLatency => files::IO_LATENCY,
        }
    }

    /// What the field accepts, shown under it.
    pub fn hint(self) -> &'static str {
        match self {
            Self::CpuMax => "50% | 1.5 (CPUs) | max | QUOTA PERIOD (us)",
            Self::CpuMaxBurst => "microseconds",
            Self::CpuWeight => "1..10000 (default 100)",
            Self::CpuWeightNice => "-20..19, like nice(1); sets cpu.weight",
            Self::Memory(_) => "max | bytes | 512M, 1.5G (binary units)",
            Self::PidsMax => "max | number of tasks",
            // the device is on its own line, with its keys
            Self::IoMax => "rbps=2M wbps=max riops=100 wiops=max (keys left out stay)",
            Self::IoWeight => "1..10000, written as \"default N\"",
            Self::IoLatency => "10ms | 500us | max (removes the target)",
        }
    }

    fn per_device(self) -> bool {
        matches!(self, Self::IoMax | Self::IoLatency)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub kind: FieldKind,
    /// The file's current content (one line), `None` when it does not exist
    /// for this group (controller off).
    pub current: Option<String>,
    pub input: TextInput,
    /// What Enter would do, or why it cannot: recomputed on every key.
    pub preview: Result<String, String>,
    /// The write Enter performs, when the input is valid.
    pub op: Option<Op>,
    /// A warning to show even when the input is valid.
    pub warning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsForm {
    pub group: GroupPath,
    pub fields: Vec<Field>,
    pub cursor: usize,
    pub devices: Vec<DeviceInfo>,
    pub device: usize,
    /// Buffered writeback is charged to the writer's io group (cgroup
    /// writeback), so io.max throttles buffered writes too. True whenever
    /// the memory controller is on cgroup2: the io controller turns memory
    /// on, hidden, wherever io is on (`io_cgrp_subsys.depends_on` in
    /// block/blk-cgroup.c), so a group without memory files is covered as
    /// well (measured in tests/vm_truth.rs). False on a hybrid host whose
    /// memory controller is on cgroup v1: writeback then runs as the root.
    pub cgroup_writeback: bool,
    /// The group's cgroup.controllers: a missing file whose controller is
    /// on is a feature the kernel lacks (io.latency on Debian), not a
    /// controller to enable.
    pub controllers_on: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEditor {
    pub group: GroupPath,
    /// Writable files with their current text (first line).
    pub files: Vec<(String, String)>,
    pub cursor: usize,
    /// The line being typed, once a file was chosen.
    pub input: Option<TextInput>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    pub title: String,
    pub lines: Vec<String>,
    pub request: WriteRequest,
    /// The group whose name must be typed, and what was typed so far.
    pub typed: Option<(GroupPath, TextInput)>,
    /// Why the name must be typed (the view words them).
    pub dangers: Vec<Danger>,
    /// The undo entry this asks to write (u): back on the stack when the
    /// question is cancelled, so that the next u does not silently write
    /// the entry below it instead.
    pub undo: Option<Op>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovePicker {
    pub pid: u32,
    pub what: String,
    pub filter: TextInput,
    pub matches: Vec<GroupPath>,
    pub cursor: usize,
    /// Write to cgroup.threads (one thread) instead of cgroup.procs.
    pub threads: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePrompt {
    pub parent: GroupPath,
    pub input: TextInput,
    pub check: Result<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafFixDialog {
    pub group: GroupPath,
    pub leaf: TextInput,
    pub changes: Vec<ControllerChange>,
    pub nr_procs: usize,
    /// The leaf name as it will be used, or why it cannot be: checked on
    /// every key like a new group's name (".." would be the parent).
    pub check: Result<String, String>,
}

impl LeafFixDialog {
    fn recheck(&mut self) {
        // an existing child is fine: the writer moves the processes into it
        self.check = input::parse_group_name(self.leaf.as_str(), &[]).map_err(|e| e.to_string());
    }
}

/// One line of the action log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub unix_secs: u64,
    pub outcome: WriteOutcome,
}

// ---------------------------------------------------------------------------
// Opening the dialogs.

/// Refuses when writing is off; says why.
fn writable(app: &mut App) -> bool {
    if let Some(why) = &app.read_only {
        let text = format!("read-only ({why}): this key changes the hierarchy");
        app.set_status(Level::Warn, text);
        return false;
    }
    true
}

fn focus_detail(app: &App) -> Option<&crate::model::GroupDetail> {
    let sel = app.selected.as_ref()?;
    app.focus
        .as_ref()
        .filter(|f| &f.path == sel)
        .map(|f| &f.detail)
}

fn raw_line(app: &App, file: &str) -> Option<String> {
    let d = focus_detail(app)?;
    let (_, v) = d.raw.iter().find(|(n, _)| n == file)?;
    Some(
        v.as_ref()
            .map_or_else(|e| format!("({e})"), |t| t.replace('\n', " | ")),
    )
}

fn not_ready(app: &mut App) -> Option<GroupPath> {
    let sel = app.selected.clone()?;
    if focus_detail(app).is_none() {
        app.set_status(
            Level::Warn,
            "still reading this group; try again in a moment",
        );
        return None;
    }
    Some(sel)
}

pub fn open_controllers(app: &mut App) {
    if !writable(app) {
        return;
    }
    let Some(group) = not_ready(app) else { return };
    let Some(d) = focus_detail(app) else { return };
    let offered = d.controllers.clone().unwrap_or_default();
    let enabled = d.subtree_control.clone().unwrap_or_default();
    let top = app
        .focus
        .as_ref()
        .and_then(|f| f.top_controllers.clone())
        .unwrap_or_default();
    let mut items: Vec<CtlItem> = offered
        .iter()
        .map(|n| CtlItem {
            name: n.into(),
            offered: true,
            enabled: enabled.contains(n),
            want: enabled.contains(n),
        })
        .collect();
    for n in top.iter().filter(|n| !offered.contains(n)) {
        items.push(CtlItem {
            name: n.into(),
            offered: false,
            enabled: false,
            want: false,
        });
    }
    if items.is_empty() {
        app.set_status(Level::Warn, format!("{group} is offered no controllers (cgroup.controllers is empty) and the hierarchy has none"));
        return;
    }
    app.mode = Mode::Controllers(ControllersDialog {
        group,
        items,
        cursor: 0,
    });
}

pub fn open_limits(app: &mut App) {
    if !writable(app) {
        return;
    }
    let Some(group) = not_ready(app) else { return };
    let devices: Vec<DeviceInfo> = app
        .data
        .as_ref()
        .map(|d| d.refresh.devices.to_vec())
        .unwrap_or_default();
    let device = devices
        .iter()
        .position(|d| throttle_check(d, &devices).is_ok())
        .unwrap_or(0);
    let cgroup_writeback = !matches!(
        &app.mount.mode,
        MountMode::Hybrid { v1_controllers } if v1_controllers.iter().any(|c| c == "memory")
    );
    let fields = FieldKind::ALL
        .iter()
        .map(|&kind| Field {
            kind,
            current: raw_line(app, kind.file()),
            input: TextInput::new(TextInput::LINE),
            preview: Err(String::new()),
            op: None,
            warning: None,
        })
        .collect();
    let controllers_on = focus_detail(app)
        .and_then(|d| d.controllers.clone())
        .map(|c| c.0)
        .unwrap_or_default();
    let mut form = LimitsForm {
        group,
        fields,
        cursor: 0,
        devices,
        device,
        cgroup_writeback,
        controllers_on,
    };
    // start on the first field that exists
    form.cursor = form
        .fields
        .iter()
        .position(|f| f.current.is_some())
        .unwrap_or(0);
    if form.fields.iter().all(|f| f.current.is_none()) {
        app.set_status(Level::Warn, format!("{} has no limit files: the cpu, memory, io and pids controllers are all off for it (enable them in its parent with c)", form.group));
        return;
    }
    for i in 0..form.fields.len() {
        refresh_preview(&mut form, i, app.page_size);
    }
    app.mode = Mode::Limits(form);
}

pub fn open_raw(app: &mut App) {
    if !writable(app) {
        return;
    }
    let Some(group) = not_ready(app) else { return };
    let Some(d) = focus_detail(app) else { return };
    let files: Vec<(String, String)> = d
        .writable
        .iter()
        .filter(|n| n.as_str() != files::KILL)
        .map(|n| {
            let cur = d
                .raw
                .iter()
                .find(|(r, _)| r == n)
                .and_then(|(_, v)| v.as_ref().ok())
                .map(|t| t.replace('\n', " | "))
                .unwrap_or_default();
            (n.clone(), cur)
        })
        .collect();
    if files.is_empty() {
        app.set_status(
            Level::Warn,
            format!("{group} has no writable files for you"),
        );
        return;
    }
    app.mode = Mode::Raw(RawEditor {
        group,
        files,
        cursor: 0,
        input: None,
    });
}

pub fn freeze_toggle(app: &mut App, fx: &mut Vec<Effect>) {
    if !writable(app) {
        return;
    }
    let Some((g, _)) = app.selected_data() else {
        return;
    };
    let group = g.path.clone();
    if group.is_root() || g.cgroup_type.is_none() {
        app.set_status(
            Level::Warn,
            "the root group cannot be frozen (it has no cgroup.freeze)",
        );
        return;
    }
    let effective = g.hot.events.is_some_and(|e| e.is_frozen());
    // cgroup.freeze is the group's own setting; cgroup.events "frozen"
    // is also 1 when an ancestor is frozen (admin guide 4-3
    // cgroup.freeze), and then writing 0 here changes nothing
    let own = focus_detail(app).and_then(|d| d.freeze);
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
        return;
    }
    let frozen = asked || own.unwrap_or(effective);
    request(app, vec![write::freeze(&group, !frozen)], fx);
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

pub fn kill_group(app: &mut App, fx: &mut Vec<Effect>) {
    if !writable(app) {
        return;
    }
    let Some((g, _)) = app.selected_data() else {
        return;
    };
    if g.cgroup_type.is_none() {
        app.set_status(
            Level::Warn,
            "the root group cannot be killed (it has no cgroup.kill)",
        );
        return;
    }
    request(app, vec![write::kill(&g.path.clone())], fx);
}

pub fn open_move(app: &mut App) {
    if !writable(app) {
        return;
    }
    if app.pane != super::Pane::Processes {
        app.set_status(
            Level::Info,
            "select a process first: Tab moves to the process list",
        );
        return;
    }
    let Some(p) = app
        .focus
        .as_ref()
        .and_then(|f| f.processes.get(app.proc_cursor))
    else {
        app.set_status(Level::Warn, "no process selected");
        return;
    };
    let (pid, what) = (p.pid, p.cmdline.clone());
    let mut m = MovePicker {
        pid,
        what,
        filter: TextInput::new(TextInput::LINE),
        matches: Vec::new(),
        cursor: 0,
        threads: false,
    };
    refilter_move(app, &mut m);
    app.mode = Mode::Move(m);
}

fn refilter_move(app: &App, m: &mut MovePicker) {
    let needle = m.filter.as_str().to_lowercase();
    m.matches = app
        .data
        .as_ref()
        .map(|d| {
            d.refresh
                .snapshot
                .groups
                .iter()
                .filter(|g| g.path.to_string().to_lowercase().contains(&needle))
                .map(|g| g.path.clone())
                .collect()
        })
        .unwrap_or_default();
    m.cursor = m.cursor.min(m.matches.len().saturating_sub(1));
}

pub fn open_new_group(app: &mut App) {
    if !writable(app) {
        return;
    }
    let Some(parent) = app.selected.clone() else {
        return;
    };
    let mut p = NamePrompt {
        parent,
        input: TextInput::new(TextInput::NAME),
        check: Err(String::new()),
    };
    check_name(app, &mut p);
    app.mode = Mode::NewGroup(p);
}

fn siblings(app: &App, parent: &GroupPath) -> Vec<String> {
    let Some(d) = &app.data else {
        return Vec::new();
    };
    let Some(n) = d.tree.get(parent) else {
        return Vec::new();
    };
    let mut names: Vec<String> = d.tree.nodes[n]
        .children
        .iter()
        // a typed name is text: only a name that is text can equal it
        .filter_map(|&c| std::str::from_utf8(d.tree.nodes[c].path.name()).ok())
        .map(str::to_owned)
        .collect();
    // interface files are names too
    if let Some(dd) = focus_detail(app) {
        names.extend(dd.raw.iter().map(|(n, _)| n.clone()));
    }
    names
}

fn check_name(app: &App, p: &mut NamePrompt) {
    let existing = siblings(app, &p.parent);
    let refs: Vec<&str> = existing.iter().map(String::as_str).collect();
    p.check = input::parse_group_name(p.input.as_str(), &refs).map_err(|e| e.to_string());
}

pub fn remove_group(app: &mut App, fx: &mut Vec<Effect>) {
    if !writable(app) {
        return;
    }
    let Some(group) = app.selected.clone() else {
        return;
    };
    if group.is_root() || group == app.start {
        app.set_status(
            Level::Warn,
            "cgtop does not remove the group it was started at, nor the root",
        );
        return;
    }
    request(app, vec![write::remove_group(&group)], fx);
}

pub fn undo(app: &mut App, fx: &mut Vec<Effect>) {
    if !writable(app) {
        return;
    }
    match app.undo.pop() {
        Some(op) => {
            request(app, vec![op.clone()], fx);
            if let Mode::Confirm(c) = &mut app.mode {
                c.undo = Some(op);
            }
        }
        None => app.set_status(
            Level::Info,
            "nothing to undo (kill, move and remove cannot be undone)",
        ),
    }
}

// ---------------------------------------------------------------------------
// Requesting a write: straight to the writer, or through a confirmation.

/// Sends `ops` to the writer, first asking for confirmation where needed.
pub fn request(app: &mut App, ops: Vec<Op>, fx: &mut Vec<Effect>) {
    let Some(first) = ops.first() else { return };
    let mut lines: Vec<String> = ops.iter().map(|o| format!("• {}", o.describe())).collect();
    let mut needs = false;
    for op in &ops {
        if let Some(why) = op.confirm_reason() {
            lines.push(format!("  {why}"));
            needs = true;
        }
        if let Some(w) = op.as_write() {
            if matches!(w.kind, WriteKind::Raw) {
                // the root displays as "/": no "//file"
                let dir = if w.group.is_root() {
                    String::new()
                } else {
                    w.group.to_string()
                };
                lines.push(format!(
                    "  writes \"{}\" to {dir}/{}",
                    escape_str(&w.contents),
                    escape_str(&w.file)
                ));
                needs = true;
            }
        }
    }
    let op = first.clone();
    if let Some(w) = op.as_write() {
        if matches!(w.kind, WriteKind::Kill) {
            let (procs, groups) = subtree_counts(app, &w.group);
            lines.push(format!(
                "  {procs} process{} in {groups} group{} will die",
                if procs == 1 { "" } else { "es" },
                if groups == 1 { "" } else { "s" }
            ));
            let has_kill = app
                .focus
                .as_ref()
                .filter(|f| f.path == w.group)
                // cgroup.kill is write-only: in the writable list, not the raw one
                .is_none_or(|f| f.detail.writable.iter().any(|n| n == files::KILL));
            if !has_kill {
                lines.push("  this kernel has no cgroup.kill: cgtop sends SIGKILL to every process of the subtree".into());
            }
        }
    }
    // systemd owns .service/.scope/.slice groups and may rewrite them
    if let Some(unit) = write::systemd_unit(op.group()) {
        needs = true;
        // systemd re-applies a unit's settings; it does not bring back
        // killed processes or move a process out again
        let settles = !matches!(
            op.as_write().map(|w| &w.kind),
            Some(WriteKind::Kill | WriteKind::MoveProcess { .. })
        );
        if settles {
            lines.push(format!("  {unit} is managed by systemd: a daemon-reload or unit restart may revert a direct write"));
        }
        let dev = device_name_for(app, &op);
        if let Some(eq) = write::systemd_equivalent(&op, dev.as_deref()) {
            lines.push(format!("  systemd's way: {}", eq.command_line()));
        }
    }
    // the guard judges each op by its effect (a raw "0x1" to
    // cgroup.freeze freezes), against the protection of now
    let guarded = ops.iter().find_map(|o| {
        let d = app.protected.op_dangers(o, target_frozen(app, o.group()));
        (!d.is_empty()).then(|| (o.group().clone(), d))
    });
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
    if needs {
        app.mode = Mode::Confirm(Box::new(Confirm {
            title: "confirm".into(),
            lines,
            request,
            typed,
            dangers,
            undo: None,
        }));
    } else {
        app.mode = Mode::Normal;
        fx.push(Effect::Write(request));
    }
}

/// Whether `group` is frozen as far as the app knows: it or an ancestor
/// is reported frozen by cgroup.events, was just frozen by cgtop, or sets
/// cgroup.freeze itself (the focus detail). The writer checks the
/// hierarchy itself again before a move.
fn target_frozen(app: &App, group: &GroupPath) -> bool {
    let snap = app.data.as_ref().map(|d| &d.refresh.snapshot);
    let own = app
        .focus
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

/// Processes and groups in the subtree of `group` (from the snapshot).
fn subtree_counts(app: &App, group: &GroupPath) -> (u64, u64) {
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

// ---------------------------------------------------------------------------
// Keys inside the dialogs.

/// Passes a key to a text input; a character refused at the cap says so
/// on the status line, which stays under the dialog. Returns whether the
/// text changed.
fn type_into(app: &mut App, input: &mut TextInput, ev: &KeyEvent) -> bool {
    match input.on_key(ev) {
        Typed::Changed => true,
        Typed::Refused(e) => {
            app.set_status(Level::Warn, e.to_string());
            false
        }
        Typed::Moved | Typed::NotText => false,
    }
}

fn is_cancel(ev: &KeyEvent) -> bool {
    ev.code == KeyCode::Esc
        || (ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL))
}

/// Handles a key while a dialog is open. Returns true when it was one.
pub fn on_dialog_key(app: &mut App, ev: &KeyEvent, fx: &mut Vec<Effect>) -> bool {
    let mode = std::mem::replace(&mut app.mode, Mode::Normal);
    let next = match mode {
        Mode::Controllers(d) => controllers_key(app, d, ev, fx),
        Mode::Limits(f) => limits_key(app, f, ev, fx),
        Mode::Raw(r) => raw_key(app, r, ev, fx),
        Mode::Confirm(c) => confirm_key(app, c, ev, fx),
        Mode::Move(m) => move_key(app, m, ev, fx),
        Mode::NewGroup(p) => new_group_key(app, p, ev, fx),
        Mode::LeafFix(l) => leaf_fix_key(app, l, ev, fx),
        Mode::Log { scroll } => log_key(app, scroll, ev),
        // any key closes a message
        Mode::Message { .. } => Mode::Normal,
        other => {
            app.mode = other;
            return false;
        }
    };
    // a dialog may have opened another one (request -> confirm)
    if app.mode == Mode::Normal {
        app.mode = next;
    }
    true
}

fn up_down(ev: &KeyEvent, cursor: &mut usize, len: usize) -> bool {
    match ev.code {
        KeyCode::Up => *cursor = cursor.saturating_sub(1),
        KeyCode::Down => *cursor = (*cursor + 1).min(len.saturating_sub(1)),
        _ => return false,
    }
    true
}

fn controllers_key(
    app: &mut App,
    mut d: ControllersDialog,
    ev: &KeyEvent,
    fx: &mut Vec<Effect>,
) -> Mode {
    if is_cancel(ev) {
        return Mode::Normal;
    }
    if up_down(ev, &mut d.cursor, d.items.len()) {
        return Mode::Controllers(d);
    }
    match ev.code {
        KeyCode::Char(' ' | 'x') => {
            if let Some(i) = d.items.get_mut(d.cursor) {
                i.want = !i.want;
            }
            Mode::Controllers(d)
        }
        KeyCode::Enter => {
            let changes = d.changes();
            if changes.is_empty() {
                app.set_status(Level::Info, "nothing changed");
                return Mode::Normal;
            }
            request(
                app,
                vec![write::set_subtree_control(&d.group, &changes)],
                fx,
            );
            Mode::Normal
        }
        _ => Mode::Controllers(d),
    }
}

/// Recomputes what Enter would do for field `i`.
pub fn refresh_preview(f: &mut LimitsForm, i: usize, page_size: u64) {
    let dev = f.devices.get(f.device).cloned();
    let group = f.group.clone();
    let cgroup_writeback = f.cgroup_writeback;
    let devices = f.devices.clone();
    // the kernel refuses a burst above the quota (EINVAL): check against
    // the quota cpu.max holds now (None: "max")
    let quota = f
        .fields
        .iter()
        .find(|x| x.kind == FieldKind::CpuMax)
        .and_then(|x| x.current.as_deref())
        .and_then(|c| crate::cgroupfs::CpuMax::parse(c).ok())
        .and_then(|c| c.quota);
    let on = f.controllers_on.clone();
    let field = &mut f.fields[i];
    field.warning = None;
    field.op = None;
    let text = field.input.as_str().trim().to_owned();
    if field.current.is_none() {
        let file = field.kind.file();
        let controller = file.split('.').next().unwrap_or(file);
        field.preview = Err(if on.iter().any(|c| c == controller) {
            format!("this kernel has no {file}: the {controller} controller is on, but the feature is not built in")
        } else {
            format!("{file} does not exist for this group: its controller is off (enable it in the parent with c)")
        });
        return;
    }
    if text.is_empty() {
        field.preview = Err(String::new());
        return;
    }
    let needs_dev = || -> Result<DevId, String> {
        let d = dev
            .clone()
            .ok_or_else(|| "no block device found in /sys/dev/block".to_owned())?;
        throttle_check(&d, &devices)?;
        Ok(d.dev)
    };
    let op: Result<Op, String> = match field.kind {
        FieldKind::CpuMax => {
            let period = field
                .current
                .as_deref()
                .and_then(|c| crate::cgroupfs::CpuMax::parse(c).ok())
                .map(|c| c.period);
            input::parse_cpu_max(&text, period)
                .map(|v| write::set_cpu_max(&group, v))
                .map_err(|e| e.to_string())
        }
        FieldKind::CpuMaxBurst => input::parse_cpu_max_burst(&text, quota)
            .map(|v| write::set_cpu_max_burst(&group, v))
            .map_err(|e| e.to_string()),
        FieldKind::CpuWeight => input::parse_cpu_weight(&text)
            .map(|v| write::set_cpu_weight(&group, v))
            .map_err(|e| e.to_string()),
        FieldKind::CpuWeightNice => input::parse_cpu_weight_nice(&text)
            .map(|v| write::set_cpu_weight_nice(&group, v))
            .map_err(|e| e.to_string()),
        FieldKind::Memory(m) => input::parse_memory(m, &text)
            .map(|v| write::set_memory_limit(&group, m, v))
            .map_err(|e| e.to_string()),
        FieldKind::PidsMax => input::parse_pids_max(&text)
            .map(|v| write::set_pids_max(&group, v))
            .map_err(|e| e.to_string()),
        FieldKind::IoWeight => input::parse_io_weight(&text, false)
            .map_err(|e| e.to_string())
            .and_then(|w| w.ok_or_else(|| "type a weight".to_owned()))
            .map(|w| write::set_io_weight(&group, None, w)),
        FieldKind::IoMax => needs_dev().and_then(|d| {
            let mut keys = [String::new(), String::new(), String::new(), String::new()];
            for pair in text.split_whitespace() {
                let Some((k, v)) = pair.split_once('=') else {
                    return Err(format!(
                        "io.max: {pair:?} is not KEY=VALUE (keys: rbps, wbps, riops, wiops)"
                    ));
                };
                let slot = match k {
                    "rbps" => 0,
                    "wbps" => 1,
                    "riops" => 2,
                    "wiops" => 3,
                    other => {
                        return Err(format!(
                            "io.max: unknown key {other:?} (keys: rbps, wbps, riops, wiops)"
                        ))
                    }
                };
                v.clone_into(&mut keys[slot]);
            }
            input::parse_io_max(d, &keys[0], &keys[1], &keys[2], &keys[3])
                .map(|s| write::set_io_max(&group, s))
                .map_err(|e| e.to_string())
        }),
        FieldKind::IoLatency => needs_dev().and_then(|d| {
            input::parse_io_latency(&text)
                .map(|t| write::set_io_latency(&group, d, t))
                .map_err(|e| e.to_string())
        }),
    };
    if field.kind == FieldKind::IoMax && !cgroup_writeback {
        field.warning = Some("the memory controller is on cgroup v1 here, so there is no cgroup writeback: buffered writes are written back as the root and not throttled, only direct IO is (admin guide 5-3-2)".into());
    }
    if let (FieldKind::Memory(_), Ok(Op::Write(w))) = (field.kind, &op) {
        if let WriteKind::Memory(_, l) = w.kind {
            field.warning = input::memory_rounding_note(l, page_size);
        }
    }
    field.op = op.as_ref().ok().cloned();
    field.preview = op.map(|o| match o.as_write() {
        Some(w) => format!(
            "writes \"{}\" to {}",
            escape_str(&w.contents),
            escape_str(&w.file)
        ),
        None => o.describe(),
    });
}

fn limits_key(app: &mut App, mut f: LimitsForm, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) {
        return Mode::Normal;
    }
    let i = f.cursor;
    match ev.code {
        KeyCode::Up | KeyCode::BackTab => f.cursor = f.cursor.saturating_sub(1),
        KeyCode::Down | KeyCode::Tab => f.cursor = (f.cursor + 1).min(f.fields.len() - 1),
        KeyCode::Left | KeyCode::Right
            if f.fields[i].kind.per_device() && !f.devices.is_empty() =>
        {
            let n = f.devices.len();
            f.device = if ev.code == KeyCode::Right {
                (f.device + 1) % n
            } else {
                (f.device + n - 1) % n
            };
            refresh_preview(&mut f, i, app.page_size);
        }
        KeyCode::Enter => {
            if let Some(op) = f.fields[i].op.clone() {
                f.fields[i].input.clear();
                refresh_preview(&mut f, i, app.page_size);
                let back = Mode::Limits(f);
                request(app, vec![op], fx);
                // after a direct write the form stays open for the next field
                return if app.mode == Mode::Normal {
                    back
                } else {
                    Mode::Normal
                };
            }
            // the form shows the whole reason; the status line, which a
            // long text would cut, takes the problem without the list of
            // what is accepted
            let why = f.fields[i]
                .preview
                .clone()
                .err()
                .filter(|e| !e.is_empty())
                .map_or_else(
                    || "type a value first".into(),
                    |e| match e.split_once(". Accepted: ") {
                        Some((problem, _)) => problem.to_owned(),
                        None => e,
                    },
                );
            app.set_status(Level::Error, why);
        }
        _ => {
            if type_into(app, &mut f.fields[i].input, ev) {
                refresh_preview(&mut f, i, app.page_size);
            }
        }
    }
    Mode::Limits(f)
}

fn raw_key(app: &mut App, mut r: RawEditor, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) {
        if r.input.is_some() {
            r.input = None;
            return Mode::Raw(r);
        }
        return Mode::Normal;
    }
    match &mut r.input {
        None => {
            if !up_down(ev, &mut r.cursor, r.files.len()) && ev.code == KeyCode::Enter {
                r.input = Some(TextInput::new(TextInput::LINE));
            }
            Mode::Raw(r)
        }
        Some(line) if ev.code == KeyCode::Enter => {
            let text = line.as_str().trim().to_owned();
            if text.is_empty() {
                app.set_status(Level::Error, "type the line to write");
                return Mode::Raw(r);
            }
            let file = r.files[r.cursor].0.clone();
            request(app, vec![raw_op(&r.group, &file, &text)], fx);
            Mode::Normal
        }
        Some(line) => {
            type_into(app, line, ev);
            Mode::Raw(r)
        }
    }
}

/// A line typed in the raw editor as an op. The files that have a typed
/// op get it, so that they keep its guards and its undo: a raw "1" to
/// cgroup.freeze still needs a protected group's name typed, and a raw
/// subtree_control change is undone with +/- (its old text, "cpu io",
/// is not something the kernel accepts back). Anything else is written
/// as typed.
fn raw_op(group: &GroupPath, file: &str, line: &str) -> Op {
    match file {
        files::FREEZE if matches!(line, "0" | "1") => write::freeze(group, line == "1"),
        files::SUBTREE_CONTROL => match input::parse_controller_changes(line) {
            Ok(changes) => write::set_subtree_control(group, &changes),
            Err(_) => write::raw(group, file, line),
        },
        files::PROCS | files::THREADS => match input::parse_pid(line) {
            Ok(pid) => write::move_process(pid, group, file == files::THREADS),
            Err(_) => write::raw(group, file, line),
        },
        _ => write::raw(group, file, line),
    }
}

fn confirm_key(app: &mut App, mut c: Box<Confirm>, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) || (c.typed.is_none() && matches!(ev.code, KeyCode::Char('n' | 'N'))) {
        cancelled(app, *c);
        return Mode::Normal;
    }
    match &mut c.typed {
        Some((target, typed)) => match ev.code {
            KeyCode::Enter => {
                if typed_name_matches(target, typed.as_str()) {
                    fx.push(Effect::Write(c.request));
                    return Mode::Normal;
                }
            }
            _ => {
                type_into(app, typed, ev);
            }
        },
        None => match ev.code {
            KeyCode::Enter | KeyCode::Char('y' | 'Y') => {
                fx.push(Effect::Write(c.request));
                return Mode::Normal;
            }
            _ => {}
        },
    }
    Mode::Confirm(c)
}

/// What a cancelled question leaves behind: its undo entry goes back.
fn cancelled(app: &mut App, c: Confirm) {
    if let Some(op) = c.undo {
        app.undo.push(op);
    }
}

fn move_key(app: &mut App, mut m: MovePicker, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) {
        return Mode::Normal;
    }
    if up_down(ev, &mut m.cursor, m.matches.len()) {
        return Mode::Move(m);
    }
    match ev.code {
        KeyCode::Char('t') if ev.modifiers.contains(KeyModifiers::CONTROL) => {
            m.threads = !m.threads;
        }
        KeyCode::Enter => {
            if let Some(target) = m.matches.get(m.cursor).cloned() {
                request(
                    app,
                    vec![write::move_process(m.pid, &target, m.threads)],
                    fx,
                );
                return Mode::Normal;
            }
        }
        _ => {
            if type_into(app, &mut m.filter, ev) {
                // a new list: its best match is the first, not whatever
                // now sits where the cursor was
                m.cursor = 0;
                refilter_move(app, &mut m);
            }
        }
    }
    Mode::Move(m)
}

fn new_group_key(app: &mut App, mut p: NamePrompt, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) {
        return Mode::Normal;
    }
    match ev.code {
        KeyCode::Enter => {
            // the check refused every name that is not one component
            if let Ok(Ok(path)) = p.check.as_ref().map(|name| p.parent.join(name)) {
                request(app, vec![write::create_group(&path)], fx);
                return Mode::Normal;
            }
        }
        _ => {
            type_into(app, &mut p.input, ev);
        }
    }
    check_name(app, &mut p);
    Mode::NewGroup(p)
}

fn leaf_fix_key(app: &mut App, mut l: LeafFixDialog, ev: &KeyEvent, fx: &mut Vec<Effect>) -> Mode {
    if is_cancel(ev) {
        return Mode::Normal;
    }
    match ev.code {
        KeyCode::Enter => {
            // the writer makes group/leaf and moves every process there:
            // "." or ".." would be the group itself or its parent
            if let Ok(leaf) = &l.check {
                fx.push(Effect::Write(WriteRequest::LeafFix {
                    group: l.group,
                    leaf: leaf.clone(),
                    changes: l.changes,
                }));
                return Mode::Normal;
            }
        }
        _ => {
            type_into(app, &mut l.leaf, ev);
        }
    }
    l.recheck();
    Mode::LeafFix(l)
}

fn log_key(app: &mut App, scroll: usize, ev: &KeyEvent) -> Mode {
    match ev.code {
        KeyCode::Esc | KeyCode::Char('q' | 'L') | KeyCode::Enter => Mode::Normal,
        KeyCode::Up | KeyCode::Char('k') => Mode::Log {
            scroll: scroll.saturating_sub(1),
        },
        KeyCode::Down | KeyCode::Char('j') => Mode::Log {
            scroll: (scroll + 1).min(app.log.len().saturating_sub(1)),
        },
        _ => Mode::Log { scroll },
    }
}

// ---------------------------------------------------------------------------
// After the writer.

/// Applies the writer's outcomes: log, undo stack, status, offers.
pub fn on_write_finished(
    app: &mut App,
    outcomes: &[WriteOutcome],
    unix_secs: u64,
    fx: &mut Vec<Effect>,
) {
    let mut status: Option<(Level, String)> = None;
    let mut offer: Option<Offer> = None;
    for o in outcomes {
        if let Some(u) = o.undo() {
            app.undo.push(u);
        }
        if let (Ok(()), Some(w)) = (&o.result, o.op.as_write()) {
            match w.kind {
                WriteKind::Freeze(true) => {
                    app.freezing.insert(w.group.clone());
                }
                WriteKind::Freeze(false) => {
                    app.freezing.remove(&w.group);
                }
                _ => {}
            }
        }
        if status.as_ref().is_none_or(|(l, _)| *l != Level::Error) {
            status = Some(match (&o.result, o.stored_differs()) {
                // every failure opens a dialog with the whole story
                // (what, why, the fix); the status line keeps a short
                // record that a long explanation would have cut
                (Err(e), _) if e.errno.is_some() => (
                    Level::Error,
                    format!("{}: {} was refused", e.errno_name(), e.what),
                ),
                (Err(_), _) => (Level::Error, o.summary()),
                (Ok(()), Some(_)) => (Level::Warn, o.summary()),
                (Ok(()), None) => (Level::Info, o.summary()),
            });
        }
        if offer.is_none() {
            offer.clone_from(&o.offer);
        }
        app.log.push(LogEntry {
            unix_secs,
            outcome: o.clone(),
        });
    }
    if let Some((level, text)) = status {
        app.set_status(level, text);
    }
    let page_size = app.page_size;
    if let Mode::Limits(form) = &mut app.mode {
        show_readback(form, outcomes, page_size);
    }
    let failure = outcomes.iter().find_map(|o| o.result.as_ref().err());
    if let (Some(e), None) = (failure, &offer) {
        let mut lines = vec![e.what.clone(), String::new(), e.explanation.clone()];
        if let Some(fix) = &e.fix {
            lines.push(String::new());
            lines.push(format!("Fix: {fix}"));
        }
        let title = if e.errno.is_some() {
            format!("{}: the kernel refused", e.errno_name())
        } else {
            "the write did not complete".into()
        };
        app.mode = Mode::Message { title, lines };
    }
    fx.push(Effect::Collector(
        crate::source::collector::Command::RefreshNow,
    ));
    // a dialog still open (the limits form) stays; offers replace it
    match offer {
        Some(Offer::LeafFix {
            group,
            changes,
            nr_procs,
        }) => {
            let mut l = LeafFixDialog {
                group,
                leaf: TextInput::with_text(TextInput::NAME, "leaf"),
                changes,
                nr_procs,
                check: Err(String::new()),
            };
            l.recheck();
            app.mode = Mode::LeafFix(l);
        }
        Some(Offer::EnableAlongPath(ops)) => {
            let mut lines: Vec<String> = vec!["The parent does not hand this controller down. cgtop can enable it along the path:".into()];
            lines.extend(ops.iter().map(|o| format!("• {}", o.describe())));
            app.mode = Mode::Confirm(Box::new(Confirm {
                title: "enable along the path".into(),
                lines,
                request: WriteRequest::Ops(ops),
                typed: None,
                dangers: Vec::new(),
                undo: None,
            }));
        }
        None => {}
    }
}

/// The limits form stays open after a write: its "current" column takes
/// what the kernel stored (the writer's read-back), so that it does not
/// show the value just replaced, and the previews that depend on it (the
/// cpu.max period, the burst's quota) use the new one.
fn show_readback(form: &mut LimitsForm, outcomes: &[WriteOutcome], page_size: u64) {
    let mut changed = false;
    for o in outcomes {
        let (Some(w), Some(rb)) = (o.op.as_write(), &o.new_readback) else {
            continue;
        };
        if w.group != form.group {
            continue;
        }
        for f in form.fields.iter_mut().filter(|f| f.kind.file() == w.file) {
            f.current = Some(rb.trim_end().replace('\n', " | "));
            changed = true;
        }
    }
    if changed {
        for i in 0..form.fields.len() {
            refresh_preview(form, i, page_size);
        }
    }
}

/// The freeze marks: "freezing" until cgroup.events says frozen, and when
/// each group was first seen frozen (cgtop's clock).
pub fn track_freeze(app: &mut App) {
    let Some(d) = &app.data else { return };
    let at = d.refresh.snapshot.at;
    let mut frozen_now = Vec::new();
    for g in &d.refresh.snapshot.groups {
        if g.hot.events.is_some_and(|e| e.is_frozen()) {
            frozen_now.push(g.path.clone());
        }
    }
    app.freezing.retain(|p| !frozen_now.contains(p));
    app.frozen_since.retain(|p, _| frozen_now.contains(p));
    let first = app.frozen_seen_any;
    for p in frozen_now {
        // a group already frozen at cgtop's first refresh: since unknown
        app.frozen_since
            .entry(p)
            .or_insert(if first { Some(at) } else { None });
    }
    app.frozen_seen_any = true;
}
