//! PURE: facts about the machine cgtop runs on, gathered once at start by
//! the edge (`run::host_info` reads uname and the online CPUs) and shown
//! by every output: the TUI's header, `-b`'s first line, JSON's `host`,
//! `kernel` and `ncpus`; and the host's swap, for pre-flight. And
//! [`MachineLoad`], the machine's memory and pressure, which the collector
//! reads on every refresh for the TUI header's meters.

/// Facts about the machine, gathered once at start (at the edge).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub ncpus: usize,
    /// SwapTotal from /proc/meminfo, bytes; `None` when unknown. Pre-flight
    /// (`model::preflight`) counts on no swap where it is 0: lowering
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
    /// /proc/pressure/cpu, memory and io.
    pub cpu_pressure: Option<crate::cgroupfs::Pressure>,
    pub memory_pressure: Option<crate::cgroupfs::Pressure>,
    pub io_pressure: Option<crate::cgroupfs::Pressure>,
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
}
