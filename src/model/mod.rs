//! PURE: what cgtop knows about the cgroup tree, independent of where it
//! came from. Snapshots of samples, rates between two snapshots, the tree
//! with its ordering and filter, parsing of what an operator types,
//! writes as values, their outcomes, and the words for a failed one.
//!
//! Must not depend on: the filesystem, the clock, the terminal
//! (no `std::fs`, no `Instant::now`, no ratatui/crossterm).
//!
//! One folder per concern: [`tree`] the tree and its figures (snapshots,
//! rates, limits, paths and how names are shown), [`host`] the machine
//! (mounts, the hierarchies' layout, writeback settings), [`write`] every
//! change as a value with its checks, guard, words and undo history,
//! [`time`] the timeline, events and the recording format, [`files`] the
//! script export and the settings file.

pub mod account;
pub mod files;
pub mod heap;
pub mod host;
pub mod identity;
pub mod time;
pub mod tree;
pub mod write;

pub use host::{HostInfo, MachineLoad};
pub use tree::path::GroupPath;
pub use tree::rates::{GroupRates, IoRates};
pub use tree::snapshot::{
    DetailSources, DeviceInfo, FreezerV1, GroupDetail, GroupSample, HierKind, HotExtras, HotStats,
    KeyedFiles, MountInfo, MountMode, ProcessInfo, ScanCost, Snapshot, Unreadable,
};
pub use write::errno::Errno;
pub use write::input::{ControllerChange, InputError, IoMaxSet, MemoryFile};
pub use write::outcome::{Offer, WriteError, WriteOutcome};
pub use write::{Mover, Op, SystemdEquivalent, Via, WriteEffect, WriteKind, WriteOp};
