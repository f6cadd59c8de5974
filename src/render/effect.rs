//! The words of an edit's effect (`model::write::effect`): the line the status
//! line, the log screen and the action log file show, with every figure
//! through [`super::units`] and every name from outside escaped
//! (`model::tree::text`), e.g.
//!
//! ```text
//! cpu.max 30%: CPU 98.0% -> 29.9%, throttled 0.0% -> 68.2% (5 s each side)
//! memory.high 1G: memory 1.4G -> 1.0G, memory pressure 0.0% -> 12.3% (5 s each side)
//! ```
//!
//! A figure missing on one side is [`super::units::MISSING`]; one missing
//! on both is named with "no figures".

use super::units::{bytes_short, count_short, limit_count, limit_typed, pct, rate_short};
use crate::model::time::timeline::Figure;
use crate::model::tree::text::escape_str;
use crate::model::write::effect::{
    Compared, Effect, Measure, NotMeasured, Outcome, Resource, Span,
};
use crate::model::write::{Op, WriteKind};
use std::time::Duration;

/// What a write set, as an operator would say it: "cpu.max 30%",
/// "memory.high 1G", "pids.max 50", "freeze", "move 4242".
pub fn op_label(op: &Op) -> String {
    let Op::Write(w) = op else {
        return op.describe();
    };
    let file = escape_str(&w.file);
    match &w.kind {
        WriteKind::CpuMax(m) => match m.quota {
            None => format!("{file} max"),
            Some(q) if m.period > 0 => {
                let p = q as f64 * 100.0 / m.period as f64;
                // whole percents as typed ("30%"), else one decimal
                if (p - p.round()).abs() < 1e-9 {
                    format!("{file} {p:.0}%")
                } else {
                    format!("{file} {}%", pct(Some(p)))
                }
            }
            Some(_) => format!("{file} {}", escape_str(w.contents.trim())),
        },
        WriteKind::Memory(_, l) => format!("{file} {}", limit_typed(*l)),
        WriteKind::PidsMax(l) => format!("{file} {}", limit_count(*l)),
        WriteKind::Freeze(true) => "freeze".into(),
        WriteKind::Freeze(false) => "thaw".into(),
        WriteKind::Kill => "kill".into(),
        WriteKind::MoveProcess {
            pid,
            threads: false,
        } => format!("move process {pid}"),
        WriteKind::MoveProcess { pid, threads: true } => format!("move thread {pid}"),
        _ => format!("{file} {}", escape_str(w.contents.trim())),
    }
}

/// The labels of a write's ops, joined; an action made in several
/// hierarchies (a move into a group in each that holds it) is said once.
pub fn ops_label(ops: &[Op]) -> String {
    let mut said: Vec<String> = Vec::new();
    for l in ops.iter().map(op_label) {
        if !said.contains(&l) {
            said.push(l);
        }
    }
    said.join(", ")
}

fn measure_name(m: &Measure) -> String {
    match m {
        Measure::Figure(Figure::Cpu) => "CPU".into(),
        Measure::Figure(Figure::Memory) => "memory".into(),
        Measure::Figure(Figure::IoRead) => "IO read".into(),
        Measure::Figure(Figure::IoWrite) => "IO write".into(),
        Measure::Figure(Figure::Pids) => "PIDs".into(),
        Measure::Figure(Figure::PsiSome) => "pressure some".into(),
        Measure::Figure(Figure::PsiFull) => "pressure full".into(),
        Measure::Throttled => "throttled".into(),
        Measure::Pressure(Resource::Memory) => "memory pressure".into(),
        Measure::Pressure(Resource::Io) => "IO pressure".into(),
        Measure::Frozen => "frozen".into(),
        Measure::Children { controller, .. } => {
            format!("children with {} figures", escape_str(controller))
        }
    }
}

/// One side of a measure, through the shared units.
fn value(m: &Measure, v: Option<f64>) -> String {
    let percent = |v: Option<f64>| v.map_or_else(|| pct(None), |v| format!("{}%", pct(Some(v))));
    match m {
        Measure::Figure(Figure::Cpu | Figure::PsiSome | Figure::PsiFull)
        | Measure::Throttled
        | Measure::Pressure(_) => percent(v),
        Measure::Figure(Figure::Memory) => {
            v.map_or_else(|| pct(None), |b| bytes_short(b.max(0.0).round() as u64))
        }
        Measure::Figure(Figure::IoRead | Figure::IoWrite) => match v {
            Some(r) => format!("{}/s", rate_short(Some(r))),
            None => rate_short(None),
        },
        Measure::Figure(Figure::Pids) | Measure::Children { .. } => {
            count_short(v.map(|n| n.max(0.0).round() as u64))
        }
        Measure::Frozen => match v {
            Some(f) if f > 0.5 => "yes".into(),
            Some(_) => "no".into(),
            None => pct(None),
        },
    }
}

/// "CPU 98.0% -> 29.9%", or "memory pressure: no figures".
pub fn compared(c: &Compared) -> String {
    let name = measure_name(&c.measure);
    if c.before.is_none() && c.after.is_none() {
        return format!("{name}: no figures");
    }
    format!(
        "{name} {} -> {}",
        value(&c.measure, c.before),
        value(&c.measure, c.after)
    )
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 2.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// "(5 s each side)", "(3 s before, 5 s after)".
pub fn windows(before: Span, after: Span) -> String {
    let (b, a) = (secs(before.time), secs(after.time));
    if before.refreshes == 0 {
        format!("(no refresh before, {a} after)")
    } else if b == a {
        format!("({b} each side)")
    } else {
        format!("({b} before, {a} after)")
    }
}

/// What came of the write, without its label.
pub fn outcome_words(o: &Outcome) -> String {
    match o {
        Outcome::Measured {
            figures,
            before,
            after,
        } => {
            let fig: Vec<String> = figures.iter().map(compared).collect();
            format!("{} {}", fig.join(", "), windows(*before, *after))
        }
        Outcome::Gone => "the group is gone; no figures after the write".into(),
        Outcome::NotMeasured(why) => not_measured(*why).into(),
    }
}

/// Why there is no effect line with figures.
pub fn not_measured(why: NotMeasured) -> &'static str {
    match why {
        NotMeasured::Paused => "not measured, refreshes are paused",
        NotMeasured::NoRefresh => "not measured, no refresh before the write",
    }
}

/// The whole line: "cpu.max 30%: CPU 98.0% -> 29.9%, ... (5 s each side)".
pub fn line(e: &Effect) -> String {
    format!("{}: {}", ops_label(&e.ops), outcome_words(&e.outcome))
}

/// An effect still being measured, after "effect": "in 4 refreshes", or
/// that it waits while refreshes are paused.
pub fn waiting(refreshes_left: usize, paused: bool) -> String {
    if paused {
        "waits, refreshes are paused".into()
    } else if refreshes_left == 1 {
        "after the next refresh".into()
    } else {
        format!("in {refreshes_left} refreshes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CpuMax, Limit};
    use crate::model::write;
    use crate::model::write::input::MemoryFile;
    use crate::model::GroupPath;

    fn g() -> GroupPath {
        GroupPath::new("lab")
    }

    #[test]
    fn labels_say_what_was_set() {
        let cpu = write::set_cpu_max(
            &g(),
            CpuMax {
                quota: Some(30_000),
                period: 100_000,
            },
        );
        assert_eq!(op_label(&cpu), "cpu.max 30%");
        let mem = write::set_memory_limit(&g(), MemoryFile::High, Limit::Value(1 << 30));
        assert_eq!(op_label(&mem), "memory.high 1G");
        assert_eq!(op_label(&write::freeze(&g(), true)), "freeze");
        assert_eq!(
            op_label(&write::set_pids_max(&g(), Limit::Max)),
            "pids.max max"
        );
        let raw = write::raw(&g(), "cpu.weight", "50\x1b[2J");
        assert_eq!(op_label(&raw), "cpu.weight 50\\e[2J", "escaped");
    }

    use crate::cgroupfs::io::DevId;
    use crate::cgroupfs::Pressure;
    use crate::model::time::timeline::{Entry, Stamp, Timeline};
    use crate::model::write::effect::{each_side, measures, Now, Pending};
    use crate::model::write::input::{ControllerChange, IoMaxSet};
    use std::time::Duration;

    /// A timeline of `lab` (and its children `lab/a`, `lab/b`) over
    /// refreshes 0..=11 s, one a second, each entry from `at(s)`; a write
    /// answered after the refresh at 5 s; the effect's line after the
    /// refresh at 11 s (or when it finishes earlier).
    struct Run {
        entry: fn(u64) -> Entry,
        child: fn(u64) -> Option<Entry>,
        pressure: fn(u64) -> Option<Pressure>,
    }

    impl Default for Run {
        fn default() -> Self {
            Self {
                entry: |_| Entry::present(),
                child: |_| Some(Entry::present()),
                pressure: |_| None,
            }
        }
    }

    fn psi(avg10: f64, total_usec: u64) -> Pressure {
        Pressure::parse(&format!(
            "some avg10={avg10:.2} avg60=0.00 avg300=0.00 total={total_usec}\n"
        ))
        .unwrap()
    }

    fn effect_of(ops: &[Op], run: &Run) -> String {
        let (lab, a, b) = (g(), GroupPath::new("lab/a"), GroupPath::new("lab/b"));
        let kids = [&a, &b];
        let mut t = Timeline::default();
        let mut pending: Option<Pending> = None;
        for s in 0..=11u64 {
            let stamp = Stamp {
                at: Duration::from_secs(s),
                unix_s: s as f64,
            };
            let c = (run.child)(s);
            let mut groups = vec![(&lab, (run.entry)(s))];
            groups.extend(c.into_iter().flat_map(|e| [(&a, e), (&b, e)]));
            t.push(stamp, groups);
            let p = (run.pressure)(s);
            let now = Now {
                timeline: &t,
                at: stamp.at,
                present: true,
                inode: Some(7),
                children: if c.is_some() {
                    kids.to_vec()
                } else {
                    Vec::new()
                },
                memory_pressure: p.as_ref(),
                io_pressure: p.as_ref(),
            };
            if s == 5 {
                pending = Pending::start(
                    g(),
                    ops.to_vec(),
                    0,
                    each_side(Duration::from_secs(1)),
                    &now,
                );
                assert!(pending.is_some(), "{ops:?} has figures");
            } else if let Some(p) = &mut pending {
                if let Some(done) = p.on_refresh(&now) {
                    return line(&done);
                }
            }
        }
        panic!("not finished by 11 s")
    }

    /// CPU % `before` up to 5 s, `after` from 6 s (the straddling refresh
    /// at 6 s has a figure of its own that must not count).
    fn cpu_then(s: u64, before: f64, after: f64) -> f64 {
        match s {
            0..=5 => before,
            6 => 999.0,
            _ => after,
        }
    }

    #[test]
    fn the_words_for_each_kind_of_write() {
        let cpu = Run {
            entry: |s| {
                Entry::present()
                    .with(Figure::Cpu, Some(cpu_then(s, 98.0, 30.0)))
                    .with_throttled(Some(cpu_then(s, 0.0, 47.0)))
            },
            ..Run::default()
        };
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            effect_of(&[write::set_cpu_max(&g(), half)], &cpu),
            "cpu.max 50%: CPU 98.0% -> 30.0%, throttled 0.0% -> 47.0% (5 s each side)"
        );
        assert_eq!(
            effect_of(&[write::set_cpu_weight(&g(), 50)], &cpu),
            "cpu.weight 50: CPU 98.0% -> 30.0%, throttled 0.0% -> 47.0% (5 s each side)"
        );

        let mem = Run {
            entry: |s| {
                let gib = 1024.0 * 1024.0 * 1024.0;
                Entry::present().with(Figure::Memory, Some(cpu_then(s, 1.4 * gib, gib)))
            },
            // avg10 0.0 at the write; 12.3 % of the 5 s after it stalled
            pressure: |s| {
                Some(psi(
                    if s == 5 { 0.0 } else { 50.0 },
                    s.saturating_sub(6) * 123_000,
                ))
            },
            ..Run::default()
        };
        assert_eq!(
            effect_of(
                &[write::set_memory_limit(
                    &g(),
                    MemoryFile::High,
                    Limit::Value(1 << 30)
                )],
                &mem
            ),
            "memory.high 1G: memory 1.4G -> 1.0G, memory pressure 0.0% -> 12.3% (5 s each side)"
        );
        // a raw write to a memory file is a memory write; without the
        // group's pressure files the pressure has no figures
        let no_psi = Run {
            pressure: |_| None,
            ..mem
        };
        assert_eq!(
            effect_of(&[write::raw(&g(), "memory.low", "512M")], &no_psi),
            "memory.low 512M: memory 1.4G -> 1.0G, memory pressure: no figures (5 s each side)"
        );

        let io = Run {
            entry: |s| {
                Entry::present()
                    .with(
                        Figure::IoRead,
                        Some(cpu_then(s, 4.0 * 1024.0 * 1024.0, 2.0 * 1024.0 * 1024.0)),
                    )
                    .with(Figure::IoWrite, Some(0.0))
            },
            ..Run::default()
        };
        let set = IoMaxSet {
            dev: DevId { major: 8, minor: 0 },
            rbps: Some(Limit::Value(2 << 20)),
            wbps: None,
            riops: None,
            wiops: None,
        };
        assert_eq!(
            effect_of(&[write::set_io_max(&g(), set)], &io),
            "io.max 8:0 rbps=2097152: IO read 4.0M/s -> 2.0M/s, IO write 0/s -> 0/s, \
             IO pressure: no figures (5 s each side)"
        );

        let pids = Run {
            entry: |s| Entry::present().with(Figure::Pids, Some(cpu_then(s, 120.0, 50.0))),
            ..Run::default()
        };
        assert_eq!(
            effect_of(&[write::set_pids_max(&g(), Limit::Value(50))], &pids),
            "pids.max 50: PIDs 120 -> 50 (5 s each side)"
        );

        let freeze = Run {
            entry: |s| {
                Entry::present()
                    .with(Figure::Cpu, Some(cpu_then(s, 80.0, 0.0)))
                    .with_state(Some(true), Some(s > 5))
            },
            ..Run::default()
        };
        assert_eq!(
            effect_of(&[write::freeze(&g(), true)], &freeze),
            "freeze: CPU 80.0% -> 0.0%, frozen no -> yes (5 s each side)"
        );
        assert_eq!(
            effect_of(&[write::move_process(4242, &g(), false)], &freeze),
            "move process 4242: CPU 80.0% -> 0.0%, memory: no figures, PIDs: no figures \
             (5 s each side)"
        );

        // memory handed down: the children's memory.current appears
        let handed = Run {
            child: |s| {
                Some(if s > 5 {
                    Entry::present().with(Figure::Memory, Some(4096.0))
                } else {
                    Entry::present()
                })
            },
            ..Run::default()
        };
        let op = write::set_subtree_control(
            &g(),
            &[
                ControllerChange::enable("memory"),
                ControllerChange::enable("cpu"),
            ],
        );
        assert_eq!(
            effect_of(&[op], &handed),
            "cgroup.subtree_control +memory +cpu: children with memory figures 0 -> 2 \
             (5 s each side)"
        );
    }

    #[test]
    fn a_write_without_figures_has_no_effect() {
        assert!(measures(&write::create_group(&g())).is_empty());
        assert!(measures(&write::remove_group(&g())).is_empty());
        assert!(measures(&write::raw(&g(), "cgroup.max.depth", "3")).is_empty());
        let cpu_only = write::set_subtree_control(&g(), &[ControllerChange::enable("cpu")]);
        assert!(
            !Pending::has_figures(&[cpu_only]),
            "CPU % is there without it"
        );
        assert!(Pending::has_figures(&[write::raw(
            &g(),
            "cgroup.subtree_control",
            "+io"
        )]));
    }

    #[test]
    fn windows_hold_five_seconds_and_at_least_three_refreshes() {
        assert_eq!(each_side(Duration::from_secs(1)), 5);
        assert_eq!(each_side(Duration::from_millis(500)), 10);
        assert_eq!(each_side(Duration::from_secs(2)), 3);
        assert_eq!(each_side(Duration::from_secs(60)), 3);
        assert_eq!(each_side(Duration::from_millis(100)), 50);
    }

    #[test]
    fn a_missing_side_is_the_missing_mark() {
        let c = Compared {
            measure: Measure::Figure(Figure::Memory),
            before: None,
            after: Some(1024.0 * 1024.0),
        };
        assert_eq!(compared(&c), "memory - -> 1.0M");
        let none = Compared {
            measure: Measure::Pressure(Resource::Memory),
            before: None,
            after: None,
        };
        assert_eq!(compared(&none), "memory pressure: no figures");
    }
}
