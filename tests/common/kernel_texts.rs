//! The check of a capture of `tests/fixtures/capture-kernel-texts.sh`:
//! `cgtop --json --root CAPTURE/tree` against every statement of
//! `CAPTURE/expect` (`HOW GROUP JSON_POINTER JSON_VALUE` a line, stated by
//! the script without cgtop; see the script's header).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// The io.stat counters of device `MAJ:MIN` in a group of `--json`.
pub fn io_counters(group: &serde_json::Value, dev: &str) -> Option<serde_json::Value> {
    let (major, minor) = dev.split_once(':').expect("MAJ:MIN");
    let want = serde_json::json!({
        "major": major.parse::<u32>().expect("major"),
        "minor": minor.parse::<u32>().expect("minor")
    });
    group["io"]
        .as_array()
        .and_then(|io| io.iter().find(|e| e[0] == want))
        .map(|e| e[1].clone())
}

/// Checks every statement of `capture`'s `expect`; panics at the first
/// that `--json` contradicts. Returns how many of each HOW were checked.
pub fn check_capture(capture: &Path) -> BTreeMap<String, usize> {
    let name = capture.display();
    let expect = std::fs::read_to_string(capture.join("expect"))
        .unwrap_or_else(|e| panic!("{name}/expect: {e}"));
    let o = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .arg("--root")
        .arg(capture.join("tree"))
        .args(["--json", "-n", "1", "-d", "0.1"])
        .stdin(Stdio::null())
        .output()
        .expect("run cgtop");
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
    let groups = doc["groups"].as_array().expect("groups");
    let mut counts = BTreeMap::new();
    for line in expect.lines() {
        let mut it = line.splitn(4, ' ');
        let (Some(how), Some(path), Some(pointer), Some(value)) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            panic!("{name}: not HOW GROUP POINTER VALUE: {line:?}");
        };
        let want: serde_json::Value =
            serde_json::from_str(value).unwrap_or_else(|e| panic!("{name}: {line:?}: {e}"));
        let group = groups
            .iter()
            .find(|g| g["path"] == path)
            .unwrap_or_else(|| panic!("{name}: no group {path}"));
        let got = match pointer.strip_prefix("/io/") {
            Some(dev_field) => {
                let (dev, field) = dev_field.rsplit_once('/').expect("/io/MAJ:MIN/FIELD");
                io_counters(group, dev).map(|c| c[field].clone())
            }
            None => group.pointer(pointer).cloned(),
        };
        assert_eq!(got.as_ref(), Some(&want), "{name}: {line}");
        *counts.entry(how.to_string()).or_insert(0) += 1;
    }
    counts
}
