//! What the command line asked for, validated by `main` and read by the
//! edges that act on it (`run` wires threads from it, `batch` prints by
//! it). Plain data: no I/O, and it imports nothing but the model's
//! `GroupPath` and render's `Column`, so the views below `run` can take it without importing
//! `run` (which would make a cycle: `run` calls `batch`).

use crate::model::files::config::Colours;
use crate::model::GroupPath;
use crate::render::columns::Column;
// what the tree is sorted by: render's, where `-b` and the view share it
use crate::render::order::Order;
pub use crate::render::order::SortBy;
use std::path::PathBuf;
use std::time::Duration;

/// What the command line asked for, already validated.
#[derive(Debug, Clone)]
pub struct Options {
    pub start: GroupPath,
    pub root: Option<PathBuf>,
    pub interval: Duration,
    pub depth: Option<usize>,
    pub output: Output,
    pub iterations: Option<u64>,
    pub read_only: bool,
    pub mouse: bool,
    pub machine_cpu: bool,
    pub max_kept_fds: Option<usize>,
    /// JSON without each group's full detail (see `--brief`).
    pub brief: bool,
    /// The figure columns of the tree and of `-b` (`--columns`), in
    /// display order; the default five without it.
    pub columns: Vec<Column>,
    /// `--filter`: the `/` filter's groups only (those whose name
    /// contains it, case aside, their ancestors and subtrees), in every
    /// output; the view starts with it typed.
    pub filter: Option<String>,
}

/// What the settings file (README "Configuration") asks of the
/// full-screen view beyond [`Options`]; every field at its default
/// without one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewSettings {
    /// The first sort (`sort`); `None`: CPU, highest first.
    pub sort: Option<SortBy>,
    /// `sort_descending`; `None`: highest first for a figure, A to Z for
    /// the name (as `<`/`>` choose).
    pub sort_descending: Option<bool>,
    /// `[colours]`; NO_COLOR still wins.
    pub colours: Colours,
    /// Where the column chooser saves (`s`): the file read, or the one the
    /// environment names; `None` with --no-config.
    pub config_file: Option<PathBuf>,
    /// Said on the status line at start (the default settings place
    /// could not be read).
    pub notice: Option<String>,
    /// Start in the flat list (`--flat`; F5 turns it).
    pub flat: bool,
    /// Name groups by their kernel names (`--kernel-names`; w turns it).
    pub kernel_names: bool,
    /// `--pid`: start at the group that holds this process (the view:
    /// selected, unfolded, the process highlighted; -b and --json: that
    /// group alone).
    pub pid: Option<u32>,
}

impl ViewSettings {
    /// The first order of the rows, the view's and `-b`'s: `sort` (CPU
    /// without it) in `sort_descending`'s direction (the key's usual one
    /// without it), flat or as a tree.
    pub fn order(&self) -> Order {
        let by = self.sort.unwrap_or(SortBy::Column(Column::Cpu));
        Order {
            by,
            descending: self.sort_descending.unwrap_or(by.descending_by_default()),
            flat: self.flat,
            identities: !self.kernel_names,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Tui,
    Text,
    Json,
}

/// `cgtop record` beyond [`Options`] (whose `output` says what is printed
/// of each refresh: `Tui` for nothing).
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub file: PathBuf,
    /// Add to an existing recording of ours.
    pub append: bool,
    /// The size cap of FILE in bytes (`--max-size`).
    pub max_size: Option<u64>,
    /// Stop at the cap instead of rotating (`--stop`).
    pub stop_at_max: bool,
    /// Read the processes of the busiest groups (off: `--no-processes`).
    pub processes: bool,
    /// The order of the rows `-b` prints (`--sort`, `--reverse`,
    /// `--flat`); the recording itself has no order.
    pub order: crate::render::order::Order,
}
