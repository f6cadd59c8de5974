//! The action log: one line per performed op, appended to
//! `$XDG_STATE_HOME/cgtop/actions.log` (default
//! `~/.local/state/cgtop/actions.log`), so that an operator can see later
//! what cgtop changed, what it replaced, and what the kernel said.
//!
//! Logging never blocks a write: the write has already happened when the
//! line is appended, and a failure to log comes back as an error for the
//! status line. Formatting is pure; the clock is a parameter.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use super::writer::WriteOutcome;
use crate::model::write::Op;
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the log goes: `$XDG_STATE_HOME/cgtop/actions.log`, or
/// `$HOME/.local/state/cgtop/actions.log`. A relative XDG_STATE_HOME is
/// ignored, as the XDG base directory spec requires. `None` without a
/// usable directory.
pub fn log_path(xdg_state_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    let state = xdg_state_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            home.map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/state"))
        })?;
    Some(state.join("cgtop").join("actions.log"))
}

/// UTC time as RFC 3339: "2024-05-01T12:00:00Z".
pub fn rfc3339_utc(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let secs = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Days since 1970-01-01 -> (year, month, day) in the proleptic Gregorian
/// calendar (the "civil from days" algorithm: eras of 400 years, years
/// counted from March so that the leap day is last).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// A value as one token: bare when it is plain, quoted and escaped
/// otherwise (spaces, newlines of multi-line files, empty).
fn show(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '\\');
    if plain {
        s.to_owned()
    } else {
        format!("{s:?}")
    }
}

/// One log line, without the newline:
///
/// ```text
/// 2024-05-01T12:00:00Z /a/b memory.max max -> 1000 (stored 0) ok
/// 2024-05-01T12:00:00Z /a/b cgroup.kill - -> 1 ok
/// 2024-05-01T12:00:00Z /a/b mkdir ok
/// 2024-05-01T12:00:00Z /a/b rmdir failed: rmdir /a/b: ... [EBUSY]
/// ```
pub fn format_line(unix_secs: u64, o: &WriteOutcome) -> String {
    let time = rfc3339_utc(unix_secs);
    let mut line = match &o.op {
        Op::CreateGroup(p) => format!("{time} {} mkdir", show(&p.to_string())),
        Op::RemoveGroup(p) => format!("{time} {} rmdir", show(&p.to_string())),
        Op::Write(w) => {
            let old = o
                .old
                .as_deref()
                .map_or_else(|| "-".to_owned(), |t| show(t.trim_end()));
            let mut s = format!(
                "{time} {} {} {old} -> {}",
                show(&w.group.to_string()),
                show(&w.file),
                show(&w.contents)
            );
            if let Some(rb) = &o.new_readback {
                let rb = rb.trim_end();
                if o.is_ok() && rb != w.contents.trim() {
                    s.push_str(" (stored ");
                    s.push_str(&show(rb));
                    s.push(')');
                }
            }
            s
        }
    };
    match &o.result {
        Ok(()) => line.push_str(" ok"),
        Err(e) => {
            line.push_str(" failed: ");
            line.push_str(&e.to_string());
        }
    }
    for n in &o.notes {
        line.push_str("; ");
        line.push_str(n);
    }
    line.replace('\n', " ")
}

/// The log file, if there is a place for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionLog {
    path: Option<PathBuf>,
}

impl ActionLog {
    /// The path from XDG_STATE_HOME and HOME.
    pub fn from_env() -> Self {
        Self {
            path: log_path(
                std::env::var_os("XDG_STATE_HOME").as_deref(),
                std::env::var_os("HOME").as_deref(),
            ),
        }
    }

    pub fn at(path: PathBuf) -> Self {
        Self { path: Some(path) }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one outcome, creating the directory if needed. The error says
    /// which file and why, for the status line.
    pub fn append(&self, o: &WriteOutcome, at: SystemTime) -> Result<(), String> {
        let Some(path) = &self.path else {
            return Err(
                "action log: neither XDG_STATE_HOME nor HOME is set, so nothing was logged".into(),
            );
        };
        let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut line = format_line(secs, o);
        line.push('\n');
        let fail = |e: std::io::Error| format!("action log {}: {e}", path.display());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CpuMax, Limit};
    use crate::model::input::MemoryFile;
    use crate::model::write::*;
    use crate::model::GroupPath;
    use crate::source::writer::{explain, ErrorContext};
    use rustix::io::Errno;

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    fn ok(op: Op, old: Option<&str>, rb: Option<&str>) -> WriteOutcome {
        WriteOutcome {
            op,
            old: old.map(str::to_owned),
            new_readback: rb.map(str::to_owned),
            result: Ok(()),
            notes: vec![],
            offer: None,
        }
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
            "2024-05-01T12:00:00Z /a/b memory.max max -> 1000 (stored 0) ok"
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
            "2024-05-01T12:00:00Z /a/b cpu.max \"max 100000\" -> \"50000 100000\" ok"
        );
        assert_eq!(
            format_line(T, &ok(kill(&a), None, None)),
            "2024-05-01T12:00:00Z /a/b cgroup.kill - -> 1 ok"
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
            "2024-05-01T12:00:00Z /a/b io.weight \"default 100\\n8:0 50\" -> \"default 200\" \
             (stored \"default 200\\n8:0 50\") ok"
        );
        let rm = remove_group(&a);
        let failed = WriteOutcome {
            result: Err(explain(
                &rm,
                Errno::BUSY.raw_os_error(),
                &ErrorContext {
                    group_exists: true,
                    nr_procs: Some(1),
                    nr_children: Some(0),
                    ..ErrorContext::default()
                },
            )),
            ..ok(rm.clone(), None, None)
        };
        assert_eq!(
            format_line(T, &failed),
            "2024-05-01T12:00:00Z /a/b rmdir failed: rmdir /a/b: /a/b still has 1 process and 0 \
             child groups; only an empty group can be removed (remove the child groups first, \
             and move its processes out or kill them) [EBUSY]"
        );
        let noted = WriteOutcome {
            notes: vec!["sent SIGKILL to 2 processes".into()],
            ..ok(kill(&g("odd name")), None, None)
        };
        assert_eq!(
            format_line(T, &noted),
            "2024-05-01T12:00:00Z \"/odd name\" cgroup.kill - -> 1 ok; sent SIGKILL to 2 processes"
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
            "2024-05-01T12:00:00Z /a cgroup.freeze 0 -> 1 ok\n\
             2024-05-01T12:00:00Z /a cgroup.freeze 0 -> 1 ok\n"
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
            e.starts_with("action log ") && e.contains("Not a directory"),
            "{e}"
        );
        let none = ActionLog { path: None };
        assert_eq!(
            none.append(&ok(kill(&g("a")), None, None), UNIX_EPOCH),
            Err("action log: neither XDG_STATE_HOME nor HOME is set, so nothing was logged".into())
        );
    }
}
