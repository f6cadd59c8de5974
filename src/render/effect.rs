//! The words of an edit's effect (`model::effect`): the line the status
//! line, the log screen and the action log file show, with every figure
//! through [`super::units`] and every name from outside escaped
//! (`model::text`), e.g.
//!
//! ```text
//! cpu.max 30%: CPU 98.0% -> 29.9%, throttled 0.0% -> 68.2% (5 s each side)
//! memory.high 1G: memory 1.4G -> 1.0G, memory pressure 0.0% -> 12.3% (5 s each side)
//! ```
//!
//! A figure missing on one side is [`super::units::MISSING`]; one missing
//! on both is named with "no figures".

use super::units::{bytes_short, count_short, limit_count, limit_typed, pct, rate_short};
use crate::model::effect::{Compared, Effect, Measure, NotMeasured, Outcome, Resource, Span};
use crate::model::text::escape_str;
use crate::model::timeline::Figure;
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

/// The labels of a write's ops, joined.
pub fn ops_label(ops: &[Op]) -> String {
    ops.iter().map(op_label).collect::<Vec<_>>().join(", ")
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
        NotMeasured::Paused => "effect not measured: refreshes are paused",
        NotMeasured::NoRefresh => "effect not measured: no refresh before the write",
    }
}

/// The whole line: "cpu.max 30%: CPU 98.0% -> 29.9%, ... (5 s each side)".
pub fn line(e: &Effect) -> String {
    format!("{}: {}", ops_label(&e.ops), outcome_words(&e.outcome))
}

/// An effect still being measured: "effect in 4 refreshes", or that it
/// waits while refreshes are paused.
pub fn waiting(refreshes_left: usize, paused: bool) -> String {
    if paused {
        "effect waits: refreshes are paused".into()
    } else if refreshes_left == 1 {
        "effect after the next refresh".into()
    } else {
        format!("effect in {refreshes_left} refreshes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CpuMax, Limit};
    use crate::model::input::MemoryFile;
    use crate::model::write;
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
