"""``pynuma.discover`` and ``pynuma.features`` stay callable after their modules are imported directly."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fixtures.sysfs_builder import Machine


@pytest.mark.parametrize("first_import", ["import pynuma.discover.devices", "import pynuma.discover",
                                          "from pynuma.discover import numa", "import pynuma.features"])
def test_functions_survive_their_module_being_imported_first(tmp_path, first_import):
    root = Machine(packages=1, nodes_per_package=2, cores_per_node=1).write(tmp_path)
    code = (f"{first_import}\nimport pynuma\n"
            f"print(pynuma.discover({str(root)!r}).online_cpus)\n"
            "print(sorted(pynuma.features())[:1])\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "0-1"
