"""NodeAgent step by step, on a thread and under asyncio: publishing rules, concurrency, clean shutdown."""
from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from pynuma.agent import AgentConfig, DirectorySink, NodeAgent
from pynuma.agent.lease import Lease
from pynuma.cgroups.synthetic import MEM_TOTAL
from pynuma.cpuset import CPUSet
from tests.agent.conftest import set_mem_total, write_node

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOUR = 3600.0


class Recorder:
    """A sink that keeps what it was given."""

    def __init__(self):
        self.leases, self.nodes, self.nrts = [], [], []

    def publish_lease(self, obj):
        self.leases.append(obj)

    def publish_status(self, obj):
        self.nodes.append(obj)

    def publish_topology(self, obj):
        self.nrts.append(obj)


def _memory_pressure(node):
    return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "MemoryPressure")


def _fds():
    return sorted(os.listdir("/proc/self/fd"))


def test_step_publishes_what_is_due_and_nothing_else(node_root):
    sink = Recorder()
    cfg = AgentConfig(node_status_update_frequency_s=10, node_status_report_frequency_s=60, sync_frequency_s=10)
    with NodeAgent(node_root, cfg, sinks=[sink]) as agent:
        due = agent.step(now=1000.0)
        assert (len(sink.leases), len(sink.nodes), len(sink.nrts)) == (1, 1, 1)
        assert due == 1010.0
        agent.step(now=1005.0)  # nothing due, nothing changed
        assert (len(sink.leases), len(sink.nodes), len(sink.nrts)) == (1, 1, 1)
        agent.step(now=1010.0)  # the Lease is renewed; the status did not change: not republished
        assert (len(sink.leases), len(sink.nodes)) == (2, 1)
        assert Lease.from_k8s(sink.leases[-1]).renew_time == 1010.0
        agent.step(now=1060.0)  # report period: republished although unchanged
        assert len(sink.nodes) == 2


def test_a_condition_change_is_published_without_waiting_for_the_report_period(node_root):
    sink = Recorder()
    cfg = AgentConfig(eviction_hard={"memory.available": "1Gi"}, node_status_update_frequency_s=HOUR,
                      node_status_report_frequency_s=HOUR, sync_frequency_s=1)
    with NodeAgent(node_root, cfg, sinks=[sink]) as agent:
        agent.step(now=1000.0)
        assert _memory_pressure(sink.nodes[-1]) == "False"
        working_set = MEM_TOTAL - agent.last_sync.decision.observations["memory.available"].available
        set_mem_total(node_root, working_set + (512 << 20))  # memory.available now 512Mi < 1Gi
        agent.step(now=1001.0)
        assert len(sink.nodes) == 2 and _memory_pressure(sink.nodes[-1]) == "True"
        assert len(sink.leases) == 1  # the Lease was not due


def test_the_thread_republishes_a_condition_change_promptly(node_root, tmp_path):
    out = tmp_path / "out"
    cfg = AgentConfig(eviction_hard={"memory.available": "1Gi"}, node_status_update_frequency_s=HOUR,
                      node_status_report_frequency_s=HOUR, sync_frequency_s=0.05)
    with NodeAgent(node_root, cfg, sinks=[DirectorySink(str(out))]) as agent:
        agent.start()
        try:
            _wait(lambda: (out / "node-status.json").exists())
            working_set = MEM_TOTAL - agent.last_sync.decision.observations["memory.available"].available
            set_mem_total(node_root, working_set + (512 << 20))
            _wait(lambda: _memory_pressure(json.loads((out / "node-status.json").read_text())) == "True")
        finally:
            agent.stop()


def _wait(predicate, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not reached in time")


def test_stop_leaves_no_thread_and_no_descriptor(node_root, tmp_path):
    prom = pytest.importorskip("pynuma.export.prometheus")
    pytest.importorskip("prometheus_client")
    fds, threads = _fds(), set(threading.enumerate())
    cfg = AgentConfig(node_status_update_frequency_s=0.05, sync_frequency_s=0.05)
    agent = NodeAgent(node_root, cfg, state_dir=str(tmp_path / "state"),
                      sinks=[DirectorySink(str(tmp_path / "out")), prom.PrometheusSink(0, "127.0.0.1")])
    after_init = _fds()
    for _ in range(2):  # start / stop twice: nothing accumulates
        agent.start()
        time.sleep(0.3)
        assert agent.running and len(threading.enumerate()) > len(threads)
        agent.stop()
        assert not agent.running
        assert set(threading.enumerate()) == threads
        assert _fds() == after_init
    agent.close()
    assert _fds() == fds and set(threading.enumerate()) == threads


def test_lease_goes_stale_within_its_duration_after_stop(node_root, tmp_path):
    out = tmp_path / "out"
    cfg = AgentConfig(node_status_update_frequency_s=0.05, sync_frequency_s=HOUR, node_lease_duration_s=1)
    with NodeAgent(node_root, cfg, sinks=[DirectorySink(str(out))]) as agent:
        agent.start()
        _wait(lambda: (out / "lease.json").exists())
        time.sleep(0.2)
        agent.stop()
        stopped = time.time()
    lease = Lease.from_k8s(json.loads((out / "lease.json").read_text()))
    assert lease.expires_at <= stopped + 1
    assert not lease.alive(stopped + 1)


def test_lease_goes_stale_within_its_duration_after_kill_9(node_root, tmp_path):
    out, cfg = tmp_path / "out", tmp_path / "kubelet.yaml"
    cfg.write_text("kind: KubeletConfiguration\nnodeStatusUpdateFrequency: 50ms\nnodeLeaseDurationSeconds: 1\n")
    proc = subprocess.Popen([sys.executable, "-m", "pynuma", "agent", "--root", node_root, "--config", str(cfg),
                             "--output-dir", str(out)], env=dict(os.environ, PYTHONPATH=PROJECT))
    try:
        _wait(lambda: (out / "lease.json").exists(), timeout=20)
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = time.time()
    finally:
        proc.kill()
        proc.wait()
    lease = Lease.from_k8s(json.loads((out / "lease.json").read_text()))
    assert lease.holder_identity == "worker-7"
    assert lease.expires_at <= killed + 1 and not lease.alive(killed + 1)


def test_concurrent_admit_release_sync_status_keep_the_invariants(node_root, tmp_path):
    cfg = AgentConfig(cpu_manager_policy="static", topology_manager_policy="best-effort",
                      kube_reserved={"cpu": "1"})
    errors = []
    with NodeAgent(node_root, cfg, state_dir=str(tmp_path / "state")) as agent:
        all_cpus = agent.topology.online_cpus

        def admitter(k):
            try:
                for i in range(15):
                    uid = f"pod-{k}-{i}"
                    pod = {"metadata": {"name": uid, "uid": uid}, "spec": {"containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                    "limits": {"cpu": "2", "memory": "1Gi"}}}]}}
                    if agent.admit(pod).admit and i % 2:
                        agent.release(uid)
            except Exception as err:  # pragma: no cover - what the test is for
                errors.append(err)

        def reader():
            try:
                for _ in range(15):
                    agent.sync()
                    assert agent.status().ready
                    agent.nrt()
            except Exception as err:  # pragma: no cover
                errors.append(err)

        threads = [threading.Thread(target=admitter, args=(k,)) for k in range(3)]
        threads += [threading.Thread(target=reader) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        state = agent._admission.cpu_state
        held = [cpus for containers in state.assignments.values() for cpus in containers.values()]
        union = CPUSet()
        for cpus in held:
            assert not (union & cpus), "a CPU given to two containers"
            union = union | cpus
        assert not (union & state.default) and (union | state.default) == all_cpus
        assert set(state.assignments) == {p.uid for p in agent.admitted()}
        free = sum(int(r["available"]) for z in agent.nrt()["zones"] for r in z["resources"] if r["name"] == "cpu")
        assert free == len(all_cpus) - 1 - len(union)
    # the checkpoint on disk says the same as memory
    from pynuma.state.cpu_checkpoint import load_state

    _, restored = load_state(str(tmp_path / "state"), "static")
    assert restored.assignments == state.assignments


def test_asyncio_run_until_stop_and_until_cancel(node_root):
    sink = Recorder()
    cfg = AgentConfig(node_status_update_frequency_s=0.02, sync_frequency_s=0.02)
    threads = set(threading.enumerate())

    async def main():
        with NodeAgent(node_root, cfg, sinks=[sink]) as agent:
            task = asyncio.create_task(agent.run())
            await asyncio.sleep(0.3)
            agent.stop()
            await asyncio.wait_for(task, 5)
            renewals = len(sink.leases)
            assert renewals >= 3 and not agent.running
            task = asyncio.create_task(agent.run(offload=True))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert len(sink.leases) > renewals and not agent.running

    asyncio.run(main())
    assert set(threading.enumerate()) == threads


def test_a_failing_sink_does_not_stop_the_others(node_root):
    class Broken(Recorder):
        def publish_status(self, obj):
            raise OSError("disk full")

    good = Recorder()
    with NodeAgent(node_root, sinks=[Broken(), good]) as agent:
        agent.step()
    assert len(good.nodes) == 1
    assert any("disk full" in message for _, _, message in agent.errors)
    # what a sink refused is not counted as published; what every sink took is
    assert agent.publisher.published["status"] == 0 and agent.publisher.published["lease"] == 1


def test_eviction_callback_gets_the_victim(tmp_path):
    root = write_node(tmp_path / "node", pods=6)
    calls = []
    cfg = AgentConfig(eviction_hard={"memory.available": "63Gi"})  # the 64 GiB fixture is always below
    with NodeAgent(root, cfg, evict=lambda pod, reason, msg: calls.append((pod.uid, reason, msg)) or "done") as agent:
        result = agent.sync()
    assert "MemoryPressure" in result.conditions
    assert len(calls) == 1 and result.outcomes == ("done",)
    uid, reason, message = calls[0]
    assert reason == "Evicted" and "memory" in message
    assert uid == result.evicted[0].uid and result.decision.ranked[0] == f"pod{uid}"


def test_refresh_topology_sees_a_cpu_going_offline(node_root):
    from tests.fixtures.sysfs_builder import put

    with NodeAgent(node_root) as agent:
        assert agent.refresh_topology() is False
        put(node_root, "/sys/devices/system/cpu/online", "0-6\n")
        put(node_root, "/sys/devices/system/cpu/cpu7/online", "0\n")
        put(node_root, "/sys/devices/system/node/node1/cpulist", "4-6\n")
        assert agent.refresh_topology() is True
        assert str(agent.topology.online_cpus) == "0-6"
        assert str(agent.status().capacity["cpu"]) == "7"


def test_embedder_state_is_left_alone(node_root, tmp_path):
    script = f"""
import gc, signal, sys, threading
import pynuma.cli
from pynuma.agent import NodeAgent, AgentConfig
sys.stdout.write("buffered-before ")   # no newline, no flush: must survive
handlers = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT))
try:
    agent = NodeAgent({node_root!r}, AgentConfig(node_status_update_frequency_s=0.05))
    agent.start(); agent.stop(); agent.close()
    rc = pynuma.cli.main(["agent", "--once", "--root", {node_root!r}, "--output-dir", {str(tmp_path / 'o')!r}])
    assert rc == 0, rc
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == handlers
    assert gc.isenabled() and threading.active_count() == 1
finally:
    sys.stdout.write("finally-ran\\n")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=PROJECT))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("buffered-before ") and done.stdout.endswith("finally-ran\n")
