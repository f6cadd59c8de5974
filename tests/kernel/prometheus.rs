//! The exposition against the real thing (issue 10, item 2): a busy loop
//! in a test group on this machine, the real `cgtop serve` exposing that
//! group, the real Prometheus (Debian's `prometheus` package) scraping it
//! every second on loopback, and a PromQL query through Prometheus' HTTP
//! API:
//!
//! ```text
//! rate(cgroup_cpu_usage_seconds_total{cgroup="/cgtop-test-<pid>-<n>-prom"}[15s])
//! ```
//!
//! agrees with the kernel's own counter over the same window within 10 %,
//! and reads one core within 15 % (checked where the machine gave the loop
//! a core, always under CI=true; see the end of the test).
//!
//! The group is `cgtop-test-<pid>-<n>-prom` in the v1 cpuacct hierarchy
//! where one is mounted (this hybrid host: cgtop takes CPU time from
//! cpuacct there, as systemd places a unit in every hierarchy) and in
//! cgroup2; on a pure v2 host in cgroup2 alone. It is removed at the end,
//! also on failure (`common/sandbox_v1.rs`); cgtop serve, Prometheus and
//! the loop are ended by their pids (`common/prometheus.rs`).
//!
//! Skipped with the reason when not root or without `prometheus`; with
//! `CI=true` a missing `prometheus` fails (.ci/run installs it). About
//! 25 s.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::prometheus::{prometheus_binary, unix_now, Prometheus, Serve};
use crate::common::sandbox_v1::{mounted, V1Sandbox};
use std::path::PathBuf;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// The rate's window. With a scrape every second it holds about 15
/// samples, so one scrape that came late or served a value read a moment
/// earlier (serve reads at most so often, however many scrape) moves the
/// rate by a few per cent at most; and it is short enough that the whole
/// test stays under half a minute.
const WINDOW_S: f64 = 15.0;
/// How close to one core the rate must be: the loop runs at nice -20, but
/// the kernel's own threads, Prometheus and cgtop serve still take slices
/// of its core; 15 % leaves room for that and catches any error of unit
/// (microseconds for seconds: a factor of 10^6), of counter type (a gauge's
/// rate is nonsense) or of group (the parent's or a sibling's time).
const TOLERANCE: f64 = 0.15;
/// How close Prometheus' rate must be to the kernel's own counter over
/// the same window (the kernel read directly by the test every 100 ms).
const AGREEMENT: f64 = 0.10;

/// The group's CPU time in seconds, read from the kernel directly (not
/// through cgtop): cpuacct.usage (ns) in v1, else cpu.stat usage_usec.
fn kernel_cpu_seconds(sb: &V1Sandbox) -> f64 {
    let g = sb.path("");
    if sb
        .hiers
        .iter()
        .any(|h| h.controllers.iter().any(|c| c == "cpuacct"))
    {
        sb.read_u64("cpuacct", &g, "cpuacct.usage") as f64 / 1e9
    } else {
        let text = sb.read("", &g, "cpu.stat");
        let usec: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec ")?.trim().parse().ok())
            .expect("usage_usec in cpu.stat");
        usec as f64 / 1e6
    }
}

/// The kernel's counter at `t` (epoch seconds), interpolated between the
/// test's own readings.
fn at(samples: &[(f64, f64)], t: f64) -> f64 {
    let i = samples.partition_point(|(ts, _)| *ts < t);
    let i = i.clamp(1, samples.len() - 1);
    let ((t0, v0), (t1, v1)) = (samples[i - 1], samples[i]);
    v0 + (v1 - v0) * (t - t0) / (t1 - t0)
}

fn cgtop_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cgtop"))
}

#[test]
fn prometheus_rate_of_a_busy_group_is_one_core() {
    let _busy = crate::common::one_busy_loop_at_a_time();
    let prometheus = match prometheus_binary() {
        Ok(p) => p,
        Err(reason) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and {reason}: .ci/run installs it"
            );
            println!("skipped: {reason}");
            return;
        }
    };
    let t_start = Instant::now();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let has_cpuacct = mounted(&mountinfo)
        .iter()
        .any(|m| !m.v2 && m.controllers.iter().any(|c| c == "cpuacct"));
    let controllers: &[&str] = if has_cpuacct { &["cpuacct"] } else { &[] };
    let Some(mut sb) = V1Sandbox::or_skip("prom", controllers) else {
        return;
    };
    let g = sb.path("");
    // a shell loop without system calls: one core of user time. At nice
    // -20 (the test is root), so that it has a core to itself also while
    // the machine's other work (builds at nice 0 or 10) keeps both busy:
    // at nice 0 it measured 0.50 cores here beside two builds. One core
    // for 20 s is the point of the test.
    let busy = sb.spawn_in(
        &g,
        &["nice", "-n", "-20", "sh", "-c", "while :; do :; done"],
    );
    let logs = tempfile::Builder::new()
        .prefix("cgtop-test-prom-logs-")
        .tempdir()
        .expect("tempdir");
    // serve reads at most once per --min-interval (default 1 s) and
    // answers scrapes within it from the last reading, whose counters are
    // then up to that much older than the scrape's timestamp: over a 15 s
    // window up to 7 % off when the loop's share of the machine changes
    // (measured 0.503 against the kernel's 0.545 on a busy machine). A
    // quarter of a second keeps the shared reading in the path and the
    // error below 2 %.
    let serve = Serve::start(
        &cgtop_bin(),
        &["--min-interval", "0.25", &sb.rel],
        logs.path(),
    )
    .unwrap_or_else(|e| panic!("cgtop serve did not start: {e}"));
    let prom = Prometheus::start(&prometheus, &serve.addr, "1s")
        .unwrap_or_else(|e| panic!("prometheus did not start: {e}"));
    println!(
        "busy loop pid {busy} in {}; cgtop serve pid {} on {}; prometheus pid {} on {} with:\n{}",
        sb.rel,
        serve.proc.pid,
        serve.addr,
        prom.proc.pid,
        prom.addr,
        Prometheus::config(&serve.addr, "1s")
    );
    prom.wait_up(Duration::from_secs(15)).unwrap_or_else(|e| {
        panic!(
            "the cgtop target never came up: {e}\n{}",
            serve.proc.tail(20)
        )
    });
    let up_at = unix_now();

    // the kernel's own counter every 100 ms until the window is full of
    // scrapes (plus 2 s, so the window's end has been scraped)
    let mut samples = Vec::new();
    while unix_now() < up_at + WINDOW_S + 2.0 {
        samples.push((unix_now(), kernel_cpu_seconds(&sb)));
        sleep(Duration::from_millis(100));
    }
    let t = unix_now() - 1.0;
    let expr = format!(
        "rate(cgroup_cpu_usage_seconds_total{{cgroup=\"/{}\"}}[{WINDOW_S}s])",
        sb.rel
    );
    let rate = prom.query_one(&expr, Some(t)).unwrap_or_else(|e| {
        panic!(
            "{e}\nthe exposition:\n{}",
            serve.metrics().unwrap_or_default()
        )
    });
    let kernel = (at(&samples, t) - at(&samples, t - WINDOW_S)) / WINDOW_S;
    // the OpenMetrics info family (which promtool's text parser cannot
    // read) as Prometheus stored it: one series, 1, populated by the loop
    let info_expr = format!("cgroup_info{{cgroup=\"/{}\"}}", sb.rel);
    let info = prom
        .query(&info_expr, Some(t))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(info.as_slice(), [(labels, v)] if (*v - 1.0).abs() < 1e-9 && labels["populated"] == "1"),
        "{info_expr}: {info:?}"
    );
    let scrapes = prom
        .query_one(
            &format!("count_over_time(up{{job=\"cgtop\"}}[{WINDOW_S}s])"),
            Some(t),
        )
        .unwrap_or(f64::NAN);
    println!(
        "FIGURE prometheus_real: {expr} = {rate:.4} cores at {t:.3}; the kernel's {} over the \
         same {WINDOW_S} s = {kernel:.4} cores; {scrapes} scrapes in the window; {:.1} s in all",
        if has_cpuacct {
            "cpuacct.usage"
        } else {
            "cpu.stat usage_usec"
        },
        t_start.elapsed().as_secs_f64()
    );
    assert!(
        (rate / kernel - 1.0).abs() <= AGREEMENT,
        "Prometheus' rate {rate:.4} is not the kernel's {kernel:.4} within {}%",
        AGREEMENT * 100.0
    );
    // one core is what the loop asks for; whether it gets it is the
    // machine's business: on a shared machine whose two cores are busy
    // with other work (this one: load 5, builds, other tests' VMs) even
    // nice -20 measured 0.70-0.76 of a core, in the kernel's figure as in
    // Prometheus'. There the agreement above is the proof and the figure
    // says why 1.0 was not checked; under CI=true (CI runs alone on its
    // machine) it is always checked.
    let ci = std::env::var("CI").as_deref() == Ok("true");
    if ci || kernel >= 1.0 - TOLERANCE {
        assert!(
            (rate - 1.0).abs() <= TOLERANCE,
            "Prometheus' rate {rate:.4} is not one core within {}% (the kernel's own: {kernel:.4}; \
             below {:.2} there, the loop did not have a core: the machine is busy)",
            TOLERANCE * 100.0,
            1.0 - TOLERANCE
        );
    } else {
        println!(
            "note: the machine gave the loop only {kernel:.2} of a core (the kernel's figure), so \
             'one core within {}%' was not checked; the agreement with the kernel was",
            TOLERANCE * 100.0
        );
    }
    // dropped in reverse order: Prometheus, cgtop serve, the logs, then the
    // sandbox (the loop killed by its pid, the group removed)
}
