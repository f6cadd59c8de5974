//! cgtop runs as root, and root's inotify watches are systemd's too: the
//! event watcher the program starts takes a quarter of max_user_watches,
//! never all of them (a delegated user's thousands of groups).

use cgtop::model::GroupPath;
use cgtop::options::{Options, Output};
use cgtop::render::columns::Column;
use std::time::Duration;

#[test]
fn the_programs_event_watcher_takes_a_share_of_roots_watches() {
    let Ok(text) = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches") else {
        eprintln!("skipped: no /proc/sys/fs/inotify/max_user_watches");
        return;
    };
    let max: usize = text.trim().parse().unwrap_or(0);
    let opts = Options {
        start: GroupPath::root(),
        root: Some("tests/fixtures/hybrid-host".into()),
        interval: Duration::from_secs(1),
        depth: None,
        output: Output::Text,
        iterations: Some(1),
        read_only: true,
        mouse: false,
        machine_cpu: false,
        max_kept_fds: None,
        brief: true,
        columns: Column::DEFAULT.to_vec(),
        filter: None,
    };
    let (m, _, hiers) = cgtop::run::locate(&opts).unwrap_or_else(|e| panic!("{e}"));
    let cfg = cgtop::run::watch_config(&opts, &m, &hiers);
    assert_eq!(cfg.max_watches, Some((max / 4).max(1)), "{max}");
}
