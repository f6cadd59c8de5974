//! Who groups are, in every output of the real binary on a `--root` tree
//! whose groups are named as the container runtimes and systemd name
//! them (the identities their names alone give): `-b`'s name column,
//! `--json`'s `identity` object, `cgroup_info`'s labels; hostile names
//! escaped in each. And recordings that carry resolved identities, read
//! back by the replay's reader.

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use super::batch::{cgtop, stdout};
use crate::common::{copy_fixture, count_descendants};
use cgtop::model::identity::Identity;
use cgtop::model::time::record::{decode_all, Encoder, Header, Record, SampleRef};
use cgtop::model::{GroupPath, GroupSample, HostInfo, MountInfo, MountMode, Snapshot};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const ID: &str = "046c7a5b3d2e1f00aa11bb22cc33dd44ee55ff66778899aabbccddeeff0011d5";
const POD: &str = "kubepods-burstable-pod7fda01c4_0ece_403d_88b4_c371d66d132a.slice";

/// The systemd fixture with a docker container, a pod and its container,
/// a machine whose name holds an ESC sequence and a direction override,
/// and an LXC container whose name holds a line feed.
fn tree() -> tempfile::TempDir {
    let dir = copy_fixture("pure-v2-systemd");
    let root = dir.path();
    for g in [
        format!("system.slice/docker-{ID}.scope"),
        "machine.slice".to_owned(),
        "machine.slice/machine-a\u{1b}[2J\u{202e}b.scope".to_owned(),
        r"machine.slice/machine-web\x2d1.scope".to_owned(),
        "lxc.payload.a\nb".to_owned(),
        "kubepods.slice".to_owned(),
        format!("kubepods.slice/{POD}"),
        format!("kubepods.slice/{POD}/cri-containerd-{ID}.scope"),
    ] {
        make_group(root, &g);
    }
    dir
}

fn make_group(root: &Path, group: &str) {
    let from = root.join("system.slice/systemd-journald.service");
    let to = root.join(group);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    count_descendants(root, group, 1);
}

fn run(root: &Path, args: &[&str]) -> String {
    let r = root.to_str().unwrap();
    let mut all = vec!["--root", r];
    all.extend_from_slice(args);
    if !args.contains(&"--openmetrics") {
        all.extend_from_slice(&["-n", "1", "-d", "0.1"]);
    }
    let o = cgtop(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!o.stdout.contains(&0x1b), "an ESC byte in the output");
    let text = stdout(&o);
    assert!(
        !text.contains('\u{202e}') && !text.contains('\u{9b}'),
        "a direction or C1 character in the output"
    );
    text
}

#[test]
fn batch_names_containers_pods_and_machines_escaped() {
    let dir = tree();
    let text = run(dir.path(), &["-b"]);
    let rows: Vec<&str> = text.lines().collect();
    let row = |what: &str| {
        rows.iter()
            .find(|l| l.trim_start().starts_with(what))
            .unwrap_or_else(|| panic!("no row {what:?}:\n{text}"))
    };
    row("docker 046c7a5b3d2e ");
    row("pod 7fda01c4-0ece-403d-88b4-c371d66d132a · Burstable ");
    row("containerd 046c7a5b3d2e ");
    row("machine a\\e[2J\\u{202e}b ");
    row("machine web-1 ");
    row("a\\nb · lxc ");
    // the kernel's names where nothing more is known
    row("systemd-journald.service ");
    assert!(!text.contains(&format!("docker-{ID}")), "{text}");
}

/// `--kernel-names` (the view's w) names rows by the kernel's names, for
/// scripts; the flat list names every row by its whole path either way.
#[test]
fn kernel_names_and_the_flat_list_show_paths() {
    let dir = tree();
    let text = run(dir.path(), &["-b", "--kernel-names"]);
    assert!(text.contains(&format!("docker-{ID}.scope")), "{text}");
    assert!(!text.contains("docker 046c7a5b3d2e "), "{text}");
    let text = run(dir.path(), &["-b", "--flat"]);
    assert!(text.contains(&format!("/docker-{ID}.scope")), "{text}");
    assert!(!text.contains("docker 046c7a5b3d2e "), "{text}");
}

#[test]
fn json_has_an_identity_object_per_group_null_where_none() {
    let dir = tree();
    let text = run(dir.path(), &["--json"]);
    let doc: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let groups = doc["groups"].as_array().unwrap();
    let of = |path: &str| -> &serde_json::Value {
        &groups
            .iter()
            .find(|g| g["path"] == path)
            .unwrap_or_else(|| panic!("no group {path}"))["identity"]
    };
    // the root is nobody's
    assert!(of("/").is_null());
    let d = of(&format!("/system.slice/docker-{ID}.scope"));
    assert_eq!(d["kind"], "container");
    assert_eq!(d["runtime"], "docker");
    assert_eq!(d["id"], ID);
    assert!(d["name"].is_null() && d["image"].is_null());
    assert_eq!(d["labels"], serde_json::json!([]));
    let p = of(&format!("/kubepods.slice/{POD}"));
    assert_eq!(p["kind"], "pod");
    assert_eq!(p["qos"], "Burstable");
    assert_eq!(p["pod_uid"], "7fda01c4-0ece-403d-88b4-c371d66d132a");
    // escaped as the path is
    let m = of("/machine.slice/machine-a\\e[2J\\u{202e}b.scope");
    assert_eq!(m["kind"], "machine");
    assert_eq!(m["id"], "a\\e[2J\\u{202e}b");
    let l = of("/lxc.payload.a\\nb");
    assert_eq!(l["name"], "a\\nb");
    assert_eq!(of("/init.scope")["kind"], "unit");
    // every field README documents, in every object
    for key in [
        "kind",
        "runtime",
        "id",
        "name",
        "image",
        "pod",
        "namespace",
        "pod_uid",
        "qos",
        "labels",
        "description",
        "user",
        "tty",
        "remote_host",
        "source",
        "unreadable",
    ] {
        assert!(d.get(key).is_some(), "no {key} in {d}");
    }
}

#[test]
fn cgroup_info_carries_the_container_and_no_other_series_does() {
    let dir = tree();
    let text = run(dir.path(), &["--openmetrics"]);
    let docker = format!(
        "cgroup_info{{cgroup=\"/system.slice/docker-{ID}.scope\",type=\"domain\",frozen=\"0\",populated=\"1\",container=\"046c7a5b3d2e\"}} 1"
    );
    assert!(text.lines().any(|l| l == docker), "{docker}\n{text}");
    // the line feed escaped as a name (`\n`), then as a label value (`\\n`)
    assert!(
        text.lines().any(
            |l| l.starts_with("cgroup_info{cgroup=\"/lxc.payload.a\\\\nb\"")
                && l.contains("container=\"a\\\\nb\"")
        ),
        "{text}"
    );
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        if !l.starts_with("cgroup_info") {
            for label in ["container=", "pod=", "namespace=", "image="] {
                assert!(!l.contains(label), "{label} on another series: {l}");
            }
        }
    }
}

#[test]
fn the_filter_of_the_exporter_finds_a_container_by_its_id_prefix() {
    let dir = tree();
    let text = run(dir.path(), &["--openmetrics", "--filter", "046c7a5b"]);
    assert!(text.contains(&format!("docker-{ID}.scope")), "{text}");
    assert!(!text.contains("systemd-journald"), "{text}");
}

fn header() -> Header {
    Header {
        host: HostInfo {
            hostname: "recorder".into(),
            kernel: "6.1.0".into(),
            ncpus: 2,
            swap_total: None,
        },
        mount: MountInfo {
            root: "/sys/fs/cgroup".into(),
            mode: MountMode::PureV2,
        },
        start: GroupPath::root(),
        interval: Duration::from_secs(1),
        start_unix: Duration::from_secs(1_700_000_000),
    }
}

/// Three samples: a container's identity resolved, then changed (its
/// image), then gone (a group made again without one); a hostile name.
#[test]
fn recordings_carry_identities_through_changes_and_frames() {
    let path = format!("system.slice/docker-{ID}.scope");
    let mut who = Identity::of_name(&GroupPath::new(&path)).unwrap();
    who.name = Some("web-1\u{1b}[2J\u{202e}".into());
    who.image = Some("nginx:1.25".into());
    who.labels = vec![("k\n".into(), "v".repeat(1_000))];
    let first = Arc::new(who.clone());
    who.image = Some("nginx:1.27".into());
    let second = Arc::new(who);
    let sample = |at: u64, id: Option<&Arc<Identity>>| {
        let mut g = GroupSample::new(GroupPath::new(&path), 7);
        g.identity = id.cloned();
        Snapshot {
            at: Duration::from_secs(at),
            groups: vec![GroupSample::new(GroupPath::root(), 1), g],
            cost: cgtop::model::ScanCost::default(),
        }
    };
    let snaps = [
        sample(1, Some(&first)),
        sample(2, Some(&first)),
        sample(3, Some(&second)),
        sample(4, None),
    ];
    let mut enc = Encoder::new();
    let mut bytes = Vec::new();
    enc.start_frame(&header(), &mut bytes);
    for (k, s) in snaps.iter().enumerate() {
        if k == 3 {
            // a new frame: every identity again (here none)
            enc.start_frame(&header(), &mut bytes);
        }
        enc.sample(
            &SampleRef {
                snapshot: s,
                limits: &[],
                devices: &[],
                busy: &[],
            },
            &mut bytes,
        );
    }
    let (records, err) = decode_all(&bytes);
    assert_eq!(err, None);
    // the identity written once, again when it changed, not when it stayed
    let written = records
        .iter()
        .filter(|r| matches!(r, Record::Identities(_)))
        .count();
    assert_eq!(written, 2, "{records:?}");
    let got: Vec<&Snapshot> = records
        .iter()
        .filter_map(|r| match r {
            Record::Sample(s) => Some(&s.snapshot),
            _ => None,
        })
        .collect();
    assert_eq!(got.len(), 4);
    for (g, want) in got.iter().zip(&snaps) {
        assert_eq!(*g, want);
    }
    // through the file reader (zstd frames), as a replay reads it
    let file = zstd::encode_all(&bytes[..], 3).unwrap();
    let (samples, damaged) = cgtop::source::record::read_all(&file);
    assert_eq!(damaged, 0);
    assert_eq!(
        samples[2].snapshot.groups[1].identity.as_deref(),
        Some(&*second)
    );
}

/// A hostile identities record: refused, never a panic or a huge
/// allocation (counts capped, codes checked, nothing before a header).
#[test]
fn a_lying_identities_record_is_refused() {
    use cgtop::model::time::record::{DecodeError, Decoder, TAG_IDENTITIES};
    let mut d = Decoder::new();
    // before any header
    assert!(matches!(
        d.record(TAG_IDENTITIES, &[0]),
        Err(DecodeError::Invalid(_))
    ));
    let mut h = Vec::new();
    Encoder::new().start_frame(&header(), &mut h);
    let (tag, payload, _) = cgtop::model::time::record::split_record(&h)
        .unwrap()
        .unwrap();
    d.record(tag, payload).unwrap();
    // 2^40 entries claimed
    let huge = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20];
    assert!(matches!(
        d.record(TAG_IDENTITIES, &huge),
        Err(DecodeError::TooLarge(_))
    ));
    // one entry, path "a", an identity whose kind code is 200
    assert!(matches!(
        d.record(TAG_IDENTITIES, &[1, 1, b'a', 1, 200, 0, 0]),
        Err(DecodeError::Invalid(_))
    ));
    // a path that climbs out
    assert!(d.record(TAG_IDENTITIES, &[1, 2, b'.', b'.', 0]).is_err());
    // cut short
    assert!(matches!(
        d.record(TAG_IDENTITIES, &[1, 1, b'a', 1]),
        Err(DecodeError::Truncated)
    ));
}

/// A container renamed while cgtop runs (`docker rename web-1 web-2`,
/// which saves a new config.v2.json) is shown by its new name within a
/// few refreshes: `-b` on a tree with the container, the identity
/// sources in a test root.
#[test]
fn a_renamed_container_is_shown_by_its_new_name() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tree();
    let ids = tempfile::tempdir().unwrap();
    let rec = ids.path().join("var/lib/docker/containers").join(ID);
    std::fs::create_dir_all(&rec).unwrap();
    let save = |name: &str| {
        let text = format!(r#"{{"ID":"{ID}","Name":"/{name}","Config":{{"Image":"nginx"}}}}"#);
        std::fs::write(rec.join("new"), text).unwrap();
        std::fs::rename(rec.join("new"), rec.join("config.v2.json")).unwrap();
    };
    save("web-1");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cgtop"))
        .args(["-b", "-d", "0.2", "-n", "60", "--root"])
        .arg(dir.path())
        .env("CGTOP_IDENTITY_ROOT", ids.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (mut renamed_at, mut seen_new_at) = (None, None);
    for (n, line) in out.lines().map_while(Result::ok).enumerate() {
        if renamed_at.is_none() && line.contains("web-1 · docker 046c7a5b3d2e") {
            save("web-2");
            renamed_at = Some(n);
        }
        if renamed_at.is_some() && line.contains("web-2 · docker 046c7a5b3d2e") {
            seen_new_at = Some(n);
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(renamed_at.is_some(), "web-1 never shown");
    assert!(seen_new_at.is_some(), "web-2 never shown in 60 refreshes");
}
