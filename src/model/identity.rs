//! Who a group is: the container, pod, machine, session, user or unit
//! behind a cgroup's kernel name, in the names operators use.
//!
//! Two layers. [`Identity::of_name`] reads only the group's path (the
//! names systemd, the container runtimes and the kubelet give their
//! groups: `docker-<id>.scope`, `kubepods-burstable-pod<uid>.slice`,
//! `session-14.scope`, ...): pure, no I/O, always available, even in a
//! replay on another machine. The source layer (`source::identity`) then
//! fills in what the host's own files say (container name, image, pod,
//! namespace, labels, a unit's description, a session's user and remote
//! host) and says why where it could not.
//!
//! Everything here that came from a file is as hostile as a group name
//! (any user who can start a container chooses it): it is stored raw and
//! escaped where shown, like names (README "Names as shown"). An identity
//! labels a group; it never addresses one: every action still goes to
//! the group path it was found on.

use crate::model::{GroupPath, GroupSample};
use std::borrow::Cow;

/// What kind of thing owns the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A container's own group (its processes).
    Container,
    /// The runtime's monitor process of a container (podman/CRI-O conmon,
    /// `lxc.monitor.*`), not the container.
    Monitor,
    /// A Kubernetes pod's group (its containers are below it).
    Pod,
    /// A podman pod's slice.
    PodmanPod,
    /// A systemd-machined machine (nspawn, VMs registered with machined).
    Machine,
    /// A login session (`session-N.scope`).
    Session,
    /// A user's slice (`user-UID.slice`).
    User,
    /// A user's service manager (`user@UID.service`).
    UserManager,
    /// Any other systemd unit (`.service`, `.scope`, `.slice`).
    Unit,
}

impl Kind {
    /// The word shown for the kind.
    pub fn word(self) -> &'static str {
        match self {
            Self::Container => "container",
            Self::Monitor => "monitor",
            Self::Pod => "pod",
            Self::PodmanPod => "podman pod",
            Self::Machine => "machine",
            Self::Session => "session",
            Self::User => "user",
            Self::UserManager => "user manager",
            Self::Unit => "unit",
        }
    }
}

/// Who made a container's group, as its name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Runtime {
    Docker,
    Podman,
    /// containerd, directly (`ctr`, nerdctl) or as Kubernetes' CRI
    /// (`cri-containerd-<id>.scope`).
    Containerd,
    Crio,
    Lxc,
    /// A container of a Kubernetes pod under the cgroupfs driver
    /// (`/kubepods/<qos>/pod<uid>/<id>`): the name does not say which
    /// runtime; its metadata may.
    Kubernetes,
}

impl Runtime {
    pub fn word(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman => "podman",
            Self::Containerd => "containerd",
            Self::Crio => "cri-o",
            Self::Lxc => "lxc",
            Self::Kubernetes => "kubernetes",
        }
    }
}

/// A Kubernetes pod's QoS class, from the kubelet's group names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Qos {
    Guaranteed,
    Burstable,
    BestEffort,
}

impl Qos {
    pub fn word(self) -> &'static str {
        match self {
            Self::Guaranteed => "Guaranteed",
            Self::Burstable => "Burstable",
            Self::BestEffort => "BestEffort",
        }
    }
}

/// Who a group is. Fields from the group's name are set by
/// [`Identity::of_name`]; the rest come from the host's files (the source
/// layer), `None` where not known.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Identity {
    pub kind: Option<Kind>,
    pub runtime: Option<Runtime>,
    /// The id in the group's name: a container id (64 hex digits), a pod
    /// uid, a session id, a uid, a machine or LXC container name (systemd
    /// escapes decoded), a unit name.
    pub id: String,
    /// The name people use: a container's name, a pod's name, a user's
    /// login name, a machine's name.
    pub name: Option<String>,
    pub image: Option<String>,
    /// The pod a container is in (Kubernetes or podman).
    pub pod: Option<String>,
    pub namespace: Option<String>,
    pub pod_uid: Option<String>,
    pub qos: Option<Qos>,
    /// Labels worth showing (compose project and service, ...), in the
    /// order found; raw, escaped where shown.
    pub labels: Vec<(String, String)>,
    /// A systemd unit's Description.
    pub description: Option<String>,
    /// A session's user, tty or seat, and remote host.
    pub user: Option<String>,
    pub tty: Option<String>,
    pub remote_host: Option<String>,
    /// The file the names came from.
    pub source: Option<String>,
    /// Why the metadata could not be read ("docker metadata not readable:
    /// not root"); the name-only fields stay.
    pub unreadable: Option<String>,
    /// The resolver (`source::identity`) read this identity from the
    /// runtime's own record of it (docker's, podman's, containerd's,
    /// CRI-O's files for this id) for a group that root owns, it and
    /// every directory above it: only then may a runtime's command name
    /// the container (`model::write::owner`). A name alone is anyone's
    /// to choose in a delegated subtree: `docker-<id>.scope` made there
    /// would otherwise have root told to `docker kill` the real one.
    /// Never from a recording, nor in `--json`.
    #[serde(skip)]
    pub vouched: bool,
}

/// The length ids are shortened to where shown, as `docker ps` does.
pub const SHORT_ID: usize = 12;

impl Identity {
    /// What the group's path alone says, or `None` for a name no runtime
    /// or systemd convention explains. The last component decides; the
    /// parents matter only for the cgroupfs drivers' layouts
    /// (`/docker/<id>`, `/kubepods/<qos>/pod<uid>/<id>`).
    // unit suffixes are systemd's, in its own case
    #[allow(clippy::case_sensitive_file_extension_comparisons)]
    pub fn of_name(path: &GroupPath) -> Option<Self> {
        let comps: Vec<&[u8]> = path.components().collect();
        let (&last, parents) = comps.split_last()?;
        let last = std::str::from_utf8(last).ok()?;
        let name_at = |i: usize| {
            parents
                .len()
                .checked_sub(i)
                .and_then(|j| std::str::from_utf8(parents[j]).ok())
        };
        let (parent, grandparent) = (name_at(1), name_at(2));
        let mut id = Self::default();
        if let Some(rest) = last.strip_suffix(".scope") {
            let container = |rt, kind, hex: &str| {
                is_container_id(hex).then(|| Self {
                    kind: Some(kind),
                    runtime: Some(rt),
                    id: hex.to_owned(),
                    ..Self::default()
                })
            };
            let found = if let Some(h) = rest.strip_prefix("docker-") {
                container(Runtime::Docker, Kind::Container, h)
            } else if let Some(h) = rest.strip_prefix("libpod-conmon-") {
                container(Runtime::Podman, Kind::Monitor, h)
            } else if let Some(h) = rest.strip_prefix("libpod-") {
                container(Runtime::Podman, Kind::Container, h)
            } else if let Some(h) = rest.strip_prefix("cri-containerd-") {
                container(Runtime::Containerd, Kind::Container, h)
            } else if let Some(h) = rest.strip_prefix("nerdctl-") {
                // nerdctl's containers under the systemd cgroup manager
                // (`system.slice:nerdctl:<id>`): containerd's tasks
                container(Runtime::Containerd, Kind::Container, h)
            } else if let Some(h) = rest.strip_prefix("crio-conmon-") {
                container(Runtime::Crio, Kind::Monitor, h)
            } else if let Some(h) = rest.strip_prefix("crio-") {
                container(Runtime::Crio, Kind::Container, h)
            } else if let Some(n) = rest.strip_prefix("session-") {
                (!n.is_empty()).then(|| Self {
                    kind: Some(Kind::Session),
                    id: n.to_owned(),
                    ..Self::default()
                })
            } else if let Some(m) = rest.strip_prefix("machine-") {
                (!m.is_empty()).then(|| Self {
                    kind: Some(Kind::Machine),
                    id: unescape_systemd(m),
                    ..Self::default()
                })
            } else {
                None
            };
            if let Some(mut f) = found {
                // a podman pod's containers sit in its slice; podman keeps
                // the pod's name only in its database, so the pod is
                // named by its id, as `podman pod ps` shows it
                if f.runtime == Some(Runtime::Podman) {
                    f.pod = parent
                        .and_then(podman_pod_id)
                        .map(|p| p[..SHORT_ID].to_owned());
                }
                if let Some(pod) = parent.and_then(|p| kube_pod(p, grandparent)) {
                    f.pod_uid = Some(pod.0);
                    f.qos = Some(pod.1);
                }
                return Some(f);
            }
            id.kind = Some(Kind::Unit);
            last.clone_into(&mut id.id);
            return Some(id);
        }
        if let Some((uid, qos)) = kube_pod(last, parent) {
            return Some(Self {
                kind: Some(Kind::Pod),
                runtime: None,
                id: uid.clone(),
                pod_uid: Some(uid),
                qos: Some(qos),
                ..Self::default()
            });
        }
        if let Some(rest) = last.strip_suffix(".slice") {
            if let Some(uid) = rest.strip_prefix("user-").filter(|u| is_number(u)) {
                return Some(Self {
                    kind: Some(Kind::User),
                    id: uid.to_owned(),
                    ..Self::default()
                });
            }
            if let Some(p) = podman_pod_id(last) {
                return Some(Self {
                    kind: Some(Kind::PodmanPod),
                    runtime: Some(Runtime::Podman),
                    id: p.to_owned(),
                    ..Self::default()
                });
            }
            id.kind = Some(Kind::Unit);
            last.clone_into(&mut id.id);
            return Some(id);
        }
        if let Some(uid) = last
            .strip_prefix("user@")
            .and_then(|r| r.strip_suffix(".service"))
            .filter(|u| is_number(u))
        {
            return Some(Self {
                kind: Some(Kind::UserManager),
                id: uid.to_owned(),
                ..Self::default()
            });
        }
        // unit suffixes are case-sensitive (systemd.unit(5))
        if [".service", ".socket", ".mount"]
            .iter()
            .any(|s| last.ends_with(s))
        {
            id.kind = Some(Kind::Unit);
            last.clone_into(&mut id.id);
            return Some(id);
        }
        for (prefix, kind) in [
            ("lxc.payload.", Kind::Container),
            ("lxc.monitor.", Kind::Monitor),
        ] {
            if let Some(n) = last.strip_prefix(prefix).filter(|n| !n.is_empty()) {
                return Some(Self {
                    kind: Some(kind),
                    runtime: Some(Runtime::Lxc),
                    id: n.to_owned(),
                    name: Some(n.to_owned()),
                    ..Self::default()
                });
            }
        }
        // the cgroupfs drivers: /docker/<id>, /kubepods/<qos>/pod<uid>/<id>
        if is_container_id(last) {
            // podman's cgroupfs manager: a pod's group is its id below
            // the pods' parent (`/libpod_parent/<id>`)
            if parent == Some("libpod_parent") {
                return Some(Self {
                    kind: Some(Kind::PodmanPod),
                    runtime: Some(Runtime::Podman),
                    id: last.to_owned(),
                    ..Self::default()
                });
            }
            if parent == Some("docker") {
                return Some(Self {
                    kind: Some(Kind::Container),
                    runtime: Some(Runtime::Docker),
                    id: last.to_owned(),
                    ..Self::default()
                });
            }
            if let Some((uid, qos)) = parent.and_then(|p| kube_pod(p, grandparent)) {
                return Some(Self {
                    kind: Some(Kind::Container),
                    runtime: Some(Runtime::Kubernetes),
                    id: last.to_owned(),
                    pod_uid: Some(uid),
                    qos: Some(qos),
                    ..Self::default()
                });
            }
        }
        None
    }

    /// The id as shown: container ids cut to [`SHORT_ID`] characters like
    /// `docker ps`; other ids whole.
    pub fn short_id(&self) -> &str {
        if is_container_id(&self.id) && self.id.len() > SHORT_ID {
            &self.id[..SHORT_ID]
        } else {
            &self.id
        }
    }

    /// The optional texts, in one fixed order (the recording's, and what
    /// a recording's memory counts).
    pub fn optional_texts(&self) -> [&Option<String>; 11] {
        [
            &self.name,
            &self.image,
            &self.pod,
            &self.namespace,
            &self.pod_uid,
            &self.description,
            &self.user,
            &self.tty,
            &self.remote_host,
            &self.source,
            &self.unreadable,
        ]
    }

    /// One word for what it is: "docker container", "pod", "session", ...
    pub fn what(&self) -> String {
        match (self.runtime, self.kind) {
            (Some(rt), Some(Kind::Container)) => format!("{} container", rt.word()),
            (Some(rt), Some(Kind::Monitor)) => format!("{} monitor", rt.word()),
            (_, Some(k)) => k.word().to_owned(),
            (Some(rt), None) => rt.word().to_owned(),
            (None, None) => String::new(),
        }
    }
}

/// A group's identity as every view shows it: the one the source layer
/// resolved (`GroupSample::identity`), else what the group's name alone
/// says ([`Identity::of_name`], computed here: a few hundred nanoseconds,
/// no I/O), `None` for a name no convention explains. The one way a view
/// asks, so that a replay of a recording without identities, and a run
/// before the resolver filled them, show the same names.
pub fn of_group(g: &GroupSample) -> Option<Cow<'_, Identity>> {
    match &g.identity {
        Some(i) => Some(Cow::Borrowed(i.as_ref())),
        None => Identity::of_name(&g.path).map(Cow::Owned),
    }
}

/// Whether `needle` (lowercase, as the filter's) is in the text of one of
/// the fields an operator knows a group by: the name, image, pod,
/// namespace or session user (each escaped as shown, case aside), or the
/// start of its id (a `docker ps` id prefix). What the `/` filter, F3
/// and the move picker match beside the group's own name.
pub fn matches(id: &Identity, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let has = |s: &Option<String>| {
        s.as_deref().is_some_and(|s| {
            crate::model::tree::text::escape_str(s)
                .to_lowercase()
                .contains(needle)
        })
    };
    let pod = match id.kind {
        Some(Kind::Pod | Kind::PodmanPod) => id.pod.as_ref().or(id.name.as_ref()),
        _ => id.pod.as_ref(),
    };
    id.id.to_lowercase().starts_with(needle)
        || needle.contains(' ') && label_words_match(id, needle)
        || has(&id.name)
        || has(&id.image)
        || has(&id.pod)
        || has(&id.namespace)
        || has(&id.user)
        // `kubectl`'s namespace/name (a pod's own name is its `name`)
        || id.namespace.as_ref().zip(pod).is_some_and(|(ns, pod)| {
            crate::model::tree::text::escape_str(&format!("{ns}/{pod}"))
                .to_lowercase()
                .contains(needle)
        })
}

/// Whether each word of `needle` (lowercase, split at spaces and the
/// labels' `·`) is in one of the words a group's label is made of: its
/// kind's and runtime's words, its id (or the start of it) and the texts
/// of [`matches`]. So the label typed as the row shows it (`docker
/// 046c7a5b3d2e`, `web-1 · docker 046c`, `session 14 alice`, `web · lxc`)
/// finds the group it labels: a name typed with a space otherwise found
/// only the groups a delegated user named like that label (whose rows
/// show `docker\u{20}046c7a5b3d2e`), and hid the container itself.
fn label_words_match(id: &Identity, needle: &str) -> bool {
    let mut words: Vec<String> = [id.kind.map(Kind::word), id.runtime.map(Runtime::word)]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .collect();
    words.extend(
        [&id.name, &id.image, &id.pod, &id.namespace, &id.user]
            .into_iter()
            .flatten()
            .map(|s| crate::model::tree::text::escape_str(s).to_lowercase()),
    );
    let whole_id = id.id.to_lowercase();
    let mut typed = needle
        .split([' ', '·'])
        .filter(|w| !w.is_empty())
        .peekable();
    typed.peek().is_some()
        && typed.all(|w| whole_id.starts_with(w) || words.iter().any(|t| t.contains(w)))
}

/// The pod id in a podman pod's slice name (`machine-libpod_pod_<id>.slice`
/// under systemd, `user-libpod_pod_<id>.slice` a rootless user's,
/// `libpod_pod_<id>` under cgroupfs).
pub fn podman_pod_id(name: &str) -> Option<&str> {
    let rest = name.strip_suffix(".slice").unwrap_or(name);
    rest.strip_prefix("machine-libpod_pod_")
        .or_else(|| rest.strip_prefix("user-libpod_pod_"))
        .or_else(|| rest.strip_prefix("libpod_pod_"))
        .filter(|p| is_container_id(p))
}

/// 64 lowercase hex digits (docker, podman, containerd, CRI-O ids); 32 are
/// accepted too (podman pod ids are 64, some tools use 32).
pub fn is_container_id(s: &str) -> bool {
    (s.len() == 64 || s.len() == 32)
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit())
}

/// A kubelet pod group's uid and QoS class: the systemd driver's
/// `kubepods[-<qos>]-pod<uid with _>.slice`, the cgroupfs driver's
/// `pod<uid>` under `kubepods/` (Guaranteed), `kubepods/burstable/` or
/// `kubepods/besteffort/`. `parent` is the name of the group above.
fn kube_pod(name: &str, parent: Option<&str>) -> Option<(String, Qos)> {
    let (qos, uid) = if let Some(rest) = name.strip_suffix(".slice") {
        if let Some(u) = rest.strip_prefix("kubepods-burstable-pod") {
            (Qos::Burstable, u.replace('_', "-"))
        } else if let Some(u) = rest.strip_prefix("kubepods-besteffort-pod") {
            (Qos::BestEffort, u.replace('_', "-"))
        } else if let Some(u) = rest.strip_prefix("kubepods-pod") {
            (Qos::Guaranteed, u.replace('_', "-"))
        } else {
            return None;
        }
    } else {
        let qos = match parent? {
            "kubepods" => Qos::Guaranteed,
            "burstable" => Qos::Burstable,
            "besteffort" => Qos::BestEffort,
            _ => return None,
        };
        (qos, name.strip_prefix("pod")?.to_owned())
    };
    is_uuid(&uid).then_some((uid, qos))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        })
}

/// systemd's unit-name escaping undone: `\xNN` is the byte NN (`\x2d` is
/// `-`). A sequence that is not two hex digits stays as written; bytes
/// that do not make UTF-8 become U+FFFD (the name is escaped where shown
/// anyway).
pub fn unescape_systemd(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            let hex = b
                .get(i + 2..i + 4)
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";

    fn of(p: &str) -> Option<Identity> {
        Identity::of_name(&GroupPath::new(p))
    }

    #[test]
    fn container_scopes_of_each_runtime() {
        for (prefix, rt, kind) in [
            ("docker-", Runtime::Docker, Kind::Container),
            ("libpod-", Runtime::Podman, Kind::Container),
            ("libpod-conmon-", Runtime::Podman, Kind::Monitor),
            ("cri-containerd-", Runtime::Containerd, Kind::Container),
            ("nerdctl-", Runtime::Containerd, Kind::Container),
            ("crio-", Runtime::Crio, Kind::Container),
            ("crio-conmon-", Runtime::Crio, Kind::Monitor),
        ] {
            let i = of(&format!("system.slice/{prefix}{ID}.scope")).unwrap();
            assert_eq!((i.runtime, i.kind), (Some(rt), Some(kind)), "{prefix}");
            assert_eq!(i.id, ID);
            assert_eq!(i.short_id(), "046c7a5b3d2e");
        }
        // not an id: a unit like any other
        let u = of("system.slice/docker-compose.scope").unwrap();
        assert_eq!((u.kind, u.runtime), (Some(Kind::Unit), None));
    }

    /// The label typed as a row shows it finds the group it labels.
    #[test]
    fn a_label_typed_as_shown_matches_its_identity() {
        let mut c = of(&format!("system.slice/docker-{ID}.scope")).unwrap();
        for typed in ["docker 046c7a5b3d2e", "docker 046c", "046c docker"] {
            assert!(matches(&c, typed), "{typed}");
        }
        c.name = Some("web-1".into());
        assert!(matches(&c, "web-1 · docker 046c7a5b3d2e"));
        assert!(matches(&c, "web-1 docker"));
        // a word of no field: no match; nor spaces and dots alone
        assert!(!matches(&c, "podman 046c"));
        assert!(!matches(&c, "docker 146c"));
        assert!(!matches(&c, " · "));
        let s = Identity {
            user: Some("alice".into()),
            ..of("user.slice/user-1000.slice/session-14.scope").unwrap()
        };
        assert!(matches(&s, "session 14 alice"));
        assert!(!matches(&s, "session 15"));
    }

    #[test]
    fn kubernetes_pods_and_their_containers_under_both_drivers() {
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let p = of(pod).unwrap();
        assert_eq!(p.kind, Some(Kind::Pod));
        assert_eq!(
            p.pod_uid.as_deref(),
            Some("7fda01c4-0ece-403d-88b4-c371d66d132a")
        );
        assert_eq!(p.qos, Some(Qos::Burstable));
        let c = of(&format!("{pod}/cri-containerd-{ID}.scope")).unwrap();
        assert_eq!(
            (c.kind, c.runtime),
            (Some(Kind::Container), Some(Runtime::Containerd))
        );
        assert_eq!(c.pod_uid, p.pod_uid);
        let g =
            of("kubepods.slice/kubepods-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice").unwrap();
        assert_eq!(g.qos, Some(Qos::Guaranteed));
        // cgroupfs driver
        let c = of(&format!(
            "kubepods/besteffort/pod7fda01c4-0ece-403d-88b4-c371d66d132a/{ID}"
        ))
        .unwrap();
        assert_eq!(
            (c.kind, c.runtime),
            (Some(Kind::Container), Some(Runtime::Kubernetes))
        );
        let d = of(&format!("docker/{ID}")).unwrap();
        assert_eq!(d.runtime, Some(Runtime::Docker));
        assert_eq!(c.qos, Some(Qos::BestEffort));
        let p = of("kubepods/pod7fda01c4-0ece-403d-88b4-c371d66d132a").unwrap();
        assert_eq!((p.kind, p.qos), (Some(Kind::Pod), Some(Qos::Guaranteed)));
        assert!(of("elsewhere/pod7fda01c4-0ece-403d-88b4-c371d66d132a").is_none());
        assert!(of(&format!("elsewhere/{ID}")).is_none());
    }

    #[test]
    fn a_podman_pods_containers_name_the_pod_by_its_id() {
        let slice = format!("machine.slice/machine-libpod_pod_{ID}.slice");
        let p = of(&slice).unwrap();
        assert_eq!((p.kind, p.id.as_str()), (Some(Kind::PodmanPod), ID));
        let c = of(&format!("{slice}/libpod-{ID}.scope")).unwrap();
        assert_eq!(c.pod.as_deref(), Some("046c7a5b3d2e"));
        let alone = of(&format!("machine.slice/libpod-{ID}.scope")).unwrap();
        assert_eq!(alone.pod, None);
        // a rootless user's pod, and the cgroupfs manager's
        let user = "user.slice/user-1000.slice/user@1000.service/user.slice";
        let r = of(&format!("{user}/user-libpod_pod_{ID}.slice")).unwrap();
        assert_eq!((r.kind, r.id.as_str()), (Some(Kind::PodmanPod), ID));
        let rc = of(&format!(
            "{user}/user-libpod_pod_{ID}.slice/libpod-{ID}.scope"
        ))
        .unwrap();
        assert_eq!(rc.pod.as_deref(), Some("046c7a5b3d2e"));
        let f = of(&format!("libpod_parent/{ID}")).unwrap();
        assert_eq!(
            (f.kind, f.runtime),
            (Some(Kind::PodmanPod), Some(Runtime::Podman))
        );
    }

    #[test]
    fn systemd_sessions_users_machines_and_units() {
        let s = of("user.slice/user-1001.slice/session-14.scope").unwrap();
        assert_eq!((s.kind, s.id.as_str()), (Some(Kind::Session), "14"));
        let u = of("user.slice/user-1001.slice").unwrap();
        assert_eq!((u.kind, u.id.as_str()), (Some(Kind::User), "1001"));
        let m = of("user.slice/user-1001.slice/user@1001.service").unwrap();
        assert_eq!(m.kind, Some(Kind::UserManager));
        let n = of(r"machine.slice/machine-web\x2d1.scope").unwrap();
        assert_eq!((n.kind, n.id.as_str()), (Some(Kind::Machine), "web-1"));
        let l = of("lxc.payload.db").unwrap();
        assert_eq!(
            (l.kind, l.name.as_deref()),
            (Some(Kind::Container), Some("db"))
        );
        assert_eq!(
            of("system.slice/nginx.service").unwrap().kind,
            Some(Kind::Unit)
        );
        assert!(of("").is_none());
        assert!(of("plain-group").is_none());
    }

    #[test]
    fn unescaping_never_panics_and_keeps_what_is_not_an_escape() {
        assert_eq!(unescape_systemd(r"a\x2db"), "a-b");
        assert_eq!(unescape_systemd(r"a\x2"), r"a\x2");
        assert_eq!(unescape_systemd(r"\xzz\x"), r"\xzz\x");
        assert_eq!(unescape_systemd(r"\xff"), "\u{fffd}");
    }
}
