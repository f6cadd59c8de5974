//! The tree's state through a group's recreation and under a filter
//! (issue 12, items 2 and 8): messages fed to `app::update`, state and
//! effects asserted, on copies of the pure-v2-systemd fixture (its tree
//! is drawn at the top of tests/state/app.rs; `>` marks the cursor, `+` a
//! folded branch, `*` a match).
//!
//! A restarted unit (`systemctl restart`: rmdir + mkdir under the same
//! name, so no nr_descendants moves) is listed, and stays selected, in
//! the refresh where it exists again; a selected group that was gone for
//! a few refreshes gets the selection back when it returns, unless the
//! cursor moved meanwhile. Under a filter the selection goes to the first
//! match, and a match shows its subtree, folded until opened.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{App, Effect, Level, Msg, RETURN_WITHIN};
use cgtop::model::GroupPath;
use cgtop::options::{Options, Output};
use cgtop::source::collector::{Collector, CollectorConfig, Command};
use cgtop::source::scan::ScanConfig;
use common::*;
use crossterm::event::KeyCode;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

const PG_SLICE: &str = "system.slice/system-postgresql.slice";
const PG: &str = "system.slice/system-postgresql.slice/postgresql@15-main.service";

fn systemd() -> (App, Collector) {
    app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24)
}

fn inspect(p: &str) -> Effect {
    Effect::Collector(Command::Inspect(Some(GroupPath::new(p))))
}

/// Copies the fixture's directory `group` (and what is below it) to
/// `to`, its counters as a new group's: cpu.stat from zero.
fn copy_group(group: &str, to: &Path) {
    let from = fixture("pure-v2-systemd").join(group);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        let rel = format!("{group}/{}", name.to_str().unwrap());
        if e.file_type().unwrap().is_dir() {
            copy_group(&rel, &to.join(&name));
        } else if name == "cpu.stat" {
            std::fs::write(to.join(&name), "usage_usec 0\nuser_usec 0\nsystem_usec 0\n").unwrap();
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// `systemctl restart`: the group removed and made again under its name
/// between two refreshes. Made aside and renamed into place, so that its
/// directory (and each file) has another inode, as a new cgroup has; no
/// nr_descendants moves.
fn restart(root: &Path, group: &str) {
    let aside = root.join(format!("{group}.new"));
    copy_group(group, &aside);
    std::fs::remove_dir_all(root.join(group)).unwrap();
    std::fs::rename(&aside, root.join(group)).unwrap();
}

/// A group removed with [`remove_group`] made again (as a new group),
/// with nr_descendants raised in every ancestor as the kernel does.
fn come_back(root: &Path, group: &str) {
    copy_group(group, &root.join(group));
    let made = walkdirs(&root.join(group));
    count_descendants(root, group, made);
}

/// The app over a collector that reads every file anew each refresh (no
/// kept descriptors: on tmpfs a kept descriptor of a removed file goes on
/// reading it, where cgroupfs says ENODEV) and never walks on its own.
fn app_reopening(root: &Path) -> (App, Collector) {
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, 80, 24);
    let mut c = Collector::new(CollectorConfig {
        root: root.to_path_buf(),
        start: GroupPath::root(),
        scan: ScanConfig {
            max_kept: 0,
            rewalk_every: 0,
            ..ScanConfig::default()
        },
        full_detail: false,
        sys_dev_block: fixture("sys-dev-block"),
    });
    tick(&mut a, &mut c, 0.0);
    (a, c)
}

fn sample<'a>(a: &'a App, p: &str) -> Option<&'a cgtop::model::GroupSample> {
    a.data.as_ref()?.refresh.snapshot.find(&GroupPath::new(p))
}

#[test]
fn a_restarted_unit_stays_selected_and_listed_as_a_new_group() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_reopening(root);
    select(&mut a, &mut c, PG);
    burn_cpu(root, PG, 200_000);
    tick(&mut a, &mut c, 1.0);
    let old = sample(&a, PG).unwrap().inode;
    //   │  ├─ system-postgresql.slice
    //   │  │  └─>postgresql@15-main.service   systemctl restart
    restart(root, PG);
    let fx = tick(&mut a, &mut c, 2.0);
    // listed in this very refresh, as the new group: no rate from the
    // old group's counters, and the selection never left it
    let new = sample(&a, PG).expect("listed in the refresh where it exists again");
    assert_ne!(new.inode, old, "the new group, not the old one");
    assert_eq!(selected(&a), format!("/{PG}"));
    assert!(a.status.is_none(), "nothing was gone: {:?}", a.status);
    assert!(fx.is_empty(), "the same selection: {fx:?}");
    let (_, rates) = a.selected_data().unwrap();
    assert_eq!(rates.cpu_pct, None, "no rate across two groups");
    // and its rate starts over from the new group's counters
    burn_cpu(root, PG, 100_000);
    tick(&mut a, &mut c, 3.0);
    let (_, rates) = a.selected_data().unwrap();
    assert_eq!(rates.cpu_pct.map(f64::round), Some(10.0));
}

#[test]
fn a_selection_that_vanished_returns_when_its_group_is_back() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    // the slice is folded and selected:
    //   │  ├─>system-postgresql.slice +
    select(&mut a, &mut c, PG_SLICE);
    send(&mut a, &mut c, ch('h'));
    assert!(a.rows[a.cursor].collapsed);
    // it goes (rmdir of the service, then of the slice): the cursor
    // waits on system.slice
    remove_group(root, PG_SLICE);
    tick(&mut a, &mut c, 1.0);
    assert_eq!(selected(&a), "/system.slice");
    assert!(a.status.as_ref().is_some_and(|s| s.level == Level::Warn));
    tick(&mut a, &mut c, 2.0);
    assert_eq!(selected(&a), "/system.slice", "still gone");
    // back within RETURN_WITHIN refreshes: selected again, folded as it
    // was (folds are kept by path), its detail asked for
    come_back(root, PG_SLICE);
    let fx = tick(&mut a, &mut c, 3.0);
    assert_eq!(selected(&a), format!("/{PG_SLICE}"));
    assert_eq!(
        outline(&a)[a.cursor],
        "    system-postgresql.slice +",
        "still folded"
    );
    assert_eq!(fx, [inspect(PG_SLICE)]);
    let s = a.status.clone().expect("a word");
    assert_eq!(
        (s.level, s.text.as_str()),
        (
            Level::Info,
            "system-postgresql.slice is back; selected it again"
        )
    );
}

#[test]
fn a_vanished_selection_is_not_taken_back_once_the_cursor_moved_or_too_late() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    // the service goes while selected, comes back: selected again
    select(&mut a, &mut c, PG);
    remove_group(root, PG);
    tick(&mut a, &mut c, 1.0);
    assert_eq!(selected(&a), format!("/{PG_SLICE}"));
    come_back(root, PG);
    tick(&mut a, &mut c, 2.0);
    assert_eq!(selected(&a), format!("/{PG}"), "back on it");
    // it goes again and the operator moves on: the choice is theirs
    remove_group(root, PG);
    tick(&mut a, &mut c, 3.0);
    send(&mut a, &mut c, ch('j'));
    let moved_to = selected(&a);
    assert_ne!(moved_to, format!("/{PG_SLICE}"));
    come_back(root, PG);
    tick(&mut a, &mut c, 4.0);
    assert_eq!(selected(&a), moved_to, "the cursor moved: not taken back");
    // gone for longer than RETURN_WITHIN refreshes: forgotten
    select(&mut a, &mut c, PG);
    remove_group(root, PG);
    let mut t = 5.0;
    for _ in 0..=RETURN_WITHIN {
        tick(&mut a, &mut c, t);
        t += 1.0;
    }
    come_back(root, PG);
    tick(&mut a, &mut c, t);
    assert_eq!(selected(&a), format!("/{PG_SLICE}"), "too late");
}

#[test]
fn a_group_gone_with_its_parent_is_waited_for_as_the_deepest() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (mut a, mut c) = app_on(root, pure_v2_mount(), 80, 24);
    // the service goes, the cursor waits on its slice; then the slice
    // goes too, and both come back: the service is selected again
    select(&mut a, &mut c, PG);
    remove_group(root, PG);
    tick(&mut a, &mut c, 1.0);
    remove_group(root, PG_SLICE);
    tick(&mut a, &mut c, 2.0);
    assert_eq!(selected(&a), "/system.slice");
    come_back(root, PG_SLICE);
    tick(&mut a, &mut c, 3.0);
    assert_eq!(selected(&a), format!("/{PG}"));
}

#[test]
fn enter_moves_the_selection_to_the_first_match() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "user.slice/user-0.slice");
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "getty");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    //   /
    //   └─ system.slice
    //      ├─>system-getty.slice               *  the first match
    //      │  └─ getty@tty1.service            *
    //      └─ system-serial\x2dgetty.slice     *
    //         └─ serial-getty@ttyS0.service    *
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
    assert_eq!(a.cursor, 2);
    assert!(a.rows[a.cursor].matched);
    assert!(fx.is_empty(), "already there while typing: {fx:?}");
    // Esc clears the filter; the selection stays on the group
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.rows.len(), 31);
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
}

#[test]
fn typing_moves_the_selection_to_the_first_match_as_the_filter_narrows() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "user.slice");
    send(&mut a, &mut c, ch('/'));
    // "journal": the one match, under system.slice
    let fx = type_text(&mut a, &mut c, "journal");
    assert_eq!(selected(&a), "/system.slice/systemd-journald.service");
    assert_eq!(
        fx.last(),
        Some(&inspect("system.slice/systemd-journald.service"))
    );
    // Backspace to "j": the first match in display order is
    // systemd-journald.service still (no other name has a j)
    for _ in 0..6 {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    assert_eq!(a.filter, "j");
    assert_eq!(selected(&a), "/system.slice/systemd-journald.service");
    // "u" matches more; the first in display order is dev-hugepages.mount
    send(&mut a, &mut c, key(KeyCode::Backspace));
    type_text(&mut a, &mut c, "u");
    assert_eq!(selected(&a), "/dev-hugepages.mount");
    // moving the text cursor changes no text: the selection stays
    let fx = send(&mut a, &mut c, key(KeyCode::Left));
    assert!(fx.is_empty());
    // a paste filters as typing does
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('/'));
    cgtop::app::update(&mut a, Msg::Paste("udevd".into()));
    assert_eq!(selected(&a), "/system.slice/systemd-udevd.service");
    // nothing matches: no rows, and the selection goes back to where
    // the filter opened, not the match of the text's first letters
    type_text(&mut a, &mut c, "-nothing");
    assert!(a.rows.is_empty());
    assert_eq!(selected(&a), "/dev-hugepages.mount");
}

#[test]
fn a_matching_slice_shows_its_children_folded_and_expandable() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "system-getty");
    send(&mut a, &mut c, key(KeyCode::Enter));
    //   /
    //   └─ system.slice
    //      └─>system-getty.slice +    *  its service does not match
    assert_eq!(
        outline(&a),
        ["/", "  system.slice", "    system-getty.slice +"]
    );
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
    // Right opens it: its service shows, not a match itself
    send(&mut a, &mut c, key(KeyCode::Right));
    assert_eq!(
        outline(&a),
        [
            "/",
            "  system.slice",
            "    system-getty.slice",
            "      getty@tty1.service"
        ]
    );
    assert!(!a.rows[3].matched);
    send(&mut a, &mut c, ch('j'));
    assert_eq!(
        selected(&a),
        "/system.slice/system-getty.slice/getty@tty1.service"
    );
    // Left on the leaf goes up, Left again folds
    send(&mut a, &mut c, key(KeyCode::Left));
    send(&mut a, &mut c, key(KeyCode::Left));
    assert_eq!(outline(&a).len(), 3);
    // a deeper match's subtree opens whole with }
    send(&mut a, &mut c, key(KeyCode::Esc));
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "user.slice");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(outline(&a), ["/", "  user.slice +"]);
    send(&mut a, &mut c, ch('}'));
    assert_eq!(
        outline(&a),
        [
            "/",
            "  user.slice",
            "    user-0.slice",
            "      session-1.scope",
            "      user@0.service",
            "        app.slice",
            "          dbus.socket",
            "        init.scope",
        ]
    );
    // the folds opened under a filter go with it: the tree without the
    // filter is as it was, and the next filter starts folded again
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.rows.len(), 31);
    assert!(a.collapsed.is_empty());
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "user.slice");
    assert_eq!(outline(&a), ["/", "  user.slice +"]);
    // * opens every branch shown, * again folds them
    send(&mut a, &mut c, key(KeyCode::Enter));
    send(&mut a, &mut c, ch('*'));
    assert_eq!(outline(&a).len(), 8);
    send(&mut a, &mut c, ch('*'));
    assert_eq!(outline(&a), ["/", "  user.slice +"]);
}

#[test]
fn json_lists_a_restarted_unit_as_the_new_group_in_the_line_it_is_back() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    let (_, c) = app_reopening(root);
    let opts = Options {
        root: Some(root.to_path_buf()),
        interval: Duration::ZERO,
        output: Output::Json,
        iterations: Some(2),
        ..crate::common::options()
    };
    let mut out = Vec::new();
    let mut waits = 0;
    // the second line is read right after `systemctl restart`
    let wait = |_: Duration| {
        waits += 1;
        if waits == 2 {
            restart(root, PG);
        }
        true
    };
    cgtop::batch::run_collector(&mut out, c, &pure_v2_mount(), &host(), &opts, wait).unwrap();
    let docs: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pg = |doc: &serde_json::Value| {
        doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["path"] == format!("/{PG}").as_str())
            .cloned()
            .expect("listed")
    };
    let (before, after) = (pg(&docs[0]), pg(&docs[1]));
    let inode = std::fs::metadata(root.join(PG)).unwrap().ino();
    assert_ne!(before["inode"], after["inode"]);
    assert_eq!(after["inode"], inode, "the group now under that name");
    assert!(
        after["rates"]["cpu_pct"].is_null(),
        "no rate across two groups"
    );
    assert_eq!(after["cpu"]["usage_usec"], 0);
}
