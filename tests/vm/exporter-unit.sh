#!/bin/bash
# tests/vm/exporter-unit.sh - the guest side of the exporter unit's proof
# (assets/cgtop-exporter.service, issue 10 item 3), in a guest booted with
# systemd as PID 1:
#
#   tests/vm/run-in-vm --init systemd --share "$PWD" -- tests/vm/exporter-unit.sh target/release/cgtop
#
# Installs the unit as shipped (ExecStart's /usr/local/bin/cgtop replaced
# by BIN; the guest's / is an overlay, so nothing reaches the host) and
# checks, TAP-style (`ok`/`not ok` lines, exit 1 if any failed):
#   1. it starts and stays active, as a dynamic user (uid not 0), with no
#      capabilities;
#   2. /metrics answers on 127.0.0.1:19586 with cgroup_info of its own unit;
#   3. a probe unit with the same sandbox (the unit's [Service] lines with
#      ExecStart replaced) cannot create a group: mkdir under
#      /sys/fs/cgroup fails with "Read-only file system"
#      (ProtectControlGroups), not merely for want of permission.
set -u
BIN=${1:?usage: exporter-unit.sh CGTOP_BINARY}
BIN=$(realpath "$BIN")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
UNIT=$HERE/../../assets/cgtop-exporter.service
if [[ ${CGTOP_VM_INIT:-} != systemd ]]; then
    echo "exporter-unit: run in a guest booted with --init systemd" >&2
    exit 2
fi
failed=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; failed=1; }

sed "s|/usr/local/bin/cgtop|$BIN|" "$UNIT" > /etc/systemd/system/cgtop-exporter.service
# the probe: the same [Service] sandbox, a command that tries to write
# cgroupfs (a group under the tests' prefix, removed if it was made)
PROBE='mkdir /sys/fs/cgroup/cgtop-test-probe && { echo MADE; rmdir /sys/fs/cgroup/cgtop-test-probe; }; true'
while IFS= read -r line; do
    case $line in
        ExecStart=*) echo "ExecStart=/bin/sh -c '$PROBE'" ;;
        Type=exec) echo Type=oneshot ;;
        Restart*) ;;
        *) echo "$line" ;;
    esac
done < "$UNIT" > /etc/systemd/system/cgtop-exporter-probe.service
systemctl daemon-reload

systemctl start cgtop-exporter.service
sleep 2
state=$(systemctl show -P ActiveState cgtop-exporter.service)
pid=$(systemctl show -P MainPID cgtop-exporter.service)
if [[ $state == active && $pid != 0 ]]; then ok "cgtop-exporter is active (pid $pid)"; else
    bad "cgtop-exporter is $state"; journalctl -u cgtop-exporter --no-pager | tail -20; fi
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status" 2> /dev/null)
capeff=$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status" 2> /dev/null)
if [[ -n $uid && $uid != 0 ]]; then ok "it runs as uid $uid (a dynamic user)"; else bad "it runs as uid '${uid}'"; fi
if [[ $capeff == 0000000000000000 ]]; then ok "no effective capabilities"; else bad "CapEff $capeff"; fi

body=$( (exec 3<> /dev/tcp/127.0.0.1/19586 && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2> /dev/null)
if grep -q '^HTTP/1\.[01] 200' <<< "$body" &&
    grep -q '^cgroup_info{cgroup="/system.slice/cgtop-exporter.service"' <<< "$body"; then
    ok "/metrics answers ($(wc -l <<< "$body") lines), with its own unit's cgroup_info"
else
    bad "/metrics: $(head -c 300 <<< "$body")"
    journalctl -u cgtop-exporter --no-pager | tail -20
fi

systemctl start cgtop-exporter-probe.service
out=$(journalctl -u cgtop-exporter-probe --no-pager -o cat)
if grep -q 'Read-only file system' <<< "$out" && ! grep -q MADE <<< "$out"; then
    ok "a write to cgroupfs from its sandbox fails: $(grep -m1 'Read-only' <<< "$out")"
else
    bad "the probe: $out"
fi
systemctl stop cgtop-exporter.service
exit $failed
