//! The seeds' story on this machine's real cgroup v1 `blkio` hierarchy
//! (issue 11, "Proven"): `blkio.throttle.write_bps_device` 1 MiB/s on the
//! root disk, Debian's fio in the group, and what the real `cgtop --json`
//! shows beside it:
//!
//! * `fio --direct=1 --rw=write`: the group writes 1 MiB/s within 15 %,
//!   and the limit is shown beside the rate;
//! * the same without `--direct=1` (fio paced at 8 MiB/s): fio's writes
//!   are not capped (they land in the page cache; on v1 the flusher writes
//!   them back from the root's blkio group, outside the limit: cgtop's
//!   write rate for the group stays below it), and cgtop's JSON has the
//!   group's dirty and writeback pages and the host's dirty limits (the IO
//!   page says it in words);
//! * `blkio.throttle.read_bps_device` 1 MiB/s with a direct read: 1 MiB/s.
//!
//! The group is `cgtop-test-<pid>-<n>-fio` in the v1 blkio and memory
//! hierarchies (and in cgroup2 on a hybrid host, the tree's backbone),
//! removed at the end, also on failure (`common/sandbox_v1.rs`). fio
//! writes a file in a temporary directory on the root disk, removed after.
//! Each run prints its figures (`FIGURE ...`). Skipped, with the reason,
//! where fio or a v1 blkio hierarchy is missing or when not root.
//!
//! One test function, so the three fio runs never overlap (cargo runs the
//! tests of one file in parallel). It is `#[ignore]`d in a plain
//! `cargo test` (about 30 s of throttled disk IO on the host's root disk):
//! scripts/test runs it with `cargo test --test kernel v1_fio:: --
//! --include-ignored`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::vm_common;

use cgtop::cgroupfs::io::DevId;
use cgtop::model::GroupPath;
use serde_json::Value;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};
use vm_common::sandbox_v1::V1Sandbox;
use vm_common::{figure, list, median, mib, set_v1, CgtopRun, Sample};

/// How close the group's rate must come to the 1 MiB/s limit.
const TOLERANCE: f64 = 0.15;
const LIMIT: u64 = 1 << 20;
/// fio's time limit for a throttled run.
const RUNTIME_S: u32 = 10;

/// The whole disk under `/`: the MAJ:MIN of the root mount in
/// /proc/self/mountinfo, and, if that is a partition, the disk it is on
/// (`/sys/dev/block/MAJ:MIN/partition` exists, the parent directory is the
/// disk). blk-throttle limits apply to a whole disk.
fn root_disk() -> Result<(DevId, DevId), String> {
    let mi = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let dev = mi
        .lines()
        .rev()
        .find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.get(4) == Some(&"/")).then(|| f[2].to_owned())
        })
        .ok_or("no mount of / in /proc/self/mountinfo")?;
    let part = DevId::parse(&dev).ok_or(format!("bad MAJ:MIN {dev}"))?;
    let sys = Path::new("/sys/dev/block").join(&dev);
    let real = std::fs::canonicalize(&sys)
        .map_err(|e| format!("{}: {e} (/ is not on a block device)", sys.display()))?;
    let disk_dir = if real.join("partition").exists() {
        real.parent()
            .ok_or("a partition without a disk")?
            .to_path_buf()
    } else {
        real
    };
    let text = std::fs::read_to_string(disk_dir.join("dev")).map_err(|e| e.to_string())?;
    let disk = DevId::parse(text.trim()).ok_or(format!("bad MAJ:MIN {text:?}"))?;
    Ok((part, disk))
}

/// A directory on the root file system for fio's file: /var/tmp (a /tmp
/// may be a tmpfs), checked to be on the root's device.
fn tempdir_on(part: DevId) -> Result<tempfile::TempDir, String> {
    let d = tempfile::Builder::new()
        .prefix("cgtop-test-fio-")
        .tempdir_in("/var/tmp")
        .map_err(|e| format!("cannot make a directory in /var/tmp: {e}"))?;
    let st = std::fs::metadata(d.path()).map_err(|e| e.to_string())?;
    let (maj, min) = (rustix::fs::major(st.dev()), rustix::fs::minor(st.dev()));
    if (maj, min) != (part.major, part.minor) {
        return Err(format!(
            "/var/tmp is on {maj}:{min}, not on the root's {part}"
        ));
    }
    Ok(d)
}

/// Sets a blkio throttle file of `g` to "DEV BPS" (0 removes the device's
/// limit), through cgtop's writer once it writes v1 (`vm_common::set_v1`),
/// and checks the kernel's read-back. Returns how it was set.
fn set_throttle(sb: &V1Sandbox, g: &GroupPath, file: &str, dev: DevId, bps: u64) -> String {
    let line = format!("{dev} {bps}");
    let how = set_v1(sb, "blkio", g, file, &line);
    let back = sb.read("blkio", g, file);
    let want = if bps == 0 { String::new() } else { line };
    assert_eq!(back.trim(), want, "{file} read back");
    how
}

/// What one fio run in the group showed.
struct FioRun {
    /// fio's own figures (its JSON): bytes/s and bytes moved.
    fio_bw: f64,
    fio_bytes: f64,
    elapsed: Duration,
    /// cgtop's per-refresh rates of the group at `/rates/io/{way}bps`,
    /// from the lines whose interval lies inside the run.
    rates: Vec<f64>,
    /// cgtop's last line during the run, for the limit and the notes.
    last: Option<Sample>,
}

/// Runs `fio` with `args` in `g` beside `cgtop --json -d 1`.
fn fio_in(sb: &mut V1Sandbox, g: &GroupPath, way: &str, args: &[&str]) -> FioRun {
    let run = CgtopRun::start(&sb.top, "1", 60);
    run.wait_lines(1, Duration::from_secs(20));
    let mut fio = vec!["fio", "--output-format=json"];
    fio.extend_from_slice(args);
    let t0 = Instant::now();
    let pid = sb.spawn_in(g, &fio);
    let mut out = sb.child(pid).stdout.take().expect("fio's stdout");
    let status = sb.wait_child(pid, Duration::from_secs(120));
    let ended = Instant::now();
    let status = status.expect("fio did not end within 120 s");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).expect("fio's output");
    assert!(status.success(), "fio {args:?}: {status}\n{text}");
    let n = run.len();
    run.wait_lines(n + 1, Duration::from_secs(10));
    let samples = run.stop();
    let doc: Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..])
        .unwrap_or_else(|e| panic!("fio's JSON: {e}\n{text}"));
    let job = &doc["jobs"][0][if way == "w" { "write" } else { "read" }];
    let inside: Vec<&Sample> = samples.iter().filter(|s| s.within(t0, ended)).collect();
    FioRun {
        fio_bw: job["bw_bytes"].as_f64().unwrap_or(0.0),
        fio_bytes: job["io_bytes"].as_f64().unwrap_or(0.0),
        elapsed: ended - t0,
        rates: vm_common::nums(inside.iter().copied(), g, &format!("/rates/io/{way}bps")),
        last: inside.last().map(|s| (*s).clone()),
    }
}

impl FioRun {
    fn describe(&self, way: &str) -> String {
        format!(
            "fio {} MiB in {:.1} s at {} MiB/s; cgtop {way}bps per refresh: {} (median {})",
            mib(self.fio_bytes),
            self.elapsed.as_secs_f64(),
            mib(self.fio_bw),
            list(&self.rates, mib),
            if self.rates.is_empty() {
                "-".to_owned()
            } else {
                mib(median(&self.rates))
            }
        )
    }

    /// The group's object in cgtop's last line during the run.
    fn group(&self, g: &GroupPath) -> Value {
        self.last
            .as_ref()
            .and_then(|s| s.group(g).cloned())
            .unwrap_or(Value::Null)
    }
}

/// Whether a JSON value holds the device's limit `bps` anywhere below it
/// (the form of cgtop's limit fields is theirs to choose).
fn holds_limit(v: &Value, dev: DevId, bps: u64) -> bool {
    let t = v.to_string();
    t.contains(&bps.to_string())
        && (t.contains(&dev.to_string())
            || (t.contains(&format!("\"major\":{}", dev.major))
                && t.contains(&format!("\"minor\":{}", dev.minor))))
}

/// The words the group's IO page shows (key `3`) in `cgtop GROUP` run in
/// tmux, from its "writeback" title on, once it says that blkio does not
/// hold buffered writes; `None` if it did not within 20 s (or there is no
/// tmux).
fn io_page(g: &GroupPath) -> Option<String> {
    if Command::new("tmux").arg("-V").output().is_err() {
        println!("no tmux: the IO page is not checked");
        return None;
    }
    let tmux = vm_common::Tmux::run(
        &format!("{} {}", env!("CARGO_BIN_EXE_cgtop"), g.display()),
        160,
        50,
    );
    let t0 = Instant::now();
    let mut screen = String::new();
    while t0.elapsed() < Duration::from_secs(20) {
        tmux.send(&["3"]);
        sleep(Duration::from_millis(500));
        screen = tmux.capture();
        if screen.contains("buffered writes are NOT held") {
            tmux.send(&["q"]);
            let from = screen.find("writeback").unwrap_or(0);
            return Some(screen[from..].to_owned());
        }
    }
    tmux.send(&["q"]);
    println!("the IO page's last screen:\n{screen}");
    None
}

/// Every key of every object below `v`.
fn json_keys(v: &Value) -> Vec<String> {
    match v {
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| std::iter::once(k.clone()).chain(json_keys(x)))
            .collect(),
        Value::Array(a) => a.iter().flat_map(json_keys).collect(),
        _ => Vec::new(),
    }
}

fn within(rate: f64) -> bool {
    (rate / LIMIT as f64 - 1.0).abs() <= TOLERANCE
}

#[test]
#[ignore = "30 s of throttled IO on the root disk: scripts/test runs it (--include-ignored)"]
fn blkio_throttle_with_fio_on_the_root_disk() {
    if Command::new("fio").arg("--version").output().is_err() {
        println!("skipped: no fio on PATH (apt-get install fio)");
        return;
    }
    let (part, disk) = match root_disk() {
        Ok(d) => d,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let Some(mut sb) = V1Sandbox::or_skip("fio", &["blkio", "memory"]) else {
        return;
    };
    let dir = match tempdir_on(part) {
        Ok(d) => d,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let g = sb.top.clone();
    let file: PathBuf = dir.path().join("fio.dat");
    let filename = format!("--filename={}", file.display());
    let runtime = format!("--runtime={RUNTIME_S}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    figure(
        "v1 fio",
        &format!(
            "kernel {}, root on {part}, whole disk {disk}, group {} in {}",
            kernel.trim(),
            sb.rel,
            sb.hiers
                .iter()
                .map(|h| h.mount.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    );

    // ---- 1. direct writes under write_bps_device 1 MiB/s
    let how = set_throttle(&sb, &g, "blkio.throttle.write_bps_device", disk, LIMIT);
    figure(
        "v1 fio",
        &format!("write_bps_device {disk} {LIMIT} set by {how}"),
    );
    let direct = fio_in(
        &mut sb,
        &g,
        "w",
        &[
            "--name=direct-write",
            &filename,
            "--direct=1",
            "--rw=write",
            "--bs=64k",
            "--ioengine=psync",
            "--size=64M",
            &runtime,
        ],
    );
    figure("v1 fio direct write", &direct.describe("w"));
    let kernel_bytes = sb.read("blkio", &g, "blkio.throttle.io_service_bytes");
    figure(
        "v1 fio direct write",
        &format!(
            "blkio.throttle.io_service_bytes: {}",
            kernel_bytes.lines().collect::<Vec<_>>().join("; ")
        ),
    );

    // ---- 2. the same without --direct=1, the limit still on
    let buffered = fio_in(
        &mut sb,
        &g,
        "w",
        &[
            "--name=buffered-write",
            &filename,
            "--rw=write",
            "--bs=64k",
            "--ioengine=psync",
            // 8 MiB/s for 6 s, 8 times the limit: long enough for cgtop's
            // refreshes to lie inside it, small enough to stay below the
            // host's dirty limits (so the page cache takes all of it)
            "--rate=8m",
            "--size=48M",
            "--runtime=6",
        ],
    );
    figure("v1 fio buffered write", &buffered.describe("w"));
    let memstat = sb.read("memory", &g, "memory.stat");
    let pick = |k: &str| vm_common::kv(&memstat, k).unwrap_or(0);
    figure(
        "v1 fio buffered write",
        &format!(
            "after fio: memory.stat dirty {} MiB, writeback {} MiB",
            mib(pick("dirty") as f64),
            mib(pick("writeback") as f64)
        ),
    );
    // the limit off, then the dirty pages written back from the test's own
    // group (the root), so that the read below finds the data on the disk
    set_throttle(&sb, &g, "blkio.throttle.write_bps_device", disk, 0);
    std::fs::File::open(&file)
        .and_then(|f| f.sync_all())
        .expect("fsync fio's file");

    // ---- 3. direct reads under read_bps_device 1 MiB/s
    let how = set_throttle(&sb, &g, "blkio.throttle.read_bps_device", disk, LIMIT);
    figure(
        "v1 fio",
        &format!("read_bps_device {disk} {LIMIT} set by {how}"),
    );
    let read = fio_in(
        &mut sb,
        &g,
        "r",
        &[
            "--name=direct-read",
            &filename,
            "--direct=1",
            "--rw=read",
            "--bs=64k",
            "--ioengine=psync",
            "--size=64M",
            &runtime,
        ],
    );
    figure("v1 fio direct read", &read.describe("r"));
    let _ = std::fs::remove_file(&file);

    // ---- the IO page, in the TUI, says why (the read limit is still on:
    // any blkio limit tells the same story)
    let io_page = io_page(&g);
    figure(
        "v1 fio IO page",
        &format!(
            "the writeback part of cgtop's IO page for the group: {:?}",
            io_page.as_deref().map(|s| s
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" / "))
        ),
    );

    // ---- the checks, after every run, so that one failure still shows
    // every figure
    let mut failures = Vec::new();
    if direct.rates.len() < 5 {
        failures.push(format!(
            "direct write: cgtop showed the group's write rate in {} refreshes ({:?}); want >= 5",
            direct.rates.len(),
            direct.rates
        ));
    } else if !within(median(&direct.rates)) {
        failures.push(format!(
            "direct write: cgtop's median write rate {} MiB/s is not 1 MiB/s within 15 %",
            mib(median(&direct.rates))
        ));
    }
    if !within(direct.fio_bw) {
        failures.push(format!(
            "direct write: fio itself wrote at {} MiB/s",
            mib(direct.fio_bw)
        ));
    }
    let dg = direct.group(&g);
    if !holds_limit(&dg["io_max"], disk, LIMIT) {
        failures.push(format!(
            "direct write: cgtop does not show the limit {disk} {LIMIT} beside the rate: io_max = {}",
            dg["io_max"]
        ));
    }
    // buffered: fio writes at its own pace, 8 times the limit
    if buffered.fio_bw < 6.0 * LIMIT as f64 {
        failures.push(format!(
            "buffered write: fio wrote at only {} MiB/s: capped?",
            mib(buffered.fio_bw)
        ));
    }
    if buffered.rates.is_empty() {
        failures.push("buffered write: cgtop showed no write rate for the group".to_owned());
    }
    // the writes are not in the group's blkio figures: on v1 the flusher
    // writes them back from the root's blkio group
    if !buffered.rates.is_empty() && median(&buffered.rates) > LIMIT as f64 {
        failures.push(format!(
            "buffered write: cgtop's write rate for the group {} MiB/s, above the limit?",
            mib(median(&buffered.rates))
        ));
    }
    // and cgtop says why: the group's dirty and writeback pages (v1
    // memory.stat `dirty`/`writeback`, `total_*`, or v2's `file_*`) and
    // the host's dirty limits that hold a buffered writer instead
    let bg = buffered.group(&g);
    let keys = json_keys(&bg);
    for what in ["dirty", "writeback"] {
        if !keys.iter().any(|k| k.ends_with(what)) {
            failures.push(format!(
                "buffered write: cgtop's JSON for the group has no {what} pages (memory_stat = {})",
                bg["memory_stat"]
            ));
        }
    }
    let host = buffered
        .last
        .as_ref()
        .map_or(Value::Null, |s| s.doc["writeback"].clone());
    if host["limit_bytes"].as_f64().is_none() {
        failures.push(format!(
            "buffered write: cgtop's JSON has no host dirty limit (writeback = {host})"
        ));
    }
    figure(
        "v1 fio buffered write",
        &format!(
            "cgtop: the group's memory_stat {}; the host's writeback {}",
            bg["memory_stat"], host
        ),
    );
    if io_page.is_none() {
        failures.push(
            "the IO page (3) of the group in cgtop's TUI never said that blkio does not hold \
             buffered writes"
                .to_owned(),
        );
    }
    if read.rates.len() < 5 {
        failures.push(format!(
            "direct read: cgtop showed the group's read rate in {} refreshes ({:?}); want >= 5",
            read.rates.len(),
            read.rates
        ));
    } else if !within(median(&read.rates)) {
        failures.push(format!(
            "direct read: cgtop's median read rate {} MiB/s is not 1 MiB/s within 15 %",
            mib(median(&read.rates))
        ));
    }
    if !within(read.fio_bw) {
        failures.push(format!(
            "direct read: fio itself read at {} MiB/s",
            mib(read.fio_bw)
        ));
    }
    let rg = read.group(&g);
    if !holds_limit(&rg["io_max"], disk, LIMIT) {
        failures.push(format!(
            "direct read: cgtop does not show the limit {disk} {LIMIT}: io_max = {}",
            rg["io_max"]
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
