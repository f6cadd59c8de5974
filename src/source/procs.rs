//! Processes of a group, from procfs, with CPU % between two refreshes.
//!
//! The reader takes its `/proc` as a [`Hier`] handle (the real one by
//! default, a fixture directory in tests): every file is opened beneath
//! it without following a symlink, non-blocking, regular files only, and
//! read up to a cap; a pid whose entry is missing or unreadable is left
//! out. `/proc/PID/stat` is parsed by [`crate::model::tree::procstat`].
//!
//! A process's name and arguments are whatever bytes it chose (it can
//! rename itself with `prctl(PR_SET_NAME)` or by exec'ing a file with any
//! name), and a user name is whatever bytes /etc/passwd holds: all are
//! read as bytes, never as lossy text, and shown through
//! [`crate::model::tree::text::escape`]. Every read is capped
//! ([`CAP_CMDLINE`], [`CAP_COMM`], [`CAP_PASSWD`]); a command line longer
//! than its cap is cut and ends in `…`.

use super::hier::Hier;
use crate::model::tree::procstat::ProcStat;
use crate::model::tree::text::escape;
use crate::model::{GroupPath, ProcessInfo};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// At most this much of /proc/PID/cmdline is read (the kernel allows
/// arguments up to ARG_MAX, 2 MiB and more): the list shows one row a
/// process, and 4 KiB (one page, one kernel copy) is wider than any
/// terminal even before escaping.
pub const CAP_CMDLINE: usize = 4096;
/// /proc/PID/comm is at most 64 bytes (TASK_COMM_LEN 16 for a task, 64
/// for a kernel worker's name).
pub const CAP_COMM: usize = 256;
/// /etc/passwd: read once per unknown uid, up to this much.
pub const CAP_PASSWD: usize = 8 * 1024 * 1024;
/// /proc/PID/stat is one line of 52 numbers and a name of at most 64
/// bytes: well under a page.
pub const CAP_STAT: usize = 4096;

/// Keeps the previous CPU times so that the next read gives a rate.
#[derive(Debug)]
pub struct ProcReader {
    /// The /proc it reads.
    proc: Hier,
    /// The user database (`/etc/passwd`).
    passwd: PathBuf,
    /// pid -> (starttime, utime+stime in ticks, when in seconds)
    prev: HashMap<u32, (u64, u64, f64)>,
    users: HashMap<u32, Vec<u8>>,
}

impl Default for ProcReader {
    /// The system's `/proc` and `/etc/passwd`.
    fn default() -> Self {
        Self::new(
            Hier::open_lenient(Path::new("/proc")),
            PathBuf::from("/etc/passwd"),
        )
    }
}

impl ProcReader {
    /// A reader of the /proc opened as `proc`, naming users from the
    /// passwd file at `passwd`.
    pub fn new(proc: Hier, passwd: PathBuf) -> Self {
        Self {
            proc,
            passwd,
            prev: HashMap::new(),
            users: HashMap::new(),
        }
    }

    /// Reads the given pids. `now_secs` is the collector's clock.
    pub fn read(&mut self, pids: &[u32], now_secs: f64) -> Vec<ProcessInfo> {
        let tps = procfs::ticks_per_second() as f64;
        let mut next = HashMap::with_capacity(pids.len());
        let mut out = Vec::with_capacity(pids.len());
        for &pid in pids {
            let dir = PathBuf::from(pid.to_string());
            // the owner of /proc/PID is the process's (effective) uid
            let Ok(uid) = self.proc.owner_of(&dir) else {
                continue;
            };
            let Some(stat) = read_beneath(&self.proc, &dir.join("stat"), CAP_STAT)
                .and_then(|(t, _)| ProcStat::parse(&t))
            else {
                continue;
            };
            let ticks = stat.utime + stat.stime;
            let cpu_pct = self.prev.get(&pid).and_then(|&(start, t0, w0)| {
                let dt = now_secs - w0;
                (start == stat.starttime && ticks >= t0 && dt > 0.0)
                    .then(|| (ticks - t0) as f64 / tps / dt * 100.0)
            });
            next.insert(pid, (stat.starttime, ticks, now_secs));
            let user = self.user_name(uid);
            let args = read_beneath(&self.proc, &dir.join("cmdline"), CAP_CMDLINE);
            let cmdline = match args {
                Some((a, cut)) if !a.is_empty() => command_text(&a, cut),
                // a kernel thread or a zombie has no arguments: its name
                _ => {
                    let comm = read_beneath(&self.proc, &dir.join("comm"), CAP_COMM).map_or_else(
                        || stat.comm.clone(),
                        |(mut c, _)| {
                            if c.last() == Some(&b'\n') {
                                c.pop();
                            }
                            c
                        },
                    );
                    format!("[{}]", escape(&comm))
                }
            };
            out.push(ProcessInfo {
                pid,
                user,
                state: stat.state,
                cpu_pct,
                rss_bytes: stat.rss * procfs::page_size(),
                cmdline,
            });
        }
        self.prev = next;
        out
    }

    fn user_name(&mut self, uid: u32) -> Vec<u8> {
        if let Some(n) = self.users.get(&uid) {
            return n.clone();
        }
        let name = read_capped(&self.passwd, CAP_PASSWD, true)
            .and_then(|(t, _)| passwd_name(&t, uid))
            .unwrap_or_else(|| uid.to_string().into_bytes());
        self.users.insert(uid, name.clone());
        name
    }
}

impl ProcReader {
    /// The /proc it reads.
    pub fn proc(&self) -> &Hier {
        &self.proc
    }
}

// ---------------------------------------------------------------------------
// Where a process is: `cgtop --pid`, and the search for a process (by
// PID, name or command line) across every group.

/// How /proc/PID/cgroup's paths map to the view: the line of the
/// hierarchy the view is on (the "0::" line on cgroup2, a v1
/// hierarchy's `N:cpu,cpuacct:` line on a v1 view), the mount's root
/// within that hierarchy, and the view's place below the mount point.
#[derive(Debug, Clone)]
pub struct ViewMap {
    line: crate::model::write::guard::ProcLine,
    fs_root: GroupPath,
    view: GroupPath,
}

impl ViewMap {
    /// The map of the view `hier` opens (its real path, against
    /// /proc/self/mountinfo); `None` when no cgroup mount holds it (a
    /// `--root` fixture).
    pub fn of(hier: &Hier) -> Option<Self> {
        let mounts = super::mount::read_mountinfo().ok()?;
        let (line, fs_root, view) =
            crate::model::write::guard::hier_mapping(&mounts, &hier.real_path()?)?;
        Some(Self {
            line,
            fs_root,
            view,
        })
    }

    /// The group of a /proc/PID/cgroup text, relative to the view:
    /// `Err(path)` with the path the kernel gave when it is outside the
    /// view, or gone (" (deleted)"); `Err(None)` when the text has no line
    /// for this hierarchy.
    pub fn group_of(&self, proc_cgroup: &str) -> Result<GroupPath, Option<String>> {
        let p = self.line.path(proc_cgroup).ok_or(None)?;
        if p.ends_with(" (deleted)") {
            return Err(Some(p.to_owned()));
        }
        crate::model::write::guard::map_to_view(p, &self.fs_root, &self.view)
            .ok_or_else(|| Some(p.to_owned()))
    }
}

/// A process and the group that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessPlace {
    pub pid: u32,
    pub group: GroupPath,
    /// The command line as a process list shows it (escaped; its name in
    /// brackets when it has no arguments).
    pub command: String,
}

/// Why a PID has no group to go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidRefusal {
    NoSuchProcess,
    /// A thread id: the process is `tgid`.
    Thread {
        tgid: u32,
    },
    /// It has exited and its parent has not reaped it (a zombie): it is
    /// in no group any more.
    Exited,
    /// Its /proc/PID/cgroup has no line for the hierarchy shown.
    NotInHierarchy,
    /// Its group is outside the view (another `--root`, a group removed
    /// since): the path the kernel gave, escaped.
    OutsideView(String),
    /// No cgroup mount holds the view (a `--root` of plain directories).
    Unmapped,
    /// /proc/PID could not be read (the reason, escaped).
    Unreadable(String),
}

impl std::fmt::Display for PidRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoSuchProcess => f.write_str("no such process"),
            Self::Thread { tgid } => write!(
                f,
                "a thread of process {tgid}, not a process (a group holds whole processes: \
                 give {tgid})"
            ),
            Self::Exited => f.write_str("has exited (a zombie its parent has not reaped)"),
            Self::NotInHierarchy => {
                f.write_str("its /proc/PID/cgroup names no group in this hierarchy")
            }
            Self::OutsideView(p) => write!(f, "is in {p}, outside this view"),
            Self::Unmapped => f.write_str(
                "where processes are cannot be told in this view (no cgroup mount holds it)",
            ),
            Self::Unreadable(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

/// The value of a "Key:\tvalue" line of /proc/PID/status. PURE.
fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.trim())
    })
}

/// The command line a process list shows for `pid` (escaped).
fn command_of(proc: &Hier, dir: &Path) -> String {
    match read_beneath(proc, &dir.join("cmdline"), CAP_CMDLINE) {
        Some((a, cut)) if !a.is_empty() => command_text(&a, cut),
        _ => {
            let comm = read_beneath(proc, &dir.join("comm"), CAP_COMM)
                .map(|(mut c, _)| {
                    if c.last() == Some(&b'\n') {
                        c.pop();
                    }
                    c
                })
                .unwrap_or_default();
            format!("[{}]", escape(&comm))
        }
    }
}

/// The group that holds process `pid`, read from `proc` (/proc) and
/// mapped to the view by `map`: refused for a thread id, a process that
/// is not there or has exited, and a group outside the view.
pub fn place_of_pid(
    proc: &Hier,
    map: Option<&ViewMap>,
    pid: u32,
) -> Result<ProcessPlace, PidRefusal> {
    let dir = PathBuf::from(pid.to_string());
    let status = match proc.read(&dir.join("status"), CAP_STAT * 4) {
        Ok(s) => String::from_utf8_lossy(&s).into_owned(),
        Err(e) if e.is_gone() || e.errno() == Some(crate::model::Errno::SRCH) => {
            return Err(PidRefusal::NoSuchProcess)
        }
        Err(e) => {
            return Err(PidRefusal::Unreadable(
                escape(e.to_string().as_bytes()).into_owned(),
            ))
        }
    };
    // /proc/TID is there for a thread, though /proc does not list it
    match status_field(&status, "Tgid").and_then(|t| t.parse::<u32>().ok()) {
        Some(tgid) if tgid != pid => return Err(PidRefusal::Thread { tgid }),
        _ => {}
    }
    if status_field(&status, "State").is_some_and(|s| s.starts_with('Z') || s.starts_with('X')) {
        return Err(PidRefusal::Exited);
    }
    let map = map.ok_or(PidRefusal::Unmapped)?;
    let text = proc
        .read(&dir.join("cgroup"), CAP_CMDLINE * 4)
        .map_err(|e| {
            if e.is_gone() || e.errno() == Some(crate::model::Errno::SRCH) {
                PidRefusal::NoSuchProcess
            } else {
                PidRefusal::Unreadable(escape(e.to_string().as_bytes()).into_owned())
            }
        })?;
    let group = map
        .group_of(&String::from_utf8_lossy(&text))
        .map_err(|p| match p {
            Some(p) => PidRefusal::OutsideView(escape(p.as_bytes()).into_owned()),
            None => PidRefusal::NotInHierarchy,
        })?;
    Ok(ProcessPlace {
        pid,
        group,
        command: command_of(proc, &dir),
    })
}

/// At most this many processes a search returns.
pub const FIND_CAP: usize = 1000;

/// What a search for a process found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The text searched for, as typed.
    pub query: String,
    /// Each match, by PID.
    pub matches: Vec<ProcessPlace>,
    /// A PID searched for and refused: why.
    pub refusal: Option<PidRefusal>,
}

/// A search across every process: a number is a PID ([`place_of_pid`]);
/// other text matches a process whose name (/proc/PID/comm) or command
/// line contains it, case aside (at most [`FIND_CAP`], by PID). A
/// process outside the view, or gone while read, is left out.
pub fn find_processes(proc: &Hier, map: Option<&ViewMap>, query: &str) -> Found {
    let q = query.trim();
    let mut found = Found {
        query: query.to_owned(),
        matches: Vec::new(),
        refusal: None,
    };
    if let Ok(pid) = q.parse::<u32>() {
        match place_of_pid(proc, map, pid) {
            Ok(p) => found.matches.push(p),
            Err(e) => found.refusal = Some(e),
        }
        return found;
    }
    let needle = q.to_lowercase();
    if needle.is_empty() {
        return found;
    }
    let Some(map) = map else {
        found.refusal = Some(PidRefusal::Unmapped);
        return found;
    };
    let mut pids: Vec<u32> = proc
        .list(Path::new("."))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_dir)
        .filter_map(|e| e.name.to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    for pid in pids {
        let dir = PathBuf::from(pid.to_string());
        let comm = read_beneath(proc, &dir.join("comm"), CAP_COMM).map(|(c, _)| c);
        let args = read_beneath(proc, &dir.join("cmdline"), CAP_CMDLINE).map(|(a, _)| a);
        let hit = |b: &Option<Vec<u8>>| {
            b.as_ref().is_some_and(|b| {
                let t: Vec<u8> = b.iter().map(|&c| if c == 0 { b' ' } else { c }).collect();
                String::from_utf8_lossy(&t).to_lowercase().contains(&needle)
            })
        };
        if !(hit(&comm) || hit(&args)) {
            continue;
        }
        let Some(text) = read_beneath(proc, &dir.join("cgroup"), CAP_CMDLINE * 4) else {
            continue;
        };
        let Ok(group) = map.group_of(&String::from_utf8_lossy(&text.0)) else {
            continue;
        };
        found.matches.push(ProcessPlace {
            pid,
            group,
            command: command_of(proc, &dir),
        });
        if found.matches.len() >= FIND_CAP {
            break;
        }
    }
    found
}

/// The text a process list shows for /proc/PID/cmdline's bytes (each
/// argument ended by a NUL): each argument escaped, joined by a space,
/// and `…` when the read stopped at its cap. PURE.
pub fn command_text(args: &[u8], cut: bool) -> String {
    // the last argument's NUL ends it; a process that rewrote its
    // arguments (setproctitle) may have left none
    let args = args.strip_suffix(b"\0").unwrap_or(args);
    let mut out = String::with_capacity(args.len() + 4);
    for (i, a) in args.split(|&b| b == 0).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&escape(a));
    }
    if cut {
        out.push('…');
    }
    out
}

/// The name /etc/passwd gives `uid`, as its bytes (a name is not
/// necessarily UTF-8, and one bad line must not hide the others). PURE.
pub fn passwd_name(text: &[u8], uid: u32) -> Option<Vec<u8>> {
    text.split(|&b| b == b'\n').find_map(|l| {
        let mut f = l.split(|&b| b == b':');
        let name = f.next()?;
        let u: u32 = std::str::from_utf8(f.nth(1)?).ok()?.parse().ok()?;
        (u == uid && !name.is_empty()).then(|| name.to_vec())
    })
}

/// At most `cap` bytes of the regular file `rel` beneath `h` (opened
/// without following any symlink, non-blocking), and whether there was
/// more; `None` when it cannot be read.
fn read_beneath(h: &Hier, rel: &Path, cap: usize) -> Option<(Vec<u8>, bool)> {
    let f = h.open_read(rel).ok()?;
    take_capped(f, cap)
}

/// At most `cap` bytes of a regular file (procfs files are), and whether
/// there was more. Opened non-blocking (and, unless `follow`, without
/// following a final symlink), so that nothing but a regular file is read
/// and nothing waits for a writer; `None` when it cannot be read.
fn read_capped(path: &Path, cap: usize, follow: bool) -> Option<(Vec<u8>, bool)> {
    use rustix::fs::OFlags;
    let mut flags = OFlags::NONBLOCK | OFlags::NOCTTY;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let f = File::options()
        .read(true)
        .custom_flags(i32::try_from(flags.bits()).unwrap_or(0))
        .open(path)
        .ok()?;
    let t = f.metadata().ok()?.file_type();
    if !t.is_file() {
        return None;
    }
    take_capped(f, cap)
}

fn take_capped(f: File, cap: usize) -> Option<(Vec<u8>, bool)> {
    let mut buf = Vec::with_capacity(cap.min(4096) + 1);
    f.take(cap as u64 + 1).read_to_end(&mut buf).ok()?;
    let cut = buf.len() > cap;
    buf.truncate(cap);
    Some((buf, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_escaped_and_joined() {
        assert_eq!(command_text(b"sleep\x00600\x00", false), "sleep 600");
        assert_eq!(
            command_text(b"x\x1b]0;pwned\x07\x00a\nb\x00bad\xff\x00", false),
            "x\\e]0;pwned\\a a\\nb bad\\xff"
        );
        // an invalid byte and U+FFFD stay different
        assert_ne!(
            command_text(b"bad\xff\x00", false),
            command_text("bad\u{fffd}\0".as_bytes(), false)
        );
        // rewritten arguments without a final NUL, an empty argument
        assert_eq!(command_text(b"nginx: worker", false), "nginx: worker");
        assert_eq!(command_text(b"a\x00\x00b\x00", false), "a  b");
        assert_eq!(command_text(b"long\x00argu", true), "long argu…");
    }

    #[test]
    fn processes_are_found_by_pid_name_or_command_line_in_the_view() {
        use crate::model::write::guard::ProcLine;
        let d = tempfile::tempdir().unwrap();
        let put = |pid: u32, tgid: u32, state: &str, comm: &[u8], args: &[u8], cg: &str| {
            let dir = d.path().join(pid.to_string());
            std::fs::create_dir(&dir).unwrap();
            let status = format!("Name:\tx\nState:\t{state}\nTgid:\t{tgid}\nPid:\t{pid}\n");
            std::fs::write(dir.join("status"), status).unwrap();
            std::fs::write(dir.join("comm"), comm).unwrap();
            std::fs::write(dir.join("cmdline"), args).unwrap();
            std::fs::write(dir.join("cgroup"), cg).unwrap();
        };
        put(
            100,
            100,
            "S (sleeping)",
            b"nginx\n",
            b"nginx: master\0",
            "0::/system.slice/nginx.service\n",
        );
        put(
            101,
            100,
            "S (sleeping)",
            b"nginx\n",
            b"",
            "0::/system.slice/nginx.service\n",
        );
        put(
            102,
            102,
            "Z (zombie)",
            b"gone\n",
            b"",
            "0::/system.slice/x.service\n",
        );
        put(
            103,
            103,
            "R (running)",
            b"evil\x1b[2J\n",
            b"evil\x1b]0;x\x07\0--nginx\0",
            "0::/a\n",
        );
        put(104, 104, "S (sleeping)", b"v1only\n", b"", "3:memory:/a\n");
        let proc = Hier::open_lenient(d.path());
        let whole = ViewMap {
            line: ProcLine::v2(),
            fs_root: GroupPath::root(),
            view: GroupPath::root(),
        };
        let f = find_processes(&proc, Some(&whole), "NGINX");
        let pids: Vec<(u32, String)> = f
            .matches
            .iter()
            .map(|p| (p.pid, p.group.to_string()))
            .collect();
        // (the real /proc lists no thread ids; this plain directory lists
        // 101, found by its name like any entry)
        assert_eq!(pids[0], (100, "/system.slice/nginx.service".to_owned()));
        assert!(pids.iter().any(|(p, g)| *p == 103 && g == "/a"));
        let evil = f.matches.iter().find(|p| p.pid == 103).unwrap();
        assert!(!evil.command.contains('\x1b'), "{}", evil.command);
        assert_eq!(evil.command, "evil\\e]0;x\\a --nginx");
        // by PID
        let one = find_processes(&proc, Some(&whole), " 100 ");
        assert_eq!(one.matches.len(), 1);
        assert_eq!(one.matches[0].command, "nginx: master");
        assert_eq!(
            place_of_pid(&proc, Some(&whole), 101),
            Err(PidRefusal::Thread { tgid: 100 })
        );
        assert_eq!(
            place_of_pid(&proc, Some(&whole), 102),
            Err(PidRefusal::Exited)
        );
        assert_eq!(
            place_of_pid(&proc, Some(&whole), 105),
            Err(PidRefusal::NoSuchProcess)
        );
        assert_eq!(
            place_of_pid(&proc, Some(&whole), 104),
            Err(PidRefusal::NotInHierarchy)
        );
        assert_eq!(place_of_pid(&proc, None, 100), Err(PidRefusal::Unmapped));
        // a view that starts at system.slice: /a is outside it
        let below = ViewMap {
            view: GroupPath::new("system.slice"),
            ..whole.clone()
        };
        assert_eq!(
            place_of_pid(&proc, Some(&below), 103),
            Err(PidRefusal::OutsideView("/a".into()))
        );
        assert_eq!(
            place_of_pid(&proc, Some(&below), 100).map(|p| p.group),
            Ok(GroupPath::new("nginx.service"))
        );
        // a v1 view reads its own hierarchy's line
        let v1 = ViewMap {
            line: ProcLine("memory".into()),
            ..whole
        };
        assert_eq!(
            place_of_pid(&proc, Some(&v1), 104).map(|p| p.group),
            Ok(GroupPath::new("a"))
        );
    }

    #[test]
    fn passwd_names_are_bytes() {
        let t = b"root:x:0:0:root:/root:/bin/bash\nbad\xff\x1b:x:1000:1000::/home/b:/bin/sh\n\
                  broken line\n:x:7:7::/:/bin/sh\nnobody:x:65534:65534::/:/bin/false";
        assert_eq!(passwd_name(t, 0).as_deref(), Some(&b"root"[..]));
        assert_eq!(passwd_name(t, 1000).as_deref(), Some(&b"bad\xff\x1b"[..]));
        assert_eq!(passwd_name(t, 65534).as_deref(), Some(&b"nobody"[..]));
        assert_eq!(passwd_name(t, 7), None);
        assert_eq!(passwd_name(t, 5), None);
    }

    #[test]
    fn reads_stop_at_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        std::fs::write(&p, vec![b'a'; CAP_CMDLINE * 3]).unwrap();
        let (b, cut) = read_capped(&p, CAP_CMDLINE, false).unwrap();
        assert_eq!((b.len(), cut), (CAP_CMDLINE, true));
        std::fs::write(&p, vec![b'a'; CAP_CMDLINE]).unwrap();
        let (b, cut) = read_capped(&p, CAP_CMDLINE, false).unwrap();
        assert_eq!((b.len(), cut), (CAP_CMDLINE, false));
        // a FIFO is not read (and does not hang)
        let fifo = d.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(read_capped(&fifo, 16, true).is_none());
        // nor a symlink
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(read_capped(&link, 16, false).is_none());
    }

    /// A /proc/PID/stat line with these times and name.
    fn stat_line(pid: u32, comm: &[u8], utime: u64, starttime: u64) -> Vec<u8> {
        let mut v = format!("{pid} (").into_bytes();
        v.extend_from_slice(comm);
        v.extend_from_slice(
            format!(
                ") S 1 {pid} {pid} 0 -1 4194560 0 0 0 0 {utime} 0 0 0 20 0 1 0 {starttime} \
                 1000 25 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
            )
            .as_bytes(),
        );
        v
    }

    /// A fixture /proc: each process a directory with stat, status,
    /// cmdline, comm and cgroup, as the kernel lays them out.
    fn fixture(procs: &[(u32, &[u8], &[u8])]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for &(pid, comm, cmdline) in procs {
            let d = t.path().join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("stat"), stat_line(pid, comm, 10, 500)).unwrap();
            let mut c = comm.to_vec();
            c.push(b'\n');
            std::fs::write(d.join("comm"), c).unwrap();
            std::fs::write(d.join("cmdline"), cmdline).unwrap();
            std::fs::write(d.join("status"), b"Name:\tx\nUid:\t0\t0\t0\t0\n").unwrap();
            std::fs::write(d.join("cgroup"), b"0::/batch\n").unwrap();
        }
        t
    }

    fn reader(t: &tempfile::TempDir, passwd: &[u8]) -> ProcReader {
        let pw = t.path().join("passwd");
        std::fs::write(&pw, passwd).unwrap();
        ProcReader::new(Hier::open(t.path()).unwrap(), pw)
    }

    #[test]
    fn a_fixture_proc_is_read_beneath_its_root() {
        let me = rustix::process::geteuid().as_raw();
        let t = fixture(&[
            (100, b"sleep", b"sleep\x0060\x00"),
            // a kernel thread: no arguments, its name from comm, escaped
            (200, b"kw\x1b]0;x\x07\xff", b""),
        ]);
        let other = me + 1;
        let mut passwd = format!("other:x:{other}:{other}::/:/bin/sh\n").into_bytes();
        passwd.extend_from_slice(b"op\x1b[2J\xff");
        passwd.extend_from_slice(format!(":x:{me}:{me}::/:/bin/sh\n").as_bytes());
        let mut r = reader(&t, &passwd);
        // 300 is listed but has no entry (it exited)
        let got = r.read(&[100, 300, 200], 0.0);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].pid, 100);
        assert_eq!(got[0].cmdline, "sleep 60");
        assert_eq!(got[0].state, 'S');
        assert_eq!(got[0].rss_bytes, 25 * procfs::page_size());
        assert_eq!(got[0].cpu_pct, None, "no rate on first sight");
        assert_eq!(got[0].user, b"op\x1b[2J\xff");
        assert_eq!(got[1].cmdline, "[kw\\e]0;x\\a\\xff]");
        // a second read: 100 ticks more over 2 s
        let d = t.path().join("100");
        std::fs::write(d.join("stat"), stat_line(100, b"sleep", 110, 500)).unwrap();
        let tps = procfs::ticks_per_second() as f64;
        let got = r.read(&[100], 2.0);
        let want = 100.0 / tps / 2.0 * 100.0;
        assert!((got[0].cpu_pct.unwrap() - want).abs() < 1e-9, "{got:?}");
        // the pid reused by another process (a later start): no rate
        std::fs::write(d.join("stat"), stat_line(100, b"sleep", 500, 900)).unwrap();
        assert_eq!(r.read(&[100], 4.0)[0].cpu_pct, None);
    }

    #[test]
    fn a_hostile_fixture_reaches_nothing_outside_and_never_hangs() {
        let outside = tempfile::tempdir().unwrap();
        let real = outside.path().join("999");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("stat"), stat_line(999, b"victim", 1, 1)).unwrap();
        std::fs::write(real.join("cmdline"), b"secret\x00").unwrap();
        let huge = vec![b'y'; 3 * CAP_CMDLINE];
        let t = fixture(&[
            (100, b"a", &huge),
            (101, b"b", b"b\x00"),
            (102, b"c", b"c\x00"),
        ]);
        // a pid directory that is a symlink out of the root
        std::os::unix::fs::symlink(&real, t.path().join("999")).unwrap();
        // a cmdline that is a symlink: not followed, the name stands in
        std::fs::remove_file(t.path().join("101/cmdline")).unwrap();
        std::os::unix::fs::symlink(real.join("cmdline"), t.path().join("101/cmdline")).unwrap();
        // a stat that is a FIFO: not read, and nothing waits for a writer
        std::fs::remove_file(t.path().join("102/stat")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            t.path().join("102/stat"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let got = reader(&t, b"").read(&[100, 101, 102, 999], 0.0);
        let pids: Vec<u32> = got.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 101]);
        // the huge command line is cut at the cap and marked
        assert_eq!(got[0].cmdline.len(), CAP_CMDLINE + '…'.len_utf8());
        assert!(got[0].cmdline.ends_with('…'));
        assert_eq!(got[1].cmdline, "[b]");
        // no passwd entry: the uid stands in
        let me = rustix::process::geteuid().as_raw();
        assert_eq!(got[0].user, me.to_string().into_bytes());
    }

    #[test]
    fn own_process_reads() {
        let me = std::process::id();
        let got = ProcReader::default().read(&[me], 0.0);
        assert_eq!(got.len(), 1);
        assert!(!got[0].cmdline.is_empty());
        assert!(!got[0].user.is_empty());
    }
}
