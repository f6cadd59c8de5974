//! Checks of cgtop's output on big and churning trees, for the VM scale run
//! (`tests/vm/scale/run`). The guest driver (`tests/vm/scale/guest.sh`)
//! builds the tree, runs cgtop, saves its output, and runs one test of this
//! module (`scale::` of the guest test binary) with the files named in environment variables:
//!
//! - `batch_lists_every_group`: `CGTOP_SCALE_EXPECTED` (every group but the
//!   root, `/a/b` per line), `CGTOP_SCALE_TEXT` (`cgtop -b -n 2`),
//!   `CGTOP_SCALE_JSON` (`cgtop --json -n 1`);
//! - `churn_output_is_sane`: `CGTOP_SCALE_CHURN_JSON` (`cgtop --json -d D`,
//!   killed at the end), `CGTOP_SCALE_CHURN_INTERVAL` (D),
//!   `CGTOP_SCALE_CHURN_WALL_MS` (from cgtop's start to its end),
//!   `CGTOP_SCALE_CHURN_PREFIX` (where the churned groups live).
//!
//! Both are `#[ignore]`d: plain `cargo test` lists them as ignored with
//! the reason, guest.sh runs them with `--include-ignored`, and run by
//! hand without those variables they fail rather than pass unchecked. The
//! `*_on_a_fixture` tests run the same checks on a fixture tree, so that
//! the parsers are exercised on the host too.

use crate::common::batch;

use serde::Deserialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).map(PathBuf::from)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Up to 10 items of a set difference, for a failure message.
fn some(v: &BTreeSet<String>) -> String {
    let mut s: Vec<&str> = v.iter().take(10).map(String::as_str).collect();
    if v.len() > 10 {
        s.push("...");
    }
    s.join(", ")
}

/// One `cgtop -b` refresh: its header's figures and its rows, with the
/// paths rebuilt from the indented names.
#[derive(Debug, Default)]
struct TextRefresh {
    /// "at T s": seconds since cgtop started.
    at: f64,
    /// "interval I s".
    interval: f64,
    /// "N groups".
    count: usize,
    paths: Vec<String>,
    /// CPU%, READ/s, WRITE/s of each row (None for "-").
    cpu: Vec<Option<f64>>,
    io: Vec<[Option<f64>; 2]>,
}

/// "646K", "1.5M", "0", "-" (binary units, as `render::units::bytes_short`).
fn parse_bytes(s: &str) -> Option<f64> {
    if s == "-" {
        return None;
    }
    let (num, mul) = match s.chars().last() {
        Some(c @ ('K' | 'M' | 'G' | 'T' | 'P')) => {
            let k = ['K', 'M', 'G', 'T', 'P'].iter().position(|&u| u == c);
            let mul = (0..=k.unwrap_or(0)).fold(1.0, |m, _| m * 1024.0);
            (&s[..s.len() - 1], mul)
        }
        _ => (s, 1.0),
    };
    Some(
        num.parse::<f64>()
            .unwrap_or_else(|_| panic!("not a byte count: {s:?}"))
            * mul,
    )
}

/// Each refresh of `cgtop -b` (read by the tests' one reader of `-b`
/// text, `tests/common/batch.rs`) with the paths rebuilt from the indented
/// names.
fn parse_text(text: &str) -> Vec<TextRefresh> {
    batch::parse(text)
        .iter()
        .map(|b| {
            let (Some(at), Some(count), Some(interval)) = (b.at(), b.groups(), b.interval()) else {
                panic!("cannot read the header {:?}", b.title);
            };
            let mut r = TextRefresh {
                at,
                interval,
                count,
                ..TextRefresh::default()
            };
            let mut stack: Vec<String> = Vec::new();
            for line in &b.rows {
                let (depth, cols) = batch::row_cells(line);
                assert!(cols.len() >= 6, "a row with too few columns: {line:?}");
                let name = cols[0];
                assert!(
                    !name.ends_with('…'),
                    "a group name is cut in the text output: {line:?}"
                );
                let path = if depth == 0 {
                    stack.clear();
                    stack.push(String::new());
                    "/".to_owned()
                } else {
                    assert!(
                        depth <= stack.len(),
                        "row {line:?} is deeper than its parent"
                    );
                    stack.truncate(depth);
                    stack.push(name.to_owned());
                    stack.join("/")
                };
                r.paths.push(path);
                r.cpu.push(if cols[1] == "-" {
                    None
                } else {
                    Some(
                        cols[1]
                            .parse()
                            .unwrap_or_else(|_| panic!("CPU% in {line:?}")),
                    )
                });
                r.io.push([parse_bytes(cols[3]), parse_bytes(cols[4])]);
            }
            r
        })
        .collect()
}

/// Checks that `text` (`cgtop -b -n K`) and `json` (`cgtop --json -n 1`)
/// hold exactly the groups of `expected` plus the root. Returns a summary.
fn check_listing(expected: &str, text: &str, json: &str, refreshes: usize) -> String {
    let mut want: BTreeSet<String> = expected
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    want.insert("/".to_owned());
    let parsed = parse_text(text);
    assert_eq!(
        parsed.len(),
        refreshes,
        "cgtop -b printed {} refreshes, asked for {refreshes}",
        parsed.len()
    );
    for (k, r) in parsed.iter().enumerate() {
        let got: BTreeSet<String> = r.paths.iter().cloned().collect();
        assert_eq!(
            got.len(),
            r.paths.len(),
            "refresh {}: a group is listed twice",
            k + 1
        );
        let missing: BTreeSet<String> = want.difference(&got).cloned().collect();
        let extra: BTreeSet<String> = got.difference(&want).cloned().collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "cgtop -b refresh {}: {} groups listed, {} expected; missing {}: {}; unexpected {}: {}",
            k + 1,
            got.len(),
            want.len(),
            missing.len(),
            some(&missing),
            extra.len(),
            some(&extra)
        );
        assert_eq!(
            r.count,
            want.len(),
            "refresh {}: the header's group count",
            k + 1
        );
    }
    let docs: Vec<ListDoc> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        docs.len(),
        1,
        "cgtop --json -n 1 printed {} lines",
        docs.len()
    );
    let got: BTreeSet<String> = docs[0].groups.iter().map(|g| g.path.clone()).collect();
    let missing: BTreeSet<String> = want.difference(&got).cloned().collect();
    let extra: BTreeSet<String> = got.difference(&want).cloned().collect();
    assert!(
        missing.is_empty() && extra.is_empty() && got.len() == docs[0].groups.len(),
        "cgtop --json: {} groups, {} distinct, {} expected; missing {}; unexpected {}",
        docs[0].groups.len(),
        got.len(),
        want.len(),
        some(&missing),
        some(&extra)
    );
    let with_procs = docs[0]
        .groups
        .iter()
        .filter(|g| g.pids.as_ref().is_some_and(|p| !p.is_empty()))
        .count();
    format!(
        "{} groups in each of {refreshes} text refreshes and in the JSON one ({with_procs} with processes)",
        want.len()
    )
}

#[derive(Deserialize)]
struct ListDoc {
    groups: Vec<ListGroup>,
}

#[derive(Deserialize)]
struct ListGroup {
    path: String,
    /// The group's own processes (JSON mode reads every group's detail).
    pids: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize, Debug)]
struct Doc {
    time_s: f64,
    #[serde(default)]
    unix_time_s: Option<f64>,
    interval_s: f64,
    ncpus: usize,
    cost: Cost,
    groups: Vec<Group>,
}

#[derive(Deserialize, Debug)]
struct Cost {
    wall_ms: f64,
    files_read: u64,
    files_kept: u64,
    fd_limited: bool,
    #[serde(default)]
    dirs_listed: u64,
}

#[derive(Deserialize, Debug)]
struct Group {
    path: String,
    inode: u64,
    rates: Rates,
    #[serde(default)]
    cpu: Option<CpuRaw>,
}

/// cpu.stat as cgtop's JSON carries it (the fields the cap check needs).
#[derive(Deserialize, Debug, Clone, Copy)]
struct CpuRaw {
    nr_periods: Option<u64>,
    nr_throttled: Option<u64>,
}

#[derive(Deserialize, Debug, Default)]
struct Rates {
    cpu_pct: Option<f64>,
    user_pct: Option<f64>,
    system_pct: Option<f64>,
    throttled_per_s: Option<f64>,
    throttled_pct: Option<f64>,
    io: Option<Io>,
}

#[derive(Deserialize, Debug)]
struct Io {
    rbps: f64,
    wbps: f64,
    riops: f64,
    wiops: f64,
}

impl Rates {
    fn is_empty(&self) -> bool {
        self.cpu_pct.is_none()
            && self.user_pct.is_none()
            && self.system_pct.is_none()
            && self.throttled_pct.is_none()
            && self.io.is_none()
    }
}

/// What a churn check found wrong: the first 20, for the failure message.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, problem: String) {
        if self.0.len() < 20 {
            self.0.push(problem);
        }
    }

    /// Fails with every problem kept, in `what` ("cgtop's output").
    fn assert_none(&self, what: &str) {
        assert!(
            self.0.is_empty(),
            "{} problems in {what} under churn:\n  {}",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

/// What a run of `cgtop --json` under churn must satisfy, and what it
/// showed.
struct ChurnLimits<'a> {
    interval_s: f64,
    /// From cgtop's start to its end (killed), as the driver measured it.
    wall_s: f64,
    /// When the driver killed cgtop (UNIX seconds), if it said.
    end_unix_s: Option<f64>,
    /// Path prefix of the churned groups ("" counts every group).
    prefix: &'a str,
    /// Fewest refreshes the run must have printed.
    min_refreshes: usize,
    /// A group under cpu.max whose demand exceeds its quota while the churn
    /// runs: cgtop's windows must match the kernel's count of periods, and
    /// its CPU % must read as the cap.
    cap: Option<CpuCap>,
}

impl ChurnLimits<'_> {
    fn assert_enough_refreshes(&self, printed: usize) {
        assert!(
            printed >= self.min_refreshes.max(2),
            "only {printed} refreshes printed in {:.1} s",
            self.wall_s
        );
    }
}

/// `path=quota/period` (µs, as in cpu.max) from CGTOP_SCALE_CHURN_CAP.
struct CpuCap {
    path: String,
    quota_s: f64,
    period_s: f64,
}

impl CpuCap {
    fn parse(v: &str) -> Self {
        let bad = || -> ! { panic!("CGTOP_SCALE_CHURN_CAP must be path=quota/period, not {v:?}") };
        let (path, qp) = v.rsplit_once('=').unwrap_or_else(|| bad());
        let (q, p) = qp.split_once('/').unwrap_or_else(|| bad());
        let us = |x: &str| x.parse::<f64>().unwrap_or_else(|_| bad()) / 1e6;
        Self {
            path: path.to_owned(),
            quota_s: us(q),
            period_s: us(p),
        }
    }

    fn pct(&self) -> f64 {
        100.0 * self.quota_s / self.period_s
    }
}

/// Largest byte rate accepted: more than any disk of the test VM (or this
/// decade) sustains, far below what a counter that jumped would give.
const MAX_BPS: f64 = 16.0 * 1024.0 * 1024.0 * 1024.0;
const MAX_IOPS: f64 = 10_000_000.0;

#[allow(clippy::too_many_lines)] // one check, read top to bottom
fn check_churn(jsonl: &str, lim: &ChurnLimits) -> String {
    let lines: Vec<&str> = jsonl.lines().collect();
    let mut docs: Vec<Doc> = Vec::new();
    let mut partial = 0;
    for (k, l) in lines.iter().enumerate() {
        match serde_json::from_str::<Doc>(l) {
            Ok(d) => docs.push(d),
            // cgtop was killed: its last line may be cut
            Err(e) if k + 1 == lines.len() && e.is_eof() => partial = 1,
            Err(e) => panic!("line {} of cgtop's JSON output does not parse: {e}", k + 1),
        }
    }
    lim.assert_enough_refreshes(docs.len());
    let mut bad = Problems::default();
    // ---- the refreshes keep coming, one per interval + refresh cost
    let (mut max_gap, mut max_over, mut sum_gap) = (0.0f64, 0.0f64, 0.0);
    for (i, w) in docs.windows(2).enumerate() {
        let gap = w[1].time_s - w[0].time_s;
        sum_gap += gap;
        max_gap = max_gap.max(gap);
        // the loop sleeps the interval after each refresh and its output
        let over = gap - lim.interval_s - w[0].cost.wall_ms / 1e3;
        max_over = max_over.max(over);
        if (w[1].interval_s - gap).abs() > 0.002 {
            bad.add(format!(
                "refresh {}: interval_s {:.3} but {gap:.3} s since the previous one",
                i + 2,
                w[1].interval_s
            ));
        }
        if gap < lim.interval_s * 0.95 {
            bad.add(format!(
                "refresh {}: {gap:.3} s after the previous one, the interval is {}",
                i + 2,
                lim.interval_s
            ));
        }
        // a stall: far more than the interval, the previous refresh and
        // writing it out
        if over > 2.0 + lim.interval_s + w[0].cost.wall_ms / 1e3 {
            bad.add(format!(
                "refresh {}: {gap:.3} s after the previous one (interval {}, that refresh took {:.0} ms)",
                i + 2,
                lim.interval_s,
                w[0].cost.wall_ms
            ));
        }
    }
    let n = docs.len();
    let mean_gap = sum_gap / (n - 1) as f64;
    let mean_cost = docs.iter().map(|d| d.cost.wall_ms).sum::<f64>() / n as f64 / 1e3;
    // every refresh printed between the first (one interval + two refreshes
    // after the start) and the end: the count the elapsed time allows
    // from the first refresh to the kill: exact where both clocks are known
    // (wall_s also counts cgtop's start-up, seconds on a loaded TCG guest)
    let span = match (lim.end_unix_s, docs[0].unix_time_s) {
        (Some(end), Some(first)) => end - first,
        _ => lim.wall_s - docs[0].time_s,
    };
    let expected = span / mean_gap;
    let expected_max = lim.wall_s / lim.interval_s + 1.0;
    if (n as f64) < expected.floor() - 1.0 || n as f64 > expected.ceil() + 1.0 {
        bad.add(format!(
            "{n} refreshes printed; {span:.1} s from the first to the end at {mean_gap:.3} s each \
             allow {expected:.1}"
        ));
    }
    if n as f64 > expected_max {
        bad.add(format!(
            "{n} refreshes printed in {:.1} s at an interval of {} s",
            lim.wall_s, lim.interval_s
        ));
    }

    // ---- every rate is sane
    let ncpus = docs[0].ncpus as f64;
    let (mut max_cpu, mut max_cpu_path, mut max_bound) = (0.0f64, String::new(), 0.0f64);
    let (mut max_bps, mut max_iops) = (0.0f64, 0.0f64);
    let (mut rated, mut unrated) = (0u64, 0u64);
    let mut prev: HashMap<&str, u64> = HashMap::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut incarnations: HashSet<(&str, u64)> = HashSet::new();
    let (mut recreated, mut appeared) = (0u64, 0u64);
    let mut max_groups = 0;
    // the capped group's windows: (refresh, cgtop's CPU %, its window, the
    // kernel's periods in it, throttled in each of them); and its last
    // (inode, cpu.stat)
    let mut windows: Vec<(usize, f64, f64, u64, bool)> = Vec::new();
    let mut cap_prev: Option<(u64, CpuRaw)> = None;
    for (i, d) in docs.iter().enumerate() {
        max_groups = max_groups.max(d.groups.len());
        // a group's counters are read up to cost.wall after the refresh's
        // timestamp, so its sampling window can exceed interval_s by as
        // much: the most CPU a rate can then show
        let cpu_bound = 100.0 * ncpus * (1.0 + d.cost.wall_ms / 1e3 / d.interval_s) * 1.01 + 1.0;
        let per_s_bound = 1000.0 * ncpus * (1.0 + d.cost.wall_ms / 1e3 / d.interval_s) + 1.0;
        max_bound = max_bound.max(cpu_bound);
        let mut here: HashSet<&str> = HashSet::with_capacity(d.groups.len());
        let mut cur: HashMap<&str, u64> = HashMap::with_capacity(d.groups.len());
        for (k, g) in d.groups.iter().enumerate() {
            let p = g.path.as_str();
            if !here.insert(p) {
                bad.add(format!("refresh {}: {p} listed twice", i + 1));
            }
            // the first is the start group, whose parent is not shown
            if k > 0 {
                let parent = p
                    .rfind('/')
                    .map_or("/", |k| if k == 0 { "/" } else { &p[..k] });
                if !here.contains(parent) {
                    bad.add(format!(
                        "refresh {}: {p} comes without its parent {parent} before it",
                        i + 1
                    ));
                }
            }
            cur.insert(p, g.inode);
            if p.starts_with(lim.prefix) {
                seen.insert(p);
                incarnations.insert((p, g.inode));
            }
            let r = &g.rates;
            for (name, v, bound) in [
                ("cpu_pct", r.cpu_pct, cpu_bound),
                ("user_pct", r.user_pct, cpu_bound),
                ("system_pct", r.system_pct, cpu_bound),
                // not throttled_pct: the kernel credits a throttled
                // stretch when it ends, per CPU, so one window can hold
                // more than ncpus × its length (403 % seen on 2 vCPUs)
                ("throttled_per_s", r.throttled_per_s, per_s_bound),
            ] {
                if let Some(v) = v {
                    if !(0.0..=bound).contains(&v) {
                        bad.add(format!(
                            "refresh {}: {p}: {name} = {v:.1} outside [0, {bound:.0}] \
                             (interval {:.3} s, refresh {:.0} ms)",
                            i + 1,
                            d.interval_s,
                            d.cost.wall_ms
                        ));
                    }
                }
            }
            if let Some(c) = r.cpu_pct {
                if c > max_cpu {
                    max_cpu = c;
                    p.clone_into(&mut max_cpu_path);
                }
                if lim.cap.as_ref().is_some_and(|cap| cap.path == p) {
                    let now = g.cpu;
                    if let (Some((ino, was)), Some(now)) = (cap_prev, now) {
                        if let (true, Some(p0), Some(p1), Some(t0), Some(t1)) = (
                            ino == g.inode,
                            was.nr_periods,
                            now.nr_periods,
                            was.nr_throttled,
                            now.nr_throttled,
                        ) {
                            let (dper, dthr) = (p1.saturating_sub(p0), t1.saturating_sub(t0));
                            let throttled = dper >= 3 && dthr + 1 >= dper;
                            windows.push((i, c, d.interval_s, dper, throttled));
                        }
                    }
                    cap_prev = now.map(|n| (g.inode, n));
                }
            }
            if let Some(io) = &r.io {
                for (name, v, bound) in [
                    ("rbps", io.rbps, MAX_BPS),
                    ("wbps", io.wbps, MAX_BPS),
                    ("riops", io.riops, MAX_IOPS),
                    ("wiops", io.wiops, MAX_IOPS),
                ] {
                    if !(0.0..=bound).contains(&v) {
                        bad.add(format!(
                            "refresh {}: {p}: io {name} = {v:.0} outside [0, {bound:.0}]",
                            i + 1
                        ));
                    }
                }
                max_bps = max_bps.max(io.rbps).max(io.wbps);
                max_iops = max_iops.max(io.riops).max(io.wiops);
            }
            if r.is_empty() {
                unrated += 1;
            } else {
                rated += 1;
            }
            // a group seen for the first time, or again under a new inode,
            // has nothing to compute a rate from
            if i > 0 {
                match prev.get(p) {
                    None => {
                        appeared += 1;
                        if !r.is_empty() {
                            bad.add(format!("refresh {}: {p} is new but has rates {r:?}", i + 1));
                        }
                    }
                    Some(&ino) if ino != g.inode => {
                        recreated += 1;
                        if !r.is_empty() {
                            bad.add(format!(
                                "refresh {}: {p} was recreated (inode {ino} -> {}) but has rates {r:?}",
                                i + 1,
                                g.inode
                            ));
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        prev = cur;
    }
    if seen.len() < 3 && !lim.prefix.is_empty() {
        bad.add(format!(
            "only {} distinct groups under {} were ever shown: cgtop does not see the churn",
            seen.len(),
            lim.prefix
        ));
    }
    // The kernel's own clock for the capped group: nr_periods counts the
    // cpu.max periods that passed while it ran (a late timer adds its
    // overruns), but not while it was idle. In a window throttled in every
    // period, between two others like it, it was busy all along, so
    // periods × period is the time between the two reads of its cpu.stat:
    // cgtop's window must match it. (usage_usec is no such clock: under
    // churn the kernel credits a removed child's time late, so one window
    // read 0 % and the next 45 % at a 20 % cap; the median stays true.)
    // A window may miss by a period (the count moves in steps), and by a
    // second one now and then where the guest's vCPU stalled and the
    // period timer fired late; a walk inside the window (the old bug) put
    // 0.1-0.5 s into most of them.
    let mut busy: Vec<(f64, f64, u64)> = Vec::new();
    let mut off_by_one_period = 0;
    if let Some(cap) = &lim.cap {
        for w in windows.windows(3) {
            let ((a, ..), (i, c, secs, dper, _), (b, ..)) = (w[0], w[1], w[2]);
            if !(a + 1 == i && i + 1 == b && w.iter().all(|x| x.4)) {
                continue;
            }
            let off = (secs - dper as f64 * cap.period_s).abs();
            if off > 2.0 * cap.period_s + 0.05 {
                bad.add(format!(
                    "refresh {}: {}: cgtop's window is {secs:.3} s, the kernel counted {dper} \
                     periods of {} s",
                    i + 1,
                    cap.path,
                    cap.period_s
                ));
            } else if off > cap.period_s + 0.05 {
                off_by_one_period += 1;
            }
            busy.push((c, secs, dper));
        }
        if off_by_one_period * 5 > busy.len() {
            bad.add(format!(
                "{} of {} busy windows of {} differ from the kernel's period count by more \
                 than a period",
                off_by_one_period,
                busy.len(),
                cap.path
            ));
        }
    }
    // while the spinners run the capped group uses its whole quota: over
    // its busy windows cgtop's median reading is the cap
    let mut cap_summary = String::new();
    if let Some(cap) = &lim.cap {
        if busy.len() < 3 {
            bad.add(format!(
                "{} busy windows of {} (throttled in every period): the spinners did not run",
                busy.len(),
                cap.path
            ));
        } else {
            let mut pct: Vec<f64> = busy.iter().map(|b| b.0).collect();
            pct.sort_by(f64::total_cmp);
            let median = pct[pct.len() / 2];
            if (median - cap.pct()).abs() > 1.5 {
                bad.add(format!(
                    "{} capped at {:.0} %: the median busy reading is {median:.1} %",
                    cap.path,
                    cap.pct()
                ));
            }
            let worst = busy
                .iter()
                .map(|(_, w, n)| (w - *n as f64 * cap.period_s).abs())
                .fold(0.0, f64::max);
            cap_summary = format!(
                "; {} capped at {:.0} %: {} busy windows, within {:.3} s of the kernel's \
                 period count ({off_by_one_period} more than a period off); read {:.1}-{:.1} % \
                 (median {median:.1})",
                cap.path,
                cap.pct(),
                busy.len(),
                worst,
                pct[0],
                pct[pct.len() - 1]
            );
        }
    }
    bad.assert_none("cgtop's output");
    let last = &docs[n - 1].cost;
    let walks = docs.iter().filter(|d| d.cost.dirs_listed > 0).count();
    let listed: u64 = docs.iter().map(|d| d.cost.dirs_listed).sum();
    let mut s = String::new();
    let _ = write!(
        s,
        "{n} refreshes in {:.1} s (+{partial} cut by the kill): one every {mean_gap:.2} s = interval {} \
         + refresh {mean_cost:.2} s on average, longest gap {max_gap:.2} s; up to {max_groups} groups; \
         {} churned paths seen as {} groups, {appeared} first sights and {recreated} recreations \
         without rates; {rated} rates, {unrated} empty, all in bounds: max cpu_pct {max_cpu:.1} \
         ({max_cpu_path}; bound {max_bound:.0}), max io {max_bps:.0} B/s, {max_iops:.0} IO/s; \
         last refresh read {} files, {} kept, fd_limited {}; {walks} refreshes re-listed \
         directories, {:.0} each on average{cap_summary}",
        lim.wall_s,
        lim.interval_s,
        seen.len(),
        incarnations.len(),
        last.files_read,
        last.files_kept,
        last.fd_limited,
        listed as f64 / walks.max(1) as f64
    );
    s
}

/// The `cgtop -b` counterpart of [`check_churn`], for trees whose JSON
/// refresh (every group's full detail) is too slow to watch a churn: the
/// refreshes keep coming, the tree is consistent, every CPU % and IO rate
/// shown is within bounds, and the churned groups are seen.
fn check_churn_text(text: &str, lim: &ChurnLimits, ncpus: usize) -> String {
    // cgtop was killed: drop a last refresh whose rows may be cut
    let cut = text
        .rfind("\ncgtop - refresh ")
        .map_or(text, |k| &text[..=k]);
    let partial = usize::from(cut.len() < text.len() && !text.ends_with("\n\n"));
    let docs = parse_text(if partial == 1 { cut } else { text });
    lim.assert_enough_refreshes(docs.len());
    let mut bad = Problems::default();
    let n = docs.len();
    let gaps: Vec<f64> = docs.windows(2).map(|w| w[1].at - w[0].at).collect();
    let mean_gap = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
    let max_gap = gaps.iter().copied().fold(0.0, f64::max);
    for (i, (g, d)) in gaps.iter().zip(&docs[1..]).enumerate() {
        // the header rounds to 0.1 s
        if (d.interval - g).abs() > 0.11 {
            bad.add(format!(
                "refresh {}: interval {:.1} s but {g:.1} s since the previous one",
                i + 2,
                d.interval
            ));
        }
        if *g < lim.interval_s * 0.95 - 0.1 {
            bad.add(format!(
                "refresh {}: {g:.1} s after the previous one",
                i + 2
            ));
        }
        if *g > 4.0 * mean_gap + 2.0 {
            bad.add(format!(
                "refresh {}: a stall of {g:.1} s (the mean gap is {mean_gap:.1} s)",
                i + 2
            ));
        }
    }
    let span = lim.wall_s - docs[0].at;
    let expected = span / mean_gap.max(lim.interval_s);
    if (n as f64) < expected.floor() - 1.0 || n as f64 > expected.ceil() + 1.0 {
        bad.add(format!(
            "{n} refreshes printed; {span:.1} s from the first to the end at {mean_gap:.2} s each \
             allow {expected:.1}"
        ));
    }
    // a rate's sampling window can exceed the interval by the refresh's
    // own duration, which is at most the longest gap less the interval
    let stretch = (max_gap - lim.interval_s).max(0.0);
    let (mut max_cpu, mut max_bps) = (0.0f64, 0.0f64);
    let mut seen: HashSet<&str> = HashSet::new();
    let mut rows = 0;
    for (i, d) in docs.iter().enumerate() {
        if d.paths.len() != d.count {
            bad.add(format!(
                "refresh {}: the header says {} groups, {} rows",
                i + 1,
                d.count,
                d.paths.len()
            ));
        }
        let distinct: HashSet<&str> = d.paths.iter().map(String::as_str).collect();
        if distinct.len() != d.paths.len() {
            bad.add(format!("refresh {}: a group is listed twice", i + 1));
        }
        let bound = 100.0 * ncpus as f64 * (1.0 + stretch / d.interval.max(0.05)) * 1.01 + 1.0;
        for (k, p) in d.paths.iter().enumerate() {
            rows += 1;
            if p.starts_with(lim.prefix) {
                seen.insert(p);
            }
            if let Some(c) = d.cpu[k] {
                max_cpu = max_cpu.max(c);
                if !(0.0..=bound).contains(&c) {
                    bad.add(format!(
                        "refresh {}: {p}: CPU% {c} outside [0, {bound:.0}]",
                        i + 1
                    ));
                }
            }
            for v in d.io[k].iter().flatten() {
                max_bps = max_bps.max(*v);
                if !(0.0..=MAX_BPS).contains(v) {
                    bad.add(format!("refresh {}: {p}: an IO rate of {v:.0} B/s", i + 1));
                }
            }
        }
    }
    if seen.len() < 3 && !lim.prefix.is_empty() {
        bad.add(format!(
            "only {} distinct groups under {} were ever shown: cgtop does not see the churn",
            seen.len(),
            lim.prefix
        ));
    }
    bad.assert_none("cgtop's text output");
    format!(
        "{n} refreshes in {:.1} s (+{partial} cut by the kill): one every {mean_gap:.2} s at an \
         interval of {} s, longest gap {max_gap:.2} s; {rows} rows; {} churned paths seen; \
         all in bounds: max CPU% {max_cpu:.1}, max IO {max_bps:.0} B/s",
        lim.wall_s,
        lim.interval_s,
        seen.len()
    )
}

#[test]
#[ignore = "runs in the QEMU guest: tests/vm/scale/run"]
fn batch_lists_every_group() {
    let (Some(expected), Some(text), Some(json)) = (
        env_path("CGTOP_SCALE_EXPECTED"),
        env_path("CGTOP_SCALE_TEXT"),
        env_path("CGTOP_SCALE_JSON"),
    ) else {
        panic!("CGTOP_SCALE_EXPECTED, _TEXT, _JSON unset: tests/vm/scale/guest.sh sets them");
    };
    let s = check_listing(&read(&expected), &read(&text), &read(&json), 2);
    println!("listing check: {s}");
}

#[test]
#[ignore = "runs in the QEMU guest: tests/vm/scale/run"]
fn churn_output_is_sane() {
    let json = env_path("CGTOP_SCALE_CHURN_JSON");
    let text = env_path("CGTOP_SCALE_CHURN_TEXT");
    assert!(
        json.is_some() || text.is_some(),
        "CGTOP_SCALE_CHURN_* unset: tests/vm/scale/guest.sh sets them"
    );
    let num = |k: &str| -> f64 {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} must be a number"))
    };
    let prefix = std::env::var("CGTOP_SCALE_CHURN_PREFIX").unwrap_or_default();
    let lim = ChurnLimits {
        interval_s: num("CGTOP_SCALE_CHURN_INTERVAL"),
        wall_s: num("CGTOP_SCALE_CHURN_WALL_MS") / 1e3,
        end_unix_s: std::env::var("CGTOP_SCALE_CHURN_END_UNIX_MS")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .map(|ms| ms / 1e3),
        prefix: &prefix,
        min_refreshes: std::env::var("CGTOP_SCALE_CHURN_MIN_REFRESHES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3),
        cap: std::env::var("CGTOP_SCALE_CHURN_CAP")
            .ok()
            .map(|v| CpuCap::parse(&v)),
    };
    let s = if let Some(json) = json {
        check_churn(&read(&json), &lim)
    } else {
        let ncpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        check_churn_text(&read(&text.expect("checked above")), &lim, ncpus)
    };
    println!("churn check: {s}");
}

// ---- the same checks on a fixture, so that they run on every host

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pure-v2-systemd")
}

fn cgtop(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cgtop");
    assert!(
        out.status.success(),
        "cgtop {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn listing_check_on_a_fixture() {
    let root = fixture();
    let mut expected = String::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let rel = e.path().strip_prefix(&root).expect("below root").to_owned();
                let _ = writeln!(expected, "/{}", rel.display());
                stack.push(e.path());
            }
        }
    }
    let r = root.to_str().expect("UTF-8 path");
    let text = cgtop(&["--root", r, "-b", "--kernel-names", "-n", "2", "-d", "0.1"]);
    let json = cgtop(&["--root", r, "--json", "-n", "1", "-d", "0.1"]);
    let s = check_listing(&expected, &text, &json, 2);
    let n = expected.lines().count() + 1;
    assert!(s.starts_with(&format!("{n} groups")), "{s}");
    // a missing group is found
    let mut more = expected.clone();
    more.push_str("/system.slice/not-there.service\n");
    let r2 = std::panic::catch_unwind(|| check_listing(&more, &text, &json, 2));
    assert!(r2.is_err(), "a missing group went unnoticed");
}

/// The limits of a fixture run started at `t0` and just ended.
fn fixture_limits(interval_s: f64, t0: std::time::Instant, prefix: &str) -> ChurnLimits<'_> {
    ChurnLimits {
        interval_s,
        wall_s: t0.elapsed().as_secs_f64(),
        end_unix_s: None,
        prefix,
        min_refreshes: 3,
        cap: None,
    }
}

#[test]
fn churn_check_on_a_fixture() {
    let r = fixture();
    let r = r.to_str().expect("UTF-8 path");
    let t0 = std::time::Instant::now();
    let json = cgtop(&["--root", r, "--json", "-n", "4", "-d", "0.1"]);
    let lim = fixture_limits(0.1, t0, "");
    let s = check_churn(&json, &lim);
    assert!(s.starts_with("4 refreshes"), "{s}");
    // an absurd rate is caught
    let bad = json.replacen("\"cpu_pct\":0.0", "\"cpu_pct\":1e9", 1);
    assert_ne!(bad, json, "no cpu_pct of 0 in the fixture's output");
    let r2 = std::panic::catch_unwind(|| check_churn(&bad, &lim));
    assert!(r2.is_err(), "an absurd cpu_pct went unnoticed");
    // the driver's clock at the end: a driver that stops cgtop right
    // after its last line (taken from that line, not from this process's
    // clock: on a loaded machine the test reads its clock a second or more
    // after cgtop ended, and the span then allows more refreshes than
    // cgtop printed); 3 s later, it would mean cgtop stopped printing long
    // before it was killed
    let last_unix = json
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|d| d["unix_time_s"].as_f64())
        .expect("a unix_time_s in the last line");
    let at_end = ChurnLimits {
        end_unix_s: Some(last_unix + 0.01),
        ..lim
    };
    let s = check_churn(&json, &at_end);
    assert!(s.starts_with("4 refreshes"), "{s}");
    let stalled = ChurnLimits {
        end_unix_s: Some(last_unix + 3.0),
        ..at_end
    };
    let r3 = std::panic::catch_unwind(|| check_churn(&json, &stalled));
    assert!(
        r3.is_err(),
        "3 s without output before the kill went unnoticed"
    );
    // started below the root, as the guest's "sub" watcher is
    let t0 = std::time::Instant::now();
    let json = cgtop(&[
        "--root",
        r,
        "--json",
        "-n",
        "3",
        "-d",
        "0.1",
        "system.slice",
    ]);
    let lim = fixture_limits(0.1, t0, "/system.slice/");
    let s = check_churn(&json, &lim);
    assert!(s.starts_with("3 refreshes"), "{s}");
}

#[test]
fn cap_check_on_a_fixture() {
    // the fixture's counters stand still; the capped group's CPU % and its
    // cpu.stat periods are set in the output to what a kernel would give,
    // then to wrong ones
    let r = fixture();
    let r = r.to_str().expect("UTF-8 path");
    let t0 = std::time::Instant::now();
    let json = cgtop(&["--root", r, "--json", "-n", "7", "-d", "0.5"]);
    let lim = ChurnLimits {
        cap: Some(CpuCap::parse("/system.slice=20000/100000")),
        ..fixture_limits(0.5, t0, "")
    };
    // per refresh: cgtop's CPU %, and the periods (all throttled) the
    // kernel counted since the refresh before
    let with = |readings: &[(f64, u64)]| -> String {
        let mut out = String::new();
        let mut periods = 1000u64;
        for (k, line) in json.lines().enumerate() {
            let mut doc: serde_json::Value = serde_json::from_str(line).expect("JSON");
            let secs = doc["interval_s"].as_f64().expect("interval_s");
            for g in doc["groups"].as_array_mut().expect("groups") {
                if g["path"] == "/system.slice" {
                    // the periods of a window as long as cgtop's own: a
                    // loaded machine stretches the 0.5 s windows; `dper`
                    // is the count in a 0.5 s window, more or less by what
                    // a wrong count adds
                    let (pct, dper) = readings[k];
                    let kernel = (secs / 0.1).round() as u64;
                    periods += if dper == 0 { 0 } else { kernel + dper - 5 };
                    g["rates"]["cpu_pct"] = pct.into();
                    g["cpu"]["nr_periods"] = periods.into();
                    g["cpu"]["nr_throttled"] = periods.into();
                }
            }
            out.push_str(&doc.to_string());
            out.push('\n');
        }
        assert_eq!(json.lines().count(), readings.len(), "refreshes");
        out
    };
    // at rest: no busy window
    let r1 = std::panic::catch_unwind(|| check_churn(&json, &lim));
    assert!(r1.is_err(), "a capped group that never ran went unnoticed");
    // 0.5 s windows of 5 periods each (the first and last of a busy run
    // are not judged: the group may have been idle in part of them); a
    // window of 0 % then one of 40 % (the kernel crediting time late) does
    // not move the median
    let ok = [
        (0.0, 0),
        (30.0, 5),
        (20.4, 5),
        (0.0, 5),
        (40.0, 5),
        (19.6, 5),
        (5.0, 5),
    ];
    let s = check_churn(&with(&ok), &lim);
    assert!(
        s.contains("4 busy windows") && s.contains("read 0.0-40.0 % (median 20.4)"),
        "{s}"
    );
    // a window 0.3 s longer than cgtop says: the old bug (a walk inside it)
    let mut stretched = ok;
    stretched[3].1 = 8;
    let r2 = std::panic::catch_unwind(|| check_churn(&with(&stretched), &lim));
    assert!(r2.is_err(), "a window off by 0.3 s went unnoticed");
    let high = [
        (0.0, 0),
        (22.0, 5),
        (22.5, 5),
        (21.9, 5),
        (23.0, 5),
        (22.4, 5),
        (22.0, 5),
    ];
    let r3 = std::panic::catch_unwind(|| check_churn(&with(&high), &lim));
    assert!(
        r3.is_err(),
        "a median of 22.5 % under a 20 % cap went unnoticed"
    );
}

#[test]
fn churn_text_check_on_a_fixture() {
    let r = fixture();
    let r = r.to_str().expect("UTF-8 path");
    let t0 = std::time::Instant::now();
    let text = cgtop(&["--root", r, "-b", "--kernel-names", "-n", "4", "-d", "0.1"]);
    let lim = fixture_limits(0.1, t0, "/system.slice/");
    let s = check_churn_text(&text, &lim, 2);
    assert!(s.starts_with("4 refreshes"), "{s}");
    let groups = text
        .lines()
        .find_map(|l| l.split("  ").find_map(|f| f.strip_suffix(" groups")))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .expect("a group count in the header");
    assert!(s.contains(&format!("{} rows", 4 * groups)), "{s}");
    // an absurd CPU % is caught, and so is a row cut by the kill
    let bad = text.replacen("   0.0 ", " 9999.0 ", 1);
    assert_ne!(bad, text);
    let r2 = std::panic::catch_unwind(|| check_churn_text(&bad, &lim, 2));
    assert!(r2.is_err(), "an absurd CPU% went unnoticed");
    let cut = &text[..text.len() - 40];
    let s = check_churn_text(cut, &lim, 2);
    assert!(
        s.starts_with("3 refreshes in") && s.contains("+1 cut"),
        "{s}"
    );
}
