"""Fuzz target: the kubelet's CPU and memory manager checkpoint files.

The loaders' documented failure is ``CheckpointError`` (what ``state check``
and the agent report); anything else escaping them is a finding.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, text  # noqa: E402

NAME = "checkpoint"

def check(data: bytes) -> None:
    from pynuma.errors import CheckpointError
    from pynuma.state import cpu_checkpoint, memory_checkpoint

    s = text(data)
    errors = (CheckpointError,)
    outcome(cpu_checkpoint.decode, s, errors=errors)
    outcome(cpu_checkpoint.load, s, errors=errors)
    outcome(cpu_checkpoint.load, s, "static", {}, errors=errors)
    outcome(memory_checkpoint.parse_checkpoint, s, errors=errors)
    outcome(memory_checkpoint.parse_checkpoint, s, "Static", False, errors=errors)


if __name__ == "__main__":
    fuzz_main(check, NAME)
