//! PURE: the text of cgroup interface files <-> typed values (v2, and the
//! v1 limit and setting files in `v1_limits`).
//!
//! One module per family of files. Every type that the kernel also accepts
//! as input prints back the kernel's own text, so a parse/print round trip is
//! exact. Nothing here touches the filesystem, the clock or the terminal.
//!
//! Reference: the kernel's cgroup v2 admin guide
//! (`shared/reference/cgroup-v2.rst`), cited as "admin guide" with its
//! section numbers.

pub mod core;
pub mod cpu;
mod flat;
pub mod io;
mod keyed;
pub mod memory;
pub mod pressure;
pub mod v1;
pub mod v1_limits;

pub use self::core::{CgroupEvents, CgroupStat, CgroupType, Controllers};
pub use cpu::{CpuMax, CpuStat, CpuStatLocal};
pub use io::{DevId, IoLatency, IoMax, IoStat, IoStatDevice, IoWeight};
pub use keyed::Keyed;
pub use memory::{MemoryEvents, MemoryStat};
pub use pressure::{Pressure, PressureLine};

use std::fmt;

/// Interface file names, in one place (admin guide, section "Core Interface
/// Files" and each controller's "Interface Files").
pub mod files {
    pub const CONTROLLERS: &str = "cgroup.controllers";
    pub const SUBTREE_CONTROL: &str = "cgroup.subtree_control";
    pub const PROCS: &str = "cgroup.procs";
    pub const THREADS: &str = "cgroup.threads";
    pub const TYPE: &str = "cgroup.type";
    pub const EVENTS: &str = "cgroup.events";
    pub const STAT: &str = "cgroup.stat";
    pub const FREEZE: &str = "cgroup.freeze";
    pub const KILL: &str = "cgroup.kill";
    pub const MAX_DEPTH: &str = "cgroup.max.depth";
    pub const MAX_DESCENDANTS: &str = "cgroup.max.descendants";
    pub const CPU_STAT: &str = "cpu.stat";
    pub const CPU_STAT_LOCAL: &str = "cpu.stat.local";
    pub const CPU_MAX: &str = "cpu.max";
    pub const CPU_MAX_BURST: &str = "cpu.max.burst";
    pub const CPU_WEIGHT: &str = "cpu.weight";
    pub const CPU_WEIGHT_NICE: &str = "cpu.weight.nice";
    pub const CPU_PRESSURE: &str = "cpu.pressure";
    pub const MEMORY_CURRENT: &str = "memory.current";
    pub const MEMORY_MIN: &str = "memory.min";
    pub const MEMORY_LOW: &str = "memory.low";
    pub const MEMORY_HIGH: &str = "memory.high";
    pub const MEMORY_MAX: &str = "memory.max";
    pub const MEMORY_PEAK: &str = "memory.peak";
    pub const MEMORY_STAT: &str = "memory.stat";
    pub const MEMORY_EVENTS: &str = "memory.events";
    pub const MEMORY_EVENTS_LOCAL: &str = "memory.events.local";
    pub const MEMORY_SWAP_EVENTS: &str = "memory.swap.events";
    pub const MEMORY_SWAP_CURRENT: &str = "memory.swap.current";
    pub const MEMORY_SWAP_MAX: &str = "memory.swap.max";
    pub const MEMORY_PRESSURE: &str = "memory.pressure";
    pub const MEMORY_OOM_GROUP: &str = "memory.oom.group";
    pub const IO_STAT: &str = "io.stat";
    pub const IO_MAX: &str = "io.max";
    pub const IO_WEIGHT: &str = "io.weight";
    pub const IO_LATENCY: &str = "io.latency";
    pub const IO_PRESSURE: &str = "io.pressure";
    pub const IO_COST_QOS: &str = "io.cost.qos";
    pub const IO_COST_MODEL: &str = "io.cost.model";
    pub const PIDS_CURRENT: &str = "pids.current";
    pub const PIDS_MAX: &str = "pids.max";
    pub const PIDS_EVENTS: &str = "pids.events";

    /// Prefixes of interface files: a directory entry whose name starts with
    /// one of these and contains a dot is a file, never a child group name a
    /// user may create (admin guide 2-1 "Creating cgroups": the kernel
    /// reserves the controller-name prefixes).
    pub const RESERVED_PREFIXES: &[&str] = &[
        "cgroup.",
        "cpu.",
        "cpuset.",
        "io.",
        "memory.",
        "pids.",
        "rdma.",
        "hugetlb.",
        "misc.",
        "perf_event.",
    ];
}

/// A parse failure: which file, and what was wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub what: &'static str,
    pub detail: String,
}

impl ParseError {
    pub fn new(what: &'static str, detail: impl Into<String>) -> Self {
        Self {
            what,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.detail)
    }
}

impl std::error::Error for ParseError {}

/// A value that may be unlimited: the kernel writes and reads "max".
/// Used for memory.*, pids.max, io.max keys and cgroup.max.*.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// No limit ("max").
    Max,
    /// A number (bytes, pids, bytes/s or IO/s depending on the file).
    Value(u64),
}

impl Limit {
    pub fn parse(what: &'static str, s: &str) -> Result<Self, ParseError> {
        let s = s.trim();
        if s == "max" {
            Ok(Self::Max)
        } else {
            s.parse().map(Self::Value).map_err(|_| {
                ParseError::new(what, format!("expected a number or \"max\", got {s:?}"))
            })
        }
    }

    /// The finite value, if any.
    pub fn value(self) -> Option<u64> {
        match self {
            Self::Max => None,
            Self::Value(v) => Some(v),
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Max => f.write_str("max"),
            Self::Value(v) => write!(f, "{v}"),
        }
    }
}

/// Parses a single unsigned number file (memory.current, pids.current, ...).
pub fn parse_u64(what: &'static str, s: &str) -> Result<u64, ParseError> {
    // the kernel's own text, digits and a newline, without a pass to trim
    // it (every group's memory.current and pids.current, every refresh);
    // anything else as below
    if let Some((v, n)) = flat::digits(s.as_bytes()) {
        if matches!(&s.as_bytes()[n..], b"\n" | b"") {
            return Ok(v);
        }
    }
    let t = s.trim();
    t.parse()
        .map_err(|_| ParseError::new(what, format!("expected a number, got {t:?}")))
}

/// Iterates the `key value` lines of a flat-keyed file (admin guide 4-2
/// "Format"), skipping lines that do not have exactly a key and a number:
/// a torn or partial read never fails the whole file. The kernel prints each
/// key once; where a text repeats one, every reader here keeps the first
/// (see [`set_once`] and [`Keyed`]), so the typed fields and the maps agree.
/// Found on bytes without allocating ([`flat`]).
pub fn flat_keyed(s: &str) -> impl Iterator<Item = (&str, u64)> {
    flat::KeyLines::new(s).filter_map(|(key, value)| Some((key, value.get()?)))
}

/// Stores `v` in `slot` unless a value is already there: the first line of
/// a key wins.
pub(crate) fn set_once(slot: &mut Option<u64>, v: u64) {
    if slot.is_none() {
        *slot = Some(v);
    }
}

/// Parses the pids of cgroup.procs / cgroup.threads, skipping garbage.
pub fn parse_pids(s: &str) -> Vec<u32> {
    s.split_ascii_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_file_reads_as_trim_and_parse() {
        // the kernel's text (digits, a newline) takes a shorter way; every
        // text reads as trimming and `str::parse` read it
        for t in [
            "0\n",
            "4096\n",
            "4096",
            "007\n",
            "18446744073709551615\n",
            "18446744073709551616\n",
            "99999999999999999999\n",
            " 12 \n",
            "+12\n",
            "12\n\n",
            "12\r\n",
            "12 13\n",
            "12x\n",
            "-1\n",
            "max\n",
            "\n",
            "",
        ] {
            let want = t.trim().parse::<u64>().ok();
            assert_eq!(parse_u64("memory.current", t).ok(), want, "{t:?}");
        }
    }

    #[test]
    fn limit_round_trip() {
        for text in ["max", "0", "67108864", "18446744073709551615"] {
            let l = Limit::parse("memory.max", text).unwrap();
            assert_eq!(l.to_string(), text);
        }
        assert_eq!(Limit::parse("m", "max\n").unwrap(), Limit::Max);
        assert!(Limit::parse("m", "-1").is_err());
        assert!(Limit::parse("m", "18446744073709551616").is_err());
        assert!(Limit::parse("m", "").is_err());
    }

    #[test]
    fn flat_keyed_skips_torn_lines() {
        let text = "usage_usec 100\nuser_usec\nsystem_usec 5 extra\nnr_periods x\nnr_throttled 3";
        let v: Vec<_> = flat_keyed(text).collect();
        assert_eq!(v, vec![("usage_usec", 100), ("nr_throttled", 3)]);
    }

    #[test]
    fn pids_skip_garbage() {
        assert_eq!(parse_pids("1\n22\nxx\n333\n"), vec![1, 22, 333]);
        assert!(parse_pids("").is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Every Limit prints the kernel's text and parses back to itself.
        #[test]
        fn limit_prints_and_parses_back(v in proptest::option::of(proptest::prelude::any::<u64>())) {
            let l = v.map_or(Limit::Max, Limit::Value);
            proptest::prop_assert_eq!(Limit::parse("memory.max", &l.to_string()), Ok(l));
            proptest::prop_assert_eq!(Limit::parse("memory.max", &format!("{l}\n")), Ok(l));
        }
    }
}
