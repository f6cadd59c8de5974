//! A delegated user nests their busy group far down a chain of their
//! own groups. Each level indents `-b`'s tree by two blanks and the
//! view's by a guide of two cells, and past the name column's width the
//! row had no name left (`-b`), or no name and no figures on screen (the
//! view): a group the operator could not see was there, or whose. However
//! deep, a row keeps its name and its figures in their columns.

use super::common::batch;
use crate::common::sandbox::Sandbox;
use std::process::Command;

/// A uid no account on a test machine has: the owner of the delegated
/// subtree.
const OWNER: u32 = 64_127;

/// The bottom group's name.
const BOTTOM: &str = "busy-at-the-bottom";

/// Levels of the owner's chain below their group.
const LEVELS: usize = 70;

#[test]
fn a_delegated_users_deep_group_keeps_its_name_and_figures_in_batch() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    if !crate::common::have("setpriv") {
        println!("skipped: setpriv is not installed (the owner's mkdir)");
        return;
    }
    sb.mkdir("user");
    let user = sb.dir("user");
    for p in [user.clone(), user.join("cgroup.procs")] {
        std::os::unix::fs::chown(&p, Some(OWNER), Some(OWNER)).unwrap();
    }
    let mut rel = String::from("user");
    for i in 0..LEVELS {
        rel.push_str(&format!("/n{i}"));
    }
    rel.push('/');
    rel.push_str(BOTTOM);
    let made = Command::new("setpriv")
        .args(["--reuid", &OWNER.to_string(), "--regid", &OWNER.to_string()])
        .args(["--clear-groups", "mkdir", "-p"])
        .arg(sb.dir(&rel))
        .status()
        .unwrap();
    assert!(made.success(), "the owner's mkdir -p");
    sb.spawn_in(&rel, "exec sleep 60");
    let text = batch::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["-b", "-n", "1", "-d", "0.1"])
            .arg(&sb.rel),
    );
    let (header, rows) = batch::first(&text);
    let row = rows
        .iter()
        .find(|r| r.contains(BOTTOM))
        .unwrap_or_else(|| panic!("the bottom group's name is on no row:\n{text}"));
    // its one process, under the header's PIDS
    let end = header.find("PIDS").unwrap() + "PIDS".len();
    let at = header[..end].chars().count();
    let cells: Vec<char> = row.chars().collect();
    assert_eq!(
        cells.get(at - 1),
        Some(&'1'),
        "PIDS out of its column:\n{header}\n{row}"
    );
}
