//! assets/cgtop-exporter.service (issue 10, item 3): systemd accepts it
//! (`systemd-analyze verify`, every warning a failure), its ExecStart is
//! a command line cgtop parses (`cli::command()`, the one definition) at
//! serve's default loopback address, and it is hardened as README says:
//! a dynamic user without capabilities, the file system and cgroupfs
//! read-only to it (`systemd-analyze security --offline=yes` rates it).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::run::serve::DEFAULT_LISTEN;
use std::path::Path;
use std::process::Command;

const UNIT: &str = "cgtop-exporter.service";

fn unit_text() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(UNIT);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The values of `key=` in the unit's [Service] section, in order.
fn service(text: &str, key: &str) -> Vec<String> {
    let mut in_service = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_service = line == "[Service]";
        } else if in_service && !line.starts_with('#') {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim() == key {
                    out.push(v.trim().to_owned());
                }
            }
        }
    }
    out
}

fn one(text: &str, key: &str) -> String {
    let v = service(text, key);
    assert_eq!(v.len(), 1, "{key}= in [Service]: {v:?}");
    v[0].clone()
}

/// The unit with ExecStart's /usr/local/bin/cgtop replaced by the binary
/// cargo built (verify checks that the command exists), in a temporary
/// directory under its own name.
fn installed_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let text = unit_text().replace("/usr/local/bin/cgtop", env!("CARGO_BIN_EXE_cgtop"));
    let path = dir.path().join(UNIT);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn have_systemd_analyze() -> bool {
    if common::have("systemd-analyze") {
        return true;
    }
    println!("skipped: systemd-analyze not found (Debian: package systemd)");
    false
}

#[test]
fn systemd_analyze_verify_accepts_it_without_a_warning() {
    if !have_systemd_analyze() {
        return;
    }
    let (_dir, path) = installed_copy();
    // --man=no: the man page need not be installed where the tests run
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .expect("run systemd-analyze");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // verify exits 0 after "Failed to parse ..., ignoring": any output is
    // a directive systemd ignores
    assert!(
        out.status.success() && text.trim().is_empty(),
        "systemd-analyze verify {UNIT}: {}\n{text}",
        out.status
    );
}

#[test]
fn its_exposure_is_low() {
    if !have_systemd_analyze() {
        return;
    }
    let (_dir, path) = installed_copy();
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(&path)
        .output()
        .expect("run systemd-analyze security");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| {
            panic!(
                "no exposure level in:\n{text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    println!("FIGURE exporter unit: {}", line.trim());
    let level: f64 = line
        .rsplit_once(": ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("exposure level in {line:?}"));
    // systemd's scale: 0 (locked down) to 10 (unprotected); 1.4 when made
    assert!(level <= 2.0, "{line}");
}

#[test]
fn exec_start_is_cgtop_serve_with_its_real_flags() {
    let text = unit_text();
    let exec = one(&text, "ExecStart");
    let argv: Vec<&str> = exec.split_whitespace().collect();
    assert_eq!(argv[0], "/usr/local/bin/cgtop", "{exec}");
    assert_eq!(argv[1], "serve", "{exec}");
    let m = cgtop::cli::command()
        .try_get_matches_from(&argv)
        .unwrap_or_else(|e| panic!("cgtop does not take {exec}: {e}"));
    let (name, sub) = m.subcommand().expect("a subcommand");
    assert_eq!(name, "serve");
    assert_eq!(
        sub.get_one::<String>("listen").map(String::as_str),
        Some(DEFAULT_LISTEN),
        "the unit spells out serve's loopback default"
    );
}

#[test]
fn it_is_hardened_and_cannot_write_cgroupfs() {
    let text = unit_text();
    for (key, want) in [
        ("DynamicUser", "yes"),
        ("CapabilityBoundingSet", ""),
        ("AmbientCapabilities", ""),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("ProtectControlGroups", "yes"),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("IPAddressDeny", "any"),
        ("IPAddressAllow", "localhost"),
        ("MemoryMax", "256M"),
        ("TasksMax", "32"),
    ] {
        assert_eq!(one(&text, key), want, "{key}=");
    }
    assert_eq!(
        service(&text, "SystemCallFilter")
            .first()
            .map(String::as_str),
        Some("@system-service")
    );
    // nothing may hand a writable path back, least of all cgroupfs
    for key in [
        "ReadWritePaths",
        "User",
        "Group",
        "SupplementaryGroups",
        "Delegate",
    ] {
        assert!(service(&text, key).is_empty(), "{key}= is set");
    }
}
