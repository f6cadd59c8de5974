//! The limits form (e) as state: keys fed to `app::update` on the lab
//! tree (`common::lab_tree`, as in tests/state/actions.rs: batch has cpu,
//! io, memory and pids; lab/dd has io only), the field's text, preview and
//! status asserted, and the screen read where the point is what it shows.
//! No terminal, no root, no /sys. Issue 12, item 4:
//!
//! - values show in the units an operator types (1.5G, not 1610612736);
//! - text typed in a field and not written goes when the cursor leaves it;
//! - the shell's editing keys (Ctrl-U, Ctrl-K, Ctrl-W, Home, End) work in
//!   every field, and Left/Right move the text cursor in every field; the
//!   device for io.max and io.latency is PgUp/PgDn, in any field;
//! - io.weight takes `default 200` (the file's own text) and `200`;
//! - a missing file says whether the controller is off, on cgroup v1, or
//!   lacks the feature in this kernel;
//! - a target on a disk the group has not used shows on the IO page.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::dialog::limits::{Field, Preview};
use cgtop::app::{App, Level, Mode};
use cgtop::model::{MountInfo, MountMode};
use cgtop::source::collector::Collector;
use common::lab::*;
use common::*;
use crossterm::event::KeyCode;
use std::path::Path;

/// The lab tree, writable, on `mount`; `edit` changes the tree's files
/// before `path` is read in full; the form open on `path`.
fn form_on(
    mount: MountInfo,
    path: &str,
    edit: impl FnOnce(&Path),
) -> (App, Collector, tempfile::TempDir) {
    let dir = lab_tree();
    edit(dir.path());
    let (mut a, mut c) = app_on(dir.path(), mount, 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, path);
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('e'));
    assert!(matches!(a.mode, Mode::Limits(_)), "{:?}", a.status);
    (a, c, dir)
}

fn batch_form() -> (App, Collector, tempfile::TempDir) {
    form_on(pure_v2_mount(), "batch", |_| {})
}

fn field_of<'a>(a: &'a App, file: &str) -> &'a Field {
    form(a)
        .fields
        .iter()
        .find(|f| f.kind.file() == file)
        .unwrap_or_else(|| panic!("no field {file}"))
}

/// What Enter would write in the current field (a failure otherwise).
fn writes(a: &App) -> (String, String) {
    match &field(a).preview {
        Preview::Writes { contents, file } => (contents.clone(), file.clone()),
        p => panic!("{} writes nothing: {p:?}", field(a).kind.file()),
    }
}

/// The form's row of `file` on a 120x40 screen.
fn row(a: &App, file: &str) -> String {
    screen(a, 120, 40)
        .lines()
        .find(|l| l.contains(&format!("│{file} ")))
        .unwrap_or_else(|| panic!("no row for {file}"))
        .to_owned()
}

#[test]
fn current_values_show_in_the_units_that_are_typed() {
    let (a, _c, _d) = form_on(pure_v2_mount(), "batch", |root| {
        let b = root.join("batch");
        std::fs::write(b.join("memory.max"), "1610612736\n").unwrap();
        std::fs::write(b.join("memory.high"), "1000000000\n").unwrap();
        std::fs::write(b.join("memory.low"), "536870912\n").unwrap();
        std::fs::write(
            b.join("io.max"),
            "254:0 rbps=2097152 wbps=max riops=max wiops=120\n",
        )
        .unwrap();
        std::fs::write(b.join("io.latency"), "254:0 target=10000\n").unwrap();
    });
    let max = row(&a, "memory.max");
    assert!(max.contains(" 1.5G "), "{max}");
    assert!(!max.contains("1610612736"), "{max}");
    assert!(row(&a, "memory.low").contains(" 512M "));
    // no short text is exactly 1000000000 bytes: rounded, and it says so
    let high = row(&a, "memory.high");
    assert!(high.contains(" ~954M "), "{high}");
    // io.max and io.latency as the fields take them, on the device's name
    let io = row(&a, "io.max");
    assert!(io.contains(" vda rbps=2M wiops=120 "), "{io}");
    let lat = row(&a, "io.latency");
    assert!(lat.contains(" vda 10ms "), "{lat}");
}

#[test]
fn text_left_unwritten_goes_when_the_cursor_leaves_the_field() {
    let (mut a, mut c, _d) = batch_form();
    goto(&mut a, &mut c, "memory.max");
    type_text(&mut a, &mut c, "2 XB");
    // Enter refuses; the text stays to be put right
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(field(&a).input.as_str(), "2 XB");
    assert!(matches!(field(&a).preview, Preview::Invalid(_)));
    // leaving the field drops it: the row shows the file's value again
    send(&mut a, &mut c, key(KeyCode::Down));
    let left = field_of(&a, "memory.max");
    assert_eq!(left.input.as_str(), "");
    assert_eq!(left.preview, Preview::Empty);
    let s = a.status.as_ref().expect("a status");
    assert_eq!(s.level, Level::Info);
    assert!(s.text.contains("memory.max not written"), "{}", s.text);
    assert!(!row(&a, "memory.max").contains("2 XB"));
    // and coming back finds it empty, Tab and S-Tab alike
    send(&mut a, &mut c, key(KeyCode::BackTab));
    assert_eq!(field(&a).kind.file(), "memory.max");
    assert!(field(&a).input.is_empty());
    type_text(&mut a, &mut c, "1G");
    send(&mut a, &mut c, key(KeyCode::Tab));
    assert!(field_of(&a, "memory.max").input.is_empty());
}

#[test]
fn a_valid_value_not_written_goes_too_and_moving_within_an_empty_field_says_nothing() {
    let (mut a, mut c, _d) = batch_form();
    goto(&mut a, &mut c, "pids.max");
    type_text(&mut a, &mut c, "100");
    assert_eq!(writes(&a), ("100".into(), "pids.max".into()));
    send(&mut a, &mut c, key(KeyCode::Up));
    let f = field_of(&a, "pids.max");
    assert!(f.input.is_empty());
    assert_eq!(f.op, None);
    a.status = None;
    send(&mut a, &mut c, key(KeyCode::Up));
    assert_eq!(a.status, None);
}

#[test]
fn shell_editing_keys_work_in_the_form() {
    let (mut a, mut c, _d) = batch_form();
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "rbps=2M wbps=3M");
    // Ctrl-W: the word before the cursor
    send(&mut a, &mut c, ctrl('w'));
    assert_eq!(field(&a).input.as_str(), "rbps=2M ");
    // Home and End, Ctrl-A and Ctrl-E
    send(&mut a, &mut c, key(KeyCode::Home));
    type_text(&mut a, &mut c, "wiops=9 ");
    send(&mut a, &mut c, key(KeyCode::End));
    type_text(&mut a, &mut c, "riops=5");
    assert_eq!(field(&a).input.as_str(), "wiops=9 rbps=2M riops=5");
    send(&mut a, &mut c, ctrl('a'));
    send(&mut a, &mut c, ctrl('e'));
    // Ctrl-U: everything before the cursor
    send(&mut a, &mut c, key(KeyCode::Left));
    send(&mut a, &mut c, ctrl('u'));
    assert_eq!(field(&a).input.as_str(), "5");
    // Ctrl-K: from the cursor to the end
    send(&mut a, &mut c, key(KeyCode::Home));
    send(&mut a, &mut c, ctrl('k'));
    assert!(field(&a).input.is_empty());
    assert_eq!(field(&a).preview, Preview::Empty);
    // the same one editor in a field without a device
    goto(&mut a, &mut c, "memory.max");
    type_text(&mut a, &mut c, "512M");
    send(&mut a, &mut c, ctrl('u'));
    assert!(field(&a).input.is_empty());
}

#[test]
fn left_and_right_move_the_cursor_in_every_field_and_pgup_pgdn_pick_the_device() {
    let (mut a, mut c, _d) = batch_form();
    let vda = form(&a).device;
    assert_eq!(form(&a).devices[vda].name, "vda");
    // io.max: Left moves in the text, the device stays
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "wbps=2M");
    send(&mut a, &mut c, key(KeyCode::Left));
    send(&mut a, &mut c, key(KeyCode::Left));
    type_text(&mut a, &mut c, "1");
    send(&mut a, &mut c, key(KeyCode::Right));
    send(&mut a, &mut c, key(KeyCode::Right));
    type_text(&mut a, &mut c, "/s");
    assert_eq!(field(&a).input.as_str(), "wbps=12M/s");
    assert_eq!(form(&a).device, vda);
    assert_eq!(writes(&a).0, "254:0 wbps=12582912");
    // io.latency too
    goto(&mut a, &mut c, "io.latency");
    type_text(&mut a, &mut c, "0ms");
    send(&mut a, &mut c, key(KeyCode::Home));
    send(&mut a, &mut c, key(KeyCode::Right));
    type_text(&mut a, &mut c, "1");
    assert_eq!(field(&a).input.as_str(), "01ms");
    assert_eq!(form(&a).device, vda);
    // PgDn picks the next device from any field, and the per-device
    // previews follow it at once
    goto(&mut a, &mut c, "memory.max");
    type_text(&mut a, &mut c, "1G");
    send(&mut a, &mut c, key(KeyCode::PageDown));
    assert_ne!(form(&a).device, vda);
    assert_eq!(field(&a).input.as_str(), "1G");
    goto(&mut a, &mut c, "io.max");
    type_text(&mut a, &mut c, "wbps=2M");
    match &field(&a).preview {
        Preview::Invalid(e) => assert!(e.contains("loop0"), "{e}"),
        p => panic!("{p:?}"),
    }
    send(&mut a, &mut c, key(KeyCode::PageUp));
    assert_eq!(form(&a).device, vda);
    assert_eq!(writes(&a).0, "254:0 wbps=2097152");
}

#[test]
fn the_footer_and_the_device_line_state_the_device_rule() {
    let (a, _c, _d) = batch_form();
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("device for io.max and io.latency (PgUp/PgDn): vda (254:0)"),
        "{s}"
    );
    assert!(s.contains("PgUp/PgDn device"), "{s}");
    assert!(!s.contains("Left/Right"), "{s}");
}

#[test]
fn io_weight_takes_default_n_as_the_readme_says() {
    let (mut a, mut c, _d) = batch_form();
    goto(&mut a, &mut c, "io.weight");
    type_text(&mut a, &mut c, "default 200");
    assert_eq!(writes(&a), ("default 200".into(), "io.weight".into()));
    send(&mut a, &mut c, ctrl('u'));
    type_text(&mut a, &mut c, "200");
    assert_eq!(writes(&a), ("default 200".into(), "io.weight".into()));
    // a device's override is not this field's
    send(&mut a, &mut c, ctrl('u'));
    type_text(&mut a, &mut c, "254:0 50");
    match &field(&a).preview {
        Preview::Invalid(e) => assert!(e.contains("override"), "{e}"),
        p => panic!("{p:?}"),
    }
    // README says to type it
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("`default 200`"));
}

#[test]
fn a_feature_missing_from_the_kernel_is_not_a_controller_off() {
    // Debian's kernel: io is on, io.latency is not built in
    let (a, _c, _d) = form_on(pure_v2_mount(), "batch", |root| {
        std::fs::remove_file(root.join("batch/io.latency")).unwrap();
    });
    let r = row(&a, "io.latency");
    assert!(r.contains("(not in this kernel)"), "{r}");
    assert!(!r.contains("controller off"), "{r}");
    match &field_of(&a, "io.latency").preview {
        Preview::Missing(m) => assert!(m.to_string().contains("the io controller is on")),
        p => panic!("{p:?}"),
    }
}

#[test]
fn a_controller_on_cgroup_v1_says_so() {
    // a hybrid host whose memory and cpu are v1 hierarchies, io on v2
    let mount = MountInfo {
        root: "/sys/fs/cgroup/unified".into(),
        mode: MountMode::Hybrid {
            v1_controllers: ["cpu", "cpuacct", "memory"].map(String::from).to_vec(),
        },
    };
    let (a, _c, _d) = form_on(mount, "lab/dd", |_| {});
    for file in ["memory.max", "memory.swap.max", "cpu.max", "cpu.weight"] {
        let r = row(&a, file);
        assert!(r.contains("(on cgroup v1)"), "{r}");
        match &field_of(&a, file).preview {
            Preview::Missing(m) => {
                let words = m.to_string();
                assert!(words.contains("controller on cgroup v1"), "{words}");
                assert!(!words.contains("enable it in the parent"), "{words}");
            }
            p => panic!("{file}: {p:?}"),
        }
    }
    // pids is neither on v1 nor handed down to lab/dd: off
    assert!(row(&a, "pids.max").contains("(controller off)"));
}

#[test]
fn a_group_whose_controllers_are_all_on_v1_is_told_so() {
    // this machine's case: v2 holds only hugetlb
    let mount = MountInfo {
        root: "/sys/fs/cgroup/unified".into(),
        mode: MountMode::Hybrid {
            v1_controllers: ["cpu", "cpuacct", "memory", "blkio", "pids"]
                .map(String::from)
                .to_vec(),
        },
    };
    let dir = lab_tree();
    let dd = dir.path().join("lab/dd");
    for e in std::fs::read_dir(&dd).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("io.") {
            std::fs::remove_file(dd.join(name)).unwrap();
        }
    }
    let (mut a, mut c) = app_on(dir.path(), mount, 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, "lab/dd");
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('e'));
    assert_eq!(a.mode, Mode::Normal);
    let s = a.status.as_ref().expect("a status");
    assert!(s.text.contains("cgroup v1"), "{}", s.text);
    assert!(!s.text.contains("all off"), "{}", s.text);
}

#[test]
fn a_target_on_a_disk_the_group_has_not_used_shows_on_the_io_page() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('3'));
    // batch's io.stat is empty: it has done no IO
    assert!(screen(&a, 120, 40).contains("no IO yet"));
    // the writes land (as the writer leaves them) and the group is read
    // again, as the collector does right after a write
    let b = dir.path().join("batch");
    std::fs::write(b.join("io.latency"), "254:0 target=10000\n").unwrap();
    read_inspection(&mut a, &mut c, 2.0);
    let s = screen(&a, 120, 40);
    assert!(s.contains("io.latency target 10.0 ms"), "{s}");
    assert!(!s.contains("no IO yet"), "{s}");
    // io.max on another disk too, each under its device's row
    std::fs::write(
        b.join("io.max"),
        "7:0 rbps=max wbps=2097152 riops=max wiops=max\n",
    )
    .unwrap();
    read_inspection(&mut a, &mut c, 3.0);
    let s = screen(&a, 120, 40);
    assert!(s.contains("vda"), "{s}");
    assert!(s.contains("loop0"), "{s}");
    assert!(s.contains("io.latency target 10.0 ms"), "{s}");
    assert!(s.contains("wbps 2.00 MiB/s"), "{s}");
}

#[test]
fn a_users_largest_io_latency_target_is_said_in_a_few_characters() {
    // a delegated owner's own io.latency, the largest the file holds:
    // through the one formatter, not 17 digits of milliseconds
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, "batch");
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('3'));
    std::fs::write(
        dir.path().join("batch/io.latency"),
        "254:0 target=18446744073709551615\n",
    )
    .unwrap();
    read_inspection(&mut a, &mut c, 2.0);
    let s = screen(&a, 120, 40);
    assert!(s.contains("io.latency target 18P ms"), "{s}");
}
