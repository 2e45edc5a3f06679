"""Write ``oom_score_adj``: of one process, or of every process of a container cgroup.

>>> plan_oom_score_adj(FsRoot("/"), 1234, 875).describe()       # doctest: +SKIP
'write /proc/1234/oom_score_adj 875  (now 0; ...)'

The value a container gets is the kubelet's
(:func:`pynuma.policy.oom_score.container_oom_score_adj`).  Lowering a
score needs ``CAP_SYS_RESOURCE``; the kernel's EACCES then becomes
:class:`~pynuma.errors.AccessDenied` naming the file.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

from ..errors import InputError
from ..fsroot import FsRoot
from ..parse import ascii_uint
from ..pod import Container, Pod
from ..policy.oom_score import container_oom_score_adj
from ._fsops import write as fs_write
from .checks import check_oom_score_adj, check_pid
from .plan import WRITE, Plan, Step

OOM_SCORE_ADJ_MIN = -1000
OOM_SCORE_ADJ_MAX = 1000
_INTEGER = re.compile(r"[+-]?[0-9]{1,10}\Z")


def validate(value) -> int:
    """An ``oom_score_adj`` value: an integer in [-1000, 1000], else ``InputError``."""
    if isinstance(value, str):
        text = value.strip()
        if not _INTEGER.match(text):
            raise InputError(f"oom_score_adj {value!r}: not an integer")
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"oom_score_adj {value!r}: not an integer")
    if not OOM_SCORE_ADJ_MIN <= value <= OOM_SCORE_ADJ_MAX:
        raise InputError(f"oom_score_adj {value}: outside [{OOM_SCORE_ADJ_MIN}, {OOM_SCORE_ADJ_MAX}]")
    return value


def _path(pid: int) -> str:
    return f"/proc/{pid}/oom_score_adj"


def plan_oom_score_adj(fs: FsRoot, pids: Iterable[int], value: int, why: str = "") -> Plan:
    """The writes that give each process ``value``; unchanged where it already has it."""
    value = validate(value)
    steps = []
    for pid in pids:
        check_pid(fs, pid)
        current = fs.read_optional(_path(pid))
        check_oom_score_adj(fs, pid, value, current)
        changed = current is None or current.strip() != str(value)
        steps.append(Step(WRITE, _path(pid), str(value), current, changed, why))
    return Plan(tuple(steps), (), fs.root)


def apply_oom_score_adj(fs: FsRoot, pids: Iterable[int], value: int, dry_run: bool = False, why: str = "") -> Plan:
    """Give each process ``value`` (nothing written on a dry run); returns the plan."""
    plan = plan_oom_score_adj(fs, list(pids), value, why)
    if not dry_run:
        for step in plan.changes:
            fs_write(fs, step.path, step.value)
    return plan


def container_pids(fs: FsRoot, cgroup_dir: str) -> list:
    """Processes listed in a container cgroup directory's ``cgroup.procs``."""
    text = fs.read_optional(cgroup_dir.rstrip("/") + "/cgroup.procs") or ""
    return [pid for pid in (ascii_uint(t, 7) for t in text.split()) if pid is not None]


def plan_container_oom(fs: FsRoot, pod: Pod, container: Container, cgroup_dir: str, memory_capacity: int,
                       pids: Optional[Iterable[int]] = None, pod_level_resources: bool = True) -> Plan:
    """The kubelet's ``oom_score_adj`` for every process of a container (those in its cgroup by default)."""
    value = container_oom_score_adj(pod, container, memory_capacity, pod_level_resources=pod_level_resources)
    chosen = container_pids(fs, cgroup_dir) if pids is None else list(pids)
    return plan_oom_score_adj(fs, chosen, value, f"container {container.name} of pod {pod.name}")
