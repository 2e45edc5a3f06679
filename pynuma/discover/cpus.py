"""CPU sets and per-CPU topology (package, die, cluster, core) from ``/sys/devices/system/cpu``.

Rules (conformance README, rules 1-3): a CPU is online per ``cpu/online``
(else per ``cpuN/online``) and is ignored without a ``cpuN/topology``
directory; a package is the set of reported CPUs sharing a
``package_cpus``/``core_siblings`` mask; two CPUs are one core when they share
the ``core_cpus``/``thread_siblings`` mask *and* the same ``core_id`` (AMD
Bulldozer lists two integer cores in one mask).

Group files (package, die, cluster masks and ids) are read once per group,
from its lowest CPU, the way hwloc does; only ``core_id`` and the core mask
are read per CPU.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import Dict, List, Optional, Sequence, Tuple

from .. import _impl
from ..errors import ParseError
from ..parse import memoized, parse_int, parse_online_flag, parse_prefixed_id
from ._groups import Walk as _Walk, members as _group_members, walk as _walk_groups

_bitmap = _impl.select("bitmap")

# masks and lists kept by text: threads of a core, CPUs of a package, repeated discoveries
_parse_mask = memoized(_bitmap.parse_cpumask)
_parse_list = memoized(_bitmap.parse_cpulist, 256)

CPU_DIR = "/sys/devices/system/cpu"

# (new name, old name) of the mask files; the new ones appeared in Linux 5.8
_CORE_MASKS = ("core_cpus", "thread_siblings")
_PACKAGE_MASKS = ("package_cpus", "core_siblings")
_PROBE = ("core_cpus", "thread_siblings", "package_cpus", "core_siblings", "physical_package_id",
          "core_id", "die_id", "die_cpus", "cluster_id", "cluster_cpus")


class CpuSets:
    """The machine-wide CPU sets as bitmaps (ints)."""

    __slots__ = ("possible", "present", "online", "offline", "isolated")

    def __init__(self, possible: int, present: int, online: int, offline: int, isolated: int) -> None:
        self.possible, self.present, self.online, self.offline, self.isolated = (
            possible, present, online, offline, isolated)


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _cpulist(fs, path: str, text: str) -> int:
    try:
        return _parse_list(text)
    except ValueError as err:
        raise ParseError(fs.host_path(path), str(err)) from None


_SET_NAMES = ("online", "possible", "present", "isolated", "offline")
_SET_PATHS = [f"{CPU_DIR}/{n}" for n in _SET_NAMES]


def read_cpu_sets(fs, warnings: "List[str]", texts: "Optional[Sequence[Optional[str]]]" = None) -> "CpuSets":
    """possible/present/online/offline/isolated CPUs (before the cgroup restriction).

    ``texts``: the five files' texts (online, possible, present, isolated,
    offline) when the caller already read them.
    """
    names, paths = _SET_NAMES, _SET_PATHS
    texts = dict(zip(names, fs.read_many(paths) if texts is None else texts))
    sets: Dict[str, Optional[int]] = {}
    for name, path in zip(names, paths):
        text = texts[name]
        sets[name] = None if text is None else _cpulist(fs, path, text)
    online = sets["online"]
    if online == 0:
        # a running kernel has at least one CPU online: an empty (or all-NUL) file says nothing
        warnings.append(f"{fs.host_path(_SET_PATHS[0])}: lists no CPU; online CPUs taken from the cpuN directories")
        online = None
    if online is None:
        online, listed = _online_from_dirs(fs)
        sets["possible"] = sets["possible"] if sets["possible"] is not None else listed
        sets["present"] = sets["present"] if sets["present"] is not None else listed
    possible = sets["possible"] if sets["possible"] is not None else online
    present = sets["present"] if sets["present"] is not None else possible
    offline = sets["offline"] if sets["offline"] is not None else present & ~online
    return CpuSets(possible, present, online, offline, sets["isolated"] or 0)


def _online_from_dirs(fs) -> "Tuple[int, int]":
    """Online CPUs when ``cpu/online`` is missing: every ``cpuN`` whose ``online`` is not ``0``."""
    ids = [i for i in (parse_prefixed_id(n, "cpu") for n in fs.listdir(CPU_DIR)) if i is not None]
    paths = [f"{CPU_DIR}/cpu{i}/online" for i in ids]
    online = listed = 0
    for i, path, text in zip(ids, paths, fs.read_many(paths)):
        listed |= 1 << i
        if text is None:
            online |= 1 << i  # cpu0 often has no online file: it cannot be offlined
            continue
        if not text.strip(" \t\r\n\x00"):
            online |= 1 << i  # empty: state unknown; only an explicit 0 means offline (rule 1)
            continue
        try:
            if parse_online_flag(text):
                online |= 1 << i
        except ValueError as err:
            raise ParseError(fs.host_path(path), str(err)) from None
    return online, listed


class CpuTopology:
    """Raw per-CPU facts: ``{cpu: value}`` maps plus the package groups."""

    __slots__ = ("reported", "core_id", "core_key", "package", "die", "cluster", "packages")

    def __init__(self) -> None:
        self.reported = 0
        self.core_id: Dict[int, Optional[int]] = {}
        self.core_key: Dict[int, tuple] = {}
        self.package: Dict[int, Optional[int]] = {}
        self.die: Dict[int, Optional[int]] = {}
        self.cluster: Dict[int, Optional[int]] = {}
        self.packages: List[Tuple[int, int]] = []  # (id, cpus bitmap)


def _probe_names(fs, cpus: "List[int]") -> "Tuple[Optional[Dict[str, Optional[str]]], int, int]":
    """The topology files of the first CPU that has any (``{name: text or None}``), that CPU, and CPUs to drop.

    The texts tell which file names this kernel has, and serve as that CPU's
    files in the group walks (read once).
    """
    dropped = 0
    for cpu in cpus:
        base = f"{CPU_DIR}/cpu{cpu}/topology/"
        found = fs.read_many([base + n for n in _PROBE])
        if any(t is not None for t in found):
            return dict(zip(_PROBE, found)), cpu, dropped
        if not fs.isdir(base):
            dropped |= 1 << cpu
    return None, -1, dropped


# Reported sets larger than this are first checked against the cpuN directories (one listing)
_LIST_ABOVE = 256


def read_topology(fs, reported: int, warnings: "List[str]") -> "CpuTopology":
    """Per-CPU topology of the ``reported`` CPUs (bitmap); CPUs without a topology dir are dropped."""
    topo = CpuTopology()
    if reported.bit_count() > _LIST_ABOVE:
        # a CPU without a cpuN directory has no topology directory either (dropped below anyway):
        # one listing keeps the work to the CPUs present, however many a 10-byte cpu/online claims
        reported &= sum(1 << i for i in (parse_prefixed_id(n, "cpu") for n in fs.listdir(CPU_DIR)) if i is not None)
    cpus = list(_bits(reported))
    probe, probe_cpu, dropped = _probe_names(fs, cpus)
    if probe is None:
        # no topology files at all: every CPU with a topology dir is its own core, no packages
        topo.reported = reported & ~dropped
        for cpu in _bits(topo.reported):
            topo.core_id[cpu] = None
            topo.core_key[cpu] = (1 << cpu, None)
            topo.package[cpu] = topo.die[cpu] = topo.cluster[cpu] = None
        return topo
    cpus = [c for c in cpus if not (dropped >> c) & 1]
    have = {n: t is not None for n, t in probe.items()}
    core_mask = _CORE_MASKS[0] if have["core_cpus"] else _CORE_MASKS[1]
    package_mask = _PACKAGE_MASKS[0] if have["package_cpus"] else _PACKAGE_MASKS[1]

    paths = []
    for cpu in cpus:
        base = f"{CPU_DIR}/cpu{cpu}/topology/"
        paths.append(base + "core_id")
        paths.append(base + core_mask)
    k0 = cpus.index(probe_cpu)  # the probed CPU's two files are already read
    texts = fs.read_many(paths[:2 * k0] + paths[2 * k0 + 2:])
    texts[2 * k0:2 * k0] = [probe["core_id"], probe[core_mask]]
    parse_mask = _parse_mask
    keep = []
    for k, cpu in enumerate(cpus):
        id_text, mask_text = texts[2 * k], texts[2 * k + 1]
        if id_text is None and mask_text is None and not fs.isdir(f"{CPU_DIR}/cpu{cpu}/topology"):
            dropped |= 1 << cpu  # rule 1: a CPU without a topology directory is ignored
            continue
        keep.append(cpu)
        core_id = _optional_int(fs, paths[2 * k], id_text, warnings)
        mask = None
        if mask_text is not None:
            try:
                mask = parse_mask(mask_text)
            except ValueError as err:
                raise ParseError(fs.host_path(paths[2 * k + 1]), str(err)) from None
        topo.core_id[cpu] = core_id
        topo.core_key[cpu] = (mask, core_id) if mask is not None else (1 << cpu, core_id, "alone")
    reported &= ~dropped
    topo.reported = reported
    for cpu in keep:
        key = topo.core_key[cpu]
        if len(key) == 2:
            topo.core_key[cpu] = ((key[0] & reported) | (1 << cpu), key[1])

    first = (probe_cpu, probe)
    walks: List[_Walk] = []
    topo.packages = _groups(fs, keep, reported, "physical_package_id", package_mask,
                            have["physical_package_id"] or have[package_mask], topo.package, walks, first)
    if have["die_id"] and _is_no_die(probe["die_id"]):
        # die_id -1 is the kernel's answer for every CPU of an architecture without dies (each its
        # own die): the other CPUs' die files can say nothing else, and are not read
        for cpu in keep:
            topo.die[cpu] = -1
    else:
        _groups(fs, keep, reported, "die_id", "die_cpus", have["die_id"], topo.die, walks, first)
    _groups(fs, keep, reported, "cluster_id", "cluster_cpus", have["cluster_id"], topo.cluster, walks, first)
    _walk_groups(fs, walks, warnings)  # fills topo.packages and the id maps
    return topo


_parse_small_int = memoized(parse_int)  # ids repeat across CPUs and discoveries
_C_INT_LIMIT = 1 << 31


def _is_no_die(text: "Optional[str]") -> bool:
    try:
        return text is not None and _parse_small_int(text) == -1
    except ValueError:
        return False


def _optional_int(fs, path: str, text: "Optional[str]", warnings: "List[str]") -> "Optional[int]":
    if text is None:
        return None
    try:
        value = _parse_small_int(text)
    except ValueError as err:
        warnings.append(f"{fs.host_path(path)}: {err}; ignored")
        return None
    if not -_C_INT_LIMIT <= value < _C_INT_LIMIT:  # the kernel keeps these ids in an int
        warnings.append(f"{fs.host_path(path)}: {value} is no id the kernel can hold (an int); ignored")
        return None
    return value


def _groups(fs, cpus: "List[int]", reported: int, id_name: str, mask_name: str, present: bool,
            out: "Dict[int, Optional[int]]", walks: "List[_Walk]",
            first: "Tuple[int, Dict[str, Optional[str]]]" = (-1, {})) -> "List[Tuple[int, int]]":
    """Set up the walk that fills ``out[cpu] = group id``, each group's files read once (from its lowest CPU).

    Returns the list that the walk (appended to ``walks``) fills with ``(id, cpus bitmap)`` of the groups that have a
    mask.  Without the mask file a CPU is in no group (its id, if any, is
    still recorded).  ``first`` is ``(cpu, {name: text})`` of one CPU's
    already-read topology files.
    """
    groups: List[Tuple[int, int]] = []
    if not present:
        for cpu in cpus:
            out[cpu] = None
        return groups
    remaining = 0
    for cpu in cpus:
        remaining |= 1 << cpu
    parse_mask = _parse_mask
    warnings: List[str] = []  # this walk's, added to discovery's in walk order

    names = (f"/topology/{id_name}", f"/topology/{mask_name}")

    def place(cpu: int, texts, start: int, left: int) -> "Optional[int]":
        id_text, mask_text = texts[start], texts[start + 1]
        gid = None if id_text is None else _optional_int(fs, f"{CPU_DIR}/cpu{cpu}{names[0]}", id_text, warnings)
        if mask_text is None:
            out[cpu] = gid
            return None
        try:
            group = _group_members(parse_mask(mask_text), reported, left, cpu)
        except ValueError as err:
            raise ParseError(fs.host_path(f"{CPU_DIR}/cpu{cpu}{names[1]}"), str(err)) from None
        for member in _bits(group):
            out[member] = gid
        groups.append((-1 if gid is None else gid, group))
        return group

    cpu0, texts0 = first
    pre = (cpu0, (texts0[id_name], texts0[mask_name])) if id_name in texts0 and mask_name in texts0 else None
    walks.append(_Walk(remaining, CPU_DIR + "/cpu", lambda: names, place, pre, warnings))
    return groups


def number_cores(cpus: "List[int]", core_key: "Dict[int, tuple]") -> "Tuple[Dict[int, int], Dict[int, int]]":
    """Machine-wide core index per CPU (cores numbered in order of their lowest CPU) and core members.

    Returns ``({cpu: core index}, {core index: members bitmap})``.
    """
    index: Dict[tuple, int] = {}
    core_of: Dict[int, int] = {}
    members: Dict[int, int] = {}
    for cpu in cpus:
        key = core_key[cpu]
        n = index.get(key)
        if n is None:
            n = index[key] = len(index)
            members[n] = 0
        core_of[cpu] = n
        members[n] |= 1 << cpu
    return core_of, members
