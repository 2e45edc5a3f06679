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
    from typing import Any, Dict, Mapping, Optional

from ._record import Record
from .cpuset import CPUSet

KINDS = ("gpu", "nic", "nvme", "accelerator", "other")


def _hex(value: "Optional[int]", digits: int) -> "Optional[str]":
    return None if value is None else f"0x{value:0{digits}x}"


def _unhex(value) -> "Optional[int]":
    return None if value is None else int(str(value), 16)


def _opt_int(value) -> "Optional[int]":
    return None if value is None else int(value)


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
    def from_dict(cls, d: "Mapping[str, Any]") -> "PciDevice":
        """Inverse of :meth:`to_dict`; ``KeyError``/``ValueError`` on a malformed entry."""
        cpus = d.get("local_cpus")
        return cls(
            str(d["address"]), _unhex(d.get("class")), _unhex(d.get("vendor")), _unhex(d.get("device")),
            str(d.get("kind", "other")), str(d.get("class_name", "unknown")), _opt_int(d.get("numa_node")),
            None if cpus is None else CPUSet.parse(cpus), d.get("driver"),
            _opt_int(d.get("sriov_totalvfs")), _opt_int(d.get("sriov_numvfs")), d.get("physfn"),
            tuple(d.get("virtfns", ())), tuple(d.get("net", ())),
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
    def from_dict(cls, d: "Mapping[str, Any]") -> "NetInterface":
        """Inverse of :meth:`to_dict`."""
        return cls(str(d["name"]), _opt_int(d.get("index")), d.get("mac"), d.get("state"), _opt_int(d.get("mtu")),
                   d.get("pci_address"), _opt_int(d.get("numa_node")), bool(d.get("virtual", False)),
                   str(d.get("source", "sysfs")))
