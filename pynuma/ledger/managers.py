"""Between the kubelet managers and the ledger: a pod's placement, and checkpoint files taken in.

The CPU, Memory and device managers decide; the ledger records what they
decided in the same transaction as the pod's entry.  A state directory that
holds kubelet checkpoint files but no ledger yet has its pods imported as
bound entries when the ledger is created.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


def placement_of(pod, cpu, memory, devices):
    """What the managers gave ``pod``: its exclusive CPUs, memory blocks and devices, as a ledger placement."""
    from .model import Placement

    cpus = dict(cpu[1].assignments.get(pod.uid, {})) if cpu is not None else {}
    blocks = {c: list(b) for c, b in ((memory.state.assignments or {}).get(pod.uid) or {}).items()} \
        if memory is not None else {}
    devs = {c: {r: list(ids) for r, ids in d.items()} for c, d in devices.inv.allocated.get(pod.uid, {}).items()} \
        if devices is not None else {}
    return Placement(cpus, blocks, devs)


def memory_config(mm) -> Optional[Dict[str, Any]]:
    """The Memory Manager's machine and reservations as the ledger keeps them (None without one)."""
    if mm is None:
        return None
    p = mm.policy
    return {"machine": [[n.id, n.memory, [list(h) for h in n.hugepages]] for n in p.machine],
            "reserved": {str(k): dict(v) for k, v in p.system_reserved.items()}}


def read_files(state_dir: str, cpu_policy: str, memory) -> Tuple[Any, Any]:
    """Existing kubelet checkpoints of a state dir that has no ledger yet (errors leave them untouched)."""
    from ..state.cpu_checkpoint import read_file

    cpu_path = os.path.join(state_dir, CPU_STATE)
    cpu = read_file(cpu_path, configured_policy=cpu_policy) if os.path.exists(cpu_path) else None
    mem = None
    mem_path = os.path.join(state_dir, MEMORY_STATE)
    if memory is not None and os.path.exists(mem_path):
        from ..state.memory_checkpoint import read_checkpoint

        mem = read_checkpoint(mem_path, policy=memory.policy.name)
    return cpu, mem


def import_files(tx, cpu, mem) -> int:
    """Record the pods of existing checkpoint files as bound entries; the number imported.

    Their requests are what the files show: one CPU per exclusive CPU,
    and the memory blocks' sizes.
    """
    from .model import Placement
    from ..pod import Container, Pod
    from ..quantity import Quantity

    cpus = cpu.assignments if cpu is not None else {}
    blocks = (mem.state.assignments or {}) if mem is not None else {}
    for uid in sorted(set(cpus) | set(blocks)):
        names = sorted(set(cpus.get(uid, {})) | set(blocks.get(uid) or {}))
        containers = []
        for name in names:
            req: Dict[str, Quantity] = {}
            if name in cpus.get(uid, {}):
                req["cpu"] = Quantity(len(cpus[uid][name]))
            for b in (blocks.get(uid) or {}).get(name) or []:
                req[b.type] = Quantity(b.size + (req[b.type].value() if b.type in req else 0), "BinarySI")
            containers.append(Container(name, req, dict(req)))
        placement = Placement(dict(cpus.get(uid, {})), {c: list(b or []) for c, b in (blocks.get(uid) or {}).items()})
        tx.assume(Pod(uid, uid=uid, containers=tuple(containers)), placement=placement, bind=True, check_fit=False)
    return len(set(cpus) | set(blocks))
