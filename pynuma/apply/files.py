"""v1 and v2 writers: a :class:`ResourceConfig` as the control files of one cgroup version.

Both satisfy :class:`CgroupWriter`, chosen once by :func:`writer_for`
(kubelet ``cgroup_v1_manager_linux.go`` / ``cgroup_v2_manager_linux.go``,
runc's ``fs`` / ``fs2``).  A setting names its controller, the file and
the exact text to write; ``optional`` settings (a hugetlb limit of 0 or
"unbounded" for a size nobody asked for) are skipped rather than refused
where the controller is missing.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional, Protocol, Tuple

from ..errors import InputError
from ..parse import ascii_uint
from ..policy.cgroupconfig.config import ResourceConfig
from ..policy.cgroupconfig.conversions import QUOTA_PERIOD_US, huge_size_name, shares_to_weight
from ..policy.cgroupconfig.qos import UNBOUNDED_HUGETLB

PROCS = "cgroup.procs"
SUBTREE_CONTROL = "cgroup.subtree_control"
CONTROLLERS = "cgroup.controllers"
KILL = "cgroup.kill"
EVENTS = "cgroup.events"

# v1: what the kernel reads back for "no limit" in memory.limit_in_bytes (PAGE_COUNTER_MAX pages)
V1_UNLIMITED = 9223372036854771712
PAGE = 4096


class Setting(NamedTuple):
    """One control file to write: ``controller`` (None = core cgroup file), ``name``, ``value``."""

    controller: Optional[str]
    name: str
    value: str
    why: str
    optional: bool = False


class CgroupWriter(Protocol):
    """What :class:`V1Writer` and :class:`V2Writer` both provide."""

    version: int
    #: controllers whose hierarchies hold a workload cgroup (v1), or that it may use (v2)
    managed: Tuple[str, ...]

    def settings(self, cfg: ResourceConfig) -> List[Setting]:
        """The files to write for ``cfg``, in a safe order."""


def _hugetlb(cfg: ResourceConfig, template: str, controller: str = "hugetlb") -> List[Setting]:
    out = []
    for size, limit in sorted((cfg.hugepage_limits or {}).items()):
        if size <= 0:
            continue  # an unparseable page size: the kernel has no file for it
        name = template.format(size=huge_size_name(size))
        optional = limit in (0, UNBOUNDED_HUGETLB)
        out.append(Setting(controller, name, str(limit), f"hugepages of {huge_size_name(size)}", optional))
    return out


def _limit_text(value: int, unlimited: str) -> str:
    return unlimited if value < 0 else str(value)


class V1Writer:
    """cgroup v1 (and hybrid): one hierarchy per controller, legacy file names."""

    version = 1
    managed = ("cpu", "cpuacct", "cpuset", "memory", "pids", "hugetlb")

    def settings(self, cfg: ResourceConfig) -> List[Setting]:
        if cfg.unified:
            raise InputError(f"unified settings ({', '.join(sorted(cfg.unified))}) need cgroup v2")
        out: List[Setting] = []
        if cfg.cpuset_mems is not None:  # mems first: a v1 cpuset with cpus but no mems still takes no tasks
            out.append(Setting("cpuset", "cpuset.mems", cfg.cpuset_mems, "memory nodes"))
        if cfg.cpuset_cpus is not None:
            out.append(Setting("cpuset", "cpuset.cpus", cfg.cpuset_cpus, "CPUs"))
        if cfg.cpu_shares is not None:
            out.append(Setting("cpu", "cpu.shares", str(cfg.cpu_shares), "CPU request"))
        if cfg.cpu_period is not None:
            out.append(Setting("cpu", "cpu.cfs_period_us", str(cfg.cpu_period), "CFS period"))
        if cfg.cpu_quota is not None:
            out.append(Setting("cpu", "cpu.cfs_quota_us", str(cfg.cpu_quota if cfg.cpu_quota > 0 else -1),
                               "CPU limit"))
        if cfg.memory:  # 0 = unset, as in runc
            out.append(Setting("memory", "memory.limit_in_bytes", str(cfg.memory if cfg.memory > 0 else -1),
                               "memory limit"))
        if cfg.pids_limit:
            out.append(Setting("pids", "pids.max", _limit_text(cfg.pids_limit, "max"), "process limit"))
        out += _hugetlb(cfg, "hugetlb.{size}.limit_in_bytes")
        return out


class V2Writer:
    """cgroup v2: one directory, controllers enabled through the parent's ``cgroup.subtree_control``."""

    version = 2
    managed = ("cpuset", "cpu", "memory", "pids", "hugetlb")

    def settings(self, cfg: ResourceConfig) -> List[Setting]:
        out: List[Setting] = []
        if cfg.cpuset_cpus is not None:
            out.append(Setting("cpuset", "cpuset.cpus", cfg.cpuset_cpus, "CPUs"))
        if cfg.cpuset_mems is not None:
            out.append(Setting("cpuset", "cpuset.mems", cfg.cpuset_mems, "memory nodes"))
        if cfg.cpu_shares is not None:
            out.append(Setting("cpu", "cpu.weight", str(shares_to_weight(cfg.cpu_shares)),
                               f"cpu shares {cfg.cpu_shares}"))
        if cfg.cpu_quota is not None or cfg.cpu_period is not None:
            quota = cfg.cpu_quota if cfg.cpu_quota is not None else -1
            period = cfg.cpu_period or QUOTA_PERIOD_US
            out.append(Setting("cpu", "cpu.max", f"{quota if quota > 0 else 'max'} {period}", "CPU limit"))
        if cfg.memory:
            out.append(Setting("memory", "memory.max", _limit_text(cfg.memory, "max"), "memory limit"))
        if cfg.pids_limit:
            out.append(Setting("pids", "pids.max", _limit_text(cfg.pids_limit, "max"), "process limit"))
        out += _hugetlb(cfg, "hugetlb.{size}.max")
        for name, value in sorted((cfg.unified or {}).items()):
            head = name.split(".", 1)[0]
            out.append(Setting(None if head == "cgroup" else head, name, value, "unified setting"))
        return out


def writer_for(version: int) -> CgroupWriter:
    """The writer of cgroup ``version`` (1 or 2)."""
    return V2Writer() if version == 2 else V1Writer()


# -- reading back: is the file already what we would write? ----------------------------------

def _unlimited(text: str) -> bool:
    value = ascii_uint(text)
    return text in ("max", "-1") or (value is not None and value >= V1_UNLIMITED)


def _as_cpus(text: str):
    from ..cpuset import CPUSet

    try:
        return CPUSet.parse(text)
    except ValueError:
        return None


def same_value(name: str, current: Optional[str], desired: str) -> bool:
    """Whether ``current`` (as read) already holds ``desired`` (as it would be written)."""
    if current is None:
        return False
    cur, want = current.strip(), desired.strip()
    if cur == want:
        return True
    if name.startswith("cpuset.") and name.endswith(("cpus", "mems")):
        a, b = _as_cpus(cur), _as_cpus(want)
        return a is not None and a == b
    if name == "cpu.max":
        return cur.split() == want.split()
    if name.startswith(("memory.", "hugetlb.")) or name == "pids.max":
        if _unlimited(cur) and _unlimited(want):
            return True
        have, wanted = ascii_uint(cur), ascii_uint(want)
        if have is not None and wanted is not None:
            # the kernel keeps memory limits in whole pages
            return have == wanted - wanted % PAGE
    return False


def parse_controllers(text: Optional[str]) -> Tuple[str, ...]:
    """Controller names of a ``cgroup.controllers`` / ``cgroup.subtree_control`` file."""
    return tuple(t.lstrip("+") for t in (text or "").split() if not t.startswith("-"))
