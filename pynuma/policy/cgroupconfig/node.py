"""The node-allocatable (``kubepods``) cgroup settings: ``--enforce-node-allocatable=pods``.

>>> from pynuma.quantity import Quantity
>>> node_allocatable_cgroup_config({"cpu": Quantity.parse("3"), "memory": Quantity.parse("4Gi")}).memory
4294967296

Rules of ``getCgroupConfig`` in ``pkg/kubelet/cm/node_container_manager_linux.go``:
the amounts enforced on ``kubepods`` (capacity minus kube- and
system-reserved, see :func:`pynuma.policy.allocatable.node_allocatable_enforced`)
become cpu shares, a memory limit, a pids limit and hugetlb limits; with
only compressible resources enforced, CPU alone.
"""
from __future__ import annotations

from typing import Mapping, Optional

from ...quantity import Quantity
from .config import ResourceConfig
from .conversions import hugepage_limits, milli_cpu_to_shares

PIDS = "pid"  # the kubelet's resource name for process ids (``pidlimit.PIDs``)


def node_allocatable_cgroup_config(resources: Optional[Mapping[str, Quantity]],
                                   compressible_resources_only: bool = False) -> Optional[ResourceConfig]:
    """The ``kubepods`` cgroup's :class:`ResourceConfig`; None when there is no resource list."""
    if resources is None:
        return None
    cpu = resources.get("cpu")
    shares = milli_cpu_to_shares(cpu.milli_value()) if cpu is not None else None
    if compressible_resources_only:
        return ResourceConfig(cpu_shares=shares)
    memory = resources.get("memory")
    pids = resources.get(PIDS)
    return ResourceConfig(cpu_shares=shares,
                          memory=memory.value() if memory is not None else None,
                          pids_limit=pids.value() if pids is not None else None,
                          hugepage_limits=hugepage_limits(resources))
