//! Attacks on the effect of an edit (issue 9 item 4): the figures after
//! a write must be the written group's, not another group's that took
//! its name.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::writes::effect_words;
use cgtop::app::Msg;
use cgtop::cgroupfs::Limit;
use cgtop::model::write;
use cgtop::model::WriteOutcome;
use common::lab::{g, lab, on};
use common::{send, tick};

/// A group written to, then removed and made again under its name
/// between two refreshes (a service restarted, or a delegated user doing
/// it on purpose): the new group's figures were compared with the old
/// one's as the write's effect. The group the write changed is gone.
#[test]
fn a_group_made_again_after_the_write_is_gone_not_measured() {
    let (mut a, _, dir) = lab();
    let root = dir.path();
    // no kept descriptors: a fixture's deleted file stays readable through
    // one (the kernel's gives ENODEV), so files are reopened each refresh,
    // and a group made again is seen at once, as on a real host
    let mut c =
        cgtop::source::collector::Collector::new(cgtop::source::collector::CollectorConfig {
            root: root.to_path_buf(),
            start: cgtop::model::GroupPath::root(),
            scan: cgtop::source::scan::ScanConfig {
                max_kept: 0,
                ..Default::default()
            },
            full_detail: false,
            sys_dev_block: common::fixture("sys-dev-block"),
        });
    on(&mut a, &mut c, "lab/dd");
    for t in 1..=5 {
        tick(&mut a, &mut c, f64::from(t));
    }
    let op = write::set_pids_max(&g("lab/dd"), Limit::Value(50));
    send(
        &mut a,
        &mut c,
        Msg::WriteFinished {
            outcomes: vec![WriteOutcome::done(op, None, None)],
            unix_secs: 1_714_564_800,
        },
    );
    // rmdir + mkdir: the same name, another directory (another inode)
    let old = root.join("lab/dd");
    let moved = root.join("lab-dd-old");
    std::fs::rename(&old, &moved).unwrap();
    std::fs::create_dir(&old).unwrap();
    for e in std::fs::read_dir(&moved).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), old.join(e.file_name())).unwrap();
        }
    }
    std::fs::remove_dir_all(&moved).unwrap();
    for t in 6..=12 {
        tick(&mut a, &mut c, f64::from(t));
    }
    let i = a.log.len() - 1;
    assert_eq!(
        effect_words(&a, i).as_deref(),
        Some("the group is gone; no figures after the write")
    );
}
