"""``take_by_topology``: the static policy's CPU pick for a set of option flags.

Packed (:mod:`.assign`) unless ``distribute-cpus-across-numa`` asks for the
distributed pick (:mod:`.distribute`); the one place that chooses, so neither
algorithm module needs the other's entry point.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> take_by_topology(topo, topo.cpus(), 4, {"full-pcpus-only": True})  # doctest: +SKIP
"""
from __future__ import annotations

from typing import Mapping, Optional

from ...cpuset import CPUSet
from .assign import take_packed
from .distribute import take_distributed
from .topology import CPUTopology


def take_by_topology(topo: CPUTopology, available, count: int, options: Optional[Mapping] = None) -> CPUSet:
    """Pick ``count`` CPUs as the static policy does for the given option flags.

    ``options`` keys are the kubelet option names with boolean values
    (absent = off); ``cpu_group_size`` overrides the distributed group size,
    which is otherwise CPUs-per-core with ``full-pcpus-only`` and 1 without.
    """
    opts = options or {}
    if count < 0:
        raise ValueError(f"negative CPU count {count}")
    spread = bool(opts.get("distribute-cpus-across-cores"))
    if opts.get("distribute-cpus-across-numa"):
        group = opts.get("cpu_group_size")
        if group is None:
            group = topo.cpus_per_core() if opts.get("full-pcpus-only") else 1
        return take_distributed(topo, available, count, max(int(group), 1), spread)
    return take_packed(topo, available, count, spread, bool(opts.get("prefer-align-cpus-by-uncorecache")))

