//! Every identity source's hostile text through every output of the real
//! binary: logind's session record (USER, TTY, SERVICE, the C-escaped
//! REMOTE_HOST and REMOTE_USER, which come from whoever logs in and from
//! reverse DNS), logind's user record, machined's record, /etc/passwd and
//! docker's record, each carrying escapes, C1 controls, bidi overrides
//! and isolates, NUL and CR. `-b`, `-b --flat`, `--json`,
//! `--openmetrics`, and a recording's replay (`-b` and `--json`) must
//! print none of those characters raw. `--root` tree and
//! `CGTOP_IDENTITY_ROOT` in temporary directories.

use super::identities::{groups, put, A};
use std::process::{Command, Stdio};

/// OSC title, BEL, CSI as one C1 byte, RLO, LRI, clear screen, CR.
const P: &str = "\u{1b}]0;PWN\u{7}\u{9b}31m\u{202e}\u{2066}\u{1b}[2J\r";
/// The same in logind's C escapes.
const P_C: &str = r"\x1b]0;PWN\x07\xc2\x9b31m\xe2\x80\xae\xe2\x81\xa6\x1b[2J\r\x00";

/// Characters that must never reach the output raw.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
        })
        .collect()
}

fn cgtop(args: &[&str], tree: &std::path::Path, ids: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .arg("--root")
        .arg(tree)
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn hostile_texts_of_every_identity_source_reach_no_output_raw() {
    let tree = groups(&[
        format!("system.slice/docker-{A}.scope"),
        "user.slice/user-1001.slice/session-7.scope".to_owned(),
        "user.slice/user-1001.slice/user@1001.service".to_owned(),
        "user.slice/user-1002.slice".to_owned(),
        "machine.slice/machine-evil.scope".to_owned(),
    ]);
    let ids = tempfile::tempdir().unwrap();
    let i = ids.path();
    put(
        i,
        "run/systemd/sessions/7",
        &format!(
            "UID=1001\nUSER={P}\nSCOPE=session-7.scope\nTTY={P}\nSERVICE={P}\n\
             REMOTE_HOST=h{P_C}\nREMOTE_USER=u{P_C}\n"
        ),
    );
    put(i, "run/systemd/users/1001", &format!("NAME={P}\n"));
    put(
        i,
        "run/systemd/machines/evil",
        &format!("NAME={P}\nSCOPE=machine-evil.scope\nCLASS=container\nSERVICE={P}\nROOT=/{P}\n"),
    );
    // user 1002 has no logind record: named from /etc/passwd
    put(
        i,
        "etc/passwd",
        &format!("x{P}:x:1002:1002:{P}:/home/x:/bin/sh\n"),
    );
    put(
        i,
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &serde_json::json!({
            "ID": A,
            "Name": format!("/n{P}"),
            "Config": {"Image": format!("img{P}"), "Labels": {
                format!("k{P}"): format!("v{P}"),
                "com.docker.compose.project": P,
                "com.docker.compose.service": P,
            }}
        })
        .to_string(),
    );
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("r.rec");
    let rec_s = rec.to_str().unwrap();
    let mut outputs = vec![
        ("-b", cgtop(&["-b", "-n", "2", "-d", "0.1"], tree.path(), i)),
        (
            "-b --flat",
            cgtop(&["-b", "--flat", "-n", "2", "-d", "0.1"], tree.path(), i),
        ),
        (
            "--json",
            cgtop(&["--json", "-n", "2", "-d", "0.1"], tree.path(), i),
        ),
        ("--openmetrics", cgtop(&["--openmetrics"], tree.path(), i)),
    ];
    cgtop(
        &["record", "-o", rec_s, "-n", "3", "-d", "0.1"],
        tree.path(),
        i,
    );
    for (what, json) in [("replay -b", false), ("replay --json", true)] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cgtop"));
        c.arg("replay").arg(&rec).stdin(Stdio::null());
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        outputs.push((what, String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    for (what, text) in &outputs {
        let bad = raw_controls(text);
        assert!(bad.is_empty(), "{what} printed {bad:?} raw:\n{text}");
    }
    // and the names did arrive (escaped), so the check saw them
    let json = &outputs[2].1;
    for shown in [r"\\e]0;PWN\\a", r"\\u{202e}"] {
        assert!(json.contains(shown), "{shown} not in --json: {json}");
    }
    assert!(outputs[0].1.contains("session 7"), "{}", outputs[0].1);
}
