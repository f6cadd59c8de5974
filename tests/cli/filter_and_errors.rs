//! The built binary's command-line input: `--filter` in -b, --json and
//! record (the `/` filter's groups: each whose name contains the text,
//! case aside, its ancestors and its subtree), a second GROUP refused in
//! one line naming the flag to use, and every file error naming its
//! file in one line without std's "(os error N)".

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::fixture;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn cgtop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .env("XDG_CONFIG_HOME", "/nonexistent-cgtop-test")
        .output()
        .expect("run cgtop")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The groups of a cgroupfs-like tree the `/` filter `needle` keeps, as
/// "/a/b" paths, from the directories themselves: every group whose
/// name contains it (case aside), its ancestors, its subtree.
fn kept_by_filter(root: &Path, needle: &str) -> BTreeSet<String> {
    fn walk(
        dir: &Path,
        path: &str,
        in_match: bool,
        needle: &str,
        out: &mut BTreeSet<String>,
    ) -> bool {
        let name = path.rsplit('/').next().unwrap_or("");
        let here = in_match || name.to_lowercase().contains(needle);
        let mut below = false;
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                let n = e.file_name().to_string_lossy().into_owned();
                let p = format!("{}/{n}", path.trim_end_matches('/'));
                below |= walk(&e.path(), &p, here, needle, out);
            }
        }
        if here || below {
            out.insert(path.to_owned());
        }
        here || below
    }
    let mut out = BTreeSet::new();
    walk(root, "/", false, &needle.to_lowercase(), &mut out);
    out
}

#[test]
fn filter_keeps_the_views_groups_in_batch_and_json() {
    let root = fixture("pure-v2-systemd");
    let want = kept_by_filter(&root, "GETTY");
    assert!(want.len() > 2 && want.len() < 31, "{want:?}");
    let r = root.to_str().unwrap();
    let o = cgtop(&[
        "--json", "-n", "1", "-d", "0.1", "--root", r, "--filter", "GETTY",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = String::from_utf8(o.stdout).unwrap();
    let doc: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    let got: BTreeSet<String> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want);
    // -b: the same groups, one row each (two spaces a level)
    let o = cgtop(&[
        "-b", "-n", "1", "-d", "0.1", "--root", r, "--filter", "GETTY",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = text.lines().skip(2).take_while(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), want.len(), "{text}");
    for p in &want {
        let name = p
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty())
            .unwrap_or("/");
        assert!(
            rows.iter()
                .any(|r| r.trim_start().starts_with(&format!("{name} "))),
            "{name} not in\n{text}"
        );
    }
}

#[test]
fn record_filter_records_only_the_filters_groups() {
    let root = fixture("pure-v2-systemd");
    let want = kept_by_filter(&root, "journal");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.rec");
    let o = cgtop(&[
        "record",
        "-o",
        file.to_str().unwrap(),
        "-n",
        "1",
        "-d",
        "0.1",
        "--root",
        root.to_str().unwrap(),
        "--filter",
        "journal",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = cgtop(&["replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text.lines().next().expect("one refresh replayed");
    let doc: serde_json::Value = serde_json::from_str(line).unwrap();
    let got: BTreeSet<String> = doc["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn a_second_group_is_refused_in_one_line_naming_the_flag() {
    let root = fixture("pure-v2-systemd");
    let r = root.to_str().unwrap();
    for args in [
        vec!["-b", "-n", "1", "--root", r, "/system.slice", "/user.slice"],
        vec![
            "record",
            "-o",
            "/nonexistent-cgtop-test/x.rec",
            "--root",
            r,
            "/a",
            "/b",
        ],
    ] {
        let o = cgtop(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("cgtop: one GROUP at a time"), "{e}");
        assert!(e.contains("--filter"), "{e}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn file_errors_name_the_file_in_one_line() {
    let root = fixture("pure-v2-systemd");
    let r = root.to_str().unwrap();
    let missing = "/nonexistent-cgtop-test/nofile";
    for (args, code, want) in [
        (
            vec!["replay", "nofile.rec"],
            2,
            "cgtop: replay: cannot open nofile.rec: No such file or directory".to_owned(),
        ),
        (
            vec!["replay", "nofile.rec", "-b"],
            2,
            "cgtop: replay: cannot open nofile.rec: No such file or directory".to_owned(),
        ),
        (
            vec!["export-log", "--log", missing],
            1,
            format!("cgtop: export-log: {missing}: No such file or directory"),
        ),
        (
            vec!["record", "-o", missing, "-n", "1", "--root", r],
            1,
            format!("cgtop: cannot record: {missing}: No such file or directory"),
        ),
        (
            vec!["--openmetrics", "-o", missing, "--root", r],
            1,
            format!("cgtop: cannot write {missing}: No such file or directory"),
        ),
        (
            vec!["-b", "-n", "1", "--root", missing],
            2,
            format!("cgtop: cannot read {missing}: No such file or directory"),
        ),
        (
            vec!["-b", "-n", "1", "--root", r, "--config", missing],
            2,
            format!("cgtop: config {missing}: no such file"),
        ),
    ] {
        let o = cgtop(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), format!("{want}\n"), "{args:?}");
    }
}
