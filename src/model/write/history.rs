//! PURE: the session's undo and redo stacks, as values.
//!
//! One [`Entry`] is one operator action: the ops of one write request that
//! went through and can be taken back, each a [`Step`] (the op done and
//! the op that takes it back, built from the value read before it). `u`
//! writes the top entry's steps back, last first, and the entry moves to
//! the redo stack; redo writes the ops done again, first first, and the
//! entry comes back to the undo stack with the values read this time. An
//! undo's or redo's own result is never a new entry, and a new ordinary
//! write clears the redo stack, as editors do.
//!
//! An entry that no longer applies (its group is gone) is dropped with
//! the reason ([`Stale`]), never offered as a write that would fail with
//! ENOENT. Whether a group is there comes from the latest snapshot, except
//! for the groups cgtop itself just made or removed: a snapshot scanned
//! before that write may still arrive, so cgtop's own knowledge holds
//! until a snapshot agrees with it, over at most [`EXPECT_REFRESHES`]
//! snapshots that do not (later ones are newer than the write, and a
//! group made or removed again outside cgtop is seen as it is).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::host::layout::Layout;
use crate::model::tree::snapshot::Snapshot;
use crate::model::tree::text::escape_str;
use crate::model::write::errno::Errno;
use crate::model::write::outcome::WriteOutcome;
use crate::model::write::{self, Op, WriteKind};
use crate::model::GroupPath;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// One op that went through, and the op that takes it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// What was done (redo writes it again).
    pub did: Op,
    /// What puts back the state before it (undo writes it).
    pub back: Op,
}

impl Step {
    /// What undoing this step wrote ("wrote 100 to pids.max", "removed
    /// /lab/web") or, with `will`, writes ("writes ...", "removes ...").
    fn back_words(&self, will: bool) -> String {
        let verb = |past: &'static str, now: &'static str| if will { now } else { past };
        match &self.back {
            // a move back: where to, not the pid written to cgroup.procs
            Op::Write(w) if matches!(w.kind, WriteKind::MoveProcess { .. }) => format!(
                "{} {} back to {}",
                verb("moved", "moves"),
                escape_str(&w.contents),
                w.group
            ),
            Op::Write(w) => format!(
                "{} {} to {}",
                verb("wrote", "writes"),
                escape_str(&w.contents),
                escape_str(&w.file)
            ),
            Op::RemoveGroup(p, _, _) => format!("{} {}", verb("removed", "removes"), p.display()),
            Op::CreateGroup(p, ..) => format!("{} {}", verb("created", "creates"), p.display()),
        }
    }
}

/// One operator action that can be taken back: the steps of one request,
/// in the order they were done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub steps: Vec<Step>,
}

impl Entry {
    /// The entry for the outcomes of one request: each op that went
    /// through and has an undo. `None` when nothing can be taken back
    /// (a failure, kill, remove, a move from a group not known).
    ///
    /// A group made in the same request that then had processes moved
    /// into it (the leaf fix: mkdir, move, enable) is not removed by the
    /// undo: rmdir would fail with EBUSY while they live there (admin
    /// guide 2-1), so when a process cannot be moved back (the writer did
    /// not know where it came from) the undo takes back the controllers
    /// and leaves the leaf; otherwise it moves them back first (undo runs
    /// last step first), then removes the leaf.
    pub fn from_outcomes(outcomes: &[WriteOutcome]) -> Option<Self> {
        // a process moved in that cannot be moved back (where it came
        // from is unknown) keeps the group busy
        let moved_into: HashSet<&GroupPath> = outcomes
            .iter()
            .filter(|o| o.is_ok() && o.undo().is_none())
            .filter_map(|o| o.op.as_write())
            .filter(|w| matches!(w.kind, WriteKind::MoveProcess { .. }))
            .map(|w| &w.group)
            .collect();
        let steps: Vec<Step> = outcomes
            .iter()
            .filter_map(|o| o.undo().map(|back| (o, back)))
            .filter(|(_, back)| !matches!(back, Op::RemoveGroup(p, _, _) if moved_into.contains(p)))
            .map(|(o, back)| Step {
                did: o.op.clone(),
                back,
            })
            .collect();
        (!steps.is_empty()).then_some(Self { steps })
    }

    /// What undo writes, in order: the last step's back first.
    pub fn undo_ops(&self) -> Vec<Op> {
        self.steps.iter().rev().map(|s| s.back.clone()).collect()
    }

    /// What redo writes, in order: the steps as they were done.
    pub fn redo_ops(&self) -> Vec<Op> {
        self.steps.iter().map(|s| s.did.clone()).collect()
    }

    /// The ops `dir` writes.
    pub fn ops(&self, dir: Direction) -> Vec<Op> {
        match dir {
            Direction::Undo => self.undo_ops(),
            Direction::Redo => self.redo_ops(),
        }
    }

    /// What the operator did: "set pids.max of /lab to 5"; an action
    /// made in several hierarchies once ([`write::sentences`]).
    pub fn describe(&self) -> String {
        self.describe_in(&Layout::default())
    }

    /// [`Self::describe`] naming the hierarchies of `layout` each action
    /// was made in, where it has v1 hierarchies.
    pub fn describe_in(&self, layout: &Layout) -> String {
        write::sentences(self.steps.iter().map(|s| &s.did), layout).join("; ")
    }

    /// What undoing it wrote: "wrote 100 to pids.max".
    pub fn undone_words(&self) -> String {
        self.back_words(false)
    }

    /// What undoing it will write: "writes 100 to pids.max".
    pub fn undo_words(&self) -> String {
        self.back_words(true)
    }

    fn back_words(&self, will: bool) -> String {
        // a move back made in several hierarchies is one sentence
        let mut said: Vec<String> = Vec::new();
        for w in self.steps.iter().rev().map(|s| s.back_words(will)) {
            if !said.contains(&w) {
                said.push(w);
            }
        }
        said.join("; ")
    }

    /// The groups each op of `dir` writes to, in order, with whether the
    /// op makes the group (mkdir).
    fn targets(&self, dir: Direction) -> Vec<(GroupPath, bool)> {
        self.ops(dir)
            .iter()
            .map(|op| (op.group().clone(), matches!(op, Op::CreateGroup(..))))
            .collect()
    }

    fn touches(&self, g: &GroupPath) -> bool {
        self.steps
            .iter()
            .any(|s| s.did.group().is_within(g) || s.back.group().is_within(g))
    }
}

/// Which way an entry is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Undo,
    Redo,
}

impl Direction {
    /// "undo", "redo".
    pub fn word(self) -> &'static str {
        match self {
            Self::Undo => "undo",
            Self::Redo => "redo",
        }
    }

    /// "undone", "redone".
    pub fn done_word(self) -> &'static str {
        match self {
            Self::Undo => "undone",
            Self::Redo => "redone",
        }
    }
}

/// An entry on its way to the writer, or in a question before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub dir: Direction,
    pub entry: Entry,
}

/// Why an entry no longer applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The group is not in the hierarchy any more: removed outside cgtop,
    /// or a write to it failed with ENOENT.
    Gone(GroupPath),
    /// cgtop removed the group (Del).
    Removed(GroupPath),
}

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gone(g) => write!(f, "{} is gone", g.display()),
            Self::Removed(g) => write!(f, "{} was removed", g.display()),
        }
    }
}

/// An entry taken off a stack because it no longer applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub dir: Direction,
    pub entry: Entry,
    pub why: Stale,
}

impl Dropped {
    /// One line for the status bar, for one or more dropped entries.
    pub fn summary(dropped: &[Self]) -> Option<String> {
        let first = dropped.first()?;
        Some(if dropped.len() == 1 {
            format!(
                "dropped the {} of \"{}\": {}",
                first.dir.word(),
                first.entry.describe(),
                first.why
            )
        } else {
            format!(
                "dropped {} undo/redo entries that no longer apply: {}",
                dropped.len(),
                first.why
            )
        })
    }
}

/// What taking the top entry of a stack came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// The stack is empty.
    Empty,
    /// The entry to write.
    Entry(Replay),
    /// The top entry no longer applies: dropped, nothing to write.
    Dropped(Dropped),
}

/// What a finished request did to the history (for the status line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// An ordinary write.
    Write,
    /// An undo or redo went through in full: the entry is on the other
    /// stack.
    Replayed(Replay),
    /// An undo or redo failed part way or at once: the steps that went
    /// through moved to the other stack; the rest stay on their own
    /// (tried again by the next key), or, when `gone` says their group
    /// is gone, were dropped.
    Failed { dir: Direction, gone: Option<Stale> },
}

/// Where groups are, as far as the history can tell: the latest snapshot
/// of the subtree cgtop shows (`start` and below; above it nothing is
/// known).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub snapshot: Option<&'a Snapshot>,
    pub start: &'a GroupPath,
}

/// The undo and redo stacks, and the entries on their way to the writer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    /// Last on top.
    pub undo: Vec<Entry>,
    /// Last undone on top.
    pub redo: Vec<Entry>,
    /// Undos and redos sent to the writer, not yet finished.
    pub in_flight: Vec<Replay>,
    /// Groups cgtop made (true) or removed (false), until a snapshot
    /// agrees, with how many more refreshes that holds.
    expected: HashMap<GroupPath, (bool, u8)>,
}

/// Over how many snapshots that disagree cgtop's own mkdir or rmdir holds:
/// the one being scanned when the write was made, and one already on its
/// way, may predate it; the refresh asked for after the write does not.
pub const EXPECT_REFRESHES: u8 = 2;

impl History {
    /// The stack of `dir`.
    pub fn stack(&self, dir: Direction) -> &[Entry] {
        match dir {
            Direction::Undo => &self.undo,
            Direction::Redo => &self.redo,
        }
    }

    fn stack_mut(&mut self, dir: Direction) -> &mut Vec<Entry> {
        match dir {
            Direction::Undo => &mut self.undo,
            Direction::Redo => &mut self.redo,
        }
    }

    /// Whether `g` is there: `None` when cgtop cannot tell (above the
    /// group it shows, or no snapshot yet).
    fn present(&self, g: &GroupPath, seen: Seen<'_>) -> Option<bool> {
        if let Some((there, _)) = self.expected.get(g) {
            return Some(*there);
        }
        let snap = seen.snapshot?;
        g.is_within(seen.start).then(|| snap.find(g).is_some())
    }

    /// Why `entry` cannot be written `dir` now, given that the groups in
    /// `made` will have been made by the entries above it.
    fn stale(
        &self,
        entry: &Entry,
        dir: Direction,
        seen: Seen<'_>,
        made: &mut HashSet<GroupPath>,
    ) -> Option<Stale> {
        let mut why = None;
        for (g, creates) in entry.targets(dir) {
            // mkdir needs the parent; any other op the group itself
            let need = if creates { g.parent() } else { Some(g.clone()) };
            if let Some(need) = need {
                let there = made.contains(&need) || self.present(&need, seen) != Some(false);
                if !there && why.is_none() {
                    why = Some(Stale::Gone(need));
                }
            }
            if creates {
                made.insert(g);
            }
        }
        why
    }

    /// Takes the top entry of `dir` to write it, or drops it when it no
    /// longer applies.
    pub fn take(&mut self, dir: Direction, seen: Seen<'_>) -> Taken {
        let Some(entry) = self.stack_mut(dir).pop() else {
            return Taken::Empty;
        };
        match self.stale(&entry, dir, seen, &mut HashSet::new()) {
            Some(why) => Taken::Dropped(Dropped { dir, entry, why }),
            None => Taken::Entry(Replay { dir, entry }),
        }
    }

    /// A question about a replay was cancelled: the entry goes back on
    /// top of its stack.
    pub fn put_back(&mut self, r: Replay) {
        self.stack_mut(r.dir).push(r.entry);
    }

    /// A replay was sent to the writer.
    pub fn sent(&mut self, r: Replay) {
        self.in_flight.push(r);
    }

    /// The writer finished a request with `outcomes`: an undo or redo in
    /// flight (the outcomes are its ops, in order), or an ordinary write.
    /// Entries that a successful rmdir leaves without a group are dropped
    /// and returned.
    pub fn finished(
        &mut self,
        outcomes: &[WriteOutcome],
        seen: Seen<'_>,
    ) -> (Recorded, Vec<Dropped>) {
        let replay = self.in_flight.iter().position(|r| {
            let ops = r.entry.ops(r.dir);
            !outcomes.is_empty()
                && outcomes.len() <= ops.len()
                && outcomes.iter().zip(&ops).all(|(o, op)| o.op == *op)
        });
        for o in outcomes.iter().filter(|o| o.is_ok()) {
            match &o.op {
                Op::CreateGroup(g, ..) => {
                    self.expected.insert(g.clone(), (true, EXPECT_REFRESHES));
                }
                Op::RemoveGroup(g, _, _) => {
                    self.expected.insert(g.clone(), (false, EXPECT_REFRESHES));
                }
                Op::Write(_) => {}
            }
        }
        let recorded = if let Some(i) = replay {
            let r = self.in_flight.remove(i);
            self.replayed(r, outcomes, seen)
        } else {
            if let Some(e) = Entry::from_outcomes(outcomes) {
                self.undo.push(e);
            }
            if outcomes.iter().any(WriteOutcome::is_ok) {
                self.redo.clear();
            }
            Recorded::Write
        };
        // an rmdir that went through leaves the undo entries of that
        // group with nothing to write to (the redo stack keeps its own:
        // redoing the mkdir above them makes the group again)
        let mut dropped = Vec::new();
        for o in outcomes.iter().filter(|o| o.is_ok()) {
            if let Op::RemoveGroup(g, _, _) = &o.op {
                let (gone, keep): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.undo)
                    .into_iter()
                    .partition(|e| e.touches(g));
                self.undo = keep;
                dropped.extend(gone.into_iter().map(|entry| Dropped {
                    dir: Direction::Undo,
                    entry,
                    why: Stale::Removed(g.clone()),
                }));
            }
        }
        (recorded, dropped)
    }

    /// The outcomes of a replay: what went through moves to the other
    /// stack; the rest stays on its own, unless its group is gone.
    fn replayed(&mut self, r: Replay, outcomes: &[WriteOutcome], seen: Seen<'_>) -> Recorded {
        let done = outcomes.iter().take_while(|o| o.is_ok()).count();
        let whole = r.entry.clone();
        let mut steps = r.entry.steps;
        let n = steps.len();
        let rest = match r.dir {
            Direction::Undo => {
                // undo wrote the last steps first
                let undone = steps.split_off(n - done.min(n));
                if !undone.is_empty() {
                    self.redo.push(Entry { steps: undone });
                }
                steps
            }
            Direction::Redo => {
                let rest = steps.split_off(done.min(n));
                // the values read this time make the new undo
                if let Some(e) = Entry::from_outcomes(&outcomes[..done]) {
                    self.undo.push(e);
                }
                rest
            }
        };
        if rest.is_empty() {
            return Recorded::Replayed(Replay {
                dir: r.dir,
                entry: whole,
            });
        }
        let rest = Entry { steps: rest };
        // ENOENT on a group that is not there: the entry no longer applies.
        // An rmdir's ENOENT says so by itself; for a file, the snapshot
        // must not show the group (ENOENT also means a controller's file
        // is missing). Either way the kernel has the last word over what
        // cgtop expected after its own mkdir.
        let gone = outcomes
            .get(done)
            .filter(|o| o.errno() == Some(Errno::NOENT))
            .map(|o| o.op.group())
            .filter(|g| {
                matches!(outcomes[done].op, Op::RemoveGroup(_, _, _))
                    || seen
                        .snapshot
                        .is_some_and(|s| g.is_within(seen.start) && s.find(g).is_none())
            })
            .cloned();
        if let Some(g) = &gone {
            self.expected.insert(g.clone(), (false, EXPECT_REFRESHES));
        }
        let gone = gone.map(Stale::Gone);
        if gone.is_none() {
            self.stack_mut(r.dir).push(rest);
        }
        Recorded::Failed { dir: r.dir, gone }
    }

    /// A new snapshot: cgtop's own expectations it confirms end, and the
    /// entries whose groups it shows gone are dropped and returned.
    pub fn observe(&mut self, seen: Seen<'_>) -> Vec<Dropped> {
        let Some(snap) = seen.snapshot else {
            return Vec::new();
        };
        self.expected.retain(|g, (there, left)| {
            let disagrees = g.is_within(seen.start) && snap.find(g).is_some() != *there;
            let holds = *left > 0 && disagrees;
            *left = left.saturating_sub(1);
            holds
        });
        let mut dropped = Vec::new();
        for dir in [Direction::Undo, Direction::Redo] {
            let stack = std::mem::take(self.stack_mut(dir));
            let mut keep = Vec::new();
            // top first: a redo's mkdir makes the group for the entries
            // below it
            let mut made = HashSet::new();
            for entry in stack.into_iter().rev() {
                match self.stale(&entry, dir, seen, &mut made) {
                    Some(why) => dropped.push(Dropped { dir, entry, why }),
                    None => keep.push(entry),
                }
            }
            keep.reverse();
            *self.stack_mut(dir) = keep;
        }
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::Limit;
    use crate::model::tree::snapshot::GroupSample;
    use crate::model::write::{create_group, move_process, remove_group, set_pids_max};
    use std::time::Duration;

    fn g(s: &str) -> GroupPath {
        GroupPath::new(s)
    }

    fn snap(paths: &[&str]) -> Snapshot {
        let mut groups: Vec<GroupSample> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| GroupSample::new(g(p), i as u64))
            .collect();
        groups.sort_by(|a, b| a.path.cmp(&b.path));
        Snapshot {
            at: Duration::ZERO,
            groups,
            cost: crate::model::ScanCost::default(),
        }
    }

    fn pids(group: &str, v: u64, old: &str) -> WriteOutcome {
        WriteOutcome::done(
            set_pids_max(&g(group), Limit::Value(v)),
            Some(old.into()),
            None,
        )
    }

    #[test]
    fn undo_walks_back_and_redo_walks_forward() {
        let root = GroupPath::root();
        let s = snap(&["", "a"]);
        let seen = Seen {
            snapshot: Some(&s),
            start: &root,
        };
        let mut h = History::default();
        h.finished(&[pids("a", 5, "max\n")], seen);
        h.finished(&[pids("a", 7, "5\n")], seen);
        let Taken::Entry(r) = h.take(Direction::Undo, seen) else {
            panic!()
        };
        assert_eq!(r.entry.undo_ops(), [set_pids_max(&g("a"), Limit::Value(5))]);
        h.sent(r);
        let (rec, _) = h.finished(&[pids("a", 5, "7\n")], seen);
        assert!(matches!(
            rec,
            Recorded::Replayed(Replay {
                dir: Direction::Undo,
                ..
            })
        ));
        assert_eq!(h.undo.len(), 1);
        assert_eq!(h.redo.len(), 1);
        // a new write clears redo
        h.finished(&[pids("a", 9, "5\n")], seen);
        assert!(h.redo.is_empty());
    }

    #[test]
    fn an_undo_refused_with_enoent_for_a_gone_group_is_dropped_not_kept() {
        let root = GroupPath::root();
        let s = snap(&["", "a"]);
        let seen = Seen {
            snapshot: Some(&s),
            start: &root,
        };
        let mut h = History::default();
        // made by cgtop, removed outside before any refresh saw it
        h.finished(
            &[WriteOutcome::done(create_group(&g("a/w")), None, None)],
            seen,
        );
        let Taken::Entry(r) = h.take(Direction::Undo, seen) else {
            panic!("the group is expected there")
        };
        h.sent(r);
        let enoent = crate::model::WriteError {
            errno: Some(Errno::NOENT),
            what: "rmdir /a/w".into(),
            explanation: String::new(),
            fix: None,
        };
        let (rec, _) = h.finished(
            &[WriteOutcome::failed(
                remove_group(&g("a/w")),
                enoent.clone(),
            )],
            seen,
        );
        assert_eq!(
            rec,
            Recorded::Failed {
                dir: Direction::Undo,
                gone: Some(Stale::Gone(g("a/w")))
            }
        );
        assert!(h.undo.is_empty() && h.redo.is_empty());
        // a file's ENOENT in a group the snapshot shows: kept (a
        // controller's file is missing, not the group)
        h.finished(&[pids("a", 5, "max\n")], seen);
        let Taken::Entry(r) = h.take(Direction::Undo, seen) else {
            panic!()
        };
        h.sent(r);
        let back = set_pids_max(&g("a"), Limit::Max);
        let (rec, _) = h.finished(&[WriteOutcome::failed(back, enoent)], seen);
        assert_eq!(
            rec,
            Recorded::Failed {
                dir: Direction::Undo,
                gone: None
            }
        );
        assert_eq!(h.undo.len(), 1);
    }

    #[test]
    fn cgtop_s_own_mkdir_outweighs_two_older_snapshots_not_a_third() {
        let root = GroupPath::root();
        let s = snap(&["", "a"]);
        let seen = Seen {
            snapshot: Some(&s),
            start: &root,
        };
        let mut h = History::default();
        h.finished(
            &[WriteOutcome::done(create_group(&g("a/w")), None, None)],
            seen,
        );
        for _ in 0..EXPECT_REFRESHES {
            assert!(h.observe(seen).is_empty());
        }
        // made and removed again outside cgtop before any scan saw it
        let dropped = h.observe(seen);
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].why, Stale::Gone(g("a/w")));
    }

    #[test]
    fn a_leaf_made_and_filled_in_one_request_is_not_removed_by_undo() {
        let out = [
            WriteOutcome::done(create_group(&g("a/leaf")), None, None),
            WriteOutcome::done(move_process(7, &g("a/leaf"), false), None, None),
        ];
        assert_eq!(Entry::from_outcomes(&out), None);
        // where the process came from is known: undo moves it back, then
        // removes the empty leaf (last step first)
        let out = [
            WriteOutcome::done(create_group(&g("a/leaf")), None, None),
            WriteOutcome::done(move_process(7, &g("a/leaf"), false), Some("a".into()), None),
        ];
        let e = Entry::from_outcomes(&out).expect("an entry");
        assert_eq!(
            e.undo_ops(),
            [move_process(7, &g("a"), false), remove_group(&g("a/leaf"))]
        );
        // a move back says where to, not the pid it writes
        assert_eq!(e.undone_words(), "moved 7 back to /a; removed /a/leaf");
        assert_eq!(e.undo_words(), "moves 7 back to /a; removes /a/leaf");
    }

    #[test]
    fn an_rmdir_drops_the_undo_of_the_mkdir_and_a_gone_group_drops_at_refresh() {
        let root = GroupPath::root();
        let s = snap(&["", "a"]);
        let seen = Seen {
            snapshot: Some(&s),
            start: &root,
        };
        let mut h = History::default();
        h.finished(
            &[WriteOutcome::done(create_group(&g("a/w")), None, None)],
            seen,
        );
        // a snapshot scanned before the mkdir does not drop it
        assert!(h.observe(seen).is_empty());
        assert_eq!(h.undo.len(), 1);
        let (_, dropped) = h.finished(
            &[WriteOutcome::done(remove_group(&g("a/w")), None, None)],
            seen,
        );
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].why, Stale::Removed(g("a/w")));
        assert!(h.undo.is_empty());
        // removed outside cgtop: seen gone at the next refresh
        h.finished(&[pids("a", 5, "max\n")], seen);
        let s2 = snap(&[""]);
        let dropped = h.observe(Seen {
            snapshot: Some(&s2),
            start: &root,
        });
        assert_eq!(dropped[0].why, Stale::Gone(g("a")));
        assert!(h.undo.is_empty());
    }
}
