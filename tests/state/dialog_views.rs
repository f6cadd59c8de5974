//! Every write dialog, drawn over the main view at 80x24 and 120x40 and
//! compared with reviewed insta snapshots (tests/snapshots). The states
//! are reached with keys, as an operator would, on `common::lab_tree`
//! (memory-limited plus the plain groups batch, lab and lab/dd). Nothing
//! comes from the test host: fixed host facts and mount text, one refresh
//! at t = 0 s (no rates), process lists made up (the fixtures' PIDs may be
//! live processes here), writer results built by hand or from the tree
//! with fixed times in the action log.
//!
//! Screens are written as in tests/state/views.rs (`common::screen`):
//! `|`-framed rows, `>` in the gutter where a row holds a reverse-video
//! bar of 20 cells or more.
//!
//! CI never writes snapshots (INSTA_UPDATE=no). To change one: run
//! `INSTA_UPDATE=always cargo test --test state dialog_views::`, read every
//! changed .snap like code, commit it.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::writes::LogEntry;
use cgtop::app::{App, Msg};
use cgtop::cgroupfs::Limit;
use cgtop::model::write::explain::{explain, offer_for};
use cgtop::model::write::guard::Protected;
use cgtop::model::WriteOutcome;
use cgtop::model::{ControllerChange, Errno, GroupPath, MemoryFile, Op};
use cgtop::source::actionlog::{LogPlace, Skipped, Source, Unsafe};
use cgtop::source::collector::Collector;
use cgtop::source::writer;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;

/// The lab tree, writable, after one refresh, with `path` selected and
/// read in full.
fn lab_on(path: &str) -> (App, Collector, tempfile::TempDir) {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, path);
    read_inspection(&mut a, &mut c, 0.0);
    (a, c, dir)
}

/// Snapshots the app at both sizes: `NAME_80x24` and `NAME_120x40`.
fn snap_both(name: &str, a: &mut App) {
    for (w, h) in [(80, 24), (120, 40)] {
        resize(a, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(a, w, h));
    }
}

/// The outcome the writer makes when the kernel refuses `op` with
/// `errno` on the tree at `root` (its explanation from the tree), with
/// the old value and read-back given; the offer only when `offer`.
fn refused(
    root: &Path,
    op: Op,
    errno: Errno,
    offer: bool,
    old: Option<&str>,
    new_readback: Option<&str>,
) -> WriteOutcome {
    let ctx = writer::gather_context(root, &op, errno);
    let offer = if offer {
        offer_for(&op, errno, &ctx)
    } else {
        None
    };
    let error = explain(&op, errno, &ctx);
    WriteOutcome::failed(op, error)
        .with_values(old.map(str::to_owned), new_readback.map(str::to_owned))
        .with_offer(offer)
}

/// The writer's answer arrives, at a fixed time.
fn finished(a: &mut App, c: &mut Collector, out: WriteOutcome) {
    send(
        a,
        c,
        Msg::WriteFinished {
            outcomes: vec![out],
            unix_secs: 1_700_000_000,
        },
    );
}

/// `path` selected, the limits form open on `file` with `text` typed.
fn limits_typed(path: &str, file: &str, text: &str) -> (App, Collector, tempfile::TempDir) {
    let (mut a, mut c, d) = lab_on(path);
    send(&mut a, &mut c, ch('e'));
    goto_field(&mut a, &mut c, file);
    type_text(&mut a, &mut c, text);
    (a, c, d)
}

fn enter(a: &mut App, c: &mut Collector) {
    send(a, c, key(KeyCode::Enter));
}

/// In the open limits form: the cursor onto `file`'s field.
fn goto_field(a: &mut App, c: &mut Collector, file: &str) {
    for _ in 0..20 {
        let cgtop::app::Mode::Limits(f) = &a.mode else {
            panic!("{:?}", a.mode)
        };
        if f.fields[f.cursor].kind.file() == file {
            return;
        }
        send(a, c, key(KeyCode::Down));
    }
    panic!("no field {file}");
}

#[test]
fn controllers() {
    let (mut a, mut c, _d) = lab_on("lab");
    send(&mut a, &mut c, ch('c'));
    // +cpu, -io: both changes listed before anything is written
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, ch(' '));
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, ch(' '));
    snap_both("controllers", &mut a);
}

#[test]
fn columns_chooser() {
    let (mut a, mut c, _d) = lab_on("lab");
    send(&mut a, &mut c, key(KeyCode::F(2)));
    // THR% (the first column not shown, after the five that are)
    // marked, the cursor on it; the --columns line follows the marks
    for _ in 0..5 {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, ch('x'));
    snap_both("columns_chooser", &mut a);
}

#[test]
fn limits_valid_preview() {
    let (mut a, _c, _d) = limits_typed("batch", "memory.max", "512M");
    snap_both("limits_valid_preview", &mut a);
}

#[test]
fn limits_validation_error() {
    let (mut a, mut c, _d) = lab_on("batch");
    send(&mut a, &mut c, ch('e'));
    type_text(&mut a, &mut c, "2 GB");
    // Enter refuses, and the status line says so too
    enter(&mut a, &mut c);
    snap_both("limits_validation_error", &mut a);
}

#[test]
fn limits_io_max_without_memory() {
    let (mut a, _c, _d) = limits_typed("lab/dd", "io.max", "wbps=2M");
    snap_both("limits_io_max_without_memory", &mut a);
}

/// Current values in the units an operator types: memory.max 1.5G (not
/// 1610612736), memory.high rounded and marked, io.max and io.latency on
/// the device's name; the cursor on io.max, the device rule on its line.
#[test]
fn limits_current_values_in_units() {
    let dir = lab_tree();
    let b = dir.path().join("batch");
    for (file, text) in [
        ("memory.max", "1610612736\n"),
        ("memory.high", "1000000000\n"),
        (
            "io.max",
            "254:0 rbps=2097152 wbps=max riops=max wiops=120\n",
        ),
        ("io.latency", "254:0 target=10000\n"),
    ] {
        std::fs::write(b.join(file), text).unwrap();
    }
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 0.0);
    send(&mut a, &mut c, ch('e'));
    goto_field(&mut a, &mut c, "io.max");
    snap_both("limits_current_values_in_units", &mut a);
}

/// Missing files say why: on a hybrid host with cpu and memory on cgroup
/// v1, and a kernel without io.latency (Debian's), for lab/dd (io only).
#[test]
fn limits_missing_files_say_why() {
    let dir = lab_tree();
    std::fs::remove_file(dir.path().join("lab/dd/io.latency")).unwrap();
    let mount = cgtop::model::MountInfo {
        root: "/sys/fs/cgroup/unified".into(),
        mode: cgtop::model::MountMode::Hybrid {
            v1_controllers: ["cpu", "cpuacct", "memory"].map(String::from).to_vec(),
        },
    };
    let (mut a, mut c) = app_on(dir.path(), mount, 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, "lab/dd");
    read_inspection(&mut a, &mut c, 0.0);
    send(&mut a, &mut c, ch('e'));
    // the form starts on io.max, the first file there is; two fields up
    // is memory.swap.max
    send(&mut a, &mut c, key(KeyCode::Up));
    send(&mut a, &mut c, key(KeyCode::Up));
    snap_both("limits_missing_files_say_why", &mut a);
}

#[test]
fn raw_editor_choosing() {
    let (mut a, mut c, _d) = lab_on("batch");
    send(&mut a, &mut c, ch('E'));
    for _ in 0..20 {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    snap_both("raw_editor_choosing", &mut a);
}

#[test]
fn raw_editor_typing() {
    let (mut a, mut c, _d) = lab_on("batch");
    send(&mut a, &mut c, ch('E'));
    let cgtop::app::Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = r
        .files
        .iter()
        .position(|(n, _)| n == "memory.oom.group")
        .unwrap();
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    enter(&mut a, &mut c);
    type_text(&mut a, &mut c, "1");
    snap_both("raw_editor_typing", &mut a);
}

/// A hybrid host's raw editor: v1 names (label:file) longer than any v2
/// name. Each is cut with '…' where it does not fit, and a space always
/// parts it from its value (they ran together: "cpuacct:cgroup.clone_children0").
#[test]
fn raw_editor_long_v1_names() {
    let (mut a, mut c, _d) = lab_on("batch");
    send(&mut a, &mut c, ch('E'));
    let cgtop::app::Mode::Raw(r) = &mut a.mode else {
        panic!("{:?}", a.mode)
    };
    r.files = [
        ("cpuacct:cgroup.clone_children", "0"),
        ("cpuset:cpuset.mem_exclusive", "1"),
        ("cpuset:cpuset.memory_spread_page", "0"),
        (
            "memory:memory.kmem.tcp.limit_in_bytes",
            "9223372036854771712",
        ),
        ("name=systemd:notify_on_release", "0"),
        (
            "blkio:blkio.throttle.read_bps_device",
            "8:0 1048576 | 8:16 2097152",
        ),
        ("memory.max", "max"),
    ]
    .map(|(n, v)| (n.to_owned(), v.to_owned()))
    .to_vec();
    for (w, h) in [(80, 24), (120, 40)] {
        resize(&mut a, w, h);
        let s = screen(&a, w, h);
        assert!(!s.contains("children0") && !s.contains("exclusive1"), "{s}");
    }
    snap_both("raw_editor_long_v1_names", &mut a);
}

/// The controllers dialog on /lab/dd, `p` on hugetlb (the root has it,
/// nobody hands it down).
fn plan_for_hugetlb(a: &mut App, c: &mut Collector) {
    send(a, c, ch('c'));
    let cgtop::app::Mode::Controllers(d) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = d.items.iter().position(|i| i.name == "hugetlb").unwrap();
    for _ in 0..at {
        send(a, c, key(KeyCode::Down));
    }
    send(a, c, ch('p'));
}

/// /lab/dd holds a process: the plan's last step would be EBUSY, so it
/// is not offered; the box names the step.
#[test]
fn plan_along_the_path_refused() {
    let (mut a, mut c, _d) = lab_on("lab/dd");
    plan_for_hugetlb(&mut a, &mut c);
    snap_both("plan_along_the_path_refused", &mut a);
}

/// /lab/dd without a process: the plan is asked, the root's step and
/// /lab's said as reaching beyond the group, y only.
#[test]
fn plan_along_the_path_asked() {
    let (mut a, mut c, d) = lab_on("lab/dd");
    std::fs::write(d.path().join("lab/dd/cgroup.procs"), "").unwrap();
    read_inspection(&mut a, &mut c, 1.0);
    plan_for_hugetlb(&mut a, &mut c);
    snap_both("plan_along_the_path_asked", &mut a);
}

#[test]
fn confirm_plain() {
    let (mut a, mut c, _d) = lab_on("batch");
    send(&mut a, &mut c, ch('f'));
    snap_both("confirm_plain", &mut a);
}

#[test]
fn confirm_typed_name() {
    let (mut a, mut c, _d) = lab_on("batch");
    a.protected = Protected {
        own: Some(GroupPath::new("batch")),
        ..Protected::default()
    };
    send(&mut a, &mut c, ch('K'));
    type_text(&mut a, &mut c, "bat");
    snap_both("confirm_typed_name", &mut a);
}

#[test]
fn confirm_systemd_unit() {
    let (mut a, mut c, _d) = limits_typed(PG_SERVICE, "memory.max", "512M");
    // systemd runs here: s offers the change through it
    a.systemd = cgtop::model::write::systemd::Presence::Ready;
    enter(&mut a, &mut c);
    snap_both("confirm_systemd_unit", &mut a);
}

/// A docker container's group (its scope under system.slice, the lab
/// tree's batch files), named web-1 by its runtime: the identity the
/// readers would find, set on the refresh's sample.
fn docker_container_on() -> (App, Collector, tempfile::TempDir) {
    const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
    let dir = lab_tree();
    let scope = format!("system.slice/docker-{ID}.scope");
    crate::common::group_like(dir.path(), &scope, "batch");
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, &scope);
    read_inspection(&mut a, &mut c, 0.0);
    let path = GroupPath::new(&scope);
    let mut id = cgtop::model::identity::Identity::of_name(&path).unwrap();
    id.name = Some("web-1".into());
    id.image = Some("nginx:1.27".into());
    // read from docker's record, the group root's
    id.vouched = true;
    let d = a.data.as_mut().unwrap();
    let i = d
        .refresh
        .snapshot
        .groups
        .iter()
        .position(|g| g.path == path)
        .unwrap();
    d.refresh.snapshot.groups[i].identity = Some(std::sync::Arc::new(id));
    (a, c, dir)
}

#[test]
fn confirm_owned_container_limit() {
    // a limit on a docker container: docker's own update, and that a
    // direct write lasts until the container restarts
    let (mut a, mut c, _d) = docker_container_on();
    send(&mut a, &mut c, ch('e'));
    goto_field(&mut a, &mut c, "memory.max");
    type_text(&mut a, &mut c, "512M");
    enter(&mut a, &mut c);
    snap_both("confirm_owned_container_limit", &mut a);
}

#[test]
fn confirm_owned_container_freeze() {
    // docker pause against cgroup.freeze: what each leaves docker believing
    let (mut a, mut c, _d) = docker_container_on();
    send(&mut a, &mut c, ch('f'));
    snap_both("confirm_owned_container_freeze", &mut a);
}

/// The confirmation's words at 200x50, the frame's `|` and `│` and the
/// wrapping taken away.
fn dialog_words(a: &mut App) -> String {
    resize(a, 200, 50);
    let text = screen(a, 200, 50);
    let rows: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let (top, left, right) = rows
        .iter()
        .enumerate()
        .find_map(|(i, r)| {
            let l = r.iter().position(|&c| c == '┌')?;
            let w = r[l..].iter().position(|&c| c == '┐')?;
            Some((i, l, l + w))
        })
        .expect("a dialog");
    rows[top + 1..]
        .iter()
        .take_while(|r| r.get(left) == Some(&'│'))
        .map(|r| {
            r[left + 1..right]
                .iter()
                .collect::<String>()
                .trim()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Before the resolver vouched for the identity (the first frames, when
/// the sample has none and the name is all there is; or a group whose
/// runtime record was not read for a group root owns), no runtime command
/// is shown for a freeze, a kill or a limit: the name is anyone's to
/// choose in a delegated subtree, and `docker kill <id>` would kill the
/// real container of that id. The dialog says the owner is not yet known.
#[test]
fn a_containers_name_alone_gets_no_runtime_command_in_the_confirmation() {
    for resolved in [false, true] {
        for act in ["freeze", "kill", "limit"] {
            let (mut a, mut c, _d) = docker_container_on();
            let d = a.data.as_mut().unwrap();
            for g in &mut d.refresh.snapshot.groups {
                if let Some(id) = &g.identity {
                    g.identity = resolved.then(|| {
                        let mut id = (**id).clone();
                        id.vouched = false;
                        std::sync::Arc::new(id)
                    });
                }
            }
            match act {
                "freeze" => {
                    send(&mut a, &mut c, ch('f'));
                }
                "kill" => {
                    send(&mut a, &mut c, ch('K'));
                }
                _ => {
                    send(&mut a, &mut c, ch('e'));
                    goto_field(&mut a, &mut c, "memory.max");
                    type_text(&mut a, &mut c, "512M");
                    enter(&mut a, &mut c);
                }
            }
            let words = dialog_words(&mut a);
            let case = format!("{act}, resolved {resolved}: {words}");
            assert!(words.contains("owner is not yet known"), "{case}");
            assert!(words.contains("as its name alone says"), "{case}");
            assert!(!words.contains("'s way"), "{case}");
            for cmd in ["docker pause", "docker kill", "docker update"] {
                assert!(!words.contains(cmd), "{case}");
            }
        }
    }
}

#[test]
fn move_picker_filtered() {
    let (mut a, mut c, _d) = lab_on("batch");
    set_processes(
        &mut a,
        vec![
            process(4_190_201, "root", 0.0, 12, "worker --queue a"),
            process(4_190_202, "root", 0.0, 14, "worker --queue b"),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "lab");
    send(&mut a, &mut c, key(KeyCode::Down));
    snap_both("move_picker_filtered", &mut a);
}

#[test]
fn new_group_error() {
    let (mut a, mut c, _d) = lab_on("lab");
    send(&mut a, &mut c, ch('n'));
    type_text(&mut a, &mut c, "cpu.max");
    snap_both("new_group_error", &mut a);
}

#[test]
fn leaf_fix() {
    let (mut a, mut c, d) = lab_on("batch");
    let op = cgtop::model::write::set_subtree_control(
        &GroupPath::new("batch"),
        &[ControllerChange::enable("cpu")],
    );
    let out = refused(d.path(), op, Errno::BUSY, true, None, None);
    finished(&mut a, &mut c, out);
    snap_both("leaf_fix", &mut a);
}

#[test]
fn message_after_an_error() {
    let (mut a, mut c, d) = lab_on("batch");
    let op = cgtop::model::write::set_memory_limit(
        &GroupPath::new("batch"),
        MemoryFile::Max,
        Limit::Value(536_870_912),
    );
    let out = refused(
        d.path(),
        op,
        Errno::ACCESS,
        false,
        Some("max\n"),
        Some("max\n"),
    );
    finished(&mut a, &mut c, out);
    snap_both("message_after_an_error", &mut a);
}

#[test]
fn action_log_two_entries() {
    let (mut a, mut c, d) = lab_on("batch");
    let ok = WriteOutcome::done(
        cgtop::model::write::set_memory_limit(
            &GroupPath::new("batch"),
            MemoryFile::Max,
            Limit::Value(536_870_912),
        ),
        Some("max\n".into()),
        Some("536870912\n".into()),
    );
    let op = cgtop::model::write::set_subtree_control(
        &GroupPath::new("batch"),
        &[ControllerChange::enable("cpu")],
    );
    let failed = refused(d.path(), op, Errno::BUSY, false, Some(""), None);
    a.log = vec![
        LogEntry {
            unix_secs: 1_700_000_000,
            outcome: ok,
        },
        LogEntry {
            unix_secs: 1_700_000_042,
            outcome: failed,
        },
    ];
    // root under `su`: the caller's XDG_STATE_HOME was refused
    a.log_place = Some(LogPlace {
        path: Some("/root/.local/state/cgtop/actions.log".into()),
        skipped: vec![Skipped {
            source: Source::XdgStateHome,
            path: "/home/u/.local/state/cgtop/actions.log".into(),
            why: Unsafe::NotOwned {
                path: "/home/u".into(),
                owner: 1000,
                want: 0,
            },
        }],
    });
    send(&mut a, &mut c, ch('L'));
    snap_both("action_log_two_entries", &mut a);
}

#[test]
fn action_log_with_the_undo_and_redo_stacks() {
    let (mut a, mut c, _d) = lab_on("batch");
    let batch = GroupPath::new("batch");
    let writes = [
        (
            cgtop::model::write::set_memory_limit(
                &batch,
                MemoryFile::Max,
                Limit::Value(536_870_912),
            ),
            "max\n",
        ),
        (
            cgtop::model::write::set_pids_max(&batch, Limit::Value(100)),
            "1140\n",
        ),
        (
            cgtop::model::write::set_io_weight(&batch, None, 200),
            "default 100\n",
        ),
    ];
    for (op, old) in writes {
        finished(
            &mut a,
            &mut c,
            WriteOutcome::done(op, Some(old.into()), None),
        );
    }
    // u: io.weight back to default 100, and onto the redo stack
    let fx = send(&mut a, &mut c, ch('u'));
    let [cgtop::app::Effect::Write(cgtop::app::writes::WriteRequest::Ops(ops))] = fx.as_slice()
    else {
        panic!("{fx:?}")
    };
    let back = ops[0].clone();
    finished(
        &mut a,
        &mut c,
        WriteOutcome::done(back, Some("default 200\n".into()), None),
    );
    send(&mut a, &mut c, ch('L'));
    snap_both("action_log_with_the_undo_and_redo_stacks", &mut a);
}

#[test]
fn every_dialog_survives_a_tiny_terminal() {
    let (mut a, mut c, _d) = lab_on("batch");
    let keys: [&[Msg]; 5] = [
        &[ch('c')],
        &[ch('e'), ch('x')],
        &[ch('E'), key(KeyCode::Enter), ch('1')],
        &[ch('K')],
        &[ch('n'), ch('/')],
    ];
    for seq in keys {
        for k in seq {
            send(&mut a, &mut c, k.clone());
        }
        assert_ne!(a.mode, cgtop::app::Mode::Normal, "{seq:?}");
        for (w, h) in [(1, 1), (10, 5), (20, 8), (40, 10), (200, 3), (3, 200)] {
            let _ = screen(&a, w, h);
        }
        a.mode = cgtop::app::Mode::Normal;
    }
}
