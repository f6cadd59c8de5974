//! Processes of a group, from procfs, with CPU % between two refreshes.

use crate::model::ProcessInfo;
use std::collections::HashMap;

/// Keeps the previous CPU times so that the next read gives a rate.
#[derive(Debug, Default)]
pub struct ProcReader {
    /// pid -> (starttime, utime+stime in ticks, when in seconds)
    prev: HashMap<u32, (u64, u64, f64)>,
    users: HashMap<u32, String>,
}

impl ProcReader {
    /// Reads the given pids. `now_secs` is the collector's clock.
    pub fn read(&mut self, pids: &[u32], now_secs: f64) -> Vec<ProcessInfo> {
        let tps = procfs::ticks_per_second() as f64;
        let mut next = HashMap::with_capacity(pids.len());
        let mut out = Vec::with_capacity(pids.len());
        for &pid in pids {
            let Ok(p) = procfs::process::Process::new(i32::try_from(pid).unwrap_or(i32::MAX))
            else {
                continue;
            };
            let Ok(stat) = p.stat() else { continue };
            let ticks = stat.utime + stat.stime;
            let cpu_pct = self.prev.get(&pid).and_then(|&(start, t0, w0)| {
                let dt = now_secs - w0;
                (start == stat.starttime && ticks >= t0 && dt > 0.0)
                    .then(|| (ticks - t0) as f64 / tps / dt * 100.0)
            });
            next.insert(pid, (stat.starttime, ticks, now_secs));
            let uid = p.uid().unwrap_or(u32::MAX);
            let user = self.user_name(uid);
            let cmdline = p
                .cmdline()
                .ok()
                .filter(|c| !c.is_empty())
                .map_or_else(|| format!("[{}]", stat.comm), |c| c.join(" "));
            out.push(ProcessInfo {
                pid,
                user,
                state: stat.state,
                cpu_pct,
                rss_bytes: stat.rss * procfs::page_size(),
                cmdline,
            });
        }
        self.prev = next;
        out
    }

    fn user_name(&mut self, uid: u32) -> String {
        if let Some(n) = self.users.get(&uid) {
            return n.clone();
        }
        let name = std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    let mut f = l.split(':');
                    let n = f.next()?;
                    let u: u32 = f.nth(1)?.parse().ok()?;
                    (u == uid).then(|| n.to_owned())
                })
            })
            .unwrap_or_else(|| uid.to_string());
        self.users.insert(uid, name.clone());
        name
    }
}
