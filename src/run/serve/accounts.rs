//! Whose account a socket's uid is, for counting a flood's connections
//! together ([`super::Owner`]).
//!
//! A user with subordinate ids (/etc/subuid: rootless podman's 65,536 by
//! default, used through `newuidmap` without any privilege on the host)
//! can make each of its sockets under another uid. Counted by uid, every
//! such owner holds one request, and root's lone scrape, the newest, is
//! the one refused. So a uid counts as the account it belongs to: itself
//! where /etc/passwd names it; the user whose /etc/subuid range holds it;
//! otherwise one group of every uid no account names.
//!
//! Only the files are read, never NSS (`getpwuid` may ask a directory
//! server over the network, inside the serving loop): on a host whose
//! users come from LDAP or sssd, their uids count as that one unnamed
//! group. Both are read by the hostile-file rules all the same
//! ([`Hier::read_owned`]: no symlink, a regular file, no wait, a size
//! cap), only where root owns them, and again at most once a minute.

use crate::source::hier::Hier;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// At most this much of each file is read (a host with 100,000 local
/// accounts has a 6 MB /etc/passwd); a larger one is not read.
const MAX_FILE: usize = 16 << 20;

/// The files are read again after this long.
const FRESH_FOR: Duration = Duration::from_secs(60);

/// Whose account a uid counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Account {
    /// A named account's uid (the uid itself, or the owner of the
    /// subordinate range that holds it).
    Uid(u32),
    /// A uid that no account names nor holds.
    Unnamed,
}

/// The accounts of /etc/passwd and the ranges of /etc/subuid.
#[derive(Debug, Default)]
pub(super) struct Accounts {
    /// None: /etc/passwd could not be read; every uid counts as itself
    /// (as before there was this table).
    named: Option<HashSet<u32>>,
    /// (first, count, owner's uid), by first.
    ranges: Vec<(u32, u32, u32)>,
    read_at: Option<Instant>,
}

impl Accounts {
    /// Reads the host's /etc/passwd and /etc/subuid.
    pub(super) fn read() -> Self {
        Self::read_from(Path::new("/etc"))
    }

    /// Reads `passwd` and `subuid` in directory `etc`.
    pub(super) fn read_from(etc: &Path) -> Self {
        let dir = Hier::open(etc).ok();
        let read = |name: &str| read_roots(dir.as_ref()?, name);
        let Some(passwd) = read("passwd") else {
            return Self {
                read_at: Some(Instant::now()),
                ..Self::default()
            };
        };
        let users = parse_passwd(&passwd);
        let named = users.iter().map(|&(_, uid)| uid).collect();
        let ranges = read("subuid")
            .map(|t| parse_subuid(&t, &users))
            .unwrap_or_default();
        Self {
            named: Some(named),
            ranges,
            read_at: Some(Instant::now()),
        }
    }

    /// Reads the files again where they are older than a minute.
    pub(super) fn refresh(&mut self) {
        if self.read_at.is_none_or(|t| t.elapsed() >= FRESH_FOR) {
            *self = Self::read();
        }
    }

    /// The account `uid` counts as. Root is always itself.
    pub(super) fn of(&self, uid: u32) -> Account {
        let Some(named) = &self.named else {
            return Account::Uid(uid);
        };
        if uid == 0 || named.contains(&uid) {
            return Account::Uid(uid);
        }
        let i = self.ranges.partition_point(|&(first, _, _)| first <= uid);
        // the ranges may overlap (the file is the administrator's): any
        // range before holding it will do
        self.ranges[..i]
            .iter()
            .rev()
            .find(|&&(first, count, _)| uid - first < count)
            .map_or(Account::Unnamed, |&(_, _, owner)| Account::Uid(owner))
    }
}

/// The text of file `name` in `dir`, where root owns it; None where it
/// cannot be read by the hostile-file rules or is over [`MAX_FILE`].
fn read_roots(dir: &Hier, name: &str) -> Option<String> {
    let (bytes, uid) = dir.read_owned(Path::new(name), MAX_FILE).ok()?;
    (uid == 0).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// (name, uid) of each line of an /etc/passwd text.
fn parse_passwd(text: &str) -> Vec<(&str, u32)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            let uid = f.nth(1)?.parse().ok()?;
            (!name.is_empty()).then_some((name, uid))
        })
        .collect()
}

/// The ranges of an /etc/subuid text (`owner:first:count`, the owner a
/// name or a uid), by first; a range whose owner no account names is
/// left out (its uids are unnamed).
fn parse_subuid(text: &str, users: &[(&str, u32)]) -> Vec<(u32, u32, u32)> {
    let mut out: Vec<(u32, u32, u32)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let owner = f.next()?;
            let first: u32 = f.next()?.trim().parse().ok()?;
            let count: u32 = f.next()?.trim().parse().ok()?;
            let uid = users
                .iter()
                .find(|&&(name, _)| name == owner)
                .map(|&(_, uid)| uid)
                .or_else(|| {
                    let uid = owner.parse().ok()?;
                    users.iter().any(|&(_, u)| u == uid).then_some(uid)
                })?;
            (count > 0).then_some((first, count, uid))
        })
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accounts(passwd: &str, subuid: &str) -> Accounts {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("passwd"), passwd).unwrap();
        std::fs::write(t.path().join("subuid"), subuid).unwrap();
        Accounts::read_from(t.path())
    }

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\n\
        prometheus:x:998:998::/var/lib/prometheus:/usr/sbin/nologin\n\
        alice:x:1000:1000::/home/alice:/bin/bash\n\
        bob:x:1001:1001::/home/bob:/bin/bash\n";

    #[test]
    fn a_subordinate_uid_counts_as_the_user_who_holds_its_range() {
        let a = accounts(PASSWD, "alice:100000:65536\n1001:165536:65536\n");
        assert_eq!(a.of(100_000), Account::Uid(1000));
        assert_eq!(a.of(165_535), Account::Uid(1000));
        assert_eq!(a.of(165_536), Account::Uid(1001), "an owner given by uid");
        assert_eq!(a.of(231_071), Account::Uid(1001));
        assert_eq!(a.of(231_072), Account::Unnamed, "past every range");
        assert_eq!(a.of(998), Account::Uid(998), "a named account is itself");
        assert_eq!(a.of(0), Account::Uid(0));
        assert_eq!(a.of(5000), Account::Unnamed);
    }

    #[test]
    fn a_range_of_nobody_named_and_bad_lines_are_left_out() {
        let a = accounts(
            PASSWD,
            "ghost:200000:10\n4242:300000:10\nalice:x:10\nalice:400000\nbob:500000:0\n\n",
        );
        assert!(a.ranges.is_empty(), "{:?}", a.ranges);
        assert_eq!(a.of(200_000), Account::Unnamed);
        assert_eq!(a.of(300_000), Account::Unnamed);
    }

    #[test]
    fn overlapping_ranges_give_a_holder() {
        let a = accounts(PASSWD, "alice:100000:1000\nbob:100500:10\n");
        assert_eq!(a.of(100_505), Account::Uid(1001));
        assert_eq!(
            a.of(100_900),
            Account::Uid(1000),
            "the earlier range holds it"
        );
    }

    #[test]
    fn without_a_readable_passwd_every_uid_is_itself() {
        let t = tempfile::tempdir().unwrap();
        let a = Accounts::read_from(&t.path().join("none"));
        assert_eq!(a.of(100_000), Account::Uid(100_000));
        assert_eq!(a.of(0), Account::Uid(0));
        // a directory by the file's name is no file to read
        std::fs::create_dir(t.path().join("passwd")).unwrap();
        let a = Accounts::read_from(t.path());
        assert_eq!(a.of(5000), Account::Uid(5000));
        // nor a file root does not own
        std::fs::remove_dir(t.path().join("passwd")).unwrap();
        std::fs::write(t.path().join("passwd"), "x:x:5000:5000::/:/bin/sh\n").unwrap();
        rustix::fs::chown(
            t.path().join("passwd"),
            Some(rustix::fs::Uid::from_raw(65534)),
            None,
        )
        .unwrap();
        let a = Accounts::read_from(t.path());
        assert_eq!(
            a.of(100_000),
            Account::Uid(100_000),
            "a user's file names no account"
        );
    }

    #[test]
    fn a_fifo_by_the_files_name_is_not_waited_on() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("passwd");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let a = Accounts::read_from(t.path());
        assert_eq!(a.of(5000), Account::Uid(5000));
    }
}
