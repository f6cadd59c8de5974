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
use cgtop::model::{GroupPath, HotExtras};
use cgtop::source::collector::{Collector, CollectorConfig, Refresh};
use cgtop::source::scan::{self, ScanConfig, Scanner};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

pub const PHASES: &[&str] = &[
    "scan",
    "scan-walk",
    "scan-churn",
    "readdir",
    "orc4",
    "pread4",
    "orc-same",
    "pread-same",
    "refresh",
    "model",
    "model-collapsed",
    "frame",
    "key",
    "scan-columns",
    "app",
    "history",
    "idle",
];

/// The phases compared round by round on one tree: all but the churn
/// (which changes the tree under the others), the whole app and the idle
/// process, which main.rs runs apart.
pub fn interleaved() -> Vec<&'static str> {
    PHASES
        .iter()
        .copied()
        .filter(|p| !matches!(*p, "scan-churn" | "app" | "history" | "idle"))
        .collect()
}

/// No CPU clock (`--phase` under valgrind, whose vDSO rustix's
/// `clock_gettime` cannot parse: every CPU time reads 0; callgrind counts
/// instructions instead).
pub static NO_CPU_CLOCK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// This thread's CPU time ([`cgtop::source::collector::thread_cpu_time`]),
/// or 0 with [`NO_CPU_CLOCK`].
pub fn thread_cpu_time() -> Duration {
    if NO_CPU_CLOCK.load(std::sync::atomic::Ordering::Relaxed) {
        return Duration::ZERO;
    }
    cgtop::source::collector::thread_cpu_time()
}

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

/// The group the collector inspects (the UI's selection).
pub fn inspected_of(root: &Path) -> GroupPath {
    if root.join(crate::fake::INSPECTED).is_dir() {
        return GroupPath::new(crate::fake::INSPECTED);
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

/// The scanner settings cgtop starts with: the default, with the
/// descriptor budget decided as `main` decides it (raising RLIMIT_NOFILE).
fn start_up_scan_config() -> ScanConfig {
    ScanConfig {
        max_kept: scan::fd_budget(ScanConfig::default().max_kept),
        ..ScanConfig::default()
    }
}

fn collector(root: &Path) -> Collector {
    let mut c = Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: start_up_scan_config(),
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    });
    // under valgrind (`--no-cpu-clock`) no group is inspected: its read
    // asks rustix for the page size, whose auxv parsing valgrind's vDSO
    // breaks (the inspection is measured by the refresh's laps instead)
    if !NO_CPU_CLOCK.load(std::sync::atomic::Ordering::Relaxed) {
        c.set_inspected(Some(inspected_of(root)));
    }
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

/// Opens `files` in order until the descriptor limit stops it (a file
/// that fails otherwise stops it too, so that the result lines up with
/// `files`).
fn open_all(files: &[(PathBuf, bool)]) -> Vec<(File, bool)> {
    let mut out = Vec::with_capacity(files.len());
    for (p, multi) in files {
        match File::open(p) {
            Ok(f) => out.push((f, *multi)),
            Err(_) => break,
        }
    }
    out
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
            ..RowOptions::default()
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

/// A measured phase: set up when made, then one refresh's worth of work
/// per `round`, which returns the files it read.
trait Phase {
    /// Untimed, before each round.
    fn prepare(&mut self) -> Result<()> {
        Ok(())
    }
    fn round(&mut self) -> Result<u64>;
    /// Figures about the phase after its rounds.
    fn extra(&mut self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// Factor to scale the times by, and why (a loop that could keep only
    /// part of its files open).
    fn scale(&self) -> Option<(f64, String)> {
        None
    }
}

/// A steady scan right after a group came or went: the walk that the
/// start group's nr_descendants triggers, as on a busy host. Before each
/// round a group `cgtop-bench-churn` is created or removed (real cgroup2),
/// or the start group's cgroup.stat changes (a tree without a kernel).
struct ChurnPhase {
    s: Rc<RefCell<Scanner>>,
    root: PathBuf,
    /// Where the group comes and goes: two levels down (a service of a
    /// slice, a pod of kubepods), as on a busy host.
    parent: PathBuf,
    real: bool,
    toggle: bool,
    walked: u64,
    dirs_listed: u64,
}

/// A directory two levels below `root` (the first in name order), or the
/// deepest there is.
fn churn_parent(root: &Path) -> PathBuf {
    let mut at = root.to_path_buf();
    for _ in 0..2 {
        let mut dirs: Vec<PathBuf> = fs::read_dir(&at)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        match dirs.into_iter().next() {
            Some(d) => at = d,
            None => break,
        }
    }
    at
}

const CHURN: &str = "cgtop-bench-churn";

impl Phase for ChurnPhase {
    fn prepare(&mut self) -> Result<()> {
        self.toggle = !self.toggle;
        let d = self.parent.join(CHURN);
        if self.toggle {
            fs::create_dir(&d)?;
        } else {
            fs::remove_dir(&d)?;
        }
        if !self.real {
            // what the kernel does: nr_descendants of every ancestor moves
            let mut at = Some(self.parent.as_path());
            while let Some(dir) = at.filter(|d| d.starts_with(&self.root)) {
                let stat = dir.join("cgroup.stat");
                let text = fs::read_to_string(&stat)?;
                let n = cgtop::cgroupfs::CgroupStat::parse(&text)
                    .nr_descendants
                    .unwrap_or(0);
                let n = if self.toggle { n + 1 } else { n - 1 };
                fs::write(&stat, crate::fake::cgroup_stat(n))?;
                at = dir.parent();
            }
        }
        Ok(())
    }
    fn round(&mut self) -> Result<u64> {
        let (_, cost) = self.s.borrow_mut().scan();
        self.walked += u64::from(cost.walked);
        self.dirs_listed += cost.dirs_listed;
        Ok(cost.files_read)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        vec![
            ("walked".into(), self.walked as f64),
            ("dirs_listed".into(), self.dirs_listed as f64),
        ]
    }
}

impl Drop for ChurnPhase {
    fn drop(&mut self) {
        // the group is there after an odd number of rounds: remove it (and,
        // on tmpfs, put the ancestors' counts back), so that the tree can be
        // removed and measured again
        if self.toggle {
            let _ = self.prepare();
        }
    }
}

struct ScanPhase {
    /// Shared by "scan" and "scan-walk": a steady round after a walk round
    /// is still steady, and one scanner's descriptors are enough.
    s: Rc<RefCell<Scanner>>,
    walk: bool,
    groups: usize,
    limited: bool,
}

impl Phase for ScanPhase {
    fn round(&mut self) -> Result<u64> {
        let mut s = self.s.borrow_mut();
        if self.walk {
            s.invalidate();
        }
        let (g, cost) = s.scan();
        if cost.walked && !self.walk {
            bail!("the steady scan re-walked: the tree changed during the benchmark");
        }
        self.groups = g.len();
        self.limited = cost.fd_limited;
        Ok(cost.files_read)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        vec![
            ("groups".into(), self.groups as f64),
            ("kept".into(), self.s.borrow().kept() as f64),
            ("fd_limited".into(), if self.limited { 1.0 } else { 0.0 }),
            ("free_fds".into(), free_fds(256) as f64),
        ]
    }
}

struct ReaddirPhase(PathBuf);

impl Phase for ReaddirPhase {
    fn round(&mut self) -> Result<u64> {
        Ok(readdir_walk(&self.0))
    }
}

struct OrcPhase {
    files: Vec<(PathBuf, bool)>,
    buf: Vec<u8>,
}

impl Phase for OrcPhase {
    fn round(&mut self) -> Result<u64> {
        let mut n = 0;
        for (p, multi) in &self.files {
            n += u64::from(orc_file(p, &mut self.buf, *multi));
        }
        Ok(n)
    }
}

/// The descriptors of cgtop's files, opened once and shared by both
/// pread loops (the four files are a subset).
struct KeptFiles {
    files: Vec<(PathBuf, File, bool)>,
    wanted: usize,
}

struct PreadPhase {
    kept: Rc<KeptFiles>,
    /// Indexes into `kept.files` this loop reads.
    pick: Vec<usize>,
    /// How many files the loop should read (more than `pick` when the
    /// descriptor limit stopped the opening).
    total: usize,
    buf: Vec<u8>,
}

impl Phase for PreadPhase {
    fn round(&mut self) -> Result<u64> {
        let mut n = 0;
        for &i in &self.pick {
            let (_, f, multi) = &self.kept.files[i];
            n += u64::from(pread_file(f, &mut self.buf, *multi));
        }
        Ok(n)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        vec![("kept".into(), self.pick.len() as f64)]
    }
    fn scale(&self) -> Option<(f64, String)> {
        (self.pick.len() < self.total).then(|| {
            let f = self.total as f64 / self.pick.len().max(1) as f64;
            let why = format!(
                "only {} of {} files could be kept open; times scaled by {f:.2}",
                self.pick.len(),
                self.total
            );
            (f, why)
        })
    }
}

struct RefreshPhase {
    c: Collector,
    t0: Instant,
    walked: u64,
    /// Each step's CPU time in every round but the first (which has no
    /// rates yet), by name in the order the steps ran.
    laps: Vec<(&'static str, Vec<u64>)>,
    rounds: usize,
}

impl Phase for RefreshPhase {
    fn round(&mut self) -> Result<u64> {
        let r = self.c.refresh(self.t0.elapsed());
        self.walked += u64::from(r.snapshot.cost.walked);
        self.rounds += 1;
        if let (Some(l), true) = (self.c.laps(), self.rounds > 1) {
            for (name, d) in &l.steps {
                let ns = d.as_nanos() as u64;
                if let Some((_, v)) = self.laps.iter_mut().find(|(n, _)| n == name) {
                    v.push(ns);
                } else {
                    self.laps.push((name, vec![ns]));
                }
            }
        }
        Ok(r.snapshot.cost.files_read)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        let mut out = vec![("walked".into(), self.walked as f64)];
        // a step that did not run in every round (the devices' listing
        // after a walk) counts 0 in the others
        let n = self.rounds.saturating_sub(1);
        for (name, v) in &self.laps {
            let mut v = v.clone();
            v.resize(n.max(v.len()), 0);
            out.push((format!("lap:{name}"), median(&v)));
        }
        out
    }
}

struct ModelPhase {
    r: Refresh,
    keys: Vec<f64>,
    collapsed: Option<HashSet<GroupPath>>,
    rows: usize,
}

impl Phase for ModelPhase {
    fn round(&mut self) -> Result<u64> {
        self.rows = model_round(&self.r, &self.keys, self.collapsed.as_ref());
        Ok(0)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        vec![("rows".into(), self.rows as f64)]
    }
}

/// One frame: `ui::render` of the whole screen (120x40) into a ratatui
/// test buffer, with every group of the tree expanded. The view draws only
/// the rows on screen, whatever the tree's size.
struct FramePhase {
    app: cgtop::app::App,
    term: ratatui::Terminal<ratatui::backend::TestBackend>,
    theme: cgtop::ui::Theme,
}

impl Phase for FramePhase {
    fn round(&mut self) -> Result<u64> {
        let (app, theme) = (&self.app, &self.theme);
        self.term
            .draw(|f| cgtop::ui::render(f, app, theme))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(0)
    }
}

/// One key that re-orders the tree (`>`: the next sort column): what an
/// operator waits for between pressing it and the next frame, without the
/// frame.
struct KeyPhase {
    app: cgtop::app::App,
}

impl Phase for KeyPhase {
    fn round(&mut self) -> Result<u64> {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let ev = KeyEvent::new(KeyCode::Char('>'), KeyModifiers::NONE);
        cgtop::app::update(&mut self.app, cgtop::app::Msg::Key(ev));
        Ok(0)
    }
    fn extra(&mut self) -> Vec<(String, f64)> {
        vec![("rows".into(), self.app.rows.len() as f64)]
    }
}

/// An app holding two refreshes of the tree at `root`, sized 120x40.
fn app_on(root: &Path) -> cgtop::app::App {
    use cgtop::app::{update, App, HostInfo, Msg};
    use cgtop::model::{MountInfo, MountMode};
    use cgtop::source::collector::Collected;
    let mount = MountInfo {
        root: root.to_path_buf(),
        mode: MountMode::Directory,
    };
    let mut app = App::new(
        HostInfo::default(),
        mount,
        GroupPath::root(),
        Duration::from_secs(1),
    );
    update(
        &mut app,
        Msg::Resized {
            width: 120,
            height: 40,
            tree_rows: cgtop::ui::tree_rows_for(120, 40),
        },
    );
    update(
        &mut app,
        Msg::Collected(Collected::Refresh(Box::new(two_refreshes(root)))),
    );
    app
}

/// State that phases made together share, to need fewer descriptors.
#[derive(Default)]
struct Shared {
    scanner: Option<Rc<RefCell<Scanner>>>,
    kept: Option<Rc<KeptFiles>>,
}

/// One scanner for "scan", "scan-walk" and "scan-churn": each of them
/// leaves it steady for the next (nothing changes between rounds but what
/// a round does itself).
fn shared_scanner<'a>(shared: &'a mut Shared, root: &Path) -> &'a Rc<RefCell<Scanner>> {
    shared.scanner.get_or_insert_with(|| {
        // no periodic re-walk: "scan" is the steady state
        let mut s = Scanner::new(
            root.to_path_buf(),
            ScanConfig {
                rewalk_every: 0,
                ..start_up_scan_config()
            },
        );
        // the first scan lists the tree and opens the files
        s.scan();
        Rc::new(RefCell::new(s))
    })
}

/// Sets a phase up (untimed).
fn make(phase: &str, root: &Path, shared: &mut Shared) -> Result<Box<dyn Phase>> {
    Ok(match phase {
        "scan" | "scan-walk" => {
            let s = shared_scanner(shared, root);
            Box::new(ScanPhase {
                s: Rc::clone(s),
                walk: phase == "scan-walk",
                groups: 0,
                limited: false,
            })
        }
        "scan-churn" => {
            let real = rustix::fs::statfs(root)
                .is_ok_and(|s| i128::from(s.f_type) == crate::real::CGROUP2_MAGIC);
            Box::new(ChurnPhase {
                s: Rc::clone(shared_scanner(shared, root)),
                root: root.to_path_buf(),
                parent: churn_parent(root),
                real,
                toggle: false,
                walked: 0,
                dirs_listed: 0,
            })
        }
        // the steady scan with every extra column shown (MEM%, SWAP, PSI%:
        // memory.max, memory.swap.current and the three .pressure files),
        // on a scanner of its own
        "scan-columns" => {
            let mut s = Scanner::new(
                root.to_path_buf(),
                ScanConfig {
                    rewalk_every: 0,
                    ..start_up_scan_config()
                },
            );
            s.set_extras(HotExtras {
                memory_max: true,
                swap: true,
                pressure: true,
            });
            s.scan();
            Box::new(ScanPhase {
                s: Rc::new(RefCell::new(s)),
                walk: false,
                groups: 0,
                limited: false,
            })
        }
        "readdir" => Box::new(ReaddirPhase(root.to_path_buf())),
        "orc4" | "pread4" | "orc-same" | "pread-same" => {
            let sets = list_files(root);
            let four = phase.ends_with('4');
            let buf = vec![0u8; 64 * 1024];
            if phase.starts_with("orc") {
                let files: Vec<(PathBuf, bool)> = if four {
                    sets.four.into_iter().map(|p| (p, false)).collect()
                } else {
                    sets.same
                };
                Box::new(OrcPhase { files, buf })
            } else {
                let kept = shared.kept.get_or_insert_with(|| {
                    let wanted = sets.same.len();
                    let files = open_all(&sets.same)
                        .into_iter()
                        .zip(&sets.same)
                        .map(|((f, multi), (p, _))| (p.clone(), f, multi))
                        .collect();
                    Rc::new(KeptFiles { files, wanted })
                });
                let (pick, total) = if four {
                    let want: HashSet<&PathBuf> = sets.four.iter().collect();
                    let pick = (0..kept.files.len())
                        .filter(|&i| want.contains(&kept.files[i].0))
                        .collect();
                    (pick, sets.four.len())
                } else {
                    ((0..kept.files.len()).collect(), kept.wanted)
                };
                Box::new(PreadPhase {
                    kept: Rc::clone(kept),
                    pick,
                    total,
                    buf,
                })
            }
        }
        "refresh" => Box::new(RefreshPhase {
            c: {
                let mut c = collector(root);
                c.set_lap_timing(!NO_CPU_CLOCK.load(std::sync::atomic::Ordering::Relaxed));
                c
            },
            t0: Instant::now(),
            walked: 0,
            laps: Vec::new(),
            rounds: 0,
        }),
        "model" | "model-collapsed" => {
            let r = two_refreshes(root);
            let keys = sort_keys(&r);
            // "collapsed": every branch but the top collapsed, as a fresh
            // start on a big host would show it
            let collapsed: Option<HashSet<GroupPath>> = (phase == "model-collapsed").then(|| {
                let t = Tree::build(&r.snapshot.groups);
                t.branches().filter(|p| !p.is_root()).cloned().collect()
            });
            Box::new(ModelPhase {
                r,
                keys,
                collapsed,
                rows: 0,
            })
        }
        "frame" => Box::new(FramePhase {
            app: app_on(root),
            term: ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40))
                .map_err(|e| anyhow::anyhow!("{e}"))?,
            theme: cgtop::ui::Theme::mono(),
        }),
        "key" => Box::new(KeyPhase { app: app_on(root) }),
        _ => bail!("unknown phase {phase:?}; phases: {}", PHASES.join(", ")),
    })
}

/// Runs the phases' rounds in turn (round 1 of each, then round 2 of
/// each, ...), so that every phase sees the same machine: on a shared
/// machine the load drifts, and the ratios between phases are the point.
/// Warm-up rounds are untimed.
pub fn run_interleaved(
    phases: &[&str],
    root: &Path,
    iters: usize,
    warmup: usize,
) -> Result<Vec<Samples>> {
    let mut made = Vec::new();
    let mut shared = Shared::default();
    for p in phases {
        crate::check_stop()?;
        crate::progress(&format!("setting up {p} ..."));
        made.push(make(p, root, &mut shared)?);
    }
    let mut out = vec![Samples::default(); phases.len()];
    for r in 0..warmup + iters {
        crate::progress(&format!("round {}/{} ...", r + 1, warmup + iters));
        for (p, s) in made.iter_mut().zip(out.iter_mut()) {
            crate::check_stop()?;
            p.prepare()?;
            let w = Instant::now();
            let c = thread_cpu_time();
            let files = p.round()?;
            let cpu = thread_cpu_time().saturating_sub(c);
            let wall = w.elapsed();
            if r >= warmup {
                s.files = files;
                s.cpu_ns.push(cpu.as_nanos() as u64);
                s.wall_ns.push(wall.as_nanos() as u64);
            }
        }
    }
    for (p, s) in made.iter_mut().zip(out.iter_mut()) {
        s.extra = p.extra();
        if let Some((f, why)) = p.scale() {
            s.scale(f);
            s.note = why;
        }
    }
    Ok(out)
}

/// Runs one phase on the tree at `root`.
pub fn run(phase: &str, root: &Path, iters: usize, warmup: usize) -> Result<Samples> {
    Ok(match phase {
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
        "history" => history(root, iters)?,
        "idle" => {
            let (rss, hwm) = rss_kb();
            Samples {
                extra: vec![("VmRSS_kB".into(), rss), ("VmHWM_kB".into(), hwm)],
                ..Samples::default()
            }
        }
        _ => run_interleaved(&[phase], root, iters, warmup)?
            .pop()
            .unwrap_or_default(),
    })
}

/// How many descriptors are still free (up to `max`): what the rest of the
/// program (inspection, /proc, writes, the terminal) has left.
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

/// Refreshes in the simulated hour of the "history" phase (one a second).
pub const HOUR: u64 = 3_600;

/// What the running TUI holds after an hour (issue 9's budget: < 100 MB
/// at 10,000 groups): the "app" phase's collector, refresh, tree and rows,
/// in an `App` that was given the refresh, plus its timeline fed one
/// simulated hour of refreshes (3,600 pushes of every group, a fake clock
/// a second apart, figures varied per group and second so that no two
/// samples are alike) and the inspected group's full read kept for the
/// last 60 refreshes, as `app::on_refresh` keeps them.
fn history(root: &Path, iters: usize) -> Result<Samples> {
    use cgtop::app::{self, App, HostInfo, Msg};
    use cgtop::model::time::timeline::{Entry, Figure, Stamp};
    use cgtop::model::{GroupRates, MountInfo, MountMode};
    use cgtop::source::collector::Collected;
    let mut c = collector(root);
    let mut last = None;
    for i in 0..iters.max(2) {
        crate::check_stop()?;
        last = Some(c.refresh(Duration::from_secs(i as u64)));
    }
    let Some(r) = last else {
        bail!("no refresh");
    };
    let mount = MountInfo {
        root: root.to_path_buf(),
        mode: MountMode::Directory,
    };
    let mut a = App::new(
        HostInfo::default(),
        mount,
        GroupPath::root(),
        Duration::from_secs(1),
    );
    let none = GroupRates::default();
    let base: Vec<Entry> = r
        .snapshot
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| Entry::of(g, r.rates.get(i).unwrap_or(&none)))
        .collect();
    let inspection = r.inspection.clone();
    let t0 = Instant::now();
    let c0 = thread_cpu_time();
    for s in 0..HOUR {
        if s % 60 == 0 {
            crate::check_stop()?;
        }
        let stamp = Stamp {
            at: Duration::from_secs(100 + s),
            unix_s: 1_700_000_000.0 + s as f64,
        };
        let groups = r
            .snapshot
            .groups
            .iter()
            .zip(&base)
            .enumerate()
            .map(|(i, (g, e))| {
                let k = crate::fake::mix(s * 65_537 + i as u64);
                let e = e.with(Figure::Cpu, Some((k % 10_000) as f64 / 100.0)).with(
                    Figure::Memory,
                    e.get(Figure::Memory).map(|m| m + (k % 4096) as f64),
                );
                (&g.path, e)
            });
        a.timeline.push(stamp, groups);
        if let Some(f) = &inspection {
            a.kept.keep(stamp.at, f);
        }
    }
    let push_cpu = thread_cpu_time().saturating_sub(c0);
    let push_wall = t0.elapsed();
    let timeline_bytes = a.timeline.bytes();
    // the app holds the refresh, its tree and rows as it does live
    app::update(&mut a, Msg::Collected(Collected::Refresh(Box::new(r))));
    let (rss, hwm) = rss_kb();
    let mut out = Samples::default();
    out.extra.push(("VmRSS_kB".into(), rss));
    out.extra.push(("VmHWM_kB".into(), hwm));
    out.extra
        .push(("timeline_bytes".into(), timeline_bytes as f64));
    out.extra
        .push(("groups_kept".into(), a.timeline.groups() as f64));
    out.extra.push((
        "push_cpu_us".into(),
        push_cpu.as_secs_f64() * 1e6 / HOUR as f64,
    ));
    out.extra.push((
        "push_wall_us".into(),
        push_wall.as_secs_f64() * 1e6 / HOUR as f64,
    ));
    std::hint::black_box(&a);
    Ok(out)
}
