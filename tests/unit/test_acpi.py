"""pynuma.discover.acpi: SLIT/SRAT parsing on both backends and slit_distances on fake roots."""
from __future__ import annotations

import os

import pytest

from pynuma.discover import acpi
from pynuma.fsroot import FsRoot

M2 = [[10, 21], [21, 10]]
M4 = [[10, 16, 32, 255], [16, 10, 33, 34], [32, 33, 10, 35], [255, 34, 35, 10]]


def _root(tmp_path, slit=None, srat=None):
    tables = tmp_path / "sys" / "firmware" / "acpi" / "tables"
    tables.mkdir(parents=True)
    if slit is not None:
        (tables / "SLIT").write_bytes(slit)
    if srat is not None:
        (tables / "SRAT").write_bytes(srat)
    return FsRoot(str(tmp_path))


# -- parsers (both backends) ---------------------------------------------------
def test_parse_slit_round_trip(backend):
    mod = backend("acpi")
    assert mod.parse_slit(acpi.build_slit(M4)) == M4
    assert mod.parse_slit(acpi.build_slit([])) == []


@pytest.mark.parametrize("mutate, words", [
    (lambda b: b[:-1], "length"),
    (lambda b: b + b"\0", "length"),
    (lambda b: b[:20], "truncated"),
    (lambda b: b"SLIX" + b[4:], "signature"),
    (lambda b: b[:44] + bytes([b[44] + 1]) + b[45:], "checksum"),
])
def test_parse_slit_rejects(backend, mutate, words):
    mod = backend("acpi")
    with pytest.raises(ValueError, match=words):
        mod.parse_slit(mutate(acpi.build_slit(M2)))


def test_parse_slit_count_mismatch(backend):
    mod = backend("acpi")
    good = bytearray(acpi.build_slit(M2))
    good[36] = 3  # claims 3 localities, 4 entries present
    good[9] = (good[9] - 1) & 0xFF  # keep checksum right
    with pytest.raises(ValueError, match="3 localities"):
        mod.parse_slit(bytes(good))


@pytest.mark.parametrize("matrix, ok", [
    (M2, True), (M4, True), ([[10]], True), ([], True),
    ([[11, 20], [20, 10]], False), ([[10, 10], [20, 10]], False), ([[10, 9], [20, 10]], False),
    ([[10, 20], [20]], False),
])
def test_slit_is_valid(backend, matrix, ok):
    valid, reason = backend("acpi").slit_is_valid(matrix)
    assert valid is ok
    assert (reason == "") is ok


def test_parse_srat_entries(backend):
    mod = backend("acpi")
    raw = acpi.build_srat(cpus=[(4, 0), (2, 1)], memory=[(2, 0, 1 << 30), (9, 1 << 30, 4096)],
                          disabled_domains=[9])
    info = mod.parse_srat(raw)
    assert info["revision"] == 3
    kinds = [(e[0], e[1]) for e in info["entries"]]
    assert kinds == [(2, 4), (2, 2), (1, 2), (1, 9)]
    assert info["entries"][2][3:5] == (0, 1 << 30)
    assert info["entries"][3][5] & 1 == 0
    assert acpi.srat_node_order(info["entries"]) == [4, 2]


def test_parse_srat_rejects_overrun(backend):
    mod = backend("acpi")
    raw = bytearray(acpi.build_srat(cpus=[(0, 0)]))
    raw[49] = 200  # subtable length beyond the table
    raw[9] = (raw[9] - (200 - 24)) & 0xFF
    with pytest.raises(ValueError, match="bad length"):
        mod.parse_srat(bytes(raw))


def test_srat_cpu_entries_come_before_memory():
    # memory entry for domain 7 appears first in the table, but CPUs are mapped in the first pass
    entries = [(1, 7, 0, 0, 10, 1), (0, 3, 0, 0, 0, 1), (1, 3, 0, 10, 10, 1), (0, 5, 1, 0, 0, 0)]
    assert acpi.srat_node_order(entries) == [3, 7]


# -- slit_distances --------------------------------------------------------------
def test_no_slit_gives_none(tmp_path):
    assert acpi.slit_distances(_root(tmp_path), [0, 1]) is None


def test_srat_maps_domains_to_nodes(tmp_path):
    # domains 1 and 0 appear in that order: domain 1 is node 0
    srat = acpi.build_srat(cpus=[(1, 0), (0, 1)])
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit([[10, 20], [30, 10]]), srat), [0, 1])
    assert res.mapping == "srat" and res.valid
    assert res.domains == {0: 1, 1: 0}
    assert res.matrix == ((10, 30), (20, 10))


def test_without_srat_mapping_is_assumed(tmp_path):
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit(M4)), [0, 2, 3])
    assert res.mapping == "assumed"
    assert res.matrix == ((10, 32, 255), (32, 10, 35), (255, 35, 10))
    assert res.unreachable == [(0, 3), (3, 0)]


def test_invalid_slit_reported_not_used(tmp_path):
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit([[10, 10], [10, 10]])), [0, 1])
    assert res.valid is False and res.matrix is None
    assert "not above 10" in res.reason and "SLIT" in res.reason


def test_corrupt_slit_names_the_file(tmp_path):
    bad = acpi.build_slit(M2)[:-1]
    res = acpi.slit_distances(_root(tmp_path, bad), [0, 1])
    assert res.matrix is None and not res.valid
    assert str(tmp_path) in res.reason and "SLIT" in res.reason


def test_corrupt_srat_falls_back_with_warning(tmp_path):
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit(M2), b"SRAT garbage"), [0, 1])
    assert res.mapping == "assumed" and res.matrix == ((10, 21), (21, 10))
    assert any("SRAT" in w for w in res.warnings)


def test_node_without_domain(tmp_path):
    srat = acpi.build_srat(cpus=[(0, 0)])
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit(M2), srat), [0, 1])
    assert res.matrix is None and res.mapping == "srat"
    assert any("node(s) [1]" in w for w in res.warnings)


def test_sparse_nodes_without_srat_by_position(tmp_path):
    res = acpi.slit_distances(_root(tmp_path, acpi.build_slit(M2)), [0, 4])
    assert res.matrix == ((10, 21), (21, 10))
    assert res.warnings


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads anything")
def test_unreadable_slit(tmp_path):
    fs = _root(tmp_path, acpi.build_slit(M2))
    os.chmod(tmp_path / "sys/firmware/acpi/tables/SLIT", 0)
    res = acpi.slit_distances(fs, [0, 1])
    assert res is not None and res.matrix is None and res.warnings
