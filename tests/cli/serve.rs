//! `cgtop serve`: routes, content negotiation, the minimum interval shared
//! by scrapers, the bounds (request size, connection cap, slow clients,
//! junk), SIGTERM, and promtool on this host's real hierarchy.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
// the figures are integers the files hold: compared exactly on purpose
#![allow(clippy::float_cmp)]

use crate::common;
use crate::common::metrics_parse;

use cgtop::render::openmetrics::Format;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `cgtop serve` on a port of the kernel's choosing; killed
/// (by its pid) when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(args: &[&str]) -> Self {
        let (child, addr) = common::start_serve(args);
        Self { child, addr }
    }

    fn on(root: &Path, more: &[&str]) -> Self {
        let mut args = vec!["--root", root.to_str().unwrap()];
        args.extend_from_slice(more);
        Self::start(&args)
    }

    /// Sends `req` as it is and reads the whole answer: (status line,
    /// headers, body).
    fn raw(&self, req: &[u8]) -> (String, String, String) {
        let t0 = Instant::now();
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(req).unwrap();
        let mut all = Vec::new();
        let read = s.read_to_end(&mut all);
        let text = String::from_utf8_lossy(&all).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
        // an answer cut short (the read timed out) says so, rather than
        // failing later as a parse error of its first part
        let len = header(headers, "content-length").and_then(|v| v.parse::<usize>().ok());
        assert!(
            len.is_none_or(|n| n == body.len()),
            "an answer of {len:?} bytes cut at {} after {:?} ({read:?})",
            body.len(),
            t0.elapsed()
        );
        assert!(std::str::from_utf8(&all).is_ok(), "not UTF-8: {status}");
        (status.to_owned(), headers.to_owned(), body.to_owned())
    }

    fn get(&self, accept: Option<&str>) -> (String, String, String) {
        let a = accept
            .map(|a| format!("Accept: {a}\r\n"))
            .unwrap_or_default();
        self.raw(format!("GET /metrics HTTP/1.1\r\nHost: x\r\n{a}\r\n").as_bytes())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const OM: &str = "application/openmetrics-text; version=1.0.0";

fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.split("\r\n").find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn routes_and_content_negotiation() {
    let srv = Server::on(&common::fixture("memory-limited"), &[]);
    let (st, h, body) = srv.get(Some(OM));
    assert_eq!(st, "HTTP/1.1 200 OK");
    assert_eq!(
        header(&h, "content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    assert_eq!(
        header(&h, "content-length"),
        Some(body.len().to_string().as_str())
    );
    assert!(body.ends_with("# EOF\n"));
    assert!(body.contains("# TYPE cgroup_cpu_usage_seconds counter\n"));
    // Prometheus 2.x's own Accept header
    let (_, h, _) = srv.get(Some(
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    ));
    assert!(header(&h, "content-type")
        .unwrap()
        .starts_with("application/openmetrics-text"));
    for accept in [None, Some("text/plain"), Some("*/*")] {
        let (st, h, body) = srv.get(accept);
        assert_eq!(st, "HTTP/1.1 200 OK");
        assert_eq!(
            header(&h, "content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        assert!(!body.contains("# EOF"));
        assert!(body.contains("# TYPE cgroup_cpu_usage_seconds_total counter\n"));
    }
    assert!(srv
        .raw(b"GET / HTTP/1.1\r\n\r\n")
        .0
        .starts_with("HTTP/1.1 404"));
    assert!(srv
        .raw(b"GET /metricsx HTTP/1.1\r\n\r\n")
        .0
        .starts_with("HTTP/1.1 404"));
    let (st, h, _) = srv.raw(b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
    assert!(st.starts_with("HTTP/1.1 405"), "{st}");
    assert_eq!(header(&h, "allow"), Some("GET"));
    assert!(srv
        .raw(b"\x16\x03\x01\x02\x00junk\r\n\r\n")
        .0
        .starts_with("HTTP/1.1 400"));
    assert!(srv
        .raw(b"GET /metrics\r\n\r\n")
        .0
        .starts_with("HTTP/1.1 400"));
    // a query string is fine
    assert!(srv
        .raw(b"GET /metrics?name[]=x HTTP/1.0\r\n\r\n")
        .0
        .ends_with("200 OK"));
}

#[test]
fn a_request_too_large_is_refused_and_the_server_goes_on() {
    let srv = Server::on(&common::fixture("memory-limited"), &[]);
    let big = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000));
    let mut s = TcpStream::connect(srv.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // the server may close before taking all of it: only its answer counts
    let _ = s.write_all(big.as_bytes());
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    assert!(srv.get(None).0.ends_with("200 OK"));
}

/// Whether the server has closed `s` (EOF or a reset), looking for
/// `wait`.
fn closed_by_server(mut s: &TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// Clients that connect and send nothing hold nothing a scrape needs:
/// each is closed at the head deadline (2 s), and a scrape is answered
/// meanwhile.
#[test]
fn idle_clients_cannot_take_the_server() {
    let srv = Server::on(&common::fixture("memory-limited"), &[]);
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(srv.addr).unwrap())
        .collect();
    let t0 = Instant::now();
    let (st, _, _) = srv.get(None);
    assert_eq!(st, "HTTP/1.1 200 OK", "with 300 idle connections");
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "the scrape waited {:?}",
        t0.elapsed()
    );
    // 300 is below the pending limit (1,024): none is closed for room
    // (past it, the newest of the owner with the most go first: the
    // hostile crate's serve_clients floods test that), and every one is
    // closed by the head deadline, 2 s after its connection
    let kept = idle
        .iter()
        .filter(|s| !closed_by_server(s, Duration::from_secs(4)))
        .count();
    assert_eq!(kept, 0, "idle connections kept past the head deadline");
    assert!(srv.get(None).0.ends_with("200 OK"));
}

/// A client that trickles its request is dropped at the head deadline
/// (2 s from its connection), not waited for one read at a time; others
/// are served meanwhile.
#[test]
fn a_slow_client_is_dropped_at_the_deadline() {
    let srv = Server::on(&common::fixture("memory-limited"), &[]);
    let mut slow = TcpStream::connect(srv.addr).unwrap();
    let t0 = Instant::now();
    let mut closed = false;
    while t0.elapsed() < Duration::from_secs(8) {
        // one byte every 300 ms: each read comes in time, the whole never
        if slow.write_all(b"G").is_err() || closed_by_server(&slow, Duration::from_millis(50)) {
            closed = true;
            break;
        }
        // others are served meanwhile
        assert!(srv.get(None).0.ends_with("200 OK"));
        std::thread::sleep(Duration::from_millis(250));
    }
    let took = t0.elapsed();
    assert!(closed, "the slow client was kept {took:?}");
    assert!(
        took >= Duration::from_millis(1500),
        "closed too soon: {took:?}"
    );
}

/// Within --min-interval scrapers share one reading; past it, a scrape
/// reads the files again.
#[test]
fn the_minimum_interval_shares_one_reading() {
    let t = common::copy_fixture("memory-limited");
    let g = "system.slice/dbus.service";
    let usage = |body: &str| -> String {
        body.lines()
            .find(|l| {
                l.starts_with(
                    "cgroup_cpu_usage_seconds_total{cgroup=\"/system.slice/dbus.service\"}",
                )
            })
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .to_owned()
    };
    let shared = Server::on(t.path(), &["--min-interval", "60"]);
    let fresh = Server::on(t.path(), &["--min-interval", "0"]);
    let (a1, f1) = (shared.get(None).2, fresh.get(None).2);
    common::burn_cpu(t.path(), g, 5_000_000);
    let (a2, f2) = (shared.get(None).2, fresh.get(None).2);
    // the same reading, to the byte (its duration too)
    assert_eq!(a1, a2);
    assert_eq!(usage(&a1), usage(&a2));
    // a new one, with the new counter
    let (before, after): (f64, f64) = (usage(&f1).parse().unwrap(), usage(&f2).parse().unwrap());
    assert!((after - before - 5.0).abs() < 1e-6, "{before} -> {after}");
    // the two formats of one reading agree
    let om = shared.get(Some(OM)).2;
    assert_eq!(usage(&om), usage(&a1));
}

#[test]
fn sigterm_ends_it_with_status_0() {
    let mut srv = Server::on(&common::fixture("memory-limited"), &[]);
    assert!(srv.get(None).0.ends_with("200 OK"));
    let pid = rustix::process::Pid::from_raw(i32::try_from(srv.child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = srv.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn bad_arguments_are_exit_2() {
    for args in [
        &["serve", "--listen", "nonsense"][..],
        &["serve", "--min-interval", "-1"],
        &["serve", "--min-interval", "x"],
        &["serve", "--root", "/nonexistent-cgtop-dir"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// promtool on this host's real hierarchy, served: the text format
/// (promtool 2.42 reads only that one; the OpenMetrics answer is parsed
/// by tests/state/exposition.rs's checker here).
#[test]
fn promtool_passes_this_hosts_real_hierarchy() {
    let srv = Server::start(&[]);
    let (st, _, text) = srv.get(None);
    assert!(st.ends_with("200 OK"), "{st}");
    assert!(
        text.contains("cgroup_info{cgroup=\"/\""),
        "no root group:\n{text}"
    );
    if common::have("promtool") {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "promtool is not installed, and CI=true needs it"
        );
        eprintln!("skipped: promtool not installed");
    }
    metrics_parse::parse(&text, Format::Text);
    let (_, _, om) = srv.get(Some(OM));
    let p = metrics_parse::parse(&om, Format::OpenMetrics);
    assert!(!p.values("cgroup_info").is_empty());
}
