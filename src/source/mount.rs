//! Finding cgroup2: read `/proc/self/mountinfo` ([`read_mountinfo`], the
//! one reader; `model::mountinfo` parses it), pick the cgroup2 mount from
//! its entries ([`find_cgroup`], pure), or check a `--root` directory's
//! filesystem type.

use super::hier::Hier;
use crate::model::mountinfo::{self, MountEntry};
use crate::model::{MountInfo, MountMode};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
/// statfs f_type of cgroup v1.
const CGROUP_SUPER_MAGIC: i64 = 0x0027_e0eb;

/// Why there is no hierarchy to show; each says what was found and what to
/// do. The command line maps these to exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountError {
    /// Only cgroup v1 hierarchies are mounted.
    V1Only {
        v1_controllers: Vec<String>,
    },
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
            Self::V1Only { v1_controllers } => write!(
                f,
                "no cgroup2 hierarchy is mounted: this system uses cgroup v1 only (controllers: {}). \
                 cgtop needs cgroup v2: boot with systemd.unified_cgroup_hierarchy=1 \
                 (or mount -t cgroup2 none /sys/fs/cgroup/unified for a hybrid view)",
                v1_controllers.join(", ")
            ),
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
/// escaped ([`crate::model::text::escape`]), never lossy, never raw.
pub fn path_text(p: &Path) -> String {
    crate::model::text::escape(p.as_os_str().as_bytes()).into_owned()
}

/// Finds the cgroup2 mount among the mounts and the controllers held by
/// cgroup v1 mounts. PURE.
pub fn find_cgroup(mounts: &[MountEntry]) -> Result<MountInfo, MountError> {
    let mut v2: Option<PathBuf> = None;
    let mut v1_controllers: Vec<String> = Vec::new();
    let mut any_v1 = false;
    for m in mounts {
        match m.fs_type.as_str() {
            // the first cgroup2 mount wins (a bind mount may follow)
            "cgroup2" if v2.is_none() => v2 = Some(m.mount_point.clone()),
            "cgroup" => {
                any_v1 = true;
                for opt in m.super_options.split(',') {
                    if !matches!(
                        opt,
                        "rw" | "ro" | "" | "relatime" | "noatime" | "nosuid" | "nodev" | "noexec"
                    ) && !opt.contains('=')
                        && !v1_controllers.iter().any(|c| c == opt)
                    {
                        v1_controllers.push(opt.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    match v2 {
        Some(root) => Ok(MountInfo {
            root,
            mode: if any_v1 {
                MountMode::Hybrid { v1_controllers }
            } else {
                MountMode::PureV2
            },
        }),
        None if any_v1 => Err(MountError::V1Only { v1_controllers }),
        None => Err(MountError::NoCgroup),
    }
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

/// Finds the live hierarchy from `/proc/self/mountinfo`.
pub fn discover() -> Result<MountInfo, MountError> {
    find_cgroup(&read_mountinfo()?)
}

/// Checks a `--root` directory: a cgroup2 mount (or a directory inside
/// one: a delegated subtree) is live; a plain directory that holds
/// cgroup.procs is read as a fixture tree.
///
/// The directory is opened once, here, and the decision is made on that
/// descriptor: the returned [`Hier`] is what every later read and write
/// goes through, so re-pointing a symlink given as `--root` afterwards
/// changes nothing.
pub fn check_root(dir: &Path) -> Result<(MountInfo, Hier), MountError> {
    let hier = Hier::open(dir).map_err(|e| {
        if crate::model::errno::of_io(&e) == crate::model::Errno::NOTDIR {
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
    if hier.is_cgroup2() {
        let mode = discover().map_or(MountMode::PureV2, |m| m.mode);
        return Ok((
            MountInfo {
                root: dir.to_path_buf(),
                mode,
            },
            hier,
        ));
    }
    if ftype == CGROUP_SUPER_MAGIC {
        return Err(MountError::NotCgroup2 {
            dir: dir.to_path_buf(),
            found: "a cgroup v1 hierarchy".into(),
        });
    }
    if hier
        .is_file(Path::new(crate::cgroupfs::files::PROCS))
        .is_ok()
    {
        return Ok((
            MountInfo {
                root: dir.to_path_buf(),
                mode: MountMode::Directory,
            },
            hier,
        ));
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
        assert!(matches!(
            parse_mountinfo(&v1),
            Err(MountError::V1Only { .. })
        ));
        assert_eq!(parse_mountinfo("garbage\n\n"), Err(MountError::NoCgroup));
        let msg = parse_mountinfo(&v1).unwrap_err().to_string();
        assert!(
            msg.contains("cgroup v1 only") && msg.contains("systemd.unified_cgroup_hierarchy=1"),
            "{msg}"
        );
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
