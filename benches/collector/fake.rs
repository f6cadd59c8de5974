//! A cgroupfs-like tree of N groups, built on tmpfs and removed on drop.
//!
//! The shape follows what big hosts have: many `system.slice/*.service`,
//! Kubernetes pods (a pod slice with two container scopes each), desktop
//! app scopes under `user@1000.service`, and deep chains of nested groups
//! under `machine.slice`. Every group has the eight files cgtop reads or
//! checks with realistic text, and the other interface files of a pure-v2
//! group with cpu, io, memory and pids enabled as empty files, so that
//! directory listings are as long as the kernel's (about 50 entries).
//!
//! tmpfs is not kernfs: reading a file copies page-cache text instead of
//! generating it with a seq_file, and a removed file's descriptor keeps
//! reading instead of failing with ENODEV. The ratios measured here are
//! therefore a lower bound on the kernel's per-file cost.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The group whose every file has content: the benchmark inspects it, as the
/// selection in the UI would be.
pub const INSPECTED: &str = "init.scope";

/// Interface files of a non-root pure-v2 group (cpu, io, memory, pids on)
/// that cgtop does not read on every refresh: created empty.
pub const OTHER_FILES: &[&str] = &[
    "cgroup.controllers",
    "cgroup.subtree_control",
    "cgroup.threads",
    "cgroup.freeze",
    "cgroup.kill",
    "cgroup.max.depth",
    "cgroup.max.descendants",
    "cgroup.pressure",
    "cpu.max",
    "cpu.max.burst",
    "cpu.weight",
    "cpu.weight.nice",
    "cpu.idle",
    "cpu.pressure",
    "cpu.stat.local",
    "cpu.uclamp.min",
    "cpu.uclamp.max",
    "io.max",
    "io.weight",
    "io.latency",
    "io.pressure",
    "memory.min",
    "memory.low",
    "memory.high",
    "memory.max",
    "memory.peak",
    "memory.stat",
    "memory.events",
    "memory.events.local",
    "memory.swap.current",
    "memory.swap.max",
    "memory.swap.peak",
    "memory.swap.events",
    "memory.zswap.current",
    "memory.zswap.max",
    "memory.oom.group",
    "memory.pressure",
    "memory.reclaim",
    "memory.numa_stat",
    "pids.max",
    "pids.events",
    "pids.peak",
];

/// A tmpfs directory holding the tree; removed when dropped (also when
/// the benchmark fails or is interrupted, since errors unwind to main).
pub struct TempTree {
    pub dir: PathBuf,
}

impl Drop for TempTree {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.dir) {
            eprintln!("warning: could not remove {}: {e}", self.dir.display());
        }
    }
}

const TMPFS_MAGIC: i128 = 0x0102_1994;

/// /dev/shm when it is tmpfs, else the temp dir (with a warning: a disk
/// file system is further from kernfs than tmpfs is).
pub fn tmpfs_base() -> PathBuf {
    for cand in [PathBuf::from("/dev/shm"), std::env::temp_dir()] {
        if rustix::fs::statfs(&cand).is_ok_and(|s| i128::from(s.f_type) == TMPFS_MAGIC) {
            return cand;
        }
    }
    eprintln!("warning: neither /dev/shm nor the temp dir is tmpfs; building on disk");
    std::env::temp_dir()
}

/// splitmix64: deterministic "random" numbers from an index.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hex(seed: u64, len: usize) -> String {
    let mut s = String::with_capacity(len);
    let mut i = 0;
    while s.len() < len {
        let _ = write!(s, "{:016x}", mix(seed.wrapping_mul(31).wrapping_add(i)));
        i += 1;
    }
    s.truncate(len);
    s
}

/// The relative paths of `n` groups, the root ("") first and every parent
/// before its children.
pub fn group_paths(n: usize) -> Vec<String> {
    let user = "user.slice/user-1000.slice/user@1000.service";
    let mut out: Vec<String> = [
        "",
        INSPECTED,
        "system.slice",
        "user.slice",
        "user.slice/user-1000.slice",
        user,
        "user.slice/user-1000.slice/user@1000.service/app.slice",
        "user.slice/user-1000.slice/session-2.scope",
        "kubepods.slice",
        "kubepods.slice/kubepods-burstable.slice",
        "machine.slice",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut i: u64 = 0;
    while out.len() < n {
        match i % 10 {
            0..=3 => out.push(format!("system.slice/unit-{i:05}.service")),
            4..=6 => {
                let pod = format!(
                    "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice",
                    hex(i, 32)
                );
                out.push(pod.clone());
                for c in 0..2 {
                    out.push(format!("{pod}/cri-containerd-{}.scope", hex(i * 7 + c, 64)));
                }
            }
            7 | 8 => out.push(format!(
                "{user}/app.slice/app-gnome-org.example.App{i}-{}.scope",
                mix(i) % 100_000
            )),
            _ => {
                // a deep chain: VM, payload, nested containers
                let mut p = format!("machine.slice/machine-qemu{i}.scope");
                out.push(p.clone());
                for part in ["libvirt", "payload", "system.slice", "docker.service"] {
                    p.push('/');
                    p.push_str(part);
                    out.push(p.clone());
                }
                for d in 0..3 {
                    p = format!("{p}/nested-{d}");
                    out.push(p.clone());
                }
            }
        }
        i += 1;
    }
    out.truncate(n);
    out
}

/// Number of descendants of every path (for cgroup.stat).
fn descendants(paths: &[String]) -> HashMap<&str, u64> {
    let mut m: HashMap<&str, u64> = paths.iter().map(|p| (p.as_str(), 0)).collect();
    for p in paths.iter().filter(|p| !p.is_empty()) {
        let mut cur = p.as_str();
        loop {
            cur = cur.rfind('/').map_or("", |i| &cur[..i]);
            if let Some(c) = m.get_mut(cur) {
                *c += 1;
            }
            if cur.is_empty() {
                break;
            }
        }
    }
    m
}

/// The text of cgroup.stat with `n` descendants.
pub fn cgroup_stat(n: u64) -> String {
    format!("nr_descendants {n}\nnr_dying_descendants 0\nnr_subsys_cpu {n}\nnr_subsys_io {n}\nnr_subsys_memory {n}\nnr_subsys_pids {n}\n")
}

fn cpu_stat(seed: u64) -> String {
    let user = mix(seed) % 900_000_000_000;
    let system = mix(seed + 1) % 300_000_000_000;
    let periods = mix(seed + 2) % 1_000_000;
    let thr = periods / 50;
    format!(
        "usage_usec {}\nuser_usec {user}\nsystem_usec {system}\nnice_usec 0\n\
         core_sched.force_idle_usec 0\nnr_periods {periods}\nnr_throttled {thr}\n\
         throttled_usec {}\nnr_bursts 0\nburst_usec 0\n",
        user + system,
        thr * 4_000
    )
}

fn io_stat(seed: u64) -> String {
    let mut s = String::new();
    for (k, dev) in ["259:0", "8:0"]
        .iter()
        .enumerate()
        .take((mix(seed) % 3) as usize)
    {
        let r = mix(seed + 10 + k as u64);
        let _ = writeln!(
            s,
            "{dev} rbytes={} wbytes={} rios={} wios={} dbytes=0 dios=0",
            r % 90_000_000_000,
            (r >> 7) % 90_000_000_000,
            r % 9_000_000,
            (r >> 9) % 9_000_000
        );
    }
    s
}

/// Full text for the inspected group's other files, so the inspection does
/// the kernel's amount of parsing.
pub fn inspected_text(name: &str, seed: u64) -> String {
    match name {
        "memory.stat" => [
            "anon",
            "file",
            "kernel",
            "kernel_stack",
            "pagetables",
            "sec_pagetables",
            "percpu",
            "sock",
            "vmalloc",
            "shmem",
            "zswap",
            "zswapped",
            "file_mapped",
            "file_dirty",
            "file_writeback",
            "swapcached",
            "anon_thp",
            "file_thp",
            "shmem_thp",
            "inactive_anon",
            "active_anon",
            "inactive_file",
            "active_file",
            "unevictable",
            "slab_reclaimable",
            "slab_unreclaimable",
            "slab",
            "workingset_refault_anon",
            "workingset_refault_file",
            "workingset_activate_anon",
            "workingset_activate_file",
            "workingset_restore_anon",
            "workingset_restore_file",
            "workingset_nodereclaim",
            "pgscan",
            "pgsteal",
            "pgscan_kswapd",
            "pgscan_direct",
            "pgsteal_kswapd",
            "pgsteal_direct",
            "pgfault",
            "pgmajfault",
            "pgrefill",
            "pgactivate",
            "pgdeactivate",
            "pglazyfree",
            "pglazyfreed",
            "thp_fault_alloc",
            "thp_collapse_alloc",
        ]
        .iter()
        .enumerate()
        .fold(String::new(), |mut s, (k, key)| {
            let _ = writeln!(s, "{key} {}", mix(seed + k as u64) % 10_000_000_000);
            s
        }),
        "memory.events" | "memory.events.local" => {
            "low 0\nhigh 12\nmax 3\noom 0\noom_kill 0\noom_group_kill 0\n".into()
        }
        "cpu.pressure" | "memory.pressure" | "io.pressure" => {
            "some avg10=0.12 avg60=0.08 avg300=0.02 total=123456789\n\
             full avg10=0.00 avg60=0.01 avg300=0.00 total=2345678\n"
                .into()
        }
        "cpu.max" => "max 100000\n".into(),
        "cpu.max.burst" | "memory.min" | "memory.low" | "cpu.idle" | "cpu.weight.nice"
        | "memory.oom.group" | "cgroup.freeze" => "0\n".into(),
        "cpu.weight" => "100\n".into(),
        "memory.high" | "memory.max" | "memory.swap.max" | "pids.max" | "memory.zswap.max" => {
            "max\n".into()
        }
        "memory.peak" | "memory.swap.peak" | "pids.peak" => format!("{}\n", mix(seed) % (1 << 34)),
        "cgroup.controllers" | "cgroup.subtree_control" => "cpu io memory pids\n".into(),
        "cgroup.max.depth" | "cgroup.max.descendants" => "max\n".into(),
        "io.weight" => "default 100\n".into(),
        _ => String::new(),
    }
}

/// Builds the tree of `n` groups under a new directory of `base`.
pub fn build(base: &Path, n: usize) -> Result<TempTree> {
    let dir = base.join(format!("cgtop-bench-{}-{n}", std::process::id()));
    fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tree = TempTree { dir };
    let paths = group_paths(n);
    let desc = descendants(&paths);
    for (i, p) in paths.iter().enumerate() {
        crate::check_stop()?;
        write_group(&tree.dir, p, i as u64, desc[p.as_str()])?;
    }
    Ok(tree)
}

/// Writes one group (also used to add a group while a scanner runs).
pub fn write_group(root: &Path, rel: &str, seed: u64, nr_desc: u64) -> Result<()> {
    let d = root.join(rel);
    let is_root = rel.is_empty();
    if !is_root {
        fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
    }
    let leaf = nr_desc == 0;
    let pids: String = if leaf {
        (0..mix(seed + 5) % 4).fold(String::new(), |mut s, k| {
            let _ = writeln!(s, "{}", 1000 + mix(seed + k) % 4_000_000);
            s
        })
    } else {
        String::new()
    };
    let mut text: Vec<(&str, String)> = vec![
        ("cgroup.procs", pids.clone()),
        ("cgroup.stat", cgroup_stat(nr_desc)),
        ("cpu.stat", cpu_stat(seed)),
        ("io.stat", io_stat(seed)),
    ];
    if !is_root {
        // the kernel has these only below the root (CFTYPE_NOT_ON_ROOT)
        text.push(("cgroup.events", "populated 1\nfrozen 0\n".into()));
        text.push(("cgroup.type", "domain\n".into()));
        text.push(("memory.current", format!("{}\n", mix(seed + 3) % (8 << 30))));
        text.push(("pids.current", format!("{}\n", pids.lines().count())));
    }
    for (name, t) in &text {
        fs::write(d.join(name), t).with_context(|| format!("writing {}/{name}", d.display()))?;
    }
    let inspected = rel == INSPECTED;
    for name in OTHER_FILES {
        let t = if inspected {
            inspected_text(name, seed)
        } else {
            String::new()
        };
        fs::write(d.join(name), t).with_context(|| format!("writing {}/{name}", d.display()))?;
    }
    Ok(())
}
