//! Where each controller lives: the cgroup2 hierarchy and every cgroup v1
//! hierarchy of the host (their directories, their controllers), from
//! mountinfo's entries or from a directory laid out like `/sys/fs/cgroup`.
//! PURE: the source side opens the directories (`source::hier::Hiers`).
//!
//! One tree on any layout: systemd puts a unit at the same path in every
//! hierarchy, so a group is a path, and each of its figures is read from
//! the hierarchy that holds that figure's controller ([`Layout::holder`]).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::host::mountinfo::MountEntry;
use crate::model::tree::snapshot::{MountInfo, MountMode};
use std::path::{Path, PathBuf};

/// One cgroup v1 hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Mount {
    /// Where cgtop reads it: the mount point (or a fixture's directory).
    pub dir: PathBuf,
    /// The controllers bound to it, in the kernel's order ("cpu",
    /// "cpuacct" for a co-mounted `cpu,cpuacct`); empty for a named
    /// hierarchy without controllers.
    pub controllers: Vec<String>,
    /// `name=` of a named hierarchy ("systemd").
    pub name: Option<String>,
}

impl V1Mount {
    /// Holds this controller (v1 names: "blkio", "cpuacct", "freezer").
    pub fn holds(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }

    /// How a header or a message names it: its controllers joined by ","
    /// (as the kernel names a co-mount), or `name=X`.
    pub fn label(&self) -> String {
        match (&self.name, self.controllers.is_empty()) {
            (Some(n), true) => format!("name={n}"),
            _ => self.controllers.join(","),
        }
    }
}

/// Which hierarchy a file is read from or written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HierId {
    /// The cgroup2 hierarchy.
    V2,
    /// The v1 hierarchy at this index of [`Layout::v1`].
    V1(usize),
}

/// A set of hierarchies: which of them hold a group (a bit per
/// [`HierId`]: cgroup2's, then one per v1 hierarchy; a host has at most
/// 16 controllers and one named hierarchy or two, far below 32).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HierSet(u32);

impl HierSet {
    fn bit(h: HierId) -> u32 {
        match h {
            HierId::V2 => 1,
            HierId::V1(i) => u32::try_from(i)
                .ok()
                .and_then(|i| 2u32.checked_shl(i))
                .unwrap_or(0),
        }
    }

    pub fn insert(&mut self, h: HierId) {
        self.0 |= Self::bit(h);
    }

    pub fn contains(self, h: HierId) -> bool {
        self.0 & Self::bit(h) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A group's directory inode in some hierarchies: those a v1 or hybrid
/// merge found it in other than the tree's primary, whose inode is the
/// sample's own (`GroupSample::inode`). What an op written in one of them
/// is held to (`Op::of_group`): kernfs never gives a group made again
/// under the name the same inode. One allocation, the set's bits then an
/// inode per hierarchy of the set in the order of its bits (a group in
/// nine v1 hierarchies: 80 bytes); none where empty (pure cgroup2). Made
/// by [`HierInodesMut`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct HierInodes(Box<[u64]>);

/// The set's bits and an inode's place in the list after them.
fn inode_slot(list: &[u64], h: HierId) -> (u32, u32, usize) {
    let set = list.first().map_or(0, |&b| u32::try_from(b).unwrap_or(0));
    let bit = HierSet::bit(h);
    let rank = (set & bit.wrapping_sub(1)).count_ones() as usize;
    (set, bit, 1 + rank)
}

impl HierInodes {
    /// The group's directory inode in hierarchy `h`, where known.
    pub fn get(&self, h: HierId) -> Option<u64> {
        let (set, bit, at) = inode_slot(&self.0, h);
        if bit == 0 || set & bit == 0 {
            return None;
        }
        self.0.get(at).copied()
    }
}

/// [`HierInodes`] while a merge finds a group in one hierarchy after
/// another.
#[derive(Debug, Default)]
pub struct HierInodesMut(Vec<u64>);

impl HierInodesMut {
    /// Records the group's inode in hierarchy `h` (room made for
    /// `room` inodes at the first).
    pub fn insert(&mut self, h: HierId, ino: u64, room: usize) {
        if self.0.is_empty() {
            self.0.reserve_exact(1 + room.max(1));
            self.0.push(0);
        }
        let (set, bit, at) = inode_slot(&self.0, h);
        if bit == 0 {
            return;
        }
        if set & bit != 0 {
            self.0[at] = ino;
        } else {
            self.0.insert(at, ino);
            self.0[0] = u64::from(set | bit);
        }
    }

    pub fn finish(self) -> HierInodes {
        HierInodes(self.0.into_boxed_slice())
    }
}

impl FromIterator<HierId> for HierSet {
    fn from_iter<I: IntoIterator<Item = HierId>>(iter: I) -> Self {
        let mut s = Self::default();
        for h in iter {
            s.insert(h);
        }
        s
    }
}

/// Every cgroup hierarchy of the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The cgroup2 mount, where there is one.
    pub v2: Option<PathBuf>,
    /// The v1 hierarchies, one per superblock, in mountinfo's order.
    pub v1: Vec<V1Mount>,
}

/// A v1 superblock option that names a controller: one of the kernel's
/// v1 controllers ([`V1_CONTROLLERS`]), never whatever else the options
/// hold. An allow-list, because the options are open-ended: SELinux adds
/// `seclabel` to every cgroup mount of Fedora and RHEL, and the kernel
/// adds `xattr`, `noprefix`, `clone_children`, `cpuset_v2_mode`,
/// `favordynmods`, `release_agent=`... A controller newer than the list
/// is not seen (its figures are not read) rather than a word taken for one.
fn is_controller_option(opt: &str) -> bool {
    V1_CONTROLLERS.contains(&opt)
}

/// The v1 name of a cgroup2 controller: v2's io is v1's blkio (admin guide
/// 5-3 "IO"); the others keep their names.
pub fn v1_name(controller: &str) -> &str {
    match controller {
        "io" => "blkio",
        c => c,
    }
}

impl Layout {
    /// The hierarchies among the mounts. The first mount of a superblock
    /// wins (a bind mount of it may follow), preferring one of the whole
    /// hierarchy (root "/") over a bind mount of a subtree.
    pub fn from_mounts(mounts: &[MountEntry]) -> Self {
        let mut out = Self::default();
        let mut v1_root: Vec<bool> = Vec::new();
        for m in mounts {
            let whole = m.root == Path::new("/");
            match m.fs_type.as_str() {
                "cgroup2" if out.v2.is_none() => out.v2 = Some(m.mount_point.clone()),
                "cgroup" => {
                    let controllers: Vec<String> = m
                        .super_options
                        .split(',')
                        .filter(|o| is_controller_option(o))
                        .map(str::to_owned)
                        .collect();
                    let name = m
                        .super_options
                        .split(',')
                        .find_map(|o| o.strip_prefix("name="))
                        .map(str::to_owned);
                    if controllers.is_empty() && name.is_none() {
                        continue;
                    }
                    let v = V1Mount {
                        dir: m.mount_point.clone(),
                        controllers,
                        name,
                    };
                    let same = out
                        .v1
                        .iter()
                        .position(|o| o.controllers == v.controllers && o.name == v.name);
                    match same {
                        Some(i) if !v1_root[i] && whole => {
                            out.v1[i] = v;
                            v1_root[i] = true;
                        }
                        Some(_) => {}
                        None => {
                            out.v1.push(v);
                            v1_root.push(whole);
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// A directory laid out like `/sys/fs/cgroup` (a fixture tree, or a
    /// copy): its subdirectories are the hierarchies, named as the kernel
    /// names them: `unified` is cgroup2, `systemd` is `name=systemd`, any
    /// other name is its controllers joined by "," (`cpu,cpuacct`,
    /// `memory`, `blkio`). `names` are the subdirectories' names; a name
    /// that is not one of these is no hierarchy.
    pub fn from_dir_names<'a>(base: &Path, names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut out = Self::default();
        let mut names: Vec<&str> = names.into_iter().collect();
        names.sort_unstable();
        for n in names {
            match n {
                "unified" => out.v2 = Some(base.join(n)),
                "systemd" => out.v1.push(V1Mount {
                    dir: base.join(n),
                    controllers: Vec::new(),
                    name: Some("systemd".into()),
                }),
                _ => {
                    let controllers: Vec<String> = n.split(',').map(str::to_owned).collect();
                    if controllers
                        .iter()
                        .all(|c| V1_CONTROLLERS.contains(&c.as_str()))
                    {
                        out.v1.push(V1Mount {
                            dir: base.join(n),
                            controllers,
                            name: None,
                        });
                    }
                }
            }
        }
        out
    }

    /// No hierarchy at all.
    pub fn is_empty(&self) -> bool {
        self.v2.is_none() && self.v1.is_empty()
    }

    /// Every controller bound to a v1 hierarchy, in mount order.
    pub fn v1_controllers(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.v1 {
            for c in &m.controllers {
                if !out.contains(c) {
                    out.push(c.clone());
                }
            }
        }
        out
    }

    /// The hierarchy whose group list is the tree's backbone and whose
    /// cgroup.procs lists a group's processes: cgroup2 where it is
    /// mounted, else `name=systemd` (where systemd keeps every unit), else
    /// the first v1 hierarchy.
    pub fn primary(&self) -> Option<HierId> {
        if self.v2.is_some() {
            return Some(HierId::V2);
        }
        self.v1
            .iter()
            .position(|m| m.name.as_deref() == Some("systemd"))
            .or_else(|| (!self.v1.is_empty()).then_some(0))
            .map(HierId::V1)
    }

    /// The hierarchy that holds a controller, by its v2 or v1 name
    /// ("io" and "blkio" alike; "cpuacct" for v1's CPU accounting): the v1
    /// hierarchy bound to it, else cgroup2 (where it may or may not be
    /// enabled), else none.
    pub fn holder(&self, controller: &str) -> Option<HierId> {
        let name = v1_name(controller);
        self.v1
            .iter()
            .position(|m| m.holds(name))
            .map(HierId::V1)
            .or(self.v2.as_ref().map(|_| HierId::V2))
    }

    /// Every hierarchy in the order cgtop makes, moves into and removes a
    /// group in each: the primary first (the tree's backbone), then
    /// cgroup2 and each v1 hierarchy in the layout's order, cpuset last (a
    /// new cpuset group has no CPUs until cpuset.cpus and cpuset.mems are
    /// written, so a move into it fails with ENOSPC and ends the request:
    /// the other hierarchies are done by then); cgroup2 alone where the
    /// layout is not known.
    pub fn write_order(&self) -> Vec<HierId> {
        let mut out: Vec<HierId> = self.primary().into_iter().collect();
        let rest = self
            .v2
            .as_ref()
            .map(|_| HierId::V2)
            .into_iter()
            .chain((0..self.v1.len()).map(HierId::V1));
        for h in rest {
            if !out.contains(&h) {
                out.push(h);
            }
        }
        let is_cpuset = |h: &HierId| match h {
            HierId::V1(i) => self.v1.get(*i).is_some_and(|m| m.holds("cpuset")),
            HierId::V2 => false,
        };
        if let Some(rest) = out.get_mut(1..) {
            rest.sort_by_key(is_cpuset);
        }
        if out.is_empty() {
            out.push(HierId::V2);
        }
        out
    }

    /// The directory of a hierarchy.
    pub fn dir(&self, id: HierId) -> Option<&Path> {
        match id {
            HierId::V2 => self.v2.as_deref(),
            HierId::V1(i) => self.v1.get(i).map(|m| m.dir.as_path()),
        }
    }

    /// How the rest of cgtop sees it: the primary hierarchy's directory
    /// as the root, and the mode. `None` without any hierarchy.
    pub fn mount_info(&self) -> Option<MountInfo> {
        let root = self.dir(self.primary()?)?.to_path_buf();
        let v1_controllers = self.v1_controllers();
        let mode = match (&self.v2, self.v1.is_empty()) {
            (Some(_), true) => MountMode::PureV2,
            (Some(_), false) => MountMode::Hybrid { v1_controllers },
            (None, _) => MountMode::V1 { v1_controllers },
        };
        Some(MountInfo { root, mode })
    }

    /// Each controller and where it lives, for the header: `(name,
    /// "v1"|"v2")` for the v1 controllers and, on cgroup2, the rest of
    /// `v2_controllers` (the root's cgroup.controllers).
    pub fn where_each(&self, v2_controllers: &[String]) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = self
            .v1_controllers()
            .into_iter()
            .map(|c| (c, "v1"))
            .collect();
        if self.v2.is_some() {
            for c in v2_controllers {
                if !out.iter().any(|(o, _)| o == v1_name(c) || o == c) {
                    out.push((c.clone(), "v2"));
                }
            }
        }
        out
    }
}

/// The controllers cgroup v1 knows (Linux 6.x `cgroup_subsys.h`, by
/// their v1 names: v2's io is blkio there): the only words of a v1
/// mount's options taken for controllers, and of a fixture's directory
/// names.
pub const V1_CONTROLLERS: &[&str] = &[
    "cpuset",
    "cpu",
    "cpuacct",
    "blkio",
    "memory",
    "devices",
    "freezer",
    "net_cls",
    "net_prio",
    "perf_event",
    "hugetlb",
    "pids",
    "rdma",
    "misc",
    "debug",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::host::mountinfo::parse;

    #[test]
    fn a_groups_inode_is_kept_for_each_hierarchy_it_was_found_in() {
        // found in the hierarchies out of order, as the parts come
        let mut m = HierInodesMut::default();
        m.insert(HierId::V1(5), 50, 2);
        m.insert(HierId::V1(0), 10, 2);
        m.insert(HierId::V1(3), 30, 2);
        m.insert(HierId::V1(0), 11, 2);
        let inodes = m.finish();
        assert_eq!(inodes.get(HierId::V1(0)), Some(11));
        assert_eq!(inodes.get(HierId::V1(3)), Some(30));
        assert_eq!(inodes.get(HierId::V1(5)), Some(50));
        assert_eq!(inodes.get(HierId::V1(1)), None);
        assert_eq!(inodes.get(HierId::V2), None);
        assert_eq!(inodes.get(HierId::V1(40)), None, "past the set's bits");
        assert_eq!(HierInodes::default().get(HierId::V1(0)), None);
    }

    /// This machine's mountinfo (cpu and cpuacct mounted apart).
    const HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    /// systemd's legacy layout (RHEL 8, systemd.unified_cgroup_hierarchy=0
    /// with legacy_systemd_cgroup_controller): no cgroup2, co-mounts.
    const V1_ONLY: &str = "25 18 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:6 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:7 - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd
29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct
30 25 0:27 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,memory
31 25 0:28 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,blkio
32 25 0:29 / /sys/fs/cgroup/net_cls,net_prio rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,net_cls,net_prio
33 25 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,pids
34 25 0:31 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,freezer
";

    #[test]
    fn this_machines_hybrid_layout() {
        let l = Layout::from_mounts(&parse(HYBRID.as_bytes()));
        assert_eq!(l.v2.as_deref(), Some(Path::new("/sys/fs/cgroup/unified")));
        assert_eq!(l.v1.len(), 7);
        assert_eq!(l.primary(), Some(HierId::V2));
        assert_eq!(l.holder("cpu"), Some(HierId::V1(0)));
        assert_eq!(l.holder("cpuacct"), Some(HierId::V1(1)));
        assert_eq!(l.holder("io"), l.holder("blkio"));
        assert_eq!(
            l.dir(l.holder("io").unwrap()),
            Some(Path::new("/sys/fs/cgroup/blkio"))
        );
        // hugetlb is not on v1 here: cgroup2 holds it
        assert_eq!(l.holder("hugetlb"), Some(HierId::V2));
        let m = l.mount_info().unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(
            m.mode,
            MountMode::Hybrid {
                v1_controllers: ["cpu", "cpuacct", "memory", "freezer", "blkio", "pids"]
                    .map(String::from)
                    .to_vec()
            }
        );
        assert_eq!(l.v1[6].label(), "name=systemd");
    }

    #[test]
    fn a_v1_only_host_with_co_mounts() {
        let l = Layout::from_mounts(&parse(V1_ONLY.as_bytes()));
        assert_eq!(l.v2, None);
        assert_eq!(l.v1[1].controllers, ["cpu", "cpuacct"]);
        assert_eq!(l.v1[1].label(), "cpu,cpuacct");
        assert_eq!(l.v1[0].name.as_deref(), Some("systemd"));
        // xattr and release_agent= are options, not controllers
        assert!(l.v1[0].controllers.is_empty());
        assert_eq!(l.primary(), Some(HierId::V1(0)));
        assert_eq!(l.holder("cpu"), l.holder("cpuacct"));
        assert_eq!(l.holder("hugetlb"), None);
        let m = l.mount_info().unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup/systemd"));
        assert!(
            matches!(m.mode, MountMode::V1 { ref v1_controllers } if v1_controllers.len() == 8)
        );
    }

    /// Real mountinfo texts (tests/fixtures/mountinfo/README.md says
    /// where each is from): SELinux hosts put `seclabel` among every
    /// cgroup mount's super options.
    const CENTOS7_SELINUX: &str = include_str!("../../../tests/fixtures/mountinfo/centos7-selinux");
    const CENTOS7_SELINUX_DOCKER: &str =
        include_str!("../../../tests/fixtures/mountinfo/centos7-selinux-docker");
    const THIS_HYBRID_HOST: &str =
        include_str!("../../../tests/fixtures/mountinfo/this-hybrid-host");

    fn labels(l: &Layout) -> Vec<String> {
        l.v1.iter().map(V1Mount::label).collect()
    }

    #[test]
    fn selinux_hosts_seclabel_is_no_controller() {
        let l = Layout::from_mounts(&parse(CENTOS7_SELINUX.as_bytes()));
        assert_eq!(
            labels(&l),
            [
                "name=systemd",
                "net_prio,net_cls",
                "blkio",
                "cpuacct,cpu",
                "memory",
                "freezer",
                "cpuset",
                "perf_event",
                "hugetlb",
                "pids",
                "devices"
            ]
        );
        let m = l.mount_info().unwrap();
        assert_eq!(m.root, PathBuf::from("/sys/fs/cgroup/systemd"));
        let MountMode::V1 { v1_controllers } = m.mode else {
            panic!("{:?}", m.mode)
        };
        assert_eq!(v1_controllers.len(), 12, "{v1_controllers:?}");
        assert!(v1_controllers
            .iter()
            .all(|c| V1_CONTROLLERS.contains(&c.as_str())));
        assert_eq!(
            l.dir(l.holder("cpu").unwrap()),
            Some(Path::new("/sys/fs/cgroup/cpu,cpuacct"))
        );
        // a container's view of the same kind of host: bind mounts of its
        // own group, seclabel on each
        let l = Layout::from_mounts(&parse(CENTOS7_SELINUX_DOCKER.as_bytes()));
        assert_eq!(l.v1.len(), 11);
        assert_eq!(l.v1[0].label(), "name=systemd");
        assert_eq!(l.v1[4].label(), "cpuacct,cpu");
        assert!(l.v1_controllers().iter().all(|c| c != "seclabel"));
    }

    #[test]
    fn options_that_are_not_controllers_are_never_taken_for_one() {
        let text =
            "1 0 0:30 / /a rw - cgroup cgroup rw,seclabel,favordynmods,nsdelegate,memory,bogus\n\
                    2 0 0:31 / /b rw - cgroup cgroup rw,seclabel,name=x\n\
                    3 0 0:32 / /c rw - cgroup cgroup rw,seclabel,xattr\n";
        let l = Layout::from_mounts(&parse(text.as_bytes()));
        assert_eq!(labels(&l), ["memory", "name=x"]);
        // the fixture's own capture of this host: unchanged
        let here = Layout::from_mounts(&parse(THIS_HYBRID_HOST.as_bytes()));
        assert_eq!(here.v1.len(), 9);
        assert!(here.v2.is_some());
        assert_eq!(here.v1[8].label(), "name=systemd");
    }

    #[test]
    fn a_bind_mount_of_a_subtree_gives_way_to_the_whole_hierarchy() {
        let text = "1 0 0:30 /docker/abc /mnt/mem rw - cgroup cgroup rw,memory\n\
                    2 0 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                    3 0 0:30 / /elsewhere rw - cgroup cgroup rw,memory\n";
        let l = Layout::from_mounts(&parse(text.as_bytes()));
        assert_eq!(l.v1.len(), 1);
        assert_eq!(l.v1[0].dir, PathBuf::from("/sys/fs/cgroup/memory"));
    }

    #[test]
    fn pure_v2_and_nothing() {
        let l = Layout::from_mounts(&parse(
            b"24 30 0:22 / /sys/fs/cgroup rw shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
        ));
        assert_eq!(l.mount_info().unwrap().mode, MountMode::PureV2);
        assert_eq!(l.holder("memory"), Some(HierId::V2));
        assert!(Layout::from_mounts(&parse(b"garbage\n")).is_empty());
        assert_eq!(Layout::default().mount_info(), None);
    }

    #[test]
    fn a_fixture_laid_out_like_sys_fs_cgroup() {
        let base = Path::new("/fx");
        let l = Layout::from_dir_names(
            base,
            [
                "memory",
                "cpu,cpuacct",
                "systemd",
                "unified",
                "blkio",
                "notes",
                "cpu,evil",
            ],
        );
        assert_eq!(l.v2, Some(base.join("unified")));
        let labels: Vec<String> = l.v1.iter().map(V1Mount::label).collect();
        assert_eq!(labels, ["blkio", "cpu,cpuacct", "memory", "name=systemd"]);
        assert_eq!(l.holder("memory"), Some(HierId::V1(2)));
        let w = l.where_each(&["cpu".into(), "io".into(), "hugetlb".into()]);
        assert!(w.contains(&("hugetlb".to_string(), "v2")), "{w:?}");
        assert!(!w.iter().any(|(c, _)| c == "io"), "{w:?}");
        assert!(w.contains(&("cpuacct".to_string(), "v1")), "{w:?}");
    }
}
