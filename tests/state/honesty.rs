//! Issue 12, item 5 (read-only and hybrid honesty): what cgtop offers and
//! says must be what it will do. Keys and screens through `app::update`
//! on the fixture lab tree (`common::lab_tree`), `-b` through
//! `batch::write_text`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, Level, Mode, ReadOnly};
use cgtop::source::collector::Collector;
use common::*;
use crossterm::event::KeyCode;
use std::time::Duration;

fn lab(read_only: Option<ReadOnly>) -> (App, Collector, tempfile::TempDir) {
    let dir = lab_tree();
    let (mut a, c) = app_on(dir.path(), pure_v2_mount(), 80, 24);
    a.read_only = read_only;
    (a, c, dir)
}

/// The last line of the screen: the main view's footer.
fn footer(a: &App) -> String {
    screen(a, 80, 24)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn read_only_footer_offers_no_write_key_and_says_why() {
    let (a, _c, _d) = lab(None);
    let writable = footer(&a);
    assert!(writable.contains("K kill"), "{writable}");

    for (why, words) in [
        (ReadOnly::Flag, "read-only (--read-only): writes off"),
        (
            ReadOnly::NoPermission,
            "read-only (no permission): writes off",
        ),
    ] {
        let (a, _c, _d) = lab(Some(why));
        let shown = footer(&a);
        for off in ["c ctl", "e limits", "f freeze", "K kill", "u undo"] {
            assert!(!shown.contains(off), "{off} offered in {shown}");
        }
        assert!(shown.contains("? help"), "{shown}");
        assert!(shown.contains(words), "{shown}");
    }
}

#[test]
fn read_only_help_says_which_keys_are_off() {
    let (mut a, mut c, _d) = lab(Some(ReadOnly::Flag));
    send(&mut a, &mut c, ch('?'));
    let shown = screen(&a, 80, 24);
    let line = shown
        .lines()
        .find(|l| l.contains("Read-only (--read-only):"))
        .unwrap_or_else(|| panic!("no read-only line in the help:\n{shown}"));
    for k in ["c", "e", "f", "K", "n", "u"] {
        assert!(
            line.split_whitespace().any(|w| w == k),
            "{k} missing from {line}"
        );
    }
    // writable: no such line
    let (mut a, mut c, _d) = lab(None);
    send(&mut a, &mut c, ch('?'));
    assert!(!screen(&a, 80, 24).contains("Read-only"));
}

#[test]
fn batch_header_says_hybrid() {
    let dir = lab_tree();
    let mut c = collector(dir.path());
    let r = refresh(&mut c, 1.0);
    let first = |m| {
        let mut out = Vec::new();
        cgtop::batch::write_text(&mut out, &r, Duration::from_secs(1), &m, &host(), 0).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let hybrid = first(hybrid_mount());
    assert!(
        hybrid.contains(
            "cgroup2 /sys/fs/cgroup/unified (hybrid, v1 holds cpu,cpuacct,cpuset,memory,devices,freezer,blkio,pids; the rest on v2)"
        ),
        "{hybrid}"
    );
    let pure = first(pure_v2_mount());
    assert!(pure.contains("cgroup2 /sys/fs/cgroup (pure v2)"), "{pure}");
}

#[test]
fn the_new_group_dialog_opens_without_an_error() {
    let (mut a, mut c, _d) = lab(None);
    select(&mut a, &mut c, "lab");
    send(&mut a, &mut c, ch('n'));
    assert!(matches!(a.mode, Mode::NewGroup(_)), "{:?}", a.mode);
    let shown = screen(&a, 80, 24);
    assert!(!shown.contains("nothing was typed"), "{shown}");
    assert!(shown.contains("Type a new directory name"), "{shown}");
}

/// An error on Enter is about the text as it was: the next edit clears
/// it rather than leave a red line under a now valid value.
#[test]
fn an_error_goes_once_its_cause_is_edited_away() {
    let (mut a, mut c, _d) = lab(None);
    select(&mut a, &mut c, "lab");
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('E'));
    assert!(matches!(a.mode, Mode::Raw(_)), "{:?}", a.mode);
    // Enter picks the first file; the line starts empty: Enter refuses
    // and says so
    send(&mut a, &mut c, key(KeyCode::Enter));
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.status.as_ref().map(|s| s.level), Some(Level::Error));
    type_text(&mut a, &mut c, "1");
    assert_eq!(a.status, None, "the error outlived its cause");
}

/// cgroup.kill's SIGKILL is not delivered to PID 1: a kill of the group
/// holding init does not count it among the dead, and says it stays.
#[test]
fn a_kill_does_not_count_init_among_the_dead() {
    use cgtop::app::dialog::confirm::Reason;
    let (mut a, mut c, _d) = lab(None);
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 1.0);
    a.protected.init = Some(cgtop::model::GroupPath::new("batch"));
    send(&mut a, &mut c, ch('K'));
    let Mode::Confirm(cf) = &a.mode else {
        panic!("{:?}", a.mode)
    };
    let said: Vec<&Reason> = cf
        .reasons
        .iter()
        .filter(|r| matches!(r, Reason::WillDie { .. } | Reason::InitStays))
        .collect();
    assert_eq!(
        said,
        [
            &Reason::WillDie {
                procs: 1,
                groups: 1
            },
            &Reason::InitStays
        ]
    );
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("PID 1 (init) is here"), "{shown}");
}

/// A move can be taken back (`u` moves the process back to where it
/// was): its confirmation must not say it cannot; a kill's still does.
#[test]
fn a_move_is_not_titled_cannot_be_undone() {
    let (mut a, mut c, _d) = lab(None);
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 1.0);
    set_processes(
        &mut a,
        vec![process(4_190_201, "root", 0.0, 12, "worker --queue a")],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "lab/dd");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(matches!(a.mode, Mode::Confirm(_)), "{:?}", a.mode);
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("confirm"), "{shown}");
    assert!(!shown.contains("cannot be undone"), "{shown}");

    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('K'));
    assert!(screen(&a, 80, 24).contains("cannot be undone"));
}
