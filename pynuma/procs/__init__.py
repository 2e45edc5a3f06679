"""Processes on NUMA: where each may run, where its threads ran, where its memory is.

    import pynuma
    for p in pynuma.processes(name="postgres", sort="remote"):
        print(p.pid, p.cpu_nodes, dict(p.memory_by_node), f"{p.remote_share:.0%}")

On the live host, psutil enumerates the processes and names their command,
user and command line; ``numa_maps`` and each thread's ``stat``/``status``
are read by the per-process reader (native, with a pure twin).  On a dump
(``root`` other than ``/``) everything comes from the dump's ``/proc``:
users are then uids (a dump has no user database).  Processes that exit or
deny access while being read are skipped and counted, never an error.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Union

from .. import _impl
from ..errors import InputError
from ..fsroot import FsRoot
from ..model import Topology
from .gather import DENIED, STATUS_KEYS, Gatherer
from .model import ProcessPlacement, Processes
from .nodes import NodeCpus
from .parse import full_name, parse_cmdline, parse_stat, parse_uid, status_fields
from .select import Identity, Selector

__all__ = ["Identity", "ProcessPlacement", "Processes", "SORTS", "find_processes", "processes"]

_reader = _impl.select("procs")
FLAGS = _reader.STAT | _reader.STATUS | _reader.MAPS | _reader.THREADS

#: ``sort`` keys: pid ascending; the others largest first
SORTS: Dict[str, Callable[[ProcessPlacement], tuple]] = {
    "pid": lambda p: (p.pid,),
    "remote": lambda p: (-p.remote_share, -p.remote_bytes, p.pid),
    "memory": lambda p: (-p.memory_bytes, p.pid),
    "cpu": lambda p: (-(p.cpu_seconds or 0.0), p.pid),
}


def processes(pids: Optional[Iterable[int]] = None, name: Optional[str] = None, user: Optional[str] = None,
              root: Union[str, FsRoot] = "/", topology: Optional[Topology] = None, kernel_threads: bool = False,
              sort: str = "pid") -> Processes:
    """The placement of processes ``pids`` (default: every process) that match ``name`` and ``user``.

    ``name`` is a regular expression searched in the command name (like
    ``pgrep``), ``user`` a user name or uid.  Kernel threads are left out
    (and counted) unless ``kernel_threads`` or asked for by pid.  ``sort``
    is one of :data:`SORTS`.  ``topology`` defaults to ``discover(root)``.
    """
    if sort not in SORTS:
        raise InputError(f"unknown sort {sort!r} (one of: {', '.join(SORTS)})")
    requested = None if pids is None else _pids(pids)
    selector = Selector(name, user)
    fs = root if isinstance(root, FsRoot) else FsRoot(root)
    try:
        if topology is None:
            from ..discover import discover

            topology = discover(fs)
        result = _gather(fs, topology, requested, selector, kernel_threads)
    finally:
        if fs is not root:
            fs.close()
    placements = tuple(sorted(result.placements, key=SORTS[sort]))
    return result.replace(placements=placements)


def find_processes(name: Optional[str] = None, user: Optional[str] = None,
                   root: Union[str, FsRoot] = "/") -> List[Identity]:
    """The user processes whose command name matches ``name`` (a regular expression, as ``pgrep``) and whose
    user is ``user``, pid ascending; kernel threads and the calling process are never among them.

    Cheaper than :func:`processes`: no memory map is read (``pynuma bind --name`` acts on these).
    """
    import os

    from .parse import PF_KTHREAD

    selector = Selector(name, user)
    fs = root if isinstance(root, FsRoot) else FsRoot(root)
    try:
        if not fs.is_host:  # a dump: the listing's own selection (it leaves kernel threads out)
            return [Identity(p.pid, p.name, p.user, p.uid, p.cmdline) for p in processes(name=name, user=user, root=fs)]
        from .host import identities

        found = identities(None, selector)[0]
        order = sorted(pid for pid in found if pid != os.getpid())
        out = []
        for pid, raw in zip(order, _reader.read_processes(fs.root_fd, order, _reader.STAT)):
            if isinstance(raw, int) or isinstance(raw[0], int):
                continue  # gone meanwhile
            try:
                if parse_stat(raw[0]).flags & PF_KTHREAD:
                    continue
            except ValueError:
                continue
            out.append(found[pid])
        return out
    finally:
        if fs is not root:
            fs.close()


def _pids(pids: Iterable[int]) -> List[int]:
    out = set()
    for pid in pids:
        if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
            raise InputError(f"process id {pid!r}: process ids are positive integers")
        out.add(pid)
    return sorted(out)


def _read_meanwhile(fs: FsRoot, order: List[int], work: Callable[[], object]) -> list:
    """The reader's answers for ``order``, read on a helper thread while ``work()`` runs here; its result is
    appended last."""
    import threading

    box: dict = {}

    def read() -> None:
        try:
            box["raws"] = _reader.read_processes(fs.root_fd, order, FLAGS)
        except BaseException as err:  # handed to the caller below
            box["error"] = err

    worker = threading.Thread(target=read, name="pynuma-procs-reader", daemon=True)
    worker.start()
    try:
        result = work()
    finally:
        worker.join()
    if "error" in box:
        raise box["error"]
    return box["raws"] + [result]


def _gather(fs: FsRoot, topology: Topology, requested: Optional[List[int]], selector: Selector,
            kernel_threads: bool) -> Processes:
    warnings: List[str] = []
    missing: List[int] = []
    refused: List[int] = []
    idents: Optional[Dict[int, Identity]] = None
    if fs.is_host and requested is None and selector.selects_all() and _impl.is_native("procs"):
        # every process: the native reader (GIL released) and psutil (mostly Python) overlap on two threads
        from .host import all_pids, identities

        order = all_pids()
        raws = _read_meanwhile(fs, order, lambda: identities(order, selector, requested=False))
        idents, vanished, missing = raws.pop()
    elif fs.is_host:
        from .host import identities

        idents, vanished, missing = identities(requested, selector, requested=requested is not None)
        order = sorted(idents)
        raws = _reader.read_processes(fs.root_fd, order, FLAGS)
    else:
        vanished = 0
        order = requested if requested is not None else \
            sorted(int(n) for n in fs.listdir("/proc") if n.isdigit() and n.isascii())
        raws = _reader.read_processes(fs.root_fd, order, FLAGS)
    cmdlines = None if idents is not None else fs.read_many(f"/proc/{pid}/cmdline" for pid in order)
    gatherer = Gatherer(fs, NodeCpus(topology, fs), warnings)
    found: List[ProcessPlacement] = []
    denied = kthreads = 0
    for i, pid in enumerate(order):
        raw = raws[i]
        if idents is not None and pid not in idents:
            continue  # psutil found it gone (counted) or not selected
        if isinstance(raw, int) or isinstance(raw[0], int):
            if requested is not None:
                missing.append(pid)
            else:
                vanished += 1
            continue
        try:
            st = parse_stat(raw[0])
        except ValueError as err:
            warnings.append(f"{fs.host_path(f'/proc/{pid}/stat')}: {err}; process skipped")
            continue
        fields = status_fields(raw[1], STATUS_KEYS) if isinstance(raw[1], str) else {}
        if idents is None:
            cmd = parse_cmdline(cmdlines[i] or "")
            uid = parse_uid(fields.get("Uid"))
            ident = Identity(pid, full_name(st.comm, cmd), None if uid is None else str(uid), uid, tuple(cmd))
            if not selector.accepts(ident):
                continue
        else:
            ident = idents[pid]
        if st.kernel_thread and not kernel_threads and requested is None:
            kthreads += 1
            continue
        if raw[2] in DENIED:
            denied += 1
            if requested is not None:
                refused.append(pid)
            continue
        placement = gatherer.placement(ident, st, fields, raw)
        if placement is None:
            if requested is not None:
                missing.append(pid)
            else:
                vanished += 1
            continue
        found.append(placement)
    return Processes(tuple(found), vanished, denied, kthreads, tuple(sorted(missing)), tuple(refused),
                     tuple(warnings))
