//! The checks that run inside a QEMU guest (tests/vm): a kernel of the
//! kind this host is not (pure cgroup v2, v1 only, hybrid, systemd as PID
//! 1, a tree of 1,000 groups), as root, with nothing else on it. One
//! module per kind of guest; `tests/vm/run-suite` and `tests/vm/scale/run`
//! build this one binary and each guest runs its module by its path
//! (`truth::`, `v1::`, `systemd::`, `scale::`, `identity::`):
//!
//! - [`truth`]: pure cgroup v2, what cgtop shows and writes is what the
//!   kernel does;
//! - [`v1`]: the v1 and hybrid layouts (and systemd-cgtop on v1);
//! - [`systemd`]: a unit's direct write against one through systemd, with
//!   systemd 252 as PID 1;
//! - [`scale`]: cgtop's output on big and churning trees (its
//!   `*_on_a_fixture` tests also run on the host);
//! - [`identity`]: real docker, podman and containerd containers named
//!   in cgtop's outputs (the identity guest, `tests/vm/runtimes/run`).
//!
//! Named for where the cases run (tests/vm is the harness that boots the
//! guest): every guest case is `#[ignore]`d, so plain `cargo test` lists it
//! as ignored with its reason, and run by hand outside its guest it fails
//! at once rather than passing unchecked.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "../common/mod.rs"]
mod common;
mod vm_common;

mod identity;
mod scale;
mod systemd;
mod truth;
mod v1;
