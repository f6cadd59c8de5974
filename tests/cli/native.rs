//! The man page and the shell completions (issue 10): the committed copies
//! in assets/ are what `cgtop man` and `cgtop completions SHELL` print
//! now (regenerate with `UPDATE_NATIVE=1 cargo test --test cli native::` and
//! review the diff), the page renders without a warning, and each shell
//! really completes cgtop's options and subcommands from its script.
//! A shell that is not installed is a skip ("skipped: ...") here and a
//! failure under CI=true, where .ci/run installs zsh and fish.

#![allow(clippy::unwrap_used)]

use cgtop::cli::native::{completion_script, man_page, Shell};
use std::path::{Path, PathBuf};
use std::process::Command;

fn asset(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(rel)
}

fn script_file(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash => "completions/cgtop.bash",
        Shell::Zsh => "completions/_cgtop",
        Shell::Fish => "completions/cgtop.fish",
    }
}

/// Compares (or, with UPDATE_NATIVE=1, rewrites) a committed copy.
fn check_current(rel: &str, want: &[u8]) {
    let path = asset(rel);
    if std::env::var_os("UPDATE_NATIVE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, want).unwrap();
        return;
    }
    let have = std::fs::read(&path).unwrap_or_default();
    assert!(
        have == want,
        "assets/{rel} is not what cgtop makes now: run \
         UPDATE_NATIVE=1 cargo test --test cli native:: and review the diff"
    );
}

#[test]
fn committed_man_page_is_current() {
    check_current("man/cgtop.1", &man_page().unwrap());
}

#[test]
fn committed_completions_are_current() {
    for sh in Shell::ALL {
        check_current(script_file(sh), &completion_script(sh));
    }
}

/// The real binary prints the same page and scripts (what the README's
/// install lines run).
#[test]
fn the_binary_prints_them() {
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let out = Command::new(bin).arg("man").output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, man_page().unwrap());
    for sh in Shell::ALL {
        let out = Command::new(bin)
            .args(["completions", sh.name()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", sh.name());
        assert_eq!(out.stdout, completion_script(sh), "{}", sh.name());
    }
    let out = Command::new(bin)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}

/// false (after printing the skip) when `cmd` is missing outside CI.
fn need(cmd: &str) -> bool {
    if have(cmd) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{cmd} is not installed, and CI must run this test (.ci/run installs it)"
    );
    println!("skipped: {cmd} is not installed");
    false
}

#[test]
fn man_renders_without_warnings() {
    if !need("man") {
        return;
    }
    let page = std::env::temp_dir().join(format!("cgtop-test-{}.1", std::process::id()));
    std::fs::write(&page, man_page().unwrap()).unwrap();
    let out = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&page)
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&page);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "man warned:\n{stderr}");
    // man overstrikes for bold when stdout is not a terminal: "N\x08N"
    let mut text = String::new();
    for c in String::from_utf8_lossy(&out.stdout).chars() {
        if c == '\x08' {
            text.pop();
        } else {
            text.push(c);
        }
    }
    for want in [
        "NAME",
        "SYNOPSIS",
        "--openmetrics",
        "cgtop serve",
        "cgtop export-log",
        "cgtop completions",
        "KEYS",
        "Column chooser",
        "EXIT STATUS",
        "XDG_CONFIG_HOME",
    ] {
        assert!(text.contains(want), "the page lacks {want:?}:\n{text}");
    }
}

/// What the shell offers after `words` (the last one being completed).
fn bash_complete(words: &str) -> String {
    let script = asset(script_file(Shell::Bash));
    let prog = format!(
        "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
         [[ $COMP_LINE == *' ' ]]; COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; \
         _cgtop cgtop \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &prog])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completes_options_and_subcommands() {
    if !need("bash") {
        return;
    }
    let got = bash_complete("cgtop --openm");
    assert!(got.lines().any(|l| l == "--openmetrics"), "{got:?}");
    let got = bash_complete("cgtop se");
    assert!(got.lines().any(|l| l == "serve"), "{got:?}");
    let got = bash_complete("cgtop completions ''");
    for sh in ["bash", "zsh", "fish"] {
        assert!(got.lines().any(|l| l == sh), "{sh} not in {got:?}");
    }
    let got = bash_complete("cgtop record --max");
    assert!(got.lines().any(|l| l == "--max-size"), "{got:?}");
}

#[test]
fn zsh_loads_the_script() {
    if !need("zsh") {
        return;
    }
    // zsh -n parses; loading it under compinit defines the function
    let script = asset(script_file(Shell::Zsh));
    let st = Command::new("zsh").arg("-n").arg(&script).status().unwrap();
    assert!(st.success(), "zsh -n rejected the script");
    let prog = format!(
        "autoload -U compinit && compinit -u -D; source {}; whence -w _cgtop",
        script.display()
    );
    let out = Command::new("zsh")
        .args(["-f", "-c", &prog])
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("_cgtop: function"),
        "{text:?} {:?}",
        out.stderr
    );
}

#[test]
fn fish_completes_options_and_subcommands() {
    if !need("fish") {
        return;
    }
    let script = asset(script_file(Shell::Fish));
    let run = |line: &str| {
        let prog = format!("source {}; complete -C '{line}'", script.display());
        let out = Command::new("fish")
            .args(["--no-config", "-c", &prog])
            .env("HOME", std::env::temp_dir())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let got = run("cgtop --openm");
    assert!(
        got.lines().any(|l| l.starts_with("--openmetrics")),
        "{got:?}"
    );
    let got = run("cgtop se");
    assert!(got.lines().any(|l| l.starts_with("serve")), "{got:?}");
    let got = run("cgtop completions ");
    assert!(got.lines().any(|l| l.starts_with("zsh")), "{got:?}");
}
