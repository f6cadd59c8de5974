//! Hostile inputs against the extra column
//! files (memory.max, memory.swap.current, the three pressure files), the
//! limits read for grading and for the limits form, the move's old group
//! in the action log, bracketed paste into text fields, and the scanner's
//! recreation check by inode. Each attack is built the way the owner of a
//! delegated subtree (or of a `--root` tree) could, and run through the
//! real binary or through `app::update` and the view.

use super::common::{self, ch, key, send, tick};
use super::fs_access::{cgtop, mkfifo, peak_rss_kib, tree, unreadable_in, write};
use cgtop::app::{writes::LogEntry, Msg};
use cgtop::model::write::move_process;
use cgtop::model::write::outcome::WriteOutcome;
use cgtop::model::GroupPath;
use cgtop::render::columns::Column;
use cgtop::source::actionlog::{format_line, unfield};
use crossterm::event::KeyCode;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

// in display order: the columns show in the order given
const ALL_COLUMNS: &str = "cpu,thr,mem,mempct,swap,read,write,pids,psi";

/// Fails on any character a terminal acts on or that hides or reorders
/// text: C0/C1 controls (but the newline), DEL, and the invisible and
/// direction characters `model::tree::text` escapes (a sample of them).
fn assert_clean(what: &str, s: &str) {
    for c in s.chars() {
        let bad = (c.is_control() && c != '\n')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        assert!(!bad, "{what}: {c:?} reached the output:\n{s}");
    }
}

/// Fills `dir` with the extra column files as FIFOs, a symlink to
/// /dev/zero and a 2 GiB sparse file.
fn plant_endless_extras(dir: &Path) {
    for f in ["memory.max", "memory.swap.current", "io.pressure"] {
        mkfifo(&dir.join(f));
    }
    let _ = fs::remove_file(dir.join("cpu.pressure"));
    symlink("/dev/zero", dir.join("cpu.pressure")).unwrap();
    let big = fs::File::create(dir.join("memory.pressure")).unwrap();
    big.set_len(2 << 30).unwrap();
}

#[test]
fn extra_column_files_that_block_or_never_end_are_refused() {
    // attack: every file read only for THR%, MEM%, SWAP and PSI% is a
    // FIFO (blocks an open for reading), /dev/zero (endless) or 2 GiB
    let t = tree();
    fs::remove_file(t.path().join("g/memory.max")).unwrap();
    plant_endless_extras(&t.path().join("g"));
    let root = t.path().to_str().unwrap();
    let base = [
        "--root",
        root,
        "--columns",
        ALL_COLUMNS,
        "-n",
        "2",
        "-d",
        "0.1",
    ];
    let (ok, out, err) = cgtop(&[&base[..], &["-b"]].concat(), 10)
        .expect("`cgtop -b --columns ...` hung on an extra column's file");
    assert!(ok, "{err}");
    assert_eq!(out.matches("cgtop - refresh").count(), 2, "{out}");
    let (ok, out, err) = cgtop(&[&base[..], &["--json"]].concat(), 10)
        .expect("`cgtop --json --columns ...` hung on an extra column's file");
    assert!(ok, "{err}");
    let line = out.lines().last().unwrap();
    let u = unreadable_in(line, "/g");
    for (file, why) in [
        ("memory.max", "FIFO"),
        ("memory.swap.current", "FIFO"),
        ("io.pressure", "FIFO"),
        ("cpu.pressure", "symbolic link"),
        ("memory.pressure", "larger than"),
    ] {
        assert!(
            u.iter().any(|(f, e)| f == file && e.contains(why)),
            "{file}: {u:?}"
        );
    }
    // and the 2 GiB file is not read into memory
    if let Some((ok, kib, err)) = peak_rss_kib(&[&base[..], &["--json"]].concat()) {
        assert!(ok, "{err}");
        assert!(kib < 100 * 1024, "peak RSS {kib} KiB");
    }
}

/// The hostile numbers: the largest u64, negative, NaN, infinity, huge
/// exponents, "max" where a number goes, an escape in a figure.
fn garbage_tree() -> tempfile::TempDir {
    let t = tree();
    let g = t.path().join("g");
    write(
        &g,
        &[
            ("memory.max", "18446744073709551615\n"),
            ("memory.high", "-1\u{202e}\n"),
            ("memory.swap.current", "-5\n"),
            ("pids.current", "18446744073709551615\n"),
            ("pids.max", "max\u{1b}[2J\u{200f}\n"),
            ("cpu.max", "99999999999999999999999 0\n"),
            (
                "cpu.stat",
                "usage_usec 18446744073709551615\nuser_usec 0\nsystem_usec 0\n\
                 nr_periods 1\nnr_throttled 18446744073709551615\n\
                 throttled_usec 18446744073709551615\n",
            ),
            (
                "cpu.pressure",
                "some avg10=NaN avg60=inf avg300=-1 total=5\n",
            ),
            (
                "memory.pressure",
                "some avg10=1e308 avg60=0 avg300=0 total=18446744073709551615\n",
            ),
            ("io.pressure", "some avg10=-inf avg60=0 avg300=0 total=1\n"),
        ],
    );
    let h = t.path().join("h");
    write(
        &h,
        &[
            ("cgroup.procs", ""),
            ("cpu.stat", "usage_usec 1\n"),
            ("memory.current", "4096\n"),
            ("memory.max", "0\n"),
            ("memory.swap.current", &"9".repeat(5000)),
            ("pids.max", "-1\u{202e}\u{9b}2J\n"),
            ("memory.high", "1\u{200b}G\n"),
            ("cpu.max", "max -100000\n"),
            (
                "cpu.pressure",
                &format!(
                    "some avg10=5\u{1b}[31m avg60=0 avg300=0 total=1\n{}\n",
                    "x".repeat(60_000)
                ),
            ),
        ],
    );
    write(
        t.path(),
        &[("cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n")],
    );
    t
}

#[test]
fn garbage_numbers_in_the_extra_files_show_no_nan_inf_or_escape() {
    let t = garbage_tree();
    let root = t.path().to_str().unwrap();
    let args = [
        "--root",
        root,
        "-b",
        "--columns",
        ALL_COLUMNS,
        "-n",
        "2",
        "-d",
        "0.1",
    ];
    let (ok, out, err) = cgtop(&args, 10).expect("cgtop hung");
    assert!(ok, "{err}");
    assert_clean("cgtop -b", &out);
    let low = out.to_lowercase();
    assert!(!low.contains("nan") && !low.contains("inf"), "{out}");
    // every row of a refresh as wide as the others: no figure (a
    // pids.current of 2^64-1) overflows its cell and shifts the rest
    for block in out.split("cgtop - refresh").skip(1) {
        let lines: Vec<&str> = block.lines().skip(2).filter(|l| !l.is_empty()).collect();
        let w = lines[0].chars().count();
        for l in &lines {
            assert_eq!(l.chars().count(), w, "{l:?} in\n{block}");
        }
    }
    // pressure files with NaN, 1e308 and -inf averages are malformed:
    // no figure, not "100.0" from a clamp or "0.0" from a NaN
    let g_row = out
        .lines()
        .rfind(|l| l.trim_start().starts_with("g "))
        .unwrap();
    assert_eq!(g_row.split_whitespace().nth(9), Some("-"), "{g_row}");
    let (ok, out, err) = cgtop(
        &[
            "--root",
            root,
            "--json",
            "--columns",
            ALL_COLUMNS,
            "-n",
            "1",
            "-d",
            "0.1",
        ],
        10,
    )
    .expect("cgtop hung");
    assert!(ok, "{err}");
    serde_json::from_str::<serde_json::Value>(out.lines().next().unwrap()).unwrap();
    assert!(!out.contains('\u{1b}'), "{out}");
}

/// The app on `root` at 200x50 with every column shown and limits graded,
/// as `run` sets it up, after two refreshes.
fn tui_on(root: &Path) -> (cgtop::app::App, cgtop::source::collector::Collector) {
    let mount = cgtop::model::MountInfo {
        root: root.to_path_buf(),
        mode: cgtop::model::MountMode::Directory,
    };
    let (mut a, mut c) = common::app_on(root, mount, 200, 50);
    a.columns = Column::ALL.to_vec();
    c.set_extras(Column::extras(&a.columns));
    c.set_grade_limits(true);
    tick(&mut a, &mut c, 1.0);
    tick(&mut a, &mut c, 2.0);
    (a, c)
}

#[test]
fn the_tui_with_every_column_and_the_limits_form_stays_clean_on_garbage() {
    let t = garbage_tree();
    let (mut a, mut c) = tui_on(t.path());
    let s = common::screen(&a, 200, 50);
    assert_clean("tree with every column", &s);
    assert!(s.contains("PSI%") && s.contains("MEM%"), "{s}");
    for g in ["g", "h"] {
        common::select(&mut a, &mut c, g);
        common::read_inspection(&mut a, &mut c, 2.0);
        // the limits form shows the current values, parsed from the files
        send(&mut a, &mut c, ch('e'));
        let s = common::screen(&a, 200, 50);
        assert!(matches!(a.mode, cgtop::app::Mode::Limits(_)), "{s}");
        assert_clean(&format!("limits form of {g}"), &s);
        assert!(!s.to_lowercase().contains("nan"), "{s}");
        send(&mut a, &mut c, key(KeyCode::Esc));
        // and the column chooser
        send(&mut a, &mut c, key(KeyCode::F(2)));
        assert_clean("column chooser", &common::screen(&a, 200, 50));
        send(&mut a, &mut c, key(KeyCode::Esc));
    }
}

/// A group name an attacker picks: a title-setting OSC, a clear-screen
/// CSI, a C1 CSI and a right-to-left override.
const EVIL: &str = "e\u{1b}]0;pwn\u{7}\u{1b}[2Jx\u{9b}31m\u{202e}gol";

#[test]
fn a_moves_old_group_in_the_log_file_is_the_exact_group_and_inert() {
    // the writer reads /proc/PID/cgroup; a process sat in a group the
    // attacker named. The log line has no control byte, and its old
    // field reads back (unfield) as exactly that group's path, as the
    // group field of a write to it does: not escaped twice
    let old = format!("lab/{EVIL}");
    let o = WriteOutcome::done(
        move_process(42, &GroupPath::new("batch"), false),
        Some(old.clone()),
        None,
    );
    let line = format_line(1_700_000_000, &o);
    assert_clean("log line", &line);
    let rest = line.split_once(" cgroup.procs ").unwrap().1;
    let old_field = rest.split_once(" to ").unwrap().0;
    assert_eq!(
        unfield(old_field),
        format!("/{old}").into_bytes(),
        "old field {old_field:?} of {line:?}"
    );
}

#[test]
fn a_moves_old_group_on_the_log_screen_is_escaped_once() {
    let t = common::lab_tree();
    let mount = common::directory_mount("lab");
    let (mut a, _c) = common::app_on(t.path(), mount, 200, 40);
    let old = format!("lab/{EVIL}");
    a.log = vec![LogEntry {
        unix_secs: 1_700_000_000,
        outcome: WriteOutcome::done(
            move_process(42, &GroupPath::new("batch"), false),
            Some(old.clone()),
            None,
        ),
    }];
    let mut c = common::collector(t.path());
    send(&mut a, &mut c, ch('L'));
    let s = common::screen(&a, 200, 40);
    assert_clean("log screen", &s);
    // shown as the tree shows that name: escaped once
    let shown = GroupPath::new(&old).to_string();
    assert!(s.contains(&shown), "{shown:?} not on\n{s}");
}

#[test]
fn a_paste_with_escapes_or_direction_marks_never_reaches_the_screen() {
    // a paste is text from anywhere (a web page, a chat): ESC, CSI, the
    // C1 CSI, a BEL, and a right-to-left override that makes "evil" read
    // "live" in a terminal that reorders text
    let t = common::lab_tree();
    let mount = common::directory_mount("lab");
    let (mut a, mut c) = common::app_on(t.path(), mount, 120, 30);
    let evil = "\u{1b}[2J\u{1b}]0;x\u{7}\u{9b}1m\u{202e}\u{200b}\u{feff}dd";
    // the filter
    send(&mut a, &mut c, ch('/'));
    send(&mut a, &mut c, Msg::Paste(evil.into()));
    let s = common::screen(&a, 120, 30);
    assert_clean("filter after a paste", &s);
    assert_eq!(a.filter.as_str(), "[2J]0;x1mdd");
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, key(KeyCode::Esc));
    // the limits form of a group
    common::select(&mut a, &mut c, "lab");
    common::read_inspection(&mut a, &mut c, 0.0);
    send(&mut a, &mut c, ch('e'));
    send(&mut a, &mut c, Msg::Paste(evil.into()));
    assert_clean("limits form after a paste", &common::screen(&a, 120, 30));
}

#[test]
fn a_group_replaced_by_a_symlink_between_refreshes_is_not_read_through() {
    // the recreation check: a group removed and its name made again is
    // listed again in the same refresh. The attacker makes the name again
    // as a symlink to a tree of their choosing: nothing of it is read
    // (a fixture's renamed directory still answers through its kept
    // descriptors, so "g" may stay listed with the old figures)
    let t = tree();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        &[
            ("cgroup.procs", ""),
            ("cpu.stat", "usage_usec 31337\n"),
            ("memory.current", "12345\n"),
            ("memory.max", "12345\n"),
        ],
    );
    let mut c = common::collector(t.path());
    c.set_extras(Column::extras(&Column::ALL));
    c.set_grade_limits(true);
    let r = common::refresh(&mut c, 0.0);
    assert!(r.snapshot.find(&GroupPath::new("g")).is_some());
    fs::rename(t.path().join("g"), t.path().join("g.old")).unwrap();
    symlink(outside.path(), t.path().join("g")).unwrap();
    for i in 1..4 {
        let r = common::refresh(&mut c, f64::from(i));
        for g in &r.snapshot.groups {
            assert_ne!(
                g.hot.memory_current,
                Some(12345),
                "read through the symlink: {g:?}"
            );
            assert_ne!(g.hot.memory_max, Some(cgtop::cgroupfs::Limit::Value(12345)));
        }
    }
    // and a name made again as a directory holding a FIFO where the old
    // group had a kept file: the same-refresh re-read does not hang
    fs::remove_file(t.path().join("g")).unwrap();
    fs::rename(t.path().join("g.old"), t.path().join("g")).unwrap();
    let r = common::refresh(&mut c, 5.0);
    assert!(r.snapshot.find(&GroupPath::new("g")).is_some());
    fs::rename(t.path().join("g"), t.path().join("g.gone")).unwrap();
    fs::create_dir(t.path().join("g")).unwrap();
    write(&t.path().join("g"), &[("cgroup.procs", "")]);
    mkfifo(&t.path().join("g/cpu.stat"));
    mkfifo(&t.path().join("g/memory.max"));
    let (tx, rx) = std::sync::mpsc::channel();
    let root = t.path().to_path_buf();
    std::thread::spawn(move || {
        let mut c = c;
        let r = common::refresh(&mut c, 6.0);
        let _ = tx.send(r.snapshot.groups.len());
        let _ = root;
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("a refresh hung on a recreated group's FIFO");
}

#[test]
fn a_move_into_or_back_to_an_escape_named_group_is_confirmed_inertly() {
    // the move picker lists the attacker's group, its confirmation names
    // it, and after the move the undo (back to the group the process
    // left, from /proc/PID/cgroup) names it again: never as raw bytes
    let t = tree();
    let evil = t.path().join(std::ffi::OsStr::new(EVIL));
    write(
        &evil,
        &[
            ("cgroup.procs", ""),
            ("cgroup.type", "domain\n"),
            ("cpu.stat", "usage_usec 1\n"),
            ("memory.current", "4096\n"),
        ],
    );
    write(
        t.path(),
        &[("cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n")],
    );
    let (mut a, mut c) = tui_on(t.path());
    common::select(&mut a, &mut c, "g");
    common::read_inspection(&mut a, &mut c, 2.0);
    common::set_processes(
        &mut a,
        vec![common::process(
            4_190_202,
            "root",
            0.0,
            12,
            "w\u{1b}]0;t\u{7}\u{202e}x",
        )],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    assert_clean("move picker", &common::screen(&a, 200, 50));
    common::type_text(&mut a, &mut c, "pwn");
    assert_clean("move picker filtered", &common::screen(&a, 200, 50));
    send(&mut a, &mut c, key(KeyCode::Enter));
    let s = common::screen(&a, 200, 50);
    assert_clean("move confirmation", &s);
    assert!(s.contains("pwn"), "no confirmation naming the group:\n{s}");
    send(&mut a, &mut c, key(KeyCode::Esc));
    // the move done, from that group to /g; then u
    let mv = move_process(4_190_202, &GroupPath::new("g"), false);
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![WriteOutcome::done(mv, Some(EVIL.into()), None)],
            unix_secs: 1_700_000_000,
        },
    );
    assert_clean("after the move", &common::screen(&a, 200, 50));
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('u'));
    let s = common::screen(&a, 200, 50);
    assert_clean("undo of the move", &s);
    assert!(matches!(a.mode, cgtop::app::Mode::Confirm(_)), "{s}");
    assert!(
        s.contains("into /e\\e]0;pwn\\a\\e[2Jx\\u{9b}31m\\u{202e}gol"),
        "the undo does not name the group the process left, escaped once:\n{s}"
    );
}

#[test]
fn an_unreadable_extra_file_is_reported_once_in_the_detail() {
    // the scan reads memory.max and the pressure files for the columns,
    // the detail reads them too: a FIFO there is one error line, not two
    let t = tree();
    fs::remove_file(t.path().join("g/memory.max")).unwrap();
    plant_endless_extras(&t.path().join("g"));
    let (mut a, mut c) = tui_on(t.path());
    common::select(&mut a, &mut c, "g");
    common::read_inspection(&mut a, &mut c, 2.0);
    let s = common::screen(&a, 200, 50);
    for f in ["memory.max: ", "io.pressure: ", "cpu.pressure: "] {
        assert_eq!(s.matches(f).count(), 1, "{f}\n{s}");
    }
}
