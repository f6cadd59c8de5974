//! The order of `cgtop -b`'s rows, as top prints them: the busiest group
//! first within each parent by default, the flat list (`--flat`), another
//! column (`--sort`), the other way (`--reverse`), and the one-line
//! refusals (exit 2) of a bad sort, a bad depth, and an order asked of
//! `--json`. The built binary on copies of the fixtures.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::batch::parse;
use common::fixture;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::batch::{cgtop, stdout};

/// The rows of the last refresh: (indent level, name as printed, CPU %).
fn last_rows(o: &Output) -> Vec<(usize, String, f64)> {
    let text = stdout(o);
    let r = parse(&text)
        .pop()
        .unwrap_or_else(|| panic!("no refresh:\n{text}"));
    r.rows
        .iter()
        .map(|row| {
            let indent = row.len() - row.trim_start().len();
            let mut f = row.split_whitespace();
            let name = f.next().unwrap().to_owned();
            let cpu = f.next().unwrap().parse().unwrap_or(-1.0);
            (indent / 2, name, cpu)
        })
        .collect()
}

/// cpu.stat with numbers of a fixed width, so that a counter can move
/// by rewriting the file in place at one offset (a reader never sees it
/// truncated).
fn cpu_stat(usec: u64) -> String {
    format!(
        "usage_usec {usec:020}\nuser_usec {:020}\nsystem_usec {:020}\n",
        usec / 2,
        usec - usec / 2
    )
}

/// Runs `cgtop -b ARGS` on a copy of the systemd fixture while udev (and
/// so its ancestors) burns 20 % of a core and session-1 5 %.
fn with_busy_groups(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    copy_dir(&fixture("pure-v2-systemd"), &root);
    // (group, share of the burn) for every group whose counter moves
    let moving: [(&str, u64); 6] = [
        ("", 25),
        ("system.slice", 20),
        ("system.slice/systemd-udevd.service", 20),
        ("system.slice/systemd-udevd.service/udev", 20),
        ("user.slice", 5),
        ("user.slice/user-0.slice", 5),
    ];
    for (g, _) in moving {
        std::fs::write(root.join(g).join("cpu.stat"), cpu_stat(0)).unwrap();
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let files: Vec<(std::fs::File, u64)> = moving
                .iter()
                .map(|(g, share)| {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(root.join(g).join("cpu.stat"))
                        .unwrap();
                    (f, *share)
                })
                .collect();
            // every 10 ms: share % of 10 ms
            let mut tick = 0u64;
            while !stop.load(Ordering::Relaxed) {
                tick += 1;
                for (f, share) in &files {
                    f.write_all_at(cpu_stat(tick * share * 100).as_bytes(), 0)
                        .unwrap();
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let root = root.to_str().unwrap();
        let mut all = vec!["--root", root, "-b", "-d", "0.3"];
        all.extend_from_slice(args);
        let o = cgtop(&all);
        stop.store(true, Ordering::Relaxed);
        o
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn the_busiest_group_comes_first_within_each_parent() {
    let o = with_busy_groups(&["-n", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = last_rows(&o);
    assert_eq!(rows.len(), 31);
    // the children of each row follow it, one level deeper; each
    // parent's children in falling CPU
    for (i, (depth, name, _)) in rows.iter().enumerate() {
        let kids: Vec<&(usize, String, f64)> = rows[i + 1..]
            .iter()
            .take_while(|(d, _, _)| d > depth)
            .filter(|(d, _, _)| *d == depth + 1)
            .collect();
        let cpu: Vec<f64> = kids.iter().map(|k| k.2).collect();
        assert!(
            cpu.windows(2).all(|w| w[0] >= w[1]),
            "{name}'s children: {kids:?}"
        );
    }
    // and the busy ones are first: system.slice (20 %) before user.slice
    // (5 %) before the idle mounts, udevd first in system.slice
    let names: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        names[..5],
        [
            "/",
            "system.slice",
            "systemd-udevd.service",
            "udev",
            "dbus.service"
        ]
    );
    let user = names.iter().position(|n| *n == "user.slice").unwrap();
    assert_eq!(rows[user].0, 1);
    assert!(
        rows[1..user]
            .iter()
            .all(|r| r.0 > 1 || r.1 == "system.slice"),
        "user.slice comes right after system.slice's subtree: {names:?}"
    );
    assert!(rows[2].2 > 1.0, "udevd is busy: {:?}", rows[2]);
}

#[test]
fn flat_lists_every_group_with_its_whole_path_busiest_first() {
    let o = with_busy_groups(&["-n", "2", "--flat"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = last_rows(&o);
    assert_eq!(rows.len(), 31);
    assert!(rows.iter().all(|r| r.0 == 0 && r.1.starts_with('/')));
    let cpu: Vec<f64> = rows.iter().map(|r| r.2).collect();
    assert!(cpu.windows(2).all(|w| w[0] >= w[1]), "{rows:?}");
    assert_eq!(rows[3].1, "/system.slice/systemd-udevd.service/udev");
}

#[test]
fn sort_by_name_reversed_and_by_memory() {
    let root = "tests/fixtures/pure-v2-systemd";
    let o = cgtop(&[
        "--root",
        root,
        "-b",
        "-n",
        "1",
        "-d",
        "0.1",
        "--sort",
        "name",
        "--reverse",
        // sorted and shown by the kernel's names
        "--kernel-names",
    ]);
    assert!(o.status.success());
    let names: Vec<String> = last_rows(&o).into_iter().map(|r| r.1).collect();
    assert_eq!(
        names[..4],
        ["/", "user.slice", "user-0.slice", "user@0.service"]
    );
    assert_eq!(names.last().unwrap(), "dev-hugepages.mount");
    // flat, by memory: highest first, and a group without the figure last
    let o = cgtop(&[
        "--root", root, "-b", "-n", "1", "-d", "0.1", "--flat", "--sort", "mem",
    ]);
    let text = stdout(&o);
    let r = parse(&text).pop().unwrap();
    assert!(r.header.starts_with("GROUP "), "{}", r.header);
    assert!(r.rows[0].starts_with("/system.slice "), "{}", r.rows[0]);
    // a group without the figure sorts below every figure
    let mem: Vec<&str> = r
        .rows
        .iter()
        .map(|row| row.split_whitespace().nth(2).unwrap())
        .collect();
    let first_dash = mem.iter().position(|m| *m == "-").unwrap();
    assert!(mem[first_dash..].iter().all(|m| *m == "-"), "{text}");
}

#[test]
fn flat_honours_depth() {
    let o = cgtop(&[
        "--root",
        "tests/fixtures/deep",
        "--flat",
        "--depth",
        "1",
        "-b",
        "-n",
        "1",
        "-d",
        "0.1",
    ]);
    assert!(o.status.success());
    let rows = last_rows(&o);
    assert_eq!(rows.len(), 5);
    assert!(
        rows.iter().all(|r| r.1.matches('/').count() == 1),
        "{rows:?}"
    );
}

/// Exit 2, one plain line on stderr saying what is wrong, nothing on
/// stdout.
fn assert_refused(args: &[&str], says: &str) {
    let mut all = vec!["--root", "tests/fixtures/pure-v2-systemd", "-n", "1"];
    all.extend_from_slice(args);
    let o = cgtop(&all);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: {}", stdout(&o));
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    assert!(
        err.starts_with("cgtop: ") && err.contains(says),
        "{args:?}: {err}"
    );
}

#[test]
fn a_bad_order_or_depth_is_refused_in_one_line() {
    assert_refused(&["-b", "--sort", "nosuch"], "--sort: no column \"nosuch\"");
    assert_refused(&["-b", "--flat", "--depth", "-1"], "--depth: \"-1\"");
    assert_refused(&["-b", "--sort", "psi"], "not shown");
    assert_refused(&["--json", "--sort", "cpu"], "--json");
    assert_refused(&["--json", "--flat"], "--json");
}

/// `record -b` and `replay -b` print the table as `-b` does, so they
/// take its order: `--sort`, `--reverse`, `--flat` (they were unknown
/// arguments, and clap's tip said to pass them as values); with no table
/// to order, or with `--json`, they are refused in one line.
#[test]
fn record_and_replay_order_their_table_as_b_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.rec");
    let f = file.to_str().unwrap();
    let root = "tests/fixtures/pure-v2-systemd";
    let live = cgtop(&[
        "record",
        "-o",
        f,
        "--root",
        root,
        "-d",
        "0.1",
        "-n",
        "1",
        "-b",
        "--flat",
        "--sort",
        "name",
        "--reverse",
    ]);
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let names: Vec<String> = last_rows(&live).into_iter().map(|r| r.1).collect();
    assert!(names.iter().all(|n| n.starts_with('/')), "{names:?}");
    let mut want = names.clone();
    want.sort();
    want.reverse();
    assert_eq!(names, want, "flat, Z to A");
    // the replay orders the same refresh the same, and by default as a tree
    let back = cgtop(&["replay", f, "-b", "--flat", "--sort", "name", "--reverse"]);
    assert!(back.status.success());
    assert_eq!(stdout(&back), stdout(&live));
    let tree = cgtop(&["replay", f, "-b"]);
    assert!(last_rows(&tree).iter().any(|r| r.0 > 0));
    // refusals: one line, exit 2
    for (args, says) in [
        (
            vec!["replay", f, "-b", "--sort", "nosuch"],
            "--sort: no column",
        ),
        (vec!["replay", f, "--json", "--flat"], "--json"),
    ] {
        let o = cgtop(&args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let other = dir.path().join("s.rec");
    let o = cgtop(&[
        "record",
        "-o",
        other.to_str().unwrap(),
        "--root",
        root,
        "-n",
        "1",
        "--sort",
        "mem",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the table -b prints"), "{err}");
    assert!(!other.exists(), "nothing recorded");
}

/// A refused word is shown as names are (README "Names as shown"): an ESC
/// as `\e`. Through `{:?}` the escape's backslash was doubled, and
/// `"no\\e"` reads, by that table, as a backslash and an `e`.
#[test]
fn a_refused_word_is_shown_escaped_once() {
    let word = "no\u{1b}]0;x\u{7}";
    assert_refused(
        &["-b", "--sort", word],
        "--sort: no column \"no\\e]0;x\\a\"",
    );
    assert_refused(
        &["-b", "--columns", word],
        "--columns: no column \"no\\e]0;x\\a\"",
    );
    assert_refused(&["-b", "--depth", word], "--depth: \"no\\e]0;x\\a\"");
}
