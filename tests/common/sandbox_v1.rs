//! The v1 side of the tests' one cgroup sandbox (`sandbox.rs` is the
//! cgroup2 side): one group `cgtop-test-<pid>-<n>-<label>` made at the same
//! path in several cgroup v1 hierarchies at once, and in the cgroup2 mount
//! of a hybrid host, as systemd places a unit at the same path in every
//! hierarchy. The tests that prove cgtop on v1 and hybrid layouts work in
//! it: `tests/kernel/v1_fio.rs` on this hybrid host, `tests/guest/v1.rs` in the
//! v1 and hybrid QEMU guests.
//!
//! It acts only inside its own group: every mount it uses must be a
//! cgroup (v1) or cgroup2 file system (statfs), every path it builds is a
//! [`GroupPath`] checked to lie within the group, and the cleanup checks
//! the group's name before it writes or removes anything. There is no
//! `cgroup.kill` on v1: the cleanup thaws the group's freezer, then
//! SIGKILLs each process listed in the group's `cgroup.procs` (only the
//! processes the test started and their children are ever moved in), and
//! removes the directories deepest first, in every hierarchy, also when an
//! assertion panicked. Groups are made, read, written and removed through
//! directory descriptors, one name at a time, so a test may nest them past
//! PATH_MAX.
//!
//! The mounts are read here from /proc/self/mountinfo rather than through
//! `cgtop::source::mount`, so that what the tests may touch does not rest
//! on the code under test.

#![allow(dead_code)]

use cgtop::model::GroupPath;
use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub use super::sandbox::PREFIX;

/// statfs(2)'s f_type of a cgroup v1 mount (linux/magic.h).
const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;
/// ... and of a cgroup2 mount.
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

const CLEANUP_LIMIT: Duration = Duration::from_secs(10);

/// Counts from 500 so that a name never repeats one of `sandbox.rs`'s
/// (which counts from 0) in the same test process.
static NEXT: AtomicU32 = AtomicU32::new(500);

/// One mounted hierarchy: its mount point and what it holds (controller
/// names, `name=systemd` for a named one; empty for cgroup2).
#[derive(Debug, Clone)]
pub struct Mounted {
    pub mount: PathBuf,
    pub controllers: Vec<String>,
    pub v2: bool,
}

/// The v1 controllers that can appear in a cgroup mount's options.
const V1_CONTROLLERS: &[&str] = &[
    "cpu",
    "cpuacct",
    "cpuset",
    "memory",
    "devices",
    "freezer",
    "net_cls",
    "net_prio",
    "blkio",
    "perf_event",
    "hugetlb",
    "pids",
    "rdma",
    "misc",
];

/// Every cgroup v1 hierarchy in mountinfo text, once each (a bind mount of
/// a hierarchy already seen is left out), and the first cgroup2 mount.
pub fn mounted(mountinfo: &str) -> Vec<Mounted> {
    let mut out: Vec<Mounted> = Vec::new();
    let mut seen_dev = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut r = right.split(' ');
        let fstype = r.next().unwrap_or("");
        let _source = r.next();
        let opts = r.next().unwrap_or("");
        let mut l = left.split(' ');
        let dev = l.nth(2).unwrap_or("").to_owned();
        let Some(point) = l.nth(1) else { continue };
        if seen_dev.contains(&dev) {
            continue;
        }
        let mount = super::sandbox::cgroup2_mount(&format!("0 0 0 / {point} x - cgroup2 x x"))
            .unwrap_or_else(|| PathBuf::from(point));
        match fstype {
            "cgroup" => {
                let controllers: Vec<String> = opts
                    .split(',')
                    .filter(|o| V1_CONTROLLERS.contains(o) || o.starts_with("name="))
                    .map(str::to_owned)
                    .collect();
                if controllers.is_empty() {
                    continue;
                }
                seen_dev.push(dev);
                out.push(Mounted {
                    mount,
                    controllers,
                    v2: false,
                });
            }
            "cgroup2" if !out.iter().any(|m| m.v2) => {
                seen_dev.push(dev);
                out.push(Mounted {
                    mount,
                    controllers: Vec::new(),
                    v2: true,
                });
            }
            _ => {}
        }
    }
    out
}

/// A test's group in several hierarchies and the processes the test
/// started; Drop thaws, kills and removes it all.
pub struct V1Sandbox {
    /// The hierarchies the group is in (each v1 hierarchy asked for, and
    /// cgroup2 on a hybrid host).
    pub hiers: Vec<Mounted>,
    /// `cgtop-test-<pid>-<n>-<label>`, directly below each mount.
    pub top: GroupPath,
    /// The same as text: a group argument for the cgtop binary.
    pub rel: String,
    pub children: Vec<Child>,
}

impl V1Sandbox {
    /// The group in the hierarchy of each of `controllers` ("cpu",
    /// "memory", "blkio", "name=systemd", ...), and in cgroup2 if one is
    /// mounted beside them; or the reason it cannot be made here (not
    /// root, a controller without a v1 hierarchy, not writable).
    pub fn new(label: &str, controllers: &[&str]) -> Result<Self, String> {
        Self::create(label, controllers, true)
    }

    /// The same in the v1 hierarchies of `controllers` alone, never in
    /// cgroup2: for a test of what cgtop does where a group is in v1 only
    /// (on a hybrid host, a group in cgroup2 too is killed and moved there).
    pub fn v1_only(label: &str, controllers: &[&str]) -> Result<Self, String> {
        Self::create(label, controllers, false)
    }

    fn create(label: &str, controllers: &[&str], with_v2: bool) -> Result<Self, String> {
        let uid = rustix::process::geteuid();
        if !uid.is_root() {
            return Err(format!(
                "not root (uid {}): the real-kernel tests create cgroups",
                uid.as_raw()
            ));
        }
        assert!(
            !label.is_empty() && !label.contains(['/', '\0']),
            "a label names one group: {label:?}"
        );
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let all = mounted(&mountinfo);
        let mut hiers: Vec<Mounted> = Vec::new();
        for c in controllers {
            let m = all
                .iter()
                .find(|m| !m.v2 && m.controllers.iter().any(|x| x == c))
                .ok_or_else(|| format!("no cgroup v1 hierarchy holds {c}"))?;
            if !hiers.iter().any(|h| h.mount == m.mount) {
                hiers.push(m.clone());
            }
        }
        if let Some(v2) = all.iter().find(|m| m.v2).filter(|_| with_v2) {
            hiers.push(v2.clone());
        }
        for h in &hiers {
            #[allow(clippy::unnecessary_cast)]
            let magic = rustix::fs::statfs(&h.mount).map(|s| s.f_type as i64);
            let want = if h.v2 {
                CGROUP2_SUPER_MAGIC
            } else {
                CGROUP_SUPER_MAGIC
            };
            if magic != Ok(want) {
                return Err(format!("{} is not a cgroup file system", h.mount.display()));
            }
        }
        let rel = format!(
            "{PREFIX}{}-{}-{label}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let mut sb = Self {
            hiers: Vec::new(),
            top: GroupPath::new(&rel),
            rel,
            children: Vec::new(),
        };
        for h in hiers {
            let d = h.mount.join(&sb.rel);
            std::fs::create_dir(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            // in the list only once made: the cleanup removes what is listed
            sb.hiers.push(h);
        }
        Ok(sb)
    }

    /// The sandbox, or `None` after printing `skipped: <reason>`.
    pub fn or_skip(label: &str, controllers: &[&str]) -> Option<Self> {
        match Self::new(label, controllers) {
            Ok(s) => Some(s),
            Err(reason) => {
                println!("skipped: {reason}");
                None
            }
        }
    }

    /// A group below the sandbox's top ("" is the top itself).
    pub fn path(&self, sub: &str) -> GroupPath {
        if sub.is_empty() {
            self.top.clone()
        } else {
            self.top.concat(&GroupPath::new(sub))
        }
    }

    /// The hierarchy that holds `controller` ("blkio", "name=systemd"),
    /// or cgroup2 for "" .
    pub fn hier(&self, controller: &str) -> &Mounted {
        self.hiers
            .iter()
            .find(|h| {
                if controller.is_empty() {
                    h.v2
                } else {
                    h.controllers.iter().any(|c| c == controller)
                }
            })
            .unwrap_or_else(|| panic!("the sandbox is in no hierarchy of {controller:?}"))
    }

    /// The directory of group `g` in the hierarchy of `controller`; panics
    /// for a group outside the sandbox.
    pub fn dir_of(&self, controller: &str, g: &GroupPath) -> PathBuf {
        assert!(
            g.is_within(&self.top),
            "{g} is outside the test's sandbox {}",
            self.top
        );
        self.hier(controller).mount.join(g.as_rel_path())
    }

    /// Reads a file of a group in the hierarchy of `controller`.
    pub fn read(&self, controller: &str, g: &GroupPath, file: &str) -> String {
        let p = self.dir_of(controller, g).join(file);
        let dir = open_group(self.hier(controller), g)
            .unwrap_or_else(|e| panic!("open {}: {e}", p.display()));
        read_at(dir.as_fd(), file).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    /// The number in a one-number file ("memory.failcnt").
    pub fn read_u64(&self, controller: &str, g: &GroupPath, file: &str) -> u64 {
        let t = self.read(controller, g, file);
        t.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{file}: not a number: {t:?}"))
    }

    /// Writes `value` to a file of a group in the hierarchy of
    /// `controller` with one plain write(2) (the test's own setting, not
    /// cgtop's writer); panics with the error.
    pub fn write(&self, controller: &str, g: &GroupPath, file: &str, value: &str) {
        let p = self.dir_of(controller, g).join(file);
        let dir = open_group(self.hier(controller), g)
            .unwrap_or_else(|e| panic!("open {}: {e}", p.display()));
        write_at(dir.as_fd(), file, value)
            .unwrap_or_else(|e| panic!("write {value:?} to {}: {e}", p.display()));
    }

    /// Freezes `g` through its freezer.state (the test's own write, not
    /// cgtop's writer) and waits until the kernel says FROZEN; panics
    /// after 5 s.
    pub fn freeze(&self, g: &GroupPath) {
        self.write("freezer", g, "freezer.state", "FROZEN");
        let t0 = Instant::now();
        while self.read("freezer", g, "freezer.state").trim() != "FROZEN" {
            assert!(t0.elapsed() < Duration::from_secs(5), "{g} never froze");
            sleep(Duration::from_millis(10));
        }
    }

    /// Creates `sub` (and its missing parents) in every hierarchy, one
    /// name at a time from the parent's descriptor: a group may be nested
    /// past PATH_MAX.
    pub fn mkdir(&self, sub: &str) -> GroupPath {
        let g = self.path(sub);
        for h in &self.hiers {
            let mut dir = open_dir_at(None, &h.mount)
                .unwrap_or_else(|e| panic!("open {}: {e}", h.mount.display()));
            for name in g.components() {
                let name = std::ffi::OsStr::from_bytes(name);
                match rustix::fs::mkdirat(&dir, name, rustix::fs::Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => panic!("mkdir {} in {}: {e}", g, h.mount.display()),
                }
                dir = open_dir_at(Some(dir.as_fd()), Path::new(name))
                    .unwrap_or_else(|e| panic!("open {g} in {}: {e}", h.mount.display()));
            }
        }
        g
    }

    /// Moves `pid` (a process the test started) into `g` in every
    /// hierarchy, by plain writes to each cgroup.procs.
    pub fn move_pid(&self, pid: u32, g: &GroupPath) {
        for h in &self.hiers {
            let procs = h.mount.join(g.as_rel_path()).join("cgroup.procs");
            open_group(h, g)
                .map_err(std::io::Error::from)
                .and_then(|d| write_at(d.as_fd(), "cgroup.procs", &pid.to_string()))
                .unwrap_or_else(|e| panic!("move {pid} into {}: {e}", procs.display()));
        }
    }

    /// Starts `argv`, a process the test owns, outside the sandbox's
    /// groups, in a session of its own (`sandbox::spawn_detached`); killed
    /// on drop.
    pub fn spawn(&mut self, argv: &[&str]) -> u32 {
        let child = super::sandbox::spawn_detached(argv, |_| ());
        let pid = child.id();
        self.children.push(child);
        pid
    }

    /// Starts `argv` inside `g`: a shell waits on a pipe, is moved into the
    /// group in every hierarchy, and only then execs the workload, so that
    /// every byte and cycle of it is charged there. Its stdout is piped
    /// (take it from [`Self::child`]), its stderr inherited. The child is
    /// killed on drop; returns its pid.
    pub fn spawn_in(&mut self, g: &GroupPath, argv: &[&str]) -> u32 {
        // in a session of its own: see `sandbox::spawn_detached`
        let mut child =
            super::sandbox::spawn_detached(&["sh", "-c", "read go && exec \"$@\"", "sh"], |c| {
                c.args(argv)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit());
            });
        let pid = child.id();
        let mut stdin = child.stdin.take().expect("stdin");
        self.children.push(child);
        self.move_pid(pid, g);
        stdin
            .write_all(b"go\n")
            .expect("release the workload into its group");
        pid
    }

    /// The child started with pid `pid`.
    pub fn child(&mut self, pid: u32) -> &mut Child {
        self.children
            .iter_mut()
            .find(|c| c.id() == pid)
            .unwrap_or_else(|| panic!("{pid} is not a child of the test"))
    }

    /// Waits for child `pid` to end; `None` after `limit` (it is then
    /// still running, and killed on drop).
    pub fn wait_child(&mut self, pid: u32, limit: Duration) -> Option<std::process::ExitStatus> {
        let t0 = Instant::now();
        loop {
            if let Ok(Some(s)) = self.child(pid).try_wait() {
                return Some(s);
            }
            if t0.elapsed() > limit {
                return None;
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// The pids in `g`'s cgroup.procs in the hierarchy of `controller`.
    pub fn procs(&self, controller: &str, g: &GroupPath) -> Vec<u32> {
        self.read(controller, g, "cgroup.procs")
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Calls `f` with every directory of the sandbox in hierarchy `h`,
    /// deepest first: its parent's descriptor, its name and its own
    /// descriptor. Each is opened from its parent's descriptor by one name
    /// (never a symlink), so groups nested past PATH_MAX are reached too.
    fn each_dir(&self, h: &Mounted, f: &mut dyn FnMut(BorrowedFd<'_>, &OsStr, BorrowedFd<'_>)) {
        fn walk(
            parent: BorrowedFd<'_>,
            name: &OsStr,
            f: &mut dyn FnMut(BorrowedFd<'_>, &OsStr, BorrowedFd<'_>),
        ) {
            let Ok(dir) = open_dir_at(Some(parent), Path::new(name)) else {
                return;
            };
            let mut names = Vec::new();
            if let Ok(mut d) = rustix::fs::Dir::read_from(&dir) {
                while let Some(Ok(e)) = d.read() {
                    let n = e.file_name().to_bytes();
                    if n != b"." && n != b".." && e.file_type() == rustix::fs::FileType::Directory {
                        names.push(OsStr::from_bytes(n).to_owned());
                    }
                }
            }
            for n in &names {
                walk(dir.as_fd(), n, f);
            }
            f(parent, name, dir.as_fd());
        }
        if let Ok(mount) = open_dir_at(None, &h.mount) {
            walk(mount.as_fd(), OsStr::new(&self.rel), f);
        }
    }

    /// Every pid in any cgroup.procs of the sandbox.
    fn all_procs(&self) -> Vec<u32> {
        let mut pids = Vec::new();
        for h in &self.hiers {
            self.each_dir(h, &mut |_, _, dir| {
                let text = read_at(dir, "cgroup.procs").unwrap_or_default();
                pids.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
            });
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    fn cleanup(&mut self) {
        assert!(
            self.top.as_bytes().starts_with(PREFIX.as_bytes())
                && !self.top.as_bytes().contains(&b'/')
                && self.rel.as_bytes() == self.top.as_bytes(),
            "refusing to clean up {}: not a test sandbox",
            self.rel
        );
        for c in &mut self.children {
            let _ = c.kill();
        }
        // a frozen process only dies once thawed
        for h in self.hiers.clone() {
            if h.controllers.iter().any(|c| c == "freezer") {
                self.each_dir(&h, &mut |_, _, dir| {
                    let _ = write_at(dir, "freezer.state", "THAWED");
                });
            }
        }
        let t0 = Instant::now();
        loop {
            let pids = self.all_procs();
            if pids.is_empty() || t0.elapsed() > CLEANUP_LIMIT {
                break;
            }
            // only the test's processes and their children are in here
            for pid in pids {
                // never the test itself: a test may move one of its own
                // threads into a group
                let p = i32::try_from(pid)
                    .ok()
                    .filter(|p| *p > 1 && pid != std::process::id())
                    .and_then(rustix::process::Pid::from_raw);
                if let Some(p) = p {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
            }
            for c in &mut self.children {
                let _ = c.try_wait();
            }
            sleep(Duration::from_millis(20));
        }
        for c in &mut self.children {
            let _ = c.wait();
        }
        self.children.clear();
        while t0.elapsed() < CLEANUP_LIMIT {
            let mut left = false;
            for h in self.hiers.clone() {
                self.each_dir(&h, &mut |parent, name, _| {
                    let _ = rustix::fs::unlinkat(parent, name, rustix::fs::AtFlags::REMOVEDIR);
                });
                left |= h.mount.join(&self.rel).exists();
            }
            if !left {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        eprintln!("warning: could not remove {} everywhere", self.rel);
    }
}

/// A directory opened with `O_NOFOLLOW`, below `at` (or the working
/// directory).
fn open_dir_at(at: Option<BorrowedFd<'_>>, p: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags, CWD};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match at {
        Some(d) => rustix::fs::openat(d, p, flags, Mode::empty()),
        None => rustix::fs::openat(CWD, p, flags, Mode::empty()),
    }
}

/// The directory of group `g` in hierarchy `h`, opened one name at a time.
fn open_group(h: &Mounted, g: &GroupPath) -> rustix::io::Result<OwnedFd> {
    let mut dir = open_dir_at(None, &h.mount)?;
    for name in g.components() {
        dir = open_dir_at(Some(dir.as_fd()), Path::new(OsStr::from_bytes(name)))?;
    }
    Ok(dir)
}

/// A file of an open group, as text.
fn read_at(dir: BorrowedFd<'_>, file: &str) -> std::io::Result<String> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::openat(dir, file, OFlags::RDONLY | OFlags::NOFOLLOW, Mode::empty())?;
    std::io::read_to_string(std::fs::File::from(fd))
}

/// One write(2) of `value` to a file of an open group.
fn write_at(dir: BorrowedFd<'_>, file: &str, value: &str) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::openat(dir, file, OFlags::WRONLY | OFlags::NOFOLLOW, Mode::empty())?;
    std::fs::File::from(fd).write_all(value.as_bytes())
}

impl Drop for V1Sandbox {
    fn drop(&mut self) {
        self.cleanup();
    }
}

/// A sandbox in the v1 memory hierarchy with a group `hog` limited to
/// 320M (and memory+swap to the same where the kernel counts swap), for
/// a 400 MiB python3 allocator the kernel OOM-kills; `None` after a
/// `skipped:` line (not root, no v1 memory hierarchy, no python3).
pub fn oom_group_or_skip(label: &str) -> Option<(V1Sandbox, GroupPath)> {
    let sb = V1Sandbox::or_skip(label, &["memory"])?;
    if Command::new("python3").arg("-V").output().is_err() {
        println!("skipped: no python3 for the allocator");
        return None;
    }
    let g = sb.mkdir("hog");
    sb.write("memory", &g, "memory.limit_in_bytes", "320M");
    if sb
        .dir_of("memory", &g)
        .join("memory.memsw.limit_in_bytes")
        .exists()
    {
        sb.write("memory", &g, "memory.memsw.limit_in_bytes", "320M");
    }
    Some((sb, g))
}
