//! The hostile-input suite (issue 7): trees built at test time the way a
//! user who owns only a delegated subtree, or a `--root` tree, could build
//! them (symlinks, FIFOs, huge and endless files, escape and invalid-UTF-8
//! names, `..` and symlinked roots), each checked for a refused or
//! harmless outcome. Tests on the real cgroup2 of this machine work under
//! `cgtop-test-<pid>-<n>` and print `skipped: <reason>` without root.
//!
//! One module per area, so that each finding's test sits with its kind.

// test helpers outside #[test] functions: a failed unwrap is a failed test
#![allow(clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod actionlog;
mod columns_limits_paste;
mod deep_chain_cost;
mod deep_rows;
mod delegated_watch;
mod effect_renamed_group;
mod event_flood;
mod event_kill_flood;
mod event_owners;
mod event_owners_ancestors;
mod event_owners_root_range;
mod event_owners_subordinate;
mod export_files;
mod flat_paths;
mod fs_access;
mod guard;
mod guard_symlinked_root;
mod hierarchy_handles;
mod hybrid_frozen_kill;
mod identities;
mod identities_delegated;
mod identities_every_output;
mod identities_owner_unknown;
mod identities_podman_pods;
mod identities_store_churn;
mod identities_store_mount;
mod identity_labels_cut;
mod label_lookalike_names;
mod memory_events;
mod names_drawn_alike;
mod owner_commands_delegated;
mod parsers;
mod past_read_only;
mod paths;
mod pod_state_db;
mod procs;
mod question_made_again;
mod recording;
mod search_miss;
mod serve_clients;
mod settings_place;
mod strip_figures;
mod systemd_units;
mod terminal;
mod v1_frozen_kill;
mod v1_oom_registration;
mod v1_watches;
mod vanished_selection;
mod watch_budget;
