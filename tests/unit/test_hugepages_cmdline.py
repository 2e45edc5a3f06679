"""Kernel command-line hugepage options."""
from __future__ import annotations

import pytest

from pynuma.hugepages.cmdline import parse_cmdline, parse_size_kb, split_params


def test_sizes_counts_and_per_node():
    cl = parse_cmdline("BOOT_IMAGE=/vmlinuz hugepagesz=1G hugepages=0:2,1:4 hugepagesz=2M hugepages=512 "
                       "default_hugepagesz=1G")
    assert cl.default_size_kb == 1048576
    assert cl.pools[1048576].per_node == {0: 2, 1: 4} and cl.pools[1048576].total == 6
    assert cl.pools[2048].count == 512
    assert cl.sizes == [1048576, 2048]


def test_hugepages_before_any_size_is_the_default_size():
    cl = parse_cmdline("hugepages=64 hugepagesz=1G hugepages=1")
    assert cl.resolved(2048) == {2048: cl.pools[None], 1048576: cl.pools[1048576]}
    assert cl.resolved(2048)[2048].count == 64
    cl2 = parse_cmdline("default_hugepagesz=1G hugepages=3")
    assert cl2.resolved(2048)[1048576].count == 3


def test_init_arguments_and_quotes():
    assert split_params('a="b c" -- hugepages=9') == [("a", "b c")]
    assert parse_cmdline("quiet -- hugepages=9").pools == {}


@pytest.mark.parametrize("text", ["hugepages=x", "hugepagesz=3Q", "hugepages=0:", "hugepagesz", "hugepages=1:2:3"])
def test_bad_items_are_warnings(text):
    cl = parse_cmdline(text)
    assert cl.warnings and not cl.pools


@pytest.mark.parametrize("text,kb", [("2M", 2048), ("2m", 2048), ("1G", 1048576), ("64K", 64), ("2097152", 2048)])
def test_memparse_sizes(text, kb):
    assert parse_size_kb(text) == kb


@pytest.mark.parametrize("text", ["", "0", "100", "G", "-2M"])
def test_bad_sizes(text):
    with pytest.raises(ValueError):
        parse_size_kb(text)
