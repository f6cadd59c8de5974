//! A user who owns a delegated subtree decides when their groups vanish.
//! When the selected group goes, the view moves the selection to its
//! parent and says so; an action key pressed in that moment (the operator
//! aimed at the group that went: htop's F9 Enter in one go) must not open
//! its dialog for the parent, a bigger subtree the operator did not
//! choose. Real kernel, real binary in tmux: `cgtop-test-<pid>-<n>/a/b`,
//! b removed under the cursor, then `f` (freeze, which asks) and `K`.

use crate::common::sandbox::Sandbox;
use crate::common::tmux::Tmux;
use std::thread::sleep;
use std::time::Duration;

/// The screens a second after `key` was pressed with the cursor on `a`,
/// where it went when `a/b`, selected, vanished, and after it was
/// pressed again; and `a`'s path with a blank after it.
fn after_key_on_the_parent_of_a_vanished_group(key: &str) -> Option<(String, String, String)> {
    let sb = Sandbox::or_skip()?;
    sb.mkdir("a/b");
    let bin = env!("CARGO_BIN_EXE_cgtop");
    let t = Tmux::run(&format!("{bin} --no-config -d 0.2 {}/a", sb.rel), 100, 30);
    let b = format!("{}/a/b", sb.top);
    t.wait_for("──b ");
    // the cursor on b: the bar under the tree names it
    t.send(&["Down"]);
    t.wait_for(&format!("─ {b} "));
    std::fs::remove_dir(sb.dir("a/b")).unwrap();
    t.wait_for("b is gone; selected its parent a");
    t.send(&[key]);
    sleep(Duration::from_secs(1));
    let first = t.capture();
    // whatever opened closes; then the key again, on purpose this time
    t.send(&["Escape"]);
    sleep(Duration::from_millis(300));
    t.send(&[key]);
    sleep(Duration::from_secs(1));
    let second = t.capture();
    t.send(&["Escape"]);
    sleep(Duration::from_millis(200));
    Some((first, second, format!("{}/a ", sb.top)))
}

#[test]
fn freeze_pressed_as_the_selected_group_vanishes_does_not_ask_about_its_parent() {
    let Some((first, second, parent)) = after_key_on_the_parent_of_a_vanished_group("f") else {
        return;
    };
    let asks = |s: &str| s.contains(&format!("freeze {parent}"));
    assert!(
        !asks(&first) && first.contains("b is gone, nothing done"),
        "f, pressed for b as it vanished, asked to freeze its parent:\n{first}"
    );
    assert!(asks(&second), "f pressed again asks about a:\n{second}");
}

#[test]
fn kill_pressed_as_the_selected_group_vanishes_does_not_ask_about_its_parent() {
    let Some((first, second, parent)) = after_key_on_the_parent_of_a_vanished_group("K") else {
        return;
    };
    let asks = |s: &str| s.contains(&format!("every process in {parent}"));
    assert!(
        !asks(&first) && first.contains("b is gone, nothing done"),
        "K, pressed for b as it vanished, asked to kill in its parent:\n{first}"
    );
    assert!(asks(&second), "K pressed again asks about a:\n{second}");
}
