//! `/proc/PID/stat` text -> its fields ([`StatLine`], the one parser of
//! it), and the fields the process list uses ([`ProcStat`]). The guard
//! (`model::write::guard`) and the kill fallback (`source::writer`) read their
//! fields from a [`StatLine`] too.
//!
//! The command name sits between the first `(` and the LAST `)`: a process
//! names itself (prctl, or the file it exec'd), so the name may hold
//! spaces, parentheses, escapes and bytes that are not UTF-8; it is kept
//! as bytes and counted from the end. Fields are numbered as in proc(5).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

/// One /proc/PID/stat text split into its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatLine<'a> {
    /// (1) pid.
    pub pid: u32,
    /// (2) the command name's bytes, without its parentheses.
    pub comm: &'a [u8],
    /// Fields 3 and on.
    rest: Vec<&'a str>,
}

impl<'a> StatLine<'a> {
    /// Splits the text; `None` without a pid and a parenthesised name, or
    /// when what follows the name is not text.
    pub fn parse(text: &'a [u8]) -> Option<Self> {
        let open = text.iter().position(|&b| b == b'(')?;
        let close = text.iter().rposition(|&b| b == b')')?;
        let pid = std::str::from_utf8(text.get(..open)?)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let comm = text.get(open + 1..close)?;
        let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
        Some(Self {
            pid,
            comm,
            rest: rest.split_ascii_whitespace().collect(),
        })
    }

    /// Field `n` (numbered as in proc(5), from 3) as text.
    pub fn field(&self, n: usize) -> Option<&'a str> {
        self.rest.get(n.checked_sub(3)?).copied()
    }

    /// Field `n` as a number of type `T`; `None` when missing, negative
    /// for an unsigned `T`, or out of range.
    pub fn number<T: std::str::FromStr>(&self, n: usize) -> Option<T> {
        self.field(n)?.parse().ok()
    }
}

/// What the process list takes from /proc/PID/stat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// (1) pid.
    pub pid: u32,
    /// (2) the command name's bytes, without its parentheses.
    pub comm: Vec<u8>,
    /// (3) R, S, D, Z, T, ...
    pub state: char,
    /// (14) and (15): user and system CPU time in clock ticks.
    pub utime: u64,
    pub stime: u64,
    /// (22) start time in clock ticks since boot: with the pid, the
    /// process's identity (a reused pid starts later).
    pub starttime: u64,
    /// (24) resident set size in pages.
    pub rss: u64,
}

impl ProcStat {
    /// Parses the text; `None` when a field is missing or not a number.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let line = StatLine::parse(text)?;
        let mut state = line.field(3)?.chars();
        let st = state.next()?;
        if state.next().is_some() {
            return None;
        }
        Some(Self {
            pid: line.pid,
            comm: line.comm.to_vec(),
            state: st,
            utime: line.number(14)?,
            stime: line.number(15)?,
            starttime: line.number(22)?,
            rss: line.number(24)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as Linux 6.x prints it, for `bash` (pid 1234).
    const BASH: &str = "1234 (bash) S 1200 1234 1190 34816 1234 4194560 2317 9071 0 3 \
                        12 7 30 11 20 0 1 0 81234 9043968 1310 18446744073709551615 1 1 0 0 0 \
                        0 65536 3686404 1266761467 0 0 0 17 3 0 0 0 0 0";

    #[test]
    fn a_real_line() {
        assert_eq!(
            ProcStat::parse(BASH.as_bytes()),
            Some(ProcStat {
                pid: 1234,
                comm: b"bash".to_vec(),
                state: 'S',
                utime: 12,
                stime: 7,
                starttime: 81234,
                rss: 1310,
            })
        );
    }

    #[test]
    fn a_hostile_name_is_bytes_up_to_the_last_paren() {
        let line = BASH.replace("(bash)", "(a) S 1 (x\x1b]0;t\x07)");
        let mut bytes = line.into_bytes();
        // a byte that is not UTF-8 inside the name
        let at = bytes.iter().position(|&b| b == b'x').unwrap();
        bytes[at] = 0xff;
        let s = ProcStat::parse(&bytes).unwrap();
        assert_eq!(s.comm, b"a) S 1 (\xff\x1b]0;t\x07");
        assert_eq!((s.pid, s.state, s.utime, s.rss), (1234, 'S', 12, 1310));
        // an empty name, and a newline in one
        let s = ProcStat::parse(BASH.replace("(bash)", "(\n)").as_bytes()).unwrap();
        assert_eq!(s.comm, b"\n");
        assert_eq!(
            ProcStat::parse(BASH.replace("(bash)", "()").as_bytes())
                .unwrap()
                .comm,
            b""
        );
    }

    #[test]
    fn fields_by_number() {
        let l = StatLine::parse(BASH.as_bytes()).unwrap();
        assert_eq!((l.pid, l.comm), (1234, &b"bash"[..]));
        assert_eq!(l.field(3), Some("S"));
        assert_eq!(l.number::<u32>(4), Some(1200));
        assert_eq!(l.number::<i64>(8), Some(1234));
        assert_eq!(l.number::<u64>(9), Some(4_194_560));
        assert_eq!(l.field(2), None, "the name is not a field here");
        assert_eq!(l.field(0), None);
        assert_eq!(l.field(200), None);
        // a line cut after the terminal: its fields so far
        let short = StatLine::parse(b"9 (cargo) S 8 9 0 0 -1").unwrap();
        assert_eq!(short.number::<i32>(8), Some(-1));
        assert_eq!(short.number::<u32>(8), None, "negative is not unsigned");
        assert_eq!(short.field(9), None);
    }

    #[test]
    fn short_or_broken_lines_are_none() {
        assert_eq!(ProcStat::parse(b""), None);
        assert_eq!(ProcStat::parse(b"garbage"), None);
        assert_eq!(ProcStat::parse(b"1 (a) S 1 2 3"), None);
        assert_eq!(ProcStat::parse(b") 1 (a"), None);
        assert_eq!(
            ProcStat::parse(BASH.replace("1234 (", "x (").as_bytes()),
            None
        );
        assert_eq!(
            ProcStat::parse(BASH.replace(" S ", " SS ").as_bytes()),
            None
        );
        // a negative rss is not a page count
        let neg = BASH.replace(" 1310 ", " -1 ");
        assert_eq!(ProcStat::parse(neg.as_bytes()), None);
        // a field past u64
        let big = BASH.replace(" 12 7 ", " 99999999999999999999999 7 ");
        assert_eq!(ProcStat::parse(big.as_bytes()), None);
    }
}
