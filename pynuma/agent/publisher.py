"""What the agent publishes and when: the Lease on its period, the status on change or report period.

The kubelet's NodeLease split (KEP-589): the Lease is the heartbeat,
renewed every ``nodeStatusUpdateFrequency``; the status is computed as
often but published only when its content changed (heartbeat times
aside) or ``nodeStatusReportFrequency`` passed since the last publication.
The NodeResourceTopology follows the same rule.  A sink that fails is
recorded in ``agent.errors`` and does not keep the others from publishing.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional


class Publisher:
    """Sinks of one agent and the schedule of what is due."""

    def __init__(self, agent) -> None:
        self.agent = agent
        self.sinks: List[Any] = []
        self.next_lease = -math.inf
        self.next_sync = -math.inf
        self.status_content: Optional[tuple] = None
        self.status_published_at = -math.inf
        self.nrt_published: Optional[dict] = None
        self.nrt_published_at = -math.inf
        self.published = {"lease": 0, "status": 0, "topology": 0}

    def add(self, sink: Any) -> None:
        for name in ("publish_lease", "publish_status", "publish_topology"):
            if not callable(getattr(sink, name, None)):
                raise TypeError(f"{sink!r} is not a sink: it has no {name}()")
        attach = getattr(sink, "attach", None)
        if callable(attach):
            attach(self.agent)
        self.sinks.append(sink)

    def _each(self, method: str, obj: dict, t: float) -> None:
        delivered = True
        for sink in self.sinks:
            try:
                getattr(sink, method)(obj)
            except Exception as err:  # one broken sink must not silence the others or stop the agent
                delivered = False
                reason = f"{err.filename}: {err.strerror}" if isinstance(err, OSError) and err.filename else \
                    f"{type(err).__name__}: {err}"
                self.agent.errors.append((t, f"{sink!r}.{method}", reason))
        if delivered:  # counted only when every sink took it
            self.published[method.split("_", 1)[1]] += 1

    def open(self) -> None:
        for sink in self.sinks:
            if callable(getattr(sink, "open", None)):
                sink.open()

    def close(self) -> None:
        for sink in self.sinks:
            if callable(getattr(sink, "close", None)):
                try:
                    sink.close()
                except Exception as err:
                    self.agent.errors.append((0.0, f"{sink!r}.close", str(err)))

    # -- what is published ---------------------------------------------------------------------------
    def lease(self, lease) -> None:
        self._each("publish_lease", lease.to_k8s(), lease.renew_time or 0.0)

    def status(self, t: float, force: bool = False) -> bool:
        """Compute the status; publish it when it changed or the report period passed. Whether it did."""
        status = self.agent.status(t)
        content = status.content()
        period = self.agent.config.node_status_report_frequency_s
        if not force and content == self.status_content and t - self.status_published_at < period:
            return False
        self._each("publish_status", status.to_node(), t)
        self.status_content, self.status_published_at = content, t
        return True

    def topology(self, t: float, force: bool = False) -> bool:
        """Build the NodeResourceTopology; publish it when it changed or the report period passed."""
        nrt = self.agent.nrt()
        period = self.agent.config.node_status_report_frequency_s
        if not force and nrt == self.nrt_published and t - self.nrt_published_at < period:
            return False
        self._each("publish_topology", nrt, t)
        self.nrt_published, self.nrt_published_at = nrt, t
        return True

    def step(self, t: float) -> float:
        """Everything due at ``t``; returns when the next thing is due."""
        cfg = self.agent.config
        if t >= self.next_lease:
            self.agent.lease(t)
            self.next_lease = t + cfg.node_status_update_frequency_s
        if not self.agent._held:
            return self.next_lease  # a standby: the holder syncs and publishes
        if t >= self.next_sync:
            self.agent.sync(t)
            self.next_sync = t + cfg.sync_frequency_s
        self.status(t)
        self.topology(t)
        period = cfg.node_status_report_frequency_s
        return min(self.next_lease, self.next_sync, self.status_published_at + period,
                   self.nrt_published_at + period)
