//! A rootless user's store is read beneath their home, which they own:
//! they may mount a filesystem of their own there (fusermount lets a user
//! mount on a directory they own; with `user_allow_other` in
//! /etc/fuse.conf, root may enter it), whose reads never return. cgtop
//! (root) must not hang on it: no refresh may wait on a file the user
//! serves. Real kernel: a FUSE filesystem served by a tiny raw
//! /dev/fuse server (python3, here below) mounted `allow_other` on the
//! store's directory of a test tree given by `CGTOP_IDENTITY_ROOT`; files
//! owned by an unused uid that also owns `cgtop-test-<pid>-<n>` and its
//! `libpod-<id>.scope`. On drop the server is killed first (a FUSE
//! request it has read holds cgtop even against SIGKILL), then cgtop,
//! and the mount is lazily unmounted. Without root, cgroup2,
//! /dev/fuse or python3: `skipped: <reason>`.

use super::identities::B;
use crate::common::sandbox::Sandbox;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A uid no account on a test machine has.
const USER: u32 = 64_126;

/// A FUSE filesystem on argv[1]: files `containers.json` and `images.json`
/// (1 MiB, owned by argv[2]) whose READ is never answered. Prints
/// `mounted` once mounted; ends when unmounted.
const SERVER: &str = r#"
import ctypes, os, struct, sys
mnt, uid = sys.argv[1], int(sys.argv[2])
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = ("fd=%d,rootmode=40000,user_id=%d,group_id=%d,allow_other" % (fd, uid, uid)).encode()
if libc.mount(b"cgtop-test", mnt.encode(), b"fuse", 6, opts) != 0:
    sys.exit("mount failed: errno %d" % ctypes.get_errno())
print("mounted", flush=True)
def attr(ino, mode, size):
    return struct.pack("<QQQQQQIIIIIIIIII", ino, size, 0, 0, 0, 0, 0, 0, 0, mode, 1, uid, uid, 0, 4096, 0)
def reply(unique, err=0, body=b""):
    os.write(fd, struct.pack("<IiQ", 16 + len(body), err, unique) + body)
while True:
    try:
        req = os.read(fd, (1 << 20) + 4096)
    except OSError as e:
        if e.errno == 19:
            break
        continue
    ln, op, unique, node = struct.unpack_from("<IIQQ", req)
    body = req[40:]
    if op == 26:
        reply(unique, 0, struct.pack("<IIIIHHIIHHI28x", 7, 26, 65536, 0, 16, 12, 65536, 1, 32, 0, 0))
    elif op == 1:
        if body.split(b"\0")[0] in (b"containers.json", b"images.json"):
            reply(unique, 0, struct.pack("<QQQQII", 2, 0, 3600, 3600, 0, 0) + attr(2, 0o100644, 1 << 20))
        else:
            reply(unique, -2)
    elif op == 3:
        a = attr(1, 0o40755, 0) if node == 1 else attr(2, 0o100644, 1 << 20)
        reply(unique, 0, struct.pack("<QII", 3600, 0, 0) + a)
    elif op in (14, 27):
        reply(unique, 0, struct.pack("<QII", 0, 0, 0))
    elif op == 15:
        pass
    elif op in (2, 42):
        pass
    elif op in (18, 25, 29):
        reply(unique, 0)
    else:
        reply(unique, -38)
"#;

/// The processes and the mount, ended in order on drop: the server
/// first (a request it has read holds its caller even against SIGKILL
/// until the connection ends), then cgtop, then the lazy unmount.
struct Mounted {
    cgtop: Option<Child>,
    server: Child,
    point: PathBuf,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        if let Some(c) = &mut self.cgtop {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.point)
            .stderr(Stdio::null())
            .status();
    }
}

fn serve(point: &Path) -> Result<Mounted, String> {
    use std::io::BufRead as _;
    let mut server = Command::new("python3")
        .arg("-c")
        .arg(SERVER)
        .arg(point)
        .arg(USER.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("no python3: {e}"))?;
    let mut line = String::new();
    let out = server.stdout.take().unwrap();
    let _ = std::io::BufReader::new(out).read_line(&mut line);
    let m = Mounted {
        cgtop: None,
        server,
        point: point.to_path_buf(),
    };
    if line.trim() != "mounted" {
        return Err("the FUSE server could not mount".into());
    }
    Ok(m)
}

#[test]
fn a_users_own_mount_in_their_store_does_not_hang_cgtop() {
    let Some(sb) = Sandbox::or_skip() else {
        return;
    };
    if !Path::new("/dev/fuse").exists() {
        return println!("skipped: no /dev/fuse");
    }
    let group = format!("libpod-{B}.scope");
    sb.mkdir(&group);
    for d in [sb.dir(""), sb.dir(&group)] {
        std::os::unix::fs::chown(&d, Some(USER), Some(USER)).unwrap();
    }
    let ids = tempfile::tempdir().unwrap();
    super::identities::put(
        ids.path(),
        "etc/passwd",
        &format!("ci:x:{USER}:{USER}::/home/ci:/bin/sh\n"),
    );
    let point = ids
        .path()
        .join("home/ci/.local/share/containers/storage/overlay-containers");
    std::fs::create_dir_all(&point).unwrap();
    let mut p = point.clone();
    while p != ids.path().join("home") {
        std::os::unix::fs::chown(&p, Some(USER), Some(USER)).unwrap();
        p.pop();
    }
    let mut m = match serve(&point) {
        Ok(m) => m,
        Err(why) => return println!("skipped: {why}"),
    };
    let out = tempfile::NamedTempFile::new().unwrap();
    m.cgtop = Some(
        Command::new(env!("CARGO_BIN_EXE_cgtop"))
            .args(["--json", "-n", "3", "-d", "0.2", &sb.rel])
            .env("CGTOP_IDENTITY_ROOT", ids.path())
            .stdin(Stdio::null())
            .stdout(out.reopen().unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    let finished = loop {
        if let Some(s) = m.cgtop.as_mut().unwrap().try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(20) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let lines = std::fs::read_to_string(out.path())
        .unwrap_or_default()
        .lines()
        .count();
    drop(m);
    assert!(
        finished.is_some_and(|s| s.success()) && lines == 3,
        "cgtop did not finish 3 refreshes in 20 s ({lines} printed): it waits on the user's mount"
    );
}
