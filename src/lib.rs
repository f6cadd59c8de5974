//! cgtop: an htop-like terminal UI for Linux cgroup v2.
//!
//! Layers, each depending only on the ones above it:
//!
//! 1. [`cgroupfs`]: PURE. Kernel text <-> typed values.
//! 2. [`model`]: PURE. Snapshots, rates, the tree, input parsing, writes as values.
//! 3. [`render`]: PURE. Text every output shares: units, widths, state marks,
//!    the group table's columns. [`options`]: what the command line asked for.
//! 4. [`source`]: the only code that touches `/sys` and `/proc` (reading and writing).
//! 5. [`app`]: state and `update(&mut App, Msg) -> Vec<Effect>`, no I/O.
//! 6. [`ui`]: the thin view; [`batch`]: the plain-text and JSON views.
//! 7. [`term`] and [`run`]: the terminal, signals, threads and the main loop.
//! 8. [`cli`]: the command line (one clap definition: help, man page,
//!    completions) and `main`.

pub mod app;
pub mod batch;
pub mod cgroupfs;
pub mod cli;
pub mod model;
pub mod options;
pub mod render;
pub mod run;
pub mod source;
pub mod term;
pub mod ui;
