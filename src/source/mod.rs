//! The only code that touches `/sys` and `/proc`: finding the hierarchy,
//! scanning it, reading one group in full, listing block devices and
//! processes, the collector thread, and performing writes.
//!
//! Must not depend on: `app`, `ui`, the terminal.

pub mod accounts;
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

/// Test support shared by the source layer's unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    /// Copies a directory tree (a fixture) to `to`, made if missing.
    pub fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_tree(&e.path(), &dst);
            } else {
                std::fs::copy(e.path(), dst).unwrap();
            }
        }
    }
}
