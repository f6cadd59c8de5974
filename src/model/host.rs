//! PURE: facts about the machine cgtop runs on, gathered once at start by
//! the edge (`run::host_info` reads uname and the online CPUs) and shown
//! by every output: the TUI's header, `-b`'s first line, JSON's `host`,
//! `kernel` and `ncpus`.

/// Facts about the machine, gathered once at start (at the edge).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub ncpus: usize,
}
