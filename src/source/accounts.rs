//! Whose account a uid is, for counting a flood's sources together:
//! `cgtop serve`'s connections (run::serve's `Owner`) and the events
//! list's owners (the watcher, [`crate::source::events`], gives each
//! event its group owner's account).
//!
//! A user with subordinate ids (/etc/subuid: rootless podman's 65,536 by
//! default, used through `newuidmap` without any privilege on the host)
//! can make each of its sockets under another uid, and own each of its
//! delegated groups under another uid (`chown` in its user namespace).
//! Counted by uid, every such owner holds one request or a few events,
//! and root's lone scrape (the newest) or root's events (the most) are
//! what goes. So a uid counts as the account it belongs to
//! ([`Account`]): itself where /etc/passwd names it; the user whose
//! /etc/subuid range holds it; otherwise one account of every uid no
//! account names.
//!
//! Only the files are read, never NSS (`getpwuid` may ask a directory
//! server over the network, inside the serving loop): on a host whose
//! users come from LDAP or sssd, their uids count as that one unnamed
//! account. Both are read by the hostile-file rules all the same
//! ([`Hier::read_owned`]: no symlink, a regular file, no wait, a size
//! cap), only where root owns them, and again at most once a minute.
//!
//! A host with 60,000 accounts (a university's login server) has as
//! many /etc/subuid lines: the table is built in O(n log n) (owners by a
//! name -> uid map, the ranges cut into disjoint pieces) and a uid looked
//! up in O(log n) (BENCHMARKS.md, "`cgtop serve` under a flood from a
//! user's subordinate ids").

use crate::model::account::Account;
use crate::source::hier::Hier;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// At most this much of each file is read (a host with 100,000 local
/// accounts has a 6 MB /etc/passwd); a larger one is not read.
const MAX_FILE: usize = 16 << 20;

/// The files are read again after this long.
const FRESH_FOR: Duration = Duration::from_secs(60);

/// The accounts of /etc/passwd and the ranges of /etc/subuid.
#[derive(Debug, Default)]
pub struct Accounts {
    /// None: /etc/passwd could not be read; every uid counts as itself
    /// (as before there was this table).
    named: Option<HashSet<u32>>,
    /// Disjoint pieces of the subordinate ranges, by first: (first, end
    /// (exclusive), owner's uid). Where ranges overlap (the file is the
    /// administrator's), a uid is the range's that starts last, of those
    /// starting together the shortest's: the innermost of nested ranges.
    pieces: Vec<(u32, u64, u32)>,
    read_at: Option<Instant>,
}

impl Accounts {
    /// Reads the host's /etc/passwd and /etc/subuid.
    pub fn read() -> Self {
        Self::read_from(Path::new("/etc"))
    }

    /// Reads `passwd` and `subuid` in directory `etc`.
    pub fn read_from(etc: &Path) -> Self {
        let dir = Hier::open(etc).ok();
        let read = |name: &str| read_roots(dir.as_ref()?, name);
        let mut out = match read("passwd") {
            Some(passwd) => Self::parse(&passwd, read("subuid").as_deref()),
            None => Self::default(),
        };
        out.read_at = Some(Instant::now());
        out
    }

    /// The table of an /etc/passwd text and an /etc/subuid text.
    fn parse(passwd: &str, subuid: Option<&str>) -> Self {
        let users = parse_passwd(passwd);
        let named = users.values().copied().collect();
        let ranges = subuid.map(|t| parse_subuid(t, &users, &named));
        Self {
            pieces: ranges.map(pieces).unwrap_or_default(),
            named: Some(named),
            read_at: None,
        }
    }

    /// Reads the files again where they are older than a minute.
    pub fn refresh(&mut self) {
        if self.read_at.is_none_or(|t| t.elapsed() >= FRESH_FOR) {
            *self = Self::read();
        }
    }

    /// The account `uid` counts as. Root is always itself.
    pub fn of(&self, uid: u32) -> Account {
        let Some(named) = &self.named else {
            return Account::Uid(uid);
        };
        if uid == 0 || named.contains(&uid) {
            return Account::Uid(uid);
        }
        let i = self.pieces.partition_point(|&(first, _, _)| first <= uid);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((_, end, owner)) if u64::from(uid) < end => Account::Uid(owner),
            _ => Account::Unnamed,
        }
    }
}

/// The text of file `name` in `dir`, where root owns it; None where it
/// cannot be read by the hostile-file rules or is over [`MAX_FILE`].
fn read_roots(dir: &Hier, name: &str) -> Option<String> {
    let (bytes, uid) = dir.read_owned(Path::new(name), MAX_FILE).ok()?;
    (uid == 0).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// name -> uid of the lines of an /etc/passwd text (a name given twice:
/// its first line, as the C library's lookup finds).
fn parse_passwd(text: &str) -> HashMap<&str, u32> {
    let mut out = HashMap::new();
    for l in text.lines() {
        let mut f = l.split(':');
        let (Some(name), Some(uid)) = (f.next(), f.nth(1).and_then(|u| u.parse().ok())) else {
            continue;
        };
        if !name.is_empty() {
            out.entry(name).or_insert(uid);
        }
    }
    out
}

/// The ranges of an /etc/subuid text (`owner:first:count`, the owner a
/// name or a uid) as (first, end (exclusive), owner's uid); a range
/// whose owner no account names is left out (its uids are unnamed).
fn parse_subuid(
    text: &str,
    users: &HashMap<&str, u32>,
    named: &HashSet<u32>,
) -> Vec<(u32, u64, u32)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let owner = f.next()?;
            let first: u32 = f.next()?.trim().parse().ok()?;
            let count: u32 = f.next()?.trim().parse().ok()?;
            let uid = users.get(owner).copied().or_else(|| {
                let uid = owner.parse().ok()?;
                named.contains(&uid).then_some(uid)
            })?;
            (count > 0).then_some((first, u64::from(first) + u64::from(count), uid))
        })
        .collect()
}

/// `ranges` cut into disjoint pieces, by first, each uid the owner's of
/// the range holding it that starts last (of those starting together,
/// the shortest); adjacent pieces of one owner joined. A sweep over the
/// ranges' ends with the ranges open at each: O(n log n).
fn pieces(mut ranges: Vec<(u32, u64, u32)>) -> Vec<(u32, u64, u32)> {
    ranges.sort_unstable();
    let mut cuts: Vec<u64> = ranges
        .iter()
        .flat_map(|&(first, end, _)| [u64::from(first), end])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    // the open ranges, the one that wins on top: (first, shortest, owner)
    let mut open: BinaryHeap<(u32, Reverse<u64>, u32)> = BinaryHeap::new();
    let mut next = 0;
    let mut out: Vec<(u32, u64, u32)> = Vec::new();
    for w in cuts.windows(2) {
        let (at, to) = (w[0], w[1]);
        while let Some(&(first, end, owner)) = ranges.get(next) {
            if u64::from(first) > at {
                break;
            }
            open.push((first, Reverse(end), owner));
            next += 1;
        }
        // a range ended before `at` is dropped once it is on top (one
        // below the top loses to it)
        while open.peek().is_some_and(|&(_, Reverse(end), _)| end <= at) {
            open.pop();
        }
        let Some(&(_, _, owner)) = open.peek() else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.1 == at && last.2 == owner => last.1 = to,
            // `at` is below u32::MAX + 1: it is a range's first or the
            // end of one that a later cut follows
            _ => out.push((u32::try_from(at).unwrap_or(u32::MAX), to, owner)),
        }
    }
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
        assert!(a.pieces.is_empty(), "{:?}", a.pieces);
        assert_eq!(a.of(200_000), Account::Unnamed);
        assert_eq!(a.of(300_000), Account::Unnamed);
    }

    #[test]
    fn of_overlapping_ranges_the_one_starting_last_holds_a_uid() {
        let a = accounts(PASSWD, "alice:100000:1000\nbob:100500:10\n");
        assert_eq!(a.of(100_505), Account::Uid(1001), "the inner range");
        assert_eq!(a.of(100_900), Account::Uid(1000), "the outer past it");
        assert_eq!(a.of(100_499), Account::Uid(1000));
        // crossing: the later start holds the common part
        let a = accounts(PASSWD, "bob:200050:100\nalice:200000:100\n");
        assert_eq!(a.of(200_049), Account::Uid(1000));
        assert_eq!(a.of(200_050), Account::Uid(1001));
        assert_eq!(a.of(200_149), Account::Uid(1001));
        assert_eq!(a.of(200_150), Account::Unnamed);
        // starting together: the shorter holds its part
        let a = accounts(PASSWD, "alice:300000:100\nbob:300000:10\n");
        assert_eq!(a.of(300_009), Account::Uid(1001));
        assert_eq!(a.of(300_010), Account::Uid(1000));
        // a range up to the last uid
        let a = accounts(PASSWD, &format!("alice:{}:10\n", u32::MAX - 3));
        assert_eq!(a.of(u32::MAX), Account::Uid(1000));
        assert_eq!(a.of(u32::MAX - 4), Account::Unnamed);
    }

    /// The rule written plainly: of the ranges holding `uid`, the one
    /// starting last, of those the shortest.
    fn holder(ranges: &[(u32, u64, u32)], uid: u32) -> Option<u32> {
        ranges
            .iter()
            .filter(|&&(first, end, _)| first <= uid && u64::from(uid) < end)
            .max_by_key(|&&(first, end, owner)| (first, Reverse(end), owner))
            .map(|&(_, _, owner)| owner)
    }

    proptest::proptest! {
        #[test]
        fn the_pieces_give_each_uid_the_rules_holder(
            ranges in proptest::collection::vec((0u32..60, 1u64..30, 1u32..4), 0..12),
        ) {
            let ranges: Vec<(u32, u64, u32)> =
                ranges.into_iter().map(|(f, n, o)| (f, u64::from(f) + n, o)).collect();
            let p = pieces(ranges.clone());
            for w in p.windows(2) {
                proptest::prop_assert!(w[0].1 <= u64::from(w[1].0), "disjoint, in order: {:?}", p);
            }
            for uid in 0..100 {
                let i = p.partition_point(|&(first, _, _)| first <= uid);
                let got = i
                    .checked_sub(1)
                    .map(|i| p[i])
                    .filter(|&(_, end, _)| u64::from(uid) < end)
                    .map(|(_, _, o)| o);
                proptest::prop_assert_eq!(got, holder(&ranges, uid), "uid {}: {:?}", uid, p);
            }
        }
    }

    /// A large host's files (60,000 accounts, each with the range
    /// useradd gives): the table holds a piece per range, and uids are
    /// their users'. What it costs is in BENCHMARKS.md (built in
    /// O(n log n), looked up in O(log n): the square of the old table).
    #[test]
    fn a_60000_account_hosts_files_give_each_subordinate_uid_its_user() {
        const N: u32 = 60_000;
        let mut passwd = String::from("root:x:0:0:root:/root:/bin/bash\n");
        let mut subuid = String::new();
        for i in 0..N {
            let uid = 10_000 + i;
            passwd.push_str(&format!("u{i}:x:{uid}:{uid}::/home/u{i}:/bin/bash\n"));
            subuid.push_str(&format!("u{i}:{}:65536\n", 100_000 + i * 65_536));
        }
        let a = Accounts::parse(&passwd, Some(&subuid));
        assert_eq!(a.pieces.len(), N as usize);
        for k in 0..1000u32 {
            let i = k * 59 % N;
            let uid = 100_000 + i * 65_536 + k * 61 % 65_536;
            assert_eq!(a.of(uid), Account::Uid(10_000 + i), "uid {uid}");
        }
        assert_eq!(a.of(10_000 + N - 1), Account::Uid(10_000 + N - 1));
        assert_eq!(a.of(99_999), Account::Unnamed);
        assert_eq!(a.of(100_000 + N * 65_536), Account::Unnamed);
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
