//! The settings file through the real binary: a bad file is one line on
//! stderr with the file, the line and the key, exit 2; --no-config reads
//! nothing; the command line wins over the file; the column chooser's
//! save (in tmux) is what the next start shows.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::tmux::Tmux;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `cgtop -b -n 1 --root FIXTURE ARGS` with XDG_CONFIG_HOME at `xdg`.
fn run(xdg: &Path, args: &[&str]) -> Output {
    let root = common::fixture("pure-v2-systemd");
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["-b", "-n", "1", "--root"])
        .arg(&root)
        .args(args)
        .env("XDG_CONFIG_HOME", xdg)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("run cgtop")
}

/// A private XDG_CONFIG_HOME whose cgtop/config.toml says `text`.
fn xdg_with(text: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let dir = d.path().join("cgtop");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
    d
}

fn titles(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let head = out.lines().find(|l| l.starts_with("GROUP")).unwrap();
    head.split_whitespace().map(str::to_owned).collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_file_chooses_the_columns_and_their_order() {
    let d = xdg_with("columns = [\"pids\", \"cpu\", \"psi\"]\n");
    assert_eq!(
        titles(&run(d.path(), &[])),
        ["GROUP", "PIDS", "CPU%", "PSI%", "ST"]
    );
    // the command line wins, in its own order
    assert_eq!(
        titles(&run(d.path(), &["--columns", "mem,cpu"])),
        ["GROUP", "MEM", "CPU%", "ST"]
    );
    // --no-config: the built-in five
    assert_eq!(
        titles(&run(d.path(), &["--no-config"])),
        ["GROUP", "CPU%", "MEM", "READ/s", "WRITE/s", "PIDS", "ST"]
    );
}

#[test]
fn a_bad_file_is_one_error_with_the_line_and_the_key() {
    let d = xdg_with("interval = 2\ncolumns = [\"cpu\"]\nintervall = 3\n");
    let file = d.path().join("cgtop/config.toml");
    let o = run(d.path(), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with(&format!(
            "cgtop: config {} line 3: key `intervall`: unknown field `intervall`",
            file.display()
        )),
        "{e}"
    );
    assert!(o.stdout.is_empty());
    // --no-config does not read it
    assert!(run(d.path(), &["--no-config"]).status.success());
    // --config FILE: that one, which must exist
    let o = run(d.path(), &["--config", "/nonexistent/cgtop.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "cgtop: config /nonexistent/cgtop.toml: no such file\n"
    );
    let good = xdg_with("columns = [\"mem\"]\n");
    let o = run(
        d.path(),
        &[
            "--config",
            good.path().join("cgtop/config.toml").to_str().unwrap(),
        ],
    );
    assert_eq!(titles(&o), ["GROUP", "MEM", "ST"]);
}

#[test]
fn every_kind_of_bad_value() {
    let cases: &[(&str, &str)] = &[
        (
            "interval = 0.01\n",
            "line 1: key `interval`: 0.01 s is out of range (0.1 to 3600 seconds)",
        ),
        (
            "interval = \"fast\"\n",
            "line 1: key `interval`: a number of seconds (2 or 0.5)",
        ),
        (
            "\ncolumns = [\"cpu\", \"gpu\"]\n",
            "line 2: key `columns`: no column \"gpu\"",
        ),
        (
            "columns = [\"cpu\", \"cpu\"]\n",
            "line 1: key `columns`: \"cpu\" is named twice",
        ),
        (
            "sort = \"swap\"\n",
            "line 1: key `sort`: \"swap\" is not among the columns shown",
        ),
        (
            "sort = \"colour\"\n",
            "line 1: key `sort`: no column \"colour\"",
        ),
        ("sort_descending = 1\n", "line 1: key `sort_descending`: "),
        ("[units]\ncpu = \"socket\"\n", "line 2: key `units.cpu`: "),
        (
            "[units]\nsize = \"binary\"\n",
            "line 2: key `units.size`: unknown field",
        ),
        (
            "[colours]\nhot = \"pink\"\n",
            "line 2: key `colours.hot`: no colour \"pink\"",
        ),
        (
            "[keys.main]\nfreeze = \"K\"\n",
            "line 2: key `keys.main.freeze`: K is bound to both freeze and kill in main",
        ),
        (
            "[keys.main]\nfrieze = \"F\"\n",
            "line 2: key `keys.main.frieze`: no action",
        ),
        (
            "[keys.nope]\nfreeze = \"F\"\n",
            "line 2: key `keys.nope.freeze`: no screen",
        ),
        (
            "[keys.main]\nfreeze = \"hyper-f\"\n",
            "line 2: key `keys.main.freeze`: no key",
        ),
        ("[keys]\nmain = 3\n", "line 2: key `keys.main`: "),
        // the confirmation's go-ahead on the action's own key: `k k` killed
        (
            "[keys.main]\nup = \"up\"\nkill = \"k\"\n[keys.confirm]\naccept = [\"k\", \"y\"]\n",
            "line 5: key `keys.confirm.accept`: k goes ahead (accept) in confirm and is kill in \
             main",
        ),
        (
            "[keys.confirm]\nthrough_systemd = \"f\"\n",
            "line 2: key `keys.confirm.through_systemd`: f goes ahead (through_systemd) in \
             confirm and is freeze in main",
        ),
        (
            "[keys.main]\nremove_group = \"y\"\n",
            "line 2: key `keys.main.remove_group`: y goes ahead (accept) in confirm and is \
             remove_group in main",
        ),
        ("columns = [\n", "line "),
    ];
    for (text, want) in cases {
        let d = xdg_with(text);
        let o = run(d.path(), &[]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {e}");
        let file = d.path().join("cgtop/config.toml");
        let head = format!("cgtop: config {} {want}", file.display());
        assert!(e.starts_with(&head), "{text:?}:\n{e}\nwanted {head}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_huge_columns_list_is_refused_before_its_names_are_read() {
    // 100,000 names took 22 s (a line number found by a scan of the text
    // for each name) before "named twice"
    let names = vec!["\"cpu\""; 100_000].join(",\n");
    let d = xdg_with(&format!("columns = [\n{names}\n]\n"));
    let t0 = std::time::Instant::now();
    let o = run(d.path(), &[]);
    let took = t0.elapsed();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("line 1: key `columns`: 100000 names, and there are 9 columns"),
        "{e}"
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}

#[test]
fn the_command_line_wins_over_the_file() {
    // -d over `interval`
    let d = xdg_with("interval = 2\n");
    let o = run(d.path(), &["-d", "0.5"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("interval 0.5 s"), "{out}");
    let o = run(d.path(), &[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("interval 2.0 s"), "{out}");
}

#[test]
fn a_hostile_file_is_refused() {
    let d = xdg_with("");
    let file = d.path().join("cgtop/config.toml");
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/etc/shadow", &file).unwrap();
    let o = run(d.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is a symbolic link"), "{}", stderr(&o));
    std::fs::remove_file(&file).unwrap();
    // a FIFO: refused, no hang waiting for a writer
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &file,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let o = run(d.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a regular file"),
        "{}",
        stderr(&o)
    );
}

/// F2, move PIDS to the front, save (rebound to `w` by the file itself:
/// the binary's keys are the file's): the file says so, keeps its own
/// lines, and the next start shows that order.
#[test]
fn the_chooser_saves_and_the_next_start_reads_it() {
    let d = xdg_with("[keys.columns]\nsave = \"w\"\n");
    let Some(term) = Tmux::shell_or_skip(140, 40) else {
        return;
    };
    let root = common::fixture("pure-v2-systemd");
    let start = format!(
        "XDG_CONFIG_HOME={} {} --root {}",
        d.path().display(),
        env!("CARGO_BIN_EXE_cgtop"),
        root.display()
    );
    term.send(&[&start, "Enter"]);
    term.wait_for("GROUP");
    term.send(&["F2"]);
    term.wait_for("GROUP always shows");
    // PIDS is the fifth: down four, then `[` four times
    term.send(&["Down", "Down", "Down", "Down", "[", "[", "[", "["]);
    // the border names the rebound key
    let s = term.wait_for("w save");
    assert!(!s.contains("s save"), "{s}");
    // `s` is nothing now
    term.send(&["s"]);
    term.send(&["w"]);
    let file = d.path().join("cgtop/config.toml");
    let s = term.wait_for("columns saved to");
    assert!(s.contains("cgtop/config.toml"), "{s}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "columns = [\"pids\", \"cpu\", \"mem\", \"read\", \"write\"]\n\n[keys.columns]\nsave = \"w\"\n"
    );
    term.send(&["q"]);
    term.wait_for("$ ");
    // the next start: PIDS first
    term.send(&[&start, "Enter"]);
    let s = term.wait_until("PIDS before CPU%", common::tmux::WAIT, |s| {
        s.lines().any(|l| {
            l.contains("GROUP")
                && l.find("PIDS")
                    .zip(l.find("CPU%"))
                    .is_some_and(|(p, c)| p < c)
        })
    });
    assert!(s.contains("PIDS"), "{s}");
    term.send(&["q"]);
}

/// A user who may not read the default settings place (`HOME=/root` under
/// `setpriv --reuid=65534`, or any HOME of another user's) runs with the
/// defaults, said once on stderr; only `--config FILE` that cannot be read
/// is fatal. Against the real binary, as uid 65534.
#[test]
fn an_unreadable_default_place_is_no_settings_file() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root (to run the binary as uid 65534 with setpriv)");
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        println!("skipped: no setpriv (util-linux) on this host");
        return;
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_cgtop"));
    let root = common::fixture("pure-v2-systemd");
    let as_nobody = |home: &Path, args: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin)
            .args(["-b", "-n", "1", "--root"])
            .arg(&root)
            .args(args)
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .output()
            .expect("run cgtop through setpriv")
    };
    // the binary and the fixture must be reachable by uid 65534
    let probe = as_nobody(Path::new("/"), &["--no-config"]);
    if !probe.status.success() {
        println!(
            "skipped: uid 65534 cannot run {} on {} here: {}",
            bin.display(),
            root.display(),
            stderr(&probe)
        );
        return;
    }
    // a home of root's that others may not enter, made here (and /root as
    // the issue ran it, where it is closed to others)
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut homes = vec![private.path().to_path_buf()];
    let root_home = std::fs::metadata("/root").map(|m| m.permissions().mode() & 0o005);
    if root_home.is_ok_and(|others| others == 0) {
        homes.push("/root".into());
    }
    for home in &homes {
        let o = as_nobody(home, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{}: {err}", home.display());
        assert!(String::from_utf8_lossy(&o.stdout).contains("GROUP"));
        let want = format!(
            "settings file {}/.config/cgtop/config.toml not read",
            home.display()
        );
        assert_eq!(err.matches(&want).count(), 1, "{err}");
        assert!(err.contains("Permission denied"), "{err}");
        // named on the command line, the same file is an error
        let named = home.join("cgtop.toml");
        let o = as_nobody(home, &["--config", named.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("Permission denied"), "{}", stderr(&o));
    }
}
