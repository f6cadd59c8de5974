//! What a one-shot run (`cgtop -b -n 1`) holds at its peak: a path is
//! one allocation however many structures name the group, and a group's
//! IO rates have room for the devices its io.stat lists and no more
//! (BENCHMARKS.md, "peak RSS of a one-shot run").

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::cgroupfs::IoStat;
use cgtop::model::tree::rates::Rater;
use cgtop::model::{GroupPath, GroupSample, ScanCost, Snapshot};
use std::time::Duration;

#[test]
fn a_copy_of_a_path_shares_its_bytes() {
    let p = GroupPath::new("system.slice/cron.service");
    let q = p.clone();
    assert_eq!(p, q);
    assert!(
        std::ptr::eq(p.as_bytes(), q.as_bytes()),
        "a clone is the same bytes, not a second allocation"
    );
    // made again from the same text: equal, hashed and ordered alike
    let r = GroupPath::root().join("system.slice").unwrap().join("cron.service").unwrap();
    assert_eq!(r, p);
    assert!(!std::ptr::eq(p.as_bytes(), r.as_bytes()));
    let set: std::collections::HashSet<GroupPath> = [p.clone()].into();
    assert!(set.contains(&r));
    assert!(set.contains(b"system.slice/cron.service".as_slice()));
}

fn snapshot_with_io(at_s: u64, io: &str) -> Snapshot {
    let mut g = GroupSample::new(GroupPath::new("a"), 7);
    g.hot.io = Some(IoStat::parse(io));
    Snapshot {
        at: Duration::from_secs(at_s),
        groups: vec![g],
        cost: ScanCost::default(),
    }
}

#[test]
fn io_rates_by_device_have_room_for_the_devices_listed_only() {
    for (devices, lines) in [
        (1, "8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n"),
        (
            2,
            "8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n\
             8:16 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n",
        ),
    ] {
        let mut rater = Rater::new(None);
        rater.step(&snapshot_with_io(1, lines));
        let later = lines.replace("rbytes=0", "rbytes=4096");
        let (rates, _) = rater.step(&snapshot_with_io(2, &later));
        let by_dev = &rates[0].io_by_dev;
        assert_eq!(by_dev.len(), devices);
        assert_eq!(by_dev[0].1.rbps, 4096.0);
        assert_eq!(
            by_dev.capacity(),
            devices,
            "one slot a device: at 10,000 groups a slack of 3 is 1.3 MB"
        );
    }
}
