"""Node capacity as the kubelet reports it, read through :class:`FsRoot` (live host or dump).

>>> cap = discover_capacity(FsRoot("/"), "/var/lib/kubelet", 110)   # doctest: +SKIP
>>> str(cap["cpu"]), str(cap["memory"])                              # doctest: +SKIP

cpu = online CPUs; memory = ``MemTotal``; ``hugepages-<size>`` = pages x size
per pool; ``ephemeral-storage`` = the kubelet root dir's filesystem size;
``pods`` = maxPods; ``pid`` = min(pid_max, threads-max) (internal: the kubelet
never puts it on the Node object, see :data:`INTERNAL`).
"""
from __future__ import annotations

from ..fsroot import FsRoot

HUGEPAGES = "/sys/kernel/mm/hugepages"
CPU_ONLINE = "/sys/devices/system/cpu/online"
#: capacity entries the kubelet keeps to itself (node allocatable math only)
INTERNAL = ("pid",)


def discover_capacity(fs, kubelet_root: str, max_pods: int, fs_given=None, unknown=None) -> dict:
    """The node capacity the kubelet would report, read through ``fs``.

    ``fs_given``: filesystem figures to use instead of statvfs; ``unknown``:
    a dict that receives ``{resource: why}`` for what could not be measured.
    """
    from ..errors import PynumaError
    from ..pressure.host import MEMINFO, PID_MAX, THREADS_MAX, parse_meminfo
    from ..pressure.fsstats import FiguresUnknown, own_fs_stats
    from ..parse import parse_cpulist, parse_hugepage_dirname
    from ..quantity import Quantity

    cap = {}
    cpus = len(fs.parse(CPU_ONLINE, parse_cpulist) or ())
    if not cpus:  # cpu/online missing or naming none: discovery's rule reads the cpuN directories
        from ..discover.cpus import read_cpu_sets

        cpus = bin(read_cpu_sets(fs, []).online).count("1")
    if cpus:
        cap["cpu"] = Quantity(cpus)
    meminfo = fs.parse(MEMINFO, parse_meminfo) or {}
    if "MemTotal" in meminfo:
        cap["memory"] = Quantity(meminfo["MemTotal"], "BinarySI")
    for entry in fs.listdir(HUGEPAGES):
        kb = parse_hugepage_dirname(entry)
        if kb is None:
            continue
        size = kb * 1024
        pages = fs.parse(f"{HUGEPAGES}/{entry}/nr_hugepages", _count)
        if pages is not None:
            cap["hugepages-" + str(Quantity(size, "BinarySI"))] = Quantity(pages * size, "BinarySI")
    try:
        nodefs = fs_given["nodefs"] if fs_given else own_fs_stats(fs, kubelet_root)
        cap["ephemeral-storage"] = Quantity(nodefs.capacity_bytes, "BinarySI")
    except FiguresUnknown as err:
        if unknown is not None:
            unknown["ephemeral-storage"] = str(err)
    except PynumaError:
        pass  # no statvfs: no ephemeral-storage capacity, as a kubelet without nodefs stats
    cap["pods"] = Quantity(max_pods)
    limits = [v for v in (fs.parse(PID_MAX, _count), fs.parse(THREADS_MAX, _count)) if v is not None]
    if limits:
        cap["pid"] = Quantity(min(limits))
    return cap


def _count(text: str) -> int:
    """A kernel count (``nr_hugepages``, ``pid_max``): ASCII digits only, ``ValueError`` otherwise."""
    from ..parse import ascii_uint

    value = ascii_uint(text.strip(" \t\r\n\x00"))
    if value is None:
        raise ValueError(f"expected a count, got {text.strip()[:40]!r}")
    return value
