//! PURE: facts about the machine cgtop runs on, gathered once at start by
//! the edge (`run::host_info` reads uname and the online CPUs) and shown
//! by every output: the TUI's header, `-b`'s first line, JSON's `host`,
//! `kernel` and `ncpus`; and the host's swap, for pre-flight. And
//! [`MachineLoad`], the machine's CPU, memory and pressure, which the
//! collector reads on every refresh for the TUI header's meters.

pub mod layout;
pub mod mountinfo;
pub mod writeback;

/// Facts about the machine, gathered once at start (at the edge).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub ncpus: usize,
    /// SwapTotal from /proc/meminfo, bytes; `None` when unknown. Pre-flight
    /// (`model::write::preflight`) counts on no swap where it is 0: lowering
    /// memory.max below use then OOM-kills instead of swapping.
    pub swap_total: Option<u64>,
}

/// The machine as a whole, read by the collector on every refresh for the
/// TUI header's meters: /proc/meminfo and /proc/pressure. On cgroup v2
/// the root group has no memory.current, so the machine's memory in use
/// is MemTotal - MemAvailable. `None` where a file is absent (a kernel
/// without PSI) or unreadable.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineLoad {
    /// MemTotal, bytes.
    pub mem_total: Option<u64>,
    /// MemAvailable, bytes.
    pub mem_available: Option<u64>,
    /// Share of the machine's CPU time busy (0.0 to 1.0) since the last
    /// refresh, from /proc/stat's `cpu` line; `None` on the first
    /// refresh or when the counters did not move forward.
    pub cpu_busy: Option<f64>,
    /// /proc/pressure/cpu, memory and io.
    pub cpu_pressure: Option<crate::cgroupfs::Pressure>,
    pub memory_pressure: Option<crate::cgroupfs::Pressure>,
    pub io_pressure: Option<crate::cgroupfs::Pressure>,
    /// The host's writeback settings, dirty limits and dirty pages
    /// (`model::host::writeback`): the IO page's story and `--json`'s `writeback`.
    pub writeback: Option<crate::model::host::writeback::HostWriteback>,
}

impl MachineLoad {
    /// Memory in use, bytes: MemTotal - MemAvailable.
    pub fn mem_used(&self) -> Option<u64> {
        Some(self.mem_total?.saturating_sub(self.mem_available?))
    }
}

/// One "Key:   N kB" line of /proc/meminfo's text, in bytes; `None` when
/// the key is absent or its figure is not a number.
pub fn meminfo_bytes(text: &str, key: &str) -> Option<u64> {
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The machine's CPU time from /proc/stat's first (`cpu`) line, in
/// USER_HZ ticks: all of it, and the idle part (idle and iowait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimes {
    pub total: u64,
    pub idle: u64,
}

impl CpuTimes {
    /// From /proc/stat's text: `cpu  user nice system idle iowait irq
    /// softirq steal ...` (guest time is inside user and nice, so not
    /// added again). `None` when the line is missing or malformed.
    pub fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_ascii_whitespace()
            .skip(1)
            .take(8)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if v.len() < 4 {
            return None;
        }
        let total = v.iter().try_fold(0u64, |a, x| a.checked_add(*x))?;
        let idle = v[3].checked_add(v.get(4).copied().unwrap_or(0))?;
        Some(Self { total, idle })
    }

    /// The busy share of the time between `prev` and `self`; `None` when
    /// no time passed or a counter went backwards.
    pub fn busy_since(&self, prev: &Self) -> Option<f64> {
        let total = self.total.checked_sub(prev.total)?;
        let idle = self.idle.checked_sub(prev.idle)?;
        (total > 0 && idle <= total).then(|| (total - idle) as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_lines_by_key() {
        let t =
            "MemTotal:       16303532 kB\nMemFree:  1 kB\nMemAvailable:   8151766 kB\nBad: x kB\n";
        assert_eq!(meminfo_bytes(t, "MemTotal"), Some(16_303_532 * 1024));
        assert_eq!(meminfo_bytes(t, "MemAvailable"), Some(8_151_766 * 1024));
        // a key is whole: "Mem" is not "MemTotal"
        assert_eq!(meminfo_bytes(t, "Mem"), None);
        assert_eq!(meminfo_bytes(t, "Bad"), None);
        assert_eq!(meminfo_bytes(t, "SwapTotal"), None);
        assert_eq!(meminfo_bytes("Huge: 99999999999999999 kB", "Huge"), None);
        let m = MachineLoad {
            mem_total: Some(100),
            mem_available: Some(30),
            ..MachineLoad::default()
        };
        assert_eq!(m.mem_used(), Some(70));
        assert_eq!(MachineLoad::default().mem_used(), None);
    }

    #[test]
    fn cpu_busy_from_two_proc_stat_samples() {
        let a = CpuTimes::parse("cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            a,
            CpuTimes {
                total: 1000,
                idle: 800
            }
        );
        let b = CpuTimes::parse("cpu  400 0 200 900 100 0 0 0 0 0\n").unwrap();
        // 600 ticks passed, 200 of them idle
        let busy = b.busy_since(&a).unwrap();
        assert!((busy - 400.0 / 600.0).abs() < 1e-9, "{busy}");
        assert_eq!(a.busy_since(&b), None);
        assert_eq!(a.busy_since(&a), None);
        assert_eq!(CpuTimes::parse("cpu0 1 2 3 4\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2 x 4\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2\n"), None);
    }
}
