//! Issue 11, item 3 (the app's part): the write actions on a host with
//! cgroup v1 hierarchies, through the existing keys and dialogs, driven
//! with keys through `app::update` over the fixture layout of
//! `v1detail_fixture` (a tempdir laid out like /sys/fs/cgroup: `unified`,
//! `cpu,cpuacct`, `memory`, `blkio`, `pids`, `freezer`, `systemd`, texts
//! captured from this host). The ops each action produces are asserted
//! exactly: the file, the contents and the hierarchy.
//!
//! The fixture layout: web.service is in every v1 hierarchy with limits
//! set (CFS quota 50%, memory limit 64M, memsw unlimited, blkio throttles,
//! bfq weight 200, pids.max 42, freezer.state FREEZING); worker.service is
//! only in `cpu,cpuacct` and `systemd`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::v1detail_fixture;

use cgtop::app::dialog::confirm::Reason;
use cgtop::app::dialog::limits::{FieldKind, Preview};
use cgtop::app::writes::WriteRequest;
use cgtop::app::{App, Mode};
use cgtop::cgroupfs::Limit;
use cgtop::model::host::layout::HierId;
use cgtop::model::write::Op;
use cgtop::model::write::{self, Throttle, V1MemoryFile};
use cgtop::model::{GroupPath, MountInfo, MountMode};
use cgtop::source::collector::Collector;
use common::lab::{confirm, field, form, writes};
use common::*;
use crossterm::event::KeyCode;
use std::sync::Arc;
use v1detail_fixture::{hiers_of, layout_tree, WEB, WORKER};

/// The app on the fixture layout with `path` selected and inspected:
/// hybrid (cgroup2 at `unified`, the primary) or, with `v1_only`, the
/// same layout without `unified` (a v1-only host: `systemd` is the
/// primary), writable, with the layout's hierarchies.
fn on_layout(path: &str, v1_only: bool) -> (App, Collector, tempfile::TempDir) {
    let t = layout_tree();
    let (root, mount) = if v1_only {
        std::fs::remove_dir_all(t.path().join("unified")).unwrap();
        let root = t.path().join("systemd");
        let mode = MountMode::V1 {
            v1_controllers: ["blkio", "cpu", "cpuacct", "freezer", "memory", "pids"]
                .map(String::from)
                .to_vec(),
        };
        (root.clone(), MountInfo { root, mode })
    } else {
        (t.path().join("unified"), hybrid_mount())
    };
    let hiers = Arc::new(hiers_of(t.path()));
    let (mut a, _) = app_on(&root, mount, 120, 40);
    a.layout = hiers.layout.clone();
    a.read_only = None;
    let mut c = collector_of_layout(&root, &hiers);
    select(&mut a, &mut c, path);
    tick(&mut a, &mut c, 1.0);
    read_inspection(&mut a, &mut c, 1.0);
    (a, c, t)
}

fn g(p: &str) -> GroupPath {
    GroupPath::new(p)
}

fn hier(a: &App, controller: &str) -> HierId {
    let h = a.layout.holder(controller).unwrap();
    assert!(matches!(h, HierId::V1(_)), "{controller} {h:?}");
    h
}

/// Ops as by path: each without the inode of the group it was asked
/// about, nor a kill's in the freezer hierarchy (each op carries its own
/// hierarchy's, tested on its own in
/// `every_op_is_held_to_the_groups_directory_in_the_hierarchy_it_writes`).
fn by_path(ops: &[Op]) -> Vec<Op> {
    ops.iter()
        .cloned()
        .map(|o| o.of_group(None).thawed_in(None))
        .collect()
}

/// The ops of the one write request among `fx`.
fn ops_of(fx: &[cgtop::app::Effect]) -> Vec<Op> {
    match writes(fx).as_slice() {
        [WriteRequest::Ops(ops)] => ops.clone(),
        other => panic!("not one plain write: {other:?}"),
    }
}

/// Enter in the limits form: the ops written at once, or those the
/// question holds (a systemd unit's group asks first), the question then
/// cancelled and the form opened again.
fn enter(a: &mut App, c: &mut Collector) -> Vec<Op> {
    let fx = send(a, c, key(KeyCode::Enter));
    if !writes(&fx).is_empty() {
        return by_path(&ops_of(&fx));
    }
    let ops = by_path(confirm(a).ops());
    send(a, c, key(KeyCode::Esc));
    if !matches!(a.mode, Mode::Limits(_)) {
        send(a, c, ch('e'));
    }
    ops
}

/// In the open limits form: the cursor onto the field of `kind`.
fn goto(a: &mut App, c: &mut Collector, kind: FieldKind) {
    let want = form(a)
        .fields
        .iter()
        .position(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("{kind:?} is no field"));
    while form(a).cursor < want {
        send(a, c, key(KeyCode::Down));
    }
    while form(a).cursor > want {
        send(a, c, key(KeyCode::Up));
    }
}

fn typed(a: &mut App, c: &mut Collector, kind: FieldKind, text: &str) {
    goto(a, c, kind);
    while !field(a).input.is_empty() {
        send(a, c, key(KeyCode::Backspace));
    }
    type_text(a, c, text);
}

#[test]
fn the_limits_form_on_v1_holders_edits_the_v1_files() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('e'));
    let kinds: Vec<FieldKind> = form(&a).fields.iter().map(|f| f.kind).collect();
    // cpu, memory, pids and io are all on v1 in this layout
    assert_eq!(
        kinds,
        [
            FieldKind::V1Cfs,
            FieldKind::V1Shares,
            FieldKind::V1Memory(V1MemoryFile::Limit),
            FieldKind::V1Memory(V1MemoryFile::MemswLimit),
            FieldKind::V1Memory(V1MemoryFile::SoftLimit),
            FieldKind::PidsMax,
            FieldKind::V1Throttle(Throttle::ReadBps),
            FieldKind::V1Throttle(Throttle::WriteBps),
            FieldKind::V1Throttle(Throttle::ReadIops),
            FieldKind::V1Throttle(Throttle::WriteIops),
            FieldKind::V1BlkioWeight(true),
        ]
    );
    let cpu = hier(&a, "cpu");
    let f = &form(&a).fields[0];
    assert_eq!(f.current.as_deref(), Some("50000 100000"));
    assert_eq!(f.place.as_deref(), Some("the v1 cpu,cpuacct hierarchy"));
    // "25%" as on v2: quota = 0.25 * the period
    typed(&mut a, &mut c, FieldKind::V1Cfs, "25%");
    assert_eq!(
        field(&a).op,
        Some(write::set_cfs_quota(&g(WEB), cpu, Some(25_000)))
    );
    assert_eq!(
        field(&a).preview,
        Preview::Writes {
            contents: "25000".into(),
            file: "cpu.cfs_quota_us".into()
        }
    );
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("Enter writes \"25000\" to cpu.cfs_quota_us in the v1 cpu,cpuacct"),
        "{s}"
    );
    assert_eq!(
        enter(&mut a, &mut c),
        [write::set_cfs_quota(&g(WEB), cpu, Some(25_000))]
    );
    // a new period goes before the quota; max is -1
    typed(&mut a, &mut c, FieldKind::V1Cfs, "20000 50000");
    assert_eq!(
        enter(&mut a, &mut c),
        [
            write::set_cfs_period(&g(WEB), cpu, 50_000),
            write::set_cfs_quota(&g(WEB), cpu, Some(20_000))
        ]
    );
    typed(&mut a, &mut c, FieldKind::V1Cfs, "max");
    assert_eq!(field(&a).op, Some(write::set_cfs_quota(&g(WEB), cpu, None)));
    typed(&mut a, &mut c, FieldKind::V1Shares, "512");
    assert_eq!(
        enter(&mut a, &mut c),
        [write::set_cpu_shares(&g(WEB), cpu, 512)]
    );
    typed(&mut a, &mut c, FieldKind::V1Shares, "1");
    assert!(matches!(field(&a).preview, Preview::Invalid(_)));
    // pids.max in the v1 pids hierarchy
    let pids = hier(&a, "pids");
    typed(&mut a, &mut c, FieldKind::PidsMax, "100");
    assert_eq!(
        enter(&mut a, &mut c),
        [write::set_pids_max(&g(WEB), Limit::Value(100)).on(pids)]
    );
}

#[test]
fn the_memory_limit_and_memsw_in_the_kernels_order() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('e'));
    let mem = hier(&a, "memory");
    let m = 1u64 << 20;
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "128M",
    );
    assert_eq!(
        enter(&mut a, &mut c),
        [write::set_v1_memory(
            &g(WEB),
            mem,
            V1MemoryFile::Limit,
            Limit::Value(128 * m)
        )]
    );
    // both, rising from 64M: memsw first
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "256M 512M",
    );
    assert!(
        matches!(&field(&a).preview, Preview::Does(w) if w.contains("memory.memsw.limit_in_bytes") && w.contains(", then ")),
        "{:?}",
        field(&a).preview
    );
    assert_eq!(
        enter(&mut a, &mut c),
        [
            write::set_v1_memory(
                &g(WEB),
                mem,
                V1MemoryFile::MemswLimit,
                Limit::Value(512 * m)
            ),
            write::set_v1_memory(&g(WEB), mem, V1MemoryFile::Limit, Limit::Value(256 * m)),
        ]
    );
    // both, falling: the limit first
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "32M 48M",
    );
    assert_eq!(
        enter(&mut a, &mut c),
        [
            write::set_v1_memory(&g(WEB), mem, V1MemoryFile::Limit, Limit::Value(32 * m)),
            write::set_v1_memory(&g(WEB), mem, V1MemoryFile::MemswLimit, Limit::Value(48 * m)),
        ]
    );
    // memsw below the limit (64M): refused here with the way out
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::MemswLimit),
        "32M",
    );
    match &field(&a).preview {
        Preview::Invalid(e) => assert!(e.contains("cannot go below memory.limit_in_bytes"), "{e}"),
        p => panic!("{p:?}"),
    }
    assert_eq!(field(&a).op, None);
    // the limit above memsw in one field: refused
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "1G 512M",
    );
    assert!(matches!(field(&a).preview, Preview::Invalid(_)));
    // max is -1
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::SoftLimit),
        "max",
    );
    assert_eq!(
        field(&a).op.as_ref().unwrap().as_write().unwrap().contents,
        "-1"
    );
}

#[test]
fn blkio_throttle_per_device_through_the_forms_device_picker() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('e'));
    let blkio = hier(&a, "blkio");
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Throttle(Throttle::WriteBps),
        "1M",
    );
    let Some(dev) = form(&a).devices.get(form(&a).device).cloned() else {
        println!("no block device: only the refusal is checked");
        // no block device at all: said, nothing written
        assert!(matches!(field(&a).preview, Preview::Invalid(_)));
        return;
    };
    if dev.partition {
        assert!(matches!(field(&a).preview, Preview::Invalid(_)));
        return;
    }
    let want =
        write::set_blkio_throttle(&g(WEB), blkio, Throttle::WriteBps, dev.dev, Some(1 << 20));
    assert_eq!(field(&a).op, Some(want.clone()));
    assert_eq!(
        want.describe_in(&a.layout),
        format!(
            "write {} 1048576 to blkio.throttle.write_bps_device of /{WEB} in the v1 blkio hierarchy",
            dev.dev
        )
    );
    assert_eq!(enter(&mut a, &mut c), [want]);
    // 0 removes the device's rule
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Throttle(Throttle::ReadIops),
        "0",
    );
    assert_eq!(
        field(&a).op,
        Some(write::set_blkio_throttle(
            &g(WEB),
            blkio,
            Throttle::ReadIops,
            dev.dev,
            None
        ))
    );
    assert_eq!(
        field(&a).op.as_ref().unwrap().as_write().unwrap().contents,
        format!("{} 0", dev.dev)
    );
    typed(&mut a, &mut c, FieldKind::V1BlkioWeight(true), "300");
    assert_eq!(
        enter(&mut a, &mut c),
        [write::set_blkio_weight(&g(WEB), blkio, true, 300)]
    );
}

#[test]
fn a_field_of_a_hierarchy_without_the_group_says_so() {
    let (mut a, mut c, _t) = on_layout(WORKER, false);
    send(&mut a, &mut c, ch('e'));
    let f = form(&a);
    let mem = f
        .fields
        .iter()
        .find(|x| x.kind == FieldKind::V1Memory(V1MemoryFile::Limit))
        .unwrap();
    assert_eq!(mem.current, None);
    match &mem.preview {
        Preview::Missing(m) => {
            assert!(
                m.to_string().contains("not in the v1 memory hierarchy"),
                "{m}"
            );
        }
        p => panic!("{p:?}"),
    }
}

#[test]
fn freeze_and_thaw_through_freezer_state_on_a_v1_only_host() {
    let (mut a, mut c, _t) = on_layout(WEB, true);
    let frz = hier(&a, "freezer");
    // FREEZING: asked to freeze, so f thaws (asked first only because
    // web.service is a systemd unit)
    send(&mut a, &mut c, ch('f'));
    assert_eq!(
        by_path(confirm(&a).ops()),
        [write::set_freezer(&g(WEB), frz, false)]
    );
    // not in the v1 freezer hierarchy: nothing to freeze it with
    let (mut a, mut c, _t) = on_layout(WORKER, true);
    let fx = send(&mut a, &mut c, ch('f'));
    assert!(writes(&fx).is_empty());
    let st = a.status.as_ref().unwrap().text.clone();
    assert!(st.contains("not in the v1 freezer hierarchy"), "{st}");
}

#[test]
fn a_v1_freeze_asks_first_and_names_the_file_and_hierarchy() {
    let (mut a, mut c, t) = on_layout(WEB, true);
    std::fs::write(
        t.path().join("freezer").join(WEB).join("freezer.state"),
        "THAWED\n",
    )
    .unwrap();
    read_inspection(&mut a, &mut c, 2.0);
    let frz = hier(&a, "freezer");
    let fx = send(&mut a, &mut c, ch('f'));
    assert!(writes(&fx).is_empty());
    let q = confirm(&a);
    assert_eq!(by_path(q.ops()), [write::set_freezer(&g(WEB), frz, true)]);
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    assert!(
        lines.iter().any(|l| l.contains(
            "freeze /demo.slice/web.service and everything below it (write FROZEN to freezer.state) in the v1 freezer hierarchy"
        )),
        "{lines:?}"
    );
}

#[test]
fn kill_on_a_v1_only_host_signals_through_the_freezer_hierarchy() {
    let (mut a, mut c, _t) = on_layout(WEB, true);
    let frz = hier(&a, "freezer");
    send(&mut a, &mut c, ch('K'));
    let q = confirm(&a);
    assert_eq!(by_path(q.ops()), [write::kill(&g(WEB)).on(frz)]);
    assert!(
        q.reasons.contains(&Reason::NoCgroupKillV1),
        "{:?}",
        q.reasons
    );
    assert!(!q.reasons.contains(&Reason::NoCgroupKill));
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("cgroup v1 has no cgroup.kill")),
        "{lines:?}"
    );
    // a group not in the freezer hierarchy: the primary one's processes
    let (mut a, mut c, _t) = on_layout(WORKER, true);
    send(&mut a, &mut c, ch('K'));
    let primary = a.layout.primary().unwrap();
    assert_eq!(
        by_path(confirm(&a).ops()),
        [write::kill(&g(WORKER)).on(primary)]
    );
    assert!(
        confirm(&a).ops()[0].ino().is_some(),
        "held to the group shown"
    );
}

/// The inode of a fixture directory.
fn ino(d: &std::path::Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap())
}

/// Each op built from the shown group is held to the group's directory
/// in the hierarchy it writes (each v1 hierarchy's directory has an inode
/// of its own), as the last refresh's walk found it: never the primary's
/// inode for a v1 write, never by path. The undo of a held v1 write goes
/// to the same directory.
#[test]
fn every_op_is_held_to_the_groups_directory_in_the_hierarchy_it_writes() {
    // hybrid: a limit in the v1 memory hierarchy, a CFS quota in cpu
    let (mut a, mut c, t) = on_layout(WEB, false);
    let dir = |h: &str, g: &str| t.path().join(h).join(g);
    send(&mut a, &mut c, ch('e'));
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "128M",
    );
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    let ops = if writes(&fx).is_empty() {
        confirm(&a).ops().to_vec()
    } else {
        ops_of(&fx)
    };
    let mem = hier(&a, "memory");
    assert_eq!(
        ops,
        [
            write::set_v1_memory(&g(WEB), mem, V1MemoryFile::Limit, Limit::Value(128 << 20))
                .of_group(Some(ino(&dir("memory", WEB))))
        ]
    );
    assert_ne!(ino(&dir("memory", WEB)), ino(&dir("unified", WEB)));
    // its undo: the same hierarchy, the same directory
    let mut done = cgtop::model::WriteOutcome::from_result(ops[0].clone(), Ok(()));
    done.old = Some("67108864\n".into());
    let back = cgtop::model::write::history::Entry::from_outcomes(&[done])
        .unwrap()
        .undo_ops();
    assert_eq!(back.len(), 1);
    assert_eq!(
        (back[0].hier(), back[0].ino()),
        (mem, Some(ino(&dir("memory", WEB))))
    );

    // a move into worker.service: one op per hierarchy holding it, each
    // held to the directory there
    let systemd = (a.layout.v1.iter())
        .position(|m| m.name.as_deref() == Some("systemd"))
        .map(HierId::V1)
        .unwrap();
    let (mut a, mut c, t) = on_layout(WEB, false);
    let dir = |h: &str, g: &str| t.path().join(h).join(g);
    set_processes(&mut a, vec![process(4242, "root", 0.0, 1, "worker")]);
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "worker");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let want: Vec<Op> = [
        (HierId::V2, "unified"),
        (hier(&a, "cpu"), "cpu,cpuacct"),
        (systemd, "systemd"),
    ]
    .iter()
    .map(|&(h, d)| {
        write::move_process_in(4242, &g(WORKER), false, h).of_group(Some(ino(&dir(d, WORKER))))
    })
    .collect();
    assert_eq!(confirm(&a).ops(), want);
    // an op in a hierarchy the scan listed without the group: held to no
    // directory, so that one made there since is refused
    let memory_limit =
        write::set_v1_memory(&g(WORKER), mem, V1MemoryFile::Limit, Limit::Value(1 << 20));
    assert_eq!(
        cgtop::app::dialog::confirm::held_to_shown(&a, vec![memory_limit.clone()]),
        [memory_limit.of_group(Some(write::NOT_THERE))]
    );

    // v1-only: the freezer's freezer.state, and K in the primary
    // (name=systemd) hierarchy of a group not in the freezer's
    let (mut a, mut c, t) = on_layout(WEB, true);
    send(&mut a, &mut c, ch('f'));
    assert_eq!(
        confirm(&a).ops(),
        [write::set_freezer(&g(WEB), hier(&a, "freezer"), false)
            .of_group(Some(ino(&t.path().join("freezer").join(WEB))))]
    );
    // its thaw in the freezer hierarchy, which the scan listed without
    // the group: held to no directory there
    let (mut a, mut c, t) = on_layout(WORKER, true);
    send(&mut a, &mut c, ch('K'));
    assert_eq!(
        confirm(&a).ops(),
        [write::kill(&g(WORKER))
            .on(a.layout.primary().unwrap())
            .of_group(Some(ino(&t.path().join("systemd").join(WORKER))))
            .thawed_in(Some(write::NOT_THERE))]
    );
    // hybrid: K through cgroup2, its thaw held to the group's directory
    // in the v1 freezer hierarchy
    let (mut a, mut c, t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('K'));
    assert_eq!(
        confirm(&a).ops(),
        [write::kill(&g(WEB))
            .of_group(Some(ino(&t.path().join("unified").join(WEB))))
            .thawed_in(Some(ino(&t.path().join("freezer").join(WEB))))]
    );
}

#[test]
fn new_group_and_remove_in_every_hierarchy_said_before() {
    let (mut a, mut c, t) = on_layout(WEB, false);
    let every: Vec<HierId> = std::iter::once(HierId::V2)
        .chain((0..a.layout.v1.len()).map(HierId::V1))
        .collect();
    assert_eq!(every.len(), 7);
    send(&mut a, &mut c, ch('n'));
    type_text(&mut a, &mut c, "batch");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    let path = g(WEB).join("batch").unwrap();
    // each held to the parent's directory in its hierarchy
    let parent = |h: HierId| match h {
        HierId::V2 => t.path().join("unified").join(WEB),
        HierId::V1(i) => a.layout.v1[i].dir.join(WEB),
    };
    let held: Vec<Op> = write::create_group_in(&path, &every)
        .into_iter()
        .map(|op| {
            let ino = ino(&parent(op.hier()));
            op.of_group(Some(ino))
        })
        .collect();
    assert_eq!(ops_of(&fx), held);
    // remove, on a v1-only host: name=systemd (the primary) last, each
    // hierarchy named in the question
    let (mut a, mut c, _t) = on_layout(WEB, true);
    let every: Vec<HierId> = std::iter::once(a.layout.primary().unwrap())
        .chain(
            (0..a.layout.v1.len())
                .map(HierId::V1)
                .filter(|&h| Some(h) != a.layout.primary()),
        )
        .collect();
    send(&mut a, &mut c, key(KeyCode::Delete));
    let q = confirm(&a);
    let ops = q.ops().to_vec();
    assert_eq!(by_path(&ops), write::remove_group_in(&g(WEB), &every));
    assert_eq!(ops.last().unwrap().hier(), a.layout.primary().unwrap());
    // one action, one bullet, every hierarchy named in it
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    let bullets: Vec<&String> = lines.iter().filter(|l| l.starts_with('•')).collect();
    assert_eq!(
        bullets,
        [
            "• remove the group /demo.slice/web.service in the v1 blkio, cpu,cpuacct, freezer, \
          memory, pids, name=systemd hierarchies"
        ],
        "{lines:?}"
    );
    // one reason, not one per hierarchy
    let n = q
        .reasons
        .iter()
        .filter(|r| matches!(r, Reason::Destructive(_)))
        .count();
    assert_eq!(n, 1);
    // undo of the create removes in the same hierarchies
    let outs: Vec<_> = write::create_group_in(&path, &every)
        .into_iter()
        .map(|o| cgtop::model::WriteOutcome::done(o, None, None))
        .collect();
    let undos: Vec<_> = outs
        .iter()
        .filter_map(cgtop::model::WriteOutcome::undo)
        .collect();
    assert_eq!(
        undos,
        every
            .iter()
            .map(|&h| write::remove_group(&path).on(h))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_v1_op_is_never_written_to_a_plain_directory() {
    // the fixture is a tempdir: the writer's handle refuses it, and the
    // file keeps its text
    let t = layout_tree();
    let hiers = hiers_of(t.path());
    let h = hiers.layout.holder("pids").unwrap();
    let file = t.path().join("pids").join(WEB).join("pids.max");
    let before = std::fs::read_to_string(&file).unwrap();
    let o = cgtop::source::writer::perform_on(
        &hiers,
        &write::set_pids_max(&g(WEB), Limit::Value(7)).on(h),
    );
    assert!(!o.is_ok());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // nor a cgroup2 op through a v1 handle, nor a v1 op through cgroup2's
    let v2 = cgtop::source::writer::perform_in(
        hiers.get(HierId::V2).unwrap(),
        &write::set_freezer(&g(WEB), h, true),
    );
    assert!(!v2.is_ok());
}

#[test]
fn the_v1_limits_form_and_a_question_on_screen() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('e'));
    typed(
        &mut a,
        &mut c,
        FieldKind::V1Memory(V1MemoryFile::Limit),
        "256M 512M",
    );
    // the device line is this host's: the form is checked by its rows
    let s = screen(&a, 120, 40);
    for row in [
        "cpu.cfs_quota_us                 50000 100000",
        "memory.limit_in_bytes            64M",
        "memory.memsw.limit_in_bytes      max",
        "blkio.throttle.write_iops_device (no limit)",
        "Enter set memory.memsw.limit_in_bytes of /demo.slice/web.service to 536870912, then",
    ] {
        assert!(s.contains(row), "{row}\n{s}");
    }
    let (mut a, mut c, _t) = on_layout(WEB, true);
    send(&mut a, &mut c, key(KeyCode::Delete));
    // rows of the question on screen (the tree and detail around it are
    // the scan's and the detail's)
    let s = screen(&a, 120, 40);
    for row in [
        "confirm (cannot be undone)",
        "• remove the group /demo.slice/web.service in the v1 blkio, cpu,cpuacct, freezer,",
        "removing a group cannot be undone",
    ] {
        assert!(s.contains(row), "{row}\n{s}");
    }
}

/// Where each step of one operator action goes, and how it is said: a
/// move into worker.service, which is in cgroup2, `cpu,cpuacct` and
/// `name=systemd` only (3 of the layout's 7 hierarchies), is made in those
/// 3 and said once, naming them, in the question, the "done" line, `u`'s
/// question and its "undone" line; Del on it asks about those 3 only.
#[test]
fn a_move_and_a_remove_name_only_the_hierarchies_that_hold_the_group() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    let systemd = HierId::V1(
        a.layout
            .v1
            .iter()
            .position(|m| m.name.as_deref() == Some("systemd"))
            .unwrap(),
    );
    let holding = [HierId::V2, hier(&a, "cpu"), systemd];
    let in_three = "in cgroup2 and the v1 cpu,cpuacct, name=systemd hierarchies";
    set_processes(&mut a, vec![process(4242, "root", 0.0, 1, "worker")]);
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "worker");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let moves: Vec<Op> = holding
        .iter()
        .map(|&h| write::move_process_in(4242, &g(WORKER), false, h))
        .collect();
    let q = confirm(&a);
    assert_eq!(by_path(q.ops()), moves);
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    let bullets: Vec<&String> = lines.iter().filter(|l| l.starts_with('•')).collect();
    assert_eq!(
        bullets,
        [&format!(
            "• move process 4242 into /demo.slice/worker.service {in_three}"
        )]
    );
    send(&mut a, &mut c, ch('y'));
    let outcomes: Vec<_> = moves
        .iter()
        .map(|o| cgtop::model::WriteOutcome::done(o.clone(), Some(format!("/{WEB}")), None))
        .collect();
    send(
        &mut a,
        &mut c,
        cgtop::app::Msg::WriteFinished {
            outcomes,
            unix_secs: 1_700_000_000,
        },
    );
    assert_eq!(
        a.status.as_ref().unwrap().text,
        format!("done: move process 4242 into /demo.slice/worker.service {in_three}")
    );
    // u: one sentence for the action, one for what undoing it writes
    send(&mut a, &mut c, ch('u'));
    let q = confirm(&a);
    assert_eq!(q.ops().len(), 3);
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    assert_eq!(
        lines[0],
        format!("This undoes: move process 4242 into /demo.slice/worker.service {in_three}")
    );
    let bullets: Vec<&String> = lines.iter().filter(|l| l.starts_with('•')).collect();
    assert_eq!(
        bullets,
        [&format!(
            "• move process 4242 into /demo.slice/web.service {in_three}"
        )]
    );
    send(&mut a, &mut c, key(KeyCode::Esc));

    // Del on worker.service, emptied: the 3 hierarchies that hold it
    let (mut a, mut c, t) = on_layout(WORKER, false);
    for h in ["unified", "cpu,cpuacct", "systemd"] {
        let dir = t.path().join(h).join(WORKER);
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
    }
    std::fs::write(
        t.path().join("unified").join(WORKER).join("cgroup.events"),
        "populated 0\nfrozen 0\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 2.0);
    read_inspection(&mut a, &mut c, 2.0);
    send(&mut a, &mut c, key(KeyCode::Delete));
    let q = confirm(&a);
    assert_eq!(
        by_path(q.ops()),
        write::remove_group_in(&g(WORKER), &holding)
    );
    let lines = cgtop::ui::dialogs::confirm_lines(q);
    assert!(
        lines.contains(&format!(
            "• remove the group /demo.slice/worker.service {in_three}"
        )),
        "{lines:?}"
    );
}

/// The raw editor (E) on a hybrid host lists the v1 files of every v1
/// hierarchy that holds the group, as the raw page names them
/// (`memory:memory.oom_control`), and writes the line in that hierarchy;
/// a pid typed into a v1 `cgroup.procs` is a move in that hierarchy, with
/// its guard and its undo. Only the hierarchies that hold the group:
/// worker.service lists no `memory:` file.
#[test]
fn the_raw_editor_offers_and_writes_the_v1_files_of_each_hierarchy() {
    let (mut a, mut c, _t) = on_layout(WEB, false);
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let names: Vec<&str> = r.files.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "memory:memory.limit_in_bytes",
        "memory:memory.oom_control",
        "cpu,cpuacct:cpu.cfs_quota_us",
        "pids:pids.max",
        "freezer:freezer.state",
        "memory:cgroup.procs",
    ] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    let at = names
        .iter()
        .position(|n| *n == "memory:memory.limit_in_bytes")
        .unwrap();
    assert_eq!(r.files[at].1, "67108864", "with its current value");
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, key(KeyCode::Enter));
    type_text(&mut a, &mut c, "128M");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let want = write::raw(&g(WEB), "memory.limit_in_bytes", "128M").on(hier(&a, "memory"));
    assert_eq!(by_path(confirm(&a).ops()), std::slice::from_ref(&want));
    let lines = cgtop::ui::dialogs::confirm_lines(confirm(&a));
    assert!(
        lines.contains(
            &"• set memory.limit_in_bytes of /demo.slice/web.service to 128M in the v1 memory \
              hierarchy"
                .to_owned()
        ),
        "{lines:?}"
    );
    // undone in the same hierarchy, with the old text
    let done = cgtop::model::WriteOutcome::done(want, Some("67108864".into()), None);
    assert_eq!(
        done.undo(),
        Some(write::raw(&g(WEB), "memory.limit_in_bytes", "67108864").on(hier(&a, "memory")))
    );
    send(&mut a, &mut c, key(KeyCode::Esc));

    // a pid into the memory hierarchy's cgroup.procs: a move there
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = r
        .files
        .iter()
        .position(|(n, _)| n == "memory:cgroup.procs")
        .unwrap();
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, key(KeyCode::Enter));
    type_text(&mut a, &mut c, "4242");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        by_path(confirm(&a).ops()),
        [write::move_process_in(
            4242,
            &g(WEB),
            false,
            hier(&a, "memory")
        )]
    );

    // worker.service is not in the memory hierarchy: none of its files
    let (mut a, mut c, _t) = on_layout(WORKER, false);
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert!(r.files.iter().all(|(n, _)| !n.starts_with("memory:")));
    assert!(r
        .files
        .iter()
        .any(|(n, _)| n == "cpu,cpuacct:cpu.cfs_quota_us"));
}
