//! Groups shown by who they are: containers, a Kubernetes pod, a login
//! session, on the systemd fixture with container groups added. The
//! identities are given as the resolver (`source::identity`) would fill
//! them (`GroupSample::identity`), or come from the names alone; the
//! tree, the detail, the filter, F3 and the move picker show and match
//! them, `w` turns back to the kernel's names, and every outside text is
//! escaped as names are.
//!
//! ```text
//! /
//! ├─ kubepods.slice
//! │  └─ kubepods-burstable.slice
//! │     └─ kubepods-burstable-pod7fda….slice   pod shop/api-7d9f8c6b5-x2x9z
//! │        └─ cri-containerd-<ID4>.scope       api · containerd 5f3c1a2b3c4d
//! ├─ system.slice
//! │  ├─ docker-<ID1>.scope                     web-1 · docker 046c7a5b3d2e
//! │  ├─ libpod-<ID2>.scope                     web-1 · podman 9a8b7c6d5e4f (same name)
//! │  ├─ docker-<ID3>.scope                     a hostile name, escaped
//! │  └─ docker-<ID5>.scope                     docker 77aa…: no metadata, the name alone
//! └─ user.slice/user-0.slice/session-1.scope   session 1 root pts/3 from 10.0.0.5
//! ```

use crate::common::*;
use cgtop::app::{App, Msg};
use cgtop::model::identity::Identity;
use cgtop::model::GroupPath;
use cgtop::source::collector::{Collected, Collector};
use crossterm::event::KeyCode;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

const ID1: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
const ID2: &str = "9a8b7c6d5e4f1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff001122";
const ID3: &str = "ee11ee11ee11ee11aa11bb22cc33dd44ee55ff66778899aabbccddeeff001133";
const ID4: &str = "5f3c1a2b3c4d1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011e1";
const ID5: &str = "77aa77aa77aa1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff001144";
const POD: &str = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";
const SESSION: &str = "user.slice/user-0.slice/session-1.scope";

fn web1() -> String {
    format!("system.slice/docker-{ID1}.scope")
}
fn web1_podman() -> String {
    format!("system.slice/libpod-{ID2}.scope")
}
fn hostile() -> String {
    format!("system.slice/docker-{ID3}.scope")
}
fn api() -> String {
    format!("{POD}/cri-containerd-{ID4}.scope")
}
fn bare() -> String {
    format!("system.slice/docker-{ID5}.scope")
}

/// A name with every kind of hostile text: ESC sequences, a C1 CSI, a
/// right-to-left override, a line feed, and 10 KB more.
fn hostile_name() -> String {
    format!(
        "evil\u{1b}[2J\u{9b}31m\u{202e}gnp.exe\nline2{}",
        "x".repeat(10_000)
    )
}

/// A group made as the kernel would show it: the files of a service of
/// the fixture, and one more descendant counted in each ancestor.
fn make_group(root: &Path, group: &str) {
    crate::common::group_like(root, group, "system.slice/systemd-journald.service");
    count_descendants(root, group, 1);
}

/// What the resolver would say of each group.
fn identities() -> HashMap<GroupPath, Arc<Identity>> {
    let of = |p: &str, f: &dyn Fn(&mut Identity)| {
        let mut i = Identity::of_name(&GroupPath::new(p)).unwrap();
        f(&mut i);
        (GroupPath::new(p), Arc::new(i))
    };
    [
        of(&web1(), &|i| {
            i.name = Some("web-1".into());
            i.image = Some("docker.io/library/nginx:1.25".into());
            i.labels = vec![
                ("com.docker.compose.project".into(), "shop".into()),
                ("com.docker.compose.service".into(), "web".into()),
            ];
            i.source = Some(format!("/var/lib/docker/containers/{ID1}/config.v2.json"));
        }),
        of(&web1_podman(), &|i| {
            i.name = Some("web-1".into());
            i.image = Some("quay.io/podman/hello:latest".into());
        }),
        of(&hostile(), &|i| {
            i.name = Some(hostile_name());
            i.image = Some(format!("img\u{1b}]0;pwned\u{7}{}", "y".repeat(10_000)));
            i.labels = vec![("a\u{202e}b".into(), "c\nd".into())];
        }),
        of(POD, &|i| {
            i.name = Some("api-7d9f8c6b5-x2x9z".into());
            i.namespace = Some("shop".into());
        }),
        of(&api(), &|i| {
            i.name = Some("api".into());
            i.pod = Some("api-7d9f8c6b5-x2x9z".into());
            i.namespace = Some("shop".into());
            i.image = Some("registry.example/shop/api:2.3".into());
            // as the resolver leaves a container whose record it read for
            // a group root owns: its owner's command may name it
            i.vouched = true;
        }),
        of(SESSION, &|i| {
            i.user = Some("root".into());
            i.tty = Some("pts/3".into());
            i.remote_host = Some("10.0.0.5".into());
        }),
    ]
    .into_iter()
    .collect()
}

/// A refresh with the identities set, delivered to the app.
fn tick_known(a: &mut App, c: &mut Collector, secs: f64) {
    let who = identities();
    let mut r = refresh(c, secs);
    for g in &mut r.snapshot.groups {
        g.identity = who.get(&g.path).cloned();
    }
    send(a, c, Msg::Collected(Collected::Refresh(Box::new(r))));
}

/// The tree with its containers, sized `w` x `h`, the rows open down to
/// the containers, after a second refresh that knows who they are.
fn containers(w: u16, h: u16) -> (App, Collector, tempfile::TempDir) {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path().to_path_buf();
    for g in [
        "kubepods.slice",
        "kubepods.slice/kubepods-burstable.slice",
        POD,
        &api(),
        &web1(),
        &web1_podman(),
        &hostile(),
        &bare(),
    ] {
        make_group(&root, g);
    }
    let (mut a, mut c) = app_on(&root, pure_v2_mount(), w, h);
    // the container groups use CPU, so that the order is fixed
    burn_cpu(&root, &web1(), 300_000);
    burn_cpu(&root, &web1_podman(), 200_000);
    burn_cpu(&root, &hostile(), 100_000);
    burn_cpu(&root, &api(), 50_000);
    tick_known(&mut a, &mut c, 1.0);
    (a, c, dir)
}

fn no_control_chars(s: &str) {
    for c in s.chars() {
        assert!(
            !c.is_control() || c == '\n',
            "control character U+{:04X} on screen:\n{s}",
            u32::from(c)
        );
        assert!(
            !('\u{202a}'..='\u{202e}').contains(&c),
            "direction character on screen:\n{s}"
        );
    }
}

#[test]
fn tree_names_containers_pods_and_sessions_80x24() {
    let (mut a, mut c, _d) = containers(80, 24);
    select(&mut a, &mut c, &web1());
    let s = screen(&a, 80, 24);
    no_control_chars(&s);
    insta::assert_snapshot!(s);
}

#[test]
fn tree_and_identity_block_200x50() {
    let (mut a, mut c, _d) = containers(200, 50);
    select(&mut a, &mut c, &web1());
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 200, 50);
    no_control_chars(&s);
    assert!(s.contains("web-1 · docker 046c7a5b3d2e"), "{s}");
    assert!(s.contains(ID1), "the detail has the whole id:\n{s}");
    assert!(s.contains("docker.io/library/nginx:1.25"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn a_hostile_identity_is_escaped_in_the_tree_and_the_detail_200x50() {
    let (mut a, mut c, _d) = containers(200, 50);
    select(&mut a, &mut c, &hostile());
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 200, 50);
    no_control_chars(&s);
    assert!(
        s.contains("evil\\e[2J\\u{9b}31m\\u{202e}gnp.exe\\nline2"),
        "{s}"
    );
    assert!(s.contains("img\\e]0;pwned\\a"), "{s}");
    assert!(s.contains("a\\u{202e}b=c\\nd"), "{s}");
    // 10 KB names are cut to the row, never wrapped
    assert!(s.lines().all(|l| l.chars().count() < 210), "{s}");
}

#[test]
fn two_containers_of_one_name_stay_two_rows_with_their_ids() {
    let (a, _c, _d) = containers(80, 24);
    let s = screen(&a, 80, 24);
    assert!(s.contains("web-1 · docker 046c7a5b3d2e"), "{s}");
    assert!(s.contains("web-1 · podman 9a8b7c6d5e4f"), "{s}");
}

#[test]
fn w_turns_to_the_kernel_names_and_back() {
    let (mut a, mut c, _d) = containers(200, 50);
    assert!(outline(&a).iter().any(|l| l.contains("docker-046c")));
    let s = screen(&a, 200, 50);
    assert!(!s.contains(&format!("docker-{ID1}.scope")), "{s}");
    assert!(s.contains("session 1 root pts/3 from 10.0.0.5"), "{s}");
    // with no metadata, the name alone: the short id, as docker ps
    assert!(s.contains("docker 77aa77aa77aa"), "{s}");
    send(&mut a, &mut c, ch('w'));
    assert!(!a.identities);
    let s = screen(&a, 200, 50);
    assert!(s.contains("docker-046c7a5b3d2e1f00aa"), "{s}");
    assert!(s.contains("session-1.scope"), "{s}");
    assert!(!s.contains("web-1"), "{s}");
    send(&mut a, &mut c, ch('w'));
    assert!(screen(&a, 200, 50).contains("web-1 · docker 046c7a5b3d2e"));
}

#[test]
fn the_filter_matches_a_containers_name_image_pod_and_id_prefix() {
    let (mut a, mut c, _d) = containers(200, 50);
    let matched = |a: &App| -> Vec<String> {
        let d = a.data.as_ref().unwrap();
        a.rows
            .iter()
            .filter(|r| r.matched)
            .map(|r| d.tree.nodes[r.node].path.to_string())
            .collect()
    };
    send(&mut a, &mut c, ch('/'));
    type_text(&mut a, &mut c, "web-1");
    assert_eq!(
        matched(&a),
        [format!("/{}", web1()), format!("/{}", web1_podman())]
    );
    // the selection went to the first match
    assert_eq!(selected(&a), format!("/{}", web1()));
    for (needle, want) in [
        ("nginx", web1()),
        ("shop/api", POD.to_owned()),
        ("5f3c1a", api()),
        ("quay.io", web1_podman()),
    ] {
        send(&mut a, &mut c, key(KeyCode::Esc));
        send(&mut a, &mut c, ch('/'));
        type_text(&mut a, &mut c, needle);
        assert!(
            matched(&a).contains(&format!("/{want}")),
            "{needle}: {:?}",
            matched(&a)
        );
    }
}

#[test]
fn f3_finds_a_container_by_image_and_the_move_picker_by_name() {
    let (mut a, mut c, _d) = containers(200, 50);
    select(&mut a, &mut c, "init.scope");
    send(&mut a, &mut c, key(KeyCode::F(3)));
    type_text(&mut a, &mut c, "quay.io/podman");
    assert_eq!(selected(&a), format!("/{}", web1_podman()));
    send(&mut a, &mut c, key(KeyCode::Esc));
    // the move picker, from a process of the selected group
    a.read_only = None;
    read_inspection(&mut a, &mut c, 1.0);
    set_processes(&mut a, vec![process(4242, "root", 1.0, 10, "sleep 1")]);
    send(&mut a, &mut c, key(KeyCode::Tab));
    send(&mut a, &mut c, ch('m'));
    type_text(&mut a, &mut c, "api-7d9");
    let cgtop::app::Mode::Move(m) = &a.mode else {
        panic!("no move picker: {:?}", a.mode);
    };
    // the pod's slice has a child: it cannot take processes (not offered)
    assert_eq!(m.matches, [GroupPath::new(&api())]);
    let s = screen(&a, 200, 50);
    assert!(s.contains("api · containerd 5f3c1a2b3c4d"), "{s}");
}

#[test]
fn a_replayed_or_name_only_tree_names_containers_by_id() {
    // no identity resolved: the names alone say docker, podman and the pod
    let dir = copy_fixture("pure-v2-systemd");
    make_group(dir.path(), &web1());
    let (a, _c) = app_on(dir.path(), pure_v2_mount(), 80, 24);
    let s = screen(&a, 80, 24);
    assert!(s.contains("docker 046c7a5b3d2e"), "{s}");
}

#[test]
fn a_past_moment_keeps_the_names() {
    let (mut a, mut c, _d) = containers(200, 50);
    send(&mut a, &mut c, ch('T'));
    assert!(a.in_past());
    let s = screen(&a, 200, 50);
    assert!(s.contains("PAST"), "{s}");
    assert!(s.contains("web-1 · docker 046c7a5b3d2e"), "{s}");
    assert!(s.contains("pod shop/api-7d9f8c6b5-x2x9z"), "{s}");
}

/// `--pid` in a container: the first refresh knows the container by its
/// group's name alone (docker's id); when the readers' identity comes on
/// a later refresh, the status says the container's name.
#[test]
fn pid_at_start_names_the_container_once_its_identity_is_read() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path().to_path_buf();
    make_group(&root, &web1());
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        std::time::Duration::from_secs(1),
    );
    resize(&mut a, 200, 50);
    a.start_at_process(cgtop::source::procs::ProcessPlace {
        pid: 4_190_202,
        group: GroupPath::new(&web1()),
        command: "nginx".into(),
    });
    let mut c = collector(&root);
    tick(&mut a, &mut c, 0.0);
    let first = a.status.clone().unwrap().text;
    assert!(
        first.contains("in docker container 046c7a5b3d2e"),
        "{first}"
    );
    tick_known(&mut a, &mut c, 1.0);
    let named = a.status.clone().unwrap().text;
    assert_eq!(
        named,
        format!(
            "PID 4190202 nginx: in docker container web-1 (046c7a5b3d2e), /{}",
            web1()
        )
    );
}

/// `--pid` in a group no name pattern tells (`ctr run`'s
/// /default/NAME): said by path first, then as the container once the
/// readers know it.
#[test]
fn pid_at_start_in_a_group_named_only_by_its_reader_names_it() {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path().to_path_buf();
    make_group(&root, "default");
    make_group(&root, "default/sleeper");
    let mut a = App::new(
        host(),
        pure_v2_mount(),
        GroupPath::root(),
        std::time::Duration::from_secs(1),
    );
    resize(&mut a, 200, 50);
    a.start_at_process(cgtop::source::procs::ProcessPlace {
        pid: 681,
        group: GroupPath::new("default/sleeper"),
        command: "sleep".into(),
    });
    let mut c = collector(&root);
    tick(&mut a, &mut c, 0.0);
    assert_eq!(
        a.status.clone().unwrap().text,
        "PID 681 sleep: in /default/sleeper"
    );
    let mut id = Identity::of_name(&GroupPath::new(&web1())).unwrap();
    id.runtime = Some(cgtop::model::identity::Runtime::Containerd);
    id.id = "sleeper".into();
    id.name = Some("sleeper".into());
    let mut r = refresh(&mut c, 1.0);
    for g in &mut r.snapshot.groups {
        if g.path == GroupPath::new("default/sleeper") {
            g.identity = Some(Arc::new(id.clone()));
        }
    }
    send(
        &mut a,
        &mut c,
        Msg::Collected(Collected::Refresh(Box::new(r))),
    );
    assert_eq!(
        a.status.clone().unwrap().text,
        "PID 681 sleep: in containerd container sleeper, /default/sleeper"
    );
}

/// The owner's command in an open confirmation names the container as it
/// is now: the question asks the collector to resolve its identity afresh,
/// and the refresh that follows renews the command (`docker rename web-1
/// web-2` after cgtop first named it).
#[test]
fn a_confirmation_names_a_renamed_container_by_its_name_of_now() {
    use cgtop::app::dialog::confirm::Reason;
    use cgtop::app::{Effect, Mode};
    use cgtop::source::collector::Command;
    use cgtop::source::identity::{Resolver, Roots, DOCKER};
    let dir = lab_tree();
    let scope = format!("system.slice/docker-{ID1}.scope");
    crate::common::group_like(dir.path(), &scope, "batch");
    let ids = tempfile::tempdir().unwrap();
    let record = |name: &str| {
        let d = ids.path().join(DOCKER).join(ID1);
        std::fs::create_dir_all(&d).unwrap();
        let text = format!(r#"{{"ID":"{ID1}","Name":"/{name}","Config":{{"Image":"nginx"}}}}"#);
        std::fs::write(d.join("new"), text).unwrap();
        // as docker saves it: a new file renamed over the old
        std::fs::rename(d.join("new"), d.join("config.v2.json")).unwrap();
    };
    record("web-1");
    std::thread::sleep(std::time::Duration::from_millis(100));
    let (mut a, mut c) = app_on(dir.path(), pure_v2_mount(), 120, 40);
    a.read_only = None;
    c.set_identities(Some(Resolver::new(Roots {
        base: ids.path().to_path_buf(),
        units: false,
    })));
    tick(&mut a, &mut c, 1.0);
    select(&mut a, &mut c, &scope);
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('e'));
    let fx = crate::common::lab::enter_limit(&mut a, &mut c, "memory.max", "512M");
    // the owner's command the question says
    let said = |a: &App| match &a.mode {
        Mode::Confirm(q) => q
            .reasons
            .iter()
            .find_map(|r| match r {
                Reason::Owner(w) => w.command.clone(),
                _ => None,
            })
            .unwrap_or_default(),
        _ => String::new(),
    };
    assert_eq!(said(&a), "docker update --memory 512m web-1");
    let asked = fx.iter().any(|e| {
        matches!(e, Effect::Collector(Command::RenewIdentity(g)) if *g == GroupPath::new(&scope))
    });
    assert!(asked, "no fresh resolve asked for: {fx:?}");
    // renamed while the question is open
    record("web-2");
    c.renew_identity(GroupPath::new(&scope));
    tick(&mut a, &mut c, 2.0);
    assert_eq!(said(&a), "docker update --memory 512m web-2");
}

/// Sorted by name, the rows go by the names shown: the containers'
/// labels with identities on (`docker 77aa…` before `web-1 · docker`),
/// the kernel's names with `w` off (`docker-046c…` first).
#[test]
fn sort_by_name_goes_by_the_names_shown() {
    use cgtop::app::SortKey;
    let (mut a, mut c, _d) = containers(200, 50);
    for _ in 0..20 {
        if a.sort == SortKey::Name {
            break;
        }
        send(&mut a, &mut c, ch('<'));
    }
    assert_eq!(a.sort, SortKey::Name);
    assert!(!a.sort_desc);
    let order = |a: &App| -> Vec<String> {
        let want = [web1(), web1_podman(), hostile(), bare()].map(|p| GroupPath::new(&p));
        let ids = [ID1, ID2, ID3, ID5];
        visible_paths(a)
            .iter()
            .filter_map(|p| want.iter().position(|w| w == p))
            .map(|i| ids[i][..4].to_owned())
            .collect()
    };
    // docker 77aa…, evil…, web-1 · docker, web-1 · podman
    assert_eq!(order(&a), ["77aa", "ee11", "046c", "9a8b"]);
    send(&mut a, &mut c, ch('w'));
    // docker-046c…, docker-77aa…, docker-ee11…, libpod-9a8b…
    assert_eq!(order(&a), ["046c", "77aa", "ee11", "9a8b"]);
    send(&mut a, &mut c, ch('r'));
    assert_eq!(order(&a), ["9a8b", "ee11", "77aa", "046c"]);
}

/// A Kubernetes container's limit at 80x24: kubectl's command, longer
/// than the dialog is wide, on lines of its own broken between its words
/// (a shell continuation at each line's end) and inside its JSON patch
/// only where JSON allows white space, never inside a word.
#[test]
fn a_long_owner_command_at_80x24_breaks_between_words() {
    let (mut a, mut c, _d) = containers(80, 24);
    a.read_only = None;
    select(&mut a, &mut c, &api());
    read_inspection(&mut a, &mut c, 1.0);
    send(&mut a, &mut c, ch('e'));
    crate::common::lab::enter_limit(&mut a, &mut c, "memory.max", "512M");
    let s = screen(&a, 80, 24);
    assert!(s.contains("kubectl patch pod"), "{s}");
    insta::assert_snapshot!(s);
}
