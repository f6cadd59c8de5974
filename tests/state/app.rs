//! State transitions: messages fed to `app::update`, state and effects
//! asserted, no terminal. The trees come from the fixtures through the
//! real `Collector`, at fixed times; the sketches show what the tree pane
//! holds at each step (`>` marks the cursor, `+` a collapsed branch).
//!
//! The pure-v2-systemd tree, expanded, in name order (what every test
//! below starts from, since the first refresh has no rates yet and equal
//! figures sort by name):
//!
//! ```text
//!  0 /
//!  1 ├─ dev-hugepages.mount
//!  2 ├─ dev-mqueue.mount
//!  3 ├─ init.scope
//!  4 ├─ proc-sys-fs-binfmt_misc.mount
//!  5 ├─ sys-fs-fuse-connections.mount
//!  6 ├─ sys-kernel-config.mount
//!  7 ├─ sys-kernel-tracing.mount
//!  8 ├─ system.slice
//!  9 │  ├─ dbus.service
//! 10 │  ├─ rivm-cmd.service
//! 11 │  ├─ rivm-session.service
//! 12 │  ├─ system-getty.slice
//! 13 │  │  └─ getty@tty1.service
//! 14 │  ├─ system-modprobe.slice
//! 15 │  ├─ system-postgresql.slice
//! 16 │  │  └─ postgresql@15-main.service
//! 17 │  ├─ system-serial\x2dgetty.slice
//! 18 │  │  └─ serial-getty@ttyS0.service
//! 19 │  ├─ systemd-journald.service
//! 20 │  ├─ systemd-logind.service
//! 21 │  ├─ systemd-timesyncd.service
//! 22 │  └─ systemd-udevd.service
//! 23 │     └─ udev
//! 24 └─ user.slice
//! 25    └─ user-0.slice
//! 26       ├─ session-1.scope
//! 27       └─ user@0.service
//! 28          ├─ app.slice
//! 29          │  └─ dbus.socket
//! 30          └─ init.scope
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::keymap::{self, Action, Scope};
use cgtop::app::{DetailPage, Effect, Level, Mode, Pane, SortKey};
use cgtop::model::GroupPath;
use cgtop::source::collector::Command;
use common::*;
use crossterm::event::{KeyCode, KeyEvent};
use std::time::Duration;

fn systemd() -> (cgtop::app::App, cgtop::source::collector::Collector) {
    app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24)
}

fn inspect(path: &str) -> Effect {
    Effect::Collector(Command::Inspect(Some(GroupPath::new(path))))
}

#[test]
fn first_refresh_shows_the_whole_tree_and_asks_for_the_root() {
    let mut a = cgtop::app::App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    let mut c = collector(&fixture("pure-v2-systemd"));
    let fx = tick(&mut a, &mut c, 0.0);
    assert_eq!(
        fx,
        [inspect("")],
        "the first refresh asks for the selection"
    );
    assert_eq!(a.rows.len(), 31);
    assert_eq!((a.cursor, selected(&a).as_str()), (0, "/"));
    // a second refresh with the same selection asks nothing
    assert!(tick(&mut a, &mut c, 1.0).is_empty());
    // the inspection of the root came with that refresh
    assert_eq!(
        a.inspection.as_ref().map(|f| f.path.clone()),
        Some(GroupPath::root())
    );
}

#[test]
fn cursor_moves_with_j_k_page_home_end() {
    let (mut a, mut c) = systemd();
    let page = a.tree_height;
    assert_eq!(page, cgtop::ui::tree_rows_for(80, 24).split);
    assert!(page > 1 && page < 31, "80x24 shows part of the tree");

    // k on the first row: nothing moves, nothing is asked
    assert!(send(&mut a, &mut c, ch('k')).is_empty());
    assert_eq!(a.cursor, 0);

    // j, Down: one row each, each asks for the new group's detail
    assert_eq!(
        send(&mut a, &mut c, ch('j')),
        [inspect("dev-hugepages.mount")]
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Down)),
        [inspect("dev-mqueue.mount")]
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Up)),
        [inspect("dev-hugepages.mount")]
    );

    // PgDn: a page further, and the view scrolls to keep the cursor shown
    send(&mut a, &mut c, key(KeyCode::PageDown));
    assert_eq!(a.cursor, 1 + page);
    assert!(a.scroll <= a.cursor && a.cursor < a.scroll + page);
    send(&mut a, &mut c, ctrl('b'));
    assert_eq!(a.cursor, 1);

    // End / G: the last row; Home / g: the first
    send(&mut a, &mut c, key(KeyCode::End));
    assert_eq!(
        (a.cursor, selected(&a).as_str()),
        (30, "/user.slice/user-0.slice/user@0.service/init.scope")
    );
    assert_eq!(a.scroll, 31 - page, "the last page is shown in full");
    // PgDn on the last row stays there, and asks nothing
    assert!(send(&mut a, &mut c, key(KeyCode::PageDown)).is_empty());
    send(&mut a, &mut c, ch('g'));
    assert_eq!((a.cursor, a.scroll), (0, 0));
    send(&mut a, &mut c, ch('G'));
    assert_eq!(a.cursor, 30);
    send(&mut a, &mut c, key(KeyCode::Home));
    assert_eq!(selected(&a), "/");
}

#[test]
fn left_collapses_then_goes_to_the_parent_right_expands() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "system.slice/system-getty.slice");
    // Left on an open branch folds it:
    //   ├─ system.slice
    //   │  ├─ rivm-session.service
    //   │  ├─>system-getty.slice +
    //   │  ├─ system-modprobe.slice
    assert!(send(&mut a, &mut c, key(KeyCode::Left)).is_empty());
    assert_eq!(a.rows.len(), 30);
    assert_eq!(
        &outline(&a)[11..14],
        [
            "    rivm-session.service",
            "    system-getty.slice +",
            "    system-modprobe.slice"
        ]
    );
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
    // Left on a folded branch goes to its parent
    assert_eq!(send(&mut a, &mut c, ch('h')), [inspect("system.slice")]);
    assert_eq!(a.cursor, 8);
    // Right unfolds the branch under the cursor (system.slice is open:
    // nothing changes); on the folded one it opens again
    send(&mut a, &mut c, key(KeyCode::Right));
    assert_eq!(a.rows.len(), 30);
    select(&mut a, &mut c, "system.slice/system-getty.slice");
    send(&mut a, &mut c, ch('l'));
    assert_eq!(a.rows.len(), 31);

    // Left on a leaf goes to its parent:
    //   │  ├─ system-getty.slice        <- here
    //   │  │  └─>getty@tty1.service
    select(
        &mut a,
        &mut c,
        "system.slice/system-getty.slice/getty@tty1.service",
    );
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Left)),
        [inspect("system.slice/system-getty.slice")]
    );
    assert_eq!(a.rows.len(), 31, "going up folds nothing");

    // Left on the top row (no parent) does nothing
    send(&mut a, &mut c, key(KeyCode::Home));
    send(&mut a, &mut c, key(KeyCode::Left));
    assert_eq!(a.rows.len(), 1, "the root is a branch: it folds");
    assert!(send(&mut a, &mut c, key(KeyCode::Left)).is_empty());
    assert_eq!((a.cursor, a.rows.len()), (0, 1));
    send(&mut a, &mut c, ch('+'));
    assert_eq!(a.rows.len(), 31);
}

#[test]
fn subtree_folds_with_shift_arrows_and_braces() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "user.slice");
    // S-Left folds user.slice and every branch below it:
    //   └─>user.slice +
    send(&mut a, &mut c, shift(KeyCode::Left));
    assert_eq!(a.rows.len(), 25);
    assert_eq!(
        outline(&a).last().map(String::as_str),
        Some("  user.slice +")
    );
    // Right opens only user.slice; its children stay folded:
    //   └─>user.slice
    //      └─ user-0.slice +
    send(&mut a, &mut c, key(KeyCode::Right));
    assert_eq!(&outline(&a)[24..], ["  user.slice", "    user-0.slice +"]);
    // } opens the whole subtree again
    send(&mut a, &mut c, ch('}'));
    assert_eq!(a.rows.len(), 31);
    // { is S-Left, S-Right is }
    send(&mut a, &mut c, ch('{'));
    assert_eq!(a.rows.len(), 25);
    send(&mut a, &mut c, shift(KeyCode::Right));
    assert_eq!(
        &outline(&a)[24..],
        [
            "  user.slice",
            "    user-0.slice",
            "      session-1.scope",
            "      user@0.service",
            "        app.slice",
            "          dbus.socket",
            "        init.scope",
        ]
    );
    assert_eq!(selected(&a), "/user.slice", "folding keeps the selection");
}

#[test]
fn star_folds_everything_below_the_top_and_opens_it_again() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "user.slice/user-0.slice/session-1.scope");
    // * with nothing folded: every branch but the top folds:
    //   /
    //   ├─ dev-hugepages.mount ... sys-kernel-tracing.mount
    //   ├─ system.slice +
    //   └─ user.slice +
    // the selected group is hidden, so its nearest shown ancestor is
    // under the cursor and becomes the selection, without a message: a
    // folded group is not gone
    send(&mut a, &mut c, ch('*'));
    assert_eq!(a.rows.len(), 10);
    assert_eq!(&outline(&a)[8..], ["  system.slice +", "  user.slice +"]);
    assert_eq!((a.cursor, selected(&a).as_str()), (9, "/user.slice"));
    assert!(a.status.is_none());
    // * again: everything opens
    send(&mut a, &mut c, ch('*'));
    assert_eq!(a.rows.len(), 31);
}

#[test]
fn sorting_keeps_siblings_under_their_parent() {
    let (mut a, mut c) = systemd();
    assert_eq!((a.sort, a.sort_desc), (SortKey::Cpu, true));
    // > : CPU -> MEM, biggest first
    send(&mut a, &mut c, ch('>'));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Memory, true));
    let o = outline(&a);
    // system.slice (104M) before user.slice (5.5M) before init.scope
    // (3.2M) and the mounts; inside system.slice, postgresql's slice
    // (52.5M) first, and its service right under it:
    //   /
    //   ├─ system.slice
    //   │  ├─ system-postgresql.slice
    //   │  │  └─ postgresql@15-main.service
    //   │  ├─ systemd-udevd.service
    //   │  │  └─ udev
    //   ...
    //   ├─ user.slice
    assert_eq!(
        &o[..6],
        [
            "/",
            "  system.slice",
            "    system-postgresql.slice",
            "      postgresql@15-main.service",
            "    systemd-udevd.service",
            "      udev",
        ]
    );
    assert_children_follow_parents(&a);
    // r reverses: smallest first, still in the tree's shape
    send(&mut a, &mut c, ch('r'));
    assert!(!a.sort_desc);
    assert_children_follow_parents(&a);
    assert_eq!(
        outline(&a).last().map(String::as_str),
        Some("      postgresql@15-main.service")
    );
    // < walks back to CPU; > past PIDS wraps to GROUP, which is A-Z
    send(&mut a, &mut c, ch('<'));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Cpu, true));
    for _ in 0..5 {
        send(&mut a, &mut c, ch('>'));
    }
    assert_eq!((a.sort, a.sort_desc), (SortKey::Name, false));
    assert_eq!(outline(&a)[1], "  dev-hugepages.mount");
    send(&mut a, &mut c, ch('r'));
    assert_eq!(outline(&a)[1], "  user.slice");
    assert_children_follow_parents(&a);
}

/// Every row's parent is the nearest row above it that is one level
/// shallower: a subtree is never split by the sort.
fn assert_children_follow_parents(a: &cgtop::app::App) {
    let paths = visible_paths(a);
    for (i, p) in paths.iter().enumerate().skip(1) {
        let parent = p.parent().expect("below the top");
        let above = paths[..i]
            .iter()
            .rev()
            .find(|q| q.depth() < p.depth())
            .expect("a row above");
        assert_eq!(*above, parent, "{p} is not under its parent");
    }
}

#[test]
fn filter_keeps_ancestors_and_esc_clears_it() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "user.slice");
    send(&mut a, &mut c, ch('/'));
    assert_eq!(a.mode, Mode::Filter);
    // typing filters at once; q is a letter here, not quit
    let fx = type_text(&mut a, &mut c, "GETTY");
    assert!(!fx.contains(&Effect::Quit));
    //   /
    //   └─ system.slice
    //      ├─ system-getty.slice            matches
    //      │  └─ getty@tty1.service         matches
    //      └─ system-serial\x2dgetty.slice  matches
    //         └─ serial-getty@ttyS0.service matches
    assert_eq!(
        outline(&a),
        [
            "/",
            "  system.slice",
            "    system-getty.slice",
            "      getty@tty1.service",
            "    system-serial\\x2dgetty.slice",
            "      serial-getty@ttyS0.service",
        ]
    );
    let matched: Vec<bool> = a.rows.iter().map(|r| r.matched).collect();
    assert_eq!(matched, [false, false, true, true, true, true]);
    // user.slice is filtered out: the cursor stays on the nearest row
    // left, without claiming that anything vanished
    assert!(a.status.is_none());
    // Backspace edits; Enter keeps the filter and leaves the mode
    send(&mut a, &mut c, key(KeyCode::Backspace));
    assert_eq!(a.filter, "GETT");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!((a.mode.clone(), a.filter.as_str()), (Mode::Normal, "GETT"));
    assert_eq!(a.rows.len(), 6);
    // Esc in the main view clears it
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!((a.filter.as_str(), a.rows.len()), ("", 31));
    // Esc while typing cancels and clears too
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "journal");
    assert_eq!(a.rows.len(), 3);
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(
        (a.mode.clone(), a.filter.as_str(), a.rows.len()),
        (Mode::Normal, "", 31)
    );
    // a filter that matches nothing leaves no rows and no selection move
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "nothing-like-this");
    assert!(a.rows.is_empty());
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.rows.len(), 31);
}

#[test]
fn filter_shows_matches_inside_folded_branches() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('*'));
    assert_eq!(a.rows.len(), 10);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "dbus");
    //   /
    //   ├─ system.slice             (folded, opened for the filter)
    //   │  └─ dbus.service
    //   └─ user.slice               (folded, opened for the filter)
    //      └─ user-0.slice
    //         └─ user@0.service
    //            └─ app.slice
    //               └─ dbus.socket
    assert_eq!(
        outline(&a),
        [
            "/",
            "  system.slice",
            "    dbus.service",
            "  user.slice",
            "    user-0.slice",
            "      user@0.service",
            "        app.slice",
            "          dbus.socket",
        ]
    );
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.rows.len(), 10, "the folds come back with the filter gone");
}

#[test]
fn selection_follows_its_group_when_the_order_changes() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    // t = 1 s: journald used 0.5 s of CPU, logind 0.2 s
    burn_cpu(root, "system.slice/systemd-journald.service", 500_000);
    burn_cpu(root, "system.slice/systemd-logind.service", 200_000);
    tick(&mut a, &mut c, 1.0);
    //   /                           70 %
    //   ├─ system.slice             70 %
    //   │  ├─ systemd-journald     50 %
    //   │  ├─ systemd-logind       20 %
    let o = outline(&a);
    assert_eq!(
        &o[1..4],
        [
            "  system.slice",
            "    systemd-journald.service",
            "    systemd-logind.service"
        ]
    );
    select(&mut a, &mut c, "system.slice/systemd-logind.service");
    assert_eq!(a.cursor, 3);
    // t = 2 s: now logind is the busier one and moves up a row; the
    // cursor moves with it, and no new inspection is asked for
    burn_cpu(root, "system.slice/systemd-journald.service", 100_000);
    burn_cpu(root, "system.slice/systemd-logind.service", 300_000);
    let fx = tick(&mut a, &mut c, 2.0);
    //   ├─ system.slice
    //   │  ├─>systemd-logind       30 %
    //   │  ├─ systemd-journald     10 %
    assert_eq!(
        &outline(&a)[2..4],
        ["    systemd-logind.service", "    systemd-journald.service"]
    );
    assert_eq!(
        (a.cursor, selected(&a).as_str()),
        (2, "/system.slice/systemd-logind.service")
    );
    assert!(fx.is_empty(), "same group: no new inspection");
    let (_, rates) = a.selected_data().expect("selected row");
    assert_eq!(rates.cpu_pct.map(f64::round), Some(30.0));
}

#[test]
fn a_vanished_selection_moves_to_its_parent_and_says_so() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    select(
        &mut a,
        &mut c,
        "system.slice/system-postgresql.slice/postgresql@15-main.service",
    );
    tick(&mut a, &mut c, 1.0);
    assert!(a.inspection.is_some());
    //   │  ├─ system-postgresql.slice
    //   │  │  └─>postgresql@15-main.service     rmdir
    remove_group(
        root,
        "system.slice/system-postgresql.slice/postgresql@15-main.service",
    );
    let fx = tick(&mut a, &mut c, 2.0);
    //   │  ├─>system-postgresql.slice           the cursor is here now
    //   │  ├─ system-serial\x2dgetty.slice
    assert_eq!(a.rows.len(), 30);
    assert_eq!(selected(&a), "/system.slice/system-postgresql.slice");
    assert_eq!(a.cursor, 15);
    assert_eq!(fx, [inspect("system.slice/system-postgresql.slice")]);
    let s = a.status.clone().expect("a message");
    assert_eq!(s.level, Level::Warn);
    assert_eq!(
        s.text,
        "postgresql@15-main.service is gone; selected its parent system-postgresql.slice"
    );
    assert!(a.inspection.is_none(), "the old group's detail is dropped");
    // the message stays until the next key
    tick(&mut a, &mut c, 3.0);
    assert!(a.status.is_some());
    send(&mut a, &mut c, ch('j'));
    assert!(a.status.is_none());
}

#[test]
fn a_vanished_subtree_selects_the_nearest_survivor() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    select(
        &mut a,
        &mut c,
        "user.slice/user-0.slice/user@0.service/app.slice/dbus.socket",
    );
    // the user logs out: user-0.slice and everything below it goes
    //   └─ user.slice            <- the cursor lands here
    //      └─ user-0.slice       rmdir -r
    remove_group(root, "user.slice/user-0.slice");
    tick(&mut a, &mut c, 1.0);
    assert_eq!(selected(&a), "/user.slice");
    assert_eq!((a.cursor, a.rows.len()), (24, 25));
    assert!(
        a.status.as_ref().is_some_and(
            |s| s.text == "dbus.socket is gone; selected its nearest ancestor user.slice"
        )
    );
}

#[test]
fn tab_moves_focus_to_the_process_list_and_back() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "system.slice/rivm-cmd.service");
    read_inspection(&mut a, &mut c, 0.0);
    set_processes(
        &mut a,
        vec![
            process(4_190_001, "root", 0.0, 4, "/usr/bin/rivm-cmd --serve"),
            process(4_190_002, "root", 1.0, 2, "sh -c worker"),
            process(4_190_003, "nobody", 0.5, 1, "sleep 600"),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!((a.pane, a.page), (Pane::Processes, DetailPage::Processes));
    // j/k/End/Home now move in the process list, not in the tree
    assert!(send(&mut a, &mut c, ch('j')).is_empty());
    assert_eq!((a.proc_cursor, a.cursor), (1, 10));
    send(&mut a, &mut c, key(KeyCode::End));
    assert_eq!(a.proc_cursor, 2);
    send(&mut a, &mut c, ch('j'));
    assert_eq!(a.proc_cursor, 2, "stops at the last process");
    send(&mut a, &mut c, ch('g'));
    assert_eq!(a.proc_cursor, 0);
    send(&mut a, &mut c, ch('k'));
    assert_eq!(a.proc_cursor, 0);
    // Tab again: back to the tree (the page stays)
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert_eq!((a.pane, a.page), (Pane::Tree, DetailPage::Processes));
    assert_eq!(
        send(&mut a, &mut c, ch('j')),
        [inspect("system.slice/rivm-session.service")]
    );
    // choosing another page while in the list returns focus to the tree
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('2'));
    assert_eq!((a.pane, a.page), (Pane::Tree, DetailPage::Memory));
    for (k, page) in [
        ('1', DetailPage::Overview),
        ('3', DetailPage::Io),
        ('4', DetailPage::Processes),
        ('5', DetailPage::Raw),
    ] {
        send(&mut a, &mut c, ch(k));
        assert_eq!(a.page, page);
    }
}

#[test]
fn a_moved_selection_drops_the_old_detail() {
    let (mut a, mut c) = systemd();
    read_inspection(&mut a, &mut c, 0.0);
    assert!(a.inspection.is_some());
    send(&mut a, &mut c, ch('j'));
    assert!(
        a.inspection.is_none(),
        "the root's detail is not shown for another group"
    );
    // an inspection for a group that is no longer selected is ignored
    let stale = c.read_inspection(&GroupPath::root(), None, 0.0);
    cgtop::app::update(
        &mut a,
        cgtop::app::Msg::Collected(cgtop::source::collector::Collected::Inspection(Box::new(
            stale,
        ))),
    );
    assert!(a.inspection.is_none());
    read_inspection(&mut a, &mut c, 0.0);
    assert_eq!(
        a.inspection.as_ref().map(|f| f.path.to_string()),
        Some("/dev-hugepages.mount".into())
    );
}

#[test]
fn p_pauses_and_resumes_the_collector() {
    let (mut a, mut c) = systemd();
    assert_eq!(
        send(&mut a, &mut c, ch('p')),
        [Effect::Collector(Command::Pause(true))]
    );
    assert!(a.paused);
    assert_eq!(
        send(&mut a, &mut c, ch('p')),
        [Effect::Collector(Command::Pause(false))]
    );
    assert!(!a.paused);
}

#[test]
fn d_sets_the_refresh_interval() {
    let (mut a, mut c) = systemd();
    assert!(send(&mut a, &mut c, ch('d')).is_empty());
    assert!(matches!(&a.mode, Mode::IntervalPrompt(t) if t.is_empty()));
    // letters are not taken; digits and the point are
    type_text(&mut a, &mut c, "x2");
    assert!(matches!(&a.mode, Mode::IntervalPrompt(t) if *t == "2"));
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        fx,
        [Effect::Collector(Command::SetInterval(
            Duration::from_secs(2)
        ))]
    );
    assert_eq!(
        (a.mode.clone(), a.interval),
        (Mode::Normal, Duration::from_secs(2))
    );
    assert_eq!(
        a.status.as_ref().map(|s| s.text.as_str()),
        Some("refreshing every 2 s")
    );

    // 0.5 works; Backspace edits
    send(&mut a, &mut c, ch('d'));
    type_text(&mut a, &mut c, "0.55");
    send(&mut a, &mut c, key(KeyCode::Backspace));
    assert_eq!(
        send(&mut a, &mut c, key(KeyCode::Enter)),
        [Effect::Collector(Command::SetInterval(
            Duration::from_millis(500)
        ))]
    );
    assert_eq!(
        a.status.as_ref().map(|s| s.text.as_str()),
        Some("refreshing every 0.5 s")
    );
}

#[test]
fn d_with_bad_input_says_why_and_changes_nothing() {
    let (mut a, mut c) = systemd();
    for (typed, why) in [
        ("", "is not a number"),
        (".", "is not a number"),
        ("1.2.3", "is not a number"),
        ("0.01", "out of range (0.1 to 3600 seconds)"),
        ("5000", "out of range (0.1 to 3600 seconds)"),
    ] {
        send(&mut a, &mut c, ch('d'));
        type_text(&mut a, &mut c, typed);
        let fx = send(&mut a, &mut c, key(KeyCode::Enter));
        assert!(fx.is_empty(), "{typed:?} gave {fx:?}");
        let s = a.status.clone().expect("an error");
        assert_eq!(s.level, Level::Error, "{typed:?}");
        assert!(
            s.text.starts_with("interval: ") && s.text.contains(why),
            "{typed:?}: {}",
            s.text
        );
        assert_eq!(
            (a.mode.clone(), a.interval),
            (Mode::Normal, Duration::from_secs(1))
        );
    }
    // Esc and Ctrl-C cancel without a message
    for cancel in [key(KeyCode::Esc), ctrl('c')] {
        send(&mut a, &mut c, ch('j'));
        send(&mut a, &mut c, ch('d'));
        type_text(&mut a, &mut c, "3");
        assert!(send(&mut a, &mut c, cancel).is_empty());
        assert_eq!(
            (a.mode.clone(), a.interval),
            (Mode::Normal, Duration::from_secs(1))
        );
        assert!(a.status.is_none());
    }
}

/// Ctrl-Z (a key in raw mode) and SIGTSTP stop cgtop; SIGCONT sets the
/// terminal up again and redraws it in full; none of them quits.
#[test]
fn ctrl_z_and_sigtstp_suspend_sigcont_redraws() {
    let (mut a, mut c) = systemd();
    assert_eq!(send(&mut a, &mut c, ctrl('z')), [Effect::Suspend]);
    assert_eq!(
        send(&mut a, &mut c, cgtop::app::Msg::SuspendRequested),
        [Effect::Suspend]
    );
    assert_eq!(
        send(&mut a, &mut c, cgtop::app::Msg::Continued),
        [Effect::Redraw]
    );
    assert!(!a.quitting);
}

/// Ctrl-Z suspends from any screen, as the terminal's own SIGTSTP does
/// in htop, and the screen is still there after fg: a dialog, the
/// filter, the help and the interval prompt.
#[test]
fn ctrl_z_suspends_from_every_screen_and_leaves_it_open() {
    for open in [ch('/'), ch('?'), ch('d'), ch('L')] {
        let (mut a, mut c) = systemd();
        send(&mut a, &mut c, open.clone());
        let before = format!("{:?}", a.mode);
        assert_ne!(
            before,
            format!("{:?}", cgtop::app::Mode::Normal),
            "{open:?}"
        );
        assert_eq!(
            send(&mut a, &mut c, ctrl('z')),
            [Effect::Suspend],
            "{open:?}"
        );
        assert_eq!(format!("{:?}", a.mode), before, "{open:?}");
        assert_eq!(
            send(&mut a, &mut c, cgtop::app::Msg::Continued),
            [Effect::Redraw]
        );
        assert_eq!(format!("{:?}", a.mode), before, "{open:?}");
    }
}

#[test]
fn q_f10_ctrl_c_and_signals_quit() {
    for k in [ch('q'), key(KeyCode::F(10)), ctrl('c')] {
        let (mut a, mut c) = systemd();
        assert_eq!(send(&mut a, &mut c, k), [Effect::Quit]);
        assert!(a.quitting);
    }
    for (m, sig) in [
        (cgtop::app::Msg::Signalled(15), Some(15)),
        (cgtop::app::Msg::Signalled(2), Some(2)),
        // a hung-up terminal ends cgtop as SIGHUP does: status 129
        (cgtop::app::Msg::InputClosed, Some(1)),
    ] {
        let (mut a, mut c) = systemd();
        assert_eq!(send(&mut a, &mut c, m), [Effect::Quit]);
        assert_eq!(a.exit_signal, sig);
    }
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('q'));
    assert_eq!(a.exit_signal, None, "q is a plain quit: status 0");
    // in the help screen q closes the help; in the filter it is a letter
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('?'));
    assert_eq!(a.mode, Mode::Help);
    assert!(send(&mut a, &mut c, ch('q')).is_empty());
    assert_eq!(a.mode, Mode::Normal);
    send(&mut a, &mut c, ch('/'));
    // (it moves the selection to the first match, dev-mqueue.mount)
    assert_eq!(
        send(&mut a, &mut c, ch('q')),
        [Effect::Collector(Command::Inspect(Some(GroupPath::new(
            "dev-mqueue.mount"
        ))))]
    );
    assert_eq!(a.filter, "q");
    // Ctrl-C while filtering cancels the filter, it does not quit
    assert!(send(&mut a, &mut c, ctrl('c')).is_empty());
    assert_eq!((a.mode.clone(), a.filter.as_str()), (Mode::Normal, ""));
}

#[test]
fn help_opens_and_every_closing_key_closes_it() {
    let (mut a, mut c) = systemd();
    for close in [
        key(KeyCode::Esc),
        ch('q'),
        ch('?'),
        key(KeyCode::F(1)),
        key(KeyCode::Enter),
    ] {
        send(&mut a, &mut c, key(KeyCode::F(1)));
        assert_eq!(a.mode, Mode::Help);
        // other keys do nothing while the help is up
        assert!(send(&mut a, &mut c, ch('j')).is_empty());
        assert_eq!(a.cursor, 0);
        send(&mut a, &mut c, close);
        assert_eq!(a.mode, Mode::Normal);
    }
}

#[test]
fn space_turns_the_help_pages_and_opening_starts_on_the_first() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('?'));
    assert_eq!(a.help_page, 0);
    // the view wraps the page number around the pages that fit
    for (k, page) in [
        (ch(' '), 1),
        (key(KeyCode::PageDown), 2),
        (ch('k'), 1),
        (key(KeyCode::Up), 0),
        (ch('k'), 0),
    ] {
        assert!(send(&mut a, &mut c, k).is_empty());
        assert_eq!(a.help_page, page);
    }
    send(&mut a, &mut c, ch(' '));
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('?'));
    assert_eq!(a.help_page, 0, "the help opens on its first page");
}

#[test]
fn percent_switches_the_cpu_scale_and_says_what_100_means() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('%'));
    assert!(a.cpu_machine);
    assert!(
        (a.cpu_shown(100.0) - 50.0).abs() < 1e-9,
        "two CPUs: one busy core is 50 %"
    );
    assert_eq!(
        a.status.as_ref().map(|s| s.text.as_str()),
        Some("CPU % of the whole machine (2 CPUs = 100 %)")
    );
    send(&mut a, &mut c, ch('%'));
    assert!((a.cpu_shown(100.0) - 100.0).abs() < 1e-9);
}

#[test]
fn a_resize_keeps_the_cursor_on_screen() {
    let (mut a, mut c) = systemd();
    resize(&mut a, 120, 40);
    send(&mut a, &mut c, key(KeyCode::End));
    assert_eq!(a.cursor, 30);
    resize(&mut a, 80, 24);
    assert!(a.scroll <= a.cursor && a.cursor < a.scroll + a.tree_height);
    resize(&mut a, 160, 45);
    assert_eq!(a.scroll, 0, "everything fits: no scrolling");
}

#[test]
fn memory_events_since_start_count_from_the_first_refresh() {
    let dir = copy_fixture("memory-limited");
    let root = dir.path();
    let svc = "system.slice/system-postgresql.slice/postgresql@15-main.service";
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, svc);
    tick(&mut a, &mut c, 1.0);
    let f = a.inspection.as_ref().expect("inspection");
    assert_eq!(
        f.detail.memory_events.and_then(|e| e.oom_kill),
        Some(1),
        "as captured"
    );
    assert_eq!(
        f.events_since_start.and_then(|e| e.oom_kill),
        Some(0),
        "none since cgtop started"
    );
    // another backend is killed
    bump(root, svc, "memory.events", &[("oom_kill", 1), ("high", 10)]);
    tick(&mut a, &mut c, 2.0);
    let since = a
        .inspection
        .as_ref()
        .and_then(|f| f.events_since_start)
        .expect("events");
    assert_eq!((since.oom_kill, since.high), (Some(1), Some(10)));
}

/// Every action has a key, and every action that belongs to the main view
/// has one there. `Action::all()` comes from the enum's own declaration
/// (the `actions!` macro in app/keymap.rs), so an action added without a
/// binding fails here; the match below has no wildcard, so a new action
/// must also be sorted into a scope before this test compiles.
#[test]
fn every_main_action_is_reachable() {
    fn main_scope(a: Action) -> bool {
        match a {
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Home
            | Action::End
            | Action::Expand
            | Action::Collapse
            | Action::ExpandSubtree
            | Action::CollapseSubtree
            | Action::ToggleAll
            | Action::ToggleFlat
            | Action::StartFilter
            | Action::ClearFilter
            | Action::SortPrev
            | Action::SortNext
            | Action::SortReverse
            | Action::SwitchFocus
            | Action::DetailPage(_)
            | Action::DetailDown
            | Action::DetailUp
            | Action::Zoom
            | Action::OpenDetail
            | Action::ToggleCpuScale
            | Action::Pause
            | Action::StepBack
            | Action::StepForward
            | Action::JumpTo
            | Action::ToggleSpark
            | Action::ToggleIdentities
            | Action::HistorySpan
            | Action::SetInterval
            | Action::Help
            | Action::Quit
            | Action::Suspend
            | Action::RedrawScreen
            | Action::Controllers
            | Action::EditLimits
            | Action::EditRaw
            | Action::Freeze
            | Action::Kill
            | Action::MoveProcess
            | Action::NewGroup
            | Action::RemoveGroup
            | Action::Undo
            | Action::Redo
            | Action::ChooseColumns
            | Action::StartSearch
            | Action::FindProcess
            | Action::SortMenu
            | Action::SortByCpu
            | Action::SortByMemory
            | Action::ActionLog
            | Action::Events => true,
            Action::Accept
            | Action::SearchNext
            | Action::ThroughSystemd
            | Action::Cancel
            | Action::CursorLeft
            | Action::CursorRight
            | Action::WordLeft
            | Action::WordRight
            | Action::LineStart
            | Action::LineEnd
            | Action::DeleteChar
            | Action::DeleteForward
            | Action::DeleteWord
            | Action::DeleteToStart
            | Action::DeleteToEnd
            | Action::Toggle
            | Action::PlanAlongPath
            | Action::PrevField
            | Action::NextField
            | Action::PrevDevice
            | Action::NextDevice
            | Action::ToggleThreads
            | Action::Close
            | Action::JumpToGroup
            | Action::ClearEvents
            | Action::ExportScript
            | Action::MoveItemUp
            | Action::MoveItemDown
            | Action::Save
            | Action::CloseHelp => false,
        }
    }
    let all = Action::all();
    assert!(
        all.contains(&Action::DetailPage(DetailPage::ALL.len() as u8 - 1)),
        "every detail page is an action"
    );
    for action in &all {
        assert!(
            keymap::KEYMAP.iter().any(|b| b.action == *action),
            "{action:?} has no key in KEYMAP"
        );
    }
    for action in all.into_iter().filter(|a| main_scope(*a)) {
        let b = keymap::bindings(Scope::Main)
            .find(|b| b.action == action)
            .unwrap_or_else(|| panic!("{action:?} has no key in the main view"));
        let k = b.keys[0];
        assert_eq!(
            keymap::lookup(Scope::Main, &KeyEvent::new(k.code, k.mods)),
            Some(action),
            "{action:?}: its first key is taken by another binding"
        );
        assert!(!b.help.is_empty(), "{action:?} has no help text");
    }
    // each detail page key leads to that page
    for (i, page) in DetailPage::ALL.iter().enumerate() {
        let (mut a, mut c) = systemd();
        send(&mut a, &mut c, ch(char::from(b'1' + i as u8)));
        assert_eq!(a.page, *page);
    }
}

#[test]
fn the_modal_scopes_have_their_keys() {
    for (scope, actions) in [
        // Backspace and the other editing keys are the text scope's,
        // shared by every text input
        (Scope::Filter, &[Action::Accept, Action::Cancel][..]),
        (Scope::Prompt, &[Action::Accept, Action::Cancel][..]),
        (
            Scope::Help,
            &[Action::CloseHelp, Action::PageDown, Action::PageUp][..],
        ),
    ] {
        let bound: Vec<Action> = keymap::bindings(scope).map(|b| b.action).collect();
        assert_eq!(bound, actions, "{scope:?}");
    }
    assert!(keymap::bindings(Scope::Text).any(|b| b.action == Action::DeleteChar));
}

/// With `--mouse`: the wheel moves the cursor by three rows, a click on a
/// tree row selects it, a click below the last row selects nothing.
#[test]
fn mouse_wheel_and_click() {
    use cgtop::app::{MouseAction, Msg};
    let (mut a, mut c) = app_on(
        &fixture("pure-v2-systemd"),
        directory_mount("pure-v2-systemd"),
        80,
        24,
    );
    send(&mut a, &mut c, Msg::Mouse(MouseAction::ScrollDown));
    assert_eq!(a.cursor, 3);
    send(&mut a, &mut c, Msg::Mouse(MouseAction::ScrollUp));
    assert_eq!(a.cursor, 0);
    send(&mut a, &mut c, Msg::Mouse(MouseAction::ClickRow(2)));
    assert_eq!(a.cursor, 2);
    let sel = a.selected.clone();
    send(&mut a, &mut c, Msg::Mouse(MouseAction::ClickRow(999)));
    assert_eq!((a.cursor, a.selected.clone()), (2, sel));
    // the geometry the terminal uses: line 4 of an 80x24 screen is the
    // first tree row (three header lines, then the column header)
    assert_eq!(cgtop::ui::tree_row_at(&a, 5, 4), Some(0));
    assert_eq!(cgtop::ui::tree_row_at(&a, 5, 3), None);
}

/// README's key tables are the keymap's: the text between the
/// `<!-- keys:begin -->` and `<!-- keys:end -->` markers is what
/// `keymap::markdown()` prints. `UPDATE_README_KEYS=1` writes it there
/// (then read the diff like code).
#[test]
fn readme_key_tables_are_the_keymap() {
    const BEGIN: &str = "<!-- keys:begin -->\n";
    const END: &str = "<!-- keys:end -->";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme.find(BEGIN).expect("README has no keys:begin marker") + BEGIN.len();
    let end = readme.find(END).expect("README has no keys:end marker");
    let want = keymap::markdown();
    if std::env::var_os("UPDATE_README_KEYS").is_some() {
        let new = format!("{}{want}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert!(
        readme[start..end] == want,
        "README's key tables differ from the keymap; run \
         UPDATE_README_KEYS=1 cargo test --test state app::readme and review the diff.\n\
         The keymap says:\n{want}"
    );
}
