//! PURE: cgtop and systemd, as values: which unit a group is
//! ([`systemd_unit`], [`system_unit`]), the `systemctl` command that makes
//! an op's change through systemd ([`systemd_equivalent`], and the op
//! that goes that way: [`Op::through_systemd`]); and making it: whether
//! the way is open on this host ([`Presence`]), whether the group is the
//! unit's own ([`unit_of`]), how running `systemctl` went
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

use crate::cgroupfs::Limit;
use crate::model::host::layout::HierId;
use crate::model::tree::text::escape_str;
use crate::model::write::errno::{self, Errno};
use crate::model::write::input::MemoryFile;
use crate::model::write::outcome::WriteError;
use crate::model::write::{Op, Via, WriteKind};
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
    /// the system manager ([`system_unit`]).
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
    let unit = system_unit(real).ok_or_else(|| NotTheUnit::NotAUnit { real: real.clone() })?;
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

// ---------------------------------------------------------------------------
// Which unit a group is, and the systemctl command an op equals.

/// The systemd unit a group is, when its name ends in .service, .scope or
/// .slice: systemd owns such a group, and a direct write is lost the next
/// time systemd applies the unit's properties. Only a name that systemd
/// could have given (ASCII letters, digits and `:-_.\@`; systemd spells
/// every other byte as `\xHH`) is a unit: a directory named
/// `x\e.service`, made by hand in a delegated subtree, is not one.
pub fn systemd_unit(group: &GroupPath) -> Option<&str> {
    let name = group.name();
    let valid = name.len() <= 255
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b":-_.\\@".contains(b));
    let name = std::str::from_utf8(name).ok().filter(|_| valid)?;
    [".service", ".scope", ".slice"]
        .iter()
        .any(|s| name.len() > s.len() && name.ends_with(s))
        .then_some(name)
}

/// The unit of the system manager a group is, by where systemd puts a
/// unit's group: every ancestor a slice, each slice under the one its
/// name says (`a-b.slice` in `a.slice`, a slice without `-` at the top),
/// the group itself a slice under the same rule or a service or scope
/// directly in a slice. Only such a group is what `systemctl` (the
/// system manager) names by its last component: a group
/// `user@1000.service/x/sshd.service`, made by a delegated user, is not
/// the system's `sshd.service`, and a name starting with `-` would be
/// read by systemctl as an option. `None` for any other group.
pub fn system_unit(group: &GroupPath) -> Option<&str> {
    let unit = systemd_unit(group)?;
    if unit.starts_with('-') {
        return None;
    }
    // the base of the slice the next component must be in ("" = the root)
    let mut parent = "";
    let comps: Vec<&[u8]> = group
        .as_bytes()
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .collect();
    let (_, ancestors) = comps.split_last()?;
    let in_slice = |parent: &str, base: &str| -> bool {
        match base.rsplit_once('-') {
            None => parent.is_empty() && !base.is_empty(),
            Some((up, last)) => up == parent && !last.is_empty(),
        }
    };
    for c in ancestors {
        let base = std::str::from_utf8(c).ok()?.strip_suffix(".slice")?;
        if !in_slice(parent, base) {
            return None;
        }
        parent = base;
    }
    match unit.strip_suffix(".slice") {
        Some(base) => in_slice(parent, base).then_some(unit),
        // a service or scope sits directly in a slice (or the root slice)
        None => Some(unit),
    }
}

/// The `systemctl` command that makes the same change through systemd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemdEquivalent {
    pub unit: String,
    /// argv, starting with "systemctl".
    pub args: Vec<String>,
}

impl SystemdEquivalent {
    /// The command as one shell line, each argument quoted when needed.
    pub fn command_line(&self) -> String {
        self.args
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

pub(super) fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if safe {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A systemd time span: "100ms", "1s", "1500us".
fn timespan(usec: u64) -> String {
    if usec % 1_000_000 == 0 {
        format!("{}s", usec / 1_000_000)
    } else if usec % 1_000 == 0 {
        format!("{}ms", usec / 1_000)
    } else {
        format!("{usec}us")
    }
}

/// A cpu.max quota as systemd's CPUQuota percentage (of one CPU), to two
/// decimals.
fn cpu_quota_percent(quota: u64, period: u64) -> String {
    let permyriad =
        (u128::from(quota) * 10_000 + u128::from(period) / 2) / u128::from(period.max(1));
    if permyriad % 100 == 0 {
        format!("{}%", permyriad / 100)
    } else {
        format!("{}.{:02}%", permyriad / 100, permyriad % 100)
    }
}

fn infinity(l: Limit) -> String {
    match l {
        Limit::Max => "infinity".to_owned(),
        Limit::Value(v) => v.to_string(),
    }
}

/// The systemd way to make `op`, for a group that is a systemd unit.
/// `device` names the block device of an io op ("sda" or "/dev/sda").
/// `None` when the group is not a unit or systemd has no such property
/// (cpu.weight.nice, cpu.max.burst, a device weight reset, removing an
/// io.latency target, subtree_control, moves, raw writes).
pub fn systemd_equivalent(op: &Op, device: Option<&str>) -> Option<SystemdEquivalent> {
    const SET: &[&str] = &["set-property", "--runtime"];
    let w = op.as_write()?;
    let unit = system_unit(&w.group)?.to_owned();
    // a device name from the outside becomes part of an argument: only a
    // plain kernel device name ("sda", "nvme0n1", "dm-0", "/dev/sda")
    let device = device.filter(|d| {
        let name = d.strip_prefix("/dev/").unwrap_or(d);
        !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.!".contains(&b))
    });
    let dev = || {
        device.map(|d| {
            if d.starts_with('/') {
                d.to_owned()
            } else {
                format!("/dev/{d}")
            }
        })
    };
    let (verb, props): (&[&str], Vec<String>) = match &w.kind {
        WriteKind::Freeze(true) | WriteKind::FreezerState(true) => (&["freeze"], Vec::new()),
        WriteKind::Freeze(false) | WriteKind::FreezerState(false) => (&["thaw"], Vec::new()),
        WriteKind::Kill => (&["kill", "--signal=SIGKILL"], Vec::new()),
        WriteKind::CpuMax(v) => (
            SET,
            vec![
                match v.quota {
                    Some(q) => format!("CPUQuota={}", cpu_quota_percent(q, v.period)),
                    None => "CPUQuota=".to_owned(),
                },
                format!("CPUQuotaPeriodSec={}", timespan(v.period)),
            ],
        ),
        WriteKind::CpuWeight(n) => (SET, vec![format!("CPUWeight={n}")]),
        WriteKind::Memory(f, l) => {
            let prop = match f {
                MemoryFile::Min => "MemoryMin",
                MemoryFile::Low => "MemoryLow",
                MemoryFile::High => "MemoryHigh",
                MemoryFile::Max => "MemoryMax",
                MemoryFile::SwapMax => "MemorySwapMax",
            };
            (SET, vec![format!("{prop}={}", infinity(*l))])
        }
        WriteKind::PidsMax(l) => (SET, vec![format!("TasksMax={}", infinity(*l))]),
        WriteKind::IoMax(set) => {
            let d = dev()?;
            let props = set
                .pairs()
                .into_iter()
                .map(|(k, v)| {
                    let prop = match k {
                        "rbps" => "IOReadBandwidthMax",
                        "wbps" => "IOWriteBandwidthMax",
                        "riops" => "IOReadIOPSMax",
                        _ => "IOWriteIOPSMax",
                    };
                    format!("{prop}={d} {}", infinity(v))
                })
                .collect();
            (SET, props)
        }
        WriteKind::IoWeight {
            dev: None,
            weight: Some(n),
        } => (SET, vec![format!("IOWeight={n}")]),
        WriteKind::IoWeight {
            dev: Some(_),
            weight: Some(n),
        } => (SET, vec![format!("IODeviceWeight={} {n}", dev()?)]),
        WriteKind::IoLatency {
            target_usec: Some(t),
            ..
        } => (
            SET,
            vec![format!(
                "IODeviceLatencyTargetSec={} {}",
                dev()?,
                timespan(*t)
            )],
        ),
        _ => return None,
    };
    let args = std::iter::once("systemctl")
        .chain(verb.iter().copied())
        .chain(std::iter::once(unit.as_str()))
        .map(str::to_owned)
        .chain(props)
        .collect();
    Some(SystemdEquivalent { unit, args })
}

impl Op {
    /// The same write made through systemd: `None` when the group is not
    /// a unit or systemd has no property for it (see
    /// [`systemd_equivalent`]). Only `set-property` changes go this way:
    /// freeze, thaw and kill are not unit properties, and systemd does not
    /// re-apply them at a daemon-reload, so there is nothing to keep.
    pub fn through_systemd(self, device: Option<&str>) -> Option<Op> {
        let eq = systemd_equivalent(&self, device)?;
        if eq.args.get(1).map(String::as_str) != Some("set-property") {
            return None;
        }
        match self {
            Self::Write(mut w) if w.hier == HierId::V2 => {
                w.via = Via::Systemd {
                    device: device.map(str::to_owned),
                };
                Some(Self::Write(w))
            }
            _ => None,
        }
    }

    /// Whether the op goes through systemd.
    pub fn via_systemd(&self) -> bool {
        self.as_write()
            .is_some_and(|w| matches!(w.via, Via::Systemd { .. }))
    }

    /// The arguments systemctl is run with for a write through systemd
    /// (without "systemctl" itself); `None` for any other op.
    pub fn systemctl_args(&self) -> Option<Vec<String>> {
        let Some(Via::Systemd { device }) = self.as_write().map(|w| &w.via) else {
            return None;
        };
        let eq = systemd_equivalent(self, device.as_deref())?;
        Some(eq.args.into_iter().skip(1).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cgroupfs::CpuMax;
    use crate::model::write::input::{ControllerChange, IoMaxSet};
    use crate::model::write::test_ops::{g, SDA};
    use crate::model::write::{
        create_group, freeze, kill, move_process, raw, remove_group, reset_io_weight, set_cpu_max,
        set_cpu_max_burst, set_cpu_weight, set_cpu_weight_nice, set_io_latency, set_io_max,
        set_io_weight, set_memory_limit, set_pids_max, set_subtree_control,
    };

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

    #[test]
    fn systemd_units() {
        assert_eq!(
            systemd_unit(&g("system.slice/cron.service")),
            Some("cron.service")
        );
        assert_eq!(
            systemd_unit(&g("user.slice/user-1000.slice/session-3.scope")),
            Some("session-3.scope")
        );
        assert_eq!(systemd_unit(&g("system.slice")), Some("system.slice"));
        assert_eq!(systemd_unit(&g("system.slice/cron.service/worker")), None);
        assert_eq!(systemd_unit(&g(".service")), None);
        assert_eq!(systemd_unit(&GroupPath::root()), None);
        // systemd spells a '-' inside a name as \x2d: still a unit
        assert_eq!(
            systemd_unit(&g("system.slice/system-serial\\x2dgetty.slice")),
            Some("system-serial\\x2dgetty.slice")
        );
        // names systemd never gives are not units
        for bad in [&b"a\x1b.service"[..], b"bad\xff.service", b"a b.service"] {
            let p = GroupPath::root().join(bad).unwrap();
            assert_eq!(systemd_unit(&p), None, "{p:?}");
        }
    }

    #[test]
    fn systemd_equivalents() {
        let s = g("system.slice/web.service");
        let cmd = |o: &Op, dev: Option<&str>| systemd_equivalent(o, dev).map(|e| e.command_line());
        let half = CpuMax {
            quota: Some(50_000),
            period: 100_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, half), None).as_deref(),
            Some(
                "systemctl set-property --runtime web.service CPUQuota=50% CPUQuotaPeriodSec=100ms"
            )
        );
        let odd = CpuMax {
            quota: Some(123_456),
            period: 250_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, odd), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUQuota=49.38% CPUQuotaPeriodSec=250ms")
        );
        let unl = CpuMax {
            quota: None,
            period: 1_000_000,
        };
        assert_eq!(
            cmd(&set_cpu_max(&s, unl), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUQuota= CPUQuotaPeriodSec=1s")
        );
        assert_eq!(
            cmd(&set_cpu_weight(&s, 300), None).as_deref(),
            Some("systemctl set-property --runtime web.service CPUWeight=300")
        );
        for (f, p) in [
            (MemoryFile::Min, "MemoryMin"),
            (MemoryFile::Low, "MemoryLow"),
            (MemoryFile::High, "MemoryHigh"),
            (MemoryFile::Max, "MemoryMax"),
            (MemoryFile::SwapMax, "MemorySwapMax"),
        ] {
            assert_eq!(
                cmd(&set_memory_limit(&s, f, Limit::Value(1 << 30)), None),
                Some(format!(
                    "systemctl set-property --runtime web.service {p}=1073741824"
                ))
            );
            assert_eq!(
                cmd(&set_memory_limit(&s, f, Limit::Max), None),
                Some(format!(
                    "systemctl set-property --runtime web.service {p}=infinity"
                ))
            );
        }
        assert_eq!(
            cmd(&set_pids_max(&s, Limit::Value(100)), None).as_deref(),
            Some("systemctl set-property --runtime web.service TasksMax=100")
        );
        assert_eq!(
            cmd(&set_pids_max(&s, Limit::Max), None).as_deref(),
            Some("systemctl set-property --runtime web.service TasksMax=infinity")
        );
    }

    #[test]
    fn systemd_equivalents_io_and_actions() {
        let s = g("system.slice/web.service");
        let cmd = |o: &Op, dev: Option<&str>| systemd_equivalent(o, dev).map(|e| e.command_line());
        let set = IoMaxSet {
            dev: SDA,
            rbps: Some(Limit::Value(1 << 20)),
            wbps: Some(Limit::Max),
            riops: Some(Limit::Value(100)),
            wiops: Some(Limit::Value(50)),
        };
        let e = systemd_equivalent(&set_io_max(&s, set), Some("sda")).unwrap();
        assert_eq!(e.unit, "web.service");
        assert_eq!(
            e.args,
            [
                "systemctl",
                "set-property",
                "--runtime",
                "web.service",
                "IOReadBandwidthMax=/dev/sda 1048576",
                "IOWriteBandwidthMax=/dev/sda infinity",
                "IOReadIOPSMax=/dev/sda 100",
                "IOWriteIOPSMax=/dev/sda 50"
            ]
        );
        assert_eq!(
            e.command_line(),
            "systemctl set-property --runtime web.service 'IOReadBandwidthMax=/dev/sda 1048576' \
             'IOWriteBandwidthMax=/dev/sda infinity' 'IOReadIOPSMax=/dev/sda 100' \
             'IOWriteIOPSMax=/dev/sda 50'"
        );
        assert_eq!(systemd_equivalent(&set_io_max(&s, set), None), None);
        assert_eq!(
            cmd(&set_io_weight(&s, None, 200), None).as_deref(),
            Some("systemctl set-property --runtime web.service IOWeight=200")
        );
        assert_eq!(
            cmd(&set_io_weight(&s, Some(SDA), 200), Some("/dev/sda")).as_deref(),
            Some("systemctl set-property --runtime web.service 'IODeviceWeight=/dev/sda 200'")
        );
        assert_eq!(
            cmd(&set_io_latency(&s, SDA, Some(10_000)), Some("nvme0n1")).as_deref(),
            Some("systemctl set-property --runtime web.service 'IODeviceLatencyTargetSec=/dev/nvme0n1 10ms'")
        );
        assert_eq!(
            cmd(&freeze(&s, true), None).as_deref(),
            Some("systemctl freeze web.service")
        );
        assert_eq!(
            cmd(&freeze(&s, false), None).as_deref(),
            Some("systemctl thaw web.service")
        );
        assert_eq!(
            cmd(&kill(&s), None).as_deref(),
            Some("systemctl kill --signal=SIGKILL web.service")
        );
        // an escaped unit name is quoted for the shell
        let esc = g("system.slice/system-serial\\x2dgetty.slice");
        assert_eq!(
            cmd(&set_cpu_weight(&esc, 5), None).as_deref(),
            Some("systemctl set-property --runtime 'system-serial\\x2dgetty.slice' CPUWeight=5")
        );
        // no equivalent
        for o in [
            set_cpu_weight_nice(&s, 1),
            set_cpu_max_burst(&s, 1),
            reset_io_weight(&s, SDA),
            set_io_latency(&s, SDA, None),
            set_subtree_control(&s, &[ControllerChange::enable("cpu")]),
            move_process(1, &s, false),
            raw(&s, "memory.oom.group", "1"),
            create_group(&s),
            remove_group(&s),
        ] {
            assert_eq!(systemd_equivalent(&o, Some("sda")), None, "{o}");
        }
        // not a unit
        assert_eq!(
            systemd_equivalent(&set_cpu_weight(&g("batch/job"), 5), None),
            None
        );
    }
}
