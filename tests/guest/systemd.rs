//! A unit's change made directly and through systemd, against systemd 252
//! as PID 1 on a pure cgroup2 guest (issue 10 item 3, the proof; see
//! tests/vm/README.md, "systemd units"): a transient unit
//! `cgtop-test-<pid>-sd.service` (`systemd-run -p CPUQuota=50% -p
//! MemoryMax=200M sleep 600`), then for cpu.max and memory.max:
//!
//! 1. a direct write through cgtop's writer (`source::writer::perform`),
//!    `systemctl daemon-reload`: the file is back at the unit's property;
//! 2. the same change through systemd (`Op::through_systemd`, the writer
//!    runs `systemctl set-property --runtime`), `systemctl daemon-reload`:
//!    the file keeps it;
//! 3. its undo (through systemd as well), daemon-reload: the unit's value
//!    again, and kept.
//!
//! And a delegated service whose user made a group with a host unit's
//! name (`D/system.slice/systemd-journald.service`): cgtop with `--root D`
//! neither offers nor performs the change through systemd, and the host's
//! journald keeps its TasksMax.
//!
//! Every read is printed as a figure. `#[ignore]`d on the host: the guest
//! runs `systemd::` with `--include-ignored` (tests/vm/run-suite, step
//! "systemd");
//! outside a systemd guest it fails at once instead of passing unchecked.

use crate::vm_common;

use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::{self, Op};
use cgtop::model::GroupPath;
use cgtop::source::writer::perform;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};
use vm_common::{figure, require_vm};

const ROOT: &str = "/sys/fs/cgroup";

/// The transient unit, stopped (and its failure state reset) at the
/// end, also after a failed assertion.
struct Unit(String);

impl Unit {
    /// `systemd-run --unit NAME -p PROP... -- sleep 600`.
    fn start(name: &str, props: &[&str]) -> Self {
        let mut c = Command::new("systemd-run");
        c.args(["--unit", name]);
        for p in props {
            c.args(["-p", p]);
        }
        let started = c
            .args(["--", "sleep", "600"])
            .output()
            .expect("systemd-run");
        assert!(
            started.status.success(),
            "systemd-run: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        Self(name.to_owned())
    }
}

impl Drop for Unit {
    fn drop(&mut self) {
        for verb in ["stop", "reset-failed"] {
            let _ = Command::new("systemctl")
                .args([verb, &self.0])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

fn read(group: &str, file: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(group).join(file))
        .unwrap_or_else(|e| panic!("{group}/{file}: {e}"))
        .trim()
        .to_owned()
}

fn systemctl(args: &[&str]) {
    let out = Command::new("systemctl")
        .args(args)
        .output()
        .expect("systemctl");
    assert!(
        out.status.success(),
        "systemctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `systemctl daemon-reload` returns once the manager has reloaded and
/// re-applied what it applies; a short wait more for the cgroup realize
/// queue, which runs from the event loop after it.
fn daemon_reload() {
    systemctl(&["daemon-reload"]);
    sleep(Duration::from_millis(500));
}

fn write_ok(op: &Op) -> cgtop::model::WriteOutcome {
    let o = perform(Path::new(ROOT), op);
    assert!(o.result.is_ok(), "{op}: {:?}", o.result);
    o
}

#[test]
#[ignore = "runs in the QEMU guest with systemd as PID 1: tests/vm/run-suite"]
fn a_direct_write_is_reverted_by_daemon_reload_and_the_systemd_path_is_kept() {
    let t0 = Instant::now();
    require_vm();
    assert_eq!(
        std::env::var("CGTOP_VM_INIT").as_deref(),
        Ok("systemd"),
        "this case needs systemd as PID 1: tests/vm/run-in-vm --init systemd"
    );
    assert!(
        Path::new("/run/systemd/system").is_dir(),
        "not booted with systemd"
    );
    let name = format!("cgtop-test-{}-sd.service", std::process::id());
    let _unit = Unit::start(&name, &["CPUQuota=50%", "MemoryMax=200M"]);
    let path = format!("system.slice/{name}");
    let g = GroupPath::new(&path);
    let label = "systemd_unit_write";
    let version = Command::new("systemctl")
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .unwrap_or_default();
    figure(label, &format!("{version}; unit {name}"));

    let unit_cpu = "50000 100000";
    let unit_mem = (200u64 << 20).to_string();
    assert_eq!(read(&path, "cpu.max"), unit_cpu);
    assert_eq!(read(&path, "memory.max"), unit_mem);
    let quarter = CpuMax {
        quota: Some(25_000),
        period: 100_000,
    };
    let cases: [(&str, Op, &str, String); 2] = [
        (
            "cpu.max",
            write::set_cpu_max(&g, quarter),
            unit_cpu,
            "25000 100000".to_owned(),
        ),
        (
            "memory.max",
            write::set_memory_limit(&g, MemoryFile::Max, Limit::Value(100 << 20)),
            &unit_mem,
            (100u64 << 20).to_string(),
        ),
    ];
    for (file, op, unit_value, new_value) in cases {
        // 1. direct: cgtop's write(2), then a daemon-reload
        write_ok(&op);
        let written = read(&path, file);
        daemon_reload();
        let after = read(&path, file);
        figure(
            label,
            &format!(
                "{file} direct write: unit {unit_value:?}, written {written:?}, after daemon-reload {after:?}"
            ),
        );
        assert_eq!(written, new_value);
        assert_eq!(
            after, unit_value,
            "daemon-reload did not put the unit's {file} back over a direct write"
        );

        // 2. through systemd: systemctl set-property --runtime, then a
        // daemon-reload
        let via = op.clone().through_systemd(None).expect("a property");
        let args = via.systemctl_args().unwrap().join(" ");
        let t = Instant::now();
        let o = write_ok(&via);
        let took = t.elapsed();
        assert_eq!(o.stored_differs(), None, "{:?}", o.new_readback);
        let written = read(&path, file);
        let t = Instant::now();
        daemon_reload();
        let reload = t.elapsed().saturating_sub(Duration::from_millis(500));
        let after = read(&path, file);
        figure(
            label,
            &format!(
                "{file} through systemd (systemctl {args}): the write took {} ms (old value, \
                 systemctl, read-back), read back {:?}, after daemon-reload ({} ms) {after:?}",
                took.as_millis(),
                o.new_readback.as_deref().map(str::trim),
                reload.as_millis()
            ),
        );
        assert_eq!(written, new_value);
        assert_eq!(after, new_value, "daemon-reload undid the systemd path");

        // 3. its undo goes through systemd too, and is kept
        let back = o.undo().expect("an undo");
        assert!(back.via_systemd(), "{back:?}");
        write_ok(&back);
        daemon_reload();
        let after = read(&path, file);
        figure(
            label,
            &format!(
                "{file} undo through systemd (systemctl {}): after daemon-reload {after:?}",
                back.systemctl_args().unwrap().join(" ")
            ),
        );
        assert_eq!(after, unit_value);
    }
    figure(
        "time",
        &format!("{label} took {:.1} s", t0.elapsed().as_secs_f64()),
    );
}

/// `systemctl show -p PROP --value UNIT`.
fn property(unit: &str, prop: &str) -> String {
    let out = Command::new("systemctl")
        .args(["show", "-p", prop, "--value", unit])
        .output()
        .expect("systemctl");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
#[ignore = "runs in the QEMU guest with systemd as PID 1: tests/vm/run-suite"]
fn a_root_view_of_a_delegated_service_never_changes_the_hosts_unit() {
    let t0 = Instant::now();
    require_vm();
    assert_eq!(
        std::env::var("CGTOP_VM_INIT").as_deref(),
        Ok("systemd"),
        "this case needs systemd as PID 1: tests/vm/run-in-vm --init systemd"
    );
    let host_unit = "systemd-journald.service";
    let host_tasks = property(host_unit, "TasksMax");
    assert_eq!(
        property(host_unit, "ControlGroup"),
        format!("/system.slice/{host_unit}")
    );
    // the delegated service: its process in a leaf, pids and memory
    // handed down to the groups its user makes
    let name = format!("cgtop-test-{}-deleg.service", std::process::id());
    let _unit = Unit::start(&name, &["Delegate=pids memory"]);
    let d = Path::new(ROOT).join("system.slice").join(&name);
    let pid = property(&name, "MainPID");
    std::fs::create_dir(d.join("main")).unwrap();
    std::fs::write(d.join("main/cgroup.procs"), &pid).unwrap();
    std::fs::write(d.join("cgroup.subtree_control"), "+pids +memory").unwrap();
    let fake = d.join("system.slice");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("cgroup.subtree_control"), "+pids +memory").unwrap();
    std::fs::create_dir(fake.join(host_unit)).unwrap();

    // cgtop --root D: the view starts below the hierarchy's root, so the
    // TUI says Presence::BelowRoot and offers no `s` (run::run_tui)
    let opts = vm_common::root_options(d.clone());
    let (_, hier, _) = cgtop::run::locate(&opts).unwrap();
    assert!(
        !hier.is_hierarchy_root(),
        "{} is below the root",
        d.display()
    );
    let g = GroupPath::new(&format!("system.slice/{host_unit}"));
    assert_eq!(
        hier.real_group(&g),
        Some(GroupPath::new(&format!(
            "system.slice/{name}/system.slice/{host_unit}"
        )))
    );
    // the writer, given the change through systemd anyway, refuses it
    let op = write::set_pids_max(&g, Limit::Value(7));
    let via = op
        .clone()
        .through_systemd(None)
        .expect("the view's path has a unit's shape");
    let o = cgtop::source::writer::perform_in(&hier, &via);
    let err = o
        .result
        .clone()
        .expect_err("a change through systemd below --root");
    let fake_max = std::fs::read_to_string(fake.join(host_unit).join("pids.max")).unwrap();
    let tasks_after = property(host_unit, "TasksMax");
    figure(
        "systemd_root_view",
        &format!(
            "--root {}: through systemd refused ({}); host {host_unit} TasksMax {host_tasks} -> {tasks_after}; the user's group pids.max {:?}",
            d.display(),
            err.explanation,
            fake_max.trim()
        ),
    );
    assert_eq!(tasks_after, host_tasks, "the host's unit was changed");
    assert_eq!(fake_max.trim(), "max");
    assert!(!Path::new("/run/systemd/system.control")
        .join(format!("{host_unit}.d"))
        .exists());
    // the direct write lands on the user's group only
    let o = cgtop::source::writer::perform_in(&hier, &op);
    assert!(o.result.is_ok(), "{:?}", o.result);
    assert_eq!(
        std::fs::read_to_string(fake.join(host_unit).join("pids.max"))
            .unwrap()
            .trim(),
        "7"
    );
    assert_eq!(property(host_unit, "TasksMax"), host_tasks);
    for dir in [fake.join(host_unit), fake.clone()] {
        let _ = std::fs::remove_dir(dir);
    }
    figure(
        "time",
        &format!("systemd_root_view took {:.1} s", t0.elapsed().as_secs_f64()),
    );
}
