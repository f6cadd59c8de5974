//! `cgtop --pid PID` against the real binary and the host's kernel: with
//! -b and --json it shows the group that holds the process alone (as a
//! GROUP argument would start there), and it refuses in one line with
//! exit status 2 a PID that is not there, a zombie, a thread id and a
//! process outside the view. The processes are the test's own, in groups
//! of its sandbox (`cgtop-test-<pid>-<n>` under the cgroup2 mount,
//! removed afterwards); the test says `skipped:` where it cannot make them
//! (not root, no cgroup2 mount).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use super::batch::{cgtop, stdout};
use crate::common;
use common::sandbox::Sandbox;
use std::process::Output;
use std::time::{Duration, Instant};

/// The one line a refusal prints, after checking the exit status 2.
fn refusal(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty(), "{}", stdout(o));
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err
}

/// The group paths of the first -b refresh.
fn batch_groups(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, rows) = common::batch::first(&stdout(o));
    rows.iter()
        .map(|r| r.split_whitespace().next().unwrap().to_owned())
        .collect()
}

#[test]
fn pid_starts_at_the_group_that_holds_it_in_batch_and_json() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("a");
    sb.mkdir("a/inner");
    sb.mkdir("b");
    let pid = sb.spawn_in("a/inner", "exec sleep 60").to_string();
    let want = format!("/{}/a/inner", sb.rel);
    // the group alone, not the whole tree from the root
    let o = cgtop(&["-b", "-n", "1", "--pid", &pid]);
    assert_eq!(batch_groups(&o), vec![want.clone()]);
    // a GROUP that holds it: the same
    let a = format!("{}/a", sb.rel);
    let o = cgtop(&["-b", "-n", "1", "--pid", &pid, &a]);
    assert_eq!(batch_groups(&o), vec![want.clone()]);
    let o = cgtop(&["--json", "--brief", "-n", "1", "--pid", &pid]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    let paths: Vec<&str> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec![want.as_str()]);
    // a process outside GROUP: refused, not shown from elsewhere
    let b = format!("{}/b", sb.rel);
    let err = refusal(&cgtop(&["-b", "-n", "1", "--pid", &pid, &b]));
    assert!(
        err.starts_with(&format!(
            "cgtop: --pid {pid}: its group {want} is outside /{b}"
        )),
        "{err}"
    );
    sb.kill_all();
}

#[test]
fn pids_that_name_no_process_are_refused_in_one_line() {
    // a PID that was a process and is no more (reaped)
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let err = refusal(&cgtop(&["-b", "-n", "1", "--pid", &gone_pid.to_string()]));
    assert_eq!(
        err.trim(),
        format!("cgtop: --pid {gone_pid}: no such process")
    );

    // a thread id: /proc/TID is there, though it is no process
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        tx.send(rustix::thread::gettid().as_raw_nonzero().get())
            .unwrap();
        let _ = stop_rx.recv_timeout(Duration::from_secs(60));
    });
    let tid = rx.recv().unwrap();
    let err = refusal(&cgtop(&["-b", "-n", "1", "--pid", &tid.to_string()]));
    stop_tx.send(()).unwrap();
    t.join().unwrap();
    let me = std::process::id();
    assert!(
        err.starts_with(&format!("cgtop: --pid {tid}: a thread of process {me}")),
        "{err}"
    );

    // --openmetrics prints every group once: --pid has no place there
    let o = cgtop(&["--openmetrics", "--pid", "1"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_zombie_is_refused_as_exited() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("z");
    // the shell becomes a sleep that never reaps its child, and the child
    // exits only once it sees that its parent is the sleep: a shell may reap
    // a child that exits before the shell's exec (dash does, 1 run in 100)
    let file = std::env::temp_dir().join(format!("cgtop-zombie-{}", std::process::id()));
    let script = format!(
        "(while [ \"$(cat /proc/$$/comm)\" != sleep ]; do sleep 0.01; done) & \
         echo $! > {}; exec sleep 60",
        file.display()
    );
    sb.spawn_in("z", &script);
    let end = Instant::now() + Duration::from_secs(10);
    let zombie = loop {
        let pid = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        let state = pid.and_then(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).ok());
        // the state is the field after the command's closing parenthesis
        if let (Some(p), Some(s)) = (pid, state) {
            if s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')) {
                break p;
            }
        }
        assert!(Instant::now() < end, "no zombie appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = std::fs::remove_file(&file);
    let err = refusal(&cgtop(&["-b", "-n", "1", "--pid", &zombie.to_string()]));
    assert!(
        err.starts_with(&format!("cgtop: --pid {zombie}: has exited")),
        "{err}"
    );
    sb.kill_all();
}
