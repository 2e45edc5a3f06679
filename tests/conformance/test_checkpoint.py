"""checkpoint.json: cpu_manager_state restore (v1 + v2), checksum text and verification."""
from __future__ import annotations

import json

import pytest

from pynuma.errors import CheckpointError
from pynuma.state import cpu_checkpoint as ckpt
from pynuma.state.checksum import fnv1a32

from .vectors import vectors


def _stored_checksum(text):
    doc = json.loads(text) if text else {}
    return next((v for k, v in doc.items() if k.lower() == "checksum"), 0)


def _parses(v):
    try:
        return isinstance(json.loads(v["file_text"]), dict)
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("v", vectors("checkpoint.json"))
def test_hashed_text_and_checksum(v):
    if not v.get("hashed_text") or not _parses(v):
        # No file, or one that is not a JSON object: there is no stored checksum to compare;
        # test_restore still checks the outcome of such a file.
        return
    doc = json.loads(v["file_text"])
    fields = {k.lower(): val for k, val in doc.items()}
    entries = fields.get("entries", {})
    text = ckpt.hashed_text(fields.get("policyname", ""), fields.get("defaultcpuset", ""), entries,
                            v1=v["format"] == "v1")
    assert text == v["hashed_text"]
    assert (fnv1a32(text) == _stored_checksum(v["file_text"])) is v["checksum_valid"]


def _file(v):
    # As upstream's restore test: blank content means no checkpoint file was written at all.
    text = v.get("file_text")
    return text if text is not None and text.strip() else None


@pytest.mark.parametrize("v", vectors("checkpoint.json"))
def test_restore(v):
    cmap = {cid: tuple(ref) for cid, ref in (v.get("container_map") or {}).items()}
    expect = v["expect"]
    if "error" in expect:
        with pytest.raises(CheckpointError) as err:
            ckpt.load(_file(v), v["configured_policy"], cmap)
        assert expect["error"] in str(err.value)
        assert "could not restore state from checkpoint" in str(err.value)
        return
    got = ckpt.load(_file(v), v["configured_policy"], cmap)
    assert str(got.default) == expect["default_cpuset"]
    assert {p: {c: str(s) for c, s in cs.items()} for p, cs in got.assignments.items()} == expect["assignments"]
    if got.checkpoint is not None:
        assert got.checkpoint.format == v["format"]
