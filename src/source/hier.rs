//! The hierarchy handle: the ONLY code that opens a path inside a cgroup
//! mount (cgroup2 or a v1 hierarchy) or a `--root` tree; [`Hiers`] holds
//! one per hierarchy of the host's layout (`model::host::layout`).
//!
//! The hierarchy's root directory is opened once, at start, as a directory
//! descriptor ([`Hier::open`]); whether it is cgroup2 or a plain directory
//! is decided on that descriptor (`fstatfs`), so re-pointing a symlink
//! that led to it changes nothing afterwards. Every later open is resolved
//! beneath that descriptor without following any symlink: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the
//! kernel has it (5.6+), and otherwise one `openat(O_NOFOLLOW)` per
//! component. A group directory or a file planted as a symlink by the
//! owner of a delegated subtree is an error (ELOOP), never followed.
//!
//! Reads open with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`, `fstat` the
//! descriptor and read only regular files (a FIFO, socket or device is an
//! error on that file, never a hang), and stop at a cap ([`cap_for`]): a
//! file larger than its cap is an error, never unbounded memory. Writes
//! open `O_WRONLY` (never `O_CREAT`), require a regular file, and require
//! the cgroup filesystem the root is on (cgroup2, or cgroup v1 for a v1
//! hierarchy: `fstatfs` of the open file) before anything is written.
//!
//! Paths given to it are relative to the root ("" is the root itself);
//! [`group_rel`] is the one place that turns a [`GroupPath`] into one.

use crate::model::host::layout::{HierId, Layout, V1Mount};
use crate::model::host::mountinfo::MountEntry;
use crate::model::write::errno::{self, Errno};
use crate::model::GroupPath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// statfs f_type of cgroup2 (include/uapi/linux/magic.h).
pub const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;

/// Cap of an ordinary interface file. kernfs files are one value or a
/// few keyed lines (cpu.stat: 300 bytes; memory.events: 100); 64 KiB is
/// 200 times the largest of them.
pub const CAP_FILE: usize = 64 * 1024;
/// Cap of the long keyed files: memory.stat (3 KB on 6.x), memory.numa_stat
/// (one line per key with a field per NUMA node: 50 KB at 64 nodes),
/// io.stat (a line per device: 100 bytes each), cgroup.stat.
pub const CAP_STAT: usize = 1024 * 1024;
/// Cap of cgroup.procs and cgroup.threads: one pid per line, at most 8
/// bytes with pid_max at 4,194,304: a million pids.
pub const CAP_PROCS: usize = 8 * 1024 * 1024;

/// The cap for a file by its name: see [`CAP_FILE`], [`CAP_STAT`],
/// [`CAP_PROCS`].
pub fn cap_for(name: &str) -> usize {
    match name {
        "cgroup.procs" | "cgroup.threads" => CAP_PROCS,
        "memory.stat" | "memory.numa_stat" | "io.stat" | "cgroup.stat" => CAP_STAT,
        _ => CAP_FILE,
    }
}

/// The relative path of a group's directory under the hierarchy's root
/// ("" for the root). The one conversion from [`GroupPath`] to a path.
pub fn group_rel(g: &GroupPath) -> &Path {
    g.as_rel_path()
}

/// A group's file, relative to the root.
pub fn file_rel(g: &GroupPath, name: &str) -> PathBuf {
    group_rel(g).join(name)
}

/// Why a file could not be opened, read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsError {
    /// The kernel's error: ENOENT (no such file: a controller that is off),
    /// ENODEV (the group was removed), ELOOP (a symlink, not followed),
    /// EXDEV (a path that would leave the hierarchy), EACCES, ...
    Errno(Errno),
    /// Not a regular file: "a FIFO", "a socket", "a device", "a directory".
    NotRegular(&'static str),
    /// Larger than the cap: not read.
    TooLarge(usize),
    /// Not on a cgroup2 filesystem: nothing is written there.
    NotCgroup2,
}

impl FsError {
    fn from_errno(e: Errno) -> Self {
        Self::Errno(e)
    }

    /// The file (or its group) is not there: ENOENT.
    pub fn is_absent(&self) -> bool {
        *self == Self::Errno(Errno::NOENT)
    }

    /// The group is gone (ENOENT, or ENODEV from a removed group's file).
    pub fn is_gone(&self) -> bool {
        self.is_absent() || *self == Self::Errno(Errno::NODEV)
    }

    /// The errno, where there is one.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Self::Errno(e) => Some(*e),
            _ => None,
        }
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Errno(Errno::LOOP) => {
                f.write_str("a symbolic link: not followed inside the hierarchy")
            }
            Self::Errno(Errno::XDEV) => f.write_str("outside the hierarchy: not followed"),
            // groups nested past PATH_MAX: the walk stops there (opening
            // them one component at a time would cost the square of the
            // depth, without bound), so say that something is below
            Self::Errno(Errno::NAMETOOLONG) => f.write_str(
                "path longer than PATH_MAX (4096 bytes): not read, and no group below it is shown",
            ),
            Self::Errno(e) => f.write_str(&errno::strerror(e)),
            Self::NotRegular(kind) => write!(f, "{kind}, not a regular file: not read"),
            Self::TooLarge(cap) => write!(f, "file larger than {} KiB: not read", cap / 1024),
            Self::NotCgroup2 => f.write_str("not on a cgroup filesystem: nothing is written"),
        }
    }
}

impl std::error::Error for FsError {}

/// An entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    /// A directory (a child group); symlinks are never directories here.
    pub is_dir: bool,
    /// A regular file.
    pub is_file: bool,
    pub ino: u64,
}

/// Whether openat2 is known to be missing (ENOSYS once: the fallback from
/// then on).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The hierarchy's root, opened once.
#[derive(Debug)]
pub struct Hier {
    /// `None` when the root could not be opened: every open fails ENOENT
    /// (a collector on a missing tree shows nothing, as before).
    fd: Option<OwnedFd>,
    path: PathBuf,
    /// The cgroup filesystem the root is on (statfs f_type: cgroup2 or
    /// cgroup v1), decided once; `None` for any other directory (a
    /// fixture), where nothing is written.
    cgroupfs: Option<i64>,
    /// The root is on a cgroup filesystem (kernfs), whether or not it is
    /// written through: what [`GroupDir`] relies on to skip an `fstat`.
    kernfs: bool,
    /// Every open below the root stays on the root's mount
    /// (`RESOLVE_NO_XDEV`; [`Hier::open_same_mount`]).
    same_mount: bool,
}

fn kind_name(t: FileType) -> &'static str {
    match t {
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}

fn is_cgroup2_fd(fd: BorrowedFd<'_>) -> bool {
    fs_magic(fd) == Some(CGROUP2_SUPER_MAGIC)
}

fn fs_magic(fd: BorrowedFd<'_>) -> Option<i64> {
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(fd).ok().map(|s| s.f_type as i64)
}

/// statfs f_type of a cgroup v1 hierarchy (include/uapi/linux/magic.h).
pub const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;

/// The cgroup filesystem `fd` is on: cgroup2 or a cgroup v1 hierarchy.
fn cgroupfs_of(fd: BorrowedFd<'_>) -> Option<i64> {
    fs_magic(fd).filter(|&m| m == CGROUP2_SUPER_MAGIC || m == CGROUP_SUPER_MAGIC)
}

/// The normal components of a relative path; `..`, `/` and prefixes are
/// refused (EXDEV, as RESOLVE_BENEATH would).
fn components(rel: &Path) -> Result<Vec<&OsStr>, FsError> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return Err(FsError::from_errno(Errno::XDEV)),
        }
    }
    Ok(out)
}

/// `openat` one component at a time with O_NOFOLLOW, for kernels without
/// openat2 (before 5.6).
fn open_by_components(root: BorrowedFd<'_>, rel: &Path, flags: OFlags) -> Result<OwnedFd, FsError> {
    let parts = components(rel)?;
    let Some((last, dirs)) = parts.split_last() else {
        return rustix::fs::openat(root, ".", flags, Mode::empty()).map_err(FsError::from_errno);
    };
    let mut cur: Option<OwnedFd> = None;
    for d in dirs {
        let at = cur.as_ref().map_or(root, AsFd::as_fd);
        let next = rustix::fs::openat(
            at,
            *d,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(FsError::from_errno)?;
        cur = Some(next);
    }
    let at = cur.as_ref().map_or(root, AsFd::as_fd);
    rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, Mode::empty())
        .map_err(FsError::from_errno)
}

/// `fd` (an `O_PATH` descriptor) with its inode and owner, from one
/// `fstat`, where it is a directory (`dir`) or else a regular file: what
/// [`Hier::open_watchable`] gives.
fn watchable(fd: OwnedFd, dir: bool) -> Result<(OwnedFd, u64, u32), FsError> {
    let st = rustix::fs::fstat(&fd).map_err(FsError::from_errno)?;
    let t = FileType::from_raw_mode(st.st_mode);
    let want = if dir {
        FileType::Directory
    } else {
        FileType::RegularFile
    };
    if t == want {
        Ok((fd, st.st_ino, st.st_uid))
    } else {
        Err(FsError::NotRegular(kind_name(t)))
    }
}

/// openat2(2) of `rel` beneath `root` (`root` itself for a `rel` of no
/// `components`), refusing every symlink, magic link included, and
/// whatever `more` refuses besides: the one call both ways of opening
/// with openat2 make.
fn openat2_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    no_components: bool,
    flags: OFlags,
    more: ResolveFlags,
) -> rustix::io::Result<OwnedFd> {
    let p: &Path = if no_components { Path::new(".") } else { rel };
    rustix::fs::openat2(
        root,
        p,
        flags | OFlags::NOFOLLOW,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS | more,
    )
}

/// Opens `rel` beneath `root` without following a symlink anywhere.
fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    force_fallback: bool,
) -> Result<OwnedFd, FsError> {
    // refused here too, so that both ways say the same
    let parts = components(rel)?;
    if !force_fallback && !NO_OPENAT2.load(Ordering::Relaxed) {
        match openat2_beneath(root, rel, parts.is_empty(), flags, ResolveFlags::empty()) {
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // a component that is a symlink: ELOOP from both ways
            r => return r.map_err(FsError::from_errno),
        }
    }
    open_by_components(root, rel, flags)
}

/// [`open_beneath`] that also refuses to cross a mount
/// (`RESOLVE_NO_XDEV`): `Ok(Some(fd))` when `rel` was reached without
/// crossing one; `Ok(None)` when that cannot be told (no openat2, or the
/// path crosses a mount: EXDEV), and the caller opens it the ordinary way.
fn open_same_mount(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
) -> Result<Option<OwnedFd>, FsError> {
    let parts = components(rel)?;
    if NO_OPENAT2.load(Ordering::Relaxed) {
        return Ok(None);
    }
    match openat2_beneath(root, rel, parts.is_empty(), flags, ResolveFlags::NO_XDEV) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOSYS) => {
            NO_OPENAT2.store(true, Ordering::Relaxed);
            Ok(None)
        }
        Err(Errno::XDEV) => Ok(None),
        Err(e) => Err(FsError::from_errno(e)),
    }
}

/// How a file is opened for one write. O_NONBLOCK: a FIFO without a
/// reader fails (ENXIO), never blocks.
const WRITE_FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

impl Hier {
    /// Opens the hierarchy's root. `path` itself is resolved once, here
    /// (it may be a symlink the operator gave); everything below it never
    /// follows one.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let cgroupfs = cgroupfs_of(fd.as_fd());
        Ok(Self {
            fd: Some(fd),
            path: path.to_path_buf(),
            cgroupfs,
            kernfs: cgroupfs.is_some(),
            same_mount: false,
        })
    }

    /// A directory none of whose opens below it leaves its mount: a path
    /// that crosses one (a FUSE or network filesystem a user mounted
    /// below it, which could leave a read waiting for ever) fails EXDEV
    /// before the kernel asks that filesystem anything; so does every
    /// open where openat2 is missing. Nothing is written through it.
    pub fn open_same_mount(path: &Path) -> std::io::Result<Self> {
        let mut h = Self::open(path)?.read_only();
        h.same_mount = true;
        Ok(h)
    }

    /// [`Hier::open`], or a handle that finds nothing when the root cannot
    /// be opened.
    pub fn open_lenient(path: &Path) -> Self {
        Self::open(path).unwrap_or_else(|_| Self::nothing(path))
    }

    /// [`Hier::open_lenient`], without following a symlink as the last
    /// component of `path`.
    fn open_leaf_lenient(path: &Path) -> Self {
        rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_or_else(
            |_| Self::nothing(path),
            |fd| {
                let cgroupfs = cgroupfs_of(fd.as_fd());
                Self {
                    cgroupfs,
                    kernfs: cgroupfs.is_some(),
                    same_mount: false,
                    fd: Some(fd),
                    path: path.to_path_buf(),
                }
            },
        )
    }

    /// This handle, never written through (its reads go on).
    fn read_only(mut self) -> Self {
        self.cgroupfs = None;
        self
    }

    /// A handle that finds nothing and writes nothing.
    fn nothing(path: &Path) -> Self {
        Self {
            fd: None,
            path: path.to_path_buf(),
            cgroupfs: None,
            kernfs: false,
            same_mount: false,
        }
    }

    /// The root is on a cgroup v1 superblock that a cgroup mount among
    /// `mounts` shows bound to `claim`'s controllers (in any order) and
    /// name: matched by device ("major:minor"), the same in every mount
    /// namespace.
    fn is_v1_mount(&self, claim: &V1Mount, mounts: &[MountEntry]) -> bool {
        let Some(st) = self.root().ok().and_then(|fd| rustix::fs::fstat(fd).ok()) else {
            return false;
        };
        let dev = format!(
            "{}:{}",
            rustix::fs::major(st.st_dev),
            rustix::fs::minor(st.st_dev)
        );
        let sorted = |c: &[String]| {
            let mut c = c.to_vec();
            c.sort_unstable();
            c
        };
        self.is_cgroup1()
            && mounts
                .iter()
                .filter(|e| e.fs_type == "cgroup" && e.dev == dev)
                .any(|e| {
                    Layout::from_mounts(std::slice::from_ref(e))
                        .v1
                        .first()
                        .is_some_and(|v| {
                            v.name == claim.name
                                && sorted(&v.controllers) == sorted(&claim.controllers)
                        })
                })
    }

    /// The root as it was given (for messages; never opened again).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root's filesystem type (statfs f_type), from the descriptor.
    pub fn fs_type(&self) -> Option<i64> {
        #[allow(clippy::unnecessary_cast)]
        rustix::fs::fstatfs(self.root().ok()?)
            .ok()
            .map(|s| s.f_type as i64)
    }

    /// Where the root's descriptor really is (its /proc/self/fd link):
    /// what was opened, whatever the path given now points to.
    pub fn real_path(&self) -> Option<PathBuf> {
        use std::os::fd::AsRawFd;
        let fd = self.fd.as_ref()?;
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
    }

    /// Where group `g` of this view really is in its hierarchy, as the
    /// kernel names it (in /proc/PID/cgroup, and from the root of a mount
    /// of the whole hierarchy): the mount's root within the filesystem,
    /// then where the handle's directory really is below the mount point
    /// (its /proc/self/fd link, whatever `--root` was given as), then
    /// `g`. `None` when it cannot be told (no descriptor, no cgroup mount
    /// in /proc/self/mountinfo holds it).
    pub fn real_group(&self, g: &GroupPath) -> Option<GroupPath> {
        let mounts = super::mount::read_mountinfo().ok()?;
        let (_, fs_root, below) =
            crate::model::write::guard::hier_mapping(&mounts, &self.real_path()?)?;
        Some(fs_root.concat(&below).concat(g))
    }

    /// The view's root is the hierarchy's own root ([`Self::real_group`]
    /// of the root is the root): not a subdirectory given to `--root`.
    pub fn is_hierarchy_root(&self) -> bool {
        self.real_group(&GroupPath::root())
            .is_some_and(|g| g.is_root())
    }

    /// The directory `rel` below the root is on cgroup2 (fstatfs of its
    /// descriptor).
    pub fn dir_is_cgroup2(&self, rel: &Path) -> bool {
        self.open_at(rel, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC)
            .is_ok_and(|fd| is_cgroup2_fd(fd.as_fd()))
    }

    /// The root is on cgroup2 (decided once, on the descriptor).
    pub fn is_cgroup2(&self) -> bool {
        self.cgroupfs == Some(CGROUP2_SUPER_MAGIC)
    }

    /// The root is a cgroup v1 hierarchy (decided once, on the
    /// descriptor).
    pub fn is_cgroup1(&self) -> bool {
        self.cgroupfs == Some(CGROUP_SUPER_MAGIC)
    }

    fn root(&self) -> Result<BorrowedFd<'_>, FsError> {
        self.fd
            .as_ref()
            .map(AsFd::as_fd)
            .ok_or(FsError::from_errno(Errno::NOENT))
    }

    fn open_at(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, FsError> {
        if self.same_mount {
            // no way to tell without openat2: refused as crossing
            return open_same_mount(self.root()?, rel, flags)?
                .ok_or(FsError::from_errno(Errno::XDEV));
        }
        open_beneath(self.root()?, rel, flags, false)
    }

    /// A directory below the root, open for listing (and as the parent
    /// of mkdirat/unlinkat).
    pub fn open_dir(&self, rel: &Path) -> Result<OwnedFd, FsError> {
        self.open_at(
            rel,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        )
    }

    /// The inode of a directory below the root (a group's incarnation).
    pub fn dir_ino(&self, rel: &Path) -> Result<u64, FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        rustix::fs::fstat(&fd)
            .map(|s| s.st_ino)
            .map_err(FsError::from_errno)
    }

    /// The inode and owner (uid) of a directory below the root, in one
    /// fstat.
    pub fn dir_ino_owner(&self, rel: &Path) -> Result<(u64, u32), FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC)?;
        rustix::fs::fstat(&fd)
            .map(|s| (s.st_ino, s.st_uid))
            .map_err(FsError::from_errno)
    }

    /// The `fstat` of `rel` below the root, opened `O_PATH` by the same
    /// rules as every open here (no symlink followed on the way), never
    /// read: whether a file changed (`source::identity`'s stamps).
    pub fn stat_of(&self, rel: &Path) -> Result<rustix::fs::Stat, FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        rustix::fs::fstat(&fd).map_err(FsError::from_errno)
    }

    /// The owner (uid) of `rel` below the root, not followed if a
    /// symlink: for `/proc/PID`, the process's effective uid.
    pub fn owner_of(&self, rel: &Path) -> Result<u32, FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        rustix::fs::fstat(&fd)
            .map(|s| s.st_uid)
            .map_err(FsError::from_errno)
    }

    /// Whether `rel` is a regular file (not followed if a symlink).
    pub fn is_file(&self, rel: &Path) -> Result<(), FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        check_regular(&fd).map(|_| ())
    }

    /// An `O_PATH` descriptor of a directory (`dir`) or a regular file
    /// below the root, never a symlink, FIFO or device, with its inode
    /// and its owner (uid), from the one `fstat`: what the event watcher
    /// sets an inotify watch on (through /proc/self/fd, so the watch is
    /// on this very inode and no path is resolved again). Opening with
    /// `O_PATH` never blocks, on a FIFO neither; the descriptor is closed
    /// once the watch is set.
    pub fn open_watchable(&self, rel: &Path, dir: bool) -> Result<(OwnedFd, u64, u32), FsError> {
        watchable(self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?, dir)
    }

    /// [`Hier::open_watchable`] of `rel` below a group's open directory
    /// (one name in it, or `child/cgroup.events`), by the same rules as
    /// from the root (beneath it, no symlink, no mount crossed where the
    /// root says so): the event watcher's watches of a group it reached
    /// from its parent's directory, not by the whole path from the root,
    /// which costs as the square of a chain's depth.
    pub fn open_watchable_below(
        &self,
        parent: &GroupDir,
        rel: &Path,
        dir: bool,
    ) -> Result<(OwnedFd, u64, u32), FsError> {
        let flags = OFlags::PATH | OFlags::CLOEXEC;
        let fd = if self.same_mount {
            open_same_mount(parent.fd.as_fd(), rel, flags)?
                .ok_or(FsError::from_errno(Errno::XDEV))?
        } else {
            open_beneath(parent.fd.as_fd(), rel, flags, false)?
        };
        watchable(fd, dir)
    }

    /// The permission bits of a regular file below the root (not
    /// followed if a symlink).
    pub fn mode_of(&self, rel: &Path) -> Result<u32, FsError> {
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC)?;
        regular_stat(&fd).map(|s| s.st_mode & 0o7777)
    }

    /// [`Hier::read_text`] and the file's permission bits, from the one
    /// `fstat` the open does (the raw page's text and whether the raw
    /// editor offers the file, without a second open per file).
    pub fn read_text_mode(&self, rel: &Path) -> Result<(String, u32), FsError> {
        let name = rel
            .file_name()
            .map(OsStr::to_string_lossy)
            .unwrap_or_default();
        let fd = self.open_at(rel, READ_FLAGS)?;
        let mode = regular_stat(&fd)?.st_mode & 0o7777;
        let f = File::from(fd);
        let mut buf = Vec::new();
        let n = read_capped(&f, &mut buf, cap_for(&name), true)?;
        buf.truncate(n);
        let text = match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Ok((text, mode))
    }

    /// A regular file below the root, open for reading: never a FIFO, a
    /// device or a symlink. Costs openat2 + fstat.
    pub fn open_read(&self, rel: &Path) -> Result<File, FsError> {
        self.open_read_ino(rel).map(|(f, _)| f)
    }

    /// The root is on a cgroup filesystem (kernfs): a kept file of a
    /// group removed reads ENODEV.
    pub fn is_kernfs(&self) -> bool {
        self.kernfs
    }

    /// [`Hier::open_read`], without its `fstat` on a root verified to be
    /// cgroupfs: opened with `RESOLVE_NO_XDEV`, the file is kernfs's, as
    /// [`GroupDir::open_read`]'s (what a scanner keeps open).
    pub fn open_read_kernfs(&self, rel: &Path) -> Result<File, FsError> {
        if self.kernfs {
            if let Some(fd) = open_same_mount(self.root()?, rel, READ_FLAGS)? {
                return Ok(File::from(fd));
            }
        }
        self.open_read(rel)
    }

    /// [`Hier::open_read`], with the file's inode from the same `fstat`
    /// (no extra system call): a file made anew under the same name (its
    /// group removed and created again) has another one.
    pub fn open_read_ino(&self, rel: &Path) -> Result<(File, u64), FsError> {
        let fd = self.open_at(rel, READ_FLAGS)?;
        let ino = check_regular(&fd)?;
        Ok((File::from(fd), ino))
    }

    /// [`Hier::open_read`], with the file's permission bits from the same
    /// `fstat` (no extra system call): whether the raw editor offers a
    /// file read through a kept descriptor ([`super::read::KeptReads`]).
    pub fn open_read_mode(&self, rel: &Path) -> Result<(File, u32), FsError> {
        let fd = self.open_at(rel, READ_FLAGS)?;
        let mode = regular_stat(&fd)?.st_mode & 0o7777;
        Ok((File::from(fd), mode))
    }

    /// Reads a whole file, at most `cap` bytes (an error beyond).
    pub fn read(&self, rel: &Path, cap: usize) -> Result<Vec<u8>, FsError> {
        let f = self.open_read(rel)?;
        let mut buf = Vec::new();
        let n = read_capped(&f, &mut buf, cap, true)?;
        buf.truncate(n);
        Ok(buf)
    }

    /// A regular file below the root, read whole with its owner (uid)
    /// from the one `fstat` of the open descriptor: a file whose size is
    /// over `cap` is refused before a byte is read, and reading stops at
    /// the cap whatever the size said. For files that are not cgroupfs's
    /// (a container runtime's metadata: `source::identity`).
    pub fn read_owned(&self, rel: &Path, cap: usize) -> Result<(Vec<u8>, u32), FsError> {
        let fd = self.open_at(rel, READ_FLAGS)?;
        let st = regular_stat(&fd)?;
        if usize::try_from(st.st_size).map_or(true, |n| n > cap) {
            return Err(FsError::TooLarge(cap));
        }
        let f = File::from(fd);
        let mut buf = Vec::new();
        let n = read_capped(&f, &mut buf, cap, true)?;
        buf.truncate(n);
        Ok((buf, st.st_uid))
    }

    /// Reads a file as text, capped by its name ([`cap_for`]). Bytes that
    /// are not UTF-8 are replaced (cgroupfs prints ASCII).
    pub fn read_text(&self, rel: &Path) -> Result<String, FsError> {
        let name = rel
            .file_name()
            .map(OsStr::to_string_lossy)
            .unwrap_or_default();
        let b = self.read(rel, cap_for(&name))?;
        Ok(match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Lists a directory below the root: its entries, with symlinks
    /// neither directories nor files.
    pub fn list(&self, rel: &Path) -> Result<Vec<DirEntry>, FsError> {
        let dir = GroupDir {
            fd: self.open_dir(rel)?,
            kernfs: false,
        };
        let mut out = Vec::new();
        dir.entries(|name, t, ino| {
            out.push(DirEntry {
                name: OsStr::from_bytes(name).to_owned(),
                is_dir: t == FileType::Directory,
                is_file: t == FileType::RegularFile,
                ino,
            });
        })?;
        Ok(out)
    }

    /// A group's directory below the root, open for listing and for
    /// opening its files by name ([`GroupDir`]). On a cgroup filesystem
    /// it is opened with `RESOLVE_NO_XDEV` too: a directory reached
    /// without crossing a mount is kernfs, as the root is.
    pub fn open_group_dir(&self, rel: &Path) -> Result<GroupDir, FsError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
        if self.kernfs {
            if let Some(fd) = open_same_mount(self.root()?, rel, flags)? {
                return Ok(GroupDir { fd, kernfs: true });
            }
        }
        Ok(GroupDir {
            fd: self.open_dir(rel)?,
            kernfs: false,
        })
    }

    /// A group's directory, opened from an ancestor's open directory
    /// (its parent's, by its one name), for listing and opening its files: what
    /// a walk does instead of [`Hier::open_group_dir`] with the whole
    /// path, which the kernel resolves component by component from the
    /// root at each open (a chain of 2,000 groups cost as the square of
    /// its depth). The same rules: `RESOLVE_BENEATH` the parent (itself
    /// opened beneath the root), no symlink followed, and on kernfs
    /// `RESOLVE_NO_XDEV` as long as the parent was reached without
    /// crossing a mount, so that `kernfs` says what it says for a
    /// directory opened from the root. `rel` is a relative path below
    /// `parent` (one name in a walk), never empty.
    pub fn open_dir_below(&self, parent: &GroupDir, rel: &Path) -> Result<GroupDir, FsError> {
        if components(rel)?.is_empty() {
            return Err(FsError::from_errno(Errno::INVAL));
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let kernfs = self.kernfs && parent.kernfs;
        if kernfs || self.same_mount {
            match open_same_mount(parent.fd.as_fd(), rel, flags)? {
                Some(fd) => return Ok(GroupDir { fd, kernfs }),
                // as `open_at`: crossing a mount (or no way to tell) is refused
                None if self.same_mount => return Err(FsError::from_errno(Errno::XDEV)),
                None => {}
            }
        }
        Ok(GroupDir {
            fd: open_beneath(parent.fd.as_fd(), rel, flags, false)?,
            kernfs: false,
        })
    }

    /// Whether the caller may write `rel` (access(2) on the file opened
    /// beneath the root without following a symlink; a probe, not a
    /// write).
    pub fn can_write(&self, rel: &Path) -> bool {
        use rustix::fs::Access;
        // an O_PATH open of a trailing symlink gives the link itself:
        // check_regular refuses it
        let fd = self.open_at(rel, OFlags::PATH | OFlags::CLOEXEC);
        fd.is_ok_and(|fd| {
            check_regular(&fd).is_ok()
                && match rustix::fs::accessat(&fd, "", Access::WRITE_OK, AtFlags::EMPTY_PATH) {
                    // faccessat2 came in 5.8: the file itself through its fd link
                    Err(Errno::NOSYS | Errno::INVAL) => {
                        use std::os::fd::AsRawFd;
                        let p = format!("/proc/self/fd/{}", fd.as_raw_fd());
                        rustix::fs::access(p.as_str(), Access::WRITE_OK).is_ok()
                    }
                    r => r.is_ok(),
                }
        })
    }

    /// Opens a file below the root for one write: O_WRONLY without
    /// O_CREAT, a regular file, on the cgroup filesystem the root is on
    /// (cgroup2, or the v1 hierarchy: fstatfs of the open file).
    pub fn open_write(&self, rel: &Path) -> Result<File, FsError> {
        let Some(want) = self.cgroupfs else {
            return Err(FsError::NotCgroup2);
        };
        Self::writable(self.open_at(rel, WRITE_FLAGS)?, want)
    }

    /// [`Self::open_write`] of the file `name` of a group directory
    /// already open (`dir`, from [`Self::open_dir`]): the write goes to
    /// that very directory, whatever its path names by now.
    pub fn open_write_in(&self, dir: BorrowedFd<'_>, name: &str) -> Result<File, FsError> {
        let Some(want) = self.cgroupfs else {
            return Err(FsError::NotCgroup2);
        };
        Self::writable(
            open_beneath(dir, Path::new(name), WRITE_FLAGS, false)?,
            want,
        )
    }

    /// A file opened for writing, kept only if it is a regular file on
    /// the cgroup filesystem `want`, then made blocking for the write.
    fn writable(fd: OwnedFd, want: i64) -> Result<File, FsError> {
        check_regular(&fd)?;
        if fs_magic(fd.as_fd()) != Some(want) {
            return Err(FsError::NotCgroup2);
        }
        rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(FsError::from_errno)?;
        Ok(File::from(fd))
    }

    /// The parent directory of `rel` and `rel`'s last component, for
    /// mkdirat/unlinkat: opened beneath the root, on the root's cgroup
    /// filesystem.
    fn parent_of<'a>(&self, rel: &'a Path) -> Result<(OwnedFd, &'a OsStr), FsError> {
        let Some(want) = self.cgroupfs else {
            return Err(FsError::NotCgroup2);
        };
        let parts = components(rel)?;
        let Some(name) = parts.last() else {
            return Err(FsError::from_errno(Errno::INVAL));
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        let fd = self.open_dir(parent)?;
        if fs_magic(fd.as_fd()) != Some(want) {
            return Err(FsError::NotCgroup2);
        }
        Ok((fd, name))
    }

    /// mkdir of a group below the root.
    pub fn mkdir(&self, rel: &Path) -> Result<(), FsError> {
        let (parent, name) = self.parent_of(rel)?;
        rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755)).map_err(FsError::from_errno)
    }

    /// Whether the open directory `dir` is on the root's cgroup
    /// filesystem (cgroup2, or this v1 hierarchy's): never on a plain
    /// directory given with `--root`.
    pub fn holds_dir(&self, dir: BorrowedFd<'_>) -> bool {
        self.cgroupfs.is_some() && fs_magic(dir) == self.cgroupfs
    }

    /// mkdir of the group `name` in the group directory `parent`, already
    /// open and checked to be the group asked about: the group is made in
    /// that very directory, whatever its path names by now (removed, its
    /// name taken by another: the kernel refuses a child of a removed
    /// directory). `name` is one component; `parent` must be on the
    /// root's cgroup filesystem.
    pub fn mkdir_in(&self, parent: BorrowedFd<'_>, name: &OsStr) -> Result<(), FsError> {
        let Some(want) = self.cgroupfs else {
            return Err(FsError::NotCgroup2);
        };
        if components(Path::new(name))?.len() != 1 {
            return Err(FsError::from_errno(Errno::INVAL));
        }
        if fs_magic(parent) != Some(want) {
            return Err(FsError::NotCgroup2);
        }
        rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o755)).map_err(FsError::from_errno)
    }

    /// rmdir of a group below the root.
    pub fn rmdir(&self, rel: &Path) -> Result<(), FsError> {
        let (parent, name) = self.parent_of(rel)?;
        rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR).map_err(FsError::from_errno)
    }

    /// Visits the directory `rel` and every directory below it, each
    /// opened from its parent's descriptor by one name (`openat` with
    /// `O_NOFOLLOW | O_DIRECTORY`: a symlink is never followed), so that
    /// no path is ever resolved and groups nested past PATH_MAX are
    /// reached like any other (a path-based walk stops there with
    /// ENAMETOOLONG). One directory descriptor is open at a time: the walk
    /// climbs back through `..`, checked to be the directory it came from
    /// (device and inode), so a deep tree cannot exhaust descriptors.
    /// `visit` gets each directory's descriptor; the answer says whether
    /// the walk saw the whole subtree (false: a directory that could not
    /// be listed or opened for another reason than being gone).
    pub fn walk_subtree(
        &self,
        rel: &Path,
        visit: impl FnMut(BorrowedFd<'_>),
    ) -> Result<bool, FsError> {
        Self::walk_from(self.open_dir(rel)?, visit)
    }

    /// [`Self::walk_subtree`] of a group directory already open (`dir`,
    /// from [`Self::open_dir`]): the subtree of that very group, whatever
    /// its path names by now (a group removed and made again under its
    /// name is another). A directory removed since it was opened lists
    /// nothing: the walk sees it whole and empty (the kernel removes only
    /// a group without processes or children).
    pub fn walk_subtree_in(
        &self,
        dir: BorrowedFd<'_>,
        visit: impl FnMut(BorrowedFd<'_>),
    ) -> Result<bool, FsError> {
        let fd = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(FsError::from_errno)?;
        Self::walk_from(fd, visit)
    }

    fn walk_from(start: OwnedFd, mut visit: impl FnMut(BorrowedFd<'_>)) -> Result<bool, FsError> {
        let dir_flags = OFlags::RDONLY
            | OFlags::DIRECTORY
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NONBLOCK;
        let id = |fd: &OwnedFd| rustix::fs::fstat(fd).map(|s| (s.st_dev, s.st_ino));
        let mut complete = true;
        let mut cur = start;
        // each directory on the way down: its (device, inode) and the
        // names of its children not visited yet
        let mut stack: Vec<((u64, u64), Vec<OsString>)> = Vec::new();
        let mut entered = true;
        loop {
            if entered {
                visit(cur.as_fd());
                let me = id(&cur).map_err(FsError::from_errno)?;
                let children = subdirs(cur.as_fd()).unwrap_or_else(|_| {
                    complete = false;
                    Vec::new()
                });
                stack.push((me, children));
            }
            let Some((_, left)) = stack.last_mut() else {
                return Ok(complete);
            };
            if let Some(name) = left.pop() {
                match rustix::fs::openat(&cur, name.as_os_str(), dir_flags, Mode::empty()) {
                    Ok(child) => {
                        cur = child;
                        entered = true;
                    }
                    // removed meanwhile: nothing left in it
                    Err(Errno::NOENT | Errno::NODEV) => entered = false,
                    Err(_) => {
                        complete = false;
                        entered = false;
                    }
                }
                continue;
            }
            stack.pop();
            let Some((parent, _)) = stack.last() else {
                return Ok(complete);
            };
            let up = rustix::fs::openat(&cur, "..", dir_flags, Mode::empty());
            match up {
                Ok(fd) if id(&fd).ok().as_ref() == Some(parent) => cur = fd,
                // the directory left its parent (removed): the walk
                // cannot go on from a known place
                _ => return Ok(false),
            }
            entered = false;
        }
    }
}

/// A group's directory, open ([`Hier::open_group_dir`]): listed through
/// its descriptor, and its files opened by name from it (one lookup from
/// the directory instead of a path resolved from the hierarchy's root,
/// component by component). The same rules as every open of [`Hier`]:
/// beneath the directory, no symlink followed, `O_NONBLOCK`, regular
/// files only, read within their caps.
#[derive(Debug)]
pub struct GroupDir {
    fd: OwnedFd,
    /// Reached from a root on a cgroup filesystem without crossing a
    /// mount (`RESOLVE_NO_XDEV`): kernfs, which holds directories, regular
    /// files and symlinks only, never a FIFO, socket or device.
    kernfs: bool,
}

/// The directory's descriptor, for an open beneath it that `GroupDir`
/// has no method of its own for ([`Hier::open_write_in`]: the v1 OOM
/// registration's cgroup.event_control).
impl AsFd for GroupDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// The getdents64 buffer of [`GroupDir::entries`]: a cgroup directory's
/// 30-60 entries in one call (rustix's `Dir` starts at 768 bytes and
/// grows, three calls or more for one group).
const DENTS_BUF: usize = 8 * 1024;

/// The position kernfs's readdir leaves at the end of a directory
/// (`kernfs_fop_readdir` sets `ctx->pos = INT_MAX`; a name's hash, the
/// position of an entry not given yet, is always below it), which
/// getdents64 writes into the last entry's `d_off`.
const KERNFS_END: u64 = 0x7fff_ffff;

impl GroupDir {
    /// Calls `f` with every entry but `.` and `..`: its name, its type (a
    /// symlink is a symlink, never what it points to) and its inode.
    ///
    /// On kernfs one getdents64 call lists a group's directory: the last
    /// entry it gives says whether that was the end (its `d_off` is
    /// [`KERNFS_END`]), so the call that would only say so is not made (a
    /// system call and a `kernfs_dir_pos` lookup a directory listed).
    /// A call cut short (a full buffer, or a signal pending, which stops
    /// the kernel's fill early) ends elsewhere, and the listing goes on.
    /// Elsewhere (tmpfs: positions are counts) the listing ends with a
    /// call that gives nothing, as always.
    pub fn entries(&self, mut f: impl FnMut(&[u8], FileType, u64)) -> Result<(), FsError> {
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); DENTS_BUF];
        let mut dir = rustix::fs::RawDir::new(&self.fd, &mut buf);
        while let Some(e) = dir.next() {
            let e = e.map_err(FsError::from_errno)?;
            let name = e.file_name().to_bytes();
            let end = self.kernfs && e.next_entry_cookie() == KERNFS_END;
            if name != b"." && name != b".." {
                f(name, e.file_type(), e.ino());
            }
            if end && dir.is_buffer_empty() {
                break;
            }
        }
        Ok(())
    }

    /// The directory's descriptor, for a caller that keeps it (a v1
    /// scanner's watch of a group's link count).
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }

    /// [`GroupDir::into_fd`] of a directory that stays open too (a
    /// duplicate descriptor: one `fcntl`, no path resolved).
    pub fn try_clone_fd(&self) -> Result<OwnedFd, FsError> {
        rustix::io::fcntl_dupfd_cloexec(&self.fd, 0).map_err(FsError::from_errno)
    }

    /// The directory's inode (one `fstat`): which group it is, where one
    /// may have been removed and made again under its name.
    pub fn ino(&self) -> Result<u64, FsError> {
        rustix::fs::fstat(&self.fd)
            .map(|s| s.st_ino)
            .map_err(FsError::from_errno)
    }

    /// [`GroupDir::ino`] and the directory's owner (uid), from the one
    /// `fstat`: [`Hier::dir_ino_owner`] of a directory open.
    pub fn ino_owner(&self) -> Result<(u64, u32), FsError> {
        rustix::fs::fstat(&self.fd)
            .map(|s| (s.st_ino, s.st_uid))
            .map_err(FsError::from_errno)
    }

    /// A regular file of the group, open for reading, by its name (one
    /// component; a symlink is an error, ELOOP). On kernfs reached without
    /// crossing a mount the open alone says it is no FIFO, socket or
    /// device, and no `fstat` follows; elsewhere (a `--root` tree on
    /// tmpfs, a mount over the file) it is checked as [`Hier::open_read`]
    /// checks. (A directory by the name, made between the listing and this
    /// open, reads EISDIR: an error on that file, as its `fstat` gave.)
    pub fn open_read(&self, name: &str) -> Result<File, FsError> {
        self.open_read_below(Path::new(name))
    }

    /// [`GroupDir::open_read`] of a file further below the directory
    /// (`child/cgroup.procs`: a group's file from its parent's open
    /// directory), resolved beneath it by the same rules.
    pub fn open_read_below(&self, rel: &Path) -> Result<File, FsError> {
        if self.kernfs {
            if let Some(fd) = open_same_mount(self.fd.as_fd(), rel, READ_FLAGS)? {
                return Ok(File::from(fd));
            }
        }
        let fd = open_beneath(self.fd.as_fd(), rel, READ_FLAGS, false)?;
        check_regular(&fd)?;
        Ok(File::from(fd))
    }

    /// A child directory's inode and link count, by its one name (one
    /// `statx`, the last component not followed: a symlink is no
    /// directory): `None` where the name is not a directory. What the
    /// priming walk asks of a child instead of opening and listing it
    /// (`scan::listing`: a link count of 2 is a group with no child).
    pub fn child_dir_links(&self, name: &OsStr) -> Result<Option<(u64, u32)>, FsError> {
        use rustix::fs::StatxFlags;
        let b = name.as_bytes();
        if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') {
            return Err(FsError::from_errno(Errno::INVAL));
        }
        let st = rustix::fs::statx(
            &self.fd,
            name,
            AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT,
            StatxFlags::TYPE | StatxFlags::INO | StatxFlags::NLINK,
        )
        .map_err(FsError::from_errno)?;
        let is_dir = FileType::from_raw_mode(u32::from(st.stx_mode)) == FileType::Directory;
        Ok(is_dir.then_some((st.stx_ino, st.stx_nlink)))
    }

    /// A file of the group read as text, capped by its name
    /// ([`cap_for`]); bytes that are not UTF-8 are replaced.
    pub fn read_text(&self, name: &str) -> Result<String, FsError> {
        self.read_text_below(Path::new(name))
    }

    /// [`GroupDir::read_text`] of a file further below the directory
    /// (`child/cgroup.events`), resolved beneath it by the same rules
    /// ([`GroupDir::open_read_below`]), capped by its name.
    pub fn read_text_below(&self, rel: &Path) -> Result<String, FsError> {
        let f = self.open_read_below(rel)?;
        let name = rel
            .file_name()
            .map(OsStr::to_string_lossy)
            .unwrap_or_default();
        let mut buf = Vec::new();
        let n = read_capped(&f, &mut buf, cap_for(&name), true)?;
        buf.truncate(n);
        Ok(match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

/// The processes and groups of a subtree, counted by [`Hier::walk_subtree`]
/// (groups nested past PATH_MAX too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubtreeCount {
    pub procs: u64,
    pub groups: u64,
    /// The walk saw every directory of the subtree.
    pub complete: bool,
}

impl Hier {
    /// [`SubtreeCount`] of the group at `rel`.
    pub fn count_subtree(&self, rel: &Path) -> Result<SubtreeCount, FsError> {
        let mut c = SubtreeCount::default();
        c.complete = self.walk_subtree(rel, |dir| {
            c.groups += 1;
            c.procs += procs_in(dir).map_or(0, |p| p.len() as u64);
        })?;
        Ok(c)
    }
}

/// The names of the child directories of an open directory (symlinks are
/// never directories here).
fn subdirs(dir: BorrowedFd<'_>) -> Result<Vec<OsString>, Errno> {
    let mut d = rustix::fs::Dir::read_from(dir)?;
    let mut out = Vec::new();
    while let Some(e) = d.read() {
        let e = e?;
        let name = e.file_name().to_bytes();
        if name != b"." && name != b".." && e.file_type() == FileType::Directory {
            out.push(OsStr::from_bytes(name).to_owned());
        }
    }
    Ok(out)
}

/// The pids a group's cgroup.procs lists, read through the group's open
/// directory (no path: see [`Hier::walk_subtree`]); a regular file only,
/// capped as every cgroup.procs read.
pub fn procs_in(dir: BorrowedFd<'_>) -> Result<Vec<u32>, FsError> {
    let fd = rustix::fs::openat(dir, "cgroup.procs", READ_FLAGS, Mode::empty())
        .map_err(FsError::from_errno)?;
    check_regular(&fd)?;
    let f = File::from(fd);
    let mut buf = Vec::new();
    let n = read_capped(&f, &mut buf, CAP_PROCS, true)?;
    Ok(crate::cgroupfs::parse_pids(&String::from_utf8_lossy(
        &buf[..n],
    )))
}

/// The file `name` of the group directory `dir` (open), read as text
/// within its cap ([`cap_for`]): one component, no symlink followed, a
/// regular file only, non-blocking.
pub fn read_text_in(dir: BorrowedFd<'_>, name: &str) -> Result<String, FsError> {
    let fd = open_beneath(dir, Path::new(name), READ_FLAGS, false)?;
    check_regular(&fd)?;
    let f = File::from(fd);
    let mut buf = Vec::new();
    let n = read_capped(&f, &mut buf, cap_for(name), true)?;
    buf.truncate(n);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Every hierarchy of a layout, each opened once ([`Hier::open`]): the
/// cgroup2 one and each v1 hierarchy, by [`HierId`].
#[derive(Debug)]
pub struct Hiers {
    pub layout: Layout,
    v2: Option<Arc<Hier>>,
    v1: Vec<Arc<Hier>>,
}

impl Hiers {
    /// Opens each hierarchy's directory; one that cannot be opened is a
    /// handle that finds nothing ([`Hier::open_lenient`]), so a hierarchy
    /// unmounted under us shows as figures missing, not as a failed start.
    ///
    /// Each directory's last component is opened without following a
    /// symlink (a mount point never is one; a directory laid out like
    /// /sys/fs/cgroup may be the work of whoever owns it, as a container's
    /// root seen through /proc/PID/root is). A handle on a cgroup
    /// filesystem must be the hierarchy its place in the layout names:
    /// cgroup2 for v2, and for a v1 hierarchy the superblock (its device,
    /// `st_dev`) of a cgroup mount in /proc/self/mountinfo bound to the
    /// same controllers (or name). One that is not (a directory named
    /// `memory` that is the freezer hierarchy, or cgroup2) is read but
    /// never written, so that no write meant for one hierarchy lands in
    /// another.
    pub fn open(layout: Layout) -> Self {
        let mounts = super::mount::read_mountinfo().unwrap_or_default();
        let v2 = layout.v2.as_deref().map(|p| {
            let h = Hier::open_leaf_lenient(p);
            Arc::new(if h.is_cgroup1() { h.read_only() } else { h })
        });
        let v1 = layout
            .v1
            .iter()
            .map(|m| {
                let h = Hier::open_leaf_lenient(&m.dir);
                Arc::new(if h.cgroupfs.is_none() || h.is_v1_mount(m, &mounts) {
                    h
                } else {
                    h.read_only()
                })
            })
            .collect();
        Self { layout, v2, v1 }
    }

    /// The layout of one hierarchy already opened (`--root` naming a
    /// cgroup2 tree or a fixture directory): cgroup2's place, no v1.
    pub fn single(hier: Arc<Hier>) -> Self {
        Self {
            layout: Layout {
                v2: Some(hier.path().to_path_buf()),
                v1: Vec::new(),
            },
            v2: Some(hier),
            v1: Vec::new(),
        }
    }

    /// The handle of a hierarchy.
    pub fn get(&self, id: HierId) -> Option<&Arc<Hier>> {
        match id {
            HierId::V2 => self.v2.as_ref(),
            HierId::V1(i) => self.v1.get(i),
        }
    }

    /// The primary hierarchy ([`Layout::primary`]): the tree's backbone.
    pub fn primary(&self) -> Option<&Arc<Hier>> {
        self.get(self.layout.primary()?)
    }

    /// The hierarchy holding a controller ([`Layout::holder`]) and its
    /// handle.
    pub fn holder(&self, controller: &str) -> Option<(HierId, &Arc<Hier>)> {
        let id = self.layout.holder(controller)?;
        Some((id, self.get(id)?))
    }

    /// Every v1 hierarchy with its handle, in the layout's order.
    pub fn v1(
        &self,
    ) -> impl Iterator<Item = (HierId, &crate::model::host::layout::V1Mount, &Arc<Hier>)> {
        self.layout
            .v1
            .iter()
            .zip(&self.v1)
            .enumerate()
            .map(|(i, (m, h))| (HierId::V1(i), m, h))
    }
}

/// `Ok(inode)` when `fd` is a regular file.
fn check_regular(fd: &OwnedFd) -> Result<u64, FsError> {
    regular_stat(fd).map(|st| st.st_ino)
}

/// [`check_regular`], giving the whole `fstat`.
fn regular_stat(fd: &OwnedFd) -> Result<rustix::fs::Stat, FsError> {
    let st = rustix::fs::fstat(fd).map_err(FsError::from_errno)?;
    let t = FileType::from_raw_mode(st.st_mode);
    if t == FileType::RegularFile {
        Ok(st)
    } else {
        Err(FsError::NotRegular(kind_name(t)))
    }
}

/// Reads `f` from offset 0 into `buf` (grown as needed), at most `cap`
/// bytes: more is [`FsError::TooLarge`]. With `to_eof` false a read that
/// did not fill the buffer ends it (a single-record kernfs file is
/// complete after one read); with it, reading goes on to EOF (seq_file
/// returns at most a page of records per call). Returns the length.
pub fn read_capped(
    f: &File,
    buf: &mut Vec<u8>,
    cap: usize,
    to_eof: bool,
) -> Result<usize, FsError> {
    if buf.is_empty() {
        buf.resize(4096.min(cap + 1), 0);
    }
    let mut n = 0;
    loop {
        if n == buf.len() {
            if n > cap {
                return Err(FsError::TooLarge(cap));
            }
            // one byte past the cap tells "exactly the cap" from "more"
            buf.resize((buf.len() * 2).min(cap + 1), 0);
        }
        let got = match f.read_at(&mut buf[n..], n as u64) {
            Ok(g) => g,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FsError::Errno(errno::of_io(&e))),
        };
        n += got;
        if n > cap {
            return Err(FsError::TooLarge(cap));
        }
        if got == 0 || (!to_eof && n < buf.len()) {
            return Ok(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("a/b")).unwrap();
        fs::write(t.path().join("a/b/cpu.stat"), "usage_usec 1\n").unwrap();
        fs::write(t.path().join("outside"), "root:x:0:0\n").unwrap();
        symlink(t.path().join("outside"), t.path().join("a/link")).unwrap();
        symlink(t.path().join("a/b"), t.path().join("a/dirlink")).unwrap();
        t
    }

    /// A directory opened from another's descriptor is held to the same
    /// rules as one opened from the root: beneath it, no symlink, no `..`.
    #[test]
    fn a_directory_opened_below_another_follows_no_symlink_and_stays_beneath() {
        let t = tree();
        let h = Hier::open(t.path()).unwrap();
        let a = h.open_group_dir(Path::new("a")).unwrap();
        let b = h.open_dir_below(&a, Path::new("b")).unwrap();
        let f = b.open_read_below(Path::new("cpu.stat")).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut &f, &mut text).unwrap();
        assert_eq!(text, "usage_usec 1\n");
        let err = |r: Result<GroupDir, FsError>| r.unwrap_err().errno();
        // a symlink to a directory: never followed (O_DIRECTORY says ENOTDIR)
        let link = err(h.open_dir_below(&a, Path::new("dirlink")));
        assert!(
            matches!(link, Some(Errno::NOTDIR | Errno::LOOP)),
            "{link:?}"
        );
        assert_eq!(
            err(h.open_dir_below(&a, Path::new(".."))),
            Some(Errno::XDEV)
        );
        assert_eq!(
            err(h.open_dir_below(&b, Path::new("../.."))),
            Some(Errno::XDEV)
        );
        assert_eq!(err(h.open_dir_below(&a, Path::new(""))), Some(Errno::INVAL));
        assert!(b.open_read_below(Path::new("../link")).is_err());
    }

    #[test]
    fn reads_beneath_and_refuses_symlinks_both_ways() {
        let t = tree();
        let h = Hier::open(t.path()).unwrap();
        let root = h.root().unwrap();
        for fallback in [false, true] {
            let open = |rel: &str| open_beneath(root, Path::new(rel), READ_FLAGS, fallback);
            assert!(open("a/b/cpu.stat").is_ok());
            assert!(open("").is_ok(), "the root itself");
            let loop_ = FsError::Errno(Errno::LOOP);
            assert_eq!(open("a/link").unwrap_err(), loop_, "fallback {fallback}");
            let e = open("a/dirlink/cpu.stat").unwrap_err();
            assert!(e == loop_ || e == FsError::Errno(Errno::NOTDIR), "{e:?}");
            let xdev = FsError::Errno(Errno::XDEV);
            assert_eq!(open("../x").unwrap_err(), xdev);
            assert_eq!(open("a/../../x").unwrap_err(), xdev);
            assert_eq!(open("/etc/passwd").unwrap_err(), xdev);
        }
        assert_eq!(
            h.read_text(Path::new("a/b/cpu.stat")).unwrap(),
            "usage_usec 1\n"
        );
        let e = h.read_text(Path::new("a/link")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
    }

    #[test]
    fn caps_and_file_kinds() {
        let t = tree();
        fs::write(t.path().join("big"), vec![b'x'; 10_000]).unwrap();
        fs::write(t.path().join("exact"), vec![b'x'; 4096]).unwrap();
        let h = Hier::open(t.path()).unwrap();
        assert_eq!(h.read(Path::new("big"), 10_000).unwrap().len(), 10_000);
        assert_eq!(
            h.read(Path::new("big"), 9_999).unwrap_err(),
            FsError::TooLarge(9_999)
        );
        assert_eq!(h.read(Path::new("exact"), 4096).unwrap().len(), 4096);
        assert_eq!(
            h.read(Path::new("a"), 100).unwrap_err(),
            FsError::NotRegular("a directory")
        );
        assert!(h.read(Path::new("nope"), 100).unwrap_err().is_absent());
        let e = FsError::TooLarge(CAP_FILE).to_string();
        assert_eq!(e, "file larger than 64 KiB: not read");
        assert_eq!(cap_for("cgroup.procs"), CAP_PROCS);
        assert_eq!(cap_for("memory.stat"), CAP_STAT);
        assert_eq!(cap_for("cpu.max"), CAP_FILE);
    }

    #[test]
    fn a_plain_directory_is_never_written() {
        let t = tree();
        let h = Hier::open(t.path()).unwrap();
        assert!(!h.is_cgroup2());
        assert_eq!(
            h.open_write(Path::new("a/b/cpu.stat")).unwrap_err(),
            FsError::NotCgroup2
        );
        assert_eq!(
            h.mkdir(Path::new("a/new")).unwrap_err(),
            FsError::NotCgroup2
        );
        assert_eq!(h.rmdir(Path::new("a/b")).unwrap_err(), FsError::NotCgroup2);
        assert!(t.path().join("a/b").is_dir());
    }

    #[test]
    fn lists_without_following() {
        let t = tree();
        let h = Hier::open(t.path()).unwrap();
        let mut l = h.list(Path::new("a")).unwrap();
        l.sort_by(|x, y| x.name.cmp(&y.name));
        let kinds: Vec<(String, bool, bool)> = l
            .iter()
            .map(|e| (e.name.to_string_lossy().into_owned(), e.is_dir, e.is_file))
            .collect();
        assert_eq!(
            kinds,
            [
                ("b".into(), true, false),
                ("dirlink".into(), false, false),
                ("link".into(), false, false)
            ]
        );
        assert!(h.dir_ino(Path::new("a/dirlink")).is_err());
        assert!(h.can_write(Path::new("a/b/cpu.stat")));
        assert!(!h.can_write(Path::new("a/link")), "a symlink is not probed");
        assert!(h.dir_ino(Path::new("a/b")).is_ok());
    }

    #[test]
    fn a_missing_root_finds_nothing() {
        let h = Hier::open_lenient(Path::new("/nonexistent/cgtop"));
        assert!(h
            .read_text(Path::new("cgroup.procs"))
            .unwrap_err()
            .is_absent());
        assert!(h.list(Path::new("")).is_err());
    }
}
