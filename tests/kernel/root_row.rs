//! The root row on this hybrid host's real kernel: never less than the
//! groups it holds (`model::tree::root`). A group of the test's own,
//! `cgtop-test-<pid>-<n>-rootrow` in v1 memory, pids and blkio (and
//! cgroup2), holds a process with 300 MB of anonymous memory, 100 MB of
//! page cache, 30,000 files' inodes and dentries (kernel memory, which a
//! v1 child's memory.usage_in_bytes counts and the root's does not) and
//! 250 threads (which pids.current counts; the root has no pids.current
//! and its cgroup.procs lists only the root's own processes). The
//! collector on the discovered layout, from the root, must show the root
//! at least at the sum of its children's memory, tasks and IO counters.
//!
//! Skipped (with a line saying so) where not root, without v1 memory,
//! pids and blkio hierarchies or memory.kmem.usage_in_bytes, or without
//! python3. The group and the workload are removed on drop, also after a
//! failed assertion; only the test's own processes are killed.

use crate::common::sandbox_v1::V1Sandbox;
use crate::common::{collector_for, options};
use cgtop::model::GroupSample;
use std::io::BufRead as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// What reads a few milliseconds apart may differ by on a busy host:
/// the groups' memory is read after the root's, while other groups grow,
/// and each CPU holds up to 64 pages charged ahead (the kernel's
/// MEMCG_CHARGE_BATCH).
const MEMORY_SLACK: u64 = 32 << 20;
/// Tasks started between the groups' reads and /proc/loadavg's.
const TASKS_SLACK: u64 = 32;

/// The groups directly below the root.
fn top_level(groups: &[GroupSample]) -> impl Iterator<Item = &GroupSample> {
    groups
        .iter()
        .filter(|g| !g.path.is_root() && g.path.components().count() == 1)
}

/// Every device's read and written bytes of a group's IO counters.
fn io_bytes(g: &GroupSample) -> u64 {
    g.hot.io.as_ref().map_or(0, |io| {
        io.0.iter()
            .map(|(_, d)| d.rbytes.unwrap_or(0) + d.wbytes.unwrap_or(0))
            .sum()
    })
}

const WORKLOAD: &str = r#"
import os, sys, threading, time
d = sys.argv[1]
for i in range(250):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
for i in range(30000):
    open(os.path.join(d, "k%d" % i), "w").close()
with open(os.path.join(d, "cache"), "wb") as f:
    f.write(b"c" * (100 << 20))
    f.flush()
    os.fsync(f.fileno())
a = b"a" * (300 << 20)
print("ready", flush=True)
time.sleep(600)
"#;

#[test]
fn the_root_row_is_never_below_the_groups_it_holds() {
    let base = Path::new("/sys/fs/cgroup/memory");
    if !base.join("memory.kmem.usage_in_bytes").exists() {
        println!("skipped: no v1 memory hierarchy with memory.kmem.usage_in_bytes");
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        println!("skipped: no python3 for the workload");
        return;
    }
    let Some(mut sb) = V1Sandbox::or_skip("rootrow", &["memory", "pids", "blkio"]) else {
        return;
    };
    let files = tempfile::Builder::new()
        .prefix(&format!("{}-files", sb.rel))
        .tempdir()
        .unwrap();
    let g = sb.path("");
    let dir = files.path().to_str().unwrap().to_owned();
    let pid = sb.spawn_in(&g, &["python3", "-c", WORKLOAD, &dir]);
    let out = sb.child(pid).stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(out).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "the workload did not start");
    let kmem = sb.read_u64("memory", &g, "memory.kmem.usage_in_bytes");
    let usage = sb.read_u64("memory", &g, "memory.usage_in_bytes");
    println!("the test's group: usage {usage}, of it kernel memory {kmem}");
    assert!(usage >= 400 << 20, "300 MB anon + 100 MB cache: {usage}");

    let (_, mut c) = collector_for(&options(), false);
    c.set_cpu_ceiling(None);
    let start = Instant::now();
    c.refresh_timed(start);
    let r = c.refresh_timed(start);
    let groups = &r.snapshot.groups;
    let root = &groups[0];
    assert!(root.path.is_root());

    // memory: the root against the sum of the groups directly below
    let shown = root.hot.memory_current.expect("the root's memory");
    let below: u64 = top_level(groups).filter_map(|g| g.hot.memory_current).sum();
    let raw: u64 = std::fs::read_to_string(base.join("memory.usage_in_bytes"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    println!("root {shown} (its memory.usage_in_bytes now {raw}), groups below {below}");
    assert!(
        shown + MEMORY_SLACK >= below,
        "the root {shown} below the groups it holds {below}"
    );
    assert!(
        root.hot.v1.sources.root_kernel_memory,
        "kernel memory added"
    );
    let mine = r.snapshot.find(&g).expect("the test's group");
    let mine_mem = mine.hot.memory_current.unwrap();
    assert!(
        mine_mem.abs_diff(usage) < 16 << 20,
        "the group as the kernel counts it: {mine_mem} vs {usage}"
    );

    // tasks: the root against the groups that count theirs (pids.current:
    // disjoint subtrees of the pids hierarchy)
    let tasks = root.pids().expect("the root's PIDS");
    let counted: u64 = top_level(groups).filter_map(|g| g.hot.pids_current).sum();
    println!("root {tasks} tasks, groups below {counted}");
    assert!(
        mine.hot.pids_current.unwrap_or(0) >= 251,
        "the workload's threads: {:?}",
        mine.hot.pids_current
    );
    assert!(
        tasks + TASKS_SLACK >= counted,
        "the root's {tasks} tasks below the groups' {counted}"
    );
    assert!(
        root.hot.v1.sources.root_machine_tasks,
        "the machine's tasks"
    );

    // IO: blkio's _recursive counters hold the root's own and every
    // group's below (zero everywhere until a throttle rule was set on a
    // device since boot: the kernel counts nothing before)
    let io_root = io_bytes(root);
    let io_below: u64 = top_level(groups).map(io_bytes).sum();
    println!("IO: root {io_root} bytes, groups below {io_below}");
    assert!(io_root >= io_below, "IO: root {io_root} < {io_below}");
    drop(sb);
    drop(files);
}
