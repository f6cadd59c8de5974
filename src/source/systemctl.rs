//! Runs `systemctl` for a write through systemd (`model::write::Via`):
//! found by absolute path, never through a shell, stdin from /dev/null,
//! stdout kept (bounded) for `systemctl show`, stderr kept (bounded) for
//! the words of a failure, and killed by its pid when it does not end in
//! time.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use crate::model::write::errno;
use crate::model::write::systemd::{Presence, SystemctlFailure, STDERR_MAX};
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
        self.output(args).map(drop)
    }

    /// The group systemd keeps for `unit` (its `ControlGroup` property,
    /// as `systemctl show` prints it: the path from the hierarchy's root
    /// and a newline; empty for a unit not loaded).
    pub fn control_group(&self, unit: &str) -> Result<Vec<u8>, SystemctlFailure> {
        self.output(&[
            "show".to_owned(),
            "--property=ControlGroup".to_owned(),
            "--value".to_owned(),
            unit.to_owned(),
        ])
    }

    /// Runs systemctl with `args`; what it printed on stdout (at most
    /// [`STDOUT_MAX`] bytes) when it exits 0.
    pub fn output(&self, args: &[String]) -> Result<Vec<u8>, SystemctlFailure> {
        self.output_capped(args, STDOUT_MAX)
    }

    /// [`Self::output`], keeping at most `cap` bytes of stdout (a `show`
    /// of every unit: `source::identity`'s descriptions).
    pub fn output_capped(&self, args: &[String], cap: usize) -> Result<Vec<u8>, SystemctlFailure> {
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
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SystemctlFailure::Spawn(errno::of_io(&e)))?;
        // stdout and stderr read on threads of their own, so a chatty
        // child never blocks on a full pipe while this one waits; only the
        // start of each is kept
        let reader = child.stderr.take().map(|err| kept(err, STDERR_MAX));
        let out_reader = child.stdout.take().map(|out| kept(out, cap));
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
            Ok(out_reader.and_then(|r| r.join().ok()).unwrap_or_default())
        } else {
            Err(SystemctlFailure::Exit {
                code: status.code(),
                stderr,
            })
        }
    }
}

/// The most of systemctl's stdout that is kept: a `show` of one
/// property (a group path is at most a few KiB).
pub const STDOUT_MAX: usize = 64 * 1024;

/// Reads `r` to its end on a thread of its own, keeping the first `cap`
/// bytes.
fn kept(mut r: impl Read + Send + 'static, cap: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 1024];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = cap.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        kept
    })
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
