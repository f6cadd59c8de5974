//! PURE: facts about the machine cgtop runs on, gathered once at start by
//! the edge (`run::host_info` reads uname and the online CPUs) and shown
//! by every output: the TUI's header, `-b`'s first line, JSON's `host`,
//! `kernel` and `ncpus`; and the host's swap, for pre-flight.

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
