#!/bin/bash
# tests/vm/guest-suite.sh - the guest side of tests/vm/run-suite: runs every
# VM check in ONE boot (each boot costs ~4 s under TCG), in this order:
#   smoke     tests/vm/smoke.sh (is the guest what the tests assume?)
#   cgtop     BIN --json -n 2: exit status 0 and some output (smoke check
#             of the release binary; the JSON itself is checked elsewhere)
#   vm_truth  one module of the guest test binary (tests/guest), e.g. its
#             truth:: cases, --include-ignored (its cases are #[ignore]d on
#             the host) --test-threads=1 --nocapture, with CGTOP_VM=1, in
#             the package root (as cargo test would); its measured figures
#             ("FIGURE case: ...") go to DIR/figures through CGTOP_VM_FIGURES
# usage (inside the VM, from the package root):
#   guest-suite.sh [--cgtop BIN] [--tests BIN] [--module PATH] [--name STEP]
#                  [--filter NAME] [--skip NAME] [--results DIR]
#   --tests BIN    the guest test binary (cargo test --test guest)
#   --module PATH  run only its cases whose path holds PATH (truth::, v1::,
#                  systemd::: one module per kind of guest)
#   --filter NAME  run only the case NAME (its exact path; run-suite uses
#                  truth::io_latency_round_trip on the custom kernel; not
#                  with --module, as --exact would apply to both)
#   --skip NAME    leave the cases whose path holds NAME out (repeatable)
#   --name STEP    the step's name in the results (default vm_truth;
#                  run-suite passes --module v1:: with --name vm_v1 in the
#                  v1 and hybrid guests)
# Writes "STEP RESULT SECONDS [NOTE]" lines (RESULT: pass, fail, skip) to
# DIR/results and the figures to DIR/figures for the host.  Exit status 1 if
# a step failed.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CGTOP='' TESTS='' RESULTS='' FILTER=() STEP=vm_truth
while (($#)); do
    case $1 in
        --cgtop) CGTOP=$2; shift 2 ;;
        --tests) TESTS=$2; shift 2 ;;
        --module) FILTER+=("$2"); shift 2 ;;
        --results) RESULTS=$2; shift 2 ;;
        --filter) FILTER+=(--exact "$2"); shift 2 ;;
        --skip) FILTER+=(--skip "$2"); shift 2 ;;
        --name) STEP=$2; shift 2 ;;
        *) echo "guest-suite: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ ${CGTOP_VM:-} != 1 ]]; then
    echo "guest-suite: not in the cgtop test VM; use tests/vm/run-suite" >&2
    exit 2
fi
[[ -n $RESULTS ]] || RESULTS=$(mktemp -d)
: > "$RESULTS/results"
: > "$RESULTS/figures"

failed=0 t0=0
ms() { echo $(($(date +%s%N) / 1000000)); }
begin() { echo; echo "=== $1 (guest uptime $(cut -d' ' -f1 /proc/uptime)s)"; t0=$(ms); }
record() { # record STEP RESULT [NOTE]
    local d=$(($(ms) - t0))
    printf '%s %s %d.%d %s\n' "$1" "$2" $((d / 1000)) $((d % 1000 / 100)) "${3:-}" >> "$RESULTS/results"
    echo "=== $1: $2${3:+ ($3)}"
    [[ $2 == fail ]] && failed=1
}

echo "guest-suite: kernel $(uname -r), cgroup ${CGTOP_VM_CGROUP:-v2}, init ${CGTOP_VM_INIT:-sh}"
# ---- smoke
begin smoke
if "$HERE/smoke.sh"; then record smoke pass; else record smoke fail; fi

# ---- cgtop --json -n 2
begin cgtop
if [[ -z $CGTOP ]]; then
    record cgtop skip "no release binary"
else
    out=$(mktemp) err=$(mktemp)
    timeout 120 "$CGTOP" --json -n 2 > "$out" 2> "$err"
    rc=$?
    size=$(stat -c %s "$out")
    echo "$CGTOP --json -n 2: exit status $rc, $size bytes on stdout; the first 20 lines:"
    head -n 20 "$out" | cut -c1-200
    if ((rc != 0)); then
        echo "its stderr (last 20 lines):"
        tail -n 20 "$err"
        record cgtop fail "exit status $rc"
    elif ((size == 0)); then
        record cgtop fail "empty output"
    else
        record cgtop pass "$size bytes"
    fi
    rm -f "$out" "$err"
fi

# ---- the guest test binary's cases
begin "$STEP"
if [[ -z $TESTS ]]; then
    record "$STEP" skip "no test binary"
else
    log=$(mktemp)
    # --nocapture: the measured figures are the point, also of passing tests
    CGTOP_VM=1 CGTOP_VM_FIGURES="$RESULTS/figures" RUST_BACKTRACE=${RUST_BACKTRACE:-1} \
        "$TESTS" --include-ignored --test-threads=1 --nocapture "${FILTER[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    # "test result: ok. 12 passed; 0 failed; ..." -> "12 passed, 0 failed"
    counts=$(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 passed, \2 failed/p' "$log" | tail -n1)
    failed_tests=$(sed -n 's/^test \(.*\) \.\.\. .*FAILED$/\1/p; s/^    \([a-z_0-9:]*\)$/\1/p' "$log" | sort -u | paste -sd' ' -)
    rm -f "$log"
    if ((rc == 0)); then
        record "$STEP" pass "${counts:-no test count}"
    else
        record "$STEP" fail "exit status $rc${counts:+, $counts}${failed_tests:+: $failed_tests}"
    fi
fi

echo
echo "guest-suite: $(grep -c ' pass ' "$RESULTS/results") passed, $(grep -c ' fail ' "$RESULTS/results") failed, $(grep -c ' skip ' "$RESULTS/results") skipped (guest uptime $(cut -d' ' -f1 /proc/uptime)s)"
exit $failed
