"""The machine's memory capacity: ``MemTotal`` of ``/proc/meminfo`` under a root."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Optional

    from .fsroot import FsRoot

MEMINFO = "/proc/meminfo"


def mem_total(fs: FsRoot) -> Optional[int]:
    """``MemTotal`` in bytes, or ``None`` when the file or the line is missing or unreadable."""
    text = fs.read_optional(MEMINFO) or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * (1024 if parts[-1] == "kB" else 1)
    return None
