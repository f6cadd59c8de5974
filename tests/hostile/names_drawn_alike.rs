//! Group names that a terminal draws alike though their bytes differ:
//! one holding a character that draws nothing (a default-ignorable code
//! point: `a` U+1BCA0 `b` beside `ab`), and one spelt with combining
//! marks beside its precomposed spelling (`cafe` U+0301 beside `café`,
//! the Hangul jamo beside their syllable), and emoji parts whose cells
//! ratatui and the terminal count differently (a skin tone: tmux drew
//! `👍🏽` as `👍`; a flag's halves). Anyone a subtree is delegated
//! to names its groups, so an operator would pick one of two rows that
//! read the same. Real kernel groups in the sandbox, the real binary's
//! `-b`.

use super::common::batch;
use crate::common::sandbox::Sandbox;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthChar;

/// Each pair draws alike in a terminal when shown raw.
const NAMES: &[&str] = &[
    "ab",
    "a\u{1bca0}b",
    "a\u{fff0}b",
    "a\u{17b4}b",
    "caf\u{e9}",
    "cafe\u{301}",
    "\u{ac01}",
    "\u{1100}\u{1161}\u{11a8}",
    "\u{1f44d}",
    "\u{1f44d}\u{1f3fd}",
    "x\u{1f1fa}\u{1f1f8}",
];

#[test]
fn names_drawn_alike_show_apart_in_batch() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    for n in NAMES {
        sb.mkdir(&format!("top/{n}"));
    }
    let text = batch::stdout_of(batch::by_name_once(&[]).arg(format!("{}/top", sb.rel)));
    let shown: Vec<String> = batch::first_names(&text)
        .into_iter()
        .skip(1)
        .map(|n| n.trim_start_matches(['├', '└', '─', ' ']).to_owned())
        .collect();
    assert_eq!(shown.len(), NAMES.len(), "{text}");
    // every character shown takes a cell of its own: none draws nothing
    // or over the letter before it, so two names that differ show
    // different cells
    for n in &shown {
        assert!(
            n.chars().all(|c| c.width().is_some_and(|w| w > 0)),
            "{n:?} holds a character that takes no cell:\n{text}"
        );
    }
    // and each cell one character: no cluster of several, whose width
    // the terminal may count otherwise than the view did
    for n in &shown {
        assert!(
            n.graphemes(true).all(|g| g.chars().count() == 1),
            "{n:?} holds a cluster of several characters:\n{text}"
        );
    }
    let mut apart = shown.clone();
    apart.sort();
    apart.dedup();
    assert_eq!(apart.len(), shown.len(), "two rows read alike:\n{text}");
}
