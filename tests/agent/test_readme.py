"""The README's Embedding example runs as written."""
from __future__ import annotations

import os
import subprocess
import sys

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def embedding_example() -> str:
    with open(os.path.join(PROJECT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## Embedding\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_example_is_short_and_runs(tmp_path):
    code = embedding_example()
    assert len(code.strip().splitlines()) <= 20
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=PROJECT))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("admitted: ")
    assert lines[1].startswith("conditions: ") and lines[1].endswith("ready: True")
    assert lines[2].startswith("alive: True until ")
