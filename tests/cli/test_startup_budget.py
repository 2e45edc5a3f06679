"""The read-only commands (and ``pynuma run``) import none of the heavy standard modules they do not need.

Each costs milliseconds on a fresh interpreter (typing ~5-15 ms, dataclasses with
inspect ~15-25, re ~5-9, logging ~10-20, PyYAML ~45), and a command's whole start-up
budget is 25 ms over the interpreter's (10 ms for ``run``).  Run with ``python -S``
so nothing a site hook preloads hides an import; the budget is the native path's.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma import _impl

PROJECT = Path(__file__).resolve().parents[2]

# never needed by these commands
HEAVY = {"typing", "re", "dataclasses", "inspect", "fractions", "decimal", "yaml", "logging", "argparse",
         "tempfile", "ast", "tokenize", "enum", "shutil", "locale", "gettext", "datetime", "random", "json",
         "pathlib", "subprocess", "threading"}
# collections (~3 ms) only where a namedtuple or collections.abc.Mapping is part of the job
NO_COLLECTIONS = HEAVY | {"collections"}

POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: 1234}
spec:
  containers:
  - name: app
    resources:
      requests: {cpu: "2", memory: 1Gi}
      limits: {cpu: "2", memory: 1Gi}
"""

PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
from pynuma.cli import main
import io
out, sys.stdout = sys.stdout, io.StringIO()
code = main(sys.argv[2:])
sys.stdout = out
print(code, sorted(set(sys.modules) - before))
"""


def _state_file(tmp_path):
    from pynuma.cpuset import CPUSet
    from pynuma.state.cpu_checkpoint import dumps

    path = tmp_path / "cpu_manager_state"
    path.write_text(dumps("static", CPUSet(range(2)), {}))
    return str(path)


def _memory_state_file(tmp_path):
    from pynuma.policy.memorymanager.state import Block, MemoryState, MemoryTable, NUMANodeState
    from pynuma.state.memory_checkpoint import write_checkpoint

    table = MemoryTable(2 << 30, 512 << 20, 1536 << 20, 1 << 30, 512 << 20)
    path = tmp_path / "memory_manager_state"
    write_checkpoint(str(path), "Static", MemoryState({0: NUMANodeState(1, {"memory": table}, [0])},
                                                     {"uid": {"app": [Block((0,), "memory", 1 << 30)]}}))
    return str(path)


CASES = [
    ("hugepages", lambda tmp: ["hugepages"], NO_COLLECTIONS),
    ("hugepages --json", lambda tmp: ["hugepages", "--json"], NO_COLLECTIONS),
    ("cgroups", lambda tmp: ["cgroups"], HEAVY),
    ("show", lambda tmp: ["show"], NO_COLLECTIONS),
    ("eviction", lambda tmp: ["eviction"], HEAVY),
    ("allocatable", lambda tmp: ["allocatable"], HEAVY),
    ("qos", lambda tmp: ["qos", _write(tmp / "pod.yaml", POD)], HEAVY),
    ("qos milli-CPU", lambda tmp: ["qos", _write(tmp / "pod.yaml", POD.replace('cpu: "2"', "cpu: 250m"))], HEAVY),
    ("state show", lambda tmp: ["state", "show", _state_file(tmp)], HEAVY),
    ("state show memory", lambda tmp: ["state", "show", _memory_state_file(tmp)], HEAVY | {"copy"}),
    ("run", lambda tmp: ["run", "--dry-run", "--cpus", "0", "--", "true"], NO_COLLECTIONS),
]


def _write(path, text):
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("label,argv,heavy", CASES, ids=[c[0] for c in CASES])
def test_command_imports_nothing_heavy(tmp_path, label, argv, heavy):
    if not all(_impl.native_available(a) for a in ("fsread", "bitmap", "sys", "cgwalk")):
        pytest.skip("native core not built: the budget is the native path's")
    args = argv(tmp_path)
    res = subprocess.run([sys.executable, "-S", "-c", PROBE, str(PROJECT), *args], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert res.returncode == 0, res.stderr
    code, _, imported = res.stdout.strip().rpartition("\n")[2].partition(" ")
    assert code == "0", res.stdout
    imported = set(json.loads(imported.replace("'", '"')))
    assert any(m.startswith("pynuma.cli.") for m in imported)
    assert not imported & heavy, sorted(imported & heavy)


# modules a command has no use for in its plain form (each costs ~0.5 ms on a small VM)
UNNEEDED = [
    ("allocatable", lambda tmp: ["allocatable"], {"pynuma.discover", "pynuma.discover.cpus", "pynuma.model"}),
    # no pods and no pressure: nothing to rank, message or admit
    ("eviction", lambda tmp: ["eviction"], {"pynuma.pod", "pynuma.policy.eviction.ranking",
                                            "pynuma.policy.eviction.podstats",
                                            "pynuma.policy.eviction.local_storage",
                                            "pynuma.policy.eviction.admission",
                                            # shared libraries to load, for a gcd and a float32 rounding
                                            "math", "struct", "_struct"}),
    ("run", lambda tmp: ["run", "--dry-run", "--cpus", "0", "--", "true"], {"mmap"}),
    ("show", lambda tmp: ["show"], {"mmap"}),
]


@pytest.mark.parametrize("label,argv,unneeded", UNNEEDED, ids=[c[0] for c in UNNEEDED])
def test_command_skips_pynuma_modules_it_does_not_use(tmp_path, label, argv, unneeded):
    res = subprocess.run([sys.executable, "-S", "-c", PROBE, str(PROJECT), *argv(tmp_path)], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    code, _, imported = res.stdout.strip().rpartition("\n")[2].partition(" ")
    assert code == "0", res.stdout + res.stderr
    imported = set(json.loads(imported.replace("'", '"')))
    assert not imported & unneeded, sorted(imported & unneeded)
