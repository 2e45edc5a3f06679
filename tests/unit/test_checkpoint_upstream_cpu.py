"""cpu_manager_state restore against the kubelet's own texts (k8s.io/utils/cpuset.Parse, encoding/json).

Inputs are built as tests/conformance/test_checkpoint.py builds them: ``load(file_text,
configured_policy, container_map)``; expected texts are the upstream ones
(pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go, k8s.io/utils/cpuset/cpuset.go,
Go's strconv and encoding/json).
"""
from __future__ import annotations

import json

import pytest

from pynuma.errors import CheckpointError
from pynuma.state import cpu_checkpoint as ckpt
from pynuma.state.checksum import fnv1a32
from pynuma.state.gocpuset import MAX_ID, atoi, parse

WRAP = "could not restore state from checkpoint: "


def _restore_error(text, policy, cmap=None):
    with pytest.raises(CheckpointError) as err:
        ckpt.load(text, policy, cmap or {})
    msg = str(err.value)
    assert msg.startswith(WRAP) and "\n" not in msg
    return msg[len(WRAP):]


def _v2(policy, default, entries):
    """A v2 file with a valid checksum, as the kubelet writes it."""
    checksum = fnv1a32(ckpt.hashed_text(policy, default, entries))
    return json.dumps({"policyName": policy, "defaultCpuSet": default, "entries": entries, "checksum": checksum})


# -- the upstream test literals (TestCheckpointStateRestore) ----------------------------------------

def test_unparsable_default_cpu_set_upstream_literal():
    text = '{"policyName": "none", "defaultCPUSet": "1.3", "entries": {}, "checksum": 3021697696}'
    assert _restore_error(text, "none") == \
        'could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax'


def test_unparsable_assignment_entry_upstream_literal():
    text = ('{"policyName": "none", "defaultCPUSet": "1-3", "entries": {"pod": {"container1": "4-6", '
            '"container2": "asd"}}, "checksum": 962272150}')
    assert _restore_error(text, "none") == \
        'could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": invalid syntax'


def test_invalid_json_upstream_literal():
    assert _restore_error("{", "none") == "unexpected end of JSON input"


# -- cpuset.Parse: what the kubelet accepts and refuses, and its words ------------------------------

@pytest.mark.parametrize("text, cpus", [
    ("", ""), ("0-3,8", "0-3,8"), ("+3", "3"), ("1-+3", "1-3"), ("007", "7"), ("2-2", "2"), ("3,1,2", "1-3"),
])
def test_parse_accepts_what_go_accepts(text, cpus):
    assert str(parse(text)) == cpus


@pytest.mark.parametrize("text, error", [
    ("1.3", 'strconv.Atoi: parsing "1.3": invalid syntax'),
    (" 1", 'strconv.Atoi: parsing " 1": invalid syntax'),
    ("1,,2", 'strconv.Atoi: parsing "": invalid syntax'),
    ("1,", 'strconv.Atoi: parsing "": invalid syntax'),
    ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
    ("1-2-3", 'strconv.Atoi: parsing "2-3": invalid syntax'),
    ("3-1", 'invalid range "3-1" (3 > 1)'),
    ("5--3", 'invalid range "5--3" (5 > -3)'),
    ("1_0", 'strconv.Atoi: parsing "1_0": invalid syntax'),
    ("\u0661", 'strconv.Atoi: parsing "\u0661": invalid syntax'),
    ("+", 'strconv.Atoi: parsing "+": invalid syntax'),
    ("999999999999999999999", 'strconv.Atoi: parsing "999999999999999999999": value out of range'),
    ("9223372036854775808", 'strconv.Atoi: parsing "9223372036854775808": value out of range'),
    ("99999999999999999999x", 'strconv.Atoi: parsing "99999999999999999999x": value out of range'),
    ("9999999999999999999x", 'strconv.Atoi: parsing "9999999999999999999x": invalid syntax'),
    ("0-99999999,x", 'strconv.Atoi: parsing "x": invalid syntax'),  # the kubelet's error, not the bound's
    ('1"\n', 'strconv.Atoi: parsing "1\\"\\n": invalid syntax'),
])
def test_parse_refuses_with_go_text(text, error):
    with pytest.raises(ValueError) as err:
        parse(text)
    assert str(err.value) == error


def test_atoi_range():
    assert atoi("9223372036854775807") == (1 << 63) - 1
    assert atoi("-9223372036854775808") == -(1 << 63)
    with pytest.raises(ValueError, match="value out of range"):
        atoi("-9223372036854775809")


def test_huge_id_is_refused_by_name_not_allocated():
    # Not upstream (the kubelet would add 10^9 map entries): a bounded, named error instead.
    for text in ("0-999999999", f"{MAX_ID + 1}", "9223372036854775807"):
        with pytest.raises(ValueError, match=r"CPU id \d+ is above 8191"):
            parse(text)
    assert len(parse(f"0-{MAX_ID}")) == MAX_ID + 1
    msg = _restore_error(_v2("static", "0-999999999", {}), "static")
    assert msg.startswith('could not parse default cpu set "0-999999999": CPU id 999999999 is above')


@pytest.mark.parametrize("default, error", [
    ("1,,2", 'could not parse default cpu set "1,,2": strconv.Atoi: parsing "": invalid syntax'),
    (" 1", 'could not parse default cpu set " 1": strconv.Atoi: parsing " 1": invalid syntax'),
    ("3-1", 'could not parse default cpu set "3-1": invalid range "3-1" (3 > 1)'),
    ("99999999999999999999", 'could not parse default cpu set "99999999999999999999": '
                             'strconv.Atoi: parsing "99999999999999999999": value out of range'),
])
def test_restore_default_set_errors(default, error):
    assert _restore_error(_v2("static", default, {}), "static") == error


def test_restore_entry_error_quotes_like_go():
    text = _v2("static", "0", {"p\"1": {"c\t": "4-"}})
    assert _restore_error(text, "static") == \
        'could not parse cpuset "4-" for container "c\\t" in pod "p\\"1": strconv.Atoi: parsing "": invalid syntax'


def test_restore_accepts_signs_as_go_does():
    st = ckpt.load(_v2("static", "+0-+1", {"pod": {"c": "2-+3"}}), "static")
    assert str(st.default) == "0-1" and {c: str(s) for c, s in st.assignments["pod"].items()} == {"c": "2-3"}


# -- encoding/json: the V2 type is an alias of CPUManagerCheckpoint ---------------------------------

def test_type_error_names_the_struct_cpumanagercheckpoint():
    text = '{"policyName":"none","defaultCPUSet":"1-3","entries":{"c1":"4-6"},"checksum":1}'
    assert _restore_error(text, "none") == \
        "json: cannot unmarshal string into Go struct field CPUManagerCheckpoint.entries of type map[string]string"


@pytest.mark.parametrize("text, kind", [("[]", "array"), ('"x"', "string"), ("1", "number"), ("true", "bool")])
def test_non_object_document(text, kind):
    assert _restore_error(text, "none") == \
        f"json: cannot unmarshal {kind} into Go value of type state.CPUManagerCheckpoint"


def test_null_document_is_an_empty_checkpoint():
    # json.Unmarshal("null") leaves the struct as it was (checksum 0: not verified); then the policy check.
    assert _restore_error("null", "none") == 'configured policy "none" differs from state checkpoint policy ""'
    st = ckpt.load("null", "")
    assert str(st.default) == "" and st.assignments == {}


def test_number_that_does_not_fit_the_checksum_names_its_text():
    text = '{"policyName":"none","defaultCpuSet":"","checksum":-1}'
    assert _restore_error(text, "none") == \
        "json: cannot unmarshal number -1 into Go struct field CPUManagerCheckpoint.checksum of type checksum.Checksum"


def test_a_long_cpuset_of_raw_bytes_keeps_the_error_one_short_line():
    # each raw byte quotes as 4 characters (\xcb): the cut counts the quoted text, not the input
    from pynuma.errors import CheckpointError
    from pynuma.state import cpu_checkpoint

    bad = "0-" + "\udccb" * 600
    with pytest.raises(CheckpointError) as err:
        cpu_checkpoint.load('{"policyName":"none","defaultCpuSet":"' + bad + '","checksum":0}')
    text = str(err.value)
    assert len(text) < 500 and "\n" not in text and "(602 characters)" in text
