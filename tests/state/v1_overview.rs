//! The overview of a group on a v1-only host: v1 has no cgroup.type, so a
//! group there has none, and it is not "root" (only the root is).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::v1detail_fixture;

use cgtop::model::{MountInfo, MountMode};
use common::*;
use std::sync::Arc;
use v1detail_fixture::{hiers_of, layout_tree, WEB};

#[test]
fn a_v1_group_has_no_type_and_is_not_called_root() {
    let t = layout_tree();
    std::fs::remove_dir_all(t.path().join("unified")).unwrap();
    let root = t.path().join("systemd");
    let mode = MountMode::V1 {
        v1_controllers: ["blkio", "cpu", "cpuacct", "freezer", "memory", "pids"]
            .map(String::from)
            .to_vec(),
    };
    let (mut a, mut c) = app_on(
        &root,
        MountInfo {
            root: root.clone(),
            mode,
        },
        120,
        40,
    );
    c.set_hiers(Arc::new(hiers_of(t.path())));
    select(&mut a, &mut c, WEB);
    tick(&mut a, &mut c, 1.0);
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 120, 40);
    assert!(!s.contains("type root"), "{s}");
    assert!(s.contains("type -"), "{s}");
    // the root still is the root
    select(&mut a, &mut c, "/");
    tick(&mut a, &mut c, 2.0);
    assert!(screen(&a, 120, 40).contains("type root"));
}
