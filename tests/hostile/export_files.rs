//! Attack review of `cgtop export-log` (attack10): the apply script and
//! its undo are two files. `-o a.sh --undo a.sh --force` wrote the apply
//! script, then the undo over it: a.sh, reported as "wrote a.sh", took
//! every change back when run. And `-o a.sh` with an `a.undo.sh` already
//! there wrote a.sh and then failed on the undo, leaving a script without
//! its undo.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

const LOG: &str = "2024-05-01T12:00:00Z /a pids.max max to 1 ok\n";

fn export(log: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["export-log", "--log"])
        .arg(log)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_undo_never_lands_on_the_apply_script() {
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("actions.log");
    std::fs::write(&log, LOG).unwrap();
    // the log is one the reader takes: a.sh would set pids.max
    let a = work.path().join("a.sh");
    let out = export(
        &log,
        &[
            "-o".as_ref(),
            a.as_os_str(),
            "--undo".as_ref(),
            a.as_os_str(),
            "--force".as_ref(),
        ],
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(!a.exists(), "{}", std::fs::read_to_string(&a).unwrap());
    // the same file by another spelling
    let dot = work.path().join(".").join("a.sh");
    let out = export(
        &log,
        &[
            "-o".as_ref(),
            a.as_os_str(),
            "--undo".as_ref(),
            dot.as_os_str(),
            "--force".as_ref(),
        ],
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(!a.exists());
}

#[test]
fn an_existing_undo_stops_before_the_apply_script_is_written() {
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("actions.log");
    std::fs::write(&log, LOG).unwrap();
    let a = work.path().join("a.sh");
    let u = work.path().join("a.undo.sh");
    std::fs::write(&u, "mine").unwrap();
    let out = export(&log, &["-o".as_ref(), a.as_os_str()]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exists"),
        "{out:?}"
    );
    assert!(!a.exists(), "an apply script without its undo");
    assert_eq!(std::fs::read_to_string(&u).unwrap(), "mine");
    // with --force both are written
    let out = export(&log, &["-o".as_ref(), a.as_os_str(), "--force".as_ref()]);
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::read_to_string(&a).unwrap().contains("pids.max"));
    assert!(std::fs::read_to_string(&u)
        .unwrap()
        .starts_with("#!/bin/sh\n"));
}
