"""CPU affinity and NUMA memory policy of threads, processes and buffers.

Syscalls without libnuma (native core; the pure-Python path has affinity
only).  Every id is checked before the syscall, errors name the bad id,
and a fake root refuses (binding acts on this host only)::

    from pynuma import bind
    bind.set_affinity("0-3")                   # the calling thread
    bind.set_affinity("0-3", pid, all_threads=True)
    bind.set_mempolicy("bind", "0")            # later allocations of this thread
    bind.get_mempolicy()                       # MemPolicy(mode='bind', nodes=CPUSet('0'), flags=())
    buf = mmap.mmap(-1, 1 << 20); bind.mbind(buf, "interleave", "0-1"); bind.page_nodes(buf)
    bind.migrate_pages(pid, "0", "1")
"""
from __future__ import annotations

import errno
import mmap
import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

from . import _impl
from ._record import Record
from .cpuset import CPUSet
from .errors import InputError, NoSuchProcess, PynumaError, Unsupported, from_oserror
from .fsroot import FsRoot

_sys = _impl.select("sys")

Ids = Union[str, int, Sequence[int], CPUSet, None]

# Modes of <linux/mempolicy.h> (MPOL_*), in kernel order.
MODES = ("default", "preferred", "bind", "interleave", "local", "preferred-many", "weighted-interleave")
MODE_SINCE = {"preferred-many": "Linux 5.15", "weighted-interleave": "Linux 6.9"}
MPOL_F_STATIC_NODES = 1 << 15
MPOL_F_RELATIVE_NODES = 1 << 14
MPOL_F_NUMA_BALANCING = 1 << 13  # Linux 5.12, MPOL_BIND only
_FLAG_NAMES = ((MPOL_F_STATIC_NODES, "static"), (MPOL_F_RELATIVE_NODES, "relative"),
               (MPOL_F_NUMA_BALANCING, "numa-balancing"))
# get_mempolicy(2) flags
MPOL_F_NODE, MPOL_F_ADDR, MPOL_F_MEMS_ALLOWED = 1, 2, 4
# mbind(2) flags
MPOL_MF_STRICT, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL = 1, 2, 4

_host: Optional[FsRoot] = None


class MemPolicy(Record):
    """A memory policy: ``mode`` (one of :data:`MODES`), its ``nodes`` and ``flags`` (``static``, ``relative``...)."""

    _fields = ("mode", "nodes", "flags")
    _defaults = {"flags": ()}
    __slots__ = _fields

    def __str__(self) -> str:
        flags = f"={','.join(self.flags)}" if self.flags else ""
        nodes = f":{self.nodes}" if self.nodes else ""
        return f"{self.mode}{flags}{nodes}"


def _fs(fs: Optional[FsRoot], what: str) -> FsRoot:
    global _host
    if fs is None:
        if _host is None:
            _host = FsRoot("/")
        fs = _host
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
    fs = fs or _fs(None, "")
    return _sysfs_set(fs, "/sys/devices/system/cpu/possible")


def online_cpus(fs: Optional[FsRoot] = None) -> CPUSet:
    fs = fs or _fs(None, "")
    return _sysfs_set(fs, "/sys/devices/system/cpu/online")


def numa_nodes(fs: Optional[FsRoot] = None) -> CPUSet:
    """Online NUMA node ids (``{0}`` on a kernel without NUMA)."""
    fs = fs or _fs(None, "")
    return _sysfs_set(fs, "/sys/devices/system/node/online", CPUSet([0]))


def memory_nodes(fs: Optional[FsRoot] = None) -> CPUSet:
    """Nodes with memory (``has_memory``); memory policies need at least one."""
    fs = fs or _fs(None, "")
    return _sysfs_set(fs, "/sys/devices/system/node/has_memory", numa_nodes(fs))


def node_cpus(nodes: Ids, fs: Optional[FsRoot] = None) -> CPUSet:
    """Union of the CPUs of ``nodes`` (for ``--cpunodebind``); unknown nodes are an ``InputError``."""
    fs = fs or _fs(None, "")
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


def _node_bits(fs: FsRoot) -> int:
    possible = _sysfs_set(fs, "/sys/devices/system/node/possible", CPUSet([0]))
    return possible.max() + 1 if possible else 1


# -- CPU affinity -------------------------------------------------------
def thread_ids(pid: int, fs: Optional[FsRoot] = None) -> List[int]:
    """Kernel thread ids of process ``pid`` (``/proc/PID/task``)."""
    fs = fs or _fs(None, "listing threads")
    tids = [int(t) for t in fs.listdir(f"/proc/{int(pid)}/task") if t.isdigit()]
    if not tids:
        raise NoSuchProcess(f"process {pid}: no such process")
    return tids


def get_affinity(pid: int = 0, fs: Optional[FsRoot] = None) -> CPUSet:
    """CPUs thread/process ``pid`` may run on (0 = calling thread)."""
    fs = _fs(fs, "reading CPU affinity")
    try:
        return CPUSet.from_bits(_sys.sched_getaffinity(int(pid), possible_cpus(fs).max() + 1))
    except OSError as err:
        raise from_oserror(err, f"sched_getaffinity(pid {pid})") from err


def thread_affinities(pid: int, fs: Optional[FsRoot] = None) -> Dict[int, CPUSet]:
    """``{tid: CPUs}`` for every thread of process ``pid``."""
    fs = _fs(fs, "reading CPU affinity")
    out: Dict[int, CPUSet] = {}
    for tid in sorted(thread_ids(pid, fs)):
        try:
            out[tid] = get_affinity(tid, fs)
        except NoSuchProcess:
            continue  # the thread exited meanwhile
    return out


def set_affinity(cpus: Ids, pid: int = 0, all_threads: bool = False, fs: Optional[FsRoot] = None) -> List[int]:
    """Pin ``pid`` (0 = calling thread; every thread with ``all_threads``) to ``cpus``.

    Returns the thread ids changed.  A set with no online CPU, or none
    allowed by the target's cpuset, is an ``InputError`` saying so.
    """
    fs = _fs(fs, "setting CPU affinity")
    wanted = ids(cpus)
    check_cpus(wanted, fs)
    targets = thread_ids(pid, fs) if all_threads else [int(pid)]
    done: List[int] = []
    for _ in range(3):  # threads created meanwhile get a second pass
        for tid in targets:
            try:
                _sys.sched_setaffinity(tid, wanted.bits)
            except OSError as err:
                if err.errno == errno.ESRCH and all_threads:
                    continue  # the thread exited meanwhile
                if err.errno == errno.EINVAL:
                    raise InputError(f"CPU set {wanted} has no online CPU allowed for pid {tid or 'self'} "
                                     f"(online CPUs: {online_cpus(fs)})") from err
                raise from_oserror(err, f"sched_setaffinity(pid {tid})") from err
            done.append(tid)
        if not all_threads:
            break
        targets = [t for t in thread_ids(pid, fs) if t not in done]
        if not targets:
            break
    return done


# -- memory policy ------------------------------------------------------
def mempolicy_supported() -> bool:
    """Whether this build can make memory-policy syscalls (the native core is built)."""
    return bool(_sys.mempolicy_supported())


def _require_native(what: str) -> None:
    if not _sys.mempolicy_supported():
        raise Unsupported(f"{what} needs pynuma's native core (build it with 'pip install .'); "
                          "the pure-Python path has CPU affinity only")


def check_policy(mode: str, nodes: CPUSet, static: bool, relative: bool, fs: FsRoot) -> int:
    """The raw mode word for a valid policy; ``InputError`` saying what is wrong otherwise (no syscall)."""
    if mode not in MODES:
        raise InputError(f"unknown memory policy mode {mode!r} (modes: {', '.join(MODES)})")
    if static and relative:
        raise InputError("static and relative node flags exclude each other")
    if mode in ("default", "local"):
        if nodes:
            raise InputError(f"memory policy {mode} takes no nodes (got {nodes})")
        if static or relative:
            raise InputError(f"memory policy {mode} takes no node flags")
    elif not nodes:
        raise InputError(f"memory policy {mode} needs at least one node")
    if mode == "preferred" and len(nodes) > 1:
        raise InputError(f"memory policy preferred takes one node (got {nodes}; see preferred-many)")
    if relative:
        if nodes and nodes.max() >= _node_bits(fs):
            raise InputError(f"relative node {nodes.max()} is beyond the possible nodes")
    else:
        check_nodes(nodes, fs, need_memory=mode != "default")
    return MODES.index(mode) | (MPOL_F_STATIC_NODES if static else 0) | (MPOL_F_RELATIVE_NODES if relative else 0)


def _policy_error(err: OSError, call: str, mode: str, nodes: CPUSet) -> PynumaError:
    if err.errno == errno.EINVAL and mode in MODE_SINCE:
        return Unsupported(f"{call}: memory policy {mode} was refused (it needs {MODE_SINCE[mode]} or later)")
    if err.errno == errno.EINVAL:
        return InputError(f"{call}: the kernel refused policy {mode} on nodes {nodes or 'none'} "
                          f"(not allowed by the cpuset, or no memory there)")
    return from_oserror(err, call)


def set_mempolicy(mode: str, nodes: Ids = None, static: bool = False, relative: bool = False,
                  fs: Optional[FsRoot] = None) -> None:
    """Memory policy of the calling thread (inherited by children and kept across exec)."""
    fs = _fs(fs, "setting a memory policy")
    _require_native("set_mempolicy")
    wanted = ids(nodes, "node list")
    value = check_policy(mode, wanted, static, relative, fs)
    try:
        _sys.set_mempolicy(value, wanted.bits, _node_bits(fs))
    except OSError as err:
        raise _policy_error(err, "set_mempolicy", mode, wanted) from err


def decode_mode(value: int) -> Tuple[str, Tuple[str, ...]]:
    """``(mode, flags)`` of a raw ``get_mempolicy`` mode word."""
    base = value & 0xFF
    mode = MODES[base] if base < len(MODES) else f"mode-{base}"
    return mode, tuple(name for bit, name in _FLAG_NAMES if value & bit)


def get_mempolicy(fs: Optional[FsRoot] = None) -> MemPolicy:
    """The calling thread's memory policy."""
    fs = _fs(fs, "reading the memory policy")
    _require_native("get_mempolicy")
    try:
        value, bits = _sys.get_mempolicy(_node_bits(fs), 0, 0)
    except OSError as err:
        raise from_oserror(err, "get_mempolicy") from err
    mode, flags = decode_mode(value)
    return MemPolicy(mode, CPUSet.from_bits(bits), flags)


def mems_allowed(fs: Optional[FsRoot] = None) -> CPUSet:
    """Nodes the calling thread's cpuset lets it allocate from."""
    fs = _fs(fs, "reading allowed memory nodes")
    _require_native("get_mempolicy")
    try:
        return CPUSet.from_bits(_sys.get_mempolicy(_node_bits(fs), 0, MPOL_F_MEMS_ALLOWED)[1])
    except OSError as err:
        raise from_oserror(err, "get_mempolicy(MPOL_F_MEMS_ALLOWED)") from err


def mbind(buf, mode: str, nodes: Ids = None, offset: int = 0, length: Optional[int] = None,
          static: bool = False, relative: bool = False, strict: bool = False, move: bool = False,
          move_all: bool = False, fs: Optional[FsRoot] = None) -> None:
    """Memory policy of ``buf[offset:offset+length]`` (an ``mmap``; page-aligned range)."""
    fs = _fs(fs, "binding memory")
    _require_native("mbind")
    wanted = ids(nodes, "node list")
    value = check_policy(mode, wanted, static, relative, fs)
    length = len(buf) - offset if length is None else length
    flags = (MPOL_MF_STRICT if strict else 0) | (MPOL_MF_MOVE if move else 0) | (MPOL_MF_MOVE_ALL if move_all else 0)
    try:
        _sys.mbind(buf, offset, length, value, wanted.bits, _node_bits(fs), flags)
    except OSError as err:
        raise _policy_error(err, "mbind", mode, wanted) from err


def page_nodes(buf, offset: int = 0, length: Optional[int] = None, page_size: int = mmap.PAGESIZE) -> List[int]:
    """NUMA node of each page of ``buf`` (negative errno where a page is not present, e.g. ``-ENOENT``)."""
    _fs(None, "querying page locations")
    _require_native("move_pages")
    length = len(buf) - offset if length is None else length
    base = _sys.buffer_address(buf) + offset
    return move_pages(0, [base + i for i in range(0, length, page_size)])


def move_pages(pid: int, addresses: Sequence[int], nodes: Optional[Sequence[int]] = None,
               move_all: bool = False, fs: Optional[FsRoot] = None) -> List[int]:
    """Query (``nodes`` None) or move pages of ``pid``; per-page node or negative errno."""
    fs = _fs(fs, "moving pages")
    _require_native("move_pages")
    if nodes is not None:
        check_nodes(CPUSet(nodes), fs, need_memory=True)
    try:
        return _sys.move_pages(int(pid), list(addresses), None if nodes is None else list(nodes),
                               MPOL_MF_MOVE_ALL if move_all else MPOL_MF_MOVE * (nodes is not None))
    except OSError as err:
        raise from_oserror(err, f"move_pages(pid {pid})") from err


def migrate_pages(pid: int, from_nodes: Ids, to_nodes: Ids, fs: Optional[FsRoot] = None) -> int:
    """Move process ``pid``'s pages from ``from_nodes`` to ``to_nodes``; returns pages left behind."""
    fs = _fs(fs, "migrating pages")
    _require_native("migrate_pages")
    old, new = ids(from_nodes, "node list"), ids(to_nodes, "node list")
    if not old or not new:
        raise InputError("migrate_pages needs source and target nodes")
    check_nodes(old, fs, need_memory=False)
    check_nodes(new, fs, need_memory=True)
    try:
        return _sys.migrate_pages(int(pid), old.bits, new.bits, _node_bits(fs))
    except OSError as err:
        raise from_oserror(err, f"migrate_pages(pid {pid})") from err


# -- another process's placement (read from /proc) ---------------------
_POLICY = re.compile(r"(default|prefer \(many\)|weighted interleave|prefer|bind|interleave|local)"
                     r"(?:=([a-z|,]+))?(?::([0-9,\-]+))?")
_NUMA_MAPS_MODES = {"prefer": "preferred", "prefer (many)": "preferred-many",
                    "weighted interleave": "weighted-interleave"}


def parse_numa_maps_policy(line: str) -> MemPolicy:
    """The policy of one ``/proc/PID/numa_maps`` line (``"7f.. bind=static:0-1 anon=3 ..."``)."""
    _, _, rest = line.strip().partition(" ")
    m = _POLICY.match(rest)
    if m is None:
        raise ValueError(f"no memory policy in numa_maps line {line.strip()[:60]!r}")
    flags = tuple({"balancing": "numa-balancing"}.get(f, f) for f in re.split(r"[|,]", m.group(2) or "") if f)
    return MemPolicy(_NUMA_MAPS_MODES.get(m.group(1), m.group(1)), CPUSet.parse(m.group(3) or ""), flags)


def process_policy(pid: int, fs: Optional[FsRoot] = None) -> Optional[MemPolicy]:
    """The policy most of ``pid``'s mappings follow (its task policy, unless mbind changed many); None if unreadable."""
    fs = fs or _fs(None, "reading a process's memory policy")
    text = fs.read_optional(f"/proc/{int(pid)}/numa_maps")
    if not text:
        return None
    counts: Dict[MemPolicy, int] = {}
    for line in text.splitlines():
        try:
            pol = parse_numa_maps_policy(line)
        except ValueError:
            continue
        counts[pol] = counts.get(pol, 0) + 1
    return max(counts, key=counts.get) if counts else None
