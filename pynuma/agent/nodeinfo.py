"""What the kubelet reports as ``status.nodeInfo`` and ``status.addresses``, read through :class:`FsRoot`.

Every file is read root-relative, so a saved dump (``--root DIR``) gives the
dump's machine; a file the dump lacks gives an empty string (the Node
schema requires the fields, not their content).

* machine id: ``/etc/machine-id`` (systemd), else ``/var/lib/dbus/machine-id``
* system UUID: ``/sys/class/dmi/id/product_uuid`` (root-only on most hosts)
* boot id: ``/proc/sys/kernel/random/boot_id``
* kernel version: ``/proc/sys/kernel/osrelease`` (``uname -r``)
* OS image: ``PRETTY_NAME`` of ``/etc/os-release``, else ``/usr/lib/os-release``
  (os-release(5)); ``Linux`` when neither names one, as cAdvisor says
* architecture: Go's ``GOARCH`` spelling of the discovered architecture
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Dict, List, Tuple

from ..fsroot import FsRoot

MACHINE_ID = ("/etc/machine-id", "/var/lib/dbus/machine-id")
PRODUCT_UUID = "/sys/class/dmi/id/product_uuid"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
OSRELEASE = "/proc/sys/kernel/osrelease"
OS_RELEASE = ("/etc/os-release", "/usr/lib/os-release")
HOSTNAME = "/proc/sys/kernel/hostname"

# pynuma's architecture names (discovery) -> Go's GOARCH, which the kubelet reports
GOARCH = {"x86_64": "amd64", "i386": "386", "aarch64": "arm64", "arm64": "arm64", "arm": "arm",
          "ppc64": "ppc64le", "s390": "s390x", "ia64": "ia64"}


@dataclass(frozen=True)
class NodeSystemInfo:
    """``v1.NodeSystemInfo`` as far as a node can tell without a container runtime."""

    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    kernel_version: str = ""
    os_image: str = ""
    architecture: str = ""
    operating_system: str = "linux"
    kubelet_version: str = ""
    container_runtime_version: str = ""

    def to_k8s(self) -> Dict[str, str]:
        """The ``nodeInfo`` object (every required field present)."""
        return {"machineID": self.machine_id, "systemUUID": self.system_uuid, "bootID": self.boot_id,
                "kernelVersion": self.kernel_version, "osImage": self.os_image,
                "containerRuntimeVersion": self.container_runtime_version, "kubeletVersion": self.kubelet_version,
                "kubeProxyVersion": "", "operatingSystem": self.operating_system,
                "architecture": self.architecture}


def parse_os_release(text: str) -> Dict[str, str]:
    """``KEY=value`` lines of os-release(5), shell quoting undone; malformed lines skipped."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        out[key.strip()] = parts[0] if parts else ""
    return out


def _first_line(fs: FsRoot, path: str) -> str:
    text = fs.read_optional(path)
    return text.strip().splitlines()[0].strip() if text and text.strip() else ""


def os_image(fs: FsRoot) -> str:
    """``PRETTY_NAME`` of the first os-release file that names one, else ``Linux``."""
    for path in OS_RELEASE:
        text = fs.read_optional(path)
        if text is not None:
            pretty = parse_os_release(text).get("PRETTY_NAME")
            if pretty:
                return pretty
    return "Linux"


def read_node_info(fs: FsRoot, arch: str = "", kubelet_version: str = "") -> NodeSystemInfo:
    """The node's system info; ``arch`` is the discovered architecture (``Topology.arch``)."""
    machine_id = next((v for v in (_first_line(fs, p) for p in MACHINE_ID) if v), "")
    return NodeSystemInfo(
        machine_id=machine_id, system_uuid=_first_line(fs, PRODUCT_UUID).lower(), boot_id=_first_line(fs, BOOT_ID),
        kernel_version=_first_line(fs, OSRELEASE), os_image=os_image(fs), architecture=GOARCH.get(arch, ""),
        kubelet_version=kubelet_version)


def hostname(fs: FsRoot) -> str:
    """The kernel's host name (``/proc/sys/kernel/hostname``), lower-cased as the kubelet does; '' if unknown."""
    return _first_line(fs, HOSTNAME).lower()


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
MAX_LABEL_VALUE = 63


def is_dns_subdomain(name: str) -> bool:
    """Whether ``name`` may name a Kubernetes object such as a Node (RFC 1123 subdomain)."""
    if not 0 < len(name) <= 253:
        return False
    return all(0 < len(label) <= 63 and set(label) <= _NAME_CHARS and label[0] != "-" and label[-1] != "-"
               for label in name.split("."))


def node_name(fs: FsRoot, given: "str | None" = None, labelled: bool = False) -> str:
    """The Node's name: ``given``, else the host name, else ``localhost``.

    :class:`~pynuma.errors.InputError` naming where the name came from when
    it cannot name a Node (an RFC 1123 subdomain), or, with ``labelled``, when
    it is too long for the ``kubernetes.io/hostname`` label the Node carries.
    """
    from ..errors import InputError
    from ..parse import shown

    name = given if given else hostname(fs)
    where, hint = ("--node-name", "") if given else (fs.host_path(HOSTNAME), "; give the node's name")
    if not name:
        return "localhost"
    if not is_dns_subdomain(name):
        raise InputError(f"{where}: {shown(name)} is not a node name: a DNS subdomain (RFC 1123) is lowercase "
                         "letters, digits, '-' and '.', at most 253 characters" + hint)
    if labelled and len(name) > MAX_LABEL_VALUE:
        raise InputError(f"{where}: {shown(name)} is longer than the {MAX_LABEL_VALUE} characters of the "
                         "kubernetes.io/hostname label" + hint)
    return name


def node_addresses(fs: FsRoot) -> List[Tuple[str, str]]:
    """``[(type, address)]``: InternalIP(s) then the Hostname, as the kubelet lists them.

    Read by :func:`pynuma.discover.addresses.node_addresses` (netlink through
    pyroute2 on the live host); a dump knows no addresses, only its host name.
    """
    from ..discover.addresses import node_addresses as read

    try:
        found = [(a.type, a.address) for a in read(fs)]
    except Exception:  # no netlink (a sandbox): the host name alone, as a kubelet without addresses
        found = []
    out: List[Tuple[str, str]] = []
    for kind, address in found:
        if kind == "Hostname":
            continue  # the kubelet's own spelling (lower case) is added last
        if address and (kind, address) not in out:
            out.append((kind, address))
    name = hostname(fs)
    if name:
        out.append(("Hostname", name))
    return out
