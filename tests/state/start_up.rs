//! The first frame first: the collector thread's first refresh carries
//! the tree and every level figure (memory, PIDs, limits, state) and no
//! rate, and the second, with the first rates, follows after the short
//! first interval (`collector::FIRST_INTERVAL`), not after a whole
//! interval; the machine's figures (the header's meters) come from the
//! second refresh on.

use crate::common;
use cgtop::model::GroupPath;
use cgtop::source::collector::{self, Collected, Collector, CollectorConfig, Command, Refresh};
use cgtop::source::scan::ScanConfig;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn next_refresh(rx: &mpsc::Receiver<Collected>, within: Duration) -> Option<Refresh> {
    let until = Instant::now() + within;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Collected::Refresh(r)) => return Some(*r),
            Ok(Collected::Partial(_) | Collected::Inspection(_) | Collected::Found(_)) => {}
            Err(_) => return None,
        }
    }
}

#[test]
fn the_first_refresh_has_the_tree_and_its_levels_and_the_rates_follow_soon() {
    let mut c = Collector::new(CollectorConfig {
        root: common::fixture("pure-v2-systemd"),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: common::fixture("sys-dev-block"),
    });
    // as the TUI sets it up
    c.set_proc_dir(Some("/proc".into()));
    c.set_grade_limits(true);
    c.defer_start_up();
    let (tx, rx) = mpsc::channel::<Collected>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
    // an interval far longer than the test may wait
    let interval = Duration::from_secs(60);
    collector::spawn_from(c, Instant::now(), interval, tx, cmd_rx).unwrap();

    let first = next_refresh(&rx, Duration::from_secs(20)).expect("a first refresh");
    let g = &first.snapshot.groups;
    assert_eq!(g.len(), 31, "the whole tree");
    assert!(g.iter().any(|g| g.hot.memory_current.is_some()), "memory");
    assert!(g.iter().any(|g| g.hot.pids_current.is_some()), "PIDs");
    assert!(g.iter().any(|g| g.hot.events.is_some()), "state");
    assert_eq!(first.limits.len(), g.len(), "every group's limits");
    assert!(
        first
            .rates
            .iter()
            .all(|r| r.cpu_pct.is_none() && r.io.is_none()),
        "no rate from one reading"
    );
    assert!(first.machine.is_none(), "the header's meters come later");

    // the second: after the first interval, not after `interval`
    let second = next_refresh(&rx, Duration::from_secs(20)).expect(
        "the second refresh comes after the short first interval, not after the 60 s interval",
    );
    let window = second.snapshot.at.saturating_sub(first.snapshot.at);
    assert!(window > Duration::ZERO && window < interval, "{window:?}");
    assert!(
        second.rates.iter().any(|r| r.cpu_pct.is_some()),
        "the first rates"
    );
    assert!(
        second.machine.is_some(),
        "the machine's figures from the second on"
    );
    let _ = cmd_tx.send(Command::Stop);
}

/// A cgroup2-like tree of `n` groups under `farm/`, each with a CPU
/// counter: a first walk (every directory listed, every file opened) of
/// some tens of ms, and reads after it of a few.
fn wide_tree(n: usize) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let put = |d: &std::path::Path| {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
        std::fs::write(
            d.join("cpu.stat"),
            "usage_usec 1000\nuser_usec 1000\nsystem_usec 0\n",
        )
        .unwrap();
    };
    put(t.path());
    for i in 0..n {
        put(&t.path().join(format!("farm/g-{i}")));
    }
    t
}

#[test]
fn the_first_rates_span_at_least_half_the_first_interval_from_the_first_counters_read() {
    // the first refresh reads its rate counters after its walk (every
    // directory listed, every file opened): the second is due
    // FIRST_INTERVAL after the first began, but at least half of it after
    // that stamp, so that a long walk does not leave the first rates a
    // change over a few milliseconds
    let t = wide_tree(3000);
    let mut c = Collector::new(CollectorConfig {
        root: t.path().to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: common::fixture("sys-dev-block"),
    });
    c.defer_start_up();
    let (tx, rx) = mpsc::channel::<Collected>();
    let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
    collector::spawn_from(c, Instant::now(), Duration::from_secs(60), tx, cmd_rx).unwrap();
    let first = next_refresh(&rx, Duration::from_secs(20)).expect("a first refresh");
    let second = next_refresh(&rx, Duration::from_secs(20)).expect("a second refresh");
    let _ = cmd_tx.send(Command::Stop);
    assert!(first.snapshot.cost.walked, "the first refresh walks");
    let window = second.snapshot.at.saturating_sub(first.snapshot.at);
    assert!(
        window >= collector::FIRST_INTERVAL / 2,
        "the first rates span {window:?}, less than half of {:?} (the first walk took about {:?})",
        collector::FIRST_INTERVAL,
        first.snapshot.cost.wall
    );
    assert!(window < Duration::from_secs(60), "{window:?}");
}

/// A hybrid layout under a `--root`: cgroup2 and cpuacct hold `a`; the
/// cpuset hierarchy, from which no figure is read, holds `only` besides.
fn hybrid_with_cpuset() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let put = |hier: &str, group: &str, files: &[(&str, &str)]| {
        let d = t.path().join(hier).join(group);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
        for (n, text) in files {
            std::fs::write(d.join(n), text).unwrap();
        }
    };
    let v2: &[(&str, &str)] = &[
        ("cgroup.controllers", "hugetlb\n"),
        (
            "cpu.stat",
            "usage_usec 1000\nuser_usec 1000\nsystem_usec 0\n",
        ),
        ("cgroup.events", "populated 1\nfrozen 0\n"),
    ];
    put("unified", "", v2);
    std::fs::write(
        t.path().join("unified/cgroup.stat"),
        "nr_descendants 1\nnr_dying_descendants 0\n",
    )
    .unwrap();
    put("unified", "a", v2);
    put("cpuacct", "", &[("cpuacct.usage", "5000\n")]);
    put("cpuacct", "a", &[("cpuacct.usage", "2000\n")]);
    put("cpuset", "", &[("cpuset.cpus", "0-1\n")]);
    put("cpuset", "a", &[("cpuset.cpus", "0-1\n")]);
    put("cpuset", "only", &[("cpuset.cpus", "0\n")]);
    t
}

#[test]
fn the_first_frame_and_the_first_rates_wait_for_no_hierarchy_they_show_nothing_of() {
    let t = hybrid_with_cpuset();
    let o = cgtop::options::Options {
        root: Some(t.path().to_path_buf()),
        iterations: None,
        ..crate::common::options()
    };
    let (m, hier, hiers) = cgtop::run::locate(&o).unwrap();
    let cpuset = hiers.layout.holder("cpuset").expect("a cpuset hierarchy");
    let mut c = Collector::with_hiers(cgtop::run::collector_config(&o, &m, false), hier, &hiers);
    c.defer_start_up();
    let paths = |r: &Refresh| -> Vec<String> {
        r.snapshot
            .groups
            .iter()
            .map(|g| g.path.to_string())
            .collect()
    };
    // the first frame: cgroup2's and cpuacct's groups, cpuset not listed;
    // until it is, any group may be there (a write names it too)
    let r1 = c.refresh(Duration::from_secs(1));
    assert_eq!(paths(&r1), ["/", "/a"]);
    assert!(r1.snapshot.groups[1].hot.cpu.is_some(), "cpuacct's figure");
    assert!(
        r1.snapshot
            .groups
            .iter()
            .all(|g| g.hot.v1.held_in.contains(cpuset)),
        "not listed yet: every group may be in cpuset"
    );
    // nor the second, the first rates: a walk there would make it a
    // walked refresh, which reads every group's limits again
    let r2 = c.refresh(Duration::from_secs(2));
    assert_eq!(paths(&r2), ["/", "/a"]);
    assert!(!r2.snapshot.cost.walked, "the first rates walk nothing");
    assert!(r2.snapshot.groups[1].hot.cpu.is_some(), "cpuacct's figure");
    // the third lists it
    let r3 = c.refresh(Duration::from_secs(3));
    assert_eq!(paths(&r3), ["/", "/a", "/only"]);
    let only = &r3.snapshot.groups[2];
    assert!(only.hot.v1.held_in.contains(cpuset));
}

/// Identities fill in after the first frame: the first refresh of a
/// deferred start-up carries none, the second carries them; steady
/// refreshes after that resolve nothing again. Without the deferral (batch
/// and JSON output) the first refresh has them.
#[test]
fn identities_come_after_the_first_frame_and_cost_no_steady_refresh() {
    use cgtop::source::identity::{Resolver, Roots};
    let cfg = CollectorConfig {
        root: common::fixture("pure-v2-systemd"),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: false,
        sys_dev_block: common::fixture("sys-dev-block"),
    };
    let nothing = tempfile::tempdir().unwrap();
    let roots = Roots {
        base: nothing.path().to_path_buf(),
        units: false,
    };
    let mut c = Collector::new(cfg.clone());
    c.set_identities(Some(Resolver::new(roots.clone())));
    c.defer_start_up();
    let named = |r: &Refresh| {
        r.snapshot
            .groups
            .iter()
            .filter(|g| g.identity.is_some())
            .count()
    };
    let first = c.refresh(Duration::from_secs(0));
    assert_eq!(named(&first), 0, "the first frame is not delayed by names");
    let second = c.refresh(Duration::from_secs(1));
    let n = named(&second);
    assert!(n > 0, "names fill in on the second refresh");
    let unit = second
        .snapshot
        .find(&GroupPath::new("system.slice"))
        .and_then(|g| g.identity.clone())
        .expect("system.slice is a unit");
    assert_eq!(unit.id, "system.slice");
    for s in 2..6 {
        let r = c.refresh(Duration::from_secs(s));
        assert_eq!(named(&r), n);
    }
    assert_eq!(
        c.identities().unwrap().passes(),
        1,
        "no pass on a steady refresh"
    );

    let mut batch = Collector::new(cfg);
    batch.set_identities(Some(Resolver::new(roots)));
    assert_eq!(named(&batch.refresh(Duration::from_secs(0))), n);
}
