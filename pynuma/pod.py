"""Pods and containers as the kubelet sees them: names, requests, limits, priority.

Read from Kubernetes manifests (``kind: Pod`` YAML or JSON as users write
them, or a ``kind: List`` of pods) or from the compact form the conformance
vectors use (``{"name", "containers": [{"name", "requests", "limits"}]}``).
"""
from __future__ import annotations

from collections.abc import Mapping

from ._dataclass import dataclass, field
from .errors import InputError
from .quantity import Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Dict, List, Optional, Tuple

    Resources = Mapping[str, Quantity]


def _resources(raw: Any, where: str) -> Dict[str, Quantity]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of resource -> quantity, got {type(raw).__name__}")
    out = {}
    for name, value in raw.items():
        try:
            out[str(name)] = Quantity.parse(value)
        except InputError as err:
            raise InputError(f"{where}.{name}: {err}") from None
    return out


@dataclass(frozen=True)
class Container:
    """One container's resource needs; ``restart_policy == "Always"`` on an init container makes it a sidecar."""

    name: str
    requests: Dict[str, Quantity] = field(default_factory=dict)
    limits: Dict[str, Quantity] = field(default_factory=dict)
    restart_policy: Optional[str] = None

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"

    def request(self, resource: str) -> Optional[Quantity]:
        """The request, defaulting to the limit when only a limit is set (Kubernetes defaulting)."""
        q = self.requests.get(resource)
        if q is None:
            q = self.limits.get(resource)
        return q

    @classmethod
    def from_dict(cls, raw: Mapping, where: str = "container") -> "Container":
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map")
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: missing name")
        res = raw.get("resources")
        if isinstance(res, Mapping):
            requests, limits = res.get("requests"), res.get("limits")
        else:
            requests, limits = raw.get("requests"), raw.get("limits")
        return cls(
            name=name,
            requests=_resources(requests, f"{where} {name} requests"),
            limits=_resources(limits, f"{where} {name} limits"),
            restart_policy=raw.get("restartPolicy", raw.get("restart_policy")),
        )


@dataclass(frozen=True)
class Pod:
    """A pod: identity, priority, containers, init containers, volumes, pod-level resources."""

    name: str
    namespace: str = "default"
    uid: str = ""
    containers: Tuple[Container, ...] = ()
    init_containers: Tuple[Container, ...] = ()
    priority: Optional[int] = None
    priority_class_name: Optional[str] = None
    annotations: Dict[str, str] = field(default_factory=dict)
    volumes: Tuple[Mapping, ...] = ()
    pod_requests: Optional[Dict[str, Quantity]] = None
    pod_limits: Optional[Dict[str, Quantity]] = None
    status_qos_class: Optional[str] = None

    def all_containers(self) -> Tuple[Container, ...]:
        """Init containers (in order) then app containers."""
        return self.init_containers + self.containers

    def container(self, name: str) -> Container:
        for c in self.all_containers():
            if c.name == name:
                return c
        raise InputError(f"pod {self.name}: no container named {name!r}")

    @classmethod
    def from_dict(cls, raw: Mapping, where: str = "pod") -> "Pod":
        """Build from a manifest (``metadata``/``spec``) or the compact vector form."""
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map, got {type(raw).__name__}")
        if "spec" in raw or "metadata" in raw:
            kind = raw.get("kind", "Pod")
            if kind != "Pod":
                raise InputError(f"{where}: kind {kind!r} is not a Pod")
            meta = raw.get("metadata") or {}
            spec = raw.get("spec") or {}
            status = raw.get("status") or {}
        else:
            meta, spec, status = raw, raw, raw
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
            raise InputError(f"{where}: metadata and spec must be maps")
        name = meta.get("name") or raw.get("name") or ""
        if not isinstance(name, str):
            raise InputError(f"{where}: name must be a string")
        where = f"{where} {name}".strip()
        conts = spec.get("containers") or []
        inits = spec.get("initContainers", spec.get("init_containers")) or []
        if not isinstance(conts, list) or not isinstance(inits, list):
            raise InputError(f"{where}: containers must be lists")
        pod_res = spec.get("resources")
        pod_requests = pod_limits = None
        if isinstance(pod_res, Mapping):
            pod_requests = _resources(pod_res.get("requests"), f"{where} resources.requests")
            pod_limits = _resources(pod_res.get("limits"), f"{where} resources.limits")
        priority = spec.get("priority")
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
            raise InputError(f"{where}: priority must be an integer")
        volumes = spec.get("volumes") or []
        return cls(
            name=name,
            namespace=meta.get("namespace") or "default",
            uid=str(meta.get("uid") or name),
            containers=tuple(Container.from_dict(c, f"{where} container") for c in conts),
            init_containers=tuple(Container.from_dict(c, f"{where} initContainer") for c in inits),
            priority=priority,
            priority_class_name=spec.get("priorityClassName"),
            annotations=dict(meta.get("annotations") or {}),
            volumes=tuple(volumes) if isinstance(volumes, list) else (),
            pod_requests=pod_requests,
            pod_limits=pod_limits,
            status_qos_class=(status.get("qosClass") if isinstance(status, Mapping) else None),
        )


def load_pods(path: str) -> List[Pod]:
    """Pods from a YAML or JSON file: one Pod, several YAML documents, a ``kind: List`` or a JSON list."""
    from .inputfile import load_items

    pods = [Pod.from_dict(item, where=path) for item in load_items(path)]
    if not pods:
        raise InputError(f"{path}: no pod found")
    return pods
