"""``discover(root="/") -> Topology``: what the machine (or a saved dump of one) is made of.

>>> import pynuma
>>> topo = pynuma.discover()                       # the live host
>>> topo = pynuma.discover("/tmp/dump")            # a /sys + /proc dump   # doctest: +SKIP
>>> topo.online_cpus, [n.id for n in topo.numa_nodes], topo.distances

Discovery is tolerant: an item that does not parse is skipped and a line is
added to ``topo.warnings``; only a file without which the answer would be
wrong (``cpu/online``, a node's ``cpulist``, a topology mask, the cpuset
cgroup's ``cpus``) raises :class:`pynuma.errors.ParseError` naming it.
"""
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import List, Tuple, Union

from ..cpuset import CPUSet
from ..fsroot import FsRoot
from ..model import CPU, Package, Topology
from . import caches as _caches, cpus as _cpus, cpuset_cgroup as _cgroup, distances as _distances, numa as _numa
from ..parse import memoized as _memoized
from ..machine_root import require_machine_root

__all__ = ["discover"]

_tuple_new = tuple.__new__  # a record from all its values (see pynuma._record)


def discover(root: "Union[str, FsRoot]" = "/") -> "Topology":
    """Discover CPUs, caches, NUMA nodes, memory, hugepages and distances under ``root``."""
    if isinstance(root, FsRoot):
        return _discover(root)
    with FsRoot(root) as fs:
        return _discover(fs)


def _discover(fs: "FsRoot") -> "Topology":
    """Every rule, every odd tree, with warnings: the one place a :class:`Topology` is built."""
    require_machine_root(fs)
    warnings: List[str] = []
    # equal CPU sets (a core's threads and its L1/L2 caches, online and present, ...) are one object
    cpuset = _memoized(CPUSet.from_bits, 1 << 20)

    sets = _cpus.read_cpu_sets(fs, warnings)
    allowed_cpus, allowed_mems = _cgroup.allowed(fs, warnings, online=sets.online)
    reported = sets.online if allowed_cpus is None else sets.online & allowed_cpus

    topo = _cpus.read_topology(fs, reported, warnings)
    reported = topo.reported
    cpu_ids = sorted(topo.core_key)
    core_of, core_members = _cpus.number_cores(cpu_ids, topo.core_key)

    all_node_ids = _numa.list_node_ids(fs)
    if all_node_ids:
        node_ids = [n for n in all_node_ids if allowed_mems is None or (allowed_mems >> n) & 1]
        nodes = _numa.read_nodes(fs, node_ids, reported, warnings)
        distances = _distances.read_distances(fs, all_node_ids, node_ids, warnings)
    else:
        nodes = [_numa.single_node(fs, reported, warnings)]
        distances = None
    node_of = _numa.node_of_cpus(nodes)

    caches = _caches.read_caches(fs, reported, warnings, cpuset)
    uncore = _caches.uncore_caches(caches)

    siblings = [cpuset(core_members[n]) for n in range(len(core_members))]
    package_get, die_get, cluster_get, core_id_get = topo.package.get, topo.die.get, topo.cluster.get, topo.core_id.get
    node_get, uncore_get = node_of.get, uncore.get
    new = _tuple_new
    cpu_records = tuple([
        new(CPU, (c, True, package_get(c), die_get(c), cluster_get(c), core_id_get(c), core_of[c], node_get(c),
                  siblings[core_of[c]], uncore_get(c)))
        for c in cpu_ids])
    packages = tuple([new(Package, (pid, cpuset(bits))) for pid, bits in topo.packages])
    devices, net_interfaces = _extras(fs, warnings)
    return new(Topology, (
        _arch(fs),
        cpuset(sets.possible),
        cpuset(sets.present),
        cpuset(reported),
        cpuset(sets.offline),
        cpuset(sets.isolated & reported),
        cpu_records,
        packages,
        len(core_members),
        tuple(caches),
        tuple(nodes),
        distances,
        devices,
        net_interfaces,
        tuple(warnings),
    ))


def _extras(fs: "FsRoot", warnings: "List[str]") -> "Tuple[tuple, tuple]":
    """``(devices, net_interfaces)``: PCI devices and network links from sysfs (netlink is
    ``pynuma.discover.net.discover_net_netlink``, on request)."""
    pci, net = fs.listdir("/sys/bus/pci/devices"), fs.listdir("/sys/class/net")
    if not pci and not net:
        return (), ()  # a dump without devices: their readers are not even imported
    from . import devices as _devices, net as _net

    devices = _devices.discover_devices(fs, warnings, pci)
    net_interfaces = _net.discover_net(fs, devices, warnings, net)
    return _devices.attach_net(devices, net_interfaces), net_interfaces


def _arch(fs: "FsRoot") -> str:
    """The machine's architecture: ``uname`` on the live host, a guess from ``/proc/cpuinfo`` for a dump."""
    if fs.is_host:
        return os.uname().machine
    try:
        head = fs.read_bytes("/proc/cpuinfo", 4096).decode("utf-8", "replace")
    except OSError:
        return "unknown"
    return _guess_arch_memo(head)


def guess_arch(cpuinfo_head: str) -> str:
    """Architecture name from the start of a ``/proc/cpuinfo`` (``"unknown"`` when unsure)."""
    fields = {}
    for line in cpuinfo_head.split("\n"):
        if not line.strip() and fields:
            break  # the first processor's block is enough
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    vendor = fields.get("vendor_id", "") or fields.get("vendor", "")
    if "S390" in vendor:
        return "s390"
    if fields.get("arch", "").upper() == "IA-64" or fields.get("family", "").startswith("Itanium"):
        return "ia64"
    if vendor in ("GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls"):
        # the fdiv/hlt/f00f/coma_bug lines are printed by 32-bit kernels only: a 64-bit
        # capable CPU ("lm") running an i386 kernel is still an i386 machine
        if any(bug in fields for bug in ("fdiv_bug", "f00f_bug", "coma_bug", "hlt_bug")):
            return "i386"
        return "x86_64" if " lm " in f" {fields.get('flags', '')} " else "i386"
    if "cpu implementer" in fields:
        arch = fields.get("cpu architecture", "")
        return "arm64" if arch in ("8", "9", "AArch64") or "aarch64" in fields.get("processor", "").lower() \
            else "arm"
    if "processor" in fields and "ARM" in fields["processor"]:
        return "arm"
    cpu = fields.get("cpu", "")
    if cpu.startswith(("POWER", "PPC", "Cell")) or "platform" in fields:
        return "ppc64"
    return "unknown"


# the same cpuinfo head gives the same answer: kept for repeated discoveries
_guess_arch_memo = _memoized(guess_arch, 16)

from .._callable_module import make_module_callable  # noqa: E402

make_module_callable(__name__, discover)  # pynuma.discover() after ``import pynuma.discover.X`` too
