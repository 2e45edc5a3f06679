"""pynuma.cgroups.walk on synthetic trees: v1, v2, hybrid x systemd, cgroupfs x native, pure."""
from __future__ import annotations

import pytest

from pynuma.cgroups import walk as cgwalk
from pynuma.cgroups._spec import UNLIMITED
from pynuma.cgroups.detect import CGROUPFS, HYBRID, SYSTEMD, V1, V2, detect
from pynuma.cgroups.kubepods import GUARANTEED
from pynuma.cgroups.synthetic import build_tree, make_pods
from pynuma.fsroot import FsRoot

V1_UNLIMITED = 9223372036854771712  # what a v1 memory.limit_in_bytes says when unlimited


@pytest.fixture
def walker(backend, monkeypatch):
    mod = backend("cgwalk")
    monkeypatch.setattr(cgwalk, "_walker", mod)
    return mod


def check(stats, e, mode):
    assert stats.memory_usage == e.usage
    assert stats.memory_working_set == max(e.usage - e.inactive_file, 0)
    assert stats.memory_rss == e.anon and stats.memory_file == e.file
    assert stats.memory_inactive_file == e.inactive_file
    unlimited = UNLIMITED if mode == V2 else V1_UNLIMITED
    assert stats.memory_limit == (e.limit if e.limit is not None else unlimited)
    assert stats.memory_limit_known == (e.limit is not None)
    assert stats.pids_current == e.pids
    assert stats.pids_max == (UNLIMITED if e.pids_max is None else e.pids_max)
    assert stats.cpu_usage_ns == e.cpu_ns
    assert stats.hugetlb == e.hugetlb
    assert stats.problems == ()


@pytest.mark.parametrize("mode", [V1, V2, HYBRID])
@pytest.mark.parametrize("driver", [SYSTEMD, CGROUPFS])
def test_walk_reports_what_was_written(tmp_path, walker, mode, driver):
    specs = make_pods(7, containers_per_pod=2)
    expected = build_tree(str(tmp_path), mode=mode, driver=driver, pods=specs, huge_sizes=("2MB", "1GB"), extra_files=False)
    fs = FsRoot(str(tmp_path))
    pods = cgwalk.walk_pods(fs)
    assert sorted((p.uid, p.qos) for p in pods) == sorted((s.uid, s.qos) for s in specs)
    wmode = V2 if mode == V2 else V1
    for pod in pods:
        check(pod.stats, expected[pod.stats.path], wmode)
        assert pod.working_set == pod.stats.memory_working_set
        spec = next(s for s in specs if s.uid == pod.uid)
        assert sorted(c.id for c in pod.containers) == sorted(cid for _, cid in spec.containers)
        for c in pod.containers:
            check(c.stats, expected[c.stats.path], wmode)
    check(cgwalk.kubepods_stats(fs), expected[""], wmode)


def test_guaranteed_pods_sit_directly_under_kubepods(tmp_path, walker):
    specs = make_pods(3)
    build_tree(str(tmp_path), pods=specs, extra_files=False)
    pods = cgwalk.walk_pods(FsRoot(str(tmp_path)))
    g = [p for p in pods if p.qos == GUARANTEED]
    assert g and all("/" not in p.stats.path for p in g)


def test_native_and_pure_records_agree(tmp_path):
    from pynuma import _impl

    impls = _impl.implementations("cgwalk")
    if "native" not in impls:
        pytest.skip("native walker not built")
    build_tree(str(tmp_path), mode=V1, driver=SYSTEMD, pods=make_pods(5), extra_files=False)
    fs = FsRoot(str(tmp_path))
    layout = detect(fs)
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), True,
            [tuple(s) for s in cgwalk._file_specs(layout, ["2MB"])], True, None)
    assert impls["native"].walk(*args) == impls["pure"].walk(*args)


def test_no_kubepods_means_no_pods(tmp_path, walker):
    build_tree(str(tmp_path), mode=V2)
    import shutil
    shutil.rmtree(tmp_path / "sys/fs/cgroup/kubepods.slice")
    fs = FsRoot(str(tmp_path))
    assert cgwalk.walk_pods(fs) == []
    from pynuma.errors import Unsupported
    with pytest.raises(Unsupported):
        cgwalk.kubepods_stats(fs)


@pytest.mark.parametrize("mode", [V1, V2])
def test_node_root_stats(tmp_path, walker, mode):
    expected = build_tree(str(tmp_path), mode=mode)
    st = cgwalk.node_root_stats(FsRoot(str(tmp_path)))
    e = expected["/"]
    # v2 root has no memory.current: usage is emulated as anon + file
    assert st.memory_usage == (e.anon + e.file if mode == V2 else e.usage)
    assert st.memory_working_set == max(st.memory_usage - e.inactive_file, 0)
    from pynuma.cgroups.synthetic import MEM_TOTAL
    assert st.memory_limit == MEM_TOTAL


def test_files_absent_at_kubepods_are_not_looked_for_below(tmp_path, walker):
    # v2 enables controllers top-down: no hugetlb file in kubepods means none below it
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    (tmp_path / "sys/fs/cgroup/kubepods.slice/hugetlb.2MB.current").unlink()
    pods = cgwalk.walk_pods(FsRoot(str(tmp_path)))
    assert pods and all(p.stats.hugetlb == {} and p.stats.memory_usage for p in pods)
    assert all(c.stats.hugetlb == {} for p in pods for c in p.containers)
