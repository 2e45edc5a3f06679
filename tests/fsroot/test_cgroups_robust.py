"""The walk survives what real nodes do: cgroups vanishing mid-walk, unreadable files, garbage."""
from __future__ import annotations

import os
import shutil

import pytest

from pynuma.cgroups import walk as cgwalk
from pynuma.cgroups.detect import CGROUPFS, SYSTEMD, V1, V2
from pynuma.cgroups.kubepods import container_cgroup_name, pod_cgroup_name
from pynuma.cgroups.synthetic import build_tree, make_pods
from pynuma.fsroot import FsRoot


@pytest.fixture
def walker(backend, monkeypatch):
    mod = backend("cgwalk")
    monkeypatch.setattr(cgwalk, "_walker", mod)
    return mod


def kubepods(tmp_path, mode=V2, driver=SYSTEMD):
    cg = tmp_path / "sys/fs/cgroup"
    if mode != V2:
        cg = cg / "memory"
    return cg / ("kubepods.slice" if driver == SYSTEMD else "kubepods")


@pytest.mark.parametrize("driver", [SYSTEMD, CGROUPFS])
def test_pod_removed_between_listing_and_reading_is_skipped(tmp_path, walker, driver):
    specs = make_pods(6)
    build_tree(str(tmp_path), driver=driver, pods=specs, extra_files=False)
    victim = specs[1]  # a Burstable pod: removed right after its tier directory is listed
    vpath = pod_cgroup_name(victim.uid, victim.qos, driver)
    tier_prefix = vpath.rsplit("/", 1)[0] + "/"
    seen = []

    def hook(prefix):
        seen.append(prefix)
        if prefix == tier_prefix:
            shutil.rmtree(kubepods(tmp_path, driver=driver) / vpath)

    pods = cgwalk.walk_pods(FsRoot(str(tmp_path)), hook=hook)
    assert tier_prefix in seen  # the removal really happened mid-walk
    assert sorted(p.uid for p in pods) == sorted(s.uid for s in specs if s is not victim)


def test_container_removed_mid_walk_is_skipped(tmp_path, walker):
    specs = make_pods(3)
    build_tree(str(tmp_path), pods=specs, extra_files=False)
    pod = specs[0]
    prel = pod_cgroup_name(pod.uid, pod.qos, SYSTEMD)
    gone = container_cgroup_name(pod.containers[0][1], SYSTEMD, pod.containers[0][0])

    def hook(prefix):
        if prefix == prel + "/":
            shutil.rmtree(kubepods(tmp_path) / prel / gone)

    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)), hook=hook)}
    assert [c.id for c in pods[pod.uid].containers] == [pod.containers[1][1]]
    assert len(pods) == 3


def test_hook_errors_reach_the_caller(tmp_path, walker):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)

    def hook(prefix):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        cgwalk.walk_pods(FsRoot(str(tmp_path)), hook=hook)


def _first_container_dir(tmp_path, mode=V2):
    pods = cgwalk.walk_pods(FsRoot(str(tmp_path)))
    c = pods[0].containers[0]
    return kubepods(tmp_path, mode) / c.stats.path, pods[0].uid, c.id


@pytest.mark.parametrize("mode", [V1, V2])
def test_unreadable_file_drops_only_its_figures(tmp_path, walker, mode):
    build_tree(str(tmp_path), mode=mode, pods=make_pods(2), extra_files=False)
    d, uid, cid = _first_container_dir(tmp_path, mode)
    usage = "memory.current" if mode == V2 else "memory.usage_in_bytes"
    os.remove(d / usage)
    os.mkdir(d / usage)  # read() -> EISDIR: unreadable (tests run as root, so chmod would not do)
    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)))}
    c = next(c for c in pods[uid].containers if c.id == cid)
    assert c.stats.memory_usage is None and c.stats.memory_working_set is None
    assert c.stats.problems == ("usage",)
    assert c.stats.memory_rss is not None and c.stats.pids_current is not None


def test_symlinked_file_is_never_followed(tmp_path, walker):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    d, uid, cid = _first_container_dir(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_text("12345\n")
    os.remove(d / "pids.current")
    os.symlink(outside, d / "pids.current")
    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)))}
    c = next(c for c in pods[uid].containers if c.id == cid)
    assert c.stats.pids_current is None and "pids.current" in c.stats.problems


@pytest.mark.parametrize("content", ["abc\n", "-5\n", "", "99999999999999999999999\n", "12 13\n", "1\u00e9\n"])
def test_garbage_number(tmp_path, walker, content):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    d, uid, cid = _first_container_dir(tmp_path)
    (d / "pids.current").write_text(content, encoding="utf-8")
    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)))}
    c = next(c for c in pods[uid].containers if c.id == cid)
    assert c.stats.pids_current is None
    assert c.stats.problems == ("pids.current",)
    assert c.stats.memory_usage is not None


def test_garbage_memory_stat_drops_its_figures_only(tmp_path, walker):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    d, uid, cid = _first_container_dir(tmp_path)
    text = (d / "memory.stat").read_text().replace("inactive_file ", "inactive_file x")
    (d / "memory.stat").write_text(text)
    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)))}
    c = next(c for c in pods[uid].containers if c.id == cid)
    assert c.stats.memory_inactive_file is None and c.stats.memory_rss is None
    # usage survives, and with inactive_file unknown the working set is the usage
    assert c.stats.memory_working_set == c.stats.memory_usage is not None
    assert set(c.stats.problems) == {"rss/anon", "file", "inactive_file"}


def test_missing_controller_files_are_none_without_problems(tmp_path, walker):
    build_tree(str(tmp_path), pods=make_pods(2), extra_files=False)
    d, uid, cid = _first_container_dir(tmp_path)
    os.remove(d / "pids.current")
    os.remove(d / "pids.max")
    pods = {p.uid: p for p in cgwalk.walk_pods(FsRoot(str(tmp_path)))}
    c = next(c for c in pods[uid].containers if c.id == cid)
    assert (c.stats.pids_current, c.stats.pids_max, c.stats.problems) == (None, None, ())


def test_unmounted_v1_hierarchy_leaves_its_figures_empty(tmp_path, walker):
    build_tree(str(tmp_path), mode=V1, pods=make_pods(2), extra_files=False)
    mounts = tmp_path / "proc/mounts"
    mounts.write_text("".join(l for l in mounts.read_text().splitlines(True) if "pids" not in l))
    pods = cgwalk.walk_pods(FsRoot(str(tmp_path)))
    assert pods and all(p.stats.pids_current is None and p.stats.memory_usage is not None for p in pods)


def test_walker_contract_missing_base_and_escapes(tmp_path, backend):
    import errno

    mod = backend("cgwalk")
    fs = FsRoot(str(tmp_path))
    spec = [(0, "memory.current", 0, 0, ())]
    with pytest.raises(OSError) as info:
        mod.walk(fs.root_fd, ["sys/fs/cgroup/kubepods"], False, spec, True, None)
    assert info.value.errno == errno.ENOENT
    (tmp_path / "x").mkdir()
    with pytest.raises(OSError) as info:  # ".." never climbs out of the root
        mod.walk(fs.root_fd, ["x/../../etc"], False, spec, True, None)
    assert info.value.errno == errno.EINVAL
    os.symlink("/", tmp_path / "link")   # nor does a symlink
    with pytest.raises(OSError):
        mod.walk(fs.root_fd, ["link/sys/fs/cgroup"], False, spec, True, None)


def _both_walkers():
    from pynuma import _impl

    impls = _impl.implementations("cgwalk")
    if "native" not in impls:
        pytest.skip("native walker not built")
    return impls["native"], impls["pure"]


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

_garbage = st.one_of(
    st.text(alphabet=st.sampled_from(list("0123456789 \t\n\r\x0b\x0c\x1c\x1fmaxé-+x_")), max_size=24),
    st.integers(min_value=0, max_value=2**70).map(lambda v: f"{v}\n"),
    st.lists(st.tuples(st.sampled_from(["anon", "file", "inactive_file", "file_mapped", "x"]),
                       st.one_of(st.integers(min_value=0, max_value=2**64).map(str), st.just("1a"))),
             max_size=5).map(lambda kv: "".join(f"{k} {v}\n" for k, v in kv)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(number=_garbage, stat=_garbage)
def test_native_and_pure_parse_garbage_alike(tmp_path, number, stat):
    native, pure = _both_walkers()
    if not (tmp_path / "proc").exists():
        build_tree(str(tmp_path), pods=make_pods(1, containers_per_pod=1), extra_files=False)
    d, _uid, _cid = _first_container_dir(tmp_path)
    (d / "pids.current").write_bytes(number.encode("utf-8"))
    (d / "memory.stat").write_bytes(stat.encode("utf-8"))
    fs = FsRoot(str(tmp_path))
    from pynuma.cgroups.detect import detect

    layout = detect(fs)
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), True,
            [tuple(s) for s in cgwalk._file_specs(layout, ["2MB"])], True, None)
    assert native.walk(*args) == pure.walk(*args)


def test_walks_in_threads_agree(tmp_path):
    import threading

    native, _pure = _both_walkers()
    build_tree(str(tmp_path), pods=make_pods(20), extra_files=False)
    fs = FsRoot(str(tmp_path))
    from pynuma.cgroups.detect import detect

    layout = detect(fs)
    args = (fs.root_fd, cgwalk._bases(layout, layout.kubepods), True,
            [tuple(s) for s in cgwalk._file_specs(layout, ["2MB"])], True, None)
    want = native.walk(*args)
    results = []
    threads = [threading.Thread(target=lambda: results.append(native.walk(*args))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


@pytest.mark.parametrize("value,accepted", [(2**63 - 1, True), (2**63, False), (2**64, False), (2**64 + 6, False),
                                            (9 * 10**19, False)])
def test_int64_boundary(tmp_path, walker, value, accepted):
    build_tree(str(tmp_path), pods=make_pods(1, containers_per_pod=1), extra_files=False)
    d, _uid, _cid = _first_container_dir(tmp_path)
    (d / "pids.current").write_text(f"{value}\n")
    (d / "memory.stat").write_text(f"anon {value}\nfile 1\n")
    c = cgwalk.walk_pods(FsRoot(str(tmp_path)))[0].containers[0]
    assert c.stats.pids_current == (value if accepted else None)
    assert c.stats.memory_rss == (value if accepted else None)
