//! What a Prometheus scrape of cgtop costs (`cgtop serve`, `cgtop
//! --openmetrics`): CPU ms per scrape (the reading of every group in
//! full, and the formatting), bytes of exposition and series, on tmpfs
//! trees of 1,000 and 10,000 groups and on this host's real hierarchy.
//!
//! ```text
//! cargo bench --bench openmetrics                          # tmpfs, 1,000 and 10,000 groups
//! cargo bench --bench openmetrics -- --real                # this host's hierarchy, read-only
//! cargo bench --bench openmetrics -- --sizes 2000 --scrapes 5
//! ```
//!
//! See BENCHMARKS.md ("OpenMetrics").

// the tree builder of the collector benchmark, shared
#[path = "../collector/fake.rs"]
#[allow(dead_code)]
mod fake;

use anyhow::{Context, Result};
use cgtop::model::GroupPath;
use cgtop::options::{Options, Output};
use cgtop::render::openmetrics::Format;
use cgtop::run::serve::render;
use cgtop::source::collector::{thread_cpu_time, Collector, CollectorConfig};
use cgtop::source::scan::ScanConfig;
use clap::Parser;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "Benchmark a Prometheus scrape of cgtop: CPU ms and bytes per scrape")]
struct Args {
    /// Sizes of the tmpfs trees, in groups.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sizes: Vec<usize>,
    /// Measured scrapes per figure (the median is reported).
    #[arg(long, default_value_t = 7)]
    scrapes: usize,
    /// Measure this host's cgroup hierarchy instead (read-only).
    #[arg(long)]
    real: bool,
    /// Where to build the trees (default: /dev/shm if it is tmpfs).
    #[arg(long)]
    base: Option<PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// The tree builder stops on a signal in the collector benchmark; here
/// nothing asks it to.
pub fn check_stop() -> Result<()> {
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Scrapes `c` (one full reading, then both formats), `n` times after one
/// untimed scrape, and prints the medians.
fn measure(label: &str, mut c: Collector, n: usize) {
    let start = Instant::now();
    let _ = c.refresh_timed(start);
    let (mut read_ms, mut om_ms, mut txt_ms) = (Vec::new(), Vec::new(), Vec::new());
    let (mut om_bytes, mut txt_bytes, mut series, mut groups) = (0, 0, 0, 0);
    for _ in 0..n {
        let cpu0 = thread_cpu_time();
        let r = c.refresh_timed(start);
        let cpu1 = thread_cpu_time();
        let om = render(&r, None, Duration::ZERO, Format::OpenMetrics);
        let cpu2 = thread_cpu_time();
        let txt = render(&r, None, Duration::ZERO, Format::Text);
        let cpu3 = thread_cpu_time();
        read_ms.push(cpu1.saturating_sub(cpu0).as_secs_f64() * 1e3);
        om_ms.push(cpu2.saturating_sub(cpu1).as_secs_f64() * 1e3);
        txt_ms.push(cpu3.saturating_sub(cpu2).as_secs_f64() * 1e3);
        om_bytes = om.len();
        txt_bytes = txt.len();
        series = om.lines().filter(|l| !l.starts_with('#')).count();
        groups = r.snapshot.groups.len();
    }
    let (read, omf, txtf) = (median(read_ms), median(om_ms), median(txt_ms));
    println!("{label}: {groups} groups, {n} scrapes (medians, CPU time of the scraping thread)");
    println!("  reading every group in full   {read:9.1} ms");
    println!("  formatting OpenMetrics        {omf:9.1} ms   {om_bytes:>11} bytes");
    println!("  formatting text 0.0.4         {txtf:9.1} ms   {txt_bytes:>11} bytes");
    println!(
        "  per scrape (read + one format){:9.1} ms   {:.0} bytes/group, {series} series, {:.1} series/group",
        read + omf,
        om_bytes as f64 / groups.max(1) as f64,
        series as f64 / groups.max(1) as f64
    );
}

/// Gives every group of a fake tree the files a scrape reads with
/// contents (the collector benchmark leaves the ones it does not read
/// every refresh empty).
fn fill(root: &std::path::Path, paths: &[String]) -> Result<()> {
    for (i, p) in paths.iter().enumerate() {
        let d = root.join(p);
        for name in fake::OTHER_FILES {
            let t = fake::inspected_text(name, i as u64);
            if !t.is_empty() {
                std::fs::write(d.join(name), t).with_context(|| format!("{p}/{name}"))?;
            }
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.real {
        let opts = Options {
            start: GroupPath::root(),
            root: None,
            interval: Duration::from_secs(1),
            depth: None,
            output: Output::Json,
            iterations: None,
            read_only: true,
            mouse: false,
            machine_cpu: false,
            max_kept_fds: None,
            brief: false,
            columns: Vec::new(),
            filter: None,
        };
        let (m, hier, hiers) = cgtop::run::locate(&opts)?;
        let mut c =
            Collector::with_hiers(cgtop::run::collector_config(&opts, &m, true), hier, &hiers);
        c.set_export_reading(true);
        measure(
            &format!("this host's hierarchy ({})", m.root.display()),
            c,
            args.scrapes,
        );
        return Ok(());
    }
    let base = args.base.clone().unwrap_or_else(fake::tmpfs_base);
    for &n in &args.sizes {
        eprintln!("  building {n} groups under {}", base.display());
        let tree = fake::build(&base, n)?;
        fill(&tree.dir, &fake::group_paths(n))?;
        let mut c = Collector::new(CollectorConfig {
            root: tree.dir.clone(),
            start: GroupPath::root(),
            scan: ScanConfig {
                max_kept: cgtop::source::scan::fd_budget(ScanConfig::default().max_kept),
                ..ScanConfig::default()
            },
            full_detail: true,
            sys_dev_block: PathBuf::from("/sys/dev/block"),
        });
        c.set_export_reading(true);
        measure(&format!("tmpfs tree, {n} groups"), c, args.scrapes);
    }
    Ok(())
}
