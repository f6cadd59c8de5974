//! PURE: the host's writeback settings, the dirty limits they make, a
//! group's dirty and writeback pages, and which part of the seeds' story
//! applies to a group (issue 11, item 4).
//!
//! The story: a buffered write() copies into the page cache and returns
//! at memory speed; the kernel's flusher threads write the dirty pages
//! to disk later. A writer is paced once the machine's dirty pages pass
//! the "freerun" ceiling and waits at the dirty limit; the flusher starts
//! at the background limit. On cgroup v1, blkio throttles the IO a task
//! submits itself (reads, direct writes), while the flusher's IO belongs to the
//! root group: a blkio limit does not hold buffered writes. On cgroup v2
//! with io and memory both on the v2 hierarchy (cgroup writeback), the
//! flusher's IO is charged to the group that dirtied the pages, so io.max
//! holds them too.
//!
//! The limits follow the kernel's `domain_dirty_limits` (mm/page-writeback.c):
//! a byte setting wins over the ratio when it is set (writing one zeroes
//! the other); a ratio is of the "dirtyable" memory; a background limit at
//! or above the dirty limit is halved.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::Keyed;
use crate::model::host::meminfo_bytes;
use std::time::Duration;

/// The six `vm.dirty_*` sysctls as the kernel prints them
/// (/proc/sys/vm/dirty_*); `None` where one could not be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct VmDirty {
    /// `vm.dirty_ratio`, percent of dirtyable memory (0 while
    /// `dirty_bytes` is set).
    pub dirty_ratio: Option<u64>,
    /// `vm.dirty_background_ratio`, percent.
    pub dirty_background_ratio: Option<u64>,
    /// `vm.dirty_bytes` (0: the ratio applies).
    pub dirty_bytes: Option<u64>,
    /// `vm.dirty_background_bytes` (0: the ratio applies).
    pub dirty_background_bytes: Option<u64>,
    /// `vm.dirty_expire_centisecs`: a dirty page older than this is
    /// written by the next periodic flush, whatever the limits.
    pub dirty_expire_centisecs: Option<u64>,
    /// `vm.dirty_writeback_centisecs`: how often the flusher wakes (0: never
    /// periodically).
    pub dirty_writeback_centisecs: Option<u64>,
}

/// Where a threshold comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "percent")]
pub enum Basis {
    /// A ratio (percent) of the dirtyable memory.
    Ratio(u64),
    /// A `*_bytes` setting.
    Bytes,
    /// The background limit was at or above the dirty limit: the kernel
    /// uses half the dirty limit instead.
    HalfOfLimit,
}

/// The machine's dirty thresholds in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Thresholds {
    /// Dirty + writeback pages at which a writer waits in
    /// balance_dirty_pages (`dirty_thresh`).
    #[serde(rename = "limit_bytes")]
    pub limit: u64,
    /// Dirty pages above which the flusher writes in the background
    /// (`bg_thresh`).
    #[serde(rename = "background_bytes")]
    pub background: u64,
    /// Below this (half way from background to limit, in whole pages) a
    /// writer is not slowed at all; above it, it is paced to the disk's
    /// writeback speed (`dirty_freerun_ceiling`).
    #[serde(rename = "freerun_bytes")]
    pub freerun: u64,
    pub limit_basis: Basis,
    pub background_basis: Basis,
}

impl Thresholds {
    /// From the kernel's figures in pages.
    fn from_pages(limit: u64, background: u64, page_size: u64, bases: (Basis, Basis)) -> Self {
        Self {
            limit: limit.saturating_mul(page_size),
            background: background.saturating_mul(page_size),
            freerun: u64::midpoint(limit, background).saturating_mul(page_size),
            limit_basis: bases.0,
            background_basis: bases.1,
        }
    }
}

/// The limits of the global writeback domain, in bytes, from the settings
/// and the dirtyable memory in pages, as `domain_dirty_limits` computes
/// them (without the boost real-time tasks get). `None` when a setting
/// it needs is unknown or `page_size` is 0.
pub fn dirty_limits(vm: &VmDirty, dirtyable_pages: u64, page_size: u64) -> Option<Thresholds> {
    if page_size == 0 {
        return None;
    }
    // the ratio in 1/PAGE_SIZE units, then applied (the kernel's integer steps)
    let by_ratio = |pct: u64| -> u64 {
        let per_page = u128::from(pct) * u128::from(page_size) / 100;
        u64::try_from(per_page * u128::from(dirtyable_pages) / u128::from(page_size))
            .unwrap_or(u64::MAX)
    };
    let pages_of = |bytes: u64| bytes.div_ceil(page_size);
    let (limit, limit_basis) = match vm.dirty_bytes? {
        0 => {
            let r = vm.dirty_ratio?;
            (by_ratio(r), Basis::Ratio(r))
        }
        b => (pages_of(b), Basis::Bytes),
    };
    let (mut bg, mut background_basis) = match vm.dirty_background_bytes? {
        0 => {
            let r = vm.dirty_background_ratio?;
            (by_ratio(r), Basis::Ratio(r))
        }
        b => (pages_of(b), Basis::Bytes),
    };
    if bg >= limit {
        bg = limit / 2;
        background_basis = Basis::HalfOfLimit;
    }
    Some(Thresholds::from_pages(
        limit,
        bg,
        page_size,
        (limit_basis, background_basis),
    ))
}

/// The host's writeback state on one refresh: the settings, what
/// /proc/meminfo says of free and file memory and of dirty and writeback
/// pages, and the thresholds the kernel itself reports in /proc/vmstat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostWriteback {
    pub vm: VmDirty,
    /// MemFree, Active(file), Inactive(file), bytes.
    pub mem_free: Option<u64>,
    pub active_file: Option<u64>,
    pub inactive_file: Option<u64>,
    /// Dirty and Writeback of /proc/meminfo, bytes: the whole machine's.
    pub dirty: Option<u64>,
    pub writeback: Option<u64>,
    /// /proc/vmstat's `nr_dirty_threshold` and
    /// `nr_dirty_background_threshold`, pages: the kernel's own figures of
    /// the global limits (`global_dirty_limits` at the read), where the
    /// kernel prints them.
    pub kernel_limit_pages: Option<u64>,
    pub kernel_background_pages: Option<u64>,
    pub page_size: u64,
}

impl HostWriteback {
    /// From the settings and the texts of /proc/meminfo and /proc/vmstat
    /// (either may be empty: its figures are then unknown).
    pub fn from_texts(vm: VmDirty, meminfo: &str, vmstat: &str, page_size: u64) -> Self {
        let vmstat = Keyed::parse(vmstat);
        Self {
            vm,
            mem_free: meminfo_bytes(meminfo, "MemFree"),
            active_file: meminfo_bytes(meminfo, "Active(file)"),
            inactive_file: meminfo_bytes(meminfo, "Inactive(file)"),
            dirty: meminfo_bytes(meminfo, "Dirty"),
            writeback: meminfo_bytes(meminfo, "Writeback"),
            kernel_limit_pages: vmstat.get("nr_dirty_threshold"),
            kernel_background_pages: vmstat.get("nr_dirty_background_threshold"),
            page_size,
        }
    }

    /// The dirtyable memory, bytes, approximated as MemFree +
    /// Active(file) + Inactive(file). The kernel also takes off the pages
    /// it keeps in reserve (`totalreserve_pages`: the zones' high
    /// watermarks and lowmem reserves, which /proc/meminfo does not show;
    /// about 1 % of memory) and, on 32-bit machines, highmem: so this is
    /// a little more than the kernel's figure, and the limits made from it
    /// too.
    pub fn dirtyable(&self) -> Option<u64> {
        self.mem_free?
            .checked_add(self.active_file?)?
            .checked_add(self.inactive_file?)
    }

    /// The limits computed from the settings and [`Self::dirtyable`].
    pub fn computed(&self) -> Option<Thresholds> {
        let pages = self.dirtyable()?.checked_div(self.page_size)?;
        dirty_limits(&self.vm, pages, self.page_size)
    }

    /// The limits to show: the kernel's own figures where /proc/vmstat
    /// has them (exact), with the basis from the settings; else the
    /// computed ones.
    pub fn thresholds(&self) -> Option<Thresholds> {
        let computed = self.computed();
        match (self.kernel_limit_pages, self.kernel_background_pages) {
            (Some(l), Some(b)) => {
                let basis = computed.map(|c| (c.limit_basis, c.background_basis));
                let (limit_basis, background_basis) = basis.or_else(|| {
                    let d = dirty_limits(&self.vm, 0, self.page_size.max(1))?;
                    Some((d.limit_basis, d.background_basis))
                })?;
                Some(Thresholds::from_pages(
                    l,
                    b,
                    self.page_size,
                    (limit_basis, background_basis),
                ))
            }
            _ => computed,
        }
    }

    /// Whether [`Self::thresholds`] are the kernel's own figures.
    pub fn thresholds_exact(&self) -> bool {
        self.kernel_limit_pages.is_some() && self.kernel_background_pages.is_some()
    }

    /// The machine's dirty + writeback pages, bytes (what the dirty
    /// limit is compared with).
    pub fn dirty_and_writeback(&self) -> Option<u64> {
        self.dirty?.checked_add(self.writeback?)
    }

    /// Every figure for `--json` (README: "JSON output", `writeback`).
    pub fn figures(&self) -> WritebackFigures {
        let t = self.thresholds();
        WritebackFigures {
            vm: self.vm,
            dirtyable_bytes_approx: self.dirtyable(),
            limit_bytes: t.map(|t| t.limit),
            background_bytes: t.map(|t| t.background),
            freerun_bytes: t.map(|t| t.freerun),
            limit_basis: t.map(|t| t.limit_basis),
            background_basis: t.map(|t| t.background_basis),
            thresholds_from_kernel: self.thresholds_exact(),
            computed: self.computed(),
            dirty_bytes: self.dirty,
            writeback_bytes: self.writeback,
        }
    }
}

/// The host's writeback as `--json` prints it once per refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WritebackFigures {
    /// The six sysctls as they are.
    pub vm: VmDirty,
    /// MemFree + Active(file) + Inactive(file): a little above the
    /// kernel's dirtyable memory (see [`HostWriteback::dirtyable`]).
    pub dirtyable_bytes_approx: Option<u64>,
    pub limit_bytes: Option<u64>,
    pub background_bytes: Option<u64>,
    pub freerun_bytes: Option<u64>,
    pub limit_basis: Option<Basis>,
    pub background_basis: Option<Basis>,
    /// Whether the three figures above are the kernel's own (/proc/vmstat)
    /// rather than computed from the settings and /proc/meminfo.
    pub thresholds_from_kernel: bool,
    /// The limits computed from the settings and the approximate
    /// dirtyable memory, whatever the kernel printed.
    pub computed: Option<Thresholds>,
    /// /proc/meminfo's Dirty and Writeback: the whole machine's.
    pub dirty_bytes: Option<u64>,
    pub writeback_bytes: Option<u64>,
}

/// A group's dirty and writeback page cache, bytes, from its memory.stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupDirty {
    pub dirty: u64,
    pub writeback: u64,
    /// Whether the figures count the subtree (v2's memory.stat, v1's
    /// `total_*`) or the group's own pages only (v1's `dirty`).
    pub subtree: bool,
}

impl GroupDirty {
    /// From memory.stat's keys: v2's `file_dirty`/`file_writeback`
    /// (hierarchical), else v1's `total_dirty`/`total_writeback` (the
    /// subtree, where the kernel prints them), else v1's
    /// `dirty`/`writeback` (the group alone). `None` when none is there.
    pub fn from_memory_stat(stat: &Keyed) -> Option<Self> {
        let pair = |d: &str, w: &str, subtree| {
            Some(Self {
                dirty: stat.get(d)?,
                writeback: stat.get(w)?,
                subtree,
            })
        };
        pair("file_dirty", "file_writeback", true)
            .or_else(|| pair("total_dirty", "total_writeback", true))
            .or_else(|| pair("dirty", "writeback", false))
    }

    pub fn total(&self) -> u64 {
        self.dirty.saturating_add(self.writeback)
    }
}

/// The change of a group's dirty + writeback pages per second between two
/// reads (negative: draining). `None` when no time passed between them.
pub fn drain_rate(before: (Duration, GroupDirty), after: (Duration, GroupDirty)) -> Option<f64> {
    let dt = after.0.checked_sub(before.0)?.as_secs_f64();
    (dt > 0.0).then(|| (after.1.total() as f64 - before.1.total() as f64) / dt)
}

/// Which part of the story a group's IO page tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Story {
    /// A cgroup v1 blkio throttle limit: it holds the IO the group's tasks
    /// submit themselves (reads, direct writes); buffered writes are
    /// written later by the flusher, outside the group, and counted to
    /// the root.
    BlkioDirectOnly,
    /// io.max on cgroup v2 with memory on v2 too: cgroup writeback charges
    /// the flusher's IO to this group, so buffered writes are held to
    /// io.max as they drain.
    CgroupWriteback,
    /// io.max on cgroup v2 but memory on v1: no cgroup writeback, the
    /// flusher's IO is the root's and io.max holds only what the group's
    /// tasks submit themselves.
    NoWritebackAccounting,
    /// No IO limit on the group: nothing holds its writes but the disk
    /// and the host's dirty limits.
    NoLimit,
}

impl Story {
    /// `io_on_v1`: the IO controller is v1's blkio on this host;
    /// `memory_on_v1`: memory is a v1 controller; `limited`: the group
    /// has an IO limit of its own (blkio throttle or io.max).
    pub fn of(io_on_v1: bool, memory_on_v1: bool, limited: bool) -> Self {
        match (limited, io_on_v1, memory_on_v1) {
            (false, _, _) => Self::NoLimit,
            (true, true, _) => Self::BlkioDirectOnly,
            (true, false, true) => Self::NoWritebackAccounting,
            (true, false, false) => Self::CgroupWriteback,
        }
    }

    /// Whether buffered writes are held by the group's IO limit.
    pub fn buffered_throttled(self) -> bool {
        self == Self::CgroupWriteback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn defaults() -> VmDirty {
        VmDirty {
            dirty_ratio: Some(20),
            dirty_background_ratio: Some(10),
            dirty_bytes: Some(0),
            dirty_background_bytes: Some(0),
            dirty_expire_centisecs: Some(3000),
            dirty_writeback_centisecs: Some(500),
        }
    }

    /// This host on 2026-11-26 (6.18, 4 KiB pages), read at one moment:
    /// /proc/meminfo MemFree 392052 kB, Active(file) 8029104 kB,
    /// Inactive(file) 14875336 kB; /proc/vmstat nr_dirty_threshold 1153727,
    /// nr_dirty_background_threshold 576159.
    const MEMINFO: &str = "MemTotal:       24684084 kB\nMemFree:          392052 kB\n\
        MemAvailable:   22000000 kB\nActive(file):    8029104 kB\n\
        Inactive(file): 14875336 kB\nDirty:            443580 kB\nWriteback:             0 kB\n";
    const VMSTAT: &str = "nr_dirty 110895\nnr_writeback 0\nnr_dirty_threshold 1153727\n\
        nr_dirty_background_threshold 576159\n";

    #[test]
    fn this_hosts_limits_by_ratio() {
        let h = HostWriteback::from_texts(defaults(), MEMINFO, "", 4096);
        // 392052 + 8029104 + 14875336 kB = 23296492 kB = 5824123 pages
        assert_eq!(h.dirtyable(), Some(23_296_492 * 1024));
        let c = h.computed().unwrap();
        // ratio 20 in 1/4096 units: 819; 819 * 5824123 / 4096 = 1164540 pages
        assert_eq!(c.limit, 1_164_540 * 4096);
        // 409 * 5824123 / 4096 = 581559 pages
        assert_eq!(c.background, 581_559 * 4096);
        assert_eq!(c.limit_basis, Basis::Ratio(20));
        assert_eq!(c.background_basis, Basis::Ratio(10));
        assert_eq!(c.freerun, 873_049 * 4096);
        // no vmstat: the computed limits are the ones shown
        assert!(!h.thresholds_exact());
        assert_eq!(h.thresholds(), Some(c));
        // the kernel's own figures are a little lower: its reserve
        // (about 42 MiB here) is not in the approximation
        let k = HostWriteback::from_texts(defaults(), MEMINFO, VMSTAT, 4096);
        assert!(k.thresholds_exact());
        let t = k.thresholds().unwrap();
        assert_eq!(t.limit, 1_153_727 * 4096);
        assert_eq!(t.background, 576_159 * 4096);
        assert_eq!(t.limit_basis, Basis::Ratio(20));
        let over = c.limit - t.limit;
        assert!(over > 0 && over < c.limit / 50, "{over}");
        assert_eq!(k.dirty, Some(443_580 * 1024));
        assert_eq!(k.dirty_and_writeback(), Some(443_580 * 1024));
    }

    #[test]
    fn bytes_win_and_background_is_halved() {
        // a worked example: 4 GiB dirtyable (1048576 pages of 4 KiB),
        // dirty_bytes 256 MiB + 1 byte (rounded up to whole pages),
        // background ratio 10 % = 409.6 MiB >= the limit: halved
        let vm = VmDirty {
            dirty_ratio: Some(0),
            dirty_bytes: Some(256 * MIB + 1),
            ..defaults()
        };
        let t = dirty_limits(&vm, 1 << 20, 4096).unwrap();
        assert_eq!(t.limit, 256 * MIB + 4096);
        assert_eq!(t.limit_basis, Basis::Bytes);
        // (65537 pages) / 2 = 32768 pages
        assert_eq!(t.background, 32_768 * 4096);
        assert_eq!(t.background_basis, Basis::HalfOfLimit);
        // background bytes win over its ratio as well
        let vm = VmDirty {
            dirty_background_bytes: Some(64 * MIB),
            dirty_background_ratio: Some(0),
            ..defaults()
        };
        let t = dirty_limits(&vm, 1 << 20, 4096).unwrap();
        assert_eq!(t.background, 64 * MIB);
        assert_eq!(t.background_basis, Basis::Bytes);
        // 20 % of 4 GiB: 819/4096 of 1048576 pages = 209664 pages
        assert_eq!(t.limit, 209_664 * 4096);
        // 64 KiB pages: the ratio's steps are finer
        let t = dirty_limits(&defaults(), 1 << 16, 65536).unwrap();
        assert_eq!(t.limit, 13_107 * 65536);
        // an unknown setting or no page size: no limits
        let vm = VmDirty {
            dirty_bytes: None,
            ..defaults()
        };
        assert_eq!(dirty_limits(&vm, 1 << 20, 4096), None);
        assert_eq!(dirty_limits(&defaults(), 1 << 20, 0), None);
        assert_eq!(HostWriteback::default().thresholds(), None);
    }

    #[test]
    fn group_dirty_from_v2_and_v1_memory_stat() {
        let v2 = Keyed::parse("anon 1\nfile_dirty 8192\nfile_writeback 4096\n");
        assert_eq!(
            GroupDirty::from_memory_stat(&v2),
            Some(GroupDirty {
                dirty: 8192,
                writeback: 4096,
                subtree: true
            })
        );
        // v1: the subtree's total_ keys before the group's own
        let v1 =
            Keyed::parse("cache 1\ndirty 10\nwriteback 20\ntotal_dirty 100\ntotal_writeback 200\n");
        let d = GroupDirty::from_memory_stat(&v1).unwrap();
        assert_eq!((d.dirty, d.writeback, d.subtree), (100, 200, true));
        let own = Keyed::parse("dirty 10\nwriteback 20\n");
        let d = GroupDirty::from_memory_stat(&own).unwrap();
        assert_eq!((d.total(), d.subtree), (30, false));
        assert_eq!(
            GroupDirty::from_memory_stat(&Keyed::parse("anon 1\n")),
            None
        );
    }

    #[test]
    fn drain_is_the_change_per_second() {
        let g = |d, w| GroupDirty {
            dirty: d,
            writeback: w,
            subtree: true,
        };
        let s = Duration::from_secs;
        // 40 MiB dirty, 4 s later 0 MiB: draining at 10 MiB/s
        let r = drain_rate((s(1), g(36 * MIB, 4 * MIB)), (s(5), g(0, 0))).unwrap();
        assert!((r + 10.0 * MIB as f64).abs() < 1e-6, "{r}");
        assert_eq!(drain_rate((s(5), g(0, 0)), (s(5), g(1, 1))), None);
        assert_eq!(drain_rate((s(6), g(0, 0)), (s(5), g(1, 1))), None);
    }

    #[test]
    fn the_story_each_layout_tells() {
        // v1 blkio with a throttle limit, whatever memory is on
        assert_eq!(Story::of(true, true, true), Story::BlkioDirectOnly);
        assert_eq!(Story::of(true, false, true), Story::BlkioDirectOnly);
        // v2 io.max with memory on v2: cgroup writeback
        assert_eq!(Story::of(false, false, true), Story::CgroupWriteback);
        assert!(Story::CgroupWriteback.buffered_throttled());
        // v2 io, memory on v1: no writeback accounting
        assert_eq!(Story::of(false, true, true), Story::NoWritebackAccounting);
        assert!(!Story::NoWritebackAccounting.buffered_throttled());
        // no limit
        assert_eq!(Story::of(true, true, false), Story::NoLimit);
        assert_eq!(Story::of(false, false, false), Story::NoLimit);
    }
}
