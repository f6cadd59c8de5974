//! The settings file (issue 10 item 6) as the app sees it: rebinding
//! through the one keymap changes dispatch, the footer and the help;
//! conflicts and unknown names are errors with their line; the column
//! chooser reorders and asks for a save; assets/config.toml is the
//! built-in defaults; the file is read and written safely
//! (source::config).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use cgtop::app::keymap::{self, Action, Scope};
use cgtop::app::{Effect, Level, Mode, Msg, SortKey};
use cgtop::model::files::config::{self, Rebind};
use cgtop::render::columns::Column;
use cgtop::source::config::{load, save_columns, Why};
use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn rebind(scope: &str, action: &str, keys: &[&str], line: usize) -> Rebind {
    Rebind {
        scope: scope.into(),
        action: action.into(),
        keys: keys.iter().map(|k| (*k).to_owned()).collect(),
        line,
    }
}

fn build_err(r: &[Rebind]) -> String {
    keymap::build(r)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

fn footer(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim_matches(['|', ' ', '>']).is_empty())
        .unwrap_or("")
        .to_owned()
}

#[test]
fn rebinding_changes_dispatch_the_footer_and_the_help() {
    let table = keymap::build(&[
        rebind("main", "freeze", &["F"], 2),
        rebind("main", "help", &["f1", "h"], 3),
        rebind("main", "collapse", &["left", "-"], 4),
    ])
    .unwrap();
    keymap::install(table);
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    select(&mut a, &mut c, PG_SLICE_SERVICE);
    // the old key does nothing now
    send(&mut a, &mut c, ch('f'));
    assert_eq!(a.mode, Mode::Normal);
    // the new one asks to freeze
    send(&mut a, &mut c, ch('F'));
    assert!(matches!(a.mode, Mode::Confirm(_)), "{:?}", a.mode);
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    let s = screen(&a, 120, 40);
    let f = footer(&s);
    assert!(f.contains("F freeze"), "{f}");
    assert!(f.contains("F1 help"), "{f}");
    assert!(!f.contains("? help"), "{f}");
    // `?` is no longer the help; h is
    send(&mut a, &mut c, ch('?'));
    assert_eq!(a.mode, Mode::Normal);
    send(&mut a, &mut c, ch('h'));
    assert_eq!(a.mode, Mode::Help);
    let help = screen(&a, 120, 200);
    let line = help.lines().find(|l| l.contains("freeze or thaw")).unwrap();
    assert!(line.contains(" F "), "{line}");
    assert!(!line.contains(" f "), "{line}");
    let line = help.lines().find(|l| l.contains("this help")).unwrap();
    assert!(line.contains("F1 h"), "{line}");
    insta::assert_snapshot!("rebound_main_footer", f);
}

const PG_SLICE_SERVICE: &str = "system.slice/system-postgresql.slice";

#[test]
fn a_key_bound_twice_is_an_error_naming_both() {
    // K is kill's
    assert_eq!(
        build_err(&[rebind("main", "freeze", &["K"], 7)]),
        "line 7: key `keys.main.freeze`: K is bound to both freeze and kill in main"
    );
    // swapping two keys is no conflict: the table is checked as a whole
    assert!(keymap::build(&[
        rebind("main", "freeze", &["K"], 7),
        rebind("main", "kill", &["f"], 8),
    ])
    .is_ok());
    // two rebinds: the later line is blamed
    let e = build_err(&[
        rebind("main", "freeze", &["Z"], 3),
        rebind("main", "kill", &["Z"], 9),
    ]);
    assert!(
        e.starts_with("line 9: key `keys.main.kill`: Z is bound to both"),
        "{e}"
    );
    // Ctrl-Z suspends from every screen: no screen may take it
    let e = build_err(&[rebind("log", "close", &["ctrl-z"], 2)]);
    assert!(e.contains("^Z is bound to both"), "{e}");
    // a text screen types its characters
    let e = build_err(&[rebind("filter", "accept", &["x"], 4)]);
    assert!(
        e.starts_with("line 4: key `keys.filter.accept`: x in filter would not be typed"),
        "{e}"
    );
    // and its own keys must not shadow the editing keys
    let e = build_err(&[rebind("filter", "accept", &["ctrl-w"], 5)]);
    assert!(e.contains("^W is bound to both"), "{e}");
}

#[test]
fn unknown_names_are_errors() {
    let e = build_err(&[rebind("mian", "freeze", &["F"], 2)]);
    assert!(
        e.starts_with(
            "line 2: key `keys.mian.freeze`: no screen \"mian\"; the screens are main, filter"
        ),
        "{e}"
    );
    let e = build_err(&[rebind("main", "frieze", &["F"], 3)]);
    assert!(e.starts_with("line 3: key `keys.main.frieze`: no action \"frieze\" in main; its actions are up, down"), "{e}");
    // an action the screen has no row for
    let e = build_err(&[rebind("log", "freeze", &["F"], 3)]);
    assert!(e.contains("no action \"freeze\" in log"), "{e}");
    let e = build_err(&[rebind("main", "freeze", &["hyper-x"], 4)]);
    assert!(
        e.starts_with("line 4: key `keys.main.freeze`: no key \"hyper-x\""),
        "{e}"
    );
    let e = build_err(&[rebind("main", "freeze", &[], 5)]);
    assert!(e.contains("no key: give one"), "{e}");
}

#[test]
fn key_spellings() {
    let k = |s: &str| keymap::parse_key(s).map(|k| keymap::key_name(&k));
    assert_eq!(k("F").as_deref(), Ok("F"));
    assert_eq!(k("ctrl-k").as_deref(), Ok("^K"));
    assert_eq!(k("Ctrl-K").as_deref(), Ok("^K"));
    assert_eq!(k("^K").as_deref(), Ok("^K"));
    assert_eq!(k("alt-b").as_deref(), Ok("M-b"));
    assert_eq!(k("shift-up").as_deref(), Ok("S-Up"));
    assert_eq!(k("S-Up").as_deref(), Ok("S-Up"));
    assert_eq!(k("shift-g").as_deref(), Ok("G"));
    assert_eq!(k("F10").as_deref(), Ok("F10"));
    assert_eq!(k("f2").as_deref(), Ok("F2"));
    assert_eq!(k("PgDn").as_deref(), Ok("PgDn"));
    assert_eq!(k("space").as_deref(), Ok("Space"));
    assert_eq!(k("ctrl-left").as_deref(), Ok("C-Left"));
    assert_eq!(k("-").as_deref(), Ok("-"));
    assert!(k("f13").is_err());
    assert!(k("\x1b").is_err());
    assert!(k("").is_err());
    // every built-in key's help spelling reads back as that key
    for b in keymap::KEYMAP {
        for key in b.keys.iter().filter(|k| k.code != KeyCode::Null) {
            let name = keymap::key_name(key);
            let back = keymap::parse_key(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let ev = KeyEvent::new(back.code, back.mods);
            assert_eq!(keymap::lookup(b.scope, &ev), Some(b.action), "{name}");
        }
    }
}

#[test]
fn every_scope_and_action_has_a_settings_name() {
    // the built-in table passes its own check
    let t = keymap::build(&[]).unwrap();
    assert_eq!(t.len(), keymap::KEYMAP.len());
    for b in keymap::KEYMAP {
        let r = rebind(
            &keymap::scope_name(b.scope),
            &keymap::action_name(b.action),
            &[],
            1,
        );
        // found (an empty list is the error, not the names)
        assert!(build_err(&[r]).contains("no key: give one"), "{b:?}");
    }
    assert_eq!(keymap::scope_name(Scope::RawChoose), "raw_choose");
    assert_eq!(keymap::action_name(Action::DetailPage(0)), "detail_page_1");
    assert_eq!(keymap::action_name(Action::SortPrev), "sort_prev");
}

fn chooser_items(a: &cgtop::app::App) -> Vec<(Column, bool)> {
    match &a.mode {
        Mode::Columns(d) => d.items.clone(),
        m => panic!("not the chooser: {m:?}"),
    }
}

#[test]
fn the_chooser_reorders_and_saves() {
    let dir = lab_tree();
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 160, 40);
    a.columns = vec![Column::Pids, Column::Cpu];
    send(&mut a, &mut c, key(KeyCode::F(2)));
    // the columns shown first, in their order, then the others
    let items = chooser_items(&a);
    assert_eq!(
        &items[..3],
        &[
            (Column::Pids, true),
            (Column::Cpu, true),
            (Column::Throttled, false)
        ]
    );
    // CPU% to the front: down onto it, then `[`
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, ch('['));
    assert_eq!(
        &chooser_items(&a)[..2],
        &[(Column::Cpu, true), (Column::Pids, true)]
    );
    // `[` at the top stays; `]` moves down
    send(&mut a, &mut c, ch('['));
    send(&mut a, &mut c, ch(']'));
    assert_eq!(
        &chooser_items(&a)[..2],
        &[(Column::Pids, true), (Column::Cpu, true)]
    );
    send(&mut a, &mut c, ch('['));
    // PSI% marked: it is where it stands in the list, last
    for _ in 0..10 {
        send(&mut a, &mut c, key(KeyCode::Down));
    }
    send(&mut a, &mut c, ch(' '));
    // no settings file (as --no-config): `s` says so and saves nothing
    let fx = send(&mut a, &mut c, ch('s'));
    assert!(!fx.iter().any(|e| matches!(e, Effect::SaveColumns { .. })));
    assert!(matches!(a.mode, Mode::Columns(_)));
    let st = a.status.clone().unwrap();
    assert_eq!(st.level, Level::Warn);
    assert!(st.text.contains("not saved"), "{}", st.text);
    // with one: applied, and the save asked for, in the list's order
    a.config_file = Some(PathBuf::from("/nowhere/config.toml"));
    let fx = send(&mut a, &mut c, ch('s'));
    assert_eq!(a.mode, Mode::Normal);
    let want = vec![Column::Cpu, Column::Pids, Column::Psi];
    assert_eq!(a.columns, want);
    assert!(
        fx.contains(&Effect::SaveColumns {
            path: PathBuf::from("/nowhere/config.toml"),
            columns: want.clone(),
        }),
        "{fx:?}"
    );
    // the tree shows them in that order
    let s = screen(&a, 160, 40);
    let head = s.lines().find(|l| l.contains("GROUP")).unwrap();
    let (cpu, pids, psi) = (
        head.find("CPU%").unwrap(),
        head.find("PIDS").unwrap(),
        head.find("PSI%").unwrap(),
    );
    assert!(cpu < pids && pids < psi, "{head}");
    // the outcome on the status line
    send(
        &mut a,
        &mut c,
        Msg::ColumnsSaved(Ok(PathBuf::from("/x/config.toml"))),
    );
    assert_eq!(
        a.status.clone().unwrap().text,
        "columns saved to /x/config.toml"
    );
    send(&mut a, &mut c, Msg::ColumnsSaved(Err("no room".into())));
    let st = a.status.clone().unwrap();
    assert_eq!(
        (st.level, st.text.as_str()),
        (Level::Error, "columns not saved: no room")
    );
    // sorting walks the columns in the order shown
    assert_eq!(a.sort, SortKey::Cpu);
    send(&mut a, &mut c, ch('>'));
    assert_eq!(a.sort, SortKey::Pids);
    send(&mut a, &mut c, ch('>'));
    assert_eq!(a.sort, SortKey::Psi);
}

#[test]
fn the_chooser_footer_names_its_keys() {
    assert_eq!(
        keymap::footer_text(Scope::Columns),
        "Up/Down move  Space/x toggle  [/] order  Enter apply  s save  Esc/^C cancel"
    );
}

/// assets/config.toml writes every setting at its built-in value.
#[test]
fn the_example_is_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/config.toml");
    let cfg = config::parse(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let i = cfg.interval.unwrap().value;
    assert_eq!(
        cgtop::app::parse_interval(&i.to_string()).unwrap(),
        Duration::from_secs(1)
    );
    let names: Vec<String> = cfg
        .columns
        .unwrap()
        .value
        .into_iter()
        .map(|n| n.value)
        .collect();
    let default: Vec<&str> = Column::DEFAULT.iter().map(|c| c.name()).collect();
    assert_eq!(names, default);
    // the app's own first sort
    let (a, _c) = app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24);
    assert_eq!(cfg.sort.unwrap().value, "cpu");
    assert_eq!(a.sort, SortKey::Cpu);
    assert_eq!(cfg.sort_descending, Some(a.sort_desc));
    assert_eq!(cfg.cpu, Some(config::CpuUnit::Core));
    assert!(!a.cpu_machine);
    let c = cfg.colours;
    assert!(c.enabled);
    for (slot, paint) in cgtop::ui::theme::default_paints() {
        let given = match slot {
            "warm" => c.warm,
            "hot" => c.hot,
            "bar" => c.bar,
            "frozen" => c.frozen,
            "matched" => c.matched,
            "key" => c.key,
            "column_header" => c.column_header,
            _ => panic!("{slot}"),
        };
        assert_eq!(given, Some(paint), "{slot}");
    }
    // so the file's theme is the built-in one
    assert_eq!(
        cgtop::ui::Theme::from_settings(None, &c),
        cgtop::ui::Theme::color()
    );
    assert!(cfg.keys.is_empty());
    // the commented example of [keys] is a good one
    let text = std::fs::read_to_string(&path).unwrap();
    let example: String = text
        .lines()
        .skip_while(|l| !l.starts_with("# [keys.main]"))
        .flat_map(|l| {
            [
                l.trim_start_matches('#').trim_start(),
                "
",
            ]
        })
        .collect();
    let ex = config::parse(example.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{example}"));
    assert_eq!(ex.keys.len(), 3);
    keymap::build(&ex.keys).unwrap_or_else(|e| panic!("{e}"));
}

// ---- the file on disk ----

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// A private directory (0700) for a settings file.
fn home() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

fn why(path: &Path) -> Why {
    load(path, euid(), true)
        .err()
        .map_or(Why::Missing, |e| e.why)
}

#[test]
fn a_good_file_loads_and_a_missing_one_is_the_defaults() {
    let d = home();
    let p = d.path().join("config.toml");
    assert_eq!(load(&p, euid(), false).unwrap(), config::Config::default());
    assert_eq!(why(&p), Why::Missing);
    std::fs::write(&p, "sort = \"name\"\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(load(&p, euid(), true).unwrap().sort.unwrap().value, "name");
    let e = load(&d.path().join("x/../config.toml"), euid(), true).unwrap_err();
    assert!(matches!(e.why, Why::Unsafe(_)), "{e}");
}

#[test]
fn hostile_files_are_refused_unread() {
    let d = home();
    let p = d.path().join("config.toml");
    // a symlink, even to a file root may read
    std::os::unix::fs::symlink("/etc/shadow", &p).unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("is a symbolic link"), "{e}");
    std::fs::remove_file(&p).unwrap();
    // written by others
    std::fs::write(&p, "interval = 2\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("can be written by others (mode 0666)"), "{e}");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    // its directory written by others
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("can be written by others (mode 0777)"), "{e}");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    // someone else's (as root: nobody's)
    if euid() == 0 {
        rustix::fs::chown(&p, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        let e = load(&p, euid(), true).unwrap_err().to_string();
        assert!(e.contains("owned by uid 65534, not root"), "{e}");
        rustix::fs::chown(&p, Some(rustix::fs::Uid::ROOT), None).unwrap();
    }
    // a hard link: another name could be anyone's file
    let other = d.path().join("other");
    std::fs::hard_link(&p, &other).unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("2 hard links"), "{e}");
    std::fs::remove_file(&other).unwrap();
    // a FIFO: refused at once, no wait for a writer
    std::fs::remove_file(&p).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let t = Instant::now();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("is not a regular file"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(2));
    std::fs::remove_file(&p).unwrap();
    // too big to be settings
    std::fs::write(&p, vec![b'#'; config::MAX_BYTES + 10]).unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(
        e.ends_with("larger than 1024 KiB: not a settings file"),
        "{e}"
    );
    // not UTF-8: the line
    std::fs::write(&p, b"interval = 2\n# caf\xe9\n").unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.ends_with("config.toml line 2: not UTF-8 text"), "{e}");
    // a control byte in a value comes back escaped
    std::fs::write(&p, "interval = 1\nsort = 3\n").unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("line 2: key `sort`"), "{e}");
    std::fs::write(&p, "[colours]\nwarm = \"\x1b]0;pwned\x07\"\n").unwrap();
    let e = load(&p, euid(), true).unwrap_err().to_string();
    assert!(e.contains("line 2: key `colours.warm`"), "{e}");
    assert!(!e.chars().any(char::is_control), "{e:?}");
}

#[test]
fn saving_keeps_the_rest_of_the_file() {
    let d = home();
    let dir = d.path().join("cgtop");
    let p = dir.join("config.toml");
    // none yet: the directory is made 0700, the file has the one line
    save_columns(&p, euid(), &["psi", "cpu"]).unwrap();
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "columns = [\"psi\", \"cpu\"]\n"
    );
    let names = |p: &Path| -> Vec<String> {
        load(p, euid(), true)
            .unwrap()
            .columns
            .unwrap()
            .value
            .into_iter()
            .map(|n| n.value)
            .collect()
    };
    assert_eq!(names(&p), ["psi", "cpu"]);
    // comments and other settings stay
    let mine = "# my settings\ninterval = 2 # slow box\ncolumns = [\"cpu\"]\n\n[keys.main]\nfreeze = \"F\"\n";
    std::fs::write(&p, mine).unwrap();
    save_columns(&p, euid(), &["mem", "pids"]).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        mine.replace("[\"cpu\"]", "[\"mem\", \"pids\"]")
    );
    // no temporary file left beside it
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["config.toml"]);
    // a file cgtop refuses is left as it is
    std::fs::write(&p, "bogus = 1\n").unwrap();
    let e = save_columns(&p, euid(), &["cpu"]).unwrap_err().to_string();
    assert!(e.contains("line 1: key `bogus`"), "{e}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "bogus = 1\n");
    // a symlink is not written through
    std::fs::remove_file(&p).unwrap();
    let target = d.path().join("target");
    std::fs::write(&target, "").unwrap();
    std::os::unix::fs::symlink(&target, &p).unwrap();
    let e = save_columns(&p, euid(), &["cpu"]).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

#[test]
fn a_ctrl_key_rebinding_dispatches_as_the_terminal_reports_it() {
    // Ctrl-letter rebinding dispatches as the terminal reports it
    let t = keymap::build(&[rebind("main", "kill", &["ctrl-k"], 2)]).unwrap();
    keymap::install(t);
    let ev = KeyEvent::new(KeyCode::Char('k'), KeyModifiers::CONTROL);
    assert_eq!(keymap::lookup(Scope::Main, &ev), Some(Action::Kill));
    let ev = KeyEvent::new(KeyCode::Char('K'), KeyModifiers::SHIFT);
    assert_eq!(keymap::lookup(Scope::Main, &ev), None);
    // F9 was kill's too: the line replaces both
    let ev = KeyEvent::new(KeyCode::F(9), KeyModifiers::NONE);
    assert_eq!(keymap::lookup(Scope::Main, &ev), None);
}
