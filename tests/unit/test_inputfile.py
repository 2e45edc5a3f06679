"""inputfile: user-given JSON/YAML files load or fail with one error naming the file."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError, ParseError
from pynuma.inputfile import load_items, load_json, load_yaml, read_text


def _write(tmp_path, name, data):
    p = tmp_path / name
    (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)
    return str(p)


def test_missing_file_is_input_error_naming_it(tmp_path):
    path = str(tmp_path / "absent.json")
    for load in (read_text, load_json, load_yaml, load_items):
        with pytest.raises(InputError, match=f"^{path}: ") as info:
            load(path)
        assert not isinstance(info.value, ParseError)


def test_bad_bytes_and_bad_json_are_parse_errors(tmp_path):
    binary = _write(tmp_path, "bin.json", b"\xff\xfe{")
    with pytest.raises(ParseError, match="not UTF-8") as info:
        load_json(binary)
    assert info.value.path == binary
    broken = _write(tmp_path, "broken.json", "{")
    with pytest.raises(ParseError, match="not JSON") as info:
        load_json(broken)
    assert info.value.path == broken


def test_json_and_yaml_values(tmp_path):
    assert load_json(_write(tmp_path, "a.json", '{"a": [1, 2]}')) == {"a": [1, 2]}
    assert load_yaml(_write(tmp_path, "a.yaml", "a:\n  - 1\n")) == {"a": [1]}
    with pytest.raises(ParseError, match="malformed YAML"):
        load_yaml(_write(tmp_path, "bad.yaml", "a: [\n"))


def test_items_flatten_lists_and_yaml_documents(tmp_path):
    yaml_docs = "kind: List\nitems: [{n: 1}, {n: 2}]\n---\n---\n{n: 3}\n"
    assert load_items(_write(tmp_path, "m.yaml", yaml_docs)) == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert load_items(_write(tmp_path, "m.json", '[{"n": 1}, {"n": 2}]')) == [{"n": 1}, {"n": 2}]
    assert load_items(_write(tmp_path, "one.json", '{"n": 1}')) == [{"n": 1}]
    assert load_items(_write(tmp_path, "empty.yaml", "")) == []
    with pytest.raises(ParseError, match="malformed YAML"):
        load_items(_write(tmp_path, "bad.yaml", "a: [\n"))


@pytest.mark.parametrize("text, where", [
    ("a: b\n  c: d\n", "line 2, column 4: mapping values are not allowed here"),
    ("kind: Pod\nmetadata: {name: x\nspec: 1\n", "line 3, column 5"),
])
def test_yaml_errors_give_line_and_column(tmp_path, text, where):
    path = _write(tmp_path, "bad.yaml", text)
    for load in (load_yaml, load_items):
        with pytest.raises(ParseError, match="malformed YAML at " + where):
            load(path)
