//! PURE: what cgtop knows about the cgroup tree, independent of where it
//! came from. Snapshots of samples, rates between two snapshots, the tree
//! with its ordering and filter, parsing of what an operator types,
//! writes as values, their outcomes, and the words for a failed one.
//!
//! Must not depend on: the filesystem, the clock, the terminal
//! (no `std::fs`, no `Instant::now`, no ratatui/crossterm).

pub mod config;
pub mod effect;
pub mod errno;
pub mod events;
pub mod explain;
pub mod guard;
pub mod history;
pub mod host;
pub mod input;
pub mod killable;
pub mod layout;
pub mod limits;
pub mod mountinfo;
pub mod outcome;
pub mod path;
pub mod preflight;
pub mod procstat;
pub mod rates;
pub mod record;
pub mod script;
pub mod snapshot;
pub mod systemd;
pub mod text;
pub mod timeline;
pub mod tree;
pub mod union;
pub mod write;
pub mod writeback;

pub use errno::Errno;
pub use host::{HostInfo, MachineLoad};
pub use input::{ControllerChange, InputError, IoMaxSet, MemoryFile};
pub use outcome::{Offer, WriteError, WriteOutcome};
pub use path::GroupPath;
pub use rates::{GroupRates, IoRates};
pub use snapshot::{
    DetailSources, DeviceInfo, FreezerV1, GroupDetail, GroupSample, HierKind, HotExtras, HotStats,
    KeyedFiles, MountInfo, MountMode, ProcessInfo, ScanCost, Snapshot, Unreadable,
};
pub use write::{Mover, Op, SystemdEquivalent, Via, WriteEffect, WriteKind, WriteOp};
