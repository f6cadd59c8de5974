//! Hostile inputs: the action log (issue 7, item 1). A user who can only
//! plant files in their own home, and a group name chosen by whoever owns
//! a delegated subtree, against root appending to the log.
//!
//! Each place is built in a temporary directory that stands in for the
//! user's `XDG_STATE_HOME`; root's home and `/var/log/cgtop` are temporary
//! directories too, given through `LogEnv`, so that nothing outside the
//! test's own directory is touched.

use cgtop::model::write::{self, Op};
use cgtop::model::GroupPath;
use cgtop::model::{Errno, WriteError, WriteOutcome};
use cgtop::source::actionlog::{format_line, ActionLog, LogEnv, Source, Unsafe};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

const VICTIM: &str = "root:x:0:0:root:/root:/bin/bash\n";

fn done(op: Op) -> WriteOutcome {
    WriteOutcome::done(op, Some("0\n".into()), Some("1\n".into()))
}

fn freeze_of(group: &str) -> WriteOutcome {
    done(write::freeze(&GroupPath::new(group), true))
}

fn at() -> std::time::SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_714_564_800)
}

/// `T/state/cgtop/`, made 0700 as cgtop would, and the log path in it.
fn state_dir(t: &Path) -> PathBuf {
    let d = t.join("state/cgtop");
    std::fs::create_dir_all(&d).unwrap();
    for p in [t.join("state"), d.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    d.join("actions.log")
}

/// The environment of `su`: the caller's XDG_STATE_HOME (`T/state`), and
/// root's fallbacks inside `T` too.
fn env_of(t: &Path) -> LogEnv {
    LogEnv {
        euid: rustix::process::geteuid().as_raw(),
        xdg_state_home: Some(t.join("state").into_os_string()),
        home: None,
        root_home: Some(t.join("roothome")),
        system_log: t.join("varlog/cgtop/actions.log"),
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn a_symlinked_log_file_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let victim = t.path().join("bashrc");
    std::fs::write(&victim, VICTIM).unwrap();
    symlink(&victim, &log).unwrap();
    let r = ActionLog::at(log.clone()).append(&freeze_of("$(id>pwned)"), at());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM);
    let e = r.unwrap_err();
    assert!(e.contains("is a symbolic link"), "{e}");
}

#[test]
fn a_symlinked_log_file_sends_root_to_its_own_home() {
    if !is_root() {
        println!("skipped: not root (the fallback is root's)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let victim = t.path().join("bashrc");
    std::fs::write(&victim, VICTIM).unwrap();
    symlink(&victim, &log).unwrap();
    let l = ActionLog::choose(&env_of(t.path()));
    let fallback = t.path().join("roothome/.local/state/cgtop/actions.log");
    assert_eq!(l.path(), Some(fallback.as_path()));
    let skipped = &l.place().skipped;
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].source, Source::XdgStateHome);
    assert_eq!(skipped[0].why, Unsafe::Symlink(log.clone()));
    l.append(&freeze_of("a"), at()).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM);
    assert_eq!(
        std::fs::read_to_string(&fallback).unwrap(),
        "2024-05-01T12:00:00Z /a cgroup.freeze 0 to 1 ok\n"
    );
    // made 0700 and 0600
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&fallback), 0o600);
    assert_eq!(mode(fallback.parent().unwrap()), 0o700);
    assert_eq!(mode(&t.path().join("roothome/.local")), 0o700);
}

#[test]
fn a_dangling_symlink_creates_nothing_at_its_target() {
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let target = t.path().join("made-by-root");
    symlink(&target, &log).unwrap();
    let r = ActionLog::at(log).append(&freeze_of("a"), at());
    assert!(!target.exists(), "root created {}", target.display());
    assert!(r.is_err());
}

#[test]
fn a_symlinked_cgtop_directory_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, state.join("cgtop")).unwrap();
    let r = ActionLog::at(state.join("cgtop/actions.log")).append(&freeze_of("a"), at());
    assert!(!elsewhere.join("actions.log").exists());
    let e = r.unwrap_err();
    assert!(e.contains("is a symbolic link"), "{e}");
}

#[test]
fn a_directory_owned_by_another_uid_is_refused_as_root() {
    if !is_root() {
        println!("skipped: not root (chown to another uid)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let state = t.path().join("state");
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    let r = ActionLog::at(log.clone()).append(&freeze_of("a"), at());
    assert!(!log.exists(), "root wrote into a directory of uid 65534");
    let e = r.unwrap_err();
    assert!(e.contains("is owned by uid 65534, not root"), "{e}");
    // chosen from the environment, it falls back and says why
    let l = ActionLog::choose(&env_of(t.path()));
    assert_eq!(
        l.path(),
        Some(
            t.path()
                .join("roothome/.local/state/cgtop/actions.log")
                .as_path()
        )
    );
    assert_eq!(
        l.place().skipped[0].why.to_string(),
        format!("{} is owned by uid 65534, not root", state.display())
    );
}

#[test]
fn a_group_writable_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let state = t.path().join("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o775)).unwrap();
    let r = ActionLog::at(log.clone()).append(&freeze_of("a"), at());
    assert!(!log.exists());
    let e = r.unwrap_err();
    assert!(e.contains("can be written by others (mode 0775)"), "{e}");
}

#[test]
fn every_fallback_refused_means_no_log_and_says_why() {
    if !is_root() {
        println!("skipped: not root (the fallbacks are root's)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let mut env = env_of(t.path());
    for d in ["state", "roothome", "varlog"] {
        std::fs::create_dir(t.path().join(d)).unwrap();
        std::os::unix::fs::chown(t.path().join(d), Some(65534), None).unwrap();
    }
    env.home = Some(t.path().join("home").into_os_string());
    let l = ActionLog::choose(&env);
    assert_eq!(l.path(), None);
    let sources: Vec<Source> = l.place().skipped.iter().map(|s| s.source).collect();
    assert_eq!(
        sources,
        [Source::XdgStateHome, Source::RootHome, Source::SystemLog]
    );
    let e = l.append(&freeze_of("a"), at()).unwrap_err();
    assert!(e.contains("no safe place"), "{e}");
}

#[test]
fn a_fifo_as_the_log_is_refused_without_waiting() {
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let made = std::process::Command::new("mkfifo")
        .arg(&log)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        println!("skipped: no mkfifo");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let l = ActionLog::at(log);
    std::thread::spawn(move || {
        let _ = tx.send(l.append(&freeze_of("a"), at()));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("append waited on a FIFO");
    assert!(r.is_err());
}

/// A name and an error text chosen by whoever owns a delegated subtree:
/// each outcome is one line, with nothing a shell would run.
#[test]
fn hostile_names_and_errors_make_one_inert_line_each() {
    let refused = WriteOutcome::failed(
        write::remove_group(&GroupPath::new("x")),
        WriteError {
            errno: Some(Errno::BUSY),
            what: "rmdir /x".into(),
            explanation: "`reboot`\n$(id>pwned)".into(),
            fix: None,
        },
    )
    .with_values(Some("0\n".into()), Some("1\n".into()));
    for (o, visible) in [
        (freeze_of("$(id>pwned)"), "\\x24(id>pwned)"),
        (freeze_of("a\nb"), "/a\\nb"),
        (freeze_of("`id`;x|y&z"), "\\x60id\\x60;x|y&z"),
        (freeze_of("a\x1b]0;pwned\x07b"), "a\\e]0;pwned\\ab"),
        (refused, "\\x60reboot\\x60\\n\\x24(id>pwned)"),
    ] {
        let line = format_line(1_714_564_800, &o);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
        assert!(!line.contains("$(") && !line.contains('`'), "{line}");
        assert!(!line.contains('$'), "{line}");
        assert!(line.chars().all(|c| !c.is_control()), "{line}");
        assert!(line.contains(visible), "{visible} not in {line}");
    }
    // and appended, the file holds exactly those lines
    let t = tempfile::tempdir().unwrap();
    let log = state_dir(t.path());
    let l = ActionLog::at(log.clone());
    l.append(&freeze_of("$(id>pwned)"), at()).unwrap();
    l.append(&freeze_of("a\nb"), at()).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text,
        "2024-05-01T12:00:00Z \"/\\x24(id>pwned)\" cgroup.freeze 0 to 1 ok\n\
         2024-05-01T12:00:00Z \"/a\\nb\" cgroup.freeze 0 to 1 ok\n"
    );
}
