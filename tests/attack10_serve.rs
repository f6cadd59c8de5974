//! Attack review of `cgtop serve` (attack10): a client that takes the
//! answer slowly, but never slowly enough for one write to stall
//! CLIENT_DEADLINE (10 s), must not hold its connection (one of the 16
//! slots, and a thread) for as long as it likes: the answer has to be
//! taken within the deadline as a whole, as the request has to be sent
//! within it. 16 such clients would otherwise keep every scraper out
//! (503) for good.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn on(root: &std::path::Path) -> Self {
        let (child, addr) = common::start_serve(&["--root", root.to_str().unwrap()]);
        Self { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tree whose exposition is large (over 12 MB): groups with long
/// paths, each with a unit's files.
fn big_tree() -> tempfile::TempDir {
    let t = common::copy_fixture("memory-limited");
    let unit = t.path().join("system.slice/dbus.service");
    let files: Vec<_> = std::fs::read_dir(&unit)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    // 40 chains of 10 nested groups with 240-byte names: every sample's
    // label is its whole path (up to 2.4 KB)
    for c in 0..40 {
        let mut g = t.path().to_path_buf();
        for d in 0..10 {
            g.push(format!("{c:02}{d}-{}", "x".repeat(240)));
            std::fs::create_dir(&g).unwrap();
            for (n, b) in &files {
                std::fs::write(g.join(n), b).unwrap();
            }
        }
    }
    t
}

#[test]
fn a_slow_reader_is_cut_off_at_the_deadline() {
    let tree = big_tree();
    let srv = Server::on(tree.path());
    let mut s = TcpStream::connect(srv.addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 32 << 10];
    // 13 s of a trickle (32 KB every 100 ms: progress all along, never
    // a write waiting anywhere near the deadline), then the rest
    // counted from the answer's first bytes (the reading before it may
    // take a while on a loaded machine)
    let mut t0: Option<Instant> = None;
    while t0.is_none_or(|t| t.elapsed() < Duration::from_secs(13)) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        t0.get_or_insert_with(Instant::now);
        std::thread::sleep(Duration::from_millis(100));
    }
    // then everything that is still to come, at full speed
    let _ = s.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    let (head, body) = text.split_once("\r\n\r\n").expect("an answer");
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a length")
        .parse()
        .unwrap();
    assert!(
        len > 12 << 20,
        "the exposition is big enough to outlast the buffers: {len} bytes"
    );
    assert!(
        body.len() < len,
        "a reader that took more than the deadline got the whole answer ({} of {len} bytes): the connection was held as long as it liked",
        body.len()
    );
}
