//! Whether the SIGKILL fallback for kernels without cgroup.kill (before
//! 5.14, `source::writer`) may signal a process listed in a group: a pure
//! decision from the text of its /proc/PID/stat and whether the group's
//! cgroup.procs lists it, which the writer reads while it holds the
//! process by a pidfd.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::tree::procstat::StatLine;
use crate::model::write::guard::ProcLine;

/// PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// Why a pid listed in a group is not signalled by the SIGKILL fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotSignalled {
    /// PID 1: never.
    Init,
    /// cgtop itself.
    Itself,
    /// A kernel thread (PF_KTHREAD).
    KernelThread,
    /// /proc/PID/cgroup does not name this group (moved, exited, or the
    /// list was not the kernel's).
    NotInGroup,
}

/// Whether the SIGKILL fallback may signal `pid`, listed in the group
/// whose /proc/PID/cgroup path is `want` ("/a/b"), from the texts of its
/// /proc/PID/stat and /proc/PID/cgroup (its cgroup2 line).
pub fn may_signal(
    pid: u32,
    self_pid: u32,
    stat: &[u8],
    cgroup: &str,
    want: &str,
) -> Result<(), NotSignalled> {
    may_signal_in(&ProcLine::v2(), pid, self_pid, stat, cgroup, want)
}

/// [`may_signal`] for a group of the hierarchy whose /proc/PID/cgroup
/// line is `line` (cgroup v1 has no cgroup.kill at all: this fallback is
/// its kill).
pub fn may_signal_in(
    line: &ProcLine,
    pid: u32,
    self_pid: u32,
    stat: &[u8],
    cgroup: &str,
    want: &str,
) -> Result<(), NotSignalled> {
    may_signal_listed(
        pid,
        self_pid,
        stat,
        line.path(cgroup).is_some_and(|p| p == want),
    )
}

/// Whether the SIGKILL fallback may signal `pid`, from the text of its
/// /proc/PID/stat and whether the group's own cgroup.procs still `listed`
/// it once the writer held it by a pidfd: the kernel's list, read through
/// the group's directory descriptor, which needs no path (a group nested
/// past PATH_MAX has none that /proc/PID/cgroup could print whole).
pub fn may_signal_listed(
    pid: u32,
    self_pid: u32,
    stat: &[u8],
    listed: bool,
) -> Result<(), NotSignalled> {
    if pid <= 1 {
        return Err(NotSignalled::Init);
    }
    if pid == self_pid {
        return Err(NotSignalled::Itself);
    }
    // field 9 of /proc/PID/stat: the task's flags
    let flags = StatLine::parse(stat).and_then(|l| l.number::<u64>(9));
    match flags {
        Some(f) if f & PF_KTHREAD == 0 => {}
        Some(_) => return Err(NotSignalled::KernelThread),
        None => return Err(NotSignalled::NotInGroup),
    }
    if listed {
        Ok(())
    } else {
        Err(NotSignalled::NotInGroup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_the_kill_fallback_may_signal() {
        let stat = |flags: u64| format!("42 (a b) S 1 42 42 0 -1 {flags} 0 0 0 0").into_bytes();
        let here = "1:name=systemd:/\n0::/job/sub\n";
        assert_eq!(
            may_signal(42, 7, &stat(0x40_0100), here, "/job/sub"),
            Ok(())
        );
        assert_eq!(
            may_signal(1, 7, &stat(0), here, "/job/sub"),
            Err(NotSignalled::Init)
        );
        assert_eq!(
            may_signal(42, 42, &stat(0), here, "/job/sub"),
            Err(NotSignalled::Itself)
        );
        assert_eq!(
            may_signal(42, 7, &stat(0x20_8040), here, "/job/sub"),
            Err(NotSignalled::KernelThread)
        );
        assert_eq!(
            may_signal(42, 7, &stat(0), "0::/job/other\n", "/job/sub"),
            Err(NotSignalled::NotInGroup)
        );
        assert_eq!(
            may_signal(42, 7, b"", here, "/job/sub"),
            Err(NotSignalled::NotInGroup),
            "no /proc entry: exited"
        );
        // cgroup v1: the line of the hierarchy the group is in, not another
        let v1 = "4:memory:/job/sub\n3:cpu,cpuacct:/\n0::/\n";
        let mem = ProcLine("memory".into());
        assert_eq!(may_signal_in(&mem, 42, 7, &stat(0), v1, "/job/sub"), Ok(()));
        assert_eq!(
            may_signal_in(
                &ProcLine("cpu,cpuacct".into()),
                42,
                7,
                &stat(0),
                v1,
                "/job/sub"
            ),
            Err(NotSignalled::NotInGroup)
        );
        assert_eq!(
            may_signal(42, 7, &stat(0), v1, "/job/sub"),
            Err(NotSignalled::NotInGroup)
        );
        assert_eq!(
            may_signal_in(&mem, 1, 7, &stat(0), "4:memory:/job/sub\n", "/job/sub"),
            Err(NotSignalled::Init)
        );
        // a name that is not UTF-8 (any user picks their own) is still read
        assert_eq!(
            may_signal(42, 7, b"42 (\xff) S 1 42 42 0 -1 256 0", here, "/job/sub"),
            Ok(())
        );
    }
}
