"""Admission through the node's ledger (``pynuma.ledger``): the agent's accounting shared with every process.

With a ``state_dir`` the agent keeps no allocation of its own: each
admission is one ledger transaction -- the managers start from the
ledger's view, the pod is fitted against node allocatable (the kubelet's
``NodeResourcesFit`` predicate), placed by the Topology / CPU / Memory
Managers and entered bound with its exclusive CPUs and memory blocks; the
kubelet checkpoint files are regenerated from the ledger under its lock.
So ``pynuma admit --commit``, other agents' replicas and this agent never
hand a CPU out twice.  Existing checkpoint files of a state dir without a
ledger are imported on first use.
"""
from __future__ import annotations

import os
from typing import List, Mapping, Optional, Sequence

from ..cpuset import CPUSet
from ..errors import CheckpointError
from ..pod import Pod
from ..policy.admit import AdmitReport, admit_pod
from .admission import Admission


class LedgerAdmission(Admission):
    """:class:`Admission` whose state lives in the SQLite ledger of ``state_dir``."""

    def __init__(self, topology, config, state_dir: str, capacity, allocatable) -> None:
        from ..ledger.managers import import_files, read_files
        from ..ledger.store import DB_NAME, Ledger

        path = os.path.join(state_dir, DB_NAME)
        fresh = not os.path.exists(path)
        super().__init__(topology, config, None, capacity)  # managers over empty state, no files read
        self.state_dir = state_dir
        files = read_files(state_dir, config.cpu_manager_policy, self.memory) if fresh else (None, None)
        self.ledger = Ledger(path, checkpoint_dir=state_dir)
        try:
            with self.ledger.transaction() as tx:
                if fresh:
                    import_files(tx, *files)
                self._configure(tx, allocatable)
                self._load(tx.view)
        except BaseException:
            self.ledger.close()
            raise
        self.pods = {e.uid: Pod(name=e.name, namespace=e.namespace, uid=e.uid) for e in tx.view.entries}

    def _configure(self, tx, allocatable) -> None:
        from ..ledger.managers import memory_config

        cfg = tx.view.config
        policy = self.config.cpu_manager_policy
        cpus = self.cpu_policy.all_cpus() if policy == "static" else None
        if cfg.cpu_policy is not None and (cfg.cpu_policy != policy or cfg.cpus != cpus):
            raise CheckpointError(f"{self.state_dir}: the ledger was set up for CPU policy {cfg.cpu_policy} over "
                                  f"CPUs {cfg.cpus}; this agent runs {policy} over {cpus} (drain the node and "
                                  f"remove the state, as for the kubelet)")
        memory = memory_config(self.memory)
        if cfg.memory and memory and cfg.memory != memory:
            raise CheckpointError(f"{self.state_dir}: the ledger's Memory Manager machine or reservation differs "
                                  f"from this agent's")
        changes = {}
        if cfg.cpu_policy is None:
            changes.update(cpu_policy=policy, cpus=cpus)
        if memory and not cfg.memory:
            changes["memory"] = memory
        # node allocatable follows the machine (a reservation or hotplug changes it)
        tx.configure(dict(allocatable), **changes)

    def _load(self, view) -> None:
        """Managers' states as the ledger's view implies them."""
        from ..ledger.checkpoints import memory_state
        from ..policy.cpumanager.static_policy import CPUState

        state = view.cpu_state() if self.config.cpu_manager_policy == "static" else CPUState()
        self.cpu_policy.start(state)
        self.cpu_state = state
        if self.memory is not None:
            self.memory.state = self.memory.policy.start(memory_state(view))

    def admit(self, pod: Pod, conditions: Sequence[str] = (), tolerations: Sequence[Mapping] = ()) -> AdmitReport:
        from ..ledger.managers import placement_of
        from ..ledger.fit import fit
        from ..policy.eviction.admission import admit as pressure_admit

        report = AdmitReport(pod.name, self.topology_manager.policy.name, self.topology_manager.scope)
        verdict = pressure_admit(pod, list(conditions), tolerations)
        if not verdict.admit:
            report.admit, report.reason, report.message = False, verdict.reason, verdict.message
            return report
        with self.ledger.transaction() as tx:
            view = tx.view
            self._load(view)
            if view.entry(pod.uid) is not None:
                report.admit, report.reason = False, "AlreadyAdmitted"
                report.message = f"pod {pod.uid} is already admitted on this node"
                return report
            result = fit(pod, view.node_state())
            if not result.fits:
                report.admit, report.reason, report.message = False, result.reason, result.message
                return report
            report = admit_pod(pod, self.topology_manager, (self.cpu_policy, self.cpu_state), self.memory)
            if report.admit:
                tx.assume(pod, placement=placement_of(pod, (self.cpu_policy, self.cpu_state), self.memory, None),
                          bind=True, check_fit=False)
            self._load(tx.view)  # a rejected pod's partial allocation is dropped with the view
        if report.admit:
            self.pods[pod.uid] = pod
        return report

    def release(self, pod_uid: str) -> bool:
        from ..ledger.errors import NotInLedger

        self.pods.pop(pod_uid, None)
        try:
            self.ledger.release(pod_uid)
        except NotInLedger:
            return False
        self._load(self.ledger.snapshot())
        return True

    def refresh(self) -> None:
        """Pick up what other processes committed (pods admitted or released elsewhere)."""
        view = self.ledger.snapshot()
        self._load(view)
        known = {e.uid for e in view.entries}
        self.pods = {uid: p for uid, p in self.pods.items() if uid in known}
        for e in view.entries:
            self.pods.setdefault(e.uid, Pod(name=e.name, namespace=e.namespace, uid=e.uid))

    def flush(self) -> None:
        """Files behind the ledger (a writer killed mid-way) are rewritten."""
        self.ledger.sync_checkpoints()

    def exclusive_cpus(self) -> CPUSet:
        return self.ledger.snapshot().cpu_state().assigned()

    def admitted(self) -> List[Pod]:
        return list(self.pods.values())

    def close(self) -> None:
        self.ledger.close()

    def totals(self) -> Mapping[str, float]:
        """What the ledger's pods request (cpu in cores, bytes, counts), for metrics."""
        return {k: float(q.amount) for k, q in self.ledger.requested().items()}


def open_admission(topology, config, state_dir: Optional[str], capacity, allocatable) -> Admission:
    """The ledger-backed admission with a state dir, the in-memory one without."""
    if state_dir is None:
        return Admission(topology, config, None, capacity)
    return LedgerAdmission(topology, config, state_dir, capacity, allocatable)
