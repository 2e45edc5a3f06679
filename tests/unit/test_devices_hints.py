"""Device hints as the Device Manager gives them; inventory parsing; aligned allocation."""
from __future__ import annotations

import pytest

from pynuma.errors import AllocationError
from pynuma.pod import Container, Pod
from pynuma.policy.devicemanager.inventory import DeviceHintProvider, DeviceInventory, devices_from_pci, pod_request
from pynuma.quantity import Quantity

GPU = "example.com/gpu"


def inv(*specs):
    return DeviceInventory.from_json([{"resource": GPU, "id": f"g{i}", "numa": n} for i, n in enumerate(specs)])


def C(name, n, **kw):
    q = {GPU: Quantity.parse(str(n))} if n else {}
    return Container(name, requests=dict(q), limits=dict(q), **kw)


def J(hints):
    return sorted((tuple(h["numa"]), h["preferred"]) for h in (x.to_json() for x in hints))


def test_one_device_per_node():
    p = DeviceHintProvider(inv(0, 1), [0, 1])
    pod = Pod(name="p", uid="p", containers=(C("c", 1),))
    assert J(p.hints(pod, pod.containers[0])[GPU]) == [((0,), True), ((0, 1), False), ((1,), True)]


def test_two_devices_need_both_nodes_preferred_when_minimal():
    p = DeviceHintProvider(inv(0, 1), [0, 1])
    pod = Pod(name="p", uid="p", containers=(C("c", 2),))
    assert J(p.hints(pod, pod.containers[0])[GPU]) == [((0, 1), True)]


def test_preferred_size_is_measured_on_all_devices_not_free_ones():
    i = inv(0, 0, 1)
    i.allocated = {"other": {"x": {GPU: ["g0"]}}}
    p = DeviceHintProvider(i, [0, 1])
    pod = Pod(name="p", uid="p", containers=(C("c", 2),))
    # node 0 could hold 2 devices on an empty machine, so a 2-node hint is not preferred
    assert J(p.hints(pod, pod.containers[0])[GPU]) == [((0, 1), False)]


def test_not_enough_devices_is_no_placement_and_no_topology_is_no_preference():
    pod = Pod(name="p", uid="p", containers=(C("c", 3),))
    assert DeviceHintProvider(inv(0, 1), [0, 1]).hints(pod, pod.containers[0]) == {GPU: []}
    pod1 = Pod(name="p", uid="p", containers=(C("c", 1),))
    assert DeviceHintProvider(inv(None, None), [0, 1]).hints(pod1, pod1.containers[0]) == {GPU: None}


def test_container_without_devices_has_no_hints():
    pod = Pod(name="p", uid="p", containers=(C("c", 0),))
    assert DeviceHintProvider(inv(0), [0]).hints(pod, pod.containers[0]) is None


def test_multi_node_device_counts_on_any_of_its_nodes():
    i = DeviceInventory.from_json([{"resource": GPU, "id": "a", "numa": [0, 1]}])
    pod = Pod(name="p", uid="p", containers=(C("c", 1),))
    assert J(DeviceHintProvider(i, [0, 1]).hints(pod, pod.containers[0])[GPU]) == [
        ((0,), True), ((0, 1), False), ((1,), True)]


def test_already_allocated_regenerates_from_held_devices():
    i = inv(0, 1)
    i.allocated = {"p": {"c": {GPU: ["g1"]}}}
    pod = Pod(name="p", uid="p", containers=(C("c", 1),))
    assert J(DeviceHintProvider(i, [0, 1]).hints(pod, pod.containers[0])[GPU]) == [((0, 1), False), ((1,), True)]
    pod2 = Pod(name="p", uid="p", containers=(C("c", 2),))
    assert DeviceHintProvider(i, [0, 1]).hints(pod2, pod2.containers[0]) == {GPU: []}


def test_pod_request_counts_sidecars_and_init_peaks():
    pod = Pod(name="p", uid="p", init_containers=(C("s", 1, restart_policy="Always"), C("i", 3)),
              containers=(C("a", 1), C("b", 1)))
    assert pod_request(pod, GPU) == 4  # init i (3) + sidecar before it (1) beats 1 + 1 + 1


def test_allocation_follows_the_hint_and_is_recorded():
    from pynuma.policy.topologymanager.hints import TopologyHint

    i = inv(0, 1, 1)
    p = DeviceHintProvider(i, [0, 1])
    pod = Pod(name="p", uid="p", containers=(C("c", 2),))
    got = p.allocate(pod, pod.containers[0], TopologyHint.of([1], True))
    assert got == {GPU: ["g1", "g2"]} and i.available(GPU) == {"g0"}
    with pytest.raises(AllocationError):
        p.allocate(Pod(name="q", uid="q", containers=(C("c", 2),)), C("c", 2))


@pytest.mark.parametrize("raw", [{}, [{"resource": GPU}], [{"resource": GPU, "id": "a", "numa": "0"}],
                                 [{"resource": GPU, "id": "a"}, {"resource": GPU, "id": "a"}]])
def test_bad_inventory(raw):
    with pytest.raises(ValueError):
        DeviceInventory.from_json(raw)


def test_from_pci_devices():
    class Dev:
        def __init__(self, address, numa_node, kind):
            self.address, self.numa_node, self.kind = address, numa_node, kind

    i = devices_from_pci([Dev("0000:01:00.0", 1, "gpu"), Dev("0000:02:00.0", None, "nic")],
                         lambda d: GPU if d.kind == "gpu" else None)
    assert i.resources() == [GPU] and i.devices[GPU]["0000:01:00.0"].numa == (1,)
