//! PURE: the text of cgroup v1 LIMIT and SETTING files <-> typed values
//! (the counter files are `cgroupfs::v1`'s). Each type the kernel also
//! accepts as input prints text the kernel accepts, and parsing that text
//! gives the same value back: `parse(print(x)) == x`.
//!
//! Reference: the kernel's Documentation/admin-guide/cgroup-v1/ (cited as
//! "v1 guide": cgroups.rst, cpuacct.rst, memory.rst, blkio-controller.rst,
//! freezer-subsystem.rst, pids.rst) and scheduler/sched-bwc.rst for CFS
//! bandwidth. The texts in tests are captured from this host's v1 files
//! (`tests/fixtures/v1/v1detail/`, Linux 6.18).

use super::io::{DevId, IoMax, IoMaxDev};
use super::{flat_keyed, parse_u64, set_once, CpuMax, Limit, ParseError};
use std::fmt;

/// v1 file names, in one place.
pub mod files {
    pub const CPU_CFS_QUOTA: &str = "cpu.cfs_quota_us";
    pub const CPU_CFS_PERIOD: &str = "cpu.cfs_period_us";
    pub const CPU_SHARES: &str = "cpu.shares";
    pub const MEMORY_LIMIT: &str = "memory.limit_in_bytes";
    pub const MEMORY_SOFT_LIMIT: &str = "memory.soft_limit_in_bytes";
    pub const MEMORY_USAGE: &str = "memory.usage_in_bytes";
    pub const MEMORY_MAX_USAGE: &str = "memory.max_usage_in_bytes";
    pub const MEMSW_LIMIT: &str = "memory.memsw.limit_in_bytes";
    pub const MEMSW_USAGE: &str = "memory.memsw.usage_in_bytes";
    pub const MEMORY_FAILCNT: &str = "memory.failcnt";
    pub const MEMORY_OOM_CONTROL: &str = "memory.oom_control";
    pub const MEMORY_STAT: &str = "memory.stat";
    pub const BLKIO_READ_BPS: &str = "blkio.throttle.read_bps_device";
    pub const BLKIO_WRITE_BPS: &str = "blkio.throttle.write_bps_device";
    pub const BLKIO_READ_IOPS: &str = "blkio.throttle.read_iops_device";
    pub const BLKIO_WRITE_IOPS: &str = "blkio.throttle.write_iops_device";
    pub const BLKIO_WEIGHT: &str = "blkio.weight";
    pub const BLKIO_WEIGHT_DEVICE: &str = "blkio.weight_device";
    pub const BLKIO_BFQ_WEIGHT: &str = "blkio.bfq.weight";
    pub const BLKIO_BFQ_WEIGHT_DEVICE: &str = "blkio.bfq.weight_device";
    pub const FREEZER_STATE: &str = "freezer.state";
    pub const FREEZER_SELF: &str = "freezer.self_freezing";
    pub const FREEZER_PARENT: &str = "freezer.parent_freezing";
    pub const PIDS_MAX: &str = "pids.max";
    pub const PIDS_CURRENT: &str = "pids.current";
    /// Every v1 process list (the same name as v2's).
    pub const PROCS: &str = "cgroup.procs";
    /// v1's cgroup.threads: one thread per write.
    pub const TASKS: &str = "tasks";
}

// ---------------------------------------------------------------- cpu

/// cpu.cfs_quota_us: microseconds per period, or `None` for no limit. The
/// kernel prints `-1` for no limit and takes any negative number for it
/// (sched-bwc.rst "Management").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CfsQuota(pub Option<u64>);

impl CfsQuota {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        if let Ok(v) = t.parse::<i64>() {
            return Ok(Self(u64::try_from(v).ok()));
        }
        Err(ParseError::new(
            files::CPU_CFS_QUOTA,
            format!("expected a number or -1, got {t:?}"),
        ))
    }
}

impl fmt::Display for CfsQuota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("-1"),
            Some(q) => write!(f, "{q}"),
        }
    }
}

/// cpu.cfs_period_us: a plain number of microseconds.
pub fn parse_cfs_period(s: &str) -> Result<u64, ParseError> {
    parse_u64(files::CPU_CFS_PERIOD, s)
}

/// The v1 quota and period read as v2's cpu.max: "quota/period" is the
/// same share of a CPU on both, so "50%" means the same on v1.
pub fn cfs_to_cpu_max(quota: CfsQuota, period: u64) -> CpuMax {
    CpuMax {
        quota: quota.0,
        period,
    }
}

/// A cpu.max value as the two v1 files' contents (quota, period).
pub fn cpu_max_to_cfs(m: CpuMax) -> (CfsQuota, u64) {
    (CfsQuota(m.quota), m.period)
}

/// cpu.shares: the v1 weight (default 1024, the kernel clamps to
/// 2..=262144; v1 guide cgroups.rst and sched/core.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CpuShares(pub u64);

impl CpuShares {
    pub const DEFAULT: Self = Self(1024);

    pub fn parse(s: &str) -> Result<Self, ParseError> {
        parse_u64(files::CPU_SHARES, s).map(Self)
    }
}

impl fmt::Display for CpuShares {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

// ---------------------------------------------------------------- memory

/// The number the kernel prints for "no limit" in memory.limit_in_bytes,
/// memory.soft_limit_in_bytes and memory.memsw.limit_in_bytes: the page
/// counter's maximum, `PAGE_COUNTER_MAX` = LONG_MAX / PAGE_SIZE pages on a
/// 64-bit kernel (include/linux/page_counter.h), printed in bytes, which is
/// the largest multiple of the page size not above `i64::MAX`:
/// 9223372036854771712 with 4 KiB pages, 9223372036854710272 with 64 KiB.
pub fn page_counter_max_bytes(page_size: u64) -> u64 {
    let max = i64::MAX as u64;
    max.checked_div(page_size)
        .map_or(max, |pages| pages * page_size)
}

/// A v1 page-counter limit (memory.limit_in_bytes, memory.soft_limit_in_bytes,
/// memory.memsw.limit_in_bytes). Any value at or above the kernel's
/// sentinel for the page size is `Limit::Max`; printed, `Max` is `-1`,
/// which the kernel takes as "remove the limit" (v1 guide memory.rst 2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct MemLimitV1(pub Limit);

impl MemLimitV1 {
    /// `what` names the file; `page_size` is the host's (`HostInfo`).
    pub fn parse(what: &'static str, s: &str, page_size: u64) -> Result<Self, ParseError> {
        let t = s.trim();
        if t == "-1" {
            return Ok(Self(Limit::Max));
        }
        let v: u64 = t
            .parse()
            .map_err(|_| ParseError::new(what, format!("expected a number or -1, got {t:?}")))?;
        Ok(Self(if v >= page_counter_max_bytes(page_size) {
            Limit::Max
        } else {
            Limit::Value(v)
        }))
    }
}

impl fmt::Display for MemLimitV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Limit::Max => f.write_str("-1"),
            Limit::Value(v) => write!(f, "{v}"),
        }
    }
}

/// memory.oom_control (v1 guide memory.rst 10): `oom_kill_disable` is also
/// what a write of `0`/`1` sets; `oom_kill` came in Linux 4.13.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct OomControl {
    pub oom_kill_disable: bool,
    pub under_oom: bool,
    pub oom_kill: Option<u64>,
}

impl OomControl {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let (mut disable, mut under, mut kills) = (None, None, None);
        for (k, v) in flat_keyed(s) {
            let slot = match k {
                "oom_kill_disable" => &mut disable,
                "under_oom" => &mut under,
                "oom_kill" => &mut kills,
                _ => continue,
            };
            set_once(slot, v);
        }
        let disable = disable.ok_or_else(|| {
            ParseError::new(files::MEMORY_OOM_CONTROL, "no oom_kill_disable line")
        })?;
        Ok(Self {
            oom_kill_disable: disable != 0,
            under_oom: under.is_some_and(|u| u != 0),
            oom_kill: kills,
        })
    }

    /// What to write to set `oom_kill_disable`.
    pub fn disable_text(disable: bool) -> &'static str {
        if disable {
            "1"
        } else {
            "0"
        }
    }
}

impl fmt::Display for OomControl {
    /// The kernel's read format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "oom_kill_disable {}\nunder_oom {}",
            u8::from(self.oom_kill_disable),
            u8::from(self.under_oom)
        )?;
        if let Some(k) = self.oom_kill {
            write!(f, "\noom_kill {k}")?;
        }
        Ok(())
    }
}

/// The v1 memory.stat fields cgtop shows: the group's own pages and the
/// `total_` forms (the group and its descendants, with use_hierarchy,
/// which is always on since Linux 5.16). Bytes; `None` when a line is
/// missing. v1 guide memory.rst 5.2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStatV1 {
    pub cache: Option<u64>,
    pub rss: Option<u64>,
    pub rss_huge: Option<u64>,
    pub shmem: Option<u64>,
    pub mapped_file: Option<u64>,
    pub dirty: Option<u64>,
    pub writeback: Option<u64>,
    pub swap: Option<u64>,
    pub total_cache: Option<u64>,
    pub total_rss: Option<u64>,
    pub total_shmem: Option<u64>,
    pub total_mapped_file: Option<u64>,
    pub total_dirty: Option<u64>,
    pub total_writeback: Option<u64>,
    pub total_swap: Option<u64>,
    /// The smallest limit on the way to the root (bytes; the sentinel
    /// when none): the v1 counterpart of cgtop's effective limit.
    pub hierarchical_memory_limit: Option<u64>,
}

impl MemoryStatV1 {
    pub fn parse(s: &str) -> Self {
        let mut m = Self::default();
        for (k, v) in flat_keyed(s) {
            let slot = match k {
                "cache" => &mut m.cache,
                "rss" => &mut m.rss,
                "rss_huge" => &mut m.rss_huge,
                "shmem" => &mut m.shmem,
                "mapped_file" => &mut m.mapped_file,
                "dirty" => &mut m.dirty,
                "writeback" => &mut m.writeback,
                "swap" => &mut m.swap,
                "total_cache" => &mut m.total_cache,
                "total_rss" => &mut m.total_rss,
                "total_shmem" => &mut m.total_shmem,
                "total_mapped_file" => &mut m.total_mapped_file,
                "total_dirty" => &mut m.total_dirty,
                "total_writeback" => &mut m.total_writeback,
                "total_swap" => &mut m.total_swap,
                "hierarchical_memory_limit" => &mut m.hierarchical_memory_limit,
                _ => continue,
            };
            set_once(slot, v);
        }
        m
    }
}

// ---------------------------------------------------------------- blkio

/// One "MAJ:MIN VALUE" line of a v1 blkio device file. Written alone, it
/// sets that device's value; a value of 0 removes a throttle limit (or a
/// cfq per-device weight) (v1 guide blkio-controller.rst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DevValue {
    pub dev: DevId,
    pub value: u64,
}

impl fmt::Display for DevValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.dev, self.value)
    }
}

fn dev_line(what: &'static str, line: &str) -> Result<DevValue, ParseError> {
    let mut it = line.split_ascii_whitespace();
    match (it.next().and_then(DevId::parse), it.next(), it.next()) {
        (Some(dev), Some(v), None) => v
            .parse()
            .map(|value| DevValue { dev, value })
            .map_err(|_| ParseError::new(what, format!("bad value in {line:?}"))),
        _ => Err(ParseError::new(what, format!("bad line {line:?}"))),
    }
}

/// blkio.throttle.{read,write}_{bps,iops}_device: a "MAJ:MIN VALUE" line per
/// device with a limit, nothing when there is none. The kernel lists only
/// limited devices, so every listed value is a limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct ThrottleDevices(pub Vec<DevValue>);

impl ThrottleDevices {
    pub fn parse(what: &'static str, s: &str) -> Result<Self, ParseError> {
        s.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| dev_line(what, l))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    pub fn get(&self, dev: DevId) -> Option<u64> {
        self.0.iter().find(|d| d.dev == dev).map(|d| d.value)
    }

    /// The line that removes `dev`'s limit.
    pub fn remove(dev: DevId) -> DevValue {
        DevValue { dev, value: 0 }
    }
}

impl fmt::Display for ThrottleDevices {
    /// The kernel's read format (each line also a valid write).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// The four throttle files of a group as v2's io.max: a device per line
/// with the limits any of them sets, the others `max`; devices in order.
pub fn throttle_io_max(
    rbps: &ThrottleDevices,
    wbps: &ThrottleDevices,
    riops: &ThrottleDevices,
    wiops: &ThrottleDevices,
) -> IoMax {
    type Slot = fn(&mut IoMaxDev) -> &mut Limit;
    let mut out: Vec<IoMaxDev> = Vec::new();
    let files: [(&ThrottleDevices, Slot); 4] = [
        (rbps, |m| &mut m.rbps),
        (wbps, |m| &mut m.wbps),
        (riops, |m| &mut m.riops),
        (wiops, |m| &mut m.wiops),
    ];
    for (list, slot) in files {
        for d in &list.0 {
            let i = out.iter().position(|m| m.dev == d.dev).unwrap_or_else(|| {
                out.push(IoMaxDev::unlimited(d.dev));
                out.len() - 1
            });
            let s = slot(&mut out[i]);
            if *s == Limit::Max {
                *s = Limit::Value(d.value);
            }
        }
    }
    out.sort_by_key(|m| m.dev);
    IoMax(out)
}

/// A v1 blkio weight file: `blkio.weight` / `blkio.bfq.weight` print a plain
/// `N`; `blkio.bfq.weight_device` prints `default N` and a `MAJ:MIN N` line
/// per device whose scheduler is bfq (captured here);
/// `blkio.weight_device` (cfq, gone since Linux 5.0) printed only
/// `MAJ:MIN N` lines (v1 guide blkio-controller.rst). One type reads all
/// of them: `default` is the plain or `default` number, `devices` the lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlkioWeight {
    pub default: Option<u32>,
    pub devices: Vec<(DevId, u32)>,
}

impl BlkioWeight {
    pub fn parse(what: &'static str, s: &str) -> Result<Self, ParseError> {
        let mut w = Self::default();
        for line in s.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let bad = || ParseError::new(what, format!("bad line {line:?}"));
            let mut it = line.split_ascii_whitespace();
            match (it.next(), it.next(), it.next()) {
                (Some(n), None, None) if w.default.is_none() => {
                    w.default = Some(n.parse().map_err(|_| bad())?);
                }
                (Some("default"), Some(n), None) if w.default.is_none() => {
                    w.default = Some(n.parse().map_err(|_| bad())?);
                }
                (Some(d), Some(n), None) => {
                    let dev = DevId::parse(d).ok_or_else(bad)?;
                    w.devices.push((dev, n.parse().map_err(|_| bad())?));
                }
                _ => return Err(bad()),
            }
        }
        Ok(w)
    }

    /// The text of a plain weight file (`blkio.weight`, `blkio.bfq.weight`).
    pub fn plain_text(weight: u32) -> String {
        weight.to_string()
    }

    /// The line that sets one device's weight in a `_device` file.
    pub fn device_text(dev: DevId, weight: u32) -> String {
        format!("{dev} {weight}")
    }
}

impl fmt::Display for BlkioWeight {
    /// The `_device` files' read format: `default N` first when there is a
    /// default, then the devices (each line a valid write for bfq).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        if let Some(d) = self.default {
            write!(f, "default {d}")?;
            first = false;
        }
        for (dev, w) in &self.devices {
            if !first {
                f.write_str("\n")?;
            }
            write!(f, "{dev} {w}")?;
            first = false;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- freezer

/// freezer.state (v1 guide freezer-subsystem.rst): FREEZING while the
/// kernel is still stopping tasks (or when a task could not be frozen);
/// only FROZEN and THAWED may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FreezerState {
    Thawed,
    Freezing,
    Frozen,
}

impl FreezerState {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        match s.trim() {
            "THAWED" => Ok(Self::Thawed),
            "FREEZING" => Ok(Self::Freezing),
            "FROZEN" => Ok(Self::Frozen),
            t => Err(ParseError::new(
                files::FREEZER_STATE,
                format!("expected THAWED, FREEZING or FROZEN, got {t:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Thawed => "THAWED",
            Self::Freezing => "FREEZING",
            Self::Frozen => "FROZEN",
        }
    }

    /// Whether the kernel takes this text as input (FREEZING it refuses).
    pub fn is_writable(self) -> bool {
        !matches!(self, Self::Freezing)
    }

    /// What to write to freeze (`true`) or thaw.
    pub fn write_text(freeze: bool) -> &'static str {
        if freeze {
            Self::Frozen.as_str()
        } else {
            Self::Thawed.as_str()
        }
    }
}

impl fmt::Display for FreezerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// freezer.self_freezing / freezer.parent_freezing: `0` or `1`.
pub fn parse_flag(what: &'static str, s: &str) -> Result<bool, ParseError> {
    match s.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        t => Err(ParseError::new(what, format!("expected 0 or 1, got {t:?}"))),
    }
}

// ---------------------------------------------------------------- pids

/// v1 pids.max: the same text as v2's (`max` or a number; pids.rst).
pub fn parse_pids_max(s: &str) -> Result<Limit, ParseError> {
    Limit::parse(files::PIDS_MAX, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The captured texts of tests/fixtures/v1/v1detail/, by file name.
    fn fixture(name: &str) -> String {
        macro_rules! captured {
            ($($n:literal),* $(,)?) => {
                match name {
                    $($n => include_str!(concat!("../../tests/fixtures/v1/v1detail/", $n)),)*
                    _ => panic!("no fixture {name}"),
                }
            };
        }
        captured!(
            "cpu.cfs_quota_us.unlimited",
            "cpu.cfs_quota_us.half",
            "cpu.cfs_period_us",
            "cpu.shares.default",
            "cpu.shares.half",
            "memory.limit_in_bytes.unlimited",
            "memory.limit_in_bytes.64m",
            "memory.soft_limit_in_bytes.32m",
            "memory.memsw.limit_in_bytes.128m",
            "memory.oom_control.default",
            "memory.oom_control.disabled",
            "memory.stat",
            "blkio.throttle.write_iops_device.empty",
            "blkio.throttle.read_bps_device",
            "blkio.throttle.write_bps_device",
            "blkio.throttle.read_iops_device",
            "blkio.bfq.weight.200",
            "blkio.bfq.weight_device.default",
            "freezer.state.frozen",
            "freezer.state.thawed",
            "freezer.self_freezing.frozen",
            "freezer.parent_freezing.child",
            "pids.max.max",
            "pids.max.42",
        )
        .to_string()
    }

    const VDA: DevId = DevId {
        major: 254,
        minor: 0,
    };

    #[test]
    fn cfs_quota_round_trip() {
        let q = CfsQuota::parse(&fixture("cpu.cfs_quota_us.unlimited")).unwrap();
        assert_eq!(q, CfsQuota(None));
        assert_eq!(q.to_string(), "-1");
        let q = CfsQuota::parse(&fixture("cpu.cfs_quota_us.half")).unwrap();
        assert_eq!(q, CfsQuota(Some(50_000)));
        assert_eq!(q.to_string(), "50000");
        // any negative number is "no limit" to the kernel
        assert_eq!(CfsQuota::parse("-5").unwrap(), CfsQuota(None));
        assert!(CfsQuota::parse("").is_err());
        assert!(CfsQuota::parse("max").is_err());
        assert!(CfsQuota::parse("1.5").is_err());
        let period = parse_cfs_period(&fixture("cpu.cfs_period_us")).unwrap();
        assert_eq!(period, 100_000);
        assert!(parse_cfs_period("-1").is_err());
    }

    #[test]
    fn cfs_as_cpu_max_means_the_same_share() {
        let half = cfs_to_cpu_max(CfsQuota(Some(50_000)), 100_000);
        assert_eq!(half.to_string(), "50000 100000");
        assert_eq!(half.cpus(), Some(0.5));
        let none = cfs_to_cpu_max(CfsQuota(None), 100_000);
        assert_eq!(none.cpus(), None);
        // and back: the two file texts
        let (q, p) = cpu_max_to_cfs(CpuMax::parse("150000 100000").unwrap());
        assert_eq!((q.to_string(), p), ("150000".to_string(), 100_000));
        let (q, _) = cpu_max_to_cfs(CpuMax::parse("max 100000").unwrap());
        assert_eq!(q.to_string(), "-1");
    }

    #[test]
    fn shares() {
        assert_eq!(
            CpuShares::parse(&fixture("cpu.shares.default")).unwrap(),
            CpuShares::DEFAULT
        );
        let s = CpuShares::parse(&fixture("cpu.shares.half")).unwrap();
        assert_eq!(s.to_string(), "512");
        assert!(CpuShares::parse("-2").is_err());
    }

    #[test]
    fn memory_limit_sentinel_per_page_size() {
        const K4: u64 = 9_223_372_036_854_771_712;
        const K64: u64 = 9_223_372_036_854_710_272;
        assert_eq!(page_counter_max_bytes(4096), K4);
        assert_eq!(page_counter_max_bytes(65536), K64);
        let m = fixture("memory.limit_in_bytes.unlimited");
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, &m, 4096).unwrap(),
            MemLimitV1(Limit::Max)
        );
        // a 64 KiB kernel prints its own sentinel; on it, that is "max"...
        let k64 = K64.to_string();
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, &k64, 65536).unwrap(),
            MemLimitV1(Limit::Max)
        );
        // ...but on 4 KiB pages the same number is a real (huge) limit
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, &k64, 4096).unwrap(),
            MemLimitV1(Limit::Value(K64))
        );
        // above the sentinel is still "max"; -1 (what one writes) too
        let above = (K4 + 1).to_string();
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, &above, 4096)
                .unwrap()
                .0,
            Limit::Max
        );
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, "-1", 4096)
                .unwrap()
                .0,
            Limit::Max
        );
        assert_eq!(MemLimitV1(Limit::Max).to_string(), "-1");
        for bad in ["", "max", "-2", "64M", "18446744073709551616"] {
            assert!(
                MemLimitV1::parse(files::MEMORY_LIMIT, bad, 4096).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn memory_limits_round_trip() {
        for (file, name, v) in [
            (files::MEMORY_LIMIT, "memory.limit_in_bytes.64m", 64 << 20),
            (
                files::MEMORY_SOFT_LIMIT,
                "memory.soft_limit_in_bytes.32m",
                32 << 20,
            ),
            (
                files::MEMSW_LIMIT,
                "memory.memsw.limit_in_bytes.128m",
                128 << 20,
            ),
        ] {
            let text = fixture(name);
            let l = MemLimitV1::parse(file, &text, 4096).unwrap();
            assert_eq!(l.0, Limit::Value(v));
            assert_eq!(l.to_string(), text.trim());
            assert_eq!(MemLimitV1::parse(file, &l.to_string(), 4096), Ok(l));
        }
        let max = MemLimitV1(Limit::Max);
        assert_eq!(
            MemLimitV1::parse(files::MEMORY_LIMIT, &max.to_string(), 4096),
            Ok(max)
        );
    }

    #[test]
    fn oom_control() {
        let text = fixture("memory.oom_control.disabled");
        let o = OomControl::parse(&text).unwrap();
        assert_eq!(
            o,
            OomControl {
                oom_kill_disable: true,
                under_oom: false,
                oom_kill: Some(0)
            }
        );
        assert_eq!(o.to_string(), text.trim_end());
        let d = OomControl::parse(&fixture("memory.oom_control.default")).unwrap();
        assert!(!d.oom_kill_disable);
        // a kernel before 4.13 has no oom_kill line
        let old = OomControl::parse("oom_kill_disable 0\nunder_oom 1\n").unwrap();
        assert_eq!((old.under_oom, old.oom_kill), (true, None));
        assert_eq!(old.to_string(), "oom_kill_disable 0\nunder_oom 1");
        assert!(OomControl::parse("").is_err());
        assert!(OomControl::parse("under_oom 0\n").is_err());
        assert_eq!(OomControl::disable_text(true), "1");
    }

    #[test]
    fn memory_stat_v1() {
        let m = MemoryStatV1::parse(&fixture("memory.stat"));
        assert_eq!(m.cache, Some(20_996_096));
        assert_eq!(m.rss, Some(229_376));
        assert_eq!(m.dirty, Some(20_971_520));
        assert_eq!(m.writeback, Some(0));
        assert_eq!(m.total_dirty, Some(20_971_520));
        assert_eq!(m.total_cache, Some(20_996_096));
        assert_eq!(m.hierarchical_memory_limit, Some(268_435_456));
        assert_eq!(MemoryStatV1::parse(""), MemoryStatV1::default());
    }

    #[test]
    fn throttle_devices_round_trip() {
        let empty = fixture("blkio.throttle.write_iops_device.empty");
        let e = ThrottleDevices::parse(files::BLKIO_WRITE_IOPS, &empty).unwrap();
        assert!(e.0.is_empty());
        assert_eq!(e.to_string(), "");
        let text = fixture("blkio.throttle.read_bps_device");
        let r = ThrottleDevices::parse(files::BLKIO_READ_BPS, &text).unwrap();
        assert_eq!(r.get(VDA), Some(1_048_576));
        assert_eq!(r.to_string(), text.trim_end());
        let two = "8:0 100\n254:0 200\n";
        let t = ThrottleDevices::parse(files::BLKIO_READ_IOPS, two).unwrap();
        assert_eq!(t.to_string(), two.trim_end());
        assert_eq!(ThrottleDevices::remove(VDA).to_string(), "254:0 0");
        for bad in ["8:0", "8:0 x", "sda 100", "8:0 1 2", "8:0 -1"] {
            assert!(
                ThrottleDevices::parse(files::BLKIO_READ_BPS, bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn throttle_files_as_io_max() {
        let p = |name| ThrottleDevices::parse(files::BLKIO_READ_BPS, &fixture(name)).unwrap();
        let none = ThrottleDevices::default();
        let m = throttle_io_max(
            &p("blkio.throttle.read_bps_device"),
            &p("blkio.throttle.write_bps_device"),
            &p("blkio.throttle.read_iops_device"),
            &none,
        );
        assert_eq!(
            m.0.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["254:0 rbps=1048576 wbps=2097152 riops=100 wiops=max"]
        );
        let other = ThrottleDevices::parse(files::BLKIO_WRITE_IOPS, "8:0 7\n").unwrap();
        let m = throttle_io_max(&none, &none, &none, &other);
        assert_eq!(
            m.get(DevId { major: 8, minor: 0 }).unwrap().wiops,
            Limit::Value(7)
        );
        assert!(throttle_io_max(&none, &none, &none, &none).0.is_empty());
    }

    #[test]
    fn blkio_weights() {
        let w =
            BlkioWeight::parse(files::BLKIO_BFQ_WEIGHT, &fixture("blkio.bfq.weight.200")).unwrap();
        assert_eq!(w.default, Some(200));
        assert_eq!(BlkioWeight::plain_text(200), "200");
        let text = fixture("blkio.bfq.weight_device.default");
        let d = BlkioWeight::parse(files::BLKIO_BFQ_WEIGHT_DEVICE, &text).unwrap();
        assert_eq!((d.default, d.devices.len()), (Some(100), 0));
        assert_eq!(d.to_string(), text.trim_end());
        // bfq with a device line, and cfq's device-only format
        let bfq = "default 200\n8:0 300\n";
        let b = BlkioWeight::parse(files::BLKIO_BFQ_WEIGHT_DEVICE, bfq).unwrap();
        assert_eq!(b.devices, vec![(DevId { major: 8, minor: 0 }, 300)]);
        assert_eq!(b.to_string(), bfq.trim_end());
        let cfq = "8:0 300\n8:16 500\n";
        let c = BlkioWeight::parse(files::BLKIO_WEIGHT_DEVICE, cfq).unwrap();
        assert_eq!((c.default, c.devices.len()), (None, 2));
        assert_eq!(c.to_string(), cfq.trim_end());
        assert_eq!(
            BlkioWeight::parse(files::BLKIO_WEIGHT_DEVICE, "").unwrap(),
            BlkioWeight::default()
        );
        assert_eq!(BlkioWeight::device_text(VDA, 300), "254:0 300");
        for bad in ["x", "default", "default x", "8:0 1 2", "100\n200", "sda 5"] {
            assert!(
                BlkioWeight::parse(files::BLKIO_WEIGHT, bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn freezer() {
        let f = FreezerState::parse(&fixture("freezer.state.frozen")).unwrap();
        assert_eq!(f, FreezerState::Frozen);
        assert_eq!(
            FreezerState::parse(&fixture("freezer.state.thawed")).unwrap(),
            FreezerState::Thawed
        );
        for s in [
            FreezerState::Thawed,
            FreezerState::Freezing,
            FreezerState::Frozen,
        ] {
            assert_eq!(FreezerState::parse(s.as_str()), Ok(s));
        }
        assert!(!FreezerState::Freezing.is_writable());
        assert_eq!(FreezerState::write_text(true), "FROZEN");
        assert!(FreezerState::parse("frozen").is_err());
        assert!(FreezerState::parse("").is_err());
        assert!(parse_flag(
            files::FREEZER_SELF,
            &fixture("freezer.self_freezing.frozen")
        )
        .unwrap());
        assert!(parse_flag(
            files::FREEZER_PARENT,
            &fixture("freezer.parent_freezing.child")
        )
        .unwrap());
        assert!(!parse_flag(files::FREEZER_SELF, "0\n").unwrap());
        assert!(parse_flag(files::FREEZER_SELF, "2").is_err());
    }

    #[test]
    fn pids_max() {
        assert_eq!(
            parse_pids_max(&fixture("pids.max.max")).unwrap(),
            Limit::Max
        );
        assert_eq!(
            parse_pids_max(&fixture("pids.max.42")).unwrap(),
            Limit::Value(42)
        );
        assert!(parse_pids_max("-1").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn mem_limit_prints_and_parses_back(v in proptest::option::of(0u64..page_counter_max_bytes(4096)), page in proptest::sample::select(vec![4096u64, 16384, 65536])) {
            let l = MemLimitV1(v.filter(|v| *v < page_counter_max_bytes(page)).map_or(Limit::Max, Limit::Value));
            proptest::prop_assert_eq!(MemLimitV1::parse(files::MEMORY_LIMIT, &format!("{l}\n"), page), Ok(l));
        }

        #[test]
        fn throttle_prints_and_parses_back(lines in proptest::collection::vec((0u32..300, 0u32..300, 1u64..u64::MAX), 0..5)) {
            let t = ThrottleDevices(lines.into_iter().map(|(a, b, value)| DevValue { dev: DevId { major: a, minor: b }, value }).collect());
            proptest::prop_assert_eq!(ThrottleDevices::parse(files::BLKIO_READ_BPS, &t.to_string()), Ok(t));
        }

        #[test]
        fn cfs_quota_prints_and_parses_back(q in proptest::option::of(0u64..=i64::MAX as u64)) {
            proptest::prop_assert_eq!(CfsQuota::parse(&CfsQuota(q).to_string()), Ok(CfsQuota(q)));
        }
    }
}
