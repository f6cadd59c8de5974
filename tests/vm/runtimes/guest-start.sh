#!/bin/bash
# tests/vm/runtimes/guest-start.sh STATE_DIR - in the identity guest
# (run-in-vm --init systemd --session): lays the runtimes that
# tests/vm/runtimes/setup extracted over the guest's /usr and /etc, starts
# containerd and docker, loads the offline busybox image into docker, podman
# (root and the user alice) and containerd, and starts one container of each
# kind.  Writes STATE_DIR/containers.tsv, one line per container:
#   runtime  name  image  id  pid  cgroup (the path in /proc/PID/cgroup)
# (runtime: docker, podman, podman-pod, podman-rootless, containerd, cri and
# cri-sandbox (the pod's sandbox container), and k8s-pod: the pod's slice,
# with the pod uid as id and no pid; podman-pod-slice: podman's pod's
# slice, with the pod id and no pid)
# and STATE_DIR/start.log.  Exit status: 0 when every container runs; 1 when
# one could not start (the others are still listed; the reason is in the log).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RT=$HERE/../build/runtimes
STATE=${1:?usage: guest-start.sh STATE_DIR}
mkdir -p "$STATE"
IMG=$RT/busybox-image.tar
TAG=$(cat "$RT/image-tag")
D=/usr/bin/docker # not the host's /usr/local/bin/docker, if it has one
T0=$(date +%s.%N)
rc=0
say() { printf '%6.1fs %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*" | tee -a "$STATE/start.log" >&2; }
run() { # run CMD...: logged, its output in the log
    say "+ $*"
    "$@" >> "$STATE/start.log" 2>&1 || { say "FAILED ($?): $*"; return 1; }
}
record() { # record RUNTIME NAME IMAGE ID PID
    local cg
    cg=$(sed -n 's/^0:://p' "/proc/$5/cgroup" 2> /dev/null)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$cg" >> "$STATE/containers.tsv"
    say "$1 $2: pid $5 in $cg"
}
: > "$STATE/containers.tsv"

# ---- the runtimes' files: /usr read-only under an overlay, /etc copied (no
# clobbering of the host's own files), the data directories on the ext4
# scratch disk (an overlay upper layer cannot live on the guest's overlay root)
mount -t overlay overlay -o "lowerdir=$RT/root/usr:/usr" /usr || { say "cannot lay the runtimes over /usr"; exit 1; }
cp -an "$RT/root/etc/." /etc/
for d in /var/lib/docker /var/lib/containerd /var/lib/containers /home; do
    mkdir -p "/mnt/scratch$d" "$d"
    mount --bind "/mnt/scratch$d" "$d"
done
# what the packages' maintainer scripts would have done
groupadd -r docker 2> /dev/null
mkdir -p /etc/docker
echo '{"bridge": "none", "iptables": false, "ip-masq": false}' > /etc/docker/daemon.json
# containerd's CRI plugin as a kubelet node has it: the systemd cgroup
# driver, and the offline image as the sandbox ("pause") image
cat > /etc/containerd/config.toml << EOF
version = 2
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$TAG"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
EOF
# no network in the guest: the containers get none either
run systemctl daemon-reload
run systemctl start containerd.service docker.service || rc=1

# ---- docker: compose-style labels, as `docker compose` sets them
run $D load -i "$IMG" || rc=1
if run $D run -d --network none --label com.docker.compose.project=shop \
    --label com.docker.compose.service=api --name shop-api-1 "$TAG" sleep 3600; then
    read -r id pid < <($D inspect -f '{{.Id}} {{.State.Pid}}' shop-api-1)
    record docker shop-api-1 "$TAG" "$id" "$pid"
else rc=1; fi

# ---- podman, rootful: one container alone, one in a pod
run podman load -i "$IMG" || rc=1
if run podman run -d --network none --name web-1 "$TAG" sleep 3600; then
    read -r id pid < <(podman inspect -f '{{.Id}} {{.State.Pid}}' web-1)
    record podman web-1 "$TAG" "$id" "$pid"
else rc=1; fi
if run podman pod create --name shop-pod --network none &&
    run podman run -d --pod shop-pod --name shop-db "$TAG" sleep 3600; then
    read -r id pid < <(podman inspect -f '{{.Id}} {{.State.Pid}}' shop-db)
    record podman-pod shop-db "$TAG" "$id" "$pid"
    # the pod's own slice (machine-libpod_pod_<id>.slice), named only in
    # podman's bolt_state.db
    podid=$(podman pod inspect -f '{{.Id}}' shop-pod)
    cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' podman-pod-slice shop-pod "" "$podid" "" "${cg%.slice/*}.slice" >> "$STATE/containers.tsv"
else rc=1; fi

# ---- containerd through ctr (namespace default)
run ctr -n default image import "$IMG" || rc=1
if run ctr -n default run -d "$TAG" ctr-sleeper sleep 3600; then
    pid=$(ctr -n default task ls | awk '$1 == "ctr-sleeper" {print $2}')
    record containerd ctr-sleeper "$TAG" ctr-sleeper "$pid"
else rc=1; fi

# ---- Kubernetes' layout through containerd's CRI plugin (the kubelet's
# calls, made by cri-pod.py; namespace k8s.io)
run ctr -n k8s.io image import "$IMG" || rc=1
uidk=7fda01c4-0ece-403d-88b4-c371d66d132a
mkdir -p "/var/log/pods/shop_api-7d9f_$uidk"
if run /usr/bin/python3 "$HERE/cri-pod.py" /run/containerd/containerd.sock "$TAG" shop api-7d9f "$uidk" api; then
    read -r sid cid < <(tail -1 "$STATE/start.log")
    pid=$(ctr -n k8s.io task ls | awk -v c="$cid" '$1 == c {print $2}')
    record cri api "$TAG" "$cid" "$pid"
    spid=$(ctr -n k8s.io task ls | awk -v c="$sid" '$1 == c {print $2}')
    record cri-sandbox api-7d9f "$TAG" "$sid" "$spid"
    # the pod's own group: the container's parent (kubepods-besteffort-pod<uid>.slice)
    cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' k8s-pod api-7d9f "" "$uidk" "" "${cg%/*}" >> "$STATE/containers.tsv"
else rc=1; fi

# ---- podman rootless: the user alice (the first free uid from 2000: the
# host's users come along in /etc/passwd), lingering, so that her
# user@UID.service and session bus exist (podman's systemd cgroup manager
# needs the bus)
uid=$(for u in $(seq 2000 2999); do getent passwd "$u" > /dev/null || { echo "$u"; break; }; done)
run useradd -m -u "$uid" -s /bin/bash alice
echo "alice:200000:65536" >> /etc/subuid
echo "alice:200000:65536" >> /etc/subgid
run loginctl enable-linger alice
for _ in $(seq 240); do [[ -S /run/user/$uid/bus ]] && break; sleep 0.5; done
as_alice() {
    runuser -u alice -- env HOME=/home/alice XDG_RUNTIME_DIR="/run/user/$uid" \
        DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" "$@"
}
install -m 644 "$IMG" /tmp/cgtop-busybox-image.tar
run as_alice podman load -i /tmp/cgtop-busybox-image.tar || rc=1
if run as_alice podman run -d --network none --name rootless-1 "$TAG" sleep 3600; then
    read -r id pid < <(as_alice podman inspect -f '{{.Id}} {{.State.Pid}}' rootless-1)
    record podman-rootless rootless-1 "$TAG" "$id" "$pid"
else rc=1; fi

say "done: $(wc -l < "$STATE/containers.tsv") containers, exit $rc"
exit $rc
