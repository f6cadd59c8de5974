//! A group's path relative to the cgroup2 mount (or `--root`).

use std::fmt;

/// Path of a group relative to the hierarchy root, components joined by
/// '/'. The root is the empty path and displays as "/".
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct GroupPath(String);

impl GroupPath {
    pub fn root() -> Self {
        Self(String::new())
    }

    /// From a relative path such as "system.slice/cron.service"; leading,
    /// trailing and repeated slashes are dropped.
    pub fn new(rel: &str) -> Self {
        let parts: Vec<&str> = rel
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        Self(parts.join("/"))
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The relative text ("" for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last component ("/" for the root).
    pub fn name(&self) -> &str {
        if self.0.is_empty() {
            "/"
        } else {
            self.0.rsplit('/').next().unwrap_or(&self.0)
        }
    }

    pub fn parent(&self) -> Option<Self> {
        if self.0.is_empty() {
            return None;
        }
        Some(match self.0.rfind('/') {
            Some(i) => Self(self.0[..i].to_owned()),
            None => Self::root(),
        })
    }

    #[must_use]
    pub fn join(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_owned())
        } else {
            Self(format!("{}/{name}", self.0))
        }
    }

    /// Number of components (0 for the root).
    pub fn depth(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            self.0.matches('/').count() + 1
        }
    }

    /// True when `self` is `other` or lies below it.
    pub fn is_within(&self, other: &Self) -> bool {
        other.0.is_empty()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.as_bytes().get(other.0.len()) == Some(&b'/'))
    }

    /// The path itself and every ancestor, root last.
    pub fn ancestors(&self) -> impl Iterator<Item = Self> {
        std::iter::successors(Some(self.clone()), Self::parent)
    }
}

/// Lets maps keyed by `GroupPath` be searched with a `&str` (the hash of
/// a `String` and of its `str` agree).
impl std::borrow::Borrow<str> for GroupPath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GroupPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basics() {
        let p = GroupPath::new("/system.slice//cron.service/");
        assert_eq!(p.as_str(), "system.slice/cron.service");
        assert_eq!(p.to_string(), "/system.slice/cron.service");
        assert_eq!(p.name(), "cron.service");
        assert_eq!(p.depth(), 2);
        assert_eq!(p.parent(), Some(GroupPath::new("system.slice")));
        assert_eq!(GroupPath::new("a").parent(), Some(GroupPath::root()));
        assert_eq!(GroupPath::root().parent(), None);
        assert_eq!(GroupPath::root().name(), "/");
        assert_eq!(GroupPath::root().join("x").as_str(), "x");
        let anc: Vec<_> = p.ancestors().map(|a| a.to_string()).collect();
        assert_eq!(anc, ["/system.slice/cron.service", "/system.slice", "/"]);
    }

    #[test]
    fn within() {
        let a = GroupPath::new("a/b");
        assert!(a.is_within(&GroupPath::new("a")));
        assert!(a.is_within(&a));
        assert!(a.is_within(&GroupPath::root()));
        assert!(!GroupPath::new("a/bc").is_within(&a));
        assert!(!GroupPath::new("a").is_within(&a));
    }

    #[test]
    fn odd_names_survive() {
        let p = GroupPath::new("system.slice/system-serial\\x2dgetty.slice/a b:c/ü");
        assert_eq!(p.name(), "ü");
        assert_eq!(p.depth(), 4);
    }
}
