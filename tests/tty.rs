//! End-to-end tests of the real binary in a real terminal: tmux drives it
//! (start, navigate, filter, quit; the terminal must be restored), and
//! `script` gives it a pty that is then hung up (it must exit within a
//! second). Skipped, with the reason, where tmux or script is missing.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pure-v2-systemd")
}

fn fixture_or_shared() -> PathBuf {
    let f = fixture();
    if f.exists() {
        f
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/cgroupfs-systemd")
    }
}

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn new(width: u16, height: u16) -> Self {
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

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().expect("send-keys").success());
    }

    fn capture(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-t", "0"])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn display(&self, fmt: &str) -> String {
        let out = self
            .cmd(&["display-message", "-p", "-t", "0", fmt])
            .output()
            .expect("display");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Waits until the screen contains `what`.
    fn wait_for(&self, what: &str) -> String {
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

#[test]
fn navigate_filter_quit_restores_terminal() {
    if !have("tmux") {
        println!("skipped: tmux is not installed");
        return;
    }
    let t = Tmux::new(100, 30);
    let bin = env!("CARGO_BIN_EXE_cgtop");
    t.send(&[
        &format!("{bin} --root {} -d 0.5", fixture_or_shared().display()),
        "Enter",
    ]);
    let s = t.wait_for("system.slice");
    assert!(
        s.contains("31 groups"),
        "header shows the group count:\n{s}"
    );
    assert_eq!(
        t.display("#{alternate_on}"),
        "1",
        "cgtop uses the alternate screen"
    );
    // move down to the second row and open the memory page
    t.send(&["j", "j", "2"]);
    t.wait_for("2 Memory");
    // filter: only the postgres slice and its ancestors remain
    t.send(&["/", "postgres"]);
    let s = t.wait_for("filter: postgres_");
    t.send(&["Enter"]);
    let s2 = t.wait_for("postgresql@15-main.service");
    assert!(!s2.contains("dbus.service"), "filtered out:\n{s2}");
    let _ = s;
    // help, then quit
    t.send(&["?"]);
    t.wait_for("expand or collapse everything");
    t.send(&["Escape"]);
    // (a key right after Esc would read as Alt+key, as in any terminal)
    t.wait_for("filter: postgres");
    t.send(&["q"]);
    t.wait_for("$ ");
    let t0 = Instant::now();
    while t.display("#{alternate_on}") != "0" {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "alternate screen not left"
        );
        sleep(Duration::from_millis(50));
    }
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown again");
    // the tty is back in cooked mode with echo
    t.send(&[
        "stty -a | tr ' ' '\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo MODE-EN''D",
        "Enter",
    ]);
    let s = t.wait_for("MODE-END");
    let line = s
        .lines()
        .find(|l| l.contains("icanon") && !l.contains("grep"))
        .unwrap_or_default()
        .to_owned();
    assert!(
        line.contains("icanon") && !line.contains("-icanon"),
        "canonical mode restored: {line:?}"
    );
    assert!(
        line.contains("echo") && !line.contains("-echo"),
        "echo restored: {line:?}"
    );
}

/// Reads the state letter of a process from /proc (Z for a zombie).
fn proc_state(pid: u32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit(')').next()?.trim_start().chars().next()
}

fn child_of(parent: u32) -> Option<u32> {
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

/// The SSH connection dropping is a pty master closing: cgtop must notice
/// (SIGHUP, or EIO on the tty) and exit within a second, not spin.
fn hangup_case(shell_cmd: &str) {
    if !have("script") {
        println!("skipped: script (util-linux) is not installed");
        return;
    }
    let mut script = Command::new("script")
        .args(["-qfec", shell_cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("script runs");
    let cgtop = child_of(script.id()).expect("cgtop started under script");
    sleep(Duration::from_millis(1500));
    assert!(
        matches!(proc_state(cgtop), Some('S' | 'R')),
        "cgtop is running before the hangup"
    );
    // kill the pty master's owner: the kernel hangs up the slave
    script.kill().expect("kill script");
    let _ = script.wait();
    let t0 = Instant::now();
    loop {
        match proc_state(cgtop) {
            None | Some('Z') => break,
            Some(_) => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(1),
            "cgtop still running 1 s after the hangup"
        );
        sleep(Duration::from_millis(20));
    }
    println!(
        "cgtop exited {} ms after the hangup",
        t0.elapsed().as_millis()
    );
}

#[test]
fn hangup_ends_cgtop_within_a_second() {
    let bin = env!("CARGO_BIN_EXE_cgtop");
    hangup_case(&format!("{bin} --root {}", fixture_or_shared().display()));
}

#[test]
fn sigterm_restores_terminal() {
    if !have("tmux") {
        println!("skipped: tmux is not installed");
        return;
    }
    let t = Tmux::new(80, 24);
    let bin = env!("CARGO_BIN_EXE_cgtop");
    t.send(&[
        &format!(
            "{bin} --root {}; echo EX''IT=$?",
            fixture_or_shared().display()
        ),
        "Enter",
    ]);
    t.wait_for("31 groups");
    assert_eq!(t.display("#{alternate_on}"), "1");
    let shell: u32 = t.display("#{pane_pid}").parse().expect("pane pid");
    let cgtop = child_of(shell).expect("cgtop runs under the shell");
    assert!(Command::new("kill")
        .args(["-TERM", &cgtop.to_string()])
        .status()
        .expect("kill")
        .success());
    let s = t.wait_for("EXIT=");
    assert!(s.contains("EXIT=0"), "SIGTERM is a clean quit:\n{s}");
    assert_eq!(t.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown");
}
