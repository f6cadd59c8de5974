//! `cgtop serve` and `cgtop --openmetrics`: the command line of the
//! Prometheus exporter (`run::serve` does the work).

use super::{complain, exit_code, parse_group};
use crate::options::Options;
use crate::run::serve::{self as export, export_options, ExportOptions, ServeConfig};
use crate::source::scan;
use std::ffi::OsString;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Serve this group and below (as `cgtop GROUP`)
    pub group: Option<OsString>,

    /// The address to listen on: HOST:PORT, or :PORT for every address
    /// (loopback 127.0.0.1:19586 by default; expose it to the network
    /// only behind a firewall: group names are visible)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Read this directory instead of the cgroup2 mount (as `cgtop --root`)
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Expose at most N levels below the start group
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,

    /// Expose only the groups whose name contains PATTERN (case aside, as
    /// the full-screen view's / filter matches), their ancestors and
    /// their subtrees
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,

    /// Read the hierarchy at most once per SECS (0 to 3600); scrapes
    /// within it share the last reading
    #[arg(long, value_name = "SECS", default_value = "1")]
    pub min_interval: String,

    /// Keep at most N files open between readings
    #[arg(long, value_name = "N")]
    pub max_kept_fds: Option<usize>,
}

/// `--listen`'s text as an address: `:PORT` is every address.
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let full = if s.starts_with(':') {
        format!("0.0.0.0{s}")
    } else {
        s.to_owned()
    };
    full.to_socket_addrs()
        .map_err(|e| format!("--listen {s:?}: {e} (give HOST:PORT, e.g. 127.0.0.1:19586)"))?
        .next()
        .ok_or_else(|| format!("--listen {s:?}: no address"))
}

fn parse_min_interval(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=3600.0).contains(&v) => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!(
            "--min-interval {s:?}: give seconds from 0 to 3600 (e.g. 1, 0.5)"
        )),
    }
}

pub fn main(a: ServeArgs) -> ExitCode {
    let listen = match parse_listen(a.listen.as_deref().unwrap_or(export::DEFAULT_LISTEN)) {
        Ok(l) => l,
        Err(e) => {
            complain(&e);
            return ExitCode::from(2);
        }
    };
    let min_interval = match parse_min_interval(&a.min_interval) {
        Ok(d) => d,
        Err(e) => {
            complain(&e);
            return ExitCode::from(2);
        }
    };
    let start = match parse_group(a.group.as_ref()) {
        Ok(p) => p,
        Err(c) => return c,
    };
    let mut opts = export_options(start, a.root, a.depth, a.max_kept_fds);
    // the connections' descriptors come out of the collector's budget
    if let Some(kept) = opts.max_kept_fds {
        let soft =
            scan::raise_nofile_limit(kept as u64 + scan::FD_RESERVE + export::CONNECTION_FDS);
        opts.max_kept_fds = Some(scan::budget_within(
            kept,
            soft.saturating_sub(export::CONNECTION_FDS),
        ));
    }
    let cfg = ServeConfig {
        listen,
        min_interval,
        export: ExportOptions { filter: a.filter },
    };
    exit_code(export::serve(&opts, &cfg))
}

/// The format of `--openmetrics`' exposition (`--exposition`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposition {
    /// OpenMetrics 1.0.0 (what `serve` answers a Prometheus that asks for it)
    Openmetrics,
    /// The Prometheus text format 0.0.4 (node_exporter's textfile collector)
    Text,
}

/// `cgtop --openmetrics [-o FILE] [--exposition FORMAT]`.
pub fn once(
    opts: &Options,
    filter: Option<String>,
    output: Option<&Path>,
    format: Exposition,
) -> ExitCode {
    let format = match format {
        Exposition::Openmetrics => crate::render::openmetrics::Format::OpenMetrics,
        Exposition::Text => crate::render::openmetrics::Format::Text,
    };
    let opts = export_options(
        opts.start.clone(),
        opts.root.clone(),
        opts.depth,
        opts.max_kept_fds,
    );
    exit_code(export::once(&opts, &ExportOptions { filter }, output, format).map(|()| None))
}
