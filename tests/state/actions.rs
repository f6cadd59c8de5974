//! The write actions as state transitions: keys and writer results fed to
//! `app::update`, the exact write asserted, no terminal, no root, no /sys.
//! A write leaves `update` as `Effect::Write(WriteRequest::Ops(vec![op]))`
//! (or sits in `Mode::Confirm` holding that request until y/Enter); every
//! op below is spelt out field by field, so that a change in what cgtop
//! writes shows up here first.
//!
//! The tree is `memory-limited` with three plain groups added by
//! `common::lab_tree` (plain names are not systemd units, so their writes
//! need no systemd confirmation):
//!
//! ```text
//! /
//! ├─ batch                        cpu io memory pids; 2 processes
//! ├─ lab                          hands only io down (subtree_control "io")
//! │  └─ dd                        io only: no memory; 1 process
//! ├─ system.slice
//! │  ├─ system-postgresql.slice
//! │  │  └─ postgresql@15-main.service   a systemd unit with limits
//! │  └─ ...
//! └─ ...
//! ```
//!
//! Block devices come from `tests/fixtures/sys-dev-block` (vda 254:0 and
//! loop0 7:0), or from `common::sys_dev_block_with_partition` (plus vda1
//! 254:1) where a partition is needed. The app is not read-only: these are
//! fixture trees, and `read_only` is set to `None` explicitly.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::dialog::confirm::{Confirm, Question, Reason};
use cgtop::app::dialog::limits::{Field, FieldKind, Missing, MissingWhy, Preview};
use cgtop::app::writes::WriteRequest;
use cgtop::app::{App, Effect, Level, Mode, Msg, Pane};
use cgtop::cgroupfs::{CpuMax, DevId, Limit};
use cgtop::model::write::explain::{explain, offer_for};
use cgtop::model::write::guard::{typed_prompt, Danger, Harm, Protected, Role};
use cgtop::model::{
    ControllerChange, Errno, GroupPath, IoMaxSet, MemoryFile, Op, WriteKind, WriteOp,
};
use cgtop::model::{Offer, WriteOutcome};
use cgtop::source::collector::{Collector, Command};
use cgtop::source::writer;
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;
use std::time::Duration;

const VDA: DevId = DevId {
    major: 254,
    minor: 0,
};

/// The groups of the lab tree that hand a domain controller to their
/// children (their children have memory or io files): the move picker
/// leaves them out.
const REFUSING: [&str; 9] = [
    "lab",
    "system.slice",
    "system.slice/system-getty.slice",
    "system.slice/system-postgresql.slice",
    "system.slice/system-serial\\x2dgetty.slice",
    "user.slice",
    "user.slice/user-0.slice",
    "user.slice/user-0.slice/user@0.service",
    "user.slice/user-0.slice/user@0.service/app.slice",
];

/// The groups of the lab tree whose name has "mount" in it.
const MOUNTS: usize = 6;

/// A file write, spelt out.
fn wop(group: &str, file: &str, contents: &str, kind: WriteKind) -> Op {
    Op::Write(WriteOp {
        group: g(group),
        file: file.into(),
        contents: contents.into(),
        kind,
        hier: cgtop::model::host::layout::HierId::V2,
        via: cgtop::model::write::Via::Direct,
        ino: None,
        freezer_ino: None,
    })
}

/// Moving `pid` (one thread with `threads`) into `group`.
fn move_of(pid: u32, group: &str, threads: bool) -> Op {
    let file = if threads {
        "cgroup.threads"
    } else {
        "cgroup.procs"
    };
    wop(
        group,
        file,
        &pid.to_string(),
        WriteKind::MoveProcess { pid, threads },
    )
}

/// Freezing (or thawing) `group`.
fn freeze_of(group: &str, frozen: bool) -> Op {
    let v = if frozen { "1" } else { "0" };
    wop(group, "cgroup.freeze", v, WriteKind::Freeze(frozen))
}

/// Killing every process of `group`.
fn kill_of(group: &str) -> Op {
    wop(group, "cgroup.kill", "1", WriteKind::Kill)
}

/// io.latency's target on vda (`None`: max, which removes it).
fn vda_latency(group: &str, target_usec: Option<u64>) -> Op {
    let text = target_usec.map_or("254:0 target=max".to_owned(), |t| {
        format!("254:0 target={t}")
    });
    wop(
        group,
        "io.latency",
        &text,
        WriteKind::IoLatency {
            dev: VDA,
            target_usec,
        },
    )
}

/// io.max on vda: writes at most 2 MiB/s, the other keys left alone.
fn vda_wbps_2m(group: &str) -> Op {
    let set = IoMaxSet {
        dev: VDA,
        rbps: None,
        wbps: Some(Limit::Value(2_097_152)),
        riops: None,
        wiops: None,
    };
    wop(group, "io.max", "254:0 wbps=2097152", WriteKind::IoMax(set))
}

/// The undo stack as the ops each entry writes back, bottom first (an
/// entry of one step is one op).
fn undo_ops(a: &App) -> Vec<Op> {
    a.history
        .undo
        .iter()
        .flat_map(cgtop::model::write::history::Entry::undo_ops)
        .collect()
}

fn write_of(op: Op) -> Effect {
    Effect::Write(WriteRequest::Ops(vec![op]))
}

/// A raw write's reason: `contents` to `file` of `group` ("" is the root).
fn raw_reason(group: &str, file: &str, contents: &str) -> Reason {
    Reason::Raw {
        group: g(group),
        file: file.into(),
        contents: contents.into(),
    }
}

/// The group whose name the confirmation asks for, and what was typed.
fn typed_name(c: &Confirm) -> Option<(GroupPath, String)> {
    c.typed.as_ref().map(|(g, t)| (g.clone(), t.to_string()))
}

/// Why the field refuses what was typed (a test failure when it does not).
fn invalid(f: &Field) -> String {
    match &f.preview {
        Preview::Invalid(why) => why.clone(),
        p => panic!("{} accepted or empty: {p:?}", f.kind.file()),
    }
}

/// A successful outcome of `op`, with the old value the writer read.
fn done(op: Op, old: Option<&str>) -> WriteOutcome {
    WriteOutcome::done(op, old.map(str::to_owned), None)
}

/// The outcome the writer makes when the kernel refuses `op` with `errno`
/// on the tree at `root`: its explanation and its offer, from the tree.
fn refused(root: &Path, op: Op, errno: Errno) -> WriteOutcome {
    let ctx = writer::gather_context(root, &op, errno);
    let error = explain(&op, errno, &ctx);
    let offer = offer_for(&op, errno, &ctx);
    WriteOutcome::failed(op, error).with_offer(offer)
}

fn finished(a: &mut App, c: &mut Collector, outcomes: Vec<WriteOutcome>) -> Vec<Effect> {
    send(
        a,
        c,
        cgtop::app::Msg::WriteFinished {
            outcomes,
            unix_secs: 1_700_000_000,
        },
    )
}

const EBUSY: Errno = Errno::BUSY;
const ENOENT: Errno = Errno::NOENT;
const EACCES: Errno = Errno::ACCESS;

// ---------------------------------------------------------------------------
// Controllers (c).

#[test]
fn controllers_enable_and_disable_go_out_in_one_write() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('c'));
    let Mode::Controllers(d) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    // offered by the root, in cgroup.controllers order; then the
    // hierarchy's others (not offered to lab: the root does not hand them)
    let items: Vec<(&str, bool, bool)> = d
        .items
        .iter()
        .map(|i| (i.name.as_str(), i.offered, i.enabled))
        .collect();
    assert_eq!(
        items,
        [
            ("cpuset", true, false),
            ("cpu", true, false),
            ("io", true, true),
            ("memory", true, false),
            ("pids", true, false),
            ("hugetlb", false, false),
            ("rdma", false, false),
            ("misc", false, false),
        ]
    );
    // Space on cpu, Down, x on io: "+cpu -io"
    send(&mut a, &mut c, key(KeyCode::Down));
    assert!(send(&mut a, &mut c, ch(' ')).is_empty());
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, ch('x'));
    // disabling removes the children's io files: confirmed first
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    let op = wop(
        "lab",
        "cgroup.subtree_control",
        "+cpu -io",
        WriteKind::SubtreeControl(vec![
            ControllerChange::enable("cpu"),
            ControllerChange::disable("io"),
        ]),
    );
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![op.clone()]));
    assert_eq!(typed_name(cf), None);
    assert_eq!(cf.reasons, [Reason::Destructive(op.clone())]);
    assert_eq!(send(&mut a, &mut c, ch('y')), [write_of(op)]);
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn controllers_enabling_only_writes_at_once_and_no_change_writes_nothing() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('c'));
    // toggled twice: no change
    send(&mut a, &mut c, ch(' '));
    send(&mut a, &mut c, ch(' '));
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.status.as_ref().unwrap().text, "nothing changed");

    send(&mut a, &mut c, ch('c'));
    for _ in 0..3 {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, ch(' '));
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, ch(' '));
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [write_of(wop(
            "lab",
            "cgroup.subtree_control",
            "+memory +pids",
            WriteKind::SubtreeControl(vec![
                ControllerChange::enable("memory"),
                ControllerChange::enable("pids"),
            ]),
        ))]
    );
    assert_eq!(a.mode, Mode::Normal);
}

// ---------------------------------------------------------------------------
// The limits form (e): one exact write per field.

#[test]
fn cpu_weight_nice_field_writes_the_nice_value() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let fx = enter_limit(&mut a, &mut c, "cpu.weight.nice", "-5");
    assert_eq!(
        fx,
        [write_of(wop(
            "batch",
            "cpu.weight.nice",
            "-5",
            WriteKind::CpuWeightNice(-5)
        ))]
    );
    // out of nice's range: no write, the reason in the preview
    send(&mut a, &mut c, ch('e'));
    let fx = enter_limit(&mut a, &mut c, "cpu.weight.nice", "20");
    assert!(fx.is_empty());
}

#[test]
fn limits_form_opens_on_the_groups_current_values() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    assert!(send(&mut a, &mut c, ch('e')).is_empty());
    let f = form(&a);
    assert_eq!(f.group, g("batch"));
    let current: Vec<(&str, Option<&str>)> = f
        .fields
        .iter()
        .map(|x| (x.kind.file(), x.current.as_deref()))
        .collect();
    assert_eq!(
        current,
        [
            ("cpu.max", Some("max 100000")),
            ("cpu.max.burst", Some("0")),
            ("cpu.weight", Some("100")),
            ("cpu.weight.nice", Some("0")),
            ("memory.min", Some("0")),
            ("memory.low", Some("0")),
            ("memory.high", Some("max")),
            ("memory.max", Some("max")),
            ("memory.swap.max", Some("max")),
            ("pids.max", Some("1140")),
            ("io.max", Some("")),
            ("io.weight", Some("default 100")),
            ("io.latency", Some("")),
        ]
    );
    // the device for io.max / io.latency: the first that can be
    // throttled (loop0 sorts first, but has no request queue)
    assert_eq!(f.devices[f.device].name, "vda");
    assert_eq!(f.devices[f.device].dev, VDA);
    assert_eq!(f.cursor, 0);
}

#[test]
fn cpu_max_share_cpus_and_max_keep_the_current_period() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let cpu = |quota, period, text: &str| {
        write_of(wop(
            "batch",
            "cpu.max",
            text,
            WriteKind::CpuMax(CpuMax { quota, period }),
        ))
    };
    type_text(&mut a, &mut c, "50%");
    assert_eq!(
        field(&a).preview,
        Preview::Writes {
            contents: "50000 100000".into(),
            file: "cpu.max".into()
        }
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [cpu(Some(50_000), 100_000, "50000 100000")]
    );
    // a plain group's limit needs no confirmation: the form stays open
    // for the next value, its input cleared
    assert_eq!(field(&a).input, "");
    assert_eq!(
        enter_limit(&mut a, &mut c, "cpu.max", "1.5"),
        [cpu(Some(150_000), 100_000, "150000 100000")]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "cpu.max", "max"),
        [cpu(None, 100_000, "max 100000")]
    );
}

#[test]
fn cpu_max_keeps_a_period_that_is_not_the_default() {
    let (mut a, mut c, d) = lab();
    std::fs::write(d.path().join("batch/cpu.max"), "max 250000\n").unwrap();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    assert_eq!(
        enter_limit(&mut a, &mut c, "cpu.max", "50%"),
        [write_of(wop(
            "batch",
            "cpu.max",
            "125000 250000",
            WriteKind::CpuMax(CpuMax {
                quota: Some(125_000),
                period: 250_000
            }),
        ))]
    );
}

#[test]
fn cpu_max_burst_is_checked_against_the_quota_in_force() {
    let (mut a, mut c, d) = lab();
    std::fs::write(d.path().join("batch/cpu.max"), "50000 100000\n").unwrap();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    goto(&mut a, &mut c, "cpu.max.burst");
    // the kernel refuses a burst above the quota with a bare EINVAL
    type_text(&mut a, &mut c, "60ms");
    let why = invalid(field(&a));
    assert!(
        why.starts_with(
            "cpu.max.burst: a burst of 60000 us is more than the quota of 50000 us in cpu.max."
        ),
        "{why}"
    );
    assert!(writes(&send(&mut a, &mut c, key(KeyCode::Enter))).is_empty());
    assert_eq!(
        enter_limit(&mut a, &mut c, "cpu.max.burst", "20ms"),
        [write_of(wop(
            "batch",
            "cpu.max.burst",
            "20000",
            WriteKind::CpuMaxBurst(20_000),
        ))]
    );
}

#[test]
fn the_form_shows_what_the_kernel_stored_after_a_write() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let fx = enter_limit(&mut a, &mut c, "cpu.max", "50%");
    let Effect::Write(WriteRequest::Ops(ops)) = &fx[0] else {
        panic!("{fx:?}")
    };
    let mut out = done(ops[0].clone(), Some("max 100000\n"));
    out.new_readback = Some("50000 100000\n".into());
    finished(&mut a, &mut c, vec![out]);
    assert_eq!(field(&a).current.as_deref(), Some("50000 100000"));
    // the burst is now checked against the new quota
    goto(&mut a, &mut c, "cpu.max.burst");
    type_text(&mut a, &mut c, "60ms");
    assert!(
        matches!(field(&a).preview, Preview::Invalid(_)),
        "{:?}",
        field(&a).preview
    );

    // memory.max: the kernel keeps whole pages, and the form shows that
    // (a value above what /batch uses: below it, pre-flight asks first)
    let fx = enter_limit(&mut a, &mut c, "memory.max", "1000000000");
    let Effect::Write(WriteRequest::Ops(ops)) = &fx[0] else {
        panic!("{fx:?}")
    };
    let mut out = done(ops[0].clone(), Some("max\n"));
    out.new_readback = Some("999997440\n".into());
    finished(&mut a, &mut c, vec![out]);
    assert_eq!(field(&a).current.as_deref(), Some("999997440"));
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((
            Level::Warn,
            "done: set memory.max of /batch to 1000000000; the kernel stored 999997440 in \
             memory.max, not 1000000000 (it keeps whole pages)"
        ))
    );
}

#[test]
fn memory_pids_and_weights_write_plain_numbers() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    assert_eq!(
        enter_limit(&mut a, &mut c, "memory.max", "512M"),
        [write_of(wop(
            "batch",
            "memory.max",
            "536870912",
            WriteKind::Memory(MemoryFile::Max, Limit::Value(536_870_912)),
        ))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "memory.high", "max"),
        [write_of(wop(
            "batch",
            "memory.high",
            "max",
            WriteKind::Memory(MemoryFile::High, Limit::Max),
        ))]
    );
    for (file, m, typed, written, v) in [
        (
            "memory.min",
            MemoryFile::Min,
            "64M",
            "67108864",
            Limit::Value(67_108_864),
        ),
        (
            "memory.low",
            MemoryFile::Low,
            "1.5G",
            "1610612736",
            Limit::Value(1_610_612_736),
        ),
        (
            "memory.swap.max",
            MemoryFile::SwapMax,
            "0",
            "0",
            Limit::Value(0),
        ),
    ] {
        assert_eq!(
            enter_limit(&mut a, &mut c, file, typed),
            [write_of(wop(
                "batch",
                file,
                written,
                WriteKind::Memory(m, v)
            ))],
            "{file} {typed}"
        );
    }
    assert_eq!(
        enter_limit(&mut a, &mut c, "pids.max", "100"),
        [write_of(wop(
            "batch",
            "pids.max",
            "100",
            WriteKind::PidsMax(Limit::Value(100)),
        ))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "cpu.weight", "250"),
        [write_of(wop(
            "batch",
            "cpu.weight",
            "250",
            WriteKind::CpuWeight(250),
        ))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "io.weight", "200"),
        [write_of(wop(
            "batch",
            "io.weight",
            "default 200",
            WriteKind::IoWeight {
                dev: None,
                weight: Some(200)
            },
        ))]
    );
    assert_eq!(a.mode, Mode::Limits(form(&a).clone()));
}

#[test]
fn a_memory_limit_off_the_page_size_says_what_the_kernel_keeps() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    goto(&mut a, &mut c, "memory.max");
    type_text(&mut a, &mut c, "1000000");
    assert_eq!(
        field(&a).warning.as_deref(),
        Some("the kernel keeps whole 4096-byte pages: 1000000 bytes will be stored as 999424")
    );
    assert!(field(&a).op.is_some(), "a warning, not an error");
}

#[test]
fn io_max_and_io_latency_name_the_whole_disk() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    assert_eq!(
        enter_limit(&mut a, &mut c, "io.max", "wbps=2M"),
        [write_of(vda_wbps_2m("batch"))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "io.max", "rbps=max riops=100"),
        [write_of(wop(
            "batch",
            "io.max",
            "254:0 rbps=max riops=100",
            WriteKind::IoMax(IoMaxSet {
                dev: VDA,
                rbps: Some(Limit::Max),
                wbps: None,
                riops: Some(Limit::Value(100)),
                wiops: None,
            }),
        ))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "io.latency", "10ms"),
        [write_of(vda_latency("batch", Some(10_000)))]
    );
    assert_eq!(
        enter_limit(&mut a, &mut c, "io.latency", "max"),
        [write_of(vda_latency("batch", None))]
    );
}

#[test]
fn io_max_on_a_partition_or_loop_device_is_refused_with_the_disk_to_use() {
    let dir = lab_tree();
    let sys = sys_dev_block_with_partition();
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    a.read_only = None;
    resize(&mut a, 120, 40);
    let mut c = collector_with_devices(dir.path(), &sys.path().join("block"));
    tick(&mut a, &mut c, 0.0);
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let names: Vec<(String, bool)> = form(&a)
        .devices
        .iter()
        .map(|d| (format!("{} {}", d.name, d.dev), d.partition))
        .collect();
    assert_eq!(
        names,
        [
            ("loop0 7:0".to_owned(), false),
            ("vda 254:0".to_owned(), false),
            ("vda1 254:1".to_owned(), true),
        ]
    );
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "wbps=2M");
    assert!(field(&a).op.is_some(), "vda can be throttled");
    // PgDn: the partition
    send(&mut a, &mut c, key(KeyCode::PageDown));
    let why = "vda1 (254:1) is a partition: the kernel throttles whole disks only; \
               use the whole disk vda (254:0)";
    assert_eq!(field(&a).preview, Preview::Invalid(why.to_owned()));
    assert_eq!(field(&a).op, None);
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert!(matches!(a.mode, Mode::Limits(_)), "the form stays open");
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((Level::Error, why))
    );
    // io.latency on the partition: the same reason
    goto(&mut a, &mut c, "io.latency");
    type_text(&mut a, &mut c, "10ms");
    assert_eq!(field(&a).preview, Preview::Invalid(why.to_owned()));
    // PgDn wraps round to loop0, which has no request queue
    send(&mut a, &mut c, key(KeyCode::PageDown));
    let e = invalid(field(&a));
    assert!(e.starts_with("loop0 (7:0) is a loop device"), "{e}");
    assert!(writes(&send(&mut a, &mut c, key(KeyCode::Enter))).is_empty());
    // PgDn again: vda, and the write goes through
    send(&mut a, &mut c, key(KeyCode::PageDown));
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [write_of(vda_latency("batch", Some(10_000)))]
    );
}

/// Bad input never writes: for each field, typed values that cgtop
/// refuses, each left in the form with the reason in the preview.
#[test]
fn bad_input_never_writes() {
    const OVER: &str = "18446744073709551616"; // u64::MAX + 1
    let cases: &[(&str, &[&str])] = &[
        (
            "cpu.max",
            &[
                "-50%",
                "-1",
                OVER,
                "18446744073709551616 100000",
                "fast",
                "2 GB",
                "0.5%",
                "50000 2000000",
                "5000",
                "1 2 3",
            ],
        ),
        (
            "cpu.max.burst",
            &["-5", OVER, "soon", "5 kg", "17592186044416"],
        ),
        ("cpu.weight", &["-1", OVER, "heavy", "100%", "0", "10001"]),
        ("memory.min", &["-1", OVER, "lots", "512Q", "1.5"]),
        ("memory.low", &["-1", "16777216T", "lots", "2 parsecs"]),
        ("memory.high", &["-512M", OVER, "mx", "512X"]),
        ("memory.max", &["-1", OVER, "lots", "512Q", "0.5"]),
        ("memory.swap.max", &["-1", OVER, "none", "1 floppy"]),
        ("pids.max", &["-1", OVER, "many", "10k", "4194305"]),
        (
            "io.max",
            &[
                "wbps=-1",
                "wbps=18446744073709551616",
                "wbps=fast",
                "wbps=2Q",
                "wbps=1",
                "wiops=0",
                "riops=4294967296",
                "speed=2M",
                "2M",
            ],
        ),
        ("io.weight", &["-1", OVER, "heavy", "200%", "0", "10001"]),
        (
            "io.latency",
            &[
                "-10ms",
                "18446744073709551616s",
                "soon",
                "10 parsecs",
                "0.1us",
            ],
        ),
    ];
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    for (file, inputs) in cases {
        goto(&mut a, &mut c, file);
        // empty: nothing to write, and Enter says so
        clear_input(&mut a, &mut c);
        let fx = send(&mut a, &mut c, key(KeyCode::Enter));
        assert!(writes(&fx).is_empty(), "{file} empty: {fx:?}");
        assert_eq!(
            a.status.as_ref().map(|s| (s.level, s.text.as_str())),
            Some((Level::Error, "type a value first")),
            "{file}"
        );
        for input in *inputs {
            clear_input(&mut a, &mut c);
            let fx = type_text(&mut a, &mut c, input);
            assert!(fx.is_empty(), "{file} {input:?}: typing does {fx:?}");
            let why = invalid(field(&a));
            assert!(
                why.starts_with(&format!("{file}: ")),
                "{file} {input:?}: the reason names the file: {why}"
            );
            let fx = send(&mut a, &mut c, key(KeyCode::Enter));
            assert!(writes(&fx).is_empty(), "{file} {input:?} wrote: {fx:?}");
            assert_eq!(field(&a).input, *input, "the typed text stays");
            // the status line: the problem, without the list of what is
            // accepted (the form shows it)
            let problem = why.split(". Accepted: ").next().unwrap();
            assert_eq!(
                a.status.as_ref().map(|s| (s.level, s.text.as_str())),
                Some((Level::Error, problem)),
                "{file} {input:?}"
            );
        }
    }
    assert!(matches!(a.mode, Mode::Limits(_)));
}

#[test]
fn bad_input_reasons_say_what_is_wrong() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let reason = |a: &mut App, c: &mut Collector, file: &str, input: &str| {
        goto(a, c, file);
        clear_input(a, c);
        type_text(a, c, input);
        invalid(field(a))
    };
    // the words before ". Accepted: ..." (the accepted forms follow)
    for (file, input, want) in [
        ("memory.max", "-1", "memory.max: \"-1\" is negative"),
        (
            "memory.max",
            "18446744073709551616",
            "memory.max: \"18446744073709551616\" is too large (more than 18446744073709551615)",
        ),
        ("memory.max", "lots", "memory.max: \"lots\" is not a number"),
        ("memory.max", "512Q", "memory.max: \"Q\" is not a unit"),
        ("pids.max", "4194305", "pids.max: 4194305 is out of range"),
        ("io.weight", "0", "io.weight: 0 is out of range"),
        (
            "cpu.max",
            "50000 2000000",
            "cpu.max: the period 2000000 us is outside the kernel's range of 1000 to 1000000 us",
        ),
    ] {
        let why = reason(&mut a, &mut c, file, input);
        let problem = why.split(". Accepted").next().unwrap();
        assert_eq!(problem, want, "{file} {input:?}");
    }
    // no accepted forms to add here: the whole reason
    assert_eq!(
        reason(&mut a, &mut c, "io.max", "speed=2M"),
        "io.max: unknown key \"speed\" (keys: rbps, wbps, riops, wiops)"
    );
}

#[test]
fn a_field_whose_controller_is_off_says_so_and_never_writes() {
    let (mut a, mut c, _d) = lab();
    // dd has only io: cpu, memory and pids files are absent
    on(&mut a, &mut c, "lab/dd");
    send(&mut a, &mut c, ch('e'));
    assert_eq!(
        field(&a).kind,
        FieldKind::IoMax,
        "the form starts on the first field that exists"
    );
    goto(&mut a, &mut c, "memory.max");
    assert_eq!(field(&a).current, None);
    type_text(&mut a, &mut c, "512M");
    assert_eq!(
        field(&a).preview,
        Preview::Missing(Missing {
            file: "memory.max",
            why: MissingWhy::ControllerOff
        })
    );
    assert!(writes(&send(&mut a, &mut c, key(KeyCode::Enter))).is_empty());
}

// ---------------------------------------------------------------------------
// The raw editor (E), freeze (f), kill (K, F9).

#[test]
fn raw_editor_writes_the_typed_line_after_a_confirmation() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let names: Vec<&str> = r.files.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&"cgroup.kill"), "kill has its own key");
    let at = names.iter().position(|n| *n == "memory.oom.group").unwrap();
    assert_eq!(r.files[at].1, "0", "with its current value");
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    // Enter chooses the file; Esc goes back to the list, Esc again closes
    send(&mut a, &mut c, key(KeyCode::Enter));
    send(&mut a, &mut c, key(KeyCode::Esc));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!((r.cursor, r.input.as_ref()), (at, None));
    send(&mut a, &mut c, key(KeyCode::Enter));
    // an empty line is not written
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    assert_eq!(a.status.as_ref().unwrap().text, "type the line to write");
    type_text(&mut a, &mut c, "1");
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    let op = wop("batch", "memory.oom.group", "1", WriteKind::Raw);
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![op.clone()]));
    assert_eq!(cf.reasons, [raw_reason("batch", "memory.oom.group", "1")]);
    assert_eq!(send(&mut a, &mut c, key(KeyCode::Enter)), [write_of(op)]);
    assert_eq!(a.mode, Mode::Normal);

    // on the root: its files are at the top of the hierarchy
    send(&mut a, &mut c, key(KeyCode::Home));
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = r
        .files
        .iter()
        .position(|(n, _)| n == "cgroup.max.depth")
        .unwrap();
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, key(KeyCode::Enter));
    type_text(&mut a, &mut c, "10");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        confirm(&a).reasons,
        [raw_reason("", "cgroup.max.depth", "10")]
    );
}

#[test]
fn raw_lines_to_freeze_controllers_and_procs_keep_their_guards() {
    let (mut a, mut c, _d) = lab();
    a.protected = Protected {
        own: Some(g("lab/dd")),
        ..Protected::default()
    };
    let raw_line = |a: &mut App, c: &mut Collector, file: &str, line: &str| {
        send(a, c, ch('E'));
        let Mode::Raw(r) = &a.mode else {
            panic!("{:?}", a.mode)
        };
        let at = r.files.iter().position(|(n, _)| n == file).unwrap();
        for _ in 0..at {
            send(a, c, key(KeyCode::Down));
        }
        send(a, c, key(KeyCode::Enter));
        type_text(a, c, line);
        send(a, c, key(KeyCode::Enter))
    };
    // "1" to cgroup.freeze of the group cgtop runs in: its name is typed,
    // as with f
    on(&mut a, &mut c, "lab/dd");
    assert!(raw_line(&mut a, &mut c, "cgroup.freeze", "1").is_empty());
    let cf = confirm(&a);
    assert_eq!(
        cf.request,
        WriteRequest::Typed {
            ops: vec![freeze_of("lab/dd", true)],
            name: g("lab/dd")
        }
    );
    assert_eq!(typed_name(cf), Some((g("lab/dd"), String::new())));
    assert!(
        send(&mut a, &mut c, ch('y')).is_empty(),
        "y alone does not freeze"
    );
    send(&mut a, &mut c, key(KeyCode::Esc));

    // a pid to cgroup.procs is a move, confirmed as one
    assert!(raw_line(&mut a, &mut c, "cgroup.procs", "4190201").is_empty());
    assert_eq!(
        confirm(&a).request,
        WriteRequest::Ops(vec![move_of(4_190_201, "lab/dd", false)])
    );
    send(&mut a, &mut c, ch('n'));

    // controllers: one typed write, undone with +/-
    on(&mut a, &mut c, "lab");
    let enable = wop(
        "lab",
        "cgroup.subtree_control",
        "+memory",
        WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")]),
    );
    assert_eq!(
        raw_line(&mut a, &mut c, "cgroup.subtree_control", "+memory"),
        [write_of(enable.clone())]
    );
    finished(&mut a, &mut c, vec![done(enable, Some("io\n"))]);
    assert_eq!(
        undo_ops(&a),
        [wop(
            "lab",
            "cgroup.subtree_control",
            "-memory",
            WriteKind::SubtreeControl(vec![ControllerChange::disable("memory")]),
        )]
    );

    // anything else is written as typed, after a confirmation
    assert!(raw_line(&mut a, &mut c, "cgroup.freeze", "yes").is_empty());
    assert_eq!(
        confirm(&a).request,
        WriteRequest::Ops(vec![wop("lab", "cgroup.freeze", "yes", WriteKind::Raw)])
    );
}

#[test]
fn freeze_is_confirmed_and_thaw_is_not() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    assert!(send(&mut a, &mut c, ch('f')).is_empty());
    let freeze = freeze_of("batch", true);
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![freeze.clone()]));
    assert_eq!(cf.reasons, [Reason::Destructive(freeze.clone())]);
    assert_eq!(send(&mut a, &mut c, ch('y')), [write_of(freeze)]);

    // the kernel froze it
    std::fs::write(d.path().join("batch/cgroup.freeze"), "1\n").unwrap();
    std::fs::write(
        d.path().join("batch/cgroup.events"),
        "populated 1\nfrozen 1\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 2.0);
    assert_eq!(
        send(&mut a, &mut c, ch('f')),
        [write_of(freeze_of("batch", false))],
        "a thaw is written at once"
    );
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn a_group_frozen_by_its_parent_is_not_thawed_in_vain() {
    // lab is frozen, and with it dd (frozen 1 in cgroup.events), whose own
    // cgroup.freeze is 0: writing 0 to it would change nothing
    //   ├─ lab        F  cgroup.freeze 1
    //   │  └─>dd      F  cgroup.freeze 0
    let (mut a, mut c, d) = lab();
    std::fs::write(d.path().join("lab/cgroup.freeze"), "1\n").unwrap();
    for grp in ["lab", "lab/dd"] {
        std::fs::write(
            d.path().join(grp).join("cgroup.events"),
            "populated 1\nfrozen 1\n",
        )
        .unwrap();
    }
    tick(&mut a, &mut c, 1.0);
    on(&mut a, &mut c, "lab/dd");
    assert!(send(&mut a, &mut c, ch('f')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((
            Level::Warn,
            "dd is frozen because /lab is: a thaw here changes nothing; thaw /lab"
        ))
    );
    // on lab itself, f thaws
    on(&mut a, &mut c, "lab");
    assert_eq!(
        send(&mut a, &mut c, ch('f')),
        [write_of(freeze_of("lab", false))]
    );
}

#[test]
fn kill_is_confirmed_with_how_many_processes_die() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('K'));
    let kill = kill_of("batch");
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![kill.clone()]));
    assert_eq!(
        cf.reasons,
        [
            Reason::Destructive(kill.clone()),
            Reason::WillDie {
                procs: 2,
                groups: 1
            },
        ]
    );
    assert_eq!(send(&mut a, &mut c, key(KeyCode::Enter)), [write_of(kill)]);

    // F9 too; a subtree counts every group in it
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, key(KeyCode::F(9)));
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![kill_of("lab")]));
    assert_eq!(
        cf.reasons.last(),
        Some(&Reason::WillDie {
            procs: 1,
            groups: 2
        })
    );

    // a kernel without cgroup.kill (the captured unit has none), and a
    // systemd unit: both said (but not that systemd may "revert" a kill)
    send(&mut a, &mut c, key(KeyCode::Esc));
    on(&mut a, &mut c, PG_SERVICE);
    send(&mut a, &mut c, ch('K'));
    assert_eq!(
        confirm(&a).reasons,
        [
            Reason::Destructive(kill_of(PG_SERVICE)),
            Reason::WillDie {
                procs: 6,
                groups: 1
            },
            Reason::NoCgroupKill,
            Reason::SystemdWay {
                command: "systemctl kill --signal=SIGKILL postgresql@15-main.service".into()
            },
        ]
    );
}

// ---------------------------------------------------------------------------
// Move (m), new group (n), remove (Delete).

#[test]
fn move_picks_a_group_by_filter_and_confirms() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    // from the tree pane: the process list first
    send(&mut a, &mut c, ch('m'));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(
        a.status.as_ref().unwrap().text,
        "select a process first: Tab moves to the process list"
    );
    set_processes(
        &mut a,
        vec![
            process(4_190_201, "root", 0.0, 12, "worker --queue a"),
            process(4_190_202, "root", 0.0, 14, "worker --queue b"),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!(a.pane, Pane::Processes);
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('m'));
    let Mode::Move(m) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!((m.pid, m.what.as_str()), (4_190_202, "worker --queue b"));
    // every group before a filter, but those that hand domain controllers
    // to their children (the kernel's EBUSY; tests/state/preflight.rs)
    assert_eq!(m.matches.len(), 34 - REFUSING.len(), "{:?}", m.matches);
    assert!(REFUSING.iter().all(|r| !m.matches.contains(&g(r))));
    type_text(&mut a, &mut c, "LAB");
    let Mode::Move(m) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    // case-insensitive; /lab hands io down, so only its leaf takes it
    assert_eq!(m.matches, [g("lab/dd")]);
    send(&mut a, &mut c, key(KeyCode::Down));
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    let mv = move_of(4_190_202, "lab/dd", false);
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![mv.clone()]));
    assert_eq!(cf.reasons, [Reason::Destructive(mv.clone())]);
    assert_eq!(send(&mut a, &mut c, ch('y')), [write_of(mv)]);

    // ^T: one thread, into cgroup.threads; a thread stays in its threaded
    // domain (admin guide 2-2-2), which for /batch is /batch itself
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "dd");
    send(&mut a, &mut c, ctrl('t'));
    let Mode::Move(m) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert!(m.matches.is_empty(), "{:?}", m.matches);
    for _ in 0..2 {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    type_text(&mut a, &mut c, "batch");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        confirm(&a).request,
        WriteRequest::Ops(vec![move_of(4_190_202, "batch", true)])
    );
    // a filter that matches nothing: Enter does nothing
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "nosuchgroup");
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    assert!(matches!(a.mode, Mode::Move(_)));

    // into a systemd unit: systemd does not move it out again, so no
    // "may revert" note
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "15-main");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let into_unit = move_of(4_190_202, PG_SERVICE, false);
    assert_eq!(confirm(&a).reasons, [Reason::Destructive(into_unit)]);
}

#[test]
fn a_new_move_filter_starts_on_its_first_match() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    set_processes(&mut a, vec![process(4_190_201, "root", 0.0, 12, "worker")]);
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    for _ in 0..5 {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    type_text(&mut a, &mut c, "mount");
    let Mode::Move(m) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!((m.matches.len(), m.cursor), (MOUNTS, 0), "{:?}", m.matches);
    let first = m.matches[0].clone();
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        confirm(&a).request,
        WriteRequest::Ops(vec![move_of(4_190_201, rel(&first), false)]),
        "the first match"
    );
}

#[test]
fn new_group_names_are_checked_before_anything_is_written() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('n'));
    let check = |a: &App| match &a.mode {
        Mode::NewGroup(p) => p.check.clone(),
        m => panic!("{m:?}"),
    };
    let problem = |r: Result<String, String>| {
        r.unwrap_err()
            .split(". Accepted")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(problem(check(&a)), "group name: nothing was typed");
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    assert!(
        matches!(a.mode, Mode::NewGroup(_)),
        "Enter on an error stays"
    );
    for (typed, why) in [
        (
            "a/b",
            "group name: \"a/b\" contains '/'; create one level at a time",
        ),
        (
            "cpu.max",
            "group name: \"cpu.max\" starts with \"cpu.\", the prefix of the kernel's interface files",
        ),
        ("dd", "group name: \"dd\" already exists here"),
        ("..", "group name: \"..\" means this directory or its parent, not a new one"),
    ] {
        while !matches!(&a.mode, Mode::NewGroup(p) if p.input.is_empty()) {
            send(&mut a, &mut c, key(KeyCode::Backspace));
        }
        type_text(&mut a, &mut c, typed);
        assert_eq!(problem(check(&a)), why);
        assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    }
    while !matches!(&a.mode, Mode::NewGroup(p) if p.input.is_empty()) {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    type_text(&mut a, &mut c, "web");
    assert_eq!(check(&a), Ok("web".into()));
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [write_of(cgtop::model::write::create_group(&g("lab/web")))],
        "creating is undoable (rmdir): no confirmation"
    );
    assert_eq!(a.mode, Mode::Normal);
}

/// A name pasted 10,000 characters long stops at the cap (NAME_MAX), the
/// refusal is said on the status line, and the dialog with its error stays
/// on screen: the input scrolls instead of growing the box.
#[test]
fn a_long_paste_stops_at_the_cap_and_the_error_stays_in_sight() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('n'));
    type_text(&mut a, &mut c, &"x".repeat(10_000));
    let Mode::NewGroup(p) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(p.input.as_str().len(), 255);
    let status = a.status.as_ref().map(|s| (s.level, s.text.as_str()));
    assert_eq!(
        status,
        Some((
            Level::Warn,
            "at most 255 characters here: the rest was not taken"
        ))
    );
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("Enter creates"), "{shown}");
    assert!(shown.contains("at most 255 characters"), "{shown}");
}

/// A paste (the terminal's bracketed paste) is text for the field with
/// the focus and never keys: a pasted "k" does not kill, a pasted "y" does
/// not confirm, a pasted newline does not press Enter; and with no text
/// field on screen it is dropped, and said so.
#[test]
fn a_paste_is_text_for_a_field_and_never_keys() {
    let paste = |s: &str| Msg::Paste(s.to_owned());
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");

    assert!(send(&mut a, &mut c, paste("kq\nf")).is_empty());
    assert_eq!((&a.mode, a.quitting), (&Mode::Normal, false));
    let status = a.status.as_ref().map(|s| s.text.as_str());
    assert_eq!(status, Some("paste ignored: no text field here"));

    // a y/n confirmation has no text field: the paste goes nowhere
    send(&mut a, &mut c, ch('f'));
    assert!(send(&mut a, &mut c, paste("y\n")).is_empty());
    assert!(matches!(a.mode, Mode::Confirm(_)), "{:?}", a.mode);
    send(&mut a, &mut c, ch('n'));

    // into a name, at the cursor, without the newline; Enter is the key's
    send(&mut a, &mut c, ch('n'));
    type_text(&mut a, &mut c, "wd");
    send(&mut a, &mut c, key(KeyCode::Left));
    assert!(send(&mut a, &mut c, paste("eb\n")).is_empty());
    let Mode::NewGroup(p) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(p.input.as_str(), "webd");
    // cut at the cap, said so, and the name check still runs on what is
    // there (255 'x' is a valid name: no error replaces the warning)
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('n'));
    send(&mut a, &mut c, paste(&"x".repeat(10_000)));
    let Mode::NewGroup(p) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(p.input.as_str(), "x".repeat(255));
    let status = a.status.as_ref().map(|s| (s.level, s.text.as_str()));
    assert_eq!(
        status,
        Some((
            Level::Warn,
            "at most 255 characters here: the rest was not taken"
        ))
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [write_of(cgtop::model::write::create_group(&g(&format!(
            "batch/{}",
            "x".repeat(255)
        ))))]
    );
}

/// The editing keys work in a dialog's field as in any text input: the
/// cursor moves, a character goes in where it is, Ctrl-W deletes a word.
#[test]
fn dialog_fields_edit_at_the_cursor() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('n'));
    type_text(&mut a, &mut c, "wb");
    send(&mut a, &mut c, key(KeyCode::Left));
    type_text(&mut a, &mut c, "e");
    send(&mut a, &mut c, key(KeyCode::Home));
    send(&mut a, &mut c, key(KeyCode::Delete));
    send(&mut a, &mut c, key(KeyCode::End));
    type_text(&mut a, &mut c, " x");
    send(&mut a, &mut c, ctrl('w'));
    let Mode::NewGroup(p) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(p.input.as_str(), "eb ");
}

#[test]
fn remove_is_confirmed_and_the_start_group_is_refused() {
    let (mut a, mut c, d) = lab();
    // its one process gone: an empty group (one with processes is not
    // even asked about, tests/state/preflight.rs)
    let dd = d.path().join("lab/dd");
    let events = dd.join("cgroup.events");
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::write(events, "populated 0\nfrozen 0\n").unwrap();
    std::fs::write(dd.join("cgroup.procs"), "").unwrap();
    tick(&mut a, &mut c, 1.0);
    on(&mut a, &mut c, "lab/dd");
    assert!(send(&mut a, &mut c, key(KeyCode::Delete)).is_empty());
    let rm = cgtop::model::write::remove_group(&g("lab/dd"));
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![rm.clone()]));
    assert_eq!(cf.reasons, [Reason::Destructive(rm.clone())]);
    assert_eq!(send(&mut a, &mut c, key(KeyCode::Enter)), [write_of(rm)]);

    send(&mut a, &mut c, key(KeyCode::Home));
    assert!(send(&mut a, &mut c, key(KeyCode::Delete)).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(
        a.status.as_ref().unwrap().text,
        "cgtop does not remove the group it was started at, nor the root"
    );
}

// ---------------------------------------------------------------------------
// Undo (u).

#[test]
fn undo_writes_the_old_value_back() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    let set = wop(
        "batch",
        "memory.max",
        "536870912",
        WriteKind::Memory(MemoryFile::Max, Limit::Value(536_870_912)),
    );
    let fx = finished(&mut a, &mut c, vec![done(set, Some("max\n"))]);
    assert_eq!(fx, [Effect::Collector(Command::RefreshNow)]);
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((Level::Info, "done: set memory.max of /batch to 536870912"))
    );
    let back = wop(
        "batch",
        "memory.max",
        "max",
        WriteKind::Memory(MemoryFile::Max, Limit::Max),
    );
    assert_eq!(undo_ops(&a), std::slice::from_ref(&back));
    assert_eq!(send(&mut a, &mut c, ch('u')), [write_of(back.clone())]);
    assert!(a.history.undo.is_empty());
    // the undo's own outcome is no new undo: it waits on the redo stack
    finished(&mut a, &mut c, vec![done(back, Some("536870912\n"))]);
    assert_eq!(a.history.redo.len(), 1);
    let fx = send(&mut a, &mut c, ch('u'));
    assert!(fx.is_empty());
    assert_eq!(
        a.status.as_ref().unwrap().text,
        "nothing to undo (kill and remove cannot be undone)"
    );
}

#[test]
fn undo_of_cpu_max_io_max_and_controllers_restores_each_value() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    let io_set = IoMaxSet {
        dev: VDA,
        rbps: None,
        wbps: Some(Limit::Value(2_097_152)),
        riops: None,
        wiops: None,
    };
    finished(
        &mut a,
        &mut c,
        vec![
            done(
                wop(
                    "batch",
                    "cpu.max",
                    "50000 100000",
                    WriteKind::CpuMax(CpuMax {
                        quota: Some(50_000),
                        period: 100_000,
                    }),
                ),
                Some("max 100000\n"),
            ),
            done(
                wop(
                    "batch",
                    "io.max",
                    "254:0 wbps=2097152",
                    WriteKind::IoMax(io_set),
                ),
                Some(""),
            ),
            done(
                wop(
                    "lab",
                    "cgroup.subtree_control",
                    "+cpu -io",
                    WriteKind::SubtreeControl(vec![
                        ControllerChange::enable("cpu"),
                        ControllerChange::disable("io"),
                    ]),
                ),
                Some("io\n"),
            ),
        ],
    );
    // one request is one entry, undone last op first: the controllers
    assert_eq!(a.history.undo.len(), 1);
    assert_eq!(
        undo_ops(&a),
        [
            wop(
                "lab",
                "cgroup.subtree_control",
                "-cpu +io",
                WriteKind::SubtreeControl(vec![
                    ControllerChange::disable("cpu"),
                    ControllerChange::enable("io"),
                ]),
            ),
            wop(
                "batch",
                "io.max",
                "254:0 rbps=max wbps=max riops=max wiops=max",
                WriteKind::IoMax(IoMaxSet {
                    dev: VDA,
                    rbps: Some(Limit::Max),
                    wbps: Some(Limit::Max),
                    riops: Some(Limit::Max),
                    wiops: Some(Limit::Max),
                }),
            ),
            wop(
                "batch",
                "cpu.max",
                "max 100000",
                WriteKind::CpuMax(CpuMax {
                    quota: None,
                    period: 100_000,
                }),
            ),
        ]
    );
}

#[test]
fn a_cancelled_undo_stays_on_the_stack() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    let pids = wop(
        "lab",
        "pids.max",
        "100",
        WriteKind::PidsMax(Limit::Value(100)),
    );
    finished(&mut a, &mut c, vec![done(pids, Some("1140\n"))]);
    finished(
        &mut a,
        &mut c,
        vec![done(cgtop::model::write::create_group(&g("lab/web")), None)],
    );
    let pids_back = wop(
        "lab",
        "pids.max",
        "1140",
        WriteKind::PidsMax(Limit::Value(1140)),
    );
    let rm = cgtop::model::write::remove_group(&g("lab/web"));
    assert_eq!(undo_ops(&a), [pids_back.clone(), rm.clone()]);
    // u asks before removing; n, Esc: the remove is still the next undo,
    // and u does not write the pids.max entry below it without asking
    for cancel in [ch('n'), key(KeyCode::Esc)] {
        assert!(send(&mut a, &mut c, ch('u')).is_empty());
        assert_eq!(confirm(&a).request, WriteRequest::Ops(vec![rm.clone()]));
        assert!(send(&mut a, &mut c, cancel).is_empty());
        assert_eq!(undo_ops(&a), [pids_back.clone(), rm.clone()]);
    }
    send(&mut a, &mut c, ch('u'));
    assert_eq!(send(&mut a, &mut c, ch('y')), [write_of(rm)]);
    assert_eq!(undo_ops(&a), std::slice::from_ref(&pids_back));
    assert_eq!(send(&mut a, &mut c, ch('u')), [write_of(pids_back)]);
    assert!(a.history.undo.is_empty());
}

#[test]
fn kill_move_and_remove_leave_nothing_to_undo() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    finished(
        &mut a,
        &mut c,
        vec![
            done(kill_of("batch"), None),
            done(move_of(4_190_202, "lab/dd", false), None),
            done(cgtop::model::write::remove_group(&g("lab/dd")), None),
        ],
    );
    assert!(a.history.undo.is_empty());
    assert_eq!(a.log.len(), 3, "but each is in the action log");
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn undo_of_a_create_is_a_confirmed_remove() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    finished(
        &mut a,
        &mut c,
        vec![done(cgtop::model::write::create_group(&g("lab/web")), None)],
    );
    assert_eq!(
        undo_ops(&a),
        [cgtop::model::write::remove_group(&g("lab/web"))]
    );
    assert!(send(&mut a, &mut c, ch('u')).is_empty());
    assert_eq!(
        confirm(&a).request,
        WriteRequest::Ops(vec![cgtop::model::write::remove_group(&g("lab/web"))])
    );
}

// ---------------------------------------------------------------------------
// Confirmations.

#[test]
fn n_and_esc_cancel_y_and_enter_confirm() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    let freeze = write_of(freeze_of("batch", true));
    for (k, confirms) in [
        (ch('n'), false),
        (ch('N'), false),
        (key(KeyCode::Esc), false),
        (ctrl('c'), false),
        (ch('y'), true),
        (ch('Y'), true),
        (key(KeyCode::Enter), true),
    ] {
        send(&mut a, &mut c, ch('f'));
        let fx = send(&mut a, &mut c, k.clone());
        assert_eq!(a.mode, Mode::Normal, "{k:?}");
        if confirms {
            assert_eq!(fx, std::slice::from_ref(&freeze), "{k:?}");
        } else {
            assert!(fx.is_empty(), "{k:?}: {fx:?}");
        }
    }
    // any other key leaves the question open
    send(&mut a, &mut c, ch('f'));
    for k in [ch('x'), ch(' '), key(KeyCode::Down), ch('q')] {
        assert!(send(&mut a, &mut c, k).is_empty());
        assert!(matches!(a.mode, Mode::Confirm(_)));
    }
}

#[test]
fn a_protected_group_needs_its_name_typed() {
    let (mut a, mut c, _d) = lab();
    a.protected = Protected {
        own: Some(g("batch")),
        ..Protected::default()
    };
    on(&mut a, &mut c, "batch");
    for (action, why) in [
        (
            ch('f'),
            "freezing it stops cgtop, and nothing is left to thaw it",
        ),
        (ch('K'), "killing it kills cgtop too"),
    ] {
        send(&mut a, &mut c, action.clone());
        let cf = confirm(&a);
        assert_eq!(typed_name(cf), Some((g("batch"), String::new())));
        assert_eq!(cf.dangers, [Danger::ContainsCgtop]);
        let WriteRequest::Typed { ops, name } = &cf.request else {
            panic!("{:?}", cf.request)
        };
        assert_eq!(name, &g("batch"));
        assert_eq!(
            typed_prompt(name, &cf.dangers, Harm::of(&ops[0])),
            format!("/batch contains cgtop itself: {why}. Type its name (batch) to go ahead")
        );
        let request = cf.request.clone();
        // y and Enter alone do nothing: y is a letter of the name
        assert!(send(&mut a, &mut c, ch('y')).is_empty());
        assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
        assert_eq!(typed_name(confirm(&a)), Some((g("batch"), "y".to_owned())));
        send(&mut a, &mut c, key(KeyCode::Backspace));
        // a wrong name does nothing
        type_text(&mut a, &mut c, "batc");
        assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
        assert!(matches!(a.mode, Mode::Confirm(_)));
        // the right one (the last component) goes ahead
        type_text(&mut a, &mut c, "h");
        assert_eq!(
            send(&mut a, &mut c, key(KeyCode::Enter)),
            [Effect::Write(request)],
            "{action:?}"
        );
        assert_eq!(a.mode, Mode::Normal);
    }
    // the whole path is accepted too, and Esc cancels
    send(&mut a, &mut c, ch('f'));
    type_text(&mut a, &mut c, "/batch");
    assert_eq!(send(&mut a, &mut c, key(KeyCode::Enter)).len(), 1);
    send(&mut a, &mut c, ch('K'));
    type_text(&mut a, &mut c, "batch");
    assert!(send(&mut a, &mut c, key(KeyCode::Esc)).is_empty());
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn an_ancestor_of_a_protected_group_is_protected_and_a_thaw_is_not() {
    let (mut a, mut c, d) = lab();
    a.protected = Protected {
        session: vec![g("lab/dd")],
        ..Protected::default()
    };
    on(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('K'));
    assert_eq!(typed_name(confirm(&a)), Some((g("lab"), String::new())));
    type_text(&mut a, &mut c, "lab");
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [Effect::Write(WriteRequest::Typed {
            ops: vec![kill_of("lab")],
            name: g("lab")
        })]
    );
    // a thaw is harmless: no typed name, no confirmation
    std::fs::write(d.path().join("lab/cgroup.freeze"), "1\n").unwrap();
    std::fs::write(
        d.path().join("lab/cgroup.events"),
        "populated 1\nfrozen 1\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 2.0);
    read_inspection(&mut a, &mut c, 2.0);
    assert_eq!(
        send(&mut a, &mut c, ch('f')),
        [write_of(freeze_of("lab", false))]
    );
}

#[test]
fn a_systemd_unit_limit_is_confirmed_with_the_systemctl_way() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, PG_SERVICE);
    send(&mut a, &mut c, ch('e'));
    assert!(enter_limit(&mut a, &mut c, "memory.max", "512M").is_empty());
    let op = wop(
        PG_SERVICE,
        "memory.max",
        "536870912",
        WriteKind::Memory(MemoryFile::Max, Limit::Value(536_870_912)),
    );
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![op.clone()]));
    assert_eq!(
        cf.reasons,
        [
            Reason::SystemdMayRevert {
                unit: "postgresql@15-main.service".into()
            },
            Reason::SystemdWay {
                command: "systemctl set-property --runtime postgresql@15-main.service \
                          MemoryMax=536870912"
                    .into()
            },
            // the lab app was not booted with systemd (tests/state/systemd.rs
            // has the offer taken)
            Reason::SystemdOffer(cgtop::model::write::systemd::Presence::NotBooted),
        ]
    );
    assert_eq!(send(&mut a, &mut c, ch('y')), [write_of(op)]);

    // io.max names the device as systemd wants it
    send(&mut a, &mut c, ch('e'));
    assert!(enter_limit(&mut a, &mut c, "io.max", "wbps=2M").is_empty());
    assert!(confirm(&a).reasons.contains(&Reason::SystemdWay {
        command: "systemctl set-property --runtime postgresql@15-main.service \
                  'IOWriteBandwidthMax=/dev/vda 2097152'"
            .into()
    }));
    // n: nothing written
    assert!(send(&mut a, &mut c, ch('n')).is_empty());
}

// ---------------------------------------------------------------------------
// Read-only.

#[test]
fn read_only_refuses_every_write_key_and_says_why() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    set_processes(&mut a, vec![process(4_190_201, "root", 0.0, 12, "worker")]);
    a.read_only = Some(cgtop::app::ReadOnly::Flag);
    finished(
        &mut a,
        &mut c,
        vec![done(
            wop(
                "batch",
                "pids.max",
                "5",
                WriteKind::PidsMax(Limit::Value(5)),
            ),
            Some("max\n"),
        )],
    );
    let keys = [
        ("c", ch('c')),
        ("e", ch('e')),
        ("E", ch('E')),
        ("f", ch('f')),
        ("K", ch('K')),
        ("F9", key(KeyCode::F(9))),
        ("n", ch('n')),
        ("Delete", key(KeyCode::Delete)),
        ("u", ch('u')),
    ];
    for (name, k) in keys {
        a.status = None;
        // a key htop or systemd-cgtop use otherwise: its hint after the
        // refusal, the first time
        let hint = match &k {
            cgtop::app::Msg::Key(ev) => cgtop::app::keymap::hint_for(ev),
            _ => None,
        }
        .map(|(_, w)| format!("; {w}"))
        .unwrap_or_default();
        let fx = send(&mut a, &mut c, k);
        assert!(fx.is_empty(), "{name}: {fx:?}");
        assert_eq!(a.mode, Mode::Normal, "{name}");
        assert_eq!(
            a.status.as_ref().map(|s| (s.level, s.text.clone())),
            Some((
                Level::Warn,
                format!("read-only (--read-only): this key changes the hierarchy{hint}")
            )),
            "{name}"
        );
    }
    // m from the process list too
    send(&mut a, &mut c, key(KeyCode::Tab));
    a.status = None;
    assert!(send(&mut a, &mut c, ch('m')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    assert!(a.status.as_ref().unwrap().text.starts_with("read-only"));
    assert_eq!(a.history.undo.len(), 1, "the undo stack is kept");
    // the action log is reading, not writing
    send(&mut a, &mut c, ch('L'));
    assert!(matches!(a.mode, Mode::Log { .. }));
}

// ---------------------------------------------------------------------------
// After the writer: offers and explanations.

#[test]
fn ebusy_offers_the_leaf_fix_with_an_editable_name() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    let op = wop(
        "batch",
        "cgroup.subtree_control",
        "+cpu",
        WriteKind::SubtreeControl(vec![ControllerChange::enable("cpu")]),
    );
    let out = refused(d.path(), op, EBUSY);
    assert_eq!(
        out.offer,
        Some(Offer::LeafFix {
            group: g("batch"),
            changes: vec![ControllerChange::enable("cpu")],
            nr_procs: 2,
        })
    );
    let fx = finished(&mut a, &mut c, vec![out]);
    assert_eq!(fx, [Effect::Collector(Command::RefreshNow)]);
    let Mode::LeafFix(l) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!((l.leaf.as_str(), l.nr_procs), ("leaf", 2));
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((
            Level::Error,
            "EBUSY: /batch/cgroup.subtree_control was refused"
        ))
    );
    for _ in 0..4 {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    // an empty name is not taken
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    type_text(&mut a, &mut c, "workers");
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [Effect::Write(WriteRequest::LeafFix {
            group: g("batch"),
            leaf: "workers".into(),
            changes: vec![ControllerChange::enable("cpu")],
        })]
    );
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn the_leaf_name_is_checked_like_a_new_group_name() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    let op = wop(
        "batch",
        "cgroup.subtree_control",
        "+cpu",
        WriteKind::SubtreeControl(vec![ControllerChange::enable("cpu")]),
    );
    finished(&mut a, &mut c, vec![refused(d.path(), op, EBUSY)]);
    let check = |a: &App| match &a.mode {
        Mode::LeafFix(l) => l.check.clone(),
        m => panic!("{m:?}"),
    };
    assert_eq!(check(&a), Ok("leaf".into()));
    // the writer makes batch/LEAF and moves every process of batch there:
    // ".." would move them into the parent, "." leave them where they are
    for (bad, why) in [
        (
            "..",
            "\"..\" means this directory or its parent, not a new one",
        ),
        (
            ".",
            "\".\" means this directory or its parent, not a new one",
        ),
        ("a/b", "\"a/b\" contains '/'; create one level at a time"),
        (
            "cpu.leaf",
            "\"cpu.leaf\" starts with \"cpu.\", the prefix of the kernel's interface files",
        ),
        (" ", "nothing was typed"),
    ] {
        while !matches!(&a.mode, Mode::LeafFix(l) if l.leaf.is_empty()) {
            send(&mut a, &mut c, key(KeyCode::Backspace));
        }
        type_text(&mut a, &mut c, bad);
        let e = check(&a).unwrap_err();
        assert!(
            e.starts_with(&format!("group name: {why}. ")),
            "{bad:?}: {e}"
        );
        let fx = send(&mut a, &mut c, key(KeyCode::Enter));
        assert!(fx.is_empty(), "{bad:?}: {fx:?}");
        assert!(matches!(a.mode, Mode::LeafFix(_)), "{bad:?}");
    }
    // blanks around a good name are dropped
    send(&mut a, &mut c, key(KeyCode::Backspace));
    type_text(&mut a, &mut c, " jobs ");
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [Effect::Write(WriteRequest::LeafFix {
            group: g("batch"),
            leaf: "jobs".into(),
            changes: vec![ControllerChange::enable("cpu")],
        })]
    );
}

/// The kernel's ENOENT (pre-flight did not know) offers the plan along
/// the path, judged as a whole first: with /lab/dd holding a process its
/// last step would be EBUSY (2-4-3), so it is not offered and nothing
/// goes out; the plan itself is asserted on the writer's outcome.
#[test]
fn enoent_with_a_process_in_the_group_offers_no_plan_that_would_fail() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "lab/dd");
    let op = wop(
        "lab/dd",
        "cgroup.subtree_control",
        "+memory",
        WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")]),
    );
    let out = refused(d.path(), op, ENOENT);
    assert!(matches!(out.offer, Some(Offer::EnableAlongPath(_))));
    let fx = finished(&mut a, &mut c, vec![out]);
    let Mode::Message { title, lines } = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(title, "enable along the path: not offered");
    assert_eq!(
        lines[0],
        "Step 2 of 2 would be refused, so no step is written:"
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::Write(_))), "{fx:?}");
}

/// The same ENOENT for /lab/dd without a process: the plan is offered
/// with exactly those ops; its step on /lab, above the group, is said,
/// and only y goes ahead.
#[test]
fn enoent_offers_to_enable_along_the_path_exactly_those_ops() {
    let (mut a, mut c, d) = lab();
    std::fs::write(d.path().join("lab/dd/cgroup.procs"), "").unwrap();
    tick(&mut a, &mut c, 1.0);
    on(&mut a, &mut c, "lab/dd");
    let op = wop(
        "lab/dd",
        "cgroup.subtree_control",
        "+memory",
        WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")]),
    );
    let out = refused(d.path(), op.clone(), ENOENT);
    let along = vec![
        wop(
            "lab",
            "cgroup.subtree_control",
            "+memory",
            WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")]),
        ),
        op,
    ];
    assert_eq!(out.offer, Some(Offer::EnableAlongPath(along.clone())));
    finished(&mut a, &mut c, vec![out]);
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(along.clone()));
    assert_eq!(
        (cf.question, cf.reasons.as_slice()),
        (
            Question::EnableAlongPath,
            &[Reason::BeyondGroup {
                group: g("lab"),
                selected: g("lab/dd")
            }][..]
        )
    );
    assert!(send(&mut a, &mut c, key(KeyCode::Enter)).is_empty());
    assert_eq!(
        send(&mut a, &mut c, ch('y')),
        [Effect::Write(WriteRequest::Ops(along))]
    );
}

#[test]
fn a_failure_without_an_offer_explains_itself_until_a_key() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    let op = wop(
        "batch",
        "memory.max",
        "536870912",
        WriteKind::Memory(MemoryFile::Max, Limit::Value(536_870_912)),
    );
    let out = refused(d.path(), op, EACCES);
    let e = out.result.clone().unwrap_err();
    finished(&mut a, &mut c, vec![out]);
    let Mode::Message { title, lines } = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert_eq!(title, "EACCES: the kernel refused");
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((Level::Error, "EACCES: /batch/memory.max was refused"))
    );
    assert_eq!(lines[0], e.what);
    assert_eq!(lines[2], e.explanation);
    assert_eq!(
        lines.last().unwrap(),
        &format!("Fix: {}", e.fix.clone().unwrap())
    );
    assert!(
        a.history.undo.is_empty(),
        "a failed write has nothing to undo"
    );
    assert_eq!(a.log.len(), 1, "but it is logged");
    // any key closes it, and does nothing else
    assert!(send(&mut a, &mut c, ch('K')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
}

/// On pure v2 a group without memory files is still covered by cgroup
/// writeback (the kernel turns memory on wherever io is on:
/// io_cgrp_subsys.depends_on; measured in tests/guest/truth.rs): no warning,
/// no offer after the write.
#[test]
fn io_max_on_pure_v2_without_memory_files_needs_no_warning() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab/dd");
    send(&mut a, &mut c, ch('e'));
    assert!(form(&a).cgroup_writeback);
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "wbps=2M");
    assert_eq!(field(&a).warning, None);
    let set = vda_wbps_2m("lab/dd");
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [write_of(set.clone())]
    );
    finished(&mut a, &mut c, vec![done(set, Some(""))]);
    assert!(
        matches!(a.mode, Mode::Limits(_)),
        "no offer follows: {:?}",
        a.mode
    );
}

/// On a hybrid host whose memory controller is on cgroup v1 there is no
/// cgroup writeback: the form says buffered writes escape io.max.
#[test]
fn io_max_where_memory_is_on_cgroup_v1_warns() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), hybrid_mount(), 120, 40);
    a.read_only = None;
    on(&mut a, &mut c, "lab/dd");
    send(&mut a, &mut c, ch('e'));
    assert!(!form(&a).cgroup_writeback);
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "wbps=2M");
    let w = field(&a).warning.clone().unwrap();
    assert!(
        w.contains("memory controller is on cgroup v1") && w.contains("only direct IO"),
        "{w}"
    );
}

#[test]
fn io_max_on_a_group_with_memory_offers_nothing() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let fx = enter_limit(&mut a, &mut c, "io.max", "wbps=2M");
    let Effect::Write(WriteRequest::Ops(ops)) = &fx[0] else {
        panic!("{fx:?}")
    };
    finished(&mut a, &mut c, vec![done(ops[0].clone(), Some(""))]);
    assert!(
        matches!(a.mode, Mode::Limits(_)),
        "the form stays: {:?}",
        a.mode
    );
}

// ---------------------------------------------------------------------------
// Freeze marks.

#[test]
fn a_frozen_group_is_freezing_until_the_kernel_says_frozen() {
    let (mut a, mut c, d) = lab();
    on(&mut a, &mut c, "batch");
    let freeze = freeze_of("batch", true);
    finished(&mut a, &mut c, vec![done(freeze, Some("0\n"))]);
    assert!(a.freezing.contains(&g("batch")));
    assert_eq!(a.frozen_since.get(&g("batch")), None);
    // the next refresh: the kernel has not finished freezing
    std::fs::write(d.path().join("batch/cgroup.freeze"), "1\n").unwrap();
    tick(&mut a, &mut c, 2.0);
    assert!(a.freezing.contains(&g("batch")), "still freezing");
    // f now thaws: cgtop asked for the freeze
    assert_eq!(
        send(&mut a, &mut c, ch('f')),
        [write_of(freeze_of("batch", false))]
    );
    // frozen 1 in cgroup.events: no longer freezing, frozen since then
    std::fs::write(
        d.path().join("batch/cgroup.events"),
        "populated 1\nfrozen 1\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 3.0);
    assert!(!a.freezing.contains(&g("batch")));
    assert_eq!(
        a.frozen_since.get(&g("batch")),
        Some(&Some(Duration::from_secs(3)))
    );
    // thawed: the mark goes
    finished(
        &mut a,
        &mut c,
        vec![done(freeze_of("batch", false), Some("1\n"))],
    );
    std::fs::write(
        d.path().join("batch/cgroup.events"),
        "populated 1\nfrozen 0\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 4.0);
    assert_eq!(a.frozen_since.get(&g("batch")), None);
}

// ---------------------------------------------------------------------------
// The lockout guard judges the effect of a write (issue 7, item 3).

/// Marks `group` frozen as cgroup.freeze and cgroup.events say it, and
/// lets the app see it.
fn freeze_on_disk(a: &mut App, c: &mut Collector, root: &Path, group: &str, secs: f64) {
    std::fs::write(root.join(group).join("cgroup.freeze"), "1\n").unwrap();
    std::fs::write(
        root.join(group).join("cgroup.events"),
        "populated 1\nfrozen 1\n",
    )
    .unwrap();
    tick(a, c, secs);
    read_inspection(a, c, secs);
}

/// Types `line` into the raw editor for `file` of the selected group.
fn raw_write(a: &mut App, c: &mut Collector, file: &str, line: &str) -> Vec<Effect> {
    send(a, c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = r.files.iter().position(|(n, _)| n == file).unwrap();
    for _ in 0..at {
        send(a, c, key(KeyCode::Down));
    }
    send(a, c, key(KeyCode::Enter));
    type_text(a, c, line);
    send(a, c, key(KeyCode::Enter))
}

#[test]
fn a_raw_freeze_spelt_otherwise_of_a_protected_group_needs_its_name() {
    let (mut a, mut c, _d) = lab();
    a.protected = Protected {
        own: Some(g("lab/dd")),
        ..Protected::default()
    };
    on(&mut a, &mut c, "lab/dd");
    // the kernel reads each of these as 1 (kstrtoint, base 0)
    for v in ["0x1", "01", "+1", "0X01"] {
        assert!(raw_write(&mut a, &mut c, "cgroup.freeze", v).is_empty());
        let cf = confirm(&a);
        assert_eq!(typed_name(cf), Some((g("lab/dd"), String::new())), "{v}");
        assert!(
            send(&mut a, &mut c, ch('y')).is_empty(),
            "{v}: y alone does not freeze"
        );
        send(&mut a, &mut c, key(KeyCode::Esc));
    }
    // on the parent too: it holds cgtop's group
    on(&mut a, &mut c, "lab");
    assert!(raw_write(&mut a, &mut c, "cgroup.freeze", "0x1").is_empty());
    assert_eq!(typed_name(confirm(&a)), Some((g("lab"), String::new())));
    send(&mut a, &mut c, key(KeyCode::Esc));
    // a value the kernel refuses, or a thaw, is no freeze
    on(&mut a, &mut c, "lab/dd");
    raw_write(&mut a, &mut c, "cgroup.freeze", "0x0");
    assert_eq!(typed_name(confirm(&a)), None);
}

#[test]
fn moving_cgtop_itself_into_a_frozen_group_needs_the_groups_name() {
    const CGTOP: u32 = 4_190_202;
    let (mut a, mut c, d) = lab();
    a.protected = Protected {
        own: Some(g("batch")),
        processes: [(CGTOP, Role::Cgtop)].into_iter().collect(),
        ..Protected::default()
    };
    freeze_on_disk(&mut a, &mut c, d.path(), "lab", 2.0);
    on(&mut a, &mut c, "batch");
    set_processes(
        &mut a,
        vec![
            process(4_190_201, "root", 0.0, 12, "worker --queue a"),
            process(CGTOP, "root", 0.0, 14, "cgtop"),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    let move_into = |a: &mut App, c: &mut Collector, filter: &str| {
        send(a, c, ch('m'));
        type_text(a, c, filter);
        send(a, c, key(KeyCode::Enter))
    };
    // lab/dd is frozen through its parent lab
    send(&mut a, &mut c, ch('j'));
    assert!(move_into(&mut a, &mut c, "lab/dd").is_empty());
    let cf = confirm(&a);
    assert_eq!(typed_name(cf), Some((g("lab/dd"), String::new())));
    assert_eq!(cf.dangers, [Danger::MovesIntoFrozen(Role::Cgtop)]);
    assert!(send(&mut a, &mut c, ch('y')).is_empty());
    send(&mut a, &mut c, key(KeyCode::Backspace));
    type_text(&mut a, &mut c, "dd");
    let mv = wop(
        "lab/dd",
        "cgroup.procs",
        "4190202",
        WriteKind::MoveProcess {
            pid: CGTOP,
            threads: false,
        },
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [Effect::Write(WriteRequest::Typed {
            ops: vec![mv],
            name: g("lab/dd")
        })]
    );
    // another process into the same frozen group: a plain y/N
    send(&mut a, &mut c, ch('k'));
    assert!(move_into(&mut a, &mut c, "lab/dd").is_empty());
    assert_eq!(typed_name(confirm(&a)), None);
    send(&mut a, &mut c, key(KeyCode::Esc));
    // cgtop into a group that is not frozen: a plain y/N
    send(&mut a, &mut c, ch('j'));
    assert!(move_into(&mut a, &mut c, "15-main").is_empty());
    assert_eq!(typed_name(confirm(&a)), None);
}

#[test]
fn a_raw_zero_to_a_frozen_groups_procs_moves_cgtop_and_needs_the_name() {
    let (mut a, mut c, d) = lab();
    freeze_on_disk(&mut a, &mut c, d.path(), "lab", 2.0);
    on(&mut a, &mut c, "lab/dd");
    // "0" moves the writing process: cgtop, frozen there
    for v in ["0", "00", "-0", "0x0"] {
        assert!(raw_write(&mut a, &mut c, "cgroup.procs", v).is_empty());
        let cf = confirm(&a);
        assert_eq!(typed_name(cf), Some((g("lab/dd"), String::new())), "{v}");
        assert_eq!(cf.dangers, [Danger::MovesIntoFrozen(Role::Cgtop)], "{v}");
        assert!(send(&mut a, &mut c, ch('y')).is_empty(), "{v}");
        send(&mut a, &mut c, key(KeyCode::Esc));
    }
    // a thread of cgtop, through cgroup.threads, the same
    assert!(raw_write(&mut a, &mut c, "cgroup.threads", "0").is_empty());
    assert_eq!(typed_name(confirm(&a)), Some((g("lab/dd"), String::new())));
}

#[test]
fn a_move_the_writer_refused_for_another_users_group_asks_for_the_name_next_time() {
    // the app cannot see who owns a group; the writer's check just before
    // writing can, and when it refuses a protected process moved into a
    // delegated subtree, the next confirmation of such a move (there or
    // below) asks for the name instead of a plain y
    let (mut a, mut c, _d) = lab();
    tick(&mut a, &mut c, 1.0);
    read_inspection(&mut a, &mut c, 1.0);
    on(&mut a, &mut c, "lab");
    assert!(raw_write(&mut a, &mut c, "cgroup.procs", "0").is_empty());
    assert_eq!(
        typed_name(confirm(&a)),
        None,
        "nothing known yet: a plain y/N"
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    let op = cgtop::model::write::raw(&g("lab"), "cgroup.procs", "0");
    let refusal = WriteOutcome::failed(
        op,
        cgtop::model::WriteError::refused(
            "/lab/cgroup.procs".into(),
            "refused: checked again just before writing".into(),
            None,
        ),
    )
    .guarded_for(vec![Danger::MovesIntoDelegated(Role::Cgtop)]);
    finished(&mut a, &mut c, vec![refusal]);
    // the failure's dialog (what, why, the fix), closed
    send(&mut a, &mut c, key(KeyCode::Esc));
    for group in ["lab", "lab/dd"] {
        on(&mut a, &mut c, group);
        assert!(raw_write(&mut a, &mut c, "cgroup.procs", "0").is_empty());
        let cf = confirm(&a);
        assert_eq!(typed_name(cf), Some((g(group), String::new())), "{group}");
        assert_eq!(
            cf.dangers,
            [Danger::MovesIntoDelegated(Role::Cgtop)],
            "{group}"
        );
        assert!(
            send(&mut a, &mut c, ch('y')).is_empty(),
            "{group}: y alone does not move"
        );
        send(&mut a, &mut c, key(KeyCode::Esc));
    }
    // a group outside that subtree: a plain confirmation, as before
    on(&mut a, &mut c, "batch");
    assert!(raw_write(&mut a, &mut c, "cgroup.procs", "0").is_empty());
    assert_eq!(typed_name(confirm(&a)), None);
}
