//! Who a group is, in words every output shares: the tree's and `-b`'s
//! name cell (`web-1 · docker 046c7a5b3d2e` instead of
//! `docker-046c7a5b….scope`), the detail's identity block, the `identity`
//! object of `--json` and the labels of the exposition's `cgroup_info`.
//!
//! Every text of an identity came from outside (whoever starts a
//! container names it): each is escaped as group names are
//! (`model::tree::text`, README "Names as shown") before it is put
//! together with anything, and cut to [`PIECE_CHARS`] characters first,
//! so that a 10 KB name costs what a short one does.

use crate::model::identity::{self, Identity, Kind, Runtime};
use crate::model::tree::text::escape_str;
use crate::model::GroupSample;
use crate::render::columns;
use crate::render::fit::{self, fit};
use std::borrow::Cow;

/// The characters of one outside text kept for a label, before escaping:
/// more than any screen row shows (the exposition and `--json` keep more).
pub const PIECE_CHARS: usize = 256;

/// `s` cut to `cap` characters (`…` at the end where cut), escaped.
fn capped(s: &str, cap: usize) -> String {
    match s.char_indices().nth(cap) {
        None => escape_str(s).into_owned(),
        Some((end, _)) => format!("{}…", escape_str(&s[..end])),
    }
}

fn piece(s: &str) -> String {
    capped(s, PIECE_CHARS)
}

/// A group's name as its identity says it, in forms from the fullest to
/// the shortest: each form is whole components (`web-1`, `docker`,
/// `046c7a5b3d2e`) joined by a space, and every form holds one, as no
/// kernel name shown does (`text::escape_name` shows a space as
/// `\u{20}`): a group named like a label never reads as one. A unit's
/// form is its kernel name itself, the description after it being
/// cgtop's. A narrow column drops a component
/// rather than cut one; the shortest keeps the id where there is one, so
/// that two containers of the same name stay two rows. `extra` is text
/// shown after it only where the column has room (a unit's description).
/// `id` is the id the shortest form ends with: where even that form does
/// not fit, its name is cut and the id kept whole (a long name, which
/// whoever starts a container chooses, never pushes the id off the row).
/// `kernel` is the group's kernel name as shown: what a column too narrow
/// for the label's space shows instead ([`Label::fit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub forms: Vec<String>,
    pub extra: Option<String>,
    pub id: Option<String>,
    pub kernel: String,
}

impl Label {
    /// The width the column needs for it: its fullest form's.
    pub fn width(&self) -> usize {
        self.forms.first().map_or(0, |f| fit::width(f))
    }

    /// The fullest form within `w` display columns; when none fits, the
    /// shortest with its name cut (`…`) before the whole id, or, with no
    /// room for the id and a character of the name, the shortest cut
    /// while the cut keeps its space. Narrower than that (`web-…` of
    /// `web-1 046c7a5b3d2e` in 5 cells), the kernel name cut: a cut label
    /// without its space would read as a kernel name, and a group named
    /// `web-1x` would read the same; the kernel name is the group's own.
    pub fn fit(&self, w: usize) -> String {
        if let Some(f) = self.forms.iter().find(|f| fit::width(f) <= w) {
            return f.clone();
        }
        let last = self.forms.last().map_or("", String::as_str);
        let head = self.id.as_deref().and_then(|id| {
            let head = last.strip_suffix(id)?.strip_suffix(' ')?;
            Some((head, id))
        });
        match head {
            // a character of the name, its '…', a blank and the id
            Some((head, id)) if w >= fit::width(id) + 3 => {
                format!("{} {id}", fit(head, w - fit::width(id) - 1))
            }
            _ => {
                let cut = fit(last, w);
                if last.contains(' ') && !cut.contains(' ') {
                    fit(&self.kernel, w)
                } else {
                    cut
                }
            }
        }
    }
}

/// The label of an identity, or `None` where it says no more than the
/// group's kernel name (`kernel_name`, escaped, as the tree shows it): a
/// unit without a description, a session whose user is not known, a user
/// slice without a login name. Those keep their kernel name.
pub fn label(id: &Identity, kernel_name: &str) -> Option<Label> {
    let name = id.name.as_deref().map(piece);
    let short = piece(id.short_id());
    let forms = |v: Vec<String>| {
        Some(Label {
            forms: v,
            extra: None,
            id: None,
            kernel: kernel_name.to_owned(),
        })
    };
    // forms whose shortest ends with the short id
    let forms_id = |v: Vec<String>| {
        Some(Label {
            forms: v,
            extra: None,
            id: Some(short.clone()),
            kernel: kernel_name.to_owned(),
        })
    };
    match id.kind? {
        kind @ (Kind::Container | Kind::Monitor) => {
            let rt = id.runtime.map(Runtime::word);
            let what = match (rt, kind) {
                (Some(r), Kind::Monitor) => format!("{r} monitor"),
                (Some(r), _) => r.to_owned(),
                (None, Kind::Monitor) => "monitor".to_owned(),
                (None, _) => "container".to_owned(),
            };
            match name {
                // an LXC container's id is its name
                Some(n) if id.runtime == Some(Runtime::Lxc) || id.id.is_empty() => {
                    forms(vec![format!("{n} · {what}"), format!("{what} {n}")])
                }
                Some(n) => forms_id(vec![
                    format!("{n} · {what} {short}"),
                    format!("{n} · {short}"),
                    format!("{n} {short}"),
                ]),
                None => forms(vec![format!("{what} {short}")]),
            }
        }
        Kind::Pod => {
            let qos = id.qos.map(identity::Qos::word);
            let pod = name.or_else(|| id.pod.as_deref().map(piece));
            let mut v = Vec::new();
            let mut add = |s: String| {
                if let Some(q) = qos {
                    v.push(format!("{s} · {q}"));
                }
                v.push(s);
            };
            match (pod, id.namespace.as_deref().map(piece)) {
                (Some(p), Some(ns)) => {
                    add(format!("pod {ns}/{p}"));
                    v.push(format!("pod {p}"));
                }
                (Some(p), None) => add(format!("pod {p}")),
                (None, _) => {
                    let uid = piece(id.pod_uid.as_deref().unwrap_or(&id.id));
                    add(format!("pod {uid}"));
                    v.push(format!("pod {}", fit(&uid, identity::SHORT_ID)));
                }
            }
            forms(v)
        }
        Kind::PodmanPod => match name {
            Some(n) => forms_id(vec![
                format!("{n} · podman pod {short}"),
                format!("{n} · {short}"),
            ]),
            None => forms(vec![format!("podman pod {short}"), format!("pod {short}")]),
        },
        Kind::Machine => forms(vec![format!(
            "machine {}",
            name.unwrap_or_else(|| piece(&id.id))
        )]),
        Kind::Session => {
            let user = id.user.as_deref().or(id.name.as_deref()).map(piece)?;
            let mut v = vec![format!("session {short} {user}")];
            if let Some(tty) = id.tty.as_deref().map(piece) {
                v.insert(0, format!("{} {tty}", v[0]));
            }
            if let Some(host) = id.remote_host.as_deref().map(piece) {
                v.insert(0, format!("{} from {host}", v[0]));
            }
            forms(v)
        }
        Kind::User => forms(vec![format!("user {}", name?)]),
        Kind::UserManager => {
            let user = name.or_else(|| id.user.as_deref().map(piece))?;
            forms(vec![format!("user manager {user}")])
        }
        Kind::Unit => Some(Label {
            forms: vec![kernel_name.to_owned()],
            extra: Some(piece(id.description.as_deref()?)),
            id: None,
            kernel: kernel_name.to_owned(),
        }),
    }
}

/// A group's label, when it has one ([`identity::of_group`], [`label`]).
pub fn label_of(g: &GroupSample) -> Option<Label> {
    let id = identity::of_group(g)?;
    label(&id, &g.path.name_display())
}

/// The name cell of a row: the identity's label where `identities` and
/// the group has one, else the kernel's name (`columns::name_label`: the
/// first row by its whole path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    Kernel(String),
    Known(Label),
}

impl Name {
    pub fn of(g: &GroupSample, depth: usize, identities: bool) -> Self {
        match identities.then(|| label_of(g)).flatten() {
            Some(l) => Self::Known(l),
            None => Self::Kernel(columns::name_label(&g.path, depth)),
        }
    }

    /// The display columns it asks for.
    pub fn width(&self) -> usize {
        match self {
            Self::Kernel(s) => fit::width(s),
            Self::Known(l) => l.width(),
        }
    }

    /// The text within `w` columns: a label drops whole components; a
    /// kernel name is cut at its end, or, where it is a whole path (the
    /// flat list and the first row) in a view that starts at the group
    /// shown as `path_from` (`/` for the whole tree), as a path that keeps
    /// its first component below the start ([`fit::fit_path`]:
    /// `…/user/…/newc-18771-1`).
    pub fn fit(&self, w: usize, path_from: Option<&str>) -> String {
        match self {
            Self::Kernel(s) => match path_from {
                Some(start) => fit::fit_path(s, w, start),
                None => fit(s, w),
            },
            Self::Known(l) => l.fit(w),
        }
    }

    /// What follows the name where the column has room (a unit's
    /// description).
    pub fn extra(&self) -> Option<&str> {
        match self {
            Self::Known(l) => l.extra.as_deref(),
            Self::Kernel(_) => None,
        }
    }
}

/// The detail's identity block: a heading ("docker container web-1") and
/// `(what, text)` lines, every text escaped. `None` where the identity
/// says no more than the kernel name and nothing went wrong reading it.
pub fn detail(id: &Identity, kernel_name: &str) -> Option<(String, Vec<(&'static str, String)>)> {
    if label(id, kernel_name).is_none() && id.unreadable.is_none() && id.source.is_none() {
        return None;
    }
    let mut head = id.what();
    if let Some(n) = &id.name {
        head.push(' ');
        head.push_str(&piece(n));
    }
    let mut v: Vec<(&'static str, String)> = Vec::new();
    let add = |v: &mut Vec<(&'static str, String)>, what: &'static str, s: Option<&str>| {
        if let Some(s) = s {
            v.push((what, piece(s)));
        }
    };
    add(&mut v, "id", (!id.id.is_empty()).then_some(id.id.as_str()));
    add(&mut v, "image", id.image.as_deref());
    let pod = match (&id.namespace, &id.pod) {
        (Some(ns), Some(p)) => Some(format!("{}/{}", piece(ns), piece(p))),
        (None, Some(p)) => Some(piece(p)),
        (Some(ns), None) => Some(format!("namespace {}", piece(ns))),
        (None, None) => None,
    };
    if let Some(p) = pod {
        v.push(("pod", p));
    }
    // a pod's own id is its uid: said once
    if id.kind != Some(Kind::Pod) || id.pod_uid.as_deref() != Some(id.id.as_str()) {
        add(&mut v, "pod uid", id.pod_uid.as_deref());
    }
    add(&mut v, "QoS", id.qos.map(identity::Qos::word));
    for (k, val) in &id.labels {
        v.push(("label", format!("{}={}", piece(k), piece(val))));
    }
    add(&mut v, "description", id.description.as_deref());
    add(&mut v, "user", id.user.as_deref());
    add(&mut v, "tty", id.tty.as_deref());
    add(&mut v, "from host", id.remote_host.as_deref());
    match (&id.source, &id.unreadable) {
        (Some(s), _) => v.push(("source", piece(s))),
        (None, None) => v.push(("source", "the group's name".to_owned())),
        (None, Some(_)) => {}
    }
    add(&mut v, "not read", id.unreadable.as_deref());
    Some((head, v))
}

/// `--json`'s `identity` object: the fields of [`Identity`] under their
/// own names, every text escaped as `path` is (`cgtop::model::text::
/// unescape` gives its bytes back), `null` where not known.
#[derive(Debug, serde::Serialize)]
pub struct JsonIdentity<'a> {
    kind: Option<Kind>,
    runtime: Option<Runtime>,
    id: Cow<'a, str>,
    name: Option<Cow<'a, str>>,
    image: Option<Cow<'a, str>>,
    pod: Option<Cow<'a, str>>,
    namespace: Option<Cow<'a, str>>,
    pod_uid: Option<Cow<'a, str>>,
    qos: Option<identity::Qos>,
    /// `[[key, value], ...]` in the order found (a key may repeat).
    labels: Vec<[Cow<'a, str>; 2]>,
    description: Option<Cow<'a, str>>,
    user: Option<Cow<'a, str>>,
    tty: Option<Cow<'a, str>>,
    remote_host: Option<Cow<'a, str>>,
    source: Option<Cow<'a, str>>,
    unreadable: Option<Cow<'a, str>>,
}

impl<'a> JsonIdentity<'a> {
    pub fn new(i: &'a Identity) -> Self {
        let e = |s: &'a Option<String>| s.as_deref().map(escape_str);
        Self {
            kind: i.kind,
            runtime: i.runtime,
            id: escape_str(&i.id),
            name: e(&i.name),
            image: e(&i.image),
            pod: e(&i.pod),
            namespace: e(&i.namespace),
            pod_uid: e(&i.pod_uid),
            qos: i.qos,
            labels: i
                .labels
                .iter()
                .map(|(k, v)| [escape_str(k), escape_str(v)])
                .collect(),
            description: e(&i.description),
            user: e(&i.user),
            tty: e(&i.tty),
            remote_host: e(&i.remote_host),
            source: e(&i.source),
            unreadable: e(&i.unreadable),
        }
    }
}

/// The labels `cgroup_info` carries for a group's identity, escaped as a
/// name is (the exposition escapes them once more as label values):
/// `container` (a container's name, else its short id), `pod`,
/// `namespace`, `image`; absent where not known. Each at most
/// [`PIECE_CHARS`] characters.
pub fn info_labels(id: &Identity) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if id.kind == Some(Kind::Container) {
        let c = id.name.as_deref().unwrap_or_else(|| id.short_id());
        if !c.is_empty() {
            v.push(("container", piece(c)));
        }
    }
    let pod = match id.kind {
        Some(Kind::Pod | Kind::PodmanPod) => id.name.as_deref().or(id.pod.as_deref()),
        _ => id.pod.as_deref(),
    };
    if let Some(p) = pod {
        v.push(("pod", piece(p)));
    }
    if let Some(ns) = &id.namespace {
        v.push(("namespace", piece(ns)));
    }
    if let Some(im) = &id.image {
        v.push(("image", piece(im)));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::identity::Qos;
    use crate::model::GroupPath;

    const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";

    fn named(p: &str, f: impl FnOnce(&mut Identity)) -> Identity {
        let mut i = Identity::of_name(&GroupPath::new(p)).unwrap();
        f(&mut i);
        i
    }

    fn forms(i: &Identity) -> Vec<String> {
        label(i, "kernel").map(|l| l.forms).unwrap_or_default()
    }

    #[test]
    fn containers_by_name_and_short_id_as_docker_ps() {
        let i = named(&format!("docker-{ID}.scope"), |i| {
            i.name = Some("web-1".into());
        });
        assert_eq!(
            forms(&i),
            [
                "web-1 · docker 046c7a5b3d2e",
                "web-1 · 046c7a5b3d2e",
                "web-1 046c7a5b3d2e"
            ]
        );
        // from the name alone
        let n = named(&format!("libpod-conmon-{ID}.scope"), |_| {});
        assert_eq!(forms(&n)[0], "podman monitor 046c7a5b3d2e");
    }

    /// Every form of every label holds a space, which no kernel name
    /// shown does (`escape_name`): a group named like a label never reads
    /// as one, at any width a form fits.
    #[test]
    fn every_label_form_holds_a_space() {
        let paths = [
            format!("docker-{ID}.scope"),
            format!("system.slice/libpod-{ID}.scope"),
            format!("libpod-conmon-{ID}.scope"),
            format!("cri-containerd-{ID}.scope"),
            format!("crio-{ID}.scope"),
            format!("crio-conmon-{ID}.scope"),
            format!("machine.slice/machine-libpod_pod_{ID}.slice"),
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice".to_owned(),
            "lxc.payload.web".to_owned(),
            "lxc.monitor.web".to_owned(),
            "machine.slice/machine-web\\x2d1.scope".to_owned(),
            "user.slice/user-1001.slice/session-14.scope".to_owned(),
            "user.slice/user-1001.slice".to_owned(),
            "user.slice/user-1001.slice/user@1001.service".to_owned(),
        ];
        let mut seen = 0;
        for p in &paths {
            let Some(bare) = Identity::of_name(&GroupPath::new(p)) else {
                continue;
            };
            let mut full = bare.clone();
            full.name = Some("web-1".into());
            full.user = Some("alice".into());
            for i in [&bare, &full] {
                for f in forms(i) {
                    seen += 1;
                    assert!(f.contains(' '), "{p}: form {f:?} has no space");
                }
            }
        }
        assert!(seen > 20, "only {seen} forms looked at");
    }

    #[test]
    fn a_narrow_column_drops_components_never_cuts_one() {
        let i = named(&format!("docker-{ID}.scope"), |i| {
            i.name = Some("web-1".into());
        });
        let l = label(&i, "k").unwrap();
        assert_eq!(l.fit(40), "web-1 · docker 046c7a5b3d2e");
        assert_eq!(l.fit(26), "web-1 · 046c7a5b3d2e");
        assert_eq!(l.fit(19), "web-1 046c7a5b3d2e");
        // narrower than the shortest form: cut at its end, with the ellipsis
        assert_eq!(l.fit(10), "web-1 046…");
        assert_eq!(l.fit(7), "web-1 …");
    }

    /// A column too narrow to keep a cut label's space shows the kernel
    /// name cut: `web-…` would read as the name of a group `web-1x`, and
    /// `pod…` as that of a group `podman`.
    #[test]
    fn a_label_cut_past_its_space_gives_way_to_the_kernel_name() {
        let kernel = format!("docker-{ID}.scope");
        let i = named(&kernel, |i| i.name = Some("web-1".into()));
        let l = label(&i, &kernel).unwrap();
        assert_eq!(l.fit(7), "web-1 …");
        assert_eq!(l.fit(6), "docke…");
        assert_eq!(l.fit(2), "d…");
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let p = named(pod, |i| i.name = Some("api".into()));
        let own = "kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let l = label(&p, own).unwrap();
        assert_eq!(l.fit(5), "pod …");
        assert_eq!(l.fit(4), "kub…");
        // a unit's form is its kernel name: cut as it always was
        let u = named("system.slice/cron.service", |i| {
            i.description = Some("Regular background program processing daemon".into());
        });
        assert_eq!(label(&u, "cron.service").unwrap().fit(5), "cron…");
    }

    #[test]
    fn pods_sessions_users_and_units() {
        let pod = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
        let p = named(pod, |i| {
            i.name = Some("api-7d9f8c6b5-x2x9z".into());
            i.namespace = Some("shop".into());
        });
        assert_eq!(
            forms(&p),
            [
                "pod shop/api-7d9f8c6b5-x2x9z · Burstable",
                "pod shop/api-7d9f8c6b5-x2x9z",
                "pod api-7d9f8c6b5-x2x9z"
            ]
        );
        assert_eq!(label(&p, "").unwrap().fit(18), "pod api-7d9f8c6b5…");
        let bare = named(pod, |_| {});
        assert_eq!(
            forms(&bare).last().unwrap(),
            "pod 7fda01c4-0e…",
            "{:?}",
            forms(&bare)
        );
        let s = named("user.slice/user-1001.slice/session-14.scope", |i| {
            i.user = Some("alice".into());
            i.tty = Some("pts/3".into());
            i.remote_host = Some("10.0.0.5".into());
        });
        assert_eq!(
            forms(&s),
            [
                "session 14 alice pts/3 from 10.0.0.5",
                "session 14 alice pts/3",
                "session 14 alice"
            ]
        );
        // nothing more than the name says: the kernel name stays
        assert!(label(&named("user.slice/session-14.scope", |_| {}), "k").is_none());
        assert!(label(&named("user.slice/user-1001.slice", |_| {}), "k").is_none());
        let u = named("user.slice/user-1001.slice", |i| {
            i.name = Some("alice".into());
        });
        assert_eq!(forms(&u), ["user alice"]);
        assert!(label(&named("system.slice/nginx.service", |_| {}), "k").is_none());
        let unit = named("system.slice/nginx.service", |i| {
            i.description = Some("A high performance web server".into());
        });
        let l = label(&unit, "nginx.service").unwrap();
        assert_eq!(l.forms, ["nginx.service"]);
        assert_eq!(l.extra.as_deref(), Some("A high performance web server"));
        let q = named(pod, |i| i.qos = Some(Qos::Guaranteed));
        assert!(forms(&q)[0].ends_with("· Guaranteed"));
    }

    #[test]
    fn outside_text_is_escaped_and_capped() {
        let i = named(&format!("docker-{ID}.scope"), |i| {
            i.name = Some("ev\u{1b}[2Jil\u{202e}\u{9b}x\ny".into());
            i.image = Some("x".repeat(10_000));
        });
        let f = &forms(&i)[0];
        assert_eq!(f, "ev\\e[2Jil\\u{202e}\\u{9b}x\\ny · docker 046c7a5b3d2e");
        assert!(f.chars().all(|c| !c.is_control()));
        let (_, lines) = detail(&i, "k").unwrap();
        let image = &lines.iter().find(|(w, _)| *w == "image").unwrap().1;
        assert_eq!(image.chars().count(), PIECE_CHARS + 1);
        assert!(image.ends_with('…'));
        let labels = info_labels(&i);
        assert_eq!(
            labels[0],
            ("container", "ev\\e[2Jil\\u{202e}\\u{9b}x\\ny".into())
        );
    }

    #[test]
    fn json_has_every_field_escaped() {
        let i = named(&format!("docker-{ID}.scope"), |i| {
            i.name = Some("a\u{1b}b".into());
            i.labels = vec![("k\n".into(), "v".into())];
        });
        let j = serde_json::to_value(JsonIdentity::new(&i)).unwrap();
        assert_eq!(j["kind"], "container");
        assert_eq!(j["runtime"], "docker");
        assert_eq!(j["id"], ID);
        assert_eq!(j["name"], "a\\eb");
        assert_eq!(j["labels"][0][0], "k\\n");
        assert!(j["image"].is_null());
    }
}
