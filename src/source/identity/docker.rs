//! docker: `<data-root>/containers/<id>/config.v2.json` (data-root
//! /var/lib/docker by default), the daemon's own record of a container:
//! `ID`, `Name` ("/web-1"), `Config.Image` (what was asked for:
//! "nginx:1.25"), `Config.Labels` (compose's project and service).

use super::read::{read_json, text, Dir, Miss};
use crate::model::identity::Identity;
use std::path::PathBuf;

/// The file name in the container's directory.
pub const FILE: &str = "config.v2.json";
/// The cap of one config.v2.json: a few KiB in practice (a container with
/// hundreds of environment variables and mounts: tens of KiB).
pub const CAP: usize = 1 << 20;

/// Labels shown, in this order, under their own keys.
pub const LABELS: [&str; 2] = ["com.docker.compose.project", "com.docker.compose.service"];

/// Fills `id` (a docker container's name-only identity: `id.id` is the 64
/// hex digits of its group's name) from its config.v2.json in `dir`
/// (`<data-root>/containers`). The group's name chose the file; a file
/// that says it is another container is not used.
pub fn fill(id: &mut Identity, dir: &mut Dir, errors: &mut u64) -> Result<(), Miss> {
    let rel = PathBuf::from(&id.id).join(FILE);
    let source = dir.path().join(&rel);
    let v = read_json(dir.get()?, &rel, CAP, None, errors)?;
    if let Some(other) = v.get("ID").and_then(|x| x.as_str()) {
        if other != id.id {
            return Err(Miss::Unreadable(
                "the file names another container: not used".into(),
            ));
        }
    }
    id.name = v
        .get("Name")
        .and_then(text)
        .map(|n| n.strip_prefix('/').map(str::to_owned).unwrap_or(n));
    let config = v.get("Config");
    id.image = config.and_then(|c| c.get("Image")).and_then(text);
    if let Some(labels) = config.and_then(|c| c.get("Labels")) {
        for k in LABELS {
            if let Some(val) = labels.get(k).and_then(text) {
                id.labels.push((k.to_owned(), val));
            }
        }
    }
    id.source = Some(source.to_string_lossy().into_owned());
    Ok(())
}
