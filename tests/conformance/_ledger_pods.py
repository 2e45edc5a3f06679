"""Pods of the ledger vectors (pod_requests / scheduler_fit / admission_fit) as :class:`pynuma.pod.Pod`."""
from __future__ import annotations

from pynuma.pod import Pod
from pynuma.quantity import Quantity


def pod(raw, name: str = "pod") -> Pod:
    """The compact vector pod: containers, initContainers, overhead, resources, status, scheduling fields."""
    doc = dict(raw)
    doc.setdefault("name", name)
    if "resources" in doc:
        doc["resources"] = {"requests": doc["resources"].get("requests") or {},
                            "limits": doc["resources"].get("limits") or {}}
    return Pod.from_dict(doc)


def quantities(raw) -> dict:
    return {k: Quantity.parse(v) for k, v in (raw or {}).items()}


def same_resources(got, expected) -> bool:
    """Resource maps equal by value (``1024Mi`` == ``1Gi``), absent keys not treated as zero."""
    exp = quantities(expected)
    return set(got) == set(exp) and all(got[k] == exp[k] for k in exp)
