//! Batch output: plain text like `top -b`, or one JSON object per refresh
//! (JSON Lines). No terminal control codes in either.
//!
//! JSON field names and units are documented in README.md ("JSON output").

use crate::cgroupfs::MemoryEvents;
use crate::model::identity::{self, Identity};
use crate::model::time::events::{Event, EventKind};
use crate::model::tree::text::{escape, escape_str};
use crate::model::tree::{RowOptions, Tree};
use crate::model::{
    GroupDetail, GroupRates, GroupSample, HostInfo, HotStats, MountInfo, ScanCost, Unreadable,
};
use crate::options::{Options, Output};
use crate::render::columns::{self, Column, NAME_MIN, NAME_TITLE, STATE_TITLE};
use crate::render::fit::pad;
use crate::render::identity::{JsonIdentity, Name};
use crate::render::marks::StateMarks;
use crate::render::order::Order;
use crate::source::collector::{Collector, CollectorConfig, Refresh};
use crate::source::events::{self as watch, WatchCommand, WatchConfig, Watched};
use crate::source::hier::Hier;
use anyhow::Result;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::time::Duration;

/// One group in the JSON output.
#[derive(serde::Serialize)]
struct JsonGroup<'a> {
    /// "/" for the root, "/system.slice/cron.service" below it.
    path: String,
    inode: u64,
    #[serde(rename = "type")]
    cgroup_type: Option<crate::cgroupfs::CgroupType>,
    /// Who the group is (`render::identity::JsonIdentity`), null where
    /// its name says nothing and nothing was resolved.
    identity: Option<JsonIdentity<'a>>,
    #[serde(flatten)]
    hot: &'a HotStats,
    #[serde(flatten)]
    detail: Option<&'a GroupDetail>,
    rates: &'a GroupRates,
    memory_events_since_start: Option<&'a MemoryEvents>,
    /// Who throttles the group: null when unknown.
    throttling: Option<JsonThrottling>,
    /// Files of the group that are there but were not read, and why (a
    /// FIFO, a symlink, a file over its cap).
    unreadable: Vec<&'a Unreadable>,
}

/// `model::tree::limits::Throttling`, with the throttling group's cpu.max where
/// it was read (not with `--brief`).
#[derive(serde::Serialize)]
struct JsonThrottling {
    throttled: bool,
    /// "/a.slice": the group whose cpu.max throttles; null when not
    /// throttled, or when that group is above the start group.
    by: Option<String>,
    by_cpu_max: Option<crate::cgroupfs::CpuMax>,
    /// Percent of one CPU's window (summed over CPUs, like CPU %).
    pct: Option<f64>,
    source: crate::model::tree::limits::ThrottleSource,
}

impl JsonThrottling {
    fn new(t: &crate::model::tree::limits::Throttling, r: &Refresh) -> Self {
        Self {
            throttled: t.throttled,
            by: t.by.as_ref().map(|g| g.data().to_string()),
            by_cpu_max: t
                .by
                .as_ref()
                .and_then(|b| r.snapshot.find(b)?.detail.as_ref()?.cpu_max),
            pct: t.pct,
            source: t.source,
        }
    }
}

/// One event in the JSON output (README, "JSON output"): the common
/// fields, then those of its kind.
#[derive(serde::Serialize)]
struct JsonEvent {
    /// Seconds since cgtop started, on the refreshes' clock.
    time_s: f64,
    unix_time_s: f64,
    /// Found in the watcher's first reading, against what the first
    /// refresh read: it happened between this time and `time_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    since_time_s: Option<f64>,
    path: String,
    /// `populated`, `frozen`, `memory_<key>`, `swap_<key>`, `pids_max`.
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    populated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frozen: Option<bool>,
    /// How much the counter went up.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    /// An OOM kill's victim, from the kernel's `oom-kill:` line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    /// The victim's name, escaped as every outside text is.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<u32>,
    /// The group whose memory.max was hit ("/a").
    #[serde(skip_serializing_if = "Option::is_none")]
    oom_memcg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_memcg: Option<String>,
}

impl JsonEvent {
    fn new(e: &Event) -> Self {
        let mut j = Self {
            time_s: e.at.as_secs_f64(),
            unix_time_s: e.unix_s,
            since_time_s: e.since.map(|s| s.as_secs_f64()),
            path: e.path.data().to_string(),
            kind: e.kind.name(),
            populated: None,
            frozen: None,
            count: e.kind.count(),
            pid: None,
            task: None,
            uid: None,
            oom_memcg: None,
            task_memcg: None,
        };
        match &e.kind {
            EventKind::Populated(v) => j.populated = Some(*v),
            EventKind::Frozen(v) => j.frozen = Some(*v),
            EventKind::Memory {
                victim: Some(v), ..
            } => {
                j.pid = Some(v.pid);
                j.task = Some(escape(&v.task).into_owned());
                j.uid = v.uid;
                j.oom_memcg = v.oom_memcg.as_ref().map(|g| g.data().to_string());
                j.task_memcg = v.task_memcg.as_ref().map(|g| g.data().to_string());
            }
            EventKind::Memory { .. } | EventKind::Swap { .. } | EventKind::PidsMax { .. } => {}
        }
        j
    }
}

#[derive(serde::Serialize)]
struct JsonRefresh<'a> {
    /// Seconds since cgtop started (monotonic).
    time_s: f64,
    /// The same moment as UNIX time (seconds since 1970, the system clock
    /// at cgtop's start plus `time_s`), to line refreshes up with other logs.
    unix_time_s: f64,
    /// Seconds the rates are computed over.
    interval_s: f64,
    host: &'a str,
    kernel: &'a str,
    ncpus: usize,
    mount: &'a MountInfo,
    cost: JsonCost,
    /// The host's writeback settings, dirty limits and dirty pages, read
    /// once per refresh (`model::host::writeback::WritebackFigures`); null where
    /// the collector was given no /proc to read (a replay).
    writeback: Option<crate::model::host::writeback::WritebackFigures>,
    /// The events the watcher saw since the previous printed refresh.
    events: Vec<JsonEvent>,
    groups: Vec<JsonGroup<'a>>,
}

#[derive(serde::Serialize)]
struct JsonCost {
    wall_ms: f64,
    cpu_ms: f64,
    files_read: u64,
    files_kept: u64,
    fd_limited: bool,
    /// Directories listed this refresh: 0 without a walk, all after cgtop's
    /// own write or the periodic one, the changed subtrees' otherwise.
    dirs_listed: u64,
}

impl From<&ScanCost> for JsonCost {
    fn from(c: &ScanCost) -> Self {
        Self {
            wall_ms: c.wall.as_secs_f64() * 1e3,
            cpu_ms: c.cpu.as_secs_f64() * 1e3,
            files_read: c.files_read,
            files_kept: c.files_kept,
            fd_limited: c.fd_limited,
            dirs_listed: c.dirs_listed,
        }
    }
}

/// Stops the watcher when the run ends, however it ends (a library
/// caller's run must not leave the thread behind).
struct StopOnDrop(watch::WatchHandle);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.send(WatchCommand::Stop);
    }
}

/// A running watcher of a batch run or a recording, its channel, and
/// the watchdog's count of refreshes it has not answered (with whether
/// its end was said).
struct BatchWatcher(
    StopOnDrop,
    std::sync::mpsc::Receiver<Watched>,
    std::cell::Cell<(u32, bool)>,
);

impl BatchWatcher {
    /// Starts the watcher on the refreshes' clock (`clock`, and the UNIX
    /// time at it); `None` when it cannot start (the run goes on without
    /// events, as it does where inotify is missing).
    fn spawn(
        e: BatchEvents,
        clock: std::time::Instant,
        clock_unix: Duration,
        seed: watch::Seed,
    ) -> Option<Self> {
        let (tx, rx) = std::sync::mpsc::channel::<Watched>();
        let cfg = WatchConfig {
            clock,
            clock_unix,
            ..e.cfg
        };
        let h = watch::spawn_seeded(e.hier, cfg, seed, tx).ok()?;
        Some(Self(StopOnDrop(h), rx, std::cell::Cell::new((0, false))))
    }

    /// Gives the watcher `r`'s groups and takes the events seen since
    /// the last call.
    fn drain(&self, r: &Refresh) -> Vec<Event> {
        let paths = r.snapshot.groups.iter().map(|g| g.path.clone()).collect();
        self.0 .0.send(WatchCommand::Groups(paths));
        let mut evs = Vec::new();
        let (mut unanswered, said) = self.2.get();
        unanswered += 1;
        let mut stopped = None;
        loop {
            match self.1.try_recv() {
                Ok(Watched::Events(e)) => evs.extend(e),
                Ok(Watched::Alive) => unanswered = 0,
                Ok(Watched::Status(s)) => stopped = s.stopped.or(stopped),
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    stopped = stopped.or(Some(watch::Stopped::Gone));
                    break;
                }
            }
        }
        // the watchdog: a watcher that ended or stopped answering is said
        // once (stderr: the output stays the refreshes'); the refreshes
        // go on, read by the collector as ever
        let stopped = stopped.or_else(|| {
            (unanswered > watch::WATCHDOG_REFRESHES).then_some(watch::Stopped::Silent(unanswered))
        });
        let said = match stopped {
            Some(why) if !said => {
                eprintln!(
                    "cgtop: events: stopped ({why}); the groups are still read at every refresh"
                );
                true
            }
            _ => said,
        };
        self.2.set((unanswered, said));
        evs
    }
}

/// The event watcher of a batch run: the hierarchy and its settings
/// (its clock is set to the refreshes' when the run starts).
pub struct BatchEvents {
    pub hier: Arc<Hier>,
    pub cfg: WatchConfig,
}

/// Prints `opts.iterations` refreshes (forever without it). A first,
/// unprinted read primes the rate counters ([`Collector::prime`]), so
/// every printed refresh has rates; the first is printed `opts.interval`
/// after the counters were primed.
/// `wait(d)` waits `d` between refreshes and says whether anyone still
/// reads the output (see [`wait_for_reader`]); the run ends quietly when
/// not.
pub fn run(
    out: &mut impl Write,
    cfg: CollectorConfig,
    m: &MountInfo,
    host: &HostInfo,
    opts: &Options,
    wait: impl FnMut(Duration) -> bool,
) -> Result<()> {
    run_collector(out, Collector::new(cfg), m, host, opts, wait)
}

/// [`run`] with a collector made by the caller (over the hierarchy handle
/// that `run::locate` opened).
pub fn run_collector(
    out: &mut impl Write,
    c: Collector,
    m: &MountInfo,
    host: &HostInfo,
    opts: &Options,
    wait: impl FnMut(Duration) -> bool,
) -> Result<()> {
    run_collector_with(out, c, m, host, opts, wait, None)
}

/// [`run_collector`] with the event watcher (`events`): each printed
/// refresh carries the events seen since the previous one (JSON's
/// `events`, `-b`'s event lines). The watcher's channel is drained at
/// each refresh, after the refresh's group list went to it.
pub fn run_collector_with(
    out: &mut impl Write,
    c: Collector,
    m: &MountInfo,
    host: &HostInfo,
    opts: &Options,
    wait: impl FnMut(Duration) -> bool,
    events: Option<BatchEvents>,
) -> Result<()> {
    run_ordered(out, c, (m, host), opts, &Order::default(), wait, events)
}

/// [`run_collector_with`] with `-b`'s rows in `order` (`--sort`,
/// `--reverse`, `--flat`, the settings file's sort); JSON lists its
/// groups parents first by path whatever the order.
pub fn run_ordered(
    out: &mut impl Write,
    mut c: Collector,
    (m, host): (&MountInfo, &HostInfo),
    opts: &Options,
    order: &Order,
    mut wait: impl FnMut(Duration) -> bool,
    events: Option<BatchEvents>,
) -> Result<()> {
    // the collector's clock: batch mode runs the collector in this thread
    let start = crate::source::collector::clock_start();
    // the extra files of the columns printed (JSON prints no columns)
    if opts.output == Output::Text {
        c.set_extras(Column::extras(&opts.columns));
        // the table's CPU% is the whole CPU time: no user/system split
        c.set_cpu_split(false);
        // nor IO operations: READ/s and WRITE/s are bytes
        c.set_io_ops(false);
    }
    let start_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let (mut prev_at, watcher) = if let Some(e) = events {
        // a run that can print events reads everything first: the
        // watcher starts after that refresh, its baseline what the
        // refresh read, so a kill or a freeze before its watches are set
        // (on a slow host, seconds) is an event, not its baseline
        c.set_event_seed(true);
        let first = c.refresh_timed(start);
        let seed = first.events_seed.as_deref().cloned().unwrap_or_default();
        (
            first.snapshot.at,
            BatchWatcher::spawn(e, start, start_unix, seed),
        )
    } else {
        // a one-shot run (no event can be printed): the rates' baseline
        // reads only the counters they are computed from, every other
        // file once, by the printed refresh
        let began = start.elapsed();
        let at = c.prime_timed(start);
        // within the first interval, which counts from the counters'
        // stamp: the other hierarchies' walks and every level figure,
        // read as late as leaves them time, so that after the interval
        // only the rate counters are read, and the levels printed are at
        // most that old. The time left them is twice what the priming
        // read took: they walk the hierarchies it did not and open and
        // read every other file, about twice its work (1,001 groups in 7
        // hierarchies: a 36 ms priming read, 46-64 ms of levels; given
        // the priming read's time alone, they ran past the interval's end
        // and the printed read waited for them)
        let lead = 2 * start.elapsed().saturating_sub(began);
        let since = start.elapsed().saturating_sub(at);
        let early = opts.interval.saturating_sub(since).saturating_sub(lead);
        if !early.is_zero() && !wait(early) {
            return Ok(());
        }
        c.read_levels();
        (at, None)
    };
    let mut n = 0u64;
    let mut c = Some(c);
    while opts.iterations.is_none_or(|max| n < max) {
        let Some(collector) = c.as_mut() else { break };
        // the first interval counts from when the priming read read the
        // counters, so that the first output comes `-d` after them and
        // not after the priming read's own time as well
        let delay = if n == 0 {
            let since = start.elapsed().saturating_sub(prev_at);
            opts.interval.saturating_sub(since)
        } else {
            opts.interval
        };
        if !wait(delay) {
            return Ok(());
        }
        if opts.iterations == Some(n + 1) {
            // each hierarchy's entries go as soon as it is read
            collector.set_last_refresh();
        }
        let r = collector.refresh_timed(start);
        if opts.iterations == Some(n + 1) {
            // the last refresh: what the collector keeps for the next one
            // (the scanners' entries, the rates' baseline, the identities'
            // cache: 8 MB at 10,000 groups) goes before the rows are built,
            // which reuse its memory rather than add to the peak
            if let Some(c) = c.take() {
                c.let_go();
            }
        }
        let interval = r.snapshot.at.saturating_sub(prev_at);
        prev_at = r.snapshot.at;
        // the watcher is given every group; the events printed are the
        // filter's groups'
        let mut evs = watcher.as_ref().map(|w| w.drain(&r)).unwrap_or_default();
        let r = filtered(r, opts.filter.as_deref());
        if opts.filter.is_some() {
            evs.retain(|e| r.snapshot.find(&e.path).is_some());
        }
        let res = match opts.output {
            Output::Json => write_json(out, &r, interval, start_unix, m, host, &evs),
            _ => write_table(
                out,
                &r,
                interval,
                (m, host),
                n,
                (&opts.columns, order),
                &evs,
            ),
        };
        // a closed pipe (`cgtop -b | head`) ends the run quietly
        if let Err(e) = res.and_then(|()| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e.into());
        }
        n += 1;
    }
    Ok(())
}

/// The refresh with only the groups the `/` filter `filter` keeps
/// ([`Tree::filter_samples`]: the matches, their ancestors and
/// subtrees), each group's figures as they were; the refresh itself
/// without a filter.
pub fn filtered(mut r: Refresh, filter: Option<&str>) -> Refresh {
    let Some(f) = filter.filter(|f| !f.is_empty()) else {
        return r;
    };
    let keep = Tree::build(&r.snapshot.groups).filter_samples(f, &r.snapshot.groups);
    r.snapshot.groups = pick(&r.snapshot.groups, &keep);
    r.rates = pick(&r.rates, &keep);
    r.throttling = pick(&r.throttling, &keep);
    r.limits = pick(&r.limits, &keep);
    let kept: std::collections::HashSet<&crate::model::GroupPath> =
        r.snapshot.groups.iter().map(|g| &g.path).collect();
    let events = std::mem::take(&mut r.events_since_start);
    r.events_since_start = events
        .into_iter()
        .filter(|(p, _)| kept.contains(p))
        .collect();
    r
}

/// The items of `v` at the indexes `keep`, in that order.
fn pick<T: Clone>(v: &[T], keep: &[usize]) -> Vec<T> {
    keep.iter().filter_map(|&i| v.get(i).cloned()).collect()
}

/// Waits `delay`, or less if stdout's reader goes away meanwhile (`cgtop
/// -b | head -1`: head has its line and exits); false then. A pipe whose
/// reader closed reports POLLERR on its write end, a hung-up tty POLLHUP;
/// a file or /dev/null reports neither, and the wait is the full delay.
///
/// The run then ends with status 0 and no message, as on a write to the
/// closed pipe (EPIPE): the reader stopped because it had what it wanted,
/// and `set -o pipefail` scripts must not fail on that. (Tools that keep
/// SIGPIPE's default die of it, status 141; Rust ignores SIGPIPE, and an
/// exit status is clearer than a signal here.)
pub fn wait_for_reader(delay: Duration) -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let until = std::time::Instant::now() + delay;
    let stdout = std::io::stdout();
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return true;
        }
        let timeout = rustix::time::Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        // no events asked for: POLLERR, POLLHUP and POLLNVAL always come
        let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {}
            Ok(_) => return false,
            // poll itself failed (it should not): wait as before
            Err(_) => {
                std::thread::sleep(left);
                return true;
            }
        }
    }
}

/// The widest name column `-b` makes: a deeper name is cut ('…') rather
/// than push every figure off a terminal-wide line.
const NAME_MAX: usize = 96;

/// JSON's `path`: data, a space as it is (`GroupPath::data`).
fn path_text(g: &GroupSample) -> String {
    g.path.data().to_string()
}

pub fn write_json(
    out: &mut impl Write,
    r: &Refresh,
    interval: Duration,
    start_unix: Duration,
    m: &MountInfo,
    host: &HostInfo,
    events: &[Event],
) -> std::io::Result<()> {
    // each group's identity, borrowed where resolved, else from its name
    let identities: Vec<Option<std::borrow::Cow<'_, Identity>>> =
        r.snapshot.groups.iter().map(identity::of_group).collect();
    let groups = r
        .snapshot
        .groups
        .iter()
        .zip(&r.rates)
        .enumerate()
        .map(|(i, (g, rates))| JsonGroup {
            path: path_text(g),
            inode: g.inode,
            cgroup_type: g.cgroup_type,
            identity: identities[i].as_deref().map(JsonIdentity::new),
            hot: &g.hot,
            detail: g.detail.as_deref(),
            rates,
            memory_events_since_start: r.events_since_start.get(&g.path),
            throttling: r
                .throttling
                .get(i)
                .and_then(Option::as_ref)
                .map(|t| JsonThrottling::new(t, r)),
            unreadable: g
                .hot
                .unreadable
                .iter()
                .chain(g.detail.iter().flat_map(|d| &d.unreadable))
                .collect(),
        })
        .collect();
    let doc = JsonRefresh {
        time_s: r.snapshot.at.as_secs_f64(),
        unix_time_s: (start_unix + r.snapshot.at).as_secs_f64(),
        interval_s: interval.as_secs_f64(),
        host: &host.hostname,
        kernel: &host.kernel,
        ncpus: host.ncpus,
        mount: m,
        cost: JsonCost::from(&r.snapshot.cost),
        writeback: r.machine.and_then(|m| m.writeback).map(|w| w.figures()),
        events: events.iter().map(JsonEvent::new).collect(),
        groups,
    };
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

/// [`write_text_events`] with the default columns and no events.
pub fn write_text(
    out: &mut impl Write,
    r: &Refresh,
    interval: Duration,
    m: &MountInfo,
    host: &HostInfo,
    n: u64,
) -> std::io::Result<()> {
    write_text_events(out, r, interval, m, host, n, &Column::DEFAULT, &[])
}

/// One refresh as plain text, with the figure columns `cols` (all of
/// them, however wide: a pipe has no width), and the events seen since
/// the previous refresh: one line each (`render::events::batch_line`)
/// after the refresh's summary line, and `!` in the state column of
/// their groups.
#[allow(clippy::too_many_arguments)]
pub fn write_text_events(
    out: &mut impl Write,
    r: &Refresh,
    interval: Duration,
    m: &MountInfo,
    host: &HostInfo,
    n: u64,
    cols: &[Column],
    events: &[Event],
) -> std::io::Result<()> {
    let order = Order::default();
    write_table(out, r, interval, (m, host), n, (cols, &order), events)
}

/// [`write_text_events`] with the rows in `order`: the tree with each
/// group's children sorted (CPU, highest first, by default, as the view
/// sorts), or every group in one list with its whole path (`--flat`).
pub fn write_table(
    out: &mut impl Write,
    r: &Refresh,
    interval: Duration,
    (m, host): (&MountInfo, &HostInfo),
    n: u64,
    (cols, order): (&[Column], &Order),
    events: &[Event],
) -> std::io::Result<()> {
    let cols = &Column::in_order(cols);
    let s = &r.snapshot;
    writeln!(
        out,
        "cgtop - refresh {} at {:.1} s  {}  {}  {} {} ({})  {} groups  interval {:.1} s  cost {:.1} ms cpu, {} files",
        n + 1,
        s.at.as_secs_f64(),
        escape_str(&host.hostname),
        escape_str(&host.kernel),
        crate::render::mount::root_kind(&m.mode),
        escape(m.root.as_os_str().as_bytes()),
        crate::render::mount::mode_forms(&m.mode)
            .first()
            .map_or("", String::as_str),
        s.groups.len(),
        interval.as_secs_f64(),
        s.cost.cpu.as_secs_f64() * 1e3,
        s.cost.files_read
    )?;
    for e in events {
        writeln!(out, "{}", crate::render::events::batch_line(e))?;
    }
    let marked: std::collections::HashSet<&crate::model::GroupPath> =
        events.iter().map(|e| &e.path).collect();
    let tree = Tree::build(&s.groups);
    let rows = order.rows(&tree, &s.groups, &r.rates, &RowOptions::default());
    // the start group, first by path: a flat list's cut path keeps the
    // first component below it
    let start = s
        .groups
        .first()
        .map_or_else(String::new, |g| g.path.to_string());
    // who each group is where known, as the view shows it by default
    let names: Vec<(usize, Name)> = rows
        .iter()
        .map(|row| {
            let g = &s.groups[tree.nodes[row.node].sample];
            // two spaces a level: plain text has no tree guides
            // the flat list names rows by their whole paths
            let who = order.identities && !order.flat;
            (row.depth, Name::of(g, row.depth, who))
        })
        .collect();
    // the name column fits the longest name (within reason), so columns align
    let w = names
        .iter()
        .map(|(depth, n)| 2 * depth + n.width())
        .max()
        .unwrap_or(0)
        .clamp(NAME_MIN, NAME_MAX);
    // a row deeper than the column leaves out its leftmost levels
    // (`columns::indent_cut`)
    let names = names.into_iter().map(|(depth, n)| {
        let (skip, mut indent) = columns::indent_cut(depth, 2, 0, depth, w);
        indent.push_str(&"  ".repeat(depth - skip));
        (indent, n)
    });
    writeln!(
        out,
        "{NAME_TITLE:<w$}{} {STATE_TITLE}",
        columns::header_cells(cols, |_| "")
    )?;
    for (row, (indent, name)) in rows.iter().zip(names) {
        let i = tree.nodes[row.node].sample;
        let (g, rt) = (&s.groups[i], &r.rates[i]);
        let throttled = r
            .throttling
            .get(i)
            .is_some_and(|t| t.as_ref().is_some_and(|t| t.throttled));
        // padded by display columns: a wide character takes two
        // a flat list's whole path is cut from the left: its end names
        // the group; an identity drops whole components
        let name = format!(
            "{indent}{}",
            name.fit(
                w.saturating_sub(crate::render::fit::width(&indent)),
                order.flat.then_some(start.as_str())
            )
        );
        writeln!(
            out,
            "{}{} {}",
            pad(&name, w),
            // CPU % of one core: `-b` has never applied --machine-cpu
            columns::cells(cols, g, rt, |p| p),
            StateMarks::of(g, throttled).with_event(marked.contains(&g.path)),
        )?;
    }
    writeln!(out)
}

/// One refresh as `-b` (`Output::Text`) or `--json` prints it; nothing
/// for `Output::Tui`. `n` counts the refreshes printed before.
#[allow(clippy::too_many_arguments)]
pub fn print_refresh(
    out: &mut impl Write,
    output: Output,
    r: &Refresh,
    interval: Duration,
    header: &crate::model::time::record::Header,
    n: u64,
    (cols, order): (&[Column], &Order),
    events: &[Event],
) -> std::io::Result<()> {
    match output {
        Output::Json => write_json(
            out,
            r,
            interval,
            header.start_unix,
            &header.mount,
            &header.host,
            events,
        ),
        Output::Text => write_table(
            out,
            r,
            interval,
            (&header.mount, &header.host),
            n,
            (cols, order),
            events,
        ),
        Output::Tui => Ok(()),
    }
}

/// `cgtop record`: every refresh goes into `rec` (with the processes of
/// the busiest groups, when `busy` is given), and the refreshes after
/// the first are printed as `-b` or `--json` would print them live when
/// `opts.output` asks. `refresh` makes a refresh (the live clock, or a
/// test's); `wait(d)` waits between refreshes and says whether to go on
/// (false on SIGTERM or SIGINT). Returns the refreshes recorded.
#[allow(clippy::too_many_arguments)]
pub fn record(
    out: &mut impl Write,
    c: &mut Collector,
    rec: &mut crate::source::record::Recorder,
    busy: Option<&mut crate::source::record::BusyReader>,
    header: &crate::model::time::record::Header,
    opts: &Options,
    refresh: impl FnMut(&mut Collector) -> Refresh,
    wait: impl FnMut(Duration) -> bool,
) -> Result<u64> {
    record_with(
        out,
        c,
        rec,
        busy,
        header,
        (opts, &Order::default()),
        refresh,
        wait,
        None,
    )
}

/// [`record`] with the event watcher: the events seen before each
/// refresh are recorded with it and printed with it, as `--json` and
/// `-b` print them live. `events` carries the clock the refreshes are
/// taken on (`clock`, the run's start); `order` orders -b's rows
/// (`record --sort`, `--reverse`, `--flat`; the recording is the same).
#[allow(clippy::too_many_arguments)]
pub fn record_with(
    out: &mut impl Write,
    c: &mut Collector,
    rec: &mut crate::source::record::Recorder,
    mut busy: Option<&mut crate::source::record::BusyReader>,
    header: &crate::model::time::record::Header,
    (opts, order): (&Options, &Order),
    mut refresh: impl FnMut(&mut Collector) -> Refresh,
    mut wait: impl FnMut(Duration) -> bool,
    events: Option<(BatchEvents, std::time::Instant)>,
) -> Result<u64> {
    use crate::source::record::Written;
    let watcher = events.and_then(|(e, clock)| {
        BatchWatcher::spawn(e, clock, header.start_unix, watch::Seed::default())
    });
    let drain = |r: &Refresh| watcher.as_ref().map(|w| w.drain(r)).unwrap_or_default();
    let filter = opts.filter.as_deref();
    let first = filtered(refresh(c), filter);
    let mut prev_at = first.snapshot.at;
    let b = busy
        .as_deref_mut()
        .map(|b| b.read(&first))
        .unwrap_or_default();
    if rec.write_with_events(&first, &b, &drain(&first))? == Written::Full {
        return Ok(1);
    }
    let mut n = 0u64;
    while opts.iterations.is_none_or(|max| n < max) {
        if !wait(opts.interval) {
            break;
        }
        let r = filtered(refresh(c), filter);
        let b = busy.as_deref_mut().map(|b| b.read(&r)).unwrap_or_default();
        let evs = drain(&r);
        if rec.write_with_events(&r, &b, &evs)? == Written::Full {
            break;
        }
        let interval = r.snapshot.at.saturating_sub(prev_at);
        prev_at = r.snapshot.at;
        let res = print_refresh(
            out,
            opts.output,
            &r,
            interval,
            header,
            n,
            (&opts.columns, order),
            &evs,
        )
        .and_then(|()| out.flush());
        if let Err(e) = res {
            // a closed pipe stops the printing, not the recording
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(e.into());
            }
        }
        n += 1;
    }
    Ok(n + 1)
}

/// `cgtop replay FILE -b` / `--json`: the recorded refreshes after each
/// run's first, printed as the live run printed them (`output`), at most
/// `iterations`.
pub fn replay(
    out: &mut impl Write,
    replay: &mut crate::source::record::Replay,
    output: Output,
    iterations: Option<u64>,
    cols: &[Column],
) -> std::io::Result<u64> {
    replay_ordered(out, replay, output, iterations, (cols, &Order::default()))
}

/// [`replay`] with -b's rows in `order` (`replay --sort`, `--reverse`,
/// `--flat`, as the live `-b` takes them).
pub fn replay_ordered(
    out: &mut impl Write,
    replay: &mut crate::source::record::Replay,
    output: Output,
    iterations: Option<u64>,
    (cols, order): (&[Column], &Order),
) -> std::io::Result<u64> {
    let mut n = 0u64;
    while iterations.is_none_or(|max| n < max) {
        let Some(r) = replay.next() else { break };
        if r.first {
            continue;
        }
        let res = print_refresh(
            out,
            output,
            &r.refresh,
            r.interval,
            replay.run_header(),
            n,
            (cols, order),
            &r.events,
        );
        if let Err(e) = res {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(n);
            }
            return Err(e);
        }
        n += 1;
    }
    out.flush()?;
    Ok(n)
}
