//! The Prometheus exposition of one reading: OpenMetrics 1.0.0 or the
//! Prometheus text format 0.0.4, from typed samples (`cgtop
//! --openmetrics`, `cgtop serve`).
//!
//! [`FAMILIES`] is the one table of metric families (name, type, unit,
//! help, labels): the formatter writes from it, README's metric list is
//! made from it ([`markdown`]), and the tests check the output against
//! it. The names are a contract (dashboards, alerts, the real-Prometheus
//! test): add, never rename.
//!
//! Label values: a group's path is its escaped text (`model::tree::text`, the
//! escapes the TUI and `--json` show: control bytes as `\n`, `\x1b`, bytes
//! that are not UTF-8 as `\xff`, a backslash doubled where it would read as
//! an escape), then the exposition's own escapes (`\\`, `\"`, `\n`). Both
//! steps are one-to-one, so two groups never share a series and the text
//! is always valid UTF-8 without control bytes.
//!
//! A counter's sample is the family name with `_total`; OpenMetrics says
//! `# TYPE family counter` and the text format `# TYPE family_total
//! counter`. `cgroup_info` is an OpenMetrics info family (`cgroup`), a
//! gauge of value 1 in the text format. A limit that is `max` is absent,
//! never `+Inf`.

use crate::cgroupfs::io::{DevId, IoStatDevice};
use crate::cgroupfs::{CgroupType, Limit, Pressure};
use crate::model::{DeviceInfo, GroupSample};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::time::Duration;

/// Which exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0.0 (`# UNIT`, counters as `X` + `X_total`, `# EOF`).
    OpenMetrics,
    /// The Prometheus text format 0.0.4.
    Text,
}

impl Format {
    /// The Content-Type of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Self::Text => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// The format an HTTP `Accept` header asks for: OpenMetrics when it
    /// names `application/openmetrics-text` (version 1.0.0, or none) with
    /// a q above 0, else the text format (what Prometheus, curl and
    /// every older scraper read).
    pub fn negotiate(accept: Option<&str>) -> Self {
        let Some(accept) = accept else {
            return Self::Text;
        };
        for part in accept.split(',') {
            let mut params = part.split(';').map(str::trim);
            let media = params.next().unwrap_or("");
            if !media.eq_ignore_ascii_case("application/openmetrics-text") {
                continue;
            }
            let mut ok = true;
            for p in params {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let v = v.trim().trim_matches('"');
                match k.trim().to_ascii_lowercase().as_str() {
                    "version" => ok &= v == "1.0.0",
                    "q" => ok &= v.parse::<f64>().is_ok_and(|q| q > 0.0),
                    _ => {}
                }
            }
            if ok {
                return Self::OpenMetrics;
            }
        }
        Self::Text
    }
}

/// A family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    /// OpenMetrics info (a gauge of 1 in the text format).
    Info,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Info => "info",
        }
    }
}

/// What a family measures: the formatter's switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    CpuUsage,
    CpuUser,
    CpuSystem,
    CpuPeriods,
    CpuThrottledPeriods,
    CpuThrottled,
    IoReadBytes,
    IoWrittenBytes,
    IoReads,
    IoWrites,
    IoDiscardedBytes,
    IoDiscards,
    MemoryEvents,
    PressureWaiting(Resource),
    PressureStalled(Resource),
    MemoryCurrent,
    MemorySwapCurrent,
    PidsCurrent,
    MemoryMax,
    MemoryHigh,
    MemoryLow,
    MemoryMin,
    MemorySwapMax,
    PidsMax,
    CpuMaxQuota,
    CpuMaxPeriod,
    CpuWeight,
    IoMaxReadBps,
    IoMaxWriteBps,
    IoMaxReadIops,
    IoMaxWriteIops,
    Info,
    ScrapeDuration,
    ScrapeGroups,
}

/// The resource of a pressure file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Cpu,
    Memory,
    Io,
}

/// One metric family.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub metric: Metric,
    /// The family's name (OpenMetrics): a counter's sample adds `_total`,
    /// an info's `_info`.
    pub name: &'static str,
    pub kind: Kind,
    /// The OpenMetrics unit (the name's suffix), or "".
    pub unit: &'static str,
    pub help: &'static str,
    /// The labels of its samples (README's list).
    pub labels: &'static [&'static str],
    /// Where the figure comes from (README's list).
    pub source: &'static str,
}

impl Family {
    /// The name of its samples: `X_total` for a counter, `X_info` for an
    /// info, else the family's.
    pub fn sample_name(&self) -> String {
        match self.kind {
            Kind::Counter => format!("{}_total", self.name),
            Kind::Info => format!("{}_info", self.name),
            Kind::Gauge => self.name.to_owned(),
        }
    }
}

const G: &[&str] = &["cgroup"];
const GD: &[&str] = &["cgroup", "device", "major_minor"];

macro_rules! fam {
    ($m:expr, $name:literal, $kind:ident, $unit:literal, $labels:expr, $src:literal, $help:literal) => {
        Family {
            metric: $m,
            name: $name,
            kind: Kind::$kind,
            unit: $unit,
            help: $help,
            labels: $labels,
            source: $src,
        }
    };
}

/// Every family, in the order they are written.
pub const FAMILIES: &[Family] = &[
    fam!(
        Metric::Info,
        "cgroup",
        Info,
        "",
        &["cgroup", "type", "frozen", "populated", "container", "pod", "namespace", "image"],
        "cgroup.type, cgroup.events (v1: freezer.state); the group's identity",
        "A group: its type, whether frozen and populated, and who it is: a container's name (else its short id), its pod, namespace and image (labels absent where unknown)."
    ),
    fam!(
        Metric::CpuUsage,
        "cgroup_cpu_usage_seconds",
        Counter,
        "seconds",
        G,
        "cpu.stat usage_usec (v1: cpuacct.usage)",
        "CPU time used by the group and its descendants."
    ),
    fam!(
        Metric::CpuUser,
        "cgroup_cpu_user_seconds",
        Counter,
        "seconds",
        G,
        "cpu.stat user_usec (v1: cpuacct.stat)",
        "CPU time in user mode."
    ),
    fam!(
        Metric::CpuSystem,
        "cgroup_cpu_system_seconds",
        Counter,
        "seconds",
        G,
        "cpu.stat system_usec (v1: cpuacct.stat)",
        "CPU time in kernel mode."
    ),
    fam!(
        Metric::CpuPeriods,
        "cgroup_cpu_periods",
        Counter,
        "",
        G,
        "cpu.stat nr_periods",
        "Enforcement periods of cpu.max that elapsed."
    ),
    fam!(
        Metric::CpuThrottledPeriods,
        "cgroup_cpu_throttled_periods",
        Counter,
        "",
        G,
        "cpu.stat nr_throttled",
        "Periods in which the group was throttled."
    ),
    fam!(
        Metric::CpuThrottled,
        "cgroup_cpu_throttled_seconds",
        Counter,
        "seconds",
        G,
        "cpu.stat throttled_usec (v1: throttled_time)",
        "Time the group's tasks were throttled."
    ),
    fam!(
        Metric::IoReadBytes,
        "cgroup_io_read_bytes",
        Counter,
        "bytes",
        GD,
        "io.stat rbytes (v1: blkio.throttle.io_service_bytes_recursive)",
        "Bytes read, per device."
    ),
    fam!(
        Metric::IoWrittenBytes,
        "cgroup_io_written_bytes",
        Counter,
        "bytes",
        GD,
        "io.stat wbytes (v1: blkio.throttle.io_service_bytes_recursive)",
        "Bytes written, per device."
    ),
    fam!(
        Metric::IoReads,
        "cgroup_io_reads",
        Counter,
        "",
        GD,
        "io.stat rios (v1: blkio.throttle.io_serviced_recursive)",
        "Read operations, per device."
    ),
    fam!(
        Metric::IoWrites,
        "cgroup_io_writes",
        Counter,
        "",
        GD,
        "io.stat wios (v1: blkio.throttle.io_serviced_recursive)",
        "Write operations, per device."
    ),
    fam!(
        Metric::IoDiscardedBytes,
        "cgroup_io_discarded_bytes",
        Counter,
        "bytes",
        GD,
        "io.stat dbytes",
        "Bytes discarded, per device."
    ),
    fam!(
        Metric::IoDiscards,
        "cgroup_io_discards",
        Counter,
        "",
        GD,
        "io.stat dios",
        "Discard operations, per device."
    ),
    fam!(
        Metric::MemoryEvents,
        "cgroup_memory_events",
        Counter,
        "",
        &["cgroup", "event"],
        "memory.events",
        "Memory events (low, high, max, oom, oom_kill, oom_group_kill)."
    ),
    fam!(
        Metric::PressureWaiting(Resource::Cpu),
        "cgroup_pressure_cpu_waiting_seconds",
        Counter,
        "seconds",
        G,
        "cpu.pressure some total",
        "Time some tasks waited for CPU (PSI some)."
    ),
    fam!(
        Metric::PressureStalled(Resource::Cpu),
        "cgroup_pressure_cpu_stalled_seconds",
        Counter,
        "seconds",
        G,
        "cpu.pressure full total (Linux 5.13+)",
        "Time all non-idle tasks waited for CPU (PSI full)."
    ),
    fam!(
        Metric::PressureWaiting(Resource::Memory),
        "cgroup_pressure_memory_waiting_seconds",
        Counter,
        "seconds",
        G,
        "memory.pressure some total",
        "Time some tasks waited for memory (PSI some)."
    ),
    fam!(
        Metric::PressureStalled(Resource::Memory),
        "cgroup_pressure_memory_stalled_seconds",
        Counter,
        "seconds",
        G,
        "memory.pressure full total",
        "Time all non-idle tasks waited for memory (PSI full)."
    ),
    fam!(
        Metric::PressureWaiting(Resource::Io),
        "cgroup_pressure_io_waiting_seconds",
        Counter,
        "seconds",
        G,
        "io.pressure some total",
        "Time some tasks waited for IO (PSI some)."
    ),
    fam!(
        Metric::PressureStalled(Resource::Io),
        "cgroup_pressure_io_stalled_seconds",
        Counter,
        "seconds",
        G,
        "io.pressure full total",
        "Time all non-idle tasks waited for IO (PSI full)."
    ),
    fam!(
        Metric::MemoryCurrent,
        "cgroup_memory_current_bytes",
        Gauge,
        "bytes",
        G,
        "memory.current (v1: memory.usage_in_bytes)",
        "Memory used by the group and its descendants."
    ),
    fam!(
        Metric::MemorySwapCurrent,
        "cgroup_memory_swap_current_bytes",
        Gauge,
        "bytes",
        G,
        "memory.swap.current (v1: memsw.usage - usage)",
        "Swap used."
    ),
    fam!(
        Metric::PidsCurrent,
        "cgroup_pids_current",
        Gauge,
        "",
        G,
        "pids.current (else cgroup.procs' count)",
        "Processes in the group (pids.current: its subtree)."
    ),
    fam!(
        Metric::MemoryMax,
        "cgroup_memory_max_bytes",
        Gauge,
        "bytes",
        G,
        "memory.max (v1: memory.limit_in_bytes)",
        "memory.max; absent when max."
    ),
    fam!(
        Metric::MemoryHigh,
        "cgroup_memory_high_bytes",
        Gauge,
        "bytes",
        G,
        "memory.high",
        "memory.high; absent when max."
    ),
    fam!(
        Metric::MemoryLow,
        "cgroup_memory_low_bytes",
        Gauge,
        "bytes",
        G,
        "memory.low",
        "memory.low; absent when max."
    ),
    fam!(
        Metric::MemoryMin,
        "cgroup_memory_min_bytes",
        Gauge,
        "bytes",
        G,
        "memory.min",
        "memory.min; absent when max."
    ),
    fam!(
        Metric::MemorySwapMax,
        "cgroup_memory_swap_max_bytes",
        Gauge,
        "bytes",
        G,
        "memory.swap.max",
        "memory.swap.max; absent when max."
    ),
    fam!(
        Metric::PidsMax,
        "cgroup_pids_max",
        Gauge,
        "",
        G,
        "pids.max",
        "pids.max; absent when max."
    ),
    fam!(
        Metric::CpuMaxQuota,
        "cgroup_cpu_max_quota_seconds",
        Gauge,
        "seconds",
        G,
        "cpu.max (v1: cpu.cfs_quota_us)",
        "cpu.max's quota per period; absent when max."
    ),
    fam!(
        Metric::CpuMaxPeriod,
        "cgroup_cpu_max_period_seconds",
        Gauge,
        "seconds",
        G,
        "cpu.max (v1: cpu.cfs_period_us)",
        "cpu.max's period, where a quota is set."
    ),
    fam!(
        Metric::CpuWeight,
        "cgroup_cpu_weight",
        Gauge,
        "",
        G,
        "cpu.weight",
        "cpu.weight (1-10000, default 100)."
    ),
    fam!(
        Metric::IoMaxReadBps,
        "cgroup_io_max_read_bytes_per_second",
        Gauge,
        "",
        GD,
        "io.max rbps (v1: blkio.throttle.read_bps_device)",
        "io.max rbps per device; absent when max."
    ),
    fam!(
        Metric::IoMaxWriteBps,
        "cgroup_io_max_write_bytes_per_second",
        Gauge,
        "",
        GD,
        "io.max wbps (v1: blkio.throttle.write_bps_device)",
        "io.max wbps per device; absent when max."
    ),
    fam!(
        Metric::IoMaxReadIops,
        "cgroup_io_max_read_iops",
        Gauge,
        "",
        GD,
        "io.max riops (v1: blkio.throttle.read_iops_device)",
        "io.max riops per device; absent when max."
    ),
    fam!(
        Metric::IoMaxWriteIops,
        "cgroup_io_max_write_iops",
        Gauge,
        "",
        GD,
        "io.max wiops (v1: blkio.throttle.write_iops_device)",
        "io.max wiops per device; absent when max."
    ),
    fam!(
        Metric::ScrapeDuration,
        "cgtop_scrape_duration_seconds",
        Gauge,
        "seconds",
        &[],
        "cgtop's clock",
        "Seconds the reading of the hierarchy took."
    ),
    fam!(
        Metric::ScrapeGroups,
        "cgtop_scrape_groups",
        Gauge,
        "",
        &[],
        "cgtop",
        "Groups in this exposition."
    ),
];

/// One reading to expose.
pub struct Scrape<'a> {
    /// The groups, parents first (a snapshot's order), already filtered.
    pub groups: Vec<&'a GroupSample>,
    /// Block devices by number, for the `device` label.
    pub devices: &'a [DeviceInfo],
    /// What the reading took.
    pub duration: Duration,
}

/// `s` with the exposition's escapes of a label value: `\` `"` and a
/// line feed (the only ones the formats define).
fn push_label_value(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// HELP text escapes: `\` and a line feed.
fn push_help(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Microseconds as exact decimal seconds ("1.5", "0.000001", "3").
fn push_usec(out: &mut String, usec: u64) {
    let (s, frac) = (usec / 1_000_000, usec % 1_000_000);
    if frac == 0 {
        let _ = write!(out, "{s}");
    } else {
        let f = format!("{frac:06}");
        let _ = write!(out, "{s}.{}", f.trim_end_matches('0'));
    }
}

/// A value of a sample.
#[derive(Clone, Copy)]
enum Value {
    Int(u64),
    Usec(u64),
    Float(f64),
}

/// Writes the samples of one family.
struct Writer<'o> {
    out: &'o mut String,
    sample: String,
    /// The escaped `cgroup` label value of the group being written.
    cgroup: String,
}

impl Writer<'_> {
    fn sample(&mut self, extra: &[(&str, &str)], v: Value) {
        self.out.push_str(&self.sample);
        let mut first = true;
        if !self.cgroup.is_empty() {
            self.out.push_str("{cgroup=\"");
            self.out.push_str(&self.cgroup);
            self.out.push('"');
            first = false;
        }
        for (k, val) in extra {
            self.out.push(if first { '{' } else { ',' });
            first = false;
            self.out.push_str(k);
            self.out.push_str("=\"");
            push_label_value(self.out, val);
            self.out.push('"');
        }
        if !first {
            self.out.push('}');
        }
        self.out.push(' ');
        match v {
            Value::Int(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Usec(u) => push_usec(self.out, u),
            Value::Float(f) => {
                let _ = write!(self.out, "{f}");
            }
        }
        self.out.push('\n');
    }
}

fn device_name(devices: &[DeviceInfo], d: DevId) -> String {
    devices
        .iter()
        .find(|i| i.dev == d)
        // a name from sysfs, shown escaped as every outside text is
        .map_or_else(
            || format!("{}:{}", d.major, d.minor),
            |i| crate::model::tree::text::escape_str(&i.name).into_owned(),
        )
}

fn type_word(t: CgroupType) -> &'static str {
    match t {
        CgroupType::Domain => "domain",
        CgroupType::DomainThreaded => "domain threaded",
        CgroupType::DomainInvalid => "domain invalid",
        CgroupType::Threaded => "threaded",
    }
}

fn bit(b: bool) -> &'static str {
    if b {
        "1"
    } else {
        "0"
    }
}

/// The samples of family `f` for group `g`.
fn group_samples(w: &mut Writer<'_>, f: Metric, g: &GroupSample, devices: &[DeviceInfo]) {
    let d = g.detail.as_deref();
    let cpu = g.hot.cpu.as_ref();
    let limit = |l: Option<Limit>| l.and_then(Limit::value).map(Value::Int);
    let one = |w: &mut Writer<'_>, v: Option<Value>| {
        if let Some(v) = v {
            w.sample(&[], v);
        }
    };
    let pressure = |r: Resource| -> Option<&Pressure> {
        let d = d?;
        match r {
            Resource::Cpu => d.cpu_pressure.as_ref(),
            Resource::Memory => d.memory_pressure.as_ref(),
            Resource::Io => d.io_pressure.as_ref(),
        }
    };
    match f {
        Metric::Info => {
            let mut labels: Vec<(&str, &str)> = Vec::new();
            if let Some(t) = g.cgroup_type {
                labels.push(("type", type_word(t)));
            }
            let ev = g.hot.events.unwrap_or_default();
            let frozen = ev.frozen.or_else(|| {
                g.hot
                    .v1
                    .freezer_state
                    .map(|s| s == crate::cgroupfs::v1::FreezerState::Frozen)
            });
            if let Some(fz) = frozen {
                labels.push(("frozen", bit(fz)));
            }
            if let Some(p) = ev.populated {
                labels.push(("populated", bit(p)));
            }
            // who the group is: on this one series only, so that no other
            // series gains a label (one series a group, as before)
            let who = crate::model::identity::of_group(g)
                .map(|i| crate::render::identity::info_labels(&i))
                .unwrap_or_default();
            labels.extend(who.iter().map(|(k, v)| (*k, v.as_str())));
            w.sample(&labels, Value::Int(1));
        }
        Metric::CpuUsage => one(w, cpu.map(|c| Value::Usec(c.usage_usec))),
        Metric::CpuUser => one(w, cpu.and_then(|c| c.user_usec).map(Value::Usec)),
        Metric::CpuSystem => one(w, cpu.and_then(|c| c.system_usec).map(Value::Usec)),
        Metric::CpuPeriods => one(w, cpu.and_then(|c| c.nr_periods).map(Value::Int)),
        Metric::CpuThrottledPeriods => one(w, cpu.and_then(|c| c.nr_throttled).map(Value::Int)),
        Metric::CpuThrottled => one(w, cpu.and_then(|c| c.throttled_usec).map(Value::Usec)),
        Metric::IoReadBytes
        | Metric::IoWrittenBytes
        | Metric::IoReads
        | Metric::IoWrites
        | Metric::IoDiscardedBytes
        | Metric::IoDiscards => {
            let Some(io) = g.hot.io.as_ref() else { return };
            let mut seen = HashSet::new();
            for (dev, st) in &io.0 {
                let v = match f {
                    Metric::IoReadBytes => st.rbytes,
                    Metric::IoWrittenBytes => st.wbytes,
                    Metric::IoReads => st.rios,
                    Metric::IoWrites => st.wios,
                    Metric::IoDiscardedBytes => st.dbytes,
                    _ => st.dios,
                };
                let Some(v) = v else { continue };
                let (name, mm) = match dev {
                    IoStatDevice::Dev(id) => (
                        device_name(devices, *id),
                        format!("{}:{}", id.major, id.minor),
                    ),
                    IoStatDevice::Unknown => (IoStatDevice::UNKNOWN.to_owned(), String::new()),
                };
                if seen.insert(mm.clone()) {
                    w.sample(&[("device", &name), ("major_minor", &mm)], Value::Int(v));
                }
            }
        }
        Metric::MemoryEvents => {
            let Some(ev) = d.and_then(|d| d.memory_events.as_ref()) else {
                return;
            };
            for (name, v) in [
                ("low", ev.low),
                ("high", ev.high),
                ("max", ev.max),
                ("oom", ev.oom),
                ("oom_kill", ev.oom_kill),
                ("oom_group_kill", ev.oom_group_kill),
            ] {
                if let Some(v) = v {
                    w.sample(&[("event", name)], Value::Int(v));
                }
            }
        }
        Metric::PressureWaiting(r) => one(w, pressure(r).map(|p| Value::Usec(p.some.total_usec))),
        Metric::PressureStalled(r) => one(
            w,
            pressure(r)
                .and_then(|p| p.full)
                .map(|l| Value::Usec(l.total_usec)),
        ),
        Metric::MemoryCurrent => one(w, g.hot.memory_current.map(Value::Int)),
        Metric::MemorySwapCurrent => one(
            w,
            g.hot
                .swap_current
                .or_else(|| d.and_then(|d| d.swap_current))
                .map(Value::Int),
        ),
        Metric::PidsCurrent => one(w, g.pids().map(Value::Int)),
        Metric::MemoryMax => one(w, limit(d.and_then(|d| d.memory_max))),
        Metric::MemoryHigh => one(w, limit(d.and_then(|d| d.memory_high))),
        Metric::MemoryLow => one(w, limit(d.and_then(|d| d.memory_low))),
        Metric::MemoryMin => one(w, limit(d.and_then(|d| d.memory_min))),
        Metric::MemorySwapMax => one(w, limit(d.and_then(|d| d.swap_max))),
        Metric::PidsMax => one(w, limit(d.and_then(|d| d.pids_max))),
        Metric::CpuMaxQuota | Metric::CpuMaxPeriod => {
            let Some(m) = d.and_then(|d| d.cpu_max) else {
                return;
            };
            if let Some(q) = m.quota {
                let v = if f == Metric::CpuMaxQuota {
                    q
                } else {
                    m.period
                };
                w.sample(&[], Value::Usec(v));
            }
        }
        Metric::CpuWeight => one(
            w,
            d.and_then(|d| d.cpu_weight).map(|v| Value::Int(v.into())),
        ),
        Metric::IoMaxReadBps
        | Metric::IoMaxWriteBps
        | Metric::IoMaxReadIops
        | Metric::IoMaxWriteIops => {
            let Some(m) = d.and_then(|d| d.io_max.as_ref()) else {
                return;
            };
            let mut seen = HashSet::new();
            for e in &m.0 {
                let l = match f {
                    Metric::IoMaxReadBps => e.rbps,
                    Metric::IoMaxWriteBps => e.wbps,
                    Metric::IoMaxReadIops => e.riops,
                    _ => e.wiops,
                };
                let Some(v) = l.value() else { continue };
                let mm = format!("{}:{}", e.dev.major, e.dev.minor);
                if seen.insert(e.dev) {
                    w.sample(
                        &[
                            ("device", &device_name(devices, e.dev)),
                            ("major_minor", &mm),
                        ],
                        Value::Int(v),
                    );
                }
            }
        }
        Metric::ScrapeDuration | Metric::ScrapeGroups => {}
    }
}

/// The exposition of `s` in `format`.
pub fn write(s: &Scrape<'_>, format: Format) -> String {
    let mut out = String::with_capacity(256 + s.groups.len() * 1200);
    // each group's label value, once
    let labels: Vec<String> = s
        .groups
        .iter()
        .map(|g| {
            let mut l = String::new();
            push_label_value(&mut l, &g.path.data().to_string());
            l
        })
        .collect();
    for f in FAMILIES {
        let sample = f.sample_name();
        match format {
            Format::OpenMetrics => {
                let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind.name());
                if !f.unit.is_empty() {
                    let _ = writeln!(out, "# UNIT {} {}", f.name, f.unit);
                }
                let _ = write!(out, "# HELP {} ", f.name);
            }
            Format::Text => {
                let kind = match f.kind {
                    Kind::Info => "gauge",
                    k => k.name(),
                };
                let _ = write!(out, "# HELP {sample} ");
                push_help(&mut out, f.help);
                let _ = writeln!(out, "\n# TYPE {sample} {kind}");
            }
        }
        if format == Format::OpenMetrics {
            push_help(&mut out, f.help);
            out.push('\n');
        }
        let mut w = Writer {
            out: &mut out,
            sample,
            cgroup: String::new(),
        };
        match f.metric {
            Metric::ScrapeDuration => w.sample(&[], Value::Float(s.duration.as_secs_f64())),
            Metric::ScrapeGroups => w.sample(&[], Value::Int(s.groups.len() as u64)),
            m => {
                for (g, l) in s.groups.iter().zip(&labels) {
                    w.cgroup.clone_from(l);
                    group_samples(&mut w, m, g, s.devices);
                }
            }
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// README's metric list: a Markdown table of [`FAMILIES`] (the sample
/// names, as a query names them).
pub fn markdown() -> String {
    let mut s =
        String::from("| metric | type | labels | from | meaning |\n|---|---|---|---|---|\n");
    for f in FAMILIES {
        let labels = f.labels.join(", ");
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            f.sample_name(),
            f.kind.name(),
            labels,
            f.source,
            f.help
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let om = "application/openmetrics-text; version=1.0.0";
        assert_eq!(Format::negotiate(Some(om)), Format::OpenMetrics);
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text")),
            Format::OpenMetrics
        );
        // Prometheus 2.x's own header
        assert_eq!(
            Format::negotiate(Some(
                "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
            )),
            Format::OpenMetrics
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text; version=0.0.1")),
            Format::Text
        );
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text; q=0")),
            Format::Text
        );
        assert_eq!(Format::negotiate(Some("text/plain")), Format::Text);
        assert_eq!(Format::negotiate(None), Format::Text);
    }

    #[test]
    fn usec_is_exact() {
        let s = |u| {
            let mut o = String::new();
            push_usec(&mut o, u);
            o
        };
        assert_eq!(s(0), "0");
        assert_eq!(s(1), "0.000001");
        assert_eq!(s(1_500_000), "1.5");
        assert_eq!(s(u64::MAX), "18446744073709.551615");
    }

    #[test]
    fn units_are_name_suffixes() {
        for f in FAMILIES {
            if !f.unit.is_empty() {
                assert!(f.name.ends_with(&format!("_{}", f.unit)), "{}", f.name);
            }
            assert!(!f.name.ends_with("_total"), "{}", f.name);
        }
    }
}
