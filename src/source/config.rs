//! The settings file on disk: where it is (`$XDG_CONFIG_HOME/cgtop/
//! config.toml`, else `$HOME/.config/cgtop/config.toml`, or `--config
//! FILE`; as root, a place of another user's is passed over for root's
//! own, [`load_env`]), reading it as the action log's directory is checked (no
//! symlink on the way, every directory and the file the user's or
//! root's and written by no one else, a regular file: a FIFO or a device
//! is refused before a byte is read, at most `model::files::config::MAX_BYTES`),
//! and writing its `columns` line for the column chooser (a temporary
//! file beside it, then rename). The parsing is `model::files::config`.

use super::actionlog::{self, Unsafe};
use crate::model::files::config::{self, Config, ConfigError};
use crate::model::tree::text;
use crate::model::Errno;
use rustix::fs::{Mode, OFlags};
use std::ffi::OsStr;
use std::fmt;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The file the environment names: `$XDG_CONFIG_HOME/cgtop/config.toml`
/// or `$HOME/.config/cgtop/config.toml`. A relative XDG_CONFIG_HOME is
/// ignored, as the XDG base directory spec requires (so is a relative
/// HOME). `None`: neither is usable.
pub fn default_path(xdg_config_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    let xdg = xdg_config_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|p| p.join("cgtop").join("config.toml"));
    xdg.or_else(|| {
        home.map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".config/cgtop/config.toml"))
    })
}

/// This process's: from XDG_CONFIG_HOME and HOME.
pub fn env_path() -> Option<PathBuf> {
    default_path(
        std::env::var_os("XDG_CONFIG_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// The places the environment's settings file is looked for, in order:
/// [`env_path`], then, for root only, root's own
/// (`~root/.config/cgtop/config.toml`, the home from `/etc/passwd`): under
/// `sudo -E` or `su -m` the environment names the caller's directory,
/// which root does not trust ([`load_env`] refuses it and goes on to
/// root's own place, as the action log does).
pub fn env_candidates(euid: u32) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = env_path().into_iter().collect();
    if euid == 0 {
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
        if let Some(h) = actionlog::root_home(&passwd) {
            let p = h.join(".config/cgtop/config.toml");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The environment's settings ([`load_env`]): the file read (or the one
/// the environment names, where the column chooser saves), what it says,
/// and a place passed over because this user may not read it.
#[derive(Debug, Clone)]
pub struct EnvSettings {
    pub path: Option<PathBuf>,
    pub config: Config,
    /// The default place could not be read (EACCES/EPERM on the way or on
    /// the file: a HOME of another user's under `setpriv` or `su`, an NFS
    /// home that root may not read): no settings file, said once.
    pub unreadable: Option<LoadError>,
}

/// Whether a load failed only because this user may not read the place:
/// EACCES or EPERM on a directory on the way or on the file.
fn not_readable(e: &LoadError) -> bool {
    let denied = |e: Errno| e == Errno::ACCESS || e == Errno::PERM;
    match &e.why {
        Why::Unsafe(Unsafe::Io { errno, .. }) | Why::Io(errno) => denied(*errno),
        _ => false,
    }
}

/// The environment's settings: the first of `candidates` that is not
/// someone else's place (a directory or the file of another user's, a
/// directory others may write) nor one this user may not read, read as
/// [`load`] does. Any other refusal (a symlink, a FIFO, a file of the
/// user's own that others may write) is the error, as is the last
/// place's, so the user's own mistake still says why. A missing file is
/// the defaults, and so is an unreadable default place (in
/// [`EnvSettings::unreadable`], for the caller to say): only `--config
/// FILE` must be read. `None` as the path: no place at all.
pub fn load_env(candidates: &[PathBuf], euid: u32) -> Result<EnvSettings, LoadError> {
    let mut unreadable = None;
    for (i, p) in candidates.iter().enumerate() {
        let res = load(p, euid, false);
        let others = match &res {
            Err(LoadError {
                why: Why::Unsafe(Unsafe::NotOwned { .. }),
                ..
            }) => true,
            Err(LoadError {
                why: Why::Unsafe(Unsafe::Writable { path, .. }),
                path: file,
            }) => path != file,
            _ => false,
        };
        match res {
            Err(e) if not_readable(&e) => {
                unreadable.get_or_insert(e);
            }
            res if !(others && i + 1 < candidates.len()) => {
                return res.map(|config| EnvSettings {
                    path: Some(p.clone()),
                    config,
                    unreadable: None,
                });
            }
            _ => {}
        }
    }
    Ok(EnvSettings {
        path: unreadable.as_ref().map(|e| e.path.clone()),
        config: Config::default(),
        unreadable,
    })
}

impl LoadError {
    /// How an unreadable default place is said (once: on stderr in `-b`
    /// and `--json`, on the status line in the TUI).
    pub fn as_unread_note(&self) -> String {
        let p = text::escape(self.path.as_os_str().as_encoded_bytes());
        let why = match &self.why {
            Why::Unsafe(u) => u.to_string(),
            Why::Io(e) => std::io::Error::from(*e).to_string(),
            other => format!("{other:?}"),
        };
        format!("settings file {p} not read ({why}): the defaults apply")
    }
}

/// Why the file could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// Refused unread: a symlink, someone else's, writable by others...
    Unsafe(Unsafe),
    /// `--config FILE` names a file that is not there.
    Missing,
    Io(Errno),
    /// Read, and not a good settings file.
    Bad(ConfigError),
}

/// The file and what is wrong with it: `config FILE line 3: key `x`:
/// ...` (the path escaped, as every byte from outside is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: PathBuf,
    pub why: Why,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = text::escape(self.path.as_os_str().as_encoded_bytes());
        match &self.why {
            Why::Bad(e) => write!(f, "config {p} {e}"),
            Why::Unsafe(u) => write!(f, "config {p}: refused: {u}"),
            Why::Missing => write!(f, "config {p}: no such file"),
            Why::Io(e) => write!(f, "config {p}: {}", std::io::Error::from(*e)),
        }
    }
}

impl std::error::Error for LoadError {}

/// `path` made absolute against the working directory (`--config
/// my.toml`), without resolving anything.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The file's bytes, at most `MAX_BYTES + 1` (so that a bigger one is
/// seen to be), through the checked walk. `Ok(None)`: not there.
fn read_bytes(path: &Path, euid: u32) -> Result<Option<Vec<u8>>, Why> {
    let Some(fd) = actionlog::open_read(path, euid).map_err(Why::Unsafe)? else {
        return Ok(None);
    };
    let mut buf = Vec::new();
    std::fs::File::from(fd)
        .take(config::MAX_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Why::Io(crate::model::write::errno::of_io(&e)))?;
    Ok(Some(buf))
}

/// Reads and parses the settings at `path`. A missing file is the
/// defaults unless `must_exist` (`--config FILE`).
pub fn load(path: &Path, euid: u32, must_exist: bool) -> Result<Config, LoadError> {
    let path = absolute(path);
    let err = |why| LoadError {
        path: path.clone(),
        why,
    };
    match read_bytes(&path, euid).map_err(err)? {
        None if must_exist => Err(err(Why::Missing)),
        None => Ok(Config::default()),
        Some(bytes) => config::parse(&bytes).map_err(|e| err(Why::Bad(e))),
    }
}

/// Writes `names` as the `columns` of the file at `path`, keeping the
/// rest of it (`model::files::config::with_columns`); a new file (and its
/// directories, 0700) where there is none. A temporary file beside it
/// (O_EXCL, O_NOFOLLOW), then rename: a reader sees the old file or the
/// new one, never half. The file is `euid`'s own.
pub fn save_columns(path: &Path, euid: u32, names: &[&str]) -> Result<(), LoadError> {
    let path = absolute(path);
    let err = |why| LoadError {
        path: path.clone(),
        why,
    };
    let old = read_bytes(&path, euid).map_err(err)?;
    let old_text = match &old {
        Some(b) => {
            // a file cgtop refuses to read is not rewritten
            config::parse(b).map_err(|e| err(Why::Bad(e)))?;
            String::from_utf8_lossy(b).into_owned()
        }
        None => String::new(),
    };
    let new = config::with_columns(&old_text, names).map_err(|e| err(Why::Bad(e)))?;
    let Some((dir, _, file)) =
        actionlog::walk_dirs(&path, euid, true, false).map_err(|u| err(Why::Unsafe(u)))?
    else {
        return Err(err(Why::Missing));
    };
    let mut tmp_name = file.clone();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let flags = OFlags::WRONLY
        | OFlags::CREATE
        | OFlags::EXCL
        | OFlags::NOFOLLOW
        | OFlags::CLOEXEC
        | OFlags::NOCTTY;
    // a leftover of a killed save is ours to replace (same pid reused)
    let _ = rustix::fs::unlinkat(&dir, &tmp_name, rustix::fs::AtFlags::empty());
    let fd = rustix::fs::openat(&dir, &tmp_name, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| err(Why::Io(e)))?;
    let mut f = std::fs::File::from(fd);
    let written = f
        .write_all(new.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| crate::model::write::errno::of_io(&e));
    let renamed = written.and_then(|()| rustix::fs::renameat(&dir, &tmp_name, &dir, &file));
    if let Err(e) = renamed {
        let _ = rustix::fs::unlinkat(&dir, &tmp_name, rustix::fs::AtFlags::empty());
        return Err(err(Why::Io(e)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_places() {
        let p =
            |x: Option<&str>, h: Option<&str>| default_path(x.map(OsStr::new), h.map(OsStr::new));
        assert_eq!(
            p(Some("/x"), Some("/h")),
            Some(PathBuf::from("/x/cgtop/config.toml"))
        );
        // relative: ignored, as the XDG spec says
        assert_eq!(
            p(Some("rel"), Some("/h")),
            Some(PathBuf::from("/h/.config/cgtop/config.toml"))
        );
        assert_eq!(p(None, Some("rel")), None);
        assert_eq!(p(None, None), None);
    }
}
