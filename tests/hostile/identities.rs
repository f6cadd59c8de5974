//! Hostile runtime metadata (names come from whoever can start a
//! container): the real binary, `cgtop --json --root <group tree>` with
//! `CGTOP_IDENTITY_ROOT` pointing the identity sources at a tree that
//! mirrors /var/lib/docker, /run/containerd, /run/systemd, a user's home.
//! Names with escapes stay raw in JSON (escaped where shown), duplicates
//! stay apart, huge files, symlinks and FIFOs are refused without a hang,
//! and a file that lies about which container it is labels nothing: the
//! group's name picks the file, never the other way.

use cgtop::model::tree::text::unescape;
use serde_json::Value;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) const A: &str = "aaaaaaaaaaaa1111aaaaaaaaaaaa1111aaaaaaaaaaaa1111aaaaaaaaaaaa1111";
pub(crate) const B: &str = "bbbbbbbbbbbb2222bbbbbbbbbbbb2222bbbbbbbbbbbb2222bbbbbbbbbbbb2222";
const C: &str = "cccccccccccc3333cccccccccccc3333cccccccccccc3333cccccccccccc3333";
const E: &str = "eeeeeeeeeeee5555eeeeeeeeeeee5555eeeeeeeeeeee5555eeeeeeeeeeee5555";

/// A group tree with these groups (parents made on the way), each with an
/// empty cgroup.procs.
pub(crate) fn groups(paths: &[String]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("cgroup.procs"), "").unwrap();
    for p in paths {
        let d = t.path().join(p);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("cgroup.procs"), "").unwrap();
    }
    t
}

pub(crate) fn put(base: &Path, rel: &str, text: &str) {
    let p = base.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

pub(crate) fn docker_record(id: &str, name: &str) -> String {
    serde_json::json!({"ID": id, "Name": name, "Config": {"Image": "busybox", "Labels": {}}})
        .to_string()
}

/// `cgtop --json -n 1 --root TREE` with the identity sources under
/// `ids`, under a 1 GiB address-space limit, killed after `secs`: the
/// groups by path, or `None` when it did not finish.
pub(crate) fn run(tree: &Path, ids: &Path, secs: u64) -> Option<Vec<Value>> {
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", "1", "-d", "0.1", "--root"])
        .arg(tree)
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(s.success(), "cgtop failed: {s}");
            break;
        }
        if t0.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = fs::read_to_string(out.path()).unwrap();
    let v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    Some(v["groups"].as_array().unwrap().clone())
}

pub(crate) fn identity<'a>(groups: &'a [Value], path: &str) -> &'a Value {
    let g = groups
        .iter()
        .find(|g| g["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the output"));
    &g["identity"]
}

#[test]
fn names_with_escapes_slashes_and_rtl_stay_raw_and_label_only_their_group() {
    let hostile = "/\u{1b}]0;pwned\u{7}../../etc/x\u{202e}txt.scope";
    let paths = [
        format!("system.slice/docker-{A}.scope"),
        format!("system.slice/docker-{B}.scope"),
    ];
    let tree = groups(&paths);
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, hostile),
    );
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{B}/config.v2.json"),
        &docker_record(B, "/b"),
    );
    let g = run(tree.path(), ids.path(), 20).expect("cgtop finished");
    let a = identity(&g, &format!("/system.slice/docker-{A}.scope"));
    // escaped as `path` is, and unescaping gives the name's own bytes (the
    // leading '/' of docker's names dropped); the group it labels is still
    // the one whose name had the id
    let shown = a["name"].as_str().unwrap();
    assert!(
        !shown.contains(['\u{1b}', '\u{7}', '\u{202e}']),
        "escaped as group names are: {shown:?}"
    );
    let name = unescape(shown);
    assert_eq!(name, &hostile.as_bytes()[1..]);
    assert_eq!(a["id"], A);
    assert_eq!(
        identity(&g, &format!("/system.slice/docker-{B}.scope"))["name"],
        "b"
    );
    // no group was made up from the name
    assert_eq!(g.len(), 4, "{g:?}");
}

#[test]
fn two_containers_with_the_same_name_stay_distinct() {
    let paths = [
        format!("system.slice/docker-{A}.scope"),
        format!("system.slice/docker-{B}.scope"),
    ];
    let tree = groups(&paths);
    let ids = tempfile::tempdir().unwrap();
    for id in [A, B] {
        put(
            ids.path(),
            &format!("var/lib/docker/containers/{id}/config.v2.json"),
            &docker_record(id, "/web"),
        );
    }
    let g = run(tree.path(), ids.path(), 20).unwrap();
    let a = identity(&g, &format!("/system.slice/docker-{A}.scope"));
    let b = identity(&g, &format!("/system.slice/docker-{B}.scope"));
    assert_eq!(
        (&a["name"], &b["name"]),
        (&Value::from("web"), &Value::from("web"))
    );
    assert_eq!((&a["id"], &b["id"]), (&Value::from(A), &Value::from(B)));
}

#[test]
fn a_huge_file_a_symlink_and_a_fifo_are_refused_without_a_hang() {
    let paths = [
        format!("system.slice/docker-{A}.scope"),
        format!("system.slice/docker-{B}.scope"),
        format!("kubepods.slice/cri-containerd-{C}.scope"),
    ];
    let tree = groups(&paths);
    let ids = tempfile::tempdir().unwrap();
    // 100 MB (sparse): over the 1 MiB cap, refused before a byte is read
    let big = ids
        .path()
        .join(format!("var/lib/docker/containers/{A}/config.v2.json"));
    fs::create_dir_all(big.parent().unwrap()).unwrap();
    fs::File::create(&big).unwrap().set_len(100 << 20).unwrap();
    // a symlink to a record that would name it: not followed
    put(
        ids.path(),
        "elsewhere/config.v2.json",
        &docker_record(B, "/stolen"),
    );
    let dir = ids.path().join(format!("var/lib/docker/containers/{B}"));
    fs::create_dir_all(&dir).unwrap();
    symlink(
        ids.path().join("elsewhere/config.v2.json"),
        dir.join("config.v2.json"),
    )
    .unwrap();
    // a FIFO in place of containerd's config.json: never opened for a read
    // that would wait for a writer
    let task = ids.path().join(format!(
        "run/containerd/io.containerd.runtime.v2.task/k8s.io/{C}"
    ));
    fs::create_dir_all(&task).unwrap();
    let fifo = task.join("config.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let g = run(tree.path(), ids.path(), 20).expect("cgtop finished: no hang on the FIFO");
    let a = identity(&g, &format!("/system.slice/docker-{A}.scope"));
    assert_eq!(
        a["unreadable"],
        "docker metadata not readable: file larger than 1 MiB"
    );
    let b = identity(&g, &format!("/system.slice/docker-{B}.scope"));
    assert_eq!(b["name"], Value::Null);
    assert_eq!(
        b["unreadable"],
        "docker metadata not readable: a symbolic link, not followed"
    );
    let c = identity(&g, &format!("/kubepods.slice/cri-containerd-{C}.scope"));
    assert_eq!(
        c["unreadable"],
        "containerd metadata not readable: not a regular file (a FIFO)"
    );
}

#[test]
fn a_lying_record_labels_nothing() {
    let uid = "0a0a0a0a-1b1b-2c2c-3d3d-4e4e4e4e4e4e";
    let pod = format!("kubepods.slice/kubepods-pod{}.slice", uid.replace('-', "_"));
    let paths = [
        format!("system.slice/docker-{A}.scope"),
        format!("system.slice/docker-{B}.scope"),
        pod.clone(),
        format!("{pod}/cri-containerd-{C}.scope"),
        format!("{pod}/cri-containerd-{E}.scope"),
        r"machine.slice/machine-a\x2fb.scope".to_owned(),
    ];
    let tree = groups(&paths);
    let ids = tempfile::tempdir().unwrap();
    // A's record says it is B
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(B, "/i-am-b"),
    );
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{B}/config.v2.json"),
        &docker_record(B, "/real-b"),
    );
    // C's bundle says its cgroup is E's, and names another pod
    let task = "run/containerd/io.containerd.runtime.v2.task/k8s.io";
    put(
        ids.path(),
        &format!("{task}/{C}/config.json"),
        &serde_json::json!({
            "annotations": {
                "io.kubernetes.cri.container-type": "container",
                "io.kubernetes.cri.container-name": "liar",
                "io.kubernetes.cri.sandbox-name": "someone-elses-pod",
                "io.kubernetes.cri.sandbox-uid": "ffffffff-ffff-ffff-ffff-ffffffffffff",
            },
            "linux": {"cgroupsPath": format!("kubepods-pod.slice:cri-containerd:{E}")}
        })
        .to_string(),
    );
    put(
        ids.path(),
        &format!("{task}/{E}/config.json"),
        &serde_json::json!({
            "annotations": {
                "io.kubernetes.cri.container-type": "container",
                "io.kubernetes.cri.container-name": "honest",
                "io.kubernetes.cri.sandbox-name": "shop-api",
                "io.kubernetes.cri.sandbox-namespace": "shop",
                "io.kubernetes.cri.sandbox-uid": uid,
            },
            "linux": {"cgroupsPath": format!("kubepods-pod.slice:cri-containerd:{E}")}
        })
        .to_string(),
    );
    // a machine name that decodes to a path: never looked up
    put(
        ids.path(),
        "run/systemd/machines/a/b",
        "NAME=evil\nCLASS=container\n",
    );
    let g = run(tree.path(), ids.path(), 20).unwrap();
    let a = identity(&g, &format!("/system.slice/docker-{A}.scope"));
    assert_eq!((&a["id"], &a["name"]), (&Value::from(A), &Value::Null));
    assert_eq!(
        a["unreadable"],
        "docker metadata not readable: the file names another container: not used"
    );
    assert_eq!(
        identity(&g, &format!("/system.slice/docker-{B}.scope"))["name"],
        "real-b"
    );
    let c = identity(&g, &format!("/{pod}/cri-containerd-{C}.scope"));
    assert_eq!(
        (&c["id"], &c["name"], &c["pod"]),
        (&Value::from(C), &Value::Null, &Value::Null)
    );
    let e = identity(&g, &format!("/{pod}/cri-containerd-{E}.scope"));
    assert_eq!(e["name"], "honest");
    // the pod is named by its honest container only
    let p = identity(&g, &format!("/{pod}"));
    assert_eq!(
        (&p["name"], &p["namespace"]),
        (&Value::from("shop-api"), &Value::from("shop"))
    );
    let m = identity(&g, r"/machine.slice/machine-a\x2fb.scope");
    assert_eq!((&m["name"], &m["source"]), (&Value::Null, &Value::Null));
}

#[test]
fn a_rootless_home_symlinked_elsewhere_or_a_store_of_someone_else_is_not_read() {
    let id = A;
    let path = format!("user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{id}.scope");
    let tree = groups(std::slice::from_ref(&path));
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        "etc/passwd",
        "alice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    let store =
        serde_json::json!([{"id": id, "names": ["victim-store"], "image": "", "layer": ""}])
            .to_string();
    // alice's home is a symlink to a store she does not own
    put(
        ids.path(),
        "victim/.local/share/containers/storage/overlay-containers/containers.json",
        &store,
    );
    fs::create_dir_all(ids.path().join("home")).unwrap();
    symlink(ids.path().join("victim"), ids.path().join("home/alice")).unwrap();
    let g = run(tree.path(), ids.path(), 20).unwrap();
    let i = identity(&g, &format!("/{path}"));
    assert_eq!(i["name"], Value::Null);
    assert_eq!(
        i["unreadable"],
        "podman metadata not readable: a symbolic link, not followed"
    );
    // a real home whose store file belongs to someone else (root here):
    // refused, whoever can read it
    if !rustix::process::geteuid().is_root() {
        println!("skipped: the ownership case needs root (chown)");
        return;
    }
    fs::remove_file(ids.path().join("home/alice")).unwrap();
    put(
        ids.path(),
        "home/alice/.local/share/containers/storage/overlay-containers/containers.json",
        &store,
    );
    let home = ids.path().join("home/alice");
    for p in ["", ".local", ".local/share", ".local/share/containers"] {
        std::os::unix::fs::chown(home.join(p), Some(1000), Some(1000)).unwrap();
    }
    let g = run(tree.path(), ids.path(), 20).unwrap();
    let i = identity(&g, &format!("/{path}"));
    assert_eq!(i["name"], Value::Null);
    assert_eq!(
        i["unreadable"],
        "podman metadata not readable: not owned by the user"
    );
    // once alice owns it: her container's name
    let f = home.join(".local/share/containers/storage/overlay-containers/containers.json");
    std::os::unix::fs::chown(&f, Some(1000), Some(1000)).unwrap();
    let g = run(tree.path(), ids.path(), 20).unwrap();
    assert_eq!(identity(&g, &format!("/{path}"))["name"], "victim-store");
}

/// `cgtop record` resolves identities as the live views do, and a replay
/// (on a machine without the runtime's files) shows the container's name
/// from the recording, escaped as live.
#[test]
fn a_recording_carries_resolved_names_to_its_replay() {
    let tree = groups(&[format!("system.slice/docker-{A}.scope")]);
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/web-1\u{1b}[2J"),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.rec");
    let rec = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["record", "-o"])
        .arg(&file)
        .arg("--root")
        .arg(tree.path())
        .args(["-d", "0.1", "-n", "3"])
        .env("CGTOP_IDENTITY_ROOT", ids.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    // the replay has no runtime files to read: the names are the recording's
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .arg("replay")
        .arg(&file)
        .arg("--json")
        .env("CGTOP_IDENTITY_ROOT", empty.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let last: Value = serde_json::from_str(text.lines().last().expect("a line")).unwrap();
    let groups = last["groups"].as_array().expect("groups");
    let g = groups
        .iter()
        .find(|g| {
            g["path"]
                .as_str()
                .is_some_and(|p| p.rsplit('.').next() == Some("scope"))
        })
        .expect("the container's group");
    assert_eq!(g["identity"]["name"], "web-1\\e[2J", "{g}");
    assert!(!text.contains('\u{1b}'), "a raw ESC in the replay's JSON");
}
