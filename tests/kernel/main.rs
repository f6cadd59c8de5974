//! The real thing on this machine: its cgroupfs as root (cgroup2 and the v1
//! hierarchies, under `cgtop-test-<pid>-<n>` groups of the sandbox) and the
//! real binary in tmux and a pty. Without root or a hierarchy a test prints
//! `skipped: <reason>`.
//!
//! One module per area; shared helpers live in `tests/common/`.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code, unused_imports)]
#[path = "../guest/vm_common.rs"]
mod vm_common;

mod events;
mod events_tty;
mod inspection_reads;
mod kernel_texts;
mod mounted_over;
mod populated_and_frozen;
mod priming_walk;
mod prometheus;
mod root_row;
mod script;
mod tree;
mod tty;
mod tty_actions;
mod v1_fio;
mod v1_uncounted_io;
mod v1scan;
mod v1write;
mod view;
mod writeback;
mod writes;
