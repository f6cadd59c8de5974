//! The library in process: app state after messages, every screen and dialog
//! on a TestBackend (insta snapshots), the model and scanners on fixture trees,
//! and the layering of the source.
//!
//! One module per area; shared helpers live in `tests/common/`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;

mod actions;
mod app;
mod asked_group;
mod columns;
mod config;
mod deep_rows;
mod dialog_views;
mod effect;
mod event_loop;
mod event_watcher;
mod events;
mod exposition;
mod find_process;
mod first_look;
mod first_screen;
mod flat_view;
mod honesty;
mod htop_keys;
mod identities;
mod inspection_reads;
mod layers;
mod layout;
mod limits_form;
mod name_width;
mod one_shot_memory;
mod palette;
mod preflight;
mod priming;
mod replay_marks;
mod script;
mod sparklines;
mod start_up;
mod systemd;
mod time_travel;
mod tree;
mod undo;
mod v1_overview;
mod v1detail_read;
mod v1detail_views;
mod v1scan;
mod v1write;
mod views;
mod writeback;
mod writeback_views;
