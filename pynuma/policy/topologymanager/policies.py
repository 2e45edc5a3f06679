"""The Topology Manager policies: ``none``, ``best-effort``, ``restricted``, ``single-numa-node``.

Each policy is a pure function of the providers' hints: merge them into
one best hint and say whether the pod may be admitted with it.

>>> from pynuma.policy.topologymanager.numa_info import NUMAInfo
>>> pol = make_policy("restricted", NUMAInfo.from_matrix([0, 1], None))
>>> pol.merge([{"cpu": [TopologyHint.of([0], True)]}])
(TopologyHint(numa_affinity=NUMAMask([0]), preferred=True), True)
"""
from __future__ import annotations

from typing import Dict, Sequence, Tuple, Type

from ...errors import AllocationError, InputError
from .hints import ProviderHints, TopologyHint
from .numa_info import NUMAInfo
from .merge import HintMerger, filter_providers_hints, filter_single_numa_hints

NONE = "none"
BEST_EFFORT = "best-effort"
RESTRICTED = "restricted"
SINGLE_NUMA_NODE = "single-numa-node"


class TopologyAffinityError(AllocationError):
    """The pod was rejected: its resources cannot be aligned as the policy demands.

    ``reason`` is the kubelet's admission reason string.
    """

    reason = "TopologyAffinityError"

    def __init__(self, message: str = "Resources cannot be allocated with Topology locality") -> None:
        super().__init__(message)


class Policy:
    """Base class: ``merge(providers_hints) -> (best hint, admit)``."""

    name = ""

    def __init__(self, info: NUMAInfo, prefer_closest: bool = False) -> None:
        self.info = info
        self.prefer_closest = prefer_closest

    def merge(self, providers: Sequence[ProviderHints]) -> Tuple[TopologyHint, bool]:
        hint, admit, _exact = self.merge_ex(providers)
        return hint, admit

    def merge_ex(self, providers: Sequence[ProviderHints]) -> Tuple[TopologyHint, bool, bool]:
        """``(best hint, admit, exact)``: ``exact`` is False only when the merge on a huge
        machine (64 nodes with long hint lists) had to use its bounded search."""
        raise NotImplementedError

    def can_admit(self, hint: TopologyHint) -> bool:
        return True

    def _merger(self, lists) -> HintMerger:
        return HintMerger(self.info, lists, self.name, self.prefer_closest)


class NonePolicy(Policy):
    """No alignment: no hint (any node), always admit."""

    name = NONE

    def merge_ex(self, providers):
        return TopologyHint(None, False), True, True


class BestEffortPolicy(Policy):
    """Best merged hint; admit whatever it is."""

    name = BEST_EFFORT

    def merge_ex(self, providers):
        hint, exact = self._merger(filter_providers_hints(providers)).merge_ex()
        return hint, self.can_admit(hint), exact


class RestrictedPolicy(BestEffortPolicy):
    """Best merged hint; admit only if it is preferred."""

    name = RESTRICTED

    def can_admit(self, hint):
        return hint.preferred


class SingleNumaNodePolicy(Policy):
    """Only single-node (or any-node) preferred hints count; admit only if preferred."""

    name = SINGLE_NUMA_NODE

    def merge_ex(self, providers):
        lists = filter_single_numa_hints(filter_providers_hints(providers))
        hint, exact = self._merger(lists).merge_ex()
        if hint.numa_affinity == self.info.default_mask():
            hint = TopologyHint(None, hint.preferred)
        return hint, self.can_admit(hint), exact

    def can_admit(self, hint):
        return hint.preferred


POLICIES: Dict[str, Type[Policy]] = {
    p.name: p for p in (NonePolicy, BestEffortPolicy, RestrictedPolicy, SingleNumaNodePolicy)
}


def make_policy(name: str, info: NUMAInfo, prefer_closest: bool = False) -> Policy:
    """The policy called ``name``; ``InputError`` (kubelet wording) for an unknown name."""
    cls = POLICIES.get(name)
    if cls is None:
        raise InputError(f'unknown policy: "{name}"')
    return cls(info, prefer_closest)
