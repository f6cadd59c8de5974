//! The guard's decisions, pure: which writes must not happen unless the
//! operator types the group's name (any write that freezes, kills, or
//! moves into a frozen group a process the operator depends on: cgtop
//! itself, its ancestors and session, the session of its terminal and,
//! under tmux or screen, the clients holding the real terminal, and PID 1),
//! who those processes are ([`roles`], from a process table), and how a
//! path in `/proc/PID/cgroup` maps through the cgroup2 mount to the view.
//!
//! Reading `/proc` and checking again just before a write is
//! `source::safety`'s part; everything here takes its facts as parameters.
//!
//! Must not depend on: `source`, `app`, `ui`, the terminal.

use crate::model::host::mountinfo::MountEntry;
use crate::model::tree::procstat::StatLine;
use crate::model::write::{Mover, Op, WriteEffect};
use crate::model::GroupPath;
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What a process is to the operator; the order is precedence (a process
/// that is both cgtop's ancestor and on its tty is `Session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// cgtop itself (and each of its threads).
    Cgtop,
    /// PID 1.
    Init,
    /// The processes cgtop descends from, and its session's leader.
    Session,
    /// The processes on cgtop's terminal, and the multiplexer's clients
    /// that hold the operator's real terminal (with their sessions and
    /// ancestors).
    Terminal,
}

/// Why a write needs the target group's name typed. A value: the view
/// words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Danger {
    IsRoot,
    ContainsCgtop,
    ContainsSession,
    ContainsTerminal,
    ContainsInit,
    /// The write moves a protected process into a group that is frozen
    /// (itself or through an ancestor): the process stops there.
    MovesIntoFrozen(Role),
    /// The write moves a protected process into a group that another user
    /// owns (itself or an ancestor: a delegated subtree): that user can
    /// then freeze it, kill it or starve it with a limit.
    MovesIntoDelegated(Role),
    /// The write moves PID 1 (init) out of its own group.
    MovesInit,
    /// The write sets memory.max below what the group uses and cannot
    /// reclaim (`model::write::preflight`): the kernel OOM-kills its processes.
    OomKill,
}

/// What a guarded write does, for the wording of a [`Danger`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harm {
    Freeze,
    Kill,
    Move,
}

impl Harm {
    pub fn of(op: &Op) -> Self {
        match op.effect() {
            WriteEffect::Kill => Self::Kill,
            WriteEffect::Move { .. } => Self::Move,
            _ => Self::Freeze,
        }
    }
}

impl Danger {
    /// The danger in words, completing "TARGET ...".
    pub fn sentence(self, harm: Harm) -> &'static str {
        match (self, harm) {
            (Self::IsRoot, _) => "is the root: it holds every process on the system",
            (Self::ContainsCgtop, Harm::Kill) => {
                "contains cgtop itself: killing it kills cgtop too"
            }
            (Self::ContainsCgtop, _) => {
                "contains cgtop itself: freezing it stops cgtop, and nothing is left to thaw it"
            }
            (Self::ContainsSession, _) => "contains your login session",
            (Self::ContainsTerminal, _) => {
                "contains the session that holds your terminal (the tmux or screen client, \
                 the SSH session)"
            }
            (Self::ContainsInit, _) => "contains PID 1 (init)",
            (Self::MovesIntoFrozen(Role::Cgtop), _) => {
                "is frozen: moving cgtop itself there stops cgtop, and nothing is left to thaw it"
            }
            (Self::MovesIntoFrozen(Role::Session), _) => {
                "is frozen: the process moved there is part of your login session, and stops"
            }
            (Self::MovesIntoFrozen(Role::Terminal), _) => {
                "is frozen: the process moved there holds your terminal, and stops"
            }
            (Self::MovesIntoFrozen(Role::Init), _) => {
                "is frozen: moving PID 1 (init) there stops it"
            }
            (Self::MovesIntoDelegated(Role::Cgtop), _) => {
                "belongs to another user (a delegated subtree): moving cgtop itself there lets \
                 that user freeze or kill it"
            }
            (Self::MovesIntoDelegated(Role::Session), _) => {
                "belongs to another user (a delegated subtree): the process moved there is part \
                 of your login session, and that user could freeze or kill it"
            }
            (Self::MovesIntoDelegated(Role::Terminal), _) => {
                "belongs to another user (a delegated subtree): the process moved there holds \
                 your terminal, and that user could freeze or kill it"
            }
            (Self::MovesIntoDelegated(Role::Init), _) => {
                "belongs to another user (a delegated subtree): moving PID 1 (init) there lets \
                 that user freeze or kill it"
            }
            (Self::MovesInit, _) => {
                "would take PID 1 (init) out of its own group, which its service manager \
                 expects it in"
            }
            (Self::OomKill, _) => {
                "uses more memory than the new limit and cannot reclaim enough: the kernel \
                 OOM-kills its processes"
            }
        }
    }
}

/// The prompt for a typed confirmation.
pub fn typed_prompt(target: &GroupPath, dangers: &[Danger], harm: Harm) -> String {
    let why = dangers
        .iter()
        .map(|d| d.sentence(harm))
        .collect::<Vec<_>>()
        .join("; it ");
    format!(
        "{} {why}. Type its name ({}) to go ahead",
        target.display(),
        target.name_display()
    )
}

/// The groups (relative to the viewed root) that hold the processes the
/// operator depends on; `None`/empty where unknown or outside the view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// cgtop's own group.
    pub own: Option<GroupPath>,
    /// The groups of cgtop's ancestors and its session leader, which may
    /// sit in other groups than cgtop.
    pub session: Vec<GroupPath>,
    /// The groups of the processes on cgtop's terminal and of the
    /// multiplexer's clients with their sessions (tmux, the SSH scope).
    pub terminal: Vec<GroupPath>,
    /// PID 1's group.
    pub init: Option<GroupPath>,
    /// The protected processes themselves (pids and cgtop's thread ids),
    /// for moves.
    pub processes: BTreeMap<u32, Role>,
}

impl Protected {
    /// Every group that needs its name typed: the root, and each protected
    /// group with all its ancestors. Sorted, without repeats.
    pub fn groups(&self) -> Vec<GroupPath> {
        let mut out: Vec<GroupPath> = self
            .own
            .iter()
            .chain(&self.session)
            .chain(&self.terminal)
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
        if self.terminal.iter().any(|g| g.is_within(target)) {
            out.push(Danger::ContainsTerminal);
        }
        if self.init.as_ref().is_some_and(|g| g.is_within(target)) {
            out.push(Danger::ContainsInit);
        }
        out
    }

    /// The role of the process a move takes: "0" is the writer, cgtop.
    pub fn role_of(&self, who: Mover) -> Option<Role> {
        match who {
            Mover::Writer => Some(Role::Cgtop),
            Mover::Pid(p) => self.processes.get(&p).copied(),
        }
    }

    /// The dangers of an op, by its effect: a freeze or a kill of a group
    /// holding a protected process, a move of a protected process into
    /// a group that is frozen (`target_frozen`: the target or one of its
    /// ancestors is) or that another user owns (`target_delegated`: the
    /// target or an ancestor is not root's), and any move of PID 1. A
    /// thaw, a limit, a mkdir or rmdir is not guarded this way (a move or
    /// rmdir is confirmed by the op itself).
    pub fn op_dangers(&self, op: &Op, target_frozen: bool, target_delegated: bool) -> Vec<Danger> {
        match op.effect() {
            WriteEffect::Freeze | WriteEffect::Kill => self.dangers(op.group()),
            WriteEffect::Move { who, .. } => {
                let mut out = Vec::new();
                // PID 1 is PID 1 whatever the process table says
                if who == Mover::Pid(1) {
                    out.push(Danger::MovesInit);
                }
                if target_frozen {
                    out.extend(self.role_of(who).map(Danger::MovesIntoFrozen));
                }
                if target_delegated {
                    out.extend(self.role_of(who).map(Danger::MovesIntoDelegated));
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// The groups of the processes in `roles`, from `group_of`.
    pub fn from_roles(
        subject: u32,
        roles: BTreeMap<u32, Role>,
        group_of: impl Fn(u32) -> Option<GroupPath>,
    ) -> Self {
        let mut session = Vec::new();
        let mut terminal = Vec::new();
        for (&pid, role) in &roles {
            // a thread of cgtop is in cgtop's group, or a threaded child
            // of it: the pid's own group is what counts here
            let list = match role {
                Role::Session => &mut session,
                Role::Terminal => &mut terminal,
                Role::Cgtop | Role::Init => continue,
            };
            if let Some(g) = group_of(pid) {
                list.push(g);
            }
        }
        for list in [&mut session, &mut terminal] {
            list.sort();
            list.dedup();
        }
        Self {
            own: group_of(subject),
            session,
            terminal,
            init: group_of(1),
            processes: roles,
        }
    }
}

/// One process, from `/proc/PID/stat` and the owner of `/proc/PID`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: u32,
    pub ppid: u32,
    /// 0 when the leader is outside this PID namespace.
    pub sid: u32,
    /// The controlling terminal's device number; 0 for none.
    pub tty_nr: u32,
    pub comm: String,
    pub uid: u32,
}

impl ProcEntry {
    /// Parses stat text ([`StatLine`]): then state, ppid, pgrp, session,
    /// tty_nr. The name is made text for [`is_multiplexer`] (a byte that
    /// is not UTF-8 must not drop the process from the table).
    pub fn parse(stat: &[u8], uid: u32) -> Option<Self> {
        let l = StatLine::parse(stat)?;
        Some(Self {
            pid: l.pid,
            ppid: l.number(4)?,
            sid: l.number(6)?,
            tty_nr: l.number::<i64>(7)?.try_into().ok()?,
            comm: String::from_utf8_lossy(l.comm).into_owned(),
            uid,
        })
    }
}

/// Terminal multiplexers whose clients hold the operator's real terminal
/// while cgtop runs in one of their panes (tmux names itself "tmux:
/// server" and "tmux: client").
fn is_multiplexer(comm: &str) -> bool {
    comm.starts_with("tmux") || comm.eq_ignore_ascii_case("screen")
}

/// Which processes protect the operator when `subject` is cgtop (with its
/// thread ids `tids`), from the process table: see [`Role`]. Pure.
pub fn roles(subject: u32, tids: &[u32], table: &[ProcEntry]) -> BTreeMap<u32, Role> {
    let by_pid: BTreeMap<u32, &ProcEntry> = table.iter().map(|e| (e.pid, e)).collect();
    let mut out: BTreeMap<u32, Role> = BTreeMap::new();
    let mut mark = |pid: u32, role: Role| {
        if pid > 0 {
            let r = out.entry(pid).or_insert(role);
            *r = (*r).min(role);
        }
    };
    // the parent chain, up to (not including) PID 1
    let chain = |from: u32| {
        let mut v = Vec::new();
        let mut at = by_pid.get(&from).map(|e| e.ppid);
        while let Some(p) = at.filter(|&p| p > 1 && !v.contains(&p) && v.len() < 256) {
            v.push(p);
            at = by_pid.get(&p).map(|e| e.ppid);
        }
        v
    };
    mark(subject, Role::Cgtop);
    for &t in tids {
        mark(t, Role::Cgtop);
    }
    mark(1, Role::Init);
    let me = by_pid.get(&subject);
    let ancestors = chain(subject);
    for &p in &ancestors {
        mark(p, Role::Session);
    }
    if let Some(e) = me {
        mark(e.sid, Role::Session);
    }
    let mut ttys: Vec<u32> = me.map(|e| e.tty_nr).into_iter().collect();
    // under tmux or screen: its clients, with their sessions, ancestors
    // and terminals (the SSH session that holds the operator's screen)
    let muxes: Vec<&ProcEntry> = ancestors
        .iter()
        .filter_map(|p| by_pid.get(p).copied())
        .filter(|e| is_multiplexer(&e.comm))
        .collect();
    for m in muxes {
        for c in table
            .iter()
            .filter(|c| c.uid == m.uid && c.pid != m.pid && is_multiplexer(&c.comm))
        {
            if ancestors.contains(&c.pid) {
                continue;
            }
            mark(c.pid, Role::Terminal);
            mark(c.sid, Role::Terminal);
            for p in chain(c.pid) {
                mark(p, Role::Terminal);
            }
            ttys.push(c.tty_nr);
        }
    }
    ttys.retain(|&t| t != 0);
    for e in table.iter().filter(|e| ttys.contains(&e.tty_nr)) {
        mark(e.pid, Role::Terminal);
        mark(e.sid, Role::Terminal);
    }
    out
}

/// The typed text names `target`: its last component, or its whole path,
/// as shown (escaped: the operator types what they see), or with a space
/// typed where the screen shows `\u{20}`.
pub fn typed_name_matches(target: &GroupPath, typed: &str) -> bool {
    let t = typed.trim();
    !t.is_empty()
        && (t == target.name_display()
            || t == target.display().to_string()
            || t == crate::model::tree::text::escape(target.name())
            || t == target.data().to_string())
}
// ---------------------------------------------------------------------------
// Pure parsing.

/// The cgroup v2 path of a process: the "0::" line of /proc/PID/cgroup,
/// without a " (deleted)" suffix.
pub fn v2_path(proc_cgroup: &str) -> Option<&str> {
    let p = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(p.strip_suffix(" (deleted)").unwrap_or(p))
}

/// The cgroup v2 path of a process whose group is still there: the "0::"
/// line, `None` when it ends with " (deleted)". A move's undo goes back
/// there, and a group removed since, or one named to look like that
/// ("x (deleted)"), must not send the process to a sibling that happens
/// to have the shorter name.
pub fn v2_path_live(proc_cgroup: &str) -> Option<&str> {
    let p = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    (!p.ends_with(" (deleted)")).then_some(p)
}

/// The cgroup2 mounts among `mounts`: (root within the filesystem,
/// mount point).
pub fn cgroup2_mounts(mounts: &[MountEntry]) -> Vec<(&Path, &Path)> {
    mounts
        .iter()
        .filter(|m| m.fs_type == "cgroup2")
        .map(|m| (m.root.as_path(), m.mount_point.as_path()))
        .collect()
}

/// For the directory cgtop views: the cgroup2 mount it lies on (the one
/// with the longest matching mount point) as (the mount's root within the
/// filesystem, the view's path below the mount point).
pub fn view_mapping(mounts: &[MountEntry], view_root: &Path) -> Option<(GroupPath, GroupPath)> {
    cgroup2_mounts(mounts)
        .into_iter()
        .filter_map(|(root, point)| {
            let below = view_root.strip_prefix(point).ok()?;
            Some((
                point.as_os_str().len(),
                GroupPath::parse(root.as_os_str().as_bytes()).ok()?,
                GroupPath::parse(below.as_os_str().as_bytes()).ok()?,
            ))
        })
        .max_by_key(|(len, _, _)| *len)
        .map(|(_, root, below)| (root, below))
}

/// The line of /proc/PID/cgroup that names a hierarchy, by its middle
/// field: "" for cgroup2 (the "0::" line), a v1 hierarchy's controllers
/// as the kernel joins them ("memory", "cpu,cpuacct") or "name=systemd".
/// The same text as [`crate::model::host::layout::V1Mount::label`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcLine(pub String);

impl ProcLine {
    pub fn v2() -> Self {
        Self(String::new())
    }

    pub fn is_v2(&self) -> bool {
        self.0.is_empty()
    }

    /// The path on this line of a /proc/PID/cgroup text (" (deleted)"
    /// kept: see [`Self::live_path`]).
    pub fn path<'a>(&self, proc_cgroup: &'a str) -> Option<&'a str> {
        proc_cgroup.lines().find_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let (ctrl, path) = rest.split_once(':')?;
            let v2 = self.is_v2();
            (ctrl == self.0 && (!v2 || id == "0")).then_some(path)
        })
    }

    /// The path of a group still there: `None` for " (deleted)".
    pub fn live_path<'a>(&self, proc_cgroup: &'a str) -> Option<&'a str> {
        self.path(proc_cgroup)
            .filter(|p| !p.ends_with(" (deleted)"))
    }
}

/// For the directory cgtop views or writes, on any cgroup hierarchy: the
/// line of /proc/PID/cgroup that is its hierarchy, and as
/// [`view_mapping`] the mount's root within the filesystem and the view's
/// path below the mount point. The mount with the longest matching
/// mount point wins.
pub fn hier_mapping(
    mounts: &[MountEntry],
    view_root: &Path,
) -> Option<(ProcLine, GroupPath, GroupPath)> {
    mounts
        .iter()
        .filter(|m| m.fs_type == "cgroup2" || m.fs_type == "cgroup")
        .filter_map(|m| {
            let below = view_root.strip_prefix(&m.mount_point).ok()?;
            let line = if m.fs_type == "cgroup2" {
                ProcLine::v2()
            } else {
                let l = crate::model::host::layout::Layout::from_mounts(std::slice::from_ref(m));
                ProcLine(l.v1.first()?.label())
            };
            Some((
                m.mount_point.as_os_str().len(),
                line,
                GroupPath::parse(m.root.as_os_str().as_bytes()).ok()?,
                GroupPath::parse(below.as_os_str().as_bytes()).ok()?,
            ))
        })
        .max_by_key(|(len, ..)| *len)
        .map(|(_, line, root, below)| (line, root, below))
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
    use crate::model::write::{freeze, kill, move_process, raw, remove_group, set_cpu_weight};

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
    fn the_line_of_each_hierarchy() {
        let text = "12:memory:/a/b\n3:cpu,cpuacct:/c\n1:name=systemd:/d\n0::/e (deleted)\n";
        assert_eq!(ProcLine("memory".into()).path(text), Some("/a/b"));
        assert_eq!(ProcLine("cpu,cpuacct".into()).path(text), Some("/c"));
        assert_eq!(ProcLine("cpu".into()).path(text), None);
        assert_eq!(ProcLine("name=systemd".into()).path(text), Some("/d"));
        assert_eq!(ProcLine::v2().path(text), Some("/e (deleted)"));
        assert_eq!(ProcLine::v2().live_path(text), None);
        // a v1 line with empty controllers is not cgroup2's
        assert_eq!(ProcLine::v2().path("5::/x\n"), None);
        let m = mounts(HYBRID);
        assert_eq!(
            hier_mapping(&m, Path::new("/sys/fs/cgroup/memory/x")),
            Some((ProcLine("memory".into()), GroupPath::root(), g("x")))
        );
        assert_eq!(
            hier_mapping(&m, Path::new("/sys/fs/cgroup/unified")),
            Some((ProcLine::v2(), GroupPath::root(), GroupPath::root()))
        );
        assert_eq!(hier_mapping(&m, Path::new("/tmp")), None);
        // an SELinux host (seclabel among every cgroup mount's options):
        // the lines are named by controllers, as /proc/PID/cgroup names them
        let m = mounts(include_str!(
            "../../../tests/fixtures/mountinfo/centos7-selinux"
        ));
        let text = "3:cpuacct,cpu:/c\n1:name=systemd:/d\n";
        for (dir, path) in [
            ("/sys/fs/cgroup/cpu,cpuacct/c", "/c"),
            ("/sys/fs/cgroup/systemd/d", "/d"),
        ] {
            let (line, _, _) = hier_mapping(&m, Path::new(dir)).unwrap();
            assert_eq!(line.path(text), Some(path), "{dir}: {line:?}");
        }
    }

    fn mounts(text: &str) -> Vec<MountEntry> {
        crate::model::host::mountinfo::parse(text.as_bytes())
    }

    #[test]
    fn proc_cgroup_v2_line() {
        let hybrid = "9:name=systemd:/\n4:memory:/process_api/512ab\n0::/\n";
        assert_eq!(v2_path(hybrid), Some("/"));
        assert_eq!(
            v2_path("0::/user.slice/user-1000.slice/session-3.scope\n"),
            Some("/user.slice/user-1000.slice/session-3.scope")
        );
        assert_eq!(v2_path("0::/gone (deleted)\n"), Some("/gone"));
        assert_eq!(v2_path_live("0::/gone (deleted)\n"), None);
        assert_eq!(v2_path_live("1:name=x:/\n0::/a/b\n"), Some("/a/b"));
        assert_eq!(v2_path_live("4:memory:/x\n"), None);
        assert_eq!(v2_path("4:memory:/x\n"), None);
        assert_eq!(v2_path(""), None);
    }

    #[test]
    fn mounts_and_view_mapping() {
        let (hybrid, container) = (mounts(HYBRID), mounts(CONTAINER));
        assert_eq!(
            cgroup2_mounts(&hybrid),
            vec![(Path::new("/"), Path::new("/sys/fs/cgroup/unified"))]
        );
        // the hybrid host: the v2 mount is /sys/fs/cgroup/unified, root "/"
        assert_eq!(
            view_mapping(&hybrid, Path::new("/sys/fs/cgroup/unified")),
            Some((GroupPath::root(), GroupPath::root()))
        );
        // --root pointing below the mount point (a delegated subtree)
        assert_eq!(
            view_mapping(&hybrid, Path::new("/sys/fs/cgroup/unified/user.slice")),
            Some((GroupPath::root(), g("user.slice")))
        );
        // not on cgroup2 at all (a fixture tree)
        assert_eq!(view_mapping(&hybrid, Path::new("/tmp/fixture")), None);
        // a container: the mount shows only /docker/abc; the longest mount
        // point wins, and escapes are undone
        assert_eq!(
            view_mapping(&container, Path::new("/sys/fs/cgroup")),
            Some((g("docker/abc"), GroupPath::root()))
        );
        assert_eq!(
            view_mapping(&container, Path::new("/mnt/cg x/y")),
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
    fn stat_lines() {
        let e = ProcEntry::parse(b"1234 (bash) S 1200 1234 1190 34816 1234 4194560", 1000).unwrap();
        assert_eq!(
            e,
            ProcEntry {
                pid: 1234,
                ppid: 1200,
                sid: 1190,
                tty_nr: 34816,
                comm: "bash".into(),
                uid: 1000,
            }
        );
        let odd = ProcEntry::parse(b"77 (a) b (c)) R 5 77 60 0 -1", 0).unwrap();
        assert_eq!(
            (odd.comm.as_str(), odd.ppid, odd.sid, odd.tty_nr),
            ("a) b (c)", 5, 60, 0)
        );
        // the leader in another PID namespace: the kernel says 0
        assert_eq!(
            ProcEntry::parse(b"9 (cargo) S 8 9 0 0 -1", 0).unwrap().sid,
            0
        );
        assert_eq!(ProcEntry::parse(b"9 (cargo) S 8", 0), None);
        assert_eq!(ProcEntry::parse(b"garbage", 0), None);
        // a name that is not UTF-8 keeps the process in the table
        let bad = ProcEntry::parse(b"5 (tmux\xff) S 1 5 5 0 -1", 0).unwrap();
        assert_eq!((bad.comm.as_str(), bad.ppid), ("tmux\u{fffd}", 1));
    }

    fn entry(pid: u32, parent: u32, sid: u32, tty_nr: u32, comm: &str) -> ProcEntry {
        ProcEntry {
            pid,
            ppid: parent,
            sid,
            tty_nr,
            comm: comm.into(),
            uid: 1000,
        }
    }

    #[test]
    fn roles_over_ssh_and_tmux() {
        // sshd(500) -> sshd-session(600, sid 600) -> bash(610, pts/0)
        //   -> tmux client(620, pts/0)
        // tmux server(700, sid 700, no tty) -> bash(710, sid 710, pts/1)
        //   -> cgtop(720, pts/1); vim(730) also on pts/1
        // an unrelated bash(900) on pts/5, and cron(400)
        const PTS0: u32 = 34816;
        const PTS1: u32 = 34817;
        let table = vec![
            entry(1, 0, 1, 0, "systemd"),
            entry(400, 1, 400, 0, "cron"),
            entry(500, 1, 500, 0, "sshd"),
            entry(600, 500, 600, 0, "sshd-session"),
            entry(610, 600, 610, PTS0, "bash"),
            entry(620, 610, 610, PTS0, "tmux: client"),
            entry(700, 1, 700, 0, "tmux: server"),
            entry(710, 700, 710, PTS1, "bash"),
            entry(720, 710, 710, PTS1, "cgtop"),
            entry(730, 710, 710, PTS1, "vim"),
            entry(900, 1, 900, 34821, "bash"),
        ];
        let r = roles(720, &[720, 721], &table);
        let want: BTreeMap<u32, Role> = [
            (1, Role::Init),
            (500, Role::Terminal),
            (600, Role::Terminal),
            (610, Role::Terminal),
            (620, Role::Terminal),
            (700, Role::Session),
            (710, Role::Session),
            (720, Role::Cgtop),
            (721, Role::Cgtop),
            (730, Role::Terminal),
        ]
        .into_iter()
        .collect();
        assert_eq!(r, want);
        // no multiplexer above, alone on its tty: itself and init
        let alone = roles(900, &[], &table);
        assert_eq!(
            alone,
            [(1, Role::Init), (900, Role::Cgtop)].into_iter().collect()
        );
        // a tmux server's own clients are not "clients" of a process
        // outside tmux: cron's chain has no multiplexer
        assert_eq!(roles(400, &[], &table).len(), 2);
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
            processes: [(4000, Role::Cgtop), (3000, Role::Session), (1, Role::Init)]
                .into_iter()
                .collect(),
            ..Protected::default()
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
    fn guarded_by_effect() {
        let p = protected();
        let u = g("user.slice");
        assert_eq!(
            p.op_dangers(&freeze(&u, true), false, false),
            vec![Danger::ContainsCgtop, Danger::ContainsSession]
        );
        assert_eq!(
            p.op_dangers(&kill(&g("init.scope")), false, false),
            vec![Danger::ContainsInit]
        );
        // spelt otherwise, the kernel reads a freeze and a kill all the same
        for v in ["0x1", "01", "+1", " 1"] {
            assert_eq!(
                p.op_dangers(&raw(&u, "cgroup.freeze", v), false, false),
                vec![Danger::ContainsCgtop, Danger::ContainsSession],
                "{v}"
            );
            assert_eq!(
                p.op_dangers(&raw(&g("init.scope"), "cgroup.kill", v), false, false),
                vec![Danger::ContainsInit],
                "{v}"
            );
        }
        assert_eq!(
            p.op_dangers(&raw(&u, "cgroup.freeze", "2"), false, false),
            vec![]
        );
        assert_eq!(p.op_dangers(&freeze(&u, false), false, false), vec![]);
        assert_eq!(p.op_dangers(&set_cpu_weight(&u, 1), false, false), vec![]);
        assert_eq!(p.op_dangers(&remove_group(&u), false, false), vec![]);
        // moves: a protected process into a frozen group, and PID 1
        let cold = g("system.slice/cold");
        assert_eq!(
            p.op_dangers(&move_process(4000, &cold, false), false, false),
            vec![]
        );
        assert_eq!(
            p.op_dangers(&move_process(4000, &cold, false), true, false),
            vec![Danger::MovesIntoFrozen(Role::Cgtop)]
        );
        assert_eq!(
            p.op_dangers(&move_process(1, &cold, true), true, false),
            vec![Danger::MovesInit, Danger::MovesIntoFrozen(Role::Init)]
        );
        // PID 1 is guarded wherever it goes, even with no process table
        assert_eq!(
            Protected::default().op_dangers(&move_process(1, &cold, false), false, false),
            vec![Danger::MovesInit]
        );
        assert_eq!(
            p.op_dangers(&raw(&cold, "cgroup.procs", "0x1"), false, false),
            vec![Danger::MovesInit]
        );
        assert_eq!(
            p.op_dangers(&move_process(3000, &cold, false), true, false),
            vec![Danger::MovesIntoFrozen(Role::Session)]
        );
        assert_eq!(
            p.op_dangers(&move_process(77, &cold, false), true, false),
            vec![]
        );
        // "0" moves the writer, cgtop; as does "-0" or "00"
        for v in ["0", "-0", "00", " 0x0"] {
            for f in ["cgroup.procs", "cgroup.threads"] {
                assert_eq!(
                    p.op_dangers(&raw(&cold, f, v), true, false),
                    vec![Danger::MovesIntoFrozen(Role::Cgtop)],
                    "{f} {v}"
                );
            }
        }
        assert_eq!(
            p.op_dangers(&raw(&cold, "cgroup.procs", "0x0FA0"), true, false),
            vec![Danger::MovesIntoFrozen(Role::Cgtop)]
        );
        // a group another user owns (a delegated subtree): a protected
        // process moved there is theirs to freeze or kill; anyone else's
        // process moves with a plain confirmation
        let theirs = g("user.slice/user-1000.slice/user@1000.service/app.slice");
        assert_eq!(
            p.op_dangers(&move_process(4000, &theirs, false), false, true),
            vec![Danger::MovesIntoDelegated(Role::Cgtop)]
        );
        assert_eq!(
            p.op_dangers(&raw(&theirs, "cgroup.procs", "0"), false, true),
            vec![Danger::MovesIntoDelegated(Role::Cgtop)]
        );
        assert_eq!(
            p.op_dangers(&move_process(3000, &theirs, false), true, true),
            vec![
                Danger::MovesIntoFrozen(Role::Session),
                Danger::MovesIntoDelegated(Role::Session)
            ]
        );
        assert_eq!(
            p.op_dangers(&move_process(77, &theirs, false), false, true),
            vec![]
        );
        // a freeze of a delegated group is the guard's business only if it
        // holds a protected process
        assert_eq!(p.op_dangers(&freeze(&theirs, true), false, true), vec![]);
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
            typed_prompt(
                &t,
                &[Danger::ContainsCgtop, Danger::ContainsSession],
                Harm::Freeze
            ),
            "/user.slice/user-1000.slice contains cgtop itself: freezing it stops cgtop, and \
             nothing is left to thaw it; it contains your login session. Type its name \
             (user-1000.slice) to go ahead"
        );
        assert_eq!(
            typed_prompt(&GroupPath::root(), &[Danger::IsRoot], Harm::Kill),
            "/ is the root: it holds every process on the system. Type its name (/) to go ahead"
        );
    }
}
