//! Whose account a uid counts as, where a flood's sources are counted
//! together (`cgtop serve`'s connections, the events list): the table
//! that maps a uid to it is read by `source::accounts`.

/// The account a uid counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Account {
    /// A named account's uid: the uid itself where /etc/passwd names it,
    /// or the owner of the /etc/subuid range that holds it.
    Uid(u32),
    /// A uid that no account names nor holds (a systemd `DynamicUser=`
    /// service's, an LDAP or sssd user's): every such uid one account.
    Unnamed,
}
