//! A subtree of the test's sandbox delegated to a user as systemd's
//! `Delegate=` does, and the event watcher started over the sandbox: for
//! the attacks on whose the events are (`event_owners`,
//! `event_owners_subordinate`).

use crate::common::sandbox::Sandbox;
use cgtop::source::events::{spawn, WatchHandle, Watched};
use cgtop::source::hier::Hier;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::Duration;

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
