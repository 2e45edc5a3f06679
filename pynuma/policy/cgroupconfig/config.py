"""``ResourceConfig``: the settings one cgroup should carry, independent of cgroup version.

Mirrors the kubelet's ``cm.ResourceConfig``: ``None`` in a field means
"leave it alone" (Go ``nil``), which is different from 0.  The writers in
:mod:`pynuma.apply` turn it into v1 or v2 files.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Mapping, Optional


@dataclass(frozen=True)
class ResourceConfig:
    """What to write to one cgroup.

    ``cpu_quota`` is in µs (-1 = unlimited), ``cpu_period`` in µs;
    ``memory`` is the limit in bytes (-1 = unlimited); ``hugepage_limits``
    maps page size in bytes to a limit in bytes; ``unified`` holds cgroup v2
    files written as they are (``memory.min`` -> ``"104857600"``);
    ``cpuset_cpus`` / ``cpuset_mems`` are cpulists.
    """

    cpu_shares: Optional[int] = None
    cpu_quota: Optional[int] = None
    cpu_period: Optional[int] = None
    memory: Optional[int] = None
    hugepage_limits: Optional[Dict[int, int]] = None
    pids_limit: Optional[int] = None
    unified: Optional[Dict[str, str]] = None
    cpuset_cpus: Optional[str] = None
    cpuset_mems: Optional[str] = None

    def with_changes(self, **changes) -> "ResourceConfig":
        """A copy with some fields replaced."""
        return replace(self, **changes)

    def with_unified(self, extra: Mapping[str, str]) -> "ResourceConfig":
        """A copy whose unified settings also hold ``extra``."""
        merged = dict(self.unified or {})
        merged.update(extra)
        return replace(self, unified=merged)

    def to_dict(self) -> dict:
        """JSON-ready form; hugepage sizes become decimal-string keys."""
        out = {}
        for name in ("cpu_shares", "cpu_quota", "cpu_period", "memory"):
            out[name] = getattr(self, name)
        out["hugepage_limits"] = (None if self.hugepage_limits is None
                                  else {str(k): v for k, v in sorted(self.hugepage_limits.items())})
        out["pids_limit"] = self.pids_limit
        out["unified"] = None if self.unified is None else dict(sorted(self.unified.items()))
        out["cpuset_cpus"] = self.cpuset_cpus
        out["cpuset_mems"] = self.cpuset_mems
        return out


EMPTY = ResourceConfig()


__all__ = ["ResourceConfig", "EMPTY"]
