//! A user who owns a delegated subtree nests groups as deep as the
//! kernel allows (cgroup.max.depth is "max" by default): 2,000 groups
//! of one-letter names, each below the last, take 2,000 mkdirs and
//! about 4,000 bytes of path at the bottom, within PATH_MAX. cgtop
//! opens each group's directory and files by its whole path from the
//! hierarchy's root, so the kernel walks every component of it at each
//! open: the work of a refresh grows as the square of the depth. By hand
//! on this host (debug build, load 16-18): `-b -n 4 -d 1` took 8.0 and
//! 8.4 s of CPU on the chain against 0.43 and 0.51 s on 2,000 groups
//! side by side (openat2 157-249 µs a call against 6), `-b -n 1` 3.7 s
//! against 0.17 s, and the TUI 2.9 s of CPU every 10 s against 0.4 s.
//! In this test: 5.37 and 5.58 s against 0.44 and 0.37 s (13.5x). The
//! same number of groups must cost about the same, however they are
//! nested. Real kernel, real binary.
//!
//! Asked of the system CPU, which the opens are (the kernel's path
//! walks): at most 4x. The user CPU is not a measure of them: `-b`
//! prints each group's whole path, and the chain's paths make 4 MB of
//! output against 138 KB side by side (depth² bytes whatever cgtop
//! opens, and measuring widths of them takes 0.85 s of user CPU in a
//! debug build against 0.07). Measured by hand with `-b -n 1`: system
//! 2.6-3.3 s against 0.10 (26x) before directories were opened from
//! their parent's descriptor, 0.14-0.19 s against 0.09-0.16 after. This
//! test's `-n 3` also starts the event watcher (source/events.rs), whose
//! setup (an O_PATH open and a read of each group's event files) named
//! the whole path: 4.53 s against 0.52 (8.7x) after the walk's change;
//! by hand, system CPU of `-n 3 -d 0.5` 2.19 s against 0.20. Since its
//! setup opens each group from its nearest ancestor's directory too
//! (`DirsBelow`): 0.24 s against 0.23.

use crate::common::sandbox::Sandbox;
use cgtop::model::GroupPath;
use cgtop::source::events::Watcher;
use cgtop::source::hier::Hier;
use std::process::Command;
use std::sync::Arc;

/// Groups in the chain, and side by side.
const N: usize = 2000;

/// Makes a chain of `n` groups named `a` below `dir`, one directory at
/// a time (the whole path passes what one call takes).
fn chain(dir: &std::path::Path, n: usize) {
    down_the_chain(dir, n, true);
}

/// The bottom of the chain of `n` groups named `a` below `dir`, reached
/// one directory at a time, each made first if `make`.
fn down_the_chain(dir: &std::path::Path, n: usize, make: bool) -> rustix::fd::OwnedFd {
    use rustix::fs::{mkdirat, openat, Mode, OFlags};
    let mut d = openat(
        rustix::fs::CWD,
        dir,
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )
    .unwrap();
    for _ in 0..n {
        if make {
            mkdirat(&d, "a", Mode::from_raw_mode(0o755)).unwrap();
        }
        d = openat(&d, "a", OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    }
    d
}

/// Seconds of CPU (user, system) of `cgtop -b -n 3 -d 0.5 GROUP`, as
/// /usr/bin/time measures it.
fn cpu_of_batch(group: &str) -> (f64, f64) {
    let out = tempfile::NamedTempFile::new().unwrap();
    let ok = Command::new("/usr/bin/time")
        .args(["-f", "%U %S", "-o"])
        .arg(out.path())
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--no-config", "-b", "-n", "3", "-d", "0.5", group])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "cgtop -b on {group}");
    let text = std::fs::read_to_string(out.path()).unwrap();
    let t: Vec<f64> = text
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .collect();
    (t[t.len() - 2], t[t.len() - 1])
}

#[test]
fn a_users_deep_chain_of_groups_costs_about_what_as_many_side_by_side_do() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    if !std::path::Path::new("/usr/bin/time").exists() {
        println!("skipped: /usr/bin/time is not installed (the CPU of a run)");
        return;
    }
    sb.mkdir("deep");
    // removed before the sandbox (dropped first), also on a failure:
    // the sandbox's cleanup names each directory by its whole path
    let _chain = Chain(sb.dir("deep"), N);
    chain(&sb.dir("deep"), N);
    for i in 0..N {
        sb.mkdir(&format!("wide/w{i}"));
    }
    let (deep, wide) = (format!("{}/deep", sb.rel), format!("{}/wide", sb.rel));
    // alternately, so that the machine's load weighs on both alike
    let mut runs = Vec::new();
    for _ in 0..2 {
        runs.push((cpu_of_batch(&deep), cpu_of_batch(&wide)));
    }
    // system CPU of the chain's runs, and of the side by side ones
    let d: f64 = runs.iter().map(|r| r.0 .1).sum();
    let w: f64 = runs.iter().map(|r| r.1 .1).sum::<f64>().max(0.01);
    println!("runs deep/wide, (user, system) s: {runs:?}");
    assert!(
        d <= 4.0 * w,
        "the {N}-deep chain cost {d:.2} s of system CPU against {w:.2} s for {N} groups side by side ({:.1}x; runs deep/wide (user, system): {runs:?})",
        d / w
    );
}

/// The chain below a directory, removed on drop ([`unchain`]).
struct Chain(std::path::PathBuf, usize);

impl Drop for Chain {
    fn drop(&mut self) {
        unchain(&self.0, self.1);
    }
}

/// Removes the chain of `n` groups named `a` below `dir`, deepest first,
/// one directory at a time.
fn unchain(dir: &std::path::Path, n: usize) {
    use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags};
    let mut fds = vec![openat(
        rustix::fs::CWD,
        dir,
        OFlags::DIRECTORY | OFlags::RDONLY,
        Mode::empty(),
    )
    .unwrap()];
    for _ in 0..n {
        let Ok(next) = openat(
            fds.last().unwrap(),
            "a",
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        ) else {
            break;
        };
        fds.push(next);
    }
    while fds.len() > 1 {
        fds.pop();
        let _ = unlinkat(fds.last().unwrap(), "a", AtFlags::REMOVEDIR);
    }
}

/// CPU time of this thread so far, (user, system) in seconds, from
/// /proc/thread-self/stat (in USER_HZ, 100 a second on Linux).
fn thread_cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // utime and stime: fields 14 and 15, the 12th and 13th after `)`
    let ticks = |i: usize| f[i].parse::<f64>().unwrap() / 100.0;
    (ticks(11), ticks(12))
}

/// This thread's CPU time, (user, system), since `t` of [`thread_cpu`].
fn thread_cpu_since(t: (f64, f64)) -> (f64, f64) {
    let now = thread_cpu();
    (now.0 - t.0, now.1 - t.1)
}

/// A watcher of the sandbox's groups from `start` down, and the thread's
/// CPU time its setup took (user, system).
fn watcher_timed(sb: &Sandbox, start: GroupPath) -> (Watcher, (f64, f64)) {
    let cfg = crate::common::watch_config(start);
    let t = thread_cpu();
    let w = Watcher::new(Arc::new(Hier::open(&sb.root).unwrap()), cfg).unwrap();
    (w, thread_cpu_since(t))
}

/// A process of the test's, killed and reaped on drop (before the chain
/// it may be in is removed).
struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Moves process `pid` into the group at the bottom of the chain of `n`
/// below `dir`, reaching it one directory at a time.
fn into_bottom(dir: &std::path::Path, n: usize, pid: u32) {
    use rustix::fs::{openat, Mode, OFlags};
    let d = down_the_chain(dir, n, false);
    let f = openat(&d, "cgroup.procs", OFlags::WRONLY, Mode::empty()).unwrap();
    rustix::io::write(&f, pid.to_string().as_bytes()).unwrap();
}

/// A process entering the bottom group of the chain makes every group
/// of it populated (and leaving, empty again): the `cgroup.events` of
/// all 2,000 change at once, and the watcher reads each. Read by their
/// whole paths from the root, those reads cost the square of the depth
/// (the kernel walks every component at each open). In this test (debug
/// build, load 18-20 from other builds), the watcher's thread's CPU
/// (user, system) for the two flips: (0.13, 1.91) s by whole paths
/// against (0.21, 0.10) for its whole setup on the chain, which opens
/// each group from its parent's directory; read in walk order from the
/// nearest ancestor's directory (`DirsBelow`), as the setup does:
/// (0.07, 0.04) against (0.17, 0.13). The bound: the two flips cost at
/// most twice the setup, which reads the same files and more.
#[test]
fn a_populated_flip_at_the_bottom_of_a_deep_chain_costs_the_watcher_no_more_than_its_setup() {
    use cgtop::model::time::events::EventKind;
    use std::time::{Duration, Instant};
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("deep");
    sb.mkdir("park");
    let _chain = Chain(sb.dir("deep"), N);
    chain(&sb.dir("deep"), N);
    let sleeper = Sleeper(crate::common::sandbox::spawn_detached(
        &["sleep", "120"],
        |_| (),
    ));
    let pid = sleeper.0.id();
    std::fs::write(sb.dir("park").join("cgroup.procs"), pid.to_string()).unwrap();
    let (mut w, setup) = watcher_timed(&sb, sb.path("deep"));
    let (top, mut flips) = (sb.path("deep"), (0.0, 0.0));
    for populated in [true, false] {
        if populated {
            into_bottom(&sb.dir("deep"), N, pid);
        } else {
            std::fs::write(sb.dir("park").join("cgroup.procs"), pid.to_string()).unwrap();
        }
        // every group of the chain, and its top, says so
        let mut seen = 0;
        let t0 = Instant::now();
        while seen < N + 1 && t0.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
            let t = thread_cpu();
            w.on_inotify();
            let got = w.take_ready();
            let d = thread_cpu_since(t);
            flips = (flips.0 + d.0, flips.1 + d.1);
            seen += got
                .iter()
                .filter(|e| e.kind == EventKind::Populated(populated) && e.path.is_within(&top))
                .count();
        }
        assert_eq!(seen, N + 1, "populated {populated}: the chain's events");
    }
    drop(sleeper);
    println!("watcher's CPU (user, system) s: setup {setup:?}, two flips {flips:?}");
    let (f, s) = (flips.0 + flips.1, setup.0 + setup.1);
    assert!(
        f <= 2.0 * s.max(0.05),
        "two populated flips at the bottom of a {N}-deep chain cost the watcher {f:.2} s of CPU against {s:.2} s for its whole setup (user, system: {flips:?} against {setup:?})"
    );
}

/// The owner of the chain removes it and makes it again while a refresh
/// walks: the refresh lists none of it, and when the watcher takes that
/// list the 2,000 groups it knows are there again by their paths (other
/// inodes: new groups). The watcher checks each group the list lacks
/// (is its directory still the one it watches?) before it forgets it;
/// by the whole path from the root those checks cost the square of the
/// depth, at each such refresh. Here the list comes before the watcher
/// has read the removals from its inotify queue (as it does when they
/// come in the same turn, or where the chain's directories were not
/// watched: short of watches, no removal is ever read). In this test
/// (debug build), the watcher's CPU (user, system) for the resync:
/// (0.07, 1.03) s by whole paths against (0.20, 0.09) for its setup
/// (load 10-12); from the nearest held directory, parent first, nothing
/// below a group found gone looked at: (0.08, 0.01) against (0.23,
/// 0.06) (load 3-4). The bound: the resync costs at most its setup,
/// which opens every group and more.
#[test]
fn a_deep_chain_made_again_behind_a_refresh_costs_the_watchers_resync_no_more_than_its_setup() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("deep");
    let _chain = Chain(sb.dir("deep"), N);
    chain(&sb.dir("deep"), N);
    let top = sb.path("deep");
    let (mut w, setup) = watcher_timed(&sb, top.clone());
    assert_eq!(w.groups(), N + 1, "the chain and its top are known");
    // removed and made again: the same paths, new groups
    unchain(&sb.dir("deep"), N);
    chain(&sb.dir("deep"), N);
    let t = thread_cpu();
    w.resync(std::slice::from_ref(&top));
    let resync = thread_cpu_since(t);
    assert_eq!(
        w.groups(),
        1,
        "the groups of the chain removed are forgotten (their directories are other ones now)"
    );
    println!("watcher's CPU (user, system) s: setup {setup:?}, resync {resync:?}");
    let (r, s) = (resync.0 + resync.1, setup.0 + setup.1);
    assert!(
        r <= s.max(0.05),
        "a resync whose list lacks a {N}-deep chain made again cost the watcher {r:.2} s of CPU against {s:.2} s for its whole setup (user, system: {resync:?} against {setup:?})"
    );
}
