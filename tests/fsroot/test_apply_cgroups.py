"""The cgroup actuator on synthetic trees: v1, v2 and hybrid; cgroupfs and systemd names.

Every expected value is computed from the pod through the kubelet rules
(:mod:`pynuma.policy.cgroupconfig`), never typed in: the tests check that
the actuator writes those values to the right files, in a safe order,
once, and refuses with a clear message when the tree cannot take them.
"""
from __future__ import annotations

import os

import pytest

from pynuma.apply import (KubeletSettings, Placement, PreconditionError, execute, open_tree, plan_node_allocatable,
                          plan_pod, plan_qos, plan_remove_pod)
from pynuma.apply.pods import huge_page_sizes
from pynuma.cpuset import CPUSet
from pynuma.errors import FakeRootRefused, InputError
from pynuma.fsroot import FsRoot
from pynuma.pod import Pod
from pynuma.policy.cgroupconfig import node_allocatable_cgroup_config, qos_cgroup_config
from pynuma.policy.cgroupconfig.conversions import milli_cpu_to_shares, shares_to_weight
from pynuma.policy.oom_score import container_oom_score_adj
from pynuma.quantity import Quantity
from tests.fixtures import cgroupfs

MODES = ["v1", "v2", "hybrid"]
DRIVERS = ["cgroupfs", "systemd"]
GI = 1 << 30


def burstable_pod(uid="1234-abcd"):
    return Pod.from_dict({"metadata": {"name": "web", "uid": uid}, "spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"},
                                      "limits": {"cpu": "2", "memory": "2Gi"}}},
        {"name": "log", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                      "limits": {"memory": "128Mi"}}}]}})


def guaranteed_pod(uid="5678-ef"):
    return Pod.from_dict({"metadata": {"name": "db", "uid": uid}, "spec": {"containers": [
        {"name": "db", "resources": {"requests": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
                                     "limits": {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}}}]}})


@pytest.fixture(params=[(m, d) for m in MODES for d in DRIVERS], ids=lambda p: f"{p[0]}-{p[1]}")
def node(tmp_path, request):
    mode, driver = request.param
    root = cgroupfs.build(str(tmp_path), mode, driver, pids=[4242, 4343])
    fs = FsRoot(root)
    yield mode, driver, root, open_tree(fs, allow_fake_root=True)
    fs.close()


def _file(root, mode, controller, cgroup, name):
    return cgroupfs.read(root, os.path.join(cgroupfs.cgroup_dir(root, mode, controller)[len(root):], cgroup.lstrip("/"),
                                            name)).strip()


def test_tree_detection_follows_mode_and_driver(node):
    mode, driver, root, tree = node
    assert tree.version == (2 if mode == "v2" else 1)
    assert tree.driver == driver
    assert tree.kubepods == ("/kubepods.slice" if driver == "systemd" else "/kubepods")
    pod = burstable_pod()
    path = tree.pod_path(pod.uid, "Burstable")
    assert path.endswith("kubepods-burstable-pod1234_abcd.slice" if driver == "systemd" else "burstable/pod1234-abcd")


def test_pod_and_container_cgroups_get_the_kubelet_values(node):
    mode, driver, root, tree = node
    pod = burstable_pod()
    placements = {"app": Placement(CPUSet.parse("2-3"), CPUSet.parse("0"))}
    plan = plan_pod(tree, pod, placements=placements, pids={"app": [4242]}, memory_capacity=8 * GI)
    execute(tree, plan)
    pod_cg = tree.pod_path(pod.uid, "Burstable")
    app_cg = tree.container_path(pod_cg, "app")
    log_cg = tree.container_path(pod_cg, "log")
    shares = milli_cpu_to_shares(1600)
    if tree.version == 2:
        assert _file(root, mode, "", pod_cg, "cpu.weight") == str(shares_to_weight(shares))
        # every container limits memory, not every one CPU: a pod memory limit, no pod quota
        assert _file(root, mode, "", pod_cg, "memory.max") == str(2 * GI + (128 << 20))
        assert "cpu.max" not in os.listdir(cgroupfs.cgroup_dir(root, mode) + pod_cg)
        assert _file(root, mode, "", app_cg, "cpu.max") == "200000 100000"
        assert _file(root, mode, "", app_cg, "memory.max") == str(2 * GI)
        assert _file(root, mode, "", app_cg, "cpuset.cpus") == "2-3"
        assert _file(root, mode, "", app_cg, "memory.oom.group") == "1"
        assert _file(root, mode, "", log_cg, "cpu.max") == "max 100000"
        assert _file(root, mode, "", app_cg, "cgroup.procs") == "4242"
        enabled = _file(root, mode, "", pod_cg, "cgroup.subtree_control").split()
        assert {"+cpu", "+cpuset", "+memory", "+hugetlb"} <= set(enabled)
    else:
        assert _file(root, mode, "cpu", pod_cg, "cpu.shares") == str(shares)
        assert _file(root, mode, "memory", pod_cg, "memory.limit_in_bytes") == str(2 * GI + (128 << 20))
        assert "cpu.cfs_quota_us" not in os.listdir(cgroupfs.cgroup_dir(root, mode, "cpu") + pod_cg)
        assert _file(root, mode, "cpu", app_cg, "cpu.cfs_quota_us") == "200000"
        assert _file(root, mode, "cpu", app_cg, "cpu.cfs_period_us") == "100000"
        assert _file(root, mode, "memory", app_cg, "memory.limit_in_bytes") == str(2 * GI)
        assert _file(root, mode, "memory", log_cg, "memory.limit_in_bytes") == str(128 << 20)
        assert _file(root, mode, "cpuset", app_cg, "cpuset.cpus") == "2-3"
        # a new v1 cpuset takes the parent's cpus and mems before anything can join it
        assert _file(root, mode, "cpuset", pod_cg, "cpuset.cpus") == "0-3"
        assert _file(root, mode, "cpuset", log_cg, "cpuset.mems") == "0"
        for controller in cgroupfs.V1_CONTROLLERS:
            assert _file(root, mode, controller, app_cg, "cgroup.procs") == "4242"
    want_adj = container_oom_score_adj(pod, "app", 8 * GI)
    assert cgroupfs.read(root, "/proc/4242/oom_score_adj").strip() == str(want_adj)


def test_second_apply_changes_nothing(node):
    mode, driver, root, tree = node
    pod = guaranteed_pod()
    kw = dict(placements={"db": Placement(CPUSet.parse("1"), None)}, pids={"db": [4343]}, memory_capacity=8 * GI)
    first = plan_pod(tree, pod, **kw)
    assert first.changes
    execute(tree, first)
    again = plan_pod(tree, pod, **kw)
    assert again.changes == ()
    # the second plan still checks every value the first one wrote (inherited v1 cpusets are now set)
    wrote = {(s.path, s.value) for s in first.steps
             if s.action == "write" and "inherited" not in s.why and not s.path.endswith("subtree_control")}
    assert wrote <= {(s.path, s.value) for s in again.steps}


def test_dry_run_plan_writes_nothing_and_names_every_file(node):
    mode, driver, root, tree = node
    before = sorted(os.walk(root))
    plan = plan_pod(tree, guaranteed_pod())
    assert sorted(os.walk(root)) == before
    text = plan.describe()
    assert text.splitlines()[0].startswith("mkdir " + root)
    assert all(line.startswith(("mkdir ", "write ", "note: ")) for line in text.splitlines())
    hugetlb = "hugetlb.2MB.max" if tree.version == 2 else "hugetlb.2MB.limit_in_bytes"
    assert any(s.path.endswith(hugetlb) and s.value == str(4 << 20) for s in plan.steps)


def test_remove_refuses_while_processes_remain_then_removes_everything(node):
    mode, driver, root, tree = node
    pod = burstable_pod()
    execute(tree, plan_pod(tree, pod, pids={"app": [4242]}))
    with pytest.raises(PreconditionError, match="still holds processes 4242"):
        plan_remove_pod(tree, pod.uid)
    for d in tree.dirs(tree.container_path(tree.pod_path(pod.uid, "Burstable"), "app")):
        with open(os.path.join(root, d.lstrip("/"), "cgroup.procs"), "w"):
            pass
    plan = plan_remove_pod(tree, pod.uid)
    rmdirs = [s.path for s in plan.steps]
    assert all(s.action == "rmdir" for s in plan.steps)
    assert len(rmdirs) == 3 * len(tree.hierarchies())
    execute(tree, plan)
    assert tree.find_pod(pod.uid) is None
    assert plan_remove_pod(tree, pod.uid).steps == ()


def test_qos_tiers_and_node_allocatable(node):
    mode, driver, root, tree = node
    pods = [burstable_pod(), guaranteed_pod()]
    cfg = qos_cgroup_config(pods, allocatable_memory=8 * GI, qos_reserved_memory=100,
                            huge_page_sizes=huge_page_sizes(tree))
    execute(tree, plan_qos(tree, cfg))
    burst = tree.tier_path("Burstable")
    if tree.version == 2:
        assert _file(root, mode, "", burst, "cpu.weight") == str(shares_to_weight(cfg.burstable.cpu_shares))
        assert _file(root, mode, "", burst, "memory.max") == str(cfg.burstable.memory)
    else:
        assert _file(root, mode, "cpu", burst, "cpu.shares") == str(cfg.burstable.cpu_shares)
        assert _file(root, mode, "memory", tree.tier_path("BestEffort"), "memory.limit_in_bytes") == \
            str(cfg.besteffort.memory)
    na = node_allocatable_cgroup_config({"cpu": Quantity.parse("3"), "memory": Quantity.parse("6Gi"),
                                         "pid": Quantity.parse("4096")})
    execute(tree, plan_node_allocatable(tree, na))
    name = "memory.max" if tree.version == 2 else "memory.limit_in_bytes"
    assert _file(root, mode, "memory", tree.kubepods, name) == str(6 * GI)
    assert _file(root, mode, "pids", tree.kubepods, "pids.max") == "4096"
    assert plan_qos(tree, cfg).changes == ()


def test_pod_level_pids_limit_and_cfs_period(node):
    mode, driver, root, tree = node
    settings = KubeletSettings(pod_pids_limit=512, cpu_period_us=5000)
    plan = plan_pod(tree, guaranteed_pod(), settings=settings)
    values = {os.path.basename(s.path): s.value for s in plan.steps if s.action == "write" and "pod" in s.path
              and s.path.count("/") == plan.steps[0].path.count("/") + 1}
    assert values["pids.max"] == "512"
    if tree.version == 2:
        assert values["cpu.max"] == "10000 5000"
    else:
        assert (values["cpu.cfs_period_us"], values["cpu.cfs_quota_us"]) == ("5000", "10000")


def test_cpus_that_do_not_exist_are_refused_before_anything_is_written(node):
    mode, driver, root, tree = node
    with pytest.raises(PreconditionError, match=r"CPUs 4-7 do not exist.*cpu/online says 0-3"):
        plan_pod(tree, guaranteed_pod(), placements={"db": Placement(CPUSet.parse("2-7"), None)})
    with pytest.raises(PreconditionError, match="memory nodes 3 do not exist"):
        plan_pod(tree, guaranteed_pod(), placements={"db": Placement(None, CPUSet.parse("3"))})


def test_missing_process_is_refused(node):
    mode, driver, root, tree = node
    with pytest.raises(PreconditionError, match="/proc/999999: no such process"):
        plan_pod(tree, guaranteed_pod(), pids={"db": [999999]})


def test_unknown_container_names_are_input_errors(node):
    mode, driver, root, tree = node
    with pytest.raises(InputError, match="unknown container 'nope'"):
        plan_pod(tree, guaranteed_pod(), pids={"nope": [4242]})


@pytest.mark.parametrize("driver", DRIVERS)
def test_v2_controller_not_enabled_in_the_tier_names_its_subtree_control(tmp_path, driver):
    root = cgroupfs.build(str(tmp_path), "v2", driver)
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    tier = tree.tier_path("Burstable")
    with open(f"{root}/sys/fs/cgroup{tier}/cgroup.subtree_control", "w") as f:
        f.write("cpu memory pids\n")
    placed = {"app": Placement(CPUSet.parse("1"), None)}
    with pytest.raises(PreconditionError) as err:
        plan_pod(tree, burstable_pod(), placements=placed)
    assert err.value.path == f"{root}/sys/fs/cgroup{tier}/cgroup.subtree_control"
    assert "controller cpuset not enabled" in str(err.value) and "cpuset.cpus" in str(err.value)
    # without a cpuset decision nothing needs cpuset; hugetlb limits nobody asked for are skipped, with a note
    plan = plan_pod(tree, burstable_pod())
    assert any("hugetlb" in n for n in plan.notes)
    assert not any("hugetlb" in s.path for s in plan.steps)


def test_v1_cpuset_parent_without_cpus_is_refused_naming_its_file(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v1", "cgroupfs")
    with open(os.path.join(root, "sys/fs/cgroup/cpuset/kubepods/burstable/cpuset.cpus"), "w"):
        pass
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    with pytest.raises(PreconditionError) as err:
        plan_pod(tree, burstable_pod())
    assert err.value.path == f"{root}/sys/fs/cgroup/cpuset/kubepods/burstable/cpuset.cpus"
    assert "cpuset parent needs cpuset.cpus and cpuset.mems" in str(err.value)


def test_v1_cpus_outside_the_parent_cpuset_are_refused(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v1", "systemd", cpus="0-7", cpuset_cpus="0-3")
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    with pytest.raises(PreconditionError, match=r"CPUs 4-5 are outside the parent cgroup's 0-3"):
        plan_pod(tree, guaranteed_pod(), placements={"db": Placement(CPUSet.parse("2-5"), None)})


def test_a_fake_root_is_refused_unless_targeted(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v2", "cgroupfs")
    with pytest.raises(FakeRootRefused, match="target it explicitly"):
        open_tree(FsRoot(root))


def test_missing_kubepods_needs_a_driver_then_is_created(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v2", "cgroupfs", kubepods=False)
    with pytest.raises(InputError, match="give the cgroup driver"):
        open_tree(FsRoot(root), allow_fake_root=True)
    tree = open_tree(FsRoot(root), driver="systemd", allow_fake_root=True)
    plan = plan_pod(tree, burstable_pod())
    made = [s.path for s in plan.steps if s.action == "mkdir"]
    assert made[:2] == ["/sys/fs/cgroup/kubepods.slice", "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice"]
    # kubepods and the tier are this plan's own: their controllers are enabled for the pods below
    assert any(s.path == "/sys/fs/cgroup/kubepods.slice/cgroup.subtree_control" for s in plan.steps)
    execute(tree, plan)
    assert open_tree(FsRoot(root), allow_fake_root=True).driver == "systemd"


def test_a_kubepods_this_plan_creates_gets_every_controller_later_pods_may_need(tmp_path):
    # the first pod needs only cpu and memory, the next one a cpuset: runc enables every controller the
    # parent gives when it creates a cgroup, so kubepods must not be left with the first pod's two
    root = cgroupfs.build(str(tmp_path), "v2", "cgroupfs", kubepods=False)
    tree = open_tree(FsRoot(root), driver="cgroupfs", allow_fake_root=True)
    plan = plan_pod(tree, burstable_pod())
    writes = {s.path: s.value for s in plan.steps if s.path.endswith("/cgroup.subtree_control")}
    assert sorted(writes["/sys/fs/cgroup/kubepods/cgroup.subtree_control"].split()) == \
        ["+cpu", "+cpuset", "+hugetlb", "+memory", "+pids"]
    # a container's own cgroup holds its processes: no controllers are enabled below it
    assert not any(p.endswith(("/app/cgroup.subtree_control", "/log/cgroup.subtree_control")) for p in writes)
    execute(tree, plan)
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    plan_pod(tree, guaranteed_pod(), placements={"db": Placement(cpus=CPUSet([1, 2]), mems=CPUSet([0]))})


def test_unified_settings_are_refused_on_v1(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v1", "cgroupfs")
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    with pytest.raises(InputError, match="need cgroup v2"):
        tree.writer.settings(qos_cgroup_config([burstable_pod()], memory_qos=True,
                                               memory_reservation_policy="TieredReservation").burstable)


def test_a_path_escaping_the_root_is_refused(tmp_path):
    from pynuma.apply import _fsops

    root = cgroupfs.build(str(tmp_path / "node"), "v2", "cgroupfs")
    os.symlink(str(tmp_path), os.path.join(root, "escape"))
    with pytest.raises(InputError, match="outside the root"):
        _fsops.mkdir(FsRoot(root), "/escape/owned")
    assert not os.path.exists(tmp_path / "owned")
