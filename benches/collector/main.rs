//! cgtop's collector benchmark: what one refresh costs, against the floor of
//! reading the same files through kept descriptors.
//!
//! ```text
//! cargo bench --bench collector                       # tmpfs trees of 1,000 and 10,000 groups
//! cargo bench --bench collector -- --sizes 2000 --syscalls --kmem
//! cargo bench --bench collector -- --root /sys/fs/cgroup          # an existing tree, read-only
//! cargo bench --bench collector -- --make-cgroups 2000 --cgroup-parent /sys/fs/cgroup
//! ```
//!
//! See BENCHMARKS.md for what each figure means and the recorded results.

mod fake;
mod identities;
mod layout_tree;
mod measure;
mod real;
mod v1;

use anyhow::{bail, Context, Result};
use clap::Parser;
use measure::Samples;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

#[derive(Parser, Debug)]
#[command(about = "Benchmark cgtop's collector, model and memory on cgroupfs-like trees")]
struct Args {
    /// Sizes of the tmpfs trees to build, in groups.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sizes: Vec<usize>,
    /// Measured refreshes per figure (the median is reported).
    #[arg(long, default_value_t = 11)]
    refreshes: usize,
    /// Untimed refreshes before measuring.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Where to build the tmpfs trees (default: /dev/shm if it is tmpfs).
    #[arg(long)]
    base: Option<PathBuf>,
    /// Benchmark this existing tree instead (read-only: nothing is created,
    /// the add/remove detection check is skipped).
    #[arg(long, conflicts_with = "make_cgroups")]
    root: Option<PathBuf>,
    /// Create this many real groups under --cgroup-parent, benchmark them,
    /// and remove them. Writes only below <parent>/<prefix>-<pid>.
    #[arg(long, requires = "cgroup_parent")]
    make_cgroups: Option<usize>,
    /// A cgroup2 directory to create the --make-cgroups groups in.
    #[arg(long)]
    cgroup_parent: Option<PathBuf>,
    /// Name prefix of the created top group (the pid is appended).
    #[arg(long, default_value = "cgtop-bench")]
    prefix: String,
    /// Measure the kernel memory pinned by kept, read descriptors
    /// (/proc/slabinfo and /proc/meminfo; slabinfo needs root).
    #[arg(long)]
    kmem: bool,
    /// Count syscalls per refresh by running each phase under `strace -c -f`
    /// (with and without the measured rounds, and subtracting).
    #[arg(long)]
    syscalls: bool,
    /// Also scan with RLIMIT_NOFILE's soft limit at this value, to see the
    /// fallback to open/read/close (0: skip).
    #[arg(long, default_value_t = 1024)]
    limited_nofile: u64,
    /// Only the resident memory: the idle binary, the app after the
    /// refreshes, and the app with an hour of history (issue 9).
    #[arg(long)]
    memory_only: bool,
    /// Measure with cgtop's event watcher running on the tree (issue 9):
    /// every group's directory and event files under inotify watches, as
    /// the TUI and batch mode have them (within the TUI's share of the
    /// user's watches, a quarter of fs.inotify.max_user_watches).
    #[arg(long)]
    watch: bool,
    /// With --watch: the watcher takes every watch there is (no share),
    /// so that none is left for anything else, the scanner's own
    /// cgroup.events watches included (the user's watches spent by
    /// another program).
    #[arg(long, requires = "watch")]
    watch_all: bool,
    /// Make this many groups under cgtop-test-<pid>-900 in cgroup2 and in
    /// each live cgroup v1 hierarchy of this host, and measure the
    /// collector on that layout against a kept-descriptor loop over the
    /// same files (issue 11). Needs root; the groups are removed after.
    #[arg(long)]
    v1_layout: Option<usize>,
    /// With --v1-layout: stop after the scan + merge block (no refresh,
    /// no scrape): for a profile of the steady rounds alone, under
    /// valgrind `--tool=callgrind --collect-atstart=no
    /// --toggle-collect='*v1::steady_scan_and_merge*'`.
    #[arg(long, hide = true, requires = "v1_layout")]
    scan_only: bool,
    /// Add this many docker containers (with their config.v2.json in a
    /// test root) to a tree of the first --sizes size, and compare a
    /// steady refresh with and without the identity resolver.
    #[arg(long)]
    identities: Option<usize>,
    /// Internal: run one phase on --root and print its samples as JSON
    /// (several, comma-separated: interleaved round by round, a JSON array;
    /// with --watch, the event watcher set up first).
    #[arg(long, hide = true)]
    phase: Option<String>,
    /// Internal: set RLIMIT_NOFILE (soft and hard) to this before --phase.
    #[arg(long, hide = true)]
    cap_nofile: Option<u64>,
    /// Internal: --phase without reading the CPU clock (under valgrind:
    /// `valgrind --tool=callgrind BENCH --phase refresh --root TREE --no-cpu-clock`).
    #[arg(long, hide = true)]
    no_cpu_clock: bool,
    /// Internal: timed rounds of --phase.
    #[arg(long, hide = true, default_value_t = 5)]
    iters: usize,
    /// Internal: build the tmpfs tree of the first --sizes, print its
    /// directory and leave it (to profile one --phase on it; remove it
    /// after with `rm -r`).
    #[arg(long, hide = true)]
    tree_only: bool,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// No progress lines (in a `--phase` child: they would be counted as
/// syscalls of the phase).
static QUIET: AtomicBool = AtomicBool::new(false);

/// A progress line on stderr.
pub fn progress(msg: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("  {msg}");
    }
}

/// Fails once SIGINT, SIGTERM or SIGHUP arrived, so that the error unwinds
/// through the guards that remove the trees and test groups.
pub fn check_stop() -> Result<()> {
    if STOP.get().is_some_and(|s| s.load(Ordering::Relaxed)) {
        bail!("interrupted");
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let _ = STOP.set(stop);

    if let Some(phase) = &args.phase {
        QUIET.store(true, Ordering::Relaxed);
        measure::NO_CPU_CLOCK.store(args.no_cpu_clock, Ordering::Relaxed);
        let root = args.root.as_deref().context("--phase needs --root")?;
        if let Some(n) = args.cap_nofile {
            use rustix::process::{setrlimit, Resource, Rlimit};
            setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(n),
                    maximum: Some(n),
                },
            )
            .context("setrlimit(RLIMIT_NOFILE)")?;
        }
        // with the event watcher's watches in place, as the suite's --watch
        let _watcher = if args.watch {
            Some(StopWatcher(start_watcher(root, args.watch_all)?))
        } else {
            None
        };
        if phase.contains(',') {
            // several phases, interleaved round by round in this process
            // (a JSON array): a ratio on a shared or emulated machine
            let phases: Vec<&str> = phase.split(',').collect();
            let s = measure::run_interleaved(&phases, root, args.iters, args.warmup)?;
            println!("{}", serde_json::to_string(&s)?);
        } else {
            let s = measure::run(phase, root, args.iters, args.warmup)?;
            println!("{}", serde_json::to_string(&s)?);
        }
        return Ok(());
    }

    print_machine();
    if let Some(n) = args.identities {
        let size = args.sizes.first().copied().unwrap_or(1000);
        // two collectors on the tree, each keeping its descriptors
        raise_nofile(2 * (size + n));
        return identities::run(size, n, args.refreshes, args.warmup);
    }
    if let Some(n) = args.v1_layout {
        // under valgrind (`--scan-only`): rustix's vDSO clock faults there
        measure::NO_CPU_CLOCK.store(args.no_cpu_clock, Ordering::Relaxed);
        raise_nofile(n * 16);
        return v1::run(n, args.refreshes, args.warmup, args.scan_only);
    }
    if let Some(root) = &args.root {
        let n = measure::list_files(root).groups;
        let nofile = raise_nofile(n);
        let label = format!("existing tree {} ({n} groups, read-only)", root.display());
        suite(&args, root, &label, None, nofile)?;
    } else if let Some(n) = args.make_cgroups {
        let parent = args.cgroup_parent.as_deref().context("--cgroup-parent")?;
        let nofile = raise_nofile(n);
        let t0 = std::time::Instant::now();
        let tree = real::RealTree::create(parent, &args.prefix, n)?;
        let label = format!(
            "real cgroup2 groups: {n} under {} (created in {:.1} s)",
            tree.top.display(),
            t0.elapsed().as_secs_f64()
        );
        let mut m = RealMut {
            top: tree.top.clone(),
            added: Vec::new(),
        };
        suite(&args, &tree.top, &label, Some(&mut m), nofile)?;
        drop(m);
        drop(tree);
    } else {
        let base = args.base.clone().unwrap_or_else(fake::tmpfs_base);
        for &n in &args.sizes {
            let nofile = raise_nofile(n);
            let t0 = std::time::Instant::now();
            let tree = fake::build(&base, n)?;
            if args.tree_only {
                println!("{}", tree.dir.display());
                std::mem::forget(tree);
                return Ok(());
            }
            let label = format!(
                "tmpfs tree of {n} groups in {} (built in {:.1} s)",
                base.display(),
                t0.elapsed().as_secs_f64()
            );
            if args.memory_only {
                println!("\n## {label}\n");
                memory(&tree.dir, args.refreshes)?;
                continue;
            }
            let mut m = TmpfsMut {
                root: tree.dir.clone(),
            };
            suite(&args, &tree.dir, &label, Some(&mut m), nofile)?;
        }
    }
    Ok(())
}

/// Stops the event watcher when the suite ends.
struct StopWatcher(cgtop::source::events::WatchHandle);

impl Drop for StopWatcher {
    fn drop(&mut self) {
        self.0.send(cgtop::source::events::WatchCommand::Stop);
    }
}

/// Starts cgtop's event watcher on `root` and waits until its watches are
/// set (its first status), so that the phases measured after it run with
/// every watch in place (within the TUI's share, or every one there is with
/// `all`). The watcher stops when the handle is dropped.
fn start_watcher(root: &Path, all: bool) -> Result<cgtop::source::events::WatchHandle> {
    use cgtop::source::events::{self, WatchCommand, WatchConfig, Watched};
    let hier = Arc::new(cgtop::source::hier::Hier::open(root)?);
    let cfg = WatchConfig {
        start: cgtop::model::GroupPath::root(),
        max_depth: None,
        // the TUI's share of the user's watches (src/run.rs); with none,
        // the watcher spends every watch there is
        max_watches: if all {
            None
        } else {
            cgtop::source::events::host_watch_budget()
        },
        kmsg: None,
        mapping: None,
        clock: std::time::Instant::now(),
        clock_unix: std::time::Duration::ZERO,
        v1_memory: None,
    };
    let (tx, rx) = std::sync::mpsc::channel::<Watched>();
    let t0 = std::time::Instant::now();
    let h = events::spawn(hier, cfg, tx)?;
    loop {
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(Watched::Status(st)) => {
                println!(
                    "event watcher on: {} inotify watches, {} groups short of one, set in {:.2} s\n",
                    st.watches,
                    st.unwatched,
                    t0.elapsed().as_secs_f64()
                );
                // keep draining its channel so that it never blocks
                std::thread::spawn(move || for _ in rx {});
                return Ok(h);
            }
            Ok(Watched::Events(_) | Watched::Alive) => {}
            Err(e) => {
                h.send(WatchCommand::Stop);
                bail!("the event watcher gave no status: {e}");
            }
        }
    }
}

fn print_machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    println!(
        "machine: {cpu}, {cores} cores, Linux {}, {}",
        kernel.trim(),
        mem.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    );
}

/// Raises RLIMIT_NOFILE's soft limit to the hard one, and the hard one too
/// when allowed (root), so that the kept-descriptor floor can keep every
/// file of an `n`-group tree open in every phase at once. Returns (soft, hard) in force.
fn raise_nofile(n: usize) -> (u64, u64) {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    // interleaved phases keep up to 3 × 6 descriptors per group open
    let want = n as u64 * 18 + 4096;
    let lim = getrlimit(Resource::Nofile);
    let hard = lim.maximum.unwrap_or(u64::MAX);
    if hard < want {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(want);
        let to = want.min(nr_open);
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(to),
                maximum: Some(to),
            },
        );
    }
    let lim = getrlimit(Resource::Nofile);
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: lim.maximum,
            maximum: lim.maximum,
        },
    );
    let lim = getrlimit(Resource::Nofile);
    (
        lim.current.unwrap_or(u64::MAX),
        lim.maximum.unwrap_or(u64::MAX),
    )
}

/// Changes to a tree while a scanner watches it.
trait Mutate {
    fn add(&mut self, rel: &str) -> Result<()>;
    fn remove(&mut self, rel: &str) -> Result<()>;
}

/// tmpfs has no kernel behind it: keep nr_descendants in the cgroup.stat of
/// every ancestor of a group that comes or goes right by hand, as the
/// kernel does (the scanner lists only the subtrees whose count moved).
struct TmpfsMut {
    root: PathBuf,
}

impl TmpfsMut {
    fn bump(&self, rel: &str, up: bool) -> Result<()> {
        // "a/b/new": a/b, a and "" (the root)
        for a in Path::new(rel).ancestors().skip(1) {
            let stat = self.root.join(a).join("cgroup.stat");
            let n = cgtop::cgroupfs::CgroupStat::parse(&std::fs::read_to_string(&stat)?)
                .nr_descendants
                .unwrap_or(0);
            std::fs::write(&stat, fake::cgroup_stat(if up { n + 1 } else { n - 1 }))?;
        }
        Ok(())
    }
}

impl Mutate for TmpfsMut {
    fn add(&mut self, rel: &str) -> Result<()> {
        fake::write_group(&self.root, rel, 7, 0)?;
        self.bump(rel, true)
    }
    fn remove(&mut self, rel: &str) -> Result<()> {
        std::fs::remove_dir_all(self.root.join(rel))?;
        self.bump(rel, false)
    }
}

/// Real groups added during the detection check; any left are removed on
/// drop.
struct RealMut {
    top: PathBuf,
    added: Vec<PathBuf>,
}

impl Mutate for RealMut {
    fn add(&mut self, rel: &str) -> Result<()> {
        let d = self.top.join(rel);
        std::fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
        self.added.push(d);
        Ok(())
    }
    fn remove(&mut self, rel: &str) -> Result<()> {
        let d = self.top.join(rel);
        std::fs::remove_dir(&d).with_context(|| format!("removing {}", d.display()))?;
        self.added.retain(|a| *a != d);
        Ok(())
    }
}

impl Drop for RealMut {
    fn drop(&mut self) {
        for d in self.added.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// How many refreshes until the scanner shows a new group, drops a
/// removed one, and both when a create and a remove leave nr_descendants
/// unchanged. Default ScanConfig (rewalk_every 10).
fn detect(root: &Path, tree: &mut dyn Mutate) -> Result<[u32; 3]> {
    use cgtop::source::scan::{ScanConfig, Scanner};
    let parent = if root.join("system.slice").is_dir() {
        "system.slice/"
    } else {
        ""
    };
    let (first, second, third) = (
        format!("{parent}cgtop-detect-a.service"),
        format!("{parent}cgtop-detect-b.service"),
        format!("{parent}cgtop-detect-c.service"),
    );
    let mut scanner = Scanner::new(root.to_path_buf(), ScanConfig::default());
    for _ in 0..3 {
        scanner.scan();
    }
    let until = |s: &mut Scanner, present: &[&str], absent: &[&str]| -> Result<u32> {
        for k in 1..=25 {
            check_stop()?;
            let (g, _) = s.scan();
            let has = |p: &str| g.iter().any(|x| x.path.as_bytes() == p.as_bytes());
            if present.iter().all(|p| has(p)) && absent.iter().all(|p| !has(p)) {
                return Ok(k);
            }
        }
        Ok(u32::MAX)
    };
    tree.add(&first)?;
    let added = until(&mut scanner, &[&first], &[])?;
    tree.remove(&first)?;
    let removed = until(&mut scanner, &[], &[&first])?;
    tree.add(&third)?;
    until(&mut scanner, &[&third], &[])?;
    tree.add(&second)?;
    tree.remove(&third)?;
    let both = until(&mut scanner, &[&second], &[&third])?;
    tree.remove(&second)?;
    Ok([added, removed, both])
}

/// Runs a phase in a child process (same binary, `--phase`), optionally
/// under `strace -c -f -o FILE`. Returns the child's samples and the strace
/// summary (calls per syscall).
fn child(
    phase: &str,
    root: &Path,
    iters: usize,
    warmup: usize,
    strace: bool,
    cap_nofile: Option<u64>,
) -> Result<(Samples, BTreeMap<String, f64>)> {
    let exe = std::env::current_exe()?;
    let out_file = std::env::temp_dir().join(format!(
        "cgtop-bench-strace-{}-{phase}-{iters}.txt",
        std::process::id()
    ));
    let mut cmd = if strace {
        let mut c = Command::new("strace");
        c.arg("-f")
            .arg("-c")
            .arg("-o")
            .arg(&out_file)
            .arg("--")
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    cmd.arg("--phase")
        .arg(phase)
        .arg("--root")
        .arg(root)
        .arg("--iters")
        .arg(iters.to_string())
        .arg("--warmup")
        .arg(warmup.to_string())
        .args(cap_nofile.map(|n| format!("--cap-nofile={n}")))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let out = cmd
        .output()
        .with_context(|| format!("running phase {phase} in a child"))?;
    if !out.status.success() {
        bail!("phase {phase} failed in the child: {}", out.status);
    }
    let samples: Samples = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("reading phase {phase}'s output"))?;
    let mut calls = BTreeMap::new();
    if strace {
        let text = std::fs::read_to_string(&out_file).context("reading strace's summary")?;
        let _ = std::fs::remove_file(&out_file);
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 5 || f[0].starts_with('%') || f[0].starts_with('-') {
                continue;
            }
            let (Some(name), Ok(n)) = (f.last(), f[3].parse::<f64>()) else {
                continue;
            };
            calls.insert((*name).to_owned(), n);
        }
    }
    Ok((samples, calls))
}

/// Syscalls per refresh of a phase: a run with `k` rounds minus a run with
/// none, divided by `k`.
fn syscalls_per_round(phase: &str, root: &Path, warmup: usize) -> Result<BTreeMap<String, f64>> {
    let k = 4;
    let (_, with) = child(phase, root, k, warmup, true, None)?;
    let (_, without) = child(phase, root, 0, warmup, true, None)?;
    Ok(with
        .iter()
        .map(|(name, n)| {
            let d = (n - without.get(name).copied().unwrap_or(0.0)) / k as f64;
            (name.clone(), d)
        })
        .filter(|(_, d)| d.abs() >= 0.5)
        .collect())
}

fn fmt_calls(c: &BTreeMap<String, f64>) -> String {
    let total = c.get("total").copied().unwrap_or(0.0);
    let mut v: Vec<(&String, &f64)> = c.iter().filter(|(k, _)| *k != "total").collect();
    v.sort_by(|a, b| b.1.total_cmp(a.1));
    let parts: Vec<String> = v
        .iter()
        .take(4)
        .map(|(k, n)| format!("{k} {}", thousands(**n)))
        .collect();
    format!("{} ({})", thousands(total), parts.join(", "))
}

fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Every figure for one tree, printed as Markdown.
#[allow(clippy::too_many_lines)] // one report, read top to bottom
fn suite(
    args: &Args,
    root: &Path,
    label: &str,
    mutate: Option<&mut dyn Mutate>,
    nofile: (u64, u64),
) -> Result<()> {
    let (it, wu) = (args.refreshes, args.warmup);
    let sets = measure::list_files(root);
    println!("\n## {label}\n");
    let _watcher = if args.watch {
        Some(StopWatcher(start_watcher(root, args.watch_all)?))
    } else {
        None
    };
    println!(
        "groups: {}; files cgtop reads per refresh: {}; the issue's 4 files present: {}; \
         RLIMIT_NOFILE soft/hard: {}/{}; median of {it} refreshes after {wu} warm-up\n",
        sets.groups,
        sets.same.len(),
        sets.four.len(),
        nofile.0,
        nofile.1
    );
    let churn = mutate.is_some();
    let phases = measure::interleaved();

    // interleaved, the phases hold their descriptors at once: the
    // scanner, the collector's scanner, the pread loops (a scanner keeps
    // fewer: not cgroup.procs where pids.current is)
    // (and the scanner with every column: 5 more a group)
    let fds_needed = sets.same.len() as u64 * 4 + sets.groups as u64 * 5 + 1024;
    // the steady scan, the floor and the refresh: the ratios of the
    // targets, compared round by round whenever their descriptors fit
    let core = ["scan", "pread-same", "refresh"];
    let core_fds = sets.same.len() as u64 * 3 + 1024;
    let mut results = if nofile.0 >= fds_needed {
        measure::run_interleaved(&phases, root, it, wu)?
    } else if nofile.0 >= core_fds {
        println!(
            "note: RLIMIT_NOFILE {} < {fds_needed}: the steady scan, the floor and the refresh \
             run interleaved, the other phases one after the other\n",
            nofile.0
        );
        let mut both = measure::run_interleaved(&core, root, it, wu)?.into_iter();
        let mut v = Vec::new();
        for p in &phases {
            if core.contains(p) {
                v.push(both.next().unwrap_or_default());
            } else {
                v.extend(measure::run_interleaved(&[p], root, it, wu)?);
            }
        }
        v
    } else {
        println!(
            "note: RLIMIT_NOFILE {} < {fds_needed}: phases run one after the other, not \
             interleaved, so load drift on this machine weighs on the ratios\n",
            nofile.0
        );
        let mut v = Vec::new();
        for p in &phases {
            v.extend(measure::run_interleaved(&[p], root, it, wu)?);
        }
        v
    }
    .into_iter();
    let mut next = || results.next().unwrap_or_default();
    let (scan, walk, readdir, orc4, pread4) = (next(), next(), next(), next(), next());
    let (orc_same, pread_same, refresh, model, model_c) = (next(), next(), next(), next(), next());
    let (frame, key, scan_cols) = (next(), next(), next());
    // alone: its changes to the tree would make the other phases' scanners
    // walk too; it writes, so only on a tree we built
    let churn_s = if churn {
        measure::run_interleaved(&["scan-churn"], root, it, wu)?.pop()
    } else {
        None
    };
    let limited = if args.limited_nofile > 0 {
        // in a child: a hard limit, once lowered, cannot be raised again
        // without privilege
        eprintln!(
            "  running scan with RLIMIT_NOFILE {} ...",
            args.limited_nofile
        );
        Some(child("scan", root, it, wu, false, Some(args.limited_nofile))?.0)
    } else {
        None
    };
    let mut calls: BTreeMap<&str, String> = BTreeMap::new();
    if args.syscalls {
        let counted = phases
            .iter()
            .filter(|p| !p.starts_with("model") && **p != "frame" && **p != "key")
            .chain(churn.then_some(&"scan-churn"));
        for p in counted {
            progress(&format!("counting syscalls of {p} under strace ..."));
            calls.insert(p, fmt_calls(&syscalls_per_round(p, root, wu)?));
        }
    }
    let floor = pread_same.cpu_ms();
    let walk_only = (walk.cpu_ms() - scan.cpu_ms()).max(0.0);
    let every = cgtop::source::scan::ScanConfig::default().rewalk_every;
    let amortised = scan.cpu_ms() + walk_only / f64::from(every.max(1));

    let mut table = String::new();
    let _ = writeln!(
        table,
        "| per refresh | CPU ms | wall ms | files read | syscalls (strace) | × floor |"
    );
    let _ = writeln!(table, "|---|---:|---:|---:|---|---:|");
    let mut row = |name: &str, s: &Samples, key: &str| {
        let c = calls.get(key).map_or("", String::as_str);
        let _ = writeln!(
            table,
            "| {name} | {} | {} | {} | {c} | {:.2} |",
            ms(s.cpu_ms()),
            ms(s.wall_ms()),
            thousands(s.files as f64),
            s.cpu_ms() / floor
        );
    };
    row("cgtop `Scanner::scan`, steady (no walk)", &scan, "scan");
    row(
        "cgtop `Scanner::scan` with a re-walk after `invalidate()`",
        &walk,
        "scan-walk",
    );
    row(
        "cgtop `Scanner::scan`, steady, every column shown (+ memory.max, memory.swap.current, 3 × .pressure)",
        &scan_cols,
        "scan-columns",
    );
    row("plain readdir walk, no file read", &readdir, "readdir");
    row("open/read/close, the 4 files", &orc4, "orc4");
    row("kept-fd pread, the 4 files", &pread4, "pread4");
    row("open/read/close, cgtop's files", &orc_same, "orc-same");
    row(
        "**kept-fd pread, cgtop's files (the floor)**",
        &pread_same,
        "pread-same",
    );
    row(
        "`Collector::refresh` (scan + rates + inspection)",
        &refresh,
        "refresh",
    );
    if let Some(c) = &churn_s {
        row(
            "cgtop `Scanner::scan` right after a group came or went (two levels down)",
            c,
            "scan-churn",
        );
    }
    print!("{table}");
    print_laps(&refresh, &scan, floor);
    if let Some(c) = &churn_s {
        let rounds = c.cpu_ns.len().max(1) as f64;
        println!(
            "(after a group came or went, the scan listed {:.0} directories of {} instead of all)",
            c.extra("dirs_listed").unwrap_or(0.0) / rounds,
            sets.groups
        );
    }
    println!(
        "| cgtop walk alone (re-walk − steady) | {} | | | | {:.2} |",
        ms(walk_only),
        walk_only / floor
    );
    println!(
        "| cgtop scan amortised over rewalk_every = {every} | {} | | | | {:.2} |",
        ms(amortised),
        amortised / floor
    );
    println!();
    for (n, s) in [("pread4", &pread4), ("pread-same", &pread_same)] {
        if !s.note.is_empty() {
            println!("note ({n}): {}", s.note);
        }
    }
    let seen = scan.extra("groups").unwrap_or(0.0);
    if (seen - sets.groups as f64).abs() > 0.5 {
        println!(
            "WARNING: the scanner saw {seen} groups, the listing {}",
            sets.groups
        );
    }
    println!(
        "ratios: steady scan / floor = {:.2} (issue target ≤ 1.5); amortised / floor = {:.2}; \
         open-read-close / pread (4 files) = {:.1}; readdir walk / open-read-close (4 files) = {:.2}; \
         cgtop walk / open-read-close (4 files) = {:.2}",
        scan.cpu_ms() / floor,
        amortised / floor,
        orc4.cpu_ms() / pread4.cpu_ms(),
        readdir.cpu_ms() / orc4.cpu_ms(),
        walk_only / orc4.cpu_ms()
    );
    println!(
        "scanner: {} descriptors kept, fd_limited = {}, descriptors left free (of 256 tried) = {}; \
         the collector re-walked in {} of {} refreshes (warm-up included)",
        scan.extra("kept").unwrap_or(0.0),
        scan.extra("fd_limited").unwrap_or(0.0) > 0.0,
        scan.extra("free_fds").unwrap_or(0.0),
        refresh.extra("walked").unwrap_or(0.0),
        it + wu
    );
    if let Some(l) = &limited {
        println!(
            "with RLIMIT_NOFILE = {} (soft and hard): steady scan {} ms CPU ({:.2} × floor), {} kept, \
             fd_limited = {}, descriptors left free = {}",
            args.limited_nofile,
            ms(l.cpu_ms()),
            l.cpu_ms() / floor,
            l.extra("kept").unwrap_or(0.0),
            l.extra("fd_limited").unwrap_or(0.0) > 0.0,
            l.extra("free_fds").unwrap_or(0.0)
        );
    }
    println!();
    println!("| model and view | CPU ms | wall ms | rows |");
    println!("|---|---:|---:|---:|");
    for (name, s) in [
        (
            "`Tree::build` + `Tree::rows` sorted by CPU %, all expanded",
            &model,
        ),
        ("the same, every branch below the top collapsed", &model_c),
    ] {
        println!(
            "| {name} | {} | {} | {} |",
            ms(s.cpu_ms()),
            ms(s.wall_ms()),
            thousands(s.extra("rows").unwrap_or(0.0))
        );
    }
    for (name, s) in [
        (
            "one frame: `ui::render` of 120x40 into a buffer, tree all expanded",
            &frame,
        ),
        (
            "one key (`>`, re-sort) through `app::update`, rows rebuilt",
            &key,
        ),
    ] {
        println!(
            "| {name} | {} | {} | {} |",
            ms(s.cpu_ms()),
            ms(s.wall_ms()),
            thousands(s.extra("rows").unwrap_or(0.0))
        );
    }
    println!();

    memory(root, it)?;
    if let Some(m) = mutate {
        let [a, r, both] = detect(root, m)?;
        let f = |k: u32| {
            if k == u32::MAX {
                "never (25 tried)".to_owned()
            } else {
                k.to_string()
            }
        };
        println!(
            "detection (default ScanConfig, rewalk_every = {every}), refreshes until seen: new \
             group {}, removed group {}, one created and one removed in the same interval {}",
            f(a),
            f(r),
            f(both)
        );
    }
    if args.kmem {
        let files: Vec<PathBuf> = sets.same.iter().skip(1).map(|(p, _)| p.clone()).collect();
        let cap = (nofile.0.saturating_sub(512)) as usize;
        let files = &files[..files.len().min(cap)];
        let k = real::measure_kmem(files, 3)?;
        print_kmem(&k);
    }
    Ok(())
}

/// `Collector::refresh` step by step (`Collector::set_lap_timing`): the
/// median CPU time of each step, against the floor and the steady scan.
fn print_laps(refresh: &Samples, scan: &Samples, floor: f64) {
    let laps: Vec<(&str, f64)> = refresh
        .extra
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix("lap:")?, *v / 1e6)))
        .collect();
    if laps.is_empty() {
        return;
    }
    println!(
        "\n| `Collector::refresh`, step by step (median of each) | CPU ms | × floor |\n|---|---:|---:|"
    );
    for (name, t) in &laps {
        println!("| {name} | {} | {:.3} |", ms(*t), t / floor);
    }
    let rest: f64 = laps
        .iter()
        .filter(|(n, _)| *n != "scan")
        .map(|(_, t)| t)
        .sum();
    println!(
        "| all but the scan (sum of the medians) | {} | {:.3} |\n| the refresh − the steady \
         scan phase | {} | {:.3} |\n",
        ms(rest),
        rest / floor,
        ms(refresh.cpu_ms() - scan.cpu_ms()),
        (refresh.cpu_ms() - scan.cpu_ms()) / floor
    );
}

/// The resident memory figures: idle, the app after `it` refreshes, and
/// the app with an hour of history.
fn memory(root: &Path, it: usize) -> Result<()> {
    let (idle, _) = child("idle", root, 0, 0, false, None)?;
    let (app, _) = child("app", root, it.max(3), 0, false, None)?;
    let kb = |s: &Samples, k: &str| s.extra(k).unwrap_or(f64::NAN) / 1024.0;
    println!(
        "resident memory (child process holding a Collector after {} refreshes, the last \
         refresh, the tree and all rows): VmRSS {:.1} MiB, VmHWM {:.1} MiB; the same binary \
         idle: VmRSS {:.1} MiB (target < 50 MB)",
        it.max(3),
        kb(&app, "VmRSS_kB"),
        kb(&app, "VmHWM_kB"),
        kb(&idle, "VmRSS_kB")
    );
    progress("history: an App fed one simulated hour of refreshes");
    let (hist, _) = child("history", root, it.max(3), 0, false, None)?;
    println!(
        "resident memory with an hour of history (the same, in an App whose timeline was fed \
         {} refreshes of every group, and the inspected group's read kept for 60): VmRSS {:.1} \
         MiB, VmHWM {:.1} MiB; the timeline {:.1} MiB by its own count ({} groups); a push \
         took {:.0} us CPU (target < 100 MB)",
        measure::HOUR,
        kb(&hist, "VmRSS_kB"),
        kb(&hist, "VmHWM_kB"),
        hist.extra("timeline_bytes").unwrap_or(f64::NAN) / (1024.0 * 1024.0),
        hist.extra("groups_kept").unwrap_or(f64::NAN),
        hist.extra("push_cpu_us").unwrap_or(f64::NAN),
    );
    Ok(())
}

fn print_kmem(k: &real::Kmem) {
    println!(
        "\nkernel memory per kept descriptor ({} files of cgtop's hot set, median of 3 rounds), bytes per file:\n",
        k.files
    );
    println!("| step | slab objects | slab pages | meminfo Slab | MemAvailable drop | caches that grew (bytes/file) |");
    println!("|---|---:|---:|---:|---:|---|");
    let f = |x: Option<f64>| x.map_or("n/a".to_owned(), |v| format!("{v:.0}"));
    for (name, p) in [
        ("open", &k.open),
        ("first read", &k.first_read),
        ("second read", &k.second_read),
        ("close (after 300 ms)", &k.close),
    ] {
        let caches: Vec<String> = p
            .top_caches
            .iter()
            .map(|(n, b)| format!("{n} {b:.0}"))
            .collect();
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            f(p.slab_objects),
            f(p.slab_pages),
            f(p.slab_meminfo),
            f(p.avail_drop),
            caches.join(", ")
        );
    }
}
