//! How the hierarchy is mounted, in words: the TUI's header and `-b`'s
//! first line say the same.

use crate::model::MountMode;

/// The mount's mode in words, longest first: the view takes the first
/// form that fits its line (a hybrid host's list of v1 controllers is
/// long), plain text takes the first.
pub fn mode_forms(mode: &MountMode) -> Vec<String> {
    match mode {
        MountMode::PureV2 => vec!["pure v2".into()],
        MountMode::Hybrid { v1_controllers } if v1_controllers.is_empty() => {
            vec!["hybrid".into()]
        }
        MountMode::Hybrid { v1_controllers } => {
            // escaped: a recording's header is anybody's bytes
            let v1 = v1_controllers
                .iter()
                .map(|c| crate::model::tree::text::escape_str(c))
                .collect::<Vec<_>>()
                .join(",");
            // every controller has a place: v1's by name, cgroup2 the rest
            vec![
                format!("hybrid, v1 holds {v1}; the rest on v2"),
                format!("hybrid, v1 holds {v1}"),
                format!("hybrid, {} controllers on v1", v1_controllers.len()),
                "hybrid".into(),
            ]
        }
        MountMode::Directory => vec!["directory".into()],
        MountMode::V1 { v1_controllers } => vec![
            format!(
                "v1 only, v1 holds {}",
                v1_controllers
                    .iter()
                    .map(|c| crate::model::tree::text::escape_str(c))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!("v1 only, {} controllers", v1_controllers.len()),
            "v1 only".into(),
        ],
    }
}

/// The kind of filesystem the root is, before its path in the header and
/// `-b`'s first line: "cgroup2", or "cgroup v1" where the root is a v1
/// hierarchy (a v1-only host, or `--root` naming one).
pub fn root_kind(mode: &MountMode) -> &'static str {
    match mode {
        MountMode::V1 { .. } => "cgroup v1",
        _ => "cgroup2",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hybrid_host_says_so_in_every_form() {
        let m = MountMode::Hybrid {
            v1_controllers: vec!["cpu".into(), "memory".into()],
        };
        assert_eq!(
            mode_forms(&m),
            [
                "hybrid, v1 holds cpu,memory; the rest on v2",
                "hybrid, v1 holds cpu,memory",
                "hybrid, 2 controllers on v1",
                "hybrid"
            ]
        );
        assert_eq!(mode_forms(&MountMode::PureV2), ["pure v2"]);
        assert_eq!(root_kind(&m), "cgroup2");
    }

    #[test]
    fn a_v1_root_is_not_called_cgroup2() {
        let m = MountMode::V1 {
            v1_controllers: vec!["cpu".into(), "cpuacct".into(), "memory".into()],
        };
        assert_eq!(root_kind(&m), "cgroup v1");
        assert_eq!(
            mode_forms(&m),
            [
                "v1 only, v1 holds cpu,cpuacct,memory",
                "v1 only, 3 controllers",
                "v1 only"
            ]
        );
    }
}
