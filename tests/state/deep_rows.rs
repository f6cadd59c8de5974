//! A group far down a chain: whoever owns a delegated subtree can nest
//! groups as deep as the kernel lets them (cgroup.max.depth is unlimited
//! by default), and the tree's guides, two cells a level, grew past the
//! name column. The row then showed guides only: no name, and its figures
//! pushed off the right edge, so a busy group 40 levels down was on the
//! screen and said nothing. However deep, a row keeps its name and its
//! figures in their columns.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use common::*;

/// The bottom group's name, and its processes (a count no other row
/// shows).
const BOTTOM: &str = "bottom-of-the-chain";
const PIDS: usize = 7;

/// A chain `/l00/l01/.../l{depth-2}/BOTTOM` of `depth` groups below the
/// root, the bottom one holding [`PIDS`] processes: its path.
fn chain(root: &std::path::Path, depth: usize) -> String {
    std::fs::write(root.join("cgroup.procs"), "").unwrap();
    let mut rel = String::new();
    for i in 0..depth {
        if !rel.is_empty() {
            rel.push('/');
        }
        if i + 1 == depth {
            rel.push_str(BOTTOM);
        } else {
            rel.push_str(&format!("l{i:02}"));
        }
        let d = root.join(&rel);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
    }
    let procs = (1..=PIDS).fold(String::new(), |mut s, p| {
        s.push_str(&p.to_string());
        s.push('\n');
        s
    });
    std::fs::write(root.join(&rel).join("cgroup.procs"), procs).unwrap();
    rel
}

#[test]
fn a_group_deeper_than_the_name_column_keeps_its_name_and_figures() {
    for (w, h, depth) in [(80, 24, 60), (80, 24, 25), (200, 50, 95)] {
        let t = tempfile::tempdir().unwrap();
        let bottom = chain(t.path(), depth);
        let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), w, h);
        select(&mut a, &mut c, &bottom);
        let s = screen(&a, w, h);
        // the cursor's row (a bar, as the column header is; the strip
        // below names the group too)
        let head = s.lines().find(|l| l.contains("PIDS")).unwrap();
        let row = s
            .lines()
            .find(|l| l.starts_with('>') && !l.contains("PIDS"));
        let row = row.unwrap_or_else(|| panic!("no cursor row at {w}x{h}:\n{s}"));
        assert!(
            row.contains(BOTTOM),
            "{depth} levels down at {w}x{h}: the row lost its name:\n{s}"
        );
        // the PIDS figure ends under the header's S (cells: every
        // character of these rows takes one)
        let end = head.find("PIDS").unwrap() + "PIDS".len();
        let at = head[..end].chars().count();
        let cells: Vec<char> = row.chars().collect();
        assert_eq!(
            cells.get(at - 1),
            Some(&char::from_digit(PIDS as u32, 10).unwrap()),
            "{depth} levels down at {w}x{h}: PIDS not in its column:\n{s}"
        );
    }
}
