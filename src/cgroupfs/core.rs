//! cgroup core files: cgroup.controllers, cgroup.subtree_control,
//! cgroup.type, cgroup.events, cgroup.stat (admin guide 4-? "Core Interface
//! Files").

use super::{flat, ParseError};
use std::fmt;

/// A set of controller names, in the kernel's order, as read from
/// cgroup.controllers or cgroup.subtree_control.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Controllers(pub Vec<String>);

impl Controllers {
    pub fn parse(s: &str) -> Self {
        Self(s.split_ascii_whitespace().map(str::to_owned).collect())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|c| c == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Controllers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(" "))
    }
}

/// cgroup.type (admin guide 2-2-2 "Threads").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupType {
    Domain,
    DomainThreaded,
    DomainInvalid,
    Threaded,
}

impl CgroupType {
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        match s.trim() {
            "domain" => Ok(Self::Domain),
            "domain threaded" => Ok(Self::DomainThreaded),
            "domain invalid" => Ok(Self::DomainInvalid),
            "threaded" => Ok(Self::Threaded),
            other => Err(ParseError::new(
                "cgroup.type",
                format!("unknown type {other:?}"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Domain => "domain",
            Self::DomainThreaded => "domain threaded",
            Self::DomainInvalid => "domain invalid",
            Self::Threaded => "threaded",
        }
    }

    /// Threaded or the root of a threaded subtree.
    pub fn is_threaded(self) -> bool {
        matches!(self, Self::Threaded | Self::DomainThreaded)
    }
}

impl fmt::Display for CgroupType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// cgroup.events: "populated" and "frozen" (the root has no such file).
/// A key the file does not have is `None` (kernels before 5.2 have no
/// "frozen").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CgroupEvents {
    pub populated: Option<bool>,
    pub frozen: Option<bool>,
}

impl CgroupEvents {
    pub fn parse(s: &str) -> Self {
        let [populated, frozen] = flat::values(s, &["populated", "frozen"]);
        Self {
            populated: populated.map(|v| v != 0),
            frozen: frozen.map(|v| v != 0),
        }
    }

    /// "populated 1": an absent key reads as not populated.
    pub fn is_populated(&self) -> bool {
        self.populated == Some(true)
    }

    /// "frozen 1": an absent key (no freezer) reads as not frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen == Some(true)
    }
}

/// cgroup.stat: live and dying descendants; `None` when the file lacks the
/// key. The `nr_subsys_*` / `nr_dying_subsys_*` keys of newer kernels are
/// kept by [`super::Keyed`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CgroupStat {
    pub nr_descendants: Option<u64>,
    pub nr_dying_descendants: Option<u64>,
}

impl CgroupStat {
    pub fn parse(s: &str) -> Self {
        let [nr_descendants, nr_dying_descendants] =
            flat::values(s, &["nr_descendants", "nr_dying_descendants"]);
        Self {
            nr_descendants,
            nr_dying_descendants,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers() {
        let c = Controllers::parse("cpuset cpu io memory hugetlb pids rdma misc\n");
        assert!(c.contains("io"));
        assert!(!c.contains("i"));
        assert_eq!(c.to_string(), "cpuset cpu io memory hugetlb pids rdma misc");
        assert!(Controllers::parse("\n").is_empty());
    }

    #[test]
    fn cgroup_type_round_trip() {
        for t in ["domain", "domain threaded", "domain invalid", "threaded"] {
            assert_eq!(CgroupType::parse(t).unwrap().as_str(), t);
        }
        assert!(CgroupType::parse("weird").is_err());
    }

    #[test]
    fn events_and_stat() {
        let e = CgroupEvents::parse("populated 1\nfrozen 0\n");
        assert!(e.is_populated() && !e.is_frozen());
        let e = CgroupEvents::parse("populated 0\nfrozen 1\n");
        assert!(!e.is_populated() && e.is_frozen());
        let s = CgroupStat::parse("nr_descendants 30\nnr_dying_descendants 2\n");
        assert_eq!(
            (s.nr_descendants, s.nr_dying_descendants),
            (Some(30), Some(2))
        );
    }

    #[test]
    fn absent_keys_are_none_not_zero() {
        // a kernel before 5.2 has no freezer: no "frozen" line
        let e = CgroupEvents::parse("populated 1\n");
        assert_eq!((e.populated, e.frozen), (Some(true), None));
        assert_eq!(
            serde_json::to_value(e).unwrap(),
            serde_json::json!({"populated": true, "frozen": null})
        );
        let s = CgroupStat::parse("nr_descendants 3\n");
        assert_eq!(s.nr_dying_descendants, None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn controllers_print_and_parse_back(
            names in proptest::collection::vec("[a-z_]{1,12}", 0..10),
        ) {
            let c = Controllers(names);
            proptest::prop_assert_eq!(Controllers::parse(&format!("{c}\n")), c);
        }

        #[test]
        fn cgroup_type_prints_and_parses_back(i in 0usize..4) {
            let t = [
                CgroupType::Domain,
                CgroupType::DomainThreaded,
                CgroupType::DomainInvalid,
                CgroupType::Threaded,
            ][i];
            proptest::prop_assert_eq!(CgroupType::parse(&format!("{t}\n")), Ok(t));
        }
    }
}
