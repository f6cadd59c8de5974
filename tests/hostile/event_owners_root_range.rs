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
use crate::delegated_watch::delegated;
use cgtop::model::account::Account;
use cgtop::model::time::events::{Event, EventKind, EventList};
use cgtop::model::GroupPath;
use cgtop::source::events::{WatchConfig, Watcher};
use cgtop::source::hier::Hier;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    containers_groups(&mut sb, &ct);
    let cfg = WatchConfig {
        start: sb.top.clone(),
        max_depth: None,
        max_watches: None,
        kmsg: None,
        mapping: None,
        clock: Instant::now(),
        clock_unix: Duration::from_secs(1_700_000_000),
        v1_memory: None,
    };
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
    let groups = |got: &[Event]| -> HashSet<GroupPath> {
        got.iter()
            .filter(|e| e.path.is_within(&theirs) && e.path != theirs)
            .map(|e| e.path.clone())
            .collect()
    };
    let mut got: Vec<Event> = Vec::new();
    let until = Instant::now() + Duration::from_secs(30);
    while (!got.iter().any(|e| e.path == sys) || groups(&got).len() < GROUPS as usize)
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(5));
        w.on_inotify();
        got.extend(w.take_ready());
    }
    sb.kill_all();
    let root_event = got
        .iter()
        .find(|e| e.path == sys && e.kind == EventKind::Populated(true))
        .unwrap_or_else(|| panic!("no populated event of {sys}: {got:?}"))
        .clone();
    assert_eq!(root_event.owner, Some(Account::Uid(0)), "{root_event:?}");
    let theirs_events: Vec<Event> = got
        .iter()
        .filter(|e| e.path.is_within(&theirs) && e.path != theirs)
        .cloned()
        .collect();
    assert!(
        groups(&got).len() >= GROUPS as usize / 2,
        "the flood's events came from {} groups",
        groups(&got).len()
    );
    for e in &theirs_events {
        let dir = sb.group_dir(&e.path);
        let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&dir).unwrap());
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
    let mut list = EventList::default();
    let mut roots = Vec::new();
    for i in 0..ROOTS {
        let mut e = root_event.clone();
        e.at += Duration::from_millis(i as u64);
        roots.push(e.clone());
        list.push(e);
    }
    for i in 0..EventList::CAP * 2 {
        let mut e = theirs_events[i % theirs_events.len()].clone();
        e.at += Duration::from_secs(1) + Duration::from_millis(i as u64);
        list.push(e);
    }
    let kept = crate::memory_events::kept(&list, &roots);
    assert_eq!(
        kept, ROOTS,
        "root's events pushed off by a container's flood ({} dropped in all)",
        list.dropped
    );
}

/// The container's shell, in a user namespace where it is root (uid 0
/// there is CT_ROOT here, the map root's range's first 65,536), makes
/// GROUPS groups in its delegated group and chowns group i to uid i + 1
/// of the namespace: the host sees CT_ROOT + i + 1.
fn containers_groups(sb: &mut Sandbox, ct: &std::path::Path) {
    let script = format!(
        "until grep -q . /proc/self/uid_map; do sleep 0.02; done; cd '{}' && i=0; \
         while [ $i -lt {GROUPS} ]; do mkdir g$i && chown $((i+1)) g$i || exit 1; \
         i=$((i+1)); done",
        ct.display()
    );
    let id = CT_ROOT.to_string();
    let pid = sb.spawn(&[
        "setpriv",
        "--reuid",
        &id,
        "--regid",
        &id,
        "--clear-groups",
        "unshare",
        "--user",
        "sh",
        "-c",
        &script,
    ]);
    let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/user")).ok();
    let t0 = Instant::now();
    while ns(&pid.to_string()) == ns("self") || ns(&pid.to_string()).is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the container's shell never made its namespace"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(
        format!("/proc/{pid}/uid_map"),
        format!("0 {CT_ROOT} 65536\n"),
    )
    .unwrap();
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("0 {CT_ROOT} 1\n")).unwrap();
    let owner = |i: u32| {
        std::fs::metadata(ct.join(format!("g{i}")))
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
    };
    while owner(GROUPS - 1) != Some(CT_ROOT + GROUPS) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the container's shell did not make and chown its groups (g0 owned by {:?})",
            owner(0)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
