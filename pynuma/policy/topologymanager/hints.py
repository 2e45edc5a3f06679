"""Topology hints and the protocol every hint provider (CPU, memory, devices) speaks.

A provider answers ``{resource: hints}`` per container (or per pod).  Three
answers mean three different things, exactly as in the kubelet:

* the provider returns ``None`` or ``{}``, or a resource maps to ``None``:
  **no preference** (the resource can go anywhere) — :data:`NO_PREFERENCE`;
* a resource maps to ``[]``: **no possible placement** (the request cannot
  be satisfied on any NUMA set) — :data:`NO_PLACEMENT`;
* a non-empty list: the NUMA sets that can satisfy it, minimal ones preferred.

>>> h = TopologyHint(NUMAMask([0]), True)
>>> h.to_json()
{'numa': [0], 'preferred': True}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

try:  # typing.Protocol is 3.8+
    from typing import Protocol
except ImportError:  # pragma: no cover
    from typing_extensions import Protocol  # type: ignore

from ...limits import MAX_NUMA_NODES
from .bitmask import NUMAMask


@dataclass(frozen=True)
class TopologyHint:
    """A NUMA affinity (``None`` = any node) and whether it is a preferred placement."""

    numa_affinity: Optional[NUMAMask]
    preferred: bool

    @classmethod
    def of(cls, nodes: Optional[Any], preferred: bool) -> "TopologyHint":
        """Build from a list of node ids (or ``None`` for no affinity)."""
        return cls(None if nodes is None else NUMAMask(nodes), bool(preferred))

    def to_json(self) -> Dict[str, Any]:
        """``{"numa": [ids] | None, "preferred": bool}``."""
        aff = None if self.numa_affinity is None else list(self.numa_affinity)
        return {"numa": aff, "preferred": self.preferred}

    @classmethod
    def from_json(cls, raw: Any, where: str = "hint") -> "TopologyHint":
        """Parse ``{"numa": [ids] | null, "preferred": bool}``; ``ValueError`` naming ``where``."""
        if not isinstance(raw, Mapping):
            raise ValueError(f"{where}: expected an object with 'numa' and 'preferred'")
        unknown = set(raw) - {"numa", "preferred"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}")
        numa = raw.get("numa")
        pref = raw.get("preferred", False)
        if not isinstance(pref, bool):
            raise ValueError(f"{where}: 'preferred' must be true or false")
        if numa is None:
            return cls(None, pref)
        if not isinstance(numa, list) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                 and 0 <= n < MAX_NUMA_NODES for n in numa):
            raise ValueError(f"{where}: 'numa' must be a list of node ids (0 to {MAX_NUMA_NODES - 1}) or null")
        return cls(NUMAMask(numa), pref)

    def __str__(self) -> str:
        aff = "any" if self.numa_affinity is None else str(self.numa_affinity)
        return f"{aff}{'' if self.preferred else ' (not preferred)'}"


# What a provider returns for one container / pod: None or {} = no preference at all.
ResourceHints = Optional[List[TopologyHint]]
ProviderHints = Optional[Mapping[str, ResourceHints]]

NO_PREFERENCE: ResourceHints = None
"""A resource with no NUMA preference (can be placed anywhere)."""

NO_PLACEMENT: ResourceHints = []  # noqa: RUF012 - documented sentinel; never mutate
"""A resource that cannot be placed on any NUMA set (an empty hint list)."""


def is_no_preference(hints: ResourceHints) -> bool:
    """True for ``None`` (no preference); False for ``[]`` (no placement) and real lists."""
    return hints is None


def is_no_placement(hints: ResourceHints) -> bool:
    """True for an empty list (the request fits nowhere)."""
    return hints is not None and len(hints) == 0


class HintProvider(Protocol):
    """What the Topology Manager asks of the CPU, memory and device managers."""

    def hints(self, pod: Any, container: Any) -> ProviderHints:
        """Hints per resource for one container (container scope)."""
        ...

    def pod_hints(self, pod: Any) -> ProviderHints:
        """Hints per resource for the whole pod (pod scope)."""
        ...


def provider_hints_from_json(raw: Any, where: str = "provider") -> ProviderHints:
    """Parse ``{resource: [hint, ...] | null}`` (or ``null``) into provider hints; ``ValueError`` on bad data."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: expected an object mapping resource -> list of hints or null")
    out: Dict[str, ResourceHints] = {}
    for res, lst in raw.items():
        if lst is None:
            out[str(res)] = None
            continue
        if not isinstance(lst, list):
            raise ValueError(f"{where}.{res}: expected a list of hints or null")
        out[str(res)] = [TopologyHint.from_json(h, f"{where}.{res}[{i}]") for i, h in enumerate(lst)]
    return out


def provider_hints_to_json(hints: ProviderHints) -> Optional[Dict[str, Any]]:
    """The JSON form of one provider's answer (inverse of :func:`provider_hints_from_json`)."""
    if hints is None:
        return None
    return {res: (None if lst is None else [h.to_json() for h in lst]) for res, lst in hints.items()}
