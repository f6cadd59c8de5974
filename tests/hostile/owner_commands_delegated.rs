//! A subtree delegated to a user outside any `user@UID.service` (a
//! service with `Delegate=yes` and `User=`, or a directory chowned to
//! them) holds groups the user names, and their rootless podman's store
//! (which they write) names those containers. A confirmation must then
//! not offer root's `podman pause <name>`: run by the operator (root),
//! that names root's own container of that name, not the user's; nor
//! may a group the user named `libpod-<id>.scope` after root's container
//! give that id to `podman pause` (its name alone). Real
//! kernel and the real binary in tmux: `cgtop-test-<pid>-<n>` in cgroup2
//! chowned to an unused uid, its `libpod-<id>.scope`, the store and
//! /etc/passwd under `CGTOP_IDENTITY_ROOT`; the freeze is cancelled, so
//! nothing is written. Without root, cgroup2 or tmux: `skipped: <reason>`.

use super::identities::{put, B};
use crate::common::sandbox::Sandbox;
use crate::common::tmux::Tmux;
use std::time::Duration;

/// A uid no account on a test machine has.
const USER: u32 = 64_124;

/// The screen's text with the dialog's borders and line breaks taken out
/// (a command may wrap).
fn flat(screen: &str) -> String {
    screen
        .lines()
        .flat_map(|l| l.split(['│', '┌', '┐', '└', '┘']))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `cgtop GROUP` in tmux with the identity sources under `ids`: the
/// freeze confirmation of the first group below the start (selected with
/// one Down once `shown` is on screen), cancelled; the dialog's text.
fn freeze_confirmation(sb: &Sandbox, ids: &std::path::Path, shown: &str) -> String {
    let xdg = tempfile::tempdir().unwrap();
    let term = Tmux::run(
        &format!(
            "XDG_CONFIG_HOME={} XDG_STATE_HOME={} CGTOP_IDENTITY_ROOT={} {} -d 0.3 {}",
            xdg.path().display(),
            xdg.path().display(),
            ids.display(),
            env!("CARGO_BIN_EXE_cgtop"),
            sb.rel
        ),
        160,
        45,
    );
    term.wait_for(shown);
    term.send(&["Down"]);
    std::thread::sleep(Duration::from_millis(300));
    term.send(&["f"]);
    let screen = term.wait_for("go ahead");
    term.send(&["Escape"]);
    term.send(&["q"]);
    flat(&screen)
}

/// The sandbox's top and `sub` (made) chowned to [`USER`] with their
/// cgroup.procs, as a delegation does; or `None` after `skipped:`.
fn delegated(sub: &str) -> Option<Sandbox> {
    let sb = Sandbox::or_skip()?;
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        println!("skipped: tmux is not installed");
        return None;
    }
    sb.mkdir(sub);
    for d in [sb.dir(""), sb.dir(sub)] {
        std::os::unix::fs::chown(&d, Some(USER), Some(USER)).unwrap();
        std::os::unix::fs::chown(d.join("cgroup.procs"), Some(USER), Some(USER)).unwrap();
    }
    Some(sb)
}

#[test]
fn a_users_rootless_container_outside_their_manager_gets_no_root_podman_command() {
    let Some(sb) = delegated(&format!("libpod-{B}.scope")) else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        "etc/passwd",
        &format!("ci:x:{USER}:{USER}::/home/ci:/bin/sh\n"),
    );
    put(
        ids.path(),
        "home/ci/.local/share/containers/storage/overlay-containers/containers.json",
        &serde_json::json!([{"id": B, "names": ["prod-db"], "image": "", "layer": ""}]).to_string(),
    );
    let home = ids.path().join("home/ci");
    for p in [
        "",
        ".local",
        ".local/share",
        ".local/share/containers",
        ".local/share/containers/storage",
        ".local/share/containers/storage/overlay-containers",
        ".local/share/containers/storage/overlay-containers/containers.json",
    ] {
        std::os::unix::fs::chown(home.join(p), Some(USER), Some(USER)).unwrap();
    }
    // the user's container, named from their store
    let text = freeze_confirmation(&sb, ids.path(), "prod-db · podman");
    assert!(
        text.contains("prod-db"),
        "the confirmation is for the user's container: {text}"
    );
    assert!(
        !text.contains("podman's way: podman pause prod-db"),
        "root's podman command for a user's container: {text}"
    );
}

/// No store at all: the user names their group after the id of root's
/// podman container, and the name alone must not put that id in a
/// command.
#[test]
fn a_users_group_named_after_roots_podman_container_gets_no_command_for_it() {
    let Some(sb) = delegated(&format!("libpod-{B}.scope")) else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    let text = freeze_confirmation(&sb, ids.path(), "bbbbbbbbbbbb");
    assert!(text.contains("freeze"), "the confirmation: {text}");
    assert!(
        !text.contains(&format!("podman pause {B}")),
        "root's container named by the user's group name: {text}"
    );
}

/// The script `export-log` makes of a real freeze of a delegated user's
/// `docker-<id>.scope` (the id of the system's container): the live
/// confirmation refuses that identity, and the script's comments must not
/// bring it back from the group's name alone (`docker pause <id>` would
/// pause the system's container).
#[test]
fn export_log_names_no_system_container_for_a_delegated_look_alike() {
    use super::identities::A;
    let sub = format!("docker-{A}.scope");
    let Some(sb) = delegated(&sub) else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        state.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let term = Tmux::run(
        &format!(
            "XDG_CONFIG_HOME={} XDG_STATE_HOME={} CGTOP_IDENTITY_ROOT={} {} -d 0.3 {}",
            state.path().display(),
            state.path().display(),
            ids.path().display(),
            env!("CARGO_BIN_EXE_cgtop"),
            sb.rel
        ),
        160,
        45,
    );
    term.wait_for(&A[..12]);
    term.send(&["Down"]);
    std::thread::sleep(Duration::from_millis(300));
    term.send(&["f"]);
    let confirm = flat(&term.wait_for("go ahead"));
    assert!(!confirm.contains("docker pause"), "{confirm}");
    term.send(&["y"]);
    sb.wait_events(&sub, "frozen 1");
    term.send(&["q"]);
    let log = state.path().join("cgtop/actions.log");
    crate::common::wait_until("the action log", Duration::from_secs(10), || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("cgroup.freeze"))
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["export-log", "--log"])
        .arg(&log)
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(script.contains("cgroup.freeze"), "{script}");
    assert!(
        !script.contains(&format!("docker pause {A}")),
        "the system's container named from the name alone:\n{script}"
    );
}
