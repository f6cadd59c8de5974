//! PURE: what an operator types in a dialog -> the exact value cgtop will
//! write, or an [`InputError`] that says in plain words what is wrong and
//! what is accepted.
//!
//! The kernel's own parsers are terse (io.max silently reads "1M" as 1 byte,
//! a bad cpu.max is a bare EINVAL), so cgtop checks the value before it
//! writes and always writes plain numbers: sizes go out in bytes, durations
//! in microseconds.
//!
//! Units for sizes are binary (1K = 1024 bytes), case-insensitive, and
//! "K", "KB" and "KiB" all mean 1024: this is the kernel's own convention
//! for sizes in memparse() (used for memory.* and the kernel command line),
//! so a value copied from a kernel document means what it says there.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::files::RESERVED_PREFIXES;
use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{CpuMax, Limit};
use std::fmt;

/// A typed value that cgtop will not write, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file or field the value was for ("memory.max", "group name").
    pub field: &'static str,
    /// What is wrong with the input.
    pub problem: String,
    /// What the field accepts, with examples.
    pub accepted: &'static str,
}

impl InputError {
    fn new(field: &'static str, accepted: &'static str, problem: impl Into<String>) -> Self {
        Self {
            field,
            problem: problem.into(),
            accepted,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}. Accepted: {}.",
            self.field, self.problem, self.accepted
        )
    }
}

impl std::error::Error for InputError {}

// ---------------------------------------------------------------------------
// Kernel ranges, each with the place the kernel enforces it.

/// cpu.max: the smallest quota and period (kernel/sched/core.c,
/// min_cfs_quota_period = 1 ms).
pub const CPU_MIN_USEC: u64 = 1_000;
/// cpu.max: the largest period (max_cfs_quota_period = 1 s).
pub const CPU_MAX_PERIOD_USEC: u64 = 1_000_000;
/// cpu.max: the largest quota (max_cfs_runtime: 2^44 - 1 microseconds).
pub const CPU_MAX_QUOTA_USEC: u64 = (1 << 44) - 1;
/// A bare number in the cpu.max dialog is a count of CPUs; above this it is
/// almost certainly microseconds typed without a period.
pub const CPU_MAX_CPUS: u64 = 1024;
/// Weights (admin guide 3-1 "Weights": the range is [1, 10000]).
pub const WEIGHT_MIN: u32 = 1;
pub const WEIGHT_MAX: u32 = 10_000;
/// cpu.weight.nice (admin guide 5-1-1).
pub const NICE_MIN: i32 = -20;
pub const NICE_MAX: i32 = 19;
/// pids.max: the kernel refuses values above PID_MAX_LIMIT (4 Mi) with
/// EINVAL (kernel/cgroup/pids.c).
pub const PIDS_LIMIT: u64 = 4 * 1024 * 1024;
/// io.max: 0 is refused with ERANGE and, before Linux 6.10, 1 with EINVAL
/// (block/blk-throttle.c tg_set_limit); "max" removes a limit.
pub const IO_MAX_MIN: u64 = 2;
/// io.max: IOPS limits are 32-bit in the kernel; larger values are
/// silently clamped, which would read back as "max".
pub const IO_MAX_IOPS: u64 = u32::MAX as u64;
/// The longest directory name (NAME_MAX).
pub const NAME_MAX: usize = 255;

// ---------------------------------------------------------------------------
// Accepted-input sentences, one per field.

const ACCEPT_CPU_MAX: &str = "a share of one CPU like 50%, a number of CPUs like 1.5, \
     max for no limit, or QUOTA PERIOD in microseconds like 50000 100000 \
     (quota at least 1000, period 1000 to 1000000)";
const ACCEPT_BURST: &str =
    "a duration in microseconds like 20000, or with a unit like 20ms, no more than the quota";
const ACCEPT_WEIGHT: &str = "a whole number from 1 to 10000 (the default is 100)";
const ACCEPT_NICE: &str = "a whole number from -20 (most CPU) to 19 (least CPU)";
const ACCEPT_SIZE: &str = "max, or bytes with an optional unit K, M, G or T \
     (powers of 1024; KB and KiB mean the same as K), like 512M or 1.5G";
const ACCEPT_BPS: &str = "max, or bytes per second (at least 2) with an optional unit K, M, G \
     or T (powers of 1024), like 10M";
const ACCEPT_IOPS: &str = "max, or a whole number of IO operations per second from 2 to 4294967295";
const ACCEPT_IO_WEIGHT: &str = "a whole number from 1 to 10000, alone or after default \
     (200 and default 200 both set the weight of every device; the default is 100)";
const ACCEPT_IO_WEIGHT_DEV: &str =
    "a whole number from 1 to 10000, or default to drop this device's override";
const ACCEPT_LATENCY: &str = "a target latency like 10ms, 500us or 10 (milliseconds), \
     or max (or 0) to remove the target";
const ACCEPT_PIDS: &str = "max, or a whole number of processes from 0 to 4194304";
const ACCEPT_PID: &str = "a process id, a whole number from 1 to 4194304";
/// What a new group's name may be (the new-group dialog shows it before
/// anything is typed).
pub const ACCEPT_NAME: &str = "a new directory name: not empty, at most 255 bytes, no '/', \
     no control characters, not . or .., and not starting with an interface-file prefix \
     (cgroup., cpu., memory., io., pids. and the like)";
const ACCEPT_CONTROLLERS: &str =
    "controller names, each with + to enable or - to disable, like +cpu +memory -io";

// ---------------------------------------------------------------------------
// Numbers.

/// A non-negative decimal: `mant / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dec {
    mant: u128,
    scale: u32,
}

/// Why a number did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumErr {
    Empty,
    Negative,
    Garbage,
    Overflow,
}

/// Splits "1.5G" into ("1.5", "G"): the leading digits and dots, and the
/// rest with surrounding blanks removed.
fn split_unit(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses digits with at most one '.', like "1.5", "10", ".5".
fn parse_dec(s: &str) -> Result<Dec, NumErr> {
    if s.is_empty() {
        return Err(NumErr::Empty);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(NumErr::Garbage);
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(NumErr::Garbage);
    }
    // 30 fractional digits keep 10^scale and every product below u128::MAX
    // for any value that fits u64 after scaling.
    let frac = frac.trim_end_matches('0');
    if frac.len() > 30 {
        return Err(NumErr::Garbage);
    }
    let mut mant: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mant = mant
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(b - b'0')))
            .ok_or(NumErr::Overflow)?;
    }
    Ok(Dec {
        mant,
        scale: frac.len() as u32,
    })
}

impl Dec {
    fn denom(self) -> u128 {
        10u128.pow(self.scale)
    }

    fn is_integer(self) -> bool {
        self.scale == 0
    }

    /// `self * mul / div`, rounded down; `None` above u64.
    fn scale_floor(self, mul: u128, div: u128) -> Option<u64> {
        let v = self.mant.checked_mul(mul)? / (self.denom().checked_mul(div)?);
        u64::try_from(v).ok()
    }

    /// `self * mul / div`, rounded to the nearest; `None` above u64.
    fn scale_round(self, mul: u128, div: u128) -> Option<u64> {
        let num = self.mant.checked_mul(mul)?;
        let den = self.denom().checked_mul(div)?;
        let v = num.checked_add(den / 2)? / den;
        u64::try_from(v).ok()
    }
}

/// Words for a number that did not parse, quoting what was typed.
fn num_problem(e: NumErr, typed: &str) -> String {
    match e {
        NumErr::Empty => "nothing was typed".to_owned(),
        NumErr::Negative => format!("{typed:?} is negative"),
        NumErr::Garbage => format!("{typed:?} is not a number"),
        NumErr::Overflow => format!("{typed:?} is too large (more than 18446744073709551615)"),
    }
}

/// The typed text, trimmed, with the common failures (empty, negative)
/// found before any field-specific parsing.
fn prepare(s: &str) -> Result<&str, NumErr> {
    let t = s.trim();
    if t.is_empty() {
        Err(NumErr::Empty)
    } else if t.starts_with('-') {
        Err(NumErr::Negative)
    } else {
        Ok(t)
    }
}

/// A whole non-negative number without unit. Overflow is reported as
/// such (not as garbage) so that the message can say "too large".
fn parse_whole(s: &str) -> Result<u64, NumErr> {
    let t = prepare(s)?;
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NumErr::Garbage);
    }
    t.parse::<u64>().map_err(|_| NumErr::Overflow)
}

fn is_max(t: &str) -> bool {
    t.eq_ignore_ascii_case("max")
}

// ---------------------------------------------------------------------------
// cpu.max and friends.

/// cpu.max from "50%" (of one CPU), "1.5" (CPUs, also "1.5 cpus"), "max",
/// or "QUOTA PERIOD" in microseconds ("max PERIOD" too). The period of a
/// share or a CPU count is `current_period` (what cpu.max holds now) or the
/// kernel default of 100 ms.
pub fn parse_cpu_max(input: &str, current_period: Option<u64>) -> Result<CpuMax, InputError> {
    let err = |p: String| InputError::new("cpu.max", ACCEPT_CPU_MAX, p);
    let t = prepare(input).map_err(|e| err(num_problem(e, input.trim())))?;
    let period = current_period.unwrap_or(CpuMax::DEFAULT_PERIOD);
    let words: Vec<&str> = t.split_ascii_whitespace().collect();
    // "QUOTA PERIOD": a second word that is a number (or a mistyped one)
    let raw = words.len() == 2
        && words[1].starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    if words.len() > 2 {
        return Err(err(format!(
            "{t:?} has {} values; cpu.max takes at most two",
            words.len()
        )));
    }
    if raw {
        let (q, p) = (words[0], words[1]);
        let period = parse_whole(p).map_err(|e| err(period_problem(e, p)))?;
        check_period(period).map_err(err)?;
        if is_max(q) {
            return Ok(CpuMax {
                quota: None,
                period,
            });
        }
        let quota = parse_whole(q).map_err(|e| err(quota_problem(e, q)))?;
        check_quota(quota).map_err(err)?;
        return Ok(CpuMax {
            quota: Some(quota),
            period,
        });
    }
    if is_max(t) {
        return Ok(CpuMax {
            quota: None,
            period,
        });
    }
    check_period(period).map_err(err)?;
    // "150 %" and "2 cpus" are one value with a unit
    let compact: String = words.concat();
    let (quota, shown) = if let Some(pct) = compact.strip_suffix('%') {
        let d = parse_dec(pct).map_err(|e| err(num_problem(e, &compact)))?;
        let q = d
            .scale_round(u128::from(period), 100)
            .ok_or_else(|| err(num_problem(NumErr::Overflow, &compact)))?;
        (q, format!("{compact} of one CPU"))
    } else {
        let (num, unit) = split_unit(&compact);
        if num.is_empty() {
            return Err(err(num_problem(NumErr::Garbage, t)));
        }
        if !matches!(unit.to_ascii_lowercase().as_str(), "" | "cpu" | "cpus") {
            return Err(err(format!("{unit:?} is not a unit for CPUs")));
        }
        let d = parse_dec(num).map_err(|e| err(num_problem(e, t)))?;
        if d.is_integer() && d.mant > u128::from(CPU_MAX_CPUS) && unit.is_empty() {
            return Err(err(format!(
                "{t:?} would be {t} CPUs; for microseconds give the period too, \
                 like {t} {period}"
            )));
        }
        let q = d
            .scale_round(u128::from(period), 1)
            .ok_or_else(|| err(num_problem(NumErr::Overflow, t)))?;
        (q, format!("{} CPUs", num.trim_end_matches('.')))
    };
    if quota < CPU_MIN_USEC {
        return Err(err(format!(
            "{shown} is {quota} us per {period} us period, below the kernel's \
             minimum quota of 1000 us"
        )));
    }
    check_quota(quota).map_err(err)?;
    Ok(CpuMax {
        quota: Some(quota),
        period,
    })
}

fn quota_problem(e: NumErr, q: &str) -> String {
    match e {
        NumErr::Garbage => format!("the quota {q:?} is not a whole number of microseconds"),
        other => format!("the quota: {}", num_problem(other, q)),
    }
}

fn period_problem(e: NumErr, p: &str) -> String {
    match e {
        NumErr::Garbage => format!("the period {p:?} is not a whole number of microseconds"),
        other => format!("the period: {}", num_problem(other, p)),
    }
}

fn check_period(period: u64) -> Result<(), String> {
    if (CPU_MIN_USEC..=CPU_MAX_PERIOD_USEC).contains(&period) {
        Ok(())
    } else {
        Err(format!(
            "the period {period} us is outside the kernel's range of 1000 to 1000000 us"
        ))
    }
}

fn check_quota(quota: u64) -> Result<(), String> {
    if quota < CPU_MIN_USEC {
        Err(format!(
            "the quota {quota} us is below the kernel's minimum of 1000 us"
        ))
    } else if quota > CPU_MAX_QUOTA_USEC {
        Err(format!(
            "the quota {quota} us is above the kernel's maximum of {CPU_MAX_QUOTA_USEC} us"
        ))
    } else {
        Ok(())
    }
}

/// A duration in microseconds: a number with an optional unit "us" (also
/// "µs"), "ms" or "s"; a bare number is in `bare_unit_usec` units.
/// Fractions of a microsecond are dropped.
fn parse_duration_usec(t: &str, bare_unit_usec: u128) -> Result<u64, Result<NumErr, String>> {
    let lower = t.to_ascii_lowercase();
    let (num, unit) = split_unit(&lower);
    if num.is_empty() {
        return Err(Ok(NumErr::Garbage));
    }
    let mul: u128 = match unit {
        "" => bare_unit_usec,
        "us" | "µs" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "s" | "sec" => 1_000_000,
        other => return Err(Err(format!("{other:?} is not a unit of time"))),
    };
    let d = parse_dec(num).map_err(Ok)?;
    d.scale_floor(mul, 1).ok_or(Ok(NumErr::Overflow))
}

/// cpu.max.burst in microseconds (or with a unit: "20ms"). The kernel
/// refuses a burst larger than the quota (EINVAL), so `quota` (the quota of
/// cpu.max now, `None` for "max") is checked here.
pub fn parse_cpu_max_burst(input: &str, quota: Option<u64>) -> Result<u64, InputError> {
    let err = |p: String| InputError::new("cpu.max.burst", ACCEPT_BURST, p);
    let t = prepare(input).map_err(|e| err(num_problem(e, input.trim())))?;
    let burst = parse_duration_usec(t, 1).map_err(|e| match e {
        Ok(n) => err(num_problem(n, t)),
        Err(words) => err(words),
    })?;
    match quota {
        Some(q) if burst > q => Err(err(format!(
            "a burst of {burst} us is more than the quota of {q} us in cpu.max"
        ))),
        None if burst > CPU_MAX_QUOTA_USEC => Err(err(format!(
            "a burst of {burst} us is above the kernel's maximum of {CPU_MAX_QUOTA_USEC} us"
        ))),
        _ => Ok(burst),
    }
}

/// A whole number in an inclusive range, with the common messages.
fn ranged(
    field: &'static str,
    accepted: &'static str,
    input: &str,
    lo: u64,
    hi: u64,
) -> Result<u64, InputError> {
    let t = input.trim();
    let v = parse_whole(input).map_err(|e| InputError::new(field, accepted, num_problem(e, t)))?;
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(InputError::new(
            field,
            accepted,
            format!("{v} is out of range"),
        ))
    }
}

/// cpu.weight, 1..=10000.
pub fn parse_cpu_weight(input: &str) -> Result<u32, InputError> {
    ranged(
        "cpu.weight",
        ACCEPT_WEIGHT,
        input,
        u64::from(WEIGHT_MIN),
        u64::from(WEIGHT_MAX),
    )
    .map(|v| v as u32)
}

/// cpu.weight.nice, -20..=19.
pub fn parse_cpu_weight_nice(input: &str) -> Result<i32, InputError> {
    let err = |p: String| InputError::new("cpu.weight.nice", ACCEPT_NICE, p);
    let t = input.trim();
    if t.is_empty() {
        return Err(err(num_problem(NumErr::Empty, t)));
    }
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(num_problem(NumErr::Garbage, t)));
    }
    let mag: u64 = digits
        .parse()
        .map_err(|_| err(format!("{t:?} is out of range")))?;
    let v = i64::try_from(mag).map_or(i64::MAX, |m| if neg { -m } else { m });
    if (i64::from(NICE_MIN)..=i64::from(NICE_MAX)).contains(&v) {
        Ok(v as i32)
    } else {
        Err(err(format!("{t} is out of range")))
    }
}

// ---------------------------------------------------------------------------
// Sizes.

/// The unit multiplier of a size unit (lowercase), if it is one.
fn size_unit(unit: &str) -> Option<u128> {
    const K: u128 = 1024;
    Some(match unit {
        "" | "b" => 1,
        "k" | "kb" | "kib" => K,
        "m" | "mb" | "mib" => K * K,
        "g" | "gb" | "gib" => K * K * K,
        "t" | "tb" | "tib" => K * K * K * K,
        _ => return None,
    })
}

/// "max" or a size in bytes; `suffix` is an optional trailer to strip
/// ("/s" for rates).
fn parse_size_with(
    field: &'static str,
    accepted: &'static str,
    input: &str,
    suffix: &str,
) -> Result<Limit, InputError> {
    let err = |p: String| InputError::new(field, accepted, p);
    let t = prepare(input).map_err(|e| err(num_problem(e, input.trim())))?;
    if is_max(t) {
        return Ok(Limit::Max);
    }
    let lower = t.to_ascii_lowercase();
    let body = if suffix.is_empty() {
        lower.as_str()
    } else {
        lower.strip_suffix(suffix).unwrap_or(&lower).trim_end()
    };
    let (num, unit) = split_unit(body);
    if num.is_empty() {
        return Err(err(num_problem(NumErr::Garbage, t)));
    }
    let Some(mul) = size_unit(unit) else {
        let shown = &t[t.len() - unit.len() - (lower.len() - body.len())..];
        return Err(err(format!("{:?} is not a unit", shown.trim())));
    };
    let d = parse_dec(num).map_err(|e| err(num_problem(e, t)))?;
    if mul == 1 && !d.is_integer() {
        return Err(err(format!("{t:?} is not a whole number of bytes")));
    }
    d.scale_floor(mul, 1)
        .map(Limit::Value)
        .ok_or_else(|| err(num_problem(NumErr::Overflow, t)))
}

// cgroup v1.

const ACCEPT_THROTTLE_BPS: &str = "bytes per second with an optional unit K, M, G or T \
     (binary), like 1M; 0 or max removes the device's limit";
const ACCEPT_THROTTLE_IOPS: &str =
    "a whole number of IO operations per second; 0 or max removes the device's limit";
const ACCEPT_SHARES: &str = "a whole number from 2 to 262144 (the default is 1024)";
const ACCEPT_BFQ_WEIGHT: &str = "a whole number from 1 to 1000 (the default is 100)";
const ACCEPT_BLKIO_WEIGHT: &str = "a whole number from 10 to 1000 (the default is 500)";

/// One blkio.throttle.*_device rate: `None` removes the device's rule
/// (the kernel's 0; "max" means the same here).
pub fn parse_blkio_throttle(
    which: crate::model::write::Throttle,
    input: &str,
) -> Result<Option<u64>, InputError> {
    use crate::model::write::Throttle;
    let file = which.file();
    let v = match which {
        Throttle::ReadBps | Throttle::WriteBps => {
            parse_size_with(file, ACCEPT_THROTTLE_BPS, input, "/s")?
        }
        Throttle::ReadIops | Throttle::WriteIops => {
            let t = input.trim();
            if is_max(t) {
                Limit::Max
            } else {
                Limit::Value(ranged(
                    file,
                    ACCEPT_THROTTLE_IOPS,
                    input,
                    0,
                    u64::from(u32::MAX),
                )?)
            }
        }
    };
    Ok(v.value().filter(|&n| n > 0))
}

/// cpu.shares: the kernel takes 2 to 262144 (MIN_SHARES, MAX_SHARES in
/// kernel/sched/sched.h), clamping anything else.
pub fn parse_cpu_shares(input: &str) -> Result<u64, InputError> {
    ranged("cpu.shares", ACCEPT_SHARES, input, 2, 262_144)
}

/// blkio.bfq.weight (1..=1000) or CFQ's blkio.weight (10..=1000).
pub fn parse_blkio_weight(bfq: bool, input: &str) -> Result<u32, InputError> {
    let (file, accepted, lo) = if bfq {
        ("blkio.bfq.weight", ACCEPT_BFQ_WEIGHT, 1)
    } else {
        ("blkio.weight", ACCEPT_BLKIO_WEIGHT, 10)
    };
    ranged(file, accepted, input, lo, 1000).map(|v| v as u32)
}

/// A size in bytes with an optional unit K, M, G or T (binary), as the
/// limits take it: `--max-size` of `cgtop record`. "max" is refused.
pub fn parse_size(field: &'static str, input: &str) -> Result<u64, InputError> {
    const ACCEPT: &str = "bytes with an optional unit K, M, G or T (10M, 1.5G)";
    match parse_size_with(field, ACCEPT, input, "")? {
        Limit::Value(v) => Ok(v),
        Limit::Max => Err(InputError::new(field, ACCEPT, "a size is needed here")),
    }
}

/// The memory files that take a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryFile {
    Min,
    Low,
    High,
    Max,
    SwapMax,
}

impl MemoryFile {
    pub const ALL: [Self; 5] = [Self::Min, Self::Low, Self::High, Self::Max, Self::SwapMax];

    pub fn file(self) -> &'static str {
        use crate::cgroupfs::files;
        match self {
            Self::Min => files::MEMORY_MIN,
            Self::Low => files::MEMORY_LOW,
            Self::High => files::MEMORY_HIGH,
            Self::Max => files::MEMORY_MAX,
            Self::SwapMax => files::MEMORY_SWAP_MAX,
        }
    }

    pub fn from_file(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.file() == name)
    }
}

/// memory.min/low/high/max and memory.swap.max: "max" or a size. The kernel
/// stores whole pages; see [`memory_stored`].
pub fn parse_memory(file: MemoryFile, input: &str) -> Result<Limit, InputError> {
    parse_size_with(file.file(), ACCEPT_SIZE, input, "")
}

/// What the kernel will store for a memory limit: it keeps a count of
/// pages, rounding the bytes down (mm/page_counter.c page_counter_memparse:
/// `bytes / PAGE_SIZE`; the admin guide's "may be rounded up" describes
/// older kernels), and a count of PAGE_COUNTER_MAX pages or more
/// (LONG_MAX / PAGE_SIZE) is "max".
pub fn memory_stored(limit: Limit, page_size: u64) -> Limit {
    match limit {
        Limit::Max => Limit::Max,
        Limit::Value(_) if page_size == 0 => limit,
        Limit::Value(b) => {
            let pages = b / page_size;
            if pages >= (i64::MAX as u64) / page_size {
                Limit::Max
            } else {
                Limit::Value(pages * page_size)
            }
        }
    }
}

/// A sentence for the dialog when the kernel will store something other
/// than what was typed, `None` when it stores it exactly.
pub fn memory_rounding_note(limit: Limit, page_size: u64) -> Option<String> {
    let stored = memory_stored(limit, page_size);
    (stored != limit).then(|| match stored {
        Limit::Max => format!("the kernel will store max: {limit} bytes is beyond what it counts"),
        Limit::Value(s) => format!(
            "the kernel keeps whole {page_size}-byte pages: {limit} bytes will be stored as {s}"
        ),
    })
}

// ---------------------------------------------------------------------------
// io.

/// One io.max read/write rate in bytes per second: "max" or a size, an
/// optional "/s" after it.
pub fn parse_io_bps(input: &str) -> Result<Limit, InputError> {
    let v = parse_size_with("io.max", ACCEPT_BPS, input, "/s")?;
    check_io_min(v, ACCEPT_BPS, input)
}

/// One io.max IO rate: "max" or a whole count per second.
pub fn parse_io_iops(input: &str) -> Result<Limit, InputError> {
    let t = input.trim();
    if is_max(t) {
        return Ok(Limit::Max);
    }
    let v = ranged("io.max", ACCEPT_IOPS, input, 0, IO_MAX_IOPS)?;
    check_io_min(Limit::Value(v), ACCEPT_IOPS, input)
}

fn check_io_min(v: Limit, accepted: &'static str, input: &str) -> Result<Limit, InputError> {
    match v {
        Limit::Value(n) if n < IO_MAX_MIN => Err(InputError::new(
            "io.max",
            accepted,
            format!(
                "{:?} is too small: the kernel refuses 0 and 1; type max to remove the limit",
                input.trim()
            ),
        )),
        _ => Ok(v),
    }
}

/// An io.max write for one device: only the keys given are written, the
/// kernel keeps the others (admin guide 5-3-1 "io.max").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoMaxSet {
    pub dev: DevId,
    pub rbps: Option<Limit>,
    pub wbps: Option<Limit>,
    pub riops: Option<Limit>,
    pub wiops: Option<Limit>,
}

impl IoMaxSet {
    /// The keys that are set, in the kernel's order.
    pub fn pairs(&self) -> Vec<(&'static str, Limit)> {
        [
            ("rbps", self.rbps),
            ("wbps", self.wbps),
            ("riops", self.riops),
            ("wiops", self.wiops),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

impl fmt::Display for IoMaxSet {
    /// The line to write: "MAJ:MIN rbps=.. wbps=..".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dev)?;
        for (k, v) in self.pairs() {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

/// The four fields of the io.max dialog for one device; a blank field
/// leaves that limit as it is.
pub fn parse_io_max(
    dev: DevId,
    rbps: &str,
    wbps: &str,
    riops: &str,
    wiops: &str,
) -> Result<IoMaxSet, InputError> {
    let opt = |s: &str, f: fn(&str) -> Result<Limit, InputError>| {
        if s.trim().is_empty() {
            Ok(None)
        } else {
            f(s).map(Some)
        }
    };
    let set = IoMaxSet {
        dev,
        rbps: opt(rbps, parse_io_bps)?,
        wbps: opt(wbps, parse_io_bps)?,
        riops: opt(riops, parse_io_iops)?,
        wiops: opt(wiops, parse_io_iops)?,
    };
    if set.pairs().is_empty() {
        return Err(InputError::new(
            "io.max",
            "at least one of rbps, wbps (bytes per second, like 10M), riops, wiops \
             (IO per second), each a value or max",
            "every field is blank, so there is nothing to write",
        ));
    }
    Ok(set)
}

/// io.weight. For the default weight (`per_device` false) a number, alone
/// or after "default": the kernel takes both "default $WEIGHT" and
/// "$WEIGHT" for it and prints it back as "default $WEIGHT" (admin guide
/// 5-3-1 "io.weight"), so the text the file shows can be typed back. For a
/// device override also "default" alone, which drops the override
/// (`None`); "$MAJ:$MIN $WEIGHT" is the override's own line, not a
/// default weight.
pub fn parse_io_weight(input: &str, per_device: bool) -> Result<Option<u32>, InputError> {
    let accepted = if per_device {
        ACCEPT_IO_WEIGHT_DEV
    } else {
        ACCEPT_IO_WEIGHT
    };
    let t = input.trim();
    let is_default = |w: &str| w.eq_ignore_ascii_case("default");
    if per_device && is_default(t) {
        return Ok(None);
    }
    let number = if per_device {
        t
    } else {
        match t.split_once(char::is_whitespace) {
            Some((first, rest)) if is_default(first) => rest.trim_start(),
            _ if is_default(t) => {
                return Err(InputError::new(
                    "io.weight",
                    accepted,
                    "\"default\" needs the weight after it, like default 200",
                ))
            }
            _ if t.split_whitespace().next().and_then(DevId::parse).is_some() => {
                return Err(InputError::new(
                    "io.weight",
                    accepted,
                    format!(
                        "{t:?} is one device's override; this field sets the weight of \
                         every device (an override is one line written with E)"
                    ),
                ))
            }
            _ => t,
        }
    };
    ranged(
        "io.weight",
        accepted,
        number,
        u64::from(WEIGHT_MIN),
        u64::from(WEIGHT_MAX),
    )
    .map(|v| Some(v as u32))
}

/// io.latency target in microseconds; `None` removes the target (the
/// kernel reads "target=max" and "target=0" as "no target",
/// block/blk-iolatency.c iolatency_set_limit). A bare number is in
/// milliseconds, the unit the admin guide tunes in.
pub fn parse_io_latency(input: &str) -> Result<Option<u64>, InputError> {
    let err = |p: String| InputError::new("io.latency", ACCEPT_LATENCY, p);
    let t = prepare(input).map_err(|e| err(num_problem(e, input.trim())))?;
    if is_max(t) || matches!(t.to_ascii_lowercase().as_str(), "off" | "none") {
        return Ok(None);
    }
    let usec = parse_duration_usec(t, 1_000).map_err(|e| match e {
        Ok(n) => err(num_problem(n, t)),
        Err(words) => err(words),
    })?;
    if usec == 0 {
        let zero = parse_dec(split_unit(&t.to_ascii_lowercase()).0).is_ok_and(|d| d.mant == 0);
        if zero {
            return Ok(None);
        }
        return Err(err(format!(
            "{t:?} is less than the smallest target of 1 us"
        )));
    }
    // the kernel multiplies by 1000 into nanoseconds in a u64
    if usec > u64::MAX / 1_000 {
        return Err(err(num_problem(NumErr::Overflow, t)));
    }
    Ok(Some(usec))
}

// ---------------------------------------------------------------------------
// pids, processes, names, controllers.

/// pids.max: "max" or 0..=4194304.
pub fn parse_pids_max(input: &str) -> Result<Limit, InputError> {
    if is_max(input.trim()) {
        return Ok(Limit::Max);
    }
    ranged("pids.max", ACCEPT_PIDS, input, 0, PIDS_LIMIT).map(Limit::Value)
}

/// A process id to move.
pub fn parse_pid(input: &str) -> Result<u32, InputError> {
    ranged("process id", ACCEPT_PID, input, 1, PIDS_LIMIT).map(|v| v as u32)
}

/// The name of a new child group. `existing` are the names already in the
/// parent directory (child groups; interface files are covered by the
/// prefix rule). The kernel itself refuses only an exact clash (EEXIST),
/// but a child named like an interface file ("memory.max") would collide
/// with that file when the controller is enabled later, so cgtop refuses
/// the reserved prefixes (admin guide 2-6-2 "Avoid Name Collisions").
pub fn parse_group_name(input: &str, existing: &[&str]) -> Result<String, InputError> {
    let err = |p: String| InputError::new("group name", ACCEPT_NAME, p);
    let t = input.trim();
    if t.is_empty() {
        return Err(err("nothing was typed".into()));
    }
    if t == "." || t == ".." {
        return Err(err(format!(
            "{t:?} means this directory or its parent, not a new one"
        )));
    }
    if t.contains('/') {
        return Err(err(format!(
            "{t:?} contains '/'; create one level at a time"
        )));
    }
    if let Some(c) = t.chars().find(|c| c.is_control()) {
        return Err(err(format!("{t:?} contains the control character {c:?}")));
    }
    if t.len() > NAME_MAX {
        return Err(err(format!(
            "the name is {} bytes long, more than 255",
            t.len()
        )));
    }
    if let Some(p) = RESERVED_PREFIXES.iter().find(|p| t.starts_with(**p)) {
        return Err(err(format!(
            "{t:?} starts with {p:?}, the prefix of the kernel's interface files"
        )));
    }
    if existing.contains(&t) {
        return Err(err(format!("{t:?} already exists here")));
    }
    Ok(t.to_owned())
}

/// One change to cgroup.subtree_control.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ControllerChange {
    pub name: String,
    pub enable: bool,
}

impl ControllerChange {
    pub fn enable(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            enable: true,
        }
    }

    pub fn disable(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            enable: false,
        }
    }
}

impl fmt::Display for ControllerChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", if self.enable { '+' } else { '-' }, self.name)
    }
}

/// "+cpu +memory -io" (a bare name means +). Controller names are lower
/// case letters and '_' (admin guide 2-6-2).
pub fn parse_controller_changes(input: &str) -> Result<Vec<ControllerChange>, InputError> {
    let err = |p: String| InputError::new("cgroup.subtree_control", ACCEPT_CONTROLLERS, p);
    let mut out = Vec::new();
    for tok in input.split_ascii_whitespace() {
        let (enable, name) = match tok.as_bytes()[0] {
            b'+' => (true, &tok[1..]),
            b'-' => (false, &tok[1..]),
            _ => (true, tok),
        };
        let valid = !name.is_empty()
            && !name.starts_with('_')
            && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if !valid {
            return Err(err(format!("{tok:?} is not a controller name")));
        }
        out.push(ControllerChange {
            name: name.to_owned(),
            enable,
        });
    }
    if out.is_empty() {
        return Err(err("nothing was typed".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SDA: DevId = DevId { major: 8, minor: 0 };

    fn msg<T: fmt::Debug>(r: Result<T, InputError>) -> String {
        r.unwrap_err().to_string()
    }

    /// The problem part of the message, without the accepted-input tail.
    fn problem<T: fmt::Debug>(r: Result<T, InputError>) -> String {
        r.unwrap_err().problem
    }

    // --- cpu.max -----------------------------------------------------------

    #[test]
    fn cpu_max_accepts_shares_cpus_max_and_raw() {
        let p = |s| parse_cpu_max(s, None).unwrap();
        assert_eq!(
            p("50%"),
            CpuMax {
                quota: Some(50_000),
                period: 100_000
            }
        );
        assert_eq!(
            p(" 150 % "),
            CpuMax {
                quota: Some(150_000),
                period: 100_000
            }
        );
        assert_eq!(
            p("12.5%"),
            CpuMax {
                quota: Some(12_500),
                period: 100_000
            }
        );
        assert_eq!(
            p("1.5"),
            CpuMax {
                quota: Some(150_000),
                period: 100_000
            }
        );
        assert_eq!(
            p("2 cpus"),
            CpuMax {
                quota: Some(200_000),
                period: 100_000
            }
        );
        assert_eq!(
            p("0.25CPU"),
            CpuMax {
                quota: Some(25_000),
                period: 100_000
            }
        );
        assert_eq!(
            p("MAX"),
            CpuMax {
                quota: None,
                period: 100_000
            }
        );
        assert_eq!(
            p("50000 100000"),
            CpuMax {
                quota: Some(50_000),
                period: 100_000
            }
        );
        assert_eq!(
            p("max 250000"),
            CpuMax {
                quota: None,
                period: 250_000
            }
        );
        assert_eq!(
            p("1000 1000000"),
            CpuMax {
                quota: Some(1000),
                period: 1_000_000
            }
        );
        // the current period is kept for shares and CPU counts
        let q = parse_cpu_max("50%", Some(20_000)).unwrap();
        assert_eq!(
            q,
            CpuMax {
                quota: Some(10_000),
                period: 20_000
            }
        );
        assert_eq!(
            parse_cpu_max("max", Some(20_000)).unwrap(),
            CpuMax {
                quota: None,
                period: 20_000
            }
        );
        // rounding to the nearest microsecond
        assert_eq!(parse_cpu_max("33.3333%", None).unwrap().quota, Some(33_333));
    }

    #[test]
    fn cpu_max_refusals() {
        let full = msg(parse_cpu_max("", None));
        assert_eq!(
            full,
            "cpu.max: nothing was typed. Accepted: a share of one CPU like 50%, a number of \
             CPUs like 1.5, max for no limit, or QUOTA PERIOD in microseconds like 50000 \
             100000 (quota at least 1000, period 1000 to 1000000)."
        );
        let p = |s| problem(parse_cpu_max(s, None));
        assert_eq!(p("   "), "nothing was typed");
        assert_eq!(p("-50%"), "\"-50%\" is negative");
        assert_eq!(p("half"), "\"half\" is not a number");
        assert_eq!(p("5 apples"), "\"apples\" is not a unit for CPUs");
        assert_eq!(p("5Q"), "\"Q\" is not a unit for CPUs");
        assert_eq!(
            p("5 1x"),
            "the period \"1x\" is not a whole number of microseconds"
        );
        assert_eq!(p("1.2.3"), "\"1.2.3\" is not a number");
        assert_eq!(
            p("0.5%"),
            "0.5% of one CPU is 500 us per 100000 us period, below the kernel's minimum quota of 1000 us"
        );
        assert_eq!(
            p("0"),
            "0 CPUs is 0 us per 100000 us period, below the kernel's minimum quota of 1000 us"
        );
        assert_eq!(
            p("50000"),
            "\"50000\" would be 50000 CPUs; for microseconds give the period too, like 50000 100000"
        );
        assert_eq!(
            p("500 100000"),
            "the quota 500 us is below the kernel's minimum of 1000 us"
        );
        assert_eq!(
            p("50000 999"),
            "the period 999 us is outside the kernel's range of 1000 to 1000000 us"
        );
        assert_eq!(
            p("50000 1000001"),
            "the period 1000001 us is outside the kernel's range of 1000 to 1000000 us"
        );
        assert_eq!(
            p("99999999999999999999 100000"),
            "the quota: \"99999999999999999999\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("18446744073709551615 100000"),
            "the quota 18446744073709551615 us is above the kernel's maximum of 17592186044415 us"
        );
        assert_eq!(p("-5 100000"), "\"-5 100000\" is negative");
        assert_eq!(p("5 -100000"), "the period: \"-100000\" is negative");
        assert_eq!(
            p("99999999999999999999999999999999999999999%"),
            "\"99999999999999999999999999999999999999999%\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("1 2 3"),
            "\"1 2 3\" has 3 values; cpu.max takes at most two"
        );
        // a broken current period cannot produce a value the kernel refuses
        assert_eq!(
            problem(parse_cpu_max("50%", Some(10))),
            "the period 10 us is outside the kernel's range of 1000 to 1000000 us"
        );
    }

    #[test]
    fn cpu_max_burst() {
        assert_eq!(parse_cpu_max_burst("20000", Some(50_000)), Ok(20_000));
        assert_eq!(parse_cpu_max_burst("20ms", Some(50_000)), Ok(20_000));
        assert_eq!(parse_cpu_max_burst("0", None), Ok(0));
        let p = |s, q| problem(parse_cpu_max_burst(s, q));
        assert_eq!(p("", None), "nothing was typed");
        assert_eq!(p("-1", None), "\"-1\" is negative");
        assert_eq!(p("lots", None), "\"lots\" is not a number");
        assert_eq!(p("5 apples", None), "\"apples\" is not a unit of time");
        assert_eq!(
            p("99999999999999999999", None),
            "\"99999999999999999999\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("60000", Some(50_000)),
            "a burst of 60000 us is more than the quota of 50000 us in cpu.max"
        );
        assert_eq!(
            p("18446744073709551615", None),
            "a burst of 18446744073709551615 us is above the kernel's maximum of 17592186044415 us"
        );
    }

    // --- weights -----------------------------------------------------------

    #[test]
    fn cpu_weight() {
        assert_eq!(parse_cpu_weight(" 100 "), Ok(100));
        assert_eq!(parse_cpu_weight("1"), Ok(1));
        assert_eq!(parse_cpu_weight("10000"), Ok(10_000));
        assert_eq!(
            msg(parse_cpu_weight("0")),
            "cpu.weight: 0 is out of range. Accepted: a whole number from 1 to 10000 (the default is 100)."
        );
        let p = |s| problem(parse_cpu_weight(s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("-5"), "\"-5\" is negative");
        assert_eq!(p("heavy"), "\"heavy\" is not a number");
        assert_eq!(p("100x"), "\"100x\" is not a number");
        assert_eq!(p("1.5"), "\"1.5\" is not a number");
        assert_eq!(p("10001"), "10001 is out of range");
        assert_eq!(
            p("99999999999999999999"),
            "\"99999999999999999999\" is too large (more than 18446744073709551615)"
        );
    }

    #[test]
    fn cpu_weight_nice() {
        assert_eq!(parse_cpu_weight_nice("-20"), Ok(-20));
        assert_eq!(parse_cpu_weight_nice("19"), Ok(19));
        assert_eq!(parse_cpu_weight_nice("+5"), Ok(5));
        assert_eq!(parse_cpu_weight_nice(" 0 "), Ok(0));
        assert_eq!(
            msg(parse_cpu_weight_nice("-21")),
            "cpu.weight.nice: -21 is out of range. Accepted: a whole number from -20 (most CPU) to 19 (least CPU)."
        );
        let p = |s| problem(parse_cpu_weight_nice(s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("20"), "20 is out of range");
        assert_eq!(p("--5"), "\"--5\" is not a number");
        assert_eq!(p("nice"), "\"nice\" is not a number");
        assert_eq!(p("-"), "\"-\" is not a number");
        assert_eq!(p("5 apples"), "\"5 apples\" is not a number");
        assert_eq!(
            p("-99999999999999999999"),
            "\"-99999999999999999999\" is out of range"
        );
        assert_eq!(
            p("9223372036854775808"),
            "9223372036854775808 is out of range"
        );
    }

    // --- sizes -------------------------------------------------------------

    #[test]
    fn memory_sizes() {
        let p = |s| parse_memory(MemoryFile::Max, s).unwrap();
        assert_eq!(p("max"), Limit::Max);
        assert_eq!(p("Max"), Limit::Max);
        assert_eq!(p("0"), Limit::Value(0));
        assert_eq!(p("4096"), Limit::Value(4096));
        assert_eq!(p("4096b"), Limit::Value(4096));
        assert_eq!(p("1k"), Limit::Value(1024));
        assert_eq!(p("1KB"), Limit::Value(1024));
        assert_eq!(p("1KiB"), Limit::Value(1024));
        assert_eq!(p("512M"), Limit::Value(512 << 20));
        assert_eq!(p("512 mib"), Limit::Value(512 << 20));
        assert_eq!(p("1.5G"), Limit::Value(3 << 29));
        assert_eq!(p("2T"), Limit::Value(2 << 40));
        assert_eq!(p("1TiB"), Limit::Value(1 << 40));
        // fractions of a byte are dropped
        assert_eq!(p("1.3K"), Limit::Value(1331));
        assert_eq!(p("18446744073709551615"), Limit::Value(u64::MAX));
        assert_eq!(
            p("16777215.999999T"),
            Limit::Value(18_446_744_073_708_452_104)
        );
    }

    #[test]
    fn memory_size_refusals() {
        assert_eq!(
            msg(parse_memory(MemoryFile::High, "5 apples")),
            "memory.high: \"apples\" is not a unit. Accepted: max, or bytes with an optional \
             unit K, M, G or T (powers of 1024; KB and KiB mean the same as K), like 512M or 1.5G."
        );
        let p = |s| problem(parse_memory(MemoryFile::Max, s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("-1"), "\"-1\" is negative");
        assert_eq!(p("-1G"), "\"-1G\" is negative");
        assert_eq!(p("lots"), "\"lots\" is not a number");
        assert_eq!(p("G"), "\"G\" is not a number");
        assert_eq!(p("5Q"), "\"Q\" is not a unit");
        assert_eq!(p("5PB"), "\"PB\" is not a unit");
        assert_eq!(p("1.5"), "\"1.5\" is not a whole number of bytes");
        assert_eq!(p("1..5G"), "\"1..5G\" is not a number");
        assert_eq!(
            p("18446744073709551616"),
            "\"18446744073709551616\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("16777216T"),
            "\"16777216T\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("99999999999999999999999999999999999999999"),
            "\"99999999999999999999999999999999999999999\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            problem(parse_memory(MemoryFile::SwapMax, "1 G B")),
            "\"G B\" is not a unit"
        );
        assert_eq!(
            parse_memory(MemoryFile::SwapMax, "x").unwrap_err().field,
            "memory.swap.max"
        );
    }

    #[test]
    fn memory_page_rounding() {
        assert_eq!(memory_stored(Limit::Value(1000), 4096), Limit::Value(0));
        assert_eq!(memory_stored(Limit::Value(8191), 4096), Limit::Value(4096));
        assert_eq!(memory_stored(Limit::Value(8192), 4096), Limit::Value(8192));
        assert_eq!(memory_stored(Limit::Max, 4096), Limit::Max);
        assert_eq!(memory_stored(Limit::Value(u64::MAX), 4096), Limit::Max);
        // the largest count below PAGE_COUNTER_MAX is still a number
        let pcm = (i64::MAX as u64) / 4096;
        assert_eq!(
            memory_stored(Limit::Value((pcm - 1) * 4096), 4096),
            Limit::Value((pcm - 1) * 4096)
        );
        assert_eq!(memory_stored(Limit::Value(pcm * 4096), 4096), Limit::Max);
        assert_eq!(
            memory_stored(Limit::Value(100_000), 65_536),
            Limit::Value(65_536)
        );
        assert_eq!(
            memory_rounding_note(Limit::Value(1000), 4096).as_deref(),
            Some("the kernel keeps whole 4096-byte pages: 1000 bytes will be stored as 0")
        );
        assert_eq!(
            memory_rounding_note(Limit::Value(u64::MAX), 4096).as_deref(),
            Some("the kernel will store max: 18446744073709551615 bytes is beyond what it counts")
        );
        assert_eq!(memory_rounding_note(Limit::Value(8192), 4096), None);
        assert_eq!(memory_rounding_note(Limit::Max, 4096), None);
    }

    // --- io ----------------------------------------------------------------

    #[test]
    fn io_max_fields() {
        assert_eq!(parse_io_bps("10M"), Ok(Limit::Value(10 << 20)));
        assert_eq!(parse_io_bps("10M/s"), Ok(Limit::Value(10 << 20)));
        assert_eq!(parse_io_bps("2097152"), Ok(Limit::Value(2_097_152)));
        assert_eq!(parse_io_bps("max"), Ok(Limit::Max));
        assert_eq!(parse_io_iops("120"), Ok(Limit::Value(120)));
        assert_eq!(parse_io_iops("MAX"), Ok(Limit::Max));
        assert_eq!(parse_io_iops("4294967295"), Ok(Limit::Value(4_294_967_295)));

        assert_eq!(
            msg(parse_io_bps("0")),
            "io.max: \"0\" is too small: the kernel refuses 0 and 1; type max to remove the limit. \
             Accepted: max, or bytes per second (at least 2) with an optional unit K, M, G or T \
             (powers of 1024), like 10M."
        );
        let b = |s| problem(parse_io_bps(s));
        assert_eq!(b(""), "nothing was typed");
        assert_eq!(b("-10M"), "\"-10M\" is negative");
        assert_eq!(b("fast"), "\"fast\" is not a number");
        assert_eq!(b("5 apples"), "\"apples\" is not a unit");
        assert_eq!(b("10Q/s"), "\"Q/s\" is not a unit");
        assert_eq!(
            b("1"),
            "\"1\" is too small: the kernel refuses 0 and 1; type max to remove the limit"
        );
        assert_eq!(
            b("18446744073709551616"),
            "\"18446744073709551616\" is too large (more than 18446744073709551615)"
        );
        let i = |s| problem(parse_io_iops(s));
        assert_eq!(i(""), "nothing was typed");
        assert_eq!(i("-3"), "\"-3\" is negative");
        assert_eq!(i("many"), "\"many\" is not a number");
        assert_eq!(i("5k"), "\"5k\" is not a number");
        assert_eq!(i("1.5"), "\"1.5\" is not a number");
        assert_eq!(
            i("0"),
            "\"0\" is too small: the kernel refuses 0 and 1; type max to remove the limit"
        );
        assert_eq!(i("4294967296"), "4294967296 is out of range");
        assert_eq!(
            i("18446744073709551616"),
            "\"18446744073709551616\" is too large (more than 18446744073709551615)"
        );
    }

    #[test]
    fn io_max_line() {
        let s = parse_io_max(SDA, "2M", "", "", "120").unwrap();
        assert_eq!(s.to_string(), "8:0 rbps=2097152 wiops=120");
        let s = parse_io_max(SDA, "max", "max", "max", "max").unwrap();
        assert_eq!(s.to_string(), "8:0 rbps=max wbps=max riops=max wiops=max");
        assert_eq!(
            msg(parse_io_max(SDA, " ", "", "", "")),
            "io.max: every field is blank, so there is nothing to write. Accepted: at least one \
             of rbps, wbps (bytes per second, like 10M), riops, wiops (IO per second), each a \
             value or max."
        );
        assert_eq!(
            problem(parse_io_max(SDA, "1M", "x", "", "")),
            "\"x\" is not a number"
        );
    }

    #[test]
    fn io_weight() {
        assert_eq!(parse_io_weight("200", false), Ok(Some(200)));
        // the file's own text, as the README says to type it
        assert_eq!(parse_io_weight("default 200", false), Ok(Some(200)));
        assert_eq!(parse_io_weight(" DEFAULT   50 ", false), Ok(Some(50)));
        assert_eq!(parse_io_weight("default", true), Ok(None));
        assert_eq!(
            msg(parse_io_weight("default", false)),
            "io.weight: \"default\" needs the weight after it, like default 200. Accepted: a \
             whole number from 1 to 10000, alone or after default (200 and default 200 both set \
             the weight of every device; the default is 100)."
        );
        let d = |s| problem(parse_io_weight(s, false));
        assert_eq!(d("default 0"), "0 is out of range");
        assert_eq!(d("default x"), "\"x\" is not a number");
        assert_eq!(d("defaults 5"), "\"defaults 5\" is not a number");
        assert_eq!(
            d("8:0 200"),
            "\"8:0 200\" is one device's override; this field sets the weight of every device \
             (an override is one line written with E)"
        );
        let p = |s| problem(parse_io_weight(s, true));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("-1"), "\"-1\" is negative");
        assert_eq!(p("0"), "0 is out of range");
        assert_eq!(p("10001"), "10001 is out of range");
        assert_eq!(p("5 apples"), "\"5 apples\" is not a number");
        assert_eq!(
            p("99999999999999999999"),
            "\"99999999999999999999\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            parse_io_weight("x", true).unwrap_err().accepted,
            ACCEPT_IO_WEIGHT_DEV
        );
    }

    #[test]
    fn io_latency() {
        assert_eq!(parse_io_latency("10ms"), Ok(Some(10_000)));
        assert_eq!(parse_io_latency("10"), Ok(Some(10_000)));
        assert_eq!(parse_io_latency("500us"), Ok(Some(500)));
        assert_eq!(parse_io_latency("500 µs"), Ok(Some(500)));
        assert_eq!(parse_io_latency("1.5ms"), Ok(Some(1_500)));
        assert_eq!(parse_io_latency("1s"), Ok(Some(1_000_000)));
        assert_eq!(parse_io_latency("max"), Ok(None));
        assert_eq!(parse_io_latency("0"), Ok(None));
        assert_eq!(parse_io_latency("0ms"), Ok(None));
        assert_eq!(parse_io_latency("off"), Ok(None));
        assert_eq!(
            msg(parse_io_latency("")),
            "io.latency: nothing was typed. Accepted: a target latency like 10ms, 500us or 10 \
             (milliseconds), or max (or 0) to remove the target."
        );
        let p = |s| problem(parse_io_latency(s));
        assert_eq!(p("-10ms"), "\"-10ms\" is negative");
        assert_eq!(p("soon"), "\"soon\" is not a number");
        assert_eq!(p("ms"), "\"ms\" is not a number");
        assert_eq!(p("10 apples"), "\"apples\" is not a unit of time");
        assert_eq!(p("10h"), "\"h\" is not a unit of time");
        assert_eq!(
            p("0.5us"),
            "\"0.5us\" is less than the smallest target of 1 us"
        );
        assert_eq!(
            p("18446744073709551615us"),
            "\"18446744073709551615us\" is too large (more than 18446744073709551615)"
        );
        assert_eq!(
            p("99999999999999999999999s"),
            "\"99999999999999999999999s\" is too large (more than 18446744073709551615)"
        );
    }

    // --- pids, names, controllers -------------------------------------------

    #[test]
    fn pids_max() {
        assert_eq!(parse_pids_max("max"), Ok(Limit::Max));
        assert_eq!(parse_pids_max("0"), Ok(Limit::Value(0)));
        assert_eq!(parse_pids_max("4194304"), Ok(Limit::Value(4_194_304)));
        assert_eq!(
            msg(parse_pids_max("4194305")),
            "pids.max: 4194305 is out of range. Accepted: max, or a whole number of processes from 0 to 4194304."
        );
        let p = |s| problem(parse_pids_max(s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("-1"), "\"-1\" is negative");
        assert_eq!(p("many"), "\"many\" is not a number");
        assert_eq!(p("10k"), "\"10k\" is not a number");
        assert_eq!(
            p("18446744073709551616"),
            "\"18446744073709551616\" is too large (more than 18446744073709551615)"
        );
    }

    #[test]
    fn pid() {
        assert_eq!(parse_pid("1234"), Ok(1234));
        let p = |s| problem(parse_pid(s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("0"), "0 is out of range");
        assert_eq!(p("-1"), "\"-1\" is negative");
        assert_eq!(p("init"), "\"init\" is not a number");
        assert_eq!(p("99999999"), "99999999 is out of range");
        assert_eq!(
            p("99999999999999999999"),
            "\"99999999999999999999\" is too large (more than 18446744073709551615)"
        );
    }

    #[test]
    fn group_names() {
        assert_eq!(parse_group_name(" batch ", &[]), Ok("batch".into()));
        assert_eq!(
            parse_group_name("web.service", &[]),
            Ok("web.service".into())
        );
        assert_eq!(
            parse_group_name("_memory.max", &[]),
            Ok("_memory.max".into())
        );
        assert_eq!(parse_group_name("cpux", &[]), Ok("cpux".into()));
        assert_eq!(
            msg(parse_group_name("", &[])),
            "group name: nothing was typed. Accepted: a new directory name: not empty, at most \
             255 bytes, no '/', no control characters, not . or .., and not starting with an \
             interface-file prefix (cgroup., cpu., memory., io., pids. and the like)."
        );
        let p = |s: &str| problem(parse_group_name(s, &["web", "db"]));
        assert_eq!(p("a/b"), "\"a/b\" contains '/'; create one level at a time");
        assert_eq!(
            p("."),
            "\".\" means this directory or its parent, not a new one"
        );
        assert_eq!(
            p(".."),
            "\"..\" means this directory or its parent, not a new one"
        );
        assert_eq!(p("a\nb"), "\"a\\nb\" contains the control character '\\n'");
        assert_eq!(
            p("cpu.foo"),
            "\"cpu.foo\" starts with \"cpu.\", the prefix of the kernel's interface files"
        );
        assert_eq!(
            p("cgroup.procs"),
            "\"cgroup.procs\" starts with \"cgroup.\", the prefix of the kernel's interface files"
        );
        assert_eq!(p("web"), "\"web\" already exists here");
        assert_eq!(
            p(&"x".repeat(256)),
            "the name is 256 bytes long, more than 255"
        );
    }

    #[test]
    fn controller_changes() {
        let c = parse_controller_changes("+cpu -io memory").unwrap();
        assert_eq!(
            c,
            vec![
                ControllerChange::enable("cpu"),
                ControllerChange::disable("io"),
                ControllerChange::enable("memory")
            ]
        );
        assert_eq!(c[1].to_string(), "-io");
        let p = |s| problem(parse_controller_changes(s));
        assert_eq!(p(""), "nothing was typed");
        assert_eq!(p("+"), "\"+\" is not a controller name");
        assert_eq!(p("+CPU"), "\"+CPU\" is not a controller name");
        assert_eq!(p("+cpu,io"), "\"+cpu,io\" is not a controller name");
        assert_eq!(p("+_x"), "\"+_x\" is not a controller name");
    }
}
