//! Reading a runtime's metadata files by the hostile-file rules: each
//! runtime directory opened once as a descriptor ([`Dir`], through
//! [`Hier`]), every file beneath it opened without following a symlink,
//! only regular files, `O_NONBLOCK`, refused above a size cap before a
//! byte is read; a file that is not JSON is counted, never fatal.

use crate::model::write::errno::{self, Errno};
use crate::source::hier::{FsError, Hier};
use std::path::{Path, PathBuf};

/// Why a runtime's metadata for a group was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// No such file (not this runtime's group, or gone): nothing to say.
    Absent,
    /// There, but not read or not used: the words after "<runtime>
    /// metadata not readable: " ("not root", "file larger than 1 MiB").
    Unreadable(String),
}

/// A runtime's directory (below the roots' base), opened once as a
/// descriptor when first needed; while it cannot be opened (the runtime
/// is not installed yet) it is tried again on the next pass.
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
    hier: Option<Hier>,
}

impl Dir {
    pub fn new(path: PathBuf) -> Self {
        Self { path, hier: None }
    }

    /// The directory as given (for the `source` shown).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open directory, or why it cannot be read.
    pub fn get(&mut self) -> Result<&Hier, Miss> {
        if self.hier.is_none() {
            match Hier::open(&self.path) {
                Ok(h) => self.hier = Some(h),
                Err(e) => {
                    let fs = FsError::Errno(errno::of_io(&e));
                    return Err(miss(&fs));
                }
            }
        }
        self.hier.as_ref().ok_or(Miss::Absent)
    }
}

/// The words for a file that could not be read; `Absent` for ENOENT (and
/// ENOTDIR: a path through something that is not a directory).
pub fn miss(e: &FsError) -> Miss {
    let words = match *e {
        FsError::Errno(Errno::NOENT | Errno::NOTDIR) => return Miss::Absent,
        // out of descriptors or memory for a moment: not the file's fault,
        // looked for again on a re-listing
        FsError::Errno(Errno::MFILE | Errno::NFILE | Errno::NOMEM | Errno::INTR) => {
            return Miss::Absent
        }
        FsError::Errno(Errno::ACCESS | Errno::PERM) => {
            if rustix::process::geteuid().is_root() {
                "permission denied".to_owned()
            } else {
                "not root".to_owned()
            }
        }
        FsError::Errno(Errno::LOOP) => "a symbolic link, not followed".to_owned(),
        FsError::Errno(Errno::XDEV) => "outside its directory, not followed".to_owned(),
        FsError::Errno(e) => errno::strerror(e),
        FsError::NotRegular(kind) => format!("not a regular file ({kind})"),
        FsError::TooLarge(cap) => format!("file larger than {}", size_words(cap)),
        FsError::NotCgroup2 => "not read".to_owned(),
    };
    Miss::Unreadable(words)
}

/// 1 MiB, 64 KiB, 32 MiB.
pub fn size_words(n: usize) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

/// Reads `rel` beneath `h` by the rules above, at most `cap` bytes; with
/// `owner`, only a file that uid owns (a user's own storage).
pub fn read_file(h: &Hier, rel: &Path, cap: usize, owner: Option<u32>) -> Result<Vec<u8>, Miss> {
    let (bytes, uid) = h.read_owned(rel, cap).map_err(|e| miss(&e))?;
    match owner {
        Some(o) if o != uid => Err(Miss::Unreadable("not owned by the user".to_owned())),
        _ => Ok(bytes),
    }
}

/// [`read_file`] parsed as JSON; a parse error is counted in `errors`.
pub fn read_json(
    h: &Hier,
    rel: &Path,
    cap: usize,
    owner: Option<u32>,
    errors: &mut u64,
) -> Result<serde_json::Value, Miss> {
    read_typed(h, rel, cap, owner, errors)
}

/// [`read_json`] into `T`, for a file whose writer is not trusted with
/// memory: a `serde_json::Value` costs 32 bytes a value, so 32 MiB of
/// `[0,0,...` would be 512 MiB; a type that keeps only what it needs
/// costs what it keeps.
pub fn read_typed<T: serde::de::DeserializeOwned>(
    h: &Hier,
    rel: &Path,
    cap: usize,
    owner: Option<u32>,
    errors: &mut u64,
) -> Result<T, Miss> {
    let bytes = read_file(h, rel, cap, owner)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        *errors += 1;
        // line and column only: the parser's message may quote the file
        Miss::Unreadable(format!(
            "not valid JSON (line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

/// The longest text kept of any one field (a name, an image, a label):
/// the runtimes' own limits are far below it; a longer one is cut.
pub const FIELD_MAX: usize = 512;

/// A string field of a JSON object, cut to [`FIELD_MAX`] bytes; `None`
/// for a missing, empty or non-string value.
pub fn text(v: &serde_json::Value) -> Option<String> {
    let s = v.as_str()?;
    (!s.is_empty()).then(|| cut(s))
}

/// `s` cut to at most [`FIELD_MAX`] bytes on a character boundary.
pub fn cut(s: &str) -> String {
    if s.len() <= FIELD_MAX {
        return s.to_owned();
    }
    let mut end = FIELD_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// A name that can be one path component below a runtime's directory:
/// what a runtime's own ids and names are made of (containerd: letters,
/// digits, `.`, `_`, `-`), never `.` or `..`, at most 255 bytes. Anything
/// else is never looked up.
pub fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_for_each_refusal() {
        assert_eq!(miss(&FsError::Errno(Errno::NOENT)), Miss::Absent);
        assert_eq!(
            miss(&FsError::TooLarge(1 << 20)),
            Miss::Unreadable("file larger than 1 MiB".into())
        );
        assert_eq!(
            miss(&FsError::NotRegular("a FIFO")),
            Miss::Unreadable("not a regular file (a FIFO)".into())
        );
        assert_eq!(size_words(64 << 10), "64 KiB");
    }

    #[test]
    fn plain_names_only() {
        assert!(is_plain_name("k8s.io"));
        assert!(is_plain_name("web-1"));
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "a\u{202e}b",
            "a\x1bb",
            &"x".repeat(256),
        ] {
            assert!(!is_plain_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn fields_are_cut_on_a_char_boundary() {
        let long = "é".repeat(FIELD_MAX);
        let c = cut(&long);
        assert!(c.len() <= FIELD_MAX && c.len() >= FIELD_MAX - 1);
    }
}
