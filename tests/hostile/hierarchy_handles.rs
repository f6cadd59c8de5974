//! A hierarchy handle must be the hierarchy its place in the
//! layout names, or it writes nothing. A directory laid out like
//! /sys/fs/cgroup belongs to whoever made it (a user's directory, a
//! container's root seen through /proc/PID/root): its `memory` may be a
//! symlink swapped in after it was listed, or a mount of another
//! hierarchy. Real kernel: a group of the v1 sandbox
//! (`common::sandbox_v1`) in the freezer hierarchy, removed on drop;
//! nothing is ever written to it (a write handle is opened and dropped).
//! Without root or without a v1 freezer hierarchy the tests print
//! `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::sandbox_v1::V1Sandbox;
use cgtop::model::host::layout::{HierId, Layout, V1Mount};
use cgtop::source::hier::Hiers;
use std::path::{Path, PathBuf};

/// A prefix group in the freezer hierarchy (and in cgroup2 beside it):
/// its directory in the freezer hierarchy; `None` after a `skipped:` line.
fn freezer_group(label: &str) -> Option<(V1Sandbox, PathBuf)> {
    let sb = V1Sandbox::or_skip(label, &["freezer"])?;
    let dir = sb.dir_of("freezer", &sb.top);
    Some((sb, dir))
}

fn writable(hiers: &Hiers, id: HierId, file: &str) -> bool {
    hiers
        .get(id)
        .is_some_and(|h| h.open_write(Path::new(file)).is_ok())
}

#[test]
fn a_directory_named_memory_that_is_the_freezer_hierarchy_is_never_written() {
    let Some((_sb, dir)) = freezer_group("handles-memory") else {
        return;
    };
    // what a laid-out directory whose `memory` is (a mount of) the
    // freezer hierarchy gives: the place named memory, on a v1 superblock
    let layout = Layout {
        v2: None,
        v1: vec![V1Mount {
            dir: dir.clone(),
            controllers: vec!["memory".into()],
            name: None,
        }],
    };
    let hiers = Hiers::open(layout);
    assert!(
        !writable(&hiers, HierId::V1(0), "cgroup.procs"),
        "a write meant for memory would land in the freezer hierarchy"
    );
    // its own name: written as before
    let layout = Layout {
        v2: None,
        v1: vec![V1Mount {
            dir: dir.clone(),
            controllers: vec!["freezer".into()],
            name: None,
        }],
    };
    assert!(writable(
        &Hiers::open(layout),
        HierId::V1(0),
        "cgroup.procs"
    ));
}

#[test]
fn a_laid_out_directory_whose_hierarchy_became_a_symlink_is_not_followed() {
    let Some((_sb, dir)) = freezer_group("handles-swapped") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("freezer")).unwrap();
    std::fs::write(t.path().join("freezer/cgroup.procs"), "").unwrap();
    let layout = Layout::from_dir_names(t.path(), ["freezer"]);
    assert_eq!(layout.v1.len(), 1);
    // listed as a directory, then swapped for a symlink into the real
    // hierarchy (a prefix group: a subtree the operator never named)
    std::fs::remove_dir_all(t.path().join("freezer")).unwrap();
    std::os::unix::fs::symlink(&dir, t.path().join("freezer")).unwrap();
    let hiers = Hiers::open(layout);
    assert!(
        !writable(&hiers, HierId::V1(0), "cgroup.procs"),
        "the symlink was followed into cgroupfs"
    );
    assert!(
        hiers
            .get(HierId::V1(0))
            .unwrap()
            .read_text(Path::new("cgroup.procs"))
            .is_err(),
        "nothing read through the symlink either"
    );
}

#[test]
fn a_v1_root_given_through_a_symlink_still_works() {
    // /sys/fs/cgroup/cpu -> cpu,cpuacct on most hosts: --root names it
    let Some((_sb, dir)) = freezer_group("handles-link") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("fr");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let (_, _, layout) = cgtop::source::mount::check_root(&link).unwrap();
    let hiers = Hiers::open(layout);
    assert!(writable(&hiers, HierId::V1(0), "cgroup.procs"));
}
