"""Node conditions as the kubelet's status setters write them (``pkg/kubelet/nodestatus/setters.go``).

``lastHeartbeatTime`` is the time of the status that carries the condition;
``lastTransitionTime`` moves only when the status flips.  The kubelet's
reasons and messages are kept word for word: tools grep for them.

>>> track = ConditionTracker()
>>> [c.status for c in track.update({"MemoryPressure"}, None, now=100.0)]
['True', 'False', 'False', 'True']
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from .timefmt import rfc3339

READY, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE = "Ready", "MemoryPressure", "DiskPressure", "PIDPressure"
#: the kubelet's order (defaultNodeStatusFuncs)
ORDER = (MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE, READY)

# condition -> ((reason, message) when True, (reason, message) when False)
_PRESSURE_TEXT = {
    MEMORY_PRESSURE: (("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
                      ("KubeletHasSufficientMemory", "kubelet has sufficient memory available")),
    DISK_PRESSURE: (("KubeletHasDiskPressure", "kubelet has disk pressure"),
                    ("KubeletHasNoDiskPressure", "kubelet has no disk pressure")),
    PID_PRESSURE: (("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
                   ("KubeletHasSufficientPID", "kubelet has sufficient PID available")),
}
READY_TEXT = ("KubeletReady", "kubelet is posting ready status")
NOT_READY_REASON = "KubeletNotReady"


@dataclass(frozen=True)
class NodeCondition:
    """One ``v1.NodeCondition``; times are seconds since the epoch."""

    type: str
    status: str  # "True", "False" or "Unknown"
    reason: str
    message: str
    last_heartbeat_time: float
    last_transition_time: float

    def to_k8s(self) -> dict:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message,
                "lastHeartbeatTime": rfc3339(self.last_heartbeat_time),
                "lastTransitionTime": rfc3339(self.last_transition_time)}

    def content(self) -> Tuple[str, str, str, str]:
        """What a reader compares to see a change (the kubelet ignores heartbeat times there)."""
        return (self.type, self.status, self.reason, self.message)


def observed(pressure: Iterable[str], not_ready: Optional[str]) -> Dict[str, Tuple[str, str, str]]:
    """``{type: (status, reason, message)}`` for the pressure conditions raised and the readiness problem."""
    raised = set(pressure)
    out: Dict[str, Tuple[str, str, str]] = {}
    for kind, (yes, no) in _PRESSURE_TEXT.items():
        out[kind] = ("True",) + yes if kind in raised else ("False",) + no
    out[READY] = ("False", NOT_READY_REASON, not_ready) if not_ready else ("True",) + READY_TEXT
    return out


class ConditionTracker:
    """Keeps each condition's last transition time between status updates (thread-safe)."""

    def __init__(self) -> None:
        self._last: Dict[str, NodeCondition] = {}
        self._lock = threading.Lock()

    def update(self, pressure: Iterable[str], not_ready: Optional[str], now: float) -> List[NodeCondition]:
        """The conditions at ``now``, in the kubelet's order; a flip moves ``lastTransitionTime`` to ``now``."""
        seen = observed(pressure, not_ready)
        out = []
        with self._lock:
            for kind in ORDER:
                status, reason, message = seen[kind]
                before = self._last.get(kind)
                since = before.last_transition_time if before is not None and before.status == status else now
                cond = NodeCondition(kind, status, reason, message, now, since)
                self._last[kind] = cond
                out.append(cond)
        return out
