"""The actuator against the real kernel: cgroups made by the test, processes it started, all removed.

Everything happens below this process's own cgroup in each hierarchy
(``open_tree(..., nest_under_self=True)``), under a name unique to the run;
the machine's own cgroups, cpusets and hugepage pools are never written.
Each test checks that the parent cgroups have the same children before
and after.  Skipped, with the reason, where the process may not create
cgroups (not root, read-only cgroupfs, a v2 cgroup that cannot delegate).
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

import pytest

from pynuma.apply import Placement, PreconditionError, evict_pod, execute, open_tree, plan_pod
from pynuma.apply.planner import Planner
from pynuma.cpuset import CPUSet
from pynuma.errors import PynumaError
from pynuma.fsroot import FsRoot
from pynuma.pod import Pod
from pynuma.policy.oom_score import container_oom_score_adj
from tests.fixtures import host

CHILD = """
import os, sys, subprocess, time
print("ready", flush=True)
cmd = sys.stdin.readline().strip()
if cmd == "alloc":
    hog = b"x" * (256 << 20)   # touches every page: past a 64Mi limit
    print("survived", flush=True)
elif cmd == "fork":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print("forked", flush=True)
time.sleep(60)
"""


def _why_not() -> str:
    if os.geteuid() != 0:
        return "needs root to create cgroups"
    try:
        with FsRoot("/") as fs:
            tree = open_tree(fs, "/", "cgroupfs", nest_under_self=True)
            probe = os.path.join(tree.primary, f"pynuma-probe-{os.getpid()}")
            os.mkdir(probe)
            os.rmdir(probe)
    except (OSError, PynumaError) as err:
        return f"cannot create a cgroup below this process's own: {err}"
    return ""


WHY_NOT = _why_not()
pytestmark = pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "ok")


def _children(tree):
    out = {}
    for mount, _ in tree.hierarchies():
        d = mount
        out[d] = sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)))
    return out


def _kill_tree(tree, base):
    """Kill whatever is left below ``base`` and remove it (used in ``finally``)."""
    for mount, _ in tree.hierarchies():
        top = os.path.join(mount, base.lstrip("/"))
        for dirpath, dirs, files in os.walk(top):
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        if int(pid) != os.getpid():
                            try:
                                os.kill(int(pid), signal.SIGKILL)
                            except ProcessLookupError:
                                pass
            except OSError:
                pass
    deadline = time.monotonic() + 5
    for mount, _ in tree.hierarchies():
        top = os.path.join(mount, base.lstrip("/"))
        for dirpath, dirs, files in sorted(os.walk(top), key=lambda e: -e[0].count("/")):
            while True:
                try:
                    os.rmdir(dirpath)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)


@pytest.fixture
def node():
    """``(tree, base)``: a cgroup root of our own in every hierarchy, removed afterwards."""
    fs = FsRoot("/")
    base = f"/pynuma-test-{os.getpid()}-{secrets.token_hex(3)}"
    probe_tree = open_tree(fs, "/", "cgroupfs", nest_under_self=True)
    before = _children(probe_tree)
    tree = open_tree(fs, base, "cgroupfs", nest_under_self=True)
    try:
        planner = Planner(tree)
        planner.ensure(base)
        execute(tree, planner.plan())
    except PreconditionError as err:
        _kill_tree(probe_tree, base)
        fs.close()
        pytest.skip(f"this process's cgroup cannot hold child cgroups here: {err}")
    try:
        yield tree, base
    finally:
        _kill_tree(tree, base)
        after = _children(probe_tree)
        fs.close()
        assert after == before, "cgroups left behind"


@pytest.fixture
def children():
    procs = []

    def start():
        p = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        assert p.stdout.readline().strip() == "ready"
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def _pod(name, cpu, memory, limit_cpu=None):
    return Pod.from_dict({"metadata": {"name": name, "uid": f"{name}-{secrets.token_hex(4)}"}, "spec": {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory},
                                                     "limits": {"cpu": limit_cpu or cpu, "memory": memory}}}]}})


def test_a_child_cgroup_is_created_in_every_hierarchy_and_removed(node):
    tree, base = node
    for mount, _ in tree.hierarchies():
        assert os.path.isdir(os.path.join(mount, base.lstrip("/")))
    pod = _pod("empty", "100m", "64Mi")
    execute(tree, plan_pod(tree, pod))
    found = tree.find_pod(pod.uid)
    assert found is not None and found[1] == "Guaranteed"
    out = evict_pod(tree, pod)
    assert out.evicted and out.removed and out.signalled == ()
    assert tree.find_pod(pod.uid) is None


def test_moved_process_sees_the_cpuset_and_gets_its_oom_score(node, children):
    tree, base = node
    cpu = max(host.allowed_cpus())
    mem = host.memory_node()
    # Burstable (limit above request): a positive score, which raising needs no capability for
    pod = _pod("pinned", "500m", "256Mi", limit_cpu="1")
    child = children()
    placement = {"app": Placement(CPUSet([cpu]), CPUSet([mem]))}
    capacity = 8 << 30
    plan = plan_pod(tree, pod, placements=placement, pids={"app": [child.pid]}, memory_capacity=capacity)
    execute(tree, plan)
    assert os.sched_getaffinity(child.pid) == {cpu}
    with open(f"/proc/{child.pid}/oom_score_adj") as f:
        assert int(f.read()) == container_oom_score_adj(pod, "app", capacity)
    # what the kernel reads back matches what was planned: a second plan changes nothing
    again = plan_pod(tree, pod, placements=placement, pids={"app": [child.pid]}, memory_capacity=capacity)
    assert [s.describe() for s in again.changes] == []
    # and the test runner itself was never moved or re-pinned
    assert cpu in os.sched_getaffinity(0) and len(os.sched_getaffinity(0)) == len(host.allowed_cpus())


def test_a_memory_limit_gets_a_child_that_allocates_past_it_oom_killed(node, children):
    tree, base = node
    pod = _pod("hog", "100m", "64Mi")
    child = children()
    execute(tree, plan_pod(tree, pod, pids={"app": [child.pid]}))
    child.stdin.write("alloc\n")
    child.stdin.flush()
    assert child.wait(timeout=60) == -signal.SIGKILL
    cg = tree.container_path(tree.pod_path(pod.uid, "Guaranteed"), "app")
    if tree.version == 2:
        events = open(os.path.join(tree.dir("memory", cg), "memory.events")).read()
    else:
        events = open(os.path.join(tree.dir("memory", cg), "memory.oom_control")).read()
    kills = dict(line.split() for line in events.splitlines())
    assert int(kills["oom_kill"]) >= 1


def test_eviction_leaves_the_pod_cgroup_empty_and_removes_it(node, children):
    tree, base = node
    pod = _pod("victim", "100m", "128Mi")
    first, second = children(), children()
    execute(tree, plan_pod(tree, pod, pids={"app": [first.pid, second.pid]}))
    first.stdin.write("fork\n")
    first.stdin.flush()
    assert first.stdout.readline().strip() == "forked"
    cg = tree.pod_path(pod.uid, "Guaranteed")
    listed = set()
    for d in tree.dirs(tree.container_path(cg, "app")):
        listed |= {int(p) for p in open(os.path.join(d, "cgroup.procs")).read().split()}
    assert {first.pid, second.pid} < listed  # the grandchild joined the cgroup by forking
    out = evict_pod(tree, pod, "Evicted", "test eviction", timeout=10)
    assert out.evicted and out.removed, out
    assert set(out.signalled) >= {first.pid, second.pid} or out.method == "cgroup.kill"
    assert out.status["phase"] == "Failed" and out.status["message"] == "test eviction"
    assert first.wait(timeout=10) == -signal.SIGKILL and second.wait(timeout=10) == -signal.SIGKILL
    assert tree.find_pod(pod.uid) is None


def _unified_tree(fs, base):
    """A v2 view of a hybrid host's (controller-less) cgroup2 mount, below this process's own cgroup."""
    from pynuma.apply.files import V2Writer
    from pynuma.apply.tree import CgroupTree, join, own_cgroups
    from pynuma.cgroups.detect import V2, CgroupLayout, detect

    layout = detect(fs)
    if layout.mode == V2 or layout.unified is None:
        pytest.skip("no separate cgroup2 mount here (a pure v2 host runs the v2 path in the other tests)")
    own = own_cgroups(fs.read_required("/proc/self/cgroup")).get("", "/")
    mount = join(layout.unified, own)
    if not os.path.exists(os.path.join(mount, "cgroup.procs")):
        pytest.skip(f"{mount} is not a cgroup2 directory")
    return CgroupTree(fs, CgroupLayout(mode=V2, unified=mount), "cgroupfs", join(base, "kubepods"), V2Writer(),
                      (own.rstrip("/"),))


def test_v2_eviction_uses_cgroup_kill_on_the_real_kernel(children):
    fs = FsRoot("/")
    base = f"/pynuma-test-{os.getpid()}-{secrets.token_hex(3)}"
    tree = _unified_tree(fs, base)
    before = _children(tree)
    pod = _pod("v2victim", "100m", "64Mi")
    try:
        planner = Planner(tree)
        for path in (base, tree.kubepods, tree.pod_path(pod.uid, "Guaranteed")):
            planner.ensure(path)
        app = tree.container_path(tree.pod_path(pod.uid, "Guaranteed"), "app")
        planner.ensure(app)
        execute(tree, planner.plan())
        if not os.path.exists(os.path.join(tree.dir(None, tree.pod_path(pod.uid, "Guaranteed")), "cgroup.kill")):
            pytest.skip("this kernel has no cgroup.kill (before 5.14)")
        child = children()
        moved = Planner(tree)
        moved.move(app, [child.pid])
        execute(tree, moved.plan())
        out = evict_pod(tree, pod, "Evicted", "v2", timeout=10)
        assert out.method == "cgroup.kill" and out.evicted and out.removed, out
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        _kill_tree(tree, base)
        after = _children(tree)
        fs.close()
    assert after == before


def test_lowering_oom_score_adj_below_zero_needs_cap_sys_resource(children):
    from pynuma.apply.checks import CAP_SYS_RESOURCE, has_capability
    from pynuma.apply.oom import apply_oom_score_adj

    child = children()
    with FsRoot("/") as fs:
        apply_oom_score_adj(fs, [child.pid], 300)
        assert open(f"/proc/{child.pid}/oom_score_adj").read().strip() == "300"
        if has_capability(fs, CAP_SYS_RESOURCE):
            apply_oom_score_adj(fs, [child.pid], -5)
            assert open(f"/proc/{child.pid}/oom_score_adj").read().strip() == "-5"
        else:
            with pytest.raises(PreconditionError, match="needs CAP_SYS_RESOURCE"):
                apply_oom_score_adj(fs, [child.pid], -5)
            assert open(f"/proc/{child.pid}/oom_score_adj").read().strip() == "300"
