"""admit_pod: Topology Manager + static CPU policy + devices, state updated in place."""
from __future__ import annotations

from pynuma.cpuset import CPUSet
from pynuma.pod import Pod
from pynuma.policy.admit import admit_pod
from pynuma.policy.cpumanager.static_policy import CPUState, StaticPolicy
from pynuma.policy.cpumanager.topology import CPUTopology
from pynuma.policy.devicemanager.inventory import DeviceHintProvider, DeviceInventory
from pynuma.policy.topologymanager.numa_info import NUMAInfo
from pynuma.policy.topologymanager.manager import TopologyManager

GPU = "example.com/gpu"


def topo():
    # 2 nodes x 4 CPUs, one CPU per core
    return CPUTopology.from_cpus([(c, c // 4, c // 4, c, c // 4) for c in range(8)])


def pod(cpu, gpu=0, name="p"):
    res = {"cpu": str(cpu), "memory": "1Gi"}
    if gpu:
        res[GPU] = str(gpu)
    return Pod.from_dict({"name": name, "containers": [{"name": "c", "requests": res, "limits": res}]})


def setup(policy="restricted", devices=None):
    t = topo()
    tm = TopologyManager.create(NUMAInfo.from_matrix([0, 1], None), policy)
    cpu = StaticPolicy(t)
    state = CPUState()
    cpu.start(state)
    dev = None if devices is None else DeviceHintProvider(DeviceInventory.from_json(devices), [0, 1])
    return tm, (cpu, state), dev


def test_cpus_follow_the_device_node():
    tm, cpu, dev = setup(devices=[{"resource": GPU, "id": "g", "numa": 1}])
    rep = admit_pod(pod(2, 1), tm, cpu, None, dev)
    c = rep.containers[0]
    assert rep.admit and c.hint.to_json() == {"numa": [1], "preferred": True}
    assert CPUSet.parse(c.cpus) <= CPUSet.range(4, 8) and c.devices == {GPU: ["g"]}
    assert set(c.provider_hints) == {"cpu", "devices"}


def test_restricted_rejects_when_cpus_and_device_cannot_align():
    tm, cpu, dev = setup(devices=[{"resource": GPU, "id": "g", "numa": 1}])
    assert admit_pod(pod(4, name="fill"), tm, cpu).admit  # takes all of node 0 ...
    assert admit_pod(pod(3, name="more"), tm, cpu).admit  # ... and most of node 1
    rep = admit_pod(pod(2, 1, name="late"), tm, cpu, None, dev)
    assert not rep.admit and rep.reason == "TopologyAffinityError"


def test_best_effort_admits_and_state_records_allocations():
    tm, (policy, state), _ = setup("best-effort")
    rep = admit_pod(pod(3), tm, (policy, state))
    assert rep.admit and len(CPUSet.parse(rep.containers[0].cpus)) == 3
    assert state.get("p", "c") == CPUSet.parse(rep.containers[0].cpus)


def test_allocation_failure_rejects_with_the_error_name():
    tm, (policy, state), _ = setup("best-effort")
    rep = admit_pod(pod(9), tm, (policy, state))  # more CPUs than the machine has
    assert not rep.admit and rep.reason == "UnexpectedAdmissionError" and "not enough cpus" in rep.message
