//! `--v1-layout N` (issue 11): the collector on this host's cgroup v1 or
//! hybrid layout. Makes N groups (shaped like the tmpfs trees) under
//! `cgtop-test-<pid>-900` in cgroup2 and in each live v1 hierarchy cgtop
//! reads figures from, and measures, with the collector started at that
//! group:
//!
//! - `floor`: a loop that preads, through kept descriptors, the same files
//!   the scanners read (each hierarchy's, by its controllers);
//! - `scan`: the scanners of every hierarchy and the merge into one tree,
//!   as the collector does them (`Scanner::read_part`, each hierarchy's
//!   figures, merged by `model::tree::union::Merging::add_part`), steady
//!   (nothing changes);
//! - `refresh`: `Collector::refresh` as cgtop runs it (scan, merge, rates);
//! - `scrape`: what `cgtop serve` does for a scrape on this layout: a
//!   refresh reading every group's exposition files
//!   (`Collector::set_export_reading`), then the OpenMetrics text; and the
//!   same with every group read in full (`--json`'s reading) beside it.
//!
//! In blocks, each with only its own descriptors open (a container's
//! RLIMIT_NOFILE may not hold two sets at 1,000 groups): floor, scan,
//! refresh, scrapes, floor again; medians of CPU and wall time. The groups are removed on the way out, also on an error or
//! a signal (a guard), children first.

use crate::measure::thread_cpu_time;
use anyhow::{bail, Context, Result};
use cgtop::model::host::layout::HierId;
use cgtop::model::tree::union;
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use cgtop::source::scan::{ScanConfig, ScanKind, Scanner};
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The files a scanner of this kind reads in `dir` (what it keeps open).
fn hot_files(dir: &std::path::Path, kind: ScanKind) -> Vec<PathBuf> {
    let names: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    let has = |n: &str| names.iter().any(|x| x == n);
    let want: &[&str] = match kind {
        ScanKind::V2 => &[
            "cpu.stat",
            "memory.current",
            "io.stat",
            "pids.current",
            "cgroup.events",
        ],
        ScanKind::V1 { .. } => &[
            "cpuacct.usage",
            "cpuacct.usage_user",
            "cpuacct.usage_sys",
            "cpu.stat",
            "memory.usage_in_bytes",
            "blkio.throttle.io_service_bytes_recursive",
            "blkio.throttle.io_serviced_recursive",
            "pids.current",
            "freezer.state",
        ],
    };
    let mut out: Vec<PathBuf> = want
        .iter()
        .filter(|n| has(n))
        .map(|n| dir.join(n))
        .collect();
    // cgroup.procs: the primary's, where it has no pids.current
    let procs = match kind {
        ScanKind::V2 => !has("pids.current"),
        ScanKind::V1 { procs } => procs && !has("pids.current"),
    };
    if procs && has("cgroup.procs") {
        out.push(dir.join("cgroup.procs"));
    }
    out
}

/// Which scrape a block of the scrape phase measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scrape {
    /// The exporter's reading on this host's layout.
    Exporter,
    /// The exporter's reading of the tree made in cgroup2 alone, read as a
    /// pure v2 layout.
    PureV2,
    /// Every group read in full (`--json`'s reading).
    Full,
}

/// The tree's shape made in cgroup2 alone, under
/// `cgtop-test-<pid>-901`: (cgroup2's mount, the top group, the guard).
/// `None` where cgroup2 is not mounted.
fn make_v2_only(
    layout: &cgtop::model::host::layout::Layout,
    n: usize,
) -> Result<Option<(PathBuf, String, crate::layout_tree::Made)>> {
    let Some(root) = layout.dir(HierId::V2) else {
        return Ok(None);
    };
    let top = format!("cgtop-test-{}-901", std::process::id());
    let mut made = crate::layout_tree::Made(Vec::new());
    for p in crate::fake::group_paths(n) {
        crate::check_stop()?;
        let d = if p.is_empty() {
            root.join(&top)
        } else {
            root.join(&top).join(p)
        };
        fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
        made.0.push(d);
    }
    Ok(Some((root.to_path_buf(), top, made)))
}

fn ms(d: f64) -> String {
    format!("{:.2} ms", d / 1e6)
}

/// One round of the scan block: every hierarchy's steady scan, merged;
/// the number of groups. A function of its own so that a profile can
/// count the measured rounds alone (`--scan-only`).
#[inline(never)]
fn steady_scan_and_merge(scanners: &mut [(HierId, Scanner)], plan: &union::Plan) -> usize {
    let costs: Vec<_> = scanners.iter_mut().map(|(_, s)| s.prepare()).collect();
    let mut merging = union::Merging::new(plan);
    for ((id, s), cost) in scanners.iter_mut().zip(costs) {
        merging.add_part(*id, s.read_part(cost).0);
    }
    merging.finish().len()
}

/// [`steady_scan_and_merge`] for the warm-up rounds (the first walks):
/// not counted by a profile of the measured ones.
#[inline(never)]
fn warm_up_scan_and_merge(scanners: &mut [(HierId, Scanner)], plan: &union::Plan) -> usize {
    steady_scan_and_merge(scanners, plan)
}

pub fn run(n: usize, refreshes: usize, warmup: usize, scan_only: bool) -> Result<()> {
    if cgtop::source::mount::discover_layout()
        .context("reading mountinfo")?
        .v1
        .is_empty()
    {
        bail!("no cgroup v1 hierarchy on this host");
    }
    let crate::layout_tree::LayoutTree {
        mut made,
        name,
        paths,
        layout,
        plan,
        ids,
        labels,
        took,
    } = crate::layout_tree::make(n)?;
    println!(
        "\n## v1 layout: {n} groups in each of {} ({} directories, made in {:.1} s)\n",
        labels.join(", "),
        made.0.len(),
        took.as_secs_f64()
    );
    let kind = |id: HierId| match id {
        HierId::V2 => ScanKind::V2,
        HierId::V1(_) => ScanKind::V1 {
            procs: id == plan.primary,
        },
    };
    // the floor's files
    let mut floor_files: Vec<(PathBuf, bool)> = Vec::new();
    for &id in &ids {
        let base = layout.dir(id).context("dir")?.join(&name);
        for p in &paths {
            let d = if p.is_empty() {
                base.clone()
            } else {
                base.join(p)
            };
            for f in hot_files(&d, kind(id)) {
                let multi = f.ends_with("cgroup.procs");
                floor_files.push((f, multi));
            }
        }
    }
    let files = floor_files.len();
    let budget = cgtop::source::scan::fd_budget(ScanConfig::default().max_kept);
    // the collector, as `cgtop -b` sets it up (the program's descriptor
    // budget), started at the group
    let opts = cgtop::options::Options {
        start: GroupPath::new(&name),
        root: None,
        interval: Duration::from_secs(1),
        depth: None,
        output: cgtop::options::Output::Text,
        iterations: None,
        read_only: true,
        mouse: false,
        machine_cpu: false,
        max_kept_fds: Some(budget),
        brief: true,
        columns: cgtop::render::columns::Column::DEFAULT.to_vec(),
        filter: None,
    };
    let time = |f: &mut dyn FnMut()| {
        let (c0, w0) = (thread_cpu_time(), Instant::now());
        f();
        (
            thread_cpu_time().saturating_sub(c0).as_nanos() as u64,
            w0.elapsed().as_nanos() as u64,
        )
    };
    // Blocks, each with its own descriptors (a container's RLIMIT_NOFILE
    // may not hold the floor's and the collector's at once): floor, scan,
    // refresh, floor again; the floor's figure is over both of its blocks.
    let (mut fc, mut fw) = (Vec::new(), Vec::new());
    let floor_block = |fc: &mut Vec<u64>, fw: &mut Vec<u64>| -> Result<()> {
        let floor: Vec<(File, bool)> = floor_files
            .iter()
            .map(|(p, m)| {
                File::open(p)
                    .map(|f| (f, *m))
                    .with_context(|| p.display().to_string())
            })
            .collect::<Result<_>>()?;
        let mut buf = vec![0u8; 64 * 1024];
        for round in 0..warmup + refreshes {
            crate::check_stop()?;
            let (c, w) = time(&mut || {
                for (f, multi) in &floor {
                    let mut off = 0u64;
                    while let Ok(k) = f.read_at(&mut buf, off) {
                        if k == 0 || !*multi {
                            break;
                        }
                        off += k as u64;
                    }
                }
            });
            if round >= warmup {
                fc.push(c);
                fw.push(w);
            }
        }
        Ok(())
    };
    floor_block(&mut fc, &mut fw)?;
    // the scanners alone and the merge
    let (mut sc, mut sw) = (Vec::new(), Vec::new());
    let mut groups = 0;
    let mut kept = 0;
    {
        let hiers = cgtop::source::hier::Hiers::open(layout.clone());
        let cfg = ScanConfig {
            max_kept: budget,
            ..ScanConfig::default()
        };
        let pool = cgtop::source::scan::KeptPool::new(ids.len());
        // one copy of each path for the seven, as the collector has it
        let paths = Arc::new(cgtop::source::scan::SharedPaths::new());
        let start = PathBuf::from(&name);
        let mut scanners: Vec<(HierId, Scanner)> = Vec::new();
        for (k, &id) in ids.iter().enumerate() {
            let h = Arc::clone(hiers.get(id).context("a hierarchy")?);
            let mut s = Scanner::of_kind(h, kind(id), start.clone(), cfg.clone());
            s.share_budget(Arc::clone(&pool), k);
            s.share_paths(Arc::clone(&paths));
            scanners.push((id, s));
        }
        for round in 0..warmup + refreshes {
            crate::check_stop()?;
            let (c, w) = time(&mut || {
                groups = if round < warmup {
                    warm_up_scan_and_merge(&mut scanners, &plan)
                } else {
                    steady_scan_and_merge(&mut scanners, &plan)
                };
            });
            if round >= warmup {
                sc.push(c);
                sw.push(w);
            }
        }
        kept = kept.max(scanners.iter().map(|(_, s)| s.kept()).sum());
    }
    if scan_only {
        let med = crate::measure::median;
        println!(
            "{groups} groups; scan + merge {} CPU (median of {refreshes}), the floor {}: {:.2}x",
            ms(med(&sc)),
            ms(med(&fc)),
            med(&sc) / med(&fc)
        );
        drop(made);
        return Ok(());
    }
    let (mut rc, mut rw) = (Vec::new(), Vec::new());
    let mut limited = false;
    let (mut cc, mut cw) = (Vec::new(), Vec::new());
    let mut churn_walked = 0;
    // the refresh step by step (`Collector::set_lap_timing`)
    let mut laps: Vec<(&'static str, Vec<u64>)> = Vec::new();
    {
        let (m, hier, all) = cgtop::run::locate(&opts).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut c =
            Collector::with_hiers(cgtop::run::collector_config(&opts, &m, false), hier, &all);
        c.set_lap_timing(true);
        for round in 0..warmup + refreshes {
            crate::check_stop()?;
            let mut r = None;
            let (cpu, w) = time(&mut || {
                r = Some(c.refresh(Duration::from_secs(round as u64 + 1)));
            });
            let r = r.context("a refresh")?;
            if r.snapshot.groups.len() != groups {
                bail!(
                    "the collector lists {} groups, the scanners {groups}",
                    r.snapshot.groups.len()
                );
            }
            limited |= r.snapshot.cost.fd_limited;
            if round >= warmup {
                rc.push(cpu);
                rw.push(w);
                for (step, d) in c.laps().map(|l| l.steps.clone()).unwrap_or_default() {
                    match laps.iter_mut().find(|(n, _)| *n == step) {
                        Some((_, v)) => v.push(d.as_nanos() as u64),
                        None => laps.push((step, vec![d.as_nanos() as u64])),
                    }
                }
            }
        }
        // a group made (and the one before removed) in one v1 hierarchy
        // before each refresh: that hierarchy is listed again, whole
        let churn_id = ids.iter().copied().find(|id| matches!(id, HierId::V1(_)));
        if let Some(dir) = churn_id.and_then(|id| layout.dir(id)) {
            let base = dir.join(&name).join("system.slice");
            let mut prev: Option<PathBuf> = None;
            for round in 0..refreshes {
                crate::check_stop()?;
                if let Some(p) = prev.take() {
                    let _ = fs::remove_dir(&p);
                }
                let d = base.join(format!("churn-{round}.service"));
                fs::create_dir(&d).with_context(|| d.display().to_string())?;
                made.0.push(d.clone());
                prev = Some(d);
                let (cpu, w) = time(&mut || {
                    let r = c.refresh(Duration::from_secs((warmup + refreshes + round) as u64 + 1));
                    churn_walked += usize::from(r.snapshot.cost.walked);
                });
                cc.push(cpu);
                cw.push(w);
            }
        }
    }
    // a `cgtop serve` scrape: every group read for the exposition, then
    // formatted (OpenMetrics); the exporter's reading on this layout, the
    // same tree's shape made in cgroup2 alone and read as a pure v2
    // layout (`--root` at cgroup2's mount: real kernfs, not tmpfs), and
    // the full reading; the first two in alternating blocks, so that
    // their ratio is of the same minutes
    let v2_only = make_v2_only(&layout, n)?;
    let mut scrapes: Vec<(Scrape, Vec<u64>, Vec<u64>, usize)> = Vec::new();
    for (k, what) in [
        Scrape::Exporter,
        Scrape::PureV2,
        Scrape::Exporter,
        Scrape::PureV2,
        Scrape::Full,
    ]
    .into_iter()
    .enumerate()
    {
        let o = match (what, &v2_only) {
            (Scrape::PureV2, None) => continue,
            (Scrape::PureV2, Some((root, top, _))) => cgtop::options::Options {
                start: GroupPath::new(top),
                root: Some(root.clone()),
                ..opts.clone()
            },
            _ => opts.clone(),
        };
        let (m, hier, all) = cgtop::run::locate(&o).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut c = Collector::with_hiers(cgtop::run::collector_config(&o, &m, true), hier, &all);
        c.set_export_reading(what != Scrape::Full);
        let (mut xc, mut xw) = (Vec::new(), Vec::new());
        let mut series = 0;
        for round in 0..warmup + refreshes {
            crate::check_stop()?;
            let (cpu, w) = time(&mut || {
                let r = c.refresh(Duration::from_secs(round as u64 + 1));
                let text = cgtop::run::serve::render(
                    &r,
                    None,
                    Duration::from_millis(1),
                    cgtop::render::openmetrics::Format::OpenMetrics,
                );
                series = std::hint::black_box(text)
                    .lines()
                    .filter(|l| !l.starts_with('#'))
                    .count();
            });
            if round >= warmup {
                xc.push(cpu);
                xw.push(w);
            }
        }
        match scrapes.iter_mut().find(|(w, ..)| *w == what) {
            Some((_, c0, w0, _)) if k > 0 => {
                c0.extend(xc);
                w0.extend(xw);
            }
            _ => scrapes.push((what, xc, xw, series)),
        }
    }
    drop(v2_only);
    floor_block(&mut fc, &mut fw)?;
    let med = crate::measure::median;
    let floor_cpu = med(&fc);
    println!(
        "{groups} groups in the tree; the floor reads {files} files, the scanners keep {kept} descriptors \
         (files; on v1 a group's directory as well where no inotify watch was to be had; budget {budget}{}); median of {refreshes} rounds per block\n",
        if limited { ", short: some files reopened" } else { "" }
    );
    println!("| phase | CPU | wall | CPU vs floor |\n|---|---|---|---|");
    for (what, cpu, wall) in [
        ("floor: pread of kept descriptors", &fc, &fw),
        ("scan: every hierarchy's scanner + merge", &sc, &sw),
        ("refresh: Collector::refresh", &rc, &rw),
        (
            "refresh right after a group came and one went in one v1 hierarchy (that hierarchy listed again)",
            &cc,
            &cw,
        ),
    ] {
        println!(
            "| {what} | {} | {} | {:.2}x |",
            ms(med(cpu)),
            ms(med(wall)),
            med(cpu) / floor_cpu
        );
    }
    for (what, cpu, wall, series) in &scrapes {
        let what = match what {
            Scrape::Exporter => {
                "`cgtop serve` scrape (reading + OpenMetrics), the exporter's reading"
            }
            Scrape::PureV2 => {
                "the same scrape of the same tree in cgroup2 alone, a pure v2 layout (kernfs)"
            }
            Scrape::Full => "`cgtop serve` scrape, every group read in full (`--json`'s reading)",
        };
        println!(
            "| {what} ({series} series) | {} | {} | {:.2}x |",
            ms(med(cpu)),
            ms(med(wall)),
            med(cpu) / floor_cpu
        );
    }
    let scrape_cpu = |w: Scrape| scrapes.iter().find(|s| s.0 == w).map(|s| med(&s.1));
    if let (Some(hybrid), Some(v2)) = (scrape_cpu(Scrape::Exporter), scrape_cpu(Scrape::PureV2)) {
        println!(
            "\nA scrape on this layout is {:.2}x the pure v2 layout's on kernfs \
             (CPU medians, the two read in alternating blocks; fewer series on pure v2 \
             where cgroup2 holds no memory, io, pids or cpu controller here)",
            hybrid / v2
        );
    }
    println!(
        "\n(the refreshes after a change listed the tree again in {churn_walked} of {refreshes})"
    );
    println!("\n| `Collector::refresh`, step by step (median of each) | CPU | CPU vs floor |\n|---|---|---|");
    for (step, v) in &laps {
        println!("| {step} | {} | {:.3}x |", ms(med(v)), med(v) / floor_cpu);
    }
    drop(made);
    Ok(())
}
