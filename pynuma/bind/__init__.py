"""CPU affinity and NUMA memory policy of threads, processes and buffers.

Syscalls without libnuma (the native core; on the pure-Python path, cffi
in ABI mode for the memory-policy calls).  Every id is checked before the syscall, errors name the bad id,
and a fake root refuses (binding acts on this host only)::

    from pynuma import bind
    bind.set_affinity("0-3")                   # the calling thread
    bind.set_affinity("0-3", pid, all_threads=True)
    bind.set_mempolicy("bind", "0")            # later allocations of this thread
    bind.get_mempolicy()                       # MemPolicy(mode='bind', nodes=CPUSet('0'), flags=())
    buf = mmap.mmap(-1, 1 << 20); bind.mbind(buf, "interleave", "0-1"); bind.page_nodes(buf)
    bind.migrate_pages(pid, "0", "1")
"""
from __future__ import annotations

from ._ids import (Ids, check_cpus, check_nodes, host, ids, memory_nodes, node_bits, node_cpus, numa_nodes,
                   online_cpus, possible_cpus)
from .affinity import get_affinity, set_affinity, thread_affinities, thread_ids
from .mempolicy import (MODE_SINCE, MODES, MPOL_F_ADDR, MPOL_F_MEMS_ALLOWED, MPOL_F_NODE, MPOL_F_NUMA_BALANCING,
                        MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL, MPOL_MF_STRICT,
                        MemPolicy, check_policy, decode_mode, get_mempolicy, mbind, mempolicy_supported,
                        mems_allowed, migrate_pages, move_pages, page_nodes, set_mempolicy, supported_modes)
from .procview import parse_numa_maps_policy, process_policy

__all__ = [
    "Ids", "MemPolicy", "MODES", "MODE_SINCE", "check_cpus", "check_nodes", "check_policy", "decode_mode",
    "get_affinity", "get_mempolicy", "host", "ids", "mbind", "memory_nodes", "mempolicy_supported",
    "mems_allowed", "migrate_pages", "move_pages", "node_bits", "node_cpus", "numa_nodes", "online_cpus",
    "page_nodes", "parse_numa_maps_policy", "possible_cpus", "process_policy", "set_affinity",
    "set_mempolicy", "supported_modes", "thread_affinities", "thread_ids",
    "MPOL_F_ADDR", "MPOL_F_MEMS_ALLOWED", "MPOL_F_NODE", "MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
    "MPOL_F_STATIC_NODES", "MPOL_MF_MOVE", "MPOL_MF_MOVE_ALL", "MPOL_MF_STRICT",
]
