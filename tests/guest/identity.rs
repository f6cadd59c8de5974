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
//! - podman rootful `web-1`, and `shop-db` in the pod `shop-pod`, whose
//!   name is only in podman's bolt_state.db, and the pod's own slice
//!   (`podman-pod-slice`);
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
use crate::vm_common::{figure, require_vm, Tmux};
use serde_json::Value;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// One running container, as its runtime reported it.
#[derive(Debug)]
struct Container {
    runtime: String,
    name: String,
    image: String,
    id: String,
    /// Its process's PID, as the runtime reported it (0 where none).
    pid: u32,
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
            let [runtime, name, image, id, pid, cgroup] = f[..] else {
                return None;
            };
            Some(Container {
                runtime: runtime.into(),
                name: name.into(),
                image: image.into(),
                id: id.into(),
                pid: pid.trim().parse().unwrap_or(0),
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
        "podman-pod-slice",
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
    if c.runtime == "podman-pod-slice" {
        // the pod's slice, named from podman's state database by its id
        for (k, want) in [
            ("kind", "podman_pod"),
            ("name", c.name.as_str()),
            ("id", c.id.as_str()),
        ] {
            if s(k) != want {
                miss.push(format!("{k} {:?}, want {want:?}", id[k]));
            }
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
    // podman keeps a pod's name only in its database, which cgtop reads
    if c.runtime == "podman-pod" && s("pod") != "shop-pod" {
        miss.push(format!("pod {:?}, want shop-pod", id["pod"]));
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
            .filter(|c| {
                !matches!(
                    c.runtime.as_str(),
                    "k8s-pod" | "podman-pod-slice" | "cri-sandbox"
                )
            })
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
        if c.runtime == "podman-pod-slice" {
            if label(info, "pod") != Some(c.name.as_str()) {
                fails.push(format!("{} {}: pod label in {info}", c.runtime, c.name));
            }
            continue;
        }
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
        // podman keeps a pod's name only in its database, which cgtop reads
        if c.runtime == "podman-pod" && label(info, "pod") != Some("shop-pod") {
            fails.push(format!("{} {}: pod label in {info}", c.runtime, c.name));
        }
    }
    drop(serve);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(fails.is_empty(), "/metrics:\n{}", fails.join("\n"));
}

// ---------------------------------------------------------------------------
// The TUI, in tmux, as an operator would drive it.

/// How long a screen may take to show what is waited for: the debug
/// build under TCG, its first frame, then the identities read after it.
const TUI_WAIT: Duration = Duration::from_secs(60);

/// The containers whose names the TUI must show (the pods' slices and the
/// sandbox aside; `/` finds the slices by name).
fn named_containers(list: &[Container]) -> Vec<&Container> {
    list.iter()
        .filter(|c| {
            !matches!(
                c.runtime.as_str(),
                "k8s-pod" | "podman-pod-slice" | "cri-sandbox"
            )
        })
        .collect()
}

/// A TUI session of cgtop with `args`, `w`x`h`, in tmux.
fn tui(args: &str, w: u16, h: u16) -> Tmux {
    Tmux::run(&format!("{} {args}", env!("CARGO_BIN_EXE_cgtop")), w, h)
}

/// Waits until the screen satisfies `pred`; the last screen as the
/// error after `limit` (the case goes on to the next container).
fn wait_screen(t: &Tmux, limit: Duration, pred: impl Fn(&str) -> bool) -> Result<String, String> {
    let t0 = Instant::now();
    loop {
        let s = t.capture();
        if pred(&s) {
            return Ok(s);
        }
        if t0.elapsed() > limit {
            return Err(s);
        }
        sleep(Duration::from_millis(200));
    }
}

/// The tree's rows on a screen: below the column header (GROUP ...)
/// down to the bar that names the selected group (a line starting with
/// `─`) or the filter's line; each cut where the detail beside the tree
/// starts (the `┌` on the header's line), so that the detail's text
/// ("WHO docker container shop-api-1") is not taken for a row.
fn tree_rows(screen: &str) -> Vec<String> {
    let mut lines = screen
        .lines()
        .skip_while(|l| !(l.contains("GROUP") && l.contains("CPU%")));
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cut = header.chars().position(|c| c == '┌');
    lines
        .take_while(|l| {
            let t = l.trim_start();
            !t.starts_with('─') && !t.starts_with("filter:")
        })
        .map(|l| match cut {
            Some(n) => l.chars().take(n).collect(),
            None => l.to_string(),
        })
        .collect()
}

/// Whether `line` has `name` as a whole word (tree glyphs, `·`,
/// brackets aside: "├──web-1 · podman 6e34…" has web-1; "shop-api-1"
/// does not have api).
fn has_word(line: &str, name: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
        .any(|w| w == name)
}

/// The tree row naming `name`, if one does.
fn row_naming(screen: &str, name: &str) -> Option<String> {
    tree_rows(screen)
        .into_iter()
        .find(|l| has_word(l, name))
        .map(|l| l.trim_end().to_string())
}

/// A captured screen, printed whole in the test's output (the run's log
/// keeps it) with a one-line figure.
fn screen_artifact(case: &str, label: &str, screen: &str) {
    println!("SCREEN {case} {label} (tmux capture-pane):");
    for l in screen.lines() {
        println!("  |{l}|");
    }
    println!("END SCREEN {case} {label}");
    figure(
        case,
        &format!("{label}: screen printed above (SCREEN {case} {label})"),
    );
}

/// Types `/`, `text`, Enter: the filter kept.
fn filter(t: &Tmux, text: &str) {
    t.send(&["/"]);
    sleep(Duration::from_millis(300));
    t.type_text(text);
    sleep(Duration::from_millis(300));
    t.send(&["Enter"]);
}

/// Every container's name on a tree row at 80x24 and at 200x50, as a
/// user finds it: the tree's first screen (whatever is on it counts), then
/// `/` with the name for the others; each screen printed. (Not the flat
/// list: it names every row by its whole path, identities or not.)
#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn tui_shows_each_container_name_at_80x24_and_200x50() {
    let list = containers();
    let named = named_containers(&list);
    let mut fails = Vec::new();
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let size = format!("{w}x{h}");
        let t = tui("", w, h);
        // the identities come after the first frame: wait for one of them
        let first = wait_screen(&t, Duration::from_secs(20), |s| {
            named.iter().any(|c| row_naming(s, &c.name).is_some())
        });
        let first = match first {
            Ok(s) | Err(s) => s,
        };
        screen_artifact("identity_tui", &format!("{size} tree"), &first);
        let mut on_first = Vec::new();
        for c in &named {
            if row_naming(&first, &c.name).is_some() {
                on_first.push(c.name.as_str());
                continue;
            }
            filter(&t, &c.name);
            match wait_screen(&t, TUI_WAIT, |s| row_naming(s, &c.name).is_some()) {
                Ok(s) => {
                    screen_artifact("identity_tui", &format!("{size} /{}", c.name), &s);
                    figure(
                        "identity_tui",
                        &format!(
                            "{size} {} {}: row {:?}",
                            c.runtime,
                            c.name,
                            row_naming(&s, &c.name).unwrap_or_default()
                        ),
                    );
                }
                Err(s) => {
                    screen_artifact("identity_tui", &format!("{size} /{} MISSED", c.name), &s);
                    fails.push(format!(
                        "{size} {} {}: no tree row names it, first screen then /{}",
                        c.runtime, c.name, c.name
                    ));
                }
            }
            // Esc clears the filter
            t.send(&["Escape"]);
            sleep(Duration::from_millis(500));
        }
        figure(
            "identity_tui",
            &format!("{size}: on the tree's first screen without a filter: {on_first:?}"),
        );
        t.send(&["q"]);
    }
    assert!(fails.is_empty(), "TUI:\n{}", fails.join("\n"));
}

/// `/` with a container's name (or the pod's) in the tree (not flat):
/// the filtered tree shows that container's row, its parents kept.
#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn tui_filter_finds_each_container_by_name() {
    let list = containers();
    let mut fails = Vec::new();
    let t = tui("", 160, 45);
    if let Err(s) = wait_screen(&t, TUI_WAIT, |s| !tree_rows(s).is_empty()) {
        panic!("cgtop's tree never came:\n{s}");
    }
    for c in list.iter().filter(|c| c.runtime != "cri-sandbox") {
        filter(&t, &c.name);
        match wait_screen(&t, TUI_WAIT, |s| row_naming(s, &c.name).is_some()) {
            Ok(s) => {
                let row = row_naming(&s, &c.name).unwrap_or_default();
                figure(
                    "identity_filter",
                    &format!(
                        "/{} ({}): row {row:?}, {} rows shown",
                        c.name,
                        c.runtime,
                        tree_rows(&s).len()
                    ),
                );
                screen_artifact("identity_filter", &format!("/{}", c.name), &s);
            }
            Err(s) => {
                screen_artifact("identity_filter", &format!("/{} MISSED", c.name), &s);
                fails.push(format!("/{} ({}): no tree row names it", c.name, c.runtime));
            }
        }
        t.send(&["Escape"]);
        sleep(Duration::from_millis(500));
    }
    t.send(&["q"]);
    assert!(fails.is_empty(), "filter:\n{}", fails.join("\n"));
}

/// `cgtop --pid PID` of each container's process: the status line says
/// which container holds it ("PID 812 sleep: in docker container
/// shop-api-1 (046c7a5b3d2e), /system.slice/docker-….scope") and the
/// process page of the group selected lists the PID.
#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn pid_option_lands_on_each_containers_group() {
    let list = containers();
    let mut fails = Vec::new();
    for c in named_containers(&list) {
        if c.pid == 0 {
            fails.push(format!("{} {}: no pid listed", c.runtime, c.name));
            continue;
        }
        let t = tui(&format!("--pid {}", c.pid), 200, 50);
        let said = |s: &str| {
            s.lines().any(|l| {
                l.contains(&format!("PID {} ", c.pid))
                    && l.contains(" container ")
                    && has_word(l, &c.name)
            })
        };
        // the process page (the detail beside the tree) of the group
        // selected: "│    443 root      S ..."
        let row = format!("│{:>7} ", c.pid);
        let selected = |s: &str| s.contains("COMMAND") && s.lines().any(|l| l.contains(&row));
        match wait_screen(&t, TUI_WAIT, |s| said(s) && selected(s)) {
            Ok(s) => {
                let line = s
                    .lines()
                    .find(|l| l.contains(&format!("PID {} ", c.pid)) && has_word(l, &c.name))
                    .unwrap_or("")
                    .trim();
                figure(
                    "identity_pid",
                    &format!("--pid {} ({} {}): {line:?}", c.pid, c.runtime, c.name),
                );
                if c.runtime == "docker" {
                    screen_artifact("identity_pid", &format!("--pid {} ({})", c.pid, c.name), &s);
                    if !line.contains(&format!("in docker container {} ", c.name)) {
                        fails.push(format!(
                            "{}: status {line:?} lacks \"in docker container {}\"",
                            c.name, c.name
                        ));
                    }
                }
            }
            Err(s) => {
                screen_artifact(
                    "identity_pid",
                    &format!("--pid {} ({}) MISSED", c.pid, c.name),
                    &s,
                );
                fails.push(format!(
                    "--pid {} ({} {}): no status line naming the container{}",
                    c.pid,
                    c.runtime,
                    c.name,
                    if selected(&s) {
                        ""
                    } else {
                        ", nor its group selected"
                    }
                ));
            }
        }
        t.send(&["q"]);
    }
    assert!(fails.is_empty(), "--pid:\n{}", fails.join("\n"));
}

/// The text inside the confirmation's box, its lines joined (a long
/// command wraps).
fn confirmation_text(screen: &str) -> Option<String> {
    let mut inside = false;
    let mut text = Vec::new();
    for l in screen.lines() {
        if l.contains("┌ confirm") {
            inside = true;
            continue;
        }
        if inside {
            if l.contains('└') {
                return Some(
                    text.join(" ")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
            let (Some(a), Some(b)) = (l.find('│'), l.rfind('│')) else {
                continue;
            };
            if b > a {
                text.push(l[a + '│'.len_utf8()..b].trim().to_string());
            }
        }
    }
    None
}

/// `e` on docker's container, CPU 50%, Enter: the confirmation names the
/// owner and its durable way (`docker update --cpus 0.5 shop-api-1`);
/// Esc cancels and cpu.max is left as it was. Where docker's scope has no
/// cpu controller, memory.max (the form's eighth field) 512M and
/// `docker update --memory 512m` instead.
#[test]
#[ignore = "needs the identity guest: tests/vm/runtimes/run"]
fn limit_edit_on_docker_container_names_docker_update() {
    let list = containers();
    let c = list
        .iter()
        .find(|c| c.runtime == "docker")
        .expect("docker's container listed");
    let group = c.group();
    let dir = std::path::PathBuf::from(format!("/sys/fs/cgroup{group}"));
    // (the file, the field's place in the form, typed, docker's way)
    let (file, downs, typed, way) = if dir.join("cpu.max").exists() {
        ("cpu.max", 0, "50%", "--cpus 0.5")
    } else {
        ("memory.max", 7, "512M", "--memory 512m")
    };
    let limit = dir.join(file);
    let before = std::fs::read_to_string(&limit).expect("read the container's limit");
    let t = tui(&group, 200, 50);
    // the start row, then the first detail that makes the actions ready
    // and the identity read after the first frame
    if let Err(s) = wait_screen(&t, TUI_WAIT, |s| !tree_rows(s).is_empty()) {
        screen_artifact("identity_owner_write", "start MISSED", &s);
        panic!("cgtop at {group} showed no tree");
    }
    sleep(Duration::from_secs(5));
    t.send(&["e"]);
    if let Err(s) = wait_screen(&t, TUI_WAIT, |s| s.contains("cpu.max")) {
        screen_artifact("identity_owner_write", "e MISSED", &s);
        panic!("e opened no limits form");
    }
    for _ in 0..downs {
        t.send(&["Down"]);
        sleep(Duration::from_millis(200));
    }
    t.type_text(typed);
    if let Err(s) = wait_screen(&t, TUI_WAIT, |s| s.contains(&format!("{typed}_"))) {
        screen_artifact("identity_owner_write", &format!("{typed} MISSED"), &s);
        panic!("{typed} not typed into the {file} field");
    }
    t.send(&["Enter"]);
    let confirm = wait_screen(&t, TUI_WAIT, |s| confirmation_text(s).is_some());
    let screen = match &confirm {
        Ok(s) | Err(s) => s.clone(),
    };
    screen_artifact(
        "identity_owner_write",
        &format!("e {file} {typed} Enter"),
        &screen,
    );
    t.send(&["Escape"]);
    sleep(Duration::from_secs(2));
    let after = std::fs::read_to_string(&limit).expect("read the container's limit");
    t.send(&["Escape"]);
    t.send(&["q"]);
    let text = confirmation_text(&screen).unwrap_or_default();
    figure("identity_owner_write", &format!("confirmation: {text:?}"));
    let want = format!("docker update {way} {}", c.name);
    assert!(confirm.is_ok(), "Enter showed no confirmation");
    assert!(
        text.contains(&format!("docker container {}", c.name)) && text.contains(&want),
        "the confirmation does not name the owner and {want:?}: {text:?}"
    );
    assert_eq!(after, before, "Esc at the confirmation still wrote {file}");
}
