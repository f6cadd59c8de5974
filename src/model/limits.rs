//! Effective limits: a group is held by the tightest limit on its path
//! (admin guide 5-2-1: memory.max and memory.high are hierarchical).

use super::GroupPath;
use crate::cgroupfs::Limit;

/// Which file sets the effective limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveLimit {
    pub bytes: u64,
    pub set_by: GroupPath,
    pub file: &'static str,
}

/// The smallest finite memory.max (or, if tighter, memory.high) along
/// `path_limits` (the group first, then its ancestors). `None` when
/// nothing on the path is limited. On a tie the nearest group wins, and
/// memory.max wins over memory.high (it is the hard one).
pub fn effective_memory(
    path_limits: &[(GroupPath, Option<Limit>, Option<Limit>)],
) -> Option<EffectiveLimit> {
    let mut best: Option<EffectiveLimit> = None;
    for (path, max, high) in path_limits {
        for (l, file) in [
            (max, crate::cgroupfs::files::MEMORY_MAX),
            (high, crate::cgroupfs::files::MEMORY_HIGH),
        ] {
            if let Some(Limit::Value(v)) = l {
                if best.as_ref().is_none_or(|b| *v < b.bytes) {
                    best = Some(EffectiveLimit {
                        bytes: *v,
                        set_by: path.clone(),
                        file,
                    });
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tightest_on_path_wins() {
        let p = |s: &str| GroupPath::new(s);
        let lim = vec![
            (p("a/b"), Some(Limit::Max), Some(Limit::Max)),
            (p("a"), Some(Limit::Value(64 << 20)), Some(Limit::Max)),
            (p(""), None, None),
        ];
        let e = effective_memory(&lim).unwrap();
        assert_eq!(
            (e.bytes, e.set_by.as_bytes(), e.file),
            (64 << 20, &b"a"[..], "memory.max")
        );
        let lim2 = vec![
            (
                p("a/b"),
                Some(Limit::Value(64 << 20)),
                Some(Limit::Value(32 << 20)),
            ),
            (p("a"), Some(Limit::Value(64 << 20)), None),
        ];
        let e = effective_memory(&lim2).unwrap();
        assert_eq!(
            (e.bytes, e.set_by.as_bytes(), e.file),
            (32 << 20, &b"a/b"[..], "memory.high")
        );
        assert_eq!(effective_memory(&[(p(""), None, None)]), None);
    }
}
