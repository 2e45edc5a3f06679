"""cgroup v2 (unified): every controller's files in the one cgroup directory.

Working set follows cAdvisor: ``memory.current - inactive_file`` (from
``memory.stat``), floored at 0.  The root cgroup has no ``memory.current``;
its usage is emulated as ``anon + file`` of the root ``memory.stat``
(see :func:`pynuma.cgroups.walk.node_root_stats`).
"""
from __future__ import annotations

from ._spec import (ANON, CPU_NS, FILE, HUGETLB0, INACTIVE_FILE, INT, KEYED, LIMIT, PIDS_CURRENT,
                    PIDS_MAX, USAGE, FileSpec)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Tuple

VERSION = 2
MEMORY_CURRENT = "memory.current"
MEMORY_MAX = "memory.max"
MEMORY_STAT = "memory.stat"
CPU_STAT = "cpu.stat"
PIDS_CURRENT_FILE = "pids.current"
PIDS_MAX_FILE = "pids.max"
HUGETLB_CURRENT = "hugetlb.{size}.current"

EXTRA_CONTROLLERS: Tuple[str, ...] = ()
STAT_KEYS = (("anon", ANON, 1), ("file", FILE, 1), ("inactive_file", INACTIVE_FILE, 1))
CPU_KEYS = (("usage_usec", CPU_NS, 1000),)  # microseconds in cpu.stat; we report nanoseconds


def controllers() -> Tuple[str, ...]:
    """One hierarchy holds everything."""
    return ("memory",)


def file_specs(huge_sizes: List[str]) -> List[FileSpec]:
    """What to read in each cgroup directory."""
    specs = [
        FileSpec(0, MEMORY_CURRENT, INT, USAGE),
        FileSpec(0, MEMORY_MAX, INT, LIMIT),
        FileSpec(0, MEMORY_STAT, KEYED, keys=STAT_KEYS),
        FileSpec(0, CPU_STAT, KEYED, keys=CPU_KEYS),
        FileSpec(0, PIDS_CURRENT_FILE, INT, PIDS_CURRENT),
        FileSpec(0, PIDS_MAX_FILE, INT, PIDS_MAX),
    ]
    specs += [FileSpec(0, HUGETLB_CURRENT.format(size=s), INT, HUGETLB0 + i) for i, s in enumerate(huge_sizes)]
    return specs
