//! Wiring: the command line's choices become a collector, threads and the
//! main loop (TUI), or a loop that prints (batch, JSON).

use crate::app::writes::WriteRequest;
use crate::app::{self, App, Effect, MouseAction, Msg, ReadOnly};
use crate::batch;
use crate::model::WriteOutcome;
use crate::model::{GroupPath, HostInfo, MountInfo, Op};
use crate::options::{Options, Output, ViewSettings};
use crate::source::actionlog::ActionLog;
use crate::source::collector::{self, Collected, Collector, CollectorConfig, Command};
use crate::source::events::{self as watch, WatchCommand, WatchConfig, WatchHandle};
use crate::source::hier::{self, Hier, Hiers};
use crate::source::mount;
use crate::source::safety;
use crate::source::scan::ScanConfig;
use crate::ui::{self, Theme};
use anyhow::{Context, Result};
use ratatui::backend::Backend;
use ratatui::Terminal;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::SystemTime;
use std::time::{Duration, Instant};

pub mod serve;

/// A failure that maps to exit code 2: no usable hierarchy.
#[derive(Debug)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// Finds the hierarchies: `--root` or every cgroup mount from mountinfo
/// (`model::host::layout`), each opened once as a directory descriptor (every
/// later open is beneath it). Returns the primary hierarchy's mount and
/// handle (the tree's backbone) and all of them.
pub fn locate(opts: &Options) -> Result<(MountInfo, Arc<Hier>, Arc<Hiers>), SetupError> {
    let (m, hier, layout) = match &opts.root {
        Some(dir) => mount::check_root(dir),
        None => mount::discover_layout().and_then(|layout| {
            let m = layout.mount_info().ok_or(mount::MountError::NoCgroup)?;
            let h = mount::open_discovered(&m)?;
            Ok((m, h, layout))
        }),
    }
    .map_err(|e| SetupError(e.to_string()))?;
    let procs = hier::file_rel(&opts.start, crate::cgroupfs::files::PROCS);
    if let Err(e) = hier.is_file(&procs) {
        let why = if e.is_absent() {
            "no such group".to_owned()
        } else {
            format!("not a group ({e})")
        };
        return Err(SetupError(format!(
            "{}: {why} under {} (give a path relative to the hierarchy, like system.slice)",
            opts.start,
            mount::path_text(&m.root)
        )));
    }
    let hier = Arc::new(hier);
    let hiers = if layout.v1.is_empty() {
        Hiers::single(Arc::clone(&hier))
    } else {
        Hiers::open(layout)
    };
    Ok((m, hier, Arc::new(hiers)))
}

pub fn host_info() -> HostInfo {
    let u = rustix::system::uname();
    HostInfo {
        hostname: u.nodename().to_string_lossy().into_owned(),
        kernel: u.release().to_string_lossy().into_owned(),
        // all the machine's CPUs, as the root group's counters count them
        ncpus: collector::online_cpus(),
        swap_total: crate::source::scan::swap_total(),
    }
}

pub fn collector_config(opts: &Options, m: &MountInfo, full_detail: bool) -> CollectorConfig {
    CollectorConfig {
        root: m.root.clone(),
        start: opts.start.clone(),
        scan: ScanConfig {
            max_depth: opts.depth,
            max_kept: opts.max_kept_fds.unwrap_or(ScanConfig::default().max_kept),
            ..ScanConfig::default()
        },
        full_detail,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    }
}

/// The event watcher's settings for the view: its start group and depth,
/// /dev/kmsg, and kmsg's paths mapped to the view as /proc/PID/cgroup's
/// are (`guard::view_mapping`); the clock is set where it starts.
pub fn watch_config(opts: &Options, m: &MountInfo, hiers: &Hiers) -> WatchConfig {
    let mounts = mount::read_mountinfo().unwrap_or_default();
    // v1's OOM kills: the memory hierarchy's notification, kmsg's paths
    // from that hierarchy's root (the mount's root within it)
    let v1_memory = hiers
        .holder("memory")
        .filter(|(id, _)| matches!(id, crate::model::host::layout::HierId::V1(_)))
        .map(|(_, h)| {
            let mapping = mounts
                .iter()
                .find(|e| e.fs_type == "cgroup" && e.mount_point == h.path())
                .and_then(|e| {
                    use std::os::unix::ffi::OsStrExt;
                    crate::model::GroupPath::parse(e.root.as_os_str().as_bytes()).ok()
                })
                .map(|root| (root, crate::model::GroupPath::root()));
            (Arc::clone(h), mapping)
        });
    WatchConfig {
        v1_memory,
        start: opts.start.clone(),
        max_depth: opts.depth,
        // a share of root's watches, not all of them (systemd's too)
        max_watches: watch::host_watch_budget(),
        kmsg: Some(PathBuf::from("/dev/kmsg")),
        mapping: crate::model::write::guard::view_mapping(&mounts, &m.root),
        clock: collector::clock_start(),
        clock_unix: Duration::ZERO,
    }
}

/// Starts the event watcher for the TUI on the collector's clock; its
/// events reach the main loop as `Msg::Events`. An error when it cannot
/// run (no eventfd or thread to be had): the TUI then works without events.
fn spawn_watcher(
    opts: &Options,
    m: &MountInfo,
    (hier, hiers): (&Arc<Hier>, &Hiers),
    (clock, clock_unix): (Instant, Duration),
    seed: watch::Seed,
    tx: Sender<Msg>,
) -> Result<WatchHandle, crate::model::Errno> {
    let mut cfg = watch_config(opts, m, hiers);
    cfg.clock = clock;
    cfg.clock_unix = clock_unix;
    watch::spawn_seeded(Arc::clone(hier), cfg, seed, tx)
        .map_err(|e| crate::model::write::errno::of_io(&e))
}

/// Runs cgtop as asked. Errors that are a [`SetupError`] mean exit code 2.
/// `Ok(Some(sig))`: the TUI ended on signal `sig` (or on a hung-up
/// terminal, SIGHUP), after the normal teardown; exit 128 + `sig`.
pub fn run(opts: &Options) -> Result<Option<i32>> {
    run_with(opts, &ViewSettings::default())
}

/// [`run`] with the settings file's view settings (the full-screen view's
/// first sort, colours, where the column chooser saves).
pub fn run_with(opts: &Options, view: &ViewSettings) -> Result<Option<i32>> {
    let (m, hier, hiers) = locate(opts)?;
    let place = match view.pid {
        Some(pid) => Some(pid_place(opts, &hier, pid)?),
        None => None,
    };
    match opts.output {
        Output::Tui => run_tui(opts, view, place, &m, &hier, &hiers),
        Output::Text | Output::Json => {
            // --pid: that group alone, as if given as GROUP (with --depth:
            // that many levels below it)
            let mut at_pid;
            let opts = match place {
                Some(p) => {
                    at_pid = opts.clone();
                    at_pid.start = p.group;
                    at_pid.depth = opts.depth.or(Some(0));
                    &at_pid
                }
                None => opts,
            };
            let full_detail = opts.output == Output::Json && !opts.brief;
            let cfg = collector_config(opts, &m, full_detail);
            // one write(2) per 64 KiB, not per line (stdout alone is
            // line-buffered: 10,000 writes a refresh at 10,000 groups);
            // batch::run flushes after each refresh
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let mut c = Collector::with_hiers(cfg, Arc::clone(&hier), &hiers);
            // one printed refresh (`-n 1`) can show no event: such a run
            // sets no watch at all, neither the event watcher's nor the
            // v1 scanners' (thousands of inotify_add_watch for nothing)
            let once = opts.iterations.is_some_and(|n| n <= 1);
            // nor keeps an identity a unit's name gives: each is made
            // from the name where printed (`identity::of_group`)
            let mut who = identity_resolver(&hier);
            who.set_name_only_units(once);
            c.set_identities(Some(who));
            // a batch run writes nothing: no group's inode in each v1
            // hierarchy (what a confirmed write is held to) is kept
            c.set_hier_inodes(false);
            if opts.output == Output::Json {
                // JSON's `writeback`: the host's dirty settings and limits
                c.set_proc_dir(Some(PathBuf::from("/proc")));
            }
            // memory.events since start: in the full JSON only
            c.set_events_baseline(full_detail);
            if once {
                c.set_watching(false);
            }
            let events = (!once).then(|| batch::BatchEvents {
                cfg: watch_config(opts, &m, &hiers),
                hier,
            });
            batch::run_ordered(
                &mut out,
                c,
                (&m, &host_info()),
                opts,
                &view.order(),
                batch::wait_for_reader,
                events,
            )?;
            Ok(None)
        }
    }
}

/// The identity resolver of a run on `hier` (`source::identity`): the
/// host's runtime and systemd files, or the test tree
/// `CGTOP_IDENTITY_ROOT` names; units' descriptions only where the view is
/// the hierarchy's root (its paths are systemd's).
pub fn identity_resolver(hier: &Hier) -> crate::source::identity::Resolver {
    use crate::source::identity::{Resolver, Roots};
    Resolver::new(Roots::from_env(hier.is_hierarchy_root()))
}

/// `--pid`: the group that holds process `pid`, read from /proc and
/// mapped to the view, within the start group (and, in the full-screen
/// view, within --depth of it); a [`SetupError`] (exit 2, one line) when
/// it cannot apply.
fn pid_place(
    opts: &Options,
    hier: &Hier,
    pid: u32,
) -> Result<crate::source::procs::ProcessPlace, SetupError> {
    use crate::source::procs;
    let proc = Hier::open_lenient(std::path::Path::new("/proc"));
    let map = procs::ViewMap::of(hier);
    let p = procs::place_of_pid(&proc, map.as_ref(), pid)
        .map_err(|e| SetupError(format!("--pid {pid}: {e}")))?;
    let Some(below) = p.group.strip_prefix(&opts.start) else {
        return Err(SetupError(format!(
            "--pid {pid}: its group {} is outside {}, where the view starts",
            p.group, opts.start
        )));
    };
    let levels = below.components().count();
    match opts.depth {
        Some(d) if opts.output == Output::Tui && levels > d => Err(SetupError(format!(
            "--pid {pid}: its group {} is {levels} levels below {}, deeper than --depth {d}",
            p.group, opts.start
        ))),
        _ => Ok(p),
    }
}

/// Whether the user can write to the hierarchy; `None` when they can,
/// else why not.
pub fn write_access(hier: &Hier, start: &GroupPath, read_only_flag: bool) -> Option<ReadOnly> {
    if read_only_flag {
        return Some(ReadOnly::Flag);
    }
    if !hier.is_cgroup2() && !hier.is_cgroup1() {
        // a plain directory is not cgroupfs: a write would not mean anything
        // (the writer refuses it too: source::hier writes only on cgroupfs)
        return Some(ReadOnly::PlainDirectory);
    }
    let probe = hier::file_rel(start, crate::cgroupfs::files::PROCS);
    (!hier.can_write(&probe)).then_some(ReadOnly::NoPermission)
}

fn run_tui(
    opts: &Options,
    view: &ViewSettings,
    place: Option<crate::source::procs::ProcessPlace>,
    m: &MountInfo,
    hier: &Arc<Hier>,
    hiers: &Arc<Hiers>,
) -> Result<Option<i32>> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
    let cfg = collector_config(opts, m, false);
    let mut app = App::new(host_info(), m.clone(), opts.start.clone(), opts.interval);
    if let Some(f) = &opts.filter {
        // --filter: the view starts with it as its / filter (Esc clears it)
        app.filter = crate::app::text_input::TextInput::with_text(
            crate::app::text_input::TextInput::LINE,
            f,
        );
    }
    // which hierarchy holds each controller: the writes go there
    app.layout = hiers.layout.clone();
    // a view below its hierarchy's root (--root on a delegated subtree)
    // never names a systemd unit: its paths are not systemd's
    app.systemd = if hier.is_hierarchy_root() {
        crate::source::systemctl::Systemctl::system().presence()
    } else {
        crate::model::write::systemd::Presence::BelowRoot
    };
    app.read_only = write_access(hier, &opts.start, opts.read_only);
    app.cpu_machine = opts.machine_cpu;
    app.columns = crate::render::columns::Column::in_order(&opts.columns);
    app.config_file.clone_from(&view.config_file);
    let order = view.order();
    app.sort = app::SortKey::from_by(order.by);
    app.sort_desc = order.descending;
    app.flat = order.flat;
    app.identities = order.identities;
    if let Some(depth) = opts.depth {
        app.status = Some(app::Status {
            level: app::Level::Info,
            text: format!("showing {depth} levels below {}", opts.start),
        });
    }
    if let Some(note) = &view.notice {
        app.status = Some(app::Status {
            level: app::Level::Warn,
            text: note.clone(),
        });
    }
    let at_pid = place.is_some();
    if let Some(p) = place {
        app.start_at_process(p);
    }
    let theme = Theme::from_settings(std::env::var("NO_COLOR").ok().as_deref(), &view.colours);
    app.page_size = procfs::page_size();
    let mut collector = Collector::with_hiers(cfg, Arc::clone(hier), hiers);
    // the files of the columns shown, from the first refresh
    collector.set_extras(crate::render::columns::Column::extras(&app.columns));
    // the header's meters: the machine's memory and pressure
    collector.set_proc_dir(Some(PathBuf::from("/proc")));
    // every group's limits, to colour its figures by how near they are
    collector.set_grade_limits(true);
    // who each group is, filled in after the first frame
    collector.set_identities(Some(identity_resolver(hier)));
    // the first frame first: the first refresh reads the tree and its
    // level figures only (no v1 directory watch, no machine figures)
    collector.defer_start_up();
    // its event counters for the watcher, which starts later
    collector.set_event_seed(true);
    // on a large tree, the first frame before the first refresh: the
    // groups the first screen shows, read alone. Not for the flat list
    // nor a filter (their first screen is every group, or any group), nor
    // --pid (its group may be deep in a subtree the look leaves folded)
    collector.set_first_look(!app.flat && app.filter.is_empty() && !at_pid);
    // one clock for the collector and the event watcher; its zero as
    // UNIX time, for the history's clock times and the events'
    let clock = collector::clock_start();
    app.unix_base = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    // each refresh's group list goes to the watcher on its way to the
    // main loop: groups it missed are watched, those gone forgotten
    let (col_tx, col_rx) = mpsc::channel::<Collected>();
    collector::spawn_from(collector, clock, opts.interval, col_tx, cmd_rx)
        .context("starting the collector thread")?;
    // what the lockout guard protects (every /proc/PID/stat read): once
    // the collector is at work, not before it (the first frame does not
    // need it; the first write does, and comes later)
    app.protected = safety::discover(&m.root);
    // the event watcher starts once the first rates went to the screen:
    // its walk and its thousands of inotify_add_watch are off the path of
    // the first frame (the groups it misses are in the next group list)
    let watcher = Arc::new(std::sync::Mutex::new(LateWatcher::default()));
    let start_watcher = {
        let (opts, m, hier, hiers) = (opts.clone(), m.clone(), Arc::clone(hier), Arc::clone(hiers));
        let (tx, unix_base) = (tx.clone(), app.unix_base);
        move |seed| spawn_watcher(&opts, &m, (&hier, &hiers), (clock, unix_base), seed, tx)
    };
    let to_main = tx.clone();
    let slot = Arc::clone(&watcher);
    std::thread::Builder::new()
        .name("refreshes".into())
        .spawn(move || {
            let mut start_watcher = Some(start_watcher);
            let mut refreshes = 0u32;
            let mut feed: Option<WatchHandle> = None;
            // what the first refresh read of the event counters: the
            // watcher, started later, diffs its baseline with them, so
            // that a freeze, thaw or OOM kill in between is an event
            let mut seed = None;
            for c in col_rx {
                let is_refresh = matches!(c, Collected::Refresh(_));
                if let (Collected::Refresh(r), None) = (&c, &seed) {
                    seed = r.events_seed.as_deref().cloned();
                }
                if let (Collected::Refresh(r), Some(w)) = (&c, &feed) {
                    let paths = r.snapshot.groups.iter().map(|g| g.path.clone()).collect();
                    w.send(WatchCommand::Groups(paths));
                }
                if to_main.send(Msg::from(c)).is_err() {
                    return;
                }
                refreshes += u32::from(is_refresh);
                if refreshes >= WATCH_AFTER_REFRESHES {
                    if let Some(start) = start_watcher.take() {
                        let seed = seed.take().unwrap_or_default();
                        feed = LateWatcher::start(&slot, || start(seed), &to_main);
                    }
                }
            }
        })
        .context("starting the refresh thread")?;
    let log = ActionLog::from_env();
    app.log_place = Some(log.place().clone());
    let (writer_tx, writer_ended) = spawn_writer_ending(Arc::clone(hiers), log, tx.clone())
        .context("starting the writer thread")?;
    let outlets = Outlets {
        collector: cmd_tx,
        writer: writer_tx,
    };
    let res = on_terminal(&mut app, &theme, tx, &rx, &outlets, opts.mouse);
    LateWatcher::stop(&watcher);
    // a write asked for just before the quit is finished and logged
    // (the terminal is restored already), within a bound: a write the
    // kernel holds up does not hold the exit for ever
    drop(outlets);
    let _ = writer_ended.recv_timeout(WRITER_AT_EXIT);
    res
}

/// How long quitting waits for the writer thread to finish what it was
/// asked ([`spawn_writer_ending`]).
const WRITER_AT_EXIT: Duration = Duration::from_secs(3);

/// The TUI's event watcher starts after this many refreshes: once the
/// first frame and the first rates are on screen.
const WATCH_AFTER_REFRESHES: u32 = 2;

/// The TUI's event watcher, started late (after the first rates): its
/// handle, to stop it when the TUI ends, and whether it ended already
/// (a watcher is then not started at all).
#[derive(Default)]
struct LateWatcher {
    handle: Option<WatchHandle>,
    ended: bool,
}

impl LateWatcher {
    /// Starts the watcher unless the TUI ended; where it cannot start
    /// (no eventfd or thread to be had), the header says events are not
    /// watched.
    fn start(
        slot: &std::sync::Mutex<Self>,
        start: impl FnOnce() -> Result<WatchHandle, crate::model::Errno>,
        to_main: &Sender<Msg>,
    ) -> Option<WatchHandle> {
        let mut s = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if s.ended {
            return None;
        }
        match start() {
            Ok(h) => s.handle = Some(h),
            Err(e) => {
                let _ = to_main.send(Msg::EventWatch(watch::WatchStatus {
                    stopped: Some(watch::Stopped::Start(e)),
                    ..watch::WatchStatus::default()
                }));
            }
        }
        s.handle.clone()
    }

    fn stop(slot: &std::sync::Mutex<Self>) {
        let mut s = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.ended = true;
        if let Some(w) = s.handle.take() {
            w.send(WatchCommand::Stop);
        }
    }
}

/// Takes the terminal, runs the main loop until quit, and gives the
/// terminal back: the part the live view and the replay share.
fn on_terminal(
    app: &mut App,
    theme: &Theme,
    tx: Sender<Msg>,
    rx: &Receiver<Msg>,
    outlets: &Outlets,
    mouse: bool,
) -> Result<Option<i32>> {
    crate::term::spawn_signals(tx.clone()).context("installing signal handlers")?;
    let guard = crate::term::TerminalGuard::enter(mouse).context("setting up the terminal")?;
    crate::term::spawn_input(tx).context("starting the input thread")?;
    // never crossterm's own size query: see term::TtyBackend
    let mut terminal = Terminal::new(crate::term::TtyBackend::new())?;
    let size = terminal.size()?;
    app::update(
        app,
        Msg::Resized {
            width: size.width,
            height: size.height,
            tree_rows: ui::tree_rows_for(size.width, size.height),
        },
    );
    let res = event_loop_on(&mut terminal, app, theme, rx, outlets, &mut RealTty);
    let _ = outlets.collector.send(Command::Stop);
    drop(guard);
    drop(terminal);
    match res {
        Ok(()) => Ok(app.exit_signal),
        // a frame that could not be drawn because the tty hung up is the
        // hang-up's end, not an error to print (there is nowhere to print)
        Err(_) if !crate::term::tty_alive() => Ok(Some(signal_hook::consts::SIGHUP)),
        Err(e) => Err(e),
    }
}

/// The most bytes of history a replay gives its every-refresh tier (the
/// live view's hour of 10,000 groups takes about 32 MB).
const REPLAY_HISTORY_BYTES: usize = 64 << 20;

/// The tiers of a replay's history: every refresh of `samples`, then one
/// a minute for a day, each tier within [`REPLAY_HISTORY_BYTES`] at
/// `widest` groups (at 10,000 groups, about 6 hours of minutes), and at
/// least the live view's [`crate::model::time::timeline::TIER_LEN`]. A recording
/// of 200,000 groups (the format's cap) would otherwise give the minute
/// tier 5 GB.
pub fn replay_tiers(samples: usize, widest: usize) -> [crate::model::time::timeline::TierSpec; 2] {
    use crate::model::time::timeline::{TierSpec, TIER_LEN};
    let entry = std::mem::size_of::<crate::model::time::timeline::Entry>();
    let fits = REPLAY_HISTORY_BYTES / (entry * widest.max(1));
    [
        TierSpec {
            every: None,
            len: samples.min(fits).max(TIER_LEN),
        },
        TierSpec {
            every: Some(Duration::from_secs(60)),
            len: (24 * 60).min(fits).max(TIER_LEN),
        },
    ]
}

/// `cgtop replay FILE` on a terminal: the TUI over a recording, read-only.
/// Every refresh goes into the timeline (so `T`, `t` and `@` walk the
/// whole recording, each refresh kept as long as 64 MB allow, older
/// ones a minute apart); the screen opens at the last. The recording is
/// read twice: once to size the history, once to load it (up to what the
/// first reading saw: a recorder may still be adding to the file).
pub fn run_replay_tui(file: &std::path::Path) -> Result<Option<i32>> {
    run_replay_tui_with(file, &crate::model::files::config::Colours::default())
}

/// [`run_replay_tui`] in the settings file's colours.
pub fn run_replay_tui_with(
    file: &std::path::Path,
    colours: &crate::model::files::config::Colours,
) -> Result<Option<i32>> {
    use crate::model::time::timeline::Timeline;
    use crate::source::record::Replay;
    let open = || Replay::open(file).map_err(|e| SetupError(format!("replay: {e}")));
    let (mut samples, mut widest) = (0usize, 0usize);
    for r in open()? {
        samples += 1;
        widest = widest.max(r.refresh.snapshot.groups.len());
    }
    let mut replay = open()?;
    let h = replay.header().clone();
    let mut app = App::new(h.host.clone(), h.mount.clone(), h.start.clone(), h.interval);
    app.read_only = Some(ReadOnly::Replay);
    app.paused = true;
    app.unix_base = h.start_unix;
    app.timeline = Timeline::new(&replay_tiers(samples, widest));
    let mut last: Option<collector::Refresh> = None;
    // the newest the events screen keeps, not every event of the file
    let mut events = std::collections::VecDeque::new();
    let mut seen = 0usize;
    while let Some(mut r) = replay.next() {
        // the history was sized by the first reading: what a recorder
        // still writing added since (or a file put in its place) is not
        // read, so the sizes hold
        seen += 1;
        if seen > samples || r.refresh.snapshot.groups.len() > widest {
            break;
        }
        // an appended run counts its time from its own start
        let shift = replay.run_header().start_unix.saturating_sub(h.start_unix);
        r.refresh.snapshot.at += shift;
        for mut e in r.events {
            e.at += shift;
            if events.len() == crate::model::time::events::EventList::CAP {
                events.pop_front();
            }
            events.push_back(e);
        }
        if let Some(prev) = last.replace(r.refresh) {
            app.load_history(&prev);
        }
    }
    if let Some(e) = replay.error.take() {
        return Err(anyhow::Error::new(e).context("reading the recording"));
    }
    let last = last.ok_or_else(|| SetupError("no sample in the recording".into()))?;
    let (first, end) = (
        app.timeline.moments().first().map(|m| m.stamp.unix_s),
        (h.start_unix + last.snapshot.at).as_secs_f64(),
    );
    app::update(
        &mut app,
        Msg::Collected(collector::Collected::Refresh(Box::new(last))),
    );
    // the recorded events, on the events screen (!) as they were live
    app::update(&mut app, Msg::Events(events.into()));
    let clock = |s: f64| crate::render::spark::clock_utc(s);
    app.status = Some(app::Status {
        level: app::Level::Info,
        text: format!(
            "replay of {} ({}): {samples} refreshes, {} to {} UTC; T steps back, @ jumps",
            crate::model::tree::text::escape(file.as_os_str().as_encoded_bytes()),
            crate::model::tree::text::escape_str(&h.host.hostname),
            first.map_or_else(|| "-".to_owned(), clock),
            clock(end),
        ),
    });
    let theme = Theme::from_settings(std::env::var("NO_COLOR").ok().as_deref(), colours);
    let (tx, rx) = mpsc::channel::<Msg>();
    // nothing listens: a replay has no collector and no writer
    let outlets = Outlets {
        collector: mpsc::channel().0,
        writer: mpsc::channel().0,
    };
    on_terminal(&mut app, &theme, tx, &rx, &outlets, false)
}

/// What the main loop asks of the terminal besides drawing: stopping and
/// continuing. A `TestBackend` needs neither ([`NoTty`]).
pub trait Tty {
    /// Gives the terminal back and stops until continued; `Ok(false)`
    /// when cgtop cannot be stopped (nothing could continue it).
    fn suspend(&mut self) -> std::io::Result<bool>;
    /// Sets the terminal up again after a stop.
    fn resume(&mut self) -> std::io::Result<()>;
}

/// The real terminal: [`crate::term`].
pub struct RealTty;

impl Tty for RealTty {
    fn suspend(&mut self) -> std::io::Result<bool> {
        crate::term::suspend()
    }
    fn resume(&mut self) -> std::io::Result<()> {
        crate::term::resume()
    }
}

/// No terminal to stop or set up (tests on a `TestBackend`).
pub struct NoTty;

impl Tty for NoTty {
    fn suspend(&mut self) -> std::io::Result<bool> {
        Ok(true)
    }
    fn resume(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where effects go: the collector's command channel and the writer's.
pub struct Outlets {
    pub collector: Sender<Command>,
    pub writer: Sender<WriteRequest>,
}

/// Performs write requests in their own thread, so that a slow write never
/// stalls the screen; appends each outcome to the action log file and
/// reports back with `Msg::WriteFinished`. Each op goes through the handle
/// of the hierarchy it names (`Op::hier`); the leaf fix is cgroup2's.
pub fn spawn_writer(
    hiers: Arc<Hiers>,
    log: ActionLog,
    tx: Sender<Msg>,
) -> std::io::Result<Sender<WriteRequest>> {
    spawn_writer_ending(hiers, log, tx).map(|(req_tx, _)| req_tx)
}

/// [`spawn_writer`], with a receiver that disconnects when the writer
/// thread ends (its requests' channel closed and every request sent
/// before performed and logged): what the TUI waits on as it quits, so
/// that a write made just before `q` still gets its line in the action
/// log.
pub fn spawn_writer_ending(
    hiers: Arc<Hiers>,
    log: ActionLog,
    tx: Sender<Msg>,
) -> std::io::Result<(Sender<WriteRequest>, mpsc::Receiver<()>)> {
    let (req_tx, req_rx) = mpsc::channel::<WriteRequest>();
    let (ended_tx, ended_rx) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("writer".into())
        .spawn(move || {
            // dropped when the thread ends, however it ends
            let _ended = ended_tx;
            for req in req_rx {
                let mut outcomes = match req {
                    WriteRequest::Ops(ops) => perform_all(&hiers, &ops, None),
                    WriteRequest::Typed { ops, name } => perform_all(&hiers, &ops, Some(&name)),
                    WriteRequest::LeafFix {
                        group,
                        leaf,
                        changes,
                    } => match hiers.get(crate::model::host::layout::HierId::V2) {
                        Some(root) => safety::leaf_fix_checked(
                            root,
                            &group,
                            &leaf,
                            &changes,
                            std::process::id(),
                        ),
                        None => Vec::new(),
                    },
                    WriteRequest::ExportScript(entries) => {
                        let r = log.write_session_script(&entries, SystemTime::now());
                        if tx.send(Msg::ScriptWritten(r)).is_err() {
                            return;
                        }
                        continue;
                    }
                    WriteRequest::LogEffect(record) => {
                        // the same file, the same checks as the write's own
                        // line; nothing comes back (the app has the words).
                        // A failure here went to the status line already
                        // with the write's line, unless the place changed
                        // since, and then the line is refused, not misplaced
                        let _ = log.append_effect(&record, SystemTime::now());
                        continue;
                    }
                };
                let now = SystemTime::now();
                for o in &mut outcomes {
                    if let Err(e) = log.append_in(o, &hiers.layout, now) {
                        o.notes.push(format!("not written to the action log: {e}"));
                    }
                }
                let unix_secs = now
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                // when the TUI is gone the rest is still performed and
                // logged, as requested, with no one to tell
                let _ = tx.send(Msg::WriteFinished {
                    outcomes,
                    unix_secs,
                });
            }
        })?;
    Ok((req_tx, ended_rx))
}

/// Performs `ops` in order, each checked against protection computed
/// just before it (`typed`: the group whose name the operator typed);
/// stops at the first failure.
fn perform_all(hiers: &Hiers, ops: &[Op], typed: Option<&GroupPath>) -> Vec<WriteOutcome> {
    let mut out = Vec::new();
    for op in ops {
        let o = safety::perform_checked_on(hiers, op, typed, std::process::id());
        let failed = o.result.is_err();
        out.push(o);
        if failed {
            break;
        }
    }
    out
}

/// The main loop: draw, wait for a message, apply it (and any that queued
/// up meanwhile), perform the effects. Generic over the backend so that
/// tests drive it with a `TestBackend`.
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<Msg>,
    out: &Outlets,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    event_loop_on(terminal, app, theme, rx, out, &mut NoTty)
}

/// [`event_loop`] on a terminal that can be stopped and continued.
pub fn event_loop_on<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: &Theme,
    rx: &Receiver<Msg>,
    out: &Outlets,
    tty: &mut dyn Tty,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    loop {
        terminal.draw(|f| ui::render(f, app, theme))?;
        let first = match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        let mut quit = false;
        for msg in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            // a click's row is the view's geometry with the app's zoom
            let msg = match msg {
                Msg::Mouse(MouseAction::ClickAt { x, y }) => match ui::tree_row_at(app, x, y) {
                    Some(n) => Msg::Mouse(MouseAction::ClickRow(n)),
                    None => continue,
                },
                m => m,
            };
            for fx in app::update(app, msg) {
                match fx {
                    Effect::Quit => quit = true,
                    Effect::Collector(c) => {
                        let _ = out.collector.send(c);
                    }
                    Effect::Write(w) => {
                        let _ = out.writer.send(w);
                    }
                    Effect::Suspend => {
                        if tty.suspend()? {
                            // continued: every cell anew, the screen was the shell's
                            terminal.clear()?;
                        } else {
                            app.set_status(
                                app::Level::Warn,
                                "cannot suspend: no job-control shell started cgtop, so nothing could continue it",
                            );
                        }
                    }
                    Effect::Redraw => {
                        tty.resume()?;
                        terminal.clear()?;
                    }
                    Effect::SaveColumns { path, columns } => {
                        // a few hundred bytes, here: the outcome is on the
                        // status line at once
                        let names: Vec<&str> = columns.iter().map(|c| c.name()).collect();
                        let euid = rustix::process::geteuid().as_raw();
                        let res = crate::source::config::save_columns(&path, euid, &names)
                            .map(|()| path)
                            .map_err(|e| e.to_string());
                        // only a status line: no effect comes of it
                        let _ = app::update(app, Msg::ColumnsSaved(res));
                    }
                }
            }
        }
        if quit {
            return Ok(());
        }
    }
}

/// `cgtop record`: the collector on its own clock, every refresh into
/// the recording, until `-n`, the size cap with `--stop`, or SIGTERM,
/// SIGINT or SIGHUP (each ends the open frame cleanly; exit 0).
pub fn run_record(opts: &Options, ro: &crate::options::RecordOptions) -> Result<Option<i32>> {
    use crate::model::time::record::Header;
    use crate::source::record::{AtCap, BusyReader, RecordConfig, Recorder};
    use std::sync::atomic::{AtomicBool, Ordering};
    let (m, hier, hiers) = locate(opts)?;
    let host = host_info();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("signal handler")?;
    }
    let mut c = Collector::with_hiers(collector_config(opts, &m, false), Arc::clone(&hier), &hiers);
    // the ceiling of CPU figures is the recorded host's, in the live
    // output and in the replay alike
    c.set_cpu_ceiling(Some(host.ncpus));
    c.set_grade_limits(true);
    // recordings carry who each group is (a replay elsewhere shows it)
    c.set_identities(Some(identity_resolver(&hier)));
    // no identities until recordings carry them: what `cgtop record`
    // prints must be what `cgtop replay` prints
    if opts.output == Output::Text {
        c.set_extras(crate::render::columns::Column::extras(&opts.columns));
    }
    let start = collector::clock_start();
    let header = Header {
        host: host.clone(),
        mount: m.clone(),
        start: opts.start.clone(),
        interval: opts.interval,
        start_unix: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default(),
    };
    let cfg = RecordConfig {
        path: ro.file.clone(),
        append: ro.append,
        max_size: ro.max_size,
        at_cap: if ro.stop_at_max {
            AtCap::Stop
        } else {
            AtCap::Rotate
        },
        frame_every: crate::source::record::FRAME_SECS,
    };
    let mut rec =
        Recorder::create(cfg, header.clone()).with_context(|| "cannot record".to_owned())?;
    let mut busy = ro.processes.then(|| {
        BusyReader::new(
            Arc::clone(&hier),
            crate::source::procs::ProcReader::default(),
        )
    });
    // the one line on stderr
    {
        use std::io::Write as _;
        let cap = match ro.max_size {
            None => String::new(),
            Some(b) => format!(
                ", {} at {}",
                if ro.stop_at_max {
                    "stopping"
                } else {
                    "rotating"
                },
                crate::render::units::size_typed(b)
            ),
        };
        let _ = writeln!(
            std::io::stderr(),
            "cgtop: recording {} under {} every {:.1} s to {}{cap}",
            opts.start,
            mount::path_text(&m.root),
            opts.interval.as_secs_f64(),
            crate::model::tree::text::escape(ro.file.as_os_str().as_encoded_bytes()),
        );
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let wait = |d: Duration| {
        let until = std::time::Instant::now() + d;
        while !stop.load(Ordering::Relaxed) {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        false
    };
    let events = batch::BatchEvents {
        hier: Arc::clone(&hier),
        cfg: watch_config(opts, &m, &hiers),
    };
    let res = batch::record_with(
        &mut out,
        &mut c,
        &mut rec,
        busy.as_mut(),
        &header,
        (opts, &ro.order),
        |c| c.refresh_timed(start),
        wait,
        Some((events, start)),
    );
    // the frame is ended whatever happened: what was written stays readable
    let fin = rec.finish();
    res?;
    fin.context("finishing the recording")?;
    Ok(None)
}

/// `cgtop replay FILE -b` / `--json`, -b's rows in `order`.
pub fn run_replay(
    file: &std::path::Path,
    output: Output,
    iterations: Option<u64>,
    (columns, order): (
        &[crate::render::columns::Column],
        &crate::render::order::Order,
    ),
) -> Result<()> {
    let mut replay = crate::source::record::Replay::open(file)
        .map_err(|e| SetupError(format!("replay: {e}")))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    batch::replay_ordered(&mut out, &mut replay, output, iterations, (columns, order))?;
    if let Some(e) = replay.error.take() {
        return Err(anyhow::Error::new(e).context("reading the recording"));
    }
    if replay.damaged() > 0 {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "cgtop: {} damaged part(s) of the recording skipped",
            replay.damaged()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Keeps what was written and, at each flush, what had been written
    /// since the last one.
    #[derive(Default)]
    struct Recorder {
        pending: Vec<u8>,
        flushes: Vec<String>,
    }

    impl Write for Recorder {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.pending.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            let s = String::from_utf8(std::mem::take(&mut self.pending)).expect("UTF-8");
            self.flushes.push(s);
            Ok(())
        }
    }

    #[test]
    fn one_flush_per_refresh_each_a_whole_refresh() {
        // run wraps stdout in a BufWriter: a refresh reaches a pipe
        // (`cgtop -b | tee log`) only at batch::run's flushes
        for output in [Output::Text, Output::Json] {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/pure-v2-systemd");
            let opts = Options {
                start: GroupPath::root(),
                root: Some(root),
                interval: Duration::from_millis(1),
                depth: None,
                output,
                iterations: Some(3),
                read_only: true,
                mouse: false,
                machine_cpu: false,
                max_kept_fds: None,
                brief: false,
                columns: crate::render::columns::Column::DEFAULT.to_vec(),
                filter: None,
            };
            let (m, _, _) = locate(&opts).expect("the fixture is a cgroup2 tree");
            let cfg = collector_config(&opts, &m, output == Output::Json);
            let mut rec = Recorder::default();
            let wait = |d| {
                std::thread::sleep(d);
                true
            };
            batch::run(&mut rec, cfg, &m, &host_info(), &opts, wait).expect("run");
            assert!(rec.pending.is_empty(), "{output:?}: output left unflushed");
            assert_eq!(rec.flushes.len(), 3, "{output:?}");
            for (i, f) in rec.flushes.iter().enumerate() {
                if output == Output::Json {
                    assert_eq!(f.matches('\n').count(), 1, "{f}");
                    let v: serde_json::Value = serde_json::from_str(f).expect("one document");
                    assert!(v["groups"].as_array().is_some_and(|g| g.len() == 31));
                } else {
                    let head = format!("cgtop - refresh {} at ", i + 1);
                    assert!(f.starts_with(&head), "{f}");
                    assert_eq!(f.matches("cgtop - refresh ").count(), 1, "{f}");
                    assert!(f.ends_with('\n'));
                }
            }
        }
    }
}
