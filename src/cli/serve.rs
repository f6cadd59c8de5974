//! `cgtop serve` and `cgtop --openmetrics`: the Prometheus side (issue 10).
//! Placeholder of the foundation commit: the metrics work replaces it.

use crate::options::Options;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Serve this group and below (as `cgtop GROUP`)
    pub group: Option<OsString>,

    /// The address to listen on (loopback by default)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Read this directory instead of the cgroup2 mount (as `cgtop --root`)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Expose at most N levels below the start group
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
}

pub fn main(_a: ServeArgs) -> ExitCode {
    super::complain("serve: not built yet");
    ExitCode::FAILURE
}

pub fn once(_opts: &Options, _output: Option<&Path>) -> ExitCode {
    super::complain("--openmetrics: not built yet");
    ExitCode::FAILURE
}
