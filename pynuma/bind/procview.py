"""Another process's placement as ``/proc`` shows it (no syscall reads another task's policy)."""
from __future__ import annotations

from ..cpuset import CPUSet
from ..fsroot import FsRoot
from ._ids import host
from .mempolicy import MemPolicy

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Optional

_POLICY = (r"(default|prefer \(many\)|weighted interleave|prefer|bind|interleave|local)"
           r"(?:=([a-z|,]+))?(?::([0-9,\-]+))?")
_NUMA_MAPS_MODES = {"prefer": "preferred", "prefer (many)": "preferred-many",
                    "weighted interleave": "weighted-interleave"}


_compiled: list = []


def _pattern():
    """The policy pattern, compiled on first use: ``pynuma show`` of its own process never loads ``re``."""
    if not _compiled:
        import re

        _compiled.append(re.compile(_POLICY))
    return _compiled[0]


def parse_numa_maps_policy(line: str) -> MemPolicy:
    """The policy of one ``/proc/PID/numa_maps`` line (``"7f.. bind=static:0-1 anon=3 ..."``)."""
    _, _, rest = line.strip().partition(" ")
    m = _pattern().match(rest)
    if m is None:
        raise ValueError(f"no memory policy in numa_maps line {line.strip()[:60]!r}")
    return _policy(m)


def parse_policy_word(word: str) -> MemPolicy:
    """The policy a numa_maps line's second word states (``"bind=static:0-1"``, ``"prefer (many):1"``... the
    native reader splits at spaces, so ``"prefer"`` followed by ``"(many):1"`` is not one word there:
    :func:`pynuma.procs.parse` joins them first)."""
    m = _pattern().fullmatch(word.strip())
    if m is None:
        raise ValueError(f"not a numa_maps memory policy: {word[:60]!r}")
    return _policy(m)


def _policy(m) -> MemPolicy:
    words = (m.group(2) or "").replace("|", ",").split(",")
    flags = tuple({"balancing": "numa-balancing"}.get(f, f) for f in words if f)
    return MemPolicy(_NUMA_MAPS_MODES.get(m.group(1), m.group(1)), CPUSet.parse(m.group(3) or ""), flags)


def process_policy(pid: int, fs: Optional[FsRoot] = None) -> Optional[MemPolicy]:
    """The policy most of ``pid``'s mappings follow (its task policy, unless mbind changed many); None if unreadable."""
    fs = fs or host(None, "reading a process's memory policy")
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
