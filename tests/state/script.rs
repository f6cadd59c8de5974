//! The log screen's `e` (issue 10 item 4): this session's writes, as the
//! action log has them, handed to the writer thread as one request
//! (`app::update` writes no file), and the message line saying where the
//! scripts went; then the writer's half, `ActionLog::write_session_script`,
//! on a temporary log directory.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::writes::WriteRequest;
use cgtop::app::{Effect, Level, Mode, Msg};
use cgtop::cgroupfs::Limit;
use cgtop::model::files::script::{Place, What};
use cgtop::model::write;
use cgtop::model::WriteOutcome;
use cgtop::source::actionlog::ActionLog;
use common::lab::*;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

const T0: u64 = 1_714_564_800;

fn export_requests(fx: &[Effect]) -> Vec<&Vec<cgtop::model::files::script::Entry>> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Write(WriteRequest::ExportScript(v)) => Some(v),
            _ => None,
        })
        .collect()
}

#[test]
fn e_in_the_log_hands_the_sessions_writes_to_the_writer() {
    let (mut a, mut c, _dir) = lab();
    // nothing written yet: nothing to export, and no request
    send(&mut a, &mut c, ch('L'));
    assert!(matches!(a.mode, Mode::Log { .. }));
    let fx = send(&mut a, &mut c, ch('e'));
    assert!(export_requests(&fx).is_empty());
    let st = a.status.clone().unwrap();
    assert_eq!(st.level, Level::Info);
    assert!(st.text.contains("no write in this session"), "{}", st.text);
    send(&mut a, &mut c, ch('q'));

    // two writes finished (one failed), as the writer thread reports them
    let lab_g = g("lab");
    let done = WriteOutcome::done(
        write::set_pids_max(&lab_g, Limit::Value(64)),
        Some("max\n".into()),
        Some("64\n".into()),
    )
    .at(Some(lab_g.clone()));
    let mkdir =
        WriteOutcome::done(write::create_group(&g("lab/new")), None, None).at(Some(g("lab/new")));
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![done, mkdir],
            unix_secs: T0,
        },
    );
    send(&mut a, &mut c, ch('L'));
    let fx = send(&mut a, &mut c, ch('e'));
    // the screen stays; the request holds both, in order, as logged
    assert!(matches!(a.mode, Mode::Log { .. }));
    let reqs = export_requests(&fx);
    assert_eq!(reqs.len(), 1, "{fx:?}");
    let entries = reqs[0];
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].place, Place::V2);
    assert_eq!(entries[0].group, b"/lab");
    assert_eq!(entries[0].time, "2024-05-01T12:00:00Z");
    assert!(
        matches!(&entries[0].what, What::Write { file, old, new, .. }
            if file == b"pids.max" && old.as_deref() == Some(&b"max"[..]) && new == b"64")
    );
    assert_eq!(entries[1].what, What::Mkdir);
    assert_eq!(entries[1].group, b"/lab/new");

    // the writer's answer: where, on the message line
    send(
        &mut a,
        &mut c,
        Msg::ScriptWritten(Ok((
            PathBuf::from("/s/cgtop-20240501-120000.sh"),
            PathBuf::from("/s/cgtop-20240501-120000.undo.sh"),
        ))),
    );
    assert_eq!(
        a.status.clone().unwrap().text,
        "script: /s/cgtop-20240501-120000.sh (undo: /s/cgtop-20240501-120000.undo.sh)"
    );
    send(
        &mut a,
        &mut c,
        Msg::ScriptWritten(Err("/s: refused: /s is a symbolic link".into())),
    );
    let st = a.status.clone().unwrap();
    assert_eq!(st.level, Level::Error);
    assert!(st.text.starts_with("script not written: "), "{}", st.text);
}

#[test]
fn the_log_screen_says_its_key() {
    let (mut a, mut c, _dir) = lab();
    send(&mut a, &mut c, ch('L'));
    let s = screen(&a, 120, 40);
    assert!(s.contains("e script"), "{s}");
}

#[test]
fn the_session_script_is_written_beside_the_log_as_new_0700_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("state/cgtop/actions.log");
    let al = ActionLog::at(log.clone());
    let o = WriteOutcome::done(
        write::set_pids_max(&g("lab"), Limit::Value(64)),
        Some("max\n".into()),
        Some("64\n".into()),
    )
    .at(Some(g("lab")));
    let entries = cgtop::source::actionlog::entries_of(
        [(T0, &o)],
        &cgtop::model::host::layout::Layout::default(),
    );
    let at = UNIX_EPOCH + Duration::from_secs(T0);
    let (apply, undo) = al.write_session_script(&entries, at).unwrap();
    let d = dir.path().join("state/cgtop");
    assert_eq!(apply, d.join("cgtop-20240501-120000.sh"));
    assert_eq!(undo, d.join("cgtop-20240501-120000.undo.sh"));
    for p in [&apply, &undo] {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(m.permissions().mode() & 0o7777, 0o700);
    }
    let text = std::fs::read_to_string(&apply).unwrap();
    assert!(
        text.contains("cg_write \"$cg_h0\" 'lab' 'pids.max' '64' exact '64'"),
        "{text}"
    );
    assert!(
        text.contains("#   undo  cgtop-20240501-120000.undo.sh"),
        "{text}"
    );
    let u = std::fs::read_to_string(&undo).unwrap();
    assert!(
        u.contains("cg_write \"$cg_h0\" 'lab' 'pids.max' 'max' exact 'max'"),
        "{u}"
    );
    // the same second again: new names, the first files kept
    let (a2, _) = al.write_session_script(&entries, at).unwrap();
    assert_eq!(a2, d.join("cgtop-20240501-120000-1.sh"));
    assert_eq!(std::fs::read_to_string(&apply).unwrap(), text);
    // a log directory that is a symlink: refused
    let other = tempfile::tempdir().unwrap();
    let linked = dir.path().join("linked");
    std::os::unix::fs::symlink(other.path(), &linked).unwrap();
    let bad = ActionLog::at(linked.join("actions.log"));
    let e = bad.write_session_script(&entries, at).unwrap_err();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
}
