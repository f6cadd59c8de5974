#!/bin/bash
# tests/vm/runtimes/guest-run.sh STATE_DIR [--tests BIN] [--capture DIR] -
# the guest side of tests/vm/runtimes/run (in the guest booted with
# --init systemd --session): starts the containers
# (guest-start.sh STATE_DIR), writes the versions the guest runs to
# STATE_DIR/versions, copies the runtimes' metadata files with
# tests/fixtures/capture-identity.sh into DIR (with --capture), then runs
# the guest test binary's identity:: cases (with --tests) against them.
# Writes "STEP RESULT SECONDS" lines to STATE_DIR/results.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${1:?usage: guest-run.sh STATE_DIR [--tests BIN] [--capture DIR]}
shift
TESTS='' CAPTURE=''
while (($#)); do
    case $1 in
        --tests) TESTS=$2; shift 2 ;;
        --capture) CAPTURE=$2; shift 2 ;;
        *) echo "guest-run: unknown argument $1" >&2; exit 2 ;;
    esac
done
: > "$STATE/results"
failed=0 t0=0
ms() { echo $(($(date +%s%N) / 1000000)); }
begin() { echo "=== $1 (guest uptime $(cut -d' ' -f1 /proc/uptime)s)"; t0=$(ms); }
record() { # record STEP RESULT [NOTE]
    local d=$(($(ms) - t0))
    printf '%s %s %d.%d %s\n' "$1" "$2" $((d / 1000)) $((d % 1000 / 100)) "${3:-}" >> "$STATE/results"
    echo "=== $1: $2${3:+ ($3)}"
    [[ $2 == fail ]] && failed=1
}

begin start
if "$HERE/guest-start.sh" "$STATE"; then record start pass; else record start fail "see start.log"; fi

{
    echo "kernel: $(uname -r) ($(uname -v))"
    echo "debian: $(cat /etc/debian_version)"
    echo "systemd: $(systemctl --version | head -1)"
    /usr/bin/docker version --format 'docker: client {{.Client.Version}}, server {{.Server.Version}}' 2>&1
    echo "podman: $(podman --version 2>&1)"
    echo "containerd: $(containerd --version 2>&1)"
    echo "runc: $(runc --version 2>&1 | head -1)"
    echo "crun: $(crun --version 2>&1 | head -1)"
    echo "conmon: $(conmon --version 2>&1 | head -1)"
    echo "packages (dpkg-deb -x, tests/vm/runtimes/setup):"
    sed 's/^/  /' "$HERE/../build/runtimes/root/.versions"
} > "$STATE/versions" 2>&1

if [[ -n $CAPTURE ]]; then
    begin capture
    if bash "$HERE/../../fixtures/capture-identity.sh" "$STATE/containers.tsv" "$CAPTURE"; then
        cp "$STATE/versions" "$CAPTURE/versions"
        record capture pass
    else
        record capture fail
    fi
fi

if [[ -n $TESTS ]]; then
    begin identity
    log=$STATE/identity.log
    CGTOP_IDENTITY_CONTAINERS=$STATE/containers.tsv CGTOP_VM_FIGURES=$STATE/figures \
        "$TESTS" --include-ignored --test-threads=1 --nocapture identity:: 2>&1 | tee "$log"
    st=${PIPESTATUS[0]}
    sum=$(grep -E '^test result:' "$log" | tail -1 | sed 's/^test result: [a-zA-Z]*\. //; s/; [0-9]* ignored.*//')
    failing=$(sed -n 's/^test \(identity::[^ ]*\) \.\.\. FAILED$/\1/p' "$log" | sed 's/^identity:://' | paste -sd, -)
    if ((st == 0)); then record identity pass "$sum"; else record identity fail "exit $st, $sum${failing:+: $failing}"; fi
fi
# what is left in this unit's group would hold the guest's poweroff for
# TimeoutStopSec (90 s); list it, then power off 5 s after run-in-vm's
# wrapper has stored the exit code, from a timer outside this group
echo "left in $(sed -n 's/^0:://p' /proc/self/cgroup): $(ps -o pid=,comm= -p "$(paste -sd, "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/cgroup.procs")" | paste -sd' ')"
systemd-run --quiet --on-active=5 --timer-property=AccuracySec=100ms systemctl poweroff -ff
exit $failed
