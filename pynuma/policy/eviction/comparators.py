"""The kubelet's eviction comparators, one function each (``helpers.go``), and their chains.

A comparator takes two pods and returns -1 (the first goes first), 0 or 1;
:func:`chain` applies them in order.  :mod:`.ranking` sorts with equivalent
per-pod keys (faster); these are the readable reference and the oracle the
tests compare it with.
"""
from __future__ import annotations

from functools import cmp_to_key
from typing import Callable, List, Sequence

from ...pod import Pod
from .ranking import StatsFunc, pod_disk_usage, pod_priority, pod_request
from .signals import EPHEMERAL_STORAGE, MEMORY

Comparator = Callable[[Pod, Pod], int]


def _cmp_bool(a: bool, b: bool) -> int:
    """True before False."""
    if a == b:
        return 0
    return -1 if a else 1


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def priority(p1: Pod, p2: Pod) -> int:
    """Lower priority first."""
    return _cmp(pod_priority(p1), pod_priority(p2))


def _with_stats(stats: StatsFunc, body):
    def cmp(p1: Pod, p2: Pod) -> int:
        s1, s2 = stats(p1), stats(p2)
        if s1 is None or s2 is None:
            return _cmp_bool(s1 is None, s2 is None)
        return body(p1, s1, p2, s2)
    return cmp


def exceed_memory_requests(stats: StatsFunc) -> Comparator:
    """Pods whose working set exceeds their memory request first."""
    def body(p1, s1, p2, s2):
        e1 = (s1.memory_working_set or 0) > pod_request(p1, MEMORY)
        e2 = (s2.memory_working_set or 0) > pod_request(p2, MEMORY)
        return _cmp_bool(e1, e2)
    return _with_stats(stats, body)


def memory(stats: StatsFunc) -> Comparator:
    """Larger (working set - memory request) first."""
    def body(p1, s1, p2, s2):
        u1 = (s1.memory_working_set or 0) - pod_request(p1, MEMORY)
        u2 = (s2.memory_working_set or 0) - pod_request(p2, MEMORY)
        return _cmp(u2, u1)
    return _with_stats(stats, body)


def process(stats: StatsFunc) -> Comparator:
    """More processes first."""
    return _with_stats(stats, lambda p1, s1, p2, s2: _cmp(s2.process_count or 0, s1.process_count or 0))


def exceed_disk_requests(stats: StatsFunc, measured: Sequence[str], resource: str) -> Comparator:
    """Pods whose measured use exceeds their request of ``resource`` first (inodes: request 0)."""
    def body(p1, s1, p2, s2):
        e1 = pod_disk_usage(s1, p1, measured)[resource] > pod_request(p1, resource)
        e2 = pod_disk_usage(s2, p2, measured)[resource] > pod_request(p2, resource)
        return _cmp_bool(e1, e2)
    return _with_stats(stats, body)


def disk(stats: StatsFunc, measured: Sequence[str], resource: str) -> Comparator:
    """Larger (measured use - ephemeral-storage request) first; the request is subtracted even for inodes."""
    def body(p1, s1, p2, s2):
        u1 = pod_disk_usage(s1, p1, measured)[resource] - pod_request(p1, EPHEMERAL_STORAGE)
        u2 = pod_disk_usage(s2, p2, measured)[resource] - pod_request(p2, EPHEMERAL_STORAGE)
        return _cmp(u2, u1)
    return _with_stats(stats, body)


def chain(*comparators: Comparator) -> Comparator:
    """The first non-zero answer of the comparators, in order."""
    def cmp(p1: Pod, p2: Pod) -> int:
        for c in comparators:
            r = c(p1, p2)
            if r:
                return r
        return 0
    return cmp


def order(pods: Sequence[Pod], comparator: Comparator) -> List[Pod]:
    """Pods sorted by ``comparator`` (stable)."""
    return sorted(pods, key=cmp_to_key(comparator))


COMPARATOR_NAMES = ("exceed_memory_requests", "exceed_disk_requests", "priority", "memory", "disk", "process")


def comparator_by_name(name: str, stats: StatsFunc, measured: Sequence[str] = (),
                       resource: str = EPHEMERAL_STORAGE) -> Comparator:
    """A comparator by its conformance id."""
    table = {
        "exceed_memory_requests": lambda: exceed_memory_requests(stats),
        "exceed_disk_requests": lambda: exceed_disk_requests(stats, measured, resource),
        "priority": lambda: priority,
        "memory": lambda: memory(stats),
        "disk": lambda: disk(stats, measured, resource),
        "process": lambda: process(stats),
    }
    if name not in table:
        raise ValueError(f"unknown comparator {name!r}")
    return table[name]()
