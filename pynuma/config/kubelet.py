"""The KubeletConfiguration fields pynuma uses (``--config`` of the kubelet).

>>> cfg = load_kubelet_config("/var/lib/kubelet/config.yaml")  # doctest: +SKIP
>>> cfg.thresholds()                                           # doctest: +SKIP

Eviction, node-allocatable reservations, the CPU / Memory / Topology
Manager settings and the node status and lease periods.  Only the fields
pynuma uses are read; unknown fields are ignored as the kubelet's lenient
decoding would.  Absent fields take the kubelet defaults
(``evictionHard`` defaults apply only when the map is absent).
"""
from __future__ import annotations

from .._mapping import Mapping

from .._dataclass import dataclass, field
from ..errors import InputError
from ..limits import INT32_MAX
from ..quantity import Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Dict, List, Optional, Tuple

    from ..policy.memorymanager.reserved import MemoryReservation

KIND = "KubeletConfiguration"
_MAPS = ("evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim",
         "kubeReserved", "systemReserved", "cpuManagerPolicyOptions", "topologyManagerPolicyOptions")
# name in the file -> (dataclass field, kubelet default)
_STRINGS = {"cpuManagerPolicy": ("cpu_manager_policy", "none"), "reservedSystemCPUs": ("reserved_system_cpus", ""),
            "topologyManagerPolicy": ("topology_manager_policy", "none"),
            "topologyManagerScope": ("topology_manager_scope", "container"),
            "memoryManagerPolicy": ("memory_manager_policy", "None")}
_DURATIONS = {"nodeStatusUpdateFrequency": ("node_status_update_frequency_s", "10s"),
              "nodeStatusReportFrequency": ("node_status_report_frequency_s", "1m")}


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
    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: Dict[str, str] = field(default_factory=dict)
    reserved_system_cpus: str = ""
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: Dict[str, str] = field(default_factory=dict)
    memory_manager_policy: str = "None"  # the kubelet spells these two "None" and "Static"
    reserved_memory: Tuple[MemoryReservation, ...] = ()
    max_pods: int = 110
    # pkg/kubelet/apis/config/v1beta1/defaults.go: 10s, 5m, 40s.  The 5m report period assumes a
    # NodeLease reader; this agent's sinks are files a reader polls, so it reports every minute.
    node_status_update_frequency_s: float = 10.0
    node_status_report_frequency_s: float = 60.0
    node_lease_duration_s: int = 40
    source: str = ""

    def thresholds(self):
        """Every eviction threshold this configuration sets (kubelet ``ParseThresholdConfig``)."""
        return self._parsed_thresholds(self.enforce_node_allocatable, self.eviction_soft,
                                       self.eviction_soft_grace_period, self.eviction_minimum_reclaim)

    def hard_thresholds(self):
        """Only the hard thresholds, without min-reclaim or allocatable copies (what node allocatable uses)."""
        return self._parsed_thresholds([], None, None, None)

    def _parsed_thresholds(self, enforce, soft, grace, reclaim):
        from ..policy.eviction.thresholds import ThresholdError, parse_threshold_config

        try:
            return parse_threshold_config(enforce, self.eviction_hard, soft, grace, reclaim)
        except ThresholdError as err:
            raise InputError(err.describe(self.source or "kubelet configuration")) from None

    def reserved_cpu_set(self, num_cpus: Optional[int] = None):
        """``reservedSystemCPUs`` as a :class:`~pynuma.cpuset.CPUSet` (empty when unset).

        With ``num_cpus`` (the machine's logical CPUs) a CPU from ``num_cpus``
        up is refused, as the kubelet's ``getReservedCPUs`` refuses it.
        """
        return parse_reserved_cpus(self.reserved_system_cpus, "reservedSystemCPUs", num_cpus)

    def effective_reserved(self, num_cpus: Optional[int] = None) -> Tuple[Dict[str, Quantity], Dict[str, Quantity]]:
        """``(kube, system)`` reservations as the kubelet applies them: ``reservedSystemCPUs``,
        when set, replaces both cpu reservations by its size."""
        from ..policy.allocatable import reserved_cpus_override

        return reserved_cpus_override(self.reserved("kube"), self.reserved("system"),
                                      len(self.reserved_cpu_set(num_cpus)))

    def reserved(self, which: str) -> Dict[str, Quantity]:
        """``kube`` or ``system`` reservation as quantities, as written (see :meth:`effective_reserved`)."""
        raw = self.kube_reserved if which == "kube" else self.system_reserved
        out = {}
        for k, v in raw.items():
            try:
                out[k] = Quantity.parse(v)
            except InputError as err:
                raise InputError(f"{self.source}: {which}Reserved.{k}: {err}") from None
        return out


def parse_reserved_cpus(text: str, what: str, num_cpus: Optional[int] = None):
    """A reserved CPU list (``--reserved-cpus``, ``reservedSystemCPUs``); :class:`InputError` naming ``what``."""
    from ..cpuset import CPUSet

    try:
        cpus = CPUSet.parse(text) if text else CPUSet()
    except ValueError as err:
        raise InputError(f"{what}: bad cpulist {text!r}: {err}") from None
    if num_cpus is not None and cpus and max(cpus) >= num_cpus:
        raise InputError(f"{what}: invalid cpuset {text!r}: this machine has {num_cpus} CPUs")
    return cpus


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
    check_enforce_node_allocatable([str(x) for x in enforce], f"{where}: enforceNodeAllocatable")
    gates = doc.get("featureGates") or {}
    if not isinstance(gates, Mapping):
        raise InputError(f"{where}: featureGates must be a map")
    lsci = doc.get("localStorageCapacityIsolation", True)
    extra = _manager_and_status_fields(doc, where, maps)
    return KubeletConfig(
        eviction_hard=maps["evictionHard"], eviction_soft=maps["evictionSoft"],
        eviction_soft_grace_period=maps["evictionSoftGracePeriod"],
        eviction_minimum_reclaim=maps["evictionMinimumReclaim"],
        eviction_pressure_transition_period_s=period_s, eviction_max_pod_grace_period_s=grace,
        kube_reserved=maps["kubeReserved"] or {}, system_reserved=maps["systemReserved"] or {},
        enforce_node_allocatable=[str(x) for x in enforce], local_storage_capacity_isolation=bool(lsci),
        feature_gates={str(k): bool(v) for k, v in gates.items()}, source=where, **extra,
    )


def _positive_int(doc: Mapping, name: str, default: int, where: str) -> int:
    value = doc.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InputError(f"{where}: {name} must be a positive integer")
    return value


def _manager_and_status_fields(doc: Mapping, where: str, maps: Mapping[str, Optional[Dict[str, str]]]) -> dict:
    """The CPU / Memory / Topology Manager and node status fields, as dataclass keyword arguments."""
    from ..policy.eviction.thresholds import parse_duration

    out: Dict[str, Any] = {}
    for name, (attr, default) in _STRINGS.items():
        value = doc.get(name, default)
        if not isinstance(value, str):
            raise InputError(f"{where}: {name} must be a string")
        out[attr] = value
    for name, (attr, default) in _DURATIONS.items():
        try:
            seconds = parse_duration(str(doc.get(name, default)))
        except InputError as err:
            raise InputError(f"{where}: {name}: {err}") from None
        if seconds <= 0:
            raise InputError(f"{where}: {name} must be positive")
        out[attr] = seconds
    out["node_lease_duration_s"] = _positive_int(doc, "nodeLeaseDurationSeconds", 40, where)
    out["max_pods"] = _positive_int(doc, "maxPods", 110, where)
    out["cpu_manager_policy_options"] = maps["cpuManagerPolicyOptions"] or {}
    out["topology_manager_policy_options"] = maps["topologyManagerPolicyOptions"] or {}
    reserved = doc.get("reservedMemory") or []
    if not isinstance(reserved, list):
        raise InputError(f"{where}: reservedMemory must be a list")
    out["reserved_memory"] = ()
    if reserved:  # only a configuration that reserves memory pays for the Memory Manager's types
        from ..policy.memorymanager.reserved import MemoryReservation

        out["reserved_memory"] = tuple(MemoryReservation.from_dict(r, f"{where}: reservedMemory[{i}]")
                                       for i, r in enumerate(reserved))
    return out


#: what the kubelet accepts in enforceNodeAllocatable (its configuration validation)
ENFORCE_NODE_ALLOCATABLE = ("pods", "system-reserved", "kube-reserved", "system-reserved-compressible",
                            "kube-reserved-compressible", "none")


def check_enforce_node_allocatable(values: List[str], where: str) -> None:
    """:class:`InputError` naming ``where`` for a value the kubelet refuses, or ``none`` with others."""
    for value in values:
        if value not in ENFORCE_NODE_ALLOCATABLE:
            raise InputError(f"{where}: invalid option {value!r} (valid: {', '.join(ENFORCE_NODE_ALLOCATABLE)})")
    if "none" in values and len(values) > 1:
        raise InputError(f"{where}: 'none' cannot be combined with other options")


def load_kubelet_config(path: str) -> KubeletConfig:
    """Read a KubeletConfiguration YAML or JSON file; :class:`InputError` naming it when bad."""
    from ..inputfile import load_yaml

    return parse_kubelet_config(load_yaml(path), path)
