//! PURE: making a unit's change through systemd, as values: whether the
//! way is open on this host ([`Presence`]), how running `systemctl` went
//! ([`SystemctlFailure`]), and the words and fix for a failure
//! ([`failure_error`]), read from systemctl's own stderr.
//!
//! Why systemctl and not D-Bus: `systemctl set-property --runtime` is the
//! documented, stable interface for this (systemctl(1)); it speaks the
//! same D-Bus call (SetUnitProperties) with systemd's own parsing of every
//! property's value, so cgtop needs no D-Bus library, no second parser of
//! "CPUQuota=50%" or "IOReadBandwidthMax=/dev/sda 1M", and the command the
//! operator is shown is exactly the one that runs.
//!
//! Must not depend on: the filesystem, the clock, the terminal.

use crate::model::tree::text::escape_str;
use crate::model::write::errno::{self, Errno};
use crate::model::write::outcome::WriteError;
use crate::model::write::Op;
use crate::model::GroupPath;

/// Whether cgtop can make a change through systemd on this host: systemd
/// is the init system (`/run/systemd/system` is a directory, the test of
/// sd_booted(3)) and systemctl is there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Presence {
    Ready,
    /// The host was not booted with systemd (another init, a container
    /// without it): there is no manager to ask.
    #[default]
    NotBooted,
    /// systemd runs, but no systemctl in /usr/bin, /bin, /usr/sbin or
    /// /sbin.
    NoSystemctl,
    /// The view starts below its hierarchy's root (`--root` naming a
    /// group, such as a delegated subtree): a group's path here is not
    /// its place in systemd's tree, so no unit is judged from it.
    BelowRoot,
}

/// How running systemctl failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemctlFailure {
    NotBooted,
    NoSystemctl,
    /// It could not be started (fork or exec failed).
    Spawn(Errno),
    /// It ran longer than this and was killed (by its pid).
    TimedOut {
        secs: u64,
    },
    /// It ended with a failure: its exit code (`None`: killed by a
    /// signal) and the start of its stderr, as it printed it.
    Exit {
        code: Option<i32>,
        stderr: String,
    },
}

/// What systemctl's stderr says, in the cases an operator meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    NotLoaded,
    NoBus,
    Denied,
    UnknownProperty,
    BadValue,
    Other,
}

fn cause(stderr: &str) -> Cause {
    let s = stderr.to_ascii_lowercase();
    if s.contains("not loaded") || s.contains("not found") || s.contains("no such unit") {
        Cause::NotLoaded
    } else if s.contains("failed to connect to bus")
        || s.contains("not been booted with systemd")
        || s.contains("failed to get d-bus connection")
    {
        Cause::NoBus
    } else if s.contains("access denied")
        || s.contains("interactive authentication required")
        || s.contains("permission denied")
    {
        Cause::Denied
    } else if s.contains("unknown assignment") || s.contains("unknown property") {
        Cause::UnknownProperty
    } else if s.contains("failed to parse") || s.contains("invalid argument") {
        Cause::BadValue
    } else {
        Cause::Other
    }
}

/// Why a write through systemd is not made: the group written is not
/// the group systemd keeps for the unit the command would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotTheUnit {
    /// Where the group is in its hierarchy could not be told.
    Unplaced,
    /// Its place in the hierarchy is not where systemd puts a unit of
    /// the system manager ([`crate::model::write::system_unit`]).
    NotAUnit { real: GroupPath },
    /// systemd's unit has another group, or none (not loaded).
    Elsewhere {
        unit: String,
        real: GroupPath,
        systemd: Option<GroupPath>,
    },
    /// systemd could not be asked which group the unit has.
    Unasked(SystemctlFailure),
}

/// Whether the group at `real` (its path in the hierarchy, from the
/// hierarchy's root) is the unit's own: the unit its place names, whose
/// `ControlGroup` property, as `control_group` asks systemd for it, is
/// that very path. The unit's name on success. A group with a unit's
/// name that systemd did not make (in a delegated subtree, or by hand)
/// is not the unit, whatever its path looks like.
pub fn unit_of(
    real: Option<&GroupPath>,
    control_group: impl FnOnce(&str) -> Result<Vec<u8>, SystemctlFailure>,
) -> Result<String, NotTheUnit> {
    let real = real.ok_or(NotTheUnit::Unplaced)?;
    let unit = crate::model::write::system_unit(real)
        .ok_or_else(|| NotTheUnit::NotAUnit { real: real.clone() })?;
    let said = control_group(unit).map_err(NotTheUnit::Unasked)?;
    // `systemctl show --value` prints the path and a newline; an empty
    // value is a unit systemd has not loaded
    let text = said.strip_suffix(b"\n").unwrap_or(&said);
    let systemd = (!text.is_empty() && text.starts_with(b"/"))
        .then(|| GroupPath::parse(text).ok())
        .flatten();
    if systemd.as_ref() == Some(real) {
        Ok(unit.to_owned())
    } else {
        Err(NotTheUnit::Elsewhere {
            unit: unit.to_owned(),
            real: real.clone(),
            systemd,
        })
    }
}

/// The error of a write through systemd refused by [`unit_of`]: nothing
/// was changed, and the direct write is the way left.
pub fn not_the_unit_error(op: &Op, why: &NotTheUnit) -> WriteError {
    let what = op.as_write().map_or_else(
        || "systemctl".to_owned(),
        |w| format!("{} through systemd", w.group.display()),
    );
    let place = |g: &GroupPath| g.display().to_string();
    let explanation = match why {
        NotTheUnit::Unplaced => "not made: where the group is in its hierarchy could not be \
                                 told (no cgroup mount in /proc/self/mountinfo holds it), so \
                                 no systemd unit can be named for it"
            .to_owned(),
        NotTheUnit::NotAUnit { real } => format!(
            "not made: the group is {} in its hierarchy, which is no unit of systemd's own \
             (a group with a unit's name below another unit, or made by hand)",
            place(real)
        ),
        NotTheUnit::Elsewhere {
            unit,
            real,
            systemd: Some(s),
        } => format!(
            "not made: systemd's {unit} is the group {}, not {}: this group only has its name",
            place(s),
            place(real)
        ),
        NotTheUnit::Elsewhere {
            unit,
            real,
            systemd: None,
        } => format!(
            "not made: systemd has no group for {unit} (not loaded), so {} is not its group",
            place(real)
        ),
        NotTheUnit::Unasked(f) => {
            let e = failure_error(op, f);
            format!(
                "not made: systemd could not be asked which group the unit has ({})",
                e.explanation
            )
        }
    };
    WriteError::refused(
        what,
        explanation,
        Some("press y in the confirmation instead of s to write the file directly".to_owned()),
    )
}

/// At most this much of systemctl's stderr is kept and shown.
pub const STDERR_MAX: usize = 512;

/// The error of a write through systemd that failed: what was run, why
/// (systemctl's own words, escaped, after cgtop's), and what to do.
pub fn failure_error(op: &Op, f: &SystemctlFailure) -> WriteError {
    let unit = op
        .as_write()
        .and_then(|w| crate::model::write::systemd_unit(&w.group))
        .unwrap_or("the unit");
    let what = match op.systemctl_args() {
        Some(args) => format!(
            "systemctl {}",
            escape_str(&args.join(" "))
                .chars()
                .take(200)
                .collect::<String>()
        ),
        None => format!("systemctl set-property {unit}"),
    };
    let direct = "or press y in the confirmation instead of s to write the file directly \
                  (systemd may then put its own value back)";
    let (explanation, fix) = match f {
        SystemctlFailure::NotBooted => (
            "this host was not booted with systemd (no /run/systemd/system): there is no \
             systemd to ask"
                .to_owned(),
            format!("write the file directly: {direct}"),
        ),
        SystemctlFailure::NoSystemctl => (
            "systemctl is not in /usr/bin, /bin, /usr/sbin or /sbin".to_owned(),
            format!("install systemd's systemctl, {direct}"),
        ),
        SystemctlFailure::Spawn(e) => (
            format!("systemctl could not be started: {}", errno::strerror(*e)),
            direct.to_owned(),
        ),
        SystemctlFailure::TimedOut { secs } => (
            format!(
                "systemctl did not answer within {secs} s and was stopped; systemd may be busy \
                 (a job running, a daemon-reload) or hung, and may still apply the change"
            ),
            format!(
                "look at `systemctl status {unit}` and `systemctl list-jobs`, then try again, {direct}"
            ),
        ),
        SystemctlFailure::Exit { code, stderr } => {
            let said = escape_str(stderr.trim()).chars().take(STDERR_MAX).collect::<String>();
            let how = match code {
                Some(c) => format!("systemctl failed (exit status {c})"),
                None => "systemctl was killed by a signal".to_owned(),
            };
            let (why, fix) = match cause(stderr) {
                Cause::NotLoaded => (
                    format!("systemd has no unit {unit} loaded (a transient unit that has ended, or a group made by hand with a unit's name)"),
                    format!("check `systemctl status {unit}`; {direct}"),
                ),
                Cause::NoBus => (
                    "systemctl cannot reach systemd (no system bus: systemd is not PID 1 here, or this is a container without it)".to_owned(),
                    format!("run cgtop where systemd runs (on the host, not in the container), {direct}"),
                ),
                Cause::Denied => (
                    "systemd refused: changing a unit needs root".to_owned(),
                    "run cgtop as root".to_owned(),
                ),
                Cause::UnknownProperty => (
                    "this systemd does not know the property (it is older than the property)".to_owned(),
                    direct.to_owned(),
                ),
                Cause::BadValue => (
                    "systemd refused the value".to_owned(),
                    format!("see systemd.resource-control(5) for the property's range, {direct}"),
                ),
                Cause::Other => (String::new(), direct.to_owned()),
            };
            let mut e = how;
            if !why.is_empty() {
                e.push_str(": ");
                e.push_str(&why);
            }
            if !said.is_empty() {
                e.push_str(&format!("; it said: \"{said}\""));
            }
            (e, fix)
        }
    };
    WriteError::refused(what, explanation, Some(fix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::Limit;
    use crate::model::write::input::MemoryFile;
    use crate::model::write::set_memory_limit;
    use crate::model::GroupPath;

    fn op() -> Op {
        set_memory_limit(
            &GroupPath::new("system.slice/web.service"),
            MemoryFile::Max,
            Limit::Value(1 << 30),
        )
        .through_systemd(None)
        .unwrap()
    }

    #[test]
    fn only_the_group_systemd_keeps_for_the_unit_is_the_unit() {
        let real = GroupPath::new("system.slice/web.service");
        let says =
            |t: &'static str| move |_: &str| Ok::<_, SystemctlFailure>(t.as_bytes().to_vec());
        assert_eq!(
            unit_of(Some(&real), says("/system.slice/web.service\n")),
            Ok("web.service".to_owned())
        );
        // a group of the same name elsewhere (a delegated user's)
        let theirs = GroupPath::new("system.slice/app.service/system.slice/web.service");
        assert_eq!(
            unit_of(Some(&theirs), says("/system.slice/web.service\n")),
            Err(NotTheUnit::NotAUnit {
                real: theirs.clone()
            })
        );
        // the right place, but systemd keeps the unit elsewhere, or not at all
        let elsewhere = unit_of(Some(&real), says("/other.slice/web.service\n"));
        assert!(
            matches!(&elsewhere, Err(NotTheUnit::Elsewhere { systemd: Some(s), .. }) if *s == GroupPath::new("other.slice/web.service")),
            "{elsewhere:?}"
        );
        assert!(matches!(
            unit_of(Some(&real), says("\n")),
            Err(NotTheUnit::Elsewhere { systemd: None, .. })
        ));
        assert_eq!(unit_of(None, says("/x")), Err(NotTheUnit::Unplaced));
        let asked = unit_of(Some(&real), |_| Err(SystemctlFailure::NotBooted));
        assert_eq!(asked, Err(NotTheUnit::Unasked(SystemctlFailure::NotBooted)));
        // each says it was not made, and the way left
        for why in [
            NotTheUnit::Unplaced,
            NotTheUnit::NotAUnit { real: theirs },
            elsewhere.unwrap_err(),
            asked.unwrap_err(),
        ] {
            let e = not_the_unit_error(&op(), &why);
            assert!(e.explanation.starts_with("not made: "), "{e}");
            assert!(!e.explanation.contains("//"), "{e}");
            assert!(e.fix.as_deref().unwrap().contains("press y"), "{e}");
        }
    }

    #[test]
    fn systemctl_words_become_a_reason_and_a_fix() {
        let e = failure_error(
            &op(),
            &SystemctlFailure::Exit {
                code: Some(1),
                stderr:
                    "Failed to set unit properties on web.service: Unit web.service not loaded.\n"
                        .into(),
            },
        );
        assert_eq!(
            e.what,
            "systemctl set-property --runtime web.service MemoryMax=1073741824"
        );
        assert!(e.explanation.contains("no unit web.service loaded"), "{e}");
        assert!(e.explanation.contains("it said: \"Failed to set"), "{e}");
        assert!(e
            .fix
            .as_deref()
            .unwrap()
            .contains("systemctl status web.service"));
        let e = failure_error(
            &op(),
            &SystemctlFailure::Exit {
                code: Some(1),
                stderr: "Failed to connect to bus: No such file or directory".into(),
            },
        );
        assert!(e.explanation.contains("cannot reach systemd"), "{e}");
        // hostile bytes in what systemctl printed are escaped
        let e = failure_error(
            &op(),
            &SystemctlFailure::Exit {
                code: Some(1),
                stderr: "boom \x1b[2J".into(),
            },
        );
        assert!(!e.explanation.contains('\x1b'), "{e}");
        let e = failure_error(&op(), &SystemctlFailure::TimedOut { secs: 10 });
        assert!(e.explanation.contains("within 10 s"), "{e}");
    }
}
