"""Memory Manager static policy on small machines built here (not the conformance vectors)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.errors import AllocationError, CheckpointError, InputError
from pynuma.pod import Pod
from pynuma.policy.memorymanager.state import MemoryState, machine_states_equal
from pynuma.policy.memorymanager.static_policy import Hint, NodeInfo, StaticPolicy

GI, MI = 1 << 30, 1 << 20


def pod(uid, *containers, inits=()):
    def c(name, mem, huge=None, sidecar=False):
        res = {"cpu": "1", "memory": str(mem)}
        if huge:
            res["hugepages-1Gi"] = huge
        d = {"name": name, "requests": dict(res), "limits": dict(res)}
        if sidecar:
            d["restartPolicy"] = "Always"
        return d
    return Pod.from_dict({"uid": uid, "name": uid, "containers": [c(*x) for x in containers],
                          "init_containers": [c(*x) for x in inits]})


def machine(n=2, mem=4 * GI, huge_pages=2):
    return [NodeInfo(i, mem, ((1048576, huge_pages),)) for i in range(n)]


@pytest.fixture
def policy():
    return StaticPolicy(machine(), {0: {"memory": 512 * MI}, 1: {"memory": 512 * MI}})


def test_needs_reserved_memory():
    with pytest.raises(InputError, match="system reserved memory"):
        StaticPolicy(machine(), {0: {"hugepages-1Gi": GI}})


def test_default_state_subtracts_reserve_and_hugepages(policy):
    ms = policy.start(MemoryState()).machine_state
    mem = ms[1].memory_map["memory"]
    assert (mem.total, mem.system_reserved, mem.allocatable, mem.free) == (4 * GI, 512 * MI, 4 * GI - 512 * MI - 2 * GI,
                                                                         4 * GI - 512 * MI - 2 * GI)
    assert ms[0].memory_map["hugepages-1Gi"].allocatable == 2 * GI
    assert ms[0].cells == [0]


def test_single_numa_hint_preferred_then_allocation(policy):
    state = policy.start(MemoryState())
    p = pod("a", ("c", "1Gi", "1Gi"))
    hints = policy.topology_hints(state, p, p.containers[0])
    assert set(hints["memory"]) == {Hint((0,), True), Hint((1,), True), Hint((0, 1), False)}
    new = policy.allocate(state, p, p.containers[0], Hint((1,), True))
    assert {b.type: b.numa_affinity for b in new.blocks("a", "c")} == {"memory": (1,), "hugepages-1Gi": (1,)}
    assert new.machine_state[1].memory_map["memory"].free == 1536 * MI - GI
    assert new.machine_state[1].number_of_assignments == 2
    # the input state is never modified
    assert state.machine_state[1].memory_map["memory"].free == 1536 * MI and state.blocks("a", "c") is None


def test_cross_numa_group_is_used_only_together(policy):
    state = policy.start(MemoryState())
    big = pod("big", ("c", "2Gi"))  # 1.5Gi allocatable per node: needs both nodes
    state = policy.allocate(state, big, big.containers[0])
    assert state.machine_state[0].cells == [0, 1] and state.machine_state[1].cells == [0, 1]
    small = pod("small", ("c", "100Mi"))
    hints = policy.topology_hints(state, small, small.containers[0])
    # single-node masks are off limits while the nodes are grouped; the group itself is not preferred
    assert hints["memory"] == [Hint((0, 1), False)]
    with pytest.raises(AllocationError, match="violates NUMA node allocation"):
        # a single-node hint that does not fit extends to the group; a node used alone cannot join one
        single = policy.allocate(policy.start(MemoryState()), small, small.containers[0], Hint((0,), False))
        policy.allocate(single, big, big.containers[0], Hint((0, 1), False))
    after = policy.remove_container(state, "big", "c")
    assert after.machine_state[0].cells == [0] and after.machine_state[1].cells == [1]
    assert machine_states_equal(after.machine_state, policy.default_machine_state())


def test_no_room_anywhere(policy):
    state = policy.start(MemoryState())
    p = pod("x", ("c", "100Gi"))
    assert policy.topology_hints(state, p, p.containers[0]) == {}
    with pytest.raises(AllocationError, match="failed to get the default NUMA affinity"):
        policy.allocate(state, p, p.containers[0])


def test_not_guaranteed_gets_nothing(policy):
    state = policy.start(MemoryState())
    p = Pod.from_dict({"uid": "b", "name": "b", "containers": [
        {"name": "c", "requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}]})
    assert policy.topology_hints(state, p, p.containers[0]) is None
    assert policy.allocate(state, p, p.containers[0]).assignments == {}


def test_allocate_is_idempotent(policy):
    state = policy.start(MemoryState())
    p = pod("a", ("c", "1Gi"))
    once = policy.allocate(state, p, p.containers[0])
    twice = policy.allocate(once, p, p.containers[0])
    assert twice.machine_state == once.machine_state and twice.assignments == once.assignments


def test_sidecar_memory_is_not_reused(policy):
    state = policy.start(MemoryState())
    p = pod("s", ("app", "1Gi"), inits=[("init", "1Gi"), ("side", "256Mi", None, True)])
    for c in p.all_containers():
        state = policy.allocate(state, p, c, Hint((0,), True))
    sizes = {c: [b.size for b in bs] for c, bs in state.assignments["s"].items()}
    assert sizes == {"init": [0], "side": [256 * MI], "app": [GI]}
    assert state.machine_state[0].memory_map["memory"].reserved == GI + 256 * MI


def test_start_rejects_a_state_that_no_longer_fits(policy):
    state = policy.start(MemoryState())
    state.machine_state[0].memory_map["memory"].allocatable += 1
    with pytest.raises(CheckpointError) as info:
        policy.start(state)
    assert any("allocatable" in d for d in info.value.details)


def test_start_replays_assignments(policy):
    state = policy.start(MemoryState())
    p = pod("a", ("c", "1Gi", "1Gi"))
    state = policy.allocate(state, p, p.containers[0])
    restored = policy.start(MemoryState(state.machine_state, state.assignments))
    assert restored.machine_state == state.machine_state


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 1600), st.sampled_from([None, (0,), (1,), (0, 1)])), min_size=1, max_size=6))
def test_allocate_then_remove_everything_restores_the_machine(requests):
    policy = StaticPolicy(machine(), {0: {"memory": 512 * MI}})
    state = policy.start(MemoryState())
    placed = []
    for i, (mib, numa) in enumerate(requests):
        p = pod(f"p{i}", ("c", f"{mib}Mi"))
        try:
            state = policy.allocate(state, p, p.containers[0], Hint(numa, False) if numa else None)
        except AllocationError:
            continue
        placed.append(f"p{i}")
        for node in state.machine_state.values():
            mem = node.memory_map["memory"]
            assert mem.free >= 0 and mem.free + mem.reserved == mem.allocatable
    # the state stays consistent with a replay of its own assignments
    assert machine_states_equal(policy.start(state).machine_state, state.machine_state)
    for uid in placed:
        state = policy.remove_container(state, uid, "c")
    assert machine_states_equal(state.machine_state, policy.default_machine_state())
    assert state.assignments == {}


def _reference_hints(ms, requested):
    """The hint rules written out plainly, mask by mask (the oracle for the fast path)."""
    from itertools import combinations
    nodes = sorted(ms)
    min_size, found = len(nodes), []
    for k in range(1, len(nodes) + 1):
        for mask in combinations(nodes, k):
            tabs = [ms[n].memory_map for n in mask]
            if any(sum(t[r].allocatable for t in tabs) < size for r, size in requested.items()):
                continue
            min_size = min(min_size, k)
            if k == 1 and len(ms[mask[0]].cells or []) > 1:
                continue
            if k > 1 and any(ms[n].number_of_assignments > 0 and
                             (len(ms[n].cells) == 1 or sorted(ms[n].cells) != list(mask)) for n in mask):
                continue
            if any(sum(t[r].free for t in tabs) < size for r, size in requested.items()):
                continue
            found.append(mask)
    return {(m, len(m) == min_size) for m in found}


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 5), st.lists(st.tuples(st.integers(1, 5000), st.lists(st.integers(0, 4), max_size=3)),
                                   max_size=6), st.integers(1, 9000))
def test_fast_hints_match_the_plain_rules(n, allocations, ask_mib):
    policy = StaticPolicy(machine(n), {0: {"memory": 512 * MI}})
    state = policy.start(MemoryState())
    for i, (mib, numa) in enumerate(allocations):
        p = pod(f"p{i}", ("c", f"{mib}Mi"))
        hint = Hint(tuple(sorted({x for x in numa if x < n})) or None, False)
        try:
            state = policy.allocate(state, p, p.containers[0], hint)
        except AllocationError:
            pass
    asked = pod("new", ("c", f"{ask_mib}Mi"))
    got = policy.calculate_hints(state.machine_state, asked, {"memory": ask_mib * MI})
    assert {(h.numa, h.preferred) for h in got.get("memory", [])} == _reference_hints(state.machine_state,
                                                                                      {"memory": ask_mib * MI})


def test_a_request_that_is_not_whole_bytes_gives_no_hint_and_cannot_be_allocated(policy):
    # getRequestedResources: Quantity.AsInt64 fails for 1500m; hints are nil, Allocate names the failure
    state = policy.start(MemoryState())
    p = pod("a", ("c", "1500m"))
    assert policy.topology_hints(state, p, p.containers[0]) is None
    assert policy.pod_topology_hints(state, p) is None
    with pytest.raises(InputError) as err:
        policy.allocate(state, p, p.containers[0], Hint((0,), True))
    assert str(err.value) == "[memorymanager] failed to represent quantity as int64"


def test_requests_are_read_as_given():
    # a limit without a request asks for nothing (the API server's defaulting is Pod.defaulted's job)
    from pynuma.policy.memorymanager.requests import container_requested_resources

    p = Pod.from_dict({"name": "p", "containers": [{"name": "c", "requests": {"cpu": "1", "memory": "1Gi"},
                                                    "limits": {"cpu": "1", "memory": "1Gi", "hugepages-1Gi": "1Gi"}}]})
    assert container_requested_resources(p.containers[0]) == {"memory": GI}
    assert container_requested_resources(p.defaulted().containers[0]) == {"memory": GI, "hugepages-1Gi": GI}


def test_reserved_memory_that_is_not_whole_bytes_is_refused_in_the_kubelets_words():
    from pynuma.policy.memorymanager.reserved import MemoryReservation, parse_reserved_memory, system_reserved_memory
    from pynuma.quantity import Quantity

    with pytest.raises(InputError) as err:
        system_reserved_memory([0, 1], None, [MemoryReservation(0, {"memory": Quantity.parse("1500m")})])
    assert str(err.value) == "could not covert a variable of type Quantity to int64"
    # the flag names itself
    with pytest.raises(InputError, match=r"^--reserved-memory: memory=1500m is not a whole number of bytes$"):
        parse_reserved_memory("0:memory=1500m")
