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
use crate::model::input::{self, MemoryFile};
use crate::model::layout::v1_name;
use crate::model::write::{self, Op, WriteKind};
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
            Self::IoWeight => "200 or default 200: every device's weight, 1..10000",
            Self::IoLatency => "10ms | 500us | max (removes the target)",
        }
    }

    fn per_device(self) -> bool {
        matches!(self, Self::IoMax | Self::IoLatency)
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
        }
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self.file;
        let controller = self.controller();
        match self.why {
            MissingWhy::NotInKernel => write!(f, "this kernel has no {file}: the {controller} controller is on, but the feature is not built in"),
            MissingWhy::OnCgroupV1 => write!(f, "{file} is not on cgroup2 here: this hybrid host has the {controller} controller on cgroup v1, which cgtop does not edit"),
            MissingWhy::ControllerOff => write!(f, "{file} does not exist for this group: its controller is off (enable it in the parent with c)"),
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
        let fields = FieldKind::ALL
            .iter()
            .map(|&kind| Field {
                kind,
                current: raw_line(app, kind.file()),
                input: TextInput::new(TextInput::LINE),
                preview: Preview::Empty,
                op: None,
                warning: None,
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
                    f.fields[i].input.clear();
                    refresh_preview(f, i, app.page_size);
                    // after a direct write the form stays open for the
                    // next field; a confirmation replaces it
                    return match confirm::request(app, vec![op], fx) {
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
        if self.v1_controllers.iter().any(|c| c == v1_name(controller)) {
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
    let why = f.missing_why(controller_of(f.fields[i].kind.file()));
    let field = &mut f.fields[i];
    field.warning = None;
    field.op = None;
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
    field.preview = match op {
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
             cgroup v1, which cgtop does not edit"
        );
        assert_eq!(v1.label(), "(on cgroup v1)");
    }
}
