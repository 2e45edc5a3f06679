"""memory_manager_state restore: a truncated file is encoding/json's "unexpected end of JSON input".

Built as tests/conformance/test_memory_manager.py builds a ``checkpoint`` vector:
``parse_checkpoint(checkpoint, policy=policy)``; the expected text is upstream's
(pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go, "Restore checkpoint with invalid JSON":
restoreState returns the decoder's error unwrapped).
"""
from __future__ import annotations

import pytest

from pynuma.errors import CheckpointError, PynumaError
from pynuma.state import cpu_checkpoint
from pynuma.state.memory_checkpoint import parse_checkpoint, read_checkpoint


def test_invalid_json_upstream_literal():
    with pytest.raises(PynumaError) as info:
        parse_checkpoint("{", policy="none")
    assert str(info.value) == "unexpected end of JSON input"


@pytest.mark.parametrize("text", ["", "  ", "[", '{"policyName":"Static"', '{"policyName":"Sta', '{"checksum":-',
                                  '{"policyName":nul'])
def test_every_truncation_is_unexpected_end(text):
    with pytest.raises(CheckpointError) as info:
        parse_checkpoint(text, policy="Static")
    assert str(info.value) == "unexpected end of JSON input"


@pytest.mark.parametrize("text", ['{"policyName":"Static"}x', "{x}", '{"a":tru}'])
def test_other_syntax_errors_are_not_called_truncation(text):
    with pytest.raises(CheckpointError) as info:
        parse_checkpoint(text)
    assert "unexpected end" not in str(info.value) and str(info.value).startswith("invalid JSON: ")


@pytest.mark.parametrize("text", ["{", '{"policyName":"Sta', pytest.param("[" * 100000, id="deep")])
def test_same_rule_as_cpu_manager_state(text):
    with pytest.raises(CheckpointError) as mem:
        parse_checkpoint(text)
    with pytest.raises(CheckpointError) as cpu:
        cpu_checkpoint.load(text, "none")
    assert str(cpu.value) == f"could not restore state from checkpoint: {mem.value}"


def test_file_error_is_one_line_naming_it(tmp_path):
    path = tmp_path / "memory_manager_state"
    path.write_text('{"policyName":"Static","machineState":{')
    with pytest.raises(CheckpointError) as info:
        read_checkpoint(str(path))
    assert str(info.value) == f"{path}: unexpected end of JSON input"
