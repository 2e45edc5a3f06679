"""CPU affinity of a thread, a process, or every thread of a process.

``sched_setaffinity`` on a pid changes only that thread (the main thread
for a pid); ``all_threads`` walks ``/proc/PID/task`` and makes a second
pass for threads created meanwhile, like ``taskset -a``.
"""
from __future__ import annotations

import errno

from .. import _impl
from ..cpuset import CPUSet
from ..errors import InputError, NoSuchProcess, from_oserror
from ..fsroot import FsRoot
from ..parse import ascii_uint
from ._ids import Ids, check_cpus, host, ids, online_cpus, possible_cpus

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, List, Optional

_sys = _impl.select("sys")


def thread_ids(pid: int, fs: Optional[FsRoot] = None) -> List[int]:
    """Kernel thread ids of process ``pid`` (``/proc/PID/task``)."""
    fs = fs or host(None, "listing threads")
    tids = [tid for tid in (ascii_uint(t, 7) for t in fs.listdir(f"/proc/{int(pid)}/task")) if tid is not None]
    if not tids:
        raise NoSuchProcess(f"process {pid}: no such process")
    return tids


def get_affinity(pid: int = 0, fs: Optional[FsRoot] = None) -> CPUSet:
    """CPUs thread/process ``pid`` may run on (0 = calling thread)."""
    fs = host(fs, "reading CPU affinity")
    try:
        return CPUSet.from_bits(_sys.sched_getaffinity(int(pid), possible_cpus(fs).max() + 1))
    except OSError as err:
        raise from_oserror(err, f"sched_getaffinity(pid {pid})") from err


def thread_affinities(pid: int, fs: Optional[FsRoot] = None) -> Dict[int, CPUSet]:
    """``{tid: CPUs}`` for every thread of process ``pid``."""
    fs = host(fs, "reading CPU affinity")
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
    fs = host(fs, "setting CPU affinity")
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


