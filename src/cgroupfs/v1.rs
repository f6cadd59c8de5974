//! PURE: the text of the cgroup v1 COUNTER files cgtop reads on every
//! refresh -> the same typed values as their v2 counterparts, in v2's
//! units (ns -> µs). Limit and setting files are `v1_limits`.
//!
//! Reference: the kernel's cgroup v1 documentation
//! (Documentation/admin-guide/cgroup-v1/{cpuacct,memory,blkio-controller,
//! freezer-subsystem,pids}.rst) and the texts captured on Linux 6.18
//! (tests/fixtures/v1/v1scan/).

use super::io::{DevId, IoStatDev, IoStatDevice};
use super::{IoStat, Limit};

/// Interface file names of cgroup v1's counters.
pub mod files {
    /// Total CPU time of the group and its descendants, ns.
    pub const CPUACCT_USAGE: &str = "cpuacct.usage";
    /// User CPU time, ns (Linux 4.7+).
    pub const CPUACCT_USAGE_USER: &str = "cpuacct.usage_user";
    /// System CPU time, ns (Linux 4.7+).
    pub const CPUACCT_USAGE_SYS: &str = "cpuacct.usage_sys";
    /// `user N` and `system N` in USER_HZ ticks: the only user/system
    /// split before Linux 4.7 (CentOS/RHEL 7's 3.10), read where
    /// cpuacct.usage_user is absent.
    pub const CPUACCT_STAT: &str = "cpuacct.stat";
    /// The cpu controller's throttling: nr_periods, nr_throttled,
    /// throttled_time (ns). Same name as v2's cpu.stat, another text.
    pub const CPU_STAT: &str = "cpu.stat";
    pub const MEMORY_USAGE: &str = "memory.usage_in_bytes";
    pub const MEMORY_LIMIT: &str = "memory.limit_in_bytes";
    /// Memory + swap (only with swap accounting on).
    pub const MEMSW_USAGE: &str = "memory.memsw.usage_in_bytes";
    /// The kernel memory charged to the group and its descendants (also
    /// in their memory.usage_in_bytes). Read at the kernel's root only,
    /// whose usage lacks it (`model::tree::root`).
    pub const MEMORY_KMEM_USAGE: &str = "memory.kmem.usage_in_bytes";
    /// On the hierarchy's root only (`CFTYPE_ONLY_ON_ROOT`): what tells
    /// the kernel's root group from a subdirectory or a cgroup
    /// namespace's root.
    pub const SANE_BEHAVIOR: &str = "cgroup.sane_behavior";
    /// The subtree's IO, as v2's io.stat (Linux 4.? +; see [`blkio_into`]).
    pub const BLKIO_BYTES_RECURSIVE: &str = "blkio.throttle.io_service_bytes_recursive";
    pub const BLKIO_IOS_RECURSIVE: &str = "blkio.throttle.io_serviced_recursive";
    /// The group's own IO: read where the `_recursive` files are absent.
    pub const BLKIO_BYTES: &str = "blkio.throttle.io_service_bytes";
    pub const BLKIO_IOS: &str = "blkio.throttle.io_serviced";
    pub const PIDS_CURRENT: &str = "pids.current";
    pub const FREEZER_STATE: &str = "freezer.state";
}

/// ns -> µs, v2's unit for CPU time.
pub fn ns_to_usec(ns: u64) -> u64 {
    ns / 1000
}

/// A file holding one decimal number (cpuacct.usage, memory.usage_in_bytes).
pub fn parse_u64(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The kernel's USER_HZ, the unit of cpuacct.stat (cgroup-v1/cpuacct.rst:
/// "user and system are in USER_HZ unit"; kernel/sched/cpuacct.c prints
/// them with `nsec_to_clock_t`). It is 100 on every architecture but alpha
/// (asm-generic/param.h `#define USER_HZ 100`, used by x86, arm, arm64,
/// powerpc, s390, riscv...), whatever the kernel's HZ: it is the tick
/// /proc/stat and times(2) count in too (`getconf CLK_TCK`).
pub const USER_HZ: u64 = 100;

/// cpuacct.stat -> (user, system) in µs; each `None` where its line is
/// missing or not a number.
pub fn parse_cpuacct_stat(text: &str) -> (Option<u64>, Option<u64>) {
    let (mut user, mut system) = (None, None);
    for line in text.lines() {
        let mut f = line.split_ascii_whitespace();
        let slot = match f.next() {
            Some("user") => &mut user,
            Some("system") => &mut system,
            _ => continue,
        };
        *slot = f
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .and_then(|t| t.checked_mul(1_000_000 / USER_HZ));
    }
    (user, system)
}

/// memory.limit_in_bytes: a number, [`Limit::Max`] for v1's "unlimited"
/// sentinel. The hot scan knows no page size: it takes the lowest
/// sentinel there is (64 KiB pages, arm64 and ppc64), which is below 4 KiB
/// pages' too ([`super::v1_limits::page_counter_max_bytes`]): no limit a
/// kernel can hold lies between the two.
pub fn parse_memory_limit(text: &str) -> Option<Limit> {
    super::v1_limits::MemLimitV1::parse(super::v1_limits::files::MEMORY_LIMIT, text, LARGEST_PAGE)
        .ok()
        .map(|m| m.0)
}

/// The largest page size a kernel runs with (64 KiB).
const LARGEST_PAGE: u64 = 65_536;

/// v1 cpu.stat's throttling, in v2's units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuThrottle {
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    /// throttled_time, ns -> µs.
    pub throttled_usec: Option<u64>,
}

impl CpuThrottle {
    /// "nr_periods N\nnr_throttled N\nthrottled_time NS\n..." (6.x adds
    /// nr_bursts and burst_time, which are skipped). Unknown keys and
    /// unreadable lines are skipped; the first of a repeated key wins.
    pub fn parse(text: &str) -> Self {
        let [nr_periods, nr_throttled, throttled_time] =
            super::flat::values(text, &["nr_periods", "nr_throttled", "throttled_time"]);
        Self {
            nr_periods,
            nr_throttled,
            throttled_usec: throttled_time.map(ns_to_usec),
        }
    }
}

/// Which counter a blkio.throttle file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlkioKind {
    /// io_service_bytes: bytes.
    Bytes,
    /// io_serviced: IOs.
    Ios,
}

/// Adds a blkio.throttle.io_service_bytes(_recursive) or
/// io_serviced(_recursive) text into `into`, per device: `MAJ:MIN Read N`
/// -> rbytes (rios), Write -> wbytes (wios), Discard -> dbytes (dios).
/// Sync, Async and Total lines split or sum the same IO again and are
/// skipped, as is the last line's device-less `Total N`. The two files
/// fill different counters of the same entries.
pub fn blkio_into(text: &str, kind: BlkioKind, into: &mut IoStat) {
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        let (Some(dev), Some(op), Some(v), None) = (it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let (Some(dev), Ok(v)) = (DevId::parse(dev), v.parse::<u64>()) else {
            continue;
        };
        let dev = IoStatDevice::Dev(dev);
        let i = if let Some(i) = into.0.iter().position(|(d, _)| *d == dev) {
            i
        } else {
            // a hostile text with many devices: bounded like io.stat's
            if into.0.len() >= 4096 {
                continue;
            }
            into.0.push((dev, IoStatDev::default()));
            into.0.len() - 1
        };
        let d = &mut into.0[i].1;
        let slot = match (kind, op) {
            (BlkioKind::Bytes, "Read") => &mut d.rbytes,
            (BlkioKind::Bytes, "Write") => &mut d.wbytes,
            (BlkioKind::Bytes, "Discard") => &mut d.dbytes,
            (BlkioKind::Ios, "Read") => &mut d.rios,
            (BlkioKind::Ios, "Write") => &mut d.wios,
            (BlkioKind::Ios, "Discard") => &mut d.dios,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(v);
        }
    }
}

/// freezer.state, the one type for reading and writing it.
pub use super::v1_limits::FreezerState;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuacct_stat_ticks_to_usec() {
        // this host's root cpuacct.stat (tests/fixtures/v1/v1scan)
        assert_eq!(
            parse_cpuacct_stat("user 121860\nsystem 35737\n"),
            (Some(1_218_600_000), Some(357_370_000))
        );
        assert_eq!(parse_cpuacct_stat("system 3\n"), (None, Some(30_000)));
        assert_eq!(parse_cpuacct_stat("user x\nbogus 1\n"), (None, None));
        assert_eq!(
            parse_cpuacct_stat(&format!("user {}\n", u64::MAX)),
            (None, None)
        );
    }

    /// The captured texts (tests/fixtures/v1/v1scan/), built in: this
    /// layer touches no filesystem, its tests neither.
    fn fx(name: &str) -> &'static str {
        match name {
            "cpuacct.usage" => include_str!("../../tests/fixtures/v1/v1scan/cpuacct.usage"),
            "cpu.stat" => include_str!("../../tests/fixtures/v1/v1scan/cpu.stat"),
            "memory.limit_in_bytes" => {
                include_str!("../../tests/fixtures/v1/v1scan/memory.limit_in_bytes")
            }
            "blkio.throttle.io_service_bytes_recursive" => include_str!(
                "../../tests/fixtures/v1/v1scan/blkio.throttle.io_service_bytes_recursive"
            ),
            "blkio.throttle.io_serviced_recursive" => {
                include_str!("../../tests/fixtures/v1/v1scan/blkio.throttle.io_serviced_recursive")
            }
            "freezer.state" => include_str!("../../tests/fixtures/v1/v1scan/freezer.state"),
            _ => unreachable!("no such fixture: {name}"),
        }
    }

    #[test]
    fn cpuacct_in_usec() {
        assert_eq!(
            parse_u64(fx("cpuacct.usage")).map(ns_to_usec),
            Some(370_123)
        );
        assert_eq!(parse_u64("garbage\n"), None);
    }

    #[test]
    fn cpu_stat_of_v1() {
        let t = CpuThrottle::parse(
            "nr_periods 10\nnr_throttled 3\nthrottled_time 2500000\nnr_bursts 0\nburst_time 0\n",
        );
        assert_eq!(
            t,
            CpuThrottle {
                nr_periods: Some(10),
                nr_throttled: Some(3),
                throttled_usec: Some(2500)
            }
        );
        assert_eq!(CpuThrottle::parse(fx("cpu.stat")).nr_periods, Some(0));
        assert_eq!(
            CpuThrottle::parse("nr_periods x\nbad\n"),
            CpuThrottle::default()
        );
    }

    #[test]
    fn memory_limit_sentinel() {
        assert_eq!(
            parse_memory_limit(fx("memory.limit_in_bytes")),
            Some(Limit::Max)
        );
        assert_eq!(
            parse_memory_limit("9223372036854710272\n"),
            Some(Limit::Max),
            "64 KiB pages"
        );
        assert_eq!(
            parse_memory_limit("67108864\n"),
            Some(Limit::Value(64 << 20))
        );
        // the kernel prints no -1, but takes it as "no limit"
        assert_eq!(parse_memory_limit("-1\n"), Some(Limit::Max));
        assert_eq!(parse_memory_limit("lots\n"), None);
    }

    #[test]
    fn blkio_maps_to_io_stat() {
        let mut io = IoStat::default();
        blkio_into(
            fx("blkio.throttle.io_service_bytes_recursive"),
            BlkioKind::Bytes,
            &mut io,
        );
        blkio_into(
            fx("blkio.throttle.io_serviced_recursive"),
            BlkioKind::Ios,
            &mut io,
        );
        let d = io
            .get(DevId {
                major: 254,
                minor: 0,
            })
            .unwrap();
        assert_eq!(d.rbytes, Some(20 << 20));
        assert_eq!(d.wbytes, Some(20 << 20));
        assert_eq!(d.rios, Some(40));
        assert_eq!(d.wios, Some(20));
        assert_eq!(d.dbytes, Some(0));
        assert_eq!(io.0.len(), 1, "Total lines are no device");
        // a hostile text: nothing panics, garbage is skipped
        let mut io = IoStat::default();
        blkio_into(
            "8:0 Read\n8:x Read 1\n8:0 Read 5 6\nTotal 9\n8:0 Write 7\n",
            BlkioKind::Bytes,
            &mut io,
        );
        assert_eq!(io.total().wbytes, Some(7));
        assert_eq!(io.total().rbytes, None);
    }

    #[test]
    fn freezer_states() {
        assert_eq!(
            FreezerState::parse(fx("freezer.state")).ok(),
            Some(FreezerState::Thawed)
        );
        assert_eq!(
            FreezerState::parse("FREEZING\n").ok(),
            Some(FreezerState::Freezing)
        );
        assert_eq!(
            FreezerState::parse("FROZEN").ok(),
            Some(FreezerState::Frozen)
        );
        assert!(FreezerState::parse("frozen").is_err());
    }
}
