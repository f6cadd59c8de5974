//! The session as a script on this machine's real cgroup v1 hierarchies
//! (issue 10 item 4): cgtop's writer thread performs writes in a
//! `cgtop-test-<pid>-<n>-script` group of the cpu, memory and pids
//! hierarchies and logs them to a temporary action log (the v1 lines name
//! their hierarchy, `cpu:/...`); `cgtop export-log` makes the scripts; the
//! group's values are reset by hand; `bash apply.sh`, finding each
//! hierarchy in /proc/self/mountinfo itself, puts the values back and
//! makes the group again; `bash apply.undo.sh` restores the old ones.
//!
//! The group is removed at the end, also on failure (`common/sandbox_v1.rs`).
//! Without root or without these v1 hierarchies: `skipped: <reason>`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::vm_common;

use cgtop::app::writes::WriteRequest;
use cgtop::app::Msg;
use cgtop::cgroupfs::Limit;
use cgtop::model::host::layout::HierId;
use cgtop::model::write::{self, v1_files, V1MemoryFile};
use cgtop::source::actionlog::ActionLog;
use cgtop::source::hier::Hiers;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use vm_common::sandbox_v1::V1Sandbox;

/// The kernel's "no limit" for a v1 memory limit: -1 or at least 2^62.
fn unlimited(text: &str) -> bool {
    let t = text.trim();
    t == "-1" || t.parse::<u64>().is_ok_and(|v| v >= 1 << 62)
}

fn bash(script: &Path) -> (bool, String) {
    run_sh(&["bash"], script)
}

#[test]
fn a_session_on_v1_replays_from_its_script_and_its_undo_takes_it_back() {
    let Some(sb) = V1Sandbox::or_skip("script", &["cpu", "memory", "pids"]) else {
        return;
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let holder = |c: &str| layout.holder(c).unwrap();
    let (cpu, mem, pids) = (holder("cpu"), holder("memory"), holder("pids"));
    assert!(matches!(
        (cpu, mem, pids),
        (HierId::V1(_), HierId::V1(_), HierId::V1(_))
    ));
    let g = sb.path("");
    let made = g.join(b"made".as_slice()).unwrap();

    // the writes, through cgtop's writer thread, logged to a temporary log
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("cgtop/actions.log");
    let hiers = Arc::new(Hiers::open(layout.clone()));
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let w = cgtop::run::spawn_writer(Arc::clone(&hiers), ActionLog::at(log.clone()), tx).unwrap();
    let mut ops = vec![
        write::set_cfs_quota(&g, cpu, Some(50_000)),
        write::set_v1_memory(&g, mem, V1MemoryFile::Limit, Limit::Value(64 << 20)),
        write::set_pids_max(&g, Limit::Value(64)).on(pids),
    ];
    ops.extend(write::create_group_in(&made, &[cpu]));
    ops.push(write::set_cpu_shares(&made, cpu, 256));
    w.send(WriteRequest::Ops(ops)).unwrap();
    let Msg::WriteFinished { outcomes, .. } = rx.recv_timeout(Duration::from_secs(10)).unwrap()
    else {
        panic!("not a write's answer");
    };
    assert_eq!(outcomes.len(), 5);
    for o in &outcomes {
        assert!(o.is_ok(), "{}", o.summary());
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains(&format!(" cpu:/{} cpu.cfs_quota_us -1 to 50000 ok", sb.rel)),
        "{logged}"
    );

    // the scripts
    let (apply, undo) = export(&log, state.path());
    let text = std::fs::read_to_string(&apply).unwrap();
    assert!(
        text.contains("cg_root \"${CGTOP_V1_CPU:-}\" CGTOP_V1_CPU cpu;"),
        "{text}"
    );

    // reset by hand, as on the next server: old values, no child group
    sb.write("cpu", &g, v1_files::CPU_CFS_QUOTA, "-1");
    sb.write("memory", &g, v1_files::MEMORY_LIMIT, "-1");
    sb.write("pids", &g, "pids.max", "max");
    std::fs::remove_dir(sb.dir_of("cpu", &made)).unwrap();

    let (ok, said) = bash(&apply);
    assert!(ok, "{said}\n{text}");
    assert_eq!(sb.read("cpu", &g, v1_files::CPU_CFS_QUOTA).trim(), "50000");
    assert_eq!(
        sb.read("memory", &g, v1_files::MEMORY_LIMIT).trim(),
        (64u64 << 20).to_string()
    );
    assert_eq!(sb.read("pids", &g, "pids.max").trim(), "64");
    assert_eq!(sb.read("cpu", &made, v1_files::CPU_SHARES).trim(), "256");

    // a second run finds the group made and writes the same values
    let (ok, said) = bash(&apply);
    assert!(ok, "{said}");

    let (ok, said) = bash(&undo);
    assert!(ok, "{said}");
    assert_eq!(sb.read("cpu", &g, v1_files::CPU_CFS_QUOTA).trim(), "-1");
    assert!(unlimited(&sb.read("memory", &g, v1_files::MEMORY_LIMIT)));
    assert_eq!(sb.read("pids", &g, "pids.max").trim(), "max");
    assert!(!sb.dir_of("cpu", &made).exists());

    // the script's own lookup in /proc/self/mountinfo finds each mount as
    // the test's (independent) reading of it does: cgroup2 (hybrid:
    // /sys/fs/cgroup/unified), and v1 by controller or name
    let funcs = text.split("# --- the changes").next().unwrap();
    let found = |key: &str| {
        let s = format!("{funcs}\ncg_mount '{key}' X; printf %s \"$cg_r\"\n");
        let out = Command::new("dash").arg("-c").arg(&s).output().unwrap();
        assert!(
            out.status.success(),
            "{key}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap())
    };
    for c in ["cpu", "memory", "pids"] {
        assert_eq!(found(c), sb.hier(c).mount, "{c}");
    }
    if sb.hiers.iter().any(|h| h.v2) {
        assert_eq!(found("cgroup2"), sb.hier("").mount);
    }
}

/// The shells a script is run with: bash, dash and busybox sh, those
/// installed.
fn shells() -> Vec<Vec<&'static str>> {
    let have = |t: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut v: Vec<Vec<&str>> = ["bash", "dash"]
        .into_iter()
        .filter(|s| have(s))
        .map(|s| vec![s])
        .collect();
    if have("busybox") {
        v.push(vec!["busybox", "sh"]);
    } else {
        println!("skipped: busybox sh (no busybox)");
    }
    v
}

/// Runs `script` with `sh`, every hierarchy found in mountinfo (no
/// `CGTOP_*` variable); its status and output.
fn run_sh(sh: &[&str], script: &Path) -> (bool, String) {
    let out = Command::new(sh[0])
        .args(&sh[1..])
        .arg(script)
        .env_remove("CGTOP_CGROUP2")
        .env_remove("CGTOP_V1_CPU")
        .env_remove("CGTOP_V1_MEMORY")
        .env_remove("CGTOP_V1_PIDS")
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Performs `ops` through cgtop's writer thread on `hiers`, logged to
/// `dir/actions.log`, then `cgtop export-log` of that log: the apply and
/// undo scripts' paths.
fn session(hiers: Hiers, ops: Vec<cgtop::model::write::Op>, dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("cgtop/actions.log");
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let w = cgtop::run::spawn_writer(Arc::new(hiers), ActionLog::at(log.clone()), tx).unwrap();
    w.send(WriteRequest::Ops(ops)).unwrap();
    let Msg::WriteFinished { outcomes, .. } = rx.recv_timeout(Duration::from_secs(10)).unwrap()
    else {
        panic!("not a write's answer");
    };
    for o in &outcomes {
        assert!(o.is_ok(), "{}", o.summary());
    }
    export(&log, dir)
}

/// `cgtop export-log --log LOG -o DIR/apply.sh`: the apply and undo
/// scripts' paths.
fn export(log: &Path, dir: &Path) -> (PathBuf, PathBuf) {
    let apply = dir.join("apply.sh");
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["export-log", "--log"])
        .arg(log)
        .arg("-o")
        .arg(&apply)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (apply, dir.join("apply.undo.sh"))
}

/// A session under `--root` on a delegated-like group of the pids
/// hierarchy (`S/deleg`) sets pids.max of its group named like the
/// sandbox itself (`S/deleg/S`) and makes a child there. Its script
/// touches only those real paths, never the top-level `S` that the
/// view's path `/S` names from the hierarchy's root, in bash, dash and
/// busybox sh; the undo takes it back there.
#[test]
fn a_root_session_script_touches_only_the_groups_it_viewed() {
    let Some(sb) = V1Sandbox::or_skip("rootview", &["pids"]) else {
        return;
    };
    let deleg = sb.mkdir("deleg");
    let inner = sb.mkdir(&format!("deleg/{}", sb.rel));
    let o = vm_common::root_options(sb.dir_of("pids", &deleg));
    let (_, _, hiers) = cgtop::run::locate(&o).unwrap();
    let hiers = Arc::try_unwrap(hiers).unwrap();
    let pids = hiers.layout.holder("pids").unwrap();
    // the view's path of S/deleg/S is /S: the sandbox's own name
    let viewed = cgtop::model::GroupPath::new(&sb.rel);
    let child = viewed.join("child").unwrap();
    let mut ops = vec![write::set_pids_max(&viewed, Limit::Value(3)).on(pids)];
    ops.extend(write::create_group_in(&child, &[pids]));
    let state = tempfile::tempdir().unwrap();
    let (apply, undo) = session(hiers, ops, state.path());
    let text = std::fs::read_to_string(&apply).unwrap();
    let top = sb.path("");
    let inner_child = inner.join("child").unwrap();
    let top_child = top.join("child").unwrap();
    assert_eq!(sb.read("pids", &inner, "pids.max").trim(), "3");
    for sh in shells() {
        // as on the next server: the old values, no child
        sb.write("pids", &inner, "pids.max", "max");
        let _ = std::fs::remove_dir(sb.dir_of("pids", &inner_child));
        let (ok, said) = run_sh(&sh, &apply);
        assert!(ok, "{sh:?}: {said}\n{text}");
        assert_eq!(
            sb.read("pids", &inner, "pids.max").trim(),
            "3",
            "{sh:?}\n{text}"
        );
        assert!(sb.dir_of("pids", &inner_child).is_dir(), "{sh:?}");
        assert_eq!(
            sb.read("pids", &top, "pids.max").trim(),
            "max",
            "{sh:?}\n{text}"
        );
        assert!(!sb.dir_of("pids", &top_child).exists(), "{sh:?}\n{text}");
        let (ok, said) = run_sh(&sh, &undo);
        assert!(ok, "{sh:?} undo: {said}");
        assert_eq!(sb.read("pids", &inner, "pids.max").trim(), "max", "{sh:?}");
        assert!(!sb.dir_of("pids", &inner_child).exists(), "{sh:?}");
        assert_eq!(sb.read("pids", &top, "pids.max").trim(), "max", "{sh:?}");
    }
}

/// `n child1` then Del, for a group that is in some of this host's
/// hierarchies only (the sandbox: cpu, memory, pids and cgroup2; not
/// freezer, devices, name=systemd, ...): the writer passes the others
/// over, and the scripts replay the mkdir and rmdir only where they were
/// done, in bash, dash and busybox sh, apply and undo both.
#[test]
fn a_group_made_where_its_parent_is_replays_only_there() {
    let Some(sb) = V1Sandbox::or_skip("made", &["cpu", "memory", "pids"]) else {
        return;
    };
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let all: Vec<HierId> = layout
        .v2
        .iter()
        .map(|_| HierId::V2)
        .chain((0..layout.v1.len()).map(HierId::V1))
        .collect();
    let without = all.len() - sb.hiers.len();
    if without == 0 {
        println!("skipped: every hierarchy here holds the sandbox");
        return;
    }
    let child = sb.path("child1");
    let mut ops = write::create_group_in(&child, &all);
    ops.extend(write::remove_group_in(&child, &all));
    let state = tempfile::tempdir().unwrap();
    let (apply, undo) = session(Hiers::open(layout), ops, state.path());
    let text = std::fs::read_to_string(&apply).unwrap();
    for sh in shells() {
        let (ok, said) = run_sh(&sh, &apply);
        assert!(ok, "{sh:?}: {said}\n{text}");
        let (ok, said) = run_sh(&sh, &undo);
        assert!(ok, "{sh:?} undo: {said}");
        for h in &sb.hiers {
            assert!(!h.mount.join(child.as_rel_path()).exists(), "{sh:?}");
        }
    }
    // made, and removed, in the sandbox's hierarchies only
    for verb in ["cg_mkdir", "cg_rmdir"] {
        let n = text.matches(&format!("\n{verb} ")).count();
        assert_eq!(n, sb.hiers.len(), "{verb}: {without} passed over\n{text}");
    }
}
