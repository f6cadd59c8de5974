//! A hierarchy handle must be the hierarchy its place in the
//! layout names, or it writes nothing. A directory laid out like
//! /sys/fs/cgroup belongs to whoever made it (a user's directory, a
//! container's root seen through /proc/PID/root): its `memory` may be a
//! symlink swapped in after it was listed, or a mount of another
//! hierarchy. Real kernel: one `cgtop-test-<pid>-<n>` group in the v1
//! freezer hierarchy, removed on drop; nothing is ever written to it
//! (a write handle is opened and dropped). Without root or without a v1
//! freezer hierarchy the tests print `skipped: <reason>`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::host::layout::{HierId, Layout, V1Mount};
use cgtop::source::hier::Hiers;
use std::path::{Path, PathBuf};

/// The mount point of the v1 hierarchy holding `controller`.
fn v1_mount(controller: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split(' ');
        (post.next()? == "cgroup").then_some(())?;
        let opts = post.nth(1)?;
        let point = pre.split(' ').nth(4)?;
        opts.split(',')
            .any(|o| o == controller)
            .then(|| PathBuf::from(point))
    })
}

/// A prefix group in the freezer hierarchy; removed on drop.
struct Group(PathBuf);

impl Group {
    fn new() -> Result<Self, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("not root".into());
        }
        let mount = v1_mount("freezer").ok_or("no v1 freezer hierarchy")?;
        let dir = mount.join(format!(
            "cgtop-test-{}-{}",
            std::process::id(),
            crate::common::unique_n()
        ));
        std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
        Ok(Self(dir))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn writable(hiers: &Hiers, id: HierId, file: &str) -> bool {
    hiers
        .get(id)
        .is_some_and(|h| h.open_write(Path::new(file)).is_ok())
}

#[test]
fn a_directory_named_memory_that_is_the_freezer_hierarchy_is_never_written() {
    let g = match Group::new() {
        Ok(g) => g,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    // what a laid-out directory whose `memory` is (a mount of) the
    // freezer hierarchy gives: the place named memory, on a v1 superblock
    let layout = Layout {
        v2: None,
        v1: vec![V1Mount {
            dir: g.0.clone(),
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
            dir: g.0.clone(),
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
    let g = match Group::new() {
        Ok(g) => g,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("freezer")).unwrap();
    std::fs::write(t.path().join("freezer/cgroup.procs"), "").unwrap();
    let layout = Layout::from_dir_names(t.path(), ["freezer"]);
    assert_eq!(layout.v1.len(), 1);
    // listed as a directory, then swapped for a symlink into the real
    // hierarchy (a prefix group: a subtree the operator never named)
    std::fs::remove_dir_all(t.path().join("freezer")).unwrap();
    std::os::unix::fs::symlink(&g.0, t.path().join("freezer")).unwrap();
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
    let g = match Group::new() {
        Ok(g) => g,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("fr");
    std::os::unix::fs::symlink(&g.0, &link).unwrap();
    let (_, _, layout) = cgtop::source::mount::check_root(&link).unwrap();
    let hiers = Hiers::open(layout);
    assert!(writable(&hiers, HierId::V1(0), "cgroup.procs"));
}
