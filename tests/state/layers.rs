//! The layers point one way (ARCHITECTURE.md): a module of the library
//! may name only modules of a lower rank, never its own rank's others or
//! one above. Read from the source text: every `crate::<module>` path
//! (grouped `crate::{a, b}` imports too) outside comments, in code and in
//! its unit tests alike. `super::` paths stay inside their module, and
//! `main.rs` is the binary, above everything.
//!
//! And the pure layers use no terminal crate and no filesystem.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module of `src/lib.rs` and its rank: lower ranks are
/// used by higher ones. Equal ranks must not use each other.
const RANKS: [(&str, u8); 11] = [
    ("cgroupfs", 0),
    ("model", 1),
    ("render", 2),
    ("options", 3),
    ("source", 3),
    ("app", 4),
    ("ui", 5),
    ("batch", 5),
    ("term", 6),
    ("run", 7),
    // the command line and main: parses, then calls run
    ("cli", 8),
];

/// Modules that must not touch the terminal or the filesystem.
const PURE: [&str; 4] = ["cgroupfs", "model", "render", "options"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to: `src/ui/tree.rs` -> "ui".
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_str().expect("UTF-8 file name");
    name.trim_end_matches(".rs").to_owned()
}

/// The text of `s` without `//` comments (doc comments included).
fn code(s: &str) -> String {
    s.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The modules `text` names through `crate::`.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `cgtop::crate::` cannot occur; a longer name ending in `crate`
        // (`mycrate::`) is not the keyword
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::X, b}`: the first name of each top-level item
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        out.insert(ident(&group[j..]).to_owned());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest).to_owned());
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

/// Module -> the other modules it names, over every file of `src/`.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let m = module_of(&f);
        if m == "main" || m == "lib" {
            continue;
        }
        let text = code(&std::fs::read_to_string(&f).expect("read a source file"));
        let refs = crate_refs(&text);
        out.entry(m.clone())
            .or_default()
            .extend(refs.into_iter().filter(|r| *r != m));
    }
    out
}

fn rank(m: &str) -> Option<u8> {
    RANKS.iter().find(|(n, _)| *n == m).map(|(_, r)| *r)
}

#[test]
fn no_module_uses_one_above_it_or_beside_it() {
    let uses = uses();
    let mut wrong = Vec::new();
    for (m, used) in &uses {
        let Some(r) = rank(m) else {
            wrong.push(format!("{m}: not in RANKS (give the new module its layer)"));
            continue;
        };
        for u in used {
            match rank(u) {
                Some(ru) if ru < r => {}
                Some(_) => wrong.push(format!("{m} uses {u}")),
                None => wrong.push(format!("{m} uses crate::{u}, which is not a module")),
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}\nall uses: {uses:#?}");
}

#[test]
fn every_module_is_ranked() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let ranked: BTreeSet<&str> = RANKS.iter().map(|(n, _)| *n).collect();
    assert_eq!(declared, ranked);
}

#[test]
fn pure_layers_touch_no_terminal_and_no_filesystem() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in files
        .iter()
        .filter(|f| PURE.contains(&module_of(f).as_str()))
    {
        let text = code(&std::fs::read_to_string(f).expect("read a source file"));
        for bad in ["ratatui", "crossterm", "std::fs"] {
            if text.contains(bad) {
                wrong.push(format!("{}: {bad}", f.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The reader itself: a check that finds nothing proves nothing unless it
/// would find something.
#[test]
fn the_reader_finds_every_form_of_path() {
    let text = code(
        "use crate::model::GroupPath;\n\
         use crate::{app::App, ui};\n\
         // use crate::batch;\n\
         let x = crate::source::hier::open();\n\
         let y = mycrate::run;\n",
    );
    let found: Vec<String> = crate_refs(&text).into_iter().collect();
    assert_eq!(found, ["app", "model", "source", "ui"]);
    assert_eq!(module_of(&src().join("ui/tree.rs")), "ui");
    assert_eq!(module_of(&src().join("batch.rs")), "batch");
    assert_eq!(rank("batch"), rank("ui"));
    assert!(rank("render") < rank("ui"));
}
