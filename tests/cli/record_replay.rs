//! `cgtop record` and `cgtop replay` (issue 9, item 5): a recording
//! replays to exactly the JSON and text the live run printed (through
//! the library with a fake clock, and through the binary); the format
//! round-trips every value, survives truncation and damage, never panics
//! on any bytes; the output file is opened safely and rotates or stops at
//! its cap; and a group named `record` can still be given.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::batch;
use cgtop::cgroupfs::io::{DevId, IoStat, IoStatDev, IoStatDevice};
use cgtop::cgroupfs::v1::FreezerState;
use cgtop::cgroupfs::{CgroupEvents, CgroupType, CpuMax, CpuStat, Limit};
use cgtop::model::time::record::{decode_all, Encoder, GroupLimits, Header, Record, SampleRef};
use cgtop::model::tree::snapshot::{HierKind, Sources};
use cgtop::model::{
    DeviceInfo, GroupPath, GroupSample, HotStats, ProcessInfo, ScanCost, Snapshot, Unreadable,
};
use cgtop::options::{Options, Output};
use cgtop::render::columns::Column;
use cgtop::source::collector::Collector;
use cgtop::source::record::{
    open_output, read_all, AtCap, RecordConfig, Recorder, Replay, Written,
};
use common::{burn_cpu, copy_fixture, count_descendants, do_io, host, remove_group};
use proptest::prelude::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn header() -> Header {
    Header {
        host: host(),
        mount: common::directory_mount("pure-v2-systemd"),
        start: GroupPath::root(),
        interval: Duration::from_secs(7),
        start_unix: Duration::from_secs(1_790_000_000),
    }
}

fn opts(output: Output, n: u64) -> Options {
    Options {
        interval: Duration::from_secs(7),
        output,
        iterations: Some(n),
        ..crate::common::options()
    }
}

fn cfg(path: &Path) -> RecordConfig {
    RecordConfig {
        path: path.to_path_buf(),
        append: false,
        max_size: None,
        at_cap: AtCap::Rotate,
        frame_every: cgtop::source::record::FRAME_SECS,
    }
}

/// A collector on `root` as `cgtop record` sets it up, with the test
/// host's CPUs as the ceiling.
fn recording_collector(root: &Path) -> Collector {
    let mut c = common::collector(root);
    c.set_cpu_ceiling(Some(host().ncpus));
    c.set_grade_limits(true);
    c
}

/// Changes the tree between samples as a busy host does: CPU and IO in
/// a few services, memory moving, a group made on one step and removed
/// on a later one (the recording's layout changes).
fn churn(root: &Path, step: u64) {
    burn_cpu(root, "system.slice/dbus.service", 40_000 + step * 1_000);
    burn_cpu(root, "system.slice/rivm-cmd.service", 900_000);
    if step % 3 == 0 {
        do_io(
            root,
            "system.slice/dbus.service",
            "254:0",
            4096 * step,
            8192,
            1,
            2,
        );
    }
    let mem = root.join("system.slice/dbus.service/memory.current");
    std::fs::write(&mem, format!("{}\n", 2_000_000 + step * 4096)).unwrap();
    if step == 4 {
        let g = root.join("system.slice/new.service");
        std::fs::create_dir(&g).unwrap();
        for (f, t) in [
            ("cgroup.procs", ""),
            ("cgroup.type", "domain\n"),
            ("cpu.stat", "usage_usec 10\nuser_usec 5\nsystem_usec 5\n"),
            ("memory.current", "4096\n"),
            ("memory.max", "1048576\n"),
            ("cgroup.events", "populated 0\nfrozen 0\n"),
        ] {
            std::fs::write(g.join(f), t).unwrap();
        }
        count_descendants(root, "system.slice/new.service", 1);
    }
    if step == 9 {
        remove_group(root, "system.slice/new.service");
    }
    if step == 3 {
        // a limit changed by someone else (seen on the next walk)
        std::fs::write(
            root.join("system.slice/dbus.service/memory.max"),
            "8388608\n",
        )
        .unwrap();
    }
}

/// Records `n` refreshes after the first of a copied fixture at a fake
/// clock (7 s apart: a new frame every 9 samples), printing them as
/// `output`; returns what was printed and the recording's path.
fn record_fixture(dir: &Path, output: Output, n: u64) -> (Vec<u8>, std::path::PathBuf) {
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.join("rec");
    let mut c = recording_collector(tree.path());
    let mut rec = Recorder::create(cfg(&file), header()).unwrap();
    let mut out = Vec::new();
    let mut k = 0u64;
    let mut step = 0u64;
    let recorded = batch::record(
        &mut out,
        &mut c,
        &mut rec,
        None,
        &header(),
        &opts(output, n),
        |c| {
            k += 1;
            c.refresh(Duration::from_millis(7_000 * k + k % 3))
        },
        |_| {
            step += 1;
            churn(tree.path(), step);
            true
        },
    )
    .unwrap();
    assert_eq!(recorded, n + 1);
    rec.finish().unwrap();
    (out, file)
}

fn replayed(file: &Path, output: Output) -> Vec<u8> {
    let mut r = Replay::open(file).unwrap();
    let mut out = Vec::new();
    batch::replay(&mut out, &mut r, output, None, &Column::DEFAULT).unwrap();
    assert_eq!(r.damaged(), 0);
    out
}

#[test]
fn replay_prints_exactly_the_json_the_live_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let (live, file) = record_fixture(dir.path(), Output::Json, 20);
    let text = String::from_utf8(live.clone()).unwrap();
    assert_eq!(text.lines().count(), 20);
    // the figures moved: rates, a new group, a changed limit are in it
    assert!(text.contains("\"cpu_pct\":"));
    assert!(text.contains("new.service"));
    let rates_seen = text.lines().filter(|l| l.contains("\"rbps\":")).count();
    assert!(rates_seen > 0, "IO rates printed");
    let back = replayed(&file, Output::Json);
    assert_eq!(String::from_utf8(back).unwrap(), text);
}

#[test]
fn replay_prints_exactly_the_text_the_live_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let (live, file) = record_fixture(dir.path(), Output::Text, 12);
    let text = String::from_utf8(live).unwrap();
    assert!(text.contains("refresh 12 at"));
    assert_eq!(
        String::from_utf8(replayed(&file, Output::Text)).unwrap(),
        text
    );
}

#[test]
fn replay_keeps_limits_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = record_fixture(dir.path(), Output::Tui, 12);
    let all: Vec<_> = Replay::open(&file).unwrap().collect();
    assert_eq!(all.len(), 13);
    assert!(all[0].first && !all[1].first);
    let dbus = GroupPath::new("system.slice/dbus.service");
    let limit_at = |i: usize| {
        let r = &all[i].refresh;
        let k = r
            .snapshot
            .groups
            .iter()
            .position(|g| g.path == dbus)
            .unwrap();
        r.limits[k].memory
    };
    assert_eq!(
        limit_at(12),
        Some(8_388_608),
        "the changed limit is recorded"
    );
    assert_ne!(limit_at(1), limit_at(12));
    assert!(!all[0].refresh.devices.is_empty(), "the fixture's devices");
    assert_eq!(all[12].refresh.devices, all[0].refresh.devices);
    assert_eq!(all[3].interval, Duration::from_millis(7_000 + 1));
}

/// A sample whose every field is set, and set to the edges.
fn odd_snapshot(at: u64) -> (Snapshot, Vec<GroupLimits>) {
    let mut a = GroupSample::new(GroupPath::root(), 1);
    a.hot = HotStats {
        cpu: Some(CpuStat {
            usage_usec: u64::MAX,
            user_usec: Some(0),
            system_usec: None,
            nr_periods: Some(7),
            nr_throttled: Some(u64::MAX - at),
            throttled_usec: Some(at),
        }),
        memory_current: Some(at * 1_000_000_007),
        io: Some(IoStat(vec![
            (
                IoStatDevice::Dev(DevId {
                    major: u32::MAX,
                    minor: 0,
                }),
                IoStatDev {
                    rbytes: Some(at),
                    wbytes: None,
                    rios: Some(u64::MAX),
                    wios: Some(1),
                    dbytes: Some(2),
                    dios: None,
                },
            ),
            (IoStatDevice::Unknown, IoStatDev::ZERO),
        ])),
        pids_current: None,
        nr_procs: Some(3),
        events: Some(CgroupEvents {
            populated: Some(true),
            frozen: None,
        }),
        memory_max: Some(Limit::Value(u64::MAX)),
        memory_limit: Some(u64::MAX),
        swap_current: Some(at),
        psi_some_avg10: Some(u32::MAX),
        psi_full_avg10: Some(7),
        throttled_local_usec: Some(at / 2),
        unreadable: vec![Unreadable {
            file: "memory.stat".into(),
            error: "a FIFO, not a regular file: not read".into(),
        }],
        // where the figures came from: every mark, the disk changing
        // from sample to sample and gone at one
        v1: cgtop::model::tree::snapshot::V1Hot {
            sources: Sources {
                cpu: Some(HierKind::V2),
                memory: Some(HierKind::V1),
                io: Some(HierKind::V1),
                pids: Some(HierKind::V1),
                freezer: None,
                io_own_only: false,
                io_uncounted: (at != 2).then_some(DevId {
                    major: u32::MAX,
                    minor: u32::try_from(at).unwrap(),
                }),
                root_kernel_memory: true,
                root_machine_tasks: at % 2 == 1,
            },
            freezer_state: Some(FreezerState::Freezing),
            ..Default::default()
        },
    };
    a.cgroup_type = Some(CgroupType::DomainThreaded);
    let mut b = GroupSample::new(GroupPath::new("a\u{1b}[2J/é b"), u64::MAX - at);
    b.hot.memory_max = Some(Limit::Max);
    b.hot.memory_limit = None;
    b.cgroup_type = Some(CgroupType::Threaded);
    b.hot.v1.sources.freezer = Some(HierKind::V1);
    b.hot.v1.sources.io_own_only = true;
    b.hot.v1.freezer_state = Some(if at > 2 {
        FreezerState::Frozen
    } else {
        FreezerState::Thawed
    });
    // who it is, as a resolver would say it (the same at every sample:
    // written once a frame), in hostile text
    b.identity = Some(std::sync::Arc::new(cgtop::model::identity::Identity {
        kind: Some(cgtop::model::identity::Kind::Container),
        runtime: Some(cgtop::model::identity::Runtime::Podman),
        id: "0".repeat(64),
        name: Some("web\u{1b}[2J\u{202e}".into()),
        image: Some(String::new()),
        qos: Some(cgtop::model::identity::Qos::BestEffort),
        labels: vec![("k".into(), "v\n".into()), ("k".into(), "w".into())],
        unreadable: Some("not root".into()),
        ..cgtop::model::identity::Identity::default()
    }));
    let limits = vec![
        GroupLimits {
            memory: Some(at),
            cpu: Some(CpuMax {
                quota: None,
                period: 100_000,
            }),
            pids: Some(Limit::Max),
        },
        GroupLimits {
            memory: None,
            cpu: Some(CpuMax {
                quota: Some(u64::MAX),
                period: 1,
            }),
            pids: Some(Limit::Value(at)),
        },
    ];
    let cost = ScanCost {
        wall: Duration::from_nanos(at * 3 + 1),
        cpu: Duration::from_nanos(at),
        files_read: at,
        files_kept: u64::MAX,
        fd_limited: at % 2 == 0,
        walked: true,
        dirs_listed: 9,
    };
    (
        Snapshot {
            at: Duration::from_nanos(at * 1_000_000_001),
            groups: vec![a, b],
            cost,
        },
        limits,
    )
}

#[test]
fn every_field_round_trips_at_its_edges() {
    let mut enc = Encoder::new();
    let mut bytes = Vec::new();
    enc.start_frame(&header(), &mut bytes);
    let devices = vec![DeviceInfo {
        dev: DevId { major: 8, minor: 1 },
        name: "sda1".into(),
        partition: true,
        parent: Some(DevId { major: 8, minor: 0 }),
    }];
    let procs = vec![ProcessInfo {
        pid: 42,
        user: b"r\xffoot".to_vec(),
        state: 'R',
        cpu_pct: Some(12.5),
        rss_bytes: u64::MAX,
        cmdline: "sleep 1".into(),
    }];
    let mut want = Vec::new();
    for at in [1u64, 2, 2, 5, 1000] {
        let (snap, limits) = odd_snapshot(at);
        let busy = vec![(snap.groups[1].path.clone(), procs.clone())];
        enc.sample(
            &SampleRef {
                snapshot: &snap,
                limits: &limits,
                devices: &devices,
                busy: &busy,
            },
            &mut bytes,
        );
        want.push((snap, limits, busy));
    }
    let (records, err) = decode_all(&bytes);
    assert_eq!(err, None);
    assert!(matches!(&records[0], Record::Header(h) if **h == header()));
    // the header, one identities record (the identity did not change),
    // the five samples
    assert!(
        matches!(&records[1], Record::Identities(1)),
        "{:?}",
        records[1]
    );
    assert_eq!(records.len(), 7);
    for (r, (snap, limits, busy)) in records[2..].iter().zip(want) {
        let Record::Sample(s) = r else {
            panic!("a sample")
        };
        assert_eq!(s.snapshot, snap);
        assert_eq!(s.limits.as_deref(), Some(&limits[..]));
        assert_eq!(s.devices, devices);
        assert_eq!(s.busy, busy);
    }
}

#[test]
fn a_truncated_recording_gives_every_complete_sample_before_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = record_fixture(dir.path(), Output::Tui, 20);
    let bytes = std::fs::read(&file).unwrap();
    let (full, damaged) = read_all(&bytes);
    assert_eq!((full.len(), damaged), (21, 0));
    let mut last = 0;
    for cut in (0..bytes.len()).step_by(7) {
        let (part, _) = read_all(&bytes[..cut]);
        assert!(part.len() >= last, "more bytes never give fewer samples");
        assert!(part.len() <= 21);
        for (a, b) in part.iter().zip(&full) {
            assert_eq!(a, b, "a sample read from a cut file is the sample");
        }
        last = part.len();
    }
    // a sample is readable as soon as its flush is on disk: cutting the
    // last byte loses at most the last frame's epilogue, no sample
    let (part, _) = read_all(&bytes[..bytes.len() - 1]);
    assert_eq!(part.len(), 21);
}

#[test]
fn damage_loses_the_rest_of_its_frame_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = record_fixture(dir.path(), Output::Tui, 20);
    let mut bytes = std::fs::read(&file).unwrap();
    // garbage in the middle of the first frame (9 samples a frame)
    for b in &mut bytes[400..440] {
        *b ^= 0x5a;
    }
    let (samples, damaged) = read_all(&bytes);
    assert!(damaged >= 1);
    let (full, _) = read_all(&std::fs::read(&file).unwrap());
    // the later frames are all there, each from its own keyframe
    let tail = &full[full.len() - 12..];
    assert!(samples.len() >= 12 && samples.len() < full.len());
    assert_eq!(&samples[samples.len() - 12..], tail);
}

#[test]
fn a_crash_then_append_keeps_both_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = record_fixture(dir.path(), Output::Tui, 5);
    // the first run died mid-frame: its last bytes never reached the disk
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate(bytes.len() - 30);
    std::fs::write(&file, &bytes).unwrap();
    let before = read_all(&bytes).0.len();
    assert!(before >= 4);
    // a second run appends
    let tree = copy_fixture("pure-v2-systemd");
    let mut c = recording_collector(tree.path());
    let mut h = header();
    h.start_unix += Duration::from_secs(3600);
    let mut rec = Recorder::create(
        RecordConfig {
            append: true,
            ..cfg(&file)
        },
        h.clone(),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut k = 0u64;
    batch::record(
        &mut out,
        &mut c,
        &mut rec,
        None,
        &h,
        &opts(Output::Json, 3),
        |c| {
            k += 1;
            c.refresh(Duration::from_secs(k))
        },
        |_| {
            burn_cpu(tree.path(), "init.scope", 5000);
            true
        },
    )
    .unwrap();
    rec.finish().unwrap();
    let (all, damaged) = read_all(&std::fs::read(&file).unwrap());
    assert!(damaged >= 1, "the cut frame is skipped");
    assert_eq!(all.len(), before + 4);
    // the replay starts the second run's rates anew and prints its 3
    // refreshes exactly as they were printed live
    let text = String::from_utf8(replayed_lenient(&file)).unwrap();
    let live = String::from_utf8(out).unwrap();
    assert!(text.ends_with(&live));
    assert_eq!(text.lines().count(), before - 1 + 3);
}

fn replayed_lenient(file: &Path) -> Vec<u8> {
    let mut r = Replay::open(file).unwrap();
    let mut out = Vec::new();
    batch::replay(&mut out, &mut r, Output::Json, None, &Column::DEFAULT).unwrap();
    out
}

#[test]
fn rotation_keeps_about_twice_the_cap_and_each_file_replays() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("rec");
    let cap = 3000;
    let mut c = recording_collector(tree.path());
    let mut rec = Recorder::create(
        RecordConfig {
            max_size: Some(cap),
            ..cfg(&file)
        },
        header(),
    )
    .unwrap();
    for k in 1..=60u64 {
        burn_cpu(tree.path(), "init.scope", 1000 * k);
        let r = c.refresh(Duration::from_secs(7 * k));
        assert_eq!(rec.write(&r, &[]).unwrap(), Written::Ok);
        let len = std::fs::metadata(&file).unwrap().len();
        assert!(len <= cap + 600, "FILE stays near its cap: {len}");
    }
    assert!(rec.rotations >= 2);
    rec.finish().unwrap();
    let old = dir.path().join("rec.1");
    assert!(std::fs::metadata(&old).unwrap().len() <= cap + 600);
    for f in [&file, &old] {
        let n = Replay::open(f).unwrap().count();
        assert!(n >= 2, "each file replays on its own");
    }
    // nothing else is left beside them
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 2);
}

#[test]
fn stop_at_the_cap_ends_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("rec");
    let mut c = recording_collector(tree.path());
    let mut rec = Recorder::create(
        RecordConfig {
            max_size: Some(2000),
            at_cap: AtCap::Stop,
            ..cfg(&file)
        },
        header(),
    )
    .unwrap();
    let mut written = 0;
    for k in 1..=100u64 {
        burn_cpu(tree.path(), "init.scope", 1000 * k);
        let r = c.refresh(Duration::from_secs(k));
        if rec.write(&r, &[]).unwrap() == Written::Full {
            break;
        }
        written += 1;
    }
    assert!(written > 1 && written < 100);
    rec.finish().unwrap();
    assert!(std::fs::metadata(&file).unwrap().len() <= 2000);
    assert_eq!(read_all(&std::fs::read(&file).unwrap()).0.len(), written);
}

#[test]
fn the_output_file_is_never_a_symlink_nor_somebody_elses() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("rec");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for append in [false, true] {
        assert!(open_output(&link, append).is_err(), "append={append}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    // an existing file: refused without --append, never truncated
    assert!(open_output(&target, false).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    // not a recording (a typo naming /etc/passwd): not appended to
    let e = open_output(&target, true).unwrap_err();
    assert!(e.to_string().contains("not a cgtop recording"), "{e}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    // appended to: a recording (it begins with a zstd frame), our regular
    // file, one link
    std::fs::write(&target, [0x28, 0xb5, 0x2f, 0xfd, b'x', b'y', b'z']).unwrap();
    let (_, len) = open_output(&target, true).unwrap();
    assert_eq!(len, 7);
    let hard = dir.path().join("hard");
    std::fs::hard_link(&target, &hard).unwrap();
    assert!(open_output(&hard, true).is_err(), "a file with two links");
    std::fs::remove_file(&hard).unwrap();
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&target, Some(65534), Some(65534)).unwrap();
        let e = open_output(&target, true).unwrap_err();
        assert!(e.to_string().contains("another user"), "{e}");
    }
    // a new file is 0600
    let new = dir.path().join("new");
    open_output(&new, false).unwrap();
    let m = std::fs::metadata(&new).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    assert_eq!(m.nlink(), 1);
}

fn cgtop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("run cgtop")
}

#[test]
fn the_binary_replays_what_it_printed_live() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("r.rec");
    let root = tree.path().to_str().unwrap();
    let f = file.to_str().unwrap();
    let live = cgtop(&[
        "record", "-o", f, "--root", root, "-d", "0.1", "-n", "3", "--json",
    ]);
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    // one line on stderr, and the 3 refreshes after the first on stdout
    let err = String::from_utf8_lossy(&live.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cgtop: recording / under "));
    assert_eq!(live.stdout.split(|&b| b == b'\n').count(), 4);
    let back = cgtop(&["replay", f, "--json", "--brief"]);
    assert!(back.status.success());
    assert_eq!(
        String::from_utf8(back.stdout).unwrap(),
        String::from_utf8(live.stdout).unwrap()
    );
    // -n and -b
    let text = cgtop(&["replay", f, "-b", "-n", "2"]);
    let t = String::from_utf8(text.stdout).unwrap();
    assert_eq!(t.matches("cgtop - refresh ").count(), 2);
    // the same file again is refused, untouched
    let len = std::fs::metadata(&file).unwrap().len();
    let again = cgtop(&["record", "-o", f, "--root", root, "-n", "1"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--append"));
    assert_eq!(std::fs::metadata(&file).unwrap().len(), len);
    // not a recording
    let junk = dir.path().join("junk");
    std::fs::write(&junk, "hello\n").unwrap();
    let o = cgtop(&["replay", junk.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a cgtop recording"));
}

#[test]
fn a_group_named_record_is_given_as_slash_record_or_after_dashes() {
    let tree = copy_fixture("pure-v2-systemd");
    let g = tree.path().join("record");
    std::fs::create_dir(&g).unwrap();
    std::fs::write(g.join("cgroup.procs"), "").unwrap();
    let root = tree.path().to_str().unwrap();
    for args in [
        &["--root", root, "-b", "-n", "1", "-d", "0.1", "/record"][..],
        &["--root", root, "-b", "-n", "1", "-d", "0.1", "--", "record"][..],
        &["--root", root, "-b", "-n", "1", "-d", "0.1", "record"][..],
    ] {
        let o = cgtop(args);
        assert!(o.status.success(), "{args:?}");
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(out.contains("1 groups"), "{args:?}: {out}");
        assert!(out.contains("/record"));
    }
    // `cgtop record` alone is the command: it wants -o
    let o = cgtop(&["record"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--output"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any bytes: no panic, in the zstd reader or the record decoder.
    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let _ = read_all(&bytes);
        let _ = decode_all(&bytes);
    }

    /// The reader's fuzz target: a corpus of real recordings (made by the
    /// recorder from a fixture, and the records alone) with bits flipped,
    /// a range repeated (a frame appended twice after a crash), a run of
    /// zeros spliced in, and the end cut: no panic, never more samples
    /// than it holds, and the work bounded: at most
    /// [`MAX_FRAME_DECODED`] decoded for each frame magic in the file.
    #[test]
    fn damaged_recordings_never_panic(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 0..12),
        repeat in proptest::option::of((any::<prop::sample::Index>(), 1usize..512)),
        zeros in proptest::option::of((any::<prop::sample::Index>(), 1usize..4096)),
        cut in any::<prop::sample::Index>(),
        raw in any::<bool>(),
    ) {
        use cgtop::source::record::{Reader, MAX_FRAME_DECODED};
        let (bytes, n) = sample_recording(raw);
        let mut b = bytes.clone();
        for (i, bit) in flips {
            let k = i.index(b.len());
            b[k] ^= 1 << bit;
        }
        let mut copies = 1;
        if let Some((at, len)) = repeat {
            let k = at.index(b.len());
            let piece = b[k..(k + len).min(b.len())].to_vec();
            b.splice(k..k, piece);
            copies = 2;
        }
        if let Some((at, len)) = zeros {
            let k = at.index(b.len());
            b.splice(k..k, std::iter::repeat_n(0u8, len));
        }
        b.truncate(cut.index(b.len() + 1));
        if raw {
            // the zeros are 2-byte records of an unknown kind
            let (recs, _) = decode_all(&b);
            let known = recs.iter().filter(|r| !matches!(r, Record::Unknown(_))).count();
            prop_assert!(known <= copies * (n + 2));
        } else {
            let mut r = Reader::new(&b[..]).unwrap();
            let mut samples = 0;
            while let Ok(Some(_)) = r.next_sample() {
                samples += 1;
            }
            prop_assert!(samples <= copies * n);
            let frames = b.windows(4).filter(|w| *w == [0x28, 0xB5, 0x2F, 0xFD]).count();
            prop_assert!(r.decoded <= ((frames + 1) * MAX_FRAME_DECODED) as u64);
        }
    }
}

/// A recording of the fixture made once (8 samples, two frames); `raw`:
/// its records without compression.
fn sample_recording(raw: bool) -> (Vec<u8>, usize) {
    static ONCE: std::sync::OnceLock<(Vec<u8>, Vec<u8>)> = std::sync::OnceLock::new();
    let (z, r) = ONCE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let (_, file) = record_fixture(dir.path(), Output::Tui, 7);
        let z = std::fs::read(file).unwrap();
        let mut enc = Encoder::new();
        let mut r = Vec::new();
        enc.start_frame(&header(), &mut r);
        for at in 1..5 {
            let (snap, limits) = odd_snapshot(at);
            enc.sample(
                &SampleRef {
                    snapshot: &snap,
                    limits: &limits,
                    devices: &[],
                    busy: &[],
                },
                &mut r,
            );
        }
        (z, r)
    });
    if raw {
        (r.clone(), 4)
    } else {
        (z.clone(), 8)
    }
}

#[test]
fn the_busiest_groups_processes_are_recorded() {
    use cgtop::source::hier::Hier;
    use cgtop::source::procs::ProcReader;
    use cgtop::source::record::BusyReader;
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    // this test's own process, in the group that burns the most CPU
    let g = "system.slice/dbus.service";
    std::fs::write(
        tree.path().join(g).join("cgroup.procs"),
        format!("{}\n", std::process::id()),
    )
    .unwrap();
    let file = dir.path().join("rec");
    let mut c = recording_collector(tree.path());
    let mut busy = BusyReader::new(
        std::sync::Arc::new(Hier::open_lenient(tree.path())),
        ProcReader::default(),
    );
    let mut rec = Recorder::create(cfg(&file), header()).unwrap();
    let mut out = Vec::new();
    let mut k = 0;
    batch::record(
        &mut out,
        &mut c,
        &mut rec,
        Some(&mut busy),
        &header(),
        &opts(Output::Tui, 2),
        |c| {
            k += 1;
            c.refresh(Duration::from_secs(k))
        },
        |_| {
            burn_cpu(tree.path(), g, 500_000);
            burn_cpu(tree.path(), "init.scope", 1_000);
            true
        },
    )
    .unwrap();
    rec.finish().unwrap();
    assert!(out.is_empty(), "nothing printed without -b or --json");
    let all: Vec<_> = Replay::open(&file).unwrap().collect();
    assert_eq!(all.len(), 3);
    assert!(all[0].busy.is_empty(), "no CPU figures on the first sample");
    let (path, procs) = &all[2].busy[0];
    assert_eq!(path, &GroupPath::new(g), "the busiest group first");
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].pid, std::process::id());
    assert!(!procs[0].cmdline.is_empty());
    // a group that used less comes after it (when its processes exist
    // on this host: the fixture's are the capture's)
    let init = all[2]
        .busy
        .iter()
        .position(|(p, _)| p == &GroupPath::new("init.scope"));
    assert!(init.is_none_or(|i| i > 0));
}

#[test]
fn sigterm_ends_the_frame_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("r.rec");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["record", "-d", "0.1", "--root"])
        .arg(tree.path())
        .arg("-o")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::wait_until("three samples on disk", Duration::from_secs(20), || {
        std::fs::read(&file).is_ok_and(|b| read_all(&b).0.len() >= 3)
    });
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a clean end");
    let (samples, damaged) = read_all(&std::fs::read(&file).unwrap());
    assert!(samples.len() >= 3);
    assert_eq!(damaged, 0, "the last frame was ended, not cut");
}

/// `cgtop replay FILE` on a terminal: the TUI over the recording, at its
/// last refresh, read-only; `T` shows an earlier refresh of it, and `q`
/// leaves with status 0. Skipped, with the reason, without tmux.
#[test]
fn the_tui_replays_a_recording_read_only_with_time_travel() {
    let Some(t) = common::tmux::Tmux::shell_or_skip(120, 36) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("r.rec");
    let (root, f) = (tree.path().to_str().unwrap(), file.to_str().unwrap());
    let rec = cgtop(&["record", "-o", f, "--root", root, "-d", "0.1", "-n", "4"]);
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let bin = env!("CARGO_BIN_EXE_cgtop");
    t.send(&[&format!("{bin} replay {f}; echo EXIT=$?"), "Enter"]);
    let s = t.wait_for("5 refreshes");
    assert!(s.contains("system.slice"), "the recorded tree:\n{s}");
    assert!(s.contains("read-only (replay)"), "no writes:\n{s}");
    assert!(!s.contains("PAST"), "opens at the last refresh:\n{s}");
    t.send(&["T"]);
    let s = t.wait_for("PAST");
    assert!(s.contains("system.slice"), "the tree at that moment:\n{s}");
    // a write key says why not
    t.send(&["f"]);
    t.wait_for("a replayed recording: nothing live to write to");
    t.send(&["q"]);
    t.wait_for("EXIT=0");
}

/// The events the watcher saw are recorded with their refresh: the live
/// `--json` of `cgtop record` shows a freeze seen between two refreshes,
/// and `cgtop replay --json` prints the same lines, that event included.
#[test]
fn events_are_recorded_and_replayed_as_they_were_printed() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("r.rec");
    let (root, f) = (tree.path().to_str().unwrap(), file.to_str().unwrap());
    let child = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args([
            "record", "-o", f, "--root", root, "-d", "0.3", "-n", "6", "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let dbus = tree.path().join("system.slice/dbus.service");
    std::fs::write(dbus.join("cgroup.events"), "populated 1\nfrozen 1\n").unwrap();
    let live = child.wait_with_output().unwrap();
    assert!(
        live.status.success(),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let live = String::from_utf8(live.stdout).unwrap();
    let frozen: Vec<&str> = live
        .lines()
        .filter(|l| l.contains(r#""kind":"frozen""#))
        .collect();
    assert_eq!(frozen.len(), 1, "one refresh carries the freeze:\n{live}");
    assert!(frozen[0].contains(r#""path":"/system.slice/dbus.service""#));
    let back = cgtop(&["replay", f, "--json"]);
    assert!(back.status.success());
    assert_eq!(String::from_utf8(back.stdout).unwrap(), live);
    // and -b prints the event line
    let text = cgtop(&["replay", f, "-b"]);
    let t = String::from_utf8(text.stdout).unwrap();
    assert!(
        t.lines()
            .any(|l| l.starts_with("event ") && l.contains("dbus.service frozen")),
        "{t}"
    );
}

/// A bit of every byte of a real recording flipped in turn (bit `k % 8`
/// of byte `k`: the whole sweep of 8 bits a byte takes 40 s unoptimised),
/// and the file cut after every byte: the reader never panics. A flip
/// that left a frame decodable by zstd but its records invalid, with the
/// frame ending at the end of what was read, sent the resync past the
/// buffer's end (`cgtop replay` exited 101: 84 of this recording's 13,008
/// one-bit mutants).
#[test]
fn a_bit_flip_in_every_byte_and_every_cut_of_a_real_recording_read_without_panic() {
    let (bytes, n) = sample_recording(false);
    let mut panics = Vec::new();
    for k in 0..bytes.len() {
        let bit = k % 8;
        let mut b = bytes.clone();
        b[k] ^= 1 << bit;
        match std::panic::catch_unwind(|| read_all(&b)) {
            Ok((samples, _)) => assert!(samples.len() <= n),
            Err(_) => panics.push((k, bit)),
        }
        if std::panic::catch_unwind(|| read_all(&bytes[..k])).is_err() {
            panics.push((k, 8));
        }
    }
    assert!(
        panics.is_empty(),
        "{} of {} mutants panicked, first {:?} (bit 8: cut)",
        panics.len(),
        bytes.len() * 2,
        &panics[..panics.len().min(5)]
    );
}

/// The binary on damaged recordings of its own: a bit flipped in each of
/// the last frame's bytes of a `cgtop record` run, replayed by `cgtop
/// replay --json` and `-b`. Damage is skipped and said; the replay never
/// panics (it exited 101 here).
#[test]
fn the_binary_replays_a_recording_with_a_flipped_bit_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let tree = copy_fixture("pure-v2-systemd");
    let file = dir.path().join("r.rec");
    let f = file.to_str().unwrap();
    let rec = cgtop(&[
        "record",
        "-o",
        f,
        "--root",
        tree.path().to_str().unwrap(),
        "-d",
        "0.1",
        "-n",
        "3",
    ]);
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let bytes = std::fs::read(&file).unwrap();
    let mutant = dir.path().join("m.rec");
    let m = mutant.to_str().unwrap();
    let mut panics = Vec::new();
    for k in bytes.len().saturating_sub(200)..bytes.len() {
        let mut b = bytes.clone();
        b[k] ^= 1 << (k % 8);
        std::fs::write(&mutant, &b).unwrap();
        let out = if k % 2 == 0 {
            cgtop(&["replay", m, "--json"])
        } else {
            cgtop(&["replay", m, "-b"])
        };
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(101) || err.contains("panicked") {
            panics.push(k);
        }
    }
    assert!(panics.is_empty(), "bytes {panics:?} of {}", bytes.len());
}
