"""One eviction cycle of the agent: observe the node, run the eviction manager, act through a callback.

:func:`observe` reads the eviction signals (``/proc/meminfo``, root and
kubepods cgroups, ``statvfs`` of nodefs / imagefs, pid limits) and walks
the pod cgroups; pods the agent admitted keep their specs (priority,
requests) for ranking, pods found only in cgroups rank on usage alone.
The decision is the kubelet's (:func:`pynuma.policy.eviction.manager.synchronize`);
acting on it is the embedder's ``evict(pod, reason, message) -> outcome``
callable (default: none, the decision only).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..fsroot import FsRoot
from ..pod import Pod
from ..policy.eviction.manager import Decision, EvictionConfig, EvictionState, Eviction, FsLayout, NodeStats, \
    synchronize
from ..policy.eviction.messages import REASON

#: ``evict(pod, reason, message) -> outcome``; the outcome is kept in :attr:`SyncResult.outcomes`
EvictAction = Callable[[Pod, str, str], Any]


@dataclass(frozen=True)
class SyncResult:
    """What one cycle saw and decided, and what the eviction callback returned."""

    time: float
    duration_s: float
    decision: Decision
    pods: int = 0
    containers: int = 0
    outcomes: Tuple[Any, ...] = ()
    warnings: Tuple[str, ...] = ()
    error: Optional[str] = None

    @property
    def conditions(self) -> Tuple[str, ...]:
        """Pressure conditions the node reports after this cycle."""
        return tuple(self.decision.conditions)

    @property
    def evicted(self) -> Tuple[Eviction, ...]:
        return tuple(self.decision.evicted)

    def to_json(self) -> dict:
        d = self.decision
        return {"time": self.time, "duration_s": self.duration_s, "conditions": list(self.conditions),
                "observations": {s: o.to_dict() for s, o in d.observations.items()},
                "met": [str(t) for t in d.met], "signal": d.signal, "resource": d.resource,
                "ranked": list(d.ranked), "evicted": [e.to_dict() for e in d.evicted],
                "outcomes": [repr(o) for o in self.outcomes], "pods": self.pods, "containers": self.containers,
                "warnings": list(self.warnings), "error": self.error}


def eviction_config(config, dedicated_image_fs: bool = False) -> EvictionConfig:
    """The eviction manager's configuration from an agent / kubelet configuration."""
    return EvictionConfig(tuple(config.thresholds()), config.eviction_max_pod_grace_period_s,
                          config.eviction_pressure_transition_period_s, config.local_storage_capacity_isolation,
                          FsLayout(dedicated_image_fs, False),
                          config.feature_gates.get("KubeletSeparateDiskGC", True))


@dataclass
class Observed:
    """One observation of the node: stats, the pods to rank, counts and warnings."""

    stats: NodeStats
    pods: List[Pod]
    containers: int
    dedicated_image_fs: bool
    warnings: Tuple[str, ...] = ()
    termination_grace_s: Dict[str, int] = field(default_factory=dict)


def observe(fs: FsRoot, config, admitted: Sequence[Pod], now: float) -> Observed:
    """Read the signals and pod cgroups; admitted pods first, cgroup-only pods after."""
    from ..policy.eviction.podstats import stats_from_cgroups
    from ..pressure.host import read_host

    reading = read_host(fs, config.kubelet_root, config.image_dir, None, now=now, walk=True)
    pods, stats = stats_from_cgroups(reading.pods, admitted)
    containers = sum(len(cg.containers) for cg in reading.pods)
    return Observed(NodeStats(reading.observations, stats), pods, containers, reading.dedicated_image_fs,
                    tuple(reading.warnings))


class EvictionCycle:
    """The eviction manager's state between cycles and the pods still terminating after an eviction."""

    def __init__(self) -> None:
        self.state = EvictionState()
        self.terminating: Dict[str, bool] = {}  # uid -> evicted by a hard threshold
        self.cycles = 0
        self.evictions: Dict[str, int] = {}  # signal (or "local-storage") -> pods decided for eviction

    def run(self, fs: FsRoot, config, admitted: Sequence[Pod], now: Optional[float],
            evict: Optional[EvictAction] = None) -> SyncResult:
        started = time.perf_counter()
        t = time.time() if now is None else now
        seen = observe(fs, config, admitted, t)
        cfg = eviction_config(config, seen.dedicated_image_fs)
        active = {p.uid for p in seen.pods}
        self.terminating = {uid: hard for uid, hard in self.terminating.items() if uid in active}
        self.state, decision = synchronize(cfg, self.state, seen.stats, seen.pods, t,
                                           termination_grace_s=seen.termination_grace_s,
                                           terminating=self.terminating)
        self.cycles += 1
        outcomes = []
        by_uid = {p.uid: p for p in seen.pods}
        for ev in decision.evicted:
            key = ev.signal or "local-storage"
            self.evictions[key] = self.evictions.get(key, 0) + 1
            if evict is None:
                continue
            try:
                outcomes.append(evict(by_uid[ev.uid], REASON, ev.message))
            except Exception as err:  # the embedder's action failed: keep it as the outcome, stay alive
                outcomes.append(err)
            self.terminating[ev.uid] = ev.hard
        warnings = seen.warnings + ((self.state.warning,) if self.state.warning else ())
        return SyncResult(t, time.perf_counter() - started, decision, len(seen.pods), seen.containers,
                          tuple(outcomes), warnings)
