//! PURE: every change cgtop can make to the hierarchy, as a value.
//!
//! An action builds an [`Op`] here; `source::writer` performs it and reads
//! the file back. An op knows what it writes, whether it needs a
//! confirmation, how to undo it from the value it replaced, whether the
//! kernel's read-back matches what was written, and what the equivalent
//! `systemctl` command is for a systemd unit.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

pub mod effect;
pub mod errno;
pub mod explain;
pub mod guard;
pub mod history;
pub mod input;
pub mod killable;
pub mod outcome;
pub mod preflight;
pub mod systemd;

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{files, parse_u64, Controllers, CpuMax, IoLatency, IoMax, IoWeight, Limit};
use crate::model::host::layout::{HierId, Layout};
use crate::model::tree::path::PathError;
use crate::model::tree::text::escape_str;
use crate::model::write::input::{ControllerChange, IoMaxSet, MemoryFile};
use crate::model::GroupPath;
use std::fmt;

/// What a file write means; the typed value lets undo, read-back checks
/// and the systemd mapping work without re-parsing `contents`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteKind {
    CpuMax(CpuMax),
    CpuMaxBurst(u64),
    CpuWeight(u32),
    CpuWeightNice(i32),
    Memory(MemoryFile, Limit),
    IoMax(IoMaxSet),
    /// `dev: None` is the default weight; `weight: None` drops a device's
    /// override ("MAJ:MIN default").
    IoWeight {
        dev: Option<DevId>,
        weight: Option<u32>,
    },
    /// `target_usec: None` removes the target ("target=max").
    IoLatency {
        dev: DevId,
        target_usec: Option<u64>,
    },
    PidsMax(Limit),
    SubtreeControl(Vec<ControllerChange>),
    Freeze(bool),
    Kill,
    MoveProcess {
        pid: u32,
        threads: bool,
    },
    /// Any other file, written as typed.
    Raw,
    // cgroup v1 (admin guide cgroup-v1/*.rst); each op says its hierarchy
    // in [`WriteOp::hier`].
    /// blkio.throttle.{read,write}_{bps,iops}_device: "MAJ:MIN N";
    /// `limit: None` writes 0, which removes the device's rule
    /// (cgroup-v1/blkio-controller.rst).
    BlkioThrottle {
        which: Throttle,
        dev: DevId,
        limit: Option<u64>,
    },
    /// blkio.weight (CFQ, before 5.0) or blkio.bfq.weight: the group's
    /// default weight; the file the op names is the one the group has.
    BlkioWeight(u32),
    /// cpu.cfs_quota_us in microseconds; `None` is -1, no quota.
    CfsQuota(Option<u64>),
    /// cpu.cfs_period_us in microseconds.
    CfsPeriod(u64),
    /// cpu.shares (v1's weight, 1024 the default).
    CpuShares(u64),
    /// memory.limit_in_bytes, memory.memsw.limit_in_bytes,
    /// memory.soft_limit_in_bytes; `Limit::Max` is written as -1.
    V1Memory(V1MemoryFile, Limit),
    /// freezer.state: FROZEN (true) or THAWED.
    FreezerState(bool),
}

/// The v1 file names, kept with their parsers.
pub use crate::cgroupfs::v1_limits::files as v1_files;

/// One of the four blkio throttle files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    ReadBps,
    WriteBps,
    ReadIops,
    WriteIops,
}

impl Throttle {
    pub const ALL: [Self; 4] = [
        Self::ReadBps,
        Self::WriteBps,
        Self::ReadIops,
        Self::WriteIops,
    ];

    pub fn file(self) -> &'static str {
        match self {
            Self::ReadBps => v1_files::BLKIO_READ_BPS,
            Self::WriteBps => v1_files::BLKIO_WRITE_BPS,
            Self::ReadIops => v1_files::BLKIO_READ_IOPS,
            Self::WriteIops => v1_files::BLKIO_WRITE_IOPS,
        }
    }
}

/// A v1 memory limit file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1MemoryFile {
    Limit,
    MemswLimit,
    SoftLimit,
}

impl V1MemoryFile {
    pub fn file(self) -> &'static str {
        match self {
            Self::Limit => v1_files::MEMORY_LIMIT,
            Self::MemswLimit => v1_files::MEMSW_LIMIT,
            Self::SoftLimit => v1_files::MEMORY_SOFT_LIMIT,
        }
    }
}

/// A v1 byte limit as the kernel prints it: "no limit" is
/// PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages), any
/// value from 2^62 up is that.
pub fn v1_limit(text: &str) -> Option<Limit> {
    let t = text.trim();
    if t == "-1" {
        return Some(Limit::Max);
    }
    let v: u64 = t.parse().ok()?;
    Some(if v >= 1 << 62 {
        Limit::Max
    } else {
        Limit::Value(v)
    })
}

/// The value of `dev` in a blkio.throttle.* file ("MAJ:MIN N" lines, a
/// device without a rule absent); `None` when the text is not such a
/// file.
pub fn throttle_value(text: &str, dev: DevId) -> Option<Option<u64>> {
    let mut out = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (d, v) = line.trim().split_once(' ')?;
        let v: u64 = v.trim().parse().ok()?;
        if DevId::parse(d)? == dev {
            out = Some(v);
        }
    }
    Some(out)
}

/// One write(2) of `contents` to `group`/`file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOp {
    pub group: GroupPath,
    pub file: String,
    pub contents: String,
    pub kind: WriteKind,
    /// The hierarchy the file is in: cgroup2, or one cgroup v1 hierarchy
    /// (the one that holds the file's controller).
    pub hier: HierId,
    /// How the change is made: one write(2) of `contents`, or through
    /// systemd (`systemctl set-property --runtime`), which writes the same
    /// file itself and keeps the value across a daemon-reload.
    pub via: Via,
}

/// The way a write reaches the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Via {
    /// cgtop writes the file (write(2)).
    #[default]
    Direct,
    /// `systemctl set-property --runtime UNIT PROP=VALUE...`
    /// ([`systemd_equivalent`]): the group is a unit, and systemd has the
    /// property. `device` is the block device an io op names ("sda"),
    /// which systemd's properties take by node; kept here so that the
    /// undo names it too.
    Systemd { device: Option<String> },
}

/// A change to the hierarchy: a file write, or a group created (mkdir) or
/// removed (rmdir), each in one hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Write(WriteOp),
    CreateGroup(GroupPath, HierId),
    RemoveGroup(GroupPath, HierId),
}

/// A write to cgroup2; [`Op::on`] moves it to another hierarchy.
fn write(group: &GroupPath, file: &str, contents: String, kind: WriteKind) -> Op {
    Op::Write(WriteOp {
        group: group.clone(),
        file: file.to_owned(),
        contents,
        kind,
        hier: HierId::V2,
        via: Via::Direct,
    })
}

// ---------------------------------------------------------------------------
// Builders, one per action.

/// cpu.max: always both fields, so the period never depends on what the
/// file held before.
pub fn set_cpu_max(group: &GroupPath, v: CpuMax) -> Op {
    write(group, files::CPU_MAX, v.to_string(), WriteKind::CpuMax(v))
}

pub fn set_cpu_max_burst(group: &GroupPath, usec: u64) -> Op {
    write(
        group,
        files::CPU_MAX_BURST,
        usec.to_string(),
        WriteKind::CpuMaxBurst(usec),
    )
}

pub fn set_cpu_weight(group: &GroupPath, weight: u32) -> Op {
    write(
        group,
        files::CPU_WEIGHT,
        weight.to_string(),
        WriteKind::CpuWeight(weight),
    )
}

pub fn set_cpu_weight_nice(group: &GroupPath, nice: i32) -> Op {
    write(
        group,
        files::CPU_WEIGHT_NICE,
        nice.to_string(),
        WriteKind::CpuWeightNice(nice),
    )
}

/// memory.min/low/high/max or memory.swap.max.
pub fn set_memory_limit(group: &GroupPath, file: MemoryFile, limit: Limit) -> Op {
    write(
        group,
        file.file(),
        limit.to_string(),
        WriteKind::Memory(file, limit),
    )
}

pub fn set_io_max(group: &GroupPath, set: IoMaxSet) -> Op {
    write(group, files::IO_MAX, set.to_string(), WriteKind::IoMax(set))
}

/// io.weight: "default N" for `dev: None`, "MAJ:MIN N" for one device.
pub fn set_io_weight(group: &GroupPath, dev: Option<DevId>, weight: u32) -> Op {
    let contents = match dev {
        None => format!("default {weight}"),
        Some(d) => format!("{d} {weight}"),
    };
    write(
        group,
        files::IO_WEIGHT,
        contents,
        WriteKind::IoWeight {
            dev,
            weight: Some(weight),
        },
    )
}

/// io.weight: drops one device's override, so the default applies again.
pub fn reset_io_weight(group: &GroupPath, dev: DevId) -> Op {
    write(
        group,
        files::IO_WEIGHT,
        format!("{dev} default"),
        WriteKind::IoWeight {
            dev: Some(dev),
            weight: None,
        },
    )
}

/// io.latency "MAJ:MIN target=USEC"; `None` writes "target=max", which
/// the kernel reads as "no target" (block/blk-iolatency.c).
pub fn set_io_latency(group: &GroupPath, dev: DevId, target_usec: Option<u64>) -> Op {
    let contents = match target_usec {
        Some(t) => format!("{dev} target={t}"),
        None => format!("{dev} target=max"),
    };
    write(
        group,
        files::IO_LATENCY,
        contents,
        WriteKind::IoLatency { dev, target_usec },
    )
}

pub fn set_pids_max(group: &GroupPath, limit: Limit) -> Op {
    write(
        group,
        files::PIDS_MAX,
        limit.to_string(),
        WriteKind::PidsMax(limit),
    )
}

/// cgroup.subtree_control: every change in ONE write, so that the kernel
/// applies all or none (admin guide 4-3, cgroup.subtree_control).
pub fn set_subtree_control(group: &GroupPath, changes: &[ControllerChange]) -> Op {
    let contents = changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    write(
        group,
        files::SUBTREE_CONTROL,
        contents,
        WriteKind::SubtreeControl(changes.to_vec()),
    )
}

/// cgroup.freeze: `true` freezes the group and everything below it.
pub fn freeze(group: &GroupPath, frozen: bool) -> Op {
    write(
        group,
        files::FREEZE,
        if frozen { "1" } else { "0" }.to_owned(),
        WriteKind::Freeze(frozen),
    )
}

/// cgroup.kill: SIGKILL to every process in the group and below.
pub fn kill(group: &GroupPath) -> Op {
    write(group, files::KILL, "1".to_owned(), WriteKind::Kill)
}

/// Moves a whole process (cgroup.procs) or one thread (cgroup.threads)
/// into `target`. One pid per write (admin guide 2-2-1).
pub fn move_process(pid: u32, target: &GroupPath, threads: bool) -> Op {
    let file = if threads {
        files::THREADS
    } else {
        files::PROCS
    };
    write(
        target,
        file,
        pid.to_string(),
        WriteKind::MoveProcess { pid, threads },
    )
}

/// Any other file, written as typed (one line).
pub fn raw(group: &GroupPath, file: &str, line: &str) -> Op {
    write(group, file, line.to_owned(), WriteKind::Raw)
}

pub fn create_group(path: &GroupPath) -> Op {
    Op::CreateGroup(path.clone(), HierId::V2)
}

pub fn remove_group(path: &GroupPath) -> Op {
    Op::RemoveGroup(path.clone(), HierId::V2)
}

// ---------------------------------------------------------------------------
// cgroup v1 builders: each makes the op for the hierarchy `h` that holds
// the controller (`Layout::holder`).

/// blkio.throttle.*_device: "MAJ:MIN N", `None` writes 0 (removes).
pub fn set_blkio_throttle(
    group: &GroupPath,
    h: HierId,
    which: Throttle,
    dev: DevId,
    limit: Option<u64>,
) -> Op {
    write(
        group,
        which.file(),
        format!("{dev} {}", limit.unwrap_or(0)),
        WriteKind::BlkioThrottle { which, dev, limit },
    )
    .on(h)
}

/// blkio.weight, or blkio.bfq.weight with `bfq` (what the kernel has).
pub fn set_blkio_weight(group: &GroupPath, h: HierId, bfq: bool, weight: u32) -> Op {
    let file = if bfq {
        v1_files::BLKIO_BFQ_WEIGHT
    } else {
        v1_files::BLKIO_WEIGHT
    };
    write(
        group,
        file,
        weight.to_string(),
        WriteKind::BlkioWeight(weight),
    )
    .on(h)
}

/// cpu.cfs_quota_us; `None` writes -1 (no quota).
pub fn set_cfs_quota(group: &GroupPath, h: HierId, quota_us: Option<u64>) -> Op {
    let contents = quota_us.map_or_else(|| "-1".to_owned(), |q| q.to_string());
    write(
        group,
        v1_files::CPU_CFS_QUOTA,
        contents,
        WriteKind::CfsQuota(quota_us),
    )
    .on(h)
}

pub fn set_cfs_period(group: &GroupPath, h: HierId, period_us: u64) -> Op {
    write(
        group,
        v1_files::CPU_CFS_PERIOD,
        period_us.to_string(),
        WriteKind::CfsPeriod(period_us),
    )
    .on(h)
}

/// A v2 cpu.max value on v1: the period first, then the quota, so the
/// quota is never judged against the old period. `period_now` is the
/// group's cpu.cfs_period_us: when it is the same, only the quota is
/// written.
pub fn set_cfs(group: &GroupPath, h: HierId, v: CpuMax, period_now: Option<u64>) -> Vec<Op> {
    let mut ops = Vec::new();
    if period_now != Some(v.period) {
        ops.push(set_cfs_period(group, h, v.period));
    }
    ops.push(set_cfs_quota(group, h, v.quota));
    ops
}

pub fn set_cpu_shares(group: &GroupPath, h: HierId, shares: u64) -> Op {
    write(
        group,
        v1_files::CPU_SHARES,
        shares.to_string(),
        WriteKind::CpuShares(shares),
    )
    .on(h)
}

/// memory.limit_in_bytes and friends; "max" is written as -1.
pub fn set_v1_memory(group: &GroupPath, h: HierId, file: V1MemoryFile, limit: Limit) -> Op {
    let contents = match limit {
        Limit::Max => "-1".to_owned(),
        Limit::Value(v) => v.to_string(),
    };
    write(
        group,
        file.file(),
        contents,
        WriteKind::V1Memory(file, limit),
    )
    .on(h)
}

/// memory.limit_in_bytes and memory.memsw.limit_in_bytes together, in the
/// order the kernel takes them: it refuses (EINVAL) a limit above memsw
/// and a memsw below the limit at every moment
/// (mm/memcontrol-v1.c `mem_cgroup_resize_max`), so a rise writes memsw
/// first and a cut writes the limit first. `limit_now` is the group's
/// memory.limit_in_bytes.
pub fn set_v1_memory_pair(
    group: &GroupPath,
    h: HierId,
    limit: Limit,
    memsw: Limit,
    limit_now: Limit,
) -> Vec<Op> {
    let l = set_v1_memory(group, h, V1MemoryFile::Limit, limit);
    let m = set_v1_memory(group, h, V1MemoryFile::MemswLimit, memsw);
    let rising = match (limit, limit_now) {
        (Limit::Max, Limit::Max) => false,
        (Limit::Max, _) => true,
        (_, Limit::Max) => false,
        (Limit::Value(a), Limit::Value(b)) => a > b,
    };
    if rising {
        vec![m, l]
    } else {
        vec![l, m]
    }
}

/// freezer.state: FROZEN or THAWED. The kernel shows FREEZING until every
/// task has stopped (cgroup-v1/freezer-subsystem.rst).
pub fn set_freezer(group: &GroupPath, h: HierId, frozen: bool) -> Op {
    let contents = if frozen { "FROZEN" } else { "THAWED" };
    write(
        group,
        v1_files::FREEZER_STATE,
        contents.to_owned(),
        WriteKind::FreezerState(frozen),
    )
    .on(h)
}

/// A process into `target` in hierarchy `h`: cgroup.procs, or for one
/// thread v1's `tasks` (v1 has no cgroup.threads).
pub fn move_process_in(pid: u32, target: &GroupPath, threads: bool, h: HierId) -> Op {
    match (h, threads) {
        (HierId::V1(_), true) => write(
            target,
            v1_files::TASKS,
            pid.to_string(),
            WriteKind::MoveProcess { pid, threads },
        )
        .on(h),
        _ => move_process(pid, target, threads).on(h),
    }
}

/// The ops that make (or remove) a group in each of `hiers`, in that
/// order (a removal goes in the reverse order, so that the primary
/// hierarchy, first, is removed last).
pub fn create_group_in(path: &GroupPath, hiers: &[HierId]) -> Vec<Op> {
    hiers
        .iter()
        .map(|&h| Op::CreateGroup(path.clone(), h))
        .collect()
}

pub fn remove_group_in(path: &GroupPath, hiers: &[HierId]) -> Vec<Op> {
    hiers
        .iter()
        .rev()
        .map(|&h| Op::RemoveGroup(path.clone(), h))
        .collect()
}

/// The ops that make `group` able to hand domain controllers to its
/// children when it holds processes itself (the no internal process rule,
/// admin guide 2-4-3): create the leaf child, move each process into it,
/// then change the controllers. The writer re-reads the pids as it goes.
pub fn leaf_fix_plan(
    group: &GroupPath,
    leaf: &str,
    pids: &[u32],
    changes: &[ControllerChange],
) -> Result<Vec<Op>, PathError> {
    let leaf_path = group.join(leaf)?;
    let mut ops = vec![create_group(&leaf_path)];
    ops.extend(pids.iter().map(|&p| move_process(p, &leaf_path, false)));
    ops.push(set_subtree_control(group, changes));
    Ok(ops)
}

// ---------------------------------------------------------------------------
// What a write does, as the kernel reads it.

/// The process a write to cgroup.procs or cgroup.threads moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mover {
    Pid(u32),
    /// "0": the writing process (cgroup.procs) or thread (cgroup.threads),
    /// that is cgtop itself.
    Writer,
}

/// What a write does to processes, judged from the file and the bytes as
/// the kernel parses them, not from how the op was built: a raw `0x1` to
/// cgroup.freeze is a freeze like `1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteEffect {
    Freeze,
    Thaw,
    Kill,
    Move {
        who: Mover,
        threads: bool,
    },
    /// Anything else, including a value the kernel refuses.
    Other,
}

/// The kernel's `isspace()` for `strstrip()`: ASCII whitespace and 0xa0
/// (lib/ctype.c marks NBSP as space).
fn kernel_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0xa0)
}

/// `kstrtoint(strstrip(buf), 0, &v)`, the parse of cgroup.freeze,
/// cgroup.kill and cgroup.procs (kernel/cgroup/cgroup.c): surrounding
/// whitespace dropped, an optional sign ('+' or '-'), then base 0: "0x"
/// followed by a hex digit is hex, a leading "0" octal, else decimal; one
/// trailing newline allowed; the value must fit an int. `None` where the
/// kernel says EINVAL or ERANGE.
pub fn kernel_int(buf: &[u8]) -> Option<i32> {
    let start = buf.iter().position(|&b| !kernel_space(b))?;
    let end = buf.iter().rposition(|&b| !kernel_space(b))? + 1;
    let s = &buf[start..end];
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match s {
        [b'0', x, h, ..] if x.eq_ignore_ascii_case(&b'x') && h.is_ascii_hexdigit() => (16, &s[2..]),
        [b'0', ..] => (8, s),
        _ => (10, s),
    };
    let mut v: u64 = 0;
    let mut n = 0;
    for &b in digits {
        let Some(d) = char::from(b).to_digit(radix) else {
            break;
        };
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let rest = &digits[n..];
    if !(rest.is_empty() || rest == b"\n") {
        return None;
    }
    let v = i64::try_from(v).ok()?;
    i32::try_from(if neg { -v } else { v }).ok()
}

/// `strstrip()`: the kernel's whitespace off both ends.
fn kernel_strip(buf: &[u8]) -> &[u8] {
    let Some(start) = buf.iter().position(|&b| !kernel_space(b)) else {
        return &[];
    };
    let end = buf
        .iter()
        .rposition(|&b| !kernel_space(b))
        .map_or(start, |e| e + 1);
    &buf[start..end]
}

impl WriteOp {
    /// What this write does ([`WriteEffect`]).
    pub fn effect(&self) -> WriteEffect {
        let v = kernel_int(self.contents.as_bytes());
        match (self.file.as_str(), v) {
            (files::FREEZE, Some(1)) => WriteEffect::Freeze,
            (files::FREEZE, Some(0)) => WriteEffect::Thaw,
            (files::KILL, Some(1)) => WriteEffect::Kill,
            (files::PROCS | files::THREADS | v1_files::TASKS, Some(pid)) if pid >= 0 => {
                WriteEffect::Move {
                    who: if pid == 0 {
                        Mover::Writer
                    } else {
                        Mover::Pid(pid.unsigned_abs())
                    },
                    threads: self.file != files::PROCS,
                }
            }
            // freezer_write: strstrip, then an exact "FROZEN" or "THAWED"
            // (kernel/cgroup/legacy_freezer.c)
            (v1_files::FREEZER_STATE, _) => match kernel_strip(self.contents.as_bytes()) {
                b"FROZEN" => WriteEffect::Freeze,
                b"THAWED" => WriteEffect::Thaw,
                _ => WriteEffect::Other,
            },
            _ => WriteEffect::Other,
        }
    }
}

// ---------------------------------------------------------------------------
// What an op is.

impl Op {
    /// The group the op changes (for a move: the target).
    pub fn group(&self) -> &GroupPath {
        match self {
            Self::Write(w) => &w.group,
            Self::CreateGroup(p, _) | Self::RemoveGroup(p, _) => p,
        }
    }

    /// The hierarchy the op changes.
    pub fn hier(&self) -> HierId {
        match self {
            Self::Write(w) => w.hier,
            Self::CreateGroup(_, h) | Self::RemoveGroup(_, h) => *h,
        }
    }

    /// The same op in hierarchy `h`.
    #[must_use]
    pub fn on(mut self, h: HierId) -> Self {
        match &mut self {
            Self::Write(w) => w.hier = h,
            Self::CreateGroup(_, x) | Self::RemoveGroup(_, x) => *x = h,
        }
        self
    }

    pub fn as_write(&self) -> Option<&WriteOp> {
        match self {
            Self::Write(w) => Some(w),
            _ => None,
        }
    }

    /// What the op does to processes; a mkdir or rmdir does nothing to
    /// them.
    pub fn effect(&self) -> WriteEffect {
        self.as_write().map_or(WriteEffect::Other, WriteOp::effect)
    }

    /// Why this op must be confirmed first, or `None` when it can run at
    /// once. Limits and weights are undoable and need no confirmation.
    pub fn confirm_reason(&self) -> Option<&'static str> {
        match self {
            Self::RemoveGroup(..) => Some("removing a group cannot be undone"),
            Self::CreateGroup(..) => None,
            Self::Write(w) => match &w.kind {
                WriteKind::Kill => Some("every process in the group and below is killed"),
                WriteKind::Freeze(true) | WriteKind::FreezerState(true) => Some(
                    "every process in the group and below stops until the group is thawed",
                ),
                WriteKind::MoveProcess { .. } => Some(
                    "the process leaves its group and its limits; its memory stays charged to the old group",
                ),
                // Disabling a controller deletes its interface files in
                // every child, and with them the children's settings
                // (admin guide 2-4-1).
                WriteKind::SubtreeControl(c) if c.iter().any(|c| !c.enable) => Some(
                    "disabling a controller removes its files, and the limits set in them, from every child",
                ),
                _ => None,
            },
        }
    }

    pub fn is_destructive(&self) -> bool {
        self.confirm_reason().is_some()
    }

    /// The file whose old value undo needs, read before the write; `None`
    /// when there is no undo to build from a value.
    pub fn undo_source(&self) -> Option<&str> {
        let w = self.as_write()?;
        match w.kind {
            WriteKind::Kill | WriteKind::MoveProcess { .. } => None,
            // cpu.weight.nice reads back only approximately (the nearest
            // nice of the weight), so the exact cpu.weight is kept instead
            WriteKind::CpuWeightNice(_) => Some(files::CPU_WEIGHT),
            _ => Some(&w.file),
        }
    }

    /// Whether the op can be taken back at all: a kill and a remove
    /// cannot; a move can (back to the group the writer saw it in), as can
    /// every write whose file is read before it.
    pub fn can_undo(&self) -> bool {
        match self {
            Self::CreateGroup(..) => true,
            Self::RemoveGroup(..) => false,
            Self::Write(w) => {
                matches!(w.kind, WriteKind::MoveProcess { .. }) || self.undo_source().is_some()
            }
        }
    }

    /// Whether the file is read back after the write to see what the kernel
    /// stored.
    pub fn reads_back(&self) -> bool {
        self.as_write()
            .is_some_and(|w| !matches!(w.kind, WriteKind::Kill | WriteKind::MoveProcess { .. }))
    }

    /// The op that restores the state before this one, from `old`: the text
    /// of [`Self::undo_source`] read before the write. Kill, move and
    /// remove have no undo; create's undo is remove.
    ///
    /// The undo of a write made through systemd goes through systemd too
    /// (systemd would otherwise put the undone value back at the next
    /// daemon-reload), where systemd has a property for it; where it has
    /// none (a device weight back to the default), it is a direct write.
    pub fn undo(&self, old: Option<&str>) -> Option<Op> {
        // the way back is in the same hierarchy
        let back = self.undo_v2(old).map(|o| o.on(self.hier()))?;
        match self.as_write().map(|w| &w.via) {
            Some(Via::Systemd { device }) => {
                let device = device.clone();
                Some(
                    back.clone()
                        .through_systemd(device.as_deref())
                        .unwrap_or(back),
                )
            }
            _ => Some(back),
        }
    }

    /// The same write made through systemd: `None` when the group is not
    /// a unit or systemd has no property for it (see
    /// [`systemd_equivalent`]). Only `set-property` changes go this way:
    /// freeze, thaw and kill are not unit properties, and systemd does not
    /// re-apply them at a daemon-reload, so there is nothing to keep.
    pub fn through_systemd(self, device: Option<&str>) -> Option<Op> {
        let eq = systemd_equivalent(&self, device)?;
        if eq.args.get(1).map(String::as_str) != Some("set-property") {
            return None;
        }
        match self {
            Self::Write(mut w) if w.hier == HierId::V2 => {
                w.via = Via::Systemd {
                    device: device.map(str::to_owned),
                };
                Some(Self::Write(w))
            }
            _ => None,
        }
    }

    /// Whether the op goes through systemd.
    pub fn via_systemd(&self) -> bool {
        self.as_write()
            .is_some_and(|w| matches!(w.via, Via::Systemd { .. }))
    }

    /// The arguments systemctl is run with for a write through systemd
    /// (without "systemctl" itself); `None` for any other op.
    pub fn systemctl_args(&self) -> Option<Vec<String>> {
        let Some(Via::Systemd { device }) = self.as_write().map(|w| &w.via) else {
            return None;
        };
        let eq = systemd_equivalent(self, device.as_deref())?;
        Some(eq.args.into_iter().skip(1).collect())
    }

    fn undo_v2(&self, old: Option<&str>) -> Option<Op> {
        let w = match self {
            Self::CreateGroup(p, _) => return Some(remove_group(p)),
            Self::RemoveGroup(..) => return None,
            Self::Write(w) => w,
        };
        let old = old?;
        let g = &w.group;
        match &w.kind {
            WriteKind::Kill => None,
            // `old` is the group the process was in (the writer read it
            // from /proc/PID/cgroup, relative to the view): back there
            WriteKind::MoveProcess { pid, threads } => GroupPath::parse(old.as_bytes())
                .ok()
                .filter(|from| from != g)
                .map(|from| move_process_in(*pid, &from, *threads, w.hier)),
            WriteKind::BlkioThrottle { which, dev, .. } => {
                let was = throttle_value(old, *dev)?;
                Some(set_blkio_throttle(g, w.hier, *which, *dev, was))
            }
            WriteKind::BlkioWeight(_) => old
                .trim()
                .parse()
                .ok()
                .map(|v| set_blkio_weight(g, w.hier, w.file == v1_files::BLKIO_BFQ_WEIGHT, v)),
            WriteKind::CfsQuota(_) => match old.trim() {
                "-1" => Some(set_cfs_quota(g, w.hier, None)),
                t => t.parse().ok().map(|q| set_cfs_quota(g, w.hier, Some(q))),
            },
            WriteKind::CfsPeriod(_) => old
                .trim()
                .parse()
                .ok()
                .map(|p| set_cfs_period(g, w.hier, p)),
            WriteKind::CpuShares(_) => old
                .trim()
                .parse()
                .ok()
                .map(|v| set_cpu_shares(g, w.hier, v)),
            WriteKind::V1Memory(f, _) => v1_limit(old).map(|l| set_v1_memory(g, w.hier, *f, l)),
            // FREEZING: a freeze asked for and not yet done; back to it
            WriteKind::FreezerState(_) => match old.trim() {
                "FROZEN" | "FREEZING" => Some(set_freezer(g, w.hier, true)),
                "THAWED" => Some(set_freezer(g, w.hier, false)),
                _ => None,
            },
            WriteKind::CpuMax(_) => CpuMax::parse(old).ok().map(|v| set_cpu_max(g, v)),
            WriteKind::CpuMaxBurst(_) => parse_u64("cpu.max.burst", old)
                .ok()
                .map(|v| set_cpu_max_burst(g, v)),
            WriteKind::CpuWeight(_) | WriteKind::CpuWeightNice(_) => {
                old.trim().parse().ok().map(|v| set_cpu_weight(g, v))
            }
            WriteKind::Memory(f, _) => Limit::parse(f.file(), old)
                .ok()
                .map(|v| set_memory_limit(g, *f, v)),
            WriteKind::PidsMax(_) => Limit::parse("pids.max", old)
                .ok()
                .map(|v| set_pids_max(g, v)),
            WriteKind::IoMax(set) => {
                let was = IoMax::parse(old).ok()?;
                let dev = set.dev;
                let e = was
                    .get(dev)
                    .copied()
                    .unwrap_or_else(|| crate::cgroupfs::io::IoMaxDev::unlimited(dev));
                Some(set_io_max(
                    g,
                    IoMaxSet {
                        dev,
                        rbps: Some(e.rbps),
                        wbps: Some(e.wbps),
                        riops: Some(e.riops),
                        wiops: Some(e.wiops),
                    },
                ))
            }
            WriteKind::IoWeight { dev, .. } => {
                let was = IoWeight::parse(old).ok()?;
                Some(match dev {
                    None => set_io_weight(g, None, was.default),
                    Some(d) => match was.overrides.iter().find(|(x, _)| x == d) {
                        Some((_, w)) => set_io_weight(g, Some(*d), *w),
                        None => reset_io_weight(g, *d),
                    },
                })
            }
            WriteKind::IoLatency { dev, .. } => {
                let was = IoLatency::parse(old).ok()?;
                Some(set_io_latency(g, *dev, was.get(*dev)))
            }
            WriteKind::SubtreeControl(changes) => {
                let was = Controllers::parse(old);
                let back: Vec<ControllerChange> = changes
                    .iter()
                    .filter(|c| was.contains(&c.name) != c.enable)
                    .map(|c| ControllerChange {
                        name: c.name.clone(),
                        enable: was.contains(&c.name),
                    })
                    .collect();
                (!back.is_empty()).then(|| set_subtree_control(g, &back))
            }
            WriteKind::Freeze(_) => match old.trim() {
                "1" => Some(freeze(g, true)),
                "0" => Some(freeze(g, false)),
                _ => None,
            },
            WriteKind::Raw => {
                let t = old.trim();
                // a nested-keyed or multi-line file takes one key per write:
                // the whole old text cannot be written back in one go
                (!t.is_empty() && !t.contains('\n')).then(|| raw(g, &w.file, t))
            }
        }
    }

    /// One line for a confirmation prompt or the status line; a write
    /// through systemd says so.
    pub fn describe(&self) -> String {
        let s = self.describe_what();
        if self.via_systemd() {
            format!("{s} via systemd")
        } else {
            s
        }
    }

    fn describe_what(&self) -> String {
        let w = match self {
            Self::CreateGroup(p, _) => return format!("create the group {}", p.display()),
            Self::RemoveGroup(p, _) => return format!("remove the group {}", p.display()),
            Self::Write(w) => w,
        };
        let g = w.group.display();
        let (file, contents) = (escape_str(&w.file), escape_str(&w.contents));
        match &w.kind {
            WriteKind::Kill => format!("kill every process in {g} and below"),
            WriteKind::Freeze(true) => format!("freeze {g} and everything below it"),
            WriteKind::Freeze(false) => format!("thaw {g}"),
            WriteKind::FreezerState(true) => {
                format!("freeze {g} and everything below it (write {contents} to {file})")
            }
            WriteKind::FreezerState(false) => format!("thaw {g} (write {contents} to {file})"),
            WriteKind::BlkioThrottle { .. } => format!("write {contents} to {file} of {g}"),
            WriteKind::MoveProcess {
                pid,
                threads: false,
            } => format!("move process {pid} into {g}"),
            WriteKind::MoveProcess { pid, threads: true } => {
                format!("move thread {pid} into {g}")
            }
            WriteKind::SubtreeControl(_) => {
                format!("change the controllers {g} hands to its children: {contents}")
            }
            _ => format!("set {file} of {g} to {contents}"),
        }
    }
}

impl Op {
    /// [`Self::describe`] with the hierarchy named where there is more than
    /// one: "write 8:0 1048576 to blkio.throttle.write_bps_device of /a in
    /// the v1 blkio hierarchy".
    pub fn describe_in(&self, layout: &Layout) -> String {
        let mut s = self.describe();
        if let Some(w) = hier_words(layout, self.hier()) {
            s.push_str(" in ");
            s.push_str(&w);
        }
        s
    }
}

/// What `ops` do, one sentence per operator action: the ops that differ
/// only in their hierarchy (a move, a mkdir or an rmdir made in each
/// hierarchy that holds the group) are said once, with the hierarchies
/// they are made in, "move process 7 into /a in cgroup2 and the v1
/// cpu,cpuacct, memory hierarchies"; in the order each was first done.
/// Without v1 hierarchies no hierarchy is named.
pub fn sentences<'a>(ops: impl IntoIterator<Item = &'a Op>, layout: &Layout) -> Vec<String> {
    let mut said: Vec<(String, Vec<HierId>)> = Vec::new();
    for op in ops {
        let s = op.describe();
        match said.iter_mut().find(|(t, _)| *t == s) {
            Some((_, hs)) if !hs.contains(&op.hier()) => hs.push(op.hier()),
            Some(_) => {}
            None => said.push((s, vec![op.hier()])),
        }
    }
    said.into_iter()
        .map(|(s, mut hs)| {
            // named in the layout's order, whatever order they were made in
            hs.sort();
            if layout.v1.is_empty() {
                s
            } else {
                format!("{s} in {}", hiers_words(layout, &hs))
            }
        })
        .collect()
}

/// "the v1 blkio hierarchy", "cgroup2": where a layout has more than one
/// hierarchy; `None` on a host with only one.
pub fn hier_words(layout: &Layout, h: HierId) -> Option<String> {
    if layout.v1.is_empty() {
        return None;
    }
    Some(match h {
        HierId::V2 => "cgroup2".to_owned(),
        HierId::V1(i) => match layout.v1.get(i) {
            Some(m) => format!("the v1 {} hierarchy", m.label()),
            None => "a v1 hierarchy".to_owned(),
        },
    })
}

/// The hierarchies of a layout by name, joined: "cgroup2 and the v1
/// blkio, cpu, memory hierarchies".
pub fn hiers_words(layout: &Layout, hs: &[HierId]) -> String {
    let v2 = hs.contains(&HierId::V2).then(|| "cgroup2".to_owned());
    let v1: Vec<String> = hs
        .iter()
        .filter_map(|h| match h {
            HierId::V1(i) => layout
                .v1
                .get(*i)
                .map(crate::model::host::layout::V1Mount::label),
            HierId::V2 => None,
        })
        .collect();
    let v1 = match v1.len() {
        0 => None,
        1 => Some(format!("the v1 {} hierarchy", v1[0])),
        _ => Some(format!("the v1 {} hierarchies", v1.join(", "))),
    };
    match (v2, v1) {
        (Some(a), Some(b)) => format!("{a} and {b}"),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => "no hierarchy".to_owned(),
    }
}

// ---------------------------------------------------------------------------
// Read-back.

impl WriteOp {
    /// A sentence when the kernel stored something other than what was
    /// written (page rounding, clamping, nice approximation), `None` when
    /// it matches or cannot be judged.
    pub fn check_readback(&self, readback: &str) -> Option<String> {
        let rb = readback.trim();
        let differs = |stored: &str, why: &str| {
            // through systemd, systemd chose the bytes: a CPUQuota= is a
            // percentage to two decimals, so a quota between two of them
            // lands on the one below (systemd.resource-control(5))
            let (stored, file, contents) = (
                escape_str(stored),
                escape_str(&self.file),
                escape_str(&self.contents),
            );
            Some(match (&self.via, &self.kind) {
                (Via::Direct, _) => {
                    format!("the kernel stored {stored} in {file}, not {contents}{why}")
                }
                (Via::Systemd { .. }, kind) => {
                    let why = match kind {
                        WriteKind::CpuMax(_) => {
                            " (systemd takes CPUQuota= in hundredths of a percent)"
                        }
                        _ => why,
                    };
                    format!("after systemctl {file} holds {stored}, not {contents}{why}")
                }
            })
        };
        match &self.kind {
            WriteKind::Kill | WriteKind::MoveProcess { .. } => None,
            WriteKind::CpuMax(v) => match CpuMax::parse(rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, ""),
            },
            WriteKind::Memory(_, v) => match Limit::parse("memory", rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, " (it keeps whole pages)"),
            },
            WriteKind::PidsMax(v) => match Limit::parse("pids.max", rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, ""),
            },
            WriteKind::CpuWeightNice(_) => {
                (rb != self.contents).then_some(())?;
                differs(rb, " (a nice value stands for the nearest weight)")
            }
            // FREEZING is on the way to FROZEN: the writer waits for it
            // and says so when it has not settled
            WriteKind::FreezerState(true) if rb == "FREEZING" => None,
            WriteKind::CpuMaxBurst(_)
            | WriteKind::CpuWeight(_)
            | WriteKind::Freeze(_)
            | WriteKind::FreezerState(_)
            | WriteKind::BlkioWeight(_)
            | WriteKind::CfsPeriod(_)
            | WriteKind::CpuShares(_)
            | WriteKind::CfsQuota(Some(_)) => {
                (rb != self.contents).then_some(())?;
                differs(rb, "")
            }
            WriteKind::BlkioThrottle { dev, limit, .. } => {
                let got = throttle_value(rb, *dev)?;
                (got != *limit).then_some(())?;
                differs(
                    &got.map_or_else(|| format!("no rule for {dev}"), |v| format!("{dev} {v}")),
                    "",
                )
            }
            WriteKind::CfsQuota(None) => {
                (rb != "-1").then_some(())?;
                differs(rb, "")
            }
            WriteKind::V1Memory(_, v) => match v1_limit(rb) {
                Some(s) if s == *v => None,
                _ => differs(rb, " (it keeps whole pages)"),
            },

            WriteKind::IoMax(set) => {
                let dev = set.dev;
                let now = IoMax::parse(rb).ok()?;
                let e = now
                    .get(dev)
                    .copied()
                    .unwrap_or_else(|| crate::cgroupfs::io::IoMaxDev::unlimited(dev));
                let got = [e.rbps, e.wbps, e.riops, e.wiops];
                let want = [set.rbps, set.wbps, set.riops, set.wiops];
                let same = got.iter().zip(want).all(|(g, w)| w.is_none_or(|w| w == *g));
                if same {
                    None
                } else {
                    differs(&e.to_string(), "")
                }
            }
            WriteKind::IoWeight { dev, weight } => {
                let now = IoWeight::parse(rb).ok()?;
                let got = match dev {
                    None => Some(now.default),
                    Some(d) => now.overrides.iter().find(|(x, _)| x == d).map(|(_, w)| *w),
                };
                if got == *weight {
                    None
                } else {
                    let shown = match (dev, got) {
                        (None, Some(w)) => format!("default {w}"),
                        (Some(d), Some(w)) => format!("{d} {w}"),
                        (Some(d), None) => format!("no override for {d}"),
                        (None, None) => "no default weight".to_owned(),
                    };
                    differs(&shown, "")
                }
            }
            WriteKind::IoLatency { dev, target_usec } => {
                let now = IoLatency::parse(rb).ok()?;
                let got = now.get(*dev).filter(|t| *t != 0);
                if got == *target_usec {
                    None
                } else {
                    let shown = got.map_or_else(
                        || format!("no target for {dev}"),
                        |t| format!("{dev} target={t}"),
                    );
                    differs(&shown, "")
                }
            }
            WriteKind::SubtreeControl(changes) => {
                let now = Controllers::parse(rb);
                let ok = changes.iter().all(|c| now.contains(&c.name) == c.enable);
                if ok {
                    None
                } else {
                    differs(&format!("{rb:?}"), "")
                }
            }
            WriteKind::Raw => {
                if rb == self.contents.trim() || rb.contains('\n') {
                    None
                } else {
                    differs(rb, "")
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// systemd.

/// The systemd unit a group is, when its name ends in .service, .scope or
/// .slice: systemd owns such a group, and a direct write is lost the next
/// time systemd applies the unit's properties. Only a name that systemd
/// could have given (ASCII letters, digits and `:-_.\@`; systemd spells
/// every other byte as `\xHH`) is a unit: a directory named
/// `x\e.service`, made by hand in a delegated subtree, is not one.
pub fn systemd_unit(group: &GroupPath) -> Option<&str> {
    let name = group.name();
    let valid = name.len() <= 255
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b":-_.\\@".contains(b));
    let name = std::str::from_utf8(name).ok().filter(|_| valid)?;
    [".service", ".scope", ".slice"]
        .iter()
        .any(|s| name.len() > s.len() && name.ends_with(s))
        .then_some(name)
}

/// The unit of the system manager a group is, by where systemd puts a
/// unit's group: every ancestor a slice, each slice under the one its
/// name says (`a-b.slice` in `a.slice`, a slice without `-` at the top),
/// the group itself a slice under the same rule or a service or scope
/// directly in a slice. Only such a group is what `systemctl` (the
/// system manager) names by its last component: a group
/// `user@1000.service/x/sshd.service`, made by a delegated user, is not
/// the system's `sshd.service`, and a name starting with `-` would be
/// read by systemctl as an option. `None` for any other group.
pub fn system_unit(group: &GroupPath) -> Option<&str> {
    let unit = systemd_unit(group)?;
    if unit.starts_with('-') {
        return None;
    }
    // the base of the slice the next component must be in ("" = the root)
    let mut parent = "";
    let comps: Vec<&[u8]> = group
        .as_bytes()
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .collect();
    let (_, ancestors) = comps.split_last()?;
    let in_slice = |parent: &str, base: &str| -> bool {
        match base.rsplit_once('-') {
            None => parent.is_empty() && !base.is_empty(),
            Some((up, last)) => up == parent && !last.is_empty(),
        }
    };
    for c in ancestors {
        let base = std::str::from_utf8(c).ok()?.strip_suffix(".slice")?;
        if !in_slice(parent, base) {
            return None;
        }
        parent = base;
    }
    match unit.strip_suffix(".slice") {
        Some(base) => in_slice(parent, base).then_some(unit),
        // a service or scope sits directly in a slice (or the root slice)
        None => Some(unit),
    }
}

/// The `systemctl` command that makes the same change through systemd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemdEquivalent {
    pub unit: String,
    /// argv, starting with "systemctl".
    pub args: Vec<String>,
}

impl SystemdEquivalent {
    /// The command as one shell line, each argument quoted when needed.
    pub fn command_line(&self) -> String {
        self.args
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if safe {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A systemd time span: "100ms", "1s", "1500us".
fn timespan(usec: u64) -> String {
    if usec % 1_000_000 == 0 {
        format!("{}s", usec / 1_000_000)
    } else if usec % 1_000 == 0 {
        format!("{}ms", usec / 1_000)
    } else {
        format!("{usec}us")
    }
}

/// A cpu.max quota as systemd's CPUQuota percentage (of one CPU), to two
/// decimals.
fn cpu_quota_percent(quota: u64, period: u64) -> String {
    let permyriad =
        (u128::from(quota) * 10_000 + u128::from(period) / 2) / u128::from(period.max(1));
    if permyriad % 100 == 0 {
        format!("{}%", permyriad / 100)
    } else {
        format!("{}.{:02}%", permyriad / 100, permyriad % 100)
    }
}

fn infinity(l: Limit) -> String {
    match l {
        Limit::Max => "infinity".to_owned(),
        Limit::Value(v) => v.to_string(),
    }
}

/// The systemd way to make `op`, for a group that is a systemd unit.
/// `device` names the block device of an io op ("sda" or "/dev/sda").
/// `None` when the group is not a unit or systemd has no such property
/// (cpu.weight.nice, cpu.max.burst, a device weight reset, removing an
/// io.latency target, subtree_control, moves, raw writes).
pub fn systemd_equivalent(op: &Op, device: Option<&str>) -> Option<SystemdEquivalent> {
    const SET: &[&str] = &["set-property", "--runtime"];
    let w = op.as_write()?;
    let unit = system_unit(&w.group)?.to_owned();
    // a device name from the outside becomes part of an argument: only a
    // plain kernel device name ("sda", "nvme0n1", "dm-0", "/dev/sda")
    let device = device.filter(|d| {
        let name = d.strip_prefix("/dev/").unwrap_or(d);
        !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.!".contains(&b))
    });
    let dev = || {
        device.map(|d| {
            if d.starts_with('/') {
                d.to_owned()
            } else {
                format!("/dev/{d}")
            }
        })
    };
    let (verb, props): (&[&str], Vec<String>) = match &w.kind {
        WriteKind::Freeze(true) | WriteKind::FreezerState(true) => (&["freeze"], Vec::new()),
        WriteKind::Freeze(false) | WriteKind::FreezerState(false) => (&["thaw"], Vec::new()),
        WriteKind::Kill => (&["kill", "--signal=SIGKILL"], Vec::new()),
        WriteKind::CpuMax(v) => (
            SET,
            vec![
                match v.quota {
                    Some(q) => format!("CPUQuota={}", cpu_quota_percent(q, v.period)),
                    None => "CPUQuota=".to_owned(),
                },
                format!("CPUQuotaPeriodSec={}", timespan(v.period)),
            ],
        ),
        WriteKind::CpuWeight(n) => (SET, vec![format!("CPUWeight={n}")]),
        WriteKind::Memory(f, l) => {
            let prop = match f {
                MemoryFile::Min => "MemoryMin",
                MemoryFile::Low => "MemoryLow",
                MemoryFile::High => "MemoryHigh",
                MemoryFile::Max => "MemoryMax",
                MemoryFile::SwapMax => "MemorySwapMax",
            };
            (SET, vec![format!("{prop}={}", infinity(*l))])
        }
        WriteKind::PidsMax(l) => (SET, vec![format!("TasksMax={}", infinity(*l))]),
        WriteKind::IoMax(set) => {
            let d = dev()?;
            let props = set
                .pairs()
                .into_iter()
                .map(|(k, v)| {
                    let prop = match k {
                        "rbps" => "IOReadBandwidthMax",
                        "wbps" => "IOWriteBandwidthMax",
                        "riops" => "IOReadIOPSMax",
                        _ => "IOWriteIOPSMax",
                    };
                    format!("{prop}={d} {}", infinity(v))
                })
                .collect();
            (SET, props)
        }
        WriteKind::IoWeight {
            dev: None,
            weight: Some(n),
        } => (SET, vec![format!("IOWeight={n}")]),
        WriteKind::IoWeight {
            dev: Some(_),
            weight: Some(n),
        } => (SET, vec![format!("IODeviceWeight={} {n}", dev()?)]),
        WriteKind::IoLatency {
            target_usec: Some(t),
            ..
        } => (
            SET,
            vec![format!(
                "IODeviceLatencyTargetSec={} {}",
                dev()?,
                timespan(*t)
            )],
        ),
        _ => return None,
    };
    let args = std::iter::once("systemctl")
        .chain(verb.iter().copied())
        .chain(std::iter::once(unit.as_str()))
        .map(str::to_owned)
        .chain(props)
        .collect();
    Some(SystemdEquivalent { unit, args })
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_ints_as_kstrtoint_reads_them() {
        let k = |s: &str| kernel_int(s.as_bytes());
        for (text, v) in [
            ("1", Some(1)),
            ("0x1", Some(1)),
            ("0X1", Some(1)),
            ("01", Some(1)),
            ("+1", Some(1)),
            (" 1", Some(1)),
            ("\t1\n", Some(1)),
            ("1\n\n", Some(1)),
            ("000001", Some(1)),
            ("-0", Some(0)),
            ("+0", Some(0)),
            ("0", Some(0)),
            ("00", Some(0)),
            ("0x0", Some(0)),
            ("010", Some(8)),
            ("0x10", Some(16)),
            ("-1", Some(-1)),
            ("2147483647", Some(i32::MAX)),
            ("2147483648", None),
            ("-2147483648", Some(i32::MIN)),
            ("99999999999999999999999", None),
            ("08", None),
            ("0x", None),
            ("0xg", None),
            ("1 2", None),
            ("1a", None),
            ("++1", None),
            ("+-1", None),
            ("", None),
            ("  ", None),
            ("one", None),
        ] {
            assert_eq!(k(text), v, "{text:?}");
        }
        // NBSP is space to the kernel; its UTF-8 lead byte is not
        assert_eq!(kernel_int(b"\xa01\xa0"), Some(1));
        assert_eq!(k("1\u{a0}"), None);
    }

    #[test]
    fn effects_are_judged_from_the_bytes() {
        let a = GroupPath::new("a");
        for v in ["1", "0x1", "01", "+1", " 1", "1\n"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Freeze,
                "{v}"
            );
            assert_eq!(raw(&a, "cgroup.kill", v).effect(), WriteEffect::Kill, "{v}");
        }
        for v in ["0", "00", "0x0", "-0"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Thaw,
                "{v}"
            );
            let moved = WriteEffect::Move {
                who: Mover::Writer,
                threads: false,
            };
            assert_eq!(raw(&a, "cgroup.procs", v).effect(), moved, "{v}");
        }
        for v in ["2", "-1", "1x", "yes"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Other,
                "{v}"
            );
        }
        assert_eq!(raw(&a, "cgroup.kill", "0").effect(), WriteEffect::Other);
        assert_eq!(
            raw(&a, "cgroup.threads", "0x10").effect(),
            WriteEffect::Move {
                who: Mover::Pid(16),
                threads: true
            }
        );
        assert_eq!(raw(&a, "cgroup.procs", "-5").effect(), WriteEffect::Other);
        assert_eq!(raw(&a, "memory.max", "1").effect(), WriteEffect::Other);
        // the typed ops mean what their bytes mean
        assert_eq!(freeze(&a, true).effect(), WriteEffect::Freeze);
        assert_eq!(freeze(&a, false).effect(), WriteEffect::Thaw);
        assert_eq!(kill(&a).effect(), WriteEffect::Kill);
        assert_eq!(
            move_process(7, &a, false).effect(),
            WriteEffect::Move {
                who: Mover::Pid(7),
                threads: false
            }
        );
        assert_eq!(remove_group(&a).effect(), WriteEffect::Other);
    }

    const SDA: DevId = DevId { major: 8, minor: 0 };

    #[test]
    fn v1_ops_name_their_hierarchy_and_undo_there() {
        let a = g("job");
        let h = HierId::V1(3);
        let t = set_blkio_throttle(&a, h, Throttle::WriteBps, SDA, Some(1 << 20));
        let w = t.as_write().unwrap();
        assert_eq!(
            (w.file.as_str(), w.contents.as_str(), w.hier),
            ("blkio.throttle.write_bps_device", "8:0 1048576", h)
        );
        // undo from the file's old text: no rule for 8:0 before, so 0
        assert_eq!(
            t.undo(Some("8:16 100\n")),
            Some(set_blkio_throttle(&a, h, Throttle::WriteBps, SDA, None))
        );
        assert_eq!(
            t.undo(Some("8:0 2048\n")),
            Some(set_blkio_throttle(
                &a,
                h,
                Throttle::WriteBps,
                SDA,
                Some(2048)
            ))
        );
        assert_eq!(
            set_blkio_throttle(&a, h, Throttle::ReadIops, SDA, None)
                .as_write()
                .unwrap()
                .contents,
            "8:0 0"
        );
        let w = t.as_write().unwrap();
        assert_eq!(w.check_readback("8:0 1048576\n"), None);
        assert!(w.check_readback("").is_some());
        // CFS: -1 is no quota
        let q = set_cfs_quota(&a, h, None);
        assert_eq!(q.as_write().unwrap().contents, "-1");
        assert_eq!(
            q.undo(Some("50000\n")),
            Some(set_cfs_quota(&a, h, Some(50_000)))
        );
        assert_eq!(
            set_cfs(
                &a,
                h,
                CpuMax {
                    quota: Some(25_000),
                    period: 50_000
                },
                Some(100_000)
            ),
            [
                set_cfs_period(&a, h, 50_000),
                set_cfs_quota(&a, h, Some(25_000))
            ]
        );
        // memory: max is -1; the kernel's page-counter maximum reads as max
        let m = set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Value(1 << 26));
        assert_eq!(
            m.undo(Some("9223372036854771712\n")),
            Some(set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Max))
        );
        assert_eq!(
            set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Max)
                .as_write()
                .unwrap()
                .check_readback("9223372036854771712"),
            None
        );
        let rise = set_v1_memory_pair(
            &a,
            h,
            Limit::Value(200),
            Limit::Value(400),
            Limit::Value(100),
        );
        assert_eq!(
            rise[0].as_write().unwrap().file,
            "memory.memsw.limit_in_bytes"
        );
        let cut = set_v1_memory_pair(&a, h, Limit::Value(50), Limit::Value(60), Limit::Value(100));
        assert_eq!(cut[0].as_write().unwrap().file, "memory.limit_in_bytes");
        let unl = set_v1_memory_pair(&a, h, Limit::Max, Limit::Max, Limit::Value(100));
        assert_eq!(
            unl[0].as_write().unwrap().file,
            "memory.memsw.limit_in_bytes"
        );
        // freezer: FREEZING is on its way, not a different value
        let f = set_freezer(&a, h, true);
        assert!(f.is_destructive());
        assert_eq!(f.effect(), WriteEffect::Freeze);
        assert_eq!(f.as_write().unwrap().check_readback("FREEZING\n"), None);
        assert_eq!(f.undo(Some("THAWED\n")), Some(set_freezer(&a, h, false)));
        assert_eq!(
            raw(&a, "freezer.state", " FROZEN\n").effect(),
            WriteEffect::Freeze
        );
        assert_eq!(
            raw(&a, "freezer.state", "frozen").effect(),
            WriteEffect::Other
        );
        assert_eq!(
            raw(&a, "freezer.state", "THAWED").effect(),
            WriteEffect::Thaw
        );
        // a pid to v1's tasks moves one thread
        assert_eq!(
            raw(&a, "tasks", "7").effect(),
            WriteEffect::Move {
                who: Mover::Pid(7),
                threads: true
            }
        );
        // a move's undo goes back in the same hierarchy
        let mv = move_process_in(7, &a, false, h);
        assert_eq!(
            mv.undo(Some("other")),
            Some(move_process_in(7, &g("other"), false, h))
        );
        // create and remove, in each hierarchy; removal in reverse
        let hs = [HierId::V2, HierId::V1(0), HierId::V1(1)];
        let made = create_group_in(&a, &hs);
        assert_eq!(made[2], create_group(&a).on(HierId::V1(1)));
        assert_eq!(made[1].undo(None), Some(remove_group(&a).on(HierId::V1(0))));
        let gone = remove_group_in(&a, &hs);
        assert_eq!(gone.last().unwrap().hier(), HierId::V2);
        assert_eq!(gone[0].hier(), HierId::V1(1));
    }

    #[test]
    fn descriptions_name_the_hierarchy_where_there_are_several() {
        use crate::model::host::layout::V1Mount;
        let layout = Layout {
            v2: Some("/sys/fs/cgroup/unified".into()),
            v1: vec![V1Mount {
                dir: "/sys/fs/cgroup/blkio".into(),
                controllers: vec!["blkio".into()],
                name: None,
            }],
        };
        let op = set_blkio_throttle(
            &g("a"),
            HierId::V1(0),
            Throttle::WriteBps,
            SDA,
            Some(1 << 20),
        );
        assert_eq!(
            op.describe_in(&layout),
            "write 8:0 1048576 to blkio.throttle.write_bps_device of /a in the v1 blkio hierarchy"
        );
        assert_eq!(
            freeze(&g("a"), true).describe_in(&layout),
            "freeze /a and everything below it in cgroup2"
        );
        // one hierarchy: nothing to say
        assert_eq!(
            freeze(&g("a"), true).describe_in(&Layout::default()),
            "freeze /a and everything below it"
        );
        assert_eq!(
            hiers_words(&layout, &[HierId::V2, HierId::V1(0)]),
            "cgroup2 and the v1 blkio hierarchy"
        );
    }

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    fn op(group: &str, file: &str, contents: &str, kind: WriteKind) -> Op {
        Op::Write(WriteOp {
            group: g(group),
            file: file.into(),
            contents: contents.into(),
            kind,
            hier: HierId::V2,
            via: Via::Direct,
        })
    }

    #[test]
    fn builders_make_exact_ops() {
        let a = g("a/b");
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, half),
            op("a/b", "cpu.max", "50000 100000", WriteKind::CpuMax(half))
        );
        let unl = CpuMax {
            quota: None,
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, unl),
            op("a/b", "cpu.max", "max 100000", WriteKind::CpuMax(unl))
        );
        assert_eq!(
            set_cpu_max_burst(&a, 20_000),
            op(
                "a/b",
                "cpu.max.burst",
                "20000",
                WriteKind::CpuMaxBurst(20_000)
            )
        );
        assert_eq!(
            set_cpu_weight(&a, 200),
            op("a/b", "cpu.weight", "200", WriteKind::CpuWeight(200))
        );
        assert_eq!(
            set_cpu_weight_nice(&a, -5),
            op("a/b", "cpu.weight.nice", "-5", WriteKind::CpuWeightNice(-5))
        );
        for (f, name) in [
            (MemoryFile::Min, "memory.min"),
            (MemoryFile::Low, "memory.low"),
            (MemoryFile::High, "memory.high"),
            (MemoryFile::Max, "memory.max"),
            (MemoryFile::SwapMax, "memory.swap.max"),
        ] {
            assert_eq!(
                set_memory_limit(&a, f, Limit::Value(1 << 30)),
                op(
                    "a/b",
                    name,
                    "1073741824",
                    WriteKind::Memory(f, Limit::Value(1 << 30))
                )
            );
            assert_eq!(
                set_memory_limit(&a, f, Limit::Max),
                op("a/b", name, "max", WriteKind::Memory(f, Limit::Max))
            );
        }
    }

    #[test]
    fn io_builders_make_exact_ops() {
        let a = g("a/b");
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(2_097_152)),
            wbps: None,
            riops: None,
            wiops: Some(Limit::Max),
        };
        assert_eq!(
            set_io_max(&a, set),
            op(
                "a/b",
                "io.max",
                "8:0 rbps=2097152 wiops=max",
                WriteKind::IoMax(set)
            )
        );
        assert_eq!(
            set_io_weight(&a, None, 150),
            op(
                "a/b",
                "io.weight",
                "default 150",
                WriteKind::IoWeight {
                    dev: None,
                    weight: Some(150)
                }
            )
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 50),
            op(
                "a/b",
                "io.weight",
                "8:0 50",
                WriteKind::IoWeight {
                    dev: Some(SDA),
                    weight: Some(50)
                }
            )
        );
        assert_eq!(
            reset_io_weight(&a, SDA),
            op(
                "a/b",
                "io.weight",
                "8:0 default",
                WriteKind::IoWeight {
                    dev: Some(SDA),
                    weight: None
                }
            )
        );
        assert_eq!(
            set_io_latency(&a, SDA, Some(10_000)),
            op(
                "a/b",
                "io.latency",
                "8:0 target=10000",
                WriteKind::IoLatency {
                    dev: SDA,
                    target_usec: Some(10_000)
                }
            )
        );
        assert_eq!(
            set_io_latency(&a, SDA, None),
            op(
                "a/b",
                "io.latency",
                "8:0 target=max",
                WriteKind::IoLatency {
                    dev: SDA,
                    target_usec: None
                }
            )
        );
    }

    #[test]
    fn core_builders_make_exact_ops() {
        let a = g("a/b");
        assert_eq!(
            set_pids_max(&a, Limit::Value(64)),
            op(
                "a/b",
                "pids.max",
                "64",
                WriteKind::PidsMax(Limit::Value(64))
            )
        );
        assert_eq!(
            set_pids_max(&a, Limit::Max),
            op("a/b", "pids.max", "max", WriteKind::PidsMax(Limit::Max))
        );
        let ch = vec![
            ControllerChange::enable("cpu"),
            ControllerChange::enable("memory"),
            ControllerChange::disable("io"),
        ];
        assert_eq!(
            set_subtree_control(&a, &ch),
            op(
                "a/b",
                "cgroup.subtree_control",
                "+cpu +memory -io",
                WriteKind::SubtreeControl(ch.clone())
            )
        );
        assert_eq!(
            freeze(&a, true),
            op("a/b", "cgroup.freeze", "1", WriteKind::Freeze(true))
        );
        assert_eq!(
            freeze(&a, false),
            op("a/b", "cgroup.freeze", "0", WriteKind::Freeze(false))
        );
        assert_eq!(kill(&a), op("a/b", "cgroup.kill", "1", WriteKind::Kill));
        assert_eq!(
            move_process(4242, &a, false),
            op(
                "a/b",
                "cgroup.procs",
                "4242",
                WriteKind::MoveProcess {
                    pid: 4242,
                    threads: false
                }
            )
        );
        assert_eq!(
            move_process(4243, &a, true),
            op(
                "a/b",
                "cgroup.threads",
                "4243",
                WriteKind::MoveProcess {
                    pid: 4243,
                    threads: true
                }
            )
        );
        assert_eq!(
            raw(&a, "memory.oom.group", "1"),
            op("a/b", "memory.oom.group", "1", WriteKind::Raw)
        );
        assert_eq!(create_group(&a), create_group(&g("a/b")));
        assert_eq!(remove_group(&a), remove_group(&g("a/b")));
    }

    #[test]
    fn leaf_fix_plan_order() {
        let plan = leaf_fix_plan(
            &g("job"),
            "leaf",
            &[10, 11],
            &[ControllerChange::enable("memory")],
        )
        .unwrap();
        assert_eq!(
            plan,
            vec![
                create_group(&g("job/leaf")),
                move_process(10, &g("job/leaf"), false),
                move_process(11, &g("job/leaf"), false),
                op(
                    "job",
                    "cgroup.subtree_control",
                    "+memory",
                    WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")])
                ),
            ]
        );
    }

    #[test]
    fn confirmations() {
        let a = g("a");
        assert!(kill(&a).is_destructive());
        assert!(remove_group(&a).is_destructive());
        assert!(freeze(&a, true).is_destructive());
        assert!(!freeze(&a, false).is_destructive());
        assert!(move_process(1, &a, false).is_destructive());
        assert!(!create_group(&a).is_destructive());
        assert!(!set_memory_limit(&a, MemoryFile::Max, Limit::Value(1)).is_destructive());
        assert!(!set_subtree_control(&a, &[ControllerChange::enable("cpu")]).is_destructive());
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::disable("memory")]).confirm_reason(),
            Some("disabling a controller removes its files, and the limits set in them, from every child")
        );
        assert_eq!(
            kill(&a).confirm_reason(),
            Some("every process in the group and below is killed")
        );
    }

    #[test]
    fn undo_from_old_values() {
        let a = g("a");
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, half).undo(Some("max 100000\n")),
            Some(set_cpu_max(
                &a,
                CpuMax {
                    quota: None,
                    period: 100_000
                }
            ))
        );
        assert_eq!(
            set_cpu_max_burst(&a, 5).undo(Some("0\n")),
            Some(set_cpu_max_burst(&a, 0))
        );
        assert_eq!(
            set_cpu_weight(&a, 5).undo(Some("100\n")),
            Some(set_cpu_weight(&a, 100))
        );
        // nice is undone through the exact weight
        let nice = set_cpu_weight_nice(&a, 5);
        assert_eq!(nice.undo_source(), Some("cpu.weight"));
        assert_eq!(nice.undo(Some("150\n")), Some(set_cpu_weight(&a, 150)));
        assert_eq!(
            set_memory_limit(&a, MemoryFile::High, Limit::Value(1)).undo(Some("max\n")),
            Some(set_memory_limit(&a, MemoryFile::High, Limit::Max))
        );
        assert_eq!(
            set_pids_max(&a, Limit::Value(5)).undo(Some("100\n")),
            Some(set_pids_max(&a, Limit::Value(100)))
        );
    }

    #[test]
    fn a_move_is_undone_to_the_group_it_came_from() {
        let to = g("a/b");
        let mv = move_process(42, &to, true);
        assert_eq!(mv.undo(Some("a")), Some(move_process(42, &g("a"), true)));
        // from the view's root ("")
        assert_eq!(
            mv.undo(Some("")),
            Some(move_process(42, &GroupPath::root(), true))
        );
        // already there, or unknown: nothing to take back
        assert_eq!(mv.undo(Some("a/b")), None);
        assert_eq!(mv.undo(None), None);
        assert!(mv.can_undo());
        assert!(!kill(&to).can_undo());
        assert!(!remove_group(&to).can_undo());
    }

    #[test]
    fn undo_io_and_core() {
        let a = g("a");
        // io.max: the old line of that device, all four keys; none = all max
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(100)),
            wbps: None,
            riops: None,
            wiops: None,
        };
        assert_eq!(
            set_io_max(&a, set).undo(Some("8:0 rbps=max wbps=5000 riops=max wiops=max\n8:16 rbps=1 wbps=max riops=max wiops=max\n")),
            Some(op(
                "a",
                "io.max",
                "8:0 rbps=max wbps=5000 riops=max wiops=max",
                WriteKind::IoMax(IoMaxSet {
                    dev: SDA,
                    rbps: Some(Limit::Max),
                    wbps: Some(Limit::Value(5000)),
                    riops: Some(Limit::Max),
                    wiops: Some(Limit::Max)
                })
            ))
        );
        let back = set_io_max(&a, set).undo(Some("")).unwrap();
        assert_eq!(
            back.as_write().unwrap().contents,
            "8:0 rbps=max wbps=max riops=max wiops=max"
        );
        // io.weight: default, device override present, and absent
        assert_eq!(
            set_io_weight(&a, None, 500).undo(Some("default 100\n8:0 50\n")),
            Some(set_io_weight(&a, None, 100))
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 500).undo(Some("default 100\n8:0 50\n")),
            Some(set_io_weight(&a, Some(SDA), 50))
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 500).undo(Some("default 100\n")),
            Some(reset_io_weight(&a, SDA))
        );
        // io.latency
        assert_eq!(
            set_io_latency(&a, SDA, Some(5)).undo(Some("8:0 target=10000\n")),
            Some(set_io_latency(&a, SDA, Some(10_000)))
        );
        assert_eq!(
            set_io_latency(&a, SDA, Some(5)).undo(Some("")),
            Some(set_io_latency(&a, SDA, None))
        );
        // subtree_control: only what changed is put back
        let ch = [
            ControllerChange::enable("cpu"),
            ControllerChange::enable("io"),
            ControllerChange::disable("pids"),
        ];
        assert_eq!(
            set_subtree_control(&a, &ch).undo(Some("io pids\n")),
            Some(set_subtree_control(
                &a,
                &[
                    ControllerChange::disable("cpu"),
                    ControllerChange::enable("pids")
                ]
            ))
        );
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::enable("io")]).undo(Some("io\n")),
            None
        );
        assert_eq!(freeze(&a, true).undo(Some("0\n")), Some(freeze(&a, false)));
        assert_eq!(freeze(&a, false).undo(Some("1\n")), Some(freeze(&a, true)));
        assert_eq!(
            raw(&a, "memory.oom.group", "1").undo(Some("0\n")),
            Some(raw(&a, "memory.oom.group", "0"))
        );
        assert_eq!(
            raw(&a, "io.bfq.weight", "8:0 5").undo(Some("default 100\n8:0 5\n")),
            None
        );
        // no undo
        assert_eq!(kill(&a).undo(Some("")), None);
        assert_eq!(kill(&a).undo_source(), None);
        // a move back to where it already is: nothing to take back
        assert_eq!(move_process(1, &a, false).undo(Some("a")), None);
        assert_eq!(remove_group(&a).undo(None), None);
        assert_eq!(create_group(&a).undo(None), Some(remove_group(&a)));
        // unreadable or garbled old values give no undo rather than a wrong one
        assert_eq!(set_cpu_weight(&a, 5).undo(None), None);
        assert_eq!(
            set_cpu_max(
                &a,
                CpuMax {
                    quota: Some(1000),
                    period: 1000
                }
            )
            .undo(Some("garbage")),
            None
        );
        assert_eq!(freeze(&a, true).undo(Some("")), None);
    }

    #[test]
    fn descriptions() {
        let a = g("a/b");
        assert_eq!(create_group(&a).describe(), "create the group /a/b");
        assert_eq!(remove_group(&a).describe(), "remove the group /a/b");
        assert_eq!(kill(&a).describe(), "kill every process in /a/b and below");
        assert_eq!(
            freeze(&a, true).to_string(),
            "freeze /a/b and everything below it"
        );
        assert_eq!(freeze(&a, false).describe(), "thaw /a/b");
        assert_eq!(
            move_process(7, &a, false).describe(),
            "move process 7 into /a/b"
        );
        assert_eq!(
            move_process(7, &a, true).describe(),
            "move thread 7 into /a/b"
        );
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::enable("cpu")]).describe(),
            "change the controllers /a/b hands to its children: +cpu"
        );
        assert_eq!(
            set_memory_limit(&a, MemoryFile::Max, Limit::Max).describe(),
            "set memory.max of /a/b to max"
        );
    }

    #[test]
    fn readback_checks() {
        let a = g("a");
        let w = |o: Op| match o {
            Op::Write(w) => w,
            _ => unreachable!(),
        };
        let m = w(set_memory_limit(&a, MemoryFile::Max, Limit::Value(1000)));
        assert_eq!(
            m.check_readback("0\n").as_deref(),
            Some("the kernel stored 0 in memory.max, not 1000 (it keeps whole pages)")
        );
        assert_eq!(
            w(set_memory_limit(&a, MemoryFile::Max, Limit::Value(4096))).check_readback("4096\n"),
            None
        );
        assert_eq!(
            w(set_memory_limit(&a, MemoryFile::Max, Limit::Max)).check_readback("max\n"),
            None
        );
        let c = w(set_cpu_max(
            &a,
            CpuMax {
                quota: Some(50_000),
                period: 100_000,
            },
        ));
        assert_eq!(c.check_readback("50000 100000\n"), None);
        assert_eq!(
            c.check_readback("max 100000\n").as_deref(),
            Some("the kernel stored max 100000 in cpu.max, not 50000 100000")
        );
        assert_eq!(
            w(set_cpu_weight_nice(&a, 3)).check_readback("2\n").as_deref(),
            Some("the kernel stored 2 in cpu.weight.nice, not 3 (a nice value stands for the nearest weight)")
        );
        assert_eq!(w(set_cpu_weight(&a, 5)).check_readback("5\n"), None);
        assert_eq!(w(freeze(&a, true)).check_readback("1\n"), None);
        assert_eq!(
            w(set_pids_max(&a, Limit::Max)).check_readback("max\n"),
            None
        );
    }

    #[test]
    fn readback_checks_io_and_core() {
        let a = g("a");
        let w = |o: Op| match o {
            Op::Write(w) => w,
            _ => unreachable!(),
        };
        // io.max: only the keys written are compared
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(100)),
            wbps: None,
            riops: None,
            wiops: None,
        };
        let io = w(set_io_max(&a, set));
        assert_eq!(
            io.check_readback("8:0 rbps=100 wbps=7 riops=max wiops=max\n"),
            None
        );
        assert_eq!(
            io.check_readback("").as_deref(),
            Some("the kernel stored 8:0 rbps=max wbps=max riops=max wiops=max in io.max, not 8:0 rbps=100")
        );
        let iops = IoMaxSet {
            dev: SDA,
            rbps: None,
            wbps: None,
            riops: Some(Limit::Max),
            wiops: None,
        };
        assert_eq!(w(set_io_max(&a, iops)).check_readback(""), None);
        assert_eq!(
            w(set_io_weight(&a, None, 200)).check_readback("default 200\n8:0 5\n"),
            None
        );
        assert_eq!(
            w(set_io_weight(&a, Some(SDA), 200))
                .check_readback("default 100\n")
                .as_deref(),
            Some("the kernel stored no override for 8:0 in io.weight, not 8:0 200")
        );
        assert_eq!(
            w(reset_io_weight(&a, SDA)).check_readback("default 100\n"),
            None
        );
        assert_eq!(
            w(set_io_latency(&a, SDA, Some(10))).check_readback("8:0 target=10\n"),
            None
        );
        assert_eq!(w(set_io_latency(&a, SDA, None)).check_readback(""), None);
        assert_eq!(
            w(set_io_latency(&a, SDA, None)).check_readback("8:0 target=0\n"),
            None
        );
        assert_eq!(
            w(set_io_latency(&a, SDA, Some(10)))
                .check_readback("")
                .as_deref(),
            Some("the kernel stored no target for 8:0 in io.latency, not 8:0 target=10")
        );
        let sc = w(set_subtree_control(
            &a,
            &[
                ControllerChange::enable("hugetlb"),
                ControllerChange::disable("pids"),
            ],
        ));
        assert_eq!(sc.check_readback("cpu hugetlb\n"), None);
        assert_eq!(
            sc.check_readback("cpu\n").as_deref(),
            Some("the kernel stored \"cpu\" in cgroup.subtree_control, not +hugetlb -pids")
        );
        assert_eq!(
            w(raw(&a, "memory.oom.group", "1")).check_readback("1\n"),
            None
        );
        assert_eq!(
            w(raw(&a, "memory.oom.group", "1"))
                .check_readback("0\n")
                .as_deref(),
            Some("the kernel stored 0 in memory.oom.group, not 1")
        );
        assert_eq!(
            w(raw(&a, "io.bfq.weight", "8:0 5")).check_readback("default 100\n8:0 6"),
            None
        );
        assert_eq!(w(kill(&a)).check_readback(""), None);
        assert_eq!(w(move_process(5, &a, false)).check_readback(""), None);
    }

    #[test]
    fn systemd_units() {
        assert_eq!(
            systemd_unit(&g("system.slice/cron.service")),
            Some("cron.service")
        );
        assert_eq!(
            systemd_unit(&g("user.slice/user-1000.slice/session-3.scope")),
            Some("session-3.scope")
        );
        assert_eq!(systemd_unit(&g("system.slice")), Some("system.slice"));
        assert_eq!(systemd_unit(&g("system.slice/cron.service/worker")), None);
        assert_eq!(systemd_unit(&g(".service")), None);
        assert_eq!(systemd_unit(&GroupPath::root()), None);
        // systemd spells a '-' inside a name as \x2d: still a unit
        assert_eq!(
            systemd_unit(&g("system.slice/system-serial\\x2dgetty.slice")),
            Some("system-serial\\x2dgetty.slice")
        );
        // names systemd never gives are not units
        for bad in [&b"a\x1b.service"[..], b"bad\xff.service", b"a b.service"] {
            let p = GroupPath::root().join(bad).unwrap();
            assert_eq!(systemd_unit(&p), None, "{p:?}");
        }
    }

    #[test]
    fn systemd_equivalents() {
        let s = g("system.slice/web.service");
        let cmd = |o: &Op, dev: Option<&str>| systemd_equivalent(o, dev).map(|e| e.command_line());
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, half), None).as_deref(),
            Some(
                "systemctl set-property --runtime web.service CPUQuota=50% CPUQuotaPeriodSec=100ms"
            )
        );
        let odd = CpuMax {
            quota: Some(123_456),
            period: 250_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, odd), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUQuota=49.38% CPUQuotaPeriodSec=250ms")
        );
        let unl = CpuMax {
            quota: None,
            period: 1_000_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, unl), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUQuota= CPUQuotaPeriodSec=1s")
        );
        assert_eq!(
            cmd(&set_cpu_weight(&s, 300), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUWeight=300")
        );
        for (f, p) in [
            (MemoryFile::Min, "MemoryMin"),
            (MemoryFile::Low, "MemoryLow"),
            (MemoryFile::High, "MemoryHigh"),
            (MemoryFile::Max, "MemoryMax"),
            (MemoryFile::SwapMax, "MemorySwapMax"),
        ] {
            assert_eq!(
                cmd(&set_memory_limit(&s, f, Limit::Value(1 << 30)), None),
                Some(format!(
                    "systemctl set-property --runtime web.service {p}=1073741824"
                ))
            );
            assert_eq!(
                cmd(&set_memory_limit(&s, f, Limit::Max), None),
                Some(format!(
                    "systemctl set-property --runtime web.service {p}=infinity"
                ))
            );
        }
        assert_eq!(
            cmd(&set_pids_max(&s, Limit::Value(100)), None).as_deref(),
            Some("systemctl set-property --runtime web.service TasksMax=100")
        );
        assert_eq!(
            cmd(&set_pids_max(&s, Limit::Max), None).as_deref(),
            Some("systemctl set-property --runtime web.service TasksMax=infinity")
        );
    }

    #[test]
    fn systemd_equivalents_io_and_actions() {
        let s = g("system.slice/web.service");
        let cmd = |o: &Op, dev: Option<&str>| systemd_equivalent(o, dev).map(|e| e.command_line());
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(1 << 20)),
            wbps: Some(Limit::Max),
            riops: Some(Limit::Value(100)),
            wiops: Some(Limit::Value(50)),
        };
        let e = systemd_equivalent(&set_io_max(&s, set), Some("sda")).unwrap();
        assert_eq!(e.unit, "web.service");
        assert_eq!(
            e.args,
            [
                "systemctl",
                "set-property",
                "--runtime",
                "web.service",
                "IOReadBandwidthMax=/dev/sda 1048576",
                "IOWriteBandwidthMax=/dev/sda infinity",
                "IOReadIOPSMax=/dev/sda 100",
                "IOWriteIOPSMax=/dev/sda 50"
            ]
        );
        assert_eq!(
            e.command_line(),
            "systemctl set-property --runtime web.service 'IOReadBandwidthMax=/dev/sda 1048576' \
             'IOWriteBandwidthMax=/dev/sda infinity' 'IOReadIOPSMax=/dev/sda 100' \
             'IOWriteIOPSMax=/dev/sda 50'"
        );
        assert_eq!(systemd_equivalent(&set_io_max(&s, set), None), None);
        assert_eq!(
            cmd(&set_io_weight(&s, None, 200), None).as_deref(),
            Some("systemctl set-property --runtime web.service IOWeight=200")
        );
        assert_eq!(
            cmd(&set_io_weight(&s, Some(SDA), 200), Some("/dev/sda")).as_deref(),
            Some("systemctl set-property --runtime web.service 'IODeviceWeight=/dev/sda 200'")
        );
        assert_eq!(
            cmd(&set_io_latency(&s, SDA, Some(10_000)), Some("nvme0n1")).as_deref(),
            Some("systemctl set-property --runtime web.service 'IODeviceLatencyTargetSec=/dev/nvme0n1 10ms'")
        );
        assert_eq!(
            cmd(&freeze(&s, true), None).as_deref(),
            Some("systemctl freeze web.service")
        );
        assert_eq!(
            cmd(&freeze(&s, false), None).as_deref(),
            Some("systemctl thaw web.service")
        );
        assert_eq!(
            cmd(&kill(&s), None).as_deref(),
            Some("systemctl kill --signal=SIGKILL web.service")
        );
        // an escaped unit name is quoted for the shell
        let esc = g("system.slice/system-serial\\x2dgetty.slice");
        assert_eq!(
            cmd(&set_cpu_weight(&esc, 5), None).as_deref(),
            Some("systemctl set-property --runtime 'system-serial\\x2dgetty.slice' CPUWeight=5")
        );
        // no equivalent
        for o in [
            set_cpu_weight_nice(&s, 1),
            set_cpu_max_burst(&s, 1),
            reset_io_weight(&s, SDA),
            set_io_latency(&s, SDA, None),
            set_subtree_control(&s, &[ControllerChange::enable("cpu")]),
            move_process(1, &s, false),
            raw(&s, "memory.oom.group", "1"),
            create_group(&s),
            remove_group(&s),
        ] {
            assert_eq!(systemd_equivalent(&o, Some("sda")), None, "{o}");
        }
        // not a unit
        assert_eq!(
            systemd_equivalent(&set_cpu_weight(&g("batch/job"), 5), None),
            None
        );
    }
}
