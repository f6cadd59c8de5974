//! memory controller files: memory.stat, memory.events (admin guide 5-2).
//! Single-value files (memory.current, memory.max, ...) use
//! [`super::parse_u64`] and [`super::Limit`].

use super::flat_keyed;

/// The memory.stat fields cgtop shows. Every field is `None` when its line
/// is missing (older kernels lack some).
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
    pub fn parse(s: &str) -> Self {
        let mut m = Self::default();
        for (k, v) in flat_keyed(s) {
            let slot = match k {
                "anon" => &mut m.anon,
                "file" => &mut m.file,
                "kernel" => &mut m.kernel,
                "kernel_stack" => &mut m.kernel_stack,
                "slab" => &mut m.slab,
                "sock" => &mut m.sock,
                "shmem" => &mut m.shmem,
                "file_mapped" => &mut m.file_mapped,
                "file_dirty" => &mut m.file_dirty,
                "file_writeback" => &mut m.file_writeback,
                "pgfault" => &mut m.pgfault,
                "pgmajfault" => &mut m.pgmajfault,
                _ => continue,
            };
            *slot = Some(v);
        }
        m
    }
}

/// memory.events (hierarchical counts; admin guide 5-2-2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoryEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
    pub oom_group_kill: u64,
}

impl MemoryEvents {
    pub fn parse(s: &str) -> Self {
        let mut e = Self::default();
        for (k, v) in flat_keyed(s) {
            match k {
                "low" => e.low = v,
                "high" => e.high = v,
                "max" => e.max = v,
                "oom" => e.oom = v,
                "oom_kill" => e.oom_kill = v,
                "oom_group_kill" => e.oom_group_kill = v,
                _ => {}
            }
        }
        e
    }

    /// Field-wise change from `base`; a counter that went backwards (group
    /// recreated) counts from zero.
    #[must_use]
    pub fn since(&self, base: &Self) -> Self {
        let d = |a: u64, b: u64| if a >= b { a - b } else { a };
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
        assert_eq!((d.high, d.max, d.oom, d.oom_kill), (2, 4, 1, 1));
        // backwards: recreated group
        assert_eq!(a.since(&b).max, 5);
    }
}
