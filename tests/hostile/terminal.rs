//! Hostile inputs: the terminal (issue 7, item 7). A user who owns the
//! pty (their tmux, their SSH session) can hang it up at any moment, and
//! their `$PATH` may come along (`su`, `sudo -E`): cgtop as root must
//! then neither run a program from that `$PATH` (crossterm's `tput`
//! fallback for the window size) nor panic; it ends as a hang-up ends a
//! program, status 129.

use crate::common::{fixture_or_shared, have};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn hangup_runs_no_tput_from_path_and_exits_129() {
    if !have("script") {
        println!("skipped: script (util-linux) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("tput-ran");
    let rc = dir.path().join("rc");
    let tput = dir.path().join("tput");
    std::fs::write(
        &tput,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\necho 80\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tput, std::fs::Permissions::from_mode(0o755)).unwrap();
    // cgtop is not the session leader, as under a shell that does not pass
    // SIGHUP on: it learns of the hang-up from the tty itself, and frames
    // keep coming (-d 0.1) meanwhile; the inner shell ignores SIGHUP so
    // that it can write cgtop's status down
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let inner = format!(
        "trap '' HUP; {bin} --root {} -d 0.1; echo \\$? > {}",
        fixture_or_shared().display(),
        rc.display()
    );
    let mut script = Command::new("script")
        .args(["-qfec", &format!("sh -c \"{inner}\""), "/dev/null"])
        .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
        .env("SHELL", "/bin/sh")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    sleep(Duration::from_millis(1500));
    assert!(!rc.exists(), "cgtop ended before the hang-up");
    // the pty master's owner goes: the kernel hangs up the tty
    script.kill().unwrap();
    let _ = script.wait();
    let t0 = Instant::now();
    while !rc.exists() || std::fs::read_to_string(&rc).unwrap().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "cgtop still running 5 s after the hang-up"
        );
        sleep(Duration::from_millis(20));
    }
    sleep(Duration::from_millis(100));
    let status = std::fs::read_to_string(&rc).unwrap();
    assert!(
        !marker.exists(),
        "cgtop ran `tput {}` from $PATH",
        std::fs::read_to_string(&marker).unwrap_or_default().trim()
    );
    assert_eq!(status.trim(), "129", "exit status after the hang-up");
}

/// Ctrl-Z stops cgtop from every screen, as htop's (the terminal's ^Z)
/// does: in raw mode it is only a key, and the filter, the help, the
/// interval prompt and every dialog swallowed it, so an operator could not
/// get their shell back without closing what was open. What was open
/// stays open for `fg`.
#[test]
fn ctrl_z_suspends_from_the_filter_help_prompt_and_dialogs() {
    use crate::common::{app_on, ch, ctrl, fixture, pure_v2_mount, send};
    use cgtop::app::keymap::Scope;
    use cgtop::app::Effect;
    for open in ["/", "?", "d", "f", "n", "K"] {
        let (mut a, mut c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 160, 40);
        send(&mut a, &mut c, ch('j'));
        for k in open.chars() {
            send(&mut a, &mut c, ch(k));
        }
        let scope = a.scope();
        assert_ne!(scope, Scope::Main, "{open} opened nothing");
        let mode = format!("{:?}", a.mode);
        assert_eq!(
            send(&mut a, &mut c, ctrl('z')),
            [Effect::Suspend],
            "Ctrl-Z in {scope:?} after {open}"
        );
        assert_eq!(
            format!("{:?}", a.mode),
            mode,
            "{open}: what was open closed"
        );
    }
}
