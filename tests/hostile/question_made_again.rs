//! A confirmation names a group by its path, and Enter writes to that
//! path. A user who owns a delegated subtree can remove their group and
//! make another under the same name while the operator reads the
//! question (rmdir and mkdir take microseconds; the tree looks the same
//! before and after): Enter then freezes or kills a group the question
//! was never about, with its own processes, and nothing is said. The
//! kernel gives each group its own inode (kernfs ids are never reused):
//! the answer must go to the group that was asked about, or nowhere.
//! Real kernel, real binary in tmux. On a hybrid or v1 host the same
//! holds in each v1 hierarchy, whose directories have inodes of their
//! own.

use crate::common::sandbox::Sandbox;
use crate::common::sandbox_v1::V1Sandbox;
use crate::common::tmux::Tmux;
use std::thread::sleep;
use std::time::Duration;

#[test]
fn a_freeze_answered_after_its_group_was_made_again_does_not_freeze_the_new_one() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("a/b");
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let t = Tmux::run(&format!("{bin} --no-config -d 0.2 {}/a", sb.rel), 100, 30);
    let b = format!("{}/a/b", sb.top);
    t.wait_for("──b ");
    t.send(&["Down"]);
    t.wait_for(&format!("─ {b} "));
    // the question about b, the group of this inode
    t.send(&["f"]);
    t.wait_for(&format!("freeze {b}"));
    let dir = sb.dir("a/b");
    let ino =
        |d: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap());
    let asked = ino(&dir);
    // the owner swaps it for another of the same name
    std::fs::remove_dir(&dir).unwrap();
    std::fs::create_dir(&dir).unwrap();
    assert_ne!(
        ino(&dir),
        asked,
        "the kernel gave the new group a new inode"
    );
    // a few refreshes: cgtop has seen the new group
    sleep(Duration::from_secs(1));
    t.send(&["Enter"]);
    sleep(Duration::from_secs(1));
    let screen = t.capture();
    t.send(&["q"]);
    let frozen = std::fs::read_to_string(dir.join("cgroup.freeze")).unwrap();
    assert_eq!(
        frozen.trim(),
        "0",
        "the freeze asked about the old b froze the new b made under its name:\n{screen}"
    );
}

/// On this hybrid host: a group only in the v1 freezer hierarchy (not in
/// cgroup2), frozen through its freezer.state, made again there under
/// its name while the question is open.
#[test]
fn a_v1_freeze_answered_after_its_group_was_made_again_does_not_freeze_the_new_one() {
    let Some(sb) = V1Sandbox::or_skip("asked-v1", &["freezer"]) else {
        return;
    };
    sb.mkdir("a");
    let dir = sb.dir_of("freezer", &sb.path("a/b"));
    std::fs::create_dir(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let t = Tmux::run(&format!("{bin} --no-config -d 0.2 {}/a", sb.rel), 140, 30);
    let b = sb.path("a/b");
    t.wait_for("──b ");
    t.send(&["Down"]);
    t.wait_for(&format!("│{b}"));
    // the question about b in the freezer hierarchy, the group of this inode
    t.send(&["f"]);
    t.wait_for("in the v1 freezer hierarchy");
    let ino =
        |d: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap());
    let asked = ino(&dir);
    std::fs::remove_dir(&dir).unwrap();
    std::fs::create_dir(&dir).unwrap();
    assert_ne!(
        ino(&dir),
        asked,
        "the kernel gave the new group a new inode"
    );
    sleep(Duration::from_secs(1));
    t.send(&["Enter"]);
    sleep(Duration::from_secs(1));
    let screen = t.capture();
    t.send(&["q"]);
    let state = std::fs::read_to_string(dir.join("freezer.state")).unwrap();
    assert_eq!(
        state.trim(),
        "THAWED",
        "the freeze asked about the old b froze the new b made under its name:\n{screen}"
    );
    // the error dialog's words, however its lines wrap
    let words: Vec<&str> = screen
        .split(|c: char| c.is_whitespace() || c == '│')
        .filter(|w| !w.is_empty())
        .collect();
    assert!(
        words
            .join(" ")
            .contains("made again since you were asked; nothing done"),
        "{screen}"
    );
}
