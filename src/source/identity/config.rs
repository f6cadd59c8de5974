//! Where the runtimes keep their files when not where they do by default:
//! docker's `data-root` in `/etc/docker/daemon.json`, and the
//! `[storage]` table's `graphroot` and `runroot` in containers/storage's
//! `/etc/containers/storage.conf` (podman's store, and CRI-O's bundles
//! below the runroot) or, for a rootless user, in their own
//! `~/.config/containers/storage.conf`.
//!
//! Read once when the resolver is made, by the hostile-file rules
//! ([`super::read`]): the system's files only when root owns them, a
//! user's only when that user owns it and it is reached from `/` with no
//! symlink on the way; each capped at [`CAP`]. Only the keys named are
//! read (daemon.json as JSON into those fields; storage.conf line by line,
//! a `key = "value"` in the `[storage]` table, no TOML beyond that). A
//! place must be an absolute path of plain components (no `.`, `..` or
//! empty one); a user's graphroot must be below their home. Anything else
//! leaves the default.

use super::read::{read_file, read_typed, Miss};
use crate::source::hier::Hier;
use std::path::{Component, Path, PathBuf};

/// docker's daemon configuration, below the base.
pub const DAEMON_JSON: &str = "etc/docker/daemon.json";
/// containers/storage's system configuration, below the base.
pub const STORAGE_CONF: &str = "etc/containers/storage.conf";
/// A rootless user's storage configuration, below their home.
pub const USER_STORAGE_CONF: &str = ".config/containers/storage.conf";
/// The cap of each (a few hundred bytes in practice; containers/storage's
/// example storage.conf with every comment is about 10 KiB).
pub const CAP: usize = 64 << 10;

/// The places read, each relative to the base (`var/lib/docker`), or
/// `None` for the runtime's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// docker's `data-root`.
    pub docker_root: Option<PathBuf>,
    /// containers/storage's `graphroot` (podman, rootful).
    pub graphroot: Option<PathBuf>,
    /// containers/storage's `runroot` (CRI-O's bundles).
    pub runroot: Option<PathBuf>,
}

/// The fields of daemon.json read: `data-root` (and `graph`, its name
/// before docker 17.05); any other is skipped unread.
#[derive(serde::Deserialize)]
struct Daemon {
    #[serde(rename = "data-root")]
    data_root: Option<String>,
    graph: Option<String>,
}

/// The places the system's files name, read beneath `base` (`/`).
pub fn system(base: &Hier, errors: &mut u64) -> Places {
    let mut p = Places::default();
    if let Ok(d) = read_typed::<Daemon>(base, Path::new(DAEMON_JSON), CAP, Some(0), errors) {
        p.docker_root = d.data_root.or(d.graph).as_deref().and_then(place);
    }
    if let Ok(text) = read_file(base, Path::new(STORAGE_CONF), CAP, Some(0)) {
        let text = String::from_utf8_lossy(&text);
        p.graphroot = storage_key(&text, "graphroot").as_deref().and_then(place);
        p.runroot = storage_key(&text, "runroot").as_deref().and_then(place);
    }
    p
}

/// A rootless user's graphroot from their own storage.conf, read at
/// `home_in` below `h` (their home on the mount that holds it), when it is
/// below their home (`home_rel`: their home relative to the base):
/// relative to the base. `Err(Miss::Absent)`: none set, or not a place
/// below their home (the default applies).
pub fn user_graphroot(
    h: &Hier,
    home_in: &Path,
    home_rel: &Path,
    uid: u32,
) -> Result<PathBuf, Miss> {
    let text = read_file(h, &home_in.join(USER_STORAGE_CONF), CAP, Some(uid))?;
    let text = String::from_utf8_lossy(&text);
    let root = storage_key(&text, "graphroot")
        .as_deref()
        .and_then(place)
        .ok_or(Miss::Absent)?;
    if root.starts_with(home_rel) && root != home_rel {
        Ok(root)
    } else {
        Err(Miss::Absent)
    }
}

/// An absolute path of plain components, relative to `/`.
fn place(s: &str) -> Option<PathBuf> {
    let rest = s.strip_prefix('/')?;
    if s.len() > 4096 || rest.is_empty() {
        return None;
    }
    let p = PathBuf::from(rest.trim_end_matches('/'));
    let plain = p.components().all(|c| matches!(c, Component::Normal(_)))
        && !rest.split('/').any(|c| c == "." || c == "..")
        && !rest.trim_end_matches('/').contains("//");
    plain.then_some(p)
}

/// The value of `key` in the `[storage]` table of a storage.conf: a line
/// `key = "value"` (or `'value'`), the first one; a value with a
/// backslash or a quote in it is none (no escapes are read).
fn storage_key(text: &str, key: &str) -> Option<String> {
    let mut table = "";
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            table = l;
            continue;
        }
        if table != "[storage]" {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        if k.trim() != key {
            continue;
        }
        let v = v.trim();
        let q = v.chars().next()?;
        if q != '"' && q != '\'' {
            return None;
        }
        let inner = &v[1..];
        let end = inner.find(q)?;
        let value = &inner[..end];
        // after the closing quote: nothing, or a comment
        let after = inner[end + 1..].trim_start();
        if !(after.is_empty() || after.starts_with('#')) || value.contains(['\\', '"', '\'']) {
            return None;
        }
        return Some(value.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_conf_keys_of_the_storage_table_only() {
        let text = r#"
# graphroot = "/commented"
[storage.options]
graphroot = "/not/this/table"
[storage]
driver = "overlay"
runroot = '/run/alt'   # a comment
graphroot = "/srv/containers/storage"
graphroot = "/second"
"#;
        assert_eq!(
            storage_key(text, "graphroot").as_deref(),
            Some("/srv/containers/storage")
        );
        assert_eq!(storage_key(text, "runroot").as_deref(), Some("/run/alt"));
        for bad in [
            "[storage]\ngraphroot = \"/a\\\"b\"",
            "[storage]\ngraphroot = /bare",
            "[storage]\ngraphroot = \"/a\" junk",
        ] {
            assert_eq!(storage_key(bad, "graphroot"), None, "{bad}");
        }
    }

    #[test]
    fn places_are_absolute_plain_paths() {
        assert_eq!(place("/srv/docker/"), Some(PathBuf::from("srv/docker")));
        for bad in ["", "/", "relative", "/a/../etc", "/a/./b", "/a//b"] {
            assert_eq!(place(bad), None, "{bad:?}");
        }
    }
}
