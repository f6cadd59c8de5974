//! Processes of a group, from procfs, with CPU % between two refreshes.
//!
//! A process's name and arguments are whatever bytes it chose (it can
//! rename itself with `prctl(PR_SET_NAME)` or by exec'ing a file with any
//! name), and a user name is whatever bytes /etc/passwd holds: all are
//! read as bytes, never as lossy text, and shown through
//! [`crate::model::text::escape`]. Every read is capped
//! ([`CAP_CMDLINE`], [`CAP_COMM`], [`CAP_PASSWD`]); a command line longer
//! than its cap is cut and ends in `…`.

use crate::model::text::escape;
use crate::model::ProcessInfo;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

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

/// Keeps the previous CPU times so that the next read gives a rate.
#[derive(Debug, Default)]
pub struct ProcReader {
    /// pid -> (starttime, utime+stime in ticks, when in seconds)
    prev: HashMap<u32, (u64, u64, f64)>,
    users: HashMap<u32, Vec<u8>>,
}

impl ProcReader {
    /// Reads the given pids. `now_secs` is the collector's clock.
    pub fn read(&mut self, pids: &[u32], now_secs: f64) -> Vec<ProcessInfo> {
        let tps = procfs::ticks_per_second() as f64;
        let mut next = HashMap::with_capacity(pids.len());
        let mut out = Vec::with_capacity(pids.len());
        for &pid in pids {
            let Ok(p) = procfs::process::Process::new(i32::try_from(pid).unwrap_or(i32::MAX))
            else {
                continue;
            };
            let Ok(stat) = p.stat() else { continue };
            let ticks = stat.utime + stat.stime;
            let cpu_pct = self.prev.get(&pid).and_then(|&(start, t0, w0)| {
                let dt = now_secs - w0;
                (start == stat.starttime && ticks >= t0 && dt > 0.0)
                    .then(|| (ticks - t0) as f64 / tps / dt * 100.0)
            });
            next.insert(pid, (stat.starttime, ticks, now_secs));
            let uid = p.uid().unwrap_or(u32::MAX);
            let user = self.user_name(uid);
            let dir = Path::new("/proc").join(pid.to_string());
            let args = read_capped(&dir.join("cmdline"), CAP_CMDLINE, false);
            let cmdline = match args {
                Some((a, cut)) if !a.is_empty() => command_text(&a, cut),
                // a kernel thread or a zombie has no arguments: its name
                _ => {
                    let comm = read_capped(&dir.join("comm"), CAP_COMM, false).map_or_else(
                        || stat.comm.clone().into_bytes(),
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
        let name = read_capped(Path::new("/etc/passwd"), CAP_PASSWD, true)
            .and_then(|(t, _)| passwd_name(&t, uid))
            .unwrap_or_else(|| uid.to_string().into_bytes());
        self.users.insert(uid, name.clone());
        name
    }
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

    #[test]
    fn own_process_reads() {
        let me = std::process::id();
        let got = ProcReader::default().read(&[me], 0.0);
        assert_eq!(got.len(), 1);
        assert!(!got[0].cmdline.is_empty());
        assert!(!got[0].user.is_empty());
    }
}
