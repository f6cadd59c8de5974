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
//!   own and every descendant's (the same counters), so it needs nothing.
//!
//! The collector reads the two facts only for the kernel's own root on a
//! real cgroup file system, never for a `--root` subdirectory, a start
//! group, or a fixture tree (`source::collector`).

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
}
