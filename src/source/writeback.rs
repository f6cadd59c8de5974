//! The host's writeback settings and state: the six /proc/sys/vm/dirty_*
//! sysctls, /proc/vmstat's dirty thresholds, and (from the /proc/meminfo
//! text the collector has read already, parsed by `model::host`) the
//! figures the limits are made from. The maths is `model::host::writeback`'s.
//!
//! Reads beneath the /proc directory it is given (a fixture in tests),
//! each file capped like the collector's other /proc reads.
//!
//! Must not depend on: `app`, `ui`, the terminal.

use super::collector::read_small;
use crate::model::host::writeback::{HostWriteback, VmDirty};
use std::path::Path;

/// The `vm.dirty_*` sysctls from `proc_dir`/sys/vm; one that is absent
/// or not a number is `None`.
pub fn read_vm_dirty(proc_dir: &Path) -> VmDirty {
    let vm = proc_dir.join("sys/vm");
    let num = |name: &str| read_small(&vm.join(name)).and_then(|t| t.trim().parse().ok());
    VmDirty {
        dirty_ratio: num("dirty_ratio"),
        dirty_background_ratio: num("dirty_background_ratio"),
        dirty_bytes: num("dirty_bytes"),
        dirty_background_bytes: num("dirty_background_bytes"),
        dirty_expire_centisecs: num("dirty_expire_centisecs"),
        dirty_writeback_centisecs: num("dirty_writeback_centisecs"),
    }
}

/// The host's writeback state: the sysctls and /proc/vmstat from
/// `proc_dir`, the memory figures from `meminfo` (its text, read by the
/// caller once for every use), with this machine's page size.
pub fn read_host_writeback(proc_dir: &Path, meminfo: &str) -> HostWriteback {
    let vmstat = read_small(&proc_dir.join("vmstat")).unwrap_or_default();
    HostWriteback::from_texts(
        read_vm_dirty(proc_dir),
        meminfo,
        &vmstat,
        procfs::page_size(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_proc_and_what_is_missing() {
        let d = tempfile::tempdir().unwrap();
        let vm = d.path().join("sys/vm");
        std::fs::create_dir_all(&vm).unwrap();
        for (f, v) in [
            ("dirty_ratio", "0\n"),
            ("dirty_bytes", "268435456\n"),
            ("dirty_background_ratio", "10\n"),
            ("dirty_background_bytes", "junk\n"),
            ("dirty_expire_centisecs", "3000\n"),
        ] {
            std::fs::write(vm.join(f), v).unwrap();
        }
        let got = read_vm_dirty(d.path());
        assert_eq!(got.dirty_ratio, Some(0));
        assert_eq!(got.dirty_bytes, Some(268_435_456));
        assert_eq!(got.dirty_background_ratio, Some(10));
        assert_eq!(got.dirty_background_bytes, None);
        assert_eq!(got.dirty_expire_centisecs, Some(3000));
        assert_eq!(got.dirty_writeback_centisecs, None);
        // no vmstat: no kernel figures, and no limits without a setting
        let h = read_host_writeback(d.path(), "MemFree: 4 kB\n");
        assert_eq!(h.kernel_limit_pages, None);
        assert_eq!(h.mem_free, Some(4096));
        assert_eq!(h.thresholds(), None);
    }
}
