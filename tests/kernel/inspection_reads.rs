//! The inspected group of this machine's real cgroup2 hierarchy, read
//! every refresh through descriptors kept from one refresh to the next
//! (pread at offset 0 of a kernfs file runs its `show` again): a value
//! another process writes shows in the next refresh, in its field and on
//! the raw page, and a group removed and made again under its name is
//! read from its new files (the old ones read ENODEV).
//!
//! Everything happens under `cgtop-test-<pid>-<n>` (`Sandbox`) and is
//! removed afterwards, also when a test fails. Skipped, with the reason,
//! when not root or without a writable cgroup2.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::source::collector::{Collector, Inspection, Refresh};
use common::sandbox::Sandbox;
use std::time::Duration;

fn next(c: &mut Collector, n: &mut u64) -> Refresh {
    *n += 1;
    c.refresh(Duration::from_secs(*n))
}

fn inspected(c: &mut Collector, n: &mut u64) -> Inspection {
    next(c, n).inspection.expect("an inspection")
}

fn raw<'a>(f: &'a Inspection, file: &str) -> &'a str {
    let (_, v) = (f.detail.raw.iter())
        .find(|(n, _)| n == file)
        .unwrap_or_else(|| panic!("{file} on the raw page"));
    v.as_deref().unwrap()
}

#[test]
fn values_written_by_another_process_show_through_the_kept_descriptors() {
    let Some(t) = Sandbox::or_skip() else {
        return;
    };
    t.mkdir("app");
    let app = t.path("app");
    let mut c = t.collector();
    c.set_inspected(Some(app.clone()));
    let mut n = 0;
    let f = inspected(&mut c, &mut n);
    assert_eq!(f.detail.freeze, Some(false));
    assert_eq!(raw(&f, "cgroup.max.depth"), "max");
    let kept = next(&mut c, &mut n).kept_fds;
    // written by this process, not through cgtop: the collector's
    // descriptors were opened before
    let dir = t.group_dir(&app);
    std::fs::write(dir.join("cgroup.max.depth"), "3").unwrap();
    std::fs::write(dir.join("cgroup.freeze"), "1").unwrap();
    let f = inspected(&mut c, &mut n);
    assert_eq!(raw(&f, "cgroup.max.depth"), "3");
    assert_eq!(f.detail.freeze, Some(true));
    assert_eq!(raw(&f, "cgroup.freeze"), "1");
    std::fs::write(dir.join("cgroup.freeze"), "0").unwrap();
    std::fs::write(dir.join("cgroup.max.depth"), "max").unwrap();
    let f = inspected(&mut c, &mut n);
    assert_eq!(raw(&f, "cgroup.max.depth"), "max", "a shorter text, whole");
    assert_eq!(f.detail.freeze, Some(false));
    // removed and made again between two refreshes: the kept files read
    // ENODEV and are opened anew
    std::fs::remove_dir(&dir).unwrap();
    t.mkdir("app");
    std::fs::write(dir.join("cgroup.max.depth"), "7").unwrap();
    let f = inspected(&mut c, &mut n);
    assert_eq!(raw(&f, "cgroup.max.depth"), "7");
    let again = next(&mut c, &mut n).kept_fds;
    assert_eq!(again, kept, "as many descriptors kept as before");
}
