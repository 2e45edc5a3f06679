"""memory_manager_state: checksum, Go JSON quirks, atomic writes, corrupt files left untouched."""
from __future__ import annotations

import json

import pytest

from pynuma.errors import CheckpointError
from pynuma.policy.memorymanager.state import Block, MemoryState, MemoryTable, NUMANodeState
from pynuma.state.memory_checkpoint import (checksum_preimage, compute_checksum, parse_checkpoint, read_checkpoint,
                                            render_checkpoint, write_checkpoint)


def _state():
    ms = {n: NUMANodeState(1 if n == 0 else 0, {"memory": MemoryTable(2048, 512, 1536, 512 if n == 0 else 0,
                                                                      1024 if n == 0 else 1536)}, [n])
          for n in (0, 10, 2)}
    return MemoryState(ms, {"pod": {"c": [Block((0,), "memory", 512)]}})


def test_render_then_parse_verifies():
    text = render_checkpoint("Static", _state())
    cp = parse_checkpoint(text, policy="Static")
    assert cp.state.blocks("pod", "c") == [Block((0,), "memory", 512)]
    assert cp.checksum == compute_checksum(cp) != 0


def test_go_json_layout():
    raw = json.loads(render_checkpoint("Static", _state()))
    assert list(raw) == ["policyName", "machineState", "entries", "checksum"]
    assert list(raw["machineState"]) == ["0", "10", "2"]  # Go sorts map keys as strings
    empty = json.loads(render_checkpoint("Static", MemoryState(_state().machine_state, {})))
    assert "entries" not in empty  # omitempty


def test_preimage_sorts_numa_ids_numerically():
    pre = checksum_preimage(parse_checkpoint(render_checkpoint("Static", _state())))
    assert pre.index("map[0:") < pre.index(" 2:<*>") < pre.index(" 10:<*>")


def test_tampering_is_detected():
    raw = json.loads(render_checkpoint("Static", _state()))
    raw["entries"]["pod"]["c"][0]["size"] = 513
    with pytest.raises(CheckpointError, match="checkpoint is corrupted"):
        parse_checkpoint(json.dumps(raw))


def test_zero_checksum_is_accepted_and_policy_checked():
    raw = json.loads(render_checkpoint("Static", _state()))
    raw["checksum"] = 0
    assert parse_checkpoint(json.dumps(raw)).checksum == 0
    with pytest.raises(CheckpointError, match="differs from state checkpoint policy"):
        parse_checkpoint(json.dumps(raw), policy="None")


@pytest.mark.parametrize("text", ["", "{", "[]", '{"machineState": {"x": {}}}', '{"checksum": -1}',
                                  '{"machineState": {"0": {"memoryMap": {"memory": {"free": -5}}}}}'])
def test_garbage_is_a_checkpoint_error(text):
    with pytest.raises(CheckpointError):
        parse_checkpoint(text)


def test_corrupt_file_names_the_file_and_stays_untouched(tmp_path):
    path = tmp_path / "memory_manager_state"
    path.write_text('{"policyName":"Static","checksum":12}')
    with pytest.raises(CheckpointError) as info:
        read_checkpoint(str(path))
    assert str(path) in str(info.value)
    assert path.read_text() == '{"policyName":"Static","checksum":12}'


def test_atomic_write_round_trip(tmp_path):
    path = tmp_path / "memory_manager_state"
    write_checkpoint(str(path), "Static", _state())
    assert read_checkpoint(str(path), policy="Static").state.machine_state[10].cells == [10]
    assert [p.name for p in tmp_path.iterdir()] == ["memory_manager_state"]  # no temp file left


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="No such file"):
        read_checkpoint(str(tmp_path / "nope"))


@pytest.mark.parametrize("key", [" 1 ", "1_0", "\u0661", "", "9" * 20, "0x1", "1.0"])
def test_node_keys_are_go_integers_only(key):
    doc = {"policyName": "Static", "machineState": {key: {"numberOfAssignments": 0, "memoryMap": {}, "cells": [0]}},
           "entries": {}, "checksum": 0}
    with pytest.raises(CheckpointError, match="is not an integer"):
        parse_checkpoint(json.dumps(doc))


@pytest.mark.parametrize("key, node", [("0", 0), ("+1", 1), ("007", 7)])
def test_node_keys_go_accepts(key, node):
    doc = {"policyName": "Static", "machineState": {key: {"numberOfAssignments": 0, "memoryMap": {}, "cells": [0]}},
           "entries": {}, "checksum": 0}
    assert list(parse_checkpoint(json.dumps(doc)).state.machine_state) == [node]
