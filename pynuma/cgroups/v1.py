"""cgroup v1 (also hybrid mode): one hierarchy per controller.

The memory hierarchy is the primary one (pods are listed there); cpu usage
comes from ``cpuacct``, pids from ``pids``, hugetlb usage from ``hugetlb``, each
at the same path below its own mountpoint.  Working set follows cAdvisor:
``memory.usage_in_bytes - total_inactive_file`` (``total_*`` keys are
hierarchical, i.e. include child cgroups, as ``usage_in_bytes`` does).
"""
from __future__ import annotations

from ._spec import (ANON, CPU_NS, FILE, HUGETLB0, INACTIVE_FILE, INT, KEYED, LIMIT, PIDS_CURRENT,
                    PIDS_MAX, USAGE, FileSpec)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Tuple

VERSION = 1
MEMORY_USAGE = "memory.usage_in_bytes"
MEMORY_LIMIT = "memory.limit_in_bytes"
MEMORY_STAT = "memory.stat"
CPUACCT_USAGE = "cpuacct.usage"
PIDS_CURRENT_FILE = "pids.current"
PIDS_MAX_FILE = "pids.max"
HUGETLB_USAGE = "hugetlb.{size}.usage_in_bytes"

# Hierarchies after the primary (memory), in base-index order.
EXTRA_CONTROLLERS = ("cpuacct", "pids", "hugetlb")
STAT_KEYS = (("total_rss", ANON, 1), ("total_cache", FILE, 1), ("total_inactive_file", INACTIVE_FILE, 1))
# The root cgroup's memory.stat of a kernel without hierarchy support has no total_* keys.
ROOT_STAT_FALLBACK = (("rss", ANON, 1), ("cache", FILE, 1), ("inactive_file", INACTIVE_FILE, 1))


def controllers() -> Tuple[str, ...]:
    """Controllers whose hierarchies the walker needs, primary first."""
    return ("memory",) + EXTRA_CONTROLLERS


def file_specs(huge_sizes: List[str]) -> List[FileSpec]:
    """What to read in each cgroup (base 0 memory, 1 cpuacct, 2 pids, 3 hugetlb)."""
    specs = [
        FileSpec(0, MEMORY_USAGE, INT, USAGE),
        FileSpec(0, MEMORY_LIMIT, INT, LIMIT),
        FileSpec(0, MEMORY_STAT, KEYED, keys=STAT_KEYS),
        FileSpec(1, CPUACCT_USAGE, INT, CPU_NS),
        FileSpec(2, PIDS_CURRENT_FILE, INT, PIDS_CURRENT),
        FileSpec(2, PIDS_MAX_FILE, INT, PIDS_MAX),
    ]
    specs += [FileSpec(3, HUGETLB_USAGE.format(size=s), INT, HUGETLB0 + i) for i, s in enumerate(huge_sizes)]
    return specs
