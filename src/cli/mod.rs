//! The command line: its definition (clap's derive, the one source of the
//! help, the man page and the shell completions) and `main`, which parses
//! it, runs, and maps errors to exit codes (2: no usable hierarchy, bad
//! arguments or a bad config file, 1: anything else, 128 + N after signal
//! N: 143 for SIGTERM, 129 for SIGHUP or a hung-up terminal, as a shell
//! reports a program that a signal killed). Each subcommand's glue is a
//! file of its own here.

pub mod export_log;
pub mod native;
pub mod serve;

use crate::model::files::config::{Config, ConfigError};
use crate::model::tree::text::escape;
use crate::model::write::input::parse_size;
use crate::model::GroupPath;
use crate::options::{Options, Output, RecordOptions, SortBy, ViewSettings};
use crate::render::columns::Column;
use crate::render::order::Order;
use crate::run::{self, SetupError};
use crate::source::config::{self, LoadError};
use crate::source::scan::{self, ScanConfig};
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
#[derive(clap::Parser, Debug)]
#[command(
    name = "cgtop",
    version,
    about,
    long_about,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,

    /// Start at this group, a path relative to the hierarchy (e.g.
    /// system.slice or /system.slice); `..` is refused. A group named
    /// like a command is given as /record (or after --)
    group: Option<OsString>,

    /// A second GROUP: refused with the flag to use instead
    #[arg(hide = true)]
    more_groups: Vec<OsString>,

    /// Read this directory instead of the cgroup2 mount: a delegated
    /// subtree, or any tree laid out like cgroupfs (a fixture)
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Seconds between refreshes (0.1 to 3600)
    #[arg(short, long, value_name = "SECS", default_value = "1")]
    delay: String,

    /// Show at most N levels below the start group
    // a number, checked in `main` so that `--depth -1` is refused in one
    // line as every other bad value is, not taken for an option
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    depth: Option<String>,

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

    /// Sort by COLUMN: name, or a column as --columns names it (default
    /// cpu, highest first); the tree sorts each group's children
    #[arg(long, value_name = "COLUMN")]
    sort: Option<String>,

    /// Sort the other way: lowest first (with --sort name, Z to A)
    #[arg(long)]
    reverse: bool,

    /// Every group in one list, sorted, each with its whole path, instead
    /// of the tree (the view's F5; -b prints it so)
    #[arg(long)]
    flat: bool,

    /// Name groups by their kernel names (docker-<id>.scope), not by who
    /// they are (web-1 · docker 046c7a5b3d2e): the view's w; for scripts
    /// that read -b's names
    #[arg(long)]
    kernel_names: bool,

    /// Print one OpenMetrics exposition of GROUP and below and exit (for
    /// node_exporter's textfile collector, or a cron job); see README
    /// "Prometheus"
    #[arg(long, conflicts_with_all = ["json", "batch"])]
    openmetrics: bool,

    /// With --openmetrics: write FILE atomically (a temporary file beside
    /// it, then rename) instead of printing
    #[arg(short, long, value_name = "FILE", requires = "openmetrics")]
    output: Option<PathBuf>,

    /// With --openmetrics: the exposition format. `text` is the Prometheus
    /// text format 0.0.4, which node_exporter's textfile collector reads
    /// (it parses *.prom files as text and refuses OpenMetrics)
    #[arg(long, value_enum, value_name = "FORMAT", requires = "openmetrics")]
    exposition: Option<serve::Exposition>,

    /// Only the groups whose name contains PATTERN (case aside, as the
    /// full-screen view's / filter matches), their ancestors and their
    /// subtrees: in -b, --json and --openmetrics; the full-screen view
    /// starts with it as its / filter
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,

    /// Start at the group that holds process PID: selected, its path
    /// unfolded, the process highlighted on the process page; with -b or
    /// --json, that group alone (and --depth levels below it). Refused
    /// (exit 2) for a thread id, a process that is not there, or one
    /// outside the view
    #[arg(long, value_name = "PID", conflicts_with = "openmetrics")]
    pid: Option<u32>,

    /// Read settings from FILE instead of $XDG_CONFIG_HOME/cgtop/config.toml
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,

    /// Read no config file: every setting at its default
    #[arg(long)]
    no_config: bool,
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// Record the tree's figures, limits and the processes of the busiest
    /// groups to FILE (zstd frames, flushed every refresh), for `cgtop
    /// replay` here or on another machine
    Record(RecordArgs),
    /// Print a recording's refreshes as the live -b or --json run printed
    /// them
    Replay(ReplayArgs),
    /// Serve /metrics over HTTP for Prometheus (OpenMetrics or the
    /// Prometheus text format by content negotiation); reads only, never
    /// writes to the hierarchy
    Serve(serve::ServeArgs),
    /// Write the changes in the action log as a reviewable shell script,
    /// with an undo script beside it
    ExportLog(export_log::ExportLogArgs),
    /// Print the shell completion script for SHELL (bash, zsh, fish)
    Completions(native::CompletionsArgs),
    /// Print the man page (roff) to stdout
    Man,
}

#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// Record this group and below (as `cgtop GROUP`)
    group: Option<OsString>,

    /// A second GROUP: refused with the flag to use instead
    #[arg(hide = true)]
    more_groups: Vec<OsString>,

    /// Record only the groups whose name contains PATTERN (case aside, as
    /// the / filter matches), their ancestors and their subtrees
    #[arg(long, value_name = "PATTERN")]
    filter: Option<String>,

    /// The recording: a new file (mode 0600), never a symlink; an existing
    /// one is refused unless --append
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,

    /// Add to FILE if it exists (a regular file of this user's with one link)
    #[arg(long)]
    append: bool,

    /// Seconds between samples (0.1 to 3600)
    #[arg(short, long, value_name = "SECS", default_value = "5")]
    delay: String,

    /// Stop after N samples past the first (as -b -n N prints N)
    #[arg(short = 'n', long, value_name = "N")]
    iterations: Option<u64>,

    /// Keep FILE under SIZE (10M, 1G): at the cap FILE becomes FILE.1
    /// (replacing an older FILE.1) and a new FILE begins, so at most about
    /// twice SIZE is on disk; with --stop, the recording ends instead
    #[arg(long, value_name = "SIZE")]
    max_size: Option<String>,

    /// With --max-size: stop at the cap instead of rotating
    #[arg(long, requires = "max_size")]
    stop: bool,

    /// Do not record the processes of the busiest groups
    #[arg(long)]
    no_processes: bool,

    /// Also print each refresh recorded as -b prints it
    #[arg(short, long, conflicts_with = "json")]
    batch: bool,

    /// Also print each refresh recorded as --json --brief prints it
    #[arg(long)]
    json: bool,

    /// Sort -b's table by COLUMN (as `cgtop --sort`)
    #[arg(long, value_name = "COLUMN")]
    sort: Option<String>,

    /// Sort -b's table the other way (as `cgtop --reverse`)
    #[arg(long)]
    reverse: bool,

    /// Print -b's table as one list with whole paths (as `cgtop --flat`)
    #[arg(long)]
    flat: bool,

    /// Read this directory instead of the cgroup2 mount (as `cgtop --root`)
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Record at most N levels below the start group
    #[arg(long, value_name = "N")]
    depth: Option<usize>,

    /// Keep at most N files open between samples
    #[arg(long, value_name = "N")]
    max_kept_fds: Option<usize>,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// A recording made by `cgtop record`
    file: PathBuf,

    /// Print the refreshes as -b text
    #[arg(short, long, conflicts_with = "json")]
    batch: bool,

    /// Print the refreshes as JSON Lines, as `cgtop --json --brief` printed
    /// them live (a recording keeps what --brief prints)
    #[arg(long)]
    json: bool,

    /// Accepted for symmetry with `cgtop --json --brief`: replay --json
    /// always prints what --brief prints
    #[arg(long, requires = "json")]
    brief: bool,

    /// Print at most N refreshes
    #[arg(short = 'n', long, value_name = "N")]
    iterations: Option<u64>,

    /// The figure columns of -b (as `cgtop --columns`)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    columns: Option<Vec<String>>,

    /// Sort -b's table by COLUMN (as `cgtop --sort`)
    #[arg(long, value_name = "COLUMN")]
    sort: Option<String>,

    /// Sort -b's table the other way (as `cgtop --reverse`)
    #[arg(long)]
    reverse: bool,

    /// Print -b's table as one list with whole paths (as `cgtop --flat`)
    #[arg(long)]
    flat: bool,
}

/// Prints an error line; never panics (`eprintln!` does when stderr is a
/// tty that hung up).
pub(crate) fn complain(text: &str) {
    let _ = writeln!(std::io::stderr(), "cgtop: {}", without_os_error(text));
}

/// `text` without std's " (os error N)" tails: the kernel's words are
/// already there, and the number says nothing more to a reader.
pub(crate) fn without_os_error(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" (os error ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " (os error ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(')') {
            rest = &after[digits + 1..];
        } else {
            out.push_str(" (os error ");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Refuses a second GROUP in one line that names what to use instead:
/// cgtop shows one subtree, and several are a parent's with --filter.
pub(crate) fn one_group(group: Option<&OsString>, more: &[OsString]) -> Result<(), ExitCode> {
    let (Some(first), Some(second)) = (group, more.first()) else {
        return Ok(());
    };
    complain(&format!(
        "one GROUP at a time ({} and {} given): start at a group above them and name them \
         with --filter PATTERN",
        escape(first.as_bytes()),
        escape(second.as_bytes())
    ));
    Err(ExitCode::from(2))
}

/// GROUP as given (its bytes: a group name need not be UTF-8); `..`
/// would lead out of the hierarchy, so it is refused rather than resolved.
pub(crate) fn parse_group(g: Option<&OsString>) -> Result<GroupPath, ExitCode> {
    match g {
        None => Ok(GroupPath::root()),
        Some(g) => GroupPath::parse(g.as_bytes()).map_err(|e| {
            complain(&format!("GROUP {}: {e}", escape(g.as_bytes())));
            ExitCode::from(2)
        }),
    }
}

pub(crate) fn parse_columns(names: Option<&Vec<String>>) -> Result<Vec<Column>, ExitCode> {
    let Some(names) = names else {
        return Ok(Column::DEFAULT.to_vec());
    };
    let mut cols = Vec::new();
    for n in names {
        let Some(c) = Column::from_name(n) else {
            let known: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
            complain(&format!(
                "--columns: no column \"{}\"; the columns are {}",
                escape(n.as_bytes()),
                known.join(",")
            ));
            return Err(ExitCode::from(2));
        };
        cols.push(c);
    }
    Ok(Column::in_order(&cols))
}

/// `--depth N`: a number of levels, 0 or more.
fn parse_depth(d: Option<&str>) -> Result<Option<usize>, ExitCode> {
    let Some(d) = d else { return Ok(None) };
    d.trim().parse().map(Some).map_err(|_| {
        complain(&format!(
            "--depth: \"{}\" is not a number of levels (0 or more; 0: the start group alone)",
            escape(d.as_bytes())
        ));
        ExitCode::from(2)
    })
}

/// `--sort`, `--reverse` and `--flat`: the first order of the view and
/// `-b`'s, over the settings file's `sort` and `sort_descending`. JSON
/// lists its groups parents first by path whatever they say (a stable
/// order for scripts: sort with jq), so there they are refused rather
/// than ignored.
fn order_flags(cli: &Cli, columns: &[Column], view: &mut ViewSettings) -> Result<(), ExitCode> {
    let flags = SortFlags {
        sort: cli.sort.as_deref(),
        reverse: cli.reverse,
        flat: cli.flat,
        json: cli.json || cli.openmetrics,
    };
    sort_flags(&flags, columns, view)?;
    view.kernel_names = cli.kernel_names;
    Ok(())
}

/// `--sort`, `--reverse` and `--flat` as given to the view, `-b`,
/// `record` and `replay` (`json`: the output is JSON, which refuses them).
struct SortFlags<'a> {
    sort: Option<&'a str>,
    reverse: bool,
    flat: bool,
    json: bool,
}

/// `-b`'s order in `record` and `replay`: [`SortFlags`] over the default.
fn table_order(flags: &SortFlags<'_>, columns: &[Column]) -> Result<Order, ExitCode> {
    let mut view = ViewSettings::default();
    sort_flags(flags, columns, &mut view)?;
    Ok(view.order())
}

/// [`order_flags`]' rule, for any command that prints `-b`'s table.
fn sort_flags(
    cli: &SortFlags<'_>,
    columns: &[Column],
    view: &mut ViewSettings,
) -> Result<(), ExitCode> {
    let refuse = |what: String| {
        complain(&what);
        ExitCode::from(2)
    };
    if cli.json && (cli.sort.is_some() || cli.reverse || cli.flat) {
        return Err(refuse(
            "--sort, --reverse and --flat order -b's table and the view; --json and --openmetrics list groups parents first by path".into(),
        ));
    }
    let by = match cli.sort {
        None => None,
        Some(s) => match crate::render::order::SortBy::from_name(s) {
            None => {
                let known: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
                return Err(refuse(format!(
                    "--sort: no column \"{}\"; sort by name or by one of {}",
                    escape(s.as_bytes()),
                    known.join(",")
                )));
            }
            Some(SortBy::Column(c)) if !columns.contains(&c) => {
                return Err(refuse(format!(
                    "--sort {}: the column is not shown (add it with --columns)",
                    c.name()
                )));
            }
            Some(by) => Some(by),
        },
    };
    if by.is_some() || cli.reverse {
        let by = by.or(view.sort).unwrap_or(SortBy::Column(Column::Cpu));
        view.sort = Some(by);
        view.sort_descending = Some(by.descending_by_default() != cli.reverse);
    }
    view.flat = cli.flat;
    Ok(())
}

/// The exit code of a run's result.
pub(crate) fn exit_code(res: anyhow::Result<Option<i32>>) -> ExitCode {
    match res {
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

fn record(a: RecordArgs) -> ExitCode {
    let interval = match crate::app::parse_interval(&a.delay) {
        Ok(d) => d,
        Err(e) => {
            complain(&e);
            return ExitCode::from(2);
        }
    };
    let max_size = match a.max_size.as_deref().map(|s| parse_size("--max-size", s)) {
        None => None,
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => {
            complain(&e.to_string());
            return ExitCode::from(2);
        }
    };
    if let Err(c) = one_group(a.group.as_ref(), &a.more_groups) {
        return c;
    }
    let start = match parse_group(a.group.as_ref()) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let output = if a.json {
        Output::Json
    } else if a.batch {
        Output::Text
    } else {
        // nothing printed
        Output::Tui
    };
    let opts = Options {
        start,
        root: a.root,
        interval,
        depth: a.depth,
        output,
        iterations: a.iterations,
        read_only: true,
        mouse: false,
        machine_cpu: false,
        max_kept_fds: Some(scan::fd_budget(
            a.max_kept_fds.unwrap_or(ScanConfig::default().max_kept),
        )),
        brief: true,
        columns: Column::DEFAULT.to_vec(),
        filter: a.filter.filter(|f| !f.is_empty()),
    };
    let flags = SortFlags {
        sort: a.sort.as_deref(),
        reverse: a.reverse,
        flat: a.flat,
        json: a.json,
    };
    let order = match table_order(&flags, &Column::DEFAULT) {
        Ok(o) => o,
        Err(c) => return c,
    };
    if !a.batch && !a.json && (a.sort.is_some() || a.reverse || a.flat) {
        complain("record: --sort, --reverse and --flat order the table -b prints (record -b, or replay -b later)");
        return ExitCode::from(2);
    }
    let ro = RecordOptions {
        file: a.output,
        append: a.append,
        max_size,
        stop_at_max: a.stop,
        processes: !a.no_processes,
        order,
    };
    exit_code(run::run_record(&opts, &ro))
}

fn replay(a: &ReplayArgs) -> ExitCode {
    let columns = match parse_columns(a.columns.as_ref()) {
        Ok(c) => c,
        Err(c) => return c,
    };
    let flags = SortFlags {
        sort: a.sort.as_deref(),
        reverse: a.reverse,
        flat: a.flat,
        json: a.json,
    };
    let order = match table_order(&flags, &columns) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let output = if a.json {
        Output::Json
    } else if a.batch || !std::io::stdout().is_terminal() {
        Output::Text
    } else if a.sort.is_some() || a.reverse || a.flat {
        complain("replay: --sort, --reverse and --flat order the table -b prints; the full-screen replay sorts with < > r and turns flat with F5");
        return ExitCode::from(2);
    } else {
        // the full-screen replay is the view: the settings file's keys and
        // colours (from the environment's place) apply to it too
        let colours = match env_keys_and_colours() {
            Ok(c) => c,
            Err(e) => {
                complain(&e.to_string());
                return ExitCode::from(2);
            }
        };
        return exit_code(run::run_replay_tui_with(&a.file, &colours));
    };
    exit_code(run::run_replay(&a.file, output, a.iterations, (&columns, &order)).map(|()| None))
}

/// The environment's settings file's keys, installed, and colours (for
/// `cgtop replay`'s view, which has no --config).
fn env_keys_and_colours() -> Result<crate::model::files::config::Colours, LoadError> {
    let euid = rustix::process::geteuid().as_raw();
    // an unreadable default place is no settings file (the replay's view
    // has no status line before its first frame: the defaults, unsaid)
    let env = config::load_env(&config::env_candidates(euid), euid)?;
    let (Some(p), cfg) = (env.path, env.config) else {
        return Ok(crate::model::files::config::Colours::default());
    };
    let keys = crate::app::keymap::build(&cfg.keys).map_err(|e| LoadError {
        path: p,
        why: config::Why::Bad(e),
    })?;
    crate::app::keymap::install(keys);
    Ok(cfg.colours)
}

/// The settings file's path and what it says: `--no-config` none,
/// `--config FILE` that one (which must exist and be read), else the
/// environment's (missing or unreadable: every default, the latter with
/// the note to say once).
fn load_config(cli: &Cli) -> Result<config::EnvSettings, LoadError> {
    let euid = rustix::process::geteuid().as_raw();
    let named = |path, config| config::EnvSettings {
        path,
        config,
        unreadable: None,
    };
    if cli.no_config {
        return Ok(named(None, Config::default()));
    }
    if let Some(file) = &cli.config {
        return config::load(file, euid, true).map(|c| named(Some(file.clone()), c));
    }
    config::load_env(&config::env_candidates(euid), euid)
}

/// What the command line and the settings file say together: a flag
/// given on the command line wins over the file, the file over the
/// built-in default. The file's names are checked here (columns, keys,
/// the interval's bounds), each error with its line and key.
struct Settled {
    interval: std::time::Duration,
    columns: Vec<Column>,
    machine_cpu: bool,
    view: ViewSettings,
    keymap: Vec<crate::app::keymap::Binding>,
}

fn settle(
    cli: &Cli,
    cli_columns: Option<Vec<Column>>,
    delay_given: bool,
    file: Option<PathBuf>,
    cfg: &Config,
) -> Result<Settled, ConfigError> {
    use crate::model::files::config::CpuUnit;
    let interval = match (&cfg.interval, delay_given) {
        (Some(i), false) => crate::app::parse_interval(&i.value.to_string())
            .map_err(|e| i.error(e.trim_start_matches("interval: ")))?,
        _ => crate::app::parse_interval(&cli.delay).map_err(|e| ConfigError {
            line: None,
            key: None,
            what: e,
        })?,
    };
    let file_columns = match &cfg.columns {
        None => None,
        Some(list) => {
            let mut cols = Vec::new();
            for n in &list.value {
                let Some(c) = Column::from_name(&n.value) else {
                    let known: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
                    return Err(n.error(format!(
                        "no column {:?}; the columns are {}",
                        n.value,
                        known.join(", ")
                    )));
                };
                if cols.contains(&c) {
                    return Err(n.error(format!("{:?} is named twice", n.value)));
                }
                cols.push(c);
            }
            Some(cols)
        }
    };
    let file_or_default = file_columns
        .clone()
        .unwrap_or_else(|| Column::DEFAULT.to_vec());
    let sort = match &cfg.sort {
        None => None,
        Some(s) if s.value == "name" => Some(SortBy::Name),
        Some(s) => {
            let Some(c) = Column::from_name(&s.value) else {
                return Err(s.error(format!(
                    "no column {:?}: write \"name\" or a column's name (\"cpu\")",
                    s.value
                )));
            };
            if !file_or_default.contains(&c) {
                return Err(s.error(format!(
                    "{:?} is not among the columns shown: add it to `columns`",
                    s.value
                )));
            }
            Some(SortBy::Column(c))
        }
    };
    // --columns wins; a sort by a column it leaves out is dropped, as the
    // chooser drops it
    let (columns, sort) = match cli_columns {
        Some(c) => {
            let keep = match sort {
                Some(SortBy::Column(s)) if !c.contains(&s) => None,
                s => s,
            };
            (c, keep)
        }
        None => (file_or_default, sort),
    };
    let keymap = crate::app::keymap::build(&cfg.keys)?;
    Ok(Settled {
        interval,
        columns,
        machine_cpu: cli.machine_cpu || cfg.cpu == Some(CpuUnit::Machine),
        view: ViewSettings {
            sort,
            sort_descending: cfg.sort_descending,
            colours: cfg.colours,
            config_file: file,
            notice: None,
            flat: false,
            kernel_names: false,
            pid: cli.pid,
        },
        keymap,
    })
}

/// The whole program: `cgtop`'s `main`.
pub fn main() -> ExitCode {
    crate::term::pin_path();
    let matches = command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let delay_given = matches.value_source("delay") == Some(clap::parser::ValueSource::CommandLine);
    match cli.cmd {
        Some(Cmd::Record(a)) => return record(a),
        Some(Cmd::Replay(a)) => return replay(&a),
        Some(Cmd::Serve(a)) => return serve::main(a),
        Some(Cmd::ExportLog(a)) => return export_log::main(&a),
        Some(Cmd::Completions(a)) => return native::completions(&a),
        Some(Cmd::Man) => return native::man(),
        None => {}
    }
    if let Err(c) = one_group(cli.group.as_ref(), &cli.more_groups) {
        return c;
    }
    // a bad --columns or -d is the command line's error, said as before
    let cli_columns = match cli.columns.as_ref().map(|c| parse_columns(Some(c))) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(c)) => return c,
    };
    if delay_given {
        if let Err(e) = crate::app::parse_interval(&cli.delay) {
            complain(&e);
            return ExitCode::from(2);
        }
    }
    let mut unread_note = None;
    let settled = load_config(&cli).and_then(|env| {
        unread_note = env.unreadable.as_ref().map(LoadError::as_unread_note);
        let file = env.path;
        settle(&cli, cli_columns, delay_given, file.clone(), &env.config).map_err(|e| LoadError {
            path: file.unwrap_or_default(),
            why: config::Why::Bad(e),
        })
    });
    let mut settled = match settled {
        Ok(s) => s,
        Err(e) => {
            complain(&e.to_string());
            return ExitCode::from(2);
        }
    };
    // the view runs on this thread: its keys from here on
    crate::app::keymap::install(settled.keymap);
    let output = if cli.json {
        Output::Json
    } else if cli.batch || !std::io::stdout().is_terminal() {
        Output::Text
    } else {
        Output::Tui
    };
    // said once: the TUI's status line, or stderr beside any other output
    match (output, unread_note) {
        (Output::Tui, note) if !cli.openmetrics => settled.view.notice = note,
        (_, Some(note)) => complain(&note),
        (_, None) => {}
    }
    let start = match parse_group(cli.group.as_ref()) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let depth = match parse_depth(cli.depth.as_deref()) {
        Ok(d) => d,
        Err(c) => return c,
    };
    if let Err(c) = order_flags(&cli, &settled.columns, &mut settled.view) {
        return c;
    }
    let opts = Options {
        start,
        root: cli.root,
        interval: settled.interval,
        depth,
        output,
        iterations: cli.iterations,
        read_only: cli.read_only,
        mouse: cli.mouse,
        machine_cpu: settled.machine_cpu,
        // the descriptor budget is decided here, once: RLIMIT_NOFILE is
        // raised as far as it needs, and the scanner is given the result
        max_kept_fds: Some(scan::fd_budget(
            cli.max_kept_fds.unwrap_or(ScanConfig::default().max_kept),
        )),
        brief: cli.brief,
        columns: settled.columns,
        filter: cli.filter.clone().filter(|f| !f.is_empty()),
    };
    if cli.openmetrics {
        let format = cli.exposition.unwrap_or(serve::Exposition::Openmetrics);
        return serve::once(&opts, cli.filter, cli.output.as_deref(), format);
    }
    exit_code(run::run_with(&opts, &settled.view))
}

/// The command line's definition, for the man page and the completions.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
