//! Test groups in every hierarchy cgtop reads figures from: on a cgroup v1
//! or hybrid host cgroup2 and each v1 hierarchy holding a controller of
//! the plan (`Plan::hierarchies`), on pure cgroup2 its one hierarchy. N groups (the tmpfs trees' shape,
//! `fake::group_paths`) under `cgtop-test-<pid>-900` in each, removed
//! children first when the guard drops: on success, on an error and on
//! SIGINT/SIGTERM/SIGHUP (which the benchmarks turn into an error through
//! `check_stop`). Used by the collector benchmark's `--v1-layout` and by
//! the start-up benchmark (`benches/startup/`).

use anyhow::{Context, Result};
use cgtop::model::host::layout::{HierId, Layout};
use cgtop::model::tree::union::Plan;
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The groups made, parents first; removed children first on drop.
pub struct Made(pub Vec<PathBuf>);

impl Drop for Made {
    fn drop(&mut self) {
        let mut left = 0;
        for d in self.0.iter().rev() {
            let mut ok = false;
            for _ in 0..50 {
                match fs::remove_dir(d) {
                    Ok(()) => ok = true,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => ok = true,
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
                if ok {
                    break;
                }
            }
            left += usize::from(!ok);
        }
        if left > 0 {
            eprintln!(
                "warning: {left} test groups could not be removed (cgtop-test-{}-900)",
                std::process::id()
            );
        }
    }
}

/// The tree made in every hierarchy of the plan, and what it was made in.
pub struct LayoutTree {
    /// The guard: dropping it removes every group.
    pub made: Made,
    /// The top group's name, `cgtop-test-<pid>-900`.
    pub name: String,
    /// The group paths below the top group (`""` is the top).
    pub paths: Vec<String>,
    pub layout: Layout,
    pub plan: Plan,
    /// The hierarchies the tree is in, the primary first.
    pub ids: Vec<HierId>,
    /// Their names: "cgroup2", "memory", ...
    pub labels: Vec<String>,
    /// How long the mkdirs took.
    pub took: Duration,
}

/// Makes `n` groups under `cgtop-test-<pid>-900` in each hierarchy of the
/// plan of this host's layout.
pub fn make(n: usize) -> Result<LayoutTree> {
    let layout = cgtop::source::mount::discover_layout().context("reading mountinfo")?;
    let plan = Plan::of(&layout).context("no hierarchy")?;
    let ids = plan.hierarchies();
    let name = format!("cgtop-test-{}-900", std::process::id());
    let paths = crate::fake::group_paths(n);
    let mut made = Made(Vec::new());
    let t0 = Instant::now();
    for &id in &ids {
        let base = layout
            .dir(id)
            .context("a hierarchy's directory")?
            .join(&name);
        for p in &paths {
            crate::check_stop()?;
            let d = if p.is_empty() {
                base.clone()
            } else {
                base.join(p)
            };
            fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
            made.0.push(d);
        }
    }
    let labels: Vec<String> = ids
        .iter()
        .map(|&id| match id {
            HierId::V2 => "cgroup2".to_string(),
            HierId::V1(i) => layout.v1[i].label(),
        })
        .collect();
    Ok(LayoutTree {
        made,
        name,
        paths,
        layout,
        plan,
        ids,
        labels,
        took: t0.elapsed(),
    })
}
