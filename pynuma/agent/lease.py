"""``Lease``: the node's heartbeat, as the kubelet's NodeLease (``coordination.k8s.io/v1``).

A reader decides whether the agent is alive from the Lease alone::

    lease = Lease.from_k8s(json.load(open("lease.json")))
    lease.alive(time.time())      # renewTime + leaseDurationSeconds still ahead

The agent renews it every ``nodeStatusUpdateFrequency`` (10 s); it goes
stale ``nodeLeaseDurationSeconds`` (40 s) after the last renewal, whether
the agent stopped, hung or was killed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .timefmt import micro_time, parse_time

API_VERSION = "coordination.k8s.io/v1"
NODE_LEASE_NAMESPACE = "kube-node-lease"


@dataclass(frozen=True)
class Lease:
    """One Lease record; times are seconds since the epoch, ``None`` when unset."""

    name: str
    holder_identity: Optional[str] = None
    lease_duration_s: int = 40
    acquire_time: Optional[float] = None
    renew_time: Optional[float] = None
    lease_transitions: int = 0
    namespace: str = NODE_LEASE_NAMESPACE

    @property
    def expires_at(self) -> Optional[float]:
        """When the lease goes stale (``None``: never renewed)."""
        return None if self.renew_time is None else self.renew_time + self.lease_duration_s

    def alive(self, now: float) -> bool:
        """Whether a holder renewed it less than ``leaseDurationSeconds`` before ``now``."""
        return bool(self.holder_identity) and self.expires_at is not None and now < self.expires_at

    def held_by(self, identity: str, now: float) -> bool:
        return self.alive(now) and self.holder_identity == identity

    def to_k8s(self) -> dict:
        """The ``coordination.k8s.io/v1`` Lease object."""
        spec: dict = {"leaseDurationSeconds": self.lease_duration_s, "leaseTransitions": self.lease_transitions}
        if self.holder_identity:
            spec["holderIdentity"] = self.holder_identity
        if self.acquire_time is not None:
            spec["acquireTime"] = micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = micro_time(self.renew_time)
        return {"apiVersion": API_VERSION, "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec}

    @classmethod
    def from_k8s(cls, obj: Mapping[str, Any]) -> "Lease":
        """Read a Lease object back; ``ValueError`` naming what is wrong."""
        if not isinstance(obj, Mapping) or obj.get("kind") != "Lease":
            raise ValueError("not a Lease object")
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}

        def when(key: str) -> Optional[float]:
            return None if spec.get(key) is None else parse_time(spec[key])

        duration = spec.get("leaseDurationSeconds", 0)
        transitions = spec.get("leaseTransitions", 0)
        if isinstance(duration, bool) or not isinstance(duration, int):
            raise ValueError("spec.leaseDurationSeconds: expected an integer")
        if isinstance(transitions, bool) or not isinstance(transitions, int):
            raise ValueError("spec.leaseTransitions: expected an integer")
        return cls(str(meta.get("name", "")), spec.get("holderIdentity") or None, duration,
                   when("acquireTime"), when("renewTime"), transitions,
                   str(meta.get("namespace") or NODE_LEASE_NAMESPACE))
