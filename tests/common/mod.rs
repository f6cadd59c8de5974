//! Shared helpers of the integration tests: fixture trees, a collector
//! that reads them at fixed times, an app with fixed host facts, and
//! key messages. Nothing here reads the clock, the host's name or /sys.
#![allow(dead_code)]
// each test crate uses its own part of this module
// test helpers: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::app::{self, App, Effect, HostInfo, Msg};
use cgtop::model::{GroupPath, MountInfo, MountMode, ProcessInfo};
use cgtop::source::collector::{Collected, Collector, CollectorConfig, Command, Focus, Refresh};
use cgtop::source::scan::ScanConfig;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: fixture("sys-dev-block"),
    })
}

/// One refresh at `secs` seconds. The processes of the focus are
/// dropped: the fixtures' PIDs may be live processes of the test host.
pub fn refresh(c: &mut Collector, secs: f64) -> Refresh {
    let mut r = c.refresh(Duration::from_secs_f64(secs));
    if let Some(f) = &mut r.focus {
        f.processes.clear();
    }
    r
}

/// Applies a message, and passes the focus commands on to the collector,
/// as the main loop does. Returns the effects.
pub fn send(app: &mut App, c: &mut Collector, msg: Msg) -> Vec<Effect> {
    let fx = app::update(app, msg);
    for e in &fx {
        if let Effect::Collector(Command::Focus(p)) = e {
            c.set_focus(p.clone());
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
pub fn read_focus(app: &mut App, c: &mut Collector, secs: f64) {
    let Some(p) = app.selected.clone() else {
        return;
    };
    let mut f = c.read_focus(&p, None, secs);
    f.processes.clear();
    app::update(app, Msg::Collected(Collected::Focus(Box::new(f))));
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
                d.tree.nodes[r.node].path.name(),
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
        bump(root, a.as_str(), "cpu.stat", &add);
    }
}

/// Removes a group as `rmdir` would, and lowers the root's
/// nr_descendants as the kernel does (the scanner re-lists on that).
pub fn remove_group(root: &Path, group: &str) {
    let dir = root.join(group);
    let n = walkdirs(&dir);
    std::fs::remove_dir_all(&dir).expect("remove group");
    let stat = root.join("cgroup.stat");
    let text = std::fs::read_to_string(&stat).expect("cgroup.stat");
    let out: String = text
        .lines()
        .map(|l| match l.strip_prefix("nr_descendants ") {
            Some(v) => format!(
                "nr_descendants {}\n",
                v.trim().parse::<usize>().expect("number") - n
            ),
            None => format!("{l}\n"),
        })
        .collect();
    std::fs::write(stat, out).expect("write cgroup.stat");
}

fn walkdirs(d: &Path) -> usize {
    1 + std::fs::read_dir(d)
        .expect("read_dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| walkdirs(&e.path()))
        .sum::<usize>()
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

/// Replaces the focus's process list (the view tests' stand-in for
/// /proc).
pub fn set_processes(app: &mut App, procs: Vec<ProcessInfo>) {
    let f: &mut Focus = app.focus.as_mut().expect("a focus was read");
    f.processes = procs;
}

/// Disk IO by a group on device `dev` ("254:0"), added to its io.stat and
/// to the io.stat of each ancestor that has one (io.stat is hierarchical).
pub fn do_io(root: &Path, group: &str, dev: &str, rbytes: u64, wbytes: u64, rios: u64, wios: u64) {
    for a in GroupPath::new(group).ancestors() {
        let p = root.join(a.as_str()).join("io.stat");
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
