//! The history of every group's tree figures in memory (issue 9, item 1):
//! what the sparklines draw, what time travel shows, and what the effect
//! of an edit compares. PURE: fed one refresh at a time, by path.
//!
//! Three tiers, each a ring of [`TIER_LEN`] samples ([`DEFAULT_TIERS`]):
//! every refresh (the last minute at the default 1 s interval), one per
//! 10 s (the last 10 minutes) and one per minute (the last hour). A coarse
//! sample sums up the refreshes of its span: the mean for the rates (CPU,
//! IO read and write: the work done in the span), the highest for the
//! levels (memory, PIDs, pressure: a peak is what an operator looks for
//! after an alert). A group takes 18 bytes a sample (seven 16-bit
//! figures, within 0.05 % of the figure, the throttled share in a `u16`
//! for the effect of an edit, and a byte of state), allocated per tier
//! when it is first seen there: 10,000 groups x 180 samples is 32 MB at
//! most (with 32-byte `f32` entries the hour took the benchmark to 98 MiB
//! resident, over the 100 MB). A group gone from every
//! ring gives its slot back, and past [`HISTORY_BYTES`] (rings, paths
//! and index counted) the groups gone longest give theirs back first:
//! churn must not balloon it, however long the paths it makes up. A
//! path is held once, shared by the index and the slot.
//!
//! A group is kept by path: one made again under its name (`systemctl
//! restart`) continues its history, as it keeps its row.

use crate::model::tree::path::GroupPath;
use crate::model::tree::rates::GroupRates;
use crate::model::tree::snapshot::GroupSample;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// The figures kept for every group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Figure {
    /// CPU % (100 = one core).
    Cpu,
    /// memory.current, bytes.
    Memory,
    /// IO read, bytes/s.
    IoRead,
    /// IO write, bytes/s.
    IoWrite,
    /// pids.current, or the processes in cgroup.procs without the pids
    /// controller.
    Pids,
    /// The highest "some avg10" of the group's pressure files, percent
    /// (read while the PSI column is shown).
    PsiSome,
    /// The highest "full avg10", percent.
    PsiFull,
}

impl Figure {
    pub const ALL: [Self; 7] = [
        Self::Cpu,
        Self::Memory,
        Self::IoRead,
        Self::IoWrite,
        Self::Pids,
        Self::PsiSome,
        Self::PsiFull,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// A rate sums up as the mean of a span; a level as its highest.
    pub fn is_rate(self) -> bool {
        matches!(self, Self::Cpu | Self::IoRead | Self::IoWrite)
    }
}

const N: usize = Figure::ALL.len();
const PRESENT: u8 = 1;
const FROZEN_KNOWN: u8 = 2;
const FROZEN: u8 = 4;
const POPULATED_KNOWN: u8 = 8;
const POPULATED: u8 = 16;

/// A figure in 16 bits (the budget: 10,000 groups x 180 samples
/// in 32-byte entries took the resident memory to 98 MiB, over 100 MB;
/// see BENCHMARKS.md): a float of a 6-bit exponent and a 10-bit mantissa,
/// rounded to nearest, so within 1/2048 (0.05 %) of the figure, from
/// 2^-20 to 2^44 (16 TiB; larger is that), and 0 exact. Figures are never
/// negative (a negative one is kept as 0). [`q::NONE`]: no figure.
mod q {
    /// No figure.
    pub const NONE: u16 = u16::MAX;
    const BIAS: i32 = 20;
    const MANT: u32 = 10;

    pub fn encode(v: f64) -> u16 {
        if v.is_nan() {
            return NONE;
        }
        if v <= 0.0 {
            return 0;
        }
        if v.is_infinite() {
            return NONE - 1;
        }
        let bits = v.to_bits();
        let mut exp = ((bits >> 52) & 0x7ff) as i32 - 1023;
        let frac = bits & ((1 << 52) - 1);
        let shift = 52 - MANT;
        let mut m = (frac + (1 << (shift - 1))) >> shift;
        if m == 1 << MANT {
            m = 0;
            exp += 1;
        }
        let e = exp + BIAS;
        if e < 0 || (e == 0 && m == 0) {
            // below 2^-20 (0 is code 0): nothing an operator reads
            return 0;
        }
        if e > 63 {
            return NONE - 1;
        }
        let code = ((e as u32) << MANT | m as u32) as u16;
        code.min(NONE - 1)
    }

    pub fn decode(c: u16) -> f64 {
        match c {
            NONE => f64::NAN,
            0 => 0.0,
            c => {
                // the f64 with that exponent and the mantissa's top bits
                let exp = (i64::from(c >> MANT) - i64::from(BIAS) + 1023) as u64;
                let m = u64::from(c & ((1 << MANT) - 1));
                f64::from_bits(exp << 52 | m << (52 - MANT))
            }
        }
    }
}

/// One group at one moment: its figures (16 bits each, see [`q`]) and
/// its state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    fig: [u16; N],
    /// cpu.stat's throttled time per wall time in tenths of a percent
    /// (`GroupRates::throttled_pct`), [`NO_THROTTLED`] for none: the effect
    /// of a cpu.max edit compares it. It fills two of the three bytes the
    /// figures and flags leave over, an entry is 18 bytes. Kept in
    /// the first tier only (a coarse sample has none).
    throttled: u16,
    flags: u8,
}

/// No throttled figure in an [`Entry`].
const NO_THROTTLED: u16 = u16::MAX;

impl Entry {
    /// Not there at that moment.
    pub const ABSENT: Self = Self {
        fig: [q::NONE; N],
        throttled: NO_THROTTLED,
        flags: 0,
    };

    /// There, with no figure yet.
    #[must_use]
    pub fn present() -> Self {
        Self {
            fig: [q::NONE; N],
            throttled: NO_THROTTLED,
            flags: PRESENT,
        }
    }

    /// A group's figures from one refresh.
    #[must_use]
    pub fn of(g: &GroupSample, r: &GroupRates) -> Self {
        let hot = &g.hot;
        let centi = |c: Option<u32>| c.map(|c| f64::from(c) / 100.0);
        let mut e = Self::present()
            .with(Figure::Cpu, r.cpu_pct)
            .with(Figure::Memory, hot.memory_current.map(|b| b as f64))
            .with(Figure::IoRead, r.io.and_then(|io| io.rbps))
            .with(Figure::IoWrite, r.io.and_then(|io| io.wbps))
            .with(
                Figure::Pids,
                hot.pids_current.or(hot.nr_procs).map(|n| n as f64),
            )
            .with(Figure::PsiSome, centi(hot.psi_some_avg10))
            .with(Figure::PsiFull, centi(hot.psi_full_avg10))
            .with_throttled(r.throttled_pct);
        if let Some(ev) = &hot.events {
            e.set_state(ev.populated, ev.frozen);
        }
        e
    }

    /// The same entry with `f` set (`None` or not finite: no figure),
    /// within 0.05 % (see [`q`]).
    #[must_use]
    pub fn with(mut self, f: Figure, v: Option<f64>) -> Self {
        self.fig[f.index()] = match v {
            Some(v) if v.is_finite() => q::encode(v),
            _ => q::NONE,
        };
        self
    }

    /// The same entry with a throttled share, percent of one CPU (`None`
    /// or not finite: no figure; kept to a tenth, at most 6553.4 %).
    #[must_use]
    pub fn with_throttled(mut self, pct: Option<f64>) -> Self {
        self.throttled = match pct {
            Some(v) if v.is_finite() => {
                (v.max(0.0) * 10.0).round().min(f64::from(NO_THROTTLED - 1)) as u16
            }
            _ => NO_THROTTLED,
        };
        self
    }

    /// The throttled share, percent of one CPU, where there is one.
    pub fn throttled(&self) -> Option<f64> {
        (self.is_present() && self.throttled != NO_THROTTLED)
            .then(|| f64::from(self.throttled) / 10.0)
    }

    /// The same entry with cgroup.events' state.
    #[must_use]
    pub fn with_state(mut self, populated: Option<bool>, frozen: Option<bool>) -> Self {
        self.set_state(populated, frozen);
        self
    }

    fn set_state(&mut self, populated: Option<bool>, frozen: Option<bool>) {
        self.flags &= !(FROZEN_KNOWN | FROZEN | POPULATED_KNOWN | POPULATED);
        let bits = |v: Option<bool>, known: u8, on: u8| match v {
            Some(true) => known | on,
            Some(false) => known,
            None => 0,
        };
        self.flags |=
            bits(frozen, FROZEN_KNOWN, FROZEN) | bits(populated, POPULATED_KNOWN, POPULATED);
    }

    pub fn get(&self, f: Figure) -> Option<f64> {
        let c = self.fig[f.index()];
        (self.is_present() && c != q::NONE).then(|| q::decode(c))
    }

    pub fn is_present(&self) -> bool {
        self.flags & PRESENT != 0
    }

    /// cgroup.events' `frozen`, where the group has the file.
    pub fn frozen(&self) -> Option<bool> {
        (self.flags & FROZEN_KNOWN != 0).then_some(self.flags & FROZEN != 0)
    }

    /// cgroup.events' `populated`, where the group has the file.
    pub fn populated(&self) -> Option<bool> {
        (self.flags & POPULATED_KNOWN != 0).then_some(self.flags & POPULATED != 0)
    }
}

/// One tier: a sample per refresh (`every: None`) or one per span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierSpec {
    pub every: Option<Duration>,
    pub len: usize,
}

/// Samples a tier keeps.
pub const TIER_LEN: usize = 60;

/// The history holds at most this much with groups no longer there in
/// it (twice the hour of 10,000 groups): groups that come and go (a
/// delegated user making and removing groups, a recording whose every
/// frame names new ones) each keep a slot for as long as a ring holds
/// them, an hour by default. Every byte of a slot counts (its rings, its
/// path: a delegated user chooses its length, up to 4 KiB a name level,
/// its index entry); past this many the groups gone longest are
/// forgotten first. The groups there now always keep theirs.
pub const HISTORY_BYTES: usize = 64 << 20;

/// Every refresh, every 10 s, every minute; 60 of each.
pub const DEFAULT_TIERS: [TierSpec; 3] = [
    TierSpec {
        every: None,
        len: TIER_LEN,
    },
    TierSpec {
        every: Some(Duration::from_secs(10)),
        len: TIER_LEN,
    },
    TierSpec {
        every: Some(Duration::from_secs(60)),
        len: TIER_LEN,
    },
];

/// When a sample was taken: the collector's monotonic time (as
/// `Snapshot::at`) and the same moment as UNIX time. A coarse sample is
/// stamped with the last refresh of its span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    pub at: Duration,
    pub unix_s: f64,
}

/// A moment that can be shown: a sample of one tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    /// The tier (0: every refresh).
    pub tier: usize,
    /// The sample's number in its tier (counted from the first).
    pub no: u64,
    pub stamp: Stamp,
}

/// A coarse sample being summed up, per group.
#[derive(Debug, Clone, Copy)]
struct Agg {
    sum: [f32; N],
    count: [u16; N],
    flags: u8,
}

impl Agg {
    const EMPTY: Self = Self {
        sum: [0.0; N],
        count: [0; N],
        flags: 0,
    };

    fn add(&mut self, e: &Entry) {
        if !e.is_present() {
            return;
        }
        for f in Figure::ALL {
            let i = f.index();
            let Some(v) = e.get(f) else {
                continue;
            };
            let v = v as f32;
            if f.is_rate() {
                self.sum[i] += v;
            } else if self.count[i] == 0 || v > self.sum[i] {
                self.sum[i] = v;
            }
            self.count[i] = self.count[i].saturating_add(1);
        }
        // the state at the span's end
        self.flags = e.flags;
    }

    fn entry(&self) -> Entry {
        if self.flags & PRESENT == 0 {
            return Entry::ABSENT;
        }
        let mut e = Entry {
            fig: [q::NONE; N],
            throttled: NO_THROTTLED,
            flags: self.flags,
        };
        for f in Figure::ALL {
            let i = f.index();
            if self.count[i] > 0 {
                let v = if f.is_rate() {
                    self.sum[i] / f32::from(self.count[i])
                } else {
                    self.sum[i]
                };
                e.fig[i] = q::encode(f64::from(v));
            }
        }
        e
    }
}

struct Slot {
    /// The one copy of the path, shared with the index.
    path: Arc<GroupPath>,
    /// Per tier: `len` entries, sample `no` at `no % len`; `None` until
    /// the group is first there in that tier.
    rings: Vec<Option<Box<[Entry]>>>,
    /// Per tier: the sample being summed up (unused for tier 0's).
    pending: Vec<Agg>,
    /// Per tier: the last sample number the group was there.
    last_seen: Vec<Option<u64>>,
}

struct Tier {
    spec: TierSpec,
    stamps: VecDeque<Stamp>,
    /// Samples taken so far.
    pushed: u64,
    /// The span being summed up (coarse tiers): its number and last stamp.
    open: Option<(u64, Stamp)>,
}

/// Statistics of one figure over a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Samples with the figure.
    pub n: usize,
}

/// Every group's history.
pub struct Timeline {
    tiers: Vec<Tier>,
    index: HashMap<Arc<GroupPath>, usize>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// What the slots hold by [`Timeline::slot_bytes`], kept as they
    /// change (see [`HISTORY_BYTES`]), and the most they held at any
    /// moment (within a push too).
    held: usize,
    peak: usize,
}

impl Default for Timeline {
    fn default() -> Self {
        Self::new(&DEFAULT_TIERS)
    }
}

impl Timeline {
    /// A timeline with these tiers; the first is every refresh.
    #[must_use]
    pub fn new(specs: &[TierSpec]) -> Self {
        Self {
            tiers: specs
                .iter()
                .map(|&spec| Tier {
                    spec,
                    stamps: VecDeque::with_capacity(spec.len),
                    pushed: 0,
                    open: None,
                })
                .collect(),
            index: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            held: 0,
            peak: 0,
        }
    }

    /// What a slot costs besides its rings: the slot with its spans, its
    /// path (once, with the shared pointer's counts) and its index entry
    /// (a hash map's slot and control byte, at its 7/8 load).
    fn slot_overhead(&self, path_len: usize) -> usize {
        std::mem::size_of::<Option<Slot>>()
            + self.tiers.len()
                * (std::mem::size_of::<Agg>() + std::mem::size_of::<Option<u64>>() + 16)
            + path_len
            + 2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<GroupPath>()
            + (std::mem::size_of::<(Arc<GroupPath>, usize)>() + 1) * 8 / 7
    }

    /// Everything a slot holds (its overhead and its rings).
    fn slot_bytes(&self, s: &Slot) -> usize {
        self.slot_overhead(s.path.as_bytes().len())
            + s.rings
                .iter()
                .flatten()
                .map(|r| r.len() * std::mem::size_of::<Entry>())
                .sum::<usize>()
    }

    /// Frees slot `i`.
    fn forget(&mut self, i: usize) {
        if let Some(s) = self.slots[i].take() {
            self.held -= self.slot_bytes(&s);
            self.index.remove(&*s.path);
            self.free.push(i);
        }
    }

    /// The tiers' specifications.
    pub fn specs(&self) -> Vec<TierSpec> {
        self.tiers.iter().map(|t| t.spec).collect()
    }

    fn slot_of(&mut self, path: &GroupPath) -> usize {
        if let Some(&i) = self.index.get(path) {
            return i;
        }
        let n = self.tiers.len();
        let path = Arc::new(path.clone());
        self.held += self.slot_overhead(path.as_bytes().len());
        let slot = Slot {
            path: Arc::clone(&path),
            rings: (0..n).map(|_| None).collect(),
            pending: vec![Agg::EMPTY; n],
            last_seen: vec![None; n],
        };
        let i = if let Some(i) = self.free.pop() {
            self.slots[i] = Some(slot);
            i
        } else {
            self.slots.push(Some(slot));
            self.slots.len() - 1
        };
        self.index.insert(path, i);
        i
    }

    /// One refresh: every group there and its figures. Groups not named
    /// are not there at this moment.
    pub fn push<'a>(
        &mut self,
        stamp: Stamp,
        groups: impl IntoIterator<Item = (&'a GroupPath, Entry)>,
    ) {
        let mut now: Vec<Option<Entry>> = vec![None; self.slots.len()];
        for (path, e) in groups {
            let i = self.slot_of(path);
            if now.len() <= i {
                now.resize(i + 1, None);
            }
            now[i] = Some(e);
        }
        // coarse tiers: close the spans this refresh is past, then add it
        for t in 1..self.tiers.len() {
            let Some(every) = self.tiers[t].spec.every else {
                continue;
            };
            let bucket = (stamp.at.as_nanos() / every.as_nanos().max(1)) as u64;
            if let Some((open, last)) = self.tiers[t].open {
                if bucket != open {
                    // the close gives a ring to every group of the span
                    // without one: room for them first, not after
                    self.evict(&now, Some(t));
                    self.close(t, last);
                }
            }
            self.tiers[t].open = Some((bucket, stamp));
            for (i, slot) in self.slots.iter_mut().enumerate() {
                if let (Some(slot), Some(Some(e))) = (slot, now.get(i)) {
                    slot.pending[t].add(e);
                }
            }
        }
        self.record(0, stamp, |i, _| now.get(i).copied().flatten());
        self.reclaim();
        self.evict(&now, None);
    }

    /// Over [`HISTORY_BYTES`]: forgets the groups gone longest (not in
    /// `now`), until under it or only groups there now are left. With
    /// `closing`, the rings that closing that tier's span will give the
    /// groups in it count as held already (a span of churn gives
    /// thousands at once).
    fn evict(&mut self, now: &[Option<Entry>], closing: Option<usize>) {
        let ring = closing.map_or(0, |t| {
            self.tiers[t].spec.len.max(1) * std::mem::size_of::<Entry>()
        });
        let to_come = |s: &Slot| match closing {
            Some(t) if s.rings[t].is_none() && s.pending[t].flags & PRESENT != 0 => ring,
            _ => 0,
        };
        let mut need = self.held + self.slots.iter().flatten().map(to_come).sum::<usize>();
        if need <= HISTORY_BYTES {
            return;
        }
        let mut gone: Vec<(u64, usize)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(i, _)| now.get(*i).copied().flatten().is_none())
            .filter_map(|(i, s)| {
                let s = s.as_ref()?;
                // tier 0 counts refreshes: every group there was in it
                Some((s.last_seen.first().copied().flatten().unwrap_or(0), i))
            })
            .collect();
        gone.sort_unstable();
        for (_, i) in gone {
            if need <= HISTORY_BYTES {
                break;
            }
            if let Some(s) = &self.slots[i] {
                need -= self.slot_bytes(s) + to_come(s);
            }
            self.forget(i);
        }
    }

    /// Ends tier `t`'s open span as one sample stamped `last`.
    fn close(&mut self, t: usize, last: Stamp) {
        self.record(t, last, |_, slot| {
            let e = slot.pending[t].entry();
            slot.pending[t] = Agg::EMPTY;
            e.is_present().then_some(e)
        });
        self.tiers[t].open = None;
    }

    /// Writes sample `pushed` of tier `t`: each slot's entry from `entry`.
    fn record(
        &mut self,
        t: usize,
        stamp: Stamp,
        mut entry: impl FnMut(usize, &mut Slot) -> Option<Entry>,
    ) {
        let tier = &mut self.tiers[t];
        let no = tier.pushed;
        let len = tier.spec.len.max(1);
        tier.pushed += 1;
        if tier.stamps.len() == len {
            tier.stamps.pop_front();
        }
        tier.stamps.push_back(stamp);
        let pos = (no % len as u64) as usize;
        let held = &mut self.held;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(slot) = slot else { continue };
            let e = entry(i, slot);
            match (e, &mut slot.rings[t]) {
                (Some(e), ring) => {
                    let ring = ring.get_or_insert_with(|| {
                        *held += len * std::mem::size_of::<Entry>();
                        vec![Entry::ABSENT; len].into_boxed_slice()
                    });
                    ring[pos] = e;
                    slot.last_seen[t] = Some(no);
                }
                (None, Some(ring)) => ring[pos] = Entry::ABSENT,
                (None, None) => {}
            }
        }
        self.peak = self.peak.max(self.held);
    }

    /// Frees the slots of groups gone from every ring (and from every open
    /// span).
    fn reclaim(&mut self) {
        let gone: Vec<usize> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let s = s.as_ref()?;
                let all_gone = self.tiers.iter().enumerate().all(|(t, tier)| {
                    let kept =
                        s.last_seen[t].is_some_and(|n| tier.pushed - n <= tier.spec.len as u64);
                    !kept && s.pending[t].flags & PRESENT == 0
                });
                all_gone.then_some(i)
            })
            .collect();
        for i in gone {
            self.forget(i);
        }
    }

    /// Every moment that can be shown, oldest first: the refreshes of the
    /// first tier, then (going back) each coarser tier's samples older
    /// than the finer tier's oldest.
    pub fn moments(&self) -> Vec<Moment> {
        let mut out: Vec<Moment> = Vec::new();
        let mut oldest: Option<Duration> = None;
        for (t, tier) in self.tiers.iter().enumerate() {
            let first_no = tier.pushed - tier.stamps.len() as u64;
            let mut older: Vec<Moment> = tier
                .stamps
                .iter()
                .enumerate()
                .map(|(k, &stamp)| Moment {
                    tier: t,
                    no: first_no + k as u64,
                    stamp,
                })
                .filter(|m| oldest.is_none_or(|o| m.stamp.at < o))
                .collect();
            if let Some(m) = older.first() {
                oldest = Some(oldest.map_or(m.stamp.at, |o: Duration| o.min(m.stamp.at)));
            }
            older.append(&mut out);
            out = older;
        }
        out
    }

    /// The newest refresh.
    pub fn latest(&self) -> Option<Moment> {
        let tier = self.tiers.first()?;
        let stamp = *tier.stamps.back()?;
        Some(Moment {
            tier: 0,
            no: tier.pushed - 1,
            stamp,
        })
    }

    /// The moment nearest to `at`.
    pub fn nearest(&self, at: Duration) -> Option<Moment> {
        self.moments()
            .into_iter()
            .min_by_key(|m| m.stamp.at.abs_diff(at))
    }

    /// Whether tier `t` still holds sample `no`.
    fn holds(&self, t: usize, no: u64) -> bool {
        let tier = &self.tiers[t];
        no < tier.pushed && tier.pushed - no <= tier.stamps.len() as u64
    }

    /// A group at a moment (`None`: not there, or the moment is gone).
    pub fn entry(&self, path: &GroupPath, m: Moment) -> Option<Entry> {
        if !self.holds(m.tier, m.no) {
            return None;
        }
        let slot = self.slots[*self.index.get(path)?].as_ref()?;
        let ring = slot.rings.get(m.tier)?.as_ref()?;
        let e = ring[(m.no % ring.len() as u64) as usize];
        e.is_present().then_some(e)
    }

    /// Every group there at a moment (unordered).
    pub fn frame(&self, m: Moment) -> Vec<(&GroupPath, Entry)> {
        if !self.holds(m.tier, m.no) {
            return Vec::new();
        }
        self.slots
            .iter()
            .flatten()
            .filter_map(|s| {
                let ring = s.rings.get(m.tier)?.as_ref()?;
                let e = ring[(m.no % ring.len() as u64) as usize];
                e.is_present().then_some((&*s.path, e))
            })
            .collect()
    }

    /// A group's samples in tier `t`, oldest first, each with its stamp
    /// (`Entry::ABSENT` where it was not there).
    pub fn series(&self, path: &GroupPath, t: usize) -> Vec<(Stamp, Entry)> {
        let Some(tier) = self.tiers.get(t) else {
            return Vec::new();
        };
        let ring = self
            .index
            .get(path)
            .and_then(|&i| self.slots[i].as_ref())
            .and_then(|s| s.rings[t].as_ref());
        let first_no = tier.pushed - tier.stamps.len() as u64;
        tier.stamps
            .iter()
            .enumerate()
            .map(|(k, &stamp)| {
                let no = first_no + k as u64;
                let e = ring.map_or(Entry::ABSENT, |r| r[(no % r.len() as u64) as usize]);
                (stamp, e)
            })
            .collect()
    }

    /// One figure of a group over the refreshes (tier 0) taken in
    /// `(from, to]`: `None` when none of them has it.
    pub fn window(
        &self,
        path: &GroupPath,
        f: Figure,
        from: Duration,
        to: Duration,
    ) -> Option<Stats> {
        self.window_of(path, from, to, |e| e.get(f))
    }

    /// Like [`Self::window`], for any figure of an entry (`get`), such as
    /// [`Entry::throttled`].
    pub fn window_of(
        &self,
        path: &GroupPath,
        from: Duration,
        to: Duration,
        get: impl Fn(&Entry) -> Option<f64>,
    ) -> Option<Stats> {
        let vals: Vec<f64> = self
            .series(path, 0)
            .into_iter()
            .filter(|(s, _)| s.at > from && s.at <= to)
            .filter_map(|(_, e)| get(&e))
            .collect();
        if vals.is_empty() {
            return None;
        }
        let n = vals.len();
        Some(Stats {
            mean: vals.iter().sum::<f64>() / n as f64,
            min: vals.iter().copied().fold(f64::INFINITY, f64::min),
            max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n,
        })
    }

    /// The most the slots held at any moment, by the count of
    /// [`Timeline::bytes`] (a push allocates before it forgets).
    pub fn peak_bytes(&self) -> usize {
        self.peak
    }

    /// Groups with a slot (there now, or still in some ring).
    pub fn groups(&self) -> usize {
        self.index.len()
    }

    /// About how many bytes the history holds (rings, spans, the index).
    pub fn bytes(&self) -> usize {
        // the slots as the budget counts them, and what the index and the
        // slot list keep spare
        self.held
            + (self.index.capacity() - self.index.len())
                * (std::mem::size_of::<(Arc<GroupPath>, usize)>() + 1)
            + self.free.len() * std::mem::size_of::<Option<Slot>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> GroupPath {
        GroupPath::parse(s.as_bytes()).unwrap()
    }

    fn at(s: u64) -> Stamp {
        Stamp {
            at: Duration::from_secs(s),
            unix_s: 1_700_000_000.0 + s as f64,
        }
    }

    fn cpu(v: f64) -> Entry {
        Entry::present().with(Figure::Cpu, Some(v))
    }

    #[test]
    fn an_entry_keeps_what_it_was_given() {
        let e = Entry::present()
            .with(Figure::Memory, Some(1e9))
            .with(Figure::Cpu, None)
            .with(Figure::IoRead, Some(f64::NAN))
            .with_state(Some(true), Some(false));
        let mem = e.get(Figure::Memory).unwrap();
        assert!((mem - 1e9).abs() <= 1e9 / 2048.0, "{mem}");
        assert_eq!((e.get(Figure::Cpu), e.get(Figure::IoRead)), (None, None));
        assert_eq!((e.populated(), e.frozen()), (Some(true), Some(false)));
        assert_eq!(Entry::present().frozen(), None);
        assert_eq!(Entry::ABSENT.get(Figure::Memory), None);
        assert_eq!(e.throttled(), None);
        let t = Entry::present().with_throttled(Some(47.26));
        assert_eq!(t.throttled(), Some(47.3));
        assert_eq!(
            Entry::present().with_throttled(Some(1e9)).throttled(),
            Some(6553.4)
        );
        assert_eq!(Entry::ABSENT.with_throttled(Some(5.0)).throttled(), None);
        assert_eq!(
            std::mem::size_of::<Entry>(),
            18,
            "the budget counts 18 bytes"
        );
    }

    #[test]
    fn a_figure_keeps_within_a_two_thousandth_across_its_range() {
        for v in [
            1e-6,
            0.004,
            0.5,
            1.0,
            4.5,
            69.0,
            99.99,
            100.0,
            1234.5,
            2_560_000.0,
            1.5e9,
            3.3e12,
            1.6e13,
        ] {
            let back = q::decode(q::encode(v));
            assert!((back - v).abs() <= v / 2048.0, "{v} came back as {back}");
        }
        assert_eq!(q::decode(q::encode(0.0)).to_bits(), 0.0f64.to_bits());
        assert_eq!(
            q::decode(q::encode(-5.0)).to_bits(),
            0.0f64.to_bits(),
            "never negative"
        );
        assert!(q::decode(q::encode(f64::NAN)).is_nan());
        assert!(q::decode(q::encode(1e30)).is_finite(), "capped, not none");
        // whole numbers an operator compares stay whole up to 2048
        for v in [0.0, 1.0, 7.0, 30.0, 90.0, 1024.0, 2047.0] {
            assert_eq!(q::decode(q::encode(v)).to_bits(), v.to_bits(), "{v}");
        }
        // order is kept, so a sort by a past figure is right
        let mut last = 0;
        for i in 1..10_000 {
            let c = q::encode(f64::from(i) * 0.37);
            assert!(c >= last);
            last = c;
        }
    }

    #[test]
    fn the_first_tier_keeps_the_last_refreshes_in_order() {
        let mut t = Timeline::default();
        let a = p("a");
        for s in 0..70 {
            t.push(at(s), [(&a, cpu(s as f64))]);
        }
        let series = t.series(&a, 0);
        assert_eq!(series.len(), TIER_LEN);
        assert_eq!(series[0].0.at, Duration::from_secs(10));
        assert_eq!(series[59].1.get(Figure::Cpu), Some(69.0));
        let latest = t.latest().unwrap();
        assert_eq!(latest.stamp.at, Duration::from_secs(69));
        assert_eq!(t.entry(&a, latest).unwrap().get(Figure::Cpu), Some(69.0));
    }

    #[test]
    fn a_coarse_sample_is_the_mean_of_rates_and_the_peak_of_levels() {
        let mut t = Timeline::default();
        let a = p("a");
        // 0..9 in the first 10 s span, then one refresh in the next closes it
        for s in 0..=10 {
            let mem = if s == 3 { 500.0 } else { 100.0 };
            let e = cpu(s as f64).with(Figure::Memory, Some(mem));
            t.push(at(s), [(&a, e)]);
        }
        let ten = t.series(&a, 1);
        assert_eq!(ten.len(), 1, "one closed span");
        assert_eq!(
            ten[0].0.at,
            Duration::from_secs(9),
            "stamped with its last refresh"
        );
        assert_eq!(ten[0].1.get(Figure::Cpu), Some(4.5), "mean of 0..=9");
        assert_eq!(ten[0].1.get(Figure::Memory), Some(500.0), "the peak");
    }

    #[test]
    fn a_group_absent_at_a_moment_is_not_in_its_frame() {
        let mut t = Timeline::default();
        let (a, b) = (p("a"), p("a/b"));
        t.push(at(1), [(&a, cpu(1.0)), (&b, cpu(2.0))]);
        t.push(at(2), [(&a, cpu(3.0))]);
        let m = t.moments();
        assert_eq!(m.len(), 2);
        assert_eq!(t.frame(m[0]).len(), 2);
        let now: Vec<_> = t.frame(m[1]).into_iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(now, vec![a.clone()]);
        assert_eq!(t.entry(&b, m[1]), None);
        assert_eq!(t.entry(&b, m[0]).unwrap().get(Figure::Cpu), Some(2.0));
    }

    #[test]
    fn moments_go_back_through_the_coarser_tiers() {
        let mut t = Timeline::default();
        let a = p("a");
        // two hours of refreshes every second
        for s in 0..7200 {
            t.push(at(s), [(&a, cpu(1.0))]);
        }
        let m = t.moments();
        let times: Vec<u64> = m.iter().map(|m| m.stamp.at.as_secs()).collect();
        assert!(
            times.windows(2).all(|w| w[0] < w[1]),
            "oldest first, no repeats"
        );
        assert_eq!(m.last().unwrap().tier, 0);
        assert_eq!(m.iter().filter(|m| m.tier == 0).count(), 60);
        // the hour tier reaches an hour back (its last closed span ended at 7139)
        let oldest = m.first().unwrap();
        assert_eq!(oldest.tier, 2);
        assert!(7199 - oldest.stamp.at.as_secs() >= 3540, "{oldest:?}");
        // every moment shows the group
        assert!(m.iter().all(|m| t.entry(&a, *m).is_some()));
        assert_eq!(
            t.nearest(Duration::from_secs(7190))
                .unwrap()
                .stamp
                .at
                .as_secs(),
            7190
        );
    }

    #[test]
    fn a_removed_group_gives_its_slot_back_when_gone_from_every_ring() {
        let mut t = Timeline::default();
        let (a, gone) = (p("a"), p("gone"));
        t.push(at(0), [(&a, cpu(1.0)), (&gone, cpu(1.0))]);
        assert_eq!(t.groups(), 2);
        for s in 1..=3700 {
            t.push(at(s), [(&a, cpu(1.0))]);
        }
        assert_eq!(t.groups(), 1, "an hour and more later, it is forgotten");
        // a new group takes the freed slot
        let c = p("c");
        t.push(at(3701), [(&a, cpu(1.0)), (&c, cpu(7.0))]);
        assert_eq!(t.slots.len(), 2);
        assert_eq!(
            t.entry(&c, t.latest().unwrap()).unwrap().get(Figure::Cpu),
            Some(7.0)
        );
    }

    #[test]
    fn a_window_sums_up_the_refreshes_in_it() {
        let mut t = Timeline::default();
        let a = p("a");
        for s in 1..=10 {
            t.push(at(s), [(&a, cpu(if s <= 5 { 100.0 } else { 30.0 }))]);
        }
        let before = t
            .window(&a, Figure::Cpu, Duration::ZERO, Duration::from_secs(5))
            .unwrap();
        let after = t
            .window(
                &a,
                Figure::Cpu,
                Duration::from_secs(5),
                Duration::from_secs(10),
            )
            .unwrap();
        assert_eq!((before.mean, before.n), (100.0, 5));
        assert_eq!((after.mean, after.min, after.max), (30.0, 30.0, 30.0));
        assert_eq!(
            t.window(&a, Figure::Memory, Duration::ZERO, Duration::from_secs(10)),
            None
        );
    }

    #[test]
    fn memory_per_group_stays_within_the_budget() {
        let mut t = Timeline::default();
        let paths: Vec<GroupPath> = (0..100).map(|i| p(&format!("g{i}"))).collect();
        for s in 0..3700 {
            t.push(at(s), paths.iter().map(|p| (p, cpu(1.0))));
        }
        let per_group = t.bytes() / paths.len();
        // 180 samples x 18 bytes, plus the spans, the index and the path
        assert!(per_group < 3_700, "{per_group} bytes a group");
        assert!(per_group >= 180 * 18, "{per_group} bytes a group");
    }

    /// Groups of unique 2 KB paths made and removed at every refresh (a
    /// delegated user chooses the length): the history held twice each
    /// path, uncounted, and capped its slots by their rings alone, so it
    /// grew to 2.5 times its budget. Every byte counts, and what the
    /// groups gone hold stays within [`HISTORY_BYTES`].
    #[test]
    fn churn_of_long_unique_paths_stays_within_the_budget() {
        let mut t = Timeline::default();
        let level = "x".repeat(250);
        let long = |r: u64, k: u64| {
            let mut s = format!("churn-{r}-{k}");
            for _ in 0..8 {
                s.push('/');
                s.push_str(&level);
            }
            p(&s)
        };
        let mut peak = 0;
        for r in 0..60u64 {
            let paths: Vec<GroupPath> = (0..500).map(|k| long(r, k)).collect();
            t.push(at(r * 10), paths.iter().map(|p| (p, cpu(1.0))));
            peak = peak.max(t.bytes());
        }
        // the groups there now (500 with a ring of each tier) beside the
        // budget of the gone
        let now = 500 * (2_100 + 180 * 18 + 400);
        assert!(
            peak <= HISTORY_BYTES + now,
            "{} MiB held at the peak, {} groups",
            peak >> 20,
            t.groups()
        );
        // and the budget is used, not a few slots
        assert!(peak > HISTORY_BYTES / 2, "{} MiB", peak >> 20);
    }

    /// The replay's tiers (every refresh, then a day of minutes: 1,440
    /// entries a ring) under churn: closing a minute gave each of the
    /// thousands of groups of that minute a 26 KB ring at once, and only
    /// then forgot the gone ones (the replay TUI peaked at 352 MB for a
    /// 117 KB recording). Room is made before the close.
    #[test]
    fn closing_a_span_of_churn_stays_within_the_budget() {
        let tiers = [
            TierSpec {
                every: None,
                len: 200,
            },
            TierSpec {
                every: Some(Duration::from_secs(60)),
                len: 24 * 60,
            },
        ];
        let mut t = Timeline::new(&tiers);
        for r in 0..130u64 {
            let paths: Vec<GroupPath> = (0..200).map(|k| p(&format!("c/r{r}-{k}"))).collect();
            t.push(at(r), paths.iter().map(|p| (p, cpu(1.0))));
        }
        // the 200 groups there now, with a ring of each tier
        let now = 200 * (200 + 24 * 60) * std::mem::size_of::<Entry>() * 2;
        assert!(
            t.peak_bytes() <= HISTORY_BYTES + now,
            "{} MiB at the peak",
            t.peak_bytes() >> 20
        );
    }
}
