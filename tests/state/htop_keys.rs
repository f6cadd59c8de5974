//! The keys an htop or systemd-cgtop user types first: F3 search, F4
//! filter, F6 sort-by menu, M and P, and a status line (never silence)
//! for every key those tools use that cgtop binds otherwise or not at
//! all. On the pure-v2-systemd fixture (the tree sketched in app.rs):
//!
//! ```text
//!  0 /
//!  8 ├─ system.slice
//! 12 │  ├─ system-getty.slice
//! 13 │  │  └─ getty@tty1.service
//! 17 │  ├─ system-serial\x2dgetty.slice
//! 18 │  │  └─ serial-getty@ttyS0.service
//! 19 │  ├─ systemd-journald.service
//! 24 └─ user.slice
//! ```

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;
use crate::common::lab::{confirm, lab, on, writes};

use cgtop::app::keymap::{self, Action, Scope};
use cgtop::app::{Mode, Msg, SortKey};
use common::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn systemd() -> (cgtop::app::App, cgtop::source::collector::Collector) {
    app_on(&fixture("pure-v2-systemd"), pure_v2_mount(), 80, 24)
}

fn status(a: &cgtop::app::App) -> String {
    a.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn capital_p_and_m_sort_by_cpu_and_memory_highest_first() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('>'));
    assert_eq!(a.sort, SortKey::Memory);
    send(&mut a, &mut c, ch('r'));
    send(&mut a, &mut c, ch('P'));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Cpu, true));
    assert!(
        status(&a).starts_with("sorted by CPU%, highest first"),
        "{}",
        status(&a)
    );
    send(&mut a, &mut c, ch('<'));
    send(&mut a, &mut c, ch('M'));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Memory, true));
    // memory, biggest first: system.slice (104M) before user.slice (5.5M)
    let top: Vec<String> = outline(&a)
        .into_iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .collect();
    assert_eq!(top.first().map(String::as_str), Some("  system.slice"));
}

#[test]
fn f4_is_the_filter_as_slash() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, key(KeyCode::F(4)));
    assert_eq!(a.mode, Mode::Filter);
    type_text(&mut a, &mut c, "getty");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!((a.filter.as_str(), a.rows.len()), ("getty", 6));
}

#[test]
fn f3_goes_from_match_to_match_and_hides_nothing() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, key(KeyCode::F(3)));
    assert_eq!(a.mode, Mode::Search { miss: None });
    // typing goes to the first match from the cursor; n and q are letters
    type_text(&mut a, &mut c, "getty");
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
    assert_eq!(a.rows.len(), 31, "a search hides no row");
    let mut seen = Vec::new();
    for _ in 0..4 {
        send(&mut a, &mut c, key(KeyCode::F(3)));
        seen.push(selected(&a));
    }
    assert_eq!(
        seen,
        [
            "/system.slice/system-getty.slice/getty@tty1.service",
            "/system.slice/system-serial\\x2dgetty.slice",
            "/system.slice/system-serial\\x2dgetty.slice/serial-getty@ttyS0.service",
            // after the last: the first again
            "/system.slice/system-getty.slice",
        ]
    );
    // Enter stays on the group; F3 in the main view goes on with the text
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(selected(&a), "/system.slice/system-getty.slice");
    send(&mut a, &mut c, key(KeyCode::F(3)));
    assert_eq!(
        selected(&a),
        "/system.slice/system-getty.slice/getty@tty1.service"
    );
    // no match: said, and the cursor stays
    type_text(&mut a, &mut c, "-nothing");
    assert_eq!(
        a.mode,
        Mode::Search {
            miss: Some("no match")
        }
    );
    assert_eq!(
        selected(&a),
        "/system.slice/system-getty.slice/getty@tty1.service"
    );
    // Esc closes it; n is still the new group key of the main view
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(
        keymap::lookup(
            Scope::Main,
            &KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE)
        ),
        Some(Action::NewGroup)
    );
}

#[test]
fn f3_says_when_the_only_match_is_in_a_folded_branch() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "system.slice");
    send(&mut a, &mut c, key(KeyCode::Left));
    send(&mut a, &mut c, key(KeyCode::F(3)));
    type_text(&mut a, &mut c, "journald");
    assert_eq!(
        a.mode,
        Mode::Search {
            miss: Some("no match among the rows shown; * opens every branch")
        }
    );
    assert_eq!(selected(&a), "/system.slice");
}

#[test]
fn f6_menu_sorts_by_the_name_or_a_column_shown() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, key(KeyCode::F(6)));
    let Mode::SortBy(d) = &a.mode else {
        panic!("not the sort menu: {:?}", a.mode)
    };
    assert_eq!(
        d.items,
        [
            SortKey::Name,
            SortKey::Cpu,
            SortKey::Memory,
            SortKey::IoRead,
            SortKey::IoWrite,
            SortKey::Pids
        ]
    );
    // it opens on the sort in force
    assert_eq!(d.items[d.cursor], SortKey::Cpu);
    send(&mut a, &mut c, key(KeyCode::Down));
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!(
        (a.mode.clone(), a.sort, a.sort_desc),
        (Mode::Normal, SortKey::Memory, true)
    );
    // Esc closes without a change; the name sorts A to Z
    send(&mut a, &mut c, key(KeyCode::F(6)));
    send(&mut a, &mut c, key(KeyCode::Home));
    send(&mut a, &mut c, key(KeyCode::Up));
    send(&mut a, &mut c, key(KeyCode::Up));
    send(&mut a, &mut c, key(KeyCode::Esc));
    assert_eq!(a.sort, SortKey::Memory);
    send(&mut a, &mut c, key(KeyCode::F(6)));
    for _ in 0..3 {
        send(&mut a, &mut c, key(KeyCode::Up));
    }
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert_eq!((a.sort, a.sort_desc), (SortKey::Name, false));
}

#[test]
fn an_unbound_htop_key_names_cgtops_key_every_time() {
    let (mut a, mut c) = systemd();
    for (msg, want) in [
        (ch('I'), "I: htop's invert sort is r here"),
        (ch('Z'), "Z: htop's pause is p here"),
        (
            key(KeyCode::F(7)),
            "F7: htop's nice: a group's CPU share is cpu.weight, in the limits form (e)",
        ),
        (ch('\\'), "\\: htop's filter is / or F4 here"),
        (ch('7'), "7: htop's PID search is # here (a PID or a name)"),
        (
            ch('x'),
            "x: htop's file locks: none here; a group's processes are detail 4",
        ),
        (
            ch('i'),
            "i: sort by IO is in F6 (READ/s, WRITE/s); io.weight and io.max are in e",
        ),
        (
            ch(' '),
            "Space: no tags (htop), no refresh now (systemd-cgtop): interval d, pause p",
        ),
    ] {
        send(&mut a, &mut c, msg.clone());
        assert_eq!(status(&a), want);
        // every time
        a.status = None;
        send(&mut a, &mut c, msg);
        assert_eq!(status(&a), want);
    }
    // any other character says it is not a key
    send(&mut a, &mut c, ch('y'));
    assert_eq!(status(&a), "y: not a key here (?/F1 lists the keys)");
}

#[test]
fn a_key_bound_otherwise_says_the_htop_meaning_once_a_session() {
    let (mut a, mut c) = systemd();
    select(&mut a, &mut c, "system.slice");
    send(&mut a, &mut c, ch('k'));
    assert_eq!(selected(&a), "/sys-kernel-tracing.mount");
    assert_eq!(
        status(&a),
        "k: up here (vi keys); kill is K or F9, after a confirmation"
    );
    send(&mut a, &mut c, ch('k'));
    assert_eq!(status(&a), "", "said once a session");
    // c: what the key did here (the dialog, or why not), then what
    // systemd-cgtop's c is
    send(&mut a, &mut c, ch('c'));
    let s = status(&a);
    assert!(
        s.ends_with("; c: controllers here; sort by CPU is P or >"),
        "{s}"
    );
}

#[test]
fn htops_k_still_asks_before_a_kill() {
    let (mut a, mut c, _d) = lab();
    on(&mut a, &mut c, "batch");
    let fx = send(&mut a, &mut c, ch('K'));
    assert!(writes(&fx).is_empty(), "no write without the confirmation");
    let _ = confirm(&a);
    assert!(
        status(&a).starts_with("K: kill here, after a confirmation"),
        "{}",
        status(&a)
    );
}

#[test]
fn a_rebound_key_loses_its_hint() {
    use cgtop::model::files::config::Rebind;
    // the controllers moved to o: c is no longer theirs, and the hint
    // that says it is would lie
    let table = keymap::build(&[Rebind {
        scope: "main".into(),
        action: "controllers".into(),
        keys: vec!["o".into()],
        line: 1,
    }])
    .unwrap();
    keymap::install(table);
    let ev = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE);
    assert_eq!(keymap::hint_for(&ev), None);
    let ev = KeyEvent::new(KeyCode::Char('I'), KeyModifiers::SHIFT);
    assert_eq!(
        keymap::hint_for(&ev).unwrap().1,
        "I: htop's invert sort is r here"
    );
}

/// A hint names cgtop's key: it must be read whole on an 80-column
/// status line, not lose the key to the `…`.
#[test]
fn every_hint_fits_an_80_column_status_line() {
    for h in keymap::HINTS {
        let words = keymap::hint_words(h);
        assert!(
            cgtop::render::fit::width(&words) <= 80,
            "{} columns: {words}",
            cgtop::render::fit::width(&words)
        );
    }
}

/// `t` when live did nothing: what t is in htop (the tree) and
/// systemd-cgtop (sort by tasks) is said after it.
#[test]
fn t_when_live_says_htops_and_systemd_cgtops_t() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('t'));
    let s = status(&a);
    assert!(s.starts_with("live already"), "{s}");
    assert!(s.contains("htop's tree F5, sort by tasks F6"), "{s}");
    // the whole of it is on screen (a refusal borrows the footer's line)
    let shown = screen(&a, 80, 24);
    assert!(shown.contains("sort by tasks F6"), "{shown}");
}

/// `/` is htop's search but cgtop's filter: its prompt says which key
/// searches without filtering.
#[test]
fn the_filter_prompt_names_the_search_key() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('/'));
    let shown = screen(&a, 80, 24);
    assert!(
        shown.contains("filter: _  (search, no filter: F3)"),
        "{shown}"
    );
    type_text(&mut a, &mut c, "getty");
    assert!(!screen(&a, 80, 24).contains("search, no filter"));
}

/// A key that always says what it did (w names the groups, P says the
/// sort) says its htop or systemd-cgtop meaning the next time it is
/// pressed, in place of its own words; then never again.
#[test]
fn a_key_that_says_what_it_did_gives_its_hint_the_next_press() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('w'));
    let first = status(&a);
    assert!(!first.contains("htop"), "{first}");
    send(&mut a, &mut c, ch('w'));
    assert_eq!(
        status(&a),
        "w: who groups are here (htop's wrap of commands: none)"
    );
    send(&mut a, &mut c, ch('w'));
    assert!(!status(&a).contains("htop"), "once: {}", status(&a));
    send(&mut a, &mut c, ch('P'));
    assert!(status(&a).starts_with("sorted by CPU%"), "{}", status(&a));
    send(&mut a, &mut c, ch('P'));
    assert!(
        status(&a).starts_with("P: sort by CPU% here, as htop (systemd-cgtop's P"),
        "{}",
        status(&a)
    );
}

/// The keys of htop's man page (INTERACTIVE COMMANDS, and its help
/// screen's `e` `i` `#`) and of systemd-cgtop's (KEYS), as crossterm
/// reports them.
fn htop_and_systemd_cgtop_keys() -> Vec<KeyEvent> {
    let none = KeyModifiers::NONE;
    let mut keys: Vec<KeyEvent> = [
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Home,
        KeyCode::End,
    ]
    .into_iter()
    .chain((1..=10).map(KeyCode::F))
    .map(|c| KeyEvent::new(c, none))
    .collect();
    // htop's, then systemd-cgtop's (h, Space, q, p, t, c, m, i, %, +, -,
    // P, k and r are among htop's)
    keys.extend(
        "^$ cUslwxh?S/\\t<>][}{kqI+-*auNMPTFKHOpZm0123456789ei#%r"
            .chars()
            .map(|c| KeyEvent::new(KeyCode::Char(c), none)),
    );
    for c in ['k', 'j', 'h', 'l'] {
        keys.push(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT));
    }
    for c in ['a', 'e', 'l'] {
        keys.push(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    }
    for n in [3, 7, 8] {
        keys.push(KeyEvent::new(KeyCode::F(n), KeyModifiers::SHIFT));
    }
    keys
}

/// Every key htop or systemd-cgtop uses either means the same here or
/// has a hint that names cgtop's key: none is met with "not a key here"
/// or silence.
#[test]
fn every_htop_and_systemd_cgtop_key_means_the_same_or_has_a_hint() {
    // the same meaning as htop's (moves, help, setup, search, filter,
    // tree/list, sort keys, kill, quit, sort by memory, all folds, redraw;
    // Tab turns what is shown, as htop's turns its screen tabs)
    let same = |ev: &KeyEvent| {
        matches!(
            ev.code,
            KeyCode::Tab
                | KeyCode::Up
                | KeyCode::Down
                | KeyCode::PageUp
                | KeyCode::PageDown
                | KeyCode::Home
                | KeyCode::End
        ) || (ev.modifiers.is_empty()
            && matches!(ev.code, KeyCode::F(1 | 2 | 3 | 4 | 5 | 6 | 9 | 10)))
            || (ev.modifiers.is_empty()
                && matches!(ev.code, KeyCode::Char('?' | '<' | '>' | 'q' | 'M' | '*')))
            // `/` is the filter: its prompt names F3, the search (above)
            || ev.code == KeyCode::Char('/')
            || (ev.modifiers == KeyModifiers::CONTROL && ev.code == KeyCode::Char('l'))
    };
    let missing: Vec<String> = htop_and_systemd_cgtop_keys()
        .iter()
        .filter(|ev| !same(ev) && keymap::hint_for(ev).is_none())
        .map(|ev| format!("{:?} {:?}", ev.modifiers, ev.code))
        .collect();
    assert!(missing.is_empty(), "no hint for: {missing:?}");
}

/// An unbound key of htop's answers at once with cgtop's key; a bound
/// one (a detail page for htop's PID search digit, Left for its
/// sideways scroll) says it once a session.
#[test]
fn htops_other_keys_name_cgtops() {
    let (mut a, mut c) = systemd();
    for (msg, want) in [
        (
            Msg::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::ALT)),
            "M-j: htop's down is Down or j here",
        ),
        (
            ch('O'),
            "O: htop's hide containers: w shows whose groups they are; filter with / or F4",
        ),
        (
            ch('.'),
            ".: htop's sort column: the menu is F6; < and > step",
        ),
        (
            shift(KeyCode::F(3)),
            "S-F3: htop's search backwards: F3 goes round (after the last, the first)",
        ),
    ] {
        a.status = None;
        send(&mut a, &mut c, msg);
        assert_eq!(status(&a), want);
    }
    select(&mut a, &mut c, "system.slice");
    a.status = None;
    // the page is said first; the habit again, then the hint
    send(&mut a, &mut c, ch('2'));
    send(&mut a, &mut c, ch('2'));
    let s = status(&a);
    assert!(s.contains("htop's PID search is #"), "{s}");
}

/// htop's ^L: the screen drawn anew (and the terminal set up again).
#[test]
fn ctrl_l_draws_the_screen_anew() {
    let (mut a, mut c) = systemd();
    let fx = send(&mut a, &mut c, ctrl('l'));
    assert!(fx.contains(&cgtop::app::Effect::Redraw), "{fx:?}");
}

#[test]
fn a_write_key_with_no_row_shown_says_so_not_the_htop_habit() {
    let (mut a, mut c) = systemd();
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "zzzq");
    send(&mut a, &mut c, key(KeyCode::Enter));
    assert!(a.rows.is_empty());
    for k in [ch('K'), key(KeyCode::F(9)), ch('f')] {
        let fx = send(&mut a, &mut c, k);
        assert!(matches!(a.mode, Mode::Normal), "{:?}", a.mode);
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(
            status(&a),
            "no group shown to act on: the filter matches none (Esc clears it)"
        );
    }
}
