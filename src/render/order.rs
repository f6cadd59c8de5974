//! The order of the group table's rows, one definition for the view and
//! `-b`: a tree whose siblings sort under their parent (by default CPU %,
//! highest first, as top and systemd-cgtop sort), or every group in one
//! flat list (htop's F5, `--flat`). Ties go by name (the tree) or by path
//! (the flat list), so equal figures always print in the same order.

use super::columns::Column;
use super::identity::label_of;
use crate::model::tree::{Row, RowOptions, Tree};
use crate::model::{GroupRates, GroupSample};
use std::cmp::Ordering;

/// What the rows are sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Name,
    Column(Column),
}

impl SortBy {
    /// `name` or a column's `--columns` name (case aside).
    pub fn from_name(s: &str) -> Option<Self> {
        if s.trim().eq_ignore_ascii_case("name") {
            Some(Self::Name)
        } else {
            Column::from_name(s).map(Self::Column)
        }
    }

    /// Names read best A to Z, figures biggest first.
    pub fn descending_by_default(self) -> bool {
        self != Self::Name
    }
}

/// How the rows are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub by: SortBy,
    pub descending: bool,
    /// One list of every group (full paths) instead of the tree.
    pub flat: bool,
    /// Tree rows named by who the group is where known
    /// (`render::identity::Name`), and sorted by those names when sorted
    /// by name; off: the kernel's names (`--kernel-names`, the view's
    /// `w`). The flat list names and sorts every row by its whole path
    /// either way.
    pub identities: bool,
}

impl Default for Order {
    /// CPU %, highest first, as a tree.
    fn default() -> Self {
        Self {
            by: SortBy::Column(Column::Cpu),
            descending: true,
            flat: false,
            identities: true,
        }
    }
}

impl Order {
    /// Compares two groups by the sort key alone: names compared by the
    /// group's own name (siblings) or, `whole`, by the whole path (the
    /// flat list); a missing figure sorts below every figure.
    fn compare(
        self,
        a: (&GroupSample, &GroupRates),
        b: (&GroupSample, &GroupRates),
        whole: bool,
    ) -> Ordering {
        let o = match self.by {
            SortBy::Name if whole => a.0.path.cmp(&b.0.path),
            SortBy::Name => a.0.path.name().cmp(b.0.path.name()),
            SortBy::Column(c) => {
                let v = |(g, r): (&GroupSample, &GroupRates)| c.sort_value(g, r).unwrap_or(-1.0);
                v(a).partial_cmp(&v(b)).unwrap_or(Ordering::Equal)
            }
        };
        if self.descending {
            o.reverse()
        } else {
            o
        }
    }

    /// The rows of `tree` (built from `groups`, with their `rates`) in
    /// this order: the tree's visible rows under `opts`, or the flat list
    /// (which has no folds; `opts.filter` keeps what the tree's keeps).
    pub fn rows(
        self,
        tree: &Tree,
        groups: &[GroupSample],
        rates: &[GroupRates],
        opts: &RowOptions<'_>,
    ) -> Vec<Row> {
        let none = GroupRates::default();
        let of = |node: usize| {
            let i = tree.nodes[node].sample;
            (&groups[i], rates.get(i).unwrap_or(&none))
        };
        // the filter matches identities too
        let opts = RowOptions {
            samples: Some(groups),
            ..opts.clone()
        };
        if self.flat {
            tree.flat_rows(opts.filter, opts.samples, |a, b| {
                self.compare(of(a), of(b), true)
            })
        } else if self.by == SortBy::Name && self.identities {
            // by the names shown: a group's label (`web-1 · docker ...`)
            // where it has one, else its kernel name; made once a group
            let shown: Vec<Option<String>> = groups
                .iter()
                .map(|g| label_of(g).and_then(|l| l.forms.into_iter().next()))
                .collect();
            let key = |node: usize| {
                let i = tree.nodes[node].sample;
                shown[i]
                    .as_deref()
                    .map_or(groups[i].path.name(), str::as_bytes)
            };
            tree.rows(&opts, |a, b| {
                let o = key(a).cmp(key(b));
                if self.descending {
                    o.reverse()
                } else {
                    o
                }
            })
        } else {
            tree.rows(&opts, |a, b| self.compare(of(a), of(b), false))
        }
    }
}
