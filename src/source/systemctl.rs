//! Runs `systemctl` for a write through systemd (`model::write::Via`):
//! found by absolute path, never through a shell, stdin from /dev/null,
//! stdout dropped, stderr kept (bounded) for the words of a failure, and
//! killed by its pid when it does not end in time.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use crate::model::errno;
use crate::model::systemd::{Presence, SystemctlFailure, STDERR_MAX};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long systemctl may take: set-property is one D-Bus call that
/// systemd answers after writing the files; a manager busy with a
/// daemon-reload can take seconds, a hung one forever.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Where systemctl is looked for, in order: the directories of the PATH
/// cgtop pins (`term::pin_path`) without /usr/local, since cgtop runs as
/// root and a command is found only where the distribution puts it.
const DIRS: [&str; 4] = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// What runs systemctl: which binary, for how long, and whether systemd
/// is the init system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Systemctl {
    pub path: Option<PathBuf>,
    pub booted: bool,
    pub timeout: Duration,
}

impl Systemctl {
    /// This host's: systemctl in [`DIRS`], booted when
    /// `/run/systemd/system` is a directory (sd_booted(3)'s test: systemd
    /// makes it early at boot, no other init does).
    pub fn system() -> Self {
        let booted = std::fs::symlink_metadata("/run/systemd/system").is_ok_and(|m| m.is_dir());
        Self {
            path: DIRS
                .iter()
                .map(|d| Path::new(d).join("systemctl"))
                .find(|p| executable(p)),
            booted,
            timeout: TIMEOUT,
        }
    }

    /// A given binary, as if booted with systemd (tests, with a fake).
    pub fn at(path: &Path, timeout: Duration) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            booted: true,
            timeout,
        }
    }

    pub fn presence(&self) -> Presence {
        match (self.booted, &self.path) {
            (false, _) => Presence::NotBooted,
            (true, None) => Presence::NoSystemctl,
            (true, Some(_)) => Presence::Ready,
        }
    }

    /// Runs systemctl with `args`; `Ok` when it exits 0.
    pub fn run(&self, args: &[String]) -> Result<(), SystemctlFailure> {
        let path = match (self.booted, &self.path) {
            (false, _) => return Err(SystemctlFailure::NotBooted),
            (true, None) => return Err(SystemctlFailure::NoSystemctl),
            (true, Some(p)) => p,
        };
        let mut child = Command::new(path)
            .args(args)
            // plain words in the C locale, no pager, no colours, no
            // password agent (stdin is not a terminal anyway)
            .env("LC_ALL", "C")
            .env("SYSTEMD_PAGER", "")
            .env("SYSTEMD_COLORS", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SystemctlFailure::Spawn(errno::of_io(&e)))?;
        // stderr read on its own thread, so a chatty child never blocks on
        // a full pipe while this one waits; only the start is kept
        let reader = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let mut buf = [0u8; 1024];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = STDERR_MAX.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
                kept
            })
        });
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if start.elapsed() >= self.timeout => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(SystemctlFailure::Spawn(errno::of_io(&e)));
                }
            }
        };
        let Some(status) = status else {
            // Child::kill signals the child's own pid, which it still is
            // (not reaped yet), then the wait reaps it
            let _ = child.kill();
            let _ = child.wait();
            // the reader ends when the pipe closes; a grandchild holding
            // it open would keep it, so it is not waited for
            return Err(SystemctlFailure::TimedOut {
                secs: self.timeout.as_secs(),
            });
        };
        let stderr = reader
            .and_then(|r| r.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        if status.success() {
            Ok(())
        } else {
            Err(SystemctlFailure::Exit {
                code: status.code(),
                stderr,
            })
        }
    }
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
