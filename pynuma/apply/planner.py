"""Plan cgroup changes top-down: create, configure, enable controllers for children, move processes, remove.

:class:`Planner` reads the tree as it is, remembers what the plan itself
will create or write (so a container below a pod planned a moment ago is
judged by the pod's planned state), and checks every precondition before
adding a step.  Nothing is written here: :func:`execute` does that.
"""
from __future__ import annotations

import posixpath
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ..cpuset import CPUSet
from .checks import check_cpuset_value, check_pid
from .files import PROCS, SUBTREE_CONTROL, Setting, parse_controllers, same_value
from .plan import MKDIR, RMDIR, WRITE, Plan, PreconditionError, Step
from .tree import CgroupTree, join
from ._fsops import mkdir as fs_mkdir, read as fs_read, rmdir as fs_rmdir, write as fs_write

CPUSET_FILES_V1 = ("cpuset.cpus", "cpuset.mems")
EFFECTIVE = {1: {"cpuset.cpus": "cpuset.effective_cpus", "cpuset.mems": "cpuset.effective_mems"},
             2: {"cpuset.cpus": "cpuset.cpus.effective", "cpuset.mems": "cpuset.mems.effective"}}


def _parent(cgroup: str) -> str:
    return posixpath.dirname(cgroup.rstrip("/")) or "/"


class Planner:
    """Accumulates the steps of one plan against one :class:`CgroupTree`."""

    def __init__(self, tree: CgroupTree) -> None:
        self.tree = tree
        self.fs = tree.fs
        self.steps: List[Step] = []
        self.notes: List[str] = []
        self._created: Set[str] = set()          # directories (root-relative) this plan makes
        self._written: Dict[str, str] = {}       # file -> value this plan writes

    # -- state as it will be ----------------------------------------------------------------
    def read(self, path: str) -> Optional[str]:
        if path in self._written:
            return self._written[path]
        if posixpath.dirname(path) in self._created:
            return None  # a directory this plan creates has nothing in it yet
        return fs_read(self.fs, path)

    def exists(self, directory: str) -> bool:
        return directory in self._created or self.fs.isdir(directory)

    def enabled(self, cgroup: str) -> Tuple[str, ...]:
        """Controllers enabled for ``cgroup``'s children (v2), as the plan leaves them."""
        return parse_controllers(self.read(join(self.tree.layout.unified, cgroup, SUBTREE_CONTROL)))

    def plan(self) -> Plan:
        return Plan(tuple(self.steps), tuple(self.notes), self.fs.root)

    # -- steps ------------------------------------------------------------------------------
    def _write(self, path: str, value: str, why: str) -> None:
        current = self.read(path)
        name = posixpath.basename(path)
        self.steps.append(Step(WRITE, path, value, current, not same_value(name, current, value), why))
        self._written[path] = value

    def _mkdir(self, directory: str) -> None:
        if self.exists(directory):
            return
        if not self.exists(posixpath.dirname(directory)):
            raise PreconditionError(self.fs.host_path(posixpath.dirname(directory)), "parent cgroup does not exist")
        self.steps.append(Step(MKDIR, directory))
        self._created.add(directory)

    # -- one cgroup -------------------------------------------------------------------------
    def ensure(self, cgroup: str, settings: Iterable[Setting] = (), below: Iterable[Setting] = (),
               owned: bool = True) -> None:
        """Create ``cgroup`` where missing and write ``settings``.

        ``below``: the settings of every cgroup this plan puts under it
        (their controllers must reach them).  ``owned``: the cgroup is the
        workload's own (pod or container), so on v2 its
        ``cgroup.subtree_control`` may be changed; otherwise only a cgroup
        this plan creates is.
        """
        settings, below = list(settings), list(below)
        if self.tree.version == 2:
            self._ensure_v2(cgroup, settings, below, owned)
        else:
            self._ensure_v1(cgroup, settings, owned)

    def _ensure_v2(self, cgroup: str, settings: List[Setting], below: List[Setting], owned: bool) -> None:
        unified = self.tree.layout.unified
        parent = _parent(cgroup)
        available = set(self.enabled(parent))
        required = {s.controller for s in settings + below if s.controller and not s.optional}
        missing = sorted(required - available)
        if missing:
            uses = sorted({s.name for s in settings + below if s.controller in missing})
            raise PreconditionError(self.fs.host_path(join(unified, parent, SUBTREE_CONTROL)),
                                    f"controller {', '.join(missing)} not enabled (needed for {', '.join(uses)} "
                                    f"in {cgroup} or below)")
        directory = join(unified, cgroup)
        self._mkdir(directory)
        for s in settings:
            if s.controller and s.controller not in available:
                self.notes.append(f"{s.name} left alone in {cgroup}: the {s.controller} controller is not enabled "
                                  f"above it (an unrequested limit)")
                continue
            self._check_cpuset(unified, cgroup, s)
            self._write(join(directory, s.name), s.value, s.why)
        if directory in self._created and (below or not owned):
            # a parent cgroup this plan makes gets every controller its own parent gives, as runc's
            # CreateCgroupPath does for the kubelet: later pods below it may need one this plan does not
            # (cpuset, pids).  A leaf keeps none: processes cannot live beside enabled controllers.
            wanted = available
        else:
            wanted = {s.controller for s in below if s.controller and s.controller in available}
        todo = sorted(wanted - set(self.enabled(cgroup)))
        if todo and (owned or directory in self._created):
            self._write(join(directory, SUBTREE_CONTROL), " ".join("+" + c for c in todo),
                        "controllers for the cgroups below")

    def _ensure_v1(self, cgroup: str, settings: List[Setting], owned: bool) -> None:
        layout = self.tree.layout
        for mount, _ in self.tree.hierarchies():
            self._mkdir(join(mount, cgroup))
        explicit = {s.name for s in settings}
        cpuset_mount = layout.v1_mounts.get("cpuset")
        if cpuset_mount is not None and (owned or join(cpuset_mount, cgroup) in self._created):
            # a new v1 cpuset cgroup starts empty and takes no tasks until cpus and mems are set: inherit the
            # parent's, as runc does, unless the plan gives values of its own
            for name in CPUSET_FILES_V1:
                if name in explicit:
                    continue
                path = join(cpuset_mount, cgroup, name)
                if (self.read(path) or "").strip():
                    continue
                parent_file = join(cpuset_mount, _parent(cgroup), name)
                value = (self.read(parent_file) or "").strip()
                if not value:
                    raise PreconditionError(self.fs.host_path(parent_file),
                                            "is empty: a cgroup v1 cpuset parent needs cpuset.cpus and cpuset.mems "
                                            "set before cgroups below it can take tasks")
                self._write(path, value, "inherited from the parent cpuset")
        for s in settings:
            mount = layout.v1_mounts.get(s.controller) if s.controller else None
            if mount is None:
                if s.optional:
                    self.notes.append(f"{s.name} left alone in {cgroup}: no cgroup v1 {s.controller} hierarchy "
                                      "is mounted (an unrequested limit)")
                    continue
                raise PreconditionError(self.fs.host_path("/proc/mounts"),
                                        f"no cgroup v1 {s.controller} hierarchy mounted (needed for {s.name})")
            self._check_cpuset(mount, cgroup, s)
            self._write(join(mount, cgroup, s.name), s.value, s.why)

    def _check_cpuset(self, mount: str, cgroup: str, s: Setting) -> None:
        if s.controller != "cpuset":
            return
        parent_cpus, parent_file = self._effective(mount, _parent(cgroup), s.name)
        check_cpuset_value(self.fs, join(mount, cgroup, s.name), s.name, s.value, parent_cpus, parent_file)

    def _effective(self, mount: str, cgroup: str, name: str):
        """The set ``cgroup`` offers its children for ``name`` (planned, effective, or its parent's)."""
        while True:
            for fname in (name, EFFECTIVE[self.tree.version][name]):
                path = join(mount, cgroup, fname)
                text = self.read(path)
                if text is not None and text.strip():
                    try:
                        return CPUSet.parse(text.strip()), path
                    except ValueError:
                        return None, None
            if cgroup == "/":
                return None, None
            cgroup = _parent(cgroup)

    # -- processes ---------------------------------------------------------------------------
    def move(self, cgroup: str, pids: Iterable[int]) -> None:
        """Move processes into ``cgroup`` (every hierarchy on v1)."""
        for pid in pids:
            check_pid(self.fs, pid)
            for directory in self.tree.dirs(cgroup):
                path = join(directory, PROCS)
                listed = (self.read(path) or "").split()
                self.steps.append(Step(WRITE, path, str(pid), None, str(pid) not in listed, "move the process in"))

    def write_file(self, path: str, value: str, why: str) -> None:
        """A plain file write through the plan (``/proc/PID/oom_score_adj``)."""
        self._write(path, value, why)

    # -- removal -----------------------------------------------------------------------------
    def remove(self, cgroup: str) -> None:
        """Remove ``cgroup`` and everything below it, deepest first; refuses while processes remain."""
        found = False
        for directory in self.tree.dirs(cgroup):
            if not self.fs.isdir(directory):
                continue
            found = True
            for d in reversed(self._subtree(directory)):
                procs = (self.read(join(d, PROCS)) or "").split()
                if procs:
                    raise PreconditionError(self.fs.host_path(join(d, PROCS)),
                                            f"still holds processes {', '.join(procs[:8])}"
                                            f"{' ...' if len(procs) > 8 else ''} (evict the pod first)")
                self.steps.append(Step(RMDIR, d))
        if not found:
            self.notes.append(f"{cgroup}: no such cgroup, nothing to remove")

    def _subtree(self, directory: str) -> List[str]:
        out = [directory]
        for name in self.fs.listdir(directory):
            child = join(directory, name)
            if self.fs.isdir(child):
                out += self._subtree(child)
        return out


def execute(tree: CgroupTree, plan: Plan) -> Plan:
    """Carry out the steps of ``plan`` that change something, in order; returns the plan."""
    fs = tree.fs
    for step in plan.changes:
        if step.action == MKDIR:
            fs_mkdir(fs, step.path)
        elif step.action == RMDIR:
            fs_rmdir(fs, step.path)
        else:
            fs_write(fs, step.path, step.value)
    return plan
