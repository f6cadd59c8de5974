//! Starting from a process: the find-a-process key (`#`) and `--pid`'s
//! landing, on the lab tree with the collector's answers made by hand
//! (`Collected::Found`: the search of /proc itself is the real binary's,
//! tests/cli/start_from_pid.rs). What is checked: the question goes to
//! the collector, the answer selects the group holding the process with
//! its folded path opened, the process page shows with the process
//! highlighted, Enter goes on to the next match, plain words when nothing
//! matches, and a container's group is named as the container.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::{self, App, DetailPage, Effect, Mode, Msg, Pane};
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collected, Collector, Command};
use cgtop::source::procs::{Found, PidRefusal, ProcessPlace};
use common::*;
use crossterm::event::KeyCode;
use std::time::Duration;

fn place(pid: u32, group: &str, command: &str) -> ProcessPlace {
    ProcessPlace {
        pid,
        group: GroupPath::new(group),
        command: command.into(),
    }
}

/// The note the prompt shows after the text.
fn note(a: &App) -> String {
    match &a.mode {
        Mode::FindProcess(p) => p.note.clone().unwrap_or_default(),
        m => panic!("not finding: {m:?}"),
    }
}

/// The selected group's process list arrives, with these processes.
fn processes_arrive(a: &mut App, c: &mut Collector, pids: &[u32]) {
    let p = a.selected.clone().unwrap();
    let mut f = c.read_inspection(&p, None, 0.0);
    f.processes = pids
        .iter()
        .map(|&pid| process(pid, "root", 0.0, 1, "worker"))
        .collect();
    app::update(a, Msg::Collected(Collected::Inspection(Box::new(f))));
}

#[test]
fn a_name_goes_to_each_matching_process_in_turn() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    // everything folded: the matches are in closed branches
    send(&mut a, &mut c, ch('*'));
    assert!(!visible_paths(&a).contains(&GroupPath::new("lab/dd")));
    send(&mut a, &mut c, ch('#'));
    type_text(&mut a, &mut c, "worker");
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(
        fx.contains(&Effect::Collector(Command::FindProcess("worker".into()))),
        "{fx:?}"
    );
    let found = Found {
        query: "worker".into(),
        matches: vec![
            place(4_190_202, "batch", "worker --queue b"),
            place(4_190_300, "lab/dd", "worker --queue c"),
        ],
        refusal: None,
    };
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Found(Box::new(found))),
    );
    assert_eq!(a.selected, Some(GroupPath::new("batch")));
    assert_eq!((a.page, a.pane), (DetailPage::Processes, Pane::Processes));
    assert!(
        note(&a).starts_with("1 of 2: PID 4190202 worker --queue b in /batch"),
        "{}",
        note(&a)
    );
    // its process list comes: the cursor on the process searched for
    processes_arrive(&mut a, &mut c, &[4_190_201, 4_190_202]);
    assert_eq!(a.proc_cursor, 1);
    // Enter, the text unchanged: the next match, its folded path opened
    let fx = send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(!fx
        .iter()
        .any(|e| matches!(e, Effect::Collector(Command::FindProcess(_)))));
    assert_eq!(a.selected, Some(GroupPath::new("lab/dd")));
    assert!(visible_paths(&a).contains(&GroupPath::new("lab/dd")));
    assert!(note(&a).starts_with("2 of 2: PID 4190300"), "{}", note(&a));
    // after the last: the first again
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.selected, Some(GroupPath::new("batch")));
    // Esc closes; the selection stays
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.selected, Some(GroupPath::new("batch")));
}

#[test]
fn nothing_found_is_said_in_words_and_the_selection_stays() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    let before = a.selected.clone();
    send(&mut a, &mut c, ch('#'));
    type_text(&mut a, &mut c, "999999");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let found = Found {
        query: "999999".into(),
        matches: Vec::new(),
        refusal: Some(PidRefusal::NoSuchProcess),
    };
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Found(Box::new(found))),
    );
    assert_eq!(note(&a), "PID 999999: no such process");
    // a name that nothing has
    for _ in 0..6 {
        send(&mut a, &mut c, key(KeyCode::Backspace));
    }
    type_text(&mut a, &mut c, "nosuch");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let found = Found {
        query: "nosuch".into(),
        matches: Vec::new(),
        refusal: None,
    };
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Found(Box::new(found))),
    );
    assert_eq!(
        note(&a),
        "no process has \"nosuch\" in its name or command line (in this view)"
    );
    assert_eq!(a.selected, before);
    // an answer to a search no longer asked for is dropped
    send(&mut a, &mut c, key(KeyCode::Esc));
    let late = Found {
        query: "batch".into(),
        matches: vec![place(1, "batch", "x")],
        refusal: None,
    };
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Found(Box::new(late))),
    );
    assert_eq!(a.selected, before);
}

#[test]
fn pid_at_start_lands_on_its_container_and_names_it() {
    const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
    let dir = lab_tree();
    let scope = format!("system.slice/docker-{ID}.scope");
    crate::common::group_like(dir.path(), &scope, "batch");
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, 120, 40);
    a.start_at_process(place(4_190_202, &scope, "nginx: master process"));
    let mut c = collector(dir.path());
    tick(&mut a, &mut c, 0.0);
    let group = GroupPath::new(&scope);
    assert_eq!(a.selected.as_ref(), Some(&group));
    assert!(visible_paths(&a).contains(&group));
    assert_eq!((a.page, a.pane), (DetailPage::Processes, Pane::Processes));
    let status = a.status.clone().unwrap().text;
    assert_eq!(
        status,
        format!("PID 4190202 nginx: master process: in docker container 046c7a5b3d2e, /{scope}")
    );
    processes_arrive(&mut a, &mut c, &[4_190_201, 4_190_202]);
    assert_eq!(a.proc_cursor, 1);
    let s = screen(&a, 120, 40);
    assert!(s.contains("in docker container 046c7a5b3d2e"), "{s}");
}

/// crun runs a podman container's process one level below its scope
/// (`libpod-<id>.scope/container`): `--pid` of it names the container
/// the group is in.
#[test]
fn pid_below_a_containers_scope_names_the_container() {
    const ID: &str = "6e341326aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5e1f00a12";
    let dir = lab_tree();
    let leaf = format!("machine.slice/libpod-{ID}.scope/container");
    crate::common::group_like(dir.path(), &leaf, "batch");
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        Duration::from_secs(1),
    );
    resize(&mut a, 120, 40);
    a.start_at_process(place(4_190_202, &leaf, "sleep"));
    let mut c = collector(dir.path());
    tick(&mut a, &mut c, 0.0);
    assert_eq!(a.selected.as_ref(), Some(&GroupPath::new(&leaf)));
    let status = a.status.clone().unwrap().text;
    assert_eq!(
        status,
        format!("PID 4190202 sleep: in podman container 6e341326aa11, /{leaf}")
    );
}

#[test]
fn a_long_match_on_the_prompt_line_ends_with_an_ellipsis() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 80, 24);
    send(&mut a, &mut c, ch('#'));
    type_text(&mut a, &mut c, "tmux");
    send(&mut a, &mut c, key(KeyCode::Enter));
    let found = Found {
        query: "tmux".into(),
        matches: vec![place(
            28_271,
            "batch",
            "tmux new-session -d -s smoke-28271 -x 80 -y 24 target/debug/cgtop",
        )],
        refusal: None,
    };
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Found(Box::new(found))),
    );
    let shot = screen(&a, 80, 24);
    let prompt = shot
        .lines()
        .find(|l| l.contains("find process"))
        .expect("the prompt line");
    assert!(prompt.contains("1 of 1: PID 28271 tmux"), "{prompt}");
    assert!(prompt.ends_with("…|"), "cut without an ellipsis: {prompt}");
}
