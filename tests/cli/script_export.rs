//! `cgtop export-log` (issue 10 item 4): the action log read back, the
//! apply and undo scripts made from it, and what they do when run.
//!
//! The log is made by cgtop's own formatter (`format_line_in`) from
//! outcomes of ops built by cgtop's builders, on groups a delegated user
//! could name (`$(touch pwned)`, `'; touch x; '`, a newline, ESC, invalid
//! UTF-8, a trailing newline, a leading `-`). Each script is checked with
//! `bash -n` and `dash -n`, then run by bash, dash and busybox sh on a
//! tempdir laid out as the hierarchy (`CGTOP_CGROUP2`), in an empty
//! working directory: every write lands on exactly its file, nothing else
//! is created or changed, no command runs; the undo script puts every old
//! value back.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::cgroupfs::io::DevId;
use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::files::script::{Entry, Place, What};
use cgtop::model::host::layout::Layout;
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::{self, Op};
use cgtop::model::{GroupPath, WriteOutcome};
use cgtop::source::actionlog::{self, format_line_in, LogRead, Parsed};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const T0: u64 = 1_714_564_800;

/// Names a delegated user could give a group; none holds `/` or NUL.
const HOSTILE: &[&[u8]] = &[
    b"$(touch pwned)",
    b"'; touch x; '",
    b"`touch y`",
    b"a\nb",
    b"trailing\n",
    b"esc\x1b[31m",
    b"bad\xff\xfe",
    b"back\\slash\\0101",
    b"-n",
    b"%b %s",
    b"* ?",
    b"caf\xc3\xa9 \"q\" !x",
];

/// A write done at the hierarchy's root, where the view's path is the
/// group's real one, as the writer reports it.
fn ok(op: Op, old: &str, rb: &str) -> WriteOutcome {
    let real = Some(op.group().clone());
    WriteOutcome::done(op, Some(old.to_owned()), Some(rb.to_owned())).at(real)
}

/// A group made at the hierarchy's root, as the writer reports it.
fn made(g: &GroupPath) -> WriteOutcome {
    WriteOutcome::done(write::create_group(g), None, None).at(Some(g.clone()))
}

fn log_text(outcomes: &[WriteOutcome]) -> String {
    let mut s = String::new();
    for (i, o) in outcomes.iter().enumerate() {
        s.push_str(&format_line_in(T0 + i as u64, o, &Layout::default()));
        s.push('\n');
    }
    s
}

fn cgtop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
}

/// Every path below `d` with its contents (`None`: a directory).
fn tree(d: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(d).unwrap().to_path_buf();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                out.insert(rel, None);
                stack.push(e.path());
            } else {
                out.insert(rel, Some(std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

/// A file in the sandbox hierarchy.
fn put(root: &Path, group: &[u8], file: &str, text: &str) -> PathBuf {
    let dir = root.join(OsStr::from_bytes(group));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(file);
    std::fs::write(&f, text).unwrap();
    f
}

fn syntax_ok(script: &Path) {
    for sh in ["bash", "dash"] {
        if !common::have(sh) {
            println!("skipped: {sh} -n (no {sh})");
            continue;
        }
        let out = Command::new(sh).arg("-n").arg(script).output().unwrap();
        assert!(
            out.status.success(),
            "{sh} -n {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs `script` with `sh` in the empty directory `cwd`, the hierarchy
/// at `root`; its status and stderr.
fn run(sh: &[&str], script: &Path, root: &Path, cwd: &Path) -> (bool, String) {
    let out = Command::new(sh[0])
        .args(&sh[1..])
        .arg(script)
        .current_dir(cwd)
        .env("CGTOP_CGROUP2", root)
        .env_remove("CGTOP_V1_CPU")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn shells() -> Vec<Vec<&'static str>> {
    let mut v = Vec::new();
    for sh in ["bash", "dash"] {
        if common::have(sh) {
            v.push(vec![sh]);
        }
    }
    if common::have("busybox") {
        v.push(vec!["busybox", "sh"]);
    }
    v
}

#[test]
fn hostile_names_write_exactly_their_files_and_run_nothing() {
    let shells = shells();
    assert!(!shells.is_empty(), "no shell to run the script with");
    // one write per hostile group, and one below it (a path of two)
    let mut outcomes = Vec::new();
    let mut want: Vec<(Vec<u8>, &str, String, String)> = Vec::new();
    for (i, name) in HOSTILE.iter().enumerate() {
        let g = GroupPath::parse(name).unwrap();
        let v = 10 + i as u64;
        outcomes.push(ok(
            write::set_pids_max(&g, Limit::Value(v)),
            "max\n",
            &format!("{v}\n"),
        ));
        want.push((name.to_vec(), "pids.max", "max".into(), v.to_string()));
        let below = g.join(b"x\ny".as_slice()).unwrap();
        outcomes.push(ok(
            write::set_cpu_max(
                &below,
                CpuMax {
                    quota: Some(50_000),
                    period: 100_000,
                },
            ),
            "max 100000\n",
            "50000 100000\n",
        ));
        want.push((
            below.as_bytes().to_vec(),
            "cpu.max",
            "max 100000".into(),
            "50000 100000".into(),
        ));
    }
    // a made group, a value with bytes of its own, then a line naming a
    // path out of the hierarchy: refused
    outcomes.push(made(&GroupPath::parse(b"made $(id)").unwrap()));
    let raw_g = GroupPath::new("rawg");
    outcomes.push(ok(
        write::raw(&raw_g, "memory.oom.group", "1'$(touch z)\u{1b}"),
        "0\n",
        "1'$(touch z)\u{1b}\n",
    ));
    want.push((
        b"rawg".to_vec(),
        "memory.oom.group",
        "0".into(),
        "1'$(touch z)\u{1b}".into(),
    ));
    let mut log = log_text(&outcomes);
    log.push_str("2024-05-01T12:10:00Z /a pids.max max to 1 ok at \"/a/../../etc\"\n");
    log.push_str("2024-05-01T12:10:01Z /ok ../../etc/passwd max to 1 ok at /ok\n");

    let work = tempfile::tempdir().unwrap();
    let (apply, undo) = export(work.path(), &log);
    for s in [&apply, &undo] {
        let meta = std::fs::metadata(s).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o700, "{}", s.display());
        // no control byte anywhere (comments are escaped text), and every
        // line that runs is printable ASCII: no byte of a name reaches it raw
        let text = String::from_utf8(std::fs::read(s).unwrap()).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{text}"
        );
        for l in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            assert!(
                l.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b)),
                "{l}"
            );
        }
    }
    let text = std::fs::read_to_string(&apply).unwrap();
    assert!(
        text.contains("not replayed: refused: the group path"),
        "{text}"
    );
    assert!(
        text.contains("not replayed: refused: the file name"),
        "{text}"
    );

    for sh in &shells {
        let root = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        for (g, file, old, _) in &want {
            put(root.path(), g, file, old);
        }
        std::fs::create_dir_all(root.path().join("etc")).unwrap();
        put(root.path(), b"etc", "pids.max", "max");
        let before = tree(root.path());
        let (ok, err) = run(sh, &apply, root.path(), cwd.path());
        assert!(ok, "{sh:?}: {err}");
        // exactly the intended files changed, one directory made
        let after = tree(root.path());
        let mut expect = before.clone();
        for (g, file, _, new) in &want {
            let p = Path::new(OsStr::from_bytes(g)).join(file);
            expect.insert(p, Some(new.as_bytes().to_vec()));
        }
        expect.insert(PathBuf::from("made $(id)"), None);
        assert_eq!(after, expect, "{sh:?}");
        assert_eq!(tree(cwd.path()), BTreeMap::new(), "{sh:?}: a command ran");
        // the undo puts every old value back and removes the made group
        let (ok, err) = run(sh, &undo, root.path(), cwd.path());
        assert!(ok, "{sh:?} undo: {err}");
        assert_eq!(tree(root.path()), before, "{sh:?} undo");
        assert_eq!(tree(cwd.path()), BTreeMap::new(), "{sh:?}: a command ran");
    }
}

#[test]
fn a_read_back_that_differs_stops_the_script_loudly_with_both_values() {
    let g = GroupPath::new("lab");
    // where the log was made the kernel kept 0 of 1000 (whole pages): the
    // script wants 0, and a file that keeps 1000 is a loud stop
    let log = log_text(&[
        ok(
            write::set_memory_limit(&g, MemoryFile::Max, Limit::Value(1000)),
            "max\n",
            "0\n",
        ),
        ok(write::set_pids_max(&g, Limit::Value(5)), "max\n", "5\n"),
    ]);
    let work = tempfile::tempdir().unwrap();
    let (apply, _) = export(work.path(), &log);
    let root = tempfile::tempdir().unwrap();
    put(root.path(), b"lab", "memory.max", "max");
    put(root.path(), b"lab", "pids.max", "max");
    // in every shell, busybox sh too, whose tr has no [:print:] (the
    // message came out as `??t?p???ript:...`)
    for sh in shells() {
        put(root.path(), b"lab", "memory.max", "max");
        let (okay, err) = run(&sh, &apply, root.path(), work.path());
        assert!(!okay, "{sh:?}");
        assert!(err.starts_with("cgtop script: "), "{sh:?}: {err}");
        assert!(
            err.contains("lab/memory.max: wrote '1000', read back '1000' (wanted exact '0')"),
            "{sh:?}: {err}"
        );
    }
    // it stopped there
    assert_eq!(
        std::fs::read_to_string(root.path().join("lab/pids.max")).unwrap(),
        "max"
    );
    // a missing file, or one that is a symlink, is refused, not created
    // or followed
    std::fs::remove_file(root.path().join("lab/memory.max")).unwrap();
    let (okay, err) = run(&["bash"], &apply, root.path(), work.path());
    assert!(!okay);
    assert!(err.contains("lab/memory.max: no such file"), "{err}");
    assert!(!root.path().join("lab/memory.max").exists());
    let elsewhere = work.path().join("elsewhere");
    std::fs::write(&elsewhere, "x").unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.path().join("lab/memory.max")).unwrap();
    let (okay, err) = run(&["bash"], &apply, root.path(), work.path());
    assert!(!okay, "{err}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "x");
    // and a group directory that is a symlink: refused
    let other = tempfile::tempdir().unwrap();
    put(other.path(), b"", "memory.max", "max");
    std::fs::remove_dir_all(root.path().join("lab")).unwrap();
    std::os::unix::fs::symlink(other.path(), root.path().join("lab")).unwrap();
    let (okay, err) = run(&["bash"], &apply, root.path(), work.path());
    assert!(!okay);
    assert!(err.contains("no such group"), "{err}");
    assert_eq!(
        std::fs::read_to_string(other.path().join("memory.max")).unwrap(),
        "max"
    );
}

#[test]
fn the_check_judges_read_backs_as_the_kernel_normalizes_them() {
    // run cg_check alone: the functions of a script, then one call
    let g = GroupPath::new("a");
    let log = log_text(&[ok(write::set_pids_max(&g, Limit::Value(1)), "max\n", "1\n")]);
    let work = tempfile::tempdir().unwrap();
    let logf = work.path().join("actions.log");
    std::fs::write(&logf, log).unwrap();
    let out = cgtop()
        .args(["export-log", "--log"])
        .arg(&logf)
        .output()
        .unwrap();
    let script = String::from_utf8(out.stdout).unwrap();
    let funcs: String = script
        .split("# --- the changes")
        .next()
        .unwrap()
        .replace("set -eu", "");
    let check = |mode: &str, want: &str, got: &str| {
        let s = format!("{funcs}\ncg_check '{mode}' '{want}' \"$(printf '%b' '{got}')\"\n");
        Command::new("dash")
            .arg("-c")
            .arg(&s)
            .status()
            .unwrap()
            .success()
    };
    if !common::have("dash") {
        println!("skipped: no dash");
        return;
    }
    assert!(check("exact", "50000 100000", "50000 100000"));
    assert!(!check("exact", "50000 100000", "max 100000"));
    // io.max: the device's line with the kernel's other fields
    let io = "8:16 rbps=max wbps=max riops=max wiops=max\\n8:0 rbps=max wbps=1048576 riops=max wiops=max";
    assert!(check("iomax", "8:0 wbps=1048576", io));
    assert!(!check("iomax", "8:0 wbps=2097152", io));
    assert!(!check("iomax", "8:32 wbps=1", io));
    // all max: the kernel drops the line
    assert!(check("iomax", "8:32 rbps=max wbps=max", io));
    assert!(check("line", "default 100", "default 100\\n8:0 50"));
    assert!(!check("line", "8:0 60", "default 100\\n8:0 50"));
    assert!(check("noline", "8:16", "default 100\\n8:0 50"));
    assert!(!check("noline", "8:0", "default 100\\n8:0 50"));
    assert!(check("ctl", "+cpu -io", "memory cpu pids"));
    assert!(!check("ctl", "+cpu -io", "memory io"));
    assert!(check("v1max", "", "9223372036854771712"));
    assert!(check("v1max", "", "-1"));
    assert!(!check("v1max", "", "1048576"));
    assert!(check("raw", "1", "1"));
    assert!(check("raw", "x", "a 1\\nb 2"));
    assert!(!check("raw", "x", "y"));
}

#[test]
fn the_log_reads_back_as_it_was_written() {
    let mut outcomes = Vec::new();
    for name in HOSTILE {
        let g = GroupPath::parse(name).unwrap();
        outcomes.push(ok(write::set_pids_max(&g, Limit::Value(7)), "max\n", "7\n"));
        outcomes.push(made(&g));
    }
    let dev = DevId { major: 8, minor: 0 };
    outcomes.push(ok(
        write::set_io_weight(&GroupPath::new("a"), Some(dev), 50),
        "default 100\n",
        "default 100\n8:0 50\n",
    ));
    let text = log_text(&outcomes);
    for (line, o) in text.lines().zip(&outcomes) {
        let Some(Parsed::Entry(e)) = actionlog::parse_line(line) else {
            panic!("not read back: {line}");
        };
        assert_eq!(e.place, Place::V2);
        let mut path = b"/".to_vec();
        path.extend_from_slice(o.op.group().as_bytes());
        assert_eq!(e.group, path, "{line}");
        assert_eq!(e.result, Ok(()));
        match (&e.what, &o.op) {
            (What::Write { file, old, new, .. }, Op::Write(w)) => {
                assert_eq!(file, w.file.as_bytes());
                assert_eq!(new, w.contents.as_bytes());
                assert_eq!(
                    old.as_deref(),
                    o.old.as_deref().map(|s| s.trim_end().as_bytes())
                );
            }
            (What::Mkdir, Op::CreateGroup(..)) => {}
            x => panic!("{x:?}"),
        }
    }
}

#[test]
fn the_reader_skips_and_counts_what_is_not_a_log_line_and_keeps_since() {
    let g = GroupPath::new("a");
    let good = log_text(&[
        ok(write::set_pids_max(&g, Limit::Value(1)), "max\n", "1\n"),
        ok(write::set_pids_max(&g, Limit::Value(2)), "1\n", "2\n"),
    ]);
    let mut lines: Vec<Vec<u8>> = good.lines().map(|l| l.as_bytes().to_vec()).collect();
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&lines.remove(0));
    bytes.push(b'\n');
    bytes.extend_from_slice(b"garbage\n\xff\xfe not utf-8\n");
    // a line far past the cap, never held whole
    bytes.extend(vec![b'a'; actionlog::MAX_LINE * 3]);
    bytes.push(b'\n');
    bytes.extend_from_slice(b"2024-05-01T12:00:00Z /a pids.max \"open to 1 ok\n");
    bytes.extend_from_slice(&lines.remove(0));
    // the last line without its newline
    let read: LogRead = actionlog::read_log(&bytes[..], None).unwrap();
    assert_eq!(read.lines, 6);
    assert_eq!(read.malformed, 4);
    assert_eq!(read.first_malformed, Some(2));
    assert_eq!(read.entries.len(), 2);
    let since = actionlog::read_log(&bytes[..], Some("2024-05-01T12:00:01Z")).unwrap();
    assert_eq!(since.entries.len(), 1);
    assert_eq!(since.before, 1);
    let e: &Entry = &since.entries[0];
    assert!(matches!(&e.what, What::Write { new, .. } if new == b"2"));
}

proptest::proptest! {
    #[test]
    fn the_reader_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000)) {
        let _ = actionlog::read_log(&bytes[..], Some("2024-01-01T00:00:00Z"));
    }

    #[test]
    fn any_line_of_log_like_words_reads_or_is_refused(words in proptest::collection::vec(
        proptest::sample::select(vec!["2024-05-01T12:00:00Z", "/a", "cpu:/a", "\"/a b\"", "to", "ok", "failed", "note",
            "mkdir", "rmdir", "stored", "effect", "-", "\"", "x", "\"\\x24(id)\""]), 0..12)) {
        let line = words.join(" ");
        let _ = actionlog::parse_line(&line);
    }
}

/// `dir/actions.log` holding one logged change (pids.max of /a to 1).
fn one_change_log(dir: &Path) -> PathBuf {
    let logf = dir.join("actions.log");
    let g = GroupPath::new("a");
    std::fs::write(
        &logf,
        log_text(&[ok(write::set_pids_max(&g, Limit::Value(1)), "max\n", "1\n")]),
    )
    .unwrap();
    logf
}

#[test]
fn output_files_are_new_never_links_and_force_only_replaces_ours() {
    let work = tempfile::tempdir().unwrap();
    let logf = one_change_log(work.path());
    let export = |o: &Path, force: bool| {
        let mut c = cgtop();
        c.args(["export-log", "--log"]).arg(&logf).arg("-o").arg(o);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let a = work.path().join("a.sh");
    std::fs::write(&a, "mine").unwrap();
    let out = export(&a, false);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exists"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "mine");
    assert!(export(&a, true).status.success());
    assert!(std::fs::read_to_string(&a)
        .unwrap()
        .starts_with("#!/bin/sh\n"));
    // a symlink is refused, with --force too, and its target untouched
    let target = work.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    let l = work.path().join("l.sh");
    std::os::unix::fs::symlink(&target, &l).unwrap();
    for force in [false, true] {
        assert!(!export(&l, force).status.success());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
    // a second hard link: not replaced
    let h = work.path().join("h.sh");
    std::fs::hard_link(&target, &h).unwrap();
    assert!(!export(&h, true).status.success());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn output_files_are_resolved_and_a_log_must_be_a_regular_file() {
    let work = tempfile::tempdir().unwrap();
    let logf = one_change_log(work.path());
    let real = work.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = work.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let export = |args: &[&OsStr]| {
        cgtop()
            .args(["export-log", "--log"])
            .arg(&logf)
            .args(args)
            .output()
            .unwrap()
    };
    // -o and --undo one file through a symlinked directory: with --force
    // the apply script held the undo
    let (a, u) = (real.join("a.sh"), link.join("a.sh"));
    let out = export(&[
        OsStr::new("-o"),
        a.as_os_str(),
        OsStr::new("--undo"),
        u.as_os_str(),
        OsStr::new("--force"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!a.exists(), "nothing is written when one place is refused");
    // -o through a directory symlink wrote into the link's target
    let out = export(&[OsStr::new("-o"), link.join("b.sh").as_os_str()]);
    assert!(!out.status.success());
    assert!(!real.join("b.sh").exists());
    assert!(!real.join("b.undo.sh").exists());
    // two names of one file (a hard link), with --force: one file
    let h = real.join("h.sh");
    std::fs::write(&h, "mine").unwrap();
    std::fs::hard_link(&h, real.join("h2.sh")).unwrap();
    let out = export(&[
        OsStr::new("-o"),
        h.as_os_str(),
        OsStr::new("--undo"),
        real.join("h2.sh").as_os_str(),
        OsStr::new("--force"),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be one file"));
    assert_eq!(std::fs::read_to_string(&h).unwrap(), "mine");
    // --log a FIFO blocked, /dev/zero ran until killed: refused at once
    let fifo = work.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    for log in [fifo.as_path(), Path::new("/dev/zero")] {
        let mut child = cgtop()
            .args(["export-log", "--log"])
            .arg(log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status = common::wait_exit(&mut child, std::time::Duration::from_secs(10));
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(1), "{log:?}: {err}");
        assert!(err.contains("not a regular file"), "{err}");
    }
}

#[test]
fn since_persist_and_stdout() {
    let unit = GroupPath::new("system.slice/web.service");
    let plain = GroupPath::new("lab");
    let outcomes = [
        ok(write::set_pids_max(&plain, Limit::Value(1)), "max\n", "1\n"),
        ok(write::set_cpu_weight(&unit, 200), "100\n", "200\n"),
    ];
    let work = tempfile::tempdir().unwrap();
    let logf = work.path().join("actions.log");
    std::fs::write(&logf, log_text(&outcomes)).unwrap();
    let out = cgtop()
        .args([
            "export-log",
            "--since",
            "2024-05-01T12:00:01Z",
            "--persist",
            "--log",
        ])
        .arg(&logf)
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("\nsystemctl set-property web.service CPUWeight=200\n"),
        "{s}"
    );
    assert!(!s.contains("pids.max"), "{s}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no undo script"));
    let bad = cgtop()
        .args(["export-log", "--since", "yesterday", "--log"])
        .arg(&logf)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Runs `script` with `sh` in `cwd`, each hierarchy named by its
/// environment variable (`CGTOP_CGROUP2`, `CGTOP_V1_CPU`, ...), none
/// found in the host's mountinfo; its status and stderr.
fn run_in(sh: &[&str], script: &Path, env: &[(&str, &Path)], cwd: &Path) -> (bool, String) {
    let mut c = Command::new(sh[0]);
    c.args(&sh[1..]).arg(script).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exports `log` to `dir/apply.sh` (and its undo) with the real binary;
/// the two scripts' paths.
fn export(dir: &Path, log: &str) -> (PathBuf, PathBuf) {
    let logf = dir.join("actions.log");
    std::fs::write(&logf, log).unwrap();
    let apply = dir.join("apply.sh");
    let out = cgtop()
        .args(["export-log", "--log"])
        .arg(&logf)
        .arg("-o")
        .arg(&apply)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let undo = dir.join("apply.undo.sh");
    syntax_ok(&apply);
    syntax_ok(&undo);
    (apply, undo)
}

/// `n` then Del of a group on a host of v1 hierarchies whose parent is in
/// some hierarchies only (systemd makes a unit's group only where its
/// controllers are): the writer passes over the others, the log says
/// `skipped`, and the scripts replay the mkdir and rmdir only where they
/// were made, in bash, dash and busybox sh, apply and undo both, against
/// a copy of that layout where the other hierarchies lack the parent.
#[test]
fn a_group_made_in_some_v1_hierarchies_replays_only_there() {
    let layout = Layout {
        v2: None,
        v1: ["cpu", "freezer", "devices"]
            .iter()
            .map(|c| cgtop::model::host::layout::V1Mount {
                dir: PathBuf::from(format!("/sys/fs/cgroup/{c}")),
                controllers: vec![(*c).to_owned()],
                name: None,
            })
            .collect(),
    };
    let parent = GroupPath::new("svc.service");
    let child = parent.join("child1").unwrap();
    let hiers: Vec<_> = (0..3).map(cgtop::model::host::layout::HierId::V1).collect();
    // the parent is only in cpu: freezer and devices pass the ops over
    let outcome = |op: Op| {
        if op.hier() == hiers[0] {
            let real = Some(op.group().clone());
            WriteOutcome::done(op, None, None).at(real)
        } else {
            let real = Some(op.group().clone());
            WriteOutcome::passed_over(
                op,
                "svc.service is not in this hierarchy: not made there".into(),
            )
            .at(real)
        }
    };
    let mut outcomes: Vec<WriteOutcome> = write::create_group_in(&child, &hiers)
        .into_iter()
        .map(outcome)
        .collect();
    outcomes.extend(
        write::remove_group_in(&child, &hiers)
            .into_iter()
            .map(outcome),
    );
    let mut log = String::new();
    for (i, o) in outcomes.iter().enumerate() {
        log.push_str(&format_line_in(T0 + i as u64, o, &layout));
        log.push('\n');
    }
    assert!(
        log.contains("freezer:/svc.service/child1 mkdir skipped at /svc.service/child1 note"),
        "{log}"
    );

    let work = tempfile::tempdir().unwrap();
    let (apply, undo) = export(work.path(), &log);
    let text = std::fs::read_to_string(&apply).unwrap();
    assert_eq!(text.matches("\ncg_mkdir ").count(), 1, "{text}");
    assert_eq!(text.matches("\ncg_rmdir ").count(), 1, "{text}");
    assert!(
        text.contains("not replayed: nothing was done in this hierarchy"),
        "{text}"
    );
    let undo_text = std::fs::read_to_string(&undo).unwrap();
    assert_eq!(undo_text.matches("\ncg_rmdir ").count(), 1, "{undo_text}");

    for sh in shells() {
        // the layout: the parent in cpu only
        let hosts = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = ["cpu", "freezer", "devices"]
            .iter()
            .map(|c| hosts.path().join(c))
            .collect();
        for d in &dirs {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::create_dir(dirs[0].join("svc.service")).unwrap();
        let env = [
            ("CGTOP_V1_CPU", dirs[0].as_path()),
            ("CGTOP_V1_FREEZER", dirs[1].as_path()),
            ("CGTOP_V1_DEVICES", dirs[2].as_path()),
        ];
        let before = tree(hosts.path());
        let cwd = tempfile::tempdir().unwrap();
        let (ok, said) = run_in(&sh, &apply, &env, cwd.path());
        assert!(ok, "{sh:?} apply: {said}\n{text}");
        assert_eq!(
            tree(hosts.path()),
            before,
            "{sh:?}: made and removed in cpu only"
        );
        // the apply script without its rmdir: the group made, in cpu only
        let made_only = work.path().join(format!("made-{}.sh", sh.join("-")));
        let cut = text.rsplit_once("\ncg_rmdir ").unwrap().0;
        std::fs::write(&made_only, format!("{cut}\n")).unwrap();
        let (ok, said) = run_in(&sh, &made_only, &env, cwd.path());
        assert!(ok, "{sh:?} mkdir: {said}");
        assert!(dirs[0].join("svc.service/child1").is_dir());
        assert!(!dirs[1].join("svc.service").exists());
        assert!(!dirs[2].join("svc.service").exists());
        let (ok, said) = run_in(&sh, &undo, &env, cwd.path());
        assert!(ok, "{sh:?} undo: {said}\n{undo_text}");
        assert_eq!(
            tree(hosts.path()),
            before,
            "{sh:?}: the undo removes it again"
        );
        assert!(std::fs::read_dir(cwd.path()).unwrap().next().is_none());
    }
}

/// A `--root` session's log (the view's paths, each line with where the
/// group really is) replays only at the real paths; a line of an older
/// log without that record is not replayed anywhere and the header says
/// why.
#[test]
fn a_root_session_replays_at_the_real_paths_and_old_lines_not_at_all() {
    let view = GroupPath::new("deleg-x");
    let real_of = |g: &GroupPath| GroupPath::new("delegated").concat(g);
    let set = |g: &GroupPath| {
        let op = write::set_pids_max(g, Limit::Value(3));
        let real = Some(real_of(g));
        WriteOutcome::done(op, Some("max\n".into()), Some("3\n".into())).at(real)
    };
    let child = view.join("child").unwrap();
    let outcomes = vec![
        set(&view),
        WriteOutcome::done(write::create_group(&child), None, None).at(Some(real_of(&child))),
    ];
    let mut log = log_text(&outcomes);
    // as a cgtop before the record wrote it: no `at`
    log.push_str("2024-05-01T12:10:00Z /deleg-x pids.max max to 5 ok\n");

    let work = tempfile::tempdir().unwrap();
    let (apply, undo) = export(work.path(), &log);
    let text = std::fs::read_to_string(&apply).unwrap();
    assert!(
        text.contains("#   2 change(s) replayed, 1 kept as comments only"),
        "{text}"
    );
    assert!(
        text.contains("#   1 of them skipped: the log line does not record where the group is"),
        "{text}"
    );
    for sh in shells() {
        let root = tempfile::tempdir().unwrap();
        // the host: a top-level group with the view's name, and the
        // delegated directory the session viewed
        let host_pids = put(root.path(), b"deleg-x", "pids.max", "max\n");
        let real_pids = put(root.path(), b"delegated/deleg-x", "pids.max", "max\n");
        let cwd = tempfile::tempdir().unwrap();
        let (ok, said) = run(&sh, &apply, root.path(), cwd.path());
        assert!(ok, "{sh:?}: {said}\n{text}");
        assert_eq!(std::fs::read_to_string(&real_pids).unwrap(), "3");
        assert_eq!(std::fs::read_to_string(&host_pids).unwrap(), "max\n");
        assert!(root.path().join("delegated/deleg-x/child").is_dir());
        assert!(!root.path().join("deleg-x/child").exists());
        let (ok, said) = run(&sh, &undo, root.path(), cwd.path());
        assert!(ok, "{sh:?} undo: {said}");
        assert_eq!(std::fs::read_to_string(&real_pids).unwrap(), "max");
        assert_eq!(std::fs::read_to_string(&host_pids).unwrap(), "max\n");
        assert!(!root.path().join("delegated/deleg-x/child").exists());
    }
}
