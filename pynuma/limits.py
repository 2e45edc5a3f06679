"""What Linux can have: bounds on ids read from input, so sizes never come from the input unchecked.

A CPU or node id beyond these cannot exist on any Linux machine, so a
larger one in a dump, a file or a flag is refused (or, in discovery,
skipped with a warning) before anything is sized by it.  Memory and time
then grow with the number of CPUs actually named, never with an id.
"""

#: CPU ids are below this.  ``nr_cpu_ids`` never exceeds ``CONFIG_NR_CPUS``, whose largest
#: allowed value on any architecture is 8192 (arch/x86/Kconfig ``NR_CPUS_RANGE_END`` with
#: CPUMASK_OFFSTACK/MAXSMP; powerpc's ``range 2 8192``; arm64, sparc64 and ia64 stop at 4096).
MAX_CPUS = 8192

#: NUMA node ids are below this: ``MAX_NUMNODES`` is ``1 << CONFIG_NODES_SHIFT`` and
#: NODES_SHIFT is at most 10 on every architecture (x86 and arm64 ``range 1 10``).
MAX_NUMA_NODES = 1 << 10

#: Process ids are at most this: PID_MAX_LIMIT in include/linux/threads.h (4M on 64-bit
#: kernels; /proc/sys/kernel/pid_max cannot be set higher).
PID_MAX_LIMIT = 1 << 22

#: Hugepage sizes in kB are at most this: the largest page any architecture has is 16 GiB
#: (powerpc64's 16G pages; arm64 with 64K granule and s390 stop lower), so a larger
#: ``hugepages-<size>kB`` directory is not a pool.
MAX_HUGEPAGE_KB = 16 << 20

#: The largest Kubernetes int32 field (maxPods, evictionMaxPodGracePeriod).
INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1

__all__ = ["MAX_CPUS", "MAX_NUMA_NODES", "PID_MAX_LIMIT", "MAX_HUGEPAGE_KB", "INT32_MAX"]
