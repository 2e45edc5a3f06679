"""``pynuma topology`` must cost little more than the interpreter's start:
on a regular machine it imports none of the heavy standard modules.

Run with ``python -S`` so that nothing a site hook preloads hides an import.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sysfs_builder import Machine, put

PROJECT = Path(__file__).resolve().parents[2]
# each costs milliseconds on a fresh interpreter (typing and re ~5-10 ms, collections ~2 ms); __future__
# is a real module too (~0.2 ms), imported by the first `from __future__ import annotations` that runs,
# and operator (~0.4 ms) is a Python wrapper around the builtin _operator
HEAVY = {"typing", "re", "collections", "dataclasses", "enum", "inspect", "json", "argparse", "importlib.util",
         "pathlib", "types", "__future__", "operator"}

PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
from pynuma.cli import main
import io
out, sys.stdout = sys.stdout, io.StringIO()
code = main(["topology", "--json", "--root", sys.argv[2]])
sys.stdout = out
print(code, sorted(set(sys.modules) - before))
"""


@pytest.mark.parametrize("devices", [False, True], ids=["bare", "with-devices"])
@pytest.mark.parametrize("pure", ["0", "1"])
def test_topology_json_imports_nothing_heavy(tmp_path, pure, devices):
    from pynuma import _impl

    if pure == "0" and not (_impl.native_available("fsread") and _impl.native_available("bitmap")):
        pytest.skip("native core not built: the budget is the native path's")
    root = Machine(packages=2, nodes_per_package=2, cores_per_node=2, threads=2).write(tmp_path)
    if devices:  # a real host always has some: their readers count too
        put(root, "/sys/bus/pci/devices/0000:00:1f.0/uevent", "PCI_CLASS=20000\nPCI_ID=8086:1533\n")
        put(root, "/sys/bus/pci/devices/0000:00:1f.0/numa_node", "1\n")
        put(root, "/sys/class/net/eth0/address", "52:54:00:12:34:56\n")
    env = {"PYNUMA_PURE": pure, "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-S", "-c", PROBE, str(PROJECT), str(root)], capture_output=True,
                         text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    code, _, imported = res.stdout.strip().partition(" ")
    assert code == "0"
    imported = set(json.loads(imported.replace("'", '"')))
    assert "pynuma.discover" in imported
    if pure == "1":
        return  # the pure twins may take what they need; the budget is the native path's
    assert ("pynuma.discover.devices" in imported) == devices
    assert not imported & HEAVY, sorted(imported & HEAVY)


def test_the_pynuma_command_is_a_plain_launcher():
    # pip's generated console-script wrapper imports re; bin/pynuma does not
    text = (PROJECT / "bin" / "pynuma").read_text()
    assert text.startswith("#!python\n")
    imports = [node for node in ast.walk(ast.parse(text)) if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = sorted(alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                   for node in imports for alias in node.names)
    assert names == ["pynuma.__main__.launch"]
