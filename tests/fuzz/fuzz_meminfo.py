"""Fuzz target: ``/proc/meminfo`` and ``nodeN/meminfo`` through every parser that reads them."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, text  # noqa: E402

NAME = "meminfo"

def check(data: bytes) -> None:
    from pynuma.parse import parse_meminfo, parse_memory_totals
    from pynuma.pressure.host import parse_meminfo as host_meminfo

    s = text(data)
    out = outcome(parse_meminfo, s, errors=(ValueError,))
    if out[0] == "ok":
        assert all(isinstance(k, str) and isinstance(v, int) for k, v in out[1].items()), out
    outcome(parse_memory_totals, s, errors=(ValueError,))
    outcome(host_meminfo, s, errors=(ValueError,))


if __name__ == "__main__":
    fuzz_main(check, NAME)
