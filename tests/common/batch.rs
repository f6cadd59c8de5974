//! The one reader of cgtop's `-b` text in the tests (tests/hostile,
//! tests/guest/scale.rs): the refreshes, each with its title line, its column
//! header and its rows as printed. What a row means is left to the test.

// each test crate uses its own part of this module
#![allow(dead_code)]

/// One refresh of `cgtop -b`.
#[derive(Debug, Default)]
pub struct BatchRefresh {
    /// "cgtop - refresh N at T s  HOST  KERNEL  ...  G groups  interval I s  ..."
    /// (empty when the text starts at the column header).
    pub title: String,
    /// The column header ("GROUP ... CPU% MEM READ/s WRITE/s PIDS ST").
    pub header: String,
    /// The rows between the column header and the blank line, as printed.
    pub rows: Vec<String>,
}

/// Every refresh of a `-b` text, in order.
pub fn parse(text: &str) -> Vec<BatchRefresh> {
    let mut out: Vec<BatchRefresh> = Vec::new();
    let mut in_rows = false;
    for line in text.lines() {
        if line.starts_with("cgtop - refresh ") {
            out.push(BatchRefresh {
                title: line.to_owned(),
                ..BatchRefresh::default()
            });
            in_rows = false;
        } else if line.starts_with("GROUP ") {
            match out.last_mut() {
                Some(r) if r.header.is_empty() => line.clone_into(&mut r.header),
                _ => out.push(BatchRefresh {
                    header: line.to_owned(),
                    ..BatchRefresh::default()
                }),
            }
            in_rows = true;
        } else if line.is_empty() {
            in_rows = false;
        } else if in_rows {
            out.last_mut()
                .expect("a header came first")
                .rows
                .push(line.to_owned());
        }
    }
    out
}

/// The column header and the rows of the first refresh; panics when the
/// text has none.
pub fn first(text: &str) -> (String, Vec<String>) {
    let r = parse(text)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no refresh in the -b text:\n{text}"));
    (r.header, r.rows)
}

/// The name cells of the first refresh: each row's text up to the CPU
/// column's right edge, trimmed.
pub fn first_names(text: &str) -> Vec<String> {
    let (header, rows) = first(text);
    let cpu_end = header
        .find("CPU%")
        .unwrap_or_else(|| panic!("no CPU% column:\n{text}"));
    rows.iter()
        .map(|r| {
            r.chars()
                .take(cpu_end)
                .collect::<String>()
                .trim()
                .to_owned()
        })
        .collect()
}

/// A cgtop run's standard output; panics, with its standard error, when
/// it did not exit 0.
/// `cgtop --no-config -b -n 1 -d 0.1 --sort name ARGS`: one refresh of a
/// table by the groups' names, the command to add to (a group, an
/// environment) before [`stdout_of`].
pub fn by_name_once(args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cgtop"));
    c.args([
        "--no-config",
        "-b",
        "-n",
        "1",
        "-d",
        "0.1",
        "--sort",
        "name",
    ])
    .args(args);
    c
}

pub fn stdout_of(cmd: &mut std::process::Command) -> String {
    let out = cmd.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

impl BatchRefresh {
    /// "at T s": seconds since cgtop started.
    pub fn at(&self) -> Option<f64> {
        self.fields()
            .first()?
            .split_once(" at ")?
            .1
            .strip_suffix(" s")?
            .parse()
            .ok()
    }

    /// "interval I s".
    pub fn interval(&self) -> Option<f64> {
        self.title_num("interval", "s")
    }

    /// "N groups".
    pub fn groups(&self) -> Option<usize> {
        self.title_num("", "groups").map(|n| n as usize)
    }

    /// The title's fields, which two blanks part ("1 at 1.6 s", "HOST", ...).
    fn fields(&self) -> Vec<&str> {
        self.title
            .strip_prefix("cgtop - refresh ")
            .map_or_else(Vec::new, |rest| rest.split("  ").collect())
    }

    /// The number before `unit` in a title field such as "interval 0.5 s".
    fn title_num(&self, key: &str, unit: &str) -> Option<f64> {
        self.fields().iter().find_map(|f| {
            let f = f.trim();
            let rest = if key.is_empty() {
                f
            } else {
                f.strip_prefix(key)?.trim_start()
            };
            rest.strip_suffix(unit)?.trim().parse().ok()
        })
    }
}

/// A row's depth in the tree (two blanks a level) and its cells (the
/// name first; split at blanks, so a name with a blank spans two).
pub fn row_cells(row: &str) -> (usize, Vec<&str>) {
    let trimmed = row.trim_start();
    (
        (row.len() - trimmed.len()) / 2,
        trimmed.split_whitespace().collect(),
    )
}
