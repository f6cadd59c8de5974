//! The group table, as the TUI's tree pane and `-b` both print it: a name
//! column, the figure columns below, and the state marks. One definition
//! of each column's title, width and cell text, so the two outputs cannot
//! drift apart; the TUI adds its tree guides, sort arrow and styles.

use super::marks::StateMarks;
use super::units::{bytes_cell, count_short, pct, rate_short};
use crate::model::{GroupPath, GroupRates, GroupSample, HotExtras};

/// The title of the name column.
pub const NAME_TITLE: &str = "GROUP";
/// The title of the state column ([`StateMarks`]).
pub const STATE_TITLE: &str = "ST";
/// The name column is never narrower than this: the TUI drops figure
/// columns first, and `-b` widens it to the longest name from here.
pub const NAME_MIN: usize = 24;

/// A figure column of the group table. The first five are the default
/// set (`cgtop -b` prints them unless `--columns` says otherwise); the
/// others are chosen with the column chooser (F2) or `--columns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Cpu,
    /// Time throttled by cpu.max, in percent of the interval.
    Throttled,
    Memory,
    /// memory.current in percent of the smallest memory.max on the path.
    MemPct,
    /// memory.swap.current.
    Swap,
    IoRead,
    IoWrite,
    Pids,
    /// The highest "some avg10" of the group's cpu, memory and io
    /// pressure: one column, since any of the three stalling is the
    /// news; the detail's overview has each.
    Psi,
}

/// The columns in the order they are dropped when space runs out (last
/// dropped first): the name always stays, and the first group shown
/// too. READ/s and WRITE/s go together: a WRITE/s column alone would
/// read as if reads were not measured. The chosen extra columns go
/// before the default ones.
const DROP_GROUPS: [&[Column]; 8] = [
    &[Column::Cpu],
    &[Column::Memory],
    &[Column::Pids],
    &[Column::IoRead, Column::IoWrite],
    &[Column::MemPct],
    &[Column::Throttled],
    &[Column::Swap],
    &[Column::Psi],
];

impl Column {
    /// Every column, in display order.
    pub const ALL: [Self; 9] = [
        Self::Cpu,
        Self::Throttled,
        Self::Memory,
        Self::MemPct,
        Self::Swap,
        Self::IoRead,
        Self::IoWrite,
        Self::Pids,
        Self::Psi,
    ];

    /// The columns shown when none were chosen.
    pub const DEFAULT: [Self; 5] = [
        Self::Cpu,
        Self::Memory,
        Self::IoRead,
        Self::IoWrite,
        Self::Pids,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Self::Cpu => "CPU%",
            Self::Throttled => "THR%",
            Self::Memory => "MEM",
            Self::MemPct => "MEM%",
            Self::Swap => "SWAP",
            Self::IoRead => "READ/s",
            Self::IoWrite => "WRITE/s",
            Self::Pids => "PIDS",
            Self::Psi => "PSI%",
        }
    }

    /// The name `--columns` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Throttled => "thr",
            Self::Memory => "mem",
            Self::MemPct => "mempct",
            Self::Swap => "swap",
            Self::IoRead => "read",
            Self::IoWrite => "write",
            Self::Pids => "pids",
            Self::Psi => "psi",
        }
    }

    /// What the column shows, in the chooser.
    pub fn about(self) -> &'static str {
        match self {
            Self::Cpu => "CPU time, % of one core (or of the machine: %)",
            Self::Throttled => "time throttled by cpu.max, % of one CPU (as CPU%)",
            Self::Memory => "memory.current",
            Self::MemPct => "memory.current, % of the smallest memory.max on its path",
            Self::Swap => "memory.swap.current",
            Self::IoRead => "bytes read per second (io.stat)",
            Self::IoWrite => "bytes written per second (io.stat)",
            Self::Pids => "processes (pids.current, else cgroup.procs)",
            Self::Psi => "highest 'some avg10' of cpu, memory and io.pressure",
        }
    }

    /// The column `--columns` names `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Cells wide: the title and the widest usual figure ("100.0",
    /// "99.9K": a size stays under 1000 of its unit, `render::units`)
    /// with room to spare.
    pub fn width(self) -> usize {
        match self {
            Self::Cpu | Self::Throttled | Self::MemPct | Self::Psi => 6,
            Self::Memory | Self::Swap => 7,
            Self::IoRead | Self::IoWrite => 8,
            Self::Pids => 5,
        }
    }

    /// The cell's text. `cpu_shown` turns CPU % of one core into what the
    /// output shows (the TUI's `%` key: of the whole machine).
    pub fn cell(self, g: &GroupSample, r: &GroupRates, cpu_shown: impl Fn(f64) -> f64) -> String {
        match self {
            Self::Cpu => pct(r.cpu_pct.map(cpu_shown)),
            Self::Throttled => pct(r.throttled_pct),
            Self::Memory => bytes_cell(g.hot.memory_current),
            Self::MemPct => pct(mem_pct(g)),
            Self::Swap => bytes_cell(g.hot.swap_current),
            Self::IoRead => rate_short(r.io.and_then(|x| x.rbps)),
            Self::IoWrite => rate_short(r.io.and_then(|x| x.wbps)),
            Self::Pids => count_short(g.pids()),
            Self::Psi => pct(g.hot.psi_some_avg10.map(|c| f64::from(c) / 100.0)),
        }
    }

    /// The figure a sort by this column compares (CPU % of one core: the
    /// order is the same of the machine); `None` sorts below every figure.
    pub fn sort_value(self, g: &GroupSample, r: &GroupRates) -> Option<f64> {
        match self {
            Self::Cpu => r.cpu_pct,
            Self::Throttled => r.throttled_pct,
            Self::Memory => g.hot.memory_current.map(|m| m as f64),
            Self::MemPct => mem_pct(g),
            Self::Swap => g.hot.swap_current.map(|m| m as f64),
            Self::IoRead => r.io.and_then(|x| x.rbps),
            Self::IoWrite => r.io.and_then(|x| x.wbps),
            Self::Pids => g.pids().map(|p| p as f64),
            Self::Psi => g.hot.psi_some_avg10.map(f64::from),
        }
    }

    /// The extra hot files the scanner must read for `cols`.
    pub fn extras(cols: &[Self]) -> HotExtras {
        HotExtras {
            memory_max: cols.contains(&Self::MemPct),
            swap: cols.contains(&Self::Swap),
            pressure: cols.contains(&Self::Psi),
        }
    }

    /// `cols` in the order given, each once (the first place of a column
    /// named twice): the order is the user's (`--columns`, the settings
    /// file, the chooser), not a canonical one.
    pub fn in_order(cols: &[Self]) -> Vec<Self> {
        let mut out: Vec<Self> = Vec::with_capacity(cols.len());
        for c in cols {
            if !out.contains(c) {
                out.push(*c);
            }
        }
        out
    }

    /// Which of `shown` fit in `width` cells beside a name column of at
    /// least [`NAME_MIN`] and the state column, in `shown`'s order.
    pub fn fitting(shown: &[Self], width: usize) -> Vec<Self> {
        let groups: Vec<Vec<Self>> = DROP_GROUPS
            .iter()
            .map(|g| g.iter().copied().filter(|c| shown.contains(c)).collect())
            .filter(|g: &Vec<Self>| !g.is_empty())
            .collect();
        let mut n = groups.len();
        while n > 1 {
            let used = fixed_width(&groups[..n].concat());
            if width >= used + NAME_MIN {
                break;
            }
            n -= 1;
        }
        let kept = groups[..n].concat();
        shown.iter().copied().filter(|c| kept.contains(c)).collect()
    }
}

/// Whether the sparkline column (when `spark` is on) is drawn in a tree
/// `width` columns wide, and the figure columns beside it: it is shown
/// only where it costs no figure column (those are dropped last), so a
/// narrow screen loses it first.
pub fn spark_fits(shown: &[Column], spark: bool, width: usize) -> (bool, Vec<Column>) {
    let cols = Column::fitting(shown, width);
    if !spark {
        return (false, cols);
    }
    let room = width.saturating_sub(crate::render::spark::COLUMN_WIDTH + 1);
    let beside_spark = Column::fitting(shown, room);
    let fits = beside_spark == cols && room >= NAME_MIN + fixed_width(&cols);
    (fits, cols)
}

/// memory.current in percent of the group's effective memory.max.
fn mem_pct(g: &GroupSample) -> Option<f64> {
    let cur = g.hot.memory_current?;
    let lim = g.hot.memory_limit.filter(|l| *l > 0)?;
    Some(cur as f64 * 100.0 / lim as f64)
}

/// Cells taken by `cols` and the state column after the name, with the
/// space before each.
pub fn fixed_width(cols: &[Column]) -> usize {
    cols.iter().map(|c| c.width() + 1).sum::<usize>() + StateMarks::WIDTH + 1
}

/// The titles after the name: " {title:>width}" for each column, with
/// `mark(column)` put before its title (the TUI's sort arrow; "" for none).
pub fn header_cells<'a>(cols: &[Column], mark: impl Fn(Column) -> &'a str) -> String {
    let mut s = String::new();
    for c in cols {
        s.push_str(&format!(
            " {:>w$}",
            format!("{}{}", mark(*c), c.title()),
            w = c.width()
        ));
    }
    s
}

/// The figures after the name: " {cell:>width}" for each column.
pub fn cells(
    cols: &[Column],
    g: &GroupSample,
    r: &GroupRates,
    cpu_shown: impl Fn(f64) -> f64 + Copy,
) -> String {
    let mut s = String::new();
    for c in cols {
        s.push_str(&format!(" {:>w$}", c.cell(g, r, cpu_shown), w = c.width()));
    }
    s
}

/// Cells the tree's guides take before a name: "│ " or "  " for each of
/// `guides` ancestor levels, "├─" below the first row, and the fold mark.
pub fn guides_width(guides: usize, depth: usize) -> usize {
    guides * 2 + if depth > 0 { 2 } else { 0 } + 1
}

/// A row whose indentation leaves its name fewer cells than this (and
/// the blank after it) gives up its leftmost levels
/// ([`indent_cut`]).
pub const NAME_CUT: usize = 10;

/// The cells of a name that a cut indentation leaves at least (half the
/// column where the column is narrower than twice this).
pub const NAME_KEEP: usize = 20;

/// The cells of the mark of a cut indentation (`60…` and blanks): the
/// same for every depth below 1,000, so that the guides after it line up
/// from row to row.
const MARK_W: usize = 4;

/// A row's indentation within a name column `name_w` wide: `levels`
/// levels of `level_w` cells each, then `after` cells (the tree's branch
/// and fold mark). Whoever owns a delegated subtree nests groups as deep
/// as they like, and at two cells a level the indentation of a group 40
/// levels down filled the column: the row showed no name and its figures
/// went past the right edge. Where the levels leave the name fewer than
/// [`NAME_CUT`] cells, the leftmost ones are left out, so that it has
/// [`NAME_KEEP`], and the row starts with its depth and `…` in their
/// place (`60… │ └─▾name`): how many levels to leave out, and that mark.
/// No other row starts with a digit (the first row starts with its fold
/// mark, or `/` in `-b`).
pub fn indent_cut(
    levels: usize,
    level_w: usize,
    after: usize,
    depth: usize,
    name_w: usize,
) -> (usize, String) {
    let full = levels * level_w + after;
    // the blank between the name and the figures counts too
    let max = name_w.saturating_sub(NAME_KEEP.min(name_w / 2) + 1);
    if full + NAME_CUT < name_w || full <= max {
        return (0, String::new());
    }
    let mut mark = format!("{depth}…");
    let mark_w = crate::render::fit::width(&mark);
    mark.extend(std::iter::repeat_n(' ', MARK_W.saturating_sub(mark_w)));
    let room = max.saturating_sub(mark_w.max(MARK_W) + after);
    let kept = (room / level_w.max(1)).min(levels);
    (levels - kept, mark)
}

/// The name cell of a group `depth` levels below the first row: the first
/// row (the start group) by its whole path, the others by their own name,
/// escaped as every path is (`model::tree::text`).
pub fn name_label(path: &GroupPath, depth: usize) -> String {
    if depth == 0 {
        path.to_string()
    } else {
        path.name_display().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IoRates;

    #[test]
    fn a_deep_rows_indentation_leaves_its_name_room() {
        // shallow, and deep with 10 cells of name left: every level shown
        assert_eq!(indent_cut(5, 2, 3, 6, 40), (0, String::new()));
        assert_eq!(indent_cut(13, 2, 3, 14, 40), (0, String::new()));
        // 60 levels in a 40-cell column: the name keeps 20 and the blank
        // after it, the mark and 6 levels take the other 19
        let (skip, mark) = indent_cut(59, 2, 3, 60, 40);
        assert_eq!(mark, "60… ");
        assert_eq!(skip, 53);
        // the guides after the mark line up whatever the depth's digits
        assert_eq!(indent_cut(58, 2, 3, 9, 40).1, "9…  ");
        assert_eq!(indent_cut(58, 2, 3, 9, 40).0, skip - 1);
        // a column too narrow for the mark: no level, never an underflow
        assert_eq!(indent_cut(59, 2, 3, 60, 4).0, 59);
    }

    #[test]
    fn the_settings_file_caps_columns_at_the_number_there_are() {
        assert_eq!(Column::ALL.len(), crate::model::files::config::MAX_COLUMNS);
    }

    #[test]
    fn columns_drop_in_order() {
        let d = &Column::DEFAULT;
        assert_eq!(Column::fitting(d, 120), Column::DEFAULT);
        // READ/s and WRITE/s go together: one without the other misleads
        assert_eq!(
            Column::fitting(d, 60),
            [Column::Cpu, Column::Memory, Column::Pids]
        );
        assert_eq!(Column::fitting(d, 20), [Column::Cpu]);
        // every column: the extras go first, PSI before SWAP before THR%
        let all = &Column::ALL;
        assert_eq!(Column::fitting(all, 200), Column::ALL);
        let w = NAME_MIN + fixed_width(&Column::ALL);
        assert_eq!(Column::fitting(all, w), Column::ALL);
        let no_psi: Vec<_> = Column::ALL
            .into_iter()
            .filter(|c| *c != Column::Psi)
            .collect();
        assert_eq!(Column::fitting(all, w - 1), no_psi);
        let kept = Column::in_order(&[
            Column::Cpu,
            Column::Memory,
            Column::MemPct,
            Column::IoRead,
            Column::IoWrite,
            Column::Pids,
        ]);
        let w = NAME_MIN + fixed_width(&kept);
        assert_eq!(Column::fitting(all, w), kept);
        assert_eq!(Column::fitting(all, w + 6), kept, "THR% needs 7");
        assert_eq!(Column::fitting(all, w - 1).len(), 5, "then MEM% goes");
        // without CPU, the first chosen group is the one that stays
        assert_eq!(
            Column::fitting(&[Column::Swap, Column::Pids], 10),
            [Column::Pids]
        );
    }

    #[test]
    fn the_order_is_the_users() {
        let mine = [Column::Psi, Column::Pids, Column::Cpu, Column::Psi];
        assert_eq!(
            Column::in_order(&mine),
            [Column::Psi, Column::Pids, Column::Cpu]
        );
        // dropping keeps the order of what stays
        let shown = [Column::Pids, Column::Swap, Column::Cpu];
        assert_eq!(Column::fitting(&shown, 200), shown);
        let w = NAME_MIN + fixed_width(&[Column::Pids, Column::Cpu]);
        assert_eq!(Column::fitting(&shown, w), [Column::Pids, Column::Cpu]);
    }

    #[test]
    fn names_round_trip() {
        for c in Column::ALL {
            assert_eq!(Column::from_name(c.name()), Some(c));
        }
        assert_eq!(Column::from_name(" MEM "), Some(Column::Memory));
        assert_eq!(Column::from_name("nope"), None);
    }

    #[test]
    fn extra_cells() {
        let path = GroupPath::parse(b"a.slice").expect("a path");
        let mut g = GroupSample::new(path, 1);
        g.hot.memory_current = Some(3 << 20);
        g.hot.memory_limit = Some(12 << 20);
        g.hot.swap_current = Some(5 << 20);
        g.hot.psi_some_avg10 = Some(1234);
        let r = GroupRates {
            throttled_pct: Some(37.5),
            ..GroupRates::default()
        };
        let extra = [Column::Throttled, Column::MemPct, Column::Swap, Column::Psi];
        assert_eq!(
            cells(&extra, &g, &r, |p| p),
            "   37.5   25.0    5.0M   12.3"
        );
        assert_eq!(
            header_cells(&extra, |_| ""),
            "   THR%   MEM%    SWAP   PSI%"
        );
        // no limit on the path, no figure; nor without a reading
        g.hot.memory_limit = None;
        let empty = cells(&extra, &g, &GroupRates::default(), |p| p);
        g.hot = crate::model::HotStats::default();
        assert_eq!(empty, "      -      -    5.0M   12.3");
        assert_eq!(
            cells(&extra, &g, &GroupRates::default(), |p| p),
            "      -      -       -      -"
        );
        assert_eq!(
            Column::extras(&[Column::Swap, Column::Cpu]),
            HotExtras {
                swap: true,
                ..HotExtras::default()
            }
        );
        assert_eq!(Column::extras(&Column::DEFAULT), HotExtras::default());
    }

    #[test]
    fn every_column_fits_its_title() {
        for c in Column::ALL {
            assert!(c.title().len() < c.width(), "{c:?}");
        }
    }

    #[test]
    fn cells_are_right_aligned_to_the_width() {
        let path = GroupPath::parse(b"a.slice/b.service").expect("a path");
        let mut g = GroupSample::new(path.clone(), 1);
        g.hot.memory_current = Some(3 << 20);
        g.hot.nr_procs = Some(2);
        let r = GroupRates {
            cpu_pct: Some(150.0),
            io: Some(IoRates {
                rbps: Some(2048.0),
                wbps: Some(0.0),
                ..IoRates::default()
            }),
            ..GroupRates::default()
        };
        let all = cells(&Column::DEFAULT, &g, &r, |p| p);
        assert_eq!(all, "  150.0    3.0M     2.0K        0     2");
        // the TUI's `%`: of a two-CPU machine
        assert_eq!(cells(&[Column::Cpu], &g, &r, |p| p / 2.0), "   75.0");
        let empty = cells(
            &Column::DEFAULT,
            &GroupSample::new(path, 2),
            &GroupRates::default(),
            |p| p,
        );
        assert_eq!(empty, "      -       -        -        -     -");
        assert_eq!(
            header_cells(&Column::DEFAULT, |c| if c == Column::Memory {
                "▼"
            } else {
                ""
            }),
            "   CPU%    ▼MEM   READ/s  WRITE/s  PIDS"
        );
    }

    #[test]
    fn the_first_row_names_its_whole_path() {
        let path = GroupPath::parse(b"a.slice/b\x1b.service").expect("a path");
        assert_eq!(name_label(&path, 0), "/a.slice/b\\e.service");
        assert_eq!(name_label(&path, 3), "b\\e.service");
    }
}
