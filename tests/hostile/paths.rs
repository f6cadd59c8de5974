//! Hostile inputs: group names (issue 7, items 2, 4 and 6).
//!
//! A user who owns a delegated subtree (or writes a `--root` tree) names
//! groups with terminal escapes, CR, newlines, a right-to-left override,
//! and bytes that are not UTF-8. Each must reach the screen as a visible
//! escape (`-b`, the TUI), JSON must stay valid and keep every group
//! apart, an op built for one group must name only that directory, and a
//! GROUP argument with `..` must be refused before anything is read.

use crate::common;
use cgtop::model::tree::text::unescape;
use cgtop::model::{write, MountInfo, MountMode};
use cgtop::source::writer;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The hostile names, relative to the tree's top, parents before children.
/// `newline` adds the name that forges a row in `-b` (cgroupfs refuses a
/// '\n' in a name, a `--root` tree does not).
fn names(newline: bool) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = vec![
        b"X".to_vec(),
        b"X/\x1b]0;pwned\x07".to_vec(),
        b"\x1b[2J".to_vec(),
        b"a\rb".to_vec(),
        b"a\x1bb".to_vec(),
        b"ab".to_vec(),
        b"bad\xff".to_vec(),
        "bad\u{FFFD}".as_bytes().to_vec(),
        "evil\u{202e}txt.slice".as_bytes().to_vec(),
    ];
    if newline {
        v.push(
            b"x\n  forged.service               99.9   64.0G        0        0     1 P".to_vec(),
        );
    }
    v
}

fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

/// A `--root` tree holding the hostile names, `cgroup.procs` (empty) and
/// `cgroup.freeze` ("0") in every group.
fn hostile_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let put = |dir: &Path| {
        std::fs::write(dir.join("cgroup.procs"), "").unwrap();
        std::fs::write(dir.join("cgroup.freeze"), "0\n").unwrap();
    };
    put(t.path());
    for n in names(true) {
        let d = t.path().join(os(&n));
        std::fs::create_dir(&d).unwrap();
        put(&d);
    }
    t
}

fn cgtop(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `cgtop MODE -n 1 -d 0.1 ARGS...` (MODE `-b` or `--json`), which must
/// succeed.
fn one_refresh(mode: &str, args: &[&OsStr]) -> Output {
    let mut all = [mode, "-n", "1", "-d", "0.1"].map(OsStr::new).to_vec();
    all.extend_from_slice(args);
    let o = cgtop(&all);
    assert!(
        o.status.success(),
        "cgtop {all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Text that a terminal shows as it is: UTF-8, no control character but
/// the line ends, no C1 control, no invisible or reordering character.
fn assert_inert(what: &str, bytes: &[u8]) {
    assert!(!bytes.contains(&0x1b), "{what}: an ESC byte");
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    for (i, c) in text.char_indices() {
        let bad = (c.is_control() && c != '\n')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(!bad, "{what}: {c:?} at byte {i}:\n{text}");
    }
}

/// Every row has its PIDS figure where the header has "PIDS": the columns
/// line up whatever the names hold.
fn assert_aligned(header: &str, rows: &[String]) {
    let end = header.find("PIDS").unwrap() + "PIDS".len();
    for r in rows {
        let cells: Vec<char> = r.chars().collect();
        assert!(
            cells.len() > end && cells[end - 1] != ' ' && cells[end] == ' ',
            "row out of line with the header:\n{header}\n{r}"
        );
    }
}

#[test]
fn batch_text_shows_every_name_escaped_one_row_each() {
    let t = hostile_tree();
    let o = one_refresh("-b", &[OsStr::new("--root"), t.path().as_os_str()]);
    assert_inert("cgtop -b", &o.stdout);
    let text = String::from_utf8(o.stdout).unwrap();
    let (header, rows) = common::batch::first(&text);
    // the root and one row per group: the newline forged none
    assert_eq!(rows.len(), 1 + names(true).len(), "{text}");
    assert!(!rows.iter().any(|r| r.starts_with("  forged")), "{text}");
    assert_aligned(&header, &rows);
    // the name column, up to where the header has CPU% (in characters:
    // a name may hold U+FFFD)
    let name_w = header.find("CPU%").unwrap();
    let names: Vec<String> = rows
        .iter()
        .skip(1)
        .map(|r| r.chars().take(name_w).collect::<String>().trim().to_owned())
        .collect();
    for want in [
        "\\e]0;pwned\\a",
        "\\e[2J",
        "a\\rb",
        "a\\eb",
        "ab",
        "bad\\xff",
        "bad\u{FFFD}",
        "evil\\u{202e}txt.slice",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want:?} not among {names:?}"
        );
    }
    assert!(
        // its spaces shown as `\u{20}`: a group's name never shows one
        names
            .iter()
            .any(|n| n.starts_with("x\\n\\u{20}\\u{20}forged.service\\u{20}")),
        "{names:?}"
    );
}

/// Every path of every refresh in `--json` output, checked to be valid
/// JSON Lines.
fn json_paths(stdout: &[u8]) -> Vec<String> {
    assert_inert("cgtop --json", stdout);
    let text = std::str::from_utf8(stdout).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        for g in v["groups"].as_array().unwrap() {
            out.push(g["path"].as_str().unwrap().to_owned());
        }
    }
    out
}

#[test]
fn json_paths_are_distinct_and_unescape_to_the_directories() {
    let t = hostile_tree();
    let o = one_refresh("--json", &[OsStr::new("--root"), t.path().as_os_str()]);
    let paths = json_paths(&o.stdout);
    let unique: HashSet<&String> = paths.iter().collect();
    assert_eq!(
        unique.len(),
        paths.len(),
        "two groups share a path: {paths:?}"
    );
    // the escape is reversible: each path gives back its directory's bytes
    let got: HashSet<Vec<u8>> = paths.iter().map(|p| unescape(p)).collect();
    let mut want: HashSet<Vec<u8>> = names(true)
        .into_iter()
        .map(|n| [&b"/"[..], &n].concat())
        .collect();
    want.insert(b"/".to_vec());
    assert_eq!(got, want);
    assert!(paths.contains(&"/bad\\xff".to_owned()), "{paths:?}");
    assert!(paths.contains(&"/bad\u{FFFD}".to_owned()), "{paths:?}");
}

#[test]
fn tui_rows_show_escapes_and_keep_look_alikes_apart() {
    let t = hostile_tree();
    let mount = MountInfo {
        root: PathBuf::from("/hostile"),
        mode: MountMode::Directory,
    };
    let (a, _c) = common::app_on(t.path(), mount, 120, 40);
    let s = common::screen(&a, 120, 40);
    assert_inert("the TUI", s.as_bytes());
    let rows: Vec<&str> = s.lines().collect();
    let row_of = |name: &str| {
        rows.iter()
            .find(|r| r.contains(&format!("─{name} ")))
            .unwrap_or_else(|| panic!("no row shows {name:?}:\n{s}"))
    };
    for name in ["a\\eb", "ab", "bad\\xff", "bad\u{FFFD}", "\\e[2J", "a\\rb"] {
        row_of(name);
    }
    assert!(s.contains("evil\\u{202e}txt.slice"), "{s}");
    // the CPU% column lines up on every row of the tree
    let header = rows.iter().find(|r| r.contains("CPU%")).unwrap();
    let end = header.chars().position(|c| c == '%').unwrap();
    for name in ["a\\eb", "ab", "bad\\xff", "bad\u{FFFD}", "\\e[2J"] {
        let r: Vec<char> = row_of(name).chars().collect();
        assert!(
            r[end] != ' ' && r[end + 1] == ' ',
            "{name}: CPU% out of line\n{header}\n{}",
            row_of(name)
        );
    }
}

/// The sample the collector made for the directory `dir` (found by inode),
/// and the directory a freeze of it writes to.
fn freeze_target(samples: &[cgtop::model::GroupSample], root: &Path, dir: &Path) -> PathBuf {
    let ino = std::fs::metadata(dir).unwrap().ino();
    let g = samples
        .iter()
        .find(|g| g.inode == ino)
        .unwrap_or_else(|| panic!("no sample for {}", dir.display()));
    let op = write::freeze(&g.path, true);
    writer::group_dir(root, op.group())
}

#[test]
fn a_freeze_of_bad_xff_names_only_its_own_directory() {
    let t = hostile_tree();
    let mut c = common::collector(t.path());
    let r = common::refresh(&mut c, 0.0);
    let raw = t.path().join(os(b"bad\xff"));
    let lossy = t.path().join("bad\u{FFFD}");
    assert_eq!(freeze_target(&r.snapshot.groups, t.path(), &raw), raw);
    assert_eq!(freeze_target(&r.snapshot.groups, t.path(), &lossy), lossy);
}

#[test]
fn a_group_argument_with_dot_dot_is_refused_before_anything_is_read() {
    let t = hostile_tree();
    // a tree outside the hierarchy, that `..` would reach
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("t");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("cgroup.procs"), "").unwrap();
    let up = "../".repeat(t.path().components().count() + 2);
    let escape = format!(
        "{up}{}",
        target.display().to_string().trim_start_matches('/')
    );
    let root_arg = t.path().as_os_str();
    for (with_root, group) in [
        (true, escape.clone()),
        (true, "X/../../..".to_owned()),
        // as the issue wrote it, on the host's own hierarchy
        (false, format!("../../../..{}", target.display())),
    ] {
        let mut args = vec![os(b"-b"), os(b"-n"), os(b"1"), os(b"-d"), os(b"0.1")];
        if with_root {
            args.extend([os(b"--root"), root_arg]);
        }
        args.push(OsStr::new(&group));
        let o = cgtop(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{group}: {err}");
        assert!(o.stdout.is_empty(), "{group}: something was shown");
        assert_eq!(err.lines().count(), 1, "{group}: {err}");
        assert!(err.contains("`..`"), "{group}: {err}");
    }
    // a leading '/' means the hierarchy's root, and '.' is dropped
    for group in ["/X", "./X/", "X"] {
        let o = one_refresh("-b", &[OsStr::new("--root"), root_arg, OsStr::new(group)]);
        let text = String::from_utf8(o.stdout).unwrap();
        let (_, rows) = common::batch::first(&text);
        assert!(rows[0].starts_with("/X "), "{group}: {text}");
        assert!(rows[1].contains("\\e]0;pwned\\a"), "{group}: {text}");
    }
}

// ---------------------------------------------------------------------------
// The same names as real groups, under the test prefix.

/// A test group holding the hostile names (all but the newline, which
/// cgroupfs refuses). `None` (with the skip line printed) when not root
/// or there is no cgroup2.
fn real_hostile_group() -> Option<common::sandbox::Sandbox> {
    let tg = common::sandbox::Sandbox::or_skip()?;
    for n in names(false) {
        std::fs::create_dir(tg.dir("").join(os(&n))).unwrap();
    }
    Some(tg)
}

#[test]
fn real_groups_batch_and_json_show_escapes_and_distinct_paths() {
    let Some(tg) = real_hostile_group() else {
        return;
    };
    let start = OsStr::new(&tg.rel);
    let o = one_refresh("-b", &[start]);
    assert_inert("cgtop -b on cgroupfs", &o.stdout);
    let text = String::from_utf8(o.stdout).unwrap();
    let (header, rows) = common::batch::first(&text);
    assert_eq!(rows.len(), 1 + names(false).len(), "{text}");
    assert_aligned(&header, &rows);
    for want in [
        "  a\\eb ",
        "  ab ",
        "  bad\\xff ",
        "  bad\u{FFFD} ",
        "\\e]0;pwned\\a",
    ] {
        assert!(text.contains(want), "{want:?}:\n{text}");
    }

    let o = one_refresh("--json", &[start]);
    let paths = json_paths(&o.stdout);
    let got: HashSet<Vec<u8>> = paths.iter().map(|p| unescape(p)).collect();
    assert_eq!(got.len(), paths.len(), "two groups share a path: {paths:?}");
    let top = format!("/{}", tg.rel).into_bytes();
    let mut want: HashSet<Vec<u8>> = names(false)
        .into_iter()
        .map(|n| [&top[..], b"/", &n].concat())
        .collect();
    want.insert(top);
    assert_eq!(got, want);
}

#[test]
fn real_groups_freezing_bad_xff_leaves_bad_fffd_alone() {
    let Some(tg) = real_hostile_group() else {
        return;
    };
    let mut c = tg.collector();
    let r = common::refresh(&mut c, 0.0);
    let raw = tg.dir("").join(os(b"bad\xff"));
    let lossy = tg.dir("").join("bad\u{FFFD}");
    let ino = std::fs::metadata(&raw).unwrap().ino();
    let g = r
        .snapshot
        .groups
        .iter()
        .find(|g| g.inode == ino)
        .expect("bad\\xff was scanned");
    let op = write::freeze(&g.path, true);
    let o = writer::perform(&tg.root, &op);
    assert!(o.is_ok(), "{}", o.summary());
    let freeze = |d: &Path| std::fs::read_to_string(d.join("cgroup.freeze")).unwrap();
    assert_eq!(freeze(&lossy).trim(), "0", "the other group was frozen");
    assert_eq!(freeze(&raw).trim(), "1");
    assert_eq!(writer::group_dir(&tg.root, op.group()), raw);
}

/// What the eye sees of a shown name: every blank as a space, and
/// nothing for a character that draws nothing.
fn as_seen(shown: &str) -> String {
    shown
        .chars()
        .filter(|c| !matches!(c, '\u{34f}' | '\u{fe00}'..='\u{fe0f}' | '\u{e0000}'..='\u{e0fff}'))
        .map(|c| {
            if c.is_whitespace()
                || matches!(
                    c,
                    '\u{115f}' | '\u{1160}' | '\u{2800}' | '\u{3164}' | '\u{ffa0}'
                )
            {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// `cgtop -b -n 1` on a `--root` tree whose top holds a group for each
/// of `names`, each listing `procs` in its cgroup.procs: the tree (kept
/// alive while the caller looks at it) and the text printed.
fn batch_of_groups(names: &[&str], procs: &str) -> (tempfile::TempDir, String) {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("cgroup.procs"), "").unwrap();
    for n in names {
        let d = t.path().join(n);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), procs).unwrap();
    }
    let o = one_refresh("-b", &[OsStr::new("--root"), t.path().as_os_str()]);
    (t, String::from_utf8(o.stdout).unwrap())
}

/// The names of `-b` text's group rows (the root's row left out), as
/// shown: each row's name column, trimmed.
fn shown_names(text: &str) -> Vec<String> {
    let (header, rows) = common::batch::first(text);
    let name_w = header.find("CPU%").unwrap();
    rows.iter()
        .skip(1)
        .map(|r| r.chars().take(name_w).collect::<String>().trim().to_owned())
        .collect()
}

/// Each shown name gives back the bytes of one of `names`, all of them.
fn assert_unescape_to(shown: &[String], names: &[&str]) {
    let mut back: Vec<Vec<u8>> = shown.iter().map(|s| unescape(s)).collect();
    back.sort();
    let mut want: Vec<Vec<u8>> = names.iter().map(|n| n.as_bytes().to_vec()).collect();
    want.sort();
    assert_eq!(back, want);
}

#[test]
fn blanks_and_invisible_selectors_do_not_make_two_groups_look_alike() {
    // attack: next to a victim's `a b` (or `ab`), the owner of a delegated
    // subtree makes `a<NO-BREAK SPACE>b`, `a<HANGUL FILLER>b`,
    // `a<VARIATION SELECTOR-16>b` ...: on screen the pairs were the same
    // row, and the operator froze or killed the one they did not mean
    let look_alikes: [&str; 12] = [
        "a b",
        "ab",
        "a\u{a0}b",
        "a\u{2007}b",
        "a\u{202f}b",
        "a\u{205f}b",
        "a\u{3000}b",
        "a\u{3164}b",
        "a\u{2800}b",
        "a\u{fe0f}b",
        "a\u{34f}b",
        "a\u{e0041}b",
    ];
    let (_t, text) = batch_of_groups(&look_alikes, "");
    let shown = shown_names(&text);
    let seen: Vec<String> = shown.iter().map(|s| as_seen(s)).collect();
    assert_eq!(seen.len(), look_alikes.len(), "{text}");
    let distinct: HashSet<&String> = seen.iter().collect();
    assert_eq!(
        distinct.len(),
        seen.len(),
        "two rows look the same: {seen:?}"
    );
    // and each shown name gives back its directory's bytes
    assert_unescape_to(&shown, &look_alikes);
}

#[test]
fn slash_like_and_look_alike_letters_are_shown_escaped() {
    // attack: `∕etc` (U+2215) under a delegated group read as `//etc`, and
    // `pаypal` with a Cyrillic `а` as `paypal`; a name wholly in Cyrillic
    // stays readable
    let names: [&str; 7] = [
        "\u{2215}etc",
        "\u{ff0f}etc",
        "\u{2024}\u{2024}",
        "p\u{430}ypal",
        "\u{430}\u{441}\u{435}",
        "paypal",
        "привет",
    ];
    let (_t, text) = batch_of_groups(&names, "");
    let shown = shown_names(&text);
    assert_eq!(shown.len(), names.len(), "{text}");
    for s in &shown {
        let raw_look_alike = s.chars().any(|c| {
            cgtop::model::tree::text::SLASH_DOT_LIKE.contains(&c)
                || cgtop::model::tree::text::LOOK_ALIKE_LETTERS.contains(&c)
        });
        assert!(!raw_look_alike || s == "привет", "{s:?} in\n{text}");
    }
    for want in [
        "\\u{2215}etc",
        "p\\u{430}ypal",
        "\\u{430}\\u{441}\\u{435}",
        "привет",
    ] {
        assert!(shown.iter().any(|s| s == want), "{want} in {shown:?}");
    }
    assert_unescape_to(&shown, &names);
}

#[test]
fn wide_names_keep_the_columns_in_line() {
    // attack: a name of wide characters (`ＷＩＤＥ`, two columns each)
    // was measured in characters: its row's figures slid right, under the
    // next column's header, in `-b` and in the TUI. Fullwidth Latin letters
    // are escaped now (they read as ASCII), so the wide name is CJK, which
    // is shown as it is
    let (t, text) = batch_of_groups(&["\u{65e5}\u{672c}\u{8a9e}\u{540d}", "narrow"], "1\n");
    let (header, rows) = common::batch::first(&text);
    let cols = |s: &str| unicode_width::UnicodeWidthStr::width(s);
    let pids_end = cols(&header[..header.find("PIDS").unwrap() + 4]);
    for r in &rows {
        // the display column where the PIDS figure ends
        let digits_end = r[..=r.rfind(|c: char| c.is_ascii_digit()).unwrap()].to_owned();
        assert_eq!(cols(&digits_end), pids_end, "-b:\n{header}\n{r}");
    }
    // the TUI: the PIDS figure of each group's row under the header's S
    let (a, _c) = common::app_on(
        t.path(),
        MountInfo {
            root: PathBuf::from("/sys/fs/cgroup"),
            mode: MountMode::PureV2,
        },
        140,
        12,
    );
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(140, 12)).unwrap();
    term.draw(|f| cgtop::ui::render(f, &a, &cgtop::ui::Theme::mono()))
        .unwrap();
    let b = term.backend().buffer();
    let row = |y: u16| -> Vec<String> { (0..140).map(|x| b[(x, y)].symbol().to_owned()).collect() };
    let head_y = (0..12).find(|&y| row(y).concat().contains("PIDS")).unwrap();
    let head = row(head_y);
    let s_x = (0..140usize)
        .find(|&x| head[x] == "P" && head[x + 1] == "I" && head[x + 2] == "D" && head[x + 3] == "S")
        .unwrap()
        + 3;
    let mut checked = 0;
    for y in head_y + 1..12 {
        let r = row(y);
        let line = r.concat();
        if line.contains("narrow") || line.contains('\u{65e5}') {
            checked += 1;
            assert_eq!(
                r[s_x],
                "1",
                "TUI row out of line:\n{}\n{line}",
                head.concat()
            );
        }
    }
    assert_eq!(checked, 2, "both rows on screen");
}
