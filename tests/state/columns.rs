//! The column chooser (F2, C) and the extra columns (THR%, MEM%, SWAP,
//! PSI%): the dialog toggles and applies, the collector is asked for the
//! extra files only while their column is shown, sorting by the new
//! columns, and `cgtop -b --columns`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{Effect, Mode, SortKey};
use cgtop::model::{GroupPath, HotExtras};
use cgtop::render::columns::Column;
use cgtop::source::collector::{Collector, Command as Cmd};
use common::*;
use crossterm::event::KeyCode;
use std::process::{Command, Stdio};

const PG_SLICE: &str = "system.slice/system-postgresql.slice";

/// The extra-files commands among `fx`, passed on to the collector as the
/// main loop does.
fn extras_sent(fx: &[Effect], c: &mut Collector) -> Vec<HotExtras> {
    let mut out = Vec::new();
    for e in fx {
        if let Effect::Collector(Cmd::Extras(x)) = e {
            c.set_extras(*x);
            out.push(*x);
        }
    }
    out
}

/// Opens the chooser with `open`, toggles the columns `toggle` (by title)
/// and applies with Enter; the effects of Enter.
fn choose(
    a: &mut cgtop::app::App,
    c: &mut Collector,
    open: cgtop::app::Msg,
    toggle: &[&str],
) -> Vec<Effect> {
    send(a, c, open);
    assert!(matches!(a.mode, Mode::Columns(_)), "the chooser is open");
    for t in toggle {
        // the list: the columns shown, in their order, then the others
        let Mode::Columns(d) = &a.mode else {
            panic!("the chooser is open")
        };
        let at = d.items.iter().position(|(x, _)| x.title() == *t).unwrap();
        send(a, c, key(KeyCode::Home));
        for _ in 0..Column::ALL.len() {
            send(a, c, key(KeyCode::Up));
        }
        for _ in 0..at {
            send(a, c, key(KeyCode::Down));
        }
        send(a, c, ch(' '));
    }
    send(a, c, key(KeyCode::Enter))
}

#[test]
fn the_chooser_toggles_and_applies() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 200, 50);
    assert_eq!(a.columns, Column::DEFAULT);
    // F2 as in htop; THR% is read already: no extra file is asked for
    let fx = choose(&mut a, &mut c, key(KeyCode::F(2)), &["THR%", "PIDS"]);
    assert_eq!(a.mode, Mode::Normal);
    assert!(extras_sent(&fx, &mut c).is_empty());
    // a column marked anew comes after those shown (where the list has
    // it): `[`/`]` move it
    assert_eq!(
        a.columns,
        [
            Column::Cpu,
            Column::Memory,
            Column::IoRead,
            Column::IoWrite,
            Column::Throttled,
        ]
    );
    // Esc leaves the columns as they were, whatever was marked
    send(&mut a, &mut c, ch('C'));
    send(&mut a, &mut c, ch('x'));
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.columns.len(), 5);
    // the screen shows the chosen set
    let s = screen(&a, 200, 50);
    let head = s.lines().find(|l| l.contains("GROUP")).unwrap();
    let tree_head = head.split('┌').next().unwrap();
    assert!(tree_head.contains("THR%"), "{s}");
    assert!(!tree_head.contains("PIDS"), "{s}");
}

#[test]
fn extra_files_are_read_only_while_their_column_is_shown() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 200, 50);
    let pg = GroupPath::new(PG_SLICE);
    let files = |c: &mut Collector, t: f64| {
        let r = refresh(c, t);
        let g = r.snapshot.find(&pg).unwrap().hot.clone();
        (
            r.snapshot.cost.files_read,
            r.snapshot.groups.len() as u64,
            g,
        )
    };
    let (base, n, g) = files(&mut c, 1.0);
    assert_eq!(
        (g.memory_max, g.swap_current, g.psi_some_avg10),
        (None, None, None)
    );

    let fx = choose(&mut a, &mut c, ch('C'), &["MEM%", "SWAP", "PSI%"]);
    let asked = extras_sent(&fx, &mut c);
    assert_eq!(
        asked,
        [HotExtras {
            memory_max: true,
            swap: true,
            pressure: true
        }]
    );
    let (more, n2, g) = files(&mut c, 2.0);
    assert_eq!(n, n2);
    // five more files a group at most (the root has no memory.max nor swap)
    assert!(
        more > base && more <= base + 5 * n,
        "{base} -> {more}, {n} groups"
    );
    assert_eq!(g.memory_limit, Some(536_870_912));
    assert_eq!(g.swap_current, Some(0));
    assert!(g.psi_some_avg10.is_some());
    // the service below inherits the slice's limit
    let r = refresh(&mut c, 3.0);
    let svc = r.snapshot.find(&GroupPath::new(PG_SERVICE)).unwrap();
    assert_eq!(svc.hot.memory_limit, Some(536_870_912));

    // hidden again: the files are no longer read
    let fx = choose(
        &mut a,
        &mut c,
        key(KeyCode::F(2)),
        &["MEM%", "SWAP", "PSI%"],
    );
    assert_eq!(extras_sent(&fx, &mut c), [HotExtras::default()]);
    let (back, _, g) = files(&mut c, 4.0);
    assert_eq!(back, base);
    assert_eq!(
        (g.memory_limit, g.swap_current, g.psi_some_avg10),
        (None, None, None)
    );
}

#[test]
fn sorting_walks_the_shown_columns_and_sorts_by_the_new_ones() {
    let dir = lab_tree();
    let root = dir.path().to_path_buf();
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), 200, 50);
    let fx = choose(&mut a, &mut c, key(KeyCode::F(2)), &["MEM%", "SWAP"]);
    extras_sent(&fx, &mut c);
    std::fs::write(
        root.join(PG_SERVICE).join("memory.swap.current"),
        "7340032\n",
    )
    .unwrap();
    tick(&mut a, &mut c, 1.0);
    // in the order shown (the two marked anew after the five): from CPU:
    // MEM, READ/s, WRITE/s, PIDS, MEM%, SWAP, the name, CPU
    let mut seen = Vec::new();
    for _ in 0..8 {
        send(&mut a, &mut c, ch('>'));
        seen.push(a.sort);
    }
    assert_eq!(
        seen,
        [
            SortKey::Memory,
            SortKey::IoRead,
            SortKey::IoWrite,
            SortKey::Pids,
            SortKey::MemPct,
            SortKey::Swap,
            SortKey::Name,
            SortKey::Cpu
        ]
    );
    send(&mut a, &mut c, ch('<'));
    assert_eq!(a.sort, SortKey::Name);
    // by SWAP, biggest first: the service swapping is the first below its
    // slice, and the slice (5 groups deep) is above its siblings
    send(&mut a, &mut c, ch('<'));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Swap, true));
    let rows = visible_paths(&a);
    let slice = rows.iter().position(|p| rel(p) == PG_SLICE).unwrap();
    assert_eq!(rel(&rows[slice + 1]), PG_SERVICE);
    let s = screen(&a, 200, 50);
    assert!(s.contains("▼SWAP"), "{s}");
    assert!(s.contains("7.0M"), "{s}");
    // hiding the sorted column sorts by CPU again
    choose(&mut a, &mut c, key(KeyCode::F(2)), &["SWAP"]);
    assert_eq!((a.sort, a.sort_desc), (SortKey::Cpu, true));
}

#[test]
fn batch_prints_the_columns_asked_for() {
    let root = fixture("memory-limited");
    let run = |extra: &[&str]| {
        let mut args = vec!["-b", "-n", "1", "-d", "0.1", "--root"];
        args.push(root.to_str().unwrap());
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("run cgtop")
    };
    let o = run(&["--columns", "cpu,mempct,swap,psi"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let head = out.lines().find(|l| l.starts_with("GROUP")).unwrap();
    let titles: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(titles, ["GROUP", "CPU%", "MEM%", "SWAP", "PSI%", "ST"]);
    // the postgres slice: 55025664 of 536870912 bytes is 10.2 %
    let slice = out
        .lines()
        .find(|l| l.trim_start().starts_with("system-postgresql.slice"))
        .unwrap();
    let cells: Vec<&str> = slice.split_whitespace().collect();
    // PSI%: the highest some avg10 of the three, cpu.pressure's 5.82
    assert_eq!(cells[2..5], ["10.2", "0", "5.8"][..], "{slice}");
    // the default stays the five of before
    let o = run(&[]);
    let out = String::from_utf8(o.stdout).unwrap();
    let head = out.lines().find(|l| l.starts_with("GROUP")).unwrap();
    let titles: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(
        titles,
        ["GROUP", "CPU%", "MEM", "READ/s", "WRITE/s", "PIDS", "ST"]
    );
    // a name that is no column is refused with the list
    let o = run(&["--columns", "cpu,bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bogus") && err.contains("mempct"), "{err}");
}
