//! Recordings on disk (`cgtop record`, `cgtop replay`): the records of
//! `model::time::record` in zstd frames, written safely as root and read back
//! from any bytes. ARCHITECTURE.md ("Recordings") has the format.
//!
//! - [`Recorder`] writes one sample per refresh and flushes it (a zstd
//!   flush makes everything before it decodable: a crash loses at most
//!   the sample being written), starts a new frame every
//!   [`FRAME_SECS`] or [`FRAME_SAMPLES`], and rotates or stops at a size
//!   cap.
//! - [`Reader`] decodes frames from a file, skipping to the next frame
//!   past damage, and gives every complete sample of a truncated one.
//! - [`Replay`] turns the samples back into `Refresh`es through the same
//!   rate step the collector uses (`model::tree::rates::Rater`).

use super::collector::Refresh;
use crate::model::time::record::{
    split_record, Busy, Decoder, Encoder, GroupLimits, Header, Record, Sample, SampleRef,
};
use crate::model::tree::rates::Rater;
use crate::render::severity::Limits;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A new frame (a keyframe) at least this often...
pub const FRAME_SECS: Duration = Duration::from_secs(60);
/// ...or after this many samples, whichever comes first (at `-d 0.1`, a
/// minute would be 600 samples to decode before the first of a frame).
pub const FRAME_SAMPLES: usize = 120;
/// zstd's level: 3 is its default; higher levels cost more CPU per
/// sample for little (see BENCHMARKS.md, "Recording").
pub const LEVEL: i32 = 3;

/// The most of one frame's compressed bytes a reader keeps for a resync.
const MAX_KEPT_FRAME: usize = 64 << 20;

/// The recorder starts a new frame once the open one holds this many
/// decoded bytes (besides [`FRAME_SECS`] and [`FRAME_SAMPLES`]), so that
/// a frame of ours decodes to at most this plus its last events record
/// and sample: [`MAX_FRAME_DECODED`].
pub const FRAME_BYTES: usize = 64 << 20;

/// The most decoded bytes a reader takes from one frame: past it the
/// frame is damage and the reader skips to the next one. zstd decodes up
/// to about 43,000 bytes from one compressed byte (a run-length block: 3
/// bytes for 128 KiB), so without it a few KB of zstd are gigabytes to
/// walk through.
pub const MAX_FRAME_DECODED: usize =
    FRAME_BYTES + 2 * crate::model::time::record::MAX_RECORD + (1 << 20);

/// The most records of unknown kinds a reader skips in a frame before its
/// header, and in a frame in all. Our frames begin with the header and
/// hold none (a newer version may add kinds, a few a sample); a file
/// that decodes to anything else (the zstd of a file of zeros decodes to
/// a 2-byte unknown record per 2 bytes) is not ours, and each frame of it
/// stops here, as damage.
pub const MAX_UNKNOWN_BEFORE_HEADER: usize = 8;
/// See [`MAX_UNKNOWN_BEFORE_HEADER`]: 34 a sample at [`FRAME_SAMPLES`].
pub const MAX_UNKNOWN_PER_FRAME: usize = 4096;

/// The input given to zstd at the start of a frame: at most a frame
/// header (zstd then says how much its first block needs).
const FRAME_HEADER_HINT: usize = 18;

/// The largest window a reader gives a frame (8 MiB; zstd's own limit is
/// 128 MiB): a frame header asks for its window, and the decoder
/// allocates it. Our frames at [`LEVEL`] use 2 MiB (zstd's window for
/// levels 3 to 9 of a stream of unknown size is at most 4 MiB); a frame
/// asking for more is not ours and is skipped as damage.
pub const WINDOW_LOG_MAX: u32 = 23;

/// The first bytes of a zstd frame (where a reader picks up after damage).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// What to do at the size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtCap {
    /// FILE becomes FILE.1 (replacing an older one) and a new FILE begins.
    Rotate,
    /// The recording ends.
    Stop,
}

/// How the recorder writes.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub path: PathBuf,
    /// Add to an existing recording (a regular file of ours) rather than
    /// refuse it.
    pub append: bool,
    /// The size cap of FILE in bytes.
    pub max_size: Option<u64>,
    pub at_cap: AtCap,
    /// How often a new frame (a keyframe) begins: [`FRAME_SECS`] for
    /// `cgtop record` (or [`FRAME_SAMPLES`] samples, whichever first).
    pub frame_every: Duration,
}

/// Whether the recorder goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Ok,
    /// At the cap with [`AtCap::Stop`]: nothing more is written.
    Full,
}

/// Why a recording cannot be opened.
fn refuse(path: &Path, why: &str) -> io::Error {
    io::Error::other(format!(
        "{}: {why}",
        crate::model::tree::text::escape(path.as_os_str().as_encoded_bytes())
    ))
}

/// Opens FILE for writing without following a symlink and without
/// truncating anything: a new file (O_CREAT|O_EXCL, mode 0600), or with
/// `append` an existing regular file owned by us with one link. Returns
/// the file and its length.
pub fn open_output(path: &Path, append: bool) -> io::Result<(File, u64)> {
    use rustix::fs::{Mode, OFlags};
    let base = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
    match rustix::fs::open(
        path,
        base | OFlags::CREATE | OFlags::EXCL,
        Mode::from(0o600),
    ) {
        Ok(fd) => return Ok((File::from(fd), 0)),
        Err(rustix::io::Errno::EXIST) if append => {}
        Err(rustix::io::Errno::EXIST) => {
            return Err(refuse(
                path,
                "exists; give --append to add to it, or another name",
            ))
        }
        Err(e) => return Err(refuse(path, &io::Error::from(e).to_string())),
    }
    // O_NONBLOCK: a FIFO put there must not hang the open; read and
    // write, to look at its first bytes before adding to it
    let fd = rustix::fs::open(
        path,
        (base - OFlags::WRONLY) | OFlags::RDWR | OFlags::APPEND | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => refuse(path, "is a symbolic link: not followed"),
        e => refuse(path, &io::Error::from(e).to_string()),
    })?;
    let st = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(refuse(path, "not a regular file"));
    }
    if st.st_uid != rustix::process::geteuid().as_raw() {
        return Err(refuse(path, "owned by another user: not appended to"));
    }
    if st.st_nlink != 1 {
        return Err(refuse(path, "has other hard links: not appended to"));
    }
    // a recording begins with a zstd frame: --append to a file that does
    // not (a typo naming /etc/passwd as root) adds nothing to it
    if st.st_size > 0 {
        let mut magic = [0u8; 4];
        let n = rustix::io::pread(&fd, &mut magic, 0).map_err(io::Error::from)?;
        if n < 4 || magic != ZSTD_MAGIC {
            return Err(refuse(path, "is not a cgtop recording: not appended to"));
        }
    }
    let fd = {
        // back to blocking writes
        let fl = rustix::fs::fcntl_getfl(&fd).map_err(io::Error::from)?;
        rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK).map_err(io::Error::from)?;
        fd
    };
    Ok((File::from(fd), st.st_size.max(0) as u64))
}

/// The file, counting what is written to it.
struct Sink {
    file: File,
    len: u64,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Writes a recording.
pub struct Recorder {
    cfg: RecordConfig,
    header: Header,
    enc: Encoder,
    /// The open frame, or the file between frames.
    frame: Option<zstd::stream::write::Encoder<'static, Sink>>,
    idle: Option<Sink>,
    /// When the open frame began (its first sample's `at`), and the file's
    /// length then.
    frame_at: Duration,
    frame_start_len: u64,
    /// The open frame's decoded bytes (a new frame past [`FRAME_BYTES`]).
    frame_bytes: usize,
    /// The compressed size of the last whole frame and of the last sample.
    last_frame_len: u64,
    last_sample_len: u64,
    buf: Vec<u8>,
    /// Samples written, in all files.
    pub samples: u64,
    /// Times FILE was rotated.
    pub rotations: u64,
    /// Stopped at the cap (`AtCap::Stop`): nothing more is written.
    full: bool,
}

impl Recorder {
    /// Opens FILE (see [`open_output`]) for a recording described by
    /// `header`.
    pub fn create(cfg: RecordConfig, header: Header) -> io::Result<Self> {
        let (file, len) = open_output(&cfg.path, cfg.append)?;
        Ok(Self {
            cfg,
            header,
            enc: Encoder::new(),
            frame: None,
            idle: Some(Sink { file, len }),
            frame_at: Duration::ZERO,
            frame_start_len: len,
            frame_bytes: 0,
            last_frame_len: 0,
            last_sample_len: 0,
            buf: Vec::new(),
            samples: 0,
            rotations: 0,
            full: false,
        })
    }

    fn len(&self) -> u64 {
        match (&self.frame, &self.idle) {
            (Some(f), _) => f.get_ref().len,
            (None, Some(s)) => s.len,
            (None, None) => 0,
        }
    }

    /// Ends the open frame (its epilogue written and flushed).
    fn end_frame(&mut self) -> io::Result<()> {
        if let Some(f) = self.frame.take() {
            let mut sink = f.finish()?;
            sink.flush()?;
            self.last_frame_len = sink.len - self.frame_start_len;
            self.idle = Some(sink);
        }
        Ok(())
    }

    /// FILE -> FILE.1, and a new FILE.
    fn rotate(&mut self) -> io::Result<()> {
        self.end_frame()?;
        let mut old = self.cfg.path.clone().into_os_string();
        old.push(".1");
        // rename(2) replaces FILE.1's own entry, whatever it is; it
        // follows no link
        std::fs::rename(&self.cfg.path, &old)?;
        let (file, len) = open_output(&self.cfg.path, false)?;
        self.idle = Some(Sink { file, len });
        self.frame_start_len = len;
        self.rotations += 1;
        Ok(())
    }

    /// Writes one refresh (and the processes of its busiest groups) and
    /// flushes it.
    pub fn write(&mut self, r: &Refresh, busy: &[Busy]) -> io::Result<Written> {
        self.write_with_events(r, busy, &[])
    }

    /// [`Recorder::write`] with the events seen since the sample before,
    /// written just before this sample (`model::time::record::TAG_EVENTS`).
    pub fn write_with_events(
        &mut self,
        r: &Refresh,
        busy: &[Busy],
        events: &[crate::model::time::events::Event],
    ) -> io::Result<Written> {
        if self.full {
            return Ok(Written::Full);
        }
        let at = r.snapshot.at;
        let new_frame = self.frame.is_none()
            || self.enc.samples_in_frame >= FRAME_SAMPLES
            || self.frame_bytes >= FRAME_BYTES
            || self.enc.table_full()
            || at.saturating_sub(self.frame_at) >= self.cfg.frame_every;
        if let Some(max) = self.cfg.max_size {
            let len = self.len();
            // what this sample will add: a frame's worth when one starts
            // (the last frame's size, the open one's so far), else about
            // the last sample's
            let next = if new_frame {
                self.last_frame_len.max(len - self.frame_start_len)
            } else {
                self.last_sample_len
            };
            if len > 0 && len + next > max {
                match self.cfg.at_cap {
                    AtCap::Stop => {
                        self.end_frame()?;
                        self.full = true;
                        return Ok(Written::Full);
                    }
                    AtCap::Rotate => self.rotate()?,
                }
            }
        }
        self.buf.clear();
        if new_frame || self.frame.is_none() {
            self.end_frame()?;
            let sink = self
                .idle
                .take()
                .ok_or_else(|| io::Error::other("recording closed"))?;
            self.frame_start_len = sink.len;
            self.frame = Some(zstd::stream::write::Encoder::new(sink, LEVEL)?);
            self.frame_at = at;
            self.frame_bytes = 0;
            self.enc.start_frame(&self.header, &mut self.buf);
        }
        crate::model::time::record::put_events(&mut self.buf, events);
        let limits: Vec<GroupLimits> = r.limits.iter().map(group_limits).collect();
        self.enc.sample(
            &SampleRef {
                snapshot: &r.snapshot,
                limits: &limits,
                devices: &r.devices,
                busy,
            },
            &mut self.buf,
        );
        let before = self.len();
        let keyframe = self.enc.samples_in_frame == 1;
        let f = self
            .frame
            .as_mut()
            .ok_or_else(|| io::Error::other("recording closed"))?;
        f.write_all(&self.buf)?;
        f.flush()?;
        self.frame_bytes += self.buf.len();
        // the estimate of the next sample: twice the last delta sample (a
        // keyframe says nothing of the samples after it)
        if !keyframe {
            self.last_sample_len = 2 * (self.len() - before);
        }
        self.samples += 1;
        Ok(Written::Ok)
    }

    /// Ends the recording: the open frame is finished.
    pub fn finish(mut self) -> io::Result<()> {
        self.end_frame()?;
        if let Some(s) = self.idle.take() {
            s.file.sync_data()?;
        }
        Ok(())
    }
}

fn group_limits(l: &Limits) -> GroupLimits {
    GroupLimits {
        memory: l.memory,
        cpu: l.cpu,
        pids: l.pids,
    }
}

fn limits_of(l: &GroupLimits) -> Limits {
    Limits {
        memory: l.memory,
        cpu: l.cpu,
        pids: l.pids,
    }
}

/// Reads the records of a recording from any bytes: zstd frames, one after
/// another. Damage (a bit flipped, a frame cut short and another appended
/// after a crash) loses the rest of that frame: the reader looks for the
/// next frame's magic and goes on; a truncated end gives every complete
/// record before it.
pub struct Reader<R> {
    input: R,
    zstd: zstd::stream::raw::Decoder<'static>,
    inbuf: Vec<u8>,
    ipos: usize,
    /// Where the frame being decoded began in `inbuf`: after damage the
    /// next frame is looked for from there (the decoder may have taken a
    /// frame appended after a cut one for its own bytes).
    frame_start: usize,
    /// A frame ended: what is left in `out` once its records are taken
    /// is damage (a frame holds whole records).
    frame_ended: bool,
    /// How much input zstd wants next.
    hint: usize,
    eof: bool,
    /// Decompressed bytes; those from `opos` on are not yet made into
    /// records (a cursor, not a drain per record: draining a 2-byte
    /// record off a 128 KiB buffer is a copy of the buffer each time).
    out: Vec<u8>,
    opos: usize,
    /// The frame being decoded: its decoded bytes (at most
    /// [`MAX_FRAME_DECODED`]), whether its header was read, and its
    /// records of unknown kinds.
    frame_decoded: usize,
    frame_header: bool,
    frame_unknown: usize,
    /// zstd's output buffer (a block is at most 128 KiB).
    tmp: Vec<u8>,
    /// Set after damage: drop output until the next frame begins.
    decoder: Decoder,
    /// Places where damage was skipped.
    pub damaged: usize,
    /// Records read, of kinds this version does not know (skipped).
    pub unknown: usize,
    /// Bytes decompressed in all (the work done: at most
    /// [`MAX_FRAME_DECODED`] a frame).
    pub decoded: u64,
}

impl<R: Read> Reader<R> {
    pub fn new(input: R) -> io::Result<Self> {
        let mut zstd = zstd::stream::raw::Decoder::new()?;
        zstd.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(WINDOW_LOG_MAX))?;
        Ok(Self {
            input,
            zstd,
            inbuf: Vec::new(),
            ipos: 0,
            frame_start: 0,
            frame_ended: false,
            hint: FRAME_HEADER_HINT,
            eof: false,
            out: Vec::new(),
            opos: 0,
            frame_decoded: 0,
            frame_header: false,
            frame_unknown: 0,
            tmp: vec![0; 128 << 10],
            decoder: Decoder::new(),
            damaged: 0,
            unknown: 0,
            decoded: 0,
        })
    }

    /// The header of the frame being read.
    pub fn header(&self) -> Option<&Header> {
        self.decoder.header()
    }

    /// More compressed input; false at the end.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        // keep the frame's bytes (up to a cap: a hostile frame may be
        // endless) for a resync
        // frame_start <= ipos <= inbuf.len() (resync keeps them so); the
        // clamps keep the drain in range whatever a damaged file did
        self.ipos = self.ipos.min(self.inbuf.len());
        self.frame_start = self.frame_start.min(self.ipos);
        if self.ipos - self.frame_start > MAX_KEPT_FRAME {
            self.frame_start = self.ipos;
        }
        self.inbuf.drain(..self.frame_start);
        self.ipos -= self.frame_start;
        self.frame_start = 0;
        let old = self.inbuf.len();
        self.inbuf.resize(old + (128 << 10), 0);
        let n = loop {
            match self.input.read(&mut self.inbuf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.inbuf.truncate(old);
                    return Err(e);
                }
            }
        };
        self.inbuf.truncate(old + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Damage: forget the frame, skip to the next zstd frame's magic.
    fn resync(&mut self) -> io::Result<()> {
        use zstd::stream::raw::Operation;
        self.damaged += 1;
        self.forget_frame();
        self.zstd.reinit()?;
        self.hint = FRAME_HEADER_HINT;
        // the frame may have begun at the very end of what was read (a
        // frame that ended there, whose records were damage): the search
        // starts at most at the end, never past it
        let mut from = (self.frame_start + 1).min(self.inbuf.len());
        loop {
            if let Some(k) = self
                .inbuf
                .get(from..)
                .and_then(|b| b.windows(4).position(|w| w == ZSTD_MAGIC))
            {
                self.ipos = from + k;
                self.frame_start = self.ipos;
                return Ok(());
            }
            // keep the last 3 bytes: a magic may straddle reads
            let keep = self.inbuf.len().saturating_sub(3).max(from);
            self.ipos = keep;
            self.frame_start = keep;
            from = 0;
            if !self.fill()? {
                self.ipos = self.inbuf.len();
                self.frame_start = self.ipos;
                return Ok(());
            }
        }
    }

    /// Forgets the decoded state of the frame being read.
    fn forget_frame(&mut self) {
        self.out.clear();
        self.opos = 0;
        self.decoder.reset();
        self.new_frame();
    }

    /// A frame begins: nothing decoded from it yet.
    fn new_frame(&mut self) {
        self.frame_decoded = 0;
        self.frame_header = false;
        self.frame_unknown = 0;
    }

    /// The next record; `None` at the end of the input.
    pub fn next_record(&mut self) -> io::Result<Option<Record>> {
        use zstd::stream::raw::Operation;
        loop {
            // a whole record already decompressed?
            match split_record(&self.out[self.opos..]) {
                Ok(Some((tag, payload, used))) => {
                    let rec = self.decoder.record(tag, payload);
                    self.opos += used;
                    match rec {
                        Ok(Record::Unknown(_)) => {
                            self.unknown += 1;
                            self.frame_unknown += 1;
                            let cap = if self.frame_header {
                                MAX_UNKNOWN_PER_FRAME
                            } else {
                                MAX_UNKNOWN_BEFORE_HEADER
                            };
                            if self.frame_unknown > cap {
                                self.resync()?;
                            }
                        }
                        Ok(r) => {
                            if matches!(r, Record::Header(_)) {
                                self.frame_header = true;
                            }
                            return Ok(Some(r));
                        }
                        // a record that does not decode: the frame's
                        // state is lost with it
                        Err(_) => self.resync()?,
                    }
                    continue;
                }
                Ok(None) => {
                    if std::mem::take(&mut self.frame_ended) {
                        if self.opos < self.out.len() {
                            self.damaged += 1;
                            self.forget_frame();
                        } else {
                            self.new_frame();
                        }
                    }
                }
                Err(_) => {
                    self.resync()?;
                    continue;
                }
            }
            if self.ipos >= self.inbuf.len() && !self.fill()? {
                if self.frame_start + 4 <= self.inbuf.len() {
                    // the end inside a frame: cut short, or damaged so that
                    // the decoder took what follows for its own. A frame
                    // after it (appended after a crash) is looked for.
                    self.resync()?;
                    if self.ipos < self.inbuf.len() {
                        continue;
                    }
                }
                // the end: a partial record is a truncated last frame
                return Ok(None);
            }
            // at most what zstd asks for next (a block): an error then loses
            // only the damaged block, not the good ones decoded with it
            let end = self.inbuf.len().min(self.ipos + self.hint.max(1));
            match self
                .zstd
                .run_on_buffers(&self.inbuf[self.ipos..end], &mut self.tmp)
            {
                Ok(st) => {
                    self.hint = if st.remaining == 0 {
                        FRAME_HEADER_HINT
                    } else {
                        st.remaining
                    };
                    self.ipos += st.bytes_read;
                    // what was made into records goes once per block
                    self.out.drain(..self.opos);
                    self.opos = 0;
                    self.out.extend_from_slice(&self.tmp[..st.bytes_written]);
                    self.frame_decoded += st.bytes_written;
                    self.decoded += st.bytes_written as u64;
                    if self.frame_decoded > MAX_FRAME_DECODED {
                        self.resync()?;
                        continue;
                    }
                    if st.remaining == 0 {
                        // a frame ended: the next begins here
                        self.frame_start = self.ipos;
                        self.frame_ended = true;
                    }
                    if st.bytes_read == 0 && st.bytes_written == 0 && !self.fill()? {
                        return Ok(None);
                    }
                }
                Err(_) => self.resync()?,
            }
        }
    }

    /// The next sample (headers are taken in passing).
    /// The next sample (headers are taken in passing), with the events
    /// recorded just before it.
    pub fn next_sample(&mut self) -> io::Result<Option<Sample>> {
        use crate::model::time::record::{event_bytes, MAX_EVENTS, MAX_EVENT_BYTES};
        let (mut events, mut bytes) = (Vec::new(), 0usize);
        loop {
            match self.next_record()? {
                None => return Ok(None),
                Some(Record::Sample(mut s)) => {
                    s.events = events;
                    return Ok(Some(*s));
                }
                Some(Record::Events(e)) => {
                    // bounded as the app's list is, whatever a file says
                    for e in e {
                        bytes += event_bytes(&e);
                        if events.len() >= MAX_EVENTS || bytes > MAX_EVENT_BYTES {
                            break;
                        }
                        events.push(e);
                    }
                }
                Some(_) => {}
            }
        }
    }
}

/// Every sample of a recording held in memory (tests, the proptest):
/// what [`Reader`] gives, and how many places were damaged.
pub fn read_all(bytes: &[u8]) -> (Vec<Sample>, usize) {
    let Ok(mut r) = Reader::new(bytes) else {
        return (Vec::new(), 0);
    };
    let mut out = Vec::new();
    while let Ok(Some(s)) = r.next_sample() {
        out.push(s);
    }
    (out, r.damaged)
}

/// One refresh of a replay.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// Made by the same rate step as the live one; no inspection, no
    /// machine load, no protection (none is recorded).
    pub refresh: Refresh,
    /// The processes of the busiest groups at that moment.
    pub busy: Vec<Busy>,
    /// The first refresh of a recorded run (no rates yet: batch output
    /// does not print it, as the live run did not).
    pub first: bool,
    /// The time since the refresh before (the window of the rates).
    pub interval: Duration,
    /// The events seen since the refresh before, as recorded.
    pub events: Vec<crate::model::time::events::Event>,
}

/// A recording opened for replay: its header, and its refreshes in order
/// (an iterator). The TUI's time travel is to take these.
pub struct Replay {
    reader: Reader<io::BufReader<File>>,
    header: Header,
    /// The header of the run whose samples come now (a file appended to
    /// holds several runs; each starts its rates anew).
    run: Header,
    rater: Rater,
    prev_at: Option<Duration>,
    pending: Option<Sample>,
    /// The first read error, if one ended the replay early.
    pub error: Option<io::Error>,
}

impl Replay {
    /// Opens FILE and reads up to its first sample.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = open_input(path)?;
        // a recording begins with a zstd frame (as --append checks): any
        // other file is refused at once, not searched to its end for one
        let mut magic = [0u8; 4];
        let n = std::os::unix::fs::FileExt::read_at(&file, &mut magic, 0)?;
        if n < 4 || magic != ZSTD_MAGIC {
            return Err(refuse(
                path,
                "not a cgtop recording (it does not begin with a zstd frame)",
            ));
        }
        let mut reader = Reader::new(io::BufReader::new(file))?;
        let first = reader.next_sample()?;
        let header = reader.header().cloned().ok_or_else(|| {
            let why = if reader.damaged > 0 {
                "no readable sample: not a cgtop recording, or damaged throughout"
            } else {
                "no sample in it"
            };
            refuse(path, why)
        })?;
        let first = first.ok_or_else(|| refuse(path, "no sample in it"))?;
        Ok(Self {
            rater: Rater::new(Some(header.host.ncpus)),
            run: header.clone(),
            header,
            reader,
            prev_at: None,
            pending: Some(first),
            error: None,
        })
    }

    /// The machine and the run, from the first frame.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The header of the run of the last refresh given.
    pub fn run_header(&self) -> &Header {
        &self.run
    }

    /// Places where damage was skipped so far.
    pub fn damaged(&self) -> usize {
        self.reader.damaged
    }

    fn next_sample(&mut self) -> Option<Sample> {
        if let Some(s) = self.pending.take() {
            return Some(s);
        }
        match self.reader.next_sample() {
            Ok(s) => s,
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

/// Opens a recording to read: a regular file only. O_NONBLOCK: a FIFO (or
/// a device) put at FILE must not hang the open; it is refused once open.
fn open_input(path: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(|e| {
        // the file's name and the kernel's words, once
        io::Error::new(
            io::Error::from(e).kind(),
            format!(
                "cannot open {}: {}",
                crate::model::tree::text::escape(path.as_os_str().as_encoded_bytes()),
                crate::model::write::errno::strerror(e)
            ),
        )
    })?;
    let st = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(refuse(path, "not a regular file"));
    }
    let fl = rustix::fs::fcntl_getfl(&fd).map_err(io::Error::from)?;
    rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK).map_err(io::Error::from)?;
    Ok(File::from(fd))
}

/// Whether two headers are of the same run (the frames of one recording
/// repeat its header; `--append` adds another run).
fn same_run(a: &Header, b: &Header) -> bool {
    a.start_unix == b.start_unix && a.start == b.start && a.host == b.host
}

impl Iterator for Replay {
    type Item = Replayed;

    fn next(&mut self) -> Option<Replayed> {
        let s = self.next_sample()?;
        if let Some(h) = self.reader.header() {
            if !same_run(h, &self.run) {
                self.run = h.clone();
                self.rater = Rater::new(Some(h.host.ncpus));
                self.prev_at = None;
            }
        }
        // a sample from before the last one (damage, or a clock that
        // went back) starts the rates anew, as a new run would
        if self.prev_at.is_some_and(|p| s.snapshot.at < p) {
            self.rater = Rater::new(Some(self.run.host.ncpus));
            self.prev_at = None;
        }
        let first = self.prev_at.is_none();
        let interval = self
            .prev_at
            .map_or(Duration::ZERO, |p| s.snapshot.at.saturating_sub(p));
        self.prev_at = Some(s.snapshot.at);
        Some(Replayed {
            refresh: refresh_of(&mut self.rater, s.snapshot, s.limits.as_deref(), s.devices),
            busy: s.busy,
            first,
            interval,
            events: s.events,
        })
    }
}

/// A recorded snapshot through the collector's rate step.
pub fn refresh_of(
    stepper: &mut Rater,
    snapshot: crate::model::Snapshot,
    limits: Option<&[GroupLimits]>,
    devices: Vec<crate::model::DeviceInfo>,
) -> Refresh {
    let (rates, throttling) = stepper.step(&snapshot);
    Refresh {
        snapshot,
        rates,
        throttling,
        inspection: None,
        devices: Arc::new(devices),
        kept_fds: 0,
        events_since_start: std::collections::HashMap::new(),
        protected: None,
        machine: None,
        limits: limits
            .map(|l| l.iter().map(limits_of).collect())
            .unwrap_or_default(),
        events_seed: None,
    }
}

/// How many groups' processes a sample keeps: the busiest leaves by CPU.
/// Five is what the eye takes in at an incident (the top of htop's list),
/// and it keeps the processes under a byte a group a sample at 1,000
/// groups (BENCHMARKS.md); a slice's CPU is its children's, so only
/// groups without children in the tree count.
pub const BUSY_GROUPS: usize = 5;
/// At most this many processes of each (the most CPU first).
pub const BUSY_PROCS: usize = 32;

/// Reads the processes of the busiest groups of each refresh.
pub struct BusyReader {
    hier: Arc<super::hier::Hier>,
    procs: super::procs::ProcReader,
}

impl BusyReader {
    pub fn new(hier: Arc<super::hier::Hier>, procs: super::procs::ProcReader) -> Self {
        Self { hier, procs }
    }

    /// The processes of `r`'s busiest groups ([`BUSY_GROUPS`]).
    pub fn read(&mut self, r: &Refresh) -> Vec<Busy> {
        let groups = busiest(r, BUSY_GROUPS);
        let mut pids: Vec<(usize, u32)> = Vec::new();
        for (k, g) in groups.iter().enumerate() {
            let rel = super::hier::file_rel(g, crate::cgroupfs::files::PROCS);
            if let Ok(t) = self.hier.read_text(&rel) {
                pids.extend(
                    t.lines()
                        .filter_map(|l| l.trim().parse::<u32>().ok())
                        .take(crate::model::time::record::MAX_PROCS)
                        .map(|p| (k, p)),
                );
            }
        }
        // one read for all: the reader keeps CPU times between its calls
        let all: Vec<u32> = pids.iter().map(|&(_, p)| p).collect();
        let infos = self.procs.read(&all, r.snapshot.at.as_secs_f64());
        let group_of: std::collections::HashMap<u32, usize> =
            pids.iter().map(|&(k, p)| (p, k)).collect();
        let mut out: Vec<Busy> = groups.into_iter().map(|g| (g, Vec::new())).collect();
        for p in infos {
            if let Some(&k) = group_of.get(&p.pid) {
                out[k].1.push(p);
            }
        }
        for (_, procs) in &mut out {
            procs.sort_by(|a, b| {
                b.cpu_pct
                    .unwrap_or(0.0)
                    .total_cmp(&a.cpu_pct.unwrap_or(0.0))
                    .then(a.pid.cmp(&b.pid))
            });
            procs.truncate(BUSY_PROCS);
        }
        out.retain(|(_, p)| !p.is_empty());
        out
    }
}

/// The `n` groups without children that used the most CPU in `r` (none
/// that used none).
pub fn busiest(r: &Refresh, n: usize) -> Vec<crate::model::GroupPath> {
    let parents: std::collections::HashSet<crate::model::GroupPath> = r
        .snapshot
        .groups
        .iter()
        .filter_map(|g| g.path.parent())
        .collect();
    let mut v: Vec<(f64, &crate::model::GroupPath)> = r
        .snapshot
        .groups
        .iter()
        .zip(&r.rates)
        .filter(|(g, _)| !parents.contains(&g.path))
        .filter_map(|(g, rt)| Some((rt.cpu_pct.filter(|&c| c > 0.0)?, &g.path)))
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    v.into_iter().take(n).map(|(_, p)| p.clone()).collect()
}
