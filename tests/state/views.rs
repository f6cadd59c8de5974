//! Whole screens at fixed sizes, drawn by `ui::render` into a
//! `TestBackend` from the fixture trees, compared with reviewed insta
//! snapshots (tests/snapshots). Nothing on these screens comes from the
//! test host: the host facts are fixed, the mount point is fixed text,
//! the times are fixed, the rates come from counters the tests move by
//! known amounts, and process lists are made up (the fixtures' PIDs may
//! be live processes here).
//!
//! How a screen is written: each row between `|` bars (so trailing
//! blanks show), after a one-character gutter that is `>` where the row
//! holds a reverse-video bar at least 20 cells wide: the cursor row, the
//! column header, the selected process. Key labels in the footer and the
//! current detail tab are reverse video too but too short to be marked.
//!
//! CI never writes snapshots (INSTA_UPDATE=no). To change one: run
//! `INSTA_UPDATE=always cargo test --test state views::` (or
//! `cargo insta test`), read every changed .snap like code, commit it.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::App;
use cgtop::model::GroupPath;
use cgtop::source::collector::Collector;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;

/// Sizes an app that was made at another size.
fn sized(app: &mut App, w: u16, h: u16) {
    resize(app, w, h);
}

const PG_SLICE: &str = "system.slice/system-postgresql.slice";
const PG: &str = "system.slice/system-postgresql.slice/postgresql@15-main.service";
const JOURNALD: &str = "system.slice/systemd-journald.service";

/// One second of work on the systemd tree: known CPU and IO amounts,
/// so that the rates on screen are these figures, exactly.
fn one_busy_second(root: &Path) {
    burn_cpu(root, PG, 350_000);
    burn_cpu(root, JOURNALD, 125_000);
    burn_cpu(root, "system.slice/systemd-udevd.service/udev", 30_000);
    burn_cpu(root, "system.slice/rivm-cmd.service", 12_000);
    burn_cpu(root, "user.slice/user-0.slice/session-1.scope", 80_000);
    burn_cpu(root, "init.scope", 4_000);
    do_io(root, PG, "254:0", 2 << 20, 6 << 20, 40, 300);
    do_io(root, JOURNALD, "254:0", 0, 512 << 10, 0, 16);
    do_io(
        root,
        "system.slice/systemd-udevd.service",
        "254:0",
        64 << 10,
        0,
        4,
        0,
    );
}

/// The systemd tree after two refreshes one second apart, with `select`
/// selected and its detail read.
fn systemd_busy(
    fixture_name: &str,
    select_path: &str,
    w: u16,
    h: u16,
) -> (App, Collector, tempfile::TempDir) {
    let dir = copy_fixture(fixture_name);
    let root = dir.path().to_path_buf();
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), w, h);
    select(&mut a, &mut c, select_path);
    one_busy_second(&root);
    tick(&mut a, &mut c, 1.0);
    (a, c, dir)
}

/// The memory-limited service under load: CPU throttled by its quota,
/// IO under its write limit.
fn pg_limited(w: u16, h: u16) -> (App, Collector, tempfile::TempDir) {
    let dir = copy_fixture("memory-limited");
    let root = dir.path().to_path_buf();
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), w, h);
    select(&mut a, &mut c, PG);
    one_busy_second(&root);
    bump(
        &root,
        PG,
        "cpu.stat",
        &[
            ("nr_periods", 10),
            ("nr_throttled", 6),
            ("throttled_usec", 180_000),
        ],
    );
    tick(&mut a, &mut c, 1.0);
    (a, c, dir)
}

/// Who throttles me: the service has no quota of its own (its cpu.stat
/// counts no throttled period), its slice at cpu.max 20 % was throttled
/// 78 % of the window. With `local`, the kernel has cpu.stat.local (6.6)
/// and says the service itself was held back 38 % of it.
fn throttled_by_the_slice(local: bool) -> (App, Collector, tempfile::TempDir) {
    let dir = copy_fixture("memory-limited");
    let root = dir.path().to_path_buf();
    let write = |g: &str, f: &str, t: &str| std::fs::write(root.join(g).join(f), t).unwrap();
    write(PG_SLICE, "cpu.max", "20000 100000\n");
    write(PG, "cpu.max", "max 100000\n");
    if local {
        for g in ["", "system.slice", PG_SLICE, PG] {
            write(g, "cpu.stat.local", "throttled_usec 0\n");
        }
    }
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, PG);
    // the inspected group's cpu.stat.local is read from here on: the window below
    // has both ends
    tick(&mut a, &mut c, 0.5);
    burn_cpu(&root, PG, 200_000);
    bump(
        &root,
        PG_SLICE,
        "cpu.stat",
        &[
            ("nr_periods", 10),
            ("nr_throttled", 8),
            ("throttled_usec", 780_000),
        ],
    );
    bump(&root, PG, "cpu.stat", &[("nr_periods", 10)]);
    if local {
        bump(&root, PG, "cpu.stat.local", &[("throttled_usec", 380_000)]);
        bump(
            &root,
            PG_SLICE,
            "cpu.stat.local",
            &[("throttled_usec", 780_000)],
        );
    }
    tick(&mut a, &mut c, 1.5);
    (a, c, dir)
}

#[test]
fn throttled_by_the_slice_inferred_120x40() {
    let (a, _c, _d) = throttled_by_the_slice(false);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn throttled_by_the_slice_cpu_stat_local_120x40() {
    let (a, _c, _d) = throttled_by_the_slice(true);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

/// 200x50 with every column chosen (F2): THR% of the slice at cpu.max
/// 20 %, MEM% of its 512M memory.max (inherited by the service), SWAP and
/// PSI% beside the default five, the tree as wide as they need.
#[test]
fn main_view_every_column_200x50() {
    let dir = copy_fixture("memory-limited");
    let root = dir.path().to_path_buf();
    std::fs::write(root.join(PG_SLICE).join("cpu.max"), "20000 100000\n").unwrap();
    std::fs::write(root.join(PG).join("memory.swap.current"), "7340032\n").unwrap();
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), 200, 50);
    a.columns = cgtop::render::columns::Column::ALL.to_vec();
    c.set_extras(cgtop::render::columns::Column::extras(&a.columns));
    select(&mut a, &mut c, PG);
    tick(&mut a, &mut c, 0.5);
    burn_cpu(&root, PG, 200_000);
    bump(
        &root,
        PG_SLICE,
        "cpu.stat",
        &[
            ("nr_periods", 10),
            ("nr_throttled", 8),
            ("throttled_usec", 780_000),
        ],
    );
    tick(&mut a, &mut c, 1.5);
    insta::assert_snapshot!(screen(&a, 200, 50));
}

#[test]
fn main_view_80x24() {
    let (a, _c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn main_view_120x40() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 120, 40);
    // paused: the header says so
    send(&mut a, &mut c, ch('p'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn main_view_wide_160x45() {
    let (a, _c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 160, 45);
    insta::assert_snapshot!(screen(&a, 160, 45));
}

#[test]
fn main_view_sorted_by_memory_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('>'));
    send(&mut a, &mut c, key(KeyCode::Home));
    tick(&mut a, &mut c, 2.0);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn before_the_first_refresh_80x24() {
    let a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        std::time::Duration::from_secs(1),
    );
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn memory_limited_overview_80x24() {
    let (a, _c, _d) = pg_limited(80, 24);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn memory_limited_overview_120x40() {
    let (a, _c, _d) = pg_limited(120, 40);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn memory_limited_overview_wide_160x45() {
    let (a, _c, _d) = pg_limited(160, 45);
    insta::assert_snapshot!(screen(&a, 160, 45));
}

#[test]
fn memory_limited_memory_page_120x40() {
    let (mut a, mut c, d) = pg_limited(120, 40);
    // one more OOM kill after cgtop started: "since start" shows it
    bump(
        d.path(),
        PG,
        "memory.events",
        &[("high", 25), ("oom_kill", 1)],
    );
    tick(&mut a, &mut c, 2.0);
    send(&mut a, &mut c, ch('2'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn memory_limited_memory_page_80x24() {
    let (mut a, mut c, _d) = pg_limited(80, 24);
    send(&mut a, &mut c, ch('2'));
    // 80x24 shows the detail strip: Enter opens the page in full
    send(&mut a, &mut c, key(KeyCode::Enter));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn memory_limited_io_page_120x40() {
    let (mut a, mut c, _d) = pg_limited(120, 40);
    send(&mut a, &mut c, ch('3'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

/// A latency target and a limit on disks the group has done no IO on
/// (batch's io.stat is empty): each has its device's row at once.
#[test]
fn io_page_targets_on_unused_disks_120x40() {
    let dir = lab_tree();
    let b = dir.path().join("batch");
    std::fs::write(b.join("io.latency"), "254:0 target=10000\n").unwrap();
    std::fs::write(
        b.join("io.max"),
        "7:0 rbps=max wbps=2097152 riops=max wiops=max\n",
    )
    .unwrap();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 0.0);
    send(&mut a, &mut c, ch('3'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn memory_limited_slice_overview_120x40() {
    // the slice holds the hard limit itself
    let (mut a, mut c, _d) = pg_limited(120, 40);
    send(&mut a, &mut c, ch('k'));
    assert_eq!(selected(&a), format!("/{PG_SLICE}"));
    tick(&mut a, &mut c, 2.0);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn processes_page_120x40() {
    let (mut a, mut c, _d) = pg_limited(120, 40);
    set_processes(
        &mut a,
        vec![
            process(4_190_101, "postgres", 12.5, 38, "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=/etc/postgresql/15/main/postgresql.conf"),
            process(4_190_102, "postgres", 0.0, 6, "postgres: 15/main: checkpointer"),
            process(4_190_103, "postgres", 0.5, 7, "postgres: 15/main: background writer"),
            process(4_190_104, "postgres", 21.0, 12, "postgres: 15/main: app app 10.0.0.7(51234) SELECT"),
            process(4_190_105, "postgres", 0.0, 5, "postgres: 15/main: walwriter"),
            process(4_190_106, "postgres", 0.0, 4, "postgres: 15/main: logical replication launcher"),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('j'));
    send(&mut a, &mut c, ch('j'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn processes_page_80x24() {
    let (mut a, mut c, _d) = pg_limited(80, 24);
    set_processes(
        &mut a,
        vec![
            process(
                4_190_101,
                "postgres",
                12.5,
                38,
                "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main",
            ),
            process(
                4_190_104,
                "postgres",
                21.0,
                12,
                "postgres: 15/main: app app 10.0.0.7(51234) SELECT",
            ),
        ],
    );
    send(&mut a, &mut c, key(KeyCode::Tab));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn processes_page_of_a_group_without_processes_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", "system.slice", 80, 24);
    send(&mut a, &mut c, ch('4'));
    send(&mut a, &mut c, key(KeyCode::Enter));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn raw_page_120x40() {
    let (mut a, mut c) = app_on(&fixture("hybrid-host"), hybrid_mount(), 120, 40);
    select(&mut a, &mut c, "demo.slice/web.service");
    tick(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('5'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn filter_being_typed_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "getty");
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn filter_kept_and_no_match_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "nginx");
    send(&mut a, &mut c, key(KeyCode::Enter));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn interval_prompt_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('d'));
    type_text(&mut a, &mut c, "2.5");
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn interval_error_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('d'));
    type_text(&mut a, &mut c, "0.01");
    send(&mut a, &mut c, key(KeyCode::Enter));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn help_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('?'));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn help_page_2_80x24() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    send(&mut a, &mut c, ch('?'));
    send(&mut a, &mut c, ch(' '));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn help_120x40() {
    let (mut a, mut c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 120, 40);
    send(&mut a, &mut c, ch('?'));
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn vanished_selection_80x24() {
    let (mut a, mut c, d) = systemd_busy("pure-v2-systemd", PG, 80, 24);
    remove_group(d.path(), PG);
    tick(&mut a, &mut c, 2.0);
    read_inspection(&mut a, &mut c, 2.0);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn hybrid_host_80x24() {
    let (mut a, mut c) = app_on(&fixture("hybrid-host"), hybrid_mount(), 80, 24);
    tick(&mut a, &mut c, 1.0);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn hybrid_host_frozen_group_120x40() {
    let (mut a, mut c) = app_on(&fixture("hybrid-host"), hybrid_mount(), 120, 40);
    select(&mut a, &mut c, "demo.slice/worker.service");
    tick(&mut a, &mut c, 1.0);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn deep_tree_80x24() {
    let (mut a, mut c) = app_on(&fixture("deep"), directory_mount("deep"), 80, 24);
    select(&mut a, &mut c, "chain.slice/level-02.slice/level-03.slice/level-04.slice/level-05.slice/level-06.slice/level-07.slice/level-08.slice/level-09.slice/level-10.slice/level-11.slice/worker-with-a-rather-long-unit-name-at-depth-12.scope");
    tick(&mut a, &mut c, 1.0);
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn deep_tree_end_120x40() {
    let (mut a, mut c) = app_on(&fixture("deep"), directory_mount("deep"), 120, 40);
    send(&mut a, &mut c, key(KeyCode::End));
    send(&mut a, &mut c, key(KeyCode::PageUp));
    tick(&mut a, &mut c, 1.0);
    insta::assert_snapshot!(screen(&a, 120, 40));
}

#[test]
fn deep_tree_after_resize_to_80x24() {
    // made at 120x40 with the cursor low; the smaller screen still shows it
    let (mut a, mut c) = app_on(&fixture("deep"), directory_mount("deep"), 120, 40);
    send(&mut a, &mut c, key(KeyCode::End));
    sized(&mut a, 80, 24);
    tick(&mut a, &mut c, 1.0);
    let s = screen(&a, 80, 24);
    assert!(s.contains("svc-29.service"), "{s}");
    assert_eq!(s, screen(&a, 80, 24), "drawing changes nothing");
}

#[test]
fn tiny_terminal_does_not_panic() {
    let (a, _c, _d) = systemd_busy("pure-v2-systemd", JOURNALD, 80, 24);
    for (w, h) in [(1, 1), (10, 5), (20, 8), (40, 10), (200, 3), (3, 200)] {
        let _ = screen(&a, w, h);
    }
    let mut a = a;
    a.mode = cgtop::app::Mode::Help;
    for (w, h) in [(1, 1), (10, 5), (79, 2)] {
        let _ = screen(&a, w, h);
    }
}

/// Issue 7 items 9-11 on screen: io.stat as a 5.15-era kernel prints it
/// (two device numbers on one line, the counters the second's) and with an
/// `(unknown)` device; memory.events without a key. The IO page gives the
/// rates to 254:0 (vda), not to 253:10, lists `(unknown)` with its rates,
/// and the memory page shows `-` for the missing key, not 0.
#[test]
fn io_page_follows_every_kernels_io_stat() {
    let dir = copy_fixture("memory-limited");
    let root = dir.path().to_path_buf();
    let io_stat = |rb: u64, wb: u64| {
        format!(
            "253:10 254:0 rbytes={rb} wbytes={wb} rios=1 wios=1 dbytes=0 dios=0\n\
             (unknown) rbytes={rb} wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
        )
    };
    let pg = root.join(PG);
    std::fs::write(pg.join("io.stat"), io_stat(0, 0)).unwrap();
    // no "oom" line
    std::fs::write(
        pg.join("memory.events"),
        "low 0\nhigh 1342\nmax 0\noom_kill 1\n",
    )
    .unwrap();
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, PG);
    std::fs::write(pg.join("io.stat"), io_stat(1 << 20, 3 << 20)).unwrap();
    tick(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('3'));
    let s = screen(&a, 120, 40);
    let row = |start: &str| {
        s.lines()
            .map(|l| l.trim_start_matches(['>', ' ', '|']))
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no row {start:?} on\n{s}"))
            .to_owned()
    };
    let vda = row("vda");
    assert!(
        vda.contains("254:0") && vda.contains("1.00 MiB") && vda.contains("3.00 MiB"),
        "{vda}"
    );
    assert!(!s.contains("253:10"), "253:10 had no counters:\n{s}");
    let unknown = row("(unknown)");
    assert!(unknown.contains("1.00 MiB"), "{unknown}");
    send(&mut a, &mut c, ch('2'));
    let s = screen(&a, 120, 40);
    let oom = s
        .lines()
        .find(|l| l.contains("  oom ") || l.contains("|  oom"))
        .unwrap_or_else(|| panic!("no oom row on\n{s}"));
    let cells: Vec<&str> = oom
        .trim_matches(['>', ' ', '|'])
        .split_whitespace()
        .collect();
    assert_eq!(cells, ["oom", "-", "-"], "{oom}");
}
