"""A ledger database edited by hand or by another program is one error naming it, never a traceback."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from pynuma.errors import CheckpointError
from pynuma.ledger.store import Ledger
from pynuma.pod import Pod

from ._fds import open_fds

POD = Pod.from_dict({"name": "web", "uid": "u1", "containers": [
    {"name": "app", "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}]})

DAMAGE = {
    "config not JSON": "UPDATE meta SET value='{x' WHERE key='config'",
    "config a list": "UPDATE meta SET value='[1]' WHERE key='config'",
    "config nested deep": "UPDATE meta SET value='" + "[" * 100_000 + "' WHERE key='config'",
    "generation not a count": "UPDATE meta SET value='abc' WHERE key='generation'",
    "schema not a number": "UPDATE meta SET value='x' WHERE key='schema'",
    "schema from the future": "UPDATE meta SET value='99' WHERE key='schema'",
    "requests not JSON": "UPDATE pods SET requests='{x'",
    "requests infinite": "UPDATE pods SET requests='{\"cpu\": 1e400}'",
    "requests not whole": "UPDATE pods SET requests='{\"cpu\": 1.5}'",
    "a CPU no machine has": "INSERT INTO cpus(cpu, pod_uid, container) VALUES (99999999999, 'u1', 'app')",
    "meta emptied": "DELETE FROM meta",
}


@pytest.mark.parametrize("what", sorted(DAMAGE))
def test_damaged_ledger_is_one_error_naming_it(tmp_path, what):
    path = str(tmp_path / "pynuma-ledger.db")  # the name the CLI gives it in a --state-dir
    with Ledger(path) as ledger:
        ledger.configure(allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"})
        ledger.assume(POD)
    conn = sqlite3.connect(path)
    conn.execute(DAMAGE[what])
    conn.commit()
    conn.close()
    before = open_fds()
    with pytest.raises(CheckpointError, match=f"^{path}: "):
        with Ledger(path) as ledger:
            ledger.snapshot()
            ledger.assume(Pod.from_dict({"name": "b", "uid": "u2", "containers": [{"name": "c"}]}))
    assert open_fds() == before
    res = subprocess.run([sys.executable, "-m", "pynuma", "ledger", "show", "--state-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and res.stderr.startswith(f"pynuma ledger show: error: {path}: "), res.stderr
    assert res.stderr.count("\n") == 1
