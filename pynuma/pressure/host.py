"""Live eviction signals of a machine (or of a saved dump under ``--root``), as the kubelet observes them.

>>> from pynuma.fsroot import FsRoot
>>> host = read_host(FsRoot("/"))                 # doctest: +SKIP
>>> host.observations["memory.available"]         # doctest: +SKIP

* ``memory.available`` = MemTotal - root cgroup working set (v1: root
  ``memory.usage_in_bytes`` - ``total_inactive_file``; v2: the root has no
  ``memory.current``, so usage = ``anon + file`` of the root ``memory.stat``,
  as runc/cAdvisor do).  It is *not* ``MemAvailable``.
* ``allocatableMemory.available`` = kubepods limit - kubepods working set.
* nodefs / imagefs / containerfs = ``statvfs`` of the kubelet root dir and the
  runtime's image dir (:mod:`pynuma.pressure.fsstats`: bytes available to unprivileged
  users; inodes free); a different device means a dedicated image fs.  On a
  dump whose folders sit on this host's disk they are unknown
  (:attr:`HostReading.fs_unknown` says why) unless given (``fs_given``).
* ``pid.available`` = min(pid_max, threads-max) - tasks (4th field of ``/proc/loadavg``).

All ``/proc`` and ``/sys`` reads go through :class:`~pynuma.fsroot.FsRoot`.
"""
from __future__ import annotations

import time

from .._dataclass import dataclass, field
from ..fsroot import FsRoot
from ..meminfo import MEMINFO
from ..parse import ascii_uint
from ..policy.eviction.observations import Observation, make_signal_observations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional, Tuple

    from .fsstats import FsStats

PID_MAX = "/proc/sys/kernel/pid_max"
THREADS_MAX = "/proc/sys/kernel/threads-max"
LOADAVG = "/proc/loadavg"
KUBELET_ROOT = "/var/lib/kubelet"


def parse_meminfo(text: str) -> Dict[str, int]:
    """``/proc/meminfo`` as bytes per field; ``ValueError`` on a malformed line."""
    out: Dict[str, int] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts or ascii_uint(parts[0]) is None:
            shown = repr(line) if len(line) <= 60 else f"{line[:48]!r}... ({len(line)} characters)"
            raise ValueError(f"malformed line {shown}")
        out[name.strip()] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


def parse_loadavg_tasks(text: str) -> int:
    """Total tasks from ``/proc/loadavg`` (``0.00 0.01 0.05 1/234 5678`` -> 234)."""
    fields = text.split()
    if len(fields) < 4 or "/" not in fields[3]:
        raise ValueError(f"unexpected content {text.strip()!r}")
    return int(fields[3].split("/", 1)[1])


def _fs_summary(st, now: float) -> dict:
    return {"availableBytes": st.available_bytes, "capacityBytes": st.capacity_bytes,
            "inodesFree": st.inodes_free, "inodes": st.inodes, "time": now}


def _device(fs: FsRoot, path: str) -> Optional[int]:
    try:
        return fs.stat(path).st_dev
    except OSError:
        return None


@dataclass(frozen=True)
class HostReading:
    """One reading of the machine: the summary, its observations, per-pod stats, and the explanation."""

    summary: dict
    observations: Dict[str, Observation]
    explain: dict
    warnings: Tuple[str, ...] = ()
    dedicated_image_fs: bool = False
    pods: list = field(default_factory=list)  # pynuma.cgroups PodCgroupStats when walked
    fs_unknown: Optional[str] = None  # why nodefs/imagefs figures are missing, when they are


def _memory_part(fs: FsRoot, meminfo: Dict[str, int], warnings: List[str], now: float) -> Tuple[dict, dict]:
    from ..cgroups import detect, kubepods_stats, node_root_stats

    node: dict = {}
    explain: dict = {"meminfo": {k: meminfo.get(k) for k in ("MemTotal", "MemFree", "MemAvailable", "Buffers",
                                                              "Cached", "Active(file)", "Inactive(file)")}}
    total = meminfo.get("MemTotal")
    try:
        layout = detect(fs)
        root = node_root_stats(fs, layout)
    except Exception as err:  # no cgroup fs in a dump: tolerate, explain why
        warnings.append(f"memory.available: {err}")
        return node, explain
    mode = layout.mode
    how = ("v2: the root cgroup has no memory.current; usage = anon + file of the root memory.stat "
           "(runc/cAdvisor emulation)" if layout.version == 2 else
           "v1: usage = memory.usage_in_bytes of the memory hierarchy root")
    ws = root.memory_working_set
    explain["cgroup"] = {"mode": mode, "usage": root.memory_usage, "usage_how": how,
                         "inactive_file": root.memory_inactive_file, "working_set": ws,
                         "working_set_how": "usage - inactive_file (v1: total_inactive_file), floored at 0"}
    if root.memory_rss is not None and root.memory_file is not None:
        # The other version's way, from the same memory.stat: shows how close v1 usage_in_bytes and anon+file are.
        explain["cgroup"]["anon_plus_file"] = root.memory_rss + root.memory_file
        explain["cgroup"]["anon_plus_file_how"] = ("v1 total_rss + total_cache" if layout.version == 1
                                                   else "v2 anon + file") + " of the root memory.stat"
    if total is not None and meminfo.get("MemAvailable") is not None:
        explain["meminfo_used"] = total - meminfo["MemAvailable"]
    if total is not None and ws is not None:
        node["memory"] = {"availableBytes": max(total - ws, 0), "workingSetBytes": ws, "time": now}
        explain["kubelet_memory_available"] = total - ws
        explain["kubelet_how"] = "MemTotal - root working set (capacity = MemTotal)"
        if meminfo.get("MemAvailable") is not None:
            explain["meminfo_available_minus_kubelet"] = meminfo["MemAvailable"] - (total - ws)
    if layout.kubepods is not None:
        try:
            kp = kubepods_stats(fs, layout)
            if kp.memory_working_set is not None and kp.memory_limit_known:
                node["systemContainers"] = [{"name": "pods", "memory": {
                    "availableBytes": max(kp.memory_limit - kp.memory_working_set, 0),
                    "workingSetBytes": kp.memory_working_set, "time": now}}]
                explain["allocatable"] = {"path": layout.kubepods, "limit": kp.memory_limit,
                                          "working_set": kp.memory_working_set}
        except Exception as err:
            warnings.append(f"allocatableMemory.available: {err}")
    return node, explain


def read_host(fs: FsRoot, kubelet_root: str = KUBELET_ROOT, image_dir: Optional[str] = None,
              container_dir: Optional[str] = None, now: Optional[float] = None, walk: bool = False,
              fs_given: Optional[Dict[str, "FsStats"]] = None) -> HostReading:
    """Read every eviction signal of the machine behind ``fs``; missing pieces become warnings.

    ``fs_given``: filesystem figures to use instead of measuring them
    (:func:`pynuma.pressure.fsstats.load_fs_stats`), e.g. for a dump.
    """
    now = time.time() if now is None else now
    warnings: List[str] = []
    meminfo_text = fs.read_optional(MEMINFO)
    meminfo: Dict[str, int] = {}
    if meminfo_text is None:
        warnings.append(f"{fs.host_path(MEMINFO)}: unreadable")
    else:
        try:
            meminfo = parse_meminfo(meminfo_text)
        except ValueError as err:
            warnings.append(f"{fs.host_path(MEMINFO)}: {err}")
    node, explain = _memory_part(fs, meminfo, warnings, now)

    from .fsstats import FiguresUnknown, node_fs_stats

    stats = {}
    fs_unknown = None
    if fs_given is not None:
        stats = dict(fs_given)
    else:
        try:
            stats = node_fs_stats(fs, kubelet_root, image_dir, container_dir)
        except FiguresUnknown as err:
            fs_unknown = str(err)
            warnings.append(f"nodefs and imagefs figures unknown: {err}")
        except Exception as err:  # statvfs refused: tolerate, report
            warnings.append(f"filesystems: {err}")
    nodefs, imagefs = stats.get("nodefs"), stats.get("imagefs")
    containerfs = stats.get("containerfs", imagefs)
    if nodefs is not None:
        node["fs"] = _fs_summary(nodefs, now)
    runtime = {}
    if imagefs is not None:
        runtime["imageFs"] = _fs_summary(imagefs, now)
    if containerfs is not None:
        runtime["containerFs"] = _fs_summary(containerfs, now)
    if runtime:
        node["runtime"] = runtime
    explain["filesystems"] = {name: (f.measured_at if f else None) for name, f in
                              (("nodefs", nodefs), ("imagefs", imagefs), ("containerfs", containerfs))}
    if fs_unknown is not None:
        explain["filesystems"]["unknown"] = fs_unknown
    if fs_given is not None:
        # given figures carry no device: the same figures are taken to be the same filesystem
        dedicated = bool(nodefs and imagefs and imagefs is not nodefs and
                         (imagefs.capacity_bytes, imagefs.inodes) != (nodefs.capacity_bytes, nodefs.inodes))
    else:
        dedicated = bool(nodefs and imagefs and
                         _device(fs, nodefs.measured_at) != _device(fs, imagefs.measured_at))

    limits = [v for v in (fs.parse(PID_MAX, lambda t: int(t.strip())), fs.parse(THREADS_MAX, lambda t: int(t.strip())))
              if v is not None]
    tasks = fs.parse(LOADAVG, parse_loadavg_tasks)
    if tasks is None:
        tasks = sum(1 for n in fs.listdir("/proc") if n.isdigit()) or None
    if limits and tasks is not None:
        node["rlimit"] = {"maxpid": min(limits), "curproc": tasks, "time": now}
        explain["pid"] = {"max": min(limits), "running": tasks,
                          "how": "min(kernel/pid_max, kernel/threads-max) - tasks in /proc/loadavg"}
    summary = {"node": node}
    pods = []
    if walk:
        from ..cgroups import walk_pods

        try:
            pods = walk_pods(fs)
        except Exception as err:
            warnings.append(f"pod cgroups: {err}")
    return HostReading(summary, make_signal_observations(summary), explain, tuple(warnings), dedicated, pods,
                       fs_unknown)
