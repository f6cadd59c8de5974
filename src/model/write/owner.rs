//! PURE: a group a container runtime or the kubelet owns, and what a
//! write to it means to that owner: the owner's own way to make the same
//! change ([`owner_way`]: `docker update --cpus 0.5 web-1`, `podman pause
//! db`, the pod spec's resources), and what a direct write leaves the
//! owner believing (a limit it does not know of, lost when the container
//! restarts; a frozen container the runtime still reports running; a
//! killed one its restart policy starts again). Next to the systemd
//! equivalents ([`super::systemd`]), and shown the same way: in the
//! confirmation and as comments in `export-log` scripts.
//!
//! Who the owner is comes from the group's [`Identity`] (its name, and
//! what the runtime's files say). An identity labels; it never addresses:
//! the write still goes to the group selected, and a name goes into a
//! command only when it is a name the runtime itself could have given
//! (docker's and podman's `[a-zA-Z0-9][a-zA-Z0-9_.-]*`, Kubernetes' DNS
//! names) and cannot be read as an id; any other name is shown escaped and
//! the command uses the whole id (a short one may be another container's
//! name).
//!
//! Checked against: docker 20.10 to 27 (`docker update`: no flag for
//! memory.high or io.max; a memory limit cannot be lifted, moby#22516),
//! podman 4.4 to 5 (`podman update` with the `--device-*` throttles),
//! containerd 1.6 and 1.7 (`ctr` has `task pause`, `resume`, `kill`, no
//! update of a running task's limits), Kubernetes 1.27 to 1.33 (in-place
//! resize through the `resize` subresource from 1.33, behind the
//! InPlacePodVerticalScaling gate before), LXC 4 and 5.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use super::input::MemoryFile;
use super::systemd::shell_quote;
use super::{Op, Throttle, V1MemoryFile, WriteKind};
use crate::cgroupfs::Limit;
use crate::model::identity::{Identity, Kind, Runtime};
use crate::model::tree::text::escape_str;

/// Who owns a group, as far as a write is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Docker,
    Podman,
    /// A podman pod's slice (`podman pod ...`).
    PodmanPod,
    /// containerd without Kubernetes (`ctr`, nerdctl).
    Containerd,
    /// A Kubernetes pod's container (any CRI runtime).
    KubeContainer,
    /// A Kubernetes pod's group.
    KubePod,
    Lxc,
}

impl Owner {
    /// The owner of a group with this identity, `None` for a group no
    /// runtime owns (a unit, a session, a monitor process's group).
    pub fn of(id: &Identity) -> Option<Self> {
        let kube =
            id.pod_uid.is_some() || matches!(id.runtime, Some(Runtime::Kubernetes | Runtime::Crio));
        Some(match (id.kind?, id.runtime) {
            (Kind::Pod, _) => Self::KubePod,
            (Kind::PodmanPod, _) => Self::PodmanPod,
            (Kind::Container, _) if kube => Self::KubeContainer,
            (Kind::Container, Some(Runtime::Docker)) => Self::Docker,
            (Kind::Container, Some(Runtime::Podman)) => Self::Podman,
            (Kind::Container, Some(Runtime::Containerd)) => Self::Containerd,
            (Kind::Container, Some(Runtime::Lxc)) => Self::Lxc,
            _ => return None,
        })
    }

    /// The runtime's word, for "docker's way".
    pub fn word(self) -> &'static str {
        match self {
            Self::Docker => "docker",
            Self::Podman | Self::PodmanPod => "podman",
            Self::Containerd => "containerd",
            Self::KubeContainer | Self::KubePod => "Kubernetes",
            Self::Lxc => "lxc",
        }
    }

    /// What restarts to lose a direct write.
    fn restarts(self) -> &'static str {
        match self {
            Self::Containerd => "the task restarts",
            Self::KubePod | Self::PodmanPod => "the pod restarts",
            _ => "the container restarts",
        }
    }
}

/// What a write to an owned group means to its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerWay {
    pub owner: Owner,
    /// Who, as shown (escaped): "docker container web-1 (046c7a5b3d2e)".
    pub who: String,
    /// The owner's command for the same change, one shell line; `None`
    /// where it has none.
    pub command: Option<String>,
    /// What the command does, and what a direct write leaves the owner
    /// believing.
    pub words: String,
}

/// The identity in words, escaped: "docker container web-1
/// (046c7a5b3d2e)", "pod api in shop", "docker container 046c7a5b3d2e".
pub fn shown(id: &Identity) -> String {
    let what = id.what();
    let what = if what.is_empty() { "group" } else { &what };
    let name = id.name.as_deref().or(match id.kind {
        Some(Kind::Pod) => id.pod.as_deref(),
        _ => None,
    });
    let mut s = match name {
        Some(n) if n != id.id => {
            format!("{what} {} ({})", escape_str(n), escape_str(id.short_id()))
        }
        _ => format!("{what} {}", escape_str(id.short_id())),
    };
    if let Some(ns) = &id.namespace {
        s.push_str(&format!(" in namespace {}", escape_str(ns)));
    }
    if let (Some(Kind::Container), Some(p)) = (id.kind, &id.pod) {
        s.push_str(&format!(", pod {}", escape_str(p)));
    }
    s
}

/// A name docker or podman could have given a container or pod.
fn runtime_name(n: &str) -> bool {
    let b = n.as_bytes();
    !b.is_empty()
        && b.len() <= 253
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

/// A Kubernetes object name (a DNS subdomain: lowercase letters, digits,
/// `-` and `.`, at most 253).
fn kube_name(n: &str) -> bool {
    let b = n.as_bytes();
    !b.is_empty()
        && b.len() <= 253
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"-.".contains(c))
}

/// What a command names the container or pod by: its name where the
/// runtime could have given it and it cannot be taken for an id, else its
/// whole id. docker looks a word up as a whole id first, then as a name,
/// then as an id's prefix (podman much the same): a short id would name
/// another container called `046c7a5b3d2e`, and a container may be called
/// another's whole id, which docker then takes for that one.
fn handle(owner: Owner, id: &Identity) -> String {
    // ctr knows tasks by their id only (`ctr run`'s is the name its owner
    // gave; nerdctl's name is its own, not containerd's)
    if owner == Owner::Containerd {
        return id.id.clone();
    }
    let name = id
        .name
        .as_deref()
        .filter(|n| runtime_name(n) && !looks_like_id(n));
    match name {
        Some(n) => n.to_owned(),
        None => id.id.clone(),
    }
}

/// Hex digits only, as long as an id or a short one could be (12 to
/// 64): a word the runtime may read as an id (or a prefix of one) before
/// it reads it as a name.
fn looks_like_id(n: &str) -> bool {
    n.len() >= 12 && n.len() <= 64 && n.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The uid of the user manager (`user@UID.service`) a group is below,
/// the outermost: a podman container there is that user's, rootless.
fn rootless_uid(g: &crate::model::GroupPath) -> Option<u32> {
    g.components()
        .filter_map(|c| std::str::from_utf8(c).ok())
        .filter_map(|c| c.strip_prefix("user@")?.strip_suffix(".service"))
        .find_map(|u| u.parse().ok())
}

/// Bytes as docker and podman take them (`512m`, `1g`, or bytes).
fn docker_bytes(v: u64) -> String {
    for (unit, s) in [(1u64 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")] {
        if v >= unit && v % unit == 0 {
            return format!("{}{s}", v / unit);
        }
    }
    v.to_string()
}

/// Bytes as a Kubernetes quantity (`512Mi`, `1Gi`, or bytes).
fn kube_bytes(v: u64) -> String {
    for (unit, s) in [(1u64 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")] {
        if v >= unit && v % unit == 0 {
            return format!("{}{s}", v / unit);
        }
    }
    v.to_string()
}

/// `quota`/`period` CPUs as a decimal (`0.5`, `1.25`): docker's and
/// podman's `--cpus`, exact for the default period of 100 ms.
fn cpus(quota: u64) -> String {
    let whole = quota / 100_000;
    let frac = quota % 100_000;
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:05}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// `quota`/`period` as Kubernetes CPU: `500m`, `2` (millicores,
/// rounded up: never less than the quota written).
fn kube_cpu(quota: u64, period: u64) -> String {
    let m = (u128::from(quota) * 1000).div_ceil(u128::from(period.max(1)));
    if m % 1000 == 0 {
        (m / 1000).to_string()
    } else {
        format!("{m}m")
    }
}

/// The `--cpu-shares` that runc turns into this cpu.weight (its
/// conversion: weight = 1 + (shares - 2) * 9999 / 262142, rounded down):
/// the smallest such shares.
pub fn shares_for_weight(weight: u32) -> u64 {
    let w = u64::from(weight.clamp(1, 10_000));
    2 + ((w - 1) * 262_142).div_ceil(9_999)
}

/// The runtime's flags for a limit, or why it has none.
enum Flags {
    Set(Vec<String>),
    None(String),
}

fn docker_flags(owner: Owner, kind: &WriteKind, device: Option<&str>) -> Flags {
    let podman = owner == Owner::Podman;
    let rt = owner.word();
    let v = |l: Limit| match l {
        Limit::Max => "-1".to_owned(),
        Limit::Value(n) => n.to_string(),
    };
    let flags = |f: &[(&str, String)]| {
        Flags::Set(
            f.iter()
                .flat_map(|(k, v)| [(*k).to_owned(), v.clone()])
                .collect(),
        )
    };
    match kind {
        WriteKind::CpuMax(c) => match c.quota {
            Some(q) if c.period == 100_000 => flags(&[("--cpus", cpus(q))]),
            Some(q) => flags(&[
                ("--cpu-period", c.period.to_string()),
                ("--cpu-quota", q.to_string()),
            ]),
            None => flags(&[("--cpu-quota", "-1".into())]),
        },
        WriteKind::CfsQuota(q) => flags(&[(
            "--cpu-quota",
            q.map_or_else(|| "-1".into(), |q| q.to_string()),
        )]),
        WriteKind::CfsPeriod(p) => flags(&[("--cpu-period", p.to_string())]),
        WriteKind::CpuWeight(w) => flags(&[("--cpu-shares", shares_for_weight(*w).to_string())]),
        WriteKind::CpuShares(s) => flags(&[("--cpu-shares", s.to_string())]),
        WriteKind::Memory(MemoryFile::Max, Limit::Value(b))
        | WriteKind::V1Memory(V1MemoryFile::Limit, Limit::Value(b)) => {
            flags(&[("--memory", docker_bytes(*b))])
        }
        WriteKind::Memory(MemoryFile::Max, Limit::Max)
        | WriteKind::V1Memory(V1MemoryFile::Limit, Limit::Max) => Flags::None(format!(
            "{rt} update cannot lift a memory limit: only the container made again without \
             --memory runs without one"
        )),
        WriteKind::V1Memory(V1MemoryFile::MemswLimit, l) => flags(&[("--memory-swap", v(*l))]),
        WriteKind::V1Memory(V1MemoryFile::SoftLimit, Limit::Value(b)) => {
            flags(&[("--memory-reservation", docker_bytes(*b))])
        }
        WriteKind::Memory(MemoryFile::High, _) => Flags::None(format!(
            "{rt} has no setting for memory.high (its --memory-reservation is memory.low)"
        )),
        WriteKind::PidsMax(l) => flags(&[("--pids-limit", v(*l))]),
        WriteKind::BlkioWeight(w) => flags(&[("--blkio-weight", w.to_string())]),
        WriteKind::IoMax(set) if podman => {
            let Some(d) = device.filter(|d| plain_device(d)) else {
                return Flags::None("the device's name is not known".into());
            };
            let d = if d.starts_with('/') {
                d.to_owned()
            } else {
                format!("/dev/{d}")
            };
            let mut f = Vec::new();
            for (k, l) in set.pairs() {
                let Limit::Value(n) = l else {
                    return Flags::None(
                        "podman update cannot lift a device's throttle (max)".into(),
                    );
                };
                let flag = match k {
                    "rbps" => "--device-read-bps",
                    "wbps" => "--device-write-bps",
                    "riops" => "--device-read-iops",
                    _ => "--device-write-iops",
                };
                f.push((flag, format!("{d}:{n}")));
            }
            flags(&f)
        }
        WriteKind::BlkioThrottle {
            which,
            limit: Some(n),
            ..
        } if podman => match device.filter(|d| plain_device(d)) {
            Some(d) => {
                let flag = match which {
                    Throttle::ReadBps => "--device-read-bps",
                    Throttle::WriteBps => "--device-write-bps",
                    Throttle::ReadIops => "--device-read-iops",
                    Throttle::WriteIops => "--device-write-iops",
                };
                let d = if d.starts_with('/') {
                    d.to_owned()
                } else {
                    format!("/dev/{d}")
                };
                flags(&[(flag, format!("{d}:{n}"))])
            }
            None => Flags::None("the device's name is not known".into()),
        },
        WriteKind::IoMax(_) | WriteKind::BlkioThrottle { .. } => {
            Flags::None(format!("{rt} update has no device throttle"))
        }
        _ => Flags::None(format!("{rt} has no setting for this file")),
    }
}

/// A plain kernel device name ("sda", "/dev/nvme0n1", "/dev/block/8:0"),
/// as it may go into a command.
fn plain_device(d: &str) -> bool {
    !d.is_empty()
        && d.len() <= 64
        && d.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/".contains(&b))
        && !d.contains("..")
}

/// Whether the op is a limit (the runtime's "update"), a freeze, a thaw
/// or a kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Limit,
    Freeze,
    Thaw,
    Kill,
}

fn act(kind: &WriteKind) -> Option<Act> {
    Some(match kind {
        WriteKind::Freeze(true) | WriteKind::FreezerState(true) => Act::Freeze,
        WriteKind::Freeze(false) | WriteKind::FreezerState(false) => Act::Thaw,
        WriteKind::Kill => Act::Kill,
        WriteKind::CpuMax(_)
        | WriteKind::CpuWeight(_)
        | WriteKind::Memory(MemoryFile::Max | MemoryFile::High, _)
        | WriteKind::PidsMax(_)
        | WriteKind::IoMax(_)
        | WriteKind::CfsQuota(_)
        | WriteKind::CfsPeriod(_)
        | WriteKind::CpuShares(_)
        | WriteKind::V1Memory(..)
        | WriteKind::BlkioThrottle { .. }
        | WriteKind::BlkioWeight(_) => Act::Limit,
        _ => return None,
    })
}

fn line(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// What `op` means to the owner of its group (identity `id`): `None`
/// where no runtime owns the group, or for an op that is not a limit,
/// freeze, thaw or kill. A command only for an identity the resolver
/// vouched for ([`Identity::vouched`]): for the name alone, words that
/// say the owner is not yet known. `device` names an io op's block device ("sda",
/// "/dev/sda" or "/dev/block/8:0").
pub fn owner_way(op: &Op, id: &Identity, device: Option<&str>) -> Option<OwnerWay> {
    let w = op.as_write()?;
    let owner = Owner::of(id)?;
    let act = act(&w.kind)?;
    let who = if id.vouched {
        shown(id)
    } else {
        format!("{}, as its name alone says", shown(id))
    };
    let lost = format!("a direct write lasts until {}", owner.restarts());
    // below a user's service manager the group is that user's: their
    // rootless podman or docker, or a name they chose (the subtree is
    // delegated to them); the runtime run as root knows only root's
    // containers, where one of that name or id may be another
    let rootless = rootless_uid(op.group());
    let (command, words) = match owner {
        // the name alone, or no record of the runtime's read for it (the
        // first frames, before the resolver; metadata not there; a
        // subtree another user owns, whose names that user chose): a
        // command would name whatever container the runtime has of that
        // id, maybe a real one the name was copied from
        _ if !id.vouched && rootless.is_none() => (
            None,
            format!(
                "the owner is not yet known: the group's name says {rt}, but {rt}'s own \
                 record of it has not been read for a group root owns, and anyone a subtree \
                 is delegated to can choose such a name: no {rt} command is offered; {lost}",
                rt = owner.word()
            ),
        ),
        _ if rootless.is_some() => (
            None,
            format!(
                "a group of uid {}'s own (below its user@ service: a rootless container, or a \
                 name that user chose): only {} run as that user knows it, and {} run as \
                 root names root's own containers, where one of that name or id may be \
                 another; {lost}",
                rootless.unwrap_or_default(),
                owner.word(),
                owner.word()
            ),
        ),
        Owner::Docker | Owner::Podman => {
            let rt = owner.word();
            let h = handle(owner, id);
            match act {
                Act::Limit => match docker_flags(owner, &w.kind, device) {
                    Flags::Set(flags) => {
                        let mut a = argv(&[rt, "update"]);
                        a.extend(flags);
                        a.push(h);
                        (
                            Some(line(&a)),
                            format!(
                                "{rt} keeps it (in {rt} inspect, and after a restart); {lost}, \
                                 and {rt} inspect goes on showing the old value"
                            ),
                        )
                    }
                    Flags::None(why) => (None, format!("{why}: {lost}")),
                },
                Act::Freeze => (
                    Some(line(&argv(&[rt, "pause", &h]))),
                    format!(
                        "{rt} pause freezes the same group and {rt} knows it (Paused in {rt} \
                         ps); a direct freeze leaves {rt} believing it runs: {rt} ps shows it \
                         Up, health checks and {rt} exec hang, and {rt} unpause refuses it"
                    ),
                ),
                Act::Thaw => (
                    Some(line(&argv(&[rt, "unpause", &h]))),
                    format!(
                        "if {rt} paused it, only {rt} unpause clears {rt}'s Paused: a direct \
                         thaw leaves {rt} believing it is still paused"
                    ),
                ),
                Act::Kill => (
                    Some(line(&argv(&[rt, "kill", &h]))),
                    format!(
                        "after a direct kill {rt} sees the container exit (status 137) as if \
                         it crashed, and a restart policy (always, unless-stopped, \
                         on-failure) may start it again; {rt} stop {h} is the way that \
                         keeps it stopped"
                    ),
                ),
            }
        }
        Owner::PodmanPod => {
            let h = handle(owner, id);
            match act {
                Act::Limit => (
                    None,
                    format!(
                        "podman sets a pod's limits when it is made (podman pod create \
                         --cpus, --memory): {lost}"
                    ),
                ),
                Act::Freeze => (
                    Some(line(&argv(&["podman", "pod", "pause", &h]))),
                    "podman then shows the pod's containers Paused; a direct freeze leaves \
                     podman believing they run"
                        .to_owned(),
                ),
                Act::Thaw => (
                    Some(line(&argv(&["podman", "pod", "unpause", &h]))),
                    "if podman paused the pod, only podman pod unpause clears its Paused"
                        .to_owned(),
                ),
                Act::Kill => (
                    Some(line(&argv(&["podman", "pod", "kill", &h]))),
                    "after a direct kill podman sees the containers exit, and their restart \
                     policies may start them again"
                        .to_owned(),
                ),
            }
        }
        Owner::Containerd => {
            let h = handle(owner, id);
            match act {
                Act::Limit => (
                    None,
                    format!(
                        "containerd's ctr has no command to change a running task's limits: \
                         {lost}, and the container's spec keeps the old value"
                    ),
                ),
                Act::Freeze => (
                    Some(line(&argv(&["ctr", "task", "pause", &h]))),
                    "containerd then reports the task paused; a direct freeze leaves it \
                     believing the task runs (add -n NAMESPACE to ctr outside the default \
                     namespace)"
                        .to_owned(),
                ),
                Act::Thaw => (
                    Some(line(&argv(&["ctr", "task", "resume", &h]))),
                    "if containerd paused the task, only ctr task resume clears its paused \
                     state"
                        .to_owned(),
                ),
                Act::Kill => (
                    Some(line(&argv(&["ctr", "task", "kill", "-s", "SIGKILL", &h]))),
                    "after a direct kill containerd sees the task exit; whatever started it \
                     (nerdctl's restart policy, a supervisor) may start it again"
                        .to_owned(),
                ),
            }
        }
        Owner::KubeContainer | Owner::KubePod => kube_way(owner, id, &w.kind, act),
        Owner::Lxc => {
            let h = handle(owner, id);
            match act {
                Act::Limit => (
                    None,
                    format!(
                        "LXC's durable way is a line in the container's config: \
                         lxc.cgroup2.{} = {} (LXD: lxc config set {} limits.*); {lost}",
                        escape_str(&w.file),
                        escape_str(&w.contents),
                        escape_str(&h)
                    ),
                ),
                Act::Freeze => (
                    Some(line(&argv(&["lxc-freeze", "-n", &h]))),
                    "LXC then reports it FROZEN; the same group either way".to_owned(),
                ),
                Act::Thaw => (
                    Some(line(&argv(&["lxc-unfreeze", "-n", &h]))),
                    "LXC then reports it RUNNING".to_owned(),
                ),
                Act::Kill => (
                    Some(line(&argv(&["lxc-stop", "-k", "-n", &h]))),
                    "after a direct kill LXC sees the container stop; lxc.start.auto or a \
                     supervisor may start it again"
                        .to_owned(),
                ),
            }
        }
    };
    Some(OwnerWay {
        owner,
        who,
        command,
        words,
    })
}

/// Kubernetes: the pod spec's resources (or an in-place resize), and
/// what the kubelet does after a direct write.
fn kube_way(owner: Owner, id: &Identity, kind: &WriteKind, act: Act) -> (Option<String>, String) {
    let back = "a direct write lasts until the container restarts, and the kubelet may put \
                its own value back";
    if owner == Owner::KubePod {
        let words = match act {
            Act::Limit => format!(
                "the kubelet sets a pod's group from its containers' resources: change them \
                 in the pod spec (or resize its containers in place); {back}"
            ),
            Act::Freeze | Act::Thaw => "Kubernetes has no pause: a direct freeze leaves the \
                 kubelet believing the pod runs; its probes time out, and a failing liveness \
                 probe makes the kubelet restart the container"
                .to_owned(),
            Act::Kill => "the kubelet sees the containers exit and, by the pod's restartPolicy \
                 (Always by default), starts them again; to stop the pod, scale down or \
                 delete what made it"
                .to_owned(),
        };
        return (None, words);
    }
    match act {
        Act::Limit => {
            let res = match kind {
                WriteKind::CpuMax(c) => Some(("cpu", c.quota.map(|q| kube_cpu(q, c.period)))),
                WriteKind::Memory(MemoryFile::Max, l) => Some((
                    "memory",
                    match l {
                        Limit::Max => None,
                        Limit::Value(b) => Some(kube_bytes(*b)),
                    },
                )),
                _ => None,
            };
            let pod = id.pod.as_deref().filter(|p| kube_name(p));
            let ns = id.namespace.as_deref().filter(|n| kube_name(n));
            let ctr = id.name.as_deref().filter(|n| kube_name(n));
            match (res, pod, ns, ctr) {
                (Some((r, Some(v))), Some(pod), Some(ns), Some(ctr)) => {
                    let patch = format!(
                        r#"{{"spec":{{"containers":[{{"name":"{ctr}","resources":{{"limits":{{"{r}":"{v}"}}}}}}]}}}}"#
                    );
                    let a = argv(&[
                        "kubectl",
                        "patch",
                        "pod",
                        pod,
                        "-n",
                        ns,
                        "--subresource",
                        "resize",
                        "--patch",
                        &patch,
                    ]);
                    (
                        Some(line(&a)),
                        format!(
                            "Kubernetes keeps the pod spec's resources: resize in place where \
                             the cluster supports it (1.33, or the \
                             InPlacePodVerticalScaling gate), else change the spec (a new \
                             pod); {back}"
                        ),
                    )
                }
                (Some((r, _)), ..) => (
                    None,
                    format!(
                        "Kubernetes keeps the pod spec's resources (limits.{r}): change the \
                         spec, or resize in place where the cluster supports it; {back}"
                    ),
                ),
                (None, ..) => {
                    let why = match kind {
                        WriteKind::CpuWeight(_) | WriteKind::CpuShares(_) => {
                            "cpu.weight follows the container's CPU request (requests.cpu in \
                             the pod spec)"
                        }
                        WriteKind::PidsMax(_) => {
                            "the pod spec has no pids limit (the kubelet's podPidsLimit sets \
                             the pod's)"
                        }
                        _ => "the pod spec has no field for this file",
                    };
                    (None, format!("{why}; {back}"))
                }
            }
        }
        Act::Freeze | Act::Thaw => (
            None,
            "Kubernetes has no pause: a direct freeze leaves the kubelet believing the \
             container runs; its probes time out, and a failing liveness probe makes the \
             kubelet restart it"
                .to_owned(),
        ),
        Act::Kill => (
            None,
            "the kubelet sees the container exit and, by the pod's restartPolicy (Always by \
             default), starts it again; to stop it, scale down or delete what made the pod"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_ops::{g, op, SDA};
    use super::*;
    use crate::cgroupfs::CpuMax;
    use crate::model::write::input::IoMaxSet;
    use crate::model::GroupPath;

    const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";

    /// As the resolver hands it after reading the runtime's record of a
    /// group root owns.
    fn ident(path: &str, name: Option<&str>) -> Identity {
        let mut i = Identity::of_name(&GroupPath::new(path)).expect(path);
        i.name = name.map(str::to_owned);
        i.vouched = true;
        i
    }

    fn cpu(q: u64) -> Op {
        op(
            "x",
            "cpu.max",
            "",
            WriteKind::CpuMax(CpuMax {
                quota: Some(q),
                period: 100_000,
            }),
        )
    }

    fn mem(b: u64) -> Op {
        op(
            "x",
            "memory.max",
            "",
            WriteKind::Memory(MemoryFile::Max, Limit::Value(b)),
        )
    }

    fn way(o: &Op, i: &Identity) -> OwnerWay {
        owner_way(o, i, Some("sda")).expect("owned")
    }

    #[test]
    fn docker_and_podman_update_by_name_or_short_id() {
        let d = ident(&format!("system.slice/docker-{ID}.scope"), Some("web-1"));
        let w = way(&cpu(50_000), &d);
        assert_eq!(w.owner, Owner::Docker);
        assert_eq!(w.who, "docker container web-1 (046c7a5b3d2e)");
        assert_eq!(w.command.as_deref(), Some("docker update --cpus 0.5 web-1"));
        assert!(
            w.words.contains("until the container restarts"),
            "{}",
            w.words
        );
        assert_eq!(
            way(&mem(512 << 20), &d).command.as_deref(),
            Some("docker update --memory 512m web-1")
        );
        let pids = op("x", "pids.max", "", WriteKind::PidsMax(Limit::Max));
        assert_eq!(
            way(&pids, &d).command.as_deref(),
            Some("docker update --pids-limit -1 web-1")
        );
        let odd = op(
            "x",
            "cpu.max",
            "",
            WriteKind::CpuMax(CpuMax {
                quota: Some(25_000),
                period: 50_000,
            }),
        );
        assert_eq!(
            way(&odd, &d).command.as_deref(),
            Some("docker update --cpu-period 50000 --cpu-quota 25000 web-1")
        );
        // no name known: the whole id (docker matches a whole id before
        // a name; a short one could be another container's name)
        let anon = ident(&format!("docker/{ID}"), None);
        assert_eq!(
            way(&cpu(150_000), &anon).command,
            Some(format!("docker update --cpus 1.5 {ID}"))
        );
        assert_eq!(anon.short_id(), "046c7a5b3d2e");
        let p = ident(&format!("machine.slice/libpod-{ID}.scope"), Some("db"));
        assert_eq!(
            way(&cpu(50_000), &p).command.as_deref(),
            Some("podman update --cpus 0.5 db")
        );
        let io = op(
            "x",
            "io.max",
            "",
            WriteKind::IoMax(IoMaxSet {
                dev: SDA,
                rbps: Some(Limit::Value(1_048_576)),
                wbps: None,
                riops: None,
                wiops: None,
            }),
        );
        assert_eq!(
            way(&io, &p).command.as_deref(),
            Some("podman update --device-read-bps /dev/sda:1048576 db")
        );
        // docker has no device throttle in update: words only
        let w = way(&io, &d);
        assert_eq!(w.command, None);
        assert!(w.words.contains("no device throttle"), "{}", w.words);
    }

    #[test]
    fn limits_a_runtime_cannot_set_are_said() {
        let d = ident(&format!("system.slice/docker-{ID}.scope"), Some("web-1"));
        let high = op(
            "x",
            "memory.high",
            "",
            WriteKind::Memory(MemoryFile::High, Limit::Value(1 << 30)),
        );
        let w = way(&high, &d);
        assert_eq!(w.command, None);
        assert!(w.words.contains("memory.high"), "{}", w.words);
        let lift = op(
            "x",
            "memory.max",
            "",
            WriteKind::Memory(MemoryFile::Max, Limit::Max),
        );
        assert_eq!(way(&lift, &d).command, None);
        // cpu.weight: the shares runc turns into that weight
        let weight = op("x", "cpu.weight", "", WriteKind::CpuWeight(100));
        assert_eq!(
            way(&weight, &d).command.as_deref(),
            Some("docker update --cpu-shares 2598 web-1")
        );
        for w in [1u32, 2, 39, 100, 500, 9_999, 10_000] {
            let s = shares_for_weight(w);
            assert_eq!(1 + ((s - 2) * 9_999) / 262_142, u64::from(w), "{w}");
        }
        // ctr cannot update a running task
        let c = ident(&format!("system.slice/cri-containerd-{ID}.scope"), None);
        let w = way(&cpu(50_000), &c);
        assert_eq!((w.owner, w.command.as_deref()), (Owner::Containerd, None));
        assert!(w.words.contains("until the task restarts"), "{}", w.words);
    }

    #[test]
    fn freeze_thaw_and_kill_through_the_runtime() {
        let d = ident(&format!("system.slice/docker-{ID}.scope"), Some("web-1"));
        let freeze = op("x", "cgroup.freeze", "1", WriteKind::Freeze(true));
        let w = way(&freeze, &d);
        assert_eq!(w.command.as_deref(), Some("docker pause web-1"));
        assert!(w.words.contains("Up"), "{}", w.words);
        let thaw = op("x", "cgroup.freeze", "0", WriteKind::Freeze(false));
        assert_eq!(
            way(&thaw, &d).command.as_deref(),
            Some("docker unpause web-1")
        );
        let kill = op("x", "cgroup.kill", "1", WriteKind::Kill);
        let w = way(&kill, &d);
        assert_eq!(w.command.as_deref(), Some("docker kill web-1"));
        assert!(w.words.contains("restart policy"), "{}", w.words);
        let p = ident(&format!("machine.slice/libpod-{ID}.scope"), Some("db"));
        assert_eq!(way(&kill, &p).command.as_deref(), Some("podman kill db"));
        let c = ident(&format!("system.slice/cri-containerd-{ID}.scope"), None);
        assert_eq!(
            way(&freeze, &c).command,
            Some(format!("ctr task pause {ID}"))
        );
        let l = ident("lxc.payload.db", None);
        assert_eq!(
            way(&freeze, &l).command.as_deref(),
            Some("lxc-freeze -n db")
        );
        assert!(way(&cpu(50_000), &l).words.contains("lxc.cgroup2.cpu.max"));
        let pp = ident(
            &format!("machine.slice/machine-libpod_pod_{ID}.slice"),
            None,
        );
        assert_eq!(
            way(&freeze, &pp).command,
            Some(format!("podman pod pause {ID}"))
        );
    }

    #[test]
    fn kubernetes_resize_by_pod_and_container_name() {
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let mut c = ident(&format!("{pod}/cri-containerd-{ID}.scope"), Some("app"));
        c.pod = Some("api-7d9f".into());
        c.namespace = Some("shop".into());
        let w = way(&cpu(50_000), &c);
        assert_eq!(w.owner, Owner::KubeContainer);
        assert_eq!(
            w.command.as_deref(),
            Some(
                r#"kubectl patch pod api-7d9f -n shop --subresource resize --patch '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"500m"}}}]}}'"#
            )
        );
        assert!(w.words.contains("the kubelet may put"), "{}", w.words);
        let w = way(&mem(1 << 30), &c);
        assert!(w
            .command
            .as_deref()
            .is_some_and(|l| l.contains(r#""memory":"1Gi""#)));
        // names unknown: words, no command with a guessed name
        let bare = ident(&format!("{pod}/cri-containerd-{ID}.scope"), None);
        let w = way(&cpu(50_000), &bare);
        assert_eq!(w.command, None);
        assert!(w.words.contains("pod spec"), "{}", w.words);
        // CRI-O is Kubernetes' too
        let crio = ident(&format!("system.slice/crio-{ID}.scope"), None);
        assert_eq!(Owner::of(&crio), Some(Owner::KubeContainer));
        let p = ident(pod, None);
        let w = way(&cpu(50_000), &p);
        assert_eq!((w.owner, w.command.as_deref()), (Owner::KubePod, None));
        let kill = op("x", "cgroup.kill", "1", WriteKind::Kill);
        assert!(way(&kill, &c).words.contains("restartPolicy"));
    }

    #[test]
    fn hostile_names_are_escaped_and_never_in_a_command() {
        let d = ident(
            &format!("system.slice/docker-{ID}.scope"),
            Some("web\x1b[2J;rm -rf /"),
        );
        let w = way(&cpu(50_000), &d);
        assert!(!w.who.contains('\x1b'), "{}", w.who);
        assert_eq!(w.command, Some(format!("docker update --cpus 0.5 {ID}")));
        let mut c = ident(
            &format!("kubepods/burstable/pod7fda01c4-0ece-403d-88b4-c371d66d132a/{ID}"),
            Some("app"),
        );
        c.pod = Some("x'}]}; reboot".into());
        c.namespace = Some("shop".into());
        assert_eq!(way(&cpu(50_000), &c).command, None);
    }

    /// A rootless podman container (below `user@UID.service`) is known
    /// only to podman run as that user: a `podman update ... db` pasted
    /// as root would act on root's container `db`, if there is one; the
    /// same for docker there (rootless docker, or a name the user chose
    /// like a system container's: `docker kill <its id>` kills that one).
    #[test]
    fn a_rootless_container_gets_no_command_root_would_run() {
        let path =
            format!("user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope");
        let p = ident(&path, Some("db"));
        let freeze = op(&path, "cgroup.freeze", "1", WriteKind::Freeze(true));
        let limit = op(
            &path,
            "cpu.max",
            "",
            WriteKind::CpuMax(CpuMax {
                quota: Some(50_000),
                period: 100_000,
            }),
        );
        for o in [freeze, limit] {
            let w = way(&o, &p);
            assert_eq!(w.command, None, "{o:?}");
            assert!(w.words.contains("uid 1000"), "{}", w.words);
        }
        // docker below a user manager: rootless docker, or a name that
        // user chose like the system's container of that id
        let fake =
            format!("user.slice/user-1000.slice/user@1000.service/app.slice/docker-{ID}.scope");
        let d = ident(&fake, Some("web-1"));
        let kill = op(&fake, "cgroup.kill", "1", WriteKind::Kill);
        assert_eq!(way(&kill, &d).command, None);
        // root's own podman container keeps its command
        let rootful = format!("machine.slice/libpod-{ID}.scope");
        let freeze = op(&rootful, "cgroup.freeze", "1", WriteKind::Freeze(true));
        let p = ident(&rootful, Some("db"));
        assert_eq!(way(&freeze, &p).command.as_deref(), Some("podman pause db"));
    }

    /// A container's name that docker would read as an id is never what
    /// the command names it by: called like another's short id
    /// (`046c7a5b3d2e`), or another's whole id, the command would act on
    /// that other container (docker matches a whole id, then a name, then
    /// an id's prefix).
    #[test]
    fn a_command_never_names_a_container_by_what_reads_as_another_id() {
        const OTHER: &str = "ffffffffffff0000ffffffffffff0000ffffffffffff0000ffffffffffff0000";
        for name in ["046c7a5b3d2e", OTHER, &OTHER[..12], "web-1\n"] {
            let d = ident(&format!("system.slice/docker-{ID}.scope"), Some(name));
            assert_eq!(
                way(&cpu(50_000), &d).command,
                Some(format!("docker update --cpus 0.5 {ID}")),
                "{name}"
            );
        }
        // a name with a letter past f, or shorter than any short id, is a name
        for name in ["cafe-1", "deadbeef", "abcdefabcdefg"] {
            let d = ident(&format!("system.slice/docker-{ID}.scope"), Some(name));
            assert_eq!(
                way(&cpu(50_000), &d).command,
                Some(format!("docker update --cpus 0.5 {name}"))
            );
        }
    }

    /// The name alone (the first frames, before the resolver; export-log;
    /// a group whose runtime record was not read, or that another user
    /// owns) never gets a runtime's command, for any runtime or op.
    #[test]
    fn a_name_alone_gets_no_runtime_command() {
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let ops = [
            cpu(50_000),
            mem(512 << 20),
            op("x", "cgroup.freeze", "1", WriteKind::Freeze(true)),
            op("x", "cgroup.freeze", "0", WriteKind::Freeze(false)),
            op("x", "cgroup.kill", "1", WriteKind::Kill),
        ];
        for path in [
            format!("system.slice/docker-{ID}.scope"),
            format!("machine.slice/libpod-{ID}.scope"),
            format!("system.slice/cri-containerd-{ID}.scope"),
            format!("system.slice/crio-{ID}.scope"),
            format!("{pod}/cri-containerd-{ID}.scope"),
            format!("machine.slice/machine-libpod_pod_{ID}.slice"),
            "lxc.payload.db".to_owned(),
        ] {
            let mut i = ident(&path, Some("web-1"));
            i.pod = Some("api".into());
            i.namespace = Some("shop".into());
            i.vouched = false;
            for o in &ops {
                let w = way(o, &i);
                assert_eq!(w.command, None, "{path} {o:?}");
                assert!(w.words.contains("not yet known"), "{}", w.words);
                assert!(w.who.ends_with("as its name alone says"), "{}", w.who);
            }
            // the same, vouched for: a command for some op at least
            i.vouched = true;
            assert!(ops.iter().any(|o| way(o, &i).command.is_some()), "{path}");
        }
    }

    #[test]
    fn groups_no_runtime_owns_and_other_ops_have_no_way() {
        let unit = ident("system.slice/nginx.service", None);
        assert_eq!(owner_way(&cpu(50_000), &unit, None), None);
        let mon = ident(&format!("machine.slice/libpod-conmon-{ID}.scope"), None);
        assert_eq!(owner_way(&cpu(50_000), &mon, None), None);
        let d = ident(&format!("system.slice/docker-{ID}.scope"), Some("web-1"));
        let mv = op(
            "x",
            "cgroup.procs",
            "1",
            WriteKind::MoveProcess {
                pid: 1,
                threads: false,
            },
        );
        assert_eq!(owner_way(&mv, &d, None), None);
        assert_eq!(g("x"), GroupPath::new("x"));
    }
}
