//! The descriptor budget: how many hot files may be kept open (RAM,
//! RLIMIT_NOFILE, `--max-kept-fds`), decided once at start-up, shared by
//! the scanners of one layout (`KeptPool`), and the kept or reopened
//! handle each file gets within it.

use super::changes::Watch;
use super::{Entry, Handle, Scanner};
use crate::model::Errno;
use crate::source::hier::FsError;
use std::path::Path;
use std::sync::Arc;

/// Descriptors the scanner leaves to the rest of the program: the inspection
/// read, /proc, the writer, the terminal, the devices list. Without a
/// reserve, a tree with more hot files than RLIMIT_NOFILE allows would take
/// every descriptor, and then every other open (the reopened hot files
/// included) would fail with EMFILE.
pub const FD_RESERVE: u64 = 256;

/// Kernel memory that one kept, read descriptor of a kernfs file pins: the
/// seq_file buffer (a page, kmalloc-cg-4k, allocated on the first read and
/// kept until close) plus struct file, seq_file and kernfs_open_file.
/// Measured at 4.9 KB on Linux 6.18 (BENCHMARKS.md, "Kernel memory").
pub const KERNEL_BYTES_PER_KEPT: u64 = 5 * 1024;

/// The kept descriptors may pin at most this fraction of RAM (1/256, about
/// 0.4 %): 96 MB on a 24 GB host, which keeps the 5 hot files of 3,800
/// groups; a 64 GB host keeps all of 10,000 groups. The memory is charged
/// to cgtop's own memory cgroup.
pub const KEPT_RAM_SHARE: u64 = 256;

/// The descriptor budget RAM allows (at least 1,024): see
/// [`KEPT_RAM_SHARE`].
pub fn kept_budget_for_memory(mem_total_bytes: u64) -> usize {
    let n = (mem_total_bytes / KEPT_RAM_SHARE / KERNEL_BYTES_PER_KEPT).max(1024);
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// MemTotal from /proc/meminfo, in bytes.
pub(super) fn mem_total() -> Option<u64> {
    meminfo_bytes("MemTotal:")
}

/// SwapTotal from /proc/meminfo, in bytes (0: no swap on the host).
pub fn swap_total() -> Option<u64> {
    meminfo_bytes("SwapTotal:")
}

/// One "Key:   N kB" line of /proc/meminfo, in bytes.
pub(super) fn meminfo_bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    crate::model::host::meminfo_bytes(&text, key.trim_end_matches(':'))
}

/// The descriptor budget, decided once at start-up: the least of
/// `max_kept` (`--max-kept-fds`), what RAM allows
/// ([`kept_budget_for_memory`]) and RLIMIT_NOFILE's soft limit less
/// [`FD_RESERVE`], after raising that limit toward the hard one as far as
/// the budget needs. The one place that raises it; the scanner is given
/// the result as [`ScanConfig::max_kept`].
pub fn fd_budget(max_kept: usize) -> usize {
    let by_memory = mem_total().map_or(usize::MAX, kept_budget_for_memory);
    let max = max_kept.min(by_memory);
    let soft = raise_nofile_limit(max as u64 + FD_RESERVE);
    budget_within(max, soft)
}

/// `max` kept descriptors, no more than `soft_limit` less [`FD_RESERVE`].
pub fn budget_within(max: usize, soft_limit: u64) -> usize {
    max.min(usize::try_from(soft_limit.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX))
}

/// RLIMIT_NOFILE's soft limit now (unlimited: `u64::MAX`).
pub(super) fn nofile_soft_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// Raises RLIMIT_NOFILE's soft limit toward the hard one, no further than
/// `want`, and returns the soft limit in force afterwards.
pub fn raise_nofile_limit(want: u64) -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    let soft = lim.current.unwrap_or(u64::MAX);
    if soft >= want {
        return soft;
    }
    let to = lim.maximum.map_or(want, |hard| hard.min(want));
    if to > soft
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(to),
                maximum: lim.maximum,
            },
        )
        .is_ok()
    {
        return to;
    }
    soft
}

/// One descriptor budget shared by the scanners of several hierarchies
/// (a v1 or hybrid layout): each publishes how many it keeps, and opens
/// more only while the sum is under the budget, so that a hierarchy with
/// many files to keep (cpuacct's three a group) is not held to an even
/// share while another (name=systemd's one) leaves its share unused.
#[derive(Debug, Default)]
pub struct KeptPool {
    slots: Vec<std::sync::atomic::AtomicUsize>,
}

impl KeptPool {
    /// A pool of `n` scanners.
    pub fn new(n: usize) -> Arc<Self> {
        Arc::new(Self {
            slots: (0..n)
                .map(|_| std::sync::atomic::AtomicUsize::new(0))
                .collect(),
        })
    }

    /// Kept by every scanner but `me`.
    pub(super) fn others(&self, me: usize) -> usize {
        use std::sync::atomic::Ordering;
        (self.slots.iter().enumerate())
            .filter(|(i, _)| *i != me)
            .map(|(_, s)| s.load(Ordering::Relaxed))
            .sum()
    }

    /// Slot `me` keeps `kept` descriptors now (a scanner's, or the
    /// exporter's kept files: `Collector::set_export_reading`).
    pub fn publish(&self, me: usize, kept: usize) {
        if let Some(s) = self.slots.get(me) {
            s.store(kept, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

pub(super) fn count_kept(e: &Entry) -> usize {
    e.handles
        .iter()
        .filter(|(_, h)| matches!(h, Handle::Kept(_)))
        .count()
        + usize::from(matches!(e.watch, Watch::Links(..)))
}

/// Out of descriptors (EMFILE, ENFILE).
pub(super) fn is_fd_shortage(e: &FsError) -> bool {
    matches!(e.errno(), Some(Errno::MFILE | Errno::NFILE))
}

impl Scanner {
    /// Room for one more kept descriptor.
    pub(super) fn room(&self) -> bool {
        let others = self.pool.as_ref().map_or(0, |(p, me)| p.others(*me));
        self.kept + others < self.budget
    }

    pub(super) fn publish(&self) {
        if let Some((p, me)) = &self.pool {
            p.publish(*me, self.kept);
        }
    }

    pub(super) fn open_handle(&mut self, file: &Path) -> Handle {
        if !self.room() {
            self.fd_limited = true;
            return Handle::Reopen(None);
        }
        // opened the safe way once (beneath the root, no symlink, a
        // regular file), then read with pread as long as it is kept
        match self.hier.open_read(file) {
            Ok(f) => {
                self.kept += 1;
                // scanners of other hierarchies may be opening theirs at
                // the same time (the first refresh)
                self.publish();
                Handle::Kept(f)
            }
            Err(e) if is_fd_shortage(&e) => {
                self.fd_limited = true;
                Handle::Reopen(None)
            }
            // reopened each time: the error shows on the group
            Err(_) => Handle::Reopen(None),
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
    fn reopen_when_budget_is_zero() {
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_kept: 0,
                ..ScanConfig::default()
            },
        );
        let (g, cost) = s.scan();
        assert_eq!(g.len(), 3);
        assert_eq!(s.kept(), 0);
        assert_eq!(cost.files_kept, 1); // only the start group's cgroup.stat
                                        // a file that goes away alone (controller disabled in the parent)
                                        // leaves the group in place, without that figure
        fs::remove_file(t.path().join("a.slice/memory.current")).unwrap();
        let (g, _) = s.scan();
        assert_eq!(g.len(), 3);
        assert_eq!(g[1].hot.memory_current, None);
        // a group whose directory went away drops out
        fs::remove_dir_all(t.path().join("a.slice/b c:ü")).unwrap();
        let (g, _) = s.scan();
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn small_budget_reopens_the_rest_and_says_so() {
        // kept: root procs + cpu.stat (2), a.slice events, cpu.stat,
        // memory.current, pids.current (4); "b c:ü" (procs, io.stat) is over
        let t = tree();
        let mut s = Scanner::new(
            t.path().to_path_buf(),
            ScanConfig {
                max_kept: 6,
                ..ScanConfig::default()
            },
        );
        let (g, cost) = s.scan();
        assert_eq!(s.kept(), 6);
        assert!(cost.fd_limited, "files over the budget are reopened");
        // every figure is still there, read with open/read/close
        assert_eq!(g[1].hot.memory_current, Some(4096));
        assert_eq!(g[2].hot.io.as_ref().unwrap().total().wbytes, Some(20));
        assert_eq!(g[2].pids(), Some(2));
        // a controller goes away from a.slice: the next walk gives the
        // reopened files the freed descriptors, and the flag clears
        fs::remove_file(t.path().join("a.slice/memory.current")).unwrap();
        fs::remove_file(t.path().join("a.slice/cpu.stat")).unwrap();
        s.invalidate();
        let (g, cost) = s.scan();
        assert_eq!(g.len(), 3);
        assert!(!cost.fd_limited);
        assert_eq!(s.kept(), 6);
        assert_eq!(g[2].pids(), Some(2));
    }

    #[test]
    fn scanners_opening_side_by_side_stay_within_their_shared_budget() {
        // the files a priming walk left unopened are opened by every
        // hierarchy's scanner at the same time (`Collector::read_levels`):
        // each counts what the others keep as they open theirs, so the
        // sum passes the budget by at most one a scanner (an open between
        // another's test and its count), never into the reserve
        const GROUPS: usize = 100;
        const BUDGET: usize = 300;
        let t = tempfile::tempdir().unwrap();
        for g in 0..GROUPS {
            mk(
                t.path(),
                &format!("g{g}.slice"),
                &[
                    ("cgroup.procs", ""),
                    ("cgroup.events", "populated 0\nfrozen 0\n"),
                    ("cpu.stat", "usage_usec 1\n"),
                    ("memory.current", "4096\n"),
                    ("pids.current", "1\n"),
                ],
            );
        }
        // a few tries: before each scanner counted the others' opens as
        // they came, any overlap of the two passed the budget
        for _ in 0..5 {
            let pool = KeptPool::new(2);
            let scanners: Vec<Scanner> = (0..2)
                .map(|me| {
                    let mut s = Scanner::new(
                        t.path().to_path_buf(),
                        ScanConfig {
                            max_kept: BUDGET,
                            ..ScanConfig::default()
                        },
                    );
                    s.share_budget(Arc::clone(&pool), me);
                    // the counters kept (a third of the budget each
                    // scanner), the other files left for `read_levels`
                    s.set_priming(true);
                    s.scan();
                    s.set_priming(false);
                    s
                })
                .collect();
            let start = Arc::new(std::sync::Barrier::new(2));
            let kept: Vec<usize> = scanners
                .into_iter()
                .map(|mut s| {
                    let start = Arc::clone(&start);
                    std::thread::spawn(move || {
                        start.wait();
                        s.read_levels();
                        s.kept()
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect();
            let sum: usize = kept.iter().sum();
            assert!(
                sum <= BUDGET + 1,
                "{kept:?} kept, {sum} in all, budget {BUDGET}"
            );
            assert!(sum >= BUDGET, "the budget filled: {kept:?}");
        }
    }

    #[test]
    fn memory_budget_is_a_share_of_ram() {
        const GIB: u64 = 1 << 30;
        assert_eq!(kept_budget_for_memory(24 * GIB), 19_660);
        assert_eq!(kept_budget_for_memory(64 * GIB), 52_428);
        assert_eq!(kept_budget_for_memory(GIB / 2), 1_024, "never below 1,024");
    }

    #[test]
    fn the_budget_stays_below_the_limit() {
        assert_eq!(budget_within(65_536, 1_024), 1_024 - 256);
        assert_eq!(budget_within(100, 1_024), 100);
        assert_eq!(
            budget_within(65_536, 100),
            0,
            "a limit below the reserve keeps none"
        );
        assert_eq!(budget_within(65_536, u64::MAX), 65_536, "unlimited");
    }

    #[test]
    fn a_scanner_never_changes_the_descriptor_limit() {
        use rustix::process::{getrlimit, Resource};
        let before = getrlimit(Resource::Nofile);
        let t = tree();
        let mut s = Scanner::new(t.path().to_path_buf(), ScanConfig::default());
        s.scan();
        let after = getrlimit(Resource::Nofile);
        assert_eq!(
            (before.current, before.maximum),
            (after.current, after.maximum)
        );
        assert!(s.budget as u64 <= nofile_soft_limit().saturating_sub(FD_RESERVE));
    }
}
