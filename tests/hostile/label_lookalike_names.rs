//! A group's kernel name against the identity labels cgtop makes. Anyone
//! a subtree is delegated to names its groups, spaces included: a group
//! named `docker 046c7a5b3d2e` (or `web-1 · docker 046c7a5b3d2e`) must
//! not read as the row of the container whose group is
//! `docker-046c7a5b3d2e….scope`, labelled `docker 046c7a5b3d2e`. Every
//! label holds a space, a kernel name is shown with each space as
//! `\u{20}`: the two never read alike. Real kernel groups in the
//! sandbox, the real binary in `-b` and in the TUI (tmux).

use super::common::batch;
use crate::common::sandbox::Sandbox;
use crate::common::tmux::Tmux;
use std::process::Command;

const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
/// What cgtop names the container `docker-<ID>.scope` from its name alone.
const LABEL: &str = "docker 046c7a5b3d2e";
/// The long form a container with a name has.
const LONG: &str = "web-1 · docker 046c7a5b3d2e";

/// The sandbox with `top/` holding the container's group and two groups
/// named like its labels, or `None` (skipped).
fn look_alikes() -> Option<Sandbox> {
    let sb = Sandbox::or_skip()?;
    sb.mkdir(&format!("top/docker-{ID}.scope"));
    sb.mkdir(&format!("top/{LABEL}"));
    sb.mkdir(&format!("top/{LONG}"));
    Some(sb)
}

/// The lines of `text` that hold `what`.
fn lines_with<'a>(text: &'a str, what: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(what)).collect()
}

#[test]
fn a_group_named_like_a_label_reads_apart_in_batch() {
    let Some(sb) = look_alikes() else {
        return;
    };
    // no runtime's files: the container is named from its group's name
    let ids = tempfile::tempdir().unwrap();
    let text = batch::stdout_of(
        batch::by_name_once(&[])
            .arg(format!("{}/top", sb.rel))
            .env("CGTOP_IDENTITY_ROOT", ids.path()),
    );
    // the container's row alone reads as the label
    assert_eq!(
        lines_with(&text, LABEL).len(),
        1,
        "more than the container's row reads `{LABEL}`:\n{text}"
    );
    assert!(
        lines_with(&text, "web-1 ").is_empty(),
        "a kernel name reads as a container's long label:\n{text}"
    );
    // the look-alikes are there, their spaces escaped
    assert_eq!(
        lines_with(&text, r"  docker\u{20}046c7a5b3d2e").len(),
        1,
        "{text}"
    );
    assert_eq!(
        lines_with(&text, r"web-1\u{20}·\u{20}docker\u{20}046c7a5b3d2e").len(),
        1,
        "{text}"
    );
    // `w` off (`--json`'s data form aside): the kernel's names, escaped
    let json = batch::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["--no-config", "--json", "--brief", "-n", "1", "-d", "0.1"])
            .arg(format!("{}/top", sb.rel))
            .env("CGTOP_IDENTITY_ROOT", ids.path()),
    );
    let v: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let paths: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["path"].as_str())
        .collect();
    // JSON is data: the name's bytes, a space as a space (the label is
    // the `identity` field), never `\u{20}` escaped twice
    assert!(
        paths.iter().any(|p| p.ends_with(&format!("/top/{LABEL}"))),
        "{paths:?}"
    );
}

#[test]
fn a_group_named_like_a_label_reads_apart_in_the_view() {
    if !crate::common::have("tmux") {
        println!("skipped: tmux is not installed");
        return;
    }
    let Some(sb) = look_alikes() else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let term = Tmux::run(
        &format!(
            "CGTOP_IDENTITY_ROOT={0} XDG_CONFIG_HOME={1} XDG_STATE_HOME={1} {2} -d 0.3 --sort name {3}/top",
            ids.path().display(),
            xdg.path().display(),
            env!("CARGO_BIN_EXE_cgtop"),
            sb.rel
        ),
        120,
        30,
    );
    term.wait_for(r"docker\u{20}046c7a5b3d2e");
    let screen = term.wait_for(r"web-1\u{20}·\u{20}docker\u{20}046c7a5b3d2e");
    assert_eq!(
        lines_with(&screen, LABEL).len(),
        1,
        "more than the container's row reads `{LABEL}`:\n{screen}"
    );
    assert!(
        lines_with(&screen, "web-1 ").is_empty(),
        "a kernel name reads as a container's long label:\n{screen}"
    );
    // the filter finds the group by its name as typed, with a space, and
    // hides the others
    term.send(&["/"]);
    term.type_text("web-1 ·");
    term.wait_until(
        "the filter `web-1 ·` keeping the group named so alone",
        std::time::Duration::from_secs(10),
        |s| {
            s.contains(r"web-1\u{20}·\u{20}docker")
                && !s.contains("──docker")
                && !s.contains("no group matches")
        },
    );
    term.send(&["Escape", "q"]);
}

/// The label typed as the container's row shows it, space and all, finds
/// the container: typed with a space it matched only the kernel names
/// spelt so (the look-alikes, `docker\u{20}046c7a5b3d2e` on screen) and
/// hid the container, the one group the operator was looking at.
#[test]
fn a_label_typed_as_shown_finds_its_group_beside_the_look_alikes() {
    let Some(sb) = look_alikes() else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    for typed in [LABEL, "docker 046c", "DOCKER 046C7A5B3D2E"] {
        let text = batch::stdout_of(
            batch::by_name_once(&["--filter", typed])
                .arg(format!("{}/top", sb.rel))
                .env("CGTOP_IDENTITY_ROOT", ids.path()),
        );
        assert_eq!(
            lines_with(&text, &format!("  {LABEL}  ")).len(),
            1,
            "`--filter {typed}` hid the container's row:\n{text}"
        );
        assert_eq!(
            lines_with(&text, r"  docker\u{20}046c7a5b3d2e").len(),
            1,
            "{text}"
        );
    }
}
