//! Pre-flight as state transitions: a write the kernel is certain to
//! refuse is refused before any question, with the kernel's own reason
//! and fix (or the leaf fix at once); a write that hurts says what it
//! will do in the question, and one that OOM-kills asks for the group's
//! name. Keys and fixture trees through `app::update`, no terminal, no
//! root.
//!
//! The tree is `common::lab_tree` (see tests/state/actions.rs):
//!
//! ```text
//! /
//! ├─ batch        cpu io memory pids; 2 processes; uses ~52 MiB
//! ├─ lab          hands io down (subtree_control "io"), no process
//! │  └─ dd        io only; 1 process
//! └─ ...
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::dialog::confirm::Reason;
use cgtop::app::dialog::limits::FieldKind;
use cgtop::app::writes::WriteRequest;
use cgtop::app::{App, Effect, Level, Mode, Pane};
use cgtop::cgroupfs::Limit;
use cgtop::model::write::guard::Danger;
use cgtop::model::write::preflight::Warning;
use cgtop::model::{ControllerChange, GroupPath, MemoryFile, Op, WriteKind, WriteOp};
use cgtop::source::collector::Collector;
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const MIB: u64 = 1 << 20;

/// The message box: its title and lines.
fn message(a: &App) -> (&str, &[String]) {
    match &a.mode {
        Mode::Message { title, lines } => (title, lines),
        m => panic!("not a message: {m:?}"),
    }
}

/// Rewrites a fixture file in place (the scanner may keep it open), even
/// one the kernel makes read-only.
fn put(root: &Path, group: &str, file: &str, text: &str) {
    let p = root.join(group).join(file);
    if p.exists() {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::write(p, text).unwrap();
}

/// /batch uses 84 MiB, all of it anonymous (80 MiB active, 4 inactive):
/// nothing reclaim can drop without swap.
fn batch_uses_84_mib_of_anon(a: &mut App, c: &mut Collector, root: &Path) {
    put(root, "batch", "memory.current", &format!("{}\n", 84 * MIB));
    put(
        root,
        "batch",
        "memory.stat",
        &format!(
            "anon {}\nfile 0\nkernel 0\nshmem 0\ninactive_anon {}\nactive_anon {}\n\
             inactive_file 0\nactive_file 0\nslab_reclaimable 0\n",
            84 * MIB,
            4 * MIB,
            80 * MIB
        ),
    );
    tick(a, c, 1.0);
    on(a, c, "batch");
}

/// Opens the limits form and enters `text` in the field of `file`.
fn enter_limit(a: &mut App, c: &mut Collector, file: &str, text: &str) -> Vec<Effect> {
    send(a, c, ch('e'));
    let want = FieldKind::ALL
        .iter()
        .position(|k| k.file() == file)
        .unwrap();
    loop {
        let Mode::Limits(f) = &a.mode else {
            panic!("not the limits form: {:?}", a.mode)
        };
        if f.cursor == want {
            break;
        }
        let k = if f.cursor < want {
            KeyCode::Down
        } else {
            KeyCode::Up
        };
        send(a, c, key(k));
    }
    type_text(a, c, text);
    send(a, c, key(KeyCode::Enter))
}

fn memory_op(group: &str, file: MemoryFile, v: u64) -> Op {
    Op::Write(WriteOp {
        group: g(group),
        file: file.file().into(),
        contents: v.to_string(),
        kind: WriteKind::Memory(file, Limit::Value(v)),
        hier: cgtop::model::host::layout::HierId::V2,
        via: cgtop::model::write::Via::Direct,
        ino: None,
        freezer_ino: None,
    })
}

// ---------------------------------------------------------------------------
// Refused before the question.

#[test]
fn removing_a_group_with_a_process_is_refused_with_the_reason_and_the_fix() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab/dd");
    let fx = send(&mut a, &mut c, key(KeyCode::Delete));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let (title, lines) = message(&a);
    assert_eq!(title, "not written: the kernel would refuse it");
    assert_eq!(
        lines,
        [
            "rmdir /lab/dd",
            "",
            "not written: the kernel would refuse it (EBUSY): /lab/dd still has 1 process; \
             only an empty group can be removed",
            "",
            // the fix the kernel's EBUSY gets afterwards (model::write::explain)
            "Fix: remove the child groups first, and move its processes out or kill them",
        ]
    );
    assert_eq!(
        a.status.as_ref().map(|s| (s.level, s.text.as_str())),
        Some((Level::Error, "rmdir /lab/dd: not written"))
    );
}

#[test]
fn removing_a_group_with_a_child_is_refused() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "lab");
    let fx = send(&mut a, &mut c, key(KeyCode::Delete));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let (_, lines) = message(&a);
    assert_eq!(
        lines[2],
        "not written: the kernel would refuse it (EBUSY): /lab still has 1 child group; only \
         an empty group can be removed"
    );
}

#[test]
fn enabling_memory_where_processes_live_opens_the_leaf_fix_at_once() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('c'));
    let Mode::Controllers(d) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let memory = d.items.iter().position(|i| i.name == "memory").unwrap();
    for _ in 0..memory {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, ch(' '));
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    // nothing is written: the kernel would say EBUSY (admin guide 2-4-3)
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let Mode::LeafFix(l) = &a.mode else {
        panic!("not the leaf fix: {:?}", a.mode)
    };
    assert_eq!(
        (&l.group, l.changes.as_slice(), l.nr_procs),
        (&g("batch"), &[ControllerChange::enable("memory")][..], 2)
    );
    let status = a.status.as_ref().unwrap();
    assert_eq!(status.level, Level::Warn);
    assert!(
        status
            .text
            .contains("no internal process rule, admin guide 2-4-3"),
        "{}",
        status.text
    );
}

// ---------------------------------------------------------------------------
// The move picker.

/// The move picker opened on /batch's first process, `pid`.
fn picker_for(a: &mut App, c: &mut Collector, pid: u32, cmd: &str) {
    on(a, c, "batch");
    set_processes(a, vec![process(pid, "root", 0.0, 12, cmd)]);
    send(a, c, key(KeyCode::Tab));
    assert_eq!(a.pane, Pane::Processes);
    send(a, c, ch('m'));
}

#[test]
fn the_move_picker_leaves_out_groups_that_hand_controllers_down() {
    let (mut a, mut c, _d) = lab();
    picker_for(&mut a, &mut c, 4_190_201, "worker");
    type_text(&mut a, &mut c, "lab");
    let Mode::Move(m) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    // /lab hands io to /lab/dd: the kernel refuses processes there (EBUSY)
    assert_eq!(m.matches, [g("lab/dd")]);
    // the root is exempt from the rule, and offered
    let Mode::Move(m) = &a.mode else {
        unreachable!()
    };
    assert!(!m.refused.contains(&GroupPath::root()));
    assert!(m.refused.contains(&g("system.slice")));
}

#[test]
fn moving_pid_1_asks_for_the_targets_name() {
    let (mut a, mut c, _d) = lab();
    picker_for(&mut a, &mut c, 1, "/sbin/init");
    type_text(&mut a, &mut c, "lab/dd");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(writes(&fx).is_empty());
    let cf = confirm(&a);
    assert_eq!(cf.dangers, [Danger::MovesInit]);
    assert_eq!(
        cf.typed.as_ref().map(|(t, s)| (t.clone(), s.to_string())),
        Some((g("lab/dd"), String::new()))
    );
    // y does not do it (it is a letter of the name being typed); the name does
    assert!(writes(&send(&mut a, &mut c, ch('y'))).is_empty());
    assert!(writes(&send(&mut a, &mut c, key(KeyCode::Enter))).is_empty());
    send(&mut a, &mut c, key(KeyCode::Backspace));
    type_text(&mut a, &mut c, "dd");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(matches!(
        writes(&fx).as_slice(),
        [WriteRequest::Typed { name, .. }] if *name == g("lab/dd")
    ));
}

// ---------------------------------------------------------------------------
// Limits below use.

#[test]
fn memory_max_below_use_with_no_swap_says_who_dies_and_asks_for_the_name() {
    let (mut a, mut c, d) = lab();
    a.host.swap_total = Some(0);
    batch_uses_84_mib_of_anon(&mut a, &mut c, d.path());
    let fx = enter_limit(&mut a, &mut c, "memory.max", "10M");
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let op = memory_op("batch", MemoryFile::Max, 10 * MIB);
    let cf = confirm(&a).clone();
    assert_eq!(
        cf.request,
        WriteRequest::Typed {
            ops: vec![op.clone()],
            name: g("batch"),
        }
    );
    assert_eq!(
        cf.reasons,
        [Reason::Preflight(Warning::OomKill {
            limit: 10 * MIB,
            current: 84 * MIB,
            unreclaimable: Some(74 * MIB),
            procs: 2,
            oom_group: false,
        })]
    );
    assert_eq!(cf.dangers, [Danger::OomKill]);
    assert_eq!(
        cgtop::ui::dialogs::confirm_lines(&cf),
        [
            "• set memory.max of /batch to 10485760",
            "  it uses 84.0M now, over the new limit of 10.0M, and 74.0M of the 74.0M over it \
             cannot be reclaimed (anonymous and kernel memory, with no swap room for it): the OOM \
             killer kills its processes, biggest first, until it fits: up to 2 processes of its \
             subtree",
        ]
    );
    // the dialog says it, and asks for the name
    let shown = screen(&a, 120, 40);
    assert!(
        shown.contains("OOM-kills its processes. Type its name (batch) to go ahead"),
        "{shown}"
    );
    assert!(shown.contains("type batch:"), "{shown}");
    assert!(writes(&send(&mut a, &mut c, ch('y'))).is_empty());
    assert!(writes(&send(&mut a, &mut c, key(KeyCode::Enter))).is_empty());
    send(&mut a, &mut c, key(KeyCode::Backspace));
    type_text(&mut a, &mut c, "batch");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        writes(&fx),
        [&WriteRequest::Typed {
            ops: vec![op],
            name: g("batch"),
        }]
    );
}

#[test]
fn memory_max_below_use_with_swap_room_only_reclaims() {
    let (mut a, mut c, d) = lab();
    a.host.swap_total = Some(1 << 30);
    batch_uses_84_mib_of_anon(&mut a, &mut c, d.path());
    enter_limit(&mut a, &mut c, "memory.max", "10M");
    let cf = confirm(&a);
    assert_eq!(
        cf.reasons,
        [Reason::Preflight(Warning::Reclaim {
            limit: 10 * MIB,
            current: 84 * MIB,
        })]
    );
    assert_eq!((cf.typed.as_ref(), cf.dangers.as_slice()), (None, &[][..]));
    let fx = send(&mut a, &mut c, ch('y'));
    assert_eq!(
        writes(&fx),
        [&WriteRequest::Ops(vec![memory_op(
            "batch",
            MemoryFile::Max,
            10 * MIB
        )])]
    );
}

#[test]
fn memory_high_and_pids_max_below_use_warn_without_the_name() {
    let (mut a, mut c, d) = lab();
    a.host.swap_total = Some(0);
    batch_uses_84_mib_of_anon(&mut a, &mut c, d.path());
    enter_limit(&mut a, &mut c, "memory.high", "10M");
    let cf = confirm(&a);
    assert_eq!(
        cf.reasons,
        [Reason::Preflight(Warning::Throttle {
            limit: 10 * MIB,
            current: 84 * MIB,
        })]
    );
    assert!(cf.typed.is_none());
    send(&mut a, &mut c, key(KeyCode::Esc));

    // /batch has pids.current 2
    enter_limit(&mut a, &mut c, "pids.max", "1");
    let cf = confirm(&a);
    assert_eq!(
        cf.reasons,
        [Reason::Preflight(Warning::ForksFail {
            limit: 1,
            current: 2
        })]
    );
    assert!(cf.typed.is_none());
    assert!(cgtop::ui::dialogs::confirm_lines(cf)[1].contains("every fork and new thread"));
}

#[test]
fn a_tiny_cpu_max_warns_that_the_group_stalls() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    enter_limit(&mut a, &mut c, "cpu.max", "1%");
    let cf = confirm(&a);
    assert!(
        matches!(
            cf.reasons.as_slice(),
            [Reason::Preflight(Warning::CpuStarved {
                quota: 1000,
                period: 100_000,
                ..
            })]
        ),
        "{:?}",
        cf.reasons
    );
    assert!(cf.typed.is_none());
    // a sane quota goes straight to the writer
    send(&mut a, &mut c, key(KeyCode::Esc));
    let fx = enter_limit(&mut a, &mut c, "cpu.max", "50%");
    assert_eq!(writes(&fx).len(), 1, "{fx:?}");
}

#[test]
fn a_raw_memory_max_below_use_is_judged_like_the_form() {
    let (mut a, mut c, d) = lab();
    a.host.swap_total = Some(0);
    batch_uses_84_mib_of_anon(&mut a, &mut c, d.path());
    send(&mut a, &mut c, ch('E'));
    let Mode::Raw(r) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = r.files.iter().position(|(n, _)| n == "memory.max").unwrap();
    for _ in 0..at {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, key(KeyCode::Enter));
    type_text(&mut a, &mut c, "10485760");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let cf = confirm(&a);
    assert_eq!(cf.dangers, [Danger::OomKill]);
    assert_eq!(cf.typed.as_ref().map(|(t, _)| t.clone()), Some(g("batch")));
}

#[test]
fn an_undo_the_kernel_would_refuse_stays_on_the_stack() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    // undoing "-memory" on /batch, which has processes of its own now
    let back = cgtop::model::write::set_subtree_control(
        &g("batch"),
        &[ControllerChange::enable("memory")],
    );
    let entry = cgtop::model::write::history::Entry {
        steps: vec![cgtop::model::write::history::Step {
            did: cgtop::model::write::set_subtree_control(
                &g("batch"),
                &[ControllerChange::disable("memory")],
            ),
            back,
        }],
    };
    a.history.undo.push(entry.clone());
    let fx = send(&mut a, &mut c, ch('u'));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert!(matches!(a.mode, Mode::LeafFix(_)), "{:?}", a.mode);
    assert_eq!(a.history.undo, [entry]);
}

// ---------------------------------------------------------------------------
// A controller the parent does not hand down: the plan along the path.

/// The controllers dialog on `group`, the cursor on `name`.
fn controllers_on(a: &mut App, c: &mut Collector, group: &str, name: &str) {
    on(a, c, group);
    send(a, c, ch('c'));
    let Mode::Controllers(d) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let at = d.items.iter().position(|i| i.name == name).unwrap();
    for _ in 0..at {
        send(a, c, key(KeyCode::Down));
    }
}

/// +hugetlb for /lab/dd along the path: the root has it, neither the root
/// nor /lab hands it down (the hybrid host's cgroup2, where only hugetlb
/// is bound). Space does not mark it (it says why and which key asks for
/// the plan); p asks for it. /lab/dd holds a process, so the plan's last
/// step is EBUSY (no internal process rule, 2-4-3): the plan is not
/// offered, the box names that step, and nothing is written, not even
/// the root's step.
#[test]
fn a_plan_whose_last_step_the_kernel_refuses_is_not_offered() {
    let (mut a, mut c, _d) = lab();
    controllers_on(&mut a, &mut c, "lab/dd", "hugetlb");
    let fx = send(&mut a, &mut c, ch(' '));
    assert!(fx.is_empty(), "{fx:?}");
    let Mode::Controllers(d) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    assert!(d.changes().is_empty(), "{:?}", d.items);
    assert_eq!(
        a.status.as_ref().map(|s| s.text.as_str()),
        Some(
            "hugetlb: not available here: the parent does not enable it; p: the plan to enable \
             it along the path"
        )
    );
    let fx = send(&mut a, &mut c, ch('p'));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let (title, lines) = message(&a);
    assert_eq!(title, "enable along the path: not offered");
    assert_eq!(
        lines[0],
        "Step 3 of 3 would be refused, so no step is written:"
    );
    assert_eq!(
        lines[1],
        "• change the controllers /lab/dd hands to its children: +hugetlb"
    );
    assert!(lines[3].contains("(EBUSY)"), "{lines:?}");
    assert!(lines[3].contains("2-4-3"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("The leaf fix for /lab/dd")),
        "{lines:?}"
    );
    assert_eq!(a.status.as_ref().map(|s| s.level), Some(Level::Error));
    // any key closes it, and still nothing goes out
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert!(matches!(a.mode, Mode::Normal), "{:?}", a.mode);
}

/// The same plan for /lab/dd without a process: every step is judged
/// good, so it is offered. The root's step and /lab's are said to reach
/// beyond /lab/dd (the root: every group of the machine); Enter does not
/// go ahead, y does, with the three steps in order.
#[test]
fn a_plan_that_writes_the_root_says_so_and_goes_ahead_only_on_y() {
    let (mut a, mut c, d) = lab();
    put(d.path(), "lab/dd", "cgroup.procs", "");
    tick(&mut a, &mut c, 1.0);
    controllers_on(&mut a, &mut c, "lab/dd", "hugetlb");
    let fx = send(&mut a, &mut c, ch('p'));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let plus = || vec![ControllerChange::enable("hugetlb")];
    let step = |p: &str| {
        let g = if p.is_empty() {
            GroupPath::root()
        } else {
            g(p)
        };
        cgtop::model::write::set_subtree_control(&g, &plus())
    };
    let plan = vec![step(""), step("lab"), step("lab/dd")];
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(plan.clone()));
    assert_eq!(
        cf.reasons,
        [
            Reason::BeyondGroup {
                group: GroupPath::root(),
                selected: g("lab/dd")
            },
            Reason::BeyondGroup {
                group: g("lab"),
                selected: g("lab/dd")
            },
        ]
    );
    assert_eq!(a.scope(), cgtop::app::keymap::Scope::ConfirmWide);
    let text = cgtop::ui::dialogs::confirm_lines(confirm(&a)).join("\n");
    assert!(
        text.contains("/ is the root: every group of the machine in this hierarchy is affected"),
        "{text}"
    );
    // a bare Enter, out of habit, does nothing
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(matches!(a.mode, Mode::Confirm(_)), "{:?}", a.mode);
    assert_eq!(
        send(&mut a, &mut c, ch('y')),
        [Effect::Write(WriteRequest::Ops(plan))]
    );
}
