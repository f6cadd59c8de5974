//! The byte scanner under every flat-keyed reader: `key value` lines found
//! without allocating, integers parsed by hand, and a value parsed only for
//! a key someone wants.
//!
//! Why: the scanner parses cpu.stat, io.stat and cgroup.events of every
//! group on every refresh. Through `str::lines`, `split_ascii_whitespace`
//! and `str::parse`, cpu.stat cost about 4,600 instructions a file (ten
//! lines, six wanted), most of a steady refresh's parsing (BENCHMARKS.md,
//! "tmpfs"). Here a line the reader does not want is skipped at its key,
//! and a wanted key is looked up where the kernel's stable order says it
//! comes next before the whole table is searched.
//!
//! The lines and values are exactly those of the simple reading (a line of
//! exactly two ASCII-whitespace separated tokens, the second a `u64` as
//! `str::parse` takes it); the tests hold both to the same answers.

/// The lines of a flat-keyed text that have a key: each key, and the bytes
/// after it up to the end of its line (the value's tokens).
pub(crate) struct KeyLines<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> KeyLines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    /// The value of the next line if it is exactly `key`, one space, the
    /// digits of a `u64` and its end, as the kernel prints it; then the
    /// line is consumed. Anything else (another key, odd spacing, a torn
    /// or too large number) is left for [`Iterator::next`], which reads
    /// every line the slow way. `key` holds no whitespace.
    fn plain(&mut self, key: &[u8]) -> Option<u64> {
        let line = self.text.as_bytes().get(self.pos..)?;
        let after = line.strip_prefix(key)?.strip_prefix(b" ")?;
        let (v, n) = digits(after)?;
        let end = match after.get(n) {
            None => n,
            Some(b'\n') => n + 1,
            Some(_) => return None,
        };
        self.pos += key.len() + 1 + end;
        Some(v)
    }
}

impl<'a> Iterator for KeyLines<'a> {
    type Item = (&'a str, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.text.as_bytes();
        loop {
            let mut i = self.pos;
            while i < b.len() && b[i] != b'\n' && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= b.len() {
                self.pos = b.len();
                return None;
            }
            if b[i] == b'\n' {
                self.pos = i + 1;
                continue;
            }
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            let rest_at = i;
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            self.pos = i + 1;
            // both ends are the text's ends or ASCII bytes: char boundaries
            let key = self.text.get(start..rest_at)?;
            return Some((key, Value(&b[rest_at..i])));
        }
    }
}

/// The rest of a line after its key, parsed only when asked.
#[derive(Clone, Copy)]
pub(crate) struct Value<'a>(&'a [u8]);

impl Value<'_> {
    /// The line's value: exactly one more token, a `u64`; `None` for a
    /// line without one, with a third token, or with a bad number.
    pub(crate) fn get(self) -> Option<u64> {
        let b = self.0;
        let mut i = 0;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let token = &b[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < b.len() {
            return None;
        }
        parse_u64(token)
    }
}

/// A `u64` from its decimal digits, as `str::parse` reads it: an optional
/// `+`, at least one digit, nothing else, no overflow.
pub(crate) fn parse_u64(b: &[u8]) -> Option<u64> {
    let b = match b {
        [b'+', rest @ ..] => rest,
        _ => b,
    };
    match digits(b)? {
        (v, n) if n == b.len() => Some(v),
        _ => None,
    }
}

/// The number the leading ASCII digits of `b` spell, and how many there
/// are; `None` without a digit or past `u64::MAX`. Nineteen digits cannot
/// overflow: only the digits after them are checked.
pub(crate) fn digits(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut n = 0;
    while let Some(&c) = b.get(n) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = if n < 19 {
            v * 10 + u64::from(d)
        } else {
            v.checked_mul(10)?.checked_add(u64::from(d))?
        };
        n += 1;
    }
    (n > 0).then_some((v, n))
}

/// The values of `keys` in a flat-keyed text, in the order of `keys`; the
/// first readable line of a key wins, a key without one is `None`.
///
/// The kernel prints a file's keys in a fixed order, so `keys` in that
/// order are found by one comparison each: the key after the last one
/// found is tried first, the whole table only when that fails (a kernel
/// with more, fewer or reordered keys is read the same, only slower).
pub(crate) fn values<const N: usize>(text: &str, keys: &[&str; N]) -> [Option<u64>; N] {
    let mut out = [None; N];
    let mut next = 0;
    // keys with a value: once all have one, no later line changes any
    // (cpu.stat's last lines, `nr_bursts` and `burst_usec`, are not read)
    let mut found = 0;
    let mut lines = KeyLines::new(text);
    while found < N {
        if next < N {
            if let Some(v) = lines.plain(keys[next].as_bytes()) {
                if out[next].is_none() {
                    out[next] = Some(v);
                    found += 1;
                }
                next += 1;
                continue;
            }
        }
        let Some((key, value)) = lines.next() else {
            break;
        };
        let i = if next < N && keys[next] == key {
            next
        } else if let Some(i) = keys.iter().position(|k| *k == key) {
            i
        } else {
            continue;
        };
        next = i + 1;
        if out[i].is_none() {
            out[i] = value.get();
            found += usize::from(out[i].is_some());
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reading these scanners must equal: lines, ASCII-whitespace
    /// tokens, `str::parse`.
    pub(crate) fn simple_lines(s: &str) -> Vec<(&str, u64)> {
        s.lines()
            .filter_map(|line| {
                let mut it = line.split_ascii_whitespace();
                let key = it.next()?;
                let value = it.next()?.parse().ok()?;
                if it.next().is_some() {
                    return None;
                }
                Some((key, value))
            })
            .collect()
    }

    fn simple_values(s: &str, keys: &[&str]) -> Vec<Option<u64>> {
        let lines = simple_lines(s);
        keys.iter()
            .map(|k| lines.iter().find(|(x, _)| x == k).map(|(_, v)| *v))
            .collect()
    }

    fn fast_lines(s: &str) -> Vec<(&str, u64)> {
        KeyLines::new(s)
            .filter_map(|(k, v)| Some((k, v.get()?)))
            .collect()
    }

    #[test]
    fn numbers_as_str_parse_reads_them() {
        for t in [
            "0",
            "+0",
            "+",
            "",
            "-1",
            "007",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "1a",
            "a1",
            "１",
        ] {
            assert_eq!(parse_u64(t.as_bytes()), t.parse::<u64>().ok(), "{t:?}");
        }
    }

    #[test]
    fn odd_lines_as_the_simple_reading() {
        for t in [
            "",
            "\n\n",
            "a 1",
            "a 1\n",
            "  a\t 1 \r\n",
            "a 1 2\nb 2\n",
            "a\nb 3",
            "a 1\r\nb 2\r\n",
            "\u{0b}a 1\n",
            "a\u{0b}1\n",
            "ü 5\nx ü\n",
            "a 1\x0cb 2\n",
            "usage_usec 5\nuser_usec 3\nsystem_us",
        ] {
            assert_eq!(fast_lines(t), simple_lines(t), "{t:?}");
        }
    }

    #[test]
    fn values_in_any_order() {
        const KEYS: [&str; 3] = ["a", "b", "c"];
        assert_eq!(
            values("a 1\nb 2\nc 3\n", &KEYS),
            [Some(1), Some(2), Some(3)]
        );
        assert_eq!(values("c 3\nx 9\na 1\n", &KEYS), [Some(1), None, Some(3)]);
        // the first readable line wins, a torn one does not count
        assert_eq!(values("b x\nb 2\nb 7\n", &KEYS), [None, Some(2), None]);
        assert_eq!(values("", &KEYS), [None; 3]);
    }

    /// Every cpu.stat, cgroup.events, cgroup.stat, memory.current and
    /// pids.current of the real kernels' texts in the fixtures
    /// (tests/fixtures/kernel-texts/third-party, from
    /// shared/data/real-cgroupfs): the fast paths read them as the simple
    /// reading does.
    #[test]
    fn real_kernel_texts_read_as_the_simple_reading() {
        // (built in: this layer reads no file, its tests neither)
        let texts = [
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/kernel-texts/third-party/captures.json"
            )),
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/kernel-texts/third-party/samples.json"
            )),
        ];
        let mut checked = 0;
        for text in texts {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            for entry in v.as_object().unwrap().values() {
                let Some(files) = entry["files"].as_object() else {
                    continue;
                };
                for (file, t) in files {
                    let t = t.as_str().unwrap();
                    let keys: &[&str] = match file.as_str() {
                        "cpu.stat" => &CPU,
                        "cgroup.events" => &EVENTS,
                        "cgroup.stat" => &["nr_descendants", "nr_dying_descendants"],
                        "memory.current" | "pids.current" => {
                            let want = t.trim().parse::<u64>().ok();
                            assert_eq!(crate::cgroupfs::parse_u64("x", t).ok(), want, "{t:?}");
                            checked += 1;
                            continue;
                        }
                        _ => continue,
                    };
                    let got: Vec<Option<u64>> = match keys.len() {
                        6 => values(t, &CPU).to_vec(),
                        _ => values(t, &[keys[0], keys[1]]).to_vec(),
                    };
                    assert_eq!(got, simple_values(t, keys), "{file}: {t:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 20, "{checked} texts");
    }

    const CPU: [&str; 6] = [
        "usage_usec",
        "user_usec",
        "system_usec",
        "nr_periods",
        "nr_throttled",
        "throttled_usec",
    ];
    const EVENTS: [&str; 2] = ["populated", "frozen"];

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(vec![
                "usage_usec", "user_usec", "system_usec", "nr_periods", "nr_throttled",
                "throttled_usec", "nr_bursts", "burst_usec", "core_sched.force_idle_usec",
                "populated", "frozen", "anon", "file", "nice_usec",
            ]).prop_map(String::from),
            1 => "[a-z_.]{1,12}",
        ]
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => any::<u64>().prop_map(|v| v.to_string()),
            1 => Just("18446744073709551616".to_owned()),
            1 => Just(String::new()),
            1 => "[+0-9a-z]{1,4}",
            1 => "[0-9]{1,3} [0-9]{1,3}",
        ]
    }

    fn sep() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![" ", " ", " ", "\t", "  ", " \r"])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Any text, bytes the kernel never prints included: the same lines.
        #[test]
        fn lines_equal_the_simple_reading_on_any_text(s in "[a-z0-9+ \t\r\n\u{0b}\u{0c}ü]{0,80}") {
            prop_assert_eq!(fast_lines(&s), simple_lines(&s));
        }

        /// Keys in a random order, some missing, some not wanted, some
        /// repeated, torn values and odd spacing: the same values as looking
        /// each key up in the simple reading.
        #[test]
        fn values_equal_the_simple_reading(
            lines in prop::collection::vec((key(), sep(), value(), sep()), 0..16),
            torn in any::<bool>(),
        ) {
            let mut s = String::new();
            for (k, a, v, b) in &lines {
                s.push_str(&format!("{k}{a}{v}{b}\n"));
            }
            if torn {
                s.pop();
                s.pop();
            }
            prop_assert_eq!(values(&s, &CPU).to_vec(), simple_values(&s, &CPU));
            prop_assert_eq!(values(&s, &EVENTS).to_vec(), simple_values(&s, &EVENTS));
        }
    }
}
