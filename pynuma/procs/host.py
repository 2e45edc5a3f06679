"""Who the live host's processes are, through psutil.

psutil enumerates processes and names their command, user and command
line, with its ``NoSuchProcess`` (the process is gone) and ``AccessDenied``
(this caller may not see that field) semantics; a name cut by the kernel
at 15 characters is completed from the command line.  Only the live host:
psutil cannot be pointed at a dump (see :mod:`pynuma.procs.dump`).
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

from .select import Identity, Selector


def all_pids() -> List[int]:
    """Every process id, ascending."""
    import psutil

    return sorted(psutil.pids())


def identities(pids: Optional[Iterable[int]], selector: Selector,
               requested: bool = True) -> Tuple[Dict[int, Identity], int, List[int]]:
    """``({pid: Identity}, vanished, missing)`` of ``pids`` (every process when None) that ``selector`` accepts.

    A process that exits while being looked at counts as vanished; with
    ``requested`` a pid that does not exist is missing instead.
    """
    import psutil

    requested = requested and pids is not None
    found: Dict[int, Identity] = {}
    vanished = 0
    missing: List[int] = []
    for pid in (list(pids) if pids is not None else psutil.pids()):
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                name = proc.name()
                try:
                    cmdline = tuple(proc.cmdline())
                except (psutil.AccessDenied, psutil.ZombieProcess):
                    cmdline = ()
                try:
                    user: Optional[str] = proc.username()
                except psutil.AccessDenied:
                    user = None
                try:
                    uid: Optional[int] = proc.uids().real
                except psutil.AccessDenied:
                    uid = None
        except psutil.NoSuchProcess:
            if requested:
                missing.append(pid)
            else:
                vanished += 1
            continue
        except psutil.AccessDenied:  # not even its name: nothing to select it by
            if requested:
                found[pid] = Identity(pid, "?", None, None, ())
            continue
        ident = Identity(pid, name, user, uid, cmdline)
        if selector.accepts(ident):
            found[pid] = ident
    return found, vanished, missing
