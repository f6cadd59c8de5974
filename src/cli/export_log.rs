//! `cgtop export-log`: the action log as a shell script (issue 10).
//! Placeholder of the foundation commit: the script work replaces it.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ExportLogArgs {
    /// The action log to read (default: the one cgtop writes,
    /// $XDG_STATE_HOME/cgtop/actions.log)
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

pub fn main(_a: ExportLogArgs) -> ExitCode {
    super::complain("export-log: not built yet");
    ExitCode::FAILURE
}
