//! A group whose owner cgtop cannot ask by its path in cgroup2 must not
//! be taken for root's: a user's `docker-<id>.scope` there would take the
//! name of the system's container of that id (and an owner's command in a
//! confirmation would name the real container). Two ways a user gets
//! there: on a hybrid host, a subtree handed to them in a v1 hierarchy
//! only (the memory hierarchy chowned, as delegation on v1 is done); and
//! anywhere, groups nested past PATH_MAX. Real kernel:
//! `cgtop-test-<pid>-<n>` groups chowned to an unused uid, removed on
//! drop; without root, cgroup2 or a v1 memory hierarchy the test prints
//! `skipped: <reason>`.

use super::identities::{docker_record, put, A};
use crate::common::sandbox_v1::V1Sandbox;
use serde_json::Value;
use std::process::{Command, Stdio};

/// A uid no account on a test machine has.
const USER: u32 = 64_123;

/// `cgtop --json -n 2 GROUP` on the host, the identity sources under
/// `ids`: the groups of the second refresh (the first frame may be a
/// partial read).
fn host_json(group: &str, ids: &std::path::Path) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["--json", "-n", "2", "-d", "0.1", group])
        .env("CGTOP_IDENTITY_ROOT", ids)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    v["groups"].as_array().unwrap().clone()
}

#[test]
fn a_users_group_in_a_v1_hierarchy_only_does_not_take_the_systems_container() {
    let Some(sb) = V1Sandbox::or_skip("v1owner", &["memory"]) else {
        return;
    };
    if !sb.hiers.iter().any(|h| h.v2) {
        return println!("skipped: not a hybrid host (no cgroup2 beside the v1 memory hierarchy)");
    }
    // the user's subtree, in the memory hierarchy only
    let top = sb.dir_of("memory", &sb.path(""));
    let fake = top.join(format!("docker-{A}.scope"));
    std::fs::create_dir(&fake).unwrap();
    for d in [&top, &fake] {
        std::os::unix::fs::chown(d, Some(USER), Some(USER)).unwrap();
    }
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/prod-db"),
    );
    let groups = host_json(&sb.rel, ids.path());
    let path = format!("/{}/docker-{A}.scope", sb.rel);
    let g = groups
        .iter()
        .find(|g| g["path"] == path.as_str())
        .unwrap_or_else(|| panic!("{path} not in {groups:?}"));
    let id = &g["identity"];
    assert_eq!(id["name"], Value::Null, "{id}");
    assert_eq!(
        (&id["kind"], &id["runtime"]),
        (&Value::Null, &Value::Null),
        "{id}"
    );
}

/// A user's groups nested past PATH_MAX (made one name at a time, as
/// the kernel allows): the owner of the deepest cannot be asked by its
/// path, and an owner that cannot be told must not count as root's. A
/// `docker-<id>.scope` down there must not take the system container's
/// name. Real kernel, cgroup2 (pure v2 or hybrid alike).
#[test]
fn a_users_group_past_path_max_does_not_take_the_systems_container() {
    use crate::common::sandbox::Sandbox;
    use rustix::fs::{mkdirat, openat, unlinkat, AtFlags, Mode, OFlags};
    use std::os::fd::OwnedFd;

    /// The chain below the sandbox's top, removed deepest first through
    /// descriptors (the sandbox's own cleanup goes by path).
    struct Chain {
        top: std::path::PathBuf,
        names: Vec<String>,
    }
    impl Chain {
        fn dirs(&self) -> Vec<OwnedFd> {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let mut fds = vec![openat(rustix::fs::CWD, &self.top, flags, Mode::empty()).unwrap()];
            for n in &self.names {
                match openat(fds.last().unwrap(), n.as_str(), flags, Mode::empty()) {
                    Ok(fd) => fds.push(fd),
                    Err(_) => break,
                }
            }
            fds
        }
    }
    impl Drop for Chain {
        fn drop(&mut self) {
            let fds = self.dirs();
            for (i, n) in self.names.iter().enumerate().rev() {
                if let Some(parent) = fds.get(i) {
                    let _ = unlinkat(parent, n.as_str(), AtFlags::REMOVEDIR);
                }
            }
        }
    }

    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    let top = sb.dir("");
    std::os::unix::fs::chown(&top, Some(USER), Some(USER)).unwrap();
    let level = "d".repeat(250);
    let mut chain = Chain {
        top: top.clone(),
        names: Vec::new(),
    };
    let docker = format!("docker-{A}.scope");
    // the group's path just past 4096 bytes (PATH_MAX), as cgtop asks by
    // path; cgtop's scan lists groups somewhat deeper than that
    let path_len = |n: usize| 1 + sb.rel.len() + n * (level.len() + 1) + 1 + docker.len();
    while path_len(chain.names.len()) <= 4096 {
        chain.names.push(level.clone());
    }
    chain.names.push(docker.clone());
    let mut fd = chain.dirs().remove(0);
    for n in &chain.names {
        mkdirat(&fd, n.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        fd = openat(&fd, n.as_str(), flags, Mode::empty()).unwrap();
        rustix::fs::fchown(
            &fd,
            Some(rustix::fs::Uid::from_raw(USER)),
            Some(rustix::fs::Gid::from_raw(USER)),
        )
        .unwrap();
    }
    let ids = tempfile::tempdir().unwrap();
    put(
        ids.path(),
        &format!("var/lib/docker/containers/{A}/config.v2.json"),
        &docker_record(A, "/prod-db"),
    );
    let groups = host_json(&sb.rel, ids.path());
    let g = groups
        .iter()
        .find(|g| {
            g["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(&format!("/{docker}")))
        })
        .unwrap_or_else(|| {
            panic!(
                "the deep group is not in the output ({} groups)",
                groups.len()
            )
        });
    assert!(g["path"].as_str().unwrap().len() > 4096);
    let id = &g["identity"];
    assert_eq!(id["name"], Value::Null, "{id}");
    assert_eq!(
        (&id["kind"], &id["runtime"]),
        (&Value::Null, &Value::Null),
        "{id}"
    );
    drop(chain);
}
