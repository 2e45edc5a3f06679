"""Which thresholds are met: min-reclaim, first-observed times, grace periods, updated stats.

Pure helpers of one synchronize pass (kubelet ``helpers.go``); times are
seconds (floats) passed in by the caller.
"""
from __future__ import annotations

from .observations import Observation
from .signals import MEMORY_SIGNALS, OP_LESS_THAN, SIGNAL_TO_RESOURCE
from .thresholds import Threshold

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

    ObservedAt = Dict[Threshold, float]


def threshold_amount(threshold: Threshold, obs: Observation, enforce_min_reclaim: bool = False) -> Union[int, Fraction]:
    """The exact level below which ``threshold`` is met (plus min-reclaim when enforced).

    As ``thresholdsMet``: each term is ``GetThresholdQuantity`` (a quantity
    as given, a percentage truncated to an integer), added exactly.
    """
    q = threshold.value.amount(obs.capacity)
    if enforce_min_reclaim and threshold.min_reclaim is not None:
        q += threshold.min_reclaim.amount(obs.capacity)
    return q


def threshold_quantity(threshold: Threshold, obs: Observation, enforce_min_reclaim: bool = False) -> int:
    """:func:`threshold_amount` in whole bytes/counts (rounded up: met iff it exceeds a whole ``available``)."""
    q = threshold_amount(threshold, obs, enforce_min_reclaim)
    return q if type(q) is int else -(-q.numerator // q.denominator)


def thresholds_met(thresholds: Iterable[Threshold], observations: Mapping[str, Observation],
                   enforce_min_reclaim: bool) -> List[Threshold]:
    """Thresholds whose signal is observed below their quantity; unobserved ones are skipped."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        if t.operator == OP_LESS_THAN and threshold_amount(t, obs, enforce_min_reclaim) > obs.available:
            out.append(t)
    return out


def _same(a: Threshold, b: Threshold) -> bool:
    # upstream hasThreshold: min-reclaim is not part of the identity.
    return (a.grace_period == b.grace_period and a.operator == b.operator and a.signal == b.signal
            and a.value == b.value)


def merge_thresholds(a: Sequence[Threshold], b: Sequence[Threshold]) -> List[Threshold]:
    """``a`` plus the members of ``b`` not already in it."""
    out = list(a)
    for t in b:
        if not any(_same(t, x) for x in out):
            out.append(t)
    return out


def thresholds_updated_stats(thresholds: Iterable[Threshold], observations: Mapping[str, Observation],
                             last_observations: Mapping[str, Observation]) -> List[Threshold]:
    """Thresholds whose observation is newer than last pass's (or untimed, or first seen)."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        last = last_observations.get(t.signal)
        last_time = last.time if last is not None and last.time is not None else None
        if last is None or obs.time is None or (last_time is None or obs.time > last_time):
            out.append(t)
    return out


def thresholds_first_observed_at(thresholds: Iterable[Threshold], last: Mapping[Threshold, float],
                                 now: float) -> ObservedAt:
    """When each currently met threshold was first seen met (kept from ``last``, else ``now``)."""
    return {t: last.get(t, now) for t in thresholds}


def thresholds_met_grace_period(observed_at: Mapping[Threshold, float], now: float) -> List[Threshold]:
    """Thresholds met for at least their grace period."""
    return [t for t, at in observed_at.items() if now - at >= t.grace_period]


def sort_by_eviction_priority(thresholds: Sequence[Threshold]) -> List[Threshold]:
    """Memory signals first, signals without a reclaimable resource last (upstream ``byEvictionPriority``).

    The upstream "less" is not a strict order; Go sorts short slices by
    insertion sort, which this reproduces so ties land where the kubelet's do.
    """
    a = list(thresholds)

    def less(x: Threshold, y: Threshold) -> bool:
        return x.signal in MEMORY_SIGNALS or y.signal not in SIGNAL_TO_RESOURCE

    if len(a) <= 12:
        for i in range(1, len(a)):
            j = i
            while j > 0 and less(a[j], a[j - 1]):
                a[j], a[j - 1] = a[j - 1], a[j]
                j -= 1
        return a
    return sorted(a, key=lambda t: (0 if t.signal in MEMORY_SIGNALS else 1 if t.signal in SIGNAL_TO_RESOURCE else 2))


def reclaimable_threshold(thresholds: Sequence[Threshold]) -> Optional[Tuple[Threshold, str]]:
    """The first threshold with a resource to reclaim, and that resource."""
    for t in thresholds:
        r = SIGNAL_TO_RESOURCE.get(t.signal)
        if r is not None:
            return t, r
    return None


def threshold_met_info(resource: str, thresholds: Sequence[Threshold],
                       observations: Mapping[str, Observation]) -> Optional[Tuple[int, Threshold, Observation]]:
    """The first met threshold of ``resource`` with an observation (for the eviction message)."""
    for t in thresholds:
        if SIGNAL_TO_RESOURCE.get(t.signal) == resource:
            obs = observations.get(t.signal)
            if obs is not None:
                return t.value.resolve(obs.capacity), t, obs
    return None


def memcg_usage_threshold(threshold: Threshold, available: int, usage: int, working_set: int) -> int:
    """cgroup memory usage at which a kernel notification should fire for ``threshold``.

    capacity = available + working set; inactive_file = usage - working set;
    fire at capacity - threshold + inactive_file (``memory_threshold_notifier.go``).
    """
    capacity = available + working_set
    inactive_file = usage - working_set
    return capacity - threshold.value.resolve(capacity) + inactive_file
