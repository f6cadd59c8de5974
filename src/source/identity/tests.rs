//! The resolver on the fixture trees of tests/fixtures/identity/<runtime>/
//! (each a `/` mirroring the runtime's directories; real captures go
//! beside them in the same layout).

use super::*;
use crate::model::identity::Qos;

/// `f` with the byte at each `at` replaced (wrapping round the file):
/// the state-database readers' fuzzing of real files.
pub(super) fn mutated(f: &[u8], changes: &[(usize, u8)]) -> Vec<u8> {
    let mut f = f.to_vec();
    for &(at, b) in changes {
        let n = f.len();
        f[at % n] = b;
    }
    f
}

const D1: &str = "3f4e8a1c0b9d2e7f3f4e8a1c0b9d2e7f3f4e8a1c0b9d2e7f3f4e8a1c0b9d2e7f";
const D2: &str = "9a0b1c2d3e4f5a6b9a0b1c2d3e4f5a6b9a0b1c2d3e4f5a6b9a0b1c2d3e4f5a6b";
const P1: &str = "6e341326aa55bb776e341326aa55bb776e341326aa55bb776e341326aa55bb77";
const P2: &str = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00";
const CS: &str = "914c0336cd45e7d5914c0336cd45e7d5914c0336cd45e7d5914c0336cd45e7d5";
const CC: &str = "10505004b889ce0d10505004b889ce0d10505004b889ce0d10505004b889ce0d";
const UID: &str = "ec5b1520_9319_4167_8c74_fc4f0db36526";
const RC: &str = "a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718";
const RUID: &str = "7fda01c4-0ece-403d-88b4-c371d66d132a";

pub fn fixture(runtime: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/identity")
        .join(runtime)
}

/// The groups of `paths` (sorted, as a scan gives them), inode i + 1.
fn groups(paths: &[String]) -> Vec<GroupSample> {
    let mut v: Vec<GroupSample> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| GroupSample::new(GroupPath::new(p), i as u64 + 1))
        .collect();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    v
}

/// Each group's identity after one refresh with the resolver on `base`.
fn resolve(base: &Path, paths: &[String]) -> HashMap<String, Option<Identity>> {
    let mut r = Resolver::new(Roots {
        base: base.to_path_buf(),
        units: false,
    });
    let mut g = groups(paths);
    r.attach(&mut g, true);
    g.into_iter()
        .map(|g| (g.path.to_string(), g.identity.map(|i| (*i).clone())))
        .collect()
}

fn one(base: &Path, path: &str) -> Identity {
    let all = resolve(base, &[path.to_owned()]);
    all.into_values().next().flatten().expect("an identity")
}

#[test]
fn docker_names_images_and_compose_labels_under_both_drivers() {
    let base = fixture("docker");
    let i = one(&base, &format!("system.slice/docker-{D1}.scope"));
    assert_eq!(i.name.as_deref(), Some("web-1"));
    assert_eq!(i.image.as_deref(), Some("nginx:1.25"));
    assert_eq!(
        i.labels,
        vec![
            ("com.docker.compose.project".into(), "shop".into()),
            ("com.docker.compose.service".into(), "web".into())
        ]
    );
    assert!(i.source.unwrap().ends_with(&format!("{D1}/config.v2.json")));
    assert_eq!(i.unreadable, None);
    // the cgroupfs driver's /docker/<id>
    let c = one(&base, &format!("docker/{D2}"));
    assert_eq!(
        (c.name.as_deref(), c.image.as_deref()),
        (Some("db"), Some("postgres:15"))
    );
    // an id with no record: the name-only identity, nothing unreadable
    let none = one(
        &base,
        &format!("system.slice/docker-{}.scope", "0".repeat(64)),
    );
    assert_eq!((none.name, none.unreadable), (None, None));
}

#[test]
fn podman_rootful_from_the_store_and_images() {
    let base = fixture("podman");
    let i = one(&base, &format!("machine.slice/libpod-{P1}.scope"));
    assert_eq!(i.name.as_deref(), Some("api"));
    assert_eq!(i.image.as_deref(), Some("docker.io/library/busybox:latest"));
    // no image-name in the metadata: the image's name from images.json
    let w = one(&base, &format!("machine.slice/libpod-{P2}.scope"));
    assert_eq!(w.name.as_deref(), Some("worker"));
    assert_eq!(w.image.as_deref(), Some("docker.io/library/busybox:latest"));
    // conmon's group: the monitor of the same container
    let m = one(&base, &format!("machine.slice/libpod-conmon-{P1}.scope"));
    assert_eq!(
        (m.kind, m.name.as_deref()),
        (Some(Kind::Monitor), Some("api"))
    );
}

/// A copy of the podman fixture whose etc/passwd gives alice this
/// process's uid (the files' owner).
fn rootless_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    copy_tree(&fixture("podman"), t.path());
    let me = rustix::process::geteuid().as_raw();
    std::fs::create_dir_all(t.path().join("etc")).unwrap();
    std::fs::write(
        t.path().join("etc/passwd"),
        format!("alice:x:{me}:{me}::/home/alice:/bin/sh\n"),
    )
    .unwrap();
    t
}

pub use crate::source::testing::copy_tree;

#[test]
fn podman_rootless_from_the_users_own_store_only() {
    let t = rootless_tree();
    let me = rustix::process::geteuid().as_raw();
    let path = format!("user.slice/user-{me}.slice/user@{me}.service/user.slice/libpod-{P2}.scope");
    let i = one(t.path(), &path);
    // the rootless store's name, not the rootful one's ("worker")
    assert_eq!(i.name.as_deref(), Some("alices-worker"));
    assert_eq!(i.image.as_deref(), Some("docker.io/library/alpine:3.19"));
    // a home whose storage is a symlink elsewhere: not followed
    let store = t.path().join("home/alice/.local/share/containers");
    std::fs::rename(&store, t.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(t.path().join("elsewhere"), &store).unwrap();
    let i = one(t.path(), &path);
    assert_eq!(i.name, None);
    assert_eq!(
        i.unreadable.as_deref(),
        Some("podman metadata not readable: a symbolic link, not followed")
    );
}

#[test]
fn containerd_cri_pod_and_containers_and_a_ctr_task() {
    let base = fixture("containerd");
    let pod = format!("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID}.slice");
    let paths = vec![
        "kubepods.slice".to_owned(),
        "kubepods.slice/kubepods-burstable.slice".to_owned(),
        pod.clone(),
        format!("{pod}/cri-containerd-{CS}.scope"),
        format!("{pod}/cri-containerd-{CC}.scope"),
        "default".to_owned(),
        "default/web".to_owned(),
    ];
    let all = resolve(&base, &paths);
    let c = all[&format!("/{pod}/cri-containerd-{CC}.scope")]
        .clone()
        .unwrap();
    assert_eq!(c.name.as_deref(), Some("api"));
    assert_eq!(c.pod.as_deref(), Some("api-7d9f8b6c5-x2x4q"));
    assert_eq!(c.namespace.as_deref(), Some("shop"));
    assert_eq!(c.image.as_deref(), Some("registry.example/shop/api:2.3"));
    assert_eq!(c.qos, Some(Qos::Burstable));
    let s = all[&format!("/{pod}/cri-containerd-{CS}.scope")]
        .clone()
        .unwrap();
    assert!(s
        .labels
        .contains(&("container type".into(), "sandbox".into())));
    // the pod's slice shows the pod, from its containers' annotations
    let p = all[&format!("/{pod}")].clone().unwrap();
    assert_eq!(p.kind, Some(Kind::Pod));
    assert_eq!(p.name.as_deref(), Some("api-7d9f8b6c5-x2x4q"));
    assert_eq!(p.namespace.as_deref(), Some("shop"));
    // ctr's /default/web
    let web = all["/default/web"].clone().unwrap();
    assert_eq!(
        (web.kind, web.runtime),
        (Some(Kind::Container), Some(Runtime::Containerd))
    );
    assert_eq!(web.id, "web");
    assert!(all["/default"].is_none());
}

#[test]
fn crio_containers_under_both_drivers() {
    let base = fixture("crio");
    let pod = format!(
        "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice",
        RUID.replace('-', "_")
    );
    let i = one(&base, &format!("{pod}/crio-{RC}.scope"));
    assert_eq!(i.name.as_deref(), Some("cart"));
    assert_eq!(i.pod.as_deref(), Some("cart-5c6d7e8f9-abcde"));
    assert_eq!(i.image.as_deref(), Some("registry.example/shop/cart:1.0"));
    // cgroupfs driver: the runtime is found from the files
    let k = one(&base, &format!("kubepods/besteffort/pod{RUID}/{RC}"));
    assert_eq!(
        (k.runtime, k.name.as_deref()),
        (Some(Runtime::Crio), Some("cart"))
    );
}

#[test]
fn systemd_sessions_users_and_machines() {
    let base = fixture("systemd");
    let s = one(&base, "user.slice/user-1000.slice/session-14.scope");
    assert_eq!(s.user.as_deref(), Some("alice"));
    assert_eq!(s.tty.as_deref(), Some("pts/0"));
    assert_eq!(s.remote_host.as_deref(), Some("203.0.113.7"));
    assert!(s.labels.contains(&("service".into(), "sshd".into())));
    let u = one(&base, "user.slice/user-1000.slice");
    assert_eq!(u.name.as_deref(), Some("alice"));
    // no logind record: /etc/passwd
    let b = one(&base, "user.slice/user-1001.slice/user@1001.service");
    assert_eq!(b.name.as_deref(), Some("bob"));
    let m = one(&base, r"machine.slice/machine-web\x2d1.scope");
    assert_eq!(m.name.as_deref(), Some("web-1"));
    assert!(m.labels.contains(&("class".into(), "container".into())));
}

#[test]
fn resolved_once_per_directory_and_gone_groups_dropped() {
    let base = fixture("docker");
    let mut r = Resolver::new(Roots {
        base: base.clone(),
        units: false,
    });
    let paths = vec![
        "system.slice".to_owned(),
        format!("system.slice/docker-{D1}.scope"),
    ];
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    assert_eq!(r.passes(), 1);
    // steady refreshes: no pass, the same Arc handed out
    let first = g[1].identity.clone().unwrap();
    for _ in 0..3 {
        let mut again = groups(&paths);
        r.attach(&mut again, false);
        assert!(Arc::ptr_eq(again[1].identity.as_ref().unwrap(), &first));
    }
    assert_eq!(r.passes(), 1);
    // the same path with a new inode (removed and made again): read again
    let mut renewed = groups(&paths);
    renewed[1].inode = 99;
    r.attach(&mut renewed, true);
    assert_eq!(r.passes(), 2);
    assert!(!Arc::ptr_eq(renewed[1].identity.as_ref().unwrap(), &first));
    // gone: dropped from the cache
    let mut fewer = groups(&paths[..1]);
    r.attach(&mut fewer, true);
    assert_eq!(r.cache.len(), 1);
}

#[test]
fn no_roots_at_all_gives_the_name_only_identities() {
    let t = tempfile::tempdir().unwrap();
    let i = one(t.path(), &format!("system.slice/docker-{D1}.scope"));
    assert_eq!(
        (i.runtime, i.name, i.unreadable),
        (Some(Runtime::Docker), None, None)
    );
    assert!(resolve(t.path(), &["plain".to_owned()])["/plain"].is_none());
}

#[test]
fn a_record_written_after_the_group_is_found_on_a_re_listing_a_few_times_at_most() {
    let t = tempfile::tempdir().unwrap();
    let mut r = Resolver::new(Roots {
        base: t.path().to_path_buf(),
        units: false,
    });
    let paths = vec![format!("system.slice/docker-{D1}.scope")];
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    assert_eq!(g[0].identity.as_ref().unwrap().name, None);
    // the record appears; a steady refresh does not look again, a
    // re-listing does
    copy_tree(&fixture("docker"), t.path());
    let mut g = groups(&paths);
    r.attach(&mut g, false);
    assert_eq!(g[0].identity.as_ref().unwrap().name, None);
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    assert_eq!(
        g[0].identity.as_ref().unwrap().name.as_deref(),
        Some("web-1")
    );
    // a record that never comes is looked for TRIES times in all
    let missing = vec![format!("system.slice/docker-{}.scope", "1".repeat(64))];
    for _ in 0..10 {
        let mut g = groups(&missing);
        r.attach(&mut g, true);
    }
    let key = (GroupPath::new(&missing[0]), 1);
    assert_eq!(r.cache[&key].tries, TRIES);
}

/// A pod's slice listed without its containers (`cgtop -b` of the slice
/// alone) takes its name and namespace from its sandbox's bundle, found
/// by the pod's uid: on the bundle containerd 1.6's CRI plugin wrote in
/// the VM (tests/fixtures/identity/captured/cri-sandbox).
#[test]
fn a_pod_alone_is_named_from_its_sandboxs_bundle() {
    let base = fixture("captured/cri-sandbox");
    let pod = "kubepods.slice/kubepods-besteffort.slice/\
               kubepods-besteffort-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
    let all = resolve(&base, &[pod.to_owned()]);
    let p = all[&format!("/{pod}")].clone().unwrap();
    assert_eq!(p.kind, Some(Kind::Pod));
    assert_eq!(p.name.as_deref(), Some("api-7d9f"));
    assert_eq!(p.namespace.as_deref(), Some("shop"));
    assert_eq!(p.runtime, Some(Runtime::Containerd));
    // another pod's uid finds nothing there
    let other = "kubepods.slice/kubepods-pod00000000_0000_0000_0000_000000000000.slice";
    let all = resolve(&base, &[other.to_owned()]);
    assert_eq!(all[&format!("/{other}")].clone().unwrap().name, None);
}

/// Vouched for (a runtime's command may name it) only when the runtime's
/// record was read for a group root owns, it and those above it: not
/// where the owner is unknown, another user's, or there is no record.
#[test]
fn vouched_only_for_a_record_read_for_a_group_root_owns() {
    let paths = [
        format!("system.slice/docker-{D1}.scope"),
        format!("system.slice/docker-{}.scope", "0".repeat(64)),
    ];
    let vouched = |owner: Option<u32>| {
        let mut r = Resolver::new(Roots {
            base: fixture("docker"),
            units: false,
        });
        let mut g = groups(&paths);
        r.attach_owned(&mut g, true, &|_| owner);
        // in the order of `paths` (the scan's sorts them)
        paths
            .iter()
            .map(|p| {
                g.iter()
                    .find(|g| g.path == GroupPath::new(p))
                    .and_then(|g| g.identity.as_ref())
                    .is_some_and(|i| i.vouched)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(vouched(Some(0)), [true, false]);
    assert_eq!(vouched(None), [false, false]);
    assert_eq!(vouched(Some(1000)), [false, false]);
}

/// A group whose owner could not be read (its path too long to open, a
/// directory gone on the way) may be another user's, who chose its name:
/// it is named by its name alone, never from the system's records.
#[test]
fn an_owner_not_known_to_be_roots_is_not_named_from_system_records() {
    let paths = [format!("system.slice/docker-{D1}.scope")];
    let named = |owner: Option<u32>| {
        let mut r = Resolver::new(Roots {
            base: fixture("docker"),
            units: false,
        });
        let mut g = groups(&paths);
        r.attach_owned(&mut g, true, &|_| owner);
        let i = g[0].identity.as_ref().expect("the name's identity");
        (i.name.clone(), i.unreadable.clone())
    };
    assert_eq!(named(Some(0)).0.as_deref(), Some("web-1"));
    let (name, why) = named(None);
    assert_eq!(name, None);
    assert!(
        why.as_deref()
            .is_some_and(|w| w.contains("could not be read")),
        "{why:?}"
    );
}

/// A docker record for `id` named `name` under `base`, written as docker
/// writes it (a new file renamed over the old: a new inode).
fn write_docker(base: &Path, id: &str, name: &str) {
    let dir = base.join(DOCKER).join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(r#"{{"ID":"{id}","Name":"/{name}","Config":{{"Image":"busybox"}}}}"#);
    let tmp = dir.join(".tmp-config");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, dir.join(docker::FILE)).unwrap();
}

fn name_of(g: &GroupSample) -> Option<String> {
    g.identity.as_ref().and_then(|i| i.name.clone())
}

/// Past the margin within which a file just written is read again.
fn settle() {
    std::thread::sleep(UNSURE_WITHIN + Duration::from_millis(30));
}

#[test]
fn a_renamed_container_is_named_anew_and_an_unchanged_one_costs_no_pass() {
    let t = tempfile::tempdir().unwrap();
    write_docker(t.path(), D1, "web-1");
    settle();
    let mut r = Resolver::new(Roots {
        base: t.path().to_path_buf(),
        units: false,
    });
    let paths = vec![format!("system.slice/docker-{D1}.scope")];
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    assert_eq!(name_of(&g[0]).as_deref(), Some("web-1"));
    for _ in 0..3 {
        let mut g = groups(&paths);
        r.attach(&mut g, false);
        assert_eq!(name_of(&g[0]).as_deref(), Some("web-1"));
    }
    assert_eq!((r.passes(), r.renewed()), (1, 0));
    // `docker rename web-1 web-2`: the next re-check of it sees a new file
    write_docker(t.path(), D1, "web-2");
    let mut g = groups(&paths);
    r.attach(&mut g, false);
    assert_eq!(name_of(&g[0]).as_deref(), Some("web-2"));
    assert_eq!(r.renewed(), 1);
}

#[test]
fn the_inspected_group_and_one_asked_for_are_checked_at_once_the_rest_in_turn() {
    let t = tempfile::tempdir().unwrap();
    let n = RECHECK_PER_REFRESH * 2;
    let ids: Vec<String> = (0..n).map(|i| format!("{i:064x}")).collect();
    for (i, id) in ids.iter().enumerate() {
        write_docker(t.path(), id, &format!("c{i}"));
    }
    settle();
    let mut r = Resolver::new(Roots {
        base: t.path().to_path_buf(),
        units: false,
    });
    let paths: Vec<String> = ids
        .iter()
        .map(|id| format!("system.slice/docker-{id}.scope"))
        .collect();
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    let at = |g: &[GroupSample], id: &str| {
        let p = GroupPath::new(&format!("system.slice/docker-{id}.scope"));
        name_of(g.iter().find(|x| x.path == p).unwrap())
    };
    // the last three are renamed; the first re-check round does not reach
    // them, but the inspected one and the one asked for are read at once
    let (hot, asked, other) = (&ids[n - 1], &ids[n - 2], &ids[n - 3]);
    for id in [hot, asked, other] {
        write_docker(t.path(), id, &format!("renamed-{}", &id[60..]));
    }
    r.set_hot(Some(GroupPath::new(&format!(
        "system.slice/docker-{hot}.scope"
    ))));
    r.renew(GroupPath::new(&format!(
        "system.slice/docker-{asked}.scope"
    )));
    let mut g = groups(&paths);
    r.attach(&mut g, false);
    assert_eq!(at(&g, hot), Some(format!("renamed-{}", &hot[60..])));
    assert_eq!(at(&g, asked), Some(format!("renamed-{}", &asked[60..])));
    assert_eq!(at(&g, other), Some(format!("c{}", n - 3)));
    // the round reaches it within n / RECHECK_PER_REFRESH refreshes
    for _ in 0..n / RECHECK_PER_REFRESH {
        let mut g2 = groups(&paths);
        r.attach(&mut g2, false);
        g = g2;
    }
    assert_eq!(at(&g, other), Some(format!("renamed-{}", &other[60..])));
}

/// nerdctl's containers, named by the `nerdctl/name` annotation it copies
/// into the bundle: under the systemd cgroup manager
/// (`system.slice/nerdctl-<id>.scope`) and cgroupfs (`/default/<id>`).
#[test]
fn nerdctl_containers_by_their_name_annotation_under_both_drivers() {
    const N1: &str = "7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e";
    const N2: &str = "5d1b7a3c9e2f4a6b5d1b7a3c9e2f4a6b5d1b7a3c9e2f4a6b5d1b7a3c9e2f4a6b";
    let base = fixture("containerd");
    let s = one(&base, &format!("system.slice/nerdctl-{N1}.scope"));
    assert_eq!(
        (s.kind, s.runtime, s.name.as_deref()),
        (
            Some(Kind::Container),
            Some(Runtime::Containerd),
            Some("shop-web-1")
        )
    );
    assert!(s
        .labels
        .contains(&("containerd namespace".into(), "default".into())));
    let paths = vec!["default".to_owned(), format!("default/{N2}")];
    let c = resolve(&base, &paths)[&format!("/default/{N2}")]
        .clone()
        .unwrap();
    assert_eq!((c.id.as_str(), c.name.as_deref()), (N2, Some("cache")));
    // a ctr task has no such annotation: its id is its name
    let web = resolve(&base, &["default".to_owned(), "default/web".to_owned()]);
    assert_eq!(
        web["/default/web"].clone().unwrap().name.as_deref(),
        Some("web")
    );
}

/// ctr knows a task by its id: a nerdctl container's name (which is not
/// containerd's) never goes into the owner's command, which would pause
/// a task of that id or none.
#[test]
fn a_nerdctl_name_labels_and_ctr_is_given_the_id() {
    use crate::model::write::{self, owner::owner_way};
    const N1: &str = "7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e7c3e5a1f9b2d4c6e";
    let path = format!("system.slice/nerdctl-{N1}.scope");
    let i = one(&fixture("containerd"), &path);
    assert_eq!(i.name.as_deref(), Some("shop-web-1"));
    let way = owner_way(&write::freeze(&GroupPath::new(&path), true), &i, None).unwrap();
    assert_eq!(
        way.command.as_deref(),
        Some(format!("ctr task pause {N1}").as_str())
    );
}

fn put(base: &Path, rel: &str, text: &str) {
    let p = base.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// docker's `data-root` from a root-owned /etc/docker/daemon.json; one
/// another user owns is not read (the default stays).
#[test]
fn docker_data_root_from_daemon_json_owned_by_root_only() {
    let t = tempfile::tempdir().unwrap();
    let moved = t.path().join("srv/docker/containers");
    std::fs::create_dir_all(&moved).unwrap();
    copy_tree(&fixture("docker").join(DOCKER), &moved);
    put(
        t.path(),
        config::DAEMON_JSON,
        r#"{"log-driver": "journald", "data-root": "/srv/docker", "x": [[[[1]]]]}"#,
    );
    let path = format!("system.slice/docker-{D1}.scope");
    let i = one(t.path(), &path);
    assert_eq!(i.name.as_deref(), Some("web-1"));
    assert!(i.source.unwrap().contains("srv/docker/containers"));
    if rustix::process::geteuid().is_root() {
        let f = t.path().join(config::DAEMON_JSON);
        std::os::unix::fs::chown(&f, Some(1000), Some(1000)).unwrap();
        assert_eq!(one(t.path(), &path).name, None);
    } else {
        println!("skipped: the daemon.json of another user (needs root to chown)");
    }
    // a relative or climbing place is no place
    for bad in ["srv/docker", "/srv/../srv/docker"] {
        put(
            t.path(),
            config::DAEMON_JSON,
            &format!(r#"{{"data-root": "{bad}"}}"#),
        );
        assert_eq!(one(t.path(), &path).name, None, "{bad}");
    }
}

/// podman's rootful graphroot from /etc/containers/storage.conf; a
/// rootless user's from their own storage.conf, only below their home.
#[test]
fn podman_graphroot_from_storage_conf_rootful_and_rootless() {
    let t = rootless_tree();
    let store = t.path().join(PODMAN);
    let moved = t.path().join("srv/containers/storage");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&store, &moved).unwrap();
    let rootful = format!("machine.slice/libpod-{P1}.scope");
    assert_eq!(one(t.path(), &rootful).name, None);
    put(
        t.path(),
        config::STORAGE_CONF,
        "[storage]\ndriver = \"overlay\"\ngraphroot = \"/srv/containers/storage\"\n",
    );
    assert_eq!(one(t.path(), &rootful).name.as_deref(), Some("api"));
    // rootless: moved below the home, and said in their storage.conf
    let me = rustix::process::geteuid().as_raw();
    let rootless =
        format!("user.slice/user-{me}.slice/user@{me}.service/user.slice/libpod-{P2}.scope");
    let home = t.path().join("home/alice");
    std::fs::rename(
        home.join(ROOTLESS),
        home.join(".local/share/containers/other"),
    )
    .unwrap();
    assert_eq!(one(t.path(), &rootless).name, None);
    let conf = format!("home/alice/{}", config::USER_STORAGE_CONF);
    put(
        t.path(),
        &conf,
        "[storage]\ngraphroot = \"/home/alice/.local/share/containers/other\"\n",
    );
    assert_eq!(
        one(t.path(), &rootless).name.as_deref(),
        Some("alices-worker")
    );
    // a place outside their home (the system's store) is not followed
    put(
        t.path(),
        &conf,
        "[storage]\ngraphroot = \"/srv/containers/storage\"\n",
    );
    assert_eq!(one(t.path(), &rootless).name, None);
}

/// A user's rootless store is never looked at again by its path (the
/// re-check's `fstat` would cross a FUSE mount they make below it and
/// could wait for ever): a change shows only through a fresh resolve
/// (a confirmation's renew), which reads beneath the mount of their home.
#[test]
fn a_users_store_is_read_again_only_by_a_fresh_resolve() {
    let t = rootless_tree();
    let me = rustix::process::geteuid().as_raw();
    let path = format!("user.slice/user-{me}.slice/user@{me}.service/user.slice/libpod-{P2}.scope");
    let mut r = Resolver::new(Roots {
        base: t.path().to_path_buf(),
        units: false,
    });
    let paths = [path.clone()];
    let mut g = groups(&paths);
    r.attach(&mut g, true);
    assert_eq!(name_of(&g[0]).as_deref(), Some("alices-worker"));
    let store = t
        .path()
        .join("home/alice/.local/share/containers/storage/overlay-containers/containers.json");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, text.replace("alices-worker", "alices-renamed")).unwrap();
    // past the store's once-a-second reading
    std::thread::sleep(ROOTLESS_EVERY + std::time::Duration::from_millis(100));
    r.set_hot(Some(GroupPath::new(&path)));
    let mut g = groups(&paths);
    r.attach(&mut g, false);
    assert_eq!(name_of(&g[0]).as_deref(), Some("alices-worker"));
    r.renew(GroupPath::new(&path));
    let mut g = groups(&paths);
    r.attach(&mut g, false);
    assert_eq!(name_of(&g[0]).as_deref(), Some("alices-renamed"));
}

/// The first line of a podman-db fixture's `.expected` (what sqlite3
/// answered): a pod id and its name.
fn first_pod(db: &str) -> (String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/podman-db");
    let text = std::fs::read_to_string(dir.join(format!("{db}.expected"))).unwrap();
    let (id, name) = text.lines().last().unwrap().split_once('\t').unwrap();
    (id.to_owned(), name.to_owned())
}

#[test]
fn podman_pods_are_named_from_the_state_database_and_their_containers_too() {
    let t = rootless_tree();
    let libpod = t.path().join(PODMAN).join("libpod");
    std::fs::create_dir_all(&libpod).unwrap();
    let dbs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/podman-db");
    std::fs::copy(dbs.join("podman5-db.sql"), libpod.join("db.sql")).unwrap();
    let (pod, name) = first_pod("podman5-db.sql");
    let slice = format!("machine.slice/machine-libpod_pod_{pod}.slice");
    let all = resolve(
        t.path(),
        &[slice.clone(), format!("{slice}/libpod-{P1}.scope")],
    );
    let p = all[&format!("/{slice}")].clone().unwrap();
    assert_eq!(
        (p.kind, p.name.as_deref(), p.pod.as_deref()),
        (
            Some(Kind::PodmanPod),
            Some(name.as_str()),
            Some(name.as_str())
        )
    );
    assert!(p.source.unwrap().ends_with("libpod/db.sql"));
    let c = all[&format!("/{slice}/libpod-{P1}.scope")].clone().unwrap();
    assert_eq!(
        (c.name.as_deref(), c.pod.as_deref()),
        (Some("api"), Some(name.as_str()))
    );
    // podman's transient_store: db.sql below the runroot instead
    let run = tempfile::tempdir().unwrap();
    copy_tree(&fixture("podman"), run.path());
    let at = run.path().join(CRIO).join("libpod");
    std::fs::create_dir_all(&at).unwrap();
    std::fs::copy(dbs.join("podman5-db.sql"), at.join("db.sql")).unwrap();
    let p = one(run.path(), &slice);
    assert_eq!(p.name.as_deref(), Some(name.as_str()));
    assert!(p
        .source
        .unwrap()
        .ends_with("run/containers/storage/libpod/db.sql"));
    // a pod the database does not know: named by its id, as before
    let other = format!("machine.slice/machine-libpod_pod_{P2}.slice");
    let o = one(t.path(), &other);
    assert_eq!((o.name, o.unreadable), (None, None));

    // a rootless user's pod: from their own bolt_state.db only
    let me = rustix::process::geteuid().as_raw();
    let home_db = t
        .path()
        .join("home/alice")
        .join(ROOTLESS)
        .join("libpod/bolt_state.db");
    std::fs::create_dir_all(home_db.parent().unwrap()).unwrap();
    std::fs::write(
        &home_db,
        bolt::tests::made(&[(pod.as_str(), "alices-pod")], true),
    )
    .unwrap();
    let user = format!("user.slice/user-{me}.slice/user@{me}.service/user.slice");
    let slice = format!("{user}/user-libpod_pod_{pod}.slice");
    let all = resolve(
        t.path(),
        &[slice.clone(), format!("{slice}/libpod-{P2}.scope")],
    );
    let p = all[&format!("/{slice}")].clone().unwrap();
    assert_eq!(p.name.as_deref(), Some("alices-pod"));
    let c = all[&format!("/{slice}/libpod-{P2}.scope")].clone().unwrap();
    assert_eq!(
        (c.name.as_deref(), c.pod.as_deref()),
        (Some("alices-worker"), Some("alices-pod"))
    );

    // a database that fails its reader's bounds: no name, counted, said
    let mut f = bolt::tests::made(&[(pod.as_str(), "alices-pod")], false);
    f.truncate(3 * 4096 + 100);
    std::fs::write(&home_db, f).unwrap();
    let mut r = Resolver::new(Roots {
        base: t.path().to_path_buf(),
        units: false,
    });
    let mut g = groups(std::slice::from_ref(&slice));
    r.attach(&mut g, true);
    let p = g[0].identity.clone().unwrap();
    assert_eq!(p.name, None);
    assert_eq!(
        p.unreadable.as_deref(),
        Some(
            "podman metadata not readable: libpod/bolt_state.db: not read (a page out of the file)"
        )
    );
    assert_eq!(r.parse_errors(), 1);
}

#[test]
fn a_one_shot_run_names_a_unit_by_its_name_and_keeps_no_copy_of_it() {
    let t = tempfile::tempdir().unwrap();
    let roots = || Roots {
        base: t.path().to_path_buf(),
        units: false,
    };
    let paths = vec![
        "system.slice".to_owned(),
        "system.slice/a.service".to_owned(),
        "system.slice/b.service".to_owned(),
        format!("system.slice/docker-{D1}.scope"),
        "plain".to_owned(),
    ];
    let mut lean = Resolver::new(roots());
    lean.set_name_only_units(true);
    let mut full = Resolver::new(roots());
    let (mut l, mut f) = (groups(&paths), groups(&paths));
    lean.attach(&mut l, true);
    full.attach(&mut f, true);
    let units: Vec<usize> = (0..l.len())
        .filter(|&i| {
            f[i].identity
                .as_ref()
                .is_some_and(|i| i.kind == Some(Kind::Unit))
        })
        .collect();
    assert_eq!(units.len(), 3, "the slice and the two services");
    let same = |l: &[GroupSample], f: &[GroupSample]| {
        for (a, b) in l.iter().zip(f) {
            let of = crate::model::identity::of_group;
            assert_eq!(of(a), of(b), "{} as every batch view names it", a.path);
        }
    };
    same(&l, &f);
    // the units: no identity of their own, nothing kept; the container kept
    for &i in &units {
        assert!(l[i].identity.is_none());
        assert!(!lean.cache.contains_key(&(l[i].path.clone(), l[i].inode)));
    }
    let docker = l
        .iter()
        .position(|g| g.path.to_string().contains("docker"))
        .unwrap();
    assert!(l[docker].identity.is_some());
    // a steady refresh: no pass, the same names
    let mut again = groups(&paths);
    lean.attach(&mut again, false);
    assert_eq!(lean.passes(), 1);
    same(&again, &f);
    // the descriptions come in: the described unit has its own identity
    let a = units[1];
    for r in [&mut lean, &mut full] {
        let (tx, rx) = std::sync::mpsc::channel();
        r.job = Some(rx);
        let d = HashMap::from([(l[a].path.as_bytes().to_vec(), "Unit A".to_owned())]);
        tx.send(d).unwrap();
    }
    let (mut l, mut f) = (groups(&paths), groups(&paths));
    lean.attach(&mut l, false);
    full.attach(&mut f, false);
    same(&l, &f);
    let described = l[a].identity.as_ref().and_then(|i| i.description.clone());
    assert_eq!(described.as_deref(), Some("Unit A"));
    assert!(units
        .iter()
        .filter(|&&i| i != a)
        .all(|&i| l[i].identity.is_none()));
}
