"""Preconditions of cgroup writes that the kernel would otherwise refuse with a bare errno.

Each check raises :class:`~pynuma.apply.plan.PreconditionError` naming the
file to look at and what it lacks, before anything is written.
"""
from __future__ import annotations

from typing import Optional

from ..cpuset import CPUSet
from ..fsroot import FsRoot
from .plan import PreconditionError

CPU_ONLINE = "/sys/devices/system/cpu/online"
NODE_HAS_MEMORY = "/sys/devices/system/node/has_memory"
NODE_ONLINE = "/sys/devices/system/node/online"


def _cpus(text: Optional[str]) -> Optional[CPUSet]:
    if text is None:
        return None
    try:
        return CPUSet.parse(text.strip())
    except ValueError:
        return None


def machine_cpus(fs: FsRoot) -> Optional[CPUSet]:
    """Online CPUs, or None when the machine does not say."""
    return _cpus(fs.read_optional(CPU_ONLINE))


def machine_mems(fs: FsRoot):
    """``(nodes that have memory, file read)``; node 0 alone on a kernel without NUMA node files."""
    for path in (NODE_HAS_MEMORY, NODE_ONLINE):
        nodes = _cpus(fs.read_optional(path))
        if nodes is not None:
            return nodes, path
    return CPUSet([0]), None


def check_cpuset_value(fs: FsRoot, path: str, name: str, value: str, parent_effective: Optional[CPUSet],
                       parent_file: Optional[str]) -> None:
    """A cpuset.cpus / cpuset.mems value: well formed, on the machine, inside the parent's set."""
    wanted = _cpus(value)
    if wanted is None:
        raise PreconditionError(fs.host_path(path), f"{value!r} is not a CPU list")
    if name.endswith("cpus"):
        have, source, what = machine_cpus(fs), CPU_ONLINE, "CPUs"
    else:
        (have, source), what = machine_mems(fs), "memory nodes"
    if have is not None:
        absent = wanted - have
        if absent:
            where = f" ({fs.host_path(source)} says {have})" if source else ""
            raise PreconditionError(fs.host_path(path), f"{what} {absent} do not exist on this machine{where}")
    if parent_effective is not None and len(parent_effective):
        outside = wanted - parent_effective
        if outside:
            raise PreconditionError(fs.host_path(path), f"{what} {outside} are outside the parent cgroup's "
                                                        f"{parent_effective} ({fs.host_path(parent_file or '')})")


def check_pid(fs: FsRoot, pid: int) -> None:
    """The process exists (under the root's ``/proc``)."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        raise PreconditionError(f"pid {pid!r}", "not a process id")
    if not fs.isdir(f"/proc/{pid}"):
        raise PreconditionError(fs.host_path(f"/proc/{pid}"), "no such process")
    if process_state(fs, pid) in _EXITED:
        raise PreconditionError(fs.host_path(f"/proc/{pid}"), "the process has exited (a zombie): nothing to change")


_EXITED = ("Z", "X", "x")  # zombie, dead: the kernel's task states of a process that has exited


def process_state(fs: FsRoot, pid: int) -> Optional[str]:
    """The state letter of ``/proc/PID/stat`` (``R``, ``S``, ``Z``, ...); None when it cannot be read."""
    text = fs.read_optional(f"/proc/{pid}/stat")
    if not text:
        return None
    fields = text[text.rfind(")") + 1:].split()  # the command name may hold spaces and parentheses
    return fields[0] if fields else None


CAP_SYS_RESOURCE = 24


def has_capability(fs: FsRoot, bit: int) -> bool:
    """Whether this process holds capability ``bit`` (``CapEff`` of ``/proc/self/status``); True off the host."""
    if not fs.is_host:
        return True  # a fake root's files need no capability
    for line in (fs.read_optional("/proc/self/status") or "").splitlines():
        if line.startswith("CapEff:"):
            try:
                return bool(int(line.split()[1], 16) >> bit & 1)
            except (IndexError, ValueError):
                return True
    return True


def check_oom_score_adj(fs: FsRoot, pid: int, value: int, current: Optional[str]) -> None:
    """Refuse a negative score lower than the current one without ``CAP_SYS_RESOURCE`` (the kernel's EACCES)."""
    try:
        now = int((current or "").strip())
    except ValueError:
        return
    if value < 0 and value < now and not has_capability(fs, CAP_SYS_RESOURCE):
        raise PreconditionError(fs.host_path(f"/proc/{pid}/oom_score_adj"),
                                f"lowering oom_score_adj from {now} to {value} needs CAP_SYS_RESOURCE, "
                                "which this process does not have")
