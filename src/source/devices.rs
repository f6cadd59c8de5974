//! Block devices from /sys/dev/block: names for MAJ:MIN, and which are
//! partitions (io.max only accepts whole disks).

use crate::cgroupfs::io::DevId;
use crate::model::DeviceInfo;
use std::path::Path;

/// Lists block devices. `sys_dev_block` is normally "/sys/dev/block".
pub fn list(sys_dev_block: &Path) -> Vec<DeviceInfo> {
    let Ok(rd) = std::fs::read_dir(sys_dev_block) else {
        return Vec::new();
    };
    let mut out: Vec<DeviceInfo> = rd
        .flatten()
        .filter_map(|e| {
            let dev = DevId::parse(&e.file_name().to_string_lossy())?;
            let p = e.path();
            let uevent = std::fs::read_to_string(p.join("uevent")).unwrap_or_default();
            let name = uevent
                .lines()
                .find_map(|l| l.strip_prefix("DEVNAME="))
                .map(str::to_owned)
                .or_else(|| {
                    std::fs::canonicalize(&p)
                        .ok()?
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_else(|| dev.to_string());
            let partition = p.join("partition").exists();
            let parent = if partition {
                std::fs::read_to_string(p.join("../dev"))
                    .ok()
                    .and_then(|t| DevId::parse(t.trim()))
            } else {
                None
            };
            Some(DeviceInfo {
                dev,
                name,
                partition,
                parent,
            })
        })
        .collect();
    out.sort_by_key(|d| d.dev);
    out
}

/// The devices of `sys_block` (normally "/sys/block") stacked on others
/// (device-mapper, md), each with the devices right below it (its
/// `slaves`), by number, sorted: what [`crate::model::tree::rates`]
/// needs to count a group's IO once. Read, never written; at most 4096
/// devices and 256 below each (a real machine has far fewer).
pub fn stacking(sys_block: &Path) -> Vec<(DevId, Vec<DevId>)> {
    let dev_of = |dir: &Path| {
        use std::io::Read;
        let mut t = Vec::new();
        let f = std::fs::File::open(dir.join("dev")).ok()?;
        f.take(64).read_to_end(&mut t).ok()?;
        DevId::parse(std::str::from_utf8(&t).ok()?.trim())
    };
    let Ok(rd) = std::fs::read_dir(sys_block) else {
        return Vec::new();
    };
    let mut out: Vec<(DevId, Vec<DevId>)> = rd
        .flatten()
        .take(4096)
        .filter_map(|e| {
            let dir = e.path();
            let mut below: Vec<DevId> = std::fs::read_dir(dir.join("slaves"))
                .ok()?
                .flatten()
                .take(256)
                .filter_map(|s| dev_of(&s.path()))
                .collect();
            if below.is_empty() {
                return None;
            }
            below.sort_unstable();
            below.dedup();
            Some((dev_of(&dir)?, below))
        })
        .collect();
    out.sort_unstable_by_key(|(d, _)| *d);
    out.dedup_by_key(|(d, _)| *d);
    out
}

/// Whether io.max/io.latency can be set on this device, and if not, why,
/// with the whole disk to use instead. PURE.
pub fn throttle_check(dev: &DeviceInfo, all: &[DeviceInfo]) -> Result<(), String> {
    if dev.partition {
        let disk = dev
            .parent
            .and_then(|p| all.iter().find(|d| d.dev == p))
            .map_or_else(
                || "the whole disk".to_owned(),
                |d| format!("the whole disk {} ({})", d.name, d.dev),
            );
        return Err(format!(
            "{} ({}) is a partition: the kernel throttles whole disks only; use {disk}",
            dev.name, dev.dev
        ));
    }
    if dev.name.starts_with("loop") || dev.name.starts_with("ram") || dev.name.starts_with("zram") {
        return Err(format!(
            "{} ({}) is a {} device, which has no request queue the io controller can throttle; use the disk that backs it",
            dev.name,
            dev.dev,
            if dev.name.starts_with("loop") { "loop" } else { "RAM" }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guest's layout (tests/fixtures/io-stacked/README.md): dm-0
    /// (253:0) on loop0 (7:0), md127 (9:127) on loop3 and loop4; each
    /// `slaves` entry is the link to the device's directory, with its
    /// `dev`. A device without anything below is not listed.
    #[test]
    fn stacking_lists_each_stacked_device_with_those_below() {
        let t = tempfile::tempdir().unwrap();
        for (name, dev) in [
            ("dm-0", "253:0"),
            ("loop0", "7:0"),
            ("loop3", "7:3"),
            ("loop4", "7:4"),
            ("md127", "9:127"),
            ("vda", "254:0"),
        ] {
            std::fs::create_dir_all(t.path().join(name).join("slaves")).unwrap();
            std::fs::write(t.path().join(name).join("dev"), format!("{dev}\n")).unwrap();
        }
        for (top, below) in [("dm-0", "loop0"), ("md127", "loop4"), ("md127", "loop3")] {
            std::os::unix::fs::symlink(
                t.path().join(below),
                t.path().join(top).join("slaves").join(below),
            )
            .unwrap();
        }
        let id = |major, minor| DevId { major, minor };
        assert_eq!(
            stacking(t.path()),
            vec![
                (id(9, 127), vec![id(7, 3), id(7, 4)]),
                (id(253, 0), vec![id(7, 0)]),
            ]
        );
        assert_eq!(stacking(&t.path().join("none")), vec![]);
    }

    fn d(maj: u32, min: u32, name: &str, partition: bool, parent: Option<DevId>) -> DeviceInfo {
        DeviceInfo {
            dev: DevId {
                major: maj,
                minor: min,
            },
            name: name.into(),
            partition,
            parent,
        }
    }

    #[test]
    fn partition_and_loop_refused() {
        let disk = d(8, 0, "sda", false, None);
        let part = d(8, 1, "sda1", true, Some(DevId { major: 8, minor: 0 }));
        let lp = d(7, 0, "loop0", false, None);
        let all = vec![disk.clone(), part.clone(), lp.clone()];
        assert!(throttle_check(&disk, &all).is_ok());
        let e = throttle_check(&part, &all).unwrap_err();
        assert!(e.contains("partition") && e.contains("sda (8:0)"), "{e}");
        assert!(throttle_check(&lp, &all).unwrap_err().contains("loop"));
    }

    #[test]
    fn lists_this_machine_or_nothing() {
        // whatever this machine has, every entry is well-formed
        for dev in list(Path::new("/sys/dev/block")) {
            assert!(!dev.name.is_empty());
            assert!(!dev.partition || dev.parent.is_some() || dev.name.contains('p'));
        }
        assert!(list(Path::new("/nonexistent")).is_empty());
    }
}
