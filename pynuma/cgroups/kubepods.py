"""The kubelet's names for pod and container cgroups, under both cgroup drivers.

systemd driver::

    kubepods.slice/kubepods-pod<uid>.slice/cri-containerd-<id>.scope        (Guaranteed)
    kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/crio-<id>.scope

cgroupfs driver::

    kubepods/pod<uid>/<id>                                                  (Guaranteed)
    kubepods/besteffort/pod<uid>/<id>

systemd slice names cannot hold ``-`` inside a component, so the kubelet
writes the pod uid with ``_`` for ``-`` (``pod1234_abcd.slice``).  The
native walker classifies names with the same rules (``native/pn_cgwalk.c``);
tests hold the two to each other.
"""
from __future__ import annotations

from typing import Optional, Tuple

from .detect import CGROUPFS, SYSTEMD

GUARANTEED, BURSTABLE, BEST_EFFORT = "Guaranteed", "Burstable", "BestEffort"
# cgroup tier directory of each QoS class (Guaranteed pods sit directly under kubepods).
TIER_DIRS = {BURSTABLE: "burstable", BEST_EFFORT: "besteffort"}
TIERS = {"burstable": BURSTABLE, "besteffort": BEST_EFFORT}

# Container runtimes' systemd scope prefixes (containerd, CRI-O, dockershim/cri-dockerd).
RUNTIME_PREFIXES = ("cri-containerd-", "crio-", "docker-")
# CRI-O's conmon monitor gets its own scope beside the container: not a container.
SKIP_PREFIXES = ("crio-conmon-",)


def one_name(value: str, what: str) -> str:
    """``value`` when it can be one cgroup directory name; else :class:`InputError` naming ``what``.

    A pod uid or container id becomes part of a cgroup path: ``/`` or ``..``
    in it would reach another pod's, a tier's or kubepods' own cgroup.
    """
    if not value or value in (".", "..") or any(c in value for c in "/\0\n\r"):
        from ..errors import InputError

        raise InputError(f"{what} {value!r}: not usable in a cgroup name (empty, '.', '..', or holds '/', NUL "
                         "or a line break)")
    return value


def pod_cgroup_name(uid: str, qos: str, driver: str) -> str:
    """Path of a pod's cgroup relative to the kubepods cgroup."""
    one_name(uid, "pod uid")
    tier = TIER_DIRS.get(qos)
    if driver == SYSTEMD:
        escaped = uid.replace("-", "_")
        if tier is None:
            return f"kubepods-pod{escaped}.slice"
        return f"kubepods-{tier}.slice/kubepods-{tier}-pod{escaped}.slice"
    return f"pod{uid}" if tier is None else f"{tier}/pod{uid}"


def container_cgroup_name(container_id: str, driver: str, runtime: str = "cri-containerd") -> str:
    """Name of a container's cgroup inside its pod cgroup."""
    one_name(container_id, "container")
    if driver == SYSTEMD:
        return f"{runtime}-{container_id}.scope"
    return container_id if runtime in ("cri-containerd", "docker", "") else f"{runtime}-{container_id}"


def tier_of(name: str, driver: str) -> Optional[str]:
    """QoS class of a tier directory name directly under kubepods, or None."""
    if driver == SYSTEMD:
        if name.startswith("kubepods-") and name.endswith(".slice"):
            return TIERS.get(name[len("kubepods-"):-len(".slice")])
        return None
    return TIERS.get(name)


def pod_uid_of(name: str, driver: str, tier: Optional[str]) -> Optional[str]:
    """Pod uid from a pod cgroup name (under ``tier``'s directory; None = directly under kubepods)."""
    if driver == SYSTEMD:
        prefix = "kubepods-pod" if tier is None else f"kubepods-{TIER_DIRS[tier]}-pod"
        if not (name.startswith(prefix) and name.endswith(".slice")):
            return None
        uid = name[len(prefix):-len(".slice")].replace("_", "-")
    else:
        if not name.startswith("pod"):
            return None
        uid = name[3:]
    return uid or None


def container_of(name: str, driver: str) -> Optional[Tuple[str, str]]:
    """``(runtime, container id)`` from a container cgroup name, or None when not a container."""
    for skip in SKIP_PREFIXES:
        if name.startswith(skip):
            return None
    if driver == SYSTEMD:
        if not name.endswith(".scope"):
            return None
        stem = name[:-len(".scope")]
        for prefix in RUNTIME_PREFIXES:
            if stem.startswith(prefix) and len(stem) > len(prefix):
                return prefix[:-1], stem[len(prefix):]
        return None
    for prefix in RUNTIME_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return prefix[:-1], name[len(prefix):]
    return "", name


__all__ = ["pod_cgroup_name", "container_cgroup_name", "tier_of", "pod_uid_of", "container_of",
           "SYSTEMD", "CGROUPFS", "GUARANTEED", "BURSTABLE", "BEST_EFFORT"]
