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
