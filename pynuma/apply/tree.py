"""Where workload cgroups live on this machine: hierarchies, driver, the ``kubepods`` cgroup.

>>> tree = open_tree(FsRoot("/"), allow_fake_root=False)        # doctest: +SKIP
>>> tree.pod_path("1234-ab", "Burstable")                       # doctest: +SKIP
'/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_ab.slice'

A path like ``/kubepods/burstable/pod<uid>`` is a *cgroup path*: the same
in every hierarchy.  :meth:`CgroupTree.dirs` gives the directories it
has below each mounted hierarchy (one on v2, one per controller on v1).
Detection, naming and file constants come from :mod:`pynuma.cgroups`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..cgroups.detect import CGROUPFS, SYSTEMD, CgroupLayout, detect
from ..cgroups.kubepods import BEST_EFFORT, BURSTABLE, GUARANTEED, container_cgroup_name, pod_cgroup_name, tier_of
from ..errors import FakeRootRefused, InputError
from ..fsroot import FsRoot
from .files import CgroupWriter, writer_for

DRIVERS = (CGROUPFS, SYSTEMD)
KUBEPODS_NAME = {CGROUPFS: "kubepods", SYSTEMD: "kubepods.slice"}


def join(*parts: str) -> str:
    """Join cgroup path parts into ``/a/b`` (``/`` for none)."""
    inner = "/".join(p.strip("/") for p in parts if p.strip("/"))
    return "/" + inner


@dataclass(frozen=True)
class CgroupTree:
    """The machine's cgroup hierarchies as the actuator writes them.

    ``kubepods`` is the cgroup path of the pods cgroup (``/kubepods.slice``
    under the systemd driver), below the kubelet's ``--cgroup-root``.
    """

    fs: FsRoot
    layout: CgroupLayout
    driver: str
    kubepods: str
    writer: CgroupWriter

    @property
    def version(self) -> int:
        return self.writer.version

    def mount(self, controller: str) -> Optional[str]:
        """Mountpoint of ``controller``'s hierarchy (the unified one on v2), or None when not mounted."""
        return self.layout.hierarchy(controller)

    def hierarchies(self) -> List[Tuple[str, str]]:
        """``(mountpoint, first controller)`` of every hierarchy a workload cgroup is made in, deduplicated."""
        if self.version == 2:
            return [(self.layout.unified, "")]
        seen: Dict[str, str] = {}
        for c in self.writer.managed:
            m = self.layout.v1_mounts.get(c)
            if m is not None and m not in seen:
                seen[m] = c
        return [(m, c) for m, c in seen.items()]

    def dir(self, controller: Optional[str], cgroup: str) -> Optional[str]:
        """Directory of ``cgroup`` in ``controller``'s hierarchy (any hierarchy on v2)."""
        mount = self.layout.unified if self.version == 2 else self.mount(controller or "memory")
        return None if mount is None else join(mount, cgroup)

    def dirs(self, cgroup: str) -> List[str]:
        """The directories of ``cgroup``, one per hierarchy."""
        return [join(m, cgroup) for m, _ in self.hierarchies()]

    @property
    def primary(self) -> str:
        """The hierarchy pods are looked up in (memory on v1, the unified one on v2)."""
        if self.version == 2:
            return self.layout.unified
        mount = self.mount("memory") or (self.hierarchies()[0][0] if self.hierarchies() else None)
        if mount is None:
            raise InputError("no cgroup v1 hierarchy of cpu, cpuset, memory, pids or hugetlb is mounted")
        return mount

    def tier_path(self, qos: str) -> str:
        """Cgroup path of a QoS class's tier (Guaranteed = ``kubepods`` itself)."""
        if qos == GUARANTEED:
            return self.kubepods
        return join(self.kubepods, pod_cgroup_name("x", qos, self.driver).rsplit("/", 1)[0])

    def pod_path(self, uid: str, qos: str) -> str:
        """Cgroup path of a pod's cgroup."""
        return join(self.kubepods, pod_cgroup_name(uid, qos, self.driver))

    def container_path(self, pod_path: str, container_id: str, runtime: str = "cri-containerd") -> str:
        """Cgroup path of a container's cgroup inside its pod's."""
        return join(pod_path, container_cgroup_name(container_id, self.driver, runtime))

    def find_pod(self, uid: str) -> Optional[Tuple[str, str]]:
        """``(cgroup path, QoS class)`` of the pod with ``uid``, looked up in every tier; None if absent."""
        for qos in (GUARANTEED, BURSTABLE, BEST_EFFORT):
            path = self.pod_path(uid, qos)
            if self.fs.isdir(join(self.primary, path)):
                return path, qos
        return None

    def is_tier(self, name: str) -> bool:
        return tier_of(name, self.driver) is not None


def open_tree(fs: FsRoot, cgroup_root: str = "/", driver: Optional[str] = None,
              allow_fake_root: bool = False) -> CgroupTree:
    """Detect the hierarchies under ``fs`` and where ``kubepods`` is (or goes).

    ``cgroup_root`` is the kubelet's ``--cgroup-root``; ``driver`` forces the
    cgroup driver (needed when no ``kubepods`` cgroup exists yet).  A root
    other than ``/`` is refused unless ``allow_fake_root``: writes then go
    to files under it, never to the host.
    """
    if not fs.is_host and not allow_fake_root:
        raise FakeRootRefused(f"cgroup writes would go under {fs.root}, not the live host: target it explicitly "
                              "(allow_fake_root=True, or --target-root on the command line)")
    if driver is not None and driver not in DRIVERS:
        raise InputError(f"cgroup driver {driver!r}: expected one of {', '.join(DRIVERS)}")
    layout = detect(fs, cgroup_root)
    found = layout.driver
    if driver is not None and found is not None and driver != found:
        raise InputError(f"cgroup driver {driver} asked for, but {layout.kubepods} under {layout.primary} "
                         f"belongs to the {found} driver")
    chosen = driver or found
    if chosen is None:
        raise InputError(f"{layout.reasons[-1]}: give the cgroup driver (cgroupfs or systemd) to create it")
    kubepods = layout.kubepods or join(cgroup_root, KUBEPODS_NAME[chosen])
    return CgroupTree(fs, layout, chosen, kubepods, writer_for(layout.version))
