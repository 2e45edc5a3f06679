"""Prometheus metrics of a :class:`~pynuma.agent.NodeAgent`, served with prometheus-client.

>>> sink = PrometheusSink(9101, "127.0.0.1")          # doctest: +SKIP
>>> agent = NodeAgent(sinks=[sink]); agent.start()    # http://127.0.0.1:9101/metrics

Metrics are read from the agent at scrape time (the last eviction cycle,
status and Lease); names and units follow Prometheus conventions (base
units, ``_bytes`` / ``_seconds`` suffixes, ``_total`` on counters only).
The collector lives in its own registry: the process-wide default
registry of prometheus-client is never touched.  prometheus-client is the
``metrics`` extra, imported only when metrics are asked for.
"""
from __future__ import annotations

from typing import Iterator, Optional

from ..errors import Unsupported

_CONDITION_STATUSES = ("true", "false", "unknown")
_RESOURCE_UNITS = {"cpu": "core", "pods": "integer"}


def _client():
    try:
        import prometheus_client
    except ImportError:
        raise Unsupported("metrics need prometheus-client (pip install 'pynuma[metrics]')") from None
    return prometheus_client


def signal_unit(signal: str) -> str:
    """The base unit of an eviction signal's numbers: ``bytes``, ``inodes`` or ``pids``."""
    if "inodes" in signal.lower():
        return "inodes"
    if signal.startswith("pid."):
        return "pids"
    return "bytes"


_UNITS = ("bytes", "inodes", "pids")  # what signal_unit() gives
# every family a scrape may hold, named up front: a scrape asking for some (``?name[]=...``) finds them
COUNTERS = ("pynuma_sync_cycles", "pynuma_evictions")
GAUGES = ("pynuma_numa_node_memory_bytes", "pynuma_numa_node_cpus", "pynuma_numa_node_hugepages",
          "pynuma_numa_node_hugepages_bytes", "pynuma_numa_distance", "pynuma_node_condition", "pynuma_node_capacity",
          "pynuma_node_allocatable", "pynuma_lease_held", "pynuma_lease_renew_time_seconds",
          "pynuma_lease_duration_seconds", "pynuma_sync_duration_seconds", "pynuma_sync_time_seconds",
          "pynuma_sync_pods", "pynuma_sync_containers", "pynuma_admitted_pods", "pynuma_exclusive_cpus",
          "pynuma_eviction_threshold_met", "pynuma_ledger_requested",
          *(f"pynuma_eviction_{what}_{unit}" for what in ("signal_available", "signal_capacity", "threshold")
            for unit in _UNITS))


class AgentCollector:
    """A prometheus-client collector over one agent's current state."""

    def __init__(self, agent) -> None:
        self.agent = agent

    def describe(self):
        """The families by name only: registration must not read the agent, which may not be ready yet."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        return ([GaugeMetricFamily(name, name) for name in GAUGES]
                + [CounterMetricFamily(name, name) for name in COUNTERS])

    def collect(self) -> Iterator:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        agent = self.agent
        with agent._lock:
            topology, status, lease = agent.topology, agent.last_status, agent._lease
            sync, held = agent.last_sync, agent._held
            thresholds = agent._cycle.state.thresholds or tuple(agent.config.thresholds())
            counts = dict(agent._cycle.evictions)
            syncs = agent._cycle.cycles
            admitted = len(agent._admission.pods)
            exclusive = len(agent._admission.exclusive_cpus())
        yield from self._topology(GaugeMetricFamily, topology)
        if status is not None:
            yield from self._status(GaugeMetricFamily, status)
        yield from self._eviction(GaugeMetricFamily, thresholds, sync)
        lease_family = GaugeMetricFamily("pynuma_lease_held", "1 when this agent holds its Lease", labels=["identity"])
        lease_family.add_metric([agent.identity], 1.0 if held else 0.0)
        yield lease_family
        if lease is not None and lease.renew_time is not None:
            yield GaugeMetricFamily("pynuma_lease_renew_time_seconds", "renewTime of the Lease (Unix time)",
                                    value=lease.renew_time)
            yield GaugeMetricFamily("pynuma_lease_duration_seconds", "leaseDurationSeconds of the Lease",
                                    value=lease.lease_duration_s)
        yield CounterMetricFamily("pynuma_sync_cycles", "Eviction cycles run", value=syncs)
        if sync is not None:
            yield GaugeMetricFamily("pynuma_sync_duration_seconds", "Duration of the last eviction cycle",
                                    value=sync.duration_s)
            yield GaugeMetricFamily("pynuma_sync_time_seconds", "When the last eviction cycle ran (Unix time)",
                                    value=sync.time)
            yield GaugeMetricFamily("pynuma_sync_pods", "Pods seen by the last eviction cycle", value=sync.pods)
            yield GaugeMetricFamily("pynuma_sync_containers", "Containers seen by the last eviction cycle",
                                    value=sync.containers)
        evictions = CounterMetricFamily("pynuma_evictions", "Pods the eviction cycles decided to evict, by signal",
                                        labels=["signal"])
        for signal, n in sorted(counts.items()):
            evictions.add_metric([signal], n)
        yield evictions
        yield GaugeMetricFamily("pynuma_admitted_pods", "Pods admitted by the agent and not released",
                                value=admitted)
        yield GaugeMetricFamily("pynuma_exclusive_cpus", "CPUs held exclusively by containers", value=exclusive)
        yield from self._ledger(GaugeMetricFamily)

    @staticmethod
    def _topology(Gauge, topology) -> Iterator:
        memory = Gauge("pynuma_numa_node_memory_bytes", "Memory of a NUMA node", labels=["node"])
        cpus = Gauge("pynuma_numa_node_cpus", "CPUs of a NUMA node", labels=["node"])
        pages = Gauge("pynuma_numa_node_hugepages", "Hugepages in the pool of one size on a NUMA node",
                      labels=["node", "size"])
        page_bytes = Gauge("pynuma_numa_node_hugepages_bytes", "Bytes of the hugepage pool of one size on a NUMA node",
                           labels=["node", "size"])
        for n in topology.numa_nodes:
            memory.add_metric([str(n.id)], float(n.memory_total or 0))
            cpus.add_metric([str(n.id)], float(len(n.cpus)))
            for kb, pool in sorted(n.hugepages.items()):
                size = str(kb * 1024)
                pages.add_metric([str(n.id), size], float(pool.total))
                page_bytes.add_metric([str(n.id), size], float(pool.total * kb * 1024))
        yield from (memory, cpus, pages, page_bytes)
        d = topology.distances
        if d is not None:
            dist = Gauge("pynuma_numa_distance", "NUMA distance between two nodes (SLIT units, 10 = local)",
                         labels=["node", "to"])
            for i, a in enumerate(d.nodes):
                for j, b in enumerate(d.nodes):
                    dist.add_metric([str(a), str(b)], float(d.matrix[i][j]))
            yield dist

    @staticmethod
    def _status(Gauge, status) -> Iterator:
        cond = Gauge("pynuma_node_condition", "Node condition status (1 for the status it has)",
                     labels=["condition", "status"])
        for c in status.conditions:
            for s in _CONDITION_STATUSES:
                cond.add_metric([c.type, s], 1.0 if c.status.lower() == s else 0.0)
        yield cond
        for name, values in (("capacity", status.capacity), ("allocatable", status.allocatable)):
            family = Gauge(f"pynuma_node_{name}", f"Node {name} per resource", labels=["resource", "unit"])
            for resource, q in sorted(values.items()):
                family.add_metric([resource, _RESOURCE_UNITS.get(resource, "byte")], float(q.amount))
            yield family

    @staticmethod
    def _eviction(Gauge, thresholds, sync) -> Iterator:
        from ..policy.eviction.met import threshold_quantity

        observations = sync.decision.observations if sync is not None else {}
        met = set(sync.decision.met) if sync is not None else set()
        families = {}

        def family(name: str, help_text: str, labels) -> object:
            if name not in families:
                families[name] = Gauge(name, help_text, labels=labels)
            return families[name]

        for signal, obs in sorted(observations.items()):
            unit = signal_unit(signal)
            family(f"pynuma_eviction_signal_available_{unit}", "Available amount of an eviction signal",
                   ["signal"]).add_metric([signal], float(obs.available))
            family(f"pynuma_eviction_signal_capacity_{unit}", "Capacity of an eviction signal",
                   ["signal"]).add_metric([signal], float(obs.capacity))
        seen = set()
        for t in thresholds:
            kind = "hard" if t.is_hard else "soft"
            if (t.signal, kind) in seen:
                continue
            seen.add((t.signal, kind))
            obs = observations.get(t.signal)
            if obs is not None:
                family(f"pynuma_eviction_threshold_{signal_unit(t.signal)}",
                       "Available level below which an eviction threshold is met",
                       ["signal", "kind"]).add_metric([t.signal, kind], float(threshold_quantity(t, obs)))
            family("pynuma_eviction_threshold_met", "1 when an eviction threshold is met",
                   ["signal", "kind"]).add_metric([t.signal, kind], 1.0 if t in met else 0.0)
        yield from families.values()

    def _ledger(self, Gauge) -> Iterator:
        totals = getattr(self.agent._admission, "totals", None)  # only a ledger-backed agent has totals
        if not callable(totals):
            return
        family = Gauge("pynuma_ledger_requested", "Resources the node's ledger holds for pods (cores, bytes, counts)",
                       labels=["resource"])
        for resource, amount in sorted(totals().items()):
            family.add_metric([str(resource)], float(amount))
        yield family


def registry_for(agent):
    """A fresh registry holding only this agent's collector."""
    client = _client()
    registry = client.CollectorRegistry(auto_describe=False)
    registry.register(AgentCollector(agent))
    return registry


def render(agent) -> bytes:
    """The text exposition of the agent's metrics (what a scrape returns)."""
    return _client().generate_latest(registry_for(agent))


class PrometheusSink:
    """Serves ``/metrics`` on ``address:port`` while the agent runs (``start()`` to ``stop()``)."""

    def __init__(self, port: int, address: str = "0.0.0.0", idle_timeout_s: float = 10.0) -> None:
        _client()  # fail at construction, with the install hint, not at the first scrape
        self.port, self.address = port, address
        self.idle_timeout_s = idle_timeout_s  # a client silent this long is dropped (and its thread ends)
        self.registry = None
        self._server: Optional[object] = None
        self._thread = None

    def attach(self, agent) -> None:
        self.registry = registry_for(agent)

    def open(self) -> None:
        if self._server is not None or self.registry is None:
            return
        from ..errors import InputError, PynumaError

        try:
            self._server, self._thread = _client().start_http_server(self.port, self.address, self.registry)
        except OSError as err:
            raise PynumaError(f"metrics on {self.address}:{self.port}: {err.strerror or err}") from None
        except ValueError as err:  # an address no resolver takes ("a..b": the idna codec refuses it)
            raise InputError(f"metrics address {self.address!r}: not a host name or address ({err})") from None
        # prometheus-client's handler waits for ever on a silent client, one thread each: this server's
        # handlers (not the library's class, which other users in this process share) give up instead
        handler = self._server.RequestHandlerClass
        self._server.RequestHandlerClass = type("IdleTimeoutHandler", (handler,), {"timeout": self.idle_timeout_s})
        self.port = self._server.server_address[1]  # port 0 asked for any free one

    def close(self) -> None:
        server, thread, self._server, self._thread = self._server, self._thread, None, None
        if server is not None:
            server.shutdown()
            server.server_close()
            thread.join()

    # metrics are read at scrape time: nothing to do when objects are published
    def publish_lease(self, lease) -> None:
        pass

    def publish_status(self, node) -> None:
        pass

    def publish_topology(self, nrt) -> None:
        pass

    def __repr__(self) -> str:
        return f"PrometheusSink({self.address}:{self.port})"
