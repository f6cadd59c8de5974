//! A delegated user's events spread over many owners, on this host's
//! cgroup2. A user with subordinate ids (/etc/subuid: rootless podman's
//! 65,536 by default) can own their groups under any of those uids:
//! in a user namespace mapped by `newuidmap` (`podman unshare`), where
//! the user is root, `chown` of their own group to another uid of their
//! range is allowed (kernfs takes the chown; both ids are mapped), and
//! the host sees the group's directory owned by that subordinate uid. The
//! events list is fair by the uid owning an event's group
//! ([`Event::owner`]): a flood from groups of a hundred and fifty
//! subordinate uids is a hundred and fifty owners, each holding fewer
//! events than root's, so root's are the most and are the ones pushed off.
//!
//! Here the user does it: a shell of theirs in a new user namespace,
//! whose maps root writes as `newuidmap` would for a range of 150 uids
//! no account has (this machine's /etc/subuid is not edited), makes the
//! groups and chowns each to another uid of the range (the host sees
//! each group owned by another uid). A process then
//! moves through the groups, each move a `populated` change of two of
//! them. Those real events, and root's
//! group's real event, replayed past the list's cap: root's must stay,
//! as they do against the same flood from one owner
//! (`event_owners.rs`).

use crate::common::have;
use crate::common::sandbox::Sandbox;
use crate::delegated_watch::{delegated, started_watcher};
use cgtop::model::account::Account;
use cgtop::model::time::events::{Event, EventKind, EventList};
use cgtop::model::GroupPath;
use cgtop::source::accounts::Accounts;
use cgtop::source::events::{WatchCommand, Watched};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The delegated user: a uid no account on a test machine has.
const OWNER: u32 = 64_127;

/// The first of the user's subordinate uids the groups are owned by
/// (no account on a test machine has any of them).
const FIRST_SUB: u32 = 300_000;

/// How many groups, each of another subordinate uid.
const GROUPS: u32 = 150;

/// How many events root's groups hold in the list (a busy host's unit
/// restarts), fewer than any one flood needs to push past the cap.
const ROOTS: usize = 100;

#[test]
fn a_flood_from_a_users_groups_of_many_subordinate_uids_replaces_only_its_own_events() {
    let Some(mut sb) = Sandbox::or_skip() else {
        return;
    };
    if !have("setpriv") || !have("unshare") {
        println!("skipped: setpriv or unshare is not installed (the user's namespace)");
        return;
    }
    sb.mkdir("sys");
    let user = delegated(&mut sb, "user", OWNER);
    users_groups_of_subordinate_uids(&mut sb, &user);
    let (h, rx) = started_watcher(&sb, Duration::from_secs(10));
    // root's: a process of root's starts in sys
    sb.spawn_in("sys", "exec sleep 60");
    // the flood: a process goes through every group of the user's, twice
    let script = format!(
        "sleep 0.5; cd '{}' && for r in 1 2; do i=0; while [ $i -lt {GROUPS} ]; do \
         echo $$ > g$i/cgroup.procs; sleep 0.005; i=$((i+1)); done; done; sleep 60",
        user.display()
    );
    sb.spawn_in("user", &script);
    let sys = sb.path("sys");
    let theirs = sb.path("user");
    let mut got: Vec<Event> = Vec::new();
    // the user's groups the events came from
    let groups = |got: &[Event]| -> HashSet<GroupPath> {
        got.iter()
            .filter(|e| e.path.is_within(&theirs) && e.path != theirs)
            .map(|e| e.path.clone())
            .collect()
    };
    let until = Instant::now() + Duration::from_secs(30);
    while (!got.iter().any(|e| e.path == sys) || groups(&got).len() < GROUPS as usize)
        && Instant::now() < until
    {
        if let Ok(Watched::Events(e)) = rx.recv_timeout(Duration::from_millis(200)) {
            got.extend(e);
        }
    }
    h.send(WatchCommand::Stop);
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
    let seen = groups(&got);
    assert!(
        seen.len() >= GROUPS as usize / 2,
        "the flood's events came from {} groups: {seen:?}",
        seen.len()
    );
    // each group of another subordinate uid, each event of that uid's
    // account as the host's files say (here: every one unnamed)
    let accounts = Accounts::read();
    let mut uids = HashSet::new();
    for e in &theirs_events {
        let dir = sb.group_dir(&e.path);
        let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&dir).unwrap());
        assert!(
            (FIRST_SUB..FIRST_SUB + GROUPS).contains(&uid),
            "an event of a subordinate uid's group: {e:?} owned by {uid}"
        );
        assert_eq!(e.owner, Some(accounts.of(uid)), "{e:?} owned by {uid}");
        uids.insert(uid);
    }
    println!(
        "{} events of the user's groups of {} uids, {} in all",
        theirs_events.len(),
        uids.len(),
        got.len()
    );
    // root's events, then the flood's, again and again, past the cap
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
    assert_eq!(list.len(), EventList::CAP);
    let kept = crate::memory_events::kept(&list, &roots);
    assert_eq!(
        kept, ROOTS,
        "root's events pushed off by a flood of one user's groups \
         ({} dropped in all)",
        list.dropped
    );
}

/// The user's shell, in a user namespace where it is root (uid 0 there
/// is OWNER here, uids 1..=GROUPS are FIRST_SUB..), makes GROUPS groups
/// in its delegated `user` and chowns group i to uid i + 1 of the
/// namespace: the host sees FIRST_SUB + i. Root only writes the maps, as
/// `newuidmap`/`newgidmap` do for a user's /etc/subuid range.
fn users_groups_of_subordinate_uids(sb: &mut Sandbox, user: &std::path::Path) {
    let script = format!(
        "until grep -q . /proc/self/uid_map; do sleep 0.02; done; cd '{}' && i=0; \
         while [ $i -lt {GROUPS} ]; do mkdir g$i && chown $((i+1)) g$i || exit 1; \
         i=$((i+1)); done",
        user.display()
    );
    let id = OWNER.to_string();
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
            "the user's shell never made its namespace"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(
        format!("/proc/{pid}/uid_map"),
        format!("0 {OWNER} 1\n1 {FIRST_SUB} {GROUPS}\n"),
    )
    .unwrap();
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("0 {OWNER} 1\n")).unwrap();
    let owner = |i: u32| {
        std::fs::metadata(user.join(format!("g{i}")))
            .ok()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
    };
    while owner(GROUPS - 1) != Some(FIRST_SUB + GROUPS - 1) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the user's shell did not make and chown its groups (g0 owned by {:?})",
            owner(0)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
