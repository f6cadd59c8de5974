//! Hostile inputs: file access (issue 7, items 2 and 5). Trees built at
//! test time the way the owner of a delegated subtree or of a `--root`
//! tree could: symlinks planted as interface files and as group
//! directories, a `--root` symlink re-pointed after start, a FIFO, a 2 GiB
//! sparse file and `/dev/zero` as interface files, and a plain
//! `cgroup.procs` naming PID 1 under `K`. Each outcome is refused or
//! harmless: nothing written or signalled outside cgroupfs, no hang, no
//! unbounded memory.

use super::common;
use cgtop::model::write::{freeze, kill};
use cgtop::model::GroupPath;
use cgtop::source::collector::Collected;
use cgtop::source::writer::perform;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(super) fn write(dir: &Path, files: &[(&str, &str)]) {
    fs::create_dir_all(dir).unwrap();
    for (n, t) in files {
        fs::write(dir.join(n), t).unwrap();
    }
}

/// A `--root` tree: the root and one group `g`, laid out like cgroupfs.
pub(super) fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write(
        t.path(),
        &[
            ("cgroup.procs", ""),
            ("cgroup.stat", "nr_descendants 1\nnr_dying_descendants 0\n"),
            ("cgroup.controllers", "cpu memory\n"),
            ("cpu.stat", "usage_usec 100\nuser_usec 60\nsystem_usec 40\n"),
        ],
    );
    write(
        &t.path().join("g"),
        &[
            ("cgroup.procs", ""),
            ("cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n"),
            ("cgroup.events", "populated 0\nfrozen 0\n"),
            ("cpu.stat", "usage_usec 10\nuser_usec 6\nsystem_usec 4\n"),
            ("memory.current", "4096\n"),
            ("memory.stat", "anon 4096\nfile 0\n"),
            ("memory.max", "max\n"),
        ],
    );
    t
}

/// Runs `cgtop ARGS` (through `sh -c` with a virtual memory limit, so
/// that a program reading without bound fails instead of taking the
/// machine's memory) and waits at most `secs`. `None`: it did not finish
/// (killed). Otherwise exit success, stdout, stderr.
pub(super) fn cgtop(args: &[&str], secs: u64) -> Option<(bool, String, String)> {
    let out = tempfile::tempdir().unwrap();
    let (o, e) = (out.path().join("out"), out.path().join("err"));
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 1048576; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&o).unwrap())
        .stderr(fs::File::create(&e).unwrap());
    let mut child = cmd.spawn().unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Some((
        status.success(),
        fs::read_to_string(&o).unwrap_or_default(),
        fs::read_to_string(&e).unwrap_or_default(),
    ))
}

/// The `unreadable` entries of group `path` in a JSON refresh line.
pub(super) fn unreadable_in(json_line: &str, path: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(json_line).unwrap();
    let g = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {json_line}"));
    g["unreadable"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|u| {
                    (
                        u["file"].as_str().unwrap_or("").to_owned(),
                        u["error"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn mkfifo(p: &Path) {
    let _ = fs::remove_file(p);
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

#[test]
fn a_symlink_planted_as_cgroup_freeze_is_not_written_through() {
    // issue 7: `f` `y` on a group whose cgroup.freeze is a symlink turned
    // "root:x:0:0" into "1oot:x:0:0" in the victim
    let t = tree();
    write(t.path(), &[("victim", "root:x:0:0\n")]);
    fs::remove_file(t.path().join("g/memory.max")).unwrap();
    symlink(t.path().join("victim"), t.path().join("g/cgroup.freeze")).unwrap();
    let o = perform(t.path(), &freeze(&GroupPath::new("g"), true));
    assert!(o.result.is_err(), "{:?}", o.result);
    assert_eq!(
        fs::read_to_string(t.path().join("victim")).unwrap(),
        "root:x:0:0\n"
    );
}

#[test]
fn a_write_never_leaves_the_real_cgroup2_mount() {
    // a group path that climbs out of the live cgroup2 mount into a tree
    // whose cgroup.freeze is a symlink: it cannot become a GroupPath (the
    // type refuses `..`), and the hierarchy handle refuses to open it for
    // a write by itself too
    let Some(sandbox) = common::sandbox::Sandbox::or_skip() else {
        return;
    };
    let t = tree();
    write(t.path(), &[("victim", "root:x:0:0\n")]);
    symlink(t.path().join("victim"), t.path().join("g/cgroup.freeze")).unwrap();
    let ups = "../".repeat(sandbox.root.components().count() + 2);
    let rel = t.path().strip_prefix("/").unwrap().join("g");
    let climbing = format!("{ups}{}", rel.display());
    assert!(GroupPath::parse(climbing.as_bytes()).is_err());
    let h = cgtop::source::hier::Hier::open(&sandbox.root).unwrap();
    let file = std::path::Path::new(&climbing).join("cgroup.freeze");
    assert!(h.open_write(&file).is_err());
    assert_eq!(
        fs::read_to_string(t.path().join("victim")).unwrap(),
        "root:x:0:0\n"
    );
}

#[test]
fn a_symlinked_root_re_pointed_after_start_changes_nothing() {
    // `--root L` where L is a user's symlink: checked once, then L is made
    // to point elsewhere; cgtop goes on reading what it opened
    let a = tree();
    let b = tree();
    write(&b.path().join("evil"), &[("cgroup.procs", "")]);
    write(
        b.path(),
        &[("cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n")],
    );
    let links = tempfile::tempdir().unwrap();
    let l = links.path().join("root");
    symlink(a.path(), &l).unwrap();
    let mut c = common::collector(&l);
    let before: Vec<String> = common::refresh(&mut c, 0.0)
        .snapshot
        .groups
        .iter()
        .map(|g| g.path.to_string())
        .collect();
    assert_eq!(before, ["/", "/g"]);
    // re-pointed, atomically, as an attacker would
    symlink(b.path(), links.path().join("new")).unwrap();
    fs::rename(links.path().join("new"), &l).unwrap();
    c.invalidate();
    let after: Vec<String> = common::refresh(&mut c, 1.0)
        .snapshot
        .groups
        .iter()
        .map(|g| g.path.to_string())
        .collect();
    assert_eq!(after, before, "the re-pointed symlink was followed");
    let f = c.read_inspection(&GroupPath::new("evil"), None, 1.0);
    assert!(f.detail.raw.is_empty(), "read through the re-pointed link");
}

#[test]
fn a_fifo_as_cpu_stat_never_hangs_batch_or_json() {
    let t = tree();
    mkfifo(&t.path().join("g/cpu.stat"));
    let root = t.path().to_str().unwrap();
    let text = cgtop(&["--root", root, "-b", "-n", "2", "-d", "0.1"], 10);
    let (ok, out, err) = text.expect("`cgtop -b` hung on a FIFO");
    assert!(ok, "{err}");
    assert_eq!(out.matches("cgtop - refresh").count(), 2, "{out}");
    let json = cgtop(&["--root", root, "--json", "-n", "2", "-d", "0.1"], 10);
    let (ok, out, err) = json.expect("`cgtop --json` hung on a FIFO");
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    // an error on that group, not a silent missing value
    let u = unreadable_in(lines[1], "/g");
    assert!(
        u.iter()
            .any(|(f, e)| f == "cpu.stat" && e.contains("a FIFO, not a regular file")),
        "{u:?}"
    );
}

#[test]
fn a_fifo_as_cpu_stat_does_not_stop_the_collector_thread() {
    // the TUI's collector thread goes on sending refreshes
    let t = tree();
    mkfifo(&t.path().join("g/cpu.stat"));
    let (tx, rx) = std::sync::mpsc::channel::<Collected>();
    let (_cmd_tx, cmd_rx) = std::sync::mpsc::channel();
    let cfg = cgtop::source::collector::CollectorConfig {
        root: t.path().to_path_buf(),
        start: GroupPath::root(),
        scan: cgtop::source::scan::ScanConfig::default(),
        full_detail: false,
        sys_dev_block: common::fixture("sys-dev-block"),
    };
    cgtop::source::collector::spawn(cfg, Duration::from_millis(100), tx, cmd_rx).unwrap();
    let mut refreshes = Vec::new();
    let t0 = Instant::now();
    while refreshes.len() < 3 && t0.elapsed() < Duration::from_secs(10) {
        if let Ok(Collected::Refresh(r)) = rx.recv_timeout(Duration::from_millis(200)) {
            refreshes.push(r);
        }
    }
    assert_eq!(refreshes.len(), 3, "the collector stopped refreshing");
    let g = refreshes[2].snapshot.find(&GroupPath::new("g")).unwrap();
    assert_eq!(g.hot.cpu, None);
    assert_eq!(g.hot.unreadable.len(), 1, "{:?}", g.hot.unreadable);
    assert_eq!(g.hot.memory_current, Some(4096), "the other files are read");
}

/// Peak RSS of `cgtop ARGS` in KiB, from `/usr/bin/time -v`; `None`
/// without it.
pub(super) fn peak_rss_kib(args: &[&str]) -> Option<(bool, u64, String)> {
    if !Path::new("/usr/bin/time").exists() {
        println!("skipped: no /usr/bin/time");
        return None;
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304; exec /usr/bin/time -v \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let kib = err
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(u64::MAX);
    Some((out.status.success(), kib, err))
}

#[test]
fn a_2_gib_sparse_memory_stat_is_not_read_into_memory() {
    let t = tree();
    let f = fs::File::create(t.path().join("g/memory.stat")).unwrap();
    f.set_len(2 << 30).unwrap();
    let root = t.path().to_str().unwrap();
    let Some((ok, kib, err)) = peak_rss_kib(&["--root", root, "--json", "-n", "1", "-d", "0.1"])
    else {
        return;
    };
    assert!(ok, "{err}");
    println!("peak RSS with a 2 GiB memory.stat: {kib} KiB");
    assert!(kib < 100 * 1024, "peak RSS {kib} KiB");
    let (_, out, _) = cgtop(&["--root", root, "--json", "-n", "1", "-d", "0.1"], 20).unwrap();
    let u = unreadable_in(out.lines().next().unwrap(), "/g");
    assert!(
        u.iter()
            .any(|(f, e)| f == "memory.stat" && e.contains("file larger than")),
        "{u:?}"
    );
}

#[test]
fn dev_zero_as_memory_stat_is_refused() {
    // a symlink to /dev/zero (not followed), and, as root, a device node
    // in its place (not a regular file): neither is read
    let t = tree();
    fs::remove_file(t.path().join("g/memory.stat")).unwrap();
    symlink("/dev/zero", t.path().join("g/memory.stat")).unwrap();
    let mut cases = vec!["symlink"];
    if rustix::process::geteuid().is_root() {
        write(&t.path().join("h"), &[("cgroup.procs", "")]);
        let ok = Command::new("mknod")
            .arg(t.path().join("h/memory.stat"))
            .args(["c", "1", "5"])
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            cases.push("device");
        }
    } else {
        println!("skipped: the device node case needs root (mknod)");
    }
    let root = t.path().to_str().unwrap();
    let (ok, out, err) = cgtop(&["--root", root, "--json", "-n", "1", "-d", "0.1"], 20)
        .expect("cgtop did not finish");
    assert!(ok, "{err}");
    let line = out.lines().next().unwrap();
    let u = unreadable_in(line, "/g");
    assert!(
        u.iter()
            .any(|(f, e)| f == "memory.stat" && e.contains("symbolic link")),
        "{u:?}"
    );
    if cases.contains(&"device") {
        let u = unreadable_in(line, "/h");
        assert!(
            u.iter()
                .any(|(f, e)| f == "memory.stat" && e.contains("character device")),
            "{u:?}"
        );
    }
}

#[test]
fn a_symlinked_group_directory_is_not_followed() {
    let t = tree();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        &[
            ("cgroup.procs", ""),
            ("cgroup.controllers", "secret\n"),
            ("memory.current", "12345\n"),
        ],
    );
    symlink(outside.path(), t.path().join("link")).unwrap();
    let root = t.path().to_str().unwrap();
    // as the start group: refused, with the reason
    let (ok, out, err) =
        cgtop(&["--root", root, "-b", "-n", "1", "-d", "0.1", "link"], 10).unwrap();
    assert!(!ok, "a symlinked start group was followed: {out}");
    assert!(err.contains("symbolic link"), "{err}");
    // not listed by a walk, and not read as an inspection
    let mut c = common::collector(t.path());
    let r = common::refresh(&mut c, 0.0);
    assert!(r.snapshot.find(&GroupPath::new("link")).is_none());
    let f = c.read_inspection(&GroupPath::new("link"), None, 0.0);
    assert_eq!(f.detail.controllers, None, "read through the symlink");
    assert!(f.detail.raw.is_empty());
}

#[test]
fn kill_never_signals_pids_from_a_plain_cgroup_procs() {
    // issue 7: without cgroup.kill, `K` read pids from a plain
    // directory's cgroup.procs and sent each SIGKILL (a list naming 1 too)
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    let t = tree();
    write(
        &t.path().join("g"),
        &[("cgroup.procs", &format!("1\n{}\n", child.id()))],
    );
    let o = perform(t.path(), &kill(&GroupPath::new("g")));
    std::thread::sleep(Duration::from_millis(100));
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(alive, "a pid listed in a plain directory was signalled");
    assert!(o.result.is_err(), "{:?}", o.result);
}

/// Makes `names` nested below `root`, each holding `files`, one
/// directory at a time (the whole path is too long for one call), and
/// `last` in the deepest.
fn nest(root: &Path, names: &[String], files: &[(&str, &str)], last: (&str, &str)) {
    use rustix::fs::{mkdirat, openat, Mode, OFlags};
    use std::io::Write as _;
    let mut dir = openat(
        rustix::fs::CWD,
        root,
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )
    .unwrap();
    for (i, n) in names.iter().enumerate() {
        mkdirat(&dir, n.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(
            &dir,
            n.as_str(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        let mut all = files.to_vec();
        if i + 1 == names.len() {
            all.push(last);
        }
        for (f, text) in all {
            let fd = openat(
                &dir,
                f,
                OFlags::WRONLY | OFlags::CREATE,
                Mode::from_raw_mode(0o644),
            )
            .unwrap();
            fs::File::from(fd).write_all(text.as_bytes()).unwrap();
        }
    }
}

#[test]
fn a_group_nested_past_path_max_says_why_nothing_below_it_shows() {
    // attack: the owner of a delegated subtree nests groups until the
    // path passes PATH_MAX (4096 bytes; cgroup.max.depth is "max" by
    // default) and runs processes below. The walk stops there: opening
    // deeper one component at a time costs the square of the depth in
    // opens and in path memory, and names of 255 bytes have no depth
    // bound. The last group it reaches must say that groups below it are
    // not shown, not only "File name too long".
    let t = tree();
    let names: Vec<String> = (0..20)
        .map(|i| format!("L{i:02}{}", "y".repeat(240)))
        .collect();
    nest(
        t.path(),
        &names,
        &[("cgroup.procs", ""), ("cpu.stat", "usage_usec 7\n")],
        ("memory.current", "777\n"),
    );
    assert!(names.join("/").len() > 4096);
    let mut c = common::collector(t.path());
    let r = common::refresh(&mut c, 0.0);
    let g = r
        .snapshot
        .groups
        .iter()
        .max_by_key(|g| g.path.as_bytes().len())
        .unwrap();
    assert!(
        g.path.as_bytes().len() >= 4096,
        "the group past PATH_MAX vanished"
    );
    let why: Vec<String> = g.hot.unreadable.iter().map(|u| u.error.clone()).collect();
    assert!(
        why.iter()
            .any(|e| e.contains("PATH_MAX") && e.contains("below")),
        "{why:?}"
    );
}
