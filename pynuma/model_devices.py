"""Frozen value types for PCI devices and network interfaces.

They sit in :attr:`pynuma.model.Topology.devices` and
:attr:`~pynuma.model.Topology.net_interfaces`.  A device's NUMA node is
``None`` when the kernel reports ``-1`` (locality unknown: pynuma never
guesses it from bus numbers or CPU lists)::

    topo = pynuma.discover()
    for dev in topo.devices:
        print(dev.address, dev.kind, dev.numa_node)
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Any, Dict, Mapping, Optional, Tuple

from ._record import Record

KINDS = ("gpu", "nic", "nvme", "accelerator", "other")


def _hex(value: "Optional[int]", digits: int) -> "Optional[str]":
    return None if value is None else f"0x{value:0{digits}x}"


def _unhex(d, key: str, where: str, digits: int) -> "Optional[int]":
    """``d[key]``: a hex id as :func:`_hex` writes it (``"0x8086"``), at most ``digits`` hex digits, or null."""
    value = d.get(key)
    if value is None:
        return None
    body = value[2:] if isinstance(value, str) and value[:2] in ("0x", "0X") else None
    if not body or len(body) > digits or body.strip("0123456789abcdefABCDEF"):
        from ._docfields import shown_json

        raise ValueError(f"{where}.{key}: expected a hex id like \"0x8086\", got {shown_json(value)}")
    return int(body, 16)


def _opt_int(d, key: str, where: str, hi: int) -> "Optional[int]":
    """``d[key]``: a non-negative int up to ``hi``, or null."""
    from ._docfields import check_int

    return check_int(d.get(key), f"{where}.{key}", (0, hi), none=True)


def _opt_str(d, key: str, where: str, required: bool = False) -> "Optional[str]":
    value = d.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        from ._docfields import shown_json

        raise ValueError(f"{where}.{key}: expected a string, got {'nothing' if key not in d else shown_json(value)}")
    return value


def _strings(d, key: str, where: str) -> "Tuple[str, ...]":
    value = d.get(key)
    if value is None:
        return ()
    from ._docfields import shown_json

    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where}.{key}: expected a list of strings, got {shown_json(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{where}.{key}[{i}]: expected a string, got {shown_json(item)}")
    return tuple(value)


def _node(d, where: str) -> "Optional[int]":
    from .limits import MAX_NUMA_NODES

    return _opt_int(d, "numa_node", where, MAX_NUMA_NODES - 1)


_U64 = (1 << 64) - 1


def _default(value, default):
    return default if value is None else value


class PciDevice(Record):
    """One PCI function from ``/sys/bus/pci/devices/<address>``.

    ``class_code`` is the 24-bit class (``0x020000``); ``kind`` one of
    :data:`KINDS` and ``class_name`` the PCI base-class name; ``numa_node``
    ``None`` when unknown; ``local_cpus`` ``None`` when the kernel does not
    say.  SR-IOV: a physical function has ``sriov_totalvfs``/``sriov_numvfs``
    and ``virtfns`` (addresses of its virtual functions); a virtual function
    has ``physfn`` (its PF's address).  ``net`` names its network interfaces.
    """

    _fields = ("address", "class_code", "vendor_id", "device_id", "kind", "class_name", "numa_node",
               "local_cpus", "driver", "sriov_totalvfs", "sriov_numvfs", "physfn", "virtfns", "net")
    _defaults = {"driver": None, "sriov_totalvfs": None, "sriov_numvfs": None, "physfn": None,
                 "virtfns": (), "net": ()}
    __slots__ = _fields

    @property
    def is_physfn(self) -> bool:
        """True for an SR-IOV capable physical function."""
        return self.sriov_totalvfs is not None

    @property
    def is_virtfn(self) -> bool:
        """True for an SR-IOV virtual function."""
        return self.physfn is not None

    def to_dict(self) -> "Dict[str, Any]":
        return {
            "address": self.address,
            "class": _hex(self.class_code, 6),
            "vendor": _hex(self.vendor_id, 4),
            "device": _hex(self.device_id, 4),
            "kind": self.kind,
            "class_name": self.class_name,
            "numa_node": self.numa_node,
            "local_cpus": None if self.local_cpus is None else self.local_cpus.to_cpulist(),
            "driver": self.driver,
            "sriov_totalvfs": self.sriov_totalvfs,
            "sriov_numvfs": self.sriov_numvfs,
            "physfn": self.physfn,
            "virtfns": list(self.virtfns),
            "net": list(self.net),
        }

    @classmethod
    def from_dict(cls, d: "Mapping[str, Any]", where: str = "device") -> "PciDevice":
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the field (``where.field``) on a malformed entry."""
        from ._docfields import cpulist, mapping

        mapping(d, where)
        cpus = d.get("local_cpus")
        if cpus is not None:
            cpus = cpulist(d, "local_cpus", where)
        kind = _opt_str(d, "kind", where)
        kind = "other" if kind is None else kind
        if kind not in KINDS:
            raise ValueError(f"{where}.kind: expected one of {', '.join(KINDS)}")
        return cls(
            _opt_str(d, "address", where, required=True), _unhex(d, "class", where, 16), _unhex(d, "vendor", where, 16),
            _unhex(d, "device", where, 16), kind, _default(_opt_str(d, "class_name", where), "unknown"), _node(d, where),
            cpus, _opt_str(d, "driver", where), _opt_int(d, "sriov_totalvfs", where, _U64),
            _opt_int(d, "sriov_numvfs", where, _U64), _opt_str(d, "physfn", where),
            _strings(d, "virtfns", where), _strings(d, "net", where),
        )


class NetInterface(Record):
    """One network link: name, ifindex, MAC, operational state, MTU and locality.

    ``pci_address`` is the PCI function behind the link (through
    ``/sys/class/net/<if>/device``); ``virtual`` links (lo, veth, bridges,
    ifb...) have no device and so no NUMA node.  ``numa_node`` is ``None``
    for virtual links and when the device's node is unknown.  ``source``
    says where the link list came from: ``"netlink"`` (pyroute2, live host)
    or ``"sysfs"``.
    """

    _fields = ("name", "index", "mac", "state", "mtu", "pci_address", "numa_node", "virtual", "source")
    _defaults = {"source": "sysfs"}
    __slots__ = _fields

    def to_dict(self) -> "Dict[str, Any]":
        return {"name": self.name, "index": self.index, "mac": self.mac, "state": self.state, "mtu": self.mtu,
                "pci_address": self.pci_address, "numa_node": self.numa_node, "virtual": self.virtual,
                "source": self.source}

    @classmethod
    def from_dict(cls, d: "Mapping[str, Any]", where: str = "net_interface") -> "NetInterface":
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the field on a malformed entry."""
        from ._docfields import boolean, mapping

        mapping(d, where)
        return cls(_opt_str(d, "name", where, required=True), _opt_int(d, "index", where, _U64),
                   _opt_str(d, "mac", where), _opt_str(d, "state", where), _opt_int(d, "mtu", where, _U64),
                   _opt_str(d, "pci_address", where), _node(d, where), boolean(d, "virtual", where, False),
                   _default(_opt_str(d, "source", where), "sysfs"))
