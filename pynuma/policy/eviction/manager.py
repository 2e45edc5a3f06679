"""One pass of the kubelet eviction manager as a pure step function.

>>> state = EvictionState()
>>> state, decision = synchronize(config, state, stats, pods, now)  # doctest: +SKIP

``stats`` holds the signal observations and per-pod usage; ``now`` is in
seconds; ``reclaim`` (optional) stands for node-level garbage collection:
it is called with the GC functions the kubelet would run (``"containers"``,
``"images"``) and returns the stats seen afterwards (``None``: unchanged).
The decision says which conditions the node reports, what was met, what
was reclaimed, how pods rank and which pod(s) are evicted with the exact
status the kubelet writes.
"""
from __future__ import annotations

from ..._dataclass import dataclass, field
from ...errors import InputError
from . import conditions as cond
from . import met
from .signals import (
    CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE, NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
)
from .thresholds import Threshold, containerfs_first_pass_thresholds, update_containerfs_thresholds

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

    from ...pod import Pod
    from .observations import Observation
    from .podstats import PodStats

# Pods, ranking and messages are imported where a pass first needs them: a pass with no pods
# and no threshold met (``pynuma eviction`` on a healthy node) loads none of them.
_REEXPORTED = {"AdmitResult": "admission", "admit": "admission", "is_critical_pod": "admission"}


def __getattr__(name: str):
    """``admit``, ``AdmitResult`` and ``is_critical_pod`` from :mod:`.admission`, as before."""
    if name in _REEXPORTED:
        from . import admission

        return getattr(admission, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

IMMEDIATE_GRACE_PERIOD_S = 1  # hard thresholds and local-storage limits (0 before v1.21-ish)
GC_CONTAINERS, GC_IMAGES = "containers", "images"
SPLIT_FS_WITHOUT_GATE = "KubeletSeparateDiskGC is turned off but we still have a split filesystem"


@dataclass(frozen=True)
class FsLayout:
    """Where images and writable layers live relative to the kubelet root filesystem."""

    dedicated_image_fs: bool = False
    container_fs_separate: bool = False


@dataclass(frozen=True)
class EvictionConfig:
    """Eviction manager configuration (thresholds already parsed)."""

    thresholds: Tuple[Threshold, ...] = ()
    max_pod_grace_period_s: int = 0
    pressure_transition_period_s: float = cond.DEFAULT_PRESSURE_TRANSITION_PERIOD_S
    local_storage_capacity_isolation: bool = True
    layout: FsLayout = FsLayout()
    separate_disk_gc: bool = True           # feature gate KubeletSeparateDiskGC (beta, on)
    pod_disruption_conditions: bool = True  # feature gate PodDisruptionConditions (GA)
    hard_grace_period_s: int = IMMEDIATE_GRACE_PERIOD_S
    allow_overwrite_termination_grace: bool = False  # feature gate AllowOverwriteTerminationGracePeriodSeconds
    # Go capacity of the kubelet's threshold slice (None: its length, a slice literal); decides which
    # containerfs overwrites the first pass sees (thresholds.threshold_config_capacity for parsed flags)
    thresholds_capacity: Optional[int] = None


@dataclass(frozen=True)
class NodeStats:
    """What one stats summary says: signal observations and per-pod usage by pod uid."""

    observations: Mapping[str, Observation] = field(default_factory=dict)
    pods: Mapping[str, PodStats] = field(default_factory=dict)


@dataclass(frozen=True)
class EvictionState:
    """What the manager remembers between passes."""

    thresholds: Optional[Tuple[Threshold, ...]] = None  # after the containerfs rewrite of the first pass
    thresholds_met: Tuple[Threshold, ...] = ()
    first_observed_at: Mapping[Threshold, float] = field(default_factory=dict)
    conditions_last_observed_at: Mapping[str, float] = field(default_factory=dict)
    node_conditions: Tuple[str, ...] = ()
    last_observations: Mapping[str, Observation] = field(default_factory=dict)
    warning: Optional[str] = None


@dataclass(frozen=True)
class Eviction:
    """One evicted pod: grace period given, message, event annotations, the status written."""

    pod: str
    namespace: str
    uid: str
    grace_period_override_s: int
    message: str
    status: Mapping
    annotations: Mapping[str, str] = field(default_factory=dict)
    signal: Optional[str] = None
    hard: bool = True  # False only for an eviction driven by a soft threshold

    def to_dict(self) -> dict:
        return {"pod": self.pod, "namespace": self.namespace, "uid": self.uid,
                "grace_period_override_s": self.grace_period_override_s, "signal": self.signal,
                "message": self.message, "status": dict(self.status), "annotations": dict(self.annotations)}


@dataclass(frozen=True)
class Decision:
    """Everything one pass concluded."""

    conditions: Tuple[str, ...] = ()
    observations: Mapping[str, Observation] = field(default_factory=dict)
    met: Tuple[Threshold, ...] = ()          # met now (ignoring grace), incl. unresolved min-reclaim
    actionable: Tuple[Threshold, ...] = ()   # grace elapsed and stats updated
    signal: Optional[str] = None             # the threshold acted on
    resource: Optional[str] = None           # the starved resource
    gc_invoked: Tuple[str, ...] = ()
    reclaimed_by_gc: bool = False
    ranked: Tuple[str, ...] = ()             # pod names, first = next victim
    evicted: Tuple[Eviction, ...] = ()


def node_reclaim_funcs(layout: FsLayout) -> Dict[str, Tuple[str, ...]]:
    """Node-level GC the kubelet runs before evicting, per disk signal (``buildSignalToNodeReclaimFuncs``)."""
    both = (GC_CONTAINERS, GC_IMAGES)
    if layout.dedicated_image_fs and not layout.container_fs_separate:
        node, image, container = (), both, both
    elif layout.dedicated_image_fs and layout.container_fs_separate:
        node, image, container = (GC_CONTAINERS,), (GC_IMAGES,), (GC_CONTAINERS,)
    else:
        node = image = container = both
    return {NODEFS_AVAILABLE: node, NODEFS_INODES_FREE: node, IMAGEFS_AVAILABLE: image,
            IMAGEFS_INODES_FREE: image, CONTAINERFS_AVAILABLE: container, CONTAINERFS_INODES_FREE: container}


def _first_pass(config: EvictionConfig, state: EvictionState) -> Tuple[EvictionState, Tuple[Threshold, ...]]:
    """The state with the containerfs rewrite, and the thresholds this first pass evaluates.

    Upstream evaluates the slice it read before the rewrite (a shadowed
    variable): derived containerfs thresholds count from the second pass on,
    while node-level reclaim already checks the rewritten set.
    """
    layout = config.layout
    if layout.container_fs_separate and not config.separate_disk_gc:
        raise InputError(SPLIT_FS_WITHOUT_GATE)
    thresholds, warning = update_containerfs_thresholds(config.thresholds, layout.dedicated_image_fs,
                                                        layout.container_fs_separate)
    seen = containerfs_first_pass_thresholds(config.thresholds, layout.dedicated_image_fs,
                                             layout.container_fs_separate, config.thresholds_capacity)
    return (EvictionState(tuple(thresholds), state.thresholds_met, state.first_observed_at,
                          state.conditions_last_observed_at, state.node_conditions, state.last_observations, warning),
            tuple(seen))


def synchronize(config: EvictionConfig, state: EvictionState, stats: NodeStats, pods: Sequence[Pod], now: float,
                reclaim: Optional[Callable[[Tuple[str, ...]], Optional[NodeStats]]] = None,
                skip: Callable[[Pod], bool] = lambda pod: False,
                termination_grace_s: Optional[Mapping[str, int]] = None,
                terminating: Optional[Mapping[str, bool]] = None) -> Tuple[EvictionState, Decision]:
    """One synchronize pass; returns the new state and the decision.

    ``skip(pod)`` marks pods that cannot be evicted now; critical pods are
    always skipped.  ``terminating`` maps the uid of each pod still
    terminating after an earlier eviction to whether that eviction was hard:
    while one is terminating no new soft eviction starts, and a hard
    threshold escalates a soft-evicted pod (re-evicted with the hard grace
    period) but never re-kills a pod already evicted as hard.
    ``termination_grace_s`` maps pod uid to ``terminationGracePeriodSeconds``:
    a soft eviction then gives min(max-pod-grace-period, that) (kubelet >= 1.32).
    Raises :class:`~pynuma.errors.InputError` for a split filesystem while
    KubeletSeparateDiskGC is off, as the kubelet refuses to run then.
    """
    if not config.thresholds and not config.local_storage_capacity_isolation:
        return state, Decision(conditions=state.node_conditions)
    evaluated: Optional[Tuple[Threshold, ...]] = None
    if state.thresholds is None:
        state, evaluated = _first_pass(config, state)
    all_thresholds = state.thresholds or ()
    if evaluated is None:
        evaluated = all_thresholds
    observations = stats.observations

    current = met.thresholds_met(evaluated, observations, False)
    if state.thresholds_met:
        current = met.merge_thresholds(current, met.thresholds_met(state.thresholds_met, observations, True))
    first_observed = met.thresholds_first_observed_at(current, state.first_observed_at, now)
    observed_conditions = cond.node_conditions(current)
    last_seen = cond.node_conditions_last_observed_at(observed_conditions, state.conditions_last_observed_at, now)
    conditions = tuple(cond.node_conditions_observed_since(last_seen, config.pressure_transition_period_s, now))
    graced = met.thresholds_met_grace_period(first_observed, now)
    actionable = met.thresholds_updated_stats(graced, observations, state.last_observations)
    new_state = EvictionState(state.thresholds, tuple(graced), first_observed, last_seen, conditions,
                              dict(observations), state.warning)
    base = dict(conditions=conditions, observations=observations, met=tuple(current), actionable=tuple(actionable))

    if config.local_storage_capacity_isolation and pods:
        from .admission import is_critical_pod
        from .local_storage import local_storage_violation
        from .messages import evicted_status
        from .podstats import stats_lookup

        stats_of = stats_lookup(stats.pods)
        evicted = []
        for pod in pods:
            ps = stats_of(pod)
            if ps is None:
                continue
            msg = local_storage_violation(pod, ps, config.layout.dedicated_image_fs)
            if msg is not None and not is_critical_pod(pod) and not skip(pod):
                evicted.append(Eviction(pod.name, pod.namespace, pod.uid, config.hard_grace_period_s, msg,
                                        evicted_status(msg, False)))
        if evicted:
            return new_state, Decision(evicted=tuple(evicted), **base)

    if not actionable:
        return new_state, Decision(**base)
    ordered = met.sort_by_eviction_priority(actionable)
    found = met.reclaimable_threshold(ordered)
    if found is None:
        return new_state, Decision(**base)
    threshold, resource = found
    # Upstream iterates a Go map here, so hard vs soft of one signal is a coin toss; be conservative.
    hard = next((t for t in ordered if t.signal == threshold.signal and t.is_hard), None)
    if hard is not None:
        threshold = hard
    ordered = [threshold] + [t for t in ordered if t is not threshold]
    base.update(signal=threshold.signal, resource=resource)

    gc = node_reclaim_funcs(config.layout).get(threshold.signal, ())
    if gc:
        after = reclaim(gc) if reclaim is not None else None
        after_obs = (after or stats).observations
        if not met.thresholds_met(all_thresholds, after_obs, True):
            return new_state, Decision(gc_invoked=gc, reclaimed_by_gc=True, **base)
    from .admission import is_critical_pod
    from .messages import eviction_message, evicted_status
    from .ranking import signal_rank_funcs, stats_lookup

    stats_of = stats_lookup(stats.pods)
    rank = signal_rank_funcs(config.layout.dedicated_image_fs, config.layout.container_fs_separate)[threshold.signal]
    ranked = rank(list(pods), stats_of)
    base.update(gc_invoked=gc, ranked=tuple(p.name for p in ranked))
    grace = config.hard_grace_period_s if threshold.is_hard else config.max_pod_grace_period_s
    active = {p.uid for p in pods}
    still_terminating = {uid: hard for uid, hard in (terminating or {}).items() if uid in active}
    if still_terminating and not threshold.is_hard:
        return new_state, Decision(**base)  # a slow eviction is in progress: no new soft one
    for pod in ranked:
        if is_critical_pod(pod) or skip(pod) or still_terminating.get(pod.uid, False):
            continue
        msg, annotations = eviction_message(resource, pod, stats_of(pod), ordered, observations)
        tgps = (termination_grace_s or {}).get(pod.uid)
        pod_grace = grace
        if not threshold.is_hard and tgps is not None and not config.allow_overwrite_termination_grace:
            pod_grace = min(grace, int(tgps))
        ev = Eviction(pod.name, pod.namespace, pod.uid, pod_grace, msg,
                      evicted_status(msg, config.pod_disruption_conditions), annotations, threshold.signal,
                      threshold.is_hard)
        return new_state, Decision(evicted=(ev,), **base)
    return new_state, Decision(**base)
