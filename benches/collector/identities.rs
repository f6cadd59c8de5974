//! `--identities N`: what the identity resolver adds to a steady refresh.
//! One tmpfs tree of `--sizes`' first size plus N docker containers
//! (`system.slice/docker-<id>.scope`), and beside it a test root holding
//! each container's `var/lib/docker/containers/<id>/config.v2.json`. Two
//! collectors on that same tree, one with the resolver
//! (`source::identity`, pointed at the test root) and one without, are
//! refreshed round by round in turn; the report gives each one's median
//! CPU time per steady refresh, the difference, and what the one pass
//! that resolved every group cost.

use crate::fake;
use crate::measure::median;
use anyhow::{Context, Result};
use cgtop::model::GroupPath;
use cgtop::source::collector::{thread_cpu_time, Collector, CollectorConfig};
use cgtop::source::identity::{Resolver, Roots};
use cgtop::source::scan::ScanConfig;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn collector(root: &Path) -> Collector {
    Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig {
            max_kept: cgtop::source::scan::fd_budget(ScanConfig::default().max_kept),
            ..ScanConfig::default()
        },
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    })
}

fn id_of(k: usize) -> String {
    format!(
        "{:016x}{:016x}{:016x}{:016x}",
        fake::mix(k as u64),
        fake::mix(k as u64 + 1),
        fake::mix(k as u64 + 2),
        fake::mix(k as u64 + 3)
    )
}

/// Runs the comparison and prints its Markdown.
pub fn run(size: usize, containers: usize, refreshes: usize, warmup: usize) -> Result<()> {
    let base = fake::tmpfs_base();
    let tree = fake::build(&base, size)?;
    let ids = tempfile::tempdir_in(&base).context("the identity root")?;
    for k in 0..containers {
        crate::check_stop()?;
        let id = id_of(k);
        fake::write_group(
            &tree.dir,
            &format!("system.slice/docker-{id}.scope"),
            (size + k) as u64,
            0,
        )?;
        let d = ids.path().join(format!("var/lib/docker/containers/{id}"));
        fs::create_dir_all(&d)?;
        let rec = serde_json::json!({
            "ID": id,
            "Name": format!("/web-{k}"),
            "Config": {"Image": "nginx:1.25", "Labels": {
                "com.docker.compose.project": "shop",
                "com.docker.compose.service": "web"}},
        });
        fs::write(d.join("config.v2.json"), rec.to_string())?;
    }
    let groups = size + containers;
    crate::progress(&format!(
        "{groups} groups, {containers} of them docker containers"
    ));
    let mut plain = collector(&tree.dir);
    let mut named = collector(&tree.dir);
    named.set_identities(Some(Resolver::new(Roots {
        base: ids.path().to_path_buf(),
        units: false,
    })));
    // the first refresh of each: the walk, and (with the resolver) the one
    // pass that reads every container's record
    let c0 = thread_cpu_time();
    let _ = plain.refresh(Duration::ZERO);
    let first_plain = thread_cpu_time().saturating_sub(c0);
    let c0 = thread_cpu_time();
    let r = named.refresh(Duration::ZERO);
    let first_named = thread_cpu_time().saturating_sub(c0);
    let resolved = r
        .snapshot
        .groups
        .iter()
        .filter(|g| g.identity.as_ref().is_some_and(|i| i.name.is_some()))
        .count();
    anyhow::ensure!(resolved == containers, "{resolved} of {containers} named");
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..warmup + refreshes {
        crate::check_stop()?;
        let at = Duration::from_secs(round as u64 + 1);
        // alternate which goes first, so that neither always runs on a
        // cache the other warmed
        let order: [bool; 2] = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for with in order {
            let c = if with { &mut named } else { &mut plain };
            let t = thread_cpu_time();
            std::hint::black_box(c.refresh(at));
            let cpu = thread_cpu_time().saturating_sub(t).as_nanos() as u64;
            if round >= warmup {
                if with {
                    b.push(cpu);
                } else {
                    a.push(cpu);
                }
            }
        }
    }
    let passes = named.identities().map_or(0, Resolver::passes);
    let (ma, mb) = (median(&a) / 1e6, median(&b) / 1e6);
    println!("\n## Identities: a steady refresh with and without the resolver\n");
    println!(
        "tmpfs tree of {groups} groups ({containers} `docker-<id>.scope` with their config.v2.json), \
         median of {refreshes} steady refreshes after {warmup}, interleaved\n"
    );
    println!("| collector | CPU ms / steady refresh | first refresh CPU ms |");
    println!("|---|---:|---:|");
    println!(
        "| without identities | {ma:.2} | {:.1} |",
        first_plain.as_secs_f64() * 1e3
    );
    println!(
        "| with identities | {mb:.2} | {:.1} |",
        first_named.as_secs_f64() * 1e3
    );
    println!(
        "\ndifference per steady refresh: {:+.2} ms ({:+.1} %); resolver passes: {passes} \
         (the first refresh's only)",
        mb - ma,
        (mb / ma - 1.0) * 100.0
    );
    drop(tree);
    Ok(())
}
