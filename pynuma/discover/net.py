"""Network interfaces and their NUMA locality.

Links come from ``/sys/class/net`` (any root, cheap: this is what
``discover()`` uses) or, on the live host only, from netlink through
pyroute2 (:func:`discover_net_netlink`; imported on demand because importing
pyroute2 costs ~250 ms).  Either way a link is mapped to its PCI function
through ``/sys/class/net/<if>/device``: the device itself when it is a PCI
function, else its nearest PCI ancestor (virtio-net sits one level below its
PCI function, USB NICs a few levels below their host controller).  Links
without a ``device`` (lo, veth, bridges, bonds, ifb) are virtual and have no
locality.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Dict, List, Optional, Sequence, Tuple

from ..fsroot import FsRoot
from ..model_devices import NetInterface, PciDevice
from ..parse import ascii_uint
from .devices import parse_uevent

CLASS_NET = "/sys/class/net"
# Per link, read in one batch, in this order.
FILES = ("ifindex", "address", "operstate", "mtu", "device/uevent")
# How far above the link's device to look for a PCI function.
MAX_ANCESTORS = 6


def _int_or_none(text: "Optional[str]") -> "Optional[int]":
    if text is None:
        return None
    return ascii_uint(text.strip(" \t\r\n\x00"))


def _text_or_none(text: "Optional[str]") -> "Optional[str]":
    if text is None:
        return None
    t = text.strip(" \t\r\n\x00")
    return t or None


def pci_addresses(fs: "FsRoot", names: "Sequence[str]",
                  first: "Optional[Sequence[Optional[str]]]" = None) -> "Dict[str, Tuple[bool, Optional[str]]]":
    """``{name: (has a device, PCI address or None)}`` for each link name.

    ``first`` may hold the already-read ``device/uevent`` texts (same order as ``names``).
    """
    if first is None:
        first = fs.read_many(f"{CLASS_NET}/{n}/device/uevent" for n in names)
    result: Dict[str, Tuple[bool, Optional[str]]] = {}
    pending = []
    for name, text in zip(names, first):
        slot = parse_uevent(text).get("PCI_SLOT_NAME") if text is not None else None
        has_device = text is not None or fs.exists(f"{CLASS_NET}/{name}/device")
        result[name] = (has_device, slot)
        if slot is None and has_device:
            pending.append(name)
    if pending:
        # "device/.." is resolved after the symlink, as the kernel does: the device's parent.
        paths = [f"{CLASS_NET}/{n}/device/{'../' * up}uevent" for n in pending for up in range(1, MAX_ANCESTORS + 1)]
        texts = fs.read_many(paths)
        for i, name in enumerate(pending):
            for text in texts[i * MAX_ANCESTORS:(i + 1) * MAX_ANCESTORS]:
                slot = parse_uevent(text).get("PCI_SLOT_NAME") if text is not None else None
                if slot is not None:
                    result[name] = (True, slot)
                    break
    return result


def _locate(found: "Tuple[bool, Optional[str]]",
            by_address: "Dict[str, PciDevice]") -> "Tuple[Optional[str], Optional[int], bool]":
    """``(PCI address, NUMA node, virtual)`` of a link from :func:`pci_addresses`' answer."""
    has_device, pci = found
    if pci is None:
        return None, None, not has_device
    dev = by_address.get(pci)
    return pci, (dev.numa_node if dev is not None else None), False


def discover_net(fs: "FsRoot", devices: "Sequence[PciDevice]" = (),
                 warnings: "Optional[List[str]]" = None, listing: "Optional[List[str]]" = None
                 ) -> "Tuple[NetInterface, ...]":
    """Links listed in ``/sys/class/net`` under the root, by name, with their locality.

    ``listing``: the names in ``/sys/class/net`` when the caller already listed it.
    """
    if warnings is None:
        warnings = []
    names = [n for n in (fs.listdir(CLASS_NET) if listing is None else listing) if not n.startswith(".")]
    if not names:
        return ()
    n = len(FILES)
    texts = fs.read_many(f"{CLASS_NET}/{name}/{f}" for name in names for f in FILES)
    pci = pci_addresses(fs, names, [texts[i * n + 4] for i in range(len(names))])
    by_address = {d.address: d for d in devices}
    out = []
    for i, name in enumerate(names):
        ifindex, mac, state, mtu, _ = texts[i * n:(i + 1) * n]
        if ifindex is None and mac is None and mtu is None:
            continue  # not a link directory (bonding_masters is a file here)
        if ifindex is None:
            warnings.append(f"{fs.host_path(CLASS_NET)}/{name}/ifindex: missing or unreadable")
        address, node, virtual = _locate(pci[name], by_address)
        state_text = _text_or_none(state)
        out.append(NetInterface(name, _int_or_none(ifindex), _text_or_none(mac),
                                state_text.upper() if state_text else None, _int_or_none(mtu),
                                address, node, virtual, "sysfs"))
    return tuple(out)


def discover_net_netlink(fs: "FsRoot", devices: "Sequence[PciDevice]" = (),
                         warnings: "Optional[List[str]]" = None) -> "Tuple[NetInterface, ...]":
    """Links of the live host's network namespace from netlink (pyroute2), with their locality.

    Refuses a fake root (netlink only sees this host).  Sorted by name like
    :func:`discover_net`.
    """
    fs.require_host("listing network links over netlink")
    try:
        from pyroute2 import IPRoute  # heavy import: only here
    except ImportError as err:  # pragma: no cover - pyroute2 is a dependency
        from ..errors import Unsupported

        raise Unsupported(f"pyroute2 is not importable ({err}); use the sysfs listing") from err
    rows = []
    with IPRoute() as ipr:
        for link in ipr.get_links():
            rows.append((link.get_attr("IFLA_IFNAME"), int(link["index"]), link.get_attr("IFLA_ADDRESS"),
                         link.get_attr("IFLA_OPERSTATE"), link.get_attr("IFLA_MTU")))
    rows.sort(key=lambda r: r[0] or "")
    names = [r[0] for r in rows]
    pci = pci_addresses(fs, names)
    by_address = {d.address: d for d in devices}
    out = []
    for name, index, mac, state, mtu in rows:
        address, node, virtual = _locate(pci.get(name, (False, None)), by_address)
        out.append(NetInterface(name, index, mac, str(state).upper() if state else None,
                                None if mtu is None else int(mtu), address, node, virtual, "netlink"))
    return tuple(out)
