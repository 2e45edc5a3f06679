"""Every fuzz oracle on its corpus (seeds and regressions) and on a short run of generated inputs.

The same oracles (``tests/fuzz/fuzz_<name>.py``, ``check(data)``) run under
atheris in CI (``tests/fuzz/run.py``); here they run without it, so the
normal suite replays every input that ever found a bug and keeps the oracles
themselves working.  Generated inputs are random bytes or a seed with a few
bytes replaced, so that they reach past the first check of the format.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from .targets import TARGETS

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted((name, path) for name in TARGETS for path in sorted((CORPUS / name).glob("*")))


def test_every_target_has_seeds():
    assert {name for name, _ in FILES} == set(TARGETS)


@pytest.mark.parametrize("name, path", FILES, ids=[f"{n}/{p.name}" for n, p in FILES])
def test_corpus_input(name, path):
    TARGETS[name](path.read_bytes())


def _mutations(name):
    seeds = [p.read_bytes() for n, p in FILES if n == name]
    return st.one_of(st.binary(max_size=512),
                     st.sampled_from(seeds).flatmap(
                         lambda s: st.tuples(st.integers(0, len(s)), st.binary(max_size=16), st.integers(0, 8))
                         .map(lambda t, s=s: s[:t[0]] + t[1] + s[t[0] + t[2]:])))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_generated_inputs(name):
    @settings(max_examples=200, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(_mutations(name))
    def run(data):
        TARGETS[name](data)

    run()
