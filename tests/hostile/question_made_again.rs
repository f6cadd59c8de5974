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
//! own, and for what an answer reaches beyond the group's own directory:
//! a new group's parent, the v1 freezer's group thawed around a kill,
//! and the group the kill's check reads.

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
    let b = format!("{}/a/b", sb.top);
    let t = selected_below_a(&sb.rel, 100, "b", &format!("─ {b} "));
    // the question about b, the group of this inode
    t.send(&["f"]);
    t.wait_for(&format!("freeze {b}"));
    let dir = sb.dir("a/b");
    // the owner swaps it for another of the same name
    make_again(&dir);
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
    let b = sb.path("a/b");
    let t = selected_below_a(&sb.rel, 140, "b", &format!("│{b}"));
    // the question about b in the freezer hierarchy, the group of this inode
    t.send(&["f"]);
    t.wait_for("in the v1 freezer hierarchy");
    make_again(&dir);
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
    assert!(
        words(&screen).contains("made again since you were asked; nothing done"),
        "{screen}"
    );
}

/// cgtop in tmux, `width` columns wide, on the sandbox's group `a`, its
/// cursor moved down onto child `row` and the screen showing `selected`.
fn selected_below_a(rel: &str, width: u16, row: &str, selected: &str) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let t = Tmux::run(&format!("{bin} --no-config -d 0.2 {rel}/a"), width, 30);
    t.wait_for(&format!("──{row} "));
    t.send(&["Down"]);
    t.wait_for(selected);
    t
}

/// The owner removes group directory `dir` and makes another under its
/// name; the kernel gives the new one an inode of its own.
fn make_again(dir: &std::path::Path) {
    let ino =
        |d: &std::path::Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(d).unwrap());
    let asked = ino(dir);
    std::fs::remove_dir(dir).unwrap();
    std::fs::create_dir(dir).unwrap();
    assert_ne!(ino(dir), asked, "the kernel gave the new group a new inode");
}

/// The whole text of a screen, however its lines wrap: its words joined
/// by one space.
fn words(screen: &str) -> String {
    screen
        .split(|c: char| c.is_whitespace() || c == '│')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A new group has no directory to be held to: the mkdir is held to the
/// parent the name prompt was opened on. The owner of the parent swaps
/// it for another of the same name while the operator types the name.
#[test]
fn a_group_named_under_a_parent_made_again_is_not_made_in_the_new_one() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("a/p");
    let p = format!("{}/a/p", sb.top);
    let t = selected_below_a(&sb.rel, 120, "p", &format!("─ {p} "));
    // the prompt for a child of p, the group of this inode
    t.send(&["n"]);
    t.wait_for("new group");
    let dir = sb.dir("a/p");
    make_again(&dir);
    // a few refreshes: cgtop has seen the new parent
    sleep(Duration::from_secs(1));
    t.send(&["-l", "kid"]);
    t.send(&["Enter"]);
    sleep(Duration::from_secs(1));
    let screen = t.capture();
    t.send(&["q"]);
    assert!(
        !dir.join("kid").exists(),
        "the group asked for under the old p was made in the new p:\n{screen}"
    );
    assert!(
        words(&screen).contains("made again since you were asked; nothing done"),
        "{screen}"
    );
}

/// K on a hybrid host kills through cgroup2's cgroup.kill and thaws the
/// group in the v1 freezer hierarchy, where a frozen process dies only
/// once thawed. The owner swaps the group there (frozen, empty) for
/// another of the same name that holds a frozen process of theirs while
/// the question is open: Enter must not thaw that one, which the
/// operator never saw. The killed group's own process sits frozen in
/// another group of the freezer hierarchy, so that a thaw would last the
/// second the writer waits for the killed to go: long enough for the
/// new group's `sleep 1`, its time up while frozen, to end.
#[test]
fn a_kill_does_not_thaw_a_freezer_group_made_again_under_its_name() {
    let Some(mut sb) = V1Sandbox::or_skip("thaw-held", &["freezer"]) else {
        return;
    };
    if !sb.hiers.iter().any(|h| h.v2) {
        return println!("skipped: not a hybrid host (no cgroup2 beside the v1 freezer)");
    }
    let x = sb.mkdir("a/x");
    let y = sb.mkdir("y");
    // x's process, in x in cgroup2 and frozen in y in the freezer
    let c = crate::common::sandbox::spawn_detached(&["sleep", "300"], |_| ());
    let pid = c.id().to_string();
    sb.children.push(c);
    let v2 = sb.hier("").mount.join(x.as_rel_path());
    std::fs::write(v2.join("cgroup.procs"), &pid).unwrap();
    sb.write("freezer", &y, "cgroup.procs", &pid);
    sb.freeze(&y);
    sb.freeze(&x);
    let t = selected_below_a(&sb.rel, 140, "x", &format!("│{x}"));
    t.send(&["K"]);
    t.wait_for("is killed");
    // the owner's swap in the freezer hierarchy
    make_again(&sb.dir_of("freezer", &x));
    let theirs = crate::common::sandbox::spawn_detached(&["sleep", "1"], |_| ());
    let theirs_pid = theirs.id();
    sb.children.push(theirs);
    sb.write("freezer", &x, "cgroup.procs", &theirs_pid.to_string());
    sb.freeze(&x);
    // its time up while frozen, and cgtop has seen the new group
    sleep(Duration::from_millis(1500));
    t.send(&["Enter"]);
    sleep(Duration::from_millis(2500));
    let screen = t.capture();
    t.send(&["q"]);
    let alive = std::path::Path::new(&format!("/proc/{theirs_pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{theirs_pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(
        alive,
        "the kill thawed the freezer group made again under the name of the one shown:\n{screen}"
    );
    assert_eq!(sb.read("freezer", &x, "freezer.state").trim(), "FROZEN");
}

/// The kill's check of what survived reads the group it killed, through
/// the directory the kill held, not by path: the owner removes the
/// emptied group and makes another of the same name with a process of
/// theirs in it before the check (here between the two steps, which the
/// writer runs back to back). That process is not the kill's survivor.
#[test]
fn the_kill_check_reads_the_killed_group_not_one_made_again_under_its_name() {
    use cgtop::source::hier::{Hier, Hiers};
    use cgtop::source::writer;
    use std::os::fd::AsFd;
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    sb.mkdir("x");
    let dir = sb.dir("x");
    sb.spawn_in("x", "exec sleep 300");
    let h = std::sync::Arc::new(Hier::open(&sb.root).unwrap());
    let hiers = Hiers::single(h.clone());
    let asked = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&dir).unwrap());
    let op = cgtop::model::write::kill(&sb.path("x")).of_group(Some(asked));
    let (o, held) = writer::perform_holding(&h, &op);
    assert!(o.is_ok(), "{}", o.summary());
    let t0 = std::time::Instant::now();
    while std::fs::remove_dir(&dir).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(5), "x never emptied");
        sleep(Duration::from_millis(5));
    }
    std::fs::create_dir(&dir).unwrap();
    let theirs = sb.spawn_in("x", "exec sleep 300");
    let o = writer::after_kill(&hiers, &op, o, held.as_ref().map(AsFd::as_fd));
    let theirs_alive = std::path::Path::new(&format!("/proc/{theirs}")).exists();
    assert!(
        o.is_ok(),
        "the check counted the new group's process as the kill's survivor: {}",
        o.summary()
    );
    assert!(theirs_alive, "the new group's process was killed");
}
