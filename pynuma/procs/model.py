"""The frozen records :func:`pynuma.processes` returns, and their JSON form."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

from .._record import Record
from ..bind.mempolicy import MemPolicy
from ..cpuset import CPUSet

#: ``types.MappingProxyType`` without importing ``types``
_Proxy = type(type.__dict__)


class ProcessPlacement(Record):
    """Where one process may run, where its threads ran, and where its memory is.

    ``cpus_allowed`` is the union of its threads' affinities and
    ``cpu_nodes`` the NUMA nodes those CPUs belong to; ``running_cpus`` /
    ``running_nodes`` are where its threads last ran.  ``memory_by_node``
    maps node id to resident bytes (``numa_maps`` pages times each mapping's
    page size); ``remote_bytes`` is the part on nodes outside ``cpu_nodes``
    and ``remote_share`` that part of the total (0 when it has no memory).
    ``policy`` is the memory policy most of its mappings follow (``None``
    when unknown).  ``user`` is the user name, or the uid as text where no
    name is known (a dump).
    """

    pid: int
    name: str
    user: Optional[str]
    uid: Optional[int]
    cmdline: Tuple[str, ...]
    kernel_thread: bool
    threads: int
    cpus_allowed: CPUSet
    cpu_nodes: CPUSet
    mems_allowed: Optional[CPUSet]
    running_cpus: CPUSet
    running_nodes: CPUSet
    memory_by_node: Mapping[int, int]
    remote_bytes: int
    remote_share: float
    policy: Optional[MemPolicy]
    cpu_seconds: Optional[float]
    rss_bytes: Optional[int]

    _fields = ("pid", "name", "user", "uid", "cmdline", "kernel_thread", "threads", "cpus_allowed", "cpu_nodes",
               "mems_allowed", "running_cpus", "running_nodes", "memory_by_node", "remote_bytes", "remote_share",
               "policy", "cpu_seconds", "rss_bytes")
    __slots__ = _fields

    @property
    def memory_bytes(self) -> int:
        """Resident bytes over every node."""
        return sum(self.memory_by_node.values())

    def to_dict(self) -> Dict[str, Any]:
        """The JSON form (``pynuma procs --json``): node ids as strings, sets as cpulists."""
        policy = self.policy
        return {
            "pid": self.pid, "name": self.name, "user": self.user, "uid": self.uid,
            "cmdline": list(self.cmdline), "kernel_thread": self.kernel_thread, "threads": self.threads,
            "cpus_allowed": str(self.cpus_allowed), "cpu_nodes": str(self.cpu_nodes),
            "mems_allowed": None if self.mems_allowed is None else str(self.mems_allowed),
            "running_cpus": str(self.running_cpus), "running_nodes": str(self.running_nodes),
            "memory_by_node": {str(n): b for n, b in sorted(self.memory_by_node.items())},
            "memory_bytes": self.memory_bytes, "remote_bytes": self.remote_bytes,
            "remote_share": self.remote_share,
            "policy": None if policy is None else policy.mode,
            "policy_nodes": None if policy is None else str(policy.nodes),
            "policy_flags": [] if policy is None else list(policy.flags),
            "cpu_seconds": self.cpu_seconds, "rss_bytes": self.rss_bytes,
        }


def frozen_mapping(values: Dict[int, int]) -> Mapping[int, int]:
    """A read-only view of ``values``, keys ascending."""
    return _Proxy(dict(sorted(values.items())))


@dataclass(frozen=True)
class Processes:
    """A listing: the processes found (``placements``) and what was skipped.

    ``vanished`` counts processes that exited while being read, ``denied``
    those whose memory map this caller may not read, ``kernel_threads``
    kernel threads left out (they have no user memory to place);
    ``missing`` lists requested pids that do not exist, ``refused`` those
    whose memory map may not be read, and ``warnings`` what was odd.
    Iterating gives the placements.
    """

    placements: Tuple[ProcessPlacement, ...]
    vanished: int
    denied: int
    kernel_threads: int
    missing: Tuple[int, ...]
    refused: Tuple[int, ...]
    warnings: Tuple[str, ...]

    def __iter__(self) -> Iterator[ProcessPlacement]:
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def __getitem__(self, index: int) -> ProcessPlacement:
        return self.placements[index]

    def replace(self, **changes: Any) -> "Processes":
        """A copy with ``changes`` applied."""
        from dataclasses import replace

        return replace(self, **changes)
