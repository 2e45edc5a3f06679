"""Fit beyond the vectors: predicates' edge cases, partial allocatable, hugepages validation, PCI rules."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.ledger import predicates as pr
from pynuma.ledger.devices import offered_devices, parse_rule, rules_from_json
from pynuma.ledger.fit import FitOptions, fit, fits_request
from pynuma.ledger.node import NodeState
from pynuma.policy.podrequests import pod_requests, request_units
from pynuma.ledger.validate import validate_hugepages
from pynuma.model_devices import PciDevice
from pynuma.pod import Pod


def pod(spec, **meta):
    return Pod.from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u", **meta},
                          "spec": spec})


def app(limits, requests=None, **extra):
    res = {"limits": limits}
    if requests is not None:
        res["requests"] = requests
    return {"name": "app", "resources": res, **extra}


NODE = {"cpu": "4", "memory": "8Gi", "pods": "10"}


def test_defaulting_gives_requests_from_limits():
    p = pod({"containers": [app({"cpu": "2", "memory": "1Gi"})]})
    assert pod_requests(p) == {}  # the raw object: the scheduler sees only what the API server stored
    assert request_units(p.defaulted()) == {"cpu": 2000, "memory": 1 << 30}


def test_node_affinity_terms_and_selector():
    node = NodeState.build(NODE, name="n1", labels={"zone": "a", "gen": "5"})
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                                 {"key": "gen", "operator": "Gt", "values": ["4"]}]}
    ok = pod({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                                {"nodeSelectorTerms": [term]}}}})
    assert pr.node_affinity(ok, node) is None
    bad_term = {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    bad = pod({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                                 {"nodeSelectorTerms": [bad_term]}}}})
    assert pr.node_affinity(bad, node) == pr.ERR_NODE_AFFINITY
    either = pod({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                                    {"nodeSelectorTerms": [bad_term, by_name]}}}})
    assert pr.node_affinity(either, node) is None
    assert pr.node_affinity(pod({"containers": [], "nodeSelector": {"zone": "b"}}), node) == pr.ERR_NODE_AFFINITY
    with pytest.raises(InputError, match="affinity"):
        pod({"containers": [], "affinity": ["not", "a", "map"]})


def test_host_ports_conflict_on_the_wildcard_and_same_protocol_only():
    used = pod({"containers": [app({}, ports=[{"containerPort": 80, "hostPort": 8080}])]})
    node = NodeState.build(NODE, [used])
    same = pod({"containers": [app({}, ports=[{"hostPort": 8080, "hostIP": "10.0.0.1"}])]})
    udp = pod({"containers": [app({}, ports=[{"hostPort": 8080, "protocol": "UDP"}])]})
    other = pod({"containers": [app({}, ports=[{"hostPort": 8081}])]})
    assert pr.node_ports(same, node) == pr.ERR_NODE_PORTS
    assert pr.node_ports(udp, node) is None and pr.node_ports(other, node) is None
    with pytest.raises(InputError, match="hostPort"):
        pod({"containers": [app({}, ports=[{"hostPort": 70000}])]})


@pytest.mark.parametrize("toleration,taint,tolerated", [
    ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
    ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),
    ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
    ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoExecute"}, False),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}, False),
])
def test_tolerations(toleration, taint, tolerated):
    assert pr.tolerates(toleration, taint) is tolerated


def test_partial_allocatable_checks_only_what_it_knows():
    node = NodeState.build({"cpu": "2", "pods": "10"}, partial=True)
    p = pod({"containers": [app({"cpu": "1", "memory": "64Gi"})]}).defaulted()
    r = fit(p, node)
    assert r.fits and r.unchecked == ("memory",)
    assert not fit(p, NodeState.build({"cpu": "2", "pods": "10"})).fits  # complete: missing memory is 0


def test_pod_count_and_ignored_groups():
    full = NodeState({"cpu": 4000, "pods": 1}, {}, 1)
    assert [r.reason for r in fits_request({"cpu": 1}, full)] == ["Too many pods"]
    opts = FitOptions(ignored_resource_groups=frozenset({"example.com"}))
    assert fits_request({"example.com/x": 1}, NodeState({"pods": 9}), opts) == []
    assert fits_request({"kubernetes.io/x": 1}, NodeState({"pods": 9}), opts)[0].unresolvable


def test_hugepages_validation_cases():
    def containers(limits, requests=None, volumes=None):
        spec = {"containers": [app(limits, requests)]}
        if volumes:
            spec["volumes"] = volumes
        return pod(spec).defaulted()

    assert validate_hugepages(containers({"memory": "1Gi", "hugepages-2Mi": "4Mi"})) == []
    shared = containers({"memory": "1Gi", "hugepages-2Mi": "4Mi"},
                        volumes=[{"name": "hp", "emptyDir": {"medium": "HugePages"}}])
    assert validate_hugepages(shared) == []
    two = pod({"containers": [app({"memory": "1Gi", "hugepages-2Mi": "4Mi"}),
                              {**app({"memory": "1Gi", "hugepages-1Gi": "1Gi"}), "name": "b"}],
               "volumes": [{"name": "hp", "emptyDir": {"medium": "HugePages"}}]}).defaulted()
    assert any("multiple huge page sizes" in e for e in validate_hugepages(two))
    none = containers({"memory": "1Gi"}, volumes=[{"name": "hp", "emptyDir": {"medium": "HugePages"}}])
    assert any("no resource request for huge pages" in e for e in validate_hugepages(none))


def _dev(addr, vendor, device, cls, node):
    return PciDevice(addr, cls, vendor, device, "gpu", "display", node, None, None)


def test_pci_rules_match_vendor_device_and_class_prefix():
    devs = [_dev("0000:01:00.0", 0x10de, 0x20b0, 0x030200, 0), _dev("0000:02:00.0", 0x10de, 0x1eb8, 0x030200, 1),
            _dev("0000:03:00.0", 0x8086, 0x1572, 0x020000, None)]
    rules = [parse_rule("10de:20b0=nvidia.com/a100"), parse_rule("class:03=example.com/gpu"),
             parse_rule("0x8086=intel.com/nic")]
    got = [(d["id"], d["resource"], d["numa"]) for d in offered_devices(devs, rules)]
    assert got == [("0000:01:00.0", "nvidia.com/a100", 0), ("0000:02:00.0", "example.com/gpu", 1),
                   ("0000:03:00.0", "intel.com/nic", None)]
    assert rules_from_json([{"resource": "x.io/y", "class": "0x0302"}], "f")[0].class_prefix == "0302"
    for bad, msg in ((["10de"], "expected"), (["zzzz=x.io/y"], "hex"), (["class:123=x.io/y"], "2, 4 or 6"),
                     (["10de=cpu"], "extended resource")):
        with pytest.raises(InputError, match=msg):
            parse_rule(bad[0])
    with pytest.raises(InputError, match="needs a vendor or a class"):
        rules_from_json([{"resource": "x.io/y"}], "f")
