"""The shared topology corpus: discover() on each real machine dump, compared by the README's rules.

One test per case folder under ``$PYNUMA_CONFORMANCE_DIR/topology``.  Each
archive is extracted to a temporary folder and read in-process; the result
is compared with the case's ``expected.json``: ``online_cpus`` exactly,
packages as a multiset of ``(id, cpus)``, ``cores`` exactly, nodes by id
(``cpus`` exactly, memory within 1 MiB, hugepage totals for every listed
size), the distance matrix exactly (or both absent) and the architecture when listed.
"""
from __future__ import annotations

import json
import os
import tarfile
import tempfile
from pathlib import Path
from collections import Counter

import pytest

from pynuma.discover import discover
from pynuma.model import Topology
from tests.conformance.vectors import conformance_dir

MiB = 1 << 20


def _cases():
    base = conformance_dir() / "topology"
    if not base.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"conformance corpus {base} not found"))]
    return [pytest.param(p, id=p.name) for p in sorted(base.iterdir()) if (p / "expected.json").is_file()]


def _extract(case, dest):
    with tarfile.open(case / f"{case.name}.tar.bz2") as tar:
        try:
            tar.extractall(dest, filter="tar")
        except TypeError:
            tar.extractall(dest)
    tops = [p for p in dest.iterdir() if p.is_dir()]
    assert len(tops) == 1, f"{case.name}: expected one top-level directory, found {tops}"
    return tops[0]


def differences(expected: dict, got: Topology) -> list:
    """What differs between a case's expected facts and a discovered topology."""
    diffs = []
    if str(got.online_cpus) != expected["online_cpus"]:
        diffs.append(f"online_cpus {got.online_cpus} != {expected['online_cpus']}")
    want = Counter((p["id"], p["cpus"]) for p in expected["packages"])
    have = Counter((p.id, str(p.cpus)) for p in got.packages)
    if want != have:
        diffs.append(f"packages: missing {sorted((want - have).elements())}, extra {sorted((have - want).elements())}")
    if got.cores != expected["cores"]:
        diffs.append(f"cores {got.cores} != {expected['cores']}")
    nodes = {n.id: n for n in got.numa_nodes}
    want_ids = {n["id"] for n in expected["numa_nodes"]}
    if set(nodes) != want_ids:
        diffs.append(f"node ids {sorted(nodes)} != {sorted(want_ids)}")
    for n in expected["numa_nodes"]:
        node = nodes.get(n["id"])
        if node is None:
            continue
        if str(node.cpus) != n["cpus"]:
            diffs.append(f"node {n['id']} cpus {node.cpus} != {n['cpus']}")
        if abs(node.memory_total - n["memory_bytes"]) > MiB:
            diffs.append(f"node {n['id']} memory {node.memory_total} != {n['memory_bytes']}")
        for size, total in n["hugepages"].items():
            pool = node.hugepages.get(int(size))
            if pool is None or pool.total != total:
                diffs.append(f"node {n['id']} hugepages {size} kB: {pool and pool.total} != {total}")
    if "arch" in expected and got.arch != expected["arch"]:
        diffs.append(f"arch {got.arch} != {expected['arch']}")
    d, e = got.distances, expected["distances"]
    if e is None:
        if d is not None:
            diffs.append(f"distances: expected none, got {d.nodes}")
    elif d is None:
        diffs.append("distances: missing")
    elif list(d.nodes) != e["nodes"] or [list(r) for r in d.matrix] != e["matrix"]:
        diffs.append(f"distances differ: nodes {list(d.nodes)} vs {e['nodes']}")
    return diffs


@pytest.fixture(scope="module")
def every_dump(tmp_path_factory):
    """Every corpus case extracted once: ``{name: root}``."""
    base = conformance_dir() / "topology"
    if not base.is_dir():
        pytest.skip(f"conformance corpus {base} not found")
    # tmpfs when there is one: dumps hold up to 16k small files
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        holder = tempfile.TemporaryDirectory(prefix="pynuma-corpus-", dir=shm)
        scratch = Path(holder.name)
    else:
        holder, scratch = None, tmp_path_factory.mktemp("corpus")
    roots = {}
    for param in _cases():
        case = param.values[0]
        (scratch / case.name).mkdir()
        roots[case.name] = str(_extract(case, scratch / case.name))
    yield roots
    if holder is not None:
        holder.cleanup()


@pytest.mark.parametrize("case", _cases())
def test_corpus_case(case, every_dump):
    expected = json.loads((case / "expected.json").read_text())
    root = every_dump[case.name]
    topo = discover(str(root))
    assert differences(expected, topo) == []
    # the saved form stands in for the machine
    assert Topology.from_dict(json.loads(json.dumps(topo.to_dict()))) == topo


def test_every_dump_gives_the_same_topology_on_every_path(every_dump):
    from tests.fixtures.paths import both_paths

    names = sorted(every_dump)
    found = both_paths([every_dump[n] for n in names])
    in_process = [discover(every_dump[n]).to_dict() for n in names]
    for k, name in enumerate(names):
        pure = found["pure"][k]
        assert pure[0] == "ok", (name, pure)
        assert pure[1] == json.loads(json.dumps(in_process[k])), name
        if "native" in found:
            assert found["native"][k] == pure, name
