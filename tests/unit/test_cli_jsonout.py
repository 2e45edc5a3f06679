"""The JSON writer of ``pynuma topology``: json's text, records on one line."""
from __future__ import annotations

import enum
import json

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.cli._jsonout import dumps

_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(alphabet=st.sampled_from('ab{},[]"\\\n\x01\x1f\x7f\x85\u2028\ud800\udfff é\U0001f600'), max_size=6)
_json_keys = st.text(alphabet=st.sampled_from("ab{[\n\udc80é"), max_size=3) | st.integers() | st.booleans() \
    | st.none() | st.floats(allow_nan=False, allow_infinity=False)
_json_values = st.recursive(_json_scalars, lambda inner: st.lists(inner, max_size=4)
                            | st.lists(inner, max_size=3).map(tuple)
                            | st.dictionaries(_json_keys, inner, max_size=4), max_leaves=20)


@pytest.mark.parametrize("value", [
    {"a": [1, 2, {"b": None}], "c": True, "d": "quote\" back\\ nl\n tab\t \x01 é \U0001f600"},
    [], {}, [[10, 20], [20, 10]], {"nested": {"x": [], "y": {}}}, -1, 1.5, "", 10 ** 40, -(10 ** 40),
    [{"d": "quote\" back\\ nl\n tab\t \x01 é \U0001f600", "n": None, "f": 1.5, "b": False, "i": 7}],
])
def test_reads_back_as_the_value(value):
    assert json.loads(dumps(value)) == value


@settings(max_examples=300)
@given(_json_values)
def test_reads_back_as_json_does(value):
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))


@settings(max_examples=300)
@given(_json_values, st.integers(min_value=0, max_value=4))
def test_text_is_jsons_apart_from_one_line_flat_containers(value, indent):
    text = dumps(value, indent)
    text.encode("utf-8")  # lone surrogates are escaped: the text can be written out
    assert json.loads(text) == json.loads(json.dumps(value))
    if isinstance(value, (list, tuple, dict)) and not any(isinstance(v, (list, tuple, dict)) for v in
                                                          (value.values() if isinstance(value, dict) else value)):
        assert "\n" not in text  # a flat container is one line


def test_layout_is_json_with_flat_containers_on_one_line():
    value = {"cpus": [{"id": 0, "cpus": "0-1"}, {"id": 1, "cpus": "2"}], "matrix": [[10, 20], [20, 10]],
             "none": None, "empty": [], "deep": {"x": {"y": 1}}}
    assert dumps(value, 2) == (
        '{\n'
        '  "cpus": [\n'
        '    {"id": 0, "cpus": "0-1"},\n'
        '    {"id": 1, "cpus": "2"}\n'
        '  ],\n'
        '  "matrix": [\n'
        '    [10, 20],\n'
        '    [20, 10]\n'
        '  ],\n'
        '  "none": null,\n'
        '  "empty": [],\n'
        '  "deep": {\n'
        '    "x": {"y": 1}\n'
        '  }\n'
        '}')


def test_strings_as_json_writes_them_without_ascii_escapes():
    assert dumps("é\u2028\x7f\U0001f600") == '"é\u2028\x7f\U0001f600"'  # raw, as ensure_ascii=False
    assert dumps('"\\\n\r\t\b\f\x00\x1f') == r'"\"\\\n\r\t\b\f\u0000\u001f"'
    assert dumps("a\udc80b\ud800") == r'"a\udc80b\ud800"'  # lone surrogates: escaped, so UTF-8 can carry them


def test_keys_and_numbers_as_json_writes_them():

    class Level(enum.IntEnum):
        TWO = 2

    value = {1: 1.5, None: -0.0, False: 10 ** 30, 2.5: Level.TWO}
    assert dumps(value) == '{"1": 1.5, "null": -0.0, "false": 1000000000000000000000000000000, "2.5": 2}'
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("bad", [{"x": float("nan")}, [{"x": float("inf")}], [-float("inf")], {"x": object()},
                                 [{"x": {1, 2}}], {(1, 2): 3}, b"bytes"])
def test_refuses_what_json_cannot_say(bad):
    with pytest.raises((TypeError, ValueError)):
        dumps(bad)


def test_refuses_a_negative_indent():
    with pytest.raises(ValueError, match="indent"):
        dumps([1], -1)


def test_deep_nesting_is_a_recursion_error_not_a_crash():
    value: list = []
    for _ in range(100_000):
        value = [value, 1]
    with pytest.raises(RecursionError):
        dumps(value)


def test_dict_after_deletions_keeps_its_separators():
    d = {"a": 1, "b": 2, "c": 3}
    del d["a"]
    assert dumps([d, {"x": []}], 0) == '[\n{"b": 2, "c": 3},\n{\n"x": []\n}\n]'
