//! What `cgtop record` costs: CPU per sample and bytes on disk per group
//! per sample, on tmpfs trees of 1,000 and 10,000 groups whose counters
//! change between samples as a busy host's do.
//!
//! ```text
//! cargo bench --bench record                              # 1,000 and 10,000 groups, 60 samples
//! cargo bench --bench record -- --sizes 2000 --samples 120 --active 0.3
//! ```
//!
//! See BENCHMARKS.md ("Recording") for what each figure means.

// the tree builder of the collector benchmark, shared
#[path = "../collector/fake.rs"]
#[allow(dead_code)]
mod fake;

use anyhow::{Context, Result};
use cgtop::model::time::record::Header;
use cgtop::model::{GroupPath, HostInfo, MountInfo, MountMode};
use cgtop::source::collector::{thread_cpu_time, Collector, CollectorConfig};
use cgtop::source::record::{read_all, AtCap, RecordConfig, Recorder};
use cgtop::source::scan::ScanConfig;
use clap::Parser;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(about = "Benchmark cgtop record: CPU per sample and bytes per group per sample")]
struct Args {
    /// Sizes of the tmpfs trees, in groups.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sizes: Vec<usize>,
    /// Samples recorded per size (the first, a keyframe, included).
    #[arg(long, default_value_t = 60)]
    samples: usize,
    /// Seconds between samples (the recording's clock; the benchmark does
    /// not wait).
    #[arg(long, default_value_t = 5.0)]
    interval: f64,
    /// Share of the leaf groups that use CPU and memory in a sample (the
    /// same ones all along, as services that are busy stay busy); a fifth
    /// of them also do IO.
    #[arg(long, default_value_t = 0.2)]
    active: f64,
    /// Seconds between keyframes (cgtop record: 60).
    #[arg(long, default_value_t = 60.0)]
    frame_secs: f64,
    /// Where to build the trees and write the recordings (default: /dev/shm
    /// if it is tmpfs).
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

/// One group's counters, as the benchmark moves them.
#[derive(Clone, Copy, Default)]
struct Counters {
    usage: u64,
    user: u64,
    periods: u64,
    memory: u64,
    rbytes: u64,
    wbytes: u64,
    rios: u64,
    wios: u64,
}

impl Counters {
    fn write(&self, dir: &Path, with_memory: bool) -> Result<()> {
        std::fs::write(
            dir.join("cpu.stat"),
            format!(
                "usage_usec {}\nuser_usec {}\nsystem_usec {}\nnice_usec 0\nnr_periods {}\n\
                 nr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n",
                self.usage,
                self.user,
                self.usage - self.user,
                self.periods
            ),
        )?;
        std::fs::write(
            dir.join("io.stat"),
            format!(
                "8:0 rbytes={} wbytes={} rios={} wios={} dbytes=0 dios=0\n",
                self.rbytes, self.wbytes, self.rios, self.wios
            ),
        )?;
        if with_memory {
            std::fs::write(dir.join("memory.current"), format!("{}\n", self.memory))?;
        }
        Ok(())
    }
}

struct Figures {
    groups: usize,
    refresh_ms: f64,
    write_ms: f64,
    bytes: u64,
    bytes_after_first: f64,
    first_len: u64,
    samples_read: usize,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn run(base: &Path, n: usize, args: &Args) -> Result<Figures> {
    let tree = fake::build(base, n)?;
    let paths = fake::group_paths(n);
    let index: std::collections::HashMap<&str, usize> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();
    let parent: Vec<Option<usize>> = paths
        .iter()
        .map(|p| {
            if p.is_empty() {
                return None;
            }
            Some(p.rsplit_once('/').map_or(0, |(a, _)| index[a]))
        })
        .collect();
    let has_children: Vec<bool> = {
        let mut v = vec![false; paths.len()];
        for p in parent.iter().flatten() {
            v[*p] = true;
        }
        v
    };
    // the same groups stay busy: a hashed choice among the leaves
    let active: Vec<usize> = (0..paths.len())
        .filter(|&i| {
            !has_children[i] && (fake::mix(i as u64 * 7) % 1000) as f64 / 1000.0 < args.active
        })
        .collect();
    let mut c: Vec<Counters> = (0..paths.len())
        .map(|i| {
            let s = fake::mix(i as u64 + 99);
            Counters {
                usage: 1_000_000 + s % 100_000_000_000,
                user: 500_000,
                periods: 0,
                memory: 1 << 20 | (s % (4 << 30)),
                rbytes: s % (1 << 30),
                wbytes: s % (1 << 28),
                rios: s % 100_000,
                wios: s % 50_000,
            }
        })
        .collect();
    // parents hold at least the sum of their children, as cpu.stat does
    for i in (0..paths.len()).rev() {
        if let Some(p) = parent[i] {
            let child = c[i];
            c[p].usage += child.usage;
            c[p].user += child.user;
        }
    }
    for (i, p) in paths.iter().enumerate() {
        c[i].write(&tree.dir.join(p), !p.is_empty())?;
    }
    let file = base.join(format!("cgtop-bench-{}-{n}.rec", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut col = Collector::new(CollectorConfig {
        root: tree.dir.clone(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    });
    col.set_cpu_ceiling(Some(64));
    col.set_grade_limits(true);
    let header = Header {
        host: HostInfo {
            hostname: "bench".into(),
            kernel: "6.1.0".into(),
            ncpus: 64,
            swap_total: None,
        },
        mount: MountInfo {
            root: tree.dir.clone(),
            mode: MountMode::Directory,
        },
        start: GroupPath::root(),
        interval: Duration::from_secs_f64(args.interval),
        start_unix: Duration::from_secs(1_790_000_000),
    };
    let mut rec = Recorder::create(
        RecordConfig {
            path: file.clone(),
            append: false,
            max_size: None,
            at_cap: AtCap::Rotate,
            frame_every: Duration::from_secs_f64(args.frame_secs),
        },
        header,
    )?;
    let (mut refresh_cpu, mut write_cpu) = (Vec::new(), Vec::new());
    let mut first_len = 0;
    for k in 0..args.samples {
        if k > 0 {
            // a sample's worth of work in the busy groups
            let mut touched = vec![false; paths.len()];
            for &i in &active {
                let r = fake::mix((k * 1_000_003 + i) as u64);
                let used = r % (args.interval * 400_000.0) as u64; // up to 40 % of a core
                let mut j = Some(i);
                while let Some(g) = j {
                    c[g].usage += used;
                    c[g].user += used * 3 / 5;
                    touched[g] = true;
                    j = parent[g];
                }
                // memory moves up or down by up to 1 MB
                let step = (r >> 20) % 2_000_000;
                c[i].memory = (c[i].memory + step).saturating_sub(1_000_000).max(1 << 20);
                if r % 5 == 0 {
                    let mut j = Some(i);
                    while let Some(g) = j {
                        c[g].rbytes += (r >> 8) % (4 << 20);
                        c[g].wbytes += (r >> 12) % (1 << 20);
                        c[g].rios += (r >> 16) % 500;
                        c[g].wios += (r >> 24) % 200;
                        j = parent[g];
                    }
                }
            }
            for (i, p) in paths.iter().enumerate() {
                if touched[i] {
                    c[i].write(&tree.dir.join(p), !p.is_empty())?;
                }
            }
        }
        let at = Duration::from_secs_f64(args.interval * (k + 1) as f64);
        let t0 = thread_cpu_time();
        let r = col.refresh(at);
        let t1 = thread_cpu_time();
        rec.write(&r, &[])?;
        let t2 = thread_cpu_time();
        if k == 0 {
            first_len = std::fs::metadata(&file)?.len();
        } else {
            refresh_cpu.push(t1.saturating_sub(t0).as_secs_f64() * 1e3);
            write_cpu.push(t2.saturating_sub(t1).as_secs_f64() * 1e3);
        }
    }
    rec.finish()?;
    let bytes = std::fs::metadata(&file)?.len();
    let samples_read = read_all(&std::fs::read(&file)?).0.len();
    std::fs::remove_file(&file).context("removing the recording")?;
    let groups = paths.len();
    Ok(Figures {
        groups,
        refresh_ms: median(refresh_cpu),
        write_ms: median(write_cpu),
        bytes,
        bytes_after_first: (bytes - first_len) as f64 / (groups * (args.samples - 1)) as f64,
        first_len,
        samples_read,
    })
}

fn main() -> Result<()> {
    let args = Args::parse();
    let base = args.base.clone().unwrap_or_else(fake::tmpfs_base);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} samples {} s apart, {:.0} % of the leaves busy; zstd level {}, a keyframe every {} samples or {} s\n",
        args.samples,
        args.interval,
        args.active * 100.0,
        cgtop::source::record::LEVEL,
        cgtop::source::record::FRAME_SAMPLES,
        args.frame_secs
    );
    let _ = writeln!(
        out,
        "| groups | collector CPU ms/sample | recording CPU ms/sample | both, % of one core | file bytes | bytes/group/sample | same, after the first sample | the first sample (a keyframe), bytes/group |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &n in &args.sizes {
        let f = run(&base, n, &args)?;
        anyhow::ensure!(
            f.samples_read == args.samples,
            "the recording reads back whole"
        );
        let pct = (f.refresh_ms + f.write_ms) / (args.interval * 1e3) * 100.0;
        let _ = writeln!(
            out,
            "| {} | {:.2} | {:.2} | {:.3} | {} | {:.2} | {:.2} | {:.1} |",
            f.groups,
            f.refresh_ms,
            f.write_ms,
            pct,
            f.bytes,
            f.bytes as f64 / (f.groups * args.samples) as f64,
            f.bytes_after_first,
            f.first_len as f64 / f.groups as f64
        );
    }
    print!("{out}");
    Ok(())
}
