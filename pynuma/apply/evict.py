"""End a pod's processes and report the status the kubelet would record.

>>> action = evict_action(FsRoot("/"))                         # doctest: +SKIP
>>> outcome = action(pod, "Evicted", "The node was low on resource: memory. ")  # doctest: +SKIP
>>> outcome.status["phase"], outcome.evicted                   # doctest: +SKIP
('Failed', True)

How: on cgroup v2, one write of ``1`` to the pod cgroup's ``cgroup.kill``
(the kernel kills the whole subtree, forks included); on v1, or a kernel
without ``cgroup.kill``, SIGKILL to every process listed in the pod's
cgroups, rescanning until they are empty or ``timeout`` passes.  Each
process is signalled through a pidfd opened *before* its membership is
re-checked, so a recycled pid is never hit.  The calling process is never
signalled.  Then the pod's cgroups are removed (``remove=True``).

An embedder's ``hook(pod, reason, message)`` runs first and may return
:data:`VETO` (nothing is done; the outcome says so), an
:class:`EvictionOutcome` of its own (it took over; returned as is) or None
(carry on).
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field, replace
from typing import Callable, List, Optional, Set, Tuple, Union

from ..errors import FakeRootRefused, InputError
from ..fsroot import DIRECTORY, FsRoot
from ..parse import ascii_uint
from ..pod import Pod
from ..policy.eviction.messages import REASON, evicted_status
from ._fsops import read as fs_read, write as fs_write
from .files import KILL, PROCS
from .planner import Planner, execute
from .tree import CgroupTree, join, open_tree

VETO = "veto"
METHOD_KILL_FILE, METHOD_SIGKILL, METHOD_NONE, METHOD_HOOK = "cgroup.kill", "SIGKILL", "none", "hook"


@dataclass(frozen=True)
class EvictionOutcome:
    """What an eviction did.

    ``evicted``: the pod's cgroups hold no process any more (or never did);
    ``status``: the pod status the kubelet writes (``phase: Failed``,
    ``reason``, ``message``), None when vetoed or not evicted.
    """

    uid: str
    name: str = ""
    namespace: str = ""
    evicted: bool = False
    vetoed: bool = False
    taken_over: bool = False
    dry_run: bool = False
    method: str = METHOD_NONE
    cgroup: Optional[str] = None
    signalled: Tuple[int, ...] = ()
    remaining: Tuple[int, ...] = ()
    removed: bool = False
    seconds: float = 0.0
    status: Optional[dict] = None
    plan: Tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {"uid": self.uid, "name": self.name, "namespace": self.namespace, "evicted": self.evicted,
                "vetoed": self.vetoed, "taken_over": self.taken_over, "dry_run": self.dry_run,
                "method": self.method, "cgroup": self.cgroup, "signalled": list(self.signalled),
                "remaining": list(self.remaining), "removed": self.removed, "seconds": round(self.seconds, 3),
                "status": self.status, "plan": list(self.plan)}


Hook = Callable[[Union[Pod, str], str, str], Union[None, str, EvictionOutcome]]
Signaller = Callable[[int, str], bool]


def _identity(pod: Union[Pod, str]) -> Tuple[str, str, str]:
    if isinstance(pod, Pod):
        return pod.uid, pod.name, pod.namespace
    if isinstance(pod, str) and pod:
        return pod, "", ""
    raise InputError(f"pod to evict: expected a Pod or a pod uid, got {pod!r}")


def _pids(tree: CgroupTree, cgroup: str) -> Set[int]:
    """Every process listed in ``cgroup`` or below it, in every hierarchy."""
    out: Set[int] = set()
    for directory in tree.dirs(cgroup):
        stack = [directory]
        while stack:
            d = stack.pop()
            for tok in (fs_read(tree.fs, join(d, PROCS)) or "").split():
                pid = ascii_uint(tok, 7)  # pid_max is at most 2^22
                if pid is not None:
                    out.add(pid)
            stack += [join(d, n) for n in tree.fs.listdir(d) if tree.fs.isdir(join(d, n))]
    return out


def _in(text: Optional[str], prefixes) -> bool:
    for line in (text or "").splitlines():
        path = line.split(":", 2)[-1]
        if any(path == p or path.startswith(p + "/") for p in prefixes):
            return True
    return False


def _member(tree: CgroupTree, pid: int, cgroup: str) -> bool:
    """Whether the process (its leader, or on v1 any of its threads) is still in ``cgroup`` or below."""
    prefixes = [base + cgroup.rstrip("/") for base in tree.bases]
    if _in(tree.fs.read_optional(f"/proc/{pid}/cgroup"), prefixes):
        return True
    # v1 lets a thread sit in another cgroup than its leader; cgroup.procs then lists the process anyway
    return tree.version == 1 and any(_in(tree.fs.read_optional(f"/proc/{pid}/task/{tid}/cgroup"), prefixes)
                                     for tid in tree.fs.listdir(f"/proc/{pid}/task") if ascii_uint(tid, 7) is not None)


def host_signaller(tree: CgroupTree) -> Signaller:
    """SIGKILL through a pidfd opened before re-checking that the process is still in the pod."""
    if not tree.fs.is_host:
        raise FakeRootRefused(f"signalling processes acts on the live host, but the root is {tree.fs.root}")
    me = os.getpid()

    def kill(pid: int, cgroup: str) -> bool:
        if pid == me:
            raise InputError(f"pod cgroup {cgroup} holds pynuma's own process {pid}: refusing to kill it")
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            fd = None  # gone already, or a kernel before 5.3: fall back to a plain kill after the check
        try:
            if not _member(tree, pid, cgroup):
                return False
            if fd is not None:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            return True
        except ProcessLookupError:
            return False
        finally:
            if fd is not None:
                os.close(fd)

    return kill


def _subtree(fs, path: str, depth: int = 0) -> List[str]:
    """``path`` and the directories below it, deepest first (how they can be removed)."""
    below: List[str] = []
    if depth < 16:  # a pod's cgroups nest two or three deep; a deeper or looping tree is not walked on
        for name in fs.listdir(path):
            child = join(path, name)
            if fs.kind(child) == DIRECTORY:
                below += _subtree(fs, child, depth + 1)
    return below + [path]


def _wait_empty(tree: CgroupTree, cgroup: str, deadline: float, kill: Optional[Signaller],
                signalled: Set[int]) -> Set[int]:
    delay = 0.005
    while True:
        left = _pids(tree, cgroup)
        if not left:
            return left
        if kill is not None:
            for pid in sorted(left):
                if kill(pid, cgroup):
                    signalled.add(pid)
        if time.monotonic() >= deadline:
            return _pids(tree, cgroup)
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def evict_pod(tree: CgroupTree, pod: Union[Pod, str], reason: str = REASON, message: str = "", *,
              dry_run: bool = False, timeout: float = 10.0, remove: bool = True, hook: Optional[Hook] = None,
              signaller: Optional[Signaller] = None, with_condition: bool = True) -> EvictionOutcome:
    """Kill every process of the pod's cgroups, wait until they are empty, remove them.

    ``signaller(pid, cgroup) -> bool`` replaces the host SIGKILL (tests on
    fake roots; a fake root refuses the default).  ``with_condition`` adds
    the ``DisruptionTarget`` condition the kubelet records since v1.26.
    """
    uid, name, namespace = _identity(pod)
    base = EvictionOutcome(uid, name, namespace, dry_run=dry_run)
    if hook is not None:
        answer = hook(pod, reason, message)
        if answer == VETO:
            return replace(base, vetoed=True)
        if isinstance(answer, EvictionOutcome):
            return replace(answer, taken_over=True, method=answer.method or METHOD_HOOK)
        if answer is not None:
            raise InputError(f"eviction hook returned {answer!r}: expected None, VETO or an EvictionOutcome")
    status = evicted_status(message, with_condition)
    status["reason"] = reason
    found = tree.find_pod(uid)
    if found is None:
        # nothing runs for this pod on the node: as evicted as it will get
        return replace(base, evicted=True, status=None if dry_run else status)
    cgroup = found[0]
    kill_file = join(tree.layout.unified, cgroup, KILL) if tree.version == 2 else None
    use_kill_file = kill_file is not None and tree.fs.exists(kill_file)
    method = METHOD_KILL_FILE if use_kill_file else METHOD_SIGKILL
    pids = _pids(tree, cgroup)
    kill = signaller
    if not use_kill_file and kill is None and (pids or tree.fs.is_host):
        # processes to signal: only on the live host (a fake root's pids are not its processes), and a
        # dry run refuses exactly as the run would
        kill = host_signaller(tree)
    plan = [f"write {tree.fs.host_path(kill_file)} 1"] if use_kill_file else \
        [f"kill -KILL {pid}" for pid in sorted(pids)]
    if remove:  # the pod's cgroups and its containers', deepest first, as the run removes them
        plan += [f"rmdir {tree.fs.host_path(x)}" for d in tree.dirs(cgroup) if tree.fs.isdir(d)
                 for x in _subtree(tree.fs, d)]
    if dry_run:
        return replace(base, method=method, cgroup=cgroup, remaining=tuple(sorted(pids)), plan=tuple(plan))
    start = time.monotonic()
    signalled: Set[int] = set()
    if use_kill_file:
        fs_write(tree.fs, kill_file, "1")  # the kernel kills the subtree; the loop below only waits
    left = _wait_empty(tree, cgroup, start + timeout, kill, signalled)
    removed = False
    if not left and remove:
        planner = Planner(tree)
        planner.remove(cgroup)
        execute(tree, planner.plan())
        removed = True
    return replace(base, evicted=not left, method=method, cgroup=cgroup, signalled=tuple(sorted(signalled)),
                   remaining=tuple(sorted(left)), removed=removed, seconds=time.monotonic() - start,
                   status=status if not left else None, plan=tuple(plan))


def evict_action(cgroup_root: Union[str, FsRoot, CgroupTree] = "/", *, kubelet_cgroup_root: str = "/",
                 driver: Optional[str] = None, allow_fake_root: bool = False, timeout: float = 10.0,
                 remove: bool = True, hook: Optional[Hook] = None, signaller: Optional[Signaller] = None,
                 with_condition: bool = True) -> Callable[[Union[Pod, str], str, str], EvictionOutcome]:
    """An eviction action for an agent's ``sync()``: ``action(pod, reason, message) -> EvictionOutcome``.

    ``cgroup_root`` is the machine root (a path, an open :class:`FsRoot`) or
    an opened :class:`CgroupTree`; the tree is detected once, here.
    """
    if isinstance(cgroup_root, CgroupTree):
        tree = cgroup_root
    else:
        fs = cgroup_root if isinstance(cgroup_root, FsRoot) else FsRoot(cgroup_root)
        tree = open_tree(fs, kubelet_cgroup_root, driver, allow_fake_root=allow_fake_root)

    def action(pod: Union[Pod, str], reason: str = REASON, message: str = "") -> EvictionOutcome:
        return evict_pod(tree, pod, reason, message, timeout=timeout, remove=remove, hook=hook,
                         signaller=signaller, with_condition=with_condition)

    action.tree = tree  # type: ignore[attr-defined]
    return action


__all__ = ["EvictionOutcome", "evict_pod", "evict_action", "host_signaller", "VETO"]
