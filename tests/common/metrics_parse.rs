//! The checker of an exposition, shared by the metrics tests: parses it
//! back and checks every sample's family is declared before it, no
//! series twice, counters `_total`, `# EOF` last (OpenMetrics), label
//! values escaped as the formats define.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use cgtop::render::openmetrics::Format;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One sample: its name, labels (unescaped values) and value.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A parsed exposition: families by name (type, unit) and the samples.
#[derive(Debug, Default)]
pub struct Parsed {
    pub types: HashMap<String, String>,
    pub units: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = s;
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let end = rest
            .find('=')
            .ok_or_else(|| format!("no '=' in labels {s:?}"))?;
        let name = &rest[..end];
        let ok = !name.is_empty()
            && name
                .chars()
                .enumerate()
                .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
        if !ok {
            return Err(format!("bad label name {name:?}"));
        }
        rest = rest[end + 1..]
            .strip_prefix('"')
            .ok_or_else(|| format!("label {name} not quoted"))?;
        let mut val = String::new();
        let mut chars = rest.char_indices();
        let close = loop {
            match chars.next() {
                None => return Err(format!("unterminated value of {name}")),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => val.push('\\'),
                    Some((_, '"')) => val.push('"'),
                    Some((_, 'n')) => val.push('\n'),
                    other => return Err(format!("bad escape {other:?} in {name}")),
                },
                Some((_, '\n')) => return Err("raw newline in a label value".into()),
                Some((_, c)) => val.push(c),
            }
        };
        if labels.insert(name.to_owned(), val).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[close + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err(format!("junk after label {name}: {rest:?}"));
        }
    }
}

/// Parses and checks an exposition in `format`; panics with the line on
/// any fault.
pub fn parse(text: &str, format: Format) -> Parsed {
    let mut p = Parsed::default();
    assert!(text.ends_with('\n'), "no final newline");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a control character in the exposition"
    );
    let lines: Vec<&str> = text.lines().collect();
    let mut seen_series = HashSet::new();
    let mut done_families: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut helps = HashSet::new();
    for (n, line) in lines.iter().enumerate() {
        let at = format!("line {}: {line:?}", n + 1);
        if let Some(c) = line.strip_prefix("# ") {
            let mut it = c.splitn(3, ' ');
            let (kw, name) = (it.next().unwrap(), it.next().unwrap_or(""));
            match kw {
                "EOF" => {
                    assert_eq!(format, Format::OpenMetrics, "{at}");
                    assert_eq!(n + 1, lines.len(), "# EOF is not last ({at})");
                }
                "TYPE" => {
                    let t = it.next().expect("a type");
                    assert!(
                        p.types.insert(name.to_owned(), t.to_owned()).is_none(),
                        "TYPE twice: {at}"
                    );
                    if let Some(prev) = current.replace(name.to_owned()) {
                        done_families.insert(prev);
                    }
                    let allowed: &[&str] = match format {
                        Format::OpenMetrics => &["counter", "gauge", "info"],
                        Format::Text => &["counter", "gauge"],
                    };
                    assert!(allowed.contains(&t), "{at}");
                    if t == "counter" {
                        match format {
                            Format::Text => assert!(name.ends_with("_total"), "{at}"),
                            Format::OpenMetrics => assert!(!name.ends_with("_total"), "{at}"),
                        }
                    }
                }
                "UNIT" => {
                    assert_eq!(format, Format::OpenMetrics, "{at}");
                    let u = it.next().expect("a unit");
                    assert!(name.ends_with(&format!("_{u}")), "unit not a suffix: {at}");
                    p.units.insert(name.to_owned(), u.to_owned());
                }
                "HELP" => assert!(helps.insert(name.to_owned()), "HELP twice: {at}"),
                _ => panic!("unknown comment {at}"),
            }
            continue;
        }
        assert!(!line.is_empty(), "empty line: {at}");
        let name_end = line
            .find(['{', ' '])
            .unwrap_or_else(|| panic!("no value: {at}"));
        let name = &line[..name_end];
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end + 1..]).unwrap_or_else(|e| panic!("{e}: {at}"))
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let value: f64 = rest
            .strip_prefix(' ')
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("bad value: {at}"));
        // the family this sample belongs to, declared just before it
        let fam = current
            .clone()
            .unwrap_or_else(|| panic!("sample before any TYPE: {at}"));
        let t = &p.types[&fam];
        let want = match (format, t.as_str()) {
            (Format::OpenMetrics, "counter") => format!("{fam}_total"),
            (Format::OpenMetrics, "info") => format!("{fam}_info"),
            _ => fam.clone(),
        };
        assert_eq!(name, want, "a sample outside its family: {at}");
        assert!(!done_families.contains(&fam), "{at}");
        if t == "counter" {
            assert!(name.ends_with("_total"), "{at}");
            assert!(value >= 0.0, "{at}");
        }
        let key = format!("{name}{labels:?}");
        assert!(seen_series.insert(key), "duplicate series: {at}");
        p.samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    if format == Format::OpenMetrics {
        assert_eq!(lines.last(), Some(&"# EOF"), "no # EOF at the end");
    }
    p
}

impl Parsed {
    pub fn values(&self, name: &str) -> Vec<&Sample> {
        self.samples.iter().filter(|s| s.name == name).collect()
    }

    pub fn of(&self, name: &str, cgroup: &str) -> Option<f64> {
        self.samples
            .iter()
            .find(|s| s.name == name && s.labels.get("cgroup").map(String::as_str) == Some(cgroup))
            .map(|s| s.value)
    }
}
