//! Real containers named in cgtop's outputs (issue 24's proof with the real
//! runtimes): in the identity guest (`tests/vm/runtimes/run`: pure cgroup
//! v2, systemd 252 as PID 1, Debian bookworm's docker.io, podman,
//! containerd and runc laid over the guest's /usr), one container of each
//! kind runs from an image made offline, and `tests/vm/runtimes/guest-start.sh`
//! lists them in `$CGTOP_IDENTITY_CONTAINERS` (runtime, name, image, id,
//! pid and the group of /proc/PID/cgroup, a line each, as the runtimes
//! themselves reported them):
//!
//! - docker `shop-api-1` with compose's project and service labels;
//! - podman rootful `web-1`, and `shop-db` in the pod `shop-pod`;
//! - podman rootless `rootless-1` of the user alice (below
//!   `user@UID.service`);
//! - containerd `ctr-sleeper` through `ctr run` (namespace default);
//! - Kubernetes' layout through containerd's CRI plugin, made by the
//!   kubelet's calls without a kubelet (`tests/vm/runtimes/cri-pod.py`):
//!   the container `api` of the pod `api-7d9f` in the namespace `shop`
//!   (BestEffort, systemd driver), and the pod's own slice (`k8s-pod`).
//!
//! Each case checks that the group the kernel says holds the container's
//! process carries the container's name and image (and pod, labels) in
//! `cgtop --json`'s `identity` object, in `-b`'s table of that group, and in the
//! exporter's `cgroup_info`; every container is checked and every miss
//! listed before the case fails.  `#[ignore]`d on the host; outside the
//! identity guest it fails at once rather than passing unchecked.

use crate::common::prometheus::Serve;
use crate::vm_common::{figure, require_vm};
use serde_json::Value;
use std::process::Command;

/// One running container, as its runtime reported it.
#[derive(Debug)]
struct Container {
    runtime: String,
    name: String,
    image: String,
    id: String,
    /// The group path of its process, from /proc/PID/cgroup ("/system.slice/docker-<id>.scope").
    cgroup: String,
}

fn containers() -> Vec<Container> {
    require_vm();
    let path = std::env::var("CGTOP_IDENTITY_CONTAINERS").expect(
        "CGTOP_IDENTITY_CONTAINERS unset: these cases run in the identity guest, \
         through tests/vm/runtimes/run",
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let list: Vec<Container> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let [runtime, name, image, id, _pid, cgroup] = f[..] else {
                return None;
            };
            Some(Container {
                runtime: runtime.into(),
                name: name.into(),
                image: image.into(),
                id: id.into(),
                cgroup: cgroup.into(),
            })
        })
        .collect();
    // a runtime that could not start its container is a failure of the
    // proof, not a pass with fewer checks
    let want = [
        "docker",
        "podman",
        "podman-pod",
        "podman-rootless",
        "containerd",
        "cri",
        "k8s-pod",
    ];
    let missing: Vec<&str> = want
        .iter()
        .filter(|w| {
            !list
                .iter()
                .any(|c| c.runtime == **w && !c.cgroup.is_empty())
        })
        .copied()
        .collect();
    assert!(
        missing.is_empty(),
        "no running container of {missing:?} in {path} (see start.log beside it): {list:?}"
    );
    list
}

impl Container {
    /// The container's own group: the deepest group on its process's path
    /// whose name holds the container's id (podman's crun runs the process
    /// one level below `libpod-<id>.scope`, in `container`); the pod's slice
    /// for `k8s-pod`.
    fn group(&self) -> String {
        if self.id.is_empty() || self.runtime == "k8s-pod" {
            return self.cgroup.clone();
        }
        let parts: Vec<&str> = self.cgroup.split('/').collect();
        match parts.iter().rposition(|p| p.contains(self.id.as_str())) {
            Some(i) => parts[..=i].join("/"),
            None => self.cgroup.clone(),
        }
    }

    /// The podman pod id in the container's path
    /// (`machine-libpod_pod_<id>.slice`).
    fn podman_pod_id(&self) -> Option<&str> {
        let i = self.cgroup.find("libpod_pod_")? + "libpod_pod_".len();
        self.cgroup[i..].split('.').next()
    }

    /// The image name the runtime wrote to a file cgtop may read: none for
    /// `ctr` (only in containerd's bolt database), the CRI's
    /// `io.kubernetes.cri.image-name` annotation where this containerd
    /// writes it; the runtime's own image name for the others.
    fn image_on_file(&self) -> Option<String> {
        match self.runtime.as_str() {
            "containerd" | "cri" => {
                let ns = if self.runtime == "cri" {
                    "k8s.io"
                } else {
                    "default"
                };
                let bundle = format!(
                    "/run/containerd/io.containerd.runtime.v2.task/{ns}/{}/config.json",
                    self.id
                );
                let spec: Value =
                    serde_json::from_str(&std::fs::read_to_string(bundle).ok()?).ok()?;
                spec["annotations"]["io.kubernetes.cri.image-name"]
                    .as_str()
                    .map(str::to_string)
            }
            _ => Some(self.image.clone()),
        }
    }
}

fn cgtop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cgtop"))
}

/// The checks of one container against its group's `identity` object;
/// empty when everything matches.
fn identity_misses(c: &Container, id: &Value) -> Vec<String> {
    let mut miss = Vec::new();
    let s = |k: &str| id[k].as_str().unwrap_or("").to_string();
    if c.runtime == "k8s-pod" {
        // the pod's slice: the pod, by name, namespace and uid
        for (k, want) in [
            ("kind", "pod"),
            ("name", c.name.as_str()),
            ("namespace", "shop"),
        ] {
            if s(k) != want {
                miss.push(format!("{k} {:?}, want {want:?}", id[k]));
            }
        }
        if s("pod_uid") != c.id && s("id") != c.id {
            miss.push(format!(
                "pod uid {:?} / id {:?}, want {}",
                id["pod_uid"], id["id"], c.id
            ));
        }
        return miss;
    }
    if s("name") != c.name {
        miss.push(format!("name {:?}, want {:?}", id["name"], c.name));
    }
    // the image as the runtime names it (docker and podman may add a
    // registry prefix or a digest; the tag must be there); where no file
    // holds it (ctr), none rather than a wrong one
    match c.image_on_file() {
        Some(_) if !s("image").contains(&c.image) => {
            miss.push(format!("image {:?}, want {:?}", id["image"], c.image));
        }
        None if !id["image"].is_null() && !s("image").contains(&c.image) => {
            miss.push(format!(
                "image {:?}, want {:?} or none",
                id["image"], c.image
            ));
        }
        _ => {}
    }
    if s("kind") != "container" {
        miss.push(format!("kind {:?}, want container", id["kind"]));
    }
    let runtime = match c.runtime.as_str() {
        "docker" => "docker",
        "containerd" | "cri" => "containerd",
        _ => "podman",
    };
    if s("runtime") != runtime {
        miss.push(format!("runtime {:?}, want {runtime}", id["runtime"]));
    }
    if !c.id.is_empty() && c.runtime != "containerd" && !s("id").starts_with(&c.id) {
        miss.push(format!("id {:?}, want {}", id["id"], c.id));
    }
    // podman keeps a pod's name only in its database: the pod's name or
    // its id
    if c.runtime == "podman-pod" {
        let pod_id = c.podman_pod_id().unwrap_or("?");
        let pod = s("pod");
        let by_id = pod.len() >= 12 && pod_id.starts_with(&pod);
        if pod != "shop-pod" && !by_id {
            miss.push(format!("pod {:?}, want shop-pod or {pod_id}", id["pod"]));
        }
    }
    if c.runtime == "cri" && (s("pod") != "api-7d9f" || s("namespace") != "shop") {
        miss.push(format!(
            "pod {:?} namespace {:?}, want api-7d9f in shop",
            id["pod"], id["namespace"]
        ));
    }
    if c.runtime == "docker" {
        let labels = id["labels"].to_string();
        for want in [
            "com.docker.compose.project",
            "shop",
            "com.docker.compose.service",
            "api",
        ] {
            if !labels.contains(&format!("\"{want}\"")) {
                miss.push(format!("labels {labels} lack {want:?}"));
            }
        }
    }
    miss
}

#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn json_names_each_container_on_its_group() {
    let list = containers();
    let out = cgtop()
        .args(["--json", "-n", "2", "-d", "1"])
        .output()
        .expect("run cgtop --json");
    assert!(
        out.status.success(),
        "cgtop --json: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let final_line = text.lines().last().expect("a JSON line");
    let doc: Value = serde_json::from_str(final_line).expect("JSON");
    let groups = doc["groups"].as_array().expect("groups");
    let mut fails = Vec::new();
    for c in &list {
        let want = c.group();
        let Some(g) = groups
            .iter()
            .find(|g| g["path"].as_str() == Some(want.as_str()))
        else {
            fails.push(format!(
                "{} {}: no group {want} in --json",
                c.runtime, c.name
            ));
            continue;
        };
        let id = &g["identity"];
        figure(
            "identity_json",
            &format!("{} {} {want}: {id}", c.runtime, c.name),
        );
        if c.runtime == "cri-sandbox" {
            // the pod's sandbox ("pause") container: shown, not checked
            // (the pod is checked on its slice, `k8s-pod`)
            continue;
        }
        if id.is_null() {
            fails.push(format!("{} {}: identity null on {want}", c.runtime, c.name));
            continue;
        }
        for m in identity_misses(c, id) {
            fails.push(format!("{} {} on {want}: {m}", c.runtime, c.name));
        }
    }
    assert!(fails.is_empty(), "--json:\n{}", fails.join("\n"));
}

#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn batch_table_shows_each_container_name() {
    let list = containers();
    let mut fails = Vec::new();
    for c in list.iter().filter(|c| c.runtime != "cri-sandbox") {
        // the container's group alone (--depth 0), so that a name cannot
        // be found on another group's line ("api" is in "shop-api-1");
        // for `ctr`, whose group is named by the id the user chose, the
        // name is in the kernel's name already
        let group = c.group();
        let out = cgtop()
            .args(["-b", "-n", "2", "-d", "1", "--depth", "0", "--"])
            .arg(&group)
            .output()
            .expect("run cgtop -b");
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            fails.push(format!(
                "{} {}: cgtop -b {group}: {}",
                c.runtime,
                c.name,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        // a whole word of a line, quotes and brackets aside; a pod shows
        // as namespace/name, as kubectl names it
        let named = |l: &&str| {
            l.split_whitespace().any(|w| {
                let w = w.trim_matches(|ch: char| "()[]{}<>'\",:;".contains(ch));
                w == c.name
                    || (c.runtime == "k8s-pod"
                        && w.rsplit_once('/').is_some_and(|(_, n)| n == c.name))
            })
        };
        let lines: Vec<&str> = text.lines().filter(named).collect();
        figure(
            "identity_batch",
            &format!("{} {}: {lines:?}", c.runtime, c.name),
        );
        if lines.is_empty() {
            fails.push(format!(
                "{} {}: no line of `cgtop -b {group}` names it:\n{text}",
                c.runtime, c.name
            ));
        }
    }
    assert!(fails.is_empty(), "-b:\n{}", fails.join("\n"));
}

/// The value of label `key` in one sample line's `{...}`.
fn label<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!("{key}=\""))? + key.len() + 2;
    let rest = &line[start..];
    Some(&rest[..rest.find('"')?])
}

#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn metrics_cgroup_info_carries_container_and_image() {
    let list = containers();
    let dir = std::env::temp_dir().join(format!("cgtop-identity-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let serve = Serve::start(std::path::Path::new(env!("CARGO_BIN_EXE_cgtop")), &[], &dir)
        .expect("cgtop serve");
    let mut fails = Vec::new();
    // the identities are read after the first frame: give them a few scrapes
    let mut text = String::new();
    for _ in 0..10 {
        text = serve.metrics().expect("GET /metrics");
        if list
            .iter()
            .filter(|c| !c.runtime.starts_with("k8s-pod") && c.runtime != "cri-sandbox")
            .all(|c| text.contains(&format!("container=\"{}\"", c.name)))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    for c in &list {
        let info = text.lines().find(|l| {
            l.starts_with("cgroup_info{") && label(l, "cgroup") == Some(c.group().as_str())
        });
        figure(
            "identity_metrics",
            &format!("{} {}: {info:?}", c.runtime, c.name),
        );
        if c.runtime == "cri-sandbox" {
            continue;
        }
        let Some(info) = info else {
            fails.push(format!(
                "{} {}: no cgroup_info for {}",
                c.runtime,
                c.name,
                c.group()
            ));
            continue;
        };
        if c.runtime == "k8s-pod" {
            if label(info, "pod") != Some(c.name.as_str())
                || label(info, "namespace") != Some("shop")
            {
                fails.push(format!(
                    "{} {}: pod and namespace labels in {info}",
                    c.runtime, c.name
                ));
            }
            continue;
        }
        if c.runtime == "cri"
            && (label(info, "pod") != Some("api-7d9f") || label(info, "namespace") != Some("shop"))
        {
            fails.push(format!(
                "{} {}: pod and namespace labels in {info}",
                c.runtime, c.name
            ));
        }
        if label(info, "container") != Some(c.name.as_str()) {
            fails.push(format!(
                "{} {}: container label in {info}",
                c.runtime, c.name
            ));
        }
        if c.image_on_file().is_some()
            && !label(info, "image").is_some_and(|i| i.contains(&c.image))
        {
            fails.push(format!("{} {}: image label in {info}", c.runtime, c.name));
        }
        // podman keeps a pod's name only in its database: the name or the
        // id `podman pod ps` shows
        let pod_id = c.podman_pod_id().unwrap_or("?");
        let pod_ok = label(info, "pod")
            .is_some_and(|p| p == "shop-pod" || (p.len() >= 12 && pod_id.starts_with(p)));
        if c.runtime == "podman-pod" && !pod_ok {
            fails.push(format!("{} {}: pod label in {info}", c.runtime, c.name));
        }
    }
    drop(serve);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(fails.is_empty(), "/metrics:\n{}", fails.join("\n"));
}
