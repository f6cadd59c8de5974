//! The real binary in a real terminal (tmux) at 80x24: the tree keeps at
//! least 15 rows, the detail is the strip, a terminal below the smallest
//! layout is said in one line and the view comes back with its selection.

use crate::common;

use common::tmux::Tmux;

/// Starts cgtop on the systemd fixture in a `w`x`h` tmux pane, with an
/// empty settings directory; `None` when tmux is missing.
fn start(w: u16, h: u16) -> Option<(Tmux, tempfile::TempDir)> {
    let term = Tmux::shell_or_skip(w, h)?;
    let xdg = tempfile::tempdir().unwrap();
    let root = common::fixture("pure-v2-systemd");
    let cmd = format!(
        "XDG_CONFIG_HOME={} {} --root {}",
        xdg.path().display(),
        env!("CARGO_BIN_EXE_cgtop"),
        root.display()
    );
    term.send(&[&cmd, "Enter"]);
    Some((term, xdg))
}

/// The tree's rows on screen: the lines between the column header and
/// the detail strip's rule.
fn tree_rows(screen: &str) -> usize {
    let lines: Vec<&str> = screen.lines().collect();
    let head = lines.iter().position(|l| l.starts_with("GROUP"));
    let strip = lines.iter().position(|l| l.contains("Enter: detail"));
    match (head, strip) {
        (Some(h), Some(s)) if s > h => lines[h + 1..s]
            .iter()
            .filter(|l| !l.trim().is_empty())
            .count(),
        _ => 0,
    }
}

/// The group the strip's rule names ("─ /system.slice ─── Enter: detail").
fn named(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains("Enter: detail"))
        .unwrap_or_default()
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn at_80x24_the_tree_shows_15_rows_and_a_small_terminal_is_said() {
    let Some((term, _xdg)) = start(80, 24) else {
        return;
    };
    // the first refresh fills the tree
    let s = term.wait_until("15 tree rows", common::tmux::WAIT, |s| tree_rows(s) >= 15);
    assert!(tree_rows(&s) >= 15, "{} tree rows:\n{s}", tree_rows(&s));
    // select a group, then shrink the terminal below the smallest layout
    term.send(&["j", "j", "j"]);
    let before = term.wait_until(
        "the cursor moved",
        std::time::Duration::from_secs(10),
        |s| !matches!(named(s).as_str(), "" | "/"),
    );
    let group = named(&before);
    assert!(term
        .cmd(&["resize-window", "-t", "cgtop", "-x", "50", "-y", "10"])
        .status()
        .is_ok_and(|s| s.success()));
    let small = term.wait_for("cgtop needs 60x12");
    assert!(small.contains("50x10"), "{small}");
    // still running: growing back shows the view on the same group
    assert!(term
        .cmd(&["resize-window", "-t", "cgtop", "-x", "80", "-y", "24"])
        .status()
        .is_ok_and(|s| s.success()));
    let back = term.wait_until("the view again", common::tmux::WAIT, |s| tree_rows(s) >= 15);
    assert_eq!(named(&back), group, "{back}");
    // Enter opens the detail in full
    term.send(&["Enter"]);
    term.wait_for("1 Overview");
    term.send(&["q"]);
}

#[test]
fn at_200x50_the_detail_sits_beside_the_tree() {
    let Some((term, _xdg)) = start(200, 50) else {
        return;
    };
    let s = term.wait_for("1 Overview");
    let head = s
        .lines()
        .find(|l| l.starts_with("GROUP"))
        .unwrap_or_default();
    // the detail's tabs are on the column header's line, right of it
    assert!(head.contains("1 Overview"), "{s}");
    assert!(!s.contains("Enter: detail"), "{s}");
    term.send(&["q"]);
}
