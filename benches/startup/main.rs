//! How soon the first screen comes: cgtop and systemd-cgtop started in a
//! pseudo-terminal of the same size, timed from the spawn to the first
//! output that shows the tree, and to the first that shows a rate; and
//! what a one-shot `cgtop -b -n 1 -d D` costs (wall time, peak RSS,
//! system calls).
//!
//! ```text
//! cargo bench --bench startup                       # 1,000 groups in every hierarchy read
//! cargo bench --bench startup -- --groups 1000,10000 --syscalls
//! cargo bench --bench startup -- --no-tree --marker system.slice   # the tree there (the VM)
//! cargo bench --bench startup -- --help
//! ```
//!
//! The groups: N under `cgtop-test-<pid>-900` in cgroup2 and in each v1
//! hierarchy cgtop reads figures from (`collector/layout_tree.rs`, the
//! collector benchmark's `--v1-layout` maker), removed on the way out,
//! also on an error and on SIGINT/SIGTERM/SIGHUP.
//!
//! The screen is what a terminal would show: the output goes through a
//! small terminal model (cursor moves, erases, text; colours ignored), and
//! after each read the screen is looked at. "Tree": a line holds the
//! marker (cgtop: the test tree's top group; systemd-cgtop: its header,
//! which it prints with its first rows). "Rates": on the line of the marker
//! group, the CPU column holds a number, not `-`. See BENCHMARKS.md
//! ("Start-up").

#[path = "../collector/fake.rs"]
#[allow(dead_code)]
mod fake;
#[path = "../collector/layout_tree.rs"]
#[allow(dead_code)]
mod layout_tree;

use anyhow::{bail, Context, Result};
use clap::Parser;
use std::io::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(
    about = "Time cgtop's and systemd-cgtop's first screen in a pty, and a one-shot batch run"
)]
struct Args {
    /// Groups made in each hierarchy read (cgroup2 and each v1 one), one
    /// run per size.
    #[arg(long, value_delimiter = ',', default_value = "1000")]
    groups: Vec<usize>,
    /// Rounds per figure, interleaved (the median is reported).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Make no groups: time on the tree that is there (give --marker).
    #[arg(long)]
    no_tree: bool,
    /// With --no-tree: a group name on the first screen of cgtop's tree.
    #[arg(long)]
    marker: Option<String>,
    /// The cgtop binary (default: this build's).
    #[arg(long)]
    cgtop: Option<PathBuf>,
    /// systemd-cgtop (skipped where absent).
    #[arg(long, default_value = "systemd-cgtop")]
    systemd_cgtop: String,
    /// The terminal's size, COLSxROWS.
    #[arg(long, default_value = "120x40")]
    size: String,
    /// The one-shot batch run's interval (`-d`).
    #[arg(long, default_value_t = 0.1)]
    batch_delay: f64,
    /// Start cgtop (and systemd-cgtop), in the pty and in the one-shot
    /// batch runs, at the test tree's top group, not at the root: the figure of N groups on a host that holds many
    /// more (other test trees) than the benchmark made.
    #[arg(long)]
    in_tree: bool,
    /// Time the pty starts only, not the one-shot batch runs.
    #[arg(long)]
    tui_only: bool,
    /// Also count the one-shot run's system calls (strace -c -f).
    #[arg(long)]
    syscalls: bool,
    /// Give up on a screen after this many seconds.
    #[arg(long, default_value_t = 15.0)]
    timeout: f64,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Fails once SIGINT, SIGTERM or SIGHUP arrived, so that the error unwinds
/// through the guard that removes the test groups.
pub fn check_stop() -> Result<()> {
    if STOP.get().is_some_and(|s| s.load(Ordering::Relaxed)) {
        bail!("interrupted");
    }
    Ok(())
}

/// A screen of `rows` lines of `cols` characters, fed a program's output.
struct Screen {
    cols: usize,
    rows: usize,
    cells: Vec<Vec<char>>,
    r: usize,
    c: usize,
    /// A character went into the last column: the next one wraps.
    wrap: bool,
    state: State,
    params: String,
    pending: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Ground,
    Esc,
    /// ESC ( and the like: one more character.
    Charset,
    Csi,
    Osc,
    OscEsc,
}

impl Screen {
    fn new(cols: usize, rows: usize) -> Self {
        Self {
            cols,
            rows,
            cells: vec![vec![' '; cols]; rows],
            r: 0,
            c: 0,
            wrap: false,
            state: State::Ground,
            params: String::new(),
            pending: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.pending);
        let (text, rest) = match std::str::from_utf8(&buf) {
            Ok(t) => (t.to_owned(), Vec::new()),
            Err(e) if e.error_len().is_none() => {
                let ok = e.valid_up_to();
                (
                    String::from_utf8_lossy(&buf[..ok]).into_owned(),
                    buf[ok..].to_vec(),
                )
            }
            Err(_) => (String::from_utf8_lossy(&buf).into_owned(), Vec::new()),
        };
        self.pending = rest;
        for ch in text.chars() {
            self.put(ch);
        }
    }

    fn line_feed(&mut self) {
        if self.r + 1 >= self.rows {
            self.cells.remove(0);
            self.cells.push(vec![' '; self.cols]);
        } else {
            self.r += 1;
        }
    }

    fn put(&mut self, ch: char) {
        match self.state {
            State::Ground => match ch {
                '\x1b' => self.state = State::Esc,
                '\r' => {
                    self.c = 0;
                    self.wrap = false;
                }
                '\n' | '\x0b' | '\x0c' => {
                    self.line_feed();
                    self.wrap = false;
                }
                '\x08' => {
                    self.c = self.c.saturating_sub(1);
                    self.wrap = false;
                }
                '\t' => self.c = ((self.c / 8 + 1) * 8).min(self.cols - 1),
                c if (c as u32) < 0x20 || c == '\x7f' => {}
                c => {
                    if self.wrap {
                        self.c = 0;
                        self.line_feed();
                        self.wrap = false;
                    }
                    self.cells[self.r][self.c] = c;
                    if self.c + 1 >= self.cols {
                        self.wrap = true;
                    } else {
                        self.c += 1;
                    }
                }
            },
            State::Esc => {
                self.state = match ch {
                    '[' => {
                        self.params.clear();
                        State::Csi
                    }
                    ']' => State::Osc,
                    '(' | ')' | '*' | '+' | '#' | '%' => State::Charset,
                    'M' => {
                        self.r = self.r.saturating_sub(1);
                        State::Ground
                    }
                    _ => State::Ground,
                };
            }
            State::Osc => match ch {
                '\x07' => self.state = State::Ground,
                '\x1b' => self.state = State::OscEsc,
                _ => {}
            },
            State::Charset | State::OscEsc => self.state = State::Ground,
            State::Csi => {
                if ('\x40'..='\x7e').contains(&ch) {
                    self.state = State::Ground;
                    self.csi(ch);
                } else {
                    self.params.push(ch);
                }
            }
        }
    }

    fn csi(&mut self, fin: char) {
        if self.params.starts_with(['?', '>', '<', '=']) {
            return;
        }
        let p: Vec<usize> = self
            .params
            .split(';')
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let at = |i: usize, d: usize| p.get(i).copied().filter(|&v| v > 0).unwrap_or(d);
        self.wrap = false;
        match fin {
            'H' | 'f' => {
                self.r = (at(0, 1) - 1).min(self.rows - 1);
                self.c = (at(1, 1) - 1).min(self.cols - 1);
            }
            'A' => self.r = self.r.saturating_sub(at(0, 1)),
            'B' => self.r = (self.r + at(0, 1)).min(self.rows - 1),
            'C' => self.c = (self.c + at(0, 1)).min(self.cols - 1),
            'D' => self.c = self.c.saturating_sub(at(0, 1)),
            'G' => self.c = (at(0, 1) - 1).min(self.cols - 1),
            'd' => self.r = (at(0, 1) - 1).min(self.rows - 1),
            'J' => {
                let (r, c) = (self.r, self.c);
                let all = p.first().copied().unwrap_or(0);
                for (i, row) in self.cells.iter_mut().enumerate() {
                    for (j, cell) in row.iter_mut().enumerate() {
                        let clear = match all {
                            0 => (i, j) >= (r, c),
                            1 => (i, j) <= (r, c),
                            _ => true,
                        };
                        if clear {
                            *cell = ' ';
                        }
                    }
                }
            }
            'K' => {
                let c = self.c;
                let how = p.first().copied().unwrap_or(0);
                for (j, cell) in self.cells[self.r].iter_mut().enumerate() {
                    let clear = match how {
                        0 => j >= c,
                        1 => j <= c,
                        _ => true,
                    };
                    if clear {
                        *cell = ' ';
                    }
                }
            }
            'X' => {
                let end = (self.c + at(0, 1)).min(self.cols);
                for cell in &mut self.cells[self.r][self.c..end] {
                    *cell = ' ';
                }
            }
            _ => {}
        }
    }

    fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.cells.iter().map(|r| r.iter().collect())
    }
}

/// What a program's screens are looked at for.
struct Prog {
    label: String,
    argv: Vec<String>,
    /// The first screen with the tree: a line holds this.
    tree: String,
    /// The line whose CPU column tells rates: the one holding this.
    row: String,
    /// The CPU column: this many words after the word holding `row`.
    cpu_word: usize,
}

impl Prog {
    fn has_tree(&self, s: &Screen) -> bool {
        s.lines().any(|l| l.contains(&self.tree))
    }

    fn has_rates(&self, s: &Screen) -> bool {
        s.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words
                .iter()
                .position(|w| w.contains(&self.row))
                .and_then(|i| words.get(i + self.cpu_word))
                .is_some_and(|w| w.trim_end_matches('%').parse::<f64>().is_ok())
        })
    }
}

/// One start: seconds to the tree and to the first rate (`None`: not seen
/// within the timeout).
struct Start {
    tree: Option<f64>,
    rates: Option<f64>,
    /// CPU seconds (user + system of every thread, ended ones too) used
    /// when the tree was first seen.
    tree_cpu: Option<f64>,
}

/// CPU seconds process `pid` has run, all its threads, those that ended
/// too: /proc/PID/stat's utime + stime, in clock ticks (10 ms here). The
/// threads' own schedstat files are finer but list only the live ones:
/// the first refresh's helper threads (half its scanning on 2 CPUs) have
/// ended by the time the tree shows, and their CPU went uncounted.
fn cpu_of(pid: u32) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the fields after the command name, which may hold spaces
    let rest = &text[text.rfind(')')? + 1..];
    let w: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here
    let ticks = w.get(11)?.parse::<u64>().ok()? + w.get(12)?.parse::<u64>().ok()?;
    // USER_HZ: 100 on every Linux architecture (the kernel's ABI)
    Some(ticks as f64 / 100.0)
}

fn open_pty(cols: u16, rows: u16) -> Result<(OwnedFd, OwnedFd)> {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master =
        openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).context("openpt")?;
    grantpt(&master).context("grantpt")?;
    unlockpt(&master).context("unlockpt")?;
    let name = ptsname(&master, Vec::new()).context("ptsname")?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .context("opening the pty's terminal side")?;
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .context("setting the pty's size")?;
    Ok((master, slave))
}

fn stop_child(child: &mut Child, master: &OwnedFd) {
    let _ = rustix::io::write(master, b"q");
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        // keep the pty drained so that a last frame does not block it
        let mut buf = vec![0u8; 1 << 16];
        let _ = rustix::io::read(master, &mut buf);
        std::thread::sleep(Duration::from_millis(10));
    }
    // only the child this run started, by its pid
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `p` in a new pty (its controlling terminal, through `setsid
/// -c`) and watches its screen until it shows rates.
fn start_once(p: &Prog, cols: u16, rows: u16, timeout: Duration) -> Result<Start> {
    let (master, slave) = open_pty(cols, rows)?;
    rustix::fs::fcntl_setfl(&master, rustix::fs::OFlags::NONBLOCK)?;
    let mut cmd = Command::new("setsid");
    cmd.arg("-c")
        .args(&p.argv)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", p.label))?;
    drop(cmd);
    let mut screen = Screen::new(cols.into(), rows.into());
    let mut out = Start {
        tree: None,
        rates: None,
        tree_cpu: None,
    };
    let mut buf = vec![0u8; 1 << 16];
    while out.rates.is_none() && t0.elapsed() < timeout {
        check_stop()?;
        let mut fds = [rustix::event::PollFd::new(
            &master,
            rustix::event::PollFlags::IN,
        )];
        let ts = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        // poll(2) returns as soon as the program wrote: the figure is
        // not a multiple of its timeout, which only bounds how long the
        // loop goes without looking for a signal or the child's exit
        let _ = rustix::event::poll(&mut fds, Some(&ts));
        // each chunk is stamped as it is read, before the screen is fed
        // and looked at, and the screen is looked at after each: what
        // comes later in the same wake-up does not move the figure
        while out.rates.is_none() {
            let n = match rustix::io::read(master.as_fd(), &mut buf) {
                Ok(n) if n > 0 => n,
                _ => break,
            };
            let now = t0.elapsed().as_secs_f64();
            screen.feed(&buf[..n]);
            if out.tree.is_none() && p.has_tree(&screen) {
                out.tree = Some(now);
                out.tree_cpu = cpu_of(child.id());
            }
            if out.tree.is_some() && p.has_rates(&screen) {
                out.rates = Some(now);
            }
        }
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
    }
    if out.tree.is_none() {
        let shown: Vec<String> = screen.lines().take(12).collect();
        eprintln!(
            "  {}: no tree within {:.1} s; the screen began:\n{}",
            p.label,
            timeout.as_secs_f64(),
            shown.join("\n")
        );
    }
    stop_child(&mut child, &master);
    Ok(out)
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

fn fmt_ms(x: Option<f64>) -> String {
    x.map_or("-".into(), |s| format!("{:.0}", s * 1e3))
}

fn range_ms(v: &[f64]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) => format!("{:.0}-{:.0}", a * 1e3, b * 1e3),
        _ => "-".into(),
    }
}

/// CPU seconds of a run: user, system.
type UserSys = (f64, f64);

/// Wall seconds, peak RSS (KiB, GNU time's `%M`) and CPU seconds (user,
/// system: `%U %S`) of one run of `argv`.
fn one_shot(argv: &[String]) -> Result<(f64, Option<u64>, Option<UserSys>)> {
    let time = std::path::Path::new("/usr/bin/time");
    let report = tempfile_path("time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.arg("-f")
            .arg("%M %U %S")
            .arg("-o")
            .arg(&report)
            .args(argv);
        c
    } else {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        c
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let t0 = Instant::now();
    let st = cmd
        .status()
        .with_context(|| format!("running {}", argv[0]))?;
    let wall = t0.elapsed().as_secs_f64();
    if !st.success() {
        bail!("{} failed: {st}", argv.join(" "));
    }
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    let w: Vec<&str> = text
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let rss = w.first().and_then(|x| x.parse().ok());
    let cpu = match (w.get(1), w.get(2)) {
        (Some(u), Some(s)) => u.parse::<f64>().ok().zip(s.parse::<f64>().ok()),
        _ => None,
    };
    Ok((wall, rss, cpu))
}

fn tempfile_path(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cgtop-startup-{}-{what}", std::process::id()))
}

/// The system calls of one run of `argv`, from `strace -c -f` (name,
/// count), most first.
fn syscalls(argv: &[String]) -> Result<Vec<(String, u64)>> {
    let report = tempfile_path("strace");
    let st = Command::new("strace")
        .arg("-f")
        .arg("-c")
        .arg("-o")
        .arg(&report)
        .args(argv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running strace")?;
    if !st.success() {
        bail!("strace {} failed: {st}", argv.join(" "));
    }
    let text = std::fs::read_to_string(&report).context("strace's report")?;
    let _ = std::fs::remove_file(&report);
    let mut out = Vec::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors], syscall
        if w.len() >= 5 && w[0].parse::<f64>().is_ok() && *w.last().unwrap_or(&"") != "total" {
            if let (Ok(calls), Some(name)) = (w[3].parse::<u64>(), w.last()) {
                out.push(((*name).to_string(), calls));
            }
        }
    }
    out.sort_by_key(|c| std::cmp::Reverse(c.1));
    Ok(out)
}

fn run_size(args: &Args, n: Option<usize>, cgtop: &str) -> Result<()> {
    let (cols, rows) = args
        .size
        .split_once('x')
        .and_then(|(c, r)| Some((c.parse::<u16>().ok()?, r.parse::<u16>().ok()?)))
        .context("--size COLSxROWS")?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let tree = if let Some(n) = n {
        let t = layout_tree::make(n)?;
        println!(
            "\n## {n} groups in each of {} ({} directories, made in {:.1} s)\n",
            t.labels.join(", "),
            t.made.0.len(),
            t.took.as_secs_f64()
        );
        Some(t)
    } else {
        println!("\n## the tree that is there\n");
        None
    };
    let marker = match (&tree, &args.marker) {
        (_, Some(m)) => m.clone(),
        (Some(t), None) => t.name.clone(),
        (None, None) => bail!("--no-tree needs --marker"),
    };
    // the group both programs start at: the test tree's top (made in
    // every hierarchy), or the root
    let in_tree = match (&tree, args.in_tree) {
        (Some(t), true) => Some(t.name.clone()),
        (None, true) => bail!("--in-tree needs the tree the benchmark makes"),
        _ => None,
    };
    let mut progs = vec![Prog {
        label: "cgtop".into(),
        argv: std::iter::once(cgtop.to_string())
            .chain(in_tree.clone())
            .collect(),
        tree: marker.clone(),
        row: marker.clone(),
        cpu_word: 1,
    }];
    let have_systemd = Command::new(&args.systemd_cgtop)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if have_systemd {
        // its header comes with its first rows; its root line ("/",
        // Tasks, %CPU) says when rates come
        progs.push(Prog {
            label: "systemd-cgtop".into(),
            argv: std::iter::once(args.systemd_cgtop.clone())
                .chain(in_tree.clone())
                .collect(),
            tree: "Control Group".into(),
            row: "/".into(),
            cpu_word: 2,
        });
    }
    let mut trees = vec![Vec::new(); progs.len()];
    let mut rates = vec![Vec::new(); progs.len()];
    let mut cpus = vec![Vec::new(); progs.len()];
    for round in 0..args.rounds {
        eprintln!("  round {}/{}", round + 1, args.rounds);
        for (k, p) in progs.iter().enumerate() {
            let s = start_once(p, cols, rows, timeout)?;
            trees[k].extend(s.tree);
            rates[k].extend(s.rates);
            cpus[k].extend(s.tree_cpu);
        }
    }
    println!(
        "First screen in a {cols}x{rows} pty, ms from the spawn, median of {} interleaved rounds (range):\n",
        args.rounds
    );
    println!("| program | the tree | range | the first rates | range | CPU ms at the tree |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (k, p) in progs.iter().enumerate() {
        let (mut t, mut r, mut c) = (trees[k].clone(), rates[k].clone(), cpus[k].clone());
        let (mt, mr, mc) = (median(&mut t), median(&mut r), median(&mut c));
        let missing = |v: &[f64]| {
            if v.len() < args.rounds {
                format!(" ({} of {} seen)", v.len(), args.rounds)
            } else {
                String::new()
            }
        };
        println!(
            "| {} | **{}**{} | {} | **{}**{} | {} | {} |",
            p.label,
            fmt_ms(mt),
            missing(&t),
            range_ms(&t),
            fmt_ms(mr),
            missing(&r),
            range_ms(&r),
            fmt_ms(mc)
        );
    }
    // every round's figures, in the order they ran (a median hides the
    // rounds over a target)
    println!();
    for (k, p) in progs.iter().enumerate() {
        let each = |v: &[f64]| {
            v.iter()
                .map(|s| format!("{:.0}", s * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "{}, each round, ms: the tree {}; the first rates {}",
            p.label,
            each(&trees[k]),
            each(&rates[k])
        );
    }
    if args.tui_only {
        drop(tree);
        return Ok(());
    }
    // the one-shot batch runs
    let d = format!("{}", args.batch_delay);
    let mut shots: Vec<(String, Vec<String>)> = vec![
        (
            format!("`cgtop -b -n 1 -d {d}`"),
            vec![
                cgtop.into(),
                "-b".into(),
                "-n".into(),
                "1".into(),
                "-d".into(),
                d.clone(),
            ],
        ),
        (
            "`cgtop -b -n 1`".into(),
            vec![cgtop.into(), "-b".into(), "-n".into(), "1".into()],
        ),
    ];
    if have_systemd {
        shots.push((
            "`systemd-cgtop -b -n 1`".into(),
            vec![
                args.systemd_cgtop.clone(),
                "-b".into(),
                "-n".into(),
                "1".into(),
            ],
        ));
    }
    // at the test tree's top too with --in-tree (the same group as the
    // pty starts)
    for (_, argv) in &mut shots {
        argv.extend(in_tree.clone());
    }
    let mut walls = vec![Vec::new(); shots.len()];
    let mut rss = vec![Vec::new(); shots.len()];
    let mut cpu = vec![Vec::new(); shots.len()];
    for _ in 0..args.rounds {
        for (k, (_, argv)) in shots.iter().enumerate() {
            check_stop()?;
            let (w, m, c) = one_shot(argv)?;
            walls[k].push(w);
            rss[k].extend(m);
            cpu[k].extend(c);
        }
    }
    println!(
        "\nOne-shot batch runs, median of {} interleaved rounds (range):\n",
        args.rounds
    );
    println!("| run | wall ms | range | CPU ms (user + system) | peak RSS (MiB) |");
    println!("|---|---:|---:|---:|---:|");
    for (k, (label, _)) in shots.iter().enumerate() {
        let mut w = walls[k].clone();
        let mw = median(&mut w);
        // the round of the median CPU time, and how it splits (user-space
        // work and system calls weigh differently under an emulator)
        let mut c = cpu[k].clone();
        c.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
        let mc = c.get(c.len() / 2).map_or("-".into(), |(u, s)| {
            format!("{:.0} ({:.0} + {:.0})", (u + s) * 1e3, u * 1e3, s * 1e3)
        });
        let peak = rss[k]
            .iter()
            .max()
            .map_or("-".into(), |kib| format!("{:.1}", *kib as f64 / 1024.0));
        println!(
            "| {label} | **{}** | {} | {mc} | {peak} |",
            fmt_ms(mw),
            range_ms(&w),
        );
    }
    if args.syscalls {
        // cgtop's first one-shot run, and systemd-cgtop's beside it
        for (i, (label, argv)) in shots.iter().enumerate() {
            if i == 1 {
                continue;
            }
            let calls = syscalls(argv)?;
            let total: u64 = calls.iter().map(|c| c.1).sum();
            let top: Vec<String> = calls
                .iter()
                .take(8)
                .map(|(n, c)| format!("{n} {c}"))
                .collect();
            let watches = calls
                .iter()
                .find(|c| c.0 == "inotify_add_watch")
                .map_or(0, |c| c.1);
            println!(
                "\nSystem calls of {label} (strace -c -f): {total} in all; {}; inotify_add_watch {watches}",
                top.join(", ")
            );
        }
    }
    drop(tree);
    Ok(())
}

fn main() -> Result<()> {
    let args = Args::parse();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let _ = STOP.set(stop);
    let cgtop = args
        .cgtop
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cgtop")));
    let cgtop = cgtop.to_string_lossy().into_owned();
    println!("# Start-up of {cgtop}");
    let u = rustix::system::uname();
    println!(
        "\n{} {}, load average {}",
        u.nodename().to_string_lossy(),
        u.release().to_string_lossy(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let _ = std::io::stdout().flush();
    if args.no_tree {
        run_size(&args, None, &cgtop)?;
    } else {
        for &n in &args.groups {
            run_size(&args, Some(n), &cgtop)?;
        }
    }
    Ok(())
}
