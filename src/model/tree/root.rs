//! The kernel's root group, whose files do not count what its
//! descendants' count: how its row is completed so that it never shows
//! less than the groups it holds. PURE.
//!
//! Every group below the root is charged as it goes: its counter is the
//! sum of what its own tasks and all its descendants were charged, so a
//! parent is never below the sum of its children. The root is charged for
//! nothing (the kernel skips it on every charge), and its files either
//! are absent or say something else:
//!
//! - **Memory, cgroup v1.** The root's `memory.usage_in_bytes` is not a
//!   counter but the machine's file and mapped anonymous pages
//!   (`mem_cgroup_usage`: `NR_FILE_PAGES + NR_ANON_MAPPED` on recent
//!   kernels, 6.18 here; earlier ones the same pages from the root's
//!   recursive statistics; checked against /proc/vmstat here). A
//!   child's usage is its page counter, which also holds the kernel
//!   memory charged to it (slab, stacks, page tables: v1 charges kmem to
//!   `memory` and to `memory.kmem`). A group holding 470 MB of dentries
//!   and inodes beside its page cache read 13.3 GB under a root of
//!   12.9 GB on this host. The root's `memory.kmem.usage_in_bytes` is a
//!   real counter (only `_MEM` and `_MEMSWAP` read the global state), the
//!   kernel memory of every group below: added to the root's usage, the
//!   root means what a child means, user pages and charged kernel memory
//!   ([`RootFacts::kernel_memory`]). The root's own kernel memory (not
//!   charged anywhere) is in neither.
//! - **PIDs.** `pids.current` is on no root (`CFTYPE_NOT_ON_ROOT`, v1 and
//!   v2), so the row fell back to the root's cgroup.procs: the processes
//!   in the root itself, while each child showed the tasks (threads) of
//!   its whole subtree. Where the groups below count theirs (a v1 pids
//!   hierarchy; cgroup2 with pids in the root's cgroup.subtree_control),
//!   the root shows every task of the machine instead: /proc/loadavg's count of
//!   tasks (`nr_threads`, kernel threads included), which is what
//!   `pids.current` would count at the root ([`RootFacts::tasks`]).
//! - **Memory, cgroup2.** The root has no `memory.current`: the row shows
//!   none, and the header's meter shows the machine's.
//! - **IO.** v1 `blkio.throttle.*_recursive` at the root is the sum of its
//!   own and every descendant's (the same counters), so it needs nothing
//!   added. But since Linux 6.10 (a3166c51702b, "blk-throttle: delay
//!   initialization until configuration") blk-throttle is set up on a
//!   disk's queue only by the first rule written for that disk
//!   (`tg_set_conf` -> `blk_throtl_init`), and `blk_should_throtl`, where
//!   v1 counts a bio into io_service_bytes / io_serviced, returns before
//!   counting while it is not: such a disk's IO is counted in no group,
//!   and its line is in no group's file, the root's included (the files
//!   print only the queues the policy is enabled on). Earlier kernels set
//!   blk-throttle up on every disk, whose root line then is always there.
//!   So a disk with no line in the root's file is not counted
//!   ([`uncounted_disks`]), and while one does IO (its /proc/diskstats
//!   counts moved since the last refresh: [`busy_uncounted`]) every v1
//!   group's READ/s and WRITE/s are unknown, not 0
//!   ([`mark_io_uncounted`]). Writing
//!   `MAJ:MIN 0` (no limit) to any group's blkio.throttle.read_bps_device
//!   starts the count, and leaves no rule (checked on 6.18 here).
//!
//! The collector reads the two facts only for the kernel's own root on a
//! real cgroup file system, never for a `--root` subdirectory, a start
//! group, or a fixture tree (`source::collector`).

use crate::cgroupfs::io::{DevId, IoStatDevice};
use crate::cgroupfs::IoStat;
use crate::model::tree::snapshot::HierKind;
use crate::model::GroupSample;

/// What the collector read for the root this refresh.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RootFacts {
    /// The root's v1 `memory.kmem.usage_in_bytes`: the kernel memory
    /// charged to every group below it.
    pub kernel_memory: Option<u64>,
    /// Every task of the machine (/proc/loadavg's fourth field's total).
    pub tasks: Option<u64>,
}

/// Completes the root (`groups[0]`, the kernel's root group) with
/// `facts`; nothing where the first group is not the root. The kernel
/// memory is added to the v1 usage only (cgroup2's root has no figure to
/// add it to); the swap in use is left as it was (memsw less usage, both
/// of the same global pages).
pub fn complete(groups: &mut [GroupSample], facts: RootFacts) {
    let Some(root) = groups.first_mut().filter(|g| g.path.is_root()) else {
        return;
    };
    if let (Some(usage), Some(kmem)) = (root.hot.memory_current, facts.kernel_memory) {
        root.hot.memory_current = Some(usage.saturating_add(kmem));
        root.hot.v1.sources.root_kernel_memory = true;
    }
    if root.hot.pids_current.is_none() {
        if let Some(n) = facts.tasks {
            root.hot.pids_current = Some(n);
            root.hot.v1.sources.root_machine_tasks = true;
        }
    }
}

/// The whole disks that did IO since boot and whose IO v1 blkio does not
/// count, each with its count of IOs done (reads + writes completed),
/// by number: listed in /proc/diskstats (`diskstats`, the kernel's text)
/// with IO done, a disk whose IO only its own line can count (`is_disk`,
/// given its number and name: asked only of such devices; its name is in
/// /sys/block, so not a
/// partition, whose bio blk-throttle counts on its disk's queue and
/// line; and it is not stacked on other devices, as device-mapper and
/// md are: their bios go on to the disks below, counted there for the
/// same group), and absent from the root group's
/// `blkio.throttle.io_service_bytes_recursive` (`root_io`, as parsed).
/// Each disk found is one blkio takes a rule for (blkio refuses a
/// partition's number), so its number is the fix's.
pub fn uncounted_disks(
    root_io: &IoStat,
    diskstats: &str,
    mut is_disk: impl FnMut(DevId, &[u8]) -> bool,
) -> Vec<(DevId, u64)> {
    let mut out = Vec::new();
    for line in diskstats.lines() {
        // major minor name reads merged sectors ms writes ...
        let f: Vec<&str> = line.split_ascii_whitespace().take(8).collect();
        let [major, minor, name, reads, _, _, _, writes] = f[..] else {
            continue;
        };
        let (Ok(major), Ok(minor), Ok(reads), Ok(writes)) = (
            major.parse(),
            minor.parse(),
            reads.parse::<u64>(),
            writes.parse::<u64>(),
        ) else {
            continue;
        };
        let dev = DevId { major, minor };
        let ios = reads.saturating_add(writes);
        if ios == 0
            || root_io.get(IoStatDevice::Dev(dev)).is_some()
            || !is_disk(dev, name.as_bytes())
        {
            continue;
        }
        // a hostile or huge text: bounded
        if out.len() < 4096 {
            out.push((dev, ios));
        }
    }
    out.sort_unstable();
    out
}

/// The first disk (by number) of `now` ([`uncounted_disks`]) that did IO
/// since `prev`, the last refresh's list (`None` on the first refresh:
/// there is no interval yet): its IO in the interval is in no group's
/// figure. A disk not counted that did no IO in the interval leaves every
/// figure true (a detached loop device keeps its counts in
/// /proc/diskstats, and must not blank the host's IO forever).
pub fn busy_uncounted(prev: Option<&[(DevId, u64)]>, now: &[(DevId, u64)]) -> Option<DevId> {
    let prev = prev?;
    now.iter()
        .find(|(d, n)| {
            prev.binary_search_by_key(d, |(p, _)| *p)
                .map_or(true, |i| prev[i].1 != *n)
        })
        .map(|(d, _)| *d)
}

/// Marks every group whose IO figures came from a v1 blkio hierarchy with
/// the disk it does not count and that did IO (`busy_uncounted`): their READ/s and
/// WRITE/s are then unknown, each counted disk's own figures kept.
pub fn mark_io_uncounted(groups: &mut [GroupSample], disk: DevId) {
    for g in groups {
        if g.hot.v1.sources.io == Some(HierKind::V1) && g.hot.io.is_some() {
            g.hot.v1.sources.io_uncounted = Some(disk);
        }
    }
}

/// The tasks of the machine from /proc/loadavg's text
/// ("0.20 0.18 0.12 1/80 11206": runnable/total, the total); `None` when
/// the field is not there or not a number.
pub fn loadavg_tasks(text: &str) -> Option<u64> {
    let field = text.split_ascii_whitespace().nth(3)?;
    let (_, total) = field.split_once('/')?;
    total.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::GroupPath;

    fn group(path: &str, memory: Option<u64>, pids: Option<u64>) -> GroupSample {
        let mut g = GroupSample::new(GroupPath::new(path), 1);
        g.hot.memory_current = memory;
        g.hot.pids_current = pids;
        g
    }

    /// ```text
    /// /            usage 12.9G (global pages), kmem 0.5G below
    /// └─ a         13.3G: its pages and its 0.5G of kernel memory
    /// ```
    #[test]
    fn the_root_holds_the_kernel_memory_of_the_groups_below() {
        let (root_usage, kmem, a) = (12_900u64 << 20, 500u64 << 20, 13_300u64 << 20);
        let mut g = vec![
            group("/", Some(root_usage), None),
            group("a", Some(a), None),
        ];
        g[0].hot.swap_current = Some(7);
        complete(
            &mut g,
            RootFacts {
                kernel_memory: Some(kmem),
                tasks: None,
            },
        );
        let root = g[0].hot.memory_current.unwrap();
        assert_eq!(root, root_usage + kmem);
        assert!(root >= a, "the root below its child: {root} < {a}");
        assert!(g[0].hot.v1.sources.root_kernel_memory);
        assert_eq!(g[0].hot.swap_current, Some(7), "swap as it was");
        assert_eq!(g[1].hot.memory_current, Some(a), "a child as read");
    }

    #[test]
    fn no_memory_figure_is_made_where_the_root_has_none() {
        // cgroup2's root: no memory.current, nothing to add kmem to
        let mut g = vec![group("/", None, None), group("a", Some(5), None)];
        complete(
            &mut g,
            RootFacts {
                kernel_memory: Some(9),
                tasks: None,
            },
        );
        assert_eq!(g[0].hot.memory_current, None);
        assert!(!g[0].hot.v1.sources.root_kernel_memory);
    }

    #[test]
    fn only_the_root_is_completed() {
        // a start group's scan: its first group is not the root
        let mut g = vec![group("a", Some(5), None), group("a/b", Some(3), Some(1))];
        complete(
            &mut g,
            RootFacts {
                kernel_memory: Some(9),
                tasks: Some(100),
            },
        );
        assert_eq!(g[0].hot.memory_current, Some(5));
        assert_eq!(g[0].hot.pids_current, None);
        assert!(g[0].hot.v1.sources.is_empty());
    }

    /// ```text
    /// /            pids.current absent: cgroup.procs says 2
    /// ├─ a         pids.current 300 (a process's threads)
    /// └─ b         pids.current 4
    /// ```
    #[test]
    fn the_root_counts_every_task_where_groups_below_count_theirs() {
        let mut g = vec![
            group("/", None, None),
            group("a", None, Some(300)),
            group("b", None, Some(4)),
        ];
        g[0].hot.nr_procs = Some(2);
        complete(
            &mut g,
            RootFacts {
                kernel_memory: None,
                tasks: Some(420),
            },
        );
        assert_eq!(g[0].pids(), Some(420));
        assert!(g[0].hot.v1.sources.root_machine_tasks);
    }

    #[test]
    fn a_root_with_pids_current_keeps_it() {
        let mut h = vec![group("/", None, Some(9)), group("a", None, Some(3))];
        complete(
            &mut h,
            RootFacts {
                kernel_memory: None,
                tasks: Some(420),
            },
        );
        assert_eq!(h[0].pids(), Some(9));
        assert!(!h[0].hot.v1.sources.root_machine_tasks);
    }

    #[test]
    fn loadavg_tasks_is_the_total_of_the_fourth_field() {
        assert_eq!(loadavg_tasks("7.48 3.02 1.31 14/178 32132\n"), Some(178));
        assert_eq!(loadavg_tasks("0.00 0.00 0.00 1/1 1"), Some(1));
        assert_eq!(loadavg_tasks("0.00 0.00 0.00 178 1"), None);
        assert_eq!(loadavg_tasks("0.00 0.00 0.00 1/x 1"), None);
        assert_eq!(loadavg_tasks("0.00 0.00"), None);
        assert_eq!(loadavg_tasks(""), None);
        assert_eq!(loadavg_tasks("0 0 0 1/99999999999999999999999 1"), None);
    }

    /// This host's /proc/diskstats (Linux 6.18), with a partition added:
    /// vda read 17 GB since boot; the loop devices and zram0 did no IO.
    const DISKSTATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   7       1 loop1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 402817 10446 17497162 615972 151619 465513 99164696 710411 0 94600 1392440 256259 62 48612376 65734 252 322
 254       1 vda1 402100 10446 17490000 615000 151619 465513 99164696 710411 0 94600 1392440 256259 62 48612376 65734 252 322
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
";

    fn blkio(text: &str) -> IoStat {
        let mut io = IoStat::default();
        crate::cgroupfs::v1::blkio_into(text, crate::cgroupfs::v1::BlkioKind::Bytes, &mut io);
        io
    }

    fn whole(name: &[u8]) -> bool {
        [&b"loop0"[..], b"loop1", b"vda", b"zram0"].contains(&name)
    }

    /// dm-0 on vda, both busy, neither with a line: vda is the disk not
    /// counted (a rule on it counts dm-0's IO too); dm-0, stacked, is
    /// not asked of (`is_disk` says no: the rater's `Stacking`).
    #[test]
    fn a_stacked_device_is_left_to_the_disks_below_it() {
        let stats =
            format!("{DISKSTATS} 252       0 dm-0 9000 0 72000 10 5 0 40 1 0 10 11 0 0 0 0 0 0\n");
        let root = blkio("Total 0\n");
        let found = uncounted_disks(&root, &stats, |_, n| n != b"dm-0" && whole(n));
        assert_eq!(found, vec![(VDA, 402_817 + 151_619)]);
        // vda counted (its line there), dm-0's IO with it: nothing
        let root = blkio(include_str!(
            "../../../tests/fixtures/v1/v1scan/blkio.throttle.io_service_bytes_recursive"
        ));
        assert_eq!(
            uncounted_disks(&root, &stats, |_, n| n != b"dm-0" && whole(n)),
            vec![]
        );
    }

    const VDA: DevId = DevId {
        major: 254,
        minor: 0,
    };

    #[test]
    fn a_disk_that_did_io_and_is_not_in_the_roots_blkio_file_is_uncounted() {
        // the root's io_service_bytes_recursive on this host before any
        // rule: no device line, only the total
        let root = blkio("Total 0\n");
        assert_eq!(
            uncounted_disks(&root, DISKSTATS, |_, n| whole(n)),
            vec![(VDA, 402_817 + 151_619)]
        );
    }

    #[test]
    fn a_disk_in_the_roots_blkio_file_is_counted_and_so_are_its_partitions() {
        // the root's text once a rule was set on vda (tests/fixtures/v1/v1scan)
        let root = blkio(include_str!(
            "../../../tests/fixtures/v1/v1scan/blkio.throttle.io_service_bytes_recursive"
        ));
        let mut asked = Vec::new();
        let found = uncounted_disks(&root, DISKSTATS, |_, n| {
            asked.push(n.to_vec());
            whole(n)
        });
        assert_eq!(found, vec![]);
        // vda1 (no line of its own: its IO is on vda's) is not a disk;
        // no idle device is asked about
        assert_eq!(asked, vec![b"vda1".to_vec()]);
    }

    #[test]
    fn a_disk_that_never_did_io_is_not_uncounted() {
        let root = blkio("Total 0\n");
        let idle: String = DISKSTATS
            .lines()
            .filter(|l| !l.contains("vda"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(uncounted_disks(&root, &idle, |_, _| true), vec![]);
        // hostile lines: short, not numbers
        let bad = "7 0\nx y loop0 1 0 0 0 1\n254 0 vda z 0 0 0 z\n";
        assert_eq!(uncounted_disks(&root, bad, |_, _| true), vec![]);
    }

    #[test]
    fn only_a_disk_not_counted_that_did_io_in_the_interval_makes_io_unknown() {
        let loop1 = DevId { major: 7, minor: 1 };
        let before = [(loop1, 16), (VDA, 500)];
        // the first refresh: no interval
        assert_eq!(busy_uncounted(None, &before), None);
        // a detached loop device keeps its counts: nothing moved
        assert_eq!(busy_uncounted(Some(&before), &before), None);
        assert_eq!(
            busy_uncounted(Some(&before), &[(loop1, 16), (VDA, 530)]),
            Some(VDA)
        );
        // a disk that became uncounted-and-busy since (a new loop device)
        assert_eq!(busy_uncounted(Some(&before[..1]), &before), Some(VDA));
        // one counted since (a rule set on it): gone from the list
        assert_eq!(busy_uncounted(Some(&before), &before[..1]), None);
    }

    #[test]
    fn only_groups_with_v1_io_are_marked() {
        let mut g = vec![
            group("/", None, None),
            group("a", None, None),
            group("b", None, None),
        ];
        for x in &mut g[..2] {
            x.hot.v1.sources.io = Some(HierKind::V1);
            x.hot.io = Some(IoStat::default());
        }
        g[2].hot.v1.sources.io = Some(HierKind::V2);
        g[2].hot.io = Some(IoStat::default());
        let d = DevId {
            major: 254,
            minor: 0,
        };
        mark_io_uncounted(&mut g, d);
        let marked: Vec<_> = g.iter().map(|x| x.hot.v1.sources.io_uncounted).collect();
        assert_eq!(marked, vec![Some(d), Some(d), None]);
    }
}
