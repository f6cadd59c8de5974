//! Who each group is, from the host's own files: fills
//! [`GroupSample::identity`] with [`Identity::of_name`] (the group's name
//! alone) completed by what the container runtimes and systemd recorded
//! (container name, image, pod, namespace, labels, a session's user and
//! remote host, a unit's description), or says why it could not
//! ([`Identity::unreadable`]).
//!
//! Where each comes from: [`docker`], [`storage`] (podman, rootful and
//! rootless, and CRI-O), [`containerd`] (with Kubernetes' CRI), [`systemd`]
//! (sessions, users, machines, unit descriptions); ARCHITECTURE.md
//! "Identities" lists them with the versions checked.
//!
//! Rules:
//! - The group's name decides which file is read (the id in
//!   `docker-<id>.scope` is the directory looked in), never the other
//!   way: a file that claims another container's id, another pod's uid or
//!   another session is not used, and nothing read ever chooses a group.
//!   Identities label; they never address.
//! - Files are read by the hostile-file rules ([`read`]): beneath the
//!   runtime's directory opened once, no symlink followed, regular files
//!   only, O_NONBLOCK, size-capped; a parse error is counted, never fatal.
//!   A rootless user's storage is read beneath `/` with no symlink
//!   followed anywhere on the way, and only files that user owns.
//! - Cost: resolved once per group directory (its path and inode) when a
//!   group is first seen, and again on a re-listing only for a group whose
//!   metadata was not there yet; a steady refresh only hands out the
//!   identities kept ([`Resolver::attach`]). Gone groups are dropped.
//! - Stale names: the file each identity came from is stamped (device,
//!   inode, size, mtime, ctime) and re-checked with one `fstat` of an
//!   `O_PATH` open beneath `/` (no symlink followed) at a slow
//!   pace ([`RECHECK_PER_REFRESH`] groups a refresh, in turn, plus the
//!   inspected group on every refresh); a group whose file changed (a
//!   `docker rename` rewrites config.v2.json) is resolved again, with
//!   every other group named from that same file. [`Resolver::renew`]
//!   resolves one group afresh at once (a write confirmation for it
//!   opened: the owner's command must name the container as it is now).
//!
//! Must not depend on: `app`, `ui`, the terminal.

pub mod bolt;
pub mod config;
pub mod containerd;
pub mod docker;
pub mod read;
pub mod sqlite;
pub mod storage;
pub mod systemd;

use crate::model::identity::{Identity, Kind, Runtime};
use crate::model::{GroupPath, GroupSample};
use crate::source::hier::Hier;
use crate::source::systemctl::Systemctl;
use read::{Dir, Miss};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;

/// Where the sources are, relative to [`Roots::base`].
pub const DOCKER: &str = "var/lib/docker/containers";
pub const PODMAN: &str = "var/lib/containers/storage";
pub const CRIO: &str = "run/containers/storage";
pub const CONTAINERD: &str = "run/containerd/io.containerd.runtime.v2.task";
pub const SESSIONS: &str = "run/systemd/sessions";
pub const USERS: &str = "run/systemd/users";
pub const MACHINES: &str = "run/systemd/machines";
pub const PASSWD: &str = "etc/passwd";
/// A rootless user's graphroot, below their home.
pub const ROOTLESS: &str = ".local/share/containers/storage";
/// A rootless user's store is read again at most this often (a pass
/// within it takes the last reading): the user writes the file and can
/// start a pass (a new group of theirs) at every refresh.
pub const ROOTLESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// The filesystems a rootless user's store is read from: local ones. A
/// network filesystem can leave a read waiting for its server for ever,
/// a FUSE one for whoever mounted it (a user may mount one with
/// `allow_other` on a directory they own).
const LOCAL_FS: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "zfs", "f2fs", "bcachefs", "jfs", "reiserfs",
    "nilfs2", "overlay", "ramfs",
];

/// Where the resolver reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The directory that stands for `/`: the host's own root, or a test
    /// tree mirroring /var/lib/docker, /run/containerd, ... below it.
    pub base: PathBuf,
    /// Ask systemd for the units' descriptions (`systemctl show`): only
    /// where systemd is PID 1 and the view is the hierarchy's root (its
    /// paths are systemd's).
    pub units: bool,
}

impl Roots {
    /// Test only (CONTRIBUTING.md): the directory that stands for `/` for
    /// every identity source; systemctl is then never run.
    pub const ENV: &'static str = "CGTOP_IDENTITY_ROOT";

    /// The host's own files.
    pub fn host(units: bool) -> Self {
        Self {
            base: PathBuf::from("/"),
            units,
        }
    }

    /// [`Roots::host`], or the test tree [`Roots::ENV`] names.
    pub fn from_env(units: bool) -> Self {
        match std::env::var_os(Self::ENV) {
            Some(d) if !d.is_empty() => Self {
                base: PathBuf::from(d),
                units: false,
            },
            _ => Self::host(units),
        }
    }
}

/// What is kept of one group directory.
#[derive(Debug, Clone)]
struct Entry {
    ident: Option<Arc<Identity>>,
    /// Its metadata was not there (yet): looked for again on the next
    /// re-listings, at most [`TRIES`] times in all.
    again: bool,
    tries: u8,
    /// The file the identity came from, as it was when read.
    stamp: Stamp,
    /// That file is one a user writes (their rootless store): never
    /// looked at again by its path, which crosses whatever they mount
    /// below it (a FUSE mount could hold the look for ever); it is read
    /// again only by a fresh resolve, which stays on its mount
    /// ([`same_mount_dir`]).
    users_file: bool,
}

/// What an identity's file was like when it was read: looked at again
/// (`Hier::stat_of`: opened `O_PATH`, never read) to tell whether it changed since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Stamp {
    /// No file (a name-only identity, or one systemctl described).
    #[default]
    None,
    /// The file changed around the time it was read (its ctime is not
    /// older than the read): read again on its next re-check.
    Unsure,
    File {
        dev: u64,
        ino: u64,
        size: u64,
        mtime: (i64, i64),
        ctime: (i64, i64),
    },
}

impl Stamp {
    /// The stamp of `source` (a path below `base`, as the identity shows
    /// it) now, looked at beneath the base's descriptor `h` with no
    /// symlink followed; `read_at`: when its contents were read (a change
    /// at or after it may not be in what was read).
    fn of(h: Option<&Hier>, base: &Path, source: &str, read_at: std::time::SystemTime) -> Self {
        let Some(h) = h else {
            return Self::None;
        };
        let Ok(rel) = Path::new(source).strip_prefix(base) else {
            return Self::None;
        };
        let Ok(m) = h.stat_of(rel) else {
            return Self::Unsure;
        };
        let read = read_at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let ctime = Duration::new(
            u64::try_from(m.st_ctime).unwrap_or(0),
            u32::try_from(m.st_ctime_nsec).unwrap_or(0),
        );
        // a margin: the kernel stamps files with a coarse clock
        if ctime + UNSURE_WITHIN >= read {
            return Self::Unsure;
        }
        Self::File {
            dev: m.st_dev,
            ino: m.st_ino,
            size: u64::try_from(m.st_size).unwrap_or(0),
            mtime: (m.st_mtime, i64::try_from(m.st_mtime_nsec).unwrap_or(0)),
            ctime: (m.st_ctime, i64::try_from(m.st_ctime_nsec).unwrap_or(0)),
        }
    }
}

/// A file changed this close to its read (or after) is read again on its
/// next re-check.
const UNSURE_WITHIN: Duration = Duration::from_millis(50);

/// How many groups' files are re-checked (one `O_PATH` open and `fstat` each) per refresh,
/// in turn: at 1,000 containers each is looked at every 32 refreshes.
pub const RECHECK_PER_REFRESH: usize = 32;
/// How many groups are passed over at most per refresh looking for those
/// with a file to re-check (most groups have none).
pub const RECHECK_SCAN: usize = 1024;

/// How many times a group's missing metadata is looked for (when first
/// seen, then on re-listings): a runtime writes it before the group is
/// made, logind right after.
pub const TRIES: u8 = 3;

/// The sources read once per pass (a pass resolves the groups not seen
/// before), loaded when first needed.
#[derive(Default)]
struct Pass {
    podman: Option<Result<Arc<storage::Store>, Miss>>,
    rootless: HashMap<u32, Result<Arc<storage::Store>, Miss>>,
    passwd: Option<Arc<HashMap<u32, systemd::Account>>>,
    namespaces: Option<Vec<String>>,
}

/// The identity resolver the collector holds.
pub struct Resolver {
    roots: Roots,
    docker: Dir,
    podman: Dir,
    crio: Dir,
    containerd: Dir,
    sessions: Dir,
    users: Dir,
    machines: Dir,
    /// `/` itself (the base): /etc/passwd and rootless users' homes.
    base: Dir,
    cache: HashMap<(GroupPath, u64), Entry>,
    /// The groups of the last refresh, in order, and their identities: a
    /// refresh with the same groups is handed these without a lookup.
    order: Vec<(GroupPath, u64)>,
    handed: Vec<Option<Arc<Identity>>>,
    /// Units' descriptions by group path, from the last `systemctl show`.
    descriptions: HashMap<Vec<u8>, String>,
    job: Option<Receiver<HashMap<Vec<u8>, String>>>,
    /// A re-listing found units since the last `systemctl show`.
    units_pending: bool,
    systemctl: Option<Systemctl>,
    parse_errors: u64,
    passes: u64,
    /// Each rootless user's store as last read, and when.
    rootless: HashMap<u32, (std::time::Instant, Result<Arc<storage::Store>, Miss>)>,
    /// Where the slow re-check goes on from, in `order`.
    recheck_at: usize,
    /// Re-checked on every refresh (the inspected group).
    hot: Option<GroupPath>,
    /// Resolved afresh on the next refresh ([`Resolver::renew`]).
    renew: Option<GroupPath>,
    /// Groups resolved again because their file changed, since start.
    renewed: u64,
    /// Units told by their names alone are handed as none
    /// ([`Resolver::set_name_only_units`]).
    name_only_units: bool,
}

impl Resolver {
    pub fn new(roots: Roots) -> Self {
        let at = |rel: &str| Dir::new(roots.base.join(rel));
        // where the runtimes' configurations move their files
        let mut base = Dir::new(roots.base.clone());
        let mut parse_errors = 0;
        let places = base
            .get()
            .map(|h| config::system(h, &mut parse_errors))
            .unwrap_or_default();
        let dir_at = |p: &Option<PathBuf>, below: &str, default: &str| match p {
            Some(p) => Dir::new(roots.base.join(p).join(below)),
            None => at(default),
        };
        let systemctl = roots
            .units
            .then(Systemctl::system)
            .filter(|s| s.presence() == crate::model::write::systemd::Presence::Ready);
        Self {
            docker: dir_at(&places.docker_root, "containers", DOCKER),
            podman: dir_at(&places.graphroot, "", PODMAN),
            crio: dir_at(&places.runroot, "", CRIO),
            containerd: at(CONTAINERD),
            sessions: at(SESSIONS),
            users: at(USERS),
            machines: at(MACHINES),
            base,
            roots,
            cache: HashMap::new(),
            order: Vec::new(),
            handed: Vec::new(),
            descriptions: HashMap::new(),
            job: None,
            units_pending: false,
            systemctl,
            parse_errors,
            passes: 0,
            rootless: HashMap::new(),
            recheck_at: 0,
            hot: None,
            renew: None,
            renewed: 0,
            name_only_units: false,
        }
    }

    /// The group whose file is re-checked on every refresh (the
    /// inspected one), beside the slow round of the others.
    pub fn set_hot(&mut self, group: Option<GroupPath>) {
        self.hot = group;
    }

    /// Resolves `group` afresh on the next refresh, whatever its file's
    /// stamp says (a write confirmation for it opened).
    pub fn renew(&mut self, group: GroupPath) {
        self.renew = Some(group);
    }

    /// Groups resolved again since start because their file changed (or
    /// [`Resolver::renew`] asked).
    pub fn renewed(&self) -> u64 {
        self.renewed
    }

    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Metadata files that were not JSON, since start.
    pub fn parse_errors(&self) -> u64 {
        self.parse_errors
    }

    /// Passes made (a pass resolves groups not seen before): the steady
    /// refreshes make none.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Sets each group's identity, as if root owned every group's
    /// directory ([`Resolver::attach_owned`] asks). `walked`: this refresh re-listed the
    /// tree (groups whose metadata was missing are looked for again).
    /// A refresh with the same groups as the last, no re-listing and no
    /// new descriptions costs one comparison and one `Arc` clone a group.
    pub fn attach(&mut self, groups: &mut [GroupSample], walked: bool) {
        self.attach_owned(groups, walked, &|_| Some(0));
    }

    /// [`Resolver::attach`], with `owner` giving who owns a group's
    /// directory as the delegated-owner rule sees it (asked only for
    /// groups being resolved, never on a steady refresh): the uid of the
    /// first of it and the directories above it that root does not own,
    /// `Some(0)` where root owns them all, `None` where one could not be
    /// read: not known to be root's, so named by what its name says
    /// alone, never from anyone's files, and never vouched for (see
    /// [`Identity::vouched`]). A group another user owns is in a subtree
    /// delegated to them, who chose its name: it is named from that
    /// user's own rootless store only, never from the system's docker,
    /// containerd, CRI-O, logind or machined files (their
    /// `docker-<id>.scope` would otherwise take the name of the system's
    /// container of that id).
    pub fn attach_owned(
        &mut self,
        groups: &mut [GroupSample],
        walked: bool,
        owner: &dyn Fn(&GroupSample) -> Option<u32>,
    ) {
        let described = self.poll_descriptions();
        let stale = self.recheck();
        let same = !stale
            && !walked
            && !described
            && self.order.len() == groups.len()
            && self
                .order
                .iter()
                .zip(groups.iter())
                .all(|((p, i), g)| *i == g.inode && *p == g.path);
        if !same {
            self.pass(groups, walked, described, owner);
        }
        for (g, id) in groups.iter_mut().zip(&self.handed) {
            g.identity.clone_from(id);
        }
    }

    /// The slow re-check: the next [`RECHECK_PER_REFRESH`] groups of the
    /// last refresh that have a file, the hot group, and the one to renew;
    /// each whose file changed is dropped from the cache, with every group
    /// named from the same file (podman's containers.json names them all),
    /// so that the pass that follows resolves them again. `true`: some
    /// were dropped.
    fn recheck(&mut self) -> bool {
        let mut stale: Vec<(GroupPath, u64)> = Vec::new();
        let base = self.roots.base.clone();
        let h = self.base.get().ok();
        let mut check = |key: &(GroupPath, u64), cache: &HashMap<(GroupPath, u64), Entry>| {
            let Some(e) = cache.get(key) else {
                return false;
            };
            let Some(source) = e.ident.as_ref().and_then(|i| i.source.as_deref()) else {
                return false;
            };
            let changed = match e.stamp {
                Stamp::None => false,
                Stamp::Unsure => true,
                old @ Stamp::File { .. } => {
                    Stamp::of(h, &base, source, std::time::SystemTime::now()) != old
                }
            };
            if changed {
                stale.push(key.clone());
            }
            true
        };
        let n = self.order.len();
        if n > 0 {
            let (mut stats, mut seen) = (0, 0);
            while stats < RECHECK_PER_REFRESH && seen < RECHECK_SCAN.min(n) {
                let i = self.recheck_at % n;
                self.recheck_at = (i + 1) % n;
                seen += 1;
                if check(&self.order[i], &self.cache) {
                    stats += 1;
                }
            }
        }
        let find =
            |p: &GroupPath, order: &[(GroupPath, u64)]| order.iter().find(|(q, _)| q == p).cloned();
        if let Some(key) = self.hot.as_ref().and_then(|h| find(h, &self.order)) {
            check(&key, &self.cache);
        }
        if let Some(key) = self.renew.take().and_then(|r| find(&r, &self.order)) {
            stale.push(key);
        }
        if stale.is_empty() {
            return false;
        }
        // every group named from a file that changed
        let sources: Vec<String> = stale
            .iter()
            .filter_map(|k| self.cache.get(k))
            .filter_map(|e| e.ident.as_ref().and_then(|i| i.source.clone()))
            .collect();
        let keys: Vec<(GroupPath, u64)> = self
            .cache
            .iter()
            .filter(|(k, e)| {
                stale.contains(k)
                    || e.ident
                        .as_ref()
                        .and_then(|i| i.source.as_ref())
                        .is_some_and(|s| sources.contains(s))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in &keys {
            self.cache.remove(k);
        }
        self.renewed += keys.len() as u64;
        true
    }

    /// Whether a unit whose identity is what its name says (no
    /// description, which is all a unit's files could add) is handed as
    /// none (`GroupSample::identity`) rather than an `Arc` of its own (336
    /// bytes: 3.4 MB at 10,000 `.service` groups), and is not kept in the
    /// cache: a later pass tells it by its name again, and takes it for a
    /// unit not seen before (a `systemctl show` for the descriptions on
    /// the next re-listing). For a one-shot batch run (`-b -n 1`, `--json
    /// -n 1`): its every view asks
    /// [`identity::of_group`](crate::model::identity::of_group), which
    /// makes the identity from the name, and it makes at most one pass
    /// after the first. Not for the TUI, a recording or an export, which
    /// tell a group's resolved identity from none.
    pub fn set_name_only_units(&mut self, on: bool) {
        self.name_only_units = on;
    }

    /// The descriptions are in: `true` when they changed.
    fn poll_descriptions(&mut self) -> bool {
        let Some(rx) = &self.job else {
            return false;
        };
        match rx.try_recv() {
            Ok(d) => {
                self.job = None;
                let changed = d != self.descriptions;
                self.descriptions = d;
                changed
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.job = None;
                false
            }
        }
    }

    fn pass(
        &mut self,
        groups: &[GroupSample],
        walked: bool,
        described: bool,
        owner: &dyn Fn(&GroupSample) -> Option<u32>,
    ) {
        self.passes += 1;
        let mut pass = Pass::default();
        // a one-shot run's units told by their names are not kept (below):
        // no room made for them, which at 10,000 units was a 1.7 MB table
        // built, then shrunk
        let mut next = if self.name_only_units {
            HashMap::new()
        } else {
            HashMap::with_capacity(groups.len())
        };
        let mut new_units = false;
        // units told by their names alone ([`Resolver::set_name_only_units`])
        let mut by_name: Vec<(GroupPath, u64)> = Vec::new();
        for g in groups {
            let key = (g.path.clone(), g.inode);
            // told by its name and not described: never kept (what the
            // end of the pass would do with it, as no description comes
            // during a pass)
            let mut keep = true;
            let entry = match self.cache.remove(&key) {
                Some(e) if !(walked && e.again && e.tries < TRIES) => e,
                old => {
                    let read_at = std::time::SystemTime::now();
                    let mut e = self.resolve(&g.path, &mut pass, &|| owner(g));
                    let h = self.base.get().ok();
                    e.stamp = e
                        .ident
                        .as_ref()
                        .and_then(|i| i.source.as_deref())
                        .filter(|_| !e.users_file)
                        .map_or(Stamp::None, |s| Stamp::of(h, &self.roots.base, s, read_at));
                    e.tries = old.map_or(1, |o| o.tries.saturating_add(1));
                    new_units |= e.ident.as_ref().is_some_and(|i| i.kind.is_some());
                    // (what the name gives, exactly: nothing else is lost)
                    let plain = |i: &Identity| {
                        name_only_unit(i) && Identity::of_name(&g.path).as_ref() == Some(i)
                    };
                    if self.name_only_units && e.ident.as_deref().is_some_and(plain) {
                        e.ident = None;
                        keep = self.descriptions.contains_key(g.path.as_bytes());
                        if keep {
                            by_name.push(key.clone());
                        }
                    }
                    e
                }
            };
            if keep {
                next.insert(key, entry);
            }
        }
        // groups gone since are not kept
        self.cache = next;
        self.derive_pods(groups);
        if described || new_units {
            self.apply_descriptions();
        }
        self.units_pending |= new_units;
        if self.units_pending && self.job.is_none() && (walked || self.passes == 1) {
            if let Some(sc) = &self.systemctl {
                self.job = systemd::spawn_descriptions(sc.clone());
                self.units_pending = false;
            }
        }
        self.order = groups.iter().map(|g| (g.path.clone(), g.inode)).collect();
        self.handed = self
            .order
            .iter()
            .map(|k| self.cache.get(k).and_then(|e| e.ident.clone()))
            .collect();
        // nor kept: the next pass tells them by their names again (no
        // file read); the cache of 10,000 units was 1.7 MB. One described
        // since is kept (its identity is its own)
        for k in &by_name {
            if self.cache.get(k).is_some_and(|e| e.ident.is_none()) {
                self.cache.remove(k);
            }
        }
    }

    /// A group's identity now: its name's, completed from its runtime's
    /// files.
    /// `owner`: the uid that owns the group's directory, where known.
    /// `owner` is asked only where the answer matters (a container's,
    /// session's, user's or machine's group; a group a containerd task's
    /// record names): a unit or a plain group costs no lookup, which in a
    /// v1 or hybrid layout is one per hierarchy.
    fn resolve(
        &mut self,
        path: &GroupPath,
        pass: &mut Pass,
        owner: &dyn Fn() -> Option<u32>,
    ) -> Entry {
        let Some(mut id) = Identity::of_name(path) else {
            // a containerd task's group is made by root
            let ident = self
                .by_path(path, pass)
                .filter(|_| owner() == Some(0))
                .map(|mut id| {
                    id.vouched = true;
                    Arc::new(id)
                });
            return Entry {
                ident,
                again: false,
                tries: 1,
                stamp: Stamp::None,
                users_file: false,
            };
        };
        if id.kind == Some(Kind::Unit) {
            // whoever owns it: what its name says, its description later
            return Entry {
                ident: Some(Arc::new(id)),
                again: false,
                tries: 1,
                stamp: Stamp::None,
                users_file: false,
            };
        }
        let owner = owner();
        let delegated = owner.filter(|&u| u != 0);
        if owner != Some(0) {
            if let Some(e) = Self::refuse_delegated(&mut id, delegated) {
                return e;
            }
        }
        let mut users_file = false;
        let filled = match (id.kind, id.runtime) {
            (Some(Kind::Container | Kind::Monitor | Kind::PodmanPod), Some(Runtime::Podman)) => {
                let store = match delegated.or_else(|| rootless_uid(path)) {
                    Some(uid) => {
                        users_file = true;
                        self.rootless_store(uid, pass)
                    }
                    None => self.podman_store(pass),
                };
                if id.kind == Some(Kind::PodmanPod) {
                    store.and_then(|s| storage::fill_podman_pod(&mut id, &s))
                } else {
                    // the pod whose slice the container is in, by its id
                    let parent = path.parent();
                    let pod = parent
                        .as_ref()
                        .and_then(|p| std::str::from_utf8(p.name()).ok())
                        .and_then(crate::model::identity::podman_pod_id);
                    store.and_then(|s| storage::fill_podman(&mut id, &s, pod))
                }
            }
            (Some(Kind::Container | Kind::Monitor), Some(rt)) => {
                self.fill_container(&mut id, rt, path, pass)
            }
            (Some(Kind::Session), _) => systemd::fill_session(&mut id, &mut self.sessions),
            (Some(Kind::User | Kind::UserManager), _) => self.fill_user(&mut id, pass),
            (Some(Kind::Machine), _) => {
                let scope = String::from_utf8_lossy(path.name()).into_owned();
                systemd::fill_machine(&mut id, &scope, &mut self.machines)
            }
            _ => Err(Miss::Absent),
        };
        // the runtime's record read (LXC has none read here), for a
        // group root owns: its command may name the container
        id.vouched = filled.is_ok()
            && owner == Some(0)
            && matches!(id.kind, Some(Kind::Container))
            && id.runtime.is_some_and(|r| r != Runtime::Lxc);
        let again = match filled {
            Ok(()) => false,
            // a podman pod too: its state database may be mid-write
            Err(Miss::Absent) => !matches!(id.kind, None | Some(Kind::Unit | Kind::Pod)),
            Err(Miss::Unreadable(why)) => {
                id.unreadable = Some(format!("{} metadata not readable: {why}", source_word(&id)));
                false
            }
        };
        Entry {
            ident: Some(Arc::new(id)),
            again,
            tries: 1,
            stamp: Stamp::None,
            users_file,
        }
    }

    fn fill_container(
        &mut self,
        id: &mut Identity,
        rt: Runtime,
        _path: &GroupPath,
        pass: &mut Pass,
    ) -> Result<(), Miss> {
        match rt {
            Runtime::Docker => docker::fill(id, &mut self.docker, &mut self.parse_errors),
            // read by `resolve`, which knows the group's owner
            Runtime::Podman => Err(Miss::Absent),
            Runtime::Crio => storage::fill_crio(id, &mut self.crio, &mut self.parse_errors),
            Runtime::Containerd => {
                let nss = self.namespaces(pass);
                containerd::fill(id, &mut self.containerd, &nss, &mut self.parse_errors)
            }
            Runtime::Kubernetes => {
                let nss = self.namespaces(pass);
                match containerd::fill(id, &mut self.containerd, &nss, &mut self.parse_errors) {
                    Err(Miss::Absent) => {
                        let r = storage::fill_crio(id, &mut self.crio, &mut self.parse_errors);
                        if r.is_ok() {
                            id.runtime = Some(Runtime::Crio);
                        }
                        r
                    }
                    r => r,
                }
            }
            Runtime::Lxc => Ok(()),
        }
    }

    /// A group that user `uid` (not root) owns, or (`None`) whose owner
    /// could not be read: only a user's own rootless podman containers
    /// and their own user manager are looked up; any other name (a `docker-<id>.scope`, `session-5.scope`, `user-0.slice`
    /// they made) keeps what the name says, with why nothing more is
    /// shown. `None`: go on and look it up.
    fn refuse_delegated(id: &mut Identity, uid: Option<u32>) -> Option<Entry> {
        if let Some(uid) = uid {
            let podman = id.runtime == Some(Runtime::Podman)
                && matches!(
                    id.kind,
                    Some(Kind::Container | Kind::Monitor | Kind::PodmanPod)
                );
            let own_manager = id.kind == Some(Kind::UserManager) && id.id == uid.to_string();
            if podman || own_manager {
                return None;
            }
        }
        if id.kind != Some(Kind::Unit) {
            id.unreadable = Some(match uid {
                Some(uid) => format!(
                    "{} metadata not used: the group belongs to uid {uid} (a delegated subtree), \
                     who chose its name",
                    source_word(id)
                ),
                None => format!(
                    "{} metadata not used: who owns the group's directory could not be read, \
                     so another user may have chosen its name",
                    source_word(id)
                ),
            });
            // nor is it what its name says: no runtime, pod or session
            // owns it, so nothing offers that owner's command for it (a
            // `docker pause <id>` would pause the system's container)
            *id = Identity {
                id: std::mem::take(&mut id.id),
                unreadable: id.unreadable.take(),
                ..Identity::default()
            };
        }
        Some(Entry {
            ident: Some(Arc::new(id.clone())),
            again: false,
            tries: 1,
            stamp: Stamp::None,
            users_file: false,
        })
    }

    fn namespaces(&mut self, pass: &mut Pass) -> Vec<String> {
        pass.namespaces
            .get_or_insert_with(|| containerd::namespaces(&mut self.containerd))
            .clone()
    }

    fn podman_store(&mut self, pass: &mut Pass) -> Result<Arc<storage::Store>, Miss> {
        if pass.podman.is_none() {
            let shown = self.podman.path().to_path_buf();
            let mut r = self.podman.get().and_then(|h| {
                storage::load(h, Path::new(""), &shown, None, &mut self.parse_errors)
            });
            // podman with transient_store keeps db.sql below the runroot
            let no_pods = match &r {
                Ok(s) => matches!(s.pods, Err(Miss::Absent)),
                Err(m) => *m == Miss::Absent,
            };
            if no_pods {
                let shown = self.crio.path().to_path_buf();
                if let Ok(h) = self.crio.get() {
                    let mut sources = Vec::new();
                    let pods = storage::load_pods(
                        h,
                        Path::new(""),
                        &shown,
                        None,
                        &mut self.parse_errors,
                        &mut sources,
                    );
                    if pods != Err(Miss::Absent) {
                        let mut s = r.unwrap_or_default();
                        s.pods = pods;
                        s.pod_sources = sources;
                        r = Ok(s);
                    }
                }
            }
            pass.podman = Some(r.map(Arc::new));
        }
        pass.podman.clone().unwrap_or(Err(Miss::Absent))
    }

    /// A rootless user's store: beneath `/` by their home in /etc/passwd,
    /// no symlink followed anywhere on the way, only files they own.
    fn rootless_store(&mut self, uid: u32, pass: &mut Pass) -> Result<Arc<storage::Store>, Miss> {
        if let Some(r) = pass.rootless.get(&uid) {
            return r.clone();
        }
        let r = match self.rootless.get(&uid) {
            Some((at, r)) if at.elapsed() < ROOTLESS_EVERY => r.clone(),
            _ => {
                let r = self.load_rootless(uid, pass).map(Arc::new);
                self.rootless
                    .insert(uid, (std::time::Instant::now(), r.clone()));
                r
            }
        };
        pass.rootless.insert(uid, r.clone());
        r
    }

    fn load_rootless(&mut self, uid: u32, pass: &mut Pass) -> Result<storage::Store, Miss> {
        let passwd = self.passwd(pass);
        let home = passwd.get(&uid).ok_or(Miss::Absent)?.home.clone();
        let home_rel = Path::new(home.trim_start_matches('/'));
        let rel = home_rel.join(ROOTLESS);
        if !home.starts_with('/')
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(Miss::Absent);
        }
        // within the mount that holds their home, never across one
        let home_abs = self.base.path().join(home_rel);
        let (h, below_home) = same_mount_dir(&home_abs, &home_abs)?;
        let below_home = below_home.to_path_buf();
        // their own storage.conf may move it, below their home only
        let rel = config::user_graphroot(&h, &below_home, home_rel, uid)
            .ok()
            .and_then(|root| Some(below_home.join(root.strip_prefix(home_rel).ok()?)))
            .unwrap_or_else(|| below_home.join(ROOTLESS));
        let shown = h.path().to_path_buf();
        storage::load(&h, &rel, &shown, Some(uid), &mut self.parse_errors)
    }

    fn passwd(&mut self, pass: &mut Pass) -> Arc<HashMap<u32, systemd::Account>> {
        if let Some(p) = &pass.passwd {
            return Arc::clone(p);
        }
        let text = self
            .base
            .get()
            .ok()
            .and_then(|h| read::read_file(h, Path::new(PASSWD), systemd::CAP_PASSWD, None).ok())
            .map(|b| systemd::parse_passwd(&String::from_utf8_lossy(&b)))
            .unwrap_or_default();
        let p = Arc::new(text);
        pass.passwd = Some(Arc::clone(&p));
        p
    }

    fn fill_user(&mut self, id: &mut Identity, pass: &mut Pass) -> Result<(), Miss> {
        let (name, source) = if let Ok(found) = systemd::user_name(&id.id, &mut self.users) {
            found
        } else {
            // no logind record: /etc/passwd
            let uid: u32 = id.id.parse().map_err(|_| Miss::Absent)?;
            let p = self.passwd(pass);
            let a = p.get(&uid).ok_or(Miss::Absent)?;
            let shown = self.base.path().join(PASSWD);
            (a.name.clone(), shown.to_string_lossy().into_owned())
        };
        id.name = Some(name.clone());
        id.user = Some(name);
        id.source = Some(source);
        Ok(())
    }

    /// A group no naming convention explains: a containerd task's
    /// `/<namespace>/<id>`.
    fn by_path(&mut self, path: &GroupPath, pass: &mut Pass) -> Option<Identity> {
        let comps: Vec<&[u8]> = path.components().collect();
        let [.., parent, last] = comps.as_slice() else {
            return None;
        };
        let (parent, last) = (
            std::str::from_utf8(parent).ok()?,
            std::str::from_utf8(last).ok()?,
        );
        let nss = self.namespaces(pass);
        containerd::by_path(
            parent,
            last,
            &mut self.containerd,
            &nss,
            &mut self.parse_errors,
        )
    }

    /// A Kubernetes pod's group takes its name and namespace from a
    /// container directly below it whose metadata names the same pod uid
    /// as the pod's own group name (the sandbox's first).
    fn derive_pods(&mut self, groups: &[GroupSample]) {
        let mut pods: Vec<usize> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let Some(e) = self.cache.get(&(g.path.clone(), g.inode)) else {
                continue;
            };
            if e.ident
                .as_ref()
                .is_some_and(|id| id.kind == Some(Kind::Pod) && id.pod.is_none())
            {
                pods.push(i);
            }
        }
        let mut sandboxes: Option<HashMap<String, containerd::Pod>> = None;
        for i in pods {
            let pod_g = &groups[i];
            let key = (pod_g.path.clone(), pod_g.inode);
            let Some(mine) = self.cache.get(&key).and_then(|e| e.ident.clone()) else {
                continue;
            };
            // children follow their parent in the (sorted) group list
            let mut best: Option<Arc<Identity>> = None;
            for c in groups[i + 1..]
                .iter()
                .take_while(|c| c.path.is_within(&pod_g.path))
                .filter(|c| c.path.parent().as_ref() == Some(&pod_g.path))
            {
                let Some(ci) = self
                    .cache
                    .get(&(c.path.clone(), c.inode))
                    .and_then(|e| e.ident.clone())
                else {
                    continue;
                };
                let fits = ci.kind == Some(Kind::Container)
                    && ci.pod.is_some()
                    && ci.pod_uid.as_deref() == Some(mine.id.as_str())
                    && ci.unreadable.is_none();
                if !fits {
                    continue;
                }
                let sandbox = ci
                    .labels
                    .iter()
                    .any(|(k, v)| k == "container type" && v == "sandbox");
                if best.is_none() || sandbox {
                    best = Some(ci);
                }
                if sandbox {
                    break;
                }
            }
            if let Some(c) = best {
                let mut p = (*mine).clone();
                p.name.clone_from(&c.pod);
                p.pod.clone_from(&c.pod);
                p.namespace.clone_from(&c.namespace);
                p.runtime = c.runtime;
                p.source.clone_from(&c.source);
                if let Some(e) = self.cache.get_mut(&key) {
                    e.ident = Some(Arc::new(p));
                }
            } else {
                // no container of it in view (`-b` of the pod's slice
                // alone): its sandbox's bundle, found by the pod's uid
                let by_uid = sandboxes.get_or_insert_with(|| {
                    containerd::pods_by_uid(&mut self.containerd, &mut self.parse_errors)
                });
                if let Some(found) = by_uid.get(&mine.id) {
                    let mut p = (*mine).clone();
                    p.name.clone_from(&found.name);
                    p.pod.clone_from(&found.name);
                    p.namespace.clone_from(&found.namespace);
                    p.runtime = Some(Runtime::Containerd);
                    p.source = Some(found.source.clone());
                    if let Some(e) = self.cache.get_mut(&key) {
                        e.ident = Some(Arc::new(p));
                    }
                }
            }
        }
    }

    /// Each kept identity takes its unit's description, where systemd gave
    /// one for its group.
    fn apply_descriptions(&mut self) {
        if self.descriptions.is_empty() {
            return;
        }
        for ((path, _), e) in &mut self.cache {
            let d = self.descriptions.get(path.as_bytes());
            let id = match &e.ident {
                Some(id) => Cow::Borrowed(&**id),
                // a unit handed by its name alone, now described
                None if self.name_only_units && d.is_some() => {
                    match Identity::of_name(path).filter(name_only_unit) {
                        Some(id) => Cow::Owned(id),
                        None => continue,
                    }
                }
                None => continue,
            };
            if id.description.as_ref() != d {
                let mut n = id.into_owned();
                n.description = d.cloned();
                e.ident = Some(Arc::new(n));
            }
        }
    }
}

/// A unit's identity as its name gives it, with no description: what
/// [`Resolver::set_name_only_units`] hands as none.
fn name_only_unit(id: &Identity) -> bool {
    id.kind == Some(Kind::Unit) && id.description.is_none()
}

/// The uid of the user manager a group is below (`user@1000.service`):
/// its containers are that user's rootless ones. The outermost one: a
/// `user@0.service` that user made inside their own is their name, not
/// root's manager.
fn rootless_uid(path: &GroupPath) -> Option<u32> {
    let comps: Vec<&[u8]> = path.components().collect();
    let (_, parents) = comps.split_last()?;
    parents
        .iter()
        .filter_map(|c| std::str::from_utf8(c).ok())
        .filter_map(|c| c.strip_prefix("user@")?.strip_suffix(".service"))
        .find_map(|u| u.parse().ok())
}

/// Where a rootless user's store is read from: the mount that holds
/// `store` by /proc/self/mountinfo, opened so that no open below it
/// leaves it ([`Hier::open_same_mount`]), and `store` below it. Refused
/// where that mount is at or below the user's `home` (they may have made
/// it: fusermount mounts on a directory its user can write) or is not a
/// local filesystem ([`LOCAL_FS`]): a read there could wait for ever,
/// and the resolver runs on the collector's thread. A mount made later
/// below the mount point is not crossed (EXDEV, without a word to the
/// filesystem mounted there).
fn same_mount_dir<'a>(store: &'a Path, home: &Path) -> Result<(Hier, &'a Path), Miss> {
    let mounts = crate::source::mount::read_mountinfo()
        .map_err(|_| Miss::Unreadable("the mounts could not be read".to_owned()))?;
    // the top one of several at the same place comes last
    let m = mounts
        .iter()
        .filter(|m| store.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())
        .ok_or(Miss::Absent)?;
    let fs = if read::is_plain_name(&m.fs_type) {
        m.fs_type.as_str()
    } else {
        "unnamed"
    };
    if m.mount_point.starts_with(home) {
        return Err(Miss::Unreadable(format!(
            "on a mount in the user's home ({fs}), not read"
        )));
    }
    if !LOCAL_FS.contains(&m.fs_type.as_str()) {
        return Err(Miss::Unreadable(format!(
            "on a {fs} filesystem, not read (not a local one)"
        )));
    }
    let below = store
        .strip_prefix(&m.mount_point)
        .map_err(|_| Miss::Absent)?;
    let h = Hier::open_same_mount(&m.mount_point).map_err(|e| {
        read::miss(&crate::source::hier::FsError::Errno(
            crate::model::write::errno::of_io(&e),
        ))
    })?;
    Ok((h, below))
}

/// The first word of [`Identity::unreadable`]: whose metadata.
fn source_word(id: &Identity) -> &'static str {
    match (id.runtime, id.kind) {
        (Some(rt), _) => rt.word(),
        (None, Some(Kind::Session)) => "session",
        (None, Some(Kind::Machine)) => "machine",
        (None, Some(Kind::User | Kind::UserManager)) => "user",
        _ => "systemd",
    }
}

#[cfg(test)]
mod tests;
