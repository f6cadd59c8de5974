//! PURE: a write's bytes as the kernel reads them (`kstrtoint`,
//! `strstrip`), and so what the write does to processes ([`WriteEffect`]):
//! judged from the file and the bytes, not from how the op was built, so
//! that a raw `0x1` to cgroup.freeze is a freeze like `1`.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::cgroupfs::files;
use crate::model::write::{v1_files, Mover, Op, WriteEffect, WriteOp};

/// The kernel's `isspace()` for `strstrip()`: ASCII whitespace and 0xa0
/// (lib/ctype.c marks NBSP as space).
fn kernel_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0xa0)
}

/// `kstrtoint(strstrip(buf), 0, &v)`, the parse of cgroup.freeze,
/// cgroup.kill and cgroup.procs (kernel/cgroup/cgroup.c): surrounding
/// whitespace dropped, an optional sign ('+' or '-'), then base 0: "0x"
/// followed by a hex digit is hex, a leading "0" octal, else decimal; one
/// trailing newline allowed; the value must fit an int. `None` where the
/// kernel says EINVAL or ERANGE.
pub fn kernel_int(buf: &[u8]) -> Option<i32> {
    let start = buf.iter().position(|&b| !kernel_space(b))?;
    let end = buf.iter().rposition(|&b| !kernel_space(b))? + 1;
    let s = &buf[start..end];
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match s {
        [b'0', x, h, ..] if x.eq_ignore_ascii_case(&b'x') && h.is_ascii_hexdigit() => (16, &s[2..]),
        [b'0', ..] => (8, s),
        _ => (10, s),
    };
    let mut v: u64 = 0;
    let mut n = 0;
    for &b in digits {
        let Some(d) = char::from(b).to_digit(radix) else {
            break;
        };
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let rest = &digits[n..];
    if !(rest.is_empty() || rest == b"\n") {
        return None;
    }
    let v = i64::try_from(v).ok()?;
    i32::try_from(if neg { -v } else { v }).ok()
}

/// `strstrip()`: the kernel's whitespace off both ends.
fn kernel_strip(buf: &[u8]) -> &[u8] {
    let Some(start) = buf.iter().position(|&b| !kernel_space(b)) else {
        return &[];
    };
    let end = buf
        .iter()
        .rposition(|&b| !kernel_space(b))
        .map_or(start, |e| e + 1);
    &buf[start..end]
}

impl WriteOp {
    /// What this write does ([`WriteEffect`]).
    pub fn effect(&self) -> WriteEffect {
        let v = kernel_int(self.contents.as_bytes());
        match (self.file.as_str(), v) {
            (files::FREEZE, Some(1)) => WriteEffect::Freeze,
            (files::FREEZE, Some(0)) => WriteEffect::Thaw,
            (files::KILL, Some(1)) => WriteEffect::Kill,
            (files::PROCS | files::THREADS | v1_files::TASKS, Some(pid)) if pid >= 0 => {
                WriteEffect::Move {
                    who: if pid == 0 {
                        Mover::Writer
                    } else {
                        Mover::Pid(pid.unsigned_abs())
                    },
                    threads: self.file != files::PROCS,
                }
            }
            // freezer_write: strstrip, then an exact "FROZEN" or "THAWED"
            // (kernel/cgroup/legacy_freezer.c)
            (v1_files::FREEZER_STATE, _) => match kernel_strip(self.contents.as_bytes()) {
                b"FROZEN" => WriteEffect::Freeze,
                b"THAWED" => WriteEffect::Thaw,
                _ => WriteEffect::Other,
            },
            _ => WriteEffect::Other,
        }
    }
}

impl Op {
    /// What the op does to processes; a mkdir or rmdir does nothing to
    /// them.
    pub fn effect(&self) -> WriteEffect {
        self.as_write().map_or(WriteEffect::Other, WriteOp::effect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::write::{freeze, kill, move_process, raw, remove_group};
    use crate::model::GroupPath;

    #[test]
    fn kernel_ints_as_kstrtoint_reads_them() {
        let k = |s: &str| kernel_int(s.as_bytes());
        for (text, v) in [
            ("1", Some(1)),
            ("0x1", Some(1)),
            ("0X1", Some(1)),
            ("01", Some(1)),
            ("+1", Some(1)),
            (" 1", Some(1)),
            ("\t1\n", Some(1)),
            ("1\n\n", Some(1)),
            ("000001", Some(1)),
            ("-0", Some(0)),
            ("+0", Some(0)),
            ("0", Some(0)),
            ("00", Some(0)),
            ("0x0", Some(0)),
            ("010", Some(8)),
            ("0x10", Some(16)),
            ("-1", Some(-1)),
            ("2147483647", Some(i32::MAX)),
            ("2147483648", None),
            ("-2147483648", Some(i32::MIN)),
            ("99999999999999999999999", None),
            ("08", None),
            ("0x", None),
            ("0xg", None),
            ("1 2", None),
            ("1a", None),
            ("++1", None),
            ("+-1", None),
            ("", None),
            ("  ", None),
            ("one", None),
        ] {
            assert_eq!(k(text), v, "{text:?}");
        }
        // NBSP is space to the kernel; its UTF-8 lead byte is not
        assert_eq!(kernel_int(b"\xa01\xa0"), Some(1));
        assert_eq!(k("1\u{a0}"), None);
    }

    #[test]
    fn effects_are_judged_from_the_bytes() {
        let a = GroupPath::new("a");
        for v in ["1", "0x1", "01", "+1", " 1", "1\n"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Freeze,
                "{v}"
            );
            assert_eq!(raw(&a, "cgroup.kill", v).effect(), WriteEffect::Kill, "{v}");
        }
        for v in ["0", "00", "0x0", "-0"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Thaw,
                "{v}"
            );
            let moved = WriteEffect::Move {
                who: Mover::Writer,
                threads: false,
            };
            assert_eq!(raw(&a, "cgroup.procs", v).effect(), moved, "{v}");
        }
        for v in ["2", "-1", "1x", "yes"] {
            assert_eq!(
                raw(&a, "cgroup.freeze", v).effect(),
                WriteEffect::Other,
                "{v}"
            );
        }
        assert_eq!(raw(&a, "cgroup.kill", "0").effect(), WriteEffect::Other);
        assert_eq!(
            raw(&a, "cgroup.threads", "0x10").effect(),
            WriteEffect::Move {
                who: Mover::Pid(16),
                threads: true
            }
        );
        assert_eq!(raw(&a, "cgroup.procs", "-5").effect(), WriteEffect::Other);
        assert_eq!(raw(&a, "memory.max", "1").effect(), WriteEffect::Other);
        // the typed ops mean what their bytes mean
        assert_eq!(freeze(&a, true).effect(), WriteEffect::Freeze);
        assert_eq!(freeze(&a, false).effect(), WriteEffect::Thaw);
        assert_eq!(kill(&a).effect(), WriteEffect::Kill);
        assert_eq!(
            move_process(7, &a, false).effect(),
            WriteEffect::Move {
                who: Mover::Pid(7),
                threads: false
            }
        );
        assert_eq!(remove_group(&a).effect(), WriteEffect::Other);
    }
}
