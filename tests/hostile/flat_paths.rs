//! The flat list names each row by its whole path, shortened from the
//! left when it is too wide (`…/system.slice/sshd.service`). A user who
//! owns a delegated subtree chooses the names below it, so they can nest
//! groups whose path ends like a system group's: the shortened rows must
//! still tell the two groups apart, or the operator reads the user's
//! busy group as the system's (and acts on the wrong row).

use super::common::batch;
use super::identities::groups;
use crate::common::sandbox::Sandbox;
use crate::common::tmux::Tmux;
use std::process::Command;
use std::time::Duration;

/// A service name long enough that, below any slice, the path passes
/// `-b`'s widest name column (96) and is shortened.
fn long_service() -> String {
    format!("{}.service", "payments-gateway-".repeat(5))
}

#[test]
fn a_users_path_cut_from_the_left_never_reads_as_another_groups() {
    let svc = long_service();
    let system = format!("system.slice/{svc}");
    let users =
        format!("user.slice/user-1000.slice/user@1000.service/app.slice/system.slice/{svc}");
    let tree = groups(&[system.clone(), users.clone()]);
    let text = batch::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["-b", "-n", "1", "-d", "0.1", "--flat", "--root"])
            .arg(tree.path()),
    );
    let names = batch::first_names(&text);
    // both groups are listed, and their rows read differently
    // a shortened row keeps at least the service name's end
    let end = &svc[svc.len() - 24..];
    let ends = |n: &&String| n.ends_with(end);
    let tails: Vec<&String> = names.iter().filter(ends).collect();
    assert_eq!(tails.len(), 2, "both groups listed:\n{text}");
    assert_ne!(
        tails[0], tails[1],
        "the system group and the user's look-alike show the same name:\n{text}"
    );
}

/// A uid no account on a test machine has: the owner of the delegated
/// subtree.
const OWNER: u32 = 64_126;

/// A sandbox on the host's cgroup2 holding the system's
/// `system.slice/SVC` for each of `services`, and `user`, delegated to
/// [`OWNER`] (the directory and its cgroup.procs chowned), below which
/// the owner, not root, made the look-alike
/// `user/user-1000.slice/user@1000.service/app.slice/system.slice/SVC`
/// of each; or `None` after `skipped:`.
fn delegated_look_alikes(services: &[String]) -> Option<Sandbox> {
    let sb = Sandbox::or_skip()?;
    if !crate::common::have("setpriv") {
        println!("skipped: setpriv is not installed (the owner's mkdir)");
        return None;
    }
    sb.mkdir("user");
    let user = sb.dir("user");
    for p in [user.clone(), user.join("cgroup.procs")] {
        std::os::unix::fs::chown(&p, Some(OWNER), Some(OWNER)).unwrap();
    }
    for svc in services {
        sb.mkdir(&format!("system.slice/{svc}"));
        let fake = user.join(format!(
            "user-1000.slice/user@1000.service/app.slice/system.slice/{svc}"
        ));
        let made = Command::new("setpriv")
            .args(["--reuid", &OWNER.to_string(), "--regid", &OWNER.to_string()])
            .args(["--clear-groups", "mkdir", "-p"])
            .arg(&fake)
            .status()
            .unwrap();
        assert!(made.success(), "the owner's mkdir -p {}", fake.display());
    }
    Some(sb)
}

/// The rows' name cells that end with `end`.
fn ending_with<'a>(names: &'a [String], end: &str) -> Vec<&'a String> {
    names.iter().filter(|n| n.ends_with(end)).collect()
}

#[test]
fn a_delegated_users_look_alike_reads_apart_in_a_flat_list_from_a_group() {
    // from a path that fits `-b`'s name column (96) to one whose own name
    // alone nearly fills it
    let services: Vec<String> = [2, 4, 5]
        .iter()
        .map(|n| format!("{}{n}.service", "payments-gateway-".repeat(*n)))
        .collect();
    let Some(sb) = delegated_look_alikes(&services) else {
        return;
    };
    let text = batch::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["-b", "-n", "1", "-d", "0.1", "--flat"])
            .arg(&sb.rel),
    );
    let names = batch::first_names(&text);
    for svc in &services {
        // a shortened row keeps at least the end of the service's name
        let rows = ending_with(&names, &svc[svc.len() - 12..]);
        assert_eq!(rows.len(), 2, "both groups of {svc} listed:\n{text}");
        assert_ne!(
            rows[0], rows[1],
            "the system's group and the owner's look-alike show the same name:\n{text}"
        );
    }
}

#[test]
fn a_delegated_users_look_alike_reads_apart_in_the_views_flat_list_at_80_columns() {
    let svc = "payments-gateway-payments-gateway.service".to_owned();
    let Some(sb) = delegated_look_alikes(std::slice::from_ref(&svc)) else {
        return;
    };
    if !crate::common::have("tmux") {
        println!("skipped: tmux is not installed");
        return;
    }
    let xdg = tempfile::tempdir().unwrap();
    let term = Tmux::run(
        &format!(
            "XDG_CONFIG_HOME={0} XDG_STATE_HOME={0} {1} -d 0.3 --flat {2}",
            xdg.path().display(),
            env!("CARGO_BIN_EXE_cgtop"),
            sb.rel
        ),
        80,
        24,
    );
    let end = &svc[svc.len() - 12..];
    let screen = term.wait_until("both service rows", Duration::from_secs(10), |s| {
        s.lines().filter(|l| l.contains(end)).count() >= 2
    });
    term.send(&["q"]);
    // each row's name cell: up to the service name's end
    let rows: Vec<&str> = screen
        .lines()
        .filter_map(|l| l.find(end).map(|i| l[..i + end.len()].trim()))
        .collect();
    assert_eq!(rows.len(), 2, "both groups listed:\n{screen}");
    assert_ne!(
        rows[0], rows[1],
        "the system's group and the owner's look-alike show the same name:\n{screen}"
    );
}
