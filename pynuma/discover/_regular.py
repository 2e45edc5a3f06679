"""The regular-machine fast path: one native scan, then the model built from its answer.

``FsRoot.scan`` reads a regular tree's whole topology in one native call
(``native/pn_scan.c``) and declines (``None``) anything the general path
would warn about or treat specially; :func:`assemble` turns its answer
into the :class:`~pynuma.model.Topology` the general path would have built.
:func:`general_scan` is the scan's pure twin: the general path's answer in
the scan's form, the oracle the tests compare the native scan against.
"""
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import List, Optional

from .. import _impl
from ..cpuset import CPUSet
from ..model import (CPU, Cache, Distances, HugepagePool, MappingProxyType, NumaNode, Package, Topology,
                     node_of_cpus, uncore_of_cpus)

_from_bits = CPUSet.from_bits
_make_records = _impl.select("fsread").make_records
_EMPTY = MappingProxyType({})


def assemble(fs, sets, reported: int, answer, warnings: "List[str]", arch_of) -> "Topology":
    """The topology from ``FsRoot.scan``'s answer; ``sets``/``reported`` when the scan did not read the sets."""
    (scan_sets, cpus_raw, cores, packages_raw, caches_raw, _node_dir, nodes_raw, matrix, slit, devices_present,
     cpuinfo) = answer
    if scan_sets is not None:
        possible, present, reported, offline, isolated = scan_sets
    else:
        possible, present, offline, isolated = sets.possible, sets.present, sets.offline, sets.isolated
    # equal CPU sets (a core's caches, online and present, ...) are one immutable object
    shared: dict = {}

    def cpus_of(bits: int) -> "CPUSet":
        found = shared.get(bits)
        if found is None:
            found = shared[bits] = _from_bits(bits)
        return found

    # records in bulk, every field given in order (no argument checks needed): _make_records
    node_rows = []
    for node_id, total, free, bits, pools_raw in nodes_raw:
        pools = MappingProxyType({size: HugepagePool(size, p_total, p_free, surplus, reserved)
                                  for size, p_total, p_free, surplus, reserved in pools_raw}) if pools_raw else _EMPTY
        node_rows.append((node_id, cpus_of(bits), total, free, pools, bits != 0, total > 0))
    nodes = _make_records(NumaNode, node_rows)
    node_of = node_of_cpus(nodes)
    caches = tuple(_make_records(Cache, [(level, kind, size, cache_id, cpus_of(bits))
                                         for level, kind, size, cache_id, bits in caches_raw]))
    uncore = uncore_of_cpus(caches)
    siblings = [cpus_of(bits) for bits in cores]
    node_get, uncore_get = node_of.get, uncore.get
    cpu_records = tuple(_make_records(CPU, [(c, True, package, die, cluster, core_id, core, node_get(c),
                                             siblings[core], uncore_get(c))
                                            for c, package, die, cluster, core_id, core in cpus_raw]))
    distances = None
    if slit:
        # the firmware table wins when usable (pynuma.acpi parses, validates and maps it)
        from . import distances as _distances

        distances = _distances.with_sysfs_matrix(fs, [node.id for node in nodes], matrix, warnings)
    elif matrix is not None:
        distances = Distances(tuple(node.id for node in nodes), matrix, "sysfs")
    if devices_present:
        from . import _extras

        devices, net_interfaces = _extras(fs, warnings)
    else:
        devices = net_interfaces = ()
    if fs.is_host:
        arch = os.uname().machine
    else:
        arch = "unknown" if cpuinfo is None else arch_of(cpuinfo)
    return _make_records(Topology, ((
        arch,
        cpus_of(possible),
        cpus_of(present),
        cpus_of(reported),
        cpus_of(offline),
        cpus_of(isolated & reported),
        cpu_records,
        tuple(_make_records(Package, [(pid, cpus_of(bits)) for pid, bits in packages_raw])),
        len(cores),
        caches,
        tuple(nodes),
        distances,
        devices,
        net_interfaces,
        tuple(warnings),
    ),))[0]


#: what discovery reads before anything else: the CPU sets, then the cgroup files
PRE_PATHS = ["/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible",
             "/sys/devices/system/cpu/present", "/sys/devices/system/cpu/isolated",
             "/sys/devices/system/cpu/offline", "/proc/mounts", "/proc/self/cpuset", "/proc/self/cgroup"]


def general_scan(fs, reported: "Optional[int]", mems: "Optional[int]", want_cpuinfo: bool, pre=None):
    """``FsRoot.scan``'s ``(status, answer)`` computed by the general path.

    With ``reported`` ``None`` the CPU sets and the cgroup files come from
    ``pre`` (their texts) and the online CPUs the cpuset cgroup allows are
    reported.  Status ``"irregular"`` where the general path warns or fails.
    """
    from ..errors import ParseError
    from . import caches as _caches, cpus as _cpus, cpuset_cgroup as _cgroup, distances as _distances, \
        numa as _numa

    warnings: List[str] = []
    sets_out = None
    try:
        if reported is None:
            sets = _cpus.read_cpu_sets(fs, warnings, pre[:5])
            allowed_cpus, mems = _cgroup.allowed(fs, warnings, pre[5:])
            reported = sets.online if allowed_cpus is None else sets.online & allowed_cpus
            sets_out = (sets.possible, sets.present, reported, sets.offline, sets.isolated)
        topo = _cpus.read_topology(fs, reported, warnings)
        if topo.reported != reported or not reported:
            return "irregular", None
        cpu_ids = sorted(topo.core_key)
        core_of, core_members = _cpus.number_cores(cpu_ids, topo.core_key)
        all_ids = _numa.list_node_ids(fs)
        matrix, slit = None, False
        if all_ids:
            node_ids = [n for n in all_ids if mems is None or (mems >> n) & 1]
            nodes = _numa.read_nodes(fs, node_ids, reported, warnings)
            if len(node_ids) >= 2:
                # the rows as read; the SLIT is consulted when the topology is assembled
                matrix = _distances.sysfs_matrix(fs, all_ids, node_ids, warnings)
                slit = fs.exists(_distances.SLIT_PATH)
        else:
            nodes = [_numa.single_node(fs, reported, warnings)]
        caches = _caches.read_caches(fs, reported, warnings)
    except ParseError:
        return "irregular", None
    if warnings:
        return "irregular", None
    devices_present = bool(fs.listdir("/sys/bus/pci/devices") or fs.listdir("/sys/class/net"))
    cpuinfo = None
    if want_cpuinfo:
        try:
            cpuinfo = fs.read_bytes("/proc/cpuinfo", 4096).decode("utf-8", "replace")
        except OSError:
            pass
    cpus = [(c, topo.package.get(c), topo.die.get(c), topo.cluster.get(c), topo.core_id.get(c), core_of[c])
            for c in cpu_ids]
    return "ok", (
        sets_out,
        cpus,
        [core_members[n] for n in range(len(core_members))],
        [(pid, bits) for pid, bits in topo.packages],
        [(c.level, c.type, c.size_bytes, c.id, c.cpus.bits) for c in caches],
        bool(all_ids),
        [(n.id, n.memory_total, n.memory_free, n.cpus.bits,
          [(p.size_kb, p.total, p.free, p.surplus, p.reserved) for p in n.hugepages.values()]) for n in nodes],
        matrix,
        slit,
        devices_present,
        cpuinfo,
    )
