//! The limits form (e): one field per limit file (cpu, memory, io, pids).
//! What is typed is parsed on every key into the op Enter writes, or the
//! reason it cannot; after a write the form stays open and shows what the
//! kernel stored.
//!
//! Keys, one rule each in every field: the text edits as any line of
//! cgtop does (Left/Right, Home/End, ^W, ^U, ^K: readline's keys, which a
//! shell user tries first); Up/Down and Tab move between fields and drop
//! text left unwritten, so that a row never shows a value that is not the
//! file's; PgUp/PgDn pick the device, which only io.max and io.latency
//! use. Left/Right stay with the text even there: an io.max line
//! (`rbps=2M wbps=3M`) is the field most worth editing in place.

use super::{confirm, inspected_detail, not_ready, raw_line, type_into, writable, Transition};
use crate::app::keymap::Action;
use crate::app::text_input::{Input, TextInput};
use crate::app::{App, Effect, Level, Mode};
use crate::cgroupfs::files;
use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{CpuMax, Limit};
use crate::model::host::layout::{v1_name, HierId, Layout};
use crate::model::write::input::{self, MemoryFile};
use crate::model::write::{self, v1_files, Op, Throttle, V1MemoryFile, WriteKind};
use crate::model::WriteOutcome;
use crate::model::{DeviceInfo, GroupPath};
use crate::source::devices::throttle_check;

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
    // cgroup v1, shown instead of the v2 fields of a controller that a v1
    // hierarchy holds
    /// cpu.cfs_quota_us with cpu.cfs_period_us, typed as cpu.max is.
    V1Cfs,
    V1Shares,
    V1Memory(V1MemoryFile),
    V1Throttle(Throttle),
    /// blkio.bfq.weight (true) or CFQ's blkio.weight.
    V1BlkioWeight(bool),
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
            Self::V1Cfs => v1_files::CPU_CFS_QUOTA,
            Self::V1Shares => v1_files::CPU_SHARES,
            Self::V1Memory(m) => m.file(),
            Self::V1Throttle(t) => t.file(),
            Self::V1BlkioWeight(true) => v1_files::BLKIO_BFQ_WEIGHT,
            Self::V1BlkioWeight(false) => v1_files::BLKIO_WEIGHT,
        }
    }

    /// The fields of the form on `layout`: each controller's v1 files
    /// where a v1 hierarchy holds it, else its cgroup2 files, with the
    /// hierarchy each is written in. `bfq`: the group has
    /// blkio.bfq.weight rather than blkio.weight.
    pub fn for_layout(layout: &Layout, bfq: bool) -> Vec<(Self, HierId)> {
        let v1 = |c: &str| layout.holder(c).filter(|h| matches!(h, HierId::V1(_)));
        let mut out = Vec::new();
        match v1("cpu") {
            Some(h) => out.extend([(Self::V1Cfs, h), (Self::V1Shares, h)]),
            None => out.extend(Self::ALL[..4].iter().map(|&k| (k, HierId::V2))),
        }
        match v1("memory") {
            Some(h) => out.extend(
                [
                    V1MemoryFile::Limit,
                    V1MemoryFile::MemswLimit,
                    V1MemoryFile::SoftLimit,
                ]
                .map(|m| (Self::V1Memory(m), h)),
            ),
            None => out.extend(Self::ALL[4..9].iter().map(|&k| (k, HierId::V2))),
        }
        out.push((Self::PidsMax, v1("pids").unwrap_or(HierId::V2)));
        match v1("io") {
            Some(h) => {
                out.extend(Throttle::ALL.map(|t| (Self::V1Throttle(t), h)));
                out.push((Self::V1BlkioWeight(bfq), h));
            }
            None => out.extend(Self::ALL[10..].iter().map(|&k| (k, HierId::V2))),
        }
        out
    }

    /// What the field accepts, shown under it.
    pub fn hint(self) -> &'static str {
        match self {
            Self::CpuMax => "50% | 1.5 (CPUs) | max | QUOTA PERIOD (us)",
            Self::CpuMaxBurst => "microseconds",
            Self::CpuWeight => "1..10000 (default 100)",
            Self::CpuWeightNice => "-20..19, like nice(1); sets cpu.weight",
            Self::V1Memory(V1MemoryFile::Limit) => {
                "max | 512M | LIMIT MEMSW (both, written in the order the kernel takes)"
            }
            Self::Memory(_) | Self::V1Memory(_) => "max | bytes | 512M, 1.5G (binary units)",
            Self::PidsMax => "max | number of tasks",
            // the device is on its own line, with its keys
            Self::IoMax => "rbps=2M wbps=max riops=100 wiops=max (keys left out stay)",
            Self::IoWeight => "200 or default 200: every device's weight, 1..10000",
            Self::IoLatency => "10ms | 500us | max (removes the target)",
            Self::V1Cfs => "50% | 1.5 (CPUs) | max | QUOTA PERIOD (us); writes cpu.cfs_quota_us (and cpu.cfs_period_us)",
            Self::V1Shares => "2..262144 (default 1024)",
            Self::V1Throttle(Throttle::ReadBps | Throttle::WriteBps) => {
                "1M (bytes/s) for the device; 0 or max removes its limit"
            }
            Self::V1Throttle(_) => "IOs/s for the device; 0 or max removes its limit",
            Self::V1BlkioWeight(true) => "1..1000 (default 100)",
            Self::V1BlkioWeight(false) => "10..1000 (default 500)",
        }
    }

    fn per_device(self) -> bool {
        matches!(self, Self::IoMax | Self::IoLatency | Self::V1Throttle(_))
    }

    fn is_v1(self) -> bool {
        matches!(
            self,
            Self::V1Cfs
                | Self::V1Shares
                | Self::V1Memory(_)
                | Self::V1Throttle(_)
                | Self::V1BlkioWeight(_)
        )
    }
}

/// What Enter would do in a field, or why it cannot: recomputed on every
/// key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// Nothing typed yet.
    Empty,
    /// Enter writes `contents` to `file`.
    Writes { contents: String, file: String },
    /// Enter performs an op that is not one file write, in words.
    Does(String),
    /// What was typed is refused: the parser's reason, with what is
    /// accepted.
    Invalid(String),
    /// The field's file does not exist for this group.
    Missing(Missing),
}

/// A limit file the group lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Missing {
    pub file: &'static str,
    pub why: MissingWhy,
}

/// Why a limit file is not there: each has its own fix, so the form says
/// which rather than "controller off" for all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingWhy {
    /// The controller is not enabled for the group (its parent's
    /// cgroup.subtree_control does not hand it down).
    ControllerOff,
    /// The controller is mounted as a cgroup v1 hierarchy on this hybrid
    /// host, so cgroup2 cannot have it at all (admin guide 2-2 "a
    /// controller can be bound to only one hierarchy").
    OnCgroupV1,
    /// The controller is on (it is in the group's cgroup.controllers) but
    /// the kernel lacks the feature: io.latency on Debian's kernel, built
    /// without CONFIG_BLK_CGROUP_IOLATENCY.
    NotInKernel,
    /// The controller's v1 hierarchy has no group at this path (systemd
    /// makes a unit's group only in the hierarchies of the controllers
    /// it uses), or this kernel lacks the file (memsw without swap
    /// accounting).
    NotInV1Hierarchy,
}

impl Missing {
    /// The controller the file belongs to ("io" for io.latency).
    pub fn controller(&self) -> &'static str {
        controller_of(self.file)
    }

    /// A few words for the form's column of current values.
    pub fn label(&self) -> &'static str {
        match self.why {
            MissingWhy::ControllerOff => "(controller off)",
            MissingWhy::OnCgroupV1 => "(on cgroup v1)",
            MissingWhy::NotInKernel => "(not in this kernel)",
            MissingWhy::NotInV1Hierarchy => "(not in its v1 hierarchy)",
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self.file;
        let controller = self.controller();
        match self.why {
            MissingWhy::NotInKernel => write!(f, "this kernel has no {file}: the {controller} controller is on, but the feature is not built in"),
            MissingWhy::OnCgroupV1 => write!(f, "{file} is not on cgroup2 here: this hybrid host has the {controller} controller on cgroup v1, whose files the form shows instead where it knows the host's hierarchies"),
            MissingWhy::ControllerOff => write!(f, "{file} does not exist for this group: its controller is off (enable it in the parent with c)"),
            MissingWhy::NotInV1Hierarchy => write!(f, "{file} does not exist for this group: the group is not in the v1 {} hierarchy (systemd makes it there only for a unit that uses {}), or this kernel lacks the file", v1_name(controller), v1_name(controller)),
        }
    }
}

/// "io" for "io.latency": interface files are named CONTROLLER.KEY.
fn controller_of(file: &str) -> &str {
    file.split('.').next().unwrap_or(file)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub kind: FieldKind,
    /// The file's current content (one line), `None` when it does not exist
    /// for this group (controller off).
    pub current: Option<String>,
    pub input: TextInput,
    pub preview: Preview,
    /// The write Enter performs, when the input is valid.
    pub op: Option<Op>,
    /// A warning to show even when the input is valid.
    pub warning: Option<String>,
    /// The hierarchy the field's file is in.
    pub hier: HierId,
    /// Ops Enter writes before `op`, in order: a new CFS period before the
    /// quota, memsw before a higher memory limit.
    pub before: Vec<Op>,
    /// Where the write goes, in words, on a host with more than one
    /// hierarchy ("the v1 blkio hierarchy").
    pub place: Option<String>,
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
    /// well (measured in tests/guest/truth.rs). False on a hybrid host whose
    /// memory controller is on cgroup v1: writeback then runs as the root.
    pub cgroup_writeback: bool,
    /// The group's cgroup.controllers: a missing file whose controller is
    /// on is a feature the kernel lacks (io.latency on Debian), not a
    /// controller to enable.
    pub controllers_on: Vec<String>,
    /// The controllers cgroup v1 holds on a hybrid host (empty on pure
    /// v2): their files cannot be in cgroup2 at all.
    pub v1_controllers: Vec<String>,
}

impl LimitsForm {
    /// Opens the form on the selected group.
    pub fn open(app: &mut App) -> Transition {
        if !writable(app) {
            return Transition::Stay;
        }
        let Some(group) = not_ready(app) else {
            return Transition::Stay;
        };
        let devices: Vec<DeviceInfo> = app
            .data
            .as_ref()
            .map(|d| d.refresh.devices.to_vec())
            .unwrap_or_default();
        let device = devices
            .iter()
            .position(|d| throttle_check(d, &devices).is_ok())
            .unwrap_or(0);
        let cgroup_writeback = !app.mount.mode.on_v1("memory");
        let layout = app.layout.clone();
        let bfq = raw_in(app, &layout, layout.holder("io"), v1_files::BLKIO_WEIGHT).is_none();
        let fields = FieldKind::for_layout(&layout, bfq)
            .into_iter()
            .map(|(kind, hier)| Field {
                kind,
                current: current_of(app, &layout, kind, hier),
                input: TextInput::new(TextInput::LINE),
                preview: Preview::Empty,
                op: None,
                warning: None,
                hier,
                before: Vec::new(),
                place: write::hier_words(&layout, hier),
            })
            .collect();
        let controllers_on = inspected_detail(app)
            .and_then(|d| d.controllers.clone())
            .map(|c| c.0)
            .unwrap_or_default();
        let v1_controllers = app.mount.mode.v1_controllers().to_vec();
        let mut form = LimitsForm {
            group,
            fields,
            cursor: 0,
            devices,
            device,
            cgroup_writeback,
            controllers_on,
            v1_controllers,
        };
        // start on the first field that exists
        form.cursor = form
            .fields
            .iter()
            .position(|f| f.current.is_some())
            .unwrap_or(0);
        if form.fields.iter().all(|f| f.current.is_none()) {
            let v1: Vec<&str> = ["cpu", "memory", "io", "pids"]
                .into_iter()
                .filter(|c| form.missing_why(c) == MissingWhy::OnCgroupV1)
                .collect();
            let text = if v1.is_empty() {
                format!("{} has no limit files: the cpu, memory, io and pids controllers are all off for it (enable them in its parent with c)", form.group)
            } else {
                format!(
                    "{} has no limit files: this hybrid host has {} on cgroup v1{}",
                    form.group,
                    v1.join(", "),
                    if v1.len() == 4 {
                        ""
                    } else {
                        ", and the rest are off for it"
                    }
                )
            };
            app.set_status(Level::Warn, text);
            return Transition::Stay;
        }
        for i in 0..form.fields.len() {
            refresh_preview(&mut form, i, app.page_size);
        }
        Transition::Open(Mode::Limits(form))
    }

    pub fn key(
        &mut self,
        app: &mut App,
        action: Option<Action>,
        ev: Input<'_>,
        fx: &mut Vec<Effect>,
    ) -> Transition {
        let f = self;
        let i = f.cursor;
        match action {
            Some(Action::Cancel) => return Transition::Close,
            Some(a @ (Action::PrevField | Action::NextField)) => {
                let to = if a == Action::NextField {
                    (i + 1).min(f.fields.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                if to != i {
                    f.leave_field(app);
                    f.cursor = to;
                }
            }
            // one rule in every field: the device is the form's, used by
            // io.max and io.latency; Left/Right stay the text cursor's
            Some(a @ (Action::PrevDevice | Action::NextDevice)) if !f.devices.is_empty() => {
                let n = f.devices.len();
                f.device = if a == Action::NextDevice {
                    (f.device + 1) % n
                } else {
                    (f.device + n - 1) % n
                };
                for j in 0..f.fields.len() {
                    if f.fields[j].kind.per_device() {
                        refresh_preview(f, j, app.page_size);
                    }
                }
            }
            Some(Action::Accept) => {
                if let Some(op) = f.fields[i].op.clone() {
                    let mut ops = f.fields[i].before.clone();
                    ops.push(op);
                    f.fields[i].input.clear();
                    refresh_preview(f, i, app.page_size);
                    // after a direct write the form stays open for the
                    // next field; a confirmation replaces it
                    return match confirm::request(app, ops, fx) {
                        Transition::Close => Transition::Stay,
                        t => t,
                    };
                }
                // the form shows the whole reason; the status line, which a
                // long text would cut, takes the problem without the list of
                // what is accepted
                let why = match &f.fields[i].preview {
                    Preview::Invalid(e) => match e.split_once(". Accepted: ") {
                        Some((problem, _)) => problem.to_owned(),
                        None => e.clone(),
                    },
                    Preview::Missing(m) => m.to_string(),
                    _ => "type a value first".into(),
                };
                app.set_status(Level::Error, why);
            }
            _ => {
                if type_into(app, &mut f.fields[i].input, ev) {
                    refresh_preview(f, i, app.page_size);
                }
            }
        }
        Transition::Stay
    }
}

impl LimitsForm {
    /// Why the files of `controller` are missing for this group.
    pub fn missing_why(&self, controller: &str) -> MissingWhy {
        if self
            .fields
            .iter()
            .any(|f| f.kind.is_v1() && v1_name(controller_of(f.kind.file())) == v1_name(controller))
        {
            MissingWhy::NotInV1Hierarchy
        } else if self.v1_controllers.iter().any(|c| c == v1_name(controller)) {
            MissingWhy::OnCgroupV1
        } else if self.controllers_on.iter().any(|c| c == controller) {
            MissingWhy::NotInKernel
        } else {
            MissingWhy::ControllerOff
        }
    }

    /// The cursor leaves its field: text typed there and not written goes,
    /// so that the row shows the file's value again rather than text that
    /// looks set; the status line says what was dropped.
    fn leave_field(&mut self, app: &mut App) {
        let i = self.cursor;
        let field = &mut self.fields[i];
        if field.input.is_empty() {
            return;
        }
        let file = field.kind.file();
        app.set_status(
            Level::Info,
            format!("{file} not written: {:?} dropped", field.input.as_str()),
        );
        field.input.clear();
        refresh_preview(self, i, app.page_size);
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
    let why = if f.fields[i].kind.is_v1() || f.fields[i].hier != HierId::V2 {
        MissingWhy::NotInV1Hierarchy
    } else {
        f.missing_why(controller_of(f.fields[i].kind.file()))
    };
    let current_of_kind = |k: FieldKind| {
        f.fields
            .iter()
            .find(|x| x.kind == k)
            .and_then(|x| x.current.clone())
    };
    let memsw_now = current_of_kind(FieldKind::V1Memory(V1MemoryFile::MemswLimit))
        .and_then(|t| write::v1_limit(&t));
    let limit_now =
        current_of_kind(FieldKind::V1Memory(V1MemoryFile::Limit)).and_then(|t| write::v1_limit(&t));
    let field = &mut f.fields[i];
    field.warning = None;
    field.op = None;
    field.before = Vec::new();
    let h = field.hier;
    let text = field.input.as_str().trim().to_owned();
    if field.current.is_none() {
        field.preview = Preview::Missing(Missing {
            file: field.kind.file(),
            why,
        });
        return;
    }
    if text.is_empty() {
        field.preview = Preview::Empty;
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
            .map(|v| write::set_pids_max(&group, v).on(h))
            .map_err(|e| e.to_string()),
        FieldKind::V1Cfs => {
            let period = field
                .current
                .as_deref()
                .and_then(|c| CpuMax::parse(c).ok())
                .map(|c| c.period);
            input::parse_cpu_max(&text, period)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    let mut ops = write::set_cfs(&group, h, v, period);
                    let last = ops.pop().ok_or_else(|| "nothing to write".to_owned())?;
                    field.before = ops;
                    Ok(last)
                })
        }
        FieldKind::V1Shares => input::parse_cpu_shares(&text)
            .map(|v| write::set_cpu_shares(&group, h, v))
            .map_err(|e| e.to_string()),
        FieldKind::V1Memory(m) => v1_memory(&group, h, m, &text, limit_now, memsw_now)
            .map(|mut ops| {
                let last = ops.pop();
                field.before = ops;
                last
            })
            .and_then(|o| o.ok_or_else(|| "nothing to write".to_owned())),
        FieldKind::V1Throttle(t) => {
            let d = dev
                .clone()
                .ok_or_else(|| "no block device found in /sys/dev/block".to_owned())
                .and_then(|d| {
                    // v1 blkio takes any whole disk (loop and zram too,
                    // measured on 6.18); a partition is ENODEV
                    if d.partition {
                        throttle_check(&d, &devices).map(|()| d.dev)
                    } else {
                        Ok(d.dev)
                    }
                });
            d.and_then(|d| {
                input::parse_blkio_throttle(t, &text)
                    .map(|v| write::set_blkio_throttle(&group, h, t, d, v))
                    .map_err(|e| e.to_string())
            })
        }
        FieldKind::V1BlkioWeight(bfq) => input::parse_blkio_weight(bfq, &text)
            .map(|v| write::set_blkio_weight(&group, h, bfq, v))
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
    if matches!(field.kind, FieldKind::IoMax | FieldKind::V1Throttle(_)) && !cgroup_writeback {
        field.warning = Some("the memory controller is on cgroup v1 here, so there is no cgroup writeback: buffered writes are written back as the root and not throttled, only direct IO is (admin guide 5-3-2)".into());
    }
    if let (FieldKind::Memory(_), Ok(Op::Write(w))) = (field.kind, &op) {
        if let WriteKind::Memory(_, l) = w.kind {
            field.warning = input::memory_rounding_note(l, page_size);
        }
    }
    field.op = op.as_ref().ok().cloned();
    field.preview = match op {
        Ok(o) if !field.before.is_empty() => Preview::Does(
            field
                .before
                .iter()
                .chain(std::iter::once(&o))
                .map(Op::describe)
                .collect::<Vec<_>>()
                .join(", then "),
        ),
        Ok(o) => match o.as_write() {
            Some(w) => Preview::Writes {
                contents: w.contents.clone(),
                file: w.file.clone(),
            },
            None => Preview::Does(o.describe()),
        },
        Err(e) => Preview::Invalid(e),
    };
}

/// The ops of a v1 memory field: one limit, or for memory.limit_in_bytes
/// "LIMIT MEMSW" both in the kernel's order
/// ([`write::set_v1_memory_pair`]). A limit above memsw, or memsw below
/// the limit, is refused here with the way out: the kernel says EINVAL.
fn v1_memory(
    group: &GroupPath,
    h: HierId,
    m: V1MemoryFile,
    text: &str,
    limit_now: Option<Limit>,
    memsw_now: Option<Limit>,
) -> Result<Vec<Op>, String> {
    let parse = |t: &str| input::parse_memory(MemoryFile::Max, t).map_err(|e| e.to_string());
    let words: Vec<&str> = text.split_whitespace().collect();
    let above = |a: Limit, b: Limit| match (a, b) {
        (Limit::Max, Limit::Max) => false,
        (Limit::Max, _) => true,
        (_, Limit::Max) => false,
        (Limit::Value(x), Limit::Value(y)) => x > y,
    };
    let show = |l: Limit| match l {
        Limit::Max => "max".to_owned(),
        Limit::Value(v) => crate::render::units::limit_typed(Limit::Value(v)),
    };
    match (m, words.as_slice()) {
        (V1MemoryFile::Limit, [l, s]) => {
            let (l, s) = (parse(l)?, parse(s)?);
            if above(l, s) {
                return Err(format!(
                    "the limit {} is above memsw {}: memory.memsw.limit_in_bytes counts memory and swap, so it is at least the limit",
                    show(l),
                    show(s)
                ));
            }
            Ok(write::set_v1_memory_pair(
                group,
                h,
                l,
                s,
                limit_now.unwrap_or(Limit::Max),
            ))
        }
        (V1MemoryFile::Limit, [l]) => {
            let l = parse(l)?;
            match memsw_now {
                Some(s) if above(l, s) => Err(format!(
                    "memory.limit_in_bytes cannot go above memory.memsw.limit_in_bytes ({}): type both, like \"{} {}\", and cgtop writes memsw first",
                    show(s),
                    show(l),
                    show(l)
                )),
                _ => Ok(vec![write::set_v1_memory(group, h, m, l)]),
            }
        }
        (V1MemoryFile::MemswLimit, [s]) => {
            let s = parse(s)?;
            match limit_now {
                Some(l) if above(l, s) => Err(format!(
                    "memory.memsw.limit_in_bytes cannot go below memory.limit_in_bytes ({}): lower the limit first, or type both in memory.limit_in_bytes",
                    show(l)
                )),
                _ => Ok(vec![write::set_v1_memory(group, h, m, s)]),
            }
        }
        (_, [v]) => Ok(vec![write::set_v1_memory(group, h, m, parse(v)?)]),
        _ => Err(format!("{}: one value, like 512M or max", m.file())),
    }
}

/// The raw text of `file` in hierarchy `h` for the inspected group: the
/// primary hierarchy's files are named plainly, the others' as
/// `label:file` (`source::read`).
fn raw_in(app: &App, layout: &Layout, h: Option<HierId>, file: &str) -> Option<String> {
    match h {
        Some(HierId::V1(i)) if layout.primary() != Some(HierId::V1(i)) => {
            let label = layout.v1.get(i)?.label();
            raw_line(app, &format!("{label}:{file}"))
        }
        _ => raw_line(app, file),
    }
}

/// A field's current value: its file's line, or for the CFS field the
/// quota and period as cpu.max writes them ("50000 100000", "max 100000").
fn current_of(app: &App, layout: &Layout, kind: FieldKind, h: HierId) -> Option<String> {
    let raw = |f: &str| raw_in(app, layout, Some(h), f);
    match kind {
        FieldKind::V1Cfs => {
            let q =
                crate::cgroupfs::v1_limits::CfsQuota::parse(&raw(v1_files::CPU_CFS_QUOTA)?).ok()?;
            let p = crate::cgroupfs::v1_limits::parse_cfs_period(&raw(v1_files::CPU_CFS_PERIOD)?)
                .ok()?;
            Some(crate::cgroupfs::v1_limits::cfs_to_cpu_max(q, p).to_string())
        }
        k if k.is_v1() || h != HierId::V2 => raw(k.file()),
        k => raw_line(app, k.file()),
    }
}

/// The limits form stays open after a write: its "current" column takes
/// what the kernel stored (the writer's read-back), so that it does not
/// show the value just replaced, and the previews that depend on it (the
/// cpu.max period, the burst's quota) use the new one.
pub(crate) fn show_readback(form: &mut LimitsForm, outcomes: &[WriteOutcome], page_size: u64) {
    let mut changed = false;
    for o in outcomes {
        let (Some(w), Some(rb)) = (o.op.as_write(), &o.new_readback) else {
            continue;
        };
        if w.group != form.group {
            continue;
        }
        // the CFS field shows quota and period together, as cpu.max does
        if w.file == v1_files::CPU_CFS_QUOTA || w.file == v1_files::CPU_CFS_PERIOD {
            for f in form
                .fields
                .iter_mut()
                .filter(|f| f.kind == FieldKind::V1Cfs)
            {
                let now = f.current.as_deref().and_then(|c| CpuMax::parse(c).ok());
                let rb = rb.trim();
                let v = if w.file == v1_files::CPU_CFS_QUOTA {
                    crate::cgroupfs::v1_limits::CfsQuota::parse(rb)
                        .ok()
                        .zip(now)
                        .map(|(q, n)| crate::cgroupfs::v1_limits::cfs_to_cpu_max(q, n.period))
                } else {
                    crate::cgroupfs::v1_limits::parse_cfs_period(rb)
                        .ok()
                        .zip(now)
                        .map(|(p, n)| CpuMax {
                            quota: n.quota,
                            period: p,
                        })
                };
                if let Some(v) = v {
                    f.current = Some(v.to_string());
                    changed = true;
                }
            }
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

#[cfg(test)]
mod tests {
    use super::{Missing, MissingWhy};

    #[test]
    fn the_cfs_field_takes_the_quota_and_period_read_back() {
        use super::*;
        let group = GroupPath::new("job");
        let h = HierId::V1(0);
        let mut form = LimitsForm {
            group: group.clone(),
            fields: vec![Field {
                kind: FieldKind::V1Cfs,
                current: Some("50000 100000".into()),
                input: TextInput::new(TextInput::LINE),
                preview: Preview::Empty,
                op: None,
                warning: None,
                hier: h,
                before: Vec::new(),
                place: None,
            }],
            cursor: 0,
            devices: Vec::new(),
            device: 0,
            cgroup_writeback: false,
            controllers_on: Vec::new(),
            v1_controllers: Vec::new(),
        };
        let done = |op: Op, rb: &str| WriteOutcome::done(op, None, Some(rb.into()));
        show_readback(
            &mut form,
            &[done(
                write::set_cfs_quota(&group, h, Some(25_000)),
                "25000\n",
            )],
            4096,
        );
        assert_eq!(form.fields[0].current.as_deref(), Some("25000 100000"));
        show_readback(
            &mut form,
            &[
                done(write::set_cfs_period(&group, h, 50_000), "50000\n"),
                done(write::set_cfs_quota(&group, h, None), "-1\n"),
            ],
            4096,
        );
        assert_eq!(form.fields[0].current.as_deref(), Some("max 50000"));
        // "50%" is then half of the new period
        form.fields[0].input = TextInput::with_text(TextInput::LINE, "50%");
        refresh_preview(&mut form, 0, 4096);
        assert_eq!(
            form.fields[0].op,
            Some(write::set_cfs_quota(&group, h, Some(25_000)))
        );
    }

    #[test]
    fn a_missing_file_says_whether_the_controller_the_feature_or_v2_lacks_it() {
        let m = |file, why| Missing { file, why };
        let off = m("memory.max", MissingWhy::ControllerOff);
        assert_eq!(
            off.to_string(),
            "memory.max does not exist for this group: its controller is off \
             (enable it in the parent with c)"
        );
        assert_eq!(off.label(), "(controller off)");
        let no_feature = m("io.latency", MissingWhy::NotInKernel);
        assert_eq!(
            no_feature.to_string(),
            "this kernel has no io.latency: the io controller is on, but the feature is not built in"
        );
        assert_eq!(no_feature.label(), "(not in this kernel)");
        let v1 = m("memory.max", MissingWhy::OnCgroupV1);
        assert_eq!(
            v1.to_string(),
            "memory.max is not on cgroup2 here: this hybrid host has the memory controller on \
             cgroup v1, whose files the form shows instead where it knows the host's hierarchies"
        );
        assert_eq!(v1.label(), "(on cgroup v1)");
    }
}
