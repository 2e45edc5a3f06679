"""Prometheus metrics: scraped over loopback, parsed with prometheus-client's parser, checked by promtool."""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import urllib.request

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from pynuma.agent import AgentConfig, NodeAgent  # noqa: E402
from pynuma.export.prometheus import COUNTERS, GAUGES, PrometheusSink, render  # noqa: E402
from tests.agent.conftest import write_node  # noqa: E402


def _samples(text):
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _scrape(port, query=""):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics{query}", timeout=10) as r:
        return r.read().decode()


def test_scrape_over_loopback_matches_the_agent(tmp_path):
    root = write_node(tmp_path / "node", pods=3)
    sink = PrometheusSink(0, "127.0.0.1")
    threads = set(threading.enumerate())
    cfg = AgentConfig(eviction_hard={"memory.available": "63Gi"}, node_status_update_frequency_s=0.05,
                      sync_frequency_s=0.05)
    with NodeAgent(root, cfg, sinks=[sink]) as agent:
        agent.step()
        agent.start()
        try:
            text = _scrape(sink.port)
            some = _scrape(sink.port, "?name[]=pynuma_lease_held&name[]=pynuma_sync_cycles_total")
        finally:
            agent.stop()
        port = sink.port
        topo, sync = agent.topology, agent.last_sync
    samples = _samples(text)
    # every family is named up front, so a scrape may ask for some by name
    assert {f.name for f in text_string_to_metric_families(text)} <= set(GAUGES) | set(COUNTERS)
    assert {name for name, _labels in _samples(some)} == {"pynuma_lease_held", "pynuma_sync_cycles_total"}
    for n in topo.numa_nodes:
        assert samples[("pynuma_numa_node_memory_bytes", (("node", str(n.id)),))] == n.memory_total
        assert samples[("pynuma_numa_node_cpus", (("node", str(n.id)),))] == len(n.cpus)
        for kb, pool in n.hugepages.items():
            key = ("pynuma_numa_node_hugepages", (("node", str(n.id)), ("size", str(kb * 1024))))
            assert samples[key] == pool.total
    assert samples[("pynuma_numa_distance", (("node", "0"), ("to", "1")))] == topo.distances.between(0, 1)
    assert samples[("pynuma_node_condition", (("condition", "MemoryPressure"), ("status", "true")))] == 1
    assert samples[("pynuma_node_condition", (("condition", "Ready"), ("status", "true")))] == 1
    assert samples[("pynuma_eviction_threshold_met", (("kind", "hard"), ("signal", "memory.available")))] == 1
    assert samples[("pynuma_eviction_threshold_bytes", (("kind", "hard"), ("signal", "memory.available")))] == 63 << 30
    observed = sync.decision.observations["memory.available"]
    assert samples[("pynuma_eviction_signal_available_bytes", (("signal", "memory.available"),))] == observed.available
    assert samples[("pynuma_eviction_signal_available_pids", (("signal", "pid.available"),))] == 32768 - 300
    assert samples[("pynuma_lease_held", (("identity", "worker-7"),))] == 1
    assert samples[("pynuma_lease_duration_seconds", ())] == 40
    assert samples[("pynuma_sync_cycles_total", ())] >= 1
    assert samples[("pynuma_evictions_total", (("signal", "memory.available"),))] >= 1
    assert samples[("pynuma_sync_containers", ())] == 6
    # the endpoint went away with stop(): nothing listens, no thread is left
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    assert set(threading.enumerate()) == threads


def test_default_registry_is_untouched(node_root):
    from prometheus_client import REGISTRY

    before = set(REGISTRY._collector_to_names)
    with NodeAgent(node_root) as agent:
        agent.step()
        assert b"pynuma_numa_node_memory_bytes" in render(agent)
    assert set(REGISTRY._collector_to_names) == before


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_accepts_the_exposition(tmp_path):
    root = write_node(tmp_path / "node", pods=2)
    with NodeAgent(root, AgentConfig(eviction_soft={"memory.available": "1Gi"},
                                     eviction_soft_grace_period={"memory.available": "1m"})) as agent:
        agent.step()
        text = render(agent)
    done = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


def test_a_port_in_use_is_one_clear_error(node_root):
    from pynuma.errors import PynumaError

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        sink = PrometheusSink(busy.getsockname()[1], "127.0.0.1")
        with NodeAgent(node_root, sinks=[sink]) as agent:
            with pytest.raises(PynumaError, match="metrics on 127.0.0.1"):
                agent.start()
            assert not agent.running


def test_a_silent_client_is_dropped_and_others_are_served(node_root):
    sink = PrometheusSink(0, "127.0.0.1", idle_timeout_s=0.5)
    with NodeAgent(node_root, sinks=[sink]) as agent:
        agent.step()
        agent.start()
        try:
            silent = socket.create_connection(("127.0.0.1", sink.port), timeout=10)
            silent.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
            assert "pynuma_lease_held" in _scrape(sink.port)
            assert silent.recv(1024) == b""  # the server closed it after its idle timeout
            silent.close()
        finally:
            agent.stop()
