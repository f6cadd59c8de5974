//! systemd's own records, in its runtime directory:
//!
//! - `/run/systemd/sessions/<id>`, logind's record of a session: `UID`,
//!   `USER`, `SCOPE` (its unit: `session-<id>.scope`), `TTY`, `SEAT`,
//!   `SERVICE` (the PAM service: sshd, login, gdm), `REMOTE_HOST`,
//!   `REMOTE_USER` (the last three C-escaped by logind);
//! - `/run/systemd/users/<uid>`: `NAME`; `/etc/passwd` (parsed as a
//!   file, never through NSS) where logind has no record;
//! - `/run/systemd/machines/<name>`, machined's record: `NAME`, `SCOPE`,
//!   `CLASS` (container, vm), `SERVICE` (who registered it:
//!   systemd-nspawn, libvirt-qemu), `ROOT`;
//! - a unit's `Description`, from one `systemctl show` of every unit
//!   (`Id`, `Description`, `ControlGroup`) per re-listing that found new
//!   units, on a thread of its own, never per refresh.
//!
//! Each file is `KEY=VALUE` lines; a value may be quoted and C-escaped.

use super::read::{cut, is_plain_name, read_file, Dir, Miss};
use crate::model::identity::Identity;
use crate::model::GroupPath;
use crate::source::systemctl::Systemctl;
use std::collections::HashMap;
use std::path::Path;

/// The cap of a session's, user's or machine's record (a few hundred
/// bytes).
pub const CAP_RECORD: usize = 64 << 10;
/// The cap of /etc/passwd.
pub const CAP_PASSWD: usize = 4 << 20;
/// The cap of `systemctl show`'s output (about 150 bytes a unit: 25,000
/// units).
pub const CAP_SHOW: usize = 4 << 20;

/// The `KEY=VALUE` pairs of an env-style file, values unquoted (the
/// C-escaped ones are undone by [`unescape_c`] where read); comments and
/// lines without `=` skipped; the first of a key repeated is kept.
pub fn env_file(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim_end();
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
            .unwrap_or(v);
        out.entry(k.trim().to_owned()).or_insert_with(|| cut(v));
    }
    out
}

/// C escapes undone (`\\`, `\"`, `\n`, `\t`, `\xNN`, `\NNN` octal), as
/// systemd's cescape writes them; a backslash before anything else stays.
/// Bytes that do not make UTF-8 become U+FFFD.
pub fn unescape_c(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        let simple = match c {
            b'\\' => Some(b'\\'),
            b'"' => Some(b'"'),
            b'\'' => Some(b'\''),
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(7),
            b'b' => Some(8),
            b'f' => Some(12),
            b'v' => Some(11),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            i += 2;
            continue;
        }
        let hex = (c == b'x')
            .then(|| b.get(i + 2..i + 4))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(v) = hex {
            out.push(v);
            i += 4;
            continue;
        }
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| o.iter().all(|d| (b'0'..=b'7').contains(d)))
            .and_then(|o| std::str::from_utf8(o).ok())
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        if let Some(v) = oct {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads and parses `rel` in `dir`.
fn record(dir: &mut Dir, rel: &str) -> Result<(HashMap<String, String>, String), Miss> {
    let shown = dir.path().join(rel).to_string_lossy().into_owned();
    let bytes = read_file(dir.get()?, Path::new(rel), CAP_RECORD, None)?;
    Ok((env_file(&String::from_utf8_lossy(&bytes)), shown))
}

/// A session's identity from logind's record: its user, tty or seat,
/// remote host; the PAM service and remote user as labels. A record whose
/// `SCOPE` is not `session-<id>.scope` is not used.
pub fn fill_session(id: &mut Identity, dir: &mut Dir) -> Result<(), Miss> {
    if !id.id.bytes().all(|b| b.is_ascii_alphanumeric()) || id.id.is_empty() {
        return Err(Miss::Absent);
    }
    let (r, shown) = record(dir, &id.id.clone())?;
    if r.get("SCOPE")
        .is_some_and(|s| *s != format!("session-{}.scope", id.id))
    {
        return Err(Miss::Unreadable(
            "the record names another session: not used".into(),
        ));
    }
    id.user = r.get("USER").filter(|u| !u.is_empty()).cloned();
    id.tty = r
        .get("TTY")
        .or_else(|| r.get("SEAT"))
        .filter(|t| !t.is_empty())
        .cloned();
    // logind writes these three C-escaped
    id.remote_host = r
        .get("REMOTE_HOST")
        .filter(|t| !t.is_empty())
        .map(|v| unescape_c(v));
    for (k, label) in [("SERVICE", "service"), ("REMOTE_USER", "remote user")] {
        if let Some(v) = r.get(k).filter(|v| !v.is_empty()) {
            id.labels.push((label.into(), unescape_c(v)));
        }
    }
    id.source = Some(shown);
    Ok(())
}

/// A user's login name from logind's record of the uid.
pub fn user_name(uid: &str, dir: &mut Dir) -> Result<(String, String), Miss> {
    if !uid.bytes().all(|b| b.is_ascii_digit()) || uid.is_empty() {
        return Err(Miss::Absent);
    }
    let (r, shown) = record(dir, uid)?;
    r.get("NAME")
        .filter(|n| !n.is_empty())
        .map(|n| (n.clone(), shown))
        .ok_or(Miss::Absent)
}

/// A machine's identity from machined's record: the name, and its class,
/// registering service and root directory as labels. The name (systemd's
/// escapes decoded from the group's name) must be a plain file name; a
/// record whose `SCOPE` is not the group's own name is not used.
pub fn fill_machine(id: &mut Identity, scope: &str, dir: &mut Dir) -> Result<(), Miss> {
    if !is_plain_name(&id.id) {
        return Err(Miss::Absent);
    }
    let (r, shown) = record(dir, &id.id.clone())?;
    if r.get("SCOPE").is_some_and(|s| s != scope) {
        return Err(Miss::Unreadable(
            "the record names another machine: not used".into(),
        ));
    }
    id.name = Some(r.get("NAME").cloned().unwrap_or_else(|| id.id.clone()));
    // machined writes SERVICE and ROOT C-escaped
    for (k, label) in [("CLASS", "class"), ("SERVICE", "service"), ("ROOT", "root")] {
        if let Some(v) = r.get(k).filter(|v| !v.is_empty()) {
            id.labels.push((label.into(), unescape_c(v)));
        }
    }
    id.source = Some(shown);
    Ok(())
}

/// One account of /etc/passwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub home: String,
}

/// /etc/passwd's accounts by uid (the first line of a uid is kept).
pub fn parse_passwd(text: &str) -> HashMap<u32, Account> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 7 || f[0].is_empty() {
            continue;
        }
        let Ok(uid) = f[2].parse::<u32>() else {
            continue;
        };
        out.entry(uid).or_insert_with(|| Account {
            name: cut(f[0]),
            home: f[5].to_owned(),
        });
    }
    out
}

/// The arguments of the one `systemctl show` of every loaded unit.
pub fn show_args() -> Vec<String> {
    [
        "show",
        "--all",
        "--property=Id,Description,ControlGroup",
        "--",
        "*",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Each unit's Description by its group's path (the key is the path's
/// bytes, as [`GroupPath::as_bytes`]), from `systemctl show`'s blocks. A
/// block is used only when it has one `Id`, one `ControlGroup` whose last
/// component is that `Id`, and one `Description` (a description holding a
/// newline cannot forge another unit's group that way).
pub fn parse_show(text: &str) -> HashMap<Vec<u8>, String> {
    let mut out = HashMap::new();
    for block in text.split("\n\n") {
        let mut ids = Vec::new();
        let mut cgs = Vec::new();
        let mut descs = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("Id=") {
                ids.push(v);
            } else if let Some(v) = line.strip_prefix("ControlGroup=") {
                cgs.push(v);
            } else if let Some(v) = line.strip_prefix("Description=") {
                descs.push(v);
            }
        }
        let ([unit], [cg], [desc]) = (ids.as_slice(), cgs.as_slice(), descs.as_slice()) else {
            continue;
        };
        if desc.is_empty() || cg.is_empty() {
            continue;
        }
        let Ok(path) = GroupPath::parse(cg.as_bytes()) else {
            continue;
        };
        if path.name() != unit.as_bytes() {
            continue;
        }
        out.insert(path.as_bytes().to_vec(), cut(desc));
    }
    out
}

/// Runs the `systemctl show` on a thread of its own; the receiver gets
/// the descriptions (empty when systemctl failed or timed out).
pub fn spawn_descriptions(
    sc: Systemctl,
) -> Option<std::sync::mpsc::Receiver<HashMap<Vec<u8>, String>>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("unit-descriptions".into())
        .spawn(move || {
            let out = sc
                .output_capped(&show_args(), CAP_SHOW)
                .map(|b| parse_show(&String::from_utf8_lossy(&b)))
                .unwrap_or_default();
            let _ = tx.send(out);
        })
        .ok()?;
    Some(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_unquote_and_unescape() {
        let r = env_file(
            "# This is private data. Do not parse.\nUID=1000\nUSER=alice\n\
             REMOTE_HOST=10.0.0.5\\x1b[2J\nSERVICE=\"ss hd\"\nREMOTE_USER=a\\\\b\nbad line\nUSER=mallory\n",
        );
        assert_eq!(r["USER"], "alice");
        assert_eq!(unescape_c(&r["REMOTE_HOST"]), "10.0.0.5\x1b[2J");
        assert_eq!(r["SERVICE"], "ss hd");
        assert_eq!(unescape_c(&r["REMOTE_USER"]), "a\\b");
        assert_eq!(unescape_c("\\101\\q\\"), "A\\q\\");
    }

    #[test]
    fn passwd_lines() {
        let p = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:,,,:/home/alice:/bin/sh\n\
             broken\nmallory:x:1000:1000::/tmp:/bin/sh\n",
        );
        assert_eq!(p[&1000].name, "alice");
        assert_eq!(p[&1000].home, "/home/alice");
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn show_blocks_map_groups_to_descriptions() {
        let text = "Id=nginx.service\nDescription=A high performance web server\n\
                    ControlGroup=/system.slice/nginx.service\n\n\
                    Id=dead.service\nDescription=Not running\nControlGroup=\n\n\
                    Id=liar.service\nDescription=x\nControlGroup=/system.slice/sshd.service\n\n\
                    Id=two.service\nDescription=a\nControlGroup=/system.slice/two.service\n\
                    ControlGroup=/system.slice/sshd.service\n";
        let m = parse_show(text);
        assert_eq!(
            m.get(b"system.slice/nginx.service".as_slice())
                .map(String::as_str),
            Some("A high performance web server")
        );
        assert_eq!(m.len(), 1, "{m:?}");
    }
}
