//! Which groups must not be frozen or killed unless the operator types the
//! group's name: the root, and every group that contains cgtop itself, the
//! login session it runs in, or PID 1. Freezing cgtop's own group stops
//! cgtop (nothing is left to thaw it); killing the session's group logs the
//! operator out; PID 1's group holds init.
//!
//! [`Protected::discover`] reads `/proc` once; everything else is pure.
//! Paths in `/proc/PID/cgroup` ("0::/...") are relative to the cgroup2
//! filesystem's root as the process's cgroup namespace sees it, and a mount
//! may show only a subtree of it (the mountinfo "root" field), so they are
//! mapped through the mount to the directory cgtop views.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use crate::model::write::{Op, WriteKind};
use crate::model::GroupPath;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a group needs its name typed before it is frozen or killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Danger {
    IsRoot,
    ContainsCgtop,
    ContainsSession,
    ContainsInit,
}

impl Danger {
    pub fn sentence(self) -> &'static str {
        match self {
            Self::IsRoot => "is the root: it holds every process on the system",
            Self::ContainsCgtop => {
                "contains cgtop itself: freezing it stops cgtop, and nothing is left to thaw it"
            }
            Self::ContainsSession => "contains your login session",
            Self::ContainsInit => "contains PID 1 (init)",
        }
    }
}

impl fmt::Display for Danger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sentence())
    }
}

/// The groups (relative to the viewed root) that hold cgtop, its login
/// session and PID 1; `None`/empty where unknown or outside the view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// cgtop's own group.
    pub own: Option<GroupPath>,
    /// The session leader's group and those of cgtop's parent processes
    /// (shell, sudo, sshd), which may sit in other groups than cgtop.
    pub session: Vec<GroupPath>,
    /// PID 1's group.
    pub init: Option<GroupPath>,
}

impl Protected {
    /// Every group that needs its name typed: the root, and each protected
    /// group with all its ancestors. Sorted, without repeats.
    pub fn groups(&self) -> Vec<GroupPath> {
        let mut out: Vec<GroupPath> = self
            .own
            .iter()
            .chain(&self.session)
            .chain(&self.init)
            .flat_map(GroupPath::ancestors)
            .chain(std::iter::once(GroupPath::root()))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Why freezing or killing `target` needs its name typed; empty when a
    /// plain confirmation is enough.
    pub fn dangers(&self, target: &GroupPath) -> Vec<Danger> {
        let mut out = Vec::new();
        if target.is_root() {
            out.push(Danger::IsRoot);
        }
        if self.own.as_ref().is_some_and(|g| g.is_within(target)) {
            out.push(Danger::ContainsCgtop);
        }
        if self.session.iter().any(|g| g.is_within(target)) {
            out.push(Danger::ContainsSession);
        }
        if self.init.as_ref().is_some_and(|g| g.is_within(target)) {
            out.push(Danger::ContainsInit);
        }
        out
    }

    /// The dangers of an op: only freezing and killing are guarded this way
    /// (a thaw is harmless; a move or rmdir is confirmed by the op itself).
    pub fn op_dangers(&self, op: &Op) -> Vec<Danger> {
        match op.as_write().map(|w| &w.kind) {
            Some(WriteKind::Freeze(true) | WriteKind::Kill) => self.dangers(op.group()),
            _ => Vec::new(),
        }
    }

    /// Reads the groups of cgtop, its session and PID 1 from `/proc`, mapped
    /// to `view_root` (the directory cgtop reads). Anything unreadable is
    /// left out; the root is always protected.
    pub fn discover(view_root: &Path) -> Self {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let Some((fs_root, view_rel)) = view_mapping(&mountinfo, view_root) else {
            return Self::default();
        };
        let group_of = |pid: &str| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
            map_to_view(v2_path(&text)?, &fs_root, &view_rel)
        };
        let mut session = Vec::new();
        // The session id from /proc, not getsid(2): when the session leader
        // lives in another PID namespace (a container, CI's sandbox) the
        // kernel reports 0, which rustix's Pid cannot hold (it panics).
        let sid = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|t| session_of(&t));
        if let Some(g) = sid.and_then(|s| group_of(&s.to_string())) {
            session.push(g);
        }
        for pid in parent_chain() {
            if let Some(g) = group_of(&pid.to_string()) {
                session.push(g);
            }
        }
        session.sort();
        session.dedup();
        Self {
            own: group_of("self"),
            session,
            init: group_of("1"),
        }
    }
}

/// cgtop's parent, grandparent, ... up to (not including) PID 1.
fn parent_chain() -> Vec<u32> {
    let mut out = Vec::new();
    let mut child = std::process::id();
    for _ in 0..64 {
        let Some(parent) = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .ok()
            .and_then(|t| parent_of(&t))
        else {
            break;
        };
        if parent <= 1 {
            break;
        }
        out.push(parent);
        child = parent;
    }
    out
}

/// The ppid in /proc/PID/stat text: the 2nd field after the ")" that ends
/// the command name (which may itself contain spaces and parentheses).
fn parent_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The session id in /proc/PID/stat text (the 4th field after the ")");
/// `None` for 0, which means the leader is outside this PID namespace.
fn session_of(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let sid: u32 = rest.split_ascii_whitespace().nth(3)?.parse().ok()?;
    (sid > 0).then_some(sid)
}

/// The typed text names `target`: its last component, or its whole path,
/// as shown (escaped: the operator types what they see).
pub fn typed_name_matches(target: &GroupPath, typed: &str) -> bool {
    let t = typed.trim();
    !t.is_empty() && (t == target.name_display() || t == target.display().to_string())
}

/// The prompt for a typed confirmation.
pub fn typed_prompt(target: &GroupPath, dangers: &[Danger]) -> String {
    let why = dangers
        .iter()
        .map(|d| d.sentence())
        .collect::<Vec<_>>()
        .join("; it ");
    format!(
        "{} {why}. Type its name ({}) to go ahead",
        target.display(),
        target.name_display()
    )
}

// ---------------------------------------------------------------------------
// Pure parsing.

/// The cgroup v2 path of a process: the "0::" line of /proc/PID/cgroup,
/// without a " (deleted)" suffix.
pub fn v2_path(proc_cgroup: &str) -> Option<&str> {
    let p = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(p.strip_suffix(" (deleted)").unwrap_or(p))
}

/// Undoes mountinfo's octal escapes ("\040" for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup2 mounts in mountinfo text: (root within the filesystem,
/// mount point).
pub fn cgroup2_mounts(mountinfo: &str) -> Vec<(String, PathBuf)> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            if right.split(' ').next()? != "cgroup2" {
                return None;
            }
            let l: Vec<&str> = left.split(' ').collect();
            Some((unescape(l.get(3)?), PathBuf::from(unescape(l.get(4)?))))
        })
        .collect()
}

/// For the directory cgtop views: the cgroup2 mount it lies on (the one
/// with the longest matching mount point) as (the mount's root within the
/// filesystem, the view's path below the mount point).
pub fn view_mapping(mountinfo: &str, view_root: &Path) -> Option<(GroupPath, GroupPath)> {
    cgroup2_mounts(mountinfo)
        .into_iter()
        .filter_map(|(root, point)| {
            let below = view_root.strip_prefix(&point).ok()?;
            Some((
                point.as_os_str().len(),
                GroupPath::parse(root.as_bytes()).ok()?,
                GroupPath::parse(below.as_os_str().as_bytes()).ok()?,
            ))
        })
        .max_by_key(|(len, _, _)| *len)
        .map(|(_, root, below)| (root, below))
}

/// Maps a path from /proc/PID/cgroup to a group relative to the view:
/// strip the mount's root within the filesystem, then the view's path
/// below the mount point. `None` when the group is outside the view.
pub fn map_to_view(
    v2_path: &str,
    mount_root: &GroupPath,
    view_rel: &GroupPath,
) -> Option<GroupPath> {
    let full = GroupPath::parse(v2_path.as_bytes()).ok()?;
    full.strip_prefix(mount_root)?.strip_prefix(view_rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::{freeze, kill, move_process, remove_group, set_cpu_weight};

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    const HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const CONTAINER: &str = "700 690 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw
701 690 0:30 /docker/abc/x /mnt/cg\\040x rw - cgroup2 cgroup rw
";

    #[test]
    fn proc_cgroup_v2_line() {
        let hybrid = "9:name=systemd:/\n4:memory:/process_api/512ab\n0::/\n";
        assert_eq!(v2_path(hybrid), Some("/"));
        assert_eq!(
            v2_path("0::/user.slice/user-1000.slice/session-3.scope\n"),
            Some("/user.slice/user-1000.slice/session-3.scope")
        );
        assert_eq!(v2_path("0::/gone (deleted)\n"), Some("/gone"));
        assert_eq!(v2_path("4:memory:/x\n"), None);
        assert_eq!(v2_path(""), None);
    }

    #[test]
    fn mounts_and_view_mapping() {
        assert_eq!(
            cgroup2_mounts(HYBRID),
            vec![("/".to_owned(), PathBuf::from("/sys/fs/cgroup/unified"))]
        );
        // the hybrid host: the v2 mount is /sys/fs/cgroup/unified, root "/"
        assert_eq!(
            view_mapping(HYBRID, Path::new("/sys/fs/cgroup/unified")),
            Some((GroupPath::root(), GroupPath::root()))
        );
        // --root pointing below the mount point (a delegated subtree)
        assert_eq!(
            view_mapping(HYBRID, Path::new("/sys/fs/cgroup/unified/user.slice")),
            Some((GroupPath::root(), g("user.slice")))
        );
        // not on cgroup2 at all (a fixture tree)
        assert_eq!(view_mapping(HYBRID, Path::new("/tmp/fixture")), None);
        // a container: the mount shows only /docker/abc; the longest mount
        // point wins, and escapes are undone
        assert_eq!(
            view_mapping(CONTAINER, Path::new("/sys/fs/cgroup")),
            Some((g("docker/abc"), GroupPath::root()))
        );
        assert_eq!(
            view_mapping(CONTAINER, Path::new("/mnt/cg x/y")),
            Some((g("docker/abc/x"), g("y")))
        );
    }

    #[test]
    fn proc_paths_map_through_the_mount() {
        let root = GroupPath::root();
        assert_eq!(map_to_view("/", &root, &root), Some(root.clone()));
        assert_eq!(
            map_to_view("/user.slice/session-3.scope", &root, &root),
            Some(g("user.slice/session-3.scope"))
        );
        // viewing a subtree: paths outside it are not in the view
        assert_eq!(
            map_to_view("/user.slice/session-3.scope", &root, &g("user.slice")),
            Some(g("session-3.scope"))
        );
        assert_eq!(
            map_to_view("/system.slice/x", &root, &g("user.slice")),
            None
        );
        assert_eq!(map_to_view("/user.slicex", &root, &g("user.slice")), None);
        // a bind mount of a subtree
        assert_eq!(
            map_to_view("/docker/abc/app", &g("docker/abc"), &root),
            Some(g("app"))
        );
        assert_eq!(map_to_view("/docker/other", &g("docker/abc"), &root), None);
    }

    #[test]
    fn stat_parent() {
        assert_eq!(parent_of("1234 (bash) S 1200 1234 1234 34816"), Some(1200));
        assert_eq!(parent_of("77 (a) b (c)) R 5 77 77"), Some(5));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn stat_session() {
        assert_eq!(session_of("1234 (bash) S 1200 1234 1190 34816"), Some(1190));
        assert_eq!(session_of("77 (a) b (c)) R 5 77 60 0"), Some(60));
        // the leader is in another PID namespace: the kernel says 0
        assert_eq!(session_of("9 (cargo) S 8 9 0 0"), None);
        assert_eq!(session_of("9 (cargo) S 8"), None);
    }

    fn protected() -> Protected {
        // /
        // ├─ init.scope                     PID 1
        // ├─ system.slice/cron.service
        // └─ user.slice/user-1000.slice
        //    ├─ session-3.scope             the login shell
        //    └─ session-3.scope/cgtop       cgtop (moved there by hand)
        Protected {
            own: Some(g("user.slice/user-1000.slice/session-3.scope/cgtop")),
            session: vec![g("user.slice/user-1000.slice/session-3.scope")],
            init: Some(g("init.scope")),
        }
    }

    #[test]
    fn decisions() {
        let p = protected();
        assert_eq!(
            p.dangers(&GroupPath::root()),
            vec![
                Danger::IsRoot,
                Danger::ContainsCgtop,
                Danger::ContainsSession,
                Danger::ContainsInit
            ]
        );
        assert_eq!(
            p.dangers(&g("user.slice")),
            vec![Danger::ContainsCgtop, Danger::ContainsSession]
        );
        assert_eq!(
            p.dangers(&g("user.slice/user-1000.slice/session-3.scope/cgtop")),
            vec![Danger::ContainsCgtop]
        );
        assert_eq!(p.dangers(&g("init.scope")), vec![Danger::ContainsInit]);
        assert_eq!(p.dangers(&g("system.slice")), vec![]);
        assert_eq!(p.dangers(&g("system.slice/cron.service")), vec![]);
        // a sibling with a common prefix is not an ancestor
        assert_eq!(
            p.dangers(&g("user.slice/user-1000.slice/session-3.scopex")),
            vec![]
        );
        // nothing known: only the root is guarded
        let none = Protected::default();
        assert_eq!(none.dangers(&GroupPath::root()), vec![Danger::IsRoot]);
        assert_eq!(none.dangers(&g("a")), vec![]);
    }

    #[test]
    fn protected_set() {
        assert_eq!(
            protected().groups(),
            vec![
                GroupPath::root(),
                g("init.scope"),
                g("user.slice"),
                g("user.slice/user-1000.slice"),
                g("user.slice/user-1000.slice/session-3.scope"),
                g("user.slice/user-1000.slice/session-3.scope/cgtop"),
            ]
        );
        assert_eq!(Protected::default().groups(), vec![GroupPath::root()]);
    }

    #[test]
    fn only_freeze_and_kill_are_guarded() {
        let p = protected();
        let u = g("user.slice");
        assert_eq!(
            p.op_dangers(&freeze(&u, true)),
            vec![Danger::ContainsCgtop, Danger::ContainsSession]
        );
        assert_eq!(
            p.op_dangers(&kill(&g("init.scope"))),
            vec![Danger::ContainsInit]
        );
        assert_eq!(p.op_dangers(&freeze(&u, false)), vec![]);
        assert_eq!(p.op_dangers(&set_cpu_weight(&u, 1)), vec![]);
        assert_eq!(p.op_dangers(&move_process(1, &u, false)), vec![]);
        assert_eq!(p.op_dangers(&remove_group(&u)), vec![]);
    }

    #[test]
    fn typed_names_and_prompt() {
        let t = g("user.slice/user-1000.slice");
        assert!(typed_name_matches(&t, "user-1000.slice"));
        assert!(typed_name_matches(&t, " /user.slice/user-1000.slice "));
        assert!(!typed_name_matches(&t, "user-1000"));
        assert!(!typed_name_matches(&t, ""));
        assert!(typed_name_matches(&GroupPath::root(), "/"));
        assert_eq!(
            typed_prompt(&t, &[Danger::ContainsCgtop, Danger::ContainsSession]),
            "/user.slice/user-1000.slice contains cgtop itself: freezing it stops cgtop, and \
             nothing is left to thaw it; it contains your login session. Type its name \
             (user-1000.slice) to go ahead"
        );
        assert_eq!(
            typed_prompt(&GroupPath::root(), &[Danger::IsRoot]),
            "/ is the root: it holds every process on the system. Type its name (/) to go ahead"
        );
    }

    #[test]
    fn discover_on_this_machine() {
        // whatever this machine is, the result is consistent: cgtop's own
        // group (if known) is protected, and the root always is
        let view = crate::source::mount::discover().map(|m| m.root);
        let Ok(view) = view else {
            println!("skipped: no cgroup2 mount");
            return;
        };
        let p = Protected::discover(&view);
        let set = p.groups();
        assert!(set.contains(&GroupPath::root()));
        if let Some(own) = &p.own {
            assert!(set.contains(own));
            assert!(p.dangers(own).contains(&Danger::ContainsCgtop));
        }
        assert_eq!(
            Protected::discover(Path::new("/nonexistent")),
            Protected::default()
        );
    }
}
