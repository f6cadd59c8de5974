//! F3's search moves the cursor as the text is typed (the first match
//! from the cursor). A user who owns a delegated subtree names their
//! groups: one named like the start of what the operator will search for
//! (`beta-x` for `beta-q`, the system's group folded away or not there)
//! catches the cursor on the way. When the whole text matches nothing,
//! the cursor must not be left on that group (Enter "stays", K would act
//! on it): it goes back to where the search started. Real kernel, real
//! binary in tmux.

use crate::common::sandbox::Sandbox;
use crate::common::tmux::Tmux;
use std::thread::sleep;
use std::time::Duration;

/// cgtop on a group `top` with the children alpha and beta-x, the cursor
/// on `top` (the sandbox, the pane, and `top`'s path as shown).
fn cursor_on_top() -> Option<(Sandbox, Tmux, String)> {
    let sb = Sandbox::or_skip()?;
    sb.mkdir("top/alpha");
    sb.mkdir("top/beta-x");
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let t = Tmux::run(
        &format!("{bin} --no-config -d 0.5 --sort name {}/top", sb.rel),
        100,
        30,
    );
    let top = format!("{}/top", sb.top);
    t.wait_for("──beta-x ");
    t.wait_for(&format!("─ {top} "));
    Some((sb, t, top))
}

#[test]
fn a_search_that_matches_nothing_leaves_the_cursor_where_it_started() {
    let Some((_sb, t, top)) = cursor_on_top() else {
        return;
    };
    t.send(&["F3"]);
    t.type_text("beta-q");
    t.wait_for("no match");
    t.send(&["Enter"]);
    sleep(Duration::from_millis(600));
    let screen = t.capture();
    t.send(&["q"]);
    assert!(
        screen.contains(&format!("─ {top} ")),
        "after a search for beta-q that matched nothing, the cursor is not where it started:\n{screen}"
    );
}

/// The `/` filter moves the selection to the first match as the text is
/// typed: the same catch, seen once Esc clears the filter.
#[test]
fn a_filter_that_matches_nothing_leaves_the_selection_where_it_started() {
    let Some((_sb, t, top)) = cursor_on_top() else {
        return;
    };
    t.send(&["/"]);
    t.type_text("beta-q");
    t.wait_for("no group matches");
    t.send(&["Enter"]);
    sleep(Duration::from_millis(300));
    t.send(&["Escape"]);
    t.wait_for("──beta-x ");
    sleep(Duration::from_millis(600));
    let screen = t.capture();
    t.send(&["q"]);
    assert!(
        screen.contains(&format!("─ {top} ")),
        "after a filter beta-q that matched nothing, the selection is not where it started:\n{screen}"
    );
}
