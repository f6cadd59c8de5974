//! Every key of a flat-keyed file, as the kernel printed it.

use super::flat_keyed;
use std::collections::HashSet;

/// All `key value` pairs of a flat-keyed file (cpu.stat, memory.stat,
/// memory.events, pids.events, cgroup.stat, ...), in the kernel's order,
/// which is the order of the file. Kernels add keys over time
/// (`core_sched.force_idle_usec`, `nr_subsys_*`, `sock_throttled`): a map
/// keeps the ones cgtop has no typed field for. A key the text repeats keeps
/// its first value; lines that are not a key and a number are skipped.
///
/// Serialised as a JSON object in the same order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keyed(Vec<(String, u64)>);

impl Keyed {
    pub fn parse(s: &str) -> Self {
        let mut seen = HashSet::new();
        Self(
            flat_keyed(s)
                .filter(|(k, _)| seen.insert(*k))
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The value of `key`; `None` when the file does not have it.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for Keyed {
    /// The kernel's text: one `key value` line each.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (k, v) in &self.0 {
            writeln!(f, "{k} {v}")?;
        }
        Ok(())
    }
}

impl serde::Serialize for Keyed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_key_in_order_first_wins() {
        let k = Keyed::parse("usage_usec 5\nnr_bursts 0\ntorn\nburst_usec 7\nusage_usec 9\n");
        let v: Vec<_> = k.iter().collect();
        assert_eq!(
            v,
            vec![("usage_usec", 5), ("nr_bursts", 0), ("burst_usec", 7)]
        );
        assert_eq!(k.get("burst_usec"), Some(7));
        assert_eq!(k.get("nice_usec"), None);
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            r#"{"usage_usec":5,"nr_bursts":0,"burst_usec":7}"#
        );
        assert_eq!(k.to_string(), "usage_usec 5\nnr_bursts 0\nburst_usec 7\n");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The kernel's text of any map parses back to the same map, in
        /// the same order.
        #[test]
        fn keyed_prints_and_parses_back(
            map in proptest::collection::btree_map("[a-z_.]{1,24}", proptest::prelude::any::<u64>(), 0..40),
            reverse in proptest::prelude::any::<bool>(),
        ) {
            let mut pairs: Vec<(String, u64)> = map.into_iter().collect();
            if reverse {
                pairs.reverse();
            }
            let k = Keyed(pairs);
            proptest::prop_assert_eq!(Keyed::parse(&k.to_string()), k);
        }
    }
}
