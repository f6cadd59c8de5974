//! The one cgroup sandbox of the tests that touch the real kernel (the
//! host's real-kernel and terminal tests, `tests/hostile`, and the VM
//! suite through `tests/guest/vm_common.rs`): a group `cgtop-test-<pid>-<n>`
//! directly below the cgroup2 mount named in /proc/self/mountinfo, that
//! the test works in and that is thawed, killed (`cgroup.kill`, which
//! reaches only its own subtree) and removed on drop, also when an
//! assertion panicked.
//!
//! It acts only inside its own group: the mount must be a cgroup2 file
//! system (statfs), every path it builds is a [`GroupPath`] (which cannot
//! hold `..`) checked to lie within the group, and the cleanup checks the
//! group's name before it writes or removes anything.
//!
//! The mount is read here rather than through `cgtop::source::mount`, so
//! that what the tests may touch does not rest on the code under test
//! (`real_kernel_view` checks that both find the same mount).

// each test crate uses its own part of this module
#![allow(dead_code)]

use cgtop::model::GroupPath;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The start of the name of every group a test makes.
pub const PREFIX: &str = "cgtop-test-";

/// statfs(2)'s f_type of a cgroup2 mount (linux/magic.h).
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// How long the cleanup waits for the killed processes to go and the
/// groups to be removable.
const CLEANUP_LIMIT: Duration = Duration::from_secs(10);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A test's own group and the processes the test started; Drop thaws,
/// kills and removes it all.
pub struct Sandbox {
    /// The cgroup2 mount the group is in.
    pub root: PathBuf,
    /// `cgtop-test-<pid>-<n>` (and `-<label>`), directly below the mount.
    pub top: GroupPath,
    /// The same as text: a group argument for the cgtop binary.
    pub rel: String,
    /// The processes the test started, killed and reaped on drop.
    pub children: Vec<Child>,
}

impl Sandbox {
    /// The sandbox, or the reason it cannot be made here (not root, no
    /// cgroup2 mount, or the mount is not writable).
    pub fn new() -> Result<Self, String> {
        Self::create(None)
    }

    /// The same, named `cgtop-test-<pid>-<n>-<label>`: a name to tell the
    /// cases apart in a screen or a figure (the VM suite's).
    pub fn labelled(label: &str) -> Result<Self, String> {
        Self::create(Some(label))
    }

    fn create(label: Option<&str>) -> Result<Self, String> {
        let uid = rustix::process::geteuid();
        if !uid.is_root() {
            return Err(format!(
                "not root (uid {}): the real-kernel tests create cgroups",
                uid.as_raw()
            ));
        }
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let root = cgroup2_mount(&mountinfo).ok_or("no cgroup2 mount")?;
        #[allow(clippy::unnecessary_cast)]
        let magic = rustix::fs::statfs(&root).map(|s| s.f_type as i64);
        if magic != Ok(CGROUP2_SUPER_MAGIC) {
            return Err(format!("{} is not a cgroup2 file system", root.display()));
        }
        let mut rel = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        if let Some(l) = label {
            assert!(
                !l.is_empty() && !l.contains(['/', '\0']),
                "a label names one group: {l:?}"
            );
            rel = format!("{rel}-{l}");
        }
        std::fs::create_dir(root.join(&rel))
            .map_err(|e| format!("cannot create a cgroup under {}: {e}", root.display()))?;
        Ok(Self {
            top: GroupPath::new(&rel),
            rel,
            root,
            children: Vec::new(),
        })
    }

    /// The sandbox, or `None` after printing `skipped: <reason>` (the
    /// test then returns and passes: the machine cannot run it).
    pub fn or_skip() -> Option<Self> {
        match Self::new() {
            Ok(s) => Some(s),
            Err(reason) => {
                println!("skipped: {reason}");
                None
            }
        }
    }

    /// A group below the sandbox's top ("" is the top itself); `..` is
    /// refused by [`GroupPath`].
    pub fn path(&self, sub: &str) -> GroupPath {
        if sub.is_empty() {
            self.top.clone()
        } else {
            self.top.concat(&GroupPath::new(sub))
        }
    }

    /// The directory of [`Self::path`].
    pub fn dir(&self, sub: &str) -> PathBuf {
        self.group_dir(&self.path(sub))
    }

    /// The directory of a group of the sandbox; panics for any other.
    pub fn group_dir(&self, g: &GroupPath) -> PathBuf {
        assert!(
            g.is_within(&self.top),
            "{g} is outside the test's sandbox {}",
            self.top
        );
        self.root.join(g.as_rel_path())
    }

    /// Reads a file of a group of the sandbox; panics if it cannot.
    pub fn file(&self, g: &GroupPath, file: &str) -> String {
        let p = self.group_dir(g).join(file);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    /// Creates `sub` and its missing parents with mkdir(2) (not through
    /// cgtop's writer).
    pub fn mkdir(&self, sub: &str) {
        let d = self.dir(sub);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
    }

    /// Waits until group `sub`'s cgroup.events holds `what` ("frozen 1");
    /// panics with the file after 5 s.
    pub fn wait_events(&self, sub: &str, what: &str) {
        let file = self.dir(sub).join("cgroup.events");
        let events = || std::fs::read_to_string(&file).unwrap_or_default();
        let t0 = Instant::now();
        while !events().contains(what) {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "{} never showed {what:?}: {:?}",
                file.display(),
                events()
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// Starts a process that the test owns, outside the sandbox's groups,
    /// in a session of its own ([`spawn_detached`]).
    pub fn spawn(&mut self, argv: &[&str]) -> u32 {
        let child = spawn_detached(argv, |_| ());
        let pid = child.id();
        self.children.push(child);
        pid
    }

    /// Starts `argv` as a user would: as `uid`, group `uid`, with no
    /// supplementary groups (setpriv(1), util-linux), as [`Self::spawn`].
    pub fn spawn_as(&mut self, uid: u32, argv: &[&str]) -> u32 {
        let id = uid.to_string();
        let mut all = vec!["setpriv", "--reuid", &id, "--regid", &id, "--clear-groups"];
        all.extend_from_slice(argv);
        self.spawn(&all)
    }

    /// Starts `sh -c script` and moves it into group `sub` (by a plain
    /// write to cgroup.procs). A command the script runs last is `exec`'d
    /// (`exec sleep 60`): dash forks it, and the child stays where the
    /// shell was when it forked, in the group or outside it as the move
    /// and the fork fall (under load 13, the child was inside 6 times in
    /// 200): outside, it escapes the count and the cleanup.
    pub fn spawn_in(&mut self, sub: &str, script: &str) -> u32 {
        let pid = self.spawn(&["sh", "-c", script]);
        let procs = self.dir(sub).join("cgroup.procs");
        std::fs::write(&procs, pid.to_string())
            .unwrap_or_else(|e| panic!("move {pid} into {}: {e}", procs.display()));
        pid
    }

    /// Kills and reaps the processes the test started.
    pub fn kill_all(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.clear();
    }

    /// A collector of the real hierarchy that starts at the sandbox's top.
    pub fn collector(&self) -> cgtop::source::collector::Collector {
        use cgtop::source::collector::{Collector, CollectorConfig};
        Collector::new(CollectorConfig {
            root: self.root.clone(),
            start: self.top.clone(),
            scan: cgtop::source::scan::ScanConfig::default(),
            full_detail: false,
            sys_dev_block: PathBuf::from("/sys/dev/block"),
        })
    }

    /// Every group directory of the sandbox, deepest first.
    fn dirs(&self) -> Vec<PathBuf> {
        fn walk(d: &Path, out: &mut Vec<PathBuf>) {
            if let Ok(rd) = std::fs::read_dir(d) {
                for e in rd.flatten() {
                    if e.file_type().is_ok_and(|t| t.is_dir()) {
                        walk(&e.path(), out);
                    }
                }
            }
            out.push(d.to_path_buf());
        }
        let mut out = Vec::new();
        let top = self.dir("");
        if top.is_dir() {
            walk(&top, &mut out);
        }
        out
    }

    fn cleanup(&mut self) {
        // the one check that the cleanup's writes and rmdirs stay in a
        // test's own group, whatever the fields were set to
        let top = self.dir("");
        assert!(
            self.top.as_bytes().starts_with(PREFIX.as_bytes())
                && !self.top.as_bytes().contains(&b'/')
                && top.parent() == Some(self.root.as_path()),
            "refusing to clean up {}: not a test sandbox",
            top.display()
        );
        self.kill_all();
        // a frozen process still dies of SIGKILL, but thawing first lets
        // the groups empty at once; cgroup.kill then ends whatever the
        // test's processes forked (Linux 5.14+), and only in this subtree
        for d in self.dirs() {
            let _ = std::fs::write(d.join("cgroup.freeze"), "0");
        }
        let _ = std::fs::write(top.join("cgroup.kill"), "1");
        let t0 = Instant::now();
        while t0.elapsed() < CLEANUP_LIMIT {
            let events = std::fs::read_to_string(top.join("cgroup.events")).unwrap_or_default();
            if !events.lines().any(|l| l == "populated 1") {
                break;
            }
            sleep(Duration::from_millis(20));
        }
        while t0.elapsed() < CLEANUP_LIMIT {
            for d in self.dirs() {
                let _ = std::fs::remove_dir(&d);
            }
            if !top.exists() {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        eprintln!("warning: could not remove {}", top.display());
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// The mount point of the first cgroup2 mount in mountinfo text (a bind
/// mount of it may follow), with its octal escapes (`\040`) undone.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        // id parent maj:min root mountpoint opts [optional...] - fstype ...
        let (left, right) = line.split_once(" - ")?;
        if right.split(' ').next()? != "cgroup2" {
            return None;
        }
        left.split(' ').nth(4).map(unescape_octal)
    })
}

fn unescape_octal(s: &str) -> PathBuf {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).filter(|d| {
            b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)) && d[0] <= b'3'
        });
        if let Some(d) = octal {
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Starts `argv` in a session of its own, with no controlling terminal,
/// and returns once it is there. A workload a test puts into a test group
/// must be neither in the test's session nor on its terminal, or the lockout
/// guard (`cgtop::model::guard`, which protects the session and the terminal
/// of the process that writes) refuses to write to that group when the test
/// runs from a terminal (a tmux pane, an SSH session, `script`) and lets it
/// through without one (CI): the result would depend on where the test was
/// started. `setsid` (util-linux; busybox in the VM guest) calls setsid(2)
/// and execs `argv` in the same process, since a child the test spawns is
/// never a process group leader: the pid is the workload's. Until setsid(2)
/// has run, the process is still in the test's session; a test that froze
/// it or read the guard then would see it there, so this waits for it.
/// (`pre_exec` would do it without a program, but that is unsafe code,
/// which the crate forbids.) `setup` adds pipes or arguments before the
/// spawn.
pub fn spawn_detached(argv: &[&str], setup: impl FnOnce(&mut Command)) -> Child {
    let mut c = Command::new("setsid");
    c.args(argv);
    setup(&mut c);
    let mut child = c
        .spawn()
        .unwrap_or_else(|e| panic!("spawn setsid {argv:?}: {e}"));
    let pid = child.id();
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        // field 6 of /proc/PID/stat, after the name in parentheses: the session
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let sid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(3))
            .and_then(|s| s.parse::<u32>().ok());
        if sid == Some(pid) {
            return child;
        }
        if Instant::now() > end || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("setsid {argv:?}: pid {pid} never led a session of its own (stat: {stat})");
        }
        sleep(Duration::from_millis(5));
    }
}
