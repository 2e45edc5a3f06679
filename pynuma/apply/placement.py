"""CPU and memory-node placements of containers, read from the kubelet's checkpoints in ``--state-dir``.

``cpu_manager_state`` gives a container its exclusive CPUs, or the shared
pool (``defaultCpuSet``) when it has none; ``memory_manager_state`` gives
the NUMA nodes of its memory blocks.  A container absent from both gets
no cpuset of its own (it inherits its pod's).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, Optional

from ..cpuset import CPUSet
from ..pod import Pod
from ..state import cpu_checkpoint, memory_checkpoint


@dataclass(frozen=True)
class Placement:
    """A container's CPUs and memory nodes (None = no decision, inherit)."""

    cpus: Optional[CPUSet] = None
    mems: Optional[CPUSet] = None
    source: str = ""


def _memory_nodes(blocks) -> Optional[CPUSet]:
    nodes = set()
    for b in blocks or ():
        nodes.update(b.numa_affinity or ())
    return CPUSet(sorted(nodes)) if nodes else None


def placements_from_state(state_dir: Optional[str], pod: Pod) -> Dict[str, Placement]:
    """``{container name: Placement}`` for every app and init container of ``pod``.

    A missing checkpoint file means that manager decided nothing (the
    kubelet starts from an empty state); a corrupt one is an error naming it.
    """
    names = [c.name for c in pod.all_containers()]
    if state_dir is None:
        return {n: Placement() for n in names}
    cpu = cpu_checkpoint.read_file(cpu_checkpoint.default_path(state_dir), missing_ok=True)
    mem_path = memory_checkpoint.default_path(state_dir)
    mem = memory_checkpoint.read_checkpoint(mem_path) if os.path.exists(mem_path) else None
    shared = cpu.default if len(cpu.default) else None
    out: Dict[str, Placement] = {}
    for name in names:
        exclusive = cpu.assignments.get(pod.uid, {}).get(name)
        cpus = exclusive if exclusive is not None else shared
        mems = _memory_nodes(mem.state.blocks(pod.uid, name)) if mem is not None else None
        how = []
        if exclusive is not None:
            how.append("exclusive CPUs from cpu_manager_state")
        elif shared is not None:
            how.append("shared pool from cpu_manager_state")
        if mems is not None:
            how.append("NUMA nodes from memory_manager_state")
        out[name] = Placement(cpus, mems, ", ".join(how))
    return out
