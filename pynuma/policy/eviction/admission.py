"""Pod admission while the node reports pressure, and which pods are never evicted."""
from __future__ import annotations

from ..._dataclass import dataclass
from ...pod import Pod
from .messages import REASON, node_condition_message
from .signals import MEMORY_PRESSURE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Mapping, Sequence

SYSTEM_CRITICAL_PRIORITY = 2000000000


def is_critical_pod(pod: Pod) -> bool:
    """Static, mirror, or system-critical priority pods are never evicted."""
    ann = pod.annotations or {}
    source = ann.get("kubernetes.io/config.source")
    if source is not None and source != "api":
        return True
    if "kubernetes.io/config.mirror" in ann:
        return True
    return pod.priority is not None and pod.priority >= SYSTEM_CRITICAL_PRIORITY


@dataclass(frozen=True)
class AdmitResult:
    admit: bool
    reason: str = ""
    message: str = ""


def _tolerates_memory_pressure(tolerations: Sequence[Mapping]) -> bool:
    # v1 Toleration.ToleratesTaint against node.kubernetes.io/memory-pressure:NoSchedule (value "").
    for t in tolerations or ():
        if (t.get("effect") or "") not in ("", "NoSchedule"):
            continue
        if (t.get("key") or "") not in ("", "node.kubernetes.io/memory-pressure"):
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" or (op == "Equal" and (t.get("value") or "") == ""):
            return True
    return False


def admit(pod: Pod, conditions: Sequence[str], tolerations: Sequence[Mapping] = ()) -> AdmitResult:
    """Whether the kubelet admits ``pod`` while the node reports ``conditions``."""
    if not conditions or is_critical_pod(pod):
        return AdmitResult(True)
    if list(conditions) == [MEMORY_PRESSURE]:
        from ..qos import qos_class

        if qos_class(pod) != "BestEffort" or _tolerates_memory_pressure(tolerations):
            return AdmitResult(True)
    return AdmitResult(False, REASON, node_condition_message(conditions))
