//! PURE: the files cgtop writes for other programs or reads from people:
//! the action log's records as a shell script ([`script`]) and the
//! settings file ([`config`]).

pub mod config;
pub mod script;
