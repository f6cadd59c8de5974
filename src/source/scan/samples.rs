//! Where a reading pass puts each group's figures ([`Samples`]): whole
//! samples, or a part of a merge ([`PartOut`]).

use crate::cgroupfs::CgroupType;
use crate::model::tree::part::{Part, PartGroup};
use crate::model::{GroupPath, GroupSample, HotStats};

/// A group's sample, or a part's group: its path and its directory's
/// inode.
pub(super) trait Keyed {
    fn key(&self) -> (&GroupPath, u64);
}

impl Keyed for GroupSample {
    fn key(&self) -> (&GroupPath, u64) {
        (&self.path, self.inode)
    }
}

impl Keyed for PartGroup {
    fn key(&self) -> (&GroupPath, u64) {
        (&self.path, self.inode)
    }
}

/// Where a reading pass puts each group's figures: whole samples (a
/// scan of one hierarchy, whose samples are the snapshot's), or a part
/// (one hierarchy of several, for the merge: [`Part`], the figures read
/// only).
pub(super) trait Samples {
    type Group: Keyed;

    /// Room for `n` groups.
    fn with_room(n: usize) -> Self;

    /// A group's sample begun, its figures from `hot` on: filled in what
    /// this gives.
    fn begin(
        &mut self,
        path: GroupPath,
        inode: u64,
        cgroup_type: Option<CgroupType>,
        hot: HotStats,
    ) -> &mut HotStats;

    /// The group begun last is gone: left out.
    fn cancel(&mut self);

    /// The group begun last is read.
    fn commit(&mut self);

    /// The groups read, to sort, deduplicate, or leave some out of.
    fn groups(&mut self) -> &mut Vec<Self::Group>;

    /// Adds the groups of `other` after these.
    fn append(&mut self, other: Self);
}

impl Samples for Vec<GroupSample> {
    type Group = GroupSample;

    fn with_room(n: usize) -> Self {
        Vec::with_capacity(n)
    }

    fn begin(
        &mut self,
        path: GroupPath,
        inode: u64,
        cgroup_type: Option<CgroupType>,
        hot: HotStats,
    ) -> &mut HotStats {
        // filled where it lies (a whole sample, 400 bytes, is not built
        // aside and copied in), and taken out again if its group is gone
        self.push(GroupSample {
            path,
            inode,
            cgroup_type,
            hot,
            detail: None,
            identity: None,
        });
        let last = self.len() - 1;
        &mut self[last].hot
    }

    fn cancel(&mut self) {
        self.pop();
    }

    fn commit(&mut self) {}

    fn groups(&mut self) -> &mut Vec<GroupSample> {
        self
    }

    fn append(&mut self, mut other: Self) {
        Vec::append(self, &mut other);
    }
}

/// A part being read: the group begun, filled in one `HotStats` before
/// its figures go into the part.
pub(super) struct PartOut {
    pub(super) part: Part,
    begun: Option<(GroupPath, u64, Option<CgroupType>)>,
    hot: HotStats,
}

impl Samples for PartOut {
    type Group = PartGroup;

    fn with_room(n: usize) -> Self {
        Self {
            part: Part::with_capacity(n),
            begun: None,
            hot: HotStats::default(),
        }
    }

    fn begin(
        &mut self,
        path: GroupPath,
        inode: u64,
        cgroup_type: Option<CgroupType>,
        hot: HotStats,
    ) -> &mut HotStats {
        self.begun = Some((path, inode, cgroup_type));
        self.hot = hot;
        &mut self.hot
    }

    fn cancel(&mut self) {
        self.begun = None;
    }

    fn commit(&mut self) {
        if let Some((path, inode, cgroup_type)) = self.begun.take() {
            self.part.push(path, inode, cgroup_type, &mut self.hot);
        }
    }

    fn groups(&mut self) -> &mut Vec<PartGroup> {
        self.part.groups_mut()
    }

    fn append(&mut self, other: Self) {
        self.part.append(other.part);
    }
}
