//! PURE: the text every output shares, so the TUI, `-b` and `--json` (and
//! later outputs: metrics, replay) say a figure the same way, as below's
//! `render` crate serves both its view and its dump.
//!
//! - [`units`]: bytes, rates, percentages, limits, and "-" for no figure.
//! - [`fit`]: display widths, padding and cutting to a column.
//! - [`marks`]: the state column (P populated, F frozen, t throttled, T threaded, ! an event).
//! - [`events`]: an event in words, its clock time and age, `-b`'s event line.
//! - [`mount`]: how the hierarchy is mounted (pure v2, hybrid, directory).
//! - [`columns`]: the group table's columns: titles, widths, cells, which
//!   fit a width, and the name cell.
//! - [`order`]: the rows' order, the view's and `-b`'s: the tree's siblings
//!   or the flat list, by the name or a column.
//! - [`severity`]: how close a figure is to its limit or how high a
//!   pressure is, as a level (Normal, Warm, Hot) the view styles.
//! - [`effect`]: the words of an edit's effect (figures before -> after).
//! - [`meter`]: htop-style bars (`[|||||     42%]`) in plain characters.
//! - [`spark`]: sparklines of a figure's history (`▁▃█`), their min, max
//!   and span words, and a past moment's clock time and age.
//! - [`identity`]: who a group is in words: the name cell's label
//!   (`web-1 · docker 046c7a5b3d2e`), the detail's block, `--json`'s
//!   object and the exposition's info labels, every text escaped.
//! - [`writeback`]: the writeback story in words (the IO page): what a
//!   group's IO limit does to buffered writes, the host's dirty limits.
//!
//! Escapes are `model::tree::text` (`escape`, `escape_str`): `GroupPath`'s
//! `Display` uses them, and the model must not import this module.
//!
//! Must not depend on: `app`, `ui`, `source`, the terminal (no ratatui or
//! crossterm), the filesystem or the clock. It takes model values and
//! returns `String`s; styling is the view's.

pub mod columns;
pub mod effect;
pub mod events;
pub mod fit;
pub mod identity;
pub mod marks;
pub mod meter;
pub mod mount;
pub mod openmetrics;
pub mod order;
pub mod severity;
pub mod spark;
pub mod units;
pub mod writeback;
