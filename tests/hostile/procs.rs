//! Hostile inputs: process names, command lines and the mount path
//! (issue 7, items 5 and 6).
//!
//! Any user names their own processes: exec'ing a file with an escape
//! sequence or a byte that is not UTF-8 in its name sets the process's
//! name (comm) and its first argument. The process list must show those
//! bytes as visible escapes, never raw and never as U+FFFD (which makes
//! two different command lines look alike). A `--root` directory name is
//! outside text too: no message may carry its ESC to the terminal.

use crate::common::{app_on, ch, fixture, key, lab_tree, pure_v2_mount, screen, select, send};
use cgtop::app::{self, Msg};
use cgtop::source::collector::Collected;
use crossterm::event::KeyCode;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// A copy of `/bin/NAME` in `dir` under the file name `as_name` (bytes).
fn copy_named(dir: &Path, tool: &str, as_name: &[u8]) -> PathBuf {
    let to = dir.join(OsStr::from_bytes(as_name));
    std::fs::copy(Path::new("/bin").join(tool), &to).unwrap();
    to
}

/// Ends a child this test started, by its pid.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The state letter of a process (Z for a zombie), from the bytes of
/// /proc/PID/stat (its name need not be UTF-8).
fn state(pid: u32) -> Option<char> {
    let s = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let end = s.iter().rposition(|&b| b == b')')?;
    s.get(end + 2).map(|&b| char::from(b))
}

#[test]
fn process_names_and_command_lines_show_escaped() {
    let bin = tempfile::tempdir().unwrap();
    // a running process: its argv[0] holds a newline, an OSC title
    // sequence and a bad byte
    let sleeper = copy_named(bin.path(), "sleep", b"s\xff\x1b]0;x\x07");
    let run = Reaped(
        Command::new(&sleeper)
            .arg0(OsStr::from_bytes(b"a\nb\x1b]0;pwned\x07\xff"))
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // a zombie has no command line: the list shows its name, which came
    // from the file it exec'd
    let quitter = copy_named(bin.path(), "true", b"z\xff\x1b[2J");
    let zombie = Reaped(Command::new(&quitter).stdin(Stdio::null()).spawn().unwrap());
    let t0 = Instant::now();
    while state(zombie.0.id()) != Some('Z') {
        assert!(t0.elapsed() < Duration::from_secs(10), "no zombie");
        sleep(Duration::from_millis(20));
    }
    // and the exec of the sleeper is done once its name is the file's
    let t0 = Instant::now();
    while std::fs::read(format!("/proc/{}/comm", run.0.id())).unwrap() != b"s\xff\x1b]0;x\x07\n" {
        assert!(t0.elapsed() < Duration::from_secs(10), "sleep not exec'd");
        sleep(Duration::from_millis(20));
    }

    let tree = lab_tree();
    std::fs::write(
        tree.path().join("batch/cgroup.procs"),
        format!("{}\n{}\n", run.0.id(), zombie.0.id()),
    )
    .unwrap();
    let (mut a, mut c) = app_on(tree.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, "batch");
    // the inspection as the collector reads it, processes from the real /proc
    // (common::read_inspection leaves them out)
    let f = c.read_inspection(a.selected.as_ref().unwrap(), None, 0.0);
    assert_eq!(f.processes.len(), 2, "{:?}", f.processes);
    app::update(&mut a, Msg::Collected(Collected::Inspection(Box::new(f))));
    send(&mut a, &mut c, ch('4'));
    let s = screen(&a, 120, 40);
    assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s}");
    assert!(!s.contains('\u{fffd}'), "a bad byte shown as U+FFFD: {s}");
    assert!(s.contains("a\\nb\\e]0;pwned\\a\\xff 30"), "{s}");
    assert!(s.contains("[z\\xff\\e[2J]"), "{s}");

    // the move dialog names the process the same way
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    let s = screen(&a, 120, 40);
    assert!(!s.contains('\u{1b}') && !s.contains('\u{fffd}'), "{s}");
    assert!(s.contains("(a\\nb\\e]0;pwned\\a\\xff 30)"), "{s}");
}

#[test]
fn a_long_command_line_is_cut_and_marked() {
    // one argument may be at most 128 KiB (MAX_ARG_STRLEN); sleep
    // does not mind its own name
    let long = "y".repeat(100_000);
    let run = Reaped(
        Command::new("/bin/sleep")
            .arg0(&long)
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    let p = loop {
        let p = cgtop::source::procs::ProcReader::default().read(&[run.0.id()], 0.0);
        if p.first().is_some_and(|p| p.cmdline.contains("yyy")) {
            break p;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "sleep not exec'd");
        sleep(Duration::from_millis(20));
    };
    let line = &p[0].cmdline;
    assert!(line.starts_with("yyyy"), "{}", &line[..40]);
    assert!(line.ends_with('…'), "cut without a mark");
    assert!(line.len() <= 8 * 1024, "{} bytes kept", line.len());
}

fn cgtop(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn no_escape(o: &Output) {
    assert!(!o.stdout.contains(&0x1b), "ESC on stdout");
    assert!(!o.stderr.contains(&0x1b), "ESC on stderr");
    assert!(!o.stderr.contains(&0x07), "BEL on stderr");
}

const ROOT_NAME: &[u8] = b"x\x1b]0;pwned\x07\xff";
const ROOT_SHOWN: &str = "x\\e]0;pwned\\a\\xff";

#[test]
fn a_root_named_with_escapes_never_reaches_the_terminal_raw() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(OsStr::from_bytes(ROOT_NAME));
    let b = OsStr::new("-b");
    let n = [OsStr::new("-n"), OsStr::new("1")];
    let run = |root: &Path| cgtop(&[OsStr::new("--root"), root.as_os_str(), b, n[0], n[1]]);

    // not there: exit 2, one escaped line
    let o = run(&dir);
    no_escape(&o);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr.clone()).unwrap();
    assert!(err.contains(ROOT_SHOWN), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    // there, but not a hierarchy
    std::fs::create_dir(&dir).unwrap();
    let o = run(&dir);
    no_escape(&o);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr.clone()).unwrap();
    assert!(
        err.contains(&format!("{ROOT_SHOWN} is not a cgroup2")),
        "{err}"
    );

    // a start group that is not there, under it
    std::fs::write(dir.join("cgroup.procs"), "").unwrap();
    let o = cgtop(&[
        OsStr::new("--root"),
        dir.as_os_str(),
        b,
        n[0],
        n[1],
        OsStr::new("nope"),
    ]);
    no_escape(&o);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr.clone()).unwrap();
    assert!(err.contains(&format!("{ROOT_SHOWN} (give a path")), "{err}");

    // a real tree there: read, and the header names it escaped
    std::fs::remove_dir_all(&dir).unwrap();
    copy_tree(&fixture("pure-v2-systemd"), &dir);
    let o = run(&dir);
    no_escape(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.lines().next().unwrap().contains(ROOT_SHOWN), "{out}");
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}
