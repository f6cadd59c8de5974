//! The one tmux driver of the terminal tests (tests/tty*.rs, and the VM
//! suite's TUI case through `tests/guest/vm_common.rs`): a private tmux server on a
//! socket of its own (`-L cgtop-test-<pid>-<n>`, no config file), one
//! session, keys sent and the pane captured, waits for text with a time
//! limit, and the server killed on drop.

// each test crate uses its own part of this module
#![allow(dead_code)]

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How long [`Tmux::wait_for`] waits: a backstop, not a bound (a screen
/// that comes shows at once; a debug cgtop's start on a loaded 2-core
/// machine once took more than 10 s).
pub const WAIT: Duration = Duration::from_secs(30);

/// The session's name, the target of every command.
const SESSION: &str = "cgtop";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A tmux server of our own, killed on drop.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// A session running an interactive bash in a clean environment (no
    /// rc files, prompt `$ `), for tests that type command lines.
    pub fn shell(width: u16, height: u16) -> Self {
        Self::start(
            width,
            height,
            &[
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                "TERM=xterm-256color",
                "PS1=$ ",
                "bash",
                "--norc",
                "--noprofile",
            ],
        )
    }

    /// [`Self::shell`], or `None` after printing `skipped: tmux is not
    /// installed` (the test then returns and passes).
    pub fn shell_or_skip(width: u16, height: u16) -> Option<Self> {
        let installed = Command::new("tmux")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            println!("skipped: tmux is not installed");
            return None;
        }
        Some(Self::shell(width, height))
    }

    /// A session running one shell command line; the session ends when
    /// it exits ([`Self::alive`]).
    pub fn run(command: &str, width: u16, height: u16) -> Self {
        Self::start(width, height, &[command])
    }

    fn start(width: u16, height: u16, argv: &[&str]) -> Self {
        let socket = format!(
            "cgtop-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let t = Self { socket };
        let (w, h) = (width.to_string(), height.to_string());
        let ok = t
            .cmd(&["new-session", "-d", "-s", SESSION, "-x", &w, "-y", &h])
            .args(argv)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tmux new-session failed");
        t
    }

    /// A tmux command on this server.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null());
        c
    }

    /// Sends tmux key names ("j", "Enter", "C-z", "Escape"); a name tmux
    /// does not know is typed as text.
    pub fn send(&self, keys: &[&str]) {
        let ok = self
            .cmd(&["send-keys", "-t", SESSION])
            .args(keys)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tmux send-keys {keys:?} failed");
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.send(&["-l", text]);
    }

    /// The pane's text as shown.
    pub fn capture(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", SESSION])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// A tmux format ("#{alternate_on}", "#{pane_pid}") of the pane.
    pub fn display(&self, fmt: &str) -> String {
        self.cmd(&["display-message", "-p", "-t", SESSION, fmt])
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    }

    /// Waits until the screen contains `what`; panics with the screen
    /// after [`WAIT`].
    pub fn wait_for(&self, what: &str) -> String {
        self.wait_until(&format!("{what:?}"), WAIT, |s| s.contains(what))
    }

    /// Waits until the screen satisfies `pred`; panics with the last
    /// screen after `limit`.
    pub fn wait_until(&self, what: &str, limit: Duration, pred: impl Fn(&str) -> bool) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            assert!(
                t0.elapsed() < limit,
                "the screen never showed {what} in {limit:?}; last screen:\n{s}"
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Whether the session still exists (it ends when its command exits).
    pub fn alive(&self) -> bool {
        self.cmd(&["has-session", "-t", SESSION])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // tmux leaves its socket file behind when killed: ask where it is
        // first, and remove it only if it is the one of this server
        let socket = std::path::PathBuf::from(self.display("#{socket_path}"));
        let _ = self.cmd(&["kill-server"]).stderr(Stdio::null()).status();
        if socket.file_name() == Some(std::ffi::OsStr::new(&self.socket)) {
            let _ = std::fs::remove_file(socket);
        }
    }
}
