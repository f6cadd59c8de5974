//! The action log: one line per performed op, appended to
//! `$XDG_STATE_HOME/cgtop/actions.log` (default
//! `~/.local/state/cgtop/actions.log`), so that an operator can see later
//! what cgtop changed, what it replaced, and what the kernel said.
//!
//! Logging never blocks a write: the write has already happened when the
//! line is appended, and a failure to log comes back as an error for the
//! status line. Formatting is pure; the clock is a parameter.
//!
//! # Where, as root
//!
//! cgtop runs as root with the caller's environment (`su` keeps
//! `XDG_STATE_HOME`, `su -m` and `sudo -E` keep `HOME`), so the directory
//! that the environment names may belong to someone else. The log is
//! therefore opened one component at a time from `/`, each directory with
//! `O_DIRECTORY | O_NOFOLLOW` and checked with `fstat` (never a path that a
//! symlink could redirect), the file with `O_NOFOLLOW | O_APPEND | O_CREAT`
//! (mode 0600; missing directories are made 0700). A place is refused when
//! any component is a symlink, when a directory is owned by anyone but the
//! user (root: uid 0; others: root or themselves, and the log's own
//! directory by themselves), when a directory can be written by group or
//! others (a root-owned sticky directory such as `/tmp` excepted: nobody
//! else can rename what lies in it), or when the file is not a regular file
//! with one link. Refused as root, the log falls back to root's own home
//! from the password database, then to `/var/log/cgtop/actions.log`; the
//! log screen says where it went and why.
//!
//! # The line, and why no line can be forged or run
//!
//! ```text
//! TIME GROUP FILE OLD to NEW [stored VALUE] [via systemd] ok|skipped|failed ERROR [at REAL] [note NOTE]...
//! TIME GROUP mkdir|rmdir ok|skipped|failed ERROR [at REAL] [note NOTE]...
//! TIME GROUP FILE[,FILE]... effect WRITE-TIME WORDS
//! ```
//!
//! GROUP is the path in the view (under `--root`, relative to the
//! directory given); REAL is where the writer's handle found the group in
//! its hierarchy, from the hierarchy's root (`Hier::real_group`): the only
//! path a script replays a line at. A line without it (written before it
//! was recorded, or where the place could not be told) is never replayed.
//! `skipped`: nothing was done (a mkdir, rmdir or move in a v1 hierarchy
//! without the group), never replayed either.
//!
//! The third is the effect of a write (`model::write::effect`), appended when its
//! after window is in, a few seconds after the write's own line: it names
//! the write by its group, files and time (WRITE-TIME is the TIME of the
//! write's own line) and says the figures before and after in WORDS, one
//! field like any other.
//!
//! Every field (group, file, values, the kernel's error text, notes) is
//! written through [`field`]: first `model::tree::text::escape` (control
//! characters as `\n`, `\e`, `\x9b`, ..., so a line is always one line), then
//! the characters a shell acts on even inside double quotes, `$`, `` ` ``,
//! `"` and `!`, as `\x24`, `\x60`, `\x22`, `\x21` (a backslash that would
//! read as part of one of these is doubled); a field with anything but
//! letters, digits and `@%+=:,./_-` is put in double quotes. Pasted into a
//! shell, a line is one command name (the time) and inert words: no `$(`,
//! no backtick, no `;`, `|`, `&` or `>` outside quotes. [`unfield`] gives
//! back the exact bytes.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use crate::model::files::script::{is_log_time, scripts, Entry, Meta, Place, What};
use crate::model::host::layout::{HierId, Layout, V1Mount};
use crate::model::tree::text;
use crate::model::write::effect::Record;
use crate::model::write::outcome::WriteOutcome;
use crate::model::write::{Op, WriteKind};
use crate::model::Errno;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat, CWD};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{BufRead, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the log goes: `$XDG_STATE_HOME/cgtop/actions.log`, or
/// `$HOME/.local/state/cgtop/actions.log`. A relative XDG_STATE_HOME is
/// ignored, as the XDG base directory spec requires. `None` without a
/// usable directory.
pub fn log_path(xdg_state_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    env_place(xdg_state_home, home).map(|(_, p)| p)
}

/// The place the environment names, and which variable named it.
fn env_place(xdg_state_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<(Source, PathBuf)> {
    let xdg = xdg_state_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|p| (Source::XdgStateHome, p.join("cgtop").join("actions.log")));
    xdg.or_else(|| {
        home.map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| (Source::Home, h.join(".local/state/cgtop/actions.log")))
    })
}

/// UTC time as RFC 3339: "2024-05-01T12:00:00Z" (the one formatter, in
/// the pure layer, that the scripts made from the log use too).
pub fn rfc3339_utc(unix_secs: u64) -> String {
    crate::model::files::script::rfc3339(unix_secs)
}

// ---------------------------------------------------------------------------
// Fields.

/// Characters a shell acts on inside double quotes (and `"` itself), with
/// the hex escape each is written as.
const SHELL_ACTIVE: [(char, &str); 4] = [('$', "x24"), ('`', "x60"), ('"', "x22"), ('!', "x21")];

fn hex_of_active(c: char) -> Option<&'static str> {
    SHELL_ACTIVE.iter().find(|(a, _)| *a == c).map(|(_, h)| *h)
}

/// True when `rest` starts like one of our extra escapes (`x24`, ...) or a
/// shell-active character, so that a backslash before it must be doubled.
fn starts_active(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| hex_of_active(c).is_some())
        || SHELL_ACTIVE.iter().any(|(_, h)| rest.starts_with(h))
}

/// One field of a log line (see the module doc): escaped, and quoted
/// unless plain.
pub fn field(bytes: &[u8]) -> String {
    let shown = text::escape(bytes);
    let mut out = String::with_capacity(shown.len() + 2);
    let mut rest = shown.as_ref();
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        if c == '\\' {
            if let Some(a) = after.strip_prefix('\\') {
                // an escaped backslash from `text::escape`: one token
                out.push_str("\\\\");
                rest = a;
                continue;
            }
            // a lone backslash: a literal one, or the start of an escape;
            // doubled where it would read as one of ours or end the quote
            out.push('\\');
            if after.is_empty() || starts_active(after) {
                out.push('\\');
            }
        } else if let Some(h) = hex_of_active(c) {
            out.push('\\');
            out.push_str(h);
        } else {
            out.push(c);
        }
        rest = after;
    }
    let plain = !out.is_empty()
        && out
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c) || !c.is_ascii());
    if plain {
        out
    } else {
        format!("\"{out}\"")
    }
}

/// The bytes a [`field`] stands for.
pub fn unfield(f: &str) -> Vec<u8> {
    let inner = f
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(f);
    let mut shown = String::with_capacity(inner.len());
    let mut rest = inner;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        if c == '\\' {
            if let Some(a) = after.strip_prefix('\\') {
                shown.push_str("\\\\");
                rest = a;
                continue;
            }
            if let Some((a, h)) = SHELL_ACTIVE.iter().find(|(_, h)| after.starts_with(h)) {
                shown.push(*a);
                rest = &after[h.len()..];
                continue;
            }
        }
        shown.push(c);
        rest = after;
    }
    text::unescape(&shown)
}

/// A group path as a field, from its bytes (its `Display` is escaped
/// already, and escaping that again would double every backslash).
fn path_field(p: &crate::model::GroupPath) -> String {
    let mut b = Vec::with_capacity(p.as_bytes().len() + 1);
    b.push(b'/');
    b.extend_from_slice(p.as_bytes());
    field(&b)
}

fn field_str(s: &str) -> String {
    field(s.as_bytes())
}

/// One log line, without the newline:
///
/// ```text
/// 2024-05-01T12:00:00Z /a/b memory.max max to 1000 stored 0 ok
/// 2024-05-01T12:00:00Z /a/b cgroup.kill - to 1 ok
/// 2024-05-01T12:00:00Z /a/b mkdir ok
/// 2024-05-01T12:00:00Z /a/b rmdir failed "rmdir /a/b: ... [EBUSY]"
/// 2024-05-01T12:00:00Z /system.slice/web.service memory.max max to 1073741824 via systemd ok
/// ```
///
/// `via systemd`: the change was made by `systemctl set-property
/// --runtime` (`model::write::Via::Systemd`); the old and stored values
/// are the file's, read by cgtop before and after.
pub fn format_line(unix_secs: u64, o: &WriteOutcome) -> String {
    format_line_in(unix_secs, o, &Layout::default())
}

/// [`format_line`] with the hierarchy of a cgroup v1 op before its path,
/// as the kernel names it in /proc/PID/cgroup:
///
/// ```text
/// 2024-05-01T12:00:00Z blkio:/a/b blkio.throttle.write_bps_device "" to "8:0 1048576" ok
/// 2024-05-01T12:00:00Z cpu,cpuacct:/a/b mkdir ok
/// ```
pub fn format_line_in(unix_secs: u64, o: &WriteOutcome, layout: &Layout) -> String {
    let time = rfc3339_utc(unix_secs);
    let place = |p: &crate::model::GroupPath| match o.op.hier() {
        HierId::V1(i) => {
            let label = layout
                .v1
                .get(i)
                .map_or_else(|| format!("v1#{i}"), V1Mount::label);
            format!("{}:{}", field_str(&label), path_field(p))
        }
        HierId::V2 => path_field(p),
    };
    let mut line = match &o.op {
        Op::CreateGroup(p, ..) => format!("{time} {} mkdir", place(p)),
        Op::RemoveGroup(p, _, _) => format!("{time} {} rmdir", place(p)),
        Op::Write(w) => {
            // a move's old value is the group the process left: a path
            // field like the group's own, its exact bytes (escaped once)
            let old = match (&w.kind, o.old_group()) {
                (_, Some(g)) => path_field(&g),
                (WriteKind::MoveProcess { .. }, None) => "-".to_owned(),
                _ => o
                    .old
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), |t| field_str(t.trim_end())),
            };
            let mut s = format!(
                "{time} {} {} {old} to {}",
                place(&w.group),
                field_str(&w.file),
                field_str(&w.contents)
            );
            if let Some(rb) = &o.new_readback {
                let rb = rb.trim_end();
                if o.is_ok() && rb != w.contents.trim() {
                    s.push_str(" stored ");
                    s.push_str(&field_str(rb));
                }
            }
            // made by systemctl, not by cgtop's write(2)
            if matches!(w.via, crate::model::write::Via::Systemd { .. }) {
                s.push_str(" via systemd");
            }
            s
        }
    };
    match &o.result {
        Ok(()) if o.skipped => line.push_str(" skipped"),
        Ok(()) => line.push_str(" ok"),
        Err(e) => {
            line.push_str(" failed ");
            line.push_str(&field_str(&e.to_string()));
        }
    }
    // where the group really is in its hierarchy (under --root, not the
    // view's path above): the one path a script may replay the line at
    if let Some(r) = &o.real {
        line.push_str(" at ");
        line.push_str(&path_field(r));
    }
    for n in &o.notes {
        line.push_str(" note ");
        line.push_str(&field_str(n));
    }
    line
}

/// The effect line of a write (see the module doc), without the newline:
///
/// ```text
/// 2024-05-01T12:00:07Z /lab cpu.max effect 2024-05-01T12:00:00Z "cpu.max 30%: CPU 98.0% -> 29.9% (5 s each side)"
/// ```
pub fn format_effect_line(unix_secs: u64, r: &Record) -> String {
    let files = if r.files.is_empty() {
        "-".to_owned()
    } else {
        field_str(&r.files.join(","))
    };
    format!(
        "{} {} {files} effect {} {}",
        rfc3339_utc(unix_secs),
        path_field(&r.group),
        rfc3339_utc(r.written_unix_secs),
        field_str(&r.words)
    )
}

// ---------------------------------------------------------------------------
// Where the log may go.

/// What named a place for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    XdgStateHome,
    Home,
    /// root's home directory from the password database.
    RootHome,
    /// `/var/log/cgtop`.
    SystemLog,
    /// A path given by the caller ([`ActionLog::at`]).
    Given,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::XdgStateHome => "XDG_STATE_HOME",
            Self::Home => "HOME",
            Self::RootHome => "root's home",
            Self::SystemLog => "/var/log/cgtop",
            Self::Given => "the log",
        })
    }
}

/// Why a place for the log was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsafe {
    /// A directory owned by someone else.
    NotOwned {
        path: PathBuf,
        owner: u32,
        want: u32,
    },
    /// A directory or the file that group or others can write.
    Writable {
        path: PathBuf,
        mode: u32,
    },
    Symlink(PathBuf),
    NotDirectory(PathBuf),
    /// The log is a FIFO, a device, a directory...
    NotRegular(PathBuf),
    /// The log has hard links: another name could be a file of someone
    /// else's choosing.
    Links {
        path: PathBuf,
        links: u64,
    },
    /// `.` or `..` in the path, or not absolute.
    NotPlain(PathBuf),
    Io {
        path: PathBuf,
        errno: Errno,
    },
}

impl fmt::Display for Unsafe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = |p: &Path| text::escape(p.as_os_str().as_encoded_bytes()).into_owned();
        match self {
            Self::NotOwned { path, owner, want } => {
                let who = if *want == 0 {
                    "root".to_owned()
                } else {
                    format!("uid {want}")
                };
                write!(f, "{} is owned by uid {owner}, not {who}", p(path))
            }
            Self::Writable { path, mode } => write!(
                f,
                "{} can be written by others (mode {:04o})",
                p(path),
                mode & 0o7777
            ),
            Self::Symlink(path) => write!(f, "{} is a symbolic link", p(path)),
            Self::NotDirectory(path) => write!(f, "{} is not a directory", p(path)),
            Self::NotRegular(path) => write!(f, "{} is not a regular file", p(path)),
            Self::Links { path, links } => {
                write!(f, "{} has {links} hard links", p(path))
            }
            Self::NotPlain(path) => {
                write!(f, "{} is not a plain absolute path", p(path))
            }
            Self::Io { path, errno } => write!(f, "{}: {}", p(path), std::io::Error::from(*errno)),
        }
    }
}

/// A place that was passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub source: Source,
    pub path: PathBuf,
    pub why: Unsafe,
}

/// Where the log goes, as the log screen tells it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogPlace {
    /// The file; `None` when cgtop cannot log at all.
    pub path: Option<PathBuf>,
    /// Places tried first and refused, in order.
    pub skipped: Vec<Skipped>,
}

/// The inputs of the choice of a log file, as values, so that tests can
/// give their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEnv {
    pub euid: u32,
    pub xdg_state_home: Option<OsString>,
    pub home: Option<OsString>,
    /// root's home from the password database.
    pub root_home: Option<PathBuf>,
    /// The last resort for root: `/var/log/cgtop/actions.log`.
    pub system_log: PathBuf,
}

impl LogEnv {
    /// This process's: the effective uid, its environment, and uid 0's
    /// home from `/etc/passwd`.
    pub fn current() -> Self {
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        Self {
            euid: rustix::process::geteuid().as_raw(),
            xdg_state_home: std::env::var_os("XDG_STATE_HOME"),
            home: std::env::var_os("HOME"),
            root_home: root_home(&passwd),
            system_log: PathBuf::from("/var/log/cgtop/actions.log"),
        }
    }

    /// The places to try, in order: the environment's, then (for root
    /// only) root's home and /var/log/cgtop.
    fn candidates(&self) -> Vec<(Source, PathBuf)> {
        let mut out: Vec<(Source, PathBuf)> =
            env_place(self.xdg_state_home.as_deref(), self.home.as_deref())
                .into_iter()
                .collect();
        if self.euid == 0 {
            if let Some(h) = &self.root_home {
                out.push((Source::RootHome, h.join(".local/state/cgtop/actions.log")));
            }
            out.push((Source::SystemLog, self.system_log.clone()));
        }
        let mut seen = Vec::new();
        out.retain(|(_, p)| {
            let new = !seen.contains(p);
            seen.push(p.clone());
            new
        });
        out
    }
}

/// The home directory of uid 0 in `/etc/passwd` text
/// (`name:password:uid:gid:gecos:home:shell`): the first such line with an
/// absolute home.
pub fn root_home(passwd: &str) -> Option<PathBuf> {
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[2] == "0" && f[5].starts_with('/')).then(|| PathBuf::from(f[5]))
    })
}

/// Whether a directory may hold (the way to) the log of user `euid`.
/// `last`: it is the log's own directory. `read`: the file is only read
/// (a settings file), so a directory of root's is as good as one of
/// `euid`'s at every level, the last too.
fn check_dir(path: &Path, st: &Stat, euid: u32, last: bool, read: bool) -> Result<(), Unsafe> {
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(Unsafe::NotDirectory(path.to_owned()));
    }
    let owner = st.st_uid;
    let want = euid;
    let allowed = owner == euid || (euid != 0 && (!last || read) && owner == 0);
    if !allowed {
        return Err(Unsafe::NotOwned {
            path: path.to_owned(),
            owner,
            want,
        });
    }
    let mode = st.st_mode;
    let others_write = mode & 0o022 != 0;
    // a root-owned sticky directory (/tmp): others may add entries but not
    // rename or remove ours, and the next component is checked in turn
    let sticky_root = mode & 0o1000 != 0 && owner == 0 && !last;
    if others_write && !sticky_root {
        return Err(Unsafe::Writable {
            path: path.to_owned(),
            mode,
        });
    }
    Ok(())
}

/// Whether the file may be the log of user `euid` (`read`: a settings
/// file, which root may own too).
fn check_file(path: &Path, st: &Stat, euid: u32, read: bool) -> Result<(), Unsafe> {
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(Unsafe::NotRegular(path.to_owned()));
    }
    if st.st_nlink != 1 {
        return Err(Unsafe::Links {
            path: path.to_owned(),
            links: st.st_nlink,
        });
    }
    if st.st_uid != euid && !(read && st.st_uid == 0) {
        return Err(Unsafe::NotOwned {
            path: path.to_owned(),
            owner: st.st_uid,
            want: euid,
        });
    }
    if st.st_mode & 0o022 != 0 {
        return Err(Unsafe::Writable {
            path: path.to_owned(),
            mode: st.st_mode,
        });
    }
    Ok(())
}

/// How [`walk`] ends at the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Open {
    /// Check what is there, open nothing; a missing part is `Ok(None)`.
    Check,
    /// Make the missing directories (0700) and open the file for append
    /// (created 0600).
    Append,
    /// Open the file for reading; a missing part is `Ok(None)`.
    Read,
}

/// Walks `path` from `/` one component at a time without following a
/// symlink, checking each directory and the file (see [`Open`]).
fn walk(path: &Path, euid: u32, open: Open) -> Result<Option<OwnedFd>, Unsafe> {
    let read = open == Open::Read;
    let Some((dir, at, file)) = walk_dirs(path, euid, open == Open::Append, read)? else {
        return Ok(None);
    };
    let io = |at: &Path, e: Errno| Unsafe::Io {
        path: at.to_owned(),
        errno: e,
    };
    let fflags = match open {
        Open::Check => {
            return match rustix::fs::statat(&dir, &file, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                    Err(Unsafe::Symlink(at))
                }
                Ok(st) => check_file(&at, &st, euid, false).map(|()| None),
                Err(Errno::NOENT) => Ok(None),
                Err(e) => Err(io(&at, e)),
            };
        }
        // O_NONBLOCK: a FIFO planted as the log fails (ENXIO) instead of
        // waiting for a reader
        Open::Append => {
            OFlags::WRONLY
                | OFlags::APPEND
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::CLOEXEC
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
        }
        // O_NONBLOCK: opening a FIFO for reading does not wait for a
        // writer; fstat then refuses it before a byte is read
        Open::Read => {
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY
        }
    };
    if read {
        // a device is refused before it is opened (opening one can act:
        // a tape rewinds); the directory is no one else's, so what is
        // checked here is what is opened, and fstat checks it again
        match rustix::fs::statat(&dir, &file, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(Unsafe::Symlink(at));
            }
            Ok(st) => check_file(&at, &st, euid, read)?,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io(&at, e)),
        }
    }
    let fd = match rustix::fs::openat(&dir, &file, fflags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if read => return Ok(None),
        Err(e) => return Err(refusal(&dir, &file, &at, e)),
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| io(&at, e))?;
    check_file(&at, &st, euid, read)?;
    Ok(Some(fd))
}

/// Opens `path` for reading as [`walk`] does: no symlink anywhere, every
/// directory of `euid`'s or root's and written by no one else, the file
/// a regular one of `euid`'s or root's with one link, written by no one
/// else. `Ok(None)`: it is not there.
pub(crate) fn open_read(path: &Path, euid: u32) -> Result<Option<OwnedFd>, Unsafe> {
    walk(path, euid, Open::Read)
}

/// Opens the directories `dirs` from `/` one at a time without following
/// a symlink, each checked (see [`check_dir`]), the last as the file's own;
/// with `create`, a missing one is made 0700, else `Ok(None)` at the first
/// missing. The last directory and its path.
fn open_dirs(
    dirs: &[&OsStr],
    euid: u32,
    create: bool,
    read: bool,
) -> Result<Option<(OwnedFd, PathBuf)>, Unsafe> {
    let io = |at: &Path, e: Errno| Unsafe::Io {
        path: at.to_owned(),
        errno: e,
    };
    let dflags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut at = PathBuf::from("/");
    let mut dir = rustix::fs::openat(CWD, "/", dflags, Mode::empty()).map_err(|e| io(&at, e))?;
    let st = rustix::fs::fstat(&dir).map_err(|e| io(&at, e))?;
    check_dir(&at, &st, euid, dirs.is_empty(), read)?;
    for (i, name) in dirs.iter().enumerate() {
        at.push(name);
        let last = i + 1 == dirs.len();
        let next = match rustix::fs::openat(&dir, *name, dflags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(io(&at, e)),
                }
                rustix::fs::openat(&dir, *name, dflags, Mode::empty())
                    .map_err(|e| refusal(&dir, name, &at, e))?
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(refusal(&dir, name, &at, e)),
        };
        let st = rustix::fs::fstat(&next).map_err(|e| io(&at, e))?;
        check_dir(&at, &st, euid, last, read)?;
        dir = next;
    }
    Ok(Some((dir, at)))
}

/// The components of `path`, absolute and plain (no `.`, `..`).
fn plain_names(path: &Path) -> Result<Vec<&OsStr>, Unsafe> {
    let mut names = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) => names.push(n),
            _ => return Err(Unsafe::NotPlain(path.to_owned())),
        }
    }
    if !path.is_absolute() {
        return Err(Unsafe::NotPlain(path.to_owned()));
    }
    Ok(names)
}

/// The directory `path` (absolute, plain) opened through the checked walk,
/// made where missing, as the log's own directory is.
fn walk_dir(path: &Path, euid: u32) -> Result<OwnedFd, Unsafe> {
    let names = plain_names(path)?;
    match open_dirs(&names, euid, true, false)? {
        Some((fd, _)) => Ok(fd),
        None => Err(Unsafe::NotPlain(path.to_owned())),
    }
}

/// The walk to the directory of `path` (made, 0700, where missing with
/// `create`): that directory open, the file's path and its name.
/// `Ok(None)` where a directory is missing and not to be made.
pub(crate) fn walk_dirs(
    path: &Path,
    euid: u32,
    create: bool,
    read: bool,
) -> Result<Option<(OwnedFd, PathBuf, OsString)>, Unsafe> {
    let names = plain_names(path)?;
    let Some((file, dirs)) = names.split_last() else {
        return Err(Unsafe::NotPlain(path.to_owned()));
    };
    let Some((dir, mut at)) = open_dirs(dirs, euid, create, read)? else {
        return Ok(None);
    };
    at.push(file);
    Ok(Some((dir, at, (*file).to_owned())))
}

/// Words for an open that failed: a symlink or a non-directory where the
/// walk expected a directory or a plain file.
pub(crate) fn refusal(dir: &OwnedFd, name: &OsStr, at: &Path, e: Errno) -> Unsafe {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
            Unsafe::Symlink(at.to_owned())
        }
        Ok(_) if e == Errno::NOTDIR => Unsafe::NotDirectory(at.to_owned()),
        Ok(_) if e == Errno::NXIO => Unsafe::NotRegular(at.to_owned()),
        _ => Unsafe::Io {
            path: at.to_owned(),
            errno: e,
        },
    }
}

/// The log file, if there is a place for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionLog {
    place: LogPlace,
    euid: u32,
}

impl ActionLog {
    /// The place for this process: see [`Self::choose`].
    pub fn from_env() -> Self {
        Self::choose(&LogEnv::current())
    }

    /// The first place in `env` that passes the checks of the module doc
    /// (nothing is created yet: a missing directory will be made ours).
    pub fn choose(env: &LogEnv) -> Self {
        let mut skipped = Vec::new();
        for (source, path) in env.candidates() {
            match walk(&path, env.euid, Open::Check) {
                Ok(_) => {
                    return Self {
                        place: LogPlace {
                            path: Some(path),
                            skipped,
                        },
                        euid: env.euid,
                    }
                }
                Err(why) => skipped.push(Skipped { source, path, why }),
            }
        }
        Self {
            place: LogPlace {
                path: None,
                skipped,
            },
            euid: env.euid,
        }
    }

    /// Exactly this path, for this process's user, checked as any other.
    pub fn at(path: PathBuf) -> Self {
        Self {
            place: LogPlace {
                path: Some(path),
                skipped: Vec::new(),
            },
            euid: rustix::process::geteuid().as_raw(),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.place.path.as_deref()
    }

    /// Where the log goes and why, for the log screen.
    pub fn place(&self) -> &LogPlace {
        &self.place
    }

    /// Appends one outcome, creating the directories if needed, checked
    /// again on every append (a symlink planted since is refused). The
    /// error says which file and why, for the status line.
    pub fn append(&self, o: &WriteOutcome, at: SystemTime) -> Result<(), String> {
        self.append_in(o, &Layout::default(), at)
    }

    /// [`Self::append`], naming a cgroup v1 op's hierarchy from `layout`
    /// ([`format_line_in`]).
    pub fn append_in(
        &self,
        o: &WriteOutcome,
        layout: &Layout,
        at: SystemTime,
    ) -> Result<(), String> {
        let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.append_line(format_line_in(secs, o, layout))
    }

    /// Appends the effect line of a write ([`format_effect_line`]), the
    /// same way as a write's own line.
    pub fn append_effect(&self, r: &Record, at: SystemTime) -> Result<(), String> {
        let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.append_line(format_effect_line(secs, r))
    }

    /// One line, appended through the safe walk (see the module doc).
    fn append_line(&self, mut line: String) -> Result<(), String> {
        let Some(path) = &self.place.path else {
            return Err(match self.place.skipped.last() {
                None => "action log: neither XDG_STATE_HOME nor HOME is set, so nothing was logged"
                    .into(),
                Some(s) => format!(
                    "action log: no safe place ({}), so nothing was logged",
                    s.why
                ),
            });
        };
        line.push('\n');
        let shown = text::escape(path.as_os_str().as_encoded_bytes()).into_owned();
        let fd = match walk(path, self.euid, Open::Append) {
            Ok(Some(fd)) => fd,
            Ok(None) => return Err(format!("action log {shown}: could not be opened")),
            Err(why) => return Err(format!("action log {shown}: refused: {why}")),
        };
        std::fs::File::from(fd)
            .write_all(line.as_bytes())
            .map_err(|e| format!("action log {shown}: {e}"))
    }
}

// ---------------------------------------------------------------------------
// Reading the log back (`cgtop export-log`, the log screen's script).

/// The longest line the reader takes; a longer one is skipped as
/// malformed without being held in memory (cgtop's own lines are far
/// shorter: a group path is at most a few KiB escaped).
pub const MAX_LINE: usize = 64 * 1024;

/// The most entries one read keeps: past it they are counted, not kept
/// (`--since` narrows the read).
pub const MAX_ENTRIES: usize = 200_000;

/// One line of the log, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Boxed: an entry is a dozen fields, an effect line none.
    Entry(Box<Entry>),
    /// The effect line of a write (not a change of its own).
    Effect,
}

/// What a read of the log found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRead {
    /// The entries at or after `since`, in the log's order.
    pub entries: Vec<Entry>,
    pub lines: u64,
    /// Lines that are not lines cgtop writes (too long, not UTF-8, a
    /// field out of place): skipped.
    pub malformed: u64,
    /// The number of the first malformed line (from 1).
    pub first_malformed: Option<u64>,
    pub effects: u64,
    /// Entries before `since`, skipped.
    pub before: u64,
    /// Entries past [`MAX_ENTRIES`], counted and dropped.
    pub over_cap: u64,
}

/// A log line's fields: split at spaces outside double quotes (a quoted
/// field holds no raw `"`: [`field`] writes it as `\x22`). `None` for an
/// empty field or an open quote.
fn tokens(line: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                out.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&line[start..]);
    (!quoted && out.iter().all(|t| !t.is_empty())).then_some(out)
}

/// The end of a line: how it went, where, and the notes.
struct End {
    result: Result<(), Vec<u8>>,
    skipped: bool,
    real: Option<Vec<u8>>,
}

/// `ok`, `skipped` or `failed ERROR`, then `at PATH` (lines before it was
/// recorded have none), then `note NOTE` pairs: the end of a line.
fn result_of(rest: &[&str]) -> Option<End> {
    let (result, skipped, rest) = match rest {
        ["ok", rest @ ..] => (Ok(()), false, rest),
        ["skipped", rest @ ..] => (Ok(()), true, rest),
        ["failed", e, rest @ ..] => (Err(unfield(e)), false, rest),
        _ => return None,
    };
    let (real, notes) = match rest {
        ["at", p, notes @ ..] if p.starts_with('/') || p.starts_with("\"/") => {
            (Some(unfield(p)), notes)
        }
        notes => (None, notes),
    };
    (notes.len() % 2 == 0 && notes.chunks(2).all(|p| p[0] == "note")).then_some(End {
        result,
        skipped,
        real,
    })
}

/// One line of the log (see the module doc), or `None` when it is not a
/// line cgtop writes.
pub fn parse_line(line: &str) -> Option<Parsed> {
    let t = tokens(line)?;
    let (time, place, rest) = match t.as_slice() {
        [time, place, rest @ ..] if is_log_time(time) => (*time, *place, rest),
        _ => return None,
    };
    let (place, group) = if place.starts_with('"') || place.starts_with('/') {
        (Place::V2, unfield(place))
    } else {
        let (label, path) = place.split_once(':')?;
        let plain = !label.is_empty() && !label.contains('"') && !label.contains('\\');
        (plain && (path.starts_with('/') || path.starts_with('"'))).then_some(())?;
        (Place::V1(label.to_owned()), unfield(path))
    };
    let entry = |what, end: End| {
        Some(Parsed::Entry(Box::new(Entry {
            time: time.to_owned(),
            place: place.clone(),
            group: group.clone(),
            what,
            result: end.result,
            real: end.real,
            skipped: end.skipped,
        })))
    };
    match rest {
        [dir @ ("mkdir" | "rmdir"), end @ ..] if result_of(end).is_some() => {
            let what = if *dir == "mkdir" {
                What::Mkdir
            } else {
                What::Rmdir
            };
            entry(what, result_of(end)?)
        }
        [_, "effect", w, _] if is_log_time(w) => Some(Parsed::Effect),
        [file, old, "to", new, end @ ..] => {
            let (stored, end) = match end {
                ["stored", v, end @ ..] => (Some(unfield(v)), end),
                _ => (None, end),
            };
            // a change made through systemd (`via systemd`): the script
            // gives a unit's change to systemctl whichever way it was made
            let end = match end {
                ["via", "systemd", end @ ..] => end,
                _ => end,
            };
            let what = What::Write {
                file: unfield(file),
                old: (*old != "-").then(|| unfield(old)),
                new: unfield(new),
                stored,
            };
            entry(what, result_of(end)?)
        }
        _ => None,
    }
}

/// Reads one line into `buf` (without its newline) unless it is longer
/// than `cap`; the bytes consumed (0 at the end) and whether it was too
/// long. A long line is passed over in chunks, never held whole.
fn read_capped(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(usize, bool)> {
    buf.clear();
    let (mut total, mut long) = (0, false);
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((total, long));
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let body = &avail[..if done { take - 1 } else { take }];
        if !long {
            if buf.len() + body.len() > cap {
                long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(body);
            }
        }
        r.consume(take);
        total += take;
        if done {
            return Ok((total, long));
        }
    }
}

/// Reads a whole log, line by line (see [`LogRead`]): entries before
/// `since` (a time as the log writes it) are skipped, malformed lines
/// counted; never a panic whatever the bytes.
pub fn read_log(mut r: impl BufRead, since: Option<&str>) -> std::io::Result<LogRead> {
    let mut out = LogRead::default();
    let mut buf = Vec::new();
    loop {
        let (n, long) = read_capped(&mut r, &mut buf, MAX_LINE)?;
        if n == 0 {
            return Ok(out);
        }
        out.lines += 1;
        let parsed = if long {
            None
        } else {
            std::str::from_utf8(&buf).ok().and_then(parse_line)
        };
        match parsed {
            None => {
                out.malformed += 1;
                out.first_malformed.get_or_insert(out.lines);
            }
            Some(Parsed::Effect) => out.effects += 1,
            Some(Parsed::Entry(e)) => {
                if since.is_some_and(|s| e.time.as_str() < s) {
                    out.before += 1;
                } else if out.entries.len() >= MAX_ENTRIES {
                    out.over_cap += 1;
                } else {
                    out.entries.push(*e);
                }
            }
        }
    }
}

/// The entries of this session's outcomes, as the log has them: each
/// formatted as its log line and read back, so that the log screen's
/// script and `cgtop export-log` see the same thing.
pub fn entries_of<'a>(
    outcomes: impl IntoIterator<Item = (u64, &'a WriteOutcome)>,
    layout: &Layout,
) -> Vec<Entry> {
    outcomes
        .into_iter()
        .filter_map(|(t, o)| match parse_line(&format_line_in(t, o, layout)) {
            Some(Parsed::Entry(e)) => Some(*e),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Script files.

/// Opens `name` in `dir` as a new file of this user's (O_EXCL, never a
/// link), or with `force` an existing regular file of this user's with
/// one link, emptied; then writes `text` and sets mode 0700 (a script
/// meant to be run as root). `shown`: the path for the error.
fn write_script_at(
    dir: &impl rustix::fd::AsFd,
    name: &Path,
    text: &str,
    force: bool,
    euid: u32,
) -> Result<(), String> {
    let shown = text::escape(name.as_os_str().as_encoded_bytes()).into_owned();
    let base =
        OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    let mode = Mode::from_raw_mode(0o700);
    let fd = match rustix::fs::openat(dir, name, base | OFlags::CREATE | OFlags::EXCL, mode) {
        Ok(fd) => fd,
        Err(Errno::EXIST) if force => {
            let fd = rustix::fs::openat(dir, name, base, Mode::empty())
                .map_err(|e| format!("{shown}: {}", std::io::Error::from(e)))?;
            let st = rustix::fs::fstat(&fd).map_err(|e| format!("{shown}: {e}"))?;
            check_file(name, &st, euid, false).map_err(|why| format!("{shown}: refused: {why}"))?;
            rustix::fs::ftruncate(&fd, 0).map_err(|e| format!("{shown}: {e}"))?;
            fd
        }
        Err(Errno::EXIST) => return Err(format!("{shown} exists (give --force to replace it)")),
        Err(Errno::LOOP) => return Err(format!("{shown}: refused: a symbolic link")),
        Err(e) => return Err(format!("{shown}: {}", std::io::Error::from(e))),
    };
    rustix::fs::fchmod(&fd, mode).map_err(|e| format!("{shown}: {e}"))?;
    std::fs::File::from(fd)
        .write_all(text.as_bytes())
        .map_err(|e| format!("{shown}: {e}"))
}

/// Where `cgtop export-log -o FILE` writes: FILE's directory opened
/// through the log's checked walk (FILE made absolute; no `.` or `..`, no
/// symbolic link on the way, each directory this user's, or root's for
/// another user above the last, and writable by no one else but a sticky
/// /tmp), and FILE's name in it. A script is run as root: a directory
/// another user may change could swap it after it is written.
pub fn script_place(path: &Path) -> Result<(OwnedFd, OsString), String> {
    let shown = text::escape(path.as_os_str().as_encoded_bytes()).into_owned();
    let abs = std::path::absolute(path).map_err(|e| format!("{shown}: {e}"))?;
    match walk_dirs(&abs, rustix::process::geteuid().as_raw(), false, false) {
        Ok(Some((dir, _, name))) => Ok((dir, name)),
        Ok(None) => Err(format!("{shown}: no such directory")),
        Err(why) => Err(format!("{shown}: refused: {why}")),
    }
}

/// `cgtop export-log -o FILE`: FILE as a new script (see
/// [`write_script_at`]) at its [`script_place`].
pub fn write_script(place: &(OwnedFd, OsString), text: &str, force: bool) -> Result<(), String> {
    let euid = rustix::process::geteuid().as_raw();
    write_script_at(&place.0, Path::new(&place.1), text, force, euid)
}

impl ActionLog {
    /// The log screen's script (`e`): this session's `entries` as the
    /// apply and undo scripts, new files beside the log
    /// (`cgtop-YYYYMMDD-HHMMSS.sh` and `.undo.sh`; `-1`, `-2`, ... after
    /// the time when taken), its directory reached through the log's own
    /// checked walk (no symlink, owned, not writable by others). The
    /// paths written.
    pub fn write_session_script(
        &self,
        entries: &[Entry],
        at: SystemTime,
    ) -> Result<(PathBuf, PathBuf), String> {
        let Some(path) = &self.place.path else {
            return Err("no safe place for the action log, so none for its script".into());
        };
        let dir_path = path.parent().unwrap_or(Path::new("/"));
        let shown = text::escape(dir_path.as_os_str().as_encoded_bytes()).into_owned();
        let dir =
            walk_dir(dir_path, self.euid).map_err(|why| format!("{shown}: refused: {why}"))?;
        let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let t = rfc3339_utc(secs);
        let stamp = format!(
            "{}{}{}-{}{}{}",
            &t[0..4],
            &t[5..7],
            &t[8..10],
            &t[11..13],
            &t[14..16],
            &t[17..19]
        );
        let mut source = b"this session's writes, as logged in ".to_vec();
        source.extend_from_slice(path.as_os_str().as_encoded_bytes());
        for n in 0..100 {
            let base = if n == 0 {
                format!("cgtop-{stamp}")
            } else {
                format!("cgtop-{stamp}-{n}")
            };
            let (a, u) = (format!("{base}.sh"), format!("{base}.undo.sh"));
            let meta = Meta {
                made: t.clone(),
                host: rustix::system::uname().nodename().to_bytes().to_vec(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                source: source.clone(),
                undo_name: Some(u.clone()),
                apply_name: Some(a.clone()),
                ..Meta::default()
            };
            let s = scripts(entries, &meta);
            match write_script_at(&dir, Path::new(&a), &s.apply, false, self.euid) {
                Ok(()) => {
                    write_script_at(&dir, Path::new(&u), &s.undo, false, self.euid)?;
                    return Ok((dir_path.join(a), dir_path.join(u)));
                }
                Err(e) if e.contains(" exists ") => {}
                Err(e) => return Err(e),
            }
        }
        Err(format!("{shown}: no free name for the script"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CpuMax, Limit};
    use crate::model::write::explain::{explain, ErrorContext};
    use crate::model::write::input::MemoryFile;
    use crate::model::write::*;
    use crate::model::GroupPath;

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    fn ok(op: Op, old: Option<&str>, rb: Option<&str>) -> WriteOutcome {
        WriteOutcome::done(op, old.map(str::to_owned), rb.map(str::to_owned))
    }

    /// A change made through systemd logs `via systemd`; the log reader
    /// (export-log, the log screen's `e`) still reads it as a change.
    #[test]
    fn a_write_through_systemd_reads_back() {
        let unit = g("system.slice/web.service");
        let op = set_memory_limit(&unit, MemoryFile::Max, Limit::Value(1 << 30))
            .through_systemd(None)
            .unwrap();
        let line = format_line(0, &ok(op, Some("max"), Some("1073741824")));
        assert!(line.contains(" via systemd "), "{line}");
        let Some(Parsed::Entry(e)) = parse_line(line.trim_end()) else {
            panic!("not read back: {line}");
        };
        assert_eq!(e.group, b"/system.slice/web.service");
        assert!(
            matches!(e.what, crate::model::files::script::What::Write { .. }),
            "{e:?}"
        );
        assert!(e.result.is_ok(), "{e:?}");
    }

    #[test]
    fn paths() {
        let p = |x: Option<&str>, h: Option<&str>| log_path(x.map(OsStr::new), h.map(OsStr::new));
        assert_eq!(
            p(Some("/var/state"), Some("/root")),
            Some(PathBuf::from("/var/state/cgtop/actions.log"))
        );
        assert_eq!(
            p(None, Some("/home/ann")),
            Some(PathBuf::from("/home/ann/.local/state/cgtop/actions.log"))
        );
        assert_eq!(
            p(Some("relative"), Some("/home/ann")),
            Some(PathBuf::from("/home/ann/.local/state/cgtop/actions.log"))
        );
        assert_eq!(p(None, None), None);
        assert_eq!(p(Some(""), Some("")), None);
    }

    #[test]
    fn times() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_714_564_800), "2024-05-01T12:00:00Z");
        assert_eq!(rfc3339_utc(1_735_689_599), "2024-12-31T23:59:59Z");
        assert_eq!(rfc3339_utc(4_107_542_400), "2100-03-01T00:00:00Z");
    }

    #[test]
    fn an_effect_line_names_its_write_and_is_one_inert_field() {
        const T: u64 = 1_714_564_800;
        let r = Record {
            group: g("a/b\n$(reboot)"),
            files: vec!["cpu.max".into()],
            written_unix_secs: T - 7,
            words: "cpu.max 30%: CPU 98.0% -> 29.9% (5 s each side)".into(),
        };
        let line = format_effect_line(T, &r);
        assert_eq!(
            line,
            "2024-05-01T12:00:00Z \"/a/b\\n\\x24(reboot)\" cpu.max effect 2024-05-01T11:59:53Z \"cpu.max 30%: CPU 98.0% -> 29.9% (5 s each side)\""
        );
        assert!(!line.contains('\n'));
        let words = line
            .rsplit_once(" \"")
            .map(|(_, w)| format!("\"{w}"))
            .unwrap();
        assert_eq!(unfield(&words), r.words.as_bytes());
    }

    #[test]
    fn lines() {
        const T: u64 = 1_714_564_800;
        let a = g("a/b");
        assert_eq!(
            format_line(
                T,
                &ok(
                    set_memory_limit(&a, MemoryFile::Max, Limit::Value(1000)),
                    Some("max\n"),
                    Some("0\n")
                )
            ),
            "2024-05-01T12:00:00Z /a/b memory.max max to 1000 stored 0 ok"
        );
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            format_line(
                T,
                &ok(
                    set_cpu_max(&a, half),
                    Some("max 100000\n"),
                    Some("50000 100000\n")
                )
            ),
            "2024-05-01T12:00:00Z /a/b cpu.max \"max 100000\" to \"50000 100000\" ok"
        );
        assert_eq!(
            format_line(T, &ok(kill(&a), None, None)),
            "2024-05-01T12:00:00Z /a/b cgroup.kill - to 1 ok"
        );
        assert_eq!(
            format_line(T, &ok(create_group(&a), None, None)),
            "2024-05-01T12:00:00Z /a/b mkdir ok"
        );
        // multi-line old values stay on one line
        let w = ok(
            set_io_weight(&a, None, 200),
            Some("default 100\n8:0 50\n"),
            Some("default 200\n8:0 50\n"),
        );
        assert_eq!(
            format_line(T, &w),
            "2024-05-01T12:00:00Z /a/b io.weight \"default 100\\n8:0 50\" to \"default 200\" \
             stored \"default 200\\n8:0 50\" ok"
        );
        let rm = remove_group(&a);
        let failed = WriteOutcome::failed(
            rm.clone(),
            explain(
                &rm,
                Errno::BUSY,
                &ErrorContext {
                    group_exists: true,
                    nr_procs: Some(1),
                    nr_children: Some(0),
                    ..ErrorContext::default()
                },
            ),
        );
        assert_eq!(
            format_line(T, &failed),
            "2024-05-01T12:00:00Z /a/b rmdir failed \"rmdir /a/b: /a/b still has 1 process; only an \
             empty group can be removed (remove the child groups first, and move its processes \
             out or kill them) [EBUSY]\""
        );
        let noted = ok(kill(&g("odd name")), None, None)
            .with_notes(vec!["sent SIGKILL to 2 processes".into()]);
        assert_eq!(
            format_line(T, &noted),
            "2024-05-01T12:00:00Z \"/odd name\" cgroup.kill - to 1 ok note \
             \"sent SIGKILL to 2 processes\""
        );
    }

    #[test]
    fn appends_and_creates_the_directory() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("state/cgtop/actions.log");
        let log = ActionLog::at(path.clone());
        let o = ok(freeze(&g("a"), true), Some("0\n"), Some("1\n"));
        let at = UNIX_EPOCH + std::time::Duration::from_secs(1_714_564_800);
        log.append(&o, at).unwrap();
        log.append(&o, at).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "2024-05-01T12:00:00Z /a cgroup.freeze 0 to 1 ok\n\
             2024-05-01T12:00:00Z /a cgroup.freeze 0 to 1 ok\n"
        );
    }

    #[test]
    fn failure_to_log_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let blocker = t.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let log = ActionLog::at(blocker.join("cgtop/actions.log"));
        let e = log
            .append(&ok(kill(&g("a")), None, None), UNIX_EPOCH)
            .unwrap_err();
        assert!(
            e.starts_with("action log ") && e.contains("is not a directory"),
            "{e}"
        );
        let none = ActionLog {
            place: LogPlace::default(),
            euid: 0,
        };
        assert_eq!(
            none.append(&ok(kill(&g("a")), None, None), UNIX_EPOCH),
            Err("action log: neither XDG_STATE_HOME nor HOME is set, so nothing was logged".into())
        );
    }

    #[test]
    fn fields_are_inert_in_a_shell_and_reversible() {
        for (raw, shown) in [
            (&b"plain-1.5:x@y"[..], "plain-1.5:x@y"),
            (b"max 100000", "\"max 100000\""),
            (b"", "\"\""),
            (b"$(id>pwned)", "\"\\x24(id>pwned)\""),
            (b"`id`", "\"\\x60id\\x60\""),
            (b"a\nb", "\"a\\nb\""),
            (b"say \"hi\"!", "\"say \\x22hi\\x22\\x21\""),
            (b"a;rm -rf ~", "\"a;rm -rf ~\""),
            // a backslash that would read as one of our escapes, or end
            // the quote, is doubled
            (b"a\\", "\"a\\\\\""),
            (b"\\$", "\"\\\\\\x24\""),
            (b"\\x24", "\"\\\\x24\""),
            (b"\\x2d", "\"\\x2d\""),
            (b"caf\xc3\xa9", "caf\u{e9}"),
            (b"bad\xff", "\"bad\\xff\""),
        ] {
            let f = field(raw);
            assert_eq!(f, shown, "{raw:?}");
            assert_eq!(unfield(&f), raw, "{f}");
            assert!(!f.contains('$') && !f.contains('`') && !f.contains('\n'));
        }
        // every byte, alone and around the active characters
        for b in 0..=255u8 {
            for raw in [
                vec![b],
                vec![b'\\', b],
                vec![b, b'$', b'\\'],
                vec![b'\\', b'x', b],
            ] {
                let f = field(&raw);
                assert_eq!(unfield(&f), raw, "{f}");
                assert!(!f.contains('$') && !f.contains('`'), "{f}");
            }
        }
    }

    #[test]
    fn root_home_from_passwd() {
        let passwd = "# comment\nadmin:x:1000:1000::/home/admin:/bin/sh\n\
                      toor:x:0:0::relative:/bin/sh\nroot:x:0:0:root:/root:/bin/bash\n";
        assert_eq!(root_home(passwd), Some(PathBuf::from("/root")));
        assert_eq!(root_home("root:x:0:0"), None);
        assert_eq!(root_home(""), None);
    }
}
