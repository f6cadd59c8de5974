//! Reading one group in full: every interface file cgtop has a field for,
//! and the raw text of all of them. Used for the selected group on each
//! refresh and for every group in JSON mode.

use crate::cgroupfs::{
    self, files, CgroupStat, Controllers, CpuMax, IoLatency, IoMax, IoWeight, Keyed, Limit,
    MemoryEvents, MemoryStat, Pressure,
};
use crate::model::{GroupDetail, KeyedFiles};
use std::path::Path;

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

fn limit(dir: &Path, name: &'static str) -> Option<Limit> {
    read(dir, name).and_then(|t| Limit::parse(name, &t).ok())
}

fn number(dir: &Path, name: &'static str) -> Option<u64> {
    read(dir, name).and_then(|t| cgroupfs::parse_u64(name, &t).ok())
}

/// Reads every file cgtop shows for one group. Missing files (a controller
/// that is off) are `None`; a group that vanished gives an empty detail.
/// `raw` also collects the text of every regular file in the directory.
/// The flat-keyed files are parsed twice from one read: into their typed
/// fields and into [`KeyedFiles`], which keeps every key.
pub fn read_detail(dir: &Path, raw: bool) -> GroupDetail {
    let keyed = |name| read(dir, name).map(|t| Keyed::parse(&t));
    let stat_text = read(dir, files::STAT);
    let memory_stat_text = read(dir, files::MEMORY_STAT);
    let memory_events_text = read(dir, files::MEMORY_EVENTS);
    let mut d = GroupDetail {
        controllers: read(dir, files::CONTROLLERS).map(|t| Controllers::parse(&t)),
        subtree_control: read(dir, files::SUBTREE_CONTROL).map(|t| Controllers::parse(&t)),
        stat: stat_text.as_deref().map(CgroupStat::parse),
        freeze: read(dir, files::FREEZE).map(|t| t.trim() == "1"),
        cpu_max: read(dir, files::CPU_MAX).and_then(|t| CpuMax::parse(&t).ok()),
        cpu_max_burst: number(dir, files::CPU_MAX_BURST),
        cpu_weight: read(dir, files::CPU_WEIGHT).and_then(|t| t.trim().parse().ok()),
        cpu_weight_nice: read(dir, files::CPU_WEIGHT_NICE).and_then(|t| t.trim().parse().ok()),
        memory_min: limit(dir, files::MEMORY_MIN),
        memory_low: limit(dir, files::MEMORY_LOW),
        memory_high: limit(dir, files::MEMORY_HIGH),
        memory_max: limit(dir, files::MEMORY_MAX),
        memory_peak: number(dir, files::MEMORY_PEAK),
        swap_current: number(dir, files::MEMORY_SWAP_CURRENT),
        swap_max: limit(dir, files::MEMORY_SWAP_MAX),
        memory_stat: memory_stat_text.as_deref().map(MemoryStat::parse),
        memory_events: memory_events_text.as_deref().map(MemoryEvents::parse),
        io_max: read(dir, files::IO_MAX).and_then(|t| IoMax::parse(&t).ok()),
        io_weight: read(dir, files::IO_WEIGHT).and_then(|t| IoWeight::parse(&t).ok()),
        io_latency: read(dir, files::IO_LATENCY).and_then(|t| IoLatency::parse(&t).ok()),
        pids_max: limit(dir, files::PIDS_MAX),
        cpu_pressure: read(dir, files::CPU_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        memory_pressure: read(dir, files::MEMORY_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        io_pressure: read(dir, files::IO_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        keyed: KeyedFiles {
            cgroup_stat: stat_text.as_deref().map(Keyed::parse),
            cpu_stat: keyed(files::CPU_STAT),
            cpu_stat_local: keyed(files::CPU_STAT_LOCAL),
            memory_stat: memory_stat_text.as_deref().map(Keyed::parse),
            memory_events: memory_events_text.as_deref().map(Keyed::parse),
            memory_events_local: keyed(files::MEMORY_EVENTS_LOCAL),
            memory_swap_events: keyed(files::MEMORY_SWAP_EVENTS),
            pids_events: keyed(files::PIDS_EVENTS),
        },
        pids: read(dir, files::PROCS)
            .map(|t| cgroupfs::parse_pids(&t))
            .unwrap_or_default(),
        raw: Vec::new(),
        writable: Vec::new(),
    };
    if raw {
        d.raw = read_raw(dir);
        d.writable = writable_files(dir);
    }
    d
}

/// Files of the group with the owner's write bit (cgroupfs marks
/// read-only files 0444), sorted.
pub fn writable_files(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o200 != 0)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Files that are write-only or whose read has a side effect or blocks:
/// never read them for the raw view.
const RAW_SKIP: &[&str] = &[files::KILL, "memory.reclaim", "cgroup.pressure"];

/// `grep . *` of a group: every regular file with its content.
pub fn read_raw(dir: &Path) -> Vec<(String, Result<String, String>)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Result<String, String>)> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !RAW_SKIP.contains(&n.as_str()))
        .map(|n| {
            let v = std::fs::read_to_string(dir.join(&n))
                .map(|t| t.trim_end().to_owned())
                .map_err(|e| e.to_string());
            (n, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// memory.max and memory.high of one group, for the effective-limit walk.
pub fn read_memory_limits(dir: &Path) -> (Option<Limit>, Option<Limit>) {
    (
        limit(dir, files::MEMORY_MAX),
        limit(dir, files::MEMORY_HIGH),
    )
}

/// io.cost.qos and io.cost.model (only at the root).
pub fn read_io_cost(dir: &Path) -> Vec<(String, String)> {
    [files::IO_COST_QOS, files::IO_COST_MODEL]
        .iter()
        .filter_map(|n| read(dir, n).map(|t| ((*n).to_owned(), t.trim_end().to_owned())))
        .collect()
}
