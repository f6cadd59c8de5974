#!/usr/bin/python3
"""Starts one Kubernetes pod with one container through containerd's CRI
plugin, the calls the kubelet makes (RunPodSandbox, CreateContainer,
StartContainer on runtime.v1.RuntimeService), without a kubelet: Debian
bookworm packages no crictl, so this speaks the CRI itself with Debian's
python3-grpcio and python3-protobuf.  Only the fields used here are
declared (same numbers as the CRI's api.proto; proto3 skips the rest).

usage: cri-pod.py SOCKET IMAGE NAMESPACE POD UID CONTAINER
prints "SANDBOX_ID CONTAINER_ID".  The pod is BestEffort with the host's
network (no CNI in the guest), under the systemd driver's
kubepods-besteffort-pod<UID with _>.slice, as the kubelet names it.
"""
import sys

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
STR, I32, U32, MSG = F.TYPE_STRING, F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_MESSAGE
ONE, MANY = F.LABEL_OPTIONAL, F.LABEL_REPEATED
PKG = "runtime.v1"

fd = descriptor_pb2.FileDescriptorProto(name="cgtop_cri_subset.proto", package=PKG, syntax="proto3")


def message(name, fields):
    """fields: (name, number, type, label, message type name or None, map?)"""
    m = fd.message_type.add(name=name)
    for fname, num, typ, label, tname in fields:
        if tname == "map":
            entry = m.nested_type.add(name=fname.title().replace("_", "") + "Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=STR, label=ONE)
            entry.field.add(name="value", number=2, type=STR, label=ONE)
            m.field.add(name=fname, number=num, type=MSG, label=MANY, type_name=f".{PKG}.{name}.{entry.name}")
        elif tname:
            m.field.add(name=fname, number=num, type=typ, label=label, type_name=f".{PKG}.{tname}")
        else:
            m.field.add(name=fname, number=num, type=typ, label=label)


message("PodSandboxMetadata", [("name", 1, STR, ONE, None), ("uid", 2, STR, ONE, None),
                               ("namespace", 3, STR, ONE, None), ("attempt", 4, U32, ONE, None)])
# NamespaceMode: POD = 0, CONTAINER = 1, NODE = 2 (an enum: a varint, like int32)
message("NamespaceOption", [("network", 1, I32, ONE, None), ("pid", 2, I32, ONE, None), ("ipc", 3, I32, ONE, None)])
message("LinuxSandboxSecurityContext", [("namespace_options", 1, MSG, ONE, "NamespaceOption")])
message("LinuxPodSandboxConfig", [("cgroup_parent", 1, STR, ONE, None),
                                  ("security_context", 2, MSG, ONE, "LinuxSandboxSecurityContext")])
message("PodSandboxConfig", [("metadata", 1, MSG, ONE, "PodSandboxMetadata"), ("hostname", 2, STR, ONE, None),
                             ("log_directory", 3, STR, ONE, None), ("labels", 6, MSG, MANY, "map"),
                             ("annotations", 7, MSG, MANY, "map"), ("linux", 8, MSG, ONE, "LinuxPodSandboxConfig")])
message("RunPodSandboxRequest", [("config", 1, MSG, ONE, "PodSandboxConfig"), ("runtime_handler", 2, STR, ONE, None)])
message("RunPodSandboxResponse", [("pod_sandbox_id", 1, STR, ONE, None)])
message("ContainerMetadata", [("name", 1, STR, ONE, None), ("attempt", 2, U32, ONE, None)])
message("ImageSpec", [("image", 1, STR, ONE, None)])
message("ContainerConfig", [("metadata", 1, MSG, ONE, "ContainerMetadata"), ("image", 2, MSG, ONE, "ImageSpec"),
                            ("command", 3, STR, MANY, None), ("args", 4, STR, MANY, None),
                            ("labels", 9, MSG, MANY, "map"), ("annotations", 10, MSG, MANY, "map"),
                            ("log_path", 11, STR, ONE, None)])
message("CreateContainerRequest", [("pod_sandbox_id", 1, STR, ONE, None), ("config", 2, MSG, ONE, "ContainerConfig"),
                                   ("sandbox_config", 3, MSG, ONE, "PodSandboxConfig")])
message("CreateContainerResponse", [("container_id", 1, STR, ONE, None)])
message("StartContainerRequest", [("container_id", 1, STR, ONE, None)])
message("StartContainerResponse", [])

pool = descriptor_pool.DescriptorPool()
pool.Add(fd)


def cls(name):
    d = pool.FindMessageTypeByName(f"{PKG}.{name}")
    get = getattr(message_factory, "GetMessageClass", None)
    return get(d) if get else message_factory.MessageFactory(pool).GetPrototype(d)


def call(channel, method, req, resp_name):
    f = channel.unary_unary(f"/{PKG}.RuntimeService/{method}",
                            request_serializer=lambda m: m.SerializeToString(),
                            response_deserializer=cls(resp_name).FromString)
    return f(req, timeout=300)


def main():
    sock, image, ns, pod, uid, cname = sys.argv[1:7]
    ch = grpc.insecure_channel(f"unix://{sock}")
    labels = {"io.kubernetes.pod.name": pod, "io.kubernetes.pod.namespace": ns, "io.kubernetes.pod.uid": uid}
    sb = cls("PodSandboxConfig")(
        metadata=cls("PodSandboxMetadata")(name=pod, uid=uid, namespace=ns, attempt=0),
        # no hostname: the pod has the host's network and so no UTS
        # namespace of its own (runc refuses to set one without)
        hostname="",
        log_directory=f"/var/log/pods/{ns}_{pod}_{uid}",
        labels=labels,
        annotations={"kubernetes.io/config.source": "api"},
        linux=cls("LinuxPodSandboxConfig")(
            cgroup_parent=f"kubepods-besteffort-pod{uid.replace('-', '_')}.slice",
            security_context=cls("LinuxSandboxSecurityContext")(
                namespace_options=cls("NamespaceOption")(network=2, pid=1, ipc=0))))
    sid = call(ch, "RunPodSandbox", cls("RunPodSandboxRequest")(config=sb), "RunPodSandboxResponse").pod_sandbox_id
    cc = cls("ContainerConfig")(
        metadata=cls("ContainerMetadata")(name=cname, attempt=0),
        image=cls("ImageSpec")(image=image),
        command=["/bin/sleep"], args=["3600"],
        labels=dict(labels, **{"io.kubernetes.container.name": cname}),
        log_path=f"{cname}/0.log")
    cid = call(ch, "CreateContainer", cls("CreateContainerRequest")(pod_sandbox_id=sid, config=cc, sandbox_config=sb),
               "CreateContainerResponse").container_id
    call(ch, "StartContainer", cls("StartContainerRequest")(container_id=cid), "StartContainerResponse")
    print(sid, cid)


if __name__ == "__main__":
    main()
