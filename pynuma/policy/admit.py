"""Pod admission end to end: Topology Manager + CPU Manager + Memory Manager + devices.

Pure: the caller passes the managers (with their current state); the
report says, per container, what each provider hinted, the merged hint,
the CPUs / memory blocks / devices it gets, and whether the pod is
admitted (with the kubelet's reason when not).  The managers' states are
updated in place, so a caller that wants to persist them can.

>>> from pynuma.pod import Pod
>>> from pynuma.policy.topologymanager.numa_info import NUMAInfo
>>> from pynuma.policy.topologymanager.manager import TopologyManager
>>> tm = TopologyManager.create(NUMAInfo.from_matrix([0], None), "restricted")
>>> admit_pod(Pod.from_dict({"name": "p", "containers": [{"name": "c"}]}), tm).admit
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .cpumanager.hints import CPUHintProvider
from .topologymanager.hints import ProviderHints, TopologyHint, provider_hints_to_json
from .topologymanager.manager import TopologyManager


@dataclass
class ContainerPlacement:
    """One container's outcome."""

    name: str
    kind: str  # "init", "sidecar" or "app"
    provider_hints: Dict[str, Any] = field(default_factory=dict)
    hint: Optional[TopologyHint] = None
    cpus: Optional[str] = None  # cpulist of exclusive CPUs; None = shared pool
    memory: List[Dict[str, Any]] = field(default_factory=list)
    devices: Dict[str, List[str]] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "hints": self.provider_hints,
                "hint": None if self.hint is None else self.hint.to_json(),
                "cpus": self.cpus, "memory": self.memory, "devices": self.devices}


@dataclass
class AdmitReport:
    """The pod's admission: ``admit``, ``reason``/``message`` when rejected, placements per container."""

    pod: str
    policy: str
    scope: str
    admit: bool = True
    reason: str = ""
    message: str = ""
    containers: List[ContainerPlacement] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"pod": self.pod, "policy": self.policy, "scope": self.scope, "admit": self.admit,
                "reason": self.reason or None, "message": self.message or None,
                "containers": [c.to_json() for c in self.containers]}


class _Named:
    def __init__(self, name: str, provider) -> None:
        self.name, self.p = name, provider

    def hints(self, pod, container):
        return self.p.hints(pod, container)

    def pod_hints(self, pod):
        return self.p.pod_hints(pod)


def _kind(pod, container) -> str:
    if any(c is container for c in pod.init_containers):
        return "sidecar" if container.is_sidecar else "init"
    return "app"


def admit_pod(pod, manager: TopologyManager, cpu: Optional[Tuple[Any, Any]] = None, memory=None,
              devices=None) -> AdmitReport:
    """Admit ``pod``: ``cpu`` = (static policy, CPUState), ``memory`` = MemoryManager, ``devices`` = DeviceHintProvider.

    Providers allocate right after each admitted container (container scope)
    or after the pod's single merge (pod scope), as in the kubelet.  An
    allocation failure rejects the pod (``UnexpectedAdmissionError`` or
    ``SMTAlignmentError``, as the kubelet reports it).
    """
    providers = []
    if cpu is not None:
        providers.append(CPUHintProvider(*cpu))
    if memory is not None:
        providers.append(_Named("memory", memory))
    if devices is not None:
        providers.append(_Named("devices", devices))
    report = AdmitReport(pod.name, manager.policy.name, manager.scope)
    by_name: Dict[str, ContainerPlacement] = {}
    for c in pod.all_containers():
        by_name[c.name] = ContainerPlacement(c.name, _kind(pod, c))
        report.containers.append(by_name[c.name])

    def allocate(container, hint: TopologyHint) -> None:
        place = by_name[container.name]
        place.hint = hint
        if cpu is not None:
            got = cpu[0].allocate(cpu[1], pod, container, hint)
            place.cpus = None if got is None else str(got)
        if memory is not None:
            place.memory = [{"numa": list(b.numa_affinity or ()), "type": b.type, "size": b.size}
                            for b in memory.allocate(pod, container, hint)]
        if devices is not None:
            place.devices = devices.allocate(pod, container, hint)

    result = manager.admit(pod, providers, allocate)
    for d in result.decisions:
        answers = {p.name: provider_hints_to_json(a) for p, a in zip(providers, d.provider_hints)}
        targets = report.containers if d.container == "*" else [by_name[d.container]]
        for place in targets:
            place.provider_hints = answers
            if place.hint is None:
                place.hint = d.hint
    report.admit = result.admit
    report.reason, report.message = result.reason, result.message
    return report


def provider_names(report: AdmitReport) -> List[str]:
    """Names of the providers that answered, in order (for tables)."""
    names: List[str] = []
    for c in report.containers:
        for n in c.provider_hints:
            if n not in names:
                names.append(n)
    return names


__all__ = ["AdmitReport", "ContainerPlacement", "admit_pod", "provider_names", "ProviderHints"]
