//! `cgtop completions SHELL` and `cgtop man`: made from the same clap
//! definition as the help, so they cannot drift from the real options
//! (tests/native.rs checks the committed copies are current).

use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh or fish
    pub shell: Shell,
}

/// The shells a completion script is made for.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub const ALL: [Self; 3] = [Self::Bash, Self::Zsh, Self::Fish];

    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Fish => "fish",
        }
    }
}

/// The completion script for `shell`.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut cmd = super::command();
    let mut out = Vec::new();
    let sh = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(sh, &mut cmd, "cgtop", &mut out);
    out
}

/// The man page, roff.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::command()).render(&mut out)?;
    Ok(out)
}

fn print(bytes: &[u8]) -> ExitCode {
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            super::complain(&format!("stdout: {e}"));
            ExitCode::FAILURE
        }
    }
}

pub fn completions(a: &CompletionsArgs) -> ExitCode {
    print(&completion_script(a.shell))
}

pub fn man() -> ExitCode {
    match man_page() {
        Ok(b) => print(&b),
        Err(e) => {
            super::complain(&format!("man page: {e}"));
            ExitCode::FAILURE
        }
    }
}
