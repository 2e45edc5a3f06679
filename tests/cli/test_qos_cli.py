"""``pynuma qos`` run as users run it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  initContainers:
  - name: proxy
    restartPolicy: Always
    resources: {requests: {memory: 256Mi}}
  containers:
  - name: app
    resources: {requests: {memory: 1Gi, cpu: 500m}, limits: {memory: 2Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: pg
    resources: {limits: {memory: 1Gi, cpu: "1"}}
"""


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "qos", *args], capture_output=True, text=True)


@pytest.fixture
def manifest(tmp_path):
    p = tmp_path / "pods.yaml"
    p.write_text(POD)
    return str(p)


def test_json(manifest):
    r = run(manifest, "--memory-capacity", "8Gi", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["memory_capacity"] == 8 << 30
    web, db = out["pods"]
    assert (web["qos"], db["qos"]) == ("Burstable", "Guaranteed")
    scores = {c["name"]: c["oom_score_adj"] for c in web["containers"]}
    assert scores["app"] == 1000 - 1000 * (1 << 30) // (8 << 30)
    assert scores["proxy"] == scores["app"]  # sidecar clamped to the app container
    assert [c["kind"] for c in web["containers"]] == ["sidecar", "regular"]
    assert db["containers"][0]["oom_score_adj"] == -997


def test_table(manifest):
    r = run(manifest, "--memory-capacity", "8Gi")
    assert r.returncode == 0
    assert "pod shop/web: Burstable" in r.stdout and "oom_score_adj 875" in r.stdout


def test_capacity_from_meminfo_of_root(manifest, tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 8388608 kB\n")
    r = run(manifest, "--root", str(tmp_path), "--json")
    assert json.loads(r.stdout)["memory_capacity"] == 8 << 30


@pytest.mark.parametrize("args,needle", [
    (["--memory-capacity", "lots"], "--memory-capacity"),
    (["--memory-capacity", "0"], "--memory-capacity"),
])
def test_bad_input_is_one_line_exit_2(manifest, args, needle):
    r = run(manifest, *args)
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_missing_or_broken_manifest(tmp_path):
    r = run(str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and "nope.yaml" in r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: [unclosed\n")
    r = run(str(bad), "--memory-capacity", "1Gi")
    assert r.returncode == 2 and "bad.yaml" in r.stderr and "Traceback" not in r.stderr
