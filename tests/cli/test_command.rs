//! The test command itself (`scripts/test`, README's): it runs every tier
//! even after one failed, ends with one summary (each tier passed, failed
//! or skipped with its reason), counts the tests that printed a skip, and
//! exits non-zero when a tier failed. Run here with `--fast --no-install`
//! and a stand-in `cargo` first on PATH (a shell script that prints what
//! a test run prints), so it installs nothing and builds nothing.
//!
//! Its other half is a tier of the command: `pty` runs the guarded-writer
//! tests under `script`, with a controlling terminal, so that a test that
//! depends on the caller's terminal fails in CI too (it failed on the
//! code before their workloads got a session of their own).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// `scripts/test --fast --no-install` with a `cargo` that runs `body`
/// (a shell `case` on its arguments).
fn run_with_cargo(body: &str) -> Output {
    let bin = tempfile::tempdir().unwrap();
    let cargo = bin.path().join("cargo");
    std::fs::write(&cargo, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test"))
        .args(["--fast", "--no-install"])
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// The summary's line of `tier`, its words after the tier's name.
fn summary_line(out: &str, tier: &str) -> String {
    let from = out.find("scripts/test: summary").expect("a summary");
    out[from..]
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(tier))
        .unwrap_or_else(|| panic!("no summary line for {tier}:\n{out}"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_failed_tier_does_not_stop_the_others_and_the_run_fails() {
    let o = run_with_cargo(
        r#"case "$*" in
    *--doc*) echo "doc tests ran"; exit 0 ;;
    *) echo "test one ... FAILED"; exit 101 ;;
esac"#,
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("doc tests ran"),
        "the tier after the failure ran:\n{out}"
    );
    // "(N s)": each tier that ran says how long it took
    let line = summary_line(&out, "cargo test");
    assert!(
        line.starts_with("failed (") && line.ends_with(" s) exit status 101"),
        "{line}"
    );
    assert!(
        summary_line(&out, "doc tests").starts_with("passed ("),
        "{out}"
    );
    assert_eq!(summary_line(&out, "vm suite"), "skipped --fast");
    assert!(
        out.contains("scripts/test: FAILED: 1 of 8 tiers failed, 6 skipped"),
        "{out}"
    );
}

#[test]
fn skips_are_counted_and_shown_never_hidden_in_a_pass() {
    let o = run_with_cargo(
        r#"echo "test real_one ... skipped: not root"
echo "test real_two ... skipped: not root"
echo "test result: ok. 2 passed""#,
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let line = summary_line(&out, "cargo test");
    assert!(
        line.starts_with("passed (") && line.ends_with(" s) 2 tests printed a skip: not root (2)"),
        "{line}"
    );
    for tier in [
        "pty",
        "fio",
        "cargo install",
        "vm scale",
        "vm identity",
        "vm suite",
    ] {
        assert_eq!(summary_line(&out, tier), "skipped --fast", "{tier}");
    }
    assert!(
        out.contains("scripts/test: passed: 8 tiers, 6 skipped"),
        "{out}"
    );
}
