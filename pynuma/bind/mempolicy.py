"""NUMA memory policies: of the calling thread, of a buffer, and page migration.

Every mode of ``<linux/mempolicy.h>`` with the static/relative node flags,
through raw syscalls: the native core's, or on the pure-Python path libc's
``syscall(2)`` through cffi in ABI mode (no compiler needed); without
either, :class:`Unsupported` says why.
"""
from __future__ import annotations

import errno
import os

from .. import _impl
from .._record import Record
from ..cpuset import CPUSet
from ..errors import InputError, PynumaError, Unsupported, from_oserror
from ..fsroot import FsRoot
from ._ids import Ids, check_nodes, host, ids, node_bits

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Optional, Sequence, Tuple

_sys = _impl.select("sys")

# Modes of <linux/mempolicy.h> (MPOL_*), in kernel order.
MODES = ("default", "preferred", "bind", "interleave", "local", "preferred-many", "weighted-interleave")
MODE_SINCE = {"preferred-many": "Linux 5.15", "weighted-interleave": "Linux 6.9"}
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")  # mmap.PAGESIZE, without loading mmap
MPOL_F_STATIC_NODES = 1 << 15
MPOL_F_RELATIVE_NODES = 1 << 14
MPOL_F_NUMA_BALANCING = 1 << 13  # Linux 5.12, MPOL_BIND only
_FLAG_NAMES = ((MPOL_F_STATIC_NODES, "static"), (MPOL_F_RELATIVE_NODES, "relative"),
               (MPOL_F_NUMA_BALANCING, "numa-balancing"))
# get_mempolicy(2) flags
MPOL_F_NODE, MPOL_F_ADDR, MPOL_F_MEMS_ALLOWED = 1, 2, 4
# mbind(2) flags
MPOL_MF_STRICT, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL = 1, 2, 4


class MemPolicy(Record):
    """A memory policy: ``mode`` (one of :data:`MODES`), its ``nodes`` and ``flags`` (``static``, ``relative``...)."""

    _fields = ("mode", "nodes", "flags")
    _defaults = {"flags": ()}
    __slots__ = _fields

    def __str__(self) -> str:
        flags = f"={','.join(self.flags)}" if self.flags else ""
        nodes = f":{self.nodes}" if self.nodes else ""
        return f"{self.mode}{flags}{nodes}"


def mempolicy_supported() -> bool:
    """Whether memory-policy syscalls can be made (the native core, or cffi on the pure-Python path)."""
    return bool(_sys.mempolicy_supported())


def _require_native(what: str) -> None:
    if not _sys.mempolicy_supported():
        why = getattr(_sys, "_abi_why", None) or "neither is usable here"
        raise Unsupported(f"{what} needs pynuma's native core (build it with 'pip install .') or cffi: {why}")


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
        if nodes and nodes.max() >= node_bits(fs):
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
    fs = host(fs, "setting a memory policy")
    _require_native("set_mempolicy")
    wanted = ids(nodes, "node list")
    value = check_policy(mode, wanted, static, relative, fs)
    try:
        _sys.set_mempolicy(value, wanted.bits, node_bits(fs))
    except OSError as err:
        raise _policy_error(err, "set_mempolicy", mode, wanted) from err


def decode_mode(value: int) -> Tuple[str, Tuple[str, ...]]:
    """``(mode, flags)`` of a raw ``get_mempolicy`` mode word."""
    base = value & 0xFF
    mode = MODES[base] if base < len(MODES) else f"mode-{base}"
    return mode, tuple(name for bit, name in _FLAG_NAMES if value & bit)


def get_mempolicy(fs: Optional[FsRoot] = None) -> MemPolicy:
    """The calling thread's memory policy."""
    fs = host(fs, "reading the memory policy")
    _require_native("get_mempolicy")
    try:
        value, bits = _sys.get_mempolicy(node_bits(fs), 0, 0)
    except OSError as err:
        raise from_oserror(err, "get_mempolicy") from err
    mode, flags = decode_mode(value)
    return MemPolicy(mode, CPUSet.from_bits(bits), flags)


def mems_allowed(fs: Optional[FsRoot] = None) -> CPUSet:
    """Nodes the calling thread's cpuset lets it allocate from."""
    fs = host(fs, "reading allowed memory nodes")
    _require_native("get_mempolicy")
    try:
        return CPUSet.from_bits(_sys.get_mempolicy(node_bits(fs), 0, MPOL_F_MEMS_ALLOWED)[1])
    except OSError as err:
        raise from_oserror(err, "get_mempolicy(MPOL_F_MEMS_ALLOWED)") from err


def mbind(buf, mode: str, nodes: Ids = None, offset: int = 0, length: Optional[int] = None,
          static: bool = False, relative: bool = False, strict: bool = False, move: bool = False,
          move_all: bool = False, fs: Optional[FsRoot] = None) -> None:
    """Memory policy of ``buf[offset:offset+length]`` (an ``mmap``; page-aligned range)."""
    fs = host(fs, "binding memory")
    _require_native("mbind")
    wanted = ids(nodes, "node list")
    value = check_policy(mode, wanted, static, relative, fs)
    length = len(buf) - offset if length is None else length
    flags = (MPOL_MF_STRICT if strict else 0) | (MPOL_MF_MOVE if move else 0) | (MPOL_MF_MOVE_ALL if move_all else 0)
    try:
        _sys.mbind(buf, offset, length, value, wanted.bits, node_bits(fs), flags)
    except OSError as err:
        raise _policy_error(err, "mbind", mode, wanted) from err


def page_nodes(buf, offset: int = 0, length: Optional[int] = None, page_size: int = _PAGE_SIZE) -> List[int]:
    """NUMA node of each page of ``buf`` (negative errno where a page is not present, e.g. ``-ENOENT``)."""
    host(None, "querying page locations")
    _require_native("move_pages")
    length = len(buf) - offset if length is None else length
    base = _sys.buffer_address(buf) + offset
    return move_pages(0, [base + i for i in range(0, length, page_size)])


def move_pages(pid: int, addresses: Sequence[int], nodes: Optional[Sequence[int]] = None,
               move_all: bool = False, fs: Optional[FsRoot] = None) -> List[int]:
    """Query (``nodes`` None) or move pages of ``pid``; per-page node or negative errno."""
    fs = host(fs, "moving pages")
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
    fs = host(fs, "migrating pages")
    _require_native("migrate_pages")
    old, new = ids(from_nodes, "node list"), ids(to_nodes, "node list")
    if not old or not new:
        raise InputError("migrate_pages needs source and target nodes")
    check_nodes(old, fs, need_memory=False)
    check_nodes(new, fs, need_memory=True)
    try:
        return _sys.migrate_pages(int(pid), old.bits, new.bits, node_bits(fs))
    except OSError as err:
        raise from_oserror(err, f"migrate_pages(pid {pid})") from err


def supported_modes(fs: Optional[FsRoot] = None) -> Tuple[str, ...]:
    """Modes the running kernel accepts, probed on a throwaway thread (policies are per thread).

    Empty when no memory-policy syscall can be made (see :func:`mempolicy_supported`).
    """
    fs = host(fs, "probing memory policy modes")
    if not _sys.mempolicy_supported():
        return ()
    import threading

    nodes = _probe_nodes(fs)
    found: List[str] = []

    def probe() -> None:
        for mode in MODES:
            wanted = 0 if mode in ("default", "local") else nodes
            try:
                _sys.set_mempolicy(MODES.index(mode), wanted, node_bits(fs))
            except OSError:
                continue
            found.append(mode)
        _sys.set_mempolicy(0, 0, node_bits(fs))

    worker = threading.Thread(target=probe, name="pynuma-mode-probe")
    worker.start()
    worker.join()
    return tuple(found)


def _probe_nodes(fs: FsRoot) -> int:
    """Bitmap of one node with memory (the lowest this thread's cpuset allows), for probes.

    A node outside ``mems_allowed`` makes every node-taking mode fail with EINVAL,
    which would read as "unsupported" in a container restricted to other nodes.
    """
    from ._ids import memory_nodes

    nodes = memory_nodes(fs)
    try:
        usable = nodes & mems_allowed(fs)
    except PynumaError:
        usable = CPUSet()
    nodes = usable or nodes
    return 1 << nodes.min() if nodes else 1
