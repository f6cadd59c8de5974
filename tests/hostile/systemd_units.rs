//! Attack review of the systemd path (issue 10 item 3, attack10): a group
//! is what the system manager's `systemctl` names by its last component
//! only where systemd puts that unit. A delegated user owns
//! `user@1000.service` and below and chooses names there: a group
//! `.../user@1000.service/x/sshd.service` must not make cgtop (root) run
//! `systemctl set-property --runtime sshd.service ...`, which would set the
//! limit on the host's sshd, nor put that line in an exported script; a
//! name starting with `-` must never reach systemctl (read as an option:
//! `-Hhost` is --host, over ssh).

// test code: a failed expectation is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

use cgtop::cgroupfs::Limit;
use cgtop::model::files::script::{scripts, Entry, Meta, Place, What};
use cgtop::model::write::input::MemoryFile;
use cgtop::model::write::{self, set_cpu_weight, set_memory_limit};
use cgtop::model::GroupPath;

fn g(s: &str) -> GroupPath {
    GroupPath::parse(s.as_bytes()).unwrap()
}

const SPOOFS: [&str; 6] = [
    // a delegated user's groups named as the host's units
    "user.slice/user-1000.slice/user@1000.service/x/sshd.service",
    "user.slice/user-1000.slice/user@1000.service/app.slice/sshd.service",
    "user.slice/user-1000.slice/user@1000.service/system.slice",
    // a slice under a slice its name does not say
    "user.slice/system.slice",
    // an option
    "system.slice/-Hevil.example.service",
    "-Mx.slice",
];

#[test]
fn only_the_system_managers_units_go_through_systemctl() {
    for p in SPOOFS {
        let op = set_cpu_weight(&g(p), 50);
        assert_eq!(write::systemd_equivalent(&op, None), None, "{p}");
        assert_eq!(op.clone().through_systemd(None), None, "{p}");
    }
    // the real ones still do
    for (p, unit) in [
        ("system.slice/sshd.service", "sshd.service"),
        ("system.slice", "system.slice"),
        ("init.scope", "init.scope"),
        (
            "system.slice/system-postgresql.slice/postgresql@15-main.service",
            "postgresql@15-main.service",
        ),
        (
            "user.slice/user-1000.slice/user@1000.service",
            "user@1000.service",
        ),
        (
            "user.slice/user-1000.slice/session-3.scope",
            "session-3.scope",
        ),
        (
            "system.slice/system-serial\\x2dgetty.slice",
            "system-serial\\x2dgetty.slice",
        ),
    ] {
        let op = set_memory_limit(&g(p), MemoryFile::Max, Limit::Value(1 << 30));
        let eq = write::systemd_equivalent(&op, None).expect(p);
        assert_eq!(eq.unit, unit);
        assert!(op.through_systemd(None).is_some(), "{p}");
    }
}

#[test]
fn an_exported_script_writes_a_spoofed_unit_directly() {
    let e = Entry {
        time: "2024-05-01T12:00:00Z".into(),
        place: Place::V2,
        group: b"/user.slice/user-1000.slice/user@1000.service/x/sshd.service".to_vec(),
        what: What::Write {
            file: b"memory.max".to_vec(),
            old: Some(b"max".to_vec()),
            new: b"1048576".to_vec(),
            stored: None,
        },
        result: Ok(()),
        real: Some(b"/user.slice/user-1000.slice/user@1000.service/x/sshd.service".to_vec()),
        skipped: false,
    };
    for persist in [false, true] {
        let s = scripts(
            std::slice::from_ref(&e),
            &Meta {
                persist,
                ..Meta::default()
            },
        );
        assert!(!s.apply.contains("\nsystemctl"), "{}", s.apply);
        assert!(!s.undo.contains("\nsystemctl"), "{}", s.undo);
        assert!(s.apply.contains("\ncg_write "), "{}", s.apply);
    }
}
