"""Bad command lines end in one clear line: exit 1 or 2, one line on stderr, no traceback, no hang.

The corpus (``cli_corpus.py``) covers every command and every kind of file,
quantity, duration, count, pid and cpulist argument.  Each case runs as its
own process: forked from this interpreter (cheap, same entry point as the
launchers), under an address-space cap and a deadline; a sample also runs
as a real ``python -m pynuma`` to show the launcher behaves the same.
``PYNUMA_HOSTILE_JOBS`` sets how many run at once (default 2).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from . import cli_corpus
from ._child import forked_many, one_clear_line, spawned

CASES = cli_corpus.cases()
JOBS = int(os.environ.get("PYNUMA_HOSTILE_JOBS", "2") or 2)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("cli-corpus"))
    paths = cli_corpus.make_inputs(d)
    from tests.fixtures.sysfs_builder import Machine

    machine = os.path.join(d, "machine")
    Machine(packages=2, cores_per_node=2).write(machine)
    saved = os.path.join(d, "topo_pynuma.json")
    subprocess.run([sys.executable, "-m", "pynuma", "topology", "--root", machine, "--save", saved], check=True)
    paths["TOPO_PYNUMA"] = saved
    return paths


@pytest.fixture(scope="module")
def outcomes(inputs):
    """Every case run once (in parallel children); ``{case id: Outcome}``."""
    argvs = [cli_corpus.substitute(argv, inputs) for _, argv in CASES]
    return dict(zip((cid for cid, _ in CASES), forked_many(argvs, JOBS, timeout=60)))


def test_case_ids_are_unique():
    ids = [cid for cid, _ in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) > 400


@pytest.mark.parametrize("case", [cid for cid, _ in CASES])
def test_bad_input_is_one_clear_line(outcomes, case):
    why = one_clear_line(outcomes[case])
    assert not why, f"{case}: {why}"


SAMPLE = ["topology-topology-fifo", "admit-pod-devzero", "qos-pod-deepyaml", "eviction-stats-sparse",
          "allocate-available-1", "qos-memory-capacity-0", "eviction-transition-6", "state-show-deepjson",
          "no-args-topology", "unknown-command"]


@pytest.mark.parametrize("case", SAMPLE)
def test_the_launcher_gives_the_same_answer(inputs, outcomes, case):
    argv = dict(CASES)[case]
    real = spawned(cli_corpus.substitute(argv, inputs))
    assert one_clear_line(real) == ""
    assert real.returncode == outcomes[case].returncode
    assert real.stderr == outcomes[case].stderr
