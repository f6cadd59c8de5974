//! `cgtop completions SHELL` and `cgtop man`: made from the same clap
//! definition as the help, so they cannot drift from the real options
//! (tests/cli/native.rs checks the committed copies are current).

use clap_mangen::roff::{bold, roman, Roff};
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
    if shell == Shell::Fish {
        // clap_complete's fish script offers no values for a positional
        // argument (`cgtop completions <TAB>`): add them, from the same
        // definition
        for sub in cmd.get_subcommands() {
            for arg in sub.get_positionals() {
                let values: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .filter(|v| !v.is_hide_set())
                    .map(|v| v.get_name().to_owned())
                    .collect();
                if !values.is_empty() {
                    out.extend_from_slice(
                        format!(
                            "complete -c cgtop -n \"__fish_cgtop_using_subcommand {}\" -f -a \"{}\"\n",
                            sub.get_name(),
                            values.join(" ")
                        )
                        .as_bytes(),
                    );
                }
            }
        }
    }
    out
}

/// The man page, roff: clap's NAME, SYNOPSIS, DESCRIPTION and OPTIONS
/// of `cgtop`, each subcommand's synopsis and options under COMMANDS (one
/// page, so `man cgtop` has all of it), the keys of every screen from the
/// one keymap, then the environment, files and exit status. Made from the
/// same definitions as `--help` and the help screen; the committed copy
/// (assets/man/cgtop.1) is checked against it by tests/cli/native.rs.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut cmd = super::command();
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone()).date("");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    out.extend_from_slice(roff.to_roff().as_bytes());
    for sub in cmd.get_subcommands() {
        let name = format!("cgtop {}", sub.get_name());
        let mut r = Roff::new();
        r.control("SS", [name.as_str()]);
        if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
            r.text([roman(about.to_string())]);
        }
        out.extend_from_slice(r.to_roff().as_bytes());
        let sub_man = clap_mangen::Man::new(sub.clone());
        let mut part = Vec::new();
        sub_man.render_synopsis_section(&mut part)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            sub_man.render_options_section(&mut part)?;
        }
        // the subcommand's own sections become paragraphs of COMMANDS
        for line in String::from_utf8_lossy(&part).lines() {
            let line = if line.starts_with(".SH ") {
                ".PP"
            } else {
                line
            };
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    out.extend_from_slice(extra_sections().to_roff().as_bytes());
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// KEYS, ENVIRONMENT, FILES, EXIT STATUS and SEE ALSO.
fn extra_sections() -> Roff {
    use crate::app::keymap::{help_lines, Scope};
    let mut r = Roff::new();
    r.control("SH", ["KEYS"]);
    r.text([roman(
        "The full-screen view's keys, screen by screen (? shows the same list in cgtop).",
    )]);
    for scope in Scope::ALL {
        r.control("SS", [scope.title()]);
        for (keys, what) in help_lines(scope) {
            r.control("TP", ["14"]);
            r.text([bold(keys)]);
            r.text([roman(what)]);
        }
    }
    r.control("SS", ["Keys from htop and systemd-cgtop"]);
    r.text([roman(
        "What the main view says when one is pressed (a key bound otherwise here: once a session).",
    )]);
    for h in crate::app::keymap::HINTS {
        let line = crate::app::keymap::hint_words(h);
        let (key, what) = line.split_once(": ").unwrap_or(("", &line));
        r.control("TP", ["14"]);
        r.text([bold(key)]);
        r.text([roman(what)]);
    }
    r.control("SH", ["ENVIRONMENT"]);
    for (name, what) in [
        (
            "NO_COLOR",
            "When set (to anything), no colour at all: emphasis by reverse video, underline and bold.",
        ),
        (
            "XDG_CONFIG_HOME",
            "Where config.toml is looked for: $XDG_CONFIG_HOME/cgtop/config.toml, else $HOME/.config/cgtop/config.toml.",
        ),
        (
            "XDG_STATE_HOME",
            "Where the action log is kept: $XDG_STATE_HOME/cgtop/actions.log, else $HOME/.local/state/cgtop/actions.log.",
        ),
        ("HOME", "The fallback for both."),
    ] {
        r.control("TP", []);
        r.text([bold(name)]);
        r.text([roman(what)]);
    }
    r.control("SH", ["FILES"]);
    for (name, what) in [
        (
            "~/.config/cgtop/config.toml",
            "Settings: refresh interval, columns, sort, colours, keys (see README, \"Configuration\").",
        ),
        (
            "~/.local/state/cgtop/actions.log",
            "Every write cgtop made: the time, the group, the file, the old and new value, the result.",
        ),
        (
            "/proc/self/mountinfo",
            "Where cgroup2 and each cgroup v1 hierarchy are mounted; no mount point is assumed.",
        ),
    ] {
        r.control("TP", []);
        r.text([bold(name)]);
        r.text([roman(what)]);
    }
    r.control("SH", ["EXIT STATUS"]);
    for (code, what) in [
        ("0", "Success."),
        ("1", "A failure while running (the message says which)."),
        (
            "2",
            "Bad arguments, a bad config file, or no usable cgroup hierarchy.",
        ),
        (
            "128+N",
            "Ended by signal N: 143 for SIGTERM, 129 for SIGHUP or a hung-up terminal.",
        ),
    ] {
        r.control("TP", []);
        r.text([bold(code)]);
        r.text([roman(what)]);
    }
    r.control("SH", ["SEE ALSO"]);
    r.text([roman(
        "systemd-cgtop(1), systemctl(1), systemd.resource-control(5), htop(1); the kernel's Documentation/admin-guide/cgroup-v2.rst",
    )]);
    r
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
