"""What a pod's containers need together over its life, exactly: the one aggregation rule.

App containers and every sidecar (restartable init container) run together;
a regular init container runs with the sidecars declared before it; the pod
needs the larger of the two, per resource (``AggregateContainerRequests`` of
``k8s.io/component-helpers/resource``).  Sums are kept as ``(exact amount,
format of the first quantity seen)`` so nothing heavy is imported.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Callable, Dict, Mapping, Optional, Tuple, Union

    from .quantity import Quantity

    Amounts = Dict[str, Tuple[Union[int, Fraction], str]]
    View = Callable[[object], Optional[Mapping[str, Quantity]]]


def add_into(into: "Amounts", res: "Optional[Mapping[str, Quantity]]") -> None:
    """Add every quantity of ``res`` to ``into``."""
    for name, q in (res or {}).items():
        amount, fmt = into.get(name, (0, q.format))
        into[name] = (amount + q.amount, fmt)


def max_into(into: "Amounts", other: "Amounts") -> None:
    """Raise each entry of ``into`` to ``other``'s where that is larger (keeping ``into``'s format)."""
    for name, (amount, fmt) in other.items():
        have = into.get(name)
        if have is None or amount > have[0]:
            into[name] = (amount, have[1] if have else fmt)


def aggregate(pod, view: "View") -> "Amounts":
    """max(apps + all sidecars, each regular init container + the sidecars declared before it)."""
    running: Amounts = {}
    for c in pod.containers:
        add_into(running, view(c))
    sidecars: Amounts = {}
    init_peak: Amounts = {}
    for c in pod.init_containers:
        value = view(c)
        if c.is_sidecar:
            add_into(sidecars, value)
            add_into(running, value)
            max_into(init_peak, sidecars)
        else:
            candidate = dict(sidecars)
            add_into(candidate, value)
            max_into(init_peak, candidate)
    max_into(running, init_peak)
    return running
