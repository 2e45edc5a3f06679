"""Eviction signal names and what each one means: the resource it reclaims, the node condition it raises.

Mirrors the kubelet's ``signalToResource`` / ``signalToNodeCondition`` tables
(``pkg/kubelet/eviction/helpers.go``).  ``swap.available`` exists upstream
only as a name without mappings, so it is not a valid signal here either.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, List, Optional


MEMORY_AVAILABLE = "memory.available"
ALLOCATABLE_MEMORY_AVAILABLE = "allocatableMemory.available"
NODEFS_AVAILABLE = "nodefs.available"
NODEFS_INODES_FREE = "nodefs.inodesFree"
IMAGEFS_AVAILABLE = "imagefs.available"
IMAGEFS_INODES_FREE = "imagefs.inodesFree"
CONTAINERFS_AVAILABLE = "containerfs.available"
CONTAINERFS_INODES_FREE = "containerfs.inodesFree"
PID_AVAILABLE = "pid.available"

MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE = "MemoryPressure", "DiskPressure", "PIDPressure"

# Resources the eviction manager reclaims ("inodes" and "pids" are internal names).
MEMORY, EPHEMERAL_STORAGE, INODES, PIDS = "memory", "ephemeral-storage", "inodes", "pids"

OP_LESS_THAN = "LessThan"

SIGNAL_TO_RESOURCE: Dict[str, str] = {
    MEMORY_AVAILABLE: MEMORY,
    ALLOCATABLE_MEMORY_AVAILABLE: MEMORY,
    IMAGEFS_AVAILABLE: EPHEMERAL_STORAGE,
    IMAGEFS_INODES_FREE: INODES,
    CONTAINERFS_AVAILABLE: EPHEMERAL_STORAGE,
    CONTAINERFS_INODES_FREE: INODES,
    NODEFS_AVAILABLE: EPHEMERAL_STORAGE,
    NODEFS_INODES_FREE: INODES,
    PID_AVAILABLE: PIDS,
}

SIGNAL_TO_CONDITION: Dict[str, str] = {
    MEMORY_AVAILABLE: MEMORY_PRESSURE,
    ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    IMAGEFS_AVAILABLE: DISK_PRESSURE,
    CONTAINERFS_AVAILABLE: DISK_PRESSURE,
    NODEFS_AVAILABLE: DISK_PRESSURE,
    IMAGEFS_INODES_FREE: DISK_PRESSURE,
    NODEFS_INODES_FREE: DISK_PRESSURE,
    CONTAINERFS_INODES_FREE: DISK_PRESSURE,
    PID_AVAILABLE: PID_PRESSURE,
}

SIGNALS = tuple(SIGNAL_TO_RESOURCE)
MEMORY_SIGNALS = (MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE)


def valid_signal(signal: str) -> bool:
    """True for the signals the kubelet accepts in eviction flags."""
    return signal in SIGNAL_TO_RESOURCE


def resource_for(signal: str) -> Optional[str]:
    """The resource a signal reclaims (``memory``, ``ephemeral-storage``, ``inodes``, ``pids``)."""
    return SIGNAL_TO_RESOURCE.get(signal)


def condition_for(signal: str) -> Optional[str]:
    """The node condition a met threshold of this signal raises."""
    return SIGNAL_TO_CONDITION.get(signal)


def conditions_for_signals(signals: Iterable[str]) -> List[str]:
    """Node conditions of the signals, deduplicated, in first-seen order."""
    out: List[str] = []
    for s in signals:
        c = SIGNAL_TO_CONDITION.get(s)
        if c is not None and c not in out:
            out.append(c)
    return out
