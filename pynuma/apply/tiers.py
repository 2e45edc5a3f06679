"""The QoS-tier cgroups and the node-allocatable limits on ``kubepods``, as plans.

>>> plan = plan_qos(tree, qos_cgroup_config(pods, huge_page_sizes=huge_page_sizes(tree)))  # doctest: +SKIP

``kubepods`` (the Guaranteed tier) is never created here: it is the
kubelet's node-allocatable cgroup, made with its limits by
:func:`plan_node_allocatable`.  The burstable and besteffort tiers are
created where missing.
"""
from __future__ import annotations

from ..cgroups.kubepods import BEST_EFFORT, BURSTABLE
from ..policy.cgroupconfig.config import ResourceConfig
from ..policy.cgroupconfig.qos import QoSCgroupConfig
from .plan import Plan
from .planner import Planner
from .tree import CgroupTree


def plan_node_allocatable(tree: CgroupTree, cfg: ResourceConfig) -> Plan:
    """Create ``kubepods`` where missing and write the node-allocatable limits on it."""
    planner = Planner(tree)
    planner.ensure(tree.kubepods, tree.writer.settings(cfg), owned=False)
    return planner.plan()


def plan_qos(tree: CgroupTree, cfg: QoSCgroupConfig) -> Plan:
    """Write the three tiers' settings (``kubepods`` must exist), creating burstable/besteffort if missing."""
    planner = Planner(tree)
    tiers = [(BURSTABLE, cfg.burstable), (BEST_EFFORT, cfg.besteffort)]
    below = [s for _, c in tiers for s in tree.writer.settings(c)]
    if not tree.fs.isdir(tree.dir("memory", tree.kubepods) or ""):
        from .plan import PreconditionError

        raise PreconditionError(tree.fs.host_path(tree.dir("memory", tree.kubepods) or tree.kubepods),
                                "the kubepods cgroup does not exist (create it with the node-allocatable plan)")
    planner.ensure(tree.kubepods, tree.writer.settings(cfg.guaranteed), below, owned=False)
    for qos, c in tiers:
        planner.ensure(tree.tier_path(qos), tree.writer.settings(c), owned=False)
    return planner.plan()
