//! Reading one group in full: every interface file cgtop has a field for,
//! and the raw text of all of them. Used for the selected group on each
//! refresh and for every group in JSON mode.
//!
//! Every read goes through the hierarchy handle ([`Hier`]): beneath the
//! root, no symlink followed, regular files only, capped. A file that is
//! missing is `None` (a controller that is off); one that is there but
//! cannot be read is listed in `GroupDetail::unreadable` with why.

use super::hier::{read_capped, FsError, Hier, Hiers};
use crate::cgroupfs::v1_limits::{
    self, files as v1, BlkioWeight, CfsQuota, CpuShares, FreezerState, MemLimitV1, MemoryStatV1,
    OomControl, ThrottleDevices,
};
use crate::cgroupfs::{
    self, files, CgroupStat, Controllers, CpuMax, IoLatency, IoMax, IoWeight, Keyed, Limit,
    MemoryEvents, MemoryStat, Pressure,
};
use crate::model::host::layout::{HierId, HierSet};
use crate::model::{DetailSources, FreezerV1, GroupDetail, KeyedFiles, Unreadable};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Reads files of one group directory, keeping the errors that are not
/// "no such file".
struct Group<'a> {
    hier: &'a Hier,
    dir: &'a Path,
    errors: RefCell<Vec<Unreadable>>,
    /// Whole texts the raw page's reading of this refresh already read,
    /// sorted by name: parsed from there, not read a second time.
    read_before: &'a [(String, String)],
    /// The exporter's descriptors kept between readings: read through
    /// them where there is one (none: open, read, close).
    kept: Option<&'a KeptReads>,
}

impl Group<'_> {
    fn read(&self, name: &str) -> Option<String> {
        if let Ok(i) = (self.read_before).binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            return Some(self.read_before[i].1.clone());
        }
        // not read before (the raw page is off, the file is not listed or
        // its read failed): read it, and say why not where it fails
        let rel = self.dir.join(name);
        let got = match self.kept {
            Some(k) => k.read_text(self.hier, rel, name),
            None => self.hier.read_text(&rel),
        };
        match got {
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
    read_detail_kept(hier, dir, raw, None)
}

/// [`read_detail`] through `kept`'s descriptors where given.
fn read_detail_kept(hier: &Hier, dir: &Path, raw: bool, kept: Option<&KeptReads>) -> GroupDetail {
    // the raw page first: every file it reads is parsed from that text
    // (the inspected group is read every refresh: about 29 of its ~50
    // files were opened and read twice)
    let (raw_files, writable, texts) = if raw {
        read_raw_texts(hier, dir, kept)
    } else {
        Default::default()
    };
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
        read_before: &texts,
        kept,
    };
    let read = |name: &str| g.read(name);
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
        cpu_max_burst: number(files::CPU_MAX_BURST),
        cpu_weight_nice: read(files::CPU_WEIGHT_NICE).and_then(|t| t.trim().parse().ok()),
        memory_peak: number(files::MEMORY_PEAK),
        memory_stat: memory_stat_text.as_deref().map(MemoryStat::parse),
        io_weight: read(files::IO_WEIGHT).and_then(|t| IoWeight::parse(&t).ok()),
        io_latency: read(files::IO_LATENCY).and_then(|t| IoLatency::parse(&t).ok()),
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
        // the limits, memory.events and pressure: the exposition's part
        ..exported(&g, memory_events_text.as_deref(), &|_| true, true)
    };
    d.unreadable = g.errors.take();
    if raw {
        (d.raw, d.writable) = (raw_files, writable);
        d.raw_primary = d.raw.len();
    }
    d
}

/// Reads the files of one group that the Prometheus exposition shows
/// (`render::openmetrics`: limits, memory.events, pressure) and nothing
/// else: 13 files where [`read_detail`] reads about 29 (no memory.stat,
/// no keyed copies, no process list). One hierarchy (a pure v2 layout);
/// the hot figures come from the scan, and so does the swap in use
/// (memory.swap.current: the export reading's scan reads it,
/// `Collector::set_export_reading`).
/// `kept`: the exporter's descriptors, kept from one reading to the next.
pub fn read_export(hier: &Hier, dir: &Path, kept: Option<&KeptReads>) -> GroupDetail {
    read_export_where(hier, dir, kept, |_| true)
}

/// [`read_export`] of the files of the controllers `here` says this
/// hierarchy may hold (and the pressure files, which are cgroup2's own).
fn read_export_where(
    hier: &Hier,
    dir: &Path,
    kept: Option<&KeptReads>,
    here: impl Fn(&str) -> bool,
) -> GroupDetail {
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
        read_before: &[],
        kept,
    };
    let events = if here("memory") {
        g.read(files::MEMORY_EVENTS)
    } else {
        None
    };
    let mut d = exported(&g, events.as_deref(), &here, false);
    d.unreadable = g.errors.take();
    d
}

/// The exposition's files of `g` (see [`read_export`]), the part of
/// [`read_detail`] both share; memory.events' text is read by the caller
/// (read_detail keeps its keyed copy from the same read); `swap`:
/// memory.swap.current too (the exposition takes the scan's).
fn exported(
    g: &Group,
    memory_events: Option<&str>,
    here: &dyn Fn(&str) -> bool,
    swap: bool,
) -> GroupDetail {
    let read = |name: &str| g.read(name);
    let (cpu, memory, io, pids) = (here("cpu"), here("memory"), here("io"), here("pids"));
    let limit = |on: bool, name: &'static str| if on { g.limit(name) } else { None };
    GroupDetail {
        cpu_max: (cpu.then(|| read(files::CPU_MAX)).flatten()).and_then(|t| CpuMax::parse(&t).ok()),
        cpu_weight: (cpu.then(|| read(files::CPU_WEIGHT)).flatten())
            .and_then(|t| t.trim().parse().ok()),
        memory_min: limit(memory, files::MEMORY_MIN),
        memory_low: limit(memory, files::MEMORY_LOW),
        memory_high: limit(memory, files::MEMORY_HIGH),
        memory_max: limit(memory, files::MEMORY_MAX),
        swap_current: (memory && swap)
            .then(|| g.number(files::MEMORY_SWAP_CURRENT))
            .flatten(),
        swap_max: limit(memory, files::MEMORY_SWAP_MAX),
        memory_events: memory_events.map(MemoryEvents::parse),
        io_max: (io.then(|| read(files::IO_MAX)).flatten()).and_then(|t| IoMax::parse(&t).ok()),
        pids_max: limit(pids, files::PIDS_MAX),
        cpu_pressure: read(files::CPU_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        memory_pressure: read(files::MEMORY_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        io_pressure: read(files::IO_PRESSURE).and_then(|t| Pressure::parse(&t).ok()),
        ..GroupDetail::default()
    }
}

/// Reads one group in full on any layout: the primary hierarchy's files
/// as [`read_detail`] does, then, on a host with cgroup v1 hierarchies,
/// each v1 controller's files from the hierarchy holding it
/// ([`Hiers::holder`]), into the v2 field of the same meaning where there
/// is one and the v1 fields otherwise, with where each came from
/// ([`GroupDetail::hierarchies`]). `raw` lists the files of every hierarchy
/// the group is in: the primary's under their names, a v1 hierarchy's as
/// `label:file` (`memory:memory.limit_in_bytes`). A pure v2 layout reads
/// exactly what [`read_detail`] reads.
pub fn read_detail_layout(hiers: &Hiers, dir: &Path, raw: bool) -> GroupDetail {
    read_detail_paged(hiers, dir, raw, procfs::page_size())
}

/// [`read_detail_layout`] with the host's page size given (it decides
/// which number a v1 memory limit prints for "no limit").
pub fn read_detail_paged(hiers: &Hiers, dir: &Path, raw: bool, page_size: u64) -> GroupDetail {
    read_layout(hiers, dir, raw, page_size, false, None, None)
}

/// [`read_detail_layout`] of the inspected group, read every refresh:
/// every file through `kept`'s descriptors (pread at offset 0, no open,
/// `fstat` and close a file), within its room.
pub fn read_detail_layout_kept(
    hiers: &Hiers,
    dir: &Path,
    raw: bool,
    kept: &KeptReads,
) -> GroupDetail {
    read_layout(
        hiers,
        dir,
        raw,
        procfs::page_size(),
        false,
        None,
        Some(kept),
    )
}

/// [`read_export`] on any layout (`cgtop serve` and `--openmetrics` on a
/// hybrid or v1 host): what the exposition shows and nothing else, each
/// controller's files from the hierarchy holding it as
/// [`read_detail_layout`] reads them (the same figures: a test compares
/// the two expositions), but no memory.stat, no weights, soft limits,
/// failcnt, freezer or process list: about 30 files a group where the
/// full reading opens about 60.
pub fn read_export_layout(hiers: &Hiers, dir: &Path, kept: Option<&KeptReads>) -> GroupDetail {
    read_layout(hiers, dir, false, procfs::page_size(), true, None, kept)
}

/// [`read_export_layout`] of a group the scan of this refresh found in the
/// hierarchies `held` (its `hot.v1.held_in`, every hierarchy listed): no
/// directory opened in each hierarchy to find out whether it has the
/// group (the scrape of a hybrid host with 10 hierarchies: 10 opens, 10
/// `fstat` and 10 closes a group less).
pub fn read_export_held(
    hiers: &Hiers,
    dir: &Path,
    held: HierSet,
    kept: Option<&KeptReads>,
) -> GroupDetail {
    read_layout(
        hiers,
        dir,
        false,
        procfs::page_size(),
        true,
        Some(held),
        kept,
    )
}

/// [`read_detail_paged`], or with `export` only the exposition's files;
/// `held`: the hierarchies known to have the group (else each is asked);
/// `kept`: the exporter's kept descriptors.
fn read_layout(
    hiers: &Hiers,
    dir: &Path,
    raw: bool,
    page_size: u64,
    export: bool,
    held: Option<HierSet>,
    kept: Option<&KeptReads>,
) -> GroupDetail {
    let Some(primary_id) = hiers.layout.primary() else {
        return GroupDetail::default();
    };
    let Some(primary) = hiers.get(primary_id) else {
        return GroupDetail::default();
    };
    let mut d = if export {
        // a controller bound to a v1 hierarchy has no files in cgroup2
        // (a controller is in one hierarchy at a time): not looked for
        let elsewhere = |c: &str| hiers.layout.holder(c).is_some_and(|id| id != primary_id);
        read_export_where(primary, dir, kept, |c| !elsewhere(c))
    } else {
        read_detail_kept(primary, dir, raw, kept)
    };
    if hiers.layout.v1.is_empty() {
        return d;
    }
    let label = |id: HierId| match id {
        HierId::V2 => "v2".to_owned(),
        HierId::V1(i) => hiers
            .layout
            .v1
            .get(i)
            .map_or_else(|| "v1".to_owned(), |m| format!("v1:{}", m.label())),
    };
    // whether each hierarchy has the group: as the scan found it, else
    // one open per hierarchy
    let present: Vec<(HierId, bool)> = std::iter::once(HierId::V2)
        .chain((0..hiers.layout.v1.len()).map(HierId::V1))
        .map(|id| {
            let here = match held {
                Some(set) => set.contains(id) && hiers.get(id).is_some(),
                None => hiers.get(id).is_some_and(|h| h.dir_ino(dir).is_ok()),
            };
            (id, here)
        })
        .collect();
    let has_group = |id: HierId| present.iter().any(|&(i, here)| i == id && here);
    let mut sources = DetailSources::default();
    let mut errors: Vec<Unreadable> = Vec::new();
    // where the group is in the holder of a controller, its name
    let held = |c: &str| -> Option<(HierId, Group<'_>)> {
        let (id, h) = hiers.holder(c)?;
        if !has_group(id) {
            return None;
        }
        Some((
            id,
            Group {
                hier: h,
                dir,
                errors: RefCell::new(Vec::new()),
                read_before: &[],
                kept,
            },
        ))
    };
    let read_from = |c: &str, sources_slot: &mut Option<String>| {
        let g = held(c)?;
        *sources_slot = Some(label(g.0));
        Some(g)
    };
    if let Some((id, g)) = read_from("cpu", &mut sources.cpu) {
        if id != HierId::V2 {
            v1_cpu(&g, &mut d, export);
        }
        errors.extend(tagged(&label(id), primary_id == id, g.errors.take()));
    }
    sources.cpuacct = held("cpuacct").map(|(id, _)| label(id));
    if let Some((id, g)) = read_from("memory", &mut sources.memory) {
        if id != HierId::V2 {
            v1_memory(&g, &mut d, page_size, export);
        }
        errors.extend(tagged(&label(id), primary_id == id, g.errors.take()));
    }
    if let Some((id, g)) = read_from("io", &mut sources.io) {
        if id != HierId::V2 {
            v1_blkio(&g, &mut d, export);
        }
        errors.extend(tagged(&label(id), primary_id == id, g.errors.take()));
    }
    if let Some((id, g)) = read_from("pids", &mut sources.pids) {
        if id != HierId::V2 {
            d.pids_max = g.limit(v1::PIDS_MAX);
        }
        errors.extend(tagged(&label(id), primary_id == id, g.errors.take()));
    }
    if let Some((id, g)) = read_from("freezer", &mut sources.freezer) {
        // the exposition's frozen label is the scan's freezer.state
        if id != HierId::V2 && !export {
            v1_freezer(&g, &mut d);
        }
        errors.extend(tagged(&label(id), primary_id == id, g.errors.take()));
    }
    // processes: the primary's list; a group only in v1 hierarchies lists
    // them in the first of those that has it (every v1 hierarchy lists
    // each process once, in one group)
    if has_group(primary_id) {
        sources.procs = Some(label(primary_id));
    } else if export {
        // the exposition counts processes from the scan
    } else if let Some((id, h)) = hiers
        .v1()
        .find(|(id, _, _)| has_group(*id))
        .map(|(id, _, h)| (id, h))
    {
        let g = Group {
            hier: h,
            dir,
            errors: RefCell::new(Vec::new()),
            read_before: &[],
            kept,
        };
        d.pids = g
            .read(v1::PROCS)
            .map(|t| cgroupfs::parse_pids(&t))
            .unwrap_or_default();
        sources.procs = Some(label(id));
        errors.extend(tagged(&label(id), false, g.errors.take()));
    }
    d.unreadable.extend(errors);
    d.hierarchies = Some(sources);
    if raw {
        for (id, m, h) in hiers.v1() {
            if id == primary_id || !has_group(id) {
                continue;
            }
            let name = m.label();
            let (files, writable, _) = read_raw_texts(h, dir, kept);
            d.raw
                .extend(files.into_iter().map(|(f, v)| (format!("{name}:{f}"), v)));
            // the raw editor's v1 files, named as the raw page names them;
            // not cgroup.event_control (it takes descriptors of the
            // writer's own process, not a value) nor release_agent (a
            // program the kernel runs as root: no knob to type in)
            d.writable.extend(
                writable
                    .into_iter()
                    .filter(|f| !V1_NOT_RAW.contains(&f.as_str()))
                    .map(|f| format!("{name}:{f}")),
            );
        }
    }
    d
}

/// The memory limits of one group for the effective-limit walk, from the
/// hierarchy holding memory: memory.max and memory.high on v2;
/// memory.limit_in_bytes on v1 (which has no memory.high: its soft limit
/// only steers reclaim under global pressure, v1 guide memory.rst 7).
pub fn read_memory_limits_layout(hiers: &Hiers, dir: &Path) -> (Option<Limit>, Option<Limit>) {
    memory_limits_via(hiers, dir, None)
}

/// [`read_memory_limits_layout`] and [`read_cpu_max_layout`] of one of the
/// inspected group's ancestors, read every refresh: through `kept`'s
/// descriptors.
pub fn read_path_limits_kept(
    hiers: &Hiers,
    dir: &Path,
    kept: &KeptReads,
) -> ((Option<Limit>, Option<Limit>), Option<CpuMax>) {
    (
        memory_limits_via(hiers, dir, Some(kept)),
        cpu_max_via(hiers, dir, Some(kept)),
    )
}

/// cgroup.controllers of one of the inspected group's ancestors (what it
/// offers the group), through `kept`'s descriptors.
pub fn read_controllers_kept(hier: &Hier, dir: &Path, kept: &KeptReads) -> Option<Controllers> {
    text_via(hier, dir, files::CONTROLLERS, Some(kept)).map(|t| Controllers::parse(&t))
}

/// `name` in `dir` of `hier`, through `kept` where given, else opened.
fn text_via(hier: &Hier, dir: &Path, name: &str, kept: Option<&KeptReads>) -> Option<String> {
    match kept {
        Some(k) => k.read_text(hier, dir.join(name), name).ok(),
        None => hier.read_text(&dir.join(name)).ok(),
    }
}

fn memory_limits_via(
    hiers: &Hiers,
    dir: &Path,
    kept: Option<&KeptReads>,
) -> (Option<Limit>, Option<Limit>) {
    match hiers.holder("memory") {
        Some((HierId::V1(_), h)) => {
            let t = text_via(h, dir, v1::MEMORY_LIMIT, kept);
            let l =
                t.and_then(|t| MemLimitV1::parse(v1::MEMORY_LIMIT, &t, procfs::page_size()).ok());
            (l.map(|l| l.0), None)
        }
        Some((HierId::V2, h)) => {
            let limit = |name: &'static str| {
                text_via(h, dir, name, kept).and_then(|t| Limit::parse(name, &t).ok())
            };
            (limit(files::MEMORY_MAX), limit(files::MEMORY_HIGH))
        }
        None => (None, None),
    }
}

/// A group's own limit files for grading its figures
/// (`render::severity::OwnLimits`), each from the hierarchy holding its
/// controller, as the detail reads them: one reader for every layout, so
/// a row of a v1 or hybrid host is graded against its v1 limits as the
/// inspected group is. pids.max has the same name and text on v1.
pub fn read_own_limits(hiers: &Hiers, dir: &Path) -> crate::render::severity::OwnLimits {
    let (memory_max, memory_high) = read_memory_limits_layout(hiers, dir);
    crate::render::severity::OwnLimits {
        memory_max,
        memory_high,
        pids_max: hiers
            .holder("pids")
            .and_then(|(_, h)| read_pids_max(h, dir)),
        cpu_max: read_cpu_max_layout(hiers, dir),
    }
}

/// The CPU bandwidth limit of one group, from the hierarchy holding cpu:
/// cpu.max on v2, cpu.cfs_quota_us and cpu.cfs_period_us on v1.
pub fn read_cpu_max_layout(hiers: &Hiers, dir: &Path) -> Option<CpuMax> {
    cpu_max_via(hiers, dir, None)
}

fn cpu_max_via(hiers: &Hiers, dir: &Path, kept: Option<&KeptReads>) -> Option<CpuMax> {
    match hiers.holder("cpu")? {
        (HierId::V1(_), h) => {
            let q = text_via(h, dir, v1::CPU_CFS_QUOTA, kept)?;
            let p = text_via(h, dir, v1::CPU_CFS_PERIOD, kept)?;
            Some(v1_limits::cfs_to_cpu_max(
                CfsQuota::parse(&q).ok()?,
                v1_limits::parse_cfs_period(&p).ok()?,
            ))
        }
        (HierId::V2, h) => {
            text_via(h, dir, files::CPU_MAX, kept).and_then(|t| CpuMax::parse(&t).ok())
        }
    }
}

/// A v1 hierarchy's unreadable files, named as the raw page names them.
fn tagged(label: &str, primary: bool, errors: Vec<Unreadable>) -> Vec<Unreadable> {
    let prefix = label.strip_prefix("v1:").unwrap_or(label);
    errors
        .into_iter()
        .map(|mut u| {
            if !primary {
                u.file = format!("{prefix}:{}", u.file);
            }
            u
        })
        .collect()
}

/// The v1 cpu hierarchy's limits: CFS bandwidth as cpu.max, and shares
/// (not for the exposition: `export`).
fn v1_cpu(g: &Group<'_>, d: &mut GroupDetail, export: bool) {
    let quota = g
        .read(v1::CPU_CFS_QUOTA)
        .and_then(|t| CfsQuota::parse(&t).ok());
    if export && quota.is_none_or(|q| q.0.is_none()) {
        // no quota: the exposition shows neither quota nor period (a
        // period without a quota is no limit), so the period is not read
        return;
    }
    let period = g
        .read(v1::CPU_CFS_PERIOD)
        .and_then(|t| v1_limits::parse_cfs_period(&t).ok());
    if let (Some(q), Some(p)) = (quota, period) {
        d.cpu_max = Some(v1_limits::cfs_to_cpu_max(q, p));
    }
    if export {
        return;
    }
    d.cpu_shares = g
        .read(v1::CPU_SHARES)
        .and_then(|t| CpuShares::parse(&t).ok())
        .map(|s| s.0);
}

/// The v1 memory hierarchy's files; with `export`, only the exposition's
/// (the limit: the swap in use is the scan's, memsw less usage, which it
/// reads for the export reading).
fn v1_memory(g: &Group<'_>, d: &mut GroupDetail, page_size: u64, export: bool) {
    let mem_limit = |name: &'static str| {
        g.read(name)
            .and_then(|t| MemLimitV1::parse(name, &t, page_size).ok())
            .map(|l| l.0)
    };
    d.memory_max = mem_limit(v1::MEMORY_LIMIT);
    if export {
        return;
    }
    d.memory_soft_limit = mem_limit(v1::MEMORY_SOFT_LIMIT);
    d.memsw_limit = mem_limit(v1::MEMSW_LIMIT);
    d.memsw_usage = g.number(v1::MEMSW_USAGE);
    d.memory_peak = g.number(v1::MEMORY_MAX_USAGE);
    d.memory_failcnt = g.number(v1::MEMORY_FAILCNT);
    d.oom_control = g
        .read(v1::MEMORY_OOM_CONTROL)
        .and_then(|t| OomControl::parse(&t).ok());
    // swap in use: what memsw counts beyond memory (v1 guide memory.rst
    // 2.4: memsw is memory + swap)
    d.memory_usage = g.number(v1::MEMORY_USAGE);
    if let (Some(sw), Some(u)) = (d.memsw_usage, d.memory_usage) {
        d.swap_current = Some(sw.saturating_sub(u));
    }
    if let Some(t) = g.read(v1::MEMORY_STAT) {
        let v = MemoryStatV1::parse(&t);
        // v2's memory.stat counts the subtree: the total_ forms are that
        d.memory_stat = Some(MemoryStat {
            anon: v.total_rss,
            file: v.total_cache,
            shmem: v.total_shmem,
            file_mapped: v.total_mapped_file,
            file_dirty: v.total_dirty,
            file_writeback: v.total_writeback,
            ..MemoryStat::default()
        });
        d.memory_stat_v1 = Some(v);
        d.keyed.memory_stat = Some(Keyed::parse(&t));
    }
}

/// The v1 blkio hierarchy's limits: the four throttle files as io.max,
/// and the weight (cfq's files, or bfq's where that is the kernel's).
fn v1_blkio(g: &Group<'_>, d: &mut GroupDetail, export: bool) {
    let list = |name: &'static str| {
        g.read(name)
            .and_then(|t| ThrottleDevices::parse(name, &t).ok())
    };
    let files = [
        list(v1::BLKIO_READ_BPS),
        list(v1::BLKIO_WRITE_BPS),
        list(v1::BLKIO_READ_IOPS),
        list(v1::BLKIO_WRITE_IOPS),
    ];
    if files.iter().any(Option::is_some) {
        let [r, w, ri, wi] = files.map(Option::unwrap_or_default);
        d.io_max = Some(v1_limits::throttle_io_max(&r, &w, &ri, &wi));
    }
    if export {
        return;
    }
    let weight = |name: &'static str| g.read(name).and_then(|t| BlkioWeight::parse(name, &t).ok());
    let plain = weight(v1::BLKIO_WEIGHT).or_else(|| weight(v1::BLKIO_BFQ_WEIGHT));
    let devices = weight(v1::BLKIO_WEIGHT_DEVICE).or_else(|| weight(v1::BLKIO_BFQ_WEIGHT_DEVICE));
    d.blkio_weight = match (plain, devices) {
        (None, None) => None,
        (p, dv) => {
            let dv = dv.unwrap_or_default();
            Some(BlkioWeight {
                default: dv.default.or(p.and_then(|p| p.default)),
                devices: dv.devices,
            })
        }
    };
}

/// The v1 freezer: its state, and, where the primary hierarchy has no
/// cgroup.freeze (a v1-only host), whether the group itself was asked to
/// freeze (freezer.self_freezing, as cgroup.freeze says on v2; FROZEN
/// through a parent is `freeze: false`, as on v2).
fn v1_freezer(g: &Group<'_>, d: &mut GroupDetail) {
    let flag = |name: &'static str| {
        g.read(name)
            .and_then(|t| v1_limits::parse_flag(name, &t).ok())
    };
    let state = g
        .read(v1::FREEZER_STATE)
        .and_then(|t| FreezerState::parse(&t).ok());
    let self_freezing = flag(v1::FREEZER_SELF);
    d.freezer = state.map(|state| FreezerV1 {
        state,
        self_freezing,
        parent_freezing: flag(v1::FREEZER_PARENT),
    });
    // on a hybrid host cgroup2's cgroup.freeze (a core file, apart from
    // v1's freezer) is what cgtop's freeze writes: it stays `freeze`
    if d.freeze.is_none() {
        d.freeze = self_freezing.or(state.map(|s| s != FreezerState::Thawed));
    }
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

/// The raw page's files: name, and text or why not.
pub type RawFiles = Vec<(String, Result<String, String>)>;

/// [`read_raw`] and [`writable_files`] from one listing, each file's mode
/// from the `fstat` its read did (a file not read: skipped, or its read
/// failed, is looked at as `writable_files` does): the inspected group is
/// read every refresh, and the two apart cost a second listing and an
/// open and two `fstat`s per file.
pub fn read_raw_writable(hier: &Hier, dir: &Path) -> (RawFiles, Vec<String>) {
    let (raw, writable, _) = read_raw_texts(hier, dir, None);
    (raw, writable)
}

/// [`read_raw_writable`], and the whole text of each file read, sorted by
/// name (the raw page's copy is trimmed); through `kept`'s descriptors
/// where given (the inspected group, read every refresh).
fn read_raw_texts(
    hier: &Hier,
    dir: &Path,
    kept: Option<&KeptReads>,
) -> (RawFiles, Vec<String>, Vec<(String, String)>) {
    let Ok(entries) = hier.list(dir) else {
        return Default::default();
    };
    let mut raw = Vec::new();
    let mut writable = Vec::new();
    let mut texts = Vec::new();
    for e in entries {
        if e.is_dir {
            continue;
        }
        // kernel interface files have ASCII names: a name that is not
        // text is no knob, and a lossy copy of it would name another file
        let Ok(n) = e.name.into_string() else {
            continue;
        };
        let path = dir.join(&n);
        let mut mode = None;
        if !RAW_SKIP.contains(&n.as_str()) {
            let got = match kept {
                Some(k) => k.read_text_mode(hier, path.clone(), &n),
                None => hier.read_text_mode(&path),
            };
            let v = match got {
                Ok((t, m)) => {
                    mode = Some(m);
                    let trimmed = t.trim_end().to_owned();
                    texts.push((n.clone(), t));
                    Ok(trimmed)
                }
                Err(e) => Err(e.to_string()),
            };
            raw.push((n.clone(), v));
        }
        if e.is_file {
            let m = mode.or_else(|| hier.mode_of(&path).ok());
            if m.is_some_and(|m| m & 0o200 != 0) {
                writable.push(n);
            }
        }
    }
    raw.sort_by(|a, b| a.0.cmp(&b.0));
    writable.sort();
    texts.sort_by(|a, b| a.0.cmp(&b.0));
    (raw, writable, texts)
}

/// v1 files the raw editor does not offer (see `read_detail_paged`).
const V1_NOT_RAW: &[&str] = &["cgroup.event_control", "release_agent"];

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
        read_before: &[],
        kept: None,
    };
    (g.limit(files::MEMORY_MAX), g.limit(files::MEMORY_HIGH))
}

/// pids.max of one group, to grade its process count.
pub fn read_pids_max(hier: &Hier, dir: &Path) -> Option<Limit> {
    let g = Group {
        hier,
        dir,
        errors: RefCell::new(Vec::new()),
        read_before: &[],
        kept: None,
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

/// The descriptors `cgtop serve` keeps from one reading to the next
/// (`Collector::set_export_reading`), as the scanner keeps its hot files:
/// each exposition file of each group opened the safe way once
/// ([`Hier::open_read`]: beneath the hierarchy, a regular file), then
/// read with pread at offset 0, capped as before. At most `room`
/// descriptors (what the scanners leave of the program's budget, given
/// at each reading); beyond it a file is opened, read and closed as
/// before. A kept file that reads as gone (ENODEV: the file or its group
/// was removed, the group maybe made again under its name) is opened
/// anew, and so is one of a group whose inode is not the one its files
/// were kept for (made again on a file system with no ENODEV). A reading
/// closes what it did not read: the files of groups gone from the scan.
#[derive(Debug, Default)]
pub struct KeptReads {
    /// One reader at a time (the collector's thread); a lock, not a
    /// `RefCell`, so that the collector stays `Sync`.
    inner: std::sync::Mutex<KeptInner>,
}

#[derive(Debug, Default)]
struct KeptInner {
    /// By hierarchy (its handle's address) and path below its root.
    files: HashMap<(usize, PathBuf), KeptFile>,
    room: usize,
    /// The reading under way, counted from 1.
    reading: u64,
    /// The inode of the group being read (the primary hierarchy's).
    group: u64,
    buf: Vec<u8>,
}

#[derive(Debug)]
struct KeptFile {
    file: File,
    /// The inode of its group when it was opened.
    group: u64,
    /// The last reading that read it.
    reading: u64,
    /// Its permission bits when it was opened.
    mode: u32,
}

impl KeptReads {
    fn inner(&self) -> std::sync::MutexGuard<'_, KeptInner> {
        // a panic while it was held leaves descriptors, nothing half-made
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A reading starts, with room for `room` descriptors.
    pub fn begin(&self, room: usize) {
        let mut k = self.inner();
        k.reading += 1;
        k.room = room;
    }

    /// The next files read are of the group with this inode.
    pub fn group(&self, inode: u64) {
        self.inner().group = inode;
    }

    /// The reading is over: the files it did not read are closed, and
    /// any over its room (the scanners took more of the budget meanwhile).
    /// Returns how many stay open.
    pub fn end(&self) -> usize {
        let mut k = self.inner();
        let k = &mut *k;
        let (reading, room) = (k.reading, k.room);
        k.files.retain(|_, f| f.reading == reading);
        let mut over = k.files.len().saturating_sub(room);
        k.files.retain(|_, _| {
            let keep = over == 0;
            over = over.saturating_sub(1);
            keep
        });
        if k.buf.len() > READ_BUF_KEPT {
            k.buf = Vec::new();
        }
        k.files.len()
    }

    /// The descriptors kept.
    pub fn len(&self) -> usize {
        self.inner().files.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes every kept descriptor (the hierarchies were opened again).
    pub fn clear(&self) {
        self.inner().files.clear();
    }

    /// `rel` (whose last component is `name`) of `hier`, through its kept
    /// descriptor, else opened (and kept where there is room).
    fn read_text(&self, hier: &Hier, rel: PathBuf, name: &str) -> Result<String, FsError> {
        self.read_text_mode(hier, rel, name).map(|(t, _)| t)
    }

    /// [`KeptReads::read_text`], with the file's permission bits as its
    /// open found them (the raw editor's writable files). A kept file's
    /// bits are not looked at again: the inspection's descriptors are
    /// all closed at the periodic walk's pace (`Collector::refresh`),
    /// where a chmod shows.
    fn read_text_mode(
        &self,
        hier: &Hier,
        rel: PathBuf,
        name: &str,
    ) -> Result<(String, u32), FsError> {
        let mut k = self.inner();
        let k = &mut *k;
        let cap = super::hier::cap_for(name);
        let key = (std::ptr::from_ref(hier) as usize, rel);
        // single-record files are whole after one short read, as the
        // scanner reads them; the process lists to the end
        let multi = matches!(name, "cgroup.procs" | "cgroup.threads" | "tasks");
        if let Some(f) = k.files.get_mut(&key) {
            if f.group == k.group {
                f.reading = k.reading;
                match read_capped(&f.file, &mut k.buf, cap, multi) {
                    Ok(n) => return Ok((text_of(&k.buf[..n]), f.mode)),
                    Err(e) if !e.is_gone() => return Err(e),
                    Err(_) => {}
                }
            }
            k.files.remove(&key);
        }
        let (f, mode) = hier.open_read_mode(&key.1)?;
        // as a kept file is read: one read where it is a single record
        // (the files past the room are opened each reading: no read of 0)
        let n = read_capped(&f, &mut k.buf, cap, multi)?;
        let text = text_of(&k.buf[..n]);
        if k.files.len() < k.room {
            let kept = KeptFile {
                file: f,
                group: k.group,
                reading: k.reading,
                mode,
            };
            k.files.insert(key, kept);
        }
        Ok((text, mode))
    }
}

/// The read buffer [`KeptReads`] keeps between readings; one grown past
/// it by a big file is let go.
const READ_BUF_KEPT: usize = 64 * 1024;

/// A file's bytes as text, invalid UTF-8 replaced (as [`Hier::read_text`]).
fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// The inspected group's fields are parsed from the texts the raw page
    /// read: the same detail as reading each file for itself, a file the
    /// raw page could not read (a FIFO) still listed as unreadable.
    #[test]
    fn the_detail_parsed_from_the_raw_page_is_the_detail_read_alone() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let g = r.join("g");
        std::fs::create_dir_all(g.join("child")).unwrap();
        for (name, text) in [
            ("cgroup.controllers", "cpu io memory pids\n"),
            ("cgroup.subtree_control", "cpu memory\n"),
            ("cgroup.stat", "nr_descendants 1\nnr_dying_descendants 0\n"),
            ("cgroup.freeze", "0\n"),
            ("cgroup.procs", "1\n22\n"),
            ("cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n"),
            ("cpu.max", "50000 100000\n"),
            ("cpu.weight", "100\n"),
            ("memory.max", "max\n"),
            ("memory.low", "4096\n"),
            ("memory.stat", "anon 4096\nfile 8192\nkernel 0\n"),
            ("memory.events", "low 0\nhigh 1\nmax 2\noom 0\noom_kill 0\n"),
            ("memory.swap.current", "0\n"),
            ("io.weight", "default 100\n"),
            ("pids.max", "64\n"),
            (
                "cpu.pressure",
                "some avg10=1.00 avg60=0.00 avg300=0.00 total=9\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            ),
        ] {
            std::fs::write(g.join(name), text).unwrap();
        }
        rustix::fs::mknodat(
            rustix::fs::CWD,
            g.join("memory.high"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let hier = Hier::open(r).unwrap();
        let dir = Path::new("g");
        let alone = read_detail(&hier, dir, false);
        let mut with_raw = read_detail(&hier, dir, true);
        assert!(with_raw.raw.len() > 10, "{:?}", with_raw.raw);
        assert_eq!(
            (with_raw.raw_primary, with_raw.raw.len()),
            (with_raw.raw.len(), with_raw.raw.len())
        );
        (with_raw.raw, with_raw.writable, with_raw.raw_primary) = Default::default();
        assert_eq!(with_raw, alone);
        assert!(alone.unreadable.iter().any(|u| u.file == "memory.high"));
        assert_eq!(alone.memory_low, Some(Limit::Value(4096)));
        assert_eq!(alone.pids, [1, 22]);
    }

    #[test]
    fn the_raw_page_and_the_writable_list_read_together_are_the_two_apart() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let g = r.join("g");
        std::fs::create_dir_all(g.join("child")).unwrap();
        for (name, text, mode) in [
            ("memory.max", "max\n", 0o644),
            ("memory.current", "4096\n", 0o444),
            ("cgroup.kill", "", 0o200),
            ("memory.reclaim", "", 0o200),
            ("cgroup.procs", "1\n2\n", 0o644),
            ("only.write", "x\n", 0o200),
        ] {
            let p = g.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::os::unix::fs::symlink("/etc/passwd", g.join("cpu.max")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            g.join("io.max"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let hier = Hier::open(r).unwrap();
        let dir = Path::new("g");
        let (raw, writable) = read_raw_writable(&hier, dir);
        assert_eq!(raw, read_raw(&hier, dir));
        assert_eq!(writable, writable_files(&hier, dir));
        // and they hold what they should: the skipped files are offered
        // for writing but not read, the FIFO and the link are not opened
        assert!(writable.contains(&"cgroup.kill".to_owned()));
        assert!(!raw.iter().any(|(n, _)| n == "cgroup.kill"));
        assert!(!writable.contains(&"memory.current".to_owned()));
        assert!(raw.iter().any(|(n, v)| n == "io.max" && v.is_err()));
        assert!(!writable.contains(&"cpu.max".to_owned()));
    }
}
