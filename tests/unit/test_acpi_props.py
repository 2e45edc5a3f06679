"""Property tests of the SLIT/SRAT parsers: random valid tables round-trip, random
corruptions are rejected, and native and pure agree on every generated input."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma import _impl
from pynuma.discover import acpi

IMPLS = _impl.implementations("acpi")


@st.composite
def matrices(draw, max_n=8):
    n = draw(st.integers(min_value=0, max_value=max_n))
    if draw(st.booleans()):  # a table the kernel would accept
        flat = draw(st.binary(min_size=n * n, max_size=n * n))
        return [[10 if i == j else 11 + flat[i * n + j] % 245 for j in range(n)] for i in range(n)]
    flat = draw(st.binary(min_size=n * n, max_size=n * n))
    return [list(flat[i * n:(i + 1) * n]) for i in range(n)]


def _outcome(fn, arg):
    try:
        return fn(arg)
    except ValueError:
        return ValueError


@settings(max_examples=200, deadline=None)
@given(matrix=matrices())
def test_valid_tables_round_trip(matrix):
    raw = acpi.build_slit(matrix)
    for mod in IMPLS.values():
        assert mod.parse_slit(raw) == matrix
        assert mod.parse_slit(bytearray(raw)) == matrix
    verdicts = {mod.slit_is_valid(matrix)[0] for mod in IMPLS.values()}
    expected = all((v == 10) if i == j else v > 10
                   for i, row in enumerate(matrix) for j, v in enumerate(row))
    assert verdicts == {expected}


@settings(max_examples=200, deadline=None)
@given(matrix=matrices(), data=st.data())
def test_corruptions_rejected(matrix, data):
    raw = bytearray(acpi.build_slit(matrix))
    how = data.draw(st.sampled_from(["truncate", "extend", "flip", "length", "count"]))
    if how == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "extend":
        raw += bytes(data.draw(st.integers(1, 9)))
    elif how == "flip":  # any single-byte change breaks the checksum
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = (raw[pos] + data.draw(st.integers(1, 255))) & 0xFF
    elif how == "length":
        raw[4] = (raw[4] + data.draw(st.integers(1, 255))) & 0xFF
    else:  # wrong locality count, checksum fixed up so only the count is wrong
        old = raw[36]
        raw[36] = (old + data.draw(st.integers(1, 20))) & 0xFF
        raw[9] = (raw[9] - (raw[36] - old)) & 0xFF
    for mod in IMPLS.values():
        with pytest.raises(ValueError):
            mod.parse_slit(bytes(raw))


@settings(max_examples=200, deadline=None)
@given(blob=st.one_of(st.binary(max_size=120),
                      matrices(4).map(acpi.build_slit),
                      st.tuples(matrices(4).map(acpi.build_slit), st.integers(0, 60), st.integers(0, 255))
                      .map(lambda t: t[0][:t[1]] + bytes([t[2]]) + t[0][t[1] + 1:])))
def test_backends_agree_on_slit_bytes(blob):
    assert len({repr(_outcome(m.parse_slit, blob)) for m in IMPLS.values()}) == 1


srat_tables = st.builds(
    acpi.build_srat,
    cpus=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), max_size=5),
    memory=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1)),
                    max_size=5),
    disabled_domains=st.lists(st.integers(0, 3), max_size=2),
    revision=st.integers(0, 4),
)


@settings(max_examples=100, deadline=None)
@given(raw=srat_tables, cut=st.integers(0, 400), byte=st.integers(0, 255), mutate=st.booleans())
def test_backends_agree_on_srat(raw, cut, byte, mutate):
    if mutate and cut < len(raw):
        raw = raw[:cut] + bytes([byte]) + raw[cut + 1:]
    outs = {repr(_outcome(m.parse_srat, raw)) for m in IMPLS.values()}
    assert len(outs) == 1


@settings(max_examples=100, deadline=None)
@given(cpus=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 99)), max_size=6),
       memory=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 99), st.integers(1, 99)), max_size=6))
def test_node_order_first_seen_cpus_then_memory(cpus, memory):
    info = IMPLS["pure"].parse_srat(acpi.build_srat(cpus=cpus, memory=memory))
    order = acpi.srat_node_order(info["entries"])
    expected = list(dict.fromkeys([d for d, _ in cpus] + [d for d, _, _ in memory]))
    assert order == expected
