"""The eviction and reservation fields of a KubeletConfiguration file (``--config`` of the kubelet).

>>> cfg = load_kubelet_config("/var/lib/kubelet/config.yaml")  # doctest: +SKIP
>>> cfg.thresholds()                                           # doctest: +SKIP

Only the fields pynuma uses are read; unknown fields are ignored as the
kubelet's lenient decoding would.  Absent fields take the kubelet defaults
(``evictionHard`` defaults apply only when the map is absent).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ..errors import InputError
from ..limits import INT32_MAX
from ..quantity import Quantity

KIND = "KubeletConfiguration"
_MAPS = ("evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim",
         "kubeReserved", "systemReserved")


@dataclass(frozen=True)
class KubeletConfig:
    """Eviction and node-allocatable settings; ``None`` maps mean "not set"."""

    eviction_hard: Optional[Dict[str, str]] = None
    eviction_soft: Optional[Dict[str, str]] = None
    eviction_soft_grace_period: Optional[Dict[str, str]] = None
    eviction_minimum_reclaim: Optional[Dict[str, str]] = None
    eviction_pressure_transition_period_s: float = 300.0
    eviction_max_pod_grace_period_s: int = 0
    kube_reserved: Dict[str, str] = field(default_factory=dict)
    system_reserved: Dict[str, str] = field(default_factory=dict)
    enforce_node_allocatable: List[str] = field(default_factory=lambda: ["pods"])
    local_storage_capacity_isolation: bool = True
    feature_gates: Dict[str, bool] = field(default_factory=dict)
    source: str = ""

    def thresholds(self):
        """Every eviction threshold this configuration sets (kubelet ``ParseThresholdConfig``)."""
        from ..policy.eviction.thresholds import ThresholdError, parse_threshold_config

        try:
            return parse_threshold_config(self.enforce_node_allocatable, self.eviction_hard, self.eviction_soft,
                                          self.eviction_soft_grace_period, self.eviction_minimum_reclaim)
        except ThresholdError as err:
            raise InputError(err.describe(self.source or "kubelet configuration")) from None

    def hard_thresholds(self):
        """Only the hard thresholds, without min-reclaim or allocatable copies (what node allocatable uses)."""
        from ..policy.eviction.thresholds import parse_threshold_config

        return parse_threshold_config([], self.eviction_hard, None, None, None)

    def reserved(self, which: str) -> Dict[str, Quantity]:
        """``kube`` or ``system`` reservation as quantities."""
        raw = self.kube_reserved if which == "kube" else self.system_reserved
        out = {}
        for k, v in raw.items():
            try:
                out[k] = Quantity.parse(v)
            except InputError as err:
                raise InputError(f"{self.source}: {which}Reserved.{k}: {err}") from None
        return out


def _string_map(raw: Any, name: str, where: str) -> Optional[Dict[str, str]]:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: {name} must be a map of strings")
    return {str(k): str(v) for k, v in raw.items()}


def parse_kubelet_config(doc: Any, where: str = "kubelet config") -> KubeletConfig:
    """Build from a parsed YAML/JSON document."""
    from ..policy.eviction.thresholds import parse_duration

    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise InputError(f"{where}: expected a KubeletConfiguration map")
    kind = doc.get("kind", KIND)
    if kind != KIND:
        raise InputError(f"{where}: kind {kind!r} is not {KIND}")
    maps = {name: _string_map(doc.get(name), name, where) for name in _MAPS}
    period = doc.get("evictionPressureTransitionPeriod", "5m")
    try:
        period_s = parse_duration(str(period))
    except InputError as err:
        raise InputError(f"{where}: evictionPressureTransitionPeriod: {err}") from None
    grace = doc.get("evictionMaxPodGracePeriod", 0)
    if isinstance(grace, bool) or not isinstance(grace, int):
        raise InputError(f"{where}: evictionMaxPodGracePeriod must be an integer")
    if not -INT32_MAX - 1 <= grace <= INT32_MAX:  # an int32 in KubeletConfiguration
        raise InputError(f"{where}: evictionMaxPodGracePeriod must fit an int32")
    enforce = doc.get("enforceNodeAllocatable", ["pods"])
    if not isinstance(enforce, list):
        raise InputError(f"{where}: enforceNodeAllocatable must be a list")
    gates = doc.get("featureGates") or {}
    if not isinstance(gates, Mapping):
        raise InputError(f"{where}: featureGates must be a map")
    lsci = doc.get("localStorageCapacityIsolation", True)
    return KubeletConfig(
        eviction_hard=maps["evictionHard"], eviction_soft=maps["evictionSoft"],
        eviction_soft_grace_period=maps["evictionSoftGracePeriod"],
        eviction_minimum_reclaim=maps["evictionMinimumReclaim"],
        eviction_pressure_transition_period_s=period_s, eviction_max_pod_grace_period_s=grace,
        kube_reserved=maps["kubeReserved"] or {}, system_reserved=maps["systemReserved"] or {},
        enforce_node_allocatable=[str(x) for x in enforce], local_storage_capacity_isolation=bool(lsci),
        feature_gates={str(k): bool(v) for k, v in gates.items()}, source=where,
    )


def load_kubelet_config(path: str) -> KubeletConfig:
    """Read a KubeletConfiguration YAML or JSON file; :class:`InputError` naming it when bad."""
    from ..inputfile import load_yaml

    return parse_kubelet_config(load_yaml(path), path)
