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
use crate::delegated_watch::{
    delegated, events_below, events_until, groups_below, groups_chowned_in_a_user_namespace,
    owner_of, received, roots_populated, started_watcher,
};
use crate::memory_events::{flooded, kept};
use cgtop::source::accounts::Accounts;
use cgtop::source::events::WatchCommand;
use std::collections::HashSet;
use std::time::Duration;

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
    // the user's shell, root in its namespace (uid 0 there is OWNER here,
    // uids 1..=GROUPS are FIRST_SUB..), makes its groups: group i is owned
    // by FIRST_SUB + i
    let map = [(0, OWNER, 1), (1, FIRST_SUB, GROUPS)];
    groups_chowned_in_a_user_namespace(&mut sb, &user, OWNER, &map, GROUPS);
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
    let got = events_until(
        Duration::from_secs(30),
        || received(&rx),
        |got| {
            got.iter().any(|e| e.path == sys) && groups_below(got, &theirs).len() >= GROUPS as usize
        },
    );
    h.send(WatchCommand::Stop);
    sb.kill_all();
    let root_event = roots_populated(&got, &sys);
    let theirs_events = events_below(&got, &theirs);
    let seen = groups_below(&got, &theirs);
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
        let uid = owner_of(&sb, &e.path);
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
    let (list, roots) = flooded(&root_event, ROOTS, &theirs_events);
    assert_eq!(
        kept(&list, &roots),
        ROOTS,
        "root's events pushed off by a flood of one user's groups \
         ({} dropped in all)",
        list.dropped
    );
}
