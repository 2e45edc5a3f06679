"""Meaning of the raw texts and counts the per-process reader returns (no I/O).

The native reader (native/pn_procs.c) and its pure twin hand back
``/proc/PID/stat`` and ``status`` texts and ``numa_maps`` pages counted per
(page size, huge marker, node); the rules that turn them into names, CPU
times and bytes live here, once, for both.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

from ..cpuset import CPUSet
from ..parse import ascii_uint

PF_KTHREAD = 0x00200000  # include/linux/sched.h: the task is a kernel thread


class Stat(NamedTuple):
    """The fields of ``/proc/PID/stat`` that placement needs."""

    comm: str
    state: str
    flags: int
    utime: int       # clock ticks
    stime: int       # clock ticks
    threads: int
    processor: int   # CPU the (main) thread last ran on; -1 when unknown

    @property
    def kernel_thread(self) -> bool:
        return bool(self.flags & PF_KTHREAD)


def parse_stat(text: str) -> Stat:
    """``/proc/PID/stat``: the command sits between the first ``(`` and the last ``)`` (it may hold either)."""
    start, end = text.find("("), text.rfind(")")
    if start < 0 or end < start:
        raise ValueError("no (command) in stat text")
    words = text[end + 1:].split()
    if len(words) < 18:
        raise ValueError(f"stat text has {len(words) + 2} fields, expected at least 20")
    try:
        processor = int(words[36]) if len(words) > 36 else -1
        return Stat(text[start + 1:end], words[0], int(words[6]), int(words[11]), int(words[12]), int(words[17]),
                    processor)
    except ValueError:
        raise ValueError("stat text has a field that is not a number") from None


def status_fields(text: str, keys: Iterable[str]) -> Dict[str, str]:
    """Values of the first ``Key:\tvalue`` line of a status text for each of ``keys`` (stripped; missing keys
    absent)."""
    out: Dict[str, str] = {}
    for key in keys:
        tag = key + ":"
        if text.startswith(tag):
            at = 0
        else:
            at = text.find("\n" + tag)
            if at < 0:
                continue
            at += 1
        start = at + len(tag)
        end = text.find("\n", start)
        out[key] = (text[start:] if end < 0 else text[start:end]).strip()
    return out


def parse_uid(value: Optional[str]) -> Optional[int]:
    """The real uid of a status ``Uid:`` value (``"1000\\t1000\\t1000\\t1000"``); None when absent or bad."""
    if not value:
        return None
    return ascii_uint(value.split()[0], 10)  # uid_t: 32 bits


def parse_kb(value: Optional[str]) -> Optional[int]:
    """Bytes of a status ``VmRSS:`` style value (``"1234 kB"``); None when absent or bad."""
    if not value:
        return None
    parts = value.split()
    kb = ascii_uint(parts[0]) if len(parts) == 2 and parts[1] == "kB" else None
    return None if kb is None else kb * 1024


def page_bytes(page_kb: int, huge: int, base_page: int, default_huge: Optional[int]) -> Optional[int]:
    """Bytes per page of a numa_maps count: the ``kernelpagesize_kB`` it stated, else (kernels before it was
    printed) the default hugepage size for ``huge`` mappings and the base page size for the rest; None when a
    huge mapping's size is unknown."""
    if page_kb:
        return page_kb * 1024
    if huge:
        return default_huge
    return base_page


def bytes_by_node(counts: Iterable[Tuple[int, int, int, int]], base_page: int,
                  default_huge: Optional[int]) -> Tuple[Dict[int, int], int]:
    """``({node: bytes}, pages of unknown size)`` of the reader's ``(page_kb, huge, node, pages)`` counts."""
    out: Dict[int, int] = {}
    unknown = 0
    for page_kb, huge, node, pages in counts:
        size = page_bytes(page_kb, huge, base_page, default_huge)
        if size is None:
            unknown += pages
            continue
        out[node] = out.get(node, 0) + pages * size
    return out, unknown


def full_name(comm: str, cmdline: List[str]) -> str:
    """The command name, completed from the command line where the kernel cut it at 15 characters
    (psutil's rule for ``Process.name()``: the basename of ``argv[0]`` when it extends ``comm``)."""
    if len(comm) >= 15 and cmdline:
        base = cmdline[0].rpartition("/")[2]
        if base.startswith(comm):
            return base
    return comm


def parse_cmdline(text: str) -> List[str]:
    """``/proc/PID/cmdline``: NUL-separated arguments (a process that rewrote it may use spaces)."""
    if not text:
        return []
    if text.endswith("\0"):
        text = text[:-1]
    args = text.split("\0")
    if len(args) == 1 and " " in args[0]:  # setproctitle-style: one string with spaces
        args = args[0].split(" ")
    return args


def cpuset_or_none(text: Optional[str]) -> Optional[CPUSet]:
    """A cpulist value, or None when absent or bad."""
    if text is None:
        return None
    try:
        return CPUSet.parse(text)
    except ValueError:
        return None
