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
//! - podman's pods: their names only in podman's state database beside
//!   the store, `<graphroot>/libpod/db.sql` (SQLite, podman 5) and
//!   `<graphroot>/libpod/bolt_state.db` (BoltDB, podman 4), both read
//!   where both are (by pod id, the first found kept), and with
//!   `transient_store` root's db.sql below the runroot
//!   (`/run/containers/storage/libpod/db.sql`): [`super::sqlite`],
//!   [`super::bolt`]. Capped like the store ([`CAP_STATE_DB`],
//!   [`CAP_ROOTLESS_STORE`] for a rootless user's).

use super::read::{cut, read_file, read_json, read_typed, text, Dir, Miss};
use crate::model::identity::{is_container_id, Identity};
use crate::source::hier::Hier;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The storage drivers whose directories are looked in, in this order.
pub const DRIVERS: [&str; 4] = ["overlay", "vfs", "btrfs", "zfs"];
/// The cap of containers.json and images.json: about 1.5 KiB a container,
/// so 32 MiB is 20,000 containers.
pub const CAP_STORE: usize = 32 << 20;
/// The cap of a rootless user's containers.json and images.json: about
/// 2,700 containers. Whoever owns the file writes it, and can make root's
/// cgtop read it again (a new group of theirs) about once a second
/// ([`super::ROOTLESS_EVERY`]): a parse of 4 MiB is its bound.
pub const CAP_ROOTLESS_STORE: usize = 4 << 20;
/// The cap of one OCI bundle's config.json (tens of KiB in practice).
pub const CAP_BUNDLE: usize = 1 << 20;
/// The most containers (and images) kept of one containers.json or
/// images.json: what 32 MiB holds of real records. A rootless user
/// writes their own store; whatever it holds, what is kept of it is at
/// most this many records of a container id and three fields cut to
/// `read::FIELD_MAX` bytes (about 40 MiB at worst).
pub const MAX_RECORDS: usize = 20_000;

/// The cap of root's podman state database (db.sql, bolt_state.db): a
/// bolt file keeps each container's JSON config and state (about 10 KiB
/// a container) and never shrinks, so 32 MiB is some 3,000 containers
/// made; a larger file gives the pods no name ("file larger than 32 MiB").
pub const CAP_STATE_DB: usize = 32 << 20;
/// podman's state databases below the graphroot, read in this order.
pub const STATE_DBS: [&str; 2] = ["libpod/db.sql", "libpod/bolt_state.db"];

/// One container of containers.json.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub name: Option<String>,
    pub image_id: Option<String>,
    pub image_name: Option<String>,
}

/// A store's containers by id, and its images' names by id.
#[derive(Debug)]
pub struct Store {
    pub containers: HashMap<String, Entry>,
    pub images: HashMap<String, String>,
    /// The file the containers came from.
    pub source: String,
    /// podman's pods: id -> (name, index in `pod_sources`), or why the
    /// state database could not be read.
    pub pods: Result<HashMap<String, (String, usize)>, Miss>,
    /// The state databases the pods came from.
    pub pod_sources: Vec<String>,
}

impl Default for Store {
    fn default() -> Self {
        Self {
            containers: HashMap::new(),
            images: HashMap::new(),
            source: String::new(),
            pods: Err(Miss::Absent),
            pod_sources: Vec::new(),
        }
    }
}

/// Reads a store rooted at `root` (relative to `h`: "" for a directory
/// opened as the graphroot, `home/alice/.local/...` for a rootless user's
/// beneath `/`), shown as `shown`. With `owner`, only files that uid owns
/// are read, each at most [`CAP_ROOTLESS_STORE`]; else [`CAP_STORE`].
pub fn load(
    h: &Hier,
    root: &Path,
    shown: &Path,
    owner: Option<u32>,
    errors: &mut u64,
) -> Result<Store, Miss> {
    let cap = if owner.is_some() {
        CAP_ROOTLESS_STORE
    } else {
        CAP_STORE
    };
    let mut store = Store::default();
    let mut found = None;
    for d in DRIVERS {
        let dir = root.join(format!("{d}-containers"));
        let main = dir.join("containers.json");
        match read_typed::<Records>(h, &main, cap, owner, errors) {
            Ok(v) => {
                add_containers(&mut store, v);
                // the volatile store beside it (containers made with
                // --transient-store or volatile), where there is one
                if let Ok(v) = read_typed::<Records>(
                    h,
                    &dir.join("volatile-containers.json"),
                    cap,
                    owner,
                    errors,
                ) {
                    add_containers(&mut store, v);
                }
                store.source = shown.join(&main).to_string_lossy().into_owned();
                found = Some(d);
                break;
            }
            Err(Miss::Absent) => {}
            Err(m) => return Err(m),
        }
    }
    store.pods = load_pods(h, root, shown, owner, errors, &mut store.pod_sources);
    let Some(driver) = found else {
        // no containers (yet): the pods' names all the same
        return match store.pods {
            Err(Miss::Absent) => Err(Miss::Absent),
            _ => Ok(store),
        };
    };
    let images = root.join(format!("{driver}-images")).join("images.json");
    if let Ok(list) = read_typed::<Records>(h, &images, cap, owner, errors) {
        for im in list.0 {
            if let (Some(id), Some(name)) = (im.id, im.first_name) {
                store.images.entry(id).or_insert(name);
            }
        }
    }
    Ok(store)
}

/// podman's pods from the state databases below `root` ([`STATE_DBS`]),
/// each by the hostile-file rules, capped [`CAP_STATE_DB`] (with `owner`:
/// [`CAP_ROOTLESS_STORE`] and only a file that uid owns). A file that
/// fails a bound of its reader is counted in `errors` and gives no names;
/// `Err` when no database gave any.
pub fn load_pods(
    h: &Hier,
    root: &Path,
    shown: &Path,
    owner: Option<u32>,
    errors: &mut u64,
    sources: &mut Vec<String>,
) -> Result<HashMap<String, (String, usize)>, Miss> {
    let cap = if owner.is_some() {
        CAP_ROOTLESS_STORE
    } else {
        CAP_STATE_DB
    };
    let mut pods = HashMap::new();
    let mut miss = Miss::Absent;
    let mut read_any = false;
    for file in STATE_DBS {
        let rel = root.join(file);
        let parse = if file == STATE_DBS[0] {
            super::sqlite::pods
        } else {
            super::bolt::pods
        };
        let found = match read_file(h, &rel, cap, owner) {
            Ok(bytes) => parse(&bytes).map_err(|super::bolt::Bad(why)| {
                *errors += 1;
                Miss::Unreadable(format!("{file}: not read ({why})"))
            }),
            Err(Miss::Absent) => continue,
            Err(Miss::Unreadable(why)) => Err(Miss::Unreadable(format!("{file}: {why}"))),
        };
        match found {
            Ok(list) => {
                read_any = true;
                let at = sources.len();
                sources.push(shown.join(&rel).to_string_lossy().into_owned());
                for (id, name) in list {
                    pods.entry(id).or_insert((name, at));
                }
            }
            Err(m) => miss = m,
        }
    }
    if read_any {
        Ok(pods)
    } else {
        Err(miss)
    }
}

/// The containers of one containers.json; the first of two with the same
/// id is kept (as containers/storage does).
fn add_containers(store: &mut Store, list: Records) {
    for c in list.0 {
        let Some(id) = c.id else {
            continue;
        };
        let meta = c.metadata.unwrap_or_default();
        let e = Entry {
            name: c.first_name.or(meta.name),
            image_id: c.image,
            image_name: meta.image_name,
        };
        store.containers.entry(id).or_insert(e);
    }
}

/// The records of a containers.json or images.json (a JSON array of
/// objects), read value by value: only records with a container id, at
/// most [`MAX_RECORDS`], and of each only the fields used. Anything else
/// (another shape, a field of another type) is skipped, not an error;
/// only text that is not JSON is.
#[derive(Debug, Default)]
struct Records(Vec<Record>);

/// One record: `id`, the first of `names`, `image`, and podman's
/// `metadata` (a JSON text: `name`, `image-name`).
#[derive(Debug, Default)]
struct Record {
    id: Option<String>,
    first_name: Option<String>,
    image: Option<String>,
    metadata: Option<Meta>,
}

#[derive(Debug, Default)]
struct Meta {
    name: Option<String>,
    image_name: Option<String>,
}

/// What a JSON value is read as: skipped whole unless it is what is
/// wanted.
#[derive(Clone, Copy)]
enum Want {
    /// A string, kept cut to `read::FIELD_MAX` (empty: none).
    Text,
    /// An array whose first element is a string.
    FirstText,
    /// A string that is itself a JSON object (podman's `metadata`).
    Meta,
    /// An object: a [`Record`].
    Record,
    /// An array of records.
    Records,
}

/// What a [`Want`] gives.
enum Got {
    None,
    Text(String),
    Meta(Meta),
    Record(Record),
    Records(Records),
}

impl<'de> serde::de::DeserializeSeed<'de> for Want {
    type Value = Got;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Got, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Want {
    type Value = Got;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Got, E> {
        Ok(Got::None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Got, E> {
        Ok(Got::None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Got, E> {
        Ok(Got::None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Got, E> {
        Ok(Got::None)
    }
    fn visit_unit<E>(self) -> Result<Got, E> {
        Ok(Got::None)
    }

    fn visit_str<E>(self, v: &str) -> Result<Got, E> {
        Ok(match self {
            Self::Text if !v.is_empty() => Got::Text(cut(v)),
            Self::Meta => serde_json::Deserializer::from_str(v)
                .deserialize_any(Self::Record)
                .map_or(Got::None, |g| match g {
                    Got::Record(r) => Got::Meta(Meta {
                        name: r.first_name,
                        image_name: r.image,
                    }),
                    _ => Got::None,
                }),
            _ => Got::None,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Got, A::Error> {
        let mut out = Got::None;
        match self {
            Self::FirstText => {
                if let Some(g) = a.next_element_seed(Self::Text)? {
                    out = g;
                }
            }
            Self::Records => {
                let mut list = Vec::new();
                while list.len() < MAX_RECORDS {
                    match a.next_element_seed(Self::Record)? {
                        Some(Got::Record(r)) if r.id.is_some() => list.push(r),
                        Some(_) => {}
                        None => return Ok(Got::Records(Records(list))),
                    }
                }
                out = Got::Records(Records(list));
            }
            _ => {}
        }
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(out)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Got, A::Error> {
        if !matches!(self, Self::Record) {
            while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Got::None);
        }
        let mut r = Record::default();
        let text = |g: Got| match g {
            Got::Text(t) => Some(t),
            _ => None,
        };
        // the keys are podman's (containers.json: id, names, image,
        // metadata) and its metadata's (name, image-name); the first of a
        // repeated key is kept
        while let Some(k) = a.next_key::<Key>()? {
            match k {
                Key::Id if r.id.is_none() => {
                    r.id = text(a.next_value_seed(Self::Text)?).filter(|i| is_container_id(i));
                }
                Key::Names if r.first_name.is_none() => {
                    r.first_name = text(a.next_value_seed(Self::FirstText)?);
                }
                Key::Name if r.first_name.is_none() => {
                    r.first_name = text(a.next_value_seed(Self::Text)?);
                }
                Key::Image | Key::ImageName if r.image.is_none() => {
                    r.image = text(a.next_value_seed(Self::Text)?);
                }
                Key::Metadata if r.metadata.is_none() => {
                    if let Got::Meta(m) = a.next_value_seed(Self::Meta)? {
                        r.metadata = Some(m);
                    }
                }
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Got::Record(r))
    }
}

impl<'de> serde::Deserialize<'de> for Records {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_any(Want::Records)? {
            Got::Records(r) => Ok(r),
            _ => Ok(Self::default()),
        }
    }
}

/// The keys a [`Record`] reads; any other is skipped unread.
enum Key {
    Id,
    Names,
    Name,
    Image,
    ImageName,
    Metadata,
    Other,
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "id" => Key::Id,
                    "names" => Key::Names,
                    "name" => Key::Name,
                    "image" => Key::Image,
                    "image-name" => Key::ImageName,
                    "metadata" => Key::Metadata,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// Fills a podman container's (or its conmon's) identity from `store`,
/// found by the id in the group's name; `pod`: the id of the pod whose
/// slice the group is in (by the slice's name), whose name the state
/// database may know.
pub fn fill_podman(id: &mut Identity, store: &Store, pod: Option<&str>) -> Result<(), Miss> {
    if let (Some(p), Ok(pods)) = (pod, &store.pods) {
        if let Some((name, _)) = pods.get(p) {
            id.pod = Some(name.clone());
        }
    }
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

/// Fills a podman pod's identity (its slice, by the pod id in its name)
/// from the state database `store` read: its name, and the file.
pub fn fill_podman_pod(id: &mut Identity, store: &Store) -> Result<(), Miss> {
    let pods = store.pods.as_ref().map_err(Clone::clone)?;
    let (name, at) = pods.get(&id.id).ok_or(Miss::Absent)?;
    id.name = Some(name.clone());
    id.pod = Some(name.clone());
    id.source = store.pod_sources.get(*at).cloned();
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

#[cfg(test)]
mod tests {
    use super::*;

    const X: &str = "6e341326aa55bb776e341326aa55bb776e341326aa55bb776e341326aa55bb77";

    fn parse(text: &str) -> Store {
        let mut s = Store::default();
        add_containers(&mut s, serde_json::from_str::<Records>(text).unwrap());
        s
    }

    #[test]
    fn records_keep_only_what_is_used_whatever_the_shape() {
        let meta = r#"{\"name\":\"from-meta\",\"image-name\":\"nginx:1\"}"#;
        let s = parse(&format!(
            r#"[0, "x", [1], {{"id": 5}}, {{"id": "not-an-id", "names": ["n"]}},
               {{"id": "{X}", "names": "web", "image": ["i"], "metadata": "{meta}", "id": "x"}},
               {{"id": "{X}", "names": ["second"]}}]"#
        ));
        // one container: the first record of its id; names that is not
        // an array gives way to the metadata's name
        assert_eq!(s.containers.len(), 1);
        assert_eq!(
            s.containers[X],
            Entry {
                name: Some("from-meta".into()),
                image_id: None,
                image_name: Some("nginx:1".into()),
            }
        );
        // not an array at all: nothing, not an error
        assert!(parse(r#"{"id": "x"}"#).containers.is_empty());
    }

    #[test]
    fn at_most_max_records_are_kept() {
        let one = format!(r#"{{"id":"{X}"}}"#);
        let text = format!("[{}]", vec![one; MAX_RECORDS + 5].join(","));
        let r = serde_json::from_str::<Records>(&text).unwrap();
        assert_eq!(r.0.len(), MAX_RECORDS);
        // 100,000 arrays deep, as a record or a field: skipped without
        // recursion (no stack overflow), nothing kept
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for text in [
            format!("[{deep}]"),
            format!(r#"[{{"id":"{X}","names":[{deep}],"metadata":{deep}}}]"#),
        ] {
            let r = serde_json::from_str::<Records>(&text).map(|r| r.0.len());
            assert!(matches!(r, Ok(0 | 1) | Err(_)), "{r:?}");
        }
    }
}
