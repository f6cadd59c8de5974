//! The group table, as the TUI's tree pane and `-b` both print it: a name
//! column, the figure columns below, and the state marks. One definition
//! of each column's title, width and cell text, so the two outputs cannot
//! drift apart; the TUI adds its tree guides, sort arrow and styles.

use super::marks::StateMarks;
use super::units::{bytes_cell, count_cell, pct, rate_short};
use crate::model::{GroupPath, GroupRates, GroupSample};

/// The title of the name column.
pub const NAME_TITLE: &str = "GROUP";
/// The title of the state column ([`StateMarks`]).
pub const STATE_TITLE: &str = "ST";
/// The name column is never narrower than this: the TUI drops figure
/// columns first, and `-b` widens it to the longest name from here.
pub const NAME_MIN: usize = 24;

/// A figure column of the group table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Cpu,
    Memory,
    IoRead,
    IoWrite,
    Pids,
}

/// The columns in the order they are dropped when space runs out (last
/// dropped first): the name and CPU always stay. READ/s and WRITE/s go
/// together: a WRITE/s column alone would read as if reads were not
/// measured.
const DROP_GROUPS: [&[Column]; 4] = [
    &[Column::Cpu],
    &[Column::Memory],
    &[Column::Pids],
    &[Column::IoRead, Column::IoWrite],
];

impl Column {
    /// Every column, in display order.
    pub const ALL: [Self; 5] = [
        Self::Cpu,
        Self::Memory,
        Self::IoRead,
        Self::IoWrite,
        Self::Pids,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Self::Cpu => "CPU%",
            Self::Memory => "MEM",
            Self::IoRead => "READ/s",
            Self::IoWrite => "WRITE/s",
            Self::Pids => "PIDS",
        }
    }

    /// Cells wide: the title and the widest usual figure ("100.0",
    /// "1023M", "1023.9K") with room to spare.
    pub fn width(self) -> usize {
        match self {
            Self::Cpu => 6,
            Self::Memory => 7,
            Self::IoRead | Self::IoWrite => 8,
            Self::Pids => 5,
        }
    }

    /// The cell's text. `cpu_shown` turns CPU % of one core into what the
    /// output shows (the TUI's `%` key: of the whole machine).
    pub fn cell(self, g: &GroupSample, r: &GroupRates, cpu_shown: impl Fn(f64) -> f64) -> String {
        match self {
            Self::Cpu => pct(r.cpu_pct.map(cpu_shown)),
            Self::Memory => bytes_cell(g.hot.memory_current),
            Self::IoRead => rate_short(r.io.map(|x| x.rbps)),
            Self::IoWrite => rate_short(r.io.map(|x| x.wbps)),
            Self::Pids => count_cell(g.pids()),
        }
    }

    /// The columns that fit in `width` cells beside a name column of at
    /// least [`NAME_MIN`] and the state column, in display order.
    pub fn fitting(width: usize) -> Vec<Self> {
        let mut n = DROP_GROUPS.len();
        while n > 1 {
            let used: usize = DROP_GROUPS[..n]
                .iter()
                .flat_map(|g| g.iter())
                .map(|c| c.width() + 1)
                .sum::<usize>()
                + StateMarks::WIDTH
                + 1;
            if width >= used + NAME_MIN {
                break;
            }
            n -= 1;
        }
        let kept: Vec<Self> = DROP_GROUPS[..n]
            .iter()
            .flat_map(|g| g.iter())
            .copied()
            .collect();
        Self::ALL.into_iter().filter(|c| kept.contains(c)).collect()
    }
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

/// The name cell of a group `depth` levels below the first row: the first
/// row (the start group) by its whole path, the others by their own name,
/// escaped as every path is (`model::text`).
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
    fn columns_drop_in_order() {
        assert_eq!(Column::fitting(120), Column::ALL);
        // READ/s and WRITE/s go together: one without the other misleads
        assert_eq!(
            Column::fitting(60),
            [Column::Cpu, Column::Memory, Column::Pids]
        );
        assert_eq!(Column::fitting(20), [Column::Cpu]);
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
                rbps: 2048.0,
                ..IoRates::default()
            }),
            ..GroupRates::default()
        };
        let all = cells(&Column::ALL, &g, &r, |p| p);
        assert_eq!(all, "  150.0    3.0M     2.0K        0     2");
        // the TUI's `%`: of a two-CPU machine
        assert_eq!(cells(&[Column::Cpu], &g, &r, |p| p / 2.0), "   75.0");
        let empty = cells(
            &Column::ALL,
            &GroupSample::new(path, 2),
            &GroupRates::default(),
            |p| p,
        );
        assert_eq!(empty, "      -       -        -        -     -");
        assert_eq!(
            header_cells(&Column::ALL, |c| if c == Column::Memory {
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
