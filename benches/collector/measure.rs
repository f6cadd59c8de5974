//! The measured phases. Each one does its setup (not timed), `warmup`
//! untimed rounds, then `iters` timed rounds, and returns the CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`: user + system of this thread) and wall time
//! of each round, and the files it read per round.
//!
//! A phase runs the same way in this process (for the timings) and in a
//! child process started with `--phase` (under strace to count syscalls,
//! or alone to read its resident memory).

use anyhow::{bail, Result};
use cgtop::model::tree::{RowOptions, Tree};
use cgtop::model::GroupPath;
use cgtop::source::collector::{thread_cpu_time, Collector, CollectorConfig, Refresh};
use cgtop::source::scan::{ScanConfig, Scanner};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const PHASES: &[&str] = &[
    "scan",
    "scan-walk",
    "readdir",
    "orc4",
    "pread4",
    "orc-same",
    "pread-same",
    "refresh",
    "model",
    "model-collapsed",
    "app",
    "idle",
];

/// What one phase measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Samples {
    pub cpu_ns: Vec<u64>,
    pub wall_ns: Vec<u64>,
    /// Files read per round.
    pub files: u64,
    /// Named figures (kept descriptors, rows, VmRSS, ...).
    pub extra: Vec<(String, f64)>,
    pub note: String,
}

impl Samples {
    pub fn cpu_ms(&self) -> f64 {
        median(&self.cpu_ns) / 1e6
    }
    pub fn wall_ms(&self) -> f64 {
        median(&self.wall_ns) / 1e6
    }
    pub fn extra(&self, key: &str) -> Option<f64> {
        self.extra.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
    /// Scales the times by `f` (a loop that could hold only part of the
    /// descriptors it needed).
    fn scale(&mut self, f: f64) {
        for v in self.cpu_ns.iter_mut().chain(self.wall_ns.iter_mut()) {
            *v = (*v as f64 * f) as u64;
        }
    }
}

pub fn median(v: &[u64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m] as f64
    } else {
        f64::midpoint(s[m - 1] as f64, s[m] as f64)
    }
}

/// Runs `round` `warmup` times untimed, then `iters` times timed. `round`
/// returns the number of files it read.
fn timed(iters: usize, warmup: usize, mut round: impl FnMut() -> Result<u64>) -> Result<Samples> {
    let mut s = Samples::default();
    for _ in 0..warmup {
        crate::check_stop()?;
        round()?;
    }
    for _ in 0..iters {
        crate::check_stop()?;
        let w = Instant::now();
        let c = thread_cpu_time();
        s.files = round()?;
        s.cpu_ns
            .push(thread_cpu_time().saturating_sub(c).as_nanos() as u64);
        s.wall_ns.push(w.elapsed().as_nanos() as u64);
    }
    Ok(s)
}

/// The files of a tree, listed once (untimed) for the baselines.
pub struct FileSets {
    pub groups: usize,
    /// cpu.stat, memory.current, io.stat, pids.current where present: the
    /// issue's four files.
    pub four: Vec<PathBuf>,
    /// Exactly what Scanner::scan reads: the start group's cgroup.stat, then
    /// per group cpu.stat, memory.current, io.stat, pids.current,
    /// cgroup.events, and cgroup.procs where pids.current is absent (true:
    /// read to EOF, since seq_file gives at most a page per read).
    pub same: Vec<(PathBuf, bool)>,
}

pub fn list_files(root: &Path) -> FileSets {
    let mut sets = FileSets {
        groups: 0,
        four: Vec::new(),
        same: vec![(root.join("cgroup.stat"), false)],
    };
    let mut stack = vec![root.to_path_buf()];
    let mut dirs = Vec::new();
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        let mut names = HashSet::new();
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            } else {
                names.insert(e.file_name().to_string_lossy().into_owned());
            }
        }
        dirs.push((d, names));
    }
    dirs.sort_by(|a, b| a.0.cmp(&b.0));
    sets.groups = dirs.len();
    for (d, names) in dirs {
        for f in ["cpu.stat", "memory.current", "io.stat", "pids.current"] {
            if names.contains(f) {
                sets.four.push(d.join(f));
            }
        }
        for f in [
            "cpu.stat",
            "memory.current",
            "io.stat",
            "pids.current",
            "cgroup.events",
        ] {
            if names.contains(f) {
                sets.same.push((d.join(f), false));
            }
        }
        if !names.contains("pids.current") && names.contains("cgroup.procs") {
            sets.same.push((d.join("cgroup.procs"), true));
        }
    }
    sets
}

/// The group the collector focuses (the UI's selection).
pub fn focus_of(root: &Path) -> GroupPath {
    if root.join(crate::fake::FOCUS).is_dir() {
        return GroupPath::new(crate::fake::FOCUS);
    }
    let mut kids: Vec<String> = fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    kids.sort();
    kids.first()
        .map_or_else(GroupPath::root, |k| GroupPath::new(k))
}

fn collector(root: &Path) -> Collector {
    let mut c = Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    });
    c.set_focus(Some(focus_of(root)));
    c
}

/// VmRSS and VmHWM of this process, in KiB.
pub fn rss_kb() -> (f64, f64) {
    let text = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |k: &str| {
        text.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (get("VmRSS:"), get("VmHWM:"))
}

/// One read the way a C loop does it: a read into a 64 KiB buffer, and
/// more reads until EOF for a multi-page seq_file (cgroup.procs).
fn pread_file(f: &File, buf: &mut [u8], multi: bool) -> bool {
    let mut off = 0u64;
    loop {
        match f.read_at(buf, off) {
            Ok(0) => return true,
            Ok(n) if multi => off += n as u64,
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}

fn orc_file(p: &Path, buf: &mut [u8], multi: bool) -> bool {
    let Ok(mut f) = File::open(p) else {
        return false;
    };
    loop {
        match f.read(buf) {
            Ok(0) => return true,
            Ok(_) if multi => {}
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
}

/// Opens as many of `files` as the descriptor limit allows.
fn open_all(files: &[(PathBuf, bool)]) -> Vec<(File, bool)> {
    let mut out = Vec::with_capacity(files.len());
    for (p, multi) in files {
        match File::open(p) {
            Ok(f) => out.push((f, *multi)),
            Err(e) if e.raw_os_error() == Some(24) => break, // EMFILE
            Err(_) => {}
        }
    }
    out
}

fn pread_loop(files: &[(PathBuf, bool)], iters: usize, warmup: usize) -> Result<Samples> {
    let kept = open_all(files);
    let mut buf = vec![0u8; 64 * 1024];
    let mut s = timed(iters, warmup, || {
        let mut n = 0;
        for (f, multi) in &kept {
            n += u64::from(pread_file(f, &mut buf, *multi));
        }
        Ok(n)
    })?;
    if kept.len() < files.len() {
        // too few descriptors: time the part that fits, scale to all
        let f = files.len() as f64 / kept.len().max(1) as f64;
        s.scale(f);
        s.files = files.len() as u64;
        s.note = format!(
            "only {} of {} files could be kept open; times scaled by {f:.2}",
            kept.len(),
            files.len()
        );
    }
    s.extra.push(("kept".into(), kept.len() as f64));
    Ok(s)
}

fn orc_loop(files: &[(PathBuf, bool)], iters: usize, warmup: usize) -> Result<Samples> {
    let mut buf = vec![0u8; 64 * 1024];
    timed(iters, warmup, || {
        let mut n = 0;
        for (p, multi) in files {
            n += u64::from(orc_file(p, &mut buf, *multi));
        }
        Ok(n)
    })
}

/// A directory walk like the scanner's, without reading any file: lists
/// every group and tells directories from files.
fn readdir_walk(root: &Path) -> u64 {
    let mut n = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        n += 1;
        let mut names = Vec::new();
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else {
                names.push(e.file_name());
            }
        }
        std::hint::black_box(names);
    }
    n
}

/// CPU % per sample for sorting: the rates (zero on a static tree) plus a
/// deterministic spread, so that the sort does real work.
fn sort_keys(r: &Refresh) -> Vec<f64> {
    r.rates
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.cpu_pct.unwrap_or(0.0) + (crate::fake::mix(i as u64) % 10_000) as f64 / 100.0
        })
        .collect()
}

fn model_round(r: &Refresh, keys: &[f64], collapsed: Option<&HashSet<GroupPath>>) -> usize {
    let tree = Tree::build(&r.snapshot.groups);
    let rows = tree.rows(
        &RowOptions {
            collapsed,
            filter: None,
        },
        |a, b| keys[tree.nodes[b].sample].total_cmp(&keys[tree.nodes[a].sample]),
    );
    rows.len()
}

/// Two refreshes one second apart, so that rates exist.
fn two_refreshes(root: &Path) -> Refresh {
    let mut c = collector(root);
    let _ = c.refresh(Duration::ZERO);
    c.refresh(Duration::from_secs(1))
}

/// Runs one phase on the tree at `root`.
#[allow(clippy::too_many_lines)] // one match arm per phase, each short
pub fn run(phase: &str, root: &Path, iters: usize, warmup: usize) -> Result<Samples> {
    Ok(match phase {
        "scan" | "scan-walk" => {
            let walk = phase == "scan-walk";
            // no periodic re-walk: "scan" is the steady state, "scan-walk"
            // forces a re-listing every round
            let mut s = Scanner::new(
                root.to_path_buf(),
                ScanConfig {
                    rewalk_every: 0,
                    ..ScanConfig::default()
                },
            );
            // the first scan lists the tree and opens the files
            s.scan();
            let mut groups = 0;
            let mut limited = false;
            let mut out = timed(iters, warmup, || {
                if walk {
                    s.invalidate();
                }
                let (g, cost) = s.scan();
                if cost.walked && !walk {
                    bail!("the steady scan re-walked: the tree changed during the benchmark");
                }
                groups = g.len();
                limited = cost.fd_limited;
                Ok(cost.files_read)
            })?;
            out.extra.push(("groups".into(), groups as f64));
            out.extra.push(("kept".into(), s.kept() as f64));
            out.extra
                .push(("fd_limited".into(), if limited { 1.0 } else { 0.0 }));
            out.extra.push(("free_fds".into(), free_fds(256) as f64));
            out
        }
        "readdir" => timed(iters, warmup, || Ok(readdir_walk(root)))?,
        "orc4" | "pread4" | "orc-same" | "pread-same" => {
            let sets = list_files(root);
            let files: Vec<(PathBuf, bool)> = if phase.ends_with('4') {
                sets.four.into_iter().map(|p| (p, false)).collect()
            } else {
                sets.same
            };
            if phase.starts_with("orc") {
                orc_loop(&files, iters, warmup)?
            } else {
                pread_loop(&files, iters, warmup)?
            }
        }
        "refresh" => {
            let mut c = collector(root);
            let t0 = Instant::now();
            let mut walked = 0;
            let mut out = timed(iters, warmup, || {
                let r = c.refresh(t0.elapsed());
                walked += u64::from(r.snapshot.cost.walked);
                Ok(r.snapshot.cost.files_read)
            })?;
            out.extra.push(("walked".into(), walked as f64));
            out
        }
        "model" | "model-collapsed" => {
            let r = two_refreshes(root);
            let keys = sort_keys(&r);
            // "collapsed": every branch but the top collapsed, as a fresh
            // start on a big host would show it
            let collapsed: Option<HashSet<GroupPath>> = (phase == "model-collapsed").then(|| {
                let t = Tree::build(&r.snapshot.groups);
                t.branches().filter(|p| !p.is_root()).cloned().collect()
            });
            let mut rows = 0;
            let mut out = timed(iters, warmup, || {
                rows = model_round(&r, &keys, collapsed.as_ref());
                Ok(0)
            })?;
            out.extra.push(("rows".into(), rows as f64));
            out
        }
        "app" => {
            // what the running program holds: the collector (kept files,
            // previous snapshot), the last refresh, the tree and its rows
            let mut c = collector(root);
            let mut last = None;
            for i in 0..iters.max(2) {
                crate::check_stop()?;
                last = Some(c.refresh(Duration::from_secs(i as u64)));
            }
            let mut out = Samples::default();
            if let Some(r) = &last {
                let keys = sort_keys(r);
                let tree = Tree::build(&r.snapshot.groups);
                let rows = tree.rows(&RowOptions::default(), |a, b| {
                    keys[tree.nodes[b].sample].total_cmp(&keys[tree.nodes[a].sample])
                });
                let (rss, hwm) = rss_kb();
                out.extra.push(("VmRSS_kB".into(), rss));
                out.extra.push(("VmHWM_kB".into(), hwm));
                std::hint::black_box((tree, rows));
            }
            std::hint::black_box(last);
            out
        }
        "idle" => {
            let (rss, hwm) = rss_kb();
            Samples {
                extra: vec![("VmRSS_kB".into(), rss), ("VmHWM_kB".into(), hwm)],
                ..Samples::default()
            }
        }
        _ => bail!("unknown phase {phase:?}; phases: {}", PHASES.join(", ")),
    })
}

/// How many descriptors are still free (up to `max`): what the rest of the
/// program (focus read, /proc, writes, the terminal) has left.
pub fn free_fds(max: usize) -> usize {
    let mut held = Vec::new();
    while held.len() < max {
        match File::open("/dev/null") {
            Ok(f) => held.push(f),
            Err(_) => break,
        }
    }
    held.len()
}
