//! The `cgtop` command: all of it is [`cgtop::cli::main`], so that the
//! man page and the completions are made from the same definition.

use std::process::ExitCode;

fn main() -> ExitCode {
    cgtop::cli::main()
}
