"""The start-up JSON reader returns json.loads' answer or defers to it (None), never a different answer."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from pynuma._jsonsubset import MAX_DEPTH, loads, read_plain

_scalars = st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30) | st.text(max_size=12) \
    | st.floats(allow_nan=False, allow_infinity=False)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) |
                       st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def _pairs(pairs):
    return ("pairs", pairs)


@settings(max_examples=400)
@given(_values, st.sampled_from([None, 2]), st.sampled_from([(", ", ": "), (",", ":")]), st.booleans())
def test_every_json_text_reads_as_json_reads_it_or_defers(value, indent, separators, ensure_ascii):
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
    for hook in (None, _pairs):
        got = read_plain(text, object_pairs_hook=hook)
        if got is not None:
            assert got == json.loads(text, object_pairs_hook=hook)


@settings(max_examples=400)
@given(st.text(alphabet='{}[]":,-0123456789 \n\tabcdefghijklmnopqrstuvwxyz\\.eE', max_size=40))
def test_any_text_reads_as_json_or_defers(text):
    got = read_plain(text)
    if got is not None:
        assert got == json.loads(text)  # json accepts it too, with the same value


@pytest.mark.parametrize("text, value", [
    ('{"policyName":"static","defaultCpuSet":"0-1","entries":{},"checksum":1234}',
     {"policyName": "static", "defaultCpuSet": "0-1", "entries": {}, "checksum": 1234}),
    (' [1, -2, true, false, {"a": [ ]}] \n', [1, -2, True, False, {"a": []}]),
    ('{"a": 1, "a": 2}', {"a": 2}),
    ('"sé"', "sé"),
])
def test_plain_documents_are_read_here(text, value):
    assert read_plain(text) == value


@pytest.mark.parametrize("text", [
    '{"a": "x\\ny"}', '1.5', '1e3', '01', '-', '{"a" 1}', '{"a": 1,}', '[1 2]', 'nul', 'NaN', '"a\tb"',
    '\ufeff{}', '{} x', '{"a": 1', '"' + "x" * 3 + '', "1" * 5000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
])
def test_anything_else_is_left_to_json(text):
    assert read_plain(text) is None


def test_duplicate_and_empty_objects_reach_the_pairs_hook():
    assert read_plain('{"a": {}, "a": 2}', object_pairs_hook=_pairs) == ("pairs", [("a", ("pairs", [])), ("a", 2)])


@pytest.mark.parametrize("text", ['{"policyName":"static","entries":{}}', '{"a": "x\\ny", "b": 1.5e3}', "null", "[01]"])
def test_loads_is_json_loads_inside_the_subset_and_out(text):
    try:
        want = json.loads(text, object_pairs_hook=_pairs)
    except ValueError as err:
        with pytest.raises(ValueError) as got:
            loads(text, object_pairs_hook=_pairs)
        assert str(got.value) == str(err)  # json's own message
    else:
        assert loads(text, object_pairs_hook=_pairs) == want
