//! Shared by the integration tests: a cgroup sandbox under a unique
//! prefix that cleans up after itself (also on panic), a private tmux
//! server, and small /proc helpers.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, CollectorConfig};
use cgtop::source::scan::ScanConfig;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

static N: AtomicU32 = AtomicU32::new(0);

/// A test group with its children and the processes started in it;
/// everything is killed and removed on drop.
pub struct TestGroup {
    pub mount: PathBuf,
    pub rel: String,
    pub children: Vec<Child>,
}

impl TestGroup {
    pub fn new() -> Option<Self> {
        if !rustix::process::geteuid().is_root() {
            println!("skipped: not root (the real-kernel tests create cgroups)");
            return None;
        }
        let m = match cgtop::source::mount::discover() {
            Ok(m) => m,
            Err(e) => {
                println!("skipped: {e}");
                return None;
            }
        };
        let rel = format!(
            "cgtop-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        if let Err(e) = std::fs::create_dir(m.root.join(&rel)) {
            println!(
                "skipped: cannot create a cgroup under {}: {e}",
                m.root.display()
            );
            return None;
        }
        Some(Self {
            mount: m.root,
            rel,
            children: Vec::new(),
        })
    }

    pub fn dir(&self, sub: &str) -> PathBuf {
        self.mount.join(&self.rel).join(sub)
    }

    pub fn path(&self, sub: &str) -> GroupPath {
        GroupPath::new(&format!("{}/{sub}", self.rel))
    }

    pub fn mkdir(&self, sub: &str) {
        std::fs::create_dir_all(self.dir(sub)).unwrap();
    }

    /// Starts `sh -c script` inside group `sub`.
    pub fn spawn_in(&mut self, sub: &str, script: &str) -> u32 {
        let child = Command::new("sh").args(["-c", script]).spawn().unwrap();
        let pid = child.id();
        std::fs::write(self.dir(sub).join("cgroup.procs"), pid.to_string()).unwrap();
        self.children.push(child);
        pid
    }

    pub fn kill_all(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.clear();
    }

    pub fn collector(&self) -> Collector {
        Collector::new(CollectorConfig {
            root: self.mount.clone(),
            start: GroupPath::new(&self.rel),
            scan: ScanConfig::default(),
            full_detail: false,
            sys_dev_block: PathBuf::from("/sys/dev/block"),
        })
    }
}

pub fn remove_tree(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    // a frozen group would keep its (killed) processes: thaw first
    let _ = std::fs::write(dir.join("cgroup.freeze"), "0");
    let _ = std::fs::remove_dir(dir);
}

impl Drop for TestGroup {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir("").join("cgroup.freeze"), "0");
        self.kill_all();
        let root = self.dir("");
        for _ in 0..50 {
            remove_tree(&root);
            if !root.exists() {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        eprintln!("warning: could not remove {}", root.display());
    }
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pure-v2-systemd")
}

pub fn fixture_or_shared() -> PathBuf {
    let f = fixture();
    if f.exists() {
        f
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/cgroupfs-systemd")
    }
}

/// A tmux server of our own (its own socket), killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn new(width: u16, height: u16) -> Self {
        let socket = format!(
            "cgtop-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        )
        .replace(['(', ')'], "");
        let t = Self { socket };
        let ok = t
            .cmd(&[
                "new-session",
                "-d",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                "TERM=xterm-256color",
                "PS1=$ ",
                "bash",
                "--norc",
                "--noprofile",
            ])
            .status()
            .expect("tmux runs")
            .success();
        assert!(ok, "tmux new-session failed");
        t
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().expect("send-keys").success());
    }

    pub fn capture(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-t", "0"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn display(&self, fmt: &str) -> String {
        let out = self
            .cmd(&["display-message", "-p", "-t", "0", fmt])
            .output()
            .expect("display");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Waits until the screen contains `what`.
    pub fn wait_for(&self, what: &str) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.capture();
            if s.contains(what) {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what:?}; screen:\n{s}"
            );
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
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
