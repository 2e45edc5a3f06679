"""The kubelet's scalar cgroup conversions: milli-CPU, shares, CFS quota, v2 weight, hugetlb limits.

>>> milli_cpu_to_shares(100), milli_cpu_to_quota(200, 100000), shares_to_weight(1024)
(102, 20000, 39)

Rules from ``pkg/kubelet/cm/helpers_linux.go`` and ``pkg/kubelet/cm/util``
(the kernel's limits: shares 2..262144, weight 1..10000, quota >= 1 ms).
Every function is exact integer arithmetic, truncating where Go's integer
division truncates.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional

from ...errors import InputError
from ...hugepages.resources import PREFIX as HUGEPAGES_PREFIX
from ...quantity import Quantity

MIN_SHARES = 2
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
MILLI_CPU_TO_CPU = 1000
QUOTA_PERIOD_US = 100000          # the CFS default period, 100 ms
MIN_QUOTA_PERIOD_US = 1000        # the kernel refuses a quota below 1 ms
MIN_WEIGHT = 1
MAX_WEIGHT = 10000


def _div(a: int, b: int) -> int:
    # Go's integer division truncates toward zero; Python's // floors.
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def milli_cpu_to_shares(milli_cpu: int) -> int:
    """cpu.shares for a CPU request in millicores: 2 for 0, else m*1024/1000 clamped to [2, 262144]."""
    if milli_cpu == 0:
        return MIN_SHARES
    shares = _div(milli_cpu * SHARES_PER_CPU, MILLI_CPU_TO_CPU)
    return min(max(shares, MIN_SHARES), MAX_SHARES)


def milli_cpu_to_quota(milli_cpu: int, period_us: int) -> int:
    """CFS quota (µs) for a CPU limit over ``period_us``: 0 for no limit, never below 1000 µs."""
    if milli_cpu == 0:
        return 0
    return max(_div(milli_cpu * period_us, MILLI_CPU_TO_CPU), MIN_QUOTA_PERIOD_US)


def shares_to_milli_cpu(shares: int) -> int:
    """Millicores a cpu.shares value stands for: 0 below the minimum, else rounded up."""
    if shares < MIN_SHARES:
        return 0
    return -(-(shares * MILLI_CPU_TO_CPU) // SHARES_PER_CPU)


def quota_to_milli_cpu(quota_us: int, period_us: int) -> int:
    """Millicores a CFS quota stands for; 0 for an unlimited (-1) quota."""
    if quota_us == -1:
        return 0
    return _div(quota_us * MILLI_CPU_TO_CPU, period_us)


def shares_to_weight(shares: int) -> int:
    """cgroup v2 cpu.weight for v1 shares: [2, 262144] mapped linearly onto [1, 10000].

    Raises ``InputError`` for shares outside the kernel's range.
    """
    if not MIN_SHARES <= shares <= MAX_SHARES:
        raise InputError(f"cpu shares {shares} outside [{MIN_SHARES}, {MAX_SHARES}]")
    return MIN_WEIGHT + ((shares - MIN_SHARES) * (MAX_WEIGHT - MIN_WEIGHT)) // (MAX_SHARES - MIN_SHARES)


def weight_to_shares(weight: int) -> int:
    """v1 shares a v2 cpu.weight reads back as (lossy: shares 51 -> weight 2 -> shares 28)."""
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        raise InputError(f"cpu weight {weight} outside [{MIN_WEIGHT}, {MAX_WEIGHT}]")
    return MIN_SHARES + ((weight - MIN_WEIGHT) * (MAX_SHARES - MIN_SHARES)) // (MAX_WEIGHT - MIN_WEIGHT)


def shares_equal_after_v2_round_trip(allocated: int, readback: int) -> bool:
    """Whether shares read back on a v2 host match what was allocated (through the weight)."""
    return readback == weight_to_shares(shares_to_weight(allocated))


def hugepage_limits(resources: Mapping[str, Quantity]) -> Dict[int, int]:
    """``{page size in bytes: limit in bytes}`` from the ``hugepages-<size>`` entries of a resource list.

    Names that spell the same size (``hugepages-2Mi``, ``hugepages-2097152``)
    add up; other names are ignored.  A size that does not parse counts as
    page size 0, as the kubelet's helper (which drops the parse error) does;
    no cgroup file exists for it, so the writers leave it out.
    """
    out: Dict[int, int] = {}
    for name, q in resources.items():
        if not name.startswith(HUGEPAGES_PREFIX):
            continue
        try:
            size = Quantity.parse(name[len(HUGEPAGES_PREFIX):]).value()
        except InputError:
            size = 0
        out[size] = out.get(size, 0) + Quantity.parse(q).value()
    return out


def cpu_request_from_config(cpu_shares: Optional[int]) -> Optional[int]:
    """Millicores a pod cgroup's shares stand for, or None (no config, 0 shares, or 0 millicores)."""
    if not cpu_shares or cpu_shares <= 0:
        return None
    return shares_to_milli_cpu(cpu_shares) or None


def cpu_limit_from_config(cpu_quota: Optional[int], cpu_period: Optional[int]) -> Optional[int]:
    """Millicores a pod cgroup's quota stands for, or None (no period, or not positive)."""
    if not cpu_period or cpu_period <= 0 or cpu_quota is None:
        return None
    milli = quota_to_milli_cpu(cpu_quota, cpu_period)
    return milli if milli > 0 else None


def memory_limit_from_config(memory: Optional[int]) -> Optional[int]:
    """A pod cgroup's memory limit in bytes, or None when unset or not positive."""
    if memory is None or memory <= 0:
        return None
    return memory


def huge_size_name(size_bytes: int) -> str:
    """The kernel's hugetlb file-name form of a page size in bytes: 2097152 -> ``2MB``."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale}{unit}"
    return f"{size_bytes}B"
