"""One human format for sizes across commands: binary units, same precision; raw quantities in --json."""
from __future__ import annotations

import json

import pytest

from pynuma.cli import main
from pynuma.cli._units import human_bytes

GI = 1 << 30


@pytest.mark.parametrize("n, text", [
    (None, "-"), (0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (100 << 20, "100 MiB"),
    ((99 << 20) + (1 << 19), "99.5 MiB"), (int(3.94 * GI), "3.9 GiB"), (16 * GI, "16 GiB"), (1 << 40, "1 TiB"),
    (-(2 << 20), "-2 MiB"), (3 << 60, "3 EiB"),
])
def test_human_bytes(n, text):
    assert human_bytes(n) == text


def test_unknown_placeholder():
    assert human_bytes(None, unknown="?") == "?"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/meminfo").write_text(f"MemTotal: {16 * GI // 1024} kB\n")
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-3\n")
    return str(tmp_path)


def _out(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_allocatable_table_is_human_json_is_the_kubelets(root, capsys):
    text = _out(capsys, "allocatable", "--root", root, "--kube-reserved", "memory=1536Mi")
    row = next(line for line in text.splitlines() if line.startswith("memory "))
    assert row.split()[1:5] == ["16", "GiB", "1.5", "GiB"]
    data = json.loads(_out(capsys, "allocatable", "--root", root, "--kube-reserved", "memory=1536Mi", "--json"))
    assert data["capacity"]["memory"] == "16Gi"


def test_qos_sizes(tmp_path, capsys):
    pod = tmp_path / "pod.yaml"
    pod.write_text("metadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                   "    resources: {requests: {memory: 1536Mi}}\n")
    text = _out(capsys, "qos", str(pod), "--memory-capacity", "64Gi")
    assert "memory capacity: 64 GiB" in text and "memory request 1.5 GiB" in text
    data = json.loads(_out(capsys, "qos", str(pod), "--memory-capacity", "64Gi", "--json"))
    assert data["pods"][0]["containers"][0]["memory_request"] == "1536Mi"


def test_eviction_sizes(tmp_path, capsys):
    stats = tmp_path / "summary.json"
    stats.write_text(json.dumps({"node": {"memory": {"availableBytes": GI + GI // 2, "workingSetBytes": GI}}}))
    text = _out(capsys, "eviction", "--stats", str(stats), "--eviction-hard", "memory.available<100Mi")
    row = next(line for line in text.splitlines() if line.startswith("memory.available"))
    assert row.split()[1:3] == ["1.5", "GiB"] and "100Mi" in row  # the threshold as the flag says it
