"""Hand-made checkpoint.json-shaped vectors through the conformance harness.

Shapes the public file lacks: blank ``file_text`` (upstream writes no file
then: fresh empty state), bad checksum, unparsable default set / entry,
v1 entries missing from ``container_map``.  Expected outcomes follow
pkg/kubelet/cm/cpumanager/state/state_checkpoint.go.
"""
from __future__ import annotations

import json

import pytest

from pynuma.state import cpu_checkpoint as ckpt
from pynuma.state.checksum import fnv1a32
from tests.conformance import test_checkpoint as harness


def _file(policy, default, entries, v1=False, corrupt=False):
    text = ckpt.hashed_text(policy, default, entries, v1=v1)
    doc = {"policyName": policy, "defaultCPUSet": default, "entries": entries,
           "checksum": fnv1a32(text) ^ (1 if corrupt else 0)}
    return json.dumps(doc), text


def _vector(file_text, hashed, expect, fmt="v2", cmap=None, valid=True, policy="none"):
    v = {"name": "hand-made", "format": fmt, "file_text": file_text, "configured_policy": policy,
         "hashed_text": hashed, "checksum_valid": valid, "expect": expect}
    if cmap is not None:
        v["container_map"] = cmap
    return v


@pytest.mark.parametrize("blank", ["", "   \n"])
def test_blank_file_text_means_no_checkpoint(blank):
    v = _vector(blank, "", {"default_cpuset": "", "assignments": {}})
    harness.test_hashed_text_and_checksum(v)
    harness.test_restore(v)


def _run(v):
    harness.test_hashed_text_and_checksum(v)
    harness.test_restore(v)


def test_corrupt_checksum():
    text, hashed = _file("none", "1-3", {"pod": {"c": "4-6"}}, corrupt=True)
    _run(_vector(text, hashed, {"error": "checkpoint is corrupted"}, valid=False))


def test_unparsable_default_set_and_entry():
    text, hashed = _file("none", "1.3", {})
    _run(_vector(text, hashed, {"error": 'could not parse default cpu set "1.3"'}))
    text, hashed = _file("none", "1-3", {"pod": {"container2": "asd"}})
    _run(_vector(text, hashed, {"error": 'could not parse cpuset "asd" for container "container2" in pod "pod"'}))


def test_v1_migration_needs_every_container_id():
    text, hashed = _file("static", "1-3", {"cid1": "4-6"}, v1=True)
    _run(_vector(text, hashed, {"error": "containerID 'cid1' not found in initial containers list"}, "v1",
                 cmap={}, policy="static"))
    _run(_vector(text, hashed, {"default_cpuset": "1-3", "assignments": {"p": {"c": "4-6"}}}, "v1",
                 cmap={"cid1": ["p", "c"]}, policy="static"))
