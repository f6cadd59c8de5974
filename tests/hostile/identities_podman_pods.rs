//! podman's state database (bolt_state.db, db.sql), where alone a pod's
//! name is, read by the real binary (`cgtop --json`, identity sources
//! under `CGTOP_IDENTITY_ROOT`) when it is hostile: a name with escapes
//! and U+202E stays escaped and labels only its own pod's groups; a FIFO,
//! a symlink, a huge file, a cut file or a cycle of pages gives no name,
//! says why and never hangs; a rootless user's database is read only as
//! a file they own, within their 4 MiB cap.

use crate::identities::{groups, identity, put, run};
use cgtop::model::tree::text::unescape;
use serde_json::Value;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

const CTR: &str = "aaaaaaaaaaaa1111aaaaaaaaaaaa1111aaaaaaaaaaaa1111aaaaaaaaaaaa1111";
const LIBPOD: &str = "var/lib/containers/storage/libpod";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/podman-db")
        .join(name)
}

/// The real podman 4.3.1 file's pod: its id and name, as `podman pod
/// inspect` gave them in the same boot.
fn real_pod() -> (String, String) {
    let v: Value =
        serde_json::from_slice(&fs::read(fixture("podman4-pod-inspect.json")).unwrap()).unwrap();
    let v = if v.is_array() { v[0].clone() } else { v };
    (
        v["Id"].as_str().unwrap().to_owned(),
        v["Name"].as_str().unwrap().to_owned(),
    )
}

fn put_bytes(base: &Path, rel: &str, bytes: &[u8]) {
    let p = base.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

fn slice(pod: &str) -> String {
    format!("machine.slice/machine-libpod_pod_{pod}.slice")
}

/// The pod's slice and a container in it, as cgtop shows them.
fn pod_and_container(ids: &Path, pod: &str) -> (Value, Value) {
    let s = slice(pod);
    let c = format!("{s}/libpod-{CTR}.scope");
    let tree = groups(&[s.clone(), c.clone()]);
    let g = run(tree.path(), ids, 20).unwrap_or_else(|| panic!("cgtop did not finish: a hang"));
    (
        identity(&g, &format!("/{s}")).clone(),
        identity(&g, &format!("/{c}")).clone(),
    )
}

#[test]
fn a_real_bolt_file_names_the_pod_and_its_containers() {
    let (pod, name) = real_pod();
    let ids = tempfile::tempdir().unwrap();
    put_bytes(
        ids.path(),
        &format!("{LIBPOD}/bolt_state.db"),
        &fs::read(fixture("podman4-bolt_state.db")).unwrap(),
    );
    let (p, c) = pod_and_container(ids.path(), &pod);
    assert_eq!(
        (&p["kind"], &p["name"]),
        (&Value::from("podman_pod"), &Value::from(name.as_str())),
        "{p}"
    );
    assert_eq!(c["pod"], Value::from(name.as_str()), "{c}");
}

#[test]
fn a_pod_name_with_escapes_and_rtl_stays_escaped_and_labels_only_its_pod() {
    // podman5-db.sql's first pod (make-sqlite.sh): ESC [2J U+202E in its name
    let expected = fs::read_to_string(fixture("podman5-db.sql.expected")).unwrap();
    let (pod, raw) = expected
        .lines()
        .map(|l| l.split_once('\t').unwrap())
        .find(|(_, n)| n.contains('\u{202e}'))
        .unwrap();
    let ids = tempfile::tempdir().unwrap();
    put_bytes(
        ids.path(),
        &format!("{LIBPOD}/db.sql"),
        &fs::read(fixture("podman5-db.sql")).unwrap(),
    );
    let (p, c) = pod_and_container(ids.path(), pod);
    for shown in [p["name"].as_str().unwrap(), c["pod"].as_str().unwrap()] {
        assert!(
            !shown.contains(['\u{1b}', '\u{202e}']),
            "escaped: {shown:?}"
        );
        assert_eq!(unescape(shown), raw.as_bytes());
    }
    // another pod's slice, whose id the file does not hold: no name
    let other = "0123456789abcdef".repeat(4);
    let (o, _) = pod_and_container(ids.path(), &other);
    assert_eq!((&o["name"], &o["unreadable"]), (&Value::Null, &Value::Null));
}

#[test]
fn a_fifo_a_symlink_a_huge_a_cut_file_and_a_cycle_give_no_name_and_say_why() {
    let (pod, name) = real_pod();
    let real = fs::read(fixture("podman4-bolt_state.db")).unwrap();
    let db = format!("{LIBPOD}/bolt_state.db");
    let unreadable = |ids: &Path| {
        let (p, _) = pod_and_container(ids, &pod);
        assert_eq!(p["name"], Value::Null, "{p}");
        p["unreadable"].as_str().unwrap_or_default().to_owned()
    };
    // a FIFO: never opened for a read that waits for a writer
    let ids = tempfile::tempdir().unwrap();
    fs::create_dir_all(ids.path().join(LIBPOD)).unwrap();
    assert!(Command::new("mkfifo")
        .arg(ids.path().join(&db))
        .status()
        .unwrap()
        .success());
    assert_eq!(
        unreadable(ids.path()),
        "podman metadata not readable: libpod/bolt_state.db: not a regular file (a FIFO)"
    );
    // a symlink to a real file: not followed
    let ids = tempfile::tempdir().unwrap();
    put_bytes(ids.path(), "elsewhere/bolt_state.db", &real);
    fs::create_dir_all(ids.path().join(LIBPOD)).unwrap();
    symlink(
        ids.path().join("elsewhere/bolt_state.db"),
        ids.path().join(&db),
    )
    .unwrap();
    assert_eq!(
        unreadable(ids.path()),
        "podman metadata not readable: libpod/bolt_state.db: a symbolic link, not followed"
    );
    // 100 MB (sparse): over root's 32 MiB cap, refused before a read
    let ids = tempfile::tempdir().unwrap();
    fs::create_dir_all(ids.path().join(LIBPOD)).unwrap();
    fs::File::create(ids.path().join(&db))
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    assert_eq!(
        unreadable(ids.path()),
        "podman metadata not readable: libpod/bolt_state.db: file larger than 32 MiB"
    );
    // cut short of the pages its meta counts
    let ids = tempfile::tempdir().unwrap();
    put_bytes(ids.path(), &db, &real[..3 * 4096]);
    assert!(unreadable(ids.path())
        .starts_with("podman metadata not readable: libpod/bolt_state.db: not read ("),);
    // the root page made a branch whose only child is itself
    let mut cyc = real.clone();
    let meta = |pg: usize| {
        let m = pg * 4096 + 16;
        let le = |a: usize| u64::from_le_bytes(real[m + a..m + a + 8].try_into().unwrap());
        (le(48), le(16))
    };
    let root = std::cmp::max(meta(0), meta(1)).1 as usize;
    cyc[root * 4096 + 8..root * 4096 + 10].copy_from_slice(&1u16.to_le_bytes());
    cyc[root * 4096 + 10..root * 4096 + 12].copy_from_slice(&1u16.to_le_bytes());
    cyc[root * 4096 + 24..root * 4096 + 32].copy_from_slice(&(root as u64).to_le_bytes());
    let ids = tempfile::tempdir().unwrap();
    put_bytes(ids.path(), &db, &cyc);
    assert_eq!(
        unreadable(ids.path()),
        "podman metadata not readable: libpod/bolt_state.db: not read (a page reached twice)"
    );
    // and the real file itself names it: the cases above failed on the
    // file, not on the pod
    let ids = tempfile::tempdir().unwrap();
    put_bytes(ids.path(), &db, &real);
    assert_eq!(
        pod_and_container(ids.path(), &pod).0["name"],
        Value::from(name)
    );
}

#[test]
fn a_rootless_users_database_is_read_only_as_theirs_and_within_4_mib() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: the rootless cases need root (chown)");
        return;
    }
    let (pod, name) = real_pod();
    let s = format!(
        "user.slice/user-1000.slice/user@1000.service/user.slice/user-libpod_pod_{pod}.slice"
    );
    let tree = groups(std::slice::from_ref(&s));
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        "etc/passwd",
        "alice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    let rel = "home/alice/.local/share/containers/storage/libpod/bolt_state.db";
    put_bytes(
        ids.path(),
        rel,
        &fs::read(fixture("podman4-bolt_state.db")).unwrap(),
    );
    let home = ids.path().join("home/alice");
    for p in [
        "",
        ".local",
        ".local/share",
        ".local/share/containers",
        ".local/share/containers/storage",
        ".local/share/containers/storage/libpod",
    ] {
        std::os::unix::fs::chown(home.join(p), Some(1000), Some(1000)).unwrap();
    }
    let shown = |ids: &Path| {
        let g = run(tree.path(), ids, 20).expect("cgtop finished");
        identity(&g, &format!("/{s}")).clone()
    };
    // root's file in alice's home: not hers, not read
    let p = shown(ids.path());
    assert_eq!(p["name"], Value::Null, "{p}");
    assert_eq!(
        p["unreadable"],
        "podman metadata not readable: libpod/bolt_state.db: not owned by the user"
    );
    // hers: her pod's name
    let f = ids.path().join(rel);
    std::os::unix::fs::chown(&f, Some(1000), Some(1000)).unwrap();
    assert_eq!(shown(ids.path())["name"], Value::from(name.as_str()));
    // hers, but over a rootless store's 4 MiB cap
    fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(5 << 20)
        .unwrap();
    let p = shown(ids.path());
    assert_eq!(p["name"], Value::Null, "{p}");
    assert_eq!(
        p["unreadable"],
        "podman metadata not readable: libpod/bolt_state.db: file larger than 4 MiB"
    );
}
