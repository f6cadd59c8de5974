//! The priming read of `-b` and `--json` (`Collector::prime`): it reads
//! only the counters rates are computed from, and the refresh after it
//! has the same rates and the same figures as the refresh after a full
//! read. The layout is a hybrid host's with every counter a rate uses:
//! cgroup2's cpu.stat (with throttling), io.stat and cpu.stat.local; v1
//! cpuacct's usage, usage_user and usage_sys, an old kernel's
//! cpuacct.stat, the cpu hierarchy's throttling, blkio's recursive
//! counters and an old kernel's own ones; besides them the levels no rate
//! uses (memory, PIDs, freezer, cgroup.events).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::GroupRates;
use cgtop::options::Options;
use cgtop::source::collector::{Collector, Refresh};
use std::fs;
use std::path::Path;
use std::time::Duration;

fn put(base: &Path, hier: &str, group: &str, files: &[(&str, String)]) {
    let d = base.join(hier).join(group);
    fs::create_dir_all(&d).unwrap();
    if !d.join("cgroup.procs").exists() {
        fs::write(d.join("cgroup.procs"), "").unwrap();
    }
    for (n, t) in files {
        fs::write(d.join(n), t).unwrap();
    }
}

/// Every group of cgroup2: `app` and `app/web` are in every v1
/// hierarchy too, `old` in the v1 ones as an old kernel has them, `v2only`
/// in cgroup2 alone (its CPU and IO from cgroup2's files).
const V2_GROUPS: [&str; 5] = ["", "app", "app/web", "old", "v2only"];
const V1_GROUPS: [&str; 4] = ["", "app", "app/web", "old"];

/// Writes every counter at step `k` (each grows with `k`, each group by
/// its own amount), and the levels, which do not depend on `k`.
fn write_counters(b: &Path, k: u64) {
    for (i, g) in V2_GROUPS.iter().enumerate() {
        let n = i as u64 + 1;
        let usec = k * n * 10_000;
        put(
            b,
            "unified",
            g,
            &[
                ("cgroup.controllers", "hugetlb\n".into()),
                (
                    "cpu.stat",
                    format!(
                        "usage_usec {usec}\nuser_usec {}\nsystem_usec {}\n\
                         nr_periods {}\nnr_throttled {}\nthrottled_usec {}\n",
                        usec / 4 * 3,
                        usec / 4,
                        k * 100,
                        k * n,
                        k * n * 700
                    ),
                ),
                (
                    "cpu.stat.local",
                    format!("throttled_usec {}\n", k * n * 300),
                ),
                ("cgroup.events", format!("populated 1\nfrozen {}\n", n % 2)),
            ],
        );
        if *g == "v2only" {
            put(
                b,
                "unified",
                g,
                &[(
                    "io.stat",
                    format!(
                        "8:0 rbytes={} wbytes={} rios={} wios={} dbytes=0 dios=0\n",
                        k * 4096,
                        k * 8192,
                        k * 2,
                        k * 3
                    ),
                )],
            );
        }
    }
    fs::write(
        b.join("unified/cgroup.stat"),
        "nr_descendants 4\nnr_dying_descendants 0\n",
    )
    .unwrap();
    fs::write(b.join("unified/app/cgroup.stat"), "nr_descendants 1\n").unwrap();
    for (i, g) in V1_GROUPS.iter().enumerate() {
        let n = i as u64 + 1;
        let ns = k * n * 20_000_000;
        let acct = if *g == "old" {
            // before Linux 4.7: no usage_user/usage_sys, ticks in cpuacct.stat
            vec![
                ("cpuacct.usage", format!("{ns}\n")),
                ("cpuacct.stat", format!("user {}\nsystem {}\n", k * 2, k)),
            ]
        } else {
            vec![
                ("cpuacct.usage", format!("{ns}\n")),
                ("cpuacct.usage_user", format!("{}\n", ns / 5 * 3)),
                ("cpuacct.usage_sys", format!("{}\n", ns / 5 * 2)),
            ]
        };
        put(b, "cpuacct", g, &acct);
        put(
            b,
            "cpu",
            g,
            &[(
                "cpu.stat",
                format!(
                    "nr_periods {}\nnr_throttled {}\nthrottled_time {}\n",
                    k * 50,
                    k * n * 2,
                    k * n * 3_000_000
                ),
            )],
        );
        let blk = |what: &str, r: u64, w: u64| {
            format!("8:0 Read {r}\n8:0 Write {w}\n8:0 Sync 0\n8:0 Async 0\n8:0 Total {}\nTotal {}\n{what}", r + w, r + w)
        };
        let bytes = blk("", k * n * 4096, k * n * 1024);
        let ios = blk("", k * n * 4, k * n);
        if *g == "old" {
            // before Linux 4.11: the group's own counters only
            put(
                b,
                "blkio",
                g,
                &[
                    ("blkio.throttle.io_service_bytes", bytes),
                    ("blkio.throttle.io_serviced", ios),
                ],
            );
        } else {
            put(
                b,
                "blkio",
                g,
                &[
                    ("blkio.throttle.io_service_bytes_recursive", bytes.clone()),
                    ("blkio.throttle.io_serviced_recursive", ios.clone()),
                    ("blkio.throttle.io_service_bytes", bytes),
                    ("blkio.throttle.io_serviced", ios),
                ],
            );
        }
        put(
            b,
            "memory",
            g,
            &[("memory.usage_in_bytes", format!("{}\n", n * 1_048_576))],
        );
        if g.is_empty() {
            // a v1 root has neither
            put(b, "pids", g, &[]);
            put(b, "freezer", g, &[]);
        } else {
            put(b, "pids", g, &[("pids.current", format!("{n}\n"))]);
            put(b, "freezer", g, &[("freezer.state", "THAWED\n".into())]);
        }
        put(b, "systemd", g, &[]);
    }
}

fn layout() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_counters(t.path(), 1);
    // cgroup2's groups but the root say their type
    for g in V2_GROUPS.iter().filter(|g| !g.is_empty()) {
        let ty = if *g == "app/web" {
            "threaded"
        } else {
            "domain"
        };
        put(
            t.path(),
            "unified",
            g,
            &[("cgroup.type", format!("{ty}\n"))],
        );
    }
    t
}

fn collector(root: &Path, full_detail: bool) -> Collector {
    let o = Options {
        root: Some(root.to_path_buf()),
        brief: !full_detail,
        ..crate::common::options()
    };
    let (m, hier, hiers) = cgtop::run::locate(&o).unwrap();
    assert!(!hiers.layout.v1.is_empty(), "a hybrid layout");
    let mut c = Collector::with_hiers(
        cgtop::run::collector_config(&o, &m, full_detail),
        hier,
        &hiers,
    );
    c.set_cpu_ceiling(None);
    c
}

/// What a printed refresh shows of each group: its path, figures, detail
/// and rates (not what the refresh cost).
fn shown(r: &Refresh) -> Vec<String> {
    r.snapshot
        .groups
        .iter()
        .zip(&r.rates)
        .map(|(g, rate)| {
            format!(
                "{} {} {:?} {:?} {:?} {:?}",
                g.path, g.inode, g.cgroup_type, g.hot, g.detail, rate
            )
        })
        .collect()
}

/// The fixture's `/app` written as emptied and frozen (its cgroup.events),
/// a level change the next full read shows.
fn freeze_app(root: &Path) {
    let events = root.join("unified/app/cgroup.events");
    fs::write(events, "populated 0\nfrozen 1\n").unwrap();
}

/// `/app`'s cgroup.events as a refresh read them.
fn app_events(r: &Refresh) -> Option<cgtop::cgroupfs::CgroupEvents> {
    let g = (r.snapshot.groups.iter())
        .find(|g| g.path.to_string() == "/app")
        .unwrap();
    g.hot.events
}

#[test]
fn rates_after_a_priming_read_are_those_after_a_full_read() {
    // the hierarchies no rate comes from walked by the next refresh, or
    // between (as `-b` does, within the first interval)
    for (full_detail, walk_between, levels_between) in [
        (false, false, false),
        (false, true, false),
        (true, true, false),
        (false, false, true),
        (true, false, true),
    ] {
        let t = layout();
        let mut full = collector(t.path(), full_detail);
        let mut primed = collector(t.path(), full_detail);
        let baseline = full.refresh(Duration::from_secs(1));
        assert!(baseline.rates.iter().all(|r| *r == GroupRates::default()));
        primed.prime(Duration::from_secs(1));
        if walk_between {
            primed.walk_unprimed();
        }
        if levels_between {
            primed.read_levels();
        }
        write_counters(t.path(), 2);
        let a = full.refresh(Duration::from_secs(2));
        let b = primed.refresh(Duration::from_secs(2));
        let paths: Vec<String> = a
            .snapshot
            .groups
            .iter()
            .map(|g| g.path.to_string())
            .collect();
        assert_eq!(paths, ["/", "/app", "/app/web", "/old", "/v2only"]);
        // every rate has a figure in some group, else the comparison
        // below could not see a counter the priming read missed
        let some = |f: &dyn Fn(&GroupRates) -> bool| a.rates.iter().any(f);
        assert!(some(&|r| r.cpu_pct.is_some()), "CPU");
        for (what, group) in [("/app", 1), ("/old", 3), ("/v2only", 4)] {
            let r = &a.rates[group];
            assert!(
                r.user_pct.is_some() && r.system_pct.is_some(),
                "{what}: user and system ({full_detail}): {r:?}"
            );
            assert!(
                r.throttled_per_s.is_some() && r.throttled_pct.is_some(),
                "{what}: throttling: {r:?}"
            );
            assert!(
                r.io.is_some() && !r.io_by_dev.is_empty(),
                "{what}: IO: {r:?}"
            );
        }
        assert!(
            a.snapshot.groups[3].hot.v1.sources.io_own_only,
            "/old's IO from its own blkio counters"
        );
        if full_detail {
            assert!(some(&|r| r.throttled_local_pct.is_some()), "cpu.stat.local");
        }
        assert_eq!(
            shown(&b),
            shown(&a),
            "full detail: {full_detail}, walked between: {walk_between}, \
             levels between: {levels_between}"
        );
    }
}

#[test]
fn a_priming_read_leaves_cgroup_type_to_the_levels_read_within_the_interval() {
    // the priming walk opens the rate counters only, on the way to their
    // stamp: a group's cgroup.type (an open, a read and a close a group,
    // no rate from it) is read with the levels, after the stamp, so the
    // printed refresh shows what the file said then
    use cgtop::cgroupfs::CgroupType;
    let t = layout();
    let mut primed = collector(t.path(), false);
    primed.prime(Duration::from_secs(1));
    let ty = t.path().join("unified/app/cgroup.type");
    fs::write(&ty, "domain threaded\n").unwrap();
    primed.read_levels();
    write_counters(t.path(), 2);
    let b = primed.refresh(Duration::from_secs(2));
    let of = |p: &str| {
        let g = (b.snapshot.groups.iter())
            .find(|g| g.path.to_string() == p)
            .unwrap();
        g.cgroup_type
    };
    assert_eq!(
        of("/app"),
        Some(CgroupType::DomainThreaded),
        "read within the interval, not by the priming walk"
    );
    assert_eq!(of("/app/web"), Some(CgroupType::Threaded));
    assert_eq!(of("/old"), Some(CgroupType::Domain));
}

#[test]
fn the_first_wait_of_a_batch_run_counts_from_the_priming_read() {
    // `-b -n 1 -d D` prints D after the counters were read, not D after
    // the priming read ended: the first wait is D less what the priming
    // read took after its counters' stamp
    let t = layout();
    let c = collector(t.path(), false);
    let opts = Options {
        root: Some(t.path().to_path_buf()),
        iterations: Some(2),
        ..crate::common::options()
    };
    let mut waits = Vec::new();
    let mut out = Vec::new();
    cgtop::batch::run_collector(
        &mut out,
        c,
        &crate::common::hybrid_mount(),
        &crate::common::host(),
        &opts,
        |d| {
            // waited for real: the second part of the first wait is what
            // is left of the interval after the levels were read
            waits.push(d);
            std::thread::sleep(d);
            true
        },
    )
    .unwrap();
    // the first interval in two: the level figures are read near its end
    // (about the priming read's time before it), the rate counters at it
    assert_eq!(waits.len(), 3, "{waits:?}");
    let first = waits[0] + waits[1];
    assert!(
        first < opts.interval && first > opts.interval / 2,
        "{waits:?}"
    );
    assert!(
        waits[0] > opts.interval / 2 && waits[1] < waits[0],
        "levels read late in the interval: {waits:?}"
    );
    assert_eq!(waits[2], opts.interval, "later waits are the interval");
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.matches("cgtop - refresh").count(), 2, "{text}");
}

#[test]
fn after_the_levels_are_read_within_the_interval_the_printed_refresh_rereads_only_what_says_a_group_is_there(
) {
    // `-b -n 1`: the level figures are read within the first interval
    // (`Collector::read_levels`); the printed refresh reads the rate
    // counters, and takes the levels of a group whose counter it read
    // from the interval's reading (cgroup2's cgroup.events here); a
    // hierarchy with no rate counter (v1 memory) is read again, as the
    // read of a group there is what says it is still there
    let t = layout();
    let mut full = collector(t.path(), false);
    let mut primed = collector(t.path(), false);
    let before = full.refresh(Duration::from_secs(1));
    primed.prime(Duration::from_secs(1));
    primed.read_levels();
    write_counters(t.path(), 2);
    let app = t.path().join("unified/app");
    fs::write(app.join("cgroup.events"), "populated 0\nfrozen 1\n").unwrap();
    let mem = t.path().join("memory/app/memory.usage_in_bytes");
    fs::write(&mem, "7340032\n").unwrap();
    let a = full.refresh(Duration::from_secs(2));
    let b = primed.refresh(Duration::from_secs(2));
    let of = |r: &Refresh| {
        let i = r
            .snapshot
            .groups
            .iter()
            .position(|g| g.path.to_string() == "/app")
            .unwrap();
        (r.snapshot.groups[i].hot.clone(), r.rates[i].clone())
    };
    let (hot_a, rates_a) = of(&a);
    let (hot_b, rates_b) = of(&b);
    assert_eq!(rates_b, rates_a, "the rates of a full read");
    assert_eq!(hot_b.cpu, hot_a.cpu, "the counters read now");
    assert_eq!(hot_b.memory_current, Some(7_340_032), "v1 memory read now");
    let (hot_before, _) = of(&before);
    assert_eq!(
        hot_b.events, hot_before.events,
        "cgroup.events as the interval read it"
    );
    assert_ne!(
        hot_a.events, hot_before.events,
        "a full read sees the change"
    );
    assert!(
        b.snapshot.cost.files_read < a.snapshot.cost.files_read,
        "fewer files read after the interval: {} against {}",
        b.snapshot.cost.files_read,
        a.snapshot.cost.files_read
    );
}

#[test]
fn the_tuis_second_refresh_reads_the_rate_counters_and_shows_the_first_refreshs_levels() {
    // the TUI's first rates (`Collector::defer_start_up`): the second
    // refresh, 200 ms after the first, reads the rate counters and shows
    // the levels the first read (on screen already) where a counter it
    // read says the group is the same one; the third reads every file.
    // A second refresh long after the first (paused) reads every file.
    for paused in [false, true] {
        let t = layout();
        let mut c = collector(t.path(), false);
        c.defer_start_up();
        let mut full = collector(t.path(), false);
        let first = c.refresh(Duration::from_secs(1));
        full.refresh(Duration::from_secs(1));
        if paused {
            std::thread::sleep(Duration::from_millis(1100));
        }
        write_counters(t.path(), 2);
        freeze_app(t.path());
        let second = c.refresh(Duration::from_secs(2));
        let want = full.refresh(Duration::from_secs(2));
        assert_eq!(second.rates, want.rates, "the rates of a full read");
        if paused {
            assert_eq!(
                app_events(&second),
                app_events(&want),
                "read anew after a pause"
            );
        } else {
            assert_eq!(
                app_events(&second),
                app_events(&first),
                "the levels on screen, not read again"
            );
            assert_ne!(app_events(&want), app_events(&first));
            assert!(second.snapshot.cost.files_read < want.snapshot.cost.files_read);
        }
        let third = c.refresh(Duration::from_secs(3));
        assert_eq!(
            app_events(&third),
            app_events(&want),
            "the third reads every file"
        );
    }
}

#[test]
fn the_tuis_first_levels_are_read_again_when_their_scan_began_over_a_second_before() {
    // the 1 s the first refresh's levels are shown for counts from the
    // start of the scan that read them, not from its end: a first scan
    // that takes over a second (its walk here; every file opened on a
    // large tree) leaves none the second refresh shows, however soon
    let t = layout();
    let mut c = collector(t.path(), false);
    c.defer_start_up();
    let mut full = collector(t.path(), false);
    c.refresh_with(|| {
        std::thread::sleep(Duration::from_millis(1100));
        Duration::from_secs(1)
    });
    full.refresh(Duration::from_secs(1));
    write_counters(t.path(), 2);
    freeze_app(t.path());
    let second = c.refresh(Duration::from_secs(2));
    let want = full.refresh(Duration::from_secs(2));
    assert_eq!(second.rates, want.rates);
    assert_eq!(app_events(&second), app_events(&want), "read anew");
}
