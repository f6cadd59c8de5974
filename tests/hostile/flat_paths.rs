//! The flat list names each row by its whole path, shortened from the
//! left when it is too wide (`…/system.slice/sshd.service`). A user who
//! owns a delegated subtree chooses the names below it, so they can nest
//! groups whose path ends like a system group's: the shortened rows must
//! still tell the two groups apart, or the operator reads the user's
//! busy group as the system's (and acts on the wrong row).

use super::common::batch;
use super::identities::groups;
use std::process::Command;

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
