//! A group's path relative to the cgroup2 mount (or `--root`).
//!
//! Group names come from directories that anyone with a delegated subtree
//! can create, so they are arbitrary bytes: not UTF-8, holding terminal
//! escapes, or looking like another name once made into text. A path is
//! kept as those bytes from `readdir` to the write that names it, and
//! turned into text only to be shown, through [`crate::model::tree::text::escape`].

use crate::model::tree::text::{escape, escape_name};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Path of a group relative to the hierarchy root: its components joined
/// by `/`. The root is the empty path and displays as "/".
///
/// Stored as bytes rather than `OsString`: the model is about Linux
/// cgroupfs, where a name is a byte string, and bytes can be sliced,
/// compared and hashed as such (maps keyed by path are searched with a
/// `&[u8]` slice of a longer path, no allocation). [`Self::as_rel_path`]
/// gives the `&Path` for opening, without a copy. The bytes are shared
/// (`Arc<[u8]>`, never changed once made): a clone is a count, not a
/// copy, so the scanner's entry, the snapshot's sample, the rates'
/// baseline, the tree's node and its index hold one path between them
/// (at 10,000 groups each copy was about 0.7 MB).
///
/// Invariant, checked by every constructor: each component is non-empty,
/// is neither `.` nor `..`, and holds neither `/` nor NUL. A path can
/// therefore never lead out of the hierarchy, and two different groups
/// never share a path (`bad\xff` and `bad\u{FFFD}` are two paths).
#[derive(Clone, Default)]
pub struct GroupPath(std::sync::Arc<[u8]>);

// Equality and order are the bytes', as derived, but one copy is equal
// to itself without reading it: the scanners of every hierarchy share
// one copy of a path (`source::scan::SharedPaths`), and the merge
// compares each group's path across them. (`Arc`'s own shortcut is for
// sized contents only, not `[u8]`.)
impl PartialEq for GroupPath {
    fn eq(&self, other: &Self) -> bool {
        self.same_copy(other) || self.0[..] == other.0[..]
    }
}

impl Eq for GroupPath {}

impl Ord for GroupPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if self.same_copy(other) {
            return std::cmp::Ordering::Equal;
        }
        self.0[..].cmp(&other.0[..])
    }
}

impl PartialOrd for GroupPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

// the bytes', as equality
impl std::hash::Hash for GroupPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0[..].hash(state);
    }
}

/// Why a path or a group name was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathError {
    /// A component `..`: it would lead out of the group (or the hierarchy).
    DotDot,
    /// A NUL byte: no file name can hold one.
    Nul,
    /// A name that is empty.
    Empty,
    /// A name that is `.`.
    Dot,
    /// A name holding `/`: it would be a path, not one name.
    Slash,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::DotDot => "a group path cannot hold `..` (it would leave the hierarchy)",
            Self::Nul => "a group name cannot hold a NUL byte",
            Self::Empty => "a group name cannot be empty",
            Self::Dot => "a group name cannot be `.`",
            Self::Slash => "a group name cannot hold `/`",
        })
    }
}

impl std::error::Error for PathError {}

/// Checks one name (a directory entry, or what an operator typed).
fn check_name(name: &[u8]) -> Result<(), PathError> {
    match name {
        [] => Err(PathError::Empty),
        b"." => Err(PathError::Dot),
        b".." => Err(PathError::DotDot),
        _ if name.contains(&b'/') => Err(PathError::Slash),
        _ if name.contains(&0) => Err(PathError::Nul),
        _ => Ok(()),
    }
}

/// The bytes of the parent of the relative path `p` (empty for a group
/// directly below the root, and for the root itself).
pub fn parent_bytes(p: &[u8]) -> &[u8] {
    p.iter().rposition(|&b| b == b'/').map_or(&[], |k| &p[..k])
}

impl GroupPath {
    pub fn root() -> Self {
        Self(std::sync::Arc::default())
    }

    /// From outside input (the command line, /proc/PID/cgroup, mountinfo):
    /// a path such as "system.slice/cron.service" or "/system.slice" (a
    /// leading `/` means the hierarchy root). Empty and `.` components are
    /// dropped; `..` and NUL are refused.
    pub fn parse(rel: &[u8]) -> Result<Self, PathError> {
        let mut out = Vec::with_capacity(rel.len());
        for c in rel.split(|&b| b == b'/') {
            match check_name(c) {
                Ok(()) => {
                    if !out.is_empty() {
                        out.push(b'/');
                    }
                    out.extend_from_slice(c);
                }
                Err(PathError::Empty | PathError::Dot) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Self(out.into()))
    }

    /// From a path written in code (tests, fixtures' known groups), as
    /// [`Self::parse`]. Outside input goes through [`Self::parse`].
    ///
    /// # Panics
    /// When `rel` is not a valid path (`..` or NUL): a mistake in the code.
    #[track_caller]
    pub fn new(rel: &str) -> Self {
        match Self::parse(rel.as_bytes()) {
            Ok(p) => p,
            Err(e) => panic!("GroupPath::new({rel:?}): {e}"),
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `other` is this very copy (not only the same bytes): a
    /// path shared by several holders (`source::scan::SharedPaths`).
    pub fn same_copy(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether another holder has this copy too.
    pub fn is_shared(&self) -> bool {
        std::sync::Arc::strong_count(&self.0) > 1
    }

    /// The relative bytes (empty for the root).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The relative path to open below the hierarchy root ("" for the
    /// root). The one way from a `GroupPath` to the filesystem.
    pub fn as_rel_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// The last component ("/" for the root), as bytes.
    pub fn name(&self) -> &[u8] {
        if self.0.is_empty() {
            b"/"
        } else {
            &self.0[self.0.iter().rposition(|&b| b == b'/').map_or(0, |k| k + 1)..]
        }
    }

    /// The last component ("/" for the root) as text to show: escaped.
    pub fn name_display(&self) -> Cow<'_, str> {
        escape_name(self.name())
    }

    /// The path as text to show: "/" then each component escaped
    /// ([`crate::model::tree::text::escape_name`]: a space too, as
    /// `\u{20}`), joined by "/". Unambiguous: an escape
    /// never writes `/`, and [`crate::model::tree::text::unescape`] of the whole text
    /// gives back "/" and the path's bytes.
    pub fn display(&self) -> PathDisplay<'_> {
        PathDisplay(self, true)
    }

    /// The path as data (JSON, recordings, the exposition's labels): as
    /// [`Self::display`] but with its spaces as they are (a leading or
    /// trailing one as `\ `): a space is escaped on screen only so that a
    /// name never reads as an identity label, which in data is a field
    /// of its own; JSON escapes what JSON must.
    pub fn data(&self) -> PathDisplay<'_> {
        PathDisplay(self, false)
    }

    /// The components, first to last (none for the root).
    pub fn components(&self) -> impl Iterator<Item = &[u8]> {
        self.0.split(|&b| b == b'/').filter(|c| !c.is_empty())
    }

    pub fn parent(&self) -> Option<Self> {
        if self.0.is_empty() {
            return None;
        }
        Some(Self(parent_bytes(&self.0).into()))
    }

    /// The child `name` of this group. `name` is one component (from
    /// `readdir`, or typed into the "create group" dialog): refused when
    /// empty, `.`, `..`, or holding `/` or NUL.
    pub fn join(&self, name: impl AsRef<[u8]>) -> Result<Self, PathError> {
        let name = name.as_ref();
        check_name(name)?;
        let mut out = Vec::with_capacity(self.0.len() + 1 + name.len());
        out.extend_from_slice(&self.0);
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(name);
        Ok(Self(out.into()))
    }

    /// Number of components (0 for the root).
    pub fn depth(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            self.0.split(|&b| b == b'/').count()
        }
    }

    /// True when `self` is `other` or lies below it.
    pub fn is_within(&self, other: &Self) -> bool {
        other.0.is_empty()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.get(other.0.len()) == Some(&b'/'))
    }

    /// The path below `base`, when `self` is within it.
    pub fn strip_prefix(&self, base: &Self) -> Option<Self> {
        if !self.is_within(base) {
            return None;
        }
        let rest = &self.0[base.0.len()..];
        Some(Self(rest.strip_prefix(b"/").unwrap_or(rest).into()))
    }

    /// `self` followed by every component of `below`.
    #[must_use]
    pub fn concat(&self, below: &Self) -> Self {
        match (self.is_root(), below.is_root()) {
            (_, true) => self.clone(),
            (true, false) => below.clone(),
            (false, false) => {
                let mut out = Vec::with_capacity(self.0.len() + 1 + below.0.len());
                out.extend_from_slice(&self.0);
                out.push(b'/');
                out.extend_from_slice(&below.0);
                Self(out.into())
            }
        }
    }

    /// The path itself and every ancestor, root last.
    pub fn ancestors(&self) -> impl Iterator<Item = Self> {
        std::iter::successors(Some(self.clone()), Self::parent)
    }
}

/// Lets maps keyed by `GroupPath` be searched with a `&[u8]` (the hash of
/// an `Arc<[u8]>` and of its slice agree).
impl std::borrow::Borrow<[u8]> for GroupPath {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

/// The escaped text of a path, from [`GroupPath::display`].
pub struct PathDisplay<'a>(&'a GroupPath, bool);

impl fmt::Display for PathDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_root() {
            return f.pad("/");
        }
        // one string, so that width and alignment apply to the whole
        let mut s = String::with_capacity(self.0 .0.len() + 1);
        for c in self.0.components() {
            s.push('/');
            s.push_str(&if self.1 { escape_name(c) } else { escape(c) });
        }
        f.pad(&s)
    }
}

/// The same escaped text as [`GroupPath::display`]: a path in a message
/// (`format!("froze {g}")`) is shown safely wherever it goes. Never a
/// filesystem path: that is [`GroupPath::as_rel_path`].
impl fmt::Display for GroupPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display().fmt(f)
    }
}

impl fmt::Debug for GroupPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GroupPath({:?})", self.display().to_string())
    }
}

/// JSON and every other serialized form: the escaped text of
/// [`GroupPath::data`] (valid UTF-8 whatever the bytes;
/// [`crate::model::tree::text::unescape`] gives them back).
impl serde::Serialize for GroupPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.data())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tree::text::unescape;

    /// A path shared (a clone) and the same bytes made apart compare,
    /// order and hash alike, and a map keyed by path finds either by
    /// its bytes.
    #[test]
    fn shared_and_separate_paths_compare_by_their_bytes() {
        use std::hash::BuildHasher;
        let a = GroupPath::new("system.slice/cron.service");
        let shared = a.clone();
        let apart = GroupPath::new("system.slice/cron.service");
        let other = GroupPath::new("system.slice/cron.servicf");
        assert!(a.same_copy(&shared) && !a.same_copy(&apart));
        assert_eq!(a, shared);
        assert_eq!(a, apart);
        assert_eq!(a.cmp(&apart), std::cmp::Ordering::Equal);
        assert!(a < other && other > shared);
        let h = std::collections::hash_map::RandomState::new();
        assert_eq!(h.hash_one(&a), h.hash_one(&apart));
        assert_eq!(h.hash_one(&a), h.hash_one(a.as_bytes()));
        let map: std::collections::HashMap<GroupPath, u8> = [(apart, 1)].into();
        assert_eq!(map.get(&shared), Some(&1));
        assert_eq!(map.get(b"system.slice/cron.service".as_slice()), Some(&1));
    }

    #[test]
    fn basics() {
        let p = GroupPath::new("/system.slice//cron.service/");
        assert_eq!(p.as_bytes(), b"system.slice/cron.service");
        assert_eq!(p.display().to_string(), "/system.slice/cron.service");
        assert_eq!(p.name(), b"cron.service");
        assert_eq!(p.depth(), 2);
        assert_eq!(p.parent(), Some(GroupPath::new("system.slice")));
        assert_eq!(GroupPath::new("a").parent(), Some(GroupPath::root()));
        assert_eq!(GroupPath::root().parent(), None);
        assert_eq!(GroupPath::root().name(), b"/");
        assert_eq!(GroupPath::root().join("x").unwrap().as_bytes(), b"x");
        assert_eq!(p.as_rel_path(), Path::new("system.slice/cron.service"));
        let anc: Vec<_> = p.ancestors().map(|a| a.display().to_string()).collect();
        assert_eq!(anc, ["/system.slice/cron.service", "/system.slice", "/"]);
        assert_eq!(
            format!("[{:<6}]", GroupPath::new("a").display()),
            "[/a    ]"
        );
    }

    #[test]
    fn within() {
        let a = GroupPath::new("a/b");
        assert!(a.is_within(&GroupPath::new("a")));
        assert!(a.is_within(&a));
        assert!(a.is_within(&GroupPath::root()));
        assert!(!GroupPath::new("a/bc").is_within(&a));
        assert!(!GroupPath::new("a").is_within(&a));
        assert_eq!(
            GroupPath::new("a/b/c").strip_prefix(&GroupPath::new("a")),
            Some(GroupPath::new("b/c"))
        );
        assert_eq!(a.strip_prefix(&a), Some(GroupPath::root()));
        assert_eq!(
            GroupPath::new("ab").strip_prefix(&GroupPath::new("a")),
            None
        );
        assert_eq!(
            GroupPath::new("a").concat(&GroupPath::new("b/c")),
            GroupPath::new("a/b/c")
        );
        assert_eq!(GroupPath::root().concat(&a), a);
    }

    #[test]
    fn odd_names_survive() {
        let p = GroupPath::new("system.slice/system-serial\\x2dgetty.slice/a b:c/ü");
        assert_eq!(p.name(), "ü".as_bytes());
        assert_eq!(p.depth(), 4);
        assert_eq!(
            p.display().to_string(),
            "/system.slice/system-serial\\x2dgetty.slice/a\\u{20}b:c/ü"
        );
        // as data (JSON), the space stays a space
        assert_eq!(
            p.data().to_string(),
            "/system.slice/system-serial\\x2dgetty.slice/a b:c/ü"
        );
    }

    #[test]
    fn dot_dot_and_nul_are_refused() {
        for bad in [&b"../../tmp/x"[..], b"a/../b", b"/a/..", b"..", b"a\0b"] {
            assert!(GroupPath::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(GroupPath::parse(b"..").unwrap_err(), PathError::DotDot);
        assert_eq!(
            GroupPath::parse(b"./a/./b/").unwrap(),
            GroupPath::new("a/b")
        );
        assert_eq!(GroupPath::parse(b"/").unwrap(), GroupPath::root());
        // "..." and ".x" are ordinary names
        assert_eq!(GroupPath::parse(b".../.x").unwrap().depth(), 2);
    }

    #[test]
    fn join_takes_one_name_only() {
        let r = GroupPath::root();
        assert_eq!(r.join("").unwrap_err(), PathError::Empty);
        assert_eq!(r.join(".").unwrap_err(), PathError::Dot);
        assert_eq!(r.join("..").unwrap_err(), PathError::DotDot);
        assert_eq!(r.join("a/b").unwrap_err(), PathError::Slash);
        assert_eq!(r.join(b"a\0").unwrap_err(), PathError::Nul);
        assert_eq!(
            r.join("a").unwrap().join("b").unwrap(),
            GroupPath::new("a/b")
        );
    }

    #[test]
    fn invalid_utf8_names_stay_distinct() {
        let r = GroupPath::root();
        let raw = r.join(b"bad\xff").unwrap();
        let lossy = r.join("bad\u{FFFD}").unwrap();
        assert_ne!(raw, lossy);
        assert_ne!(raw.display().to_string(), lossy.display().to_string());
        assert_ne!(raw.as_rel_path(), lossy.as_rel_path());
        assert_eq!(raw.as_rel_path().as_os_str().as_bytes(), b"bad\xff");
        assert_eq!(raw.display().to_string(), "/bad\\xff");
        assert_eq!(&*raw.name_display(), "bad\\xff");
        let mut m = std::collections::HashMap::new();
        m.insert(raw.clone(), 1);
        m.insert(lossy.clone(), 2);
        assert_eq!(m.get(&b"bad\xff"[..]), Some(&1));
    }

    #[test]
    fn display_escapes_each_component_and_unescapes_back() {
        let p = GroupPath::root()
            .join(b"X")
            .unwrap()
            .join(b"\x1b]0;pwned\x07")
            .unwrap()
            .join(b"a\\")
            .unwrap()
            .join(b" sp ")
            .unwrap();
        let d = p.display().to_string();
        assert_eq!(d, "/X/\\e]0;pwned\\a/a\\/\\u{20}sp\\u{20}");
        assert!(!d.chars().any(char::is_control));
        let back = unescape(&d);
        assert_eq!(back[0], b'/');
        assert_eq!(GroupPath::parse(&back[1..]).unwrap(), p);
        // JSON has the data form: spaces as they are but at the ends
        let data = p.data().to_string();
        assert_eq!(data, "/X/\\e]0;pwned\\a/a\\/\\ sp\\ ");
        assert_eq!(GroupPath::parse(&unescape(&data)[1..]).unwrap(), p);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<String>(&json).unwrap(), data);
    }
}
