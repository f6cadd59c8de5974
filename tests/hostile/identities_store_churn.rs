//! What a delegated user can make root's cgtop spend on their rootless
//! store: they write the store (up to its 32 MiB cap) and they make
//! groups in their subtree for free. One new `libpod-<id>.scope` a
//! refresh must not mean one parse of the whole store a refresh. Real
//! kernel: `cgtop-test-<pid>-<n>` in cgroup2 chowned to an unused uid,
//! the store and /etc/passwd under `CGTOP_IDENTITY_ROOT`; cgtop's CPU
//! time is its shell's cutime+cstime after it exits. Without root or
//! cgroup2: `skipped: <reason>`.

use super::identities::put;
use crate::common::sandbox::Sandbox;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A uid no account on a test machine has.
const USER: u32 = 64_125;

/// The CPU seconds of `cgtop --json -n N -d 0.1 GROUP` (its shell's
/// children's times from /proc/PID/stat, in clock ticks of 1/100 s).
fn cpu_of_run(group: &str, ids: &std::path::Path, n: u32) -> f64 {
    let out = Command::new("sh")
        .arg("-c")
        .arg("\"$@\" >/dev/null 2>&1; cat /proc/$$/stat")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", &n.to_string(), "-d", "0.1", group])
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stat = String::from_utf8_lossy(&out.stdout);
    let rest = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // fields 16 and 17 (cutime, cstime); `rest` starts at field 3
    let ticks: u64 = f[13].parse::<u64>().unwrap() + f[14].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// A store of about `bytes` of containers that are not the test's.
fn store(bytes: usize) -> String {
    let mut v = Vec::new();
    let mut len = 2;
    let mut i = 0u64;
    while len < bytes {
        let c = serde_json::json!({
            "id": format!("{i:064x}"),
            "names": [format!("c{i}-{}", "x".repeat(200))],
            "image": format!("{i:064x}"),
            "layer": format!("{i:064x}"),
        });
        len += c.to_string().len() + 1;
        v.push(c);
        i += 1;
    }
    serde_json::Value::Array(v).to_string()
}

/// `cgtop` over the user's subtree for `n` refreshes while the user makes
/// one new `libpod-<id>.scope` every 100 ms (`churn`): its CPU seconds.
fn run(sb: &Sandbox, ids: &std::path::Path, n: u32, churn: bool, base: u64) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let maker = churn.then(|| {
        let stop = Arc::clone(&stop);
        let top = sb.dir("");
        std::thread::spawn(move || {
            let mut i = base;
            while !stop.load(Ordering::Relaxed) {
                let d = top.join(format!("libpod-{i:064x}.scope"));
                if std::fs::create_dir(&d).is_ok() {
                    let _ = std::os::unix::fs::chown(&d, Some(USER), Some(USER));
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    });
    let cpu = cpu_of_run(&sb.rel, ids, n);
    stop.store(true, Ordering::Relaxed);
    if let Some(m) = maker {
        m.join().unwrap();
    }
    cpu
}

#[test]
fn a_new_group_a_refresh_does_not_reparse_a_users_store_each_time() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    std::os::unix::fs::chown(sb.dir(""), Some(USER), Some(USER)).unwrap();
    let make_ids = |bytes: usize| {
        let ids = tempfile::tempdir().unwrap();
        put(
            ids.path(),
            "etc/passwd",
            &format!("ci:x:{USER}:{USER}::/home/ci:/bin/sh\n"),
        );
        let rel = "home/ci/.local/share/containers/storage/overlay-containers/containers.json";
        put(ids.path(), rel, &store(bytes));
        let mut p = ids.path().join(rel);
        while p != ids.path().join("home") {
            std::os::unix::fs::chown(&p, Some(USER), Some(USER)).unwrap();
            p.pop();
        }
        ids
    };
    // the same churn with a tiny store and with one just under the cap:
    // the difference is what the store's parses cost
    let small = make_ids(1 << 10);
    let big = make_ids(31 << 20);
    let n = 15;
    let cheap = run(&sb, small.path(), n, true, 1 << 20);
    let dear = run(&sb, big.path(), n, true, 2 << 20);
    // one parse of the big store (the first pass) is allowed, and a few
    // more over 3 s; one a refresh is not
    let once = run(&sb, big.path(), n, false, 0) - run(&sb, small.path(), n, false, 0);
    let extra = dear - cheap;
    println!("cpu: churn small {cheap:.2} s, churn big {dear:.2} s, one parse ~{once:.2} s");
    assert!(
        extra <= (once.max(0.05)) * 5.0,
        "{n} refreshes with a new group each: {extra:.2} s of CPU more with a 31 MiB store \
         (one parse costs ~{once:.2} s)"
    );
}
