"""``pynuma agent`` as a process: --once, SIGTERM and Ctrl-C stop cleanly, bad input is one line."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pynuma.agent.lease import Lease

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, PYTHONPATH=PROJECT)


def pynuma(*args, **kw):
    return subprocess.run([sys.executable, "-m", "pynuma", *args], capture_output=True, text=True, env=ENV,
                          timeout=120, **kw)


def test_once_writes_every_object_and_exits_0(node_root, tmp_path):
    out, state = tmp_path / "out", tmp_path / "state"
    done = pynuma("agent", "--once", "--root", node_root, "--output-dir", str(out), "--state-dir", str(state),
                  "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["published"] == {"lease": 1, "status": 1, "topology": 1} and summary["errors"] == []
    node = json.loads((out / "node-status.json").read_text())
    lease = Lease.from_k8s(json.loads((out / "lease.json").read_text()))
    nrt = json.loads((out / "noderesourcetopology.json").read_text())
    assert node == summary["node"] and node["metadata"]["name"] == "worker-7"
    assert lease.holder_identity == "worker-7" and lease.alive(time.time())
    assert nrt["kind"] == "NodeResourceTopology" and len(nrt["zones"]) == 2
    assert (state / "cpu_manager_state").exists()
    text = pynuma("agent", "--once", "--root", node_root)
    assert text.returncode == 0 and "Ready" in text.stdout and "KubeletReady" in text.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_loop_cleanly(node_root, tmp_path, sig):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "pynuma", "agent", "--root", node_root, "--output-dir", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        end = time.time() + 30
        while not (out / "noderesourcetopology.json").exists() and time.time() < end:
            time.sleep(0.05)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("args, needle", [
    (["--config", "/nonexistent/kubelet.yaml"], "/nonexistent/kubelet.yaml"),
    (["--root", "/nonexistent-root"], "/nonexistent-root"),
    (["--metrics-port", "70000"], "--metrics-port"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    done = pynuma("agent", "--once", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and needle in done.stderr and "Traceback" not in done.stderr


def test_the_actuator_is_never_pointed_at_a_saved_dump(node_root):
    done = pynuma("agent", "--once", "--root", node_root, "--evict")
    assert done.returncode in (1, 2) and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr and "root" in lines[0], done.stderr


def test_bad_config_content_names_the_file(tmp_path, node_root):
    cfg = tmp_path / "kubelet.yaml"
    cfg.write_text("kind: KubeletConfiguration\nnodeStatusUpdateFrequency: soon\n")
    done = pynuma("agent", "--once", "--root", node_root, "--config", str(cfg))
    assert done.returncode == 2 and str(cfg) in done.stderr and "nodeStatusUpdateFrequency" in done.stderr


def test_export_prometheus_serves_until_sigterm(node_root):
    pytest.importorskip("prometheus_client")
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "pynuma", "export", "prometheus", "--port", str(port),
                             "--address", "127.0.0.1", "--root", node_root],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        body, end = None, time.time() + 30
        while body is None and time.time() < end:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    body = r.read().decode()
            except OSError:
                time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert body is not None and 'pynuma_numa_node_cpus{node="1"} 4.0' in body
    assert proc.returncode == 0, stderr
