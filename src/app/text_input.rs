//! One line of typed text with a cursor: every dialog and prompt that
//! edits text (the filter, the interval, the limits fields, the raw line,
//! a group or leaf name, a typed confirmation, the move picker's filter)
//! holds one, so that editing works the same everywhere.
//!
//! Pure: it knows edits, not keys. Which key asks for which [`Edit`] is a
//! row of the keymap (`Scope::Text`), and the view draws the text with
//! [`TextInput::window`].

use super::keymap::{self, Action, Scope};
use crate::render::fit;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_segmentation::UnicodeSegmentation;

/// Something done to the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Left,
    Right,
    WordLeft,
    WordRight,
    Home,
    End,
    /// Delete the character before the cursor, with its accents (a
    /// grapheme cluster: an emoji with its skin tone, a flag) (Backspace).
    Backspace,
    /// Delete the character under the cursor, with its accents (Del).
    Delete,
    /// Delete the word before the cursor (Ctrl-W).
    DeleteWord,
    /// Delete everything before the cursor (Ctrl-U, as in a shell).
    DeleteToStart,
    /// Delete everything from the cursor on (Ctrl-K, as in a shell).
    DeleteToEnd,
}

/// Refused: the text would be longer than the input's cap. The text is
/// left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    pub cap: usize,
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at most {} characters here: the rest was not taken",
            self.cap
        )
    }
}

/// The text, the cursor (a byte offset on a grapheme cluster's boundary:
/// the cursor steps over an accented letter, an emoji with its skin tone
/// or a flag as over one character) and the most characters it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextInput {
    text: String,
    cursor: usize,
    cap: usize,
}

impl TextInput {
    /// Names: NAME_MAX is 255 bytes; a group or leaf name longer than
    /// that is refused by the kernel anyway.
    pub const NAME: usize = 255;
    /// A value or line to write. Long enough for any cpuset list or
    /// io.max line, short enough that a dialog never grows past the
    /// screen and pushes its error out of sight.
    pub const LINE: usize = 1024;

    /// An empty input that takes at most `cap` characters.
    pub fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cursor: 0,
            cap,
        }
    }

    /// An input holding `text` (cut at the cap), the cursor at its end.
    pub fn with_text(cap: usize, text: &str) -> Self {
        let mut t = Self::new(cap);
        // a default text is ours, not typed: what does not fit is dropped
        let _ = t.paste(text);
        t
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The cursor as a character count from the start.
    pub fn cursor_chars(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }

    /// Inserts `c` at the cursor. A control character would reach the
    /// screen as it is, and so would a character that `model::tree::text`
    /// escapes everywhere else (a C1 control, a direction override, an
    /// invisible or look-alike blank, which a paste from a web page can
    /// carry): it is not taken (nor counted as refused).
    pub fn insert(&mut self, c: char) -> Result<(), TooLong> {
        if c.is_control() || crate::model::tree::text::is_escaped_char(c) {
            return Ok(());
        }
        if self.text.chars().count() >= self.cap {
            return Err(TooLong { cap: self.cap });
        }
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        // a letter typed before an accent: the cursor after the pair
        self.cursor = self.next(self.prev(self.cursor));
        Ok(())
    }

    /// Inserts `s` at the cursor, without its control characters (a
    /// pasted newline or escape); takes what fits and says when some did
    /// not.
    pub fn paste(&mut self, s: &str) -> Result<(), TooLong> {
        for c in s.chars() {
            self.insert(c)?;
        }
        Ok(())
    }

    /// Applies an edit; returns whether the text changed (a cursor move
    /// does not change it).
    pub fn apply(&mut self, e: Edit) -> bool {
        let before = self.cursor;
        match e {
            Edit::Left => self.cursor = self.prev(self.cursor),
            Edit::Right => self.cursor = self.next(self.cursor),
            Edit::WordLeft => self.cursor = self.word_start(self.cursor),
            Edit::WordRight => self.cursor = self.word_end(self.cursor),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.text.len(),
            Edit::Backspace => {
                let from = self.prev(self.cursor);
                self.text.drain(from..self.cursor);
                self.cursor = from;
                return from != before;
            }
            Edit::Delete => {
                let to = self.next(self.cursor);
                self.text.drain(self.cursor..to);
                return to != before;
            }
            Edit::DeleteWord => {
                let from = self.word_start(self.cursor);
                self.text.drain(from..self.cursor);
                self.cursor = from;
                return from != before;
            }
            Edit::DeleteToStart => {
                self.text.drain(..self.cursor);
                self.cursor = 0;
                return before != 0;
            }
            Edit::DeleteToEnd => {
                let after = self.text.len() - self.cursor;
                self.text.truncate(self.cursor);
                return after != 0;
            }
        }
        false
    }

    /// The start of the grapheme cluster before `at`.
    fn prev(&self, at: usize) -> usize {
        self.text
            .grapheme_indices(true)
            .map(|(i, _)| i)
            .take_while(|&i| i < at)
            .last()
            .unwrap_or(0)
    }

    /// The end of the grapheme cluster that `at` is in or starts.
    fn next(&self, at: usize) -> usize {
        self.text
            .grapheme_indices(true)
            .map(|(i, g)| i + g.len())
            .find(|&end| end > at)
            .unwrap_or(at)
    }

    /// The start of the word before `at`: blanks, then non-blanks, back.
    fn word_start(&self, at: usize) -> usize {
        let head = &self.text[..at];
        let trimmed = head.trim_end_matches(char::is_whitespace);
        trimmed.rfind(char::is_whitespace).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    /// The end of the word after `at`: blanks, then non-blanks, forward.
    fn word_end(&self, at: usize) -> usize {
        let tail = &self.text[at..];
        let skipped = tail.len() - tail.trim_start_matches(char::is_whitespace).len();
        let rest = &tail[skipped..];
        at + skipped + rest.find(char::is_whitespace).unwrap_or(rest.len())
    }

    /// What fits in `width` display columns (a CJK character takes two,
    /// as [`fit::width`] counts them) with the cursor in view: the text
    /// before the cursor, and the text from the cursor on (its first
    /// grapheme cluster is the one under the cursor). A text longer than
    /// the width scrolls rather than wraps, so that a long input never
    /// pushes a dialog's message out of sight; its cut never splits a
    /// cluster.
    pub fn window(&self, width: usize) -> (String, String) {
        let width = width.max(2);
        let (head, tail) = self.text.split_at(self.cursor);
        let before: Vec<(&str, usize)> = fit::clusters(head).collect();
        let mut after = fit::clusters(tail);
        // the cursor's cell: the cluster under it, or one column free at
        // the end for the cursor itself
        let under = after.next();
        let mut used = under.map_or(1, |(_, w)| w.max(1));
        let mut keep = 0;
        for (_, w) in before.iter().rev() {
            if used + w > width {
                break;
            }
            used += w;
            keep += 1;
        }
        let mut shown = under.map(|(g, _)| g.to_owned()).unwrap_or_default();
        let mut room = width.saturating_sub(used);
        for (g, w) in after {
            if w > room {
                break;
            }
            room -= w;
            shown.push_str(g);
        }
        (
            before[before.len() - keep..]
                .iter()
                .map(|(g, _)| *g)
                .collect(),
            shown,
        )
    }
}

/// What a key did to a text input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typed {
    /// The text changed.
    Changed,
    /// Only the cursor moved, or the key was an edit with nothing to do.
    Moved,
    /// A character was refused: the text is at its cap.
    Refused(TooLong),
    /// Pasted text was taken up to the cap and the rest refused: the
    /// text changed, and the operator is told it is not all there.
    Cut(TooLong),
    /// Not a key for the text.
    NotText,
}

/// The character `ev` types, if it types one: no Ctrl or Alt chord, no
/// control character (which would reach the screen as it is).
pub fn typed_char(ev: &KeyEvent) -> Option<char> {
    match ev.code {
        KeyCode::Char(c)
            if !ev
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                && !c.is_control() =>
        {
            Some(c)
        }
        _ => None,
    }
}

/// What reaches a text input: a key, or text pasted in one piece (the
/// terminal's bracketed paste), which is only ever text: a pasted newline
/// does not press Enter and a pasted `y` does not confirm.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    Key(&'a KeyEvent),
    Paste(&'a str),
}

impl TextInput {
    /// Applies a key or a paste.
    pub fn on_input(&mut self, input: Input<'_>) -> Typed {
        match input {
            Input::Key(ev) => self.on_key(ev),
            Input::Paste(s) => {
                let before = self.text.len();
                let taken = self.paste(s);
                let changed = self.text.len() != before;
                match (taken, changed) {
                    (Ok(()), true) => Typed::Changed,
                    (Ok(()), false) => Typed::Moved,
                    (Err(e), true) => Typed::Cut(e),
                    (Err(e), false) => Typed::Refused(e),
                }
            }
        }
    }

    /// Applies a key: an editing key of the keymap's text scope, or a
    /// typed character.
    pub fn on_key(&mut self, ev: &KeyEvent) -> Typed {
        if let Some(e) = keymap::lookup(Scope::Text, ev).and_then(Action::edit) {
            return if self.apply(e) {
                Typed::Changed
            } else {
                Typed::Moved
            };
        }
        match typed_char(ev).map(|c| self.insert(c)) {
            Some(Ok(())) => Typed::Changed,
            Some(Err(e)) => Typed::Refused(e),
            None => Typed::NotText,
        }
    }
}

impl std::fmt::Display for TextInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq<&str> for TextInput {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<str> for TextInput {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(s: &str) -> TextInput {
        TextInput::with_text(100, s)
    }

    /// The text with the cursor drawn as `|`.
    fn shown(t: &TextInput) -> String {
        let (a, b) = t.window(1000);
        format!("{a}|{b}")
    }

    #[test]
    fn typing_inserts_at_the_cursor() {
        let mut t = typed("ac");
        t.apply(Edit::Left);
        t.insert('b').unwrap();
        assert_eq!(shown(&t), "ab|c");
        t.apply(Edit::Home);
        t.insert('>').unwrap();
        t.apply(Edit::End);
        t.insert('<').unwrap();
        assert_eq!(shown(&t), ">abc<|");
    }

    #[test]
    fn control_characters_are_not_taken() {
        let mut t = typed("a");
        assert_eq!(t.insert('\u{1b}'), Ok(()));
        t.paste("b\nc\t").unwrap();
        assert_eq!(t.as_str(), "abc");
    }

    #[test]
    fn backspace_and_delete_work_on_characters_not_bytes() {
        let mut t = typed("über");
        t.apply(Edit::Home);
        assert!(t.apply(Edit::Delete));
        assert_eq!(shown(&t), "|ber");
        t.apply(Edit::End);
        assert!(t.apply(Edit::Backspace));
        assert_eq!(shown(&t), "be|");
        let mut t = typed("aé");
        assert!(t.apply(Edit::Backspace));
        assert_eq!(shown(&t), "a|");
        // nothing to delete: nothing changed
        t.apply(Edit::End);
        assert!(!t.apply(Edit::Delete));
        t.clear();
        assert!(!t.apply(Edit::Backspace));
        assert!(!t.apply(Edit::Left));
    }

    #[test]
    fn word_motions_skip_blanks_then_a_word() {
        let mut t = typed("rbps=2M  wbps=max riops=1");
        t.apply(Edit::WordLeft);
        assert_eq!(shown(&t), "rbps=2M  wbps=max |riops=1");
        t.apply(Edit::WordLeft);
        t.apply(Edit::WordLeft);
        assert_eq!(shown(&t), "|rbps=2M  wbps=max riops=1");
        t.apply(Edit::WordLeft);
        assert_eq!(shown(&t), "|rbps=2M  wbps=max riops=1");
        t.apply(Edit::WordRight);
        assert_eq!(shown(&t), "rbps=2M|  wbps=max riops=1");
        t.apply(Edit::WordRight);
        assert_eq!(shown(&t), "rbps=2M  wbps=max| riops=1");
        t.apply(Edit::End);
        t.apply(Edit::WordRight);
        assert_eq!(shown(&t), "rbps=2M  wbps=max riops=1|");
    }

    #[test]
    fn ctrl_w_deletes_the_word_before_the_cursor() {
        let mut t = typed("one two  ");
        assert!(t.apply(Edit::DeleteWord));
        assert_eq!(shown(&t), "one |");
        assert!(t.apply(Edit::DeleteWord));
        assert_eq!(shown(&t), "|");
        let mut t = typed("a bc d");
        t.apply(Edit::Left);
        t.apply(Edit::Left);
        assert!(t.apply(Edit::DeleteWord));
        assert_eq!(shown(&t), "a | d");
    }

    #[test]
    fn ctrl_u_and_ctrl_k_delete_to_either_end() {
        let mut t = typed("512M 1.5G");
        t.apply(Edit::WordLeft);
        assert!(t.apply(Edit::DeleteToStart));
        assert_eq!(shown(&t), "|1.5G");
        assert!(!t.apply(Edit::DeleteToStart));
        t.apply(Edit::Right);
        assert!(t.apply(Edit::DeleteToEnd));
        assert_eq!(shown(&t), "1|");
        assert!(!t.apply(Edit::DeleteToEnd));
        assert!(t.apply(Edit::DeleteToStart));
        assert!(t.is_empty());
    }

    #[test]
    fn the_cap_refuses_and_keeps_the_text() {
        let mut t = TextInput::new(3);
        assert_eq!(t.paste("abcd"), Err(TooLong { cap: 3 }));
        assert_eq!(t.as_str(), "abc");
        assert_eq!(t.insert('x'), Err(TooLong { cap: 3 }));
        assert_eq!(t.as_str(), "abc");
        t.apply(Edit::Backspace);
        assert_eq!(t.insert('x'), Ok(()));
        assert_eq!(t.as_str(), "abx");
        assert_eq!(
            TooLong { cap: 3 }.to_string(),
            "at most 3 characters here: the rest was not taken"
        );
        // a default longer than the cap is cut, not refused
        assert_eq!(TextInput::with_text(2, "leaf").as_str(), "le");
    }

    #[test]
    fn a_paste_is_text_at_the_cursor_and_says_when_it_was_cut() {
        let mut t = TextInput::with_text(6, "ad");
        t.apply(Edit::Left);
        assert_eq!(t.on_input(Input::Paste("bc")), Typed::Changed);
        assert_eq!(shown(&t), "abc|d");
        // only control characters: nothing to take, nothing refused
        assert_eq!(t.on_input(Input::Paste("\r\n\u{1b}")), Typed::Moved);
        assert_eq!(
            t.on_input(Input::Paste("xyz")),
            Typed::Cut(TooLong { cap: 6 })
        );
        assert_eq!(shown(&t), "abcxy|d");
        assert_eq!(
            t.on_input(Input::Paste("q")),
            Typed::Refused(TooLong { cap: 6 })
        );
        assert_eq!(t.as_str(), "abcxyd");
    }

    #[test]
    fn a_long_text_scrolls_to_keep_the_cursor_in_view() {
        let mut t = typed("abcdefghij");
        // the cursor at the end takes the last column
        assert_eq!(t.window(4), ("hij".into(), String::new()));
        t.apply(Edit::Home);
        assert_eq!(t.window(4), (String::new(), "abcd".into()));
        t.apply(Edit::Right);
        t.apply(Edit::Right);
        assert_eq!(t.window(4), ("ab".into(), "cd".into()));
        // a short text shows whole
        assert_eq!(typed("ab").window(10), ("ab".into(), String::new()));
    }

    #[test]
    fn the_window_counts_display_columns_not_characters() {
        // 双宽 (two columns each): the text and the cursor in 4 columns
        let mut t = typed("ab\u{53cc}\u{5bbd}cd");
        for w in 2..12 {
            t.apply(Edit::End);
            for _ in 0..7 {
                let (a, b) = t.window(w);
                // the cursor's cell: the cluster under it, or one column
                let cursor = usize::from(b.is_empty());
                assert!(
                    fit::width(&a) + fit::width(&b) + cursor <= w.max(2),
                    "{w}: {a}|{b}"
                );
                t.apply(Edit::Left);
            }
        }
        t.apply(Edit::End);
        assert_eq!(t.window(4), ("cd".into(), String::new()));
        assert_eq!(t.window(5), ("\u{5bbd}cd".into(), String::new()));
        t.apply(Edit::Home);
        assert_eq!(t.window(4), (String::new(), "ab\u{53cc}".into()));
        t.apply(Edit::Right);
        t.apply(Edit::Right);
        t.apply(Edit::Right);
        // the cursor on 宽: two columns for it, 双 before it
        assert_eq!(t.window(4), ("\u{53cc}".into(), "\u{5bbd}".into()));
    }

    #[test]
    fn the_cursor_steps_over_a_grapheme_cluster_whole() {
        // a conjunct and a Thai letter with its vowel (a skin tone and a
        // flag's halves are not taken: see below)
        let thumb = "\u{915}\u{94d}\u{937}";
        let flag = "\u{e01}\u{e34}";
        let mut t = typed(&format!("a{thumb}e\u{301}{flag}"));
        t.apply(Edit::Left);
        assert_eq!(shown(&t), format!("a{thumb}e\u{301}|{flag}"));
        t.apply(Edit::Left);
        assert_eq!(shown(&t), format!("a{thumb}|e\u{301}{flag}"));
        assert!(t.apply(Edit::Backspace));
        assert_eq!(shown(&t), format!("a|e\u{301}{flag}"));
        assert!(t.apply(Edit::Delete));
        assert_eq!(shown(&t), format!("a|{flag}"));
        // a letter typed before an accent takes it: the cursor after both
        let mut t = typed("\u{301}");
        t.apply(Edit::Home);
        t.insert('e').unwrap();
        assert_eq!(shown(&t), "e\u{301}|");
        // the cursor's cell in the window is the whole cluster
        let mut t = typed(flag);
        t.apply(Edit::Home);
        assert_eq!(t.window(10), (String::new(), flag.to_owned()));
        // a skin tone and a flag's halves, which names show escaped (the
        // terminal counts their cells otherwise), are not taken
        let mut t = TextInput::new(100);
        t.paste("a\u{1f44d}\u{1f3fd}\u{1f1eb}\u{1f1f7}b").unwrap();
        assert_eq!(t.as_str(), "a\u{1f44d}b");
    }

    #[test]
    fn keys_edit_through_the_keymap() {
        let key = |c, m| KeyEvent::new(c, m);
        let mut t = typed("ab cd");
        assert_eq!(
            t.on_key(&key(KeyCode::Char('w'), KeyModifiers::CONTROL)),
            Typed::Changed
        );
        assert_eq!(t.as_str(), "ab ");
        assert_eq!(
            t.on_key(&key(KeyCode::Char('b'), KeyModifiers::ALT)),
            Typed::Moved
        );
        assert_eq!(
            t.on_key(&key(KeyCode::Char('x'), KeyModifiers::NONE)),
            Typed::Changed
        );
        assert_eq!(shown(&t), "x|ab ");
        assert_eq!(
            t.on_key(&key(KeyCode::Enter, KeyModifiers::NONE)),
            Typed::NotText
        );
        assert_eq!(
            t.on_key(&key(KeyCode::Char('t'), KeyModifiers::CONTROL)),
            Typed::NotText
        );
        let mut t = TextInput::new(1);
        t.insert('a').unwrap();
        assert_eq!(
            t.on_key(&key(KeyCode::Char('b'), KeyModifiers::NONE)),
            Typed::Refused(TooLong { cap: 1 })
        );
    }

    #[test]
    fn compares_with_text() {
        assert_eq!(typed("x"), "x");
        assert!(typed("").is_empty());
    }
}
