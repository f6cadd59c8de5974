//! The event watcher (`source::events`) on fixture trees in tmpfs (which,
//! like kernfs, sends IN_MODIFY on a write): an event is delivered when
//! its group is removed right after, a group made after the start is
//! watched, a FIFO or symlink by an event file's name neither hangs nor
//! is followed, and a short watch budget keeps cgroup.events and
//! memory.events first and counts the rest.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::model::time::events::{Event, EventFile, EventKind, MemoryEvent};
use cgtop::model::GroupPath;
use cgtop::source::events::{
    spawn, KmsgState, Seed, WatchCommand, WatchConfig, WatchHandle, Watched, Watcher,
};
use cgtop::source::hier::Hier;
use std::fs;
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

const EVENTS0: &str = "populated 0\nfrozen 0\n";
const MEM0: &str = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n";
const MEM_OOM: &str = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n";

/// A group directory with the event files (and cgroup.procs, which makes
/// a directory a group for `--root`).
fn group(root: &Path, rel: &str) {
    let d = root.join(rel);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("cgroup.procs"), "").unwrap();
    fs::write(d.join("cgroup.events"), EVENTS0).unwrap();
    fs::write(d.join("memory.events"), MEM0).unwrap();
    fs::write(d.join("memory.swap.events"), "high 0\nmax 0\nfail 0\n").unwrap();
    fs::write(d.join("pids.events"), "max 0\n").unwrap();
}

/// A tree in tmpfs where there is one (/dev/shm), else in the temp dir.
fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    group(t.path(), "");
    group(t.path(), "a");
    group(t.path(), "a/job");
    group(t.path(), "b");
    t
}

fn config(max_watches: Option<usize>) -> WatchConfig {
    WatchConfig {
        max_watches,
        ..crate::common::watch_config(GroupPath::root())
    }
}

fn started(root: &Path) -> (WatchHandle, Receiver<Watched>) {
    let (tx, rx) = mpsc::channel();
    let hier = Arc::new(Hier::open(root).unwrap());
    let h = spawn(hier, config(None), tx).unwrap();
    // the first status says the initial walk is done
    match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(Watched::Status(s)) => assert_eq!((s.unwatched, s.kmsg), (0, KmsgState::Off)),
        other => panic!("no status first: {other:?}"),
    }
    (h, rx)
}

/// Events received within `limit`, until `enough` says so.
fn collect(
    rx: &Receiver<Watched>,
    limit: Duration,
    enough: impl Fn(&[Event]) -> bool,
) -> Vec<Event> {
    let until = Instant::now() + limit;
    let mut got = Vec::new();
    while !enough(&got) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        if let Ok(Watched::Events(e)) = rx.recv_timeout(left) {
            got.extend(e);
        }
    }
    got
}

fn oom_kill_of<'a>(events: &'a [Event], path: &str) -> Option<&'a Event> {
    events.iter().find(|e| {
        e.path == GroupPath::new(path)
            && matches!(
                e.kind,
                EventKind::Memory {
                    what: MemoryEvent::OomKill,
                    count: 1,
                    ..
                }
            )
    })
}

#[test]
fn an_oom_kill_is_delivered_though_its_group_is_removed_50_ms_later() {
    let t = tree();
    let (h, rx) = started(t.path());
    let t0 = Instant::now();
    fs::write(t.path().join("a/job/memory.events"), MEM_OOM).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    fs::remove_dir_all(t.path().join("a/job")).unwrap();
    let got = collect(&rx, Duration::from_secs(3), |e| {
        oom_kill_of(e, "a/job").is_some()
    });
    let seen = t0.elapsed();
    let ev = oom_kill_of(&got, "a/job").unwrap_or_else(|| panic!("no oom_kill: {got:?}"));
    println!("oom_kill seen after {seen:?}: {ev:?}");
    // the other counters of the same write, each with its difference
    assert!(got.iter().any(|e| e.path == GroupPath::new("a/job")
        && e.kind
            == EventKind::Memory {
                what: MemoryEvent::Max,
                count: 3,
                victim: None
            }));
    // the time is on the watcher's clock, the UNIX time beside it
    assert!(ev.at < Duration::from_secs(10));
    assert!((ev.unix_s - 1_700_000_000.0 - ev.at.as_secs_f64()).abs() < 1e-3);
    h.send(WatchCommand::Stop);
}

/// Waits until the watcher says it holds at least `n` watches (its
/// status comes whenever that changes), keeping the events that come
/// meanwhile; panics after 20 s.
fn wait_watches(rx: &Receiver<Watched>, n: usize, kept: &mut Vec<Event>) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "the watcher never held {n} watches");
        match rx.recv_timeout(left) {
            Ok(Watched::Status(s)) if s.watches >= n => return,
            Ok(Watched::Events(e)) => kept.extend(e),
            _ => {}
        }
    }
}

#[test]
fn a_group_made_after_the_start_is_watched_at_once() {
    let t = tree();
    let (tx, rx) = mpsc::channel();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let h = spawn(hier, config(None), tx).unwrap();
    // four groups, each its directory and four event files
    let mut early = Vec::new();
    wait_watches(&rx, 4 * 5, &mut early);
    // made as a group is made, then its files (kernfs has them at once;
    // here they come after the directory's IN_CREATE): the writes below
    // come once all its five watches are set, whenever that is
    group(t.path(), "b/new");
    wait_watches(&rx, 5 * 5, &mut early);
    assert!(early.is_empty(), "{early:?}");
    fs::write(t.path().join("b/new/memory.events"), MEM_OOM).unwrap();
    fs::write(
        t.path().join("b/new/cgroup.events"),
        "populated 1\nfrozen 0\n",
    )
    .unwrap();
    let got = collect(&rx, Duration::from_secs(20), |e| {
        oom_kill_of(e, "b/new").is_some() && e.iter().any(|e| e.kind == EventKind::Populated(true))
    });
    assert!(oom_kill_of(&got, "b/new").is_some(), "{got:?}");
    assert!(
        got.iter()
            .any(|e| e.path == GroupPath::new("b/new") && e.kind == EventKind::Populated(true)),
        "{got:?}"
    );
    // and one made below it while it is new (mkdir -p): x is a bare
    // directory (its watch only), y a group
    group(t.path(), "b/new/x/y");
    let mut early = Vec::new();
    wait_watches(&rx, 5 * 5 + 1 + 5, &mut early);
    assert!(early.is_empty(), "{early:?}");
    fs::write(t.path().join("b/new/x/y/pids.events"), "max 2\n").unwrap();
    let got = collect(&rx, Duration::from_secs(20), |e| !e.is_empty());
    assert_eq!(
        got.iter()
            .map(|e| (e.path.to_string(), e.kind.clone()))
            .collect::<Vec<_>>(),
        [("/b/new/x/y".to_owned(), EventKind::PidsMax { count: 2 })]
    );
    h.send(WatchCommand::Stop);
}

#[test]
fn a_fifo_or_symlink_by_an_event_files_name_is_not_watched_nor_followed() {
    let t = tree();
    group(t.path(), "fifo");
    group(t.path(), "link");
    let fifo = t.path().join("fifo/memory.events");
    fs::remove_file(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let link = t.path().join("link/memory.events");
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(t.path().join("a/memory.events"), &link).unwrap();
    // the walk and the baseline reads end: no open of the FIFO blocks
    let (tx, rx) = mpsc::channel::<Watched>();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let t0 = Instant::now();
    let w = Watcher::new(Arc::clone(&hier), config(None)).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(
        w.watched_files(&GroupPath::new("fifo")),
        [EventFile::Cgroup, EventFile::Swap, EventFile::Pids]
    );
    assert_eq!(
        w.watched_files(&GroupPath::new("link")),
        [EventFile::Cgroup, EventFile::Swap, EventFile::Pids]
    );
    drop(w);
    // through the thread: a change of the link's target is a's alone
    let h = spawn(hier, config(None), tx).unwrap();
    let _ = rx.recv_timeout(Duration::from_secs(5));
    fs::write(t.path().join("a/memory.events"), MEM_OOM).unwrap();
    let got = collect(&rx, Duration::from_millis(700), |_| false);
    assert!(oom_kill_of(&got, "a").is_some(), "{got:?}");
    assert!(got.iter().all(|e| e.path == GroupPath::new("a")), "{got:?}");
    h.send(WatchCommand::Stop);
}

#[test]
fn short_of_watches_cgroup_and_memory_events_come_first_and_the_rest_is_counted() {
    let t = tree();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    // 4 groups: a directory and two files each fit in 12
    let w = Watcher::new(Arc::clone(&hier), config(Some(12))).unwrap();
    assert_eq!(w.groups(), 4);
    for g in ["", "a", "a/job", "b"] {
        let p = if g.is_empty() {
            GroupPath::root()
        } else {
            GroupPath::new(g)
        };
        assert!(w.is_watched(&p), "{g}");
        assert_eq!(
            w.watched_files(&p),
            [EventFile::Cgroup, EventFile::Memory],
            "{g}"
        );
    }
    let s = w.status();
    assert_eq!((s.watches, s.unwatched), (12, 4));
    // with room for everything, nothing is left out
    let w = Watcher::new(Arc::clone(&hier), config(Some(20))).unwrap();
    assert_eq!((w.status().watches, w.status().unwatched), (20, 0));
    // fewer still: some groups keep nothing, and are counted too
    let w = Watcher::new(hier, config(Some(5))).unwrap();
    assert_eq!(w.status().unwatched, 4);
}

#[test]
fn a_resync_forgets_a_group_whose_directory_is_gone_and_adds_the_new() {
    let t = tree();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let mut w = Watcher::new(Arc::clone(&hier), config(None)).unwrap();
    assert_eq!(w.groups(), 4);
    fs::remove_dir_all(t.path().join("b")).unwrap();
    group(t.path(), "c");
    // the refresh lists c but not b (and not a/job, which is still there)
    let listed = [GroupPath::root(), GroupPath::new("a"), GroupPath::new("c")];
    w.resync(&listed);
    assert!(!w.is_watched(&GroupPath::new("b")));
    assert!(w.is_watched(&GroupPath::new("c")));
    assert!(w.is_watched(&GroupPath::new("a/job")));
    assert_eq!(w.groups(), 4);
}

/// A uid no account on a test machine has: a delegated group's owner.
const DELEGATE: u32 = 64_127;

#[test]
fn a_hit_counted_in_each_ancestors_memory_events_is_its_groups_owners() {
    let t = tree();
    // root's a, with a delegated subtree: a/job and a/job/hog (the
    // directories' owner is whose the events are)
    group(t.path(), "a/job/hog");
    for d in ["a/job", "a/job/hog"] {
        std::os::unix::fs::chown(t.path().join(d), Some(DELEGATE), Some(DELEGATE)).unwrap();
    }
    let mut w = Watcher::new(Arc::new(Hier::open(t.path()).unwrap()), config(None)).unwrap();
    // one memory.high hit in hog: the kernel counts it in hog and in
    // each ancestor but the root, the group's file first
    let high = MEM0.replace("high 0", "high 1");
    for d in ["a/job/hog", "a/job", "a"] {
        fs::write(t.path().join(d).join("memory.events"), &high).unwrap();
    }
    // and a hit of root's own b, in the same batch
    fs::write(t.path().join("b/memory.events"), &high).unwrap();
    w.on_inotify();
    let got = w.take_ready();
    let owners: Vec<_> = got.iter().map(|e| (e.path.clone(), e.owner)).collect();
    assert_eq!(got.len(), 4, "{owners:?}");
    // each owner's account, as the host's files say
    let accounts = cgtop::source::accounts::Accounts::read();
    for e in &got {
        let want = if e.path == GroupPath::new("b") {
            0
        } else {
            DELEGATE
        };
        assert_eq!(e.owner, Some(accounts.of(want)), "{owners:?}");
    }
}

fn victim_of(e: &Event) -> Option<(&[u8], u32)> {
    match &e.kind {
        EventKind::Memory {
            victim: Some(v), ..
        } => Some((v.task.as_slice(), v.pid)),
        _ => None,
    }
}

fn record(pri: u32, task_memcg: &str) -> Vec<u8> {
    format!(
        "{pri},77,123456,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg={task_memcg},task_memcg={task_memcg},task=python3,pid=4242,uid=1000\n"
    )
    .into_bytes()
}

#[test]
fn an_oom_kill_gets_the_kernels_line_in_either_order_and_goes_alone_without_it() {
    let t = tree();
    // the kernel log: any readable file opens as one (read here by hand)
    let log = tempfile::NamedTempFile::new().unwrap();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let cfg = WatchConfig {
        kmsg: Some(log.path().to_path_buf()),
        mapping: Some((GroupPath::root(), GroupPath::root())),
        ..config(None)
    };
    let mut w = Watcher::new(hier, cfg).unwrap();
    assert_eq!(w.status().kmsg, KmsgState::Reading);
    // the counter first: the oom_kill waits for its line
    fs::write(t.path().join("a/job/memory.events"), MEM_OOM).unwrap();
    w.on_inotify();
    let first = w.take_ready();
    assert!(oom_kill_of(&first, "a/job").is_none(), "{first:?}");
    assert!(!first.is_empty(), "max and oom go at once");
    w.on_kmsg_record(&record(3, "/a/job"));
    let joined = w.take_ready();
    let ev = oom_kill_of(&joined, "a/job").expect("joined");
    assert_eq!(victim_of(ev), Some((&b"python3"[..], 4242)));
    // the line first: the counter finds it
    w.on_kmsg_record(&record(3, "/b"));
    fs::write(t.path().join("b/memory.events"), MEM_OOM).unwrap();
    w.on_inotify();
    let got = w.take_ready();
    let ev = oom_kill_of(&got, "b").expect("joined at once");
    assert_eq!(victim_of(ev), Some((&b"python3"[..], 4242)));
    // a line written from user space (LOG_USER) is not the kernel's:
    // after the wait the kill goes without a victim
    fs::write(
        t.path().join("a/job/memory.events"),
        MEM_OOM.replace("oom_kill 1", "oom_kill 2"),
    )
    .unwrap();
    w.on_inotify();
    w.on_kmsg_record(&record(14, "/a/job"));
    assert!(oom_kill_of(&w.take_ready(), "a/job").is_none());
    std::thread::sleep(Duration::from_millis(60));
    let late = w.take_ready();
    let ev = oom_kill_of(&late, "a/job").expect("sent without its line");
    assert_eq!(victim_of(ev), None);
}

#[test]
fn a_file_that_goes_is_not_counted_unwatched_and_one_that_comes_is_watched() {
    let t = tree();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let mut w = Watcher::new(hier, config(None)).unwrap();
    let b = GroupPath::new("b");
    // a controller switched off above b: its files go
    fs::remove_file(t.path().join("b/pids.events")).unwrap();
    w.on_inotify();
    assert_eq!(
        w.watched_files(&b),
        [EventFile::Cgroup, EventFile::Memory, EventFile::Swap]
    );
    assert_eq!(w.status().unwatched, 0);
    // and on again: kernfs makes the file without an inotify event (here
    // the queue is not read), so a periodic resync finds it
    fs::write(t.path().join("b/pids.events"), "max 0\n").unwrap();
    let listed = [
        GroupPath::root(),
        GroupPath::new("a"),
        GroupPath::new("a/job"),
        b.clone(),
    ];
    for _ in 0..30 {
        w.resync(&listed);
    }
    assert_eq!(w.watched_files(&b).len(), 4);
}

/// A group of a cgroup v1 memory hierarchy laid out on tmpfs: its
/// cgroup.event_control, and its memory.oom_control unless `control` is
/// false (a group whose registration fails with ENOENT).
fn v1_group(root: &Path, rel: &str, control: bool) {
    let d = root.join(rel);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("cgroup.procs"), "").unwrap();
    fs::write(d.join("cgroup.event_control"), "").unwrap();
    if control {
        fs::write(
            d.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
        )
        .unwrap();
    }
}

/// The status of a watcher on `tree()` whose v1 memory hierarchy is `v1`.
fn v1_status(v1: &Path) -> cgtop::source::events::V1OomStatus {
    let t = tree();
    let cfg = WatchConfig {
        v1_memory: Some((Arc::new(Hier::open(v1).unwrap()), None)),
        ..config(None)
    };
    let w = Watcher::new(Arc::new(Hier::open(t.path()).unwrap()), cfg).unwrap();
    w.status().v1_oom
}

/// A v1 group whose OOM registration fails is counted with its errno,
/// and the watcher runs on: here a tree on tmpfs, where the write to
/// cgroup.event_control is refused (not a cgroup file system: EINVAL),
/// and a group without memory.oom_control (ENOENT).
#[test]
fn failed_v1_oom_registrations_are_counted_with_their_error() {
    let dir = || tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let v1 = dir();
    v1_group(v1.path(), "", true);
    v1_group(v1.path(), "a", true);
    v1_group(v1.path(), "a/b", true);
    let s = v1_status(v1.path());
    assert!(s.on, "{s:?}");
    assert_eq!(
        (s.registered, s.over_cap, s.failed, s.last_error),
        (0, 0, 3, Some(rustix::io::Errno::INVAL)),
        "{s:?}"
    );
    let v1 = dir();
    v1_group(v1.path(), "", false);
    v1_group(v1.path(), "no-oom-control", false);
    let s = v1_status(v1.path());
    assert_eq!(
        (s.registered, s.failed, s.last_error),
        (0, 2, Some(rustix::io::Errno::NOENT)),
        "{s:?}"
    );
}

/// The v1 OOM slots (the reviewer's F1): root's groups first, shallow
/// first, whether or not they hold a slot; a user's groups, however
/// many and however early they came (holding every slot), cannot keep
/// root's groups out; among the users' groups those holding a slot
/// keep it (no churn from a user's new groups).
#[test]
fn v1_oom_slots_go_to_roots_groups_first_and_a_user_cannot_take_them() {
    use cgtop::source::events::{v1_oom_slots, OomClass, V1Candidate};
    let c = |p: &str, class, held| V1Candidate {
        path: GroupPath::new(p),
        class,
        held,
    };
    // the user's 2,100 groups came first and hold every slot
    let mut cands: Vec<V1Candidate> = (1..=2100)
        .map(|i| c(&format!("u/g{i}"), OomClass::User, i <= 2048))
        .collect();
    cands.push(c("aaroot", OomClass::Root, false));
    cands.push(c("zroot", OomClass::Root, false));
    cands.push(c("zroot/deep/er", OomClass::Root, false));
    let slots = v1_oom_slots(&cands, 2048);
    let got = |p: &str| {
        slots[cands
            .iter()
            .position(|x| x.path == GroupPath::new(p))
            .unwrap()]
    };
    assert!(got("aaroot") && got("zroot") && got("zroot/deep/er"));
    assert_eq!(slots.iter().filter(|s| **s).count(), 2048);
    // the user's groups that lose out are theirs: three of the held
    assert_eq!(
        cands
            .iter()
            .zip(&slots)
            .filter(|(x, s)| x.held && !**s)
            .count(),
        3
    );
    // root's own: shallow first, then by path; held or not
    let cands = vec![
        c("a/b/c", OomClass::Root, true),
        c("z", OomClass::Root, false),
        c("a/b", OomClass::Root, true),
        c("u", OomClass::User, true),
    ];
    assert_eq!(v1_oom_slots(&cands, 2), vec![false, true, true, false]);
    // users': the held before the new, then shallow first
    let cands = vec![
        c("u/new", OomClass::User, false),
        c("u/old/deep", OomClass::User, true),
        c("u", OomClass::User, false),
    ];
    assert_eq!(v1_oom_slots(&cands, 2), vec![false, true, true]);
}

/// A watcher started after the first frame (cgtop's TUI) diffs its
/// baseline with the cgroup.events that frame showed: a group frozen or
/// emptied in between is an event, not the baseline; a group seen the
/// same, or not in the seed, gives none.
#[test]
fn a_late_watcher_reports_what_changed_since_the_first_frame() {
    use cgtop::cgroupfs::CgroupEvents;
    let t = tree();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let shown = |populated, frozen| CgroupEvents {
        populated: Some(populated),
        frozen: Some(frozen),
    };
    // the first frame: a populated and thawed, b populated and thawed
    let seed = Seed {
        cgroup: vec![
            (GroupPath::root(), shown(false, false)),
            (GroupPath::new("a"), shown(true, false)),
            (GroupPath::new("b"), shown(false, false)),
        ],
        ..Seed::default()
    };
    // before the watch: a is frozen and emptied; b unchanged
    fs::write(t.path().join("a/cgroup.events"), "populated 0\nfrozen 1\n").unwrap();
    let mut w = Watcher::seeded(Arc::clone(&hier), config(None), seed).unwrap();
    let got = w.take_ready();
    let kinds: Vec<(String, &EventKind)> =
        got.iter().map(|e| (e.path.to_string(), &e.kind)).collect();
    assert!(
        kinds.contains(&("/a".into(), &EventKind::Frozen(true))),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("/a".into(), &EventKind::Populated(false))),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.len(),
        2,
        "nothing for b or the groups without a seed: {kinds:?}"
    );
    // unseeded, the same start is the baseline: no event
    let w2 = Watcher::new(hier, config(None));
    assert!(w2.unwrap().take_ready().is_empty());
}

/// The watcher started after the first refresh (the TUI's) takes what
/// that refresh read as its baseline (`Collector::set_event_seed`): an
/// OOM kill counted in memory.events between the two is an event, said
/// to be between the refresh and the watch, not the baseline; so is one
/// in a group made after the refresh and before the watch (counted from
/// zero), while a group that had kills before the start gives none.
#[test]
fn an_oom_kill_between_the_first_refresh_and_the_watch_is_an_event() {
    let t = tree();
    // kills from before cgtop started: history, never an event
    fs::write(t.path().join("b/memory.events"), MEM_OOM).unwrap();
    let mut c = crate::common::collector(t.path());
    c.set_event_seed(true);
    let r = c.refresh(Duration::from_millis(100));
    let seed = r
        .events_seed
        .as_deref()
        .cloned()
        .expect("the first refresh's seed");
    assert!(c.refresh(Duration::from_millis(200)).events_seed.is_none());
    assert!(seed.listed.contains(&GroupPath::new("a/job")), "{seed:?}");
    assert!(
        seed.memory.iter().any(|(p, _)| *p == GroupPath::new("b")),
        "memory.events read: {seed:?}"
    );
    // between the refresh and the watch: a kill in a/job, a group made
    // with a kill already counted
    fs::write(t.path().join("a/job/memory.events"), MEM_OOM).unwrap();
    group(t.path(), "late");
    fs::write(t.path().join("late/memory.events"), MEM_OOM).unwrap();
    let hier = Arc::new(Hier::open(t.path()).unwrap());
    let mut cfg = config(None);
    cfg.clock = Instant::now().checked_sub(Duration::from_secs(2)).unwrap();
    let mut w = Watcher::seeded(Arc::clone(&hier), cfg, seed).unwrap();
    let got = w.take_ready();
    let mut kills: Vec<String> = got
        .iter()
        .filter(|e| e.kind.is_oom_kill())
        .map(|e| e.path.to_string())
        .collect();
    kills.sort();
    assert_eq!(kills, ["/a/job", "/late"], "{got:?}");
    for e in got.iter().filter(|e| e.kind.is_oom_kill()) {
        assert_eq!(e.since, Some(Duration::from_millis(100)), "{e:?}");
        assert!(e.at >= Duration::from_secs(2), "{e:?}");
    }
    // seen as it happens once watched: no window
    fs::write(
        t.path().join("a/memory.events"),
        "low 0\nhigh 0\nmax 1\noom 1\noom_kill 1\noom_group_kill 0\n",
    )
    .unwrap();
    w.on_inotify();
    let got = w.take_ready();
    let e = oom_kill_of(&got, "a").unwrap_or_else(|| panic!("{got:?}"));
    assert_eq!(e.since, None);
}

/// A chain `depth` groups deep (`c/c/...`), with a side group `s` (and
/// `s/t` below it) every fifth level: deeper than the directories a walk
/// holds (16), so the shallowest give way on the way down, and the side
/// groups are taken from an ancestor further up. Its groups, parent
/// first.
fn deep_tree(root: &Path, depth: usize) -> Vec<String> {
    let mut groups = vec![String::new()];
    let mut at = String::new();
    for i in 0..depth {
        at = if at.is_empty() {
            "c".to_owned()
        } else {
            format!("{at}/c")
        };
        group(root, &at);
        groups.push(at.clone());
        if i % 5 == 0 {
            for side in ["s", "s/t"] {
                group(root, &format!("{at}/{side}"));
                groups.push(format!("{at}/{side}"));
            }
        }
    }
    groups
}

fn path_of(g: &str) -> GroupPath {
    if g.is_empty() {
        GroupPath::root()
    } else {
        GroupPath::new(g)
    }
}

/// The watcher's setup opens each group from its nearest ancestor's
/// directory: on a chain 40 deep with side groups, every group's
/// directory and four event files are watched as in a shallow tree, a
/// symlink by an event file's name deep down is not followed, a FIFO not
/// opened for reading, and an OOM kill at the bottom is an event.
#[test]
fn a_deep_chain_is_watched_file_for_file_as_a_shallow_tree() {
    let t = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let root = t.path();
    fs::write(root.join("cgroup.procs"), "").unwrap();
    let groups = deep_tree(root, 40);
    let odd = "c/".repeat(29) + "c";
    fs::remove_file(root.join(&odd).join("cgroup.events")).unwrap();
    std::os::unix::fs::symlink("../cgroup.events", root.join(&odd).join("cgroup.events")).unwrap();
    fs::remove_file(root.join(&odd).join("pids.events")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join(&odd).join("pids.events"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let hier = Arc::new(Hier::open(root).unwrap());
    let mut w = Watcher::new(hier, config(None)).unwrap();
    // the root has cgroup.procs only: its directory is watched
    assert_eq!(w.groups(), groups.len());
    let mut files = 0;
    for g in &groups {
        let p = path_of(g);
        assert!(w.is_watched(&p), "{g}");
        let want: Vec<EventFile> = if g.is_empty() {
            Vec::new()
        } else if *g == odd {
            vec![EventFile::Memory, EventFile::Swap]
        } else {
            EventFile::ALL.to_vec()
        };
        assert_eq!(w.watched_files(&p), want, "{g}");
        files += want.len();
    }
    let s = w.status();
    assert_eq!((s.watches, s.unwatched), (groups.len() + files, 0));
    // an OOM kill at the bottom of the chain, read through its watch
    let bottom = groups.iter().rfind(|g| g.ends_with('c')).unwrap();
    fs::write(root.join(bottom).join("memory.events"), MEM_OOM).unwrap();
    w.on_inotify();
    let got = w.take_ready();
    assert!(oom_kill_of(&got, bottom).is_some(), "{got:?}");
}

/// A resync's retry (every 30th) looks again at each known group's files
/// from its ancestor's directory: an event file made anew deep in the
/// chain (another inode; its old watch on a dead one) is watched again,
/// and nothing else changes.
#[test]
fn a_retry_watches_again_a_file_made_anew_deep_in_a_chain() {
    let t = tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap());
    let root = t.path();
    fs::write(root.join("cgroup.procs"), "").unwrap();
    let groups = deep_tree(root, 30);
    let hier = Arc::new(Hier::open(root).unwrap());
    let mut w = Watcher::new(hier, config(None)).unwrap();
    let before = w.status().watches;
    let deep = "c/".repeat(24) + "c";
    let file = root.join(&deep).join("pids.events");
    // a new inode under the name; the inotify queue is not read, as if
    // its events were lost
    fs::remove_file(&file).unwrap();
    fs::write(&file, "max 0\n").unwrap();
    let listed: Vec<GroupPath> = groups.iter().map(|g| path_of(g)).collect();
    for _ in 0..30 {
        w.resync(&listed);
    }
    assert_eq!(w.watched_files(&path_of(&deep)), EventFile::ALL.to_vec());
    assert_eq!(w.status().watches, before);
    w.on_inotify();
    let _ = w.take_ready();
    // the new file's watch is the one that reports
    fs::write(&file, "max 1\n").unwrap();
    w.on_inotify();
    let got = w.take_ready();
    assert!(
        got.iter().any(|e| e.path == path_of(&deep)),
        "pids.events max at {deep}: {got:?}"
    );
}
