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
        MountMode::Hybrid { v1_controllers } => vec![
            // escaped: a recording's header is anybody's bytes
            format!(
                "hybrid, v1 holds {}",
                v1_controllers
                    .iter()
                    .map(|c| crate::model::text::escape_str(c))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!("hybrid, {} controllers on v1", v1_controllers.len()),
            "hybrid".into(),
        ],
        MountMode::Directory => vec!["directory".into()],
        MountMode::V1 { v1_controllers } => vec![
            format!(
                "cgroup v1, {}",
                v1_controllers
                    .iter()
                    .map(|c| crate::model::text::escape_str(c))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            format!("cgroup v1, {} controllers", v1_controllers.len()),
            "cgroup v1".into(),
        ],
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
                "hybrid, v1 holds cpu,memory",
                "hybrid, 2 controllers on v1",
                "hybrid"
            ]
        );
        assert_eq!(mode_forms(&MountMode::PureV2), ["pure v2"]);
    }
}
