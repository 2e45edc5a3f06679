"""Fuzz target: the start-up JSON reader (``pynuma._jsonsubset.read_plain``) against ``json.loads``.

On any text it either defers (``None``) or returns exactly what ``json``
returns, with and without an ``object_pairs_hook``; it never raises.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main  # noqa: E402

NAME = "json_subset"


def _pairs(pairs):
    return ("pairs", pairs)


def check(data: bytes) -> None:
    import json

    from pynuma._jsonsubset import read_plain

    text = data.decode("utf-8", "surrogateescape")  # as the checkpoint readers decode a file
    for hook in (None, _pairs):
        got = read_plain(text, object_pairs_hook=hook)
        if got is None:
            continue
        want = json.loads(text, object_pairs_hook=hook)
        assert got == want, (data[:200], repr(got)[:200], repr(want)[:200])


if __name__ == "__main__":
    fuzz_main(check, NAME)
