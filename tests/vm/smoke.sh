#!/bin/bash
# tests/vm/smoke.sh - runs INSIDE the test VM: is the guest what the cgtop VM
# tests assume?  Prints one "ok"/"not ok" line per check (TAP style) and
# exits 1 if any check fails.  Refuses to run outside the VM.
#   tests/vm/run-in-vm -- tests/vm/smoke.sh
set -u
if [[ ${CGTOP_VM:-} != 1 ]]; then
    echo "smoke.sh: not in the cgtop test VM (CGTOP_VM unset); run it with tests/vm/run-in-vm" >&2
    exit 2
fi

CG=/sys/fs/cgroup
DEV=${CGTOP_VM_SCRATCH_DEV:-/dev/vda}
SCRATCH=${CGTOP_VM_SCRATCH:-/mnt/scratch}
n=0 failed=0
check() { # check DESCRIPTION GOT EXPECTED
    n=$((n + 1))
    if [[ $2 == "$3" ]]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1  # got '$2', want '$3'"
        failed=$((failed + 1))
    fi
}

LAYOUT=${CGTOP_VM_CGROUP:-v2}
# mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS
if [[ $LAYOUT == v2 ]]; then
    # ---- cgroup2 is the only cgroup filesystem, at /sys/fs/cgroup
    cg_mounts=$(awk '{ split($0, p, " - "); split(p[2], f, " ") }
        f[1] ~ /^cgroup2?$/ { print f[1] "@" $5 }' /proc/self/mountinfo | tr '\n' ' ')
    check "cgroup2 is the only cgroup mount" "$cg_mounts" "cgroup2@$CG "
    super=$(awk -v m=$CG '$5 == m { split($0, p, " - "); split(p[2], f, " "); print f[3] }' /proc/self/mountinfo)
    for o in nsdelegate memory_recursiveprot; do
        check "cgroup2 mounted with $o" "$([[ ,$super, == *,$o,* ]] && echo yes)" yes
    done
    check "cgroup_no_v1=all on the kernel command line" \
        "$(grep -qw cgroup_no_v1=all /proc/cmdline && echo yes)" yes

    # ---- controllers enabled for the children of the root
    sub=" $(cat $CG/cgroup.subtree_control) "
    for c in cpu memory io pids; do
        check "$c in the root's cgroup.subtree_control" "$([[ $sub == *" $c "* ]] && echo yes)" yes
    done
    if [[ ${CGTOP_VM_INIT:-sh} == sh ]]; then
        check "the command runs in the root cgroup" "$(cat /proc/self/cgroup)" "0::/"
    fi
else
    # ---- cgroup v1 (--cgroup v1|hybrid): the v1 hierarchies cgtop's v1
    # cases use, each a cgroup v1 mount below /sys/fs/cgroup, cpu and
    # cpuacct co-mounted; cgroup2 only at unified/ and only on hybrid
    v1_of() { # the mount point of the v1 hierarchy whose options hold $1
        awk -v c="$1" '{ split($0, p, " - "); split(p[2], f, " ") }
            f[1] == "cgroup" { n = split(f[3], o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $5 }' \
            /proc/self/mountinfo | head -n1
    }
    for c in cpu cpuacct memory blkio pids freezer name=systemd; do
        m=$(v1_of "$c")
        check "$c is a v1 hierarchy below $CG" "$([[ $m == $CG/* ]] && echo yes)" yes
    done
    check "cpu and cpuacct are one co-mounted hierarchy" "$(v1_of cpu)" "$(v1_of cpuacct)"
    v2=$(awk '{ split($0, p, " - "); split(p[2], f, " ") } f[1] == "cgroup2" { print $5 }' /proc/self/mountinfo | tr '\n' ' ')
    if [[ $LAYOUT == hybrid ]]; then
        check "cgroup2 only at $CG/unified (hybrid)" "$v2" "$CG/unified "
    else
        check "no cgroup2 mount (v1 only)" "$v2" ""
    fi
    check "no cgroup_no_v1 on the kernel command line" \
        "$(grep -q cgroup_no_v1 /proc/cmdline && echo yes || echo no)" no
    if [[ ${CGTOP_VM_INIT:-sh} == sh ]]; then
        check "the command runs in the root of every hierarchy" \
            "$(cut -d: -f3 /proc/self/cgroup | sort -u | tr '\n' ' ')" "/ "
    fi
fi

# ---- the scratch disk: a whole virtio disk whose MAJ:MIN io.max can use
name=${DEV#/dev/}
sysdev=$(cat "/sys/block/$name/dev" 2> /dev/null)
check "/sys/block/$name/dev exists (a whole disk)" "$([[ -n $sysdev ]] && echo yes)" yes
if [[ -b $DEV ]]; then
    hex=$(stat -L -c '%t %T' "$DEV")
    maj=${hex% *} min=${hex#* }
    check "$DEV is MAJ:MIN from /sys/block/$name/dev" "$((16#$maj)):$((16#$min))" "$sysdev"
else
    check "$DEV is a block device" no yes
fi
check "$DEV is not a partition" "$([[ -e /sys/class/block/$name/partition ]] && echo partition || echo disk)" disk
check "/sys/dev/block/$sysdev is $name" "$(basename "$(readlink -f "/sys/dev/block/$sysdev")")" "$name"
check "$SCRATCH is ext4 on $sysdev" \
    "$(awk -v m="$SCRATCH" '$5 == m { split($0, p, " - "); split(p[2], f, " "); print f[1] "@" $3 }' /proc/self/mountinfo)" \
    "ext4@$sysdev"

echo "1..$n"
if ((failed)); then
    echo "smoke: $failed of $n checks failed"
    exit 1
fi
if [[ $LAYOUT == v2 ]]; then
    echo "smoke: all $n checks passed ($(uname -r), controllers: $(cat $CG/cgroup.subtree_control))"
else
    echo "smoke: all $n checks passed ($(uname -r), cgroup $LAYOUT: $(awk '{ split($0, p, " - "); split(p[2], f, " ") } f[1] ~ /^cgroup2?$/ { print f[1] "@" $5 }' /proc/self/mountinfo | paste -sd' ' -))"
fi
