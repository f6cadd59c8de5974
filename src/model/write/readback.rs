//! PURE: whether the kernel's read-back matches what was written: which
//! ops are read back ([`Op::reads_back`]) and, when the kernel stored
//! something else (page rounding, clamping, a nice value's nearest
//! weight, systemd's hundredths of a percent), the sentence that says so
//! ([`WriteOp::check_readback`]).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::{Controllers, CpuMax, IoLatency, IoMax, IoWeight, Limit};
use crate::model::tree::text::escape_str;
use crate::model::write::{throttle_value, v1_limit, Op, Via, WriteKind, WriteOp};

impl Op {
    /// Whether the file is read back after the write to see what the kernel
    /// stored.
    pub fn reads_back(&self) -> bool {
        self.as_write()
            .is_some_and(|w| !matches!(w.kind, WriteKind::Kill | WriteKind::MoveProcess { .. }))
    }
}

impl WriteOp {
    /// A sentence when the kernel stored something other than what was
    /// written (page rounding, clamping, nice approximation), `None` when
    /// it matches or cannot be judged.
    pub fn check_readback(&self, readback: &str) -> Option<String> {
        let rb = readback.trim();
        let differs = |stored: &str, why: &str| {
            // through systemd, systemd chose the bytes: a CPUQuota= is a
            // percentage to two decimals, so a quota between two of them
            // lands on the one below (systemd.resource-control(5))
            let (stored, file, contents) = (
                escape_str(stored),
                escape_str(&self.file),
                escape_str(&self.contents),
            );
            Some(match (&self.via, &self.kind) {
                (Via::Direct, _) => {
                    format!("the kernel stored {stored} in {file}, not {contents}{why}")
                }
                (Via::Systemd { .. }, kind) => {
                    let why = match kind {
                        WriteKind::CpuMax(_) => {
                            " (systemd takes CPUQuota= in hundredths of a percent)"
                        }
                        _ => why,
                    };
                    format!("after systemctl {file} holds {stored}, not {contents}{why}")
                }
            })
        };
        match &self.kind {
            WriteKind::Kill | WriteKind::MoveProcess { .. } => None,
            WriteKind::CpuMax(v) => match CpuMax::parse(rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, ""),
            },
            WriteKind::Memory(_, v) => match Limit::parse("memory", rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, " (it keeps whole pages)"),
            },
            WriteKind::PidsMax(v) => match Limit::parse("pids.max", rb) {
                Ok(s) if s == *v => None,
                _ => differs(rb, ""),
            },
            WriteKind::CpuWeightNice(_) => {
                (rb != self.contents).then_some(())?;
                differs(rb, " (a nice value stands for the nearest weight)")
            }
            // FREEZING is on the way to FROZEN: the writer waits for it
            // and says so when it has not settled
            WriteKind::FreezerState(true) if rb == "FREEZING" => None,
            WriteKind::CpuMaxBurst(_)
            | WriteKind::CpuWeight(_)
            | WriteKind::Freeze(_)
            | WriteKind::FreezerState(_)
            | WriteKind::BlkioWeight(_)
            | WriteKind::CfsPeriod(_)
            | WriteKind::CpuShares(_)
            | WriteKind::CfsQuota(Some(_)) => {
                (rb != self.contents).then_some(())?;
                differs(rb, "")
            }
            WriteKind::BlkioThrottle { dev, limit, .. } => {
                let got = throttle_value(rb, *dev)?;
                (got != *limit).then_some(())?;
                differs(
                    &got.map_or_else(|| format!("no rule for {dev}"), |v| format!("{dev} {v}")),
                    "",
                )
            }
            WriteKind::CfsQuota(None) => {
                (rb != "-1").then_some(())?;
                differs(rb, "")
            }
            WriteKind::V1Memory(_, v) => match v1_limit(rb) {
                Some(s) if s == *v => None,
                _ => differs(rb, " (it keeps whole pages)"),
            },

            WriteKind::IoMax(set) => {
                let dev = set.dev;
                let now = IoMax::parse(rb).ok()?;
                let e = now
                    .get(dev)
                    .copied()
                    .unwrap_or_else(|| crate::cgroupfs::io::IoMaxDev::unlimited(dev));
                let got = [e.rbps, e.wbps, e.riops, e.wiops];
                let want = [set.rbps, set.wbps, set.riops, set.wiops];
                let same = got.iter().zip(want).all(|(g, w)| w.is_none_or(|w| w == *g));
                if same {
                    None
                } else {
                    differs(&e.to_string(), "")
                }
            }
            WriteKind::IoWeight { dev, weight } => {
                let now = IoWeight::parse(rb).ok()?;
                let got = match dev {
                    None => Some(now.default),
                    Some(d) => now.overrides.iter().find(|(x, _)| x == d).map(|(_, w)| *w),
                };
                if got == *weight {
                    None
                } else {
                    let shown = match (dev, got) {
                        (None, Some(w)) => format!("default {w}"),
                        (Some(d), Some(w)) => format!("{d} {w}"),
                        (Some(d), None) => format!("no override for {d}"),
                        (None, None) => "no default weight".to_owned(),
                    };
                    differs(&shown, "")
                }
            }
            WriteKind::IoLatency { dev, target_usec } => {
                let now = IoLatency::parse(rb).ok()?;
                let got = now.get(*dev).filter(|t| *t != 0);
                if got == *target_usec {
                    None
                } else {
                    let shown = got.map_or_else(
                        || format!("no target for {dev}"),
                        |t| format!("{dev} target={t}"),
                    );
                    differs(&shown, "")
                }
            }
            WriteKind::SubtreeControl(changes) => {
                let now = Controllers::parse(rb);
                let ok = changes.iter().all(|c| now.contains(&c.name) == c.enable);
                if ok {
                    None
                } else {
                    differs(&format!("{rb:?}"), "")
                }
            }
            WriteKind::Raw => {
                if rb == self.contents.trim() || rb.contains('\n') {
                    None
                } else {
                    differs(rb, "")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::input::{ControllerChange, IoMaxSet, MemoryFile};
    use crate::model::write::test_ops::{g, SDA};
    use crate::model::write::{
        freeze, kill, move_process, raw, reset_io_weight, set_cpu_max, set_cpu_weight,
        set_cpu_weight_nice, set_io_latency, set_io_max, set_io_weight, set_memory_limit,
        set_pids_max, set_subtree_control,
    };

    #[test]
    fn readback_checks() {
        let a = g("a");
        let w = |o: Op| match o {
            Op::Write(w) => w,
            _ => unreachable!(),
        };
        let m = w(set_memory_limit(&a, MemoryFile::Max, Limit::Value(1000)));
        assert_eq!(
            m.check_readback("0\n").as_deref(),
            Some("the kernel stored 0 in memory.max, not 1000 (it keeps whole pages)")
        );
        assert_eq!(
            w(set_memory_limit(&a, MemoryFile::Max, Limit::Value(4096))).check_readback("4096\n"),
            None
        );
        assert_eq!(
            w(set_memory_limit(&a, MemoryFile::Max, Limit::Max)).check_readback("max\n"),
            None
        );
        let c = w(set_cpu_max(
            &a,
            CpuMax {
                quota: Some(50_000),
                period: 100_000,
            },
        ));
        assert_eq!(c.check_readback("50000 100000\n"), None);
        assert_eq!(
            c.check_readback("max 100000\n").as_deref(),
            Some("the kernel stored max 100000 in cpu.max, not 50000 100000")
        );
        assert_eq!(
            w(set_cpu_weight_nice(&a, 3)).check_readback("2\n").as_deref(),
            Some("the kernel stored 2 in cpu.weight.nice, not 3 (a nice value stands for the nearest weight)")
        );
        assert_eq!(w(set_cpu_weight(&a, 5)).check_readback("5\n"), None);
        assert_eq!(w(freeze(&a, true)).check_readback("1\n"), None);
        assert_eq!(
            w(set_pids_max(&a, Limit::Max)).check_readback("max\n"),
            None
        );
    }

    #[test]
    fn readback_checks_io_and_core() {
        let a = g("a");
        let w = |o: Op| match o {
            Op::Write(w) => w,
            _ => unreachable!(),
        };
        // io.max: only the keys written are compared
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(100)),
            wbps: None,
            riops: None,
            wiops: None,
        };
        let io = w(set_io_max(&a, set));
        assert_eq!(
            io.check_readback("8:0 rbps=100 wbps=7 riops=max wiops=max\n"),
            None
        );
        assert_eq!(
            io.check_readback("").as_deref(),
            Some("the kernel stored 8:0 rbps=max wbps=max riops=max wiops=max in io.max, not 8:0 rbps=100")
        );
        let iops = IoMaxSet {
            dev: SDA,
            rbps: None,
            wbps: None,
            riops: Some(Limit::Max),
            wiops: None,
        };
        assert_eq!(w(set_io_max(&a, iops)).check_readback(""), None);
        assert_eq!(
            w(set_io_weight(&a, None, 200)).check_readback("default 200\n8:0 5\n"),
            None
        );
        assert_eq!(
            w(set_io_weight(&a, Some(SDA), 200))
                .check_readback("default 100\n")
                .as_deref(),
            Some("the kernel stored no override for 8:0 in io.weight, not 8:0 200")
        );
        assert_eq!(
            w(reset_io_weight(&a, SDA)).check_readback("default 100\n"),
            None
        );
        assert_eq!(
            w(set_io_latency(&a, SDA, Some(10))).check_readback("8:0 target=10\n"),
            None
        );
        assert_eq!(w(set_io_latency(&a, SDA, None)).check_readback(""), None);
        assert_eq!(
            w(set_io_latency(&a, SDA, None)).check_readback("8:0 target=0\n"),
            None
        );
        assert_eq!(
            w(set_io_latency(&a, SDA, Some(10)))
                .check_readback("")
                .as_deref(),
            Some("the kernel stored no target for 8:0 in io.latency, not 8:0 target=10")
        );
        let sc = w(set_subtree_control(
            &a,
            &[
                ControllerChange::enable("hugetlb"),
                ControllerChange::disable("pids"),
            ],
        ));
        assert_eq!(sc.check_readback("cpu hugetlb\n"), None);
        assert_eq!(
            sc.check_readback("cpu\n").as_deref(),
            Some("the kernel stored \"cpu\" in cgroup.subtree_control, not +hugetlb -pids")
        );
        assert_eq!(
            w(raw(&a, "memory.oom.group", "1")).check_readback("1\n"),
            None
        );
        assert_eq!(
            w(raw(&a, "memory.oom.group", "1"))
                .check_readback("0\n")
                .as_deref(),
            Some("the kernel stored 0 in memory.oom.group, not 1")
        );
        assert_eq!(
            w(raw(&a, "io.bfq.weight", "8:0 5")).check_readback("default 100\n8:0 6"),
            None
        );
        assert_eq!(w(kill(&a)).check_readback(""), None);
        assert_eq!(w(move_process(5, &a, false)).check_readback(""), None);
    }
}
