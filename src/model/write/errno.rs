//! The one errno type: rustix's [`Errno`], a value (a checked number in
//! the kernel's range, 1 to 4095), re-exported here so that every layer
//! spells it the same way, with its symbolic name and the kernel's words
//! for it. Raw `i32`s stop at the edge where a syscall or `std::io::Error`
//! hands one over ([`of_io`]).
//!
//! rustix's type rather than a newtype of our own: it is already what
//! every syscall wrapper in `source` returns, and its constants
//! (`Errno::BUSY`) work as patterns, so a `match` reads like the admin
//! guide. It does no I/O.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

pub use rustix::io::Errno;

/// The errno of an I/O error; EIO for an error that carries none (std's
/// own errors, never a syscall's), so that a failure is never "success".
pub fn of_io(e: &std::io::Error) -> Errno {
    Errno::from_io_error(e).unwrap_or(Errno::IO)
}

/// The symbolic name of the errnos cgroupfs and the syscalls cgtop makes
/// return ("EBUSY"); "errno" for any other.
pub fn name(e: Errno) -> &'static str {
    match e {
        Errno::PERM => "EPERM",
        Errno::NOENT => "ENOENT",
        Errno::SRCH => "ESRCH",
        Errno::INTR => "EINTR",
        Errno::TOOBIG => "E2BIG",
        Errno::AGAIN => "EAGAIN",
        Errno::NOMEM => "ENOMEM",
        Errno::ACCESS => "EACCES",
        Errno::BUSY => "EBUSY",
        Errno::EXIST => "EEXIST",
        Errno::NODEV => "ENODEV",
        Errno::NOTDIR => "ENOTDIR",
        Errno::INVAL => "EINVAL",
        Errno::NOSPC => "ENOSPC",
        Errno::ROFS => "EROFS",
        Errno::RANGE => "ERANGE",
        Errno::NAMETOOLONG => "ENAMETOOLONG",
        Errno::NOTEMPTY => "ENOTEMPTY",
        Errno::OPNOTSUPP => "EOPNOTSUPP",
        Errno::DEADLK => "EDEADLK",
        Errno::LOOP => "ELOOP",
        Errno::XDEV => "EXDEV",
        Errno::NXIO => "ENXIO",
        _ => "errno",
    }
}

/// The kernel's own words for an errno ("Device or resource busy"),
/// without std's " (os error N)" tail.
pub fn strerror(e: Errno) -> String {
    let s = std::io::Error::from(e).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name(Errno::BUSY), "EBUSY");
        assert_eq!(name(Errno::OPNOTSUPP), "EOPNOTSUPP");
        assert_eq!(name(Errno::TOOBIG), "E2BIG");
        // an errno without a name here, at the top of the kernel's range
        assert_eq!(name(Errno::from_raw_os_error(4095)), "errno");
    }

    #[test]
    fn words_without_the_tail() {
        assert_eq!(strerror(Errno::NOMEM), "Cannot allocate memory");
        assert!(!strerror(Errno::from_raw_os_error(4095)).contains("os error"));
    }

    #[test]
    fn io_errors() {
        let busy = std::io::Error::from_raw_os_error(16);
        assert_eq!(of_io(&busy), Errno::BUSY);
        // std's own error has no errno; 0 and numbers past the kernel's
        // range are not errnos either
        let own = std::io::Error::other("not a syscall");
        assert_eq!(of_io(&own), Errno::IO);
        assert_eq!(of_io(&std::io::Error::from_raw_os_error(0)), Errno::IO);
        assert_eq!(of_io(&std::io::Error::from_raw_os_error(9999)), Errno::IO);
    }
}
