//! PURE: time: the figures' history in memory ([`timeline`]), events that
//! outlive their group ([`events`]) and the recording format of `cgtop
//! record` ([`record`]).

pub mod events;
pub mod record;
pub mod timeline;
