"""Checking CPU and node ids against the machine before any binding syscall.

Ids come as cpulist text, ints, iterables or a :class:`CPUSet`; the
machine's possible/online CPUs and nodes are read through the root, and
every complaint names the offending id.  ``host()`` gives the live-host
root binding calls use, refusing a fake root.
"""
from __future__ import annotations

from ..cpuset import CPUSet
from ..errors import InputError, PynumaError, Unsupported
from ..fsroot import FsRoot

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Optional, Sequence, Union

    Ids = Union[str, int, Sequence[int], CPUSet, None]
else:
    Ids = "Union[str, int, Sequence[int], CPUSet, None]"  # the alias, spelled out (typing not imported)

def host(fs: Optional[FsRoot], what: str) -> FsRoot:
    """``fs`` (default: the live host, opened for this call and closed when dropped), refusing a fake
    root for ``what``."""
    if fs is None:
        fs = FsRoot("/")
    fs.require_host(what)
    return fs


def ids(value: Ids, what: str = "CPU list") -> CPUSet:
    """A :class:`CPUSet` from a cpulist string, an int, ids or a CPUSet; ``InputError`` naming the text."""
    if value is None:
        return CPUSet()
    if isinstance(value, CPUSet):
        return value
    if isinstance(value, int):
        value = [value]
    if isinstance(value, str):
        try:
            return CPUSet.parse(value)
        except ValueError as err:
            raise InputError(f"{what} {value!r}: {err}") from None
    try:
        return CPUSet(value)
    except (TypeError, ValueError) as err:
        raise InputError(f"{what} {value!r}: {err}") from None


def _sysfs_set(fs: FsRoot, path: str, default: Optional[CPUSet] = None) -> CPUSet:
    text = fs.read_optional(path)
    if text is None:
        if default is None:
            raise Unsupported(f"{fs.host_path(path)}: missing; cannot check ids")
        return default
    try:
        return CPUSet.parse(text)
    except ValueError as err:
        raise PynumaError(f"{fs.host_path(path)}: {err}") from None


def possible_cpus(fs: Optional[FsRoot] = None) -> CPUSet:
    """CPUs the kernel could ever bring online (sizes affinity masks)."""
    fs = fs or host(None, "")
    return _sysfs_set(fs, "/sys/devices/system/cpu/possible")


def online_cpus(fs: Optional[FsRoot] = None) -> CPUSet:
    fs = fs or host(None, "")
    return _sysfs_set(fs, "/sys/devices/system/cpu/online")


def numa_nodes(fs: Optional[FsRoot] = None) -> CPUSet:
    """Online NUMA node ids (``{0}`` on a kernel without NUMA)."""
    fs = fs or host(None, "")
    return _sysfs_set(fs, "/sys/devices/system/node/online", CPUSet([0]))


def memory_nodes(fs: Optional[FsRoot] = None) -> CPUSet:
    """Nodes with memory (``has_memory``); memory policies need at least one."""
    fs = fs or host(None, "")
    return _sysfs_set(fs, "/sys/devices/system/node/has_memory", numa_nodes(fs))


def node_cpus(nodes: Ids, fs: Optional[FsRoot] = None) -> CPUSet:
    """Union of the CPUs of ``nodes`` (for ``--cpunodebind``); unknown nodes are an ``InputError``."""
    fs = fs or host(None, "")
    wanted = ids(nodes, "node list")
    check_nodes(wanted, fs, need_memory=False)
    result = CPUSet()
    for n in wanted:
        result |= _sysfs_set(fs, f"/sys/devices/system/node/node{n}/cpulist", online_cpus(fs) if n == 0 else CPUSet())
    return result


def check_cpus(cpus: CPUSet, fs: FsRoot) -> None:
    """``InputError`` naming the first CPU that does not exist, or saying the set has no online CPU."""
    if not cpus:
        raise InputError("empty CPU set: give at least one CPU")
    possible = possible_cpus(fs)
    bad = cpus - possible
    if bad:
        raise InputError(f"CPU {bad.min()} does not exist (possible CPUs: {possible})")
    online = online_cpus(fs)
    if not cpus & online:
        raise InputError(f"CPU set {cpus} has no online CPU (online CPUs: {online})")


def check_nodes(nodes: CPUSet, fs: FsRoot, need_memory: bool) -> None:
    """``InputError`` naming the first node that does not exist (or a set without memory)."""
    known = numa_nodes(fs)
    bad = nodes - known
    if bad:
        raise InputError(f"NUMA node {bad.min()} does not exist (nodes: {known})")
    if need_memory and nodes and not nodes & memory_nodes(fs):
        raise InputError(f"NUMA node set {nodes} has no node with memory (memory nodes: {memory_nodes(fs)})")


def node_bits(fs: FsRoot) -> int:
    """Width of node masks: highest possible node + 1."""
    possible = _sysfs_set(fs, "/sys/devices/system/node/possible", CPUSet([0]))
    return possible.max() + 1 if possible else 1


