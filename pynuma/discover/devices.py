"""PCI devices from ``/sys/bus/pci/devices``: ids, kind, NUMA locality, SR-IOV links.

Reads every device's small files in one batched ``FsRoot.read_many`` call.
Tolerant like the rest of discovery: a device whose class cannot be read
is skipped with a warning naming the file; an unreadable id or locality
becomes ``None`` with a warning.  ``numa_node`` ``-1`` means the firmware
did not say (common on single-node machines and VMs): reported as ``None``,
never guessed.

>>> classify(0x010802)
('nvme', 'mass storage controller')
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..cpuset import CPUSet
from ..fsroot import FsRoot
from ..model_devices import NetInterface, PciDevice
from ..limits import MAX_NUMA_NODES
from ..parse import ascii_uint, shown

BASE = "/sys/bus/pci/devices"
# Per device, read in one batch, in this order.  ``uevent`` carries the class,
# the vendor:device ids and the driver, which saves three reads per device;
# the separate files are read only when it lacks them (old dumps).
FILES = ("uevent", "numa_node", "local_cpulist", "sriov_totalvfs")
ID_FILES = ("class", "vendor", "device")

# PCI base classes (PCI Code and ID Assignment Specification, "Base Class").
BASE_CLASSES = {
    0x00: "unclassified device", 0x01: "mass storage controller", 0x02: "network controller",
    0x03: "display controller", 0x04: "multimedia controller", 0x05: "memory controller",
    0x06: "bridge", 0x07: "communication controller", 0x08: "generic system peripheral",
    0x09: "input device controller", 0x0a: "docking station", 0x0b: "processor",
    0x0c: "serial bus controller", 0x0d: "wireless controller", 0x0e: "intelligent controller",
    0x0f: "satellite communications controller", 0x10: "encryption controller",
    0x11: "signal processing controller", 0x12: "processing accelerator",
    0x13: "non-essential instrumentation", 0x40: "coprocessor", 0xff: "unassigned class",
}


# -- pure parsers -------------------------------------------------------
_HEX = frozenset("0123456789abcdefABCDEF")


def is_pci_address(name: str) -> bool:
    """``DDDD:BB:SS.F`` (domain of 4 to 8 hex digits), the form of ``/sys/bus/pci/devices`` entries."""
    parts = name.split(":")
    if len(parts) != 3:
        return False
    domain, bus, rest = parts
    slot, dot, func = rest.partition(".")
    return (4 <= len(domain) <= 8 and len(bus) == 2 and len(slot) == 2 and dot == "." and func in "01234567"
            and len(func) == 1 and _HEX.issuperset(domain + bus + slot))


def parse_hex(text: str) -> int:
    """A sysfs hex id (``"0x8086\\n"``) as an int; ``ValueError`` on anything else."""
    t = text.strip(" \t\r\n\x00")
    if t[:2] in ("0x", "0X"):
        t = t[2:]
    if not t or len(t) > 8 or t.strip("0123456789abcdefABCDEF"):
        raise ValueError(f"invalid hex id {text.strip()!r}")
    return int(t, 16)


def parse_numa_node(text: str) -> "Optional[int]":
    """A device's ``numa_node``: the node id, or ``None`` for ``-1`` (unknown)."""
    t = text.strip(" \t\r\n\x00")
    if t == "-1":
        return None
    value = ascii_uint(t, 9)
    if value is None or value >= MAX_NUMA_NODES:
        raise ValueError(f"invalid numa_node {shown(text.strip())}")
    return value


def parse_count(text: str) -> int:
    """A non-negative decimal count (``sriov_numvfs``)."""
    t = text.strip(" \t\r\n\x00")
    value = ascii_uint(t)
    if value is None:
        raise ValueError(f"invalid count {shown(text.strip())}")
    return value


def parse_uevent(text: str) -> "Dict[str, str]":
    """A sysfs ``uevent`` file (``KEY=value`` lines) as a dict; lines without ``=`` are ignored."""
    out = {}
    for line in text.splitlines():
        key, eq, value = line.strip("\x00").partition("=")
        if eq and key:
            out[key.strip()] = value.strip()
    return out


def classify(class_code: int) -> "Tuple[str, str]":
    """``(kind, class name)`` of a 24-bit PCI class code.

    Kinds: ``gpu`` (VGA, XGA, 3D and other display controllers), ``nic``
    (every network controller, InfiniBand included), ``nvme`` (non-volatile
    memory controllers), ``accelerator`` (processing accelerators, co-processors),
    ``other``.
    """
    base, sub, prog = (class_code >> 16) & 0xFF, (class_code >> 8) & 0xFF, class_code & 0xFF
    name = BASE_CLASSES.get(base, "unknown class")
    if base == 0x03:
        kind = "gpu"
    elif base == 0x02:
        kind = "nic"
    elif base == 0x01 and sub == 0x08:
        kind = "nvme"
    elif base == 0x12 or base == 0x40 or (base == 0x0b and sub == 0x40):
        kind = "accelerator"
    else:
        kind = "other"
    del prog  # the programming interface does not change the kind
    return kind, name


# -- discovery ----------------------------------------------------------
def _parse_or_warn(text: "Optional[str]", parser, path: str, warnings: "List[str]", default=None):
    if text is None:
        return default
    try:
        return parser(text)
    except ValueError as err:
        warnings.append(f"{path}: {err}; ignored")
        return default


def _second_pass(fs: "FsRoot", wanted: "Dict[str, List[str]]") -> "Dict[str, Dict[str, Optional[str]]]":
    """Read ``{address: [file, ...]}`` in one batch: ``{address: {file: text}}``."""
    paths = [(a, f) for a, files in wanted.items() for f in files]
    texts = fs.read_many(f"{BASE}/{a}/{f}" for a, f in paths) if paths else []
    out: Dict[str, Dict[str, Optional[str]]] = {}
    for (a, f), text in zip(paths, texts):
        out.setdefault(a, {})[f] = text
    return out


def discover_devices(fs: "FsRoot", warnings: "Optional[List[str]]" = None,
                     listing: "Optional[List[str]]" = None) -> "Tuple[PciDevice, ...]":
    """Every PCI function under the root, in address order (tolerant; warnings appended).

    ``listing``: the names in ``/sys/bus/pci/devices`` when the caller already listed it.
    """
    if warnings is None:
        warnings = []
    addresses = []
    for name in (fs.listdir(BASE) if listing is None else listing):
        if is_pci_address(name):
            addresses.append(name)
        else:
            warnings.append(f"{fs.host_path(BASE)}/{name}: not a PCI address; skipped")
    if not addresses:
        return ()
    n = len(FILES)
    texts = fs.read_many(f"{BASE}/{a}/{f}" for a in addresses for f in FILES)
    first = {a: dict(zip(FILES, texts[i * n:(i + 1) * n])) for i, a in enumerate(addresses)}
    # Second pass, only where needed: ids missing from uevent, the old cpumask
    # form of local CPUs, and the VF count of SR-IOV physical functions.
    more: Dict[str, List[str]] = {}
    for a, t in first.items():
        ev = parse_uevent(t["uevent"] or "")
        t["_uevent"] = ev
        files = []
        if "PCI_CLASS" not in ev or "PCI_ID" not in ev:
            files += ID_FILES
        if t["local_cpulist"] is None:
            files.append("local_cpus")
        if t["sriov_totalvfs"] is not None:
            files.append("sriov_numvfs")
        if files:
            more[a] = files
    for a, extra in _second_pass(fs, more).items():
        first[a].update(extra)
    found = [d for d in (_device(fs, a, first[a], warnings) for a in addresses) if d is not None]
    return _link_sriov(fs, found, warnings)


def _ids_from_uevent(ev: "Dict[str, str]") -> "Tuple[Optional[int], Optional[int], Optional[int]]":
    try:
        vendor, _, device = ev["PCI_ID"].partition(":")
        return int(ev["PCI_CLASS"], 16), int(vendor, 16), int(device, 16)
    except (KeyError, ValueError):
        return None, None, None


def _device(fs: "FsRoot", addr: str, t: "Dict", warnings: "List[str]") -> "Optional[PciDevice]":
    where = f"{fs.host_path(BASE)}/{addr}"
    ev = t["_uevent"]
    class_code, vendor, device = _ids_from_uevent(ev)
    if class_code is None:
        if t.get("class") is None:
            warnings.append(f"{where}/class: missing or unreadable; device skipped")
            return None
        try:
            class_code = parse_hex(t["class"])
        except ValueError as err:
            warnings.append(f"{where}/class: {err}; device skipped")
            return None
        vendor = _parse_or_warn(t.get("vendor"), parse_hex, f"{where}/vendor", warnings)
        device = _parse_or_warn(t.get("device"), parse_hex, f"{where}/device", warnings)
    kind, class_name = classify(class_code)
    node = _parse_or_warn(t["numa_node"], parse_numa_node, f"{where}/numa_node", warnings)
    if t["local_cpulist"] is not None:
        cpus = _parse_or_warn(t["local_cpulist"], CPUSet.parse, f"{where}/local_cpulist", warnings)
    else:
        cpus = _parse_or_warn(t.get("local_cpus"), CPUSet.parse_mask, f"{where}/local_cpus", warnings)
    return PciDevice(
        addr, class_code, vendor, device, kind, class_name, node, cpus, ev.get("DRIVER"),
        _parse_or_warn(t["sriov_totalvfs"], parse_count, f"{where}/sriov_totalvfs", warnings),
        _parse_or_warn(t.get("sriov_numvfs"), parse_count, f"{where}/sriov_numvfs", warnings),
    )


def _link_sriov(fs: "FsRoot", devices: "List[PciDevice]", warnings: "List[str]") -> "Tuple[PciDevice, ...]":
    """Link each enabled VF to its PF through the PF's ``virtfnN`` links (read only for PFs with VFs)."""
    wanted = {d.address: [f"virtfn{i}/uevent" for i in range(d.sriov_numvfs)]
              for d in devices if d.sriov_numvfs}
    if not wanted:
        return tuple(devices)
    parent: Dict[str, str] = {}
    for pf, texts in _second_pass(fs, wanted).items():
        for name, text in sorted(texts.items()):
            vf = parse_uevent(text).get("PCI_SLOT_NAME") if text is not None else None
            if vf is None:
                warnings.append(f"{fs.host_path(BASE)}/{pf}/{name}: no PCI_SLOT_NAME; VF link dropped")
            else:
                parent[vf] = pf
    linked = [d.replace(physfn=parent[d.address]) if d.address in parent else d for d in devices]
    return link_virtfns(linked)


def link_virtfns(devices: "Iterable[PciDevice]") -> "Tuple[PciDevice, ...]":
    """Fill each physical function's ``virtfns`` from its virtual functions' ``physfn`` links."""
    devices = list(devices)
    children: Dict[str, List[str]] = {}
    for d in devices:
        if d.physfn is not None:
            children.setdefault(d.physfn, []).append(d.address)
    if not children:
        return tuple(devices)
    return tuple(d.replace(virtfns=tuple(sorted(children[d.address]))) if d.address in children else d
                 for d in devices)


def attach_net(devices: "Sequence[PciDevice]", interfaces: "Iterable[NetInterface]") -> "Tuple[PciDevice, ...]":
    """Devices with ``net`` filled from the interfaces that map to them."""
    names: Dict[str, List[str]] = {}
    for iface in interfaces:
        if iface.pci_address is not None:
            names.setdefault(iface.pci_address, []).append(iface.name)
    return tuple(d.replace(net=tuple(sorted(names[d.address]))) if d.address in names else d for d in devices)
