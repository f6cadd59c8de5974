//! Reading one group in full: every interface file cgtop has a field for,
//! and the raw text of all of them. Used for the selected group on each
//! refresh and for every group in JSON mode.
//!
//! Every read goes through the hierarchy handle ([`Hier`]): beneath the
//! root, no symlink followed, regular files only, capped. A file that is
//! missing is `None` (a controller that is off); one that is there but
//! cannot be read is listed in `GroupDetail::unreadable` with why.

use super::hier::{FsError, Hier};
use crate::cgroupfs::{
    self, files, CgroupStat, Controllers, CpuMax, IoLatency, IoMax, IoWeight, Keyed, Limit,
    MemoryEvents, MemoryStat, Pressure,
};
use crate::model::{GroupDetail, KeyedFiles, Unreadable};
use std::cell::RefCell;
use std::path::Path;

/// Reads files of one group directory, keeping the errors that are not
/// "no such file".
struct Group<'a> {
    hier: &'a Hier,
    dir: &'a Path,
    errors: RefCell<Vec<Unreadable>>,
}

impl Group<'_> {
    fn read(&self, name: &str) -> Option<String> {
        match self.hier.read_text(&self.dir.join(name)) {
            Ok(t) => Some(t),
            Err(e) => {
                if !e.is_gone() {
                    self.errors.borrow_mut().push(Unreadable {
                        file: name.to_owned(),
                        error: e.to_string(),
                    });
                }
                None
            }
        }
    }

    fn limit(&self, name: &'static str) -> Option<Limit> {
        self.read(name).and_then(|t| Limit::parse(name, &t).ok())
    }

    fn number(&self, name: &'static str) -> Option<u64> {
        self.read(name)
            .and_then(|t| cgroupfs::parse_u64(name, &t).ok())
    }
}

/// Reads every file cgtop shows for one group. Missing files (a controller
/// that is off) are `None`; a group that vanished gives an empty detail.
/// `raw` also collects the text of every regular file in the directory.
pub fn read_detail(hier: &Hier, dir: &Path, raw: bool) -> GroupDetail {
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
    };
    let read = |name: &str| g.read(name);
    let limit = |name: &'static str| g.limit(name);
    let number = |name: &'static str| g.number(name);
    // the flat-keyed files are parsed twice from one read: into their
    // typed fields and into KeyedFiles, which keeps every key
    let keyed = |name: &str| read(name).map(|t| Keyed::parse(&t));
    let stat_text = read(files::STAT);
    let memory_stat_text = read(files::MEMORY_STAT);
    let memory_events_text = read(files::MEMORY_EVENTS);
    let mut d = GroupDetail {
        controllers: read(files::CONTROLLERS).map(|t| Controllers::parse(&t)),
        subtree_control: read(files::SUBTREE_CONTROL).map(|t| Controllers::parse(&t)),
        stat: stat_text.as_deref().map(CgroupStat::parse),
        freeze: read(files::FREEZE).map(|t| t.trim() == "1"),
        cpu_max: read(files::CPU_MAX).and_then(|t| CpuMax::parse(&t).ok()),
        cpu_max_burst: number(files::CPU_MAX_BURST),
        cpu_weight: read(files::CPU_WEIGHT).and_then(|t| t.trim().parse().ok()),
        cpu_weight_nice: read(files::CPU_WEIGHT_NICE).and_then(|t| t.trim().parse().ok()),
        memory_min: limit(files::MEMORY_MIN),
        memory_low: limit(files::MEMORY_LOW),
        memory_high: limit(files::MEMORY_HIGH),
        memory_max: limit(files::MEMORY_MAX),
        memory_peak: number(files::MEMORY_PEAK),
        swap_current: number(files::MEMORY_SWAP_CURRENT),
        swap_max: limit(files::MEMORY_SWAP_MAX),
        memory_stat: memory_stat_text.as_deref().map(MemoryStat::parse),
        memory_events: memory_events_text.as_deref().map(MemoryEvents::parse),
        io_max: read(files::IO_MAX).and_then(|t| IoMax::parse(&t).ok()),
        io_weight: read(files::IO_WEIGHT).and_then(|t| IoWeight::parse(&t).ok()),
        io_latency: read(files::IO_LATENCY).and_then(|t| IoLatency::parse(&t).ok()),
        pids_max: limit(files::PIDS_MAX),
        cpu_pressure: read(files::CPU_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        memory_pressure: read(files::MEMORY_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        io_pressure: read(files::IO_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
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
        pids: read(files::PROCS)
            .map(|t| cgroupfs::parse_pids(&t))
            .unwrap_or_default(),
        raw: Vec::new(),
        writable: Vec::new(),
        unreadable: Vec::new(),
    };
    d.unreadable = g.errors.take();
    if raw {
        d.raw = read_raw(hier, dir);
        d.writable = writable_files(hier, dir);
    }
    d
}

/// Files of the group with the owner's write bit (cgroupfs marks
/// read-only files 0444), sorted. Regular files only.
pub fn writable_files(hier: &Hier, dir: &Path) -> Vec<String> {
    let Ok(entries) = hier.list(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .into_iter()
        .filter(|e| e.is_file)
        .filter(|e| {
            hier.mode_of(&dir.join(&e.name))
                .is_ok_and(|m| m & 0o200 != 0)
        })
        // kernel interface files have ASCII names: a name that is not
        // text is no knob, and a lossy copy of it would name another file
        .filter_map(|e| e.name.into_string().ok())
        .collect();
    out.sort();
    out
}

/// Files that are write-only or whose read has a side effect or blocks:
/// never read them for the raw view.
const RAW_SKIP: &[&str] = &[files::KILL, "memory.reclaim", "cgroup.pressure"];

/// `grep . *` of a group: every file with its content, or why it was not
/// read (a FIFO, a symlink, a file over its cap: an error on that file).
pub fn read_raw(hier: &Hier, dir: &Path) -> Vec<(String, Result<String, String>)> {
    let Ok(entries) = hier.list(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Result<String, String>)> = entries
        .into_iter()
        .filter(|e| !e.is_dir)
        // kernel interface files have ASCII names: a name that is not
        // text is no knob, and a lossy copy of it would name another file
        .filter_map(|e| e.name.into_string().ok())
        .filter(|n| !RAW_SKIP.contains(&n.as_str()))
        .map(|n| {
            let v = hier
                .read_text(&dir.join(&n))
                .map(|t| t.trim_end().to_owned())
                .map_err(|e: FsError| e.to_string());
            (n, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// memory.max and memory.high of one group, for the effective-limit walk.
pub fn read_memory_limits(hier: &Hier, dir: &Path) -> (Option<Limit>, Option<Limit>) {
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
    };
    (g.limit(files::MEMORY_MAX), g.limit(files::MEMORY_HIGH))
}

/// pids.max of one group, to grade its process count.
pub fn read_pids_max(hier: &Hier, dir: &Path) -> Option<Limit> {
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
    };
    g.limit(files::PIDS_MAX)
}

/// cpu.max of one group, for the "who throttles me" line of the inspected group.
pub fn read_cpu_max(hier: &Hier, dir: &Path) -> Option<CpuMax> {
    hier.read_text(&dir.join(files::CPU_MAX))
        .ok()
        .and_then(|t| CpuMax::parse(&t).ok())
}

/// cpu.stat.local (Linux 6.6): `None` when the file cannot be read (an
/// older kernel, or the group vanished). It is empty, so without
/// throttled_usec, where the group has no cpu controller.
pub fn read_cpu_stat_local(hier: &Hier, dir: &Path) -> Option<cgroupfs::CpuStatLocal> {
    hier.read_text(&dir.join(files::CPU_STAT_LOCAL))
        .ok()
        .map(|t| cgroupfs::CpuStatLocal::parse(&t))
}

/// io.cost.qos and io.cost.model (only at the root).
pub fn read_io_cost(hier: &Hier, dir: &Path) -> Vec<(String, String)> {
    [files::IO_COST_QOS, files::IO_COST_MODEL]
        .iter()
        .filter_map(|n| {
            hier.read_text(&dir.join(n))
                .ok()
                .map(|t| ((*n).to_owned(), t.trim_end().to_owned()))
        })
        .collect()
}
