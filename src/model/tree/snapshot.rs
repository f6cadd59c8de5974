//! One refresh's worth of samples, as the collector read them.

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::v1_limits::{BlkioWeight, FreezerState, MemoryStatV1, OomControl};
use crate::cgroupfs::{
    CgroupEvents, CgroupStat, CgroupType, Controllers, CpuMax, CpuStat, IoLatency, IoMax, IoStat,
    IoWeight, Keyed, Limit, MemoryEvents, MemoryStat, Pressure,
};
use crate::model::GroupPath;
use std::time::Duration;

/// Where the hierarchy is and what kind it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MountInfo {
    /// The directory cgtop reads (the cgroup2 mount, or `--root`). In
    /// JSON: its escaped text ([`crate::model::tree::text::escape`]), valid whatever
    /// its bytes.
    #[serde(serialize_with = "escaped_path")]
    pub root: std::path::PathBuf,
    pub mode: MountMode,
}

fn escaped_path<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    use std::os::unix::ffi::OsStrExt;
    s.serialize_str(&crate::model::tree::text::escape(p.as_os_str().as_bytes()))
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MountMode {
    /// cgroup2 is the only cgroup hierarchy.
    PureV2,
    /// cgroup v1 hierarchies hold these controllers; v2 has the rest.
    Hybrid { v1_controllers: Vec<String> },
    /// No cgroup2: cgroup v1 hierarchies hold these controllers (RHEL 8,
    /// systemd's legacy layout). The root is the primary v1 hierarchy
    /// (`model::host::layout::Layout::primary`).
    V1 { v1_controllers: Vec<String> },
    /// `--root` pointing at a directory that is not a live cgroup2 mount
    /// (a fixture tree, a copy).
    Directory,
}

impl MountMode {
    /// The controllers cgroup v1 holds on this host (none on pure v2 or a
    /// fixture directory).
    pub fn v1_controllers(&self) -> &[String] {
        match self {
            Self::Hybrid { v1_controllers } | Self::V1 { v1_controllers } => v1_controllers,
            Self::PureV2 | Self::Directory => &[],
        }
    }

    /// Whether cgroup v1 holds this controller, by its v2 or v1 name
    /// ("io" or "blkio").
    pub fn on_v1(&self, controller: &str) -> bool {
        let name = crate::model::host::layout::v1_name(controller);
        self.v1_controllers().iter().any(|c| c == name)
    }
}

/// The cheap counters, read for every group on every refresh.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HotStats {
    pub cpu: Option<CpuStat>,
    pub memory_current: Option<u64>,
    pub io: Option<IoStat>,
    /// pids.current, where the pids controller is on.
    pub pids_current: Option<u64>,
    /// Number of processes in cgroup.procs (this group only, not
    /// descendants); read where pids.current is absent.
    pub nr_procs: Option<u64>,
    pub events: Option<CgroupEvents>,
    /// memory.max: read only while a column needs it ([`HotExtras`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<Limit>,
    /// The smallest memory.max of this group and its ancestors in the
    /// same scan (the mount root has none; groups above the start group
    /// are not read): the limit memory.current is measured against.
    /// Filled by [`fill_memory_limits`] after the reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    /// memory.swap.current: read only while a column needs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_current: Option<u64>,
    /// The highest "some avg10" of cpu.pressure, memory.pressure and
    /// io.pressure, in hundredths of a percent (the kernel prints two
    /// decimals; an integer keeps the stats `Eq`). Read only while a
    /// column needs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psi_some_avg10: Option<u32>,
    /// The highest "full avg10" of the same files (cpu.pressure has no
    /// full line before Linux 5.13), in hundredths of a percent: read
    /// with `psi_some_avg10`, for the history's sparklines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psi_full_avg10: Option<u32>,
    /// cpu.stat.local's throttled_usec (Linux 6.6): read by the collector
    /// only where it tells something (see `model::tree::limits::throttling`);
    /// shown in JSON through `throttling`, and with the file's other keys.
    #[serde(skip)]
    pub throttled_local_usec: Option<u64>,
    /// Hot files that are there but could not be read (a FIFO, a symlink,
    /// over the cap, EACCES): shown as errors on the group. In JSON
    /// together with the detail's, as `unreadable`.
    #[serde(skip)]
    pub unreadable: Vec<Unreadable>,
    /// What cgroup v1 adds: which hierarchy each figure came from, and the
    /// v1-only figures (flattened into the group's JSON object: empty, and
    /// so absent, on pure v2). Recordings carry its `sources` and
    /// `freezer_state` (`model::time::record::Marks`).
    #[serde(flatten)]
    pub v1: V1Hot,
}

/// The kind of hierarchy a group's figure was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum HierKind {
    #[serde(rename = "v1")]
    V1,
    #[serde(rename = "v2")]
    V2,
}

/// Per controller, which kind of hierarchy a group's figures came from
/// (`model::tree::union::merge`): set only where the layout has a v1 hierarchy.
/// In JSON: `"sources": {"cpu": "v1", "memory": "v1", ...}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Sources {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<HierKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<HierKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<HierKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids: Option<HierKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freezer: Option<HierKind>,
    /// The IO figures are the group's own, not its subtree's: the kernel
    /// has no blkio.throttle.*_recursive files (before Linux 4.11), so
    /// `io` was read from blkio.throttle.io_service_bytes / io_serviced.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub io_own_only: bool,
    /// A disk whose IO this v1 blkio hierarchy does not count and that
    /// did IO since the last refresh (the first by number): no throttle
    /// rule was set on it since boot (Linux 6.10+ sets blk-throttle up on
    /// a disk only then), so READ/s and WRITE/s, which would miss that
    /// IO, are unknown
    /// (`model::tree::root::busy_uncounted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_uncounted: Option<crate::cgroupfs::io::DevId>,
    /// The kernel's root on cgroup v1: `memory` is memory.usage_in_bytes
    /// (the machine's file and anonymous pages) plus the kernel memory
    /// charged to the groups below (`memory.kmem.usage_in_bytes`), which
    /// each child's usage holds (`model::tree::root`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub root_kernel_memory: bool,
    /// The kernel's root: `pids_current` is every task of the machine
    /// (/proc/loadavg), the root having no pids.current
    /// (`model::tree::root`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub root_machine_tasks: bool,
}

impl Sources {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What cgroup v1 adds to a group's hot figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct V1Hot {
    #[serde(skip_serializing_if = "Sources::is_empty")]
    pub sources: Sources,
    /// v1 freezer.state: `thawed`, `freezing` (asked to freeze, not all
    /// tasks frozen yet) or `frozen`. v1 only: cgroup.events says only
    /// frozen or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freezer_state: Option<crate::cgroupfs::v1::FreezerState>,
    /// v1 cpu.stat's throttling, as read by a v1 scanner, until the merge
    /// puts it into `cpu` (whose usage comes from cpuacct).
    #[serde(skip)]
    pub cpu_throttle: Option<crate::cgroupfs::v1::CpuThrottle>,
    /// memory.memsw.usage_in_bytes, until the merge makes `swap_current`
    /// of it (memsw - usage).
    #[serde(skip)]
    pub memsw_usage: Option<u64>,
    /// The hierarchies whose scanner listed the group (set by the merge of
    /// a v1 or hybrid layout's hierarchies, `model::tree::union`; empty on a
    /// pure cgroup2 layout): see `union::holding`.
    #[serde(skip)]
    pub held_in: crate::model::host::layout::HierSet,
    /// The group's directory inode in each hierarchy of `held_in` but the
    /// primary (whose is [`GroupSample::inode`]), as its scanner's walk
    /// had it: see [`GroupSample::inode_in`].
    #[serde(skip)]
    pub inodes: crate::model::host::layout::HierInodes,
}

/// Which hot files beyond the always-read ones the scanner reads for every
/// group: only those of the columns shown (`render::columns`), so that a
/// hidden column costs no descriptor and no read at 10,000 groups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HotExtras {
    /// memory.max (for MEM%).
    pub memory_max: bool,
    /// memory.swap.current (SWAP).
    pub swap: bool,
    /// cpu.pressure, memory.pressure, io.pressure (PSI).
    pub pressure: bool,
}

/// Sets each group's `memory_limit`: the smallest memory.max on its path
/// among `groups` (sorted by path, so a parent comes before its children).
pub fn fill_memory_limits(groups: &mut [GroupSample]) {
    let mut seen: std::collections::HashMap<GroupPath, Option<u64>> =
        std::collections::HashMap::with_capacity(groups.len());
    for g in groups.iter_mut() {
        let parent = g
            .path
            .parent()
            .and_then(|p| seen.get(&p).copied().flatten());
        let own = g.hot.memory_max.and_then(Limit::value);
        let eff = match (own, parent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        g.hot.memory_limit = eff;
        seen.insert(g.path.clone(), eff);
    }
}

/// A file of a group that is there but was not read, and why ("a FIFO,
/// not a regular file: not read", "file larger than 64 KiB: not read").
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unreadable {
    pub file: String,
    pub error: String,
}

/// Everything else about a group: read for the selected group on every
/// refresh, for all groups in JSON mode, and on demand.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct GroupDetail {
    pub controllers: Option<Controllers>,
    pub subtree_control: Option<Controllers>,
    pub stat: Option<CgroupStat>,
    pub freeze: Option<bool>,
    pub cpu_max: Option<CpuMax>,
    pub cpu_max_burst: Option<u64>,
    pub cpu_weight: Option<u32>,
    pub cpu_weight_nice: Option<i32>,
    pub memory_min: Option<Limit>,
    pub memory_low: Option<Limit>,
    pub memory_high: Option<Limit>,
    pub memory_max: Option<Limit>,
    pub memory_peak: Option<u64>,
    pub swap_current: Option<u64>,
    pub swap_max: Option<Limit>,
    pub memory_stat: Option<MemoryStat>,
    pub memory_events: Option<MemoryEvents>,
    pub io_max: Option<IoMax>,
    pub io_weight: Option<IoWeight>,
    pub io_latency: Option<IoLatency>,
    pub pids_max: Option<Limit>,
    pub cpu_pressure: Option<Pressure>,
    pub memory_pressure: Option<Pressure>,
    pub io_pressure: Option<Pressure>,
    /// cgroup v1 figures without a v2 field of the same meaning (hybrid
    /// and v1 hosts, README "JSON output"): absent from JSON where the
    /// group is in no v1 hierarchy holding them, so pure v2 prints as
    /// before. The v1 figures that mean what a v2 field means fill that
    /// field instead (cfs quota/period: `cpu_max`; memory.limit_in_bytes:
    /// `memory_max`; blkio.throttle.*: `io_max`; pids.max: `pids_max`;
    /// freezer.self_freezing: `freeze`; memory.stat's `total_*`:
    /// `memory_stat`; memory.max_usage_in_bytes: `memory_peak`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_shares: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_soft_limit: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memsw_limit: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memsw_usage: Option<u64>,
    /// memory.usage_in_bytes (bytes), the figure v2's memory.current is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_usage: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_failcnt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_control: Option<OomControl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_stat_v1: Option<MemoryStatV1>,
    /// v1 freezer.state with freezer.self_freezing and
    /// freezer.parent_freezing (JSON `freezer`; the scan's
    /// `freezer_state` says the state of every group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freezer: Option<FreezerV1>,
    /// blkio.weight or blkio.bfq.weight (`default`) with the per-device
    /// lines of blkio.weight_device or blkio.bfq.weight_device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blkio_weight: Option<BlkioWeight>,
    /// Which hierarchy each controller's detail came from, by name
    /// (JSON `hierarchies`; the scan's `sources` says the kind, v1 or
    /// v2); `None` on a pure v2 host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hierarchies: Option<DetailSources>,
    /// Every key of the flat-keyed files, beside the typed fields above.
    pub keyed: KeyedFiles,
    /// Processes of this group (not descendants).
    pub pids: Vec<u32>,
    /// Every regular file of the group with its content (trimmed), for the
    /// raw view; unreadable files carry the error text. Only filled for the
    /// selected group.
    pub raw: Vec<(String, Result<String, String>)>,
    /// How many of `raw`'s files are the primary hierarchy's (the first
    /// ones); the rest are the v1 hierarchies' as `label:file`.
    #[serde(skip)]
    pub raw_primary: usize,
    /// Names of the files the owner may write (the raw editor's list).
    /// Only filled for the selected group.
    pub writable: Vec<String>,
    /// Files read for the fields above that are there but could not be
    /// read: a missing file is `None` above (a controller that is off);
    /// one that is a FIFO, a symlink or too large is listed here.
    #[serde(skip)]
    pub unreadable: Vec<Unreadable>,
}

/// Where a group's figures of each controller were read, on a host with
/// cgroup v1 hierarchies: `"v2"`, or `"v1:"` and the v1 hierarchy's name
/// as the kernel names it (`"v1:cpu,cpuacct"`, `"v1:memory"`,
/// `"v1:name=systemd"`); `None` where the group is not in the hierarchy
/// holding that controller (systemd makes a unit's group only in the
/// hierarchies of the controllers it uses).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DetailSources {
    pub cpu: Option<String>,
    pub cpuacct: Option<String>,
    pub memory: Option<String>,
    pub io: Option<String>,
    pub pids: Option<String>,
    pub freezer: Option<String>,
    /// Whose cgroup.procs gave `pids`.
    pub procs: Option<String>,
}

/// A group's v1 freezer files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FreezerV1 {
    /// freezer.state.
    pub state: FreezerState,
    /// freezer.self_freezing: the group itself was asked to freeze.
    pub self_freezing: Option<bool>,
    /// freezer.parent_freezing: an ancestor was.
    pub parent_freezing: Option<bool>,
}

/// Every `key value` pair of each flat-keyed file of a group, in the
/// kernel's order; `None` where the file is absent. In JSON each is an
/// object under the file's own name: `"keyed": {"cpu.stat": {...}, ...}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct KeyedFiles {
    #[serde(rename = "cgroup.stat")]
    pub cgroup_stat: Option<Keyed>,
    #[serde(rename = "cpu.stat")]
    pub cpu_stat: Option<Keyed>,
    #[serde(rename = "cpu.stat.local")]
    pub cpu_stat_local: Option<Keyed>,
    #[serde(rename = "memory.stat")]
    pub memory_stat: Option<Keyed>,
    #[serde(rename = "memory.events")]
    pub memory_events: Option<Keyed>,
    #[serde(rename = "memory.events.local")]
    pub memory_events_local: Option<Keyed>,
    #[serde(rename = "memory.swap.events")]
    pub memory_swap_events: Option<Keyed>,
    #[serde(rename = "pids.events")]
    pub pids_events: Option<Keyed>,
}

/// One group in one snapshot.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupSample {
    pub path: GroupPath,
    /// Inode of the group's directory: a group removed and created again
    /// under the same name has a new one, so its counters restart.
    pub inode: u64,
    pub cgroup_type: Option<CgroupType>,
    pub hot: HotStats,
    pub detail: Option<Box<GroupDetail>>,
    /// Who the group is (container, pod, session, unit: `model::identity`),
    /// where known; shared between refreshes, resolved once per group
    /// directory (by inode), never per refresh.
    pub identity: Option<std::sync::Arc<crate::model::identity::Identity>>,
}

impl GroupSample {
    pub fn new(path: GroupPath, inode: u64) -> Self {
        Self {
            path,
            inode,
            cgroup_type: None,
            hot: HotStats::default(),
            detail: None,
            identity: None,
        }
    }

    /// The inode of the group's directory in hierarchy `h` (`primary`:
    /// the tree's primary, whose is [`Self::inode`]), where the last
    /// scan found the group there: what an op written there is held to.
    pub fn inode_in(
        &self,
        h: crate::model::host::layout::HierId,
        primary: crate::model::host::layout::HierId,
    ) -> Option<u64> {
        let held = self.hot.v1.held_in;
        if h == primary {
            // pure cgroup2 (no merge), or the primary found it
            (held.is_empty() || held.contains(h)).then_some(self.inode)
        } else {
            self.hot.v1.inodes.get(h)
        }
    }

    /// Processes: pids.current where the pids controller is on (it counts
    /// the whole subtree), else the count of this group's cgroup.procs.
    pub fn pids(&self) -> Option<u64> {
        self.hot.pids_current.or(self.hot.nr_procs)
    }
}

/// What one refresh cost the collector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScanCost {
    /// Wall time of the scan.
    pub wall: Duration,
    /// CPU time (user + system) the collector thread spent.
    pub cpu: Duration,
    pub files_read: u64,
    /// Files read through a kept descriptor (pread at offset 0).
    pub files_kept: u64,
    /// True when descriptors ran short and the collector fell back to
    /// open/read/close for some files.
    pub fd_limited: bool,
    /// Whether this refresh re-listed the directories.
    pub walked: bool,
    /// How many directories it listed: all of them in a full walk, the
    /// changed subtrees' after a group came or went.
    pub dirs_listed: u64,
}

/// A block device as /sys/dev/block describes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeviceInfo {
    pub dev: DevId,
    pub name: String,
    /// A partition cannot be throttled by io.max: the kernel rejects it.
    pub partition: bool,
    /// The whole disk's number, for a partition.
    pub parent: Option<DevId>,
}

/// A process of the selected group, from procfs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProcessInfo {
    pub pid: u32,
    /// The user name as /etc/passwd spells it (its bytes: shown through
    /// [`crate::model::tree::text::escape`]), or the uid when it has none.
    #[serde(serialize_with = "escaped_bytes")]
    pub user: Vec<u8>,
    pub state: char,
    /// CPU % of one core over the last interval; `None` on first sight.
    pub cpu_pct: Option<f64>,
    pub rss_bytes: u64,
    /// The command line as shown: made once from /proc/PID/cmdline's
    /// bytes by `source::procs::command_text` (each argument through
    /// [`crate::model::tree::text::escape`], joined by a space, `…` when cut at the
    /// read cap), or `[name]` from /proc/PID/comm for a kernel thread.
    /// Already escaped, so it is shown as it is (escaping it again would
    /// double its backslashes), and nothing of the bytes is lost:
    /// [`crate::model::tree::text::unescape`] of an argument gives them back.
    pub cmdline: String,
}

fn escaped_bytes<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::model::tree::text::escape(b))
}

/// Everything one refresh produced, sorted by path so that a parent always
/// comes before its children.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Snapshot {
    /// Monotonic time of the scan, from the collector's start.
    pub at: Duration,
    pub groups: Vec<GroupSample>,
    pub cost: ScanCost,
}

impl Snapshot {
    pub fn find(&self, path: &GroupPath) -> Option<&GroupSample> {
        self.groups
            .binary_search_by(|g| g.path.cmp(path))
            .ok()
            .map(|i| &self.groups[i])
    }
}
