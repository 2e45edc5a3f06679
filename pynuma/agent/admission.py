"""The agent's seam to admission: Topology, CPU and Memory Managers, in memory.

``admit(pod, conditions)`` runs the eviction manager's admission check
(node pressure), then the Topology Manager with the CPU and Memory Managers
as hint providers; a rejected pod leaves the managers exactly as they were.
``release(uid)`` frees what a pod holds.  With a state dir the agent uses
:class:`~pynuma.agent.ledger_admission.LedgerAdmission` instead (the node's
ledger, shared with every process); this class then only builds the
managers.  Nothing here locks: the agent holds its lock around every call.
"""
from __future__ import annotations

import math
import os
from typing import Dict, List, Mapping, Optional, Sequence

from ..cpuset import CPUSet
from ..errors import InputError
from ..pod import Pod
from ..policy.admit import AdmitReport, admit_pod

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


def reserved_cpu_count(config) -> int:
    """CPUs the static policy keeps back: ceil(kube-reserved + system-reserved cpu), as the kubelet counts."""
    total = sum((q.amount for q in (config.reserved("kube").get("cpu"), config.reserved("system").get("cpu"))
                 if q is not None), 0)
    return int(math.ceil(total))


def memory_reservation(config, capacity) -> Dict[str, object]:
    """Node-allocatable reservation per memory type (what ``reservedMemory`` must add up to)."""
    from ..policy.allocatable import node_allocatable_reservation

    kube, system = config.effective_reserved()
    reservation = node_allocatable_reservation(capacity, kube, system, config.hard_thresholds())
    return {k: v for k, v in reservation.items() if k == "memory" or k.startswith("hugepages-")}


def cpu_policy_for(topology, config):
    """The CPU Manager policy the configuration asks for, with its reserved CPUs picked (static)."""
    from ..policy.cpumanager.options import parse_options
    from ..policy.cpumanager.static_policy import new_policy
    from ..policy.cpumanager.topology import CPUTopology

    cpu_topo = CPUTopology.from_topology(topology)
    if config.cpu_manager_policy != "static":
        return new_policy(config.cpu_manager_policy, cpu_topo)
    reserved = config.reserved_cpu_set() or None
    count = len(reserved) if reserved else reserved_cpu_count(config)
    return new_policy("static", cpu_topo, num_reserved=count, reserved=reserved,
                      options=parse_options(config.cpu_manager_policy_options, config.feature_gates),
                      topology_manager_policy=config.topology_manager_policy)


class Admission:
    """Admit and release pods against the node's managers; checkpoints in ``state_dir`` (``None``: in memory)."""

    def __init__(self, topology, config, state_dir: Optional[str], capacity: Mapping[str, object]) -> None:
        from ..policy.topologymanager.manager import TopologyManager
        from ..policy.topologymanager.numa_info import NUMAInfo

        self.config = config
        self.state_dir = state_dir
        d = topology.distances
        info = NUMAInfo.from_matrix(topology.node_ids, None)
        if d is not None:
            try:
                info = NUMAInfo.from_matrix(d.nodes, d.matrix)
            except ValueError:
                pass  # distances that do not cover every node: no distances, as cAdvisor without them
        self.topology_manager = TopologyManager.create(
            info, config.topology_manager_policy, config.topology_manager_scope,
            config.topology_manager_policy_options, config.feature_gates)
        self.cpu_policy, self.cpu_state = self._cpu(topology)
        self.memory = self._memory(topology, capacity)
        self.pods: Dict[str, Pod] = {}

    # -- restore -------------------------------------------------------------------------------------
    def _path(self, name: str) -> Optional[str]:
        return os.path.join(self.state_dir, name) if self.state_dir else None

    def _cpu(self, topology):
        from ..policy.cpumanager.static_policy import CPUState
        from ..state.cpu_checkpoint import read_file

        policy = cpu_policy_for(topology, self.config)
        state = CPUState()
        path = self._path(CPU_STATE)
        if path:
            restored = read_file(path, configured_policy=self.config.cpu_manager_policy, missing_ok=True)
            state = CPUState(restored.default, restored.assignments)
        policy.start(state)
        return policy, state

    def _memory(self, topology, capacity):
        from ..policy.memorymanager.manager import MemoryManager, machine_from_topology
        from ..state.memory_checkpoint import restore_manager

        policy = self.config.memory_manager_policy
        if policy.lower() == "none":
            return None
        if policy != "Static":
            raise InputError(f'memoryManagerPolicy: unknown policy "{policy}" (expected None or Static)')
        if not self.config.reserved_memory:
            raise InputError("memoryManagerPolicy Static needs reservedMemory (the kubelet requires it)")
        mm = MemoryManager.from_machine(machine_from_topology(topology), list(self.config.reserved_memory),
                                        memory_reservation(self.config, capacity))
        path = self._path(MEMORY_STATE)
        if path and os.path.exists(path):
            restore_manager(mm, path)
        return mm

    # -- admit / release -------------------------------------------------------------------------------
    def admit(self, pod: Pod, conditions: Sequence[str] = (), tolerations: Sequence[Mapping] = ()) -> AdmitReport:
        """Admit ``pod`` (pressure first, then placement); persist the allocation when admitted."""
        from ..policy.eviction.admission import admit as pressure_admit

        report = AdmitReport(pod.name, self.topology_manager.policy.name, self.topology_manager.scope)
        if pod.uid in self.pods:
            report.admit, report.reason = False, "AlreadyAdmitted"
            report.message = f"pod {pod.uid} is already admitted on this node"
            return report
        verdict = pressure_admit(pod, list(conditions), tolerations)
        if not verdict.admit:
            report.admit, report.reason, report.message = False, verdict.reason, verdict.message
            return report
        cpu_before = self.cpu_state.copy()
        mem_before = self.memory.state.copy() if self.memory is not None else None
        report = admit_pod(pod, self.topology_manager, (self.cpu_policy, self.cpu_state), self.memory)
        if not report.admit:  # undo what containers before the failing one took
            self.cpu_state.default, self.cpu_state.assignments = cpu_before.default, cpu_before.assignments
            if self.memory is not None:
                self.memory.state = mem_before
            return report
        self.pods[pod.uid] = pod
        self.flush()
        return report

    def release(self, pod_uid: str) -> bool:
        """Free every container of ``pod_uid``; whether anything was held."""
        held = pod_uid in self.pods or pod_uid in self.cpu_state.assignments
        for name in list(self.cpu_state.assignments.get(pod_uid, {})):
            self.cpu_policy.remove(self.cpu_state, pod_uid, name)
        if self.memory is not None:
            entries = (self.memory.state.assignments or {}).get(pod_uid, {})
            held = held or bool(entries)
            for name in list(entries):
                self.memory.remove(pod_uid, name)
        pod = self.pods.pop(pod_uid, None)
        if pod is not None:
            for c in pod.all_containers():
                self.cpu_policy.remove(self.cpu_state, pod_uid, c.name)
        if held:
            self.flush()
        return held

    def flush(self) -> None:
        """Write both checkpoints (atomically) when there is a state dir."""
        from ..state.cpu_checkpoint import write_file
        from ..state.memory_checkpoint import save_manager

        path = self._path(CPU_STATE)
        if path:
            write_file(path, self.config.cpu_manager_policy, self.cpu_state.default, self.cpu_state.assignments)
        if self.memory is not None and self._path(MEMORY_STATE):
            save_manager(self.memory, self._path(MEMORY_STATE))

    # -- what pods hold ---------------------------------------------------------------------------------
    def exclusive_cpus(self) -> CPUSet:
        """CPUs held exclusively by containers."""
        return self.cpu_state.assigned()

    def reserved_cpus(self) -> CPUSet:
        return getattr(self.cpu_policy, "reserved", CPUSet())

    def memory_tables(self):
        """The Memory Manager's machine state (per NUMA node and type), or ``None`` without one."""
        return None if self.memory is None else self.memory.state.machine_state

    def admitted(self) -> List[Pod]:
        return list(self.pods.values())

    def refresh(self) -> None:
        """Pick up changes made elsewhere (nothing to do for in-memory state)."""

    def close(self) -> None:
        """Release what the admission holds open (nothing for in-memory state)."""
