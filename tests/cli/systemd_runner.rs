//! The systemctl runner (`source::systemctl`) against fake `systemctl`
//! scripts in a temporary directory: the arguments arrive as given (no
//! shell between), a failure brings its stderr (bounded) and the words
//! made of it, a hang is killed by its pid at the timeout, and a host
//! without systemd or without systemctl runs nothing.
//!
//! One test function: the scripts are written before anything is
//! spawned, so no fork of another test thread holds one open for writing
//! when it is executed (ETXTBSY).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::cgroupfs::Limit;
use cgtop::model::write;
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::systemd::{failure_error, SystemctlFailure, STDERR_MAX};
use cgtop::model::GroupPath;
use cgtop::source::systemctl::Systemctl;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_runner_on_fake_systemctls() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let seen = dir.join("seen");
    let pidfile = dir.join("pid");
    let ok = script(
        dir,
        "ok",
        &format!(
            "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{}'; \
             [ -t 0 ] && echo tty >> '{0}'; read x && echo stdin >> '{0}'; exit 0",
            seen.display()
        ),
    );
    let fails = script(
        dir,
        "fails",
        "echo 'Failed to set unit properties on web.service: Unit web.service not loaded.' >&2; exit 1",
    );
    let chatty = script(
        dir,
        "chatty",
        "i=0; while [ $i -lt 2000 ]; do echo 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >&2; i=$((i+1)); done; exit 3",
    );
    let hangs = script(
        dir,
        "hangs",
        &format!("echo $$ > '{}'; exec sleep 60", pidfile.display()),
    );
    // systemd as the host has it: journald's group is the host's own
    let changed = dir.join("changed");
    let host = script(
        dir,
        "host",
        &format!(
            "if [ \"$1\" = show ]; then echo /system.slice/systemd-journald.service; exit 0; fi; \
             printf '%s\\n' \"$*\" >> '{}'",
            changed.display()
        ),
    );

    // success: each argument arrives whole, spaces and quotes and `$`
    // untouched; stdin is not a terminal and is empty
    let given = args(&[
        "set-property",
        "--runtime",
        "web.service",
        "IOWriteBandwidthMax=/dev/sda 2097152",
        "x'$(touch pwned)\"",
    ]);
    Systemctl::at(&ok, Duration::from_secs(10))
        .run(&given)
        .expect("exit 0 is success");
    let got = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(got.lines().collect::<Vec<_>>(), given);
    assert!(!dir.join("pwned").exists());
    assert!(!Path::new("pwned").exists());

    // failure: the exit status and stderr, then plain words
    let f = Systemctl::at(&fails, Duration::from_secs(10))
        .run(&given)
        .unwrap_err();
    let SystemctlFailure::Exit { code, stderr } = &f else {
        panic!("{f:?}")
    };
    assert_eq!(*code, Some(1));
    assert!(stderr.contains("Unit web.service not loaded."), "{stderr}");
    let op = write::set_memory_limit(
        &GroupPath::new("system.slice/web.service"),
        MemoryFile::Max,
        Limit::Value(1 << 20),
    )
    .through_systemd(None)
    .unwrap();
    let e = failure_error(&op, &f);
    assert!(e.explanation.contains("exit status 1"), "{e}");
    assert!(e.explanation.contains("no unit web.service loaded"), "{e}");

    // a flood on stderr: read to the end (no blocked child), kept bounded
    let f = Systemctl::at(&chatty, Duration::from_secs(10))
        .run(&[])
        .unwrap_err();
    let SystemctlFailure::Exit { code, stderr } = &f else {
        panic!("{f:?}")
    };
    assert_eq!(*code, Some(3));
    assert_eq!(stderr.len(), STDERR_MAX);

    // a hang: stopped at the timeout, killed by its pid and reaped
    let start = Instant::now();
    let f = Systemctl::at(&hangs, Duration::from_millis(300))
        .run(&[])
        .unwrap_err();
    assert_eq!(f, SystemctlFailure::TimedOut { secs: 0 });
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    assert!(!proc_dir.exists(), "{} still there", proc_dir.display());
    assert!(failure_error(&op, &f)
        .explanation
        .contains("did not answer"));

    // no systemd, no systemctl: nothing runs
    let mut none = Systemctl::at(&ok, Duration::from_secs(1));
    std::fs::remove_file(&seen).unwrap();
    none.booted = false;
    assert_eq!(none.run(&given), Err(SystemctlFailure::NotBooted));
    none.booted = true;
    none.path = None;
    assert_eq!(none.run(&given), Err(SystemctlFailure::NoSystemctl));
    assert!(!seen.exists());
    // a path that is not there: a spawn failure, not a panic
    let gone = Systemctl::at(&dir.join("missing"), Duration::from_secs(1)).run(&given);
    assert!(matches!(gone, Err(SystemctlFailure::Spawn(_))), "{gone:?}");

    // `--root D` on a delegated-like subtree whose user made
    // D/system.slice/systemd-journald.service: the writer, given the
    // change through systemd, asks systemd for the unit's group, finds
    // the host's, and runs no set-property (before, it changed the host's
    // journald)
    let Some(sb) = common::sandbox::Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("deleg/system.slice/systemd-journald.service");
    let view = cgtop::source::hier::Hier::open(&sb.dir("deleg")).unwrap();
    assert!(!view.is_hierarchy_root());
    let g = GroupPath::new("system.slice/systemd-journald.service");
    assert_eq!(view.real_group(&g), Some(sb.path("deleg").concat(&g)));
    let op = write::set_pids_max(&g, Limit::Value(7))
        .through_systemd(None)
        .unwrap();
    let o = cgtop::source::writer::perform_systemd_in(
        &view,
        &op,
        &Systemctl::at(&host, Duration::from_secs(10)),
    );
    let e = o.result.expect_err("not the unit's group");
    assert!(e.explanation.contains("no unit of systemd's own"), "{e}");
    assert!(
        !changed.exists(),
        "{}",
        std::fs::read_to_string(&changed).unwrap()
    );
    // the hierarchy's own root is one
    let whole = cgtop::source::hier::Hier::open(&sb.root).unwrap();
    assert!(whole.is_hierarchy_root());
    assert_eq!(whole.real_group(&g), Some(g.clone()));
}
