//! The recording format of `cgtop record` (issue 9, item 5), as pure
//! bytes: records in, records out. `source::record` puts them in zstd
//! frames in a file and reads them back; ARCHITECTURE.md ("Recordings")
//! describes the whole format.
//!
//! A recording is a stream of records, each `tag (1 byte) | length
//! (varint) | payload`. A reader skips a record whose tag it does not know
//! (by its length), so kinds can be added without a new version:
//!
//! - [`TAG_HEADER`]: the machine and the run (host, kernel, CPUs, mount,
//!   start group, interval, the start's Unix time). It opens every frame
//!   and resets the frame's state: the table of paths and each group's
//!   last values. A frame therefore decodes on its own (its first sample
//!   is a keyframe: every figure against zero).
//! - [`TAG_SAMPLE`]: one refresh: its monotonic time, the scan's cost, and
//!   for every group its raw hot counters (`HotStats`), inode and type,
//!   each field that changed since the group's previous sample in the
//!   frame written as a zigzag varint of the difference, behind a bitmask
//!   of the changed fields; a path is written once per frame, then its
//!   id. The limits of a group ride in its entry when they changed; the
//!   block devices and the processes of the busiest groups follow; then,
//!   only where some group's marks changed, where its figures came from
//!   ([`Marks`]: each controller's hierarchy, v1's freezer.state, the
//!   kernel root's MEM and PIDS, a disk v1 blkio does not count), so that
//!   a replay says what the live run said. A sample of an older
//!   recording ends before them (its groups have no marks, as before);
//!   an older reader stops before them (it never read past the
//!   processes), so the version stays 1.
//! - [`TAG_EVENTS`]: the events the watcher saw since the sample before
//!   (`model::time::events`: cgroup.events, memory.events with an OOM kill's
//!   victim, memory.swap.events, pids.events), written just before the
//!   sample they are printed with; a reader gives them to that sample.
//!   Each event carries its own full path (events are few; a group they
//!   name may be gone from every sample).
//! - [`TAG_IDENTITIES`]: who groups are (`model::identity::Identity`, as
//!   the source layer resolved them: a container's name, image, pod...),
//!   written just before a sample for each group whose identity is new in
//!   the frame or changed (or is gone: a removal), by full path; a reader
//!   keeps them for the frame and gives each sample's groups theirs. A
//!   recording made before this record kind, or by a run that resolved
//!   none, has none: its groups are named from their paths alone on
//!   replay, as live. Readers of older versions skip it (the version
//!   stays 1).
//!
//! The decoder never panics and caps every length and count (see the
//! `MAX_` constants): a recording is outside input, as hostile as
//! cgroupfs itself.

use crate::cgroupfs::io::{DevId, IoStat, IoStatDev, IoStatDevice};
use crate::cgroupfs::{CgroupEvents, CgroupType, CpuMax, CpuStat, Limit};
use crate::model::host::HostInfo;
use crate::model::identity::{Identity, Kind, Qos, Runtime};
use crate::model::time::events::{Event, EventKind, MemoryEvent, OomVictim, SwapEvent};
use crate::model::tree::snapshot::{
    DeviceInfo, GroupSample, HotStats, MountInfo, MountMode, ProcessInfo, ScanCost, Snapshot,
    Unreadable,
};
use crate::model::GroupPath;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The first bytes of every header record's payload.
pub const MAGIC: &[u8; 8] = b"CGTOPREC";
/// The format's version: a reader refuses a header of another one.
pub const VERSION: u8 = 1;

pub const TAG_HEADER: u8 = 1;
pub const TAG_SAMPLE: u8 = 2;
/// The events seen before the next sample (a reader that does not know
/// the kind skips it, like any tag it does not know).
pub const TAG_EVENTS: u8 = 3;
/// Groups' identities, for the sample that follows and the rest of the
/// frame (see the module's words).
pub const TAG_IDENTITIES: u8 = 4;
/// Identities in one record, and labels of one identity.
pub const MAX_IDENTITIES: usize = MAX_PATHS;
pub const MAX_LABELS: usize = 256;
/// Events in one record (the app keeps at most 10,000 in all); a path
/// in an event is at most `model::time::events::PATH_CAP` (4 KiB), so a record
/// holds at most about 120 MB decoded, and a reader keeps at most
/// [`MAX_EVENT_BYTES`] of them for one sample.
pub const MAX_EVENTS: usize = 10_000;
/// The bytes of events a reader keeps for one sample (the rest are
/// dropped): a hostile file cannot make it hold more.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// About what an event holds in memory (its paths and task name).
pub fn event_bytes(e: &Event) -> usize {
    let victim = match &e.kind {
        EventKind::Memory {
            victim: Some(v), ..
        } => {
            v.task.len()
                + v.oom_memcg.as_ref().map_or(0, |p| p.as_bytes().len())
                + v.task_memcg.as_ref().map_or(0, |p| p.as_bytes().len())
        }
        _ => 0,
    };
    std::mem::size_of::<Event>() + e.path.as_bytes().len() + victim
}

/// The longest record a reader accepts (far above a keyframe of 10,000
/// groups).
pub const MAX_RECORD: usize = 64 << 20;
/// Groups in one sample: 20 times the largest tree measured.
pub const MAX_GROUPS: usize = 200_000;
/// Paths in one frame's table, and their bytes in total (a reader keeps
/// each path's last values, so these bound its memory).
pub const MAX_PATHS: usize = 200_000;
pub const MAX_PATH_BYTES: usize = 64 << 20;
/// A writer begins a new frame once its path table (every path seen in
/// the frame, new ones written in full) passes this many paths or bytes,
/// so that groups that come and go with long names (a delegated user
/// chooses both) keep the writer's table, and a reader's, within a
/// quarter of the caps above, not a minute of churn.
pub const FRAME_PATHS: usize = MAX_PATHS / 4;
pub const FRAME_PATH_BYTES: usize = MAX_PATH_BYTES / 4;
/// Any one string (a path, a host name, a command line).
pub const MAX_STRING: usize = 64 << 10;
/// Devices of an io.stat or of the device list; processes of a group;
/// busy groups of a sample; unreadable files of a group.
pub const MAX_DEVICES: usize = 4096;
pub const MAX_PROCS: usize = 4096;
pub const MAX_BUSY: usize = 64;
pub const MAX_UNREADABLE: usize = 64;
/// What a frame's decoded state may hold in all (each group's path,
/// io.stat devices and unreadable files, kept for the next sample's
/// deltas and cloned into every sample): a few bytes of record each
/// decode to much more (a device of 7 bytes to a 112-byte entry), and
/// zstd shrinks those bytes again, so without a cap a small file of
/// 200,000 groups of 4,096 devices would hold ~90 GB. 10,000 groups of
/// a few devices hold a few MB.
pub const MAX_HELD: usize = 128 << 20;

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The payload ended inside a field.
    Truncated,
    /// A varint longer than its type.
    BadVarint,
    /// A length or count over its cap.
    TooLarge(&'static str),
    /// Not a cgtop recording (the header's magic), or another version.
    NotARecording,
    UnsupportedVersion(u8),
    /// A sample before any header, an id not in the table, groups out of
    /// order, a value not in its range.
    Invalid(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated => f.write_str("a record ends inside a field"),
            Self::BadVarint => f.write_str("a number is longer than its type"),
            Self::TooLarge(what) => write!(f, "{what} over its cap"),
            Self::NotARecording => f.write_str("not a cgtop recording"),
            Self::UnsupportedVersion(v) => {
                write!(
                    f,
                    "recording format version {v}; this cgtop reads {VERSION}"
                )
            }
            Self::Invalid(what) => write!(f, "invalid recording: {what}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// What a recording says about the machine and the run: enough to print
/// what the live run printed, on another host.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub host: HostInfo,
    pub mount: MountInfo,
    /// The group the recording starts at (`cgtop record GROUP`).
    pub start: GroupPath,
    /// The interval asked for (`-d`).
    pub interval: Duration,
    /// The Unix time of the collector's start: a sample's Unix time is
    /// this plus its `at`, as `--json` prints it.
    pub start_unix: Duration,
}

/// A group's effective limits as the recording keeps them: the fields of
/// `render::severity::Limits` (a rank above this module), copied by
/// `source::record`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupLimits {
    pub memory: Option<u64>,
    pub cpu: Option<CpuMax>,
    pub pids: Option<Limit>,
}

/// The processes of one busy group at one sample.
pub type Busy = (GroupPath, Vec<ProcessInfo>);

/// One decoded sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The groups' hot counters as the collector read them (no detail).
    pub snapshot: Snapshot,
    /// Each group's limits (parallel to `snapshot.groups`), when the
    /// recorder read them.
    pub limits: Option<Vec<GroupLimits>>,
    /// The block devices at this sample.
    pub devices: Vec<DeviceInfo>,
    /// The processes of the busiest groups.
    pub busy: Vec<Busy>,
    /// The events seen since the sample before (from the [`TAG_EVENTS`]
    /// records just before this one).
    pub events: Vec<Event>,
}

/// What one sample to write is made of (borrowed from a `Refresh`).
pub struct SampleRef<'a> {
    pub snapshot: &'a Snapshot,
    /// Empty when the recorder did not read limits.
    pub limits: &'a [GroupLimits],
    pub devices: &'a [DeviceInfo],
    pub busy: &'a [Busy],
}

// ---- varints -------------------------------------------------------------

fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_u128(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let b = &b[..b.len().min(MAX_STRING)];
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // cut on a character boundary under the cap
    let mut end = s.len().min(MAX_STRING);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    put_bytes(out, &s.as_bytes()[..end]);
}

// zigzag reinterprets the bits: the wrap is the point
#[allow(clippy::cast_possible_wrap)]
fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

#[allow(clippy::cast_possible_wrap)]
fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// An optional counter against the group's last value: 0 is `None`, else
/// 1 + the zigzag of the (wrapping) difference, so any u64 round-trips.
#[allow(clippy::cast_possible_wrap)]
fn put_slot(out: &mut Vec<u8>, old: Option<u64>, new: Option<u64>) {
    match new {
        None => out.push(0),
        Some(v) => put_u128(
            out,
            u128::from(zigzag(v.wrapping_sub(old.unwrap_or(0)) as i64)) + 1,
        ),
    }
}

fn put_opt(out: &mut Vec<u8>, v: Option<u64>) {
    put_slot(out, None, v);
}

/// A cursor over one record's payload.
struct Input<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.buf.get(self.pos).ok_or(DecodeError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn u128(&mut self) -> Result<u128, DecodeError> {
        let mut v = 0u128;
        for shift in (0..128).step_by(7) {
            let b = self.byte()?;
            let part = u128::from(b & 0x7f);
            if shift == 126 && part > 3 {
                return Err(DecodeError::BadVarint);
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::BadVarint)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        u64::try_from(self.u128()?).map_err(|_| DecodeError::BadVarint)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        u32::try_from(self.u64()?).map_err(|_| DecodeError::BadVarint)
    }

    /// A count, capped.
    fn count(&mut self, cap: usize, what: &'static str) -> Result<usize, DecodeError> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= cap)
            .ok_or(DecodeError::TooLarge(what))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.count(MAX_STRING, "a string")?;
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated)?;
        let b = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated)?;
        self.pos = end;
        Ok(b)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }

    fn slot(&mut self, old: Option<u64>) -> Result<Option<u64>, DecodeError> {
        let v = self.u128()?;
        if v == 0 {
            return Ok(None);
        }
        let z = u64::try_from(v - 1).map_err(|_| DecodeError::BadVarint)?;
        Ok(Some(old.unwrap_or(0).wrapping_add(unzigzag(z) as u64)))
    }

    fn opt(&mut self) -> Result<Option<u64>, DecodeError> {
        self.slot(None)
    }

    fn duration(&mut self) -> Result<Duration, DecodeError> {
        Ok(Duration::from_nanos(self.u64()?))
    }
}

fn put_duration(out: &mut Vec<u8>, d: Duration) {
    put_u64(out, u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
}

/// A record split off a buffer: its tag, its payload, the bytes it took.
pub type Split<'a> = (u8, &'a [u8], usize);

/// Splits the next record off the front of `buf`: `Ok(None)` when `buf`
/// holds only part of one yet, else its tag, payload and the bytes it
/// took.
pub fn split_record(buf: &[u8]) -> Result<Option<Split<'_>>, DecodeError> {
    let Some(&tag) = buf.first() else {
        return Ok(None);
    };
    let mut i = Input { buf, pos: 1 };
    let len = match i.u64() {
        Ok(n) => n,
        Err(DecodeError::Truncated) => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n <= MAX_RECORD)
        .ok_or(DecodeError::TooLarge("a record"))?;
    let end = i.pos + len;
    Ok(buf.get(i.pos..end).map(|p| (tag, p, end)))
}

fn put_record(out: &mut Vec<u8>, tag: u8, payload: &[u8]) {
    out.push(tag);
    put_u64(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

// ---- header --------------------------------------------------------------

fn encode_header(h: &Header) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut p = Vec::with_capacity(128);
    p.extend_from_slice(MAGIC);
    p.push(VERSION);
    put_str(&mut p, &h.host.hostname);
    put_str(&mut p, &h.host.kernel);
    put_u64(&mut p, h.host.ncpus as u64);
    put_opt(&mut p, h.host.swap_total);
    put_bytes(&mut p, h.mount.root.as_os_str().as_bytes());
    match &h.mount.mode {
        MountMode::PureV2 => p.push(0),
        MountMode::Hybrid { v1_controllers } => {
            p.push(1);
            let n = v1_controllers.len().min(MAX_DEVICES);
            put_u64(&mut p, n as u64);
            for c in &v1_controllers[..n] {
                put_str(&mut p, c);
            }
        }
        MountMode::Directory => p.push(2),
        MountMode::V1 { v1_controllers } => {
            p.push(3);
            let n = v1_controllers.len().min(MAX_DEVICES);
            put_u64(&mut p, n as u64);
            for c in &v1_controllers[..n] {
                put_str(&mut p, c);
            }
        }
    }
    put_bytes(&mut p, h.start.as_bytes());
    put_duration(&mut p, h.interval);
    put_duration(&mut p, h.start_unix);
    p
}

fn decode_header(p: &[u8]) -> Result<Header, DecodeError> {
    use std::os::unix::ffi::OsStrExt;
    if p.len() < MAGIC.len() + 1 || &p[..MAGIC.len()] != MAGIC {
        return Err(DecodeError::NotARecording);
    }
    if p[MAGIC.len()] != VERSION {
        return Err(DecodeError::UnsupportedVersion(p[MAGIC.len()]));
    }
    let mut i = Input {
        buf: p,
        pos: MAGIC.len() + 1,
    };
    let hostname = i.string()?;
    let kernel = i.string()?;
    let ncpus = usize::try_from(i.u64()?)
        .ok()
        .filter(|&n| (1..=1 << 20).contains(&n))
        .ok_or(DecodeError::Invalid("CPU count"))?;
    let swap_total = i.opt()?;
    let root = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(i.bytes()?));
    let mode = match i.byte()? {
        0 => MountMode::PureV2,
        tag @ (1 | 3) => {
            let n = i.count(MAX_DEVICES, "v1 controllers")?;
            let mut v1_controllers = Vec::with_capacity(n);
            for _ in 0..n {
                v1_controllers.push(i.string()?);
            }
            if tag == 1 {
                MountMode::Hybrid { v1_controllers }
            } else {
                MountMode::V1 { v1_controllers }
            }
        }
        2 => MountMode::Directory,
        _ => return Err(DecodeError::Invalid("mount mode")),
    };
    let start = GroupPath::parse(i.bytes()?).map_err(|_| DecodeError::Invalid("start group"))?;
    let interval = i.duration()?;
    let start_unix = i.duration()?;
    Ok(Header {
        host: HostInfo {
            hostname,
            kernel,
            ncpus,
            swap_total,
        },
        mount: MountInfo { root, mode },
        start,
        interval,
        start_unix,
    })
}

// ---- a group's fields ----------------------------------------------------

/// The scalar counters of `HotStats`, in the order of their bits in a
/// group's mask (the ones that change most often first, so that a usual
/// mask is one byte).
const SLOTS: usize = 16;
/// Mask bits after the slots.
const BIT_IO: u32 = SLOTS as u32;
const BIT_INODE: u32 = BIT_IO + 1;
const BIT_TYPE: u32 = BIT_IO + 2;
const BIT_LIMITS: u32 = BIT_IO + 3;
const BIT_UNREADABLE: u32 = BIT_IO + 4;
const MASK_BITS: u32 = BIT_IO + 5;

fn events_code(e: Option<CgroupEvents>) -> Option<u64> {
    let b = |x: Option<bool>| match x {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    };
    e.map(|e| b(e.populated) | (b(e.frozen) << 2))
}

fn events_of(code: Option<u64>) -> Result<Option<CgroupEvents>, DecodeError> {
    let b = |x: u64| match x {
        0 => Ok(None),
        1 => Ok(Some(false)),
        2 => Ok(Some(true)),
        _ => Err(DecodeError::Invalid("cgroup.events")),
    };
    code.map(|c| {
        if c > 15 {
            return Err(DecodeError::Invalid("cgroup.events"));
        }
        Ok(CgroupEvents {
            populated: b(c & 3)?,
            frozen: b(c >> 2)?,
        })
    })
    .transpose()
}

fn slots_of(h: &HotStats) -> [Option<u64>; SLOTS] {
    let cpu = h.cpu.as_ref();
    let (mm_kind, mm_value) = match h.memory_max {
        None => (None, None),
        Some(Limit::Max) => (Some(0), None),
        Some(Limit::Value(v)) => (Some(1), Some(v)),
    };
    [
        cpu.map(|c| c.usage_usec),
        cpu.and_then(|c| c.user_usec),
        cpu.and_then(|c| c.system_usec),
        h.memory_current,
        h.pids_current,
        h.nr_procs,
        cpu.and_then(|c| c.nr_periods),
        cpu.and_then(|c| c.nr_throttled),
        cpu.and_then(|c| c.throttled_usec),
        h.throttled_local_usec,
        h.psi_some_avg10.map(u64::from),
        h.swap_current,
        events_code(h.events),
        mm_kind,
        mm_value,
        h.psi_full_avg10.map(u64::from),
    ]
}

fn hot_of(s: &[Option<u64>; SLOTS], io: Option<IoStat>) -> Result<HotStats, DecodeError> {
    let cpu = s[0].map(|usage_usec| CpuStat {
        usage_usec,
        user_usec: s[1],
        system_usec: s[2],
        nr_periods: s[6],
        nr_throttled: s[7],
        throttled_usec: s[8],
    });
    let memory_max = match (s[13], s[14]) {
        (None, _) => None,
        (Some(0), _) => Some(Limit::Max),
        (Some(1), Some(v)) => Some(Limit::Value(v)),
        _ => return Err(DecodeError::Invalid("memory.max")),
    };
    let centi = |v: Option<u64>| {
        v.map(|v| u32::try_from(v).map_err(|_| DecodeError::Invalid("pressure")))
            .transpose()
    };
    let psi = centi(s[10])?;
    let psi_full = centi(s[15])?;
    Ok(HotStats {
        cpu,
        memory_current: s[3],
        io,
        pids_current: s[4],
        nr_procs: s[5],
        events: events_of(s[12])?,
        memory_max,
        memory_limit: None,
        swap_current: s[11],
        psi_some_avg10: psi,
        psi_full_avg10: psi_full,
        throttled_local_usec: s[9],
        unreadable: Vec::new(),
        // the marks follow the groups in the sample ([`Marks`])
        v1: crate::model::tree::snapshot::V1Hot::default(),
    })
}

const IO_FIELDS: usize = 6;

fn io_fields(d: &IoStatDev) -> [Option<u64>; IO_FIELDS] {
    [d.rbytes, d.wbytes, d.rios, d.wios, d.dbytes, d.dios]
}

fn put_device_id(out: &mut Vec<u8>, d: IoStatDevice) {
    match d {
        IoStatDevice::Unknown => out.push(0),
        IoStatDevice::Dev(id) => {
            put_u64(out, u64::from(id.major) + 1);
            put_u64(out, u64::from(id.minor));
        }
    }
}

fn device_id(i: &mut Input<'_>) -> Result<IoStatDevice, DecodeError> {
    let m = i.u64()?;
    if m == 0 {
        return Ok(IoStatDevice::Unknown);
    }
    let major = u32::try_from(m - 1).map_err(|_| DecodeError::Invalid("device number"))?;
    Ok(IoStatDevice::Dev(DevId {
        major,
        minor: i.u32()?,
    }))
}

fn find_dev(io: Option<&IoStat>, d: IoStatDevice, hint: usize) -> Option<&IoStatDev> {
    let io = io?;
    match io.0.get(hint) {
        Some((x, v)) if *x == d => Some(v),
        _ => io.0.iter().find(|(x, _)| *x == d).map(|(_, v)| v),
    }
}

fn put_io(out: &mut Vec<u8>, old: Option<&IoStat>, new: Option<&IoStat>) {
    let Some(new) = new else {
        out.push(0);
        return;
    };
    let n = new.0.len().min(MAX_DEVICES);
    put_u64(out, n as u64 + 1);
    for (k, (dev, v)) in new.0[..n].iter().enumerate() {
        put_device_id(out, *dev);
        let before = find_dev(old, *dev, k).map(io_fields).unwrap_or_default();
        for (a, b) in before.iter().zip(io_fields(v)) {
            put_slot(out, *a, b);
        }
    }
}

fn get_io(i: &mut Input<'_>, old: Option<&IoStat>) -> Result<Option<IoStat>, DecodeError> {
    let n = i.count(MAX_DEVICES + 1, "io.stat devices")?;
    if n == 0 {
        return Ok(None);
    }
    let mut v = Vec::with_capacity(n - 1);
    for k in 0..n - 1 {
        let dev = device_id(i)?;
        let before = find_dev(old, dev, k).map(io_fields).unwrap_or_default();
        let mut f = [None; IO_FIELDS];
        for (slot, b) in f.iter_mut().zip(before) {
            *slot = i.slot(b)?;
        }
        v.push((
            dev,
            IoStatDev {
                rbytes: f[0],
                wbytes: f[1],
                rios: f[2],
                wios: f[3],
                dbytes: f[4],
                dios: f[5],
            },
        ));
    }
    Ok(Some(IoStat(v)))
}

fn type_code(t: Option<CgroupType>) -> u8 {
    match t {
        None => 0,
        Some(CgroupType::Domain) => 1,
        Some(CgroupType::DomainThreaded) => 2,
        Some(CgroupType::DomainInvalid) => 3,
        Some(CgroupType::Threaded) => 4,
    }
}

fn type_of(c: u8) -> Result<Option<CgroupType>, DecodeError> {
    Ok(match c {
        0 => None,
        1 => Some(CgroupType::Domain),
        2 => Some(CgroupType::DomainThreaded),
        3 => Some(CgroupType::DomainInvalid),
        4 => Some(CgroupType::Threaded),
        _ => return Err(DecodeError::Invalid("cgroup.type")),
    })
}

fn put_limit(out: &mut Vec<u8>, l: Option<Limit>) {
    match l {
        None => out.push(0),
        Some(Limit::Max) => out.push(1),
        Some(Limit::Value(v)) => {
            out.push(2);
            put_u64(out, v);
        }
    }
}

fn get_limit(i: &mut Input<'_>) -> Result<Option<Limit>, DecodeError> {
    Ok(match i.byte()? {
        0 => None,
        1 => Some(Limit::Max),
        2 => Some(Limit::Value(i.u64()?)),
        _ => return Err(DecodeError::Invalid("a limit")),
    })
}

fn put_limits(out: &mut Vec<u8>, l: &GroupLimits) {
    put_opt(out, l.memory);
    match l.cpu {
        None => out.push(0),
        Some(c) => {
            out.push(1);
            put_opt(out, c.quota);
            put_u64(out, c.period);
        }
    }
    put_limit(out, l.pids);
}

fn get_limits(i: &mut Input<'_>) -> Result<GroupLimits, DecodeError> {
    let memory = i.opt()?;
    let cpu = match i.byte()? {
        0 => None,
        1 => Some(CpuMax {
            quota: i.opt()?,
            period: i.u64()?,
        }),
        _ => return Err(DecodeError::Invalid("cpu.max")),
    };
    Ok(GroupLimits {
        memory,
        cpu,
        pids: get_limit(i)?,
    })
}

/// Where a group's figures came from, as the live run said it
/// (`snapshot::Sources` and v1's freezer.state): one number of bits, and
/// the disk v1 blkio did not count. The bits, from the lowest: the
/// hierarchy of cpu, memory, io, pids and freezer, two bits each (0
/// none, 1 v1, 2 cgroup2); `io_own_only`; `root_kernel_memory`;
/// `root_machine_tasks`; `io_uncounted` (its MAJ:MIN follows); then
/// freezer.state in two bits (0 none, 1 THAWED, 2 FREEZING, 3 FROZEN).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marks {
    bits: u64,
    uncounted: Option<DevId>,
}

const MARK_OWN_ONLY: u64 = 1 << 10;
const MARK_KERNEL_MEMORY: u64 = 1 << 11;
const MARK_MACHINE_TASKS: u64 = 1 << 12;
const MARK_UNCOUNTED: u64 = 1 << 13;
const MARK_FREEZER_SHIFT: u32 = 14;
/// The bits a reader knows: any other is damage.
const MARK_BITS: u64 = (1 << 16) - 1;

impl Marks {
    pub fn of(v1: &crate::model::tree::snapshot::V1Hot) -> Self {
        use crate::cgroupfs::v1::FreezerState;
        use crate::model::tree::snapshot::HierKind;
        let s = &v1.sources;
        let kind = |k: Option<HierKind>| match k {
            None => 0u64,
            Some(HierKind::V1) => 1,
            Some(HierKind::V2) => 2,
        };
        let mut bits = 0u64;
        for (n, k) in [s.cpu, s.memory, s.io, s.pids, s.freezer]
            .into_iter()
            .enumerate()
        {
            bits |= kind(k) << (2 * n);
        }
        let flag = |on: bool, bit: u64| if on { bit } else { 0 };
        bits |= flag(s.io_own_only, MARK_OWN_ONLY)
            | flag(s.root_kernel_memory, MARK_KERNEL_MEMORY)
            | flag(s.root_machine_tasks, MARK_MACHINE_TASKS)
            | flag(s.io_uncounted.is_some(), MARK_UNCOUNTED);
        let freezer = match v1.freezer_state {
            None => 0u64,
            Some(FreezerState::Thawed) => 1,
            Some(FreezerState::Freezing) => 2,
            Some(FreezerState::Frozen) => 3,
        };
        bits |= freezer << MARK_FREEZER_SHIFT;
        Self {
            bits,
            uncounted: s.io_uncounted,
        }
    }

    /// Puts the marks on `v1` (its sources and freezer.state).
    fn apply(self, v1: &mut crate::model::tree::snapshot::V1Hot) {
        use crate::cgroupfs::v1::FreezerState;
        use crate::model::tree::snapshot::HierKind;
        let kind = |n: u32| match (self.bits >> (2 * n)) & 3 {
            1 => Some(HierKind::V1),
            2 => Some(HierKind::V2),
            _ => None,
        };
        let s = &mut v1.sources;
        s.cpu = kind(0);
        s.memory = kind(1);
        s.io = kind(2);
        s.pids = kind(3);
        s.freezer = kind(4);
        s.io_own_only = self.bits & MARK_OWN_ONLY != 0;
        s.root_kernel_memory = self.bits & MARK_KERNEL_MEMORY != 0;
        s.root_machine_tasks = self.bits & MARK_MACHINE_TASKS != 0;
        s.io_uncounted = self.uncounted;
        v1.freezer_state = match (self.bits >> MARK_FREEZER_SHIFT) & 3 {
            1 => Some(FreezerState::Thawed),
            2 => Some(FreezerState::Freezing),
            3 => Some(FreezerState::Frozen),
            _ => None,
        };
    }
}

fn put_marks(out: &mut Vec<u8>, m: Marks) {
    put_u64(out, m.bits);
    if let Some(d) = m.uncounted {
        put_u64(out, u64::from(d.major));
        put_u64(out, u64::from(d.minor));
    }
}

fn get_marks(i: &mut Input<'_>) -> Result<Marks, DecodeError> {
    let bits = i.u64()?;
    // a value 3 in a two-bit hierarchy field is no kind
    let bad_kind = (0..5).any(|n| (bits >> (2 * n)) & 3 == 3);
    if bits & !MARK_BITS != 0 || bad_kind {
        return Err(DecodeError::Invalid("a group's marks"));
    }
    let uncounted = if bits & MARK_UNCOUNTED != 0 {
        Some(DevId {
            major: i.u32()?,
            minor: i.u32()?,
        })
    } else {
        None
    };
    Ok(Marks { bits, uncounted })
}

/// A group's values as of its last sample in the frame.
#[derive(Debug, Clone, Default)]
struct Last {
    inode: u64,
    ty: u8,
    slots: [Option<u64>; SLOTS],
    io: Option<IoStat>,
    limits: GroupLimits,
    unreadable: Vec<Unreadable>,
    marks: Marks,
}

// ---- processes and devices -----------------------------------------------

fn put_devices(out: &mut Vec<u8>, devs: &[DeviceInfo]) {
    let n = devs.len().min(MAX_DEVICES);
    put_u64(out, n as u64);
    for d in &devs[..n] {
        put_u64(out, u64::from(d.dev.major));
        put_u64(out, u64::from(d.dev.minor));
        put_str(out, &d.name);
        match (d.partition, d.parent) {
            (p, None) => out.push(u8::from(p)),
            (p, Some(parent)) => {
                out.push(2 | u8::from(p));
                put_u64(out, u64::from(parent.major));
                put_u64(out, u64::from(parent.minor));
            }
        }
    }
}

fn get_devices(i: &mut Input<'_>) -> Result<Vec<DeviceInfo>, DecodeError> {
    let n = i.count(MAX_DEVICES, "devices")?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let dev = DevId {
            major: i.u32()?,
            minor: i.u32()?,
        };
        let name = i.string()?;
        let flags = i.byte()?;
        if flags > 3 {
            return Err(DecodeError::Invalid("a device"));
        }
        let parent = if flags & 2 != 0 {
            Some(DevId {
                major: i.u32()?,
                minor: i.u32()?,
            })
        } else {
            None
        };
        v.push(DeviceInfo {
            dev,
            name,
            partition: flags & 1 != 0,
            parent,
        });
    }
    Ok(v)
}

fn put_process(out: &mut Vec<u8>, p: &ProcessInfo) {
    put_u64(out, u64::from(p.pid));
    put_bytes(out, &p.user);
    put_u64(out, u64::from(p.state));
    match p.cpu_pct {
        None => out.push(0),
        Some(c) => {
            out.push(1);
            out.extend_from_slice(&c.to_bits().to_le_bytes());
        }
    }
    put_u64(out, p.rss_bytes);
    put_str(out, &p.cmdline);
}

fn get_process(i: &mut Input<'_>) -> Result<ProcessInfo, DecodeError> {
    let pid = i.u32()?;
    let user = i.bytes()?.to_vec();
    let state = char::from_u32(i.u32()?).ok_or(DecodeError::Invalid("a process state"))?;
    let cpu_pct = match i.byte()? {
        0 => None,
        1 => {
            let mut b = [0u8; 8];
            for x in &mut b {
                *x = i.byte()?;
            }
            Some(f64::from_bits(u64::from_le_bytes(b)))
        }
        _ => return Err(DecodeError::Invalid("a process's CPU")),
    };
    Ok(ProcessInfo {
        pid,
        user,
        state,
        cpu_pct,
        rss_bytes: i.u64()?,
        cmdline: i.string()?,
    })
}

// ---- the encoder ---------------------------------------------------------

/// Sample flags.
const SAME_LAYOUT: u8 = 1;
const HAS_LIMITS: u8 = 2;
const HAS_DEVICES: u8 = 4;
const HAS_BUSY: u8 = 8;

/// Writes records; holds one frame's state (the path table, each group's
/// last values, the last device list written).
#[derive(Debug, Default)]
pub struct Encoder {
    ids: HashMap<GroupPath, u32>,
    /// The bytes of the paths in `ids`.
    path_bytes: usize,
    last: Vec<Last>,
    layout: Vec<u32>,
    devices: Option<Vec<DeviceInfo>>,
    /// Each group's identity as written in this frame.
    identities: HashMap<GroupPath, Arc<Identity>>,
    /// Samples written since the frame began.
    pub samples_in_frame: usize,
}

impl Encoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the frame's path table is full ([`FRAME_PATHS`],
    /// [`FRAME_PATH_BYTES`]): the next sample should begin a new frame.
    pub fn table_full(&self) -> bool {
        self.ids.len() >= FRAME_PATHS || self.path_bytes >= FRAME_PATH_BYTES
    }

    /// Begins a frame: forgets every path and value, and writes the header
    /// (every frame has it, so that each decodes on its own).
    pub fn start_frame(&mut self, header: &Header, out: &mut Vec<u8>) {
        *self = Self::default();
        put_record(out, TAG_HEADER, &encode_header(header));
    }

    /// Appends one sample's record to `out`.
    pub fn sample(&mut self, s: &SampleRef<'_>, out: &mut Vec<u8>) {
        let groups = &s.snapshot.groups[..s.snapshot.groups.len().min(MAX_GROUPS)];
        self.identities(groups, out);
        let mut p = Vec::with_capacity(16 + groups.len() * 12);
        let mut flags = 0u8;
        // the ids, new paths interned (in the frame's table) first
        let mut fresh = Vec::new();
        let ids: Vec<u32> = groups
            .iter()
            .map(|g| {
                let n = self.ids.len() as u32;
                *self.ids.entry(g.path.clone()).or_insert_with(|| {
                    self.path_bytes += g.path.as_bytes().len();
                    fresh.push(n);
                    n
                })
            })
            .collect();
        self.last.resize_with(self.ids.len(), Last::default);
        if ids == self.layout && self.samples_in_frame > 0 {
            flags |= SAME_LAYOUT;
        }
        let with_limits = s.limits.len() == groups.len() && !groups.is_empty();
        if with_limits {
            flags |= HAS_LIMITS;
        }
        let devices_changed = self.devices.as_deref() != Some(s.devices);
        if devices_changed {
            flags |= HAS_DEVICES;
        }
        if !s.busy.is_empty() {
            flags |= HAS_BUSY;
        }
        p.push(flags);
        put_duration(&mut p, s.snapshot.at);
        let c = &s.snapshot.cost;
        put_duration(&mut p, c.wall);
        put_duration(&mut p, c.cpu);
        put_u64(&mut p, c.files_read);
        put_u64(&mut p, c.files_kept);
        put_u64(&mut p, c.dirs_listed);
        p.push(u8::from(c.fd_limited) | (u8::from(c.walked) << 1));
        if flags & SAME_LAYOUT == 0 {
            put_u64(&mut p, ids.len() as u64);
            for (g, &id) in groups.iter().zip(&ids) {
                if fresh.binary_search(&id).is_ok() {
                    p.push(0);
                    put_bytes(&mut p, g.path.as_bytes());
                } else {
                    put_u64(&mut p, u64::from(id) + 1);
                }
            }
        }
        for (k, (g, &id)) in groups.iter().zip(&ids).enumerate() {
            let last = &mut self.last[id as usize];
            let slots = slots_of(&g.hot);
            let ty = type_code(g.cgroup_type);
            let limits = if with_limits {
                s.limits[k]
            } else {
                last.limits
            };
            let mut mask = 0u32;
            for (b, (a, n)) in last.slots.iter().zip(&slots).enumerate() {
                if a != n {
                    mask |= 1 << b;
                }
            }
            let io_changed = last.io.as_ref() != g.hot.io.as_ref();
            mask |= u32::from(io_changed) << BIT_IO;
            mask |= u32::from(last.inode != g.inode) << BIT_INODE;
            mask |= u32::from(last.ty != ty) << BIT_TYPE;
            mask |= u32::from(last.limits != limits) << BIT_LIMITS;
            mask |= u32::from(last.unreadable != g.hot.unreadable) << BIT_UNREADABLE;
            put_u64(&mut p, u64::from(mask));
            for (b, (a, n)) in last.slots.iter().zip(&slots).enumerate() {
                if mask & (1 << b) != 0 {
                    put_slot(&mut p, *a, *n);
                }
            }
            if io_changed {
                put_io(&mut p, last.io.as_ref(), g.hot.io.as_ref());
                last.io.clone_from(&g.hot.io);
            }
            if mask & (1 << BIT_INODE) != 0 {
                put_u64(&mut p, g.inode);
            }
            if mask & (1 << BIT_TYPE) != 0 {
                p.push(ty);
            }
            if mask & (1 << BIT_LIMITS) != 0 {
                put_limits(&mut p, &limits);
            }
            if mask & (1 << BIT_UNREADABLE) != 0 {
                let n = g.hot.unreadable.len().min(MAX_UNREADABLE);
                put_u64(&mut p, n as u64);
                for u in &g.hot.unreadable[..n] {
                    put_str(&mut p, &u.file);
                    put_str(&mut p, &u.error);
                }
                last.unreadable.clone_from(&g.hot.unreadable);
            }
            last.slots = slots;
            last.inode = g.inode;
            last.ty = ty;
            last.limits = limits;
        }
        if devices_changed {
            put_devices(&mut p, s.devices);
            self.devices = Some(s.devices.to_vec());
        }
        if !s.busy.is_empty() {
            let busy: Vec<(u32, &Vec<ProcessInfo>)> = s
                .busy
                .iter()
                .filter_map(|(path, procs)| Some((*self.ids.get(path)?, procs)))
                .take(MAX_BUSY)
                .collect();
            put_u64(&mut p, busy.len() as u64);
            for (id, procs) in busy {
                put_u64(&mut p, u64::from(id));
                let n = procs.len().min(MAX_PROCS);
                put_u64(&mut p, n as u64);
                for pr in &procs[..n] {
                    put_process(&mut p, pr);
                }
            }
        }
        self.marks(groups, &ids, &mut p);
        self.layout = ids;
        self.samples_in_frame += 1;
        put_record(out, TAG_SAMPLE, &p);
    }

    /// The marks of the groups whose marks are not the ones written
    /// before in the frame, at the sample's end: how many, then each
    /// one's place in the sample's list of groups and its [`Marks`].
    /// Nothing when none changed (always so on pure cgroup2 but for
    /// freezer: every group's marks stay empty there).
    fn marks(&mut self, groups: &[GroupSample], ids: &[u32], p: &mut Vec<u8>) {
        let mut changed = Vec::new();
        for (k, (g, &id)) in groups.iter().zip(ids).enumerate() {
            let m = Marks::of(&g.hot.v1);
            let last = &mut self.last[id as usize];
            if last.marks != m {
                last.marks = m;
                changed.push((k, m));
            }
        }
        if changed.is_empty() {
            return;
        }
        put_u64(p, changed.len() as u64);
        for (k, m) in changed {
            put_u64(p, k as u64);
            put_marks(p, m);
        }
    }

    /// The [`TAG_IDENTITIES`] record of the groups whose identity is not
    /// the one written before in the frame (none when nothing changed):
    /// a comparison of shared pointers per group while nothing changes.
    fn identities(&mut self, groups: &[GroupSample], out: &mut Vec<u8>) {
        let mut p = Vec::new();
        let mut n = 0usize;
        for g in groups {
            let same = match (&g.identity, self.identities.get(&g.path)) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => false,
            };
            if same {
                continue;
            }
            put_bytes(&mut p, g.path.as_bytes());
            match &g.identity {
                None => {
                    p.push(0);
                    self.identities.remove(&g.path);
                }
                Some(i) => {
                    p.push(1);
                    put_identity(&mut p, i);
                    self.identities.insert(g.path.clone(), Arc::clone(i));
                }
            }
            n += 1;
        }
        if n > 0 {
            let mut rec = Vec::with_capacity(p.len() + 4);
            put_u64(&mut rec, n as u64);
            rec.extend_from_slice(&p);
            put_record(out, TAG_IDENTITIES, &rec);
        }
    }
}

// ---- identities ----------------------------------------------------------

fn put_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
    }
}

const KINDS: [Kind; 9] = [
    Kind::Container,
    Kind::Monitor,
    Kind::Pod,
    Kind::PodmanPod,
    Kind::Machine,
    Kind::Session,
    Kind::User,
    Kind::UserManager,
    Kind::Unit,
];
const RUNTIMES: [Runtime; 6] = [
    Runtime::Docker,
    Runtime::Podman,
    Runtime::Containerd,
    Runtime::Crio,
    Runtime::Lxc,
    Runtime::Kubernetes,
];
const QOS: [Qos; 3] = [Qos::Guaranteed, Qos::Burstable, Qos::BestEffort];

/// 0 for none, else 1 + the value's place in `all`.
fn code_of<T: PartialEq>(all: &[T], v: Option<T>) -> u8 {
    v.and_then(|v| all.iter().position(|x| *x == v))
        .map_or(0, |i| i as u8 + 1)
}

fn of_code<T: Copy>(all: &[T], c: u8, what: &'static str) -> Result<Option<T>, DecodeError> {
    match c {
        0 => Ok(None),
        c => all
            .get(usize::from(c) - 1)
            .copied()
            .map(Some)
            .ok_or(DecodeError::Invalid(what)),
    }
}

fn put_identity(out: &mut Vec<u8>, i: &Identity) {
    out.push(code_of(&KINDS, i.kind));
    out.push(code_of(&RUNTIMES, i.runtime));
    out.push(code_of(&QOS, i.qos));
    put_str(out, &i.id);
    for s in i.optional_texts() {
        put_opt_str(out, s.as_deref());
    }
    let n = i.labels.len().min(MAX_LABELS);
    put_u64(out, n as u64);
    for (k, v) in &i.labels[..n] {
        put_str(out, k);
        put_str(out, v);
    }
}

impl Input<'_> {
    fn opt_string(&mut self) -> Result<Option<String>, DecodeError> {
        match self.byte()? {
            0 => Ok(None),
            1 => self.string().map(Some),
            _ => Err(DecodeError::Invalid("an identity's text")),
        }
    }
}

fn get_identity(i: &mut Input<'_>) -> Result<Identity, DecodeError> {
    let kind = of_code(&KINDS, i.byte()?, "an identity's kind")?;
    let runtime = of_code(&RUNTIMES, i.byte()?, "an identity's runtime")?;
    let qos = of_code(&QOS, i.byte()?, "a QoS class")?;
    let id = i.string()?;
    let mut t = [(); 11].map(|()| None);
    for s in &mut t {
        *s = i.opt_string()?;
    }
    let [name, image, pod, namespace, pod_uid, description, user, tty, remote_host, source, unreadable] =
        t;
    let n = i.count(MAX_LABELS, "an identity's labels")?;
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        labels.push((i.string()?, i.string()?));
    }
    Ok(Identity {
        kind,
        runtime,
        id,
        name,
        image,
        pod,
        namespace,
        pod_uid,
        qos,
        labels,
        description,
        user,
        tty,
        remote_host,
        source,
        unreadable,
        // a recording is a file: what it says was never checked here
        vouched: false,
    })
}

/// About what an identity holds in memory.
fn identity_bytes(i: &Identity) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    std::mem::size_of::<Identity>()
        + i.id.len()
        + i.optional_texts().into_iter().map(opt).sum::<usize>()
        + i.labels
            .iter()
            .map(|(k, v)| k.len() + v.len() + 48)
            .sum::<usize>()
}

// ---- the decoder ---------------------------------------------------------

/// The bytes a group's kept io.stat holds.
fn io_held(io: Option<&IoStat>) -> usize {
    io.map_or(0, |io| {
        io.0.len() * std::mem::size_of::<(IoStatDevice, IoStatDev)>()
    })
}

/// The bytes a group's kept unreadable files hold.
fn unreadable_held(u: &[Unreadable]) -> usize {
    u.iter()
        .map(|u| std::mem::size_of::<Unreadable>() + u.file.len() + u.error.len())
        .sum()
}

/// `held` with `is` bytes instead of `was`, within [`MAX_HELD`].
fn hold(held: usize, is: usize, was: usize) -> Result<usize, DecodeError> {
    let held = held.saturating_sub(was).saturating_add(is);
    if held > MAX_HELD {
        return Err(DecodeError::TooLarge("what a frame holds"));
    }
    Ok(held)
}

/// What one record decoded to.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Header(Box<Header>),
    Sample(Box<Sample>),
    /// Events, for the sample that follows.
    Events(Vec<Event>),
    /// Identities taken into the frame (how many entries): the samples
    /// that follow carry them.
    Identities(usize),
    /// A kind this version does not know (skipped): its tag.
    Unknown(u8),
}

/// Reads records; holds the state of the frame being read.
#[derive(Debug, Default)]
pub struct Decoder {
    header: Option<Header>,
    paths: Vec<GroupPath>,
    path_bytes: usize,
    /// What the frame's state holds (see [`MAX_HELD`]).
    held: usize,
    last: Vec<Last>,
    layout: Vec<u32>,
    devices: Vec<DeviceInfo>,
    /// Each group's identity, from the frame's [`TAG_IDENTITIES`] records.
    identities: HashMap<GroupPath, Arc<Identity>>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The header of the frame being read.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// Adds to what the frame holds (see [`MAX_HELD`]).
    fn hold(&mut self, is: usize, was: usize) -> Result<(), DecodeError> {
        self.held = hold(self.held, is, was)?;
        Ok(())
    }

    /// Forgets the frame (a reader that lost its place in the stream):
    /// samples are refused until the next header.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Decodes one record. A sample's error leaves the frame unusable
    /// (its state may be half-updated): the caller resets.
    pub fn record(&mut self, tag: u8, payload: &[u8]) -> Result<Record, DecodeError> {
        match tag {
            TAG_HEADER => {
                let h = decode_header(payload)?;
                *self = Self {
                    header: Some(h.clone()),
                    ..Self::default()
                };
                Ok(Record::Header(Box::new(h)))
            }
            TAG_SAMPLE => self.sample(payload).map(|s| Record::Sample(Box::new(s))),
            TAG_EVENTS => decode_events(payload).map(Record::Events),
            TAG_IDENTITIES => self.identities(payload).map(Record::Identities),
            t => Ok(Record::Unknown(t)),
        }
    }

    /// Takes a [`TAG_IDENTITIES`] record into the frame's state, every
    /// byte counted in what the frame holds ([`MAX_HELD`]).
    fn identities(&mut self, payload: &[u8]) -> Result<usize, DecodeError> {
        if self.header.is_none() {
            return Err(DecodeError::Invalid("identities before any header"));
        }
        let mut i = Input::new(payload);
        let n = i.count(MAX_IDENTITIES, "identities")?;
        for _ in 0..n {
            let path =
                GroupPath::parse(i.bytes()?).map_err(|_| DecodeError::Invalid("a group path"))?;
            let new = match i.byte()? {
                0 => None,
                1 => Some(Arc::new(get_identity(&mut i)?)),
                _ => return Err(DecodeError::Invalid("an identity")),
            };
            let was = self
                .identities
                .get(&path)
                .map_or(0, |x| identity_bytes(x) + path.as_bytes().len());
            let is = new
                .as_deref()
                .map_or(0, |x| identity_bytes(x) + path.as_bytes().len());
            self.hold(is, was)?;
            match new {
                Some(x) => {
                    if self.identities.len() >= MAX_IDENTITIES
                        && !self.identities.contains_key(&path)
                    {
                        return Err(DecodeError::TooLarge("identities"));
                    }
                    self.identities.insert(path, x);
                }
                None => {
                    self.identities.remove(&path);
                }
            }
        }
        Ok(n)
    }

    fn sample(&mut self, payload: &[u8]) -> Result<Sample, DecodeError> {
        if self.header.is_none() {
            return Err(DecodeError::Invalid("a sample before any header"));
        }
        let mut i = Input::new(payload);
        let flags = i.byte()?;
        if flags > 15 {
            return Err(DecodeError::Invalid("sample flags"));
        }
        let at = i.duration()?;
        let cost = ScanCost {
            wall: i.duration()?,
            cpu: i.duration()?,
            files_read: i.u64()?,
            files_kept: i.u64()?,
            dirs_listed: i.u64()?,
            fd_limited: false,
            walked: false,
        };
        let cf = i.byte()?;
        let cost = ScanCost {
            fd_limited: cf & 1 != 0,
            walked: cf & 2 != 0,
            ..cost
        };
        if flags & SAME_LAYOUT == 0 {
            let n = i.count(MAX_GROUPS, "groups")?;
            let mut layout = Vec::with_capacity(n.min(payload.len()));
            for _ in 0..n {
                let x = i.u64()?;
                if x == 0 {
                    let b = i.bytes()?;
                    if self.paths.len() >= MAX_PATHS {
                        return Err(DecodeError::TooLarge("the path table"));
                    }
                    self.path_bytes += b.len();
                    if self.path_bytes > MAX_PATH_BYTES {
                        return Err(DecodeError::TooLarge("the path table"));
                    }
                    self.hold(b.len() + std::mem::size_of::<Last>(), 0)?;
                    let path =
                        GroupPath::parse(b).map_err(|_| DecodeError::Invalid("a group path"))?;
                    layout.push(self.paths.len() as u32);
                    self.paths.push(path);
                    self.last.push(Last::default());
                } else {
                    let id = u32::try_from(x - 1)
                        .ok()
                        .filter(|&id| (id as usize) < self.paths.len())
                        .ok_or(DecodeError::Invalid("a path id"))?;
                    layout.push(id);
                }
            }
            self.layout = layout;
        }
        let mut groups: Vec<GroupSample> = Vec::with_capacity(self.layout.len());
        let mut limits = Vec::with_capacity(self.layout.len());
        let mut held = self.held;
        for &id in &self.layout {
            let last = &mut self.last[id as usize];
            let mask = i.u64()?;
            if mask >> MASK_BITS != 0 {
                return Err(DecodeError::Invalid("a group's mask"));
            }
            for (b, slot) in last.slots.iter_mut().enumerate() {
                if mask & (1 << b) != 0 {
                    *slot = i.slot(*slot)?;
                }
            }
            if mask & (1 << BIT_IO) != 0 {
                let io = get_io(&mut i, last.io.as_ref())?;
                let (was, is) = (io_held(last.io.as_ref()), io_held(io.as_ref()));
                last.io = io;
                held = hold(held, is, was)?;
            }
            if mask & (1 << BIT_INODE) != 0 {
                last.inode = i.u64()?;
            }
            if mask & (1 << BIT_TYPE) != 0 {
                last.ty = i.byte()?;
            }
            if mask & (1 << BIT_LIMITS) != 0 {
                last.limits = get_limits(&mut i)?;
            }
            if mask & (1 << BIT_UNREADABLE) != 0 {
                let n = i.count(MAX_UNREADABLE, "unreadable files")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(Unreadable {
                        file: i.string()?,
                        error: i.string()?,
                    });
                }
                let (was, is) = (unreadable_held(&last.unreadable), unreadable_held(&v));
                last.unreadable = v;
                held = hold(held, is, was)?;
            }
            let path = &self.paths[id as usize];
            if groups.last().is_some_and(|p| p.path >= *path) {
                return Err(DecodeError::Invalid("groups out of order"));
            }
            let mut hot = hot_of(&last.slots, last.io.clone())?;
            hot.unreadable.clone_from(&last.unreadable);
            groups.push(GroupSample {
                path: path.clone(),
                inode: last.inode,
                cgroup_type: type_of(last.ty)?,
                hot,
                detail: None,
                identity: self.identities.get(path).cloned(),
            });
            limits.push(last.limits);
        }
        self.held = held;
        // memory_limit is derived, not recorded
        crate::model::tree::snapshot::fill_memory_limits(&mut groups);
        if flags & HAS_DEVICES != 0 {
            let devices = get_devices(&mut i)?;
            let size = |d: &[DeviceInfo]| {
                d.iter()
                    .map(|d| std::mem::size_of::<DeviceInfo>() + d.name.len())
                    .sum::<usize>()
            };
            self.hold(size(&devices), size(&self.devices))?;
            self.devices = devices;
        }
        let mut busy = Vec::new();
        if flags & HAS_BUSY != 0 {
            let n = i.count(MAX_BUSY, "busy groups")?;
            for _ in 0..n {
                let id = i.u64()?;
                let path = usize::try_from(id)
                    .ok()
                    .and_then(|id| self.paths.get(id))
                    .ok_or(DecodeError::Invalid("a path id"))?
                    .clone();
                let m = i.count(MAX_PROCS, "processes")?;
                let mut procs = Vec::with_capacity(m.min(payload.len()));
                for _ in 0..m {
                    procs.push(get_process(&mut i)?);
                }
                busy.push((path, procs));
            }
        }
        // the marks that changed, where any did (a sample of a recording
        // made before they were recorded ends here: none)
        if i.pos < payload.len() {
            let n = i.count(self.layout.len(), "marks")?;
            let mut next = 0usize;
            for _ in 0..n {
                let k = usize::try_from(i.u64()?)
                    .ok()
                    .filter(|&k| k >= next && k < self.layout.len())
                    .ok_or(DecodeError::Invalid("a group's place in the marks"))?;
                next = k + 1;
                self.last[self.layout[k] as usize].marks = get_marks(&mut i)?;
            }
        }
        for (g, &id) in groups.iter_mut().zip(&self.layout) {
            self.last[id as usize].marks.apply(&mut g.hot.v1);
        }
        Ok(Sample {
            snapshot: Snapshot { at, groups, cost },
            limits: (flags & HAS_LIMITS != 0).then_some(limits),
            devices: self.devices.clone(),
            busy,
            events: Vec::new(),
        })
    }
}

// ---- events --------------------------------------------------------------

fn put_path(out: &mut Vec<u8>, p: Option<&GroupPath>) {
    match p {
        None => out.push(0),
        Some(p) => {
            out.push(1);
            put_bytes(out, p.as_bytes());
        }
    }
}

fn get_path(i: &mut Input<'_>) -> Result<Option<GroupPath>, DecodeError> {
    match i.byte()? {
        0 => Ok(None),
        1 => {
            let b = i.bytes()?;
            if b.len() > crate::model::time::events::PATH_CAP {
                return Err(DecodeError::TooLarge("an event's path"));
            }
            GroupPath::parse(b)
                .map(Some)
                .map_err(|_| DecodeError::Invalid("an event's path"))
        }
        _ => Err(DecodeError::Invalid("an event's path")),
    }
}

/// Appends a [`TAG_EVENTS`] record of `events` (at most [`MAX_EVENTS`];
/// nothing when there are none).
pub fn put_events(out: &mut Vec<u8>, events: &[Event]) {
    let events = &events[..events.len().min(MAX_EVENTS)];
    if events.is_empty() {
        return;
    }
    let mut p = Vec::with_capacity(32 * events.len());
    put_u64(&mut p, events.len() as u64);
    for e in events {
        put_duration(&mut p, e.at);
        put_u64(&mut p, e.unix_s.to_bits());
        put_path(&mut p, Some(&e.path));
        match &e.kind {
            EventKind::Populated(v) => p.extend_from_slice(&[0, u8::from(*v)]),
            EventKind::Frozen(v) => p.extend_from_slice(&[1, u8::from(*v)]),
            EventKind::Memory {
                what,
                count,
                victim,
            } => {
                p.push(2);
                put_str(&mut p, what.key());
                put_u64(&mut p, *count);
                match victim {
                    None => p.push(0),
                    Some(v) => {
                        p.push(1);
                        put_bytes(&mut p, &v.task);
                        put_u64(&mut p, u64::from(v.pid));
                        put_opt(&mut p, v.uid.map(u64::from));
                        put_path(&mut p, v.oom_memcg.as_ref());
                        put_path(&mut p, v.task_memcg.as_ref());
                    }
                }
            }
            EventKind::Swap { what, count } => {
                p.push(3);
                put_str(&mut p, what.key());
                put_u64(&mut p, *count);
            }
            EventKind::PidsMax { count } => {
                p.push(4);
                put_u64(&mut p, *count);
            }
        }
    }
    put_record(out, TAG_EVENTS, &p);
}

fn decode_events(payload: &[u8]) -> Result<Vec<Event>, DecodeError> {
    let mut i = Input::new(payload);
    let n = i.count(MAX_EVENTS, "events")?;
    let mut out = Vec::with_capacity(n.min(payload.len()));
    let flag = |b: u8| match b {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(DecodeError::Invalid("an event's state")),
    };
    for _ in 0..n {
        let at = i.duration()?;
        let unix_s = f64::from_bits(i.u64()?);
        if !unix_s.is_finite() {
            return Err(DecodeError::Invalid("an event's time"));
        }
        let path = get_path(&mut i)?.ok_or(DecodeError::Invalid("an event's path"))?;
        let kind = match i.byte()? {
            0 => EventKind::Populated(flag(i.byte()?)?),
            1 => EventKind::Frozen(flag(i.byte()?)?),
            2 => {
                let what = MemoryEvent::from_key(&i.string()?)
                    .ok_or(DecodeError::Invalid("a memory event"))?;
                let count = i.u64()?;
                let victim = match i.byte()? {
                    0 => None,
                    1 => {
                        let task = i.bytes()?;
                        let task =
                            task[..task.len().min(crate::model::time::events::TASK_CAP)].to_vec();
                        let pid = i.u32()?;
                        let uid = i.opt()?.map(u32::try_from).transpose();
                        let uid = uid.map_err(|_| DecodeError::Invalid("a uid"))?;
                        Some(Box::new(OomVictim {
                            task,
                            pid,
                            uid,
                            oom_memcg: get_path(&mut i)?,
                            task_memcg: get_path(&mut i)?,
                        }))
                    }
                    _ => return Err(DecodeError::Invalid("an OOM victim")),
                };
                EventKind::Memory {
                    what,
                    count,
                    victim,
                }
            }
            3 => EventKind::Swap {
                what: SwapEvent::from_key(&i.string()?)
                    .ok_or(DecodeError::Invalid("a swap event"))?,
                count: i.u64()?,
            },
            4 => EventKind::PidsMax { count: i.u64()? },
            _ => return Err(DecodeError::Invalid("an event's kind")),
        };
        // a recording keeps no owner: replayed, its events are one
        // source to the list's fairness
        out.push(Event {
            at,
            unix_s,
            since: None,
            path,
            kind,
            owner: None,
        });
    }
    Ok(out)
}

/// Decodes a whole stream of records (no compression): every header and
/// sample up to the first record that fails, and that error, if any.
pub fn decode_all(mut buf: &[u8]) -> (Vec<Record>, Option<DecodeError>) {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    loop {
        match split_record(buf) {
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
            Ok(Some((tag, payload, used))) => {
                match d.record(tag, payload) {
                    Ok(r) => out.push(r),
                    Err(e) => return (out, Some(e)),
                }
                buf = &buf[used..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[u8]) -> GroupPath {
        GroupPath::parse(s).unwrap()
    }

    /// A recording of v1 blkio's bytes without its operation counts (the
    /// io_serviced file absent or unreadable where it was made): each
    /// sample's counters come back as recorded, the missing ones missing,
    /// and the replay's READ/s and WRITE/s are the bytes' rates.
    #[test]
    fn io_bytes_without_operation_counts_replay_with_their_rates() {
        use crate::cgroupfs::v1::{blkio_into, BlkioKind};
        use crate::model::tree::rates;
        let bytes = include_str!(
            "../../../tests/fixtures/v1/v1scan/blkio.throttle.io_service_bytes_recursive"
        );
        let mut first = IoStat::default();
        blkio_into(bytes, BlkioKind::Bytes, &mut first);
        let mut later = IoStat::default();
        blkio_into(
            &bytes.replace("Write 20971520", "Write 25165824"),
            BlkioKind::Bytes,
            &mut later,
        );
        // the second sample is written against the first, as a frame does
        let mut out = Vec::new();
        put_io(&mut out, None, Some(&first));
        put_io(&mut out, Some(&first), Some(&later));
        let mut i = Input::new(&out);
        let a = get_io(&mut i, None).unwrap();
        let b = get_io(&mut i, a.as_ref()).unwrap();
        assert_eq!((a.as_ref(), b.as_ref()), (Some(&first), Some(&later)));
        assert_eq!(b.as_ref().unwrap().total().rios, None);
        let sample = |io| {
            let mut g = GroupSample::new(p(b"a"), 1);
            g.hot.io = io;
            g
        };
        let r = rates::compute(&sample(a), &sample(b), Duration::from_secs(4));
        let io = r.io.expect("the bytes' rates");
        assert_eq!((io.rbps, io.wbps), (Some(0.0), Some(1_048_576.0)));
        assert_eq!((io.riops, io.wiops), (None, None));
    }

    #[test]
    fn events_round_trip_with_their_victim_and_odd_names() {
        let events = vec![
            Event {
                at: Duration::from_millis(1500),
                unix_s: 1_764_000_000.25,
                since: None,
                owner: None,
                path: p(b"a/b\x1b[31m\xff"),
                kind: EventKind::Memory {
                    what: MemoryEvent::OomKill,
                    count: 2,
                    victim: Some(Box::new(OomVictim {
                        task: b"py\nthon".to_vec(),
                        pid: 4242,
                        uid: Some(1000),
                        oom_memcg: Some(p(b"a")),
                        task_memcg: None,
                    })),
                },
            },
            Event {
                at: Duration::ZERO,
                unix_s: 0.0,
                since: None,
                owner: None,
                path: p(b"a"),
                kind: EventKind::Frozen(true),
            },
            Event {
                at: Duration::from_secs(3),
                unix_s: 1.0,
                since: None,
                owner: None,
                path: p(b"c"),
                kind: EventKind::Swap {
                    what: SwapEvent::Fail,
                    count: u64::MAX,
                },
            },
            Event {
                at: Duration::from_secs(4),
                unix_s: 2.0,
                since: None,
                owner: None,
                path: p(b"c"),
                kind: EventKind::PidsMax { count: 7 },
            },
        ];
        let mut out = Vec::new();
        put_events(&mut out, &events);
        let (records, err) = decode_all(&out);
        assert_eq!(err, None);
        assert_eq!(records, vec![Record::Events(events)]);
        // none: no record at all
        let mut none = Vec::new();
        put_events(&mut none, &[]);
        assert!(none.is_empty());
    }

    #[test]
    fn an_events_record_out_of_its_ranges_is_refused_not_trusted() {
        let mut out = Vec::new();
        put_events(
            &mut out,
            &[Event {
                at: Duration::ZERO,
                unix_s: 1.0,
                since: None,
                owner: None,
                path: p(b"a"),
                kind: EventKind::Populated(true),
            }],
        );
        let (tag, payload, _) = split_record(&out).unwrap().unwrap();
        // the populated flag (the payload's last byte) set to 2
        let mut bad = payload.to_vec();
        *bad.last_mut().unwrap() = 2;
        assert!(Decoder::new().record(tag, &bad).is_err());
        // an unknown kind
        let kind_at = bad.len() - 2;
        bad[kind_at] = 9;
        assert!(Decoder::new().record(tag, &bad).is_err());
        // a count over the cap
        let mut huge = Vec::new();
        put_u64(&mut huge, (MAX_EVENTS + 1) as u64);
        assert_eq!(
            Decoder::new().record(TAG_EVENTS, &huge),
            Err(DecodeError::TooLarge("events"))
        );
    }

    /// A sample's marks (`Marks`) out of their range, or in no order, are
    /// damage, not a mark read wrong.
    #[test]
    fn marks_out_of_their_ranges_are_refused() {
        let header = Header {
            host: HostInfo {
                ncpus: 1,
                ..HostInfo::default()
            },
            mount: MountInfo {
                root: "/".into(),
                mode: MountMode::Directory,
            },
            start: GroupPath::root(),
            interval: Duration::from_secs(1),
            start_unix: Duration::ZERO,
        };
        let mut g = GroupSample::new(GroupPath::root(), 1);
        g.hot.v1.sources.root_machine_tasks = true;
        let snapshot = Snapshot {
            at: Duration::ZERO,
            groups: vec![g, GroupSample::new(p(b"a"), 2)],
            cost: ScanCost::default(),
        };
        let mut out = Vec::new();
        let mut enc = Encoder::new();
        enc.start_frame(&header, &mut out);
        enc.sample(
            &SampleRef {
                snapshot: &snapshot,
                limits: &[],
                devices: &[],
                busy: &[],
            },
            &mut out,
        );
        let (_, h, n) = split_record(&out).unwrap().unwrap();
        let (tag, sample, _) = split_record(&out[n..]).unwrap().unwrap();
        let decode = |payload: &[u8]| {
            let mut d = Decoder::new();
            d.record(TAG_HEADER, h).unwrap();
            d.record(tag, payload)
        };
        let Ok(Record::Sample(s)) = decode(sample) else {
            panic!("the sample as written")
        };
        assert!(s.snapshot.groups[0].hot.v1.sources.root_machine_tasks);
        // the sample ends: 1 group's marks, group 0, the machine's tasks
        assert_eq!(sample[sample.len() - 4..], [1, 0, 0x80, 0x20]);
        let with = |tail: &[u8]| {
            let mut b = sample[..sample.len() - 4].to_vec();
            b.extend_from_slice(tail);
            b
        };
        for (tail, why) in [
            (&[1u8, 0, 0x80, 0x80, 0x04][..], "a bit no reader knows"),
            (&[1, 0, 3], "cpu's hierarchy neither v1 nor cgroup2"),
            (&[1, 2, 0], "a group the sample does not have"),
            (&[2, 1, 0, 0, 0], "groups out of order"),
            (&[3, 0, 0, 1, 0, 0, 0], "more marks than groups"),
            (&[1, 0, 0x80, 0x40, 7], "an uncounted disk cut short"),
        ] {
            assert!(decode(&with(tail)).is_err(), "{why}");
        }
        // none at all: a sample of an older recording
        let Ok(Record::Sample(old)) = decode(&sample[..sample.len() - 4]) else {
            panic!("a sample without marks")
        };
        assert_eq!(
            old.snapshot.groups[0].hot.v1,
            crate::model::tree::snapshot::V1Hot::default()
        );
    }
}
