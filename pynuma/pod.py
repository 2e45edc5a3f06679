"""Pods and containers as the kubelet sees them: names, requests, limits, priority.

Read from Kubernetes manifests (``kind: Pod`` YAML or JSON as users write
them, or a ``kind: List`` of pods) or from the compact form the conformance
vectors use (``{"name", "containers": [{"name", "requests", "limits"}]}``).
"""
from __future__ import annotations

from ._mapping import Mapping

from ._dataclass import dataclass, field, replace
from .errors import InputError
from .quantity import Quantity

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Any, Dict, List, Optional, Tuple

    Resources = Mapping[str, Quantity]


_OVERCOMMITTABLE_POD_LEVEL = ("cpu", "memory")


def is_supported_pod_level_resource(name: str) -> bool:
    """Resources the API accepts in a pod's ``spec.resources``: cpu, memory and every hugepage size."""
    return name in _OVERCOMMITTABLE_POD_LEVEL or name.startswith("hugepages-")


def _resources(raw: Any, where: str) -> Dict[str, Quantity]:
    """A resource list; ``where`` is ``"<file>: pod <name>: <field path>"`` (the API server's path, e.g.
    ``spec.containers[0].resources.requests``), each bad entry named by its key (``...requests[cpu]``)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of resource -> quantity, got {type(raw).__name__}")
    out = {}
    for name, value in raw.items():
        try:
            out[str(name)] = Quantity.parse(value)
        except InputError as err:
            raise InputError(f"{where}[{name}]: {err}") from None
    return out


def _optional_resources(raw: Any, where: str) -> Optional[Dict[str, Quantity]]:
    # a key that is absent means "not set", which differs from an empty map
    return None if raw is None else _resources(raw, where)


def _string_map(raw: Any, where: str) -> Dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InputError(f"{where}: expected a map of strings")
    return {str(k): str(v) for k, v in raw.items()}


def _optional_string(raw: Any, where: str) -> Optional[str]:
    """A field that is a string when given (the API server refuses any other type)."""
    if raw is not None and not isinstance(raw, str):
        raise InputError(f"{where}: expected a string, got {type(raw).__name__}")
    return raw


def _check_volumes(volumes: list, where: str) -> None:
    """Each volume is a map; an emptyDir's ``sizeLimit``, when set, is a quantity (eviction compares usage to it)."""
    for i, volume in enumerate(volumes):
        if not isinstance(volume, Mapping):
            raise InputError(f"{where}[{i}]: expected a map")
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, Mapping) and empty_dir.get("sizeLimit") not in (None, ""):
            try:
                Quantity.parse(empty_dir["sizeLimit"])
            except InputError as err:
                raise InputError(f"{where}[{i}].emptyDir.sizeLimit: {err}") from None


def _nested(obj: Mapping, keys: Tuple[str, ...], where: str) -> Any:
    for i, key in enumerate(keys):
        if obj is None:
            return None
        if not isinstance(obj, Mapping):
            raise InputError(f"{where}: {'.'.join(keys[:i])} must be a map")
        obj = obj.get(key)
    return obj


@dataclass(frozen=True)
class HostPort:
    """A container port bound on the node (``hostPort``); ``host_ip`` ``""`` = every address."""

    port: int
    protocol: str = "TCP"
    host_ip: str = ""


def _host_ports(raw: Any, where: str) -> Tuple[HostPort, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError(f"{where}: expected a list")
    out = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: each port must be a map")
        port = item.get("hostPort")
        if port is None or port == 0:
            continue  # not bound on the node
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise InputError(f"{where}: hostPort must be 1-65535, got {port!r}")
        out.append(HostPort(port, str(item.get("protocol") or "TCP"), str(item.get("hostIP") or "")))
    return tuple(out)


@dataclass(frozen=True)
class ContainerStatus:
    """What the kubelet reports of a container's resources (in-place resize); ``None`` = not set."""

    name: str
    allocated: Optional[Dict[str, Quantity]] = None
    requests: Optional[Dict[str, Quantity]] = None
    limits: Optional[Dict[str, Quantity]] = None

    @classmethod
    def from_dict(cls, raw: Any, where: str) -> "ContainerStatus":
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map")
        res = raw.get("resources")
        if res is not None and not isinstance(res, Mapping):
            raise InputError(f"{where}.resources: expected a map")
        res = res or {}
        return cls(str(raw.get("name") or ""),
                   _optional_resources(raw.get("allocatedResources"), f"{where}.allocatedResources"),
                   _optional_resources(res.get("requests"), f"{where}.resources.requests"),
                   _optional_resources(res.get("limits"), f"{where}.resources.limits"))


@dataclass(frozen=True)
class PodCondition:
    """One ``status.conditions`` entry."""

    type: str
    status: str = "True"
    reason: str = ""
    message: str = ""


def _status_lists(status: Mapping, where: str):
    conds = status.get("conditions") or []
    if not isinstance(conds, list):
        raise InputError(f"{where}: status.conditions must be a list")
    conditions = []
    for c in conds:
        if not isinstance(c, Mapping):
            raise InputError(f"{where}: each status condition must be a map")
        conditions.append(PodCondition(str(c.get("type") or ""), str(c.get("status") or ""),
                                       str(c.get("reason") or ""), str(c.get("message") or "")))
    statuses = []
    for key in ("containerStatuses", "initContainerStatuses"):
        items = status.get(key) or []
        if not isinstance(items, list):
            raise InputError(f"{where}: status.{key} must be a list")
        statuses += [ContainerStatus.from_dict(c, f"{where} status.{key}[{i}]") for i, c in enumerate(items)]
    return tuple(conditions), tuple(statuses)


@dataclass(frozen=True)
class Container:
    """One container's resource needs; ``restart_policy == "Always"`` on an init container makes it a sidecar."""

    name: str
    requests: Dict[str, Quantity] = field(default_factory=dict)
    limits: Dict[str, Quantity] = field(default_factory=dict)
    restart_policy: Optional[str] = None
    ports: Tuple["HostPort", ...] = ()

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"

    def request(self, resource: str) -> Optional[Quantity]:
        """The request, defaulting to the limit when only a limit is set (Kubernetes defaulting)."""
        q = self.requests.get(resource)
        if q is None:
            q = self.limits.get(resource)
        return q

    def defaulted(self) -> "Container":
        """A copy whose requests default to the limits where unset, as the API server defaults them."""
        missing = {n: q for n, q in self.limits.items() if n not in self.requests}
        return replace(self, requests={**self.requests, **missing}) if missing else self

    @classmethod
    def from_dict(cls, raw: Mapping, where: str = "container", unnamed_ok: bool = False) -> "Container":
        """Build from a container map; ``where`` names it in errors (e.g. ``"f.yaml: pod p: spec.containers[0]"``)."""
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map")
        name = raw.get("name", "" if unnamed_ok else None)
        if not isinstance(name, str) or not (name or unnamed_ok):
            raise InputError(f"{where}.name: Required value: missing name")
        res = raw.get("resources")
        if res is not None and not isinstance(res, Mapping):
            raise InputError(f"{where}.resources: expected a map")
        if isinstance(res, Mapping):
            requests, limits = res.get("requests"), res.get("limits")
            fields = f"{where}.resources"
        else:
            requests, limits = raw.get("requests"), raw.get("limits")
            fields = where
        return cls(
            name=name,
            requests=_resources(requests, f"{fields}.requests"),
            limits=_resources(limits, f"{fields}.limits"),
            restart_policy=_optional_string(raw.get("restartPolicy", raw.get("restart_policy")),
                                            f"{where}.restartPolicy"),
            ports=_host_ports(raw.get("ports"), f"{where}.ports"),
        )


@dataclass(frozen=True)
class Pod:
    """A pod: identity, priority, containers, init containers, volumes, pod-level resources, overhead."""

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
    overhead: Dict[str, Quantity] = field(default_factory=dict)
    labels: Dict[str, str] = field(default_factory=dict)
    node_name: str = ""
    node_selector: Dict[str, str] = field(default_factory=dict)
    tolerations: Tuple[Mapping, ...] = ()
    node_selector_terms: Tuple[Mapping, ...] = ()  # required node affinity: any term must match
    os_name: Optional[str] = None
    conditions: Tuple[PodCondition, ...] = ()
    container_statuses: Tuple[ContainerStatus, ...] = ()

    def all_containers(self) -> Tuple[Container, ...]:
        """Init containers (in order) then app containers."""
        return self.init_containers + self.containers

    def container(self, name: str) -> Container:
        for c in self.all_containers():
            if c.name == name:
                return c
        raise InputError(f"pod {self.name}: no container named {name!r}")

    def defaulted(self) -> "Pod":
        """A copy with requests defaulted as the API server does (``SetDefaults_Pod``).

        Each container's requests default to its limits.  Then, where a
        pod-level limit is set, a missing pod-level cpu or memory request
        becomes what the containers request together (when any of them
        requests it), and any other missing pod-level request the pod-level
        limit (``defaultPodRequests``).
        """
        pod = replace(self, containers=tuple(c.defaulted() for c in self.containers),
                      init_containers=tuple(c.defaulted() for c in self.init_containers))
        if not pod.pod_limits:
            return pod
        from ._container_sums import aggregate

        requests = dict(pod.pod_requests or {})
        for name, (amount, fmt) in aggregate(pod, lambda c: c.requests).items():
            if name not in requests and name in _OVERCOMMITTABLE_POD_LEVEL:
                requests[name] = Quantity(amount, fmt)
        for name, q in pod.pod_limits.items():
            if name not in requests and is_supported_pod_level_resource(name):
                requests[name] = q
        return replace(pod, pod_requests=requests) if requests else pod

    @classmethod
    def from_dict(cls, raw: Mapping, where: str = "pod") -> "Pod":
        """Build from a manifest (``metadata``/``spec``) or the compact vector form."""
        if not isinstance(raw, Mapping):
            raise InputError(f"{where}: expected a map, got {type(raw).__name__}")
        manifest = "spec" in raw or "metadata" in raw
        if manifest:
            kind = raw.get("kind", "Pod")
            if kind != "Pod":
                raise InputError(f"{where}: kind {kind!r} is not a Pod")
            meta = raw.get("metadata") or {}
            spec = raw.get("spec") or {}
            status = raw.get("status") or {}
        else:
            meta, spec, status = raw, raw, raw
        compact = meta is raw
        if compact and isinstance(raw.get("status"), Mapping):
            status = raw["status"]
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
            raise InputError(f"{where}: metadata and spec must be maps")
        if not isinstance(status, Mapping):
            raise InputError(f"{where}: status must be a map")
        name = meta.get("name") or raw.get("name") or ""
        if not isinstance(name, str):
            raise InputError(f"{where}: name must be a string")
        where = f"{where}: pod {_named(name)}" if name else where
        spec_path = "spec." if manifest else ""
        init_key = "initContainers" if "initContainers" in spec or manifest else "init_containers"
        conts = spec.get("containers") or []
        inits = spec.get(init_key) or []
        if not isinstance(conts, list) or not isinstance(inits, list):
            raise InputError(f"{where}: {spec_path}containers and {spec_path}{init_key} must be lists")
        pod_res = spec.get("resources")
        pod_requests = pod_limits = None
        if pod_res is not None and not isinstance(pod_res, Mapping):
            raise InputError(f"{where}: {spec_path}resources: expected a map")
        if isinstance(pod_res, Mapping):
            pod_requests = _resources(pod_res.get("requests"), f"{where}: {spec_path}resources.requests")
            pod_limits = _resources(pod_res.get("limits"), f"{where}: {spec_path}resources.limits")
        priority = spec.get("priority")
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)
                                     or not -(1 << 31) <= priority < 1 << 31):
            raise InputError(f"{where}: priority must be an int32")
        grace = spec.get("terminationGracePeriodSeconds")
        if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)
                                  or not -(1 << 63) <= grace < 1 << 63):
            raise InputError(f"{where}: terminationGracePeriodSeconds must be an int64")
        volumes = spec.get("volumes") or []
        if not isinstance(volumes, list):
            raise InputError(f"{where}: {spec_path}volumes must be a list")
        _check_volumes(volumes, f"{where}: {spec_path}volumes")
        uid = meta.get("uid")
        if isinstance(uid, int) and not isinstance(uid, bool):
            uid = str(uid)  # an unquoted YAML number: its digits are the uid
        uid = _optional_string(uid, f"{where}: metadata.uid")
        namespace = _optional_string(meta.get("namespace"), f"{where}: metadata.namespace")
        qos = _optional_string(status.get("qosClass") or (raw.get("qosClass") if compact else None),
                               f"{where}: status.qosClass")
        conditions, statuses = _status_lists(status, where)
        tolerations = spec.get("tolerations") or []
        if not isinstance(tolerations, list) or not all(isinstance(t, Mapping) for t in tolerations):
            raise InputError(f"{where}: tolerations must be a list of maps")
        terms = _nested(spec, ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                               "nodeSelectorTerms"), where) or []
        if not isinstance(terms, list) or not all(isinstance(t, Mapping) for t in terms):
            raise InputError(f"{where}: affinity.nodeAffinity nodeSelectorTerms must be a list of maps")
        os_spec = spec.get("os")
        os_name = os_spec.get("name") if isinstance(os_spec, Mapping) else None
        return cls(
            name=name,
            namespace=namespace or "default",
            uid=uid or name,
            containers=tuple(Container.from_dict(c, f"{where}: {spec_path}containers[{i}]", compact)
                             for i, c in enumerate(conts)),
            init_containers=tuple(Container.from_dict(c, f"{where}: {spec_path}{init_key}[{i}]", compact)
                                  for i, c in enumerate(inits)),
            priority=priority,
            priority_class_name=_optional_string(spec.get("priorityClassName"), f"{where}: priorityClassName"),
            annotations=_string_map(meta.get("annotations"), f"{where} annotations"),
            volumes=tuple(volumes),
            pod_requests=pod_requests,
            pod_limits=pod_limits,
            status_qos_class=qos,
            overhead=_resources(spec.get("overhead"), f"{where} overhead"),
            labels=_string_map(meta.get("labels"), f"{where} labels"),
            node_name=_optional_string(spec.get("nodeName"), f"{where}: nodeName") or "",
            node_selector=_string_map(spec.get("nodeSelector"), f"{where} nodeSelector"),
            tolerations=tuple(tolerations),
            node_selector_terms=tuple(terms),
            os_name=None if os_name is None else str(os_name),
            conditions=conditions,
            container_statuses=statuses,
        )


def _named(name: str) -> str:
    """A pod's name as errors show it: cut when long (a valid name has at most 253 characters)."""
    return name if len(name) <= 64 else f"{name[:56]}... ({len(name)} characters)"


def validate_pod(pod: Pod, raw: Mapping, where: str) -> None:
    """What the API server would reject in a pod read from a file: ``InputError`` with its field path.

    A pod needs at least one container, and each container's resources pass
    ``validateResourceRequirements`` (hugepages whole pages and equal to
    their limits, non-overcommitable resources with limits, ...).
    """
    manifest = "spec" in raw or "metadata" in raw
    spec_path = "spec." if manifest else ""
    name = f"{where}: pod {_named(pod.name)}" if pod.name else where
    if not pod.containers:
        raise InputError(f"{name}: {spec_path}containers: Required value: a pod needs at least one container")
    from .hugepages.resources import validate_container_resources

    spec = raw.get("spec", raw) if manifest else raw
    init_key = "initContainers" if manifest or "initContainers" in spec else "init_containers"
    for key, conts in (("containers", pod.containers), (init_key, pod.init_containers)):
        for i, c in enumerate(conts):
            errors = validate_container_resources(c.requests, c.limits)
            if errors:
                resources = ".resources" if isinstance((spec.get(key) or [{}])[i].get("resources"), Mapping) else ""
                detail = "; ".join(f"{spec_path}{key}[{i}]{resources}{str(e)[len('resources'):]}" for e in errors)
                raise InputError(f"{name}: {detail}")
    problem = _pod_level_problem(pod)
    if problem:
        raise InputError(f"{name}: {spec_path}{problem}")


def _pod_level_problem(pod: Pod) -> Optional[str]:
    """What ``validatePodResourceRequirements`` and ``validateOverhead`` refuse: a negative pod-level
    request, limit or overhead, or a pod-level request above its limit (``None`` when valid)."""
    for field_name, values in (("resources.limits", pod.pod_limits), ("resources.requests", pod.pod_requests),
                               ("overhead", pod.overhead)):
        for resource, q in (values or {}).items():
            if q < 0:
                return f"{field_name}[{resource}]: Invalid value: \"{q}\": must be greater than or equal to 0"
    limits = pod.pod_limits or {}
    for resource, q in (pod.pod_requests or {}).items():
        limit = limits.get(resource)
        if limit is not None and q > limit:
            return (f"resources.requests: Invalid value: \"{q}\": must be less than or equal to "
                    f"{resource} limit of {limit}")
    return None


def load_pods(path: str, defaulted: bool = False) -> List[Pod]:
    """Pods from a YAML or JSON file: one Pod, several YAML documents, a ``kind: List`` or a JSON list.

    Each pod is validated as the API server would (:func:`validate_pod`);
    errors name the file, the pod and the field path.  ``defaulted=True``
    gives them as the API server hands them to the kubelet (:meth:`Pod.defaulted`).
    """
    from .inputfile import load_items

    pods = []
    for item in load_items(path):
        pod = Pod.from_dict(item, where=path)
        validate_pod(pod, item, path)
        pods.append(pod.defaulted() if defaulted else pod)
    if not pods:
        raise InputError(f"{path}: no pod found")
    return pods
