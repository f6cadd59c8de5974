//! A container's label in a column too narrow for it (`prod-db · docker
//! 046c7a5b3d2e`): whoever starts a container chooses its name, and a
//! long one must not push the runtime's id off the row. Cut from the
//! right, two containers of the same long name read alike, and a name
//! that spells another container's label (`prod-db · docker <its id>`)
//! reads as that container once its own runtime and id are cut away.

use super::common::batch;
use super::identities::{docker_record, groups, put, A, B};
use std::process::Command;

/// `cgtop -b -n 1 --root TREE` with the identity sources under `ids`:
/// the rows of the first refresh, their names trimmed.
fn names(tree: &std::path::Path, ids: &std::path::Path) -> (Vec<String>, String) {
    let text = batch::stdout_of(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["-b", "-n", "1", "-d", "0.1", "--root"])
            .arg(tree)
            .env("CGTOP_IDENTITY_ROOT", ids),
    );
    let names = batch::first_names(&text);
    (names, text)
}

#[test]
fn two_containers_of_one_long_name_keep_their_ids_in_a_narrow_column() {
    // wider than -b's widest name column (96): every form of the label
    // is cut
    let long = format!("/{}", "checkout-worker-".repeat(8));
    let tree = groups(&[
        format!("system.slice/docker-{A}.scope"),
        format!("system.slice/docker-{B}.scope"),
    ]);
    let ids = tempfile::tempdir().unwrap();
    for id in [A, B] {
        put(
            ids.path(),
            &format!("var/lib/docker/containers/{id}/config.v2.json"),
            &docker_record(id, &long),
        );
    }
    let (names, text) = names(tree.path(), ids.path());
    // each container's row still names its own id (docker ps's 12)
    for id in [A, B] {
        assert!(
            names.iter().any(|n| n.ends_with(&id[..12])),
            "the id {} is cut off its row:\n{text}",
            &id[..12]
        );
    }
}
