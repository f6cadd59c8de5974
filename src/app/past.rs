//! Time travel (issue 9, item 2): the whole screen at a past moment of
//! the timeline (`model::time::timeline`), as below's `t`/`T` do.
//!
//! `T` steps back one moment, `t` forward (onto the newest: live again),
//! `@` jumps to a time typed in the one [`TextInput`] (`-90s`, `-5m`,
//! `-1h30m`, or `14:03:20`, a clock time in UTC: the app has no time zone
//! and reads no file to learn one), and `p` comes back to the present.
//! The moments are those `Timeline::moments` lists: every refresh of the
//! last minute, then one per 10 s, then one per minute, back an hour.
//!
//! The past is shown through the same code as the present: a `Refresh`
//! is built from the moment's frame ([`frame_refresh`]) and put in
//! `App::data`, so the tree, its columns, sort, filter and folds, and the
//! detail work unchanged. Figures the timeline does not keep (user and
//! system CPU, throttling, swap, IOPS) are `None` and show as "-"; the
//! machine's meters (CPU, MEM, PSI) are those of the moment's refresh,
//! kept for the last [`TIER_LEN`] refreshes ([`Kept`]), every one "-" at
//! an older moment; the limits graded against are today's (the last
//! live refresh's). The live data waits in [`Past`] and comes back on
//! return; refreshes that arrive meanwhile go into the timeline, and the
//! newest of them is what the screen shows on return.
//!
//! The inspected group's full read (`Inspection`: the detail pages and
//! the process list) is kept for the last [`TIER_LEN`] refreshes
//! ([`Kept`]); a moment of a coarser tier, or another group, has none,
//! and the detail says "not kept for the past".
//!
//! Writes are off while the past is shown ([`super::WritesOff::Past`]).
//! The selection keeps its path: when the group was not there at the
//! moment, the cursor stands on its nearest ancestor that was, and goes
//! back to it at a moment (or live) where it is.

use super::text_input::TextInput;
use super::{App, Data, Effect, Level};
use crate::cgroupfs::{CgroupEvents, CgroupType};
use crate::model::host::MachineLoad;
use crate::model::time::timeline::{Entry, Figure, Moment, TIER_LEN};
use crate::model::tree::limits::Throttling;
use crate::model::tree::rates::IoRates;
use crate::model::tree::Tree;
use crate::model::{GroupPath, GroupRates, GroupSample, ScanCost, Snapshot};
use crate::source::collector::{Command, Inspection, Refresh};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// The most characters of a time typed after `@`.
pub const JUMP_CAP: usize = 24;

/// The past on screen.
pub struct Past {
    /// The moment shown.
    pub moment: Moment,
    /// What was on screen live when the past was entered.
    live: Option<Data>,
    live_inspection: Option<Inspection>,
    /// The newest refresh that came while in the past: shown on return.
    pending: Option<Refresh>,
}

/// The inspected group's full reads of the last refreshes, and the
/// machine's meters of each (CPU, MEM, PSI: the timeline keeps groups'
/// figures only), by the refresh's time.
#[derive(Default)]
pub struct Kept(
    VecDeque<(Duration, Inspection)>,
    VecDeque<(Duration, MachineLoad)>,
);

impl Kept {
    /// Keeps a refresh's inspection (the oldest goes after [`TIER_LEN`]).
    pub fn keep(&mut self, at: Duration, f: &Inspection) {
        if self.0.len() == TIER_LEN {
            self.0.pop_front();
        }
        self.0.push_back((at, f.clone()));
    }

    /// Keeps a refresh's machine meters (the oldest go after
    /// [`TIER_LEN`]: the refreshes of the timeline's finest tier).
    pub fn keep_machine(&mut self, at: Duration, m: MachineLoad) {
        if self.1.len() == TIER_LEN {
            self.1.pop_front();
        }
        self.1.push_back((at, m));
    }

    /// The machine's meters of the refresh made at `at`, if kept.
    pub fn machine_at(&self, at: Duration) -> Option<MachineLoad> {
        self.1.iter().rev().find(|(t, _)| *t == at).map(|(_, m)| *m)
    }

    /// The full read of `path` made at `at`, if kept.
    pub fn at(&self, at: Duration, path: &GroupPath) -> Option<&Inspection> {
        self.0
            .iter()
            .rev()
            .find(|(t, f)| *t == at && &f.path == path)
            .map(|(_, f)| f)
    }

    /// The two newest kept reads of `path` made at or before `upto` (all
    /// of them when `None`), the older first: the group's dirty pages'
    /// drain on the IO page is the change between them.
    pub fn last_two(
        &self,
        path: &GroupPath,
        upto: Option<Duration>,
    ) -> Option<[(Duration, &Inspection); 2]> {
        let mut reads = self
            .0
            .iter()
            .rev()
            .filter(|(t, f)| &f.path == path && upto.is_none_or(|u| *t <= u))
            .map(|(t, f)| (*t, f));
        let newer = reads.next()?;
        let older = reads.next()?;
        Some([older, newer])
    }
}

/// A time typed after `@`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// So long before the newest refresh (`-90s`, `-5m`, `-1h30m`).
    Ago(Duration),
    /// A clock time of today in UTC, seconds since midnight (`14:03:20`,
    /// `14:03`); one in the future is yesterday's.
    ClockUtc(u32),
}

/// Why a typed time is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JumpError {
    Empty,
    NotATime(String),
}

impl std::fmt::Display for JumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("jump: type a time (-90s, -5m, 14:03:20 UTC)"),
            Self::NotATime(s) => write!(
                f,
                "jump: {s:?} is not a time (-90s, -5m, -1h30m, or 14:03:20 in UTC)"
            ),
        }
    }
}

/// Parses what follows `@`.
pub fn parse_target(text: &str) -> Result<Target, JumpError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(JumpError::Empty);
    }
    let bad = || JumpError::NotATime(t.to_owned());
    if t.contains(':') {
        let parts: Vec<&str> = t.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let num = |s: &str, max: u32| -> Result<u32, JumpError> {
            if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<u32>().ok().filter(|v| *v <= max).ok_or_else(bad)
        };
        let h = num(parts[0], 23)?;
        let m = num(parts[1], 59)?;
        let s = parts.get(2).map_or(Ok(0), |s| num(s, 59))?;
        return Ok(Target::ClockUtc(h * 3600 + m * 60 + s));
    }
    // a duration back: "-90s", "5m", "1h30m", "-2m10s"; a bare number is
    // seconds
    let body = t.strip_prefix('-').unwrap_or(t);
    let mut total: u64 = 0;
    let mut num = String::new();
    let mut any = false;
    for c in body.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return Err(bad()),
        };
        let n: u64 = num.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        num.clear();
        any = true;
    }
    if !num.is_empty() {
        let n: u64 = num.parse().map_err(|_| bad())?;
        total = total.saturating_add(n);
        any = true;
    }
    if !any {
        return Err(bad());
    }
    Ok(Target::Ago(Duration::from_secs(total)))
}

impl App {
    /// Whether the screen shows the past.
    pub fn in_past(&self) -> bool {
        self.past.is_some()
    }

    /// The time between two samples of tier `t`: the refresh interval for
    /// the first.
    pub fn tier_every(&self, t: usize) -> Duration {
        self.timeline
            .specs()
            .get(t)
            .and_then(|s| s.every)
            .unwrap_or(self.interval)
    }
}

/// The moment a target names: the nearest kept.
fn moment_of(app: &App, target: Target) -> Option<Moment> {
    let latest = app.timeline.latest()?;
    match target {
        Target::Ago(d) => app.timeline.nearest(latest.stamp.at.saturating_sub(d)),
        Target::ClockUtc(secs) => {
            let now = latest.stamp.unix_s;
            let midnight = (now / 86_400.0).floor() * 86_400.0;
            let mut want = midnight + f64::from(secs);
            if want > now + 1.0 {
                want -= 86_400.0;
            }
            app.timeline.moments().into_iter().min_by(|a, b| {
                (a.stamp.unix_s - want)
                    .abs()
                    .total_cmp(&(b.stamp.unix_s - want).abs())
            })
        }
    }
}

/// `@` + Enter: shows the moment nearest the typed time.
pub fn jump(app: &mut App, text: &str, fx: &mut Vec<Effect>) {
    let target = match parse_target(text) {
        Ok(t) => t,
        Err(e) => return app.set_status(Level::Warn, e.to_string()),
    };
    let Some(m) = moment_of(app, target) else {
        return app.set_status(Level::Warn, "no history yet");
    };
    go_to(app, m, fx);
    if app.in_past() {
        let oldest = app.timeline.moments().first().map(|o| o.stamp.at);
        if oldest == Some(m.stamp.at) {
            app.set_status(
                Level::Info,
                "the history reaches back no further: its oldest moment is shown",
            );
        }
    }
}

/// `T`: one moment back.
pub fn step_back(app: &mut App, fx: &mut Vec<Effect>) {
    let moments = app.timeline.moments();
    let now = match &app.past {
        Some(p) => p.moment.stamp.at,
        None => match app.timeline.latest() {
            Some(l) => l.stamp.at,
            None => return app.set_status(Level::Warn, "no history yet"),
        },
    };
    match moments.iter().rev().find(|m| m.stamp.at < now) {
        Some(&m) => go_to(app, m, fx),
        None => app.set_status(
            Level::Info,
            "this is the oldest moment kept (t: forward, p: back to live)",
        ),
    }
}

/// `t`: one moment forward; onto the newest refresh: live again.
pub fn step_forward(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(p) = &app.past else {
        // nothing to do: a refusal, after which the key's meaning in
        // htop or systemd-cgtop is said (app::keys)
        return app.set_status(Level::Warn, "live already (T: back in time)");
    };
    let now = p.moment.stamp.at;
    let next = app
        .timeline
        .moments()
        .into_iter()
        .find(|m| m.stamp.at > now);
    match next {
        Some(m) => go_to(app, m, fx),
        None => leave(app, fx),
    }
}

/// Shows moment `m` (the newest refresh: the present).
fn go_to(app: &mut App, m: Moment, fx: &mut Vec<Effect>) {
    if app
        .timeline
        .latest()
        .is_some_and(|l| l.stamp.at == m.stamp.at)
    {
        leave(app, fx);
        return;
    }
    if app.past.is_none() {
        if app.data.is_none() {
            return app.set_status(Level::Warn, "no history yet");
        }
        app.past = Some(Past {
            moment: m,
            live: app.data.take(),
            live_inspection: app.inspection.take(),
            pending: None,
        });
    }
    if let Some(p) = &mut app.past {
        p.moment = m;
    }
    show_moment(app);
}

/// Builds the screen of the moment on show.
fn show_moment(app: &mut App) {
    let Some(p) = &app.past else { return };
    let latest = p.pending.as_ref().or(p.live.as_ref().map(|d| &d.refresh));
    let refresh = frame_refresh(app, p.moment, latest);
    let tree = Tree::build(&refresh.snapshot.groups);
    app.data = Some(Data { refresh, tree });
    app.rebuild_rows();
    show_inspection(app);
}

/// The kept full read of the selected group at the moment shown, if any.
pub(super) fn show_inspection(app: &mut App) {
    let Some(p) = &app.past else { return };
    let at = p.moment.stamp.at;
    app.inspection = match (&app.selected, p.moment.tier) {
        (Some(sel), 0) => app.kept.at(at, sel).cloned(),
        _ => None,
    };
    app.proc_cursor = app.proc_cursor.min(app.processes_len().saturating_sub(1));
}

/// Back to the present: the live data (or the newest refresh that came
/// meanwhile) is shown again, and a paused collector runs again.
pub fn leave(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(p) = app.past.take() else { return };
    app.data = p.live;
    app.inspection = p.live_inspection;
    if app.paused {
        app.paused = false;
        fx.push(Effect::Collector(Command::Pause(false)));
    }
    // before the refresh: its own news ("X is gone") goes beside it
    app.set_status(Level::Info, "live again");
    if let Some(r) = p.pending {
        super::refresh::show_refresh(app, r, fx);
        return;
    }
    let before = app.selected.clone();
    app.rebuild_rows();
    if app.inspection.as_ref().map(|f| &f.path) != app.selected.as_ref() || app.selected != before {
        app.inspection = None;
        fx.push(app.inspect_effect());
    }
}

/// A refresh that came while the past is shown: kept for the return.
pub(super) fn hold(app: &mut App, r: Refresh) {
    if let Some(p) = &mut app.past {
        p.pending = Some(r);
    }
}

/// An inspection read while the past is shown: kept for the return.
pub(super) fn hold_inspection(app: &mut App, f: Inspection) {
    if let Some(p) = &mut app.past {
        p.live_inspection = Some(f);
    }
}

/// The refresh the screen shows for moment `m`: every group of the
/// moment's frame with the figures kept, sorted by path as a snapshot
/// is; what the timeline does not keep is `None`. `latest` (the newest
/// live refresh) gives what does not change with time: each group's
/// type, its limits (today's), where its figures came from (its
/// `sources`, but the interval's uncounted disk), the devices.
pub fn frame_refresh(app: &App, m: Moment, latest: Option<&Refresh>) -> Refresh {
    let mut frame: Vec<(&GroupPath, Entry)> = app.timeline.frame(m);
    frame.sort_by(|a, b| a.0.cmp(b.0));
    let live = |p: &GroupPath| {
        let r = latest?;
        let i = r.snapshot.groups.binary_search_by(|g| g.path.cmp(p)).ok()?;
        Some((&r.snapshot.groups[i], r.limits.get(i).copied()))
    };
    let mut groups = Vec::with_capacity(frame.len());
    let mut rates = Vec::with_capacity(frame.len());
    let mut limits = Vec::with_capacity(frame.len());
    for (path, e) in frame {
        let mut g = GroupSample::new(path.clone(), 0);
        let now = live(path);
        // a group gone since is a domain (the root has no type)
        g.cgroup_type = match now {
            Some((l, _)) => l.cgroup_type,
            None if path.is_root() => None,
            None => Some(CgroupType::Domain),
        };
        if let Some((l, _)) = now {
            g.inode = l.inode;
            g.hot.memory_max = l.hot.memory_max;
            g.hot.memory_limit = l.hot.memory_limit;
            // who it is: today's, as its type is (a group gone since is
            // named from its path)
            g.identity.clone_from(&l.identity);
            // where its figures came from: today's too, as the hierarchies
            // are the run's; but not the disk v1 blkio did not count in
            // one interval (the moment's IO is `-` by its rates alone)
            g.hot.v1.sources = l.hot.v1.sources;
            g.hot.v1.sources.io_uncounted = None;
        }
        let int = |f: Figure| e.get(f).map(|v| v.max(0.0).round() as u64);
        g.hot.memory_current = int(Figure::Memory);
        g.hot.pids_current = int(Figure::Pids);
        // the root's words go with its figures, where the moment has them
        let src = &mut g.hot.v1.sources;
        src.root_kernel_memory &= g.hot.memory_current.is_some();
        src.root_machine_tasks &= g.hot.pids_current.is_some();
        let centi = |f: Figure| e.get(f).map(|v| (v * 100.0).max(0.0).round() as u32);
        g.hot.psi_some_avg10 = centi(Figure::PsiSome);
        g.hot.psi_full_avg10 = centi(Figure::PsiFull);
        if e.populated().is_some() || e.frozen().is_some() {
            g.hot.events = Some(CgroupEvents {
                populated: e.populated(),
                frozen: e.frozen(),
            });
        }
        let io = match (e.get(Figure::IoRead), e.get(Figure::IoWrite)) {
            (None, None) => None,
            // the timeline keeps no IO operations
            (r, w) => Some(IoRates {
                rbps: r,
                wbps: w,
                riops: None,
                wiops: None,
            }),
        };
        rates.push(GroupRates {
            cpu_pct: e.get(Figure::Cpu),
            io,
            ..GroupRates::default()
        });
        limits.push(now.and_then(|(_, l)| l).unwrap_or_default());
        groups.push(g);
    }
    let n = groups.len();
    Refresh {
        snapshot: Snapshot {
            at: m.stamp.at,
            groups,
            cost: ScanCost::default(),
        },
        rates,
        throttling: vec![None::<Throttling>; n],
        inspection: None,
        devices: latest.map(|r| r.devices.clone()).unwrap_or_default(),
        kept_fds: 0,
        events_since_start: HashMap::new(),
        protected: None,
        // the meters of the moment where kept, else none at all (each
        // shows "-": no meter shows the present's figure, or another's)
        machine: app.kept.machine_at(m.stamp.at),
        limits,
        events_seed: None,
    }
}

/// A new `@` prompt.
pub fn prompt() -> TextInput {
    TextInput::new(JUMP_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_typed() {
        let s = Duration::from_secs;
        assert_eq!(parse_target("-90s"), Ok(Target::Ago(s(90))));
        assert_eq!(parse_target("-5m"), Ok(Target::Ago(s(300))));
        assert_eq!(parse_target(" 1h30m "), Ok(Target::Ago(s(5400))));
        assert_eq!(parse_target("-2m10s"), Ok(Target::Ago(s(130))));
        assert_eq!(parse_target("45"), Ok(Target::Ago(s(45))));
        assert_eq!(
            parse_target("14:03:20"),
            Ok(Target::ClockUtc(14 * 3600 + 3 * 60 + 20))
        );
        assert_eq!(parse_target("9:05"), Ok(Target::ClockUtc(9 * 3600 + 300)));
        for bad in ["-", "m", "-5x", "24:00", "12:60", "1:2:3:4", "::", "-5m-"] {
            assert!(
                matches!(parse_target(bad), Err(JumpError::NotATime(_))),
                "{bad}"
            );
        }
        assert_eq!(parse_target("  "), Err(JumpError::Empty));
    }
}
