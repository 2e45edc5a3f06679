"""Static policy: eligibility, reserved CPUs, SMT alignment, init/sidecar reuse, remove, Start validation."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pynuma.cpuset import CPUSet
from pynuma.errors import AllocationError, InputError
from pynuma.pod import Container, Pod
from pynuma.policy.cpumanager.hints import CPUHintProvider
from pynuma.policy.cpumanager.static_policy import CPUState, SMTAlignmentError, StateMismatch, StaticPolicy, new_policy
from pynuma.quantity import Quantity

from .cpu_fixtures import DUAL_NODE_HT, QUAD_NODE, SINGLE_HT, machine

GI = Quantity.parse("1Gi")


def ctr(name, cpu, limit=None, sidecar=False):
    req = {"cpu": Quantity.parse(cpu), "memory": GI}
    lim = {"cpu": Quantity.parse(limit or cpu), "memory": GI}
    return Container(name, req, lim, "Always" if sidecar else None)


def pod(*apps, inits=(), uid="pod1"):
    return Pod(name=uid, uid=uid, containers=tuple(apps), init_containers=tuple(inits))


def started(policy):
    state = CPUState()
    policy.start(state)
    return state


def test_start_initialises_and_strict_reservation_keeps_reserved_out():
    p = StaticPolicy(SINGLE_HT, num_reserved=2)
    assert p.reserved == CPUSet([0, 4])
    assert started(p).default == SINGLE_HT.cpus()
    strict = StaticPolicy(SINGLE_HT, num_reserved=2, options={"strict-cpu-reservation": True})
    assert started(strict).default == CPUSet([1, 2, 3, 5, 6, 7])


def test_start_refuses_with_kubelet_messages():
    p = StaticPolicy(SINGLE_HT, num_reserved=1)
    with pytest.raises(StateMismatch, match="default cpuset cannot be empty"):
        p.start(CPUState(CPUSet(), {"a": {"c": CPUSet([1])}}))
    with pytest.raises(StateMismatch, match=r"doesn't match with CPUs in state \"0-6\""):
        p.start(CPUState(CPUSet.range(0, 7)))


def test_reserved_size_mismatch_is_input_error():
    with pytest.raises(InputError, match=r"size of 0-1 did not equal 1"):
        StaticPolicy(SINGLE_HT, num_reserved=1, reserved=CPUSet([0, 1]))
    with pytest.raises(InputError):
        new_policy("dynamic", SINGLE_HT)


def test_shared_pool_for_burstable_and_fractional():
    p = StaticPolicy(SINGLE_HT)
    state = started(p)
    burst = ctr("b", "1", limit="2")
    assert p.allocate(state, pod(burst), burst) is None
    frac = ctr("f", "1500m")
    assert p.allocate(state, pod(frac), frac) is None
    assert state.default == SINGLE_HT.cpus() and not state.assignments


def test_full_pcpus_only_errors():
    p = StaticPolicy(SINGLE_HT, num_reserved=1, options={"full-pcpus-only": True})
    state = started(p)
    odd = ctr("a", "3")
    with pytest.raises(SMTAlignmentError, match="requested 3 cpus not multiple cpus per core = 2"):
        p.allocate(state, pod(odd), odd)
    big = ctr("b", "8")
    # reserved CPU 0 takes its sibling 4 out too: 6 physical CPUs left
    with pytest.raises(SMTAlignmentError, match="available physical CPUs = 6, requested CPUs = 8"):
        p.allocate(state, pod(big), big)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 4), min_size=1, max_size=6), st.integers(0, 3), st.integers(1, 2))
def test_full_pcpus_only_gives_whole_cores(cores_wanted, num_reserved, nodes):
    topo = machine(sockets=nodes, cores_per_node=4, threads=2)
    p = StaticPolicy(topo, num_reserved=num_reserved, options={"full-pcpus-only": True})
    state = started(p)
    for i, n in enumerate(cores_wanted):
        c = ctr(f"c{i}", str(2 * n))
        try:
            got = p.allocate(state, pod(c, uid=f"p{i}"), c)
        except AllocationError:
            continue
        assert len(got) == 2 * n
        assert CPUSet.from_bits(topo.siblings_bits(got.bits)) == got  # whole cores only
        assert got.isdisjoint(p.reserved_physical)


def test_allocation_follows_the_hint_then_spills():
    p = StaticPolicy(DUAL_NODE_HT)
    state = started(p)
    c = ctr("c", "8")
    got = p.allocate(state, pod(c), c, [1])
    node1 = DUAL_NODE_HT.cpus_in_numa_nodes(1)
    assert node1 <= got and len(got) == 8
    assert state.default == DUAL_NODE_HT.cpus() - got
    assert p.allocate(state, pod(c), c, [0]) == got  # already assigned: kept as is


def test_init_cpus_reused_by_app_but_not_sidecar_cpus():
    p = StaticPolicy(SINGLE_HT)
    state = started(p)
    init, app = ctr("init", "4"), ctr("app", "2")
    pd = pod(app, inits=[init])
    got_init = p.allocate(state, pd, init)
    got_app = p.allocate(state, pd, app)
    assert got_app <= got_init  # reused from the finished init container
    side, app2 = ctr("side", "4", sidecar=True), ctr("app2", "2")
    pd2 = pod(app2, inits=[side], uid="pod2")
    p2 = StaticPolicy(SINGLE_HT)
    st2 = started(p2)
    got_side = p2.allocate(st2, pd2, side)
    assert p2.allocate(st2, pd2, app2).isdisjoint(got_side)


def test_remove_keeps_cpus_still_used_by_the_pod():
    p = StaticPolicy(SINGLE_HT)
    state = CPUState(CPUSet([6, 7]), {"p": {"a": CPUSet([0, 1, 4, 5]), "b": CPUSet([2, 3, 0])}})
    assert p.remove(state, "p", "a") == CPUSet([1, 4, 5])
    assert state.default == CPUSet([1, 4, 5, 6, 7]) and state.get("p", "a") is None
    assert p.remove(state, "p", "missing") is None


def test_pod_guaranteed_cpus_counts_sidecars_and_init_peak():
    p = StaticPolicy(QUAD_NODE)
    pd = pod(ctr("a", "2"), ctr("b", "1"), inits=[ctr("side", "1", sidecar=True), ctr("init", "6")])
    assert p.pod_guaranteed_cpus(pd) == max(1 + 6, 2 + 1 + 1)


def test_hint_provider_adapter_and_reuse_in_hints():
    p = StaticPolicy(DUAL_NODE_HT)
    state = started(p)
    prov = CPUHintProvider(p, state)
    c = ctr("c", "2")
    hints = prov.hints(pod(c), c)["cpu"]
    assert [h.to_json() for h in hints] == [{"numa": [0], "preferred": True}, {"numa": [1], "preferred": True},
                                           {"numa": [0, 1], "preferred": False}]
    assert prov.hints(pod(ctr("x", "1", limit="2")), ctr("x", "1", limit="2")) is None
    got = prov.allocate(pod(c), c, hints[1])
    assert got <= DUAL_NODE_HT.cpus_in_numa_nodes(1)
    # the container now holds 2 CPUs on node 1: hints are regenerated from them
    assert [h.to_json() for h in prov.hints(pod(c), c)["cpu"]][0] == {"numa": [1], "preferred": True}


@pytest.mark.parametrize("options, message", [
    ({"full-pcpus-only": True, "distribute-cpus-across-cores": True},
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time"),
    ({"prefer-align-cpus-by-uncorecache": True, "distribute-cpus-across-numa": True},
     "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa can not be used"),
    ({"bogus": True}, 'unknown CPU Manager Policy option: "bogus"'),
])
def test_the_policy_refuses_options_as_new_static_policy_does(options, message):
    with pytest.raises(InputError, match=message):
        StaticPolicy(SINGLE_HT, num_reserved=1, options=options)


def test_reserved_cpus_the_kubelet_cannot_build():
    with pytest.raises(InputError, match=r"reserved set: unknown CPU ID: 12$"):
        StaticPolicy(SINGLE_HT, num_reserved=3, reserved=CPUSet([1, 12, 40]))
    # a count below one takes nothing, so the size check names the empty set (as takeByTopology does)
    with pytest.raises(InputError, match=r"^\[cpumanager\] unable to reserve the required amount of CPUs "
                                         r"\(size of  did not equal -1\)$"):
        StaticPolicy(SINGLE_HT, num_reserved=-1)
