//! The words of the writeback story (`model::host::writeback`): why a buffered
//! write finished at memory speed while the disk keeps writing at the
//! limit. The IO page of the detail pane says them; styling is the view's.

use crate::model::host::writeback::{Basis, GroupDirty, HostWriteback, Story, Thresholds};
use crate::render::units::{bytes_short, MISSING};

/// What the group's IO limit does to buffered writes, in one paragraph
/// (`None`: the group has no IO limit, nothing to explain).
pub fn story_words(s: Story) -> Option<&'static str> {
    match s {
        Story::BlkioDirectOnly => Some(
            "blkio holds only the IO this group's tasks submit themselves (reads, direct \
             writes): buffered writes are NOT held by this limit. A buffered write() lands \
             in the page cache and returns at memory speed; the \
             kernel's flusher threads write the dirty pages to disk later, outside this \
             group, and that IO is counted to the root group, not here.",
        ),
        Story::CgroupWriteback => Some(
            "buffered writes ARE held here: io and memory are both on cgroup v2 (cgroup \
             writeback), so the flusher's IO for this group's dirty pages is charged to \
             the group and drains at the io.max rate (on filesystems with cgroup \
             writeback: ext4, xfs, btrfs). Its dirty pages are also held to the same \
             ratio of the memory the group may use.",
        ),
        Story::NoWritebackAccounting => Some(
            "io.max holds only the IO this group's tasks submit themselves here (reads, \
             direct writes): memory is a cgroup v1 controller on this host, so there is no \
             cgroup writeback. Buffered writes are written later by \
             the kernel's flusher threads as the root group's IO, not held by this limit.",
        ),
        Story::NoLimit => None,
    }
}

/// The group's dirty and writeback pages, and how fast they change
/// (`drain`, bytes per second, negative while they drain) beside the
/// write limit that drains them (`wbps`, where one is set).
pub fn group_line(g: Option<GroupDirty>, drain: Option<f64>, wbps: Option<u64>) -> String {
    let Some(g) = g else {
        return format!("this group: dirty {MISSING}, writeback {MISSING} (no memory.stat read)");
    };
    let mut s = format!(
        "this group{}: dirty {}, writeback {}",
        if g.subtree { "" } else { " itself" },
        bytes_short(g.dirty),
        bytes_short(g.writeback)
    );
    match drain {
        Some(r) if r < 0.0 => s.push_str(&format!(", draining {}/s", bytes_short(-r as u64))),
        Some(r) if r > 0.0 => s.push_str(&format!(", growing {}/s", bytes_short(r as u64))),
        Some(_) => s.push_str(", steady"),
        None => {}
    }
    if let Some(w) = wbps {
        s.push_str(&format!(" (write limit {}/s)", bytes_short(w)));
    }
    s
}

fn basis_words(b: Basis, dirtyable: Option<u64>, ratio_name: &str, bytes_name: &str) -> String {
    match b {
        Basis::Ratio(p) => match dirtyable {
            Some(d) => format!("{ratio_name} {p}% of ~{} dirtyable", bytes_short(d)),
            None => format!("{ratio_name} {p}%"),
        },
        Basis::Bytes => bytes_name.to_owned(),
        Basis::HalfOfLimit => format!("half the limit: {ratio_name}/{bytes_name} was not below it"),
    }
}

fn centisecs(c: Option<u64>) -> String {
    c.map_or_else(
        || MISSING.to_owned(),
        |c| {
            if c % 100 == 0 {
                format!("{} s", c / 100)
            } else {
                format!("{:.2} s", c as f64 / 100.0)
            }
        },
    )
}

/// The host's writeback settings and the limits they make, as
/// paragraphs: when a writer is slowed and blocked, when the flusher
/// starts, how old a dirty page may get, the machine's dirty pages now,
/// and where the limits' figures come from.
pub fn host_paragraphs(h: &HostWriteback) -> Vec<String> {
    let mut out = Vec::new();
    let dirtyable = h.dirtyable();
    match h.thresholds() {
        Some(t) => out.extend(limits_words(&t, dirtyable)),
        None => out.push("dirty limits unknown (vm.dirty_* unreadable)".to_owned()),
    }
    let expire = centisecs(h.vm.dirty_expire_centisecs);
    out.push(match h.vm.dirty_writeback_centisecs {
        Some(0) => format!(
            "dirty pages older than {expire} (dirty_expire_centisecs) wait for the limits: \
             periodic flushing is off (dirty_writeback_centisecs 0)"
        ),
        w => format!(
            "dirty pages older than {expire} (dirty_expire_centisecs) are written at the \
             flusher's next wake, every {} (dirty_writeback_centisecs)",
            centisecs(w)
        ),
    });
    out.push(format!(
        "machine now: Dirty {}, Writeback {}",
        h.dirty.map_or_else(|| MISSING.to_owned(), bytes_short),
        h.writeback.map_or_else(|| MISSING.to_owned(), bytes_short)
    ));
    out.push(if h.thresholds_exact() {
        "(limits: the kernel's own figures from /proc/vmstat; a real-time task may go a quarter over)"
            .to_owned()
    } else {
        "(limits computed from ~dirtyable = MemFree + Active(file) + Inactive(file): \
         the kernel also keeps a reserve out, so its limits are a little lower)"
            .to_owned()
    });
    out
}

fn limits_words(t: &Thresholds, dirtyable: Option<u64>) -> Vec<String> {
    vec![
        format!(
            "a writer may dirty up to {} ({}) before it is blocked; it is slowed to the \
             disk's pace from {}",
            bytes_short(t.limit),
            basis_words(t.limit_basis, dirtyable, "dirty_ratio", "dirty_bytes"),
            bytes_short(t.freerun),
        ),
        format!(
            "the flusher starts writing in the background at {} ({})",
            bytes_short(t.background),
            basis_words(
                t.background_basis,
                dirtyable,
                "dirty_background_ratio",
                "dirty_background_bytes"
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::host::writeback::VmDirty;

    #[test]
    fn the_host_in_words() {
        let h = HostWriteback {
            vm: VmDirty {
                dirty_ratio: Some(20),
                dirty_background_ratio: Some(10),
                dirty_bytes: Some(0),
                dirty_background_bytes: Some(0),
                dirty_expire_centisecs: Some(3000),
                dirty_writeback_centisecs: Some(500),
            },
            mem_free: Some(1 << 30),
            active_file: Some(1 << 30),
            inactive_file: Some(2 << 30),
            dirty: Some(300 << 20),
            writeback: Some(0),
            kernel_limit_pages: None,
            kernel_background_pages: None,
            page_size: 4096,
        };
        let p = host_paragraphs(&h);
        assert_eq!(
            p[0],
            "a writer may dirty up to 819M (dirty_ratio 20% of ~4.0G dirtyable) before it \
             is blocked; it is slowed to the disk's pace from 614M"
        );
        assert_eq!(
            p[1],
            "the flusher starts writing in the background at 409M (dirty_background_ratio \
             10% of ~4.0G dirtyable)"
        );
        assert!(p[2].starts_with("dirty pages older than 30 s"), "{}", p[2]);
        assert!(
            p[2].ends_with("every 5 s (dirty_writeback_centisecs)"),
            "{}",
            p[2]
        );
        assert_eq!(p[3], "machine now: Dirty 300M, Writeback 0");
        assert!(p[4].contains("a little lower"));
    }

    #[test]
    fn the_group_in_words() {
        let g = GroupDirty {
            dirty: 36 << 20,
            writeback: 4 << 20,
            subtree: true,
        };
        assert_eq!(
            group_line(Some(g), Some(-10.0 * 1_048_576.0), Some(10 << 20)),
            "this group: dirty 36.0M, writeback 4.0M, draining 10.0M/s (write limit 10.0M/s)"
        );
        let own = GroupDirty {
            subtree: false,
            ..g
        };
        assert_eq!(
            group_line(Some(own), Some(2048.0), None),
            "this group itself: dirty 36.0M, writeback 4.0M, growing 2.0K/s"
        );
        assert!(group_line(None, None, None).contains("no memory.stat"));
        assert!(story_words(Story::NoLimit).is_none());
        assert!(story_words(Story::BlkioDirectOnly)
            .unwrap()
            .contains("NOT held"));
    }
}
