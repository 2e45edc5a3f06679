"""Fuzz target: cpulist text (``/sys/.../cpulist``, ``cpuset.cpus``), native against pure, and its round trip."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, twins  # noqa: E402

NAME = "cpulist"

def check(data: bytes) -> None:
    out = twins("bitmap", "parse_cpulist", data.decode("latin-1"), errors=(ValueError,))
    if out[0] == "ok":
        text = twins("bitmap", "format_cpulist", out[1], errors=())[1]
        assert twins("bitmap", "parse_cpulist", text, errors=(ValueError,)) == out, (data, text)


if __name__ == "__main__":
    fuzz_main(check, NAME)
