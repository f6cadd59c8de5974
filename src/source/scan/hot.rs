//! The hot files: which files the scanner reads for each kind of
//! hierarchy (the tables, and which are read only while a column shows
//! them), and what each one's text sets in a group's `HotStats`.

use crate::cgroupfs::v1;
use crate::cgroupfs::{self, files, CgroupEvents, CpuStat, IoStat, Limit, Pressure};
use crate::model::{HotExtras, HotStats};

/// The files read for every group on every refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hot {
    CpuStat,
    MemoryCurrent,
    IoStat,
    PidsCurrent,
    Events,
    Procs,
    // read only while a column shows them (`HotExtras`)
    MemoryMax,
    SwapCurrent,
    CpuPressure,
    MemoryPressure,
    IoPressure,
    // cgroup v1's counters (`cgroupfs::v1`)
    CpuacctUsage,
    CpuacctUser,
    CpuacctSys,
    /// cpuacct.stat: the user/system split where the two above are absent.
    CpuacctStat,
    /// v1 cpu.stat: throttling only.
    V1CpuStat,
    MemoryUsage,
    /// memory.limit_in_bytes (for MEM%, with `memory_max`).
    MemoryLimit,
    /// memory.memsw.usage_in_bytes (for SWAP, with `swap`).
    MemswUsage,
    BlkioBytesRecursive,
    BlkioIosRecursive,
    /// The group's own IO: read only where the `_recursive` files are not.
    BlkioBytes,
    BlkioIos,
    FreezerState,
}

impl Hot {
    /// Whether the scanner reads this file with these extras asked for.
    pub(super) fn wanted(self, x: HotExtras) -> bool {
        match self {
            Self::MemoryMax | Self::MemoryLimit => x.memory_max,
            Self::SwapCurrent | Self::MemswUsage => x.swap,
            Self::CpuPressure | Self::MemoryPressure | Self::IoPressure => x.pressure,
            _ => true,
        }
    }

    /// Whether a rate is computed from this file's counters
    /// (`model::tree::rates`: CPU time, throttling, IO bytes and
    /// operations): what a priming read reads (`Scanner::set_priming`).
    /// Every other file (levels, state, limits, pressure's averages) is
    /// shown as read, and needs no reading before the one printed.
    pub(super) fn counts_for_rates(self) -> bool {
        match self {
            Self::CpuStat
            | Self::IoStat
            | Self::CpuacctUsage
            | Self::CpuacctUser
            | Self::CpuacctSys
            | Self::CpuacctStat
            | Self::V1CpuStat
            | Self::BlkioBytesRecursive
            | Self::BlkioIosRecursive
            | Self::BlkioBytes
            | Self::BlkioIos => true,
            Self::MemoryCurrent
            | Self::PidsCurrent
            | Self::Events
            | Self::Procs
            | Self::MemoryMax
            | Self::SwapCurrent
            | Self::CpuPressure
            | Self::MemoryPressure
            | Self::IoPressure
            | Self::MemoryUsage
            | Self::MemoryLimit
            | Self::MemswUsage
            | Self::FreezerState => false,
        }
    }
}

pub(super) const HOT: [(Hot, &str); 11] = [
    (Hot::CpuStat, files::CPU_STAT),
    (Hot::MemoryCurrent, files::MEMORY_CURRENT),
    (Hot::IoStat, files::IO_STAT),
    (Hot::PidsCurrent, files::PIDS_CURRENT),
    (Hot::Events, files::EVENTS),
    (Hot::Procs, files::PROCS),
    (Hot::MemoryMax, files::MEMORY_MAX),
    (Hot::SwapCurrent, files::MEMORY_SWAP_CURRENT),
    (Hot::CpuPressure, files::CPU_PRESSURE),
    (Hot::MemoryPressure, files::MEMORY_PRESSURE),
    (Hot::IoPressure, files::IO_PRESSURE),
];

/// The files read for every group of a cgroup v1 hierarchy: those of its
/// controllers are there (a directory's files say which), the rest absent.
/// cgroup.procs only in the primary hierarchy ([`ScanKind::V1`]).
pub(super) const HOT_V1: [(Hot, &str); 15] = [
    (Hot::CpuacctUsage, v1::files::CPUACCT_USAGE),
    (Hot::CpuacctUser, v1::files::CPUACCT_USAGE_USER),
    (Hot::CpuacctSys, v1::files::CPUACCT_USAGE_SYS),
    (Hot::CpuacctStat, v1::files::CPUACCT_STAT),
    (Hot::V1CpuStat, v1::files::CPU_STAT),
    (Hot::MemoryUsage, v1::files::MEMORY_USAGE),
    (Hot::BlkioBytesRecursive, v1::files::BLKIO_BYTES_RECURSIVE),
    (Hot::BlkioIosRecursive, v1::files::BLKIO_IOS_RECURSIVE),
    (Hot::BlkioBytes, v1::files::BLKIO_BYTES),
    (Hot::BlkioIos, v1::files::BLKIO_IOS),
    (Hot::PidsCurrent, v1::files::PIDS_CURRENT),
    (Hot::FreezerState, v1::files::FREEZER_STATE),
    (Hot::Procs, files::PROCS),
    (Hot::MemoryLimit, v1::files::MEMORY_LIMIT),
    (Hot::MemswUsage, v1::files::MEMSW_USAGE),
];

/// The most files of a table: the handles of an entry.
pub(super) const MAX_FILES: usize = 15;

/// Bits of the walk's "which files are here" mask: the table's indexes,
/// and cgroup.type.
pub(super) const TYPE_BIT: usize = MAX_FILES;

pub(super) type Table = &'static [(Hot, &'static str)];

/// Which kind of hierarchy a scanner reads, and so which files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// cgroup2 (or a fixture laid out like it): [`HOT`].
    V2,
    /// A cgroup v1 hierarchy: [`HOT_V1`]; `procs`: read cgroup.procs
    /// (the primary hierarchy only: the same processes are in every one).
    V1 { procs: bool },
}

impl ScanKind {
    pub(super) fn table(self) -> Table {
        match self {
            Self::V2 => &HOT,
            Self::V1 { .. } => &HOT_V1,
        }
    }
}

/// The walk's bit for a directory entry, for the files it looks for.
pub(super) fn file_bit(table: Table, name: &[u8]) -> Option<usize> {
    if name == files::TYPE.as_bytes() {
        return Some(TYPE_BIT);
    }
    table.iter().position(|(_, n)| n.as_bytes() == name)
}

/// The bit of a file kind in a table.
pub(super) fn bit_of(table: Table, kind: Hot) -> Option<usize> {
    table.iter().position(|(k, _)| *k == kind)
}

pub(super) fn apply(hot: &mut HotStats, kind: Hot, text: &str) {
    match kind {
        Hot::CpuStat => hot.cpu = CpuStat::parse(text).ok(),
        Hot::MemoryCurrent => hot.memory_current = cgroupfs::parse_u64("memory.current", text).ok(),
        Hot::IoStat => hot.io = Some(IoStat::parse(text)),
        Hot::PidsCurrent => hot.pids_current = cgroupfs::parse_u64("pids.current", text).ok(),
        Hot::Events => hot.events = Some(CgroupEvents::parse(text)),
        Hot::Procs => hot.nr_procs = Some(text.split_ascii_whitespace().count() as u64),
        Hot::MemoryMax => hot.memory_max = Limit::parse("memory.max", text).ok(),
        Hot::SwapCurrent => {
            hot.swap_current = cgroupfs::parse_u64("memory.swap.current", text).ok();
        }
        Hot::CpuacctUsage => {
            let usage = v1::parse_u64(text).map(v1::ns_to_usec);
            if let Some(u) = usage {
                hot.cpu.get_or_insert_with(CpuStat::default).usage_usec = u;
            }
        }
        Hot::CpuacctUser | Hot::CpuacctSys => {
            // after cpuacct.usage (the table's order): no usage, no CpuStat
            if let (Some(c), Some(v)) = (hot.cpu.as_mut(), v1::parse_u64(text)) {
                let slot = if kind == Hot::CpuacctUser {
                    &mut c.user_usec
                } else {
                    &mut c.system_usec
                };
                *slot = Some(v1::ns_to_usec(v));
            }
        }
        Hot::CpuacctStat => {
            // after cpuacct.usage, as the two above
            if let Some(c) = hot.cpu.as_mut() {
                (c.user_usec, c.system_usec) = v1::parse_cpuacct_stat(text);
            }
        }
        Hot::V1CpuStat => hot.v1.cpu_throttle = Some(v1::CpuThrottle::parse(text)),
        Hot::MemoryUsage => hot.memory_current = v1::parse_u64(text),
        Hot::MemoryLimit => hot.memory_max = v1::parse_memory_limit(text),
        Hot::MemswUsage => hot.v1.memsw_usage = v1::parse_u64(text),
        Hot::BlkioBytesRecursive | Hot::BlkioIosRecursive | Hot::BlkioBytes | Hot::BlkioIos => {
            let k = if matches!(kind, Hot::BlkioBytesRecursive | Hot::BlkioBytes) {
                v1::BlkioKind::Bytes
            } else {
                v1::BlkioKind::Ios
            };
            v1::blkio_into(text, k, hot.io.get_or_insert_with(IoStat::default));
            hot.v1.sources.io_own_only |= matches!(kind, Hot::BlkioBytes | Hot::BlkioIos);
        }
        Hot::FreezerState => hot.v1.freezer_state = v1::FreezerState::parse(text).ok(),
        Hot::CpuPressure | Hot::MemoryPressure | Hot::IoPressure => {
            if let Ok(p) = Pressure::parse(text) {
                // hundredths: the kernel prints two decimals
                let centi = (p.some.avg10 * 100.0).round().clamp(0.0, 10_000.0) as u32;
                hot.psi_some_avg10 = Some(hot.psi_some_avg10.map_or(centi, |c| c.max(centi)));
                if let Some(full) = p.full {
                    let centi = (full.avg10 * 100.0).round().clamp(0.0, 10_000.0) as u32;
                    hot.psi_full_avg10 = Some(hot.psi_full_avg10.map_or(centi, |c| c.max(centi)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use super::*;
    use std::fs;

    #[test]
    fn extra_files_are_opened_only_while_asked_for() {
        let t = tree();
        let a = t.path().join("a.slice");
        fs::write(a.join("memory.max"), "8192\n").unwrap();
        fs::write(a.join("memory.swap.current"), "512\n").unwrap();
        fs::write(
            a.join("cpu.pressure"),
            "some avg10=1.25 avg60=0 avg300=0 total=9\n",
        )
        .unwrap();
        fs::write(
            a.join("io.pressure"),
            "some avg10=3.50 avg60=0 avg300=0 total=9\nfull avg10=9.00 avg60=0 avg300=0 total=9\n",
        )
        .unwrap();
        let child = a.join("b c:ü");
        fs::write(child.join("memory.current"), "2048\n").unwrap();
        fs::write(child.join("memory.max"), "max\n").unwrap();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        // every file read on every scan: files_read counts the extras
        // (a watched cgroup.events is read only after it changed)
        s.set_watching(false);
        let (g, plain) = s.scan();
        let kept = s.kept();
        assert_eq!(g[1].hot.memory_max, None, "not asked for: not read");
        s.set_extras(HotExtras {
            memory_max: true,
            swap: true,
            pressure: true,
        });
        let (g, cost) = s.scan();
        assert!(cost.walked, "a change of extras lists the files again");
        // a.slice: memory.max, swap and two pressure files; b: memory.max
        assert_eq!(s.kept(), kept + 5);
        assert_eq!(cost.files_read, plain.files_read + 5);
        assert_eq!(g[1].hot.memory_max, Some(Limit::Value(8192)));
        assert_eq!(g[1].hot.swap_current, Some(512));
        // the highest some avg10 (not io's full line), in hundredths
        assert_eq!(g[1].hot.psi_some_avg10, Some(350));
        assert_eq!(
            g[1].hot.psi_full_avg10,
            Some(900),
            "io.pressure's full line; cpu has none"
        );
        // the child's "max" leaves its parent's limit in force
        assert_eq!(
            (g[1].hot.memory_limit, g[2].hot.memory_limit),
            (Some(8192), Some(8192))
        );
        s.set_extras(HotExtras::default());
        let (g, cost) = s.scan();
        assert_eq!((s.kept(), cost.files_read), (kept, plain.files_read));
        assert_eq!(g[1].hot.psi_some_avg10, None);
    }

    #[test]
    fn reads_hot_files_and_odd_names() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (g, cost) = s.scan();
        let names: Vec<&str> = g.iter().map(|x| as_text(&x.path)).collect();
        assert_eq!(names, ["", "a.slice", "a.slice/b c:ü"]);
        assert_eq!(g[0].hot.cpu.unwrap().usage_usec, 100);
        assert_eq!(g[0].hot.nr_procs, Some(1));
        assert_eq!(g[1].hot.memory_current, Some(4096));
        assert_eq!(g[1].pids(), Some(3));
        assert_eq!(
            g[1].hot.nr_procs, None,
            "procs is not read where pids.current exists"
        );
        assert!(g[1].hot.events.unwrap().is_populated());
        assert_eq!(g[2].hot.io.as_ref().unwrap().total().wbytes, Some(20));
        assert_eq!(g[2].pids(), Some(2));
        assert_eq!(g[2].cgroup_type, Some(CgroupType::Threaded));
        assert!(cost.walked);
        assert_eq!(
            s.kept(),
            8,
            "every hot file that exists is kept open, but cgroup.procs where pids.current is"
        );
        assert_eq!(
            cost.files_kept, 9,
            "start cgroup.stat + 8 hot reads (procs skipped where pids.current is)"
        );
    }

    #[test]
    fn a_priming_scan_reads_the_rate_counters_and_the_next_reads_the_rest_once() {
        // the tree's hot files: the root's cpu.stat and cgroup.procs;
        // a.slice's cgroup.events, cpu.stat, memory.current, pids.current;
        // b's cgroup.procs and io.stat. Rates are computed from cpu.stat
        // and io.stat only
        let t = tree();
        let mut plain = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        let (want, all) = plain.scan();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.set_priming(true);
        let (g, prime) = s.scan();
        assert!(prime.walked);
        assert_eq!(
            s.kept(),
            3,
            "the walk opens and keeps the rate counters alone"
        );
        assert_eq!(
            prime.files_read,
            1 + 3,
            "cgroup.stat, then the three rate counters alone"
        );
        assert_eq!(g[0].hot.cpu, want[0].hot.cpu);
        assert_eq!(g[1].hot.cpu, want[1].hot.cpu);
        assert_eq!(g[2].hot.io, want[2].hot.io);
        assert_eq!(
            (g[1].hot.memory_current, g[1].hot.events, g[2].hot.nr_procs),
            (None, None, None),
            "no level read for a baseline"
        );
        s.set_priming(false);
        let (g, next) = s.scan();
        assert!(!next.walked, "nothing listed again");
        assert_eq!(next.files_read, all.files_read, "every file, once");
        assert_eq!(
            next.files_kept, all.files_kept,
            "through the kept descriptors"
        );
        assert_eq!(s.kept(), plain.kept(), "the others opened and kept then");
        let hot = |g: &[GroupSample]| g.iter().map(|x| x.hot.clone()).collect::<Vec<_>>();
        assert_eq!(hot(&g), hot(&want), "the figures of a scan without priming");
    }

    #[test]
    fn procs_is_the_fallback_for_an_unreadable_pids_current() {
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        fs::write(t.path().join("a.slice/pids.current"), "garbage\n").unwrap();
        fs::write(t.path().join("a.slice/cgroup.procs"), "7\n8\n9\n").unwrap();
        let (g, _) = s.scan();
        assert_eq!(g[1].pids(), Some(3), "read through the lazy handle");
    }
}
