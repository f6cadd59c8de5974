//! podman 4.x's state database, `<graphroot>/libpod/bolt_state.db` (a
//! BoltDB file): only its top-level bucket `allPods`, pod id -> pod name
//! (raw bytes), read from the file's bytes already in memory. No lock is
//! taken (podman's flock could hold us), nothing is written, no side file.
//!
//! The format is bbolt's (go.etcd.io/bbolt, read from its source: pages,
//! meta, elements laid over the mmap in host byte order):
//! - a page: `id u64, flags u16, count u16, overflow u32`, then `count`
//!   16-byte elements; page N at `N * page_size`, `overflow + 1` pages long;
//!   flags branch 0x01, leaf 0x02, meta 0x04, freelist 0x10.
//! - pages 0 and 1 hold a meta after the header: `magic u32 (0xED0CDAED),
//!   version u32 (2), page_size u32, flags u32, root {pgid u64, seq u64},
//!   freelist u64, pgid u64 (pages in use), txid u64, checksum u64`
//!   (FNV-1a 64 of the 56 bytes before it); the valid one of higher txid
//!   is the current one.
//! - a branch element `pos u32, ksize u32, pgid u64`; a leaf element
//!   `flags u32, pos u32, ksize u32, vsize u32`, its key `pos` bytes after
//!   the element itself and its value right after the key; flags 0x01: the
//!   value is a nested bucket, `root u64, seq u64`, whose root 0 means the
//!   bucket's own leaf page follows inline in the value.
//!
//! Bounds, since the file is whoever-writes-it's (a rootless user's own):
//! the page size a power of two from 1 KiB to 64 KiB; every page number
//! below the meta's count and inside the file, each page (with its
//! overflow pages) visited once (a cycle ends the read), at most
//! [`MAX_PAGES`] pages and [`MAX_DEPTH`] levels, every element, key and
//! value inside its page and a leaf page's keys and values in order and
//! apart (checked before any is used), sizes checked before any UTF-8 is
//! decoded, at most [`BUDGET`] times the file's length examined, at most
//! [`MAX_ELEMENTS`] leaf elements handed on, at most [`MAX_PODS`] pods, a
//! name of at most [`NAME_MAX`] bytes of UTF-8, a pod id of 64 (or 32)
//! hex digits. Any failure: no name from this file this
//! pass ([`Bad`]), never a panic. podman may be writing meanwhile (we hold
//! no reader transaction): a torn read gives a missed name, and since a
//! name is only looked up by the id in a live group's name, an old or
//! wrong entry never labels another group.

use crate::model::identity::is_container_id;
use std::collections::{HashMap, HashSet};

/// The most pages read in one walk (of 4 KiB: 4 MiB): a real file's root
/// and `allPods` take a handful.
pub const MAX_PAGES: usize = 1024;
/// The deepest nesting of branch pages (a B+tree of 1024 pages is 3 or 4).
pub const MAX_DEPTH: usize = 8;
/// A pod name's longest (podman's names are DNS-like, at most 253).
pub const NAME_MAX: usize = 253;
/// The most pods kept of one file.
pub const MAX_PODS: usize = 20_000;
/// The most bytes one read examines, in multiples of the file's length:
/// with pages that never overlap and leaf elements apart, a read examines
/// each byte at most three times (as a page, as a value handed on, as an
/// element of the inline bucket inside that value); a file made to cost
/// more ends the read.
pub const BUDGET: usize = 4;
/// The most leaf elements one read hands on (the root bucket's and
/// `allPods`'s): an empty element costs nothing of [`BUDGET`] but its
/// checks all the same, and 4 MiB hold a quarter of a million; podman's
/// root bucket has tens of keys, `allPods` one a pod (at most
/// [`MAX_PODS`] kept).
pub const MAX_ELEMENTS: usize = 2 * MAX_PODS;

const MAGIC: u32 = 0xED0C_DAED;
const VERSION: u32 = 2;
const HEADER: usize = 16;
const ELEMENT: usize = 16;
const META_LEN: usize = 64;
const BRANCH: u16 = 0x01;
const LEAF: u16 = 0x02;
const BUCKET_FLAG: u32 = 0x01;
/// The top-level bucket of pod id -> name (libpod's `allPodsName`).
const ALL_PODS: &[u8] = b"allPods";

/// Why a file gave no names (what failed first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bad(pub &'static str);

/// FNV-1a 64, bbolt's meta checksum.
fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

#[derive(Debug, Clone, Copy)]
struct Meta {
    page_size: usize,
    root: u64,
    pages: u64,
    txid: u64,
}

/// The meta at `off` (a page's start), if it validates.
fn meta_at(file: &[u8], off: usize) -> Option<Meta> {
    let m = file.get(off.checked_add(HEADER)?..off.checked_add(HEADER + META_LEN)?)?;
    if u32_at(m, 0)? != MAGIC || u32_at(m, 4)? != VERSION || u64_at(m, 56)? != fnv1a(m.get(..56)?) {
        return None;
    }
    let page_size = usize::try_from(u32_at(m, 8)?).ok()?;
    if !page_size.is_power_of_two() || !(1024..=65536).contains(&page_size) {
        return None;
    }
    Some(Meta {
        page_size,
        root: u64_at(m, 16)?,
        pages: u64_at(m, 40)?,
        txid: u64_at(m, 48)?,
    })
}

/// The current meta: of page 0 and page 1 the valid one of higher txid.
fn meta(file: &[u8]) -> Result<Meta, Bad> {
    let m0 = meta_at(file, 0);
    // page 1 is one page size in: meta 0's, or each size bbolt allows
    let m1 = match m0 {
        Some(m) => meta_at(file, m.page_size),
        None => (10..=16).find_map(|s| meta_at(file, 1 << s).filter(|m| m.page_size == 1 << s)),
    };
    let m = match (m0, m1) {
        (Some(a), Some(b)) if a.page_size == b.page_size => {
            if b.txid > a.txid {
                b
            } else {
                a
            }
        }
        // two valid metas that disagree on the page size: not bbolt's
        (Some(_), Some(_)) => return Err(Bad("the two metas disagree")),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => return Err(Bad("no valid meta page")),
    };
    Ok(m)
}

/// One page's bytes: a page of the file, or a bucket's inline page.
type Page<'a> = &'a [u8];

struct Walk<'a> {
    file: &'a [u8],
    meta: Meta,
    seen: HashSet<u64>,
    /// Bytes examined so far, and the most allowed.
    examined: usize,
    budget: usize,
    /// Leaf elements handed on so far ([`MAX_ELEMENTS`]).
    elements: usize,
}

impl<'a> Walk<'a> {
    /// Page `id` with its overflow pages, read once per walk.
    fn page(&mut self, id: u64) -> Result<Page<'a>, Bad> {
        if id < 2 || id >= self.meta.pages {
            return Err(Bad("a page number out of range"));
        }
        let ps = self.meta.page_size as u64;
        let start = id.checked_mul(ps).ok_or(Bad("a page out of the file"))?;
        let head = usize::try_from(start)
            .ok()
            .and_then(|s| self.file.get(s..s.checked_add(HEADER)?))
            .ok_or(Bad("a page out of the file"))?;
        if u64_at(head, 0) != Some(id) {
            return Err(Bad("a page whose id is another's"));
        }
        let overflow = u64::from(u32_at(head, 12).unwrap_or(u32::MAX));
        // an overflow past the meta's count, or the page budget, is refused
        if overflow >= self.meta.pages - id || overflow as usize >= MAX_PAGES {
            return Err(Bad("a page's overflow out of range"));
        }
        // the page and its overflow pages each read once: a page inside
        // another's overflow is refused, so the pages read never overlap
        for n in id..=id + overflow {
            if !self.seen.insert(n) {
                return Err(Bad("a page reached twice"));
            }
            if self.seen.len() > MAX_PAGES {
                return Err(Bad("too many pages"));
            }
        }
        let end = (id + overflow + 1)
            .checked_mul(ps)
            .ok_or(Bad("a page out of the file"))?;
        let p = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| self.file.get(s..e))
            .ok_or(Bad("a page out of the file"))?;
        self.spend(p.len())?;
        Ok(p)
    }

    /// Counts `n` bytes examined against the read's budget.
    fn spend(&mut self, n: usize) -> Result<(), Bad> {
        self.examined = self.examined.saturating_add(n);
        if self.examined > self.budget {
            return Err(Bad("more work than the file's size is worth"));
        }
        Ok(())
    }
}

/// A page's flags and its elements' count, checked to fit in it.
fn elements(p: Page<'_>) -> Result<(u16, usize), Bad> {
    let flags = u16_at(p, 8).ok_or(Bad("a short page"))?;
    let count = usize::from(u16_at(p, 10).ok_or(Bad("a short page"))?);
    if HEADER + count * ELEMENT > p.len() {
        return Err(Bad("more elements than the page holds"));
    }
    Ok((flags, count))
}

/// Checks a leaf page's elements before any is used: each key and value
/// inside the page, after the elements, and after the previous element's
/// value (bbolt writes them in order), so that no two overlap and all keys
/// and values together are at most the page's length.
fn leaves_apart(p: Page<'_>, count: usize) -> Result<(), Bad> {
    // in bounds: `elements` checked that the elements fit
    let mut free = HEADER + count * ELEMENT;
    for i in 0..count {
        let (_, k0, _, v1) = leaf_at(p, i)?;
        if k0 < free || v1 > p.len() {
            return Err(Bad("leaf elements that overlap"));
        }
        free = v1;
    }
    Ok(())
}

/// Leaf element `i`'s flags, and where its key starts, its value starts
/// and its value ends.
fn leaf_at(p: Page<'_>, i: usize) -> Result<(u32, usize, usize, usize), Bad> {
    let e = HEADER + i * ELEMENT;
    let bad = Bad("a leaf element out of its page");
    let flags = u32_at(p, e).ok_or(bad)?;
    let pos = u32_at(p, e + 4).ok_or(bad)? as usize;
    let ksize = u32_at(p, e + 8).ok_or(bad)? as usize;
    let vsize = u32_at(p, e + 12).ok_or(bad)? as usize;
    let k0 = e.checked_add(pos).ok_or(bad)?;
    let v0 = k0.checked_add(ksize).ok_or(bad)?;
    let v1 = v0.checked_add(vsize).ok_or(bad)?;
    Ok((flags, k0, v0, v1))
}

/// The key and value of leaf element `i`, and its flags.
fn leaf(p: Page<'_>, i: usize) -> Result<(u32, &[u8], &[u8]), Bad> {
    let bad = Bad("a leaf element out of its page");
    let (flags, k0, v0, v1) = leaf_at(p, i)?;
    Ok((flags, p.get(k0..v0).ok_or(bad)?, p.get(v0..v1).ok_or(bad)?))
}

/// The child page of branch element `i`.
fn branch(p: Page<'_>, i: usize) -> Result<u64, Bad> {
    u64_at(p, HEADER + i * ELEMENT + 8).ok_or(Bad("a branch element out of its page"))
}

/// A bucket's value: its root page, or its inline leaf page.
#[derive(Clone, Copy)]
enum Root<'a> {
    Page(u64),
    Inline(Page<'a>),
}

fn bucket(v: &[u8]) -> Result<Root<'_>, Bad> {
    if v.len() < HEADER {
        return Err(Bad("a short bucket value"));
    }
    let root = u64_at(v, 0).ok_or(Bad("a short bucket value"))?;
    if root != 0 {
        return Ok(Root::Page(root));
    }
    let p = v.get(HEADER..).unwrap_or_default();
    if p.len() < HEADER {
        return Err(Bad("a short inline bucket"));
    }
    Ok(Root::Inline(p))
}

impl<'a> Walk<'a> {
    fn open(&mut self, root: Root<'a>) -> Result<Page<'a>, Bad> {
        match root {
            Root::Page(id) => self.page(id),
            Root::Inline(p) => {
                if elements(p)?.0 & LEAF == 0 {
                    return Err(Bad("an inline bucket that is not a leaf"));
                }
                Ok(p)
            }
        }
    }

    /// Each leaf element below `p`, in order, to `f` (which says `false`
    /// to stop).
    fn each(
        &mut self,
        p: Page<'a>,
        depth: usize,
        f: &mut dyn FnMut(u32, &'a [u8], &'a [u8]) -> bool,
    ) -> Result<bool, Bad> {
        if depth > MAX_DEPTH {
            return Err(Bad("pages nested too deep"));
        }
        let (flags, count) = elements(p)?;
        if flags == BRANCH {
            for i in 0..count {
                let child = self.page(branch(p, i)?)?;
                if !self.each(child, depth + 1, f)? {
                    return Ok(false);
                }
            }
            Ok(true)
        } else if flags == LEAF {
            leaves_apart(p, count)?;
            for i in 0..count {
                self.elements += 1;
                if self.elements > MAX_ELEMENTS {
                    return Err(Bad("too many elements"));
                }
                let (fl, k, v) = leaf(p, i)?;
                // what `f` may look at: apart, at most the page's length
                self.spend(k.len() + v.len())?;
                if !f(fl, k, v) {
                    return Ok(false);
                }
            }
            Ok(true)
        } else {
            Err(Bad("a page that is neither a branch nor a leaf"))
        }
    }
}

/// The pods of a bolt_state.db's bytes: id -> name. A pod id that is not
/// 64 (or 32) hex digits, or a name that is empty, longer than
/// [`NAME_MAX`] or not UTF-8, is left out; the first of a repeated id is
/// kept. No `allPods` bucket: no pods.
pub fn pods(file: &[u8]) -> Result<HashMap<String, String>, Bad> {
    read(file).0
}

/// [`pods`], and the bytes the read examined: the pages read, and the
/// keys and values handed on (at most [`BUDGET`] times the file's length).
fn read(file: &[u8]) -> (Result<HashMap<String, String>, Bad>, usize) {
    let mut w = Walk {
        file,
        meta: Meta {
            page_size: 0,
            root: 0,
            pages: 0,
            txid: 0,
        },
        seen: HashSet::new(),
        examined: 0,
        budget: file.len().saturating_mul(BUDGET),
        elements: 0,
    };
    let r = walk(&mut w);
    (r, w.examined)
}

fn walk(w: &mut Walk<'_>) -> Result<HashMap<String, String>, Bad> {
    let meta = meta(w.file)?;
    w.meta = meta;
    let root = w.page(meta.root)?;
    let mut found: Option<&[u8]> = None;
    let mut bad = None;
    w.each(root, 0, &mut |fl, k, v| {
        if k == ALL_PODS {
            if fl & BUCKET_FLAG == 0 {
                bad = Some(Bad("allPods is not a bucket"));
            } else {
                found = Some(v);
            }
            return false;
        }
        true
    })?;
    if let Some(b) = bad {
        return Err(b);
    }
    let mut out = HashMap::new();
    let Some(v) = found else {
        return Ok(out);
    };
    let page = w.open(bucket(v)?)?;
    w.each(page, 0, &mut |fl, k, v| {
        // sizes first: only an id's and a name's are decoded
        if fl & BUCKET_FLAG != 0
            || !matches!(k.len(), 32 | 64)
            || v.is_empty()
            || v.len() > NAME_MAX
        {
            return true;
        }
        let (Ok(id), Ok(name)) = (std::str::from_utf8(k), std::str::from_utf8(v)) else {
            return true;
        };
        if is_container_id(id) && !name.is_empty() && name.len() <= NAME_MAX {
            out.entry(id.to_owned()).or_insert_with(|| name.to_owned());
        }
        out.len() < MAX_PODS
    })?;
    Ok(out)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A bolt file of page size 4096 made by hand, the way bbolt lays it
    /// out: metas 0 and 1, the root leaf at page 3 holding `allPods`
    /// (inline, or at page 4 when `inline` is false) and `other`.
    pub fn made(pods: &[(&str, &str)], inline: bool) -> Vec<u8> {
        const PS: usize = 4096;
        let mut f = vec![0u8; PS * 5];
        let page_head = |f: &mut [u8], at: usize, id: u64, flags: u16, count: u16| {
            f[at..at + 8].copy_from_slice(&id.to_ne_bytes());
            f[at + 8..at + 10].copy_from_slice(&flags.to_ne_bytes());
            f[at + 10..at + 12].copy_from_slice(&count.to_ne_bytes());
        };
        // a leaf page's bytes (header + elements + data)
        let leaf_page = |id: u64, items: &[(u32, Vec<u8>, Vec<u8>)]| {
            let mut p = vec![0u8; HEADER + ELEMENT * items.len()];
            page_head(&mut p, 0, id, LEAF, items.len() as u16);
            for (i, (fl, k, v)) in items.iter().enumerate() {
                let e = HEADER + i * ELEMENT;
                let offset = (p.len() - e) as u32;
                p[e..e + 4].copy_from_slice(&fl.to_ne_bytes());
                p[e + 4..e + 8].copy_from_slice(&offset.to_ne_bytes());
                p[e + 8..e + 12].copy_from_slice(&(k.len() as u32).to_ne_bytes());
                p[e + 12..e + 16].copy_from_slice(&(v.len() as u32).to_ne_bytes());
                p.extend_from_slice(k);
                p.extend_from_slice(v);
            }
            p
        };
        let items: Vec<(u32, Vec<u8>, Vec<u8>)> = pods
            .iter()
            .map(|(k, v)| (0, k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        let pods_page = leaf_page(if inline { 0 } else { 4 }, &items);
        let mut bucket_value = vec![0u8; 16];
        if inline {
            bucket_value.extend_from_slice(&pods_page);
        } else {
            bucket_value[..8].copy_from_slice(&4u64.to_ne_bytes());
            f[4 * PS..4 * PS + pods_page.len()].copy_from_slice(&pods_page);
        }
        let root = leaf_page(
            3,
            &[
                (BUCKET_FLAG, ALL_PODS.to_vec(), bucket_value),
                (0, b"other".to_vec(), b"x".to_vec()),
            ],
        );
        f[3 * PS..3 * PS + root.len()].copy_from_slice(&root);
        for (pg, txid) in [(0usize, 6u64), (1, 7)] {
            let at = pg * PS;
            page_head(&mut f, at, pg as u64, 0x04, 0);
            let m = at + HEADER;
            f[m..m + 4].copy_from_slice(&MAGIC.to_ne_bytes());
            f[m + 4..m + 8].copy_from_slice(&VERSION.to_ne_bytes());
            f[m + 8..m + 12].copy_from_slice(&(PS as u32).to_ne_bytes());
            f[m + 16..m + 24].copy_from_slice(&3u64.to_ne_bytes());
            f[m + 40..m + 48].copy_from_slice(&5u64.to_ne_bytes());
            f[m + 48..m + 56].copy_from_slice(&txid.to_ne_bytes());
            let sum = fnv1a(&f[m..m + 56]);
            f[m + 56..m + 64].copy_from_slice(&sum.to_ne_bytes());
        }
        f
    }

    const A: &str = "4a0d3c2e1f5b6a798877665544332211aabbccddeeff00112233445566778899";

    fn fixture(name: &str) -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/podman-db");
        std::fs::read(dir.join(name)).unwrap()
    }

    /// The real podman 4.3.1's file (tests/fixtures/podman-db/README.md)
    /// and what `podman pod inspect` said of its pod then.
    fn real() -> (Vec<u8>, String, String) {
        let v: serde_json::Value =
            serde_json::from_slice(&fixture("podman4-pod-inspect.json")).unwrap();
        let v = if v.is_array() { v[0].clone() } else { v };
        let s = |k: &str| v[k].as_str().unwrap().to_owned();
        (fixture("podman4-bolt_state.db"), s("Id"), s("Name"))
    }

    #[test]
    fn a_real_podman_4_file_gives_its_pod() {
        let (f, id, name) = real();
        let p = pods(&f).unwrap();
        assert_eq!(p, HashMap::from([(id, name)]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Random bytes, a real file with bytes changed or cut, and the
        /// made file with a random meta (checksum fixed up, so that the
        /// walk is reached): no panic, a bounded time, and every name
        /// given is in the file's bytes, under an id in them too.
        #[test]
        fn any_file_reads_without_panic_in_bounded_time_and_names_only_what_it_holds(
            random in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20_000),
            changes in proptest::collection::vec((0usize..200_000, proptest::prelude::any::<u8>()), 1..40),
            cut in 0usize..140_000,
            meta in proptest::collection::vec(proptest::prelude::any::<u8>(), 56),
            table in proptest::collection::vec((0u32..2, 0usize..4096, 0usize..70, 0usize..2000), 0..120),
        ) {
            let (f, _, _) = real();
            let mut made_f = made(&[(A, "p")], false);
            // a random meta 1 that validates
            let m = 4096 + HEADER;
            made_f[m + 8..m + 56].copy_from_slice(&meta[8..]);
            let sum = fnv1a(&made_f[m..m + 56]);
            made_f[m + 56..m + 64].copy_from_slice(&sum.to_ne_bytes());
            // elements each inside the page, at random places, apart or not
            let data = HEADER + table.len() * ELEMENT;
            let table: Vec<_> = table
                .iter()
                .enumerate()
                .map(|(i, &(fl, at, k, v))| {
                    let at = data + at % (4096 - data - k - v);
                    (fl, (at - HEADER - i * ELEMENT) as u32, k as u32, v as u32)
                })
                .collect();
            let elements = with_elements(&table);
            for file in [random, super::super::tests::mutated(&f, &changes), f[..cut.min(f.len())].to_vec(), super::super::tests::mutated(&made_f, &changes), made_f, elements] {
                let t = std::time::Instant::now();
                let (r, examined) = read(&file);
                // the work is the file's size's: pages apart, elements apart
                proptest::prop_assert!(examined <= 3 * file.len(), "{examined} bytes examined of {}", file.len());
                if let Ok(p) = r {
                    for (id, name) in &p {
                        let holds = |s: &str| file.windows(s.len()).any(|w| w == s.as_bytes());
                        proptest::prop_assert!(holds(id) && holds(name), "{id} {name:?}");
                    }
                }
                proptest::prop_assert!(t.elapsed() < std::time::Duration::from_secs(1));
            }
        }
    }

    /// The made file with `allPods`'s page (4) holding the elements
    /// `(flags, pos, ksize, vsize)`, as many as fit, over a page of `A`s
    /// and names.
    fn with_elements(table: &[(u32, u32, u32, u32)]) -> Vec<u8> {
        let mut f = made(&[(A, "p")], false);
        let p = 4 * 4096;
        let n = table.len().min((4096 - HEADER) / ELEMENT);
        f[p + 10..p + 12].copy_from_slice(&(n as u16).to_ne_bytes());
        for (i, b) in f[p + HEADER..p + 4096].iter_mut().enumerate() {
            *b = if i % 2 == 0 { b'a' } else { b'0' };
        }
        for (i, &(fl, pos, k, v)) in table.iter().take(n).enumerate() {
            let e = p + HEADER + i * ELEMENT;
            for (j, x) in [fl, pos, k, v].into_iter().enumerate() {
                f[e + 4 * j..e + 4 * j + 4].copy_from_slice(&x.to_ne_bytes());
            }
        }
        f
    }

    #[test]
    fn elements_that_overlap_are_refused_before_any_is_decoded() {
        // 255 elements, each an id and a 253-byte name, all at the same
        // bytes: the same pod 255 times over
        let last = (4096 - HEADER) / ELEMENT - 1;
        let table: Vec<_> = (0..=last)
            .map(|i| {
                let pos = (HEADER + (last + 1) * ELEMENT - HEADER - i * ELEMENT) as u32;
                (0, pos, 64, NAME_MAX as u32)
            })
            .collect();
        let f = with_elements(&table);
        let (r, examined) = read(&f);
        assert_eq!(r, Err(Bad("leaf elements that overlap")));
        // the pages up to allPods's, not 255 names
        assert!(examined <= 3 * 4096, "{examined}");
        // the same elements set apart: read, each once
        let apart: Vec<_> = (0..4)
            .map(|i| (0, ((4 - i) * ELEMENT + i * 318) as u32, 64, NAME_MAX as u32))
            .collect();
        let (r, _) = read(&with_elements(&apart));
        assert_eq!(r.map(|p| p.len()), Ok(1));
    }

    /// A file of 64 KiB pages, `pages` of them: the root (page 2) a
    /// branch whose children are the leaves 3.., each as many empty
    /// elements (no key, no value) as fit: an element for each 16 bytes.
    fn empty_elements(pages: usize) -> Vec<u8> {
        const PS: usize = 65536;
        let mut f = vec![0u8; PS * pages];
        let head = |f: &mut [u8], at: usize, id: u64, flags: u16, count: u16| {
            f[at..at + 8].copy_from_slice(&id.to_ne_bytes());
            f[at + 8..at + 10].copy_from_slice(&flags.to_ne_bytes());
            f[at + 10..at + 12].copy_from_slice(&count.to_ne_bytes());
        };
        for (pg, txid) in [(0usize, 6u64), (1, 7)] {
            let at = pg * PS;
            head(&mut f, at, pg as u64, 0x04, 0);
            let m = at + HEADER;
            f[m..m + 4].copy_from_slice(&MAGIC.to_ne_bytes());
            f[m + 4..m + 8].copy_from_slice(&VERSION.to_ne_bytes());
            f[m + 8..m + 12].copy_from_slice(&(PS as u32).to_ne_bytes());
            f[m + 16..m + 24].copy_from_slice(&2u64.to_ne_bytes());
            f[m + 40..m + 48].copy_from_slice(&(pages as u64).to_ne_bytes());
            f[m + 48..m + 56].copy_from_slice(&txid.to_ne_bytes());
            let sum = fnv1a(&f[m..m + 56]);
            f[m + 56..m + 64].copy_from_slice(&sum.to_ne_bytes());
        }
        head(&mut f, 2 * PS, 2, BRANCH, (pages - 3) as u16);
        for i in 0..pages - 3 {
            let e = 2 * PS + HEADER + i * ELEMENT;
            f[e + 8..e + 16].copy_from_slice(&((3 + i) as u64).to_ne_bytes());
        }
        let n = (PS - HEADER) / ELEMENT;
        for pg in 3..pages {
            head(&mut f, pg * PS, pg as u64, LEAF, n as u16);
            for i in 0..n {
                let e = pg * PS + HEADER + i * ELEMENT;
                // every key and value at the page's end: empty, apart
                f[e + 4..e + 8].copy_from_slice(&(((n - i) * ELEMENT) as u32).to_ne_bytes());
            }
        }
        f
    }

    #[test]
    fn a_quarter_million_empty_elements_are_refused_at_the_element_cap() {
        // 4 MiB (a rootless store's cap) of empty elements: within the
        // byte budget (nothing in them), but each is still checked and
        // handed on: 258,000 of them, 0.16 s of a debug build's CPU in
        // every read
        let f = empty_elements(64);
        let mut w = Walk {
            file: &f,
            meta: meta(&f).unwrap(),
            seen: HashSet::new(),
            examined: 0,
            budget: f.len() * BUDGET,
            elements: 0,
        };
        let root = w.page(2).unwrap();
        let mut handed = 0usize;
        let r = w.each(root, 0, &mut |_, _, _| {
            handed += 1;
            true
        });
        assert_eq!(r, Err(Bad("too many elements")));
        assert!(handed <= MAX_ELEMENTS, "{handed} elements handed on");
        assert_eq!(pods(&f), Err(Bad("too many elements")));
    }

    #[test]
    fn a_page_inside_anothers_overflow_is_not_read_again() {
        let mut f = made(&[(A, "p")], false);
        // page 3 (the root) said to run over page 4, allPods's own page
        f[3 * 4096 + 12..3 * 4096 + 16].copy_from_slice(&1u32.to_ne_bytes());
        assert_eq!(pods(&f), Err(Bad("a page reached twice")));
    }

    #[test]
    fn inline_and_paged_buckets_give_their_pods() {
        for inline in [true, false] {
            let f = made(&[(A, "shop-pod"), ("not-an-id", "x")], inline);
            let p = pods(&f).unwrap();
            assert_eq!(p.len(), 1);
            assert_eq!(p[A], "shop-pod");
        }
    }

    #[test]
    fn a_broken_meta_falls_back_to_the_other_and_neither_is_no_names() {
        let mut f = made(&[(A, "p")], true);
        // meta 1 (the newer) broken: meta 0 still names the root
        f[4096 + HEADER + 20] ^= 1;
        assert_eq!(pods(&f).unwrap()[A], "p");
        f[HEADER + 20] ^= 1;
        assert_eq!(pods(&f), Err(Bad("no valid meta page")));
    }

    #[test]
    fn a_cycle_of_branch_pages_ends_the_read() {
        let mut f = made(&[(A, "p")], false);
        // page 3 made a branch whose one child is itself
        f[3 * 4096 + 8..3 * 4096 + 10].copy_from_slice(&BRANCH.to_ne_bytes());
        f[3 * 4096 + 10..3 * 4096 + 12].copy_from_slice(&1u16.to_ne_bytes());
        f[3 * 4096 + 16 + 8..3 * 4096 + 16 + 16].copy_from_slice(&3u64.to_ne_bytes());
        assert_eq!(pods(&f), Err(Bad("a page reached twice")));
    }

    #[test]
    fn names_too_long_or_not_utf8_are_left_out() {
        let long = "n".repeat(NAME_MAX + 1);
        let f = made(&[(A, &long)], false);
        assert!(pods(&f).unwrap().is_empty());
    }
}
