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


TRICKY = {
    k.SYSTEMD: (["kubepods-pod.slice", "kubepods-pod_.slice", "kubepods-podx.slicex", "kubepods-burstable.slice",
                 "kubepods-besteffort.slice", "kubepods-guaranteed.slice", "kubepods-pod-a.slice"],
                ["kubepods-burstable-pod.slice", "kubepods-burstable-podu_1.slice", "kubepods-besteffort-podz.slice",
                 "kubepods-pod9.slice"],
                ["cri-containerd-.scope", "crio-.scope", "crio-conmon-x.scope", "docker-d.scope", "x.scope",
                 "cri-containerd-a.b.scope", "crio-c"]),
    k.CGROUPFS: (["pod", "pod-", "podA", "burstable", "besteffort", "guaranteed", "xpod1"],
                 ["pod", "podB", "pod_c", "burstable"],
                 ["abc", "crio-", "crio-conmon-x", "docker-d", "cri-containerd-e", ".hidden"]),
}


@pytest.mark.parametrize("driver", [k.SYSTEMD, k.CGROUPFS])
def test_tricky_names_native_and_pure_agree(tmp_path, driver):
    from pynuma import _impl
    from pynuma.cgroups.detect import detect

    impls = _impl.implementations("cgwalk")
    if "native" not in impls:
        pytest.skip("native walker not built")
    build_tree(str(tmp_path), mode="v2", driver=driver, extra_files=False)
    base = tmp_path / "sys/fs/cgroup" / ("kubepods.slice" if driver == k.SYSTEMD else "kubepods")
    top, in_tier, leaves = TRICKY[driver]
    tier = base / ("kubepods-burstable.slice" if driver == k.SYSTEMD else "burstable")
    for name in top:
        (base / name).mkdir(exist_ok=True)
    for name in in_tier:
        (tier / name).mkdir(exist_ok=True)
    for pod_dir in [d for d in list(base.iterdir()) + list(tier.iterdir()) if d.is_dir()]:
        for leaf in leaves:
            (pod_dir / leaf).mkdir(exist_ok=True)
    fs = FsRoot(str(tmp_path))
    layout = detect(fs)
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), driver == k.SYSTEMD,
            [tuple(s) for s in cgwalk._file_specs(layout, [])], True, None)
    native, pure = impls["native"].walk(*args), impls["pure"].walk(*args)
    assert native == pure
    assert any(r[0] == 3 for r in pure)  # some containers were recognised
