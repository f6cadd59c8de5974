//! A write to a systemd unit made through systemd (issue 10 item 3): the
//! confirmation offers it beside the direct write (s), only for a unit
//! and a change systemd has a property for, only where systemd runs; the
//! key sends the same write as a value made through systemd
//! (`Via::Systemd`); its undo goes through systemd too; read-only refuses.
//! On `common::lab_tree`, whose
//! `system.slice/system-postgresql.slice/postgresql@15-main.service`
//! (PG_SERVICE) is a unit with cpu.max "50000 100000", memory.max "max"
//! and memory.current 55017472:
//!
//! ```text
//! /
//! ├─ batch, lab, lab/dd        plain groups: no unit, no offer
//! └─ system.slice
//!    └─ system-postgresql.slice
//!       └─ postgresql@15-main.service   a unit: the offer
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::dialog::confirm::Reason;
use cgtop::app::writes::WriteRequest;
use cgtop::app::{Mode, Msg, ReadOnly};
use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::systemd::Presence;
use cgtop::model::write::{self, Via};
use cgtop::model::{Op, WriteOutcome};
use cgtop::source::actionlog::format_line;
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;

const UNIT: &str = "postgresql@15-main.service";

fn memory_max(limit: Limit) -> Op {
    write::set_memory_limit(&g(PG_SERVICE), MemoryFile::Max, limit)
}

fn via_systemd(op: Op) -> Op {
    op.through_systemd(None).expect("systemd has the property")
}

fn args(op: &Op) -> Vec<String> {
    op.systemctl_args().expect("a write through systemd")
}

/// The limits form on the unit, `text` entered into memory.max: the
/// confirmation is open.
fn ask_memory_max(
    a: &mut cgtop::app::App,
    c: &mut cgtop::source::collector::Collector,
    text: &str,
) {
    on(a, c, PG_SERVICE);
    send(a, c, ch('e'));
    assert!(enter_limit(a, c, "memory.max", text).is_empty());
    confirm(a);
}

#[test]
fn a_unit_limit_offers_systemd_and_s_sends_the_write_through_systemd() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    ask_memory_max(&mut a, &mut c, "512M");
    let direct = memory_max(Limit::Value(536_870_912));
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![direct.clone()]));
    assert_eq!(
        cf.reasons,
        [
            // the direct write's warning stays
            Reason::SystemdMayRevert { unit: UNIT.into() },
            Reason::SystemdWay {
                command: format!("systemctl set-property --runtime {UNIT} MemoryMax=536870912")
            },
            Reason::SystemdOffer(Presence::Ready),
        ]
    );
    // s: the same write, made through systemd, a value
    let fx = send(&mut a, &mut c, ch('s'));
    let sent = via_systemd(direct.clone());
    assert_eq!(writes(&fx), [&WriteRequest::Ops(vec![sent.clone()])]);
    assert_eq!(a.mode, Mode::Normal);
    let Op::Write(w) = &sent else { panic!() };
    assert_eq!(w.via, Via::Systemd { device: None });
    // what runs: exactly the command shown, without "systemctl"
    assert_eq!(
        args(&sent),
        ["set-property", "--runtime", UNIT, "MemoryMax=536870912"]
    );

    // y: the direct write, as before
    ask_memory_max(&mut a, &mut c, "512M");
    let fx = send(&mut a, &mut c, ch('y'));
    assert_eq!(writes(&fx), [&WriteRequest::Ops(vec![direct])]);
}

#[test]
fn io_max_through_systemd_names_the_device_node() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    on(&mut a, &mut c, PG_SERVICE);
    send(&mut a, &mut c, ch('e'));
    assert!(enter_limit(&mut a, &mut c, "io.max", "wbps=2M").is_empty());
    let fx = send(&mut a, &mut c, ch('S'));
    let [WriteRequest::Ops(ops)] = writes(&fx)[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(
        args(&ops[0]),
        [
            "set-property",
            "--runtime",
            UNIT,
            "IOWriteBandwidthMax=/dev/vda 2097152"
        ]
    );
}

#[test]
fn the_offer_is_only_for_a_unit_and_a_property_systemd_has() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    // not a unit: a limit is written at once, no question
    on(&mut a, &mut c, "batch");
    send(&mut a, &mut c, ch('e'));
    let fx = enter_limit(&mut a, &mut c, "pids.max", "50");
    assert_eq!(
        writes(&fx),
        [&WriteRequest::Ops(vec![write::set_pids_max(
            &g("batch"),
            Limit::Value(50)
        )])]
    );
    send(&mut a, &mut c, key(KeyCode::Esc));

    // a unit, but cpu.max.burst has no systemd property: no offer, s
    // writes nothing and the question stays
    on(&mut a, &mut c, PG_SERVICE);
    send(&mut a, &mut c, ch('e'));
    assert!(enter_limit(&mut a, &mut c, "cpu.max.burst", "1000").is_empty());
    let cf = confirm(&a);
    assert!(
        !cf.reasons
            .iter()
            .any(|r| matches!(r, Reason::SystemdOffer(_) | Reason::SystemdWay { .. })),
        "{:?}",
        cf.reasons
    );
    assert_eq!(cf.systemd, None);
    assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
    confirm(&a);
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, key(KeyCode::Esc));

    // freeze: systemctl freeze is shown, but it is no unit property that
    // a daemon-reload re-applies: not offered
    send(&mut a, &mut c, ch('f'));
    let cf = confirm(&a);
    assert_eq!(
        cf.reasons.last(),
        Some(&Reason::SystemdWay {
            command: format!("systemctl freeze {UNIT}")
        })
    );
    assert_eq!(cf.systemd, None);
    assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
}

#[test]
fn without_systemd_the_offer_says_why_and_s_writes_nothing() {
    for presence in [Presence::NotBooted, Presence::NoSystemctl] {
        let (mut a, mut c, _d) = lab();
        a.systemd = presence;
        ask_memory_max(&mut a, &mut c, "512M");
        let cf = confirm(&a);
        assert_eq!(cf.reasons.last(), Some(&Reason::SystemdOffer(presence)));
        assert_eq!(cf.systemd, None);
        assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
        // still asking; y writes directly
        confirm(&a);
        let fx = send(&mut a, &mut c, ch('y'));
        assert_eq!(
            writes(&fx),
            [&WriteRequest::Ops(vec![memory_max(Limit::Value(
                536_870_912
            ))])]
        );
    }
}

/// `cgtop --root D` on a delegated subtree where the user made a group
/// with a unit's name and a unit's place *below D*: the view's path is not
/// the group's place in systemd's tree, so the confirmation shows no
/// systemctl command, offers no `s`, and says why (`run_tui` sets
/// `Presence::BelowRoot` for such a view).
#[test]
fn a_view_below_the_hierarchys_root_offers_no_systemd_path_and_says_why() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::BelowRoot;
    ask_memory_max(&mut a, &mut c, "512M");
    let cf = confirm(&a);
    assert!(
        !cf.reasons
            .iter()
            .any(|r| matches!(r, Reason::SystemdWay { .. })),
        "{:?}",
        cf.reasons
    );
    assert_eq!(
        cf.reasons.last(),
        Some(&Reason::SystemdOffer(Presence::BelowRoot))
    );
    assert_eq!(cf.systemd, None);
    let shown = screen(&a, 120, 40);
    assert!(shown.contains("not offered through systemd"), "{shown}");
    assert!(!shown.contains("systemctl"), "{shown}");
    assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
    let fx = send(&mut a, &mut c, ch('y'));
    assert_eq!(
        writes(&fx),
        [&WriteRequest::Ops(vec![memory_max(Limit::Value(
            536_870_912
        ))])]
    );
    // a freeze (no property; `systemctl freeze UNIT` elsewhere): no
    // command shown, and the same why
    on(&mut a, &mut c, PG_SERVICE);
    send(&mut a, &mut c, ch('f'));
    let cf = confirm(&a);
    assert_eq!(
        cf.reasons.last(),
        Some(&Reason::SystemdOffer(Presence::BelowRoot)),
        "{:?}",
        cf.reasons
    );
    assert!(!screen(&a, 120, 40).contains("systemctl"));
}

#[test]
fn read_only_refuses_the_systemd_path() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    ask_memory_max(&mut a, &mut c, "512M");
    assert!(confirm(&a).systemd.is_some());
    // writing went off while the question was shown (as after `T`)
    a.read_only = Some(ReadOnly::Flag);
    assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
    confirm(&a);
    // on again: the same key sends it
    a.read_only = None;
    let fx = send(&mut a, &mut c, ch('s'));
    assert_eq!(
        writes(&fx),
        [&WriteRequest::Ops(vec![via_systemd(memory_max(
            Limit::Value(536_870_912)
        ))])]
    );
}

#[test]
fn the_undo_of_a_change_made_through_systemd_goes_through_systemd() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    ask_memory_max(&mut a, &mut c, "512M");
    let fx = send(&mut a, &mut c, ch('s'));
    let sent = via_systemd(memory_max(Limit::Value(536_870_912)));
    assert_eq!(writes(&fx), [&WriteRequest::Ops(vec![sent.clone()])]);
    // the writer's answer: the file held "max", systemd wrote the value
    let done = WriteOutcome::done(
        sent.clone(),
        Some("max\n".into()),
        Some("536870912\n".into()),
    );
    // the log line says how it was made
    assert_eq!(
        format_line(1_700_000_000, &done),
        format!("2023-11-14T22:13:20Z /{PG_SERVICE} memory.max max to 536870912 via systemd ok")
    );
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![done],
            unix_secs: 1_700_000_000,
        },
    );
    let status = a.status.as_ref().unwrap().text.clone();
    assert!(status.contains("via systemd"), "{status}");

    // u: through systemd, with the old value; the question says so and
    // does not warn that systemd may revert it
    send(&mut a, &mut c, ch('u'));
    let back = via_systemd(memory_max(Limit::Max));
    let cf = confirm(&a);
    assert_eq!(cf.request, WriteRequest::Ops(vec![back.clone()]));
    assert!(cf.reasons.contains(&Reason::ViaSystemd), "{:?}", cf.reasons);
    assert!(
        !cf.reasons
            .iter()
            .any(|r| matches!(r, Reason::SystemdMayRevert { .. } | Reason::SystemdOffer(_))),
        "{:?}",
        cf.reasons
    );
    let fx = send(&mut a, &mut c, ch('y'));
    assert_eq!(writes(&fx), [&WriteRequest::Ops(vec![back.clone()])]);
    assert_eq!(
        args(&back),
        ["set-property", "--runtime", UNIT, "MemoryMax=infinity"]
    );
}

#[test]
fn the_undo_of_a_cpu_quota_resets_it_with_an_empty_cpuquota() {
    let unit = g(PG_SERVICE);
    let half = CpuMax {
        quota: Some(50_000),
        period: 100_000,
    };
    let op = via_systemd(write::set_cpu_max(&unit, half));
    assert_eq!(
        args(&op),
        [
            "set-property",
            "--runtime",
            UNIT,
            "CPUQuota=50%",
            "CPUQuotaPeriodSec=100ms"
        ]
    );
    let back = op.undo(Some("max 100000\n")).unwrap();
    assert!(back.via_systemd());
    assert_eq!(
        args(&back),
        [
            "set-property",
            "--runtime",
            UNIT,
            "CPUQuota=",
            "CPUQuotaPeriodSec=100ms"
        ]
    );
    // a direct write's undo stays direct
    assert!(!write::set_cpu_max(&unit, half)
        .undo(Some("max 100000\n"))
        .unwrap()
        .via_systemd());
}

#[test]
fn a_typed_confirmation_takes_ctrl_s_once_the_name_matches() {
    let (mut a, mut c, _d) = lab();
    a.systemd = Presence::Ready;
    // far below memory.current (55 MB), no swap: an OOM kill, so the
    // unit's name must be typed
    a.host.swap_total = Some(0);
    ask_memory_max(&mut a, &mut c, "1M");
    let cf = confirm(&a);
    assert!(cf.typed.is_some(), "{cf:?}");
    let Some(WriteRequest::Typed { ops, .. }) = &cf.systemd else {
        panic!("{:?}", cf.systemd)
    };
    assert!(ops.iter().all(Op::via_systemd));
    // s is typed into the name
    assert!(writes(&send(&mut a, &mut c, ch('s'))).is_empty());
    assert!(writes(&send(&mut a, &mut c, ctrl('s'))).is_empty());
    while !confirm(&a).typed.as_ref().unwrap().1.is_empty() {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    type_text(&mut a, &mut c, UNIT);
    let fx = send(&mut a, &mut c, ctrl('s'));
    let [WriteRequest::Typed { ops, name }] = writes(&fx)[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(name, &g(PG_SERVICE));
    assert_eq!(ops, &[via_systemd(memory_max(Limit::Value(1_048_576)))]);
}

#[test]
fn a_value_systemd_rounded_is_said_as_systemds() {
    let unit = g(PG_SERVICE);
    let third = CpuMax {
        quota: Some(33_333),
        period: 100_000,
    };
    let op = via_systemd(write::set_cpu_max(&unit, third));
    assert_eq!(args(&op)[3], "CPUQuota=33.33%");
    // systemd writes 33.33 % of the period: 33330
    let o = WriteOutcome::done(
        op,
        Some("max 100000\n".into()),
        Some("33330 100000\n".into()),
    );
    assert_eq!(
        o.stored_differs().as_deref(),
        Some(
            "after systemctl cpu.max holds 33330 100000, not 33333 100000 (systemd takes \
             CPUQuota= in hundredths of a percent)"
        )
    );
    assert!(o.summary().ends_with("via systemd; after systemctl cpu.max holds 33330 100000, not 33333 100000 (systemd takes CPUQuota= in hundredths of a percent)"), "{}", o.summary());
}
