//! containerd: the OCI bundle of each running task,
//! `/run/containerd/io.containerd.runtime.v2.task/<namespace>/<id>/config.json`.
//! Kubernetes' CRI plugin (namespace `k8s.io`) writes its annotations
//! there: `io.kubernetes.cri.container-type` ("sandbox" for the pod's
//! pause container, "container"), `container-name`, `sandbox-id`,
//! `sandbox-name`, `sandbox-namespace`, `sandbox-uid`, `image-name`. A
//! task of `ctr` or another client has no such annotations: its id (which
//! `ctr run` lets the user choose) and namespace are all there is, and
//! its group is `/<namespace>/<id>` (containerd's default cgroups path).
//! nerdctl copies its own container labels into the bundle's
//! annotations, the container's name among them ([`NERDCTL_NAME`]); its
//! group is `system.slice/nerdctl-<id>.scope` (systemd cgroup manager) or
//! `/<namespace>/<id>` (cgroupfs).

use super::read::{is_plain_name, read_json, text, Dir, Miss};
use crate::model::identity::{Identity, Kind, Runtime};
use std::collections::HashMap;
use std::path::PathBuf;

/// The cap of one config.json (tens of KiB in practice).
pub const CAP: usize = 1 << 20;
/// The annotation nerdctl names its containers by (`nerdctl run --name`,
/// or the name it makes up). Written when the task starts: a `nerdctl
/// rename` shows after the container's next start.
pub const NERDCTL_NAME: &str = "nerdctl/name";

/// The namespace of Kubernetes' CRI plugin, tried first.
pub const CRI_NAMESPACE: &str = "k8s.io";

pub mod ann {
    pub const CONTAINER_TYPE: &str = "io.kubernetes.cri.container-type";
    pub const CONTAINER_NAME: &str = "io.kubernetes.cri.container-name";
    pub const SANDBOX_ID: &str = "io.kubernetes.cri.sandbox-id";
    pub const SANDBOX_NAME: &str = "io.kubernetes.cri.sandbox-name";
    pub const SANDBOX_NAMESPACE: &str = "io.kubernetes.cri.sandbox-namespace";
    pub const SANDBOX_UID: &str = "io.kubernetes.cri.sandbox-uid";
    pub const IMAGE_NAME: &str = "io.kubernetes.cri.image-name";
}

/// The task directory's namespaces (listed once a pass), `k8s.io` first.
pub fn namespaces(dir: &mut Dir) -> Vec<String> {
    let Ok(h) = dir.get() else {
        return Vec::new();
    };
    let mut ns: Vec<String> = h
        .list(std::path::Path::new(""))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_dir)
        .filter_map(|e| e.name.into_string().ok())
        .filter(|n| is_plain_name(n))
        .collect();
    ns.sort_by_key(|n| (n != CRI_NAMESPACE, n.clone()));
    ns
}

/// Fills a container's identity from the first namespace of `nss` that
/// has a task of its id. A file whose cgroups path names another
/// container, whose sandbox id is not its own (a pod's sandbox), or whose
/// pod uid is not the one of the group's name, is not used.
pub fn fill(
    id: &mut Identity,
    dir: &mut Dir,
    nss: &[String],
    errors: &mut u64,
) -> Result<(), Miss> {
    if !is_plain_name(&id.id) {
        return Err(Miss::Absent);
    }
    let shown = dir.path().to_path_buf();
    let h = dir.get()?;
    for ns in nss {
        let rel: PathBuf = [ns.as_str(), id.id.as_str(), "config.json"]
            .iter()
            .collect();
        let v = match read_json(h, &rel, CAP, None, errors) {
            Ok(v) => v,
            Err(Miss::Absent) => continue,
            Err(m) => return Err(m),
        };
        if let Some(p) = v
            .pointer("/linux/cgroupsPath")
            .and_then(|p| p.as_str())
            .filter(|p| !p.is_empty())
        {
            if !p.contains(id.id.as_str()) {
                return Err(Miss::Unreadable(
                    "the file names another container: not used".into(),
                ));
            }
        }
        let a = v.get("annotations").cloned().unwrap_or_default();
        let get = |k: &str| a.get(k).and_then(text);
        let uid = get(ann::SANDBOX_UID);
        if let (Some(mine), Some(said)) = (&id.pod_uid, &uid) {
            if mine != said {
                return Err(Miss::Unreadable(
                    "the file names another pod: not used".into(),
                ));
            }
        }
        match get(ann::CONTAINER_TYPE).as_deref() {
            Some("sandbox") => {
                if get(ann::SANDBOX_ID).is_some_and(|s| s != id.id) {
                    return Err(Miss::Unreadable(
                        "the file names another container: not used".into(),
                    ));
                }
                id.labels.push(("container type".into(), "sandbox".into()));
            }
            Some(_) => id.name = get(ann::CONTAINER_NAME),
            None => id.name = get(NERDCTL_NAME),
        }
        id.pod = get(ann::SANDBOX_NAME);
        id.namespace = get(ann::SANDBOX_NAMESPACE);
        if id.pod_uid.is_none() {
            id.pod_uid = uid;
        }
        id.image = get(ann::IMAGE_NAME);
        if ns != CRI_NAMESPACE {
            id.labels.push(("containerd namespace".into(), ns.clone()));
        }
        if id.runtime == Some(Runtime::Kubernetes) {
            id.runtime = Some(Runtime::Containerd);
        }
        id.source = Some(shown.join(&rel).to_string_lossy().into_owned());
        return Ok(());
    }
    Err(Miss::Absent)
}

/// A group whose name no convention explains but whose last two
/// components are a namespace and a task of containerd's
/// (`/default/web`, from `ctr run`): a container, whose config.json says
/// its cgroups path is this very group's.
pub fn by_path(
    parent: &str,
    last: &str,
    dir: &mut Dir,
    nss: &[String],
    errors: &mut u64,
) -> Option<Identity> {
    if !(is_plain_name(last) && nss.iter().any(|n| n == parent)) {
        return None;
    }
    let shown = dir.path().to_path_buf();
    let h = dir.get().ok()?;
    let rel: PathBuf = [parent, last, "config.json"].iter().collect();
    let v = read_json(h, &rel, CAP, None, errors).ok()?;
    let want = format!("/{parent}/{last}");
    let p = v.pointer("/linux/cgroupsPath").and_then(|p| p.as_str())?;
    if !(p == want || p.ends_with(&want)) {
        return None;
    }
    let nerdctl = v
        .get("annotations")
        .and_then(|a| a.get(NERDCTL_NAME))
        .and_then(text);
    let mut id = Identity {
        kind: Some(Kind::Container),
        runtime: Some(Runtime::Containerd),
        id: last.to_owned(),
        // nerdctl's name; else `ctr run IMAGE NAME`: the container's id
        // is the name its owner gave it
        name: nerdctl.or_else(|| Some(last.to_owned())),
        ..Identity::default()
    };
    id.labels
        .push(("containerd namespace".into(), parent.to_owned()));
    id.source = Some(shown.join(&rel).to_string_lossy().into_owned());
    Some(id)
}

/// A Kubernetes pod as its sandbox's bundle names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pod {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub source: String,
}

/// At most this many task bundles are read for [`pods_by_uid`].
pub const MAX_SANDBOX_SCAN: usize = 10_000;

/// The pods of the CRI namespace by uid, from their sandboxes' bundles:
/// for a pod's group whose containers are not in view (`-b` of the pod's
/// slice alone), read once per resolver pass that needs it. A bundle whose
/// sandbox id is not its own directory's name is passed over.
pub fn pods_by_uid(dir: &mut Dir, errors: &mut u64) -> HashMap<String, Pod> {
    let mut out = HashMap::new();
    let shown = dir.path().to_path_buf();
    let Ok(h) = dir.get() else {
        return out;
    };
    let ids = h
        .list(std::path::Path::new(CRI_NAMESPACE))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_dir)
        .filter_map(|e| e.name.into_string().ok())
        .filter(|n| is_plain_name(n))
        .take(MAX_SANDBOX_SCAN);
    for id in ids {
        let rel: PathBuf = [CRI_NAMESPACE, id.as_str(), "config.json"].iter().collect();
        let Ok(v) = read_json(h, &rel, CAP, None, errors) else {
            continue;
        };
        let a = v.get("annotations").cloned().unwrap_or_default();
        let get = |k: &str| a.get(k).and_then(text);
        if get(ann::CONTAINER_TYPE).as_deref() != Some("sandbox")
            || get(ann::SANDBOX_ID).is_some_and(|s| s != id)
        {
            continue;
        }
        if let Some(uid) = get(ann::SANDBOX_UID) {
            out.entry(uid).or_insert(Pod {
                name: get(ann::SANDBOX_NAME),
                namespace: get(ann::SANDBOX_NAMESPACE),
                source: shown.join(&rel).to_string_lossy().into_owned(),
            });
        }
    }
    out
}
