//! Hostile inputs: the lockout guard (issue 7, item 3), on the real
//! kernel as root, under the test prefix. A `sh` started by the test
//! stands in for cgtop: the protection is computed for its pid, as cgtop
//! computes it for its own, and the writer's last check before a write is
//! called with that pid.

use crate::common::sandbox::Sandbox;
use cgtop::model::write::guard::{Danger, Role};
use cgtop::model::write::{self, Op};
use cgtop::model::WriteOutcome;
use cgtop::source::safety::{self, perform_checked};

fn freeze_file(tg: &Sandbox, sub: &str) -> String {
    std::fs::read_to_string(tg.dir(sub).join("cgroup.freeze"))
        .unwrap()
        .trim()
        .to_owned()
}

fn refused(o: &WriteOutcome) -> bool {
    o.result
        .as_ref()
        .is_err_and(|e| e.errno.is_none() && e.explanation.starts_with("refused"))
}

fn procs_of(tg: &Sandbox, sub: &str) -> String {
    std::fs::read_to_string(tg.dir(sub).join("cgroup.procs")).unwrap()
}

/// The sandbox, where the kernel has cgroup.freeze (Linux 5.2+); `None`
/// after printing why not.
fn sandbox_with_freeze() -> Option<Sandbox> {
    let tg = Sandbox::or_skip()?;
    if !tg.dir("").join("cgroup.freeze").exists() {
        println!("skipped: no cgroup.freeze (Linux before 5.2)");
        return None;
    }
    Some(tg)
}

#[test]
fn protection_follows_cgtop_when_it_moves_and_the_writer_checks_again() {
    let Some(mut tg) = sandbox_with_freeze() else {
        return;
    };
    tg.mkdir("a");
    tg.mkdir("b");
    let me = tg.spawn_in("a", "exec sleep 600");
    let root = tg.root.clone();
    let (a, b) = (tg.path("a"), tg.path("b"));
    let hier = cgtop::source::hier::Hier::open(&root).unwrap();
    let check = |op: &Op, typed| perform_checked(&hier, op, typed, me);

    let p = safety::discover_for(&root, me);
    assert_eq!(p.own, Some(a.clone()));
    assert!(p.dangers(&a).contains(&Danger::ContainsCgtop));
    assert!(!p.dangers(&b).contains(&Danger::ContainsCgtop));

    // "cgtop" moves into b (m, confirmed): its new group is protected,
    // its old one is not
    std::fs::write(tg.dir("b").join("cgroup.procs"), me.to_string()).unwrap();
    let p = safety::discover_for(&root, me);
    assert_eq!(p.own, Some(b.clone()));
    assert!(p.dangers(&b).contains(&Danger::ContainsCgtop));
    assert!(!p.dangers(&a).contains(&Danger::ContainsCgtop));

    // a freeze of b asked before the move, with a plain y: refused by the
    // writer's own check, however it is spelt
    for op in [
        write::freeze(&b, true),
        write::raw(&b, "cgroup.freeze", "0x1"),
        write::raw(&b, "cgroup.freeze", "01"),
    ] {
        let o = check(&op, None);
        assert!(refused(&o), "{op:?}: {:?}", o.result);
        assert_eq!(freeze_file(&tg, "b"), "0", "{op:?} froze cgtop");
    }
    // the old group is free to freeze now
    let o = check(&write::freeze(&a, true), None);
    assert!(o.is_ok(), "{:?}", o.result);
    assert_eq!(freeze_file(&tg, "a"), "1");

    // moving cgtop back into the frozen a, by pid or as "0" (the writer
    // itself): refused, and nothing moved
    for op in [
        write::move_process(me, &a, false),
        write::raw(&a, "cgroup.procs", "0"),
        write::raw(&a, "cgroup.procs", &format!("{me:#x}")),
    ] {
        let o = check(&op, None);
        assert!(refused(&o), "{op:?}: {:?}", o.result);
    }
    assert_eq!(procs_of(&tg, "a"), "");
    assert!(procs_of(&tg, "b").contains(&me.to_string()));

    // with the group's name typed, the writer goes ahead
    let o = check(&write::freeze(&b, true), Some(&b));
    assert!(o.is_ok(), "{:?}", o.result);
    assert_eq!(freeze_file(&tg, "b"), "1");
    // the name of another group does not count
    let _ = check(&write::freeze(&b, false), None);
    let o = check(&write::freeze(&b, true), Some(&a));
    assert!(refused(&o), "{:?}", o.result);
    let _ = check(&write::freeze(&a, false), None);
    let _ = check(&write::freeze(&b, false), None);
}

/// The leaf fix (EBUSY's offer: move the group's processes into a new
/// leaf child) has no typed name to give: when the leaf is there already
/// and frozen, and the group holds "cgtop", it is refused, and cgtop is
/// not moved into the frozen leaf; a leaf that is not frozen goes ahead.
#[test]
fn a_leaf_fix_never_moves_cgtop_into_a_frozen_leaf() {
    let Some(mut tg) = sandbox_with_freeze() else {
        return;
    };
    tg.mkdir("g");
    tg.mkdir("g/leaf");
    std::fs::write(tg.dir("g/leaf").join("cgroup.freeze"), "1").unwrap();
    let me = tg.spawn_in("g", "exec sleep 600");
    let hier = cgtop::source::hier::Hier::open(&tg.root).unwrap();
    let g = tg.path("g");
    let out = cgtop::source::safety::leaf_fix_checked(&hier, &g, "leaf", &[], me);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(refused(&out[0]), "{:?}", out[0].result);
    assert!(procs_of(&tg, "g").contains(&me.to_string()));
    assert_eq!(procs_of(&tg, "g/leaf"), "");
    // thawed, the same fix moves the processes
    std::fs::write(tg.dir("g/leaf").join("cgroup.freeze"), "0").unwrap();
    // (the leaf's mkdir says EEXIST, which the fix takes as "use it")
    let out = cgtop::source::safety::leaf_fix_checked(&hier, &g, "leaf", &[], me);
    assert!(!out.iter().any(refused), "{out:?}");
    assert!(procs_of(&tg, "g/leaf").contains(&me.to_string()));
}

/// A group another user owns (a delegated subtree: its directory chowned
/// to that user, as systemd's Delegate= does): the writer's own check
/// refuses to move "cgtop" there, by pid or as "0", also into a
/// root-owned group below it, unless its name is typed; it says why,
/// and the outcome names the danger so that the app asks for the name
/// next time. Anyone else's process moves there with a plain yes.
#[test]
fn the_writer_never_hands_cgtop_to_the_owner_of_a_delegated_group_untyped() {
    let Some(mut tg) = Sandbox::or_skip() else {
        return;
    };
    tg.mkdir("a");
    tg.mkdir("theirs");
    tg.mkdir("theirs/inner");
    // nobody (65534) owns the delegated group and the files it may write
    let nobody = Some(rustix::process::Uid::from_raw(65534));
    for p in ["theirs", "theirs/cgroup.procs", "theirs/cgroup.threads"] {
        rustix::fs::chown(tg.dir(p), nobody, None).expect("chown");
    }
    let me = tg.spawn_in("a", "exec sleep 600");
    let other = tg.spawn_in("a", "exec sleep 600");
    let root = tg.root.clone();
    let (theirs, inner) = (tg.path("theirs"), tg.path("theirs/inner"));
    let hier = cgtop::source::hier::Hier::open(&root).unwrap();
    assert!(safety::delegated_on_disk(&hier, &inner));
    assert!(!safety::delegated_on_disk(&hier, &tg.path("a")));
    let check = |op: &Op, typed| perform_checked(&hier, op, typed, me);
    for op in [
        write::move_process(me, &theirs, false),
        write::move_process(me, &inner, false),
        write::raw(&inner, "cgroup.procs", "0"),
    ] {
        let o = check(&op, None);
        assert!(refused(&o), "{op:?}: {:?}", o.result);
        let e = o.result.as_ref().unwrap_err();
        assert!(
            e.explanation.contains("belongs to another user"),
            "{}",
            e.explanation
        );
        assert_eq!(o.guard_refused, [Danger::MovesIntoDelegated(Role::Cgtop)]);
    }
    assert_eq!(procs_of(&tg, "theirs"), "");
    assert_eq!(procs_of(&tg, "theirs/inner"), "");
    // someone else's process: no typed name needed
    let o = check(&write::move_process(other, &theirs, false), None);
    assert!(o.is_ok(), "{:?}", o.result);
    assert!(procs_of(&tg, "theirs").contains(&other.to_string()));
    // with the name typed, the operator's choice goes through
    let o = check(&write::move_process(me, &inner, false), Some(&inner));
    assert!(o.is_ok(), "{:?}", o.result);
    assert!(procs_of(&tg, "theirs/inner").contains(&me.to_string()));
}

/// `--root` inside a delegated subtree, at a group root made there: the
/// view's own groups are all root's, but the user who owns a group above
/// the view can still freeze or kill everything below it. Moving cgtop
/// there needs its name typed as it does through the whole hierarchy.
#[test]
fn a_view_rooted_below_a_delegated_group_is_still_delegated() {
    let Some(mut tg) = Sandbox::or_skip() else {
        return;
    };
    tg.mkdir("a");
    tg.mkdir("theirs");
    tg.mkdir("theirs/inner");
    tg.mkdir("theirs/inner/x");
    let nobody = Some(rustix::process::Uid::from_raw(65534));
    for p in ["theirs", "theirs/cgroup.procs", "theirs/cgroup.freeze"] {
        rustix::fs::chown(tg.dir(p), nobody, None).expect("chown");
    }
    let me = tg.spawn_in("a", "exec sleep 600");
    // the view: --root .../theirs/inner, which root owns
    let hier = cgtop::source::hier::Hier::open(&tg.dir("theirs/inner")).unwrap();
    let x = cgtop::model::GroupPath::new("x");
    assert!(safety::delegated_on_disk(&hier, &x));
    for op in [
        write::move_process(me, &x, false),
        write::raw(&x, "cgroup.procs", "0"),
    ] {
        let o = perform_checked(&hier, &op, None, me);
        assert!(refused(&o), "{op:?}: {:?}", o.result);
        assert_eq!(o.guard_refused, [Danger::MovesIntoDelegated(Role::Cgtop)]);
    }
    assert_eq!(procs_of(&tg, "theirs/inner/x"), "");
}

/// Kills and reaps the child when dropped (also when the test fails).
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A write of a thread's id to cgroup.procs moves its whole process (the
/// kernel takes the thread's group leader): a thread id of a process the
/// operator depends on (here a multi-threaded parent of the stand-in for
/// cgtop, as a shell, sshd or tmux is its ancestor) is that process, and
/// moving it into a group another user owns needs the name typed.
#[test]
fn a_thread_id_moves_its_whole_process_and_is_guarded_as_it() {
    let Some(tg) = Sandbox::or_skip() else {
        return;
    };
    tg.mkdir("theirs");
    let nobody = Some(rustix::process::Uid::from_raw(65534));
    for p in ["theirs", "theirs/cgroup.procs"] {
        rustix::fs::chown(tg.dir(p), nobody, None).expect("chown");
    }
    // a parent with a second thread, and its child (the stand-in)
    let script = "import os, subprocess, threading, time\n\
                  threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n\
                  c = subprocess.Popen(['sleep', '600'])\n\
                  time.sleep(0.2)\n\
                  print(c.pid, ' '.join(sorted(os.listdir('/proc/self/task'))), flush=True)\n\
                  time.sleep(600)\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let out = child.stdout.take().unwrap();
    let parent = Reaped(child);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
    let mut words = line.split_whitespace().map(|w| w.parse::<u32>().unwrap());
    let me = words.next().unwrap();
    let pid = parent.0.id();
    let tid = words.find(|&t| t != pid).expect("a second thread");
    let hier = cgtop::source::hier::Hier::open(&tg.root).unwrap();
    let theirs = tg.path("theirs");
    let o = perform_checked(
        &hier,
        &write::raw(&theirs, "cgroup.procs", &tid.to_string()),
        None,
        me,
    );
    let moved = procs_of(&tg, "theirs").contains(&pid.to_string());
    // the stand-in's own sleep and the parent go with the sandbox
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(me).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    );
    drop(parent);
    assert!(
        !moved,
        "the parent of the stand-in was moved by its thread id"
    );
    assert!(refused(&o), "{:?}", o.result);
    assert_eq!(o.guard_refused, [Danger::MovesIntoDelegated(Role::Session)]);
}
