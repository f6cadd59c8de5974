//! What `source::accounts`' table costs on a large host's files, built
//! by `rustc -O` around a copy of the module (`run`, in this directory):
//! N accounts in /etc/passwd, each with the /etc/subuid range useradd
//! gives (65,536 uids); the table read and built, then 1,100 lookups of
//! uids no range holds (an LDAP user's: the slow case of a linear scan)
//! and 1,100 of subordinate uids, in CPU time (this thread's,
//! CLOCK_THREAD_CPUTIME_ID) and the build also in wall time. Prints
//! one JSON line a size.

mod model {
    #[allow(dead_code)]
    pub mod account {
        include!(concat!(env!("BENCH_DIR"), "/account.rs"));
    }
}

mod source {
    /// The hierarchy handle's reader, for plain files of a directory.
    pub mod hier {
        use std::path::{Path, PathBuf};
        pub struct Hier(PathBuf);
        impl Hier {
            pub fn open(p: &Path) -> std::io::Result<Self> {
                Ok(Self(p.to_path_buf()))
            }
            pub fn read_owned(&self, rel: &Path, _cap: usize) -> std::io::Result<(Vec<u8>, u32)> {
                use std::os::unix::fs::MetadataExt;
                let p = self.0.join(rel);
                Ok((std::fs::read(&p)?, std::fs::metadata(&p)?.uid()))
            }
        }
    }

    #[allow(dead_code)]
    pub mod accounts {
        include!(concat!(env!("BENCH_DIR"), "/accounts.rs"));
    }

    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }

    /// This thread's time on a CPU so far (CLOCK_THREAD_CPUTIME_ID; the
    /// machine is shared: wall time is mostly waiting for a CPU).
    fn cpu() -> std::time::Duration {
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: a valid pointer to a timespec of the C layout (64-bit)
        assert_eq!(unsafe { clock_gettime(3, &mut ts) }, 0);
        std::time::Duration::new(ts.sec as u64, ts.nsec as u32)
    }

    pub fn bench(etc: &std::path::Path, n: u32) {
        use std::time::Instant;
        let mut passwd = String::from("root:x:0:0:root:/root:/bin/bash\n");
        let mut subuid = String::new();
        for i in 0..n {
            let uid = 10_000 + i;
            passwd.push_str(&format!("u{i}:x:{uid}:{uid}::/home/u{i}:/bin/bash\n"));
            subuid.push_str(&format!("u{i}:{}:65536\n", 100_000 + i * 65_536));
        }
        std::fs::write(etc.join("passwd"), passwd).unwrap();
        std::fs::write(etc.join("subuid"), subuid).unwrap();
        let (t, c) = (Instant::now(), cpu());
        let a = accounts::Accounts::read_from(etc);
        let (build, build_cpu) = (t.elapsed(), cpu() - c);
        // uids past every range (unnamed), then subordinate ones
        let past = 100_000 + n * 65_536;
        let c = cpu();
        for k in 0..1_100u32 {
            std::hint::black_box(a.of(std::hint::black_box(past + k)));
        }
        let unnamed = cpu() - c;
        let c = cpu();
        for k in 0..1_100u32 {
            let uid = 100_000 + (k * 7_919 % n) * 65_536 + k;
            std::hint::black_box(a.of(std::hint::black_box(uid)));
        }
        let sub = cpu() - c;
        println!(
            "{{\"accounts\": {n}, \"build_ms\": {:.2}, \"build_cpu_ms\": {:.2}, \"unnamed_1100_us\": {:.0}, \"subordinate_1100_us\": {:.0}}}",
            build.as_secs_f64() * 1e3,
            build_cpu.as_secs_f64() * 1e3,
            unnamed.as_secs_f64() * 1e6,
            sub.as_secs_f64() * 1e6,
        );
    }
}

fn main() {
    let etc = std::env::args().nth(1).expect("a directory for the files");
    let sizes: Vec<u32> = std::env::args()
        .skip(2)
        .map(|s| s.parse().expect("a number of accounts"))
        .collect();
    for n in sizes {
        source::bench(std::path::Path::new(&etc), n);
    }
}
