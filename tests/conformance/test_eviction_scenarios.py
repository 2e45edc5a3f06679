"""eviction_scenarios.json: multi-step synchronize runs, admission, evicted pod status, local storage."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.pod import Pod
from pynuma.policy.eviction.manager import (
    EvictionConfig, EvictionState, FsLayout, NodeStats, admit, synchronize,
)
from pynuma.policy.eviction.observations import make_signal_observations
from pynuma.policy.eviction.ranking import PodStats
from pynuma.policy.eviction.thresholds import Threshold
from pynuma.quantity import Quantity

from .vectors import check_error_text, vectors


def _b(q):
    return Quantity.parse(q).value()


_INODE_SIGNALS = {"nodefs.inodesFree", "imagefs.inodesFree", "containerfs.inodesFree"}
_BYTE_FS_SIGNALS = {"nodefs.available", "imagefs.available", "containerfs.available"}


def counts_inodes(v) -> bool:
    """Whether a filesystem's bare ``available``/``capacity`` are inode counts: only inode thresholds configured."""
    sigs = {t["signal"] for t in v["config"]["thresholds"]}
    return bool(sigs & _INODE_SIGNALS) and not sigs & _BYTE_FS_SIGNALS


def summary_of(node: dict, inodes: bool = False) -> dict:
    """The vector's node stats as a kubelet stats summary."""
    s: dict = {}
    if "memory" in node:
        s["memory"] = {"availableBytes": _b(node["memory"]["available"]),
                       "workingSetBytes": _b(node["memory"]["working_set"])}
    if "pods_container_memory" in node:
        m = node["pods_container_memory"]
        s["systemContainers"] = [{"name": "pods", "memory": {"availableBytes": _b(m["available"]),
                                                             "workingSetBytes": _b(m["working_set"])}}]

    def fs(raw):
        d = {}
        if "available" in raw and "capacity" in raw:
            keys = ("inodesFree", "inodes") if inodes else ("availableBytes", "capacityBytes")
            d[keys[0]], d[keys[1]] = _b(raw["available"]), _b(raw["capacity"])
        for k, alias in (("inodesFree", "inodes_free"), ("inodes", "inodes_capacity")):
            for name in (k, alias):
                if name in raw:
                    d[k] = _b(raw[name])
        return d
    if "nodefs" in node:
        s["fs"] = fs(node["nodefs"])
    rt = {}
    if "imagefs" in node:
        rt["imageFs"] = fs(node["imagefs"])
    if "containerfs" in node:
        rt["containerFs"] = fs(node["containerfs"])
    if rt:
        s["runtime"] = rt
    if "rlimit" in node:
        s["rlimit"] = {"maxpid": node["rlimit"]["maxpid"], "curproc": node["rlimit"]["curproc"]}
    return {"node": s}


def setup(v):
    pods = [Pod.from_dict(p) for p in v["pods"]]
    raw = {p["name"]: p for p in v["pods"]}
    pod_stats = {p.uid: PodStats.from_usage(p, raw[p.name].get("usage") or {}) for p in pods}
    layout = v.get("fs_layout") or {}
    gates = v.get("feature_gates") or {}
    c = v["config"]
    config = EvictionConfig(
        thresholds=tuple(Threshold.from_dict(t) for t in c["thresholds"]),
        max_pod_grace_period_s=c.get("max_pod_grace_period_s", 0),
        pressure_transition_period_s=c.get("pressure_transition_period_s", 300),
        local_storage_capacity_isolation=c.get("local_storage_capacity_isolation", False),
        layout=FsLayout(layout.get("dedicated_image_fs", False), layout.get("container_fs_separate_from_image_fs", False)),
        separate_disk_gc=layout.get("KubeletSeparateDiskGC", gates.get("KubeletSeparateDiskGC", True)),
        pod_disruption_conditions=gates.get("PodDisruptionConditions", True),
        allow_overwrite_termination_grace=gates.get("AllowOverwriteTerminationGracePeriodSeconds", False),
    )
    return config, pods, pod_stats


def tolerations(raw):
    spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else raw
    return spec.get("tolerations") or []


def termination_grace(v):
    """uid -> terminationGracePeriodSeconds of the vector's pods that set it."""
    out = {}
    for raw in v["pods"]:
        tg = raw.get("terminationGracePeriodSeconds", raw.get("termination_grace_period_s"))
        if tg is not None:
            out[Pod.from_dict(raw).uid] = tg
    return out


def _extra_items(extra):
    """``extra_pod_stats`` as (name, usage) pairs: a name -> usage map or a list of pod-shaped entries."""
    if isinstance(extra, dict):
        return list(extra.items())
    return [(e["name"], e.get("usage") or {}) for e in extra or ()]


def node_stats(node, pod_stats, extra=None, inodes=False):
    ps = dict(pod_stats)
    for name, usage in _extra_items(extra):
        p = Pod.from_dict({"name": name, "containers": []})
        ps[p.uid] = PodStats.from_usage(p, usage)
    return NodeStats(make_signal_observations(summary_of(node, inodes)), ps)


@pytest.mark.parametrize("v", vectors("eviction_scenarios.json", select=lambda v: "kind" not in v))
def test_synchronize_steps(v):
    config, pods, pod_stats = setup(v)
    # ``admit`` may name an admission pod or, failing that, one of the active pods.
    admission = [(Pod.from_dict(p), tolerations(p)) for p in (v.get("admission_pods") or []) + v["pods"]]
    never_completes = v.get("pod_termination") == "never completes"
    evicted_so_far: dict = {}  # uid -> whether its eviction was hard
    state, now = EvictionState(), 0.0
    for i, step in enumerate(v["steps"]):
        now += step["advance_s"]
        calls = []
        after = step.get("after_gc")

        def reclaim(funcs, after=after):
            calls.extend(funcs)
            return node_stats(after, pod_stats, inodes=counts_inodes(v)) if after is not None else None
        stats = node_stats(step["node"], pod_stats, step.get("extra_pod_stats"), counts_inodes(v))
        state, d = synchronize(config, state, stats, pods, now, reclaim=reclaim,
                               termination_grace_s=termination_grace(v),
                               terminating=dict(evicted_so_far) if never_completes else None)
        exp = step["expect"]
        where = f"step {i}"
        assert sorted(d.conditions) == sorted(exp["pressure"]), where
        names = [e.pod for e in d.evicted]
        for e in d.evicted:
            evicted_so_far[e.uid] = evicted_so_far.get(e.uid, False) or e.hard
        if exp["evicted"] is None:
            assert names == [], where
        elif exp["evicted"] == "(any pod)":
            assert len(names) == 1, where
        else:
            assert names == [exp["evicted"]], where
        if exp.get("grace_period_override_s") is not None:
            assert d.evicted[0].grace_period_override_s == exp["grace_period_override_s"], where
        if "gc_invoked" in exp:
            assert sorted(calls) == sorted(exp["gc_invoked"]), where
            assert sorted(d.gc_invoked) == sorted(exp["gc_invoked"]), where
        for name, ok in (exp.get("admit") or {}).items():
            pod, tol = next((p, t) for p, t in admission if p.name == name)
            assert admit(pod, d.conditions, tol).admit is ok, (where, name)


@pytest.mark.parametrize("v", vectors("eviction_scenarios.json", select=lambda v: v.get("kind") == "admit"))
def test_admit(v):
    pods = [(Pod.from_dict(p), tolerations(p)) for p in v["pods"]]
    for case in v["cases"]:
        got = [admit(p, case["conditions"], tol) for p, tol in pods]
        assert [g.admit for g in got] == case["expect"], case["conditions"]
        for g in got:
            if not g.admit:
                assert g.reason == "Evicted"
                assert g.message == f"The node had condition: [{' '.join(case['conditions'])}]. "


@pytest.mark.parametrize("v", vectors("eviction_scenarios.json", select=lambda v: v.get("kind") == "evicted_pod_status"))
def test_evicted_pod_status(v):
    config, pods, pod_stats = setup(v)
    stats = node_stats(v["node"], pod_stats, inodes=counts_inodes(v))
    exp = v["expect"]
    if "error" in exp:
        with pytest.raises(InputError) as err:
            synchronize(config, EvictionState(), stats, pods, 0.0)
        check_error_text(v, str(err.value))
        return
    _, d = synchronize(config, EvictionState(), stats, pods, 0.0, termination_grace_s=termination_grace(v))
    # README: ``evicted_derived`` is derived from the ranking; the contract is the status alone.
    assert len(d.evicted) == 1
    assert dict(d.evicted[0].status) == exp["pod_status"]


@pytest.mark.parametrize("v", vectors("eviction_scenarios.json",
                                      select=lambda v: v.get("kind") == "local_storage_eviction"))
def test_local_storage_eviction(v):
    config, pods, pod_stats = setup(v)
    _, d = synchronize(config, EvictionState(), node_stats(v["node"], pod_stats), pods, 0.0)
    exp = v["expect"]
    assert sorted(e.pod for e in d.evicted) == sorted(exp["evicted"])
    if exp.get("grace_period_override_s") is not None:
        assert all(e.grace_period_override_s == exp["grace_period_override_s"] for e in d.evicted)
    assert all(e.status["reason"] == "Evicted" and e.message for e in d.evicted)
    # ``message_derived`` documents the message format only (README: not asserted).


@pytest.mark.parametrize("v", vectors("eviction_scenarios.json"))
def test_every_vector_has_a_handled_kind(v):
    assert v.get("kind") in (None, "admit", "evicted_pod_status", "local_storage_eviction")
