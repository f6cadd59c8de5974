//! The effect of an edit (issue 9, item 4): which figures a write is
//! meant to move, those figures over a window before the write (from the
//! [`Timeline`], when the write's answer comes) and over a window after
//! it, and what came of it. PURE: the app hands in what it knows at each
//! refresh ([`Now`]); the words are `render::effect`'s.
//!
//! # The windows
//!
//! [`each_side`] refreshes on each side: enough for 5 s and never fewer
//! than 3 (5 at the default 1 s interval, 3 at 2 s or more, 10 at 0.5 s).
//! The before window is the last refreshes up to the one the app had
//! when the write's answer arrived (the writer answers right after its
//! write(2), so at most a few milliseconds of that last window can be
//! after the write). The first refresh after the answer straddles the
//! write (its rates cover time before and after it) and is left out; the
//! after window is the refreshes that follow it. Rates (CPU, throttled,
//! IO) are the mean of the window; levels (memory, PIDs) too, so a level
//! that falls during the window shows between its ends.
//!
//! Pressure is not in the timeline for every group (it is read while the
//! PSI column is shown); the group being edited is nearly always the
//! inspected one, whose pressure files are read on every refresh, so the
//! before figure is the kernel's own `some avg10` at the write (the 10 s
//! before it) and the after figure the share of the after window stalled,
//! from the `total` counter at its two ends. Without the inspection of
//! the group at both moments it is missing and said so.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::{files, Pressure};
use crate::model::time::timeline::{Entry, Figure, Stats, Timeline};
use crate::model::write::input::ControllerChange;
use crate::model::write::{Op, WriteKind};
use crate::model::GroupPath;
use std::time::Duration;

/// The least refreshes a window takes, whatever the interval.
pub const MIN_EACH_SIDE: usize = 3;

/// How long a window should last at least.
pub const WINDOW: Duration = Duration::from_secs(5);

/// Refreshes on each side of a write at this interval: [`WINDOW`]'s
/// worth, at least [`MIN_EACH_SIDE`]; never more than the timeline's
/// first tier can hold behind the straddling refresh.
pub fn each_side(interval: Duration) -> usize {
    let iv = interval.as_secs_f64();
    let n = if iv > 0.0 {
        (WINDOW.as_secs_f64() / iv).ceil() as usize
    } else {
        MIN_EACH_SIDE
    };
    n.clamp(MIN_EACH_SIDE, crate::model::time::timeline::TIER_LEN - 2)
}

/// A pressure file of the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Memory,
    Io,
}

/// One figure an effect compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measure {
    /// One of the timeline's figures of the group.
    Figure(Figure),
    /// cpu.stat's throttled time per wall time (timeline, first tier).
    Throttled,
    /// The group's `some` pressure (see the module doc).
    Pressure(Resource),
    /// cgroup.events' `frozen` at the end of each window (1 or 0).
    Frozen,
    /// How many children have `figure` (a controller handed down or
    /// taken back: its files appear or vanish in every child).
    Children { controller: String, figure: Figure },
}

/// The figures a write to one group is meant to move.
pub fn measures(op: &Op) -> Vec<Measure> {
    use Measure::{Figure as F, Frozen, Pressure as P, Throttled};
    let cpu = || vec![F(Figure::Cpu), Throttled];
    let memory = || vec![F(Figure::Memory), P(Resource::Memory)];
    let io = || vec![F(Figure::IoRead), F(Figure::IoWrite), P(Resource::Io)];
    let freeze = || vec![F(Figure::Cpu), Frozen];
    let procs = || vec![F(Figure::Cpu), F(Figure::Memory), F(Figure::Pids)];
    let Op::Write(w) = op else {
        // a group made has nothing before; one removed nothing after
        return Vec::new();
    };
    match &w.kind {
        WriteKind::CpuMax(_)
        | WriteKind::CpuMaxBurst(_)
        | WriteKind::CpuWeight(_)
        | WriteKind::CpuWeightNice(_)
        | WriteKind::CfsQuota(_)
        | WriteKind::CfsPeriod(_)
        | WriteKind::CpuShares(_) => cpu(),
        WriteKind::Memory(..) | WriteKind::V1Memory(..) => memory(),
        WriteKind::IoMax(_)
        | WriteKind::IoWeight { .. }
        | WriteKind::IoLatency { .. }
        | WriteKind::BlkioThrottle { .. }
        | WriteKind::BlkioWeight(_) => io(),
        WriteKind::PidsMax(_) => vec![F(Figure::Pids)],
        WriteKind::Freeze(_) => freeze(),
        // v1 has no cgroup.events: the CPU the group stops using
        WriteKind::FreezerState(_) => vec![F(Figure::Cpu)],
        // a move names only its target; the app measures the group the
        // process left as well (the outcome's old value names it)
        WriteKind::Kill | WriteKind::MoveProcess { .. } => procs(),
        WriteKind::SubtreeControl(changes) => children(changes),
        WriteKind::Raw => match w.file.as_str() {
            files::FREEZE => freeze(),
            files::KILL | files::PROCS | files::THREADS => procs(),
            f if f.starts_with("cpu.") => cpu(),
            f if f.starts_with("memory.") => memory(),
            f if f.starts_with("io.") => io(),
            f if f.starts_with("pids.") => vec![F(Figure::Pids)],
            // cgroup.subtree_control written raw: the words are the
            // operator's, parsed the kernel's way ("+memory -io")
            files::SUBTREE_CONTROL => children(&parse_changes(&w.contents)),
            _ => Vec::new(),
        },
    }
}

/// The children's figures that a controller's files give: memory.current
/// (memory), io.stat (io). CPU % (cpu.stat) and the process count are
/// there without their controller, so handing those down shows nothing new.
fn children(changes: &[ControllerChange]) -> Vec<Measure> {
    changes
        .iter()
        .filter_map(|c| {
            let figure = match c.name.as_str() {
                "memory" => Figure::Memory,
                "io" => Figure::IoRead,
                _ => return None,
            };
            Some(Measure::Children {
                controller: c.name.clone(),
                figure,
            })
        })
        .collect()
}

/// "+memory -io" as the kernel reads cgroup.subtree_control.
fn parse_changes(text: &str) -> Vec<ControllerChange> {
    text.split_whitespace()
        .filter_map(|t| {
            let (enable, name) = match t.split_at_checked(1)? {
                ("+", n) => (true, n),
                ("-", n) => (false, n),
                _ => return None,
            };
            Some(ControllerChange {
                name: name.to_owned(),
                enable,
            })
        })
        .collect()
}

/// What the app knows at a refresh, for the group of an effect.
pub struct Now<'a> {
    pub timeline: &'a Timeline,
    /// The latest refresh.
    pub at: Duration,
    /// Whether the group is in the latest refresh.
    pub present: bool,
    /// The group's inode in the latest refresh: another one is another
    /// group made under the same name.
    pub inode: Option<u64>,
    /// The group's children in the latest refresh.
    pub children: Vec<&'a GroupPath>,
    /// The group's pressure files, when it is the inspected group and the
    /// inspection is of this refresh.
    pub memory_pressure: Option<&'a Pressure>,
    pub io_pressure: Option<&'a Pressure>,
}

impl Now<'_> {
    fn pressure(&self, r: Resource) -> Option<&Pressure> {
        match r {
            Resource::Memory => self.memory_pressure,
            Resource::Io => self.io_pressure,
        }
    }
}

/// Why an effect was not measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotMeasured {
    /// Refreshes were paused at the write: no window after it (and the
    /// last before it may be long ago).
    Paused,
    /// No refresh yet before the write.
    NoRefresh,
}

/// A figure's two sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    pub measure: Measure,
    pub before: Option<f64>,
    pub after: Option<f64>,
}

/// What came of a write, as far as cgtop could see.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Both windows are in.
    Measured {
        figures: Vec<Compared>,
        /// Refreshes with a sample of the group in each window, and the
        /// time each spans.
        before: Span,
        after: Span,
    },
    /// The group was gone at a refresh after the write.
    Gone,
    NotMeasured(NotMeasured),
}

/// A window: how many refreshes, over how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub refreshes: usize,
    pub time: Duration,
}

/// A write whose after window is not in yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub group: GroupPath,
    /// The ops done to the group in this write (one action may write
    /// several files: the limits form).
    pub ops: Vec<Op>,
    /// When the write's answer came (UNIX seconds): names the write in
    /// the log.
    pub unix_secs: u64,
    measures: Vec<Measure>,
    each_side: usize,
    /// The last refresh before the write.
    written_at: Duration,
    before: Vec<Option<f64>>,
    before_span: Span,
    /// The straddling refresh, once seen, with the pressure totals then.
    straddle: Option<(Duration, [Option<u64>; 2])>,
    after_seen: usize,
    /// The group's inode at the write: the group made again under its
    /// name is not the group written to.
    inode: Option<u64>,
}

/// A finished effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Effect {
    pub group: GroupPath,
    pub ops: Vec<Op>,
    pub unix_secs: u64,
    pub outcome: Outcome,
}

/// The refreshes of the timeline's first tier up to `to`: their times.
fn stamps_to(timeline: &Timeline, path: &GroupPath, to: Duration) -> Vec<Duration> {
    timeline
        .series(path, 0)
        .into_iter()
        .map(|(s, _)| s.at)
        .filter(|at| *at <= to)
        .collect()
}

fn mean(s: Option<Stats>) -> Option<f64> {
    s.map(|s| s.mean)
}

fn total(p: Option<&Pressure>) -> Option<u64> {
    p.map(|p| p.some.total_usec)
}

impl Pending {
    /// The figures of `ops` on `group` (the ops of one write that change
    /// it), read before the write from `now`; `None` when none of them has
    /// a figure to compare.
    pub fn start(
        group: GroupPath,
        ops: Vec<Op>,
        unix_secs: u64,
        each_side: usize,
        now: &Now<'_>,
    ) -> Option<Self> {
        let mut wanted: Vec<Measure> = Vec::new();
        for m in ops.iter().flat_map(measures) {
            if !wanted.contains(&m) {
                wanted.push(m);
            }
        }
        if wanted.is_empty() {
            return None;
        }
        let stamps = stamps_to(now.timeline, &group, now.at);
        let k = stamps.len();
        let from = k
            .checked_sub(each_side + 1)
            .map_or(Duration::ZERO, |i| stamps[i]);
        let refreshes = k.min(each_side);
        let first = stamps.get(k - refreshes).copied();
        let before_span = Span {
            refreshes,
            time: match (k.checked_sub(each_side + 1), first) {
                // the rates of the first refresh in the window cover the
                // time since the refresh before it
                (Some(i), _) => now.at.saturating_sub(stamps[i]),
                (None, Some(f)) => now.at.saturating_sub(f),
                (None, None) => Duration::ZERO,
            },
        };
        let before = wanted
            .iter()
            .map(|m| read_window(m, &group, now, from, now.at, |r| r.map(|p| p.some.avg10)))
            .collect();
        Some(Self {
            group,
            ops,
            unix_secs,
            measures: wanted,
            each_side,
            written_at: now.at,
            before,
            before_span,
            straddle: None,
            after_seen: 0,
            inode: now.inode,
        })
    }

    /// The write was not measured (paused, no refresh): the effect says
    /// why at once.
    pub fn not_measured(
        group: GroupPath,
        ops: Vec<Op>,
        unix_secs: u64,
        why: NotMeasured,
    ) -> Effect {
        Effect {
            group,
            ops,
            unix_secs,
            outcome: Outcome::NotMeasured(why),
        }
    }

    /// Whether the ops of a write have any figure to compare.
    pub fn has_figures(ops: &[Op]) -> bool {
        ops.iter().any(|o| !measures(o).is_empty())
    }

    /// Refreshes still to come before the effect is in.
    pub fn refreshes_left(&self) -> usize {
        let straddle = usize::from(self.straddle.is_none());
        straddle + self.each_side.saturating_sub(self.after_seen)
    }

    /// A refresh came; the finished effect once the after window is in
    /// (or the group is gone).
    pub fn on_refresh(&mut self, now: &Now<'_>) -> Option<Effect> {
        if now.at <= self.written_at {
            return None;
        }
        let made_again = matches!((self.inode, now.inode), (Some(a), Some(b)) if a != b);
        if !now.present || made_again {
            return Some(self.finish(Outcome::Gone));
        }
        let Some((t1, totals)) = self.straddle else {
            let totals = [
                total(now.pressure(Resource::Memory)),
                total(now.pressure(Resource::Io)),
            ];
            self.straddle = Some((now.at, totals));
            return None;
        };
        if now.at <= t1 {
            return None;
        }
        self.after_seen += 1;
        if self.after_seen < self.each_side {
            return None;
        }
        let span = now.at.saturating_sub(t1);
        let stall = |r: Resource| {
            let i = usize::from(r == Resource::Io);
            let (a, b) = (totals[i]?, total(now.pressure(r))?);
            let us = span.as_micros();
            (us > 0).then(|| b.checked_sub(a).map(|d| d as f64 * 100.0 / us as f64))?
        };
        let figures = self
            .measures
            .iter()
            .zip(&self.before)
            .map(|(m, &before)| {
                let after = match m {
                    Measure::Pressure(r) => stall(*r),
                    _ => read_window(m, &self.group, now, t1, now.at, |_| None),
                };
                Compared {
                    measure: m.clone(),
                    before,
                    after,
                }
            })
            .collect();
        let after = Span {
            refreshes: stamps_to(now.timeline, &self.group, now.at)
                .into_iter()
                .filter(|at| *at > t1)
                .count(),
            time: span,
        };
        Some(self.finish(Outcome::Measured {
            figures,
            before: self.before_span,
            after,
        }))
    }

    fn finish(&self, outcome: Outcome) -> Effect {
        Effect {
            group: self.group.clone(),
            ops: self.ops.clone(),
            unix_secs: self.unix_secs,
            outcome,
        }
    }
}

/// A measure over the refreshes in `(from, to]`; the state ones at `to`;
/// pressure through `pressure` (the before side's avg10).
fn read_window(
    m: &Measure,
    group: &GroupPath,
    now: &Now<'_>,
    from: Duration,
    to: Duration,
    pressure: impl Fn(Option<&Pressure>) -> Option<f64>,
) -> Option<f64> {
    let tl = now.timeline;
    let at_to = |p: &GroupPath| -> Option<Entry> {
        tl.series(p, 0)
            .into_iter()
            .rev()
            .find(|(s, _)| s.at <= to)
            .filter(|(s, _)| s.at == to)
            .map(|(_, e)| e)
            .filter(Entry::is_present)
    };
    match m {
        Measure::Figure(f) => mean(tl.window(group, *f, from, to)),
        Measure::Throttled => mean(tl.window_of(group, from, to, Entry::throttled)),
        Measure::Pressure(r) => pressure(now.pressure(*r)),
        Measure::Frozen => at_to(group)
            .and_then(|e| e.frozen())
            .map(|f| if f { 1.0 } else { 0.0 }),
        Measure::Children { figure, .. } => Some(
            now.children
                .iter()
                .filter(|c| at_to(c).is_some_and(|e| e.get(*figure).is_some()))
                .count() as f64,
        ),
    }
}

/// An effect as the action log file keeps it: the write it belongs to
/// (its group, its files, when its answer came) and the words. Plain
/// values, so that a request to the writer thread can carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub group: GroupPath,
    /// The files the write changed ("mkdir" has none: no effect).
    pub files: Vec<String>,
    /// When the write's answer came, as in its own log line.
    pub written_unix_secs: u64,
    pub words: String,
}

impl Record {
    /// The record of `e` with its words.
    pub fn of(e: &Effect, words: String) -> Self {
        let mut files: Vec<String> = Vec::new();
        for w in e.ops.iter().filter_map(Op::as_write) {
            if !files.contains(&w.file) {
                files.push(w.file.clone());
            }
        }
        Self {
            group: e.group.clone(),
            files,
            written_unix_secs: e.unix_secs,
            words,
        }
    }
}
