//! Test trees shared by the scanner's unit tests.

use super::{GroupPath, Scanner};
use std::fs;
use std::path::Path;

/// A test tree's path as text (its names are UTF-8).
pub(super) fn as_text(p: &GroupPath) -> &str {
    std::str::from_utf8(p.as_bytes()).unwrap()
}

pub(super) fn mk(root: &Path, rel: &str, files: &[(&str, &str)]) {
    let d = root.join(rel);
    fs::create_dir_all(&d).unwrap();
    for (n, c) in files {
        fs::write(d.join(n), c).unwrap();
    }
}

pub(super) fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    mk(
        r,
        "",
        &[
            ("cgroup.procs", "1\n"),
            ("cgroup.stat", "nr_descendants 2\nnr_dying_descendants 0\n"),
            ("cpu.stat", "usage_usec 100\nuser_usec 60\nsystem_usec 40\n"),
        ],
    );
    mk(
        r,
        "a.slice",
        &[
            ("cgroup.procs", ""),
            ("cgroup.type", "domain\n"),
            ("cgroup.events", "populated 1\nfrozen 0\n"),
            ("cpu.stat", "usage_usec 50\nuser_usec 25\nsystem_usec 25\n"),
            ("memory.current", "4096\n"),
            ("pids.current", "3\n"),
        ],
    );
    mk(
        r,
        "a.slice/b c:ü",
        &[
            ("cgroup.procs", "5\n6\n"),
            ("cgroup.type", "threaded\n"),
            (
                "io.stat",
                "8:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n",
            ),
        ],
    );
    t
}

/// Writes every directory's cgroup.stat with its true nr_descendants,
/// as the kernel keeps it; returns the root's.
pub(super) fn fix_counts(dir: &Path) -> u64 {
    let mut n = 0;
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            n += 1 + fix_counts(&e.path());
        }
    }
    let text = format!("nr_descendants {n}\nnr_dying_descendants 0\n");
    fs::write(dir.join("cgroup.stat"), text).unwrap();
    n
}

pub(super) fn group_files(n: u64) -> Vec<(&'static str, String)> {
    vec![
        ("cgroup.procs", String::new()),
        ("cgroup.events", "populated 0\nfrozen 0\n".into()),
        ("memory.current", format!("{n}\n")),
    ]
}

pub(super) fn mk_group(root: &Path, rel: &str, n: u64) {
    let d = root.join(rel);
    fs::create_dir_all(&d).unwrap();
    for (f, c) in group_files(n) {
        fs::write(d.join(f), c).unwrap();
    }
}

/// (path, inode, memory.current) of every group, as a fresh scanner
/// (a full walk) or `s` sees them, and the directories listed.
pub(super) fn seen(s: &mut Scanner) -> (Vec<(String, u64, Option<u64>)>, u64) {
    let (g, cost) = s.scan();
    let v = g
        .iter()
        .map(|x| (x.path.to_string(), x.inode, x.hot.memory_current))
        .collect();
    (v, cost.dirs_listed)
}
