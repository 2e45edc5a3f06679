"""Fuzz target: the CLI's ``--json`` writer (``json_text``) against ``json.dumps(indent=2)``."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main  # noqa: E402

NAME = "json_writer"

def check(data: bytes) -> None:
    import json

    from pynuma.cli._common import json_text

    try:
        obj = json.loads(data)
        want = json.dumps(obj, indent=2)
    except (ValueError, RecursionError):
        return
    try:
        got = json_text(obj)
    except RecursionError:  # json.dumps went as deep: only a limit reached a little earlier
        return
    assert got == want, (data[:200], got[:200], want[:200])


if __name__ == "__main__":
    fuzz_main(check, NAME)
