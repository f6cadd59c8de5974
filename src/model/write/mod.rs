//! PURE: every change cgtop can make to the hierarchy, as a value.
//!
//! An action builds an [`Op`] here; `source::writer` performs it and reads
//! the file back. An op knows what it writes, whether it needs a
//! confirmation, how to undo it from the value it replaced, whether the
//! kernel's read-back matches what was written, and what the equivalent
//! `systemctl` command is for a systemd unit.
//!
//! This file holds what an op is ([`Op`], [`WriteOp`], [`WriteKind`],
//! [`Via`], [`WriteEffect`]); each other idea has its own file, and its
//! public names are re-exported here (`model::write::set_cpu_max`):
//!
//! - `builders`: the cgroup2 ops, one builder per action (`set_cpu_max`,
//!   `freeze`, `move_process`, `create_group`, `leaf_fix_plan`, ...).
//! - `v1`: cgroup v1's file values (`Throttle`, `V1MemoryFile`,
//!   `v1_limit`, `throttle_value`) and builders (`set_blkio_*`, `set_cfs*`,
//!   `set_v1_memory*`, `set_freezer`), and the ops made in each hierarchy
//!   that holds a group (`move_process_in`, `create_group_in`, ...).
//! - `kernel_text`: a write's bytes as the kernel parses them
//!   (`kernel_int`), and so what the write does to processes
//!   ([`Op::effect`]).
//! - `undo`: which ops must be confirmed first, and how each is taken back.
//! - `readback`: whether what the kernel stored is what was written.
//! - `words`: an op in words for the operator ([`Op::describe`],
//!   `sentences`, `hier_words`).
//! - [`owner`]: the container runtime or kubelet that owns a group, and
//!   its own way to make an op's change (`docker update`, `podman pause`).
//! - [`systemd`]: which unit a group is, the `systemctl` command an op
//!   equals, and making the change that way (presence, failures).
//!
//! The files around these use ops: `input` (typed text -> value),
//! `preflight`, `guard`, `explain`, `outcome`, `history`, `effect`,
//! `errno`, `killable`.
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
pub mod owner;
pub mod preflight;
pub mod systemd;

mod builders;
mod kernel_text;
mod readback;
mod undo;
mod v1;
mod words;

pub use builders::{
    create_group, freeze, kill, leaf_fix_plan, move_process, raw, remove_group, reset_io_weight,
    set_cpu_max, set_cpu_max_burst, set_cpu_weight, set_cpu_weight_nice, set_io_latency,
    set_io_max, set_io_weight, set_memory_limit, set_pids_max, set_subtree_control,
};
pub use kernel_text::kernel_int;
pub use systemd::{system_unit, systemd_equivalent, systemd_unit, SystemdEquivalent};
pub use v1::{
    create_group_in, move_process_in, remove_group_in, set_blkio_throttle, set_blkio_weight,
    set_cfs, set_cfs_period, set_cfs_quota, set_cpu_shares, set_freezer, set_v1_memory,
    set_v1_memory_pair, throttle_value, v1_files, v1_limit, Throttle, V1MemoryFile,
};
pub use words::{hier_words, hiers_words, sentences};

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{CpuMax, Limit};
use crate::model::host::layout::HierId;
use crate::model::write::input::{ControllerChange, IoMaxSet, MemoryFile};
use crate::model::GroupPath;

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
    /// The group this op was asked about: the inode of its directory as
    /// the snapshot read it (kernfs never reuses one), set where the app
    /// builds the op from a shown group. The writer writes only into the
    /// directory of that inode, else refuses (the group was removed and
    /// made again under its name since). `None`: by path, as a script.
    pub ino: Option<u64>,
    /// For a kill in another hierarchy than the v1 freezer's: the inode
    /// of the group's directory in the v1 freezer hierarchy as the
    /// snapshot read it ([`NOT_THERE`] where the scan listed it without
    /// the group), which the writer's thaw and refreeze around the kill
    /// are held to as [`Self::ino`] holds the write. `None`: by path.
    pub freezer_ino: Option<u64>,
}

/// The inode an op is held to ([`Op::of_group`]) when the group asked
/// about was not in the op's hierarchy at the last scan: no directory has
/// it (kernfs numbers from 1), so the writer finds a group made there
/// since another group and refuses it, as the question never was about it.
pub const NOT_THERE: u64 = 0;

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
    /// The new group, its hierarchy, and the inode of its parent's
    /// directory when it was asked about: a new group has none of its
    /// own, and the mkdir is held to the parent shown.
    CreateGroup(GroupPath, HierId, Option<u64>),
    /// The group, its hierarchy, and the inode of its directory when it
    /// was asked about (as [`WriteOp::ino`]).
    RemoveGroup(GroupPath, HierId, Option<u64>),
}

impl Op {
    /// The group the op changes (for a move: the target).
    pub fn group(&self) -> &GroupPath {
        match self {
            Self::Write(w) => &w.group,
            Self::CreateGroup(p, _, _) | Self::RemoveGroup(p, _, _) => p,
        }
    }

    /// The group whose directory the op is held to ([`Self::ino`]): the
    /// parent for a create (the new group has no directory yet), else
    /// [`Self::group`]. `None` for a create of the root, which has no
    /// parent (the kernel refuses it).
    pub fn held_group(&self) -> Option<GroupPath> {
        match self {
            Self::CreateGroup(p, _, _) => p.parent(),
            _ => Some(self.group().clone()),
        }
    }

    /// The hierarchy the op changes.
    pub fn hier(&self) -> HierId {
        match self {
            Self::Write(w) => w.hier,
            Self::CreateGroup(_, h, _) | Self::RemoveGroup(_, h, _) => *h,
        }
    }

    /// The same op in hierarchy `h`.
    #[must_use]
    pub fn on(mut self, h: HierId) -> Self {
        match &mut self {
            Self::Write(w) => w.hier = h,
            Self::CreateGroup(_, x, _) | Self::RemoveGroup(_, x, _) => *x = h,
        }
        self
    }

    /// The inode of the directory this op was asked about, that of
    /// [`Self::held_group`] ([`WriteOp::ino`]); `None` for an op by path.
    pub fn ino(&self) -> Option<u64> {
        match self {
            Self::Write(w) => w.ino,
            Self::CreateGroup(_, _, ino) | Self::RemoveGroup(_, _, ino) => *ino,
        }
    }

    /// The same op, held to the directory of inode `ino`, that of
    /// [`Self::held_group`] (for a create, the parent's).
    #[must_use]
    pub fn of_group(mut self, ino: Option<u64>) -> Self {
        match &mut self {
            Self::Write(w) => w.ino = ino,
            Self::CreateGroup(_, _, x) | Self::RemoveGroup(_, _, x) => *x = ino,
        }
        self
    }

    /// The same op with the thaw and refreeze around a kill held to the
    /// group's directory of inode `ino` in the v1 freezer hierarchy
    /// ([`WriteOp::freezer_ino`]); other ops are as they are.
    #[must_use]
    pub fn thawed_in(mut self, ino: Option<u64>) -> Self {
        if let Self::Write(w) = &mut self {
            if matches!(w.kind, WriteKind::Kill) {
                w.freezer_ino = ino;
            }
        }
        self
    }

    pub fn as_write(&self) -> Option<&WriteOp> {
        match self {
            Self::Write(w) => Some(w),
            _ => None,
        }
    }
}

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

/// What the unit tests of the files here build their ops from.
#[cfg(test)]
mod test_ops {
    use super::*;

    pub(super) const SDA: DevId = DevId { major: 8, minor: 0 };

    pub(super) fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    pub(super) fn op(group: &str, file: &str, contents: &str, kind: WriteKind) -> Op {
        Op::Write(WriteOp {
            group: g(group),
            file: file.into(),
            contents: contents.into(),
            kind,
            hier: HierId::V2,
            via: Via::Direct,
            ino: None,
            freezer_ino: None,
        })
    }
}
