//! The Prometheus exporter: `cgtop --openmetrics` (one exposition, to
//! stdout or written atomically to a file for node_exporter's textfile
//! collector) and `cgtop serve` (`/metrics` over HTTP).
//!
//! Reads only: no writer thread is ever started here and nothing here
//! names `source::writer` or `model::write` (tests/metrics_exposition.rs
//! checks this file's text), so cgroupfs is never written whatever the
//! user's rights.
//!
//! The HTTP server is our own, on `std::net`, not tiny_http: it must
//! bound what a client can cost (a request of at most
//! [`MAX_REQUEST`] bytes read within one deadline, however slowly it
//! trickles in; at most [`MAX_CONNECTIONS`] connections at once, the
//! next answered 503 at once), and tiny_http 0.12 has no read deadline
//! or header size limit to set. One request per connection (`Connection:
//! close`), GET /metrics only.

use crate::model::tree::Tree;
use crate::model::MountInfo;
use crate::options::Options;
use crate::render::openmetrics::{self, Format, Scrape};
use crate::run::{collector_config, locate};
use crate::source::collector::{clock_start, Collector, Refresh};
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The default address of `cgtop serve`: loopback only (an exporter of
/// every group's name must not face the network unless asked), on port
/// 19586: the Prometheus wiki's range of exporter ports (9100-9999) is
/// fully allocated, so cgtop claims no number in it and takes one outside
/// it, below the ephemeral ports (README, "Prometheus").
pub const DEFAULT_LISTEN: &str = "127.0.0.1:19586";
/// The largest request (request line and headers) read.
pub const MAX_REQUEST: usize = 8 << 10;
/// Connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 16;
/// The time a client has to send its request, and then again to take
/// the whole answer.
pub const CLIENT_DEADLINE: Duration = Duration::from_secs(10);
/// The default `--min-interval`.
pub const DEFAULT_MIN_INTERVAL: Duration = Duration::from_secs(1);

/// What `--openmetrics` and `serve` share beyond `Options`.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The TUI's `/` filter: groups whose name contains it (case aside),
    /// their ancestors and their subtrees.
    pub filter: Option<String>,
}

/// One collector and its last reading, shared by every scraper.
pub struct Exporter {
    state: Mutex<State>,
    filter: Option<String>,
    min_interval: Duration,
}

struct State {
    collector: Collector,
    start: Instant,
    last: Option<Reading>,
}

struct Reading {
    at: Instant,
    refresh: Refresh,
    duration: Duration,
    bodies: [Option<Arc<String>>; 2],
}

impl Exporter {
    /// An exporter over `collector`, which must read every group in full
    /// (`CollectorConfig::full_detail`).
    pub fn new(collector: Collector, filter: Option<String>, min_interval: Duration) -> Self {
        Self {
            state: Mutex::new(State {
                collector,
                start: clock_start(),
                last: None,
            }),
            filter: filter.filter(|f| !f.is_empty()),
            min_interval,
        }
    }

    /// The exposition in `format`: from the last reading when it is
    /// younger than the minimum interval, else from a new one. Scrapers
    /// that come meanwhile wait for that reading and share it.
    pub fn scrape(&self, format: Format) -> Arc<String> {
        let mut st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut reading = match st.last.take() {
            Some(r) if r.at.elapsed() < self.min_interval => r,
            _ => {
                let t0 = Instant::now();
                let start = st.start;
                let refresh = st.collector.refresh_timed(start);
                Reading {
                    at: Instant::now(),
                    refresh,
                    duration: t0.elapsed(),
                    bodies: [None, None],
                }
            }
        };
        let slot = match format {
            Format::OpenMetrics => 0,
            Format::Text => 1,
        };
        let body = if let Some(b) = &reading.bodies[slot] {
            Arc::clone(b)
        } else {
            let b = Arc::new(render(
                &reading.refresh,
                self.filter.as_deref(),
                reading.duration,
                format,
            ));
            reading.bodies[slot] = Some(Arc::clone(&b));
            b
        };
        st.last = Some(reading);
        body
    }
}

/// The exposition of one reading, filtered by name.
pub fn render(r: &Refresh, filter: Option<&str>, duration: Duration, format: Format) -> String {
    let all = &r.snapshot.groups;
    let groups = match filter {
        Some(f) if !f.is_empty() => Tree::build(all)
            .filter_samples(f)
            .into_iter()
            .map(|i| &all[i])
            .collect(),
        _ => all.iter().collect(),
    };
    openmetrics::write(
        &Scrape {
            groups,
            devices: &r.devices,
            duration,
        },
        format,
    )
}

/// The collector of an exporter: every group read in full, no writer.
fn exporter_collector(opts: &Options) -> Result<(MountInfo, Collector)> {
    let (m, hier, hiers) = locate(opts)?;
    let mut c = Collector::with_hiers(collector_config(opts, &m, true), hier, &hiers);
    c.set_export_reading(true);
    Ok((m, c))
}

/// `cgtop --openmetrics [-o FILE]`: one reading, one exposition (in
/// `format`), printed or written atomically to `output`.
pub fn once(
    opts: &Options,
    export: &ExportOptions,
    output: Option<&Path>,
    format: Format,
) -> Result<()> {
    // refuse a bad FILE before reading anything
    if let Some(p) = output {
        check_output(p)?;
    }
    let (_, c) = exporter_collector(opts)?;
    let ex = Exporter::new(c, export.filter.clone(), Duration::ZERO);
    let body = ex.scrape(format);
    if let Some(p) = output {
        return write_atomic(p, body.as_bytes());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(body.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing the exposition")
        }
        _ => Ok(()),
    }
}

/// FILE must not be a symlink or a directory (what else is there is
/// replaced: node_exporter's textfile collector reads the new one).
fn check_output(p: &Path) -> Result<()> {
    let shown = crate::model::text::escape(p.as_os_str().as_encoded_bytes()).into_owned();
    if p.as_os_str().is_empty() {
        anyhow::bail!("-o: an empty file name");
    }
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => {
            anyhow::bail!("{shown}: a symbolic link: not written (give the file it points to)")
        }
        Ok(m) if m.is_dir() => anyhow::bail!("{shown}: a directory: give a file name"),
        Ok(m) if !m.is_file() => {
            anyhow::bail!("{shown}: not a regular file: not replaced")
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| shown),
    }
}

/// Writes `bytes` to `path` so that a reader sees the old file or the new
/// one, never a part: a new temporary file beside it (O_EXCL|O_NOFOLLOW,
/// mode 0644 so that node_exporter's user can read it), fsync, rename
/// over `path`, fsync of the directory. The temporary file is removed on
/// any failure. A symlink or a directory at `path` is refused.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    static N: AtomicUsize = AtomicUsize::new(0);
    check_output(path)?;
    let shown = crate::model::text::escape(path.as_os_str().as_encoded_bytes()).into_owned();
    let name = path
        .file_name()
        .with_context(|| format!("{shown}: not a file name"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".cgtop-{}-{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc_o_nofollow())
            .open(&tmp)?;
        // the umask may have taken bits away: 0644 whatever it is
        f.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // the rename itself, on disk (a failure here loses nothing)
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {shown}"));
    }
    Ok(())
}

fn libc_o_nofollow() -> i32 {
    // O_NOFOLLOW (0o400000 on every Linux architecture) fits an i32
    i32::try_from(rustix::fs::OFlags::NOFOLLOW.bits()).unwrap_or(0o400_000)
}

/// `cgtop serve`'s settings.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub min_interval: Duration,
    pub export: ExportOptions,
}

/// What a request asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Metrics(Format),
    NotFound,
    MethodNotAllowed,
    BadRequest,
    TooLarge,
}

/// The route of a request's head (request line and headers, without the
/// blank line): GET /metrics (a query string is ignored) in the format the
/// Accept header asks for; never panics on any bytes.
pub fn route(head: &[u8]) -> Route {
    let Ok(text) = std::str::from_utf8(head) else {
        return Route::BadRequest;
    };
    let mut lines = text.split("\r\n").flat_map(|l| l.split('\n'));
    let Some(line) = lines.next() else {
        return Route::BadRequest;
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Route::BadRequest;
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() {
        return Route::BadRequest;
    }
    let mut accept: Option<&str> = None;
    for h in lines {
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("accept") {
                accept = Some(v.trim());
            }
        }
    }
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return Route::NotFound;
    }
    if method != "GET" {
        return Route::MethodNotAllowed;
    }
    Route::Metrics(Format::negotiate(accept))
}

/// Reads a request's head within the deadline: `Err` when the client is
/// too slow or goes away, `Ok(None)` when it is too large.
fn read_head(s: &mut TcpStream, deadline: Instant) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))?;
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find_end(&buf) {
            buf.truncate(end);
            return Ok(Some(buf));
        }
        if buf.len() >= MAX_REQUEST {
            return Ok(None);
        }
    }
}

/// Where the head ends (the blank line), from its start.
fn find_end(b: &[u8]) -> Option<usize> {
    b.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .or_else(|| b.windows(2).position(|w| w == b"\n\n"))
}

/// Writes the answer by `deadline` as a whole: each write may wait only
/// for what is left of it, so a client that takes the answer slowly, but
/// never slowly enough for one write to wait the whole deadline, still
/// loses its connection (its slot and its thread) at the deadline.
fn respond(
    s: &mut TcpStream,
    status: &str,
    headers: &str,
    body: &[u8],
    deadline: Instant,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
        body.len()
    );
    write_by(s, head.as_bytes(), deadline)?;
    write_by(s, body, deadline)
}

fn write_by(s: &mut TcpStream, mut b: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !b.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        // SO_SNDTIMEO bounds the whole of one send, however many times
        // it waits for room
        s.set_write_timeout(Some(left))?;
        match s.write(b) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => b = &b[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Serves one connection: one request, one answer, then close.
fn serve_one(mut s: TcpStream, ex: &Exporter) {
    let deadline = Instant::now() + CLIENT_DEADLINE;
    let text = "Content-Type: text/plain; charset=utf-8\r\n";
    let res = match read_head(&mut s, deadline) {
        Err(_) => return,
        Ok(None) => route_answer(&mut s, Route::TooLarge, ex, text),
        Ok(Some(head)) => route_answer(&mut s, route(&head), ex, text),
    };
    let _ = res;
    let _ = s.shutdown(std::net::Shutdown::Both);
}

/// Answers a request; the client then has [`CLIENT_DEADLINE`] to take
/// the answer (counted from when it is ready: a scrape that waited for a
/// reading does not eat into it).
fn route_answer(s: &mut TcpStream, r: Route, ex: &Exporter, text: &str) -> std::io::Result<()> {
    let by = || Instant::now() + CLIENT_DEADLINE;
    match r {
        Route::Metrics(f) => {
            let body = ex.scrape(f);
            let ct = format!("Content-Type: {}\r\n", f.content_type());
            respond(s, "200 OK", &ct, body.as_bytes(), by())
        }
        Route::NotFound => respond(s, "404 Not Found", text, b"cgtop serves /metrics\n", by()),
        Route::MethodNotAllowed => respond(
            s,
            "405 Method Not Allowed",
            &format!("{text}Allow: GET\r\n"),
            b"GET only\n",
            by(),
        ),
        Route::BadRequest => respond(s, "400 Bad Request", text, b"bad request\n", by()),
        Route::TooLarge => respond(
            s,
            "431 Request Header Fields Too Large",
            text,
            b"request too large\n",
            by(),
        ),
    }
}

/// Counts a connection while it is served.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `cgtop serve`: binds, prints one line on stderr, serves until SIGTERM
/// or SIGINT (then ends with status 0, as `cgtop record` does: a service
/// manager's stop is a clean end).
pub fn serve(opts: &Options, cfg: &ServeConfig) -> Result<Option<i32>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).context("signal handler")?;
    }
    let (m, c) = exporter_collector(opts)?;
    let listener = TcpListener::bind(cfg.listen)
        .map_err(|e| crate::run::SetupError(format!("cannot listen on {}: {e}", cfg.listen)))?;
    let addr = listener.local_addr().unwrap_or(cfg.listen);
    {
        let _ = writeln!(
            std::io::stderr(),
            "cgtop: serving {} under {} at http://{addr}/metrics (read-only)",
            opts.start,
            crate::source::mount::path_text(&m.root),
        );
    }
    listener.set_nonblocking(true).context("listener")?;
    let ex = Arc::new(Exporter::new(
        c,
        cfg.export.filter.clone(),
        cfg.min_interval,
    ));
    let busy = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let mut fds = [PollFd::new(&listener, PollFlags::IN)];
        let t = Timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        match poll(&mut fds, Some(&t)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(std::io::Error::from(e)).context("poll"),
        }
        let Ok((mut s, _)) = listener.accept() else {
            continue;
        };
        let _ = s.set_nonblocking(false);
        if busy.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            busy.fetch_sub(1, Ordering::AcqRel);
            let _ = respond(
                &mut s,
                "503 Service Unavailable",
                "Content-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n",
                b"too many connections\n",
                Instant::now() + Duration::from_secs(1),
            );
            continue;
        }
        let slot = Slot(Arc::clone(&busy));
        let ex = Arc::clone(&ex);
        let spawned = std::thread::Builder::new()
            .name("cgtop-http".into())
            .spawn(move || {
                let _slot = slot;
                serve_one(s, &ex);
            });
        // no thread to be had: the connection is dropped (closed)
        let _ = spawned;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let om = b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\n";
        assert_eq!(route(om), Route::Metrics(Format::OpenMetrics));
        assert_eq!(
            route(b"GET /metrics?x=1 HTTP/1.0"),
            Route::Metrics(Format::Text)
        );
        assert_eq!(route(b"GET / HTTP/1.1"), Route::NotFound);
        assert_eq!(route(b"POST /metrics HTTP/1.1"), Route::MethodNotAllowed);
        assert_eq!(route(b"GET /metrics"), Route::BadRequest);
        assert_eq!(route(b"\xff\xfe"), Route::BadRequest);
        assert_eq!(route(b""), Route::BadRequest);
    }

    #[test]
    fn route_never_panics() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for len in 0..300 {
            let mut v = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let alphabet = b"GET /metrics HTTP/1.1\r\n:aA \xff";
                v.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            let _ = route(&v);
        }
    }
}
