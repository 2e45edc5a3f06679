"""CPUTopology and the --topology file loader (both file forms)."""
from __future__ import annotations

import json

import pytest

from pynuma.cpuset import CPUSet
from pynuma.errors import InputError, ParseError
from pynuma.policy.cpumanager.topology import CPUTopology
from pynuma.topology_file import cpu_topology_for, load_cpu_topology, load_cpu_topology_data

from .cpu_fixtures import QUAD_NODE, SINGLE_HT


def test_derived_counts_and_ratios():
    t = QUAD_NODE
    assert (t.num_cpus, t.num_cores, t.num_sockets, t.num_numa_nodes) == (32, 16, 2, 4)
    assert (t.cpus_per_core(), t.cpus_per_socket()) == (2, 16)
    assert not t.numa_first()  # 2 sockets < 4 nodes: sockets first
    assert t.sockets_in_numa_nodes(0, 1) == [0] and t.numa_nodes_in_sockets(1) == [2, 3]
    assert t.cpus_in_cores(0) == CPUSet([0, 16])


def test_declared_counts_override_derived():
    t = CPUTopology.from_cpus([(c, 0, 0, c % 4, 0) for c in range(8)], num_numa_nodes=0, num_uncore_caches=0)
    assert t.num_numa_nodes == 0 and t.num_uncore_caches == 0 and t.cpus_per_uncore() == 0
    assert t.numa_first()  # 1 socket >= 0 declared nodes


def test_siblings_and_immutability():
    assert CPUSet.from_bits(SINGLE_HT.siblings_bits(CPUSet([1, 2]).bits)) == CPUSet([1, 2, 5, 6])
    with pytest.raises(AttributeError):
        SINGLE_HT.num_cpus = 3


def test_duplicate_cpu_rejected():
    with pytest.raises(ValueError):
        CPUTopology.from_cpus([(0, 0, 0, 0, 0), (0, 0, 0, 1, 0)])


MINIMAL = {"description": "x", "declared": {"num_cpus": 4, "num_cores": 2, "num_sockets": 1,
                                             "num_numa_nodes": 0, "num_uncore_caches": 0},
           "cpus": [{"id": i, "package": 0, "node": 0, "core": i % 2} for i in range(4)], "distances": None}


def test_minimal_form_missing_uncore_is_zero_and_declared_wins():
    t = load_cpu_topology_data(MINIMAL)
    assert {i.uncore for i in t.details.values()} == {0}
    assert t.num_numa_nodes == 0 and t.cpus_per_core() == 2


def test_named_map_with_one_entry_and_refusal_of_many(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"topoX": MINIMAL}))
    assert load_cpu_topology(str(one)).num_cpus == 4
    many = tmp_path / "many.json"
    many.write_text(json.dumps({"a": MINIMAL, "b": MINIMAL}))
    with pytest.raises(ParseError, match="exactly one"):
        load_cpu_topology(str(many))


def test_pynuma_document_uses_online_cpus_and_socket_fallback_for_uncore(tmp_path):
    doc = {
        "online_cpus": "0-2",
        "numa_nodes": [{"id": 0}, {"id": 1}],
        "distances": {"nodes": [0, 1], "matrix": [[10, 21], [21, 10]], "source": "slit"},
        "cpus": [
            {"id": 0, "package": 0, "die": 0, "cluster": 0, "core_id": 0, "core": 0, "node": 0,
             "uncore_cache": None, "online": True},
            {"id": 1, "package": 1, "die": 0, "cluster": 0, "core_id": 0, "core": 1, "node": 1,
             "uncore_cache": 7, "online": True},
            {"id": 2, "package": 1, "die": 0, "cluster": 0, "core_id": 0, "core": 1, "node": 1,
             "uncore_cache": 7, "online": True},
            {"id": 3, "package": 1, "die": 0, "cluster": 0, "core_id": 1, "core": 2, "node": 1,
             "uncore_cache": 7, "online": False},
        ],
    }
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(doc))
    t = load_cpu_topology(str(path))
    assert t.cpus() == CPUSet([0, 1, 2])
    assert t.details[0].uncore == 0 and t.details[1].uncore == 7  # null -> socket id
    assert t.machine_numa_nodes == (0, 1) and t.distance(0, 1) == 21
    assert cpu_topology_for(str(path)).num_cpus == 3


def test_memory_only_node_is_kept_for_the_topology_manager():
    doc = dict(MINIMAL, numa_nodes=[0, 1], distances=[[10, 20], [20, 10]])
    t = load_cpu_topology_data(doc)
    assert t.numa_nodes() == [0] and t.machine_numa_nodes == (0, 1) and t.distance(1, 0) == 20
    assert t.distance_map() == {0: {0: 10, 1: 20}, 1: {0: 20, 1: 10}}
    assert load_cpu_topology_data(MINIMAL).distance_map() is None


@pytest.mark.parametrize("bad, words", [
    ({"cpus": []}, "non-empty"),
    ({"cpus": [{"id": -1, "package": 0, "node": 0, "core": 0}]}, "cpus[0].id"),
    ({"cpus": [{"id": 0, "package": 0, "node": 0}]}, "cpus[0].core"),
    ({"cpus": [{"id": 0, "package": 0, "node": 0, "core": 0}], "declared": {"num_cpu": 1}}, "unknown"),
    ({"cpus": [{"id": 0, "package": 0, "node": 0, "core": 0}], "distances": [[10, 20]]}, "distances[0]"),
    ([1, 2], "JSON object"),
])
def test_bad_documents_name_the_problem(tmp_path, bad, words):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ParseError) as err:
        load_cpu_topology(str(path))
    assert words in str(err.value) and str(path) in str(err.value)


def test_unreadable_and_not_json(tmp_path):
    with pytest.raises(InputError):
        load_cpu_topology(str(tmp_path / "missing.json"))
    p = tmp_path / "x.json"
    p.write_text("{nope")
    with pytest.raises(ParseError, match="not JSON"):
        load_cpu_topology(str(p))


def test_round_trip_through_to_dict():
    again = load_cpu_topology_data(QUAD_NODE.to_dict())
    assert again.details == QUAD_NODE.details and again.declared() == QUAD_NODE.declared()


def test_from_discovered_topology_skips_offline_and_falls_back_to_socket():
    from types import SimpleNamespace as NS

    cpus = [NS(id=0, online=True, package=0, node=0, core=0, uncore_cache=None),
            NS(id=1, online=True, package=1, node=1, core=1, uncore_cache=3),
            NS(id=2, online=False, package=1, node=1, core=1, uncore_cache=3)]
    topo = NS(cpus=cpus, numa_nodes=[NS(id=0), NS(id=1), NS(id=2)],
              distances=NS(nodes=[0, 1, 2], matrix=[[10, 20, 30], [20, 10, 30], [30, 30, 10]]))
    t = CPUTopology.from_topology(topo)
    assert t.cpus() == CPUSet([0, 1]) and t.details[0].uncore == 0 and t.details[1].uncore == 3
    assert t.machine_numa_nodes == (0, 1, 2) and t.distance(2, 0) == 30
    assert (t.num_sockets, t.num_numa_nodes, t.num_cores) == (2, 2, 2)


def _saved_document(packages):
    """A ``topology --save`` document of one 2-CPU node whose CPUs report ``packages``."""
    from pynuma.model import CPU, NumaNode, Topology

    cpus = tuple(CPU(i, True, pkg, None, None, None, 0, 0, CPUSet([0, 1]), None) for i, pkg in enumerate(packages))
    node = NumaNode(0, CPUSet([0, 1]), 1 << 30, 0, {}, True, True)
    online = CPUSet([0, 1])
    topo = Topology("ppc64", online, online, online, CPUSet(), CPUSet(), cpus, (), 1, (), (node,), None)
    return topo, topo.to_dict()


@pytest.mark.parametrize("packages", [(-1, -1), (None, None), (0, -1)], ids=["minus-one", "none", "mixed"])
def test_saved_document_with_unknown_package_loads_as_discovery_reads_it(packages):
    topo, doc = _saved_document(packages)
    loaded = load_cpu_topology_data(json.loads(json.dumps(doc)))
    assert loaded.to_dict() == CPUTopology.from_topology(topo).to_dict()
    assert {i.socket for i in loaded.details.values()} == {-1 if p is None else p for p in packages}
    # and the minimal form that CPUTopology writes loads back unchanged
    assert load_cpu_topology_data(loaded.to_dict()).to_dict() == loaded.to_dict()


def test_minimal_form_takes_minus_one_as_unknown_package_only():
    doc = {"cpus": [{"id": 0, "package": -1, "node": 0, "core": 0}]}
    assert load_cpu_topology_data(doc).details[0].socket == -1
    with pytest.raises(ValueError, match=r"cpus\[0\].package: expected a non-negative integer or -1"):
        load_cpu_topology_data({"cpus": [{"id": 0, "package": -2, "node": 0, "core": 0}]})


def test_saved_document_with_bad_content_names_the_key():
    _, doc = _saved_document((0, 0))
    del doc["cpus"][1]["core"]
    with pytest.raises(ValueError, match="core"):
        load_cpu_topology_data(doc)
