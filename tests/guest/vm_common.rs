//! Helpers for the checks that run inside the test VM (tests/vm; the crate
//! `tests/guest`, shared with `tests/kernel`'s v1 cases): a self-cleaning group per case (the tests' one sandbox,
//! `tests/common/sandbox.rs`), the tests' one tmux driver
//! (`tests/common/tmux.rs`), workloads started inside a
//! group through cgtop's own writer, the real `cgtop --json` binary run
//! beside a workload, and small readers of the kernel's files for the
//! comparison.
//!
//! Everything here runs as root in a throw-away guest kernel; on any other
//! machine they are ignored, and fail before they touch anything when
//! asked to run ([`require_vm`]).

use cgtop::cgroupfs::io::DevId;
use cgtop::model::write::input::parse_controller_changes;
use cgtop::model::write::{self, Op};
use cgtop::model::GroupPath;
use cgtop::model::WriteOutcome;
use cgtop::source::writer::perform;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{sleep, JoinHandle};
use std::time::{Duration, Instant};

// the crate's one copy of each (a file loaded as two modules would keep
// two counters of its names): every crate that has vm_common has common
pub use crate::common::{prometheus, sandbox, sandbox_v1, tmux};

pub use sandbox::Sandbox;
pub use tmux::Tmux;

/// Stops a case that was asked to run outside the test VM (`CGTOP_VM=1`
/// is set by tests/vm/run-suite): the cases are `#[ignore]`d, so this is
/// reached only with `--ignored` or `--include-ignored`, and a case that
/// checked nothing must not count as a pass.
pub fn require_vm() {
    assert!(
        std::env::var("CGTOP_VM").as_deref() == Ok("1"),
        "not in the test VM (CGTOP_VM unset): this case runs in the QEMU guest, \
         through tests/vm/run-suite"
    );
}

/// Prints a measured figure and appends it to `$CGTOP_VM_FIGURES` (the
/// suite collects that file and prints it beside its summary).
pub fn figure(case: &str, text: &str) {
    println!("FIGURE {case}: {text}");
    if let Ok(path) = std::env::var("CGTOP_VM_FIGURES") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{case}: {text}");
        }
    }
}

// ---------------------------------------------------------------------------
// The kernel's own files, read independently of cgtop's parsers.

pub fn kread(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The value of `key` in a flat-keyed file text ("key value" lines).
pub fn kv(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// The value of `key=` on the io.stat line of `dev`, 0 when the group has
/// done no IO on it yet.
pub fn io_stat_key(text: &str, dev: DevId, key: &str) -> u64 {
    let prefix = format!("{dev} ");
    text.lines()
        .find(|l| l.starts_with(&prefix))
        .and_then(|l| {
            l.split_ascii_whitespace()
                .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        })
        .unwrap_or(0)
}

/// The scratch disk (`$CGTOP_VM_SCRATCH` on `$CGTOP_VM_SCRATCH_DEV`) and its
/// MAJ:MIN from /sys/block/<name>/dev.
pub fn scratch() -> (PathBuf, DevId) {
    let dir = std::env::var("CGTOP_VM_SCRATCH").unwrap_or_else(|_| "/mnt/scratch".into());
    let dev = std::env::var("CGTOP_VM_SCRATCH_DEV").unwrap_or_else(|_| "/dev/vda".into());
    let name = dev.trim_start_matches("/dev/");
    let text = kread(&Path::new("/sys/block").join(name).join("dev"));
    let id = DevId::parse(text.trim()).unwrap_or_else(|| panic!("bad MAJ:MIN {text:?}"));
    (PathBuf::from(dir), id)
}

/// Writes dirty pages back and empties the page cache, so that reads go to
/// the disk and earlier writes do not spill into the next measurement.
pub fn drop_caches() {
    let ok = Command::new("sync").status().is_ok_and(|s| s.success());
    assert!(ok, "sync failed");
    std::fs::write("/proc/sys/vm/drop_caches", "3").expect("drop_caches");
}

pub fn median(v: &[f64]) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        f64::midpoint(s[n / 2 - 1], s[n / 2])
    }
}

pub const MIB: f64 = 1_048_576.0;

/// "1.93" (MiB/s) for a rate in bytes/s.
pub fn mib(bps: f64) -> String {
    format!("{:.2}", bps / MIB)
}

pub fn list(v: &[f64], f: impl Fn(f64) -> String) -> String {
    v.iter().map(|x| f(*x)).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------------------
// A case's groups.

/// A case's sandbox (`cgtop-test-<pid>-<n>-<name>`, see
/// [`sandbox::Sandbox`]: thawed, killed and removed on drop, also after a
/// failed assertion), whose groups and processes go through cgtop's own
/// writer; the time the case took is a figure.
pub struct Case {
    /// `None` only in Drop, so that the time taken includes the cleanup.
    sandbox: Option<Sandbox>,
    name: &'static str,
    started: Instant,
}

impl std::ops::Deref for Case {
    type Target = Sandbox;

    fn deref(&self) -> &Sandbox {
        self.sandbox
            .as_ref()
            .expect("a case's sandbox lives until its drop")
    }
}

impl Case {
    /// Creates the case's group and enables `controllers` ("+io +memory",
    /// operator syntax) in its cgroup.subtree_control.
    pub fn new(name: &'static str, controllers: &str) -> Self {
        let sandbox = Sandbox::labelled(name).unwrap_or_else(|e| panic!("no sandbox: {e}"));
        let case = Self {
            sandbox: Some(sandbox),
            name,
            started: Instant::now(),
        };
        if !controllers.is_empty() {
            let changes = parse_controller_changes(controllers).expect("controller changes");
            let o = case.apply(&write::set_subtree_control(&case.top, &changes));
            assert_eq!(o.stored_differs(), None, "{}", o.summary());
        }
        case
    }

    /// Creates a child group through the writer (the sandbox's own
    /// `mkdir` is a plain mkdir(2)).
    pub fn mkdir(&self, sub: &str) -> GroupPath {
        let g = self.path(sub);
        self.apply(&write::create_group(&g));
        g
    }

    /// Performs `op` with cgtop's writer; it must succeed.
    pub fn apply(&self, op: &Op) -> WriteOutcome {
        let o = perform(&self.root, op);
        assert!(o.is_ok(), "{}", o.summary());
        o
    }

    /// Starts `argv` inside `g`: a shell waits on a pipe, is moved into
    /// the group by cgtop's writer (cgroup.procs), and only then execs the
    /// workload, so that every byte and cycle of it is charged to `g`.
    /// (The sandbox's own `spawn_in` moves a shell by a plain write.)
    pub fn spawn_in(&self, g: &GroupPath, argv: &[&str]) -> Job {
        let mut child = Command::new("sh")
            .args(["-c", "read go && exec \"$@\"", "sh"])
            .args(argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn sh");
        let pid = child.id();
        let moved = perform(&self.root, &write::move_process(pid, g, false));
        let mut stdin = child.stdin.take().expect("stdin");
        if !moved.is_ok() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}", moved.summary());
        }
        stdin.write_all(b"go\n").expect("release the workload");
        drop(stdin);
        Job {
            child: Some(child),
            pid,
            started: Instant::now(),
            what: argv.join(" "),
        }
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        drop(self.sandbox.take());
        figure(
            "time",
            &format!(
                "{} took {:.1} s",
                self.name,
                self.started.elapsed().as_secs_f64()
            ),
        );
    }
}

/// A workload started by [`Case::spawn_in`]; killed on drop.
pub struct Job {
    child: Option<Child>,
    pub pid: u32,
    /// When the workload was released into its group.
    pub started: Instant,
    pub what: String,
}

/// How a [`Job`] ended.
pub struct JobEnd {
    pub status: ExitStatus,
    pub stderr: String,
    /// From release to exit.
    pub elapsed: Duration,
    pub ended: Instant,
}

impl Job {
    /// Waits for the workload to end; panics after `limit`.
    pub fn wait(mut self, limit: Duration) -> JobEnd {
        let mut child = self.child.take().expect("a running job");
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                let ended = Instant::now();
                let mut stderr = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
                }
                return JobEnd {
                    status,
                    stderr,
                    elapsed: ended - self.started,
                    ended,
                };
            }
            if self.started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} did not end within {limit:?}", self.what);
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Reaps a workload that something else (cgroup.kill) ended.
    pub fn reap(mut self, limit: Duration) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if let Ok(Some(s)) = child.try_wait() {
                return Some(s);
            }
            sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

// ---------------------------------------------------------------------------
// The real binary, `cgtop --json`, beside a workload.

/// One JSON line of `cgtop --json`, with the moment the test read it.
#[derive(Clone)]
pub struct Sample {
    pub at: Instant,
    pub doc: Value,
}

impl Sample {
    /// The group's object in this refresh.
    pub fn group(&self, g: &GroupPath) -> Option<&Value> {
        let want = g.display().to_string();
        self.doc["groups"]
            .as_array()?
            .iter()
            .find(|x| x["path"].as_str() == Some(want.as_str()))
    }

    /// A number at a JSON pointer ("/rates/io/wbps") in the group's object.
    pub fn num(&self, g: &GroupPath, pointer: &str) -> Option<f64> {
        self.group(g)?.pointer(pointer)?.as_f64()
    }

    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64(self.doc["interval_s"].as_f64().unwrap_or(0.0))
    }

    /// Whether the interval the rates cover lies inside [from, to].
    pub fn within(&self, from: Instant, to: Instant) -> bool {
        // the line is read a moment after the scan: allow 50 ms for it
        self.at
            .checked_sub(self.interval() + Duration::from_millis(50))
            .is_some_and(|start| start >= from)
            && self.at <= to
    }
}

/// The numbers at a JSON pointer in `g`'s object, one per line that has
/// one.
pub fn nums<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
    g: &GroupPath,
    pointer: &str,
) -> Vec<f64> {
    samples
        .into_iter()
        .filter_map(|s| s.num(g, pointer))
        .collect()
}

/// `cgtop --json -d DELAY -n N GROUP`, its lines collected by a thread.
pub struct CgtopRun {
    child: Child,
    samples: Arc<Mutex<Vec<Sample>>>,
    reader: Option<JoinHandle<()>>,
}

impl CgtopRun {
    pub fn start(group: &GroupPath, delay: &str, n: u32) -> Self {
        Self::start_via(&[], group, delay, n)
    }

    /// The same, started through `wrapper` (`setpriv ... --`: cgtop
    /// without a capability), which must exec the binary it is given.
    pub fn start_via(wrapper: &[&str], group: &GroupPath, delay: &str, n: u32) -> Self {
        let bin = env!("CARGO_BIN_EXE_cgtop");
        let mut cmd = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .args(["--json", "-d", delay, "-n", &n.to_string()])
            // the root is cgtop's default (an empty argument is no group)
            .args((!group.as_bytes().is_empty()).then(|| group.as_rel_path()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start cgtop --json");
        let out = child.stdout.take().expect("cgtop stdout");
        let samples = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&samples);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let at = Instant::now();
                match serde_json::from_str::<Value>(&line) {
                    Ok(doc) => sink.lock().expect("samples").push(Sample { at, doc }),
                    Err(e) => eprintln!("cgtop printed a line that is not JSON ({e}): {line}"),
                }
            }
        });
        Self {
            child,
            samples,
            reader: Some(reader),
        }
    }

    pub fn len(&self) -> usize {
        self.samples.lock().expect("samples").len()
    }

    pub fn samples(&self) -> Vec<Sample> {
        self.samples.lock().expect("samples").clone()
    }

    /// Waits until at least `n` lines arrived.
    pub fn wait_lines(&self, n: usize, limit: Duration) {
        let t0 = Instant::now();
        while self.len() < n {
            assert!(
                t0.elapsed() < limit,
                "cgtop --json printed {} of {n} lines in {limit:?}",
                self.len()
            );
            sleep(Duration::from_millis(10));
        }
    }

    /// The first line from index `from` on that satisfies `pred`.
    pub fn wait_for(
        &self,
        from: usize,
        limit: Duration,
        pred: impl Fn(&Sample) -> bool,
    ) -> Option<Sample> {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.samples().into_iter().skip(from).find(|s| pred(s)) {
                return Some(s);
            }
            if t0.elapsed() > limit {
                return None;
            }
            sleep(Duration::from_millis(10));
        }
    }

    /// Stops cgtop (it may have ended by itself) and returns every line.
    pub fn stop(mut self) -> Vec<Sample> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        self.samples()
    }
}

impl Drop for CgtopRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cgtop --json -d DELAY -n N GROUP` to its end and returns the
/// lines (for checks that need no workload running beside it).
pub fn cgtop_once(group: &GroupPath, delay: &str, n: u32) -> Vec<Sample> {
    let run = CgtopRun::start(group, delay, n);
    run.wait_lines(n as usize, Duration::from_secs(30));
    run.stop()
}

/// The value for device `dev` in cgtop's JSON list of `[{"major", "minor"},
/// value]` pairs (io, io_latency).
pub fn by_dev(list: &Value, dev: DevId) -> Option<&Value> {
    list.as_array()?
        .iter()
        .find(|e| {
            e[0]["major"].as_u64() == Some(u64::from(dev.major))
                && e[0]["minor"].as_u64() == Some(u64::from(dev.minor))
        })
        .map(|e| &e[1])
}

/// The strings of a JSON array (controllers, subtree_control).
pub fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// cgroup v1 (tests/guest/v1.rs, tests/kernel/v1_fio.rs)

/// Writes `value` to `file` of `g` in the v1 hierarchy of `controller`:
/// through cgtop's writer (a `model::write` op naming a v1 hierarchy, one
/// write(2), read back); a refusal fails the test. Returns how it was
/// written, for the figures.
#[allow(dead_code)] // used by tests/guest/v1.rs and tests/kernel/v1_fio.rs only
pub fn set_v1(
    sb: &sandbox_v1::V1Sandbox,
    controller: &str,
    g: &GroupPath,
    file: &str,
    value: &str,
) -> String {
    // the op names a v1 hierarchy: the writer takes it only through a v1
    // handle (a cgroup2 op is refused there), opened at the mount
    let op = write::raw(g, file, value).on(cgtop::model::host::layout::HierId::V1(0));
    let o = perform(&sb.hier(controller).mount, &op);
    assert!(o.is_ok(), "cgtop's writer refused: {}", o.summary());
    "cgtop's writer".to_owned()
}

/// Every number under a key named `key` anywhere in `v` (a group's JSON
/// object: where cgtop puts a v1 figure such as `oom_kill` or `failcnt`
/// is its own choice, the number is the kernel's).
#[allow(dead_code)] // used by tests/guest/v1.rs and tests/kernel/v1_fio.rs only
pub fn find_key(v: &Value, key: &str) -> Vec<f64> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    if let Some(n) = x.as_f64() {
                        out.push(n);
                    }
                }
                out.extend(find_key(x, key));
            }
        }
        Value::Array(a) => {
            for x in a {
                out.extend(find_key(x, key));
            }
        }
        _ => {}
    }
    out
}

/// The layout of the guest (`CGTOP_VM_CGROUP`: v1 or hybrid), after
/// [`require_vm`]; stops a case run in a v2 guest.
#[allow(dead_code)] // used by tests/guest/v1.rs and tests/kernel/v1_fio.rs only
pub fn require_v1_vm() -> String {
    require_vm();
    let layout = std::env::var("CGTOP_VM_CGROUP").unwrap_or_default();
    assert!(
        layout == "v1" || layout == "hybrid",
        "not in a v1 or hybrid guest (CGTOP_VM_CGROUP={layout:?}): run it with \
         tests/vm/run-in-vm --cgroup v1|hybrid, or tests/vm/run-suite"
    );
    layout
}

/// The options of `cgtop --root DIR` (the view the binary opens with
/// `run::locate`), writes allowed.
// used by tests/guest/systemd.rs and tests/kernel/script.rs only
#[allow(dead_code)]
pub fn root_options(dir: PathBuf) -> cgtop::options::Options {
    cgtop::options::Options {
        root: Some(dir),
        read_only: false,
        ..crate::common::options()
    }
}
