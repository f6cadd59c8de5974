//! The real Prometheus beside the real `cgtop serve` (issue 10, "tested
//! against the real thing"): the tests start both on loopback, let
//! Prometheus scrape cgtop every second, and ask Prometheus' HTTP API for
//! a PromQL rate. Used by `tests/kernel/prometheus.rs` on this host and by
//! the `truth::` case in the pure cgroup v2 guest (`tests/guest`, through
//! its `vm_common`), which runs the host's /usr/bin/prometheus off the
//! guest's 9p view of the host's root.
//!
//! Every process started here is held by a [`Proc`], which ends it by its
//! pid (SIGTERM, then SIGKILL after 3 s) and reaps it on drop, also when an
//! assertion panicked. Prometheus' storage and config live in a temporary
//! directory removed on drop. The HTTP client is a plain HTTP/1.0 GET over
//! a TcpStream: the tests need nothing more, and no crate is added for it.

#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a start waits for the process to answer (a Go binary read
/// over 9p and run under TCG in the test VM is slow to start).
const START_LIMIT: Duration = Duration::from_secs(60);

/// The `prometheus` binary on PATH (Debian's package installs
/// /usr/bin/prometheus), or why there is none.
pub fn prometheus_binary() -> Result<PathBuf, String> {
    find_on_path("prometheus").ok_or_else(|| {
        "prometheus not found on PATH (Debian: apt-get install prometheus)".to_owned()
    })
}

pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
}

/// A loopback port that was free a moment ago (the kernel's pick).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

/// Seconds since the epoch, as Prometheus' API writes times.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A process the test started, with its stdout and stderr in a log file;
/// ended by its pid and reaped on drop.
pub struct Proc {
    child: Option<Child>,
    pub pid: u32,
    pub what: String,
    pub log: PathBuf,
}

impl Proc {
    pub fn spawn(cmd: &mut Command, what: &str, log: &Path) -> Result<Self, String> {
        let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        Ok(Self {
            pid: child.id(),
            child: Some(child),
            what: what.to_owned(),
            log: log.to_path_buf(),
        })
    }

    /// `Some(status)` once the process has ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// The last `n` lines of its output, for a failure message.
    pub fn tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let from = lines.len().saturating_sub(n);
        format!(
            "--- last lines of {} ({}):\n{}",
            self.what,
            self.log.display(),
            lines[from..].join("\n")
        )
    }

    /// SIGTERM, up to 3 s for it to go, then SIGKILL; reaped either way.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        if let Some(p) = i32::try_from(self.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
        }
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(3) {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One HTTP/1.0 GET of `target` ("/metrics", "/api/v1/query?query=...")
/// from `addr` ("127.0.0.1:9090"): the status and the body.
pub fn http_get(addr: &str, target: &str, accept: Option<&str>) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes())
        .map_err(|e| format!("send to {addr}: {e}"))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{addr}{target}: no HTTP header in {} bytes", raw.len()))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("{addr}{target}: bad status line {:?}", head.lines().next()))?;
    Ok((status, body.to_owned()))
}

/// Percent-encoding of a query parameter's value (RFC 3986 unreserved
/// bytes stay as they are).
pub fn url_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Polls `f` every 100 ms until it gives `Ok`, or returns the last error
/// after `limit`.
pub fn poll<T>(limit: Duration, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let t0 = Instant::now();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if t0.elapsed() > limit => return Err(format!("after {limit:?}: {e}")),
            Err(_) => sleep(Duration::from_millis(100)),
        }
    }
}

/// The real `cgtop serve` on a free loopback port.
pub struct Serve {
    pub proc: Proc,
    pub addr: String,
}

impl Serve {
    /// Starts `BIN serve --listen 127.0.0.1:PORT ARGS...` with its log in
    /// `dir`, and waits until GET /metrics answers 200.
    pub fn start(bin: &Path, args: &[&str], dir: &Path) -> Result<Self, String> {
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(bin);
        cmd.arg("serve").args(["--listen", &addr]).args(args);
        let mut proc = Proc::spawn(&mut cmd, "cgtop serve", &dir.join("cgtop-serve.log"))?;
        let up = poll(START_LIMIT, || {
            if let Some(st) = proc.exited() {
                return Ok(Err(format!("cgtop serve ended: {st}")));
            }
            match http_get(&addr, "/metrics", None)? {
                (200, _) => Ok(Ok(())),
                (code, body) => Err(format!("GET /metrics: {code} {body}")),
            }
        });
        match up {
            Ok(Ok(())) => Ok(Self { proc, addr }),
            Ok(Err(e)) | Err(e) => Err(format!("{e}\n{}", proc.tail(20))),
        }
    }

    /// One scrape of /metrics as Prometheus' text format.
    pub fn metrics(&self) -> Result<String, String> {
        match http_get(&self.addr, "/metrics", None)? {
            (200, body) => Ok(body),
            (code, body) => Err(format!("GET /metrics: {code} {body}")),
        }
    }
}

/// The real Prometheus on a free loopback port, scraping one target every
/// `scrape_interval`, its storage in a temporary directory.
pub struct Prometheus {
    pub proc: Proc,
    pub addr: String,
    pub dir: tempfile::TempDir,
}

impl Prometheus {
    /// The scrape config it is given: job `cgtop`, one static target.
    pub fn config(target: &str, scrape_interval: &str) -> String {
        format!(
            "global:\n  scrape_interval: {scrape_interval}\n  scrape_timeout: {scrape_interval}\n  \
             evaluation_interval: {scrape_interval}\nscrape_configs:\n  - job_name: cgtop\n    \
             static_configs:\n      - targets: ['{target}']\n"
        )
    }

    /// Starts `bin` and waits for /-/ready.
    pub fn start(bin: &Path, target: &str, scrape_interval: &str) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("cgtop-test-prometheus-")
            .tempdir()
            .map_err(|e| format!("tempdir: {e}"))?;
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, Self::config(target, scrape_interval))
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let addr = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(bin);
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .current_dir(dir.path());
        let mut proc = Proc::spawn(&mut cmd, "prometheus", &dir.path().join("prometheus.log"))?;
        let up = poll(START_LIMIT, || {
            if let Some(st) = proc.exited() {
                return Ok(Err(format!("prometheus ended: {st}")));
            }
            match http_get(&addr, "/-/ready", None)? {
                (200, _) => Ok(Ok(())),
                (code, body) => Err(format!("GET /-/ready: {code} {}", body.trim())),
            }
        });
        match up {
            Ok(Ok(())) => Ok(Self { proc, addr, dir }),
            Ok(Err(e)) | Err(e) => Err(format!("{e}\n{}", proc.tail(20))),
        }
    }

    /// A GET of an API path; the `data` member of a `success` answer.
    pub fn api(&self, target: &str) -> Result<Value, String> {
        let (code, body) = http_get(&self.addr, target, None)?;
        let v: Value = serde_json::from_str(&body)
            .map_err(|e| format!("{target}: {code}: not JSON ({e}): {body}"))?;
        if code != 200 || v["status"] != "success" {
            return Err(format!("{target}: {code}: {body}"));
        }
        Ok(v["data"].clone())
    }

    /// Waits until every active target's health is "up"; the scrape
    /// errors seen meanwhile are in the error.
    pub fn wait_up(&self, limit: Duration) -> Result<(), String> {
        poll(limit, || {
            let data = self.api("/api/v1/targets")?;
            let targets = data["activeTargets"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if targets.is_empty() {
                return Err("no active target yet".into());
            }
            for t in &targets {
                if t["health"] != "up" {
                    return Err(format!(
                        "target {} is {} (last error: {})",
                        t["scrapeUrl"], t["health"], t["lastError"]
                    ));
                }
            }
            Ok(())
        })
        .map_err(|e| format!("{e}\n{}", self.proc.tail(20)))
    }

    /// An instant query at `time` (seconds since the epoch; `None`: now):
    /// each series' labels and value.
    pub fn query(&self, expr: &str, time: Option<f64>) -> Result<Vec<(Value, f64)>, String> {
        let mut target = format!("/api/v1/query?query={}", url_encode(expr));
        if let Some(t) = time {
            target.push_str(&format!("&time={t:.3}"));
        }
        let data = self.api(&target)?;
        if data["resultType"] != "vector" {
            return Err(format!(
                "{expr}: a {} rather than a vector",
                data["resultType"]
            ));
        }
        let mut out = Vec::new();
        for r in data["result"].as_array().cloned().unwrap_or_default() {
            let v = r["value"][1]
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| format!("{expr}: bad value in {r}"))?;
            out.push((r["metric"].clone(), v));
        }
        Ok(out)
    }

    /// The one series `expr` gives at `time`, or why not.
    pub fn query_one(&self, expr: &str, time: Option<f64>) -> Result<f64, String> {
        let r = self.query(expr, time)?;
        match r.as_slice() {
            [(_, v)] => Ok(*v),
            [] => Err(format!("{expr}: no series")),
            _ => Err(format!("{expr}: {} series: {r:?}", r.len())),
        }
    }
}
