//! PURE: what an op risks: whether it must be confirmed first
//! ([`Op::confirm_reason`]), and how it is taken back: which file's old
//! value the writer reads before it ([`Op::undo_source`]) and the op that
//! restores that value ([`Op::undo`]), in the same hierarchy, and through
//! systemd when the op went that way.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::{files, parse_u64, Controllers, CpuMax, IoLatency, IoMax, IoWeight, Limit};
use crate::model::write::input::{ControllerChange, IoMaxSet};
use crate::model::write::{
    freeze, move_process_in, raw, remove_group, reset_io_weight, set_blkio_throttle,
    set_blkio_weight, set_cfs_period, set_cfs_quota, set_cpu_max, set_cpu_max_burst,
    set_cpu_shares, set_cpu_weight, set_freezer, set_io_latency, set_io_max, set_io_weight,
    set_memory_limit, set_pids_max, set_subtree_control, set_v1_memory, throttle_value, v1_files,
    v1_limit, Op, Via, WriteKind,
};
use crate::model::GroupPath;

impl Op {
    /// Why this op must be confirmed first, or `None` when it can run at
    /// once. Limits and weights are undoable and need no confirmation.
    pub fn confirm_reason(&self) -> Option<&'static str> {
        match self {
            Self::RemoveGroup(..) => Some("removing a group cannot be undone"),
            Self::CreateGroup(..) => None,
            Self::Write(w) => match &w.kind {
                WriteKind::Kill => Some("every process in the group and below is killed"),
                WriteKind::Freeze(true) | WriteKind::FreezerState(true) => Some(
                    "every process in the group and below stops until the group is thawed",
                ),
                WriteKind::MoveProcess { .. } => Some(
                    "the process leaves its group and its limits; its memory stays charged to the old group",
                ),
                // Disabling a controller deletes its interface files in
                // every child, and with them the children's settings
                // (admin guide 2-4-1).
                WriteKind::SubtreeControl(c) if c.iter().any(|c| !c.enable) => Some(
                    "disabling a controller removes its files, and the limits set in them, from every child",
                ),
                _ => None,
            },
        }
    }

    pub fn is_destructive(&self) -> bool {
        self.confirm_reason().is_some()
    }

    /// The file whose old value undo needs, read before the write; `None`
    /// when there is no undo to build from a value.
    pub fn undo_source(&self) -> Option<&str> {
        let w = self.as_write()?;
        match w.kind {
            WriteKind::Kill | WriteKind::MoveProcess { .. } => None,
            // cpu.weight.nice reads back only approximately (the nearest
            // nice of the weight), so the exact cpu.weight is kept instead
            WriteKind::CpuWeightNice(_) => Some(files::CPU_WEIGHT),
            _ => Some(&w.file),
        }
    }

    /// Whether the op can be taken back at all: a kill and a remove
    /// cannot; a move can (back to the group the writer saw it in), as can
    /// every write whose file is read before it.
    pub fn can_undo(&self) -> bool {
        match self {
            Self::CreateGroup(..) => true,
            Self::RemoveGroup(..) => false,
            Self::Write(w) => {
                matches!(w.kind, WriteKind::MoveProcess { .. }) || self.undo_source().is_some()
            }
        }
    }

    /// The op that restores the state before this one, from `old`: the text
    /// of [`Self::undo_source`] read before the write. Kill, move and
    /// remove have no undo; create's undo is remove.
    ///
    /// The undo of a write made through systemd goes through systemd too
    /// (systemd would otherwise put the undone value back at the next
    /// daemon-reload), where systemd has a property for it; where it has
    /// none (a device weight back to the default), it is a direct write.
    pub fn undo(&self, old: Option<&str>) -> Option<Op> {
        // the way back is in the same hierarchy, held to the same
        // directory (a move's way back names another group, and a
        // create's removes the group made, not its parent: by path)
        let back = self.undo_v2(old).map(|o| {
            let ino = (o.held_group() == self.held_group())
                .then(|| self.ino())
                .flatten();
            o.on(self.hier()).of_group(ino)
        })?;
        match self.as_write().map(|w| &w.via) {
            Some(Via::Systemd { device }) => {
                let device = device.clone();
                Some(
                    back.clone()
                        .through_systemd(device.as_deref())
                        .unwrap_or(back),
                )
            }
            _ => Some(back),
        }
    }

    fn undo_v2(&self, old: Option<&str>) -> Option<Op> {
        let w = match self {
            Self::CreateGroup(p, ..) => return Some(remove_group(p)),
            Self::RemoveGroup(..) => return None,
            Self::Write(w) => w,
        };
        let old = old?;
        let g = &w.group;
        match &w.kind {
            WriteKind::Kill => None,
            // `old` is the group the process was in (the writer read it
            // from /proc/PID/cgroup, relative to the view): back there
            WriteKind::MoveProcess { pid, threads } => GroupPath::parse(old.as_bytes())
                .ok()
                .filter(|from| from != g)
                .map(|from| move_process_in(*pid, &from, *threads, w.hier)),
            WriteKind::BlkioThrottle { which, dev, .. } => {
                let was = throttle_value(old, *dev)?;
                Some(set_blkio_throttle(g, w.hier, *which, *dev, was))
            }
            WriteKind::BlkioWeight(_) => old
                .trim()
                .parse()
                .ok()
                .map(|v| set_blkio_weight(g, w.hier, w.file == v1_files::BLKIO_BFQ_WEIGHT, v)),
            WriteKind::CfsQuota(_) => match old.trim() {
                "-1" => Some(set_cfs_quota(g, w.hier, None)),
                t => t.parse().ok().map(|q| set_cfs_quota(g, w.hier, Some(q))),
            },
            WriteKind::CfsPeriod(_) => old
                .trim()
                .parse()
                .ok()
                .map(|p| set_cfs_period(g, w.hier, p)),
            WriteKind::CpuShares(_) => old
                .trim()
                .parse()
                .ok()
                .map(|v| set_cpu_shares(g, w.hier, v)),
            WriteKind::V1Memory(f, _) => v1_limit(old).map(|l| set_v1_memory(g, w.hier, *f, l)),
            // FREEZING: a freeze asked for and not yet done; back to it
            WriteKind::FreezerState(_) => match old.trim() {
                "FROZEN" | "FREEZING" => Some(set_freezer(g, w.hier, true)),
                "THAWED" => Some(set_freezer(g, w.hier, false)),
                _ => None,
            },
            WriteKind::CpuMax(_) => CpuMax::parse(old).ok().map(|v| set_cpu_max(g, v)),
            WriteKind::CpuMaxBurst(_) => parse_u64("cpu.max.burst", old)
                .ok()
                .map(|v| set_cpu_max_burst(g, v)),
            WriteKind::CpuWeight(_) | WriteKind::CpuWeightNice(_) => {
                old.trim().parse().ok().map(|v| set_cpu_weight(g, v))
            }
            WriteKind::Memory(f, _) => Limit::parse(f.file(), old)
                .ok()
                .map(|v| set_memory_limit(g, *f, v)),
            WriteKind::PidsMax(_) => Limit::parse("pids.max", old)
                .ok()
                .map(|v| set_pids_max(g, v)),
            WriteKind::IoMax(set) => {
                let was = IoMax::parse(old).ok()?;
                let dev = set.dev;
                let e = was
                    .get(dev)
                    .copied()
                    .unwrap_or_else(|| crate::cgroupfs::io::IoMaxDev::unlimited(dev));
                Some(set_io_max(
                    g,
                    IoMaxSet {
                        dev,
                        rbps: Some(e.rbps),
                        wbps: Some(e.wbps),
                        riops: Some(e.riops),
                        wiops: Some(e.wiops),
                    },
                ))
            }
            WriteKind::IoWeight { dev, .. } => {
                let was = IoWeight::parse(old).ok()?;
                Some(match dev {
                    None => set_io_weight(g, None, was.default),
                    Some(d) => match was.overrides.iter().find(|(x, _)| x == d) {
                        Some((_, w)) => set_io_weight(g, Some(*d), *w),
                        None => reset_io_weight(g, *d),
                    },
                })
            }
            WriteKind::IoLatency { dev, .. } => {
                let was = IoLatency::parse(old).ok()?;
                Some(set_io_latency(g, *dev, was.get(*dev)))
            }
            WriteKind::SubtreeControl(changes) => {
                let was = Controllers::parse(old);
                let back: Vec<ControllerChange> = changes
                    .iter()
                    .filter(|c| was.contains(&c.name) != c.enable)
                    .map(|c| ControllerChange {
                        name: c.name.clone(),
                        enable: was.contains(&c.name),
                    })
                    .collect();
                (!back.is_empty()).then(|| set_subtree_control(g, &back))
            }
            WriteKind::Freeze(_) => match old.trim() {
                "1" => Some(freeze(g, true)),
                "0" => Some(freeze(g, false)),
                _ => None,
            },
            WriteKind::Raw => {
                let t = old.trim();
                // a nested-keyed or multi-line file takes one key per write:
                // the whole old text cannot be written back in one go
                (!t.is_empty() && !t.contains('\n')).then(|| raw(g, &w.file, t))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::input::MemoryFile;
    use crate::model::write::test_ops::{g, op, SDA};
    use crate::model::write::{create_group, kill, move_process, set_cpu_weight_nice};

    #[test]
    fn confirmations() {
        let a = g("a");
        assert!(kill(&a).is_destructive());
        assert!(remove_group(&a).is_destructive());
        assert!(freeze(&a, true).is_destructive());
        assert!(!freeze(&a, false).is_destructive());
        assert!(move_process(1, &a, false).is_destructive());
        assert!(!create_group(&a).is_destructive());
        assert!(!set_memory_limit(&a, MemoryFile::Max, Limit::Value(1)).is_destructive());
        assert!(!set_subtree_control(&a, &[ControllerChange::enable("cpu")]).is_destructive());
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::disable("memory")]).confirm_reason(),
            Some("disabling a controller removes its files, and the limits set in them, from every child")
        );
        assert_eq!(
            kill(&a).confirm_reason(),
            Some("every process in the group and below is killed")
        );
    }

    #[test]
    fn an_undo_is_held_to_the_group_its_write_was_held_to() {
        let a = g("a");
        let limit = |v| set_memory_limit(&a, MemoryFile::Max, Limit::Value(v));
        // the way back goes to the group the write went to, or nowhere
        assert_eq!(
            limit(1).of_group(Some(7)).undo(Some("2\n")),
            Some(limit(2).of_group(Some(7)))
        );
        // by path as the write was
        assert_eq!(limit(1).undo(Some("2\n")), Some(limit(2)));
        // a move's way back names the group it came from: by its path
        let back = move_process(5, &a, false)
            .of_group(Some(7))
            .undo(Some("/b"))
            .unwrap();
        assert_eq!(back.group(), &g("b"));
        assert_eq!(back.ino(), None);
        // a create is held to its parent's directory: its undo removes
        // the group made, whose inode is not the parent's, by path
        let made = create_group(&g("a/new")).of_group(Some(7));
        assert_eq!(made.held_group(), Some(a.clone()));
        assert_eq!(made.undo(None), Some(remove_group(&g("a/new"))));
    }

    #[test]
    fn undo_from_old_values() {
        let a = g("a");
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, half).undo(Some("max 100000\n")),
            Some(set_cpu_max(
                &a,
                CpuMax {
                    quota: None,
                    period: 100_000
                }
            ))
        );
        assert_eq!(
            set_cpu_max_burst(&a, 5).undo(Some("0\n")),
            Some(set_cpu_max_burst(&a, 0))
        );
        assert_eq!(
            set_cpu_weight(&a, 5).undo(Some("100\n")),
            Some(set_cpu_weight(&a, 100))
        );
        // nice is undone through the exact weight
        let nice = set_cpu_weight_nice(&a, 5);
        assert_eq!(nice.undo_source(), Some("cpu.weight"));
        assert_eq!(nice.undo(Some("150\n")), Some(set_cpu_weight(&a, 150)));
        assert_eq!(
            set_memory_limit(&a, MemoryFile::High, Limit::Value(1)).undo(Some("max\n")),
            Some(set_memory_limit(&a, MemoryFile::High, Limit::Max))
        );
        assert_eq!(
            set_pids_max(&a, Limit::Value(5)).undo(Some("100\n")),
            Some(set_pids_max(&a, Limit::Value(100)))
        );
    }

    #[test]
    fn a_move_is_undone_to_the_group_it_came_from() {
        let to = g("a/b");
        let mv = move_process(42, &to, true);
        assert_eq!(mv.undo(Some("a")), Some(move_process(42, &g("a"), true)));
        // from the view's root ("")
        assert_eq!(
            mv.undo(Some("")),
            Some(move_process(42, &GroupPath::root(), true))
        );
        // already there, or unknown: nothing to take back
        assert_eq!(mv.undo(Some("a/b")), None);
        assert_eq!(mv.undo(None), None);
        assert!(mv.can_undo());
        assert!(!kill(&to).can_undo());
        assert!(!remove_group(&to).can_undo());
    }

    #[test]
    fn undo_io_and_core() {
        let a = g("a");
        // io.max: the old line of that device, all four keys; none = all max
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(100)),
            wbps: None,
            riops: None,
            wiops: None,
        };
        assert_eq!(
            set_io_max(&a, set).undo(Some("8:0 rbps=max wbps=5000 riops=max wiops=max\n8:16 rbps=1 wbps=max riops=max wiops=max\n")),
            Some(op(
                "a",
                "io.max",
                "8:0 rbps=max wbps=5000 riops=max wiops=max",
                WriteKind::IoMax(IoMaxSet {
                    dev: SDA,
                    rbps: Some(Limit::Max),
                    wbps: Some(Limit::Value(5000)),
                    riops: Some(Limit::Max),
                    wiops: Some(Limit::Max)
                })
            ))
        );
        let back = set_io_max(&a, set).undo(Some("")).unwrap();
        assert_eq!(
            back.as_write().unwrap().contents,
            "8:0 rbps=max wbps=max riops=max wiops=max"
        );
        // io.weight: default, device override present, and absent
        assert_eq!(
            set_io_weight(&a, None, 500).undo(Some("default 100\n8:0 50\n")),
            Some(set_io_weight(&a, None, 100))
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 500).undo(Some("default 100\n8:0 50\n")),
            Some(set_io_weight(&a, Some(SDA), 50))
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 500).undo(Some("default 100\n")),
            Some(reset_io_weight(&a, SDA))
        );
        // io.latency
        assert_eq!(
            set_io_latency(&a, SDA, Some(5)).undo(Some("8:0 target=10000\n")),
            Some(set_io_latency(&a, SDA, Some(10_000)))
        );
        assert_eq!(
            set_io_latency(&a, SDA, Some(5)).undo(Some("")),
            Some(set_io_latency(&a, SDA, None))
        );
        // subtree_control: only what changed is put back
        let ch = [
            ControllerChange::enable("cpu"),
            ControllerChange::enable("io"),
            ControllerChange::disable("pids"),
        ];
        assert_eq!(
            set_subtree_control(&a, &ch).undo(Some("io pids\n")),
            Some(set_subtree_control(
                &a,
                &[
                    ControllerChange::disable("cpu"),
                    ControllerChange::enable("pids")
                ]
            ))
        );
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::enable("io")]).undo(Some("io\n")),
            None
        );
        assert_eq!(freeze(&a, true).undo(Some("0\n")), Some(freeze(&a, false)));
        assert_eq!(freeze(&a, false).undo(Some("1\n")), Some(freeze(&a, true)));
        assert_eq!(
            raw(&a, "memory.oom.group", "1").undo(Some("0\n")),
            Some(raw(&a, "memory.oom.group", "0"))
        );
        assert_eq!(
            raw(&a, "io.bfq.weight", "8:0 5").undo(Some("default 100\n8:0 5\n")),
            None
        );
        // no undo
        assert_eq!(kill(&a).undo(Some("")), None);
        assert_eq!(kill(&a).undo_source(), None);
        // a move back to where it already is: nothing to take back
        assert_eq!(move_process(1, &a, false).undo(Some("a")), None);
        assert_eq!(remove_group(&a).undo(None), None);
        assert_eq!(create_group(&a).undo(None), Some(remove_group(&a)));
        // unreadable or garbled old values give no undo rather than a wrong one
        assert_eq!(set_cpu_weight(&a, 5).undo(None), None);
        assert_eq!(
            set_cpu_max(
                &a,
                CpuMax {
                    quota: Some(1000),
                    period: 1000
                }
            )
            .undo(Some("garbage")),
            None
        );
        assert_eq!(freeze(&a, true).undo(Some("")), None);
    }
}
