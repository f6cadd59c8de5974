//! cgtop runs as root, and root's inotify watches are systemd's too: the
//! event watcher the program starts takes a quarter of max_user_watches,
//! never all of them (a delegated user's thousands of groups).

use cgtop::options::Options;

#[test]
fn the_programs_event_watcher_takes_a_share_of_roots_watches() {
    let Ok(text) = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches") else {
        eprintln!("skipped: no /proc/sys/fs/inotify/max_user_watches");
        return;
    };
    let max: usize = text.trim().parse().unwrap_or(0);
    let opts = Options {
        root: Some("tests/fixtures/hybrid-host".into()),
        ..crate::common::options()
    };
    let (m, _, hiers) = cgtop::run::locate(&opts).unwrap_or_else(|e| panic!("{e}"));
    let cfg = cgtop::run::watch_config(&opts, &m, &hiers);
    assert_eq!(cfg.max_watches, Some((max / 4).max(1)), "{max}");
}
