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
//! Root's own ranges are not root's: LXD and Incus (run by root) give
//! containers uids from root's /etc/subuid range (`root:1000000:1000000000`),
//! and a container's flood counted as root's would push off root's (the
//! operator's) scrape or events. Each 65,536 uids of such a range,
//! counted from its first ([`ROOT_BLOCK`]), are an account of their own
//! ([`Account::RootBlock`]): the map LXD and Incus give an isolated
//! container, so one container is one source; containers sharing a map
//! (LXD's default) share their uids too, and cannot be told apart. Not
//! one account for all of the range: one tenant's container would then
//! push off another's events. Not each uid its own: a container makes
//! its groups and sockets under any of its 65,536 uids, the very flood
//! the subordinate rule is for. Not the one unnamed account: a
//! container's flood would push off a `DynamicUser=` service's events.
//! A larger map (`security.idmap.size`) is a few blocks, a few sources.
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

use crate::model::account::{Account, NoAccounts, ROOT_BLOCK};
use crate::source::hier::Hier;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};
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
    /// Why /etc/passwd was not read (where it was tried): what
    /// [`Accounts::no_accounts`] says.
    unread: Option<NoAccounts>,
    /// Disjoint pieces of the subordinate ranges, by first: (first, end
    /// (exclusive), owner's uid, first uid of the range it is of). Where
    /// ranges overlap (the file is the administrator's), a uid is the
    /// range's that starts last, of those starting together the
    /// shortest's: the innermost of nested ranges.
    pieces: Vec<Piece>,
    read_at: Option<Instant>,
    /// Where the files are read from again (`None`: /etc).
    etc: Option<PathBuf>,
}

/// A piece of a subordinate range: (first, end (exclusive), owner's
/// uid, the range's first uid).
type Piece = (u32, u64, u32, u32);

impl Accounts {
    /// Reads the host's /etc/passwd and /etc/subuid.
    pub fn read() -> Self {
        Self::read_from(Path::new("/etc"))
    }

    /// Reads `passwd` and `subuid` in directory `etc`.
    pub fn read_from(etc: &Path) -> Self {
        let dir = Hier::open(etc).map_err(|e| e.to_string());
        let read = |name: &str| match &dir {
            Ok(d) => read_roots(d, name),
            Err(e) => Err(e.clone()),
        };
        let mut out = match read("passwd") {
            Ok(passwd) => Self::parse(&passwd, read("subuid").ok().as_deref()),
            Err(why) => Self {
                unread: Some(NoAccounts {
                    file: etc.join("passwd").display().to_string(),
                    why,
                }),
                ..Self::default()
            },
        };
        out.read_at = Some(Instant::now());
        out.etc = Some(etc.to_path_buf());
        out
    }

    /// Why no account names are known, where /etc/passwd was tried and
    /// could not be read: every uid then counts as itself.
    pub fn no_accounts(&self) -> Option<&NoAccounts> {
        self.unread.as_ref()
    }

    /// The table of an /etc/passwd text and an /etc/subuid text.
    fn parse(passwd: &str, subuid: Option<&str>) -> Self {
        let users = parse_passwd(passwd);
        let named = users.values().copied().collect();
        let ranges = subuid.map(|t| parse_subuid(t, &users, &named));
        Self {
            pieces: ranges.map(pieces).unwrap_or_default(),
            named: Some(named),
            unread: None,
            read_at: None,
            etc: None,
        }
    }

    /// Reads the files again where they are older than a minute.
    pub fn refresh(&mut self) {
        if self.read_at.is_none_or(|t| t.elapsed() >= FRESH_FOR) {
            let etc = self.etc.take().unwrap_or_else(|| PathBuf::from("/etc"));
            *self = Self::read_from(&etc);
        }
    }

    /// The account `uid` counts as. Root is always itself; a uid of
    /// root's own subordinate ranges is its block's
    /// ([`Account::RootBlock`]).
    pub fn of(&self, uid: u32) -> Account {
        let Some(named) = &self.named else {
            return Account::Uid(uid);
        };
        if uid == 0 || named.contains(&uid) {
            return Account::Uid(uid);
        }
        let i = self.pieces.partition_point(|&(first, ..)| first <= uid);
        match i.checked_sub(1).map(|i| self.pieces[i]) {
            Some((_, end, 0, base)) if u64::from(uid) < end => {
                Account::RootBlock(uid - (uid - base) % ROOT_BLOCK)
            }
            Some((_, end, owner, _)) if u64::from(uid) < end => Account::Uid(owner),
            _ => Account::Unnamed,
        }
    }
}

/// The text of file `name` in `dir`, where root owns it; why not where
/// it cannot be read by the hostile-file rules, is over [`MAX_FILE`] or
/// is not root's.
fn read_roots(dir: &Hier, name: &str) -> Result<String, String> {
    let (bytes, uid) = dir
        .read_owned(Path::new(name), MAX_FILE)
        .map_err(|e| e.to_string())?;
    if uid != 0 {
        return Err(format!("owned by uid {uid}, not root"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
/// the shortest), each piece with that range's first uid; adjacent
/// pieces of one range joined. A sweep over the ranges' ends with the
/// ranges open at each: O(n log n).
fn pieces(mut ranges: Vec<(u32, u64, u32)>) -> Vec<Piece> {
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
    let mut out: Vec<Piece> = Vec::new();
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
        let Some(&(base, _, owner)) = open.peek() else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.1 == at && (last.2, last.3) == (owner, base) => last.1 = to,
            // `at` is below u32::MAX + 1: it is a range's first or the
            // end of one that a later cut follows
            _ => out.push((u32::try_from(at).unwrap_or(u32::MAX), to, owner, base)),
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

    /// LXD's and Incus' line: root's range, handed out to containers.
    #[test]
    fn a_uid_of_roots_range_is_its_65536_block_not_root() {
        let a = accounts(PASSWD, "root:1000000:1000000000\nalice:100000:65536\n");
        assert_eq!(a.of(0), Account::Uid(0), "root itself");
        assert_eq!(a.of(1_000_000), Account::RootBlock(1_000_000));
        assert_eq!(
            a.of(1_065_535),
            Account::RootBlock(1_000_000),
            "one container's map"
        );
        assert_eq!(
            a.of(1_065_536),
            Account::RootBlock(1_065_536),
            "the next one's"
        );
        assert_eq!(a.of(1_131_071), Account::RootBlock(1_065_536));
        // blocks count from the range's first uid, not from uid 0
        assert_eq!(a.of(1_048_576), Account::RootBlock(1_000_000));
        assert_eq!(
            a.of(1_000_999_999),
            Account::RootBlock(1_000_000 + 15_258 * 65_536)
        );
        assert_eq!(a.of(1_001_000_000), Account::Unnamed, "past the range");
        assert_eq!(
            a.of(100_000),
            Account::Uid(1000),
            "a user's range is still the user's"
        );
        // given by uid, and a range of root's cut by a user's inside it
        let a = accounts(PASSWD, "0:200000:262144\nbob:265536:10\n");
        assert_eq!(a.of(265_535), Account::RootBlock(200_000));
        assert_eq!(a.of(265_536), Account::Uid(1001));
        assert_eq!(
            a.of(265_546),
            Account::RootBlock(265_536),
            "aligned past the cut"
        );
        assert_eq!(a.of(462_143), Account::RootBlock(396_608));
        // a named uid in root's range is itself
        let a = accounts(
            &format!("{PASSWD}lxd:x:1000005:1000005::/:/bin/false\n"),
            "root:1000000:65536\n",
        );
        assert_eq!(a.of(1_000_005), Account::Uid(1_000_005));
        assert_eq!(a.of(1_000_006), Account::RootBlock(1_000_000));
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
    /// starting last, of those the shortest: its owner and first uid.
    fn holder(ranges: &[(u32, u64, u32)], uid: u32) -> Option<(u32, u32)> {
        ranges
            .iter()
            .filter(|&&(first, end, _)| first <= uid && u64::from(uid) < end)
            .max_by_key(|&&(first, end, owner)| (first, Reverse(end), owner))
            .map(|&(first, _, owner)| (owner, first))
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
                let i = p.partition_point(|&(first, ..)| first <= uid);
                let got = i
                    .checked_sub(1)
                    .map(|i| p[i])
                    .filter(|&(_, end, ..)| u64::from(uid) < end)
                    .map(|(_, _, o, base)| (o, base));
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
        let why = a.no_accounts().expect("said").to_string();
        assert!(why.contains("none/passwd not read (No such file"), "{why}");
        // a directory by the file's name is no file to read
        std::fs::create_dir(t.path().join("passwd")).unwrap();
        let a = Accounts::read_from(t.path());
        assert_eq!(a.of(5000), Account::Uid(5000));
        let why = a.no_accounts().expect("said").to_string();
        assert!(why.contains("(a directory, not a regular file"), "{why}");
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
        let why = a.no_accounts().expect("said").to_string();
        assert!(why.contains("(owned by uid 65534, not root)"), "{why}");
        // too big to read
        std::fs::remove_file(t.path().join("passwd")).unwrap();
        let f = std::fs::File::create(t.path().join("passwd")).unwrap();
        f.set_len(MAX_FILE as u64 + 1).unwrap();
        let a = Accounts::read_from(t.path());
        let why = a.no_accounts().expect("said").to_string();
        assert!(why.contains("(file larger than 16384 KiB"), "{why}");
        // and nothing said where the file is read
        std::fs::remove_file(t.path().join("passwd")).unwrap();
        std::fs::write(t.path().join("passwd"), PASSWD).unwrap();
        assert_eq!(Accounts::read_from(t.path()).no_accounts(), None);
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
        let why = a.no_accounts().expect("said").to_string();
        assert!(why.contains("(a FIFO, not a regular file"), "{why}");
    }
}
