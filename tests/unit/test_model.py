"""pynuma.model and pynuma._record: frozen values, lookups, lossless JSON round trip."""
from __future__ import annotations

import json
import pickle
from types import MappingProxyType

import pytest
from hypothesis import given, settings, strategies as st

from pynuma._record import Record
from pynuma.cpuset import CPUSet
from pynuma.model import CPU, Cache, Distances, HugepagePool, NumaNode, Package, Topology


def _topology(ncpus: int = 4, nodes=(0, 2), hugepages=None) -> Topology:
    per = max(1, ncpus // len(nodes))
    cpus = []
    for c in range(ncpus):
        node = nodes[min(c // per, len(nodes) - 1)]
        cpus.append(CPU(c, True, 0, 0, None, c // 2, c // 2, node, CPUSet([c - c % 2, c - c % 2 + 1]) & CPUSet.range(0, ncpus), 0))
    pools = MappingProxyType(hugepages if hugepages is not None else {2048: HugepagePool(2048, 4, 3, 0)})
    numa = tuple(NumaNode(n, CPUSet(c.id for c in cpus if c.node == n), 1 << 30, 1 << 29, pools, True, True) for n in nodes)
    matrix = tuple(tuple(10 if a == b else 21 for b in nodes) for a in nodes)
    return Topology("x86_64", CPUSet.range(0, ncpus), CPUSet.range(0, ncpus), CPUSet.range(0, ncpus), CPUSet(),
                    CPUSet(), tuple(cpus), (Package(0, CPUSet.range(0, ncpus)),), (ncpus + 1) // 2,
                    (Cache(3, "Unified", 32 << 20, 0, CPUSet.range(0, ncpus)),), numa,
                    Distances(tuple(nodes), matrix, "sysfs") if len(nodes) > 1 else None,
                    warnings=("a warning",))


def test_records_are_immutable_and_compared_by_value():
    p = Package(1, CPUSet([0, 1]))
    with pytest.raises(AttributeError):
        p.id = 2
    with pytest.raises(AttributeError):
        del p.cpus
    assert p == Package(id=1, cpus=CPUSet([0, 1])) and hash(p) == hash(Package(1, CPUSet([0, 1])))
    assert p != Package(2, CPUSet([0, 1])) and p != (1, CPUSet([0, 1]))
    assert p.replace(id=3).id == 3 and p.id == 1
    assert "Package(id=1" in repr(p)
    assert pickle.loads(pickle.dumps(p)) == p


def test_record_defaults_and_errors():
    assert HugepagePool(2048, 1, 1, 0).reserved is None
    with pytest.raises(TypeError):
        Package(1)
    with pytest.raises(TypeError):
        Package(1, CPUSet(), 3)
    with pytest.raises(TypeError):
        Package(1, CPUSet()).replace(nope=1)


def test_subclass_must_declare_slots():
    with pytest.raises(TypeError):
        class Bad(Record):  # noqa: F841
            _fields = ("a",)


@pytest.mark.parametrize("method", ["__getitem__", "__iter__", "__len__"])
def test_a_record_cannot_override_its_tuple_access(method):
    # its field getters and repr go through the tuple: an override would make them recurse or lie
    with pytest.raises(TypeError, match=method):
        type("Listing", (Record,), {"__annotations__": {"items": tuple}, method: lambda self, *a: None})


def test_node_with_mapping_is_hashable():
    topo = _topology()
    assert hash(topo.numa_nodes[0]) == hash(topo.numa_nodes[0].replace())
    with pytest.raises(TypeError):
        topo.numa_nodes[0].hugepages[4] = None


def test_lookups():
    topo = _topology(4, nodes=(0, 2))
    assert topo.cpu(3).node == 2 and topo.node_of_cpu(0) == 0
    assert topo.node(2).cpus == CPUSet([2, 3])
    assert topo.node_ids == (0, 2)
    assert topo.distances.between(0, 2) == 21
    with pytest.raises(KeyError):
        topo.cpu(9)
    with pytest.raises(KeyError):
        topo.node(1)


def test_to_dict_has_checker_keys():
    d = _topology().to_dict()
    assert d["online_cpus"] == "0-3" and d["cores"] == 2
    assert d["packages"] == [{"id": 0, "cpus": "0-3"}]
    assert d["numa_nodes"][0]["hugepages"]["2048"]["total"] == 4
    assert d["numa_nodes"][1]["memory_bytes"] == 1 << 30
    assert d["distances"] == {"nodes": [0, 2], "matrix": [[10, 21], [21, 10]], "source": "sysfs"}


@pytest.mark.parametrize("topo", [_topology(), _topology(1, nodes=(0,)), _topology(6, nodes=(1, 4, 7), hugepages={})])
def test_round_trip(topo):
    again = Topology.from_dict(json.loads(json.dumps(topo.to_dict())))
    assert again == topo and again.to_dict() == topo.to_dict()


@pytest.mark.parametrize("kind", ["empty", "no-nodes", "other-format", "bad-cpulist"])
def test_from_dict_rejects(kind):
    data = {
        "empty": {},
        "no-nodes": {"online_cpus": "0"},
        "other-format": dict(_topology().to_dict(), format="other/9"),
        "bad-cpulist": dict(_topology().to_dict(), online_cpus="3-1"),
    }[kind]
    with pytest.raises(ValueError):
        Topology.from_dict(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 64), st.lists(st.integers(0, 1000), min_size=1, max_size=6, unique=True),
       st.dictionaries(st.sampled_from([64, 2048, 1048576]), st.tuples(st.integers(0, 99), st.integers(0, 99)),
                       max_size=3))
def test_round_trip_property(ncpus, node_ids, pools):
    hp = {s: HugepagePool(s, t, min(f, t), 0) for s, (t, f) in pools.items()}
    topo = _topology(ncpus, nodes=tuple(sorted(node_ids)), hugepages=hp)
    assert Topology.from_dict(json.loads(json.dumps(topo.to_dict()))) == topo
