"""Signal observations: what each eviction signal reads, from a stats summary.

The summary is the kubelet's ``/stats/summary`` shape (``node.memory``,
``node.systemContainers[name=pods].memory``, ``node.fs``, ``node.runtime.imageFs``
/ ``containerFs``, ``node.rlimit``); snake_case keys are accepted too.  Each
observation keeps the stats timestamp (seconds, or ``None``) for the
"updated stats" rule.
"""
from __future__ import annotations

from ..._mapping import Mapping

from ..._dataclass import dataclass
from ...errors import InputError
from .signals import (
    ALLOCATABLE_MEMORY_AVAILABLE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE, MEMORY_AVAILABLE, NODEFS_AVAILABLE, NODEFS_INODES_FREE, PID_AVAILABLE,
)

BYTES_FORMAT, COUNT_FORMAT = "BinarySI", "DecimalSI"
_COUNT_SIGNALS = (NODEFS_INODES_FREE, IMAGEFS_INODES_FREE, CONTAINERFS_INODES_FREE, PID_AVAILABLE)


@dataclass(frozen=True)
class Observation:
    """``available`` and ``capacity`` of one signal (bytes or counts) and when it was measured."""

    available: int
    capacity: int
    time: Optional[float] = None

    def to_dict(self) -> dict:
        d = {"available": self.available, "capacity": self.capacity}
        if self.time is not None:
            d["time"] = self.time
        return d


def quantity_format(signal: str) -> str:
    """How the kubelet formats this signal's numbers (``BinarySI`` bytes, ``DecimalSI`` counts)."""
    return COUNT_FORMAT if signal in _COUNT_SIGNALS else BYTES_FORMAT


def _get(d: Optional[Mapping], *names: str) -> Any:
    if not isinstance(d, Mapping):
        return None
    for n in names:
        if n in d:
            return d[n]
    return None


def _int(v: Any) -> Optional[int]:
    """An integer field of a stats summary (uint64 in the kubelet's API); ``InputError`` naming a bad one."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise InputError(f"stats summary: {str(v)[:40]!r} is not a number of bytes or items")
    if not 0 <= v < 1 << 64:
        raise InputError(f"stats summary: {str(v)[:40]} is outside the uint64 range the kubelet reports")
    return int(v)


def _pods_container(node: Mapping) -> Optional[Mapping]:
    sc = _get(node, "systemContainers", "system_containers")
    if isinstance(sc, Mapping):
        return sc.get("pods")
    if isinstance(sc, list):
        for c in sc:
            if isinstance(c, Mapping) and c.get("name") == "pods":
                return c
    return None


def _memory_obs(mem: Optional[Mapping]) -> Optional[Observation]:
    avail = _int(_get(mem, "availableBytes", "available_bytes"))
    ws = _int(_get(mem, "workingSetBytes", "working_set_bytes"))
    if avail is None or ws is None:
        return None
    return Observation(avail, avail + ws, _get(mem, "time"))


def _fs_obs(fs: Optional[Mapping], inodes: bool) -> Optional[Observation]:
    if inodes:
        a, c = _int(_get(fs, "inodesFree", "inodes_free")), _int(_get(fs, "inodes"))
    else:
        a, c = _int(_get(fs, "availableBytes", "available_bytes")), _int(_get(fs, "capacityBytes", "capacity_bytes"))
    if a is None or c is None:
        return None
    return Observation(a, c, _get(fs, "time"))


def make_signal_observations(summary: Mapping) -> Dict[str, Observation]:
    """Observations of every signal the summary has data for (missing data: no observation)."""
    node = summary.get("node", summary) if isinstance(summary, Mapping) else {}
    out: Dict[str, Observation] = {}

    def put(signal: str, obs: Optional[Observation]) -> None:
        if obs is not None:
            out[signal] = obs

    # capacity = available + working set: the kubelet never reads MemTotal here.
    put(MEMORY_AVAILABLE, _memory_obs(_get(node, "memory")))
    pods = _pods_container(node)
    put(ALLOCATABLE_MEMORY_AVAILABLE, _memory_obs(_get(pods, "memory")))
    fs = _get(node, "fs")
    put(NODEFS_AVAILABLE, _fs_obs(fs, False))
    put(NODEFS_INODES_FREE, _fs_obs(fs, True))
    runtime = _get(node, "runtime")
    image = _get(runtime, "imageFs", "image_fs")
    put(IMAGEFS_AVAILABLE, _fs_obs(image, False))
    put(IMAGEFS_INODES_FREE, _fs_obs(image, True))
    cfs = _get(runtime, "containerFs", "container_fs")
    put(CONTAINERFS_AVAILABLE, _fs_obs(cfs, False))
    put(CONTAINERFS_INODES_FREE, _fs_obs(cfs, True))
    rlimit = _get(node, "rlimit")
    maxpid = _int(_get(rlimit, "maxpid", "maxPid", "max_pid"))
    cur = _int(_get(rlimit, "curproc", "curProc", "cur_proc"))
    if maxpid is not None and cur is not None:
        out[PID_AVAILABLE] = Observation(maxpid - cur, maxpid, _get(rlimit, "time"))
    return out


def summary_shape_problem(summary: Mapping) -> Optional[str]:
    """Why a stats summary's ``pods`` list cannot be read (a field of the wrong type), or ``None``."""
    pods = summary.get("pods")
    if pods is None:
        return None
    if not isinstance(pods, list):
        return "pods: expected a list"
    for i, p in enumerate(pods):
        if not isinstance(p, Mapping):
            return f"pods[{i}]: expected a map"
        ref = _get(p, "podRef", "pod_ref")
        if ref is not None and not isinstance(ref, Mapping):
            return f"pods[{i}].podRef: expected a map"
        for key in ("uid", "name", "namespace"):
            value = _get(ref, key)
            if value is not None and not isinstance(value, str):
                return f"pods[{i}].podRef.{key}: expected a string"
        for key in ("containers", "volume", "volumes"):
            if p.get(key) is not None and not isinstance(p.get(key), list):
                return f"pods[{i}].{key}: expected a list"
    return None


def pod_stats_from_summary(summary: Mapping) -> Dict[str, Any]:
    """Per-pod usage (``uid -> PodStats``) from the ``pods`` list of a kubelet stats summary."""
    from .podstats import ContainerStats, FsUsage, PodStats

    def fs(d: Any) -> Optional[FsUsage]:
        if not isinstance(d, Mapping):
            return None
        return FsUsage(_int(_get(d, "usedBytes", "used_bytes")), _int(_get(d, "inodesUsed", "inodes_used")))

    out: Dict[str, Any] = {}
    for p in summary.get("pods") or []:
        if not isinstance(p, Mapping):
            continue
        ref = _get(p, "podRef", "pod_ref") or {}
        uid = str(ref.get("uid") or ref.get("name") or "")
        if not uid:
            continue
        conts = tuple(ContainerStats(str(c.get("name", "")), fs(c.get("rootfs")), fs(c.get("logs")),
                                     _int(_get(c.get("memory"), "workingSetBytes", "working_set_bytes")))
                      for c in p.get("containers") or [] if isinstance(c, Mapping))
        vols = {str(v.get("name")): fs(v) for v in _get(p, "volume", "volumes") or [] if isinstance(v, Mapping)}
        procs = _get(p, "process_stats", "processStats")
        out[uid] = PodStats(
            memory_working_set=_int(_get(p.get("memory"), "workingSetBytes", "working_set_bytes")),
            process_count=_int(_get(procs, "process_count", "processCount")),
            containers=conts, volumes=vols,
            ephemeral_storage=fs(_get(p, "ephemeral-storage", "ephemeralStorage")),
        )
    return out
