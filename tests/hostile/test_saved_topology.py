"""A damaged saved topology (``--topology FILE``) is one error line naming the file and the field.

Every command that takes a saved ``pynuma topology --save`` document reads it
with ``Topology.from_dict``; a value discovery could never produce (an id no
Linux machine has, a CPU in a node that is not listed, a distance matrix that
does not fit the nodes, a count that is not a non-negative integer) must be
refused there, with exit 2 and one line on stderr, never a traceback, a hang
or memory sized by the value.
"""
from __future__ import annotations

import json
import math

import pytest

from pynuma import cli
from pynuma.model import Topology
from tests.fixtures.sysfs_builder import Machine

POD = 'metadata: {name: p, uid: u}\nspec: {containers: [{name: c, resources: {limits: {cpu: "1", memory: 1Mi}}}]}\n'


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved two-node, eight-CPU machine (with distances) and the files the commands need."""
    work = tmp_path_factory.mktemp("saved")
    root = Machine(packages=2, nodes_per_package=1, cores_per_node=2, threads=2).write(work / "root")
    path = work / "saved.json"
    assert cli.main(["topology", "--root", str(root), "--save", str(path)]) == 0
    (work / "pod.yaml").write_text(POD)
    (work / "hints.json").write_text(json.dumps([{"cpu": [{"numa": [0], "preferred": True}]}, {"gpu": None}]))
    doc = json.loads(path.read_text())
    assert len(doc["numa_nodes"]) == 2 and doc["distances"] is not None and len(doc["cpus"]) == 8
    return work, doc


def _set(path, value):
    def change(doc):
        *parents, last = path
        for p in parents:
            doc = doc[p]
        doc[last] = value
    return change


def _drop(path):
    def change(doc):
        *parents, last = path
        for p in parents:
            doc = doc[p]
        del doc[last]
    return change


# (id, change, the field the error must name)
BAD = [
    ("cpu id 2**33", _set(["cpus", 0, "id"], 2 ** 33), "cpus[0].id"),
    ("cpu id 2**63", _set(["cpus", 0, "id"], 2 ** 63), "cpus[0].id"),
    ("cpu id 10**30", _set(["cpus", 0, "id"], 10 ** 30), "cpus[0].id"),
    ("cpu id 8192", _set(["cpus", 0, "id"], 8192), "cpus[0].id"),
    ("cpu id negative", _set(["cpus", 0, "id"], -1), "cpus[0].id"),
    ("cpu id float", _set(["cpus", 0, "id"], 1.0), "cpus[0].id"),
    ("cpu id bool", _set(["cpus", 0, "id"], True), "cpus[0].id"),
    ("cpu id twice", _set(["cpus", 1, "id"], 0), "cpus[1].id"),
    ("cpu core 2**40", _set(["cpus", 0, "core"], 2 ** 40), "cpus[0].core"),
    ("cpu package 10**30", _set(["cpus", 0, "package"], 10 ** 30), "cpus[0].package"),
    ("cpu die 2**63", _set(["cpus", 0, "die"], 2 ** 63), "cpus[0].die"),
    ("cpu cluster nan", _set(["cpus", 0, "cluster"], math.nan), "cpus[0].cluster"),
    ("cpu core_id string", _set(["cpus", 0, "core_id"], "0"), "cpus[0].core_id"),
    ("cpu uncore_cache inf", _set(["cpus", 0, "uncore_cache"], math.inf), "cpus[0].uncore_cache"),
    ("cpu online number", _set(["cpus", 0, "online"], 1), "cpus[0].online"),
    ("cpu node -1", _set(["cpus", 0, "node"], -1), "cpus[0].node"),
    ("cpu node 2**63", _set(["cpus", 0, "node"], 2 ** 63), "cpus[0].node"),
    ("cpu node 10**30", _set(["cpus", 0, "node"], 10 ** 30), "cpus[0].node"),
    ("cpu node not listed", _set(["cpus", 0, "node"], 5), "cpus[0].node"),
    ("cpu thread_siblings beyond the CPUs", _set(["cpus", 0, "thread_siblings"], "0-8191"),
     "cpus[0].thread_siblings"),
    ("cpu entry not an object", _set(["cpus", 0], 0), "cpus[0]"),
    ("cpus not a list", _set(["cpus"], {}), "cpus"),
    ("no numa nodes", _set(["numa_nodes"], []), "numa_nodes"),
    ("numa_nodes missing", _drop(["numa_nodes"]), "numa_nodes"),
    ("node id -1", _set(["numa_nodes", 1, "id"], -1), "numa_nodes[1].id"),
    ("node id 1024", _set(["numa_nodes", 1, "id"], 1024), "numa_nodes[1].id"),
    ("node id twice", _set(["numa_nodes", 1, "id"], 0), "numa_nodes[1].id"),
    ("node cpus not a cpulist", _set(["numa_nodes", 0, "cpus"], [0, 1]), "numa_nodes[0].cpus"),
    ("node cpus beyond the limit", _set(["numa_nodes", 0, "cpus"], "0-99999999999"), "numa_nodes[0].cpus"),
    ("node memory negative", _set(["numa_nodes", 0, "memory_bytes"], -1), "numa_nodes[0].memory_bytes"),
    ("node memory nan", _set(["numa_nodes", 0, "memory_bytes"], math.nan), "numa_nodes[0].memory_bytes"),
    ("node memory float", _set(["numa_nodes", 0, "memory_bytes"], 1.5), "numa_nodes[0].memory_bytes"),
    ("node free memory inf", _set(["numa_nodes", 0, "memory_free_bytes"], math.inf),
     "numa_nodes[0].memory_free_bytes"),
    ("node has_cpu not a bool", _set(["numa_nodes", 0, "has_cpu"], "yes"), "numa_nodes[0].has_cpu"),
    ("hugepage count nan", _set(["numa_nodes", 0, "hugepages"], {"2048": {"total": math.nan, "free": 0}}),
     "numa_nodes[0].hugepages['2048'].total"),
    ("hugepage count bool", _set(["numa_nodes", 0, "hugepages"], {"2048": {"total": True, "free": 0}}),
     "numa_nodes[0].hugepages['2048'].total"),
    ("hugepage free negative", _set(["numa_nodes", 0, "hugepages"], {"2048": {"total": 1, "free": -1}}),
     "numa_nodes[0].hugepages['2048'].free"),
    ("hugepage size not a size", _set(["numa_nodes", 0, "hugepages"], {"2M": {"total": 1, "free": 0}}),
     "numa_nodes[0].hugepages['2M']"),
    ("hugepage size too large", _set(["numa_nodes", 0, "hugepages"], {"99999999999": {"total": 1, "free": 0}}),
     "numa_nodes[0].hugepages['99999999999']"),
    ("distance nodes empty", _set(["distances", "nodes"], []), "distances.nodes"),
    ("distance node not listed", _set(["distances", "nodes"], [0, 7]), "distances.nodes[1]"),
    ("distance node twice", _set(["distances", "nodes"], [0, 0]), "distances.nodes[1]"),
    ("distance matrix empty", _set(["distances", "matrix"], []), "distances.matrix"),
    ("distance row short", _set(["distances", "matrix", 1], [20]), "distances.matrix[1]"),
    ("distance nan", _set(["distances", "matrix", 0, 1], math.nan), "distances.matrix[0][1]"),
    ("distance negative", _set(["distances", "matrix", 0, 1], -20), "distances.matrix[0][1]"),
    ("distance source", _set(["distances", "source"], 7), "distances.source"),
    ("distances not an object", _set(["distances"], [[10, 20], [20, 10]]), "distances"),
    ("package id 2**63", _set(["packages", 0, "id"], 2 ** 63), "packages[0].id"),
    ("package in two packages", _set(["packages", 1, "cpus"], "0-7"), "packages[1].cpus"),
    ("packages missing", _drop(["packages"]), "packages"),
    ("cores negative", _set(["cores"], -1), "cores"),
    ("cores inf", _set(["cores"], math.inf), "cores"),
    ("cores huge", _set(["cores"], 10 ** 30), "cores"),
    ("cache level string", _set(["caches", 0, "level"], "1"), "caches[0].level"),
    ("cache type", _set(["caches", 0, "type"], "Victim"), "caches[0].type"),
    ("cache size nan", _set(["caches", 0, "size_bytes"], math.nan), "caches[0].size_bytes"),
    ("cache cpus beyond the CPUs", _set(["caches", 0, "cpus"], "0-8191"), "caches[0].cpus"),
    ("online cpus missing", _drop(["online_cpus"]), "online_cpus"),
    ("online cpus not a string", _set(["online_cpus"], 5), "online_cpus"),
    ("warning not a string", _set(["warnings"], [math.nan]), "warnings[0]"),
    ("arch not a string", _set(["arch"], 1), "arch"),
    ("device numa node 2**63", _set(["devices"], [{"address": "0000:00:01.0", "numa_node": 2 ** 63}]),
     "devices[0].numa_node"),
    ("device driver nan", _set(["devices"], [{"address": "0000:00:01.0", "driver": math.nan}]),
     "devices[0].driver"),
    ("device vendor huge", _set(["devices"], [{"address": "0000:00:01.0", "vendor": "0x" + "f" * 400}]),
     "devices[0].vendor"),
    ("link mtu inf", _set(["net_interfaces"], [{"name": "eth0", "mtu": math.inf}]), "net_interfaces[0].mtu"),
    ("hugepage capacity nan", _set(["hugepage_capacity", "total"], math.nan), "hugepage_capacity.total"),
    ("hugepage capacity quantity nan", _set(["hugepage_capacity", "total"], {"hugepages-2Mi": math.nan}),
     "hugepage_capacity.total"),
    ("hugepage capacity for no node", _set(["hugepage_capacity", "nodes"], {"9": {}}), "hugepage_capacity.nodes"),
]

COMMANDS = {
    "topology": ["topology", "--topology", "{f}"],
    "topology --json": ["topology", "--json", "--topology", "{f}"],
    "topology --distances": ["topology", "--distances", "--topology", "{f}"],
    "topology --devices": ["topology", "--devices", "--topology", "{f}"],
    "allocate": ["allocate", "cpus", "--count", "2", "--topology", "{f}"],
    "admit": ["admit", "{pod}", "--topology", "{f}"],
    "hints": ["hints", "merge", "--policy", "restricted", "--hints", "{hints}", "--topology", "{f}"],
    "export": ["export", "nrt", "--node-name", "n1", "--topology", "{f}"],
}
# the saved hugepage capacity is only read back by the topology command
TOPOLOGY_ONLY = ("hugepage capacity",)


def _write(work, doc, change, name="bad.json"):
    doc = json.loads(json.dumps(doc))
    change(doc)
    path = work / name
    path.write_text(json.dumps(doc))  # NaN and Infinity as Python's json writes them
    return path


CASES = [(command, *bad) for bad in BAD for command in COMMANDS
         if command.startswith("topology") or not bad[0].startswith(TOPOLOGY_ONLY)]


@pytest.mark.parametrize("command, case, change, field", CASES, ids=[f"{c[1]}-{c[0]}" for c in CASES])
def test_a_bad_field_is_one_line_naming_file_and_field(case, change, field, command, saved, capsys):
    work, doc = saved
    path = _write(work, doc, change, f"bad-{command.replace(' ', '_')}.json")
    argv = [a.format(f=path, pod=work / "pod.yaml", hints=work / "hints.json") for a in COMMANDS[command]]
    capsys.readouterr()
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 400, err
    assert str(path) in err and field in err, err


@pytest.mark.parametrize("case, change, field", [b for b in BAD if not b[0].startswith(TOPOLOGY_ONLY)],
                         ids=[b[0] for b in BAD if not b[0].startswith(TOPOLOGY_ONLY)])
def test_from_dict_names_the_field(case, change, field, saved):
    _, doc = saved
    doc = json.loads(json.dumps(doc))
    change(doc)
    with pytest.raises(ValueError, match=r"^not a pynuma topology: .*" + field.replace("[", r"\[")
                       .replace("]", r"\]").replace(".", r"\.")):
        Topology.from_dict(doc)


@pytest.mark.parametrize("change", [
    _set(["cpus", 0, "node"], None),  # a CPU in no reported node (a cpuset cgroup without its node)
    _set(["distances"], None),  # no usable matrix
    _drop(["hugepage_capacity"]),  # computed again from the nodes
    _set(["packages", 0, "id"], -1),  # the platform names no socket
], ids=["cpu in no node", "no distances", "no saved capacity", "unknown package"])
def test_what_discovery_can_write_still_loads(change, saved, capsys):
    work, doc = saved
    path = _write(work, doc, change, "good.json")
    for argv in (["topology", "--json", "--topology", str(path)],
                 ["allocate", "cpus", "--count", "2", "--topology", str(path)]):
        assert cli.main(argv) == 0, capsys.readouterr().err


def test_the_saved_document_reads_back_equal(saved):
    work, doc = saved
    topo = Topology.from_dict(doc)
    again = topo.to_dict()
    assert again == {k: v for k, v in doc.items() if k != "hugepage_capacity"}
    assert Topology.from_dict(again) == topo
