//! PURE: cgroup v1's writes: its files' values ([`Throttle`],
//! [`V1MemoryFile`], [`v1_limit`], [`throttle_value`]) and its builders,
//! each making the op for the hierarchy `h` that holds the controller
//! (`Layout::holder`); and the ops made in each hierarchy that holds a
//! group (a move, a mkdir, an rmdir) on a v1 or hybrid host.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{CpuMax, Limit};
use crate::model::host::layout::HierId;
use crate::model::write::builders::{move_process, write};
use crate::model::write::{Op, WriteKind};
use crate::model::GroupPath;

/// The v1 file names, kept with their parsers.
pub use crate::cgroupfs::v1_limits::files as v1_files;

/// One of the four blkio throttle files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttle {
    ReadBps,
    WriteBps,
    ReadIops,
    WriteIops,
}

impl Throttle {
    pub const ALL: [Self; 4] = [
        Self::ReadBps,
        Self::WriteBps,
        Self::ReadIops,
        Self::WriteIops,
    ];

    pub fn file(self) -> &'static str {
        match self {
            Self::ReadBps => v1_files::BLKIO_READ_BPS,
            Self::WriteBps => v1_files::BLKIO_WRITE_BPS,
            Self::ReadIops => v1_files::BLKIO_READ_IOPS,
            Self::WriteIops => v1_files::BLKIO_WRITE_IOPS,
        }
    }
}

/// A v1 memory limit file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1MemoryFile {
    Limit,
    MemswLimit,
    SoftLimit,
}

impl V1MemoryFile {
    pub fn file(self) -> &'static str {
        match self {
            Self::Limit => v1_files::MEMORY_LIMIT,
            Self::MemswLimit => v1_files::MEMSW_LIMIT,
            Self::SoftLimit => v1_files::MEMORY_SOFT_LIMIT,
        }
    }
}

/// A v1 byte limit as the kernel prints it: "no limit" is
/// PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages), any
/// value from 2^62 up is that.
pub fn v1_limit(text: &str) -> Option<Limit> {
    let t = text.trim();
    if t == "-1" {
        return Some(Limit::Max);
    }
    let v: u64 = t.parse().ok()?;
    Some(if v >= 1 << 62 {
        Limit::Max
    } else {
        Limit::Value(v)
    })
}

/// The value of `dev` in a blkio.throttle.* file ("MAJ:MIN N" lines, a
/// device without a rule absent); `None` when the text is not such a
/// file.
pub fn throttle_value(text: &str, dev: DevId) -> Option<Option<u64>> {
    let mut out = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (d, v) = line.trim().split_once(' ')?;
        let v: u64 = v.trim().parse().ok()?;
        if DevId::parse(d)? == dev {
            out = Some(v);
        }
    }
    Some(out)
}

/// blkio.throttle.*_device: "MAJ:MIN N", `None` writes 0 (removes).
pub fn set_blkio_throttle(
    group: &GroupPath,
    h: HierId,
    which: Throttle,
    dev: DevId,
    limit: Option<u64>,
) -> Op {
    write(
        group,
        which.file(),
        format!("{dev} {}", limit.unwrap_or(0)),
        WriteKind::BlkioThrottle { which, dev, limit },
    )
    .on(h)
}

/// blkio.weight, or blkio.bfq.weight with `bfq` (what the kernel has).
pub fn set_blkio_weight(group: &GroupPath, h: HierId, bfq: bool, weight: u32) -> Op {
    let file = if bfq {
        v1_files::BLKIO_BFQ_WEIGHT
    } else {
        v1_files::BLKIO_WEIGHT
    };
    write(
        group,
        file,
        weight.to_string(),
        WriteKind::BlkioWeight(weight),
    )
    .on(h)
}

/// cpu.cfs_quota_us; `None` writes -1 (no quota).
pub fn set_cfs_quota(group: &GroupPath, h: HierId, quota_us: Option<u64>) -> Op {
    let contents = quota_us.map_or_else(|| "-1".to_owned(), |q| q.to_string());
    write(
        group,
        v1_files::CPU_CFS_QUOTA,
        contents,
        WriteKind::CfsQuota(quota_us),
    )
    .on(h)
}

pub fn set_cfs_period(group: &GroupPath, h: HierId, period_us: u64) -> Op {
    write(
        group,
        v1_files::CPU_CFS_PERIOD,
        period_us.to_string(),
        WriteKind::CfsPeriod(period_us),
    )
    .on(h)
}

/// A v2 cpu.max value on v1: the period first, then the quota, so the
/// quota is never judged against the old period. `period_now` is the
/// group's cpu.cfs_period_us: when it is the same, only the quota is
/// written.
pub fn set_cfs(group: &GroupPath, h: HierId, v: CpuMax, period_now: Option<u64>) -> Vec<Op> {
    let mut ops = Vec::new();
    if period_now != Some(v.period) {
        ops.push(set_cfs_period(group, h, v.period));
    }
    ops.push(set_cfs_quota(group, h, v.quota));
    ops
}

pub fn set_cpu_shares(group: &GroupPath, h: HierId, shares: u64) -> Op {
    write(
        group,
        v1_files::CPU_SHARES,
        shares.to_string(),
        WriteKind::CpuShares(shares),
    )
    .on(h)
}

/// memory.limit_in_bytes and friends; "max" is written as -1.
pub fn set_v1_memory(group: &GroupPath, h: HierId, file: V1MemoryFile, limit: Limit) -> Op {
    let contents = match limit {
        Limit::Max => "-1".to_owned(),
        Limit::Value(v) => v.to_string(),
    };
    write(
        group,
        file.file(),
        contents,
        WriteKind::V1Memory(file, limit),
    )
    .on(h)
}

/// memory.limit_in_bytes and memory.memsw.limit_in_bytes together, in the
/// order the kernel takes them: it refuses (EINVAL) a limit above memsw
/// and a memsw below the limit at every moment
/// (mm/memcontrol-v1.c `mem_cgroup_resize_max`), so a rise writes memsw
/// first and a cut writes the limit first. `limit_now` is the group's
/// memory.limit_in_bytes.
pub fn set_v1_memory_pair(
    group: &GroupPath,
    h: HierId,
    limit: Limit,
    memsw: Limit,
    limit_now: Limit,
) -> Vec<Op> {
    let l = set_v1_memory(group, h, V1MemoryFile::Limit, limit);
    let m = set_v1_memory(group, h, V1MemoryFile::MemswLimit, memsw);
    let rising = match (limit, limit_now) {
        (Limit::Max, Limit::Max) => false,
        (Limit::Max, _) => true,
        (_, Limit::Max) => false,
        (Limit::Value(a), Limit::Value(b)) => a > b,
    };
    if rising {
        vec![m, l]
    } else {
        vec![l, m]
    }
}

/// freezer.state: FROZEN or THAWED. The kernel shows FREEZING until every
/// task has stopped (cgroup-v1/freezer-subsystem.rst).
pub fn set_freezer(group: &GroupPath, h: HierId, frozen: bool) -> Op {
    let contents = if frozen { "FROZEN" } else { "THAWED" };
    write(
        group,
        v1_files::FREEZER_STATE,
        contents.to_owned(),
        WriteKind::FreezerState(frozen),
    )
    .on(h)
}

/// A process into `target` in hierarchy `h`: cgroup.procs, or for one
/// thread v1's `tasks` (v1 has no cgroup.threads).
pub fn move_process_in(pid: u32, target: &GroupPath, threads: bool, h: HierId) -> Op {
    match (h, threads) {
        (HierId::V1(_), true) => write(
            target,
            v1_files::TASKS,
            pid.to_string(),
            WriteKind::MoveProcess { pid, threads },
        )
        .on(h),
        _ => move_process(pid, target, threads).on(h),
    }
}

/// The ops that make (or remove) a group in each of `hiers`, in that
/// order (a removal goes in the reverse order, so that the primary
/// hierarchy, first, is removed last).
pub fn create_group_in(path: &GroupPath, hiers: &[HierId]) -> Vec<Op> {
    hiers
        .iter()
        .map(|&h| Op::CreateGroup(path.clone(), h, None))
        .collect()
}

pub fn remove_group_in(path: &GroupPath, hiers: &[HierId]) -> Vec<Op> {
    hiers
        .iter()
        .rev()
        .map(|&h| Op::RemoveGroup(path.clone(), h, None))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::test_ops::{g, SDA};
    use crate::model::write::{create_group, raw, remove_group, Mover, WriteEffect};

    #[test]
    fn v1_ops_name_their_hierarchy_and_undo_there() {
        let a = g("job");
        let h = HierId::V1(3);
        let t = set_blkio_throttle(&a, h, Throttle::WriteBps, SDA, Some(1 << 20));
        let w = t.as_write().unwrap();
        assert_eq!(
            (w.file.as_str(), w.contents.as_str(), w.hier),
            ("blkio.throttle.write_bps_device", "8:0 1048576", h)
        );
        // undo from the file's old text: no rule for 8:0 before, so 0
        assert_eq!(
            t.undo(Some("8:16 100\n")),
            Some(set_blkio_throttle(&a, h, Throttle::WriteBps, SDA, None))
        );
        assert_eq!(
            t.undo(Some("8:0 2048\n")),
            Some(set_blkio_throttle(
                &a,
                h,
                Throttle::WriteBps,
                SDA,
                Some(2048)
            ))
        );
        assert_eq!(
            set_blkio_throttle(&a, h, Throttle::ReadIops, SDA, None)
                .as_write()
                .unwrap()
                .contents,
            "8:0 0"
        );
        let w = t.as_write().unwrap();
        assert_eq!(w.check_readback("8:0 1048576\n"), None);
        assert!(w.check_readback("").is_some());
        // CFS: -1 is no quota
        let q = set_cfs_quota(&a, h, None);
        assert_eq!(q.as_write().unwrap().contents, "-1");
        assert_eq!(
            q.undo(Some("50000\n")),
            Some(set_cfs_quota(&a, h, Some(50_000)))
        );
        assert_eq!(
            set_cfs(
                &a,
                h,
                CpuMax {
                    quota: Some(25_000),
                    period: 50_000
                },
                Some(100_000)
            ),
            [
                set_cfs_period(&a, h, 50_000),
                set_cfs_quota(&a, h, Some(25_000))
            ]
        );
        // memory: max is -1; the kernel's page-counter maximum reads as max
        let m = set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Value(1 << 26));
        assert_eq!(
            m.undo(Some("9223372036854771712\n")),
            Some(set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Max))
        );
        assert_eq!(
            set_v1_memory(&a, h, V1MemoryFile::Limit, Limit::Max)
                .as_write()
                .unwrap()
                .check_readback("9223372036854771712"),
            None
        );
        let rise = set_v1_memory_pair(
            &a,
            h,
            Limit::Value(200),
            Limit::Value(400),
            Limit::Value(100),
        );
        assert_eq!(
            rise[0].as_write().unwrap().file,
            "memory.memsw.limit_in_bytes"
        );
        let cut = set_v1_memory_pair(&a, h, Limit::Value(50), Limit::Value(60), Limit::Value(100));
        assert_eq!(cut[0].as_write().unwrap().file, "memory.limit_in_bytes");
        let unl = set_v1_memory_pair(&a, h, Limit::Max, Limit::Max, Limit::Value(100));
        assert_eq!(
            unl[0].as_write().unwrap().file,
            "memory.memsw.limit_in_bytes"
        );
        // freezer: FREEZING is on its way, not a different value
        let f = set_freezer(&a, h, true);
        assert!(f.is_destructive());
        assert_eq!(f.effect(), WriteEffect::Freeze);
        assert_eq!(f.as_write().unwrap().check_readback("FREEZING\n"), None);
        assert_eq!(f.undo(Some("THAWED\n")), Some(set_freezer(&a, h, false)));
        assert_eq!(
            raw(&a, "freezer.state", " FROZEN\n").effect(),
            WriteEffect::Freeze
        );
        assert_eq!(
            raw(&a, "freezer.state", "frozen").effect(),
            WriteEffect::Other
        );
        assert_eq!(
            raw(&a, "freezer.state", "THAWED").effect(),
            WriteEffect::Thaw
        );
        // a pid to v1's tasks moves one thread
        assert_eq!(
            raw(&a, "tasks", "7").effect(),
            WriteEffect::Move {
                who: Mover::Pid(7),
                threads: true
            }
        );
        // a move's undo goes back in the same hierarchy
        let mv = move_process_in(7, &a, false, h);
        assert_eq!(
            mv.undo(Some("other")),
            Some(move_process_in(7, &g("other"), false, h))
        );
        // create and remove, in each hierarchy; removal in reverse
        let hs = [HierId::V2, HierId::V1(0), HierId::V1(1)];
        let made = create_group_in(&a, &hs);
        assert_eq!(made[2], create_group(&a).on(HierId::V1(1)));
        assert_eq!(made[1].undo(None), Some(remove_group(&a).on(HierId::V1(0))));
        let gone = remove_group_in(&a, &hs);
        assert_eq!(gone.last().unwrap().hier(), HierId::V2);
        assert_eq!(gone[0].hier(), HierId::V1(1));
    }
}
