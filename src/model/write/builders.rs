//! PURE: the builders of cgroup2 ops, one per action: each makes the
//! exact [`Op`] an action writes (the file, the bytes, and the typed
//! [`WriteKind`] that undo, read-back and the systemd mapping work from),
//! in cgroup2; [`Op::on`] moves one to another hierarchy. The v1 builders
//! are in `v1`.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{files, CpuMax, Limit};
use crate::model::host::layout::HierId;
use crate::model::tree::path::PathError;
use crate::model::write::input::{ControllerChange, IoMaxSet, MemoryFile};
use crate::model::write::{Op, Via, WriteKind, WriteOp};
use crate::model::GroupPath;

/// A write to cgroup2; [`Op::on`] moves it to another hierarchy.
pub(super) fn write(group: &GroupPath, file: &str, contents: String, kind: WriteKind) -> Op {
    Op::Write(WriteOp {
        group: group.clone(),
        file: file.to_owned(),
        contents,
        kind,
        hier: HierId::V2,
        via: Via::Direct,
        ino: None,
        freezer_ino: None,
    })
}

/// cpu.max: always both fields, so the period never depends on what the
/// file held before.
pub fn set_cpu_max(group: &GroupPath, v: CpuMax) -> Op {
    write(group, files::CPU_MAX, v.to_string(), WriteKind::CpuMax(v))
}

pub fn set_cpu_max_burst(group: &GroupPath, usec: u64) -> Op {
    write(
        group,
        files::CPU_MAX_BURST,
        usec.to_string(),
        WriteKind::CpuMaxBurst(usec),
    )
}

pub fn set_cpu_weight(group: &GroupPath, weight: u32) -> Op {
    write(
        group,
        files::CPU_WEIGHT,
        weight.to_string(),
        WriteKind::CpuWeight(weight),
    )
}

pub fn set_cpu_weight_nice(group: &GroupPath, nice: i32) -> Op {
    write(
        group,
        files::CPU_WEIGHT_NICE,
        nice.to_string(),
        WriteKind::CpuWeightNice(nice),
    )
}

/// memory.min/low/high/max or memory.swap.max.
pub fn set_memory_limit(group: &GroupPath, file: MemoryFile, limit: Limit) -> Op {
    write(
        group,
        file.file(),
        limit.to_string(),
        WriteKind::Memory(file, limit),
    )
}

pub fn set_io_max(group: &GroupPath, set: IoMaxSet) -> Op {
    write(group, files::IO_MAX, set.to_string(), WriteKind::IoMax(set))
}

/// io.weight: "default N" for `dev: None`, "MAJ:MIN N" for one device.
pub fn set_io_weight(group: &GroupPath, dev: Option<DevId>, weight: u32) -> Op {
    let contents = match dev {
        None => format!("default {weight}"),
        Some(d) => format!("{d} {weight}"),
    };
    write(
        group,
        files::IO_WEIGHT,
        contents,
        WriteKind::IoWeight {
            dev,
            weight: Some(weight),
        },
    )
}

/// io.weight: drops one device's override, so the default applies again.
pub fn reset_io_weight(group: &GroupPath, dev: DevId) -> Op {
    write(
        group,
        files::IO_WEIGHT,
        format!("{dev} default"),
        WriteKind::IoWeight {
            dev: Some(dev),
            weight: None,
        },
    )
}

/// io.latency "MAJ:MIN target=USEC"; `None` writes "target=max", which
/// the kernel reads as "no target" (block/blk-iolatency.c).
pub fn set_io_latency(group: &GroupPath, dev: DevId, target_usec: Option<u64>) -> Op {
    let contents = match target_usec {
        Some(t) => format!("{dev} target={t}"),
        None => format!("{dev} target=max"),
    };
    write(
        group,
        files::IO_LATENCY,
        contents,
        WriteKind::IoLatency { dev, target_usec },
    )
}

pub fn set_pids_max(group: &GroupPath, limit: Limit) -> Op {
    write(
        group,
        files::PIDS_MAX,
        limit.to_string(),
        WriteKind::PidsMax(limit),
    )
}

/// cgroup.subtree_control: every change in ONE write, so that the kernel
/// applies all or none (admin guide 4-3, cgroup.subtree_control).
pub fn set_subtree_control(group: &GroupPath, changes: &[ControllerChange]) -> Op {
    let contents = changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    write(
        group,
        files::SUBTREE_CONTROL,
        contents,
        WriteKind::SubtreeControl(changes.to_vec()),
    )
}

/// cgroup.freeze: `true` freezes the group and everything below it.
pub fn freeze(group: &GroupPath, frozen: bool) -> Op {
    write(
        group,
        files::FREEZE,
        if frozen { "1" } else { "0" }.to_owned(),
        WriteKind::Freeze(frozen),
    )
}

/// cgroup.kill: SIGKILL to every process in the group and below.
pub fn kill(group: &GroupPath) -> Op {
    write(group, files::KILL, "1".to_owned(), WriteKind::Kill)
}

/// Moves a whole process (cgroup.procs) or one thread (cgroup.threads)
/// into `target`. One pid per write (admin guide 2-2-1).
pub fn move_process(pid: u32, target: &GroupPath, threads: bool) -> Op {
    let file = if threads {
        files::THREADS
    } else {
        files::PROCS
    };
    write(
        target,
        file,
        pid.to_string(),
        WriteKind::MoveProcess { pid, threads },
    )
}

/// Any other file, written as typed (one line).
pub fn raw(group: &GroupPath, file: &str, line: &str) -> Op {
    write(group, file, line.to_owned(), WriteKind::Raw)
}

pub fn create_group(path: &GroupPath) -> Op {
    Op::CreateGroup(path.clone(), HierId::V2, None)
}

pub fn remove_group(path: &GroupPath) -> Op {
    Op::RemoveGroup(path.clone(), HierId::V2, None)
}

/// The ops that make `group` able to hand domain controllers to its
/// children when it holds processes itself (the no internal process rule,
/// admin guide 2-4-3): create the leaf child, move each process into it,
/// then change the controllers. The writer re-reads the pids as it goes.
pub fn leaf_fix_plan(
    group: &GroupPath,
    leaf: &str,
    pids: &[u32],
    changes: &[ControllerChange],
) -> Result<Vec<Op>, PathError> {
    let leaf_path = group.join(leaf)?;
    let mut ops = vec![create_group(&leaf_path)];
    ops.extend(pids.iter().map(|&p| move_process(p, &leaf_path, false)));
    ops.push(set_subtree_control(group, changes));
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::test_ops::{g, op, SDA};

    #[test]
    fn builders_make_exact_ops() {
        let a = g("a/b");
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, half),
            op("a/b", "cpu.max", "50000 100000", WriteKind::CpuMax(half))
        );
        let unl = CpuMax {
            quota: None,
            period: 100_000,
        };
        assert_eq!(
            set_cpu_max(&a, unl),
            op("a/b", "cpu.max", "max 100000", WriteKind::CpuMax(unl))
        );
        assert_eq!(
            set_cpu_max_burst(&a, 20_000),
            op(
                "a/b",
                "cpu.max.burst",
                "20000",
                WriteKind::CpuMaxBurst(20_000)
            )
        );
        assert_eq!(
            set_cpu_weight(&a, 200),
            op("a/b", "cpu.weight", "200", WriteKind::CpuWeight(200))
        );
        assert_eq!(
            set_cpu_weight_nice(&a, -5),
            op("a/b", "cpu.weight.nice", "-5", WriteKind::CpuWeightNice(-5))
        );
        for (f, name) in [
            (MemoryFile::Min, "memory.min"),
            (MemoryFile::Low, "memory.low"),
            (MemoryFile::High, "memory.high"),
            (MemoryFile::Max, "memory.max"),
            (MemoryFile::SwapMax, "memory.swap.max"),
        ] {
            assert_eq!(
                set_memory_limit(&a, f, Limit::Value(1 << 30)),
                op(
                    "a/b",
                    name,
                    "1073741824",
                    WriteKind::Memory(f, Limit::Value(1 << 30))
                )
            );
            assert_eq!(
                set_memory_limit(&a, f, Limit::Max),
                op("a/b", name, "max", WriteKind::Memory(f, Limit::Max))
            );
        }
    }

    #[test]
    fn io_builders_make_exact_ops() {
        let a = g("a/b");
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(2_097_152)),
            wbps: None,
            riops: None,
            wiops: Some(Limit::Max),
        };
        assert_eq!(
            set_io_max(&a, set),
            op(
                "a/b",
                "io.max",
                "8:0 rbps=2097152 wiops=max",
                WriteKind::IoMax(set)
            )
        );
        assert_eq!(
            set_io_weight(&a, None, 150),
            op(
                "a/b",
                "io.weight",
                "default 150",
                WriteKind::IoWeight {
                    dev: None,
                    weight: Some(150)
                }
            )
        );
        assert_eq!(
            set_io_weight(&a, Some(SDA), 50),
            op(
                "a/b",
                "io.weight",
                "8:0 50",
                WriteKind::IoWeight {
                    dev: Some(SDA),
                    weight: Some(50)
                }
            )
        );
        assert_eq!(
            reset_io_weight(&a, SDA),
            op(
                "a/b",
                "io.weight",
                "8:0 default",
                WriteKind::IoWeight {
                    dev: Some(SDA),
                    weight: None
                }
            )
        );
        assert_eq!(
            set_io_latency(&a, SDA, Some(10_000)),
            op(
                "a/b",
                "io.latency",
                "8:0 target=10000",
                WriteKind::IoLatency {
                    dev: SDA,
                    target_usec: Some(10_000)
                }
            )
        );
        assert_eq!(
            set_io_latency(&a, SDA, None),
            op(
                "a/b",
                "io.latency",
                "8:0 target=max",
                WriteKind::IoLatency {
                    dev: SDA,
                    target_usec: None
                }
            )
        );
    }

    #[test]
    fn core_builders_make_exact_ops() {
        let a = g("a/b");
        assert_eq!(
            set_pids_max(&a, Limit::Value(64)),
            op(
                "a/b",
                "pids.max",
                "64",
                WriteKind::PidsMax(Limit::Value(64))
            )
        );
        assert_eq!(
            set_pids_max(&a, Limit::Max),
            op("a/b", "pids.max", "max", WriteKind::PidsMax(Limit::Max))
        );
        let ch = vec![
            ControllerChange::enable("cpu"),
            ControllerChange::enable("memory"),
            ControllerChange::disable("io"),
        ];
        assert_eq!(
            set_subtree_control(&a, &ch),
            op(
                "a/b",
                "cgroup.subtree_control",
                "+cpu +memory -io",
                WriteKind::SubtreeControl(ch.clone())
            )
        );
        assert_eq!(
            freeze(&a, true),
            op("a/b", "cgroup.freeze", "1", WriteKind::Freeze(true))
        );
        assert_eq!(
            freeze(&a, false),
            op("a/b", "cgroup.freeze", "0", WriteKind::Freeze(false))
        );
        assert_eq!(kill(&a), op("a/b", "cgroup.kill", "1", WriteKind::Kill));
        assert_eq!(
            move_process(4242, &a, false),
            op(
                "a/b",
                "cgroup.procs",
                "4242",
                WriteKind::MoveProcess {
                    pid: 4242,
                    threads: false
                }
            )
        );
        assert_eq!(
            move_process(4243, &a, true),
            op(
                "a/b",
                "cgroup.threads",
                "4243",
                WriteKind::MoveProcess {
                    pid: 4243,
                    threads: true
                }
            )
        );
        assert_eq!(
            raw(&a, "memory.oom.group", "1"),
            op("a/b", "memory.oom.group", "1", WriteKind::Raw)
        );
        assert_eq!(create_group(&a), create_group(&g("a/b")));
        assert_eq!(remove_group(&a), remove_group(&g("a/b")));
    }

    #[test]
    fn leaf_fix_plan_order() {
        let plan = leaf_fix_plan(
            &g("job"),
            "leaf",
            &[10, 11],
            &[ControllerChange::enable("memory")],
        )
        .unwrap();
        assert_eq!(
            plan,
            vec![
                create_group(&g("job/leaf")),
                move_process(10, &g("job/leaf"), false),
                move_process(11, &g("job/leaf"), false),
                op(
                    "job",
                    "cgroup.subtree_control",
                    "+memory",
                    WriteKind::SubtreeControl(vec![ControllerChange::enable("memory")])
                ),
            ]
        );
    }
}
