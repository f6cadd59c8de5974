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

#[allow(dead_code, unused_imports)]
mod vm_common;

use cgtop::app::writes::WriteRequest;
use cgtop::app::Msg;
use cgtop::cgroupfs::Limit;
use cgtop::model::layout::HierId;
use cgtop::model::write::{self, v1_files, V1MemoryFile};
use cgtop::source::actionlog::ActionLog;
use cgtop::source::hier::Hiers;
use std::path::Path;
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
    let out = Command::new("bash")
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
    let apply = state.path().join("apply.sh");
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["export-log", "--log"])
        .arg(&log)
        .arg("-o")
        .arg(&apply)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let undo = state.path().join("apply.undo.sh");
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
