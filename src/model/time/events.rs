//! PURE: events that outlive their group (issue 9, item 3). What the
//! kernel's event files say happened (`cgroup.events`, `memory.events`,
//! `memory.swap.events`, `pids.events`), as typed [`Event`]s made by
//! diffing two readings of a file ([`diff`]); the kernel's own OOM line
//! from `/dev/kmsg` ([`parse_record`], [`OomLine::parse`]) and the join
//! of an `oom_kill` count with it ([`join_oom`]); and the bounded list of
//! events a view keeps ([`EventList`]).
//!
//! Everything here comes from outside and is hostile: names are kept as
//! bytes (escaped for display by `model::tree::text`), every length is capped,
//! and no input makes a parser panic (a property test below).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::files;
use crate::model::account::Account;
use crate::model::GroupPath;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

/// The event files, in the order the watcher keeps watching them when it
/// runs short of inotify watches: `cgroup.events` and `memory.events`
/// first (populated, frozen, OOM), then the rarer two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventFile {
    Cgroup,
    Memory,
    Swap,
    Pids,
}

impl EventFile {
    pub const ALL: [Self; 4] = [Self::Cgroup, Self::Memory, Self::Swap, Self::Pids];

    /// The file's name in a group's directory.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cgroup => files::EVENTS,
            Self::Memory => files::MEMORY_EVENTS,
            Self::Swap => files::MEMORY_SWAP_EVENTS,
            Self::Pids => files::PIDS_EVENTS,
        }
    }

    /// The event file named `name`, if it is one.
    pub fn of_name(name: &[u8]) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name().as_bytes() == name)
    }
}

/// A `memory.events` counter (admin guide, "Memory Interface Files").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryEvent {
    /// Reclaimed while under memory.low (the protection was overcommitted).
    Low,
    /// Throttled and reclaimed over memory.high.
    High,
    /// Usage about to go over memory.max.
    Max,
    /// The OOM killer was invoked (it may not have killed anything).
    Oom,
    /// Processes killed by any OOM killer.
    OomKill,
    /// The whole group was killed (memory.oom.group).
    OomGroupKill,
}

impl MemoryEvent {
    const KEYS: [(&'static str, Self); 6] = [
        ("low", Self::Low),
        ("high", Self::High),
        ("max", Self::Max),
        ("oom", Self::Oom),
        ("oom_kill", Self::OomKill),
        ("oom_group_kill", Self::OomGroupKill),
    ];

    /// The key in memory.events.
    pub fn key(self) -> &'static str {
        key_of(&Self::KEYS, self)
    }

    /// The counter of a memory.events key.
    pub fn from_key(key: &str) -> Option<Self> {
        of_key(&Self::KEYS, key)
    }
}

/// The key of `v` in a file's table of keys.
fn key_of<T: Copy + Eq>(keys: &[(&'static str, T)], v: T) -> &'static str {
    keys.iter().find(|(_, e)| *e == v).map_or("", |(k, _)| k)
}

/// The value of `key` in a file's table of keys.
fn of_key<T: Copy>(keys: &[(&'static str, T)], key: &str) -> Option<T> {
    keys.iter().find(|(k, _)| *k == key).map(|(_, e)| *e)
}

/// A `memory.swap.events` counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapEvent {
    High,
    Max,
    /// A swap-out failed (the device is full or memory.swap.max is hit).
    Fail,
}

impl SwapEvent {
    const KEYS: [(&'static str, Self); 3] = [
        ("high", Self::High),
        ("max", Self::Max),
        ("fail", Self::Fail),
    ];

    /// The key in memory.swap.events.
    pub fn key(self) -> &'static str {
        key_of(&Self::KEYS, self)
    }

    /// The counter of a memory.swap.events key.
    pub fn from_key(key: &str) -> Option<Self> {
        of_key(&Self::KEYS, key)
    }
}

/// Who an OOM kill took, from the kernel's `oom-kill:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OomVictim {
    /// The task's name (comm) as the kernel printed it: bytes, at most
    /// [`TASK_CAP`]; escaped where shown.
    pub task: Vec<u8>,
    pub pid: u32,
    pub uid: Option<u32>,
    /// The group whose memory.max was hit, in the view's terms (`None`:
    /// a global OOM, or a group outside the view).
    pub oom_memcg: Option<GroupPath>,
    /// The victim's own group, in the view's terms.
    pub task_memcg: Option<GroupPath>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// cgroup.events `populated` changed: the group (or a descendant)
    /// has processes now, or has none left.
    Populated(bool),
    /// cgroup.events `frozen` changed.
    Frozen(bool),
    /// A memory.events counter went up by `count`. An `oom_kill` carries
    /// its victim when the kernel's line was read ([`join_oom`]).
    Memory {
        what: MemoryEvent,
        count: u64,
        victim: Option<Box<OomVictim>>,
    },
    /// A memory.swap.events counter went up by `count`.
    Swap { what: SwapEvent, count: u64 },
    /// pids.events `max`: a fork failed on pids.max, `count` times.
    PidsMax { count: u64 },
}

impl EventKind {
    /// The name JSON and `-b` give the kind: `populated`, `frozen`,
    /// `memory_oom_kill`, `swap_fail`, `pids_max`, ...
    pub fn name(&self) -> String {
        match self {
            Self::Populated(_) => "populated".into(),
            Self::Frozen(_) => "frozen".into(),
            Self::Memory { what, .. } => format!("memory_{}", what.key()),
            Self::Swap { what, .. } => format!("swap_{}", what.key()),
            Self::PidsMax { .. } => "pids_max".into(),
        }
    }

    /// The count of a counter event.
    pub fn count(&self) -> Option<u64> {
        match self {
            Self::Memory { count, .. } | Self::Swap { count, .. } | Self::PidsMax { count } => {
                Some(*count)
            }
            Self::Populated(_) | Self::Frozen(_) => None,
        }
    }

    /// An OOM kill (of a process or of the whole group).
    pub fn is_oom_kill(&self) -> bool {
        matches!(
            self,
            Self::Memory {
                what: MemoryEvent::OomKill | MemoryEvent::OomGroupKill,
                ..
            }
        )
    }
}

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// When it was seen, on the collector's clock (since cgtop started,
    /// as `Snapshot::at`).
    pub at: Duration,
    /// The same moment as UNIX time, in seconds.
    pub unix_s: f64,
    /// When it may have happened from, on the same clock, where that is
    /// not within moments of `at`: a change the watcher found in its
    /// first reading of a file, against what the collector read at the
    /// start (its watch was set after: "between `since` and `at`").
    /// `None`: seen as it happened (the watch was on).
    pub since: Option<Duration>,
    pub path: GroupPath,
    pub kind: EventKind,
    /// Whose account the group is: the account its directory's owner
    /// (the uid who may make groups in it, as the watcher found when it
    /// began watching the group) counts as, a user's subordinate uid as
    /// that user, every uid no account names as one ([`Account`]); what
    /// [`EventList`] is fair by, so that a user's groups owned by many of
    /// its subordinate uids are one source. `None`: not known (an event
    /// read back from a recording, which keeps no owner).
    pub owner: Option<Account>,
}

/// The keys of each event file the diff looks at, in the kernel's order.
fn keys(file: EventFile) -> &'static [&'static str] {
    match file {
        EventFile::Cgroup => &["populated", "frozen"],
        EventFile::Memory => &["low", "high", "max", "oom", "oom_kill", "oom_group_kill"],
        EventFile::Swap => &["high", "max", "fail"],
        EventFile::Pids => &["max"],
    }
}

/// A reading of an event file: the values of its known keys (at most 6),
/// without an allocation, so that a watcher of 10,000 groups keeps about
/// 60 bytes a file. A key the file lacks is absent; a key repeated keeps
/// its first value (as `cgroupfs::flat_keyed`'s readers do).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    present: u8,
    vals: [u64; 6],
}

impl Reading {
    /// The known keys of `file` in `text`; other lines are skipped.
    pub fn parse(file: EventFile, text: &str) -> Self {
        let mut r = Self::default();
        let ks = keys(file);
        for (k, v) in crate::cgroupfs::flat_keyed(text) {
            if let Some(i) = ks.iter().position(|x| *x == k) {
                if r.present & (1 << i) == 0 {
                    r.present |= 1 << i;
                    r.vals[i] = v;
                }
            }
        }
        r
    }

    fn get(&self, i: usize) -> Option<u64> {
        (self.present & (1 << i) != 0).then(|| self.vals[i])
    }

    /// No known key at all (an empty or torn read: not a reading).
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// The same keys at 0: what a group made after watching began is
    /// diffed against (a new group's counters start there, and it is
    /// neither populated nor frozen until told so).
    #[must_use]
    pub fn zeroed(&self) -> Self {
        Self {
            present: self.present,
            vals: [0; 6],
        }
    }

    /// This reading, with the keys it lacks taken from `prev` (a partial
    /// read must not lose a baseline).
    #[must_use]
    pub fn over(&self, prev: &Self) -> Self {
        let mut r = *self;
        for i in 0..6 {
            if r.present & (1 << i) == 0 && prev.present & (1 << i) != 0 {
                r.present |= 1 << i;
                r.vals[i] = prev.vals[i];
            }
        }
        r
    }
}

/// The events between two readings of `file` of one group. `prev` is
/// `None` for the first reading of a group that was there when watching
/// began (it is the baseline: nothing is known to have happened); a
/// group made since is diffed against [`Reading::zeroed`].
///
/// A counter that went up by n is one event with count n; a counter
/// that went backwards means the group was made again under its name
/// (a new group starts at 0): no event from that reading, which becomes
/// the new baseline. A key missing from either reading is no event.
pub fn diff(file: EventFile, prev: Option<&Reading>, cur: &Reading) -> Vec<EventKind> {
    let Some(prev) = prev else {
        return Vec::new();
    };
    let n = keys(file).len();
    let pairs: Vec<Option<(u64, u64)>> =
        (0..n).map(|i| Some((prev.get(i)?, cur.get(i)?))).collect();
    if file == EventFile::Cgroup {
        let mut out = Vec::new();
        for (i, make) in [
            EventKind::Populated as fn(bool) -> EventKind,
            EventKind::Frozen,
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(Some((a, b))) = pairs.get(i) {
                if (*a != 0) != (*b != 0) {
                    out.push(make(*b != 0));
                }
            }
        }
        return out;
    }
    if pairs.iter().flatten().any(|(a, b)| b < a) {
        return Vec::new();
    }
    let up = |i: usize| -> Option<u64> {
        let (a, b) = pairs.get(i).copied().flatten()?;
        (b > a).then(|| b - a)
    };
    match file {
        EventFile::Cgroup => Vec::new(),
        EventFile::Memory => MemoryEvent::KEYS
            .iter()
            .enumerate()
            .filter_map(|(i, (_, what))| {
                up(i).map(|count| EventKind::Memory {
                    what: *what,
                    count,
                    victim: None,
                })
            })
            .collect(),
        EventFile::Swap => SwapEvent::KEYS
            .iter()
            .enumerate()
            .filter_map(|(i, (_, what))| up(i).map(|count| EventKind::Swap { what: *what, count }))
            .collect(),
        EventFile::Pids => up(0)
            .map(|count| EventKind::PidsMax { count })
            .into_iter()
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// /dev/kmsg

/// The most bytes of a task name kept (the kernel's comm is 16 with its
/// NUL; a longer one is not the kernel's).
pub const TASK_CAP: usize = 64;
/// The most bytes of a path from a kmsg line kept (PATH_MAX).
pub const PATH_CAP: usize = 4096;
/// The most bytes of a kmsg record looked at (the kernel's records are
/// at most 8 KiB, the reader's buffer).
pub const RECORD_CAP: usize = 8192;

/// One /dev/kmsg record: "PRI,SEQ,TS_USEC,FLAG[,...];MESSAGE\n" and
/// optional " KEY=VALUE\n" continuation lines (Documentation/ABI/testing/
/// dev-kmsg).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KmsgRecord {
    /// The syslog facility (PRI >> 3): 0 is the kernel's own. A record
    /// written to /dev/kmsg from user space never has 0 (the kernel makes
    /// it LOG_USER), so an OOM line is believed only from facility 0.
    pub facility: u32,
    pub seq: u64,
    /// Microseconds since boot (CLOCK_MONOTONIC).
    pub ts_usec: u64,
    /// The message's first line, as the kernel wrote it (non-printable
    /// bytes already `\xHH` by the kernel; escaped again where shown).
    pub message: Vec<u8>,
}

/// Parses one record; `None` when it is not one (no `;`, bad numbers).
pub fn parse_record(bytes: &[u8]) -> Option<KmsgRecord> {
    let bytes = &bytes[..bytes.len().min(RECORD_CAP)];
    let semi = bytes.iter().position(|&b| b == b';')?;
    let head = std::str::from_utf8(&bytes[..semi]).ok()?;
    let mut fields = head.split(',');
    let pri: u32 = fields.next()?.parse().ok()?;
    let seq = fields.next()?.parse().ok()?;
    let ts_usec = fields.next()?.parse().ok()?;
    let rest = &bytes[semi + 1..];
    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    Some(KmsgRecord {
        facility: pri >> 3,
        seq,
        ts_usec,
        message: rest[..end].to_vec(),
    })
}

/// The kernel's `oom-kill:` summary line (mm/oom_kill.c,
/// dump_oom_summary), paths relative to the memory controller's
/// hierarchy (cgroup2, or v1's memory hierarchy), its fields always in
/// this order:
/// `oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/c,
/// mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=NAME,pid=N,uid=U`
/// (`global_oom` in place of `oom_memcg=` for a machine-wide OOM; no
/// `cpuset=...,mems_allowed=...` without the cpuset controller built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OomLine {
    pub constraint: Vec<u8>,
    /// `None` for a global OOM, or where the line cannot tell it.
    pub oom_memcg: Option<Vec<u8>>,
    /// `None` where the line cannot tell it: group names hold the very
    /// text that separates the fields, and more than one reading of the
    /// line fits the kernel's layout.
    pub task_memcg: Option<Vec<u8>>,
    pub task: Vec<u8>,
    pub pid: u32,
    pub uid: Option<u32>,
}

/// The longest task name (comm) the kernel prints: TASK_COMM_LEN (16)
/// less its NUL.
const COMM_MAX: usize = 15;

fn cap(b: &[u8], n: usize) -> Vec<u8> {
    b[..b.len().min(n)].to_vec()
}

/// The last occurrence of `pat` in `hay`.
fn rfind(hay: &[u8], pat: &[u8]) -> Option<usize> {
    hay.windows(pat.len()).rposition(|w| w == pat)
}

fn find(hay: &[u8], pat: &[u8]) -> Option<usize> {
    hay.windows(pat.len()).position(|w| w == pat)
}

/// Every occurrence of `pat` in `hay`.
fn find_all<'a>(hay: &'a [u8], pat: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    hay.windows(pat.len())
        .enumerate()
        .filter(move |(_, w)| *w == pat)
        .map(|(i, _)| i)
}

fn number<T: std::str::FromStr>(b: &[u8]) -> Option<T> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Whether `text` ends with one of the kernel's node-list fields before
/// the memcg part: `,mems_allowed=LIST` (`%*pbl`: digits, `,` and `-`)
/// or, without the cpuset controller, `,nodemask=(null)` or `=LIST`.
fn ends_with_node_field(text: &[u8]) -> bool {
    let is_list = |v: &[u8]| {
        v.iter()
            .all(|b| b.is_ascii_digit() || *b == b',' || *b == b'-')
    };
    let field = |key: &[u8]| {
        // the last `,key=` whose value is a list: a list holds no `=`,
        // so an earlier one's value would hold this one
        rfind(text, key).is_some_and(|i| {
            let v = &text[i + key.len()..];
            is_list(v) || (key == b",nodemask=" && v == b"(null)")
        })
    };
    field(b",mems_allowed=") || field(b",nodemask=")
}

/// Whether group path `inner` is `outer` or below it (bytes, as printed).
fn path_within(inner: &[u8], outer: &[u8]) -> bool {
    outer == b"/" && inner.first() == Some(&b'/')
        || inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|r| r.first() == Some(&b'/'))
}

/// The readings of `head` (the line up to `,task=`) that fit the
/// kernel's layout: `...,NODE-FIELD,oom_memcg=A,task_memcg=B` with B
/// within A (a memcg OOM picks its victim below the group that hit its
/// limit), or `...,NODE-FIELD,global_oom,task_memcg=B`.
fn memcg_readings(head: &[u8]) -> Vec<(Option<&[u8]>, &[u8])> {
    let mut out = Vec::new();
    for j in find_all(head, b",task_memcg=") {
        let (pre, b) = (&head[..j], &head[j + 12..]);
        if let Some(before) = pre.strip_suffix(b",global_oom") {
            if ends_with_node_field(before) {
                out.push((None, b));
            }
        }
        for k in find_all(pre, b",oom_memcg=") {
            let a = &pre[k + 11..];
            if ends_with_node_field(&pre[..k]) && path_within(b, a) {
                out.push((Some(a), b));
            }
        }
    }
    out
}

impl OomLine {
    /// Parses the message of a kmsg record by the kernel's layout: the
    /// fields come in a fixed order and only the paths and the task name
    /// are anyone's text (they may hold `,task_memcg=` or any other
    /// field's name). The numbers (`uid`, `pid`) parse from the end; the
    /// task name is what follows the one `,task=` that leaves at most
    /// [`COMM_MAX`] bytes; the paths are split where the line fits the
    /// layout (see `memcg_readings`). Where more than one reading fits,
    /// the group (or the task) is unknown, never a guess.
    pub fn parse(message: &[u8]) -> Option<Self> {
        let body = message.strip_prefix(b"oom-kill:")?;
        let body = &body[..body.len().min(RECORD_CAP)];
        let (body, uid) = match rfind(body, b",uid=") {
            Some(i) => (&body[..i], Some(number(&body[i + 5..])?)),
            None => (body, None),
        };
        let i = rfind(body, b",pid=")?;
        let pid = number(&body[i + 5..])?;
        let body = &body[..i];
        let constraint = body
            .strip_prefix(b"constraint=")
            .map(|c| cap(&c[..find(c, b",").unwrap_or(c.len())], 64))
            .unwrap_or_default();
        let tasks: Vec<usize> = find_all(body, b",task=")
            .filter(|&t| body.len() - (t + 6) <= COMM_MAX)
            .collect();
        let (oom_memcg, task_memcg, task) = match tasks.as_slice() {
            [] => return None,
            [t] => {
                let readings = memcg_readings(&body[..*t]);
                let task = cap(&body[t + 6..], TASK_CAP);
                let Some(&(a, b)) = readings.first() else {
                    return Some(Self::unknown(constraint, task, pid, uid));
                };
                let one_b = readings.iter().all(|r| r.1 == b);
                let one_a = readings.iter().all(|r| r.0 == a);
                (
                    a.filter(|_| one_a && one_b).map(|a| cap(a, PATH_CAP)),
                    one_b.then(|| cap(b, PATH_CAP)),
                    task,
                )
            }
            // the task name or the victim's path holds `,task=`: which
            // is which cannot be told
            _ => return Some(Self::unknown(constraint, Vec::new(), pid, uid)),
        };
        Some(Self {
            constraint,
            oom_memcg,
            task_memcg,
            task,
            pid,
            uid,
        })
    }

    /// A line whose groups cannot be told.
    fn unknown(constraint: Vec<u8>, task: Vec<u8>, pid: u32, uid: Option<u32>) -> Self {
        Self {
            constraint,
            oom_memcg: None,
            task_memcg: None,
            task,
            pid,
            uid,
        }
    }
}

/// "Memory cgroup out of memory: Killed process N (NAME) total-vm:..."
/// (or "Out of memory: Killed process ..."): the pid and name.
pub fn parse_killed(message: &[u8]) -> Option<(u32, Vec<u8>)> {
    let i = find(message, b"Killed process ")?;
    let rest = &message[i + 15..];
    let sp = rest.iter().position(|&b| b == b' ')?;
    let pid = number(&rest[..sp])?;
    let rest = rest[sp + 1..].strip_prefix(b"(")?;
    // the name may hold ") (": the kernel's text after it is
    // ") total-vm:" (older: ", UID")
    let end = find(rest, b") total-vm:")
        .or_else(|| rfind(rest, b")"))
        .unwrap_or(rest.len());
    Some((pid, cap(&rest[..end], TASK_CAP)))
}

/// How kmsg's paths (from the cgroup2 filesystem's root) become the
/// view's: the mount's root within the filesystem and the view's path
/// below the mount point (`guard::view_mapping`); `None` maps nothing.
pub type Mapping = Option<(GroupPath, GroupPath)>;

/// A kmsg path in the view's terms.
pub fn map_path(raw: &[u8], mapping: &Mapping) -> Option<GroupPath> {
    let (fs_root, view_rel) = mapping.as_ref()?;
    let text = std::str::from_utf8(raw).ok()?;
    crate::model::write::guard::map_to_view(text, fs_root, view_rel)
}

impl OomLine {
    /// The victim, with its paths in the view's terms.
    pub fn victim(&self, mapping: &Mapping) -> OomVictim {
        OomVictim {
            task: self.task.clone(),
            pid: self.pid,
            uid: self.uid,
            oom_memcg: self.oom_memcg.as_deref().and_then(|p| map_path(p, mapping)),
            task_memcg: self
                .task_memcg
                .as_deref()
                .and_then(|p| map_path(p, mapping)),
        }
    }
}

/// Gives an `oom_kill` event of a group its victim, when the line's
/// victim was in that group or below it (memory.events counts a
/// descendant's kills too). Returns whether it joined.
pub fn join_oom(ev: &mut Event, line: &OomLine, mapping: &Mapping) -> bool {
    let EventKind::Memory {
        what: MemoryEvent::OomKill,
        victim,
        ..
    } = &mut ev.kind
    else {
        return false;
    };
    if victim.is_some() {
        return false;
    }
    let v = line.victim(mapping);
    if !v.task_memcg.as_ref().is_some_and(|t| t.is_within(&ev.path)) {
        return false;
    }
    *victim = Some(Box::new(v));
    true
}

/// What a counter event counts, for [`attribute_echoes`]: its file and
/// key (`None`: a change of state, which is the group's own).
fn counter_key(kind: &EventKind) -> Option<(u8, &'static str)> {
    match kind {
        EventKind::Memory { what, .. } => Some((EventFile::Memory as u8, what.key())),
        EventKind::Swap { what, .. } => Some((EventFile::Swap as u8, what.key())),
        EventKind::PidsMax { .. } => Some((EventFile::Pids as u8, "max")),
        EventKind::Populated(_) | EventKind::Frozen(_) => None,
    }
}

/// A group on [`attribute_echoes`]' walk's path (its events of the
/// counter), with the sources below it: each owner's first.
struct Open {
    at: Vec<usize>,
    sources: HashMap<Source, usize>,
}

/// Gives the echoes in one watcher batch the owner of what they echo.
/// memory.events and memory.swap.events count hierarchically (admin
/// guide, "memory.events": "all fields in this file are hierarchical";
/// pids.events on newer kernels): one memory.high hit in a user's group raises `high`
/// in the group and in each ancestor, and the watcher, reading each
/// file that changed, makes one event for each, owned by its own group's
/// owner; above a delegation those are root's, so a user's flood would
/// grow root's source in [`EventList`] as fast as the user's. An
/// ancestor's counter event is an echo when the same batch has an event
/// of the same counter below it; its sources are those of these events
/// that are no echo themselves (the deepest). The echo keeps its own
/// group's owner if one of its sources is that owner's, else takes the
/// owner of its first source in the batch. An ancestor's own hit in
/// the same batch as a descendant's echoes it too (the counters tell
/// no more; memory.events.local would, at a read for each): it goes with
/// the descendant's owner, whose use it was made by above a
/// delegation. The kernel notifies a file at most every 10 ms, the
/// group's and its ancestors' together: a batch of the watcher (what one
/// [`crate::source::events`] wake read) has both. O(n log n) path
/// compares (a memcmp each) for n events, no walk up each one's
/// ancestors: each counter's events in the order of a walk of the tree,
/// a group's sources gathered up from its children's.
pub fn attribute_echoes(batch: &mut [Event]) {
    // by counter, then component by component (the path's bytes with
    // `/` as 0, which no name holds: one memcmp): a group's subtree
    // follows it
    let mut order: Vec<((u8, &'static str), Vec<u8>, usize)> = batch
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let tree = e
                .path
                .as_bytes()
                .iter()
                .map(|&b| if b == b'/' { 0 } else { b });
            counter_key(&e.kind).map(|k| (k, tree.collect(), i))
        })
        .collect();
    order.sort_unstable();
    let order = order.into_iter().map(|(k, _, i)| (k, i));
    let mut owners = Vec::new();
    // closes the top of the walk's path, giving its sources to its parent
    let close = |stack: &mut Vec<Open>, owners: &mut Vec<(usize, Source)>| {
        let Some(Open { at, mut sources }) = stack.pop() else {
            return;
        };
        if sources.is_empty() {
            for &i in &at {
                let first = sources.entry(batch[i].owner).or_insert(i);
                *first = (*first).min(i);
            }
        } else if let Some((&o, _)) = sources.iter().min_by_key(|(_, &j)| j) {
            for i in at {
                if !sources.contains_key(&batch[i].owner) {
                    owners.push((i, o));
                }
            }
        }
        if let Some(parent) = stack.last_mut() {
            if parent.sources.len() < sources.len() {
                std::mem::swap(&mut parent.sources, &mut sources);
            }
            for (o, j) in sources {
                let first = parent.sources.entry(o).or_insert(j);
                *first = (*first).min(j);
            }
        }
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut key = None;
    for (k, i) in order {
        let path = &batch[i].path;
        while let Some(top) = stack.last_mut() {
            let top_path = &batch[top.at[0]].path;
            if key == Some(k) && path == top_path {
                top.at.push(i);
                break;
            }
            if key == Some(k) && path.is_within(top_path) {
                stack.push(Open {
                    at: vec![i],
                    sources: HashMap::new(),
                });
                break;
            }
            close(&mut stack, &mut owners);
        }
        if stack.is_empty() {
            stack.push(Open {
                at: vec![i],
                sources: HashMap::new(),
            });
        }
        key = Some(k);
    }
    while !stack.is_empty() {
        close(&mut stack, &mut owners);
    }
    for (i, owner) in owners {
        batch[i].owner = owner;
    }
}

// ---------------------------------------------------------------------------
// The list a view keeps.

/// Whose an event is, for the list's fairness ([`Event::owner`]).
type Source = Option<Account>;

/// What an event is worth keeping, by the order a source gives them up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Worth {
    /// `populated` and `frozen`: free to make by the thousand (a process
    /// moving between two of its owner's groups).
    State,
    /// A limit hit, an OOM, a refused fork.
    Counter,
    /// An OOM kill: its victim's name and pid outlive the group.
    Kill,
}

impl Worth {
    fn of(kind: &EventKind) -> Self {
        match kind {
            EventKind::Populated(_) | EventKind::Frozen(_) => Self::State,
            k if k.is_oom_kill() => Self::Kill,
            _ => Self::Counter,
        }
    }
}

/// One source's kept events, by their number in the list, oldest first.
#[derive(Debug, Clone, Default)]
struct Held {
    state: VecDeque<u64>,
    counters: VecDeque<u64>,
    kills: VecDeque<u64>,
}

impl Held {
    fn queue(&mut self, w: Worth) -> &mut VecDeque<u64> {
        match w {
            Worth::State => &mut self.state,
            Worth::Counter => &mut self.counters,
            Worth::Kill => &mut self.kills,
        }
    }

    /// Every event it holds: what the source is ranked by.
    fn total(&self) -> usize {
        self.state.len() + self.counters.len() + self.kills.len()
    }

    /// Its oldest `populated` or `frozen` change, else its oldest other
    /// event but an OOM kill; an OOM kill only if `kill`.
    fn cheapest(&mut self, kill: bool) -> Option<u64> {
        self.state
            .pop_front()
            .or_else(|| self.counters.pop_front())
            .or_else(|| if kill { self.kills.pop_front() } else { None })
    }
}

/// The events a view keeps: [`EventList::CAP`] of them, with how many are
/// unseen. At the cap one is dropped (and counted), from the source (the
/// account owning the event's group, [`Event::owner`]) that holds the most
/// events of any kind (ties: the higher owner), its cheapest: its oldest
/// `populated` or `frozen` change, else its oldest limit hit (any other
/// counter), else its oldest OOM kill. Another owner's OOM kill is never
/// dropped for a lesser event: when the biggest source holds only OOM
/// kills and the event that came is neither its own nor an OOM kill,
/// the newcomer's source gives up its cheapest (the kills stay; an OOM
/// kill that comes takes the biggest source's oldest kill's place). So an
/// event is only ever dropped from the biggest source or from the
/// source of the event that came. A user who owns a delegated subtree
/// makes events by the thousand for free (a process of theirs moving
/// between two of their groups, a tiny memory.high, pids.max 1 and a
/// fork loop, a tiny memory.max and a loop that allocates: OOM kills):
/// the flood grows until it is the biggest source, and from then on
/// replaces only its own events, its own OOM kills included, never
/// another owner's. (The echoes of a flood in the hierarchical counters
/// of ancestors above the delegation are the flood's too:
/// [`attribute_echoes`].) Each push is O(log sources): per source
/// queues, the list's dropped places compacted away once they are an
/// eighth of the cap.
#[derive(Debug, Clone)]
pub struct EventList {
    /// Oldest first, each with its number (increasing); `None`: dropped,
    /// its place not yet compacted away.
    slots: VecDeque<(u64, Option<Event>)>,
    /// The next event's number.
    next: u64,
    /// The events kept (the places that are not `None`).
    kept: usize,
    held: HashMap<Source, Held>,
    /// The sources by how many events each holds.
    by_total: BTreeSet<(usize, Source)>,
    cap: usize,
    /// Events dropped to stay within the cap.
    pub dropped: u64,
    /// Events that came since the list was last looked at.
    pub unseen: usize,
}

impl Default for EventList {
    fn default() -> Self {
        Self::with_cap(Self::CAP)
    }
}

/// Two lists are equal when they keep the same events, whatever places
/// they have not compacted yet.
impl PartialEq for EventList {
    fn eq(&self, other: &Self) -> bool {
        self.dropped == other.dropped && self.unseen == other.unseen && self.iter().eq(other.iter())
    }
}

impl EventList {
    /// How many events are kept: about 2 MB at the most.
    pub const CAP: usize = 10_000;

    fn with_cap(cap: usize) -> Self {
        Self {
            slots: VecDeque::new(),
            next: 0,
            kept: 0,
            held: HashMap::new(),
            by_total: BTreeSet::new(),
            cap,
            dropped: 0,
            unseen: 0,
        }
    }

    pub fn push(&mut self, e: Event) {
        let (source, worth) = (e.owner, Worth::of(&e.kind));
        let n = self.next;
        self.next += 1;
        self.slots.push_back((n, Some(e)));
        self.kept += 1;
        let h = self.held.entry(source).or_default();
        let before = h.total();
        h.queue(worth).push_back(n);
        self.by_total.remove(&(before, source));
        self.by_total.insert((before + 1, source));
        if self.kept > self.cap {
            self.drop_one(source, worth == Worth::Kill);
            self.dropped += 1;
        }
        self.unseen = (self.unseen + 1).min(self.cap);
    }

    /// Drops the event the rule above picks, `source`'s event (a kill if
    /// `kill`) having come.
    fn drop_one(&mut self, source: Source, kill: bool) {
        let Some(&(_, biggest)) = self.by_total.last() else {
            return;
        };
        let Some(h) = self.held.get(&biggest) else {
            return;
        };
        // the biggest gives up a kill only for its own event or a kill
        let only_kills = h.state.is_empty() && h.counters.is_empty();
        let from = if only_kills && biggest != source && !kill {
            source
        } else {
            biggest
        };
        let Some(h) = self.held.get_mut(&from) else {
            return;
        };
        let count = h.total();
        let Some(n) = h.cheapest(from == biggest) else {
            return;
        };
        self.by_total.remove(&(count, from));
        if count > 1 {
            self.by_total.insert((count - 1, from));
        } else {
            self.held.remove(&from);
        }
        if let Ok(i) = self.slots.binary_search_by_key(&n, |(k, _)| *k) {
            if self.slots[i].1.take().is_some() {
                self.kept -= 1;
            }
        }
        while matches!(self.slots.front(), Some((_, None))) {
            self.slots.pop_front();
        }
        // a place is compacted away at most once: O(1) a push, amortised
        if self.slots.len() - self.kept > self.cap / 8 {
            self.slots.retain(|(_, e)| e.is_some());
        }
    }

    pub fn len(&self) -> usize {
        self.kept
    }

    pub fn is_empty(&self) -> bool {
        self.kept == 0
    }

    /// The `i`th event, oldest first (a walk over the list where events
    /// were dropped from within it and not compacted yet).
    pub fn get(&self, i: usize) -> Option<&Event> {
        if self.slots.len() == self.kept {
            self.slots.get(i).and_then(|(_, e)| e.as_ref())
        } else {
            self.iter().nth(i)
        }
    }

    /// Oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Event> + ExactSizeIterator {
        Kept {
            slots: self.slots.iter(),
            left: self.kept,
        }
    }

    pub fn mark_seen(&mut self) {
        self.unseen = 0;
    }

    /// Forgets every event (how many were dropped stays counted).
    pub fn clear(&mut self) {
        *self = Self {
            dropped: self.dropped,
            ..Self::with_cap(self.cap)
        };
    }

    /// Whether `path` had an event at or after `since`.
    pub fn recent(&self, path: &GroupPath, since: Duration) -> bool {
        self.iter()
            .rev()
            .take_while(|e| e.at >= since)
            .any(|e| &e.path == path)
    }
}

/// The kept events of a list, in order.
struct Kept<'a> {
    slots: std::collections::vec_deque::Iter<'a, (u64, Option<Event>)>,
    left: usize,
}

impl<'a> Iterator for Kept<'a> {
    type Item = &'a Event;

    fn next(&mut self) -> Option<&'a Event> {
        let e = self.slots.find_map(|(_, e)| e.as_ref())?;
        self.left -= 1;
        Some(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Kept<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let e = self.slots.by_ref().rev().find_map(|(_, e)| e.as_ref())?;
        self.left -= 1;
        Some(e)
    }
}

impl ExactSizeIterator for Kept<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Reading {
        // the file of a text by its keys, as the tests give them
        let file = if s.starts_with("populated") {
            EventFile::Cgroup
        } else if s.contains("fail") {
            EventFile::Swap
        } else if s.starts_with("max") {
            EventFile::Pids
        } else {
            EventFile::Memory
        };
        Reading::parse(file, s)
    }

    // memory.events of a docker scope and of systemd's system.slice
    // (tests/fixtures/kernel-texts/third-party/captures.json)
    const DOCKER: &str = "low 10\nhigh 3\nmax 2\noom 1\noom_kill 1\n";
    const SYSTEMD: &str = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n";

    #[test]
    fn a_counter_that_went_up_is_one_event_with_the_difference() {
        let later = "low 10\nhigh 3\nmax 5\noom 2\noom_kill 3\n";
        let ev = diff(EventFile::Memory, Some(&k(DOCKER)), &k(later));
        assert_eq!(
            ev,
            [
                EventKind::Memory {
                    what: MemoryEvent::Max,
                    count: 3,
                    victim: None
                },
                EventKind::Memory {
                    what: MemoryEvent::Oom,
                    count: 1,
                    victim: None
                },
                EventKind::Memory {
                    what: MemoryEvent::OomKill,
                    count: 2,
                    victim: None
                },
            ]
        );
        assert_eq!(ev[2].name(), "memory_oom_kill");
    }

    #[test]
    fn a_counter_that_went_back_is_a_new_group_and_no_event() {
        assert!(diff(EventFile::Memory, Some(&k(DOCKER)), &k(SYSTEMD)).is_empty());
        // the first reading of a group already there is a baseline
        assert!(diff(EventFile::Memory, None, &k(DOCKER)).is_empty());
        // a group made since is diffed against zeros
        let z = k(DOCKER).zeroed();
        assert_eq!(diff(EventFile::Memory, Some(&z), &k(DOCKER)).len(), 5);
        // a torn read keeps the keys it lacks from the one before
        let torn = k("oom_kill 2\n").over(&k(DOCKER));
        assert_eq!(
            diff(EventFile::Memory, Some(&k(DOCKER)), &torn),
            [EventKind::Memory {
                what: MemoryEvent::OomKill,
                count: 1,
                victim: None
            }]
        );
        assert!(Reading::parse(EventFile::Memory, "").is_empty());
    }

    #[test]
    fn cgroup_events_are_changes_of_state() {
        let a = k("populated 1\nfrozen 0\n");
        let b = k("populated 1\nfrozen 1\n");
        let c = k("populated 0\nfrozen 0\n");
        assert_eq!(
            diff(EventFile::Cgroup, Some(&a), &b),
            [EventKind::Frozen(true)]
        );
        assert_eq!(
            diff(EventFile::Cgroup, Some(&b), &c),
            [EventKind::Populated(false), EventKind::Frozen(false)]
        );
        assert!(diff(EventFile::Cgroup, Some(&a), &a).is_empty());
    }

    #[test]
    fn swap_and_pids() {
        let s0 = k("high 0\nmax 0\nfail 0\n");
        let s1 = k("high 4\nmax 5\nfail 1\n");
        let ev = diff(EventFile::Swap, Some(&s0), &s1);
        assert_eq!(ev.len(), 3);
        assert_eq!(
            ev[2],
            EventKind::Swap {
                what: SwapEvent::Fail,
                count: 1
            }
        );
        assert_eq!(
            diff(EventFile::Pids, Some(&k("max 0\n")), &k("max 7\n")),
            [EventKind::PidsMax { count: 7 }]
        );
        assert_eq!(EventFile::of_name(b"pids.events"), Some(EventFile::Pids));
        assert_eq!(EventFile::of_name(b"memory.events.local"), None);
    }

    const OOM: &[u8] = b"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/cgtop-test-1-0,task_memcg=/cgtop-test-1-0/leaf,task=python3,pid=4242,uid=1000";

    #[test]
    fn a_kmsg_record_and_the_oom_line() {
        let rec = b"3,1234,5678901,-;"
            .iter()
            .chain(OOM)
            .copied()
            .collect::<Vec<u8>>();
        let r = parse_record(&rec).unwrap();
        assert_eq!((r.facility, r.seq, r.ts_usec), (0, 1234, 5_678_901));
        // what user space writes to /dev/kmsg is LOG_USER (PRI 14 = 1 << 3 | 6)
        assert_eq!(parse_record(b"14,9,10,-;oom-kill:x").unwrap().facility, 1);
        let l = OomLine::parse(&r.message).unwrap();
        assert_eq!(l.constraint, b"CONSTRAINT_MEMCG");
        assert_eq!(l.oom_memcg.as_deref(), Some(&b"/cgtop-test-1-0"[..]));
        assert_eq!(l.task_memcg.as_deref(), Some(&b"/cgtop-test-1-0/leaf"[..]));
        assert_eq!(
            (l.task.as_slice(), l.pid, l.uid),
            (&b"python3"[..], 4242, Some(1000))
        );
        // continuation lines are not the message
        let r = parse_record(b"6,9,10,c;hello\n SUBSYSTEM=x\n").unwrap();
        assert_eq!(r.message, b"hello");
        assert_eq!(parse_record(b"no header"), None);
        assert_eq!(parse_record(b"x,1,2,-;m"), None);
    }

    #[test]
    fn values_with_commas_and_a_global_oom() {
        let l = OomLine::parse(b"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,b,task_memcg=/a,b/c,d,task=x,pid=1,y,pid=77,uid=0").unwrap();
        assert_eq!(l.oom_memcg.as_deref(), Some(&b"/a,b"[..]));
        assert_eq!(l.task_memcg.as_deref(), Some(&b"/a,b/c,d"[..]));
        assert_eq!((l.task.as_slice(), l.pid), (&b"x,pid=1,y"[..], 77));
        let g = OomLine::parse(b"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=stress,pid=9,uid=0").unwrap();
        assert_eq!(g.oom_memcg, None);
        assert_eq!(g.task_memcg.as_deref(), Some(&b"/user.slice"[..]));
        assert_eq!(OomLine::parse(b"oom-kill:garbage"), None);
        assert_eq!(OomLine::parse(b"Out of memory"), None);
    }

    /// A line as dump_oom_summary prints it.
    fn kernel_line(cpuset: &str, oom: Option<&str>, victim: &str, task: &str) -> String {
        let memcg = oom.map_or("global_oom".to_owned(), |a| format!("oom_memcg={a}"));
        format!("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset={cpuset},mems_allowed=0-1,{memcg},task_memcg={victim},task={task},pid=4242,uid=65534")
    }

    #[test]
    fn a_delegated_name_cannot_point_the_victim_at_a_sibling() {
        // the limit is on /t; a user owning /t/deleg names a group so that
        // the text after its `,task_memcg=` is root's sibling /t/victim
        let victim = "/t/deleg/x,task_memcg=/t/victim";
        let l = OomLine::parse(kernel_line("/", Some("/t"), victim, "python3").as_bytes()).unwrap();
        assert_eq!(l.oom_memcg.as_deref(), Some(&b"/t"[..]));
        assert_eq!(l.task_memcg.as_deref(), Some(victim.as_bytes()));
    }

    #[test]
    fn a_field_name_inside_a_path_does_not_move_the_victims_group() {
        // the user's group is named so that the text after its last
        // `,task_memcg=` is root's session scope
        let evil = "/user.slice/u/x,task_memcg=/user.slice/user-0.slice/session-1.scope";
        let l = OomLine::parse(kernel_line("/", Some(evil), evil, "python3").as_bytes()).unwrap();
        assert_eq!(l.task_memcg.as_deref(), Some(evil.as_bytes()));
        assert_eq!(l.oom_memcg.as_deref(), Some(evil.as_bytes()));
        assert_eq!(
            (l.task.as_slice(), l.pid, l.uid),
            (&b"python3"[..], 4242, Some(65534))
        );
        // below it, with the other fields' names in the paths and the cpuset
        let child = format!("{evil}/y,oom_memcg=/,global_oom,task=a,pid=123456789");
        let cpuset = "/c,mems_allowed=0,oom_memcg=/x,global_oom";
        let l = OomLine::parse(kernel_line(cpuset, Some(evil), &child, "sh").as_bytes()).unwrap();
        assert_eq!(l.task_memcg.as_deref(), Some(child.as_bytes()));
        assert_eq!(l.oom_memcg.as_deref(), Some(evil.as_bytes()));
        assert_eq!(l.task, b"sh");
        // a global OOM whose victim's path names an oom_memcg
        let v = "/a,oom_memcg=/a";
        let l = OomLine::parse(kernel_line("/", None, v, "x").as_bytes()).unwrap();
        assert_eq!(
            (l.oom_memcg, l.task_memcg.as_deref()),
            (None, Some(v.as_bytes()))
        );
    }

    #[test]
    fn a_line_that_reads_two_ways_names_no_group() {
        // the task name holds `,task=`: "b" or "a,task=b" in "/v,task=a"
        // or "/v"; neither the task nor its group is told
        let l = OomLine::parse(kernel_line("/", Some("/v"), "/v", "a,task=b").as_bytes()).unwrap();
        assert_eq!(
            (l.task_memcg, l.task.as_slice(), l.pid),
            (None, &b""[..], 4242)
        );
        // a global OOM's victim `/p,mems_allowed=0,global_oom,task_memcg=/q`
        // or `/q`: unknown
        let v = "/p,mems_allowed=0,global_oom,task_memcg=/q";
        let l = OomLine::parse(kernel_line("/", None, v, "x").as_bytes()).unwrap();
        assert_eq!(l.task_memcg, None);
        // and no join: an event is not given a victim it may not have
        let mut ev = Event {
            at: Duration::ZERO,
            unix_s: 0.0,
            since: None,
            owner: None,
            path: GroupPath::new("q"),
            kind: EventKind::Memory {
                what: MemoryEvent::OomKill,
                count: 1,
                victim: None,
            },
        };
        let whole: Mapping = Some((GroupPath::root(), GroupPath::root()));
        assert!(!join_oom(&mut ev, &l, &whole));
    }

    #[test]
    fn the_killed_process_line() {
        let m = b"Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1000kB, anon-rss:900kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:40kB oom_score_adj:0";
        assert_eq!(parse_killed(m), Some((4242, b"python3".to_vec())));
        assert_eq!(
            parse_killed(b"Out of memory: Killed process 5 (a) b) total-vm:1kB"),
            Some((5, b"a) b".to_vec()))
        );
        assert_eq!(parse_killed(b"Killed process x (y)"), None);
    }

    #[test]
    fn an_oom_kill_joins_the_line_of_its_group_or_below() {
        let line = OomLine::parse(OOM).unwrap();
        // a view of the whole hierarchy: kmsg's paths are the view's
        let whole: Mapping = Some((GroupPath::root(), GroupPath::root()));
        let ev = |path: &str| Event {
            at: Duration::ZERO,
            unix_s: 0.0,
            since: None,
            owner: None,
            path: GroupPath::new(path),
            kind: EventKind::Memory {
                what: MemoryEvent::OomKill,
                count: 1,
                victim: None,
            },
        };
        let mut own = ev("cgtop-test-1-0/leaf");
        assert!(join_oom(&mut own, &line, &whole));
        let EventKind::Memory {
            victim: Some(v), ..
        } = &own.kind
        else {
            panic!("{own:?}")
        };
        assert_eq!(v.oom_memcg, Some(GroupPath::new("cgtop-test-1-0")));
        assert_eq!(v.pid, 4242);
        // the ancestor's memory.events counts it too
        assert!(join_oom(&mut ev("cgtop-test-1-0"), &line, &whole));
        // a sibling does not, nor an unmapped view
        assert!(!join_oom(&mut ev("other"), &line, &whole));
        assert!(!join_oom(&mut ev("cgtop-test-1-0"), &line, &None));
        // a view below the mount: paths relative to it
        let below = Some((GroupPath::root(), GroupPath::new("cgtop-test-1-0")));
        assert!(join_oom(&mut ev("leaf"), &line, &below));
    }

    #[test]
    fn the_list_is_bounded_and_counts_unseen() {
        let mut l = EventList::default();
        let e = |i: u64| Event {
            at: Duration::from_millis(i),
            unix_s: 0.0,
            since: None,
            owner: None,
            path: GroupPath::new(if i % 2 == 0 { "a" } else { "b" }),
            kind: EventKind::PidsMax { count: i },
        };
        for i in 0..(EventList::CAP as u64 + 5) {
            l.push(e(i));
        }
        assert_eq!(
            (l.len(), l.dropped, l.unseen),
            (EventList::CAP, 5, EventList::CAP)
        );
        assert_eq!(l.get(0).and_then(|e| e.kind.count()), Some(5));
        l.mark_seen();
        assert_eq!(l.unseen, 0);
        let last = EventList::CAP as u64 + 4;
        assert!(l.recent(&GroupPath::new("a"), Duration::from_millis(last - 1)));
        assert!(!l.recent(&GroupPath::new("c"), Duration::ZERO));
    }

    /// An event of `owner`'s account at `ms`.
    fn owned(ms: u64, owner: Option<u32>, kind: EventKind) -> Event {
        Event {
            at: Duration::from_millis(ms),
            unix_s: 0.0,
            since: None,
            owner: owner.map(Account::Uid),
            path: GroupPath::new(&format!("g{ms}")),
            kind,
        }
    }

    fn kill() -> EventKind {
        EventKind::Memory {
            what: MemoryEvent::OomKill,
            count: 1,
            victim: None,
        }
    }

    fn high() -> EventKind {
        EventKind::Memory {
            what: MemoryEvent::High,
            count: 1,
            victim: None,
        }
    }

    /// The owners of the kept events, oldest first.
    fn owners(l: &EventList) -> Vec<Option<Account>> {
        l.iter().map(|e| e.owner).collect()
    }

    fn uid(u: u32) -> Account {
        Account::Uid(u)
    }

    #[test]
    fn a_flood_past_the_cap_replaces_only_its_owners_events() {
        let mut l = EventList::with_cap(100);
        // root's: an OOM kill, limit hits and state changes
        l.push(owned(0, Some(0), kill()));
        for i in 1..=10 {
            l.push(owned(i, Some(0), high()));
            l.push(owned(100 + i, Some(0), EventKind::Populated(i % 2 == 0)));
        }
        // a delegated user's memory.high hits, 50 times the cap
        for i in 0..5_000 {
            l.push(owned(1_000 + i, Some(1000), high()));
        }
        assert_eq!((l.len(), l.dropped), (100, 5_021 - 100));
        let roots = l.iter().filter(|e| e.owner == Some(uid(0))).count();
        assert_eq!(roots, 21, "root's events are all kept: {:?}", owners(&l));
        // the user keeps its newest
        let user_oldest = l.iter().find(|e| e.owner == Some(uid(1000))).unwrap();
        assert_eq!(user_oldest.at, Duration::from_millis(1_000 + 5_000 - 79));
        // a third owner comes: the biggest source gives way, oldest first
        l.push(owned(9_000, Some(1001), kill()));
        assert!(l.iter().any(|e| e.owner == Some(uid(1001))));
        assert_eq!(l.iter().filter(|e| e.owner == Some(uid(0))).count(), 21);
    }

    #[test]
    fn within_a_source_state_changes_go_first_and_oom_kills_last() {
        let mut l = EventList::with_cap(4);
        l.push(owned(0, None, kill()));
        l.push(owned(1, None, high()));
        l.push(owned(2, None, EventKind::Frozen(true)));
        l.push(owned(3, None, high()));
        l.push(owned(4, None, EventKind::Populated(true)));
        // the frozen change went, not the older limit hit
        let at: Vec<u128> = l.iter().map(|e| e.at.as_millis()).collect();
        assert_eq!(at, [0, 1, 3, 4]);
        l.push(owned(5, None, high()));
        l.push(owned(6, None, high()));
        assert_eq!(
            l.iter().map(|e| e.at.as_millis()).collect::<Vec<_>>(),
            [0, 3, 5, 6]
        );
        // another owner's kills: the biggest source gives its cheapest
        // (limit hits), and a source of nothing but kills its own oldest
        // kill for its own kill
        for i in 10..14 {
            l.push(owned(i, Some(7), kill()));
        }
        let at = |l: &EventList| l.iter().map(|e| e.at.as_millis()).collect::<Vec<_>>();
        assert_eq!(at(&l), [0, 6, 12, 13]);
        assert_eq!(owners(&l), [None, None, Some(uid(7)), Some(uid(7))]);
        // a kill of the biggest source: its limit hit goes
        l.push(owned(20, None, kill()));
        assert_eq!(at(&l), [0, 12, 13, 20]);
        // a limit hit of a third owner: the biggest (ties: the higher
        // owner) holds only kills and keeps them; the newcomer gives up
        // its own cheapest
        l.push(owned(21, Some(0), high()));
        assert_eq!(at(&l), [0, 12, 13, 20]);
        assert_eq!(l.dropped, 9);
        // a kill of the third owner takes the biggest's oldest kill's place
        l.push(owned(22, Some(0), kill()));
        assert_eq!(at(&l), [0, 13, 20, 22]);
        assert_eq!(l.len(), 4);
    }

    #[test]
    fn a_flood_of_oom_kills_replaces_only_its_owners_events() {
        let mut l = EventList::with_cap(60);
        // root's: an OOM kill, limit hits and state changes
        l.push(owned(0, Some(0), kill()));
        for i in 1..=10 {
            l.push(owned(i, Some(0), high()));
            l.push(owned(100 + i, Some(0), EventKind::Populated(i % 2 == 0)));
        }
        // a user's OOM kills, each with its max and oom: 30 times the cap
        let (mut ms, max) = (1_000, |what| EventKind::Memory {
            what,
            count: 1,
            victim: None,
        });
        for _ in 0..600 {
            for kind in [max(MemoryEvent::Max), max(MemoryEvent::Oom), kill()] {
                l.push(owned(ms, Some(1000), kind));
                ms += 1;
            }
        }
        assert_eq!(l.len(), 60);
        assert_eq!(l.iter().filter(|e| e.owner == Some(uid(0))).count(), 21);
        // the user's counters were given up first, then its oldest kills
        let users: Vec<_> = l.iter().filter(|e| e.owner == Some(uid(1000))).collect();
        assert_eq!(users.len(), 39);
        assert!(users.iter().all(|e| e.kind.is_oom_kill()));
        assert_eq!(users[0].at, Duration::from_millis(ms - 1 - 38 * 3));
        // root's limit hit, coming now: the user's kills are not given up
        // for it, root's own oldest state change is
        l.push(owned(9_100, Some(0), high()));
        assert_eq!(l.iter().filter(|e| e.owner == Some(uid(0))).count(), 21);
        assert!(l.iter().any(|e| e.at == Duration::from_millis(9_100)));
        assert!(!l.iter().any(|e| e.at == Duration::from_millis(101)));
        // root's OOM kill takes the place of the user's oldest
        l.push(owned(9_101, Some(0), kill()));
        assert_eq!(l.iter().filter(|e| e.owner == Some(uid(0))).count(), 22);
    }

    /// An event of `owner` at `path`.
    fn at_path(path: &str, owner: u32, kind: EventKind) -> Event {
        Event {
            path: GroupPath::new(path),
            ..owned(0, Some(owner), kind)
        }
    }

    #[test]
    fn an_ancestors_echo_of_a_hit_below_is_the_hits_owners() {
        let chain = [
            (
                "user.slice/user-1000.slice/user@1000.service/app.slice/hog",
                1000,
            ),
            (
                "user.slice/user-1000.slice/user@1000.service/app.slice",
                1000,
            ),
            ("user.slice/user-1000.slice/user@1000.service", 1000),
            ("user.slice/user-1000.slice", 0),
            ("user.slice", 0),
        ];
        // as the watcher makes them: one event per group whose file changed
        let mut batch: Vec<Event> = chain.iter().map(|&(p, o)| at_path(p, o, high())).collect();
        // in any order
        batch.rotate_left(2);
        attribute_echoes(&mut batch);
        assert!(
            batch.iter().all(|e| e.owner == Some(uid(1000))),
            "{batch:?}"
        );
        // a state change, another counter, a sibling and a name that only
        // begins as the group's are not below it or not the same hit
        let mut batch = vec![
            at_path("user.slice", 0, high()),
            at_path("user.slice", 0, EventKind::Populated(true)),
            at_path("user.slice/u", 1000, EventKind::Populated(false)),
            at_path("user.slice/u", 1000, kill()),
            at_path("user.slice2/u", 1000, high()),
            at_path("system.slice", 0, kill()),
            at_path("system.slice2", 1000, kill()),
        ];
        let before = batch.clone();
        attribute_echoes(&mut batch);
        assert_eq!(batch, before);
    }

    #[test]
    fn an_echo_of_its_owners_own_hit_stays_its_owners() {
        // root's service and a user's group below one root-owned slice
        // hit memory.high in one batch: the slice's count is both
        let mut batch = vec![
            at_path("user.slice/u/hog", 1000, high()),
            at_path("user.slice/u", 1000, high()),
            at_path("user.slice/root.service", 0, high()),
            at_path("user.slice", 0, high()),
        ];
        attribute_echoes(&mut batch);
        assert_eq!(
            batch.iter().map(|e| e.owner).collect::<Vec<_>>(),
            [Some(uid(1000)), Some(uid(1000)), Some(uid(0)), Some(uid(0))]
        );
        // two users' hits: the first one's
        let mut batch = vec![
            at_path("s/a", 1002, high()),
            at_path("s/b", 1001, high()),
            at_path("s", 0, high()),
        ];
        attribute_echoes(&mut batch);
        assert_eq!(batch[2].owner, Some(uid(1002)));
    }

    /// The rule, as a scan of the whole list (the reference the list's
    /// queues must agree with).
    fn reference_push(list: &mut Vec<Event>, cap: usize, e: Event) -> bool {
        let (source, kill) = (e.owner, e.kind.is_oom_kill());
        list.push(e);
        if list.len() <= cap {
            return false;
        }
        let mut counts: HashMap<Source, usize> = HashMap::new();
        for e in list.iter() {
            *counts.entry(e.owner).or_default() += 1;
        }
        let Some((biggest, _)) = counts.into_iter().max_by_key(|&(s, n)| (n, s)) else {
            return false;
        };
        let of = |s: Source, w: Worth| {
            list.iter()
                .position(|e| e.owner == s && Worth::of(&e.kind) == w)
        };
        let cheap = |s| of(s, Worth::State).or_else(|| of(s, Worth::Counter));
        let i = match cheap(biggest) {
            Some(i) => Some(i),
            None if biggest == source || kill => of(biggest, Worth::Kill),
            None => cheap(source),
        };
        if let Some(i) = i {
            list.remove(i);
        }
        true
    }

    /// The echoes' owners, as a scan of the whole batch for each event
    /// (the reference the walk must agree with).
    fn reference_echoes(batch: &[Event]) -> Vec<Source> {
        let below = |j: usize| -> Vec<usize> {
            let (p, k) = (&batch[j].path, counter_key(&batch[j].kind));
            (0..batch.len())
                .filter(|&i| {
                    k.is_some()
                        && counter_key(&batch[i].kind) == k
                        && batch[i].path != *p
                        && batch[i].path.is_within(p)
                })
                .collect()
        };
        (0..batch.len())
            .map(|j| {
                let sources: Vec<usize> = below(j)
                    .into_iter()
                    .filter(|&i| below(i).is_empty())
                    .collect();
                let own = batch[j].owner;
                if sources.is_empty() || sources.iter().any(|&i| batch[i].owner == own) {
                    own
                } else {
                    batch[sources[0]].owner
                }
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Any bytes: no parser panics, and what they keep is capped.
        #[test]
        fn any_bytes_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let _ = parse_record(&b);
            let _ = parse_killed(&b);
            let mut m = b"oom-kill:".to_vec();
            m.extend_from_slice(&b);
            if let Some(l) = OomLine::parse(&m) {
                proptest::prop_assert!(l.task.len() <= TASK_CAP);
                proptest::prop_assert!(l.task_memcg.map_or(0, |p| p.len()) <= PATH_CAP);
            }
            let text = String::from_utf8_lossy(&b);
            for f in EventFile::ALL {
                let (x, d) = (Reading::parse(f, &text), Reading::parse(f, DOCKER));
                let _ = diff(f, Some(&x), &d);
                let _ = diff(f, Some(&d), &x.over(&d));
            }
        }

        /// Kernel-shaped lines whose names are made of the fields' own
        /// text: the victim's group, the OOM's group and the task are the
        /// ones printed, or unknown; never another.
        #[test]
        fn hostile_names_never_name_another_group(
            a in proptest::collection::vec(proptest::sample::select(vec!["/", "x", ",", "=", ",task_memcg=", ",oom_memcg=", "global_oom", ",task=", ",pid=", ",uid=", "0", ",mems_allowed=", ",nodemask=(null)"]), 0..6),
            b in proptest::collection::vec(proptest::sample::select(vec!["/", "y", ",", ",task_memcg=/", ",oom_memcg=/", ",global_oom", ",task=", ",pid=7", "1"]), 0..6),
            cpuset in proptest::collection::vec(proptest::sample::select(vec!["/", "c", ",mems_allowed=0", ",oom_memcg=/", ",task_memcg=/", ",global_oom"]), 0..5),
            task in proptest::collection::vec(proptest::sample::select(vec!["t", ",", "=", ",task=", ",pid=", "9"]), 0..4),
            global in proptest::prelude::any::<bool>(),
        ) {
            let oom = format!("/{}", a.concat());
            let victim = if b.is_empty() { oom.clone() } else { format!("{oom}/{}", b.concat()) };
            let task: String = task.concat().chars().take(15).collect();
            let cpuset = format!("/{}", cpuset.concat());
            let line = kernel_line(&cpuset, (!global).then_some(oom.as_str()), &victim, &task);
            let l = OomLine::parse(line.as_bytes()).expect("a kernel line parses");
            proptest::prop_assert_eq!((l.pid, l.uid), (4242, Some(65534)));
            if let Some(t) = &l.task_memcg {
                proptest::prop_assert_eq!(t.as_slice(), victim.as_bytes());
                proptest::prop_assert_eq!(l.task.as_slice(), task.as_bytes());
            }
            if let Some(o) = &l.oom_memcg {
                proptest::prop_assert!(!global);
                proptest::prop_assert_eq!(o.as_slice(), oom.as_bytes());
            }
        }

        /// Kernel-shaped oom-kill lines with any name: the numbers come out.
        #[test]
        fn kernel_shaped_lines(task in "[ -~]{0,15}", path in "(/[a-z,=]{1,8}){1,3}", pid in 1u32.., uid in 0u32..) {
            let line = format!("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg={path},task_memcg={path},task={task},pid={pid},uid={uid}");
            let l = OomLine::parse(line.as_bytes());
            let l = l.expect("parses");
            proptest::prop_assert_eq!((l.pid, l.uid), (pid, Some(uid)));
        }

        /// Any pushes, any small cap: the list keeps what the rule as a
        #[test]
        fn echoes_are_owned_as_a_scan_of_the_batch_says(
            events in proptest::collection::vec(
                (
                    proptest::collection::vec(proptest::sample::select(vec!["a", "b", "a-x", "a.b"]), 0..4),
                    proptest::option::of(0u32..3),
                    0u8..4,
                ),
                0..30,
            ),
        ) {
            let mut batch: Vec<Event> = events
                .into_iter()
                .enumerate()
                .map(|(i, (path, owner, k))| Event {
                    path: GroupPath::new(&path.join("/")),
                    ..owned(i as u64, owner, match k {
                        0 => EventKind::Populated(true),
                        1 => EventKind::PidsMax { count: 1 },
                        2 => kill(),
                        _ => high(),
                    })
                })
                .collect();
            let want = reference_echoes(&batch);
            attribute_echoes(&mut batch);
            proptest::prop_assert_eq!(batch.iter().map(|e| e.owner).collect::<Vec<_>>(), want);
        }

        /// scan keeps, in order, whatever places it compacted.
        #[test]
        fn the_list_keeps_what_the_rule_says(
            cap in 1usize..24,
            pushes in proptest::collection::vec((proptest::option::of(0u32..4), 0u8..3), 0..200),
        ) {
            let mut l = EventList::with_cap(cap);
            let mut want: Vec<Event> = Vec::new();
            let mut dropped = 0u64;
            for (i, (owner, k)) in pushes.into_iter().enumerate() {
                let kind = match k {
                    0 => EventKind::Populated(i % 2 == 0),
                    1 => high(),
                    _ => kill(),
                };
                let e = owned(i as u64, owner, kind);
                dropped += u64::from(reference_push(&mut want, cap, e.clone()));
                l.push(e);
                proptest::prop_assert_eq!(l.len(), want.len());
            }
            proptest::prop_assert_eq!(l.iter().collect::<Vec<_>>(), want.iter().collect::<Vec<_>>());
            proptest::prop_assert_eq!(l.iter().rev().count(), l.len());
            for (i, e) in want.iter().enumerate() {
                proptest::prop_assert_eq!(l.get(i), Some(e));
            }
            proptest::prop_assert_eq!(l.get(want.len()), None);
            proptest::prop_assert_eq!(l.dropped, dropped);
            proptest::prop_assert!(l.slots.len() <= l.kept + cap / 8 + 1);
        }
    }
}
