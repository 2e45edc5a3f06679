"""``NodeAgent``: the node's runtime -- topology, managers, eviction cycle, status, Lease, sinks.

Step by step::

    agent = NodeAgent(root="/", config="/var/lib/kubelet/config.yaml", state_dir="/var/lib/pynuma")
    report = agent.admit(pod)        # Topology / CPU / Memory Managers, checkpoints written
    result = agent.sync()            # one eviction cycle
    status, lease = agent.status(), agent.lease()

On a background thread (``start()`` / ``stop()``) or under asyncio
(``await agent.run()``), :meth:`NodeAgent.step` is called whenever
something is due: the Lease every ``nodeStatusUpdateFrequency``, an
eviction cycle every ``sync_frequency_s``, the status when it changed or
``nodeStatusReportFrequency`` passed, the NodeResourceTopology when it
changed.  The agent never touches process-wide state (signals, GC, exit,
the default Prometheus registry).
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Any, Iterable, List, Mapping, Optional, Union

from ..fsroot import FsRoot
from ..pod import Pod
from .ledger_admission import open_admission
from .conditions import ConditionTracker
from .config import AgentConfig, as_agent_config
from .election import LeaseLock
from .lease import Lease
from .loop import Runner
from .publisher import Publisher
from .status import NodeStatus, build_status, node_allocatable, node_capacity
from .sync import EvictAction, EvictionCycle, SyncResult


def topology_key(topology) -> tuple:
    """What makes two discoveries the same machine for the agent (free memory and free pages aside)."""
    d = topology.distances
    return (str(topology.online_cpus),
            tuple((n.id, str(n.cpus), n.memory_total, tuple((kb, p.total) for kb, p in sorted(n.hugepages.items())))
                  for n in topology.numa_nodes),
            None if d is None else (d.nodes, d.matrix))


class NodeAgent(Runner):
    """A node agent over ``root`` (``"/"`` or a saved dump), with checkpoints and the Lease in ``state_dir``.

    Thread-safe: every public method may be called from any thread at any
    time; one re-entrant lock serialises what changes state (admission,
    eviction cycles, Lease renewal, publishing).  ``evict(pod, reason,
    message)`` is called, under that lock, for each pod an eviction cycle
    decides to evict; it may call :meth:`release`.  ``identity`` (default:
    the node name) is who holds the Lease: replicas of one agent give
    different identities and only the holder syncs and publishes.
    """

    def __init__(self, root: str = "/", config: Union[AgentConfig, str, None] = None,
                 state_dir: Optional[str] = None, node_name: Optional[str] = None, *,
                 sinks: Iterable[Any] = (), evict: Optional[EvictAction] = None, identity: Optional[str] = None,
                 kubelet_version: str = "") -> None:
        from ..discover import discover
        from .nodeinfo import node_name as name_of_node

        super().__init__()
        self.config = as_agent_config(config)
        self._fs = FsRoot(root)
        try:
            if state_dir is not None:
                os.makedirs(state_dir, exist_ok=True)
            self.root, self.state_dir = root, state_dir
            self.node_name = name_of_node(self._fs, node_name, labelled=True)
            self.identity = identity or self.node_name
            self.kubelet_version = kubelet_version
            self._lock = threading.RLock()
            self._topology = discover(self._fs)
            capacity = node_capacity(self._fs, self._topology, self.config)
            allocatable = node_allocatable(capacity, self.config)  # refuses a reservation above capacity
            self._admission = open_admission(self._topology, self.config, state_dir, capacity, allocatable)
        except BaseException:
            self._fs.close()
            raise
        self._cycle = EvictionCycle()
        self._conditions = ConditionTracker()
        lease_path = os.path.join(state_dir, f"lease-{self.node_name}.json") if state_dir else None
        self._lease_lock = LeaseLock(lease_path, self.node_name, self.config.node_lease_duration_s)
        self._evict = evict
        self._last_sync: Optional[SyncResult] = None
        self._last_status: Optional[NodeStatus] = None
        self._lease: Optional[Lease] = None
        self._held = False
        self._sync_error: Optional[str] = None
        self.errors: deque = deque(maxlen=32)  # (time, where, message) of sink and cycle failures
        self.publisher = Publisher(self)
        for sink in sinks:
            self.add_sink(sink)

    # -- properties -------------------------------------------------------------------------------
    @property
    def topology(self):
        """The discovered topology (replaced by :meth:`refresh_topology`)."""
        return self._topology

    @property
    def is_leader(self) -> bool:
        """Whether this agent held the Lease at its last renewal and still does by the clock."""
        with self._lock:
            return self._held and self._lease is not None and self._lease.held_by(self.identity, time.time())

    @property
    def last_sync(self) -> Optional[SyncResult]:
        return self._last_sync

    @property
    def last_status(self) -> Optional[NodeStatus]:
        return self._last_status

    def add_sink(self, sink: Any) -> None:
        """Publish to ``sink`` too (see :mod:`pynuma.agent.sinks`)."""
        self.publisher.add(sink)

    def admitted(self) -> List[Pod]:
        """Pods admitted and not released, in admission order."""
        with self._lock:
            return self._admission.admitted()

    # -- admission ----------------------------------------------------------------------------------
    def admit(self, pod: Union[Pod, Mapping], tolerations=()):
        """Admit a pod (a :class:`~pynuma.pod.Pod` or a manifest dict): an :class:`~pynuma.policy.admit.AdmitReport`.

        The pod is taken as the API server hands it to the kubelet (:meth:`~pynuma.pod.Pod.defaulted`).
        """
        pod = (pod if isinstance(pod, Pod) else Pod.from_dict(pod)).defaulted()
        with self._lock:
            pressure = self._last_sync.conditions if self._last_sync else ()
            report = self._admission.admit(pod, pressure, tolerations)
        if report.admit:
            self.wake()  # available resources changed: republish the topology now
        return report

    def release(self, pod_uid: str) -> bool:
        """Free what ``pod_uid`` holds (exclusive CPUs, memory blocks); whether it held anything."""
        with self._lock:
            held = self._admission.release(pod_uid)
        if held:
            self.wake()
        return held

    # -- the eviction cycle -----------------------------------------------------------------------------
    def sync(self, now: Optional[float] = None) -> SyncResult:
        """One eviction cycle (observe, thresholds, conditions, ranking, the pod to evict and why)."""
        from ..policy.eviction.manager import Decision

        with self._lock:
            before = self._last_sync.conditions if self._last_sync else ()
            try:
                self._admission.refresh()  # pods admitted or released by other processes sharing the ledger
                result = self._cycle.run(self._fs, self.config, self._admission.admitted(), now, self._evict)
                self._sync_error = None
            except Exception as err:  # a cycle that cannot read the node makes it NotReady, not the agent dead
                t = time.time() if now is None else now
                self._sync_error = f"eviction cycle failed: {err}"
                self.errors.append((t, "sync", self._sync_error))
                result = SyncResult(t, 0.0, Decision(conditions=before), error=self._sync_error)
            self._last_sync = result
        if result.conditions != before or result.error:
            self.wake()  # a condition changed: publish the status now, not at the next report
        return result

    # -- status, lease, topology -------------------------------------------------------------------------
    def status(self, now: Optional[float] = None) -> NodeStatus:
        """The node status at ``now``: capacity, allocatable, conditions, system info, addresses."""
        with self._lock:
            t = time.time() if now is None else now
            pressure = self._last_sync.conditions if self._last_sync else ()
            conditions = self._conditions.update(pressure, self._sync_error, t)
            self._last_status = build_status(self._fs, self._topology, self.config, self.node_name, conditions, t,
                                             self.kubelet_version)
            return self._last_status

    def lease(self, now: Optional[float] = None) -> Lease:
        """Renew (or take) the Lease and publish it; the Lease as it stands (another holder's when not held)."""
        with self._lock:
            t = time.time() if now is None else now
            mine = self._lease_lock.try_acquire_or_renew(self.identity, t)
            self._held = mine is not None
            self._lease = mine if mine is not None else (self._lease_lock.get() or Lease(self.node_name))
            if self._held:
                self.publisher.lease(self._lease)
            return self._lease

    def release_lease(self) -> bool:
        """Give the Lease up now (a standby takes over at once instead of after expiry)."""
        with self._lock:
            released = self._lease_lock.release(self.identity)
            self._held = False
            return released

    def nrt(self) -> dict:
        """The NodeResourceTopology object: zones per NUMA node, available after exclusive holdings."""
        from ..export.nrt import Holdings, build_nrt, reserved_memory_by_node

        with self._lock:
            a = self._admission
            holdings = Holdings(a.reserved_cpus(), a.exclusive_cpus(), reserved_memory_by_node(self.config.reserved_memory),
                                a.memory_tables())
            return build_nrt(self._topology, self.node_name, self.config.topology_manager_policy,
                             self.config.topology_manager_scope, holdings)

    def refresh_topology(self) -> bool:
        """Discover again (CPU hotplug, a changed cpuset); whether the machine changed.

        The managers are rebuilt over the new machine with the state they
        hold (the kubelet's checks apply: a state that no longer fits raises
        :class:`~pynuma.errors.CheckpointError` and the old machine stays).
        """
        from ..discover import discover

        with self._lock:
            topology = discover(self._fs)
            if topology_key(topology) == topology_key(self._topology):
                return False
            capacity = node_capacity(self._fs, topology, self.config)
            allocatable = node_allocatable(capacity, self.config)
            self._admission.flush()
            fresh = open_admission(topology, self.config, self.state_dir, capacity, allocatable)
            if self.state_dir is None:
                fresh.cpu_state, fresh.memory = self._admission.cpu_state, self._admission.memory
                fresh.cpu_policy.start(fresh.cpu_state)
                fresh.pods = dict(self._admission.pods)
            self._admission.close()
            self._admission, self._topology = fresh, topology
        self.wake()
        return True

    # -- one step of the loop -------------------------------------------------------------------------------
    def step(self, now: Optional[float] = None) -> float:
        """Do what is due at ``now`` (lease, cycle, publishing); when the next thing is due."""
        with self._lock:
            t = time.time() if now is None else now
            return self.publisher.step(t)

    def flush(self) -> None:
        """Write the checkpoints now (they are also written at every admit and release)."""
        with self._lock:
            self._admission.flush()

    def close(self) -> None:
        """Stop the loop if it runs, flush checkpoints and close the root (the agent is done)."""
        self.stop()
        self.flush()
        self._admission.close()
        self._fs.close()

    def __enter__(self) -> "NodeAgent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"NodeAgent(root={self.root!r}, node_name={self.node_name!r}, state_dir={self.state_dir!r})"
