//! The strip under the tree at 80x24 (the selected group's key figures
//! against their limits) says the CPU quota in CPUs. A user who owns a
//! delegated subtree sets cpu.max on their own groups: the kernel takes
//! a quota up to 2^44 - 1 µs over a period down to 1,000 µs, about 17.6
//! billion CPUs. Every figure goes through the one formatter, at most 4
//! significant characters (the detail's quota says `1.8T%` since the
//! user's 13-digit percentage was found there): the strip must not say
//! `of 17592186044.42 CPUs`, which pushes the line's other figures
//! (MEM, PIDS) off an 80-column line.

use crate::common::{app_on, copy_fixture, pure_v2_mount, read_inspection, screen, select};

#[test]
fn a_users_largest_cpu_quota_is_said_in_a_few_characters_in_the_strip() {
    let t = copy_fixture("pure-v2-systemd");
    let user = "user.slice/user-0.slice";
    // the largest quota the kernel takes over the smallest period
    std::fs::write(t.path().join(user).join("cpu.max"), "17592186044415 1000\n").unwrap();
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    assert!(a.tree_rows.strip, "80x24 shows the strip");
    select(&mut a, &mut c, user);
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 80, 24);
    let line = s
        .lines()
        .find(|l| l.contains("CPU ") && l.contains("MEM "))
        .unwrap_or_else(|| panic!("no strip line with CPU and MEM:\n{s}"));
    // the figure before "CPUs"
    let words: Vec<&str> = line.split_whitespace().collect();
    let quota = words
        .windows(2)
        .find(|w| w[1] == "CPUs")
        .unwrap_or_else(|| panic!("no quota in CPUs on the strip line:\n{line}\n{s}"))[0];
    assert!(
        quota.chars().count() <= 5,
        "the strip says the quota as {quota:?} (one formatter: at most 4 significant characters):\n{s}"
    );
}

#[test]
fn a_users_largest_pids_max_is_said_in_a_few_characters_in_the_strip() {
    // the same for the strip's other limit said as a number: pids.max
    // (memory limits are sizes, already in at most five characters)
    let t = copy_fixture("pure-v2-systemd");
    let user = "user.slice/user-0.slice";
    std::fs::write(t.path().join(user).join("pids.max"), "4194304\n").unwrap();
    let (mut a, mut c) = app_on(t.path(), pure_v2_mount(), 80, 24);
    select(&mut a, &mut c, user);
    read_inspection(&mut a, &mut c, 1.0);
    let s = screen(&a, 80, 24);
    let line = s
        .lines()
        .find(|l| l.contains("PIDS ") && l.contains(" of "))
        .unwrap_or_else(|| panic!("no strip line with PIDS:\n{s}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let of = words
        .windows(2)
        .rfind(|w| w[0] == "of")
        .unwrap_or_else(|| panic!("no pids.max on the strip line:\n{line}\n{s}"))[1];
    assert!(
        of.chars().count() <= 5,
        "the strip says pids.max as {of:?} (one formatter):\n{s}"
    );
}
