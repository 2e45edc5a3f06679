"""The kubelet's non-resource admission predicates: node affinity, node name, host ports, taints, OS.

Pure functions of a pod and a :class:`~pynuma.ledger.node.NodeState`; each
returns ``None`` when it passes, else the predicate's failure text
(the reasons the scheduler plugins report, which the kubelet reuses).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Optional

from ..pod import HostPort, Pod
from .node import NodeState, host_ports

NODE_AFFINITY = "NodeAffinity"
NODE_NAME = "NodeName"
NODE_PORTS = "NodePorts"
TAINT_TOLERATION = "TaintToleration"

ERR_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_NODE_NAME = "node(s) didn't match the requested node name"
ERR_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_TAINTS = "node(s) had taints that the pod didn't tolerate"

OS_LABEL = "kubernetes.io/os"
CONFIG_SOURCE = "kubernetes.io/config.source"
API_SOURCE = "api"
NO_EXECUTE = "NoExecute"
WILDCARD_IP = "0.0.0.0"


def _requirement_matches(req: Mapping, labels: Mapping[str, str]) -> bool:
    key, op = req.get("key"), req.get("operator")
    values = [str(v) for v in (req.get("values") or [])]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _term_matches(term: Mapping, labels: Mapping[str, str], node_name: str) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # an empty term matches nothing
    if not all(_requirement_matches(r, labels) for r in exprs):
        return False
    # matchFields supports only the node's name
    return all(r.get("key") == "metadata.name" and _requirement_matches(r, {"metadata.name": node_name})
               for r in fields)


def node_affinity(pod: Pod, node: NodeState) -> Optional[str]:
    """``nodeSelector`` must match the node's labels, and one required node affinity term if any."""
    for key, value in pod.node_selector.items():
        if node.labels.get(key) != value:
            return ERR_NODE_AFFINITY
    if pod.node_selector_terms and not any(_term_matches(t, node.labels, node.name)
                                           for t in pod.node_selector_terms):
        return ERR_NODE_AFFINITY
    return None


def node_name(pod: Pod, node: NodeState) -> Optional[str]:
    """A pod bound to a node by name fits only that node (``nodename.Fits``, exactly).

    Upstream: ``len(pod.Spec.NodeName) == 0 || pod.Spec.NodeName == node.Name``.
    Where the node's name is not known at all (see :func:`node_name_known`)
    the admission check skips this predicate instead of calling it.
    """
    if pod.node_name and pod.node_name != node.name:
        return ERR_NODE_NAME
    return None


def node_name_known(node: NodeState) -> bool:
    """Whether the node's name is known.

    A Kubernetes node always has a non-empty name, so pynuma uses ``""`` for
    "not known": ``pynuma fit``/``admit`` given no node name, a ledger
    initialised without ``--node-name``.  The NodeName predicate is then
    skipped rather than refusing every pod that names its node.
    """
    return bool(node.name)


def _ports_conflict(a: HostPort, b: HostPort) -> bool:
    if a.port != b.port or (a.protocol or "TCP") != (b.protocol or "TCP"):
        return False
    ip_a, ip_b = a.host_ip or WILDCARD_IP, b.host_ip or WILDCARD_IP
    return ip_a == ip_b or WILDCARD_IP in (ip_a, ip_b)


def node_ports(pod: Pod, node: NodeState) -> Optional[str]:
    """Every host port the pod wants must be free (``0.0.0.0`` conflicts with every address).

    Wanted ports are those of app containers and sidecars (``GetHostPorts``);
    a regular init container's ports are not checked.
    """
    for want in host_ports(pod):
        if any(_ports_conflict(want, used) for used in node.host_ports):
            return ERR_NODE_PORTS
    return None


def tolerates(toleration: Mapping, taint: Mapping) -> bool:
    """``ToleratesTaint``: effect (empty = any), key (empty with Exists = any), operator and value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    if operator == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def is_static_pod(pod: Pod) -> bool:
    """A pod not from the API server (``types.IsStaticPod``): the kubelet admits these regardless of taints.

    True when the ``kubernetes.io/config.source`` annotation exists and is not
    ``api`` (``file``, ``http``, even ``""``).
    """
    source = pod.annotations.get(CONFIG_SOURCE)
    return source is not None and source != API_SOURCE


def taint_toleration(pod: Pod, node: NodeState, effects: Iterable[str] = (NO_EXECUTE,)) -> Optional[str]:
    """Every taint with one of ``effects`` must be tolerated (the kubelet checks only NoExecute)."""
    wanted = set(effects)
    for taint in node.taints:
        if taint.get("effect") not in wanted:
            continue
        if not any(tolerates(t, taint) for t in pod.tolerations):
            return ERR_TAINTS
    return None


def reject_by_os_label(pod_labels: Mapping[str, str], host_os: str) -> bool:
    """A pod labelled ``kubernetes.io/os`` for another OS is refused (the node label is taken as the host OS)."""
    want = pod_labels.get(OS_LABEL)
    return want is not None and want != host_os


def reject_by_os_field(pod_os: Optional[str], host_os: str) -> bool:
    """A pod whose ``spec.os.name`` is another OS is refused."""
    return pod_os is not None and pod_os != host_os
