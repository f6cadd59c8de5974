//! Finding the hierarchies: read `/proc/self/mountinfo` ([`read_mountinfo`],
//! the one reader; `model::host::mountinfo` parses it), find cgroup2 and every v1
//! hierarchy among its entries ([`find_layout`], pure, through
//! `model::host::layout`), or check a `--root` directory's filesystem type.

use super::hier::{Hier, CGROUP_SUPER_MAGIC};
use crate::model::host::layout::{Layout, V1Mount};
use crate::model::host::mountinfo::{self, MountEntry};
use crate::model::{MountInfo, MountMode};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why there is no hierarchy to show; each says what was found and what to
/// do. The command line maps these to exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountError {
    /// Nothing cgroup-like is mounted.
    NoCgroup,
    /// `--root` is not a cgroup2 hierarchy nor a directory laid out like one.
    NotCgroup2 {
        dir: PathBuf,
        found: String,
    },
    Unreadable {
        what: String,
        err: String,
    },
}

impl std::fmt::Display for MountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoCgroup => write!(
                f,
                "no cgroup filesystem is mounted: mount cgroup2 with `mount -t cgroup2 none /sys/fs/cgroup`"
            ),
            Self::NotCgroup2 { dir, found } => write!(
                f,
                "{} is not a cgroup2 hierarchy: found {found} (give --root a cgroup2 mount, a delegated subtree, or a directory with cgroup.procs files)",
                path_text(dir)
            ),
            Self::Unreadable { what, err } => write!(f, "cannot read {what}: {err}"),
        }
    }
}

impl std::error::Error for MountError {}

/// A path from outside (`--root`, a mount point) as a message shows it:
/// escaped ([`crate::model::tree::text::escape`]), never lossy, never raw.
pub fn path_text(p: &Path) -> String {
    crate::model::tree::text::escape(p.as_os_str().as_bytes()).into_owned()
}

/// Every cgroup hierarchy among the mounts: cgroup2 and each v1
/// hierarchy ([`Layout::from_mounts`]). PURE.
pub fn find_layout(mounts: &[MountEntry]) -> Result<Layout, MountError> {
    let layout = Layout::from_mounts(mounts);
    if layout.is_empty() {
        Err(MountError::NoCgroup)
    } else {
        Ok(layout)
    }
}

/// The primary hierarchy and the mode ([`Layout::mount_info`]). PURE.
pub fn find_cgroup(mounts: &[MountEntry]) -> Result<MountInfo, MountError> {
    find_layout(mounts)?
        .mount_info()
        .ok_or(MountError::NoCgroup)
}

/// [`find_cgroup`] on mountinfo text. PURE.
pub fn parse_mountinfo(text: &str) -> Result<MountInfo, MountError> {
    find_cgroup(&mountinfo::parse(text.as_bytes()))
}

/// The mounts of this process, from `/proc/self/mountinfo`: the one
/// reader of it.
pub fn read_mountinfo() -> Result<Vec<MountEntry>, MountError> {
    let text = std::fs::read("/proc/self/mountinfo").map_err(|e| MountError::Unreadable {
        what: "/proc/self/mountinfo".into(),
        err: e.to_string(),
    })?;
    Ok(mountinfo::parse(&text))
}

/// Finds the live primary hierarchy from `/proc/self/mountinfo`.
pub fn discover() -> Result<MountInfo, MountError> {
    find_cgroup(&read_mountinfo()?)
}

/// Finds every live hierarchy from `/proc/self/mountinfo`.
pub fn discover_layout() -> Result<Layout, MountError> {
    find_layout(&read_mountinfo()?)
}

/// Checks a `--root` directory: a cgroup2 mount (or a directory inside
/// one: a delegated subtree) is live; a plain directory that holds
/// cgroup.procs is read as a fixture tree.
///
/// The directory is opened once, here, and the decision is made on that
/// descriptor: the returned [`Hier`] is what every later read and write
/// goes through, so re-pointing a symlink given as `--root` afterwards
/// changes nothing.
pub fn check_root(dir: &Path) -> Result<(MountInfo, Hier, Layout), MountError> {
    let hier = Hier::open(dir).map_err(|e| {
        if crate::model::write::errno::of_io(&e) == crate::model::Errno::NOTDIR {
            MountError::NotCgroup2 {
                dir: dir.to_path_buf(),
                found: "a file, not a directory".into(),
            }
        } else {
            MountError::Unreadable {
                what: path_text(dir),
                err: e.to_string(),
            }
        }
    })?;
    let ftype = hier.fs_type().unwrap_or(0);
    let one = |v1: Vec<V1Mount>| Layout {
        v2: v1.is_empty().then(|| dir.to_path_buf()),
        v1,
    };
    if hier.is_cgroup2() {
        let mode = discover().map_or(MountMode::PureV2, |m| m.mode);
        let m = MountInfo {
            root: dir.to_path_buf(),
            mode,
        };
        return Ok((m, hier, one(Vec::new())));
    }
    if ftype == CGROUP_SUPER_MAGIC {
        // a v1 hierarchy (or a group in one): its controllers are those of
        // the mount it is in
        let real = hier.real_path().unwrap_or_else(|| dir.to_path_buf());
        let mounts = read_mountinfo().unwrap_or_default();
        let mount = mounts
            .iter()
            .filter(|m| m.fs_type == "cgroup" && real.starts_with(&m.mount_point))
            .max_by_key(|m| m.mount_point.as_os_str().len());
        let mut v1 =
            Layout::from_mounts(mount.into_iter().cloned().collect::<Vec<_>>().as_slice()).v1;
        // the hierarchies are opened again without following a symlink
        // as the last component: the operator's --root may be one
        // (/sys/fs/cgroup/cpu -> cpu,cpuacct)
        let given = std::fs::symlink_metadata(dir)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then(|| std::fs::canonicalize(dir).ok())
            .flatten()
            .unwrap_or_else(|| dir.to_path_buf());
        for m in &mut v1 {
            m.dir.clone_from(&given);
        }
        if v1.is_empty() {
            v1.push(V1Mount {
                dir: given,
                controllers: Vec::new(),
                name: None,
            });
        }
        let layout = one(v1);
        let m = layout.mount_info().ok_or(MountError::NoCgroup)?;
        return Ok((m, hier, layout));
    }
    if hier
        .is_file(Path::new(crate::cgroupfs::files::PROCS))
        .is_ok()
    {
        let m = MountInfo {
            root: dir.to_path_buf(),
            mode: MountMode::Directory,
        };
        return Ok((m, hier, one(Vec::new())));
    }
    // a directory of hierarchies, as /sys/fs/cgroup is on a v1 or hybrid
    // host: the cgroup mounts right below it, or (a fixture, a copy) its
    // subdirectories named as the kernel names hierarchies
    let real = hier.real_path().unwrap_or_else(|| dir.to_path_buf());
    let below: Vec<MountEntry> = read_mountinfo()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| {
            m.fs_type.starts_with("cgroup") && m.mount_point.parent() == Some(real.as_path())
        })
        .collect();
    let layout = if below.is_empty() {
        let names: Vec<String> = hier
            .list(Path::new(""))
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.is_dir)
            .filter_map(|e| e.name.to_str().map(str::to_owned))
            .collect();
        Layout::from_dir_names(dir, names.iter().map(String::as_str))
    } else {
        let mut l = Layout::from_mounts(&below);
        // read through the path given, as every other --root
        if let Some(v2) = &mut l.v2 {
            *v2 = dir.join(v2.file_name().unwrap_or_default());
        }
        for m in &mut l.v1 {
            m.dir = dir.join(m.dir.file_name().unwrap_or_default());
        }
        l
    };
    if let Some(m) = layout.mount_info() {
        let primary = Hier::open(&m.root).map_err(|e| MountError::Unreadable {
            what: path_text(&m.root),
            err: e.to_string(),
        })?;
        return Ok((m, primary, layout));
    }
    Err(MountError::NotCgroup2 {
        dir: dir.to_path_buf(),
        found: format!(
            "a directory on a {} filesystem without cgroup.procs",
            fs_name(ftype)
        ),
    })
}

/// Opens the hierarchy [`discover`] found.
pub fn open_discovered(m: &MountInfo) -> Result<Hier, MountError> {
    Hier::open(&m.root).map_err(|e| MountError::Unreadable {
        what: path_text(&m.root),
        err: e.to_string(),
    })
}

fn fs_name(ftype: i64) -> String {
    match ftype {
        0x0102_1994 => "tmpfs".into(),
        0xef53 => "ext4".into(),
        0x6265_6572 => "sysfs".into(),
        0x9fa0 => "proc".into(),
        0x794c_7630 => "overlay".into(),
        0x5846_5342 => "xfs".into(),
        0x9123_683e => "btrfs".into(),
        other => format!("0x{other:x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const PURE: &str = "24 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

    #[test]
    fn hybrid_host() {
        let m = parse_mountinfo(HYBRID).unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(
            m.mode,
            MountMode::Hybrid {
                v1_controllers: vec!["cpu".into(), "memory".into()]
            }
        );
    }

    #[test]
    fn pure_v2() {
        let m = parse_mountinfo(PURE).unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(m.mode, MountMode::PureV2);
    }

    #[test]
    fn v1_only_and_none() {
        let v1: String = HYBRID
            .lines()
            .filter(|l| !l.contains("cgroup2"))
            .collect::<Vec<_>>()
            .join("\n");
        // no cgroup2: the v1 hierarchies, name=systemd the primary
        let m = parse_mountinfo(&v1).unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup/systemd"));
        assert_eq!(
            m.mode,
            MountMode::V1 {
                v1_controllers: vec!["cpu".into(), "memory".into()]
            }
        );
        assert_eq!(parse_mountinfo("garbage\n\n"), Err(MountError::NoCgroup));
    }

    #[test]
    fn this_hosts_mountinfo_parses_whole() {
        // the live text: every line is a mount the parser understands
        // (reading /proc itself needs its own mount)
        let text = std::fs::read("/proc/self/mountinfo").unwrap();
        let lines = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        let mounts = read_mountinfo().unwrap();
        assert!(
            mounts.len() >= lines.saturating_sub(2),
            "{} of {lines}",
            mounts.len()
        );
        assert!(mounts.iter().any(|m| m.fs_type == "proc"), "{mounts:?}");
    }

    #[test]
    fn escaped_mountpoint() {
        let m = parse_mountinfo("1 2 0:1 / /mnt/cg\\040two rw - cgroup2 none rw\n").unwrap();
        assert_eq!(m.root, PathBuf::from("/mnt/cg two"));
    }

    #[test]
    fn a_mount_path_keeps_its_bytes_and_messages_escape_it() {
        // mountinfo writes a byte as octal only for space, tab, newline and
        // backslash; a bad byte written so must come back as that byte
        let m = parse_mountinfo("1 2 0:1 / /mnt/cg\\012\\377 rw - cgroup2 none rw\n").unwrap();
        assert_eq!(m.root.as_os_str().as_bytes(), b"/mnt/cg\n\xff");
        let e = MountError::NotCgroup2 {
            dir: PathBuf::from(std::ffi::OsStr::from_bytes(b"x\x1b]0;pwned\x07\xff")),
            found: "a cgroup v1 hierarchy".into(),
        };
        let text = e.to_string();
        assert!(text.starts_with("x\\e]0;pwned\\a\\xff is not"), "{text}");
    }
}
