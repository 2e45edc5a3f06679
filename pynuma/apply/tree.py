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

from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple

from ..cgroups.detect import CGROUPFS, SYSTEMD, CgroupLayout, detect, find_kubepods
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
    #: hierarchy paths the tree's mounts stand below (``nest_under_self``), for ``/proc/PID/cgroup`` checks
    bases: Tuple[str, ...] = ("",)

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


def own_cgroups(text: str) -> Dict[str, str]:
    """``{controller: cgroup path}`` of a ``/proc/PID/cgroup`` text; the v2 path under key ``""``."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            out[controller] = parts[2]
    return out


def _nested(fs: FsRoot, layout: CgroupLayout) -> Tuple[CgroupLayout, Tuple[str, ...]]:
    """``layout`` with every hierarchy moved down to this process's own cgroup in it."""
    text = fs.read_required("/proc/self/cgroup")
    own = own_cgroups(text)

    def below(mount: str, key: str) -> str:
        path = own.get(key)
        if path is None:
            raise InputError(f"/proc/self/cgroup: this process has no cgroup in the {key or 'unified'} hierarchy")
        return join(mount, path)

    v1 = {c: below(m, c) for c, m in layout.v1_mounts.items()}
    unified = below(layout.unified, "") if layout.unified else None
    bases = tuple(sorted({own[c] for c in layout.v1_mounts if c in own} | ({own.get("", "/")} if unified else set())))
    return replace(layout, v1_mounts=v1, unified=unified), tuple(b.rstrip("/") for b in bases)


class NoKubepods(InputError):
    """No ``kubepods`` cgroup exists and no driver was given to make one (``reason`` says what was looked at)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def open_tree(fs: FsRoot, cgroup_root: str = "/", driver: Optional[str] = None,
              allow_fake_root: bool = False, nest_under_self: bool = False) -> CgroupTree:
    """Detect the hierarchies under ``fs`` and where ``kubepods`` is (or goes).

    ``cgroup_root`` is the kubelet's ``--cgroup-root``; ``driver`` forces the
    cgroup driver (needed when no ``kubepods`` cgroup exists yet).  A root
    other than ``/`` is refused unless ``allow_fake_root``: writes then go
    to files under it, never to the host.  ``nest_under_self`` puts
    everything below this process's own cgroup in each hierarchy (a
    delegated subtree; on a v1 host the process may sit at different paths
    in different hierarchies).
    """
    if not fs.is_host and not allow_fake_root:
        raise FakeRootRefused(f"cgroup writes would go under {fs.root}, not the live host: target it explicitly "
                              "(allow_fake_root=True, or --target-root on the command line)")
    if driver is not None and driver not in DRIVERS:
        raise InputError(f"cgroup driver {driver!r}: expected one of {', '.join(DRIVERS)}")
    if ".." in cgroup_root.split("/") or "\0" in cgroup_root:
        raise InputError(f"cgroup root {cgroup_root!r}: a cgroup path may not climb with '..'")
    layout = detect(fs, cgroup_root)
    bases: Tuple[str, ...] = ("",)
    if nest_under_self:
        layout, bases = _nested(fs, layout)
        found_driver, found_path, why = find_kubepods(fs, layout, cgroup_root)
        layout = replace(layout, driver=found_driver, kubepods=found_path, reasons=layout.reasons + (why,))
    found = layout.driver
    if driver is not None and found is not None and driver != found:
        raise InputError(f"cgroup driver {driver} asked for, but {layout.kubepods} under {layout.primary} "
                         f"belongs to the {found} driver")
    chosen = driver or found
    if chosen is None:
        raise NoKubepods(f"{layout.reasons[-1]}: give the cgroup driver (cgroupfs or systemd) to create it",
                         layout.reasons[-1])
    kubepods = layout.kubepods or join(cgroup_root, KUBEPODS_NAME[chosen])
    return CgroupTree(fs, layout, chosen, kubepods, writer_for(layout.version), bases)
