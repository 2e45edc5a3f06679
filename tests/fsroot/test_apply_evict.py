"""Eviction on synthetic trees: the kill loop, its bound, cgroup.kill, hooks, the recorded status."""
from __future__ import annotations

import os

import pytest

from pynuma.apply import VETO, EvictionOutcome, evict_action, evict_pod, execute, open_tree, plan_pod
from pynuma.apply.evict import host_signaller
from pynuma.errors import FakeRootRefused, InputError
from pynuma.fsroot import FsRoot
from pynuma.policy.eviction.messages import evicted_status
from tests.fixtures import cgroupfs
from tests.fsroot.test_apply_cgroups import DRIVERS, MODES, burstable_pod

MESSAGE = "The node was low on resource: memory. "


class FakeKernel:
    """Plays the kernel for SIGKILL on a fake tree: a killed pid leaves every cgroup.procs file.

    ``forks``: pid -> pid it starts when first signalled (a fork racing the kill);
    ``immortal``: pids that never die.
    """

    def __init__(self, root, forks=None, immortal=()):
        self.root, self.forks, self.immortal = root, dict(forks or {}), set(immortal)
        self.signalled = []

    def _procs_files(self):
        for dirpath, _, files in os.walk(os.path.join(self.root, "sys/fs/cgroup")):
            if "cgroup.procs" in files:
                yield os.path.join(dirpath, "cgroup.procs")

    def __call__(self, pid, cgroup):
        self.signalled.append(pid)
        child = self.forks.pop(pid, None)
        for path in self._procs_files():
            with open(path) as f:
                pids = f.read().split()
            if str(pid) not in pids:
                continue
            if pid not in self.immortal:
                pids.remove(str(pid))
            if child is not None:
                pids.append(str(child))
            with open(path, "w") as f:
                f.write("\n".join(pids) + ("\n" if pids else ""))
        return True


@pytest.fixture(params=[(m, d) for m in MODES for d in DRIVERS], ids=lambda p: f"{p[0]}-{p[1]}")
def running(tmp_path, request):
    """A node with the burstable pod applied and processes 4242 (app) and 4343 (log) in it."""
    mode, driver = request.param
    root = cgroupfs.build(str(tmp_path), mode, driver, pids=[4242, 4343])
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    pod = burstable_pod()
    execute(tree, plan_pod(tree, pod, pids={"app": [4242], "log": [4343]}))
    return root, tree, pod


def test_sigkill_loop_empties_the_pod_and_removes_its_cgroups(running):
    root, tree, pod = running
    kernel = FakeKernel(root)
    out = evict_pod(tree, pod, "Evicted", MESSAGE, signaller=kernel)
    assert out.evicted and out.removed and out.method == "SIGKILL"
    assert sorted(set(kernel.signalled)) == [4242, 4343] == list(out.signalled)
    assert out.status == evicted_status(MESSAGE, True)
    assert out.status["conditions"][0]["type"] == "DisruptionTarget"
    assert tree.find_pod(pod.uid) is None
    assert out.cgroup == tree.pod_path(pod.uid, "Burstable")


def test_rescan_catches_a_process_forked_during_the_kill(running):
    root, tree, pod = running
    kernel = FakeKernel(root, forks={4242: 5555})
    out = evict_pod(tree, pod, signaller=kernel, remove=False)
    assert out.evicted and 5555 in out.signalled and not out.removed
    assert tree.find_pod(pod.uid) is not None


def test_a_process_that_will_not_die_bounds_the_wait_and_keeps_the_cgroups(running):
    root, tree, pod = running
    out = evict_pod(tree, pod, signaller=FakeKernel(root, immortal={4343}), timeout=0.05)
    assert not out.evicted and out.remaining == (4343,) and out.status is None and not out.removed
    assert tree.find_pod(pod.uid) is not None
    assert 0.05 <= out.seconds < 5


def test_dry_run_lists_the_kills_and_removals_and_changes_nothing(running):
    root, tree, pod = running
    before = sorted(os.walk(root))
    out = evict_pod(tree, pod, dry_run=True, signaller=lambda pid, cgroup: True)
    assert sorted(os.walk(root)) == before
    assert out.dry_run and not out.evicted and out.remaining == (4242, 4343)
    kills = [line for line in out.plan if line.startswith("kill")] if tree.version == 1 or \
        not os.path.exists(os.path.join(root, "sys/fs/cgroup", out.cgroup.lstrip("/"), "cgroup.kill")) else []
    assert kills == ["kill -KILL 4242", "kill -KILL 4343"]
    removed = [line[len("rmdir "):] for line in out.plan if line.startswith("rmdir ")]
    pod_dirs = [tree.fs.host_path(d) for d in tree.dirs(out.cgroup)]
    assert set(pod_dirs) <= set(removed) and len(removed) > len(pod_dirs)  # the containers' cgroups too
    for i, path in enumerate(removed):  # deepest first: nothing is removed before what it holds
        assert not any(other.startswith(path + "/") for other in removed[i + 1:])
    with pytest.raises(FakeRootRefused, match="live host"):  # without a signaller, as the run would
        evict_pod(tree, pod, dry_run=True)


def test_a_fake_root_never_signals_live_processes(running):
    root, tree, pod = running
    if tree.version == 1:
        with pytest.raises(FakeRootRefused, match="live host"):
            evict_pod(tree, pod)


@pytest.mark.parametrize("driver", DRIVERS)
def test_v2_writes_cgroup_kill_once_and_waits_for_the_kernel(tmp_path, driver):
    root = cgroupfs.build(str(tmp_path), "v2", driver)
    tree = open_tree(FsRoot(root), allow_fake_root=True)
    pod = burstable_pod()
    execute(tree, plan_pod(tree, pod))
    kill_file = os.path.join(root, "sys/fs/cgroup", tree.pod_path(pod.uid, "Burstable").lstrip("/"), "cgroup.kill")
    open(kill_file, "w").close()  # a kernel from 5.14 on has it
    out = evict_pod(tree, pod, remove=False)
    assert out.method == "cgroup.kill" and out.evicted and out.signalled == ()
    with open(kill_file) as f:
        assert f.read() == "1"


def test_hook_can_veto_or_take_over(running):
    root, tree, pod = running
    seen = []

    def veto(p, reason, message):
        seen.append((p.uid, reason, message))
        return VETO

    out = evict_action(tree, hook=veto)(pod, "Evicted", MESSAGE)
    assert out.vetoed and not out.evicted and out.status is None
    assert seen == [(pod.uid, "Evicted", MESSAGE)]
    assert tree.find_pod(pod.uid) is not None

    mine = EvictionOutcome(pod.uid, evicted=True, status={"phase": "Failed", "reason": "Mine", "message": "m"})
    out = evict_action(tree, hook=lambda *a: mine)(pod, "Evicted", MESSAGE)
    assert out.taken_over and out.status["reason"] == "Mine"
    assert tree.find_pod(pod.uid) is not None

    with pytest.raises(InputError, match="eviction hook returned 'yes'"):
        evict_action(tree, hook=lambda *a: "yes")(pod, "Evicted", MESSAGE)


def test_action_accepts_a_uid_and_records_the_reason(running):
    root, tree, pod = running
    action = evict_action(tree, signaller=FakeKernel(root))
    out = action(pod.uid, "Preempted", "make room")
    assert out.evicted and out.status["reason"] == "Preempted" and out.status["message"] == "make room"
    assert action.tree is tree


def test_a_pod_without_cgroups_is_already_evicted(running):
    root, tree, pod = running
    out = evict_pod(tree, "no-such-uid", signaller=FakeKernel(root))
    assert out.evicted and out.cgroup is None and out.signalled == ()


def test_action_opens_the_tree_once_from_a_path(tmp_path):
    root = cgroupfs.build(str(tmp_path), "v1", "cgroupfs")
    with pytest.raises(FakeRootRefused):
        evict_action(root)
    action = evict_action(root, allow_fake_root=True, signaller=FakeKernel(root))
    assert action.tree.version == 1 and action.tree.driver == "cgroupfs"


def test_host_signaller_refuses_the_calling_process():
    tree = open_tree(FsRoot("/"), driver="cgroupfs")
    kill = host_signaller(tree)
    with pytest.raises(InputError, match="pynuma's own process"):
        kill(os.getpid(), "/kubepods/pod-x")
    # a process that is not in the cgroup is left alone (and a pid that does not exist is harmless)
    assert kill(1, "/kubepods/pod-not-here") is False
