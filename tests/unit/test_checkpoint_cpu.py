"""cpu_manager_state: checksum helpers, decode/verify (v1 + v2), restore errors, writing."""
from __future__ import annotations

import json
import os

import pytest

from pynuma.cpuset import CPUSet
from pynuma.errors import CheckpointError
from pynuma.state import cpu_checkpoint as ckpt
from pynuma.state.checksum import Struct, Typed, fnv1a32, spew


@pytest.mark.parametrize("data, value", [("", 0x811C9DC5), ("a", 0xE40C292C), ("foobar", 0xBF9CF968)])
def test_fnv1a32_reference_values(data, value):
    assert fnv1a32(data) == value and fnv1a32(data.encode()) == value


def test_spew_sorts_keys_and_prints_nil():
    assert spew({"b": "2", "a": "1"}) == "map[a:1 b:2]"
    assert spew({10: "x", 9: "y"}) == "map[9:y 10:x]"
    assert spew(Typed("map[string]string", None)) == "(map[string]string)<nil>"
    assert spew(Typed("*T", Struct([("A", Typed("int", 3)), ("B", [1, 2]), ("C", True)]))) == "(*T){A:(int)3 B:[1 2] C:true}"


def _doc(text):
    return json.loads(text)


def test_dumps_is_compact_ordered_and_omits_empty_entries():
    text = ckpt.dumps("static", CPUSet.parse("0-3"), {})
    assert list(_doc(text)) == ["policyName", "defaultCpuSet", "checksum"]
    assert " " not in text
    full = ckpt.dumps("static", CPUSet.parse("0-1"), {"b": {"y": CPUSet([3])}, "a": {"x": CPUSet([2])}})
    assert list(_doc(full)) == ["policyName", "defaultCpuSet", "entries", "checksum"]
    assert list(_doc(full)["entries"]) == ["a", "b"]


def test_round_trip_and_checksum_matches_hashed_text():
    text = ckpt.dumps("static", CPUSet.parse("0,5-11"), {"pod": {"c": CPUSet.parse("1-4")}})
    st = ckpt.load(text, "static")
    assert str(st.default) == "0,5-11" and st.assignments == {"pod": {"c": CPUSet.parse("1-4")}}
    want = fnv1a32(ckpt.hashed_text("static", "0,5-11", {"pod": {"c": "1-4"}}))
    assert st.checkpoint.checksum == want and st.checkpoint.format == "v2"


def test_empty_v2_file_passes_after_v1_checksum_fails():
    st = ckpt.load(ckpt.dumps("none", CPUSet(), {}))
    assert st.checkpoint.format == "v2" and not st.assignments


def test_tampered_file_is_corrupt():
    text = ckpt.dumps("static", CPUSet.parse("0-3"), {"p": {"c": CPUSet([4])}}).replace('"4"', '"4-5"')
    with pytest.raises(CheckpointError, match="could not restore state from checkpoint: checkpoint is corrupted"):
        ckpt.load(text)


def test_zero_checksum_and_case_insensitive_keys():
    text = '{"POLICYNAME": "static", "defaultCPUSet": "0-1", "Entries": {"p": {"c": "2"}}, "checksum": 0}'
    st = ckpt.load(text, "static")
    assert st.assignments == {"p": {"c": CPUSet([2])}}


def test_v1_migration_through_container_map():
    entries = {"cid1": "2-3"}
    checksum = fnv1a32(ckpt.hashed_text("static", "0-1", entries, v1=True))
    text = json.dumps({"policyName": "static", "defaultCpuSet": "0-1", "entries": entries, "checksum": checksum})
    st = ckpt.load(text, "static", {"cid1": ("podX", "main")})
    assert st.checkpoint.format == "v1" and st.assignments == {"podX": {"main": CPUSet([2, 3])}}
    with pytest.raises(CheckpointError, match="containerID 'cid1' not found"):
        ckpt.load(text, "static", {})


@pytest.mark.parametrize("text, words", [
    ('{"policyName": "static", "defaultCpuSet": "0-1"', "unexpected end of JSON input"),
    ('{"policyName": 5, "defaultCpuSet": "0"}', "cannot unmarshal number"),
    ('{"policyName": "static", "defaultCpuSet": "0-x", "checksum": 0}', 'could not parse default cpu set "0-x"'),
    ('{"policyName": "static", "defaultCpuSet": "0", "entries": {"p": {"c": "9-1"}}}',
     'could not parse cpuset "9-1" for container "c" in pod "p"'),
    ('{"policyName": "static", "defaultCpuSet": "0", "checksum": -1}', "cannot unmarshal"),
])
def test_restore_errors(text, words):
    with pytest.raises(CheckpointError) as err:
        ckpt.load(text)
    assert words in str(err.value) and "could not restore state from checkpoint" in str(err.value)


def test_policy_mismatch():
    with pytest.raises(CheckpointError, match='configured policy "static" differs from state checkpoint policy "none"'):
        ckpt.load(ckpt.dumps("none", CPUSet(), {}), "static")


def test_write_file_is_atomic_keeps_mode_and_reads_back(tmp_path):
    path = tmp_path / "cpu_manager_state"
    path.write_text("old")
    os.chmod(path, 0o600)
    text = ckpt.write_file(str(path), "static", CPUSet.parse("0-7"), {"p<&>": {"c": CPUSet([8])}})
    assert path.read_text() == text and "\\u003c\\u0026\\u003e" in text
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert ckpt.read_file(str(path)).assignments == {"p<&>": {"c": CPUSet([8])}}
    assert [p.name for p in tmp_path.iterdir()] == ["cpu_manager_state"]  # no temp file left


def test_corrupt_file_read_names_it_and_leaves_it_untouched(tmp_path):
    path = tmp_path / "cpu_manager_state"
    bad = ckpt.dumps("static", CPUSet.parse("0-3"), {}).replace("0-3", "0-2")
    path.write_text(bad)
    before = os.stat(path)
    with pytest.raises(CheckpointError, match=str(path)):
        ckpt.read_file(str(path))
    assert path.read_text() == bad and os.stat(path).st_mtime_ns == before.st_mtime_ns


def test_state_dir_round_trip(tmp_path):
    from pynuma.policy.cpumanager.static_policy import CPUState

    name, st = ckpt.load_state(str(tmp_path))
    assert name == "static" and not st.default and not st.assignments  # no file yet: empty state
    st = CPUState(CPUSet.parse("0-3"), {"p": {"c": CPUSet([4])}})
    path = ckpt.save_state(str(tmp_path), "static", st)
    assert path == ckpt.default_path(str(tmp_path))
    name, again = ckpt.load_state(str(tmp_path))
    assert again.default == st.default and again.assignments == st.assignments
