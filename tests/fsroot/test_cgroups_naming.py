"""pynuma.cgroups.kubepods: the kubelet's pod/container cgroup names, both drivers, both walkers."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.cgroups import kubepods as k
from pynuma.cgroups import walk as cgwalk
from pynuma.cgroups.synthetic import PodSpec, build_tree
from pynuma.fsroot import FsRoot


@pytest.mark.parametrize("qos,driver,expect", [
    (k.GUARANTEED, k.SYSTEMD, "kubepods-poda_b.slice"),
    (k.BURSTABLE, k.SYSTEMD, "kubepods-burstable.slice/kubepods-burstable-poda_b.slice"),
    (k.BEST_EFFORT, k.CGROUPFS, "besteffort/poda-b"),
    (k.GUARANTEED, k.CGROUPFS, "poda-b"),
])
def test_pod_cgroup_name(qos, driver, expect):
    assert k.pod_cgroup_name("a-b", qos, driver) == expect


@pytest.mark.parametrize("name,driver,expect", [
    ("cri-containerd-abc.scope", k.SYSTEMD, ("cri-containerd", "abc")),
    ("crio-abc.scope", k.SYSTEMD, ("crio", "abc")),
    ("docker-abc.scope", k.SYSTEMD, ("docker", "abc")),
    ("crio-conmon-abc.scope", k.SYSTEMD, None),
    ("abc", k.SYSTEMD, None),
    ("abc", k.CGROUPFS, ("", "abc")),
    ("crio-abc", k.CGROUPFS, ("crio", "abc")),
])
def test_container_of(name, driver, expect):
    assert k.container_of(name, driver) == expect


uids = st.uuids().map(str)


@settings(max_examples=200, deadline=None)
@given(uids, st.sampled_from([k.GUARANTEED, k.BURSTABLE, k.BEST_EFFORT]), st.sampled_from([k.SYSTEMD, k.CGROUPFS]))
def test_pod_name_round_trip(uid, qos, driver):
    path = k.pod_cgroup_name(uid, qos, driver)
    parts = path.split("/")
    tier = k.tier_of(parts[0], driver) if len(parts) == 2 else None
    assert tier == (None if qos == k.GUARANTEED else qos)
    assert k.pod_uid_of(parts[-1], driver, tier) == uid


@pytest.fixture
def walker(backend, monkeypatch):
    mod = backend("cgwalk")
    monkeypatch.setattr(cgwalk, "_walker", mod)
    return mod


@pytest.mark.parametrize("driver", [k.SYSTEMD, k.CGROUPFS])
def test_walkers_classify_runtimes_and_skip_strangers(tmp_path, walker, driver):
    pods = [PodSpec("u-1", k.BURSTABLE, (("cri-containerd", "c1"), ("crio", "c2"), ("docker", "c3")))]
    build_tree(str(tmp_path), mode="v2", driver=driver, pods=pods, extra_files=False)
    podrel = k.pod_cgroup_name("u-1", k.BURSTABLE, driver)
    base = tmp_path / "sys/fs/cgroup" / ("kubepods.slice" if driver == k.SYSTEMD else "kubepods")
    (base / podrel / ("crio-conmon-c2.scope" if driver == k.SYSTEMD else "crio-conmon-c2")).mkdir()
    (base / "system.slice").mkdir()           # not a pod: ignored
    (base / podrel.split("/")[0] / "not-a-pod").mkdir()
    got = cgwalk.walk_pods(FsRoot(str(tmp_path)))
    assert [(p.uid, p.qos) for p in got] == [("u-1", k.BURSTABLE)]
    assert sorted((c.runtime, c.id) for c in got[0].containers) == [("cri-containerd", "c1"), ("crio", "c2"),
                                                                    ("docker", "c3")] \
        if driver == k.SYSTEMD else [("", "c1"), ("", "c3"), ("crio", "c2")]
