"""Loads the shared conformance data named by ``PYNUMA_CONFORMANCE_DIR``.

Default: ``../shared/conformance`` beside the project.  When the folder is
absent every conformance test is skipped cleanly with one reason; when it
is present, every vector of every file becomes one test case, id'd by its
``name``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


def conformance_dir() -> Path:
    env = os.environ.get("PYNUMA_CONFORMANCE_DIR")
    return Path(env) if env else PROJECT.parent / "shared" / "conformance"


def kubelet_file(filename: str) -> Path:
    return conformance_dir() / "kubelet" / filename


def load_json(filename: str):
    """The parsed content of ``kubelet/<filename>``, or ``None`` when absent."""
    path = kubelet_file(filename)
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _ids(vectors):
    seen = {}
    out = []
    for i, v in enumerate(vectors):
        name = str(v.get("name", i)) if isinstance(v, dict) else str(i)
        n = seen.get(name, 0)
        seen[name] = n + 1
        out.append(name if n == 0 else f"{name} #{n + 1}")
    return out


def vectors(filename: str, select=None):
    """``pytest.param`` per vector of ``kubelet/<filename>`` (a JSON list), optionally filtered.

    ``select(vector) -> bool`` splits one file among test functions by kind or
    op (never by name or index).  Absent data gives one skipped param.
    """
    data = load_json(filename)
    if data is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"conformance data {kubelet_file(filename)} not found"))]
    if isinstance(data, dict) and "vectors" in data:
        data = data["vectors"]
    chosen = [v for v in data if select is None or select(v)]
    return [pytest.param(v, id=i) for v, i in zip(chosen, _ids(chosen))]


def topologies():
    """The named CPU topologies of ``kubelet/topologies.json`` (``{}`` when absent)."""
    return load_json("topologies.json") or {}


_INFORMATIVE_ERROR_NOTE = re.compile(
    r"only (asserts|checks|verifies|tests) (that )?(an|the) error (occurs|is returned|happened|is raised)"
    r"|only (asserts|checks) (that )?(it|the call) (fails|errors)"
    r"|(error )?(text|message) is (informative|informational|not asserted)")


def error_text_asserted(v) -> bool:
    """Whether a vector's expected error text is part of its contract.

    README: where the ``note`` says the source test only asserts that an error
    occurs, the text is informative; ``{"error": true}`` has no text at all.
    """
    expect = v.get("expect")
    expected = expect.get("error") if isinstance(expect, dict) else None
    if not isinstance(expected, str):
        return False
    return not _INFORMATIVE_ERROR_NOTE.search(str(v.get("note") or "").lower())


def check_error_text(v, got: str, expected=None, substring: bool = False) -> None:
    """Assert ``got`` against the vector's error text when the text is part of the contract."""
    if expected is None:
        expected = v["expect"]["error"]
    if expected is True or not isinstance(expected, str):
        return
    if _INFORMATIVE_ERROR_NOTE.search(str(v.get("note") or "").lower()):
        return
    if substring:
        assert expected in got, (expected, got)
    else:
        assert got == expected
