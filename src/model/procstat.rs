//! `/proc/PID/stat` text -> the fields the process list uses ([`ProcStat`]).
//!
//! The command name sits between the first `(` and the LAST `)`: a process
//! names itself (prctl, or the file it exec'd), so the name may hold
//! spaces, parentheses, escapes and bytes that are not UTF-8; it is kept
//! as bytes and counted from the end. Fields are numbered as in proc(5).
//!
//! Must not depend on: the filesystem, the clock, the terminal.

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
        let open = text.iter().position(|&b| b == b'(')?;
        let close = text.iter().rposition(|&b| b == b')')?;
        let pid = std::str::from_utf8(text.get(..open)?)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let comm = text.get(open + 1..close)?.to_vec();
        let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
        // rest[0] is field 3
        let f: Vec<&str> = rest.split_ascii_whitespace().collect();
        let n = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
        let mut state = f.first()?.chars();
        let st = state.next()?;
        if state.next().is_some() {
            return None;
        }
        Some(Self {
            pid,
            comm,
            state: st,
            utime: n(14)?,
            stime: n(15)?,
            starttime: n(22)?,
            rss: n(24)?,
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
