"""Fuzz target: a NUMA node's ``distance`` row."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, text  # noqa: E402

NAME = "distance_row"

def check(data: bytes) -> None:
    from pynuma.parse import parse_distance_row

    out = outcome(parse_distance_row, text(data), errors=(ValueError,))
    if out[0] == "ok":
        assert all(type(v) is int and v >= 0 for v in out[1]), out


if __name__ == "__main__":
    fuzz_main(check, NAME)
