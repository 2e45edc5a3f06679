"""``pynuma admit``'s accounting: fit first, then the managers, committed through the ledger.

With ``--state-dir`` and ``--commit`` (or a ledger already in the state
dir) the whole admission runs inside one ledger transaction: the CPU,
Memory and device managers start from the ledger's view, each pod is
fitted, placed and entered in turn, and the transaction commits only when
every pod was admitted and ``--commit`` was given.  So concurrent ``admit
--commit`` runs on one state dir never lose a pod or hand a CPU out twice,
and ``cpu_manager_state`` / ``memory_manager_state`` are regenerated from
the ledger under its lock.  A state dir holding kubelet checkpoint files
but no ledger yet has its files imported when the ledger is created.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

from ..errors import CheckpointError
from ..ledger.managers import import_files, memory_config, placement_of, read_files
from . import _ledger as L



class _Rollback(Exception):
    """Leave the transaction without committing (a pod was rejected, or no --commit)."""


def allocatable_for(args, topo) -> Tuple[Dict[str, Any], bool, Tuple[str, ...]]:
    """``(allocatable, partial, unknown)``: --allocatable, else discovered, else from the topology file (partial).

    A machine that does not tell its CPU count or memory (a saved topology;
    a dump without ``cpu/online`` or ``/proc/meminfo``) has them from its
    online CPUs and NUMA nodes, the same way for both, so ``--root DUMP``
    and ``--topology`` of the dump saved agree.
    What is still unknown (ephemeral-storage of a dump) is not checked.
    """
    if args.allocatable:
        return L.parse_allocatable(args.allocatable), False, ()
    if not args.topology:
        alloc, _ = L.discovered_allocatable(args.root or "/", args.max_pods)
        alloc.setdefault("cpu", len(topo.cpus()))  # no cpu/online file: the CPUs discovery found online
        if "memory" not in alloc:
            from ..state.machine import machine_for

            alloc.update(_node_memory(machine_for(None, args.root or "/")))
        return alloc, False, tuple(r for r in L.CORE if r not in alloc)
    L.check_max_pods(args.max_pods)
    alloc: Dict[str, Any] = {"cpu": len(topo.cpus()), "pods": args.max_pods}
    try:
        from ..inputfile import load_json
        from ..policy.memorymanager.manager import machine_from_topology_json

        machine = machine_from_topology_json(load_json(args.topology))
    except Exception:  # a CPU-only topology file: memory is simply not known
        return alloc, True, ()
    alloc.update(_node_memory(machine))
    return alloc, True, ()


def _node_memory(machine) -> Dict[str, Any]:
    """Allocatable memory and hugepages of NUMA nodes: their sum less hugepages and the default 100Mi."""
    from ..hugepages.resources import resource_name_for_kb
    from ..quantity import Quantity

    huge: Dict[str, int] = {}
    for node in machine:
        for kb, pages in node.hugepages:
            huge[resource_name_for_kb(kb)] = huge.get(resource_name_for_kb(kb), 0) + kb * 1024 * pages
    total = sum(n.memory for n in machine)
    if not total:  # the machine did not say (a dump without meminfo): memory is not checked, never taken as 0
        return {k: Quantity(v, "BinarySI") for k, v in huge.items()}
    memory = total - sum(huge.values()) - (100 << 20)  # default memory.available<100Mi
    out: Dict[str, Any] = {"memory": Quantity(max(memory, 0), "BinarySI")}
    out.update({k: Quantity(v, "BinarySI") for k, v in huge.items()})
    return out


def fit_report(pod, result) -> Dict[str, Any]:
    """An admit report for a pod refused by fit (the managers never saw it)."""
    return {"pod": pod.name, "policy": None, "scope": None, "admit": False, "reason": result.reason,
            "message": result.message, "containers": [], "fit": result.to_json()}


def admit_one(pod, node, manager, cpu, memory, devices) -> Tuple[Dict[str, Any], bool]:
    """Fit first, then the Topology / CPU / Memory / device managers; ``(report, admitted)``."""
    from ..ledger.fit import fit
    from ..policy.admit import admit_pod

    result = fit(pod, node)
    if not result.fits:
        return fit_report(pod, result), False
    report = admit_pod(pod, manager, cpu, memory, devices).to_json()
    return report, report["admit"]


def _configure(tx, args, policy, memory, inventory, allocatable) -> None:
    cfg = tx.view.config
    want_cpus = policy.all_cpus() if args.cpu_policy == "static" else None
    if cfg.cpu_policy is not None and (cfg.cpu_policy != args.cpu_policy or cfg.cpus != want_cpus):
        raise CheckpointError(f"{tx.view and args.state_dir}: the ledger was set up for CPU policy "
                              f"{cfg.cpu_policy} over CPUs {cfg.cpus}; this admission uses {args.cpu_policy} over "
                              f"{want_cpus} (drain the node and remove the state, as for the kubelet)")
    mem = memory_config(memory)
    if cfg.memory and mem and cfg.memory != mem:
        raise CheckpointError(f"{args.state_dir}: the ledger's Memory Manager machine or reservation differs "
                              f"from this admission's")
    changes: Dict[str, Any] = {}
    if cfg.cpu_policy is None:
        changes.update(cpu_policy=args.cpu_policy, cpus=want_cpus)
    if mem and not cfg.memory:
        changes["memory"] = mem
    if inventory is not None and not cfg.devices:
        changes["devices"] = [{"resource": d.resource, "id": d.id, "numa": list(d.numa), "healthy": d.healthy}
                              for devs in inventory.devices.values() for d in devs.values()]
    alloc, partial, unknown = allocatable
    if cfg.allocatable is None:
        changes.update(partial=partial, unknown=list(unknown))
        tx.configure(alloc, **changes)
    elif changes:
        tx.configure(None, **changes)


def admit_with_ledger(args, pods, manager, policy, memory, inventory, allocatable,
                      providers) -> Tuple[List[Dict[str, Any]], bool]:
    """Admit ``pods`` inside one ledger transaction; ``(reports, committed)``."""
    from ..policy.cpumanager.static_policy import CPUState

    state_dir = args.state_dir
    fresh = not os.path.exists(L.ledger_path(state_dir))
    files = read_files(state_dir, args.cpu_policy, memory) if fresh else (None, None)
    reports: List[Dict[str, Any]] = []
    committed = False
    with L.open_ledger(state_dir) as ledger:
        try:
            with ledger.transaction() as tx:
                if fresh:
                    import_files(tx, *files)
                _configure(tx, args, policy, memory, inventory, allocatable)
                view = tx.view
                state = view.cpu_state() if args.cpu_policy == "static" else CPUState()
                policy.start(state)
                if memory is not None:
                    from ..ledger.checkpoints import memory_state

                    memory.state = memory.policy.start(memory_state(view))
                if inventory is not None:
                    inventory.allocated = view.device_allocations()
                devices = providers(inventory)
                for pod in pods:
                    report, ok = admit_one(pod, tx.view.node_state(), manager, (policy, state), memory, devices)
                    reports.append(report)
                    if ok:
                        tx.assume(pod, placement=placement_of(pod, (policy, state), memory, devices), bind=True,
                                  check_fit=False)
                if not (args.commit and all(r["admit"] for r in reports)):
                    raise _Rollback()
                committed = True
        except _Rollback:
            pass
    return reports, committed
