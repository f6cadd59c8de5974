//! The `cgtop` command: parse the command line, run, map errors to exit
//! codes (2: no usable hierarchy or bad arguments, 1: anything else,
//! 128 + N after signal N: 143 for SIGTERM, 129 for SIGHUP or a hung-up
//! terminal, as a shell reports a program that a signal killed).

use cgtop::model::text::escape;
use cgtop::model::GroupPath;
use cgtop::options::{Options, Output};
use cgtop::render::columns::Column;
use cgtop::run::{self, SetupError};
use cgtop::source::scan::{self, ScanConfig};
use clap::Parser;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// An htop-like view of the cgroup v2 tree: live CPU, memory, IO,
/// processes and pressure for every group.
///
/// Without --root, cgroup2 is found in /proc/self/mountinfo (pure v2 at
/// /sys/fs/cgroup, or hybrid at /sys/fs/cgroup/unified). When stdout is
/// not a terminal, cgtop behaves as --batch.
#[derive(Parser, Debug)]
#[command(version, about, long_about)]
struct Cli {
    /// Start at this group, a path relative to the hierarchy (e.g.
    /// system.slice or /system.slice); `..` is refused
    group: Option<OsString>,

    /// Read this directory instead of the cgroup2 mount: a delegated
    /// subtree, or any tree laid out like cgroupfs (a fixture)
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Seconds between refreshes (0.1 to 3600)
    #[arg(short, long, value_name = "SECS", default_value = "1")]
    delay: String,

    /// Show at most N levels below the start group
    #[arg(long, value_name = "N")]
    depth: Option<usize>,

    /// Print plain text refreshes (like top -b) instead of the full-screen view
    #[arg(short, long)]
    batch: bool,

    /// Stop after N refreshes (batch and JSON)
    #[arg(short = 'n', long, value_name = "N")]
    iterations: Option<u64>,

    /// Print one JSON object per refresh (JSON Lines) with every group's
    /// raw counters, limits and rates; see README "JSON output"
    #[arg(long)]
    json: bool,

    /// With --json: only what the tree shows (cpu.stat, memory.current,
    /// io.stat, pids, cgroup.events) and the rates; no limits, pressure or
    /// memory.stat. Reads 5 files a group through kept descriptors instead
    /// of about 25 opened anew: for big hosts and short intervals
    #[arg(long, requires = "json")]
    brief: bool,

    /// Never write to the hierarchy (every changing action is disabled)
    #[arg(long)]
    read_only: bool,

    /// Capture the mouse (off by default so that the terminal's own
    /// selection and copy keep working)
    #[arg(long)]
    mouse: bool,

    /// Show CPU % as a share of the whole machine instead of one core
    #[arg(long)]
    machine_cpu: bool,

    /// Keep at most N files open between refreshes (each costs the kernel
    /// about a page of memory; beyond it files are opened per read)
    #[arg(long, value_name = "N")]
    max_kept_fds: Option<usize>,

    /// The figure columns of the tree and of --batch, comma-separated:
    /// cpu, thr (throttled %), mem, mempct (% of memory.max), swap, read,
    /// write, pids, psi (highest pressure some avg10). Default:
    /// cpu,mem,read,write,pids. In the full-screen view F2 (or C) chooses
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    columns: Option<Vec<String>>,
}

/// Prints an error line; never panics (`eprintln!` does when stderr is a
/// tty that hung up).
fn complain(text: &str) {
    let _ = writeln!(std::io::stderr(), "cgtop: {text}");
}

fn main() -> ExitCode {
    cgtop::term::pin_path();
    let cli = Cli::parse();
    let interval = match cgtop::app::parse_interval(&cli.delay) {
        Ok(d) => d,
        Err(e) => {
            complain(&e);
            return ExitCode::from(2);
        }
    };
    let output = if cli.json {
        Output::Json
    } else if cli.batch || !std::io::stdout().is_terminal() {
        Output::Text
    } else {
        Output::Tui
    };
    // the bytes as given (a group name need not be UTF-8); `..` would lead
    // out of the hierarchy, so it is refused rather than resolved
    let start = match &cli.group {
        None => GroupPath::root(),
        Some(g) => match GroupPath::parse(g.as_bytes()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("cgtop: GROUP {}: {e}", escape(g.as_bytes()));
                return ExitCode::from(2);
            }
        },
    };
    let columns = match &cli.columns {
        None => Column::DEFAULT.to_vec(),
        Some(names) => {
            let mut cols = Vec::new();
            for n in names {
                let Some(c) = Column::from_name(n) else {
                    let known: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
                    complain(&format!(
                        "--columns: no column {:?}; the columns are {}",
                        escape(n.as_bytes()),
                        known.join(",")
                    ));
                    return ExitCode::from(2);
                };
                cols.push(c);
            }
            Column::in_order(&cols)
        }
    };
    let opts = Options {
        start,
        root: cli.root,
        interval,
        depth: cli.depth,
        output,
        iterations: cli.iterations,
        read_only: cli.read_only,
        mouse: cli.mouse,
        machine_cpu: cli.machine_cpu,
        // the descriptor budget is decided here, once: RLIMIT_NOFILE is
        // raised as far as it needs, and the scanner is given the result
        max_kept_fds: Some(scan::fd_budget(
            cli.max_kept_fds.unwrap_or(ScanConfig::default().max_kept),
        )),
        brief: cli.brief,
        columns,
    };
    match run::run(&opts) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(sig)) => ExitCode::from(128u8.saturating_add(u8::try_from(sig).unwrap_or(0))),
        Err(e) => {
            complain(&format!("{e:#}"));
            if e.downcast_ref::<SetupError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
