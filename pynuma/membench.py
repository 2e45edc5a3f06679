"""NUMA memory microbenchmarks: latency and bandwidth for every (CPU node, memory node) pair.

For each pair a worker thread is pinned to the CPU node's CPUs and works
on buffers bound (``mbind``) to the memory node: a pointer chase through a
random single cycle of cache lines (ns per dependent load, buffer well
beyond the last-level cache), a streaming read and a copy (GB/s, 1 GB =
1e9 bytes).  Loops are timed on the worker thread's CPU clock, so other
load on the host does not inflate them.  The latency matrix is also
normalised to the SLIT convention (local = 10) to set beside the
firmware's distances::

    from pynuma import membench
    result = membench.run(size=64 << 20, duration=0.5)
    result.latency_ns, result.normalised, result.firmware
"""
from __future__ import annotations

import mmap
import re
import threading
import time
from typing import Callable, List, Optional, Sequence

from . import _impl
from ._record import Record
from .errors import InputError
from .parse import ascii_uint

_bench = _impl.select("membench")

LINE = 64  # chase stride: one cache line per hop
MIN_SIZE = 2 * LINE
DEFAULT_SIZE = 64 << 20  # when the caches are unknown
# The default buffer: CACHE_FACTOR x the largest cache, so the chase and the streams miss it,
# within [MIN_DEFAULT, MAX_DEFAULT] and at most 1/AVAILABLE_SHARE of the memory the kernel
# calls available (one buffer's worth is all that is ever allocated at a time).
CACHE_FACTOR = 4
MIN_DEFAULT, MAX_DEFAULT = 16 << 20, 256 << 20
AVAILABLE_SHARE = 4
_FILL = b"\x01" * (1 << 20)
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgGtT]?)(i?[bB]?)\s*$")
_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
_MATRICES = ("latency_ns", "read_gbps", "copy_gbps", "normalised", "firmware")


class MembenchResult(Record):
    """Matrices indexed ``[cpu_nodes[i]][mem_nodes[j]]``; ``None`` where a pair was not measured.

    ``normalised``: each row of the latency matrix scaled so that the local
    entry is 10 (SLIT convention); ``firmware``: the firmware/sysfs distances
    for the same pairs, or ``None``.  ``memory_bound`` is False when buffers
    could not be bound to nodes (no native core and no cffi): then only first-touch
    (local) memory was measured.
    """

    _fields = ("cpu_nodes", "mem_nodes", "latency_ns", "read_gbps", "copy_gbps", "normalised", "firmware",
               "size_bytes", "duration_s", "threads", "native", "memory_bound", "warnings")
    __slots__ = _fields

    def to_dict(self) -> dict:
        """JSON-ready form (matrices as lists of rows)."""
        out = {}
        for name, value in zip(self._fields, self._values()):
            if name in _MATRICES and value is not None:
                value = [list(row) for row in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out


def parse_size(text: str) -> int:
    """``"64M"``, ``"64MiB"``, ``"1g"``, ``"65536"`` -> bytes (binary multiples); ``InputError`` otherwise."""
    m = _SIZE.match(str(text))
    if m is None or (m.group(3) and not m.group(2) and m.group(3) != "B" and m.group(3) != "b"):
        raise InputError(f"size {str(text)[:40]!r}: expected a number with an optional K, M, G or T suffix")
    digits = m.group(1).lstrip("0") or "0"
    size = int(digits) << _SHIFT[m.group(2).lower()] if len(digits) <= 19 else 1 << 64
    if size >= 1 << 63:  # checked on the digits first: thousands of them are never converted
        raise InputError(f"size {str(text)[:40]!r}: too large")
    return size


# -- single measurements ------------------------------------------------
def _timed(fn, duration: float, first: int, target_chunk_ns: float = 50e6):
    """Call ``fn(count) -> (ns, work)`` in growing chunks until ``duration`` s; total (ns, work)."""
    count, total_ns, total_work = max(1, first), 0, 0
    deadline = time.monotonic() + duration
    while True:
        ns, work = fn(count)
        total_ns += ns
        total_work += work
        if time.monotonic() >= deadline:
            return total_ns, total_work
        if ns > 0:
            count = max(1, int(count * min(8.0, target_chunk_ns / ns)))


def chase_latency(buf, duration: float, seed: int = 1) -> float:
    """Average ns per dependent load through ``buf`` (built here as one random cycle)."""
    _bench.chase_build(buf, LINE, seed)
    state = {"off": 0}

    def step(count):
        ns, state["off"] = _bench.chase_run(buf, state["off"], count)
        return ns, count

    step(min(len(buf) // LINE, 1 << 16))  # warm-up: TLB and page tables
    ns, steps = _timed(step, duration, 1000)
    return ns / steps


def read_bandwidth(buf, duration: float) -> float:
    """Streaming read rate over ``buf`` in GB/s."""
    _bench.read_run(buf, 1)
    ns, nbytes = _timed(lambda reps: (_bench.read_run(buf, reps)[0], reps * len(buf)), duration, 1)
    return nbytes / ns


def copy_bandwidth(dst, src, duration: float) -> float:
    """Copy rate ``src -> dst`` in GB/s (bytes copied per second, not read + written)."""
    _bench.copy_run(dst, src, 1)  # first touch of dst outside the timing
    ns, nbytes = _timed(lambda reps: (_bench.copy_run(dst, src, reps), reps * len(src)), duration, 1)
    return nbytes / ns


# -- placement of one measurement --------------------------------------
def _buffer(size: int, node: Optional[int], bound: bool):
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            buf.madvise(mmap.MADV_HUGEPAGE)  # fewer TLB misses: measure memory, not page walks
        except OSError:
            pass
    if bound and node is not None:
        from . import bind

        bind.mbind(buf, "bind", [node])  # before the first touch, so pages land there
    return buf


def _filled(size: int, node: Optional[int], bound: bool):
    """A bound buffer with every page touched (written in 1 MiB pieces: no buffer-sized temporary)."""
    buf = _buffer(size, node, bound)
    for _ in range(size // len(_FILL)):
        buf.write(_FILL)
    buf.write(_FILL[:size % len(_FILL)])
    return buf


def _pair(cpus, mem_node: int, size: int, duration: float, threads: int, bound: bool) -> tuple:
    """(latency ns, read GB/s, copy GB/s) with workers pinned to ``cpus`` and memory on ``mem_node``.

    The phases run one after the other and each holds about ``size`` bytes: the chase's
    buffer, then ``size / threads`` per thread to read, then half of that copied into the
    other half's worth (the copy's working set is the same size).
    """
    from . import bind

    out = {}
    errors: List[BaseException] = []
    per_thread = max(MIN_SIZE, (size // threads) // mmap.PAGESIZE * mmap.PAGESIZE)
    half = max(LINE, per_thread // 2 // mmap.PAGESIZE * mmap.PAGESIZE)
    barrier = threading.Barrier(threads)
    reads = [0.0] * threads
    copies = [0.0] * threads

    def worker(k: int) -> None:
        try:
            bind.set_affinity(cpus, 0)  # this worker thread only
            if k == 0:
                buf = _buffer(size, mem_node, bound)
                out["latency"] = chase_latency(buf, duration)
                buf.close()
            barrier.wait()  # the chase's buffer is gone before the streams' are made
            src = _filled(per_thread, mem_node, bound)
            barrier.wait()
            reads[k] = read_bandwidth(src, duration)
            src.close()
            src = _filled(half, mem_node, bound)
            dst = _buffer(half, mem_node, bound)
            barrier.wait()
            copies[k] = copy_bandwidth(dst, src, duration)
            src.close()
            dst.close()
        except BaseException as err:  # reported by the caller
            errors.append(err)
            barrier.abort()

    pool = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
        raise (real or errors)[0]
    return out["latency"], sum(reads), sum(copies)


def default_size(topology, fs=None) -> int:
    """The buffer size ``run`` uses when none is given (see CACHE_FACTOR and the limits beside it)."""
    llc = max((c.size_bytes or 0 for c in topology.caches), default=0)
    size = CACHE_FACTOR * llc if llc else DEFAULT_SIZE
    size = min(max(size, MIN_DEFAULT), MAX_DEFAULT)
    from .fsroot import FsRoot

    text = (fs or FsRoot("/")).read_optional("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            available_kb = ascii_uint(parts[1]) if len(parts) >= 2 else None
            if available_kb is not None:
                size = min(size, max(MIN_DEFAULT, available_kb * 1024 // AVAILABLE_SHARE))
            break
    return size // mmap.PAGESIZE * mmap.PAGESIZE


def normalise(matrix: Sequence[Sequence[Optional[float]]], cpu_nodes: Sequence[int],
              mem_nodes: Sequence[int]) -> List[List[Optional[int]]]:
    """Each row scaled so the local pair (same node) reads 10; rows without a local entry use their minimum."""
    out = []
    for i, row in enumerate(matrix):
        ref = None
        if cpu_nodes[i] in mem_nodes:
            ref = row[list(mem_nodes).index(cpu_nodes[i])]
        if ref is None:
            known = [v for v in row if v is not None]
            ref = min(known) if known else None
        out.append([None if (v is None or not ref) else int(round(10 * v / ref)) for v in row])
    return out


def firmware_distances(topology, cpu_nodes, mem_nodes, fs=None):
    """The firmware's distances for the measured pairs, or ``None`` when unknown."""
    d = topology.distances
    if d is not None:
        try:
            return [[d.between(i, j) for j in mem_nodes] for i in cpu_nodes]
        except ValueError:
            return None
    if len(topology.numa_nodes) == 1 and list(cpu_nodes) == list(mem_nodes) == [topology.numa_nodes[0].id]:
        return [[10]]  # a single node is local to itself (the kernel's own distance file says 10)
    return None


def run(topology=None, size: Optional[int] = None, duration: float = 0.5, threads: int = 1,
        cpu_nodes: Optional[Sequence[int]] = None, mem_nodes: Optional[Sequence[int]] = None,
        progress: Optional[Callable[[int, int, str], None]] = None) -> MembenchResult:
    """Measure every (CPU node, memory node) pair of this host; see :class:`MembenchResult`."""
    from . import bind

    if topology is None:
        from .discover import discover

        topology = discover()
    if duration <= 0 or threads < 1:
        raise InputError("duration must be > 0 and threads >= 1")
    if size is None:
        size = default_size(topology)
    if size < MIN_SIZE * threads:
        raise InputError(f"size {size} bytes is too small (at least {MIN_SIZE * threads} for {threads} thread(s))")
    size = -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
    warnings: List[str] = []
    allowed = bind.get_affinity(0)
    cpu_nodes = [n.id for n in topology.numa_nodes if n.cpus & allowed] if cpu_nodes is None else list(cpu_nodes)
    mem_nodes = [n.id for n in topology.numa_nodes if n.has_memory] if mem_nodes is None else list(mem_nodes)
    bound = bind.mempolicy_supported()
    if not bound:
        warnings.append("memory policy unavailable (no native core, no cffi): only local first-touch memory measured")
    pairs = [(i, j) for i in cpu_nodes for j in mem_nodes if bound or i == j]
    lat = [[None] * len(mem_nodes) for _ in cpu_nodes]
    rd = [[None] * len(mem_nodes) for _ in cpu_nodes]
    cp = [[None] * len(mem_nodes) for _ in cpu_nodes]
    for k, (i, j) in enumerate(pairs):
        if progress is not None:
            progress(k, len(pairs), f"CPU node {i} -> memory node {j}")
        cpus = topology.node(i).cpus & allowed
        if not cpus:
            warnings.append(f"node {i}: none of its CPUs is allowed here; skipped")
            continue
        a, b = cpu_nodes.index(i), mem_nodes.index(j)
        lat[a][b], rd[a][b], cp[a][b] = _pair(cpus, j, size, duration, threads, bound)
    if progress is not None:
        progress(len(pairs), len(pairs), "done")
    return MembenchResult(tuple(cpu_nodes), tuple(mem_nodes), lat, rd, cp,
                          normalise(lat, cpu_nodes, mem_nodes), firmware_distances(topology, cpu_nodes, mem_nodes),
                          size, duration, threads, _impl.is_native("membench"), bound, tuple(warnings))
