//! The event watcher registers each group of a cgroup v1 memory
//! hierarchy for OOM notification: memory.oom_control and an eventfd
//! written to the group's cgroup.event_control. The group is ranked
//! (root's or a user's, by its directory's owner and inode) and then
//! registered; a user who owns a delegated v1 subtree can rename the
//! group away and make another (or rename another) under its name in
//! between (v1 renames within a parent). Registered by its path, the
//! eventfd goes to that other group, ranked as the first was, while the
//! watcher holds the first group's inode. Registered through the
//! group's directory held open, it goes to the group ranked, wherever
//! it was renamed to. Real kernel, the v1 memory hierarchy of this host,
//! the swap made at the watcher's own seam between the two steps.

use crate::common::sandbox_v1::V1Sandbox;
use cgtop::model::GroupPath;
use cgtop::source::events::{WatchConfig, Watcher};
use cgtop::source::hier::Hier;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The eventfds' signals (root's groups' + users') within `limit`, read
/// until one comes or the time is up.
fn signals_within(w: &Watcher, limit: Duration) -> u64 {
    let t0 = Instant::now();
    loop {
        let (r, u) = w.v1_signalled();
        if r + u > 0 || t0.elapsed() >= limit {
            return r + u;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_v1_oom_registration_goes_to_the_group_ranked_not_one_made_under_its_name() {
    let Some(sb) = V1Sandbox::or_skip("oom-reg", &["memory"]) else {
        return;
    };
    let mem = sb.hier("memory").mount.clone();
    // the watched tree: cgroup2's where the host has one beside v1
    let main = sb
        .hiers
        .iter()
        .find(|h| h.v2)
        .map_or_else(|| mem.clone(), |h| h.mount.clone());
    let cfg = WatchConfig {
        v1_memory: Some((Arc::new(Hier::open(&mem).unwrap()), None)),
        ..crate::common::watch_config(sb.top.clone())
    };
    let mut w = Watcher::new(Arc::new(Hier::open(&main).unwrap()), cfg).unwrap();
    let a = sb.mkdir("a");
    let dir = sb.dir_of("memory", &a);
    let away = dir.with_file_name("x");
    // between the ranking and the registration, the owner renames a
    // away and makes another a
    let swapped = Rc::new(Cell::new(false));
    let (d, x, s, g) = (dir.clone(), away.clone(), Rc::clone(&swapped), a.clone());
    w.before_v1_registration(Box::new(move |p: &GroupPath| {
        if *p == g && !s.get() {
            std::fs::rename(&d, &x).unwrap();
            std::fs::create_dir(&d).unwrap();
            s.set(true);
        }
    }));
    w.resync(&[sb.top.clone(), a.clone()]);
    assert!(swapped.get(), "the registration of {a} never ran");
    let s = w.status().v1_oom;
    assert_eq!((s.registered, s.failed), (2, 0), "{s:?}");
    let _ = w.v1_signalled();
    // the kernel signals a registration's eventfd when its group goes:
    // the group made under the name first, then the one ranked
    std::fs::remove_dir(&dir).unwrap();
    let for_new = signals_within(&w, Duration::from_secs(1));
    std::fs::remove_dir(&away).unwrap();
    let for_ranked = signals_within(&w, Duration::from_secs(3));
    assert_eq!(
        for_new, 0,
        "the registration for {a} went to the group made under its name"
    );
    assert!(
        for_ranked > 0,
        "the registration for {a} went to no group (its removal was not signalled)"
    );
}
