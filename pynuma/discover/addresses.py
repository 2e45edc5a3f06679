"""The node's addresses (Kubernetes ``NodeAddress``: InternalIP, Hostname) and link state.

    from pynuma.discover.addresses import node_addresses, link_events
    node_addresses()        # [NodeAddress(type='InternalIP', address='10.0.0.5', interface='eth0', ...), ...,
                            #  NodeAddress(type='Hostname', address='node-a', ...)]
    for event in link_events(timeout=5.0): ...   # links going up/down, addresses added/removed

Addresses exist only in the kernel's live network state, so on the live
host they come from netlink through pyroute2: every global-scope address
of a link that is up and not a loopback, the interface of the default
route first (the address the kubelet would pick without ``--node-ip``),
IPv4 before IPv6.  On a dump (``root`` other than ``/``) there is no
netlink: links and their state come from ``/sys/class/net`` and each gets
an InternalIP entry whose ``address`` is ``None`` (unknown).  The hostname
is ``/proc/sys/kernel/hostname`` under the root either way.  pyroute2 is
imported only here, when netlink is used (~250 ms).
"""
from __future__ import annotations

import socket
from typing import Iterator, List, Optional, Union

from .._record import Record
from ..fsroot import FsRoot

INTERNAL_IP, HOSTNAME = "InternalIP", "Hostname"
_IFF_UP, _IFF_LOOPBACK = 0x1, 0x8
_IFA_F_TENTATIVE, _IFA_F_DADFAILED = 0x40, 0x08
_RT_SCOPE_UNIVERSE = 0


class NodeAddress(Record):
    """One node address: ``type`` (``InternalIP``/``Hostname``), ``address`` (None: unknown, on a dump),
    the ``interface`` holding it, ``family`` (4/6), ``prefixlen`` and the link's operational ``state``."""

    type: str
    address: Optional[str]
    interface: Optional[str]
    family: Optional[int]
    prefixlen: Optional[int]
    state: Optional[str]

    _fields = ("type", "address", "interface", "family", "prefixlen", "state")
    __slots__ = _fields

    def to_dict(self) -> dict:
        return {f: getattr(self, f) for f in self._fields}


class LinkEvent(Record):
    """A change netlink reported: ``kind`` is ``link`` (``state`` says the new one), ``address-added`` or
    ``address-removed`` (``address`` says which)."""

    kind: str
    interface: Optional[str]
    state: Optional[str]
    address: Optional[str]

    _fields = ("kind", "interface", "state", "address")
    __slots__ = _fields


def _hostname(fs: FsRoot) -> Optional[NodeAddress]:
    text = fs.read_optional("/proc/sys/kernel/hostname")
    name = text.strip() if text else (socket.gethostname() if fs.is_host else "")
    return NodeAddress(HOSTNAME, name, None, None, None, None) if name else None


def node_addresses(root: Union[str, FsRoot] = "/") -> List[NodeAddress]:
    """The node's InternalIP addresses (per interface, with link state) and its Hostname.

    On a dump the InternalIP entries carry ``address=None``: a dump holds no addresses.
    """
    fs = root if isinstance(root, FsRoot) else FsRoot(root)
    try:
        found = _netlink_addresses() if fs.is_host else _sysfs_links(fs)
        host = _hostname(fs)
        return found + ([host] if host is not None else [])
    finally:
        if fs is not root:
            fs.close()


def _sysfs_links(fs: FsRoot) -> List[NodeAddress]:
    """One unknown-address InternalIP entry per non-loopback link of ``/sys/class/net`` (with its operstate)."""
    base = "/sys/class/net"
    names = [n for n in fs.listdir(base) if not n.startswith(".")]
    texts = fs.read_many(f"{base}/{n}/{f}" for n in names for f in ("operstate", "flags"))
    out = []
    for i, name in enumerate(names):
        state, flags = texts[2 * i], texts[2 * i + 1]
        if state is None and flags is None:
            continue  # not a link directory (bonding_masters)
        try:
            if flags is not None and int(flags.strip(), 16) & _IFF_LOOPBACK:
                continue
        except ValueError:
            pass
        out.append(NodeAddress(INTERNAL_IP, None, name, None, None, state.strip().upper() if state else None))
    return out


def _netlink_addresses() -> List[NodeAddress]:
    from pyroute2 import IPRoute  # heavy: imported only where netlink is needed

    with IPRoute() as ipr:
        links = {int(link["index"]): link for link in ipr.get_links()}
        default_oifs = []
        for family in (socket.AF_INET, socket.AF_INET6):
            for route in ipr.get_default_routes(family=family):
                oif = route.get_attr("RTA_OIF")
                if oif is not None and oif not in default_oifs:
                    default_oifs.append(oif)
        rows = []
        for addr in ipr.get_addr():
            link = links.get(int(addr["index"]))
            if link is None or not link["flags"] & _IFF_UP or link["flags"] & _IFF_LOOPBACK:
                continue
            flags = addr.get_attr("IFA_FLAGS") or addr["flags"]
            if addr["scope"] != _RT_SCOPE_UNIVERSE or flags & (_IFA_F_TENTATIVE | _IFA_F_DADFAILED):
                continue
            family = 4 if addr["family"] == socket.AF_INET else 6
            text = addr.get_attr("IFA_LOCAL") or addr.get_attr("IFA_ADDRESS")
            if text is None:
                continue
            index = int(addr["index"])
            rank = default_oifs.index(index) if index in default_oifs else len(default_oifs)
            state = link.get_attr("IFLA_OPERSTATE")
            rows.append(((rank, link.get_attr("IFLA_IFNAME") or "", family),
                         NodeAddress(INTERNAL_IP, text, link.get_attr("IFLA_IFNAME"), family, int(addr["prefixlen"]),
                                     str(state).upper() if state else None)))
    rows.sort(key=lambda r: r[0])  # stable: the kernel's order within one interface and family
    return [r[1] for r in rows]


def link_events(timeout: Optional[float] = None, root: Union[str, FsRoot] = "/") -> Iterator[LinkEvent]:
    """Link state and address changes as netlink reports them, from this call on, until ``timeout`` seconds
    pass without one (None: forever).  Live host only (a dump does not change).

    The subscription is made before this returns, so a change made right
    after the call is seen.  A ``lost`` event means the kernel dropped events
    (the socket's buffer overflowed): re-read :func:`node_addresses`.
    """
    fs = root if isinstance(root, FsRoot) else FsRoot(root)
    try:
        fs.require_host("watching network links")
    finally:
        if fs is not root:
            fs.close()
    from pyroute2.netlink.rtnl import RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR, RTMGRP_LINK

    # our own socket and recv loop, pyroute2 for the parsing: one datagram may carry several messages,
    # and every one of them is handed on (a select on pyroute2's own socket misses those it has queued)
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    try:
        sock.bind((0, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR))
    except BaseException:
        sock.close()
        raise
    return _events(sock, dict(socket.if_nameindex()), timeout)


def _events(sock: socket.socket, names: dict, timeout: Optional[float]) -> Iterator[LinkEvent]:
    import errno
    import select

    from pyroute2.netlink.rtnl.marshal import MarshalRtnl

    marshal = MarshalRtnl()
    with sock:
        while True:
            ready, _, _ = select.select([sock], [], [], timeout)
            if not ready:
                return
            try:
                data = sock.recv(1 << 16)
            except OSError as err:
                if err.errno != errno.ENOBUFS:
                    raise
                yield LinkEvent("lost", None, None, None)
                continue
            for msg in marshal.parse(data):
                yield from _event(msg, names)


def _event(msg, names: dict) -> Iterator[LinkEvent]:
    event = msg.get("event")
    index = int(msg.get("index") or 0)
    if event in ("RTM_NEWLINK", "RTM_DELLINK"):
        name = msg.get_attr("IFLA_IFNAME") or names.get(index)
        names[index] = name
        state = "DELETED" if event == "RTM_DELLINK" else msg.get_attr("IFLA_OPERSTATE")
        yield LinkEvent("link", name, None if state is None else str(state).upper(), None)
    elif event in ("RTM_NEWADDR", "RTM_DELADDR"):
        kind = "address-added" if event == "RTM_NEWADDR" else "address-removed"
        yield LinkEvent(kind, names.get(index), None, msg.get_attr("IFA_LOCAL") or msg.get_attr("IFA_ADDRESS"))
