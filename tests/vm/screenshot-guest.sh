#!/bin/bash
# tests/vm/screenshot-guest.sh - the guest side of `scripts/screenshot --vm`:
# on the systemd guest, starts a little work in units of its own (a CPU
# loop under a cpu.max, a memory hog under a memory.high, some IO), runs
# cgtop in tmux at each size asked for, presses the keys, and writes the
# pane with its colours (tmux capture-pane -e) to OUT/pane-WxH.txt.
# usage (inside the VM, from the package root):
#   screenshot-guest.sh CGTOP OUT "KEYS" WxH [WxH ...]
set -eu
CGTOP=$1 OUT=$2 KEYS=$3
shift 3
if [[ ${CGTOP_VM:-} != 1 ]]; then
    echo "screenshot-guest: not in the cgtop test VM; use scripts/screenshot --vm" >&2
    exit 2
fi
# work to look at, each in a transient unit of its own (removed with the VM)
systemd-run -q --unit=shot-busy -p CPUQuota=40% sh -c 'while :; do :; done'
systemd-run -q --unit=shot-cache -p MemoryHigh=64M \
    sh -c 'while :; do dd if=/dev/zero of=/mnt/scratch/f bs=1M count=96 status=none; sync; sleep 1; done'
systemd-run -q --unit=shot-idle sleep 3600
sleep 3
for size in "$@"; do
    w=${size%x*} h=${size#*x}
    sock=shot-$w-$h
    tmux -L "$sock" -f /dev/null new-session -d -x "$w" -y "$h" \
        env TERM=xterm-256color "$CGTOP" -d 1
    sleep 3
    for k in $KEYS; do tmux -L "$sock" send-keys "$k"; sleep 0.2; done
    sleep 2
    tmux -L "$sock" capture-pane -e -p > "$OUT/pane-$size.txt"
    tmux -L "$sock" kill-server
done
