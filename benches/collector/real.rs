//! Real cgroups for the benchmark (`--make-cgroups`), and the kernel memory
//! that kept descriptors pin (`--kmem`).
//!
//! Groups are only ever created below `<parent>/<prefix>-<pid>`, and the
//! guard removes every one of them (deepest first) when dropped: on success,
//! on error, and on SIGINT/SIGTERM/SIGHUP, which main turns into an error.
//! Nothing outside that directory is written.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const CGROUP2_MAGIC: i128 = 0x6367_7270;

/// Groups created by the benchmark; removed on drop.
pub struct RealTree {
    pub top: PathBuf,
    /// Created directories, parents first.
    created: Vec<PathBuf>,
}

impl RealTree {
    /// Creates `n` groups (the top one included) below `parent`, shaped like
    /// the tmpfs tree, and enables on them every controller the parent
    /// hands down.
    pub fn create(parent: &Path, prefix: &str, n: usize) -> Result<Self> {
        if !prefix.starts_with("cgtop-") {
            bail!("--prefix must start with \"cgtop-\" so that leftovers are recognisable");
        }
        let is_cgroup2 =
            rustix::fs::statfs(parent).is_ok_and(
                |s| i128::from(s.f_type) == 0x6367_7270, /* CGROUP2_SUPER_MAGIC */
            );
        if !is_cgroup2 {
            bail!("{} is not a cgroup2 directory", parent.display());
        }
        let top = parent.join(format!("{prefix}-{}", std::process::id()));
        let mut t = Self {
            top: top.clone(),
            created: Vec::new(),
        };
        let controllers = fs::read_to_string(parent.join("cgroup.controllers"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|c| format!("+{c}"))
            .collect::<Vec<_>>()
            .join(" ");
        let paths = crate::fake::group_paths(n);
        let mut has_children = vec![false; paths.len()];
        for p in &paths[1..] {
            let parent = p.rfind('/').map_or("", |i| &p[..i]);
            if let Some(k) = paths.iter().position(|q| q == parent) {
                has_children[k] = true;
            }
        }
        for (p, branch) in paths.iter().zip(has_children) {
            crate::check_stop()?;
            let d = top.join(p);
            fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
            t.created.push(d.clone());
            if branch && !controllers.is_empty() {
                // our own group: hand the controllers down so that the
                // children get memory.current, io.stat, pids.current
                for c in controllers.split(' ') {
                    let _ = fs::write(d.join("cgroup.subtree_control"), c);
                }
            }
        }
        Ok(t)
    }
}

impl Drop for RealTree {
    fn drop(&mut self) {
        let mut left = 0;
        for d in self.created.iter().rev() {
            let mut ok = false;
            for _ in 0..50 {
                match fs::remove_dir(d) {
                    Ok(()) => {
                        ok = true;
                        break;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        ok = true;
                        break;
                    }
                    // EBUSY right after a child went away: try again shortly
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
            if !ok {
                left += 1;
            }
        }
        if left > 0 {
            eprintln!(
                "warning: {left} groups under {} could not be removed; remove them with: \
                 find {} -depth -type d -exec rmdir {{}} +",
                self.top.display(),
                self.top.display()
            );
        }
    }
}

/// Slab usage: object bytes per cache (active_objs × objsize) and pages.
struct Slabs {
    by_cache: BTreeMap<String, i64>,
    pages_bytes: i64,
}

fn read_slabs() -> Option<Slabs> {
    let text = fs::read_to_string("/proc/slabinfo").ok()?;
    let mut by_cache = BTreeMap::new();
    let mut pages_bytes = 0;
    for line in text.lines().skip(2) {
        let f: Vec<&str> = line.split_whitespace().collect();
        // name active_objs num_objs objsize objperslab pagesperslab : tunables
        // l b s : slabdata active_slabs num_slabs sharedavail
        if f.len() < 16 {
            continue;
        }
        let num = |i: usize| f[i].parse::<i64>().unwrap_or(0);
        by_cache.insert(f[0].to_owned(), num(1) * num(3));
        pages_bytes += num(14) * num(5) * 4096;
    }
    Some(Slabs {
        by_cache,
        pages_bytes,
    })
}

fn meminfo_kb(key: &str) -> Option<i64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

struct Point {
    slabs: Option<Slabs>,
    slab_kb: Option<i64>,
    avail_kb: Option<i64>,
}

fn point() -> Point {
    Point {
        slabs: read_slabs(),
        slab_kb: meminfo_kb("Slab"),
        avail_kb: meminfo_kb("MemAvailable"),
    }
}

/// Bytes per file between two points, by three measures.
#[derive(Debug, Clone, Default)]
pub struct PerFile {
    /// Σ active_objs × objsize over /proc/slabinfo.
    pub slab_objects: Option<f64>,
    /// Σ num_slabs × pagesperslab × 4096 (whole slab pages).
    pub slab_pages: Option<f64>,
    /// /proc/meminfo Slab.
    pub slab_meminfo: Option<f64>,
    /// /proc/meminfo MemAvailable drop.
    pub avail_drop: Option<f64>,
    /// The caches that grew most: (name, bytes per file).
    pub top_caches: Vec<(String, f64)>,
}

fn per_file(a: &Point, b: &Point, k: usize) -> PerFile {
    let k = k.max(1) as f64;
    let mut out = PerFile {
        slab_meminfo: a
            .slab_kb
            .zip(b.slab_kb)
            .map(|(x, y)| (y - x) as f64 * 1024.0 / k),
        avail_drop: a
            .avail_kb
            .zip(b.avail_kb)
            .map(|(x, y)| (x - y) as f64 * 1024.0 / k),
        ..PerFile::default()
    };
    if let (Some(sa), Some(sb)) = (&a.slabs, &b.slabs) {
        let total = |s: &Slabs| s.by_cache.values().sum::<i64>();
        out.slab_objects = Some((total(sb) - total(sa)) as f64 / k);
        out.slab_pages = Some((sb.pages_bytes - sa.pages_bytes) as f64 / k);
        let mut grew: Vec<(String, f64)> = sb
            .by_cache
            .iter()
            .map(|(n, v)| {
                let before = sa.by_cache.get(n).copied().unwrap_or(0);
                (n.clone(), (v - before) as f64 / k)
            })
            .filter(|(_, d)| d.abs() >= 8.0)
            .collect();
        grew.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()));
        grew.truncate(6);
        out.top_caches = grew;
    }
    out
}

/// Kernel memory of `files.len()` kept descriptors: after open, after the
/// first read, after a second read, and what close gives back.
pub struct Kmem {
    pub files: usize,
    pub open: PerFile,
    pub first_read: PerFile,
    pub second_read: PerFile,
    pub close: PerFile,
}

/// Opens every file, reads each once, reads again, closes. Measured
/// `rounds` times; the round with the median first-read cost is returned.
pub fn measure_kmem(files: &[PathBuf], rounds: usize) -> Result<Kmem> {
    let mut results = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    for _ in 0..rounds.max(1) {
        crate::check_stop()?;
        let p0 = point();
        let mut open = Vec::with_capacity(files.len());
        for f in files {
            match File::open(f) {
                Ok(h) => open.push(h),
                Err(e) => {
                    eprintln!("kmem: stopped opening at {} files: {e}", open.len());
                    break;
                }
            }
        }
        let k = open.len();
        let p1 = point();
        for h in &open {
            let _ = h.read_at(&mut buf, 0);
        }
        let p2 = point();
        for h in &open {
            let _ = h.read_at(&mut buf, 0);
        }
        let p3 = point();
        drop(open);
        // struct file is freed through RCU (task_work / delayed fput)
        std::thread::sleep(std::time::Duration::from_millis(300));
        let p4 = point();
        results.push(Kmem {
            files: k,
            open: per_file(&p0, &p1, k),
            first_read: per_file(&p1, &p2, k),
            second_read: per_file(&p2, &p3, k),
            close: per_file(&p3, &p4, k),
        });
    }
    results.sort_by(|a, b| {
        let v = |m: &Kmem| m.first_read.slab_objects.or(m.first_read.slab_meminfo);
        v(a).unwrap_or(0.0).total_cmp(&v(b).unwrap_or(0.0))
    });
    let mid = results.len() / 2;
    Ok(results.swap_remove(mid))
}
