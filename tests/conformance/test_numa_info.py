"""numa_info.json: average NUMA distance and the closest-mask comparison."""
from __future__ import annotations

import pytest

from pynuma.policy.topologymanager.bitmask import NUMAMask
from pynuma.policy.topologymanager.numa_info import NUMAInfo

from .vectors import vectors


def _info(v):
    """The vector's machine: nodes 0..n-1 of its matrix; without one (``null`` or absent, as upstream tests
    that need no distances leave it), the nodes its masks name and no distances."""
    matrix = v.get("distances")
    if matrix is None:
        nodes = sorted({n for key in ("mask", "current", "candidate") for n in v.get(key) or ()})
        return NUMAInfo.from_matrix(nodes, None)
    return NUMAInfo.from_matrix(range(len(matrix)), matrix)


@pytest.mark.parametrize("v", vectors("numa_info.json"))
def test_numa_info(v):
    info = _info(v)
    if v["op"] == "average_distance":
        assert info.average_distance(NUMAMask(v["mask"])) == pytest.approx(v["expect"])
    elif v["op"] == "closest":
        cur, cand = NUMAMask(v["current"]), NUMAMask(v["candidate"])
        best = info.closest(cand, cur)
        assert best == (cand if v["expect"] == "candidate" else cur)
        assert info.closest(cur, cand) == best  # symmetric for distinct masks
    else:
        raise AssertionError(v["op"])
