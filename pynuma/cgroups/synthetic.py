"""Write a synthetic kubelet cgroup tree under a directory (tests, benchmarks, demos).

The tree has what a real node has: ``/proc/mounts`` for the mode (v1, v2,
hybrid), the kubepods hierarchy under the chosen driver's names, the full
set of cgroup files per directory (most empty, the read ones with realistic
content, e.g. a 50-line ``memory.stat``), and ``/proc/meminfo``.  Every
figure derives from the cgroup's index, and :func:`build_tree` returns them so
tests compare against what was written, never against constants.
"""
from __future__ import annotations

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .detect import HYBRID, SYSTEMD, V1, V2
from .kubepods import BEST_EFFORT, BURSTABLE, GUARANTEED, container_cgroup_name, pod_cgroup_name

MEM_TOTAL = 64 << 30

_V2_EXTRA = ("cgroup.controllers", "cgroup.events", "cgroup.freeze", "cgroup.kill", "cgroup.max.depth",
             "cgroup.max.descendants", "cgroup.pressure", "cgroup.procs", "cgroup.stat", "cgroup.subtree_control",
             "cgroup.threads", "cgroup.type", "cpu.idle", "cpu.max", "cpu.max.burst", "cpu.pressure", "cpu.weight",
             "cpu.weight.nice", "cpuset.cpus", "cpuset.cpus.effective", "cpuset.mems", "cpuset.mems.effective",
             "io.max", "io.pressure", "io.stat", "io.weight", "memory.events", "memory.events.local", "memory.high",
             "memory.low", "memory.min", "memory.numa_stat", "memory.oom.group", "memory.peak", "memory.pressure",
             "memory.reclaim", "memory.swap.current", "memory.swap.events", "memory.swap.high", "memory.swap.max",
             "memory.swap.peak", "memory.zswap.current", "memory.zswap.max", "pids.events", "pids.peak")
_V1_MEM_EXTRA = ("cgroup.clone_children", "cgroup.event_control", "cgroup.procs", "memory.failcnt",
                 "memory.force_empty", "memory.kmem.failcnt", "memory.kmem.limit_in_bytes",
                 "memory.kmem.max_usage_in_bytes", "memory.kmem.usage_in_bytes", "memory.max_usage_in_bytes",
                 "memory.memsw.failcnt", "memory.memsw.limit_in_bytes", "memory.memsw.usage_in_bytes",
                 "memory.move_charge_at_immigrate", "memory.numa_stat", "memory.oom_control",
                 "memory.pressure_level", "memory.soft_limit_in_bytes", "memory.swappiness", "memory.use_hierarchy",
                 "notify_on_release", "tasks")
_V1_CPUACCT_EXTRA = ("cgroup.procs", "cpuacct.stat", "cpuacct.usage_all", "cpuacct.usage_percpu",
                     "cpuacct.usage_sys", "cpuacct.usage_user", "tasks")
_V1_PIDS_EXTRA = ("cgroup.procs", "pids.events", "tasks")


class Expected(NamedTuple):
    """What was written for one cgroup (bytes, ns; limit None = ``max``)."""

    usage: int
    limit: Optional[int]
    anon: int
    file: int
    inactive_file: int
    pids: int
    pids_max: Optional[int]
    cpu_ns: int
    hugetlb: Dict[str, int]


class PodSpec(NamedTuple):
    uid: str
    qos: str
    containers: Tuple[Tuple[str, str], ...]  # (runtime, id)


def figures(index: int, huge_sizes: Sequence[str]) -> Expected:
    """Deterministic, distinct figures for the cgroup with this index."""
    usage = (index + 1) * 3 * (1 << 20) + index * 4096
    inactive = (index % 7) * (1 << 20)
    if index % 5 == 0:
        inactive = usage + 4096  # inactive_file above usage: working set floors at 0
    anon = usage // 2
    return Expected(usage=usage, limit=None if index % 3 == 0 else usage * 4, anon=anon, file=usage - anon,
                    inactive_file=inactive, pids=index % 50 + 1, pids_max=None if index % 2 else 4096 + index,
                    cpu_ns=(index + 1) * 1_000_000_000 + index * 1000,
                    hugetlb={s: (index % 4) * (2 << 20) for s in huge_sizes})


def _v2_stat(e: Expected) -> str:
    keys = [("anon", e.anon), ("file", e.file), ("kernel", 1 << 20), ("kernel_stack", 65536),
            ("pagetables", 131072), ("sec_pagetables", 0), ("percpu", 4096), ("sock", 0), ("vmalloc", 0),
            ("shmem", 0), ("zswap", 0), ("zswapped", 0), ("file_mapped", e.file // 3), ("file_dirty", 4096),
            ("file_writeback", 0), ("swapcached", 0), ("anon_thp", 0), ("file_thp", 0), ("shmem_thp", 0),
            ("inactive_anon", e.anon // 4), ("active_anon", e.anon - e.anon // 4),
            ("inactive_file", e.inactive_file), ("active_file", max(e.file - e.inactive_file, 0)),
            ("unevictable", 0), ("slab_reclaimable", 262144), ("slab_unreclaimable", 131072), ("slab", 393216)]
    keys += [(k, 17) for k in ("workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
                               "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file",
                               "workingset_nodereclaim", "pgscan", "pgsteal", "pgscan_kswapd", "pgscan_direct",
                               "pgsteal_kswapd", "pgsteal_direct", "pgfault", "pgmajfault", "pgrefill",
                               "pgactivate", "pgdeactivate", "pglazyfree", "pglazyfreed", "zswpin", "zswpout",
                               "thp_fault_alloc", "thp_collapse_alloc")]
    return "".join(f"{k} {v}\n" for k, v in keys)


def _v1_stat(e: Expected) -> str:
    local = [("cache", e.file), ("rss", e.anon), ("rss_huge", 0), ("shmem", 0), ("mapped_file", e.file // 3),
             ("dirty", 4096), ("writeback", 0), ("swap", 0), ("pgpgin", 1234), ("pgpgout", 1000), ("pgfault", 5000),
             ("pgmajfault", 3), ("inactive_anon", e.anon // 4), ("active_anon", e.anon - e.anon // 4),
             ("inactive_file", e.inactive_file), ("active_file", max(e.file - e.inactive_file, 0)),
             ("unevictable", 0), ("hierarchical_memory_limit", e.limit or 9223372036854771712),
             ("hierarchical_memsw_limit", 9223372036854771712)]
    total = [("total_" + k, v) for k, v in local[:17]]
    return "".join(f"{k} {v}\n" for k, v in local + total)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _touch_all(d: str, names: Sequence[str]) -> None:
    for n in names:
        open(os.path.join(d, n), "w").close()


def _cgroup_dir(hier_dir: str, rel: str, extras: Sequence[str]) -> str:
    """Create the cgroup ``rel`` in one hierarchy, with the ``extras`` (empty files) a kernel would show."""
    d = os.path.join(hier_dir, rel)
    os.makedirs(d, exist_ok=True)
    _touch_all(d, extras)
    return d


def write_cgroup(mode: str, hier: Dict[str, str], rel: str, e: Expected, extra: bool = True) -> None:
    """Write one cgroup's files at ``rel`` below each hierarchy directory in ``hier``."""
    if mode == V2:
        d = _cgroup_dir(hier["unified"], rel, _V2_EXTRA if extra else ())
        _write(os.path.join(d, "memory.current"), f"{e.usage}\n")
        _write(os.path.join(d, "memory.max"), "max\n" if e.limit is None else f"{e.limit}\n")
        _write(os.path.join(d, "memory.stat"), _v2_stat(e))
        _write(os.path.join(d, "cpu.stat"), f"usage_usec {e.cpu_ns // 1000}\nuser_usec {e.cpu_ns // 2000}\n"
               f"system_usec {e.cpu_ns // 2000}\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n")
        _write(os.path.join(d, "pids.current"), f"{e.pids}\n")
        _write(os.path.join(d, "pids.max"), "max\n" if e.pids_max is None else f"{e.pids_max}\n")
        for s, v in e.hugetlb.items():
            _write(os.path.join(d, f"hugetlb.{s}.current"), f"{v}\n")
            if extra:
                _touch_all(d, (f"hugetlb.{s}.max", f"hugetlb.{s}.events", f"hugetlb.{s}.rsvd.current"))
        return
    m = _cgroup_dir(hier["memory"], rel, _V1_MEM_EXTRA if extra else ())
    _write(os.path.join(m, "memory.usage_in_bytes"), f"{e.usage}\n")
    _write(os.path.join(m, "memory.limit_in_bytes"), f"{e.limit or 9223372036854771712}\n")
    _write(os.path.join(m, "memory.stat"), _v1_stat(e))
    c = _cgroup_dir(hier["cpuacct"], rel, _V1_CPUACCT_EXTRA if extra else ())
    _write(os.path.join(c, "cpuacct.usage"), f"{e.cpu_ns}\n")
    p = _cgroup_dir(hier["pids"], rel, _V1_PIDS_EXTRA if extra else ())
    _write(os.path.join(p, "pids.current"), f"{e.pids}\n")
    _write(os.path.join(p, "pids.max"), "max\n" if e.pids_max is None else f"{e.pids_max}\n")
    if "hugetlb" in hier:
        h = _cgroup_dir(hier["hugetlb"], rel, ())
        for s, v in e.hugetlb.items():
            _write(os.path.join(h, f"hugetlb.{s}.usage_in_bytes"), f"{v}\n")


def hierarchies(root: str, mode: str) -> Dict[str, str]:
    """Host directories of each hierarchy of a tree under ``root``."""
    cg = os.path.join(root, "sys/fs/cgroup")
    if mode == V2:
        return {"unified": cg}
    return {c: os.path.join(cg, c) for c in ("memory", "cpuacct", "pids", "hugetlb")}


def _mounts(mode: str) -> str:
    lines = ["proc /proc proc rw,nosuid 0 0", "sysfs /sys sysfs rw,nosuid 0 0"]
    if mode == V2:
        lines.append("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0")
    else:
        lines.append("tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,mode=755 0 0")
        if mode == HYBRID:
            lines.append("cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,nodev,noexec,relatime 0 0")
        for c in ("memory", "cpuacct", "pids", "hugetlb"):
            lines.append(f"cgroup /sys/fs/cgroup/{c} cgroup rw,nosuid,nodev,noexec,relatime,{c} 0 0")
    return "\n".join(lines) + "\n"


def make_pods(count: int, containers_per_pod: int = 2, runtime: str = "cri-containerd") -> List[PodSpec]:
    """``count`` pods spread over the three QoS classes."""
    pods = []
    qos_cycle = (GUARANTEED, BURSTABLE, BEST_EFFORT)
    for i in range(count):
        uid = f"{i:08x}-1111-2222-3333-{i:012x}"
        conts = tuple((runtime, f"{i:032x}{j:032x}") for j in range(containers_per_pod))
        pods.append(PodSpec(uid, qos_cycle[i % 3], conts))
    return pods


def build_tree(root: str, mode: str = V2, driver: str = SYSTEMD, pods: Sequence[PodSpec] = (),
               huge_sizes: Sequence[str] = ("2MB",), extra_files: bool = True) -> Dict[str, Expected]:
    """Write the tree; returns ``{path below kubepods ("" = kubepods, "/" = root): figures written}``."""
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)
    _write(os.path.join(root, "proc/mounts"), _mounts(mode))
    _write(os.path.join(root, "proc/meminfo"), f"MemTotal:       {MEM_TOTAL // 1024} kB\nMemFree: 1 kB\n")
    for s in huge_sizes:
        kb = int(s[:-2]) * (1024 if s.endswith("MB") else 1024 * 1024)
        os.makedirs(os.path.join(root, f"sys/kernel/mm/hugepages/hugepages-{kb}kB"), exist_ok=True)
    wmode = V2 if mode == V2 else V1
    hier = hierarchies(root, mode)
    if mode == HYBRID:
        os.makedirs(os.path.join(root, "sys/fs/cgroup/unified"), exist_ok=True)
    kp = "kubepods.slice" if driver == SYSTEMD else "kubepods"
    expected: Dict[str, Expected] = {}
    idx = 0

    def put(rel: str, full_rel: str) -> None:
        nonlocal idx
        e = figures(idx, huge_sizes)
        idx += 1
        write_cgroup(wmode, hier, full_rel, e, extra_files)
        expected[rel] = e

    root_e = figures(998, huge_sizes)
    write_cgroup(wmode, hier, "", root_e, extra=False)
    if wmode == V2:
        os.remove(os.path.join(hier["unified"], "memory.current"))  # the v2 root has none
    expected["/"] = root_e
    put("", kp)
    for qos in (BURSTABLE, BEST_EFFORT):
        rel = pod_cgroup_name("x", qos, driver).rsplit("/", 1)[0]
        put(rel, f"{kp}/{rel}")
    for pod in pods:
        prel = pod_cgroup_name(pod.uid, pod.qos, driver)
        put(prel, f"{kp}/{prel}")
        for runtime, cid in pod.containers:
            crel = f"{prel}/{container_cgroup_name(cid, driver, runtime)}"
            put(crel, f"{kp}/{crel}")
    return expected
