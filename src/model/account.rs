//! Whose account a uid counts as, where a flood's sources are counted
//! together (`cgtop serve`'s connections, the events list): the table
//! that maps a uid to it is read by `source::accounts`.

/// The account a uid counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Account {
    /// A named account's uid: the uid itself where /etc/passwd names it,
    /// or the owner of the /etc/subuid range that holds it (never root:
    /// [`Account::RootBlock`]).
    Uid(u32),
    /// A uid of one of root's own /etc/subuid ranges, which root-run
    /// container managers (LXD, Incus) hand out to containers: not the
    /// operator's. Each [`ROOT_BLOCK`] uids of a range, counted from its
    /// first, are one account, named by their first uid.
    RootBlock(u32),
    /// A uid that no account names nor holds (a systemd `DynamicUser=`
    /// service's, an LDAP or sssd user's): every such uid one account.
    Unnamed,
}

/// The uids of one account in root's subordinate ranges: a container's
/// map, as LXD and Incus give each isolated container (and as
/// useradd gives each user).
pub const ROOT_BLOCK: u32 = 65_536;

/// Why no account names are known, so that every uid counts as itself
/// (the safe fallback: nobody's flood is counted as another's, but a
/// user's subordinate ids are each an owner of their own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAccounts {
    /// The file that could not be used ("/etc/passwd").
    pub file: String,
    /// Why, in words ("No such file or directory", "owned by uid 1000,
    /// not root").
    pub why: String,
}

impl std::fmt::Display for NoAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "owners counted by uid, not account: {} not read ({}); a user's subordinate ids each count as an owner of their own (make it a regular file of root's, at most 16 MiB)",
            self.file, self.why
        )
    }
}
