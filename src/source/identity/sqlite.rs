//! podman 5's state database, `<graphroot>/libpod/db.sql` (SQLite; the
//! default for new installs since podman 5, an option since 4.8): only
//! its table `PodConfig` (`ID TEXT PRIMARY KEY, Name TEXT UNIQUE, JSON
//! TEXT, ...`; early copies spell the id column `Id`), read from the
//! file's bytes already in memory by a reader of SQLite's file format
//! (sqlite.org/fileformat2.html) that knows one thing: a table b-tree's
//! rows. No SQLite library opens the user's file: no lock, no journal
//! or WAL file looked at, nothing written, no SQL run.
//!
//! - the header's first 100 bytes: `SQLite format 3\0`, the page size
//!   (u16 big-endian at 16, 1 meaning 65536), the bytes reserved at each
//!   page's end (20), the page count (28, used when the valid-for number
//!   at 92 equals the change counter at 24), the text encoding (56: only
//!   1, UTF-8, is read).
//! - `sqlite_master` is the table b-tree rooted at page 1 (its header at
//!   offset 100): rows `type, name, tbl_name, rootpage, sql`. The row of
//!   type `table` named `PodConfig` (any case) gives the root page and,
//!   from its `CREATE TABLE` text, which columns are `ID` and `Name`.
//! - a table b-tree page: type 0x05 (interior: cells `left child u32,
//!   rowid varint`, and a right-most child at 8) or 0x0d (leaf: cells
//!   `payload size varint, rowid varint, payload`, the payload's end in a
//!   chain of overflow pages when it does not fit); a row is a record: a
//!   header of serial types (varints), then the values.
//!
//! Bounds: a page size a power of two from 512 to 65536; each page number
//! inside the file and the header's count, each page read once (a cycle
//! ends the read), at most [`MAX_PAGES`] pages and [`MAX_DEPTH`] levels,
//! every cell and value inside its page and a page's cells apart (checked
//! before any is read), at most [`BUDGET`] times the file's length
//! examined in all, at most [`MAX_ROWS`] rows, at most [`WANT`] bytes of
//! a row read (a name of at most [`super::bolt::NAME_MAX`] bytes of UTF-8 and an
//! id of 64 hex digits need far less), at most [`super::bolt::MAX_PODS`]
//! rows. Any failure: no name from this file this pass ([`Bad`]). podman
//! writes with a rollback journal: a file read mid-write gives a missed
//! name, and a name is only looked up by a live group's id.

use super::bolt::{Bad, MAX_PODS, NAME_MAX};
use crate::model::identity::is_container_id;
use std::collections::{HashMap, HashSet};

/// The most pages read in one walk (sqlite_master's and PodConfig's
/// b-trees with the overflow pages of their rows' first bytes).
pub const MAX_PAGES: usize = 8192;
/// The deepest nesting of interior pages.
pub const MAX_DEPTH: usize = 16;
/// The most bytes of one row read (its first bytes: the record header,
/// the id and the name; a `CREATE TABLE` text).
pub const WANT: usize = 4096;
/// The most bytes one read examines, in multiples of the file's length:
/// with each page read once and a page's cells apart, a read examines
/// each byte at most twice (as a page, as a row's bytes copied); a file
/// made to cost more ends the read.
pub const BUDGET: usize = 4;
/// The most rows one read hands on (sqlite_master's and PodConfig's): a
/// row of a few bytes costs little of [`BUDGET`] but a record's decoding
/// all the same, and 4 MiB hold a million empty ones; podman's
/// sqlite_master has tens of rows, its PodConfig one a pod (at most
/// [`MAX_PODS`] kept).
pub const MAX_ROWS: usize = 2 * MAX_PODS;

const MAGIC: &[u8; 16] = b"SQLite format 3\0";
const INTERIOR_TABLE: u8 = 0x05;
const LEAF_TABLE: u8 = 0x0d;

fn be16(b: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_be_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    )))
}
fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// A varint at `at`: its value and its length (1 to 9 bytes).
fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let x = *b.get(at.checked_add(i)?)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(x), 9));
        }
        v = (v << 7) | u64::from(x & 0x7f);
        if x & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

struct Db<'a> {
    file: &'a [u8],
    page_size: usize,
    usable: usize,
    pages: usize,
    seen: HashSet<u32>,
    /// Bytes examined so far, and the most allowed.
    examined: usize,
    budget: usize,
    /// Rows handed on so far ([`MAX_ROWS`]).
    rows: usize,
}

impl<'a> Db<'a> {
    fn open(file: &'a [u8]) -> Result<Self, Bad> {
        if file.get(..16) != Some(MAGIC.as_slice()) || file.len() < 100 {
            return Err(Bad("not an SQLite file"));
        }
        let page_size = match be16(file, 16) {
            Some(1) => 65536,
            Some(n) if n.is_power_of_two() && n >= 512 => n,
            _ => return Err(Bad("a page size out of range")),
        };
        let reserved = usize::from(*file.get(20).ok_or(Bad("not an SQLite file"))?);
        let usable = page_size - reserved;
        // the least usable size SQLite allows
        if usable < 480 {
            return Err(Bad("too much reserved space"));
        }
        if be32(file, 56) != Some(1) {
            return Err(Bad("text not UTF-8"));
        }
        let in_file = file.len() / page_size;
        let counted = usize::try_from(be32(file, 28).unwrap_or(0)).unwrap_or(0);
        let pages = if counted > 0 && be32(file, 92) == be32(file, 24) {
            counted.min(in_file)
        } else {
            in_file
        };
        Ok(Self {
            file,
            page_size,
            usable,
            pages,
            seen: HashSet::new(),
            examined: 0,
            budget: file.len().saturating_mul(BUDGET),
            rows: 0,
        })
    }

    /// Counts `n` bytes examined against the read's budget.
    fn spend(&mut self, n: usize) -> Result<(), Bad> {
        self.examined = self.examined.saturating_add(n);
        if self.examined > self.budget {
            return Err(Bad("more work than the file's size is worth"));
        }
        Ok(())
    }

    /// How many of a leaf cell's `size` payload bytes are on its page
    /// (the file format's rule for table leaf cells).
    fn local(&self, size: usize) -> usize {
        let u = self.usable;
        let max_local = u - 35;
        if size <= max_local {
            return size;
        }
        let min_local = (u - 12) * 32 / 255 - 23;
        let k = min_local + (size - min_local) % (u - 4);
        if k <= max_local {
            k
        } else {
            min_local
        }
    }

    /// Where the cell at `at` of `p` ends (a leaf's with its overflow
    /// page number, an interior's after its rowid).
    fn cell_end(&self, p: &[u8], at: usize, kind: u8) -> Result<usize, Bad> {
        let bad = Bad("a cell out of its page");
        if kind == INTERIOR_TABLE {
            let (_, n) = varint(p, at.checked_add(4).ok_or(bad)?).ok_or(bad)?;
            return at.checked_add(4 + n).ok_or(bad);
        }
        let (size, n1) = varint(p, at).ok_or(bad)?;
        let (_, n2) = varint(p, at.checked_add(n1).ok_or(bad)?).ok_or(bad)?;
        let size = usize::try_from(size).map_err(|_| bad)?;
        let local = self.local(size);
        let over = if local < size { 4 } else { 0 };
        at.checked_add(n1 + n2 + local + over).ok_or(bad)
    }

    /// Page `n` (from 1), read once per walk.
    fn page(&mut self, n: u32) -> Result<&'a [u8], Bad> {
        let i = usize::try_from(n).map_err(|_| Bad("a page number out of range"))?;
        if i == 0 || i > self.pages {
            return Err(Bad("a page number out of range"));
        }
        if !self.seen.insert(n) {
            return Err(Bad("a page reached twice"));
        }
        if self.seen.len() > MAX_PAGES {
            return Err(Bad("too many pages"));
        }
        let out = Bad("a page out of the file");
        let start = (i - 1).checked_mul(self.page_size).ok_or(out)?;
        let p = self
            .file
            .get(start..start.checked_add(self.page_size).ok_or(out)?)
            .ok_or(out)?;
        self.spend(p.len())?;
        Ok(p)
    }

    /// Up to `want` first bytes of the payload of the leaf cell at `at`
    /// of `p`, with its rowid skipped.
    fn payload(&mut self, p: &'a [u8], at: usize, want: usize) -> Result<Vec<u8>, Bad> {
        let bad = Bad("a cell out of its page");
        let (size, n1) = varint(p, at).ok_or(bad)?;
        let (_, n2) = varint(p, at.checked_add(n1).ok_or(bad)?).ok_or(bad)?;
        let start = at.checked_add(n1 + n2).ok_or(bad)?;
        let size = usize::try_from(size).map_err(|_| bad)?;
        let u = self.usable;
        let local = self.local(size);
        let page_end = u.min(p.len());
        let end = start.checked_add(local).ok_or(bad)?;
        let here = p.get(start..end).filter(|_| end <= page_end).ok_or(bad)?;
        let want = want.min(size);
        self.spend(want)?;
        let mut out = here.get(..local.min(want)).ok_or(bad)?.to_vec();
        if out.len() < want {
            let mut next = be32(p, end).ok_or(bad)?;
            while out.len() < want {
                if next == 0 {
                    return Err(Bad("an overflow chain ends early"));
                }
                let o = self.page(next)?;
                next = be32(o, 0).ok_or(bad)?;
                let take = (u - 4).min(want - out.len());
                out.extend_from_slice(o.get(4..4 + take).ok_or(bad)?);
            }
        }
        Ok(out)
    }

    /// Each row's first bytes of the table b-tree rooted at `root`, to `f`
    /// (which says `false` to stop).
    fn rows(
        &mut self,
        root: u32,
        depth: usize,
        want: usize,
        f: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<bool, Bad> {
        if depth > MAX_DEPTH {
            return Err(Bad("pages nested too deep"));
        }
        let p = self.page(root)?;
        // page 1's b-tree header is after the file header
        let h = if root == 1 { 100 } else { 0 };
        let bad = Bad("a page header out of its page");
        let kind = *p.get(h).ok_or(bad)?;
        let cells = be16(p, h + 3).ok_or(bad)?;
        let head = match kind {
            LEAF_TABLE => 8,
            INTERIOR_TABLE => 12,
            _ => return Err(Bad("not a table b-tree page")),
        };
        if h + head + 2 * cells > self.usable {
            return Err(Bad("more cells than the page holds"));
        }
        // every cell inside the page's usable bytes and apart from the
        // others before any is read: 30,000 pointers at one cell would
        // copy it 30,000 times
        let mut spans = Vec::with_capacity(cells);
        for i in 0..cells {
            let at = be16(p, h + head + 2 * i).ok_or(bad)?;
            if at < h + head + 2 * cells || at >= self.usable {
                return Err(Bad("a cell out of its page"));
            }
            spans.push((at, self.cell_end(p, at, kind)?));
        }
        spans.sort_unstable();
        let mut free = h + head + 2 * cells;
        for &(at, end) in &spans {
            if at < free || end > self.usable {
                return Err(Bad("cells that overlap"));
            }
            free = end;
        }
        for i in 0..cells {
            let at = be16(p, h + head + 2 * i).ok_or(bad)?;
            if kind == LEAF_TABLE {
                self.rows += 1;
                if self.rows > MAX_ROWS {
                    return Err(Bad("too many rows"));
                }
                let row = self.payload(p, at, want)?;
                if !f(&row) {
                    return Ok(false);
                }
            } else {
                let child = be32(p, at).ok_or(bad)?;
                if !self.rows(child, depth + 1, want, f)? {
                    return Ok(false);
                }
            }
        }
        if kind == INTERIOR_TABLE {
            let right = be32(p, h + 8).ok_or(bad)?;
            return self.rows(right, depth + 1, want, f);
        }
        Ok(true)
    }
}

/// A record's value, as far as it is read.
#[derive(Debug, PartialEq, Eq)]
enum Value<'r> {
    Text(&'r [u8]),
    Int(i64),
    /// NULL, a blob, a float, or cut off by [`WANT`].
    Other,
}

/// The first `n` values of a record.
fn record(r: &[u8], n: usize) -> Vec<Value<'_>> {
    let mut out = Vec::with_capacity(n);
    let Some((hsize, mut at)) = varint(r, 0) else {
        return out;
    };
    let Ok(hsize) = usize::try_from(hsize) else {
        return out;
    };
    let mut body = hsize;
    while out.len() < n && at < hsize {
        let Some((t, len)) = varint(r, at) else {
            break;
        };
        at += len;
        let size = match t {
            0 | 8 | 9 => 0,
            1..=4 => t as usize,
            5 => 6,
            6 | 7 => 8,
            10 | 11 => break,
            _ => usize::try_from((t - 12) / 2).unwrap_or(usize::MAX),
        };
        let v = body
            .checked_add(size)
            .and_then(|end| r.get(body..end))
            .map_or(Value::Other, |b| match t {
                1..=6 => {
                    let mut x: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
                    for &c in b {
                        x = (x << 8) | i64::from(c);
                    }
                    Value::Int(x)
                }
                8 => Value::Int(0),
                9 => Value::Int(1),
                t if t >= 13 && t % 2 == 1 => Value::Text(b),
                _ => Value::Other,
            });
        out.push(v);
        body = body.saturating_add(size);
    }
    out
}

/// Which columns of a `CREATE TABLE` text are the id and the name: the
/// column definitions between the outer parentheses, split at commas
/// outside parentheses, each's first word (unquoted); table constraints
/// (`PRIMARY KEY (...)`, `FOREIGN KEY`, ...) are not columns.
fn columns(sql: &str) -> Option<(usize, usize)> {
    // the text is the file's: a `)` before the first `(` gives no columns
    let body = sql.get(sql.find('(')? + 1..sql.rfind(')')?)?;
    let mut defs = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                defs.push(&body[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    defs.push(&body[from..]);
    let mut id = None;
    let mut name = None;
    let mut col = 0;
    for d in defs {
        let word = d
            .split_whitespace()
            .next()?
            .trim_matches(|c| matches!(c, '"' | '`' | '[' | ']' | '\''));
        if ["CONSTRAINT", "PRIMARY", "FOREIGN", "UNIQUE", "CHECK"]
            .iter()
            .any(|k| word.eq_ignore_ascii_case(k))
        {
            continue;
        }
        if word.eq_ignore_ascii_case("id") {
            id.get_or_insert(col);
        } else if word.eq_ignore_ascii_case("name") {
            name.get_or_insert(col);
        }
        col += 1;
    }
    Some((id?, name?))
}

/// The pods of a db.sql's bytes: id -> name, the same rules as
/// [`super::bolt::pods`]. No `PodConfig` table: no pods.
pub fn pods(file: &[u8]) -> Result<HashMap<String, String>, Bad> {
    read(file).0
}

/// [`pods`], and the bytes the read examined: the pages read and the
/// rows' bytes copied (at most [`BUDGET`] times the file's length).
fn read(file: &[u8]) -> (Result<HashMap<String, String>, Bad>, usize) {
    match Db::open(file) {
        Ok(mut db) => {
            let r = walk(&mut db);
            (r, db.examined)
        }
        Err(b) => (Err(b), 0),
    }
}

fn walk(db: &mut Db<'_>) -> Result<HashMap<String, String>, Bad> {
    let mut table: Option<(u32, (usize, usize))> = None;
    let mut bad = None;
    db.rows(1, 0, WANT, &mut |row| {
        let v = record(row, 5);
        let is = |i: usize, s: &str| matches!(v.get(i), Some(Value::Text(t)) if t.eq_ignore_ascii_case(s.as_bytes()));
        if !(is(0, "table") && is(1, "PodConfig")) {
            return true;
        }
        let sql = match v.get(4) {
            Some(Value::Text(t)) => std::str::from_utf8(t).ok(),
            _ => None,
        };
        match (v.get(3), sql.and_then(columns)) {
            (Some(Value::Int(r)), Some(cols)) if u32::try_from(*r).is_ok_and(|r| r > 1) => {
                table = Some((*r as u32, cols));
            }
            _ => bad = Some(Bad("PodConfig's schema is not podman's")),
        }
        false
    })?;
    if let Some(b) = bad {
        return Err(b);
    }
    let mut out = HashMap::new();
    let Some((root, (id_col, name_col))) = table else {
        return Ok(out);
    };
    let want = 64 + 64 + NAME_MAX + 64;
    db.rows(root, 0, want, &mut |row| {
        let v = record(row, id_col.max(name_col) + 1);
        if let (Some(Value::Text(id)), Some(Value::Text(name))) = (v.get(id_col), v.get(name_col)) {
            if let (Ok(id), Ok(name)) = (std::str::from_utf8(id), std::str::from_utf8(name)) {
                if is_container_id(id) && !name.is_empty() && name.len() <= NAME_MAX {
                    out.entry(id.to_owned()).or_insert_with(|| name.to_owned());
                }
            }
        }
        out.len() < MAX_PODS
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> (Vec<u8>, HashMap<String, String>) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/podman-db");
        let file = std::fs::read(dir.join(name)).unwrap();
        // what sqlite3 itself answered (make-sqlite.sh)
        let expected = std::fs::read_to_string(dir.join(format!("{name}.expected"))).unwrap();
        let expected = expected
            .lines()
            .map(|l| {
                let (id, name) = l.split_once('\t').unwrap();
                (id.to_owned(), name.to_owned())
            })
            .collect();
        (file, expected)
    }

    #[test]
    fn every_pod_sqlite_lists_in_each_fixture() {
        for name in ["podman5-db.sql", "podman-early-Id.sql", "podman5-paged.sql"] {
            let (file, expected) = fixture(name);
            assert!(!expected.is_empty(), "{name}");
            assert_eq!(pods(&file), Ok(expected), "{name}");
        }
    }

    #[test]
    fn a_cut_file_or_a_cycle_gives_no_names_not_a_panic() {
        let (file, _) = fixture("podman5-paged.sql");
        // cut mid-way: the header's page count is more than the file holds
        assert!(pods(&file[..file.len() / 2]).is_err());
        // an interior page's right-most child made the page itself
        let ps = 512;
        let interior = (0..file.len() / ps)
            .find(|&i| i > 0 && file[i * ps] == INTERIOR_TABLE)
            .expect("an interior page");
        let mut f = file.clone();
        let me = (interior as u32 + 1).to_be_bytes();
        f[interior * ps + 8..interior * ps + 12].copy_from_slice(&me);
        assert_eq!(pods(&f), Err(Bad("a page reached twice")));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Random bytes, and each fixture with bytes changed or cut: no
        /// panic, a bounded time; in the fixtures whose rows sit whole on
        /// their pages, every name given is in the file's bytes, under an
        /// id in them too.
        #[test]
        fn any_file_reads_without_panic_in_bounded_time_and_names_only_what_it_holds(
            random in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20_000),
            changes in proptest::collection::vec((0usize..200_000, proptest::prelude::any::<u8>()), 1..40),
            cut in 0usize..80_000,
            pointers in proptest::collection::vec((0usize..3, 0usize..4096), 0..1500),
            own in proptest::collection::vec(0usize..2, 0..1500),
        ) {
            let mut header = b"SQLite format 3\0".to_vec();
            header.extend_from_slice(&random);
            for (name, whole_rows) in [("podman5-db.sql", true), ("podman-early-Id.sql", true), ("podman5-paged.sql", false)] {
                let (f, _) = fixture(name);
                let m = super::super::tests::mutated(&f, &changes);
                for file in [random.clone(), header.clone(), m, f[..cut.min(f.len())].to_vec(), with_cells(&pointers), with_cells(&own.iter().map(|&w| (w, 0)).collect::<Vec<_>>())] {
                    let t = std::time::Instant::now();
                    let (r, examined) = read(&file);
                    // the work is the file's size's: pages once, cells apart
                    proptest::prop_assert!(examined <= 2 * file.len(), "{examined} bytes examined of {}", file.len());
                    if let Ok(p) = r {
                        for (id, n) in &p {
                            let holds = |s: &str| file.windows(s.len()).any(|w| w == s.as_bytes());
                            proptest::prop_assert!(!whole_rows || (holds(id) && holds(n)), "{id} {n:?}");
                            proptest::prop_assert!(is_container_id(id) && n.len() <= NAME_MAX);
                        }
                    }
                    proptest::prop_assert!(t.elapsed() < std::time::Duration::from_secs(1));
                }
            }
        }
    }

    /// podman5-db.sql with PodConfig's leaf page (4) holding the cell
    /// pointers `(which, at)`: its own first or second cell, or `at`.
    fn with_cells(pointers: &[(usize, usize)]) -> Vec<u8> {
        let (mut f, _) = fixture("podman5-db.sql");
        let p = 3 * 4096;
        assert_eq!((f[p], be16(&f, p + 3)), (LEAF_TABLE, Some(2)));
        let own = [be16(&f, p + 8).unwrap(), be16(&f, p + 10).unwrap()];
        let n = pointers.len().min((4096 - 8) / 2);
        f[p + 3..p + 5].copy_from_slice(&(n as u16).to_be_bytes());
        for (i, &(which, at)) in pointers.iter().take(n).enumerate() {
            let at = own.get(which).copied().unwrap_or(at) as u16;
            f[p + 8 + 2 * i..p + 10 + 2 * i].copy_from_slice(&at.to_be_bytes());
        }
        f
    }

    #[test]
    fn cells_that_overlap_are_refused_before_any_is_copied() {
        // 1,000 pointers at the first pod's cell: the same row 1,000 times
        let f = with_cells(&[(0, 0); 1000]);
        let (r, examined) = read(&f);
        assert_eq!(r, Err(Bad("cells that overlap")));
        // sqlite_master's page and its row, and this page: not 1,000 rows
        assert!(examined <= 4 * 4096, "{examined}");
        // the page's own two cells, once each: both pods
        let (r, _) = read(&with_cells(&[(0, 0), (1, 0)]));
        assert_eq!(r.map(|p| p.len()), Ok(2));
    }

    /// A file of 64 KiB pages: page 1 an interior page whose children
    /// are the leaves 2..=`pages`, each as many 2-byte empty cells (size
    /// 0, rowid 0) as fit, all apart: a row for each 4 bytes of the file.
    fn empty_rows(pages: usize) -> Vec<u8> {
        const PS: usize = 65536;
        let mut f = vec![0u8; PS * pages];
        f[..16].copy_from_slice(MAGIC);
        f[16..18].copy_from_slice(&1u16.to_be_bytes());
        f[56..60].copy_from_slice(&1u32.to_be_bytes());
        let h = 100;
        f[h] = INTERIOR_TABLE;
        let kids: Vec<u32> = (2..=pages as u32).collect();
        let (cells, right) = kids.split_at(kids.len() - 1);
        f[h + 3..h + 5].copy_from_slice(&(cells.len() as u16).to_be_bytes());
        f[h + 8..h + 12].copy_from_slice(&right[0].to_be_bytes());
        for (i, c) in cells.iter().enumerate() {
            let at = PS - 5 * (i + 1);
            f[h + 12 + 2 * i..h + 14 + 2 * i].copy_from_slice(&(at as u16).to_be_bytes());
            f[at..at + 4].copy_from_slice(&c.to_be_bytes());
        }
        for pg in 1..pages {
            let p = pg * PS;
            let n = (PS - 8) / 4;
            f[p] = LEAF_TABLE;
            f[p + 3..p + 5].copy_from_slice(&(n as u16).to_be_bytes());
            for i in 0..n {
                let at = (8 + 2 * n + 2 * i) as u16;
                f[p + 8 + 2 * i..p + 10 + 2 * i].copy_from_slice(&at.to_be_bytes());
            }
        }
        f
    }

    #[test]
    fn a_million_empty_rows_are_refused_at_the_row_cap() {
        // 4 MiB (a rootless store's cap) of empty rows: within the byte
        // budget (each page once, nothing copied), but each row still
        // costs a record's decoding: a million of them, half a second of
        // a debug build's CPU in every read
        let f = empty_rows(64);
        let mut db = Db::open(&f).unwrap();
        let mut handed = 0usize;
        let r = db.rows(1, 0, WANT, &mut |_| {
            handed += 1;
            true
        });
        assert_eq!(r, Err(Bad("too many rows")));
        assert!(handed <= MAX_ROWS, "{handed} rows handed on");
        assert_eq!(read(&f).0, Err(Bad("too many rows")));
        // a real file's rows are all read
        let (file, expected) = fixture("podman5-paged.sql");
        assert_eq!(pods(&file), Ok(expected));
    }

    #[test]
    fn varints_and_records() {
        assert_eq!(varint(&[0x05], 0), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
        // header 4 bytes: text "ab" (17), int8 (1), NULL
        let r = [4, 17, 1, 0, b'a', b'b', 0xfe];
        assert_eq!(
            record(&r, 3),
            vec![Value::Text(b"ab"), Value::Int(-2), Value::Other]
        );
    }

    #[test]
    fn the_id_and_name_columns_in_both_spellings() {
        let podman = "CREATE TABLE PodConfig(\n ID TEXT PRIMARY KEY NOT NULL,\n Name TEXT UNIQUE NOT NULL,\n JSON TEXT NOT NULL,\n FOREIGN KEY (ID) REFERENCES IDNamespace(ID) DEFERRABLE INITIALLY DEFERRED)";
        assert_eq!(columns(podman), Some((0, 1)));
        assert_eq!(
            columns("CREATE TABLE PodConfig(\"Json\" TEXT, Id TEXT PRIMARY KEY, Name TEXT)"),
            Some((1, 2))
        );
        assert_eq!(columns("CREATE TABLE PodConfig(X TEXT)"), None);
        assert_eq!(columns("no parentheses"), None);
        // the last `)` before the first `(`: no columns, not a panic
        assert_eq!(columns(")("), None);
        assert_eq!(
            columns("CREATE TABLE PodConfig) ID TEXT, Name TEXT ("),
            None
        );
        assert_eq!(columns("()"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        /// Any `CREATE TABLE` text (a row of sqlite_master is the file's):
        /// no panic; columns found are distinct and among the text's
        /// definitions.
        #[test]
        fn any_create_table_text_gives_columns_or_none_without_panic(
            sql in "[()ID Nam,\"`\\[\\]'a-z\u{e9}\u{202e}]{0,60}",
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            for text in [sql.clone(), String::from_utf8_lossy(&bytes).into_owned(), format!("CREATE TABLE PodConfig{sql}")] {
                if let Some((id, name)) = columns(&text) {
                    proptest::prop_assert!(id != name);
                    proptest::prop_assert!(id.max(name) < text.matches(',').count() + 1);
                }
            }
        }
    }
}
