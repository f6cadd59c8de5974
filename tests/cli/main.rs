//! The built `cgtop` binary on fixtures and temporary directories, as a user
//! runs it without root: batch and JSON output, the settings file, man page
//! and completions, record and replay, the script export, the exporter, and
//! the assets (exporter unit, dashboard).
//!
//! One module per area; shared helpers live in `tests/common/`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod batch;
mod batch_order;
mod config;
mod events;
mod exporter_unit;
mod filter_and_errors;
mod grafana;
mod identities;
mod native;
mod record_replay;
mod script_export;
mod serve;
mod small_terminal;
mod start_from_pid;
mod systemd_runner;
mod test_command;
