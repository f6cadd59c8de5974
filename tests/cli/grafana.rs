//! assets/grafana/cgtop-dashboard.json (issue 10, item 2) is built on
//! cgtop's exposition: every metric name in every query is one cgtop
//! emits, every query parses with Prometheus' own parser (`promtool check
//! rules` on the queries written as recording rules: no server needed),
//! the dashboard imports with a `${DS_PROMETHEUS}` input, and it has the
//! panels README promises (CPU, throttling, memory against its limit, IO
//! per device, pressure, pids against their limit, frozen/populated).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::render::openmetrics::{Family, FAMILIES};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The names of the samples cgtop's exposition can hold: its one table
/// of metric families (`render::openmetrics::FAMILIES`, which the
/// formatter writes from and README lists).
fn emitted() -> BTreeSet<String> {
    FAMILIES.iter().map(Family::sample_name).collect()
}

/// The labels a legend, a grouping or a variable may name: the families'
/// own and the two Prometheus adds to every scraped series.
fn labels() -> BTreeSet<&'static str> {
    FAMILIES
        .iter()
        .flat_map(|f| f.labels.iter().copied())
        .chain(["instance", "job"])
        .collect()
}

fn dashboard() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/grafana/cgtop-dashboard.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()))
}

/// Every panel, rows' nested panels included.
fn panels(d: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for p in d["panels"].as_array().expect("panels") {
        out.push(p.clone());
        if let Some(inner) = p["panels"].as_array() {
            out.extend(inner.iter().cloned());
        }
    }
    out
}

/// (panel title, expr) of every query.
fn exprs(d: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in panels(d) {
        for t in p["targets"].as_array().into_iter().flatten() {
            let e = t["expr"].as_str().expect("a target's expr");
            out.push((p["title"].as_str().unwrap_or("").to_owned(), e.to_owned()));
        }
    }
    out
}

/// The metric names in a PromQL expression: identifiers outside strings,
/// label matchers (`{...}`), ranges (`[...]`) and grouping lists (`by
/// (...)`), that are not a function or aggregation (followed by `(` or by
/// a grouping), a keyword or a number.
fn metric_names(expr: &str) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "and",
        "or",
        "unless",
        "offset",
    ];
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_to = |i: usize, close: u8| -> usize {
        let mut j = i;
        let mut quote = None;
        while j < b.len() {
            match (quote, b[j]) {
                (Some(_), b'\\') => j += 1,
                (Some(q), c) if c == q => quote = None,
                (None, c @ (b'"' | b'\'' | b'`')) => quote = Some(c),
                (None, c) if c == close => return j + 1,
                _ => {}
            }
            j += 1;
        }
        j
    };
    let mut after_grouping_kw = false;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            i = skip_to(i + 1, b'}');
        } else if c == b'[' {
            i = skip_to(i + 1, b']');
        } else if c == b'"' || c == b'\'' || c == b'`' {
            i = skip_to(i + 1, c);
        } else if c == b'(' && after_grouping_kw {
            i = skip_to(i + 1, b')');
            after_grouping_kw = false;
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b':' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
                i += 1;
            }
            let word = &expr[s..i];
            let rest = expr[i..].trim_start();
            let next = rest.as_bytes().first().copied();
            // `max by (l) (x)`: an aggregation with its grouping first
            let grouped = ["by", "without"].iter().any(|k| {
                rest.strip_prefix(k)
                    .is_some_and(|r| r.trim_start().starts_with('('))
            });
            if KEYWORDS.contains(&word) {
                after_grouping_kw = matches!(
                    word,
                    "by" | "without" | "on" | "ignoring" | "group_left" | "group_right"
                );
            } else if next != Some(b'(') && !grouped {
                out.push(word.to_owned());
            }
        } else {
            if !c.is_ascii_whitespace() {
                after_grouping_kw = false;
            }
            i += 1;
        }
    }
    out
}

#[test]
fn the_name_reader_finds_names_and_only_names() {
    assert_eq!(
        metric_names(
            r#"max by (instance, cgroup) (rate(a_total{cgroup=~"x{1}",device!="b"}[5m] offset 1m)) / on (cgroup) group_left b_bytes > 0.5"#
        ),
        ["a_total", "b_bytes"]
    );
    assert_eq!(metric_names("sum(x) without (le)"), ["x"]);
    assert!(metric_names("vector(1)").is_empty());
}

#[test]
fn every_metric_in_the_dashboard_is_one_cgtop_emits() {
    let (emitted, labels) = (emitted(), labels());
    let d = dashboard();
    let all = exprs(&d);
    assert!(all.len() >= 10, "only {} queries", all.len());
    let mut used = BTreeSet::new();
    for (title, e) in &all {
        let names = metric_names(e);
        assert!(!names.is_empty(), "{title}: no metric in {e}");
        for n in names {
            assert!(
                emitted.contains(&n),
                "{title}: {n} (in {e}) is not a name cgtop emits"
            );
            used.insert(n);
        }
    }
    // the variables' queries too: label_values(SELECTOR, LABEL)
    for v in d["templating"]["list"].as_array().expect("templating") {
        let q = v["definition"].as_str().expect("a variable's definition");
        let inner = q
            .strip_prefix("label_values(")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("variable {}: not label_values(..): {q}", v["name"]));
        let (sel, label) = inner
            .rsplit_once(',')
            .expect("label_values(SELECTOR, LABEL)");
        assert!(labels.contains(label.trim()), "{q}: label {label}");
        for n in metric_names(sel) {
            assert!(emitted.contains(&n), "{q}: {n}");
        }
    }
    // what the README promises the dashboard shows
    for want in [
        "cgroup_cpu_usage_seconds_total",
        "cgroup_cpu_throttled_periods_total",
        "cgroup_memory_current_bytes",
        "cgroup_memory_max_bytes",
        "cgroup_io_read_bytes_total",
        "cgroup_io_written_bytes_total",
        "cgroup_pressure_cpu_waiting_seconds_total",
        "cgroup_pressure_memory_stalled_seconds_total",
        "cgroup_pressure_io_waiting_seconds_total",
        "cgroup_pids_current",
        "cgroup_pids_max",
        "cgroup_info",
    ] {
        assert!(used.contains(want), "no panel shows {want}");
    }
}

#[test]
fn legends_name_labels_that_exist() {
    let labels = labels();
    for p in panels(&dashboard()) {
        for t in p["targets"].as_array().into_iter().flatten() {
            let legend = t["legendFormat"].as_str().unwrap_or("");
            let mut rest = legend;
            while let Some((_, r)) = rest.split_once("{{") {
                let (label, r) = r.split_once("}}").expect("a closed {{label}}");
                assert!(
                    labels.contains(label.trim()),
                    "{}: legend {legend:?} names {label}",
                    p["title"]
                );
                rest = r;
            }
        }
    }
}

#[test]
fn it_imports_with_a_prometheus_input_and_the_two_variables() {
    let d = dashboard();
    let sv = d["schemaVersion"].as_u64().expect("schemaVersion");
    assert!((36..=41).contains(&sv), "schemaVersion {sv}");
    let inputs = d["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs
            .iter()
            .any(|i| i["name"] == "DS_PROMETHEUS" && i["pluginId"] == "prometheus"),
        "{inputs:?}"
    );
    for p in panels(&d) {
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(
            p["datasource"]["uid"], "${DS_PROMETHEUS}",
            "panel {}",
            p["title"]
        );
        for t in p["targets"].as_array().expect("targets") {
            assert_eq!(t["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
        }
        let g = &p["gridPos"];
        assert!(
            g["w"].as_u64().unwrap() + g["x"].as_u64().unwrap() <= 24,
            "{}",
            p["title"]
        );
    }
    let names: Vec<&str> = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["instance", "cgroup"]);
    // each query filters by both (or, for cgtop's own figures, instance)
    for (title, e) in exprs(&d) {
        assert!(e.contains("instance=~\"$instance\""), "{title}: {e}");
        if !e.contains("cgtop_") {
            assert!(e.contains("cgroup=~\"$cgroup\""), "{title}: {e}");
        }
    }
    let ids: BTreeSet<u64> = panels(&d)
        .iter()
        .map(|p| p["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), panels(&d).len(), "panel ids repeat");
}

/// Grafana's variables as a query would see them with "All" chosen.
fn as_promql(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m")
        .replace("$instance", ".*")
        .replace("$cgroup", ".*")
}

#[test]
fn every_query_parses_with_promtool() {
    let Some(promtool) = common::have("promtool").then_some("promtool") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and promtool is not installed: .ci/run installs prometheus"
        );
        println!("skipped: promtool not found (Debian: apt-get install prometheus)");
        return;
    };
    let mut rules = String::from("groups:\n  - name: cgtop_dashboard\n    rules:\n");
    for (i, (_, e)) in exprs(&dashboard()).iter().enumerate() {
        // JSON strings are YAML strings
        let quoted = serde_json::to_string(&as_promql(e)).unwrap();
        rules.push_str(&format!(
            "      - record: cgtop_dashboard:query_{i}\n        expr: {quoted}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dashboard.rules.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = Command::new(promtool)
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("run promtool");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(
        out.status.success(),
        "promtool check rules:\n{text}\n{rules}"
    );
}
