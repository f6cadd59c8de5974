//! `cgtop export-log`: the action log as a reviewable shell script and its
//! undo (issue 10 item 4). Reads the log (`source::actionlog::read_log`),
//! makes the scripts (`model::files::script`), writes them as new files
//! (`source::actionlog::write_script`).
//!
//! `-o FILE` writes FILE and its undo beside it (`apply.sh` ->
//! `apply.undo.sh`, or `--undo FILE`): two files, because an undo script
//! is only of use if it is made at the same time, from the same log lines,
//! as the script it takes back. Without `-o` the apply script goes to
//! stdout (for a quick review or a pipe), and the undo only with `--undo`.

use crate::model::files::script::{self, Meta};
use crate::model::tree::text::escape;
use crate::source::actionlog::{self, ActionLog, MAX_ENTRIES};
use std::ffi::OsString;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(clap::Args, Debug)]
pub struct ExportLogArgs {
    /// The action log to read (default: the one cgtop writes,
    /// $XDG_STATE_HOME/cgtop/actions.log)
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Only the changes at or after TIME: UTC as the log writes it
    /// (2024-05-01T12:00:00Z), a date (2024-05-01), 2024-05-01T12:00, or
    /// an age (30m, 2h, 1d)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// systemd units: systemctl set-property without --runtime, so that
    /// the change outlives a reboot
    #[arg(long)]
    pub persist: bool,

    /// Write the script to FILE (a new file, mode 0700) and its undo
    /// beside it (FILE.sh -> FILE.undo.sh); without -o the script goes to
    /// stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write the undo script to FILE (default: beside -o's)
    #[arg(long, value_name = "FILE")]
    pub undo: Option<PathBuf>,

    /// Replace existing output files (regular files of this user's only)
    #[arg(long)]
    pub force: bool,
}

/// The undo script's path beside the apply script's: `x.sh` ->
/// `x.undo.sh`, `x` -> `x.undo`.
pub fn undo_path(apply: &Path) -> PathBuf {
    let mut name: OsString = apply
        .file_stem()
        .map_or_else(OsString::new, ToOwned::to_owned);
    match apply.extension() {
        Some(ext) if ext == "sh" => name.push(".undo.sh"),
        Some(ext) => {
            name.push(".");
            name.push(ext);
            name.push(".undo");
        }
        None => name.push(".undo"),
    }
    apply.with_file_name(name)
}

/// The most bytes of a log `export-log` reads: 5,000 times the
/// [`MAX_ENTRIES`] lines it keeps at their usual 200 bytes, room for a
/// long history before `--since`; a log that goes on past it (a file that
/// grows without end) ends there.
const MAX_LOG_BYTES: u64 = 1 << 30;

/// The log, opened without following a symbolic link and without waiting
/// (a FIFO with no writer would block the open), and only if it is a
/// regular file (`/dev/zero` or a FIFO is refused, not read forever).
fn open_log(p: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = rustix::fs::open(p, flags | OFlags::CLOEXEC, Mode::empty())?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::other(
            "not a regular file (a FIFO, device or directory): not an action log",
        ));
    }
    Ok(std::fs::File::from(fd))
}

/// Whether two places of [`actionlog::script_place`] are one file: the
/// same name in the same directory (device and inode: through a symlink
/// or `..` too), or two names of one existing file.
fn same_file(a: &(OwnedFd, OsString), b: &(OwnedFd, OsString)) -> bool {
    use rustix::fs::{fstat, statat, AtFlags};
    let id = |st: rustix::fs::Stat| (st.st_dev, st.st_ino);
    let dirs = fstat(&a.0).ok().map(id) == fstat(&b.0).ok().map(id);
    if dirs && a.1 == b.1 {
        return true;
    }
    let file = |p: &(OwnedFd, OsString)| statat(&p.0, &p.1, AtFlags::SYMLINK_NOFOLLOW).ok().map(id);
    file(a).is_some() && file(a) == file(b)
}

fn shown(p: &Path) -> String {
    escape(p.as_os_str().as_encoded_bytes()).into_owned()
}

pub fn main(a: &ExportLogArgs) -> ExitCode {
    match run(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            super::complain(&format!("export-log: {e}"));
            ExitCode::from(code)
        }
    }
}

fn run(a: &ExportLogArgs) -> Result<(), (u8, String)> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let since = a
        .since
        .as_deref()
        .map(|s| script::parse_since(s, now))
        .transpose()
        .map_err(|e| (2, e))?;
    let log = match &a.log {
        Some(p) => p.clone(),
        None => ActionLog::from_env()
            .path()
            .map(Path::to_path_buf)
            .ok_or((2, "no action log here (give --log FILE)".to_owned()))?,
    };
    let f = open_log(&log).map_err(|e| (1, format!("{}: {e}", shown(&log))))?;
    let read = actionlog::read_log(
        std::io::BufReader::new(f.take(MAX_LOG_BYTES)),
        since.as_deref(),
    )
    .map_err(|e| (1, format!("{}: {e}", shown(&log))))?;
    if read.over_cap > 0 {
        return Err((
            1,
            format!(
                "{}: more than {MAX_ENTRIES} changes; narrow them with --since",
                shown(&log)
            ),
        ));
    }
    let undo = match (&a.undo, &a.output) {
        (Some(u), _) => Some(u.clone()),
        (None, Some(o)) => Some(undo_path(o)),
        (None, None) => None,
    };
    // both places resolved (the checked walk: no symlinked directory)
    // before either is written
    let place = |p: &Option<PathBuf>| {
        p.as_deref()
            .map(actionlog::script_place)
            .transpose()
            .map_err(|e| (1, e))
    };
    let (o_place, u_place) = (place(&a.output)?, place(&undo)?);
    if let (Some(o), Some(op), Some(up)) = (&a.output, &o_place, &u_place) {
        // one file for both: the undo would replace the apply script (with
        // --force) under the apply script's name
        if same_file(op, up) {
            return Err((
                2,
                format!(
                    "{}: the apply script and its undo cannot be one file",
                    shown(o)
                ),
            ));
        }
    }
    if !a.force {
        // neither is written when the other would be refused as existing
        for (p, pl) in [(&a.output, &o_place), (&undo, &u_place)] {
            if let (Some(p), Some((dir, name))) = (p, pl) {
                if rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok() {
                    return Err((
                        1,
                        format!("{} exists (give --force to replace it)", shown(p)),
                    ));
                }
            }
        }
    }
    let name = |p: &Option<PathBuf>| {
        p.as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let meta = Meta {
        made: script::rfc3339(now),
        host: rustix::system::uname().nodename().to_bytes().to_vec(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        source: log.as_os_str().as_encoded_bytes().to_vec(),
        since,
        malformed: read.malformed,
        persist: a.persist,
        undo_name: name(&undo),
        apply_name: name(&a.output),
    };
    let s = script::scripts(&read.entries, &meta);
    let mut say = Vec::new();
    match (&a.output, &o_place) {
        (Some(o), Some(place)) => {
            actionlog::write_script(place, &s.apply, a.force).map_err(|e| (1, e))?;
            say.push(format!("wrote {}", shown(o)));
        }
        _ => {
            std::io::stdout()
                .write_all(s.apply.as_bytes())
                .map_err(|e| (1, format!("stdout: {e}")))?;
        }
    }
    match (&undo, &u_place) {
        (Some(u), Some(place)) => {
            actionlog::write_script(place, &s.undo, a.force).map_err(|e| (1, e))?;
            say.push(format!("undo {}", shown(u)));
        }
        _ => say.push("no undo script (give -o FILE or --undo FILE)".into()),
    }
    let mut summary = format!(
        "{} change(s) replayed, {} as comments only",
        s.replayed, s.comments
    );
    if s.unplaced > 0 {
        summary.push_str(&format!(
            "; {} line(s) without where the group is in its hierarchy, not replayed (see the header)",
            s.unplaced
        ));
    }
    if read.malformed > 0 {
        summary.push_str(&format!(
            "; {} malformed line(s) skipped, the first line {}",
            read.malformed,
            read.first_malformed.unwrap_or(0)
        ));
    }
    let _ = writeln!(
        std::io::stderr(),
        "cgtop export-log: {}; {summary}",
        say.join(", ")
    );
    Ok(())
}
