//! A subtree of the test's sandbox delegated to a user as systemd's
//! `Delegate=` does, groups its owner makes and chowns to the other uids
//! of a user namespace, the event watcher started over the sandbox, and
//! what it saw: for the attacks on whose the events are (`event_owners`,
//! `event_owners_subordinate`, `event_owners_root_range`).

use crate::common::sandbox::Sandbox;
use cgtop::model::account::Account;
use cgtop::model::time::events::{Event, EventKind};
use cgtop::model::GroupPath;
use cgtop::source::events::{spawn, WatchHandle, Watched};
use cgtop::source::hier::Hier;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Makes the sandbox's group `name` and gives it to `owner`: its
/// directory and the files a delegate writes. Returns its directory.
pub fn delegated(sb: &mut Sandbox, name: &str, owner: u32) -> PathBuf {
    sb.mkdir(name);
    let dir = sb.dir(name);
    for f in ["cgroup.procs", "cgroup.threads", "cgroup.subtree_control"] {
        std::os::unix::fs::chown(dir.join(f), Some(owner), Some(owner)).unwrap();
    }
    std::os::unix::fs::chown(&dir, Some(owner), Some(owner)).unwrap();
    dir
}

/// The event watcher over the sandbox's top, once its first status says
/// the walk at the start is done (within `wait`).
pub fn started_watcher(sb: &Sandbox, wait: Duration) -> (WatchHandle, Receiver<Watched>) {
    let (tx, rx) = mpsc::channel();
    let cfg = crate::common::watch_config(sb.top.clone());
    let h = spawn(Arc::new(Hier::open(&sb.root).unwrap()), cfg, tx).unwrap();
    loop {
        match rx.recv_timeout(wait) {
            Ok(Watched::Status(_)) => break,
            Ok(_) => {}
            Err(e) => panic!("the watcher never said it started: {e}"),
        }
    }
    (h, rx)
}

/// The events a started watcher sent within 200 ms (none on a timeout).
pub fn received(rx: &Receiver<Watched>) -> Vec<Event> {
    match rx.recv_timeout(Duration::from_millis(200)) {
        Ok(Watched::Events(e)) => e,
        _ => Vec::new(),
    }
}

/// The events `next` gives, until `done` holds of them all or `limit` has
/// passed.
pub fn events_until(
    limit: Duration,
    mut next: impl FnMut() -> Vec<Event>,
    done: impl Fn(&[Event]) -> bool,
) -> Vec<Event> {
    let mut got = Vec::new();
    let until = Instant::now() + limit;
    while !done(&got) && Instant::now() < until {
        got.extend(next());
    }
    got
}

/// The events of `got` from groups below `theirs` (not `theirs` itself).
pub fn events_below(got: &[Event], theirs: &GroupPath) -> Vec<Event> {
    got.iter()
        .filter(|e| is_below(e, theirs))
        .cloned()
        .collect()
}

/// The groups below `theirs` that events of `got` came from.
pub fn groups_below(got: &[Event], theirs: &GroupPath) -> HashSet<GroupPath> {
    got.iter()
        .filter(|e| is_below(e, theirs))
        .map(|e| e.path.clone())
        .collect()
}

fn is_below(e: &Event, theirs: &GroupPath) -> bool {
    e.path.is_within(theirs) && e.path != *theirs
}

/// Root's group `sys`'s `populated 1` among `got`: root's, as its group is.
pub fn roots_populated(got: &[Event], sys: &GroupPath) -> Event {
    let e = got
        .iter()
        .find(|e| e.path == *sys && e.kind == EventKind::Populated(true))
        .unwrap_or_else(|| panic!("no populated event of {sys}: {got:?}"))
        .clone();
    assert_eq!(e.owner, Some(Account::Uid(0)), "{e:?}");
    e
}

/// The uid that owns a group's directory.
pub fn owner_of(sb: &Sandbox, g: &GroupPath) -> u32 {
    std::fs::metadata(sb.group_dir(g)).unwrap().uid()
}

/// A user namespace's uid map, as written to /proc/PID/uid_map: lines of
/// the first uid inside, the first outside, and how many.
pub type UidMap<'a> = &'a [(u32, u32, u32)];

/// A shell of `uid`'s, in a user namespace of its own where it is root,
/// makes `groups` groups `g0`, `g1`, ... in `dir` and chowns group i to
/// the namespace's uid i + 1. Root writes the namespace's maps (`uid_map`,
/// and gid 0 to `uid`) as `newuidmap` does for a user's /etc/subuid range,
/// or a container manager for a container. Returns once the last group is
/// owned by the host uid the map gives for it.
pub fn groups_chowned_in_a_user_namespace(
    sb: &mut Sandbox,
    dir: &Path,
    uid: u32,
    uid_map: UidMap<'_>,
    groups: u32,
) {
    let script = format!(
        "until grep -q . /proc/self/uid_map; do sleep 0.02; done; cd '{}' && i=0; \
         while [ $i -lt {groups} ]; do mkdir g$i && chown $((i+1)) g$i || exit 1; \
         i=$((i+1)); done",
        dir.display()
    );
    let pid = sb.spawn_as(uid, &["unshare", "--user", "sh", "-c", &script]);
    let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/user")).ok();
    let t0 = Instant::now();
    while ns(&pid.to_string()) == ns("self") || ns(&pid.to_string()).is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "uid {uid}'s shell never made its namespace"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut map = String::new();
    for (inside, outside, n) in uid_map {
        map.push_str(&format!("{inside} {outside} {n}\n"));
    }
    std::fs::write(format!("/proc/{pid}/uid_map"), map).unwrap();
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("0 {uid} 1\n")).unwrap();
    let (inside, outside, _) = uid_map
        .iter()
        .find(|(inside, _, n)| (*inside..inside + n).contains(&groups))
        .unwrap_or_else(|| panic!("the map {uid_map:?} has no uid {groups}"));
    let last = outside + groups - inside;
    let owner = |i: u32| {
        std::fs::metadata(dir.join(format!("g{i}")))
            .ok()
            .map(|m| m.uid())
    };
    while owner(groups - 1) != Some(last) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "uid {uid}'s shell did not make and chown its groups (g0 owned by {:?})",
            owner(0)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
