"""No-overcommit accounting of hugepages: a request never exceeds the free pages.

>>> ledger = HugepageLedger({"hugepages-2Mi": 10 * 2 * 1024 * 1024})
>>> ledger.reserve("pod-a", {"hugepages-2Mi": "8Mi"})
>>> ledger.free("hugepages-2Mi") // (2 * 1024 * 1024)
6

Hugepages are not overcommittable (kubelet ``IsOvercommitAllowed``): unlike
memory, a reservation that does not fit in what is free is refused whole,
and nothing is half-reserved.
"""
from __future__ import annotations

from typing import Dict, Mapping, Union

from ..errors import AllocationError, InputError
from ..quantity import Quantity
from .resources import is_hugepage_resource_name, is_value_divisible

Amount = Union[Quantity, str, int]


class HugepageLedger:
    """Bytes of each ``hugepages-<size>`` resource available, and who holds what."""

    def __init__(self, capacity: Mapping[str, Amount]) -> None:
        self.capacity: Dict[str, int] = {}
        for name, q in capacity.items():
            if not is_hugepage_resource_name(name):
                raise InputError(f"{name}: not a hugepage resource")
            self.capacity[name] = Quantity.parse(q).value()
        self.holders: Dict[str, Dict[str, int]] = {}

    def used(self, resource: str) -> int:
        return sum(h.get(resource, 0) for h in self.holders.values())

    def free(self, resource: str) -> int:
        return self.capacity.get(resource, 0) - self.used(resource)

    def check(self, request: Mapping[str, Amount]) -> Dict[str, int]:
        """Bytes per resource of ``request`` (hugepage entries only); ``AllocationError`` if it does not fit."""
        wanted: Dict[str, int] = {}
        for name, q in request.items():
            if not is_hugepage_resource_name(name):
                continue
            amount = Quantity.parse(q)
            if amount.amount < 0:
                raise InputError(f"{name}: negative request {amount}")
            if not is_value_divisible(name, amount):
                raise InputError(f"{name}: {amount} is not a whole number of pages")
            wanted[name] = amount.value()
        for name, size in wanted.items():
            if name not in self.capacity:
                raise AllocationError(f"{name}: the node has no such hugepage pool")
            if size > self.free(name):
                raise AllocationError(f"{name}: {Quantity(size, 'BinarySI')} requested, only "
                                      f"{Quantity(self.free(name), 'BinarySI')} free (hugepages never overcommit)")
        return wanted

    def reserve(self, holder: str, request: Mapping[str, Amount]) -> None:
        """Record ``holder``'s hugepages, all or nothing."""
        wanted = self.check(request)
        mine = self.holders.setdefault(holder, {})
        for name, size in wanted.items():
            mine[name] = mine.get(name, 0) + size

    def release(self, holder: str) -> None:
        self.holders.pop(holder, None)
