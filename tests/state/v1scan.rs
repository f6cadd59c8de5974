//! Issue 11, items 1 and 2 on a fixture laid out like a hybrid host's
//! /sys/fs/cgroup (`unified/` = cgroup2 with only hugetlb, `cpu,cpuacct/`,
//! `memory/`, `blkio/`, `pids/`, `freezer/`, `systemd/` = v1 hierarchies),
//! whose v1 files hold texts captured from this host's real v1 groups
//! (tests/fixtures/v1/v1scan/): one tree, the union of the hierarchies'
//! groups, CPU from cpuacct, memory from memory.usage_in_bytes, IO from
//! blkio.throttle.*_recursive, PIDs from pids.current, frozen from
//! freezer.state; a group only in cgroup2 keeps cgroup2's figures; a group
//! only in v1 is in the tree; `-b` and `--json` say so.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::model::host::layout::HierId;
use cgtop::model::{GroupPath, HierKind};
use cgtop::options::Options;
use cgtop::render::columns::Column;
use cgtop::source::collector::Collector;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const CAPTURED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v1/v1scan/");

fn captured(name: &str) -> String {
    fs::read_to_string(format!("{CAPTURED}{name}")).unwrap()
}

fn put(base: &Path, hier: &str, group: &str, files: &[(&str, String)]) {
    let d = base.join(hier).join(group);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("cgroup.procs"), "").unwrap();
    for (n, t) in files {
        fs::write(d.join(n), t).unwrap();
    }
}

/// cpuacct files of `usage_ns` (user 5/6 of it, system the rest).
fn cpuacct(usage_ns: u64) -> Vec<(&'static str, String)> {
    vec![
        ("cpuacct.usage", format!("{usage_ns}\n")),
        ("cpuacct.usage_user", format!("{}\n", usage_ns / 6 * 5)),
        ("cpuacct.usage_sys", format!("{}\n", usage_ns / 6)),
        ("cpu.stat", captured("cpu.stat")),
    ]
}

/// The hybrid layout: system.slice/web.service in every hierarchy,
/// user.slice in cgroup2 only (no v1 controller enabled for it),
/// docker/abc in cpu,cpuacct and memory only (made by a v1 tool).
fn layout() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let b = t.path();
    // cgroup2: hugetlb only; core cpu.stat, cgroup.events
    let v2 = |usec: u64| {
        vec![
            ("cgroup.controllers", "hugetlb\n".to_string()),
            (
                "cpu.stat",
                format!("usage_usec {usec}\nuser_usec {usec}\nsystem_usec 0\n"),
            ),
            ("cgroup.events", "populated 1\nfrozen 0\n".to_string()),
        ]
    };
    put(b, "unified", "", &v2(9_000_000));
    fs::write(
        b.join("unified/cgroup.stat"),
        "nr_descendants 3\nnr_dying_descendants 0\n",
    )
    .unwrap();
    put(b, "unified", "system.slice", &v2(2_000_000));
    put(b, "unified", "system.slice/web.service", &v2(1_000_000));
    fs::write(
        b.join("unified/system.slice/web.service/cgroup.procs"),
        "41\n42\n",
    )
    .unwrap();
    put(b, "unified", "user.slice", &v2(3_000_000));
    for g in ["", "system.slice", "system.slice/web.service", "user.slice"] {
        put(b, "systemd", g, &[]);
    }
    for (g, ns) in [
        ("", 50_000_000_000),
        ("system.slice", 2_000_000_000),
        ("system.slice/web.service", 370_123_321),
        ("docker", 1_000_000_000),
        ("docker/abc", 1_000_000_000),
    ] {
        put(b, "cpu,cpuacct", g, &cpuacct(ns));
        put(
            b,
            "memory",
            g,
            &[
                (
                    "memory.usage_in_bytes",
                    if g.is_empty() {
                        "23820537856\n".into()
                    } else {
                        captured("memory.usage_in_bytes")
                    },
                ),
                ("memory.limit_in_bytes", captured("memory.limit_in_bytes")),
                (
                    "memory.memsw.usage_in_bytes",
                    captured("memory.memsw.usage_in_bytes"),
                ),
            ],
        );
    }
    for g in ["", "system.slice", "system.slice/web.service"] {
        let io = if g.is_empty() { "root." } else { "" };
        put(
            b,
            "blkio",
            g,
            &[
                (
                    "blkio.throttle.io_service_bytes_recursive",
                    captured(&format!("{io}blkio.throttle.io_service_bytes_recursive")),
                ),
                (
                    "blkio.throttle.io_serviced_recursive",
                    captured("blkio.throttle.io_serviced_recursive"),
                ),
                (
                    "blkio.throttle.io_service_bytes",
                    captured("blkio.throttle.io_service_bytes"),
                ),
                (
                    "blkio.throttle.io_serviced",
                    captured("blkio.throttle.io_serviced"),
                ),
            ],
        );
        // the root has no pids.current nor freezer.state
        put(
            b,
            "pids",
            g,
            &if g.is_empty() {
                vec![]
            } else {
                vec![("pids.current", "3\n".to_string())]
            },
        );
        put(
            b,
            "freezer",
            g,
            &if g.is_empty() {
                vec![]
            } else {
                vec![("freezer.state", "THAWED\n".to_string())]
            },
        );
    }
    fs::write(
        b.join("freezer/system.slice/web.service/freezer.state"),
        "FROZEN\n",
    )
    .unwrap();
    t
}

fn opts(root: &Path) -> Options {
    Options {
        root: Some(root.to_path_buf()),
        ..crate::common::options()
    }
}

fn collector(root: &Path) -> Collector {
    let o = opts(root);
    let (m, hier, hiers) = cgtop::run::locate(&o).unwrap();
    assert_eq!(hiers.layout.primary(), Some(HierId::V2));
    let mut c = Collector::with_hiers(cgtop::run::collector_config(&o, &m, false), hier, &hiers);
    c.set_cpu_ceiling(None);
    c
}

fn find<'a>(
    r: &'a cgtop::source::collector::Refresh,
    p: &str,
) -> (usize, &'a cgtop::model::GroupSample) {
    let i = r
        .snapshot
        .groups
        .iter()
        .position(|g| g.path == GroupPath::new(p))
        .unwrap_or_else(|| panic!("{p} not in the tree"));
    (i, &r.snapshot.groups[i])
}

fn bump_ns(base: &Path, group: &str, add_ns: u64) {
    let f = base.join("cpu,cpuacct").join(group).join("cpuacct.usage");
    let now: u64 = fs::read_to_string(&f).unwrap().trim().parse().unwrap();
    fs::write(&f, format!("{}\n", now + add_ns)).unwrap();
}

#[test]
fn one_tree_with_each_figure_from_its_hierarchy() {
    let t = layout();
    let b = t.path();
    let mut c = collector(b);
    c.refresh(Duration::from_secs(1));
    bump_ns(b, "system.slice/web.service", 500_000_000);
    bump_ns(b, "docker/abc", 250_000_000);
    let r = c.refresh(Duration::from_secs(2));
    let paths: Vec<&[u8]> = r
        .snapshot
        .groups
        .iter()
        .map(|g| g.path.as_bytes())
        .collect();
    assert_eq!(
        paths,
        [
            &b""[..],
            b"docker",
            b"docker/abc",
            b"system.slice",
            b"system.slice/web.service",
            b"user.slice"
        ],
        "the union of every hierarchy's groups"
    );
    let (i, web) = find(&r, "system.slice/web.service");
    // CPU from cpuacct: ns -> µs; the rate is the cpuacct counter's
    let cpu = web.hot.cpu.unwrap();
    assert_eq!(cpu.usage_usec, 370_123 + 500_000);
    assert_eq!(cpu.nr_periods, Some(0), "v1 cpu.stat's throttling");
    let pct = r.rates[i].cpu_pct.unwrap();
    assert!((pct - 50.0).abs() < 0.01, "{pct}");
    assert_eq!(web.hot.memory_current, Some(380_928));
    let io = web.hot.io.as_ref().unwrap().total();
    assert_eq!(
        (io.rbytes, io.wbytes, io.rios, io.wios),
        (Some(20 << 20), Some(20 << 20), Some(40), Some(20))
    );
    assert_eq!(web.hot.pids_current, Some(3));
    assert_eq!(
        web.hot.nr_procs,
        Some(2),
        "processes from the primary's cgroup.procs"
    );
    assert_eq!(
        web.hot.events.unwrap().frozen,
        Some(true),
        "freezer.state FROZEN"
    );
    let s = web.hot.v1.sources;
    assert_eq!(
        [s.cpu, s.memory, s.io, s.pids, s.freezer],
        [Some(HierKind::V1); 5]
    );
    // only in v1: in the tree with v1's figures
    let (i, abc) = find(&r, "docker/abc");
    assert!((r.rates[i].cpu_pct.unwrap() - 25.0).abs() < 0.01);
    assert_eq!(abc.hot.memory_current, Some(380_928));
    assert_eq!(abc.hot.io, None);
    // only in cgroup2: cgroup2's core cpu.stat stands in for cpuacct
    let (_, user) = find(&r, "user.slice");
    assert_eq!(user.hot.cpu.unwrap().usage_usec, 3_000_000);
    assert_eq!(user.hot.v1.sources.cpu, Some(HierKind::V2));
    assert_eq!(user.hot.memory_current, None);
}

#[test]
fn a_group_made_in_v1_only_shows_within_two_refreshes() {
    let t = layout();
    let b = t.path();
    let mut c = collector(b);
    // past the first walks
    for s in 1..4 {
        c.refresh(Duration::from_secs(s));
    }
    put(
        b,
        "memory",
        "docker/new",
        &[("memory.usage_in_bytes", "4096\n".into())],
    );
    let mut seen = false;
    for s in 4..6 {
        let r = c.refresh(Duration::from_secs(s));
        if r.snapshot.find(&GroupPath::new("docker/new")).is_some() {
            seen = true;
            break;
        }
    }
    assert!(seen, "a group v1 alone has, made after start");
    // and removed again: gone as fast
    fs::remove_dir_all(b.join("memory/docker/new")).unwrap();
    let r = c.refresh(Duration::from_secs(7));
    let r2 = c.refresh(Duration::from_secs(8));
    assert!(
        r.snapshot.find(&GroupPath::new("docker/new")).is_none()
            || r2.snapshot.find(&GroupPath::new("docker/new")).is_none()
    );
    // nothing changed: no walk
    let r = c.refresh(Duration::from_secs(9));
    assert!(
        !r.snapshot.cost.walked,
        "a steady v1 tree is not listed again"
    );
}

fn cgtop(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn batch_text_and_json_show_the_union_and_the_sources() {
    let t = layout();
    let root = t.path().to_str().unwrap();
    let text = cgtop(&["--root", root, "-b", "-n", "1", "-d", "0.1"]);
    let first = text.lines().next().unwrap();
    assert!(first.contains("(hybrid, v1 holds "), "{first}");
    let row = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
            .to_owned()
    };
    // memory.usage_in_bytes 380928 = 372K; 3 PIDs from pids.current
    let web = row("web.service");
    assert!(web.contains("372K"), "{web}");
    assert!(web.split_whitespace().any(|w| w == "3"), "{web}");
    assert!(row("abc").contains("372K"), "{text}");
    row("user.slice");

    let json = cgtop(&["--root", root, "--json", "--brief", "-n", "1", "-d", "0.1"]);
    let doc: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let groups = doc["groups"].as_array().unwrap();
    let g = |p: &str| {
        groups
            .iter()
            .find(|g| g["path"] == p)
            .unwrap_or_else(|| panic!("{p}: {json}"))
    };
    let web = g("/system.slice/web.service");
    assert_eq!(
        web["sources"],
        serde_json::json!({"cpu": "v1", "memory": "v1", "io": "v1", "pids": "v1", "freezer": "v1"})
    );
    assert_eq!(web["freezer_state"], "frozen");
    assert_eq!(web["memory_current"], 380_928);
    assert_eq!(web["cpu"]["usage_usec"], 370_123);
    assert_eq!(g("/user.slice")["sources"]["cpu"], "v2");
    assert!(g("/docker/abc")["sources"].get("io").is_none());
}

#[test]
fn the_own_blkio_files_where_the_recursive_ones_are_not() {
    let t = layout();
    let b = t.path();
    let web = b.join("blkio/system.slice/web.service");
    fs::remove_file(web.join("blkio.throttle.io_service_bytes_recursive")).unwrap();
    fs::remove_file(web.join("blkio.throttle.io_serviced_recursive")).unwrap();
    fs::write(
        web.join("blkio.throttle.io_service_bytes"),
        "8:0 Read 7\n8:0 Write 9\nTotal 16\n",
    )
    .unwrap();
    let mut c = collector(b);
    let r = c.refresh(Duration::from_secs(1));
    let (_, w) = find(&r, "system.slice/web.service");
    let io = w.hot.io.as_ref().unwrap().total();
    assert_eq!((io.rbytes, io.wbytes), (Some(7), Some(9)));
    assert!(w.hot.v1.sources.io_own_only);
    // where the subtree's files are, the group's own are not read
    let (_, s) = find(&r, "system.slice");
    assert!(!s.hot.v1.sources.io_own_only);
}

#[test]
fn the_tui_header_names_a_v1_root_as_such_and_fits_narrow_screens() {
    use cgtop::model::{MountInfo, MountMode};
    let t = layout();
    let v1 = MountInfo {
        root: "/sys/fs/cgroup/systemd".into(),
        mode: MountMode::V1 {
            v1_controllers: [
                "cpu", "cpuacct", "memory", "blkio", "net_cls", "net_prio", "pids", "freezer",
            ]
            .map(String::from)
            .to_vec(),
        },
    };
    for (w, want) in [
        (200, "cgroup v1 /sys/fs/cgroup/systemd (v1 only, v1 holds cpu,cpuacct,memory,blkio,net_cls,net_prio,pids,freezer)"),
        (100, "cgroup v1 /sys/fs/cgroup/systemd (v1 only, 8 controllers)"),
        (80, "cgroup v1 /sys/fs/cgroup/systemd (v1 only)"),
    ] {
        let (a, _c) = common::app_on(&t.path().join("memory"), v1.clone(), w, 30);
        let s = common::screen(&a, w, 30);
        let first = s.lines().next().unwrap();
        assert!(first.contains(want), "{w}: {first}");
        assert!(!first.contains("cgroup2"), "{first}");
    }
}

#[test]
fn no_rate_across_a_change_of_source() {
    // user.slice is in cgroup2 only (its CPU: cgroup2's core cpu.stat,
    // 3 s); systemd then makes it in cpu,cpuacct (CPUAccounting=yes), whose
    // counter says 40 s: no 3,700 % for that refresh, a rate the next
    let t = layout();
    let b = t.path();
    let mut c = collector(b);
    c.refresh(Duration::from_secs(1));
    let r = c.refresh(Duration::from_secs(2));
    let (i, _) = find(&r, "user.slice");
    assert_eq!(r.rates[i].cpu_pct, Some(0.0));
    put(b, "cpu,cpuacct", "user.slice", &cpuacct(40_000_000_000));
    let r = c.refresh(Duration::from_secs(3));
    let (i, g) = find(&r, "user.slice");
    assert_eq!(g.hot.v1.sources.cpu, Some(HierKind::V1));
    assert_eq!(
        r.rates[i].cpu_pct, None,
        "two counters of different origins"
    );
    bump_ns(b, "user.slice", 100_000_000);
    let r = c.refresh(Duration::from_secs(4));
    let (i, _) = find(&r, "user.slice");
    let pct = r.rates[i].cpu_pct.unwrap();
    assert!((pct - 10.0).abs() < 0.01, "{pct}");
}

/// The hierarchies' scanners share one copy of each path: a group
/// removed from one hierarchy only keeps its path and the other
/// hierarchies' figures, and the removed one's falls back (memory: none
/// in this cgroup2); removed from the last, it leaves the tree.
///
/// ```text
/// system.slice/web.service   every hierarchy
///   rmdir memory/...         cpu, io, pids, frozen still from v1; no memory
///   rmdir everywhere         gone
/// ```
#[test]
fn a_group_removed_from_one_hierarchy_keeps_the_others_figures() {
    let t = layout();
    let b = t.path();
    let mut c = collector(b);
    c.refresh(Duration::from_secs(1));
    let r = c.refresh(Duration::from_secs(2));
    let (_, before) = find(&r, "system.slice/web.service");
    let before = before.clone();
    assert_eq!(before.hot.memory_current, Some(380_928));
    fs::remove_dir_all(b.join("memory/system.slice/web.service")).unwrap();
    // a fixture has no inotify event for a removal by a test: the walk
    c.invalidate();
    let r = c.refresh(Duration::from_secs(3));
    let (_, web) = find(&r, "system.slice/web.service");
    assert_eq!(web.hot.memory_current, None, "no memory hierarchy holds it");
    assert_eq!(web.hot.v1.sources.memory, None);
    assert_eq!(web.hot.cpu, before.hot.cpu, "cpuacct's and cpu's");
    assert_eq!(web.hot.io, before.hot.io, "blkio's");
    assert_eq!(web.hot.pids_current, Some(3), "pids'");
    assert_eq!(web.hot.nr_procs, Some(2), "cgroup2's cgroup.procs");
    assert_eq!(web.hot.events.unwrap().frozen, Some(true), "freezer's");
    // its siblings and parent are as they were
    let (_, parent) = find(&r, "system.slice");
    assert_eq!(parent.hot.memory_current, Some(380_928));
    for h in [
        "unified",
        "systemd",
        "cpu,cpuacct",
        "blkio",
        "pids",
        "freezer",
    ] {
        fs::remove_dir_all(b.join(h).join("system.slice/web.service")).unwrap();
    }
    c.invalidate();
    let r = c.refresh(Duration::from_secs(4));
    assert!(r
        .snapshot
        .find(&GroupPath::new("system.slice/web.service"))
        .is_none());
    assert!(r.snapshot.find(&GroupPath::new("system.slice")).is_some());
}

/// Limit colours on v1: a row is graded against the limits of the v1
/// hierarchies that hold its controllers (cpu.cfs_quota_us,
/// memory.limit_in_bytes, pids.max), on a hybrid host and on a v1-only
/// one, for a group in every hierarchy and for one made in v1 only; the
/// cursor stays on "/", so no row borrows the inspected group's limits.
///
/// ```text
/// /
/// ├─docker/abc                 memory at 80 % of its limit: warm
/// └─system.slice/web.service   46 % of one core under half a CPU, 95 %
///                              of its memory limit, 3 of 3 pids: hot
/// ```
#[test]
fn rows_are_graded_against_their_v1_limits_on_hybrid_and_v1_only_hosts() {
    use cgtop::app::App;
    use cgtop::ui::Theme;
    const WEB: &str = "system.slice/web.service";
    for v1_only in [false, true] {
        let t = layout();
        let b = t.path();
        let web = |h: &str| b.join(h).join(WEB);
        fs::write(web("cpu,cpuacct").join("cpu.cfs_quota_us"), "50000\n").unwrap();
        fs::write(web("cpu,cpuacct").join("cpu.cfs_period_us"), "100000\n").unwrap();
        // 380928 bytes in use (the captured memory.usage_in_bytes): 95 %
        // of 98 pages, 80 % of 116
        fs::write(web("memory").join("memory.limit_in_bytes"), "401408\n").unwrap();
        fs::write(
            b.join("memory/docker/abc/memory.limit_in_bytes"),
            "475136\n",
        )
        .unwrap();
        fs::write(web("pids").join("pids.max"), "3\n").unwrap();
        if v1_only {
            fs::remove_dir_all(b.join("unified")).unwrap();
        }
        let o = opts(b);
        let (m, hier, hiers) = cgtop::run::locate(&o).unwrap();
        let primary = if v1_only { "systemd" } else { "unified" };
        assert_eq!(m.root, b.join(primary), "{v1_only}");
        let mut c =
            Collector::with_hiers(cgtop::run::collector_config(&o, &m, false), hier, &hiers);
        c.set_cpu_ceiling(None);
        c.set_grade_limits(true);
        let mut a = App::new(common::host(), m, GroupPath::root(), Duration::from_secs(1));
        common::resize(&mut a, 120, 40);
        common::tick(&mut a, &mut c, 1.0);
        bump_ns(b, WEB, 460_000_000);
        common::tick(&mut a, &mut c, 2.0);
        // the tree alone, every row on screen, the cursor on "/"
        common::send(&mut a, &mut c, common::ch('z'));
        assert_eq!(a.cursor, 0);
        let theme = Theme::color();
        let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
        term.draw(|f| cgtop::ui::render(f, &a, &theme)).unwrap();
        let buf = term.backend().buffer().clone();
        let line = |y: u16| -> String { (0..120).map(|x| buf[(x, y)].symbol()).collect() };
        let row = |name: &str| {
            (0..40)
                .find(|&y| line(y).contains(name))
                .unwrap_or_else(|| panic!("no row {name}:\n{}", common::screen(&a, 120, 40)))
        };
        // the style of every cell of `figure` on row `y`
        let styles = |y: u16, figure: &str| {
            let text = line(y);
            let at = text
                .find(figure)
                .unwrap_or_else(|| panic!("{figure} not in {text}"));
            let x0 = text[..at].chars().count() as u16;
            (x0..x0 + figure.chars().count() as u16)
                .map(|x| (buf[(x, y)].fg, buf[(x, y)].bg))
                .collect::<Vec<_>>()
        };
        let hot = (
            theme.hot.fg.unwrap_or(ratatui::style::Color::Reset),
            theme.hot.bg.unwrap_or(ratatui::style::Color::Reset),
        );
        let warm = (
            theme.warm.fg.unwrap_or(ratatui::style::Color::Reset),
            theme.warm.bg.unwrap_or(ratatui::style::Color::Reset),
        );
        let w = row("web.service");
        let text = line(w);
        for figure in ["46.0", "372K"] {
            for s in styles(w, figure) {
                assert_eq!(s, hot, "{v1_only} {figure}: {text}");
            }
        }
        // PIDS: the "3" right-aligned before the state marks
        assert_eq!(styles(w, "     3 ")[5], hot, "{v1_only}: {text}");
        let d = row("abc");
        for s in styles(d, "372K") {
            assert_eq!(s, warm, "{v1_only}: {}", line(d));
        }
    }
}

/// A kernel before 4.7 (CentOS/RHEL 7's 3.10) has no cpuacct.usage_user
/// nor usage_sys: the user/system split comes from cpuacct.stat's USER_HZ
/// ticks (100 a second), in `--json` and the OpenMetrics exposition of the
/// real binary; a kernel with both keeps the ns files.
#[test]
fn old_kernels_split_user_and_system_from_cpuacct_stat() {
    let t = layout();
    let b = t.path();
    let cpu = b.join("cpu,cpuacct");
    for g in [
        "",
        "system.slice",
        "system.slice/web.service",
        "docker",
        "docker/abc",
    ] {
        fs::remove_file(cpu.join(g).join("cpuacct.usage_user")).unwrap();
        fs::remove_file(cpu.join(g).join("cpuacct.usage_sys")).unwrap();
        fs::write(cpu.join(g).join("cpuacct.stat"), captured("cpuacct.stat")).unwrap();
    }
    // where both are there, the ns files win (web.service keeps them)
    let web = cpu.join("system.slice/web.service");
    fs::write(web.join("cpuacct.usage_user"), "300000000\n").unwrap();
    fs::write(web.join("cpuacct.usage_sys"), "70123321\n").unwrap();
    // captured: user 121860, system 35737 ticks of 10 ms
    let (user, system) = (1_218_600_000_u64, 357_370_000_u64);
    let root = b.to_str().unwrap();
    let json = cgtop(&["--root", root, "--json", "-n", "1", "-d", "0.1"]);
    let doc: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    let g = |p: &str| {
        doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["path"] == p)
            .unwrap_or_else(|| panic!("{p}: {json}"))
            .clone()
    };
    for p in ["/docker/abc", "/system.slice"] {
        let c = &g(p)["cpu"];
        assert_eq!(
            (&c["user_usec"], &c["system_usec"]),
            (&user.into(), &system.into()),
            "{p}: {c}"
        );
    }
    let c = &g("/system.slice/web.service")["cpu"];
    assert_eq!(
        (&c["user_usec"], &c["system_usec"]),
        (&300_000.into(), &70_123.into()),
        "{c}"
    );

    let m = cgtop(&["--root", root, "--openmetrics"]);
    let sample = |family: &str, group: &str| {
        m.lines()
            .find(|l| l.starts_with(family) && l.contains(&format!("cgroup=\"{group}\"")))
            .unwrap_or_else(|| panic!("no {family} for {group}:\n{m}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let user_s = sample("cgroup_cpu_user_seconds_total", "/docker/abc");
    let system_s = sample("cgroup_cpu_system_seconds_total", "/docker/abc");
    assert!((user_s - 1218.6).abs() < 1e-9, "{user_s}");
    assert!((system_s - 357.37).abs() < 1e-9, "{system_s}");
}

/// web.service's blkio bytes file as captured, with `read` and `write`
/// bytes more on 254:0.
fn bytes_moved(base: &Path, read: u64, write: u64) {
    let text = captured("blkio.throttle.io_service_bytes_recursive");
    let moved: String = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[..] {
                [dev, op @ ("Read" | "Write"), n] => {
                    let add = if op == "Read" { read } else { write };
                    format!("{dev} {op} {}\n", n.parse::<u64>().unwrap() + add)
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    let f = base.join("blkio/system.slice/web.service/blkio.throttle.io_service_bytes_recursive");
    fs::write(f, moved).unwrap();
}

/// READ/s and WRITE/s are bytes (io_service_bytes): they do not depend on
/// v1 blkio's operation counts, a file of its own (io_serviced), whether
/// the group's is there, not read (`-b`'s table: `set_io_ops(false)`),
/// absent, or no file that can be read (a FIFO). Both while the bytes
/// move and while they rest.
#[test]
fn io_byte_rates_without_the_operation_counts() {
    for ops in ["read", "not read", "absent", "fifo"] {
        let t = layout();
        let b = t.path();
        let web = b.join("blkio/system.slice/web.service");
        for f in [
            "blkio.throttle.io_serviced_recursive",
            "blkio.throttle.io_serviced",
        ] {
            match ops {
                "absent" => fs::remove_file(web.join(f)).unwrap(),
                "fifo" => {
                    fs::remove_file(web.join(f)).unwrap();
                    rustix::fs::mkfifoat(rustix::fs::CWD, web.join(f), 0o644.into()).unwrap();
                }
                _ => {}
            }
        }
        let mut c = collector(b);
        c.set_io_ops(ops != "not read");
        // no /proc/diskstats: no disk uncounted by blkio (that check has
        // its own tests) can make this host's IO unknown
        let no_proc = tempfile::tempdir().unwrap();
        c.set_proc_dir(Some(no_proc.path().to_path_buf()));
        c.refresh(Duration::from_secs(1));
        bytes_moved(b, 1 << 20, 3 << 20);
        let moving = c.refresh(Duration::from_secs(3));
        let resting = c.refresh(Duration::from_secs(4));
        for (r, want) in [(&moving, (1 << 19, 3 << 19)), (&resting, (0, 0))] {
            let (i, g) = find(r, "system.slice/web.service");
            let io = g.hot.io.as_ref().unwrap().total();
            assert_eq!(
                io.rios.is_some(),
                ops == "read",
                "{ops}: operation counts {io:?}"
            );
            let rate = |c: Column| c.sort_value(g, &r.rates[i]);
            assert_eq!(
                (rate(Column::IoRead), rate(Column::IoWrite)),
                (Some(f64::from(want.0)), Some(f64::from(want.1))),
                "{ops}: READ/s, WRITE/s {:?}",
                r.rates[i]
            );
        }
    }
}
