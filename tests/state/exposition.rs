//! The Prometheus exposition (`cgtop --openmetrics`, `cgtop serve`):
//! parsed back (every sample's family declared, no duplicate series,
//! counters `_total`, `# EOF` last), checked by promtool, hostile group
//! names, limits absent when `max`, the name filter, the atomic file, and
//! README's metric list made from the one table.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
// the figures are integers the files hold: compared exactly on purpose
#![allow(clippy::float_cmp)]

use crate::common;
use crate::common::metrics_parse;

use cgtop::model::GroupPath;
use cgtop::render::openmetrics::{self, Format, Kind, FAMILIES};
use cgtop::run::serve as export;
use cgtop::source::collector::{Collector, CollectorConfig, Refresh};
use cgtop::source::scan::ScanConfig;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use metrics_parse::parse;

// ---------------------------------------------------------------- helpers

fn exporter_collector(root: &Path) -> Collector {
    Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: true,
        sys_dev_block: common::fixture("sys-dev-block"),
    })
}

fn reading(root: &Path) -> Refresh {
    let mut c = exporter_collector(root);
    c.set_export_reading(true);
    c.refresh(Duration::from_secs(1))
}

fn expose(root: &Path, filter: Option<&str>, f: Format) -> String {
    export::render(&reading(root), filter, Duration::from_millis(3), f)
}

fn cgtop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .output()
        .expect("run cgtop")
}

/// promtool's verdict on `text`, or None when promtool is not installed
/// (a failure under CI=true, where it must be).
fn promtool(text: &str) -> Option<(bool, String)> {
    if !common::have("promtool") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "promtool is not installed, and CI=true needs it (apt-get install prometheus)"
        );
        eprintln!("skipped: promtool not installed");
        return None;
    }
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool");
    // promtool stops reading at the first error: a broken pipe then is
    // its verdict, which the exit status gives
    let fed = child.stdin.take().unwrap().write_all(text.as_bytes());
    if let Err(e) = fed {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    let words = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), words))
}

const LAB: &str = "system.slice/system-postgresql.slice/postgresql@15-main.service";

/// A copy of the memory-limited fixture with limits set on the
/// PostgreSQL service, and a sibling with every limit at max.
fn limited_tree() -> tempfile::TempDir {
    let t = common::copy_fixture("memory-limited");
    let g = t.path().join(LAB);
    for (f, v) in [
        ("memory.max", "1073741824\n"),
        ("memory.high", "max\n"),
        ("memory.low", "0\n"),
        ("memory.min", "0\n"),
        ("memory.swap.max", "max\n"),
        ("pids.max", "200\n"),
        ("cpu.max", "50000 100000\n"),
        ("cpu.weight", "300\n"),
        (
            "io.max",
            "254:0 rbps=2097152 wbps=max riops=max wiops=1000\n",
        ),
        (
            "memory.events",
            "low 0\nhigh 3\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n",
        ),
    ] {
        std::fs::write(g.join(f), v).unwrap();
    }
    t
}

// ---------------------------------------------------------------- tests

/// The names helper promreal, the Grafana dashboard and README build on
/// (/work/briefs names contract): each is a sample name of the table.
#[test]
fn the_contract_names_are_all_there() {
    let have: HashSet<String> = FAMILIES
        .iter()
        .map(cgtop::render::openmetrics::Family::sample_name)
        .collect();
    for n in [
        "cgroup_cpu_usage_seconds_total",
        "cgroup_cpu_user_seconds_total",
        "cgroup_cpu_system_seconds_total",
        "cgroup_cpu_periods_total",
        "cgroup_cpu_throttled_periods_total",
        "cgroup_cpu_throttled_seconds_total",
        "cgroup_io_read_bytes_total",
        "cgroup_io_written_bytes_total",
        "cgroup_io_reads_total",
        "cgroup_io_writes_total",
        "cgroup_memory_events_total",
        "cgroup_pressure_cpu_waiting_seconds_total",
        "cgroup_pressure_memory_waiting_seconds_total",
        "cgroup_pressure_io_waiting_seconds_total",
        "cgroup_pressure_cpu_stalled_seconds_total",
        "cgroup_pressure_memory_stalled_seconds_total",
        "cgroup_pressure_io_stalled_seconds_total",
        "cgroup_memory_current_bytes",
        "cgroup_memory_swap_current_bytes",
        "cgroup_pids_current",
        "cgroup_memory_max_bytes",
        "cgroup_memory_high_bytes",
        "cgroup_memory_low_bytes",
        "cgroup_memory_min_bytes",
        "cgroup_memory_swap_max_bytes",
        "cgroup_pids_max",
        "cgroup_cpu_max_quota_seconds",
        "cgroup_cpu_max_period_seconds",
        "cgroup_cpu_weight",
        "cgroup_io_max_read_bytes_per_second",
        "cgroup_io_max_write_bytes_per_second",
        "cgroup_io_max_read_iops",
        "cgroup_io_max_write_iops",
        "cgroup_info",
        "cgtop_scrape_duration_seconds",
        "cgtop_scrape_groups",
    ] {
        assert!(have.contains(n), "{n} is not in the table");
    }
}

#[test]
fn both_formats_parse_back_and_every_family_is_the_tables() {
    let t = limited_tree();
    for f in [Format::OpenMetrics, Format::Text] {
        let text = expose(t.path(), None, f);
        let p = parse(&text, f);
        // every declared family is a row of the table, every row declared
        let table: HashSet<String> = FAMILIES
            .iter()
            .map(|fam| match f {
                Format::OpenMetrics => fam.name.to_owned(),
                Format::Text => fam.sample_name(),
            })
            .collect();
        let declared: HashSet<String> = p.types.keys().cloned().collect();
        assert_eq!(declared, table);
        for fam in FAMILIES {
            let key = match f {
                Format::OpenMetrics => fam.name.to_owned(),
                Format::Text => fam.sample_name(),
            };
            let want = match (f, fam.kind) {
                (Format::Text, Kind::Info) => "gauge",
                (_, k) => k.name(),
            };
            assert_eq!(p.types[&key], want);
            if f == Format::OpenMetrics && !fam.unit.is_empty() {
                assert_eq!(p.units[fam.name], fam.unit);
            }
            // the labels the table lists are the labels the samples have
            for s in p.values(&fam.sample_name()) {
                for l in s.labels.keys() {
                    assert!(fam.labels.contains(&l.as_str()), "{} has {l}", fam.name);
                }
            }
        }
        // one info sample per group, and the count says so
        let groups = p.values("cgroup_info").len();
        assert!(groups > 20, "{groups}");
        assert_eq!(p.values("cgtop_scrape_groups")[0].value, groups as f64);
    }
}

#[test]
fn counters_and_gauges_carry_the_files_figures_in_base_units() {
    let t = limited_tree();
    let p = parse(
        &expose(t.path(), None, Format::OpenMetrics),
        Format::OpenMetrics,
    );
    let g = format!("/{LAB}");
    let cpu = std::fs::read_to_string(t.path().join(LAB).join("cpu.stat")).unwrap();
    let usage: u64 = cpu
        .lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .unwrap()
        .parse()
        .unwrap();
    let got = p.of("cgroup_cpu_usage_seconds_total", &g).unwrap();
    assert!(
        (got - usage as f64 / 1e6).abs() < 1e-9,
        "{got} vs {usage} usec"
    );
    let mem: f64 = std::fs::read_to_string(t.path().join(LAB).join("memory.current"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(p.of("cgroup_memory_current_bytes", &g), Some(mem));
    // limits that are set, in base units
    assert_eq!(p.of("cgroup_memory_max_bytes", &g), Some(1_073_741_824.0));
    assert_eq!(p.of("cgroup_pids_max", &g), Some(200.0));
    assert_eq!(p.of("cgroup_cpu_max_quota_seconds", &g), Some(0.05));
    assert_eq!(p.of("cgroup_cpu_max_period_seconds", &g), Some(0.1));
    assert_eq!(p.of("cgroup_cpu_weight", &g), Some(300.0));
    assert_eq!(p.of("cgroup_memory_low_bytes", &g), Some(0.0));
    // ... and absent when max: never +Inf
    assert_eq!(p.of("cgroup_memory_high_bytes", &g), None);
    assert_eq!(p.of("cgroup_memory_swap_max_bytes", &g), None);
    assert!(!p.samples.iter().any(|s| s.value.is_infinite()));
    // a sibling whose memory.max and cpu.max say max has no series of
    // them (its pids.max, systemd's TasksMax, is set)
    let sib = "/system.slice/dbus.service";
    assert!(p.of("cgroup_info", sib).is_some());
    for n in [
        "cgroup_memory_max_bytes",
        "cgroup_cpu_max_quota_seconds",
        "cgroup_cpu_max_period_seconds",
    ] {
        assert_eq!(p.of(n, sib), None, "{n}");
    }
    assert_eq!(p.of("cgroup_pids_max", sib), Some(1140.0));
    // io.max per device: only the numbers set, the disk named
    let io: Vec<_> = p
        .values("cgroup_io_max_read_bytes_per_second")
        .into_iter()
        .filter(|s| s.labels["cgroup"] == g)
        .collect();
    assert_eq!(io.len(), 1);
    assert_eq!(io[0].value, 2_097_152.0);
    assert_eq!(io[0].labels["major_minor"], "254:0");
    assert_eq!(io[0].labels["device"], "vda");
    assert_eq!(p.of("cgroup_io_max_write_iops", &g), Some(1000.0));
    assert_eq!(p.of("cgroup_io_max_write_bytes_per_second", &g), None);
    // io.stat per device
    let rd: Vec<_> = p
        .values("cgroup_io_read_bytes_total")
        .into_iter()
        .filter(|s| s.labels["cgroup"] == g)
        .collect();
    assert_eq!(rd.len(), 1);
    assert_eq!(rd[0].value, 2_203_648.0);
    // memory events, one series per event
    let ev: BTreeMap<String, f64> = p
        .values("cgroup_memory_events_total")
        .into_iter()
        .filter(|s| s.labels["cgroup"] == g)
        .map(|s| (s.labels["event"].clone(), s.value))
        .collect();
    assert_eq!(ev["max"], 7.0);
    assert_eq!(ev["oom_kill"], 1.0);
    assert_eq!(ev.len(), 6);
    // the info series
    let info = p
        .values("cgroup_info")
        .into_iter()
        .find(|s| s.labels["cgroup"] == g)
        .unwrap();
    assert_eq!(info.labels["type"], "domain");
    assert_eq!(info.labels["populated"], "1");
    assert_eq!(info.labels["frozen"], "0");
}

/// Names with every byte that could break an exposition or make two
/// groups one series: each comes back, exactly, from its label.
#[test]
fn hostile_names_give_a_valid_exposition_and_one_series_each() {
    let t = common::copy_fixture("memory-limited");
    let src = t.path().join(LAB);
    let names: Vec<&[u8]> = vec![
        b"q\"uote",
        b"back\\slash",
        b"new\nline",
        b"a\\nb", // backslash and n: not the newline above
        b"br{ace}=,x",
        b"\xff\xfe not utf8",
        b"esc\x1b[31m",
        b"tab\there",
        b"rtl\xe2\x80\xaeevil",
        b"# EOF",
        b" lead",
    ];
    let mut want: HashSet<Vec<u8>> = HashSet::new();
    for n in &names {
        let d = t.path().join(std::ffi::OsStr::from_bytes(n));
        std::fs::create_dir(&d).unwrap();
        for f in [
            "cgroup.procs",
            "cgroup.events",
            "cpu.stat",
            "memory.current",
            "cgroup.type",
        ] {
            std::fs::copy(src.join(f), d.join(f)).unwrap();
        }
        want.insert([b"/".as_slice(), n].concat());
    }
    for f in [Format::OpenMetrics, Format::Text] {
        let text = expose(t.path(), None, f);
        let p = parse(&text, f);
        let mut back: HashMap<Vec<u8>, usize> = HashMap::new();
        for s in p.values("cgroup_info") {
            *back
                .entry(cgtop::model::tree::text::unescape(&s.labels["cgroup"]))
                .or_default() += 1;
        }
        for w in &want {
            assert_eq!(
                back.get(w),
                Some(&1),
                "{:?} not exactly once",
                String::from_utf8_lossy(w)
            );
        }
        // one series per group: no two groups share a label
        assert_eq!(back.len(), p.values("cgroup_info").len());
        if f == Format::Text {
            if let Some((ok, words)) = promtool(&text) {
                assert!(ok, "promtool: {words}");
            }
        }
    }
}

/// promtool (Prometheus 2.42's `check metrics`) on the fixture tree's
/// text format. It reads only the text format: OpenMetrics' `info` type
/// is not in its parser, so the OpenMetrics output is checked by
/// `parse` above and by a real Prometheus (helper promreal's test).
#[test]
fn promtool_passes_the_fixture_exposition() {
    let t = limited_tree();
    let text = expose(t.path(), None, Format::Text);
    if let Some((ok, words)) = promtool(&text) {
        assert!(ok, "promtool: {words}\n{text}");
    }
}

#[test]
fn the_filter_keeps_what_the_tree_filter_shows() {
    let t = limited_tree();
    let p = parse(
        &expose(t.path(), Some("POSTGRES"), Format::OpenMetrics),
        Format::OpenMetrics,
    );
    let got: Vec<String> = p
        .values("cgroup_info")
        .iter()
        .map(|s| s.labels["cgroup"].clone())
        .collect();
    // the match, its ancestors and its subtree; nothing else
    assert_eq!(
        got,
        [
            "/",
            "/system.slice",
            "/system.slice/system-postgresql.slice",
            &format!("/{LAB}"),
        ]
    );
    assert_eq!(p.values("cgtop_scrape_groups")[0].value, 4.0);
    // no match: an empty exposition, still valid
    let none = expose(t.path(), Some("no-such-name"), Format::OpenMetrics);
    let p = parse(&none, Format::OpenMetrics);
    assert!(p.values("cgroup_info").is_empty());
}

#[test]
fn openmetrics_flag_prints_one_exposition_with_depth_and_filter() {
    let root = common::fixture("memory-limited");
    let r = root.to_str().unwrap();
    let out = cgtop(&["--openmetrics", "--root", r, "--depth", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = parse(
        std::str::from_utf8(&out.stdout).unwrap(),
        Format::OpenMetrics,
    );
    for s in p.values("cgroup_info") {
        assert!(
            s.labels["cgroup"].matches('/').count() <= 1,
            "{:?}",
            s.labels
        );
    }
    let out = cgtop(&[
        "--openmetrics",
        "--root",
        r,
        "--filter",
        "dbus",
        "system.slice",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = parse(
        std::str::from_utf8(&out.stdout).unwrap(),
        Format::OpenMetrics,
    );
    let got: Vec<&str> = p
        .values("cgroup_info")
        .iter()
        .map(|s| s.labels["cgroup"].as_str())
        .collect();
    assert_eq!(got, ["/system.slice", "/system.slice/dbus.service"]);
}

#[test]
fn output_file_is_written_atomically_mode_0644_and_never_through_a_link() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = common::fixture("memory-limited");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cgtop.prom");
    std::fs::write(&file, "old\n").unwrap();
    let ino0 = std::fs::metadata(&file).unwrap().ino();
    // a strict umask must not make the file unreadable to node_exporter
    let out = Command::new("sh")
        .args(["-c", "umask 077; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--openmetrics", "--root"])
        .arg(&root)
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o644);
    assert_ne!(m.ino(), ino0, "replaced by rename, not rewritten in place");
    let text = std::fs::read_to_string(&file).unwrap();
    parse(&text, Format::OpenMetrics);
    // no temporary file left beside it
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");

    // a symlink: refused, its target untouched
    let target = dir.path().join("target");
    std::fs::write(&target, "keep\n").unwrap();
    let link = dir.path().join("link.prom");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = cgtop(&[
        "--openmetrics",
        "--root",
        root.to_str().unwrap(),
        "-o",
        link.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());

    // a directory: refused
    let out = cgtop(&[
        "--openmetrics",
        "--root",
        root.to_str().unwrap(),
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a directory"));
    // a directory that is not there: an error naming it, nothing made
    let out = cgtop(&[
        "--openmetrics",
        "--root",
        root.to_str().unwrap(),
        "-o",
        dir.path().join("nodir/x.prom").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
}

/// README's metric list is the table's (`UPDATE_README_METRICS=1` writes
/// it there; then read the diff like code).
#[test]
fn readme_metric_list_is_the_table() {
    const BEGIN: &str = "<!-- metrics:begin -->\n";
    const END: &str = "<!-- metrics:end -->";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("README has no metrics:begin marker")
        + BEGIN.len();
    let end = readme.find(END).expect("README has no metrics:end marker");
    let want = openmetrics::markdown();
    if std::env::var_os("UPDATE_README_METRICS").is_some() {
        let new = format!("{}{want}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert!(
        readme[start..end] == want,
        "README's metric list differs from render::openmetrics::FAMILIES; run \
         UPDATE_README_METRICS=1 cargo test --test state exposition::readme and review the diff"
    );
}

/// The exporter never writes: its module names no writer, no write op.
#[test]
fn the_exporter_names_nothing_that_writes() {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/serve.rs"))
            .unwrap();
    let code: String = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    for bad in [
        "writer",
        "model::write",
        "spawn_writer",
        "WriteRequest",
        "Op::",
    ] {
        assert!(!code.contains(bad), "src/run/serve.rs names {bad}");
    }
}

/// The exporter's reading (the 14 files the exposition shows) gives the
/// exposition the full reading (`--json`'s) gives: no figure is lost by
/// reading less.
#[test]
fn the_export_reading_misses_nothing_of_the_full_one() {
    let t = limited_tree();
    let hostile = t.path().join("q\"\\x");
    std::fs::create_dir(&hostile).unwrap();
    std::fs::copy(
        t.path().join(LAB).join("cgroup.procs"),
        hostile.join("cgroup.procs"),
    )
    .unwrap();
    for root in [t.path().to_path_buf(), common::fixture("pure-v2-systemd")] {
        let full = exporter_collector(&root).refresh(Duration::from_secs(1));
        let light = reading(&root);
        for f in [Format::OpenMetrics, Format::Text] {
            let a = export::render(&full, None, Duration::from_millis(3), f);
            let b = export::render(&light, None, Duration::from_millis(3), f);
            assert_eq!(a, b);
        }
    }
}

/// node_exporter's textfile collector parses `*.prom` as the Prometheus
/// text format and drops an OpenMetrics file: `--exposition text -o`
/// writes what it reads (promtool agrees), while the default OpenMetrics
/// file is refused by the same parser (why the option exists).
#[test]
fn textfile_collector_gets_the_text_format() {
    let root = common::fixture("memory-limited");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cgtop.prom");
    let run = |extra: &[&str]| {
        let mut args = vec!["--openmetrics", "--root", root.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", file.to_str().unwrap()]);
        let out = cgtop(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&file).unwrap()
    };
    let text = run(&["--exposition", "text"]);
    parse(&text, Format::Text);
    assert!(!text.contains("# EOF"), "{text}");
    assert!(
        text.contains("# TYPE cgroup_cpu_usage_seconds_total counter"),
        "{text}"
    );
    let om = run(&[]);
    parse(&om, Format::OpenMetrics);
    assert!(om.ends_with("# EOF\n"));
    if let Some((ok, words)) = promtool(&text) {
        assert!(ok, "promtool refused the text file:\n{words}");
        let (ok, _) = promtool(&om).unwrap();
        assert!(
            !ok,
            "promtool's text parser took OpenMetrics: the option would be moot"
        );
    }
    // --exposition without --openmetrics is a usage error
    let out = cgtop(&["--exposition", "text", "--root", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// On a hybrid layout (cgroup2 and v1 hierarchies) the exporter reads, of
/// each controller's hierarchy, only the files its exposition shows: the
/// same exposition as the full reading (`--json`'s), which parses v1's
/// memory.stat and reads weights, soft limits and the freezer besides.
#[test]
fn on_a_hybrid_layout_the_export_reading_is_the_full_ones_exposition_for_less() {
    use common::v1detail_fixture::{hiers_of, layout_tree, WEB};
    let t = layout_tree();
    let hiers = std::sync::Arc::new(hiers_of(t.path()));
    let primary = hiers.layout.primary().expect("a primary hierarchy");
    let hier = std::sync::Arc::clone(hiers.get(primary).expect("its handle"));
    let collector = |export: bool| {
        let cfg = CollectorConfig {
            root: t.path().join("unified"),
            start: GroupPath::root(),
            scan: ScanConfig::default(),
            full_detail: true,
            sys_dev_block: common::fixture("sys-dev-block"),
        };
        let mut c = Collector::with_hiers(cfg, std::sync::Arc::clone(&hier), &hiers);
        c.set_export_reading(export);
        c.refresh(Duration::from_secs(1))
    };
    let (full, light) = (collector(false), collector(true));
    let web = |r: &Refresh| {
        let web = GroupPath::parse(WEB.as_bytes()).expect("a path");
        let g = r.snapshot.groups.iter().find(|g| g.path == web);
        g.and_then(|g| g.detail.clone()).expect("web's detail")
    };
    let (a, b) = (web(&full), web(&light));
    // the fixture's v1 figures are there, so the comparison means something
    assert!(a.memory_max.is_some() && a.io_max.is_some() && a.swap_current.is_some());
    assert!(
        a.memory_stat_v1.is_some(),
        "the full reading parses memory.stat"
    );
    assert!(b.memory_stat_v1.is_none(), "the exporter's does not");
    for f in [Format::OpenMetrics, Format::Text] {
        let x = export::render(&full, None, Duration::from_millis(3), f);
        let y = export::render(&light, None, Duration::from_millis(3), f);
        assert_eq!(x, y);
    }
}

/// The exporter keeps its files open from one scrape to the next (a
/// scrape then costs preads, as a steady scan does), counted with the
/// scanner's descriptors, within the descriptor budget; and what it shows
/// stays each scrape's: a changed limit, a group made or removed between
/// scrapes, one removed and made again under its name with other limits.
#[test]
fn the_exporter_keeps_its_files_open_between_scrapes_and_follows_the_tree() {
    let t = limited_tree();
    let lab = t.path().join(LAB);
    let exporters = {
        let mut c = exporter_collector(t.path());
        c.set_export_reading(true);
        let mut r = c.refresh(Duration::from_secs(1));
        // the same tree, files read anew each time: the scanner's alone
        let mut plain = Collector::new(CollectorConfig {
            full_detail: false,
            root: t.path().to_path_buf(),
            start: GroupPath::root(),
            scan: ScanConfig::default(),
            sys_dev_block: common::fixture("sys-dev-block"),
        });
        let scanners = plain.refresh(Duration::from_secs(1)).kept_fds;
        assert!(
            r.kept_fds > scanners,
            "the exposition's files are kept beside the scanner's: {} vs {scanners}",
            r.kept_fds
        );
        let kept = r.kept_fds;
        let scrape = |c: &mut Collector, at: u64| {
            let r = c.refresh(Duration::from_secs(at));
            let text = export::render(&r, None, Duration::from_millis(3), Format::OpenMetrics);
            (r, text)
        };
        // a limit changed in place: read again through the kept file
        std::fs::write(lab.join("pids.max"), "321\n").unwrap();
        let (again, text) = scrape(&mut c, 2);
        assert_eq!(again.kept_fds, kept, "nothing opened anew");
        assert!(text.contains("} 321\n"), "{text}");
        // a group made between scrapes is in the next one
        let new = t.path().join("system.slice/new.service");
        std::fs::create_dir(&new).unwrap();
        for (f, v) in [
            ("cgroup.procs", "\n"),
            ("cpu.stat", "usage_usec 1\n"),
            ("pids.max", "77\n"),
        ] {
            std::fs::write(new.join(f), v).unwrap();
        }
        common::count_descendants(t.path(), "system.slice/new.service", 1);
        let (made, text) = scrape(&mut c, 3);
        assert!(text.contains("system.slice/new.service"), "{text}");
        assert!(text.contains("} 77\n"), "{text}");
        assert!(made.kept_fds > kept, "the new group's files kept too");
        // made again under its name with another limit: not the old file
        // (kernfs gives the old one's descriptor ENODEV; tmpfs reads on,
        // and its scanner lists the new directory at a walk)
        std::fs::remove_dir_all(&new).unwrap();
        std::fs::create_dir(&new).unwrap();
        for (f, v) in [("cgroup.procs", "\n"), ("pids.max", "88\n")] {
            std::fs::write(new.join(f), v).unwrap();
        }
        c.invalidate();
        let (_, text) = scrape(&mut c, 4);
        assert!(
            text.contains("} 88\n") && !text.contains("} 77\n"),
            "{text}"
        );
        // removed: gone from the next scrape, its files closed
        common::remove_group(t.path(), "system.slice/new.service");
        let (gone, text) = scrape(&mut c, 5);
        assert!(!text.contains("new.service"), "{text}");
        assert_eq!(gone.kept_fds, kept, "the removed group's files closed");
        r = gone;
        r.kept_fds - scanners
    };
    assert!(exporters > 0);
    // no room left by the scanners: nothing kept, the same exposition
    let mut tight = Collector::new(CollectorConfig {
        root: t.path().to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig {
            max_kept: 3,
            ..ScanConfig::default()
        },
        full_detail: true,
        sys_dev_block: common::fixture("sys-dev-block"),
    });
    tight.set_export_reading(true);
    let mut roomy = exporter_collector(t.path());
    roomy.set_export_reading(true);
    for at in 1..=2 {
        let a = tight.refresh(Duration::from_secs(at));
        assert!(a.kept_fds <= 3, "within the budget: {}", a.kept_fds);
        let b = roomy.refresh(Duration::from_secs(at));
        let f = Format::OpenMetrics;
        assert_eq!(
            export::render(&a, None, Duration::from_millis(3), f),
            export::render(&b, None, Duration::from_millis(3), f)
        );
    }
}

/// The exporter of the hybrid fixture layout made in `dir`
/// (`v1detail_fixture::layout_tree`).
fn hybrid_exporter(dir: &Path) -> Collector {
    let hiers = std::sync::Arc::new(common::v1detail_fixture::hiers_of(dir));
    let primary = hiers.layout.primary().expect("a primary hierarchy");
    let hier = std::sync::Arc::clone(hiers.get(primary).expect("its handle"));
    let cfg = CollectorConfig {
        root: dir.join("unified"),
        start: GroupPath::root(),
        scan: ScanConfig::default(),
        full_detail: true,
        sys_dev_block: common::fixture("sys-dev-block"),
    };
    let mut c = Collector::with_hiers(cfg, hier, &hiers);
    c.set_export_reading(true);
    c
}

/// The regular files under `root` this process holds open, each with how
/// many of its descriptors are on it.
fn held_under(root: &Path) -> BTreeMap<std::path::PathBuf, usize> {
    let root = root.canonicalize().unwrap();
    let mut held = BTreeMap::new();
    for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(e.path()) else {
            continue;
        };
        if target.starts_with(&root) && target.is_file() {
            *held.entry(target).or_insert(0) += 1;
        }
    }
    held
}

/// The exporter keeps a descriptor of no file a scanner keeps (the swap
/// in use is the scan's: v1's memory.usage_in_bytes was held twice, by
/// the memory scanner and by the exporter) nor of one its exposition does
/// not need (v1's CFS period of a group with no quota: no cpu.max series),
/// while it keeps the files it does read (the period where a quota is).
#[test]
fn the_exporter_holds_no_file_a_scanner_holds_nor_one_it_does_not_show() {
    use common::v1detail_fixture::{layout_tree, WEB, WORKER};
    let t = layout_tree();
    let mut c = hybrid_exporter(t.path());
    for at in 1..=2 {
        let r = c.refresh(Duration::from_secs(at));
        let text = export::render(&r, None, Duration::from_millis(3), Format::OpenMetrics);
        assert!(
            text.contains(
                "cgroup_memory_swap_current_bytes{cgroup=\"/demo.slice/web.service\"} 1048576\n"
            ),
            "the swap in use (memsw less usage) still shown:\n{text}"
        );
        let held = held_under(t.path());
        let twice: Vec<_> = held.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "held twice: {twice:?}");
        let period = |g: &str| {
            t.path()
                .join("cpu,cpuacct")
                .join(g)
                .join("cpu.cfs_period_us")
                .canonicalize()
                .unwrap()
        };
        assert!(
            !held.contains_key(&period(WORKER)),
            "no quota, no period read: {held:?}"
        );
        assert!(held.contains_key(&period(WEB)), "{held:?}");
        let usage = t
            .path()
            .join("memory")
            .join(WEB)
            .join("memory.usage_in_bytes");
        assert_eq!(held.get(&usage.canonicalize().unwrap()), Some(&1));
    }
}

/// The exposition of the fixture trees, byte for byte (OpenMetrics and
/// the text format; a pure v2 and a hybrid layout): what a change to the
/// exporter's reading or its writer must leave as it was.
#[test]
fn the_exposition_of_the_fixture_trees_is_as_recorded() {
    let t = limited_tree();
    let pure = reading(t.path());
    let h = common::v1detail_fixture::layout_tree();
    let hybrid = hybrid_exporter(h.path()).refresh(Duration::from_secs(1));
    for (name, r) in [("pure_v2", &pure), ("hybrid", &hybrid)] {
        for (f, fname) in [(Format::OpenMetrics, "openmetrics"), (Format::Text, "text")] {
            let text = export::render(r, None, Duration::from_millis(3), f);
            insta::assert_snapshot!(format!("exposition_{name}_{fname}"), text);
        }
    }
}
