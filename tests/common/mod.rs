//! Shared helpers of the integration tests: fixture trees, a collector
//! that reads them at fixed times, an app with fixed host facts, and
//! key messages (none of these read the clock, the host's name or /sys);
//! and for the real-kernel and terminal tests: the cgroup sandbox
//! ([`sandbox`]), the tmux driver ([`tmux`]), the reader of `-b` text
//! ([`batch`]), and small /proc helpers.
#![allow(dead_code)]
// each test crate uses its own part of this module
// test helpers: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

pub mod batch;
pub mod kernel_texts;
pub mod lab;
pub mod metrics_parse;
pub mod prometheus;
pub mod sandbox;
pub mod sandbox_v1;
pub mod tmux;
pub mod v1detail_fixture;

use cgtop::app::{self, App, Effect, HostInfo, Msg};
use cgtop::model::{GroupPath, MountInfo, MountMode, ProcessInfo};
use cgtop::source::collector::{
    Collected, Collector, CollectorConfig, Command, Inspection, Refresh,
};
use cgtop::source::scan::ScanConfig;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A fixture copied into a temporary directory, for tests that change
/// the tree between refreshes.
pub fn copy_fixture(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(name), t.path());
    t
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dst = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).expect("copy");
        }
    }
}

/// The facts the header shows, fixed so that snapshots do not depend on
/// the machine that runs the tests.
pub fn host() -> HostInfo {
    HostInfo {
        hostname: "testhost".into(),
        kernel: "6.1.0-test".into(),
        ncpus: 2,
        swap_total: None,
    }
}

/// The fixture is shown as the machine it was captured on: the mount
/// point is fixed text, not the checkout's path.
pub fn pure_v2_mount() -> MountInfo {
    MountInfo {
        root: "/sys/fs/cgroup".into(),
        mode: MountMode::PureV2,
    }
}

pub fn hybrid_mount() -> MountInfo {
    MountInfo {
        root: "/sys/fs/cgroup/unified".into(),
        mode: MountMode::Hybrid {
            v1_controllers: [
                "cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids",
            ]
            .map(String::from)
            .to_vec(),
        },
    }
}

/// What `cgtop --root tests/fixtures/NAME` shows.
pub fn directory_mount(name: &str) -> MountInfo {
    MountInfo {
        root: Path::new("tests/fixtures").join(name),
        mode: MountMode::Directory,
    }
}

pub fn collector(root: &Path) -> Collector {
    let mut c = Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: fixture("sys-dev-block"),
    });
    // every hot file read on every refresh, so that the files a screen
    // says a refresh read ("N files") and the counts tests compare do not
    // depend on how many refreshes came before (a watched cgroup.events
    // is read only after it changed: the scanner's tests and
    // tests/kernel/populated_and_frozen.rs)
    c.set_watching(false);
    c
}

/// A collector over every hierarchy of `hiers` (as `cgtop` runs on a v1
/// or hybrid host: each hierarchy scanned and merged), its primary's
/// directory `root`.
pub fn collector_of_layout(
    root: &Path,
    hiers: &std::sync::Arc<cgtop::source::hier::Hiers>,
) -> Collector {
    let primary = hiers
        .layout
        .primary()
        .and_then(|p| hiers.get(p))
        .expect("a primary hierarchy");
    Collector::with_hiers(
        CollectorConfig {
            root: root.to_path_buf(),
            start: GroupPath::root(),
            scan: ScanConfig::default(),
            full_detail: false,
            sys_dev_block: fixture("sys-dev-block"),
        },
        std::sync::Arc::clone(primary),
        hiers,
    )
}

/// The options of `cgtop -b -n 1` (read-only, brief, the default
/// columns) from the root of the mount /proc/self/mountinfo names: a test
/// sets what it runs differently with `Options { start, ..options() }`.
pub fn options() -> cgtop::options::Options {
    cgtop::options::Options {
        start: GroupPath::root(),
        root: None,
        interval: Duration::from_secs(1),
        depth: None,
        output: cgtop::options::Output::Text,
        iterations: Some(1),
        read_only: true,
        mouse: false,
        machine_cpu: false,
        max_kept_fds: None,
        brief: true,
        columns: cgtop::render::columns::Column::DEFAULT.to_vec(),
        filter: None,
    }
}

/// The mount `cgtop` finds for `o` and the collector it runs there: every
/// hierarchy of the layout scanned and merged.
pub fn collector_for(o: &cgtop::options::Options, full_detail: bool) -> (MountInfo, Collector) {
    let (m, hier, hiers) = cgtop::run::locate(o).unwrap_or_else(|e| panic!("{e}"));
    let c = Collector::with_hiers(
        cgtop::run::collector_config(o, &m, full_detail),
        hier,
        &hiers,
    );
    (m, c)
}

/// The event watcher's settings for the groups from `start` down: no
/// depth or watch limit, no kernel log, no v1 memory hierarchy, its clock
/// started now at a fixed UNIX time (2023-11-14 22:13:20 UTC); a test sets
/// what it watches differently with `WatchConfig { kmsg, ..watch_config(start) }`.
pub fn watch_config(start: GroupPath) -> cgtop::source::events::WatchConfig {
    cgtop::source::events::WatchConfig {
        start,
        max_depth: None,
        max_watches: None,
        kmsg: None,
        mapping: None,
        clock: Instant::now(),
        clock_unix: Duration::from_secs(1_700_000_000),
        v1_memory: None,
    }
}

/// One refresh at `secs` seconds. The processes of the inspected group are
/// dropped: the fixtures' PIDs may be live processes of the test host.
pub fn refresh(c: &mut Collector, secs: f64) -> Refresh {
    let mut r = c.refresh(Duration::from_secs_f64(secs));
    if let Some(f) = &mut r.inspection {
        f.processes.clear();
    }
    r
}

/// Applies a message, and passes the inspect commands on to the collector,
/// as the main loop does. Returns the effects.
pub fn send(app: &mut App, c: &mut Collector, msg: Msg) -> Vec<Effect> {
    let fx = app::update(app, msg);
    for e in &fx {
        if let Effect::Collector(Command::Inspect(p)) = e {
            c.set_inspected(p.clone());
        }
    }
    fx
}

/// A refresh read and delivered to the app.
pub fn tick(app: &mut App, c: &mut Collector, secs: f64) -> Vec<Effect> {
    let r = refresh(c, secs);
    send(app, c, Msg::Collected(Collected::Refresh(Box::new(r))))
}

/// Reads the selected group in full and delivers it, as the collector
/// thread does right after the selection moved.
pub fn read_inspection(app: &mut App, c: &mut Collector, secs: f64) {
    let Some(p) = app.selected.clone() else {
        return;
    };
    let mut f = c.read_inspection(&p, None, secs);
    f.processes.clear();
    app::update(app, Msg::Collected(Collected::Inspection(Box::new(f))));
}

/// The app on a fixture, sized like a terminal of `w` x `h`, after one
/// refresh at t = 0 s.
pub fn app_on(root: &Path, mount: MountInfo, w: u16, h: u16) -> (App, Collector) {
    let mut a = App::new(host(), mount, GroupPath::root(), Duration::from_secs(1));
    resize(&mut a, w, h);
    let mut c = collector(root);
    tick(&mut a, &mut c, 0.0);
    (a, c)
}

pub fn resize(app: &mut App, w: u16, h: u16) {
    app::update(
        app,
        Msg::Resized {
            width: w,
            height: h,
            tree_rows: cgtop::ui::tree_rows_for(w, h),
        },
    );
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ch(c: char) -> Msg {
    key(KeyCode::Char(c))
}

pub fn shift(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::SHIFT))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// Types a string, one key per character.
pub fn type_text(app: &mut App, c: &mut Collector, s: &str) -> Vec<Effect> {
    s.chars().flat_map(|x| send(app, c, ch(x))).collect()
}

/// Moves the cursor onto the row of `path` with j/k.
pub fn select(app: &mut App, c: &mut Collector, path: &str) {
    let want = GroupPath::new(path);
    let target = visible_paths(app)
        .iter()
        .position(|p| *p == want)
        .unwrap_or_else(|| panic!("{path} is not a visible row"));
    while app.cursor < target {
        send(app, c, ch('j'));
    }
    while app.cursor > target {
        send(app, c, ch('k'));
    }
    assert_eq!(app.selected.as_ref(), Some(&want));
}

pub fn visible_paths(app: &App) -> Vec<GroupPath> {
    let d = app.data.as_ref().expect("a refresh arrived");
    app.rows
        .iter()
        .map(|r| d.tree.nodes[r.node].path.clone())
        .collect()
}

/// The visible rows as an indented outline ("  name" per level), with
/// '+' on a collapsed branch: compare with the ASCII sketches.
pub fn outline(app: &App) -> Vec<String> {
    let d = app.data.as_ref().expect("a refresh arrived");
    app.rows
        .iter()
        .map(|r| {
            format!(
                "{}{}{}",
                "  ".repeat(r.depth),
                d.tree.nodes[r.node].path.name_display(),
                if r.collapsed { " +" } else { "" }
            )
        })
        .collect()
}

pub fn selected(app: &App) -> String {
    app.selected
        .as_ref()
        .map_or_else(|| "(none)".into(), ToString::to_string)
}

/// Rewrites one flat-keyed file ("key value" lines) of a group, adding
/// `add` to the named keys: a counter that moved between two refreshes.
pub fn bump(root: &Path, group: &str, file: &str, add: &[(&str, u64)]) {
    let p = root.join(group).join(file);
    let text = std::fs::read_to_string(&p).expect("read counter file");
    let out: String = text
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            match (it.next(), it.next().and_then(|v| v.parse::<u64>().ok())) {
                (Some(k), Some(v)) => {
                    let plus = add.iter().find(|(n, _)| *n == k).map_or(0, |(_, a)| *a);
                    format!("{k} {}\n", v + plus)
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    std::fs::write(&p, out).expect("write counter file");
}

/// CPU time used by a group (and, as cpu.stat is hierarchical, by each of
/// its ancestors): `usec` microseconds, 3/5 of it user time.
pub fn burn_cpu(root: &Path, group: &str, usec: u64) {
    let user_part = usec * 3 / 5;
    let add = [
        ("usage_usec", usec),
        ("user_usec", user_part),
        ("system_usec", usec - user_part),
    ];
    for a in GroupPath::new(group).ancestors() {
        bump(root, rel(&a), "cpu.stat", &add);
    }
}

/// Removes a group as `rmdir` would, and lowers nr_descendants in every
/// ancestor as the kernel does (the scanner re-lists the subtrees on that).
pub fn remove_group(root: &Path, group: &str) {
    let dir = root.join(group);
    let n = walkdirs(&dir);
    std::fs::remove_dir_all(&dir).expect("remove group");
    count_descendants(root, group, -n);
}

/// Adds `by` to nr_descendants in the cgroup.stat of every ancestor of
/// `group` that has one, as the kernel does when `by` groups are made
/// (positive) or removed (negative) below it.
pub fn count_descendants(root: &Path, group: &str, by: isize) {
    for a in Path::new(group).ancestors().skip(1) {
        let stat = root.join(a).join("cgroup.stat");
        let Ok(text) = std::fs::read_to_string(&stat) else {
            continue;
        };
        let out: String = text
            .lines()
            .map(|l| match l.strip_prefix("nr_descendants ") {
                Some(v) => format!(
                    "nr_descendants {}\n",
                    v.trim().parse::<isize>().expect("number") + by
                ),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(stat, out).expect("write cgroup.stat");
    }
}

/// How many groups `d` is, itself and every directory below.
pub fn walkdirs(d: &Path) -> isize {
    1 + std::fs::read_dir(d)
        .expect("read_dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| walkdirs(&e.path()))
        .sum::<isize>()
}

/// A process as the process list shows it, made up for the view tests.
pub fn process(pid: u32, user: &str, cpu: f64, rss_mib: u64, cmd: &str) -> ProcessInfo {
    ProcessInfo {
        pid,
        user: user.into(),
        state: 'S',
        cpu_pct: Some(cpu),
        rss_bytes: rss_mib << 20,
        cmdline: cmd.into(),
    }
}

/// Replaces the inspected group's process list (the view tests' stand-in for
/// /proc).
pub fn set_processes(app: &mut App, procs: Vec<ProcessInfo>) {
    let f: &mut Inspection = app.inspection.as_mut().expect("an inspection was read");
    f.processes = procs;
}

/// The relative path of a fixture group as text (fixture names are UTF-8).
pub fn rel(p: &GroupPath) -> &str {
    std::str::from_utf8(p.as_bytes()).expect("a fixture path is UTF-8")
}

/// Disk IO by a group on device `dev` ("254:0"), added to its io.stat and
/// to the io.stat of each ancestor that has one (io.stat is hierarchical).
pub fn do_io(root: &Path, group: &str, dev: &str, rbytes: u64, wbytes: u64, rios: u64, wios: u64) {
    for a in GroupPath::new(group).ancestors() {
        let p = root.join(a.as_rel_path()).join("io.stat");
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let mut found = false;
        let mut out = String::new();
        for l in text.lines() {
            let mut it = l.split_whitespace();
            if it.next() == Some(dev) {
                found = true;
                let mut line = dev.to_owned();
                for kv in it {
                    let (k, v) = kv.split_once('=').expect("key=value");
                    let v: u64 = v.parse().expect("number");
                    let add = match k {
                        "rbytes" => rbytes,
                        "wbytes" => wbytes,
                        "rios" => rios,
                        "wios" => wios,
                        _ => 0,
                    };
                    write!(line, " {k}={}", v + add).expect("to a String");
                }
                out.push_str(&line);
            } else {
                out.push_str(l);
            }
            out.push('\n');
        }
        if !found {
            writeln!(
                out,
                "{dev} rbytes={rbytes} wbytes={wbytes} rios={rios} wios={wios} dbytes=0 dios=0"
            )
            .expect("to a String");
        }
        std::fs::write(&p, out).expect("write io.stat");
    }
}

pub fn have(tool: &str) -> bool {
    Process::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The systemd fixture, for tests that only need some real tree.
pub fn fixture_or_shared() -> PathBuf {
    fixture("pure-v2-systemd")
}

/// Waits until `cond` holds, polling every 10 ms; panics after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < limit, "timed out after {limit:?}: {what}");
        sleep(Duration::from_millis(10));
    }
}

/// Waits up to `limit` for `child` to end: its status, or `None` after
/// the limit, when it is killed (and reaped) so that it never outlives
/// the test.
pub fn wait_exit(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        sleep(Duration::from_millis(20));
    }
}

/// Reads the state letter of a process from /proc (Z for a zombie).
pub fn proc_state(pid: u32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit(')').next()?.trim_start().chars().next()
}

pub fn child_of(parent: u32) -> Option<u32> {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        if let Some(c) = children
            .split_whitespace()
            .next()
            .and_then(|c| c.parse().ok())
        {
            return Some(c);
        }
        sleep(Duration::from_millis(50));
    }
    None
}

// ---------------------------------------------------------------------------
// The write dialogs' trees (tests/state/actions.rs, tests/state/dialog_views.rs).

pub const PG_SERVICE: &str = "system.slice/system-postgresql.slice/postgresql@15-main.service";

/// A group below `root` made as the kernel would show it, with the
/// files of the group `like` (a fixture's), for a test that needs a
/// group of some name: a container's scope, a pod's slice.
pub fn group_like(root: &Path, group: &str, like: &str) {
    let to = root.join(group);
    std::fs::create_dir_all(&to).expect("mkdir");
    for e in std::fs::read_dir(root.join(like)).expect("read_dir") {
        let e = e.expect("entry");
        if e.file_type().expect("type").is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
        }
    }
}

/// `memory-limited`, copied, with three plain groups added beside the
/// systemd units, so that a write can go through without the systemd
/// confirmation, and io can be on where memory is off:
///
/// ```text
/// /                 (memory-limited's 30 groups, untouched)
/// ├─ batch          cpuset cpu io memory pids, processes 4190201 4190202,
/// │                 cpu.max "max 100000", io.latency (empty: no target)
/// └─ lab            hands only io to its children (subtree_control "io")
///    └─ dd          io only (no memory.current), process 4190301
/// ```
///
/// Each takes the files of the PostgreSQL service (a real capture's
/// shapes) and changes only what is listed here; the fake PIDs sit with
/// the other fixtures' (above what a test host normally uses). The three
/// have a `cgroup.kill` (Linux 5.14+; write-only, so the captured units
/// lack it, as on an older kernel), and their read-only files are 0444
/// as the kernel makes them.
pub fn lab_tree() -> tempfile::TempDir {
    let t = copy_fixture("memory-limited");
    let root = t.path();
    let pg = root.join(PG_SERVICE);
    let leaf_events = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n";
    let clone_pg = |to: &Path, keep: &dyn Fn(&str) -> bool| {
        std::fs::create_dir_all(to).expect("mkdir");
        for e in std::fs::read_dir(&pg).expect("read_dir") {
            let e = e.expect("entry");
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().expect("type").is_file() && keep(&name) {
                std::fs::copy(e.path(), to.join(&name)).expect("copy");
            }
        }
    };
    let put = |dir: &Path, files: &[(&str, &str)]| {
        for (n, v) in files {
            std::fs::write(dir.join(n), v).expect("write fixture file");
        }
    };

    let batch = root.join("batch");
    clone_pg(&batch, &|_| true);
    put(
        &batch,
        &[
            // what the root hands down (the service's parent handed less)
            ("cgroup.controllers", "cpuset cpu io memory pids\n"),
            ("cgroup.procs", "4190201\n4190202\n"),
            ("cgroup.threads", "4190201\n4190202\n"),
            ("cpu.max", "max 100000\n"),
            ("memory.high", "max\n"),
            ("memory.events", leaf_events),
            ("memory.events.local", leaf_events),
            ("io.max", ""),
            ("io.latency", ""),
            ("io.stat", ""),
            ("pids.current", "2\n"),
            ("cgroup.kill", ""),
        ],
    );

    let lab = root.join("lab");
    clone_pg(&lab, &|_| true);
    put(
        &lab,
        &[
            ("cgroup.controllers", "cpuset cpu io memory pids\n"),
            ("cgroup.procs", ""),
            ("cgroup.threads", ""),
            ("cgroup.subtree_control", "io\n"),
            ("cgroup.stat", "nr_descendants 1\nnr_dying_descendants 0\n"),
            ("cpu.max", "max 100000\n"),
            ("memory.high", "max\n"),
            ("memory.events", leaf_events),
            ("memory.events.local", leaf_events),
            ("io.max", ""),
            ("io.stat", ""),
            ("pids.current", "1\n"),
            ("cgroup.kill", ""),
        ],
    );

    let dd = lab.join("dd");
    clone_pg(&dd, &|n| {
        n.starts_with("cgroup.") || n == "cpu.stat" || n.ends_with(".pressure")
    });
    put(
        &dd,
        &[
            ("cgroup.controllers", "io\n"),
            ("cgroup.subtree_control", ""),
            ("cgroup.procs", "4190301\n"),
            ("cgroup.threads", "4190301\n"),
            ("cgroup.kill", ""),
            ("io.max", ""),
            ("io.weight", "default 100\n"),
            ("io.latency", ""),
            ("io.stat", ""),
        ],
    );

    // the kernel makes files without a write handler 0444; the captures
    // lost that (their files were made writable to copy and delete
    // them), and the raw editor lists what is writable
    for dir in [&batch, &lab, &dd] {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let e = e.expect("entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let read_only = matches!(
                name.as_str(),
                "cgroup.controllers"
                    | "cgroup.events"
                    | "cgroup.stat"
                    | "cpu.stat"
                    | "cpu.stat.local"
                    | "io.stat"
                    | "memory.current"
                    | "memory.events"
                    | "memory.events.local"
                    | "memory.numa_stat"
                    | "memory.stat"
                    | "memory.swap.current"
                    | "memory.swap.events"
                    | "memory.zswap.current"
                    | "pids.current"
                    | "pids.events"
                    | "pids.peak"
            );
            if read_only {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o444))
                    .expect("chmod");
            }
        }
    }

    // the root counts its descendants (the scanner re-lists on a change)
    let stat = root.join("cgroup.stat");
    let text = std::fs::read_to_string(&stat).expect("cgroup.stat");
    let n: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("nr_descendants "))
        .and_then(|v| v.trim().parse().ok())
        .expect("nr_descendants");
    std::fs::write(
        &stat,
        text.replace(
            &format!("nr_descendants {n}\n"),
            &format!("nr_descendants {}\n", n + 3),
        ),
    )
    .expect("write cgroup.stat");
    t
}

/// A stand-in for /sys/dev/block laid out as sysfs is: each MAJ:MIN a
/// symlink into the device tree, a partition a directory inside its
/// disk's (so "254:1/../dev" is the disk's MAJ:MIN). The fixture
/// `sys-dev-block` (vda 254:0, loop0 7:0) plus the partition vda1 254:1.
pub fn sys_dev_block_with_partition() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    let base = t.path();
    let dev = |rel: &str, maj: u32, min: u32, name: &str, partition: bool| {
        let d = base.join("devices").join(rel);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("dev"), format!("{maj}:{min}\n")).expect("dev");
        let kind = if partition { "partition" } else { "disk" };
        std::fs::write(
            d.join("uevent"),
            format!("MAJOR={maj}\nMINOR={min}\nDEVNAME={name}\nDEVTYPE={kind}\n"),
        )
        .expect("uevent");
        if partition {
            std::fs::write(d.join("partition"), "1\n").expect("partition");
        }
        let link = base.join("block").join(format!("{maj}:{min}"));
        std::fs::create_dir_all(base.join("block")).expect("mkdir");
        std::os::unix::fs::symlink(Path::new("../devices").join(rel), link).expect("symlink");
    };
    dev("vda", 254, 0, "vda", false);
    dev("vda/vda1", 254, 1, "vda1", true);
    dev("loop0", 7, 0, "loop0", false);
    t
}

/// A collector like [`collector`] that reads block devices from
/// `sys_dev_block` (for [`sys_dev_block_with_partition`]).
pub fn collector_with_devices(root: &Path, sys_dev_block: &Path) -> Collector {
    Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: sys_dev_block.to_path_buf(),
    })
}

/// Draws the app on a `w` x `h` `TestBackend` and writes the screen as
/// text: each row between `|` bars (so trailing blanks show), after a
/// gutter that is `>` where the row holds a reverse-video run of at least
/// 20 cells (a cursor or selection bar).
pub fn screen(app: &App, w: u16, h: u16) -> String {
    use ratatui::style::Modifier;
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| cgtop::ui::render(f, app, &cgtop::ui::Theme::mono()))
        .expect("draw");
    let b = t.backend().buffer();
    let width = usize::from(b.area.width);
    let mut out = String::new();
    for row in b.content.chunks(width) {
        let mut run = 0;
        let mut bar = false;
        for c in row {
            if c.modifier.contains(Modifier::REVERSED) {
                run += 1;
                bar |= run >= 20;
            } else {
                run = 0;
            }
        }
        out.push(if bar { '>' } else { ' ' });
        out.push('|');
        for c in row {
            out.push_str(c.symbol());
        }
        out.push_str("|\n");
    }
    out
}

/// Starts the real `cgtop serve --listen 127.0.0.1:0 ARGS` and reads the
/// address it bound from its first stderr line ("cgtop: serving / under
/// DIR at http://127.0.0.1:PORT/metrics (read-only)"). The caller ends the
/// child (by its pid, through `Child::kill`).
pub fn start_serve(args: &[&str]) -> (std::process::Child, std::net::SocketAddr) {
    use std::io::BufRead as _;
    let mut child = Process::new(env!("CARGO_BIN_EXE_cgtop"))
        .arg("serve")
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cgtop serve");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("serve's first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .expect("an address");
    (child, addr)
}

/// The `<n>` of a `cgtop-test-<pid>-<n>` name made outside the sandboxes:
/// one counter for the whole test binary (a crate's modules share one
/// process, so a fixed or per-module number would meet another test's
/// group), from 2000 up, above the sandboxes' own (0 and 500 up).
pub fn unique_n() -> u32 {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(2000);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Held by each test that runs a busy loop for the length of the test:
/// a crate's tests share one process and run two at a time, and two busy
/// loops on this two-core machine take each other's core, so a test that
/// measures "one core" must not share the machine with another loop.
pub fn one_busy_loop_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An event `secs` after cgtop's start (2026-11-26 20:46:40 UTC), seen
/// as it happened.
pub fn event_at(
    secs: f64,
    path: &str,
    kind: cgtop::model::time::events::EventKind,
) -> cgtop::model::time::events::Event {
    cgtop::model::time::events::Event {
        at: std::time::Duration::from_secs_f64(secs),
        unix_s: 1_764_190_000.0 + secs,
        since: None,
        owner: None,
        path: GroupPath::new(path),
        kind,
    }
}
