//! A container of a root-run manager (LXD, Incus) floods the events
//! list, on this host's cgroup2. Such managers give a container uids
//! from root's own /etc/subuid range (`root:1000000:1000000000`): the
//! container's root is host uid 1,000,000, owns the container's
//! delegated group, and in its user namespace chowns groups it makes to
//! any uid of its map. Counted as the account of root (the range's
//! owner), the container's flood and root's (the operator's) events
//! were one source, the biggest, and root's own events went with the
//! flood's. Each 65,536 uids of root's ranges are an account of their
//! own (`Account::RootBlock`), so the container's flood replaces only
//! its own.
//!
//! Here the container: a shell of uid 1,000,000 in a new user namespace
//! whose map root writes as the manager would (`0 1000000 65536`)
//! makes groups in its delegated group and chowns each to another uid
//! of its map; a process then moves through them. The watcher reads
//! the accounts from a passwd and a subuid of the test's (the host's
//! /etc is not edited), with root's range in it.

use crate::common::have;
use crate::common::sandbox::Sandbox;
use crate::delegated_watch::{
    delegated, events_below, events_until, groups_below, groups_chowned_in_a_user_namespace,
    owner_of, roots_populated,
};
use crate::memory_events::{flooded, kept};
use cgtop::model::account::Account;
use cgtop::source::events::Watcher;
use cgtop::source::hier::Hier;
use std::sync::Arc;
use std::time::Duration;

/// The container's root as the host sees it: the first uid of root's
/// range.
const CT_ROOT: u32 = 1_000_000;

/// How many groups, each of another uid of the container's map.
const GROUPS: u32 = 100;

/// How many events root's groups hold in the list.
const ROOTS: usize = 100;

#[test]
fn a_containers_flood_from_roots_subordinate_range_replaces_only_its_own_events() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    if !have("setpriv") || !have("unshare") {
        println!("skipped: setpriv or unshare is not installed (the container's namespace)");
        return;
    }
    let etc = tempfile::tempdir().unwrap();
    std::fs::write(etc.path().join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
    std::fs::write(etc.path().join("subuid"), "root:1000000:1000000000\n").unwrap();
    sb.mkdir("sys");
    let ct = delegated(&mut sb, "ct", CT_ROOT);
    // the container's shell, root in its namespace (uid 0 there is
    // CT_ROOT here, the map the first 65,536 of root's range), makes its
    // groups: group i is owned by CT_ROOT + i + 1
    groups_chowned_in_a_user_namespace(&mut sb, &ct, CT_ROOT, &[(0, CT_ROOT, 65_536)], GROUPS);
    let cfg = crate::common::watch_config(sb.top.clone());
    let mut w = Watcher::new(Arc::new(Hier::open(&sb.root).unwrap()), cfg).unwrap();
    w.read_accounts_from(etc.path());
    sb.spawn_in("sys", "exec sleep 60");
    let script = format!(
        "cd '{}' && for r in 1 2; do i=0; while [ $i -lt {GROUPS} ]; do \
         echo $$ > g$i/cgroup.procs; sleep 0.03; i=$((i+1)); done; done; sleep 60",
        ct.display()
    );
    sb.spawn_in("ct", &script);
    let (sys, theirs) = (sb.path("sys"), sb.path("ct"));
    let next = || {
        std::thread::sleep(Duration::from_millis(5));
        w.on_inotify();
        w.take_ready()
    };
    let got = events_until(Duration::from_secs(30), next, |got| {
        got.iter().any(|e| e.path == sys) && groups_below(got, &theirs).len() >= GROUPS as usize
    });
    sb.kill_all();
    let root_event = roots_populated(&got, &sys);
    let theirs_events = events_below(&got, &theirs);
    let seen = groups_below(&got, &theirs).len();
    assert!(
        seen >= GROUPS as usize / 2,
        "the flood's events came from {seen} groups"
    );
    for e in &theirs_events {
        let uid = owner_of(&sb, &e.path);
        assert!(
            (CT_ROOT + 1..=CT_ROOT + GROUPS).contains(&uid),
            "{e:?} owned by {uid}"
        );
        assert_eq!(
            e.owner,
            Some(Account::RootBlock(CT_ROOT)),
            "{e:?} owned by {uid}: the container's, not root's"
        );
    }
    // root's events, then the container's, again and again, past the cap
    let (list, roots) = flooded(&root_event, ROOTS, &theirs_events);
    assert_eq!(
        kept(&list, &roots),
        ROOTS,
        "root's events pushed off by a container's flood ({} dropped in all)",
        list.dropped
    );
}
