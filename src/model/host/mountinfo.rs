//! `/proc/PID/mountinfo` text -> typed entries, the one parser of it (the
//! reader is `source::mount::read_mountinfo`). Finding cgroup2 and the
//! v1 controllers (`source::mount`) and mapping /proc/PID/cgroup paths to
//! the view (`model::write::guard`) both work on these entries.
//!
//! The text is bytes: a mount point may hold any byte but NUL, and the
//! kernel escapes only space, tab, newline and backslash (as `\040`,
//! `\011`, `\012`, `\134`: `mangle` in fs/proc_namespace.c), so a path is
//! never made into lossy text here. A line that does not have the
//! fields of a mount is skipped, not guessed at.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// One line of mountinfo (proc(5)):
/// `id parent major:minor root mount_point options [optional...] - fstype source super_options`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub id: u32,
    pub parent: u32,
    /// The filesystem's device, "major:minor" as mountinfo prints it
    /// ("0:29"): the same for every mount of one superblock, and what
    /// `st_dev` of a file on it says.
    pub dev: String,
    /// The directory of the filesystem that is the root of this mount
    /// ("/" for a whole filesystem, "/docker/abc" for a bind mount of a
    /// subtree, as a container sees its cgroup2).
    pub root: PathBuf,
    pub mount_point: PathBuf,
    /// Per-mount options ("rw,nosuid,relatime").
    pub options: String,
    /// Optional fields: "shared:9", "master:1", "propagate_from:2",
    /// "unbindable"; any number, possibly none.
    pub optional: Vec<String>,
    pub fs_type: String,
    pub source: PathBuf,
    /// Per-superblock options; for cgroup v1 these name the controllers
    /// ("rw,cpu,cpuacct").
    pub super_options: String,
}

impl MountEntry {
    /// Parses one line; `None` when it lacks a field.
    pub fn parse(line: &[u8]) -> Option<Self> {
        let mut f = line.split(|&b| b == b' ');
        let id = number(f.next()?)?;
        let parent = number(f.next()?)?;
        let dev = text(f.next()?);
        let root = unescape(f.next()?);
        let mount_point = unescape(f.next()?);
        let options = text(f.next()?);
        let mut optional = Vec::new();
        loop {
            let field = f.next()?;
            if field == b"-" {
                break;
            }
            optional.push(text(field));
        }
        let fs_type = text(f.next()?);
        let source = unescape(f.next()?);
        let super_options = text(f.next()?);
        Some(Self {
            id,
            parent,
            dev,
            root,
            mount_point,
            options,
            optional,
            fs_type,
            source,
            super_options,
        })
    }
}

/// Every mount in the text, in its order; malformed lines are skipped.
pub fn parse(text: &[u8]) -> Vec<MountEntry> {
    text.split(|&b| b == b'\n')
        .filter_map(MountEntry::parse)
        .collect()
}

fn number(b: &[u8]) -> Option<u32> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Options and type names are ASCII in practice; a stray byte must not
/// drop the line.
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Undoes the kernel's octal escapes (`\040` for a space) to the path's
/// bytes. Only `\` and three octal digits up to `\377` (one byte) are an
/// escape; anything else is kept as it is.
fn unescape(b: &[u8]) -> PathBuf {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).filter(|d| {
            (b'0'..=b'3').contains(&d[0]) && d.iter().all(|c| (b'0'..=b'7').contains(c))
        });
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
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// Lines as a host shows them: systemd's pure v2 with optional fields,
    /// a hybrid host's v1 and v2 mounts, a container's bind mount of a
    /// subtree, and one with no optional field at all.
    const HOST: &str = "\
24 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:12 master:3 - cgroup cgroup rw,cpu,cpuacct
700 690 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw
22 27 0:21 / /proc rw,relatime - proc proc rw
";

    #[test]
    fn fields_of_real_lines() {
        let m = parse(HOST.as_bytes());
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[0],
            MountEntry {
                id: 24,
                parent: 30,
                dev: "0:22".into(),
                root: PathBuf::from("/"),
                mount_point: PathBuf::from("/sys/fs/cgroup"),
                options: "rw,nosuid,nodev,noexec,relatime".into(),
                optional: vec!["shared:9".into()],
                fs_type: "cgroup2".into(),
                source: PathBuf::from("cgroup2"),
                super_options: "rw,nsdelegate,memory_recursiveprot".into(),
            }
        );
        assert_eq!(m[1].optional, vec!["shared:12", "master:3"]);
        assert_eq!(m[1].super_options, "rw,cpu,cpuacct");
        assert_eq!(m[2].root, PathBuf::from("/docker/abc"));
        assert!(m[3].optional.is_empty());
        assert_eq!(m[3].fs_type, "proc");
    }

    #[test]
    fn escapes_give_back_the_bytes() {
        let m = parse(b"1 2 0:1 / /mnt/cg\\040two rw - cgroup2 none rw\n");
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt/cg two"));
        // tab, newline, backslash, and a byte that is not UTF-8 (written
        // raw by the kernel, or escaped by a hand)
        let m = parse(b"1 2 0:1 /a\\011b /mnt/x\\012\\134\\377\xfe rw - cgroup2 none rw\n");
        assert_eq!(m[0].root.as_os_str().as_bytes(), b"/a\tb");
        assert_eq!(
            m[0].mount_point.as_os_str().as_bytes(),
            b"/mnt/x\n\\\xff\xfe"
        );
    }

    #[test]
    fn hostile_escapes_are_kept_as_written() {
        // past one byte (\777 would overflow), too short, at the very end,
        // not octal: none is an escape, and none panics
        for (raw, want) in [
            (&b"/m\\777"[..], &b"/m\\777"[..]),
            (b"/m\\04", b"/m\\04"),
            (b"/m\\", b"/m\\"),
            (b"/m\\08x", b"/m\\08x"),
            (b"/m\\400", b"/m\\400"),
            (b"/m\\000", b"/m\0"),
        ] {
            let mut line = b"1 2 0:1 / ".to_vec();
            line.extend_from_slice(raw);
            line.extend_from_slice(b" rw - cgroup2 none rw");
            let m = MountEntry::parse(&line).unwrap();
            assert_eq!(m.mount_point.as_os_str().as_bytes(), want, "{raw:?}");
        }
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let text = b"garbage\n\n1 2 0:1 / /x rw\n1 2 0:1 / /x rw shared:1\n\
                     x 2 0:1 / /x rw - cgroup2 none rw\n1 2 0:1 / /x rw - cgroup2 none\n\
                     1 2 0:1 / /ok rw - cgroup2 none rw\n";
        let m = parse(text);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].mount_point, PathBuf::from("/ok"));
        assert!(parse(b"").is_empty());
        assert!(parse(b"\xff\xfe\x00 - - -").is_empty());
    }

    #[test]
    fn long_lines_and_many_optional_fields() {
        // a mount point of 64 KiB of escaped spaces, 10,000 optional fields
        let point = "/m".to_owned() + &"\\040".repeat(16 * 1024);
        let opt = "shared:1 ".repeat(10_000);
        let line =
            format!("5 1 0:9 / {point} rw {opt}- cgroup2 none rw\n7 1 0:9 / /b rw - tmpfs t rw");
        let m = parse(line.as_bytes());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mount_point.as_os_str().len(), 2 + 16 * 1024);
        assert_eq!(m[0].optional.len(), 10_000);
        assert_eq!(m[1].mount_point, PathBuf::from("/b"));
    }
}
