//! What a user with a delegated subtree (their `user@UID.service`, or any
//! group they own) can make cgtop say about their groups: they choose the
//! groups' names, so a `docker-<id>.scope`, `session-N.scope` or a nested
//! `user@0.service` of theirs must not take the identity of the system's
//! docker container, another user's session or root's store (an
//! operator who then acts on "prod-db" by its owner's command would act on
//! the real one); and their own rootless store, which they write, must
//! not make cgtop (root) allocate without bound.

use super::identities::{docker_record, groups, identity, put, run, A, B};
use serde_json::Value;
use std::fs;
use std::path::Path;

const ALICE: u32 = 1000;

/// chown -R `dir` to `uid`.
fn give(dir: &Path, uid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            give(&p, uid);
        } else {
            std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
        }
    }
}

#[test]
fn a_delegated_users_groups_do_not_take_the_systems_identities() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root (chown of the user's subtree)");
        return;
    }
    let mgr = "user.slice/user-1000.slice/user@1000.service";
    let real = format!("system.slice/docker-{A}.scope");
    let fake_docker = format!("{mgr}/app.slice/docker-{A}.scope");
    let fake_session = format!("{mgr}/app.slice/session-5.scope");
    let fake_root_store = format!("{mgr}/app.slice/user@0.service/libpod-{B}.scope");
    let tree = groups(&[
        real.clone(),
        fake_docker.clone(),
        fake_session.clone(),
        fake_root_store.clone(),
    ]);
    // systemd hands user@1000.service to alice: she made every group below
    give(&tree.path().join(mgr), ALICE);
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/prod-db"),
    );
    put(
        ids.path(),
        "run/systemd/sessions/5",
        "UID=0\nUSER=root\nSCOPE=session-5.scope\nTTY=pts/0\nREMOTE_HOST=10.0.0.1\n",
    );
    put(
        ids.path(),
        "etc/passwd",
        "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    put(
        ids.path(),
        "root/.local/share/containers/storage/overlay-containers/containers.json",
        &serde_json::json!([{"id": B, "names": ["root-secret"]}]).to_string(),
    );
    let g = run(tree.path(), ids.path(), 30).expect("cgtop finished");
    // the system's container keeps its name
    assert_eq!(identity(&g, &format!("/{real}"))["name"], "prod-db");
    // alice's look-alikes say what their names say, nothing more
    let d = identity(&g, &format!("/{fake_docker}"));
    assert_eq!(d["name"], Value::Null, "{d}");
    assert_eq!(d["source"], Value::Null, "{d}");
    // nor does it claim to be docker's: no owner's command would name
    // the system's container of that id for it
    assert_eq!(
        (&d["kind"], &d["runtime"]),
        (&Value::Null, &Value::Null),
        "{d}"
    );
    assert!(d["unreadable"]
        .as_str()
        .is_some_and(|u| u.contains("belongs to uid 1000")));
    let s = identity(&g, &format!("/{fake_session}"));
    assert_eq!(
        (&s["user"], &s["kind"]),
        (&Value::Null, &Value::Null),
        "{s}"
    );
    let r = identity(&g, &format!("/{fake_root_store}"));
    assert_eq!(r["name"], Value::Null, "{r}");
    // the user manager itself is alice's, and says so
    assert_eq!(identity(&g, &format!("/{mgr}"))["name"], "alice");
}

#[test]
fn a_rootless_store_of_tiny_values_does_not_blow_up_memory() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root (chown of the user's store)");
        return;
    }
    let path = format!("user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{A}.scope");
    let tree = groups(std::slice::from_ref(&path));
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        "etc/passwd",
        "alice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    // just under a rootless store's 4 MiB cap: 2 million numbers, which
    // as JSON values are 32 bytes each (64 MiB), in the store alice
    // writes; the one container record in it still names her container
    let cap = 4 << 20;
    let mut text = String::with_capacity(cap);
    text.push('[');
    text.push_str(&serde_json::json!({"id": A, "names": ["mine"]}).to_string());
    while text.len() + 3 < cap {
        text.push_str(",0");
    }
    text.push(']');
    put(
        ids.path(),
        "home/alice/.local/share/containers/storage/overlay-containers/containers.json",
        &text,
    );
    give(&ids.path().join("home/alice"), ALICE);
    // run() limits cgtop's address space to 1 GiB; 200 MiB here
    let g = run_limited(tree.path(), ids.path(), 200 << 10);
    assert_eq!(identity(&g, &format!("/{path}"))["name"], "mine");
}

/// [`run`]'s `cgtop --json -n 1` under an address-space limit of `kib`.
fn run_limited(tree: &Path, ids: &Path, kib: u64) -> Vec<Value> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; exec \"$@\""))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", "1", "-d", "0.1", "--root"])
        .arg(tree)
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cgtop failed: {} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    v["groups"].as_array().unwrap().clone()
}

/// A group root made (its own directory root's) below one a user owns:
/// that user may rename it (a rename needs write access to the parent
/// only), so it is theirs by name as much as the groups they made, here
/// with a system container's `docker-<id>.scope`; and the same where the
/// user's directory is above the view's root (`--root` inside their
/// subtree). Named from the system's docker record, the operator would
/// be shown `docker kill prod-db` for the user's group.
#[test]
fn a_root_made_group_below_a_users_directory_is_theirs_by_name() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: needs root (chown of the user's directory)");
        return;
    }
    let fake = format!("deleg/inner/docker-{A}.scope");
    let tree = groups(&["deleg".into(), "deleg/inner".into(), fake.clone()]);
    // only the directory itself: what is below it stays root's
    std::os::unix::fs::chown(tree.path().join("deleg"), Some(ALICE), Some(ALICE)).unwrap();
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/prod-db"),
    );
    for (root, path) in [
        (tree.path().to_path_buf(), format!("/{fake}")),
        (
            tree.path().join("deleg/inner"),
            format!("/docker-{A}.scope"),
        ),
    ] {
        let g = run(&root, ids.path(), 30).expect("cgtop finished");
        let d = identity(&g, &path);
        assert_eq!(d["name"], Value::Null, "{} {path}: {d}", root.display());
        assert_eq!(d["runtime"], Value::Null, "{} {path}: {d}", root.display());
        assert!(
            d["unreadable"]
                .as_str()
                .is_some_and(|u| u.contains("belongs to uid 1000")),
            "{d}"
        );
    }
}

/// The real binary on this host's cgroup2: a group named like a system
/// container (`docker-<id>.scope`, the id of one docker has a record of)
/// that root made below a directory another user owns (who may rename
/// it). Its freeze's confirmation offers no `docker pause`, whenever it
/// is asked: the name is the user's, and the command would pause the
/// system's container of that id.
#[test]
fn a_users_look_alike_of_a_container_gets_no_runtime_command_on_screen() {
    use super::common::sandbox::Sandbox;
    use super::common::tmux::Tmux;
    use std::time::Duration;
    let Some(tg) = Sandbox::or_skip() else {
        return;
    };
    let fake = format!("theirs/docker-{A}.scope");
    tg.mkdir(&fake);
    if !tg.dir(&fake).join("cgroup.freeze").exists() {
        println!("skipped: no cgroup.freeze (kernel before 5.2)");
        return;
    }
    std::os::unix::fs::chown(tg.dir("theirs"), Some(65534), None).unwrap();
    let Some(term) = Tmux::shell_or_skip(160, 40) else {
        return;
    };
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/prod-db"),
    );
    let bin = env!("CARGO_BIN_EXE_cgtop");
    term.send(&[
        &format!(
            "CGTOP_IDENTITY_ROOT={} {bin} -d 1 {}",
            ids.path().display(),
            tg.path(&fake)
        ),
        "Enter",
    ]);
    // the identity readers have run (from the second refresh): the
    // detail's WHO says what they made of it, either way
    term.wait_until("the identity read", Duration::from_secs(20), |s| {
        s.contains("prod-db") || s.contains("metadata not used")
    });
    term.send(&["f"]);
    let s = term.wait_until("the freeze's confirmation", Duration::from_secs(20), |s| {
        s.contains("y/Enter") || s.contains("type its name")
    });
    term.send(&["Escape"]);
    term.send(&["q"]);
    assert!(!s.contains("docker pause"), "{s}");
    assert!(!s.contains("'s way"), "{s}");
    assert_eq!(tg.file(&tg.path(&fake), "cgroup.freeze").trim(), "0");
}
