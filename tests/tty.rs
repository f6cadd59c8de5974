//! End-to-end tests of the real binary in a real terminal: tmux drives it
//! (start, navigate, filter, quit; the terminal must be restored), and
//! `script` gives it a pty that is then hung up (it must exit within a
//! second). Skipped, with the reason, where tmux or script is missing.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::{child_of, fixture_or_shared, have, proc_state, Tmux};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

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
