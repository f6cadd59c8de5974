//! PURE: an op in words for the operator: one line for a confirmation or
//! the status line ([`Op::describe`], also its `Display`), the hierarchy
//! named where a host has several ([`Op::describe_in`], [`hier_words`],
//! [`hiers_words`]), and one sentence per action for ops made in each
//! hierarchy that holds a group ([`sentences`]).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::host::layout::{HierId, Layout};
use crate::model::tree::text::escape_str;
use crate::model::write::{Op, WriteKind};
use std::fmt;

impl Op {
    /// One line for a confirmation prompt or the status line; a write
    /// through systemd says so.
    pub fn describe(&self) -> String {
        let s = self.describe_what();
        if self.via_systemd() {
            format!("{s} via systemd")
        } else {
            s
        }
    }

    fn describe_what(&self) -> String {
        let w = match self {
            Self::CreateGroup(p, ..) => return format!("create the group {}", p.display()),
            Self::RemoveGroup(p, _, _) => return format!("remove the group {}", p.display()),
            Self::Write(w) => w,
        };
        let g = w.group.display();
        let (file, contents) = (escape_str(&w.file), escape_str(&w.contents));
        match &w.kind {
            WriteKind::Kill => format!("kill every process in {g} and below"),
            WriteKind::Freeze(true) => format!("freeze {g} and everything below it"),
            WriteKind::Freeze(false) => format!("thaw {g}"),
            WriteKind::FreezerState(true) => {
                format!("freeze {g} and everything below it (write {contents} to {file})")
            }
            WriteKind::FreezerState(false) => format!("thaw {g} (write {contents} to {file})"),
            WriteKind::BlkioThrottle { .. } => format!("write {contents} to {file} of {g}"),
            WriteKind::MoveProcess {
                pid,
                threads: false,
            } => format!("move process {pid} into {g}"),
            WriteKind::MoveProcess { pid, threads: true } => {
                format!("move thread {pid} into {g}")
            }
            WriteKind::SubtreeControl(_) => {
                format!("change the controllers {g} hands to its children: {contents}")
            }
            _ => format!("set {file} of {g} to {contents}"),
        }
    }
}

impl Op {
    /// [`Self::describe`] with the hierarchy named where there is more than
    /// one: "write 8:0 1048576 to blkio.throttle.write_bps_device of /a in
    /// the v1 blkio hierarchy".
    pub fn describe_in(&self, layout: &Layout) -> String {
        let mut s = self.describe();
        if let Some(w) = hier_words(layout, self.hier()) {
            s.push_str(" in ");
            s.push_str(&w);
        }
        s
    }
}

/// What `ops` do, one sentence per operator action: the ops that differ
/// only in their hierarchy (a move, a mkdir or an rmdir made in each
/// hierarchy that holds the group) are said once, with the hierarchies
/// they are made in, "move process 7 into /a in cgroup2 and the v1
/// cpu,cpuacct, memory hierarchies"; in the order each was first done.
/// Without v1 hierarchies no hierarchy is named.
pub fn sentences<'a>(ops: impl IntoIterator<Item = &'a Op>, layout: &Layout) -> Vec<String> {
    let mut said: Vec<(String, Vec<HierId>)> = Vec::new();
    for op in ops {
        let s = op.describe();
        match said.iter_mut().find(|(t, _)| *t == s) {
            Some((_, hs)) if !hs.contains(&op.hier()) => hs.push(op.hier()),
            Some(_) => {}
            None => said.push((s, vec![op.hier()])),
        }
    }
    said.into_iter()
        .map(|(s, mut hs)| {
            // named in the layout's order, whatever order they were made in
            hs.sort();
            if layout.v1.is_empty() {
                s
            } else {
                format!("{s} in {}", hiers_words(layout, &hs))
            }
        })
        .collect()
}

/// "the v1 blkio hierarchy", "cgroup2": where a layout has more than one
/// hierarchy; `None` on a host with only one.
pub fn hier_words(layout: &Layout, h: HierId) -> Option<String> {
    if layout.v1.is_empty() {
        return None;
    }
    Some(match h {
        HierId::V2 => "cgroup2".to_owned(),
        HierId::V1(i) => match layout.v1.get(i) {
            Some(m) => format!("the v1 {} hierarchy", m.label()),
            None => "a v1 hierarchy".to_owned(),
        },
    })
}

/// The hierarchies of a layout by name, joined: "cgroup2 and the v1
/// blkio, cpu, memory hierarchies".
pub fn hiers_words(layout: &Layout, hs: &[HierId]) -> String {
    let v2 = hs.contains(&HierId::V2).then(|| "cgroup2".to_owned());
    let v1: Vec<String> = hs
        .iter()
        .filter_map(|h| match h {
            HierId::V1(i) => layout
                .v1
                .get(*i)
                .map(crate::model::host::layout::V1Mount::label),
            HierId::V2 => None,
        })
        .collect();
    let v1 = match v1.len() {
        0 => None,
        1 => Some(format!("the v1 {} hierarchy", v1[0])),
        _ => Some(format!("the v1 {} hierarchies", v1.join(", "))),
    };
    match (v2, v1) {
        (Some(a), Some(b)) => format!("{a} and {b}"),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => "no hierarchy".to_owned(),
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::Limit;
    use crate::model::write::input::{ControllerChange, MemoryFile};
    use crate::model::write::test_ops::{g, SDA};
    use crate::model::write::{
        create_group, freeze, kill, move_process, remove_group, set_blkio_throttle,
        set_memory_limit, set_subtree_control, Throttle,
    };

    #[test]
    fn descriptions_name_the_hierarchy_where_there_are_several() {
        use crate::model::host::layout::V1Mount;
        let layout = Layout {
            v2: Some("/sys/fs/cgroup/unified".into()),
            v1: vec![V1Mount {
                dir: "/sys/fs/cgroup/blkio".into(),
                controllers: vec!["blkio".into()],
                name: None,
            }],
        };
        let op = set_blkio_throttle(
            &g("a"),
            HierId::V1(0),
            Throttle::WriteBps,
            SDA,
            Some(1 << 20),
        );
        assert_eq!(
            op.describe_in(&layout),
            "write 8:0 1048576 to blkio.throttle.write_bps_device of /a in the v1 blkio hierarchy"
        );
        assert_eq!(
            freeze(&g("a"), true).describe_in(&layout),
            "freeze /a and everything below it in cgroup2"
        );
        // one hierarchy: nothing to say
        assert_eq!(
            freeze(&g("a"), true).describe_in(&Layout::default()),
            "freeze /a and everything below it"
        );
        assert_eq!(
            hiers_words(&layout, &[HierId::V2, HierId::V1(0)]),
            "cgroup2 and the v1 blkio hierarchy"
        );
    }

    #[test]
    fn descriptions() {
        let a = g("a/b");
        assert_eq!(create_group(&a).describe(), "create the group /a/b");
        assert_eq!(remove_group(&a).describe(), "remove the group /a/b");
        assert_eq!(kill(&a).describe(), "kill every process in /a/b and below");
        assert_eq!(
            freeze(&a, true).to_string(),
            "freeze /a/b and everything below it"
        );
        assert_eq!(freeze(&a, false).describe(), "thaw /a/b");
        assert_eq!(
            move_process(7, &a, false).describe(),
            "move process 7 into /a/b"
        );
        assert_eq!(
            move_process(7, &a, true).describe(),
            "move thread 7 into /a/b"
        );
        assert_eq!(
            set_subtree_control(&a, &[ControllerChange::enable("cpu")]).describe(),
            "change the controllers /a/b hands to its children: +cpu"
        );
        assert_eq!(
            set_memory_limit(&a, MemoryFile::Max, Limit::Max).describe(),
            "set memory.max of /a/b to max"
        );
    }
}
