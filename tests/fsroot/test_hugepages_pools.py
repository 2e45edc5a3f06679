"""Hugepage pools read from synthetic sysfs/proc trees (several sizes, per-node pools, odd files)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterable, Optional

import pytest

from pynuma.errors import InputError
from pynuma.fsroot import FsRoot
from pynuma.hugepages.pools import hugepage_capacity, parse_default_size_kb, parse_size_arg, read_hugepages
from pynuma.quantity import Quantity


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_tree(root: Path, pools: Dict[int, dict], nodes: Iterable[int] = (0,), default_kb: Optional[int] = 2048,
               cmdline: str = "quiet") -> Path:
    """A fake root with hugepage pools.

    ``pools[size_kb]`` holds machine-wide ``total, free, resv, surplus, overcommit`` and
    ``per_node: {node: (total, free, surplus)}``; missing per-node entries get zeros.
    """
    nodes = list(nodes)
    for size, p in pools.items():
        g = root / f"sys/kernel/mm/hugepages/hugepages-{size}kB"
        _write(g / "nr_hugepages", f"{p.get('total', 0)}\n")
        _write(g / "free_hugepages", f"{p.get('free', 0)}\n")
        _write(g / "resv_hugepages", f"{p.get('resv', 0)}\n")
        _write(g / "surplus_hugepages", f"{p.get('surplus', 0)}\n")
        _write(g / "nr_overcommit_hugepages", f"{p.get('overcommit', 0)}\n")
        for nid in nodes:
            total, free, surplus = p.get("per_node", {}).get(nid, (0, 0, 0))
            d = root / f"sys/devices/system/node/node{nid}/hugepages/hugepages-{size}kB"
            _write(d / "nr_hugepages", f"{total}\n")
            _write(d / "free_hugepages", f"{free}\n")
            _write(d / "surplus_hugepages", f"{surplus}\n")
    for nid in nodes:
        (root / f"sys/devices/system/node/node{nid}").mkdir(parents=True, exist_ok=True)
    (root / "sys/devices/system/cpu").mkdir(parents=True, exist_ok=True)  # what makes a folder a machine's root
    meminfo = "MemTotal:       16384000 kB\nHugePages_Total:       0\n"
    if default_kb:
        meminfo += f"Hugepagesize:       {default_kb} kB\n"
    _write(root / "proc/meminfo", meminfo)
    _write(root / "proc/cmdline", cmdline + "\n")
    return root


TWO_NODES = {
    2048: {"total": 1536, "free": 1000, "resv": 12, "surplus": 0, "overcommit": 8,
           "per_node": {0: (1024, 600, 0), 1: (512, 400, 0)}},
    1048576: {"total": 4, "free": 4, "per_node": {0: (2, 2, 0), 1: (2, 2, 0)}},
}


@pytest.fixture
def two_nodes(tmp_path):
    return build_tree(tmp_path, TWO_NODES, nodes=(0, 1), default_kb=2048,
                      cmdline="ro default_hugepagesz=2M hugepagesz=1G hugepages=0:2,1:2 hugepagesz=2M hugepages=1536")


def test_reads_every_size_machine_wide_and_per_node(two_nodes):
    info = read_hugepages(FsRoot(str(two_nodes)))
    assert info.sizes == (2048, 1048576)
    g = info.pools[2048]
    assert (g.total, g.free, g.in_use, g.reserved, g.surplus, g.overcommit) == (1536, 1000, 536, 12, 0, 8)
    assert info.nodes[0][2048].total == 1024 and info.nodes[1][2048].free == 400
    assert info.nodes[0][2048].reserved is None  # only the machine-wide pool knows reserved pages
    assert info.nodes[1][1048576].total == 2
    assert info.default_size_kb == 2048
    assert info.warnings == ()


def test_cmdline_is_shown_beside_the_kernel_pools(two_nodes):
    info = read_hugepages(FsRoot(str(two_nodes)))
    cmd = info.cmdline.resolved(info.default_size_kb)
    assert cmd[1048576].per_node == {0: 2, 1: 2}
    assert cmd[2048].count == 1536
    d = info.to_dict()
    assert d["cmdline"]["pools"]["1048576"]["total"] == 4
    assert d["pools"]["2048"]["in_use"] == 536


def test_cmdline_size_without_a_pool_is_a_warning(tmp_path):
    build_tree(tmp_path, {2048: {}}, cmdline="hugepagesz=1G hugepages=4")
    info = read_hugepages(FsRoot(str(tmp_path)))
    assert any("1048576 kB" in w for w in info.warnings)


def test_capacity_per_node_and_total(two_nodes):
    cap = hugepage_capacity(read_hugepages(FsRoot(str(two_nodes))))
    assert cap["total"]["hugepages-2Mi"] == Quantity.parse("3Gi")
    assert cap["total"]["hugepages-1Gi"] == Quantity.parse("4Gi")
    assert cap["nodes"][0]["hugepages-2Mi"] == Quantity.parse("2Gi")
    assert cap["nodes"][1]["hugepages-1Gi"] == Quantity.parse("2Gi")
    assert str(cap["nodes"][1]["hugepages-2Mi"]) == "1Gi"


def test_zero_page_pools_still_count_as_capacity(tmp_path):
    build_tree(tmp_path, {2048: {}, 1048576: {}})
    cap = hugepage_capacity(read_hugepages(FsRoot(str(tmp_path))))
    assert cap["total"] == {"hugepages-2Mi": Quantity(0), "hugepages-1Gi": Quantity(0)}


def test_garbage_count_skips_that_pool_with_a_warning(tmp_path):
    build_tree(tmp_path, {2048: {"total": 4, "free": 4}, 1048576: {"total": 1}})
    (tmp_path / "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages").write_text("lots\n")
    info = read_hugepages(FsRoot(str(tmp_path)))
    assert 1048576 not in info.pools and info.pools[2048].total == 4
    assert any("hugepages-1048576kB/nr_hugepages" in w for w in info.warnings)


def test_no_hugepages_at_all(tmp_path):
    (tmp_path / "proc").mkdir()
    info = read_hugepages(FsRoot(str(tmp_path)))
    assert info.sizes == () and info.pools == {} and info.default_size_kb is None


def test_default_size_parser():
    assert parse_default_size_kb("Hugepagesize:    1048576 kB\n") == 1048576
    assert parse_default_size_kb("MemTotal: 1 kB\n") is None
    with pytest.raises(ValueError):
        parse_default_size_kb("Hugepagesize: lots\n")


@pytest.mark.parametrize("text,kb", [("2Mi", 2048), ("1Gi", 1048576), ("2048kB", 2048), ("2M", 2048),
                                     ("1G", 1048576), ("hugepages-2Mi", 2048), ("2048KB", 2048)])
def test_size_argument_forms(text, kb):
    assert parse_size_arg(text, [2048, 1048576]) == kb


@pytest.mark.parametrize("text", ["3Mi", "64Ki", "0", "lots", "", "2.5Mi"])
def test_size_argument_must_exist(text):
    with pytest.raises(InputError):
        parse_size_arg(text, [2048, 1048576])
