//! podman keeps a pod's name only in its state database beside the store
//! (`libpod/db.sql`, SQLite; `libpod/bolt_state.db`, BoltDB). A rootless
//! user writes their own, and root's cgtop reads it whenever a podman
//! group of theirs is first seen (a group they can make every second):
//! whatever the file holds, reading it must neither crash cgtop nor cost
//! more than a file of its size is worth. The files here are made byte by
//! byte, each valid as far as a reader of the format checks.

use super::identities::{groups, put};
use std::path::Path;
use std::process::{Command, Stdio};

const POD: &str = "dddddddddddd4444dddddddddddd4444dddddddddddd4444dddddddddddd4444";
const CTR: &str = "cccccccccccc3333cccccccccccc3333cccccccccccc3333cccccccccccc3333";
const ALICE: u32 = 1000;
const STORE: &str = "home/alice/.local/share/containers/storage";

/// A group tree with alice's podman pod and its container, and the
/// identity sources with her store (an empty containers.json) and `db`
/// as `libpod/<name>`, every file hers.
fn setup(name: &str, db: &[u8]) -> (tempfile::TempDir, tempfile::TempDir) {
    let tree = groups(&[format!(
        "user.slice/user-1000.slice/user@1000.service/user.slice/user-libpod_pod_{POD}.slice/libpod-{CTR}.scope"
    )]);
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        "etc/passwd",
        "alice:x:1000:1000::/home/alice:/bin/sh\n",
    );
    put(
        ids.path(),
        &format!("{STORE}/overlay-containers/containers.json"),
        &serde_json::json!([{"id": CTR, "names": ["web"], "image": "", "layer": ""}]).to_string(),
    );
    let libpod = ids.path().join(STORE).join("libpod");
    std::fs::create_dir_all(&libpod).unwrap();
    std::fs::write(libpod.join(name), db).unwrap();
    give(&ids.path().join("home/alice"), ALICE);
    (tree, ids)
}

/// chown -R `dir` to `uid`.
fn give(dir: &Path, uid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            give(&p, uid);
        } else {
            std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
        }
    }
}

/// `cgtop --json -n 1 --root TREE` with the identity sources under `ids`:
/// its exit status and the CPU seconds it took (user + system, from the
/// shell's `times`, which counts only this child).
fn run(tree: &Path, ids: &Path) -> (Option<i32>, f64) {
    let out = Command::new("sh")
        .arg("-c")
        .arg("\"$@\" >/dev/null 2>&1; echo \"rc $?\"; times")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", "1", "-d", "0.1", "--root"])
        .arg(tree)
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rc = text
        .lines()
        .find_map(|l| l.strip_prefix("rc ")?.trim().parse().ok());
    // `times`: the shell's line, then its children's: "0m1.234s 0m0.010s"
    let secs = |t: &str| {
        let (m, s) = t.strip_suffix('s')?.split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
    };
    let cpu = text
        .lines()
        .filter(|l| l.contains('m') && l.ends_with('s'))
        .nth(1)
        .and_then(|l| {
            let mut w = l.split_whitespace();
            Some(secs(w.next()?)? + secs(w.next()?)?)
        })
        .unwrap_or_else(|| panic!("no times in {text:?}"));
    (rc, cpu)
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

// ---- SQLite (sqlite.org/fileformat2.html) ----

fn varint(mut n: u64) -> Vec<u8> {
    let mut v = vec![(n & 0x7f) as u8];
    n >>= 7;
    while n > 0 {
        v.push(0x80 | (n & 0x7f) as u8);
        n >>= 7;
    }
    v.reverse();
    v
}

/// A database header for `pages` pages of `ps` bytes (UTF-8, counts valid).
fn sqlite_file(ps: usize, pages: usize) -> Vec<u8> {
    let mut f = vec![0u8; ps * pages];
    f[..16].copy_from_slice(b"SQLite format 3\0");
    let size = if ps == 65536 { 1 } else { ps as u16 };
    f[16..18].copy_from_slice(&size.to_be_bytes());
    f[18] = 1;
    f[19] = 1;
    f[21] = 64;
    f[22] = 32;
    f[23] = 32;
    f[24..28].copy_from_slice(&7u32.to_be_bytes());
    f[28..32].copy_from_slice(&(pages as u32).to_be_bytes());
    f[56..60].copy_from_slice(&1u32.to_be_bytes());
    f[92..96].copy_from_slice(&7u32.to_be_bytes());
    f
}

/// A 2-page database whose sqlite_master holds one row: the table
/// `PodConfig` at page 2 (an empty leaf) with `sql` as its schema text.
fn sqlite_with_schema(sql: &str) -> Vec<u8> {
    let ps = 4096;
    let mut f = sqlite_file(ps, 2);
    let texts: [&[u8]; 3] = [b"table", b"PodConfig", b"PodConfig"];
    let mut types = Vec::new();
    let mut body = Vec::new();
    for t in texts {
        types.extend(varint(13 + 2 * t.len() as u64));
        body.extend_from_slice(t);
    }
    types.push(1);
    body.push(2);
    types.extend(varint(13 + 2 * sql.len() as u64));
    body.extend_from_slice(sql.as_bytes());
    let mut rec = varint(types.len() as u64 + 1);
    rec.extend(types);
    rec.extend(body);
    let mut cell = varint(rec.len() as u64);
    cell.extend(varint(1));
    cell.extend(rec);
    let at = ps - cell.len();
    f[100] = 0x0d;
    f[103..105].copy_from_slice(&1u16.to_be_bytes());
    f[105..107].copy_from_slice(&(at as u16).to_be_bytes());
    f[108..110].copy_from_slice(&(at as u16).to_be_bytes());
    f[at..ps].copy_from_slice(&cell);
    f[ps] = 0x0d;
    f
}

/// A 4 MiB database of 64 KiB pages: page 1 an interior page over 63 leaf
/// pages, each of 30,000 cell pointers to one and the same 5,000-byte
/// cell (a row of no values: not `PodConfig`'s).
fn sqlite_overlapping() -> Vec<u8> {
    let (ps, pages, cells) = (65536, 64, 30_000usize);
    let mut f = sqlite_file(ps, pages);
    let kids: Vec<u32> = (2..pages as u32).collect();
    f[100] = 0x05;
    f[103..105].copy_from_slice(&(kids.len() as u16).to_be_bytes());
    f[108..112].copy_from_slice(&(pages as u32).to_be_bytes());
    let content = ps - 16 * kids.len();
    f[105..107].copy_from_slice(&(content as u16).to_be_bytes());
    for (i, k) in kids.iter().enumerate() {
        let at = content + 16 * i;
        f[112 + 2 * i..114 + 2 * i].copy_from_slice(&(at as u16).to_be_bytes());
        f[at..at + 4].copy_from_slice(&k.to_be_bytes());
        f[at + 4] = (i + 1) as u8;
    }
    for p in 2..=pages {
        let o = (p - 1) * ps;
        let x = 8 + 2 * cells;
        f[o] = 0x0d;
        f[o + 3..o + 5].copy_from_slice(&(cells as u16).to_be_bytes());
        f[o + 5..o + 7].copy_from_slice(&(x as u16).to_be_bytes());
        for i in 0..cells {
            f[o + 8 + 2 * i..o + 10 + 2 * i].copy_from_slice(&(x as u16).to_be_bytes());
        }
        let size = 5000u64;
        let mut head = varint(size);
        head.push(1);
        f[o + x..o + x + head.len()].copy_from_slice(&head);
    }
    f
}

// ---- BoltDB (go.etcd.io/bbolt's page layout, host byte order) ----

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn page_header(f: &mut [u8], off: usize, id: u64, flags: u16, count: u16, overflow: u32) {
    f[off..off + 8].copy_from_slice(&id.to_ne_bytes());
    f[off + 8..off + 10].copy_from_slice(&flags.to_ne_bytes());
    f[off + 10..off + 12].copy_from_slice(&count.to_ne_bytes());
    f[off + 12..off + 16].copy_from_slice(&overflow.to_ne_bytes());
}

/// A 4 MiB bolt file of 4 KiB pages: metas at 0 and 1, the root bucket at
/// page 3 holding `allPods` (its root page 4), and page 4 a leaf that
/// runs to the file's end (overflow pages) with 65,535 elements whose
/// values are all the same 3 MiB of text (no pod id among them).
fn bolt_overlapping() -> Vec<u8> {
    let (ps, pages) = (4096usize, 1024usize);
    let mut f = vec![0u8; ps * pages];
    for (id, txid) in [(0u64, 1u64), (1, 2)] {
        let off = id as usize * ps;
        page_header(&mut f, off, id, 0x04, 0, 0);
        let mut m = Vec::new();
        for v in [0xED0C_DAEDu32, 2, ps as u32, 0] {
            m.extend_from_slice(&v.to_ne_bytes());
        }
        for v in [3u64, 0, 2, pages as u64, txid] {
            m.extend_from_slice(&v.to_ne_bytes());
        }
        let sum = fnv1a(&m);
        m.extend_from_slice(&sum.to_ne_bytes());
        f[off + 16..off + 16 + m.len()].copy_from_slice(&m);
    }
    // page 3: allPods -> a bucket rooted at page 4
    let off = 3 * ps;
    page_header(&mut f, off, 3, 0x02, 1, 0);
    let key = b"allPods";
    let e = off + 16;
    for (i, v) in [1u32, 16, key.len() as u32, 16].iter().enumerate() {
        f[e + 4 * i..e + 4 * i + 4].copy_from_slice(&v.to_ne_bytes());
    }
    f[e + 16..e + 16 + key.len()].copy_from_slice(key);
    let v = e + 16 + key.len();
    f[v..v + 8].copy_from_slice(&4u64.to_ne_bytes());
    // page 4: the overlapping leaf
    let off = 4 * ps;
    let n = u16::MAX as usize;
    let overflow = pages - 4 - 1;
    page_header(&mut f, off, 4, 0x02, n as u16, overflow as u32);
    let target = 16 + 16 * n;
    let vsize = (overflow + 1) * ps - target;
    for i in 0..n {
        let e = 16 + 16 * i;
        for (j, x) in [0u32, (target - e) as u32, 0, vsize as u32]
            .iter()
            .enumerate()
        {
            let at = off + e + 4 * j;
            f[at..at + 4].copy_from_slice(&x.to_ne_bytes());
        }
    }
    f[off + target..off + target + vsize].fill(b'a');
    f
}

#[test]
fn a_users_state_database_with_a_backwards_schema_does_not_crash_cgtop() {
    if !is_root() {
        println!("skipped: needs root (the store must be the user's: chown)");
        return;
    }
    for sql in [")(", "CREATE TABLE PodConfig)(ID TEXT, Name TEXT"] {
        let (tree, ids) = setup("db.sql", &sqlite_with_schema(sql));
        let (rc, _) = run(tree.path(), ids.path());
        assert_eq!(
            rc,
            Some(0),
            "cgtop did not finish cleanly on the schema {sql:?}"
        );
    }
}

#[test]
fn a_users_state_database_of_overlapping_records_costs_little_cpu() {
    if !is_root() {
        println!("skipped: needs root (the store must be the user's: chown)");
        return;
    }
    // a whole refresh of this tree costs about 0.01 s: the bounds leave
    // room for a loaded machine, not for seconds of work
    let mut over = Vec::new();
    for (name, db, most) in [
        ("bolt_state.db", bolt_overlapping(), 1.0),
        ("db.sql", sqlite_overlapping(), 0.25),
    ] {
        let (tree, ids) = setup(name, &db);
        let (rc, cpu) = run(tree.path(), ids.path());
        assert_eq!(rc, Some(0), "{name}");
        if cpu >= most {
            over.push(format!("{name}: {cpu:.2} s (at most {most} s)"));
        }
    }
    assert!(
        over.is_empty(),
        "4 MiB state databases of overlapping records cost seconds of CPU: {over:?}"
    );
}
