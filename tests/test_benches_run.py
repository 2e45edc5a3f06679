"""Every benchmark in ``bench/`` still runs to the end, at its smallest size.

The benchmarks are not in the suite's timings (no timed asserts), but one
that no longer runs -- a renamed private helper, a changed signature -- is
only noticed when someone needs its figures.  Each runs here once, with
sizes and rounds cut to seconds, and must end without a traceback having
printed a table (exit 1 is a bench saying a target was missed: timings on a
loaded test machine mean nothing, so that is not a failure here).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.vectors import conformance_dir

PROJECT = Path(__file__).resolve().parents[1]
LAUNCHER = PROJECT / "bin" / "pynuma"

RUNS = {
    "bench_allocate.py": ["--rounds", "1"],
    "bench_agent.py": ["--repeat", "1", "--idle", "0.5", "--pods", "4", "--containers", "8"],
    "bench_bind.py": ["--rounds", "1"],
    "bench_bitmap.py": ["--rounds", "1"],
    "bench_cgroups.py": ["--sizes", "20", "--rounds", "1"],
    "bench_cli_startup.py": ["--rounds", "1", "--python", sys.executable, "--pynuma", str(LAUNCHER)],
    "bench_discovery.py": ["--no-process", "--rounds", "1", "--only", "2arm-2c"],
    "bench_fsread.py": ["--rounds", "1"],
    "bench_ledger.py": ["--seconds", "0.5", "--rounds", "1", "--ops", "20"],
    "bench_membench.py": ["--rounds", "1"],
    "bench_merge.py": ["--quick"],
    "bench_procs.py": ["--spawn", "4", "--rounds", "1"],
}


def test_every_bench_is_listed():
    assert sorted(p.name for p in (PROJECT / "bench").glob("bench_*.py")) == sorted(RUNS)


@pytest.mark.parametrize("script", sorted(RUNS))
def test_bench_runs(script, tmp_path):
    if script == "bench_discovery.py" and not (conformance_dir() / "topology" / "2arm-2c").is_dir():
        pytest.skip("no topology corpus (PYNUMA_CONFORMANCE_DIR)")
    env = dict(os.environ, PYTHONPATH=str(PROJECT), TMPDIR=str(tmp_path))
    res = subprocess.run([sys.executable, str(PROJECT / "bench" / script), *RUNS[script]], cwd=PROJECT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1) and "Traceback" not in res.stderr, \
        f"{script} exited {res.returncode}:\n{res.stderr[-2000:]}"
    assert len(res.stdout.splitlines()) >= 3, res.stdout
