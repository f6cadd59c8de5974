//! The state column: four cells, the same in the TUI's tree and `-b`.
//! P populated, F frozen or t throttled (by its own or an ancestor's
//! cpu.max: `model::tree::limits::throttling`), T threaded, `!` an event (the
//! TUI: in the last minute; `-b`: among the refresh's event lines); a
//! blank where not. A frozen group runs nothing, so it cannot also be
//! throttled: the two share a cell. `!` is the events screen's key, and
//! one cell keeps the tree's names their room at 80 columns.

use crate::model::GroupSample;
use std::fmt;

/// What holds a group back, if anything: the middle cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    No,
    /// cgroup.events says frozen.
    Frozen,
    /// Throttled by a cpu.max on its path in the last window.
    Throttled,
}

/// The state column of one group; `Display` prints its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateMarks {
    pub populated: bool,
    pub held: Held,
    pub threaded: bool,
    /// An event came from the group lately (`model::time::events`).
    pub event: bool,
}

impl StateMarks {
    /// The column's width in cells.
    pub const WIDTH: usize = 4;

    /// `throttled`: whether the window's throttling says so (the refresh's
    /// `throttling`, which the sample does not hold).
    pub fn of(g: &GroupSample, throttled: bool) -> Self {
        let ev = g.hot.events.unwrap_or_default();
        Self {
            populated: ev.is_populated(),
            held: if ev.is_frozen() {
                Held::Frozen
            } else if throttled {
                Held::Throttled
            } else {
                Held::No
            },
            threaded: g
                .cgroup_type
                .is_some_and(crate::cgroupfs::CgroupType::is_threaded),
            event: false,
        }
    }

    /// The same, with the event cell.
    #[must_use]
    pub fn with_event(self, event: bool) -> Self {
        Self { event, ..self }
    }
}

impl fmt::Display for StateMarks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cells = [
            if self.populated { 'P' } else { ' ' },
            match self.held {
                Held::No => ' ',
                Held::Frozen => 'F',
                Held::Throttled => 't',
            },
            if self.threaded { 'T' } else { ' ' },
            if self.event { '!' } else { ' ' },
        ];
        cells.iter().try_for_each(|c| fmt::Write::write_char(f, *c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::{CgroupEvents, CgroupType};
    use crate::model::GroupPath;

    fn group(populated: bool, frozen: bool, ty: Option<CgroupType>) -> GroupSample {
        let mut g = GroupSample::new(GroupPath::root(), 1);
        g.hot.events = Some(CgroupEvents {
            populated: Some(populated),
            frozen: Some(frozen),
        });
        g.cgroup_type = ty;
        g
    }

    #[test]
    fn three_cells_always() {
        let idle = group(false, false, Some(CgroupType::Domain));
        assert_eq!(StateMarks::of(&idle, false).to_string(), "    ");
        let busy = group(true, false, Some(CgroupType::Threaded));
        assert_eq!(StateMarks::of(&busy, false).to_string(), "P T ");
        assert_eq!(StateMarks::of(&busy, true).to_string(), "PtT ");
        assert_eq!(
            StateMarks::of(&busy, true).with_event(true).to_string(),
            "PtT!"
        );
        // no cgroup.events (the root): nothing to mark
        let root = GroupSample::new(GroupPath::root(), 1);
        assert_eq!(StateMarks::of(&root, false).to_string(), "    ");
    }

    #[test]
    fn frozen_wins_over_throttled() {
        let g = group(true, true, Some(CgroupType::DomainThreaded));
        let m = StateMarks::of(&g, true);
        assert_eq!(m.held, Held::Frozen);
        assert_eq!(m.to_string(), "PFT ");
    }
}
