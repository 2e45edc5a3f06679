"""How ``pynuma topology`` shows PCI devices and network interfaces.

The tree lists the notable devices (GPUs, NICs, NVMe, accelerators, and
anything carrying a network interface) under their NUMA node, like
lstopo; bridges and other plumbing are only counted.  ``--devices`` prints
every device and every link as tables.  A device whose firmware did not
say where it is (``numa_node`` -1) is listed as "locality unknown".
"""
from __future__ import annotations

from typing import Dict, List, Optional


def notable(dev) -> bool:
    """Worth a line in the tree: not a bridge or other plumbing, or it carries a network link."""
    return dev.kind != "other" or bool(dev.net)


def _ids(dev) -> str:
    vendor = "????" if dev.vendor_id is None else f"{dev.vendor_id:04x}"
    device = "????" if dev.device_id is None else f"{dev.device_id:04x}"
    return f"{vendor}:{device}"


def device_line(dev) -> str:
    """``PCI 0000:60:00.0 nic [8086:37d2] i40e net enp96s0f0 SR-IOV 0/64 VFs``."""
    parts = [f"PCI {dev.address} {dev.kind} [{_ids(dev)}]"]
    if dev.driver:
        parts.append(dev.driver)
    if dev.net:
        parts.append("net " + ",".join(dev.net))
    if dev.is_physfn:
        parts.append(f"SR-IOV {dev.sriov_numvfs if dev.sriov_numvfs is not None else '?'}/{dev.sriov_totalvfs} VFs")
    if dev.is_virtfn:
        parts.append(f"VF of {dev.physfn}")
    return " ".join(parts)


def by_node(devices) -> Dict[Optional[int], list]:
    """Devices grouped by NUMA node (``None``: locality unknown)."""
    groups: Dict[Optional[int], list] = {}
    for dev in devices:
        groups.setdefault(dev.numa_node, []).append(dev)
    return groups


def tree_lines(devices, node_id: Optional[int], pad: str) -> List[str]:
    """Tree lines for the devices of one node (``None``: those whose locality is unknown)."""
    mine = by_node(devices).get(node_id, [])
    lines = [pad + device_line(d) for d in mine if notable(d)]
    others = sum(1 for d in mine if not notable(d))
    if others:
        lines.append(f"{pad}+ {others} other PCI device(s) (pynuma topology --devices)")
    return lines


def unplaced_lines(devices, node_ids, pad: str) -> List[str]:
    """Devices whose node is unknown, or a node not reported (cgroup-restricted), after the packages."""
    lines: List[str] = []
    groups = by_node(devices)
    for nid in sorted((k for k in groups if k is not None and k not in node_ids)):
        lines.append(f"{pad}PCI devices on NUMA node {nid} (not reported here)")
        lines += tree_lines(devices, nid, pad + "  ")
    if None in groups:
        lines.append(f"{pad}PCI devices, NUMA locality unknown (firmware reports numa_node -1)")
        lines += tree_lines(devices, None, pad + "  ")
    return lines


def _table(header, rows) -> List[str]:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*map(str, r)).rstrip() for r in rows]


def _node(n) -> str:
    return "unknown" if n is None else str(n)


def render_devices(topo) -> str:
    """``pynuma topology --devices``: every PCI device, then every network link."""
    lines: List[str] = []
    if topo.devices:
        rows = [(d.address, d.kind, d.class_name, _ids(d), _node(d.numa_node),
                 "-" if d.local_cpus is None else str(d.local_cpus) or "-", d.driver or "-",
                 ",".join(d.net) or "-",
                 (f"PF {d.sriov_numvfs}/{d.sriov_totalvfs}" if d.is_physfn else
                  f"VF of {d.physfn}" if d.is_virtfn else "-"))
                for d in topo.devices]
        lines += _table(("ADDRESS", "KIND", "CLASS", "VENDOR:DEVICE", "NODE", "LOCAL CPUS", "DRIVER", "NET",
                         "SR-IOV"), rows)
    else:
        lines.append("no PCI devices found")
    lines.append("")
    if topo.net_interfaces:
        rows = [(n.name, "-" if n.index is None else n.index, n.mac or "-", n.state or "-",
                 "-" if n.mtu is None else n.mtu, n.pci_address or "-",
                 "none (virtual)" if n.virtual else _node(n.numa_node))
                for n in topo.net_interfaces]
        lines += _table(("INTERFACE", "INDEX", "MAC", "STATE", "MTU", "PCI", "NODE"), rows)
        lines.append(f"(links from {topo.net_interfaces[0].source})")
    else:
        lines.append("no network interfaces found")
    return "\n".join(lines) + "\n"


def with_netlink(topo):
    """The topology with its links re-read over netlink (live host only; imports pyroute2)."""
    from ..discover import devices as _devices, net as _net
    from ..fsroot import FsRoot

    fs = FsRoot("/")
    warnings: list = []
    links = _net.discover_net_netlink(fs, topo.devices, warnings)
    plain = tuple(d.replace(net=()) for d in topo.devices)
    return topo.replace(devices=_devices.attach_net(plain, links), net_interfaces=links,
                        warnings=tuple(topo.warnings) + tuple(warnings))
