"""Building blocks of the Memory Manager: requested bytes, NUMA masks, hint ordering.

>>> best_hint([Hint((0, 1), False), Hint((1,), True), Hint((0,), True)])
Hint(numa=(0,), preferred=True)
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Dict, Iterator, NamedTuple, Optional, Sequence, Tuple

from ...errors import InputError
from ...hugepages.resources import is_hugepage_resource_name
from ...pod import Container, Pod
from .state import MEMORY

Mask = Tuple[int, ...]


class Hint(NamedTuple):
    """A NUMA hint: ``numa`` ascending node ids (``None`` = any), ``preferred``."""

    numa: Optional[Mask]
    preferred: bool


@dataclass(frozen=True)
class NodeInfo:
    """What the policy needs of a NUMA node: memory bytes and ``(page_size_kb, num_pages)`` pools."""

    id: int
    memory: int
    hugepages: Tuple[Tuple[int, int], ...] = ()


def container_requested_resources(container: Container) -> Dict[str, int]:
    """Bytes of ``memory`` and each ``hugepages-*`` the container requests (``getRequestedResources``:
    its requests as given; a pod from a manifest is defaulted first, see ``Pod.defaulted``)."""
    out: Dict[str, int] = {}
    for name in sorted(container.requests):
        if name != MEMORY and not is_hugepage_resource_name(name):
            continue
        size = container.requests[name].as_int64()
        if size is None:
            raise InputError("[memorymanager] failed to represent quantity as int64")
        out[name] = size
    return out


def pod_requested_resources(pod: Pod) -> Dict[str, int]:
    """What the whole pod needs per resource: long-running containers vs the init-container peak.

    Long-running = app containers + sidecars; an init container's peak is its
    request plus the sidecars started before it.  Resources only init
    containers ask for are left out, as the kubelet does.
    """
    init_peak: Dict[str, int] = {}
    sidecars: Dict[str, int] = {}
    for c in pod.init_containers:
        for name, size in container_requested_resources(c).items():
            init_peak.setdefault(name, 0)
            if c.is_sidecar:
                sidecars[name] = sidecars.get(name, 0) + size
            elif sidecars.get(name, 0) + size > init_peak[name]:
                init_peak[name] = sidecars.get(name, 0) + size
    apps: Dict[str, int] = {}
    for c in pod.containers:
        for name, size in container_requested_resources(c).items():
            apps[name] = apps.get(name, 0) + size
    return {name: max(total + sidecars.get(name, 0), init_peak.get(name, 0)) for name, total in apps.items()}


def iterate_masks(nodes: Sequence[int]) -> Iterator[Mask]:
    """Every non-empty subset of ``nodes``: by size, then lexicographically."""
    ordered = sorted(nodes)
    for k in range(1, len(ordered) + 1):
        yield from combinations(ordered, k)


def _mask_value(mask: Mask) -> int:
    return sum(1 << n for n in mask)


def is_narrower(a: Mask, b: Mask) -> bool:
    """Fewer nodes, or as many with lower-numbered ones (the kubelet's ``IsNarrowerThan``)."""
    if len(a) == len(b):
        return _mask_value(a) < _mask_value(b)
    return len(a) < len(b)


def best_hint(hints: Sequence[Hint]) -> Optional[Hint]:
    """Preferred beats non-preferred, then the narrowest mask; ``None`` for no hints."""
    best: Optional[Hint] = None
    for h in hints:
        if best is None:
            best = h
        elif h.preferred and not best.preferred:
            best = h
        elif h.preferred == best.preferred and is_narrower(h.numa, best.numa):
            best = h
    return best


def mask_key(mask: Sequence[int]) -> Mask:
    return tuple(sorted(set(mask)))
