#!/bin/bash
# tests/vm/scale/guest.sh - runs INSIDE the test VM (tests/vm/scale/run boots
# it): cgtop on a real cgroup2 tree of N groups, in one boot.  Steps:
#   tree   N groups (the root included) shaped like a busy host: services,
#          Kubernetes pods with two containers, app scopes, 9-deep VM
#          chains; cpu io memory pids enabled on every branch; a sleeping
#          process in every K-th leaf (busybox ash subshells: fork, no exec),
#          two CPU-bound groups capped at 10 % by cpu.max, one group writing
#          1 MiB with fsync every second to the scratch disk
#   list   `cgtop -b -n 2` and `cgtop --json -n 1` list every group of the
#          hierarchy (checked by the guest test binary, scale::)
#   cost   CPU time per refresh of the whole `cgtop -b` process and of
#          `systemd-cgtop -b --depth=64`, same tree, interleaved: a run of
#          1+K refreshes minus a run of 1, divided by K (start-up cancels)
#   bench  the collector benchmark (--root /sys/fs/cgroup): cgtop's scan
#          against the kept-descriptor pread loop and open/read/close
#   startup  the start-up benchmark (benches/startup) on this tree: cgtop
#          and systemd-cgtop each started in a 120x40 pty, ms from the
#          spawn to the first screen with the tree (system.slice on it) and
#          to the first rates; one-shot `cgtop -b -n 1` runs (wall, CPU, peak
#          RSS; system calls with --syscalls); and the peak RSS of `cgtop -b
#          -n 1` with the guest's own descriptor budget
#   churn  `cgtop --json -d D` runs while churn.pl creates and removes
#          groups for S seconds; cgtop must still run, and its output
#          is checked by the guest test binary (scale::)
# usage (inside the VM, from the package root):
#   guest.sh --cgtop BIN [--bench BIN] [--startup BIN] [--check BIN] [--groups N]
#            [--sleepers-every K] [--steps tree,list,cost,bench,startup,churn]
#            [--cost-iters K (3; 2 above 2,000 groups)]
#            [--cost-reps R (3; 2 above 2,000 groups)]
#            [--bench-args 'ARGS']
#            [--startup-args 'ARGS' (--rounds 3 --timeout 60, and --syscalls
#             with strace; above 2,000 groups --rounds 1 --timeout 300)]
#            [--churn-secs S] [--churn-interval D] [--churn-rate R]
#            [--memtotal-gib G] [--results DIR]
# --memtotal-gib G (default 64): cgtop keeps at most 1/256 of MemTotal worth
# of descriptors (5 KB each), which in this small guest is ~1,500 files; the
# cost, bench, startup and churn steps show cgtop (and the benchmarks) a
# /proc/meminfo with MemTotal = G GiB, bind-mounted in a private mount
# namespace, so that they keep every file as on a 64 GB host (0: the guest's
# own budget; the cost step measures both, the startup step the peak RSS).
# Writes "STEP RESULT SECONDS [NOTE]" lines to DIR/results, figures as
# "key value" lines to DIR/figures, and each step's raw output to DIR/.
# Exit status 1 if a step failed.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CGTOP='' BENCH='' STARTUP='' CHECK='' RESULTS='' N=1000 EVERY=10 STEPS=tree,list,cost,bench,startup,churn
COST_ITERS='' COST_REPS='' BENCH_ARGS='' STARTUP_ARGS='' CHURN_SECS=30 CHURN_INTERVAL=0.5 CHURN_RATE=300
MEM_GIB=64
while (($#)); do
    case $1 in
        --cgtop) CGTOP=$2; shift 2 ;;
        --bench) BENCH=$2; shift 2 ;;
        --startup) STARTUP=$2; shift 2 ;;
        --startup-args) STARTUP_ARGS=$2; shift 2 ;;
        --check) CHECK=$2; shift 2 ;;
        --groups) N=$2; shift 2 ;;
        --sleepers-every) EVERY=$2; shift 2 ;;
        --steps) STEPS=$2; shift 2 ;;
        --cost-iters) COST_ITERS=$2; shift 2 ;;
        --cost-reps) COST_REPS=$2; shift 2 ;;
        --bench-args) BENCH_ARGS=$2; shift 2 ;;
        --churn-secs) CHURN_SECS=$2; shift 2 ;;
        --churn-interval) CHURN_INTERVAL=$2; shift 2 ;;
        --churn-rate) CHURN_RATE=$2; shift 2 ;;
        --memtotal-gib) MEM_GIB=$2; shift 2 ;;
        --results) RESULTS=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -u/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "guest.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ ${CGTOP_VM:-} != 1 ]]; then
    echo "guest.sh: not in the cgtop test VM; use tests/vm/scale/run" >&2
    exit 2
fi
[[ -n $CGTOP ]] || { echo "guest.sh: --cgtop BIN is needed" >&2; exit 2; }
[[ -n $RESULTS ]] || RESULTS=$(mktemp -d)
# systemd-cgtop takes ~3 s of CPU per refresh at 1,000 groups here, ~30 s at 10,000
[[ -n $COST_ITERS ]] || { COST_ITERS=3; ((N > 2000)) && COST_ITERS=2; }
[[ -n $COST_REPS ]] || { COST_REPS=3; ((N > 2000)) && COST_REPS=2; }
# a cgtop start under TCG takes seconds at 1,000 groups, systemd-cgtop's first
# rates two of its refreshes (~30 s of CPU each at 10,000 groups)
# (strace -c for the system calls where the host has it)
if [[ -z $STARTUP_ARGS ]]; then
    STARTUP_ARGS='--rounds 3 --timeout 60'
    command -v strace > /dev/null && STARTUP_ARGS+=' --syscalls'
    ((N > 2000)) && STARTUP_ARGS='--rounds 1 --timeout 300'
fi
: > "$RESULTS/results"
: > "$RESULTS/figures"
CG=/sys/fs/cgroup
W=/run/cgtop-scale
mkdir -p "$W"

failed=0 t0=0
ms() { echo $(($(date +%s%N) / 1000000)); }
uptime_s() { local u _; read -r u _ < /proc/uptime; echo "$u"; }
begin() { echo; echo "=== $1 (guest uptime $(uptime_s)s)"; t0=$(ms); }
record() { # record STEP RESULT [NOTE]
    local d=$(($(ms) - t0))
    printf '%s %s %d.%d %s\n' "$1" "$2" $((d / 1000)) $((d % 1000 / 100)) "${3:-}" >> "$RESULTS/results"
    echo "=== $1: $2${3:+ ($3)}"
    [[ $2 == fail ]] && failed=1
}
figure() { # figure KEY VALUE: one measured figure for the host's summary
    echo "$1 $2" >> "$RESULTS/figures"
    echo "figure: $1 = $2"
}
want() { [[ ,$STEPS, == *,$1,* ]]; }

# systemd's limits (soft 1024, hard 524288): cgtop and the benchmark raise
# their soft limit as far as they need; the kernel's default hard limit for
# PID 1's children (4096) would cap them
ulimit -Hn 524288
ulimit -Sn 1024
NCPUS=$(nproc)

# ---- a /proc/meminfo that says MemTotal = MEM_GIB GiB, for cgtop's
# descriptor budget (see the header)
if ((MEM_GIB > 0)); then
    awk -v kb=$((MEM_GIB * 1024 * 1024)) '/^MemTotal:/ { printf "MemTotal:       %d kB\n", kb; next } { print }' \
        /proc/meminfo > "$W/meminfo"
fi
# shellcheck disable=SC2016 # the sh -c script is in single quotes on purpose
budget() { # budget CMD...: CMD sees MemTotal = MEM_GIB GiB (nothing with 0)
    if ((MEM_GIB > 0)); then
        unshare -m -- sh -c 'mount --bind "$0" /proc/meminfo && exec "$@"' "$W/meminfo" "$@"
    else
        "$@"
    fi
}
# the same in place of the calling (sub)shell: `budget_exec CMD &` makes $!
# CMD's own pid (unshare and sh exec too)
# shellcheck disable=SC2016
budget_exec() {
    if ((MEM_GIB > 0)); then
        exec unshare -m -- sh -c 'mount --bind "$0" /proc/meminfo && exec "$@"' "$W/meminfo" "$@"
    else
        exec "$@"
    fi
}

echo "guest: $NCPUS CPUs, $(awk '/^MemTotal:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo), kernel $(uname -r)," \
    "RLIMIT_NOFILE $(ulimit -Sn)/$(ulimit -Hn), fs.nr_open $(cat /proc/sys/fs/nr_open)"

# ---------------------------------------------------------------- tree
# paths (relative to /sys/fs/cgroup, parents before children) of an N-group
# tree, the root included; names like the benchmark's tmpfs trees
paths=()
tree_paths() {
    local n=$1 i=0 k pod p user=user.slice/user-1000.slice/user@1000.service a b c d
    paths=(init.scope system.slice system.slice/scale-busy-1.service system.slice/scale-busy-2.service
        system.slice/scale-io.service user.slice user.slice/user-1000.slice "$user" "$user/app.slice"
        user.slice/user-1000.slice/session-2.scope kubepods.slice kubepods.slice/kubepods-burstable.slice
        machine.slice)
    while ((${#paths[@]} < n - 1)); do
        case $((i % 10)) in
            0 | 1 | 2 | 3) printf -v p 'system.slice/unit-%05d.service' "$i"; paths+=("$p") ;;
            4 | 5 | 6)
                printf -v pod 'kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%016x%016x.slice' \
                    $((i * 0x9E3779B97F4A7C15 & 0x7fffffffffffffff)) $((i * 0x2545F4914F6CDD1D & 0x7fffffffffffffff))
                paths+=("$pod")
                for c in 0 1; do
                    k=$((i * 7 + c))
                    printf -v a '%016x' $((k * 0x9E3779B97F4A7C15 & 0x7fffffffffffffff))
                    printf -v b '%016x' $((k * 0x2545F4914F6CDD1D & 0x7fffffffffffffff))
                    printf -v d '%016x' $((k * 0x5851F42D4C957F2D & 0x7fffffffffffffff))
                    paths+=("$pod/cri-containerd-$a$b$d$a.scope")
                done
                ;;
            7 | 8) paths+=("$user/app.slice/app-gnome-org.example.App$i-$(((i * 7919) % 100000)).scope") ;;
            *)
                p=machine.slice/machine-qemu$i.scope
                paths+=("$p")
                for d in libvirt payload system.slice docker.service nested-0 nested-1 nested-2; do
                    p=$p/$d
                    paths+=("$p")
                done
                ;;
        esac
        i=$((i + 1))
    done
    paths=("${paths[@]:0:n-1}")
}

# starts one process per directory listed in FILE, in that group:
# busybox ash subshells (fork without exec, ~12 ms each under TCG; bash's
# are ~35 ms) that block reading a FIFO nobody writes
start_sleepers() { # start_sleepers FILE
    [[ -p $W/fifo ]] || mkfifo "$W/fifo"
    busybox sh -c 'while read -r d; do
            ( read -r pid rest < /proc/self/stat; echo "$pid" > "$d/cgroup.procs" || exit 1; exec 0<> "$1"; read -r x ) &
        done < "$0"' "$1" "$W/fifo"
}

step_tree() {
    begin tree
    if ! command -v busybox > /dev/null; then
        record tree fail "no busybox (tests/vm/setup installs busybox-static)"
        return 1
    fi
    local t p n_sleep=0 want got
    tree_paths "$N"
    t=$(ms)
    printf "$CG/%s\n" "${paths[@]}" | xargs -d '\n' mkdir -- || { record tree fail "mkdir failed"; return 1; }
    local mk=$(($(ms) - t))
    # controllers on every branch, top-down; leaves get the processes
    declare -A branch=()
    for p in "${paths[@]}"; do [[ $p == */* ]] && branch[${p%/*}]=1; done
    t=$(ms)
    for p in "${paths[@]}"; do
        [[ -n ${branch[$p]:-} ]] && echo '+cpu +io +memory +pids' > "$CG/$p/cgroup.subtree_control"
    done
    local en=$(($(ms) - t)) i=0
    : > "$W/sleepers"
    for p in "${paths[@]}"; do
        [[ -n ${branch[$p]:-} || $p == system.slice/scale-* ]] && continue
        ((i++ % EVERY == 0)) && { echo "$CG/$p" >> "$W/sleepers"; n_sleep=$((n_sleep + 1)); }
    done
    t=$(ms)
    start_sleepers "$W/sleepers"
    # wait until every sleeper is in its group
    want=$n_sleep
    for _ in $(seq 1 600); do
        got=$(sed 's|$|/cgroup.procs|' "$W/sleepers" | xargs -d '\n' cat 2> /dev/null | wc -l)
        ((got >= want)) && break
        sleep 0.2
    done
    local sl=$(($(ms) - t))
    # two CPU-bound groups capped at 10 % of a CPU, one that writes
    for k in 1 2; do
        echo '10000 100000' > "$CG/system.slice/scale-busy-$k.service/cpu.max"
        busybox sh -c '( read -r pid rest < /proc/self/stat; echo "$pid" > "$0/cgroup.procs"; while :; do :; done ) &' \
            "$CG/system.slice/scale-busy-$k.service"
    done
    busybox sh -c '( read -r pid rest < /proc/self/stat; echo "$pid" > "$0/cgroup.procs"
        while :; do dd if=/dev/zero of="$1/scale-io" bs=64k count=16 conv=fsync 2> /dev/null; sleep 1; done ) &' \
        "$CG/system.slice/scale-io.service" "${CGTOP_VM_SCRATCH:-/mnt/scratch}"
    local groups
    groups=$(find "$CG" -type d | wc -l)
    echo "tree: $groups groups (asked $N), mkdir $mk ms, controllers on ${#branch[@]} branches $en ms," \
        "$got of $want sleepers placed in $sl ms"
    echo "tree: $(awk '/^MemAvailable:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) available," \
        "$(awk '/^Slab:/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo) slab, $(tr '\n' ' ' < "$CG/cgroup.stat")"
    figure tree_groups "$groups"
    figure tree_mkdir_ms "$mk"
    figure tree_sleepers "$got"
    figure tree_sleepers_ms "$sl"
    if ((groups != N)); then
        record tree fail "$groups groups, asked for $N"
    elif ((got < want)); then
        record tree fail "only $got of $want sleepers started"
    else
        record tree pass "$groups groups, $got sleepers"
    fi
}

# ---------------------------------------------------------------- list
step_list() {
    begin list
    if [[ -z $CHECK ]]; then
        record list skip "no guest test binary"
        return
    fi
    local rc1 rc2 rc3 t
    find "$CG" -mindepth 1 -type d -printf '/%P\n' > "$W/expected"
    t=$(ms)
    timeout 600 "$CGTOP" -b --kernel-names -n 2 -d 0.5 > "$RESULTS/list.txt" 2> "$W/list.err"
    rc1=$?
    figure list_text_ms $(($(ms) - t))
    t=$(ms)
    timeout 600 "$CGTOP" --json -n 1 > "$W/list.json" 2>> "$W/list.err"
    rc2=$?
    figure list_json_ms $(($(ms) - t))
    # --brief: the tree's figures only, 5 kept files a group instead of ~25
    # opened anew
    t=$(ms)
    timeout 600 "$CGTOP" --json --brief -n 1 > "$W/list-brief.json" 2>> "$W/list.err"
    rc3=$?
    figure list_json_brief_ms $(($(ms) - t))
    head -n 3 "$RESULTS/list.txt" | cut -c1-160
    [[ -s $W/list.err ]] && tail -n 5 "$W/list.err"
    if ((rc1 != 0 || rc2 != 0 || rc3 != 0)); then
        record list fail "cgtop exit status $rc1 (-b), $rc2 (--json), $rc3 (--json --brief)"
        return
    fi
    if CGTOP_SCALE_EXPECTED=$W/expected CGTOP_SCALE_TEXT=$RESULTS/list.txt CGTOP_SCALE_JSON=$W/list.json \
        "$CHECK" --include-ignored --exact --nocapture scale::batch_lists_every_group &&
        CGTOP_SCALE_EXPECTED=$W/expected CGTOP_SCALE_TEXT=$RESULTS/list.txt CGTOP_SCALE_JSON=$W/list-brief.json \
            "$CHECK" --include-ignored --exact --nocapture scale::batch_lists_every_group; then
        record list pass "$(($(wc -l < "$W/expected") + 1)) groups in -b, --json and --json --brief"
    else
        record list fail "see the check's output above"
    fi
}

# ---------------------------------------------------------------- cost
# CPU time (/proc/PID/task/*/schedstat) per refresh of a running
# program: sampled when its 2nd refresh has been printed and again after K
# more, divided by K, so that start-up (the first walk, opening every file)
# is left out; the least of R interleaved rounds is reported.  A refresh is
# a line matching RE in its output; the program is sampled when it sleeps
# (-d 0.5) after that refresh.
# Prints "MS_PER_REFRESH" or nothing on failure.
proc_cpu_ns() { # CPU time of PID's threads in ns (schedstat: exact, unlike stat's ticks)
    local f t sum=0
    for f in "/proc/$1"/task/*/schedstat; do
        read -r t _ < "$f" 2> /dev/null || continue
        sum=$((sum + t))
    done
    ((sum > 0)) && echo "$sum"
}
wait_refreshes() { # wait_refreshes PID RE N: until N matches in $W/cost.out
    local deadline=$(($(ms) + 1800 * 1000))
    until (($(grep -c -- "$2" "$W/cost.out") >= $3)); do
        kill -0 "$1" 2> /dev/null || return 1
        (($(ms) < deadline)) || return 1
        sleep 0.1
    done
}
idle_cpu_ns() { # CPU time of PID once it sleeps: state S, the same time 50 ms apart
    local a b i f
    a=$(proc_cpu_ns "$1") || return 1
    for ((i = 0; i < 100; i++)); do
        sleep 0.05
        read -r -a f < "/proc/$1/stat" 2> /dev/null || return 1
        b=$(proc_cpu_ns "$1") || return 1
        # a vCPU the host does not run stands still in R: wait for S
        [[ ${f[2]} == S ]] && ((a == b)) && break
        a=$b
    done
    echo "$b"
}
per_refresh_cpu() { # per_refresh_cpu RE K CMD...: prints "MS FROM TO"
    local re=$1 k=$2 pid c1 c2 n1 n2 ok=0
    shift 2
    "$@" > "$W/cost.out" 2>> "$W/cost.err" &
    pid=$!
    # the line that counts a refresh can come before the rest of its output,
    # and the poll can be late: count the refreshes again once it sleeps
    if wait_refreshes "$pid" "$re" 2 && c1=$(idle_cpu_ns "$pid") && n1=$(grep -c -- "$re" "$W/cost.out") &&
        wait_refreshes "$pid" "$re" $((n1 + k)) && c2=$(idle_cpu_ns "$pid") && n2=$(grep -c -- "$re" "$W/cost.out"); then
        ok=1
    fi
    kill "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    ((ok && n2 > n1)) && echo "$(((c2 - c1) / 1000000 / (n2 - n1))) $((n1 + 1)) $n2"
}

step_cost() {
    begin cost
    if ! command -v systemd-cgtop > /dev/null; then
        record cost skip "systemd-cgtop is not installed on the host (Debian: systemd)"
        return
    fi
    local k=$COST_ITERS r name per from to c s ratio coll re
    local -A least=() got=() best=()
    local -a names=(cgtop cgtop-vm-budget systemd-cgtop) cmd
    ((MEM_GIB > 0)) || names=(cgtop systemd-cgtop)
    : > "$W/cost.err"
    for ((r = 1; r <= COST_REPS; r++)); do
        for name in "${names[@]}"; do
            case $name in
                cgtop) cmd=(budget_exec "$CGTOP" -b -d 0.5) re='^cgtop - refresh ' ;;
                cgtop-vm-budget) cmd=("$CGTOP" -b -d 0.5) re='^cgtop - refresh ' ;;
                # batch mode prints no header but an empty line per refresh; without
                # -n it stops after one when stdout is not a terminal
                systemd-cgtop) cmd=(systemd-cgtop -b -n 1000000 -d 0.5 --depth=64) re='^$' ;;
            esac
            read -r per from to < <(per_refresh_cpu "$re" "$k" "${cmd[@]}")
            if [[ -z $per ]]; then
                echo "cost: round $r: $name: not $((2 + k)) refreshes (see its stderr below)"
                continue
            fi
            coll=''
            if [[ $name == cgtop* ]]; then
                # cgtop's own figure for its collector thread, same refreshes
                coll=$(sed -n 's/^cgtop - refresh \([0-9]*\) .* cost \([0-9.]*\) ms cpu.*/\1 \2/p' "$W/cost.out" |
                    awk -v a="$from" -v b="$to" '$1 >= a && $1 <= b { s += $2; n++ } END { if (n) printf "%.0f", s / n }')
            fi
            echo "cost: round $r: $name: $per ms CPU per refresh (whole process, refreshes $from..$to)${coll:+; its collector thread $coll ms}"
            # the least of the rounds: when the host does not run a vCPU,
            # the guest charges the wait to whatever it was running, so the
            # noise only ever adds
            ((${got[$name]:-0} == 0 || per < least[$name])) && least[$name]=$per
            [[ -n $coll ]] && ((${got[$name]:-0} == 0 || coll < ${best[$name]:-999999999})) && best[$name]=$coll
            got[$name]=$((${got[$name]:-0} + 1))
        done
    done
    [[ -s $W/cost.err ]] && { echo "stderr of the runs:"; sort "$W/cost.err" | uniq -c | head -n 10; }
    for name in "${names[@]}"; do
        ((${got[$name]:-0})) || continue
        figure "cost_${name//-/_}_ms" "${least[$name]}"
        [[ -n ${best[$name]:-} ]] && figure "cost_${name//-/_}_collector_ms" "${best[$name]}"
    done
    if ((!${got[cgtop]:-0} || !${got[systemd-cgtop]:-0})); then
        record cost fail "a program printed too few refreshes"
        return
    fi
    c=${least[cgtop]} s=${least[systemd-cgtop]}
    ratio=$(awk -v a="$s" -v b="$c" 'BEGIN { printf "%.1f", a / (b > 0 ? b : 1) }')
    figure cost_systemd_over_cgtop "$ratio"
    systemd-cgtop -b -n 1 -d 0.1 --depth=64 > "$RESULTS/systemd-cgtop.txt" 2>&1
    echo "systemd-cgtop -b -n 1 --depth=64 printed $(wc -l < "$RESULTS/systemd-cgtop.txt") lines" \
        "(it lists groups with processes or accounting data)"
    # "far below": at least 3x cheaper (the measured margin is much larger)
    if awk -v r="$ratio" 'BEGIN { exit !(r >= 3) }'; then
        record cost pass "cgtop -b ${c} ms, systemd-cgtop ${s} ms CPU per refresh (${ratio}x)"
    else
        record cost fail "cgtop -b ${c} ms, systemd-cgtop ${s} ms CPU per refresh (only ${ratio}x)"
    fi
}

# ---------------------------------------------------------------- bench
row() { # row TEXT COLUMN: a cell of the benchmark's first table row starting with TEXT
    grep -F "| $1" "$RESULTS/bench.md" | head -n 1 | awk -F'|' -v c="$2" '{ gsub(/ /, "", $c); print $c }'
}
# shellcheck disable=SC2016 # backticks: the benchmark's Markdown
step_bench() {
    begin bench
    if [[ -z $BENCH ]]; then
        record bench skip "no benchmark binary"
        return
    fi
    local rc
    # shellcheck disable=SC2086 # BENCH_ARGS is a list of words
    budget "$BENCH" --root "$CG" $BENCH_ARGS > "$RESULTS/bench.md" 2> "$W/bench.err"
    rc=$?
    cat "$RESULTS/bench.md"
    if ((rc != 0)); then
        tail -n 20 "$W/bench.err"
        record bench fail "exit status $rc"
        return
    fi
    # the figures the summary and BENCHMARKS.md quote
    figure bench_scan_ms "$(row 'cgtop `Scanner::scan`, steady' 3)"
    figure bench_scan_x "$(row 'cgtop `Scanner::scan`, steady' 7)"
    figure bench_refresh_ms "$(row '`Collector::refresh`' 3)"
    figure bench_refresh_x "$(row '`Collector::refresh`' 7)"
    figure bench_floor_ms "$(row '**kept-fd pread, cgtop' 3)"
    figure bench_orc_ms "$(row 'open/read/close, cgtop' 3)"
    figure bench_orc_x "$(row 'open/read/close, cgtop' 7)"
    figure bench_walk_x "$(row 'cgtop walk alone' 7)"
    figure bench_amortised_x "$(row 'cgtop scan amortised' 7)"
    figure bench_rss_mib "$(grep -o 'VmRSS [0-9.]* MiB' "$RESULTS/bench.md" | head -n 1 | awk '{ print $2 }')"
    figure bench_kept "$(sed -n 's/^scanner: \([0-9]*\) descriptors kept.*/\1/p' "$RESULTS/bench.md")"
    local x
    x=$(row 'cgtop `Scanner::scan`, steady' 7)
    if grep -q '^WARNING' "$RESULTS/bench.md"; then
        record bench fail "$(grep '^WARNING' "$RESULTS/bench.md" | head -n 1)"
    else
        record bench pass "steady scan ${x}x the kept-fd floor, refresh $(row '`Collector::refresh`' 7)x"
    fi
}

# ---------------------------------------------------------------- startup
scell() { # scell LABEL COLUMN: a cell of startup.md's row "| LABEL |", without ** and "(k of n seen)"
    grep -F "| $1 |" "$RESULTS/startup.md" | head -n 1 |
        awk -F'|' -v c="$2" '{ s = $c; gsub(/[*]|[(][^)]*[)]| /, "", s); print s }'
}
# shellcheck disable=SC2016 # backticks: the benchmark's Markdown
step_startup() {
    begin startup
    if [[ -z $STARTUP ]]; then
        record startup skip "no startup benchmark binary"
        return
    fi
    local rc seen tree rates rss own=''
    # the marker: a top-level group that every tree of this script has,
    # shown on cgtop's first screen; its CPU column tells the first rates
    # shellcheck disable=SC2086 # STARTUP_ARGS is a list of words
    budget "$STARTUP" --no-tree --marker system.slice --cgtop "$CGTOP" $STARTUP_ARGS \
        > "$RESULTS/startup.md" 2> "$W/startup.err"
    rc=$?
    cat "$RESULTS/startup.md"
    if ((rc != 0)); then
        tail -n 20 "$W/startup.err"
        record startup fail "exit status $rc"
        return
    fi
    # peak RSS of the one-shot run once more, with the guest's own
    # descriptor budget (~1,500 files kept in a 2 GB guest, the rest reopened)
    if [[ -x /usr/bin/time ]]; then
        own=$(/usr/bin/time -f %M "$CGTOP" -b -n 1 2>&1 > /dev/null | tail -n 1)
        echo "peak RSS of \`cgtop -b -n 1\` with the guest's own descriptor budget: $own KiB"
    fi
    tree=$(scell cgtop 3) rates=$(scell cgtop 5) rss=$(scell '`cgtop -b -n 1`' 6)
    figure startup_tree_ms "$tree"
    figure startup_rates_ms "$rates"
    figure startup_tree_cpu_ms "$(scell cgtop 7)"
    figure startup_systemd_cgtop_tree_ms "$(scell systemd-cgtop 3)"
    figure startup_systemd_cgtop_rates_ms "$(scell systemd-cgtop 5)"
    figure startup_batch_d01_ms "$(scell '`cgtop -b -n 1 -d 0.1`' 3)"
    figure startup_batch_ms "$(scell '`cgtop -b -n 1`' 3)"
    figure startup_batch_rss_mib "$rss"
    figure startup_batch_rss_own_budget_mib "$(awk -v k="$own" 'BEGIN { if (k + 0 > 0) printf "%.1f", k / 1024 }')"
    figure startup_systemd_cgtop_batch_ms "$(scell '`systemd-cgtop -b -n 1`' 3)"
    seen=$(grep -F '| cgtop |' "$RESULTS/startup.md" | grep -o '[0-9]* of [0-9]* seen' | head -n 1)
    if [[ -z $tree || $tree == - ]]; then
        record startup fail "cgtop's tree never came on screen (see the screen above)"
    elif [[ -n $seen ]]; then
        record startup fail "cgtop's tree or rates seen in only $seen rounds"
    else
        record startup pass "first screen ${tree} ms, rates ${rates} ms (systemd-cgtop $(scell systemd-cgtop 3), $(scell systemd-cgtop 5) ms); -b -n 1 peak RSS ${rss} MiB"
    fi
}

# ---------------------------------------------------------------- churn
# Two cgtops watch the churn.  "tree" watches the whole hierarchy: with
# --json --brief up to 2,000 groups (what a monitoring job on a big host
# runs: full --json reads ~25 files of every group on every refresh, 3-6 s a
# refresh at 1,000 groups under TCG, too few refreshes for the check);
# above, with -b.  "sub" is full `cgtop --json` on the churned subtree only:
# every group's detail read while groups vanish under it, cheap refreshes,
# so many of them.  Each must still run at the end and print sane output.
step_churn() {
    begin churn
    if [[ -z $CHECK ]]; then
        record churn skip "no guest test binary"
        return
    fi
    if ! perl -MTime::HiRes -e 1 2> /dev/null; then
        record churn skip "perl with Time::HiRes is not installed on the host"
        return
    fi
    local rel=system.slice/scale-churn.slice
    local parent=$CG/$rel rc w t_start t_end t_kill out=() bad=() tree_mode=json
    local -A pid=() alive=() cgrc=() file=()
    ((N > 2000)) && tree_mode=text
    file[sub]=$RESULTS/churn-sub.jsonl
    if [[ $tree_mode == json ]]; then file[tree]=$W/churn-tree.jsonl; else file[tree]=$W/churn-tree.txt; fi
    mkdir -p "$parent"
    echo '+cpu +io +memory +pids' > "$parent/cgroup.subtree_control"
    # the spinners churn.pl starts share 20 % of a CPU
    echo '20000 100000' > "$parent/cpu.max"
    t_start=$(ms)
    if [[ $tree_mode == json ]]; then
        budget_exec "$CGTOP" --json --brief -d "$CHURN_INTERVAL" > "${file[tree]}" 2> "$W/churn-tree.err" &
    else
        budget_exec "$CGTOP" -b -d "$CHURN_INTERVAL" > "${file[tree]}" 2> "$W/churn-tree.err" &
    fi
    pid[tree]=$!
    budget_exec "$CGTOP" --json -d "$CHURN_INTERVAL" "$rel" > "${file[sub]}" 2> "$W/churn-sub.err" &
    pid[sub]=$!
    sleep 2
    perl "$HERE/churn.pl" --parent "$parent" --secs "$CHURN_SECS" --rate "$CHURN_RATE" > "$RESULTS/churn.log" 2>&1
    rc=$?
    cat "$RESULTS/churn.log"
    sleep 2
    t_kill=$(ms)
    for w in tree sub; do
        alive[$w]=0
        kill -0 "${pid[$w]}" 2> /dev/null && alive[$w]=1
        grep -E '^(VmHWM|VmRSS):' "/proc/${pid[$w]}/status" > "$W/churn-$w.status" 2> /dev/null
        kill -TERM "${pid[$w]}" 2> /dev/null
    done
    for w in tree sub; do
        wait "${pid[$w]}"
        cgrc[$w]=$?
    done
    t_end=$(ms)
    for w in tree sub; do
        echo "cgtop ($w) ran $(((t_end - t_start) / 1000)).$(((t_end - t_start) % 1000 / 100)) s;" \
            "alive at the end: ${alive[$w]}; exit status after SIGTERM: ${cgrc[$w]};" \
            "$(tr -s ' \t\n' ' ' < "$W/churn-$w.status")"
        [[ -s $W/churn-$w.err ]] && { echo "cgtop ($w) stderr:"; tail -n 20 "$W/churn-$w.err"; }
        figure "churn_${w}_hwm_kib" "$(awk '/^VmHWM:/ { print $2 }' "$W/churn-$w.status")"
    done
    figure churn_ops "\"$(sed -n 's/^churn: //p' "$RESULTS/churn.log" | head -n 1)\""
    ((rc == 0)) || bad+=("churn.pl exit status $rc")
    for w in tree sub; do
        if ((!alive[$w])); then
            bad+=("cgtop ($w) exited during the churn")
            continue
        fi
        local min=3 var=CGTOP_SCALE_CHURN_JSON
        [[ $w == tree ]] && min=2
        [[ ${file[$w]} == *.txt ]] && var=CGTOP_SCALE_CHURN_TEXT
        env "$var=${file[$w]}" CGTOP_SCALE_CHURN_INTERVAL="$CHURN_INTERVAL" \
            CGTOP_SCALE_CHURN_WALL_MS=$((t_kill - t_start)) CGTOP_SCALE_CHURN_END_UNIX_MS=$t_kill \
            CGTOP_SCALE_CHURN_PREFIX="/$rel/" \
            CGTOP_SCALE_CHURN_MIN_REFRESHES=$min CGTOP_SCALE_CHURN_CAP="/$rel=20000/100000" \
            "$CHECK" --include-ignored --exact --nocapture scale::churn_output_is_sane 2>&1 | tee "$W/churn-$w.check"
        if ((PIPESTATUS[0] == 0)); then
            local summary
            summary=$(sed -n 's/^churn check: //p' "$W/churn-$w.check" | head -n 1)
            figure "churn_${w}_check" "\"$summary\""
            out+=("$w ($([[ ${file[$w]} == *.txt ]] && echo -b || echo --json)): ${summary%%;*}")
        else
            bad+=("cgtop ($w): its output failed the check")
        fi
    done
    if ((${#bad[@]})); then
        record churn fail "$(printf '%s; ' "${bad[@]}")"
    else
        record churn pass "$(sed -n 's/^churn: \([0-9]* groups created\).* \([0-9]* mkdir+rmdir\/s\).*/\1, \2/p' "$RESULTS/churn.log"); $(printf '%s; ' "${out[@]}")"
    fi
}

# one function, so that bash has read the whole script before it runs any
# of it (it reads a script as it goes: editing it during a run would
# otherwise change what the rest of the run does)
main() {
    want tree && step_tree
    want list && step_list
    want cost && step_cost
    want bench && step_bench
    want startup && step_startup
    want churn && step_churn

    echo
    echo "guest: $(grep -c ' pass ' "$RESULTS/results") passed, $(grep -c ' fail ' "$RESULTS/results") failed," \
        "$(grep -c ' skip ' "$RESULTS/results") skipped (guest uptime $(uptime_s)s)"
    exit $failed
}
main "$@"
