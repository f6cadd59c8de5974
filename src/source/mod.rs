//! The only code that touches `/sys` and `/proc`: finding the hierarchy,
//! scanning it, reading one group in full, listing block devices and
//! processes, the collector thread, and performing writes.
//!
//! Must not depend on: `app`, `ui`, the terminal.

pub mod actionlog;
pub mod collector;
pub mod config;
pub mod devices;
pub mod events;
pub mod hier;
pub mod identity;
pub mod mount;
pub mod procs;
pub mod read;
pub mod record;
pub mod safety;
pub mod scan;
pub mod systemctl;
pub mod writeback;
pub mod writer;
