//! The writer against this machine's real cgroup2 hierarchy.
//!
//! Every test works in its own sandbox (`common::Sandbox`: a group
//! `cgtop-test-<pid>-<n>` directly below the cgroup2 root, killed and
//! removed on drop, also when an assertion panics) and moves only
//! processes it spawned. Without root, or without a writable cgroup2
//! mount, each test prints `skipped: <reason>` and passes.
//!
//! Enabling a controller in a test group needs the root to hand that
//! controller down. When the root's cgroup.subtree_control lacks hugetlb,
//! the hugetlb test enables it there only with
//! `CGTOP_TEST_ENABLE_ROOT_HUGETLB=1` (and disables it again afterwards),
//! since that writes outside the test's own groups; otherwise that part is
//! skipped with the reason.

// The helpers below are test code outside #[test] functions, where clippy's
// allow-unwrap-in-tests does not reach: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use crate::common;

use cgtop::cgroupfs::{CgroupEvents, Controllers};
use cgtop::model::write::input::{ControllerChange, MemoryFile};
use cgtop::model::write::{
    create_group, freeze, kill, move_process, remove_group, set_memory_limit, set_subtree_control,
};
use cgtop::model::GroupPath;
use cgtop::model::WriteOutcome;
use cgtop::source::writer::{leaf_fix, perform};
use common::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A pid that cannot exist: pid_max is at most PID_MAX_LIMIT (4194304)
/// and pids stay below it.
const NO_SUCH_PID: u32 = 4_194_304;

/// Controllers a test enabled at the root (the opt-in of the hugetlb
/// test): disabled again on drop. Made before the sandbox, so that it
/// drops after it, once the test's groups are gone; the sandbox itself
/// never writes outside its own group.
#[derive(Default)]
struct EnabledAtRoot {
    root: PathBuf,
    names: Vec<&'static str>,
}

impl EnabledAtRoot {
    fn enable(&mut self, root: &Path, name: &'static str) {
        let on = perform(
            root,
            &set_subtree_control(&GroupPath::root(), &[ControllerChange::enable(name)]),
        );
        assert!(on.is_ok(), "{}", on.summary());
        self.root = root.to_path_buf();
        self.names.push(name);
    }
}

impl Drop for EnabledAtRoot {
    fn drop(&mut self) {
        for name in &self.names {
            let off = set_subtree_control(&GroupPath::root(), &[ControllerChange::disable(name)]);
            let done = (0..50).any(|_| {
                let ok = perform(&self.root, &off).is_ok();
                if !ok {
                    std::thread::sleep(Duration::from_millis(20));
                }
                ok
            });
            if !done {
                eprintln!("warning: could not disable {name} at the root again");
            }
        }
    }
}

macro_rules! sandbox_or_skip {
    () => {
        match Sandbox::or_skip() {
            Some(s) => s,
            None => return,
        }
    };
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn pids(dir: &Path) -> Vec<u32> {
    cgtop::cgroupfs::parse_pids(&read(&dir.join("cgroup.procs")))
}

fn events(dir: &Path) -> CgroupEvents {
    CgroupEvents::parse(&read(&dir.join("cgroup.events")))
}

/// Waits up to 5 s for `cond`.
fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    common::wait_until(what, Duration::from_secs(5), cond);
}

/// utime of a process in clock ticks, from /proc/PID/stat.
fn utime(pid: u32) -> u64 {
    let stat = read(Path::new(&format!("/proc/{pid}/stat")));
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    // after the command: state is field 3, utime field 14
    rest.split_ascii_whitespace()
        .nth(11)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn create_and_remove_groups() {
    let sb = sandbox_or_skip!();
    let child = sb.path("child");
    let grandchild = sb.path("child/grandchild");
    assert!(perform(&sb.root, &create_group(&child)).is_ok());
    assert!(perform(&sb.root, &create_group(&grandchild)).is_ok());
    assert!(sb.dir("child/grandchild/cgroup.procs").exists());

    let again = perform(&sb.root, &create_group(&child));
    let e = again.result.unwrap_err();
    assert_eq!(e.errno_name(), "EEXIST");
    assert_eq!(e.explanation, format!("child already exists in {}", sb.top));

    // a group with a child cannot go
    let busy = perform(&sb.root, &remove_group(&child));
    let e = busy.result.unwrap_err();
    assert_eq!(e.errno_name(), "EBUSY");
    assert_eq!(
        e.explanation,
        format!("{child} still has 1 child group; only an empty group can be removed")
    );

    let undo = perform(&sb.root, &create_group(&sb.path("tmp"))).undo();
    assert_eq!(undo, Some(remove_group(&sb.path("tmp"))));
    assert!(perform(&sb.root, &undo.unwrap()).is_ok());
    assert!(perform(&sb.root, &remove_group(&grandchild)).is_ok());
    assert!(perform(&sb.root, &remove_group(&child)).is_ok());
    assert!(!sb.dir("child").exists());
}

#[test]
fn move_a_spawned_process() {
    let mut sb = sandbox_or_skip!();
    let pid = sb.spawn(&["sleep", "60"]);
    let o = perform(&sb.root, &move_process(pid, &sb.top, false));
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(pids(&sb.dir("")), vec![pid]);
    let cg = read(Path::new(&format!("/proc/{pid}/cgroup")));
    assert!(cg.lines().any(|l| l == format!("0::{}", sb.top)), "{cg}");

    // a process that does not exist
    let gone = perform(&sb.root, &move_process(NO_SUCH_PID, &sb.top, false));
    let e = gone.result.unwrap_err();
    assert_eq!(e.errno_name(), "ESRCH");
    assert_eq!(
        e.explanation,
        format!("process {NO_SUCH_PID} no longer exists")
    );

    // a group that vanished
    let vanished = perform(&sb.root, &move_process(pid, &sb.path("nope"), false));
    assert_eq!(
        vanished.result.unwrap_err().explanation,
        format!("the group {} no longer exists", sb.path("nope"))
    );
}

/// A move's undo takes the process back to the group the writer saw it
/// in just before the move (both groups are the sandbox's own).
#[test]
fn a_move_is_undone_back_to_where_the_process_was() {
    let mut sb = sandbox_or_skip!();
    let pid = sb.spawn(&["sleep", "60"]);
    assert!(perform(&sb.root, &move_process(pid, &sb.top, false)).is_ok());
    let child = sb.path("child");
    assert!(perform(&sb.root, &create_group(&child)).is_ok());
    let moved = perform(&sb.root, &move_process(pid, &child, false));
    assert!(moved.is_ok(), "{}", moved.summary());
    assert_eq!(pids(&sb.dir("child")), vec![pid]);
    let back = moved.undo();
    assert_eq!(back, Some(move_process(pid, &sb.top, false)));
    assert!(perform(&sb.root, &back.unwrap()).is_ok());
    assert_eq!(pids(&sb.dir("")), vec![pid]);
    assert!(pids(&sb.dir("child")).is_empty());
    assert!(perform(&sb.root, &remove_group(&child)).is_ok());
}

/// A group named to look removed ("x (deleted)", as /proc/PID/cgroup
/// marks a removed one): a move out of it has no undo, rather than one
/// into its sibling "x".
#[test]
fn a_move_out_of_a_group_named_deleted_has_no_undo() {
    let mut sb = sandbox_or_skip!();
    let pid = sb.spawn(&["sleep", "60"]);
    let odd = sb.path("x (deleted)");
    let x = sb.path("x");
    for g in [&odd, &x] {
        assert!(perform(&sb.root, &create_group(g)).is_ok());
    }
    assert!(perform(&sb.root, &move_process(pid, &odd, false)).is_ok());
    let moved = perform(&sb.root, &move_process(pid, &sb.top, false));
    assert!(moved.is_ok(), "{}", moved.summary());
    assert_eq!(moved.undo(), None, "old {:?}", moved.old);
    for g in [&odd, &x] {
        assert!(perform(&sb.root, &remove_group(g)).is_ok());
    }
}

#[test]
fn freeze_stops_cpu_and_thaw_resumes() {
    let _busy = crate::common::one_busy_loop_at_a_time();
    let mut sb = sandbox_or_skip!();
    let pid = sb.spawn(&["sh", "-c", "while :; do :; done"]);
    assert!(perform(&sb.root, &move_process(pid, &sb.top, false)).is_ok());
    wait_until("populated", || events(&sb.dir("")).is_populated());

    let frozen = perform(&sb.root, &freeze(&sb.top, true));
    assert!(frozen.is_ok(), "{}", frozen.summary());
    assert_eq!(frozen.old.as_deref().map(str::trim), Some("0"));
    assert_eq!(frozen.new_readback.as_deref().map(str::trim), Some("1"));
    assert_eq!(frozen.stored_differs(), None);
    wait_until("frozen 1", || events(&sb.dir("")).is_frozen());
    let before = utime(pid);
    std::thread::sleep(Duration::from_millis(500));
    let during = utime(pid) - before;
    assert_eq!(during, 0, "a frozen busy loop used {during} ticks");

    // undo of the freeze is the thaw
    let thaw = frozen.undo().unwrap();
    assert_eq!(thaw, freeze(&sb.top, false));
    assert!(perform(&sb.root, &thaw).is_ok());
    wait_until("frozen 0", || !events(&sb.dir("")).is_frozen());
    let before = utime(pid);
    std::thread::sleep(Duration::from_millis(500));
    let after = utime(pid) - before;
    assert!(after > 0, "a thawed busy loop used no CPU");
}

#[test]
fn kill_ends_every_process() {
    use std::os::unix::process::ExitStatusExt;
    let mut sb = sandbox_or_skip!();
    assert!(perform(&sb.root, &create_group(&sb.path("inner"))).is_ok());
    let a = sb.spawn(&["sleep", "60"]);
    let b = sb.spawn(&["sleep", "60"]);
    assert!(perform(&sb.root, &move_process(a, &sb.top, false)).is_ok());
    assert!(perform(&sb.root, &move_process(b, &sb.path("inner"), false)).is_ok());
    wait_until("populated", || events(&sb.dir("")).is_populated());

    let o = perform(&sb.root, &kill(&sb.top));
    assert!(o.is_ok(), "{}", o.summary());
    // a kernel with cgroup.kill needs no fallback
    assert!(o.notes.is_empty(), "{:?}", o.notes);
    for c in &mut sb.children {
        assert_eq!(c.wait().unwrap().signal(), Some(9));
    }
    wait_until("populated 0", || !events(&sb.dir("")).is_populated());
    assert!(pids(&sb.dir("")).is_empty() && pids(&sb.dir("inner")).is_empty());
}

#[test]
fn leaf_fix_moves_every_process_into_the_leaf() {
    // without controllers to enable (they need the root to hand them down,
    // see the hugetlb test), the leaf fix only makes the leaf and moves
    let mut sb = sandbox_or_skip!();
    let a = sb.spawn(&["sleep", "60"]);
    let b = sb.spawn(&["sleep", "60"]);
    for pid in [a, b] {
        assert!(perform(&sb.root, &move_process(pid, &sb.top, false)).is_ok());
    }
    let outs = leaf_fix(&sb.root, &sb.top, "leaf", &[]);
    let summaries: Vec<String> = outs.iter().map(WriteOutcome::summary).collect();
    assert!(outs.iter().all(WriteOutcome::is_ok), "{summaries:?}");
    assert_eq!(outs.len(), 3, "{summaries:?}");
    assert_eq!(outs[0].op, create_group(&sb.path("leaf")));
    let mut moved = pids(&sb.dir("leaf"));
    moved.sort_unstable();
    let mut want = vec![a, b];
    want.sort_unstable();
    assert_eq!(moved, want);
    assert!(pids(&sb.dir("")).is_empty());
    // run again: the leaf exists already and there is nothing left to move
    let again = leaf_fix(&sb.root, &sb.top, "leaf", &[]);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].result.as_ref().unwrap_err().errno_name(), "EEXIST");
}

#[test]
fn a_missing_controller_file_is_explained() {
    let sb = sandbox_or_skip!();
    let root_offers_memory =
        Controllers::parse(&read(&sb.root.join("cgroup.subtree_control"))).contains("memory");
    if root_offers_memory {
        println!("skipped: the root enables memory, so memory.max exists");
        return;
    }
    let o = perform(
        &sb.root,
        &set_memory_limit(&sb.top, MemoryFile::Max, cgtop::cgroupfs::Limit::Max),
    );
    let e = o.result.unwrap_err();
    assert_eq!(e.errno_name(), "ENOENT");
    assert_eq!(
        e.explanation,
        format!(
            "memory.max does not exist in {}: the memory controller is not enabled for it",
            sb.top
        )
    );
    assert_eq!(
        e.fix.as_deref(),
        Some("enable +memory in the cgroup.subtree_control of /")
    );
}

#[test]
fn protected_groups_of_this_process() {
    let sb = sandbox_or_skip!();
    let p = cgtop::source::safety::discover(&sb.root);
    let own = p.own.clone().expect("the test's own group is readable");
    // the test runs outside its sandbox, so the sandbox is not protected
    // unless the test itself was started inside it
    assert!(!own.is_within(&sb.top));
    assert!(p.dangers(&sb.top).is_empty(), "{:?}", p.dangers(&sb.top));
    assert!(p.groups().contains(&GroupPath::root()));
    println!(
        "own group {own}, session {:?}, init {:?}",
        p.session, p.init
    );
}

#[test]
fn hugetlb_not_offered_toggle_busy_and_leaf_fix() {
    // before the sandbox: dropped after it
    let mut at_root = EnabledAtRoot::default();
    let mut sb = sandbox_or_skip!();
    let root_sc = || Controllers::parse(&read(&sb.root.join("cgroup.subtree_control")));
    if !Controllers::parse(&read(&sb.root.join("cgroup.controllers"))).contains("hugetlb") {
        println!("skipped: this hierarchy has no hugetlb controller");
        return;
    }

    // 1. a grandchild is not offered hugetlb: the error names the path down
    assert!(perform(&sb.root, &create_group(&sb.path("a"))).is_ok());
    let plus = [ControllerChange::enable("hugetlb")];
    let o = perform(&sb.root, &set_subtree_control(&sb.path("a"), &plus));
    let e = o.result.unwrap_err();
    assert_eq!(e.errno_name(), "ENOENT");
    let steps = if root_sc().contains("hugetlb") {
        format!("{}", sb.top)
    } else {
        format!("/, then {}", sb.top)
    };
    assert_eq!(
        e.fix.as_deref(),
        Some(format!("write +hugetlb to cgroup.subtree_control of {steps}, then retry").as_str())
    );

    // the rest needs the root to hand hugetlb down
    if !root_sc().contains("hugetlb") {
        if std::env::var_os("CGTOP_TEST_ENABLE_ROOT_HUGETLB").is_none() {
            println!(
                "skipped: the root's cgroup.subtree_control does not enable hugetlb; set \
                 CGTOP_TEST_ENABLE_ROOT_HUGETLB=1 to let this test enable it at the root \
                 (outside its own groups) and disable it afterwards"
            );
            return;
        }
        at_root.enable(&sb.root, "hugetlb");
    }

    // 2. toggle on an empty group, read back, undo
    let on = perform(&sb.root, &set_subtree_control(&sb.top, &plus));
    assert!(on.is_ok(), "{}", on.summary());
    assert!(Controllers::parse(on.new_readback.as_deref().unwrap()).contains("hugetlb"));
    assert_eq!(on.stored_differs(), None);
    assert!(Controllers::parse(&read(&sb.dir("a/cgroup.controllers"))).contains("hugetlb"));
    let undo = on.undo().unwrap();
    assert_eq!(
        undo,
        set_subtree_control(&sb.top, &[ControllerChange::disable("hugetlb")])
    );
    let off = perform(&sb.root, &undo);
    assert!(off.is_ok(), "{}", off.summary());
    assert!(!Controllers::parse(off.new_readback.as_deref().unwrap()).contains("hugetlb"));

    // 3. a group that holds a process cannot hand hugetlb down: EBUSY
    let pid = sb.spawn(&["sleep", "60"]);
    assert!(perform(&sb.root, &move_process(pid, &sb.top, false)).is_ok());
    let busy = perform(&sb.root, &set_subtree_control(&sb.top, &plus));
    let e = busy.result.unwrap_err();
    assert_eq!(e.errno_name(), "EBUSY");
    assert_eq!(
        e.explanation,
        format!(
            "{} has 1 process; a group that hands a domain controller to its children cannot \
             hold processes itself (no internal process rule, admin guide 2-4-3)",
            sb.top
        )
    );
    assert!(e.fix.as_deref().unwrap().contains("leaf"));

    // 4. the leaf fix: make a leaf, move the process, enable hugetlb
    let outs = leaf_fix(&sb.root, &sb.top, "leaf", &plus);
    for o in &outs {
        assert!(o.is_ok(), "{}", o.summary());
    }
    assert_eq!(
        outs.len(),
        3,
        "{:?}",
        outs.iter().map(WriteOutcome::summary).collect::<Vec<_>>()
    );
    assert_eq!(pids(&sb.dir("leaf")), vec![pid]);
    assert!(pids(&sb.dir("")).is_empty());
    assert!(Controllers::parse(&read(&sb.dir("cgroup.subtree_control"))).contains("hugetlb"));

    // a process cannot move back into a group that hands hugetlb down
    let back = perform(&sb.root, &move_process(pid, &sb.top, false));
    let e = back.result.unwrap_err();
    assert_eq!(e.errno_name(), "EBUSY");
    assert_eq!(
        e.explanation,
        format!(
            "{} hands controllers to its children (hugetlb), so it cannot hold processes \
             itself (no internal process rule, admin guide 2-4-3)",
            sb.top
        )
    );
}
