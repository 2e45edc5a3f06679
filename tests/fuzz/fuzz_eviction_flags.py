"""Fuzz target: the kubelet's eviction settings: ``--eviction-hard``/``--eviction-soft`` maps
(``memory.available<100Mi``), grace periods and minimum reclaims (``k=v`` maps, Go
durations), percentages.  Every failure is an ``InputError`` in the kubelet's words.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, pynuma_error, text  # noqa: E402

NAME = "eviction_flags"

def check(data: bytes) -> None:
    from pynuma.policy.eviction.syntax import parse_duration, parse_flags, parse_percentage
    from pynuma.policy.eviction.thresholds import parse_threshold_config, parse_threshold_statement

    s = text(data)
    errors = pynuma_error()
    out = outcome(parse_duration, s, errors=errors)
    if out[0] == "ok":
        assert isinstance(out[1], float) and out[1] == out[1], out  # seconds, not NaN
    outcome(parse_percentage, s, errors=errors)
    for signal in ("memory.available", "nodefs.inodesFree", "pid.available"):
        outcome(parse_threshold_statement, signal, s, errors=errors)
    thresholds = outcome(parse_flags, s, "<", errors=errors)
    pairs = outcome(parse_flags, s, "=", errors=errors)
    hard = thresholds[1] if thresholds[0] == "ok" else None
    other = pairs[1] if pairs[0] == "ok" else None
    outcome(parse_threshold_config, [], hard, None, None, None, errors=errors)
    outcome(parse_threshold_config, ["pods"], hard, hard, other, other, errors=errors)


if __name__ == "__main__":
    fuzz_main(check, NAME)
