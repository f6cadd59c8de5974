//! What a one-shot run (`cgtop -b -n 1`) holds at its peak: a path is
//! one allocation however many structures name the group, a group's IO
//! rates have room for the devices its io.stat lists and no more, and the
//! collector is gone before the last refresh's rows are built and written
//! (BENCHMARKS.md, "peak RSS of a one-shot run").

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common::{fixture, host, pure_v2_mount};
use cgtop::cgroupfs::IoStat;
use cgtop::model::tree::rates::Rater;
use cgtop::model::{GroupPath, GroupSample, ScanCost, Snapshot};
use cgtop::options::Options;
use cgtop::source::collector::Collector;
use cgtop::source::hier::Hier;
use std::io::Write;
use std::sync::{Arc, Weak};
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
    let r = GroupPath::root()
        .join("system.slice")
        .unwrap()
        .join("cron.service")
        .unwrap();
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
        let (second, _) = rater.step(&snapshot_with_io(2, &later));
        let by_dev = &second[0].io_by_dev;
        assert_eq!(by_dev.len(), devices);
        assert!((by_dev[0].1.rbps.unwrap() - 4096.0).abs() < 1e-9);
        assert_eq!(
            by_dev.capacity(),
            devices,
            "one slot a device: at 10,000 groups a slack of 3 is 1.3 MB"
        );
    }
}

#[test]
fn the_rates_baseline_of_the_same_groups_is_updated_where_it_is() {
    let mut rater = Rater::new(None);
    let io = "8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n";
    rater.step(&snapshot_with_io(1, io));
    let list = rater.prev().unwrap().groups.as_ptr();
    let later = io.replace("rbytes=0", "rbytes=4096");
    let (second, _) = rater.step(&snapshot_with_io(2, &later));
    assert!((second[0].io.unwrap().rbps.unwrap() - 4096.0).abs() < 1e-9);
    let kept = rater.prev().unwrap();
    assert_eq!(kept.at, Duration::from_secs(2));
    assert_eq!(kept.groups[0].io, Some(IoStat::parse(&later)));
    assert!(
        std::ptr::eq(kept.groups.as_ptr(), list),
        "the same groups: no second list while the first is alive"
    );
    // a group that came: a new list, in path order
    let mut snap = snapshot_with_io(3, &later);
    snap.groups
        .insert(0, GroupSample::new(GroupPath::root(), 1));
    rater.step(&snap);
    let kept = rater.prev().unwrap();
    let paths: Vec<_> = kept.groups.iter().map(|k| k.path.to_string()).collect();
    assert_eq!(paths, ["/", "/a"]);
    assert_eq!(kept.groups[1].io, Some(IoStat::parse(&later)));
}

#[test]
fn a_priming_read_keeps_the_counters_as_the_baseline_and_computes_no_rate() {
    let io = "8:0 rbytes=0 wbytes=0 rios=0 wios=0 dbytes=0 dios=0\n";
    let later = io.replace("rbytes=0", "rbytes=4096");
    // the full step of a first refresh, and the priming read's baseline alone
    let (mut full, mut primed) = (Rater::new(Some(2)), Rater::new(Some(2)));
    full.step(&snapshot_with_io(1, io));
    primed.keep_counters(&snapshot_with_io(1, io));
    let (a, b) = (full.prev().unwrap(), primed.prev().unwrap());
    assert_eq!((a.at, &a.groups), (b.at, &b.groups));
    // the next rates are the same
    let (after_full, _) = full.step(&snapshot_with_io(2, &later));
    let (after_primed, _) = primed.step(&snapshot_with_io(2, &later));
    assert_eq!(after_full, after_primed);
    assert!((after_primed[0].io.unwrap().rbps.unwrap() - 4096.0).abs() < 1e-9);
}

/// Records, at each write, how many holders the hierarchy handle has:
/// the collector holds it (its scanners, its identity resolver) until it
/// is dropped.
struct Holders {
    hier: Weak<Hier>,
    at_writes: Vec<usize>,
    text: Vec<u8>,
}

impl Write for Holders {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.at_writes.push(self.hier.strong_count());
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_one_shot_batch_run_drops_its_collector_before_writing_the_rows() {
    let root = fixture("pure-v2-systemd");
    for iterations in [1, 2] {
        let opts = Options {
            root: Some(root.clone()),
            interval: Duration::ZERO,
            iterations: Some(iterations),
            ..crate::common::options()
        };
        let (m, hier, hiers) = cgtop::run::locate(&opts).unwrap();
        let cfg = cgtop::run::collector_config(&opts, &m, false);
        let mut out = Holders {
            hier: Arc::downgrade(&hier),
            at_writes: Vec::new(),
            text: Vec::new(),
        };
        // the holders without a collector: this test's and the layout's
        let without = Arc::strong_count(&hier);
        let c = Collector::with_hiers(cfg, hier, &hiers);
        assert!(out.hier.strong_count() > without, "the collector holds it");
        let unheld = without - 1;
        cgtop::batch::run_collector(&mut out, c, &pure_v2_mount(), &host(), &opts, |_| true)
            .unwrap();
        let text = String::from_utf8(out.text).unwrap();
        let refreshes: Vec<usize> = text
            .match_indices("cgtop - refresh")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(refreshes.len(), iterations as usize, "{text}");
        assert!(text.contains("init.scope"), "{text}");
        // every write of the last refresh comes after the collector went;
        // an earlier refresh's while it is still there (it reads the next)
        let last = *out.at_writes.last().unwrap();
        assert_eq!(
            last, unheld,
            "the collector is dropped before the last refresh's rows"
        );
        if iterations == 2 {
            assert!(out.at_writes[0] > unheld, "kept for the next refresh");
        }
        let at_last_header = out.at_writes.iter().filter(|&&n| n == unheld).count();
        assert!(
            at_last_header > 1,
            "the whole last refresh: {:?}",
            out.at_writes
        );
        drop(hiers);
    }
}
