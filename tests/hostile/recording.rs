//! Attacks on `cgtop replay` (issue 9): a recording is an incident
//! artifact that travels between hosts, crafted by anyone and replayed
//! by root. It must neither hang the replay nor make it balloon.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::model::time::record::{DecodeError, Decoder, Encoder, Header, Record, TAG_SAMPLE};
use cgtop::model::GroupPath;
use cgtop::source::record::Replay;
use std::time::Duration;

fn header() -> Header {
    Header {
        host: common::host(),
        mount: common::directory_mount("pure-v2-systemd"),
        start: GroupPath::root(),
        interval: Duration::from_secs(1),
        start_unix: Duration::from_secs(1_790_000_000),
    }
}

/// How `cgtop record` writes FILE (no cap, a frame a minute).
fn config(file: &std::path::Path) -> cgtop::source::record::RecordConfig {
    cgtop::source::record::RecordConfig {
        path: file.to_path_buf(),
        append: false,
        max_size: None,
        at_cap: cgtop::source::record::AtCap::Rotate,
        frame_every: cgtop::source::record::FRAME_SECS,
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A FIFO put where the recording was expected (by another user, in
/// /tmp): `Replay::open` must refuse it, not wait for a writer forever.
#[test]
fn replay_of_a_fifo_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("incident.rec");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from(0o600),
        0,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Replay::open(&f).map(|_| ()).map_err(|e| e.to_string()));
    });
    let Ok(res) = rx.recv_timeout(Duration::from_secs(5)) else {
        // let the stuck open go, then fail
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        panic!("Replay::open hung on a FIFO");
    };
    let e = res.unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
}

/// A directory and /dev/zero are refused too (and quickly).
#[test]
fn replay_of_a_directory_or_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for p in [dir.path(), std::path::Path::new("/dev/zero")] {
        let e = Replay::open(p).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{}: {e}", p.display());
    }
}

/// The sizes the crafted sample below is made of.
const GROUPS: usize = 320;
const DEVICES: usize = cgtop::model::time::record::MAX_DEVICES;

/// One sample record, raw: `GROUPS` new groups, each with an io.stat of
/// `DEVICES` "(unknown)" devices without figures. Each device costs 7
/// bytes in the record and a whole `(IoStatDevice, IoStatDev)` decoded;
/// the decoder keeps every group's io.stat for the next sample's deltas.
fn io_bomb_sample() -> Vec<u8> {
    let mut p = Vec::new();
    p.push(0); // flags: a new layout
    for _ in 0..6 {
        varint(&mut p, 0); // at, wall, cpu, files read, kept, dirs
    }
    p.push(0); // cost flags
    varint(&mut p, GROUPS as u64);
    for g in 0..GROUPS {
        p.push(0); // a new path
        let name = format!("g{g:05}");
        varint(&mut p, name.len() as u64);
        p.extend_from_slice(name.as_bytes());
    }
    for _ in 0..GROUPS {
        varint(&mut p, 1 << 16); // the mask: io.stat changed
        varint(&mut p, DEVICES as u64 + 1);
        for _ in 0..DEVICES {
            p.push(0); // "(unknown)"
            p.extend_from_slice(&[0; 6]); // no figures
        }
    }
    let mut rec = vec![TAG_SAMPLE];
    varint(&mut rec, p.len() as u64);
    rec.extend_from_slice(&p);
    rec
}

/// A decompression bomb through the decoder's state: a few MB of record
/// (far fewer once zstd has them) that decode to every group holding
/// thousands of io.stat devices. Over 320 groups that is ~150 MB; over
/// the 200,000 groups a frame may name, ~90 GB held by the decoder, and
/// cloned into every following sample. The decoder must refuse a frame
/// whose kept state is over its cap, as it refuses a record over its cap.
#[test]
fn a_frame_whose_state_balloons_is_refused() {
    let mut buf = Vec::new();
    Encoder::new().start_frame(&header(), &mut buf);
    let bomb = io_bomb_sample();
    assert!(
        bomb.len() < 10 << 20,
        "the record is small: {} bytes",
        bomb.len()
    );
    let mut d = Decoder::new();
    let (tag, payload, used) = cgtop::model::time::record::split_record(&buf)
        .unwrap()
        .unwrap();
    assert!(matches!(d.record(tag, payload), Ok(Record::Header(_))));
    assert_eq!(used, buf.len());
    let (tag, payload, _) = cgtop::model::time::record::split_record(&bomb)
        .unwrap()
        .unwrap();
    match d.record(tag, payload) {
        Err(DecodeError::TooLarge(_)) => {}
        Ok(Record::Sample(s)) => {
            let held: usize = s
                .snapshot
                .groups
                .iter()
                .map(|g| g.hot.io.as_ref().map_or(0, |io| io.0.len()))
                .sum();
            panic!("decoded {held} io.stat devices from {} bytes", bomb.len());
        }
        other => panic!("{other:?}"),
    }
}

/// An honest frame of the same shape but a few devices a group decodes.
#[test]
fn a_frame_of_ordinary_size_still_decodes() {
    let mut buf = Vec::new();
    Encoder::new().start_frame(&header(), &mut buf);
    let mut p = vec![0u8];
    for _ in 0..6 {
        varint(&mut p, 0);
    }
    p.push(0);
    varint(&mut p, 2000);
    for g in 0..2000 {
        p.push(0);
        let name = format!("g{g:05}");
        varint(&mut p, name.len() as u64);
        p.extend_from_slice(name.as_bytes());
    }
    for _ in 0..2000 {
        varint(&mut p, 1 << 16);
        varint(&mut p, 9);
        for _ in 0..8 {
            p.push(0);
            p.extend_from_slice(&[0; 6]);
        }
    }
    buf.push(TAG_SAMPLE);
    varint(&mut buf, p.len() as u64);
    buf.extend_from_slice(&p);
    let (recs, err) = cgtop::model::time::record::decode_all(&buf);
    assert_eq!(err, None);
    assert_eq!(recs.len(), 2);
}

/// Groups that come and go, each there for one refresh: a user with a
/// delegated subtree making and removing groups under new names, or a
/// recording whose every frame names new groups. Each keeps a slot for
/// as long as a ring holds it (an hour), so 70 refreshes of 1,000 new
/// groups held 70,000 groups' rings (~220 MB). The history of groups gone
/// is capped (the groups gone longest forgotten first); the groups there
/// now keep theirs.
#[test]
fn groups_that_come_and_go_do_not_balloon_the_history() {
    use cgtop::model::time::timeline::{Entry, Stamp, Timeline};
    let mut t = Timeline::default();
    let stay = GroupPath::parse(b"stays").unwrap();
    for r in 0..70u64 {
        let paths: Vec<GroupPath> = (0..1000)
            .map(|k| GroupPath::parse(format!("churn/r{r}-{k}").as_bytes()).unwrap())
            .collect();
        let stamp = Stamp {
            at: Duration::from_secs(10 * r),
            unix_s: 1_790_000_000.0 + 10.0 * r as f64,
        };
        t.push(
            stamp,
            std::iter::once((&stay, Entry::present()))
                .chain(paths.iter().map(|p| (p, Entry::present()))),
        );
    }
    assert!(
        t.bytes() < 100 << 20,
        "{} groups, {} MB",
        t.groups(),
        t.bytes() >> 20
    );
    // the group there all along keeps its whole history, the newest
    // groups theirs
    assert_eq!(
        t.series(&stay, 0).len(),
        cgtop::model::time::timeline::TIER_LEN,
        "the group there all along"
    );
    let newest = GroupPath::parse(b"churn/r69-5").unwrap();
    assert!(t.entry(&newest, t.latest().unwrap()).is_some());
}

/// The TUI replay's history is sized by the recording's widest sample:
/// a hostile recording of 200,000 groups (the format's cap) a sample
/// spanning a day gave the minute tier 1,440 entries of 18 bytes a group
/// (5 GB) whatever its width; an ordinary one keeps its whole day.
#[test]
fn the_replay_history_fits_its_budget_at_any_width() {
    use cgtop::model::time::timeline::{Entry, TIER_LEN};
    let entry = std::mem::size_of::<Entry>();
    let bytes = |widest: usize| {
        cgtop::run::replay_tiers(1_000_000, widest)
            .iter()
            .map(|t| t.len * entry * widest)
            .sum::<usize>()
    };
    assert!(bytes(10_000) <= 128 << 20, "{} MB", bytes(10_000) >> 20);
    // at the format's cap, no more than the live view's floor of
    // TIER_LEN a tier
    assert!(bytes(200_000) <= 2 * TIER_LEN * entry * 200_000);
    // an ordinary recording keeps a day of minutes
    assert_eq!(cgtop::run::replay_tiers(100_000, 1000)[1].len, 24 * 60);
}

/// The v1 controllers of a hybrid host ride in a recording's header and
/// `replay -b` printed them as they were in its first line: a recording
/// naming a controller `cpu ESC]0;... BEL` set root's terminal title (or
/// worse, with a terminal's other escapes). Every string from a recording
/// reaches the terminal escaped, as the host name and the kernel do.
#[test]
fn a_recorded_controller_name_reaches_no_terminal_raw() {
    use cgtop::model::{MountInfo, MountMode};
    use cgtop::source::record::Recorder;
    let hostile = "cpu\u{1b}]0;pwned\u{7}\u{202e}lav";
    let tree = common::copy_fixture("pure-v2-systemd");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("incident.rec");
    let mut h = header();
    h.mount = MountInfo {
        root: tree.path().to_path_buf(),
        mode: MountMode::Hybrid {
            v1_controllers: vec![hostile.to_owned()],
        },
    };
    let mut c = common::collector(tree.path());
    let mut rec = Recorder::create(config(&file), h.clone()).unwrap();
    for k in 1..=2 {
        rec.write(&common::refresh(&mut c, f64::from(k)), &[])
            .unwrap();
    }
    rec.finish().unwrap();
    let mut r = Replay::open(&file).unwrap();
    let mut out = Vec::new();
    cgtop::batch::replay(
        &mut out,
        &mut r,
        cgtop::options::Output::Text,
        None,
        &cgtop::render::columns::Column::DEFAULT,
    )
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("hybrid, v1 holds cpu"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    // the TUI's header says it the same way
    let mut app = cgtop::app::App::new(
        h.host.clone(),
        h.mount.clone(),
        GroupPath::root(),
        h.interval,
    );
    common::resize(&mut app, 200, 30);
    cgtop::app::update(
        &mut app,
        cgtop::app::Msg::Collected(cgtop::source::collector::Collected::Refresh(Box::new(
            common::refresh(&mut c, 3.0),
        ))),
    );
    let s = common::screen(&app, 200, 30);
    assert!(s.contains("v1 holds cpu"), "{s}");
    assert!(!s.contains('\u{202e}'), "{s}");
}

/// Hostile but well-formed samples: every counter at its extremes and
/// running backwards, the time jumping to the end of u64 nanoseconds and
/// back, a huge start time. Replayed as `-b`, `--json` and into the TUI
/// (history, T, @), nothing panics.
#[test]
fn extreme_recorded_values_replay_without_panic() {
    use cgtop::cgroupfs::io::{DevId, IoStat, IoStatDev, IoStatDevice};
    use cgtop::cgroupfs::{CpuStat, Limit};
    use cgtop::source::record::Recorder;
    let tree = common::copy_fixture("pure-v2-systemd");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("odd.rec");
    let mut h = header();
    h.start_unix = Duration::from_nanos(u64::MAX - 5);
    h.interval = Duration::from_nanos(u64::MAX);
    let mut c = common::collector(tree.path());
    let mut rec = Recorder::create(config(&file), h.clone()).unwrap();
    let ats = [0, u64::MAX, 1, u64::MAX / 2, u64::MAX / 2, 3, u64::MAX - 1];
    for (k, &at) in ats.iter().enumerate() {
        let mut r = common::refresh(&mut c, 1.0 + k as f64);
        r.snapshot.at = Duration::from_nanos(at);
        let v = if k % 2 == 0 { u64::MAX } else { 0 };
        for g in &mut r.snapshot.groups {
            let hot = &mut g.hot;
            hot.cpu = Some(CpuStat {
                usage_usec: v,
                user_usec: Some(v ^ 1),
                system_usec: Some(v),
                nr_periods: Some(v),
                nr_throttled: Some(u64::MAX - v),
                throttled_usec: Some(v),
            });
            hot.memory_current = Some(v);
            hot.pids_current = Some(v);
            hot.nr_procs = Some(v);
            hot.swap_current = Some(v);
            hot.memory_max = Some(Limit::Value(u64::MAX - v));
            hot.psi_some_avg10 = Some(u32::MAX);
            hot.psi_full_avg10 = Some(u32::MAX);
            hot.throttled_local_usec = Some(v);
            hot.io = Some(IoStat(vec![(
                IoStatDevice::Dev(DevId {
                    major: u32::MAX,
                    minor: u32::MAX,
                }),
                IoStatDev {
                    rbytes: Some(v),
                    wbytes: Some(v),
                    rios: Some(v),
                    wios: Some(v),
                    dbytes: Some(v),
                    dios: Some(v),
                },
            )]));
        }
        rec.write(&r, &[]).unwrap();
    }
    rec.finish().unwrap();
    for output in [cgtop::options::Output::Text, cgtop::options::Output::Json] {
        let mut r = Replay::open(&file).unwrap();
        let mut out = Vec::new();
        cgtop::batch::replay(
            &mut out,
            &mut r,
            output,
            None,
            &cgtop::render::columns::Column::DEFAULT,
        )
        .unwrap();
        assert!(!out.is_empty());
    }
    // the TUI replay, as run::run_replay_tui loads it
    let mut app = cgtop::app::App::new(
        h.host.clone(),
        h.mount.clone(),
        GroupPath::root(),
        h.interval,
    );
    app.read_only = Some(cgtop::app::ReadOnly::Replay);
    app.paused = true;
    app.unix_base = h.start_unix;
    app.timeline =
        cgtop::model::time::timeline::Timeline::new(&cgtop::run::replay_tiers(ats.len(), 40));
    common::resize(&mut app, 160, 40);
    let mut last = None;
    for r in Replay::open(&file).unwrap() {
        if let Some(prev) = last.replace(r.refresh) {
            app.load_history(&prev);
        }
    }
    cgtop::app::update(
        &mut app,
        cgtop::app::Msg::Collected(cgtop::source::collector::Collected::Refresh(Box::new(
            last.unwrap(),
        ))),
    );
    common::screen(&app, 160, 40);
    for k in ["T", "T", "T", "t", "T", "T", "T", "T"] {
        cgtop::app::update(&mut app, common::ch(k.chars().next().unwrap()));
        common::screen(&app, 160, 40);
    }
    for jump in ["-99999999999999999999h", "23:59:59", "0", "-1s"] {
        cgtop::app::update(&mut app, common::ch('@'));
        for ch in jump.chars() {
            cgtop::app::update(&mut app, common::ch(ch));
        }
        cgtop::app::update(&mut app, common::key(crossterm::event::KeyCode::Enter));
        common::screen(&app, 160, 40);
    }
}

/// A zstd frame names its window and the decoder allocates it: a crafted
/// recording of frames asking for zstd's largest default window (128 MiB)
/// made the reader allocate that much per frame. Our recorder's frames
/// use 2 MiB; a frame asking for more than 8 MiB is skipped as damage.
#[test]
fn a_frame_asking_for_a_giant_window_is_skipped() {
    use std::io::Write;
    let mut records = Vec::new();
    let mut enc = Encoder::new();
    enc.start_frame(&header(), &mut records);
    let tree = common::copy_fixture("pure-v2-systemd");
    let mut c = common::collector(tree.path());
    let r = common::refresh(&mut c, 1.0);
    enc.sample(
        &cgtop::model::time::record::SampleRef {
            snapshot: &r.snapshot,
            limits: &[],
            devices: &[],
            busy: &[],
        },
        &mut records,
    );
    let frame = |log: u32| {
        let mut z = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        z.set_parameter(zstd::stream::raw::CParameter::WindowLog(log))
            .unwrap();
        // written and flushed before the end: a stream of unknown size,
        // whose header keeps the window asked for
        z.write_all(&records).unwrap();
        z.flush().unwrap();
        z.finish().unwrap()
    };
    let (ours, _) = cgtop::source::record::read_all(&frame(21));
    assert_eq!(ours.len(), 1, "a frame of our window reads");
    let (giant, damaged) = cgtop::source::record::read_all(&frame(27));
    assert_eq!((giant.len(), damaged), (0, 1), "a 128 MiB window");
}

/// `n` MiB of zeros through zstd at the recorder's level, after `head`
/// (in the same frame): `head -c 256M /dev/zero | zstd -3` is 8 KB.
fn zstd_of_zeros(head: &[u8], mib: usize) -> Vec<u8> {
    use std::io::Write;
    let mut z = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    z.write_all(head).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..mib {
        z.write_all(&zeros).unwrap();
    }
    z.finish().unwrap()
}

/// All the records a reader gives, and the reader.
fn read_through(bytes: &[u8]) -> (usize, cgtop::source::record::Reader<&[u8]>) {
    let mut r = cgtop::source::record::Reader::new(bytes).unwrap();
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    (n, r)
}

/// The zstd of 256 MiB of zeros (8 KB) decodes to a 2-byte record of an
/// unknown kind per 2 bytes: the reader drained them one at a time off
/// each 128 KiB block (a copy of the block each) and `cgtop replay` spun
/// for minutes. A frame that does not begin with a header is given up
/// after a few unknown records: the work is a block, not the 256 MiB.
#[test]
fn the_zstd_of_zeros_is_given_up_before_its_header() {
    use cgtop::source::record::MAX_UNKNOWN_BEFORE_HEADER;
    let z = zstd_of_zeros(&[], 256);
    assert!(z.len() < 16 << 10, "{} bytes", z.len());
    let (records, r) = read_through(&z);
    assert_eq!(records, 0);
    assert!(r.unknown <= MAX_UNKNOWN_BEFORE_HEADER + 1, "{}", r.unknown);
    assert!(r.decoded <= 1 << 20, "{} bytes decoded", r.decoded);
    assert!(r.damaged >= 1);
}

/// After a real header the same zeros: unknown records are capped in a
/// frame too, and so are its decoded bytes; the header still counts.
#[test]
fn a_frame_of_zeros_after_its_header_is_capped() {
    use cgtop::model::time::record::Encoder;
    use cgtop::source::record::{MAX_FRAME_DECODED, MAX_UNKNOWN_PER_FRAME};
    let mut head = Vec::new();
    Encoder::new().start_frame(&header(), &mut head);
    let z = zstd_of_zeros(&head, 256);
    let (records, r) = read_through(&z);
    assert_eq!(records, 1, "the header");
    assert!(r.unknown <= MAX_UNKNOWN_PER_FRAME + 1, "{}", r.unknown);
    assert!(r.decoded <= MAX_FRAME_DECODED as u64, "{}", r.decoded);
    assert!(r.damaged >= 1);
}

/// The binary on the zstd of zeros: refused in seconds (it ran for
/// minutes), naming the file, as a file that is no zstd at all is.
#[test]
fn the_binary_refuses_the_zstd_of_zeros_naming_the_file() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("z.zst");
    std::fs::write(&bomb, zstd_of_zeros(&[], 256)).unwrap();
    let plain = dir.path().join("zeros");
    std::fs::write(&plain, vec![0u8; 1 << 20]).unwrap();
    for (file, why) in [
        (&bomb, "no readable sample"),
        (&plain, "does not begin with a zstd frame"),
    ] {
        for out in ["--json", "-b"] {
            let mut child = Command::new(env!("CARGO_BIN_EXE_cgtop"))
                .args(["replay", file.to_str().unwrap(), out])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // a hang guard, not a speed test: the fixed reader takes
            // milliseconds (BENCHMARKS.md), the old one minutes
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            let status = loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("cgtop replay {out} still running after 30 s on {file:?}");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            assert_eq!(status.code(), Some(2), "{err}");
            assert!(err.contains(file.to_str().unwrap()), "{err}");
            assert!(err.contains("not a cgtop recording"), "{err}");
            assert!(err.contains(why), "{err}");
        }
    }
}

/// Groups with unique 4 KB paths made at every sample: the writer's path
/// table grew for a whole frame (a minute, 120 samples), past what a
/// reader takes (`MAX_PATH_BYTES`), so the frame was written, held in
/// the recorder's memory, and lost at replay. A frame now ends once its
/// table passes `FRAME_PATH_BYTES`: every sample reads back.
#[test]
fn churn_of_long_unique_paths_is_recorded_in_frames_that_replay() {
    use cgtop::model::tree::rates::Rater;
    use cgtop::model::tree::snapshot::{GroupSample, Snapshot};
    use cgtop::source::record::{read_all, refresh_of, Recorder};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("churn.rec");
    let mut rec = Recorder::create(config(&file), header()).unwrap();
    let level = "y".repeat(250);
    let mut rater = Rater::new(Some(2));
    // 80 MB of paths in 2 s: past MAX_PATH_BYTES in one frame
    let samples = 20u64;
    for s in 0..samples {
        let mut groups: Vec<GroupSample> = (0..1_000u64)
            .map(|k| {
                let mut p = format!("churn/s{s}-{k}");
                for _ in 0..16 {
                    p.push('/');
                    p.push_str(&level);
                }
                GroupSample::new(GroupPath::parse(p.as_bytes()).unwrap(), s * 10_000 + k)
            })
            .collect();
        groups.sort_by(|a, b| a.path.cmp(&b.path));
        let snap = Snapshot {
            at: Duration::from_millis(100 * s),
            groups,
            cost: cgtop::model::tree::snapshot::ScanCost::default(),
        };
        rec.write(&refresh_of(&mut rater, snap, None, Vec::new()), &[])
            .unwrap();
    }
    rec.finish().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let (back, damaged) = read_all(&bytes);
    assert_eq!(damaged, 0);
    assert_eq!(back.len() as u64, samples);
}
