//! The Prometheus exporter: `cgtop --openmetrics` (one exposition, to
//! stdout or written atomically to a file for node_exporter's textfile
//! collector) and `cgtop serve` (`/metrics` over HTTP).
//!
//! Reads only: no writer thread is ever started here and nothing here
//! names `source::writer` or `model::write` (tests/state/exposition.rs
//! checks this file's text), so cgroupfs is never written whatever the
//! user's rights.
//!
//! The HTTP server is our own, on `std::net`, not tiny_http: it must
//! bound what a client can cost, and tiny_http 0.12 has no read deadline
//! or header size limit to set. One thread polls every connection
//! (non-blocking): a request head of at most [`MAX_REQUEST`] bytes whole
//! within [`HEAD_DEADLINE`], read without holding anything a scrape
//! needs; the answer sent as the client takes it, within
//! [`CLIENT_DEADLINE`]; every kind of connection capped, and past a cap
//! the newest of whoever holds the most is closed (a local peer counted
//! by the uid owning its socket, a remote one by its address). One more thread takes the
//! readings. One request per connection (`Connection: close`), GET
//! /metrics only.

use crate::model::account::{Account, NoAccounts};
use crate::model::tree::Tree;
use crate::model::MountInfo;
use crate::options::Options;
use crate::render::openmetrics::{self, Format, Scrape};
use crate::run::{collector_config, locate};
use crate::source::accounts;
use crate::source::collector::{clock_start, Collector, Refresh};
use anyhow::{Context, Result};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The default address of `cgtop serve`: loopback only (an exporter of
/// every group's name must not face the network unless asked), on port
/// 19586: the Prometheus wiki's range of exporter ports (9100-9999) is
/// fully allocated, so cgtop claims no number in it and takes one outside
/// it, below the ephemeral ports (README, "Prometheus").
pub const DEFAULT_LISTEN: &str = "127.0.0.1:19586";
/// The largest request (request line and headers) read.
pub const MAX_REQUEST: usize = 8 << 10;
/// The time a client has, from its connection, to send its whole request
/// head; the head is read meanwhile without holding anything a scrape
/// needs (no thread, no slot).
pub const HEAD_DEADLINE: Duration = Duration::from_secs(2);
/// Connections whose request head is still coming; past it the newest
/// of the owner with the most is closed ([`Owner`], [`evictions_by`]). Each
/// holds its socket and at most [`MAX_REQUEST`] bytes (8 MiB in all).
pub const MAX_PENDING: usize = 1024;
/// Complete scrape requests waiting for their reading (all share the
/// next one, so each costs only its socket); past it the newest of the
/// owner with the most is answered 503 (`Retry-After: 1`) and closed.
pub const MAX_WAITING: usize = 1024;
/// Answers being sent (each holds its socket's buffers, and its
/// reading's body until it is sent); past it, of the owner with the
/// most, the one whose client has gone longest without taking a byte is
/// dropped.
pub const MAX_SENDING: usize = 128;
/// The most read of each of /proc/net/tcp and /proc/net/tcp6 when the
/// kernel cannot be asked about each connection ([`SockDiag`]): about
/// 1.7 million sockets, read through a fixed buffer, only our
/// connections' lines kept. A table past it is incomplete, and a local
/// connection not found in it is [`Owner::Unknown`].
const MAX_SOCKET_TABLE: u64 = 256 << 20;
/// The time a client has to take the whole answer, from when it is
/// ready (a scrape that waited for a reading does not eat into it).
pub const CLIENT_DEADLINE: Duration = Duration::from_secs(10);
/// Descriptors the connections may hold at once: the collector keeps
/// that many fewer open between readings.
pub const CONNECTION_FDS: u64 = (MAX_PENDING + MAX_WAITING + MAX_SENDING + ACCEPT_BATCH) as u64;
/// Connections accepted per turn of the loop: the heads already in are
/// read between two batches.
const ACCEPT_BATCH: usize = 32;
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
///
/// Memory: at most two readings' bodies are alive at once, the last one
/// and the one before it while some client is still being sent it (a new
/// reading is taken only once nobody holds the one before last, so a
/// client that takes its answer slowly delays the next reading by at
/// most the answer's deadline, and never makes a third body).
pub struct Exporter {
    state: Mutex<State>,
    filter: Option<String>,
    min_interval: Duration,
}

struct State {
    collector: Collector,
    start: Instant,
    last: Option<Reading>,
    /// The bodies of the reading before `last`, while anyone sends them.
    before_last: Vec<Weak<String>>,
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
                before_last: Vec::new(),
            }),
            filter: filter.filter(|f| !f.is_empty()),
            min_interval,
        }
    }

    /// The exposition in `format`: from the last reading when it is
    /// younger than the minimum interval, else from a new one. Scrapers
    /// that come meanwhile wait for that reading and share it.
    pub fn scrape(&self, format: Format) -> Arc<String> {
        let mut out = self.scrape_formats(&[format]);
        out.pop().unwrap_or_default()
    }

    /// The exposition in each of `formats`, all from one reading.
    pub fn scrape_formats(&self, formats: &[Format]) -> Vec<Arc<String>> {
        let mut st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let st = &mut *st;
        let young = st
            .last
            .as_ref()
            .is_some_and(|r| r.at.elapsed() < self.min_interval);
        let before_last_sent = st.before_last.iter().any(|w| w.strong_count() > 0);
        if st.last.is_none() || !(young || before_last_sent) {
            st.before_last = st
                .last
                .take()
                .map(|r| r.bodies.iter().flatten().map(Arc::downgrade).collect())
                .unwrap_or_default();
            let t0 = Instant::now();
            let refresh = st.collector.refresh_timed(st.start);
            st.last = Some(Reading {
                at: Instant::now(),
                refresh,
                duration: t0.elapsed(),
                bodies: [None, None],
            });
        }
        let Some(reading) = st.last.as_mut() else {
            return Vec::new();
        };
        formats
            .iter()
            .map(|&format| {
                let slot = match format {
                    Format::OpenMetrics => 0,
                    Format::Text => 1,
                };
                if let Some(b) = &reading.bodies[slot] {
                    return Arc::clone(b);
                }
                let b = Arc::new(render(
                    &reading.refresh,
                    self.filter.as_deref(),
                    reading.duration,
                    format,
                ));
                reading.bodies[slot] = Some(Arc::clone(&b));
                b
            })
            .collect()
    }
}

/// The exposition of one reading, filtered by name.
pub fn render(r: &Refresh, filter: Option<&str>, duration: Duration, format: Format) -> String {
    let all = &r.snapshot.groups;
    let groups = match filter {
        Some(f) if !f.is_empty() => Tree::build(all)
            .filter_samples(f, all)
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

/// The options of a reading exporter: read-only, every group in full.
pub fn export_options(
    start: crate::model::GroupPath,
    root: Option<std::path::PathBuf>,
    depth: Option<usize>,
    max_kept_fds: Option<usize>,
) -> Options {
    Options {
        start,
        root,
        interval: Duration::from_secs(1),
        depth,
        output: crate::options::Output::Json,
        iterations: None,
        read_only: true,
        mouse: false,
        machine_cpu: false,
        max_kept_fds: Some(crate::source::scan::fd_budget(
            max_kept_fds.unwrap_or(crate::source::scan::ScanConfig::default().max_kept),
        )),
        brief: false,
        columns: crate::render::columns::Column::DEFAULT.to_vec(),
        filter: None,
    }
}

/// The collector of an exporter: every group read in full, no writer.
fn exporter_collector(opts: &Options) -> Result<(MountInfo, Collector)> {
    let (m, hier, hiers) = locate(opts)?;
    let mut c = Collector::with_hiers(collector_config(opts, &m, true), Arc::clone(&hier), &hiers);
    c.set_export_reading(true);
    c.set_identities(Some(super::identity_resolver(&hier)));
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
    let (_, mut c) = exporter_collector(opts)?;
    // one reading: a watch could never be used
    c.set_watching(false);
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
    let shown = crate::model::tree::text::escape(p.as_os_str().as_encoded_bytes()).into_owned();
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
    let shown = crate::model::tree::text::escape(path.as_os_str().as_encoded_bytes()).into_owned();
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

/// Where the head ends (the blank line), from its start.
fn find_end(b: &[u8]) -> Option<usize> {
    b.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .or_else(|| b.windows(2).position(|w| w == b"\n\n"))
}

/// Which remote peers count together: an IPv4 address, or an IPv6 /64
/// (one host is given a whole /64 to pick its addresses from).
fn peer_of(addr: SocketAddr) -> IpAddr {
    match addr.ip().to_canonical() {
        IpAddr::V6(v6) => {
            let mut o = v6.octets();
            o[8..].fill(0);
            IpAddr::V6(o.into())
        }
        v4 @ IpAddr::V4(_) => v4,
    }
}

/// Whose connections a limit counts together, to close the newest of
/// whoever holds the most: a peer on this host (its socket is in this
/// network namespace) by the account of the uid owning its socket
/// ([`account_of`]: a user's subordinate ids count as that user), as
/// every address of 127/8 is the same host and any local user may send
/// from any of them;
/// a peer whose socket is in no table of this namespace (a remote one)
/// by its address ([`peer_of`]), never alone, as a lone key is the
/// newest of all and would go before a flood's; a peer whose socket its
/// process has closed ([`Owner::Closed`]) before anyone; a local peer
/// whose socket could not be looked up ([`Owner::Unknown`]) with the
/// others unknown, the oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Owner {
    Uid(u32),
    Peer(IpAddr),
    /// The peer's socket is no process's any more (closed, the kernel
    /// finishing it: no inode, and the uid shown is 0, not its owner's):
    /// nobody reads the answer. A flood that closes its connections
    /// would otherwise count them as root's, and root's own scrape would
    /// be the newest of the most.
    Closed,
    /// A peer of this host (a loopback address, or our own end's) whose
    /// socket was not looked up: netlink unusable and the tables
    /// unreadable or past [`MAX_SOCKET_TABLE`]. Grouped by its address,
    /// a flood from 127.0.0.1 would share root's key and root's scrape
    /// be its newest; alone, root's would be the newest group of one.
    /// All such count as one group whose oldest goes first ([`closing`]):
    /// a scrape, the newest, goes only after every older unknown one.
    Unknown,
    /// A local peer whose socket's uid (this) no account names nor holds
    /// ([`accounts::Accounts`]): every such uid one group
    /// ([`Owner::counted`]), so that a user's subordinate ids count
    /// together, not as an owner each; within the group, the uid holding
    /// the most gives way ([`evictions_by`]), so that a lone scraper of
    /// such a uid (a systemd `DynamicUser=` service, an LDAP account's)
    /// is not refused for another unnamed uid's flood.
    Unnamed(u32),
    /// A local peer whose socket's uid is of root's own /etc/subuid
    /// ranges (a root-run container manager's container: LXD, Incus),
    /// by the first uid of its block ([`Account::RootBlock`]): a group
    /// of its own, not root's, so that a container's flood closes its
    /// own connections, never the operator's scrape.
    RootBlock(u32),
}

impl Owner {
    /// The group it is counted in: every unnamed uid one (`None`), any
    /// other owner itself.
    fn counted(&self) -> Option<Owner> {
        match self {
            Owner::Unnamed(_) => None,
            o => Some(*o),
        }
    }
}

/// What the kernel knows of the peer's socket of each connection looked
/// up, by its (local, remote) addresses (IPv4-mapped addresses as IPv4):
/// the uid owning it, or `None` when no process holds it any more (inode
/// 0); `complete` when a socket missing from it is in no table of this
/// network namespace.
#[derive(Default)]
struct Sockets {
    found: HashMap<(SocketAddr, SocketAddr), Option<u32>>,
    complete: bool,
}

/// /proc/net/tcp and /proc/net/tcp6, opened once when `serve` starts and
/// read again from their start at each use: no descriptor is needed when
/// the connections hold the most (a seq_file read at offset 0 starts
/// over; tested on Linux 6.18).
struct SocketTables([Option<std::fs::File>; 2]);

const SOCKET_TABLES: [&str; 2] = ["/proc/net/tcp", "/proc/net/tcp6"];

impl SocketTables {
    fn open() -> Self {
        Self(SOCKET_TABLES.map(|p| std::fs::File::open(p).ok()))
    }

    /// The sockets of `want` found in both tables, each read whole
    /// through a fixed buffer up to [`MAX_SOCKET_TABLE`] bytes, only
    /// those lines kept: memory bounded by `want`, not by the table a
    /// local user can grow. One that could not be opened is tried again;
    /// one unreadable, or past its cap, leaves the result incomplete.
    fn read(&mut self, want: &HashSet<(SocketAddr, SocketAddr)>) -> Sockets {
        let mut t = Sockets {
            complete: true,
            ..Sockets::default()
        };
        for (f, path) in self.0.iter_mut().zip(SOCKET_TABLES) {
            if f.is_none() {
                *f = std::fs::File::open(path).ok();
            }
            let whole = f
                .as_ref()
                .is_some_and(|f| t.scan(f, MAX_SOCKET_TABLE, want));
            t.complete &= whole;
        }
        t
    }
}

impl Sockets {
    /// Adds the lines of `f` (a /proc/net/tcp{,6}, read from offset 0)
    /// whose addresses are in `want`; `false` when it could not be read
    /// to its end within `cap` bytes. A line is cut only at a newline,
    /// so a line cut short never reads as another uid.
    fn scan(
        &mut self,
        f: &std::fs::File,
        cap: u64,
        want: &HashSet<(SocketAddr, SocketAddr)>,
    ) -> bool {
        use std::os::unix::fs::FileExt;
        let mut b = vec![0u8; 64 << 10];
        // bytes of `b` not yet parsed (the start of a line), and the
        // offset in the file of the byte after them
        let (mut kept, mut off) = (0usize, 0u64);
        // a line longer than the buffer is skipped to its end
        let mut skipping = false;
        loop {
            if off >= cap {
                return false;
            }
            if kept == b.len() {
                kept = 0;
                skipping = true;
            }
            let room = (b.len() - kept).min(usize::try_from(cap - off).unwrap_or(usize::MAX));
            let n = match f.read_at(&mut b[kept..kept + room], off) {
                Ok(0) => return true,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            };
            off += n as u64;
            let end = kept + n;
            let mut start = 0;
            while let Some(nl) = b[start..end].iter().position(|&c| c == b'\n') {
                if !skipping {
                    self.add_line(&b[start..start + nl], Some(want));
                }
                skipping = false;
                start += nl + 1;
            }
            b.copy_within(start..end, 0);
            kept = end - start;
        }
    }

    /// Adds the sockets of a /proc/net/tcp{,6} text; a malformed line
    /// (the title among them) is skipped.
    #[cfg(test)]
    fn parse(&mut self, text: &str) {
        for line in text.lines() {
            self.add_line(line.as_bytes(), None);
        }
    }

    /// Adds one line's socket if its addresses are in `want` (any, when
    /// `None`): the addresses are parsed first, the rest of a line of
    /// another connection is skipped.
    fn add_line(&mut self, line: &[u8], want: Option<&HashSet<(SocketAddr, SocketAddr)>>) {
        let mut f = line
            .split(u8::is_ascii_whitespace)
            .filter(|w| !w.is_empty());
        let sock = |w: Option<&[u8]>| hex_socket(std::str::from_utf8(w?).ok()?);
        let _sl = f.next();
        let (Some(local), Some(remote)) = (sock(f.next()), sock(f.next())) else {
            return;
        };
        if want.is_some_and(|w| !w.contains(&(local, remote))) {
            return;
        }
        let num = |w: Option<&[u8]>| std::str::from_utf8(w?).ok()?.parse::<u64>().ok();
        // st tx:rx tr:when retrnsmt, then uid, timeout, inode
        let (Some(uid), Some(inode)) = (num(f.nth(4)), num(f.nth(1))) else {
            return;
        };
        let Ok(uid) = u32::try_from(uid) else {
            return;
        };
        self.found
            .insert((local, remote), (inode != 0).then_some(uid));
    }

    /// Whose the connection from `from` to our `local` is.
    fn owner(&self, from: SocketAddr, local: Option<SocketAddr>) -> Owner {
        // the peer's socket: its local address is `from`, its remote ours
        match local.and_then(|l| self.found.get(&(canon(from), canon(l)))) {
            Some(Some(uid)) => Owner::Uid(*uid),
            Some(None) => Owner::Closed,
            None => not_found(from, local, self.complete),
        }
    }
}

/// A socket address with an IPv4-mapped address as IPv4, as the tables
/// and [`hex_socket`] give it.
fn canon(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// Whose the connection from `from` is when its peer socket was not
/// found: a remote peer's, by its address, when the search was
/// `complete`; otherwise a peer that may be of this host (a loopback
/// address, or the address of our own end) is [`Owner::Unknown`].
fn not_found(from: SocketAddr, local: Option<SocketAddr>, complete: bool) -> Owner {
    let ip = from.ip().to_canonical();
    let here = ip.is_loopback() || local.is_some_and(|l| l.ip().to_canonical() == ip);
    if complete && local.is_some() || !here {
        Owner::Peer(peer_of(from))
    } else {
        Owner::Unknown
    }
}

/// The kernel asked about one socket by its exact addresses
/// (NETLINK_SOCK_DIAG, `ss`'s interface: an inet_diag_req_v2 with the
/// 4-tuple, answered with its uid and inode; no privilege needed), so no
/// table is read and no local user can push a socket out of reach.
struct SockDiag {
    fd: rustix::fd::OwnedFd,
    seq: u32,
    /// Whether the kernel found a socket we hold: until then a "no such
    /// socket" may mean no inet_diag in this kernel (the same ENOENT).
    works: bool,
}

/// What the kernel answered about one socket.
#[derive(Debug, PartialEq, Eq)]
enum Diag {
    /// Its uid, `None` when no process holds it (inode 0).
    Found(Option<u32>),
    Missing,
}

impl SockDiag {
    fn open() -> Option<Self> {
        use rustix::net::{netlink, socket_with, AddressFamily, SocketFlags, SocketType};
        let fd = socket_with(
            AddressFamily::NETLINK,
            SocketType::RAW,
            SocketFlags::CLOEXEC,
            Some(netlink::SOCK_DIAG),
        )
        .ok()?;
        Some(Self {
            fd,
            seq: 0,
            works: false,
        })
    }

    /// The TCP socket whose own address is `local` and whose peer's is
    /// `remote`; an error when the kernel could not be asked or answered
    /// something else (never waits: the answer is queued as the request
    /// is sent).
    fn lookup(&mut self, local: SocketAddr, remote: SocketAddr) -> std::io::Result<Diag> {
        use rustix::net::{recv, send, RecvFlags, SendFlags};
        self.seq = self.seq.wrapping_add(1);
        let req = diag_request(canon(local), canon(remote), self.seq)
            .ok_or(std::io::ErrorKind::InvalidInput)?;
        send(&self.fd, &req, SendFlags::empty())?;
        let mut b = [0u8; 2048];
        // answers to an earlier request given up on are skipped (at most
        // as many as were sent)
        for _ in 0..64 {
            let (n, _) = recv(&self.fd, &mut b[..], RecvFlags::DONTWAIT)?;
            if let Some(d) = diag_reply(&b[..n.min(b.len())], self.seq, local, remote)? {
                return Ok(d);
            }
        }
        Err(std::io::ErrorKind::InvalidData.into())
    }
}

/// SOCK_DIAG_BY_FAMILY, NLMSG_ERROR and the sizes of nlmsghdr and
/// inet_diag_req_v2 (linux/sock_diag.h, linux/netlink.h,
/// linux/inet_diag.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_HDR: usize = 16;
const DIAG_REQ: usize = 56;

/// A request for the TCP socket at `local` connected to `remote`, both
/// of one family; `None` when they are not.
fn diag_request(
    local: SocketAddr,
    remote: SocketAddr,
    seq: u32,
) -> Option<[u8; NLMSG_HDR + DIAG_REQ]> {
    let mut m = [0u8; NLMSG_HDR + DIAG_REQ];
    m[0..4].copy_from_slice(&((NLMSG_HDR + DIAG_REQ) as u32).to_ne_bytes());
    m[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    // NLM_F_REQUEST, no dump: one socket, by its exact addresses
    m[6..8].copy_from_slice(&1u16.to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    let r = &mut m[NLMSG_HDR..];
    r[0] = match (local.ip(), remote.ip()) {
        (IpAddr::V4(_), IpAddr::V4(_)) => 2,  // AF_INET
        (IpAddr::V6(_), IpAddr::V6(_)) => 10, // AF_INET6
        _ => return None,
    };
    r[1] = 6; // IPPROTO_TCP
              // idiag_states: any
    r[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
    // inet_diag_sockid: ports (big-endian), addresses (network order),
    // interface 0, cookie INET_DIAG_NOCOOKIE
    r[8..10].copy_from_slice(&local.port().to_be_bytes());
    r[10..12].copy_from_slice(&remote.port().to_be_bytes());
    for (at, ip) in [(12, local.ip()), (28, remote.ip())] {
        match ip {
            IpAddr::V4(a) => r[at..at + 4].copy_from_slice(&a.octets()),
            IpAddr::V6(a) => r[at..at + 16].copy_from_slice(&a.octets()),
        }
    }
    r[48..56].fill(0xff);
    Some(m)
}

/// The answer in `b` to the request numbered `seq` for the socket at
/// `local` connected to `remote`: `None` when it answers another
/// request; an error for any error but "no such socket"; missing when it
/// is about another socket (a lookup that found none falls back to a
/// listener on the local address: not the peer's).
fn diag_reply(
    b: &[u8],
    seq: u32,
    local: SocketAddr,
    remote: SocketAddr,
) -> std::io::Result<Option<Diag>> {
    let bad = || std::io::Error::from(std::io::ErrorKind::InvalidData);
    let u16_at = |i: usize| b.get(i..i + 2).map(|s| u16::from_ne_bytes([s[0], s[1]]));
    let u32_at = |i: usize| {
        b.get(i..i + 4)
            .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
    };
    let (Some(len), Some(kind), Some(got)) = (u32_at(0), u16_at(4), u32_at(8)) else {
        return Err(bad());
    };
    if (len as usize) > b.len() || (len as usize) < NLMSG_HDR {
        return Err(bad());
    }
    if got != seq {
        return Ok(None);
    }
    match kind {
        NLMSG_ERROR => match u32_at(NLMSG_HDR).map(|e| i32::from_ne_bytes(e.to_ne_bytes())) {
            Some(-2) => Ok(Some(Diag::Missing)), // ENOENT
            Some(e) if e < 0 => Err(std::io::Error::from_raw_os_error(-e)),
            _ => Err(bad()),
        },
        SOCK_DIAG_BY_FAMILY => {
            // inet_diag_msg: family, state, timer, retrans, then the
            // sockid as asked (ports, addresses), ..., uid at 64, inode
            // at 68; the same socket only if the same family, ports and
            // addresses
            let m = b.get(NLMSG_HDR..NLMSG_HDR + 72).ok_or_else(bad)?;
            let addr = |at: usize, port: usize| {
                let ip = match m[0] {
                    2 => IpAddr::from(<[u8; 4]>::try_from(&m[at..at + 4]).ok()?),
                    10 => IpAddr::from(<[u8; 16]>::try_from(&m[at..at + 16]).ok()?),
                    _ => return None,
                };
                Some(canon(SocketAddr::new(
                    ip,
                    u16::from_be_bytes([m[port], m[port + 1]]),
                )))
            };
            // (an IPv6 socket may answer for IPv4 addresses, mapped)
            if addr(8, 4) != Some(canon(local)) || addr(24, 6) != Some(canon(remote)) {
                return Ok(Some(Diag::Missing));
            }
            let uid = u32::from_ne_bytes([m[64], m[65], m[66], m[67]]);
            let inode = u32::from_ne_bytes([m[68], m[69], m[70], m[71]]);
            Ok(Some(Diag::Found((inode != 0).then_some(uid))))
        }
        _ => Err(bad()),
    }
}

/// How whose each connection is, is found: the kernel asked about each
/// ([`SockDiag`]); where it cannot be, the socket tables read
/// ([`SocketTables`]); kept open from the start, tried again when they
/// could not be opened.
struct Owners {
    diag: Option<SockDiag>,
    tables: SocketTables,
    accounts: accounts::Accounts,
    /// What the log last said of the accounts table (`None`: nothing,
    /// or that it is read): [`Owners::accounts_news`].
    said: Option<NoAccounts>,
}

impl Owners {
    fn open() -> Self {
        Self {
            diag: SockDiag::open(),
            tables: SocketTables::open(),
            accounts: accounts::Accounts::read(),
            said: None,
        }
    }

    /// The log's line on the accounts table where it is news: at the
    /// start where /etc/passwd could not be read (every uid then counts
    /// as itself, a user's subordinate ids each an owner, which the
    /// operator is to know), and whenever that changes.
    fn accounts_news(&mut self) -> Option<String> {
        accounts_news(&mut self.said, self.accounts.no_accounts())
    }

    /// Whose each connection (its peer's address, our end's) is.
    fn of(&mut self, conns: &[(SocketAddr, Option<SocketAddr>)]) -> Vec<Owner> {
        if self.diag.is_none() {
            self.diag = SockDiag::open();
        }
        let mut out: Vec<Option<Owner>> = vec![None; conns.len()];
        if let Some(d) = &mut self.diag {
            let mut probes = 0;
            for (o, &(from, local)) in out.iter_mut().zip(conns) {
                let Some(local) = local else {
                    continue;
                };
                if !d.works {
                    // a socket we hold must be found: otherwise this
                    // kernel has no inet_diag (or it answers nothing);
                    // ours may also just have been reset: a few tries
                    if probes == 8 {
                        break;
                    }
                    probes += 1;
                    match d.lookup(local, from) {
                        Ok(Diag::Found(_)) => d.works = true,
                        _ => continue,
                    }
                }
                *o = match d.lookup(from, local) {
                    Ok(Diag::Found(Some(uid))) => Some(Owner::Uid(uid)),
                    Ok(Diag::Found(None)) => Some(Owner::Closed),
                    Ok(Diag::Missing) => Some(Owner::Peer(peer_of(from))),
                    Err(_) => None,
                };
            }
            if !d.works {
                self.diag = None;
            }
        }
        let want: HashSet<(SocketAddr, SocketAddr)> = conns
            .iter()
            .zip(&out)
            .filter(|(_, o)| o.is_none())
            .filter_map(|(&(from, local), _)| Some((canon(from), canon(local?))))
            .collect();
        let table = if want.is_empty() {
            Sockets::default()
        } else {
            self.tables.read(&want)
        };
        self.accounts.refresh();
        out.iter()
            .zip(conns)
            .map(|(o, &(from, local))| {
                account_of(
                    &self.accounts,
                    o.unwrap_or_else(|| table.owner(from, local)),
                )
            })
            .collect()
    }
}

/// What the log says of the accounts table `now`, where it is not what
/// it said last (`said`, then updated): the reason it could not be read,
/// or that it is read again.
fn accounts_news(said: &mut Option<NoAccounts>, now: Option<&NoAccounts>) -> Option<String> {
    if said.as_ref() == now {
        return None;
    }
    *said = now.cloned();
    Some(match now {
        Some(why) => format!("cgtop: serve: {why}"),
        None => "cgtop: serve: /etc/passwd read again: owners counted by account".to_owned(),
    })
}

/// A uid's owner as the account it counts as ([`accounts`]): a user's
/// subordinate ids are that user, root's a block each, and uids no
/// account names one group.
fn account_of(accounts: &accounts::Accounts, owner: Owner) -> Owner {
    match owner {
        Owner::Uid(uid) => match accounts.of(uid) {
            Account::Uid(u) => Owner::Uid(u),
            Account::RootBlock(first) => Owner::RootBlock(first),
            Account::Unnamed => Owner::Unnamed(uid),
        },
        other => other,
    }
}

/// A socket address as /proc/net/tcp{,6} prints it: the address's 32-bit
/// words in hexadecimal, each in the host's byte order, `:`, the port.
fn hex_socket(s: &str) -> Option<SocketAddr> {
    let (addr, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    if !addr.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(word(0)?.into()),
        32 => {
            let mut o = [0u8; 16];
            for i in 0..4 {
                o[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(o.into()).to_canonical()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Which of `keys` (one a connection, the most expendable last) to close
/// so that `excess` fewer remain: each time the last of the owner that
/// has the most (of those with as many, the one whose last is the
/// later). A flood from one owner, over any number of addresses, only
/// ever closes its own. Of a group whose key is `oldest_first`, the
/// first goes instead (it still counts by its size, and among groups as
/// many, by its last).
///
/// Owners count together by `group` of their key: the group holding the
/// most gives way, and within it the key holding the most of it (of
/// those with as many, the one whose last is the later), its last; so a
/// key holding one is never the one closed while another key of its
/// group holds more. An `oldest_first` group's first goes, whatever its
/// key.
fn evictions_by<'a, K: std::hash::Hash + Eq, G: std::hash::Hash + Eq>(
    keys: &'a [K],
    excess: usize,
    oldest_first: impl Fn(&K) -> bool,
    group: impl Fn(&'a K) -> G,
) -> Vec<usize> {
    use std::collections::{BTreeSet, BinaryHeap, VecDeque};
    /// A group's connections, and by key (one key for an oldest-first
    /// group), with its keys by (how many, last, which).
    struct Held {
        all: BTreeSet<usize>,
        by_key: Vec<VecDeque<usize>>,
        rank: BinaryHeap<(usize, usize, usize)>,
        fifo: bool,
    }
    let mut by_group: HashMap<G, usize> = HashMap::new();
    let mut key_of: HashMap<&K, usize> = HashMap::new();
    let mut groups: Vec<Held> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let g = *by_group.entry(group(k)).or_insert_with(|| {
            groups.push(Held {
                all: BTreeSet::new(),
                by_key: Vec::new(),
                rank: BinaryHeap::new(),
                fifo: oldest_first(k),
            });
            groups.len() - 1
        });
        let h = &mut groups[g];
        let s = if h.fifo {
            0
        } else {
            *key_of.entry(k).or_insert(h.by_key.len())
        };
        if s == h.by_key.len() {
            h.by_key.push(VecDeque::new());
        }
        h.by_key[s].push_back(i);
        h.all.insert(i);
    }
    for h in &mut groups {
        h.rank = h
            .by_key
            .iter()
            .enumerate()
            .filter_map(|(s, v)| Some((v.len(), *v.back()?, s)))
            .collect();
    }
    let mut heap: BinaryHeap<(usize, usize, usize)> = groups
        .iter()
        .enumerate()
        .filter_map(|(g, h)| Some((h.all.len(), *h.all.last()?, g)))
        .collect();
    let mut out = Vec::with_capacity(excess);
    while out.len() < excess {
        let Some((_, _, g)) = heap.pop() else {
            break;
        };
        let h = &mut groups[g];
        let Some((_, _, s)) = h.rank.pop() else {
            continue;
        };
        let next = if h.fifo {
            h.by_key[s].pop_front()
        } else {
            h.by_key[s].pop_back()
        };
        if let Some(&last) = h.by_key[s].back() {
            h.rank.push((h.by_key[s].len(), last, s));
        }
        if let Some(i) = next {
            h.all.remove(&i);
            out.push(i);
        }
        if let Some(&last) = h.all.last() {
            heap.push((h.all.len(), last, g));
        }
    }
    out
}

/// Which of `keys` (one a connection, the most expendable last) to close
/// so that `excess` fewer remain: those whose peer has closed its socket
/// ([`Owner::Closed`]) first, the last first, then [`evictions_by`] among
/// the others, the unknown ones ([`Owner::Unknown`]) one group whose
/// oldest goes first, the unnamed uids ([`Owner::Unnamed`]) one group
/// whose uid holding the most gives way.
fn closing(keys: &[Owner], excess: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..keys.len())
        .rev()
        .filter(|&i| keys[i] == Owner::Closed)
        .take(excess)
        .collect();
    let open: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i] != Owner::Closed)
        .collect();
    let open_keys: Vec<Owner> = open.iter().map(|&i| keys[i]).collect();
    out.extend(
        evictions_by(
            &open_keys,
            excess - out.len(),
            |k| *k == Owner::Unknown,
            Owner::counted,
        )
        .into_iter()
        .map(|k| open[k]),
    );
    out
}

/// A connection whose request head is still coming.
struct Pending {
    s: TcpStream,
    from: SocketAddr,
    since: Instant,
    head: Vec<u8>,
}

/// What reading more of a head gave.
enum HeadRead {
    More,
    Done(Route),
    Gone,
}

impl Pending {
    /// Reads what has come (the socket is non-blocking), up to
    /// [`MAX_REQUEST`] bytes in all.
    fn read(&mut self) -> HeadRead {
        let mut chunk = [0u8; 2048];
        loop {
            let room = MAX_REQUEST - self.head.len();
            match self.s.read(&mut chunk[..room.min(2048)]) {
                Ok(0) => return HeadRead::Gone,
                Ok(n) => {
                    self.head.extend_from_slice(&chunk[..n]);
                    if let Some(end) = find_end(&self.head) {
                        return HeadRead::Done(route(&self.head[..end]));
                    }
                    if self.head.len() >= MAX_REQUEST {
                        return HeadRead::Done(Route::TooLarge);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return HeadRead::More,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return HeadRead::Gone,
            }
        }
    }
}

/// An answer's bytes: the exposition, shared by every client sent it, or
/// a short fixed text.
enum Body {
    Shared(Arc<String>),
    Fixed(&'static [u8]),
}

impl Body {
    fn bytes(&self) -> &[u8] {
        match self {
            Body::Shared(b) => b.as_bytes(),
            Body::Fixed(b) => b,
        }
    }
}

/// An answer being sent, with no thread and no wait: as much as the
/// socket takes whenever it takes some.
struct Sending {
    head: Vec<u8>,
    body: Body,
    done: usize,
    deadline: Instant,
    /// When the client last took a byte: the one that has gone longest
    /// without is dropped first when room is needed.
    progress: Instant,
}

impl Sending {
    fn new(status: &str, headers: &str, body: Body, now: Instant) -> Self {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
            body.bytes().len()
        );
        Self {
            head: head.into_bytes(),
            body,
            done: 0,
            deadline: now + CLIENT_DEADLINE,
            progress: now,
        }
    }

    /// Writes what the socket takes: `Ok(true)` once all is sent.
    fn write(&mut self, s: &mut TcpStream) -> std::io::Result<bool> {
        loop {
            let h = self.head.len();
            let rest = if self.done < h {
                &self.head[self.done..]
            } else {
                &self.body.bytes()[self.done - h..]
            };
            if rest.is_empty() {
                return Ok(true);
            }
            match s.write(rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.done += n;
                    self.progress = Instant::now();
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// A connection with a complete request: waiting for a reading (in
/// `batch`, once one is asked for it), or being sent its answer.
struct Active {
    s: TcpStream,
    from: SocketAddr,
    state: ActiveState,
}

enum ActiveState {
    Waiting { format: Format, batch: Option<u64> },
    Sending(Sending),
}

const TEXT: &str = "Content-Type: text/plain; charset=utf-8\r\n";

/// The answer to a request that is not a scrape (a scrape waits for its
/// reading).
fn fixed_answer(r: Route, now: Instant) -> Option<Sending> {
    let (status, extra, body): (&str, &str, &'static [u8]) = match r {
        Route::Metrics(_) => return None,
        Route::NotFound => ("404 Not Found", "", b"cgtop serves /metrics\n"),
        Route::MethodNotAllowed => ("405 Method Not Allowed", "Allow: GET\r\n", b"GET only\n"),
        Route::BadRequest => ("400 Bad Request", "", b"bad request\n"),
        Route::TooLarge => (
            "431 Request Header Fields Too Large",
            "",
            b"request too large\n",
        ),
    };
    Some(Sending::new(
        status,
        &format!("{TEXT}{extra}"),
        Body::Fixed(body),
        now,
    ))
}

/// The 503 of a request closed for lack of room: what the socket takes
/// at once, then closed.
fn refuse(a: &mut Active, now: Instant) {
    let mut o = Sending::new(
        "503 Service Unavailable",
        &format!("{TEXT}Retry-After: 1\r\n"),
        Body::Fixed(b"too many connections\n"),
        now,
    );
    let _ = o.write(&mut a.s);
}

fn close(s: &TcpStream) {
    let _ = s.shutdown(std::net::Shutdown::Both);
}

/// A reading asked of the scraping thread, for every request waiting in
/// `batch`, in the formats they asked for.
struct Job {
    batch: u64,
    formats: Vec<Format>,
}

/// What the scraping thread sends back.
struct Done {
    batch: u64,
    bodies: Vec<(Format, Arc<String>)>,
}

/// The scraping thread: one reading at a time, for every request that
/// came while the one before was taken; wakes the loop through `wake`.
fn spawn_scraper(
    ex: Exporter,
    wake: Arc<rustix::fd::OwnedFd>,
) -> Result<(
    std::sync::mpsc::Sender<Job>,
    std::sync::mpsc::Receiver<Done>,
)> {
    let (job_tx, job_rx) = std::sync::mpsc::channel::<Job>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<Done>();
    std::thread::Builder::new()
        .name("cgtop-scrape".into())
        .spawn(move || {
            for job in job_rx {
                let bodies = ex.scrape_formats(&job.formats);
                let done = Done {
                    batch: job.batch,
                    bodies: job.formats.iter().copied().zip(bodies).collect(),
                };
                if done_tx.send(done).is_err() {
                    return;
                }
                let _ = rustix::io::write(&*wake, &1u64.to_ne_bytes());
            }
        })
        .context("the scraping thread")?;
    Ok((job_tx, done_rx))
}

/// The connections of `cgtop serve`, all in one thread: request heads
/// read as they come from non-blocking sockets, answers sent as the
/// clients take them; only the reading itself is done elsewhere.
struct Front {
    pending: Vec<Pending>,
    active: Vec<Active>,
    next_batch: u64,
    scraping: bool,
    /// Asked only when a limit is passed, to tell whose each is.
    owners: Owners,
}

impl Front {
    /// Takes a new connection among the pending ones (the limit is
    /// kept by [`Front::trim`] once per turn of the loop).
    fn admit_pending(&mut self, s: TcpStream, from: SocketAddr, now: Instant) {
        let mut p = Pending {
            s,
            from,
            since: now,
            head: Vec::new(),
        };
        // the head often came with the connection: no turn of the loop
        // for it, and nothing newer can push it out meanwhile
        match p.read() {
            HeadRead::More => self.pending.push(p),
            HeadRead::Done(r) => self.admit_active(p.s, p.from, r, now),
            HeadRead::Gone => {}
        }
    }

    /// Takes a complete request (the limits are kept by [`Front::trim`]
    /// once per turn of the loop).
    fn admit_active(&mut self, s: TcpStream, from: SocketAddr, r: Route, now: Instant) {
        let state = match fixed_answer(r, now) {
            Some(o) => ActiveState::Sending(o),
            None => match r {
                Route::Metrics(format) => ActiveState::Waiting {
                    format,
                    batch: None,
                },
                _ => return,
            },
        };
        let mut a = Active { s, from, state };
        if send(&mut a) {
            self.active.push(a);
        }
    }

    /// Keeps the limits: past [`MAX_PENDING`] heads, [`MAX_WAITING`]
    /// requests waiting for their reading or [`MAX_SENDING`] answers
    /// being sent, the newest (of answers, the most stalled) of the
    /// [`Owner`] with the most of that kind is closed, a waiting request
    /// answered 503 first; before any of them, those whose peer has
    /// closed its socket ([`closing`]). Whose each is comes from one read
    /// of the socket tables, only when a limit is passed.
    fn trim(&mut self) {
        let waiting = |a: &Active| matches!(a.state, ActiveState::Waiting { .. });
        let n_waiting = self.active.iter().filter(|a| waiting(a)).count();
        let n_sending = self.active.len() - n_waiting;
        if self.pending.len() <= MAX_PENDING && n_waiting <= MAX_WAITING && n_sending <= MAX_SENDING
        {
            return;
        }
        // whose each connection of a kind past its limit is, asked at once
        let addrs = |s: &TcpStream, from: SocketAddr| (from, s.local_addr().ok());
        let mut conns = Vec::new();
        if self.pending.len() > MAX_PENDING {
            conns.extend(self.pending.iter().map(|p| addrs(&p.s, p.from)));
        }
        let pending_asked = conns.len();
        if n_waiting > MAX_WAITING || n_sending > MAX_SENDING {
            conns.extend(self.active.iter().map(|a| addrs(&a.s, a.from)));
        }
        let owners = self.owners.of(&conns);
        // the table is read again at most once a minute, here: said
        // where that changed what the fairness rule runs with
        if let Some(line) = self.owners.accounts_news() {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        let (pending_owners, active_owners) = owners.split_at(pending_asked);
        if self.pending.len() > MAX_PENDING {
            // in order of arrival: the newest last
            let keys = pending_owners;
            let mut drop = vec![false; keys.len()];
            for i in closing(keys, keys.len() - MAX_PENDING) {
                drop[i] = true;
            }
            let mut i = 0;
            self.pending.retain(|p| {
                let keep = !drop[i];
                i += 1;
                if !keep {
                    close(&p.s);
                }
                keep
            });
        }
        let mut drop = vec![false; self.active.len()];
        if n_waiting > MAX_WAITING {
            // `active` is in order of arrival: the newest last
            let places: Vec<usize> = (0..self.active.len())
                .filter(|&i| waiting(&self.active[i]))
                .collect();
            let keys: Vec<Owner> = places.iter().map(|&i| active_owners[i]).collect();
            for k in closing(&keys, n_waiting - MAX_WAITING) {
                drop[places[k]] = true;
            }
        }
        if n_sending > MAX_SENDING {
            // the client that took a byte the longest ago last
            let mut places: Vec<(Instant, usize)> = self
                .active
                .iter()
                .enumerate()
                .filter_map(|(i, a)| match &a.state {
                    ActiveState::Sending(o) => Some((o.progress, i)),
                    ActiveState::Waiting { .. } => None,
                })
                .collect();
            places.sort_unstable_by(|a, b| b.cmp(a));
            let keys: Vec<Owner> = places.iter().map(|&(_, i)| active_owners[i]).collect();
            for k in closing(&keys, n_sending - MAX_SENDING) {
                drop[places[k].1] = true;
            }
        }
        let now = Instant::now();
        let mut i = 0;
        self.active.retain_mut(|a| {
            let keep = !drop[i];
            i += 1;
            if !keep {
                if waiting(a) {
                    refuse(a, now);
                }
                close(&a.s);
            }
            keep
        });
    }

    /// Starts sending the bodies of a finished reading.
    fn finished(&mut self, done: &Done, now: Instant) {
        self.scraping = false;
        let mut i = 0;
        while i < self.active.len() {
            let a = &mut self.active[i];
            if let ActiveState::Waiting { format, batch } = a.state {
                if batch == Some(done.batch) {
                    let Some((_, body)) = done.bodies.iter().find(|(f, _)| *f == format) else {
                        close(&self.active.remove(i).s);
                        continue;
                    };
                    a.state = ActiveState::Sending(Sending::new(
                        "200 OK",
                        &format!("Content-Type: {}\r\n", format.content_type()),
                        Body::Shared(Arc::clone(body)),
                        now,
                    ));
                    if !send(a) {
                        self.active.remove(i);
                        continue;
                    }
                }
            }
            i += 1;
        }
    }

    /// Asks the scraping thread for a reading for every request waiting
    /// for one, unless a reading is being taken (those that come
    /// meanwhile share the next one). `false` when that thread is gone.
    fn ask(&mut self, jobs: &std::sync::mpsc::Sender<Job>) -> bool {
        if self.scraping {
            return true;
        }
        let batch = self.next_batch;
        let mut formats = Vec::new();
        for a in &mut self.active {
            if let ActiveState::Waiting { format, batch: b } = &mut a.state {
                if b.is_none() {
                    *b = Some(batch);
                    if !formats.contains(format) {
                        formats.push(*format);
                    }
                }
            }
        }
        if formats.is_empty() {
            return true;
        }
        self.next_batch += 1;
        self.scraping = jobs.send(Job { batch, formats }).is_ok();
        self.scraping
    }

    /// Drops the heads and the answers past their deadlines.
    fn expire(&mut self, now: Instant) {
        self.pending.retain(|p| {
            let keep = now < p.since + HEAD_DEADLINE;
            if !keep {
                close(&p.s);
            }
            keep
        });
        self.active.retain(|a| match &a.state {
            ActiveState::Sending(o) if now >= o.deadline => {
                close(&a.s);
                false
            }
            _ => true,
        });
    }

    /// The nearest deadline.
    fn next_deadline(&self) -> Option<Instant> {
        let heads = self.pending.iter().map(|p| p.since + HEAD_DEADLINE);
        let answers = self.active.iter().filter_map(|a| match &a.state {
            ActiveState::Sending(o) => Some(o.deadline),
            ActiveState::Waiting { .. } => None,
        });
        heads.chain(answers).min()
    }
}

/// Sends what the socket takes of a connection's answer: `false` once
/// the connection is done with (all sent, or the client gone).
fn send(a: &mut Active) -> bool {
    let ActiveState::Sending(o) = &mut a.state else {
        return true;
    };
    if let Ok(false) = o.write(&mut a.s) {
        return true;
    }
    close(&a.s);
    false
}

/// `cgtop serve`: binds, prints one line on stderr, serves until SIGTERM
/// or SIGINT (then ends with status 0, as `cgtop record` does: a service
/// manager's stop is a clean end).
pub fn serve(opts: &Options, cfg: &ServeConfig) -> Result<Option<i32>> {
    use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};
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
    let wake = Arc::new(
        eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(std::io::Error::from)
            .context("eventfd")?,
    );
    let ex = Exporter::new(c, cfg.export.filter.clone(), cfg.min_interval);
    let (jobs, dones) = spawn_scraper(ex, Arc::clone(&wake))?;
    let mut front = Front {
        pending: Vec::new(),
        active: Vec::new(),
        next_batch: 0,
        scraping: false,
        owners: Owners::open(),
    };
    if let Some(line) = front.owners.accounts_news() {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    // out of descriptors: accepting waits a while (the listener stays
    // readable, and the loop must not spin on it)
    let mut accept_after = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let accepting = now >= accept_after;
        let wait = front
            .next_deadline()
            .map_or(Duration::MAX, |d| d.saturating_duration_since(now))
            .min(if accepting {
                Duration::from_millis(200)
            } else {
                accept_after - now
            });
        let t = Timespec {
            tv_sec: 0,
            // at most 200 ms: within an i64
            tv_nsec: i64::try_from(wait.as_nanos()).unwrap_or(0) + 1_000_000,
        };
        let listen_for = if accepting {
            PollFlags::IN
        } else {
            PollFlags::empty()
        };
        let mut fds = Vec::with_capacity(2 + front.pending.len() + front.active.len());
        fds.push(PollFd::new(&listener, listen_for));
        fds.push(PollFd::new(&*wake, PollFlags::IN));
        fds.extend(
            front
                .pending
                .iter()
                .map(|p| PollFd::new(&p.s, PollFlags::IN)),
        );
        fds.extend(front.active.iter().map(|a| {
            let f = match a.state {
                ActiveState::Sending(_) => PollFlags::OUT,
                ActiveState::Waiting { .. } => PollFlags::empty(),
            };
            PollFd::new(&a.s, f)
        }));
        match poll(&mut fds, Some(&t)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(std::io::Error::from(e)).context("poll"),
        }
        let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let now = Instant::now();
        if ready[1] {
            let mut b = [0u8; 8];
            let _ = rustix::io::read(&*wake, &mut b);
        }
        // heads, then answers, by their places in `fds` (taken out of
        // their lists from the back, so that the places stay true)
        let (np, na) = (front.pending.len(), front.active.len());
        for i in (0..na).rev() {
            if !ready[2 + np + i] {
                continue;
            }
            // a waiting request is polled for nothing: what wakes it is
            // its client gone (HUP or an error), and it is answered no more
            let gone = match front.active[i].state {
                ActiveState::Waiting { .. } => {
                    close(&front.active[i].s);
                    true
                }
                ActiveState::Sending(_) => !send(&mut front.active[i]),
            };
            if gone {
                front.active.remove(i);
            }
        }
        for i in (0..np).rev() {
            if !ready[2 + i] {
                continue;
            }
            match front.pending[i].read() {
                HeadRead::More => {}
                HeadRead::Gone => {
                    front.pending.remove(i);
                }
                HeadRead::Done(r) => {
                    let p = front.pending.remove(i);
                    front.admit_active(p.s, p.from, r, now);
                }
            }
        }
        while let Ok(done) = dones.try_recv() {
            front.finished(&done, now);
        }
        front.expire(now);
        if ready[0] {
            for _ in 0..ACCEPT_BATCH {
                match listener.accept() {
                    Ok((s, from)) => {
                        if s.set_nonblocking(true).is_ok() {
                            front.admit_pending(s, from, now);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if matches!(e.raw_os_error(), Some(23 | 24 | 105 | 12)) => {
                        // ENFILE, EMFILE, ENOBUFS, ENOMEM
                        accept_after = now + Duration::from_millis(100);
                        break;
                    }
                    Err(_) => {}
                }
            }
        }
        front.trim();
        if !front.ask(&jobs) {
            anyhow::bail!("the scraping thread ended");
        }
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

    /// Whatever the interval, at most two readings' bodies are alive: a
    /// new reading waits until nobody holds the one before last.
    #[test]
    fn at_most_two_readings_bodies_alive() {
        use crate::model::GroupPath;
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memory-limited");
        let opts = export_options(GroupPath::root(), Some(root), None, None);
        let (_, c) = exporter_collector(&opts).expect("the fixture is a cgroup2 tree");
        let ex = Exporter::new(c, None, Duration::ZERO);
        // a client still sending the first body
        let first = ex.scrape(Format::Text);
        let second = ex.scrape(Format::Text);
        assert!(!Arc::ptr_eq(&first, &second), "interval 0: a new reading");
        // `first` is still held: no third body, the last one again
        let third = ex.scrape(Format::Text);
        assert!(Arc::ptr_eq(&second, &third));
        // both formats of one reading, from that reading
        let om = ex.scrape_formats(&[Format::OpenMetrics, Format::Text]);
        assert!(Arc::ptr_eq(&om[1], &second));
        drop(first);
        let fourth = ex.scrape(Format::Text);
        assert!(
            !Arc::ptr_eq(&second, &fourth),
            "a new reading once it is let go"
        );
    }

    /// /proc/net/tcp{,6} lines as the kernel prints them on a
    /// little-endian host: the title and malformed lines skipped.
    #[cfg(target_endian = "little")]
    #[test]
    fn socket_tables_parse() {
        let mut t = Sockets {
            complete: true,
            ..Sockets::default()
        };
        t.parse(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:4C82 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0501007F:A0B2 0100007F:4C82 01 00000000:00000000 00:00000000 00000000 65534        0 2 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:4C82 0501007F:A0B2 01 00000000:00000000 00:00000000 00000000     0        0 3 1
   3: zz00007F:4C82 0100007F:4C82 01 0 0 0 1000
   4: 0100007F:4C82
   5: 0100007F:4C82 0100007F:1234 01 0 0 0 -1
",
        );
        t.parse(
            "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid
   0: 0000000000000000FFFF00000200007F:A0B3 0000000000000000FFFF00000100007F:4C82 01 00000000:00000000 00:00000000 00000000  1000        0 4 1
   1: 00000000000000000000000001000000:A0B4 00000000000000000000000001000000:4C82 01 00000000:00000000 00:00000000 00000000  1001        0 5 1
   2: 00000000000000000000000001000000:A0B5 00000000000000000000000001000000:4C82 01 00000000:00000000 00:00000000 00000000  1001
",
        );
        let sa = |s: &str| s.parse::<SocketAddr>().unwrap();
        let server = Some(sa("127.0.0.1:19586"));
        assert_eq!(t.found.len(), 5, "{:?}", t.found);
        assert_eq!(t.owner(sa("127.0.1.5:41138"), server), Owner::Uid(65534));
        // (the server's own socket of that connection, uid 0, is not it)
        // IPv4-mapped, either way
        assert_eq!(
            t.owner(sa("[::ffff:127.0.0.2]:41139"), server),
            Owner::Uid(1000)
        );
        assert_eq!(
            t.owner(sa("[::1]:41140"), Some(sa("[::1]:19586"))),
            Owner::Uid(1001)
        );
        // a line without its inode is malformed
        assert_eq!(
            t.owner(sa("[::1]:41141"), Some(sa("[::1]:19586"))),
            Owner::Peer("::".parse().unwrap())
        );
        // not found in a table read whole: by its address, a loopback
        // peer as a remote one
        assert_eq!(
            t.owner(sa("127.0.0.3:1"), server),
            Owner::Peer("127.0.0.3".parse().unwrap())
        );
        assert_eq!(
            t.owner(sa("[2001:db8::1:2]:1"), server),
            Owner::Peer("2001:db8::".parse().unwrap())
        );
        assert_eq!(hex_socket("0100007F"), None);
        assert_eq!(hex_socket("0100007F:"), None);
        assert_eq!(hex_socket("+100007F:0001"), None);
        assert_eq!(hex_socket("0100007F0:0001"), None);
    }

    /// A line of /proc/net/tcp as a little-endian kernel prints the
    /// socket of a peer at `from` connected to 127.0.0.1:19586: open (its
    /// uid and an inode), or closed by its process (`None`: FIN_WAIT2,
    /// copied from Linux 6.18's table after the process closed it: uid 0,
    /// inode 0, whoever it was).
    #[cfg(target_endian = "little")]
    fn peer_line(n: usize, from: std::net::SocketAddrV4, uid: Option<u32>) -> String {
        let addr = u32::from_ne_bytes(from.ip().octets());
        let port = from.port();
        match uid {
            Some(uid) => format!(
                "{n:4}: {addr:08X}:{port:04X} 0100007F:4C82 01 00000000:00000000 00:00000000 00000000 {uid:5}        0 {} 2 00000000ba45e16f 20 0 0 11 -1\n",
                18_972_856 + n
            ),
            None => format!(
                "{n:4}: {addr:08X}:{port:04X} 0100007F:4C82 05 00000000:00000000 03:0000173C 00000000     0        0 0 3 00000000ef30633d\n"
            ),
        }
    }

    /// A socket its process has closed is nobody's: the table shows it
    /// as uid 0's, and it is not root's.
    #[cfg(target_endian = "little")]
    #[test]
    fn a_socket_closed_by_its_process_is_not_roots() {
        let mut t = Sockets::default();
        let sa = |s: &str| s.parse::<std::net::SocketAddrV4>().unwrap();
        t.parse(&peer_line(0, sa("127.0.1.9:34321"), None));
        t.parse(&peer_line(1, sa("127.0.0.1:40000"), Some(0)));
        let server = Some("127.0.0.1:19586".parse().unwrap());
        assert_eq!(
            t.owner("127.0.1.9:34321".parse().unwrap(), server),
            Owner::Closed
        );
        assert_eq!(
            t.owner("127.0.0.1:40000".parse().unwrap(), server),
            Owner::Uid(0)
        );
    }

    /// This kernel's table, read twice through the same descriptors: a
    /// connection's peer socket is its process's while open, and nobody's
    /// (not root's) once that process has closed it while the server
    /// still holds its end.
    #[test]
    fn the_kernels_table_shows_a_closed_peer_as_nobodys() {
        if !Path::new("/proc/net/tcp").exists() {
            eprintln!("skipped: no /proc/net/tcp");
            return;
        }
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let mut tables = SocketTables::open();
        let client = TcpStream::connect(server).unwrap();
        let from = client.local_addr().unwrap();
        let (held, _) = listener.accept().unwrap();
        let me = rustix::process::geteuid().as_raw();
        let want = HashSet::from([(from, server)]);
        assert_eq!(tables.read(&want).owner(from, Some(server)), Owner::Uid(me));
        drop(client);
        // the peer's socket becomes the kernel's (FIN_WAIT2) as its FIN
        // is taken: at once on loopback, waited for a while at most
        let t0 = Instant::now();
        let mut owner = tables.read(&want).owner(from, Some(server));
        while owner != Owner::Closed && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
            owner = tables.read(&want).owner(from, Some(server));
        }
        assert_eq!(owner, Owner::Closed);
        drop(held);
    }

    /// What the flood test met: uid 65534's flood closes its oldest
    /// connections while they wait for the reading (900 closed, 150
    /// open, from 8 addresses), then root's one scrape comes, the newest
    /// of all. Past the limit, the closed ones go first and root's
    /// request stays; the closed ones, shown as uid 0's in the table,
    /// made root the owner with the most, and its request its newest.
    #[cfg(target_endian = "little")]
    #[test]
    fn a_flood_of_closed_connections_does_not_refuse_roots_newest_scrape() {
        use std::net::{Ipv4Addr, SocketAddrV4};
        let mut table = String::new();
        let mut froms = Vec::new();
        for n in 0..1050 {
            let from = SocketAddrV4::new(
                Ipv4Addr::new(127, 0, 1, 1 + (n % 8) as u8),
                20_000 + n as u16,
            );
            table.push_str(&peer_line(n, from, (n >= 900).then_some(65534)));
            froms.push(from);
        }
        let root = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40_000);
        table.push_str(&peer_line(1050, root, Some(0)));
        froms.push(root);
        let mut t = Sockets::default();
        t.parse(&table);
        let server = Some("127.0.0.1:19586".parse().unwrap());
        let keys: Vec<Owner> = froms.iter().map(|&f| t.owner(f.into(), server)).collect();
        let out = closing(&keys, 32);
        assert_eq!(out.len(), 32);
        assert!(!out.contains(&1050), "root's scrape closed: {out:?}");
        assert!(
            out.iter().all(|&i| i < 900),
            "an open one went before the closed: {out:?}"
        );
        // more than the closed: then the newest of uid 65534's
        let out = closing(&keys, 950);
        assert!(!out.contains(&1050));
        assert!((0..900).all(|i| out.contains(&i)));
        assert!((1000..1050).all(|i| out.contains(&i)));
    }

    /// When no socket can be looked up, a lone request from its own
    /// address is not the one to go. Counted alone, each request was a
    /// group of one, and the newest of all, root's, went first.
    #[test]
    fn a_lone_newcomer_stays_when_no_socket_is_found() {
        let t = Sockets::default();
        let server = Some("127.0.0.1:19586".parse().unwrap());
        let mut froms: Vec<SocketAddr> = (0..1040)
            .map(|n| SocketAddr::from(([127, 0, 1, 1 + (n % 8) as u8], 20_000 + n as u16)))
            .collect();
        froms.push("127.0.0.1:40000".parse().unwrap());
        let keys: Vec<Owner> = froms.iter().map(|&f| t.owner(f, server)).collect();
        let out = closing(&keys, 17);
        assert_eq!(out.len(), 17);
        assert!(!out.contains(&1040), "the lone newcomer closed: {out:?}");
    }

    /// [`evictions_by`] with each key its own group.
    fn evictions<K: std::hash::Hash + Eq>(
        keys: &[K],
        excess: usize,
        oldest_first: impl Fn(&K) -> bool,
    ) -> Vec<usize> {
        evictions_by(keys, excess, oldest_first, |k| k)
    }

    /// The newest of whoever holds the most goes, never a lone request,
    /// however old.
    #[test]
    fn evictions_take_the_newest_of_the_largest_owner() {
        // the scraper's request (uid 0) the oldest, a flood of uid 65534
        let mut keys = vec![Owner::Uid(0)];
        keys.extend((1..=10).map(|_| Owner::Uid(65534)));
        keys.push(Owner::Peer("10.0.0.1".parse().unwrap()));
        keys.push(Owner::Peer("10.0.0.1".parse().unwrap()));
        assert_eq!(evictions(&keys, 3, |_| false), vec![10, 9, 8]);
        // down to equal sizes: the later last goes first
        let keys = [1, 2, 2, 1, 3];
        assert_eq!(evictions(&keys, 1, |_| false), vec![3]);
        assert_eq!(evictions(&keys, 3, |_| false), vec![3, 2, 4]);
        // never more than there are
        assert_eq!(evictions(&keys, 9, |_| false).len(), 5);
        assert!(evictions::<u8>(&[], 2, |_| false).is_empty());
        // 8 addresses of one uid against one other uid's single request
        let mut keys: Vec<Owner> = (0..2000).map(|_| Owner::Uid(65534)).collect();
        keys.insert(500, Owner::Uid(0));
        assert!(!evictions(&keys, 1000, |_| false).contains(&500));
    }

    /// Every unnamed uid counts in one group, but within it the uid
    /// holding the most gives way, its newest first: a lone scraper of
    /// an unnamed uid (a `DynamicUser=` service), the newest of all, is
    /// not closed for another unnamed uid's flood.
    #[test]
    fn within_the_largest_group_the_uid_holding_the_most_gives_way() {
        // root's 3, the flood's 10 of unnamed uid 201000, then the
        // scraper's one of unnamed uid 61234, the newest
        let mut keys: Vec<Owner> = (0..3).map(|_| Owner::Uid(0)).collect();
        keys.extend((0..10).map(|_| Owner::Unnamed(201_000)));
        keys.push(Owner::Unnamed(61_234));
        assert_eq!(closing(&keys, 3), vec![12, 11, 10]);
        // down to the scraper's size: every one the flood's
        let out = closing(&keys, 9);
        assert_eq!(out, (4..=12).rev().collect::<Vec<_>>());
        // two unnamed uids of 4 and 3: the one of 4, then the later last
        let keys = [
            Owner::Unnamed(7),
            Owner::Unnamed(8),
            Owner::Unnamed(7),
            Owner::Unnamed(8),
            Owner::Unnamed(7),
            Owner::Unnamed(8),
            Owner::Unnamed(7),
        ];
        assert_eq!(closing(&keys, 3), vec![6, 5, 4]);
        // the group still counts as one against other owners: two
        // unnamed uids of 3 each are 6, more than a named uid's 5
        let mut keys: Vec<Owner> = (0..5).map(|_| Owner::Uid(1000)).collect();
        keys.extend((0..6).map(|n| Owner::Unnamed(300_000 + n % 2)));
        assert_eq!(closing(&keys, 1), vec![10]);
        // each unnamed uid counted alone would keep its 3, and the
        // named uid's 5 give way
        assert_eq!(evictions(&keys, 1, |_| false), vec![4]);
    }

    /// A socket table past the old 8 MiB cap (a local user can grow it
    /// so: TIME_WAIT loops, connections to a listener of its own), with
    /// root's scrape's line at its end and most of a loopback flood's
    /// waiting connections past the cap too: every line is read, only
    /// ours kept, and root's scrape stays. Read up to 8 MiB, root's and
    /// the flood's past it counted together by 127.0.0.1, the largest
    /// group, and root's scrape, its newest, went first.
    #[cfg(target_endian = "little")]
    #[test]
    fn a_socket_table_past_8_mib_is_read_to_its_end() {
        use std::net::{Ipv4Addr, SocketAddrV4};
        let dir = tempfile::tempdir().unwrap();
        let (path, path6) = (dir.path().join("tcp"), dir.path().join("tcp6"));
        let mut text = String::new();
        let mut froms = Vec::new();
        for n in 0..70_000 {
            // the flood's waiting connections from 127.0.0.1, 40 in the
            // first 8 MiB, 1,000 past them; the others its TIME_WAIT
            // sockets from elsewhere in 127/8
            let waiting = n < 40 || (66_000..67_000).contains(&n);
            let port = 1024 + (n % 60_000) as u16;
            let from = if waiting {
                SocketAddrV4::new(Ipv4Addr::LOCALHOST, port)
            } else {
                SocketAddrV4::new(Ipv4Addr::new(127, 1, (n / 60_000) as u8, 1), port)
            };
            text.push_str(&peer_line(n, from, Some(65534)));
            if waiting {
                froms.push(from);
            }
        }
        let root = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 65_000);
        text.push_str(&peer_line(70_000, root, Some(0)));
        froms.push(root);
        assert!(text.len() > 8 << 20, "{} bytes", text.len());
        std::fs::write(&path, &text).unwrap();
        std::fs::write(&path6, "").unwrap();
        let server: SocketAddr = "127.0.0.1:19586".parse().unwrap();
        let want: HashSet<(SocketAddr, SocketAddr)> =
            froms.iter().map(|&f| (f.into(), server)).collect();
        let mut tables = SocketTables([
            std::fs::File::open(&path).ok(),
            std::fs::File::open(&path6).ok(),
        ]);
        let t = tables.read(&want);
        assert!(t.complete);
        assert_eq!(t.found.len(), froms.len(), "only our connections' lines");
        let keys: Vec<Owner> = froms
            .iter()
            .map(|&f| t.owner(f.into(), Some(server)))
            .collect();
        assert_eq!(keys.last(), Some(&Owner::Uid(0)));
        let out = closing(&keys, 17);
        assert_eq!(out.len(), 17);
        assert!(!out.contains(&(froms.len() - 1)), "root's scrape closed");
        // read only up to a cap: incomplete, root's not found is unknown
        let mut capped = Sockets::default();
        let f = std::fs::File::open(&path).unwrap();
        assert!(!capped.scan(&f, 8 << 20, &want));
        assert_eq!(capped.owner(root.into(), Some(server)), Owner::Unknown);
        let mut whole = Sockets::default();
        assert!(whole.scan(&f, text.len() as u64 + 1, &want));
    }

    /// A socket table that cannot be read: a flood from 127.0.0.1 and
    /// root's scrape from 127.0.0.1 (any local user can send from it)
    /// are all unknown, and the oldest go first, not root's, the newest.
    /// Counted by their address, root's was the newest of the one group.
    #[test]
    fn an_unreadable_socket_table_does_not_close_the_newest_loopback_scrape() {
        let dir = tempfile::tempdir().unwrap();
        // opened for writing only: every read fails
        let mut tables = SocketTables([
            std::fs::File::create(dir.path().join("tcp")).ok(),
            std::fs::File::create(dir.path().join("tcp6")).ok(),
        ]);
        let server: SocketAddr = "127.0.0.1:19586".parse().unwrap();
        let mut froms: Vec<SocketAddr> = (0..1040)
            .map(|n| SocketAddr::from(([127, 0, 0, 1], 20_000 + n as u16)))
            .collect();
        froms.push("127.0.0.1:40000".parse().unwrap());
        let want = froms.iter().map(|&f| (f, server)).collect();
        let t = tables.read(&want);
        let keys: Vec<Owner> = froms.iter().map(|&f| t.owner(f, Some(server))).collect();
        assert!(keys.iter().all(|k| *k == Owner::Unknown), "{keys:?}");
        assert_eq!(closing(&keys, 17), (0..17).collect::<Vec<_>>());
        // a remote peer not found is still counted by its address
        assert_eq!(
            t.owner("192.0.2.7:1".parse().unwrap(), Some(server)),
            Owner::Peer("192.0.2.7".parse().unwrap())
        );
        // a peer from our own end's address is of this host
        let lan: SocketAddr = "192.0.2.1:19586".parse().unwrap();
        assert_eq!(
            t.owner("192.0.2.1:5".parse().unwrap(), Some(lan)),
            Owner::Unknown
        );
    }

    /// Unknown connections are one group, its oldest closed first; the
    /// other groups as before.
    #[test]
    fn unknown_connections_go_oldest_first() {
        let u = Owner::Unknown;
        let f = Owner::Uid(65534);
        let keys = [u, f, u, f, f, u, Owner::Uid(0)];
        // as many unknown as uid 65534's, the later last: the unknown
        // group's oldest first, then the newest of uid 65534's
        assert_eq!(closing(&keys, 2), vec![0, 4]);
        assert_eq!(closing(&keys, 4), vec![0, 4, 2, 3]);
    }

    /// A flood whose every connection is another of a user's subordinate
    /// ids (each owner of one, by uid) closes its own, never root's lone
    /// scrape, the newest; uids no account names count as one group too.
    #[test]
    fn a_users_subordinate_ids_count_as_that_user() {
        let t = tempfile::tempdir().unwrap();
        let (passwd, subuid) = (t.path().join("passwd"), t.path().join("subuid"));
        std::fs::write(
            &passwd,
            "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n",
        )
        .unwrap();
        std::fs::write(&subuid, "alice:100000:65536\n").unwrap();
        let a = accounts::Accounts::read_from(t.path());
        for base in [100_000, 300_000] {
            // 1,000 connections, each of another uid, then root's scrape
            let mut uids: Vec<u32> = (0..1000).map(|n| base + n).collect();
            uids.push(0);
            let by_uid: Vec<Owner> = uids.iter().map(|&u| Owner::Uid(u)).collect();
            let counted: Vec<Owner> = by_uid.iter().map(|&o| account_of(&a, o)).collect();
            // by uid alone, every owner holds one: root's, the newest, goes
            assert!(closing(&by_uid, 10).contains(&1000), "the case this guards");
            let out = closing(&counted, 10);
            assert_eq!(out.len(), 10);
            assert!(
                !out.contains(&1000),
                "root's scrape closed (base {base}): {out:?}"
            );
        }
        assert_eq!(account_of(&a, Owner::Uid(100_123)), Owner::Uid(1000));
        assert_eq!(account_of(&a, Owner::Uid(300_123)), Owner::Unnamed(300_123));
        assert_eq!(account_of(&a, Owner::Uid(1000)), Owner::Uid(1000));
        assert_eq!(account_of(&a, Owner::Closed), Owner::Closed);
    }

    /// A container of a root-run manager (LXD's uids from root's own
    /// /etc/subuid range) floods from many of its uids: its flood closes
    /// its own, never root's lone scrape (the newest) nor another
    /// container's lone request.
    #[test]
    fn a_container_of_roots_subordinate_range_is_not_root() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
        std::fs::write(t.path().join("subuid"), "root:1000000:1000000000\n").unwrap();
        let a = accounts::Accounts::read_from(t.path());
        // 1,000 connections of the first container's uids, another
        // container's one, then root's scrape
        let mut uids: Vec<u32> = (0..1000).map(|n| 1_000_000 + n * 7).collect();
        uids.push(1_065_536 + 5);
        uids.push(0);
        let counted: Vec<Owner> = uids
            .iter()
            .map(|&u| account_of(&a, Owner::Uid(u)))
            .collect();
        assert_eq!(counted[0], Owner::RootBlock(1_000_000));
        assert_eq!(counted[1000], Owner::RootBlock(1_065_536));
        assert_eq!(counted[1001], Owner::Uid(0));
        let out = closing(&counted, 10);
        assert_eq!(
            out,
            (990..1000).rev().collect::<Vec<_>>(),
            "the flood's newest"
        );
    }

    /// The log says once that /etc/passwd was not read (every uid
    /// counts as itself), again only when that changes.
    #[test]
    fn the_log_says_when_owners_are_counted_by_uid() {
        let t = tempfile::tempdir().unwrap();
        let none = accounts::Accounts::read_from(t.path());
        let mut said = None;
        let line = accounts_news(&mut said, none.no_accounts()).expect("said at the start");
        assert!(
            line.starts_with("cgtop: serve: owners counted by uid, not account: ")
                && line.contains("/passwd not read (No such file or directory"),
            "{line}"
        );
        assert_eq!(accounts_news(&mut said, none.no_accounts()), None, "once");
        std::fs::write(t.path().join("passwd"), "root:x:0:0::/root:/bin/sh\n").unwrap();
        let read = accounts::Accounts::read_from(t.path());
        let line = accounts_news(&mut said, read.no_accounts()).expect("said when read");
        assert!(line.contains("read again"), "{line}");
        assert_eq!(accounts_news(&mut said, read.no_accounts()), None);
        // a host whose file is read from the start: nothing said
        assert_eq!(accounts_news(&mut None, read.no_accounts()), None);
    }

    /// This kernel asked about one socket by its addresses
    /// (NETLINK_SOCK_DIAG): the peer's socket of a connection is its
    /// process's while open, nobody's once closed; a socket that does
    /// not exist is missing, also where a listener holds the local
    /// address (the kernel then answers with the listener).
    #[test]
    fn the_kernel_answers_for_one_socket_by_its_addresses() {
        let Some(mut d) = SockDiag::open() else {
            eprintln!("skipped: no NETLINK_SOCK_DIAG socket here");
            return;
        };
        let me = rustix::process::geteuid().as_raw();
        for host in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = TcpListener::bind(host) else {
                eprintln!("skipped for {host}: cannot listen");
                continue;
            };
            let server = listener.local_addr().unwrap();
            let client = TcpStream::connect(server).unwrap();
            let from = client.local_addr().unwrap();
            let (held, _) = listener.accept().unwrap();
            match d.lookup(server, from) {
                Ok(Diag::Found(Some(uid))) => assert_eq!(uid, me),
                other => {
                    eprintln!("skipped: this kernel's sock_diag has no TCP ({other:?})");
                    return;
                }
            }
            assert_eq!(d.lookup(from, server).unwrap(), Diag::Found(Some(me)));
            let nobody: SocketAddr = match host {
                "[::1]:0" => "[::1]:9".parse().unwrap(),
                _ => "127.0.0.9:9".parse().unwrap(),
            };
            assert_eq!(d.lookup(server, nobody).unwrap(), Diag::Missing);
            assert_eq!(d.lookup(nobody, server).unwrap(), Diag::Missing);
            // through `Owners`: found, and one not found is remote
            let mut owners = Owners::open();
            assert_eq!(
                owners.of(&[(from, Some(server)), (nobody, Some(server))]),
                vec![Owner::Uid(me), Owner::Peer(peer_of(nobody))]
            );
            assert!(owners.diag.as_ref().is_some_and(|d| d.works));
            drop(client);
            let t0 = Instant::now();
            let mut got = d.lookup(from, server).unwrap();
            while got != Diag::Found(None) && t0.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(10));
                got = d.lookup(from, server).unwrap();
            }
            assert_eq!(got, Diag::Found(None));
            drop(held);
        }
    }

    /// The kernel's own table grown past the old 8 MiB cap by TIME_WAIT
    /// sockets, as any local user can (connections closed first by their
    /// client, from addresses of 127.77/16): every one of 200 live
    /// connections from 127.0.0.1 is found, by the table read whole and
    /// by the kernel asked; prints what each costs. Read up to 8 MiB, the
    /// connections whose lines came past it (lines are in hash order)
    /// were not found. Slow, and leaves the TIME_WAIT sockets for 60 s:
    /// by hand, `CGTOP_TW_SOCKETS=100000 cargo test --lib
    /// run::serve::tests::a_socket_table_grown_by_time_wait -- --ignored
    /// --nocapture` (BENCHMARKS.md, "cgtop serve's socket lookups").
    #[test]
    #[ignore = "makes ~70,000 TIME_WAIT sockets on this host"]
    fn a_socket_table_grown_by_time_wait_is_read_whole() {
        use rustix::net::{bind, connect, socket, AddressFamily, SocketType};
        use std::net::{Ipv4Addr, SocketAddrV4};
        let target: usize = std::env::var("CGTOP_TW_SOCKETS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(70_000);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let t0 = Instant::now();
        // fixed ports below the ephemeral range: a port picked by the
        // kernel would search longer as they fill, and the connections
        // below need ephemeral ones
        let mut made = 0;
        'fill: for k in 0..200u8 {
            for port in 10_000..30_000 {
                if made == target {
                    break 'fill;
                }
                let src = SocketAddrV4::new(Ipv4Addr::new(127, 77, k, 1), port);
                let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
                if bind(&fd, &src).is_err() || connect(&fd, &server).is_err() {
                    continue;
                }
                let (held, _) = listener.accept().unwrap();
                // the client closes first: its socket waits in TIME_WAIT
                drop(fd);
                drop(held);
                made += 1;
            }
        }
        let made_in = t0.elapsed();
        let mut tables = SocketTables::open();
        let mut conns = Vec::new();
        let mut keep = Vec::new();
        let live: usize = std::env::var("CGTOP_LIVE_CONNECTIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200);
        for _ in 0..live {
            let c = TcpStream::connect(server).unwrap();
            let (held, from) = listener.accept().unwrap();
            conns.push((from, held.local_addr().ok()));
            keep.push((c, held));
        }
        let want: HashSet<(SocketAddr, SocketAddr)> = conns
            .iter()
            .map(|&(f, l)| (canon(f), canon(l.unwrap())))
            .collect();
        let t3 = Instant::now();
        let bytes = std::fs::read("/proc/net/tcp").unwrap().len();
        let raw_in = t3.elapsed();
        let me = rustix::process::geteuid().as_raw();
        let t1 = Instant::now();
        let t = tables.read(&want);
        let read_in = t1.elapsed();
        assert!(t.complete);
        let owners: Vec<Owner> = conns.iter().map(|&(f, l)| t.owner(f, l)).collect();
        let missed = owners.iter().filter(|o| **o != Owner::Uid(me)).count();
        let t2 = Instant::now();
        let asked = Owners::open().of(&conns);
        let asked_in = t2.elapsed();
        eprintln!(
            "{made} TIME_WAIT made in {made_in:?}; /proc/net/tcp {bytes} bytes, \
             its bytes alone read in {raw_in:?}; read whole for {live} connections in {read_in:?}; asked of the kernel in {asked_in:?}"
        );
        assert!(bytes > 8 << 20, "the table is only {bytes} bytes");
        assert_eq!(missed, 0, "{missed} of {live} not found in the table");
        assert!(asked.iter().all(|o| *o == Owner::Uid(me)), "{asked:?}");
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
