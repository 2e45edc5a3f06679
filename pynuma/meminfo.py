"""The machine's memory capacity: ``MemTotal`` of ``/proc/meminfo`` under a root."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Optional

    from .fsroot import FsRoot

from .parse import ascii_uint

MEMINFO = "/proc/meminfo"


def mem_total(fs: FsRoot) -> Optional[int]:
    """``MemTotal`` in bytes, or ``None`` when the file or the line is missing or unreadable."""
    text = fs.read_optional(MEMINFO) or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            value = ascii_uint(parts[1]) if len(parts) >= 2 else None
            return None if value is None else value * (1024 if parts[-1] == "kB" else 1)
    return None
