//! Attack review of the settings file (attack10). As root under `sudo -E`
//! (or any environment that keeps the caller's HOME / XDG_CONFIG_HOME),
//! the environment names a directory of another user's. Its file must not
//! be obeyed (it could rebind keys), and that must not keep cgtop from
//! starting either: the place is refused and root's own is used, as the
//! action log does. Before, cgtop ended at once with exit 2 ("refused:
//! ... is owned by uid 65534, not root"), even with no file there at all.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn run(home: &std::path::Path, xdg: Option<&std::path::Path>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cgtop"));
    c.arg("--root")
        .arg(common::fixture("memory-limited"))
        .args(["-b", "-n", "1"])
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME");
    if let Some(x) = xdg {
        c.env("XDG_CONFIG_HOME", x);
    }
    c.output().unwrap()
}

/// The column titles of `-b`'s output.
fn titles(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.starts_with("GROUP"))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn another_users_config_place_is_passed_over_not_fatal() {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root (the case is root's)");
        return;
    }
    let nobody = 65534;
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(home.path(), Some(nobody), None).unwrap();

    // nothing there: cgtop starts
    let out = run(home.path(), None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = titles(&out);
    assert!(plain.contains("CPU%"), "{plain}");

    // that user's file, in the HOME and in an XDG_CONFIG_HOME of theirs:
    // not obeyed (its columns are not shown), and still no refusal to run
    let dir = home.path().join(".config/cgtop");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(&file, "columns = [\"pids\"]\n").unwrap();
    for p in [home.path().join(".config"), dir.clone(), file.clone()] {
        std::os::unix::fs::chown(&p, Some(nobody), None).unwrap();
    }
    for xdg in [None, Some(home.path().join(".config"))] {
        let out = run(home.path(), xdg.as_deref());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(titles(&out), plain, "the other user's columns were obeyed");
    }
}
