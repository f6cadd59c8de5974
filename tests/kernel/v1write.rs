//! The writes on this machine's real cgroup v1 hierarchies (issue 11 item
//! 3), through the writer as the TUI's writer thread calls it
//! (`writer::perform_on` / `safety::perform_checked_on` with the `Hiers`
//! of every hierarchy): blkio throttle limits on the root disk, CFS quota,
//! cpu.shares, the memory limit with memsw, pids.max, freeze and thaw
//! through freezer.state, the kill fallback, a move and its undo, groups
//! made and removed in every hierarchy, and the lockout guard reading the
//! v1 lines of /proc/PID/cgroup.
//!
//! Each test works in its own group of the v1 sandbox
//! (`common::sandbox_v1`), made in the v1 hierarchies it needs (and not
//! in cgroup2), and removed on drop, also when an assertion failed:
//! thawed, its processes (the test's and theirs) killed, then rmdir.
//! Without root or without a v1 hierarchy a test prints
//! `skipped: <reason>`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::cgroupfs::io::DevId;
use cgtop::cgroupfs::{CpuMax, Limit};
use cgtop::model::host::layout::{HierId, Layout};
use cgtop::model::write::{self, v1_files, Op, Throttle, V1MemoryFile};
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collector, CollectorConfig};
use cgtop::source::hier::Hiers;
use cgtop::source::{actionlog, safety, writer};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::sandbox_v1;

/// A test's group of the v1 sandbox in some v1 hierarchies, and the
/// `Hiers` of this host's layout that the writer is given.
struct V1Box {
    sb: sandbox_v1::V1Sandbox,
    name: String,
    hiers: Hiers,
}

impl V1Box {
    /// The group in the v1 hierarchy of each of `controllers`, or why it
    /// cannot be made here.
    fn new(controllers: &[&str]) -> Result<Self, String> {
        let sb = sandbox_v1::V1Sandbox::v1_only("v1write", controllers)?;
        Self::of(sb)
    }

    /// The same, and in cgroup2 on a hybrid host.
    fn with_v2(controllers: &[&str]) -> Result<Self, String> {
        Self::of(sandbox_v1::V1Sandbox::new("v1write", controllers)?)
    }

    fn of(sb: sandbox_v1::V1Sandbox) -> Result<Self, String> {
        let layout = cgtop::source::mount::discover_layout().map_err(|e| e.to_string())?;
        Ok(Self {
            name: sb.rel.clone(),
            sb,
            hiers: Hiers::open(layout),
        })
    }

    fn group(&self) -> GroupPath {
        self.sb.path("")
    }

    fn layout(&self) -> &Layout {
        &self.hiers.layout
    }

    fn hier(&self, controller: &str) -> HierId {
        self.layout().holder(controller).expect("a hierarchy")
    }

    fn dir(&self, controller: &str) -> PathBuf {
        self.sb.dir_of(controller, &self.group())
    }

    fn read(&self, controller: &str, file: &str) -> String {
        std::fs::read_to_string(self.dir(controller).join(file))
            .unwrap_or_default()
            .trim()
            .to_owned()
    }

    /// A `sleep` the test owns, started outside any of its groups, in a
    /// session of its own (the guard checks the groups it is put in).
    fn spawn(&mut self) -> u32 {
        self.sb.spawn(&["sleep", "300"])
    }

    /// A `sleep` put into the group of `controller`'s hierarchy.
    fn spawn_in(&mut self, controller: &str) -> u32 {
        let pid = self.spawn();
        std::fs::write(self.dir(controller).join("cgroup.procs"), pid.to_string()).unwrap();
        pid
    }

    fn do_op(&self, op: &Op) -> cgtop::model::WriteOutcome {
        writer::perform_on(&self.hiers, op)
    }
}

macro_rules! sandbox {
    ($($c:expr),*) => {
        match V1Box::new(&[$($c),*]) {
            Ok(b) => b,
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        }
    };
}

/// The whole disk the root filesystem is on, from /proc/self/mountinfo's
/// "/" entry and /sys/dev/block (a partition's parent is its disk).
fn root_disk() -> Option<DevId> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dev = text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.get(4) == Some(&"/")).then(|| f[2].to_owned())
    })?;
    let sys = PathBuf::from(format!("/sys/dev/block/{dev}"));
    let real = std::fs::canonicalize(&sys).ok()?;
    let disk = if real.join("partition").exists() {
        real.parent()?.to_path_buf()
    } else {
        real
    };
    let d = std::fs::read_to_string(disk.join("dev")).ok()?;
    DevId::parse(d.trim())
}

#[test]
fn blkio_throttle_set_read_back_undo_and_remove_on_the_root_disk() {
    let b = sandbox!("blkio");
    let Some(disk) = root_disk() else {
        println!("skipped: no block device under /");
        return;
    };
    let (g, h) = (b.group(), b.hier("blkio"));
    assert!(matches!(h, HierId::V1(_)));
    // the seeds' echo "8:0 1048576" > blkio.throttle.write_bps_device
    let op = write::set_blkio_throttle(&g, h, Throttle::WriteBps, disk, Some(1 << 20));
    let o = b.do_op(&op);
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(
        b.read("blkio", v1_files::BLKIO_WRITE_BPS),
        format!("{disk} 1048576")
    );
    assert_eq!(o.stored_differs(), None);
    assert_eq!(o.old.as_deref().map(str::trim), Some(""));
    // the log names the hierarchy, the file and the value
    let line = actionlog::format_line_in(0, &o, b.layout());
    assert!(
        line.contains(&format!(
            "blkio:/{} blkio.throttle.write_bps_device",
            b.name
        )),
        "{line}"
    );
    assert!(
        // at the hierarchy's root, the group's real path is its view's
        line.ends_with(&format!("to \"{disk} 1048576\" ok at /{}", b.name)),
        "{line}"
    );
    // the confirmation's words name the file and the hierarchy
    assert_eq!(
        op.describe_in(b.layout()),
        format!(
            "write {disk} 1048576 to blkio.throttle.write_bps_device of /{} in the v1 blkio hierarchy",
            b.name
        )
    );
    // undo removes the rule it added (there was none)
    let undo = o.undo().expect("an undo");
    assert_eq!(
        undo,
        write::set_blkio_throttle(&g, h, Throttle::WriteBps, disk, None)
    );
    let u = b.do_op(&undo);
    assert!(u.is_ok(), "{}", u.summary());
    assert_eq!(b.read("blkio", v1_files::BLKIO_WRITE_BPS), "");
    // read: set, then 0 removes
    let r = b.do_op(&write::set_blkio_throttle(
        &g,
        h,
        Throttle::ReadBps,
        disk,
        Some(1 << 20),
    ));
    assert!(r.is_ok(), "{}", r.summary());
    let r2 = b.do_op(&write::set_blkio_throttle(
        &g,
        h,
        Throttle::ReadBps,
        disk,
        None,
    ));
    assert!(r2.is_ok(), "{}", r2.summary());
    assert_eq!(
        r2.undo(),
        Some(write::set_blkio_throttle(
            &g,
            h,
            Throttle::ReadBps,
            disk,
            Some(1 << 20)
        ))
    );
    assert_eq!(b.read("blkio", v1_files::BLKIO_READ_BPS), "");
    // a device the kernel does not have: ENODEV, in words
    let bad = DevId {
        major: 4095,
        minor: 77,
    };
    let e = b.do_op(&write::set_blkio_throttle(
        &g,
        h,
        Throttle::ReadIops,
        bad,
        Some(10),
    ));
    let err = e.result.unwrap_err();
    assert_eq!(err.errno_name(), "ENODEV");
    assert!(err.explanation.contains("whole disk"), "{err}");
}

#[test]
fn blkio_bfq_weight_where_the_kernel_has_it() {
    let b = sandbox!("blkio");
    let (g, h) = (b.group(), b.hier("blkio"));
    if !b.dir("blkio").join(v1_files::BLKIO_BFQ_WEIGHT).exists() {
        println!("skipped: no blkio.bfq.weight");
        return;
    }
    let o = b.do_op(&write::set_blkio_weight(&g, h, true, 500));
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(b.read("blkio", v1_files::BLKIO_BFQ_WEIGHT), "500");
    let u = b.do_op(&o.undo().unwrap());
    assert!(u.is_ok(), "{}", u.summary());
    assert_eq!(b.read("blkio", v1_files::BLKIO_BFQ_WEIGHT), "100");
    let e = b.do_op(&write::set_blkio_weight(&g, h, true, 0));
    assert_eq!(e.result.unwrap_err().errno_name(), "ERANGE");
}

#[test]
fn cfs_quota_at_half_a_cpu_shares_and_undo() {
    let b = sandbox!("cpu");
    let (g, h) = (b.group(), b.hier("cpu"));
    let period: u64 = b.read("cpu", v1_files::CPU_CFS_PERIOD).parse().unwrap();
    // "50%": quota = 0.5 * period, as cpu.max on v2
    let half = CpuMax {
        quota: Some(period / 2),
        period,
    };
    let ops = write::set_cfs(&g, h, half, Some(period));
    assert_eq!(ops, [write::set_cfs_quota(&g, h, Some(period / 2))]);
    let o = b.do_op(&ops[0]);
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(
        b.read("cpu", v1_files::CPU_CFS_QUOTA),
        (period / 2).to_string()
    );
    let u = b.do_op(&o.undo().unwrap());
    assert!(u.is_ok(), "{}", u.summary());
    assert_eq!(b.read("cpu", v1_files::CPU_CFS_QUOTA), "-1");
    // a new period goes first, then the quota
    let ops = write::set_cfs(
        &g,
        h,
        CpuMax {
            quota: Some(25_000),
            period: 50_000,
        },
        Some(period),
    );
    for op in &ops {
        let o = b.do_op(op);
        assert!(o.is_ok(), "{}", o.summary());
    }
    assert_eq!(b.read("cpu", v1_files::CPU_CFS_PERIOD), "50000");
    assert_eq!(b.read("cpu", v1_files::CPU_CFS_QUOTA), "25000");
    // below 1 ms: EINVAL, in words
    let e = b.do_op(&write::set_cfs_quota(&g, h, Some(500)));
    let err = e.result.unwrap_err();
    assert_eq!(err.errno_name(), "EINVAL");
    assert!(err.explanation.contains("at least 1000 us"), "{err}");
    // cpu.shares: the kernel keeps 2 for 1, and says so
    let s = b.do_op(&write::set_cpu_shares(&g, h, 1));
    assert!(s.is_ok());
    assert!(
        s.stored_differs().is_some_and(|t| t.contains("stored 2")),
        "{:?}",
        s.stored_differs()
    );
    let back = b.do_op(&s.undo().unwrap());
    assert!(back.is_ok());
    assert_eq!(b.read("cpu", v1_files::CPU_SHARES), "1024");
}

#[test]
fn memory_limit_and_memsw_in_the_order_the_kernel_takes() {
    let b = sandbox!("memory");
    let (g, h) = (b.group(), b.hier("memory"));
    let has_memsw = b.dir("memory").join(v1_files::MEMSW_LIMIT).exists();
    let m = 1u64 << 20;
    let o = b.do_op(&write::set_v1_memory(
        &g,
        h,
        V1MemoryFile::Limit,
        Limit::Value(64 * m),
    ));
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(
        b.read("memory", v1_files::MEMORY_LIMIT),
        (64 * m).to_string()
    );
    // undo writes -1 (no limit), which the kernel shows as its maximum
    let u = o.undo().unwrap();
    assert_eq!(
        u,
        write::set_v1_memory(&g, h, V1MemoryFile::Limit, Limit::Max)
    );
    assert!(b.do_op(&u).is_ok());
    assert!(
        b.read("memory", v1_files::MEMORY_LIMIT)
            .parse::<u64>()
            .unwrap()
            >= 1 << 62
    );
    if !has_memsw {
        println!("no memsw here (swap accounting off): the pair is not tried");
        return;
    }
    // a cut: the limit first, then memsw; a rise: memsw first
    let mut now = Limit::Max;
    for (limit, memsw) in [(100 * m, 200 * m), (30 * m, 40 * m), (300 * m, 400 * m)] {
        let ops = write::set_v1_memory_pair(&g, h, Limit::Value(limit), Limit::Value(memsw), now);
        for op in &ops {
            let o = b.do_op(op);
            assert!(o.is_ok(), "{limit} {memsw}: {}", o.summary());
        }
        assert_eq!(b.read("memory", v1_files::MEMORY_LIMIT), limit.to_string());
        assert_eq!(b.read("memory", v1_files::MEMSW_LIMIT), memsw.to_string());
        now = Limit::Value(limit);
    }
    // the wrong order fails as the kernel says, in words
    let e = b.do_op(&write::set_v1_memory(
        &g,
        h,
        V1MemoryFile::Limit,
        Limit::Value(500 * m),
    ));
    let err = e.result.unwrap_err();
    assert_eq!(err.errno_name(), "EINVAL");
    assert!(err.explanation.contains("memsw"), "{err}");
    for op in write::set_v1_memory_pair(&g, h, Limit::Max, Limit::Max, now) {
        assert!(b.do_op(&op).is_ok());
    }
}

#[test]
fn a_v1_memory_limit_below_what_cannot_be_reclaimed_is_ebusy_in_words() {
    let mut b = sandbox!("memory");
    let (g, h) = (b.group(), b.hier("memory"));
    if std::fs::read_to_string("/proc/swaps").is_ok_and(|t| t.lines().count() > 1) {
        println!("skipped: swap is on (the memory could be swapped out)");
        return;
    }
    // anonymous memory without swap cannot be reclaimed
    let py = Command::new("python3")
        .args([
            "-c",
            "import sys,time\na=bytearray(48<<20)\nprint(1,flush=True)\ntime.sleep(60)",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn();
    let Ok(mut py) = py else {
        println!("skipped: no python3");
        return;
    };
    std::fs::write(b.dir("memory").join("cgroup.procs"), py.id().to_string()).unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(py.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    b.sb.children.push(py);
    let e = b.do_op(&write::set_v1_memory(
        &g,
        h,
        V1MemoryFile::Limit,
        Limit::Value(8 << 20),
    ));
    let err = e.result.unwrap_err();
    assert_eq!(err.errno_name(), "EBUSY");
    assert!(err.explanation.contains("could not reclaim"), "{err}");
}

#[test]
fn pids_max_on_v1() {
    let b = sandbox!("pids");
    let (g, h) = (b.group(), b.hier("pids"));
    let op = write::set_pids_max(&g, Limit::Value(10)).on(h);
    let o = b.do_op(&op);
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(b.read("pids", "pids.max"), "10");
    let u = b.do_op(&o.undo().unwrap());
    assert!(u.is_ok());
    assert_eq!(b.read("pids", "pids.max"), "max");
    // the same op sent to cgroup2 is not written in the v1 hierarchy
    let v2 = b.do_op(&write::set_pids_max(&g, Limit::Value(10)));
    assert!(!v2.is_ok());
    assert_eq!(b.read("pids", "pids.max"), "max");
}

/// The raw editor's v1 file on the real kernel: the group's full read
/// lists the v1 memory hierarchy's writable files as the editor names
/// them (`memory:memory.swappiness`; not `cgroup.event_control`), and the
/// op the editor makes of a line typed there (tests/state/v1write.rs
/// `the_raw_editor_offers_and_writes_the_v1_files_of_each_hierarchy`) is
/// written in that hierarchy, read back, and undone to the old text.
#[test]
fn the_raw_editors_v1_file_written_read_back_and_undone() {
    let b = sandbox!("memory");
    let (g, h) = (b.group(), b.hier("memory"));
    let d =
        cgtop::source::read::read_detail_layout(&b.hiers, cgtop::source::hier::group_rel(&g), true);
    for want in ["memory:memory.swappiness", "memory:memory.limit_in_bytes"] {
        assert!(
            d.writable.iter().any(|f| f == want),
            "{want}: {:?}",
            d.writable
        );
    }
    assert!(
        !d.writable
            .iter()
            .any(|f| f.ends_with(":cgroup.event_control")),
        "{:?}",
        d.writable
    );
    let old = b.read("memory", "memory.swappiness");
    let new = if old == "17" { "23" } else { "17" };
    let op = write::raw(&g, "memory.swappiness", new).on(h);
    let o = b.do_op(&op);
    assert!(o.is_ok(), "{}", o.summary());
    assert_eq!(o.new_readback.as_deref().map(str::trim), Some(new));
    assert_eq!(b.read("memory", "memory.swappiness"), new);
    let back = o.undo().unwrap();
    assert_eq!(back, write::raw(&g, "memory.swappiness", &old).on(h));
    assert!(b.do_op(&back).is_ok());
    assert_eq!(b.read("memory", "memory.swappiness"), old);
}

#[test]
fn freeze_and_thaw_through_freezer_state() {
    let mut b = sandbox!("freezer");
    let (g, h) = (b.group(), b.hier("freezer"));
    let pid = b.spawn_in("freezer");
    let op = write::set_freezer(&g, h, true);
    assert!(op.is_destructive());
    let o = b.do_op(&op);
    assert!(o.is_ok(), "{}", o.summary());
    // the writer waited for FROZEN (a sleep stops at once)
    assert_eq!(o.new_readback.as_deref().map(str::trim), Some("FROZEN"));
    assert_eq!(b.read("freezer", v1_files::FREEZER_STATE), "FROZEN");
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    assert!(state.contains(") D ") || state.contains(") S "), "{state}");
    let u = o.undo().unwrap();
    assert_eq!(u, write::set_freezer(&g, h, false));
    let t = b.do_op(&u);
    assert!(t.is_ok(), "{}", t.summary());
    assert_eq!(b.read("freezer", v1_files::FREEZER_STATE), "THAWED");
    // "frozen" is not a word freezer.state knows
    let e = b.do_op(&write::raw(&g, v1_files::FREEZER_STATE, "frozen").on(h));
    assert_eq!(e.result.unwrap_err().errno_name(), "EINVAL");
}

#[test]
fn kill_on_v1_signals_the_groups_processes_and_nothing_else() {
    let mut b = sandbox!("freezer");
    let (g, h) = (b.group(), b.hier("freezer"));
    b.spawn_in("freezer");
    b.spawn_in("freezer");
    let outside = b.spawn();
    let o = b.do_op(&write::kill(&g).on(h));
    assert!(o.is_ok(), "{}", o.summary());
    assert!(
        o.notes
            .iter()
            .any(|n| n.contains("cgroup v1 has no cgroup.kill")),
        "{:?}",
        o.notes
    );
    let (mut dead, mut alive) = (0, 0);
    for c in &mut b.sb.children {
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(st) = c.try_wait().unwrap() {
                assert_eq!(st.signal(), Some(9));
                dead += 1;
                break;
            }
            if Instant::now() > end {
                assert_eq!(c.id(), outside);
                alive += 1;
                break;
            }
            sleep(Duration::from_millis(20));
        }
    }
    assert_eq!((dead, alive), (2, 1));
    // the group was thawed after (it was not frozen before)
    assert_eq!(b.read("freezer", v1_files::FREEZER_STATE), "THAWED");
}

/// 18 levels of 240-byte names below the sandbox's top: the deepest
/// group's path is past PATH_MAX (4,096 bytes), so nothing that resolves
/// a path reaches it.
fn nest_past_path_max(sb: &sandbox_v1::V1Sandbox) -> GroupPath {
    let sub: Vec<String> = (0..18)
        .map(|i| format!("d{i:02}{}", "x".repeat(237)))
        .collect();
    let g = sb.mkdir(&sub.join("/"));
    assert!(g.as_bytes().len() > 4096);
    g
}

/// The pids a test's children ended with, by pid, after up to `limit`;
/// `None` for one still running.
fn exits(sb: &mut sandbox_v1::V1Sandbox, pids: &[u32], limit: Duration) -> Vec<Option<i32>> {
    pids.iter()
        .map(|&p| sb.wait_child(p, limit).and_then(|st| st.signal()))
        .collect()
}

#[test]
fn kill_reaches_processes_in_groups_nested_past_path_max() {
    // K on v1 found processes through paths: a group nested past PATH_MAX
    // gave ENAMETOOLONG, its sleep went on running, and the outcome said
    // "sent SIGKILL to 1 process", done. Then through cgroup2's
    // cgroup.kill on the same tree (this hybrid host's), checked by the
    // same walk.
    let Some(mut sb) = sandbox_v1::V1Sandbox::or_skip("deepkill", &["freezer", "pids"]) else {
        return;
    };
    let layout = cgtop::source::mount::discover_layout().unwrap();
    let hiers = Hiers::open(layout);
    let deep = nest_past_path_max(&sb);
    let top = sb.path("");
    let mut vias = vec![hiers.layout.holder("freezer").unwrap()];
    if sb.hiers.iter().any(|h| h.v2) {
        vias.push(HierId::V2);
    }
    for via in vias {
        let shallow = sb.spawn_in(&top, &["sleep", "300"]);
        let inside = sb.spawn_in(&deep, &["sleep", "300"]);
        let o = safety::perform_checked_on(&hiers, &write::kill(&top).on(via), None, 0);
        let died = exits(&mut sb, &[shallow, inside], Duration::from_secs(5));
        assert_eq!(died, [Some(9), Some(9)], "via {via:?}: {}", o.summary());
        assert!(o.is_ok(), "via {via:?}: {}", o.summary());
        if via != HierId::V2 {
            assert!(
                o.notes
                    .iter()
                    .any(|n| n.contains("sent SIGKILL to 2 processes")),
                "{:?}",
                o.notes
            );
        }
    }
}

#[test]
fn the_kill_confirmation_counts_processes_nested_past_path_max() {
    // K's dialog said "0 processes in 18 groups will die" for a tree whose
    // sleep sat past PATH_MAX: it counted the snapshot, which the scan
    // cannot open there. The inspection of the group counts its subtree
    // with the kill's own descriptor walk.
    let Some(mut sb) = sandbox_v1::V1Sandbox::or_skip("deepcount", &["freezer"]) else {
        return;
    };
    let deep = nest_past_path_max(&sb);
    let top = sb.path("");
    sb.spawn_in(&top, &["sleep", "300"]);
    sb.spawn_in(&deep, &["sleep", "300"]);
    let mut c = Collector::new(CollectorConfig {
        root: sb.hier("freezer").mount.clone(),
        start: top.clone(),
        scan: cgtop::source::scan::ScanConfig::default(),
        full_detail: false,
        sys_dev_block: PathBuf::from("/sys/dev/block"),
    });
    let r = c.refresh(Duration::from_secs(1));
    let seen: u64 = r
        .snapshot
        .groups
        .iter()
        .filter_map(|g| g.hot.nr_procs)
        .sum();
    assert_eq!(seen, 1, "the scan sees only the shallow sleep");
    let _ = c.refresh(Duration::from_secs(2));
    let i = c.read_inspection(&top, None, 2.0);
    let n = i.deep_count.expect("a subtree past PATH_MAX is walked");
    assert_eq!((n.procs, n.groups, n.complete), (2, 19, true));
}

#[test]
fn a_kill_that_leaves_a_process_says_so() {
    // the group's ancestor is frozen in the v1 freezer: a killed process
    // there dies only once that ancestor is thawed. K through the pids
    // hierarchy signals it, but it is still there: the outcome is a
    // failure that counts it, never "done"
    let Some(mut sb) = sandbox_v1::V1Sandbox::or_skip("survivor", &["freezer", "pids"]) else {
        return;
    };
    let layout = cgtop::source::mount::discover_layout().unwrap();
    let hiers = Hiers::open(layout);
    let Some(pids) = hiers.layout.holder("pids").filter(|h| *h != HierId::V2) else {
        return println!("skipped: no v1 pids hierarchy");
    };
    let deep = nest_past_path_max(&sb);
    let top = sb.path("");
    let inside = sb.spawn_in(&deep, &["sleep", "300"]);
    sb.write("freezer", &top, "freezer.state", "FROZEN");
    let first = deep
        .ancestors()
        .find(|g| g.parent() == Some(top.clone()))
        .unwrap();
    let o = safety::perform_checked_on(&hiers, &write::kill(&first).on(pids), None, 0);
    assert!(
        o.summary().contains("1 process of the subtree still runs"),
        "{}",
        o.summary()
    );
    assert!(!o.is_ok());
    sb.write("freezer", &top, "freezer.state", "THAWED");
    assert_eq!(exits(&mut sb, &[inside], Duration::from_secs(5)), [Some(9)]);
}

#[test]
fn the_guard_reads_the_v1_line_of_proc_pid_cgroup() {
    let mut b = sandbox!("freezer");
    let (g, h) = (b.group(), b.hier("freezer"));
    // a stand-in for cgtop, in the v1 freezer group only (its cgroup2
    // group is elsewhere): freezing the group must need its name typed
    let subject = b.spawn_in("freezer");
    let o = safety::perform_checked_on(&b.hiers, &write::set_freezer(&g, h, true), None, subject);
    let err = o.result.unwrap_err();
    assert!(err.explanation.contains("contains cgtop itself"), "{err}");
    assert_eq!(b.read("freezer", v1_files::FREEZER_STATE), "THAWED");
    let k = safety::perform_checked_on(&b.hiers, &write::kill(&g).on(h), None, subject);
    assert!(!k.is_ok());
    assert!(b.sb.children[0].try_wait().unwrap().is_none(), "killed");
    // typed, it goes ahead
    let t = safety::perform_checked_on(
        &b.hiers,
        &write::set_freezer(&g, h, true),
        Some(&g),
        subject,
    );
    assert!(t.is_ok(), "{}", t.summary());
}

#[test]
fn move_into_each_hierarchy_and_undo_back() {
    let mut b = sandbox!("memory", "pids", "cpu");
    // from the box's group a to its group b, and back: no other group is
    // written
    let (from, g) = (b.group().join("a").unwrap(), b.group().join("b").unwrap());
    for c in ["memory", "pids", "cpu"] {
        std::fs::create_dir(b.dir(c).join("a")).unwrap();
        std::fs::create_dir(b.dir(c).join("b")).unwrap();
    }
    let pid = b.spawn();
    for c in ["memory", "pids", "cpu"] {
        std::fs::write(b.dir(c).join("a/cgroup.procs"), pid.to_string()).unwrap();
    }
    let before = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    assert!(
        before.contains(&format!(":/{from}\n")) || before.contains(&format!(":/{}/a", b.name)),
        "{before}"
    );
    let hs = [b.hier("memory"), b.hier("pids"), b.hier("cpu")];
    let mut undos = Vec::new();
    for h in hs {
        let op = write::move_process_in(pid, &g, false, h);
        let o = b.do_op(&op);
        assert!(o.is_ok(), "{}", o.summary());
        undos.push(o.undo().expect("a move's undo: back where it was"));
    }
    let now = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    for c in ["memory", "pids", "cpu"] {
        let line = now
            .lines()
            .find(|l| l.split(':').nth(1) == Some(c))
            .unwrap();
        assert!(line.ends_with(&format!(":/{}/b", b.name)), "{line}");
    }
    for u in undos {
        let o = b.do_op(&u);
        assert!(o.is_ok(), "{}", o.summary());
    }
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap(),
        before
    );
    // one thread goes through v1's tasks
    assert_eq!(
        write::move_process_in(pid, &g, true, hs[0])
            .as_write()
            .unwrap()
            .file,
        "tasks"
    );
}

#[test]
fn create_and_remove_a_group_in_every_hierarchy_and_undo() {
    // the box in every hierarchy of the layout, cgroup2 too
    let layout = match cgtop::source::mount::discover_layout() {
        Ok(l) => l,
        Err(e) => return println!("skipped: {e}"),
    };
    let every: Vec<String> = layout
        .v1
        .iter()
        .map(|m| m.controllers.first().cloned().unwrap_or_else(|| m.label()))
        .collect();
    let b = match V1Box::with_v2(&every.iter().map(String::as_str).collect::<Vec<_>>()) {
        Ok(b) => b,
        Err(why) => return println!("skipped: {why}"),
    };
    let child = b.group().join("made").unwrap();
    let mut hs: Vec<HierId> = b.hiers.v1().map(|(id, _, _)| id).collect();
    if b.layout().v2.is_some() {
        hs.insert(0, HierId::V2);
    }
    let v2_top = b.layout().v2.clone().map(|p| p.join(&b.name));
    let v1_tops: Vec<PathBuf> = b.layout().v1.iter().map(|m| m.dir.join(&b.name)).collect();
    let ops = write::create_group_in(&child, &hs);
    let mut undos = Vec::new();
    for op in &ops {
        let o = b.do_op(op);
        assert!(o.is_ok(), "{}", o.summary());
        undos.push(o.undo().unwrap());
    }
    for d in v2_top.iter().chain(&v1_tops) {
        assert!(d.join("made").is_dir(), "{}", d.display());
    }
    for u in undos.iter().rev() {
        let o = b.do_op(u);
        assert!(o.is_ok(), "{}", o.summary());
    }
    for d in v2_top.iter().chain(&v1_tops) {
        assert!(!d.join("made").exists(), "{}", d.display());
    }
    // removal in the reverse order; then the tops go
    for op in write::remove_group_in(&b.group(), &hs) {
        let _ = b.do_op(&op);
    }
    for d in v2_top.iter().chain(&v1_tops) {
        assert!(!d.exists(), "{}", d.display());
    }
}

#[test]
fn the_writer_thread_performs_each_op_in_its_hierarchy_and_logs_it() {
    use cgtop::app::writes::WriteRequest;
    use cgtop::app::Msg;
    let b = sandbox!("pids", "cpu");
    let (g, pids, cpu) = (b.group(), b.hier("pids"), b.hier("cpu"));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("actions.log");
    let hiers = Arc::new(Hiers::open(b.layout().clone()));
    let (tx, rx) = std::sync::mpsc::channel::<Msg>();
    let w = cgtop::run::spawn_writer(
        Arc::clone(&hiers),
        actionlog::ActionLog::at(log.clone()),
        tx,
    )
    .unwrap();
    // one request, two hierarchies, as the limits form sends them
    w.send(WriteRequest::Ops(vec![
        write::set_pids_max(&g, Limit::Value(64)).on(pids),
        write::set_cpu_shares(&g, cpu, 256),
    ]))
    .unwrap();
    let msg = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let Msg::WriteFinished { outcomes, .. } = msg else {
        panic!("not a write's answer");
    };
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes.iter().all(cgtop::model::WriteOutcome::is_ok));
    assert_eq!(b.read("pids", "pids.max"), "64");
    assert_eq!(b.read("cpu", v1_files::CPU_SHARES), "256");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains(&format!(" pids:/{} pids.max max to 64 ok", b.name)),
        "{text}"
    );
    assert!(
        lines[1].contains(&format!(" cpu:/{} cpu.shares 1024 to 256 ok", b.name)),
        "{text}"
    );
}

#[test]
fn a_move_into_a_new_cpuset_group_is_enospc_in_words() {
    let mut b = sandbox!("cpuset");
    let (g, h) = (b.group(), b.hier("cpuset"));
    let pid = b.spawn();
    let o = b.do_op(&write::move_process_in(pid, &g, false, h));
    let err = o.result.unwrap_err();
    assert_eq!(err.errno_name(), "ENOSPC");
    assert!(err.explanation.contains("no CPUs or memory nodes"), "{err}");
    assert!(err.fix.unwrap_or_default().contains("cpuset.cpus"));
}
