//! containers/storage, the store podman and CRI-O share.
//!
//! - podman: `<graphroot>/<driver>-containers/containers.json` (and
//!   `volatile-containers.json` beside it), one JSON array of every
//!   container: `id`, `names`, `image` (the image's id) and `metadata`, a
//!   JSON text of podman's own (`image-name`, `name`). The image's names
//!   are in `<driver>-images/images.json` (`id`, `names`). graphroot is
//!   /var/lib/containers/storage for root and
//!   `~/.local/share/containers/storage` for a rootless user.
//! - CRI-O: the OCI bundle of each container,
//!   `<runroot>/<driver>-containers/<id>/userdata/config.json` (runroot
//!   /run/containers/storage), whose annotations carry the kubelet's
//!   labels (`io.kubernetes.container.name`, `io.kubernetes.pod.name`,
//!   `io.kubernetes.pod.namespace`, `io.kubernetes.pod.uid`) and CRI-O's
//!   (`io.kubernetes.cri-o.ContainerID`, `io.kubernetes.cri-o.ImageName`,
//!   `io.kubernetes.cri-o.ContainerType`).

use super::read::{read_json, text, Dir, Miss};
use crate::model::identity::Identity;
use crate::source::hier::Hier;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The storage drivers whose directories are looked in, in this order.
pub const DRIVERS: [&str; 4] = ["overlay", "vfs", "btrfs", "zfs"];
/// The cap of containers.json and images.json: about 1.5 KiB a container,
/// so 32 MiB is 20,000 containers.
pub const CAP_STORE: usize = 32 << 20;
/// The cap of one OCI bundle's config.json (tens of KiB in practice).
pub const CAP_BUNDLE: usize = 1 << 20;

/// One container of containers.json.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub name: Option<String>,
    pub image_id: Option<String>,
    pub image_name: Option<String>,
}

/// A store's containers by id, and its images' names by id.
#[derive(Debug, Default)]
pub struct Store {
    pub containers: HashMap<String, Entry>,
    pub images: HashMap<String, String>,
    /// The file the containers came from.
    pub source: String,
}

/// Reads a store rooted at `root` (relative to `h`: "" for a directory
/// opened as the graphroot, `home/alice/.local/...` for a rootless user's
/// beneath `/`), shown as `shown`. With `owner`, only files that uid owns
/// are read.
pub fn load(
    h: &Hier,
    root: &Path,
    shown: &Path,
    owner: Option<u32>,
    errors: &mut u64,
) -> Result<Store, Miss> {
    let mut store = Store::default();
    let mut found = None;
    for d in DRIVERS {
        let dir = root.join(format!("{d}-containers"));
        let main = dir.join("containers.json");
        match read_json(h, &main, CAP_STORE, owner, errors) {
            Ok(v) => {
                add_containers(&mut store, &v);
                // the volatile store beside it (containers made with
                // --transient-store or volatile), where there is one
                if let Ok(v) = read_json(
                    h,
                    &dir.join("volatile-containers.json"),
                    CAP_STORE,
                    owner,
                    errors,
                ) {
                    add_containers(&mut store, &v);
                }
                store.source = shown.join(&main).to_string_lossy().into_owned();
                found = Some(d);
                break;
            }
            Err(Miss::Absent) => {}
            Err(m) => return Err(m),
        }
    }
    let Some(driver) = found else {
        return Err(Miss::Absent);
    };
    let images = root.join(format!("{driver}-images")).join("images.json");
    if let Ok(serde_json::Value::Array(list)) = read_json(h, &images, CAP_STORE, owner, errors) {
        for im in &list {
            let (Some(id), Some(name)) = (
                im.get("id").and_then(text),
                im.get("names")
                    .and_then(|n| n.as_array())
                    .and_then(|n| n.first())
                    .and_then(text),
            ) else {
                continue;
            };
            store.images.entry(id).or_insert(name);
        }
    }
    Ok(store)
}

/// The containers of one containers.json; the first of two with the same
/// id is kept (as containers/storage does).
fn add_containers(store: &mut Store, v: &serde_json::Value) {
    let Some(list) = v.as_array() else {
        return;
    };
    for c in list {
        let Some(id) = c.get("id").and_then(|i| i.as_str()) else {
            continue;
        };
        let meta: Option<serde_json::Value> = c
            .get("metadata")
            .and_then(|m| m.as_str())
            .and_then(|m| serde_json::from_str(m).ok());
        let name = c
            .get("names")
            .and_then(|n| n.as_array())
            .and_then(|n| n.first())
            .and_then(text)
            .or_else(|| meta.as_ref().and_then(|m| m.get("name")).and_then(text));
        let e = Entry {
            name,
            image_id: c.get("image").and_then(text),
            image_name: meta
                .as_ref()
                .and_then(|m| m.get("image-name"))
                .and_then(text),
        };
        store.containers.entry(id.to_owned()).or_insert(e);
    }
}

/// Fills a podman container's (or its conmon's) identity from `store`,
/// found by the id in the group's name.
pub fn fill_podman(id: &mut Identity, store: &Store) -> Result<(), Miss> {
    let e = store.containers.get(&id.id).ok_or(Miss::Absent)?;
    id.name.clone_from(&e.name);
    id.image = e.image_name.clone().or_else(|| {
        e.image_id
            .as_ref()
            .and_then(|i| store.images.get(i))
            .cloned()
    });
    id.source = Some(store.source.clone());
    Ok(())
}

/// The annotations CRI-O writes (see the module's text).
pub mod crio {
    pub const CONTAINER_NAME: &str = "io.kubernetes.container.name";
    pub const POD_NAME: &str = "io.kubernetes.pod.name";
    pub const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
    pub const POD_UID: &str = "io.kubernetes.pod.uid";
    pub const CONTAINER_ID: &str = "io.kubernetes.cri-o.ContainerID";
    pub const CONTAINER_TYPE: &str = "io.kubernetes.cri-o.ContainerType";
    pub const IMAGE_NAME: &str = "io.kubernetes.cri-o.ImageName";
}

/// Fills a CRI-O container's identity from its bundle's config.json in
/// the runroot `dir`. A file whose container id, or pod uid, is not the
/// one of the group's name is not used.
pub fn fill_crio(id: &mut Identity, dir: &mut Dir, errors: &mut u64) -> Result<(), Miss> {
    let shown = dir.path().to_path_buf();
    let h = dir.get()?;
    for d in DRIVERS {
        let rel: PathBuf = [
            format!("{d}-containers"),
            id.id.clone(),
            "userdata".into(),
            "config.json".into(),
        ]
        .iter()
        .collect();
        let v = match read_json(h, &rel, CAP_BUNDLE, None, errors) {
            Ok(v) => v,
            Err(Miss::Absent) => continue,
            Err(m) => return Err(m),
        };
        let a = v.get("annotations").cloned().unwrap_or_default();
        let get = |k: &str| a.get(k).and_then(text);
        if get(crio::CONTAINER_ID).is_some_and(|c| c != id.id) {
            return Err(Miss::Unreadable(
                "the file names another container: not used".into(),
            ));
        }
        let uid = get(crio::POD_UID);
        if let (Some(mine), Some(said)) = (&id.pod_uid, &uid) {
            if mine != said {
                return Err(Miss::Unreadable(
                    "the file names another pod: not used".into(),
                ));
            }
        }
        if get(crio::CONTAINER_TYPE).as_deref() == Some("sandbox") {
            id.labels.push(("container type".into(), "sandbox".into()));
        } else {
            id.name = get(crio::CONTAINER_NAME);
        }
        id.pod = get(crio::POD_NAME);
        id.namespace = get(crio::POD_NAMESPACE);
        if id.pod_uid.is_none() {
            id.pod_uid = uid;
        }
        id.image = get(crio::IMAGE_NAME);
        id.source = Some(shown.join(&rel).to_string_lossy().into_owned());
        return Ok(());
    }
    Err(Miss::Absent)
}
