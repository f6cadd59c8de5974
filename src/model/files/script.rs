//! PURE: the action log's records -> the apply script and the undo script,
//! as text (issue 10 item 4: the session as a script).
//!
//! Each successful write of the log becomes, in order, one line of a
//! POSIX `sh` script: `systemctl set-property [--runtime] UNIT PROP=VALUE`
//! for a systemd unit where systemd has the property
//! ([`write::systemd_equivalent`]), else `cg_write`, a shell function
//! defined once at the top that writes the file, reads it back and
//! compares as cgtop's read-back does ([`Check`]), failing loudly with the
//! file and both values. mkdir, rmdir and `cgroup.subtree_control` are
//! replayed, each at the path the log records as the group's real place
//! in its hierarchy ([`Entry::real`]: under `--root`, not the view's
//! path); moves, kills and freezes, failed, refused and skipped writes,
//! and lines without that record are comments that say why. A group a container
//! runtime or the kubelet owns (by its name) gets comments with the owner's own
//! way (`model::write::owner`). The undo script holds the inverse of every
//! replayed line, in the reverse order.
//!
//! # Why no byte of the log can run
//!
//! Group names and values are a delegated user's bytes. Every argument
//! the script passes is single-quoted in the `printf %b` form
//! ([`sh_arg`]): printable ASCII as it is, `\` doubled, `'` as `'\''`,
//! every other byte (controls, newline, ESC, non-ASCII, invalid UTF-8) as
//! an octal escape `\0ooo`, decoded by the function at run time; a NUL,
//! which no file name or value can carry, is refused. Comments go through
//! `text::escape`, so a comment is one line. A path with `..`, `.`, an
//! empty component or a NUL, a file name that is not a plain kernel
//! interface name, a v1 hierarchy name that is not a controller's: refused
//! with a comment. The hierarchy's mount point is not in the script: it is
//! found at run time in /proc/self/mountinfo, or taken from
//! `CGTOP_CGROUP2` / `CGTOP_V1_<CONTROLLER>`.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::io::DevId;
use crate::cgroupfs::{files, CpuMax, Limit};
use crate::model::host::layout::HierId;
use crate::model::tree::text::escape;
use crate::model::write::input::{
    parse_controller_changes, ControllerChange, IoMaxSet, MemoryFile,
};
use crate::model::write::{
    self, v1_files, v1_limit, Op, Throttle, V1MemoryFile, WriteKind, WriteOp,
};
use crate::model::GroupPath;
use std::fmt::Write as _;

/// Which hierarchy a log line names: cgroup2, or a v1 hierarchy by its
/// label as the kernel names it in /proc/PID/cgroup (`cpu,cpuacct`,
/// `name=systemd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    V2,
    V1(String),
}

/// What a log line did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// FILE OLD to NEW [stored VALUE]; `old` is `None` for `-`.
    Write {
        file: Vec<u8>,
        old: Option<Vec<u8>>,
        new: Vec<u8>,
        stored: Option<Vec<u8>>,
    },
    Mkdir,
    Rmdir,
}

/// One line of the action log, its fields as their bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// RFC 3339 UTC, as the log writes it ("2024-05-01T12:00:00Z").
    pub time: String,
    pub place: Place,
    /// The path as logged ("/a/b"), not yet checked.
    pub group: Vec<u8>,
    pub what: What,
    /// `Err`: the words the log kept of the failure.
    pub result: Result<(), Vec<u8>>,
    /// Where the group really is in its hierarchy ("/a/b", from the
    /// hierarchy's root, not yet checked): the log's `at` field. `None`
    /// on a line without it, which is never replayed (under `--root` its
    /// path is relative to the directory viewed, not to the hierarchy).
    pub real: Option<Vec<u8>>,
    /// Nothing was done (the log says `skipped`): never replayed.
    pub skipped: bool,
}

/// What the header says about the script's making.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// When it was made, RFC 3339.
    pub made: String,
    pub host: Vec<u8>,
    /// cgtop's version.
    pub version: String,
    /// Where the entries came from: the log file's path, or words.
    pub source: Vec<u8>,
    /// The `--since` bound, as the log's time.
    pub since: Option<String>,
    /// Lines of the log that were not lines cgtop writes, skipped.
    pub malformed: u64,
    /// `systemctl set-property` without `--runtime`.
    pub persist: bool,
    /// The undo script's file name, for the apply script's header.
    pub undo_name: Option<String>,
    /// The apply script's file name, for the undo script's header.
    pub apply_name: Option<String>,
}

/// The two scripts and what went into them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scripts {
    pub apply: String,
    pub undo: String,
    /// Entries replayed (each a line of the apply script).
    pub replayed: usize,
    /// Entries kept only as comments.
    pub comments: usize,
    /// Of those, lines without where the group is ([`Entry::real`]).
    pub unplaced: usize,
}

/// How a read-back is judged, as cgtop's `WriteOp::check_readback` judges
/// it; the shell function `cg_check` implements each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// The file reads back exactly this (trailing newlines dropped).
    Exact(Vec<u8>),
    /// Exactly this, or anything of more than one line (a raw write to a
    /// keyed file: one key per write, the file shows them all).
    Raw(Vec<u8>),
    /// Some line is exactly this (io.weight, io.latency, blkio.throttle).
    Line(String),
    /// No line's first field is this device (a rule removed).
    NoLine(DevId),
    /// io.max: the device's line has each `key=value`; no line at all
    /// when every value is `max` (the kernel drops such a line).
    IoMax(DevId, Vec<String>),
    /// cgroup.subtree_control: each `+name` is listed, each `-name` not.
    Controllers(Vec<ControllerChange>),
    /// A v1 memory limit of "no limit": -1 or at least 2^62.
    V1Unlimited,
}

impl Check {
    /// The mode word and the wanted text, the last two arguments of
    /// `cg_write`.
    fn args(&self) -> (&'static str, Vec<u8>) {
        match self {
            Self::Exact(v) => ("exact", v.clone()),
            Self::Raw(v) => ("raw", v.clone()),
            Self::Line(l) => ("line", l.clone().into_bytes()),
            Self::NoLine(d) => ("noline", d.to_string().into_bytes()),
            Self::IoMax(d, kv) => {
                let mut s = d.to_string();
                for p in kv {
                    s.push(' ');
                    s.push_str(p);
                }
                ("iomax", s.into_bytes())
            }
            Self::Controllers(c) => (
                "ctl",
                c.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .into_bytes(),
            ),
            Self::V1Unlimited => ("v1max", Vec::new()),
        }
    }
}

// ---------------------------------------------------------------------------
// Quoting.

/// One argument for the script's functions, single-quoted in the form
/// `printf %b` decodes (see the module doc); `None` for a NUL.
pub fn sh_arg(bytes: &[u8]) -> Option<String> {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('\'');
    for &b in bytes {
        match b {
            0 => return None,
            b'\\' => s.push_str("\\\\"),
            b'\'' => s.push_str("'\\''"),
            0x20..=0x7e => s.push(char::from(b)),
            _ => {
                let _ = write!(s, "\\0{b:03o}");
            }
        }
    }
    s.push('\'');
    Some(s)
}

/// A plain word for a command line (systemctl's arguments): as it is when
/// it holds only characters no shell acts on, else single-quoted; `None`
/// for anything but printable ASCII.
fn sh_word(s: &str) -> Option<String> {
    if !s.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return None;
    }
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    Some(if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    })
}

/// Bytes for a comment: one line, escapes for anything a terminal acts on.
fn shown(bytes: &[u8]) -> String {
    escape(bytes).into_owned()
}

// ---------------------------------------------------------------------------
// Checking what the log says.

/// Why an entry is not replayed, or is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// The path leaves the hierarchy, or is not a path cgtop logs.
    Path,
    /// The file name is not a kernel interface file's.
    File,
    /// The v1 hierarchy's name is not a controller's.
    Hierarchy,
    /// A NUL in a value.
    Nul,
}

impl Refusal {
    fn words(&self) -> &'static str {
        match self {
            Self::Path => "the group path is not a plain path inside the hierarchy (.., ., an empty part or a NUL)",
            Self::File => "the file name is not a cgroup interface file's",
            Self::Hierarchy => "the v1 hierarchy is not named by controllers",
            Self::Nul => "the value holds a NUL byte, which no write can carry",
        }
    }
}

/// The group of a logged path: "/" then components, none of them empty,
/// `.`, `..` or holding a NUL.
fn checked_group(logged: &[u8]) -> Result<GroupPath, Refusal> {
    let rel = logged.strip_prefix(b"/").ok_or(Refusal::Path)?;
    if rel.is_empty() {
        return Ok(GroupPath::root());
    }
    let plain = rel
        .split(|&b| b == b'/')
        .all(|c| !c.is_empty() && c != b"." && c != b".." && !c.contains(&0));
    if !plain {
        return Err(Refusal::Path);
    }
    GroupPath::parse(rel).map_err(|_| Refusal::Path)
}

/// A cgroup interface file's name: letters, digits, `_` and `.`, not
/// starting with `.`.
fn checked_file(f: &[u8]) -> Result<&str, Refusal> {
    let ok = !f.is_empty()
        && f.len() <= 64
        && f[0] != b'.'
        && f.iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_.".contains(b));
    if ok {
        std::str::from_utf8(f).map_err(|_| Refusal::File)
    } else {
        Err(Refusal::File)
    }
}

/// The first name of a v1 label, which the script looks the hierarchy up
/// by (`cpu` of `cpu,cpuacct`: the hierarchy that holds cpu, co-mounted
/// or not on the host the script runs on), and the environment variable
/// that may name it instead.
fn v1_key(label: &str) -> Result<(String, String), Refusal> {
    let first = label.split(',').next().unwrap_or_default();
    let word = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    // the layout's own allow-list: a log of an older cgtop that took
    // SELinux's `seclabel` for a controller is refused, not looked up
    let all_ok = label.split(',').all(|c| match c.strip_prefix("name=") {
        Some(n) => word(&n.to_ascii_lowercase()),
        None => crate::model::host::layout::V1_CONTROLLERS.contains(&c),
    });
    if !all_ok {
        return Err(Refusal::Hierarchy);
    }
    let var = format!("CGTOP_V1_{}", first.replace('=', "_").to_ascii_uppercase());
    Ok((first.to_owned(), var))
}

// ---------------------------------------------------------------------------
// The typed op of a logged write.

fn io_max_set(v: &str) -> Option<IoMaxSet> {
    let mut it = v.split_ascii_whitespace();
    let mut set = IoMaxSet {
        dev: DevId::parse(it.next()?)?,
        rbps: None,
        wbps: None,
        riops: None,
        wiops: None,
    };
    for kv in it {
        let (k, x) = kv.split_once('=')?;
        let l = Some(Limit::parse("io.max", x).ok()?);
        match k {
            "rbps" => set.rbps = l,
            "wbps" => set.wbps = l,
            "riops" => set.riops = l,
            "wiops" => set.wiops = l,
            _ => return None,
        }
    }
    (!set.pairs().is_empty()).then_some(set)
}

fn typed(h: HierId, g: &GroupPath, file: &str, v: &str) -> Option<Op> {
    let t = v.trim();
    let num = || t.parse::<u64>().ok();
    let dev_then = || {
        let (d, rest) = t.split_once(' ')?;
        Some((DevId::parse(d)?, rest.trim()))
    };
    if let Some(f) = MemoryFile::from_file(file) {
        return Limit::parse("memory", t)
            .ok()
            .map(|l| write::set_memory_limit(g, f, l));
    }
    if let Some(which) = Throttle::ALL.into_iter().find(|w| w.file() == file) {
        let (d, n) = dev_then()?;
        let n: u64 = n.parse().ok()?;
        return Some(write::set_blkio_throttle(
            g,
            h,
            which,
            d,
            (n > 0).then_some(n),
        ));
    }
    for f in [
        V1MemoryFile::Limit,
        V1MemoryFile::MemswLimit,
        V1MemoryFile::SoftLimit,
    ] {
        if f.file() == file {
            return v1_limit(t).map(|l| write::set_v1_memory(g, h, f, l));
        }
    }
    Some(match file {
        files::CPU_MAX => write::set_cpu_max(g, CpuMax::parse(t).ok()?),
        files::CPU_MAX_BURST => write::set_cpu_max_burst(g, num()?),
        files::CPU_WEIGHT => write::set_cpu_weight(g, t.parse().ok()?),
        files::CPU_WEIGHT_NICE => write::set_cpu_weight_nice(g, t.parse().ok()?),
        files::PIDS_MAX => write::set_pids_max(g, Limit::parse("pids.max", t).ok()?),
        files::IO_MAX => write::set_io_max(g, io_max_set(t)?),
        files::IO_WEIGHT => match t.split_once(' ') {
            None => write::set_io_weight(g, None, t.parse().ok()?),
            Some(("default", n)) => write::set_io_weight(g, None, n.trim().parse().ok()?),
            Some(_) => match dev_then()? {
                (d, "default") => write::reset_io_weight(g, d),
                (d, n) => write::set_io_weight(g, Some(d), n.parse().ok()?),
            },
        },
        files::IO_LATENCY => {
            let (d, rest) = dev_then()?;
            match rest.strip_prefix("target=")? {
                "max" => write::set_io_latency(g, d, None),
                n => write::set_io_latency(g, d, Some(n.parse().ok()?)),
            }
        }
        files::SUBTREE_CONTROL => write::set_subtree_control(g, &parse_controller_changes(t).ok()?),
        files::FREEZE => write::freeze(g, write::kernel_int(t.as_bytes())? == 1),
        files::KILL => write::kill(g),
        files::PROCS | files::THREADS | v1_files::TASKS => write::move_process_in(
            u32::try_from(write::kernel_int(t.as_bytes())?).ok()?,
            g,
            file != files::PROCS,
            h,
        ),
        v1_files::FREEZER_STATE => match t {
            "FROZEN" => write::set_freezer(g, h, true),
            "THAWED" => write::set_freezer(g, h, false),
            _ => return None,
        },
        v1_files::CPU_CFS_QUOTA => match t {
            "-1" => write::set_cfs_quota(g, h, None),
            _ => write::set_cfs_quota(g, h, Some(num()?)),
        },
        v1_files::CPU_CFS_PERIOD => write::set_cfs_period(g, h, num()?),
        v1_files::CPU_SHARES => write::set_cpu_shares(g, h, num()?),
        v1_files::BLKIO_WEIGHT | v1_files::BLKIO_BFQ_WEIGHT => {
            write::set_blkio_weight(g, h, file == v1_files::BLKIO_BFQ_WEIGHT, t.parse().ok()?)
        }
        _ => return None,
    })
}

/// The op a logged write was: typed where the file and value parse as
/// cgtop's builders make them, else a raw write. The value written stays
/// the logged bytes; the type decides the read-back check, the systemd
/// property and the undo.
pub fn op_of(h: HierId, g: &GroupPath, file: &str, value: &str) -> Op {
    typed(h, g, file, value).unwrap_or_else(|| write::raw(g, file, value).on(h))
}

/// How the read-back of `w` is judged; `stored`: what the kernel stored
/// where the log was made, when it differed (page rounding, a nice value's
/// weight), for the checks that compare the whole value.
pub fn check_of(w: &WriteOp, stored: Option<&[u8]>) -> Option<Check> {
    let exact =
        |canon: String| Check::Exact(stored.map_or_else(|| canon.into_bytes(), <[u8]>::to_vec));
    Some(match &w.kind {
        WriteKind::Kill
        | WriteKind::MoveProcess { .. }
        | WriteKind::Freeze(_)
        | WriteKind::FreezerState(_)
        | WriteKind::IoWeight {
            dev: None,
            weight: None,
        } => return None,
        WriteKind::CpuMax(v) => exact(v.to_string()),
        WriteKind::CpuMaxBurst(v)
        | WriteKind::CfsPeriod(v)
        | WriteKind::CpuShares(v)
        | WriteKind::CfsQuota(Some(v))
        | WriteKind::V1Memory(_, Limit::Value(v)) => exact(v.to_string()),
        WriteKind::CfsQuota(None) => exact("-1".to_owned()),
        WriteKind::CpuWeight(v) | WriteKind::BlkioWeight(v) => exact(v.to_string()),
        WriteKind::CpuWeightNice(v) => exact(v.to_string()),
        WriteKind::Memory(_, l) | WriteKind::PidsMax(l) => exact(l.to_string()),
        WriteKind::V1Memory(_, Limit::Max) => Check::V1Unlimited,
        WriteKind::IoMax(set) => Check::IoMax(
            set.dev,
            set.pairs()
                .into_iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        ),
        WriteKind::IoWeight {
            dev: None,
            weight: Some(n),
        } => Check::Line(format!("default {n}")),
        WriteKind::IoWeight {
            dev: Some(d),
            weight: Some(n),
        } => Check::Line(format!("{d} {n}")),
        WriteKind::IoWeight {
            dev: Some(d),
            weight: None,
        }
        | WriteKind::IoLatency {
            dev: d,
            target_usec: None,
        }
        | WriteKind::BlkioThrottle {
            dev: d,
            limit: None,
            ..
        } => Check::NoLine(*d),
        WriteKind::IoLatency {
            dev,
            target_usec: Some(t),
        } => Check::Line(format!("{dev} target={t}")),
        WriteKind::BlkioThrottle {
            dev,
            limit: Some(n),
            ..
        } => Check::Line(format!("{dev} {n}")),
        WriteKind::SubtreeControl(c) => Check::Controllers(c.clone()),
        WriteKind::Raw => Check::Raw(w.contents.trim().as_bytes().to_vec()),
    })
}

/// The device an io op names, as systemd takes it: `/dev/block/MAJ:MIN`
/// (a link to the device node that systemd follows), since the log keeps
/// the number, not the disk's name.
fn systemd_device(w: &WriteOp) -> Option<String> {
    let d = match &w.kind {
        WriteKind::IoMax(s) => s.dev,
        WriteKind::IoWeight { dev: Some(d), .. } | WriteKind::IoLatency { dev: d, .. } => *d,
        _ => return None,
    };
    Some(format!("/dev/block/{d}"))
}

// ---------------------------------------------------------------------------
// Lines.

/// Where the script finds a hierarchy: a shell variable set at the top.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Root {
    /// The mountinfo key: "cgroup2", or a v1 controller or `name=X`.
    key: String,
    /// The environment variable that may name it.
    env: String,
}

impl Root {
    fn v2() -> Self {
        Self {
            key: "cgroup2".into(),
            env: "CGTOP_CGROUP2".into(),
        }
    }
}

/// The script's variable for the root of index `i`.
fn root_var(i: usize) -> String {
    format!("cg_h{i}")
}

/// Both scripts' lines, kept with the roots they use.
#[derive(Default)]
struct Lines {
    roots: Vec<Root>,
    apply: Vec<String>,
    /// Undo blocks, one per entry, reversed at the end.
    undo: Vec<Vec<String>>,
    replayed: usize,
    comments: usize,
    /// Entries without the real path (see [`Entry::real`]).
    unplaced: usize,
}

/// Why a line without its real path is not replayed.
const UNPLACED: &str = "the log line does not record where the group is in its hierarchy \
     (a line written before cgtop recorded it, or the place could not be told); \
     its path may be relative to a --root directory, not to the hierarchy";

impl Lines {
    fn root(&mut self, r: Root) -> String {
        let i = if let Some(i) = self.roots.iter().position(|x| *x == r) {
            i
        } else {
            self.roots.push(r);
            self.roots.len() - 1
        };
        format!("\"${}\"", root_var(i))
    }
}

/// The comment that names an entry: its time, place, and what it did.
fn entry_words(e: &Entry) -> String {
    let place = match &e.place {
        Place::V2 => shown(&e.group),
        Place::V1(l) => format!("{}:{}", shown(l.as_bytes()), shown(&e.group)),
    };
    // viewed under --root: where it really is, too
    let place = match &e.real {
        Some(r) if *r != e.group => format!("{place} (at {})", shown(r)),
        _ => place,
    };
    let what = match &e.what {
        What::Mkdir => "mkdir".to_owned(),
        What::Rmdir => "rmdir".to_owned(),
        What::Write { file, new, .. } => format!("{} {}", shown(file), shown(new)),
    };
    format!("{} {place} {what}", e.time)
}

/// A `cg_write` line.
fn write_line(
    root: &str,
    g: &GroupPath,
    file: &str,
    value: &[u8],
    check: &Check,
) -> Option<String> {
    let (mode, want) = check.args();
    Some(format!(
        "cg_write {root} {} {} {} {mode} {}",
        sh_arg(g.as_bytes())?,
        sh_arg(file.as_bytes())?,
        sh_arg(value)?,
        sh_arg(&want)?
    ))
}

/// The `systemctl` line of `op`, if systemd has its property.
fn systemctl_line(op: &Op, persist: bool) -> Option<String> {
    let w = op.as_write()?;
    let eq = write::systemd_equivalent(op, systemd_device(w).as_deref())?;
    if eq.args.get(1).map(String::as_str) != Some("set-property") {
        return None;
    }
    let words: Option<Vec<String>> = eq
        .args
        .iter()
        .filter(|a| !(persist && a.as_str() == "--runtime"))
        .map(|a| sh_word(a))
        .collect();
    Some(words?.join(" "))
}

/// The comments on an op whose group a container runtime or the kubelet
/// owns, by what its name says (`model::write::owner`): who, and what the
/// line below leaves it believing. Comments, not commands: the container
/// may not exist where the script runs, or have another id. No owner's
/// command either: the log keeps the group's name only, which anyone a
/// subtree is delegated to can choose (`docker-<id>.scope` of a real
/// container's id), and a `docker kill <id>` pasted from here would act
/// on that container.
fn owner_lines(op: &Op, group: &GroupPath) -> Vec<String> {
    let dev = op.as_write().and_then(systemd_device);
    let Some(way) = crate::model::identity::Identity::of_name(group)
        .and_then(|id| write::owner::owner_way(op, &id, dev.as_deref()))
    else {
        return Vec::new();
    };
    let mut l = vec![format!("#   owned by {}", way.who)];
    if let Some(c) = &way.command {
        l.push(format!("#   {}'s way: {c}", way.owner.word()));
    }
    l.push(format!("#   {}", way.words));
    l
}

/// Why an op of this kind is not replayed, for its comment.
fn not_replayed(kind: &WriteKind) -> Option<&'static str> {
    Some(match kind {
        WriteKind::MoveProcess { .. } => {
            "a process id means nothing on another host (or after a restart): put the service in its group through its unit or its launcher"
        }
        WriteKind::Kill => "killing is a one-time action, not a setting",
        WriteKind::Freeze(_) | WriteKind::FreezerState(_) => {
            "freezing stops processes; a tuning script sets limits and controllers only (freeze by hand if you mean it)"
        }
        _ => return None,
    })
}

fn plan(e: &Entry, persist: bool, out: &mut Lines) {
    let words = entry_words(e);
    let comment = |out: &mut Lines, why: &str| {
        out.apply.push(format!("# {words}"));
        out.apply.push(format!("#   not replayed: {why}"));
        out.comments += 1;
    };
    if let Err(err) = &e.result {
        let why = format!("it failed here ({})", shown(err));
        return comment(out, &why);
    }
    if e.skipped {
        return comment(
            out,
            "nothing was done in this hierarchy (the group is not in it)",
        );
    }
    let Some(real) = &e.real else {
        out.unplaced += 1;
        return comment(out, UNPLACED);
    };
    let group = match checked_group(real) {
        Ok(g) => g,
        Err(r) => return comment(out, &format!("refused: {}", r.words())),
    };
    let (root, hier) = match &e.place {
        Place::V2 => (Root::v2(), HierId::V2),
        Place::V1(label) => match v1_key(label) {
            Ok((key, env)) => (Root { key, env }, HierId::V1(0)),
            Err(r) => return comment(out, &format!("refused: {}", r.words())),
        },
    };
    match &e.what {
        What::Mkdir | What::Rmdir => {
            let (Some(parent), Some(name)) = (group.parent(), sh_arg(group.name())) else {
                return comment(
                    out,
                    "refused: the hierarchy's root cannot be made or removed",
                );
            };
            let Some(parent) = sh_arg(parent.as_bytes()) else {
                return comment(out, &format!("refused: {}", Refusal::Nul.words()));
            };
            let r = out.root(root);
            let mk = format!("cg_mkdir {r} {parent} {name}");
            let rm = format!("cg_rmdir {r} {parent} {name}");
            out.apply.push(format!("# {words}"));
            if e.what == What::Mkdir {
                out.apply.push(mk);
                out.undo.push(vec![format!("# undo {words}"), rm]);
            } else {
                out.apply.push(rm);
                out.undo.push(vec![
                    format!("# undo {words}"),
                    "#   not undone: a removed group's settings are not in the log".into(),
                ]);
            }
            out.replayed += 1;
        }
        What::Write {
            file,
            old,
            new,
            stored,
        } => {
            let file = match checked_file(file) {
                Ok(f) => f,
                Err(r) => return comment(out, &format!("refused: {}", r.words())),
            };
            if new.contains(&0) {
                return comment(out, &format!("refused: {}", Refusal::Nul.words()));
            }
            let text = String::from_utf8_lossy(new);
            let op = op_of(hier, &group, file, &text);
            let Some(w) = op.as_write() else { return };
            let owned = owner_lines(&op, &group);
            if let Some(why) = not_replayed(&w.kind) {
                comment(out, why);
                out.apply.extend(owned);
                return;
            }
            let was = match old.as_deref() {
                None => "unknown".to_owned(),
                Some([]) => "(empty)".to_owned(),
                Some(o) => shown(o),
            };
            let systemd = (hier == HierId::V2)
                .then(|| systemctl_line(&op, persist))
                .flatten();
            let check = check_of(w, stored.as_deref());
            let r = out.root(root);
            let line = match (&systemd, &check) {
                (Some(s), _) => Some(s.clone()),
                (None, Some(c)) => write_line(&r, &group, file, new, c),
                (None, None) => None,
            };
            let Some(line) = line else {
                return comment(out, &format!("refused: {}", Refusal::Nul.words()));
            };
            out.apply.push(format!("# {words}"));
            out.apply.push(format!("#   was: {was}"));
            out.apply.extend(owned);
            if systemd.is_some() {
                out.apply.push(format!(
                    "#   through systemd; the file: {} {}",
                    shown(file.as_bytes()),
                    shown(new)
                ));
            }
            out.apply.push(line);
            out.replayed += 1;
            out.undo
                .push(undo_block(&words, &op, old.as_deref(), &r, hier, persist));
        }
    }
}

/// The lines that take back one replayed write.
fn undo_block(
    words: &str,
    op: &Op,
    old: Option<&[u8]>,
    root: &str,
    hier: HierId,
    persist: bool,
) -> Vec<String> {
    let mut b = vec![format!("# undo {words}")];
    let back = old
        .filter(|o| !o.contains(&0))
        .and_then(|o| op.undo(Some(&String::from_utf8_lossy(o))));
    let Some(back) = back else {
        b.push("#   not undone: the old value is unknown or cannot be written back".into());
        return b;
    };
    let line = match back.as_write() {
        None => None,
        Some(w) => {
            let systemd = (hier == HierId::V2)
                .then(|| systemctl_line(&back, persist))
                .flatten();
            match systemd {
                Some(s) => Some(s),
                None => check_of(w, None)
                    .and_then(|c| write_line(root, &w.group, &w.file, w.contents.as_bytes(), &c)),
            }
        }
    };
    match line {
        Some(l) => {
            if let Some(w) = back.as_write() {
                b.push(format!("#   back to: {}", shown(w.contents.as_bytes())));
            }
            b.push(l);
        }
        None => b.push("#   not undone: the old value cannot be written back".into()),
    }
    b
}

// ---------------------------------------------------------------------------
// The fixed parts.

/// The functions every script defines (POSIX sh, awk, cat; no bashisms).
const FUNCTIONS: &str = r#"# --- cgtop's functions -------------------------------------------------
# Every name and value below is single-quoted in printf's %b form: bytes
# that are not printable ASCII are octal escapes (\0ooo), decoded here.
cg_fail() {
	printf 'cgtop script: %s\n' "$*" | LC_ALL=C tr -c ' -~\n' '?' >&2
	exit 1
}
cg_dec() { cg_r=$(printf '%bx' "$1"); cg_r=${cg_r%x}; }
# cg_mount KEY: the mount point of cgroup2 (KEY cgroup2) or of the v1
# hierarchy that holds controller KEY, from /proc/self/mountinfo.
cg_mount() {
	cg_r=$(cg_k=$1 awk '{
		for (i = 7; i <= NF && $i != "-"; i++) ;
		t = $(i + 1); o = "," $(i + 3) ","
		if ($4 != "/") next
		if (ENVIRON["cg_k"] == "cgroup2" ? t == "cgroup2" : (t == "cgroup" && index(o, "," ENVIRON["cg_k"] ","))) { print $5; exit }
	}' /proc/self/mountinfo) || cg_r=
	case $cg_r in
	'' | *\\*) cg_fail "no $1 hierarchy found in /proc/self/mountinfo (set $2 to its directory)" ;;
	esac
}
# cg_root VALUE VAR KEY: the directory of a hierarchy: VALUE (the
# environment variable VAR's), else from mountinfo.
cg_root() {
	cg_r=$1
	[ -n "$cg_r" ] || cg_mount "$3" "$2"
	[ -d "$cg_r" ] || cg_fail "$cg_r: not a directory ($2)"
}
# cg_dir ROOT GROUP: ROOT/GROUP, each part a directory, none a symlink.
cg_dir() {
	cg_dec "$2"; cg_rest=$cg_r; cg_p=$1
	while [ -n "$cg_rest" ]; do
		case $cg_rest in
		*/*) cg_c=${cg_rest%%/*}; cg_rest=${cg_rest#*/} ;;
		*) cg_c=$cg_rest; cg_rest= ;;
		esac
		cg_p=$cg_p/$cg_c
		[ -d "$cg_p" ] && [ ! -L "$cg_p" ] || cg_fail "$cg_p: no such group"
	done
	cg_r=$cg_p
}
# cg_check MODE WANT GOT: whether the kernel kept what was written, as
# cgtop's own read-back judges it.
cg_check() {
	case $1 in
	exact) [ "$3" = "$2" ] ;;
	raw) [ "$3" = "$2" ] || [ "$(printf '%s\n' "$3" | wc -l)" -gt 1 ] ;;
	*) printf '%s\n' "$3" | cg_m=$1 cg_w=$2 awk '
		BEGIN { m = ENVIRON["cg_m"]; n = split(ENVIRON["cg_w"], w, " ") }
		m == "line" && $0 == ENVIRON["cg_w"] { ok = 1 }
		m == "noline" && $1 == w[1] { bad = 1 }
		m == "iomax" && $1 == w[1] {
			seen = 1
			for (i = 2; i <= n; i++) { hit = 0; for (j = 2; j <= NF; j++) if ($j == w[i]) hit = 1; if (!hit) bad = 1 }
		}
		m == "ctl" { for (j = 1; j <= NF; j++) have[$j] = 1 }
		m == "v1max" && ($1 == "-1" || $1 + 0 >= 4611686018427387904) { ok = 1 }
		END {
			if (m == "line" || m == "v1max") exit !ok
			if (m == "noline") exit bad
			if (m == "iomax") { if (!seen) for (i = 2; i <= n; i++) if (w[i] !~ /=max$/) bad = 1; exit bad }
			if (m == "ctl") { for (i = 1; i <= n; i++) { c = substr(w[i], 2); if ((substr(w[i], 1, 1) == "+") != (c in have)) bad = 1 }; exit bad }
			exit 1
		}' ;;
	esac
}
# cg_write ROOT GROUP FILE VALUE MODE WANT: one write, read back, checked.
cg_write() {
	cg_dir "$1" "$2"; cg_f=$cg_r/$3
	[ -f "$cg_f" ] && [ ! -L "$cg_f" ] || cg_fail "$cg_f: no such file (is its controller enabled for the group?)"
	cg_dec "$4"; cg_v=$cg_r; cg_dec "$6"; cg_w=$cg_r
	if ! printf '%s' "$cg_v" > "$cg_f"; then cg_fail "$cg_f: the kernel refused '$cg_v'"; fi
	cg_got=$(cat -- "$cg_f") || cg_fail "$cg_f: cannot be read back"
	cg_check "$5" "$cg_w" "$cg_got" || cg_fail "$cg_f: wrote '$cg_v', read back '$cg_got' (wanted $5 '$cg_w')"
}
# cg_mkdir ROOT PARENT NAME: makes the group unless it is there.
cg_mkdir() {
	cg_dir "$1" "$2"; cg_dec "$3"; cg_p=$cg_p/$cg_r
	[ ! -L "$cg_p" ] || cg_fail "$cg_p: a symlink"
	[ -d "$cg_p" ] || mkdir -- "$cg_p" || cg_fail "$cg_p: mkdir failed"
}
# cg_rmdir ROOT PARENT NAME: removes the group if it is there.
cg_rmdir() {
	cg_dir "$1" "$2"; cg_dec "$3"; cg_p=$cg_p/$cg_r
	[ ! -L "$cg_p" ] || cg_fail "$cg_p: a symlink"
	[ ! -d "$cg_p" ] || rmdir -- "$cg_p" || cg_fail "$cg_p: rmdir failed (processes or groups in it?)"
}
# --- the changes ---------------------------------------------------------"#;

fn header(meta: &Meta, undo: bool, l: &Lines) -> String {
    let (replayed, comments) = (l.replayed, l.comments);
    let mut h = String::from("#!/bin/sh\n");
    if undo {
        let _ = writeln!(
            h,
            "# The undo of {}: cgtop's writes taken back, newest first (cgtop export-log).",
            meta.apply_name
                .as_deref()
                .map_or_else(|| "the apply script".to_owned(), |n| shown(n.as_bytes()))
        );
    } else {
        h.push_str("# The changes cgtop made, as a script (cgtop export-log).\n");
    }
    let _ = writeln!(
        h,
        "#   made  {} on host {} by cgtop {}",
        shown(meta.made.as_bytes()),
        shown(&meta.host),
        shown(meta.version.as_bytes())
    );
    let _ = writeln!(h, "#   from  {}", shown(&meta.source));
    if let Some(s) = &meta.since {
        let _ = writeln!(h, "#   since {}", shown(s.as_bytes()));
    }
    let _ = writeln!(
        h,
        "#   {replayed} change(s) replayed, {comments} kept as comments only; {} malformed log line(s) skipped",
        meta.malformed
    );
    if l.unplaced > 0 {
        let _ = writeln!(h, "#   {} of them skipped: {UNPLACED}", l.unplaced);
    }
    if let (false, Some(u)) = (undo, &meta.undo_name) {
        let _ = writeln!(h, "#   undo  {}", shown(u.as_bytes()));
    }
    h.push_str(
        "# Review every line, then run it as root on the host to change. It stops at the\n\
         # first write the kernel refuses or does not keep. Hierarchies are found in\n\
         # /proc/self/mountinfo; CGTOP_CGROUP2=DIR or CGTOP_V1_<CONTROLLER>=DIR (e.g.\n\
         # CGTOP_V1_CPU) name one instead. Devices are MAJ:MIN numbers as on the host\n\
         # the log was made on.\n",
    );
    if meta.persist && !undo {
        h.push_str("# systemd units: set-property without --runtime, so the change persists.\n");
    }
    h.push_str("set -eu\n\n");
    h.push_str(FUNCTIONS);
    h.push('\n');
    h
}

fn roots_block(roots: &[Root]) -> String {
    let mut s = String::new();
    for (i, r) in roots.iter().enumerate() {
        // key and env are checked words (see `v1_key`)
        let _ = writeln!(
            s,
            "cg_root \"${{{env}:-}}\" {env} {}; {}=$cg_r",
            r.key,
            root_var(i),
            env = r.env
        );
    }
    s
}

/// The apply and undo scripts of `entries`, in the log's order (see the
/// module doc).
pub fn scripts(entries: &[Entry], meta: &Meta) -> Scripts {
    let mut l = Lines::default();
    for e in entries {
        plan(e, meta.persist, &mut l);
    }
    let roots = roots_block(&l.roots);
    let mut apply = header(meta, false, &l);
    apply.push_str(&roots);
    for line in &l.apply {
        apply.push_str(line);
        apply.push('\n');
    }
    let _ = writeln!(apply, "echo 'cgtop script: {} change(s) made'", l.replayed);
    let mut undo = header(meta, true, &l);
    undo.push_str(&roots);
    for block in l.undo.iter().rev() {
        for line in block {
            undo.push_str(line);
            undo.push('\n');
        }
    }
    undo.push_str("echo 'cgtop script: undone'\n");
    Scripts {
        apply,
        undo,
        replayed: l.replayed,
        comments: l.comments,
        unplaced: l.unplaced,
    }
}

// ---------------------------------------------------------------------------
// --since.

/// Whether `t` is a time as the log writes it: "YYYY-MM-DDTHH:MM:SSZ".
pub fn is_log_time(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// `--since` as the log's time, so that entries compare as strings:
/// a time as the log writes it, a date ("2024-05-01", UTC midnight),
/// "2024-05-01 12:00[:SS]" or "...T12:00[:SS][Z]" (UTC), or an age
/// before `now_unix` ("30m", "2h", "1d", "90s").
pub fn parse_since(text: &str, now_unix: u64) -> Result<String, String> {
    let t = text.trim();
    let age = t.char_indices().last().and_then(|(i, unit)| {
        let n: u64 = t[..i].parse().ok()?;
        let mul = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        n.checked_mul(mul)
    });
    if let Some(secs) = age {
        return Ok(rfc3339(now_unix.saturating_sub(secs)));
    }
    let t = t.strip_suffix('Z').unwrap_or(t).replace(' ', "T");
    let full = match t.len() {
        10 => format!("{t}T00:00:00Z"),
        16 => format!("{t}:00Z"),
        19 => format!("{t}Z"),
        _ => String::new(),
    };
    if is_log_time(&full) {
        Ok(full)
    } else {
        Err(format!(
            "--since {:?}: give a UTC time (2024-05-01, 2024-05-01T12:00, 2024-05-01T12:00:00Z) or an age (30m, 2h, 1d)",
            shown(text.as_bytes())
        ))
    }
}

/// UTC time as RFC 3339 (the log's own format: "2024-05-01T12:00:00Z";
/// `source::actionlog::rfc3339_utc` is this). Days to a date by the
/// "civil from days" algorithm: eras of 400 years, years counted from
/// March so that the leap day is last.
pub fn rfc3339(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(place: Place, group: &str, file: &str, old: &str, new: &str) -> Entry {
        Entry {
            time: "2024-05-01T12:00:00Z".into(),
            place,
            group: group.as_bytes().to_vec(),
            what: What::Write {
                file: file.as_bytes().to_vec(),
                old: Some(old.as_bytes().to_vec()),
                new: new.as_bytes().to_vec(),
                stored: None,
            },
            result: Ok(()),
            real: Some(group.as_bytes().to_vec()),
            skipped: false,
        }
    }

    #[test]
    fn arguments_are_inert_and_decodable() {
        assert_eq!(sh_arg(b"a/b").unwrap(), "'a/b'");
        assert_eq!(sh_arg(b"it's").unwrap(), r"'it'\''s'");
        assert_eq!(sh_arg(b"a\\b").unwrap(), r"'a\\b'");
        assert_eq!(sh_arg(b"\n\x1b\xff").unwrap(), r"'\0012\0033\0377'");
        assert_eq!(sh_arg(b"a\0b"), None);
        for b in 1..=255u8 {
            let s = sh_arg(&[b, b'\'', b]).unwrap();
            assert!(s.bytes().all(|c| (0x20..=0x7e).contains(&c)), "{s}");
        }
    }

    #[test]
    fn paths_and_files_are_checked() {
        assert_eq!(checked_group(b"/a/b").unwrap(), GroupPath::new("a/b"));
        assert!(checked_group(b"/").unwrap().is_root());
        for bad in [&b"/a/../b"[..], b"/..", b"a", b"/a//b", b"/./a", b"/a/"] {
            assert_eq!(checked_group(bad), Err(Refusal::Path), "{bad:?}");
        }
        assert!(checked_file(b"cpu.max").is_ok());
        for bad in [&b"../x"[..], b"a/b", b".x", b"", b"a b", b"x$(id)"] {
            assert!(checked_file(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            v1_key("cpu,cpuacct").unwrap(),
            ("cpu".into(), "CGTOP_V1_CPU".into())
        );
        assert_eq!(
            v1_key("name=systemd").unwrap(),
            ("name=systemd".into(), "CGTOP_V1_NAME_SYSTEMD".into())
        );
        assert!(v1_key("cpu;x").is_err());
        assert!(v1_key("v1#0").is_err());
        // a word of the mount options that is no controller (SELinux's
        // seclabel, as an older cgtop logged it) names no hierarchy: the
        // script would look up the first mount with that option
        assert_eq!(v1_key("seclabel,cpu,cpuacct"), Err(Refusal::Hierarchy));
        assert_eq!(v1_key("seclabel"), Err(Refusal::Hierarchy));
    }

    #[test]
    fn since_takes_times_dates_and_ages() {
        let now = 1_714_564_800; // 2024-05-01T12:00:00Z
        assert_eq!(parse_since("2h", now).unwrap(), "2024-05-01T10:00:00Z");
        assert_eq!(
            parse_since("2024-04-30", now).unwrap(),
            "2024-04-30T00:00:00Z"
        );
        assert_eq!(
            parse_since("2024-04-30 08:15", now).unwrap(),
            "2024-04-30T08:15:00Z"
        );
        assert_eq!(
            parse_since("2024-04-30T08:15:07Z", now).unwrap(),
            "2024-04-30T08:15:07Z"
        );
        assert!(parse_since("yesterday", now).is_err());
        assert_eq!(rfc3339(now), "2024-05-01T12:00:00Z");
    }

    #[test]
    fn a_cpu_max_on_a_plain_group_is_a_checked_write_and_its_undo() {
        let s = scripts(
            &[w(
                Place::V2,
                "/lab",
                "cpu.max",
                "max 100000",
                "50000 100000",
            )],
            &Meta::default(),
        );
        assert!(
            s.apply.contains(
                "cg_write \"$cg_h0\" 'lab' 'cpu.max' '50000 100000' exact '50000 100000'"
            ),
            "{}",
            s.apply
        );
        assert!(s
            .apply
            .contains("cg_root \"${CGTOP_CGROUP2:-}\" CGTOP_CGROUP2 cgroup2; cg_h0=$cg_r"));
        assert!(
            s.undo
                .contains("cg_write \"$cg_h0\" 'lab' 'cpu.max' 'max 100000' exact 'max 100000'"),
            "{}",
            s.undo
        );
        assert_eq!((s.replayed, s.comments), (1, 0));
    }

    #[test]
    fn a_systemd_unit_goes_through_systemctl_runtime_unless_persist() {
        let e = w(
            Place::V2,
            "/system.slice/nginx.service",
            "memory.max",
            "max",
            "1073741824",
        );
        let s = scripts(std::slice::from_ref(&e), &Meta::default());
        assert!(
            s.apply.contains(
                "\nsystemctl set-property --runtime nginx.service MemoryMax=1073741824\n"
            ),
            "{}",
            s.apply
        );
        assert!(s
            .undo
            .contains("\nsystemctl set-property --runtime nginx.service MemoryMax=infinity\n"));
        let p = scripts(
            &[e],
            &Meta {
                persist: true,
                ..Meta::default()
            },
        );
        assert!(p
            .apply
            .contains("\nsystemctl set-property nginx.service MemoryMax=1073741824\n"));
    }

    #[test]
    fn a_containers_group_says_its_owners_way_in_comments() {
        let id = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
        let g = format!("/system.slice/docker-{id}.scope");
        let cpu = w(Place::V2, &g, "cpu.max", "max 100000", "50000 100000");
        let kill = w(Place::V2, &g, "cgroup.kill", "-", "1");
        let s = scripts(&[cpu, kill], &Meta::default());
        assert!(
            s.apply.contains(
                "\n#   owned by docker container 046c7a5b3d2e, as its name alone says\n#   the owner is not yet known: "
            ),
            "{}",
            s.apply
        );
        // the log has the name only, anyone's to choose in a delegated
        // subtree: no runtime's command, not even as a comment
        assert!(!s.apply.contains("docker's way"), "{}", s.apply);
        assert!(
            !s.apply.contains(&format!("docker kill {id}")),
            "{}",
            s.apply
        );
        // comments only: no line of the script runs docker
        assert!(!s.apply.lines().any(|l| l.starts_with("docker")));
        let plain = w(Place::V2, "/batch", "cpu.max", "max 100000", "50000 100000");
        assert!(!scripts(&[plain], &Meta::default())
            .apply
            .contains("owned by"));
    }

    #[test]
    fn checks_follow_the_kernels_normal_forms() {
        let g = GroupPath::new("a");
        let c = |file: &str, v: &str| {
            check_of(op_of(HierId::V2, &g, file, v).as_write().unwrap(), None)
        };
        assert_eq!(
            c("io.max", "8:0 wbps=1048576"),
            Some(Check::IoMax(
                DevId { major: 8, minor: 0 },
                vec!["wbps=1048576".into()]
            ))
        );
        assert_eq!(
            c("io.weight", "100"),
            Some(Check::Line("default 100".into()))
        );
        assert_eq!(
            c("io.weight", "8:0 default"),
            Some(Check::NoLine(DevId { major: 8, minor: 0 }))
        );
        assert_eq!(
            c("cgroup.subtree_control", "+cpu -io"),
            Some(Check::Controllers(vec![
                ControllerChange::enable("cpu"),
                ControllerChange::disable("io")
            ]))
        );
        assert_eq!(c("cgroup.freeze", "1"), None);
        assert_eq!(c("odd.file", "x"), Some(Check::Raw(b"x".to_vec())));
        let v1 = |file: &str, v: &str| {
            check_of(op_of(HierId::V1(0), &g, file, v).as_write().unwrap(), None)
        };
        assert_eq!(v1("memory.limit_in_bytes", "-1"), Some(Check::V1Unlimited));
        assert_eq!(
            v1("cpu.cfs_quota_us", "-1"),
            Some(Check::Exact(b"-1".to_vec()))
        );
        assert_eq!(
            v1("blkio.throttle.write_bps_device", "8:0 0"),
            Some(Check::NoLine(DevId { major: 8, minor: 0 }))
        );
        // page rounding where the log was made: the stored value is wanted
        let m = op_of(HierId::V2, &g, "memory.max", "1000");
        assert_eq!(
            check_of(m.as_write().unwrap(), Some(b"0")),
            Some(Check::Exact(b"0".to_vec()))
        );
    }

    #[test]
    fn moves_kills_freezes_and_failures_are_comments() {
        let mut failed = w(Place::V2, "/a", "memory.max", "max", "1");
        failed.result = Err(b"EBUSY\n$(reboot)".to_vec());
        let s = scripts(
            &[
                w(Place::V2, "/a", "cgroup.procs", "/b", "1234"),
                w(Place::V2, "/a", "cgroup.kill", "-", "1"),
                w(Place::V2, "/a", "cgroup.freeze", "0", "1"),
                w(
                    Place::V1("freezer".into()),
                    "/a",
                    "freezer.state",
                    "THAWED",
                    "FROZEN",
                ),
                failed,
            ],
            &Meta::default(),
        );
        assert_eq!((s.replayed, s.comments), (0, 5));
        assert!(!s.apply.contains("cg_write '"), "{}", s.apply);
        assert!(s
            .apply
            .contains("#   not replayed: a process id means nothing"));
        assert!(s
            .apply
            .contains("#   not replayed: it failed here (EBUSY\\n$(reboot))"));
        for l in s
            .apply
            .lines()
            .skip_while(|l| !l.starts_with("# --- the changes"))
        {
            assert!(l.starts_with('#') || l.starts_with("echo "), "{l}");
        }
    }
}
