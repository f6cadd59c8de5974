//! Issue 11, items 1-3 on this hybrid host's real kernel: a group of the
//! v1 sandbox (`common::sandbox_v1`) in cgroup2 and in each live v1
//! hierarchy (cpu, cpuacct, memory, blkio, pids, freezer), a busy loop in
//! it; the
//! collector on the discovered layout shows the group with CPU from v1
//! cpuacct, memory from memory.usage_in_bytes, PIDs from pids.current and
//! frozen from freezer.state. And the event watcher on a v1 hierarchy
//! (no cgroup.events there) neither fails nor spins.
//!
//! Skipped (with a line saying so) where not root or the host has no v1
//! cpuacct hierarchy at /sys/fs/cgroup/cpuacct. Every group is removed on
//! drop, also after a failed assertion; only the processes in the groups
//! (the test's and theirs) are killed, by pid.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1;
use cgtop::model::{GroupPath, HierKind};
use cgtop::options::Options;
use cgtop::source::collector::Collector;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BASE: &str = "/sys/fs/cgroup";
/// The hierarchies the test makes its group in (cgroup2 first: the
/// primary, where `--root`-less cgtop checks the start group).
const HIERS: [&str; 7] = [
    "unified", "cpu", "cpuacct", "memory", "blkio", "pids", "freezer",
];

/// The v1 sandbox (`common::sandbox_v1`) in every hierarchy of [`HIERS`],
/// each named by its directory below [`BASE`].
struct V1Sandbox {
    sb: sandbox_v1::V1Sandbox,
    /// The group's name, directly below each mount.
    name: String,
}

impl V1Sandbox {
    fn or_skip() -> Option<Self> {
        if !Path::new(BASE).join("cpuacct/cpuacct.usage").exists()
            || !Path::new(BASE).join("unified/cgroup.procs").exists()
        {
            println!("skipped: needs a hybrid /sys/fs/cgroup with v1 cpuacct");
            return None;
        }
        let v1 = HIERS.iter().filter(|h| **h != "unified").copied();
        let sb = sandbox_v1::V1Sandbox::or_skip("v1scan", &v1.collect::<Vec<_>>())?;
        assert!(
            sb.hiers.iter().all(|h| h.mount.starts_with(BASE)),
            "the hierarchies below {BASE}"
        );
        Some(Self {
            name: sb.rel.clone(),
            sb,
        })
    }

    /// `sub` (a group below the sandbox's, or a file of it) in hierarchy
    /// `hier` ("unified" is cgroup2).
    fn dir(&self, hier: &str, sub: &str) -> PathBuf {
        let controller = if hier == "unified" { "" } else { hier };
        let d = self.sb.hier(controller).mount.join(&self.name);
        if sub.is_empty() {
            d
        } else {
            d.join(sub)
        }
    }

    /// Starts `sh -c script` and moves it into the group in every hierarchy
    /// (a command it runs last is `exec`'d: `Sandbox::spawn_in` says why).
    fn spawn(&mut self, script: &str) -> u32 {
        let g = self.sb.path("");
        self.sb.spawn_in(&g, &["sh", "-c", script])
    }
}

/// utime + stime of a process, in seconds (its own account of its CPU).
fn proc_cpu_secs(pid: u32) -> f64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / rustix::param::clock_ticks_per_second() as f64
}

fn opts(start: &str) -> Options {
    Options {
        start: GroupPath::new(start),
        ..crate::common::options()
    }
}

#[test]
fn a_busy_loop_in_v1_groups_shows_cpu_memory_pids_and_frozen() {
    let _busy = crate::common::one_busy_loop_at_a_time();
    let Some(mut s) = V1Sandbox::or_skip() else {
        return;
    };
    let pid = s.spawn("while :; do :; done");
    fs::create_dir(s.dir("memory", "v1only")).unwrap();
    let o = opts(&s.name);
    let (_, mut c) = crate::common::collector_for(&o, false);
    c.set_cpu_ceiling(None);
    let start = Instant::now();
    c.refresh_timed(start);
    let cpu0 = proc_cpu_secs(pid);
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    let r = c.refresh_timed(start);
    let truth = (proc_cpu_secs(pid) - cpu0) / t0.elapsed().as_secs_f64() * 100.0;
    let me = GroupPath::new(&s.name);
    let i = r
        .snapshot
        .groups
        .iter()
        .position(|g| g.path == me)
        .expect("the group is in the tree");
    let g = &r.snapshot.groups[i];
    let pct = r.rates[i].cpu_pct.expect("a CPU rate");
    println!("cgtop {pct:.1} %, the loop's own /proc account {truth:.1} %");
    // the loop's CPU: all of one core on an idle host; the host's other
    // work shares 2 cores, so the truth is the loop's own account
    assert!(truth > 5.0, "the loop hardly ran: {truth}");
    assert!(
        (pct - truth).abs() <= truth * 0.15,
        "cgtop {pct}, /proc {truth}"
    );
    let src = g.hot.v1.sources;
    assert_eq!(src.cpu, Some(HierKind::V1), "from cpuacct");
    assert_eq!(src.memory, Some(HierKind::V1));
    let usage: u64 = fs::read_to_string(s.dir("memory", "memory.usage_in_bytes"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let shown = g.hot.memory_current.expect("memory.usage_in_bytes shown");
    assert!(
        shown > 0 && shown.abs_diff(usage) < 4 << 20,
        "{shown} vs {usage}"
    );
    assert_eq!(g.hot.pids_current, Some(1), "pids.current: the loop");
    assert_eq!(g.hot.nr_procs, Some(1), "cgroup2's cgroup.procs");
    assert!(
        r.snapshot
            .find(&me.concat(&GroupPath::new("v1only")))
            .is_some(),
        "a group only v1 has is in the tree"
    );
    // a group made in a v1 hierarchy alone after the start: listed within
    // two refreshes (v1 has no cgroup.stat: inotify on the directories)
    let r = c.refresh_timed(start);
    assert!(!r.snapshot.cost.walked, "steady: nothing listed again");
    fs::create_dir(s.dir("memory", "v1only/late")).unwrap();
    let late = me.concat(&GroupPath::new("v1only/late"));
    let seen = (0..2).any(|_| c.refresh_timed(start).snapshot.find(&late).is_some());
    assert!(seen, "a group made in v1 memory after the start");
    fs::remove_dir(s.dir("memory", "v1only/late")).unwrap();
    let gone = (0..2).any(|_| c.refresh_timed(start).snapshot.find(&late).is_none());
    assert!(gone, "and removed");
    // freezer.state: FROZEN shows as frozen
    fs::write(s.dir("freezer", "freezer.state"), "FROZEN").unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let r = c.refresh_timed(start);
        let g = r.snapshot.find(&me).unwrap();
        if g.hot.v1.freezer_state == Some(cgtop::cgroupfs::v1::FreezerState::Frozen) {
            assert_eq!(g.hot.events.unwrap().frozen, Some(true));
            assert_eq!(g.hot.v1.sources.freezer, Some(HierKind::V1));
            break;
        }
        assert!(
            Instant::now() < until,
            "never frozen: {:?}",
            g.hot.v1.freezer_state
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    fs::write(s.dir("freezer", "freezer.state"), "THAWED").unwrap();
}

/// The CPU time of this process's thread named `name`, in clock ticks.
fn thread_ticks(name: &str) -> Option<u64> {
    for e in fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = fs::read_to_string(e.path().join("stat")).ok()?;
            let after = &stat[stat.rfind(')')? + 2..];
            let f: Vec<&str> = after.split_whitespace().collect();
            return Some(f[11].parse::<u64>().ok()? + f[12].parse::<u64>().ok()?);
        }
    }
    None
}

#[test]
fn the_event_watcher_on_a_v1_hierarchy_neither_fails_nor_spins() {
    use cgtop::source::events::{spawn, KmsgState, WatchCommand, Watched};
    use cgtop::source::hier::Hier;
    use std::sync::Arc;
    let Some(s) = V1Sandbox::or_skip() else {
        return;
    };
    // the v1 memory hierarchy as the primary: no cgroup.events,
    // memory.events, memory.swap.events nor pids.events anywhere
    let hier = Arc::new(Hier::open(&Path::new(BASE).join("memory")).unwrap());
    let me = GroupPath::new(&s.name);
    let cfg = crate::common::watch_config(me.clone());
    let (tx, rx) = std::sync::mpsc::channel::<Watched>();
    let h = spawn(hier, cfg, tx).unwrap();
    match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(Watched::Status(st)) => {
            assert_eq!(st.unwatched, 0, "absent files are not unwatched ones");
            assert_eq!(st.kmsg, KmsgState::Off);
            assert!(st.watches >= 1, "the directory is watched: {st:?}");
        }
        other => panic!("no status first: {other:?}"),
    }
    // a group made below is watched (its directory: IN_CREATE)
    fs::create_dir(s.dir("memory", "sub")).unwrap();
    let sub = me.concat(&GroupPath::new("sub"));
    // refreshes tell it the groups, past its retry of unwatched files
    for _ in 0..65 {
        h.send(WatchCommand::Groups(vec![me.clone(), sub.clone()]));
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = thread_ticks("events").expect("the watcher thread runs");
    std::thread::sleep(Duration::from_secs(1));
    let after = thread_ticks("events").expect("the watcher thread still runs");
    assert!(
        after - before <= 2,
        "the watcher spins: {} ticks in 1 s",
        after - before
    );
    let mut last = None;
    while let Ok(w) = rx.try_recv() {
        match w {
            Watched::Status(st) => last = Some(st),
            Watched::Events(e) => panic!("no event file, no event: {e:?}"),
            Watched::Alive => {}
        }
    }
    if let Some(st) = last {
        assert_eq!(st.unwatched, 0, "{st:?}");
        assert!(st.watches >= 2, "the new group's directory too: {st:?}");
    }
    h.send(WatchCommand::Stop);
}

#[test]
fn batch_on_a_v1_hierarchy_says_cgroup_v1() {
    if !rustix::process::geteuid().is_root()
        || !Path::new(BASE)
            .join("memory/memory.usage_in_bytes")
            .exists()
    {
        eprintln!("skipped: needs root and a v1 memory hierarchy");
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args([
            "--root",
            "/sys/fs/cgroup/memory",
            "-b",
            "-n",
            "1",
            "-d",
            "0.1",
            "--depth",
            "0",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("cgroup v1 /sys/fs/cgroup/memory (v1 only, v1 holds memory)"),
        "{first}"
    );
    assert!(!first.contains("cgroup2"), "{first}");
    // the root's memory.usage_in_bytes, not "-"
    let root = text.lines().nth(2).unwrap();
    assert!(
        root.starts_with('/') && root.split_whitespace().nth(2) != Some("-"),
        "{text}"
    );
}

/// What strace, run with `trace` (its options before `-o`), logs of the
/// binary run with `args` over all its threads; `None` without strace.
fn strace_of(trace: &[&str], args: &[&str]) -> Option<String> {
    let log = std::env::temp_dir().join(format!(
        "cgtop-test-{}-{}-strace",
        std::process::id(),
        crate::common::unique_n()
    ));
    let st = Command::new("strace")
        .args(trace)
        .arg("-o")
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    let text = fs::read_to_string(&log).unwrap_or_default();
    let _ = fs::remove_file(&log);
    assert!(st.success(), "cgtop {args:?}: {st}");
    Some(text)
}

/// The inotify watches (and instances) the binary run with `args` sets,
/// counted by strace over all its threads; `None` without strace.
fn watches_set(args: &[&str]) -> Option<usize> {
    let text = strace_of(
        &["-f", "-qq", "-e", "trace=inotify_add_watch,inotify_init1"],
        args,
    )?;
    Some(
        text.lines()
            .filter(|l| l.contains("inotify_add_watch(") || l.contains("inotify_init1("))
            .count(),
    )
}

#[test]
fn a_run_that_prints_one_refresh_sets_no_watch() {
    // a one-shot run can print no event: neither the event watcher nor
    // the v1 scanners' directory watches are set (before: one watch per
    // group directory of every v1 hierarchy, and the watcher's)
    let Some(s) = V1Sandbox::or_skip() else {
        return;
    };
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: no strace to count the watches with");
        return;
    }
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    let name = s.name.clone();
    // the control: a run of two printed refreshes watches (so the count
    // below is not zero for want of counting)
    let two = watches_set(&["-b", "-n", "2", "-d", "0.1", &name]);
    let Some(two) = two else {
        println!("skipped: strace did not run");
        return;
    };
    assert!(
        two > 0,
        "-b -n 2 watches the groups (events can be printed)"
    );
    for args in [
        &["-b", "-n", "1", "-d", "0.1", &name][..],
        &["--json", "-n", "1", "-d", "0.1", &name][..],
        &["--json", "--brief", "-n", "1", "-d", "0.1", &name][..],
        &["--openmetrics", &name][..],
    ] {
        assert_eq!(watches_set(args), Some(0), "cgtop {args:?}");
    }
}

#[test]
fn a_group_directory_is_listed_with_one_getdents64_call() {
    // kernfs says in the last entry of a getdents64 call whether that
    // was the end of the directory (its d_off INT_MAX): a directory of
    // a few dozen entries is listed with one call, not two (the second
    // gave nothing); a directory whose entries fill more than one call's
    // buffer is still listed whole
    let Some(s) = V1Sandbox::or_skip() else {
        return;
    };
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: no strace to count the getdents64 calls with");
        return;
    }
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    // 8 KiB of entries and more: 150 names of 72 bytes (88-byte records)
    let many: Vec<String> = (0..150)
        .map(|i| format!("child-{i:03}-{}", "x".repeat(62)))
        .collect();
    for n in &many {
        fs::create_dir(s.dir("unified", &format!("c/{n}"))).unwrap();
    }
    let name = s.name.clone();
    let args = ["-b", "--kernel-names", "-n", "1", "-d", "0.1", &name];
    let Some(log) = strace_of(&["-f", "-qq", "-e", "trace=getdents64"], &args) else {
        println!("skipped: strace did not run");
        return;
    };
    let calls = log.lines().filter(|l| l.contains("getdents64(")).count();
    // every group directory listed once in each hierarchy holding it,
    // one call each (two before: the second said only "end"); the large
    // one takes two, and a few others are listed again (the start
    // group's checks). But the priming walk of the v1 rate counters'
    // hierarchies (cpu, cpuacct, blkio) lists no group without a child
    // other than the first of its siblings (whose files are theirs): the
    // top, a and a/b, and c where it is listed first; cgroup2 (its 4
    // groups and c's 150 children, c in two calls) is listed whole, and
    // memory, pids and freezer are not primed, their 4 groups listed
    let least = 154 + 1 + 3 * 3 + 3 * 4;
    let most = least + 3 + 1;
    assert!(
        calls >= least && calls < most + most / 4,
        "{calls} getdents64 calls for {least}-{most} directories listed"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for n in &many {
        assert!(text.contains(n.as_str()), "{n} listed:\n{text}");
    }
}

/// The opens of files named `name` by the binary run with `args`,
/// counted by strace over all its threads; `None` without strace.
fn opens_of(args: &[&str], name: &str) -> Option<usize> {
    let text = strace_of(&["-f", "-qq", "-e", "trace=open,openat,openat2"], args)?;
    let quoted = format!("{name}\"");
    Some(text.lines().filter(|l| l.contains(&quoted)).count())
}

#[test]
fn a_run_that_shows_no_event_count_reads_no_memory_events() {
    // memory.events is cgroup2's, and memory is a v1 controller here: the
    // baseline of "since start" would open it in every group and fail.
    // -b's table and --json --brief show no such count: nothing opens it
    let Some(s) = V1Sandbox::or_skip() else {
        return;
    };
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: no strace to count the opens with");
        return;
    }
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    let name = s.name.clone();
    for args in [
        &["-b", "-n", "1", "-d", "0.1", &name][..],
        &["--json", "--brief", "-n", "1", "-d", "0.1", &name][..],
    ] {
        let Some(n) = opens_of(args, "memory.events") else {
            println!("skipped: strace did not run");
            return;
        };
        assert_eq!(n, 0, "cgtop {args:?}");
    }
}

/// The TUI's first look on this hybrid host: cgroup2's cgroup.stat says
/// which subtree is large without walking it, each v1 hierarchy lists
/// what cgroup2 opened, and the groups shown carry their v1 figures.
///
/// ```text
/// cgtop-test-<pid>-<n>      325 groups below: a first look
/// ├─ big                    320 groups below: not listed, shown folded
/// └─ small
///    ├─ a                   a process: PIDs and memory from v1
///    └─ b
/// ```
#[test]
fn the_first_look_reads_the_groups_shown_from_every_hierarchy() {
    let Some(mut s) = V1Sandbox::or_skip() else {
        return;
    };
    for h in HIERS {
        fs::create_dir(s.dir(h, "big")).unwrap();
        for k in 0..32 {
            let rack = s.dir(h, &format!("big/r-{k:02}"));
            fs::create_dir(&rack).unwrap();
            for n in 0..9 {
                fs::create_dir(rack.join(format!("n-{n}"))).unwrap();
            }
        }
        for sub in ["small", "small/a", "small/b"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    // one task: dash forks a `sleep` it is not told to exec, and the fork
    // lands in the group or not as the move below races it
    let pid = s.spawn("exec sleep 60");
    for h in HIERS {
        fs::write(s.dir(h, "small/a/cgroup.procs"), pid.to_string()).unwrap();
    }
    let o = opts(&s.name);
    let (_, mut c) = crate::common::collector_for(&o, false);
    c.set_grade_limits(true);
    c.defer_start_up();
    c.set_first_look(true);
    let p = c
        .first_look(Instant::now())
        .expect("a first look: 325 groups");
    let me = GroupPath::new(&s.name);
    let at = |sub: &str| me.concat(&GroupPath::new(sub));
    let mut paths: Vec<String> = p
        .refresh
        .snapshot
        .groups
        .iter()
        .map(|g| g.path.to_string())
        .collect();
    paths.sort();
    let mut want: Vec<String> = [
        me.clone(),
        at("big"),
        at("small"),
        at("small/a"),
        at("small/b"),
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    want.sort();
    assert_eq!(paths, want, "the groups the first screen shows");
    assert_eq!(p.unlisted, [at("big")]);
    let a = p.refresh.snapshot.find(&at("small/a")).unwrap();
    assert_eq!(a.hot.pids_current, Some(1), "v1 pids.current");
    assert_eq!(a.hot.v1.sources.memory, Some(HierKind::V1));
    assert!(a.hot.memory_current.is_some(), "v1 memory.usage_in_bytes");
    assert_eq!(p.refresh.limits.len(), 5);
    // the first refresh after it: every group, as without the look
    let r = c.refresh_timed(Instant::now());
    assert_eq!(r.snapshot.groups.len(), 1 + 1 + 32 * 10 + 3);
}

/// A sandbox with groups a, a/b and c in every hierarchy, for counting
/// a run's reads with strace; `None` (said as skipped) without v1
/// hierarchies or strace.
fn counted_sandbox() -> Option<V1Sandbox> {
    let s = V1Sandbox::or_skip()?;
    if Command::new("strace").arg("-V").output().is_err() {
        println!("skipped: no strace to count the reads with");
        return None;
    }
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    Some(s)
}

/// How many times the binary run with `args` read each file whose path
/// ends in one of `names` (pread64 on its descriptor, strace's `-y`
/// naming the file), over all its threads; `None` without strace.
fn reads_of(args: &[&str], names: &[&str]) -> Option<Vec<usize>> {
    let text = strace_of(&["-f", "-qq", "-y", "-e", "trace=pread64,read"], args)?;
    let call = |l: &str| {
        // "PID pread64(7</sys/fs/cgroup/...>, ...": the call, not its
        // "<... resumed>" end
        // (strace pads the PID: "3281  pread64(...")
        let l = l.split_once(' ').map_or(l, |(_, rest)| rest.trim_start());
        l.starts_with("pread64(") || l.starts_with("read(")
    };
    Some(
        names
            .iter()
            .map(|file| {
                let ends = format!("/{file}>");
                text.lines()
                    .filter(|l| call(l) && l.contains(&ends))
                    .count()
            })
            .collect(),
    )
}

#[test]
fn a_one_shot_run_reads_each_rate_counter_twice_and_cgroup2_levels_once() {
    // the priming read reads only what rates are computed from (cpuacct's
    // and the cpu hierarchy's counters, blkio's); the levels are read
    // within the interval (`Collector::read_levels`): cgroup2's
    // cgroup.events once, as the printed refresh's read of the group's
    // cpu.stat says it is the same group; memory, PIDs and the freezer's
    // state again by the printed refresh (a v1 hierarchy with no rate
    // counter: that read is what says the group is still there)
    let Some(s) = counted_sandbox() else {
        return;
    };
    let name = s.name.clone();
    let groups = 4;
    let levels = [
        "memory.usage_in_bytes",
        "pids.current",
        "freezer.state",
        "cgroup.events",
    ];
    let counters = [
        "cpuacct.usage",
        "cpu.stat",
        "blkio.throttle.io_service_bytes_recursive",
    ];
    for args in [
        &["-b", "-n", "1", "-d", "0.1", &name][..],
        &["--json", "--brief", "-n", "1", "-d", "0.1", &name][..],
    ] {
        let Some(n) = reads_of(args, &levels) else {
            println!("skipped: strace did not run");
            return;
        };
        // every group below a v1 root has pids.current and freezer.state
        assert_eq!(
            n,
            [2 * groups, 2 * groups, 2 * groups, groups],
            "cgtop {args:?}: {levels:?} read twice a group (v1), once (cgroup2)"
        );
        // the blkio hierarchy's root file, beside the groups': which disks
        // blkio counts (`root::uncounted_disks`), one file a refresh
        let root_blkio = "blkio/blkio.throttle.io_service_bytes_recursive";
        let mut names = counters.to_vec();
        names.push(root_blkio);
        let n = reads_of(args, &names).unwrap();
        // cpu.stat: cgroup2's and the cpu hierarchy's, each twice
        assert_eq!(
            [n[0], n[1], n[2] - n[3]],
            [2 * groups, 2 * 2 * groups, 2 * groups],
            "cgtop {args:?}: {counters:?} read twice a group"
        );
        // two refreshes, a read call and the one that finds its end each
        assert!(
            n[3] <= 4,
            "cgtop {args:?}: {root_blkio} read {} times",
            n[3]
        );
    }
}

#[test]
fn the_table_reads_no_cpu_split_that_only_json_prints() {
    // -b's CPU% is cpuacct.usage's: the user/system split (JSON's
    // user_pct, system_pct) is neither opened nor read for it; --json
    // reads it twice, the priming read's and the printed one's
    let Some(s) = counted_sandbox() else {
        return;
    };
    let name = s.name.clone();
    let groups = 4;
    let split = ["cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"];
    for (args, want) in [
        (&["-b", "-n", "1", "-d", "0.1", &name][..], [0, 0, 0]),
        (&["-b", "-n", "2", "-d", "0.1", &name][..], [0, 0, 0]),
        (
            &["--json", "--brief", "-n", "1", "-d", "0.1", &name][..],
            [2 * groups, 2 * groups, 0],
        ),
    ] {
        let Some(n) = reads_of(args, &split) else {
            println!("skipped: strace did not run");
            return;
        };
        assert_eq!(n, want, "cgtop {args:?}: reads of {split:?}");
        let opened: Vec<usize> = split.iter().map(|f| opens_of(args, f).unwrap()).collect();
        assert_eq!(
            opened.iter().all(|&o| o == 0),
            want == [0, 0, 0],
            "cgtop {args:?}: opens of {split:?}: {opened:?}"
        );
    }
    // JSON's split has its figures
    let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "--brief", "-n", "1", "-d", "0.1", &name])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let top = &doc["groups"][0];
    assert!(top["cpu"]["user_usec"].is_u64(), "{top}");
}

#[test]
fn the_table_reads_no_io_operations_that_only_json_prints() {
    // -b's READ/s and WRITE/s are bytes (blkio's io_service_bytes): the
    // operation counts (JSON's rios, wios) are neither opened nor read for
    // it; --json reads them twice, the priming read's and the printed one's
    let Some(s) = counted_sandbox() else {
        return;
    };
    let name = s.name.clone();
    let groups = 4;
    let ops = "blkio.throttle.io_serviced_recursive";
    for (args, want) in [
        (&["-b", "-n", "1", "-d", "0.1", &name][..], 0),
        (&["-b", "-n", "2", "-d", "0.1", &name][..], 0),
        (
            &["--json", "--brief", "-n", "1", "-d", "0.1", &name][..],
            2 * groups,
        ),
    ] {
        let Some(n) = reads_of(args, &[ops]) else {
            println!("skipped: strace did not run");
            return;
        };
        assert_eq!(n, [want], "cgtop {args:?}: reads of {ops}");
        let opened = opens_of(args, ops).unwrap();
        assert_eq!(
            opened == 0,
            want == 0,
            "cgtop {args:?}: opens of {ops}: {opened}"
        );
    }
}

/// A `-b` table as (the column titles, each row's group and its figures
/// from READ/s on: CPU% and MEM may move between two runs).
fn table_of(text: &str) -> (String, Vec<String>) {
    let mut lines = text.lines().skip(1);
    let titles = lines.next().unwrap_or_default().to_owned();
    let at = |t: &str| titles.find(t).unwrap();
    let (cpu, read) = (at("CPU%"), at("READ/s"));
    let rows = lines
        .take_while(|l| !l.is_empty())
        .map(|l| {
            // the name column ends where the CPU% column begins
            let name = l[..cpu].trim_end();
            format!("{name}|{}", l.get(read..).unwrap_or_default())
        })
        .collect();
    (titles, rows)
}

#[test]
fn a_one_shot_table_has_the_columns_and_groups_of_a_refresh_after_a_full_read() {
    // the one-shot run reads differently (a priming read of the rate
    // counters, no user/system split); its table is that of the second
    // refresh of a run of two (whose first read is a whole one)
    let Some(s) = V1Sandbox::or_skip() else {
        return;
    };
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    let name = s.name.clone();
    let run = |n: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["-b", "--kernel-names", "-n", n, "-d", "0.1", &name])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let one = run("1");
    let two = run("2");
    // the second refresh of the two
    let second = two.split("\n\n").nth(1).unwrap();
    let (t1, r1) = table_of(&one);
    let (t2, r2) = table_of(second);
    assert_eq!(t1, t2, "the column titles");
    assert_eq!(r1.len(), 4, "{one}");
    assert_eq!(r1, r2, "groups, IO, PIDs and state:\n{one}\n{second}");
    // every row has a CPU figure (the rates primed), not '-'
    for l in one.lines().skip(2).take(4) {
        let cpu = l.split_whitespace().nth(1).unwrap();
        assert!(cpu.parse::<f64>().is_ok(), "{l}");
    }
}

/// `cgtop serve`'s reading on this hybrid host keeps the exposition's
/// files open from one scrape to the next (counted in the refresh's kept
/// descriptors, beside the scanners'), and each scrape still shows the
/// tree as it is then: a limit changed, a group made, a group removed and
/// made again under its name with another limit (kernfs gives the old
/// group's kept files ENODEV: read anew), a group removed.
#[test]
fn the_exporter_keeps_its_files_between_scrapes_and_follows_groups_made_and_removed() {
    let Some(sb) = V1Sandbox::or_skip() else {
        return;
    };
    let o = opts(&sb.name);
    let (m, hier, hiers) = cgtop::run::locate(&o).unwrap();
    let scanners = {
        let cfg = cgtop::run::collector_config(&o, &m, false);
        let mut plain = Collector::with_hiers(cfg, hier.clone(), &hiers);
        plain.refresh(Duration::from_secs(1)).kept_fds
    };
    let mut c = Collector::with_hiers(cgtop::run::collector_config(&o, &m, true), hier, &hiers);
    c.set_export_reading(true);
    let mut at = 0;
    let mut scrape = || {
        at += 1;
        let r = c.refresh(Duration::from_secs(at));
        let text = cgtop::run::serve::render(
            &r,
            None,
            Duration::from_millis(1),
            cgtop::render::openmetrics::Format::OpenMetrics,
        );
        (r.kept_fds, text)
    };
    let a_max = format!("cgroup_pids_max{{cgroup=\"/{}/a\"}}", sb.name);
    let make_a = |max: &str| {
        for h in HIERS {
            fs::create_dir(sb.dir(h, "a")).unwrap();
        }
        fs::write(sb.dir("pids", "a/pids.max"), max).unwrap();
    };
    let remove_a = || {
        for h in HIERS {
            fs::remove_dir(sb.dir(h, "a")).unwrap();
        }
    };
    let (alone, _) = scrape();
    assert!(
        alone > scanners,
        "the exposition's files are kept beside the scanners' ({alone} vs {scanners})"
    );
    make_a("41");
    let (with_a, text) = scrape();
    assert!(text.contains(&format!("{a_max} 41\n")), "{text}");
    assert!(with_a > alone, "a's files kept too ({with_a} vs {alone})");
    fs::write(sb.dir("pids", "a/pids.max"), "42").unwrap();
    let (kept, text) = scrape();
    assert_eq!(kept, with_a, "read through the kept files");
    assert!(text.contains(&format!("{a_max} 42\n")), "{text}");
    remove_a();
    make_a("43");
    let (_, text) = scrape();
    assert!(
        text.contains(&format!("{a_max} 43\n")),
        "made again: the new group's limit\n{text}"
    );
    remove_a();
    let (gone, text) = scrape();
    assert!(!text.contains(&a_max), "{text}");
    assert_eq!(gone, alone, "a's files closed");
}

/// `-b -n 1`'s reading (`Collector::prime`, `read_levels` within the
/// interval, then the printed refresh): a group removed and made again
/// under its name between the priming read and the output, before or
/// after the level figures were read, is shown as the new group: no CPU
/// rate from the old group's counter, and its own levels (no process,
/// not populated), not the old group's.
#[test]
fn a_group_made_again_between_the_priming_read_and_the_output_has_no_old_rate_nor_levels() {
    for after_levels in [false, true] {
        let Some(mut s) = V1Sandbox::or_skip() else {
            return;
        };
        for h in HIERS {
            fs::create_dir(s.dir(h, "a")).unwrap();
        }
        let busy = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = busy.id();
        s.sb.children.push(busy);
        for h in HIERS {
            fs::write(s.dir(h, "a/cgroup.procs"), pid.to_string()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(300));
        let o = opts(&s.name);
        let (_, mut c) = crate::common::collector_for(&o, false);
        // as a one-shot run: no watch, no user/system split
        c.set_watching(false);
        c.set_cpu_split(false);
        c.prime(Duration::from_secs(1));
        let old_inode = fs::metadata(s.dir("unified", "a")).unwrap();
        let remake = |s: &mut V1Sandbox| {
            for mut child in s.sb.children.drain(..) {
                let _ = child.kill();
                let _ = child.wait();
            }
            let until = Instant::now() + Duration::from_secs(5);
            for h in HIERS {
                while fs::remove_dir(s.dir(h, "a")).is_err() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
                fs::create_dir(s.dir(h, "a")).unwrap();
            }
        };
        if !after_levels {
            remake(&mut s);
        }
        c.read_levels();
        if after_levels {
            remake(&mut s);
        }
        std::thread::sleep(Duration::from_millis(100));
        let r = c.refresh(Duration::from_secs(2));
        let want = format!("/{}/a", s.name);
        let i = (r.snapshot.groups.iter())
            .position(|g| g.path.to_string() == want)
            .unwrap_or_else(|| {
                panic!("{want} listed (made again after the levels: {after_levels})")
            });
        let g = &r.snapshot.groups[i];
        assert_ne!(
            g.inode,
            std::os::unix::fs::MetadataExt::ino(&old_inode),
            "the new group's directory"
        );
        assert_eq!(
            r.rates[i].cpu_pct, None,
            "no rate from the old group's counter (after the levels: {after_levels})"
        );
        assert_eq!(
            g.hot.pids_current,
            Some(0),
            "its own PIDs (after the levels: {after_levels})"
        );
        assert_eq!(
            g.hot.events.and_then(|e| e.populated),
            Some(false),
            "its own cgroup.events (after the levels: {after_levels})"
        );
    }
}

/// The shape of a `--json` group: its keys, and those of its rates.
fn json_shape(g: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = g.as_object().unwrap().keys().cloned().collect();
    if let Some(r) = g["rates"].as_object() {
        keys.extend(r.keys().map(|k| format!("rates.{k}")));
    }
    keys
}

#[test]
fn a_one_shot_run_prints_the_groups_columns_and_rates_of_a_run_of_two() {
    // `-b -n 1` and `--json -n 1` (priming read, levels read within the
    // interval, the rate counters at its end) against the second refresh
    // of a run of two (whose first read is a whole one): the same groups,
    // the same columns and JSON keys, and a busy loop under a 20 % CPU
    // quota shown at most at its quota (with room for one period's
    // rounding over 0.1 s) and above nothing
    let Some(mut s) = V1Sandbox::or_skip() else {
        return;
    };
    for h in HIERS {
        for sub in ["a", "a/b", "c"] {
            fs::create_dir(s.dir(h, sub)).unwrap();
        }
    }
    fs::write(s.dir("cpu", "a/b/cpu.cfs_quota_us"), "20000").unwrap();
    let busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let pid = busy.id();
    s.sb.children.push(busy);
    for h in HIERS {
        fs::write(s.dir(h, "a/b/cgroup.procs"), pid.to_string()).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let name = s.name.clone();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(args)
            .args(["-d", "0.1", &name])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let busy_path = format!("/{name}/a/b");
    // --json: whole, the same groups and keys
    let one = run(&["--json", "-n", "1"]);
    let two = run(&["--json", "-n", "2"]);
    let one: serde_json::Value = serde_json::from_str(&one).expect("one JSON document");
    let second: serde_json::Value = serde_json::Deserializer::from_str(&two)
        .into_iter::<serde_json::Value>()
        .nth(1)
        .expect("a second document")
        .unwrap();
    let groups = |v: &serde_json::Value| v["groups"].as_array().unwrap().clone();
    let paths = |v: &serde_json::Value| -> Vec<String> {
        groups(v)
            .iter()
            .map(|g| g["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(paths(&one), paths(&second), "the groups");
    assert_eq!(paths(&one).len(), 4);
    for (a, b) in groups(&one).iter().zip(&groups(&second)) {
        assert_eq!(json_shape(a), json_shape(b), "the keys of {}", a["path"]);
    }
    let busy_json = groups(&one)
        .into_iter()
        .find(|g| g["path"] == busy_path.as_str())
        .unwrap();
    let cpu = busy_json["rates"]["cpu_pct"].as_f64().unwrap();
    assert!(
        cpu > 1.0 && cpu <= 40.0,
        "--json: a 20 % quota's loop at {cpu} %"
    );
    // -b: the same columns and groups, the loop's CPU% within its quota
    let one = run(&["-b", "--kernel-names", "-n", "1"]);
    let two = run(&["-b", "--kernel-names", "-n", "2"]);
    let second = two.split("\n\n").nth(1).unwrap();
    let (t1, r1) = table_of(&one);
    let (t2, r2) = table_of(second);
    assert_eq!(t1, t2, "the column titles");
    let names = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .map(|r| r.split('|').next().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(names(&r1), names(&r2), "the groups:\n{one}\n{second}");
    assert_eq!(r1.len(), 4, "{one}");
    let titles = one.lines().nth(1).unwrap();
    let at = titles.find("CPU%").unwrap();
    let row = (one.lines().skip(2))
        .find(|l| l[..at].trim_end().ends_with('b'))
        .unwrap_or_else(|| panic!("the loop's row:\n{one}"));
    let cpu: f64 = row[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("a CPU figure: {row}"));
    assert!(
        cpu > 1.0 && cpu <= 40.0,
        "-b: a 20 % quota's loop at {cpu} %:\n{one}"
    );
}

#[test]
fn a_one_shot_run_opens_no_level_file_before_the_priming_read_reads_its_counters() {
    // the priming read's walk opens the rate counters only: cgroup2's
    // cgroup.events (and the v1 levels, whose hierarchies are walked
    // after it) are opened after its first counter was read, on the
    // way to the output's interval rather than to its stamp
    let Some(s) = counted_sandbox() else {
        return;
    };
    let name = s.name.clone();
    let Some(text) = strace_of(
        &["-f", "-qq", "-y", "-e", "trace=openat,openat2,pread64"],
        &["-b", "-n", "1", "-d", "0.1", &name],
    ) else {
        println!("skipped: strace did not run");
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let first = |what: &str, call: &str| {
        lines
            .iter()
            .position(|l| l.contains(call) && l.contains(what))
    };
    // the priming read's first counter read (strace's -y names the file
    // a descriptor is of), after every walk of its hierarchies
    let counter = first("cpu.stat>", "pread64(").expect("a counter read");
    for level in ["cgroup.events", "memory.usage_in_bytes", "pids.current"] {
        let open = first(level, "openat").unwrap_or_else(|| panic!("{level} opened"));
        assert!(
            open > counter,
            "{level} opened (line {open}) before the first counter was read (line {counter})"
        );
    }
}
