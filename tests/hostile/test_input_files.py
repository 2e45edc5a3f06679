"""Files the user hands in are read without blocking, only when regular, and never beyond a cap."""
from __future__ import annotations

import errno
import os
import resource
import signal

import pytest

from pynuma.errors import InputError, ParseError
from pynuma.inputfile import MAX_DEPTH, MAX_INPUT_BYTES, load_items, load_json, load_yaml, read_capped, read_text

LOADERS = [read_text, load_json, load_yaml, load_items]


@pytest.fixture(autouse=True)
def no_hang():
    def expire(*_):
        raise TimeoutError("an input read blocked")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("load", LOADERS)
def test_fifo_is_refused_not_waited_on(tmp_path, load):
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=f"^{fifo}: not a regular file"):
        load(str(fifo))


@pytest.mark.parametrize("load", LOADERS)
def test_dev_zero_is_refused(load):
    with pytest.raises(InputError, match="^/dev/zero: not a regular file"):
        load("/dev/zero")


@pytest.mark.parametrize("load", LOADERS)
def test_directory_is_refused(tmp_path, load):
    with pytest.raises(InputError, match="Is a directory"):
        load(str(tmp_path))


def test_sparse_giant_file_is_refused_within_bounded_memory(tmp_path):
    big = tmp_path / "huge.json"
    with open(big, "wb") as f:
        f.truncate(1 << 40)  # 1 TiB of holes
    with pytest.raises(OSError) as info:
        read_capped(str(big))
    assert info.value.errno == errno.EFBIG
    with pytest.raises(InputError, match="larger than 64 MiB"):
        load_json(str(big))
    # the cap counts bytes read, not what stat says: one byte over the limit is refused too
    over = tmp_path / "over"
    with open(over, "wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)
    with pytest.raises(OSError):
        read_capped(str(over))
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 1000)
    assert read_capped(str(exact), 1000) == b"x" * 1000
    with pytest.raises(OSError):
        read_capped(str(exact), 999)


def test_peak_memory_stays_near_the_cap(tmp_path):
    big = tmp_path / "huge.yaml"
    with open(big, "wb") as f:
        f.truncate(1 << 40)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputError):
        load_items(str(big))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 3 * (MAX_INPUT_BYTES >> 10)


@pytest.mark.parametrize("load", [load_json, load_yaml, load_items])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 200_000])
def test_deep_nesting_is_one_parse_error(tmp_path, load, depth):
    p = tmp_path / "deep.json"
    p.write_text("[" * depth + "]" * depth)
    with pytest.raises(ParseError, match="nested more than"):
        load(str(p))
    m = tmp_path / "deep.yaml"
    m.write_text("a: {" * depth + "}" * depth)
    if load is not load_json:
        with pytest.raises(ParseError):
            load(str(m))


@pytest.mark.parametrize("load", [load_json, load_yaml])
def test_nesting_at_the_limit_loads(tmp_path, load):
    p = tmp_path / "ok.json"
    p.write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    value, depth = load(str(p)), 0
    while isinstance(value, list):
        depth += 1
        value = value[0] if value else None
    assert depth == MAX_DEPTH


@pytest.mark.parametrize("load", [load_json, load_yaml, load_items])
def test_five_thousand_digit_number_is_a_parse_error(tmp_path, load):
    p = tmp_path / "n.json"
    p.write_text('{"cpu": ' + "9" * 5000 + "}")
    with pytest.raises(ParseError):
        load(str(p))


BOMB = "\n".join(["x0: &x0 [a, a, a, a, a, a, a, a, a, a]"]
                 + [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, 9)]
                 + ["spec: {containers: [{name: c, args: *x8}]}"])


@pytest.mark.parametrize("load", [load_yaml, load_items])
def test_an_alias_bomb_is_refused_without_being_expanded(tmp_path, load):
    path = tmp_path / "pod.yaml"
    path.write_text(BOMB)  # 1,000 bytes standing for 10**9 values
    with pytest.raises(ParseError, match="aliases expand it to more than"):
        load(str(path))


@pytest.mark.parametrize("load", [load_yaml, load_items])
def test_a_node_that_holds_itself_is_refused(tmp_path, load):
    path = tmp_path / "pod.yaml"
    path.write_text("a: &a [1, *a]\n")
    with pytest.raises(ParseError, match="holds itself"):
        load(str(path))


def test_ordinary_aliases_and_big_plain_documents_load(tmp_path):
    shared = tmp_path / "config.yaml"
    shared.write_text("base: &base {cpu: 1, memory: 1Gi}\na: *base\nb: {<<: *base, cpu: 2}\n")
    assert load_yaml(str(shared))["b"] == {"cpu": 2, "memory": "1Gi"}
    plain = tmp_path / "big.json"
    plain.write_text("[" + ",".join(["0"] * 1_500_000) + "]")  # more values than aliases may expand to
    assert len(load_json(str(plain))) == 1_500_000
