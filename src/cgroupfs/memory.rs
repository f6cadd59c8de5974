//! memory controller files: memory.stat, memory.events (admin guide 5-2).
//! Single-value files (memory.current, memory.max, ...) use
//! [`super::parse_u64`] and [`super::Limit`].

use super::flat;

/// The memory.stat fields cgtop shows. Every field is `None` when its line
/// is missing (older kernels lack some). The other 30-50 keys are kept by
/// [`super::Keyed`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryStat {
    pub anon: Option<u64>,
    pub file: Option<u64>,
    pub kernel: Option<u64>,
    pub kernel_stack: Option<u64>,
    pub slab: Option<u64>,
    pub sock: Option<u64>,
    pub shmem: Option<u64>,
    pub file_mapped: Option<u64>,
    pub file_dirty: Option<u64>,
    pub file_writeback: Option<u64>,
    pub pgfault: Option<u64>,
    pub pgmajfault: Option<u64>,
}

impl MemoryStat {
    /// In the kernel's order (`memory_stat_format`), which
    /// [`flat::values`] tries first.
    const KEYS: [&'static str; 12] = [
        "anon",
        "file",
        "kernel",
        "kernel_stack",
        "sock",
        "shmem",
        "file_mapped",
        "file_dirty",
        "file_writeback",
        "slab",
        "pgfault",
        "pgmajfault",
    ];

    pub fn parse(s: &str) -> Self {
        let [anon, file, kernel, kernel_stack, sock, shmem, file_mapped, file_dirty, file_writeback, slab, pgfault, pgmajfault] =
            flat::values(s, &Self::KEYS);
        Self {
            anon,
            file,
            kernel,
            kernel_stack,
            slab,
            sock,
            shmem,
            file_mapped,
            file_dirty,
            file_writeback,
            pgfault,
            pgmajfault,
        }
    }
}

/// memory.events (hierarchical counts; admin guide 5-2-2). A key the file
/// does not have is `None`: `oom_group_kill` came in 5.13, older kernels
/// print only the first five.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEvents {
    pub low: Option<u64>,
    pub high: Option<u64>,
    pub max: Option<u64>,
    pub oom: Option<u64>,
    pub oom_kill: Option<u64>,
    pub oom_group_kill: Option<u64>,
}

impl MemoryEvents {
    /// In the kernel's order.
    const KEYS: [&'static str; 6] = ["low", "high", "max", "oom", "oom_kill", "oom_group_kill"];

    pub fn parse(s: &str) -> Self {
        let [low, high, max, oom, oom_kill, oom_group_kill] = flat::values(s, &Self::KEYS);
        Self {
            low,
            high,
            max,
            oom,
            oom_kill,
            oom_group_kill,
        }
    }

    /// Field-wise change from `base`; a counter that went backwards (group
    /// recreated) counts from zero, one missing from `base` too. A key that
    /// `self` lacks stays `None`.
    #[must_use]
    pub fn since(&self, base: &Self) -> Self {
        let d = |a: Option<u64>, b: Option<u64>| {
            a.map(|a| match b {
                Some(b) if a >= b => a - b,
                _ => a,
            })
        };
        Self {
            low: d(self.low, base.low),
            high: d(self.high, base.high),
            max: d(self.max, base.max),
            oom: d(self.oom, base.oom),
            oom_kill: d(self.oom_kill, base.oom_kill),
            oom_group_kill: d(self.oom_group_kill, base.oom_group_kill),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stat_fields() {
        let m = MemoryStat::parse("anon 13766656\nfile 85843968\nkernel 9166848\nshmem 20738048\nfile_dirty 4096\nfile_writeback 0\nweird line here\n");
        assert_eq!(m.anon, Some(13_766_656));
        assert_eq!(m.file_dirty, Some(4096));
        assert_eq!(m.file_writeback, Some(0));
        assert_eq!(m.sock, None);
    }

    #[test]
    fn memory_events_since() {
        let a = MemoryEvents::parse("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n");
        let b = MemoryEvents::parse("low 0\nhigh 2\nmax 9\noom 2\noom_kill 2\noom_group_kill 0\n");
        let d = b.since(&a);
        assert_eq!(
            (d.high, d.max, d.oom, d.oom_kill),
            (Some(2), Some(4), Some(1), Some(1))
        );
        // backwards: recreated group
        assert_eq!(a.since(&b).max, Some(5));
    }

    #[test]
    fn memory_events_absent_key_is_none() {
        // a kernel before 5.13 prints no oom_group_kill line
        let old = "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n";
        let e = MemoryEvents::parse(old);
        assert_eq!(e.oom_group_kill, None);
        assert_eq!(e.max, Some(5));
        let j = serde_json::to_value(e).unwrap();
        assert!(j["oom_group_kill"].is_null(), "{j}");
        assert_eq!(j["oom_kill"], 1);
        assert_eq!(e.since(&e).oom_group_kill, None);
        assert_eq!(e.since(&e).max, Some(0));
        // no baseline: the whole count
        assert_eq!(e.since(&MemoryEvents::default()).max, Some(5));
    }
}
