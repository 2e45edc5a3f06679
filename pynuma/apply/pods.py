"""Pods as cgroups: create or update a pod's cgroup and its containers', remove them.

>>> tree = open_tree(FsRoot("/tmp/node"), allow_fake_root=True)          # doctest: +SKIP
>>> plan = plan_pod(tree, pod, placements=placements_from_state(state_dir, pod))  # doctest: +SKIP
>>> print(plan.describe()); execute(tree, plan)                          # doctest: +SKIP

The settings are the kubelet's (:mod:`pynuma.policy.cgroupconfig`); the
names are its cgroup driver's (:mod:`pynuma.cgroups.kubepods`); the
container cgroups are what a runtime would make for the container ids
given (the container name when none is).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence

from ..cgroups.kubepods import GUARANTEED
from ..errors import InputError
from ..parse import ascii_uint
from ..pod import Container, Pod
from ..policy.cgroupconfig.container import resource_config_for_container
from ..policy.cgroupconfig.conversions import QUOTA_PERIOD_US
from ..policy.cgroupconfig.pod import POLICY_NONE, resource_config_for_pod
from ..policy.oom_score import container_oom_score_adj
from ..policy.qos import qos_class
from .checks import check_oom_score_adj
from .files import Setting
from .placement import Placement
from .plan import Plan
from .planner import Planner
from .tree import CgroupTree, join

HUGEPAGES_DIR = "/sys/kernel/mm/hugepages"


@dataclass(frozen=True)
class KubeletSettings:
    """The kubelet options that shape pod and container cgroups."""

    enforce_cpu_limits: bool = True          # --cpu-cfs-quota
    cpu_period_us: int = QUOTA_PERIOD_US     # --cpu-cfs-quota-period
    memory_qos: bool = False                 # MemoryQoS gate (effective on cgroup v2 only)
    memory_reservation_policy: Optional[str] = POLICY_NONE
    pod_level_resources: bool = True         # PodLevelResources gate
    pod_pids_limit: Optional[int] = None     # --pod-max-pids
    single_process_oom_kill: bool = False    # --single-process-oom-kill
    runtime: str = "cri-containerd"          # scope prefix of container cgroups (systemd driver)


def huge_page_sizes(tree: CgroupTree) -> List[int]:
    """The host's hugepage sizes in bytes, from ``/sys/kernel/mm/hugepages``."""
    sizes = []
    for name in tree.fs.listdir(HUGEPAGES_DIR):
        kb = ascii_uint(name[10:-2]) if name.startswith("hugepages-") and name.endswith("kB") else None
        if kb is not None:
            sizes.append(kb * 1024)
    return sorted(sizes)


def running_containers(pod: Pod) -> List[Container]:
    """Containers that hold a cgroup while the pod runs: app containers and sidecars."""
    return list(pod.containers) + [c for c in pod.init_containers if c.is_sidecar]


def _settings(tree: CgroupTree, cfg) -> List[Setting]:
    return tree.writer.settings(cfg)


def plan_pod(tree: CgroupTree, pod: Pod, *, settings: KubeletSettings = KubeletSettings(),
             placements: Optional[Mapping[str, Placement]] = None,
             container_ids: Optional[Mapping[str, str]] = None,
             pids: Optional[Mapping[str, Sequence[int]]] = None,
             memory_capacity: Optional[int] = None) -> Plan:
    """The plan that makes ``pod``'s cgroups match the kubelet's settings.

    ``placements``: container name -> :class:`Placement` (CPU / Memory
    Manager decisions); ``container_ids``: container name -> runtime id
    (default: the name); ``pids``: container name -> processes to move in;
    ``memory_capacity`` (bytes): when given, those processes also get the
    container's ``oom_score_adj``.
    """
    if not pod.uid:
        raise InputError(f"pod {pod.name}: no uid (metadata.uid) to name its cgroup")
    running = running_containers(pod)
    known = {c.name for c in pod.all_containers()}
    for mapping, what in ((placements or {}, "placement"), (container_ids or {}, "container id"),
                          (pids or {}, "process list")):
        for name in mapping:
            if name not in known:
                raise InputError(f"pod {pod.name}: {what} for unknown container {name!r}")
    v2 = tree.version == 2
    plr = settings.pod_level_resources
    qos = qos_class(pod, plr)
    sizes = huge_page_sizes(tree)
    pod_cfg = resource_config_for_pod(pod, enforce_cpu_limits=settings.enforce_cpu_limits,
                                      cpu_period_us=settings.cpu_period_us,
                                      enforce_memory_qos=settings.memory_qos and v2,
                                      memory_reservation_policy=settings.memory_reservation_policy,
                                      pod_level_resources=plr)
    if settings.pod_pids_limit is not None:
        pod_cfg = pod_cfg.with_changes(pids_limit=settings.pod_pids_limit)
    # unrequested page sizes are limited to 0 at the pod level too (the kubelet's toResources)
    pod_cfg = pod_cfg.with_changes(hugepage_limits={**{s: 0 for s in sizes}, **(pod_cfg.hugepage_limits or {})})
    pod_path = tree.pod_path(pod.uid, qos)
    containers = []
    for c in running:
        place = (placements or {}).get(c.name) or Placement()
        cfg = resource_config_for_container(
            pod, c, enforce_cpu_limits=settings.enforce_cpu_limits, cpu_period_us=settings.cpu_period_us,
            huge_page_sizes=sizes, cgroup_v2=v2, single_process_oom_kill=settings.single_process_oom_kill,
            enforce_memory_qos=settings.memory_qos and v2,
            memory_reservation_policy=settings.memory_reservation_policy,
            cpuset_cpus=place.cpus, cpuset_mems=place.mems, pod_level_resources=plr)
        cid = (container_ids or {}).get(c.name) or c.name
        containers.append((c, tree.container_path(pod_path, cid, settings.runtime), _settings(tree, cfg)))

    planner = Planner(tree)
    pod_settings = _settings(tree, pod_cfg)
    below_pod = [s for _, _, ss in containers for s in ss]
    below_tier = pod_settings + below_pod
    planner.ensure(tree.kubepods, (), below_tier, owned=False)
    if qos != GUARANTEED:
        planner.ensure(tree.tier_path(qos), (), below_tier, owned=False)
    planner.ensure(pod_path, pod_settings, below_pod)
    for c, path, ss in containers:
        planner.ensure(path, ss)
        procs = list((pids or {}).get(c.name, ()))
        planner.move(path, procs)
        if memory_capacity is not None:
            adj = container_oom_score_adj(pod, c, memory_capacity, pod_level_resources=plr)
            for pid in procs:
                path = f"/proc/{pid}/oom_score_adj"
                check_oom_score_adj(tree.fs, pid, adj, tree.fs.read_optional(path))
                planner.write_file(path, str(adj), f"{qos} container {c.name}")
    return planner.plan()


def plan_remove_pod(tree: CgroupTree, uid: str) -> Plan:
    """The plan that removes a pod's cgroup and its containers' (they must hold no processes)."""
    planner = Planner(tree)
    found = tree.find_pod(uid)
    if found is None:
        planner.notes.append(f"no cgroup of pod {uid} under {join(tree.primary, tree.kubepods)}")
        return planner.plan()
    planner.remove(found[0])
    return planner.plan()

