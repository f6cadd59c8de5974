//! Hostile inputs: parsers. A `--root` tree, or a file in a delegated
//! subtree read through a bind mount, can hold any bytes. Every parser of
//! `src/cgroupfs` (and the typed-input parsers of `model::write::input`, which see
//! what the operator types or pastes) must return a value or an error for
//! any text, never panic; and what follows a parse in cgtop (totals, rates'
//! inputs, Display, JSON) must not panic either. The second half checks the
//! writers: every text `model::write` produces for the kernel parses back,
//! with the reader of that file, to the value written.
//!
//! The cgroupfs parsers (`grep -n 'fn parse' src/cgroupfs`): `Limit::parse`,
//! `parse_u64`, `parse_pids`, `flat_keyed`, `Keyed::parse`,
//! `Controllers::parse`, `CgroupType::parse`, `CgroupEvents::parse`,
//! `CgroupStat::parse`, `CpuStat::parse`, `CpuMax::parse`,
//! `MemoryStat::parse`, `MemoryEvents::parse`, `DevId::parse`,
//! `IoStatDevice::parse`, `IoStat::parse`, `IoMax::parse`,
//! `IoWeight::parse`, `IoLatency::parse`, `Pressure::parse`.

use cgtop::cgroupfs::{
    self, CgroupEvents, CgroupStat, CgroupType, Controllers, CpuMax, CpuStat, DevId, IoLatency,
    IoMax, IoStat, IoStatDevice, IoWeight, Keyed, Limit, MemoryEvents, MemoryStat, Pressure,
};
use cgtop::model::write::input::{self, ControllerChange, IoMaxSet, MemoryFile};
use cgtop::model::write::{self, Op};
use cgtop::model::GroupPath;
use proptest::prelude::*;

/// Enough cases to find the edges, few enough for a 2-core machine.
fn config() -> ProptestConfig {
    ProptestConfig::with_cases(512)
}

/// Every cgroupfs parser on one text, and what cgtop does with the values.
fn parse_everything(s: &str) {
    let _ = Limit::parse("memory.max", s).map(|l| (l.to_string(), l.value()));
    let _ = cgroupfs::parse_u64("memory.current", s);
    let _ = cgroupfs::parse_pids(s);
    let _ = cgroupfs::flat_keyed(s).count();
    let k = Keyed::parse(s);
    let _ = (k.to_string(), k.get("usage_usec"), k.len());
    let _ = serde_json::to_string(&k);
    let c = Controllers::parse(s);
    let _ = (c.to_string(), c.contains("io"));
    let _ = CgroupType::parse(s).map(CgroupType::is_threaded);
    let e = CgroupEvents::parse(s);
    let _ = (e.is_frozen(), e.is_populated());
    let _ = CgroupStat::parse(s);
    let _ = CpuStat::parse(s);
    let _ = CpuMax::parse(s).map(|m| (m.cpus(), m.to_string()));
    let _ = serde_json::to_string(&MemoryStat::parse(s));
    let ev = MemoryEvents::parse(s);
    let _ = (ev.since(&ev), ev.since(&MemoryEvents::default()));
    let _ = MemoryEvents::default().since(&ev);
    for tok in s.split_ascii_whitespace().take(64) {
        let _ = DevId::parse(tok).map(|d| d.to_string());
        let _ = IoStatDevice::parse(tok).map(|d| d.to_string());
    }
    let io = IoStat::parse(s);
    let _ = (io.total(), serde_json::to_string(&io));
    if let Some((d, _)) = io.0.first() {
        let _ = io.get(*d);
    }
    let _ = IoMax::parse(s).map(|m| m.0.iter().map(ToString::to_string).count());
    let _ = IoWeight::parse(s).map(|w| w.to_string());
    let _ = IoLatency::parse(s);
    let _ = Pressure::parse(s).map(|p| serde_json::to_string(&p));
}

/// The typed-input parsers on one text.
fn parse_input(s: &str) {
    let dev = DevId { major: 8, minor: 0 };
    let _ = input::parse_cpu_max(s, None);
    let _ = input::parse_cpu_max(s, Some(100_000));
    let _ = input::parse_cpu_max_burst(s, None);
    let _ = input::parse_cpu_max_burst(s, Some(50_000));
    let _ = input::parse_cpu_weight(s);
    let _ = input::parse_cpu_weight_nice(s);
    for f in MemoryFile::ALL {
        let _ = input::parse_memory(f, s);
    }
    let _ = input::parse_io_bps(s);
    let _ = input::parse_io_iops(s);
    let _ = input::parse_io_max(dev, s, s, "", s);
    let _ = input::parse_io_weight(s, false);
    let _ = input::parse_io_weight(s, true);
    let _ = input::parse_io_latency(s);
    let _ = input::parse_pids_max(s);
    let _ = input::parse_pid(s);
    let _ = input::parse_group_name(s, &["a", "b"]);
    let _ = input::parse_controller_changes(s);
}

/// Text made of the pieces kernel files are made of, so that the parsers
/// get past their first check: numbers (some at the u64 edge), device
/// numbers, `key=value`, `max`, `(unknown)`, separators.
fn kernel_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\t".to_owned()),
        Just("=".to_owned()),
        Just(":".to_owned()),
        Just("max".to_owned()),
        Just("(unknown)".to_owned()),
        Just("some".to_owned()),
        Just("full".to_owned()),
        Just("default".to_owned()),
        Just("target=".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("18446744073709551616".to_owned()),
        Just("-1".to_owned()),
        Just("NaN".to_owned()),
        Just("+".to_owned()),
        Just("\u{FFFD}".to_owned()),
        "[a-z_.]{1,12}",
        any::<u64>().prop_map(|v| v.to_string()),
        (0u32..300, 0u32..300).prop_map(|(a, b)| format!("{a}:{b}")),
        "(rbytes|wbytes|rios|wios|dbytes|dios|avg10|avg60|avg300|total|rbps|wbps|riops|wiops)=[0-9.]{0,22}",
        "(usage_usec|user_usec|system_usec|nr_throttled|populated|frozen|oom_kill|nr_descendants) [0-9]{0,21}",
    ];
    prop::collection::vec(piece, 0..64).prop_map(|v| v.concat())
}

/// A number as a hostile file may hold it: 0, small, at the u64 edge.
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        0u64..5000,
        any::<u64>()
    ]
}

/// Lines shaped like the nested-keyed io files (io.stat, io.max,
/// io.latency, io.weight): device tokens, then `key=value` pairs.
fn io_like() -> impl Strategy<Value = String> {
    let device = prop_oneof![
        (0u32..4, 0u32..4).prop_map(|(a, b)| format!("{a}:{b}")),
        Just("(unknown)".to_owned()),
        Just("default".to_owned()),
        Just("8:".to_owned()),
    ];
    let key = prop_oneof![
        Just("rbytes"),
        Just("wbytes"),
        Just("rios"),
        Just("wios"),
        Just("dbytes"),
        Just("dios"),
        Just("rbps"),
        Just("wiops"),
        Just("target"),
        Just("avg10"),
    ];
    let value = prop_oneof![number().prop_map(|v| v.to_string()), Just("max".to_owned())];
    let pair = (key, value).prop_map(|(k, v)| format!("{k}={v}"));
    let line = (
        prop::collection::vec(device, 0..4),
        prop::collection::vec(pair, 0..7),
    )
        .prop_map(|(d, p)| [d, p].concat().join(" "));
    prop::collection::vec(line, 0..8).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn io_like_text_never_panics_a_parser(s in io_like()) {
        parse_everything(&s);
    }

    #[test]
    fn arbitrary_bytes_never_panic_a_parser(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let s = String::from_utf8_lossy(&bytes);
        parse_everything(&s);
        parse_input(&s);
    }

    #[test]
    fn kernel_like_text_never_panics_a_parser(s in kernel_like()) {
        parse_everything(&s);
        parse_input(&s);
    }
}

// ---- every value a writer produces parses back to itself ----

fn contents(op: &Op) -> &str {
    match op {
        Op::Write(w) => &w.contents,
        other => panic!("not a write: {other:?}"),
    }
}

fn limit() -> impl Strategy<Value = Limit> {
    prop_oneof![Just(Limit::Max), any::<u64>().prop_map(Limit::Value)]
}

fn dev() -> impl Strategy<Value = DevId> {
    (any::<u32>(), any::<u32>()).prop_map(|(major, minor)| DevId { major, minor })
}

fn group() -> GroupPath {
    GroupPath::new("a/b")
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn cpu_max_write_reads_back(quota in prop::option::of(any::<u64>()), period in any::<u64>()) {
        let v = CpuMax { quota, period };
        prop_assert_eq!(CpuMax::parse(contents(&write::set_cpu_max(&group(), v))), Ok(v));
    }

    #[test]
    fn single_number_writes_read_back(n in any::<u64>(), w in any::<u32>(), nice in any::<i32>()) {
        let burst = write::set_cpu_max_burst(&group(), n);
        prop_assert_eq!(cgroupfs::parse_u64("cpu.max.burst", contents(&burst)), Ok(n));
        let weight = write::set_cpu_weight(&group(), w);
        prop_assert_eq!(contents(&weight).trim().parse::<u32>(), Ok(w));
        let nice_op = write::set_cpu_weight_nice(&group(), nice);
        prop_assert_eq!(contents(&nice_op).trim().parse::<i32>(), Ok(nice));
    }

    #[test]
    fn limit_writes_read_back(l in limit()) {
        for f in MemoryFile::ALL {
            let op = write::set_memory_limit(&group(), f, l);
            prop_assert_eq!(Limit::parse("memory", contents(&op)), Ok(l));
        }
        let op = write::set_pids_max(&group(), l);
        prop_assert_eq!(Limit::parse("pids.max", contents(&op)), Ok(l));
    }

    #[test]
    fn io_max_write_reads_back(
        d in dev(),
        rbps in prop::option::of(limit()),
        wbps in prop::option::of(limit()),
        riops in prop::option::of(limit()),
        wiops in prop::option::of(limit()),
    ) {
        let set = IoMaxSet { dev: d, rbps, wbps, riops, wiops };
        let read = IoMax::parse(contents(&write::set_io_max(&group(), set)))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.0.len(), 1);
        let m = read.0[0];
        prop_assert_eq!(m.dev, d);
        // a key not written reads as the kernel's default, max
        prop_assert_eq!(m.rbps, rbps.unwrap_or(Limit::Max));
        prop_assert_eq!(m.wbps, wbps.unwrap_or(Limit::Max));
        prop_assert_eq!(m.riops, riops.unwrap_or(Limit::Max));
        prop_assert_eq!(m.wiops, wiops.unwrap_or(Limit::Max));
    }

    #[test]
    fn io_weight_writes_read_back(d in dev(), w in any::<u32>()) {
        let op = write::set_io_weight(&group(), None, w);
        let read = IoWeight::parse(contents(&op)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.default, w);
        // a device line is a line of the file the kernel prints after "default"
        let op = write::set_io_weight(&group(), Some(d), w);
        let text = format!("default 100\n{}", contents(&op));
        let read = IoWeight::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.overrides, vec![(d, w)]);
    }

    #[test]
    fn io_latency_write_reads_back(d in dev(), t in any::<u64>()) {
        let op = write::set_io_latency(&group(), d, Some(t));
        let read = IoLatency::parse(contents(&op)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(read.get(d), Some(t));
    }

    #[test]
    fn controller_changes_read_back(
        changes in prop::collection::vec(("[a-z][a-z_]{0,11}", any::<bool>()), 1..8),
    ) {
        let changes: Vec<ControllerChange> = changes
            .into_iter()
            .map(|(name, enable)| ControllerChange { name, enable })
            .collect();
        let op = write::set_subtree_control(&group(), &changes);
        prop_assert_eq!(input::parse_controller_changes(contents(&op)), Ok(changes.clone()));
        // and the names, as cgroup.controllers lists them
        let names: Vec<String> = changes.iter().map(|c| c.name.clone()).collect();
        let listed = Controllers(names.clone()).to_string();
        prop_assert_eq!(Controllers::parse(&listed), Controllers(names));
    }

    #[test]
    fn freeze_writes_read_back(frozen in any::<bool>()) {
        let op = write::freeze(&group(), frozen);
        let text = format!("populated 1\nfrozen {}\n", contents(&op).trim());
        prop_assert_eq!(CgroupEvents::parse(&text).frozen, Some(frozen));
    }
}

/// A `--root` tree's io.stat with tens of thousands of devices (what a
/// capped read of a few MiB can hold) is parsed and turned into rates in
/// linear time: a search per device over all devices took seconds per
/// group and refresh.
#[test]
fn a_huge_io_stat_costs_linear_time() {
    use cgtop::model::{tree::rates, GroupSample};
    use std::time::Duration;
    const N: u32 = 50_000;
    let text = |add: u64| -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for i in 0..N {
            let (major, minor, rb) = (i / 256, i % 256, u64::from(i) + add);
            writeln!(s, "{major}:{minor} rbytes={rb} wbytes=1 rios=1 wios=1").unwrap();
        }
        s
    };
    let sample = |io: &str| {
        let mut s = GroupSample::new(GroupPath::new("a"), 1);
        s.hot.io = Some(IoStat::parse(io));
        s
    };
    let (t1, t2) = (text(0), text(4096));
    // this thread's CPU time, not the wall clock's: on a loaded machine
    // the wall clock counts the time the thread waits for a CPU
    let start = cgtop::source::collector::thread_cpu_time();
    let (a, b) = (sample(&t1), sample(&t2));
    let r = rates::compute(&a, &b, Duration::from_secs(1));
    let took = cgtop::source::collector::thread_cpu_time().saturating_sub(start);
    assert_eq!(b.hot.io.as_ref().map(|s| s.0.len()), Some(N as usize));
    let io = r.io.expect("a rate");
    assert!(
        (io.rbps.unwrap() - 4096.0 * f64::from(N)).abs() < 1.0,
        "{io:?}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?} of CPU time");
}
