"""Acting on decisions: workload cgroups, OOM scores and evictions, applied safely.

Everything that writes goes through a :class:`~pynuma.apply.plan.Plan`: the
exact ``mkdir`` / ``write`` / ``rmdir`` steps, made after every
precondition was checked (a controller enabled in the parent's
``cgroup.subtree_control``, a v1 cpuset parent with CPUs and memory nodes,
CPUs and nodes that exist, processes that exist), printed by ``--dry-run``,
executed by :func:`execute`.  Steps that would change nothing are skipped,
so applying twice writes nothing the second time.  A root other than ``/``
is written only when targeted explicitly (``allow_fake_root=True``); live
processes are never signalled from a fake root.

Cgroups (v1 and v2, cgroupfs and systemd driver names)::

    from pynuma.apply import open_tree, plan_pod, execute, placements_from_state
    tree = open_tree(FsRoot("/"))
    plan = plan_pod(tree, pod, placements=placements_from_state("/var/lib/kubelet", pod),
                    pids={"app": [1234]}, memory_capacity=64 << 30)
    print(plan.describe())
    execute(tree, plan)

QoS tiers and node allocatable: :func:`plan_qos`, :func:`plan_node_allocatable`.

OOM scores: :func:`apply_oom_score_adj` (one value, validated to -1000..1000),
:func:`plan_container_oom` (the kubelet's value for a container's processes).

Evictions, for an agent's ``sync()``::

    action = evict_action("/")                      # detects the cgroup tree once
    outcome = action(pod, reason, message)          # (Pod | uid, str, str) -> EvictionOutcome

The action kills the pod's processes (``cgroup.kill`` on v2; SIGKILL through
pidfds on v1, rescanning until the cgroups are empty or ``timeout``
seconds pass), removes its cgroups and returns an :class:`EvictionOutcome`
whose ``status`` is what the kubelet records (``phase: Failed``,
``reason``, ``message``, the ``DisruptionTarget`` condition).  A
``hook(pod, reason, message)`` given to :func:`evict_action` may veto
(return :data:`VETO`) or take over (return its own outcome).
"""
from __future__ import annotations

from .evict import VETO, EvictionOutcome, evict_action, evict_pod
from .oom import apply_oom_score_adj, plan_container_oom, plan_oom_score_adj
from .placement import Placement, placements_from_state
from .plan import Plan, PreconditionError, Step
from .planner import execute
from .pods import KubeletSettings, plan_pod, plan_remove_pod
from .tiers import plan_node_allocatable, plan_qos
from .tree import CgroupTree, open_tree

__all__ = ["open_tree", "CgroupTree", "plan_pod", "plan_remove_pod", "plan_qos", "plan_node_allocatable",
           "execute", "Plan", "Step", "PreconditionError", "KubeletSettings", "Placement",
           "placements_from_state", "evict_action", "evict_pod", "EvictionOutcome", "VETO",
           "apply_oom_score_adj", "plan_oom_score_adj", "plan_container_oom"]
